//! Engine-only throughput (no Python): simulated jobs per wall second under global EDF, on
//! task sets shaped like `benchmarks/sim_throughput.py` (U = 0.7 m, UUniFast-discard, periods
//! log-uniform in [10, 100] ms rounded to us, 60 s simulated, best of 3). Comparing the two
//! separates the engine's speed from the Python wrapper's overhead.
//!
//!     cargo run --release -p rtsched-sim --example throughput [-- [--cache|--streamed] SECONDS [M]]
//!
//! With M, only the size with that many CPUs (for profiling one size; 128 and 1024 only so).
//! With `--streamed`, the per-job records are not held but summarised as they are decided
//! (`Records::Summarised`, what `rtsched simulate` does when no per-job output is asked for).
//!
//! With `--cache`, the cache model's cost (docs/cache-model.md): the same sets given working
//! sets (log-uniform 16 KiB - 4 MiB, memory groups of three consecutive tasks) on the Opteron
//! topology (LWFG Table 2), each simulated with `run.cache` off and on in interleaved rounds
//! (best of 5 each, so host noise falls on both); prints both rates and the slowdown (off jobs/s over on jobs/s).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{Task, TaskSet};
use std::time::Instant;

const US: u64 = 1_000;
const SEC: u64 = 1_000_000_000;

fn taskset(m: u32, n: usize, seed: u64, secs: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if n > 96 {
        // Chunks of 24 tasks of U = 5.6 (as benchmarks/sim_throughput.py): UUniFast-discard
        // over thousands of tasks at a mean of 0.23 almost never draws them all <= 1.
        let mut ts = TaskSet::new(m, Vec::new());
        for k in 0..n / 24 {
            let mut part = taskset(8, 24, seed.wrapping_mul(31).wrapping_add(k as u64), secs);
            for (i, t) in part.tasks.iter_mut().enumerate() {
                t.name = format!("t{}", 24 * k + i);
            }
            ts.tasks.extend(part.tasks);
        }
        ts.run.duration = secs * SEC;
        return ts;
    }
    let total = 0.7 * m as f64;
    let us = loop {
        let (mut us, mut left) = (Vec::with_capacity(n), total);
        for i in 1..n {
            let next = left * rng.random::<f64>().powf(1.0 / (n - i) as f64);
            us.push(left - next);
            left = next;
        }
        us.push(left);
        if us.iter().all(|&u| u <= 1.0) {
            break us;
        }
    };
    let tasks = us
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let p = rng
                .random_range((10_000f64).ln()..(100_000f64).ln())
                .exp()
                .round() as u64;
            let c = ((u * p as f64).round() as u64).clamp(1, p);
            Task::periodic(format!("t{i}"), p * US, c * US)
        })
        .collect();
    let mut ts = TaskSet::new(m, tasks);
    ts.run.duration = secs * SEC;
    ts
}

/// `taskset` with working sets, memory groups and the Opteron topology (cache model off).
fn with_memory(mut ts: TaskSet, seed: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        let kib = rng.random_range((16f64).ln()..(4096f64).ln()).exp().round() as u64;
        t.wss = Some(kib * 1024);
        t.group = Some(i as u32 / 3);
    }
    ts.platform.topology = Some(
        rtsched_model::topology::Topology::opteron6164x4(ts.platform.cpus)
            .expect("at most 48 CPUs"),
    );
    ts
}

fn timed(ts: &TaskSet) -> (f64, usize) {
    let t0 = Instant::now();
    let r = rtsched_sim::simulate(ts, rtsched_sim::Options::spec("gedf"))
        .unwrap()
        .result;
    (t0.elapsed().as_secs_f64(), r.jobs.len())
}

fn cache_cost(secs: u64, only: Option<u32>) {
    println!(
        "{:>3} {:>4} {:>10} {:>14} {:>14} {:>9}",
        "m", "n", "jobs", "off jobs/s", "on jobs/s", "slowdown"
    );
    for (m, n) in [(2u32, 6usize), (8, 24), (32, 96)] {
        if only.is_some_and(|o| o != m) {
            continue;
        }
        let off = with_memory(taskset(m, n, 1000 * m as u64 + n as u64, secs), m as u64);
        let mut on = off.clone();
        on.run.cache.enabled = true;
        let (mut best_off, mut best_on, mut jobs) = (f64::INFINITY, f64::INFINITY, (0, 0));
        for _ in 0..5 {
            let (t, j) = timed(&off);
            best_off = best_off.min(t);
            let (u, k) = timed(&on);
            best_on = best_on.min(u);
            jobs = (j, k);
        }
        // Stalls change the schedule a little: each side's rate uses its own job count.
        let (r_off, r_on) = (jobs.0 as f64 / best_off, jobs.1 as f64 / best_on);
        println!(
            "{m:>3} {n:>4} {:>10} {r_off:>14.0} {r_on:>14.0} {:>8.2}x",
            jobs.1,
            r_off / r_on
        );
    }
}

fn main() {
    let cache = std::env::args().any(|a| a == "--cache");
    let streamed = std::env::args().any(|a| a == "--streamed");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let secs: u64 = args
        .first()
        .map(|s| s.parse().expect("SECONDS"))
        .unwrap_or(60);
    let only: Option<u32> = args.get(1).map(|s| s.parse().expect("M"));
    if cache {
        return cache_cost(secs, only);
    }
    println!(
        "{:>3} {:>4} {:>10} {:>12} {:>14}",
        "m", "n", "jobs", "best wall s", "jobs/s"
    );
    for (m, n) in [(2u32, 6usize), (8, 24), (32, 96), (128, 384), (1024, 3072)] {
        if only.is_none() && m > 32 {
            continue;
        }
        if only.is_some_and(|o| o != m) {
            continue;
        }
        let ts = taskset(m, n, 1000 * m as u64 + n as u64, secs);
        let mut best = f64::INFINITY;
        let mut jobs = 0;
        for _ in 0..3 {
            let t0 = Instant::now();
            if streamed {
                let options = rtsched_sim::Options::spec("gedf")
                    .records(rtsched_sim::Records::Summarised(None));
                let r = rtsched_sim::simulate(&ts, options).unwrap().result;
                best = best.min(t0.elapsed().as_secs_f64());
                jobs = r.job_count() as usize;
            } else {
                let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec("gedf"))
                    .unwrap()
                    .result;
                best = best.min(t0.elapsed().as_secs_f64());
                jobs = r.jobs.len();
            }
        }
        println!(
            "{m:>3} {n:>4} {jobs:>10} {best:>12.4} {:>14.0}",
            jobs as f64 / best
        );
    }
}
