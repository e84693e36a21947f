//! The policy interface (docs/architecture.md "The policy contract"; docs/ledger.md).
//!
//! Modelled on the kernel's `struct sched_class` and LITMUS^RT's `sched_plugin`: a policy
//! receives *events* from a substrate (the simulator, or the real-threads testbed) and answers
//! with *decisions* in a [`Dispatch`]. The substrate owns the truth — time, remaining work, which
//! CPU runs what — applies the decisions, charges overheads and asserts the invariants (no
//! entity on two CPUs, no CPU running two entities, only live entities dispatched).
//!
//! Every substrate drives policies through the one job ledger (`rtsched-runtime`), so the
//! protocol below holds in each of them; `rtsched_runtime::ProtocolChecker` wraps any policy
//! and asserts it. At every instant `now` at which something happens:
//! 1. the substrate delivers the events of that instant (`complete`, `blocked`, `requested`,
//!    `released`, `unblocked`, `aborted`, `release`/`forked`, `tick`, `timer`), in its fixed
//!    event order; an entity's events come in the order they happened to it;
//! 2. it calls [`Policy::schedule`] once; the policy rewrites the CPUs it wants changed and
//!    may ask for aborts, grants, timers and charges through the [`Dispatch`];
//! 3. the substrate applies grants, then the CPU changes. If the policy asked for aborts (or
//!    left a pending grant to the FIFO default), it delivers the resulting events and calls
//!    `schedule` again at the same instant.
//!
//! On a real substrate the events of "one instant" are those that arrived since the last
//! decision; a policy never sees `now` decrease. What holds at each call: an entity the policy
//! is told about is *ready* (it has it, not running), *running* (a CPU is linked to it by the
//! policy's last applied decision), or *blocked* (the policy has it no more until
//! `unblocked`). `complete` and `blocked` name the CPU that ran the entity, already vacated;
//! `aborted` is never reported for a blocked entity; nothing is reported for an entity after
//! `complete` or `aborted`, whose id may then be reused.
//!
//! Parallel jobs (PAWS §3) and critical sections (ChronOS §III) add three events, each with a
//! default that lets a policy written for sequential, independent jobs work unchanged:
//! - `forked`: a region of a job began; its threads are new entities with the job's release
//!   and deadline (default: `release` for each). A job's first region arrives this way too
//!   when it has more than one thread; a sequential first region arrives by `release`.
//! - `blocked`: the running entity requested a resource another entity holds; the substrate
//!   vacated its CPU and the entity is not ready (default: as if it completed).
//! - `unblocked`: the resource was handed to it; it is ready again with its old identity
//!   (default: `release` again). A blocked entity that is aborted is not reported to the policy,
//!   which no longer has it.
//!
//! A policy never sees actual execution demands (a real scheduler does not know them), only
//! what a kernel would know: release, deadline, task parameters and what it dispatched.

use rtsched_model::{Task, TaskId, Time};

/// A schedulable entity: a job, or one thread of a parallel job. The id is a slot index the
/// substrate reuses after the entity ends, so policies can keep per-entity state in plain
/// vectors indexed by id.
pub type EntityId = u32;

/// The `region` of a DAG job's node (docs/dag.md): a DAG has no regions; its node is the
/// entity's `thread`, an index into the task's `dag.nodes`.
pub const DAG_REGION: u32 = u32::MAX;

/// What a policy is told about a newly ready entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityInfo {
    pub id: EntityId,
    pub task: TaskId,
    /// Job index within its task (0, 1, ...).
    pub job: u64,
    /// Region of the job (0 for sequential jobs; PAWS §3); [`DAG_REGION`] for a node of a DAG
    /// job.
    pub region: u32,
    /// Thread index within its region (0 for sequential jobs); a DAG job's node index.
    pub thread: u32,
    pub release: Time,
    /// Absolute deadline.
    pub deadline: Time,
}

/// A resource (mutex) index: the position of its name in the task set's `resources` list.
pub type ResourceId = u32;

/// An entity's place in a policy's total order, the part a locking protocol may lend to
/// another entity: (criterion, first tie-break) of its key — for fixed priority (inverted
/// priority, release), for EDF (absolute deadline, release). Smaller is more urgent.
pub type Urgency = (u64, u64);

/// What a policy may read about the run while it decides: what a kernel would know (who runs
/// where, how long each entity has executed, who holds and who waits for each resource, the
/// tasks' parameters), never an entity's actual remaining demand. The substrate's job ledger
/// implements it; [`Dispatch::run`] hands it to `schedule`.
pub trait RunView {
    /// The instant being decided.
    fn now(&self) -> Time;
    /// The entity `cpu` runs (at the decision level: what the last applied decision linked).
    fn running(&self, cpu: u32) -> Option<EntityId>;
    /// The live entity `e` (released to the policy, not completed, not aborted), or `None`.
    fn entity(&self, e: EntityId) -> Option<EntityInfo>;
    /// CPU time `e` has consumed so far: its own work plus the overheads charged to it while it
    /// ran (the kernel's `sum_exec_runtime`). 0 for an entity that is not live.
    fn executed(&self, e: EntityId) -> Time;
    /// The resource `e` waits for and the entity holding it, if `e` is blocked. Following
    /// `waiting_for` from holder to holder walks a dependency chain (ChronOS §3, DASA).
    fn waiting_for(&self, e: EntityId) -> Option<(ResourceId, EntityId)>;
    /// The entity holding resource `r`, if any.
    fn holder(&self, r: ResourceId) -> Option<EntityId>;
    /// The entities waiting for `r`, longest first.
    fn waiters(&self, r: ResourceId) -> Vec<EntityId>;
    /// A task's parameters (period, deadline, WCET, priority, structure...).
    fn task(&self, t: TaskId) -> &Task;
}

/// The substrate's side of the decisions: what each CPU runs now and what the policy asked
/// for during the last `schedule`. The substrate owns one and lends it to the policy as a
/// [`Dispatch`] for each call.
#[derive(Clone, Debug)]
pub struct Decisions {
    assigned: Vec<Option<EntityId>>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    aborts: Vec<EntityId>,
    grants: Vec<(ResourceId, EntityId)>,
    timers: Vec<Time>,
    charges: Vec<(u32, Time)>,
    /// CPUs that saw an event since the last `schedule`, and whether a CPU-less event
    /// (release, unblock, timer) happened.
    event_cpus: Vec<u32>,
    /// Per CPU, the `epoch` in which it was last noted (no per-CPU reset at each `schedule`).
    noted_in: Vec<u32>,
    epoch: u32,
    global_event: bool,
    /// Resources freed while entities wait for them, for a policy that grants them itself.
    pending_grants: Vec<ResourceId>,
}

impl Decisions {
    pub fn new(cpus: u32) -> Self {
        let m = cpus as usize;
        Decisions {
            assigned: vec![None; m],
            dirty: Vec::with_capacity(m),
            is_dirty: vec![false; m],
            aborts: Vec::new(),
            grants: Vec::new(),
            timers: Vec::new(),
            charges: Vec::new(),
            event_cpus: Vec::with_capacity(m),
            noted_in: vec![0; m],
            epoch: 1,
            global_event: false,
            pending_grants: Vec::new(),
        }
    }

    /// `Decisions::new(cpus)` in this one's buffers (a run after another: no allocation).
    pub fn renew(mut self, cpus: u32) -> Self {
        let m = cpus as usize;
        self.assigned.clear();
        self.assigned.resize(m, None);
        self.is_dirty.clear();
        self.is_dirty.resize(m, false);
        self.noted_in.clear();
        self.noted_in.resize(m, 0);
        self.dirty.clear();
        self.aborts.clear();
        self.grants.clear();
        self.timers.clear();
        self.charges.clear();
        self.event_cpus.clear();
        self.pending_grants.clear();
        self.epoch = 1;
        self.global_event = false;
        self
    }
    #[inline]
    pub fn cpus(&self) -> u32 {
        self.assigned.len() as u32
    }
    #[inline]
    pub fn current(&self, cpu: u32) -> Option<EntityId> {
        self.assigned[cpu as usize]
    }
    /// Set what `cpu` shows without marking a decision (tests of substrates and checkers).
    #[doc(hidden)]
    pub fn assign_for_test(&mut self, cpu: u32, e: Option<EntityId>) {
        self.assigned[cpu as usize] = e;
    }
    /// Record that `cpu` stopped running its entity (completion, block or abort), without
    /// marking it as a policy decision.
    #[inline]
    pub fn vacate(&mut self, cpu: u32) {
        self.assigned[cpu as usize] = None;
    }
    /// Note an event on `cpu` (completion, block, abort of its entity, tick).
    #[inline]
    pub fn note_cpu_event(&mut self, cpu: u32) {
        let c = cpu as usize;
        if self.noted_in[c] != self.epoch {
            self.noted_in[c] = self.epoch;
            self.event_cpus.push(cpu);
        }
    }
    /// Note an event on no CPU in particular (release, unblock, timer).
    #[inline]
    pub fn note_global_event(&mut self) {
        self.global_event = true;
    }
    /// Charge `cpu` `ns` of overhead not asked for by the policy (the ledger's abort handler).
    pub fn add_charge(&mut self, cpu: u32, ns: Time) {
        self.charges.push((cpu, ns));
    }
    /// A resource was freed while entities wait for it (granting policies only).
    pub fn add_pending_grant(&mut self, r: ResourceId) {
        if !self.pending_grants.contains(&r) {
            self.pending_grants.push(r);
        }
    }
    /// `r` no longer awaits a grant: its last waiter's job was aborted before the policy chose.
    pub fn drop_pending_grant(&mut self, r: ResourceId) {
        self.pending_grants.retain(|&x| x != r);
    }
    /// Resources still waiting for a grant after `schedule` (the substrate hands them FIFO).
    pub fn take_pending_grants(&mut self, out: &mut Vec<ResourceId>) {
        out.clear();
        out.append(&mut self.pending_grants);
    }
    /// Forget the events noted before the `schedule` that just ran.
    #[inline]
    pub fn clear_events(&mut self) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        self.event_cpus.clear();
        self.global_event = false;
    }
    /// CPUs the policy touched in the last `schedule`, in the order it touched them.
    #[inline]
    pub fn take_dirty(&mut self, out: &mut Vec<u32>) {
        out.clear();
        for &c in &self.dirty {
            self.is_dirty[c as usize] = false;
        }
        out.extend_from_slice(&self.dirty);
        self.dirty.clear();
    }
    #[inline]
    pub fn take_aborts(&mut self, out: &mut Vec<EntityId>) {
        out.clear();
        if !self.aborts.is_empty() {
            out.append(&mut self.aborts);
        }
    }
    #[inline]
    pub fn take_grants(&mut self, out: &mut Vec<(ResourceId, EntityId)>) {
        out.clear();
        if !self.grants.is_empty() {
            out.append(&mut self.grants);
        }
    }
    #[inline]
    pub fn take_timers(&mut self, out: &mut Vec<Time>) {
        out.clear();
        if !self.timers.is_empty() {
            out.append(&mut self.timers);
        }
    }
    #[inline]
    pub fn take_charges(&mut self, out: &mut Vec<(u32, Time)>) {
        out.clear();
        if !self.charges.is_empty() {
            out.append(&mut self.charges);
        }
    }
    /// Whether the policy asked for charges or timers (cheap checks on the hot path).
    #[inline]
    pub fn has_charges(&self) -> bool {
        !self.charges.is_empty()
    }
    #[inline]
    pub fn has_aborts(&self) -> bool {
        !self.aborts.is_empty()
    }
    #[inline]
    pub fn has_timers(&self) -> bool {
        !self.timers.is_empty()
    }
    /// Whether events were noted since the last `schedule`.
    #[inline]
    pub fn has_events(&self) -> bool {
        self.global_event || !self.event_cpus.is_empty()
    }
}

/// The per-CPU decisions, as a policy sees them in `schedule`. Before `schedule` it holds what
/// each CPU runs now (a CPU whose entity completed, blocked or was aborted shows `None`); the
/// policy changes what it wants, and may also abort jobs, grant freed resources, set one-shot
/// timers and charge the cost of its own operations. [`Dispatch::run`] reads the run.
pub struct Dispatch<'a> {
    dec: &'a mut Decisions,
    run: &'a dyn RunView,
}

impl<'a> Dispatch<'a> {
    /// Lend `dec` to a policy, with `run` as its view (substrate side).
    #[inline]
    pub fn new(dec: &'a mut Decisions, run: &'a dyn RunView) -> Self {
        Dispatch { dec, run }
    }
    #[inline]
    pub fn cpus(&self) -> u32 {
        self.dec.cpus()
    }
    /// What `cpu` runs (or will run, if changed during this `schedule`).
    #[inline]
    pub fn current(&self, cpu: u32) -> Option<EntityId> {
        self.dec.assigned[cpu as usize]
    }
    /// Decide that `cpu` runs `e` (or idles).
    #[inline]
    pub fn assign(&mut self, cpu: u32, e: Option<EntityId>) {
        let d = &mut *self.dec;
        let c = cpu as usize;
        d.assigned[c] = e;
        if !d.is_dirty[c] {
            d.is_dirty[c] = true;
            d.dirty.push(cpu);
        }
    }
    /// Decide to abort `e`'s job (best-effort policies). The substrate reports `aborted` for
    /// each of its threads the policy has and calls `schedule` again at the same instant.
    pub fn abort(&mut self, e: EntityId) {
        self.dec.aborts.push(e);
    }
    /// Hand the freed resource `r` to its waiter `e` (policies whose `grants_resources` is
    /// true; `r` must be in [`Dispatch::pending_grants`]). `e` is ready from now on and may be
    /// dispatched in this same `schedule`; no `unblocked` is reported for it.
    pub fn grant(&mut self, r: ResourceId, e: EntityId) {
        self.dec.grants.push((r, e));
    }
    /// Ask for a one-shot `timer` call at `at` (e.g. a TUF's termination time). A time at or
    /// before now fires at once, in a new instant at the same time.
    pub fn wake_at(&mut self, at: Time) {
        self.dec.timers.push(at);
    }
    /// Charge `cpu` `ns` of overhead for an operation of the policy (a steal, a push): the
    /// simulator adds it to what the entity `cpu` runs after this decision must pay before its
    /// own work resumes (an idle CPU absorbs it); a real substrate pays it in real time and
    /// only counts it.
    pub fn charge(&mut self, cpu: u32, ns: Time) {
        self.dec.charges.push((cpu, ns));
    }
    /// The CPUs that saw an event since the last `schedule` (their entity completed, blocked
    /// or was aborted, or a tick), in the order the events came. A policy — or a substrate such
    /// as a kernel scheduler — may decide one CPU at a time from these.
    #[inline]
    pub fn event_cpus(&self) -> &[u32] {
        &self.dec.event_cpus
    }
    /// Whether an event not tied to a CPU (a release, an unblock, a timer) happened since the
    /// last `schedule`.
    #[inline]
    pub fn global_event(&self) -> bool {
        self.dec.global_event
    }
    /// Resources freed while entities wait for them, to be granted (granting policies only).
    pub fn pending_grants(&self) -> &[ResourceId] {
        &self.dec.pending_grants
    }
    /// The grants made so far in this `schedule` (for wrappers such as a protocol checker).
    pub fn granted(&self) -> &[(ResourceId, EntityId)] {
        &self.dec.grants
    }
    /// What the policy may read about the run.
    #[inline]
    pub fn run(&self) -> &'a dyn RunView {
        self.run
    }
}

/// One scheduling policy. Every method is called by the substrate, never by another policy,
/// and `now` never decreases between calls.
pub trait Policy: Send {
    /// The policy's display name, with options (e.g. `gfp:rm`).
    fn name(&self) -> String;

    /// A job (or parallel thread) became ready at `now`: the ledger calls it when a job starts
    /// (at its release, or when its task's previous job ended) or when a one-thread region
    /// forks after a join. `e` is ready, on no CPU, and its id names no other entity the policy
    /// has. Called before `schedule`.
    fn release(&mut self, now: Time, e: &EntityInfo);

    /// `e` finished its work on `cpu` at `now`: the ledger calls it when the thread's work and
    /// every checkpoint are done while `cpu` is linked to it (on a real substrate a thread that
    /// finished just as its CPU was taken completes when it next runs). `cpu` is already
    /// vacated; `e`'s id may be reused after this call.
    fn complete(&mut self, now: Time, e: EntityId, cpu: u32);

    /// `e` was aborted at `now` (deadline with `on_miss: abort`, or the policy's own request)
    /// and is gone; if it was running, the substrate has vacated its CPU. Called by the ledger
    /// for every thread of the job the policy still has — never for a blocked one — after
    /// `released` for what it held.
    fn aborted(&mut self, now: Time, e: EntityId);

    /// The threads of a region of a parallel job became ready at `now`. `cpu` is where the
    /// job was running when the region forked (where its previous region's last thread
    /// completed), or `None` for a first region, forked at release. Called before `schedule`.
    fn forked(&mut self, now: Time, _cpu: Option<u32>, threads: &[EntityInfo]) {
        for t in threads {
            self.release(now, t);
        }
    }

    /// The entity `e` running on `cpu` requested a resource that another entity holds and is
    /// blocked; the substrate has already vacated `cpu`. Default: treated like a completion.
    fn blocked(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.complete(now, e, cpu);
    }

    /// The blocked entity `e` was given the resource it waited for and is ready again.
    /// Default: released again (same identity, so the same priority).
    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        self.release(now, e);
    }

    /// The running entity `e` requested resource `r`, which `holder` holds (`None`: `r` was
    /// freed and awaits this policy's grant): called before the substrate blocks `e`, and
    /// `blocked` follows. Uncontended requests are not reported; [`RunView::holder`] shows who
    /// holds what. Default: nothing.
    fn requested(&mut self, _now: Time, _e: EntityId, _r: ResourceId, _holder: Option<EntityId>) {}

    /// `e` released resource `r` (at the end of its critical section, or because its job was
    /// aborted). Called before the resource is handed on (`unblocked`, or a pending grant).
    /// Default: nothing.
    fn released(&mut self, _now: Time, _e: EntityId, _r: ResourceId) {}

    /// Locking protocols (docs/locking.md): `e`'s [`Urgency`] under the policy's own order, or
    /// `None` (the default) for a policy that takes no protocol but `none` (the run is then
    /// refused). The ledger compares these to find whom a job blocks and a resource's ceiling.
    fn urgency(&self, _e: &EntityInfo) -> Option<Urgency> {
        None
    }

    /// The one rule by which inheritance and ceilings change what the policy sees: from now on
    /// the live entity `e` (ready or running, never blocked) is ordered as if its key's
    /// criterion and first tie-break were `to`'s, its own identity (task, job, thread) still
    /// breaking ties — or by its own key again (`None`). The ledger calls it whenever that
    /// effective urgency changes (pip: the most urgent job `e` blocks, transitively; pcp: the
    /// ceiling of a resource `e` holds), and again after `unblocked` while it lasts; `to` is
    /// always more urgent than `e`'s own. Called before `schedule`, which then reconsiders
    /// `e`'s place (a running `e` whose urgency fell may be preempted). Default: nothing (only
    /// for policies whose `urgency` is `None`).
    fn boost(&mut self, _now: Time, _e: &EntityInfo, _to: Option<Urgency>) {}

    /// MrsP's *helping* (Burns & Wellings, ECRTS 2013; docs/locking.md "Helping"): the ledger
    /// places the live entity `e` (ready or running, never blocked), the holder of an `mrsp`
    /// resource, on another CPU for the rest of its section. `Some((cpu, w))`: from now on `e`
    /// is scheduled on `cpu` in the place of `w` (a job spinning there for `e`'s resource, which
    /// runs on `cpu`): it is ordered just before `w` in the policy's order there (and is not
    /// re-keyed by `boost` while it stays). `None`: `e` goes back to its own CPU, keyed by its
    /// own urgency again (the ledger then calls `boost` if it still has one lent). Called
    /// before `schedule`, which then reconsiders both CPUs (a running `e` placed elsewhere
    /// leaves its CPU). Returns whether the policy places entities so: `false` (the default, a
    /// policy that binds no task to a CPU) and the ledger never helps.
    fn place(&mut self, _now: Time, _e: &EntityInfo, _to: Option<(u32, EntityId)>) -> bool {
        false
    }

    /// The CPU a partitioned policy binds task `task` to, or `None` (the default) for a
    /// global one. The multiprocessor locking protocols (`msrp`, `mrsp`, docs/locking.md) tell
    /// local from global resources by it, and refuse a policy that binds no task.
    fn cpu_of_task(&self, _task: TaskId) -> Option<u32> {
        None
    }

    /// Whether the policy chooses who gets a freed resource. `false` (the default): the
    /// substrate hands it at once to its longest waiter (FIFO) and reports `unblocked`. `true`:
    /// the resource is listed in [`Dispatch::pending_grants`] at the next `schedule`, where the
    /// policy names the grantee with [`Dispatch::grant`]; one it leaves ungranted goes FIFO
    /// after that `schedule` (with `unblocked`, and `schedule` again at the same instant).
    fn grants_resources(&self) -> bool {
        false
    }

    /// Whether the policy reads the tasks' time-utility functions (the UA policies). The CLI
    /// warns when a task set has TUFs and the policy ignores them (AUR is still measured).
    fn uses_tufs(&self) -> bool {
        false
    }

    /// Whether the policy breaks deadlocks (see [`Policy::deadlock`]). `false` (the default):
    /// a deadlock stops the run with an error naming the jobs and resources of the cycle.
    fn resolves_deadlocks(&self) -> bool {
        false
    }

    /// The ledger found a deadlock at `now` (only for policies whose `resolves_deadlocks` is
    /// true): each entity of `cycle` is blocked on a resource the next one holds, and the last
    /// on one the first holds; the first is the entity whose request (just reported by
    /// `blocked`) closed the cycle. Called before `schedule`, in which the policy must abort
    /// the job of at least one of them ([`Dispatch::abort`] accepts a blocked entity); if it
    /// does not, the run stops with an error. DASA aborts the one of least utility (Clark §4).
    fn deadlock(&mut self, _now: Time, _cycle: &[EntityId]) {}

    /// A one-shot timer the policy set with [`Dispatch::wake_at`] fired at `now` (at or after
    /// the time asked). Called before `schedule`. Default: nothing.
    fn timer(&mut self, _now: Time) {}

    /// Steps one `schedule` call may take on `m` CPUs with `n` threads ready, for the pre-run
    /// estimate of a run's time (`rtsched_sim::estimate`): the order of the policy's cost,
    /// its constant left out. Default `m + n`: a decision may look at every CPU and every
    /// ready thread (the ledger's priority-inversion watch does). A policy whose cost grows
    /// faster says so, so that a run which would take hours is refused before it starts.
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        m.saturating_add(n)
    }

    /// Period of the scheduler tick the policy wants, if any (e.g. quantum-based policies).
    fn tick_interval(&self) -> Option<Time> {
        None
    }

    /// The periodic tick on `cpu` (only if `tick_interval` is `Some`): every driver calls it
    /// on every CPU at each multiple of the interval, before `schedule`.
    fn tick(&mut self, _now: Time, _cpu: u32) {}

    /// Decide: after the events of instant `now`, rewrite the CPUs that should change.
    /// Called by the ledger once per instant at which the driver handled events (and again
    /// after aborts or an ungranted resource). The simulator also calls it at an instant whose
    /// only event was a stale completion plan of an entity that has left its CPU: then nothing
    /// changed, and `d.event_cpus()` is empty and `d.global_event()` false.
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>);

    /// The run ended at `end` (the last instant the driver handled, or the limit it ran to):
    /// called once, before `stats`. A policy that keeps a timer no event can observe without
    /// asking for a wake-up (the `linux` scheduler's replenishment of a thread with no job)
    /// settles those due by `end` here, so that its counters are what wake-ups would have
    /// made them. Default: nothing.
    fn finish(&mut self, _end: Time) {}

    /// The policy's own operation counters (e.g. pushes, pulls, find-CPU calls), read by the
    /// substrate after a run. Wall-clock figures appear only when the policy was asked to
    /// measure. Default: none. Three names are part of the results schema and must mean what
    /// it says (run-level `counters`, 0 for a policy that reports none): `steals` (threads
    /// taken from another core's queue), `steal_attempts` (free cores that looked for a
    /// victim, at most once per core per decision) and `failed_steals` (attempts that found
    /// none); `steal_attempts == steals + failed_steals`.
    fn stats(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
}
