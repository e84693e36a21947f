//! Time to read and validate task files of growing size (YAML and JSON), to show loading is
//! O(n log n) or better in the number of tasks.
//!
//!   cargo run --release -p rtsched-model --example load_scale [-- MAX_TASKS]
//!
//! Prints, per size, the parse-and-validate time and its ratio to the previous size (10x more
//! tasks should take about 10x longer).

use rtsched_model::{parse_taskset, Format};
use std::time::Instant;

fn yaml(n: usize) -> String {
    let mut s = String::from(
        "name: scale\nplatform: {cpus: 64}\nresources: [bus]\nrun: {duration: 1s}\ntasks:\n",
    );
    for i in 0..n {
        let period = 10 + (i * 7919) % 990;
        s.push_str(&format!(
            "  - {{name: t{i}, period: {period}ms, wcet: 1us}}\n"
        ));
    }
    s
}

fn json(n: usize) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "{{\"name\":\"t{i}\",\"period\":\"{}ms\",\"wcet\":\"1us\"}}",
                10 + (i * 7919) % 990
            )
        })
        .collect();
    format!("{{\"name\":\"scale\",\"platform\":{{\"cpus\":64}},\"run\":{{\"duration\":\"1s\"}},\"tasks\":[{}]}}", tasks.join(","))
}

fn main() {
    let max: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    println!(
        "{:>9}  {:>10}  {:>6}  {:>10}  {:>6}",
        "tasks", "YAML ms", "x prev", "JSON ms", "x prev"
    );
    let mut prev: Option<(f64, f64)> = None;
    let mut n = 1_000;
    while n <= max {
        let (y, j) = (yaml(n), json(n));
        let t = Instant::now();
        let ts = parse_taskset(&y, Format::Yaml, "scale.yaml").expect("valid");
        let ty = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(ts.tasks.len(), n);
        let t = Instant::now();
        let ts = parse_taskset(&j, Format::Json, "scale.json").expect("valid");
        let tj = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(ts.tasks.len(), n);
        let r = |a: f64, b: Option<f64>| {
            b.map(|b| format!("{:.1}", a / b))
                .unwrap_or_else(|| "-".into())
        };
        println!(
            "{n:>9}  {ty:>10.1}  {:>6}  {tj:>10.1}  {:>6}",
            r(ty, prev.map(|p| p.0)),
            r(tj, prev.map(|p| p.1))
        );
        prev = Some((ty, tj));
        n *= 10;
    }
}
