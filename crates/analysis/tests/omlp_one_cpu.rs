//! The global OMLP on one CPU in the uniprocessor tests (schedulability/uniprocessor.rs,
//! `omlp_on_one_cpu`; docs/locking.md "OMLP on one CPU"): with m = 1 the FIFO queue holds the
//! holder alone, every waiter is in the priority queue and the holder inherits its most
//! urgent waiter's priority — the ledger's `pip` without nesting — so the tests charge `pip`'s
//! terms (Sha, Rajkumar & Lehoczky 1990).
//!
//! - The rules agree: random one-CPU sets simulate job for job alike under `omlp` and `pip`
//!   (`gfp:file` and `gedf`).
//! - The bounds hold: no simulated response under `gfp:file` exceeds its `fp-rta-file` bound,
//!   and a set `fp-rta-file` or `edf-exact` accepts never misses (under `gfp:file`, `gedf`).
//! - Control: the FP bounds with the blocking term dropped fall below a simulated response —
//!   on the classic example (h: 2 ms, simulated 5 ms) and on a fixed family of sets.
//! - On several CPUs the uniprocessor tests refuse `omlp`, saying the global tests bound it.

use proptest::prelude::*;
use rtsched_analysis::schedulability::registry::find;
use rtsched_analysis::schedulability::uniprocessor::response_time;
use rtsched_analysis::schedulability::{Cdt, ENTRIES};
use rtsched_model::results::RunResult;
use rtsched_model::{CriticalSection, Protocol, Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const MS: Time = 1_000_000;

/// One task: period, offset, WCET (ms), and its section (resource 0/1, start, length).
type Drawn = (u64, u64, u64, Option<(u32, u64, u64)>);

/// One CPU under `locking`; task i has priority n − i (the first the most urgent), D = T.
fn set(drawn: &[Drawn], locking: Protocol) -> TaskSet {
    let n = drawn.len() as u32;
    let tasks = drawn
        .iter()
        .enumerate()
        .map(|(i, &(period, offset, wcet, sec))| {
            let mut t = Task::periodic(format!("t{i}"), period * MS, wcet * MS);
            t.priority = Some(n - i as u32);
            t.offset = offset * MS;
            if let Some((r, start, len)) = sec {
                let start = start.min(wcet - 1);
                t.sections = vec![CriticalSection {
                    resource: r,
                    region: 0,
                    thread: 0,
                    start: start * MS,
                    length: len.clamp(1, wcet - start) * MS,
                }];
            }
            t
        })
        .collect();
    let mut ts = TaskSet::new(1, tasks);
    ts.resources = vec!["R".into(), "S".into()];
    ts.run.locking = locking;
    ts.run.duration = 300 * MS;
    ts
}

fn sim(ts: &TaskSet, spec: &str) -> RunResult {
    simulate(ts, Options::spec(spec)).unwrap().result
}

/// Each task's largest simulated response, and whether a job missed.
fn responses(ts: &TaskSet, r: &RunResult) -> (Vec<Time>, bool) {
    let mut max = vec![0; ts.tasks.len()];
    for j in &r.jobs {
        if let Some(f) = j.finish {
            max[j.task as usize] = max[j.task as usize].max(f - j.release);
        }
    }
    (max, r.jobs.iter().any(|j| j.missed))
}

/// Under `gfp:file`: every response within its `fp-rta-file` bound, no miss if accepted;
/// under `gedf`: no miss if `edf-exact` accepts. The `gfp:file` maxima.
fn holds(ts: &TaskSet) -> Result<Vec<Time>, String> {
    let (max, missed) = responses(ts, &sim(ts, "gfp:file"));
    let v = find(ENTRIES, "fp-rta-file")
        .unwrap()
        .run(ts)
        .map_err(|na| na.words(ts))?;
    for row in &v.tasks {
        if row.bound.is_some_and(|b| b < max[row.task]) {
            return Err(format!(
                "'{}': bound {:?} < simulated {}",
                row.name, row.bound, max[row.task]
            ));
        }
    }
    if v.schedulable == Some(true) && missed {
        return Err(format!(
            "fp-rta-file accepted a set that misses ({})",
            v.detail
        ));
    }
    let e = find(ENTRIES, "edf-exact")
        .unwrap()
        .run(ts)
        .map_err(|na| na.words(ts))?;
    if e.schedulable == Some(true) && responses(ts, &sim(ts, "gedf")).1 {
        return Err(format!(
            "edf-exact accepted a set that misses ({})",
            e.detail
        ));
    }
    Ok(max)
}

/// The job records' (task, release, finish) under `spec`.
fn finishes(ts: &TaskSet, spec: &str) -> Vec<(u32, Time, Option<Time>)> {
    sim(ts, spec)
        .jobs
        .iter()
        .map(|j| (j.task, j.release, j.finish))
        .collect()
}

fn drawn() -> impl Strategy<Value = Vec<Drawn>> {
    prop::collection::vec(
        (
            10u64..60,
            0u64..10,
            1u64..6,
            prop::option::weighted(0.7, (0u32..2, 0u64..3, 1u64..4)),
        ),
        3..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn omlp_is_pip_on_one_cpu(d in drawn()) {
        let (omlp, pip) = (set(&d, Protocol::Omlp), set(&d, Protocol::Pip));
        for spec in ["gfp:file", "gedf"] {
            prop_assert_eq!(finishes(&omlp, spec), finishes(&pip, spec), "{}", spec);
        }
    }

    #[test]
    fn omlp_bounds_hold_on_one_cpu(d in drawn()) {
        let ts = set(&d, Protocol::Omlp);
        holds(&ts).map_err(|e| TestCaseError::fail(format!("{e}\n{ts:?}")))?;
    }
}

/// The FP bounds without the blocking term, below some simulated response?
fn caught_without_blocking(ts: &TaskSet, max: &[Time]) -> bool {
    let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
    let prio: Vec<u32> = ts.tasks.iter().map(|t| t.priority.unwrap()).collect();
    (0..cdt.len()).any(|i| response_time(&cdt, &prio, i).is_some_and(|r| r < max[i]))
}

/// The classic example (docs/locking.md) under `omlp` on one CPU, ms: l (priority 1, C 4,
/// R 0–4), h (3, at 1, C 2, R 0–1), m (2, at 2, C 5), deadlines 20. As under `pip`: B_h = 4
/// (l's section), R_h = 2 + 4 = 6; B_m = 4, R_m = 5 + 4 + 2 = 11; R_l = 4 + 2 + 5 = 11.
/// Simulated (as `pip`): h 5, m 9, l 4. Without the blocking R_h = 2 < 5: the control. And
/// the same set on 2 CPUs (every task's `cpu` 0) is refused by `p-fp-rta-file`.
#[test]
fn the_classic_example_and_the_control() {
    let d: Vec<Drawn> = vec![
        (100, 1, 2, Some((0, 0, 1))),
        (100, 2, 5, None),
        (100, 0, 4, Some((0, 0, 4))),
    ];
    let mut ts = set(&d, Protocol::Omlp);
    for t in &mut ts.tasks {
        t.deadline = 20 * MS;
    }
    let v = find(ENTRIES, "fp-rta-file").unwrap().run(&ts).unwrap();
    let rows: Vec<(Option<Time>, Option<Time>)> =
        v.tasks.iter().map(|r| (r.bound, r.blocking)).collect();
    let ms = |x: u64| Some(x * MS);
    assert_eq!(rows, vec![(ms(6), ms(4)), (ms(11), ms(4)), (ms(11), ms(0))]);
    assert!(
        v.detail.contains("omlp, on one CPU pip's terms"),
        "{}",
        v.detail
    );
    let max = holds(&ts).unwrap();
    assert_eq!(max, vec![5 * MS, 9 * MS, 4 * MS]);
    assert!(caught_without_blocking(&ts, &max));
    let mut two = ts.clone();
    two.platform.cpus = 2;
    for t in &mut two.tasks {
        t.cpu = Some(0);
    }
    let v = find(ENTRIES, "p-fp-rta-file").unwrap().run(&two).unwrap();
    assert_eq!(v.schedulable, None);
    assert!(
        v.detail.contains("omlp is for global scheduling"),
        "{}",
        v.detail
    );
}

/// The control on a fixed family: 40 sets, every task using R from its start, released within
/// 3 ms of each other; the bounds with B_i (which hold, `holds`) dropped fall below a
/// simulated response on some.
#[test]
fn the_control_is_caught_on_a_family() {
    let mut caught = 0;
    for k in 0..40u64 {
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (k + 1);
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let d: Vec<Drawn> = (0..4)
            .map(|_| {
                (
                    20 + next(40),
                    next(3),
                    1 + next(5),
                    Some((0, 0, 1 + next(3))),
                )
            })
            .collect();
        let ts = set(&d, Protocol::Omlp);
        let max = holds(&ts).unwrap();
        caught += caught_without_blocking(&ts, &max) as u32;
    }
    eprintln!("control caught on {caught} of 40 sets");
    assert!(caught > 0);
}
