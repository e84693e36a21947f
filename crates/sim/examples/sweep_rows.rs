//! A sweep's rows without Python: what `sweep_batch` (crates/py/src/batch.rs) does per row —
//! generate a task set (RandFixedSum, 4 tasks on 2 CPUs, periods 1-10 ms), set its run
//! options, simulate it under each scheduler and summarise — on the rows of
//! `benchmarks/sweep_scale.py`, to profile the per-row cost apart from the coordinator.
//!
//!     cargo run --release -p rtsched-sim --example sweep_rows [-- SETS [DURATION_MS] [--held|--streamed]]
//!
//! Prints rows/s and jobs/s (best of 3). By default each job goes, as it is decided, into a
//! total-only summary reused from row to row, and each run reuses the buffers of the one
//! before (`Records::Into` a `TotalSink` + `Options::scratch`: what a sweep batch does);
//! `--fresh` is the same with every run allocating its own; `--held` holds the records and
//! summarises them at the end; `--streamed` keeps every task's summary too
//! (`Records::Summarised`, as `rtsched simulate`).

use rtsched_analysis::gen;
use rtsched_model::results::{RunResult, TotalSink};
use rtsched_sim::{simulate, Options, Records, SimScratch};
use std::time::Instant;

const POINTS: [f64; 10] = [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0];
const SCHEDULERS: [&str; 4] = ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"];

/// Jobs and misses of one row; a partitioner that finds no partition is a row too (0 jobs).
fn row(
    ts: &rtsched_model::TaskSet,
    sched: &str,
    mode: &str,
    total: &mut TotalSink,
    scratch: &mut SimScratch,
) -> (u64, u64) {
    let options = Options::spec(sched);
    let r: Result<RunResult, rtsched_sim::SimError> = match mode {
        "--fresh" => {
            total.reset_for(ts);
            let s = simulate(ts, options.records(Records::Into(total))).map(|_| total.summary());
            return s.map(|s| (s.jobs, s.missed)).unwrap_or((0, 0));
        }
        "--streamed" => simulate(ts, options.records(Records::Summarised(None))).map(|o| o.result),
        "--held" => simulate(ts, options).map(|o| o.result),
        _ => {
            total.reset_for(ts);
            let s = simulate(ts, options.records(Records::Into(total)).scratch(scratch))
                .map(|_| total.summary());
            return s.map(|s| (s.jobs, s.missed)).unwrap_or((0, 0));
        }
    };
    r.map(|r| {
        let s = r.total_summary();
        (s.jobs, s.missed)
    })
    .unwrap_or((0, 0))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args
        .iter()
        .find(|a| a.starts_with("--"))
        .map_or("--total", |a| a.as_str())
        .to_string();
    let mut total = TotalSink::default();
    let mut scratch = SimScratch::default();
    let nums: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sets = nums.first().copied().unwrap_or(5_000) as usize;
    let duration = nums.get(1).copied().unwrap_or(50) * 1_000_000;
    let mut best = f64::MAX;
    let (mut jobs, mut rows) = (0, 0);
    for _ in 0..3 {
        let t = Instant::now();
        (jobs, rows) = (0, 0);
        for s in 0..sets {
            let u = POINTS[s % POINTS.len()];
            let p = gen::Params::parse(&format!("m=2,n=4,tmax=10ms,tmin=1ms,U={u}")).unwrap();
            let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(s as u64 + 1);
            let mut ts = gen::by_name("randfixedsum", &p, seed).unwrap().taskset;
            ts.run.duration = duration;
            ts.run.seed = seed;
            for sched in SCHEDULERS {
                let (j, _) = row(&ts, sched, &mode, &mut total, &mut scratch);
                jobs += j;
                rows += 1;
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{rows} rows ({} ms simulated each, {} jobs/row) in {best:.3} s: {:.0} rows/s, {:.0} jobs/s ({mode})",
        duration / 1_000_000, jobs / rows, rows as f64 / best, jobs as f64 / best);
}
