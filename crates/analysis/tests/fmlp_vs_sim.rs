//! The FMLP+ bound under partitioned fixed priority (schedulability/fmlp.rs; docs/locking.md
//! "Suspending: fmlp+") against the simulator (crates/runtime/src/ledger/locking/fmlp.rs).
//!
//! - The 2-CPU example of docs/locking.md, its terms worked by hand.
//! - Random 2- and 3-CPU partitioned sets (rate-monotonic priorities in the file, D = T, at
//!   most one section per task on a global or a local resource, random offsets): no
//!   simulated response exceeds its `p-fp-rta-file` bound, and an accepted set never misses.
//! - Controls, on a fixed family of 3-CPU sets released close together: the bounds with
//!   B_i dropped, and with the local (boost) term dropped, each fall below some simulated
//!   response.

use proptest::prelude::*;
use rtsched_analysis::schedulability::fmlp;
use rtsched_analysis::schedulability::registry::{find, Test};
use rtsched_analysis::schedulability::{Verdict, ENTRIES};
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const MS: Time = 1_000_000;
const PERIODS: [u64; 5] = [10, 20, 25, 40, 50];

fn test(name: &str) -> Test {
    find(ENTRIES, name).unwrap()
}

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "fmlp.yaml").unwrap()
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

/// The 2-CPU example (crates/sim/tests/fmlp.rs, docs/locking.md), deadlines 20 ms, by hand:
/// - a (CPU 0, the only task there): R's other user b is on CPU 1 alone, so a request of a
///   waits at most b's section, 2 ms: B_a = 2 (no lower task), R_a = 6 + 2 = 8.
/// - b (CPU 1, priority 2): its request waits at most a's 4 ms (remote); l (lower, no
///   section) adds nothing: B_b = 4; h interferes once: R_b = 4 + 4 + 2 = 10 (simulated 9).
/// - h (priority 3): no section, so it never suspends (S_h = 0); the lower b can be boosted
///   once, with its 2 ms section: B_h = 2, R_h = 2 + 2 = 4 (simulated 3).
/// - l (priority 1): B_l = 0; b can suspend, so it interferes with jitter R_b − C_b = 6:
///   R_l = 5 + ⌈(R + 6)/100⌉·4 + 2 = 11 (simulated 11: attained).
#[test]
fn the_pair_by_hand() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 40, locking: fmlp+}\nresources: [R]\ntasks:\n  - {name: a, period: 100, deadline: 20, wcet: 6, priority: 2, cpu: 0, sections: [{resource: R, start: 0, length: 4}]}\n  - {name: l, period: 100, deadline: 20, wcet: 5, priority: 1, cpu: 1}\n  - {name: b, period: 100, offset: 1, deadline: 20, wcet: 4, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 2}]}\n  - {name: h, period: 100, offset: 5, deadline: 20, wcet: 2, priority: 3, cpu: 1}\n");
    let v = test("p-fp-rta-file").run(&t).unwrap();
    assert_eq!(v.schedulable, Some(true), "{}", v.detail);
    let mut rows: Vec<(usize, Option<Time>, Option<Time>)> = v
        .tasks
        .iter()
        .map(|b| (b.task, b.bound, b.blocking))
        .collect();
    rows.sort_unstable();
    let ms = |x: u64| Some(x * MS);
    assert_eq!(
        rows,
        vec![
            (0, ms(8), ms(2)),
            (1, ms(11), ms(0)),
            (2, ms(10), ms(4)),
            (3, ms(4), ms(2)),
        ]
    );
    let r = simulate(&t, Options::spec("pfp")).unwrap().result;
    let (max, missed) = responses(&r, 4);
    assert_eq!(max, vec![6 * MS, 11 * MS, 9 * MS, 3 * MS]);
    assert!(!missed);
}

/// A drawn task: CPU, period (index into PERIODS), WCET ms, offset ms, and its section (on
/// G, shared by every CPU, else on its CPU's own L; start ms, length ms).
type Drawn = (u32, usize, u64, u64, Option<(bool, u64, u64)>);

/// The drawn set on `m` CPUs under `fmlp+`, `pfp` with rate-monotonic priorities in the file.
fn set(m: u32, drawn: &[Drawn]) -> TaskSet {
    let mut y = format!("platform: {{cpus: {m}}}\nrun: {{duration: 200, locking: fmlp+}}\nresources: [G, L0, L1, L2]\ntasks:\n");
    for (i, &(cpu, p, c, at, s)) in drawn.iter().enumerate() {
        let (cpu, period) = (cpu % m, PERIODS[p]);
        let c = c.min(period / 2).max(1);
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
        // Rate monotonic, ties by index: a shorter period is a higher priority.
        let prio = 1000 - period * 10 + (drawn.len() - i) as u64;
        y.push_str(&format!(
            "  - {{name: t{i}, period: {period}, offset: {at}, wcet: {c}, priority: {prio}, cpu: {cpu}{sec}}}\n"
        ));
    }
    ts(&y)
}

/// Every simulated response within its bound; an accepted set never misses.
fn holds(t: &TaskSet) -> Result<(Verdict, RunResult), String> {
    let v = test("p-fp-rta-file").run(t).map_err(|e| e.to_string())?;
    let r = simulate(t, Options::spec("pfp")).unwrap().result;
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
        return Err("accepted, and a job missed".into());
    }
    Ok((v, r))
}

fn drawn() -> impl Strategy<Value = Vec<Drawn>> {
    prop::collection::vec(
        (
            0u32..3,
            0usize..5,
            1u64..6,
            0u64..30,
            prop::option::of((any::<bool>(), 0u64..4, 1u64..5)),
        ),
        3..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn fmlp_bounds_hold_in_simulation(m in 2u32..4, d in drawn()) {
        let t = set(m, &d);
        holds(&t).map_err(|e| TestCaseError::fail(format!("{e}\n{t:?}")))?;
    }
}

/// The controls: per CPU, the suspension-aware recurrence with B_i = 0, and with the local
/// (boost) term left out, each fall below some simulated response on a fixed family of 3-CPU
/// sets released within 3 ms of each other (on which the real bounds hold).
#[test]
fn fmlp_controls_are_caught() {
    let (mut no_b, mut no_boost) = (0, 0);
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
                (i as u32, next(5) as usize, 1 + next(5), next(3), s)
            })
            .collect();
        let t = set(3, &d);
        let (_, r) = holds(&t).unwrap();
        let (max, _) = responses(&r, t.tasks.len());
        let prio: Vec<u32> = t.tasks.iter().map(|x| x.priority.unwrap()).collect();
        for cpu in 0..3 {
            let idx: Vec<usize> = (0..t.tasks.len())
                .filter(|&i| t.tasks[i].cpu == Some(cpu))
                .collect();
            let p: Vec<u32> = idx.iter().map(|&i| prio[i]).collect();
            let below = |b: &[Time]| {
                fmlp::response_times(&t, &idx, &p, b)
                    .iter()
                    .zip(&idx)
                    .any(|(r, &i)| r.is_some_and(|r| r < max[i]))
            };
            if below(&vec![0; idx.len()]) {
                no_b += 1;
            }
            let remote: Vec<Time> = fmlp::terms(&t, &idx, &p, false)
                .iter()
                .map(|x| x.0)
                .collect();
            if below(&remote) {
                no_boost += 1;
            }
        }
    }
    eprintln!("controls caught: B dropped on {no_b} CPUs, boost term dropped on {no_boost}");
    assert!(no_b > 0 && no_boost > 0);
}
