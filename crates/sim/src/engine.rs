//! The discrete-event engine: a driver of the job ledger (`rtsched_runtime::Ledger`).
//!
//! The engine keeps what only a simulation has — the event queue, simulated time, and the
//! cost model through which overheads are charged and work progresses — and leaves
//! everything a job is while it runs (slots, held jobs, fork/join, resources, aborts, the
//! counting and invariants of a decision, records) to the ledger, which the testbed drives
//! the same way.
//!
//! Events are kept in one binary heap keyed by (time, kind, insertion sequence), so events of
//! the same instant are always handled in the same order: progress first (a job finishing
//! exactly at its deadline meets it; checkpoints), then deadline aborts, then releases, then
//! ticks, then the policy's timers. After all events of an instant the ledger lets the policy
//! decide; the engine is told which entities left and joined CPUs ([`Substrate`]) and plans
//! their next progress events.
//!
//! Hot path: the ledger's slots and records are preallocated and reused; stale progress
//! events (of entities that left their CPU) are skipped by a per-CPU version number instead of
//! being removed.

use crate::cost::CostModel;
use crate::error::SimError;
use rtsched_model::results::{Interval, JobRecord, JobSink, OverheadTotals, RunResult};
use rtsched_model::{TaskSet, Time};
use rtsched_policies::{EntityId, EntityInfo, Policy};
use rtsched_runtime::{CpuState, Ent, Ledger, LedgerParts, Off, Run, Step, Substrate};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

// Event kinds, in the order they are handled within one instant. EV_PROGRESS: the entity on
// a CPU completes or reaches a checkpoint (a resource request or release).
const EV_PROGRESS: u8 = 0;
const EV_ABORT: u8 = 1;
const EV_RELEASE: u8 = 2;
const EV_TICK: u8 = 3;
const EV_TIMER: u8 = 4;
/// A timer tick of the overhead model (`run.overheads.tick` every `tick_period` on each CPU).
const EV_OH_TICK: u8 = 5;
/// The real-time bandwidth cap's accounting step on one CPU (`run.overheads.rt_runtime` of
/// `rt_period`), every `tick_period`, as the kernel accounts at its tick.
const EV_OH_RT: u8 = 6;
/// A self-suspending job's suspension ends (docs/chains.md): (job slot, generation).
const EV_RESUME: u8 = 7;

/// An event, ordered by (time, kind, insertion sequence) packed into one integer: one 128-bit
/// comparison instead of three field comparisons on the hottest path (the heap's sifts).
#[derive(Clone, Copy, Debug)]
struct Event {
    key: u128,
    a: u32,
    b: u32,
}

impl Event {
    const KIND_SHIFT: u32 = 61;
    #[inline]
    fn new(time: Time, kind: u8, seq: u64, a: u32, b: u32) -> Event {
        debug_assert!(seq < 1 << Self::KIND_SHIFT && kind < 8);
        Event {
            key: ((time as u128) << 64) | ((kind as u128) << Self::KIND_SHIFT) | seq as u128,
            a,
            b,
        }
    }
    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
    #[inline]
    fn kind(&self) -> u8 {
        ((self.key as u64) >> Self::KIND_SHIFT) as u8
    }
}

impl PartialEq for Event {
    #[inline]
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
    // The heap's sifts use these: plain integer comparisons, no `Ordering` in between.
    #[inline]
    fn lt(&self, o: &Self) -> bool {
        self.key < o.key
    }
    #[inline]
    fn le(&self, o: &Self) -> bool {
        self.key <= o.key
    }
    #[inline]
    fn gt(&self, o: &Self) -> bool {
        self.key > o.key
    }
    #[inline]
    fn ge(&self, o: &Self) -> bool {
        self.key >= o.key
    }
}
impl Ord for Event {
    #[inline]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// What one simulation leaves for the next to reuse: the ledger's lists, the event queue, the
/// CPUs' state (allocations only; every run starts from an empty state). A sweep batch runs
/// thousands of short simulations through one (`Options::scratch`).
#[derive(Default)]
pub struct SimScratch {
    ledger: LedgerParts,
    events: BinaryHeap<Reverse<Event>>,
    cpus: Vec<SimCpu>,
    timers: Vec<Time>,
    wakeups: Vec<(Time, u32)>,
}

#[derive(Clone, Copy, Debug)]
struct SimCpu {
    /// Since when it runs its entity (for intervals), and the overhead owed then.
    since: Time,
    overhead: Time,
    /// Bumped whenever its entity stops or its plan changes, invalidating progress events.
    version: u32,
    /// The real-time bandwidth cap: busy time counted in the current period, when the period
    /// ends, and until when the CPU is stopped (it has used its runtime).
    rt_used: Time,
    rt_end: Time,
    stopped_until: Time,
    /// Since when its entity's running time is not yet counted in `rt_used`.
    rt_mark: Time,
}

/// The simulator's side of the ledger: time, events, work and overheads.
struct Sim<C: CostModel> {
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    cpus: Vec<SimCpu>,
    /// The overhead model (`run.overheads`, docs/overheads.md) and what it charged.
    oh: Overheads,
    totals: OverheadTotals,
    cost: C,
    record_intervals: bool,
    intervals: Vec<Interval>,
}

/// The constant costs of the overhead model, copied out of the task set for the hot path.
#[derive(Clone, Copy, Debug, Default)]
struct Overheads {
    decision: Time,
    context_switch: Time,
    migration: Time,
    release: Time,
    tick: Time,
    tick_period: Time,
    /// 0: no cap.
    rt_runtime: Time,
    rt_period: Time,
}

impl<C: CostModel> Sim<C> {
    #[inline]
    fn push(&mut self, time: Time, kind: u8, a: u32, b: u32) {
        self.seq += 1;
        self.events
            .push(Reverse(Event::new(time, kind, self.seq, a, b)));
    }

    /// Account the CPU time `ent` had on `cpu` since the CPU's mark: overheads, then work.
    #[inline]
    fn account(&self, now: Time, cpu: u32, c: &mut CpuState, ent: &mut Ent) {
        // The mark is ahead of now while the CPU stands stopped by the bandwidth cap.
        let ran = now.saturating_sub(c.mark);
        c.mark = c.mark.max(now);
        let (cost, id) = (&self.cost, ent.info.id);
        ent.pay(ran, |t| cost.work(cpu, id, t));
    }

    /// Plan the next progress event of `ent` on `cpu`: after its overhead and `work`, counted
    /// from `now` (or from the end of a bandwidth-cap stop).
    #[inline]
    fn plan(&mut self, now: Time, cpu: u32, ent: &Ent, work: Time) {
        let at = now + ent.owed + self.cost.time_for(cpu, ent.info.id, work);
        let v = self.cpus[cpu as usize].version;
        self.push(at, EV_PROGRESS, cpu, v);
    }

    /// Close the interval `ent` has run on `cpu` since its start, at `now` (for the trace).
    #[inline]
    fn close_interval(&mut self, now: Time, cpu: u32, ent: &Ent) {
        let s = &self.cpus[cpu as usize];
        if self.record_intervals && now > s.since {
            let i = ent.info;
            self.intervals.push(Interval {
                cpu,
                task: i.task,
                job: i.job,
                region: i.region,
                thread: i.thread,
                demand: ent.demand,
                start: s.since,
                end: now,
                // A spinning entity owes the spin debt, not overhead (ledger/locking.rs): its
                // interval shows none; any other shows the charge it owed, paid or not.
                overhead: if s.overhead >= rtsched_runtime::ledger::SPIN_OWED / 2 {
                    0
                } else {
                    s.overhead
                },
            });
        }
    }

    /// `ns` of overhead charged mid-run to `ent` on `cpu` (a tick, a policy operation, an abort
    /// handler): account what it ran at the old plan, then re-plan with the charge owed. In
    /// the trace, a new interval starts here whose first `ns` are the charge.
    #[inline]
    #[allow(clippy::too_many_arguments)] // the `Substrate::charged` hook's, passed through
    fn charge(
        &mut self,
        now: Time,
        cpu: u32,
        c: &mut CpuState,
        ent: &mut Ent,
        ns: Time,
        work: Time,
        rec: Option<&mut JobRecord>,
    ) {
        self.close_interval(now, cpu, ent);
        // `work` was measured before this accounting: what it did since its mark is done.
        let before = ent.done;
        self.account(now, cpu, c, ent);
        let work = work.saturating_sub(ent.done - before);
        ent.owed += ns;
        if let Some(r) = rec {
            r.overhead += ns;
        }
        let s = &mut self.cpus[cpu as usize];
        s.version = s.version.wrapping_add(1);
        s.since = now;
        s.overhead = ent.owed;
        // During a bandwidth-cap stop the mark is its end: the charge is paid after it.
        self.plan(now.max(c.mark), cpu, ent, work);
    }
}

impl<C: CostModel> Sim<C> {
    /// A dispatch under the bandwidth cap: when the entity's CPU time starts on `cpu` (now, or
    /// the end of a stop).
    #[inline(never)]
    fn capped_start(&mut self, now: Time, cpu: u32, c: &mut CpuState) -> Time {
        let s = &mut self.cpus[cpu as usize];
        if now >= s.stopped_until && s.rt_used >= self.oh.rt_runtime && now < s.rt_end {
            // Its runtime ran out as the CPU went idle at a step: it stops now.
            s.stopped_until = s.rt_end;
            self.totals.throttle_ns += s.rt_end - now;
        }
        s.rt_mark = now;
        if now < s.stopped_until {
            // Dispatched to a CPU the bandwidth cap stopped: it waits there until the period
            // ends, without running (its CPU time starts then).
            c.mark = s.stopped_until;
            s.overhead += s.stopped_until - now;
            s.stopped_until
        } else {
            now
        }
    }

    /// The bandwidth cap stops `cpu` until `stopped_until` with `ent` on it: account what it
    /// ran, then hold its CPU time (the mark) and its plan until the stop ends. Not the job's
    /// overhead or CPU time: wall time the CPU is taken away. In the trace a new interval
    /// starts here whose first part (its "overhead" slice) is the stop.
    fn stop(&mut self, now: Time, cpu: u32, c: &mut CpuState, ent: &mut Ent, work: Time) {
        self.close_interval(now, cpu, ent);
        let before = ent.done;
        self.account(now, cpu, c, ent);
        let work = work.saturating_sub(ent.done - before);
        let s = &mut self.cpus[cpu as usize];
        let until = s.stopped_until;
        c.mark = until;
        s.version = s.version.wrapping_add(1);
        s.since = now;
        s.overhead = until - now + ent.owed;
        self.plan(until, cpu, ent, work);
    }
}

impl<C: CostModel> Substrate for Sim<C> {
    #[inline(always)]
    fn off_cpu(&mut self, now: Time, cpu: u32, c: &mut CpuState, ent: &mut Ent, _why: Off) {
        self.close_interval(now, cpu, ent);
        self.account(now, cpu, c, ent);
        let s = &mut self.cpus[cpu as usize];
        s.version = s.version.wrapping_add(1);
        if self.oh.rt_runtime > 0 {
            let from = s.rt_mark.max(s.stopped_until);
            s.rt_used += now.saturating_sub(from);
        }
        self.cost.off_cpu(now, cpu, &ent.info);
    }

    #[inline(always)]
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
    ) {
        let o = &self.oh;
        let (cs, mig) = (
            o.context_switch * switched as u64,
            o.migration * migrated as u64,
        );
        let overhead = o.decision + cs + mig;
        self.totals.decision_ns += o.decision;
        self.totals.context_switch_ns += cs;
        self.totals.migration_ns += mig;
        let stall = self
            .cost
            .dispatch(now, cpu, &ent.info, switched, migrated, rec.as_deref());
        ent.owed += overhead + stall;
        if let Some(r) = rec {
            r.overhead += overhead;
            r.stall += stall;
            self.cost.count(&ent.info, r);
        }
        let s = &mut self.cpus[cpu as usize];
        s.since = now;
        s.overhead = ent.owed;
        let from = if self.oh.rt_runtime > 0 {
            self.capped_start(now, cpu, c)
        } else {
            now
        };
        self.plan(from, cpu, ent, work);
    }

    fn charged(
        &mut self,
        now: Time,
        cpu: u32,
        c: &mut CpuState,
        ent: &mut Ent,
        ns: Time,
        work: Time,
        rec: Option<&mut JobRecord>,
    ) {
        // `work` was measured before this accounting; nothing ran in between (same instant).
        self.charge(now, cpu, c, ent, ns, work, rec);
    }
}

/// What an observer sees after each decision (for property tests and debugging).
pub struct View<'a> {
    pub now: Time,
    /// Per CPU, the entity it runs.
    pub running: Vec<Option<EntityId>>,
    run: &'a Run<'a>,
}

impl View<'_> {
    /// Every ready entity (released, given to the policy, unfinished, not aborted, not blocked
    /// on a resource) and the CPU running it. Jobs held behind an unfinished predecessor of
    /// their task have no entities yet.
    pub fn live(&self) -> impl Iterator<Item = (EntityInfo, Option<u32>)> + '_ {
        self.run.live()
    }
    /// Per resource, the entity holding it (if any) and whether that entity is live.
    pub fn holders(&self) -> impl Iterator<Item = Option<(EntityInfo, bool)>> + '_ {
        self.run.holders()
    }
    /// Whether a priority inversion holds after this instant's decision: some CPU runs an
    /// entity with a strictly later deadline than a ready one's (docs/semantics.md).
    pub fn priority_inversion(&self) -> bool {
        self.run.priority_inversion()
    }
    /// Entities blocked on a resource: (entity, resource, whether it is in that resource's
    /// queue, whether a CPU runs it). A correct ledger answers (_, _, true, false).
    pub fn blocked(&self) -> impl Iterator<Item = (EntityInfo, u32, bool, bool)> + '_ {
        self.run.blocked()
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

/// One run of the simulator. [`crate::simulate`] makes and runs one as its options say; the
/// fuzz target drives one directly.
pub struct Engine<'p, O: Observer, C: CostModel> {
    led: Ledger<'p>,
    sim: Sim<C>,
    observer: O,
    result: RunResult,
    timers: Vec<Time>,
    wakeups: Vec<(Time, u32)>,
    /// Suspensions' ends and triggered jobs' aborts taken from the ledger (docs/chains.md).
    resumes: Vec<(Time, u32, u32)>,
    flow_aborts: Vec<(Time, u32, u32)>,
}

impl<'p, O: Observer, C: CostModel> Engine<'p, O, C> {
    pub fn new(
        ts: &'p TaskSet,
        policy: &'p mut dyn Policy,
        observer: O,
        cost: C,
        record_intervals: bool,
    ) -> Self {
        Engine::new_in(
            ts,
            policy,
            observer,
            cost,
            record_intervals,
            SimScratch::default(),
        )
    }

    /// [`Engine::new`] in the buffers an earlier run left ([`Engine::try_run_in`]).
    pub fn new_in(
        ts: &'p TaskSet,
        policy: &'p mut dyn Policy,
        observer: O,
        cost: C,
        record_intervals: bool,
        scratch: SimScratch,
    ) -> Self {
        let SimScratch {
            ledger,
            mut events,
            mut cpus,
            mut timers,
            mut wakeups,
        } = scratch;
        let m = ts.platform.cpus as usize;
        let n = ts.tasks.len();
        let result = RunResult::new("sim", &policy.name(), ts);
        let o = &ts.run.overheads;
        let (rt_runtime, rt_period) = if o.throttles() {
            (o.rt_runtime, o.rt_period)
        } else {
            (0, 0)
        };
        let oh = Overheads {
            decision: o.decision,
            context_switch: o.context_switch,
            migration: o.migration,
            release: o.release,
            tick: o.tick,
            tick_period: o.tick_period.max(1),
            rt_runtime,
            rt_period,
        };
        events.clear();
        events.reserve(2 * n + 2 * m + 16);
        cpus.clear();
        cpus.resize(
            m,
            SimCpu {
                since: 0,
                overhead: 0,
                version: 0,
                rt_used: 0,
                rt_end: rt_period,
                stopped_until: 0,
                rt_mark: 0,
            },
        );
        timers.clear();
        wakeups.clear();
        let mut led = Ledger::borrowed_in(ts, policy, true, ledger);
        if record_intervals {
            // A trace links each chain instance's jobs (write_trace).
            led.keep_chain_paths();
        }
        Engine {
            led,
            sim: Sim {
                events,
                seq: 0,
                cpus,
                oh,
                totals: OverheadTotals::default(),
                cost,
                record_intervals,
                intervals: Vec::new(),
            },
            observer,
            result,
            timers,
            wakeups,
            resumes: Vec::new(),
            flow_aborts: Vec::new(),
        }
    }

    /// Time the policy's every decision with a clock (`measurements`: `policy_ns_*`; ChronOS
    /// Fig 6). Off by default: a simulation's results stay free of wall-clock figures.
    pub fn measure_policy(mut self, on: bool) -> Self {
        self.led.measure_policy(on);
        self
    }

    /// Hand each per-job record to `sink` as soon as it is decided (in release order) instead
    /// of holding them: the result's `jobs` stays empty ([`Ledger::stream_records`]).
    pub fn stream_records(mut self, sink: Option<&'p mut (dyn JobSink + Send)>) -> Self {
        if let Some(s) = sink {
            self.led.stream_records(s);
        }
        self
    }

    /// Run to the end; a run that cannot go on (an unresolved deadlock) stops with its
    /// [`SimError`].
    pub fn try_run(mut self) -> Result<RunResult, SimError> {
        let end = self.run_to_end()?;
        Ok(self.finish(end).0)
    }

    /// [`Engine::try_run`], and the run's buffers for the next one ([`Engine::new_in`]; none
    /// after an error).
    pub fn try_run_in(mut self) -> (Result<RunResult, SimError>, SimScratch) {
        match self.run_to_end() {
            Ok(end) => {
                let (r, scratch) = self.finish(end);
                (Ok(r), scratch)
            }
            Err(e) => (Err(e), SimScratch::default()),
        }
    }

    /// Run the events to the end of the run; the time it ends (see `finish`).
    #[inline(never)]
    fn run_to_end(&mut self) -> Result<Time, SimError> {
        let duration = self.led.duration();
        let limit = self.led.limit();
        let release = self.sim.oh.release;
        for (i, t) in self.led.run.taskset().tasks.iter().enumerate() {
            if t.offset < duration && t.trigger.is_none() {
                // Release latency: the job becomes ready `release` after its release time.
                self.sim.push(t.offset + release, EV_RELEASE, i as u32, 0);
            }
        }
        let tick = self.led.tick_interval();
        if let Some(q) = tick {
            for c in 0..self.sim.cpus.len() {
                self.sim.push(q, EV_TICK, c as u32, 0);
            }
        }
        if self.sim.oh.tick > 0 {
            for c in 0..self.sim.cpus.len() {
                self.sim
                    .push(self.sim.oh.tick_period, EV_OH_TICK, c as u32, 0);
            }
        }
        if self.sim.oh.rt_runtime > 0 {
            for c in 0..self.sim.cpus.len() {
                self.sim
                    .push(self.sim.oh.tick_period, EV_OH_RT, c as u32, 0);
            }
        }
        let mut end = 0;
        while let Some(&Reverse(first)) = self.sim.events.peek() {
            let now = first.time();
            if now > limit {
                break;
            }
            // Every counted job is decided and no more counted releases are pending.
            if self.led.all_decided(now) {
                break;
            }
            end = now;
            while let Some(&Reverse(ev)) = self.sim.events.peek() {
                if ev.time() != now {
                    break;
                }
                self.result.counters.events += 1;
                // Progress and releases first, as branches: a `match` here becomes a jump
                // table whose indirect branch the CPU mispredicts about every other event.
                let kind = ev.kind();
                if kind == EV_RELEASE {
                    // Handled on top of the queue: its task's next release takes its place.
                    self.on_release(now, ev.a);
                    continue;
                }
                self.sim.events.pop();
                if kind == EV_PROGRESS {
                    self.on_progress(now, ev.a, ev.b);
                } else {
                    self.on_rare(now, kind, ev.a, ev.b, tick);
                }
            }
            self.led.decide(now, &mut self.sim);
            if let Some(f) = self.led.failure() {
                return Err(SimError::Stopped {
                    source: self.led.run.taskset().source.clone(),
                    failure: f.clone(),
                });
            }
            if self.led.has_wakeups() {
                self.wake(now);
            }
            if self.led.has_flow_events() {
                self.flow_events();
            }
            if self.led.has_timers() {
                self.led.take_timers(&mut self.timers);
                for i in 0..self.timers.len() {
                    let at = self.timers[i].max(now);
                    self.sim.push(at, EV_TIMER, 0, 0);
                }
            }
            if O::ACTIVE {
                let view = View {
                    now,
                    running: (0..self.sim.cpus.len() as u32)
                        .map(|c| self.led.run.cpu(c).running)
                        .collect(),
                    run: &self.led.run,
                };
                self.observer.after_instant(&view);
            }
        }
        // Stopped by the drain limit with counted jobs still unfinished: time ran to the limit.
        Ok(if self.led.run.undecided() > 0 {
            limit
        } else {
            end
        })
    }

    fn finish(mut self, end: Time) -> (RunResult, SimScratch) {
        for c in 0..self.sim.cpus.len() as u32 {
            if let Some((cpu, ent)) = self.led.run.running_mut(c) {
                self.sim.close_interval(end, c, ent);
                // What it ran since its CPU's mark is CPU time of its job too (its record's
                // `exec`, as the trace's last interval shows).
                self.sim.account(end, c, cpu, ent);
            }
        }
        let (out, ledger) = self.led.finish_parts(end);
        let mut r = self.result;
        out.fill_counters(&mut r.counters);
        out.fill_measurements(&mut r.measurements);
        r.jobs = out.jobs;
        r.chains = out.chains;
        r.chain_paths = out.chain_paths;
        r.intervals = self.sim.intervals;
        r.counters.overheads = self.sim.totals;
        r.counters.overheads.policy_ns = out.charged;
        r.counters.overheads.abort_handler_ns = out.abort_handler_ns;
        self.sim.cost.finish(&mut r.counters.cache);
        if out.charged > 0 {
            r.measurements
                .insert("policy.charged_ns".into(), out.charged as f64);
        }
        r.end = end;
        let scratch = SimScratch {
            ledger,
            events: self.sim.events,
            cpus: self.sim.cpus,
            timers: self.timers,
            wakeups: self.wakeups,
        };
        (r, scratch)
    }

    /// Best-effort tasks that went to sleep: their next bursts are released when they wake
    /// (after the release latency, as every release).
    #[inline(never)]
    fn wake(&mut self, now: Time) {
        self.led.take_wakeups(&mut self.wakeups);
        for i in 0..self.wakeups.len() {
            let (at, task) = self.wakeups[i];
            self.sim
                .push(at.max(now) + self.sim.oh.release, EV_RELEASE, task, 0);
        }
    }

    /// Suspended jobs' ends and triggered jobs' deadline aborts, which the ledger scheduled
    /// (docs/chains.md).
    #[inline(never)]
    fn flow_events(&mut self) {
        self.led
            .take_flow_events(&mut self.resumes, &mut self.flow_aborts);
        for &(at, slot, generation) in &self.resumes {
            self.sim.push(at, EV_RESUME, slot, generation);
        }
        for &(at, slot, generation) in &self.flow_aborts {
            self.sim.push(at, EV_ABORT, slot, generation);
        }
    }

    /// The release event on top of the queue: the job is released, and the event leaves the
    /// queue or becomes the task's next release (one sift, where a pop and a push take two;
    /// the queue's order is the same, every event's key being unique).
    #[inline]
    fn on_release(&mut self, now: Time, task: u32) {
        // Due `release` (the release latency) before now.
        let latency = self.sim.oh.release;
        self.sim.totals.release_ns += latency;
        // The ledger's release leaves the queue alone: the event is still on top after it.
        let rel = self.led.release(now, task, now - latency);
        // Keep releasing past the counted window (as interference) while counted jobs run.
        let next = self.led.keeps_releasing(rel.next);
        if let Some((at, slot, generation)) = rel.abort {
            self.sim.events.pop();
            self.sim.push(at, EV_ABORT, slot, generation);
            if next {
                self.sim.push(rel.next + latency, EV_RELEASE, task, 0);
            }
        } else if next {
            self.sim.seq += 1;
            let e = Event::new(rel.next + latency, EV_RELEASE, self.sim.seq, task, 0);
            *self.sim.events.peek_mut().expect("the release is on top") = Reverse(e);
        } else {
            self.sim.events.pop();
        }
    }

    /// Deadline aborts, ticks and the policy's timers.
    #[inline(never)]
    fn on_rare(&mut self, now: Time, kind: u8, a: u32, b: u32, tick: Option<Time>) {
        match kind {
            EV_ABORT => self.led.deadline_abort(now, a, b, &mut self.sim),
            EV_TICK => {
                self.led.tick(now, a);
                if let Some(q) = tick {
                    self.sim.push(now + q, EV_TICK, a, 0);
                }
            }
            EV_OH_TICK => {
                let cost = self.sim.oh.tick;
                if let Some(e) = self.led.run.cpu(a).running {
                    // The tick interrupts what the CPU runs: it pays the handler first.
                    let work = self.led.run.work_to_next(e);
                    let (c, ent, rec) = self
                        .led
                        .run
                        .running_with_record(a)
                        .expect("the CPU runs it");
                    debug_assert_eq!(ent.info.id, e);
                    self.sim.charge(now, a, c, ent, cost, work, rec);
                    self.sim.totals.tick_ns += cost;
                }
                self.sim
                    .push(now + self.sim.oh.tick_period, EV_OH_TICK, a, 0);
            }
            EV_OH_RT => self.on_rt_step(now, a),
            EV_RESUME => self.led.resume(now, a, b),
            _ => self.led.timer(now),
        }
    }

    /// The real-time bandwidth cap on `cpu` (Linux's RT throttling): the time the CPU runs
    /// entities counts as used; once it has used `rt_runtime` in the current period it stops
    /// until the period ends, holding what it runs (as a throttled SCHED_FIFO worker does:
    /// the testbed's decider does not know). Counted at the step, as the kernel counts at
    /// its tick; the stop is charged to the entity as owed time (`off_cpu` / `on_cpu` move it
    /// with the CPU, not with the entity).
    fn on_rt_step(&mut self, now: Time, cpu: u32) {
        let (step, runtime, period) = (
            self.sim.oh.tick_period,
            self.sim.oh.rt_runtime,
            self.sim.oh.rt_period,
        );
        // Busy time is counted exactly (on_cpu marks, off_cpu and each step add); the cap is
        // checked at each step.
        let s = &mut self.sim.cpus[cpu as usize];
        let running = self.led.run.cpu(cpu).running;
        if running.is_some() && now > s.rt_mark.max(s.stopped_until) {
            s.rt_used += now - s.rt_mark.max(s.stopped_until);
        }
        s.rt_mark = now;
        if now >= s.rt_end {
            // A new period (the time since the last step is counted in the old one, ≤ a step).
            while now >= s.rt_end {
                s.rt_end += period;
            }
            s.rt_used = 0;
        }
        if let Some(e) = running {
            if now >= s.stopped_until && s.rt_used >= runtime {
                let stop = s.rt_end - now;
                s.stopped_until = s.rt_end;
                self.sim.totals.throttle_ns += stop;
                let work = self.led.run.work_to_next(e);
                let (c, ent) = self.led.run.running_mut(cpu).expect("the CPU runs it");
                self.sim.stop(now, cpu, c, ent, work);
            }
        }
        self.sim.push(now + step, EV_OH_RT, cpu, 0);
    }

    /// The entity on `cpu` completed or reached a checkpoint.
    fn on_progress(&mut self, now: Time, cpu: u32, version: u32) {
        if self.sim.cpus[cpu as usize].version != version {
            return; // the entity was stopped since this event was planned
        }
        let (c, ent) = self
            .led
            .run
            .running_mut(cpu)
            .expect("a valid progress event has a running entity");
        self.sim.account(now, cpu, c, ent);
        let e = ent.info.id;
        match self.led.advance(now, cpu, e, true, &mut self.sim) {
            Step::Run { owed: _, work } => self.sim.plan(now, cpu, self.led.run.ent(e), work),
            Step::Done => self.led.complete(now, cpu, e, now, &mut self.sim),
            // Blocked, or spinning: the grant re-plans it (ledger/locking.rs).
            Step::Blocked | Step::Spin => {}
            Step::Stop => unreachable!("a simulated entity holds its CPU while it runs"),
        }
    }
}
