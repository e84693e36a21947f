//! The task-set generators (what `rtsched gen` and a sweep spec's `generator:` reach) on any
//! parameters: a task set or an error, within bounded time and memory whatever the sizes asked
//! for (n = 10^9 tasks, m = 10^7 CPUs, …). libFuzzer's -rss_limit_mb / -malloc_limit_mb and
//! -timeout turn an attempt to allocate it all, or a loop without end, into a crash.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rtsched_analysis::gen::{by_name, names, Params};

#[derive(Arbitrary, Debug)]
enum V {
    Int(u64),
    Small(u8),
    Float(f64),
    Dur(u16, u8),
    Text(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    generator: u8,
    params: Vec<(u8, V)>,
    seed: u64,
}

/// Every key any generator reads, and one it does not.
const KEYS: &[&str] = &[
    "n",
    "m",
    "U",
    "u_min",
    "u_max",
    "period",
    "tmin",
    "tmax",
    "deadline",
    "f",
    "granularity",
    "window",
    "U_min",
    "U_max",
    "absolute",
    "parallel",
    "R",
    "x",
    "place",
    "nope",
];

fuzz_target!(|input: Input| {
    let gens = names();
    let name = gens[input.generator as usize % gens.len()];
    let pairs: Vec<(String, String)> = input
        .params
        .iter()
        .take(8)
        .map(|(k, v)| {
            let v = match v {
                V::Int(x) => x.to_string(),
                V::Small(x) => x.to_string(),
                V::Float(x) => x.to_string(),
                V::Dur(x, u) => format!("{x}{}", ["ns", "us", "ms", "s", ""][*u as usize % 5]),
                V::Text(s) => s.replace([',', '='], ""),
            };
            (KEYS[*k as usize % KEYS.len()].to_string(), v)
        })
        .collect();
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if let Ok(g) = by_name(name, &Params::from_pairs(&refs), input.seed) {
        let ts = &g.taskset;
        assert!(
            !ts.tasks.is_empty() && ts.platform.cpus >= 1,
            "{name}: an empty set or no CPU"
        );
        for t in &ts.tasks {
            assert!(
                t.wcet >= 1 && t.period >= 1 && t.deadline >= 1,
                "{name}: task {t:?}"
            );
        }
        // What `rtsched gen` writes must read back (checked on sets of a size the fuzzer can
        // afford many of; the loader's scale is measured by `load_scale`).
        if ts.tasks.len() > 5_000 {
            return;
        }
        let yaml = rtsched_model::file::to_yaml(ts);
        if let Err(e) = rtsched_model::parse_taskset(&yaml, rtsched_model::Format::Yaml, "gen.yaml")
        {
            panic!("{name}: the generated set does not read back: {e}");
        }
    }
});
