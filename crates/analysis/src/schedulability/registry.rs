//! What a schedulability test is, and the walk over every test: the one list `rtsched analyze`,
//! a sweep's `test:NAME` (`named.rs`), `rtsched schedulers` and the overhead-aware analysis
//! (`crate::overheads`) read, as `rtsched_policies::registry::ENTRIES` is for policies.
//!
//! A test is an [`Entry`] of [`super::ENTRIES`], declared in the file of its mathematics: its
//! name, what it tests, its source, the kind of answer it gives, the sets it applies to — a
//! typed predicate ([`Applies`]) checked before the test runs, which names a [`Reason`] when a
//! set is outside it — its verdict function and its overhead-aware form. A test for one CPU
//! also has a per-CPU form, `p-NAME` ([`Form::PerCpu`]): run on each CPU of a set whose tasks
//! all give their `cpu`, schedulable iff every used CPU is.
//!
//! A refusal is of one of two kinds. The set is not what the test is *for* (another number of
//! CPUs, no `cpu` fields or priorities, no parallel task for a test of parallel tasks):
//! `analyze` leaves the test out. The set is outside the test's *model* (parallel tasks or
//! critical sections it does not model, deadlines its theorem excludes): `analyze` lists the
//! test as not applicable, saying why — and, for structure it does not model, what the test
//! would say ignoring it.
//!
//! A verdict is a [`Verdict`]: the test's name, its answer and the quantity it compared. Tests
//! with per-task results (response-time bounds, slack) add them to `Verdict` beside `detail`;
//! an entry's shape does not change.

use super::{blocking, Cdt, Verdict};
use rtsched_model::{Communication, Overheads, Protocol, Task, TaskSet, Time};
use std::fmt;

/// What a test's answer means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Refutes (unschedulable) or stays silent: a set it does not refute is "not refuted", and
    /// its acceptance bounds every scheduler's from above.
    Necessary,
    /// Proves schedulable, or is inconclusive (some also refute a set that is over capacity).
    Sufficient,
    /// Decides either way (inconclusive only when an iteration cap is hit).
    Exact,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Necessary => "necessary",
            Kind::Sufficient => "sufficient",
            Kind::Exact => "exact",
        }
    }
}

/// How many CPUs a test is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpus {
    /// One CPU; the test also exists per CPU of a partitioned set ([`Form::PerCpu`]).
    One,
    /// Several CPUs, scheduled globally.
    Several,
    /// One CPU, or a partitioned set (every task gives its `cpu`), analysed whole: a test
    /// whose tasks on different CPUs affect each other (a trigger's response is the release
    /// jitter of the task it triggers, `holistic.rs`).
    Partitioned,
    Any,
}

/// Which triggered tasks, self-suspensions and data-flow chains (docs/chains.md) a test takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Tasks released by their own period or arrivals that run without pausing: a triggered or
    /// self-suspending task is outside the model.
    Not,
    /// A test for sets with self-suspending tasks; triggered tasks are outside its model.
    Suspensions,
    /// A test for sets with triggered or self-suspending tasks (or both).
    Triggers,
    /// A test for sets with a data-flow chain communicating so; it models triggers and
    /// suspensions too (the response times it uses do).
    Chain(Communication),
    /// Any set: it models triggers and suspensions, and is not only for them.
    Any,
}

/// Which tasks a test models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tasks {
    /// Sequential tasks only: no DAG, no region of more than one thread.
    Sequential,
    /// Parallel (DAG and fork-join) tasks, sequential ones among them; a test for sets with at
    /// least one parallel task.
    Parallel,
    Any,
}

/// Which relative deadlines a test's theorem takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deadlines {
    /// D = T.
    Implicit,
    /// D ≤ T.
    Constrained,
    Arbitrary,
}

/// Which critical sections a test models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sections {
    /// None: a set with sections is outside the model.
    Not,
    /// Any: the test holds whatever the protocol (a necessary condition, LET's exact one).
    Any,
    /// Sections on local resources under one of these protocols, whose blocking the test
    /// charges (`blocking.rs`).
    Blocking(&'static [Protocol]),
}

impl Sections {
    /// Whether the test models some critical sections.
    pub fn modelled(self) -> bool {
        self != Sections::Not
    }
}

/// Why a test that charges blocking (`Sections::Blocking`) cannot bound a set's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockingReason {
    /// Resource `resource` has `protocol`, which the test does not bound (`none`: a plain
    /// FIFO mutex, unbounded priority inversion); `takes`: the protocols it bounds.
    Protocol {
        resource: usize,
        protocol: Protocol,
        takes: &'static [Protocol],
    },
    /// Resources `a` and `b` have different protocols.
    Mixed { a: usize, b: usize },
    /// Resource `resource`'s users are on different CPUs (or give no `cpu`).
    Global { resource: usize },
    /// Task `task` nests sections under `pip` (transitive blocking, possible deadlock).
    NestedPip { task: usize },
    /// Task `task` nests sections under `msrp`, `mrsp` or `fmlp+` (their terms take one
    /// request at a time).
    NestedMsrp { task: usize },
}

/// The sets a test applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Applies {
    pub cpus: Cpus,
    pub tasks: Tasks,
    pub deadlines: Deadlines,
    /// Which critical sections (blocking) the test models.
    pub sections: Sections,
    /// Whether the test needs every task's `priority`.
    pub priorities: bool,
    /// The triggers, suspensions and chains it takes.
    pub flow: Flow,
}

/// Parallel structure in a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parallel {
    Regions,
    Dags,
    Both,
}

/// Why a test does not apply to a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A test for one CPU, and the set has `cpus`.
    OneCpu { cpus: u32 },
    /// A global test, and the set has one CPU.
    SeveralCpus,
    /// A per-CPU (`p-`) test, and the set has one CPU.
    PerCpuOnOne,
    /// A per-CPU test, and task `task` gives no `cpu`.
    NoCpu { task: usize },
    /// The test needs every task's priority, and task `task` gives none.
    NoPriority { task: usize },
    /// A test for parallel tasks, and every task is sequential.
    NoParallelTask,
    /// The set has parallel tasks or critical sections the test does not model; `ignoring`:
    /// the test's answer on the set without them, when it applies there.
    Unmodelled {
        parallel: Option<Parallel>,
        sections: bool,
        ignoring: Option<Option<bool>>,
    },
    /// Task `task`'s deadline is outside what the test takes.
    Deadline { task: usize, takes: Deadlines },
    /// The overhead-aware analysis inflates independent sequential tasks (and parallel ones
    /// for Melani et al.'s analysis) only.
    OverheadsSequentialOnly,
    /// The test has no overhead-aware form.
    NoOverheadForm,
    /// A test for sets with the triggers, suspensions or chains `Flow` says, and the set has
    /// none.
    NoFlow(Flow),
    /// The set has triggered or self-suspending tasks the test does not model; `ignoring`:
    /// the test's answer on the set read without them (each triggered task as periodic at its
    /// inherited period, each suspension left out), when it applies there — the reading
    /// `analyze` made before it knew them, which is not sound for them.
    UnmodelledFlow {
        triggers: bool,
        suspensions: bool,
        ignoring: Option<Option<bool>>,
    },
    /// The test applies to the set as written, not to it with its overheads charged.
    Inflated(InflatedReason),
    /// The test charges blocking, and cannot bound this set's.
    Blocking(BlockingReason),
}

/// Why a test that applies to a set does not apply once its overheads are charged. A release
/// latency shortens every deadline (D' = D − ρ), so only a deadline class can be lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InflatedReason {
    /// D' < T: the test takes implicit deadlines.
    NotImplicit,
}

impl Reason {
    /// Whether the set is not one the test is for (`analyze` leaves the test out) rather than
    /// outside its model (`analyze` lists the test as not applicable).
    pub fn for_other_sets(&self) -> bool {
        matches!(
            self,
            Reason::OneCpu { .. }
                | Reason::SeveralCpus
                | Reason::PerCpuOnOne
                | Reason::NoCpu { .. }
                | Reason::NoPriority { .. }
                | Reason::NoParallelTask
                | Reason::NoFlow(_)
        )
    }
}

/// A refusal: the test (by its entry's name) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotApplicable {
    pub test: &'static str,
    pub reason: Reason,
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.test;
        match self.reason {
            Reason::Inflated(InflatedReason::NotImplicit) => {
                return f.write_str(
                    "not applicable to the inflated set (D' = D − release latency is not T)",
                )
            }
            _ => f.write_str("not applicable: ")?,
        }
        match self.reason {
            Reason::OneCpu { cpus } => write!(
                f,
                "a uniprocessor test, and the set has {cpus} CPUs (p-{name} tests each CPU of a partitioned set)"
            ),
            Reason::SeveralCpus => {
                f.write_str("a global test, and the set has 1 CPU (edf-exact decides it)")
            }
            Reason::PerCpuOnOne => write!(
                f,
                "a per-CPU test, and the set has 1 CPU ({name} tests it whole)"
            ),
            Reason::NoCpu { .. } => {
                f.write_str("a p- test needs every task to give its CPU (`cpu`)")
            }
            Reason::NoPriority { .. } => f.write_str("not every task gives a priority"),
            Reason::NoParallelTask => f.write_str(
                "a test for parallel (DAG, fork-join) tasks, and every task is sequential",
            ),
            Reason::Unmodelled {
                parallel,
                sections,
                ignoring,
            } => {
                let p = parallel.map(|p| match p {
                    Parallel::Regions => "parallel regions",
                    Parallel::Dags => "DAG tasks",
                    Parallel::Both => "parallel regions and DAG tasks",
                });
                match (p, sections) {
                    (Some(p), true) => write!(f, "the test does not model {p} and critical sections")?,
                    (Some(p), false) => write!(f, "the test does not model {p}")?,
                    _ => f.write_str("the test does not model critical sections (blocking)")?,
                }
                match ignoring {
                    Some(s) => write!(
                        f,
                        " (ignoring them it would say {})",
                        match s {
                            Some(true) => "schedulable",
                            Some(false) => "unschedulable",
                            None => "inconclusive",
                        }
                    ),
                    None => Ok(()),
                }
            }
            Reason::Deadline { task, takes } => match takes {
                Deadlines::Implicit => write!(
                    f,
                    "task {task} has D ≠ T (the bound is for implicit deadlines)"
                ),
                _ => write!(
                    f,
                    "task {task} has D > T (the test is for constrained deadlines, D ≤ T)"
                ),
            },
            Reason::OverheadsSequentialOnly => f.write_str(
                "the overhead-aware analysis covers independent sequential tasks (and parallel ones under Melani et al.'s analysis) only",
            ),
            Reason::NoOverheadForm => f.write_str("the test has no overhead-aware form"),
            Reason::NoFlow(flow) => f.write_str(match flow {
                Flow::Suspensions => "a test for self-suspending tasks, and no task suspends",
                Flow::Chain(Communication::Implicit) => {
                    "a test of implicit-communication chains, and the set has none"
                }
                Flow::Chain(Communication::Let) => "a test of LET chains, and the set has none",
                _ => "a test for triggered or self-suspending tasks, and the set has none",
            }),
            Reason::UnmodelledFlow {
                triggers,
                suspensions,
                ignoring,
            } => {
                let what = match (triggers, suspensions) {
                    (true, true) => "triggered and self-suspending tasks",
                    (true, false) => "triggered tasks",
                    _ => "self-suspending tasks",
                };
                write!(f, "the test does not model {what}")?;
                match ignoring {
                    Some(s) => write!(
                        f,
                        " (read as periodic tasks without suspensions, which is not sound for them, it would say {})",
                        match s {
                            Some(true) => "schedulable",
                            Some(false) => "unschedulable",
                            None => "inconclusive",
                        }
                    ),
                    None => Ok(()),
                }
            }
            Reason::Blocking(b) => b.fmt(f, &|r| format!("#{r}"), &|t| format!("task {t}")),
            Reason::Inflated(_) => unreachable!("written above"),
        }
    }
}

impl NotApplicable {
    /// The refusal in words, naming `ts`'s resources and tasks where it speaks of them.
    pub fn words(&self, ts: &TaskSet) -> String {
        match self.reason {
            Reason::Blocking(b) => {
                let res = |r: usize| {
                    ts.resources
                        .get(r)
                        .map_or(format!("#{r}"), |n| format!("'{n}'"))
                };
                let task = |t: usize| {
                    ts.tasks
                        .get(t)
                        .map_or(format!("task {t}"), |x| format!("task '{}'", x.name))
                };
                let mut s = String::from("not applicable: ");
                let _ = b.fmt(&mut s, &res, &task);
                s
            }
            _ => self.to_string(),
        }
    }
}

impl BlockingReason {
    fn fmt(
        &self,
        f: &mut dyn fmt::Write,
        res: &dyn Fn(usize) -> String,
        task: &dyn Fn(usize) -> String,
    ) -> fmt::Result {
        match *self {
            BlockingReason::Protocol {
                resource,
                protocol: Protocol::None,
                ..
            } => write!(
                f,
                "resource {} is a plain FIFO mutex (locking: none): a medium-priority job can prolong a blocked job's wait without bound (unbounded priority inversion); give it pip, pcp or srp (docs/locking.md)",
                res(resource)
            ),
            BlockingReason::Protocol {
                resource,
                protocol,
                takes,
            } => write!(
                f,
                "resource {} uses {}, and the test bounds blocking under {} only",
                res(resource),
                protocol.name(),
                takes.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ),
            BlockingReason::Mixed { a, b } => write!(
                f,
                "resources {} and {} use different protocols; the test bounds one protocol at a time",
                res(a),
                res(b)
            ),
            BlockingReason::Global { resource } => write!(
                f,
                "resource {} is global (its users are on different CPUs): the uniprocessor tests bound local resources only, and global ones under msrp, mrsp and fmlp+ (per CPU of a partitioned set: fixed priority; msrp and fmlp+ under EDF too); the global tests bound omlp's",
                res(resource)
            ),
            BlockingReason::NestedMsrp { task: t } => write!(
                f,
                "{} nests critical sections under a multiprocessor protocol: the terms of msrp, mrsp and fmlp+ take one request at a time",
                task(t)
            ),
            BlockingReason::NestedPip { task: t } => write!(
                f,
                "{} nests critical sections under pip: transitive blocking (and deadlock) is not bounded by this test; use pcp or srp",
                task(t)
            ),
        }
    }
}

/// The parallel structure of `ts`, if any.
pub fn parallel(ts: &TaskSet) -> Option<Parallel> {
    let regions = ts.tasks.iter().any(|t| t.dag.is_none() && t.is_parallel());
    let dags = ts.tasks.iter().any(|t| t.dag.is_some());
    match (regions, dags) {
        (true, true) => Some(Parallel::Both),
        (true, false) => Some(Parallel::Regions),
        (false, true) => Some(Parallel::Dags),
        (false, false) => None,
    }
}

/// Whether some task of `ts` has critical sections.
pub fn has_sections(ts: &TaskSet) -> bool {
    ts.tasks.iter().any(|t| !t.sections.is_empty())
}

/// Whether some task of `ts` is triggered, and whether some task self-suspends.
pub fn flow(ts: &TaskSet) -> (bool, bool) {
    (
        ts.tasks.iter().any(|t| t.trigger.is_some()),
        ts.tasks.iter().any(|t| !t.suspensions.is_empty()),
    )
}

/// Whether `ts` is more than independent sequential tasks: parallel tasks, critical sections,
/// triggered or self-suspending tasks.
pub fn structured(ts: &TaskSet) -> bool {
    parallel(ts).is_some() || has_sections(ts) || flow(ts) != (false, false)
}

impl Applies {
    /// Whether a set of `m` CPUs is one the test is for.
    fn for_cpus(&self, m: u32) -> Result<(), Reason> {
        match self.cpus {
            Cpus::One if m > 1 => Err(Reason::OneCpu { cpus: m }),
            Cpus::Several if m == 1 => Err(Reason::SeveralCpus),
            _ => Ok(()),
        }
    }

    /// The rest of what the test is for: priorities, parallel tasks.
    fn for_tasks(&self, ts: &TaskSet) -> Result<(), Reason> {
        if self.priorities {
            if let Some(task) = ts.tasks.iter().position(|t| t.priority.is_none()) {
                return Err(Reason::NoPriority { task });
            }
        }
        if self.tasks == Tasks::Parallel && parallel(ts).is_none() {
            return Err(Reason::NoParallelTask);
        }
        let (triggers, suspensions) = flow(ts);
        let none = match self.flow {
            Flow::Not | Flow::Any => false,
            Flow::Suspensions => !suspensions,
            Flow::Triggers => !triggers && !suspensions,
            Flow::Chain(c) => !ts.chains.iter().any(|k| k.communication == Some(c)),
        };
        if none {
            return Err(Reason::NoFlow(self.flow));
        }
        Ok(())
    }

    /// Structure of `ts` the test does not model (also asked by partition/remote.rs, whose
    /// admission runs the test on partial placements of `ts`).
    pub(crate) fn models(&self, ts: &TaskSet) -> Result<(), Reason> {
        let parallel = match self.tasks {
            Tasks::Sequential => parallel(ts),
            _ => None,
        };
        let sections = !self.sections.modelled() && has_sections(ts);
        if parallel.is_some() || sections {
            return Err(Reason::Unmodelled {
                parallel,
                sections,
                ignoring: None,
            });
        }
        let (triggers, suspensions) = flow(ts);
        let (triggers, suspensions) = match self.flow {
            Flow::Not => (triggers, suspensions),
            Flow::Suspensions => (triggers, false),
            Flow::Triggers | Flow::Chain(_) | Flow::Any => (false, false),
        };
        if triggers || suspensions {
            return Err(Reason::UnmodelledFlow {
                triggers,
                suspensions,
                ignoring: None,
            });
        }
        match self.sections {
            Sections::Blocking(takes) => bounded(ts, takes).map_err(Reason::Blocking),
            _ => Ok(()),
        }
    }

    /// Whether the deadlines of the tasks `idx` of `ts` are ones the test takes.
    fn takes_deadlines(&self, ts: &TaskSet, idx: &[usize]) -> Result<(), Reason> {
        let bad = |t: &Task| match self.deadlines {
            Deadlines::Implicit => t.deadline != t.period,
            Deadlines::Constrained => t.deadline > t.period,
            Deadlines::Arbitrary => false,
        };
        match idx.iter().copied().find(|&i| bad(&ts.tasks[i])) {
            Some(task) => Err(Reason::Deadline {
                task,
                takes: self.deadlines,
            }),
            None => Ok(()),
        }
    }

    /// Whether a test of one form (the whole set: no `cpu` fields asked) applies to `ts`.
    pub fn check(&self, ts: &TaskSet) -> Result<(), Reason> {
        self.for_cpus(ts.platform.cpus)?;
        self.for_tasks(ts)?;
        self.models(ts)?;
        self.takes_deadlines(ts, &(0..ts.tasks.len()).collect::<Vec<_>>())
    }

    /// In words, for `rtsched schedulers` (`per_cpu`: the name of the per-CPU form).
    pub fn describe(&self, per_cpu: &str) -> String {
        let mut parts: Vec<String> = Vec::new();
        match self.cpus {
            Cpus::One => parts.push(format!("one CPU (per CPU of a partitioned set: {per_cpu})")),
            Cpus::Several => parts.push("several CPUs".into()),
            Cpus::Partitioned => parts.push("one CPU, or every task's `cpu`".into()),
            Cpus::Any => {}
        }
        match self.tasks {
            Tasks::Sequential => parts.push("sequential tasks".into()),
            Tasks::Parallel => parts.push("sets with parallel (DAG, fork-join) tasks".into()),
            Tasks::Any => {}
        }
        match self.sections {
            Sections::Not => parts.push("no critical sections".into()),
            Sections::Any => {}
            Sections::Blocking(ps) => {
                // Names apart, so a folded table breaks between them, not inside one.
                let names: Vec<_> = ps.iter().map(|p| p.name()).collect();
                let listed = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.join(""),
                };
                parts.push(if ps == [Protocol::Omlp] {
                    "critical sections under omlp (suspension-oblivious blocking)".to_string()
                } else {
                    format!("critical sections on local resources under {listed}")
                })
            }
        }
        match self.deadlines {
            Deadlines::Implicit => parts.push("D = T".into()),
            Deadlines::Constrained => parts.push("D ≤ T".into()),
            Deadlines::Arbitrary => {}
        }
        if self.priorities {
            parts.push("every task's priority".into());
        }
        match self.flow {
            Flow::Not => parts.push("no triggered or self-suspending task".into()),
            Flow::Suspensions => {
                parts.push("sets with self-suspending tasks, none triggered".into())
            }
            Flow::Triggers => {
                parts.push("sets with triggered (not `all`) or self-suspending tasks".into())
            }
            Flow::Chain(c) => parts.push(format!("sets with {} chains", c.name())),
            Flow::Any => {}
        }
        if parts.is_empty() {
            "every set".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Whether a test that bounds blocking under `takes` can bound `ts`'s: one protocol among
/// them on every resource used, local resources only, no nesting under `pip`.
fn bounded(ts: &TaskSet, takes: &'static [Protocol]) -> Result<(), BlockingReason> {
    let used = |r: usize| {
        ts.tasks
            .iter()
            .any(|t| t.sections.iter().any(|s| s.resource as usize == r))
    };
    if let Some(resource) =
        (0..ts.resources.len()).find(|&r| used(r) && ts.protocol(r) == Protocol::None)
    {
        return Err(BlockingReason::Protocol {
            resource,
            protocol: Protocol::None,
            takes,
        });
    }
    let p = match blocking::protocol_of(ts) {
        Ok(None) => return Ok(()),
        Ok(Some(p)) => p,
        Err((a, b)) => return Err(BlockingReason::Mixed { a, b }),
    };
    if !takes.contains(&p) {
        let resource = ts
            .tasks
            .iter()
            .find_map(|t| t.sections.first())
            .map_or(0, |s| s.resource as usize);
        return Err(BlockingReason::Protocol {
            resource,
            protocol: p,
            takes,
        });
    }
    if let Some(resource) = blocking::global_resource(ts) {
        if !p.partitioned() && !p.is_global() {
            return Err(BlockingReason::Global { resource });
        }
    }
    match ts.tasks.iter().position(blocking::nests) {
        Some(task) if p == Protocol::Pip => Err(BlockingReason::NestedPip { task }),
        Some(task) if p.partitioned() || p.is_global() => Err(BlockingReason::NestedMsrp { task }),
        _ => Ok(()),
    }
}

/// Priorities a fixed-priority test assumes (the assignment the schedulers use, `crate::priority`).
pub use crate::priority::Priorities;

/// What a verdict function is handed: tasks of a set (all of them, or one CPU's) and the CPUs
/// they have.
pub struct Subject<'a> {
    set: &'a TaskSet,
    idx: Vec<usize>,
    cpus: u32,
    cdt: Vec<Cdt>,
}

impl<'a> Subject<'a> {
    /// Every task of `set` on its CPUs.
    pub fn whole(set: &'a TaskSet) -> Subject<'a> {
        Subject::of(set, (0..set.tasks.len()).collect(), set.platform.cpus)
    }

    /// Tasks `idx` of `set` on `cpus` CPUs.
    pub fn of(set: &'a TaskSet, idx: Vec<usize>, cpus: u32) -> Subject<'a> {
        let cdt = idx.iter().map(|&i| Cdt::from(&set.tasks[i])).collect();
        Subject {
            set,
            idx,
            cpus,
            cdt,
        }
    }

    /// The set the tasks come from (its structure, resources, names).
    pub fn set(&self) -> &'a TaskSet {
        self.set
    }

    pub fn cpus(&self) -> u32 {
        self.cpus
    }

    /// The tasks' indices in [`Subject::set`], in order.
    pub fn indices(&self) -> &[usize] {
        &self.idx
    }

    /// The tasks as (C, D, T), in order.
    pub fn cdt(&self) -> &[Cdt] {
        &self.cdt
    }

    /// Each task's WCET inflated by `by` (in order): a suspension-oblivious blocking term
    /// (`omlp.rs`).
    pub fn inflate(&mut self, by: &[Time]) {
        for (x, &b) in self.cdt.iter_mut().zip(by) {
            x.c += b;
        }
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> impl Iterator<Item = &'a Task> + '_ {
        self.idx.iter().map(|&i| &self.set.tasks[i])
    }

    /// The tasks' priorities (larger is more urgent; `crate::priority`), `None` for
    /// [`Priorities::File`] when a task gives none.
    pub fn priorities(&self, by: Priorities) -> Option<Vec<u32>> {
        match by {
            Priorities::File => self.tasks().map(|t| t.priority).collect(),
            _ => by.of(&self.tasks().cloned().collect::<Vec<Task>>()),
        }
    }
}

/// A test's verdict on its subject. It names itself; the walk renames a per-CPU form's.
pub type VerdictFn = fn(&Subject<'_>) -> Verdict;

/// A test's overhead-aware form (`crate::overheads`).
#[derive(Clone, Copy)]
pub enum WithOverheads {
    /// The verdict function on the WCETs inflated for one CPU (the form for one CPU, and each
    /// CPU of a partition).
    Partitioned,
    /// The verdict function on the WCETs inflated for global EDF.
    Global,
    /// The verdict function on the WCETs inflated for global fixed priority under these
    /// priorities (a job is preempted only by a higher-priority arrival).
    GlobalFp(Priorities),
    /// Melani et al.'s DAG analysis on parallel tasks charged for global fixed priority under
    /// these priorities (`crate::overheads::inflate_dag`: each node a job of its own).
    GlobalFpDag(Priorities),
    /// A form of its own, on the set as written and its overheads.
    Own(fn(&Subject<'_>, &Overheads) -> Verdict),
    /// None.
    Not,
}

/// One schedulability test.
#[derive(Clone, Copy)]
pub struct Entry {
    /// Its name (`rtsched analyze`'s row, a sweep's `test:NAME`).
    pub name: &'static str,
    /// What it tests, in a line.
    pub summary: &'static str,
    /// Where it comes from.
    pub citation: &'static str,
    pub kind: Kind,
    pub applies: Applies,
    /// The verdict on a subject the test applies to.
    pub verdict: VerdictFn,
    pub overheads: WithOverheads,
}

/// Whether a test runs on the whole set or on each CPU of a partitioned one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Whole,
    /// `p-NAME`, for a test of one CPU.
    PerCpu,
}

/// One form of one entry: what `analyze` reports a row of.
#[derive(Clone, Copy)]
pub struct Test {
    pub entry: &'static Entry,
    pub form: Form,
}

impl PartialEq for Test {
    fn eq(&self, other: &Test) -> bool {
        self.entry.name == other.entry.name && self.form == other.form
    }
}

impl fmt::Debug for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The name of `entry`'s per-CPU form.
pub fn per_cpu_name(entry: &Entry) -> String {
    format!("p-{}", entry.name)
}

impl Test {
    pub fn name(&self) -> String {
        match self.form {
            Form::Whole => self.entry.name.to_string(),
            Form::PerCpu => per_cpu_name(self.entry),
        }
    }

    /// This test refusing for `reason`.
    pub fn refuse(&self, reason: Reason) -> NotApplicable {
        NotApplicable {
            test: self.entry.name,
            reason,
        }
    }

    /// Whether `ts` is a set the test is for (its CPUs, `cpu` fields, priorities, parallel
    /// tasks), before its model is asked.
    pub fn is_for(&self, ts: &TaskSet) -> Result<(), NotApplicable> {
        let m = ts.platform.cpus;
        let a = &self.entry.applies;
        let unplaced = || match ts.tasks.iter().position(|t| t.cpu.is_none()) {
            Some(task) => Err(Reason::NoCpu { task }),
            None => Ok(()),
        };
        match self.form {
            Form::Whole if a.cpus == Cpus::Partitioned && m > 1 => unplaced(),
            Form::Whole => a.for_cpus(m),
            Form::PerCpu if m == 1 => Err(Reason::PerCpuOnOne),
            Form::PerCpu => unplaced(),
        }
        .and_then(|()| a.for_tasks(ts))
        .map_err(|r| self.refuse(r))
    }

    /// The verdict on `ts`, or why the test does not apply to it. It is named after the test,
    /// and marked a necessary condition's when the test is one ([`Verdict::word`]).
    pub fn run(&self, ts: &TaskSet) -> Result<Verdict, NotApplicable> {
        self.answered(self.verdict(ts))
    }

    /// `r` named after the test and marked as its kind's.
    pub fn answered(&self, r: Result<Verdict, NotApplicable>) -> Result<Verdict, NotApplicable> {
        r.map(|mut v| {
            v.test = self.name();
            v.necessary = self.entry.kind == Kind::Necessary;
            v
        })
    }

    fn verdict(&self, ts: &TaskSet) -> Result<Verdict, NotApplicable> {
        self.is_for(ts)?;
        let a = &self.entry.applies;
        if let Err(Reason::Unmodelled {
            parallel, sections, ..
        }) = a.models(ts)
        {
            // What the test would say of the tasks as sequential ones (no recursion deeper:
            // that set has no structure).
            let plain = without_structure(ts);
            return Err(self.refuse(Reason::Unmodelled {
                parallel,
                sections,
                ignoring: self.run(&plain).ok().map(|v| v.schedulable),
            }));
        }
        if let Err(r @ Reason::Blocking(_)) = a.models(ts) {
            return Err(self.refuse(r));
        }
        if let Err(Reason::UnmodelledFlow {
            triggers,
            suspensions,
            ..
        }) = a.models(ts)
        {
            let plain = without_structure(ts);
            return Err(self.refuse(Reason::UnmodelledFlow {
                triggers,
                suspensions,
                ignoring: self.run(&plain).ok().map(|v| v.schedulable),
            }));
        }
        match self.form {
            Form::Whole => {
                let all: Vec<usize> = (0..ts.tasks.len()).collect();
                a.takes_deadlines(ts, &all).map_err(|r| self.refuse(r))?;
                let mut s = Subject::of(ts, all, ts.platform.cpus);
                // Global OMLP: WCETs inflated by the s-oblivious blocking (omlp.rs, through
                // the parent, as the entries are reached).
                let b = super::charge_whole(&mut s, a.sections);
                Ok(super::with_whole_blocking((self.entry.verdict)(&s), b))
            }
            Form::PerCpu => self.per_cpu(ts),
        }
    }

    /// Each used CPU's tasks alone on it; the first CPU that fails, does not take the test, or
    /// is inconclusive explains the verdict.
    fn per_cpu(&self, ts: &TaskSet) -> Result<Verdict, NotApplicable> {
        let m = ts.platform.cpus;
        let a = &self.entry.applies;
        let mut column: Vec<Result<Verdict, Reason>> = Vec::new();
        for cpu in 0..m {
            let idx: Vec<usize> = (0..ts.tasks.len())
                .filter(|&i| ts.tasks[i].cpu == Some(cpu))
                .collect();
            if idx.is_empty() {
                continue;
            }
            column.push(a.takes_deadlines(ts, &idx).map(|()| {
                let mut v = (self.entry.verdict)(&Subject::of(ts, idx, 1));
                v.detail = format!("cpu {cpu}: {}", v.detail);
                v
            }));
        }
        if let [Err(r), ..] = column.as_slice() {
            if column.iter().all(Result::is_err) {
                return Err(self.refuse(*r));
            }
        }
        let ran = || column.iter().filter_map(|c| c.as_ref().ok());
        let mut tasks: Vec<_> = ran().flat_map(|v| v.tasks.iter().cloned()).collect();
        tasks.sort_by_key(|b| b.task);
        let (s, detail) = if let Some(b) = ran().find(|v| v.schedulable == Some(false)) {
            (Some(false), b.detail.clone())
        } else if column.iter().any(Result::is_err) {
            (None, "does not apply to every used CPU".to_string())
        } else if let Some(b) = ran().find(|v| v.schedulable.is_none()) {
            (None, b.detail.clone())
        } else {
            (Some(true), format!("all {} used CPUs pass", column.len()))
        };
        Ok(Verdict::new(self.name(), s, detail).with_tasks(tasks))
    }
}

/// Every form of every entry of `entries`, in the order `analyze` reports them: the whole
/// forms in the entries' order, then the per-CPU forms.
pub fn tests_of(entries: &'static [Entry]) -> impl Iterator<Item = Test> {
    let whole = entries.iter().map(|entry| Test {
        entry,
        form: Form::Whole,
    });
    let per_cpu = entries
        .iter()
        .filter(|e| e.applies.cpus == Cpus::One)
        .map(|entry| Test {
            entry,
            form: Form::PerCpu,
        });
    whole.chain(per_cpu)
}

/// The form of `entries` called `name`.
pub fn find(entries: &'static [Entry], name: &str) -> Option<Test> {
    tests_of(entries).find(|t| t.name() == name)
}

/// `ts` without parallel structure or critical sections: its tasks as sequential ones.
pub fn without_structure(ts: &TaskSet) -> TaskSet {
    let mut plain = ts.clone();
    for t in &mut plain.tasks {
        t.regions.clear();
        t.dag = None;
        t.sections.clear();
        t.trigger = None;
        t.suspensions.clear();
    }
    plain.resources.clear();
    plain.chains.clear();
    plain
}

/// Every test of `entries` that is for sets like `ts`, and its verdict, or why it does not
/// apply (its model excludes the set).
pub fn analyze_with(entries: &'static [Entry], ts: &TaskSet) -> Vec<(Test, Verdict)> {
    tests_of(entries)
        .filter_map(|test| match test.run(ts) {
            Ok(v) => Some((test, v)),
            Err(na) if na.reason.for_other_sets() => None,
            Err(na) => Some((test, Verdict::new(test.name(), None, na.words(ts)))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedulability::ENTRIES;

    /// The texts `rtsched analyze` and a sweep's `error` column show, word for word.
    #[test]
    fn reasons_in_words() {
        let na = |test, reason| NotApplicable { test, reason }.to_string();
        assert_eq!(
            na("edf-exact", Reason::OneCpu { cpus: 4 }),
            "not applicable: a uniprocessor test, and the set has 4 CPUs (p-edf-exact tests each CPU of a partitioned set)"
        );
        assert_eq!(
            na("edf-exact", Reason::PerCpuOnOne),
            "not applicable: a per-CPU test, and the set has 1 CPU (edf-exact tests it whole)"
        );
        let unmodelled = |parallel, sections, ignoring| Reason::Unmodelled {
            parallel,
            sections,
            ignoring,
        };
        assert_eq!(
            na("gedf-gfb", unmodelled(Some(Parallel::Dags), false, Some(None))),
            "not applicable: the test does not model DAG tasks (ignoring them it would say inconclusive)"
        );
        assert_eq!(
            na("gedf-bcl", unmodelled(Some(Parallel::Regions), true, Some(Some(false)))),
            "not applicable: the test does not model parallel regions and critical sections (ignoring them it would say unschedulable)"
        );
        assert_eq!(
            na("federated", unmodelled(None, true, None)),
            "not applicable: the test does not model critical sections (blocking)"
        );
        assert_eq!(
            na(
                "gedf-dag-li",
                Reason::Deadline {
                    task: 0,
                    takes: Deadlines::Implicit
                }
            ),
            "not applicable: task 0 has D ≠ T (the bound is for implicit deadlines)"
        );
        assert_eq!(
            na(
                "fp-rta-rm",
                Reason::UnmodelledFlow {
                    triggers: false,
                    suspensions: true,
                    ignoring: Some(Some(true))
                }
            ),
            "not applicable: the test does not model self-suspending tasks (read as periodic tasks without suspensions, which is not sound for them, it would say schedulable)"
        );
        assert_eq!(
            na("fp-susp-jitter-rm", Reason::NoFlow(Flow::Suspensions)),
            "not applicable: a test for self-suspending tasks, and no task suspends"
        );
        assert!(Reason::NoFlow(Flow::Triggers).for_other_sets());
        assert!(!Reason::UnmodelledFlow {
            triggers: true,
            suspensions: false,
            ignoring: None
        }
        .for_other_sets());
        assert_eq!(
            na(
                "rm-hyperbolic",
                Reason::Inflated(InflatedReason::NotImplicit)
            ),
            "not applicable to the inflated set (D' = D − release latency is not T)"
        );
    }

    /// Two CPUs, (C, T) in ms: CPU 0 runs (1, 4) and (2, 8), CPU 1 runs (3, 10). With implicit
    /// deadlines the Liu-Layland bound holds on both (U = .5 ≤ .828 and .3 ≤ 1). With CPU 1's
    /// task at D = 8 < T it does not apply there: "does not apply to every used CPU",
    /// inconclusive; with CPU 0's tasks constrained too it applies to no CPU, and is refused.
    #[test]
    fn a_per_cpu_test_by_hand() {
        let ms = 1_000_000;
        let mut ts = TaskSet::new(
            2,
            vec![
                Task::periodic("a", 4 * ms, ms),
                Task::periodic("b", 8 * ms, 2 * ms),
                Task::periodic("c", 10 * ms, 3 * ms),
            ],
        );
        for (t, c) in ts.tasks.iter_mut().zip([0, 0, 1]) {
            t.cpu = Some(c);
        }
        let ll = find(ENTRIES, "p-rm-liu-layland").unwrap();
        assert_eq!((ll.entry.name, ll.form), ("rm-liu-layland", Form::PerCpu));
        let v = ll.run(&ts).unwrap();
        assert_eq!(
            (v.schedulable, v.detail.as_str()),
            (Some(true), "all 2 used CPUs pass")
        );
        ts.tasks[2].deadline = 8 * ms;
        let v = ll.run(&ts).unwrap();
        assert_eq!(
            (v.schedulable, v.detail.as_str()),
            (None, "does not apply to every used CPU")
        );
        ts.tasks[0].deadline = 3 * ms;
        let na = ll.run(&ts).unwrap_err();
        assert_eq!(
            na.reason,
            Reason::Deadline {
                task: 0,
                takes: Deadlines::Implicit
            }
        );
        // Not for a set of one CPU, nor one without `cpu` fields: `analyze` leaves it out.
        ts.tasks[1].cpu = None;
        assert_eq!(ll.run(&ts).unwrap_err().reason, Reason::NoCpu { task: 1 });
        ts.platform.cpus = 1;
        assert_eq!(ll.run(&ts).unwrap_err().reason, Reason::PerCpuOnOne);
        assert!(analyze_with(ENTRIES, &ts)
            .iter()
            .all(|(t, _)| t.form == Form::Whole));
    }
}
