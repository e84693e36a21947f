//! Partitioning throughput on LWFG-style workloads (LWFG §3.2 reports ≈ 50,000 task sets in
//! under 5 minutes with Python; target here: under 10 s).
//!
//! `cargo run --release -p rtsched-analysis --example partition_bench [-- SETS [CPUS]]`
//!
//! Generates SETS task sets (default 50,000) for CPUS CPUs (default 48), cycling over the eight
//! distributions of LWFG Table 1 and utilisation caps of 25%–95% of m, then partitions all of
//! them with lwfg, ffd and wfd under the exact EDF admission test. Prints wall time, sets/s,
//! how many sets each heuristic partitioned, and the time relative to ffd in the same run.

use rtsched_analysis::gen::{by_name, papers::Mtt, Params};
use rtsched_analysis::partition::{by_name as partitioner, Admission};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sets: usize = args
        .get(1)
        .map(|s| s.parse().expect("SETS is a number"))
        .unwrap_or(50_000);
    let m: u32 = args
        .get(2)
        .map(|s| s.parse().expect("CPUS is a number"))
        .unwrap_or(48);
    let caps = [0.25, 0.5, 0.75, 0.85, 0.95];

    let t0 = Instant::now();
    let tasksets: Vec<_> = (0..sets)
        .map(|i| {
            let dist = Mtt::TABLE_1[i % 8].name;
            let cap = caps[(i / 8) % caps.len()] * m as f64;
            let p = Params::parse(&format!("m={m},U={cap}")).unwrap();
            by_name(dist, &p, i as u64).unwrap().taskset
        })
        .collect();
    let gen_s = t0.elapsed().as_secs_f64();
    let tasks: usize = tasksets.iter().map(|t| t.tasks.len()).sum();
    println!(
        "generated {sets} task sets for {m} CPUs ({:.1} tasks/set) in {gen_s:.3} s ({:.0} sets/s)",
        tasks as f64 / sets as f64,
        sets as f64 / gen_s
    );

    let mut baseline = None;
    for name in ["ffd", "lwfg", "wfd"] {
        let p = partitioner(name).unwrap();
        let t = Instant::now();
        let ok = tasksets
            .iter()
            .filter(|ts| p.partition(ts, &Admission::EdfExact).is_ok())
            .count();
        let s = t.elapsed().as_secs_f64();
        let base = *baseline.get_or_insert(s);
        println!(
            "{name:>5}: {s:7.3} s  {:>9.0} sets/s  partitioned {ok}/{sets}  ({:.2}x ffd's time)",
            sets as f64 / s,
            s / base
        );
    }
}
