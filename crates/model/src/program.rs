//! A task's *program*: its parallel structure and its critical sections (docs/semantics.md,
//! docs/taskset-format.md: optional parallel structure, optional critical sections).
//!
//! **Regions** follow PAWS §3 (the synchronous fork-join model): a job is a sequence of regions;
//! region r holds n_r threads w^1..w^{n_r} with execution requirements e^j that may differ; the
//! threads of a region may run in parallel on different CPUs and all join at the region's end,
//! after which the next region forks. A region of one thread is a sequential region. The task's
//! WCET C is the sum of all its threads' requirements ("if all threads are executed sequentially
//! in the same core"). A task without regions is one region of one thread of length C.
//!
//! **Critical sections** follow ChronOS §III ("resource is requested / released"): a thread
//! requests resource R after it has executed `start` of its own work, holds it for `length` of
//! work, then releases it. Sections of one thread are disjoint or properly nested (never the
//! same resource twice). A resource is a mutex: its holder runs, a requester that finds it held
//! is *blocked* (not ready) until the holder releases it; waiters acquire it in request order.
//!
//! When a job's actual demand differs from its WCET (the execution-time model), each thread's
//! demand is drawn separately and every section boundary is scaled by that thread's
//! demand / WCET ratio (rounded down): a thread that runs 60% of its WCET runs 60% of every piece.

use crate::time::Time;
use serde::Serialize;

/// Index of a resource in its task set (order of first mention).
pub type ResourceId = u32;

/// One region of a job: the WCET of each of its threads (PAWS §3, e_i^j).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Region {
    pub threads: Vec<Time>,
}

/// A critical section in thread `thread` of region `region`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CriticalSection {
    pub resource: ResourceId,
    pub region: u32,
    pub thread: u32,
    /// Work the thread has done when it requests the resource.
    pub start: Time,
    /// Work it does while holding the resource.
    pub length: Time,
}

impl CriticalSection {
    pub fn end(&self) -> Time {
        self.start + self.length
    }
}

/// What happens when a thread reaches a point of its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Action {
    Acquire(ResourceId),
    Release(ResourceId),
}

/// A point of a thread's work at which it acquires or releases a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Checkpoint {
    /// Work done (at the thread's WCET; scale with [`scale`]).
    pub at: Time,
    pub action: Action,
}

/// One thread as the substrates execute it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadProgram {
    pub wcet: Time,
    /// In order of work done; at equal work, releases before acquires (an inner section's
    /// release before the next section's request) and nesting order otherwise.
    pub checkpoints: Vec<Checkpoint>,
}

impl ThreadProgram {
    /// The stretches of this thread's work in which it holds a resource, for a thread whose
    /// actual demand is `demand`: `(resource, from, to)` in work done, each checkpoint moved by
    /// [`scale`] as the ledger moves it (`rtsched_runtime::next_step`), one per critical
    /// section, in the order the sections are acquired (a nested section after the one around
    /// it). What a Gantt chart hatches.
    pub fn held(&self, demand: Time) -> Vec<(ResourceId, Time, Time)> {
        let mut out: Vec<(ResourceId, Time, Time)> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for c in &self.checkpoints {
            let at = scale(c.at, self.wcet, demand);
            match c.action {
                Action::Acquire(r) => {
                    open.push(out.len());
                    out.push((r, at, at));
                }
                Action::Release(r) => {
                    let k = open
                        .iter()
                        .rposition(|&i| out[i].0 == r)
                        .expect("a release follows its acquire (validated nesting)");
                    out[open.remove(k)].2 = at;
                }
            }
        }
        out
    }
}

/// A point `at` of a thread with WCET `wcet`, moved to a thread whose actual demand is
/// `demand` (exact integer arithmetic, rounded down, so nesting is preserved).
#[inline]
pub fn scale(at: Time, wcet: Time, demand: Time) -> Time {
    if demand == wcet || wcet == 0 {
        return at.min(demand);
    }
    ((at as u128 * demand as u128) / wcet as u128) as Time
}

/// A DAG task's precedence as its jobs run it (`dag.rs` builds it: `Precedence::of`): each
/// node's predecessor count, its successors (compressed: node u's are
/// `succ[start[u]..start[u + 1]]`, in index order) and the sources in index order. Built once
/// per task; a job copies `indeg` into its own counts at release (no allocation in the steady
/// state).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Precedence {
    pub indeg: Vec<u32>,
    pub start: Vec<u32>,
    pub succ: Vec<u32>,
    pub sources: Vec<u32>,
}

impl Precedence {
    /// Node `u`'s successors.
    #[inline]
    pub fn successors(&self, u: u32) -> &[u32] {
        &self.succ[self.start[u as usize] as usize..self.start[u as usize + 1] as usize]
    }
}

/// The regions of a task, each a list of threads, with their checkpoints. A DAG task
/// (`dag.rs`) is one region whose threads are its nodes, in file order, with `dag` its
/// precedence: a node is forked when its last predecessor completes, not with its region.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Program {
    pub regions: Vec<Vec<ThreadProgram>>,
    /// Boxed: a program is read on every release, and most have none.
    pub dag: Option<Box<Precedence>>,
}

impl Program {
    /// Build a task's program from its WCET, regions (empty = sequential) and sections
    /// (already validated: in range, nested properly).
    pub fn build(wcet: Time, regions: &[Region], sections: &[CriticalSection]) -> Program {
        if regions.is_empty() && sections.is_empty() {
            // A plain sequential task (most of them): what the general path gives, in two
            // allocations instead of six; a sweep builds one per task per run.
            return Program {
                regions: vec![vec![ThreadProgram {
                    wcet,
                    checkpoints: Vec::new(),
                }]],
                dag: None,
            };
        }
        Program::build_general(wcet, regions, sections)
    }

    /// Make `self` [`Program::build`]'s program, reusing its lists where it can (a plain
    /// sequential task's program over an earlier one of the same shape: no allocation).
    pub fn rebuild(&mut self, wcet: Time, regions: &[Region], sections: &[CriticalSection]) {
        if regions.is_empty() && sections.is_empty() && self.is_sequential() && self.dag.is_none() {
            let t = &mut self.regions[0][0];
            t.wcet = wcet;
            t.checkpoints.clear();
        } else {
            *self = Program::build(wcet, regions, sections);
        }
    }

    pub(crate) fn build_general(
        wcet: Time,
        regions: &[Region],
        sections: &[CriticalSection],
    ) -> Program {
        let shape: Vec<Vec<Time>> = if regions.is_empty() {
            vec![vec![wcet]]
        } else {
            regions.iter().map(|r| r.threads.clone()).collect()
        };
        // Per thread, checkpoints with a sort key: (work, releases before acquires, nesting).
        // At a shared boundary an outer section (earlier in `sections` after validation's sort
        // by start then longest first) is acquired before and released after an inner one.
        // (work, releases first, nesting tie-break, action) per checkpoint.
        type Keyed = (Time, u8, i64, Action);
        let mut keyed: Vec<Vec<Vec<Keyed>>> =
            shape.iter().map(|r| vec![Vec::new(); r.len()]).collect();
        for (i, s) in sections.iter().enumerate() {
            let cps = &mut keyed[s.region as usize][s.thread as usize];
            cps.push((s.start, 1, i as i64, Action::Acquire(s.resource)));
            cps.push((s.end(), 0, -(i as i64), Action::Release(s.resource)));
        }
        let regions = shape
            .into_iter()
            .zip(keyed)
            .map(|(r, ks)| {
                r.into_iter()
                    .zip(ks)
                    .map(|(w, mut cps)| {
                        cps.sort_by_key(|c| (c.0, c.1, c.2));
                        ThreadProgram {
                            wcet: w,
                            checkpoints: cps
                                .into_iter()
                                .map(|c| Checkpoint {
                                    at: c.0,
                                    action: c.3,
                                })
                                .collect(),
                        }
                    })
                    .collect()
            })
            .collect();
        Program { regions, dag: None }
    }

    pub fn is_sequential(&self) -> bool {
        self.regions.len() == 1 && self.regions[0].len() == 1
    }
    pub fn threads(&self) -> usize {
        self.regions.iter().map(Vec::len).sum()
    }
    /// The most threads of any region (the most CPUs one job can use at once).
    pub fn width(&self) -> usize {
        self.regions.iter().map(Vec::len).max().unwrap_or(1)
    }
    pub fn has_sections(&self) -> bool {
        self.regions
            .iter()
            .flatten()
            .any(|t| !t.checkpoints.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_sequential_task_gets_what_the_general_path_builds() {
        for wcet in [0, 1, 2_500_000, Time::MAX] {
            let fast = Program::build(wcet, &[], &[]);
            assert_eq!(fast, Program::build_general(wcet, &[], &[]));
            assert!(fast.is_sequential() && !fast.has_sections());
            assert_eq!(fast.regions[0][0].wcet, wcet);
        }
    }

    #[test]
    fn a_rebuilt_program_is_the_built_one_whatever_it_was_before() {
        let parallel = [
            Region {
                threads: vec![3, 4],
            },
            Region { threads: vec![5] },
        ];
        let section = [CriticalSection {
            resource: 0,
            region: 0,
            thread: 0,
            start: 1,
            length: 2,
        }];
        let before = [
            Program::build(9, &[], &[]),
            Program::build(9, &parallel, &[]),
            Program::build(10, &[], &section),
            Program::build(12, &parallel, &section),
        ];
        for old in &before {
            for (wcet, regions, sections) in [
                (7, &[][..], &[][..]),
                (12, &parallel[..], &[][..]),
                (10, &[][..], &section[..]),
            ] {
                let mut p = old.clone();
                p.rebuild(wcet, regions, sections);
                assert_eq!(p, Program::build(wcet, regions, sections));
            }
        }
    }

    /// Hand-worked: a thread of WCET 10 holds bus over [2, 8) of its work and log, nested,
    /// over [4, 6); then bus again over [8, 10) (released and taken again at 8). At its WCET
    /// the stretches are the sections; at demand 5 every boundary is halved; at demand 7
    /// they are 2·7/10 = 1 (rounded down), 2, 4, 5, 5 and 7.
    #[test]
    fn held_stretches_scale_with_the_demand_as_the_ledger_moves_checkpoints() {
        let sec = |resource, start, length| CriticalSection {
            resource,
            region: 0,
            thread: 0,
            start,
            length,
        };
        let p = Program::build(10, &[], &[sec(0, 2, 6), sec(1, 4, 2), sec(0, 8, 2)]);
        let t = &p.regions[0][0];
        assert_eq!(t.held(10), [(0, 2, 8), (1, 4, 6), (0, 8, 10)]);
        assert_eq!(t.held(5), [(0, 1, 4), (1, 2, 3), (0, 4, 5)]);
        assert_eq!(t.held(7), [(0, 1, 5), (1, 2, 4), (0, 5, 7)]);
        // Longer than its WCET (an overrun): stretched the same way.
        assert_eq!(t.held(20), [(0, 4, 16), (1, 8, 12), (0, 16, 20)]);
        assert!(Program::build(10, &[], &[]).regions[0][0]
            .held(7)
            .is_empty());
    }
}
