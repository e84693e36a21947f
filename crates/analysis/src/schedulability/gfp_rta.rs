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
//! in the file, as the `gfp:rm` and `gfp:dm` schedulers have them). A task below one whose
//! bound exceeds its deadline gets no bound (the workload bound assumes its higher-priority
//! tasks meet R_i). No overhead-aware form: the inflation of `crate::overheads` is argued for
//! EDF's preemptions, not FP's.
//!
//! Checked against the simulator (`tests/global_rta_vs_sim.rs`): a set either accepts never
//! misses under `gfp:rm` from a synchronous release at WCET, no bound is below the simulated
//! maximum response, and the analysis without its interference term (the negative control) is
//! caught by a set that misses.
//!
//! Registry entries (`registry.rs`): `gfp-rta-rm`, `gfp-rta-dm` (Bertogna & Cirinei),
//! `gfp-rta-lc-rm`, `gfp-rta-lc-dm` (Guan et al.'s limited carry-in).

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
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Not,
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
    overheads: WithOverheads::Not,
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
    overheads: WithOverheads::Not,
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
    overheads: WithOverheads::Not,
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
    overheads: WithOverheads::Not,
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
/// urgent, distinct) on `m` CPUs; `None` past the deadline and for every task below one so.
pub fn response_times(ts: &[Cdt], prio: &[u32], m: u32, carry: CarryIn) -> Vec<Option<Time>> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| prio[b].cmp(&prio[a]).then(a.cmp(&b)));
    let mut r: Vec<Option<Time>> = vec![None; ts.len()];
    let mut hp: Vec<(Cdt, Time)> = Vec::new();
    for k in order {
        let Some(rk) = fixed_point(&ts[k], m, |x| interference(&ts[k], &hp, x, m, carry)) else {
            break;
        };
        r[k] = Some(rk);
        hp.push((ts[k], rk));
    }
    r
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
}
