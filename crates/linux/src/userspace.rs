//! Decisions made in user space: an rtsched policy decides over the job ledger, and threads
//! of this process carry the decisions out. The machinery the two drivers that work so share
//! — the testbed ([`crate::testbed`]: one pinned worker per CPU) and kernel:scx:POLICY
//! ([`crate::scx_user`]: each task's own threads, dispatched by rtsched's sched_ext
//! scheduler) — each driver bringing its [`Executors`].
//!
//! **One ledger.** What a job is while it runs — slots, held jobs, fork/join, resources and
//! their queues, aborts, the counting and invariants of a decision, records — is the job
//! ledger of `rtsched-runtime`, the same code the simulator drives, under the state lock.
//! Added here is what only a real run has: executors that execute pieces of work up to the
//! next checkpoint of a thread's program (section boundaries scaled to the thread's demand)
//! and report completions, requests and releases to the ledger as they happen ([`serve`]); a
//! timer-driven decider (or, concurrently, the executors) for releases, deadline aborts, ticks
//! and the policy's timers ([`Shared::decide`]); and measurements: decision overhead, release
//! jitter, preemption latency (decision to the victim stopping), blocked time and the
//! executor threads' kernel counters. Resources are the ledger's mutexes, not OS mutexes: the
//! policy decides who runs.
//!
//! **Decision level and execution level.** The ledger's CPUs are what the policy decided;
//! each CPU's decision is published in its mailbox ([`CpuCell`]), where its executor learns
//! of a change within a chunk. An entity completes on the CPU it is linked to: an executor
//! that finishes an entity's work just as the policy takes its CPU away leaves it ready with
//! nothing left to do, and it completes the next time it is dispatched.

use crate::options::{GlobalModel, RunError, RunOptions, TIME_ZERO_KEY};
use crate::samples::Samples;
use crate::signal::interrupted;
use crate::stream::{self, Collector, Handoff};
use crate::{perf, sys, work};
use rtsched_model::results::{Interval, JobRecord, RunResult};
use rtsched_model::{TaskSet, Time};
use rtsched_policies::{EntityId, EntityInfo, Policy};
use rtsched_runtime::{CpuState, Ent, Ledger, Off, Step, Substrate};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

const DECIDER_PRIO: u32 = 60;

/// What carries the decisions out: the testbed's CPU workers, or kernel:scx:POLICY's lane
/// threads. Every hook but [`Executors::start`] does nothing by default (the testbed's case).
pub(crate) trait Executors: Sized + Send + Sync + 'static {
    /// What the executors keep under the state lock.
    type Locked: Send;
    /// Who calls [`serve`]: what an executor thread tells it about itself.
    type Caller: Copy;
    /// From the threads' start to the run's time 0: time for them to get ready.
    const SETTLE: Time;
    /// The result's substrate, and its scheduler's prefix (before `:POLICY`).
    const SUBSTRATE: &'static str;
    const PREFIX: &'static str;
    /// The ledger's counters these executors cannot measure (null in the result).
    const UNMEASURED: &'static [&'static str] = &[];
    /// Whether the ledger's pulls (dispatches away from the run queue a thread sits on) are
    /// this run's: not where a real kernel places the threads (null per job and in the
    /// summaries).
    const PULLS: bool = true;

    /// Start the executor threads (each through [`spawn_executor`]).
    fn start(sh: &Arc<Shared<Self>>, handles: &mut Vec<JoinHandle<(u64, u64)>>);
    /// A decision was published to `cpu`'s mailbox (under the state lock).
    fn published(_locked: &mut Self::Locked, _cpu: usize, _e: Option<EntityId>) {}
    /// After each decision, still under the state lock: pass what was published on.
    fn pass_on(_sh: &Shared<Self>, _st: &mut State<Self>) {}
    /// Wake every executor thread that waits on a word of its own (the run stops).
    fn wake_all(&self) {}
    /// A count the calling thread holds up while it waits for or holds the state lock.
    fn lock_mark() -> Option<*const AtomicU64> {
        None
    }
    /// Whether `caller` executes the entity `info` (given its CPU's assignment).
    fn serves(&self, _caller: Self::Caller, _info: &EntityInfo) -> bool {
        true
    }
    /// `caller` took the entity its CPU is assigned (under the state lock).
    fn dispatched(_caller: Self::Caller, _cpu: usize, _st: &mut State<Self>) {}
    /// The end of a stretch `caller` ran from `started` to `end` on a CPU whose assignment
    /// changed meanwhile.
    fn taken_at(&self, _caller: Self::Caller, _t0: u64, _started: Time, end: Time) -> Time {
        end
    }
    /// Add the executors' own measurements to the result.
    fn report(_locked: &mut Self::Locked, _r: &mut RunResult) {}
}

/// Per-CPU mailbox: the assignment (epoch << 32 | entity + 1, 0 = idle) and a futex word.
pub(crate) struct CpuCell {
    pub assign: AtomicU64,
    pub word: AtomicU32,
}

/// The per-CPU publishing state (under the state lock).
pub(crate) struct Mailboxes {
    epoch: Vec<u32>,
    pub decided_at: Vec<u64>,
    /// CPUs whose entity completed or blocked since the last decision.
    vacated: Vec<u32>,
}

/// The ledger's substrate here: it publishes decisions to the CPUs' mailboxes.
struct Publish<'a, X: Executors> {
    cells: &'a [CpuCell],
    boxes: &'a mut Mailboxes,
    ex: &'a mut X::Locked,
}

impl<X: Executors> Publish<'_, X> {
    fn publish(&mut self, cpu: usize, e: Option<EntityId>) {
        let b = &mut *self.boxes;
        b.epoch[cpu] = b.epoch[cpu].wrapping_add(1);
        let v = ((b.epoch[cpu] as u64) << 32) | e.map_or(0, |x| x as u64 + 1);
        b.decided_at[cpu] = sys::mono_ns();
        X::published(self.ex, cpu, e);
        self.cells[cpu].assign.store(v, Ordering::SeqCst);
        self.cells[cpu].word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.cells[cpu].word);
    }
}

impl<X: Executors> Substrate for Publish<'_, X> {
    fn off_cpu(&mut self, _now: Time, cpu: u32, _c: &mut CpuState, _ent: &mut Ent, why: Off) {
        match why {
            // Its executor stops it within a chunk.
            Off::Aborted => self.publish(cpu as usize, None),
            Off::Completed | Off::Blocked => self.boxes.vacated.push(cpu),
            Off::Preempted => {}
        }
    }
    fn on_cpu(
        &mut self,
        _now: Time,
        _cpu: u32,
        _c: &mut CpuState,
        _ent: &mut Ent,
        _switched: bool,
        _migrated: bool,
        _work: Time,
        _rec: Option<&mut JobRecord>,
    ) {
    }
    fn assigned(&mut self, cpu: u32, e: Option<EntityId>) {
        self.publish(cpu as usize, e);
    }
    /// A policy's operation costs real time here already: only counted (by the ledger).
    fn charged(
        &mut self,
        _now: Time,
        _cpu: u32,
        _c: &mut CpuState,
        _ent: &mut Ent,
        _ns: Time,
        _work: Time,
        _rec: Option<&mut JobRecord>,
    ) {
    }
}

/// The run's timed events: releases, deadline aborts, the policy's tick and its timers.
struct Timed {
    /// Per task, when its next job is due.
    next_release: Vec<Time>,
    /// Deadline aborts: (deadline, job slot, job generation).
    aborts: BinaryHeap<Reverse<(Time, u32, u32)>>,
    /// The policy's one-shot timers.
    timers: BinaryHeap<Reverse<Time>>,
    new_timers: Vec<Time>,
    tick: Option<Time>,
    next_tick: Time,
    /// Suspended jobs' ends (time, job slot, generation), which the ledger schedules
    /// (docs/chains.md), and the scratch they and triggered jobs' aborts are taken into.
    resumes: BinaryHeap<Reverse<(Time, u32, u32)>>,
    new_resumes: Vec<(Time, u32, u32)>,
    new_aborts: Vec<(Time, u32, u32)>,
}

impl Timed {
    /// What the ledger scheduled since it was last asked: suspended jobs' ends, triggered
    /// jobs' deadline aborts (as the simulator's `flow_events`).
    fn take_flow(&mut self, led: &mut Ledger<'static>) {
        if !led.has_flow_events() {
            return;
        }
        led.take_flow_events(&mut self.new_resumes, &mut self.new_aborts);
        self.resumes.extend(self.new_resumes.drain(..).map(Reverse));
        self.aborts.extend(self.new_aborts.drain(..).map(Reverse));
    }

    /// Suspended jobs whose suspension has ended by `now`: their next run segment is ready.
    fn resume_due(&mut self, led: &mut Ledger<'static>, now: Time) {
        while let Some(&Reverse((at, slot, generation))) = self.resumes.peek() {
            if at > now {
                break;
            }
            self.resumes.pop();
            led.resume(now, slot, generation);
        }
    }

    /// Aborts and releases due by `now`, earliest first (an abort before a release at the same
    /// instant, as in the simulator), releases of one instant in task order. A decider that
    /// comes late (host steal) catches up in that order too: the records are made in release
    /// order, the order a streamed run writes them in.
    fn release_and_abort(
        &mut self,
        led: &mut Ledger<'static>,
        sub: &mut impl Substrate,
        jitter_ns: &mut Samples,
        now: Time,
    ) {
        loop {
            let abort = self.aborts.peek().map(|&Reverse((d, _, _))| d);
            match next_due(abort, &self.next_release, |at| led.keeps_releasing(at), now) {
                Some(Due::Abort) => {
                    let Reverse((_, j, generation)) = self.aborts.pop().unwrap();
                    led.deadline_abort(now, j, generation, sub);
                }
                Some(Due::Release(t)) => {
                    let at = self.next_release[t];
                    jitter_ns.push(now - at);
                    let rel = led.release(now, t as u32, at);
                    self.next_release[t] = rel.next;
                    if let Some(a) = rel.abort {
                        self.aborts.push(Reverse(a));
                    }
                }
                None => break,
            }
        }
    }

    /// The policy's ticks (on every CPU) and its timers due by `now`.
    fn tick_and_fire(&mut self, led: &mut Ledger<'static>, cpus: u32, now: Time) {
        if let Some(q) = self.tick {
            while self.next_tick <= now {
                for c in 0..cpus {
                    led.tick(now, c);
                }
                self.next_tick += q;
            }
        }
        while self.timers.peek().is_some_and(|Reverse(t)| *t <= now) {
            self.timers.pop();
            led.timer(now);
        }
    }

    /// The timers the policy set in its last decision.
    fn arm(&mut self, led: &mut Ledger<'static>) {
        led.take_timers(&mut self.new_timers);
        self.timers.extend(self.new_timers.drain(..).map(Reverse));
    }

    /// The earliest event still to come, and the earliest release (`u64::MAX`: none).
    fn next(&self, led: &Ledger<'static>) -> (Time, Time) {
        let next_rel = self
            .next_release
            .iter()
            .copied()
            .filter(|&r| led.keeps_releasing(r))
            .min()
            .unwrap_or(u64::MAX);
        let next_abort = self.aborts.peek().map_or(u64::MAX, |Reverse((d, _, _))| *d);
        let next_timer = self.timers.peek().map_or(u64::MAX, |Reverse(t)| *t);
        let next_resume = self
            .resumes
            .peek()
            .map_or(u64::MAX, |Reverse((t, _, _))| *t);
        let next_tick = if self.tick.is_some() {
            self.next_tick
        } else {
            u64::MAX
        };
        (
            next_rel
                .min(next_abort)
                .min(next_timer)
                .min(next_tick)
                .min(next_resume),
            next_rel,
        )
    }
}

pub(crate) struct State<X: Executors> {
    pub led: Ledger<'static>,
    pub boxes: Mailboxes,
    /// What the executors keep under the lock.
    pub ex: X::Locked,
    timed: Timed,
    intervals: Vec<Interval>,
    decision_ns: Samples,
    jitter_ns: Samples,
    preempt_latency_ns: Samples,
    done: bool,
    end: Time,
}

impl<X: Executors> State<X> {
    fn new(ts: &TaskSet, led: Ledger<'static>, tick: Option<Time>, ex: X::Locked) -> Self {
        let m = ts.platform.cpus as usize;
        State {
            led,
            boxes: Mailboxes {
                epoch: vec![0; m],
                decided_at: vec![0; m],
                vacated: Vec::with_capacity(m),
            },
            ex,
            timed: Timed {
                next_release: first_releases(ts),
                aborts: BinaryHeap::with_capacity(2 * ts.tasks.len()),
                timers: BinaryHeap::new(),
                new_timers: Vec::new(),
                tick,
                next_tick: tick.unwrap_or(u64::MAX),
                resumes: BinaryHeap::new(),
                new_resumes: Vec::new(),
                new_aborts: Vec::new(),
            },
            intervals: Vec::new(),
            decision_ns: Samples::default(),
            jitter_ns: Samples::default(),
            preempt_latency_ns: Samples::default(),
            done: false,
            end: 0,
        }
    }
}

/// The state lock's guard; for an executor with a [`Executors::lock_mark`] it also takes its
/// mark down on release.
pub(crate) struct StGuard<'a, X: Executors> {
    g: Option<MutexGuard<'a, State<X>>>,
    flag: Option<*const AtomicU64>,
}

impl<X: Executors> std::ops::Deref for StGuard<'_, X> {
    type Target = State<X>;
    fn deref(&self) -> &State<X> {
        self.g.as_ref().expect("held")
    }
}

impl<X: Executors> std::ops::DerefMut for StGuard<'_, X> {
    fn deref_mut(&mut self) -> &mut State<X> {
        self.g.as_mut().expect("held")
    }
}

impl<X: Executors> Drop for StGuard<'_, X> {
    fn drop(&mut self) {
        self.g.take();
        if let Some(f) = self.flag {
            // SAFETY: as in Shared::lock.
            unsafe { &*f }.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

pub(crate) struct Shared<X: Executors> {
    workloads: Vec<Arc<work::Workload>>,
    /// The LLC-miss event the run's hardware-counter probe found, if the machine has a PMU.
    pub hw_event: Option<perf::LlcEvent>,
    duration: Time,
    pub t0: u64,
    pub limit: Time,
    pub model: GlobalModel,
    record: bool,
    pub stop: AtomicBool,
    pub cpus: Vec<CpuCell>,
    decider_word: AtomicU32,
    /// Next timed event (release, abort, tick or timer), ns since t0.
    pub next_event: AtomicU64,
    st: Mutex<State<X>>,
    failure: Mutex<Option<RunError>>,
    /// The threads that execute the entities.
    pub ex: X,
}

impl<X: Executors> Shared<X> {
    pub fn lock(&self) -> StGuard<'_, X> {
        let flag = X::lock_mark();
        if let Some(f) = flag {
            // SAFETY: lock_mark points into memory that outlives the thread's use of it.
            unsafe { &*f }.fetch_add(1, Ordering::SeqCst);
        }
        StGuard {
            g: Some(self.st.lock().unwrap_or_else(|p| p.into_inner())),
            flag,
        }
    }
    pub fn now(&self) -> Time {
        sys::mono_ns().saturating_sub(self.t0)
    }
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || interrupted()
    }
    pub fn fail(&self, msg: String) {
        self.stop_with(RunError::Failed(msg));
    }
    /// Stop every thread; the run ends with `e` (the first failure, if several).
    fn stop_with(&self, e: RunError) {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        self.stop.store(true, Ordering::SeqCst);
        self.wake_all();
    }
    fn wake_all(&self) {
        for c in &self.cpus {
            c.word.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&c.word);
        }
        self.decider_word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.decider_word);
        self.ex.wake_all();
    }
    fn wake_decider(&self) {
        self.decider_word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.decider_word);
    }

    /// After an executor handed the ledger news (a completion, a block, a hand-over): the
    /// concurrent model decides here and now; stop-the-world wakes the decider. Returns with
    /// the lock held again.
    fn after_news<'a>(&'a self, mut st: StGuard<'a, X>) -> StGuard<'a, X> {
        if self.model == GlobalModel::Concurrent {
            self.decide_locked(&mut st);
            st
        } else {
            drop(st);
            self.wake_decider();
            self.lock()
        }
    }

    /// Application-concurrent model: the calling executor decides, under the lock it holds,
    /// and ends the run for everyone when every counted job is decided.
    pub fn decide_locked(&self, st: &mut State<X>) {
        let now = self.now();
        if !st.done {
            self.decide(st, now);
        }
        if st.done {
            self.stop.store(true, Ordering::SeqCst);
            self.wake_all();
        }
    }

    /// Handle every timed event due at `now` — deadline aborts, releases, ticks, the policy's
    /// timers, in the simulator's order — and let the policy decide; publish what changed.
    /// Called with the state lock held, by the decider or (concurrent model) by an executor.
    fn decide(&self, st: &mut State<X>, now: Time) {
        let began = sys::mono_ns();
        let State {
            led,
            boxes,
            ex,
            timed,
            jitter_ns,
            ..
        } = st;
        let mut sub = Publish::<X> {
            cells: &self.cpus,
            boxes,
            ex,
        };
        timed.take_flow(led);
        timed.release_and_abort(led, &mut sub, jitter_ns, now);
        timed.resume_due(led, now);
        timed.tick_and_fire(led, self.cpus.len() as u32, now);
        led.decide(now, &mut sub);
        timed.take_flow(led);
        if let Some(f) = led.failure() {
            self.stop_with(RunError::Stopped {
                source: led.run.taskset().source.clone(),
                failure: f.clone(),
            });
        }
        timed.arm(led);
        self.tell_vacated(led, &mut sub);
        let (next, next_rel) = timed.next(led);
        self.move_next_event(led, next);
        if (led.run.undecided() == 0 && next_rel >= self.duration) || now > self.limit {
            st.done = true;
            st.end = now.min(self.limit);
        }
        X::pass_on(self, st);
        st.decision_ns.push(sys::mono_ns() - began);
    }

    /// A CPU whose entity completed or blocked and that the policy left idle: tell its
    /// executor (it would otherwise keep looking at an entity it can no longer run).
    fn tell_vacated(&self, led: &Ledger<'static>, sub: &mut Publish<'_, X>) {
        for i in 0..sub.boxes.vacated.len() {
            let c = sub.boxes.vacated[i] as usize;
            if led.run.cpu(c as u32).running.is_none()
                && self.cpus[c].assign.load(Ordering::SeqCst) & 0xffff_ffff != 0
            {
                sub.publish(c, None);
            }
        }
        sub.boxes.vacated.clear();
    }

    /// Publish the next timed event.
    fn move_next_event(&self, led: &Ledger<'static>, next: Time) {
        let before = self.next_event.swap(next, Ordering::SeqCst);
        if self.model == GlobalModel::Concurrent && next < before {
            // Idle executors sleep until the next event they knew of: tell them it moved earlier.
            for (c, cell) in self.cpus.iter().enumerate() {
                if led.run.cpu(c as u32).running.is_none() {
                    cell.word.fetch_add(1, Ordering::SeqCst);
                    sys::futex_wake(&cell.word);
                }
            }
        }
    }
}

/// Why an executor stopped running its entity.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Its work is done and its completion reported.
    Finished,
    /// It requested a held resource.
    Blocked,
    /// Its CPU was given away, or an event is due (concurrent model), or the run stops.
    Stopped,
    /// Its job was aborted while it ran.
    Gone,
}

/// What [`serve`] did with an assignment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Served {
    /// The assignment changed under it, or the entity is still being stopped elsewhere: look again.
    Retry,
    /// Nothing to run for it now: wait for the next decision.
    Wait,
    /// It ran the entity until it finished, blocked or was stopped.
    Ran,
}

/// The entity an executor took, and how it ran it.
struct Serving {
    cpu: usize,
    /// The assignment word it was taken under.
    a: u64,
    e: EntityId,
    generation: u32,
    info: EntityInfo,
    /// Its actual demand (for the recorded intervals).
    demand: Time,
    started: Time,
    /// It executed at least one piece.
    ran: bool,
    /// A piece ended before its work was done (its CPU was taken or an event came due).
    early: bool,
}

/// Run entity `e`, assigned to `cpu` by the assignment word `a`, piece by piece, handling the
/// checkpoints between pieces under the lock: take it, run its pieces, record the stretch it
/// ran and report what ended it.
pub(crate) fn serve<X: Executors>(
    sh: &Shared<X>,
    cpu: usize,
    a: u64,
    e: EntityId,
    hw: &Option<perf::HwGroup>,
    caller: X::Caller,
) -> Served {
    let (st, mut s) = match take(sh, cpu, a, e, caller) {
        Ok(taken) => taken,
        Err(served) => return served,
    };
    let (st, stop) = run_pieces(sh, st, &mut s, hw);
    let mut st = end_stretch(sh, st, &s, stop, caller);
    match stop {
        Stop::Gone => {}
        Stop::Stopped => {
            if s.early && sh.cpus[cpu].assign.load(Ordering::SeqCst) != a {
                let lat = sys::mono_ns().saturating_sub(st.boxes.decided_at[cpu]);
                st.preempt_latency_ns.push(lat);
            }
        }
        Stop::Finished | Stop::Blocked => {
            drop(sh.after_news(st));
        }
    }
    Served::Ran
}

/// Take the entity, unless another executor still has it (it is being preempted there) or it
/// is no longer this CPU's to run. Returns with the lock held.
fn take<X: Executors>(
    sh: &Shared<X>,
    cpu: usize,
    a: u64,
    e: EntityId,
    caller: X::Caller,
) -> Result<(StGuard<'_, X>, Serving), Served> {
    let mut st = sh.lock();
    if sh.cpus[cpu].assign.load(Ordering::SeqCst) != a {
        return Err(Served::Retry);
    }
    let ent = *st.led.run.ent(e);
    if !ent.live || ent.is_blocked() || ent.cpu != cpu as u32 {
        // Gone, blocked or completed here (the slot may serve another entity already):
        // wait for the next decision.
        return Err(Served::Wait);
    }
    if !sh.ex.serves(caller, &ent.info) {
        return Err(Served::Wait);
    }
    if ent.executing {
        drop(st);
        std::hint::spin_loop();
        return Err(Served::Retry);
    }
    st.led.run.ent_mut(e).executing = true;
    let started = sh.now();
    st.led.mark_started(e, started);
    X::dispatched(caller, cpu, &mut st);
    let s = Serving {
        cpu,
        a,
        e,
        generation: ent.generation,
        info: ent.info,
        demand: ent.demand,
        started,
        ran: false,
        early: false,
    };
    Ok((st, s))
}

/// How long a spinning worker busy-waits between two looks at the ledger.
const SPIN_LOOK_NS: Time = 2_000;

/// Run the taken entity piece by piece, handling the checkpoints between pieces under the
/// lock (held on entry and on return), until it finishes, blocks, is stopped or is gone.
fn run_pieces<'a, X: Executors>(
    sh: &'a Shared<X>,
    mut st: StGuard<'a, X>,
    s: &mut Serving,
    hw: &Option<perf::HwGroup>,
) -> (StGuard<'a, X>, Stop) {
    let (cell, c, e, a) = (&sh.cpus[s.cpu], s.cpu as u32, s.e, s.a);
    loop {
        let now = sh.now();
        let holds = st.led.run.ent(e).cpu == c && cell.assign.load(Ordering::SeqCst) == a;
        let step = checkpoint(sh, &mut st, c, e, holds, now);
        if step == Step::Done {
            return (st, Stop::Finished);
        }
        if step == Step::Blocked {
            return (st, Stop::Blocked);
        }
        if st.led.has_events() {
            // It released a resource and a waiter took it: a decision is due.
            st = sh.after_news(st);
            if !st.led.run.ent(e).live || st.led.run.ent(e).generation != s.generation {
                return (st, Stop::Gone);
            }
        }
        let piece = match step {
            Step::Run { work, .. } => work,
            Step::Spin => {
                // Spinning for a resource held on another CPU (msrp, mrsp): busy-wait on
                // this CPU with the lock down, then look again (the holder's release hands
                // it over under the lock). The spin is CPU time of the job, as simulated.
                drop(st);
                let (from, until) = (sh.now(), sh.now() + SPIN_LOOK_NS);
                while sh.now() < until
                    && cell.assign.load(Ordering::SeqCst) == a
                    && !sh.stop.load(Ordering::Relaxed)
                {
                    std::hint::spin_loop();
                }
                let spun = sh.now() - from;
                st = sh.lock();
                st.led.run.ent_mut(e).ran += spun;
                continue;
            }
            _ => return (st, Stop::Stopped),
        };
        if cell.assign.load(Ordering::SeqCst) != a || sh.stop.load(Ordering::Relaxed) {
            return (st, Stop::Stopped);
        }
        let ended;
        (st, ended) = execute_piece(sh, st, s, piece, hw);
        if let Some(stop) = ended {
            return (st, stop);
        }
    }
}

/// A checkpoint, under the lock: the ledger brings the entity to `now` on CPU `c` (still its
/// CPU if `holds`) and completes it if its work is done.
fn checkpoint<X: Executors>(
    sh: &Shared<X>,
    st: &mut State<X>,
    c: u32,
    e: EntityId,
    holds: bool,
    now: Time,
) -> Step {
    let State { led, boxes, ex, .. } = st;
    if holds {
        led.run.running_mut(c).expect("its CPU runs it").0.mark = now;
    }
    let mut sub = Publish::<X> {
        cells: &sh.cpus,
        boxes,
        ex,
    };
    let step = led.advance(now, c, e, holds, &mut sub);
    if step == Step::Done {
        led.stopped_executing(e);
        led.complete(now, c, e, now, &mut sub);
    }
    step
}

/// Execute `piece` ns of the entity's work with the lock down, then add what it took to the
/// ledger under the lock again. `Some` if that ended the stretch.
fn execute_piece<'a, X: Executors>(
    sh: &'a Shared<X>,
    mut st: StGuard<'a, X>,
    s: &mut Serving,
    piece: Time,
    hw: &Option<perf::HwGroup>,
) -> (StGuard<'a, X>, Option<Stop>) {
    let (cell, a) = (&sh.cpus[s.cpu], s.a);
    let concurrent = sh.model == GlobalModel::Concurrent;
    // The job may be aborted while the lock is down; its record stays out of a
    // streaming run's sink until this piece's CPU time is in it.
    let pin = st.led.run.ent(s.e).rec;
    st.led.pin_record(pin);
    drop(st);
    s.ran = true;
    let hw0 = hw.as_ref().map(|g| g.read());
    let d = sh.workloads[s.info.task as usize].execute(
        piece,
        || {
            cell.assign.load(Ordering::Relaxed) != a
                || sh.stop.load(Ordering::Relaxed)
                || (concurrent && sh.now() >= sh.next_event.load(Ordering::Relaxed))
        },
        |_| {},
    );
    let hw_delta = hw.as_ref().zip(hw0).map(|(g, s0)| g.read().since(&s0));
    let mut st = sh.lock();
    let x = st.led.run.ent_mut(s.e);
    assert_eq!(
        x.generation, s.generation,
        "a slot was reused while a worker ran it"
    );
    // Progress is the work done (calibrated ns); CPU time is what it took: the two
    // differ for memory work whose cache was taken (execution-time inflation).
    x.done += d.work;
    x.ran += d.cpu;
    let (live, rec) = (x.live, x.rec);
    if let (Some(h), Some(r)) = (hw_delta, st.led.run.record_mut(rec)) {
        perf::add(&mut r.hw, h);
    }
    if !live {
        // Aborted while it ran: the ledger took its CPU time when it aborted it; this
        // last piece is added here.
        if let Some(r) = st.led.run.record_mut(rec) {
            r.exec += d.cpu;
        }
        st.led.unpin_record(pin);
        return (st, Some(Stop::Gone));
    }
    st.led.unpin_record(pin);
    if !d.completed {
        s.early = true;
        return (st, Some(Stop::Stopped));
    }
    (st, None)
}

/// The stretch the executor ran the entity ends: it is no longer executing (a finished one
/// the ledger completed already), and the interval it ran is recorded.
fn end_stretch<'a, X: Executors>(
    sh: &'a Shared<X>,
    mut st: StGuard<'a, X>,
    s: &Serving,
    stop: Stop,
    caller: X::Caller,
) -> StGuard<'a, X> {
    let mut t = sh.now();
    if stop != Stop::Finished {
        st.led.stopped_executing(s.e);
    }
    if sh.cpus[s.cpu].assign.load(Ordering::SeqCst) != s.a {
        t = sh.ex.taken_at(caller, sh.t0, s.started, t);
    }
    if sh.record && s.ran && t > s.started {
        let i = s.info;
        st.intervals.push(Interval {
            cpu: s.cpu as u32,
            task: i.task,
            job: i.job,
            region: i.region,
            thread: i.thread,
            demand: s.demand,
            start: s.started,
            end: t,
            overhead: 0,
        });
    }
    st
}

/// Stop-the-world model: the one thread that handles every event and makes every decision.
fn decider<X: Executors>(sh: &Shared<X>) {
    if let Err(e) = sys::set_fifo(sys::gettid(), DECIDER_PRIO) {
        sh.fail(format!("decider: cannot set SCHED_FIFO: {e}"));
        return;
    }
    while !sh.stopping() {
        let w = sh.decider_word.load(Ordering::SeqCst);
        {
            let mut st = sh.lock();
            let now = sh.now();
            sh.decide(&mut st, now);
            if st.done {
                break;
            }
        }
        let next = sh.next_event.load(Ordering::SeqCst).min(sh.limit + 1);
        sys::futex_wait_until(&sh.decider_word, w, Some(sh.t0 + next));
    }
    sh.stop.store(true, Ordering::SeqCst);
    sh.wake_all();
}

/// Start a thread that executes entities (a CPU's worker, or a lane thread); a panic in it
/// stops the run with `who` named. False if the thread could not be started.
pub(crate) fn spawn_executor<X: Executors>(
    sh: &Arc<Shared<X>>,
    handles: &mut Vec<JoinHandle<(u64, u64)>>,
    name: String,
    who: String,
    f: impl FnOnce(&Shared<X>) -> (u64, u64) + Send + 'static,
) -> bool {
    let sh2 = sh.clone();
    let who2 = who.clone();
    let h = std::thread::Builder::new().name(name).spawn(move || {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&sh2))) {
            Ok(c) => c,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                sh2.fail(format!("{who2} panicked: {msg}; every thread was stopped"));
                (0, 0)
            }
        }
    });
    match h {
        Ok(h) => {
            handles.push(h);
            true
        }
        Err(e) => {
            sh.fail(format!("cannot start a thread ({who}): {e}"));
            false
        }
    }
}

/// Stop-the-world model: start the decider (at the run's time 0).
fn start_decider<X: Executors>(sh: &Arc<Shared<X>>) -> Option<JoinHandle<()>> {
    if sh.model != GlobalModel::StopTheWorld {
        return None;
    }
    let sh2 = sh.clone();
    std::thread::Builder::new()
        .name("rtsched-decider".into())
        .spawn(move || {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                sys::sleep_until(sh2.t0, &sh2.stop);
                decider(&sh2)
            }))
            .is_err()
            {
                sh2.fail(
                    "the decider panicked (a policy invariant failed); every thread was stopped"
                        .into(),
                );
            }
        })
        .ok()
}

/// Run `ts` under `policy`, its decisions carried out by `ex` (the caller checked privilege
/// and limits); its records streamed to `out` as its jobs end instead of held (`None`: held).
pub(crate) fn run_on<X: Executors>(
    ts: &TaskSet,
    policy: Box<dyn Policy>,
    opts: &RunOptions,
    ex: X,
    locked: X::Locked,
    mut out: Option<&mut Collector<'_>>,
) -> Result<RunResult, RunError> {
    let label = policy.name();
    let mut led = Ledger::owned(ts.clone(), policy, false);
    if !X::PULLS {
        led.pulls_unmeasured();
    }
    // Streaming: the ledger hands decided records and chain records to the threads' side of
    // a handoff, and this thread moves them on while it waits for the others (crate::stream).
    let handoff = Handoff::for_run(ts);
    if out.is_some() {
        led.stream_records_owned(Box::new(handoff.clone()));
    }
    // A real run always times the policy's decisions (two clock reads each): ChronOS Fig 6.
    led.measure_policy(true);
    let tick = led.tick_interval();
    // Before the run starts: calibrate the memory work and probe the PMU (once per run).
    let workloads = work::Workloads::for_taskset(ts);
    let probe = perf::probe();
    let sh = Arc::new(Shared {
        workloads: workloads.per_task.clone(),
        hw_event: probe.as_ref().ok().copied(),
        duration: ts.run.duration,
        t0: sys::mono_ns() + X::SETTLE,
        limit: led.limit(),
        model: opts.model,
        record: opts.record_intervals,
        stop: AtomicBool::new(false),
        cpus: (0..ts.platform.cpus)
            .map(|_| CpuCell {
                assign: AtomicU64::new(0),
                word: AtomicU32::new(0),
            })
            .collect(),
        decider_word: AtomicU32::new(0),
        next_event: AtomicU64::new(first_event(ts, tick)),
        st: Mutex::new(State::new(ts, led, tick, locked)),
        failure: Mutex::new(None),
        ex,
    });
    let mut handles = Vec::new();
    X::start(&sh, &mut handles);
    let dec = start_decider(&sh);
    let (kernel_cs, kernel_mig) = wait_for_threads(&sh, handles, dec, &handoff, out.as_deref_mut());
    if let Some(e) = sh.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let sh =
        Arc::try_unwrap(sh).map_err(|_| RunError::Failed("a thread outlived the run".into()))?;
    let mut r = RunResult::new(X::SUBSTRATE, &format!("{}:{label}", X::PREFIX), ts);
    r.unmeasured = X::UNMEASURED;
    r.measurements.insert(
        match opts.model {
            GlobalModel::StopTheWorld => "model_stw",
            GlobalModel::Concurrent => "model_concurrent",
        }
        .into(),
        1.0,
    );
    workloads.report(&mut r.measurements);
    perf::report(&probe, &mut r);
    let t0 = sh.t0;
    let mut st = sh.st.into_inner().unwrap_or_else(|p| p.into_inner());
    let end = if st.done { st.end } else { sh.limit };
    let intervals = std::mem::take(&mut st.intervals);
    account(st.led, end, intervals, &handoff, out, &mut r);
    r.measurements.insert(TIME_ZERO_KEY.into(), t0 as f64);
    r.measurements
        .insert("kernel.worker_context_switches".into(), kernel_cs as f64);
    r.measurements
        .insert("kernel.worker_migrations".into(), kernel_mig as f64);
    st.decision_ns
        .report("decision_overhead", &mut r.measurements);
    st.jitter_ns.report("release_jitter", &mut r.measurements);
    st.preempt_latency_ns
        .report("preemption_latency", &mut r.measurements);
    X::report(&mut st.ex, &mut r);
    Ok(r)
}

/// Per task, when the timer first releases it: at its offset; never a triggered task, whose
/// jobs its triggers' finishes release (the ledger's flow).
fn first_releases(ts: &TaskSet) -> Vec<Time> {
    ts.tasks
        .iter()
        .map(|t| {
            if t.trigger.is_some() {
                u64::MAX
            } else {
                t.offset
            }
        })
        .collect()
}

/// When the first timed event is due: the first release, or the first tick.
fn first_event(ts: &TaskSet, tick: Option<Time>) -> Time {
    let first = ts.tasks.iter().map(|t| t.offset).min().unwrap_or(0);
    first.min(tick.unwrap_or(u64::MAX))
}

/// Wait for the executors and the decider to end, moving streamed records on meanwhile;
/// the executors' kernel counters (context switches, migrations), summed.
fn wait_for_threads<X: Executors>(
    sh: &Shared<X>,
    handles: Vec<JoinHandle<(u64, u64)>>,
    dec: Option<JoinHandle<()>>,
    handoff: &Handoff,
    out: Option<&mut Collector<'_>>,
) -> (u64, u64) {
    let mut bufs = Default::default();
    if let Some(c) = out {
        while !(handles.iter().all(|h| h.is_finished())
            && dec.as_ref().is_none_or(|d| d.is_finished()))
        {
            std::thread::sleep(stream::DRAIN_EVERY);
            handoff.drain(c, Time::MAX, &mut bufs);
        }
    }
    let (mut cs, mut mig) = (0, 0);
    for h in handles {
        match h.join() {
            Ok((c, m)) => {
                cs += c;
                mig += m;
            }
            Err(_) => sh.fail("a worker thread died".into()),
        }
    }
    if let Some(d) = dec {
        let _ = d.join();
    }
    (cs, mig)
}

/// The ledger's account of the run into `r`: jobs, counters, the policy's own counters and
/// the intervals the executors recorded; a streamed run's last records to `out`.
fn account(
    led: Ledger<'static>,
    end: Time,
    mut intervals: Vec<Interval>,
    handoff: &Handoff,
    out: Option<&mut Collector<'_>>,
    r: &mut RunResult,
) {
    let done = led.finish(end);
    done.fill_counters(&mut r.counters);
    done.fill_measurements(&mut r.measurements);
    for (k, v) in &done.stats {
        r.measurements.insert(format!("policy.{k}"), *v);
    }
    if done.charged > 0 {
        r.measurements
            .insert("policy.charged_ns".into(), done.charged as f64);
    }
    r.end = end;
    r.jobs = done.jobs;
    // The ledger's chain records (crate::chains' rule, told as the run went, real timestamps);
    // a streamed run's went to the handoff as they were made.
    r.chains = done.chains;
    if let Some(c) = out {
        // What the threads decided last, and the undecided stretch the ledger emitted at
        // its end: final now, with the run's end.
        handoff.drain(c, end, &mut Default::default());
    }
    intervals.sort_by_key(|i| (i.start, i.cpu));
    r.intervals = intervals;
}

/// A timed event due by `now` that [`Shared::decide`] handles next.
#[derive(Debug, PartialEq)]
enum Due {
    Abort,
    Release(usize),
}

/// The earliest of the earliest pending abort (`abort`) and the tasks' next releases that are
/// due by `now`: an abort first at a tie, releases of one instant in task order.
fn next_due(
    abort: Option<Time>,
    next_release: &[Time],
    releasing: impl Fn(Time) -> bool,
    now: Time,
) -> Option<Due> {
    let release = (0..next_release.len())
        .filter(|&t| next_release[t] <= now && releasing(next_release[t]))
        .min_by_key(|&t| (next_release[t], t));
    match (abort.filter(|&d| d <= now), release) {
        (Some(d), r) if r.is_none_or(|t| d <= next_release[t]) => Some(Due::Abort),
        (_, Some(t)) => Some(Due::Release(t)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
