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
//! - `srp`: the stack resource policy (Baker 1991: a job may start only when its
//!   preemption level exceeds the system ceiling), for EDF; preemption levels are Baker's for
//!   EDF, ordered by relative deadline (a shorter deadline is a higher level).
//!
//! The uniprocessor protocols keep their meaning under partitioning only for a *local*
//! resource, one whose users are all bound to one CPU: `pcp` and `srp` on a platform of more
//! than one CPU need every user's `cpu` field, all equal (global resources are not modelled
//! yet, docs/locking.md).

use crate::task::TaskSet;
use serde::Serialize;

/// A resource's locking protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    #[default]
    None,
    Pip,
    Pcp,
    Srp,
}

impl Protocol {
    pub const NAMES: &'static [&'static str] = &["none", "pip", "pcp", "srp"];

    pub fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "none" => Protocol::None,
            "pip" => Protocol::Pip,
            "pcp" => Protocol::Pcp,
            "srp" => Protocol::Srp,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Protocol::None => "none",
            Protocol::Pip => "pip",
            Protocol::Pcp => "pcp",
            Protocol::Srp => "srp",
        }
    }
    pub fn is_none(&self) -> bool {
        *self == Protocol::None
    }
    /// Whether it raises a holder to a ceiling (which needs every user's priority or level).
    pub fn is_ceiling(self) -> bool {
        matches!(self, Protocol::Pcp | Protocol::Srp)
    }
}

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
    /// by every user (a local resource).
    pub fn locking_error(&self) -> Option<LockingError> {
        for r in 0..self.resources.len() {
            let p = self.protocol(r);
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
                if p == Protocol::Pcp && task.priority.is_none() {
                    return Some(err(t, format!(
                        "resource '{}' uses pcp, whose ceiling is the highest priority of its users: task '{}' needs a 'priority'",
                        self.resources[r], task.name
                    )));
                }
                if self.platform.cpus > 1 {
                    match (cpu, task.cpu) {
                        (_, None) => return Some(err(t, format!(
                            "resource '{}' uses {}, a uniprocessor protocol: on {} CPUs every user needs a 'cpu' field (global resources are not modelled yet)",
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_taskset, Format};

    fn load(yaml: &str) -> Result<TaskSet, String> {
        parse_taskset(yaml, Format::Yaml, "l.yaml").map_err(|e| e.to_string())
    }

    const TASKS: &str = "tasks:\n  - {name: l, period: 20, wcet: 4, priority: 1, sections: [{resource: R, start: 0, length: 4}]}\n  - {name: h, period: 20, wcet: 2, sections: [{resource: R, start: 0, length: 1}]}\n";

    #[test]
    fn protocols_come_from_the_resource_then_the_set_then_none() {
        let ts = load("platform: {cpus: 1}\nrun: {locking: pip}\nresources: [{name: R, protocol: none}, S]\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: R, start: 0, length: 1}, {resource: S, start: 1, length: 1}]}\n").unwrap();
        assert_eq!(ts.protocol(0), Protocol::None);
        assert_eq!(ts.protocol(1), Protocol::Pip);
        let plain = load("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: R, start: 0, length: 1}]}\n").unwrap();
        assert_eq!(plain.protocol(0), Protocol::None);
        assert!(!plain.has_locking());
    }

    #[test]
    fn protocols_survive_writing_and_reading_back() {
        let ts = load("platform: {cpus: 1}\nrun: {locking: srp}\nresources: [{name: R, protocol: pip}, S]\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: R, start: 0, length: 1}, {resource: S, start: 1, length: 1}]}\n").unwrap();
        let back = load(&crate::file::to_yaml(&ts)).unwrap();
        assert_eq!(back.run.locking, Protocol::Srp);
        assert_eq!(
            (back.protocol(0), back.protocol(1)),
            (Protocol::Pip, Protocol::Srp)
        );
    }

    #[test]
    fn a_ceiling_protocol_needs_every_users_priority_and_one_cpu() {
        let e = load(&format!(
            "platform: {{cpus: 1}}\nresources: [{{name: R, protocol: pcp}}]\n{TASKS}"
        ))
        .unwrap_err();
        assert!(
            e.contains("l.yaml")
                && e.contains("task 'h'")
                && e.contains("resource 'R'")
                && e.contains("'priority'"),
            "{e}"
        );
        // srp's levels come from the deadlines: no field needed on one CPU.
        assert!(load(&format!(
            "platform: {{cpus: 1}}\nrun: {{locking: srp}}\n{TASKS}"
        ))
        .is_ok());
        let e = load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: srp}}\n{TASKS}"
        ))
        .unwrap_err();
        assert!(e.contains("task 'l'") && e.contains("'cpu'"), "{e}");
        // pip needs neither.
        assert!(load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: pip}}\n{TASKS}"
        ))
        .is_ok());
        let e = load("platform: {cpus: 1}\nrun: {locking: ceiling}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n").unwrap_err();
        assert!(e.contains("locking") && e.contains("pcp"), "{e}");
        let e = load("platform: {cpus: 1}\nresources: [{name: R, protocl: pip}]\ntasks:\n  - {name: a, period: 10, wcet: 2}\n").unwrap_err();
        assert!(e.contains("protocl") && e.contains("protocol"), "{e}");
    }
}
