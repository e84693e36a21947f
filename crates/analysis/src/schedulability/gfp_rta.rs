//! Global fixed priority on m identical CPUs: response-time analysis.
//!
//! Bertogna & Cirinei, "Response-Time Analysis for Globally Scheduled Symmetric Multiprocessor
//! Platforms" (RTSS 2007). In a window of length L, a task τ_i whose jobs finish within R_i
//! executes at most the *workload* (their workload bound, carry-in job included)
//!   W_i(L) = N_i(L)·C_i + min(C_i, L + R_i − C_i − N_i(L)·T_i),  N_i(L) = ⌊(L + R_i − C_i)/T_i⌋.
//! A job of τ_k is kept from running only while all m CPUs run higher-priority work, and a
//! task interferes with it at most x − C_k + 1 of a window x in which it has not finished
//! (discrete time, here integer ns), so its response time is bounded by the least fixed point
//!   R_k = C_k + ⌊(1/m)·Σ_{i ∈ hp(k)} min(W_i(R_k), R_k − C_k + 1)⌋,
//! found by iteration from C_k; the task is deemed schedulable when R_k ≤ D_k. The bounds are
//! computed in decreasing priority order, each higher-priority R_i already known.
//!
//! Limited carry-in: Guan, Stigge, Yi & Yu, "New Response Time Bounds for Fixed Priority
//! Multiprocessor Scheduling" (RTSS 2009). Taking the window to start at the latest instant
//! before the release of τ_k's job at which some CPU is not busy with higher-priority work, at
//! most m − 1 tasks have a job carried into it. A task without carry-in does at most
//!   W^NC_i(x) = ⌊x/T_i⌋·C_i + [x mod T_i]^{C_i},
//! one with carry-in at most
//!   W^CI_i(x) = ⌊[x − C_i]_0/T_i⌋·C_i + C_i + α,  α = [[x − C_i]_0 mod T_i − (T_i − R_i)]_0^{C_i − 1},
//! each capped at x − C_k + 1 (I^NC, I^CI). With Ω_k(x) = Σ_hp I^NC_i(x) + the m − 1 largest
//! I^CI_i(x) − I^NC_i(x), R_k is the least x = ⌊Ω_k(x)/m⌋ + C_k ([a]_0 = max(a, 0), [a]^b =
//! min(a, b)). It dominates Bertogna & Cirinei's bound.
//!
//! Both for constrained deadlines (D ≤ T) and sequential independent tasks, with priorities by
//! rate or deadline monotonic assignment (`crate::priority`: distinct, ties to the task first
//! in the file, as the `gfp:rm` and `gfp:dm` schedulers have them), or the task file's own
//! (`gfp:file`), which may tie. Tasks of equal priority count as interfering with each other,
//! as on one CPU (`uniprocessor.rs`), safe whatever the tie-break at run time (`gfp` breaks
//! ties by release): a group of equal priority is bounded together, each member's R_k from
//! the higher-priority bounds and its peers' current ones, from R = C up, until no bound moves
//! (a joint fixed point: were some job the first to exceed its bound, every job it met would
//! have kept to its own, and the fixed point says it could not be kept waiting that long). A
//! task below one whose bound exceeds its deadline gets no bound (the workload bound assumes
//! its higher-priority tasks meet R_i).
//!
//! Overhead-aware form (`WithOverheads::GlobalFp`): the rule of `crate::overheads` for global
//! EDF, each job charged for its own dispatches, with the preemptions a job of τ_k can suffer
//! counted for FP: only the arrival of a higher-priority job preempts it, within its response
//! time ≤ D'_k, so p_k = Σ_{i: π_i > π_k} ⌈D'_k/T_i⌉.
//!
//! Checked against the simulator (`tests/global_rta_vs_sim.rs`): a set either accepts never
//! misses under `gfp:rm` from a synchronous release at WCET, no bound is below the simulated
//! maximum response, and the analysis without its interference term (the negative control) is
//! caught by a set that misses.
//!
//! Registry entries (`registry.rs`): `gfp-rta-rm`, `gfp-rta-dm`, `gfp-rta-file` (Bertogna &
//! Cirinei), `gfp-rta-lc-rm`, `gfp-rta-lc-dm`, `gfp-rta-lc-file` (Guan et al.'s limited
//! carry-in); the `-file` forms for sets whose every task gives its `priority`.

use super::bounds::{self, Quantity};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::{Cdt, Verdict};
use rtsched_model::Time;

/// Several CPUs, independent sequential tasks, D ≤ T.
const GLOBAL_CONSTRAINED: Applies = Applies {
    cpus: Cpus::Several,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Constrained,
    sections: Sections::Blocking(super::omlp::TAKES),
    priorities: false,
    flow: Flow::Not,
};

/// The same, for sets whose every task gives its `priority`.
const WITH_PRIORITIES: Applies = Applies {
    priorities: true,
    ..GLOBAL_CONSTRAINED
};

const BC: &str = "Bertogna & Cirinei, RTSS 2007";
const GUAN: &str = "Guan, Stigge, Yi & Yu, RTSS 2009 (limited carry-in)";

pub const GFP_RTA_RM: Entry = Entry {
    name: "gfp-rta-rm",
    summary: "global fixed priority (RM), response-time analysis with carry-in workload",
    citation: BC,
    kind: Kind::Sufficient,
    applies: GLOBAL_CONSTRAINED,
    verdict: |s| {
        verdict(
            s,
            GFP_RTA_RM.name,
            Priorities::RateMonotonic,
            CarryIn::Every,
        )
    },
    overheads: WithOverheads::GlobalFp(Priorities::RateMonotonic),
};

pub const GFP_RTA_DM: Entry = Entry {
    name: "gfp-rta-dm",
    summary: "global fixed priority (DM), response-time analysis with carry-in workload",
    citation: BC,
    kind: Kind::Sufficient,
    applies: GLOBAL_CONSTRAINED,
    verdict: |s| {
        verdict(
            s,
            GFP_RTA_DM.name,
            Priorities::DeadlineMonotonic,
            CarryIn::Every,
        )
    },
    overheads: WithOverheads::GlobalFp(Priorities::DeadlineMonotonic),
};

pub const GFP_RTA_FILE: Entry = Entry {
    name: "gfp-rta-file",
    summary: "global fixed priority (the file's priorities), response-time analysis",
    citation: BC,
    kind: Kind::Sufficient,
    applies: WITH_PRIORITIES,
    verdict: |s| verdict(s, GFP_RTA_FILE.name, Priorities::File, CarryIn::Every),
    overheads: WithOverheads::GlobalFp(Priorities::File),
};

pub const GFP_RTA_LC_RM: Entry = Entry {
    name: "gfp-rta-lc-rm",
    summary: "global fixed priority (RM), response-time analysis, at most m−1 carry-in tasks",
    citation: GUAN,
    kind: Kind::Sufficient,
    applies: GLOBAL_CONSTRAINED,
    verdict: |s| {
        verdict(
            s,
            GFP_RTA_LC_RM.name,
            Priorities::RateMonotonic,
            CarryIn::Limited,
        )
    },
    overheads: WithOverheads::GlobalFp(Priorities::RateMonotonic),
};

pub const GFP_RTA_LC_DM: Entry = Entry {
    name: "gfp-rta-lc-dm",
    summary: "global fixed priority (DM), response-time analysis, at most m−1 carry-in tasks",
    citation: GUAN,
    kind: Kind::Sufficient,
    applies: GLOBAL_CONSTRAINED,
    verdict: |s| {
        verdict(
            s,
            GFP_RTA_LC_DM.name,
            Priorities::DeadlineMonotonic,
            CarryIn::Limited,
        )
    },
    overheads: WithOverheads::GlobalFp(Priorities::DeadlineMonotonic),
};

pub const GFP_RTA_LC_FILE: Entry = Entry {
    name: "gfp-rta-lc-file",
    summary: "global fixed priority (the file's priorities), RTA, at most m−1 carry-in tasks",
    citation: GUAN,
    kind: Kind::Sufficient,
    applies: WITH_PRIORITIES,
    verdict: |s| verdict(s, GFP_RTA_LC_FILE.name, Priorities::File, CarryIn::Limited),
    overheads: WithOverheads::GlobalFp(Priorities::File),
};

/// How many higher-priority tasks the window may find with a job carried in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CarryIn {
    /// Every one (Bertogna & Cirinei).
    Every,
    /// At most m − 1 (Guan et al.).
    Limited,
}

fn verdict(s: &Subject<'_>, name: &str, by: Priorities, carry: CarryIn) -> Verdict {
    let Some(prio) = s.priorities(by) else {
        return Verdict::new(name, None, "not every task gives a priority");
    };
    let r = response_times(s.cdt(), &prio, s.cpus(), carry);
    let tasks = bounds::of(s, Quantity::ResponseTime, &r);
    let ok = r.iter().all(Option::is_some);
    Verdict::new(name, ok.then_some(true), bounds::worst_in_words(&tasks)).with_tasks(tasks)
}

/// Bertogna & Cirinei's workload bound W_i(L) of a task (C, T) with response time `r`.
pub fn workload(x: &Cdt, r: Time, l: Time) -> u128 {
    let span = (l + r - x.c) as u128;
    let n = span / x.t as u128;
    n * x.c as u128 + (x.c as u128).min(span - n * x.t as u128)
}

/// Guan et al.'s W^NC_i(x): no job carried in.
pub fn workload_nc(i: &Cdt, x: Time) -> u128 {
    (x / i.t) as u128 * i.c as u128 + (x % i.t).min(i.c) as u128
}

/// Guan et al.'s W^CI_i(x): one job carried in, finishing within `r`.
pub fn workload_ci(i: &Cdt, r: Time, x: Time) -> u128 {
    let after = x.saturating_sub(i.c);
    let alpha = (after % i.t)
        .saturating_sub(i.t - r.min(i.t))
        .min(i.c.saturating_sub(1));
    (after / i.t) as u128 * i.c as u128 + i.c as u128 + alpha as u128
}

/// The interference on τ_k in a window of length `x` from the higher-priority tasks `hp`
/// (each with its response-time bound), before the division by m.
pub fn interference(k: &Cdt, hp: &[(Cdt, Time)], x: Time, m: u32, carry: CarryIn) -> u128 {
    let cap = (x - k.c + 1) as u128;
    match carry {
        CarryIn::Every => hp.iter().map(|(i, r)| workload(i, *r, x).min(cap)).sum(),
        CarryIn::Limited => {
            let nc: Vec<u128> = hp.iter().map(|(i, _)| workload_nc(i, x).min(cap)).collect();
            let mut diff: Vec<u128> = hp
                .iter()
                .zip(&nc)
                .map(|((i, r), nc)| workload_ci(i, *r, x).min(cap).saturating_sub(*nc))
                .collect();
            diff.sort_unstable_by(|a, b| b.cmp(a));
            nc.iter().sum::<u128>() + diff.iter().take(m as usize - 1).sum::<u128>()
        }
    }
}

/// Iterations of a fixed point before it is looked for by bisection.
pub const MAX_ITER: u32 = 1_000;

/// The least fixed point x = C_k + ⌊I(x)/m⌋ from x = C_k, or None once it passes D_k. The
/// iteration can crawl (in ns, by less than a ns per CPU while a few terms sit at their cap):
/// after [`MAX_ITER`] steps, a point y ≤ D_k with C_k + ⌊I(y)/m⌋ ≤ y is found by bisection.
/// Such a y bounds the response time as well (the job cannot be kept waiting through a window
/// whose interference is too small to fill it), if not always the least one; None when D_k is
/// not such a point.
pub fn fixed_point(k: &Cdt, m: u32, interference: impl Fn(Time) -> u128) -> Option<Time> {
    let f = |x: Time| k.c as u128 + interference(x) / m as u128;
    let mut x = k.c;
    for _ in 0..MAX_ITER {
        let next = f(x);
        if next > k.d as u128 {
            return None;
        }
        if next as Time == x {
            return Some(x);
        }
        x = next as Time;
    }
    if f(k.d) > k.d as u128 {
        return None;
    }
    let (mut lo, mut hi) = (x, k.d);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if f(mid) <= mid as u128 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Each task's response-time bound under global FP with priorities `prio` (larger is more
/// urgent; equal ones interfere with each other) on `m` CPUs; `None` past the deadline and for
/// every task below, or tied with, one so.
pub fn response_times(ts: &[Cdt], prio: &[u32], m: u32, carry: CarryIn) -> Vec<Option<Time>> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| prio[b].cmp(&prio[a]).then(a.cmp(&b)));
    let mut r: Vec<Option<Time>> = vec![None; ts.len()];
    let mut hp: Vec<(Cdt, Time)> = Vec::new();
    for group in order.chunk_by(|&a, &b| prio[a] == prio[b]) {
        let Some(rs) = group_bounds(ts, group, &hp, m, carry) else {
            break;
        };
        for (&k, &rk) in group.iter().zip(&rs) {
            r[k] = Some(rk);
            hp.push((ts[k], rk));
        }
    }
    r
}

/// Rounds of a group's joint fixed point before it is given up (inconclusive).
pub const MAX_ROUNDS: u32 = 1_000;

/// The bounds of the tasks `group`, of one priority, below the tasks `hp` (with their bounds):
/// each member's fixed point with `hp` and its peers at their current bounds, from R = C, round
/// after round until none moves; `None` once one passes its deadline, or after [`MAX_ROUNDS`].
fn group_bounds(
    ts: &[Cdt],
    group: &[usize],
    hp: &[(Cdt, Time)],
    m: u32,
    carry: CarryIn,
) -> Option<Vec<Time>> {
    joint_bounds(
        ts,
        group,
        hp,
        |k| k.c,
        |k, with| fixed_point(k, m, |x| interference(k, with, x, m, carry)),
    )
}

/// The joint fixed point of a group of one priority, whatever the task model (`gfp_dag.rs`
/// runs it on DAG tasks): each member's bound by `bound` with `hp` and its peers at their
/// current bounds, from `start`, round after round until none moves; `None` once a member
/// has no bound, or after [`MAX_ROUNDS`].
pub(super) fn joint_bounds<T: Copy>(
    ts: &[T],
    group: &[usize],
    hp: &[(T, Time)],
    start: impl Fn(&T) -> Time,
    mut bound: impl FnMut(&T, &[(T, Time)]) -> Option<Time>,
) -> Option<Vec<Time>> {
    let mut rs: Vec<Time> = group.iter().map(|&k| start(&ts[k])).collect();
    let mut with: Vec<(T, Time)> = Vec::with_capacity(hp.len() + group.len());
    for _ in 0..MAX_ROUNDS {
        let mut moved = false;
        for (j, &k) in group.iter().enumerate() {
            with.clear();
            with.extend_from_slice(hp);
            with.extend(
                group
                    .iter()
                    .zip(&rs)
                    .filter(|(&i, _)| i != k)
                    .map(|(&i, &ri)| (ts[i], ri)),
            );
            let rk = bound(&ts[k], &with)?;
            moved |= rk != rs[j];
            rs[j] = rk;
        }
        // A task alone at its priority has no peer to wait for.
        if !moved || group.len() == 1 {
            return Some(rs);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// Two CPUs, RM order (C, T): (2, 5), (2, 5), (4, 10), D = T. Simulated: τ0, τ1 run in
    /// [0, 2), τ2 in [2, 5), τ0, τ1 again in [5, 7), τ2 finishes at 8: R2 = 8, and both bounds
    /// are exact here. τ0 and τ1 have at most one higher-priority task: ⌊1/2⌋ = 0, R = 2.
    /// Bertogna & Cirinei for τ2, from x = 4 (span = x + R_i − C_i = x, cap = x − 3):
    ///   x = 4: W = 0 + min(2, 4) = 2 → cap 1, Σ 2 → x = 4 + 1 = 5;
    ///   x = 5: W = 2 + min(2, 0) = 2, Σ 4 → 6;  x = 6: W = 2 + 1 = 3, Σ 6 → 7;
    ///   x = 7: W = 2 + 2 = 4, Σ 8 → 8;          x = 8: W = 2 + min(2, 3) = 4 → 8: R = 8.
    /// Guan et al. (one carry-in task): x = 4: NC = min(2, cap 1) = 1, CI = 2 → 1: Ω 2 → 5;
    ///   x = 5: NC = 2 + 0, CI = 0 + 2 + [3 mod 5 − 3]_0 = 2: Ω 4 → 6; x = 6: NC = 2 + 1 = 3,
    ///   CI = 2 + [4 − 3] = 3: Ω 6 → 7; x = 7: NC 4, CI 2 + 2 + 0 = 4: Ω 8 → 8; x = 8: NC 4,
    ///   CI 4 → 8: R = 8.
    #[test]
    fn by_hand() {
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(4, 10, 10)];
        let prio = [3, 2, 1];
        for carry in [CarryIn::Every, CarryIn::Limited] {
            assert_eq!(
                response_times(&ts, &prio, 2, carry),
                vec![Some(2), Some(2), Some(8)],
                "{carry:?}"
            );
        }
        // τ2 with D = 7 < 8: no bound; a task below it gets none either.
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(4, 7, 10), cdt(1, 20, 20)];
        assert_eq!(
            response_times(&ts, &[4, 3, 2, 1], 2, CarryIn::Every),
            vec![Some(2), Some(2), None, None]
        );
    }

    /// Guan et al.'s bound never exceeds Bertogna & Cirinei's (each W^NC, W^CI ≤ W), and is
    /// strictly smaller on the second set at m = 2: the lowest task's R is 11 by Bertogna &
    /// Cirinei, 10 with one carry-in task.
    #[test]
    fn limited_carry_in_is_never_looser() {
        let sets = [
            vec![cdt(3, 6, 6), cdt(3, 6, 6), cdt(3, 6, 6), cdt(2, 12, 12)],
            vec![cdt(1, 3, 3), cdt(2, 5, 5), cdt(3, 9, 9), cdt(4, 20, 20)],
        ];
        for ts in sets {
            let prio: Vec<u32> = (0..ts.len() as u32).rev().collect();
            for m in 2..=3 {
                let bc = response_times(&ts, &prio, m, CarryIn::Every);
                let lc = response_times(&ts, &prio, m, CarryIn::Limited);
                if m == 2 && ts[0] == cdt(1, 3, 3) {
                    assert_eq!((bc[3], lc[3]), (Some(11), Some(10)));
                }
                for (a, b) in bc.iter().zip(&lc) {
                    if let Some(a) = a {
                        assert!(b.is_some_and(|b| b <= *a), "{ts:?} m={m}: {bc:?} {lc:?}");
                    }
                }
            }
        }
    }
    /// Ties, by hand: two CPUs, (C, D = T) a, b, c = (1, 4) at one priority, d = (2, 8) below.
    /// a first, its peers at R = C = 1 (W(x) = min(1, x), cap x): x = 1: Σ 2 → 2; x = 2: Σ 2
    /// → 2: R_a = 2. b with a at 2 (span x + 1) and c at 1: x = 1 → 2, x = 2 → 2; c the same;
    /// a second round moves none: (2, 2, 2). d, its three at R = 2 (span x + 1, cap x − 1):
    /// x = 2: Σ 3 → 2 + 1 = 3; x = 3: W = 1 + min(1, 0) = 1 each → 3: R_d = 3. Simulated
    /// (synchronous): a, b in [0, 1), c and d from 1, d to 3 — both bounds of d attained.
    /// With the ties broken by file order (priorities 7, 6, 5, 1) a and b would get R = 1: a
    /// bound that holds only for that tie-break, where a real SCHED_FIFO queue may put a last.
    #[test]
    fn equal_priorities_interfere() {
        let ts = [cdt(1, 4, 4), cdt(1, 4, 4), cdt(1, 4, 4), cdt(2, 8, 8)];
        for carry in [CarryIn::Every, CarryIn::Limited] {
            let tied = response_times(&ts, &[5, 5, 5, 1], 2, carry);
            assert_eq!(tied, vec![Some(2), Some(2), Some(2), Some(3)], "{carry:?}");
            let ordered = response_times(&ts, &[7, 6, 5, 1], 2, carry);
            assert_eq!(
                ordered,
                vec![Some(1), Some(1), Some(2), Some(3)],
                "{carry:?}"
            );
        }
        // A tie the group cannot bound within D leaves it and every task below unbounded: three
        // (2, 5) tasks at one priority on two CPUs (c's R passes 5 with a and b at R = 4).
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(2, 5, 5), cdt(1, 10, 10)];
        assert_eq!(
            response_times(&ts, &[3, 3, 3, 1], 2, CarryIn::Every),
            vec![None; 4]
        );
    }

    /// The `-file` entries read the file's priorities, by task name, and are for sets whose
    /// every task gives one: `analyze` leaves them out otherwise.
    #[test]
    fn file_priorities_through_the_registry() {
        use crate::schedulability::{analyze, registry::find, ENTRIES};
        use rtsched_model::{Task, TaskSet};
        let mut ts = TaskSet::new(
            2,
            ["a", "b", "c", "d"]
                .iter()
                .zip([(4, 1), (4, 1), (4, 1), (8, 2)])
                .map(|(n, (t, c))| Task::periodic(*n, t, c))
                .collect(),
        );
        assert!(analyze(&ts).iter().all(|v| !v.test.contains("file")));
        for (t, p) in ts.tasks.iter_mut().zip([5, 5, 5, 1]) {
            t.priority = Some(p);
        }
        for name in ["gfp-rta-file", "gfp-rta-lc-file"] {
            let v = find(ENTRIES, name).unwrap().run(&ts).unwrap();
            assert_eq!(v.schedulable, Some(true), "{name}");
            let bounds: Vec<(&str, Option<Time>)> =
                v.tasks.iter().map(|b| (b.name.as_str(), b.bound)).collect();
            assert_eq!(
                bounds,
                vec![
                    ("a", Some(2)),
                    ("b", Some(2)),
                    ("c", Some(2)),
                    ("d", Some(3))
                ]
            );
        }
    }
}
