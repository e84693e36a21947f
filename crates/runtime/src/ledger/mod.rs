//! The job ledger: what a job is while it runs, kept once for every driver.
//!
//! # Overview
//!
//! This file holds the ledger's state — [`Ledger`], the [`Run`] a policy reads, a job's slot
//! (`Job`), the scratch lists — and what a driver implements ([`Substrate`]). The rules that
//! change the state are split by concern, each file an `impl Ledger` block opening with the
//! rules it keeps (as LITMUS^RT keeps a job's release in `jobs.c`, budgets in `budget.c` and
//! locks in `locking.c` over the state of `rt_param.h`):
//!
//! 1. **Slots** (`slots.rs`). Jobs and entities ([`Ent`], one thread of one region of a job)
//!    live in preallocated slot vectors with generation numbers, reused after their occupant
//!    ends; an entity a real worker still executes keeps its slot until the worker lets go.
//! 2. **Release and held jobs** (`release.rs`). Each task's jobs come from its own seeded
//!    streams; a job released while its task's previous one lives is *held* until that ends.
//! 3. **Fork and join** (`fork.rs`, PAWS §3). A job is a sequence of regions of threads, or
//!    one region of DAG nodes with a precedence; threads reach the policy together and join.
//! 4. **Checkpoints and resources** (`progress.rs`, `resources.rs`, `deadlock.rs`; ChronOS
//!    §3). A thread's program has checkpoints (acquire, release) scaled to its actual demand;
//!    a request for a held resource blocks and queues the thread, a release hands the resource
//!    on; a request closing a cycle of holders is a deadlock.
//! 5. **Aborts** (`abort.rs`). Deadline aborts (`on_miss: abort`) and the policy's own take
//!    the whole job, and charge each thread's abort handler.
//! 6. **Decisions** (`decide.rs`). `schedule`, then grants and CPU changes applied with the
//!    counting rules of docs/semantics.md and the invariants every driver asserts.
//! 7. **Records** (`records.rs`). One [`JobRecord`] per job released in the counted window,
//!    streamed to a sink or held; the end-of-run accounting ([`Outcome`]).
//! 8. **Priority inversions.** Every change of readiness and of what a CPU runs is told to the
//!    inversion meter (`inversion.rs`), which after each decision says whether a CPU runs a
//!    later deadline than a ready entity's, and which counted jobs are its victims;
//!    [`Outcome`] carries the onsets, the time, each job's time (`PerJob`) and the policy's
//!    `stats`, from which [`Outcome::fill_counters`] takes the run-level counters.
//! 9. **Migrations as a kernel counts them** (`queues.rs`). Besides `migrations` (an entity
//!    resumes elsewhere), `kernel_migrations` counts every dispatch of an entity on a CPU
//!    other than its *kernel CPU*, the CPU a kernel's `set_task_cpu` would have it on.
//! 10. **Run queues and pulls** (`queues.rs`, ChronOS §6.3, Fig. 7). Every thread sits on one
//!     CPU's run queue, as in a kernel; a *pull* is a dispatch on another CPU than the one
//!     whose run queue the entity sits on, counted per job (`JobRecord::pulls`).
//!
//! 11. **Triggers, suspensions and chains** (`flow.rs`, docs/chains.md). A finished job
//!     releases the jobs its task triggers, on its CPU; a self-suspending job has no entity
//!     between its run segments until the driver resumes it; chain instances are recorded.
//!     Built only for a set that has them: otherwise one branch where a job is released,
//!     starts and finishes.
//!
//! 12. **Locking protocols** (`locking.rs`, docs/locking.md). Inheritance and ceilings lend a
//!     holder a higher urgency ([`Policy::boost`]); `srp` withholds a job from the policy
//!     while its CPU's system ceiling is at or above its level; MrsP's helping places a
//!     preempted holder on a spinner's CPU ([`Policy::place`], after a decision, which is then
//!     made again: `locking/mrsp.rs`). Built only for a set that has them: otherwise one
//!     branch where a resource is taken or freed, a job starts and a decision is applied.
//!
//! Besides: what a policy and a driver read of the run (`view.rs`), and a ledger built fresh
//! or in the buffers of an earlier run (`parts.rs`). Every file sees this one's private state
//! (a module's children see its private items); what one file calls in another is
//! `pub(super)`. A step cut out of an `#[inline]` or generic function of the hot path is
//! `#[inline]` itself (`#[inline(always)]` out of `apply`), so that a driver's crate, which
//! compiles those functions, still has the whole path to inline.
//!
//! What stays with a driver is how time passes and how work is done: the simulator's event
//! queue and cost model, the testbed's threads, clocks and mailboxes. The driver learns of the
//! ledger's CPU changes through [`Substrate`].

mod abort;
mod deadlock;
mod decide;
mod flow;
mod fork;
mod locking;
mod parts;
mod progress;
mod queues;
mod records;
mod release;
mod resources;
mod slots;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;
mod view;

use crate::inversion::Inversions;
use crate::state::{CpuState, Ent, NEVER};
use crate::streams::TaskStreams;
pub use locking::{refuses_locking, set_mrsp_helping, SPIN_OWED};
pub use parts::LedgerParts;
pub use progress::{next_step, Next, Step};
use records::SinkRef;
pub use records::{FairOutcome, Outcome};
pub use release::Released;
use resources::Resource;
use rtsched_model::results::JobRecord;
use rtsched_model::{Program, TaskSet, Time};
use rtsched_policies::{Decisions, EntityId, EntityInfo, Policy, ResourceId};
use std::borrow::Cow;
use std::collections::VecDeque;

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
    /// Locking protocols (locking.rs); `None` when every resource is a plain mutex.
    locking: Option<Box<locking::Locking>>,
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

/// The run's state, which a policy reads through [`RunView`](rtsched_policies::RunView) while it decides.
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
    /// dispatches on a CPU other than the entity's kernel CPU (queues.rs).
    task_last: Vec<u32>,
    kernel_migrations: u64,
    /// Per task, the CPU whose run queue its thread sits on between jobs (queues.rs), and
    /// whether records count pulls (a driver whose threads a real kernel places does not).
    task_rq: Vec<u32>,
    pulls: bool,
    now: Time,
    /// Triggers, suspensions and chains (flow.rs); `None` for a set without them.
    flow: Option<Box<flow::Flow>>,
    /// Copied out of the task set for the hot path.
    duration: Time,
    abort_at_deadline: bool,
}

/// Where record `rec` is in `Run::records`, whose first is record `base` (it must not have been
/// handed on to a sink yet: not among the first `front`).
#[inline(always)]
fn rec_at(base: u32, front: usize, rec: u32) -> usize {
    let i = rec.wrapping_sub(base) as usize;
    debug_assert!(i >= front, "record {rec} was already handed on");
    i
}

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

impl<'t> Ledger<'t> {
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

    /// Why the run cannot go on (an unresolved deadlock, a run too big to hold), if it cannot.
    /// Drivers check it after each decision and stop with it.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }
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
