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
}
