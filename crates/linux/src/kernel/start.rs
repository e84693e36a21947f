//! Starting a run's threads: each takes its kernel policy (SCHED_DEADLINE retried while the
//! kernel frees an ended reservation, SCHED_FIFO with affinity, SCHED_OTHER, or sched_ext
//! registration), then all wait at one barrier until the main thread sets the time base, or
//! calls the run off when any could not.

use super::locks::Lock;
use super::plan::KernelPolicy;
use super::team::Team;
use super::thread::{Ctx, Reservation, ScxSlot};
use crate::stream::Outbox;
use crate::{perf, scx, sys, work};
use rtsched_model::program::Program;
use rtsched_model::{SchedPolicy, Time};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

/// Set the calling thread's policy for `lane` of task `ti`.
pub(super) fn set_policy(
    policy: &KernelPolicy,
    ti: usize,
    dl_runtime: Time,
    task: &rtsched_model::Task,
) -> std::io::Result<()> {
    let tid = sys::gettid();
    match policy {
        // Registered by Spawn::begin (it needs the registry); here only the CPU of a partition.
        KernelPolicy::Scx { cpu, .. } => sys::set_affinity(tid, cpu[ti].map(|c| c as usize)),
        KernelPolicy::Deadline { reclaim } => {
            set_deadline_retrying(tid, dl_runtime, task, *reclaim)
        }
        KernelPolicy::Linux {
            policies, reclaim, ..
        } => match policies[ti] {
            SchedPolicy::Deadline { .. } => set_deadline_retrying(tid, dl_runtime, task, *reclaim),
            SchedPolicy::Fifo => sys::set_fifo(tid, task.priority.unwrap_or(1)),
            SchedPolicy::Rr => sys::set_rr(tid, task.priority.unwrap_or(1)),
            SchedPolicy::Other { nice } => sys::set_other_nice(tid, nice),
        },
        KernelPolicy::Fifo { prio, cpu, .. } => sys::set_affinity(tid, cpu[ti].map(|c| c as usize))
            .and_then(|_| sys::set_fifo(tid, prio[ti])),
        KernelPolicy::Other => sys::set_other(tid),
    }
}

/// SCHED_DEADLINE for the calling thread `tid`: `dl_runtime` per the task's deadline and
/// period. The kernel frees an ended reservation's bandwidth only at its 0-lag time (up to a
/// deadline after it ended), so a run right after another can be refused for bandwidth nobody
/// uses any more: a refusal is retried for up to a second before it is reported.
fn set_deadline_retrying(
    tid: i32,
    dl_runtime: Time,
    task: &rtsched_model::Task,
    reclaim: bool,
) -> std::io::Result<()> {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let flags = if reclaim { sys::SCHED_FLAG_RECLAIM } else { 0 };
    loop {
        match sys::set_deadline(tid, dl_runtime, task.deadline, task.period, flags) {
            Err(e)
                if e.raw_os_error() == Some(libc::EBUSY) && std::time::Instant::now() < give_up =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => break r,
        }
    }
}

/// What every thread shares for setup: the barriers, the time base and the setup errors.
pub(super) struct Start {
    pub(super) ready: Barrier,
    pub(super) go: Barrier,
    pub(super) abort: AtomicBool,
    pub(super) t0: AtomicU64,
    pub(super) errors: Mutex<Vec<(usize, std::io::Error)>>,
}

impl Start {
    /// The main thread's side: wait until every thread is ready, call the run off if any
    /// could not take its policy, set the time base (20 ms ahead) and let them go. The
    /// threads' setup errors, by task.
    pub(super) fn release(&self) -> Vec<(usize, std::io::Error)> {
        self.ready.wait();
        let errs = std::mem::take(&mut *self.errors.lock().unwrap_or_else(|p| p.into_inner()));
        if !errs.is_empty() {
            self.abort.store(true, Ordering::SeqCst);
        }
        self.t0.store(sys::mono_ns() + 20_000_000, Ordering::SeqCst);
        self.go.wait();
        errs
    }

    /// Report the policy result, wait for every thread and the start; `None` if the run was
    /// called off, else the run's time base.
    pub(super) fn wait(&self, ti: usize, set: std::io::Result<()>) -> Option<Time> {
        if let Err(e) = set {
            self.errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((ti, e));
        }
        self.ready.wait();
        self.go.wait();
        if self.abort.load(Ordering::SeqCst) {
            None
        } else {
            Some(self.t0.load(Ordering::SeqCst))
        }
    }
}

/// What a kernel thread of task `ti` is given when it is spawned.
pub(super) struct Spawn {
    pub(super) ti: usize,
    pub(super) task: Arc<rtsched_model::Task>,
    pub(super) program: Arc<Program>,
    pub(super) policy: KernelPolicy,
    /// Its SCHED_DEADLINE runtime (lane of [`dl_runtimes`]).
    pub(super) runtime: Time,
    pub(super) start: Arc<Start>,
    pub(super) team: Arc<Team>,
    pub(super) workload: Arc<work::Workload>,
    pub(super) hw_event: Option<perf::LlcEvent>,
    pub(super) locks: Arc<Vec<Lock>>,
    pub(super) failed: Arc<AtomicBool>,
    /// How long after the time base threads stop working (duration + drain).
    pub(super) window: Time,
    pub(super) record: bool,
    /// kernel:scx-*: the registry, and this thread's lane (0: the task's own thread) and WCET.
    pub(super) scx: Option<Arc<scx::Registry>>,
    pub(super) scx_tally: Arc<scx::Tally>,
    pub(super) lane: usize,
    pub(super) lane_wcet: Time,
    /// Streaming: where the task's records go as its jobs end (else they are held).
    pub(super) handoff: Option<Outbox>,
    /// The run's triggers (flow.rs).
    pub(super) triggers: Arc<super::flow::Triggers>,
}

impl Spawn {
    /// Whether this thread takes SCHED_DEADLINE (a reservation to give back).
    fn reserves(&self) -> bool {
        match &self.policy {
            KernelPolicy::Deadline { .. } => true,
            KernelPolicy::Linux { policies, .. } => {
                matches!(policies[self.ti], SchedPolicy::Deadline { .. })
            }
            _ => false,
        }
    }

    /// Set the policy, wait for the start; the thread's context, or `None` if called off.
    pub(super) fn begin(&self) -> Option<Ctx> {
        let mut set = set_policy(&self.policy, self.ti, self.runtime, &self.task);
        let mut scx = None;
        if let (Ok(()), Some(registry), KernelPolicy::Scx { cpu, .. }) =
            (&set, &self.scx, &self.policy)
        {
            let tid = sys::gettid();
            let d = scx::Declared {
                period: self.task.period,
                deadline: self.task.deadline,
                wcet: self.lane_wcet,
                cpu: cpu[self.ti],
            };
            set = match registry.register(tid, d) {
                Ok(slot) => {
                    let s = ScxSlot {
                        registry: registry.clone(),
                        slot,
                        tally: self.scx_tally.clone(),
                        task: self.ti,
                    };
                    if self.lane > 0 {
                        self.team.scx_slots[self.lane - 1].store(slot + 1, Ordering::SeqCst);
                    }
                    let r = sys::set_ext(tid);
                    scx = Some(s);
                    r
                }
                Err(e) => Err(std::io::Error::other(e.to_string())),
            };
        }
        let admitted = set.is_ok() && self.reserves();
        let Some(base) = self.start.wait(self.ti, set) else {
            // Called off after this thread got a reservation: hand it back explicitly before
            // the thread ends. (On this project's 6.18 guests, reservations of threads that
            // ended while parked right after admission were released twice, corrupting the
            // kernel's DL bandwidth total until reboot; switching to SCHED_OTHER releases it
            // on the ordinary path.)
            if admitted {
                let _ = sys::set_other(sys::gettid());
            }
            return None;
        };
        Some(Ctx {
            _reservation: admitted.then(|| Reservation),
            task: self.ti as u32,
            workload: self.workload.clone(),
            hw: self.hw_event.and_then(perf::HwGroup::open_for_thread),
            locks: self.locks.clone(),
            prio: match &self.policy {
                KernelPolicy::Fifo { prio, .. } => prio[self.ti],
                _ => 0,
            },
            failed: self.failed.clone(),
            base,
            limit: base + self.window,
            record: self.record,
            scx,
        })
    }
}
