//! Global fixed priority of parallel (DAG and fork-join) tasks: response-time analysis.
//!
//! Melani, Bertogna, Bonifaci, Marchetti-Spaccamela & Buttazzo, "Response-Time Analysis of
//! Conditional DAG Tasks in Multiprocessor Systems" (ECRTS 2015), §4–5 for DAGs without
//! conditional nodes. A task is its volume vol (every node's WCET summed: the task's `wcet`),
//! the length len of its longest path (`dag::span`), D ≤ T and its priority.
//!
//! Take the path of τ_k's job built backwards from its last node to finish, each node's
//! predecessor on it the one that finished last. At each instant of the job's window a node of
//! that path runs, or its next node is ready and all m CPUs run other work: other nodes of the
//! job (at most vol_k − len_k of them in all) or higher-priority jobs. With I the
//! higher-priority work in a window of length x, the job ends by the least fixed point
//!   R_k = len_k + ⌊(vol_k − len_k + Σ_{i ∈ hp(k)} W_i(R_k)) / m⌋
//! (discrete time, integer ns: the instants with every CPU busy number at most that work over
//! m), found by iteration from len_k. The workload of τ_i in a window of length L, its jobs
//! finishing within R_i and its carry-in job executing at most m CPUs' worth at once, is
//!   W_i(L) = ⌊(L + R_i − vol_i/m)/T_i⌋·vol_i + min(vol_i, m·((L + R_i − vol_i/m) mod T_i)),
//! computed exactly in units of 1/m ns. The bounds go in decreasing priority order (rate or
//! deadline monotonic, `crate::priority`: distinct, ties to the first task in the file, as
//! `gfp:rm` and `gfp:dm` have them; or the task file's own, as `gfp:file` has them, which may
//! tie); a task below one whose bound exceeds its deadline gets no bound. A sequential task is
//! a DAG of one node (vol = len = C).
//!
//! Equal priorities: tasks of one priority count as interfering with each other, as in
//! `gfp_rta.rs` (safe whatever the tie-break at run time; `gfp` breaks ties by release, so a
//! peer's job released earlier runs first): a group of equal priority is bounded together, each
//! member's R_k from the higher-priority bounds and its peers' current ones (their W_i), from
//! R = len up, until no bound moves — `gfp_rta.rs`'s joint fixed point, the same argument.
//!
//! Not modelled: conditional nodes (the model has none), critical sections.
//!
//! Overhead-aware form (`WithOverheads::GlobalFpDag`): the analysis on the volume and critical
//! path charged by `crate::overheads::inflate_dag` — the rule of `crate::overheads` for global
//! FP with each node a job of its own: each node pays its first dispatch, and each preemption
//! (at most one per node of a job of the same or higher priority that may become ready within
//! the job's window, and per node of the job itself) one more dispatch and a migration; the
//! volume pays for every node, the critical path for the nodes of its longest chain, both for
//! every preemption.
//!
//! Checked against the simulator (`tests/global_rta/dag.rs`, a module of `tests/global_rta_vs_sim.rs`): a set it accepts never misses
//! under `gfp:rm` from a synchronous release at WCET, no bound is below a simulated maximum
//! response, and the analysis with its interference spread over m + 1 CPUs (the negative
//! control) is caught.
//!
//! Registry entries (`registry.rs`): `gfp-dag-melani-rm`, `gfp-dag-melani-dm`,
//! `gfp-dag-melani-file` (the last for sets whose every task gives its `priority`).

use super::bounds::{self, Quantity};
use super::dag::DagTask;
use super::gfp_rta::{fixed_point, joint_bounds};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::{Cdt, Verdict};
use rtsched_model::{TaskSet, Time};

/// Several CPUs, sets with parallel tasks, D ≤ T, no critical sections.
const GLOBAL_PARALLEL: Applies = Applies {
    cpus: Cpus::Several,
    tasks: Tasks::Parallel,
    deadlines: Deadlines::Constrained,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Not,
};

/// The same, for sets whose every task gives its `priority`.
const GLOBAL_PARALLEL_WITH_PRIORITIES: Applies = Applies {
    priorities: true,
    ..GLOBAL_PARALLEL
};

const MELANI: &str = "Melani, Bertogna, Bonifaci, Marchetti-Spaccamela & Buttazzo, ECRTS 2015";

pub const GFP_DAG_MELANI_RM: Entry = Entry {
    name: "gfp-dag-melani-rm",
    summary: "global fixed priority (RM) of DAG tasks, response-time analysis",
    citation: MELANI,
    kind: Kind::Sufficient,
    applies: GLOBAL_PARALLEL,
    verdict: |s| verdict(s, GFP_DAG_MELANI_RM.name, Priorities::RateMonotonic),
    overheads: WithOverheads::GlobalFpDag(Priorities::RateMonotonic),
};

pub const GFP_DAG_MELANI_DM: Entry = Entry {
    name: "gfp-dag-melani-dm",
    summary: "global fixed priority (DM) of DAG tasks, response-time analysis",
    citation: MELANI,
    kind: Kind::Sufficient,
    applies: GLOBAL_PARALLEL,
    verdict: |s| verdict(s, GFP_DAG_MELANI_DM.name, Priorities::DeadlineMonotonic),
    overheads: WithOverheads::GlobalFpDag(Priorities::DeadlineMonotonic),
};

pub const GFP_DAG_MELANI_FILE: Entry = Entry {
    name: "gfp-dag-melani-file",
    summary: "global fixed priority (the file's priorities) of DAG tasks, response-time analysis",
    citation: MELANI,
    kind: Kind::Sufficient,
    applies: GLOBAL_PARALLEL_WITH_PRIORITIES,
    verdict: |s| verdict(s, GFP_DAG_MELANI_FILE.name, Priorities::File),
    overheads: WithOverheads::GlobalFpDag(Priorities::File),
};

fn verdict(s: &Subject<'_>, name: &str, by: Priorities) -> Verdict {
    let Some(prio) = s.priorities(by) else {
        return Verdict::new(name, None, "not every task gives a priority");
    };
    let tasks: Vec<DagTask> = s.tasks().map(DagTask::from).collect();
    let r = response_times(&tasks, &prio, s.cpus());
    let rows = bounds::of(s, Quantity::ResponseTime, &r);
    let ok = r.iter().all(Option::is_some);
    Verdict::new(name, ok.then_some(true), bounds::worst_in_words(&rows)).with_tasks(rows)
}

/// The verdict on `ts`'s parallel tasks charged for their overheads (`inflated`, by
/// `crate::overheads::inflate_dag`) under the priorities `prio`; the rows give D' = D − release.
pub fn verdict_charged(ts: &TaskSet, name: &str, prio: &[u32], inflated: &[DagTask]) -> Verdict {
    let mut set = ts.clone();
    for (t, x) in set.tasks.iter_mut().zip(inflated) {
        t.deadline = x.d;
    }
    let r = response_times(inflated, prio, set.platform.cpus);
    let rows = bounds::of(&Subject::whole(&set), Quantity::ResponseTime, &r);
    let ok = r.iter().all(Option::is_some);
    Verdict::new(name, ok.then_some(true), bounds::worst_in_words(&rows)).with_tasks(rows)
}

/// W_i(L) of a DAG task of volume `x.c`, period `x.t` and response time `r` on `m` CPUs.
pub fn workload(x: &DagTask, r: Time, l: Time, m: u32) -> u128 {
    let m = m as u128;
    // (L + R_i − vol_i/m), in units of 1/m ns; never negative as R_i ≥ vol_i/m.
    let span = ((l as u128 + r as u128) * m).saturating_sub(x.c as u128);
    let period = x.t as u128 * m;
    let n = span / period;
    n * x.c as u128 + (x.c as u128).min(span - n * period)
}

/// Each task's response-time bound under global FP with priorities `prio` (larger is more
/// urgent; equal ones interfere with each other) on `m` CPUs; `None` past the deadline and for
/// every task below, or tied with, one so.
pub fn response_times(ts: &[DagTask], prio: &[u32], m: u32) -> Vec<Option<Time>> {
    response_times_over(ts, prio, m, m)
}

/// [`response_times`] with the work of the window divided among `cpus` CPUs (`m`; more only
/// in the tests' negative control).
pub fn response_times_over(ts: &[DagTask], prio: &[u32], m: u32, cpus: u32) -> Vec<Option<Time>> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| prio[b].cmp(&prio[a]).then(a.cmp(&b)));
    let mut r: Vec<Option<Time>> = vec![None; ts.len()];
    let mut hp: Vec<(DagTask, Time)> = Vec::new();
    for group in order.chunk_by(|&a, &b| prio[a] == prio[b]) {
        let Some(rs) = group_bounds(ts, group, &hp, m, cpus) else {
            break;
        };
        for (&k, &rk) in group.iter().zip(&rs) {
            r[k] = Some(rk);
            hp.push((ts[k], rk));
        }
    }
    r
}

/// The bound of τ_k below the tasks `hp` (with their bounds): the least fixed point of
/// x = len + ⌊(vol − len + Σ W)/cpus⌋, as `fixed_point` computes C + ⌊I/m⌋.
fn bound(x: &DagTask, hp: &[(DagTask, Time)], m: u32, cpus: u32) -> Option<Time> {
    let path = Cdt {
        c: x.l,
        d: x.d,
        t: x.t,
    };
    let own = x.c.saturating_sub(x.l) as u128;
    let interference = |w: Time| -> u128 {
        own + hp
            .iter()
            .map(|(i, ri)| workload(i, *ri, w, m))
            .sum::<u128>()
    };
    fixed_point(&path, cpus, interference)
}

/// The bounds of the tasks `group`, of one priority, below the tasks `hp`: the joint fixed
/// point of `gfp_rta.rs` from R = len, each member bounded by [`bound`].
fn group_bounds(
    ts: &[DagTask],
    group: &[usize],
    hp: &[(DagTask, Time)],
    m: u32,
    cpus: u32,
) -> Option<Vec<Time>> {
    joint_bounds(ts, group, hp, |k| k.l, |k, with| bound(k, with, m, cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dag(c: Time, l: Time, d: Time, t: Time) -> DagTask {
        DagTask { c, l, d, t }
    }

    /// Two CPUs. τ1 sequential (vol = len = 2, D = T = 10) above τ2, fork-join [2 ‖ 2] then
    /// [1]: vol 5, len 3, D = T = 20. τ1: no higher priority, R = 2 + ⌊0/2⌋ = 2. τ2 from x = 3:
    /// W_1(3) in halves of a ns: span = (3 + 2)·2 − 2 = 8 < 20, W = min(2, 8) = 2, so x = 3 +
    /// ⌊(5 − 3 + 2)/2⌋ = 5; x = 5: span 12, W = 2 → 5: R_2 = 5. Simulated under gfp:rm: τ1 on
    /// one CPU in [0, 2), τ2's branches in [0, 2) and [2, 4), its last node in [4, 5): exact.
    #[test]
    fn by_hand() {
        let ts = [dag(2, 2, 10, 10), dag(5, 3, 20, 20)];
        assert_eq!(response_times(&ts, &[2, 1], 2), vec![Some(2), Some(5)]);
        // W at a period boundary: span = (10 + 2)·2 − 2 = 22 → one job (2) + min(2, 2) = 4.
        assert_eq!(workload(&ts[0], 2, 10, 2), 4);
        // With D_2 = 4 < 5: no bound for τ2.
        let ts = [dag(2, 2, 10, 10), dag(5, 3, 4, 20)];
        assert_eq!(response_times(&ts, &[2, 1], 2), vec![Some(2), None]);
    }

    /// A set of sequential tasks (each a DAG of one node) gets a bound no smaller than
    /// Bertogna & Cirinei's (`gfp_rta`), whose workload lets the carry-in job run on one CPU
    /// at a time only.
    #[test]
    fn sequential_tasks_are_not_bounded_tighter_than_gfp_rta() {
        use super::super::gfp_rta::{self, CarryIn};
        let cdt = [
            Cdt { c: 2, d: 5, t: 5 },
            Cdt { c: 2, d: 5, t: 5 },
            Cdt { c: 4, d: 10, t: 10 },
        ];
        let dags: Vec<DagTask> = cdt.iter().map(|x| dag(x.c, x.c, x.d, x.t)).collect();
        let prio = [3, 2, 1];
        let bc = gfp_rta::response_times(&cdt, &prio, 2, CarryIn::Every);
        let melani = response_times(&dags, &prio, 2);
        for (a, b) in bc.iter().zip(&melani) {
            assert!(
                b.is_none() || a.is_some_and(|a| a <= b.unwrap()),
                "{bc:?} {melani:?}"
            );
        }
    }

    /// The file's priorities, by hand, on two CPUs: a sequential (vol = len = 2, D = T = 20),
    /// b fork-join [2 ‖ 2] then [1] (vol 5, len 3, D = T = 10). The file ranks a above b, RM
    /// the other way.
    /// File: R_a = 2 (no higher priority). b from x = 3: W_a(3) in halves of a ns: span =
    /// (3 + 2)·2 − 2 = 8 < 40, W = 2, x = 3 + ⌊(2 + 2)/2⌋ = 5; x = 5: span 12, W = 2 → 5.
    /// Simulated under gfp:file: a and one branch of b in [0, 2), the other branch in [2, 4),
    /// the last node in [4, 5): both exact.
    /// RM: R_b = 3 + ⌊2/2⌋ = 4; a from x = 2: W_b(2): span = (2 + 4)·2 − 5 = 7 < 20, W = 5, x =
    /// 2 + ⌊5/2⌋ = 4; x = 4: span 11, W = 5 → 4: (4, 4).
    /// Tied (both 1): a, b from (2, 3). a with b at 3: x = 2: span (2 + 3)·2 − 5 = 5, W = 5 →
    /// 4; x = 4: span 9, W = 5 → 4. b with a at 4: x = 3: span (3 + 4)·2 − 2 = 12, W = 2 → 3 +
    /// ⌊4/2⌋ = 5; x = 5 → 5. A second round (a with b at 5: span 9 at x = 2, W = 5 → 4) moves
    /// none: (4, 5), each the larger of the two orders' bounds.
    #[test]
    fn file_priorities_by_hand() {
        use crate::schedulability::{analyze, registry::find, ENTRIES};
        use rtsched_model::{Region, Task, TaskSet};
        let ts = [dag(2, 2, 20, 20), dag(5, 3, 10, 10)];
        assert_eq!(response_times(&ts, &[2, 1], 2), vec![Some(2), Some(5)]);
        assert_eq!(response_times(&ts, &[1, 2], 2), vec![Some(4), Some(4)]);
        assert_eq!(response_times(&ts, &[1, 1], 2), vec![Some(4), Some(5)]);
        // Through the registry, by task name; the entry is for sets whose every task gives a
        // priority, and `analyze` leaves it out otherwise.
        let mut b = Task::periodic("b", 10, 5);
        b.regions = vec![
            Region {
                threads: vec![2, 2],
            },
            Region { threads: vec![1] },
        ];
        let mut set = TaskSet::new(2, vec![Task::periodic("a", 20, 2), b]);
        assert!(analyze(&set).iter().all(|v| !v.test.contains("file")));
        let entry = find(ENTRIES, "gfp-dag-melani-file").unwrap();
        for (prio, want) in [([2, 1], [2, 5]), ([1, 2], [4, 4]), ([1, 1], [4, 5])] {
            for (t, p) in set.tasks.iter_mut().zip(prio) {
                t.priority = Some(p);
            }
            let v = entry.run(&set).unwrap();
            assert_eq!(v.schedulable, Some(true), "{prio:?}");
            let bounds: Vec<(&str, Option<Time>)> =
                v.tasks.iter().map(|x| (x.name.as_str(), x.bound)).collect();
            assert_eq!(
                bounds,
                vec![("a", Some(want[0])), ("b", Some(want[1]))],
                "{prio:?}"
            );
        }
    }
}
