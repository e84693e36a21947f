//! A sweep's rows without Python: the rows of `benchmarks/sweep_scale.py` (RandFixedSum, 4 tasks
//! on 2 CPUs, periods 1-10 ms, under four schedulers) made and run by the sweep's own row code
//! (`rtsched_sweep::make_set` and `rtsched_sweep::run`, what `_core.sweep_batch` runs per row),
//! to profile the per-row cost apart from the coordinator.
//!
//!     cargo run --release -p rtsched-sweep --example sweep_rows [-- SETS [DURATION_MS] [--fresh|--held|--streamed]]
//!
//! Prints rows/s and jobs/s (best of 3). By default each row is the sweep's: its jobs go, as
//! they are decided, into a total-only summary reused from row to row, and each run reuses the
//! buffers of the one before (`Records::Into` a `TotalSink` + `Options::scratch`). The other
//! modes run the same sets another way, to compare: `--fresh` with every run allocating its
//! own buffers; `--held` holding the records and summarising them at the end; `--streamed`
//! keeping every task's summary too (`Records::Summarised`, as `rtsched simulate`).

use rtsched_model::results::{RunResult, TotalSink};
use rtsched_model::TaskSet;
use rtsched_sim::{simulate, Options, Records, SimScratch};
use rtsched_sweep::{make_set, Outcome, SetOptions};
use std::time::Instant;

const POINTS: [f64; 10] = [0.8, 1.0, 1.2, 1.4, 1.6, 1.7, 1.8, 1.9, 1.95, 2.0];
const SCHEDULERS: [&str; 4] = ["gedf", "pedf:ffd", "gfp:rm", "gnpedf"];

/// Jobs of one row; a partitioner that finds no partition is a row too (0 jobs).
fn row(
    ts: &TaskSet,
    sched: &str,
    mode: &str,
    total: &mut TotalSink,
    scratch: &mut SimScratch,
) -> u64 {
    let options = Options::spec(sched);
    let r: Result<RunResult, rtsched_sim::SimError> = match mode {
        "--fresh" => {
            total.reset_for(ts);
            let s = simulate(ts, options.records(Records::Into(total))).map(|_| total.summary());
            return s.map_or(0, |s| s.jobs);
        }
        "--streamed" => simulate(ts, options.records(Records::Summarised(None))).map(|o| o.result),
        "--held" => simulate(ts, options).map(|o| o.result),
        _ => {
            return match rtsched_sweep::run(ts, sched, total, scratch) {
                Outcome::Ran(r) => r.total.jobs,
                _ => 0,
            }
        }
    };
    r.map_or(0, |r| r.total_summary().jobs)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args
        .iter()
        .find(|a| a.starts_with("--"))
        .map_or("--row", |a| a.as_str())
        .to_string();
    let mut total = TotalSink::default();
    let mut scratch = SimScratch::default();
    let nums: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sets = nums.first().copied().unwrap_or(5_000) as usize;
    let duration = nums.get(1).copied().unwrap_or(50) * 1_000_000;
    let options = SetOptions {
        duration_ns: duration,
        on_miss: "continue",
        run: None,
        topology: None,
        source: "<sweep_rows>",
    };
    let mut best = f64::MAX;
    let (mut jobs, mut rows) = (0, 0);
    for _ in 0..3 {
        let t = Instant::now();
        (jobs, rows) = (0, 0);
        for s in 0..sets {
            let u = POINTS[s % POINTS.len()];
            let params = format!("m=2,n=4,tmax=10ms,tmin=1ms,U={u}");
            let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(s as u64 + 1);
            let ts = make_set("randfixedsum", &params, seed, &options).expect("the set is made");
            for sched in SCHEDULERS {
                jobs += row(&ts, sched, &mode, &mut total, &mut scratch);
                rows += 1;
            }
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{rows} rows ({} ms simulated each, {} jobs/row) in {best:.3} s: {:.0} rows/s, {:.0} jobs/s ({mode})",
        duration / 1_000_000, jobs / rows, rows as f64 / best, jobs as f64 / best);
}
