//! (A module of `global_rta_vs_sim.rs`, so no test binary of its own.)
//!
//! Melani et al.'s response-time analysis of DAG tasks under global fixed priority
//! (`schedulability::gfp_dag`, ECRTS 2015) against the simulator. Random sets of fork-join
//! tasks (1–3 regions of 1..=m threads each), simulated from a synchronous periodic release,
//! every node at its WCET, without overheads (`bounds::synchronous_at_wcet`), under `gfp:rm`:
//! - a set the analysis accepts never misses a deadline;
//! - no task's bound is below its simulated maximum response time.
//!
//! Negative control (`weakened_analysis_is_caught`): the analysis with the window's work spread
//! over m + 1 CPUs instead of m gives a bound below a simulated maximum response on some
//! generated set, so the properties above can fail.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rtsched_analysis::priority::Priorities;
use rtsched_analysis::schedulability::bounds::{horizon, synchronous_at_wcet};
use rtsched_analysis::schedulability::dag::DagTask;
use rtsched_analysis::schedulability::{gfp_dag, registry, ENTRIES};
use rtsched_model::{Region, Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

/// The time unit of generated parameters: 100 µs.
const UNIT: Time = 100_000;

/// Periods in units: the hyperperiod is at most 24 ms.
const PERIODS: &[Time] = &[60, 80, 120, 240];

/// m = 2..=4 CPUs, 2..=5 fork-join tasks, threads of 1..=16 units, D between the critical path
/// and T.
fn arb_set() -> impl Strategy<Value = TaskSet> {
    (2u32..=4).prop_flat_map(|m| {
        let region = prop::collection::vec(1u64..=16, 1..=m as usize);
        let task = (
            prop::collection::vec(region, 1..=3),
            0..PERIODS.len(),
            30u64..=100,
        );
        prop::collection::vec(task, 2..=5).prop_map(move |v| {
            let tasks = v
                .into_iter()
                .enumerate()
                .map(|(i, (regions, p, dpct))| {
                    let t = PERIODS[p] * UNIT;
                    let mut task = Task::periodic(format!("t{i}"), t, 1);
                    task.regions = regions
                        .into_iter()
                        .map(|r| Region {
                            threads: r.into_iter().map(|x| x * UNIT).collect(),
                        })
                        .collect();
                    task.wcet = task.regions.iter().flat_map(|r| r.threads.iter()).sum();
                    let len = rtsched_analysis::schedulability::dag::span(&task);
                    task.deadline = len + (t - len) * dpct / 100;
                    task
                })
                .collect();
            TaskSet::new(m, tasks)
        })
    })
}

/// Each task's maximum response time under gfp:rm from the synchronous release at WCET, and
/// the number of deadline misses.
fn simulated(ts: &TaskSet) -> (Vec<Time>, u64) {
    let s = synchronous_at_wcet(ts, horizon(ts));
    let r = simulate(&s, Options::spec("gfp:rm")).unwrap().result;
    let sum = r.summaries();
    let max = sum
        .tasks
        .iter()
        .map(|t| t.summary.max_response_ns)
        .collect();
    (max, sum.total.missed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn melani_bounds_hold_in_simulation(ts in arb_set()) {
        // A set whose every task drew one thread per region is sequential: the test is for
        // parallel sets (the sequential tests answer there).
        let Ok(v) = registry::find(ENTRIES, "gfp-dag-melani-rm").unwrap().run(&ts) else {
            return Ok(());
        };
        let (max, missed) = simulated(&ts);
        if v.schedulable == Some(true) {
            prop_assert_eq!(missed, 0, "accepted ({}) but gfp:rm misses", v.detail);
        }
        for b in &v.tasks {
            if let Some(r) = b.bound {
                prop_assert!(max[b.task] <= r, "task {} bound {} < simulated {}", b.name, r, max[b.task]);
            }
        }
    }
}

/// The negative control: on 150 generated sets the analysis spreading the window's work over
/// m + 1 CPUs claims a bound below a simulated maximum at least once, and the analysis proper
/// accepts some sets (the property is not vacuous).
#[test]
fn weakened_analysis_is_caught() {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_set();
    let (mut caught, mut accepted) = (0, 0);
    for _ in 0..150 {
        let ts = strategy.new_tree(&mut runner).unwrap().current();
        let Ok(v) = registry::find(ENTRIES, "gfp-dag-melani-rm")
            .unwrap()
            .run(&ts)
        else {
            continue;
        };
        let (max, _) = simulated(&ts);
        accepted += (v.schedulable == Some(true)) as u32;
        let dags: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
        let rm = Priorities::RateMonotonic.of(&ts.tasks).unwrap();
        let m = ts.platform.cpus;
        let weak = gfp_dag::response_times_over(&dags, &rm, m, m + 1);
        caught += weak
            .iter()
            .zip(&max)
            .any(|(b, &s)| b.is_some_and(|b| b < s)) as u32;
    }
    eprintln!("gfp-dag-melani-rm accepted {accepted}, weakened caught {caught} of 150");
    assert!(caught > 0, "the weakened analysis was never caught");
    assert!(accepted > 5, "accepted only {accepted} sets");
}
