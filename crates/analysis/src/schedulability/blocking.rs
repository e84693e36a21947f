//! Blocking terms: how long a job can wait for lower-priority work holding a resource, under
//! the locking protocols the simulator applies (docs/locking.md, "Analysis").
//!
//! - `pcp` (immediate ceiling) under fixed priority: a job of τ_i is blocked at most once, for
//!   one section of one lower-priority task on a resource whose ceiling (its users' highest
//!   priority) is at least prio_i (Sha, Rajkumar & Lehoczky, IEEE TC 1990, Theorem 12; the
//!   immediate form in the OSEK/AUTOSAR literature): B_i = max over such sections. The same
//!   for `pcp:original`, the protocol that theorem is about.
//! - `srp` under fixed priority: the same bound, the ceiling being Baker's (the highest
//!   preemption level of the users, levels by relative deadline), when the levels agree with
//!   the priorities (a lower-priority task never has a shorter deadline; otherwise Baker's
//!   single-blocking result does not hold and the test says so).
//! - `pip` under fixed priority: a job of τ_i is blocked at most once by each lower-priority
//!   job and at most once on each resource whose ceiling is at least prio_i, each time for at
//!   most one section (Sha et al. 1990, Theorems 6 and 8), so B_i = min(Σ over lower tasks of
//!   their longest such section, Σ over such resources of their longest lower-priority
//!   section). Nested sections under `pip` (transitive blocking, deadlock) are not bounded.
//! - `srp` under EDF: Baker's condition (Real-Time Systems 1991, Theorem 8; the blocking-aware
//!   demand test of Baruah, "Resource sharing in EDF-scheduled systems", RTSS 2006): for every
//!   L, dbf(L) + B(L) ≤ L, with B(L) the longest section of a task of relative deadline > L on
//!   a resource used by a task of relative deadline ≤ L (`edf_blocking`).
//! - `pcp` and `pip` under EDF (as the simulator applies them: `pcp` lends a holder the
//!   absolute deadline its resource's most urgent user would have *at the holder's release*,
//!   `pip` the earliest deadline of its waiters; docs/locking.md "How the policy sees them"),
//!   in the same demand test h(L) + B(L) ≤ L ([`edf_term`]). A job with a later absolute
//!   deadline than J runs while J is pending only while holding a resource it locked before J
//!   arrived (it cannot run, hence lock, on its own deadline while J waits), so it was released
//!   earlier and has the longer relative deadline: in EDF only tasks of longer relative deadline
//!   block (Liu, *Real-Time Systems*, 2000, §8.6; Baker 1991's preemption levels). In the
//!   busy window [t0, t0 + L) before a missed deadline such a job runs only lent a deadline
//!   inside the window:
//!   - under `pcp` a lower job j lends itself r_j + D_min(r) ≤ t0 + L < r_j + D_j: r is used by
//!     a task of shorter relative deadline than j (not only one of D ≤ L: the lent deadline is
//!     anchored at j's release, which can be long before t0). At most one such job runs in
//!     the window (a second one would have had to lock while the first held a deadline
//!     earlier than its own), for one stretch: B(L) = the longest stretch of a task with
//!     D_j > L on a resource used by a task with D < D_j — at least SRP's B(L), so the
//!     simulated `pcp` under EDF is no SRP (a job may wait for a resource none of whose users is
//!     more urgent than it);
//!   - under `pip` the lent deadline is a waiter's, a job of the window (D ≤ L); each lower
//!     job runs for one section and each resource has one holder at t0 (sections do not nest:
//!     nesting is refused), so B(L) = min(Σ over tasks with D > L of their longest stretch on
//!     resources used by a task with D ≤ L, Σ over those resources of their longest section
//!     of a task with D > L) — the form of Sha et al.'s two counts with "lower priority" read
//!     as "longer relative deadline" (Spuri, *Analysis of deadline scheduled real-time
//!     systems*, INRIA RR-2772, 1996, for EDF with inheritance). One job's own blocking (the
//!     per-task row, [`edf_job_terms`]) can be larger than B(D_i): a waiter that lends the
//!     holder its deadline may have arrived before J with a longer relative deadline, so the
//!     resources counted are those used by a task of shorter deadline than the holder.
//!
//!   These terms are derived here for the simulator's rules, and checked against it
//!   (`crates/analysis/tests/locking_vs_sim.rs`); `pcp:original` under EDF is not bounded.
//!
//! A "section" here is a *stretch*: the maximal run of a task's work (in one thread) during
//! which it holds at least one of the resources that matter, so nested or back-to-back
//! sections count as one, as long as the holder keeps a raised priority (or the system
//! ceiling stays up) through them.
//!
//! Only local resources (every user on one CPU) and one protocol class per set are bounded
//! here: a plain FIFO mutex (`none`) lets a medium-priority job prolong the wait without bound,
//! and global resources need a multiprocessor protocol's bound — MSRP's and MrsP's (without
//! helping) are in `spinning.rs`, FMLP+'s in `fmlp.rs`; OMLP's (global scheduling) in `omlp.rs`.
//! `registry::Applies::models` refuses the other sets before a test runs.

use rtsched_model::{CriticalSection, Protocol, Task, TaskSet, Time};

/// The longest stretch of `t`'s work during which it holds some resource `holds` accepts
/// (sections in one thread merged when they overlap or touch), 0 when it holds none.
pub fn longest_stretch(t: &Task, holds: impl Fn(usize) -> bool) -> Time {
    stretch_with(t, holds, |_| 0)
}

/// [`longest_stretch`] with each section of the stretch lengthened by `extra(s)` (MSRP's spin
/// before a global section, `spinning.rs`): the stretch's span plus its sections' extras.
pub fn stretch_with(
    t: &Task,
    holds: impl Fn(usize) -> bool,
    extra: impl Fn(&CriticalSection) -> Time,
) -> Time {
    let mut iv: Vec<&CriticalSection> = t
        .sections
        .iter()
        .filter(|s| holds(s.resource as usize))
        .collect();
    iv.sort_unstable_by_key(|s| (s.region, s.thread, s.start, s.end()));
    // (region, thread, start, end, extras) of the stretch being merged.
    let mut best = 0;
    let mut cur: Option<(u32, u32, Time, Time, Time)> = None;
    for s in iv {
        let x = extra(s);
        cur = match cur {
            Some((r, th, a, b, e)) if (r, th) == (s.region, s.thread) && s.start <= b => {
                Some((r, th, a, b.max(s.end()), e + x))
            }
            prev => {
                best = best.max(prev.map_or(0, |(_, _, a, b, e)| b - a + e));
                Some((s.region, s.thread, s.start, s.end(), x))
            }
        };
    }
    best.max(cur.map_or(0, |(_, _, a, b, e)| b - a + e))
}

/// Whether two sections of `t` on different resources overlap in one thread (nesting).
pub fn nests(t: &Task) -> bool {
    t.sections.iter().enumerate().any(|(k, a)| {
        t.sections[k + 1..].iter().any(|b| {
            (a.region, a.thread) == (b.region, b.thread)
                && a.resource != b.resource
                && a.start < b.end()
                && b.start < a.end()
        })
    })
}

/// The one protocol of the resources `ts`'s sections use, or the first two that differ (by
/// resource index), or `None` when no task has a section.
pub fn protocol_of(ts: &TaskSet) -> Result<Option<Protocol>, (usize, usize)> {
    let mut used: Vec<usize> = ts
        .tasks
        .iter()
        .flat_map(|t| t.sections.iter().map(|s| s.resource as usize))
        .collect();
    used.sort_unstable();
    used.dedup();
    let Some(&first) = used.first() else {
        return Ok(None);
    };
    match used.iter().find(|&&r| ts.protocol(r) != ts.protocol(first)) {
        Some(&r) => Err((first, r)),
        None => Ok(Some(ts.protocol(first))),
    }
}

/// A resource `ts`'s sections use whose users are on different CPUs (or give none), on a
/// platform of several CPUs: a global resource.
pub fn global_resource(ts: &TaskSet) -> Option<usize> {
    if ts.platform.cpus <= 1 {
        return None;
    }
    (0..ts.resources.len()).find(|&r| {
        let mut cpus = ts.users(r).map(|t| ts.tasks[t].cpu);
        match cpus.next() {
            Some(first) => first.is_none() || cpus.any(|c| c != first),
            None => false,
        }
    })
}

/// Fixed priority: each task's blocking term B_i under protocol `p`, for `tasks` (one CPU's,
/// every user of their resources among them) with priorities `prio` (larger is more urgent).
/// `Err((hi, lo))` under `srp` when task `lo` has a lower priority than task `hi` but a
/// shorter relative deadline (Baker's levels disagree with the priorities).
pub fn fp_blocking(
    tasks: &[&Task],
    prio: &[u32],
    p: Protocol,
) -> Result<Vec<Time>, (usize, usize)> {
    let n = tasks.len();
    let uses = |j: usize, r: usize| tasks[j].sections.iter().any(|s| s.resource as usize == r);
    let users = |r: usize| (0..n).filter(move |&j| uses(j, r));
    if p == Protocol::Srp {
        for i in 0..n {
            if let Some(j) =
                (0..n).find(|&j| prio[j] < prio[i] && tasks[j].deadline < tasks[i].deadline)
            {
                return Err((i, j));
            }
        }
    }
    let b = |i: usize| -> Time {
        // The resources whose ceiling reaches τ_i.
        let reaches = |r: usize| match p {
            Protocol::Srp => users(r).any(|j| tasks[j].deadline <= tasks[i].deadline),
            _ => users(r).any(|j| prio[j] >= prio[i]),
        };
        let lower: Vec<usize> = (0..n).filter(|&j| prio[j] < prio[i]).collect();
        match p {
            Protocol::Pip => pip_term(tasks, &lower, |r, _| reaches(r)),
            _ => lower
                .iter()
                .map(|&j| longest_stretch(tasks[j], reaches))
                .max()
                .unwrap_or(0),
        }
    };
    Ok((0..n).map(b).collect())
}

/// EDF under `srp`: B(L), the longest stretch of a task with relative deadline > L on the
/// resources some task with relative deadline ≤ L uses (Baker's ceiling reaches L).
pub fn edf_blocking(tasks: &[&Task], l: Time) -> Time {
    let short = |r: usize| {
        tasks
            .iter()
            .any(|t| t.deadline <= l && t.sections.iter().any(|s| s.resource as usize == r))
    };
    tasks
        .iter()
        .filter(|t| t.deadline > l)
        .map(|t| longest_stretch(t, short))
        .max()
        .unwrap_or(0)
}

/// Each task's blocking under EDF with `srp`: B(D_i), what one job of τ_i can wait for at most
/// (Baker 1991: once, for one stretch of a task with a longer relative deadline).
pub fn edf_per_task(tasks: &[&Task]) -> Vec<Time> {
    tasks
        .iter()
        .map(|t| edf_blocking(tasks, t.deadline))
        .collect()
}

/// Whether some task of `tasks` that uses resource `r` has a relative deadline below `d`.
fn used_before(tasks: &[&Task], r: usize, d: Time) -> bool {
    tasks
        .iter()
        .any(|t| t.deadline < d && t.sections.iter().any(|s| s.resource as usize == r))
}

/// EDF under protocol `p` (`srp`, `pcp` or `pip`): the term B(L) of Baker's condition
/// h(L) + B(L) ≤ L (the overview derives each).
pub fn edf_term(tasks: &[&Task], p: Protocol, l: Time) -> Time {
    match p {
        Protocol::Pcp => tasks
            .iter()
            .filter(|t| t.deadline > l)
            .map(|t| longest_stretch(t, |r| used_before(tasks, r, t.deadline)))
            .max()
            .unwrap_or(0),
        Protocol::Pip => pip_edf(tasks, l, |r, _| used_before(tasks, r, l + 1)),
        _ => edf_blocking(tasks, l),
    }
}

/// Each task's blocking under EDF with `p`: what one job of τ_i waits for jobs of later
/// absolute deadline at most. B(D_i) under `srp` and `pcp`; under `pip` the resources counted
/// are those a task of shorter deadline than the holder uses (the overview says why).
pub fn edf_job_terms(tasks: &[&Task], p: Protocol) -> Vec<Time> {
    tasks
        .iter()
        .map(|t| match p {
            Protocol::Pip => pip_edf(tasks, t.deadline, |r, j| {
                used_before(tasks, r, tasks[j].deadline)
            }),
            _ => edf_term(tasks, p, t.deadline),
        })
        .collect()
}

/// `pip` under EDF: [`pip_term`] over the tasks with a relative deadline > L.
fn pip_edf(tasks: &[&Task], l: Time, counts: impl Fn(usize, usize) -> bool) -> Time {
    let lower: Vec<usize> = (0..tasks.len())
        .filter(|&j| tasks[j].deadline > l)
        .collect();
    pip_term(tasks, &lower, counts)
}

/// Sha et al.'s two counts under `pip` (at most one section per lower job, and per resource):
/// min(Σ over the tasks `lower` of their longest stretch on the resources r with
/// `counts(r, j)`, Σ over such resources of their longest section of a task of `lower`).
/// Written once for fixed priority ([`fp_blocking`], `lower` the lower-priority tasks) and EDF
/// (`pip_edf`, the tasks of longer relative deadline).
fn pip_term(tasks: &[&Task], lower: &[usize], counts: impl Fn(usize, usize) -> bool) -> Time {
    let by_task: Time = lower
        .iter()
        .map(|&j| longest_stretch(tasks[j], |r| counts(r, j)))
        .sum();
    let mut res: Vec<usize> = lower
        .iter()
        .flat_map(|&j| tasks[j].sections.iter().map(|s| s.resource as usize))
        .collect();
    res.sort_unstable();
    res.dedup();
    let by_resource: Time = res
        .iter()
        .map(|&r| {
            lower
                .iter()
                .filter(|&&j| counts(r, j))
                .map(|&j| longest_stretch(tasks[j], |x| x == r))
                .max()
                .unwrap_or(0)
        })
        .sum();
    by_task.min(by_resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(resource: u32, start: Time, length: Time) -> CriticalSection {
        CriticalSection {
            resource,
            region: 0,
            thread: 0,
            start,
            length,
        }
    }

    fn task(name: &str, d: Time, c: Time, sections: Vec<CriticalSection>) -> Task {
        let mut t = Task::periodic(name, d, c);
        t.sections = sections;
        t
    }

    /// Stretches: R 0–2 and S 2–5 touch (5); R 0–3 with S 1–2 nested (3); a lone S 7–8.
    #[test]
    fn stretches_merge_touching_and_nested_sections() {
        let t = task("t", 20, 10, vec![sec(0, 0, 2), sec(1, 2, 3), sec(1, 7, 1)]);
        assert_eq!(longest_stretch(&t, |_| true), 5);
        assert_eq!(longest_stretch(&t, |r| r == 1), 3);
        assert_eq!(longest_stretch(&t, |r| r == 2), 0);
        let n = task("n", 20, 10, vec![sec(0, 0, 3), sec(1, 1, 1)]);
        assert_eq!(longest_stretch(&n, |_| true), 3);
        assert!(nests(&n) && !nests(&t));
    }

    /// Three tasks, priorities h 3 > m 2 > l 1. l holds R for 4, m holds S for 2 and R for 1;
    /// h uses R (1) only. Ceilings: R 3, S 2.
    /// pcp: B_h = max(l's R stretch 4, m's R 1) = 4 (S's ceiling 2 < 3 does not reach h);
    ///      B_m = l's stretch on R or S = 4; B_l = 0.
    /// pip: B_h = min(by task 4 + 1, by resource R: 4) = 4; B_m = min(4, R 4 + S 0) = 4.
    #[test]
    fn fp_terms_by_hand() {
        let l = task("l", 20, 5, vec![sec(0, 0, 4)]);
        let m = task("m", 10, 4, vec![sec(1, 0, 2), sec(0, 3, 1)]);
        let h = task("h", 5, 2, vec![sec(0, 0, 1)]);
        let ts = [&l, &m, &h];
        let prio = [1, 2, 3];
        assert_eq!(fp_blocking(&ts, &prio, Protocol::Pcp), Ok(vec![0, 4, 4]));
        assert_eq!(
            fp_blocking(&ts, &prio, Protocol::PcpOriginal),
            Ok(vec![0, 4, 4])
        );
        assert_eq!(fp_blocking(&ts, &prio, Protocol::Pip), Ok(vec![0, 4, 4]));
        assert_eq!(fp_blocking(&ts, &prio, Protocol::Srp), Ok(vec![0, 4, 4]));
        // PIP's two counts differ: two lower tasks on one resource R: min(4 + 1, 4) = 4 for
        // h; and one lower task on two resources is bounded by its longest section, once.
        let a = task("a", 20, 5, vec![sec(0, 0, 2), sec(1, 3, 2)]);
        let h2 = task("h2", 5, 2, vec![sec(0, 0, 1), sec(1, 1, 1)]);
        assert_eq!(
            fp_blocking(&[&a, &h2], &[1, 2], Protocol::Pip),
            Ok(vec![0, 2])
        );
        // srp with a lower-priority task of shorter deadline: refused.
        assert_eq!(fp_blocking(&ts, &[3, 2, 1], Protocol::Srp), Err((0, 1)));
    }

    /// EDF: l (D 20) holds R 4, m (D 8) none, h (D 5) uses R. B(L) = 4 for 5 ≤ L < 20
    /// (R's ceiling is h's deadline 5), 0 below 5 (no task with D ≤ L uses R) and from 20.
    #[test]
    fn edf_term_by_hand() {
        let l = task("l", 20, 4, vec![sec(0, 0, 4)]);
        let m = task("m", 8, 5, vec![]);
        let h = task("h", 5, 2, vec![sec(0, 0, 1)]);
        let ts = [&l, &m, &h];
        assert_eq!(
            [4, 5, 8, 19, 20].map(|x| edf_blocking(&ts, x)),
            [0, 4, 4, 4, 0]
        );
        assert_eq!(edf_per_task(&ts), vec![0, 4, 4]);
    }

    /// EDF under pcp and pip, by hand. l (D 100) holds R for 3 then T for 1 (touching: one
    /// stretch of 4); m (D 40) holds S 2; h (D 10) uses R 1; k (D 60) holds R 1 then T 1; n
    /// (D 30) uses S 1. Users: R {l, h, k}, S {m, n}, T {l, k}.
    /// - pcp, B(10): tasks with D > 10, each on the resources some task of shorter D uses: l
    ///   on R and T (h, k) = 4; m on S (n) = 2; k on R (h), not T = 1; n on nothing → 4. SRP's
    ///   B(10) counts R only (h's D ≤ 10): 3. B(70) = l's 4; B(100) = 0.
    /// - pip, B(10): resources used by a task with D ≤ 10: R. By task: l 3 + k 1 = 4; by
    ///   resource: R's longest 3 → 3.
    /// - pip, h's row: by task l 4 + m 2 + k 1 + n 0 = 7; by resource R 3 + S 2 (m's, n
    ///   shorter) + T 1 (l's, k shorter) = 6 → 6, more than B(10).
    #[test]
    fn edf_pcp_and_pip_terms_by_hand() {
        let l = task("l", 100, 10, vec![sec(0, 0, 3), sec(2, 3, 1)]);
        let m = task("m", 40, 5, vec![sec(1, 0, 2)]);
        let h = task("h", 10, 2, vec![sec(0, 0, 1)]);
        let k = task("k", 60, 2, vec![sec(0, 0, 1), sec(2, 1, 1)]);
        let n = task("n", 30, 2, vec![sec(1, 0, 1)]);
        let ts = [&l, &m, &h, &k, &n];
        assert_eq!(edf_term(&ts, Protocol::Pcp, 10), 4);
        assert_eq!(edf_term(&ts, Protocol::Srp, 10), 3);
        assert_eq!(edf_term(&ts, Protocol::Pcp, 70), 4);
        assert_eq!(edf_term(&ts, Protocol::Pcp, 100), 0);
        assert_eq!(edf_term(&ts, Protocol::Pip, 10), 3);
        assert_eq!(edf_job_terms(&ts, Protocol::Pip)[2], 6);
        assert_eq!(edf_job_terms(&ts, Protocol::Pcp)[2], 4);
        assert_eq!(edf_job_terms(&ts, Protocol::Srp), edf_per_task(&ts));
    }
}
