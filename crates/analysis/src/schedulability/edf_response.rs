//! Per-task response-time bounds of uniprocessor EDF: the rows of `edf-exact` (one CPU), of
//! `p-edf-exact` (each CPU of a partitioned set) and so of every partitioning attempt admitted
//! by it (`partitioned.rs`).
//!
//! Spuri's response-time analysis of EDF (M. Spuri, *Analysis of deadline scheduled real-time
//! systems*, INRIA RR-2772, 1996, §4–5) without release jitter: the job of τ_i released at a in
//! the deadline-(a + D_i) busy period finishes by the least fixed point w(a) of the work of the
//! jobs with deadlines ≤ a + D_i released before w, and R_i = max_a (w(a) − a) over the a where
//! w steps, within the longest busy period. It is `holistic_edf.rs`'s window with every jitter 0
//! (the same code, not written again: periodic and sporadic tasks have none to propagate).
//! Deadline ties are counted against the task under analysis, so the bound holds whatever the
//! tie-break.
//!
//! The processor demand test decides the set; these bounds say how close each task comes. A
//! task whose bound is past its deadline gets `None` ("not bounded within the deadline"), as
//! the other response-time analyses' rows. `edf-exact` accepts a set iff every row is bounded
//! within its deadline (Spuri's analysis is exact for sporadic tasks; checked by
//! `tests/per_task_rows.rs`, which also sets each bound beside the simulated maximum response
//! under `pedf`, with a control). A set with critical sections keeps `edf-exact`'s own rows
//! (the blocking term under `srp` and `msrp`): the bound here charges no blocking.
//!
//! [`response_times_blocked`] is Spuri's analysis with a blocking term B_i (the form his report
//! gives with shared resources): each job of the busy period may also wait B_i for work of later
//! deadline, w(a) = B_i + (⌊a/T_i⌋ + 1)·C_i + Σ_{j ≠ i, D_j ≤ a + D_i} min(⌈w/T_j⌉,
//! ⌊(a + D_i − D_j)/T_j⌋ + 1)·C_j, written out here (the holistic window has no blocking);
//! the FMLP+ under EDF uses it for its rows (`fmlp_edf.rs`).

use super::bounds::{self, Quantity};
use super::holistic::Node;
use super::holistic_edf;
use super::registry::Subject;
use super::{Cdt, Verdict};
use rtsched_model::Time;

/// Each task's EDF response-time bound on one CPU (all of `ts` on it), or all `None` when the
/// busy period does not close (U > 1) or the analysis gives up (too many points).
pub fn response_times(ts: &[Cdt]) -> Vec<Option<Time>> {
    let nodes: Vec<Node> = ts
        .iter()
        .map(|x| Node {
            c: x.c,
            c_best: x.c,
            s: 0,
            s_lo: 0,
            t: x.t,
            d: x.d,
            prio: 0,
            cpu: 0,
            triggers: Vec::new(),
            joined: Vec::new(),
        })
        .collect();
    match holistic_edf::analyse(&nodes) {
        Ok(r) => r.own.into_iter().map(Some).collect(),
        Err(_) => vec![None; ts.len()],
    }
}

/// h(t): execution demand of jobs with release and deadline in [0, t], synchronous release
/// (the processor demand of `uniprocessor.rs`'s tests, here so that the protocols' EDF tests,
/// `fmlp_edf.rs`, and the tests that call them do not import each other).
pub fn demand(ts: &[Cdt], t: Time) -> u128 {
    ts.iter()
        .filter(|x| x.d <= t)
        .map(|x| ((t - x.d) / x.t + 1) as u128 * x.c as u128)
        .sum()
}

/// Points (values of a) and fixed-point steps tried at most per task; beyond, no bound.
const MAX_POINTS: usize = 100_000;

/// Spuri's bound of each task with blocking `b` (per task), `None` past its deadline, when the
/// busy period does not close, or past [`MAX_POINTS`]. Deadline ties count against τ_i.
pub fn response_times_blocked(ts: &[Cdt], b: &[Time]) -> Vec<Option<Time>> {
    (0..ts.len()).map(|i| spuri_blocked(ts, i, b[i])).collect()
}

/// The least fixed point of `f` from `start`, `None` past `limit` or [`MAX_POINTS`] steps.
fn least_fixed_point(start: u128, limit: u128, f: impl Fn(u128) -> u128) -> Option<u128> {
    let mut w = start;
    for _ in 0..MAX_POINTS {
        let next = f(w);
        if next > limit {
            return None;
        }
        if next == w {
            return Some(w);
        }
        w = next;
    }
    None
}

/// [`response_times_blocked`] for task `i` with blocking `b`.
fn spuri_blocked(ts: &[Cdt], i: usize, b: Time) -> Option<Time> {
    let me = ts[i];
    let (b, d_i) = (b as u128, me.d as u128);
    // The busy period with blocking, L = B + Σ ⌈L/T_j⌉·C_j, bounded far above any deadline.
    let limit = ts.iter().map(|x| x.t.max(x.d) as u128).max()? * MAX_POINTS as u128;
    let sum_c: u128 = ts.iter().map(|x| x.c as u128).sum();
    let busy = least_fixed_point(b + sum_c, limit, |w| {
        b + ts
            .iter()
            .map(|x| w.div_ceil(x.t as u128) * x.c as u128)
            .sum::<u128>()
    })?;
    // a: τ_i's releases, and where another task's deadline falls on a + D_i.
    let mut points: Vec<u128> = Vec::new();
    for (j, x) in ts.iter().enumerate() {
        let (t, mut a) = match j == i {
            true => (me.t as u128, 0),
            false => {
                let (t, d) = (x.t as u128, x.d as u128);
                (t, d_i.saturating_sub(d).div_ceil(t) * t + d - d_i)
            }
        };
        while a < busy {
            points.push(a);
            if points.len() > MAX_POINTS {
                return None;
            }
            a += t;
        }
    }
    points.sort_unstable();
    points.dedup();
    let mut worst = me.c as u128 + b;
    for a in points {
        let own = b + (a / me.t as u128 + 1) * me.c as u128;
        let w = least_fixed_point(own, limit, |w| {
            own + ts
                .iter()
                .enumerate()
                .filter(|&(j, x)| j != i && x.d as u128 <= a + d_i)
                .map(|(_, x)| {
                    let by_deadline = (a + d_i - x.d as u128) / x.t as u128 + 1;
                    w.div_ceil(x.t as u128).min(by_deadline) * x.c as u128
                })
                .sum::<u128>()
        })?;
        worst = worst.max(w.saturating_sub(a));
    }
    (worst <= d_i).then_some(worst as Time)
}

/// `v` (`edf-exact`'s verdict on `s`, one CPU) with each task's response-time bound as its row,
/// `None` past its deadline; unchanged when `v` has rows already or `s` has critical sections.
pub fn with_bounds(v: Verdict, s: &Subject<'_>) -> Verdict {
    if !v.tasks.is_empty() || s.set().tasks.iter().any(|t| !t.sections.is_empty()) {
        return v;
    }
    let r: Vec<Option<Time>> = response_times(s.cdt())
        .into_iter()
        .zip(s.cdt())
        .map(|(r, x)| r.filter(|&r| r <= x.d))
        .collect();
    v.with_tasks(bounds::of(s, Quantity::ResponseTime, &r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// x (C 1, D 4, T 4), y (C 3, D 12, T 12), z (C 2, D 3, T 6), as `holistic_edf`'s
    /// deadlines_and_jitter_by_hand: R_y = 10 and R_z = 2 there. x: L = 10; at a = 0
    /// (deadline 4) z's jobs by deadline ⌊(0 + 4 − 3)/6⌋ + 1 = 1, y's ⌊(4 − 12)/12⌋ + 1 = 0:
    /// w = 1 + 2 = 3 → 3; a = 4 (x's step, deadline 8): own ⌊4/4⌋ + 1 = 2 jobs, z by deadline
    /// ⌊(4 + 4 − 3)/6⌋ + 1 = 1: w = 2 + 2 = 4 → ⌈4/6⌉ = 1: 4, w − a = 0; a = 5 (z's step
    /// k·6 + 3 − 4 = 5, deadline 9): x ⌊5/4⌋ + 1 = 2, z ⌊(5 + 4 − 3)/6⌋ + 1 = 2, released before
    /// w = 2 + 2 = 4: ⌈4/6⌉ = 1: w = 4, w − a < 0; a = 8 (deadline 12): y counts, ⌊0/12⌋ + 1 =
    /// 1: own 3, w = 3 + 3 + min(⌈w/6⌉, 2)·2 → 3 + 3 + 2 = 8 → 3 + 3 + 4 = 10 → 10: w − a = 2.
    /// R_x = 3.
    #[test]
    fn spuri_by_hand() {
        let ts = [cdt(1, 4, 4), cdt(3, 12, 12), cdt(2, 3, 6)];
        assert_eq!(response_times(&ts), vec![Some(3), Some(10), Some(2)]);
        // Over capacity: the busy period does not close, nothing is bounded.
        let over = [cdt(3, 4, 4), cdt(2, 4, 4)];
        assert_eq!(response_times(&over), vec![None, None]);
    }

    /// With blocking (Spuri §5), the same set: B = 0 gives the bounds above; B_x = 1: at a = 0
    /// w = 1 + 1 + z's 2 = 4; a = 4: 1 + 2 + 2 = 5, 1; a = 5: 1 + 2 + 2 = 5, 0; a = 8 (y's
    /// deadline 12 = a + 4): 1 + 3 + 2·2 + 3 = 11, 3. The busy period 1 + 1·3 + 3 + 2·2 = 11
    /// ends there: R_x = 4. B_z = 2: z alone by its deadline at a = 0, 2 + 2 = 4 > D_z = 3:
    /// not bounded.
    #[test]
    fn spuri_with_blocking_by_hand() {
        let ts = [cdt(1, 4, 4), cdt(3, 12, 12), cdt(2, 3, 6)];
        assert_eq!(response_times_blocked(&ts, &[0, 0, 0]), response_times(&ts));
        assert_eq!(response_times_blocked(&ts, &[1, 0, 0])[0], Some(4));
        assert_eq!(response_times_blocked(&ts, &[0, 0, 2])[2], None);
        assert_eq!(response_times_blocked(&ts, &[0, 0, 1])[2], Some(3));
    }

    /// Without blocking the written-out window agrees with the holistic one (Spuri's either
    /// way) on 200 small sets of a fixed family, bounded or not.
    #[test]
    fn spuri_without_blocking_is_the_holistic_window() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let ts: Vec<Cdt> = (0..2 + next(3))
                .map(|_| {
                    let t = 4 + next(20);
                    let c = 1 + next(t / 3);
                    cdt(c, (c + next(t)).min(t), t)
                })
                .collect();
            let want: Vec<Option<Time>> = response_times(&ts)
                .into_iter()
                .zip(&ts)
                .map(|(r, x)| r.filter(|&r| r <= x.d))
                .collect();
            let n = ts.len();
            assert_eq!(response_times_blocked(&ts, &vec![0; n]), want, "{ts:?}");
        }
    }
}
