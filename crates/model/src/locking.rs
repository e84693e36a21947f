//! Real-time locking protocols: which one governs each resource, and the checks a task set
//! must pass to use it (docs/locking.md, docs/taskset-format.md "Critical sections").
//!
//! - `none`: a plain FIFO mutex (the default; docs/semantics.md "Resources").
//! - `pip`: the priority inheritance protocol (Sha, Rajkumar & Lehoczky 1990: a job
//!   blocking higher-priority jobs executes at the highest priority of the jobs it blocks,
//!   transitively; the resource goes to its highest-priority waiter).
//! - `pcp`: the immediate priority ceiling protocol, the OSEK/AUTOSAR form (a job that locks a
//!   resource runs at once at the resource's ceiling, the highest priority of its users); the
//!   ceiling is taken from the tasks' `priority` fields, which every user must have.
//! - `pcp:original`: the original priority ceiling protocol (Sha, Rajkumar & Lehoczky 1990:
//!   a job may lock a free resource only if its priority is higher than the ceilings of the
//!   resources locked by other jobs, else it is ceiling blocked and the holder inherits its
//!   priority); the same ceilings and the same checks as `pcp`.
//! - `srp`: the stack resource policy (Baker 1991: a job may start only when its
//!   preemption level exceeds the system ceiling), for EDF; preemption levels are Baker's for
//!   EDF, ordered by relative deadline (a shorter deadline is a higher level).
//!
//! The uniprocessor protocols keep their meaning under partitioning only for a *local*
//! resource, one whose users are all bound to one CPU: `pcp` and `srp` on a platform of more
//! than one CPU need every user's `cpu` field, all equal (global resources are not modelled
//! yet, docs/locking.md) — or, in a set where no task gives a `cpu`, a partitioner to place
//! them: `rtsched partition` keeps a resource's users on one CPU, and a run refuses a
//! scheduler that binds them to different CPUs or to none (`rtsched_runtime`'s
//! `refuses_locking`).
//!
//! - `msrp` (Gai, Lipari & Di Natale 2001) and `mrsp` (Burns & Wellings 2013) are the
//!   multiprocessor protocols: whether a resource is local or global follows from the
//!   partition (the tasks' `cpu` fields or the partitioner's), so the scheduler must be
//!   partitioned (checked where the policy is built). A section of theirs may not nest with
//!   another section (nested global resources are not modelled).
//! - `omlp` (the global OMLP, Brandenburg & Anderson 2010) is for global scheduling (checked
//!   where the policy is built); its sections may not nest either (its bound, and the
//!   ledger's queues, take one request at a time).
//! - `fmlp+` (Brandenburg 2014: FIFO queues, a waiting job suspends, a holder is priority
//!   boosted) has the same rules as `msrp` and `mrsp`: a partitioned scheduler, no nesting.
//!   It treats local and global resources alike.

use crate::task::TaskSet;

pub use crate::protocol::Protocol;

/// What goes wrong with a protocol's use: the task and resource, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockingError {
    pub task: String,
    pub resource: String,
    pub message: String,
}

impl TaskSet {
    /// The protocol of resource `r`: its own (`resources: [{name, protocol}]`), else the set's
    /// (`run.locking`), else `none`.
    pub fn protocol(&self, r: usize) -> Protocol {
        self.run
            .resource_locking
            .get(r)
            .copied()
            .flatten()
            .unwrap_or(self.run.locking)
    }
    /// Whether any resource has a protocol other than `none`.
    pub fn has_locking(&self) -> bool {
        (0..self.resources.len()).any(|r| self.protocol(r) != Protocol::None)
    }
    /// The tasks whose sections use resource `r`, in task order.
    pub fn users(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        self.tasks
            .iter()
            .enumerate()
            .filter(move |(_, t)| t.sections.iter().any(|s| s.resource as usize == r))
            .map(|(i, _)| i)
    }
    /// The first user of a ceiling-protocol resource that lacks what the protocol needs: a
    /// `priority` under `pcp`; under `pcp` and `srp` on several CPUs, a `cpu` field shared
    /// by every user (a local resource), unless no task of the set gives one (a partitioner
    /// places the set, keeping each resource's users together).
    pub fn locking_error(&self) -> Option<LockingError> {
        let placed = self.tasks.iter().any(|t| t.cpu.is_some());
        for r in 0..self.resources.len() {
            let p = self.protocol(r);
            if p.partitioned() || p.is_global() {
                if let Some(e) = self.nested_with(r) {
                    return Some(e);
                }
                continue;
            }
            if !p.is_ceiling() {
                continue;
            }
            let err = |t: usize, message: String| LockingError {
                task: self.tasks[t].name.clone(),
                resource: self.resources[r].clone(),
                message,
            };
            let mut cpu: Option<(usize, Option<u32>)> = None;
            for t in self.users(r) {
                let task = &self.tasks[t];
                if p.is_pcp() && task.priority.is_none() {
                    return Some(err(t, format!(
                        "resource '{}' uses {}, whose ceiling is the highest priority of its users: task '{}' needs a 'priority'",
                        self.resources[r], p.name(), task.name
                    )));
                }
                if self.platform.cpus > 1 && placed {
                    match (cpu, task.cpu) {
                        (_, None) => return Some(err(t, format!(
                            "resource '{}' uses {}, a uniprocessor protocol: on {} CPUs every user needs a 'cpu' field (global resources are not modelled yet), or no task one (a partitioner places the set)",
                            self.resources[r], p.name(), self.platform.cpus
                        ))),
                        (Some((u, c)), Some(x)) if c != Some(x) => return Some(err(t, format!(
                            "resource '{}' uses {}, a uniprocessor protocol: its users '{}' (cpu {}) and '{}' (cpu {x}) are on different CPUs (global resources are not modelled yet)",
                            self.resources[r], p.name(), self.tasks[u].name, c.unwrap_or(0), task.name
                        ))),
                        _ => cpu = Some((t, task.cpu)),
                    }
                }
            }
        }
        None
    }

    /// The first task with a section of resource `r` (a multiprocessor protocol's: `msrp`,
    /// `mrsp`, `fmlp+`, `omlp`) that overlaps another section of the same thread: nested
    /// global resources are not modelled.
    fn nested_with(&self, r: usize) -> Option<LockingError> {
        for task in &self.tasks {
            for a in task.sections.iter().filter(|s| s.resource as usize == r) {
                let other = task.sections.iter().find(|b| {
                    !std::ptr::eq(*b, a)
                        && (b.region, b.thread) == (a.region, a.thread)
                        && b.start < a.start + a.length
                        && a.start < b.start + b.length
                });
                if let Some(b) = other {
                    return Some(LockingError {
                        task: task.name.clone(),
                        resource: self.resources[r].clone(),
                        message: format!(
                            "resource '{}' uses {}, whose sections may not nest: task '{}' holds '{}' in it (nested global resources are not modelled)",
                            self.resources[r],
                            self.protocol(r).name(),
                            task.name,
                            self.resources[b.resource as usize]
                        ),
                    });
                }
            }
        }
        None
    }
}
