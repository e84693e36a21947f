//! The job ledger: what a job is while it runs, kept once for every driver.
//!
//! # Overview
//!
//! 1. **Slots.** Jobs ([`Job`]) and entities ([`Ent`], one thread of one region of a job) live
//!    in preallocated slot vectors with generation numbers; a slot is reused after its
//!    occupant ends, so policies can index plain vectors by [`EntityId`]. An entity that a real
//!    worker still executes keeps its slot until the worker lets go ([`Ledger::stopped_executing`]).
//! 2. **Release and held jobs.** Each task's jobs come from its own seeded streams
//!    ([`TaskStreams`]), so every scheduler and every driver sees the same demands. Jobs of one
//!    task run one after another (the sporadic model, SimSo, one thread per task): a job
//!    released while its predecessor lives is *held* — release and deadline fixed, not yet
//!    given to the policy — until the predecessor completes or is aborted.
//! 3. **Fork and join (PAWS §3).** A job is a sequence of regions of threads. A region's
//!    threads reach the policy together (`release` for one, `forked` for several) and join
//!    when the last completes; the next region forks on the CPU where it joined.
//!    A DAG task's job (`rtsched_model::dag`) is one region of nodes with a precedence (a node's entity has
//!    region `DAG_REGION` and its node index as thread): its
//!    sources reach the policy together at release (as a first region's threads); when a
//!    node completes, the successors whose last predecessor it was reach the policy together
//!    on its CPU (`forked`, as a region forks where the previous one joined) — or by
//!    `release` when it is one node and nothing else of the job is live (a join, as a
//!    one-thread region after a join). The job completes when every node has.
//! 4. **Checkpoints and resources (ChronOS §3).** A thread's program has checkpoints (acquire,
//!    release) scaled to its actual demand; [`Ledger::advance`] handles those reached. A
//!    request for a held resource reports `requested`, blocks the thread (its CPU is vacated)
//!    and queues it; a release reports `released` and hands the resource to the longest
//!    waiter — or, for a policy that grants resources itself, waits for its
//!    [`Dispatch::grant`](rtsched_policies::Dispatch::grant).
//! 5. **Aborts.** Deadline aborts (`on_miss: abort`) and the policy's own take the whole job:
//!    waiting threads leave their queues, running threads leave their CPUs, the policy hears
//!    `aborted` for each thread it still has, and then the job's resources are handed on.
//!    Each thread's abort handler (`run.overheads.abort_handler`) is charged on its kernel
//!    CPU (9): the CPU it last ran on, whether it runs or waits; for a thread that never ran,
//!    where it was forked or woken (no charge if unknown).
//! 6. **Decisions.** [`Ledger::decide`] calls `schedule`, applies grants and CPU changes with
//!    the counting rules of docs/semantics.md (preemption, migration, context switch) and
//!    the invariants every driver asserts (only ready entities run; no entity on two CPUs),
//!    then handles aborts and ungranted resources, calling `schedule` again at the instant.
//! 7. **Records.** One [`JobRecord`] per job released in the counted window; at the end,
//!    unfinished jobs whose deadline passed are misses and blocked threads add their wait.
//! 8. **Priority inversions.** Every change of readiness and of what a CPU runs is told to the
//!    inversion meter (`inversion.rs`), which after each decision says whether a CPU runs a
//!    later deadline than a ready entity's, and which counted jobs are its victims;
//!    [`Outcome`] carries the onsets, the time, each job's time (`PerJob`) and the policy's
//!    `stats`, from which [`Outcome::fill_counters`] takes the run-level counters.
//! 9. **Migrations as a kernel counts them.** Besides `migrations` (an entity resumes on a
//!    CPU other than the one it last ran on), `kernel_migrations` counts every dispatch of an
//!    entity on a CPU other than its *kernel CPU* — the CPU a kernel's `set_task_cpu` would
//!    have it on: for a fresh thread, the CPU it was forked on (a region's threads: the CPU
//!    where the previous region joined) or woken on (a job's first thread: the CPU where its
//!    task last completed a thread, unknown for a task's first job); afterwards, the CPU it
//!    last ran on. A stolen thread moved to the thief, a fresh thread first run elsewhere and
//!    a job resuming elsewhere each count one (docs/semantics.md).
//!
//! What stays with a driver is how time passes and how work is done: the simulator's event
//! queue and cost model, the testbed's threads, clocks and mailboxes. The driver learns of the
//! ledger's CPU changes through [`Substrate`].

use crate::inversion::Inversions;
use crate::state::{CpuState, Ent, NEVER, NONE};
use crate::streams::TaskStreams;
use rtsched_model::program::scale;
use rtsched_model::results::{Counters, JobRecord, JobSink};
use rtsched_model::{Action, OnMiss, Program, Task, TaskId, TaskSet, Time};
use rtsched_policies::{
    Decisions, Dispatch, EntityId, EntityInfo, Policy, ResourceId, RunView, DAG_REGION,
};
use std::borrow::Cow;
use std::collections::VecDeque;

/// A released job, from release to its end (finish or abort). Its vectors keep their capacity
/// when the slot is reused: releasing a job allocates nothing in the steady state.
#[derive(Clone, Debug)]
struct Job {
    task: u32,
    job: u64,
    release: Time,
    deadline: Time,
    generation: u32,
    live: bool,
    held: bool,
    rec: u32,
    /// Current region, and how many of its threads have not completed. A DAG job's region is
    /// `DAG_REGION` (its entities' too) and `pending` counts its nodes not yet completed.
    region: u32,
    pending: u32,
    /// Every thread's demand (region then thread order), and where the current region's start.
    demands: Vec<Time>,
    first: u32,
    /// Live entities of the current region (of a DAG job: of the job).
    ents: Vec<EntityId>,
}

/// A mutex: its holder, its FIFO queue, and whether it awaits the policy's grant.
#[derive(Clone, Debug)]
struct Resource {
    holder: u32,
    queue: VecDeque<EntityId>,
    pending: bool,
}

impl Default for Resource {
    fn default() -> Self {
        Resource {
            holder: NONE,
            queue: VecDeque::new(),
            pending: false,
        }
    }
}

impl Resource {
    /// `e` requests it: true if it took it (free, and not awaiting a grant), false if it must
    /// wait (queued last).
    fn request(&mut self, e: EntityId) -> bool {
        if self.holder == NONE && !self.pending {
            self.holder = e;
            return true;
        }
        debug_assert_ne!(self.holder, e, "a mutex is not recursive");
        self.queue.push_back(e);
        false
    }
    /// `e` stops waiting (its job was aborted). Returns true if that was the last waiter of
    /// a resource awaiting a grant: nobody is left to grant it to, so it is simply free.
    fn leave(&mut self, e: EntityId) -> bool {
        if let Some(i) = self.queue.iter().position(|&w| w == e) {
            self.queue.remove(i);
        }
        if self.pending && self.queue.is_empty() {
            self.pending = false;
            return true;
        }
        false
    }
    /// The holder `e` lets go. With `fifo`, the longest waiter takes it and is returned; else
    /// a resource with waiters awaits the policy's grant.
    fn release(&mut self, e: EntityId, fifo: bool) -> Option<EntityId> {
        assert_eq!(
            self.holder, e,
            "entity {e} released a resource it does not hold"
        );
        self.holder = NONE;
        if self.queue.is_empty() {
            return None;
        }
        if fifo {
            self.holder = self.queue.pop_front().expect("a waiter");
            Some(self.holder)
        } else {
            self.pending = true;
            None
        }
    }
}

/// Why an entity leaves its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Off {
    /// The policy gave the CPU to another entity or left it idle.
    Preempted,
    Completed,
    /// It requested a held resource.
    Blocked,
    /// Its job was aborted.
    Aborted,
}

/// What a driver does when the ledger moves entities on and off CPUs. The ledger calls these
/// with the entity still in its state before the move (`ent.cpu == cpu` in `off_cpu`), and
/// with the CPU's state, whose `mark` the driver keeps (see [`CpuState::mark`]).
pub trait Substrate {
    /// `ent` leaves `cpu` at `now`.
    fn off_cpu(&mut self, now: Time, cpu: u32, c: &mut CpuState, ent: &mut Ent, why: Off);
    /// The policy placed `ent` on `cpu` (counting done; `switched`: a context switch,
    /// `migrated`: it last ran elsewhere). `work`: its work left before its next checkpoint.
    /// `rec`: its job's record (None outside the counted window), for what the driver counts
    /// per job (overhead, stalls, misses).
    #[allow(clippy::too_many_arguments)]
    fn on_cpu(
        &mut self,
        now: Time,
        cpu: u32,
        c: &mut CpuState,
        ent: &mut Ent,
        switched: bool,
        migrated: bool,
        work: Time,
        rec: Option<&mut JobRecord>,
    );
    /// After a decision: `cpu` now runs `e` (only CPUs whose assignment changed).
    fn assigned(&mut self, _cpu: u32, _e: Option<EntityId>) {}
    /// The policy charged `ns` of overhead on `cpu`, which runs `ent` (`work` as in `on_cpu`).
    #[allow(clippy::too_many_arguments)]
    fn charged(
        &mut self,
        now: Time,
        cpu: u32,
        c: &mut CpuState,
        ent: &mut Ent,
        ns: Time,
        work: Time,
        rec: Option<&mut JobRecord>,
    );
}

/// The next step of a running entity, after the checkpoints it reached were handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Pay `owed` overhead, then run `work` more (to the next checkpoint or the end).
    Run { owed: Time, work: Time },
    /// It requested a held resource: blocked, off its CPU.
    Blocked,
    /// All its work and checkpoints are done: report [`Ledger::complete`].
    Done,
    /// Its CPU is no longer its own: stop here (what is left waits until it runs again).
    Stop,
}

/// Where a thread stands in its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// This much more work before the next checkpoint (or the end).
    Run(Time),
    /// The next checkpoint is reached: do its action.
    At(Action),
    /// All work and every checkpoint done.
    Done,
}

/// Where a thread with program `tp`, actual demand `demand`, `done` work and `cp` checkpoints
/// handled stands. Checkpoints scale to the demand (docs/semantics.md "Demand"); several may
/// fall on one point, in program order.
#[inline]
pub fn next_step(tp: &rtsched_model::ThreadProgram, demand: Time, done: Time, cp: u32) -> Next {
    match tp.checkpoints.get(cp as usize) {
        Some(c) => {
            let at = scale(c.at, tp.wcet, demand);
            if at > done {
                Next::Run(at - done)
            } else {
                Next::At(c.action)
            }
        }
        None if done < demand => Next::Run(demand - done),
        None => Next::Done,
    }
}

/// Where record `rec` is in `Run::records`, whose first is record `base` (it must not have been
/// handed on to a sink yet: not among the first `front`).
#[inline(always)]
fn rec_at(base: u32, front: usize, rec: u32) -> usize {
    let i = rec.wrapping_sub(base) as usize;
    debug_assert!(i >= front, "record {rec} was already handed on");
    i
}

/// How long after the counted window a run may go on so that the last counted jobs finish.
pub fn drain_limit(ts: &TaskSet) -> Time {
    ts.tasks
        .iter()
        .map(|t| t.deadline.max(t.max_interarrival.unwrap_or(t.period)))
        .max()
        .unwrap_or(0)
        * 2
}

/// The run's state, which a policy reads through [`RunView`] while it decides.
pub struct Run<'t> {
    ts: Cow<'t, TaskSet>,
    programs: Vec<Program>,
    pub(crate) ents: Vec<Ent>,
    free: Vec<u32>,
    jobs: Vec<Job>,
    /// Per job slot, a DAG job's predecessors not yet completed, per node (kept apart from
    /// `Job`, whose size the fork-join path feels; each keeps its capacity when the slot is
    /// reused).
    preds: Vec<Vec<u32>>,
    /// Per-job lists of slots an earlier run used, for new slots (`LedgerParts`).
    spare: Vec<(Vec<Time>, Vec<EntityId>)>,
    free_jobs: Vec<u32>,
    resources: Vec<Resource>,
    pub(crate) cpus: Vec<CpuState>,
    streams: Vec<TaskStreams>,
    next_job: Vec<u64>,
    /// Per task: whether a job of it is with the policy, and its held jobs in release order.
    task_busy: Vec<bool>,
    held: Vec<VecDeque<u32>>,
    /// The counted jobs' records from the oldest not yet handed to `sink` on; a record's id
    /// (`Job::rec`, `Ent::rec`) is its index among all counted jobs, `rec_base` that of
    /// `records[0]`, and the first `rec_front` are already handed on (compacted away now and
    /// then). Without a sink every record stays until the end (`rec_base` and `rec_front` 0).
    records: Vec<JobRecord>,
    rec_base: u32,
    rec_front: usize,
    /// Counted jobs the window should release (room reserved for a run that holds them).
    expected_jobs: usize,
    /// Counted jobs neither finished nor aborted.
    undecided: u64,
    /// Per task, CPU time of its finished entities (best-effort tasks' shares); and the
    /// best-effort bursts due after a sleep, which the driver releases ([`Ledger::take_wakeups`]).
    task_cpu: Vec<Time>,
    bursts: Vec<u64>,
    wakeups: Vec<(Time, u32)>,
    releases: u64,
    invocations: u64,
    charged: Time,
    /// Abort-handler time charged (it goes through the same charges, but is not the policy's).
    abort_handler_ns: Time,
    deadlocks: u64,
    /// Ready entities and running deadlines: priority inversions (crate::inversion).
    inv: Inversions,
    /// Per task, the CPU where it last completed a thread (NONE before its first), and the
    /// dispatches on a CPU other than the entity's kernel CPU (overview 9).
    task_last: Vec<u32>,
    kernel_migrations: u64,
    now: Time,
    /// Copied out of the task set for the hot path.
    duration: Time,
    abort_at_deadline: bool,
}

impl RunView for Run<'_> {
    fn now(&self) -> Time {
        self.now
    }
    fn running(&self, cpu: u32) -> Option<EntityId> {
        self.cpus[cpu as usize].running
    }
    fn entity(&self, e: EntityId) -> Option<EntityInfo> {
        self.ents.get(e as usize).filter(|x| x.live).map(|x| x.info)
    }
    fn executed(&self, e: EntityId) -> Time {
        match self.ents.get(e as usize) {
            Some(x) if x.live => {
                x.ran
                    + if x.cpu != NONE {
                        self.now.saturating_sub(self.cpus[x.cpu as usize].mark)
                    } else {
                        0
                    }
            }
            _ => 0,
        }
    }
    fn waiting_for(&self, e: EntityId) -> Option<(ResourceId, EntityId)> {
        let x = self
            .ents
            .get(e as usize)
            .filter(|x| x.live && x.is_blocked())?;
        let h = self.resources[x.blocked_on as usize].holder;
        (h != NONE).then_some((x.blocked_on, h))
    }
    fn holder(&self, r: ResourceId) -> Option<EntityId> {
        let h = self.resources.get(r as usize)?.holder;
        (h != NONE).then_some(h)
    }
    fn waiters(&self, r: ResourceId) -> Vec<EntityId> {
        self.resources
            .get(r as usize)
            .map(|x| x.queue.iter().copied().collect())
            .unwrap_or_default()
    }
    fn task(&self, t: TaskId) -> &Task {
        &self.ts.tasks[t as usize]
    }
}

impl Run<'_> {
    /// The task set being run.
    pub fn taskset(&self) -> &TaskSet {
        &self.ts
    }
    /// Every entity slot (live or not), for drivers and observers.
    pub fn ents(&self) -> &[Ent] {
        &self.ents
    }
    pub fn ent(&self, e: EntityId) -> &Ent {
        &self.ents[e as usize]
    }
    pub fn cpu(&self, c: u32) -> &CpuState {
        &self.cpus[c as usize]
    }
    /// The thread program of entity info `i`.
    #[inline]
    pub fn thread_program(&self, i: &EntityInfo) -> &rtsched_model::ThreadProgram {
        // A DAG node (region DAG_REGION) is a thread of the program's one region of nodes.
        let region = if i.region == DAG_REGION { 0 } else { i.region };
        &self.programs[i.task as usize].regions[region as usize][i.thread as usize]
    }
    /// Where entity `e` stands in its program.
    #[inline]
    pub fn next_of(&self, e: EntityId) -> Next {
        let x = &self.ents[e as usize];
        if x.cp >= x.ncp {
            // No checkpoint left (every thread without sections): no program to look up.
            return if x.done < x.demand {
                Next::Run(x.demand - x.done)
            } else {
                Next::Done
            };
        }
        next_step(self.thread_program(&x.info), x.demand, x.done, x.cp)
    }
    /// Work `e` has left before its next checkpoint or its end (0 if it is at one).
    #[inline]
    pub fn work_to_next(&self, e: EntityId) -> Time {
        match self.next_of(e) {
            Next::Run(w) => w,
            _ => 0,
        }
    }
    /// The CPU `c` and the entity it runs, for a driver's accounting of work done.
    #[inline]
    pub fn running_mut(&mut self, c: u32) -> Option<(&mut CpuState, &mut Ent)> {
        let cpu = &mut self.cpus[c as usize];
        let e = cpu.running?;
        Some((cpu, &mut self.ents[e as usize]))
    }
    /// The CPU's state, the entity it runs and that entity's job record (None outside the
    /// counted window): for a driver charging it overhead (the simulator's ticks).
    #[inline]
    pub fn running_with_record(
        &mut self,
        c: u32,
    ) -> Option<(&mut CpuState, &mut Ent, Option<&mut JobRecord>)> {
        let cpu = &mut self.cpus[c as usize];
        let e = cpu.running?;
        let x = &mut self.ents[e as usize];
        let rec = if x.rec != NONE {
            Some(&mut self.records[rec_at(self.rec_base, self.rec_front, x.rec)])
        } else {
            None
        };
        Some((cpu, x, rec))
    }
    /// Entity `e`'s slot, for a driver's accounting of work done (testbed).
    #[inline]
    pub fn ent_mut(&mut self, e: EntityId) -> &mut Ent {
        &mut self.ents[e as usize]
    }
    /// Every ready or running entity (live, not blocked) and its CPU.
    pub fn live(&self) -> impl Iterator<Item = (EntityInfo, Option<u32>)> + '_ {
        self.ents
            .iter()
            .filter(|e| e.live && !e.is_blocked())
            .map(|e| (e.info, (e.cpu != NONE).then_some(e.cpu)))
    }
    /// Per resource, the entity holding it (if any) and whether that entity is live.
    pub fn holders(&self) -> impl Iterator<Item = Option<(EntityInfo, bool)>> + '_ {
        self.resources.iter().map(|r| {
            (r.holder != NONE).then(|| {
                (
                    self.ents[r.holder as usize].info,
                    self.ents[r.holder as usize].live,
                )
            })
        })
    }
    /// Blocked entities: (entity, resource, whether it is in that resource's queue, whether a
    /// CPU runs it). A correct ledger answers (_, _, true, false).
    pub fn blocked(&self) -> impl Iterator<Item = (EntityInfo, u32, bool, bool)> + '_ {
        self.ents
            .iter()
            .filter(|e| e.live && e.is_blocked())
            .map(|e| {
                let queued = self.resources[e.blocked_on as usize]
                    .queue
                    .contains(&e.info.id);
                (e.info, e.blocked_on, queued, e.cpu != NONE)
            })
    }
    /// Whether a priority inversion held after the last decision (docs/semantics.md).
    pub fn priority_inversion(&self) -> bool {
        self.inv.holding()
    }
    /// Counted jobs not yet finished or aborted.
    pub fn undecided(&self) -> u64 {
        self.undecided
    }
    /// A job's record (for a driver's own measurements, e.g. the real start time).
    pub fn record_mut(&mut self, rec: u32) -> Option<&mut JobRecord> {
        let i = rec.wrapping_sub(self.rec_base) as usize;
        if i < self.rec_front {
            return None;
        }
        self.records.get_mut(i)
    }
}

/// Where a streaming ledger's records go: the caller's sink, or one it handed over.
enum SinkRef<'t> {
    Borrowed(&'t mut (dyn JobSink + Send)),
    Owned(Box<dyn JobSink + Send>),
}

impl SinkRef<'_> {
    #[inline]
    fn get(&mut self) -> &mut (dyn JobSink + Send) {
        match self {
            SinkRef::Borrowed(s) => &mut **s,
            SinkRef::Owned(b) => &mut **b,
        }
    }
}

enum PolicyRef<'t> {
    Owned(Box<dyn Policy>),
    Borrowed(&'t mut dyn Policy),
}

impl PolicyRef<'_> {
    #[inline]
    fn get(&mut self) -> &mut dyn Policy {
        match self {
            PolicyRef::Owned(b) => b.as_mut(),
            PolicyRef::Borrowed(r) => &mut **r,
        }
    }
}

/// What a release asks of the driver.
#[derive(Clone, Copy, Debug)]
pub struct Released {
    /// When the task's next job is due.
    pub next: Time,
    /// With `on_miss: abort`: call [`Ledger::deadline_abort`] at this time with (slot, generation).
    pub abort: Option<(Time, u32, u32)>,
}

/// The end-of-run accounting.
pub struct Outcome {
    pub jobs: Vec<JobRecord>,
    pub releases: u64,
    pub invocations: u64,
    /// Overhead the policy charged with `Dispatch::charge`.
    pub charged: Time,
    /// Abort-handler time charged (`run.overheads.abort_handler`).
    pub abort_handler_ns: Time,
    /// Priority inversions (docs/semantics.md): onsets, and the time one held.
    pub priority_inversions: u64,
    pub priority_inversion_ns: Time,
    /// Priority-inversion time per counted job (its victims: docs/semantics.md).
    pub inversion_per_job: crate::inversion::PerJob,
    /// Migrations as a kernel counts them (overview 9).
    pub kernel_migrations: u64,
    /// The policy's own counters ([`Policy::stats`]) at the end of the run.
    pub stats: Vec<(String, f64)>,
    /// Deadlocks detected (each resolved by an abort of the policy).
    pub deadlocks: u64,
    /// With [`Ledger::measure_policy`]: wall-clock ns spent in `schedule`, in total and in the
    /// longest call.
    pub policy_ns: Option<(u64, u64)>,
    /// Best-effort tasks: CPU time and bursts each got.
    pub fair: Vec<FairOutcome>,
    /// When the run ended.
    pub end: Time,
}

/// What a best-effort task got in a run.
#[derive(Clone, Debug)]
pub struct FairOutcome {
    pub name: String,
    /// CPU time its bursts consumed (work and the overheads charged to them).
    pub cpu_ns: Time,
    /// Bursts released (a hog has one).
    pub bursts: u64,
}

impl Outcome {
    /// The run-level counters of the results schema that the ledger and the policy know:
    /// invocations, releases, priority inversions, and the work-stealing counters a policy
    /// reports by name in `stats` (`steals`, `steal_attempts`, `failed_steals`; 0 when it
    /// reports none). `events` is the driver's.
    pub fn fill_counters(&self, c: &mut Counters) {
        let stat = |k: &str| {
            self.stats
                .iter()
                .find(|(n, _)| n == k)
                .map_or(0, |&(_, v)| v as u64)
        };
        c.scheduler_invocations = self.invocations;
        c.releases = self.releases;
        c.priority_inversions = self.priority_inversions;
        c.priority_inversion_ns = self.priority_inversion_ns;
        c.inverted_jobs = self.inversion_per_job.jobs;
        c.inversion_job_ns = self.inversion_per_job.total_ns;
        c.inversion_job_max_ns = self.inversion_per_job.max_ns;
        c.inversion_job_p99_ns = self.inversion_per_job.p99_ns;
        c.kernel_migrations = self.kernel_migrations;
        c.steals = stat("steals");
        c.steal_attempts = stat("steal_attempts");
        c.failed_steals = stat("failed_steals");
        c.deadlocks = self.deadlocks;
        // A policy with a CBS (`linux`) reports these; none other writes them.
        let opt = |k: &str| {
            self.stats
                .iter()
                .find(|(n, _)| n == k)
                .map(|&(_, v)| v as u64)
        };
        c.throttles = opt("throttles");
        c.replenishments = opt("replenishments");
    }

    /// The policy-overhead measurements of a run asked to measure (ChronOS Fig 6), by name:
    /// `policy_ns_per_invocation` (mean), `policy_ns_max`, `policy_ns_total`.
    pub fn fill_measurements(&self, m: &mut std::collections::BTreeMap<String, f64>) {
        for f in &self.fair {
            m.insert(format!("fair.{}.cpu_ns", f.name), f.cpu_ns as f64);
            m.insert(
                format!("fair.{}.share", f.name),
                f.cpu_ns as f64 / self.end.max(1) as f64,
            );
            m.insert(format!("fair.{}.bursts", f.name), f.bursts as f64);
        }
        // A balancing policy's counters (`cfs`: invocations, time spent, migrations it made);
        // the deadline class's per task (`linux`: `dl.<task>.throttles`, `.replenishments`).
        for (k, v) in self
            .stats
            .iter()
            .filter(|(k, _)| k.starts_with("balance.") || k.starts_with("dl."))
        {
            m.insert(k.clone(), *v);
        }
        if let Some((total, max)) = self.policy_ns {
            m.insert("policy_ns_total".into(), total as f64);
            m.insert("policy_ns_max".into(), max as f64);
            m.insert(
                "policy_ns_per_invocation".into(),
                total as f64 / self.invocations.max(1) as f64,
            );
        }
    }
}

/// Why a run stopped before its end ([`Ledger::failure`]): a value, so that a driver's caller
/// (a sweep's row) tells a deadlock from the rest without reading the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A deadlock the policy does not resolve (or was told of and did not break); the message
    /// names the cycle ("deadlock at 1ms: a#0 waits for 'y', held by b#0; ...").
    Deadlock(String),
    /// The run outgrew what it can hold (job ids, the per-job records' memory).
    Capacity(String),
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Failure::Deadlock(m) | Failure::Capacity(m) => m,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// The job ledger and the policy it drives. One per run.
pub struct Ledger<'t> {
    pub run: Run<'t>,
    dec: Decisions,
    policy: PolicyRef<'t>,
    /// Whether a job's `start` is its first dispatch (simulator) or set by the driver when
    /// work really begins (testbed).
    start_at_dispatch: bool,
    grants_resources: bool,
    /// Scratch lists, reused by every decision.
    lists: Lists,
    /// A deadlock told to the policy, to be broken by its next decision.
    unresolved: Option<Vec<EntityId>>,
    failure: Option<Failure>,
    /// Where decided records go, in release order, as soon as every earlier one is decided
    /// too ([`Ledger::stream_records`]); memory then holds only the undecided stretch.
    sink: Option<SinkRef<'t>>,
    /// Records a driver is still writing to after their job may be decided (a testbed worker
    /// running a piece: an abort decides the job, the piece's CPU time comes after): the
    /// stream waits at them ([`Ledger::pin_record`]). At most one per CPU.
    pinned: Vec<u32>,
    /// Whether `schedule` is timed; total and longest ns.
    measure: bool,
    policy_ns: (u64, u64),
}

impl<'t> Ledger<'t> {
    fn with(ts: Cow<'t, TaskSet>, policy: PolicyRef<'t>, start_at_dispatch: bool) -> Self {
        Ledger::with_parts(ts, policy, start_at_dispatch, LedgerParts::default())
    }

    /// A fresh ledger in the buffers of an earlier one (`parts`): the same state as
    /// [`Ledger::with`] builds (every list empty, slots numbered from 0), only the memory is
    /// reused, so a sweep running many short simulations does not allocate it anew each time.
    fn with_parts(
        ts: Cow<'t, TaskSet>,
        policy: PolicyRef<'t>,
        start_at_dispatch: bool,
        parts: LedgerParts,
    ) -> Self {
        let m = ts.platform.cpus as usize;
        let n = ts.tasks.len();
        let duration = ts.run.duration;
        let expected_jobs = ts.jobs_released_by(duration);
        let LedgerParts {
            mut programs,
            ents,
            free,
            mut jobs,
            mut spare,
            free_jobs,
            cpus,
            mut streams,
            next_job,
            task_busy,
            mut held,
            mut records,
            task_cpu,
            bursts,
            wakeups,
            inv_bits,
            task_last,
            dec,
            lists,
            pinned,
        } = parts;
        // Each task's program over the one its slot held (a sweep's sets are alike: no allocation).
        programs.truncate(n);
        for (p, t) in programs.iter_mut().zip(&ts.tasks) {
            t.rebuild_program(p);
        }
        let built = programs.len();
        programs.extend(ts.tasks[built..].iter().map(|t| t.program()));
        let width: usize = programs.iter().map(Program::width).sum();
        let widest = programs.iter().map(Program::width).max().unwrap_or(1);
        let threads: usize = programs.iter().map(Program::threads).sum();
        let resources = (0..ts.resources.len())
            .map(|_| Resource {
                queue: VecDeque::with_capacity(threads),
                ..Resource::default()
            })
            .collect();
        let seeded = TaskStreams::seeded(ts.run.seed);
        streams.clear();
        streams.extend((0..n as u32).map(|i| {
            let mut s = TaskStreams::from_seeded(&seeded, i);
            s.fair = ts.tasks[i as usize].fair_params().map(|f| f.behaviour);
            s
        }));
        fn filled<T: Clone>(mut v: Vec<T>, len: usize, x: T) -> Vec<T> {
            v.clear();
            v.resize(len, x);
            v
        }
        for mut j in jobs.drain(..) {
            j.demands.clear();
            j.ents.clear();
            spare.push((j.demands, j.ents));
        }
        held.truncate(n);
        held.iter_mut().for_each(VecDeque::clear);
        // Empty until a job is held behind its predecessor (an overrun): no allocation before.
        held.resize_with(n, VecDeque::new);
        records.clear();
        let mut policy = policy;
        let grants_resources = policy.get().grants_resources();
        Ledger {
            run: Run {
                programs,
                ents: empty(ents, 2 * width + m),
                free: empty(free, 2 * width + m),
                preds: Vec::new(),
                jobs: empty(jobs, 2 * n),
                spare,
                free_jobs: empty(free_jobs, 2 * n),
                resources,
                cpus: filled(
                    cpus,
                    m,
                    CpuState {
                        running: None,
                        mark: 0,
                        last: u64::MAX,
                        deadline: 0,
                    },
                ),
                streams,
                next_job: filled(next_job, n, 0),
                task_busy: filled(task_busy, n, false),
                held,
                // Reserved at the first record (`expected_jobs`), once it is known whether
                // the run holds its records or streams them (a few then suffice), unless
                // an earlier run left room.
                records,
                expected_jobs: expected_jobs.min(1 << 26) as usize,
                rec_base: 0,
                rec_front: 0,
                undecided: 0,
                task_cpu: filled(task_cpu, n, 0),
                bursts: filled(bursts, n, 0),
                wakeups: empty(wakeups, 0),
                releases: 0,
                invocations: 0,
                charged: 0,
                abort_handler_ns: 0,
                deadlocks: 0,
                inv: {
                    let mut inv = Inversions::in_buffer(inv_bits, 2 * width + m);
                    inv.bound_jobs(expected_jobs);
                    inv
                },
                task_last: filled(task_last, n, NONE),
                kernel_migrations: 0,
                now: 0,
                duration,
                abort_at_deadline: ts.run.on_miss == OnMiss::Abort,
                ts,
            },
            dec: dec.map_or_else(|| Decisions::new(m as u32), |d| d.renew(m as u32)),
            policy,
            start_at_dispatch,
            grants_resources,
            lists: lists.emptied(m, widest),
            unresolved: None,
            failure: None,
            sink: None,
            pinned: empty(pinned, m),
            measure: false,
            policy_ns: (0, 0),
        }
    }

    /// [`Ledger::borrowed`] in the buffers an earlier ledger left ([`Ledger::finish_parts`]).
    pub fn borrowed_in(
        ts: &'t TaskSet,
        policy: &'t mut dyn Policy,
        start_at_dispatch: bool,
        parts: LedgerParts,
    ) -> Self {
        Ledger::with_parts(
            Cow::Borrowed(ts),
            PolicyRef::Borrowed(policy),
            start_at_dispatch,
            parts,
        )
    }

    /// A ledger over a borrowed task set and policy (the simulator). `start_at_dispatch`: see
    /// [`Ledger::mark_started`].
    pub fn borrowed(ts: &'t TaskSet, policy: &'t mut dyn Policy, start_at_dispatch: bool) -> Self {
        Ledger::with(
            Cow::Borrowed(ts),
            PolicyRef::Borrowed(policy),
            start_at_dispatch,
        )
    }

    /// Hand each counted job's record to `sink` as soon as it and every earlier one are
    /// decided (finished or aborted), and the rest at the end, instead of holding them all:
    /// [`Outcome::jobs`] is then empty and memory holds only the undecided stretch. A driver
    /// that changes a record after its job is decided pins it first ([`Ledger::pin_record`]).
    pub fn stream_records(&mut self, sink: &'t mut (dyn JobSink + Send)) {
        self.sink = Some(SinkRef::Borrowed(sink));
    }

    /// [`Ledger::stream_records`] into a sink the ledger owns (a driver whose ledger outlives
    /// the caller's borrows, such as the testbed's, shared with its threads).
    pub fn stream_records_owned(&mut self, sink: Box<dyn JobSink + Send>) {
        self.sink = Some(SinkRef::Owned(sink));
    }

    /// Records a streaming run makes room for at first: the undecided stretch and the handed-on
    /// records not yet dropped ([`Ledger::hand_on_front`] drops them once there are
    /// `STREAMED_RECORDS / 2`), so the buffer stays at about 8 KB unless more jobs than that
    /// are undecided at once. Small on purpose: a sweep runs many short simulations, and a
    /// buffer past malloc's trim threshold (64 KB where Dask sets `MALLOC_TRIM_THRESHOLD_`)
    /// is given back to the system and faulted in again by every one of them.
    const STREAMED_RECORDS: usize = 32;

    /// Keep record `rec` (and every later one) from the stream until [`Ledger::unpin_record`]:
    /// the driver will still add to it, even if its job is decided meanwhile.
    pub fn pin_record(&mut self, rec: u32) {
        if rec != NONE && self.sink.is_some() {
            self.pinned.push(rec);
        }
    }

    /// The driver is done with `rec` (pinned before); the stream moves on past it if it can.
    pub fn unpin_record(&mut self, rec: u32) {
        if let Some(i) = self.pinned.iter().position(|&r| r == rec) {
            self.pinned.swap_remove(i);
            self.hand_on_decided();
        }
    }

    /// Hand every decided record at the front on to the sink, in release order; drop the
    /// handed-on ones from memory once they are at least half of it (amortised O(1) a job).
    #[inline(always)]
    fn hand_on_decided(&mut self) {
        // Only the test inline: a run that holds its records pays no call.
        if self.sink.is_some() {
            self.hand_on_front();
        }
    }

    #[inline]
    fn hand_on_front(&mut self) {
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        let sink = sink.get();
        let r = &mut self.run;
        while let Some(rec) = r.records.get(r.rec_front) {
            if rec.finish.is_none() && !rec.aborted {
                break;
            }
            if !self.pinned.is_empty()
                && self
                    .pinned
                    .contains(&r.rec_base.wrapping_add(r.rec_front as u32))
            {
                break;
            }
            sink.job(rec, Time::MAX);
            r.rec_front += 1;
        }
        if r.rec_front >= Self::STREAMED_RECORDS / 2 && 2 * r.rec_front >= r.records.len() {
            r.records.drain(..r.rec_front);
            r.rec_base = r.rec_base.wrapping_add(r.rec_front as u32);
            r.rec_front = 0;
        }
    }

    /// A ledger that owns its task set and policy (drivers whose state outlives the caller's).
    pub fn owned(ts: TaskSet, policy: Box<dyn Policy>, start_at_dispatch: bool) -> Ledger<'static> {
        Ledger::with(Cow::Owned(ts), PolicyRef::Owned(policy), start_at_dispatch)
    }

    pub fn policy(&mut self) -> &mut dyn Policy {
        self.policy.get()
    }

    /// Counted window end, and the time after which a run stops draining.
    #[inline]
    pub fn duration(&self) -> Time {
        self.run.duration
    }
    pub fn limit(&self) -> Time {
        self.duration().saturating_add(drain_limit(&self.run.ts))
    }
    /// Whether a release due at `at` still happens: inside the counted window, or after it as
    /// interference while counted jobs are undecided.
    #[inline]
    pub fn keeps_releasing(&self, at: Time) -> bool {
        at < self.duration() || (self.run.undecided > 0 && at != NEVER)
    }
    /// Whether every counted job is decided by `now`, at or past the window's end.
    #[inline]
    pub fn all_decided(&self, now: Time) -> bool {
        self.run.undecided == 0 && now >= self.duration()
    }
    /// Whether events reached the policy since its last `schedule` (a real driver then asks
    /// for a decision).
    pub fn has_events(&self) -> bool {
        self.dec.has_events()
    }

    // ------------------------------------------------------------------ releases and fork

    /// Task `task`'s next job, due at `at`, is released at `now` (`now >= at`; a real driver
    /// may be late). Its record is counted if `at` is inside the window.
    #[inline]
    pub fn release(&mut self, now: Time, task: u32, at: Time) -> Released {
        let r = &mut self.run;
        let ts: &TaskSet = &r.ts;
        let t = &ts.tasks[task as usize];
        let (rel_deadline, duration) = (t.deadline, r.duration);
        let job = r.next_job[task as usize];
        r.next_job[task as usize] += 1;
        let slot = match r.free_jobs.pop() {
            Some(s) => s,
            None => {
                let (demands, ents) = r.spare.pop().unwrap_or_default();
                r.jobs.push(Job {
                    task: 0,
                    job: 0,
                    release: 0,
                    deadline: 0,
                    generation: 0,
                    live: false,
                    held: false,
                    rec: NONE,
                    region: 0,
                    pending: 0,
                    demands,
                    first: 0,
                    ents,
                });
                r.preds.push(Vec::new());
                (r.jobs.len() - 1) as u32
            }
        };
        let mut demands = std::mem::take(&mut r.jobs[slot as usize].demands);
        demands.clear();
        // A best-effort burst (rare; out of line): no deadline (NEVER, so two fair entities never
        // make a priority inversion); its successor comes after it and a sleep.
        let fair = r.streams[task as usize].fair.is_some();
        let (demand, next, deadline) = if !fair {
            let d = if t.execution_times.is_empty() {
                r.streams[task as usize].job_demands(
                    &ts.run.execution,
                    &r.programs[task as usize],
                    &mut demands,
                )
            } else {
                crate::streams::replayed(&t.execution_times, job, &mut demands)
            };
            (
                d,
                at + r.streams[task as usize].interarrival(t),
                at + rel_deadline,
            )
        } else {
            r.bursts[task as usize] += 1;
            (
                r.streams[task as usize].fair_burst(&mut demands),
                NEVER,
                NEVER,
            )
        };
        let rec = if at < duration && !fair {
            let id = r.rec_base.wrapping_add(r.records.len() as u32);
            if id == NONE && self.failure.is_none() {
                // Four billion counted jobs: ids would wrap onto "no record". The driver stops
                // the run with this (the CLI refuses such runs up front, `--max-jobs`).
                self.failure = Some(Failure::Capacity(format!(
                    "more than {} counted jobs in one run: shorten the window",
                    NONE - 1
                )));
            }
            if r.records.capacity() == 0 {
                let room = if self.sink.is_some() {
                    Self::STREAMED_RECORDS
                } else {
                    r.expected_jobs
                };
                let room = room.min(r.expected_jobs).max(1);
                // A run that holds its records asks for them all at once: refused by the
                // machine, that is the run's error, not an abort of the process.
                if r.records.try_reserve_exact(room).is_err() && self.failure.is_none() {
                    self.failure = Some(Failure::Capacity(format!(
                        "cannot hold the run's {room} per-job records ({:.1} GB): the machine refused the memory; stream them instead (--jobs-parquet, or no output that reads them after the run)",
                        (room * std::mem::size_of::<JobRecord>()) as f64 / 1e9
                    )));
                }
            }
            r.records.push(JobRecord {
                task,
                job,
                release: at,
                deadline,
                demand,
                max_utility: t.max_utility(),
                ..Default::default()
            });
            r.undecided += 1;
            id
        } else {
            NONE
        };
        let held = r.task_busy[task as usize];
        let j = &mut r.jobs[slot as usize];
        j.generation = j.generation.wrapping_add(1);
        let generation = j.generation;
        j.task = task;
        j.job = job;
        j.release = at;
        j.deadline = deadline;
        j.live = true;
        j.held = held;
        j.rec = rec;
        j.region = if r.programs[task as usize].dag.is_some() {
            DAG_REGION
        } else {
            0
        };
        j.pending = 0;
        j.demands = demands;
        j.first = 0;
        j.ents.clear();
        r.releases += 1;
        if held {
            r.held[task as usize].push_back(slot);
        } else {
            r.task_busy[task as usize] = true;
            self.fork(now, slot, None);
        }
        let abort = (self.run.abort_at_deadline && !fair).then_some((deadline, slot, generation));
        Released { next, abort }
    }

    /// Create the entities of job `j`'s current region and give them to the policy.
    #[inline]
    fn fork(&mut self, now: Time, j: u32, cpu: Option<u32>) {
        let job = &self.run.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        if region == DAG_REGION {
            return self.fork_sources(now, j);
        }
        let n = self.run.programs[task as usize].regions[region as usize].len();
        self.run.jobs[j as usize].pending = n as u32;
        self.dec.note_global_event();
        // Where a kernel would have the fresh threads: the CPU they fork on, or for a job's
        // first region the one its task last ran on (overview 9).
        let home = cpu.unwrap_or(self.run.task_last[task as usize]);
        if n == 1 {
            // The common case (every sequential job): no fork event, no scratch list.
            let info = self.new_thread(j, 0, home);
            self.policy.get().release(now, &info);
            return;
        }
        self.lists.forked.clear();
        for t in 0..n {
            let info = self.new_thread(j, t, home);
            self.lists.forked.push(info);
        }
        let forked = std::mem::take(&mut self.lists.forked);
        self.policy.get().forked(now, cpu, &forked);
        self.lists.forked = forked;
    }

    /// A DAG job starts: its predecessor counts set, its sources given to the policy (one by
    /// `release`, several by `forked` on no CPU, as a first region's threads).
    #[inline(never)]
    fn fork_sources(&mut self, now: Time, j: u32) {
        let task = self.run.jobs[j as usize].task as usize;
        let prec = self.run.programs[task].dag.as_ref().expect("a DAG task");
        let preds = &mut self.run.preds[j as usize];
        preds.clear();
        preds.extend_from_slice(&prec.indeg);
        self.run.jobs[j as usize].pending = prec.indeg.len() as u32;
        let sources = prec.sources.len();
        self.dec.note_global_event();
        let home = self.run.task_last[task];
        self.lists.forked.clear();
        for k in 0..sources {
            let t = self.run.programs[task]
                .dag
                .as_ref()
                .expect("a DAG task")
                .sources[k];
            let info = self.new_thread(j, t as usize, home);
            self.lists.forked.push(info);
        }
        self.hand_forked(now, None, false);
    }

    /// Node `node` of DAG job `j` completed on `cpu` (other nodes remain): each successor whose
    /// last predecessor it was becomes a fresh entity, kernel CPU `cpu`, and they reach the
    /// policy together.
    #[inline(never)]
    fn fork_successors(&mut self, now: Time, j: u32, node: u32, cpu: u32) {
        let task = self.run.jobs[j as usize].task as usize;
        let prec = self.run.programs[task].dag.as_ref().expect("a DAG task");
        let (a, b) = (
            prec.start[node as usize] as usize,
            prec.start[node as usize + 1] as usize,
        );
        self.lists.forked.clear();
        for i in a..b {
            let v = self.run.programs[task]
                .dag
                .as_ref()
                .expect("a DAG task")
                .succ[i];
            let left = &mut self.run.preds[j as usize][v as usize];
            *left -= 1;
            if *left == 0 {
                let info = self.new_thread(j, v as usize, cpu);
                self.lists.forked.push(info);
            }
        }
        if self.lists.forked.is_empty() {
            return;
        }
        self.dec.note_global_event();
        // A join: one node ready and nothing else of the job live.
        let join = self.run.jobs[j as usize].ents.len() == 1;
        self.hand_forked(now, Some(cpu), join);
    }

    /// Give `lists.forked` to the policy: one by `release` if it is a job's first or a join
    /// (`alone`), else all by `forked` on `cpu`.
    #[inline]
    fn hand_forked(&mut self, now: Time, cpu: Option<u32>, alone: bool) {
        if self.lists.forked.len() == 1 && (cpu.is_none() || alone) {
            let info = self.lists.forked[0];
            self.policy.get().release(now, &info);
            return;
        }
        let forked = std::mem::take(&mut self.lists.forked);
        self.policy.get().forked(now, cpu, &forked);
        self.lists.forked = forked;
    }

    /// A fresh entity for thread `t` of job `j`'s current region.
    #[inline]
    fn new_thread(&mut self, j: u32, t: usize, home: u32) -> EntityInfo {
        let r = &mut self.run;
        let job = &r.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        let demand = job.demands[job.first as usize + t];
        let (jobno, release, deadline, rec) = (job.job, job.release, job.deadline, job.rec);
        // A DAG job's nodes are the program's one region.
        let in_program = if region == DAG_REGION { 0 } else { region };
        let ncp = r.programs[task as usize].regions[in_program as usize][t]
            .checkpoints
            .len() as u32;
        let slot = match r.free.pop() {
            Some(s) => s,
            None => {
                r.ents.push(Ent::EMPTY);
                r.inv.grow(r.ents.len());
                (r.ents.len() - 1) as u32
            }
        };
        let info = EntityInfo {
            id: slot,
            task,
            job: jobno,
            region,
            thread: t as u32,
            release,
            deadline,
        };
        let e = &mut r.ents[slot as usize];
        let generation = e.generation.wrapping_add(1);
        *e = Ent {
            info,
            generation,
            live: true,
            job: j,
            rec,
            demand,
            ncp,
            kcpu: home,
            ..Ent::EMPTY
        };
        r.inv.ready(slot, deadline);
        r.jobs[j as usize].ents.push(slot);
        info
    }

    /// The job of `task` the policy knew ended at `now`: give it the next held job, if any.
    #[inline]
    fn next_of_task(&mut self, now: Time, task: u32, fair: bool) {
        match self.run.held[task as usize].pop_front() {
            Some(j) => {
                self.run.jobs[j as usize].held = false;
                self.fork(now, j, None);
            }
            None => {
                self.run.task_busy[task as usize] = false;
                let r = &mut self.run;
                if fair {
                    // A best-effort task sleeps, then wakes for its next burst.
                    let s = &mut r.streams[task as usize];
                    let at = now + s.fair.map_or(0, |b| s.sleep(&b));
                    if at < r.duration || r.undecided > 0 {
                        r.wakeups.push((at, task));
                    }
                }
            }
        }
    }

    #[inline]
    fn free_entity(&mut self, e: EntityId) {
        let x = &mut self.run.ents[e as usize];
        if x.executing {
            x.free_when_stopped = true;
        } else {
            self.run.free.push(e);
        }
    }

    /// A real worker stopped executing `e`: its slot may be reused if `e` ended meanwhile.
    pub fn stopped_executing(&mut self, e: EntityId) {
        let x = &mut self.run.ents[e as usize];
        x.executing = false;
        if x.free_when_stopped {
            x.free_when_stopped = false;
            self.run.free.push(e);
        }
    }

    /// Take `e` off `cpu` (it runs there) at the decision level.
    #[inline]
    fn unlink<S: Substrate>(&mut self, now: Time, cpu: u32, e: EntityId, why: Off, sub: &mut S) {
        let x = &mut self.run.ents[e as usize];
        debug_assert_eq!(x.cpu, cpu);
        sub.off_cpu(now, cpu, &mut self.run.cpus[cpu as usize], x, why);
        x.cpu = NONE;
        x.last_cpu = cpu;
        let c = &mut self.run.cpus[cpu as usize];
        c.running = None;
        c.deadline = 0;
        self.dec.vacate(cpu);
        self.dec.note_cpu_event(cpu);
    }

    // ------------------------------------------------------------------ progress

    /// Handle the checkpoints the entity `e` on `cpu` has reached and say what it does next.
    /// `holds_cpu`: its CPU is still its own (a real worker may learn late that it was taken);
    /// if not, only releases are handled and it stops (`Step::Stop`), to go on — or complete —
    /// when it runs again.
    #[inline]
    pub fn advance<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        holds_cpu: bool,
        sub: &mut S,
    ) -> Step {
        loop {
            let owed = self.run.ents[e as usize].owed;
            match self.run.next_of(e) {
                Next::Run(work) if holds_cpu => return Step::Run { owed, work },
                Next::At(_) | Next::Done if owed > 0 && holds_cpu => {
                    return Step::Run { owed, work: 0 }
                }
                Next::At(Action::Release(r)) => {
                    self.run.ents[e as usize].cp += 1;
                    self.release_resource(now, r, e);
                }
                Next::At(Action::Acquire(r)) if holds_cpu => {
                    let holder = self.run.resources[r as usize].holder;
                    // The request is made either way: once it holds `r`, it is past it.
                    self.run.ents[e as usize].cp += 1;
                    if !self.run.resources[r as usize].request(e) {
                        self.block(now, cpu, e, r, holder, sub);
                        return Step::Blocked;
                    }
                }
                Next::Done if holds_cpu => return Step::Done,
                _ => return Step::Stop,
            }
        }
    }

    /// `e`, running on `cpu`, requested `r`, which `holder` holds (or which awaits a grant),
    /// and is queued: it leaves its CPU and waits.
    fn block<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        r: u32,
        holder: u32,
        sub: &mut S,
    ) {
        self.policy
            .get()
            .requested(now, e, r, (holder != NONE).then_some(holder));
        self.unlink(now, cpu, e, Off::Blocked, sub);
        let x = &mut self.run.ents[e as usize];
        x.blocked_on = r;
        x.blocked_since = now;
        self.policy.get().blocked(now, e, cpu);
        if holder != NONE {
            self.detect_deadlock(now, e, holder);
        }
    }

    /// `e` now waits for what `holder` holds: if the chain of holders leads back to `e`, the
    /// jobs on it wait for each other forever. Tell the policy (it must abort one of them in its
    /// next `schedule`); a policy that cannot resolve deadlocks stops the run with an error.
    #[cold]
    fn detect_deadlock(&mut self, now: Time, e: EntityId, holder: u32) {
        let mut cycle = std::mem::take(&mut self.lists.cycle);
        cycle.clear();
        cycle.push(e);
        let mut h = holder;
        // At most one step per blocked entity: a chain that does not close ends at a holder
        // that is not blocked (or a resource awaiting a grant).
        while h != NONE && h != e && cycle.len() <= self.run.ents.len() {
            cycle.push(h);
            let b = self.run.ents[h as usize].blocked_on;
            if b == NONE {
                break;
            }
            h = self.run.resources[b as usize].holder;
        }
        if h == e {
            self.run.deadlocks += 1;
            if self.policy.get().resolves_deadlocks() {
                self.policy.get().deadlock(now, &cycle);
                self.unresolved = Some(cycle.clone());
            } else if self.failure.is_none() {
                self.failure = Some(Failure::Deadlock(format!(
                    "{}; scheduler '{}' does not resolve deadlocks (dasa, pdasa, ggua and nggua abort a job to break one), or acquire the resources in one global order",
                    self.describe_deadlock(now, &cycle),
                    self.policy.get().name()
                )));
            }
        }
        self.lists.cycle = cycle;
    }

    /// "deadlock at 12.5ms: a#3 waits for 'R2', held by b#1; b#1 waits for 'R1', held by a#3".
    fn describe_deadlock(&self, now: Time, cycle: &[EntityId]) -> String {
        let r = &self.run;
        let name = |e: EntityId| {
            let i = r.ents[e as usize].info;
            format!("{}#{}", r.ts.tasks[i.task as usize].name, i.job)
        };
        let steps: Vec<String> = cycle
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                let next = cycle[(k + 1) % cycle.len()];
                let res = r.ents[e as usize].blocked_on;
                let rname = r.ts.resources.get(res as usize).map_or("?", String::as_str);
                format!("{} waits for '{}', held by {}", name(e), rname, name(next))
            })
            .collect();
        format!(
            "deadlock at {}: {}",
            rtsched_model::time::fmt_duration(now),
            steps.join("; ")
        )
    }

    /// Why the run cannot go on (an unresolved deadlock, a run too big to hold), if it cannot.
    /// Drivers check it after each decision and stop with it.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// `e` releases `r`: tell the policy, then hand `r` on.
    fn release_resource(&mut self, now: Time, r: u32, e: EntityId) {
        self.policy.get().released(now, e, r);
        self.hand_on(now, r, e);
    }

    /// The holder `e` frees `r`: it goes to its longest waiter — or, for a policy that grants
    /// resources itself, waits for its grant.
    fn hand_on(&mut self, now: Time, r: u32, e: EntityId) {
        let fifo = !self.grants_resources;
        match self.run.resources[r as usize].release(e, fifo) {
            Some(w) => {
                self.took(now, r, w);
                let info = self.run.ents[w as usize].info;
                self.dec.note_global_event();
                self.policy.get().unblocked(now, &info);
            }
            None if self.run.resources[r as usize].pending => self.dec.add_pending_grant(r),
            None => {}
        }
    }

    /// `w`, out of `r`'s queue, holds `r` now and is ready again.
    fn took(&mut self, now: Time, r: u32, w: EntityId) {
        let res = &mut self.run.resources[r as usize];
        res.holder = w;
        res.pending = false;
        let x = &mut self.run.ents[w as usize];
        debug_assert_eq!(x.blocked_on, r);
        x.blocked_on = NONE;
        let (waited, rec) = (now - x.blocked_since, x.rec);
        self.run.inv.ready(w, x.info.deadline);
        if rec != NONE {
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)].blocked += waited;
        }
    }

    /// The entity `e` on `cpu` finished its work and its program (`Step::Done`). `finish` is
    /// the completion time recorded (the simulator's `now`; a real run's measured instant).
    #[inline]
    pub fn complete<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        finish: Time,
        sub: &mut S,
    ) {
        let x = &mut self.run.ents[e as usize];
        assert!(
            x.live && x.cpu == cpu,
            "entity {e} completed on CPU {cpu}, which does not run it"
        );
        sub.off_cpu(
            now,
            cpu,
            &mut self.run.cpus[cpu as usize],
            x,
            Off::Completed,
        );
        x.cpu = NONE;
        x.last_cpu = cpu;
        x.live = false;
        self.run.task_last[x.info.task as usize] = cpu;
        if x.rec != NONE {
            // Its CPU time is final (a real worker reports its last piece before this).
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)].exec += x.ran;
        }
        if x.info.deadline == NEVER {
            // A best-effort burst: its task's CPU share.
            self.run.task_cpu[x.info.task as usize] += x.ran;
        }
        let j = x.job;
        let node = x.info.thread;
        if x.executing {
            x.free_when_stopped = true;
        } else {
            self.run.free.push(e);
        }
        let c = &mut self.run.cpus[cpu as usize];
        c.running = None;
        c.deadline = 0;
        self.dec.vacate(cpu);
        self.dec.note_cpu_event(cpu);
        self.policy.get().complete(now, e, cpu);
        let job = &mut self.run.jobs[j as usize];
        if let Some(p) = job.ents.iter().position(|&x| x == e) {
            job.ents.swap_remove(p);
        }
        job.pending -= 1;
        let task = job.task as usize;
        if job.region == DAG_REGION {
            if job.pending > 0 {
                self.fork_successors(now, j, node, cpu);
                return;
            }
        } else if job.pending > 0 {
            return;
        } else if (job.region as usize) + 1 < self.run.programs[task].regions.len() {
            // Join: the next region forks where this one ended.
            job.first += self.run.programs[task].regions[job.region as usize].len() as u32;
            job.region += 1;
            self.fork(now, j, Some(cpu));
            return;
        }
        job.live = false;
        let fair = job.deadline == NEVER;
        if job.rec != NONE {
            self.run.inv.job_done(j, now);
            let r = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, job.rec)];
            r.finish = Some(finish);
            r.missed = finish > r.deadline;
            r.accrue(&self.run.ts.tasks[task]);
            self.run.undecided -= 1;
            self.hand_on_decided();
        }
        self.run.free_jobs.push(j);
        self.next_of_task(now, task as u32, fair);
    }

    // ------------------------------------------------------------------ aborts, ticks, timers

    /// The deadline of job slot `slot` (generation `generation`) passed under `on_miss: abort`.
    pub fn deadline_abort<S: Substrate>(
        &mut self,
        now: Time,
        slot: u32,
        generation: u32,
        sub: &mut S,
    ) {
        let j = &self.run.jobs[slot as usize];
        if j.live && j.generation == generation {
            self.abort_job(now, slot, sub);
        }
    }

    /// Remove a live job and all its threads without completing it. Its waiting threads leave
    /// their queues first (no `aborted` for them: the policy gave them up when they blocked);
    /// then each other thread leaves its CPU, `released` is reported for what it holds, and
    /// `aborted`; last, the resources go to their next holders (`unblocked`).
    fn abort_job<S: Substrate>(&mut self, now: Time, j: u32, sub: &mut S) {
        let job = &self.run.jobs[j as usize];
        assert!(job.live, "aborting job slot {j}, which is not live");
        let (held, task, rec) = (job.held, job.task, job.rec);
        if held {
            // Never given to the policy: drop it from its task's queue, tell nobody.
            self.run.held[task as usize].retain(|&s| s != j);
        } else {
            let mut doomed = std::mem::take(&mut self.lists.doomed);
            doomed.clear();
            doomed.extend_from_slice(&self.run.jobs[j as usize].ents);
            // Waiting threads leave their queues first, so no resource goes to this job.
            for &e in &doomed {
                let x = &mut self.run.ents[e as usize];
                if x.is_blocked() {
                    let r = x.blocked_on as usize;
                    x.blocked_on = NONE;
                    // Not the policy's since it blocked: no `aborted` for it.
                    x.live = false;
                    let waited = now - x.blocked_since;
                    if self.run.resources[r].leave(e) {
                        self.dec.drop_pending_grant(r as ResourceId);
                    }
                    if rec != NONE {
                        self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)]
                            .blocked += waited;
                    }
                }
            }
            // Each thread leaves its CPU, gives up what it holds and is gone to the policy; then
            // what they held is handed on (to other jobs' threads).
            let handler = self.run.ts.run.overheads.abort_handler;
            for &e in &doomed {
                self.run
                    .inv
                    .gone(e, self.run.ents[e as usize].info.deadline);
                let x = self.run.ents[e as usize];
                if x.cpu != NONE {
                    self.unlink(now, x.cpu, e, Off::Aborted, sub);
                }
                if rec != NONE {
                    // What it ran so far (a real worker still executing adds its last piece
                    // when it stops: the testbed does). Overhead it still owed (a charge cut
                    // off by the abort) was never paid: not CPU time of the job.
                    let x = &self.run.ents[e as usize];
                    let r =
                        &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)];
                    r.exec += x.ran;
                    r.overhead = r.overhead.saturating_sub(x.owed);
                }
                // The abort handler cleans up on the CPU the thread last ran on, running there
                // or not (docs/semantics.md): its kernel CPU (overview 9), which for a thread
                // that never ran is where it was forked or woken — none for a task's first job,
                // which is not charged. Whatever runs there next pays it (an idle CPU absorbs it).
                if handler > 0 && x.kcpu != NONE {
                    self.dec.add_charge(x.kcpu, handler);
                    self.run.abort_handler_ns += handler;
                }
                if x.live {
                    for r in 0..self.run.resources.len() {
                        if self.run.resources[r].holder == e {
                            self.policy.get().released(now, e, r as u32);
                        }
                    }
                    self.run.ents[e as usize].live = false;
                    self.policy.get().aborted(now, e);
                }
            }
            for &e in &doomed {
                for r in 0..self.run.resources.len() {
                    if self.run.resources[r].holder == e {
                        self.hand_on(now, r as u32, e);
                    }
                }
                self.free_entity(e);
            }
            self.run.jobs[j as usize].ents.clear();
            self.lists.doomed = doomed;
        }
        self.run.jobs[j as usize].live = false;
        if rec != NONE {
            self.run.inv.job_done(j, now);
            let r = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)];
            r.aborted = true;
            r.aborted_at = Some(now);
            r.missed = true;
            r.utility = 0.0;
            self.run.undecided -= 1;
            self.hand_on_decided();
        }
        self.run.free_jobs.push(j);
        if !held {
            let fair = self.run.jobs[j as usize].deadline == NEVER;
            self.next_of_task(now, task, fair);
        }
    }

    /// The policy's tick period, if it wants one.
    pub fn tick_interval(&mut self) -> Option<Time> {
        self.policy.get().tick_interval()
    }

    /// The periodic tick on `cpu`.
    pub fn tick(&mut self, now: Time, cpu: u32) {
        self.dec.note_cpu_event(cpu);
        self.policy.get().tick(now, cpu);
    }

    /// A timer the policy set fired.
    pub fn timer(&mut self, now: Time) {
        self.dec.note_global_event();
        self.policy.get().timer(now);
    }

    /// Timers the policy set since the last call, for the driver to arm.
    #[inline]
    pub fn take_timers(&mut self, out: &mut Vec<Time>) {
        self.dec.take_timers(out);
    }
    /// Whether best-effort tasks went to sleep and are due to wake ([`Ledger::take_wakeups`]).
    #[inline]
    pub fn has_wakeups(&self) -> bool {
        !self.run.wakeups.is_empty()
    }
    /// The best-effort bursts due after a sleep, as (time, task): the driver releases each then
    /// (`release(now, task, time)`), as it releases a periodic task's next job.
    pub fn take_wakeups(&mut self, out: &mut Vec<(Time, u32)>) {
        out.clear();
        out.append(&mut self.run.wakeups);
    }
    /// Whether the policy set timers since the last `take_timers`.
    #[inline]
    pub fn has_timers(&self) -> bool {
        self.dec.has_timers()
    }

    // ------------------------------------------------------------------ decisions

    /// After the events of instant `now`: let the policy decide and apply what it decided, as
    /// often as aborts and ungranted resources require.
    #[inline]
    pub fn decide<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.run.now = now;
        loop {
            self.run.invocations += 1;
            if self.measure {
                let t0 = std::time::Instant::now();
                self.policy
                    .get()
                    .schedule(now, &mut Dispatch::new(&mut self.dec, &self.run));
                let ns = t0.elapsed().as_nanos() as u64;
                self.policy_ns.0 += ns;
                self.policy_ns.1 = self.policy_ns.1.max(ns);
            } else {
                self.policy
                    .get()
                    .schedule(now, &mut Dispatch::new(&mut self.dec, &self.run));
            }
            self.dec.clear_events();
            let again = self.grants_resources && self.apply_grants(now);
            self.apply(now, sub);
            if !self.dec.has_aborts() && !again {
                if self.unresolved.is_some() {
                    self.check_resolved(now);
                }
                let r = &mut self.run;
                r.inv.observe(now, &r.ents, &r.cpus);
                return;
            }
            self.dec.take_aborts(&mut self.lists.aborts);
            let aborts = std::mem::take(&mut self.lists.aborts);
            for &e in &aborts {
                // Several threads of one job may be named; the first aborts the job.
                if self.run.ents[e as usize].live {
                    let j = self.run.ents[e as usize].job;
                    self.abort_job(now, j, sub);
                }
            }
            self.lists.aborts = aborts;
        }
    }

    /// After a deadlock was reported: the policy must have aborted one of its jobs by now.
    #[cold]
    fn check_resolved(&mut self, now: Time) {
        let cycle = self.unresolved.take().expect("a reported deadlock");
        let gen = |x: &Ent| x.live && x.is_blocked();
        // Broken if some entity of the cycle is gone (aborted; its slot may be reused since).
        if cycle.iter().all(|&e| gen(&self.run.ents[e as usize])) && self.failure.is_none() {
            self.failure = Some(Failure::Deadlock(format!(
                "{}; scheduler '{}' was told of it and aborted none of its jobs",
                self.describe_deadlock(now, &cycle),
                self.policy.get().name()
            )));
        }
    }

    /// Time every `schedule` call with a clock (a run asked to measure the policy's overhead;
    /// ChronOS Fig 6). The result is in [`Outcome::policy_ns`].
    pub fn measure_policy(&mut self, on: bool) {
        self.measure = on;
    }

    /// Grants the policy made, then (for a granting policy) FIFO for what it left ungranted.
    /// Returns whether an `unblocked` was reported, which calls for another `schedule`.
    #[cold]
    #[inline(never)]
    fn apply_grants(&mut self, now: Time) -> bool {
        self.dec.take_grants(&mut self.lists.grants);
        for i in 0..self.lists.grants.len() {
            let (r, w) = self.lists.grants[i];
            let res = &mut self.run.resources[r as usize];
            let at = res.queue.iter().position(|&x| x == w);
            assert!(
                res.pending && at.is_some(),
                "policy '{}' granted resource {r} to entity {w}, which does not wait for it (or {r} was not freed)",
                self.policy.get().name()
            );
            res.queue.remove(at.unwrap());
            self.took(now, r, w);
        }
        let mut ungranted = std::mem::take(&mut self.lists.ungranted);
        self.dec.take_pending_grants(&mut ungranted);
        let mut woke = false;
        for &r in &ungranted {
            let res = &mut self.run.resources[r as usize];
            if !res.pending {
                continue;
            }
            let w = res
                .queue
                .pop_front()
                .expect("a pending resource has waiters");
            self.took(now, r, w);
            let info = self.run.ents[w as usize].info;
            self.dec.note_global_event();
            self.policy.get().unblocked(now, &info);
            woke = true;
        }
        self.lists.ungranted = ungranted;
        woke
    }

    /// Apply the policy's CPU changes: stop what leaves, start what arrives, count, assert.
    #[inline(always)]
    fn apply<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.dec.take_dirty(&mut self.lists.dirty);
        self.lists.stopped.clear();
        for i in 0..self.lists.dirty.len() {
            let cpu = self.lists.dirty[i];
            let old = self.run.cpus[cpu as usize].running;
            let new = self.dec.current(cpu);
            if old == new {
                continue;
            }
            if let Some(o) = old {
                let x = &mut self.run.ents[o as usize];
                sub.off_cpu(
                    now,
                    cpu,
                    &mut self.run.cpus[cpu as usize],
                    x,
                    Off::Preempted,
                );
                x.cpu = NONE;
                x.last_cpu = cpu;
                self.run.inv.ready(o, x.info.deadline);
                let c = &mut self.run.cpus[cpu as usize];
                c.running = None;
                c.deadline = 0;
                self.lists.stopped.push(o);
            }
            if new.is_none() {
                sub.assigned(cpu, None);
            }
        }
        // Every CPU that changed has stopped its old entity: now the new ones start (an
        // entity moved between two CPUs has left the first by now).
        for i in 0..self.lists.dirty.len() {
            let cpu = self.lists.dirty[i];
            let Some(e) = self.dec.current(cpu) else {
                continue;
            };
            if self.run.cpus[cpu as usize].running == Some(e) {
                continue;
            }
            let x = &self.run.ents[e as usize];
            if !(x.live && !x.is_blocked() && x.cpu == NONE) {
                self.invalid_dispatch(cpu, e);
            }
            let work = if x.cp >= x.ncp {
                x.demand - x.done
            } else {
                self.run.work_to_next(e)
            };
            let d = x.info.deadline;
            let x = &mut self.run.ents[e as usize];
            let id = ((x.generation as u64) << 32) | e as u64;
            let c = &mut self.run.cpus[cpu as usize];
            let switched = c.last != id;
            let migrated = x.last_cpu != NONE && x.last_cpu != cpu;
            self.run.kernel_migrations += (x.kcpu != NONE && x.kcpu != cpu) as u64;
            x.kcpu = cpu;
            c.running = Some(e);
            c.deadline = d;
            c.last = id;
            c.mark = now;
            x.cpu = cpu;
            if x.rec != NONE {
                let rec =
                    &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)];
                if self.start_at_dispatch {
                    rec.start.get_or_insert(now);
                }
                rec.cpus.insert(cpu);
                rec.context_switches += switched as u32;
                rec.migrations += migrated as u32;
            }
            let rec = if x.rec != NONE {
                Some(&mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)])
            } else {
                None
            };
            sub.on_cpu(now, cpu, c, x, switched, migrated, work, rec);
            sub.assigned(cpu, Some(e));
            self.run.inv.unready(e, d);
        }
        for i in 0..self.lists.stopped.len() {
            let x = &self.run.ents[self.lists.stopped[i] as usize];
            if x.cpu == NONE && x.live && x.rec != NONE {
                self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)]
                    .preemptions += 1;
            }
        }
        if !self.dec.has_charges() {
            return;
        }
        self.dec.take_charges(&mut self.lists.charges);
        for i in 0..self.lists.charges.len() {
            let (cpu, ns) = self.lists.charges[i];
            self.run.charged += ns;
            if let Some(e) = self.run.cpus[cpu as usize].running {
                let work = self.run.work_to_next(e);
                let x = &mut self.run.ents[e as usize];
                let rec = if x.rec != NONE {
                    Some(
                        &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)],
                    )
                } else {
                    None
                };
                sub.charged(now, cpu, &mut self.run.cpus[cpu as usize], x, ns, work, rec);
            }
        }
    }

    #[cold]
    fn invalid_dispatch(&mut self, cpu: u32, e: EntityId) -> ! {
        let name = self.policy.get().name();
        let x = &self.run.ents[e as usize];
        if !x.live || x.is_blocked() {
            panic!("policy '{name}' dispatched entity {e}, which is not ready");
        }
        panic!(
            "policy '{name}' put entity {e} on CPU {cpu} while it runs on CPU {}",
            x.cpu
        );
    }

    /// A driver that measures when work really begins records it here (first time only).
    pub fn mark_started(&mut self, e: EntityId, at: Time) {
        let rec = self.run.ents[e as usize].rec;
        if rec != NONE {
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)]
                .start
                .get_or_insert(at);
        }
    }

    /// End the run at `end`: unfinished jobs whose deadline passed are misses; threads still
    /// blocked add their wait so far.
    pub fn finish(self, end: Time) -> Outcome {
        self.finish_parts(end).0
    }

    /// [`Ledger::finish`], and the ledger's buffers for the next run
    /// ([`Ledger::borrowed_in`]).
    pub fn finish_parts(mut self, end: Time) -> (Outcome, LedgerParts) {
        let r = &mut self.run;
        for e in r.ents.iter().filter(|e| e.live && e.is_blocked()) {
            if e.rec != NONE {
                r.records[rec_at(r.rec_base, r.rec_front, e.rec)].blocked +=
                    end.saturating_sub(e.blocked_since);
            }
        }
        for j in r.jobs.iter().filter(|j| j.live && j.rec != NONE) {
            let rec = &mut r.records[rec_at(r.rec_base, r.rec_front, j.rec)];
            rec.missed = rec.deadline <= end;
        }
        for e in r.ents.iter().filter(|e| e.live && e.rec != NONE) {
            // The driver accounted every running entity up to `end` first (the simulator's
            // engine does; a real worker adds each piece as it ends). Overhead still owed was
            // never paid: not CPU time of the job.
            let rec = &mut r.records[rec_at(r.rec_base, r.rec_front, e.rec)];
            rec.exec += e.ran;
            rec.overhead = rec.overhead.saturating_sub(e.owed);
        }
        let mut fair = Vec::new();
        for e in r.ents.iter().filter(|e| e.live) {
            // A running entity's time since its CPU's mark is not yet in `ran`.
            let now = if e.cpu != NONE {
                end.saturating_sub(r.cpus[e.cpu as usize].mark)
            } else {
                0
            };
            r.task_cpu[e.info.task as usize] += e.ran + now;
        }
        for (i, t) in r.ts.tasks.iter().enumerate().filter(|(_, t)| t.is_fair()) {
            fair.push(FairOutcome {
                name: t.name.clone(),
                cpu_ns: r.task_cpu[i],
                bursts: r.bursts[i],
            });
        }
        r.inv.finish(end);
        let counted = u64::from(r.rec_base) + r.records.len() as u64;
        let inversion_per_job = r.inv.per_job(counted);
        if let Some(sink) = self.sink.as_mut() {
            let sink = sink.get();
            // The undecided stretch, final now that the end is known.
            for rec in &r.records[r.rec_front..] {
                sink.job(rec, end);
            }
            r.records.clear();
        }
        let outcome = Outcome {
            jobs: std::mem::take(&mut r.records),
            releases: r.releases,
            invocations: r.invocations,
            charged: r.charged - r.abort_handler_ns,
            abort_handler_ns: r.abort_handler_ns,
            priority_inversions: r.inv.onsets,
            priority_inversion_ns: r.inv.ns,
            inversion_per_job,
            kernel_migrations: r.kernel_migrations,
            stats: self.policy.get().stats(),
            deadlocks: r.deadlocks,
            policy_ns: self.measure.then_some(self.policy_ns),
            fair,
            end,
        };
        let Ledger {
            run,
            dec,
            lists,
            pinned,
            ..
        } = self;
        let Run {
            programs,
            ents,
            free,
            jobs,
            spare,
            free_jobs,
            cpus,
            streams,
            next_job,
            task_busy,
            held,
            records,
            task_cpu,
            bursts,
            wakeups,
            inv,
            task_last,
            ..
        } = run;
        let parts = LedgerParts {
            programs,
            ents,
            free,
            jobs,
            spare,
            free_jobs,
            cpus,
            streams,
            next_job,
            task_busy,
            held,
            records,
            task_cpu,
            bursts,
            wakeups,
            inv_bits: inv.into_buffer(),
            task_last,
            dec: Some(dec),
            lists,
            pinned,
        };
        (outcome, parts)
    }
}

/// The buffers of a finished ledger ([`Ledger::finish_parts`]) for the next one
/// ([`Ledger::borrowed_in`]): their allocations, none of their contents. Empty by default.
#[derive(Default)]
pub struct LedgerParts {
    programs: Vec<Program>,
    ents: Vec<Ent>,
    free: Vec<u32>,
    jobs: Vec<Job>,
    spare: Vec<(Vec<Time>, Vec<EntityId>)>,
    free_jobs: Vec<u32>,
    cpus: Vec<CpuState>,
    streams: Vec<TaskStreams>,
    next_job: Vec<u64>,
    task_busy: Vec<bool>,
    held: Vec<VecDeque<u32>>,
    records: Vec<JobRecord>,
    task_cpu: Vec<Time>,
    bursts: Vec<u64>,
    wakeups: Vec<(Time, u32)>,
    inv_bits: Vec<u64>,
    task_last: Vec<u32>,
    dec: Option<Decisions>,
    lists: Lists,
    pinned: Vec<u32>,
}

/// The ledger's scratch lists, reused by every decision (and, through [`LedgerParts`], by the
/// next run).
#[derive(Default)]
struct Lists {
    dirty: Vec<u32>,
    stopped: Vec<EntityId>,
    aborts: Vec<EntityId>,
    grants: Vec<(ResourceId, EntityId)>,
    ungranted: Vec<ResourceId>,
    charges: Vec<(u32, Time)>,
    forked: Vec<EntityInfo>,
    doomed: Vec<EntityId>,
    cycle: Vec<EntityId>,
}

impl Lists {
    /// Every list empty, with room for `m` CPUs' changes and a region of `widest` threads.
    fn emptied(self, m: usize, widest: usize) -> Lists {
        let Lists {
            dirty,
            stopped,
            aborts,
            grants,
            ungranted,
            charges,
            forked,
            doomed,
            cycle,
        } = self;
        Lists {
            dirty: empty(dirty, m),
            stopped: empty(stopped, m),
            aborts: empty(aborts, 0),
            grants: empty(grants, 0),
            ungranted: empty(ungranted, 0),
            charges: empty(charges, 0),
            forked: empty(forked, widest),
            doomed: empty(doomed, widest),
            cycle: empty(cycle, 0),
        }
    }
}

/// `v` emptied, with room for `room`: `clear` then `reserve` (a no-op when the room is there).
fn empty<T>(mut v: Vec<T>, room: usize) -> Vec<T> {
    v.clear();
    v.reserve(room);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::{CriticalSection, Region};

    const MS: Time = 1_000_000;

    #[test]
    fn pieces_end_at_checkpoints_scaled_to_the_demand() {
        // One thread of WCET 10 ms holding resource 0 for work [2, 6) ms.
        let sections = [CriticalSection {
            resource: 0,
            region: 0,
            thread: 0,
            start: 2 * MS,
            length: 4 * MS,
        }];
        let p = Program::build(10 * MS, &[], &sections);
        let tp = &p.regions[0][0];
        // At its WCET: run 2, acquire, run 4, release, run 4, done.
        assert_eq!(next_step(tp, 10 * MS, 0, 0), Next::Run(2 * MS));
        assert_eq!(
            next_step(tp, 10 * MS, 2 * MS, 0),
            Next::At(Action::Acquire(0))
        );
        assert_eq!(next_step(tp, 10 * MS, 2 * MS, 1), Next::Run(4 * MS));
        assert_eq!(
            next_step(tp, 10 * MS, 6 * MS, 1),
            Next::At(Action::Release(0))
        );
        assert_eq!(next_step(tp, 10 * MS, 6 * MS, 2), Next::Run(4 * MS));
        assert_eq!(next_step(tp, 10 * MS, 10 * MS, 2), Next::Done);
        // At half its WCET every boundary halves: acquire at 1, release at 3, end at 5.
        assert_eq!(next_step(tp, 5 * MS, 0, 0), Next::Run(MS));
        assert_eq!(next_step(tp, 5 * MS, MS, 1), Next::Run(2 * MS));
        assert_eq!(next_step(tp, 5 * MS, 3 * MS, 2), Next::Run(2 * MS));
        // A boundary that does not divide exactly is rounded down (7 ms of 10 at 3 ms: 2.1).
        let odd = Program::build(
            10 * MS,
            &[],
            &[CriticalSection {
                resource: 0,
                region: 0,
                thread: 0,
                start: 7 * MS,
                length: 3 * MS,
            }],
        );
        assert_eq!(
            next_step(&odd.regions[0][0], 3 * MS, 0, 0),
            Next::Run(2_100_000)
        );
        // A section from the start to the end: acquire before any work, release before done.
        let whole = Program::build(
            4 * MS,
            &[],
            &[CriticalSection {
                resource: 1,
                region: 0,
                thread: 0,
                start: 0,
                length: 4 * MS,
            }],
        );
        let tp = &whole.regions[0][0];
        assert_eq!(next_step(tp, 4 * MS, 0, 0), Next::At(Action::Acquire(1)));
        assert_eq!(
            next_step(tp, 4 * MS, 4 * MS, 1),
            Next::At(Action::Release(1))
        );
        assert_eq!(next_step(tp, 4 * MS, 4 * MS, 2), Next::Done);
        // A thread of a later region, with its own WCET.
        let par = Program::build(
            9 * MS,
            &[
                Region { threads: vec![MS] },
                Region {
                    threads: vec![3 * MS, 5 * MS],
                },
            ],
            &[],
        );
        assert_eq!(
            next_step(&par.regions[1][1], 5 * MS, 0, 0),
            Next::Run(5 * MS)
        );
    }

    #[test]
    fn resources_are_granted_in_request_order() {
        let mut r = Resource::default();
        assert!(r.request(3));
        assert!(!r.request(5));
        assert!(!r.request(7));
        assert!(!r.request(9));
        assert!(!r.leave(7));
        assert_eq!(r.release(3, true), Some(5));
        assert_eq!(r.release(5, true), Some(9));
        assert_eq!(r.release(9, true), None);
        assert_eq!(r.holder, NONE);
        assert!(r.request(7));
        // A policy that grants: a freed resource with waiters is reserved for its grant.
        assert!(!r.request(8));
        assert_eq!(r.release(7, false), None);
        assert!(r.pending && !r.request(6));
        // Aborts take its waiters away before the policy grants it: the last one leaving frees it.
        assert!(!r.leave(8));
        assert!(r.leave(6));
        assert!(!r.pending && r.request(1));
    }

    struct Nop;
    impl Substrate for Nop {
        fn off_cpu(&mut self, _: Time, _: u32, _: &mut CpuState, _: &mut Ent, _: Off) {}
        fn on_cpu(
            &mut self,
            _: Time,
            _: u32,
            _: &mut CpuState,
            _: &mut Ent,
            _: bool,
            _: bool,
            _: Time,
            _: Option<&mut JobRecord>,
        ) {
        }
        fn charged(
            &mut self,
            _: Time,
            _: u32,
            _: &mut CpuState,
            _: &mut Ent,
            _: Time,
            _: Time,
            _: Option<&mut JobRecord>,
        ) {
        }
    }

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<JobRecord>>>);
    impl JobSink for Shared {
        fn job(&mut self, rec: &JobRecord, _end: Time) {
            self.0.lock().unwrap().push(rec.clone());
        }
    }

    /// A testbed worker is inside a piece when its job is aborted at the deadline: the job is
    /// decided, but the piece's CPU time comes after. Its pinned record waits for it.
    #[test]
    fn a_pinned_record_leaves_the_stream_only_when_unpinned() {
        for pin in [false, true] {
            let ts = rtsched_model::parse_taskset(
                "platform: {cpus: 1}\nrun: {duration: 30ms, on_miss: abort}\ntasks:\n  - {name: a, period: 10, wcet: 8}\n",
                rtsched_model::Format::Yaml,
                "pin.yaml",
            )
            .unwrap();
            let policy = rtsched_policies::build("gedf", &ts).unwrap();
            let mut led = Ledger::owned(ts, policy, false);
            let sink = Shared::default();
            led.stream_records_owned(Box::new(sink.clone()));
            let rel = led.release(0, 0, 0);
            led.decide(0, &mut Nop);
            let e = led.run.cpu(0).running.expect("job 0 runs");
            let rec = led.run.ent(e).rec;
            if pin {
                led.pin_record(rec);
            }
            let (at, slot, generation) = rel.abort.expect("on_miss: abort");
            led.deadline_abort(at, slot, generation, &mut Nop);
            let handed = sink.0.lock().unwrap().len();
            if !pin {
                assert_eq!(handed, 1, "decided and not pinned: handed on at once");
                continue;
            }
            assert_eq!(handed, 0, "decided but pinned: held");
            led.run.record_mut(rec).expect("still held").exec += 123;
            led.unpin_record(rec);
            let got = sink.0.lock().unwrap().clone();
            assert_eq!(got.len(), 1);
            assert!(got[0].aborted && got[0].exec >= 123, "{:?}", got[0]);
        }
    }

    /// A minimal driver: every task's first job released at 0, each running entity's demand
    /// worked off at rate 1, completions in CPU order, a decision after each instant.
    fn drive(yaml: &str, policy: &str) -> Outcome {
        let ts =
            rtsched_model::parse_taskset(yaml, rtsched_model::Format::Yaml, "drive.yaml").unwrap();
        let n = ts.tasks.len() as u32;
        let m = ts.platform.cpus;
        let policy = rtsched_policies::build(policy, &ts).unwrap();
        let mut led = Ledger::owned(ts, policy, true);
        for t in 0..n {
            led.release(0, t, 0);
        }
        led.decide(0, &mut Nop);
        let (mut now, mut left) = (0, std::collections::HashMap::<EntityId, Time>::new());
        loop {
            let running: Vec<(u32, EntityId)> = (0..m)
                .filter_map(|c| led.run.cpu(c).running.map(|e| (c, e)))
                .collect();
            if running.is_empty() {
                break;
            }
            for &(_, e) in &running {
                left.entry(e).or_insert(led.run.ent(e).demand);
            }
            let dt = running.iter().map(|(_, e)| left[e]).min().unwrap();
            now += dt;
            for &(c, e) in &running {
                let l = left.get_mut(&e).unwrap();
                *l -= dt;
                if *l == 0 {
                    left.remove(&e);
                    led.complete(now, c, e, now, &mut Nop);
                }
            }
            led.decide(now, &mut Nop);
        }
        led.finish(now)
    }

    /// One steal (the hand-worked case of crates/sim/tests/paws.rs): p, regions [2, [4, 4, 4],
    /// 2], alone on 2 CPUs under PAWS. CPU 0 runs the first region; at 2 p forks on CPU 0,
    /// which takes thread 2 while CPU 1 steals thread 0 — one kernel migration (the thief's
    /// `set_task_cpu`), none as an entity resuming elsewhere. At 6 CPU 0 takes thread 1 from
    /// its own deque; at 10 the last region forks on CPU 0 and runs there.
    #[test]
    fn a_steal_is_a_kernel_migration() {
        let o = drive("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n", "paws");
        let stat = |k: &str| o.stats.iter().find(|(n, _)| n == k).map(|&(_, v)| v as u64);
        assert_eq!(stat("steals"), Some(1));
        assert_eq!(o.kernel_migrations, 1);
        assert_eq!(o.jobs[0].migrations, 0);
        assert_eq!(o.jobs[0].finish, Some(12 * MS));
    }

    /// A fork placing a thread on the other CPU: p, regions [2, [4, 4]], alone on 2 CPUs under
    /// global EDF. The first region runs on one CPU; at 2 both threads, forked there, go to
    /// the global queue and each CPU takes one: the thread first run on the other CPU is one
    /// kernel migration; no entity resumed elsewhere.
    #[test]
    fn a_fresh_thread_first_run_elsewhere_is_a_kernel_migration() {
        let o = drive("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4]]}\n", "gedf");
        assert_eq!((o.kernel_migrations, o.jobs[0].migrations), (1, 0));
        assert_eq!(o.jobs[0].finish, Some(6 * MS));
        // One job's thread alone: nothing moves.
        let o = drive("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: s, period: 20, wcet: 5}\n", "gedf");
        assert_eq!(o.kernel_migrations, 0);
    }

    /// An inversion of known length, attributed to its victim (the case of
    /// crates/sim/tests/metrics.rs `paws_controlled_priority_inversion...`): on 2 CPUs under
    /// PAWS, l (10 ms, deadline 80) runs on CPU 1 while p (regions [1, [3, 3, 3]], deadline
    /// 30) forks on CPU 0 at 1; p's threads wait in CPU 0's deque until 7: p accrues 6 ms, l
    /// none. Of 2 jobs the 99th percentile (nearest rank: the 2nd) is p's 6 ms. Global EDF:
    /// no victim.
    #[test]
    fn inversion_time_goes_to_the_job_that_waits() {
        let yaml = "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: l, period: 100, wcet: 10, deadline: 80}\n  - {name: p, period: 100, deadline: 30, regions: [1, [3, 3, 3]]}\n";
        let o = drive(yaml, "paws");
        assert_eq!(
            (o.priority_inversions, o.priority_inversion_ns),
            (1, 6 * MS)
        );
        assert_eq!(
            o.inversion_per_job,
            crate::inversion::PerJob {
                jobs: 1,
                total_ns: 6 * MS,
                max_ns: 6 * MS,
                p99_ns: 6 * MS
            }
        );
        let g = drive(yaml, "gedf");
        assert_eq!(g.inversion_per_job, crate::inversion::PerJob::default());
        // In the run's counters.
        let mut c = Counters::default();
        o.fill_counters(&mut c);
        assert_eq!(
            (
                c.inverted_jobs,
                c.inversion_job_ns,
                c.inversion_job_max_ns,
                c.inversion_job_p99_ns
            ),
            (1, 6 * MS, 6 * MS, 6 * MS)
        );
    }

    #[test]
    #[should_panic(expected = "does not hold")]
    fn releasing_a_resource_one_does_not_hold_is_a_bug() {
        let mut r = Resource::default();
        assert!(r.request(1));
        r.release(2, true);
    }
}
