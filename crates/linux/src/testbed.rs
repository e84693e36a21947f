//! The testbed: rtsched policies decide, real cores execute.
//!
//! One worker thread per CPU, pinned and under SCHED_FIFO, executes whatever entity the policy
//! linked to its CPU. Work is cooperative ([`crate::work`]): the worker burns the entity's
//! remaining demand in thread CPU time in short chunks and, between chunks, checks whether its
//! CPU's assignment changed — so preemptions, migrations and aborts decided by any policy are
//! enforced within a chunk. An entity is never run by two workers at once: a worker that is
//! handed an entity still being stopped elsewhere waits for it.
//!
//! Both ChronOS global models (ChronOS §4):
//! - **stop-the-world**: one decider thread (SCHED_FIFO, above the workers) handles every
//!   event — releases on its timer, completions reported by workers — runs the policy and
//!   notifies the CPUs whose assignment changed;
//! - **application-concurrent**: no decider; the worker that sees an event (its entity
//!   completed, or a release/abort time passed) runs the policy itself under the one lock.
//!
//! The bookkeeping mirrors the simulator's (same jobs from the same seeded streams, same
//! counting rules for preemptions, migrations and context switches at the decision level),
//! and measures what only a real run has: decision overhead, release jitter, preemption
//! latency (decision to the victim stopping) and the worker threads' kernel counters.

use crate::sys::{self, ThreadCounters};
use crate::{interrupted, work, GlobalModel, RunError, RunOptions};
use rtsched_model::results::{Interval, JobRecord, RunResult};
use rtsched_model::{OnMiss, TaskSet, Time};
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy};
use rtsched_sim::exec::TaskStreams;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

const NONE: u32 = u32::MAX;
const WORKER_PRIO: u32 = 50;
const DECIDER_PRIO: u32 = 60;

/// Per-CPU mailbox: the assignment (epoch << 32 | entity + 1, 0 = idle) and a futex word.
struct CpuCell {
    assign: AtomicU64,
    word: AtomicU32,
}

#[derive(Clone, Copy)]
struct Ent {
    info: EntityInfo,
    generation: u32,
    live: bool,
    remaining: Time,
    rec: u32,
    /// The worker executing it right now (NONE if none).
    running_on: u32,
    /// Decision level: the CPU it was last linked to.
    last_cpu: u32,
    /// Aborted while a worker ran it: that worker frees the slot when it stops.
    free_when_stopped: bool,
    /// Released while an earlier job of its task is live: not yet given to the policy (jobs of
    /// one task run one after another, as in the simulator).
    held: bool,
}

struct State {
    policy: Box<dyn Policy>,
    dispatch: Dispatch,
    ents: Vec<Ent>,
    free: Vec<u32>,
    jobs: Vec<JobRecord>,
    intervals: Vec<Interval>,
    streams: Vec<TaskStreams>,
    next_release: Vec<Time>,
    next_job: Vec<u64>,
    task_busy: Vec<bool>,
    held: Vec<std::collections::VecDeque<u32>>,
    aborts: BinaryHeap<Reverse<(Time, u32, u32)>>,
    completions: Vec<(u32, u32, Time)>,
    undecided: u64,
    invocations: u64,
    /// Decision-level view per CPU.
    linked: Vec<Option<EntityId>>,
    epoch: Vec<u32>,
    last_ent: Vec<u64>,
    decided_at: Vec<u64>,
    dirty: Vec<u32>,
    policy_aborts: Vec<EntityId>,
    decision_ns: Vec<u64>,
    jitter_ns: Vec<u64>,
    preempt_latency_ns: Vec<u64>,
    done: bool,
    end: Time,
}

struct Shared {
    workloads: Vec<Arc<work::Workload>>,
    ts: TaskSet,
    t0: u64,
    limit: Time,
    model: GlobalModel,
    record: bool,
    stop: AtomicBool,
    cpus: Vec<CpuCell>,
    decider_word: AtomicU32,
    /// Next timed event (release or abort), ns since t0.
    next_event: AtomicU64,
    st: Mutex<State>,
    failure: Mutex<Option<String>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn now(&self) -> Time {
        sys::mono_ns().saturating_sub(self.t0)
    }
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || interrupted()
    }
    fn fail(&self, msg: String) {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(msg);
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
    }

    /// Application-concurrent model: the calling worker decides, under the lock it holds, and
    /// ends the run for everyone when every counted job is decided.
    fn decide_here(&self, mut st: MutexGuard<'_, State>) {
        let now = self.now();
        if !st.done {
            self.decide(&mut st, now);
        }
        if st.done {
            self.stop.store(true, Ordering::SeqCst);
            drop(st);
            self.wake_all();
        }
    }

    /// Handle every event due at `now` and let the policy decide; publish the new assignments.
    /// Called with the state lock held, by the decider or (concurrent model) by a worker.
    fn decide(&self, st: &mut State, now: Time) {
        let began = sys::mono_ns();
        let duration = self.ts.run.duration;
        // Completions reported by workers.
        let completions = std::mem::take(&mut st.completions);
        for &(e, generation, finish) in &completions {
            let ent = st.ents[e as usize];
            if !ent.live || ent.generation != generation {
                continue;
            }
            st.ents[e as usize].live = false;
            if ent.rec != NONE {
                let r = &mut st.jobs[ent.rec as usize];
                r.finish = Some(finish);
                r.missed = finish > r.deadline;
                st.undecided -= 1;
            }
            st.free.push(e);
            match st.linked.iter().position(|l| *l == Some(e)) {
                Some(c) => {
                    st.linked[c] = None;
                    st.dispatch.vacate(c as u32);
                    st.policy.complete(now, e, c as u32);
                }
                // It finished in the instant it was being preempted: to the policy it is gone.
                None => st.policy.aborted(now, e),
            }
            self.next_of_task(st, now, ent.info.task);
        }
        st.completions = completions;
        st.completions.clear();
        // Deadline aborts.
        while let Some(&Reverse((d, e, generation))) = st.aborts.peek() {
            if d > now {
                break;
            }
            st.aborts.pop();
            if st.ents[e as usize].live && st.ents[e as usize].generation == generation {
                self.abort(st, now, e);
            }
        }
        // Releases.
        for t in 0..self.ts.tasks.len() {
            while st.next_release[t] <= now && (st.next_release[t] < duration || st.undecided > 0) {
                let release = st.next_release[t];
                st.jitter_ns.push(now - release);
                self.release(st, now, t as u32, release);
            }
        }
        loop {
            st.invocations += 1;
            st.policy.schedule(now, &mut st.dispatch);
            self.apply(st);
            st.dispatch.take_aborts(&mut st.policy_aborts);
            if st.policy_aborts.is_empty() {
                break;
            }
            let aborts = std::mem::take(&mut st.policy_aborts);
            for &e in &aborts {
                if st.ents[e as usize].live {
                    self.abort(st, now, e);
                }
            }
            st.policy_aborts = aborts;
        }
        let next_rel = (0..self.ts.tasks.len())
            .map(|t| st.next_release[t])
            .filter(|&r| r < duration || st.undecided > 0)
            .min()
            .unwrap_or(u64::MAX);
        let next_abort = st.aborts.peek().map_or(u64::MAX, |Reverse((d, _, _))| *d);
        let next = next_rel.min(next_abort);
        let before = self.next_event.swap(next, Ordering::SeqCst);
        if self.model == GlobalModel::Concurrent && next < before {
            // Idle workers sleep until the next event they knew of: tell them it moved earlier.
            for (c, cell) in self.cpus.iter().enumerate() {
                if st.linked[c].is_none() {
                    cell.word.fetch_add(1, Ordering::SeqCst);
                    sys::futex_wake(&cell.word);
                }
            }
        }
        if (st.undecided == 0 && next_rel >= duration) || now > self.limit {
            st.done = true;
            st.end = now.min(self.limit);
        }
        st.decision_ns.push(sys::mono_ns() - began);
    }

    fn release(&self, st: &mut State, now: Time, task: u32, release: Time) {
        let t = &self.ts.tasks[task as usize];
        let job = st.next_job[task as usize];
        st.next_job[task as usize] += 1;
        let demand = st.streams[task as usize].demand(&self.ts.run.execution, t.wcet);
        st.next_release[task as usize] = release + st.streams[task as usize].interarrival(t);
        let deadline = release + t.deadline;
        let slot = match st.free.pop() {
            Some(s) => s,
            None => {
                st.ents.push(Ent { info: EntityInfo { id: 0, task: 0, job: 0, region: 0, thread: 0, release: 0, deadline: 0 }, generation: 0, live: false, remaining: 0, rec: NONE, running_on: NONE, last_cpu: NONE, free_when_stopped: false, held: false });
                (st.ents.len() - 1) as u32
            }
        };
        let rec = if release < self.ts.run.duration {
            st.jobs.push(JobRecord { task, job, release, deadline, demand, ..Default::default() });
            st.undecided += 1;
            (st.jobs.len() - 1) as u32
        } else {
            NONE
        };
        let info = EntityInfo { id: slot, task, job, region: 0, thread: 0, release, deadline };
        let generation = st.ents[slot as usize].generation.wrapping_add(1);
        let held = st.task_busy[task as usize];
        st.ents[slot as usize] = Ent { info, generation, live: true, remaining: demand, rec, running_on: NONE, last_cpu: NONE, free_when_stopped: false, held };
        if self.ts.run.on_miss == OnMiss::Abort {
            st.aborts.push(Reverse((deadline, slot, generation)));
        }
        if held {
            st.held[task as usize].push_back(slot);
        } else {
            st.task_busy[task as usize] = true;
            st.policy.release(now, &info);
        }
    }

    /// The job of `task` the policy knew ended: give it the next held job, if any.
    fn next_of_task(&self, st: &mut State, now: Time, task: u32) {
        match st.held[task as usize].pop_front() {
            Some(slot) => {
                st.ents[slot as usize].held = false;
                let info = st.ents[slot as usize].info;
                st.policy.release(now, &info);
            }
            None => st.task_busy[task as usize] = false,
        }
    }

    fn abort(&self, st: &mut State, now: Time, e: EntityId) {
        let (held, task) = (st.ents[e as usize].held, st.ents[e as usize].info.task);
        if held {
            // Never given to the policy: drop it from its task's queue, tell nobody.
            st.held[task as usize].retain(|&s| s != e);
        }
        if let Some(c) = st.linked.iter().position(|l| *l == Some(e)) {
            st.linked[c] = None;
            st.dispatch.vacate(c as u32);
            self.publish(st, c, None);
        }
        let ent = &mut st.ents[e as usize];
        ent.live = false;
        if ent.rec != NONE {
            let r = &mut st.jobs[ent.rec as usize];
            r.aborted = true;
            r.missed = true;
            st.undecided -= 1;
        }
        // The slot is reused only once no worker still runs it (see `worker`).
        if ent.running_on == NONE {
            st.free.push(e);
        } else {
            ent.free_when_stopped = true;
        }
        if !held {
            st.policy.aborted(now, e);
            self.next_of_task(st, now, task);
        }
    }

    fn publish(&self, st: &mut State, cpu: usize, e: Option<EntityId>) {
        st.epoch[cpu] = st.epoch[cpu].wrapping_add(1);
        let v = ((st.epoch[cpu] as u64) << 32) | e.map_or(0, |x| x as u64 + 1);
        st.decided_at[cpu] = sys::mono_ns();
        self.cpus[cpu].assign.store(v, Ordering::SeqCst);
        self.cpus[cpu].word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.cpus[cpu].word);
    }

    /// Apply the policy's decisions, counting as the simulator does.
    fn apply(&self, st: &mut State) {
        let mut dirty = std::mem::take(&mut st.dirty);
        st.dispatch.take_dirty(&mut dirty);
        let mut stopped: Vec<EntityId> = Vec::new();
        for &cpu in &dirty {
            let c = cpu as usize;
            let new = st.dispatch.current(cpu);
            if new == st.linked[c] {
                continue;
            }
            if let Some(o) = st.linked[c] {
                stopped.push(o);
            }
            st.linked[c] = new;
            if let Some(e) = new {
                let ent = &mut st.ents[e as usize];
                assert!(ent.live, "policy dispatched entity {e}, which is not live");
                let id = ((ent.generation as u64) << 32) | e as u64;
                let switched = st.last_ent[c] != id;
                let migrated = ent.last_cpu != NONE && ent.last_cpu != cpu;
                ent.last_cpu = cpu;
                st.last_ent[c] = id;
                if ent.rec != NONE {
                    let r = &mut st.jobs[ent.rec as usize];
                    r.cpus.insert(cpu);
                    r.context_switches += switched as u32;
                    r.migrations += migrated as u32;
                }
            }
            self.publish(st, c, new);
        }
        for o in stopped {
            let on_cpu = st.linked.contains(&Some(o));
            assert!(st.linked.iter().filter(|l| **l == Some(o)).count() <= 1, "policy put entity {o} on two CPUs");
            let ent = st.ents[o as usize];
            if !on_cpu && ent.live && ent.rec != NONE {
                st.jobs[ent.rec as usize].preemptions += 1;
            }
        }
        st.dirty = dirty;
    }
}

fn worker(sh: &Shared, cpu: usize) -> (u64, u64) {
    let tid = sys::gettid();
    if let Err(e) = sys::set_affinity(tid, Some(cpu)).and_then(|_| sys::set_fifo(tid, WORKER_PRIO)) {
        sh.fail(format!("worker for CPU {cpu}: cannot pin and set SCHED_FIFO: {e}"));
        return (0, 0);
    }
    let counters = ThreadCounters::open();
    let cell = &sh.cpus[cpu];
    let concurrent = sh.model == GlobalModel::Concurrent;
    sys::sleep_until(sh.t0, &sh.stop);
    while !sh.stopping() {
        let w = cell.word.load(Ordering::SeqCst);
        let a = cell.assign.load(Ordering::SeqCst);
        let slot = (a & 0xffff_ffff) as u32;
        if concurrent {
            let due = sh.next_event.load(Ordering::SeqCst);
            if sh.now() >= due {
                sh.decide_here(sh.lock());
                continue;
            }
        }
        if slot == 0 {
            let wake = if concurrent { Some(sh.t0 + sh.next_event.load(Ordering::SeqCst).min(sh.limit + 1)) } else { Some(sys::mono_ns() + 50_000_000) };
            sys::futex_wait_until(&cell.word, w, wake);
            continue;
        }
        let e = slot - 1;
        // Take the entity, unless another worker still has it (it is being preempted there).
        let (remaining, generation, task) = {
            let mut st = sh.lock();
            if cell.assign.load(Ordering::SeqCst) != a {
                continue;
            }
            let ent = st.ents[e as usize];
            if !ent.live || ent.remaining == 0 {
                // Gone, or its completion is on its way to the decider: wait for news.
                drop(st);
                sys::futex_wait_until(&cell.word, w, Some(sys::mono_ns() + 1_000_000));
                continue;
            }
            if ent.running_on != NONE {
                drop(st);
                std::hint::spin_loop();
                continue;
            }
            st.ents[e as usize].running_on = cpu as u32;
            let now = sh.now();
            if ent.rec != NONE {
                st.jobs[ent.rec as usize].start.get_or_insert(now);
            }
            (ent.remaining, ent.generation, ent.info.task as usize)
        };
        let started = sh.now();
        let (used, completed) = sh.workloads[task].execute(
            remaining,
            || {
                cell.assign.load(Ordering::Relaxed) != a
                    || sh.stop.load(Ordering::Relaxed)
                    || (concurrent && sh.now() >= sh.next_event.load(Ordering::Relaxed))
            },
            |_| {},
        );
        let t = sh.now();
        let mut st = sh.lock();
        let ent = st.ents[e as usize];
        assert_eq!(ent.generation, generation, "a slot was reused while a worker ran it");
        st.ents[e as usize].running_on = NONE;
        if sh.record && t > started {
            st.intervals.push(Interval { cpu: cpu as u32, task: ent.info.task, job: ent.info.job, thread: 0, start: started, end: t });
        }
        st.ents[e as usize].remaining = remaining.saturating_sub(used);
        if !ent.live {
            if ent.free_when_stopped {
                // Aborted while it ran: now that no worker has it, its slot may be reused.
                st.ents[e as usize].free_when_stopped = false;
                st.free.push(e);
            }
            continue;
        }
        if completed {
            st.completions.push((e, generation, t));
        } else if cell.assign.load(Ordering::SeqCst) != a {
            let lat = sys::mono_ns().saturating_sub(st.decided_at[cpu]);
            st.preempt_latency_ns.push(lat);
        }
        if concurrent {
            if completed {
                sh.decide_here(st);
            }
        } else if completed {
            drop(st);
            sh.decider_word.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&sh.decider_word);
        }
    }
    counters.read()
}

fn decider(sh: &Shared) {
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

/// Median, p99 (nearest rank) and max of a sample, under `name.*`.
pub(crate) fn put_stats(r: &mut RunResult, name: &str, xs: &mut [u64]) {
    if xs.is_empty() {
        return;
    }
    xs.sort_unstable();
    let rank = |q: f64| xs[((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1] as f64;
    r.measurements.insert(format!("{name}.median_ns"), rank(0.5));
    r.measurements.insert(format!("{name}.p99_ns"), rank(0.99));
    r.measurements.insert(format!("{name}.max_ns"), *xs.last().unwrap() as f64);
    r.measurements.insert(format!("{name}.count"), xs.len() as f64);
}

/// Start delay of thread-per-task runs: how late a job's thread began it after its release,
/// over jobs whose thread was idle at the release (otherwise the previous job delays it). It
/// includes both wake-up latency and waiting behind more urgent threads.
pub(crate) fn add_start_delay(r: &mut RunResult) {
    let mut last_finish = vec![0u64; r.task_names.len()];
    let mut xs = Vec::new();
    for j in &r.jobs {
        if let Some(s) = j.start {
            if last_finish[j.task as usize] <= j.release {
                xs.push(s.saturating_sub(j.release));
            }
        }
        last_finish[j.task as usize] = j.finish.unwrap_or(u64::MAX);
    }
    put_stats(r, "start_delay", &mut xs);
}

pub fn run(ts: &TaskSet, spec: &str, opts: &RunOptions) -> Result<RunResult, RunError> {
    let m = ts.platform.cpus as usize;
    let policy = rtsched_policies::build(spec, ts).map_err(RunError::Input)?;
    let label = policy.name();
    let n = ts.tasks.len();
    let drain = ts.tasks.iter().map(|t| t.deadline.max(t.max_interarrival.unwrap_or(t.period))).max().unwrap_or(0) * 2;
    let st = State {
        policy,
        dispatch: Dispatch::new(m as u32),
        ents: Vec::with_capacity(2 * n + m),
        free: Vec::new(),
        jobs: Vec::new(),
        intervals: Vec::new(),
        streams: (0..n as u32).map(|i| TaskStreams::new(ts.run.seed, i)).collect(),
        next_release: ts.tasks.iter().map(|t| t.offset).collect(),
        next_job: vec![0; n],
        task_busy: vec![false; n],
        held: (0..n).map(|_| Default::default()).collect(),
        aborts: BinaryHeap::new(),
        completions: Vec::new(),
        undecided: 0,
        invocations: 0,
        linked: vec![None; m],
        epoch: vec![0; m],
        last_ent: vec![u64::MAX; m],
        decided_at: vec![0; m],
        dirty: Vec::with_capacity(m),
        policy_aborts: Vec::new(),
        decision_ns: Vec::new(),
        jitter_ns: Vec::new(),
        preempt_latency_ns: Vec::new(),
        done: false,
        end: 0,
    };
    let first = ts.tasks.iter().map(|t| t.offset).min().unwrap_or(0);
    let workloads = work::Workload::for_taskset(ts);
    let sh = Arc::new(Shared {
        workloads,
        ts: ts.clone(),
        t0: sys::mono_ns() + 20_000_000,
        limit: ts.run.duration + drain,
        model: opts.model,
        record: opts.record_intervals,
        stop: AtomicBool::new(false),
        cpus: (0..m).map(|_| CpuCell { assign: AtomicU64::new(0), word: AtomicU32::new(0) }).collect(),
        decider_word: AtomicU32::new(0),
        next_event: AtomicU64::new(first),
        st: Mutex::new(st),
        failure: Mutex::new(None),
    });
    let mut handles = Vec::new();
    for cpu in 0..m {
        let sh2 = sh.clone();
        let h = std::thread::Builder::new().name(format!("rtsched-cpu{cpu}")).spawn(move || {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(&sh2, cpu))) {
                Ok(c) => c,
                Err(p) => {
                    let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    sh2.fail(format!("worker for CPU {cpu} panicked: {msg}; every thread was stopped"));
                    (0, 0)
                }
            }
        });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                sh.fail(format!("cannot start a worker thread: {e}"));
                break;
            }
        }
    }
    let dec = if sh.model == GlobalModel::StopTheWorld {
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
                    sh2.fail("the decider panicked (a policy invariant failed); every thread was stopped".into());
                }
            })
            .ok()
    } else {
        None
    };
    let mut kernel_cs = 0;
    let mut kernel_mig = 0;
    for h in handles {
        match h.join() {
            Ok((cs, mig)) => {
                kernel_cs += cs;
                kernel_mig += mig;
            }
            Err(_) => sh.fail("a worker thread died".into()),
        }
    }
    if let Some(d) = dec {
        let _ = d.join();
    }
    if let Some(f) = sh.failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(RunError::Failed(f));
    }
    let sh = Arc::try_unwrap(sh).map_err(|_| RunError::Failed("a thread outlived the run".into()))?;
    let mut st = sh.st.into_inner().unwrap_or_else(|p| p.into_inner());
    let model = match opts.model {
        GlobalModel::StopTheWorld => "stw",
        GlobalModel::Concurrent => "concurrent",
    };
    let mut r = RunResult::new("testbed", &format!("testbed:{label}"), ts);
    r.measurements.insert(format!("model_{model}"), 1.0);
    let end = if st.done { st.end } else { sh.limit };
    for j in st.jobs.iter_mut() {
        if j.finish.is_none() && !j.aborted {
            j.missed = j.deadline <= end;
        }
    }
    r.end = end;
    r.jobs = std::mem::take(&mut st.jobs);
    r.intervals = std::mem::take(&mut st.intervals);
    r.intervals.sort_by_key(|i| (i.start, i.cpu));
    r.counters.scheduler_invocations = st.invocations;
    r.counters.releases = st.next_job.iter().sum();
    r.measurements.insert("kernel.worker_context_switches".into(), kernel_cs as f64);
    r.measurements.insert("kernel.worker_migrations".into(), kernel_mig as f64);
    put_stats(&mut r, "decision_overhead", &mut st.decision_ns);
    put_stats(&mut r, "release_jitter", &mut st.jitter_ns);
    put_stats(&mut r, "preemption_latency", &mut st.preempt_latency_ns);
    Ok(r)
}
