//! kernel:scx:POLICY, the user-space mode of rtsched's sched_ext scheduler (in the pattern of
//! scx_rustland): the ledger and the policy decide in this process, as on the testbed
//! ([`crate::userspace`]), but an entity is executed by its own kernel thread — lane k of its
//! task runs thread k of every region ([`crate::lanes`]), as in the kernel backends — under
//! SCHED_EXT, and the BPF scheduler puts on each CPU only the thread decided for it. A
//! decision is passed to the kernel by writing the chosen thread into the `choice` map and
//! kicking the CPU ([`crate::scx::Registry`]); the lane thread learns of it through its futex
//! word. Stop-the-world model only: the decider is a SCHED_FIFO thread, above every SCHED_EXT
//! thread.
//!
//! Measured beyond the testbed's figures: the decision-to-dispatch latency (the policy
//! published an assignment; the kernel put the chosen thread on the CPU) and how often the
//! thread was found on another CPU than decided.

use crate::lanes::lane_wcets;
use crate::options::{GlobalModel, RunError, RunOptions};
use crate::perf;
use crate::samples::Samples;
use crate::scx::{self, Declared, Registry, Session, Tally};
use crate::stream::Collector;
use crate::sys::{self, ThreadCounters};
use crate::userspace::{self, serve, spawn_executor, Executors, Served, Shared, State};
use rtsched_model::results::{RunResult, LEDGER_COUNTERS};
use rtsched_model::{TaskSet, Time};
use rtsched_policies::{EntityId, EntityInfo, Policy};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

thread_local! {
    /// The `critical` word of the calling lane thread's registry slot.
    static CRITICAL: std::cell::Cell<Option<*const AtomicU64>> = const { std::cell::Cell::new(None) };
}

/// The executors of kernel:scx:POLICY: one kernel thread per lane of every task.
pub(crate) struct ScxLanes {
    registry: Arc<Registry>,
    /// Per task, its lane threads' registry counters.
    tally: Arc<Tally>,
    lanes: Vec<Lane>,
    /// First lane of each task (its lanes are consecutive, one per thread of its widest region).
    first: Vec<usize>,
}

#[derive(Default)]
struct Lane {
    task: usize,
    /// What it registers: its task's period and deadline, its own WCET per job.
    period: Time,
    deadline: Time,
    wcet: Time,
    /// The kernel thread's tid and registry slot (+ 1; 0 until registered).
    tid: AtomicU32,
    slot: AtomicU64,
    /// The CPU it was decided for, + 1 (0: none); its futex word.
    cpu: AtomicU32,
    word: AtomicU32,
    /// When the policy last took a CPU from it (CLOCK_MONOTONIC ns).
    lost_at: AtomicU64,
}

/// What the lanes keep under the state lock.
pub(crate) struct Dispatches {
    /// Assignments published since they were last passed to the kernel.
    published: Vec<(usize, Option<EntityId>)>,
    /// The lane each CPU was last told to run.
    chosen: Vec<Option<usize>>,
    /// Decision to the chosen thread running on its CPU; and how often it was found on
    /// another CPU.
    latency_ns: Samples,
    wrong_cpu: u64,
}

/// A lane thread calling [`serve`]: its lane, and whether its CPU's assignment is new to it.
#[derive(Clone, Copy)]
pub(crate) struct LaneCall {
    lane: usize,
    fresh: bool,
}

impl Executors for ScxLanes {
    type Locked = Dispatches;
    type Caller = LaneCall;
    /// The lane threads register before the first decision.
    const SETTLE: Time = 200_000_000;
    const SUBSTRATE: &'static str = "kernel";
    const PREFIX: &'static str = "kernel:scx";
    const UNMEASURED: &'static [&'static str] = &LEDGER_COUNTERS;
    /// The kernel queues the task threads where it wakes them: not the ledger's run queues.
    const PULLS: bool = false;

    fn start(sh: &Arc<Shared<Self>>, handles: &mut Vec<JoinHandle<(u64, u64)>>) {
        let x = &sh.ex;
        for k in 0..x.lanes.len() {
            if !spawn_executor(
                sh,
                handles,
                format!("rtsched-lane{k}"),
                format!("lane thread {k}"),
                move |sh| lane_worker(sh, k),
            ) {
                break;
            }
        }
        // The decider passes decisions to registered threads only: wait for every lane.
        let give_up = sys::mono_ns() + 2_000_000_000;
        while x.lanes.iter().any(|l| l.slot.load(Ordering::SeqCst) == 0) && !sh.stopping() {
            if sys::mono_ns() > give_up {
                sh.fail(
                    "the task threads did not register with the sched_ext scheduler within 2 s"
                        .into(),
                );
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn published(d: &mut Dispatches, cpu: usize, e: Option<EntityId>) {
        d.published.push((cpu, e));
    }

    /// Pass the assignments published since the last call to the kernel: each CPU's chosen
    /// thread into the `choice` map, a kick to each CPU, a wake-up to each lane thread whose
    /// CPU changed.
    fn pass_on(sh: &Shared<Self>, st: &mut State<Self>) {
        let x = &sh.ex;
        let State { led, boxes, ex, .. } = st;
        let published = std::mem::take(&mut ex.published);
        for &(c, e) in &published {
            let lane = e.map(|e| {
                let i = led.run.ent(e).info;
                x.first[i.task as usize] + i.thread as usize
            });
            if let Some(old) = ex.chosen[c] {
                if lane != Some(old) {
                    x.take_from(old, c, boxes.decided_at[c]);
                }
            }
            ex.chosen[c] = lane;
            match lane {
                Some(k) => x.give(k, c),
                None => x.registry.choose(c, 0, None),
            }
            if let Err(e) = x.registry.kick(c) {
                sh.fail(format!(
                    "cannot kick CPU {c} through the sched_ext scheduler: {e}"
                ));
            }
        }
        ex.published = published;
        ex.published.clear();
    }

    fn wake_all(&self) {
        for l in &self.lanes {
            l.word.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&l.word);
        }
    }

    /// A lane thread that waits for or holds the state lock must not be left off the CPUs by
    /// the scheduler it serves (the decider would wait for it for ever): its slot says so
    /// while it does, and the BPF scheduler runs it before any choice (see `critical` in
    /// bpf/rtsched.bpf.c).
    fn lock_mark() -> Option<*const AtomicU64> {
        CRITICAL.with(|c| c.get())
    }

    fn serves(&self, caller: LaneCall, info: &EntityInfo) -> bool {
        self.first[info.task as usize] + info.thread as usize == caller.lane
    }

    fn dispatched(caller: LaneCall, cpu: usize, st: &mut State<Self>) {
        if !caller.fresh {
            return;
        }
        // Decision to dispatch: the policy published this assignment at decided_at; the
        // kernel has now put the chosen thread on the CPU (it is running this code).
        let lat = sys::mono_ns().saturating_sub(st.boxes.decided_at[cpu]);
        st.ex.latency_ns.push(lat);
        // SAFETY: plain query of the calling thread.
        if unsafe { libc::sched_getcpu() } != cpu as i32 {
            st.ex.wrong_cpu += 1;
        }
    }

    /// A lane thread learns of its preemption only when it runs again, which may be much
    /// later: its interval ends when the kernel was told to take its CPU.
    fn taken_at(&self, caller: LaneCall, t0: u64, started: Time, end: Time) -> Time {
        let lost = self.lanes[caller.lane]
            .lost_at
            .load(Ordering::SeqCst)
            .saturating_sub(t0);
        if lost > started {
            end.min(lost)
        } else {
            end
        }
    }

    fn report(d: &mut Dispatches, r: &mut RunResult) {
        d.latency_ns
            .report("scx.dispatch_latency", &mut r.measurements);
        r.measurements
            .insert("scx.dispatch_wrong_cpu".into(), d.wrong_cpu as f64);
    }
}

impl ScxLanes {
    /// Lane `old` loses CPU `c` (decided at `decided_at`): out of the `choice` map if it was
    /// still chosen there, and told.
    fn take_from(&self, old: usize, c: usize, decided_at: u64) {
        let l = &self.lanes[old];
        l.lost_at.store(decided_at, Ordering::SeqCst);
        if l.cpu.load(Ordering::SeqCst) == c as u32 + 1 {
            l.cpu.store(0, Ordering::SeqCst);
            if let Some(s) = (l.slot.load(Ordering::SeqCst) as usize).checked_sub(1) {
                self.registry.unchoose(s);
            }
        }
        l.word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&l.word);
    }

    /// Lane `k` is CPU `c`'s choice: into the `choice` map, and told.
    fn give(&self, k: usize, c: usize) {
        let l = &self.lanes[k];
        l.cpu.store(c as u32 + 1, Ordering::SeqCst);
        self.registry.choose(
            c,
            l.tid.load(Ordering::SeqCst),
            (l.slot.load(Ordering::SeqCst) as usize).checked_sub(1),
        );
        l.word.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&l.word);
    }
}

/// The kernel thread of lane `k`. It registers with the sched_ext scheduler and switches to
/// SCHED_EXT, then runs whatever entity of its lane the policy put on a CPU -- the kernel runs
/// it on that CPU only when the BPF scheduler dispatches it there.
fn lane_worker(sh: &Shared<ScxLanes>, k: usize) -> (u64, u64) {
    let x = &sh.ex;
    let l = &x.lanes[k];
    let Some(slot) = register(sh, k) else {
        return (0, 0);
    };
    let counters = ThreadCounters::open();
    let hw = sh.hw_event.and_then(perf::HwGroup::open_for_thread);
    sys::sleep_until(sh.t0, &sh.stop);
    let mut last = 0u64;
    while !sh.stopping() {
        let w = l.word.load(Ordering::SeqCst);
        let Some(cpu) = (l.cpu.load(Ordering::SeqCst) as usize).checked_sub(1) else {
            sys::futex_wait_until(&l.word, w, None);
            continue;
        };
        let a = sh.cpus[cpu].assign.load(Ordering::SeqCst);
        let e = (a & 0xffff_ffff) as u32;
        if e == 0 {
            sys::futex_wait_until(&l.word, w, Some(sys::mono_ns() + 1_000_000));
            continue;
        }
        let caller = LaneCall {
            lane: k,
            fresh: a != last,
        };
        match serve(sh, cpu, a, e - 1, &hw, caller) {
            Served::Retry => {}
            Served::Ran => last = a,
            Served::Wait => sys::futex_wait_until(&l.word, w, Some(sys::mono_ns() + 1_000_000)),
        }
    }
    // Back to the fair class before leaving the registry.
    CRITICAL.with(|c| c.set(None));
    let _ = sys::set_other(sys::gettid());
    x.tally.add(l.task, x.registry.unregister(slot));
    counters.read()
}

/// Register the calling thread as lane `k` and switch it to SCHED_EXT; its registry slot, or
/// `None` (the run failed).
fn register(sh: &Shared<ScxLanes>, k: usize) -> Option<usize> {
    let x = &sh.ex;
    let l = &x.lanes[k];
    let tid = sys::gettid();
    let d = Declared {
        period: l.period,
        deadline: l.deadline,
        wcet: l.wcet,
        cpu: None,
    };
    let slot = match x.registry.register(tid, d) {
        Ok(s) => s,
        Err(e) => {
            sh.fail(format!("task {}: {e}", l.task));
            return None;
        }
    };
    l.tid.store(tid as u32, Ordering::SeqCst);
    l.slot.store(slot as u64 + 1, Ordering::SeqCst);
    CRITICAL.with(|c| c.set(Some(&x.registry.slot(slot).critical as *const AtomicU64)));
    if let Err(e) = sys::set_ext(tid) {
        let _ = x.registry.unregister(slot);
        sh.fail(format!("cannot switch a task thread to SCHED_EXT: {e}"));
        return None;
    }
    Some(slot)
}

/// Every task's lanes, in task order, and the first lane of each task.
fn lanes(ts: &TaskSet) -> (Vec<Lane>, Vec<usize>) {
    let mut lanes = Vec::new();
    let mut first = Vec::new();
    for (ti, t) in ts.tasks.iter().enumerate() {
        first.push(lanes.len());
        for w in lane_wcets(&t.program()) {
            lanes.push(Lane {
                task: ti,
                period: t.period,
                deadline: t.deadline,
                wcet: w,
                ..Default::default()
            });
        }
    }
    (lanes, first)
}

/// Run `ts` under `policy` deciding in user space, rtsched's sched_ext scheduler (in its
/// user-space mode) dispatching each task's own SCHED_EXT threads as decided; its records
/// streamed to `out` as its jobs end instead of held (`None`: held).
pub(crate) fn run_into(
    ts: &TaskSet,
    policy: Box<dyn Policy>,
    opts: &RunOptions,
    out: Option<&mut Collector<'_>>,
) -> Result<RunResult, RunError> {
    if opts.model != GlobalModel::StopTheWorld {
        return Err(RunError::Input("kernel:scx:POLICY decides in one user-space decider (stop-the-world); the concurrent model is the testbed's".into()));
    }
    scx::admission(ts, None)?;
    let session = Session::start("user").map_err(RunError::Input)?;
    let registry = Arc::new(
        Registry::open(&session.pin, sys::online_cpus() as u32)
            .map_err(|e| RunError::Failed(format!("cannot open the sched_ext registry: {e}")))?,
    );
    let (lanes, first) = lanes(ts);
    let tally = Arc::new(Tally::new(ts.tasks.len()));
    let m = ts.platform.cpus as usize;
    let dispatches = Dispatches {
        published: Vec::with_capacity(m),
        chosen: vec![None; m],
        latency_ns: Samples::default(),
        wrong_cpu: 0,
    };
    let executors = ScxLanes {
        registry,
        tally: tally.clone(),
        lanes,
        first,
    };
    let r = userspace::run_on(ts, policy, opts, executors, dispatches, out);
    let stats = session.stop().map_err(RunError::Failed);
    let mut r = r?;
    r.measurements.extend(stats?);
    tally.report(&r.task_names, &mut r.measurements);
    Ok(r)
}
