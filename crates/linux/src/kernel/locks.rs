//! The critical sections' real mutexes: one `pthread_mutex_t` per resource of the task set
//! with the plan's protocol ([`KernelPlan::mutexes`]: priority inheritance for a `pip`
//! resource or with the backend option `pi`, the immediate priority ceiling for a `pcp` one or
//! with `pcp`: `PTHREAD_PRIO_PROTECT` at the resource's ceiling), with
//! what the run observed of each (holders, acquisitions, contention), and the set a thread
//! holds, released on any exit.

use super::plan::KernelPlan;
use crate::options::RunError;
use crate::sys;
use rtsched_model::{TaskSet, Time};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One resource's mutex and what the run observed of it.
pub(super) struct Lock {
    pub(super) mutex: sys::PthreadMutex,
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
}

impl Held<'_> {
    /// Take resource `r`; returns the time spent waiting for it (0 if it was free).
    pub(super) fn acquire(&mut self, r: u32) -> Time {
        let l = &self.locks[r as usize];
        let waited = if l.mutex.try_lock() {
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
        waited
    }

    pub(super) fn release(&mut self, r: u32) {
        if let Some(i) = self.held.iter().rposition(|&h| h == r) {
            self.held.remove(i);
            let l = &self.locks[r as usize];
            l.holders.fetch_sub(1, Ordering::SeqCst);
            // Unlocking a mutex this thread holds cannot fail; never panic while unwinding.
            if let Err(e) = l.mutex.unlock() {
                if !std::thread::panicking() {
                    panic!("unlock a resource's mutex: {e}");
                }
            }
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

/// One mutex per resource of the task set, with the plan's protocol for it.
pub(super) fn resource_locks(ts: &TaskSet, plan: &KernelPlan) -> Result<Vec<Lock>, RunError> {
    (0..ts.resources.len())
        .map(|r| {
            Ok(Lock {
                mutex: sys::PthreadMutex::new(plan.mutexes[r])?,
                holders: AtomicU32::new(0),
                max_holders: AtomicU32::new(0),
                acquisitions: AtomicU64::new(0),
                contended: AtomicU64::new(0),
            })
        })
        .collect::<std::io::Result<_>>()
        .map_err(|e| RunError::Failed(format!("cannot create the resources' mutexes: {e}")))
}
