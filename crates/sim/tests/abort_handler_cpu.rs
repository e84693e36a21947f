//! The abort handler's cost (docs/semantics.md "Abort handler"): charged on the CPU whose run
//! queue each aborted thread sits on — the one it last ran on, whether it runs there at the
//! abort or waits (issue #38: the utility-accrual schedulers' own aborts mostly hit waiting
//! jobs); for a thread that never ran, the one it was woken or created on (issue #50).

mod worked;

use rtsched_model::results::RunResult;
use rtsched_sim::{simulate, Options};
use worked::{ivs, ts_named, MS};

fn run(handler: &str) -> RunResult {
    // Fixed priorities (larger is more urgent), on_miss: abort, 2 CPUs.
    let yaml = format!(
        "platform: {{cpus: 2}}\nrun: {{duration: 10, on_miss: abort, overheads: {{abort_handler: {handler}}}}}\ntasks:\n  \
         - {{name: h1, period: 40, wcet: 12, deadline: 40, priority: 3}}\n  \
         - {{name: x, period: 40, wcet: 6, deadline: 5, priority: 1}}\n  \
         - {{name: h2, period: 40, wcet: 10, deadline: 40, offset: 2, priority: 2}}\n"
    );
    simulate(
        &ts_named(&yaml, "abort-cpu.yaml"),
        Options::spec("gfp").intervals(true),
    )
    .unwrap()
    .result
}

/// G-FP on 2 CPUs (ms): h1 (C 12) runs [0, 12] on CPU 0; x (C 6, D 5) runs [0, 2] on CPU 1,
/// where h2 (C 10, released at 2, more urgent than x) preempts it. x waits and is aborted at
/// its deadline, 5, off every CPU. Its handler (2 ms) is charged on CPU 1, the CPU x last ran
/// on: h2, running there, pays it first and finishes at 2 + 10 + 2 = 14 instead of 12; CPU 0
/// is not charged (h1 still ends at 12). Before: a waiting thread cost nothing (0 ns charged,
/// h2 at 12).
#[test]
fn a_job_aborted_while_waiting_costs_the_cpu_it_last_ran_on_the_handler() {
    let free = run("0");
    assert_eq!(
        ivs(&free),
        vec![(0, 0, 0, 0, 12), (1, 1, 0, 0, 2), (1, 2, 0, 2, 12)]
    );
    assert_eq!(
        (free.jobs[1].aborted, free.jobs[1].aborted_at),
        (true, Some(5 * MS))
    );
    assert_eq!(free.counters.overheads.abort_handler_ns, 0);

    let r = run("2ms");
    assert_eq!(
        (r.jobs[1].aborted, r.jobs[1].aborted_at),
        (true, Some(5 * MS))
    );
    assert_eq!(r.counters.overheads.abort_handler_ns, 2 * MS);
    assert_eq!(r.jobs[0].finish, Some(12 * MS), "CPU 0 is not charged");
    assert_eq!(
        r.jobs[2].finish,
        Some(14 * MS),
        "h2, next on CPU 1, pays the handler"
    );
    assert_eq!(r.jobs[2].overhead, 2 * MS);
    // The handler is not the policy's charge.
    assert_eq!(r.counters.overheads.policy_ns, 0);
    assert!(!r.measurements.contains_key("policy.charged_ns"));
}

/// Threads that never ran (G-FP, 2 CPUs, ms; on_miss: abort): h1 (C 12) runs [0, 12] on CPU
/// 0; x#0 (C 1, D 4) runs [0, 1] on CPU 1 and completes there; h2 (C 10, at 2) takes the idle
/// CPU 1. y#0 (at 3, D 2) and x#1 (at 5, D 4), less urgent than h1 and h2, never run: y#0 is
/// aborted at 5, x#1 at 9. x#1 is charged on the CPU whose run queue it sits on, woken where
/// its task's thread last ran (1); y#0, its task's first job, where its thread was created:
/// task 3 of 2 CPUs, CPU 3 mod 2 = 1. h2 pays both (2 ms at 5, 2 ms at 9) and ends at 16.
/// Before issue #50, y#0 cost nothing (h2 at 14); before #38, neither (h2 at 12).
#[test]
fn a_job_that_never_ran_costs_the_cpu_its_thread_sits_on() {
    let yaml = |handler: &str| {
        format!(
            "platform: {{cpus: 2}}\nrun: {{duration: 10, on_miss: abort, overheads: {{abort_handler: {handler}}}}}\ntasks:\n  \
             - {{name: h1, period: 40, wcet: 12, deadline: 40, priority: 4}}\n  \
             - {{name: h2, period: 40, wcet: 10, deadline: 40, offset: 2, priority: 3}}\n  \
             - {{name: x, period: 5, wcet: 1, deadline: 4, priority: 2}}\n  \
             - {{name: y, period: 40, wcet: 1, deadline: 2, offset: 3, priority: 1}}\n"
        )
    };
    let run = |handler: &str| {
        simulate(
            &ts_named(&yaml(handler), "never-ran.yaml"),
            Options::spec("gfp").intervals(true),
        )
        .unwrap()
        .result
    };
    let aborted = |r: &RunResult| -> Vec<(u32, u64, Option<u64>)> {
        r.jobs
            .iter()
            .filter(|j| j.aborted)
            .map(|j| (j.task, j.job, j.aborted_at))
            .collect()
    };
    let finish = |r: &RunResult, task: u32| {
        r.jobs
            .iter()
            .find(|j| j.task == task && j.job == 0)
            .unwrap()
            .finish
    };
    let free = run("0");
    assert_eq!(
        aborted(&free),
        vec![(3, 0, Some(5 * MS)), (2, 1, Some(9 * MS))]
    );
    assert!(
        ivs(&free).contains(&(1, 2, 0, 0, 1)),
        "x#0 ran on CPU 1: {:?}",
        ivs(&free)
    );
    assert_eq!(finish(&free, 1), Some(12 * MS));
    let r = run("2ms");
    assert_eq!(aborted(&r), aborted(&free));
    assert_eq!(r.counters.overheads.abort_handler_ns, 4 * MS, "y#0 and x#1");
    assert_eq!(
        (finish(&r, 0), finish(&r, 1)),
        (Some(12 * MS), Some(16 * MS))
    );
}

/// The worked case of issue #50 (G-FP, 1 CPU, ms; on_miss: abort; handler 1 ms): h (C 10)
/// runs [0, 10]; x (D 2) and y (D 3), first jobs of their tasks and less urgent, never run and
/// are aborted at 2 and 3. Every thread sits on the one CPU's run queue, where its handler
/// runs: 2 ms charged, paid by h, which ends at 12 instead of 10. Fails if a task's first job
/// that never ran is aborted at no cost (0 ms, h at 10).
#[test]
fn two_waiting_first_jobs_aborted_on_one_cpu_charge_two_handlers() {
    let yaml = |handler: &str| {
        format!(
            "platform: {{cpus: 1}}\nrun: {{duration: 10, on_miss: abort, overheads: {{abort_handler: {handler}}}}}\ntasks:\n  \
             - {{name: h, period: 40, wcet: 10, deadline: 40, priority: 3}}\n  \
             - {{name: x, period: 40, wcet: 1, deadline: 2, priority: 2}}\n  \
             - {{name: y, period: 40, wcet: 1, deadline: 3, priority: 1}}\n"
        )
    };
    let run = |handler: &str| {
        simulate(
            &ts_named(&yaml(handler), "one-cpu.yaml"),
            Options::spec("gfp").intervals(true),
        )
        .unwrap()
        .result
    };
    let free = run("0");
    assert_eq!(ivs(&free), vec![(0, 0, 0, 0, 10)]);
    let r = run("1ms");
    let aborted: Vec<_> = r
        .jobs
        .iter()
        .map(|j| (j.task, j.aborted, j.aborted_at))
        .collect();
    assert_eq!(
        aborted,
        vec![
            (0, false, None),
            (1, true, Some(2 * MS)),
            (2, true, Some(3 * MS))
        ]
    );
    assert_eq!(r.counters.overheads.abort_handler_ns, 2 * MS);
    assert_eq!(r.jobs[0].finish, Some(12 * MS));
    assert_eq!(r.jobs[0].overhead, 2 * MS);
    // h's interval is split where each charge begins (its overhead drawn nested).
    assert_eq!(
        ivs(&r),
        vec![(0, 0, 0, 0, 2), (0, 0, 0, 2, 3), (0, 0, 0, 3, 12)]
    );
}
