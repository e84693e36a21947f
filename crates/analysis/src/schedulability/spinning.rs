//! Spin and blocking terms of MSRP, the multiprocessor stack resource policy (Gai, Lipari &
//! Di Natale, "Minimizing memory utilization of real-time task sets in single and
//! multi-processor systems-on-a-chip", RTSS 2001), for fixed priority per CPU of a partitioned
//! set, as the simulator applies it (`crates/runtime/src/ledger/locking.rs`; docs/locking.md,
//! "Analysis"):
//!
//! - A *local* resource (every user on one CPU) is an `srp` one; a *global* one is requested
//!   non-preemptively: the job spins on its CPU, FIFO, while another CPU holds it, then runs
//!   its section, still non-preemptive. With one non-preemptive job per CPU at a time, a
//!   request of global resource r from CPU k waits at most for one section of r from each other
//!   CPU: spin(r, k) = Σ_{c ≠ k} max over c's sections of r of their length.
//! - Each job of τ_i spins at most spin_i = Σ over its sections s on global resources of
//!   spin(s.resource, cpu_i), CPU time it executes: its WCET is inflated, C'_i = C_i + spin_i,
//!   in its own response time and as interference on lower-priority tasks.
//! - A job of τ_i is blocked at most once (SRP, Baker 1991: it starts only when nothing blocks
//!   it), by one lower-priority job of its CPU in a non-preemptive global request (its spin and
//!   section) or in a local section whose ceiling (Baker's: the shortest relative deadline of
//!   its users) reaches τ_i: B_i = max over such stretches of their length plus the spin of the
//!   global sections in them.
//!
//! Then R_i = C'_i + B_i + Σ_{j ∈ hp(i)} ⌈R_i/T_j⌉·C'_j (Gai et al. 2001, with the
//! RTA of `uniprocessor.rs`). Nested sections are not bounded (`registry::bounded` refuses
//! them); local resources need Baker's levels to agree with the priorities, as under `srp`.
//!
//! Under EDF per CPU (Gai et al.'s own setting), the same inflation and Baker's condition
//! h'(L) + B(L) ≤ L, B(L) the longest such stretch of a task with D > L on a global resource or
//! a local one some task with D ≤ L uses ([`msrp_edf_blocking`]).
//!
//! MrsP (Burns & Wellings, "A schedulability compatible multiprocessor resource sharing
//! protocol — MrsP", ECRTS 2013), as simulated: a requesting job is raised to the resource's
//! local ceiling (the highest priority of its CPU's users), spins there FIFO and runs its
//! section there, and a holder preempted on its CPU is *helped*: it migrates to a CPU where a
//! job spins for its resource and runs its section there in the spinner's place
//! (`crates/runtime/src/ledger/locking/mrsp.rs`). Burns & Wellings' analysis charges each
//! access the cost e_r = Σ over the CPUs using r of their longest section of r — the job's own
//! section plus a spin of at most one section per other CPU — and the local ceiling's
//! blocking, B_i = the longest such cost (or local section) of a lower-priority task of the CPU
//! on a resource whose ceiling is at least prio_i. The spin of one section per other CPU holds
//! whatever runs above a ceiling: a spinner spins only while it runs, and while it runs the
//! holder ahead of it runs too (at home, or helping on a CPU whose spinner it displaced), so
//! every nanosecond spun is one of a section ahead of it in the FIFO queue; a CPU whose
//! spinner a helper displaced spends on the helper's section the time its spinner would have
//! spun, within the spinner's C'. MrsP's terms equal MSRP's for the global resources, local
//! ones being ceiling (`pcp`) ones. Without helping (a test-only switch of the ledger) a holder
//! preempted by a job of its CPU above the local ceiling keeps every spinner waiting for as
//! long as that job runs, and the bound fails (`crates/analysis/tests/locking_vs_sim.rs`).

use super::blocking;
use rtsched_model::{Protocol, Task, TaskSet, Time};

/// Whether resource `r` is global: its users are not all on one CPU.
pub fn is_global(ts: &TaskSet, r: usize) -> bool {
    let mut cpus = ts.users(r).map(|t| ts.tasks[t].cpu);
    let first = cpus.next();
    !cpus.all(|c| Some(c) == first)
}

/// The longest one request of global resource `r` from CPU `cpu` spins: Σ over the other CPUs
/// of their longest section of `r`.
pub fn request_spin(ts: &TaskSet, r: usize, cpu: Option<u32>) -> Time {
    let mut longest: Vec<(Option<u32>, Time)> = Vec::new();
    for t in ts.tasks.iter().filter(|t| t.cpu != cpu) {
        for s in t.sections.iter().filter(|s| s.resource as usize == r) {
            match longest.iter_mut().find(|(c, _)| *c == t.cpu) {
                Some((_, l)) => *l = (*l).max(s.length),
                None => longest.push((t.cpu, s.length)),
            }
        }
    }
    longest.iter().map(|&(_, l)| l).sum()
}

/// What one job of task `t` spins at most: spin_i.
pub fn job_spin(ts: &TaskSet, t: &Task) -> Time {
    t.sections
        .iter()
        .filter(|s| is_global(ts, s.resource as usize))
        .map(|s| request_spin(ts, s.resource as usize, t.cpu))
        .sum()
}

/// The longest stretch of `t` on the resources `holds` accepts, each global section lengthened
/// by its spin (the job is non-preemptive from its request); nesting is refused, so a stretch
/// is touching sections.
fn spun_stretch(ts: &TaskSet, t: &Task, holds: impl Fn(usize) -> bool) -> Time {
    blocking::stretch_with(t, holds, |s| match is_global(ts, s.resource as usize) {
        true => request_spin(ts, s.resource as usize, t.cpu),
        false => 0,
    })
}

/// MSRP's terms for the tasks `idx` of `ts` (one CPU's) under priorities `prio` (larger is
/// more urgent): each task's spin_i and B_i. `Err((hi, lo))` when a local resource is used and
/// task `lo` has a lower priority than `hi` but a shorter relative deadline (Baker's levels
/// disagree with the priorities, as `blocking::fp_blocking` refuses under `srp`).
pub fn msrp_fp(
    ts: &TaskSet,
    idx: &[usize],
    prio: &[u32],
) -> Result<(Vec<Time>, Vec<Time>), (usize, usize)> {
    spin_fp(ts, idx, prio, Protocol::Msrp)
}

/// MrsP's terms for the tasks `idx` of `ts` (one CPU's) under priorities `prio`: spin_i as
/// under MSRP, and B_i the longest stretch of a lower-priority task of the CPU on a resource
/// whose (local) ceiling, its CPU's users' highest priority, is at least prio_i, each global
/// section lengthened by its spin (Burns & Wellings 2013: the access cost e_r).
pub fn mrsp_fp(ts: &TaskSet, idx: &[usize], prio: &[u32]) -> (Vec<Time>, Vec<Time>) {
    spin_fp(ts, idx, prio, Protocol::Mrsp).expect("mrsp takes no levels")
}

fn spin_fp(
    ts: &TaskSet,
    idx: &[usize],
    prio: &[u32],
    p: Protocol,
) -> Result<(Vec<Time>, Vec<Time>), (usize, usize)> {
    let tasks: Vec<&Task> = idx.iter().map(|&i| &ts.tasks[i]).collect();
    let n = tasks.len();
    let local_used = tasks.iter().any(|t| {
        t.sections
            .iter()
            .any(|s| !is_global(ts, s.resource as usize))
    });
    if local_used && p == Protocol::Msrp {
        for i in 0..n {
            if let Some(j) =
                (0..n).find(|&j| prio[j] < prio[i] && tasks[j].deadline < tasks[i].deadline)
            {
                return Err((i, j));
            }
        }
    }
    let spin: Vec<Time> = tasks.iter().map(|t| job_spin(ts, t)).collect();
    let b = (0..n)
        .map(|i| {
            // Under msrp a global request is non-preemptive, a local resource's ceiling
            // Baker's; under mrsp both are the priority ceiling of the CPU's users.
            let user_here =
                |r: usize, k: usize| tasks[k].sections.iter().any(|s| s.resource as usize == r);
            let reaches = |r: usize| match p {
                Protocol::Mrsp => (0..n).any(|k| user_here(r, k) && prio[k] >= prio[i]),
                _ => {
                    is_global(ts, r)
                        || ts
                            .users(r)
                            .any(|j| ts.tasks[j].deadline <= tasks[i].deadline)
                }
            };
            (0..n)
                .filter(|&j| prio[j] < prio[i])
                .map(|j| spun_stretch(ts, tasks[j], reaches))
                .max()
                .unwrap_or(0)
        })
        .collect();
    Ok((spin, b))
}

/// MSRP under EDF per CPU (Gai et al. 2001, SRP on each CPU): B(L), the longest stretch of a
/// task of `idx` (one CPU's) with relative deadline > L on a global resource (a non-preemptive
/// request) or a local one some task with relative deadline ≤ L uses, global sections
/// lengthened by their spin; Baker's condition h'(L) + B(L) ≤ L with the inflated WCETs.
pub fn msrp_edf_blocking(ts: &TaskSet, idx: &[usize], l: Time) -> Time {
    let reaches = |r: usize| is_global(ts, r) || ts.users(r).any(|j| ts.tasks[j].deadline <= l);
    idx.iter()
        .map(|&i| &ts.tasks[i])
        .filter(|t| t.deadline > l)
        .map(|t| spun_stretch(ts, t, reaches))
        .max()
        .unwrap_or(0)
}

/// Whether some task of `ts` nests sections (MSRP's terms assume none).
pub fn any_nesting(ts: &TaskSet) -> Option<usize> {
    ts.tasks.iter().position(blocking::nests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::CriticalSection;

    fn sec(resource: u32, start: Time, length: Time) -> CriticalSection {
        CriticalSection {
            resource,
            region: 0,
            thread: 0,
            start,
            length,
        }
    }

    fn task(name: &str, cpu: u32, d: Time, c: Time, sections: Vec<CriticalSection>) -> Task {
        let mut t = Task::periodic(name, d, c);
        t.cpu = Some(cpu);
        t.sections = sections;
        t
    }

    /// Three CPUs sharing global G (resource 0): CPU 0 has h (G for 1) above l (G for 2, then
    /// local L (resource 1, also used by h) for 1, touching); CPU 1 has a (G for 3) and b (G
    /// for 4); CPU 2 has c (G for 5). A request from CPU 0 spins ≤ 4 + 5 = 9, from CPU 1
    /// ≤ 2 + 5 = 7, from CPU 2 ≤ 2 + 4 = 6. On CPU 0: spin_h = 9, spin_l = 9; B_h = l's
    /// stretch G (2 + spin 9) then L (1) = 12; B_l = 0. A one-CPU spin (the control) is 5.
    #[test]
    fn msrp_terms_by_hand() {
        let mut ts = TaskSet::new(
            3,
            vec![
                task("h", 0, 10, 2, vec![sec(0, 0, 1), sec(1, 1, 1)]),
                task("l", 0, 50, 6, vec![sec(0, 0, 2), sec(1, 2, 1)]),
                task("a", 1, 20, 4, vec![sec(0, 0, 3)]),
                task("b", 1, 30, 5, vec![sec(0, 1, 4)]),
                task("c", 2, 40, 6, vec![sec(0, 0, 5)]),
            ],
        );
        ts.resources = vec!["G".into(), "L".into()];
        assert!(is_global(&ts, 0) && !is_global(&ts, 1));
        assert_eq!(request_spin(&ts, 0, Some(0)), 9);
        assert_eq!(request_spin(&ts, 0, Some(1)), 7);
        assert_eq!(request_spin(&ts, 0, Some(2)), 6);
        assert_eq!(
            msrp_fp(&ts, &[0, 1], &[2, 1]),
            Ok((vec![9, 9], vec![12, 0]))
        );
        assert_eq!(
            msrp_fp(&ts, &[2, 3], &[2, 1]),
            Ok((vec![7, 7], vec![11, 0]))
        );
        // Levels disagreeing with the priorities, with a local resource: refused.
        assert_eq!(msrp_fp(&ts, &[0, 1], &[1, 2]), Err((1, 0)));
    }

    /// MrsP: G (0) global between CPU 0 (h above l, both using G) and CPU 1 (a, G for 3).
    /// Spin as MSRP's (3 from CPU 0, 2 from CPU 1), B_h = l's G section 2 + spin 3 = 5. With
    /// x above h on CPU 0 (no section), x's terms are 0 and h's unchanged: helping bounds the
    /// spin whatever runs above the local ceiling.
    #[test]
    fn mrsp_terms_by_hand() {
        let mut ts = TaskSet::new(
            2,
            vec![
                task("h", 0, 10, 2, vec![sec(0, 0, 1)]),
                task("l", 0, 50, 6, vec![sec(0, 0, 2)]),
                task("a", 1, 20, 4, vec![sec(0, 0, 3)]),
                task("b", 1, 30, 4, vec![]),
            ],
        );
        ts.resources = vec!["G".into()];
        assert_eq!(mrsp_fp(&ts, &[0, 1], &[3, 2]), (vec![3, 3], vec![5, 0]));
        assert_eq!(mrsp_fp(&ts, &[2, 3], &[2, 1]), (vec![2, 0], vec![0, 0]));
        ts.tasks.push(task("x", 0, 5, 1, vec![]));
        assert_eq!(
            mrsp_fp(&ts, &[4, 0, 1], &[4, 3, 2]),
            (vec![0, 3, 3], vec![0, 5, 0])
        );
    }
}
