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
//! Hot path: entity slots and records are preallocated and reused; stale completion events
//! (of preempted entities) are skipped by a per-CPU version number instead of being removed.

use crate::exec::TaskStreams;
use rtsched_model::results::{Interval, JobRecord, RunResult};
use rtsched_model::{OnMiss, TaskSet, Time};
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

// Event kinds, in the order they are handled within one instant.
const EV_COMPLETE: u8 = 0;
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

/// A live entity (job or parallel thread) in its slot.
#[derive(Clone, Copy, Debug)]
struct Ent {
    info: EntityInfo,
    generation: u32,
    live: bool,
    /// Released but waiting for the previous job of its task (not yet given to the policy).
    held: bool,
    remaining: Time,
    /// Index of its record, or NONE if released outside the counted window.
    rec: u32,
    cpu: u32,
    last_cpu: u32,
}

#[derive(Clone, Copy, Debug)]
struct Cpu {
    running: Option<EntityId>,
    since: Time,
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
}

impl View<'_> {
    /// Every ready entity (released, given to the policy, unfinished, not aborted) and the CPU
    /// running it. Jobs held behind an unfinished predecessor of their task are not ready.
    pub fn live(&self) -> impl Iterator<Item = (EntityInfo, Option<u32>)> + '_ {
        self.ents.iter().filter(|e| e.live && !e.held).map(|e| (e.info, (e.cpu != NONE).then_some(e.cpu)))
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
    ents: Vec<Ent>,
    free: Vec<u32>,
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
        Engine {
            policy,
            observer,
            ts,
            record_intervals,
            events: BinaryHeap::with_capacity(2 * n + 2 * m + 16),
            seq: 0,
            ents: Vec::with_capacity(2 * n + m),
            free: Vec::with_capacity(2 * n + m),
            cpus: vec![Cpu { running: None, since: 0, version: 0, last: u64::MAX }; m],
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
                    EV_COMPLETE => self.on_complete(now, ev.a, ev.b),
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
                    self.abort(now, e);
                }
                self.aborts = aborts;
            }
            if O::ACTIVE {
                let view = View { now, running: self.cpus.iter().map(|c| c.running).collect(), ents: &self.ents };
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
        for e in self.ents.iter().filter(|e| e.live && e.rec != NONE) {
            let r = &mut self.result.jobs[e.rec as usize];
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
        let demand = self.streams[task as usize].demand(&self.ts.run.execution, t.wcet);
        let next = now + self.streams[task as usize].interarrival(t);
        let deadline = now + t.deadline;
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.ents.push(Ent {
                    info: EntityInfo { id: 0, task: 0, job: 0, region: 0, thread: 0, release: 0, deadline: 0 },
                    generation: 0,
                    live: false,
                    held: false,
                    remaining: 0,
                    rec: NONE,
                    cpu: NONE,
                    last_cpu: NONE,
                });
                (self.ents.len() - 1) as u32
            }
        };
        let rec = if now < duration {
            self.result.jobs.push(JobRecord { task, job, release: now, deadline, demand, ..Default::default() });
            self.undecided += 1;
            (self.result.jobs.len() - 1) as u32
        } else {
            NONE
        };
        let info = EntityInfo { id: slot, task, job, region: 0, thread: 0, release: now, deadline };
        let e = &mut self.ents[slot as usize];
        e.generation = e.generation.wrapping_add(1);
        let generation = e.generation;
        let held = self.task_busy[task as usize];
        *e = Ent { info, generation, live: true, held, remaining: demand, rec, cpu: NONE, last_cpu: NONE };
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
            self.policy.release(now, &info);
        }
    }

    /// The job of `task` the policy knew ended at `now`: give it the next held job, if any.
    fn next_of_task(&mut self, now: Time, task: u32) {
        match self.held[task as usize].pop_front() {
            Some(slot) => {
                let e = &mut self.ents[slot as usize];
                e.held = false;
                let info = e.info;
                self.policy.release(now, &info);
            }
            None => self.task_busy[task as usize] = false,
        }
    }

    fn on_complete(&mut self, now: Time, cpu: u32, version: u32) {
        let c = &self.cpus[cpu as usize];
        if c.version != version {
            return; // the entity was stopped since this completion was planned
        }
        let e = c.running.expect("a valid completion event has a running entity");
        self.stop(now, cpu, e);
        let ent = &mut self.ents[e as usize];
        debug_assert_eq!(ent.remaining, 0);
        ent.live = false;
        if ent.rec != NONE {
            let r = &mut self.result.jobs[ent.rec as usize];
            r.finish = Some(now);
            r.missed = now > r.deadline;
            self.undecided -= 1;
        }
        self.free.push(e);
        self.dispatch.vacate(cpu);
        self.policy.complete(now, e, cpu);
        let task = self.ents[e as usize].info.task;
        self.next_of_task(now, task);
    }

    fn on_deadline_abort(&mut self, now: Time, slot: u32, generation: u32) {
        let e = &self.ents[slot as usize];
        if e.live && e.generation == generation {
            self.abort(now, slot);
        }
    }

    fn on_tick(&mut self, now: Time, cpu: u32) {
        self.policy.tick(now, cpu);
        if let Some(q) = self.policy.tick_interval() {
            self.push(now + q, EV_TICK, cpu, 0);
        }
    }

    /// Remove a live entity without completing it.
    fn abort(&mut self, now: Time, e: EntityId) {
        let ent = self.ents[e as usize];
        assert!(ent.live, "policy aborted entity {e}, which is not live");
        let (held, task) = (ent.held, ent.info.task);
        if held {
            // Never given to the policy: drop it from its task's queue, tell nobody.
            self.held[ent.info.task as usize].retain(|&s| s != e);
        }
        if ent.cpu != NONE {
            self.stop(now, ent.cpu, e);
            self.dispatch.vacate(ent.cpu);
        }
        let ent = &mut self.ents[e as usize];
        ent.live = false;
        if ent.rec != NONE {
            let r = &mut self.result.jobs[ent.rec as usize];
            r.aborted = true;
            r.missed = true;
            self.undecided -= 1;
        }
        self.free.push(e);
        if !held {
            self.policy.aborted(now, e);
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

    /// Take the running entity `e` off `cpu` at `now`, charging the work it did.
    fn stop(&mut self, now: Time, cpu: u32, e: EntityId) {
        self.close_interval(cpu, e, now);
        let c = &mut self.cpus[cpu as usize];
        let ran = now - c.since;
        c.running = None;
        c.version = c.version.wrapping_add(1);
        let ent = &mut self.ents[e as usize];
        ent.remaining -= ran;
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
            assert!(ent.live, "policy '{}' dispatched entity {e}, which is not live", self.result.scheduler);
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
            c.last = id;
            ent.cpu = cpu;
            ent.remaining += oh.context_switch * switched as u64 + oh.migration * migrated as u64;
            if ent.rec != NONE {
                let r = &mut self.result.jobs[ent.rec as usize];
                r.start.get_or_insert(now);
                r.cpus.insert(cpu);
                r.context_switches += switched as u32;
                r.migrations += migrated as u32;
            }
            let (finish, version) = (now + ent.remaining, c.version);
            self.push(finish, EV_COMPLETE, cpu, version);
        }
        for i in 0..self.stopped.len() {
            let o = self.stopped[i];
            let ent = &self.ents[o as usize];
            if ent.cpu == NONE && ent.rec != NONE {
                self.result.jobs[ent.rec as usize].preemptions += 1;
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
