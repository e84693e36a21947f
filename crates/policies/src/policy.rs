//! The policy interface (DESIGN.md "The policy interface").
//!
//! Modelled on the kernel's `struct sched_class` and LITMUS^RT's `sched_plugin`: a policy
//! receives *events* from a substrate (the simulator, or the real-threads testbed) and answers
//! with *decisions* in a [`Dispatch`]. The substrate owns the truth — time, remaining work, which
//! CPU runs what — applies the decisions, charges overheads and asserts the invariants (no
//! entity on two CPUs, no CPU running two entities, only live entities dispatched).
//!
//! Call protocol, at every instant `now` at which something happens:
//! 1. the substrate delivers every event of that instant (`complete`, `aborted`, `release`,
//!    `tick`), in its fixed event order;
//! 2. it calls [`Policy::schedule`] once; the policy rewrites the CPUs it wants changed;
//! 3. the substrate applies the changes. If the policy asked for aborts, it delivers
//!    `aborted` for each and calls `schedule` again at the same instant.
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

use rtsched_model::{TaskId, Time};

/// A schedulable entity: a job, or one thread of a parallel job. The id is a slot index the
/// substrate reuses after the entity ends, so policies can keep per-entity state in plain
/// vectors indexed by id.
pub type EntityId = u32;

/// What a policy is told about a newly ready entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityInfo {
    pub id: EntityId,
    pub task: TaskId,
    /// Job index within its task (0, 1, ...).
    pub job: u64,
    /// Region of the job (0 for sequential jobs; PAWS §3).
    pub region: u32,
    /// Thread index within its region (0 for sequential jobs).
    pub thread: u32,
    pub release: Time,
    /// Absolute deadline.
    pub deadline: Time,
}

/// The per-CPU decisions. Before `schedule` it holds what each CPU runs now (a CPU whose
/// entity completed or was aborted shows `None`); the policy changes what it wants.
#[derive(Clone, Debug)]
pub struct Dispatch {
    assigned: Vec<Option<EntityId>>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
    aborts: Vec<EntityId>,
}

impl Dispatch {
    pub fn new(cpus: u32) -> Self {
        Dispatch {
            assigned: vec![None; cpus as usize],
            dirty: Vec::with_capacity(cpus as usize),
            is_dirty: vec![false; cpus as usize],
            aborts: Vec::new(),
        }
    }
    #[inline]
    pub fn cpus(&self) -> u32 {
        self.assigned.len() as u32
    }
    /// What `cpu` runs (or will run, if changed during this `schedule`).
    #[inline]
    pub fn current(&self, cpu: u32) -> Option<EntityId> {
        self.assigned[cpu as usize]
    }
    /// Decide that `cpu` runs `e` (or idles).
    #[inline]
    pub fn assign(&mut self, cpu: u32, e: Option<EntityId>) {
        let c = cpu as usize;
        self.assigned[c] = e;
        if !self.is_dirty[c] {
            self.is_dirty[c] = true;
            self.dirty.push(cpu);
        }
    }
    /// Decide to abort `e` (best-effort policies).
    pub fn abort(&mut self, e: EntityId) {
        self.aborts.push(e);
    }

    // --- substrate side ---

    /// Record that `cpu` stopped running its entity (completion or abort), without marking
    /// it as a policy decision.
    #[inline]
    pub fn vacate(&mut self, cpu: u32) {
        self.assigned[cpu as usize] = None;
    }
    /// CPUs the policy touched in the last `schedule`, in the order it touched them.
    pub fn take_dirty(&mut self, out: &mut Vec<u32>) {
        out.clear();
        for &c in &self.dirty {
            self.is_dirty[c as usize] = false;
        }
        out.extend_from_slice(&self.dirty);
        self.dirty.clear();
    }
    pub fn take_aborts(&mut self, out: &mut Vec<EntityId>) {
        out.clear();
        out.append(&mut self.aborts);
    }
}

/// One scheduling policy. Every method is called by the substrate, never by another policy,
/// and `now` never decreases between calls.
pub trait Policy: Send {
    /// The policy's display name, with options (e.g. `gfp:rm`).
    fn name(&self) -> String;

    /// A job (or parallel thread) became ready at `now`. Called before `schedule`.
    fn release(&mut self, now: Time, e: &EntityInfo);

    /// `e` finished its work on `cpu` at `now`; the substrate has already vacated `cpu`.
    fn complete(&mut self, now: Time, e: EntityId, cpu: u32);

    /// `e` was aborted at `now` (deadline with `on_miss: abort`, or the policy's own request)
    /// and is gone; if it was running, the substrate has vacated its CPU.
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

    /// Period of the scheduler tick the policy wants, if any (e.g. quantum-based policies).
    fn tick_interval(&self) -> Option<Time> {
        None
    }

    /// The periodic tick on `cpu` (only if `tick_interval` is `Some`).
    fn tick(&mut self, _now: Time, _cpu: u32) {}

    /// Decide: after the events of instant `now`, rewrite the CPUs that should change.
    /// Called once per instant at which an event happened (and again after aborts).
    fn schedule(&mut self, now: Time, d: &mut Dispatch);

    /// The policy's own operation counters (e.g. pushes, pulls, find-CPU calls), read by the
    /// substrate after a run. Wall-clock figures appear only when the policy was asked to
    /// measure. Default: none.
    fn stats(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
}
