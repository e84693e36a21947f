//! The global tests under the global OMLP (schedulability/omlp.rs: WCETs inflated by the
//! s-oblivious blocking b_i = Σ N·(2m − 1)·L) against the simulator's OMLP
//! (crates/runtime/src/ledger/locking/omlp.rs; docs/locking.md "The global OMLP").
//!
//! - Random 2- and 3-CPU sets, each task with at most one section of R or S, released at random
//!   offsets: under `gfp:file` a set `gfp-rta-file` or `gfp-rta-lc-file` accepts never misses
//!   and no simulated response exceeds its bound; under `gedf` the same for `gedf-rta`, and a
//!   set `gedf-gfb`, `gedf-bcl` or `gedf-baruah` accepts never misses.
//! - Negative control: the bounds with the blocking dropped (the set without its sections) fall
//!   below a simulated response — on the 2-CPU example worked by hand, and on a fixed family.

use proptest::prelude::*;
use rtsched_analysis::schedulability::bounds::Quantity;
use rtsched_analysis::schedulability::registry::{find, without_structure};
use rtsched_analysis::schedulability::{Verdict, ENTRIES};
use rtsched_model::results::RunResult;
use rtsched_model::{CriticalSection, Protocol, Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const MS: Time = 1_000_000;

/// One task: period, offset, WCET (ms), and its section (resource 0/1, start, length).
type Drawn = (u64, u64, u64, Option<(u32, u64, u64)>);

/// Task i has priority n − i (the first the most urgent) and D = T.
fn set(m: u32, drawn: &[Drawn]) -> TaskSet {
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
    let mut ts = TaskSet::new(m, tasks);
    ts.resources = vec!["R".into(), "S".into()];
    ts.run.locking = Protocol::Omlp;
    ts.run.duration = 400 * MS;
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

/// `v`'s verdict against the run: an accepted set never misses; no response above its bound
/// (the rows that bound a response: GFB's, BCL's and Baruah's are deadline checks).
fn holds(name: &str, v: &Verdict, sim: &(Vec<Time>, bool)) -> Result<(), String> {
    if v.schedulable == Some(true) && sim.1 {
        return Err(format!("{name} accepted a set that misses ({})", v.detail));
    }
    for row in v
        .tasks
        .iter()
        .filter(|r| r.quantity == Quantity::ResponseTime)
    {
        if let Some(b) = row.bound {
            if sim.0[row.task] > b {
                return Err(format!(
                    "{name}: '{}' responded in {} > its bound {b}",
                    row.name, sim.0[row.task]
                ));
            }
        }
    }
    Ok(())
}

/// Every test of `tests` on `ts` against one simulation under `spec`.
fn check(ts: &TaskSet, spec: &str, tests: &[&str]) -> Result<(), String> {
    let s = responses(ts, &sim(ts, spec));
    for name in tests {
        let v = find(ENTRIES, name)
            .unwrap()
            .run(ts)
            .map_err(|na| na.words(ts))?;
        holds(name, &v, &s)?;
    }
    Ok(())
}

const GFP: [&str; 2] = ["gfp-rta-file", "gfp-rta-lc-file"];
const GEDF: [&str; 4] = ["gedf-rta", "gedf-gfb", "gedf-bcl", "gedf-baruah"];

fn drawn() -> impl Strategy<Value = Vec<Drawn>> {
    prop::collection::vec(
        (
            20u64..80,
            0u64..10,
            1u64..5,
            prop::option::weighted(0.7, (0u32..2, 0u64..3, 1u64..3)),
        ),
        3..7,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn omlp_bounds_hold_in_simulation(m in 2u32..4, d in drawn()) {
        let ts = set(m, &d);
        check(&ts, "gfp:file", &GFP).map_err(TestCaseError::fail)?;
        check(&ts, "gedf", &GEDF).map_err(TestCaseError::fail)?;
    }
}

/// The control: the tests on the set without its sections (no blocking charged).
fn dropped(ts: &TaskSet, spec: &str, tests: &[&str]) -> Result<(), String> {
    let s = responses(ts, &sim(ts, spec));
    let plain = without_structure(ts);
    for name in tests {
        let v = find(ENTRIES, name).unwrap().run(&plain).unwrap();
        holds(name, &v, &s)?;
    }
    Ok(())
}

/// The 2-CPU example of docs/locking.md, periods 20 ms: under `gfp:file` d (the most urgent)
/// waits 3–6 for a's and b's sections and responds in 4 ms; without blocking its bound is its
/// WCET, 1 ms; with it 13 ms (1 + 3·4).
fn example() -> TaskSet {
    // (name, priority, offset, WCET, uses R for all its work)
    let rows = [
        ("a", 1, 0, 4, true),
        ("b", 2, 1, 2, true),
        ("c", 4, 2, 1, true),
        ("d", 6, 3, 1, true),
        ("e", 5, 1, 6, false),
        ("f", 3, 2, 3, false),
    ];
    let tasks = rows
        .iter()
        .map(|&(name, prio, at, c, r)| {
            let mut t = Task::periodic(name, 20 * MS, c * MS);
            t.priority = Some(prio);
            t.offset = at * MS;
            if r {
                t.sections = vec![CriticalSection {
                    resource: 0,
                    region: 0,
                    thread: 0,
                    start: 0,
                    length: c * MS,
                }];
            }
            t
        })
        .collect();
    let mut ts = TaskSet::new(2, tasks);
    ts.resources = vec!["R".into()];
    ts.run.locking = Protocol::Omlp;
    ts.run.duration = 19 * MS;
    ts
}

#[test]
fn the_example_and_its_control() {
    let ts = example();
    check(&ts, "gfp:file", &GFP).unwrap();
    let r = sim(&ts, "gfp:file");
    let d = r.jobs.iter().find(|j| j.task == 3).unwrap();
    assert_eq!(d.finish.unwrap() - d.release, 4 * MS);
    let v = find(ENTRIES, "gfp-rta-file").unwrap().run(&ts).unwrap();
    assert_eq!(v.tasks[3].bound, Some(13 * MS));
    let plain = find(ENTRIES, "gfp-rta-file")
        .unwrap()
        .run(&without_structure(&ts))
        .unwrap();
    assert_eq!(plain.tasks[3].bound, Some(MS));
    let e = dropped(&ts, "gfp:file", &GFP).unwrap_err();
    assert!(e.contains("> its bound"), "{e}");
}

/// A fixed family of 2- and 3-CPU sets (a small LCG draws them; every task uses R from its
/// start, released within 3 ms of each other), on which the bounds with the blocking dropped
/// fall below a simulated response for some set, under both schedulers, while every test
/// accepts some of them (with their blocking) and they hold.
#[test]
fn dropping_the_blocking_is_caught() {
    let mut x: u64 = 7;
    let mut next = |k: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % k
    };
    let (mut gfp, mut gedf, mut accepted) = (0, 0, [0; 6]);
    for k in 0..40 {
        let d: Vec<Drawn> = (0..4 + next(3))
            .map(|_| {
                let wcet = 1 + next(4);
                (30 + next(60), next(4), wcet, Some((0, 0, 1 + next(wcet))))
            })
            .collect();
        let ts = set(2 + k % 2, &d);
        check(&ts, "gfp:file", &GFP).unwrap();
        check(&ts, "gedf", &GEDF).unwrap();
        for (k, name) in GFP.iter().chain(&GEDF).enumerate() {
            let v = find(ENTRIES, name).unwrap().run(&ts).unwrap();
            accepted[k] += (v.schedulable == Some(true)) as u32;
        }
        gfp += dropped(&ts, "gfp:file", &GFP).is_err() as u32;
        gedf += dropped(&ts, "gedf", &GEDF).is_err() as u32;
    }
    assert!(gfp > 0 && gedf > 0, "caught: gfp {gfp}, gedf {gedf} of 40");
    // Not vacuous: each test accepts some of the sets (with their blocking).
    assert!(
        accepted.iter().all(|&a| a > 0),
        "accepted {accepted:?} of 40"
    );
}
