//! Engine-only throughput (no Python): simulated jobs per wall second under global EDF, on
//! task sets shaped like `benchmarks/sim_throughput.py` (U = 0.7 m, UUniFast-discard, periods
//! log-uniform in [10, 100] ms rounded to us, 60 s simulated, best of 3). Comparing the two
//! separates the engine's speed from the Python wrapper's overhead.
//!
//!     cargo run --release -p rtsched-sim --example throughput [-- SECONDS [M]]
//!
//! With M, only the size with that many CPUs (for profiling one size).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{Task, TaskSet};
use std::time::Instant;

const US: u64 = 1_000;
const SEC: u64 = 1_000_000_000;

fn taskset(m: u32, n: usize, seed: u64, secs: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
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
            let p = rng.random_range((10_000f64).ln()..(100_000f64).ln()).exp().round() as u64;
            let c = ((u * p as f64).round() as u64).clamp(1, p);
            Task::periodic(format!("t{i}"), p * US, c * US)
        })
        .collect();
    let mut ts = TaskSet::new(m, tasks);
    ts.run.duration = secs * SEC;
    ts
}

fn main() {
    let secs: u64 = std::env::args().nth(1).map(|s| s.parse().expect("SECONDS")).unwrap_or(60);
    println!("{:>3} {:>4} {:>10} {:>12} {:>14}", "m", "n", "jobs", "best wall s", "jobs/s");
    let only: Option<u32> = std::env::args().nth(2).map(|s| s.parse().expect("M"));
    for (m, n) in [(2u32, 6usize), (8, 24), (32, 96)] {
        if only.is_some_and(|o| o != m) {
            continue;
        }
        let ts = taskset(m, n, 1000 * m as u64 + n as u64, secs);
        let mut best = f64::INFINITY;
        let mut jobs = 0;
        for _ in 0..3 {
            let t0 = Instant::now();
            let r = rtsched_sim::simulate(&ts, "gedf", false).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            jobs = r.jobs.len();
        }
        println!("{m:>3} {n:>4} {jobs:>10} {best:>12.4} {:>14.0}", jobs as f64 / best);
    }
}
