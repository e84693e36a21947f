//! One thread of one job on the calling kernel thread: its demand in pieces between its
//! checkpoints (scaled to the demand, as in the simulator), locking and unlocking there, with
//! the kernel's counters, the thread's CPU time and hardware counters around its work, and
//! the CPUs it ran on sampled into execution intervals.

use super::locks::{Held, Lock};
use crate::signal::interrupted;
use crate::sys::{self, ThreadCounters};
use crate::{perf, scx, work};
use rtsched_model::program::{scale, Action, ThreadProgram};
use rtsched_model::results::{CpuSet, HwCounters, Interval};
use rtsched_model::Time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Turns per-chunk CPU samples into execution intervals: consecutive chunks on one CPU with no
/// gap longer than `GAP` form one interval.
pub(crate) struct IntervalBuilder {
    pub cpu: u32,
    pub start: Time,
    pub last: Time,
}

pub(super) const GAP: Time = 30_000;

impl IntervalBuilder {
    pub fn sample(&mut self, cpu: u32, now: Time, out: &mut Vec<(u32, Time, Time)>) {
        if cpu != self.cpu || now.saturating_sub(self.last) > GAP {
            if self.last > self.start {
                out.push((self.cpu, self.start, self.last));
            }
            self.cpu = cpu;
            self.start = now;
        }
        self.last = now;
    }
    pub fn close(&mut self, out: &mut Vec<(u32, Time, Time)>) {
        if self.last > self.start {
            out.push((self.cpu, self.start, self.last));
        }
        self.start = self.last;
    }
}

/// What one thread of one job did (its own work only: not the task's thread's join waits).
#[derive(Default)]
pub(super) struct ThreadRun {
    /// When its work ended (run time base).
    pub(super) end: Time,
    pub(super) cpus: CpuSet,
    /// Times it was switched out (kernel counter).
    pub(super) switches: u64,
    /// Of which involuntary: preemptions.
    pub(super) preemptions: u64,
    pub(super) migrations: u64,
    pub(super) blocked: Time,
    /// Thread CPU time it spun for spin locks (`msrp`, `mrsp`): in `exec`, not in `blocked`.
    pub(super) spin: Time,
    /// CPU time beyond its demand and its spinning (CPU workload only).
    pub(super) overhead: u64,
    /// CPU time its work took (CLOCK_THREAD_CPUTIME_ID around each piece): the job's `exec`.
    pub(super) exec: Time,
    /// Hardware counters around its work (a machine with a PMU).
    pub(super) hw: Option<HwCounters>,
    pub(super) done: bool,
    pub(super) intervals: Vec<Interval>,
}

/// Held by a thread that took SCHED_DEADLINE: when it is dropped (the thread's work is over,
/// returned or unwound) the thread goes back to SCHED_OTHER, so its reservation is given back
/// on the kernel's ordinary path (at its 0-lag time) before the run returns.
pub(super) struct Reservation;

impl Drop for Reservation {
    fn drop(&mut self) {
        let _ = sys::set_other(sys::gettid());
    }
}

/// What every kernel thread of one task needs to run its work.
pub(super) struct Ctx {
    /// SCHED_DEADLINE's reservation, given back when the thread's context is dropped.
    pub(super) _reservation: Option<Reservation>,
    pub(super) task: u32,
    pub(super) workload: Arc<work::Workload>,
    /// This thread's hardware counters, if the run's probe found a PMU.
    pub(super) hw: Option<perf::HwGroup>,
    pub(super) locks: Arc<Vec<Lock>>,
    /// Its SCHED_FIFO priority under kernel:fifo (0 otherwise): what a spin lock's section
    /// goes back to.
    pub(super) prio: u32,
    /// Set when any thread of the run panicked: every other stops too.
    pub(super) failed: Arc<AtomicBool>,
    pub(super) base: Time,
    pub(super) limit: Time,
    pub(super) record: bool,
    /// This thread's slot in the sched_ext registry (kernel:scx-*).
    pub(super) scx: Option<ScxSlot>,
}

/// A registered thread's slot; leaving the registry when the thread ends.
pub(super) struct ScxSlot {
    pub(super) registry: Arc<scx::Registry>,
    pub(super) slot: usize,
    pub(super) tally: Arc<scx::Tally>,
    pub(super) task: usize,
}

impl ScxSlot {
    /// Mark job `job` (absolute deadline `abs_deadline`) for this thread and for the task's
    /// helpers registered in `helpers` (slot + 1 each, 0: none).
    pub(super) fn job_for_lanes(
        &self,
        helpers: &[std::sync::atomic::AtomicUsize],
        abs_deadline: Time,
        job: u64,
    ) {
        self.registry.job(self.slot, abs_deadline, job);
        for s in helpers {
            match s.load(Ordering::SeqCst) {
                0 => {}
                k => self.registry.job(k - 1, abs_deadline, job),
            }
        }
    }
}

impl Drop for ScxSlot {
    /// Run on the registered thread as it ends: fair again first, so that it never waits as a
    /// real-time thread behind others while it holds the registry's lock.
    fn drop(&mut self) {
        let _ = sys::set_other(sys::gettid());
        self.tally
            .add(self.task, self.registry.unregister(self.slot));
    }
}

impl Ctx {
    pub(super) fn should_stop(&self) -> bool {
        interrupted() || self.failed.load(Ordering::Relaxed) || sys::mono_ns() > self.limit
    }
}

/// Run one thread of a job on the calling kernel thread: its demand in pieces between its
/// checkpoints (scaled to the demand), taking and releasing resources there. Returns with no
/// mutex held, whether it completed or was stopped.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_thread(
    ctx: &Ctx,
    counters: &ThreadCounters,
    tp: &ThreadProgram,
    demand: Time,
    job: u64,
    (region, thread): (u32, u32),
    begin: Time,
    chunks: &mut Vec<(u32, Time, Time)>,
) -> ThreadRun {
    let cpu0 = sys::thread_cpu_ns();
    let (cs0, mig0) = counters.read();
    let can_block = !tp.checkpoints.is_empty();
    let vol0 = if can_block {
        sys::voluntary_switches()
    } else {
        0
    };
    let mut out = ThreadRun {
        done: true,
        ..Default::default()
    };
    let mut ib = IntervalBuilder {
        cpu: sys::current_cpu(),
        start: begin,
        last: begin,
    };
    chunks.clear();
    work_between_checkpoints(ctx, tp, demand, &mut out, &mut ib, chunks);
    let (cs1, mig1) = counters.read();
    out.switches = cs1.saturating_sub(cs0);
    out.migrations = mig1.saturating_sub(mig0);
    out.preemptions = if can_block {
        out.switches
            .saturating_sub(sys::voluntary_switches().saturating_sub(vol0))
    } else {
        out.switches
    };
    if matches!(*ctx.workload, work::Workload::Cpu) {
        out.overhead = sys::thread_cpu_ns()
            .saturating_sub(cpu0)
            .saturating_sub(demand)
            .saturating_sub(out.spin);
    }
    if ctx.record {
        ib.close(chunks);
        out.intervals
            .extend(chunks.iter().map(|&(cpu, s, e)| Interval {
                cpu,
                task: ctx.task,
                job,
                region,
                thread,
                demand,
                start: s,
                end: e,
                overhead: 0,
            }));
    }
    out
}

/// The thread's work: its demand in pieces between its checkpoints (scaled to the demand),
/// taking and releasing resources at each; what it ran and waited into `out`, the CPUs it
/// ran on sampled into `chunks`. Returns with no mutex held.
pub(super) fn work_between_checkpoints(
    ctx: &Ctx,
    tp: &ThreadProgram,
    demand: Time,
    out: &mut ThreadRun,
    ib: &mut IntervalBuilder,
    chunks: &mut Vec<(u32, Time, Time)>,
) {
    let mut held = Held::new(&ctx.locks, ctx.task as usize, ctx.prio);
    let (cpus, record, base) = (&mut out.cpus, ctx.record, ctx.base);
    let (exec, hw) = (&mut out.exec, &mut out.hw);
    let mut piece = |ns: Time| -> bool {
        if ns == 0 {
            return true;
        }
        let hw0 = ctx.hw.as_ref().map(|g| g.read());
        let d = ctx.workload.execute(
            ns,
            || ctx.should_stop(),
            |cpu| {
                cpus.insert(cpu);
                if record {
                    ib.sample(cpu, sys::mono_ns() - base, chunks);
                }
            },
        );
        *exec += d.cpu;
        if let (Some(g), Some(s0)) = (&ctx.hw, hw0) {
            perf::add(hw, g.read().since(&s0));
        }
        d.completed
    };
    let mut pos = 0;
    for cp in &tp.checkpoints {
        let at = scale(cp.at, tp.wcet, demand);
        if !piece(at.saturating_sub(pos)) {
            out.done = false;
            break;
        }
        pos = pos.max(at);
        match cp.action {
            Action::Acquire(r) => {
                if ctx.should_stop() {
                    out.done = false;
                    break;
                }
                let w = held.acquire(r);
                out.blocked += w.blocked;
                out.spin += w.spin;
            }
            Action::Release(r) => held.release(r),
        }
    }
    if out.done {
        out.done = piece(demand.saturating_sub(pos));
    }
    // Spinning is CPU time of the job, as the simulator counts it.
    out.exec += out.spin;
    out.end = sys::mono_ns() - ctx.base;
    drop(held);
}
