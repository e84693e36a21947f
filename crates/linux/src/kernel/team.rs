//! The futex lane team of a parallel task: its helper threads' mailboxes, the fork that hands
//! thread k of a region to helper k (one futex word each), the join counter the task's thread
//! waits on, and the guards that dismiss the helpers and bring the counter down on any exit.

use super::thread::ThreadRun;
use crate::sys;
use rtsched_model::Time;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

/// Work handed to a helper: thread `thread` of region `region` of job `job`.
#[derive(Clone, Copy)]
pub(super) struct Handoff {
    pub(super) job: u64,
    pub(super) region: u32,
    pub(super) thread: u32,
    pub(super) demand: Time,
}

/// One helper thread's mailbox.
#[derive(Default)]
pub(super) struct Slot {
    /// Bumped for each handoff and at quit; the helper's futex word.
    pub(super) seq: AtomicU32,
    pub(super) work: Mutex<Option<Handoff>>,
    pub(super) report: Mutex<ThreadRun>,
}

/// A parallel task's helper threads and the fork-join between them and the task's thread.
#[derive(Default)]
pub(super) struct Team {
    pub(super) slots: Vec<Slot>,
    /// kernel:scx-*: each helper's registry slot + 1 (0: none), for the job boundaries the
    /// task's thread marks.
    pub(super) scx_slots: Vec<std::sync::atomic::AtomicUsize>,
    /// Helpers of the current region still working: the join counter (a futex word).
    pub(super) pending: AtomicU32,
    /// The task's thread is done: helpers exit.
    pub(super) quit: AtomicBool,
    /// A helper panicked.
    pub(super) failed: AtomicBool,
}

impl Team {
    pub(super) fn new(helpers: usize) -> Team {
        Team {
            slots: (0..helpers).map(|_| Slot::default()).collect(),
            scx_slots: (0..helpers).map(|_| Default::default()).collect(),
            ..Default::default()
        }
    }

    /// Hand thread k (1..=demands.len()) of the region to helper k.
    pub(super) fn fork(&self, job: u64, region: u32, demands: &[Time]) {
        self.pending.store(demands.len() as u32, Ordering::SeqCst);
        for (i, &demand) in demands.iter().enumerate() {
            let s = &self.slots[i];
            *s.work.lock().unwrap_or_else(|p| p.into_inner()) = Some(Handoff {
                job,
                region,
                thread: i as u32 + 1,
                demand,
            });
            s.seq.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&s.seq);
        }
    }

    /// Wait until every helper of the region has finished.
    pub(super) fn join(&self) {
        loop {
            let p = self.pending.load(Ordering::SeqCst);
            if p == 0 {
                break;
            }
            sys::futex_wait_until(&self.pending, p, None);
        }
        if self.failed.load(Ordering::SeqCst) {
            panic!("a helper thread panicked");
        }
    }

    pub(super) fn report(&self, helper: usize) -> ThreadRun {
        std::mem::take(
            &mut *self.slots[helper]
                .report
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// Tell every helper to exit (the task's thread is done, or unwinding).
    pub(super) fn dismiss(&self) {
        self.quit.store(true, Ordering::SeqCst);
        for s in &self.slots {
            s.seq.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&s.seq);
        }
    }
}

/// Held by the task's thread: on exit (or a panic) its helpers are dismissed and, on a panic,
/// every thread of the run is told to stop.
pub(super) struct TaskGuard<'a> {
    pub(super) team: &'a Team,
    pub(super) failed: &'a AtomicBool,
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.failed.store(true, Ordering::SeqCst);
        }
        self.team.dismiss();
    }
}

/// Held by a helper while it runs a handoff: the join counter always comes down, even if the
/// helper panics (then the task's thread panics too and the run fails).
pub(super) struct HelperGuard<'a> {
    pub(super) team: &'a Team,
    pub(super) failed: &'a AtomicBool,
}

impl Drop for HelperGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.team.failed.store(true, Ordering::SeqCst);
            self.failed.store(true, Ordering::SeqCst);
        }
        if self.team.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            sys::futex_wake(&self.team.pending);
        }
    }
}
