//! Fixed-priority assignment. Priorities follow Linux `SCHED_FIFO`: a larger number is more
//! urgent. Ties (equal periods or deadlines) go to the task that comes first in the file.
//!
//! [`assign`] is the one rule by which every fixed-priority scheduler gets its priorities,
//! simulated (`gfp`, `pfp`, `gfp-dist`, through `rtsched_policies::ctx`) or real
//! (`kernel:fifo`, `crates/linux/src/kernel/plan.rs`): the assignment named, else the file's
//! when every task has a priority and rate monotonic when none has; a set in which only some
//! tasks have one is refused, since which was meant cannot be told.

use rtsched_model::{Task, TaskSet};

/// How a fixed-priority scheduler (or test) gets its priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priorities {
    RateMonotonic,
    DeadlineMonotonic,
    /// The task file's `priority` fields.
    File,
}

impl Priorities {
    /// Every assignment, in the order the messages list them.
    pub const ALL: [Priorities; 3] = [
        Priorities::File,
        Priorities::RateMonotonic,
        Priorities::DeadlineMonotonic,
    ];

    /// Its name in a scheduler spec (`gfp:rm`, `prio=dm`, `kernel:fifo:file`).
    pub fn name(self) -> &'static str {
        match self {
            Priorities::File => "file",
            Priorities::RateMonotonic => "rm",
            Priorities::DeadlineMonotonic => "dm",
        }
    }

    pub fn parse(name: &str) -> Option<Priorities> {
        Priorities::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The priorities of `tasks`; `None` for [`Priorities::File`] when a task gives none.
    pub fn of(self, tasks: &[Task]) -> Option<Vec<u32>> {
        match self {
            Priorities::File => tasks.iter().map(|t| t.priority).collect(),
            Priorities::RateMonotonic => Some(rate_monotonic(tasks)),
            Priorities::DeadlineMonotonic => Some(deadline_monotonic(tasks)),
        }
    }
}

/// Why [`assign`] gave no priorities: task `task` (an index) has none, and ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriorityError {
    /// ... no assignment was named while other tasks have one.
    Partial { task: usize },
    /// ... `file` was named.
    Missing { task: usize },
}

impl PriorityError {
    /// The message for scheduler `scheduler` (as the user writes it before its options:
    /// `gfp`, `kernel:fifo`) run on `ts`, naming the file, the task and the field.
    pub fn message(&self, ts: &TaskSet, scheduler: &str) -> String {
        match *self {
            PriorityError::Partial { task } => {
                // A set written for Linux's classes: a deadline or fair task has no priority.
                let linux = if ts.has_policies() {
                    format!(
                        " (it runs under policy {}: 'linux' runs every task under its own policy)",
                        ts.sched_policy(task as u32).kind().name()
                    )
                } else {
                    String::new()
                };
                format!(
                    "{}: task '{}': field 'priority': missing, while other tasks have one{linux}; give every task a priority, or choose {scheduler}:rm / {scheduler}:dm",
                    ts.source, ts.tasks[task].name
                )
            }
            PriorityError::Missing { task } => format!(
                "{}: task '{}': field 'priority': missing, and {scheduler}:file needs every task's priority",
                ts.source, ts.tasks[task].name
            ),
        }
    }
}

/// The priorities of `tasks` by the assignment `named`; without one, the file's if every task
/// has a priority, rate monotonic if none has, else [`PriorityError::Partial`]. Returns the
/// assignment used with them.
pub fn assign(
    tasks: &[Task],
    named: Option<Priorities>,
) -> Result<(Vec<u32>, Priorities), PriorityError> {
    let missing = tasks.iter().position(|t| t.priority.is_none());
    let by = match (named, missing) {
        (Some(by), _) => by,
        (None, None) => Priorities::File,
        (None, Some(_)) if tasks.iter().all(|t| t.priority.is_none()) => Priorities::RateMonotonic,
        (None, Some(task)) => return Err(PriorityError::Partial { task }),
    };
    match by.of(tasks) {
        Some(p) => Ok((p, by)),
        None => Err(PriorityError::Missing {
            task: missing.expect("a task without a priority"),
        }),
    }
}

/// Rate monotonic (Liu & Layland 1973): the shorter the period, the higher the priority.
pub fn rate_monotonic(tasks: &[Task]) -> Vec<u32> {
    by_key(tasks, |t| t.period)
}

/// Deadline monotonic (Leung & Whitehead 1982): the shorter the relative deadline, the higher.
pub fn deadline_monotonic(tasks: &[Task]) -> Vec<u32> {
    by_key(tasks, |t| t.deadline)
}

/// Priorities n..1 in increasing order of `key` (stable, so file order breaks ties).
fn by_key(tasks: &[Task], key: impl Fn(&Task) -> u64) -> Vec<u32> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| (key(&tasks[i]), i));
    let mut prio = vec![0u32; tasks.len()];
    for (rank, &i) in order.iter().enumerate() {
        prio[i] = (tasks.len() - rank) as u32;
    }
    prio
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rm_and_dm_by_hand() {
        let mut ts = vec![
            Task::periodic("a", 20, 1),
            Task::periodic("b", 5, 1),
            Task::periodic("c", 10, 1),
            Task::periodic("d", 10, 1),
        ];
        assert_eq!(rate_monotonic(&ts), vec![1, 4, 3, 2]);
        ts[0].deadline = 2;
        assert_eq!(deadline_monotonic(&ts), vec![4, 3, 2, 1]);
    }

    /// The rule on every mix of given priorities: all (the file's), none (RM), some (refused
    /// naming the first task without one); a named assignment wins, and `file` named on a set
    /// missing one is refused naming that task.
    #[test]
    fn the_one_rule_by_hand() {
        let with = |prios: [Option<u32>; 3]| {
            let mut tasks = vec![
                Task::periodic("a", 20, 1),
                Task::periodic("b", 5, 1),
                Task::periodic("c", 10, 1),
            ];
            for (t, p) in tasks.iter_mut().zip(prios) {
                t.priority = p;
            }
            tasks
        };
        let all = with([Some(7), Some(1), Some(3)]);
        assert_eq!(assign(&all, None), Ok((vec![7, 1, 3], Priorities::File)));
        assert_eq!(
            assign(&all, Some(Priorities::RateMonotonic)),
            Ok((vec![1, 3, 2], Priorities::RateMonotonic))
        );
        let none = with([None; 3]);
        assert_eq!(
            assign(&none, None),
            Ok((vec![1, 3, 2], Priorities::RateMonotonic))
        );
        assert_eq!(
            assign(&none, Some(Priorities::File)),
            Err(PriorityError::Missing { task: 0 })
        );
        let some = with([Some(7), None, Some(3)]);
        assert_eq!(assign(&some, None), Err(PriorityError::Partial { task: 1 }));
        assert_eq!(
            assign(&some, Some(Priorities::DeadlineMonotonic)),
            Ok((vec![1, 3, 2], Priorities::DeadlineMonotonic))
        );
        let ts = TaskSet {
            source: "s.yaml".into(),
            ..TaskSet::new(1, some)
        };
        assert_eq!(
            PriorityError::Partial { task: 1 }.message(&ts, "kernel:fifo"),
            "s.yaml: task 'b': field 'priority': missing, while other tasks have one; give every task a priority, or choose kernel:fifo:rm / kernel:fifo:dm"
        );
        assert_eq!(
            PriorityError::Missing { task: 1 }.message(&ts, "gfp"),
            "s.yaml: task 'b': field 'priority': missing, and gfp:file needs every task's priority"
        );
        for p in Priorities::ALL {
            assert_eq!(Priorities::parse(p.name()), Some(p));
        }
        assert_eq!(Priorities::parse("edf"), None);
    }
}
