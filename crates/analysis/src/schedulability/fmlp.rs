//! Blocking under the FMLP+ for partitioned fixed priority, with suspension-aware
//! response-time analysis (Brandenburg, *The FMLP+: an asymptotically optimal real-time
//! locking protocol for suspension-aware analysis*, ECRTS 2014; the partitioned protocol and
//! its analysis are those of Brandenburg's dissertation, UNC 2011, §6, which the paper
//! generalises), as the simulator applies it (`crates/runtime/src/ledger/locking/fmlp.rs`;
//! docs/locking.md "Suspending: fmlp+").
//!
//! The protocol: FIFO queues; a waiting job suspends; a holder is priority boosted, boosted
//! jobs ordered by the time they issued their requests. Local and global resources alike.
//! With L_x the longest section of task x, and τ_i on CPU k:
//!
//! - *Remote blocking* (the paper's direct and transitive boost blocking from other CPUs, the
//!   time τ_i is suspended): a request R of τ_i for q can be delayed only by requests issued
//!   before R and still outstanding, at most one per other task (one job at a time, no
//!   nesting): one of each task whose request for q is ahead of R in the FIFO queue, and one
//!   of each task boosted above such a holder on the holder's CPU (boosted earlier). So R
//!   waits, for the CPUs c ≠ k where q is used, at most Σ_{x on c} L_x:
//!   remote_i = Σ over τ_i's sections s of Σ_{c ≠ k uses s.resource} Σ_{x on c} L_x.
//! - *Local blocking* (boost blocking on k): a lower-priority job of k runs while τ_i is ready
//!   only when boosted, holding a resource it requested before τ_i's release or while τ_i was
//!   suspended (it cannot run otherwise, and a released section ends its boost): at most
//!   1 + S_i of its requests, S_i the number of τ_i's sections on a resource another task uses
//!   (how often τ_i can suspend): local_i = Σ_{x on k, prio_x < prio_i} (1 + S_i)·L_x. A
//!   lower-priority section τ_i waits for on k is one of these.
//! - B_i = remote_i + local_i (the dissertation's bound without its per-interval caps on
//!   how many jobs of x fit in R_i; a section of a higher-priority task of k is in its WCET).
//!
//! Suspension-aware per-CPU RTA (a higher-priority self-suspending task as released with
//! jitter, Chen et al., *Many suspensions, many problems*, Real-Time Systems 2019, the form
//! proved sound there): R_i = C_i + B_i + Σ_{h ∈ hp(i)} ⌈(R_i + J_h)/T_h⌉·C_h, J_h = R_h − C_h
//! for a task that can suspend (S_h > 0), else 0. Constrained deadlines (D ≤ T) only; a
//! higher-priority task without a bound leaves τ_i without one. With blocking the test is
//! sufficient, as for the other protocols.

use super::bounds::{self, Quantity};
use super::fp_response::response_time;
use super::registry::Subject;
use super::Verdict;
use rtsched_model::{Task, TaskSet, Time};

/// "Not applicable" for test `name` when a task of `s` has D > T: FMLP+'s bounds (FP here,
/// EDF in fmlp_edf.rs) are for constrained deadlines; `which` names the bound in the message.
pub(super) fn unconstrained(s: &Subject<'_>, name: &str, which: &str) -> Option<Verdict> {
    let t = s.tasks().find(|t| t.deadline > t.period)?;
    Some(Verdict::new(
        name,
        None,
        format!(
            "not applicable: the FMLP+ bound {which} is for constrained deadlines, and '{}' has D > T",
            t.name
        ),
    ))
}

/// The per-CPU FP test `name` under FMLP+ for subject `s` with priorities `p` (per task of
/// `s`): each task's bound with its blocking term B_i (remote + local); sufficient.
pub fn verdict(s: &Subject<'_>, name: &str, p: &[u32]) -> Verdict {
    let ts = s.set();
    if let Some(v) = unconstrained(s, name, "here") {
        return v;
    }
    let b: Vec<Time> = terms(ts, s.indices(), p, true)
        .iter()
        .map(|&(remote, local)| remote + local)
        .collect();
    let r = response_times(ts, s.indices(), p, &b);
    let rows = bounds::with_blocking(bounds::of(s, Quantity::ResponseTime, &r), &b);
    let ok = r.iter().all(Option::is_some);
    let verdict = if ok || b.iter().all(|&x| x == 0) {
        Some(ok)
    } else if (0..b.len()).all(|i| response_time(s.cdt(), p, i).is_some()) {
        None
    } else {
        Some(false)
    };
    let detail = format!(
        "{}; blocking under fmlp+ charged (suspension-aware: remote and boost blocking, higher-priority suspending tasks with jitter R − C)",
        bounds::worst_in_words(&rows)
    );
    Verdict::new(name, verdict, detail).with_tasks(rows)
}

/// The longest section of `t` (0 without).
fn longest(t: &Task) -> Time {
    t.sections.iter().map(|s| s.length).max().unwrap_or(0)
}

/// S_i: how many of `t`'s sections are on a resource another task uses (each may suspend).
pub fn suspensions(ts: &TaskSet, i: usize) -> u64 {
    ts.tasks[i]
        .sections
        .iter()
        .filter(|s| ts.users(s.resource as usize).any(|x| x != i))
        .count() as u64
}

/// The longest one request of task `i` for resource `q` waits, from other CPUs: Σ over the
/// CPUs c other than `i`'s where `q` is used of Σ_{x on c} L_x.
pub fn request_wait(ts: &TaskSet, i: usize, q: usize) -> Time {
    let k = ts.tasks[i].cpu;
    let mut cpus: Vec<Option<u32>> = ts
        .users(q)
        .map(|x| ts.tasks[x].cpu)
        .filter(|&c| c != k)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    ts.tasks
        .iter()
        .filter(|x| cpus.contains(&x.cpu))
        .map(longest)
        .sum()
}

/// FMLP+'s terms for the tasks `idx` of `ts` (one CPU's) under priorities `prio` (per task
/// of `idx`, larger is more urgent): each task's (remote_i, local_i). With `boost` false the
/// local term is left out (the control of the property test).
pub fn terms(ts: &TaskSet, idx: &[usize], prio: &[u32], boost: bool) -> Vec<(Time, Time)> {
    (0..idx.len())
        .map(|a| {
            let t = &ts.tasks[idx[a]];
            let remote = t
                .sections
                .iter()
                .map(|s| request_wait(ts, idx[a], s.resource as usize))
                .sum();
            let times = 1 + suspensions(ts, idx[a]);
            let local = (0..idx.len())
                .filter(|&x| boost && prio[x] < prio[a])
                .map(|x| times * longest(&ts.tasks[idx[x]]))
                .sum();
            (remote, local)
        })
        .collect()
}

/// The suspension-aware response times of the tasks `idx` of `ts` (one CPU's) with blocking
/// `b` under `prio` (both per task of `idx`): the overview's recurrence, from the most urgent
/// task down; `None` past a deadline. A task of equal priority that can suspend and whose
/// bound is not known yet (it comes later) leaves no bound.
pub fn response_times(ts: &TaskSet, idx: &[usize], prio: &[u32], b: &[Time]) -> Vec<Option<Time>> {
    let mut order: Vec<usize> = (0..idx.len()).collect();
    order.sort_by_key(|&a| std::cmp::Reverse(prio[a]));
    let mut r: Vec<Option<Time>> = vec![None; idx.len()];
    for &a in &order {
        let me = &ts.tasks[idx[a]];
        // Higher or equal priority (equal counted as higher): (C, T, J), or no bound.
        let hp: Option<Vec<(Time, Time, Time)>> = (0..idx.len())
            .filter(|&h| h != a && prio[h] >= prio[a])
            .map(|h| {
                let x = &ts.tasks[idx[h]];
                let jitter = match suspensions(ts, idx[h]) {
                    0 => Some(0),
                    _ => r[h].map(|rh| rh - x.wcet),
                };
                jitter.map(|j| (x.wcet, x.period, j))
            })
            .collect();
        let Some(hp) = hp else { continue };
        let own = me.wcet as u128 + b[a] as u128;
        let mut w = own;
        r[a] = loop {
            let next = own
                + hp.iter()
                    .map(|&(c, t, j)| (w as Time).saturating_add(j).div_ceil(t) as u128 * c as u128)
                    .sum::<u128>();
            if next > me.deadline.min(me.period) as u128 {
                break None;
            }
            if next == w {
                break Some(w as Time);
            }
            w = next;
        };
    }
    r
}
