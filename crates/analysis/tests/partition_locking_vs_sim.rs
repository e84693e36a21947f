//! Blocking-aware partitioning under the multiprocessor protocols (`partition/remote.rs`;
//! docs/locking.md, "Partitioning") against the per-CPU test and the simulator.
//!
//! - Property: on random 2- and 3-CPU sets that give no task a `cpu` (two resources, most
//!   tasks with one section, the file's rate-monotonic priorities, random offsets; and the
//!   same sets with every section on one resource, so that it is global in more accepted
//!   partitions: about one in eight under `msrp` and `mrsp`, a third under `fmlp+`), every
//!   partition FFD, WFD or BFD returns counting `msrp`'s, `mrsp`'s or `fmlp+`'s terms passes
//!   `p-fp-rta-file` on the final partition, and simulated under `pfp` for 300 ms no job
//!   misses, responds beyond its bound or spins beyond its spin term; under EDF admission
//!   (`msrp`, `fmlp+`), FFD's partitions pass `p-edf-exact` and `pedf` neither misses nor
//!   spins beyond the terms.
//! - `pfp:partition=ffd` places by the same admission: the example of `remote.rs` runs with
//!   R's users together, and the set that fits only ignoring sections is refused.
//! - Control: FFD admitting by response time alone (sections ignored) accepts sets of a fixed
//!   family whose partition then fails the per-CPU test with the protocol's terms, and some of
//!   which miss in simulation; counting the terms, those are refused or placed otherwise.

use proptest::prelude::*;
use rtsched_analysis::partition::{by_name, Admission};
use rtsched_analysis::schedulability::registry::find;
use rtsched_analysis::schedulability::{Verdict, ENTRIES};
use rtsched_model::{CriticalSection, Protocol, Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const MS: Time = 1_000_000;
const PERIODS: [u64; 5] = [10, 20, 25, 40, 50];
const HEURISTICS: [&str; 3] = ["ffd", "wfd", "bfd"];

/// A drawn task: period (index into PERIODS), WCET in tenths of the period (at most half),
/// offset ms, and its section (resource 0 or 1, start ms, length ms).
type Drawn = (usize, u64, u64, Option<(u32, u64, u64)>);

/// The drawn set on `m` CPUs under `p`: D = T, priorities rate-monotonic (ties by index) in
/// the file, no `cpu`.
fn set(m: u32, drawn: &[Drawn], p: Protocol) -> TaskSet {
    let mut tasks: Vec<Task> = drawn
        .iter()
        .enumerate()
        .map(|(i, &(pi, c, at, sec))| {
            let t = PERIODS[pi];
            let c = (t * c / 10).clamp(1, t / 2);
            let mut task = Task::periodic(format!("t{i}"), t * MS, c * MS);
            task.offset = (at % t) * MS;
            if let Some((r, start, len)) = sec {
                let start = start.min(c - 1);
                task.sections = vec![CriticalSection {
                    resource: r,
                    region: 0,
                    thread: 0,
                    start: start * MS,
                    length: len.clamp(1, c - start) * MS,
                }];
            }
            task
        })
        .collect();
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(tasks[i].period), std::cmp::Reverse(i)));
    for (rank, &i) in order.iter().enumerate() {
        tasks[i].priority = Some(rank as u32 + 1);
    }
    let mut ts = TaskSet::new(m, tasks);
    ts.resources = vec!["G".into(), "H".into()];
    ts.run.locking = p;
    ts.run.duration = 300 * MS;
    ts
}

fn file_priorities(ts: &TaskSet) -> Admission {
    Admission::FpRta(ts.tasks.iter().map(|t| t.priority.unwrap()).collect())
}

fn placed(ts: &TaskSet, cpu_of: &[u32]) -> TaskSet {
    let mut out = ts.clone();
    for (t, &c) in out.tasks.iter_mut().zip(cpu_of) {
        t.cpu = Some(c);
    }
    out
}

fn per_cpu(ts: &TaskSet) -> Verdict {
    find(ENTRIES, "p-fp-rta-file").unwrap().run(ts).unwrap()
}

/// Simulated under `spec`: whether some job missed, and the first job beyond its row's bound
/// (when the rows are response times, `pfp`'s) or spin term (the rows of `v`).
fn simulated_by(ts: &TaskSet, v: &Verdict, spec: &str) -> (bool, Option<String>) {
    let r = simulate(ts, Options::spec(spec)).unwrap().result;
    let responses = spec == "pfp";
    let missed = r
        .jobs
        .iter()
        .any(|j| j.missed || j.finish.is_some_and(|f| f > j.deadline));
    let beyond = r.jobs.iter().find_map(|j| {
        let b = v.tasks.iter().find(|b| b.task == j.task as usize)?;
        let response = j.finish.map(|f| f - j.release);
        if responses && response.is_some_and(|x| b.bound.is_none_or(|bound| x > bound)) {
            return Some(format!(
                "'{}' responded {response:?} > {:?}",
                b.name, b.bound
            ));
        }
        (j.spin > b.spin.unwrap_or(0))
            .then(|| format!("'{}' spun {} > {:?}", b.name, j.spin, b.spin))
    });
    (missed, beyond)
}

fn simulated(ts: &TaskSet, v: &Verdict) -> (bool, Option<String>) {
    simulated_by(ts, v, "pfp")
}

fn drawn() -> impl Strategy<Value = Vec<Drawn>> {
    prop::collection::vec(
        (
            0usize..5,
            1u64..5,
            0u64..50,
            prop::option::weighted(0.75, (0u32..2, 0u64..3, 1u64..3)),
        ),
        3..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Every accepted partition passes whole and simulates within its bounds, no miss.
    #[test]
    fn accepted_partitions_hold_in_simulation(m in 2u32..4, d in drawn()) {
        // Also every section on G: one large bundle, which seldom fits whole, so that G
        // becomes global in most accepted partitions.
        let all_g: Vec<Drawn> = d.iter().map(|&(p, c, at, s)| (p, c, at, s.map(|(_, a, l)| (0, a, l)))).collect();
        for (p, d) in [Protocol::Msrp, Protocol::Mrsp, Protocol::FmlpPlus].into_iter().flat_map(|p| [(p, &d), (p, &all_g)]) {
            let ts = set(m, d, p);
            let adm = file_priorities(&ts).counting_sections(&ts);
            let none = ts.tasks.iter().all(|t| t.sections.is_empty());
            prop_assert!(adm.counted() == Some(p) || none, "{:?}: {:?}", p, adm.counted());
            for h in HEURISTICS {
                let Ok(part) = by_name(h).unwrap().partition(&ts, &adm) else { continue };

                let ts = placed(&ts, &part.cpu_of_task);
                let v = per_cpu(&ts);
                prop_assert_eq!(v.schedulable, Some(true), "{:?} {}: {} on {:?}", p, h, v.detail, part.cpu_of_task);
                let (missed, beyond) = simulated(&ts, &v);
                prop_assert!(!missed && beyond.is_none(), "{:?} {}: missed {} {:?}\n{:?}", p, h, missed, beyond, ts);
            }
            // Partitioned EDF (msrp: Gai et al.; fmlp+: fmlp_edf.rs), FFD: `p-edf-exact` on the
            // final partition, and `pedf` neither misses nor spins beyond the terms.
            let adm = Admission::EdfExact.counting_sections(&ts);
            if p == Protocol::Mrsp || none {
                continue;
            }
            prop_assert_eq!(adm.counted(), Some(p));
            let Ok(part) = by_name("ffd").unwrap().partition(&ts, &adm) else { continue };
            let ts = placed(&ts, &part.cpu_of_task);
            let v = find(ENTRIES, "p-edf-exact").unwrap().run(&ts).unwrap();
            prop_assert_eq!(v.schedulable, Some(true), "{:?} edf: {}", p, v.detail);
            let (missed, beyond) = simulated_by(&ts, &v, "pedf");
            prop_assert!(!missed && beyond.is_none(), "{:?} pedf: missed {} {:?}\n{:?}", p, missed, beyond, ts);
        }
    }
}

/// A fixed family of heavier 2-CPU sets (a small linear congruential generator, seeded):
/// 3–5 tasks of utilisation .2–.5 and periods 10–25 ms, every task using G or H for 1–4 ms.
fn family(n: usize) -> Vec<Vec<Drawn>> {
    let mut x: u64 = 0x005e_ed56;
    let mut next = |k: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % k
    };
    (0..n)
        .map(|_| {
            (0..3 + next(3))
                .map(|_| {
                    let sec = Some((u32::from(next(3) == 0), next(2), 1 + next(4)));
                    (next(3) as usize, 2 + next(4), next(25), sec)
                })
                .collect()
        })
        .collect()
}

/// The control: FFD admitting by response time alone accepts sets whose partition fails the
/// per-CPU test with `msrp`'s terms (and some miss in simulation); counting the terms, FFD
/// accepts only sets that pass it and do not miss.
#[test]
fn ignoring_sections_accepts_what_fails() {
    let (mut naive, mut failed, mut missed) = (0, 0, 0);
    let (mut aware, mut aware_missed) = (0, 0);
    let ffd = by_name("ffd").unwrap();
    for d in family(60) {
        let ts = set(2, &d, Protocol::Msrp);
        if let Ok(part) = ffd.partition(&ts, &file_priorities(&ts)) {
            naive += 1;
            let ts = placed(&ts, &part.cpu_of_task);
            let v = per_cpu(&ts);
            failed += usize::from(v.schedulable != Some(true));
            missed += usize::from(simulated(&ts, &v).0);
        }
        let adm = file_priorities(&ts).counting_sections(&ts);
        if let Ok(part) = ffd.partition(&ts, &adm) {
            aware += 1;
            let ts = placed(&ts, &part.cpu_of_task);
            let v = per_cpu(&ts);
            assert_eq!(v.schedulable, Some(true), "{}", v.detail);
            aware_missed += usize::from(simulated(&ts, &v).0);
        }
    }
    eprintln!(
        "sections ignored: {naive}/60 accepted, {failed} fail the per-CPU test with msrp's terms, {missed} miss in simulation; counted: {aware} accepted, {aware_missed} miss"
    );
    assert!(failed > 0 && missed > 0, "the control is caught");
    assert_eq!(aware_missed, 0);
}

/// The examples of `partition/remote.rs` (T = D = 10 ms, `msrp`, the file's priorities) with no
/// `cpu`, under `pfp:partition=ffd`: a (C 5, R 2) and b (C 3, R 2) share CPU 0, c (C 4) runs on
/// CPU 1, nothing spins (R is local) and nothing misses; a (C 7), c (C 5), b (C 4, R 3) is
/// refused, naming b (t2) and msrp.
#[test]
fn a_partitioned_scheduler_places_by_the_same_admission() {
    // WCETs in ms (a, c, b) and b's section; priorities 1, 2, 3 in file order.
    let example = |wcet: [u64; 3], rb: u64| {
        let d: Vec<Drawn> = vec![
            (0, 1, 0, Some((0, 0, 1))),
            (0, 1, 1, None),
            (0, 1, 2, Some((0, 0, 1))),
        ];
        let mut ts = set(2, &d, Protocol::Msrp);
        for (i, t) in ts.tasks.iter_mut().enumerate() {
            t.wcet = wcet[i] * MS;
            t.priority = Some(i as u32 + 1);
        }
        ts.tasks[0].sections[0].length = 2 * MS;
        ts.tasks[2].sections[0].length = rb * MS;
        ts
    };
    let ts = example([5, 4, 3], 2);
    let r = simulate(&ts, Options::spec("pfp:partition=ffd").intervals(true))
        .unwrap()
        .result;
    let cpu_of = |task: u32| r.intervals.iter().find(|i| i.task == task).map(|i| i.cpu);
    assert_eq!(cpu_of(0), cpu_of(2), "R's users together");
    assert_ne!(cpu_of(0), cpu_of(1));
    assert!(r.jobs.iter().all(|j| !j.missed && j.spin == 0));
    let tight = example([7, 5, 4], 3);
    let Err(e) = simulate(&tight, Options::spec("pfp:partition=ffd")) else {
        panic!("refused");
    };
    let e = e.to_string();
    assert!(
        e.contains("task 't2'") && e.contains("counting msrp's terms"),
        "{e}"
    );
}
