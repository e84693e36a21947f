//! Holistic response-time analysis of event-triggered tasks under (partitioned) fixed
//! priority, with release jitter propagated along the triggers (K. Tindell & J. Clark,
//! *Holistic schedulability analysis for distributed hard real-time systems*, Microprocessing
//! and Microprogramming 40, 1994), and the self-suspension analyses it is built with
//! (`suspension.rs` names the entries).
//!
//! 1. **The busy window with jitter** (Tindell & Clark §3, after Audsley et al. 1993 and
//!    Tindell's arbitrary-deadline analysis). For task i on its CPU, with the tasks of equal or
//!    higher priority there hp(i) (equal counts as higher, safe whatever the tie-break), job q of
//!    the level-i busy window ends at the fixed point of
//!    `w = (q + 1)·C'_i + Σ_{j ∈ hp(i)} ⌈(w + J'_j) / T_j⌉·C'_j`,
//!    measured from job 0's release, its jobs released as early as their jitter allows after
//!    it. The window goes on while `w + J_i > (q + 1)·T_i` (job q + 1 may arrive in it).
//!    From the nominal release (the head's), job q responds within `J_i + w − q·T_i`; from its
//!    own release within `w` (q = 0) or `w − q·T_i + J_i`.
//! 2. **Jitter propagation** (Tindell & Clark §4: a message or task released by the completion
//!    of another inherits that one's response as its release jitter). A triggered task's job
//!    is released when its trigger's job finishes: between the trigger's best- and worst-case
//!    response after the head's nominal release. With the best case as an offset φ (the
//!    refinement of J. C. Palencia & M. González Harbour, *Schedulability analysis for tasks
//!    with static and dynamic offsets*, RTSS 1998, whose best case is the sum of the best-case
//!    execution times on the path), the jitter is `J_i = R^w(trigger) − R^b(trigger)`,
//!    `R^w_i = φ_i + J_i + max_q (w_q − q·T_i)` and `R^b_i = φ_i + C^b_i + S^lo_i`. The best case
//!    of an execution is its WCET only when every job runs exactly it (`run.execution: wcet`,
//!    no replayed times), else 0. Responses and jitters grow together: iterate from J = 0 to
//!    the fixed point (Tindell & Clark's iteration), which is reached or a window exceeds
//!    [`LIMIT`] (unbounded).
//! 3. **Self-suspension** (J.-J. Chen et al., *Many suspensions, many problems: a review of
//!    self-suspending tasks in real-time systems*, Real-Time Systems 55, 2019). The task under
//!    analysis counts its suspensions as execution, `C'_i = C_i + S_i` (sound for the task
//!    under analysis, the review's §4). A higher-priority task either also counts its
//!    suspension as execution, `C'_j = C_j + S_j`, `J'_j = J_j`
//!    ([`Suspension::Oblivious`], the review's suspension-oblivious analysis), or counts its
//!    execution only with the jitter its suspension can cause, `C'_j = C_j`,
//!    `J'_j = J_j + R^own_j − C_j` for a self-suspending j ([`Suspension::Jitter`], the
//!    jitter-based analysis the review proves sound; M. Günzel et al., ECRTS 2024, call it the
//!    state of the art). The review shows unsound, and this file does not use: a jitter of
//!    S_j alone for a higher-priority suspending task (its §5.1, the quantification of
//!    Audsley & Bletsas 2004 and Kim et al. 1995), and a suspension as blocking time of the
//!    task under analysis only (its §5.2). A suspending task's level-i window may hold
//!    several of its jobs (R > T), each counted C + S: every instant of the window runs a job
//!    of hp(i) or i, or has i's pending job suspended, so the q-job iteration of point 1
//!    bounds it as for any task (the jitter R_j − C_j of a suspending interferer holds
//!    whatever R_j is: each job runs within [release, release + R_j]).
//! 4. **Joins** (`trigger: {all: [A, B]}`): the ledger releases the join when each trigger has
//!    finished a job since its last release. When the triggers are of one transaction (one
//!    head) and keep in step — no trigger's next job finishes before another's current one,
//!    which holds while `max_p R^w_p < T + min_p R^b_p` — its k-th job is released at the
//!    latest of their k-th finishes: offset `φ = max_p R^b_p`, jitter
//!    `J = max_p R^w_p − φ` (the latest finish is at least the latest best case and at most
//!    the latest worst case). A join of one transaction out of step is refused, naming it.
//! 5. **Joins across transactions** (`trigger: {all: [A, B]}` with A and B of different
//!    heads, their periods unrelated; derived here). Between two releases r_i < r_k of the
//!    join, each of its k − i later releases took a finish of every trigger p after the one
//!    before it, so k − i distinct finishes of p lie in (r_i, r_k]; p's jobs finish between
//!    R^b_p and R^w_p after their head's releases, which are at least T_p apart, so
//!    `r_k − r_i ≥ (k − i − 1)·T_p − (R^w_p − R^b_p)`. For T_p ≥ T (the join's period, the
//!    longest of its triggers') that is `≥ (k − i)·T − J` with `J = T + R^w_p − R^b_p`, which is
//!    a release jitter J on points T apart (take g_k = max_{i ≤ k}(r_i + (k − i)·T) − J). So
//!    the join heads a transaction of its own, offset 0, that jitter (the least over such p),
//!    and the tasks it triggers are of that transaction. A chain through it, arriving from
//!    trigger A: the join's flag for A is set at A's finish f_A; another trigger q's is set by
//!    then or at q's next finish, at most `W_q = T^max_q + R^w_q − R^b_q` after q's last, which
//!    was no later than f_A (T^max the head's longest inter-arrival). So the join is released
//!    by `f_A + max_{q ≠ A} W_q`; and before A's next finish, `f_A + W_A`, or the instance (the
//!    chain's job of A finishing last before the release, docs/chains.md) is another: the wait
//!    is at most `min(max_{q ≠ A} W_q, W_A)`. A join
//!    across transactions one of whose triggers is of another such join's transaction is
//!    refused, naming it.
//! 6. **Not modelled**: critical sections and parallel tasks (the registry refuses them),
//!    overheads. The chain bound of `chains.rs` reads `R^w(last) − φ(first)`, and through a
//!    join across transactions (point 5) sums the parts: up to the join's trigger A,
//!    `R^w(A) − φ(first)`; the wait `min(max_{q ≠ A} W_q, W_A)`; from the join's release to the end of the
//!    next part, the least of `R^w` (from the join's nominal release, no later than its actual
//!    one) and the sum of the parts' own responses (each job released at its trigger's
//!    finish).
//!
//! Registry entries: `fp-holistic-rm` and `fp-holistic-file` (one CPU, or every task's
//! `cpu`; triggered and self-suspending tasks, suspensions by jitter). EDF's holistic
//! analysis, on the same outer iteration ([`iterate`]), is `holistic_edf.rs`.

use super::registry::{
    self, Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::{cmp_sum, Verdict};
use rtsched_model::{Chain, ExecModel, TaskSet, Time};
use std::cmp::Ordering;

/// A window or response beyond this (about 13 days) is unbounded.
pub const LIMIT: Time = 1 << 50;
/// Cap of the inner (window) fixed-point iterations.
const MAX_ITER: u32 = 100_000;
/// Cap of the outer (jitter) rounds and of the jobs of one level-i window: beyond, the
/// response is reported unbounded (a creeping fixed point near overload, not a bound).
const MAX_ROUNDS: u32 = 1_000;
/// A response beyond this many of the longest period or deadline is unbounded.
const HORIZON: Time = 1_000;

/// How a self-suspension is analysed (the overview's point 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suspension {
    /// Every suspension counted as execution.
    Oblivious,
    /// A higher-priority task's suspension as release jitter R^own − C.
    Jitter,
}

/// A task as the analysis sees it (ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// WCET: the sum of its run segments.
    pub c: Time,
    /// Best-case execution (the overview's point 2).
    pub c_best: Time,
    /// Longest and shortest total suspension of a job.
    pub s: Time,
    pub s_lo: Time,
    /// Period or minimum inter-arrival time (a triggered task's: its trigger's).
    pub t: Time,
    /// Relative deadline, from its own release.
    pub d: Time,
    pub prio: u32,
    pub cpu: u32,
    /// The nodes whose finished jobs release this one's: one, or a join's (`all`) of one
    /// transaction, empty for a periodic or sporadic task and for a join across transactions.
    pub triggers: Vec<usize>,
    /// A join across transactions (the overview's point 5): its triggers, of different heads.
    /// Such a node heads a transaction of its own (no `triggers`).
    pub joined: Vec<usize>,
}

/// Why the analysis gives no bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unanalysed {
    /// Task `task`'s window does not close within [`LIMIT`].
    Unbounded { task: usize },
    /// Task `task` is released by a join (`trigger: {all: [...]}`) whose triggers are of
    /// different transactions, or may finish out of step (the overview's point 4).
    Join { task: usize },
}

/// The fixed point, per task (ns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Responses {
    /// Worst-case finish after the nominal release of its head's job.
    pub worst: Vec<Time>,
    /// Best-case finish after it (the offset of the tasks it triggers).
    pub best: Vec<Time>,
    /// Worst-case response from its own release (what its deadline is compared with).
    pub own: Vec<Time>,
    /// Release jitter: worst − best finish of its trigger (0 for a periodic or sporadic task).
    pub jitter: Vec<Time>,
    /// Offset φ: the best finish of its trigger.
    pub offset: Vec<Time>,
}

/// The nodes of `s`'s tasks under priorities `prio`, on CPU `cpu` of each (0 on one CPU); a
/// join whose triggers are of different transactions heads one of its own (`Node::joined`,
/// the overview's point 5), unless one of them is itself of such a join's transaction.
pub fn nodes(s: &Subject<'_>, prio: &[u32]) -> Result<Vec<Node>, Unanalysed> {
    let mut n = trigger_nodes(s, prio)?;
    let across = |n: &[Node]| {
        (0..n.len()).find(|&i| {
            let x = &n[i];
            x.triggers.len() > 1
                && x.triggers
                    .iter()
                    .any(|&g| root(n, g) != root(n, x.triggers[0]))
        })
    };
    while let Some(i) = across(&n) {
        n[i].joined = std::mem::take(&mut n[i].triggers);
    }
    match (0..n.len()).find(|&i| {
        n[i].joined
            .iter()
            .any(|&g| !n[root(&n, g)].joined.is_empty())
    }) {
        Some(task) => Err(Unanalysed::Join { task }),
        None => Ok(n),
    }
}

/// [`nodes`] with every join's triggers as `triggers`.
fn trigger_nodes(s: &Subject<'_>, prio: &[u32]) -> Result<Vec<Node>, Unanalysed> {
    let set = s.set();
    let exact = set.run.execution == ExecModel::Wcet;
    let local = |g: usize| s.indices().iter().position(|&i| i == g);
    s.tasks()
        .enumerate()
        .map(|(k, t)| {
            let triggers = match &t.trigger {
                Some(tr) if !tr.all && tr.tasks.len() != 1 => {
                    return Err(Unanalysed::Join { task: k })
                }
                Some(tr) => tr
                    .tasks
                    .iter()
                    .map(|&g| local(g as usize).ok_or(Unanalysed::Join { task: k }))
                    .collect::<Result<Vec<_>, _>>()?,
                None => Vec::new(),
            };
            Ok(Node {
                joined: Vec::new(),
                c: t.wcet,
                c_best: if exact && t.execution_times.is_empty() {
                    t.wcet
                } else {
                    0
                },
                s: t.suspensions.iter().map(|x| x.hi).sum(),
                s_lo: t.suspensions.iter().map(|x| x.lo).sum(),
                t: t.period,
                d: t.deadline,
                prio: prio[k],
                cpu: if s.cpus() == 1 { 0 } else { t.cpu.unwrap_or(0) },
                triggers,
            })
        })
        .collect()
}

/// The holistic fixed point of `nodes` (the overview's points 1–3).
pub fn analyse(nodes: &[Node], mode: Suspension) -> Result<Responses, Unanalysed> {
    iterate(nodes, mode, true, |r, i| {
        window(nodes, i, r, mode, Weaken::Not)
    })
}

/// A negative control, not an analysis: the fixed point with every release jitter and
/// suspension jitter held at 0 (offsets kept), which the simulator refutes
/// (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_without_jitter(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Jitter, false, |r, i| {
        window(nodes, i, r, Suspension::Jitter, Weaken::Jitter)
    })
}

/// A negative control, not an analysis: each task's response from the first job of its
/// level-i window only (the q-job iteration cut to q = 0), which the simulator refutes
/// (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_first_job_only(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    iterate(nodes, Suspension::Jitter, true, |r, i| {
        window(nodes, i, r, Suspension::Jitter, Weaken::LaterJobs)
    })
}

/// What a negative control drops from [`window`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Weaken {
    Not,
    /// Every suspension jitter (the release jitters are dropped by [`iterate`]).
    Jitter,
    /// The jobs of the window after its first.
    LaterJobs,
}

/// The outer fixed point (Tindell & Clark's iteration, the overview's point 2) of any
/// scheduler's per-task `window` (worst finish from the head's nominal release, worst
/// response from its own release; `holistic_edf.rs` gives EDF's): offsets from the best
/// finishes, jitters from the worst, iterated from J = 0 until nothing moves. `mode` says how
/// a CPU's load is counted for the overload check; `jitter` false holds every jitter at 0 (a
/// negative control). A join is analysed when its triggers are of one transaction and keep in
/// step (the overview's point 4).
pub(crate) fn iterate(
    nodes: &[Node],
    mode: Suspension,
    jitter: bool,
    window: impl Fn(&Responses, usize) -> Option<(Time, Time)>,
) -> Result<Responses, Unanalysed> {
    iterate_on(nodes, mode, jitter, 1, window)
}

/// [`iterate`] with `capacity` CPUs behind each `Node::cpu` (m for a global scheduler, whose
/// nodes are all on CPU 0: `holistic_global.rs`).
pub(crate) fn iterate_on(
    nodes: &[Node],
    mode: Suspension,
    jitter: bool,
    capacity: u32,
    window: impl Fn(&Responses, usize) -> Option<(Time, Time)>,
) -> Result<Responses, Unanalysed> {
    let n = nodes.len();
    if let Some(task) = overloaded(nodes, mode, capacity) {
        return Err(Unanalysed::Unbounded { task });
    }
    if let Some(task) = joins_across_transactions(nodes) {
        return Err(Unanalysed::Join { task });
    }
    // Responses past this are reported unbounded (a slowly diverging fixed point otherwise
    // walks up to LIMIT).
    let horizon = nodes
        .iter()
        .map(|x| x.t.max(x.d))
        .max()
        .unwrap_or(0)
        .saturating_mul(HORIZON);
    let best = best_finishes(nodes);
    let offset: Vec<Time> = nodes
        .iter()
        .map(|x| x.triggers.iter().map(|&g| best[g]).max().unwrap_or(0))
        .collect();
    let mut r = Responses {
        worst: vec![0; n],
        best,
        own: nodes.iter().map(|x| x.c + x.s).collect(),
        jitter: vec![0; n],
        offset,
    };
    for _ in 0..MAX_ROUNDS {
        let mut worst = vec![0; n];
        let mut own = vec![0; n];
        for i in 0..n {
            (worst[i], own[i]) = window(&r, i).ok_or(Unanalysed::Unbounded { task: i })?;
        }
        let jitter: Vec<Time> = (0..n)
            .map(
                |i| match nodes[i].triggers.iter().map(|&g| worst[g]).max() {
                    _ if !jitter => 0,
                    Some(w) => w - r.offset[i],
                    None if nodes[i].joined.is_empty() => 0,
                    None => across_jitter(nodes, i, &worst, &r.best),
                },
            )
            .collect();
        let settled = jitter == r.jitter && own == r.own && worst == r.worst;
        (r.worst, r.own, r.jitter) = (worst, own, jitter);
        if settled {
            return match joins_out_of_step(nodes, &r) {
                Some(task) => Err(Unanalysed::Join { task }),
                None => Ok(r),
            };
        }
        if let Some(task) = r.worst.iter().position(|&w| w > LIMIT.min(horizon)) {
            return Err(Unanalysed::Unbounded { task });
        }
    }
    Err(Unanalysed::Unbounded { task: 0 })
}

/// The release jitter of a join across transactions, node `i` (the overview's point 5): its
/// releases are those of a task of period T_i with jitter T_p + R^w_p − R^b_p, for any trigger
/// p of period T_p ≥ T_i; the least of them.
fn across_jitter(nodes: &[Node], i: usize, worst: &[Time], best: &[Time]) -> Time {
    let x = &nodes[i];
    x.joined
        .iter()
        .filter(|&&p| nodes[p].t >= x.t)
        .map(|&p| x.t + worst[p].saturating_sub(best[p]))
        .min()
        .unwrap_or(LIMIT)
}

/// A join whose triggers are of different transactions (heads): its jobs pair finishes of
/// unrelated instances, which the offsets do not describe.
fn joins_across_transactions(nodes: &[Node]) -> Option<usize> {
    (0..nodes.len()).find(|&i| {
        let x = &nodes[i];
        x.triggers.len() > 1
            && x.triggers
                .iter()
                .any(|&g| root(nodes, g) != root(nodes, x.triggers[0]))
    })
}

/// A join whose triggers may finish out of step: the ledger releases a join when each
/// trigger has finished a job since its last release (one flag each), so its k-th release is
/// the latest of the triggers' k-th finishes only while no trigger's (k+1)-th job finishes
/// before another's k-th: while max_p R^w_p < T + min_p R^b_p (finishes after the head's
/// nominal release, jobs of the head T apart).
fn joins_out_of_step(nodes: &[Node], r: &Responses) -> Option<usize> {
    (0..nodes.len()).find(|&i| {
        let x = &nodes[i];
        let worst = x.triggers.iter().map(|&g| r.worst[g]).max().unwrap_or(0);
        let best = x.triggers.iter().map(|&g| r.best[g]).min().unwrap_or(0);
        x.triggers.len() > 1 && worst >= x.t + best
    })
}

/// Best-case finish of each node after its head's nominal release: the sum of best-case
/// executions and shortest suspensions along its triggers, a join's latest trigger's (acyclic:
/// the model refuses cycles).
pub(crate) fn best_finishes(nodes: &[Node]) -> Vec<Time> {
    fn of(nodes: &[Node], i: usize, memo: &mut Vec<Option<Time>>) -> Time {
        if let Some(b) = memo[i] {
            return b;
        }
        let x = &nodes[i];
        let after = x.triggers.iter().map(|&g| of(nodes, g, memo)).max();
        let b = after.unwrap_or(0) + x.c_best + x.s_lo;
        memo[i] = Some(b);
        b
    }
    let mut memo = vec![None; nodes.len()];
    (0..nodes.len()).map(|i| of(nodes, i, &mut memo)).collect()
}

/// A member of a transaction as an interferer: (C', offset Φ, jitter J') — J' with the
/// suspension jitter of [`Suspension::Jitter`].
type Member = (i128, i128, i128);

/// φ_ijk = T − (Φ_k + J_k − Φ_j) mod T: the phase of member j when the critical instant is
/// member k's latest arrival (Palencia & González Harbour 1998, §3).
fn phase(t: i128, k: Member, phi_j: i128) -> i128 {
    t - (k.1 + k.2 - phi_j).rem_euclid(t)
}

/// W_k(t): the work of `members` (one transaction, period `t_tr`) in a window of length `w`
/// that starts at member k's latest arrival.
fn work(members: &[Member], k: Member, t_tr: i128, w: i128) -> i128 {
    members
        .iter()
        .map(|&(c, phi, j)| {
            let ph = phase(t_tr, k, phi);
            ((j + ph).div_euclid(t_tr) + (w - ph + t_tr - 1).div_euclid(t_tr)) * c
        })
        .sum()
}

/// The root (periodic or sporadic head) of node i's triggers: its transaction.
pub(crate) fn root(nodes: &[Node], mut i: usize) -> usize {
    while let Some(&g) = nodes[i].triggers.first() {
        i = g;
    }
    i
}

/// Task i's response under the current offsets and jitters (the overview's point 1, in the
/// offset-based form of Palencia & González Harbour 1998, §4: each task of the same CPU and
/// of equal or higher priority, and i itself, as the critical instant of i's transaction; the
/// other transactions by the maximum over theirs): (worst from its head's nominal release,
/// worst from its own release), or None if unbounded.
fn window(
    nodes: &[Node],
    i: usize,
    r: &Responses,
    mode: Suspension,
    weaken: Weaken,
) -> Option<(Time, Time)> {
    let jitter = weaken != Weaken::Jitter;
    let me = &nodes[i];
    let member = |j: usize| -> Member {
        let x = &nodes[j];
        let (c, susp) = match mode {
            Suspension::Oblivious => (x.c + x.s, 0),
            Suspension::Jitter if x.s > 0 && jitter => (x.c, r.own[j].saturating_sub(x.c)),
            Suspension::Jitter => (x.c, 0),
        };
        (c as i128, r.offset[j] as i128, (r.jitter[j] + susp) as i128)
    };
    let hp = |j: usize| j != i && nodes[j].cpu == me.cpu && nodes[j].prio >= me.prio;
    let mine = root(nodes, i);
    let mut by_tr: Vec<(usize, Vec<usize>)> = Vec::new();
    for j in (0..nodes.len()).filter(|&j| hp(j)) {
        let tr = root(nodes, j);
        match by_tr.iter_mut().find(|(t, _)| *t == tr) {
            Some((_, v)) => v.push(j),
            None => by_tr.push((tr, vec![j])),
        }
    }
    let own_tr: Vec<Member> = by_tr
        .iter()
        .filter(|(t, _)| *t == mine)
        .flat_map(|(_, v)| v.iter().map(|&j| member(j)))
        .collect();
    let others: Vec<(i128, Vec<Member>)> = by_tr
        .iter()
        .filter(|(t, _)| *t != mine)
        .map(|(t, v)| (nodes[*t].t as i128, v.iter().map(|&j| member(j)).collect()))
        .collect();
    let t_a = me.t as i128;
    let c_me = (me.c + me.s) as i128;
    let me_m: Member = (c_me, r.offset[i] as i128, r.jitter[i] as i128);
    let interference = |k: Member, w: i128| -> i128 {
        work(&own_tr, k, t_a, w)
            + others
                .iter()
                .map(|(t, ms)| ms.iter().map(|&kk| work(ms, kk, *t, w)).max().unwrap_or(0))
                .sum::<i128>()
    };
    let (mut worst, mut own) = (0i128, 0i128);
    for k in own_tr.iter().copied().chain([me_m]) {
        let ph = phase(t_a, k, me_m.1);
        let p0 = 1 - (me_m.2 + ph).div_euclid(t_a);
        let jobs_in = |l: i128| (me_m.2 + ph).div_euclid(t_a) + (l - ph + t_a - 1).div_euclid(t_a);
        let busy = fixed_point(c_me, |l| jobs_in(l) * c_me + interference(k, l))?;
        let p_l = (busy - ph + t_a - 1).div_euclid(t_a);
        if p_l - p0 > MAX_ROUNDS as i128 {
            return None;
        }
        let last = if weaken == Weaken::LaterJobs { p0 } else { p_l };
        for p in p0..=last {
            let w = fixed_point(c_me, |w| (p - p0 + 1) * c_me + interference(k, w))?;
            let from_earliest = w - ph - (p - 1) * t_a;
            worst = worst.max(from_earliest + me_m.1);
            own = own.max(from_earliest);
        }
    }
    Some((worst.max(0) as Time, own.max(c_me) as Time))
}

/// The least fixed point of `f` from `start`, or None past [`LIMIT`] or the iteration cap.
pub(crate) fn fixed_point(start: i128, f: impl Fn(i128) -> i128) -> Option<i128> {
    let mut w = start;
    for _ in 0..MAX_ITER {
        let next = f(w);
        if next > LIMIT as i128 {
            return None;
        }
        if next == w {
            return Some(w);
        }
        w = next;
    }
    None
}

/// A task on a CPU whose demand as `mode` counts it (C, or C + S when suspensions are
/// execution) is over `capacity`: Σ C'/T > capacity.
fn overloaded(nodes: &[Node], mode: Suspension, capacity: u32) -> Option<usize> {
    (0..nodes.len()).find(|&i| {
        let on = nodes
            .iter()
            .filter(|x| x.cpu == nodes[i].cpu)
            .map(|x| match mode {
                Suspension::Oblivious => (x.c + x.s, x.t),
                Suspension::Jitter => (x.c, x.t),
            });
        cmp_sum(on, capacity as u64, 1) == Ordering::Greater
    })
}

/// Whether some CPU of `nodes` is over capacity (Σ C/T > 1): no analysis bounds it.
pub fn over_capacity(nodes: &[Node]) -> Option<u32> {
    let cpus: Vec<u32> = nodes.iter().map(|x| x.cpu).collect();
    cpus.iter().copied().find(|&cpu| {
        let on = nodes.iter().filter(|x| x.cpu == cpu).map(|x| (x.c, x.t));
        cmp_sum(on, 1, 1) == Ordering::Greater
    })
}

/// The verdict of a response-time analysis of `s` under `by` and `mode` (`name`: the entry's):
/// schedulable iff every task's response from its own release is within its deadline and
/// every event chain's bound within the chain's deadline (`chains.rs`); not schedulable when
/// a CPU is over capacity; otherwise inconclusive (the analysis is sufficient).
pub fn verdict(s: &Subject<'_>, name: &str, by: Priorities, mode: Suspension) -> Verdict {
    let Some(prio) = s.priorities(by) else {
        return Verdict::new(name, None, "not every task gives a priority");
    };
    verdict_with(s, name, &prio, |n| analyse(n, mode))
}

/// The verdict of `s` by the holistic fixed point `analyse` (FP's or EDF's) of its nodes
/// under priorities `prio` (ignored by EDF).
pub(crate) fn verdict_with(
    s: &Subject<'_>,
    name: &str,
    prio: &[u32],
    analyse: impl Fn(&[Node]) -> Result<Responses, Unanalysed>,
) -> Verdict {
    let set = s.set();
    let task_name = |k: usize| &set.tasks[s.indices()[k]].name;
    let nodes = match nodes(s, prio) {
        Ok(n) => n,
        Err(e) => return Verdict::new(name, None, unanalysed(&e, &task_name)),
    };
    if let Some(cpu) = over_capacity(&nodes) {
        return Verdict::new(name, Some(false), format!("cpu {cpu}: U > 1"));
    }
    let r = match analyse(&nodes) {
        Ok(r) => r,
        Err(e) => return Verdict::new(name, None, unanalysed(&e, &task_name)),
    };
    let worst = (0..nodes.len()).max_by(|&a, &b| {
        (r.own[a] as u128 * nodes[b].d as u128).cmp(&(r.own[b] as u128 * nodes[a].d as u128))
    });
    let mut detail = match worst {
        Some(k) => format!(
            "max R/D={:.3} (task '{}': R={}ns)",
            r.own[k] as f64 / nodes[k].d as f64,
            task_name(k),
            r.own[k]
        ),
        None => "no tasks".into(),
    };
    let mut ok = (0..nodes.len()).all(|k| r.own[k] <= nodes[k].d);
    if s.indices().len() == set.tasks.len() {
        for (chain, bound) in event_bounds(set, &r) {
            detail += &format!("; chain '{}' ≤ {bound}ns", chain.name);
            if let Some(d) = chain.deadline.filter(|&d| bound > d) {
                detail += &format!(" > its deadline {d}ns");
                ok = false;
            }
        }
    }
    Verdict::new(name, ok.then_some(true), detail)
}

/// Why there is no bound, in words.
pub fn unanalysed<'a>(e: &Unanalysed, task_name: &dyn Fn(usize) -> &'a String) -> String {
    match *e {
        Unanalysed::Unbounded { task } => format!(
            "task '{}': response not bounded (its busy window does not close)",
            task_name(task)
        ),
        Unanalysed::Join { task } => format!(
            "task '{}': released by a join (trigger: {{all: …}}) whose triggers may finish out of step (a trigger's next job before another's), or one of whose triggers is of a transaction headed by another join of different heads' tasks, which the analysis does not model",
            task_name(task)
        ),
    }
}

/// One CPU or a partitioned set, sequential tasks without critical sections, triggered and
/// self-suspending tasks, any deadlines.
pub const HOLISTIC: Applies = Applies {
    cpus: Cpus::Partitioned,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Triggers,
};

/// The method an event chain's bound names (`chains.rs`).
pub const METHOD: &str = "holistic (Tindell & Clark; offsets)";

const CITATION: &str = "Tindell & Clark 1994 (jitter propagation); offsets: Palencia & González Harbour 1998; suspensions: Chen et al. 2019";

pub const FP_HOLISTIC_RM: Entry = Entry {
    name: "fp-holistic-rm",
    summary: "(partitioned) fixed priority, holistic response-time analysis with triggers' jitter, rate-monotonic priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: HOLISTIC,
    verdict: |s| verdict(s, FP_HOLISTIC_RM.name, Priorities::RateMonotonic, Suspension::Jitter),
    overheads: WithOverheads::Not,
};

pub const FP_HOLISTIC_FILE: Entry = Entry {
    name: "fp-holistic-file",
    summary: "(partitioned) fixed priority, holistic response-time analysis with triggers' jitter, the file's priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: Applies {
        priorities: true,
        ..HOLISTIC
    },
    verdict: |s| verdict(s, FP_HOLISTIC_FILE.name, Priorities::File, Suspension::Jitter),
    overheads: WithOverheads::Not,
};

/// The best case of an execution for `set` (the overview's point 2), exposed for tests.
pub fn best_case_is_wcet(set: &TaskSet) -> bool {
    set.run.execution == ExecModel::Wcet
}

/// The holistic responses of `set` under `by` (jitter-based suspensions), or why none.
pub fn responses(set: &TaskSet, by: Priorities) -> Result<Responses, String> {
    let s = Subject::whole(set);
    let prio = s
        .priorities(by)
        .ok_or_else(|| "not every task gives a priority".to_string())?;
    responses_with(set, &prio, |n| analyse(n, Suspension::Jitter))
}

/// The responses of `set` by the holistic fixed point `analyse` under priorities `prio`.
pub(crate) fn responses_with(
    set: &TaskSet,
    prio: &[u32],
    analyse: impl Fn(&[Node]) -> Result<Responses, Unanalysed>,
) -> Result<Responses, String> {
    let m = set.platform.cpus;
    if m > 1 {
        if let Some(t) = set.tasks.iter().find(|t| t.cpu.is_none()) {
            return Err(format!(
                "task '{}' gives no cpu: the analysis is for one CPU or a partitioned set",
                t.name
            ));
        }
    }
    if registry::parallel(set).is_some() || registry::has_sections(set) {
        return Err("parallel tasks and critical sections are not modelled".into());
    }
    let s = Subject::whole(set);
    let names: Vec<&String> = set.tasks.iter().map(|t| &t.name).collect();
    let name = |k: usize| names[k];
    let nodes = nodes(&s, prio).map_err(|e| unanalysed(&e, &name))?;
    if let Some(cpu) = over_capacity(&nodes) {
        return Err(format!("cpu {cpu} is over capacity (U > 1)"));
    }
    analyse(&nodes).map_err(|e| unanalysed(&e, &name))
}

/// Each event chain of `set` and its latency bound under the responses `r` (the overview's
/// point 6).
pub fn event_bounds<'a>(set: &'a TaskSet, r: &Responses) -> Vec<(&'a Chain, Time)> {
    let n = nodes(&Subject::whole(set), &vec![0; set.tasks.len()]).unwrap_or_default();
    set.chains
        .iter()
        .filter(|c| c.communication.is_none())
        .map(|c| (c, chain_latency(set, &n, c, r)))
        .collect()
}

/// The latency bound of event chain `c` (the overview's point 6) from the responses `r` of
/// the nodes `n` of `set`.
pub fn chain_latency(set: &TaskSet, n: &[Node], c: &Chain, r: &Responses) -> Time {
    let tasks: Vec<usize> = c.tasks.iter().map(|&t| t as usize).collect();
    let longest = |q: usize| {
        let h = &set.tasks[root(n, q)];
        h.max_interarrival.unwrap_or(h.period)
    };
    // The part from `start` (a chain index) to `end`: from the first task's release, or from
    // a join's actual release.
    let part = |start: usize, end: usize| -> Time {
        let (first, last) = (tasks[start], tasks[end]);
        match start {
            0 => r.worst[last].saturating_sub(r.offset[first]),
            _ => r.worst[last].min(tasks[start..=end].iter().map(|&x| r.own[x]).sum()),
        }
    };
    // W_q: the longest time between two finishes of q.
    let gap = |q: usize| longest(q) + r.worst[q].saturating_sub(r.best[q]);
    let (mut bound, mut start) = (0 as Time, 0);
    for k in 1..tasks.len() {
        let joined = n.get(tasks[k]).map_or(&[][..], |x| &x.joined[..]);
        if !joined.is_empty() {
            let a = tasks[k - 1];
            let others = joined.iter().filter(|&&q| q != a).map(|&q| gap(q)).max();
            // An instance is counted only if A's next job finishes after the release.
            bound += part(start, k - 1) + others.unwrap_or(0).min(gap(a));
            start = k;
        }
    }
    bound + part(start, tasks.len() - 1)
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

    /// The issue's chain by hand: a (T 10, C 2, prio 5), b (trigger a, C 3, prio 4). a: R = 2,
    /// best 2, so b has Φ = 2, J = 0. With a's arrival as the critical instant b arrives at
    /// phase 2 and ends at 5; with b's own, a's job of the same instance is before it (phase 8
    /// past it) and the next at 10: 3. R^w(b) = 5 from a's release, 3 from b's. (Without the
    /// offsets — Tindell & Clark's jitter alone — a's job would be counted again: 7.)
    #[test]
    fn the_issues_chain_by_hand() {
        let r = analyse(
            &[node(2, 10, 5, None), node(3, 10, 4, Some(0))],
            Suspension::Jitter,
        )
        .unwrap();
        assert_eq!(r.worst, vec![2 * MS, 5 * MS]);
        assert_eq!(r.best, vec![2 * MS, 5 * MS]);
        assert_eq!((r.offset[1], r.jitter[1]), (2 * MS, 0));
        assert_eq!(r.own, vec![2 * MS, 3 * MS]);
    }

    /// A higher-priority suspending task h (C 1, S 4, T 10) above l (C 3, T 20). Oblivious:
    /// l sees C'_h = 5: w = 3 + 5 = 8. Jitter: R^own_h = 5, J'_h = 4; w = 3 + ⌈(w + 4)/10⌉·1 →
    /// 4 (⌈8/10⌉ = 1) → 4. Dropping the jitter gives the same here; with l's C = 8:
    /// w = 8 + ⌈(w + 4)/10⌉ → 9 → 10 (⌈14/10⌉ = 2) → 10; without jitter 9.
    #[test]
    fn suspension_oblivious_and_jitter_by_hand() {
        let mut h = node(1, 10, 2, None);
        h.s = 4 * MS;
        let l = node(3, 20, 1, None);
        let ob = analyse(&[h.clone(), l.clone()], Suspension::Oblivious).unwrap();
        assert_eq!(ob.own, vec![5 * MS, 8 * MS]);
        let ji = analyse(&[h.clone(), l], Suspension::Jitter).unwrap();
        assert_eq!(ji.own, vec![5 * MS, 4 * MS]);
        let l8 = node(8, 20, 1, None);
        assert_eq!(
            analyse(&[h, l8], Suspension::Jitter).unwrap().own[1],
            10 * MS
        );
    }

    /// A transaction interfering: a (C 1, T 10, prio 3) triggers b (C 4, prio 2) on one CPU
    /// beside c (C 2, T 10, prio 1). b: Φ = 1, J = 0, R^w = 5. c sees a's transaction at its
    /// worst phase (a's arrival): 1 + 4 in any window up to 10: w = 2 + 5 = 7.
    /// Over capacity on a CPU is found before iterating.
    #[test]
    fn a_triggered_interferer_and_over_capacity() {
        let n = [
            node(1, 10, 3, None),
            node(4, 10, 2, Some(0)),
            node(2, 10, 1, None),
        ];
        let r = analyse(&n, Suspension::Jitter).unwrap();
        assert_eq!(r.worst, vec![MS, 5 * MS, 7 * MS]);
        assert_eq!(over_capacity(&n), None);
        let heavy = [node(6, 10, 2, None), node(5, 10, 1, None)];
        assert_eq!(over_capacity(&heavy), Some(0));
        assert_eq!(
            analyse(&heavy, Suspension::Jitter),
            Err(Unanalysed::Unbounded { task: 0 })
        );
    }

    /// Lehoczky's example of arbitrary deadlines (RTSS 1990), in ms, with a suspension: h
    /// (C 26, T 70) above l (C 60 + S 2, T 100, D 300). l's level-1 window holds 7 of its jobs
    /// (U = 0.991); job q ends at w_q = (q + 1)·62 + ⌈w_q/70⌉·26: 114, 202, 316, 404, 518, 606,
    /// 694, responding 114, 102, 116, 104, 118, 106, 94: R_l = 118 (job 4), where the first job
    /// alone gives 114 (the negative control) and the window was refused before.
    #[test]
    fn a_suspending_window_of_several_jobs_by_hand() {
        let h = node(26, 70, 2, None);
        let mut l = node(60, 100, 1, None);
        (l.s, l.s_lo, l.d) = (2 * MS, 2 * MS, 300 * MS);
        let n = [h, l];
        assert_eq!(analyse(&n, Suspension::Jitter).unwrap().own[1], 118 * MS);
        assert_eq!(analyse_first_job_only(&n).unwrap().own[1], 114 * MS);
    }

    /// A join across transactions by hand (docs/chains.md's worked join): a (T 10, C 1, prio
    /// 3), b (T 20, C 2, prio 2), j (`trigger: {all: [a, b]}`, C 1, prio 1) on one CPU. a: R^w
    /// = R^b = 1; b: 2 + ⌈w/10⌉·1 → 3, R^b 2. j heads its own transaction: T = 20 (the longest
    /// trigger's), jitter T + R^w_b − R^b_b = 21 (b the trigger of period ≥ 20), offset 0.
    /// Chain [a, j]: R^w(a) − φ(a) = 1, the wait min(W_b = 20 + 1, W_a = 10 + 0) = 10, then
    /// min(R^w(j), R_j); chain [b, j]: 3, min(W_a, W_b) = 10, the same last part.
    #[test]
    fn a_join_across_transactions_by_hand() {
        let y = "platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, priority: 3}\n  - {name: b, period: 20, wcet: 2, priority: 2}\n  - {name: j, trigger: {all: [a, b]}, deadline: 20, wcet: 1, priority: 1}\nchains:\n  - {name: aj, tasks: [a, j]}\n  - {name: bj, tasks: [b, j]}\n";
        let set = rtsched_model::parse_taskset(y, rtsched_model::Format::Yaml, "j.yaml").unwrap();
        let s = Subject::whole(&set);
        let n = nodes(&s, &s.priorities(Priorities::File).unwrap()).unwrap();
        assert_eq!((n[2].joined.clone(), n[2].triggers.len()), (vec![0, 1], 0));
        let r = analyse(&n, Suspension::Jitter).unwrap();
        assert_eq!((r.worst[0], r.worst[1], r.best[1]), (MS, 3 * MS, 2 * MS));
        assert_eq!((r.offset[2], r.jitter[2]), (0, 21 * MS));
        let last = r.worst[2].min(r.own[2]);
        let b: Vec<Time> = event_bounds(&set, &r).into_iter().map(|(_, b)| b).collect();
        assert_eq!(b, vec![MS + 10 * MS + last, 3 * MS + 10 * MS + last]);
    }

    /// A join by hand: h (T 10, C 1, prio 4) triggers a (C 2, prio 3) and b (C 3, prio 2), j
    /// (C 1, prio 1) joins a and b. Best finishes: h 1, a 3, b 4; j's offset max(3, 4) = 4.
    /// Worst: a 1 + 2 = 3, b 1 + 2 + 3 = 6: j's jitter 6 − 4 = 2; j runs after all three of
    /// its instance: 7. A join of a and a task x of another head is refused, naming j.
    #[test]
    fn a_join_by_hand() {
        let mut j = node(1, 10, 1, None);
        j.triggers = vec![1, 2];
        let n = [
            node(1, 10, 4, None),
            node(2, 10, 3, Some(0)),
            node(3, 10, 2, Some(0)),
            j.clone(),
        ];
        let r = analyse(&n, Suspension::Jitter).unwrap();
        assert_eq!(r.worst, vec![MS, 3 * MS, 6 * MS, 7 * MS]);
        assert_eq!((r.offset[3], r.jitter[3]), (4 * MS, 2 * MS));
        j.triggers = vec![1, 4];
        let across = [
            node(1, 10, 4, None),
            node(2, 10, 3, Some(0)),
            node(3, 10, 2, Some(0)),
            j,
            node(1, 20, 5, None),
        ];
        assert_eq!(
            analyse(&across, Suspension::Jitter),
            Err(Unanalysed::Join { task: 3 })
        );
    }
}
