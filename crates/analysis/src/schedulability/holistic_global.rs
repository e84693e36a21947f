//! Event chains under global scheduling (gfp, gedf) on m identical CPUs: an end-to-end bound
//! from per-task global response-time bounds with the triggers' release jitter propagated.
//!
//! 1. **Per task** (M. Bertogna & M. Cirinei, *Response-time analysis for globally scheduled
//!    symmetric multiprocessor platforms*, RTSS 2007; `gfp_rta.rs` and `gedf_rta.rs` hold the
//!    jitter-free forms, whose fixed point and workload this file calls). A job of τ_k is kept
//!    from running only while all m CPUs run jobs that interfere with it (higher or equal
//!    priority under gfp; a deadline no later than its own under gedf), so its response from
//!    its own release is at most the least fixed point
//!    `R_k = C_k + ⌊(1/m)·Σ_{i ≠ k} min(I_i(R_k), R_k − C_k + 1)⌋`.
//! 2. **Release jitter in the interfering workload.** A triggered task's job of head instance
//!    g is released in [g + φ_i, g + φ_i + J_i] (`holistic.rs`: φ its trigger's best finish,
//!    J the worst less the best); successive instances are at least T_i apart. Each of its
//!    jobs therefore runs within [g', g' + J_i + R_i] of a point g' = g + φ_i of a sequence
//!    at least T_i apart: the task is, to Bertogna & Cirinei's workload argument (which uses
//!    only that each job runs at most C_i within R_i of a release of such a sequence), a
//!    task of response `R'_i = J_i + R_i`. So `I_i(x) = W_i(x)` with R'_i in place of R_i:
//!    `W_i(x) = N·C_i + min(C_i, x + R'_i − C_i − N·T_i)`, `N = ⌊(x + R'_i − C_i)/T_i⌋` —
//!    their window widened by the jitter, as Tindell & Clark widen a jittered task's
//!    interference on one CPU.
//! 3. **Under gedf**, τ_i's jobs that can interfere with τ_k's have a deadline (own release +
//!    D_i) at most τ_k's, so their points g' are at most d_k − D_i, and each does at most
//!    min(C_i, g' + R'_i − r_k) after τ_k's release r_k. Packed T_i apart from the latest,
//!    with `Λ = [D_k − D_i + R'_i]_0`, they do at most `⌊Λ/T_i⌋·C_i + min(C_i, Λ mod T_i)`
//!    (C_i ≤ T_i), and `I_i = min(W_i, that)`. This is Bertogna & Cirinei's EDF-specific
//!    term derived again for R'_i > D_i (which their constrained-deadline form does not meet:
//!    with R'_i ≤ D_i it is theirs or tighter).
//! 4. **A task's own jobs**: the analysis counts no interference from τ_k's earlier job, so
//!    it asks `R'_k = J_k + R_k ≤ T_k` (the earlier job finishes by the next point g'), the
//!    fixed point's cap; past it the task is not analysed.
//! 5. **Propagation** as on one CPU (`holistic::iterate`, Tindell & Clark's iteration): the
//!    responses of every task and the jitters grow together from J = 0 to the fixed point;
//!    R^w_i = φ_i + J_i + R_i, and a chain's latency ≤ R^w(last) − φ(first) (`chains.rs`).
//!    Joins as `holistic.rs` point 4. Self-suspension counted as execution, C' = C + S (the
//!    suspension-oblivious analysis: while the job under analysis is suspended it is counted
//!    as running; an interfering job's suspension only lowers the work it does).
//!
//! Not a registry entry: `chains.rs` takes it for a set on several CPUs whose tasks are not
//! all bound to a `cpu` (`rtsched.chain_bounds`, `analyze`'s chains table). Checked against
//! the simulator under `gfp:file` and `gedf` on 2–4 CPUs (tests/chains_global.rs), with the
//! jitter held at 0 as the negative control.

use super::gfp_rta::{fixed_point, interference, workload, CarryIn};
use super::holistic::{iterate_on, nodes, unanalysed, Node, Responses, Suspension, Unanalysed};
use super::registry::{self, Subject};
use super::Cdt;
use rtsched_model::{TaskSet, Time};

/// Which global scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Global {
    /// Global fixed priority (`Node::prio`, larger more urgent; ties interfere).
    Fp,
    /// Global EDF.
    Edf,
}

impl Global {
    /// The method an event chain's bound names (`chains.rs`).
    pub fn method(self) -> &'static str {
        match self {
            Global::Fp => "global FP RTA with jitter (Bertogna & Cirinei 2007)",
            Global::Edf => "global EDF RTA with jitter (Bertogna & Cirinei 2007)",
        }
    }
}

/// The global fixed point of `nodes` on `m` CPUs under `by` (the overview's points 1–5).
pub fn analyse(nodes: &[Node], m: u32, by: Global) -> Result<Responses, Unanalysed> {
    iterate_on(nodes, Suspension::Oblivious, true, m, |r, i| {
        window(nodes, i, r, m, by)
    })
}

/// A negative control, not an analysis: the fixed point with every propagated jitter held at
/// 0 (in the interfering workload and in the finishes), which the simulator refutes
/// (tests/chains_global.rs).
#[doc(hidden)]
pub fn analyse_without_jitter(nodes: &[Node], m: u32, by: Global) -> Result<Responses, Unanalysed> {
    iterate_on(nodes, Suspension::Oblivious, false, m, |r, i| {
        window(nodes, i, r, m, by)
    })
}

/// Whether `set` is scheduled globally as far as the chain analysis goes: several CPUs and
/// not every task bound to a `cpu`.
pub fn is_global(set: &TaskSet) -> bool {
    set.platform.cpus > 1 && set.tasks.iter().any(|t| t.cpu.is_none())
}

/// The global responses of `set` under `by` (priorities `prio`, one per task, read by
/// [`Global::Fp`] only), or why none (the task named).
pub fn responses(set: &TaskSet, prio: &[u32], by: Global) -> Result<Responses, String> {
    if registry::parallel(set).is_some() || registry::has_sections(set) {
        return Err("parallel tasks and critical sections are not modelled".into());
    }
    let m = set.platform.cpus;
    let s = Subject::whole(set);
    let name = |k: usize| &set.tasks[k].name;
    let mut n = nodes(&s, prio).map_err(|e| unanalysed(&e, &name))?;
    n.iter_mut().for_each(|x| x.cpu = 0);
    analyse(&n, m, by).map_err(|e| match e {
        Unanalysed::Unbounded { task } => format!(
            "task '{}': no global response bound within its period less its release jitter (the analysis needs J + R ≤ T)",
            name(task)
        ),
        e => unanalysed(&e, &name),
    })
}

/// τ_i as the workload bound sees it: C' = C + S, D, T.
fn cdt(x: &Node) -> Cdt {
    Cdt {
        c: x.c + x.s,
        d: x.d,
        t: x.t,
    }
}

/// The overview's point 3: the most τ_i (as `i`, with R'_i = `span`) does after the release
/// of a job of a task of relative deadline `d_k`, by its jobs of deadline at most that job's.
pub fn edf_interference(i: &Cdt, span: Time, d_k: Time) -> u128 {
    let lambda = (d_k + span).saturating_sub(i.d);
    (lambda / i.t) as u128 * i.c as u128 + (lambda % i.t).min(i.c) as u128
}

/// Task i's (worst finish after its head's nominal release, worst response from its own
/// release) under the current responses and jitters, or None if its fixed point passes
/// T_i − J_i (point 4).
fn window(nodes: &[Node], i: usize, r: &Responses, m: u32, by: Global) -> Option<(Time, Time)> {
    let x = &nodes[i];
    let me = Cdt {
        d: x.t.checked_sub(r.jitter[i])?,
        ..cdt(x)
    };
    if me.c > me.d || nodes.iter().any(|n| n.c + n.s > n.t) {
        return None;
    }
    let others: Vec<(Cdt, Time)> = (0..nodes.len())
        .filter(|&j| j != i && (by == Global::Edf || nodes[j].prio >= x.prio))
        .map(|j| (cdt(&nodes[j]), r.jitter[j] + r.own[j]))
        .collect();
    let own = match by {
        Global::Fp => fixed_point(&me, m, |w| interference(&me, &others, w, m, CarryIn::Every))?,
        Global::Edf => fixed_point(&me, m, |w| {
            let cap = (w - me.c + 1) as u128;
            others
                .iter()
                .map(|(j, span)| {
                    workload(j, *span, w)
                        .min(edf_interference(j, *span, x.d))
                        .min(cap)
                })
                .sum()
        })?,
    };
    Some((r.offset[i] + r.jitter[i] + own, own))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn node(c: Time, t: Time, prio: u32, trigger: Option<usize>) -> Node {
        Node {
            c: c * MS,
            c_best: c * MS,
            s: 0,
            s_lo: 0,
            t: t * MS,
            d: t * MS,
            prio,
            cpu: 0,
            triggers: trigger.into_iter().collect(),
            joined: Vec::new(),
        }
    }

    /// Two CPUs: h (T 10, C 4, prio 3) triggers b (C 3, prio 2); x (T 10, C 6, prio 1).
    /// gfp: h has no interferer, R = 4, best 4: b's φ = 4, J = 0; b sees h with R' = 4:
    /// W_h(3) = ⌊(3 + 4 − 4)/10⌋·4 + min(4, 3) = 3, capped at 3 − 3 + 1 = 1: R_b = 3 + ⌊1/2⌋
    /// = 3, R^w(b) = 7. x sees h (R' 4) and b (R' 3): at w = 6, W_h = min(4, 6) = 4 → cap 1,
    /// W_b(6) = ⌊6/10⌋·3 + min(3, 6) = 3 → cap 1: 6 + ⌊2/2⌋ = 7; at 7 the caps are 2: 6 + 2 =
    /// 8; at 8, 3 each: 6 + 3 = 9; at 9, W_h = min(4, 9) = 4, cap 4; W_b = 3: 6 + ⌊7/2⌋ = 9.
    /// R_x = 9. J_b = R^w(h) − φ_b = 0: settled; the chain [h, b] is bounded by
    /// R^w(b) − φ(h) = 4 + 0 + 3 = 7.
    #[test]
    fn a_chain_under_global_fp_by_hand() {
        let n = [
            node(4, 10, 3, None),
            node(3, 10, 2, Some(0)),
            node(6, 10, 1, None),
        ];
        let r = analyse(&n, 2, Global::Fp).unwrap();
        assert_eq!(r.own, vec![4 * MS, 3 * MS, 9 * MS]);
        assert_eq!(r.worst[1], 7 * MS);
    }

    /// Point 3 by hand: τ_i (C 2, D 10, T 10) with R' = 13 (jitter 5 + response 8) against a
    /// job of deadline 10: Λ = 10 − 10 + 13 = 13: one job whole and min(2, 3): 4; with R' = 8
    /// (no jitter), Λ = 8: min(2, 8) = 2 — Bertogna & Cirinei's ⌊10/10⌋·2 + min(2, [0 − 2]_0)
    /// = 2 as well.
    #[test]
    fn the_edf_term_with_jitter_by_hand() {
        let i = Cdt { c: 2, d: 10, t: 10 };
        assert_eq!(edf_interference(&i, 13, 10), 4);
        assert_eq!(edf_interference(&i, 8, 10), 2);
        assert_eq!(super::super::gedf_rta::edf_interference(&i, 8, &i), 2);
    }
}
