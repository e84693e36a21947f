//! (A module of `global_rta_vs_sim.rs`, so no test binary of its own.)
//!
//! Melani et al.'s response-time analysis of DAG tasks under global fixed priority
//! (`schedulability::gfp_dag`, ECRTS 2015) against the simulator. Random sets of fork-join
//! tasks (1–3 regions of 1..=m threads each), simulated from a synchronous periodic release,
//! every node at its WCET, without overheads (`bounds::synchronous_at_wcet`), under `gfp:rm`:
//! - a set the analysis accepts never misses a deadline;
//! - no task's bound is below its simulated maximum response time.
//!
//! The same two properties for `gfp-dag-melani-file` under `gfp:file`, on the same sets with
//! file priorities drawn from 1..=3 (ties on most sets, an order unlike RM's on many).
//!
//! Negative control (`weakened_analysis_is_caught`): the analysis with the window's work spread
//! over m + 1 CPUs instead of m gives a bound below a simulated maximum response on some
//! generated set, so the properties above can fail. The `-file` form's
//! (`file_ties_ranked_or_weakened_are_caught`): the same weakening, and the ties ranked by a
//! tie-break `gfp` does not use (the later task in the file first), each caught on some set.

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

/// `arb_set` with file priorities drawn from 1..=3, so most sets have ties.
fn arb_prioritised() -> impl Strategy<Value = TaskSet> {
    arb_set().prop_flat_map(|ts| {
        let n = ts.tasks.len();
        (Just(ts), prop::collection::vec(1u32..=3, n)).prop_map(|(mut ts, p)| {
            for (t, p) in ts.tasks.iter_mut().zip(p) {
                t.priority = Some(p);
            }
            ts
        })
    })
}

/// Each task's maximum response time under `spec` from the synchronous release at WCET, and
/// the number of deadline misses.
fn simulated(ts: &TaskSet, spec: &str) -> (Vec<Time>, u64) {
    let s = synchronous_at_wcet(ts, horizon(ts));
    let r = simulate(&s, Options::spec(spec)).unwrap().result;
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
        let (max, missed) = simulated(&ts, "gfp:rm");
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
        let (max, _) = simulated(&ts, "gfp:rm");
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    #[test]
    fn melani_file_bounds_hold_in_simulation(ts in arb_prioritised()) {
        let Ok(v) = registry::find(ENTRIES, "gfp-dag-melani-file").unwrap().run(&ts) else {
            return Ok(());
        };
        let (max, missed) = simulated(&ts, "gfp:file");
        if v.schedulable == Some(true) {
            prop_assert_eq!(missed, 0, "accepted ({}) but gfp:file misses", v.detail);
        }
        for b in &v.tasks {
            if let Some(r) = b.bound {
                prop_assert!(max[b.task] <= r, "task {} bound {} < simulated {}", b.name, r, max[b.task]);
            }
        }
    }
}

/// The `-file` form's controls on 100 generated sets: the analysis over m + 1 CPUs, and the
/// analysis with equal priorities ranked by a tie-break `gfp` does not use (the later task in
/// the file first, where `gfp` runs the earlier first at a common release), each claim a bound
/// below a simulated maximum at least once; the analysis proper accepts some sets.
#[test]
fn file_ties_ranked_or_weakened_are_caught() {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_prioritised();
    let (mut weakened, mut ranked, mut accepted) = (0, 0, 0);
    for _ in 0..100 {
        let ts = strategy.new_tree(&mut runner).unwrap().current();
        let Ok(v) = registry::find(ENTRIES, "gfp-dag-melani-file")
            .unwrap()
            .run(&ts)
        else {
            continue;
        };
        let (max, _) = simulated(&ts, "gfp:file");
        accepted += (v.schedulable == Some(true)) as u32;
        let dags: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
        let file: Vec<u32> = ts.tasks.iter().map(|t| t.priority.unwrap()).collect();
        let n = ts.tasks.len() as u32;
        let by_index: Vec<u32> = file
            .iter()
            .enumerate()
            .map(|(i, p)| p * n + i as u32)
            .collect();
        let m = ts.platform.cpus;
        let below = |b: Vec<Option<Time>>| {
            b.iter().zip(&max).any(|(b, &s)| b.is_some_and(|b| b < s)) as u32
        };
        weakened += below(gfp_dag::response_times_over(&dags, &file, m, m + 1));
        ranked += below(gfp_dag::response_times(&dags, &by_index, m));
    }
    eprintln!(
        "gfp-dag-melani-file accepted {accepted}, weakened caught {weakened}, ties ranked caught {ranked} of 100"
    );
    assert!(weakened > 0, "the weakened analysis was never caught");
    assert!(ranked > 0, "ranking the ties was never caught");
    assert!(accepted > 5, "accepted only {accepted} sets");
}

/// The overhead-aware form (`overheads::inflate_dag`) against the simulator with the same
/// overheads charged, on 150 generated sets under `gfp:rm` at two cost levels: a set the
/// overhead-aware `gfp-dag-melani-rm` accepts never misses, and it accepts some; the plain
/// analysis accepts sets the overhead-charged simulator shows missing (so a form that forgot
/// the overheads would fail the first check).
#[test]
fn overhead_aware_form_holds_and_the_plain_one_does_not() {
    use rtsched_analysis::overheads::verdict_with_overheads;
    use rtsched_model::Overheads;
    let us = 1_000;
    let level = |k: Time| Overheads {
        decision: k * us,
        context_switch: k * us,
        migration: 2 * k * us,
        release: 5 * k * us,
        tick: k * us,
        tick_period: 1_000 * us,
        ..Overheads::default()
    };
    let test = registry::find(ENTRIES, "gfp-dag-melani-rm").unwrap();
    let mut runner = TestRunner::deterministic();
    let strategy = arb_set();
    let (mut aware, mut plain_wrong) = (0, 0);
    for _ in 0..150 {
        let ts = strategy.new_tree(&mut runner).unwrap().current();
        let Ok(plain) = test.run(&ts) else {
            continue;
        };
        for k in [1, 40] {
            let oh = level(k);
            let mut s = synchronous_at_wcet(&ts, horizon(&ts));
            s.run.overheads = oh.clone();
            let missed = simulate(&s, Options::spec("gfp:rm"))
                .unwrap()
                .result
                .summaries()
                .total
                .missed;
            let v = verdict_with_overheads(&test, &ts, &oh).unwrap();
            if v.schedulable == Some(true) {
                assert_eq!(
                    missed, 0,
                    "k={k}: accepted with overheads ({}) but missed",
                    v.detail
                );
                aware += 1;
            }
            plain_wrong += (plain.schedulable == Some(true) && missed > 0) as u32;
        }
    }
    eprintln!(
        "gfp-dag-melani-rm with overheads accepted {aware}; plain contradicted {plain_wrong}"
    );
    assert!(
        aware > 5,
        "the overhead-aware form accepted only {aware} sets"
    );
    assert!(
        plain_wrong > 0,
        "the plain analysis was never contradicted by the overheads"
    );
}
