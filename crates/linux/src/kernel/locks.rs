//! The critical sections' real mutexes: one `pthread_mutex_t` per resource of the task set
//! with the plan's protocol ([`KernelPlan::mutexes`]: priority inheritance for a `pip`
//! resource or with the backend option `pi`, the immediate priority ceiling for a `pcp` one or
//! with `pcp`: `PTHREAD_PRIO_PROTECT` at the resource's ceiling), or for an `msrp` or `mrsp`
//! resource under kernel:fifo a FIFO spin lock taken at a raised priority
//! ([`KernelPlan::spins`]), with what the run observed of each (holders, acquisitions,
//! contention), and the set a thread holds, released on any exit.
//!
//! A spin lock (`spinlock.rs`): the requesting thread is raised to its rule's SCHED_FIFO
//! priority *before* it asks (under `msrp` above every task, so its request and section are
//! non-preemptive; under `mrsp` the local ceiling), spins in FIFO order, runs its section,
//! frees the lock and goes back to its own priority (`sched_setattr` both times: lowering a
//! running SCHED_FIFO thread puts it at the head of its level, so it goes on running). The
//! time it spun is its job's `spin` (CPU time, not blocking).

use super::plan::KernelPlan;
use super::spinlock::{SpinGuard, SpinLock};
use crate::options::RunError;
use crate::sys;
use rtsched_model::{TaskSet, Time};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One resource's mutex (or spin lock) and what the run observed of it.
pub(super) struct Lock {
    pub(super) mutex: sys::PthreadMutex,
    /// The spin lock and, per task, the priority it is taken at (`None`: the mutex is used).
    pub(super) spin: Option<(SpinLock, Vec<u32>)>,
    /// Threads inside a section of this resource right now (a working mutex keeps it <= 1).
    pub(super) holders: AtomicU32,
    pub(super) max_holders: AtomicU32,
    pub(super) acquisitions: AtomicU64,
    /// Acquisitions that had to wait.
    pub(super) contended: AtomicU64,
}

/// The mutexes a thread holds; dropping it (normal end, a stop, a panic) releases them all,
/// innermost first, so no waiter is left hanging.
pub(super) struct Held<'a> {
    pub(super) locks: &'a [Lock],
    pub(super) held: Vec<u32>,
    /// The spin locks it holds, by resource.
    pub(super) spun: Vec<(u32, SpinGuard<'a>)>,
    /// Its task, and its own SCHED_FIFO priority (to go back to after a spin lock's section).
    pub(super) task: usize,
    pub(super) prio: u32,
}

/// What taking a resource cost: time blocked in a mutex, time spun for a spin lock.
pub(super) struct Waited {
    pub(super) blocked: Time,
    pub(super) spin: Time,
}

impl<'a> Held<'a> {
    pub(super) fn new(locks: &'a [Lock], task: usize, prio: u32) -> Held<'a> {
        Held {
            locks,
            held: Vec::new(),
            spun: Vec::new(),
            task,
            prio,
        }
    }

    /// Take resource `r`; returns the time blocked in its mutex or spun for its spin lock (0
    /// if it was free).
    pub(super) fn acquire(&mut self, r: u32) -> Waited {
        let locks = self.locks;
        let l = &locks[r as usize];
        let mut spin = 0;
        let blocked = if let Some((lock, raise)) = &l.spin {
            raise_to(raise[self.task]);
            let (g, spun) = lock.lock();
            if spun > 0 {
                l.contended.fetch_add(1, Ordering::Relaxed);
            }
            spin = spun;
            self.spun.push((r, g));
            0
        } else if l.mutex.try_lock() {
            0
        } else {
            let t = sys::mono_ns();
            l.mutex.lock().expect("lock a resource's mutex");
            l.contended.fetch_add(1, Ordering::Relaxed);
            sys::mono_ns() - t
        };
        let now = l.holders.fetch_add(1, Ordering::SeqCst) + 1;
        l.max_holders.fetch_max(now, Ordering::SeqCst);
        l.acquisitions.fetch_add(1, Ordering::Relaxed);
        self.held.push(r);
        Waited { blocked, spin }
    }

    pub(super) fn release(&mut self, r: u32) {
        if let Some(i) = self.held.iter().rposition(|&h| h == r) {
            self.held.remove(i);
            let l = &self.locks[r as usize];
            l.holders.fetch_sub(1, Ordering::SeqCst);
            if let Some(k) = self.spun.iter().rposition(|(s, _)| *s == r) {
                // Hand the lock to the next ticket, then back to the thread's own priority.
                drop(self.spun.remove(k));
                raise_to(self.prio);
                return;
            }
            // Unlocking a mutex this thread holds cannot fail; never panic while unwinding.
            if let Err(e) = l.mutex.unlock() {
                if !std::thread::panicking() {
                    panic!("unlock a resource's mutex: {e}");
                }
            }
        }
    }
}

/// Set the calling thread's SCHED_FIFO priority (it runs under SCHED_FIFO already: raising
/// or lowering it cannot fail but for a vanished thread; never panic while unwinding).
fn raise_to(prio: u32) {
    if let Err(e) = sys::set_fifo(sys::gettid(), prio) {
        if !std::thread::panicking() {
            panic!("set the SCHED_FIFO priority {prio} of a spin lock's section: {e}");
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        while let Some(&r) = self.held.last() {
            self.release(r);
        }
    }
}

/// One mutex per resource of the task set, with the plan's protocol for it (and its spin lock
/// where the plan has one).
pub(super) fn resource_locks(ts: &TaskSet, plan: &KernelPlan) -> Result<Vec<Lock>, RunError> {
    (0..ts.resources.len())
        .map(|r| {
            Ok(Lock {
                mutex: sys::PthreadMutex::new(plan.mutexes[r])?,
                spin: plan.spins[r].clone().map(|raise| (SpinLock::new(), raise)),
                holders: AtomicU32::new(0),
                max_holders: AtomicU32::new(0),
                acquisitions: AtomicU64::new(0),
                contended: AtomicU64::new(0),
            })
        })
        .collect::<std::io::Result<_>>()
        .map_err(|e| RunError::Failed(format!("cannot create the resources' mutexes: {e}")))
}
