//! Memory workloads and execution-time records on real cores, on the testbed and a kernel
//! backend (needs real-time privilege; without it every test says so and passes).
//!
//! What is checked is what holds on any machine, quiet or not: every job records the CPU time
//! of its work (`exec`), a CPU-burn job's is its demand, a memory job's is close to its demand
//! when its buffer fits the private L2 and nothing shares it, the calibration is reported, and
//! the hardware counters are either in every job or declared unavailable with a reason.
//! Interference between working sets is shown by tests/test_memory_real.py.

use rtsched_linux::{run, sys, RunOptions};
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet};
use std::sync::Mutex;

/// Real runs occupy every CPU: one at a time.
static REAL: Mutex<()> = Mutex::new(());

fn privileged() -> bool {
    match sys::check_rt_privilege() {
        Ok(()) => sys::online_cpus() >= 2,
        Err(e) => {
            eprintln!("real-run test not run: {e}");
            false
        }
    }
}

/// m: 256 KiB of memory work (fits the 512 KiB L2 of this machine and most others), alone on
/// CPU 0; c: CPU burn alone on CPU 1. 300 ms, 30 jobs each.
const SET: &str = "platform: {cpus: 2}
run: {duration: 300}
tasks:
  - {name: m, period: 10, wcet: 2, wss: 256KiB, cpu: 0}
  - {name: c, period: 10, wcet: 1, cpu: 1}
";

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// CPU time of the work / demand of each completed job of task `t`.
fn ratios(r: &RunResult, t: u32) -> Vec<f64> {
    r.jobs
        .iter()
        .filter(|j| j.task == t && j.finish.is_some())
        .map(|j| (j.exec - j.overhead) as f64 / j.demand as f64)
        .collect()
}

/// One run of `backend`. Structural facts are asserted; what host noise can move (the memory
/// task's exec/demand) is returned as an error so the caller can rerun a bounded number of times.
fn check(ts: &TaskSet, backend: &str) -> Result<(), String> {
    let r = run(ts, backend, &RunOptions::default()).unwrap_or_else(|e| panic!("{backend}: {e}"));
    let steal = r.measurements.get("host.steal_ms").copied().unwrap_or(0.0);
    assert_eq!(r.jobs.len(), 60, "{backend}");
    for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
        assert!(
            j.exec > j.overhead,
            "{backend}: job {j:?} has no execution time"
        );
        // The testbed's workers measure the work alone; a kernel backend's task thread also
        // what it is charged between jobs (wake-up, bookkeeping), as the job's overhead.
        if backend.starts_with("kernel:") {
            assert!(
                j.overhead > 0,
                "{backend}: job {j:?}: no CPU time outside its work"
            );
        } else {
            assert_eq!(j.overhead, 0, "{backend}: job {j:?}");
        }
    }
    // CPU burn: the work's CPU time, at least the demand, at most a chunk (~1 us) more per
    // piece (a job is cut into few pieces here: one task per CPU).
    let c: Vec<_> = r
        .jobs
        .iter()
        .filter(|j| j.task == 1 && j.finish.is_some())
        .collect();
    assert!(
        c.len() >= 29,
        "{backend}: {} of 30 CPU jobs completed (steal {steal} ms)",
        c.len()
    );
    for j in &c {
        let work = j.exec - j.overhead;
        assert!(
            work >= j.demand && work <= j.demand + j.demand / 20 + 50_000,
            "{backend}: CPU job's work {work} for demand {}",
            j.demand
        );
    }
    // Memory work from L2, alone: the calibrated rate holds, so exec ~ demand. (Loose: the
    // rate is a median of nine 1 ms trials on a machine whose host takes CPUs away.)
    let m = median(ratios(&r, 0));
    eprintln!("{backend}: median exec/demand of the memory task {m:.3} (steal {steal} ms)");
    let rate_holds = (0.6..1.6).contains(&m);
    // The calibration is reported; 256 KiB = 4096 lines (not a multiple of the 97-line step).
    let rate = r.measurements.get("memory.262144B.lines_per_us").copied();
    assert!(
        rate.is_some_and(|x| x > 0.0),
        "{backend}: {:?}",
        r.measurements
            .keys()
            .filter(|k| k.starts_with("memory"))
            .collect::<Vec<_>>()
    );
    assert!(r.measurements["memory.calibration_ms"] > 0.0);
    // Hardware counters: in every job, or declared unavailable with the kernel's reason.
    match r.unavailable.get("hardware_counters") {
        Some(why) => {
            assert!(
                why.starts_with("not available here: perf_event_open(")
                    && why.contains("execution-time inflation"),
                "{why}"
            );
            assert!(r.jobs.iter().all(|j| j.hw.is_none()), "{backend}");
        }
        None => {
            for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
                let h = j.hw.unwrap_or_else(|| {
                    panic!("{backend}: counters available but job {j:?} has none")
                });
                assert!(h.instructions > 0 && h.cycles > 0, "{backend}: {h:?}");
            }
        }
    }
    // The summaries come out of the records: exec_inflation = Σexec / Σdemand and ipc_proxy =
    // Σdemand / Σ(exec - overhead), over the completed jobs.
    let s = r.summaries().total;
    let (mut demand, mut exec, mut overhead) = (0u64, 0u64, 0u64);
    for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
        (demand, exec, overhead) = (demand + j.demand, exec + j.exec, overhead + j.overhead);
    }
    assert!(
        (s.exec_inflation - exec as f64 / demand as f64).abs() < 1e-9,
        "{backend}: {s:?}"
    );
    assert!(
        (s.ipc_proxy - demand as f64 / (exec - overhead) as f64).abs() < 1e-9,
        "{backend}: {s:?}"
    );
    if rate_holds {
        Ok(())
    } else {
        Err(format!(
            "{backend}: median exec/demand of the memory task {m:.3} (steal {steal} ms)"
        ))
    }
}

#[test]
#[ignore = "real run: real-time threads on every CPU, alone on the machine (make test-real; cargo test -p rtsched-linux -- --ignored)"]
fn jobs_record_their_cpu_time_on_the_testbed_and_the_kernel() {
    if !privileged() {
        return;
    }
    let _one = REAL.lock().unwrap_or_else(|p| p.into_inner());
    let ts = parse_taskset(SET, Format::Yaml, "memory.yaml").unwrap();
    // The host can slow memory work between the calibration and the run without the guest's
    // steal counter showing it (a CI run once measured 1.64 with 0 ms steal; quiet runs measure
    // 1.1-1.3): up to three runs per backend, every failed one printed, the assertion unchanged.
    for backend in ["testbed:pedf", "kernel:fifo"] {
        let mut failures = Vec::new();
        while let Err(e) = check(&ts, backend) {
            eprintln!("rerun after: {e}");
            failures.push(e);
            assert!(failures.len() < 3, "three runs failed: {failures:#?}");
        }
    }
}
