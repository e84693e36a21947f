//! Holistic response-time analysis of event-triggered tasks under EDF, on one CPU or each
//! task's CPU (partitioned EDF), with release jitter propagated along the triggers
//! (M. Spuri, *Holistic analysis for deadline scheduled real-time distributed systems*,
//! INRIA RR-2873, 1996, which carries Tindell & Clark's jitter propagation to EDF with his
//! response-time analysis of EDF with release jitter, *Analysis of deadline scheduled
//! real-time systems*, INRIA RR-2772, 1996).
//!
//! 1. **A job's response under EDF with jitter** (Spuri RR-2772 §4–5). Each task on the CPU
//!    is sporadic with period T_j, relative deadline D_j (from its own, jittered, release: a
//!    triggered job's deadline is its release + D, as the ledger gives it) and release jitter
//!    J_j: its jobs' releases lie in [g, g + J_j] for generation points g at least T_j apart.
//!    The job of task i under analysis is released at a after the start t0 of its
//!    deadline-(a + D_i) busy period (from the last instant no job of deadline ≤ a + D_i
//!    released earlier is unfinished); in it only jobs of deadline ≤ a + D_i run, released in
//!    [t0, finish). Task j≠i has at most
//!    `min(⌈(w + J_j)/T_j⌉, ⌊(a + D_i − D_j + J_j)/T_j⌋ + 1)⁺` of them (released before w, and
//!    by a + D_i − D_j), task i `⌊(a + J_i)/T_i⌋ + 1` (released by a, the job itself among
//!    them; deadline ties counted, whatever the tie-break). The finish is at most t0 + w for
//!    the least fixed point w of the sum of their C', and the response `max_a (w(a) − a)`,
//!    over the a in [0, L) where w steps (a = k·T_i − J_i, a = k·T_j + D_j − D_i − J_j, and
//!    0; between steps w − a falls), L the longest busy period,
//!    `L = Σ_j ⌈(L + J_j)/T_j⌉·C'_j`.
//! 2. **Jitter propagation** (Spuri RR-2873 §3, as Tindell & Clark 1994): a triggered task's
//!    job is released when its trigger's finishes, between the trigger's best and worst finish
//!    after the head's nominal release: offset φ (best) and jitter J (worst − best) as in
//!    `holistic.rs` (joins there too: the latest of one transaction's triggers that keep in
//!    step), `R^w_i = φ_i + J_i + R_i`, iterated from J = 0 to the fixed point
//!    (`holistic::iterate`).
//! 3. **Self-suspension**: every suspension counted as execution, C' = C + S, for every task
//!    (the suspension-oblivious analysis of Chen et al., *Many suspensions, many problems*,
//!    Real-Time Systems 55, 2019, §4): in the busy period each instant runs a job of deadline
//!    ≤ a + D_i or has every unfinished one suspended, so its length is at most their
//!    execution and suspension. The jitter-based form of `holistic.rs` is for fixed priority
//!    (its argument charges a higher-priority job's suspension to the task under analysis,
//!    which under EDF can itself be the suspended one) and is not used here.
//! 4. **Offsets within a transaction** (after J. C. Palencia & M. González Harbour,
//!    *Offset-based response time analysis of distributed systems scheduled under EDF*, ECRTS
//!    2003, whose model this is: the tasks a head's job releases come at offsets from that
//!    job's release, each with its jitter). A task j of i's own transaction (the same head, of
//!    period T) has its job of instance g + mT (m ∈ ℤ, g the head's release of the job under
//!    analysis) released in [g + mT + φ_j, g + mT + φ_j + J_j] (a sporadic head: instances at
//!    least T apart, which only widens the counts below for m < 0). The job under analysis is
//!    released at a ∈ [g + φ_i, g + φ_i + J_i]. A job of j in the busy period is released at
//!    or after t0 = 0, so g + mT + φ_j + J_j ≥ 0 with g ≤ a − φ_i:
//!    `m ≥ m_lo = ⌈(φ_i − a − φ_j − J_j)/T⌉`; its deadline (release + D_j) is at most
//!    a + D_i, so g + mT + φ_j + D_j ≤ a + D_i with g ≥ a − φ_i − J_i:
//!    `m ≤ M = ⌊(D_i − D_j + φ_i + J_i − φ_j)/T⌋`, which binds for m ≥ 0 only (an earlier
//!    instance of a sporadic head may be more than |m|·T before): j has at most
//!    `[max(M, −1) − m_lo + 1]⁺` jobs in it, a third bound beside point 1's two (each sound
//!    alone: their minimum is). It steps up at `a = kT + φ_i − φ_j − J_j`, added to the step
//!    points. This is the simpler form of the paper's analysis, derived here: the busy period's
//!    start is not set at each member's release in turn, and the other transactions are taken
//!    at their worst phase independently, as in point 1. It is what stops a trigger's job of
//!    the same instance from counting against the job it released (its deadline is before the
//!    released job's release): the issue's chain (a: T 10, C 2; b: trigger a, C 3) is bounded
//!    at 5 ms as under fixed priority (without point 4: 10 ms).
//!
//! Registry entry: `edf-holistic` (one CPU, or every task's `cpu`; triggered and
//! self-suspending tasks; every task's response within its deadline and every event chain's
//! bound within the chain's).

use super::holistic::{
    fixed_point, iterate, root, verdict_with, Node, Responses, Suspension, Unanalysed, HOLISTIC,
};
use super::registry::{Entry, Kind, WithOverheads};
use super::Verdict;
use rtsched_model::{TaskSet, Time};

/// More step points than this in one busy period: unbounded (not analysed).
const MAX_POINTS: usize = 20_000;

/// The holistic EDF fixed point of `nodes` (the overview's points 1–4).
pub fn analyse(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Oblivious, true, |r, i| {
        window(nodes, i, r, Offsets::Credited)
    })
}

/// A negative control, not an analysis: the fixed point with every propagated jitter held at
/// 0, which the simulator refutes (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_without_jitter(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Oblivious, false, |r, i| {
        window(nodes, i, r, Offsets::Credited)
    })
}

/// The fixed point without the offsets of point 4 (Spuri's, every task at its worst phase):
/// never tighter, kept to show what the offsets win (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_without_offsets(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Oblivious, true, |r, i| {
        window(nodes, i, r, Offsets::Not)
    })
}

/// A negative control, not an analysis: the offsets credited too much — every job of the
/// transaction taken at its earliest release after its head's (the jitters J_i and J_j
/// dropped from point 4's M and m_lo), which the simulator refutes (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_offsets_without_jitter(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Oblivious, true, |r, i| {
        window(nodes, i, r, Offsets::TooMuch)
    })
}

/// How point 4's offsets are used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Offsets {
    /// Not at all (Spuri's analysis alone).
    Not,
    /// As point 4 derives them.
    Credited,
    /// Without the jitters (a negative control).
    TooMuch,
}

/// A task on the CPU as EDF's demand sees it: (C + S, T, D, J), and for a task of the
/// transaction under analysis its offset φ (point 4), else None.
type Demand = (i128, i128, i128, i128, Option<i128>);

/// Task i's (worst finish after its head's nominal release, worst response from its own
/// release) under the current jitters, or None if its busy period does not close.
fn window(nodes: &[Node], i: usize, r: &Responses, offsets: Offsets) -> Option<(Time, Time)> {
    let me = &nodes[i];
    let mine = root(nodes, i);
    let demand = |j: usize| -> Demand {
        let x = &nodes[j];
        let c = (x.c + x.s) as i128;
        let phi =
            (offsets != Offsets::Not && root(nodes, j) == mine).then_some(r.offset[j] as i128);
        (c, x.t as i128, x.d as i128, r.jitter[j] as i128, phi)
    };
    let others: Vec<Demand> = (0..nodes.len())
        .filter(|&j| j != i && nodes[j].cpu == me.cpu)
        .map(demand)
        .collect();
    let (c_i, t_i, d_i, j_i, _) = demand(i);
    let (phi_i, t_tr) = (r.offset[i] as i128, nodes[mine].t as i128);
    // The jitters point 4 takes (none in the negative control).
    let jit = |j: i128| if offsets == Offsets::TooMuch { 0 } else { j };
    let all = || others.iter().copied().chain([(c_i, t_i, d_i, j_i, None)]);
    let start: i128 = all().map(|x| x.0).sum();
    let busy = fixed_point(start, |l| {
        all()
            .map(|(c, t, _, j, _)| (l + j + t - 1).div_euclid(t) * c)
            .sum()
    })?;
    let mut points = vec![0i128];
    let mut step = |first: i128, t: i128| -> Option<()> {
        let mut a = first + (-first).max(0).div_euclid(t) * t;
        while a < busy {
            if a >= 0 {
                points.push(a);
            }
            a += t;
            if points.len() > MAX_POINTS {
                return None;
            }
        }
        Some(())
    };
    for (_, t, d, j, phi) in all() {
        // a = k·T + D − D_i − J (k ≥ 0); for task i itself D = D_i: a = k·T_i − J_i.
        step(d - d_i - j, t)?;
        if let Some(phi) = phi {
            // Point 4's count steps at a = k·T + φ_i − φ_j − J_j.
            step((phi_i - phi - j).rem_euclid(t_tr), t_tr)?;
        }
    }
    points.sort_unstable();
    points.dedup();
    let mut resp = c_i;
    for a in points {
        let own = ((a + j_i).div_euclid(t_i) + 1) * c_i;
        let w = fixed_point(own, |w| {
            own + others
                .iter()
                .map(|&(c, t, d, j, phi)| {
                    let by_release = (w + j + t - 1).div_euclid(t);
                    let by_deadline = ((a + d_i - d + j).div_euclid(t) + 1).max(0);
                    let by_offset = match phi {
                        Some(phi) => {
                            let m_hi = (d_i - d + phi_i + jit(j_i) - phi).div_euclid(t_tr).max(-1);
                            let m_lo = -(a + phi + jit(j) - phi_i).div_euclid(t_tr);
                            (m_hi - m_lo + 1).max(0)
                        }
                        None => i128::MAX,
                    };
                    by_release.min(by_deadline).min(by_offset) * c
                })
                .sum::<i128>()
        })?;
        resp = resp.max(w - a);
    }
    let own = resp as Time;
    Some((r.offset[i] + r.jitter[i] + own, own))
}

/// The verdict of the holistic EDF analysis of `s` (every task's response within its
/// deadline, every event chain's bound within the chain's deadline).
fn verdict(s: &super::registry::Subject<'_>) -> Verdict {
    let prio = vec![0; s.indices().len()];
    verdict_with(s, EDF_HOLISTIC.name, &prio, analyse)
}

/// The method an event chain's EDF bound names (`chains.rs`).
pub const METHOD: &str = "holistic EDF (Spuri 1996; offsets)";

pub const EDF_HOLISTIC: Entry = Entry {
    name: "edf-holistic",
    summary: "(partitioned) EDF, holistic response-time analysis with triggers' jitter, suspensions as execution",
    citation: "Spuri 1996 (EDF with jitter, holistic); offsets after Palencia & González Harbour 2003; suspensions: Chen et al. 2019 §4",
    kind: Kind::Sufficient,
    applies: HOLISTIC,
    verdict,
    overheads: WithOverheads::Not,
};

/// The holistic EDF responses of `set`, or why none.
pub fn responses(set: &TaskSet) -> Result<Responses, String> {
    super::holistic::responses_with(set, &vec![0; set.tasks.len()], analyse)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn node(c: Time, t: Time, d: Time, trigger: Option<usize>) -> Node {
        Node {
            c: c * MS,
            c_best: c * MS,
            s: 0,
            s_lo: 0,
            t: t * MS,
            d: d * MS,
            prio: 0,
            cpu: 0,
            triggers: trigger.into_iter().collect(),
            joined: Vec::new(),
        }
    }

    /// The issue's chain under EDF: a (T 10, C 2, D 10), b (trigger a, C 3, D 10), offset of
    /// b 2 (a's best finish). With the offsets (point 4), round 1 (J = 0): a at a = 0: b's
    /// M = ⌊(10 − 10 + 0 + 0 − 2)/10⌋ = −1, m_lo = −⌊(0 + 2 + 0 − 0)/10⌋ = 0: no job of b
    /// (b's job of this instance is released at a's finish, its deadline after a's): R_a = 2.
    /// b: a's M = ⌊(0 + 2 − 0)/10⌋ = 0; step points 0 and 2 (φ_b − φ_a − J_a); at a = 0,
    /// m_lo = −⌊(0 + 0 + 0 − 2)/10⌋ = 1: no job of a, w = 3; at a = 2, m_lo = 0: a's job of
    /// the instance, w = 5, w − a = 3: R_b = 3, R^w(b) = 2 + 0 + 3 = 5; J_b = R^w(a) − 2 = 0,
    /// settled: the chain's bound 5 ms, as simulated.
    /// Without the offsets (Spuri's analysis alone), round 1: a at a = 0 counts b's job by
    /// deadline ⌊(0 + 10 − 10)/10⌋ + 1 = 1: R_a = 5, likewise R_b = 5; round 2: J_b = 5 − 2 = 3,
    /// no new step point in [1, 5): R^w(b) = 2 + 3 + 5 = 10.
    #[test]
    fn the_issues_chain_under_edf_by_hand() {
        let n = [node(2, 10, 10, None), node(3, 10, 10, Some(0))];
        let r = analyse(&n).unwrap();
        assert_eq!(r.own, vec![2 * MS, 3 * MS]);
        assert_eq!((r.offset[1], r.jitter[1]), (2 * MS, 0));
        assert_eq!(r.worst, vec![2 * MS, 5 * MS]);
        let spuri = analyse_without_offsets(&n).unwrap();
        assert_eq!(spuri.own, vec![5 * MS, 5 * MS]);
        assert_eq!((spuri.offset[1], spuri.jitter[1]), (2 * MS, 3 * MS));
        assert_eq!(spuri.worst, vec![5 * MS, 10 * MS]);
    }

    /// Deadlines order the work: x (C 1, T 4, D 4), y (C 3, T 12, D 12), z (C 2, T 6, D 3).
    /// L: 6 → ⌈6/4⌉·1 + 3 + 2 = 7 → 2 + 3 + 4 = 9 → 3 + 3 + 4 = 10 → 10. y at a = 0 (deadline
    /// 12): x by deadline ⌊8/4⌋ + 1 = 3, z ⌊9/6⌋ + 1 = 2: w = 3 + min(⌈w/4⌉, 3) + 2·min(⌈w/6⌉, 2)
    /// → 3 + 1 + 2 = 6 → 3 + 2 + 2 = 7 → 3 + 2 + 4 = 9 → 3 + 3 + 4 = 10 → 10: R_y = 10. z at
    /// a = 0: x by deadline 3: ⌊(3 − 4)/4⌋ + 1 = 0, y: 0: R_z = 2; at a = 3 (z's own step
    /// k·T − J needs k = 1: 6; x's: k·4 + 4 − 3 = 1, 5, 9): a = 1 (deadline 4): x one job,
    /// w = 2 + 1 = 3, w − a = 2; a = 5 (deadline 8): x ⌊(5 + 3 − 4)/4⌋ + 1 = 2, z's own
    /// ⌊5/6⌋ + 1 = 1: w = 2 + 2 = 4 (⌈4/4⌉ = 1 → w = 3 → 3): w − a < 0. R_z = 2. A jitter of 2
    /// on x: z at a = 0 (deadline 3) counts ⌊(3 − 4 + 2)/4⌋ + 1 = 1 job of x: R_z = 3.
    #[test]
    fn deadlines_and_jitter_by_hand() {
        let n = [
            node(1, 4, 4, None),
            node(3, 12, 12, None),
            node(2, 6, 3, None),
        ];
        let r = analyse(&n).unwrap();
        assert_eq!(r.own, vec![r.own[0], 10 * MS, 2 * MS]);
        let mut jittered = Responses {
            jitter: vec![2 * MS, 0, 0],
            ..r.clone()
        };
        jittered.offset = vec![0; 3];
        assert_eq!(
            window(&n, 2, &jittered, Offsets::Credited),
            Some((3 * MS, 3 * MS))
        );
    }

    /// A suspension counts as execution: h (C 1, S 4, T 10), l (C 3, T 20). L = 3 + 5 = 8. h at
    /// a = 0 (deadline 10): l's jobs by deadline ⌊(10 − 20)/20⌋ + 1 = 0: R_h = 5. l at a = 0
    /// (deadline 20): h's ⌊(20 − 10)/10⌋ + 1 = 2, released before w: ⌈8/10⌉ = 1: R_l = 8.
    /// Over capacity (Σ (C + S)/T > 1) is unbounded.
    #[test]
    fn suspensions_count_as_execution() {
        let mut h = node(1, 10, 10, None);
        h.s = 4 * MS;
        let l = node(3, 20, 20, None);
        let r = analyse(&[h.clone(), l]).unwrap();
        assert_eq!(r.own, vec![5 * MS, 8 * MS]);
        let heavy = node(6, 10, 10, None);
        assert!(analyse(&[h, heavy]).is_err());
    }
}
