//! The discrete-event engine.
//!
//! Events are kept in one binary heap keyed by (time, kind, insertion sequence), so events of
//! the same instant are always handled in the same order: completions first (a job finishing
//! exactly at its deadline meets it), then deadline aborts, then releases, then ticks. After
//! all events of an instant the policy decides once; the engine applies its decisions,
//! asserts the invariants and schedules the next completions.
//!
//! The engine owns the truth: remaining work, which CPU runs what, and the counters
//! (DESIGN.md "Semantics"): a *preemption* is an entity stopping before completion while still
//! ready; a *migration* is an entity resuming on another CPU than the one it last ran on; a
//! *context switch* is a CPU starting an entity other than the last one it ran (idle counts as
//! nothing); same-instant reshuffles that leave a CPU on the same entity count nothing.
//!
//! Jobs of one task run one after another, as in the sporadic task model, in a real run (one
//! thread per task) and in SimSo: a job released while an earlier job of its task is still
//! live is *held* — its release time and deadline are fixed, but the policy only sees it
//! (`Policy::release`) when the predecessor completes or is aborted. A held job can still be
//! aborted at its deadline; the policy is not told, as it never saw it.
//!
//! A job is a sequence of regions of threads (PAWS §3); each thread is an entity. A region's
//! threads fork together and join when the last completes, which forks the next region on
//! that CPU. Threads may request and release resources at checkpoints of their work
//! (ChronOS §III); a request for a held resource blocks the thread in the resource's FIFO
//! queue until the holder releases it (docs/semantics.md "Parallel jobs and critical
//! sections"). A sequential task without sections is one region of one thread and costs
//! nothing extra.
//!
//! Hot path: job and entity slots and records are preallocated and reused; stale progress
//! events (of preempted entities) are skipped by a per-CPU version number instead of being
//! removed.

use crate::exec::TaskStreams;
use rtsched_model::results::{Interval, JobRecord, RunResult};
use rtsched_model::program::scale;
use rtsched_model::{Action, OnMiss, Program, TaskSet, Time};
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

// Event kinds, in the order they are handled within one instant. EV_PROGRESS: the entity on
// a CPU completes or reaches a checkpoint (a resource request or release).
const EV_PROGRESS: u8 = 0;
const EV_ABORT: u8 = 1;
const EV_RELEASE: u8 = 2;
const EV_TICK: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: Time,
    kind: u8,
    seq: u64,
    a: u32,
    b: u32,
}

/// A live entity (one thread of a job) in its slot.
#[derive(Clone, Copy, Debug)]
struct Ent {
    info: EntityInfo,
    generation: u32,
    live: bool,
    /// Its job's slot.
    job: u32,
    /// This thread's actual demand and the part of it not yet done.
    demand: Time,
    left: Time,
    /// Overhead (context switch, migration) to pay before its own work resumes.
    owed: Time,
    /// Next checkpoint of its thread program, and how many it has (0 for most threads).
    cp: u32,
    ncp: u32,
    /// The resource it waits for (NONE if not blocked), and since when.
    blocked_on: u32,
    blocked_since: Time,
    cpu: u32,
    last_cpu: u32,
}

/// A released job in its slot.
#[derive(Clone, Debug)]
struct Job {
    task: u32,
    job: u64,
    release: Time,
    deadline: Time,
    generation: u32,
    live: bool,
    /// Released but waiting for the previous job of its task (not yet given to the policy).
    held: bool,
    /// Index of its record, or NONE if released outside the counted window.
    rec: u32,
    /// Current region, and how many of its threads have not completed.
    region: u32,
    pending: u32,
    /// Every thread's demand (region then thread order) and where the current region's start.
    demands: Vec<Time>,
    first: u32,
    /// Live entities of the current region.
    ents: Vec<EntityId>,
}

/// A mutex: its holder and its FIFO queue of blocked entities.
#[derive(Clone, Debug, Default)]
struct Resource {
    holder: u32,
    queue: std::collections::VecDeque<EntityId>,
}

#[derive(Clone, Copy, Debug)]
struct Cpu {
    running: Option<EntityId>,
    /// Since when it runs that entity (for intervals) and since when its work is charged.
    since: Time,
    mark: Time,
    /// Bumped whenever the running entity stops, invalidating its completion event.
    version: u32,
    /// (slot, generation) of the last entity this CPU ran, for context-switch counting.
    last: u64,
}

/// What an observer sees after each decision (for property tests and debugging).
pub struct View<'a> {
    pub now: Time,
    /// Per CPU, the entity it runs.
    pub running: Vec<Option<EntityId>>,
    ents: &'a [Ent],
    resources: &'a [Resource],
}

impl View<'_> {
    /// Every ready entity (released, given to the policy, unfinished, not aborted, not blocked
    /// on a resource) and the CPU running it. Jobs held behind an unfinished predecessor of
    /// their task have no entities yet.
    pub fn live(&self) -> impl Iterator<Item = (EntityInfo, Option<u32>)> + '_ {
        self.ents.iter().filter(|e| e.live && e.blocked_on == NONE).map(|e| (e.info, (e.cpu != NONE).then_some(e.cpu)))
    }
}

impl View<'_> {
    /// Per resource, the entity holding it (if any) and whether that entity is live.
    pub fn holders(&self) -> impl Iterator<Item = Option<(EntityInfo, bool)>> + '_ {
        self.resources.iter().map(|r| (r.holder != NONE).then(|| (self.ents[r.holder as usize].info, self.ents[r.holder as usize].live)))
    }
    /// Entities blocked on a resource: (entity, resource, whether it is in that resource's
    /// queue, whether a CPU runs it). A correct engine answers (_, _, true, false).
    pub fn blocked(&self) -> impl Iterator<Item = (EntityInfo, u32, bool, bool)> + '_ {
        self.ents.iter().filter(|e| e.live && e.blocked_on != NONE).map(|e| {
            let queued = self.resources[e.blocked_on as usize].queue.contains(&e.info.id);
            (e.info, e.blocked_on, queued, e.cpu != NONE)
        })
    }
}

/// Hook called after every scheduling instant. The default does nothing and costs nothing.
pub trait Observer {
    const ACTIVE: bool = true;
    fn after_instant(&mut self, _view: &View<'_>) {}
}

pub struct NoObserver;
impl Observer for NoObserver {
    const ACTIVE: bool = false;
}

/// How long after the counted window the run may go on so that the last counted jobs finish.
fn drain_limit(ts: &TaskSet) -> Time {
    ts.tasks.iter().map(|t| t.deadline.max(t.max_interarrival.unwrap_or(t.period))).max().unwrap_or(0) * 2
}

pub struct Engine<'p, O: Observer> {
    policy: &'p mut dyn Policy,
    observer: O,
    ts: &'p TaskSet,
    record_intervals: bool,
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    /// Per task: its regions, threads and checkpoints.
    programs: Vec<Program>,
    ents: Vec<Ent>,
    free: Vec<u32>,
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    resources: Vec<Resource>,
    cpus: Vec<Cpu>,
    dispatch: Dispatch,
    streams: Vec<TaskStreams>,
    next_job: Vec<u64>,
    /// Per task: whether a job of it is with the policy, and its held jobs in release order.
    task_busy: Vec<bool>,
    held: Vec<std::collections::VecDeque<u32>>,
    result: RunResult,
    /// Counted jobs neither finished nor aborted.
    undecided: u64,
    // scratch, reused every instant
    dirty: Vec<u32>,
    stopped: Vec<u32>,
    aborts: Vec<EntityId>,
    forked: Vec<EntityInfo>,
    doomed: Vec<EntityId>,
}

impl<'p, O: Observer> Engine<'p, O> {
    pub fn new(ts: &'p TaskSet, policy: &'p mut dyn Policy, observer: O, record_intervals: bool) -> Self {
        let m = ts.platform.cpus as usize;
        let n = ts.tasks.len();
        let expected_jobs: u64 = ts
            .tasks
            .iter()
            .map(|t| ts.run.duration.saturating_sub(t.offset).div_ceil(t.period))
            .sum();
        let mut result = RunResult::new("sim", &policy.name(), ts);
        result.jobs.reserve(expected_jobs.min(1 << 26) as usize);
        let programs: Vec<Program> = ts.tasks.iter().map(|t| t.program()).collect();
        let width: usize = programs.iter().map(Program::width).sum();
        Engine {
            policy,
            observer,
            ts,
            record_intervals,
            events: BinaryHeap::with_capacity(2 * n + 2 * m + 16),
            seq: 0,
            programs,
            ents: Vec::with_capacity(2 * width + m),
            free: Vec::with_capacity(2 * width + m),
            jobs: Vec::with_capacity(2 * n),
            free_jobs: Vec::with_capacity(2 * n),
            resources: vec![Resource { holder: NONE, queue: Default::default() }; ts.resources.len()],
            cpus: vec![Cpu { running: None, since: 0, mark: 0, version: 0, last: u64::MAX }; m],
            dispatch: Dispatch::new(m as u32),
            streams: (0..n as u32).map(|i| TaskStreams::new(ts.run.seed, i)).collect(),
            next_job: vec![0; n],
            task_busy: vec![false; n],
            held: (0..n).map(|_| std::collections::VecDeque::new()).collect(),
            result,
            undecided: 0,
            dirty: Vec::with_capacity(m),
            stopped: Vec::with_capacity(m),
            aborts: Vec::new(),
            forked: Vec::with_capacity(16),
            doomed: Vec::with_capacity(16),
        }
    }

    #[inline]
    fn push(&mut self, time: Time, kind: u8, a: u32, b: u32) {
        self.seq += 1;
        self.events.push(Reverse(Event { time, kind, seq: self.seq, a, b }));
    }

    /// Run to the end and return the results.
    pub fn run(mut self) -> RunResult {
        let duration = self.ts.run.duration;
        let limit = duration.saturating_add(drain_limit(self.ts));
        for (i, t) in self.ts.tasks.iter().enumerate() {
            if t.offset < duration {
                self.push(t.offset, EV_RELEASE, i as u32, 0);
            }
        }
        if let Some(q) = self.policy.tick_interval() {
            for c in 0..self.cpus.len() {
                self.push(q, EV_TICK, c as u32, 0);
            }
        }
        let mut end = 0;
        while let Some(&Reverse(first)) = self.events.peek() {
            let now = first.time;
            if now > limit {
                break;
            }
            // Every counted job is decided and no more counted releases are pending.
            if self.undecided == 0 && now >= duration {
                break;
            }
            end = now;
            while let Some(&Reverse(ev)) = self.events.peek() {
                if ev.time != now {
                    break;
                }
                self.events.pop();
                self.result.counters.events += 1;
                match ev.kind {
                    EV_PROGRESS => self.on_progress(now, ev.a, ev.b),
                    EV_ABORT => self.on_deadline_abort(now, ev.a, ev.b),
                    EV_RELEASE => self.on_release(now, ev.a, duration),
                    _ => self.on_tick(now, ev.a),
                }
            }
            loop {
                self.result.counters.scheduler_invocations += 1;
                self.policy.schedule(now, &mut self.dispatch);
                self.apply(now);
                self.dispatch.take_aborts(&mut self.aborts);
                if self.aborts.is_empty() {
                    break;
                }
                let aborts = std::mem::take(&mut self.aborts);
                for &e in &aborts {
                    // Several threads of one job may be named; the first aborts the job.
                    if self.ents[e as usize].live {
                        let j = self.ents[e as usize].job;
                        self.abort_job(now, j);
                    }
                }
                self.aborts = aborts;
            }
            if O::ACTIVE {
                let view = View {
                    now,
                    running: self.cpus.iter().map(|c| c.running).collect(),
                    ents: &self.ents,
                    resources: &self.resources,
                };
                self.observer.after_instant(&view);
            }
        }
        // Stopped by the drain limit with counted jobs still unfinished: time ran to the limit.
        let end = if self.undecided > 0 { limit } else { end };
        self.finish(end)
    }

    fn finish(mut self, end: Time) -> RunResult {
        for c in 0..self.cpus.len() {
            if let Some(e) = self.cpus[c].running {
                self.close_interval(c as u32, e, end);
            }
        }
        for e in self.ents.iter().filter(|e| e.live && e.blocked_on != NONE) {
            let rec = self.jobs[e.job as usize].rec;
            if rec != NONE {
                self.result.jobs[rec as usize].blocked += end.saturating_sub(e.blocked_since);
            }
        }
        for j in self.jobs.iter().filter(|j| j.live && j.rec != NONE) {
            let r = &mut self.result.jobs[j.rec as usize];
            // Unfinished at the end: missed once its deadline has passed.
            r.missed = r.deadline <= end;
        }
        self.result.end = end;
        self.result
    }

    fn on_release(&mut self, now: Time, task: u32, duration: Time) {
        let t = &self.ts.tasks[task as usize];
        let job = self.next_job[task as usize];
        self.next_job[task as usize] += 1;
        let slot = match self.free_jobs.pop() {
            Some(s) => s,
            None => {
                self.jobs.push(Job {
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
                    demands: Vec::new(),
                    first: 0,
                    ents: Vec::new(),
                });
                (self.jobs.len() - 1) as u32
            }
        };
        let mut demands = std::mem::take(&mut self.jobs[slot as usize].demands);
        demands.clear();
        let demand = self.streams[task as usize].job_demands(&self.ts.run.execution, &self.programs[task as usize], &mut demands);
        let next = now + self.streams[task as usize].interarrival(t);
        let deadline = now + t.deadline;
        let rec = if now < duration {
            self.result.jobs.push(JobRecord { task, job, release: now, deadline, demand, ..Default::default() });
            self.undecided += 1;
            (self.result.jobs.len() - 1) as u32
        } else {
            NONE
        };
        let held = self.task_busy[task as usize];
        let j = &mut self.jobs[slot as usize];
        j.generation = j.generation.wrapping_add(1);
        let generation = j.generation;
        j.task = task;
        j.job = job;
        j.release = now;
        j.deadline = deadline;
        j.live = true;
        j.held = held;
        j.rec = rec;
        j.region = 0;
        j.pending = 0;
        j.demands = demands;
        j.first = 0;
        j.ents.clear();
        self.result.counters.releases += 1;
        if self.ts.run.on_miss == OnMiss::Abort {
            self.push(deadline, EV_ABORT, slot, generation);
        }
        // Keep releasing past the counted window (as interference) while counted jobs run.
        if next < duration || self.undecided > 0 {
            self.push(next, EV_RELEASE, task, 0);
        }
        if held {
            self.held[task as usize].push_back(slot);
        } else {
            self.task_busy[task as usize] = true;
            self.fork(now, slot, None);
        }
    }

    /// Create the entities of job `j`'s current region and give them to the policy.
    fn fork(&mut self, now: Time, j: u32, cpu: Option<u32>) {
        let job = &self.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        let n = self.programs[task as usize].regions[region as usize].len();
        self.jobs[j as usize].pending = n as u32;
        if n == 1 {
            // The common case (every sequential job): no fork event, no scratch list.
            let info = self.new_thread(j, 0);
            self.policy.release(now, &info);
            return;
        }
        self.forked.clear();
        for t in 0..n {
            let info = self.new_thread(j, t);
            self.forked.push(info);
        }
        let forked = std::mem::take(&mut self.forked);
        self.policy.forked(now, cpu, &forked);
        self.forked = forked;
    }

    /// A fresh entity for thread `t` of job `j`'s current region.
    #[inline]
    fn new_thread(&mut self, j: u32, t: usize) -> EntityInfo {
        let job = &self.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        let demand = job.demands[job.first as usize + t];
        let (jobno, release, deadline) = (job.job, job.release, job.deadline);
        let ncp = self.programs[task as usize].regions[region as usize][t].checkpoints.len() as u32;
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.ents.push(Ent {
                    info: EntityInfo { id: 0, task: 0, job: 0, region: 0, thread: 0, release: 0, deadline: 0 },
                    generation: 0,
                    live: false,
                    job: NONE,
                    demand: 0,
                    left: 0,
                    owed: 0,
                    cp: 0,
                    ncp: 0,
                    blocked_on: NONE,
                    blocked_since: 0,
                    cpu: NONE,
                    last_cpu: NONE,
                });
                (self.ents.len() - 1) as u32
            }
        };
        let info = EntityInfo { id: slot, task, job: jobno, region, thread: t as u32, release, deadline };
        let e = &mut self.ents[slot as usize];
        let generation = e.generation.wrapping_add(1);
        *e = Ent {
            info,
            generation,
            live: true,
            job: j,
            demand,
            left: demand,
            owed: 0,
            cp: 0,
            ncp,
            blocked_on: NONE,
            blocked_since: 0,
            cpu: NONE,
            last_cpu: NONE,
        };
        self.jobs[j as usize].ents.push(slot);
        info
    }

    /// The job of `task` the policy knew ended at `now`: give it the next held job, if any.
    fn next_of_task(&mut self, now: Time, task: u32) {
        match self.held[task as usize].pop_front() {
            Some(j) => {
                self.jobs[j as usize].held = false;
                self.fork(now, j, None);
            }
            None => self.task_busy[task as usize] = false,
        }
    }

    /// Work left before `e`'s next checkpoint (or completion), overheads included.
    #[inline]
    fn until_next(&self, e: EntityId) -> Time {
        let ent = &self.ents[e as usize];
        let target = if ent.cp < ent.ncp {
            let i = ent.info;
            let t = &self.programs[i.task as usize].regions[i.region as usize][i.thread as usize];
            ent.demand - scale(t.checkpoints[ent.cp as usize].at, t.wcet, ent.demand)
        } else {
            0
        };
        ent.owed + ent.left.saturating_sub(target)
    }

    /// The entity on `cpu` completed or reached a checkpoint.
    fn on_progress(&mut self, now: Time, cpu: u32, version: u32) {
        let c = &self.cpus[cpu as usize];
        if c.version != version {
            return; // the entity was stopped since this event was planned
        }
        let e = c.running.expect("a valid progress event has a running entity");
        self.charge(now, cpu, e);
        // Pass every checkpoint reached at this point of the thread's work.
        while self.ents[e as usize].cp < self.ents[e as usize].ncp && self.until_next(e) == 0 {
            let ent = &self.ents[e as usize];
            let i = ent.info;
            let action = self.programs[i.task as usize].regions[i.region as usize][i.thread as usize].checkpoints[ent.cp as usize].action;
            match action {
                Action::Release(r) => {
                    self.ents[e as usize].cp += 1;
                    self.release_resource(now, r, e);
                }
                Action::Acquire(r) => {
                    if self.resources[r as usize].holder == NONE {
                        self.resources[r as usize].holder = e;
                        self.ents[e as usize].cp += 1;
                    } else {
                        self.block(now, cpu, e, r);
                        return;
                    }
                }
            }
        }
        let ent = &self.ents[e as usize];
        if ent.left == 0 && ent.owed == 0 && ent.cp == ent.ncp {
            self.complete_thread(now, cpu, e);
        } else {
            let at = now + self.until_next(e);
            self.push(at, EV_PROGRESS, cpu, self.cpus[cpu as usize].version);
        }
    }

    fn complete_thread(&mut self, now: Time, cpu: u32, e: EntityId) {
        self.stop(now, cpu, e);
        let ent = &mut self.ents[e as usize];
        ent.live = false;
        let j = ent.job;
        self.free.push(e);
        self.dispatch.vacate(cpu);
        self.policy.complete(now, e, cpu);
        let job = &mut self.jobs[j as usize];
        if let Some(p) = job.ents.iter().position(|&x| x == e) {
            job.ents.swap_remove(p);
        }
        job.pending -= 1;
        if job.pending > 0 {
            return;
        }
        let task = job.task as usize;
        if (job.region as usize) + 1 < self.programs[task].regions.len() {
            // Join: the next region forks where this one ended.
            job.first += self.programs[task].regions[job.region as usize].len() as u32;
            job.region += 1;
            self.fork(now, j, Some(cpu));
            return;
        }
        job.live = false;
        if job.rec != NONE {
            let r = &mut self.result.jobs[job.rec as usize];
            r.finish = Some(now);
            r.missed = now > r.deadline;
            self.undecided -= 1;
        }
        self.free_jobs.push(j);
        self.next_of_task(now, task as u32);
    }

    /// `e`, running on `cpu`, requested `r`, which is held: it leaves its CPU and waits.
    fn block(&mut self, now: Time, cpu: u32, e: EntityId, r: u32) {
        self.stop(now, cpu, e);
        let ent = &mut self.ents[e as usize];
        ent.blocked_on = r;
        ent.blocked_since = now;
        self.resources[r as usize].queue.push_back(e);
        self.dispatch.vacate(cpu);
        self.policy.blocked(now, e, cpu);
    }

    /// `e` releases `r`; the first waiter takes it and is ready again.
    fn release_resource(&mut self, now: Time, r: u32, e: EntityId) {
        let res = &mut self.resources[r as usize];
        debug_assert_eq!(res.holder, e);
        res.holder = NONE;
        if let Some(w) = res.queue.pop_front() {
            res.holder = w;
            let went = &mut self.ents[w as usize];
            went.blocked_on = NONE;
            went.cp += 1;
            let (info, waited, rec) = (went.info, now - went.blocked_since, self.jobs[went.job as usize].rec);
            if rec != NONE {
                self.result.jobs[rec as usize].blocked += waited;
            }
            self.policy.unblocked(now, &info);
        }
    }

    fn on_deadline_abort(&mut self, now: Time, slot: u32, generation: u32) {
        let j = &self.jobs[slot as usize];
        if j.live && j.generation == generation {
            self.abort_job(now, slot);
        }
    }

    fn on_tick(&mut self, now: Time, cpu: u32) {
        self.policy.tick(now, cpu);
        if let Some(q) = self.policy.tick_interval() {
            self.push(now + q, EV_TICK, cpu, 0);
        }
    }

    /// Remove a live job and all its threads without completing it.
    fn abort_job(&mut self, now: Time, j: u32) {
        let job = &self.jobs[j as usize];
        assert!(job.live, "aborting job slot {j}, which is not live");
        let (held, task, rec) = (job.held, job.task, job.rec);
        if held {
            // Never given to the policy: drop it from its task's queue, tell nobody.
            self.held[task as usize].retain(|&s| s != j);
        } else {
            let mut doomed = std::mem::take(&mut self.doomed);
            doomed.clear();
            doomed.extend_from_slice(&self.jobs[j as usize].ents);
            // Waiting threads leave their queues first, so no resource is handed to them.
            for &e in &doomed {
                let ent = &mut self.ents[e as usize];
                if ent.blocked_on != NONE {
                    let r = ent.blocked_on as usize;
                    ent.blocked_on = NONE;
                    let waited = now - ent.blocked_since;
                    self.resources[r].queue.retain(|&x| x != e);
                    if rec != NONE {
                        self.result.jobs[rec as usize].blocked += waited;
                    }
                    // Not the policy's since it blocked: not reported.
                    ent.live = false;
                }
            }
            for &e in &doomed {
                let ent = self.ents[e as usize];
                if ent.cpu != NONE {
                    self.stop(now, ent.cpu, e);
                    self.dispatch.vacate(ent.cpu);
                }
                for r in 0..self.resources.len() {
                    if self.resources[r].holder == e {
                        self.release_resource(now, r as u32, e);
                    }
                }
                if ent.live {
                    self.ents[e as usize].live = false;
                    self.policy.aborted(now, e);
                }
                self.free.push(e);
            }
            self.jobs[j as usize].ents.clear();
            self.doomed = doomed;
        }
        self.jobs[j as usize].live = false;
        if rec != NONE {
            let r = &mut self.result.jobs[rec as usize];
            r.aborted = true;
            r.missed = true;
            self.undecided -= 1;
        }
        self.free_jobs.push(j);
        if !held {
            self.next_of_task(now, task);
        }
    }

    fn close_interval(&mut self, cpu: u32, e: EntityId, now: Time) {
        let since = self.cpus[cpu as usize].since;
        if self.record_intervals && now > since {
            let i = self.ents[e as usize].info;
            self.result.intervals.push(Interval { cpu, task: i.task, job: i.job, thread: i.thread, start: since, end: now });
        }
    }

    /// Charge the work `e` did on `cpu` since the last charge: overheads first, then its own.
    #[inline]
    fn charge(&mut self, now: Time, cpu: u32, e: EntityId) {
        let c = &mut self.cpus[cpu as usize];
        let ran = now - c.mark;
        c.mark = now;
        let ent = &mut self.ents[e as usize];
        let paid = ran.min(ent.owed);
        ent.owed -= paid;
        ent.left -= ran - paid;
    }

    /// Take the running entity `e` off `cpu` at `now`, charging the work it did.
    fn stop(&mut self, now: Time, cpu: u32, e: EntityId) {
        self.close_interval(cpu, e, now);
        self.charge(now, cpu, e);
        let c = &mut self.cpus[cpu as usize];
        c.running = None;
        c.version = c.version.wrapping_add(1);
        let ent = &mut self.ents[e as usize];
        ent.cpu = NONE;
        ent.last_cpu = cpu;
    }

    /// Apply the policy's decisions for the CPUs it touched.
    fn apply(&mut self, now: Time) {
        self.dispatch.take_dirty(&mut self.dirty);
        self.stopped.clear();
        for i in 0..self.dirty.len() {
            let cpu = self.dirty[i];
            let old = self.cpus[cpu as usize].running;
            if old != self.dispatch.current(cpu) {
                if let Some(o) = old {
                    self.stop(now, cpu, o);
                    self.stopped.push(o);
                }
            }
        }
        let oh = &self.ts.run.overheads;
        for i in 0..self.dirty.len() {
            let cpu = self.dirty[i];
            let new = self.dispatch.current(cpu);
            if new == self.cpus[cpu as usize].running {
                continue;
            }
            let Some(e) = new else { continue };
            let ent = &mut self.ents[e as usize];
            assert!(
                ent.live && ent.blocked_on == NONE,
                "policy '{}' dispatched entity {e}, which is not ready",
                self.result.scheduler
            );
            assert!(
                ent.cpu == NONE,
                "policy '{}' put entity {e} on CPU {cpu} while it runs on CPU {}",
                self.result.scheduler,
                ent.cpu
            );
            let id = ((ent.generation as u64) << 32) | e as u64;
            let c = &mut self.cpus[cpu as usize];
            let switched = c.last != id;
            let migrated = ent.last_cpu != NONE && ent.last_cpu != cpu;
            c.running = Some(e);
            c.since = now;
            c.mark = now;
            c.last = id;
            ent.cpu = cpu;
            ent.owed += oh.context_switch * switched as u64 + oh.migration * migrated as u64;
            let rec = self.jobs[ent.job as usize].rec;
            if rec != NONE {
                let r = &mut self.result.jobs[rec as usize];
                r.start.get_or_insert(now);
                r.cpus.insert(cpu);
                r.context_switches += switched as u32;
                r.migrations += migrated as u32;
            }
            let version = c.version;
            let finish = now + self.until_next(e);
            self.push(finish, EV_PROGRESS, cpu, version);
        }
        for i in 0..self.stopped.len() {
            let o = self.stopped[i];
            let ent = &self.ents[o as usize];
            if ent.cpu == NONE && ent.live {
                let rec = self.jobs[ent.job as usize].rec;
                if rec != NONE {
                    self.result.jobs[rec as usize].preemptions += 1;
                }
            }
        }
    }
}

/// Simulate `ts` under an already-built policy.
pub fn simulate_policy(ts: &TaskSet, policy: &mut dyn Policy, record_intervals: bool) -> RunResult {
    Engine::new(ts, policy, NoObserver, record_intervals).run()
}

/// Simulate `ts` under an already-built policy, calling `observer` after every instant.
pub fn simulate_observed<O: Observer>(ts: &TaskSet, policy: &mut dyn Policy, observer: O, record_intervals: bool) -> RunResult {
    Engine::new(ts, policy, observer, record_intervals).run()
}

/// Simulate `ts` under the scheduler `spec` (e.g. `"gedf"`, `"gfp:rm"`).
pub fn simulate(ts: &TaskSet, spec: &str, record_intervals: bool) -> Result<RunResult, String> {
    let mut p = rtsched_policies::build(spec, ts)?;
    Ok(simulate_policy(ts, p.as_mut(), record_intervals))
}

/// Simulate `ts` under `spec` and also return the policy's own operation counters
/// ([`Policy::stats`]: pushes, pulls, find-CPU calls, and ns per operation with `measure`).
/// The counters stay out of the results document, which remains free of wall-clock figures.
pub fn simulate_with_stats(ts: &TaskSet, spec: &str, record_intervals: bool) -> Result<(RunResult, Vec<(String, f64)>), String> {
    let mut p = rtsched_policies::build(spec, ts)?;
    let r = simulate_policy(ts, p.as_mut(), record_intervals);
    Ok((r, p.stats()))
}
