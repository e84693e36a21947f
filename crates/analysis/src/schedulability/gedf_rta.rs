//! Global EDF on m identical CPUs: Bertogna & Cirinei's response-time analysis, "Response-Time
//! Analysis for Globally Scheduled Symmetric Multiprocessor Platforms" (RTSS 2007).
//!
//! As for global fixed priority (`gfp_rta.rs`), a task τ_i whose jobs finish within R_i does at
//! most the workload W_i(L) = N_i(L)·C_i + min(C_i, L + R_i − C_i − N_i(L)·T_i), N_i(L) =
//! ⌊(L + R_i − C_i)/T_i⌋, in a window of length L. Under EDF only jobs with deadlines no later
//! than τ_k's job's can interfere with it, which bounds τ_i's interference in τ_k's window by
//! the EDF-specific bound (the densest packing of τ_i's jobs with deadlines in the window, its
//! last job as late as its response time lets it)
//!   J_i^k = ⌊D_k/T_i⌋·C_i + min(C_i, [D_k mod T_i − (D_i − R_i)]_0).
//! With the interference of a task capped at x − C_k + 1 (discrete time, integer ns), τ_k's
//! response time is bounded by the least fixed point
//!   R_k = C_k + ⌊(1/m)·Σ_{i ≠ k} min(W_i(R_k), J_i^k, R_k − C_k + 1)⌋.
//! Every task's bound depends on every other's, so the bounds are found together: from R_i =
//! C_i, each is recomputed from the others' current values until none changes (they only
//! grow). The set is schedulable when that fixed point has every R_k ≤ D_k. When some R_k
//! passes D_k the iteration stops and no task gets a bound: the workload bounds assume every
//! task meets its R_i, so values short of the fixed point bound nothing.
//!
//! Constrained deadlines (D ≤ T), independent sequential tasks. Overhead-aware form: the
//! inflation for global EDF (`crate::overheads`), whose argument covers any test of plain
//! global EDF. Checked against the simulator (`tests/global_rta_vs_sim.rs`): a set it accepts
//! never misses under `gedf` from a synchronous release at WCET, no bound is below the
//! simulated maximum response, and the analysis with the EDF-specific term J_i^k dropped to
//! a single job (the negative control) is caught.
//!
//! Registry entry (`registry.rs`): `gedf-rta`.

use super::bounds::{self, Quantity};
use super::gfp_rta::{fixed_point, workload};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Tasks, WithOverheads,
};
use super::{Cdt, Verdict};
use rtsched_model::Time;

pub const GEDF_RTA: Entry = Entry {
    name: "gedf-rta",
    summary: "global EDF, response-time analysis (workload and EDF-specific interference)",
    citation: "Bertogna & Cirinei, RTSS 2007",
    kind: Kind::Sufficient,
    applies: Applies {
        cpus: Cpus::Several,
        tasks: Tasks::Sequential,
        deadlines: Deadlines::Constrained,
        sections: Sections::Blocking(super::omlp::TAKES),
        priorities: false,
        flow: Flow::Not,
    },
    verdict: |s| {
        let r = response_times(s.cdt(), s.cpus());
        let tasks = bounds::of(s, Quantity::ResponseTime, &r);
        let ok = r.iter().all(Option::is_some);
        Verdict::new(
            GEDF_RTA.name,
            ok.then_some(true),
            bounds::worst_in_words(&tasks),
        )
        .with_tasks(tasks)
    },
    overheads: WithOverheads::Global,
};

/// Rounds of the joint iteration before the verdict is left inconclusive.
const MAX_ROUNDS: u32 = 1_000;

/// J_i^k: the most τ_i (with response-time bound `r_i`) can interfere with a job of τ_k.
pub fn edf_interference(i: &Cdt, r_i: Time, k: &Cdt) -> u128 {
    let rest = (k.d % i.t).saturating_sub(i.d - r_i.min(i.d));
    (k.d / i.t) as u128 * i.c as u128 + rest.min(i.c) as u128
}

/// τ_k's bound given the others' current bounds `r`, or None past D_k.
fn bound_of(ts: &[Cdt], r: &[Time], k: usize, m: u32) -> Option<Time> {
    let tk = &ts[k];
    fixed_point(tk, m, |x| {
        let cap = (x - tk.c + 1) as u128;
        (0..ts.len())
            .filter(|&i| i != k)
            .map(|i| {
                workload(&ts[i], r[i], x)
                    .min(edf_interference(&ts[i], r[i], tk))
                    .min(cap)
            })
            .sum()
    })
}

/// Every task's response-time bound under global EDF on `m` CPUs, or all `None` when the
/// joint fixed point has some R_k > D_k (or was not reached within the round cap).
pub fn response_times(ts: &[Cdt], m: u32) -> Vec<Option<Time>> {
    let mut r: Vec<Time> = ts.iter().map(|x| x.c).collect();
    if ts.iter().any(|x| x.c > x.d) {
        return vec![None; ts.len()];
    }
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for k in 0..ts.len() {
            match bound_of(ts, &r, k, m) {
                None => return vec![None; ts.len()],
                Some(b) if b != r[k] => {
                    r[k] = b;
                    changed = true;
                }
                Some(_) => {}
            }
        }
        if !changed {
            return r.into_iter().map(Some).collect();
        }
    }
    vec![None; ts.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// Two CPUs, (C, D, T) = (2, 5, 5), (2, 5, 5), (4, 10, 10). Simulated under global EDF
    /// τ2 finishes at 6 or 8 (its deadline ties with τ0's and τ1's second jobs at 10).
    /// Round 1, from R = (2, 2, 4). τ0 at x = 2 (cap x − 1 = 1): W_1(2) = min(2, 2) → 1,
    ///   J_2 = ⌊5/10⌋·4 + min(4, [5 − (10 − 4)]_0) = 0: Σ 1 → 2 + 0: R0 = 2; τ1 likewise. τ2
    ///   (cap x − 3): x = 4: W_i(4) = ⌊4/5⌋·2 + min(2, 4) = 2 → cap 1: Σ 2 → 5; x = 5: W = 2 +
    ///   0, cap 2: Σ 4 → 6; x = 6: W = 2 + 1: Σ 6 → 7; x = 7: W = 4: Σ 8 → 8; x = 8: W = 2 +
    ///   min(2, 3) = 4, J_i = 2·2 + min(2, [0 − 3]_0) = 4: Σ 8 → 8: R2 = 8.
    /// Round 2: τ0 with R1 = 2, R2 = 8: J_2 = 0 + min(4, [5 − 2]_0) = 3. x = 2: W_1 → cap 1,
    ///   W_2(2) = min(4, 6) = 4 → 1: Σ 2 → 3; x = 3 (cap 2): W_1 = 2, W_2 → 2: Σ 4 → 4; x = 4
    ///   (cap 3): W_1 = 2, min(W_2 = 4, J_2 = 3, 3) = 3: Σ 5 → 4: R0 = 4 = R1.
    /// Round 3 changes nothing (τ2 at x = 8: W_i = ⌊10/5⌋·2 + 0 = 4, J_i = 4: Σ 8 → 8):
    ///   (4, 4, 8). With τ2's D = 5 it cannot finish (τ0 and τ1 take both CPUs for 2, it needs
    ///   4 more): J_i = 2, x = 5 (cap 2): Σ 4 → 6 > 5, and no task gets a bound.
    #[test]
    fn by_hand() {
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(4, 10, 10)];
        assert_eq!(response_times(&ts, 2), vec![Some(4), Some(4), Some(8)]);
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(4, 5, 10)];
        assert_eq!(response_times(&ts, 2), vec![None; 3]);
    }
}
