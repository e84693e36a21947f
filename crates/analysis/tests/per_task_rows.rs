//! Per-task rows of the tests that bound no response time, and of partitioned EDF
//! (`schedulability::bounds`, issue 55):
//! - `gedf-bcl` (BCL's window load), `gedf-baruah` (Baruah's worst window), `gedf-gfb` and
//!   `p-edf-density` (each task's least passing deadline), `p-edf-exact` (Spuri's EDF
//!   response-time bound per CPU): the verdict is "schedulable" iff every task's row is within
//!   its deadline (`rows_agree_with_the_tests`), on generated sets; for BCL and Baruah also
//!   against the tests' own functions, which stop at the first failing task.
//! - `p-edf-exact`'s bounds against the simulator (`edf_bounds_hold_in_simulation`): no bound is
//!   below the task's maximum response under `pedf` from a synchronous periodic release at
//!   WCET, and a set it accepts never misses. The control (`edf_bounds_less_one_are_caught`):
//!   every bound made 1 ns smaller is below a simulated maximum on some generated set, so the
//!   property can fail (Spuri's bound is exact on many of them).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rtsched_analysis::schedulability::bounds::{horizon, synchronous_at_wcet, TaskBound};
use rtsched_analysis::schedulability::{gedf_baruah, global, registry, Cdt, Verdict, ENTRIES};
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

/// The time unit of generated parameters: 100 µs.
const UNIT: Time = 100_000;

/// Periods drawn from divisors of 120 units, so hyperperiods stay short.
const PERIODS: &[Time] = &[4, 5, 6, 8, 10, 12, 15, 20, 24, 30];

/// m = 2..=4 CPUs, m + 1 ..= 2m + 2 tasks, utilisation per task up to 0.9, D in [C, T]; each
/// task's `cpu` drawn too (for the per-CPU tests; the global ones ignore it).
fn arb_set() -> impl Strategy<Value = TaskSet> {
    (2u32..=4).prop_flat_map(|m| {
        let task = (0..PERIODS.len(), 1u64..=90, 0u64..=100, 0..m);
        let n = (m as usize + 1)..=(2 * m as usize + 2);
        proptest::collection::vec(task, n).prop_map(move |v| {
            let tasks = v
                .iter()
                .enumerate()
                .map(|(i, &(p, upct, dpct, cpu))| {
                    let t = PERIODS[p];
                    let c = (t * upct / 100).max(1);
                    let mut task = Task::periodic(format!("t{i}"), t * UNIT, c * UNIT);
                    task.deadline = (c + (t - c) * dpct / 100) * UNIT;
                    task.cpu = Some(cpu);
                    task
                })
                .collect();
            TaskSet::new(m, tasks)
        })
    })
}

fn run(name: &str, ts: &TaskSet) -> Verdict {
    registry::find(ENTRIES, name).unwrap().run(ts).unwrap()
}

fn passes(b: &TaskBound) -> bool {
    b.bound.is_some_and(|x| x <= b.deadline)
}

/// The tests whose rows are checked against their verdicts.
const TESTS: &[&str] = &[
    "gedf-gfb",
    "gedf-bcl",
    "gedf-baruah",
    "p-edf-exact",
    "p-edf-density",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn rows_agree_with_the_tests(ts in arb_set()) {
        let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
        let m = ts.platform.cpus;
        for &name in TESTS {
            let v = run(name, &ts);
            let names: Vec<&str> = v.tasks.iter().map(|b| b.name.as_str()).collect();
            let want: Vec<&str> = ts.tasks.iter().map(|t| t.name.as_str()).collect();
            prop_assert_eq!(&names, &want, "{}: a row per task, in order", name);
            let all = v.tasks.iter().all(passes);
            prop_assert_eq!(v.schedulable == Some(true), all, "{}: {:?}", name, v);
        }
        prop_assert_eq!(
            run("gedf-bcl", &ts).schedulable,
            global::bcl(&cdt, m).schedulable
        );
        prop_assert_eq!(
            run("gedf-baruah", &ts).schedulable == Some(true),
            gedf_baruah::baruah(&cdt, m, true).0
        );
    }
}

/// Each task's maximum response under `pedf` (the file's `cpu`s) from the synchronous release
/// at WCET, and the number of deadline misses.
fn simulated(ts: &TaskSet) -> (Vec<Time>, u64) {
    let s = synchronous_at_wcet(ts, horizon(ts));
    let r = simulate(&s, Options::spec("pedf")).unwrap().result;
    let sum = r.summaries();
    let max = sum
        .tasks
        .iter()
        .map(|t| t.summary.max_response_ns)
        .collect();
    (max, sum.total.missed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    #[test]
    fn edf_bounds_hold_in_simulation(ts in arb_set()) {
        let v = run("p-edf-exact", &ts);
        for b in &v.tasks {
            prop_assert_eq!(b.cpu, ts.tasks[b.task].cpu, "a per-CPU row names its CPU");
        }
        let (max, missed) = simulated(&ts);
        if v.schedulable == Some(true) {
            prop_assert_eq!(missed, 0, "p-edf-exact accepts but pedf misses");
        }
        for b in &v.tasks {
            if let Some(r) = b.bound {
                prop_assert!(max[b.task] <= r, "{}: bound {} < simulated {}", b.name, r, max[b.task]);
            }
        }
    }
}

/// The control: on 60 generated sets, some bound made 1 ns smaller is below the simulated
/// maximum (and some sets are accepted, so the property is not vacuous).
#[test]
fn edf_bounds_less_one_are_caught() {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_set();
    let (mut caught, mut bounded) = (0, 0);
    for _ in 0..60 {
        let ts = strategy.new_tree(&mut runner).unwrap().current();
        let v = run("p-edf-exact", &ts);
        let (max, _) = simulated(&ts);
        for b in &v.tasks {
            if let Some(r) = b.bound {
                bounded += 1;
                caught += (r - 1 < max[b.task]) as u32;
            }
        }
    }
    eprintln!("{bounded} bounds, {caught} of them 1 ns above the simulated maximum");
    assert!(caught > 0 && bounded > 20, "{caught} of {bounded}");
}
