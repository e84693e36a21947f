//! Triggers and self-suspensions on the kernel's threads (docs/chains.md, "Substrates").
//!
//! - **Triggers.** The thread of a task `trigger: A` blocks on a futex word of its own
//!   ([`Inbox`]) until A's thread, having finished a job, appends the finish to the inbox's
//!   queue for A and wakes it (FUTEX_WAKE after the store, as a kernel wakes a waiter). The
//!   triggered job's release is that finish: the instant the simulator releases it at. A
//!   `trigger: {all: [A, B]}` is released when each queue holds a finish since the last
//!   release, at the latest of those first finishes (the instant the last of its triggers
//!   finished), and every finish up to then is consumed (covered by the release), as the
//!   ledger's `seen` flags do. A thread that ends closes its successors' queues for it: a
//!   waiter whose release can no longer come stops.
//! - **Suspensions.** Between run segments, the task's thread sleeps (`clock_nanosleep`,
//!   absolute CLOCK_MONOTONIC) the suspension's length, drawn as the simulator draws it
//!   ([`SuspensionDraws`]).

use crate::signal::INTERRUPTED;
use crate::sys;
use rtsched_model::{TaskSet, Time};
use rtsched_runtime::chains::SuspensionDraws;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

/// A triggered task's inbox: per trigger, the finishes not yet consumed, and whether its
/// thread ended.
pub(super) struct Inbox {
    word: AtomicU32,
    all: bool,
    queues: Mutex<Vec<(VecDeque<Time>, bool)>>,
}

impl Inbox {
    /// The next release from the queues, if one is due: a single trigger's next finish, or
    /// the instant every trigger of a join has finished a job since the last release. `Err`:
    /// none can come any more (a trigger with nothing queued has ended).
    fn take(&self) -> Result<Option<Time>, ()> {
        let mut q = self.queues.lock().unwrap_or_else(|p| p.into_inner());
        if q.iter().any(|(f, ended)| f.is_empty() && *ended) {
            return Err(());
        }
        if q.iter().any(|(f, _)| f.is_empty()) {
            return Ok(None);
        }
        if !self.all {
            return Ok(q[0].0.pop_front());
        }
        let at = q.iter().map(|(f, _)| f[0]).max().expect("a trigger");
        for (f, _) in q.iter_mut() {
            while f.front().is_some_and(|&t| t <= at) {
                f.pop_front();
            }
        }
        Ok(Some(at))
    }
}

/// The run's triggers: per task, the inbox of a triggered task, and whom its finishes go to.
pub(super) struct Triggers {
    inbox: Vec<Option<Inbox>>,
    /// Per task: (triggered task, its index among that task's triggers).
    succ: Vec<Vec<(usize, usize)>>,
}

impl Triggers {
    pub(super) fn new(ts: &TaskSet) -> Triggers {
        let mut succ = vec![Vec::new(); ts.tasks.len()];
        let inbox = ts
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let tr = t.trigger.as_ref()?;
                for (k, &p) in tr.tasks.iter().enumerate() {
                    succ[p as usize].push((i, k));
                }
                Some(Inbox {
                    word: AtomicU32::new(0),
                    all: tr.all,
                    queues: Mutex::new(vec![(VecDeque::new(), false); tr.tasks.len()]),
                })
            })
            .collect();
        Triggers { inbox, succ }
    }

    /// Whether task `ti` is triggered.
    pub(super) fn triggered(&self, ti: usize) -> bool {
        self.inbox[ti].is_some()
    }

    /// Task `ti`'s job finished at `finish` (run time): its successors' inboxes get it, and
    /// their threads are woken.
    pub(super) fn finished(&self, ti: usize, finish: Time) {
        self.tell(ti, |q| q.0.push_back(finish));
    }

    /// Task `ti`'s thread ends: its successors wait for it no more.
    pub(super) fn ended(&self, ti: usize) {
        self.tell(ti, |q| q.1 = true);
    }

    fn tell(&self, ti: usize, f: impl Fn(&mut (VecDeque<Time>, bool))) {
        for &(s, k) in &self.succ[ti] {
            let inbox = self.inbox[s].as_ref().expect("a triggered task's inbox");
            f(&mut inbox.queues.lock().unwrap_or_else(|p| p.into_inner())[k]);
            inbox.word.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&inbox.word);
        }
    }

    /// Block task `ti`'s thread until its next release (run time), or `None` when none can
    /// come: its triggers ended, the run stops (`failed`, an interrupt) or `limit` (absolute
    /// CLOCK_MONOTONIC) passed.
    pub(super) fn wait_release(&self, ti: usize, failed: &AtomicBool, limit: u64) -> Option<Time> {
        let inbox = self.inbox[ti].as_ref().expect("a triggered task's inbox");
        loop {
            let w = inbox.word.load(Ordering::SeqCst);
            match inbox.take() {
                Ok(Some(at)) => return Some(at),
                Err(()) => return None,
                Ok(None) => {}
            }
            if INTERRUPTED.load(Ordering::Relaxed)
                || failed.load(Ordering::Relaxed)
                || sys::mono_ns() >= limit
            {
                return None;
            }
            sys::futex_wait_until(&inbox.word, w, Some(limit));
        }
    }
}

/// A task's suspensions between its run segments.
pub(super) struct Suspend<'a> {
    pub(super) lengths: &'a [rtsched_model::Suspension],
    pub(super) draws: SuspensionDraws,
}

impl Suspend<'_> {
    /// After run segment `region`: sleep the suspension that follows it, if any.
    pub(super) fn after(&mut self, region: usize) {
        if let Some(&s) = self.lengths.get(region) {
            let len = self.draws.draw(s);
            if len > 0 {
                sys::sleep_until(sys::mono_ns() + len, &INTERRUPTED);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(yaml: &str) -> TaskSet {
        rtsched_model::parse_taskset(yaml, rtsched_model::Format::Yaml, "t.yaml").unwrap()
    }

    /// One trigger: each finish is one release, at that finish, in order; a trigger that ended
    /// with nothing queued ends the wait.
    #[test]
    fn a_triggered_task_is_released_at_each_finish_of_its_trigger() {
        let t = ts("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n  - {name: b, trigger: a, deadline: 10, wcet: 1}\n");
        let tr = Triggers::new(&t);
        assert!(tr.triggered(1) && !tr.triggered(0));
        let failed = AtomicBool::new(false);
        let far = sys::mono_ns() + 1_000_000_000;
        tr.finished(0, 7);
        tr.finished(0, 17);
        assert_eq!(tr.wait_release(1, &failed, far), Some(7));
        assert_eq!(tr.wait_release(1, &failed, far), Some(17));
        tr.ended(0);
        assert_eq!(tr.wait_release(1, &failed, far), None);
    }

    /// A join (the worked example of docs/chains.md): a finishes at 1 and 11, b at 3, a at 21,
    /// b at 23: j is released at 3 (a's finish at 1 covered, 11 waits) and at 23 — not at 11
    /// nor 21 (covered). Control: without b's second finish there is no second release (the
    /// wait times out).
    #[test]
    fn a_join_is_released_when_each_trigger_finished_since_the_last_release() {
        let t = ts("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n  - {name: b, period: 20, wcet: 2}\n  - {name: j, trigger: {all: [a, b]}, deadline: 20, wcet: 1}\n");
        let tr = Triggers::new(&t);
        let failed = AtomicBool::new(false);
        let soon = || sys::mono_ns() + 20_000_000;
        tr.finished(0, 1);
        assert_eq!(
            tr.wait_release(2, &failed, soon()),
            None,
            "b has not finished"
        );
        tr.finished(1, 3);
        tr.finished(0, 11);
        assert_eq!(tr.wait_release(2, &failed, soon()), Some(3));
        tr.finished(0, 21);
        assert_eq!(
            tr.wait_release(2, &failed, soon()),
            None,
            "b's second finish not yet"
        );
        tr.finished(1, 23);
        assert_eq!(tr.wait_release(2, &failed, soon()), Some(23));
        // Both a's finishes at 11 and 21 were covered by the release at 23.
        tr.finished(1, 43);
        assert_eq!(tr.wait_release(2, &failed, soon()), None);
    }

    /// A waiter blocked on the futex is woken by the finish another thread reports.
    #[test]
    fn a_blocked_waiter_is_woken_by_its_triggers_finish() {
        let t = ts("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n  - {name: b, trigger: a, deadline: 10, wcet: 1}\n");
        let tr = std::sync::Arc::new(Triggers::new(&t));
        let tr2 = tr.clone();
        let h = std::thread::spawn(move || {
            let failed = AtomicBool::new(false);
            tr2.wait_release(1, &failed, sys::mono_ns() + 5_000_000_000)
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        tr.finished(0, 42);
        assert_eq!(h.join().unwrap(), Some(42));
    }
}
