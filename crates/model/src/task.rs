//! The task model: platform, tasks, run options (docs/taskset-format.md, docs/semantics.md).
//!
//! Nothing here knows about scheduling. Later parts extend `Task` with optional fields
//! (time-utility function, working set, memory group, parallel regions, critical sections);
//! every field is optional with a default that means "the classic sporadic task".

use crate::dag::Dag;
use crate::overheads::Overheads;
use crate::program::{CriticalSection, Program, Region};
use crate::time::Time;
use crate::tuf::Tuf;
use serde::Serialize;

/// Index of a task in its task set (file order).
pub type TaskId = u32;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Platform {
    /// Number of identical CPUs (m).
    pub cpus: u32,
    /// Caches and NUMA nodes (`topology.rs`), if given.
    pub topology: Option<crate::topology::Topology>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Task {
    pub name: String,
    /// Period, or minimum inter-arrival time of a sporadic task (T).
    pub period: Time,
    /// Sporadic tasks: inter-arrival times are drawn uniformly from [period, max_interarrival]
    /// with the run's seed. `None` means strictly periodic.
    pub max_interarrival: Option<Time>,
    /// Relative deadline (D); defaults to the period.
    pub deadline: Time,
    /// Worst-case execution time (C): the budget the scheduler is told.
    pub wcet: Time,
    /// Release of the first job (phase).
    pub offset: Time,
    /// Fixed priority; a larger number is more urgent, as with Linux `SCHED_FIFO`.
    pub priority: Option<u32>,
    /// Partition: the CPU this task is bound to under a partitioned scheduler.
    pub cpu: Option<u32>,
    /// Maximum working-set size in bytes (LWFG §2, w_i).
    pub wss: Option<u64>,
    /// Memory-sharing group: tasks with the same group share their entire working set
    /// (LWFG §4.1.2, one multi-threaded task "MTT").
    pub group: Option<u32>,
    /// Parallel structure (PAWS §3): a sequence of regions of threads that join at each
    /// region's end. Empty: one sequential region of one thread of length `wcet`. When given,
    /// `wcet` is the sum of every thread's WCET.
    pub regions: Vec<Region>,
    /// A job as a directed acyclic graph of nodes (`dag.rs`), instead of `regions`. When
    /// given, `wcet` is the DAG's work (every node's WCET summed) and `regions` is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dag: Option<Dag>,
    /// Critical sections (ChronOS §III), sorted by (region, thread, start, longest first).
    pub sections: Vec<CriticalSection>,
    /// Time-utility function (ChronOS §3.2; `tuf.rs`). `None`: utility 1 until the deadline.
    pub tuf: Option<Tuf>,
    /// Real-time (the default) or best-effort: a fair-share task (opzone paper §4's background
    /// stress) scheduled below every real-time task by a fair policy (`cfs`). `Rt` means a task
    /// of jobs with deadlines (periodic or sporadic), whatever Linux policy it runs under.
    pub class: Class,
    /// The Linux scheduling policy the task runs under (`policy` in a file), for the `linux`
    /// scheduler and real runs of the class stack (docs/linux-classes.md). `None`: the set's
    /// `run.default_policy`, else [`Task::sched_policy`]'s default. A best-effort task
    /// (`Class::Fair`) has none: it is `other` at its nice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<SchedPolicy>,
    /// Measured execution times to replay (`rtsched record --replay`): job k of this
    /// (sequential) task demands `execution_times[k mod n]`, in place of the run's execution
    /// model. Empty: the model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub execution_times: Vec<Time>,
    /// An event-triggered task (docs/chains.md): its jobs are released by its triggers' finished
    /// jobs, not by a period. Its `period` is then the longest of its triggers' periods (the
    /// most often its jobs come, for utilisation and sizing) and its `offset` 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Trigger>,
    /// A self-suspending task (docs/chains.md): `regions` are its run segments (one thread
    /// each) and `suspensions[k]` the suspension between run segments k and k + 1. Empty: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspensions: Vec<Suspension>,
}

/// What releases an event-triggered task's jobs (docs/chains.md "Triggers").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Trigger {
    /// The tasks whose finished jobs release this task's jobs.
    pub tasks: Vec<TaskId>,
    /// `trigger: {all: [A, B]}`: a job is released when each of `tasks` has finished a job since
    /// the last release. `false` (`trigger: A`): each finished job of the one task releases one.
    pub all: bool,
}

/// A self-suspension (docs/chains.md "Suspensions"): the job leaves its CPU and is not ready
/// for a length drawn uniformly from [lo, hi] with the run's seed (lo == hi: fixed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Suspension {
    pub lo: Time,
    pub hi: Time,
}

/// How the tasks of a data-flow chain exchange data (Dürr et al., EMSOFT 2019, §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Communication {
    /// A job reads its inputs when it starts and publishes its output when it finishes.
    Implicit,
    /// Logical execution time: a job reads at its release and publishes at its deadline.
    Let,
}

impl Communication {
    pub fn name(&self) -> &'static str {
        match self {
            Communication::Implicit => "implicit",
            Communication::Let => "let",
        }
    }
}

/// A chain of tasks whose end-to-end timing is measured (docs/chains.md): an *event* chain
/// (no `communication`: each task triggered by the one before it) or a *data-flow*
/// (cause-effect) chain of periodic tasks communicating as `communication` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chain {
    pub name: String,
    pub tasks: Vec<TaskId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub communication: Option<Communication>,
    /// End-to-end deadline: an instance whose latency (event chain) or data age (data-flow
    /// chain) exceeds it is a miss.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Time>,
}

/// The Linux scheduling policy of a task with jobs (`policy` in a task-set file;
/// docs/taskset-format.md "Linux policies"), as `sched_setattr(2)` would be given it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// `SCHED_DEADLINE` with `runtime` per period (the reservation; deadline and period are
    /// the task's). `None`: the WCET, or for a parallel task each thread lane's work per job.
    Deadline { runtime: Option<Time> },
    /// `SCHED_FIFO` at the task's `priority` (1 to 99, larger more urgent).
    Fifo,
    /// `SCHED_RR` at the task's `priority`, round robin among equals in time slices.
    Rr,
    /// `SCHED_OTHER`, the fair class, at `nice` (-20 to 19).
    Other { nice: i8 },
}

/// A policy's name alone: what `run.default_policy` gives (rt-app's `global.default_policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    Deadline,
    Fifo,
    Rr,
    Other,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 4] = [
        PolicyKind::Deadline,
        PolicyKind::Fifo,
        PolicyKind::Rr,
        PolicyKind::Other,
    ];
    /// As written in a file.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Deadline => "deadline",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Rr => "rr",
            PolicyKind::Other => "other",
        }
    }
    pub fn parse(s: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// The kernel's name (`SCHED_DEADLINE`, ...).
    pub fn kernel_name(self) -> &'static str {
        match self {
            PolicyKind::Deadline => "SCHED_DEADLINE",
            PolicyKind::Fifo => "SCHED_FIFO",
            PolicyKind::Rr => "SCHED_RR",
            PolicyKind::Other => "SCHED_OTHER",
        }
    }
    /// This kind with its default parameters (deadline: runtime = WCET; other: nice 0).
    pub fn with_defaults(self) -> SchedPolicy {
        match self {
            PolicyKind::Deadline => SchedPolicy::Deadline { runtime: None },
            PolicyKind::Fifo => SchedPolicy::Fifo,
            PolicyKind::Rr => SchedPolicy::Rr,
            PolicyKind::Other => SchedPolicy::Other { nice: 0 },
        }
    }
}

impl SchedPolicy {
    pub fn kind(&self) -> PolicyKind {
        match self {
            SchedPolicy::Deadline { .. } => PolicyKind::Deadline,
            SchedPolicy::Fifo => PolicyKind::Fifo,
            SchedPolicy::Rr => PolicyKind::Rr,
            SchedPolicy::Other { .. } => PolicyKind::Other,
        }
    }
}

/// A task's scheduling class.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "class", rename_all = "lowercase")]
pub enum Class {
    /// A periodic or sporadic real-time task (every field above applies).
    #[default]
    Rt,
    /// A best-effort task under the fair class: it has no deadline and its jobs are *bursts*
    /// of CPU use separated by sleeps ([`Behaviour`]). Its `period` is the mean cycle (run +
    /// sleep) and its `wcet` the mean burst, for utilisation only; its `deadline` equals the
    /// period and means nothing.
    Fair(Fair),
}

/// What a best-effort task asks of the fair class.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Fair {
    /// Linux nice value, -20 (most CPU) to 19; its weight is the kernel's
    /// `sched_prio_to_weight` (1024 at 0, about x1.25 per step).
    pub nice: i8,
    pub behaviour: Behaviour,
}

/// How a best-effort task uses the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "behaviour", rename_all = "lowercase")]
pub enum Behaviour {
    /// A CPU hog (`stress --cpu`): always runnable, one burst that never ends.
    Hog,
    /// A periodic sleeper: run `run` of CPU time, then sleep `sleep`, forever. The sleep starts
    /// when the burst finishes, so a sleeper that waits for a CPU cycles more slowly.
    Sleeper { run: Time, sleep: Time },
    /// Bursty: each burst's length and each sleep drawn uniformly (seeded) from the ranges.
    Bursty {
        run: (Time, Time),
        sleep: (Time, Time),
    },
}

/// A hog's one burst: long enough never to end in a run (and to keep sums far from overflow).
pub const FOREVER: Time = Time::MAX / 8;

impl Fair {
    /// The CFS load weight of a nice value (the kernel's `sched_prio_to_weight[]`, nice -20..19).
    pub fn weight(&self) -> u64 {
        nice_weight(self.nice)
    }
}

/// The kernel's table `sched_prio_to_weight` (kernel/sched/core.c): 1024 at nice 0, each step
/// about 10 % of CPU share (x1.25). `nice` is clamped to -20..=19.
pub fn nice_weight(nice: i8) -> u64 {
    const W: [u64; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100,
        4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172,
        137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    W[(nice.clamp(-20, 19) + 20) as usize]
}

impl Task {
    /// A periodic task with implicit deadline and zero offset.
    pub fn periodic(name: impl Into<String>, period: Time, wcet: Time) -> Self {
        Task {
            name: name.into(),
            period,
            max_interarrival: None,
            deadline: period,
            wcet,
            offset: 0,
            priority: None,
            cpu: None,
            wss: None,
            group: None,
            regions: Vec::new(),
            dag: None,
            sections: Vec::new(),
            tuf: None,
            class: Class::Rt,
            policy: None,
            execution_times: Vec::new(),
            trigger: None,
            suspensions: Vec::new(),
        }
    }
    /// A best-effort task of the fair class (its `period` / `wcet` are the mean cycle / burst).
    pub fn fair(name: impl Into<String>, nice: i8, behaviour: Behaviour) -> Self {
        let (run, sleep) = match behaviour {
            Behaviour::Hog => (crate::time::NS_PER_S, 0),
            Behaviour::Sleeper { run, sleep } => (run, sleep),
            Behaviour::Bursty { run, sleep } => ((run.0 + run.1) / 2, (sleep.0 + sleep.1) / 2),
        };
        let mut t = Task::periodic(name, (run + sleep).max(1), run.max(1));
        t.class = Class::Fair(Fair { nice, behaviour });
        t
    }
    /// Its fair-class parameters, if it is a best-effort task.
    #[inline]
    pub fn fair_params(&self) -> Option<&Fair> {
        match &self.class {
            Class::Fair(f) => Some(f),
            Class::Rt => None,
        }
    }
    /// The most jobs this task releases in [0, `horizon`) (a real-time task; sporadic ones at
    /// their minimum inter-arrival time, the period): the jobs a run counts of it, at most.
    pub fn jobs_released_by(&self, horizon: Time) -> u64 {
        if self.is_fair() || self.offset >= horizon {
            return 0;
        }
        (horizon - self.offset - 1) / self.period.max(1) + 1
    }
    /// Whether its jobs are released by other tasks' jobs (`trigger`), not by a period.
    #[inline]
    pub fn is_triggered(&self) -> bool {
        self.trigger.is_some()
    }
    #[inline]
    pub fn is_fair(&self) -> bool {
        matches!(self.class, Class::Fair(_))
    }
    /// The Linux policy the task runs under: its own `policy`; a best-effort task's `other`
    /// at its nice; else `default` (the set's `run.default_policy`) with its default
    /// parameters; without one, `deadline` with runtime = WCET (docs/linux-classes.md "Sets
    /// without policies").
    pub fn sched_policy(&self, default: Option<PolicyKind>) -> SchedPolicy {
        if let Some(p) = self.policy {
            return p;
        }
        if let Class::Fair(f) = &self.class {
            return SchedPolicy::Other { nice: f.nice };
        }
        default.unwrap_or(PolicyKind::Deadline).with_defaults()
    }
    /// The utility a job of this task accrues by completing `t` after its release (its TUF;
    /// without one, 1 until the deadline and 0 after).
    #[inline]
    pub fn utility_at(&self, t: Time) -> f64 {
        match &self.tuf {
            None => (t <= self.deadline) as u8 as f64,
            Some(f) => f.at(t),
        }
    }
    /// A job's possible utility: its TUF's maximum (1 without a TUF).
    #[inline]
    pub fn max_utility(&self) -> f64 {
        self.tuf.as_ref().map_or(1.0, Tuf::max)
    }
    /// The task's regions and critical sections as the substrates execute them.
    pub fn program(&self) -> Program {
        match &self.dag {
            Some(d) => Program::build_dag(d, &self.sections),
            None => Program::build(self.wcet, &self.regions, &self.sections),
        }
    }
    /// Make `p` [`Task::program`], reusing its lists where it can.
    pub fn rebuild_program(&self, p: &mut Program) {
        match &self.dag {
            Some(_) => *p = self.program(),
            None => p.rebuild(self.wcet, &self.regions, &self.sections),
        }
    }
    /// The critical path L (PAWS §3; L_i in federated scheduling): the sum over regions of the
    /// longest thread's WCET, what the job takes alone on enough CPUs. `wcet` for a sequential
    /// task.
    pub fn critical_path(&self) -> Time {
        if let Some(d) = &self.dag {
            return d.critical_path();
        }
        if self.regions.is_empty() {
            return self.wcet;
        }
        self.regions
            .iter()
            .map(|r| r.threads.iter().copied().max().unwrap_or(0))
            .sum()
    }
    /// Whether some region has more than one thread, or the DAG lets two nodes run at once.
    pub fn is_parallel(&self) -> bool {
        if let Some(d) = &self.dag {
            return d.is_parallel();
        }
        self.regions.iter().any(|r| r.threads.len() > 1)
    }
    pub fn utilization(&self) -> f64 {
        self.wcet as f64 / self.period as f64
    }
    pub fn density(&self) -> f64 {
        self.wcet as f64 / self.deadline.min(self.period) as f64
    }
}

/// What happens to a job that reaches its deadline unfinished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnMiss {
    /// The job runs late; its tardiness is measured.
    Continue,
    /// The job is removed at its deadline (counted as missed and aborted).
    Abort,
}

/// How a job's actual execution demand is drawn from its task's WCET.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum ExecModel {
    /// Every job runs exactly its WCET.
    Wcet,
    /// Each job runs a seeded uniform fraction of WCET in [min, max] (0 < min <= max).
    Uniform { min: f64, max: f64 },
    /// With probability `probability` a job overruns to `ratio` x WCET, else runs its WCET.
    Overrun { ratio: f64, probability: f64 },
}

/// The simulator's cache model (docs/cache-model.md): off unless `run.cache` is given. Costs
/// are per cache line (64 B on the presets), in picoseconds so that sub-nanosecond effective
/// costs (memory-level parallelism) stay integers. A job's demand drawn by the execution model
/// is its time with its working set in its own CPU's private caches; what it finds elsewhere
/// costs extra, per line, by where it is found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacheParams {
    pub enabled: bool,
    /// Per line found in: the CPU's own L2 (missed its L1), a shared cache of its own
    /// (L3), another CPU's cache on its node, another node's cache, local memory, and remote
    /// memory (another NUMA node's).
    pub l2_ps: u64,
    pub l3_ps: u64,
    pub remote_cache_ps: u64,
    pub remote_node_ps: u64,
    pub memory_ps: u64,
    pub remote_memory_ps: u64,
    /// Passes over its working set one job makes (each touches every line once).
    pub passes: u32,
}

impl Default for CacheParams {
    fn default() -> Self {
        // Effective per-line costs in the range of the Opteron 6164's published latencies
        // (L2 ~ 15 cycles, L3 ~ 50, memory ~ 100 ns) divided by the memory-level parallelism
        // of a streaming pass (docs/cache-model.md, its example lists each default).
        CacheParams {
            enabled: false,
            l2_ps: 2_000,
            l3_ps: 8_000,
            remote_cache_ps: 20_000,
            remote_node_ps: 30_000,
            memory_ps: 25_000,
            remote_memory_ps: 40_000,
            passes: 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunOptions {
    /// Jobs released in [0, duration) are counted.
    pub duration: Time,
    pub seed: u64,
    pub on_miss: OnMiss,
    pub execution: ExecModel,
    pub overheads: Overheads,
    pub cache: CacheParams,
    /// The Linux policy of every task that names none (`run.default_policy`, rt-app's
    /// `global.default_policy`); `None`: [`Task::sched_policy`]'s default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_policy: Option<PolicyKind>,
    /// The locking protocol of every resource that names none (`run.locking`; locking.rs).
    #[serde(skip_serializing_if = "crate::protocol::Protocol::is_none")]
    pub locking: crate::protocol::Protocol,
    /// Per resource (index = `ResourceId`), the protocol its `resources` entry names, if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_locking: Vec<Option<crate::protocol::Protocol>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            duration: 1_000 * crate::time::NS_PER_MS,
            seed: 1,
            on_miss: OnMiss::Continue,
            execution: ExecModel::Wcet,
            overheads: Overheads::default(),
            cache: CacheParams::default(),
            default_policy: None,
            locking: crate::protocol::Protocol::None,
            resource_locking: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskSet {
    /// Where it came from (file path), for messages.
    pub source: String,
    pub platform: Platform,
    pub run: RunOptions,
    pub tasks: Vec<Task>,
    /// Names of the resources the critical sections use (index = `ResourceId`).
    pub resources: Vec<String>,
    /// Chains whose end-to-end timing is measured (docs/chains.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<Chain>,
}

impl TaskSet {
    pub fn new(cpus: u32, tasks: Vec<Task>) -> Self {
        TaskSet {
            source: "<memory>".into(),
            platform: Platform {
                cpus,
                topology: None,
            },
            run: RunOptions::default(),
            tasks,
            resources: Vec::new(),
            chains: Vec::new(),
        }
    }
    /// The real-time tasks' utilisation (best-effort tasks take what is left).
    pub fn utilization(&self) -> f64 {
        self.tasks
            .iter()
            .filter(|t| !t.is_fair())
            .map(Task::utilization)
            .sum()
    }
    /// Whether any task is best-effort (the fair class).
    pub fn has_fair(&self) -> bool {
        self.tasks.iter().any(Task::is_fair)
    }
    /// Whether any task has parallel regions, a DAG of more than one node, or critical sections
    /// (the classic schedulability tests assume none).
    pub fn has_structure(&self) -> bool {
        self.tasks.iter().any(|t| {
            t.is_parallel()
                || !t.sections.is_empty()
                || t.trigger.is_some()
                || !t.suspensions.is_empty()
                || t.dag.as_ref().is_some_and(|d| d.nodes.len() > 1)
        })
    }
    /// Whether the set has triggered tasks, self-suspensions or chains (docs/chains.md): what
    /// the simulator runs and the real substrates do not take yet.
    pub fn has_flow(&self) -> bool {
        !self.chains.is_empty()
            || self
                .tasks
                .iter()
                .any(|t| t.trigger.is_some() || !t.suspensions.is_empty())
    }
    /// Whether any task names a Linux policy, or the set a default one (`policy`,
    /// `run.default_policy`): a set written for the class stack.
    pub fn has_policies(&self) -> bool {
        self.run.default_policy.is_some() || self.tasks.iter().any(|t| t.policy.is_some())
    }
    /// Each task's Linux policy ([`Task::sched_policy`] under the set's default).
    pub fn sched_policy(&self, t: TaskId) -> SchedPolicy {
        self.tasks[t as usize].sched_policy(self.run.default_policy)
    }
    /// Whether any task carries a time-utility function.
    pub fn has_tufs(&self) -> bool {
        self.tasks.iter().any(|t| t.tuf.is_some())
    }
    /// The most jobs the real-time tasks release in [0, `horizon`) (sporadic tasks at their
    /// minimum inter-arrival time, the period): what a run must hold before it starts. Saturates
    /// at `u64::MAX`; O(n).
    pub fn jobs_released_by(&self, horizon: Time) -> u64 {
        self.tasks
            .iter()
            .map(|t| t.jobs_released_by(horizon))
            .fold(0u64, u64::saturating_add)
    }
    pub fn task_index(&self, name: &str) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| t.name == name)
            .map(|i| i as TaskId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_released_by_counts_each_release_before_the_horizon() {
        let mut a = Task::periodic("a", 10, 1);
        a.offset = 5;
        let ts = TaskSet::new(1, vec![Task::periodic("b", 10, 1), a]);
        // b: 0, 10, ..., 90 (10 jobs); a: 5, 15, ..., 95 (10 jobs).
        assert_eq!(ts.jobs_released_by(100), 20);
        assert_eq!(ts.jobs_released_by(101), 21);
        assert_eq!(ts.jobs_released_by(5), 1);
        let fast = TaskSet::new(1, vec![Task::periodic("f", 1, 1); 64]);
        assert_eq!(fast.jobs_released_by(u64::MAX), u64::MAX, "saturates");
    }

    #[test]
    fn critical_path_is_the_sum_of_each_regions_longest_thread() {
        let mut t = Task::periodic("p", 100, 7);
        assert_eq!(t.critical_path(), 7, "sequential: L = C");
        t.regions = [vec![2], vec![4, 3, 4], vec![1, 5]]
            .into_iter()
            .map(|threads| Region { threads })
            .collect();
        t.wcet = 19;
        assert_eq!(t.critical_path(), 2 + 4 + 5);
    }
}
