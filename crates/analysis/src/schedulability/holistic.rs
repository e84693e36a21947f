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
//!    task under analysis only (its §5.2). Both analyses here take a suspending task's window
//!    to one job (R ≤ T); one that needs more is reported unbounded rather than guessed.
//! 4. **Not modelled**: a `trigger: {all: [...]}` join (its release is the latest of several
//!    finishes at different rates; refused, naming the task), critical sections and parallel
//!    tasks (the registry refuses them), overheads. The chain bound of `chains.rs` reads
//!    `R^w(last) − φ(first)`.
//!
//! Registry entries: `fp-holistic-rm` and `fp-holistic-file` (one CPU, or every task's
//! `cpu`; triggered and self-suspending tasks, suspensions by jitter).

use super::registry::{
    self, Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::{cmp_sum, Verdict};
use rtsched_model::{Chain, ExecModel, TaskSet, Time};
use std::cmp::Ordering;

/// A window or response beyond this (about 13 days) is unbounded.
pub const LIMIT: Time = 1 << 50;
/// Cap of the outer (jitter) and inner (window) fixed-point iterations.
const MAX_ITER: u32 = 100_000;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// The node whose finished jobs release this one's.
    pub trigger: Option<usize>,
}

/// Why the analysis gives no bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unanalysed {
    /// Task `task`'s window does not close within [`LIMIT`] (or a suspending task needs more
    /// than one job in it).
    Unbounded { task: usize },
    /// Task `task` is released by a join (`trigger: {all: [...]}`).
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

/// The nodes of `s`'s tasks under priorities `prio`, on CPU `cpu` of each (0 on one CPU).
pub fn nodes(s: &Subject<'_>, prio: &[u32]) -> Result<Vec<Node>, Unanalysed> {
    let set = s.set();
    let exact = set.run.execution == ExecModel::Wcet;
    let local = |g: usize| s.indices().iter().position(|&i| i == g);
    s.tasks()
        .enumerate()
        .map(|(k, t)| {
            let trigger = match &t.trigger {
                Some(tr) if tr.all || tr.tasks.len() != 1 => {
                    return Err(Unanalysed::Join { task: k })
                }
                Some(tr) => Some(local(tr.tasks[0] as usize).ok_or(Unanalysed::Join { task: k })?),
                None => None,
            };
            Ok(Node {
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
                trigger,
            })
        })
        .collect()
}

/// The holistic fixed point of `nodes` (the overview's points 1–3).
pub fn analyse(nodes: &[Node], mode: Suspension) -> Result<Responses, Unanalysed> {
    fixed_point_of(nodes, mode, true)
}

/// A negative control, not an analysis: the fixed point with every release jitter and
/// suspension jitter held at 0 (offsets kept), which the simulator refutes
/// (tests/chains_vs_sim.rs).
#[doc(hidden)]
pub fn analyse_without_jitter(nodes: &[Node]) -> Result<Responses, Unanalysed> {
    fixed_point_of(nodes, Suspension::Jitter, false)
}

fn fixed_point_of(nodes: &[Node], mode: Suspension, jitter: bool) -> Result<Responses, Unanalysed> {
    let n = nodes.len();
    if let Some(task) = overloaded(nodes, mode) {
        return Err(Unanalysed::Unbounded { task });
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
        .map(|x| x.trigger.map_or(0, |g| best[g]))
        .collect();
    let mut r = Responses {
        worst: vec![0; n],
        best,
        own: nodes.iter().map(|x| x.c + x.s).collect(),
        jitter: vec![0; n],
        offset,
    };
    for _ in 0..MAX_ITER {
        let mut worst = vec![0; n];
        let mut own = vec![0; n];
        for i in 0..n {
            let (w, o) =
                window(nodes, i, &r, mode, jitter).ok_or(Unanalysed::Unbounded { task: i })?;
            worst[i] = w;
            own[i] = o;
        }
        let jitter: Vec<Time> = nodes
            .iter()
            .map(|x| match x.trigger {
                Some(g) if jitter => worst[g] - r.best[g],
                _ => 0,
            })
            .collect();
        let settled = jitter == r.jitter && own == r.own && worst == r.worst;
        (r.worst, r.own, r.jitter) = (worst, own, jitter);
        if settled {
            return Ok(r);
        }
        if let Some(task) = r.worst.iter().position(|&w| w > LIMIT.min(horizon)) {
            return Err(Unanalysed::Unbounded { task });
        }
    }
    Err(Unanalysed::Unbounded { task: 0 })
}

/// Best-case finish of each node after its head's nominal release: the sum of best-case
/// executions and shortest suspensions along its triggers (acyclic: the model refuses cycles).
fn best_finishes(nodes: &[Node]) -> Vec<Time> {
    fn of(nodes: &[Node], i: usize, memo: &mut Vec<Option<Time>>) -> Time {
        if let Some(b) = memo[i] {
            return b;
        }
        let x = nodes[i];
        let b = x.trigger.map_or(0, |g| of(nodes, g, memo)) + x.c_best + x.s_lo;
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
fn root(nodes: &[Node], mut i: usize) -> usize {
    while let Some(g) = nodes[i].trigger {
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
    jitter: bool,
) -> Option<(Time, Time)> {
    let me = nodes[i];
    let member = |j: usize| -> Member {
        let x = nodes[j];
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
        if p_l - p0 > MAX_ITER as i128 {
            return None;
        }
        if me.s > 0 && p_l > p0 {
            return None; // a suspending task's window of more than one job: not analysed
        }
        for p in p0..=p_l {
            let w = fixed_point(c_me, |w| (p - p0 + 1) * c_me + interference(k, w))?;
            let from_earliest = w - ph - (p - 1) * t_a;
            worst = worst.max(from_earliest + me_m.1);
            own = own.max(from_earliest);
        }
    }
    Some((worst.max(0) as Time, own.max(c_me) as Time))
}

/// The least fixed point of `f` from `start`, or None past [`LIMIT`] or the iteration cap.
fn fixed_point(start: i128, f: impl Fn(i128) -> i128) -> Option<i128> {
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
/// execution) is over capacity: Σ C'/T > 1.
fn overloaded(nodes: &[Node], mode: Suspension) -> Option<usize> {
    (0..nodes.len()).find(|&i| {
        let on = nodes
            .iter()
            .filter(|x| x.cpu == nodes[i].cpu)
            .map(|x| match mode {
                Suspension::Oblivious => (x.c + x.s, x.t),
                Suspension::Jitter => (x.c, x.t),
            });
        cmp_sum(on, 1, 1) == Ordering::Greater
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
    let set = s.set();
    let task_name = |k: usize| &set.tasks[s.indices()[k]].name;
    let nodes = match nodes(s, &prio) {
        Ok(n) => n,
        Err(e) => return Verdict::new(name, None, unanalysed(&e, &task_name)),
    };
    if let Some(cpu) = over_capacity(&nodes) {
        return Verdict::new(name, Some(false), format!("cpu {cpu}: U > 1"));
    }
    let r = match analyse(&nodes, mode) {
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
            "task '{}': response not bounded (its busy window does not close, or a suspending task's spans more than one job)",
            task_name(task)
        ),
        Unanalysed::Join { task } => format!(
            "task '{}': released by a join (trigger: {{all: …}}), which the analysis does not model",
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
    let prio = s
        .priorities(by)
        .ok_or_else(|| "not every task gives a priority".to_string())?;
    let names: Vec<&String> = set.tasks.iter().map(|t| &t.name).collect();
    let name = |k: usize| names[k];
    let nodes = nodes(&s, &prio).map_err(|e| unanalysed(&e, &name))?;
    if let Some(cpu) = over_capacity(&nodes) {
        return Err(format!("cpu {cpu} is over capacity (U > 1)"));
    }
    analyse(&nodes, Suspension::Jitter).map_err(|e| unanalysed(&e, &name))
}

/// Each event chain of `set` and its latency bound under the responses `r`.
pub fn event_bounds<'a>(set: &'a TaskSet, r: &Responses) -> Vec<(&'a Chain, Time)> {
    set.chains
        .iter()
        .filter(|c| c.communication.is_none())
        .map(|c| {
            let first = c.tasks[0] as usize;
            let last = *c.tasks.last().expect("a chain has tasks") as usize;
            (c, r.worst[last].saturating_sub(r.offset[first]))
        })
        .collect()
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
            trigger,
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
        let ob = analyse(&[h, l], Suspension::Oblivious).unwrap();
        assert_eq!(ob.own, vec![5 * MS, 8 * MS]);
        let ji = analyse(&[h, l], Suspension::Jitter).unwrap();
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
}
