//! The FMLP+ bound under partitioned EDF (schedulability/fmlp_edf.rs; docs/locking.md
//! "fmlp+ under partitioned EDF") against the simulator's `fmlp+` under `pedf`
//! (crates/runtime/src/ledger/locking/fmlp.rs).
//!
//! - A 2-CPU example, its terms and bounds worked by hand, beside the simulated responses.
//! - Random 2- and 3-CPU partitioned sets (D ≤ T, at most one section per task on a global
//!   or a local resource, random offsets): no simulated response exceeds its `p-edf-exact`
//!   bound, and an accepted set never misses.
//! - Controls, on a fixed family of 3-CPU sets released close together: the bounds with the
//!   remote term dropped (the plain WCETs), and with the boost term dropped, each fall below
//!   some simulated response.

use proptest::prelude::*;
use rtsched_analysis::schedulability::fmlp_edf;
use rtsched_analysis::schedulability::registry::{find, Test};
use rtsched_analysis::schedulability::ENTRIES;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const MS: Time = 1_000_000;
const PERIODS: [u64; 5] = [10, 20, 25, 40, 50];

fn test(name: &str) -> Test {
    find(ENTRIES, name).unwrap()
}

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "fmlp-edf.yaml").unwrap()
}

/// Each task's maximum response (0: no job finished) and whether some job missed.
fn responses(r: &RunResult, n: usize) -> (Vec<Time>, bool) {
    let mut max = vec![0; n];
    for j in &r.jobs {
        if let Some(f) = j.finish {
            max[j.task as usize] = max[j.task as usize].max(f - j.release);
        }
    }
    let missed = r
        .jobs
        .iter()
        .any(|j| j.missed || j.finish.is_some_and(|f| f > j.deadline));
    (max, missed)
}

/// The 2-CPU example of docs/locking.md ("fmlp+ under partitioned EDF"), ms. CPU 0: a (D 20,
/// C 6, R 0–4). CPU 1: l (D 20, C 5), b (at 1, D 15, C 4, R 0–2), h (at 5, D 4, C 2).
/// Simulated: b requests R at 1 while a holds it and suspends 1–4 (l runs), holds R boosted
/// 4–6; h, released at 5 with the earliest deadline (9), waits for b's boost 5–6 and runs
/// 6–8; b 8–10, l 10–11. Responses a 6, l 11, b 9, h 3.
/// By hand:
/// - remote: a's request waits for CPU 1's longest sections, b's 2: remote_a = 2; b's for
///   a's 4: remote_b = 4. C' = a 8, l 5, b 8, h 2.
/// - boost: B_i = the other tasks' sections on the CPU: B_l = B_h = 2 (b's), B_b = 0, B_a = 0.
/// - Spuri's bounds on CPU 1: h: at a = 0, w = 2 + 2 = 4 (no other deadline ≤ 4): R_h = 4. b:
///   a = 0, w = 8 + h's 2 = 10; a = 5 (l's deadline 20 = a + 15), w = 8 + 2 + 5 = 15, 15 − 5:
///   R_b = 10. l: w = 2 + 5 + 2 + 8 = 17: R_l = 17. CPU 0: R_a = 8.
/// - Demand on CPU 1: L = 4: 2 + B_h 2 = 4; L = 15: 10 + 2; L = 20: 15 + 2 ≤ 20: accepted.
/// - Controls: without the boost term R_h = 2 < 3; without the remote term R_b = 4 + 2 = 6
///   at a = 0 and 4 + 2 + 5 − 5 at a = 5: 6 < 9.
#[test]
fn the_pair_by_hand() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 40, locking: fmlp+}\nresources: [R]\ntasks:\n  - {name: a, period: 100, deadline: 20, wcet: 6, cpu: 0, sections: [{resource: R, start: 0, length: 4}]}\n  - {name: l, period: 100, deadline: 20, wcet: 5, cpu: 1}\n  - {name: b, period: 100, offset: 1, deadline: 15, wcet: 4, cpu: 1, sections: [{resource: R, start: 0, length: 2}]}\n  - {name: h, period: 100, offset: 5, deadline: 4, wcet: 2, cpu: 1}\n");
    let v = test("p-edf-exact").run(&t).unwrap();
    assert_eq!(v.schedulable, Some(true), "{}", v.detail);
    let mut rows: Vec<(usize, Option<Time>, Option<Time>)> = v
        .tasks
        .iter()
        .map(|b| (b.task, b.bound, b.blocking))
        .collect();
    rows.sort_unstable();
    let ms = |x: u64| Some(x * MS);
    // Blocking: remote + boost.
    assert_eq!(
        rows,
        vec![
            (0, ms(8), ms(2)),
            (1, ms(17), ms(2)),
            (2, ms(10), ms(4)),
            (3, ms(4), ms(2)),
        ]
    );
    let r = simulate(&t, Options::spec("pedf")).unwrap().result;
    let (max, missed) = responses(&r, 4);
    assert_eq!(max, vec![6 * MS, 11 * MS, 9 * MS, 3 * MS]);
    assert!(!missed);
    let cpu1 = [1, 2, 3];
    let r = |remote, boost| fmlp_edf::response_times(&t, &cpu1, remote, boost);
    assert_eq!(r(true, false)[2], ms(2), "h without the boost term");
    assert_eq!(r(false, true)[1], ms(6), "b without the remote term");
    // One CPU, every resource local: no remote term; the boost term stays.
    let one = ts("platform: {cpus: 1}\nrun: {locking: fmlp+}\nresources: [R]\ntasks:\n  - {name: l, period: 100, deadline: 20, wcet: 5, sections: [{resource: R, start: 0, length: 3}]}\n  - {name: h, period: 100, deadline: 6, wcet: 2, sections: [{resource: R, start: 0, length: 1}]}\n");
    let v = test("edf-exact").run(&one).unwrap();
    let b: Vec<Option<Time>> = v.tasks.iter().map(|x| x.blocking).collect();
    assert_eq!(b, vec![ms(1), ms(3)], "{}", v.detail);
    assert_eq!(
        v.tasks[1].bound,
        ms(2 + 3),
        "h: C 2 + l's section, boosted ahead of it"
    );
    // D > T: the one-job-per-task count does not hold; the test says so.
    let mut long = one.clone();
    long.tasks[0].deadline = 150 * MS;
    let v = test("edf-exact").run(&long).unwrap();
    assert!(
        v.schedulable.is_none() && v.detail.contains("D > T"),
        "{}",
        v.detail
    );
}

/// A drawn task: CPU, period (index into PERIODS), WCET ms, offset ms, deadline (tenths of
/// the period, at least the WCET), and its section (on G, shared by every CPU, else on its
/// CPU's own L; start ms, length ms).
type Drawn = (u32, usize, u64, u64, u64, Option<(bool, u64, u64)>);

/// The drawn set on `m` CPUs under `fmlp+`, every task's `cpu` given.
fn set(m: u32, drawn: &[Drawn]) -> TaskSet {
    let mut y = format!("platform: {{cpus: {m}}}\nrun: {{duration: 200, locking: fmlp+}}\nresources: [G, L0, L1, L2]\ntasks:\n");
    for (i, &(cpu, p, c, at, d, s)) in drawn.iter().enumerate() {
        let (cpu, period) = (cpu % m, PERIODS[p]);
        let c = c.min(period / 2).max(1);
        let d = (period * d / 10).clamp(c, period);
        let sec = match s {
            Some((g, a, l)) => {
                let a = a.min(c - 1);
                let res = if g {
                    "G".to_string()
                } else {
                    format!("L{cpu}")
                };
                format!(
                    ", sections: [{{resource: {res}, start: {a}, length: {}}}]",
                    l.clamp(1, c - a)
                )
            }
            None => String::new(),
        };
        y.push_str(&format!(
            "  - {{name: t{i}, period: {period}, deadline: {d}, offset: {at}, wcet: {c}, cpu: {cpu}{sec}}}\n"
        ));
    }
    ts(&y)
}

/// Every simulated response within its bound; an accepted set never misses. The simulated
/// maxima, and whether the set was accepted.
fn holds(t: &TaskSet) -> Result<(Vec<Time>, bool), String> {
    let v = test("p-edf-exact").run(t).map_err(|e| e.to_string())?;
    let r = simulate(t, Options::spec("pedf")).unwrap().result;
    let (max, missed) = responses(&r, t.tasks.len());
    for b in &v.tasks {
        if b.bound.is_some_and(|x| x < max[b.task]) {
            return Err(format!(
                "'{}': bound {:?} < simulated {}",
                b.name, b.bound, max[b.task]
            ));
        }
    }
    if v.schedulable == Some(true) && missed {
        return Err(format!("accepted, and a job missed ({})", v.detail));
    }
    Ok((max, v.schedulable == Some(true)))
}

fn drawn() -> impl Strategy<Value = Vec<Drawn>> {
    prop::collection::vec(
        (
            0u32..3,
            0usize..5,
            1u64..6,
            0u64..30,
            4u64..11,
            prop::option::of((any::<bool>(), 0u64..4, 1u64..5)),
        ),
        3..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn fmlp_edf_bounds_hold_in_simulation(m in 2u32..4, d in drawn()) {
        let t = set(m, &d);
        holds(&t).map_err(|e| TestCaseError::fail(format!("{e}\n{t:?}")))?;
    }
}

/// The controls: per CPU, Spuri's bounds with the remote term dropped (plain WCETs), and with
/// the boost term dropped, each fall below some simulated response on a fixed family of 3-CPU
/// sets released within 3 ms of each other (on which the real bounds hold).
#[test]
fn fmlp_edf_controls_are_caught() {
    let (mut no_remote, mut no_boost, mut accepted) = (0, 0, 0);
    for k in 0..80u64 {
        // A small deterministic generator (xorshift), so that the family is fixed.
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (k + 1);
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let d: Vec<Drawn> = (0..6)
            .map(|i| {
                let s = (next(4) > 0).then(|| (i % 2 == 0 || next(2) == 0, next(3), 1 + next(4)));
                let dl = 4 + next(7);
                (i as u32, next(5) as usize, 1 + next(5), next(3), dl, s)
            })
            .collect();
        let t = set(3, &d);
        let (max, ok) = holds(&t).unwrap();
        accepted += ok as u32;
        for cpu in 0..3 {
            let idx: Vec<usize> = (0..t.tasks.len())
                .filter(|&i| t.tasks[i].cpu == Some(cpu))
                .collect();
            let below = |remote, boost| {
                fmlp_edf::response_times(&t, &idx, remote, boost)
                    .iter()
                    .zip(&idx)
                    .any(|(r, &i)| r.is_some_and(|r| r < max[i]))
            };
            no_remote += below(false, true) as u32;
            no_boost += below(true, false) as u32;
        }
    }
    eprintln!("{accepted} of 80 sets accepted; controls caught: remote term dropped on {no_remote} CPUs, boost term dropped on {no_boost}");
    assert!(no_remote > 0 && no_boost > 0);
}
