//! Release and held jobs (ledger overview 2).
//!
//! Each task's jobs come from its own seeded streams ([`TaskStreams`](crate::TaskStreams)),
//! so every scheduler and every driver sees the same demands (a task's `execution_times`, if
//! given, are replayed instead). Jobs of one task run one after another (the sporadic model,
//! SimSo, one thread per task): a job released while its predecessor lives is *held* —
//! release and deadline fixed, not yet given to the policy — until the predecessor completes
//! or is aborted (`next_of_task`). The rules:
//! - a job released at `at` inside the counted window gets a record (records.rs); a job slot
//!   keeps its vectors' capacity, so a release allocates nothing in the steady state;
//! - a best-effort task's burst has no deadline (`NEVER`: two bursts never make a priority
//!   inversion) and no record; when it ends, its task sleeps, and the driver releases the next
//!   burst when it wakes ([`Ledger::take_wakeups`]);
//! - the release tells the driver when the task's next job is due and, under `on_miss: abort`,
//!   when to abort this one ([`Released`]).

use super::{Ledger, Run};
use crate::state::{NEVER, NONE};
use rtsched_model::{TaskSet, Time};
use rtsched_policies::DAG_REGION;

/// What a release asks of the driver.
#[derive(Clone, Copy, Debug)]
pub struct Released {
    /// When the task's next job is due.
    pub next: Time,
    /// With `on_miss: abort`: call [`Ledger::deadline_abort`] at this time with (slot, generation).
    pub abort: Option<(Time, u32, u32)>,
}

impl<'t> Ledger<'t> {
    /// Task `task`'s next job, due at `at`, is released at `now` (`now >= at`; a real driver
    /// may be late). Its record is counted if `at` is inside the window.
    #[inline]
    pub fn release(&mut self, now: Time, task: u32, at: Time) -> Released {
        self.release_on(now, task, at, None)
    }

    /// [`Ledger::release`] of a job woken on `cpu` (a triggered job, flow.rs: its first
    /// thread's kernel CPU and run queue); `None`: where its task's thread is.
    #[inline]
    pub(super) fn release_on(
        &mut self,
        now: Time,
        task: u32,
        at: Time,
        cpu: Option<u32>,
    ) -> Released {
        let r = &mut self.run;
        let job = r.next_job[task as usize];
        r.next_job[task as usize] += 1;
        let slot = r.job_slot();
        let mut demands = std::mem::take(&mut r.jobs[slot as usize].demands);
        demands.clear();
        let fair = r.streams[task as usize].fair.is_some();
        let (demand, next, deadline) = r.draw(task, job, at, &mut demands);
        let rec = if at < r.duration && !fair {
            self.open_record(task, job, at, deadline, demand)
        } else {
            NONE
        };
        let r = &mut self.run;
        let held = r.task_busy[task as usize];
        let j = &mut r.jobs[slot as usize];
        j.generation = j.generation.wrapping_add(1);
        let generation = j.generation;
        j.task = task;
        j.job = job;
        j.release = at;
        j.deadline = deadline;
        j.live = true;
        j.held = held;
        j.rec = rec;
        j.region = if r.programs[task as usize].dag.is_some() {
            DAG_REGION
        } else {
            0
        };
        j.pending = 0;
        j.demands = demands;
        j.first = 0;
        j.ents.clear();
        r.releases += 1;
        if let Some(f) = r.flow.as_mut() {
            let d = r.ts.tasks[task as usize].deadline;
            f.released(task, slot, job, at, d, at < r.duration);
            self.chain_records_out();
        }
        let r = &mut self.run;
        if held {
            r.held[task as usize].push_back(slot);
        } else {
            r.task_busy[task as usize] = true;
            if self.locking.is_none() || !self.lock_gates(now, slot) {
                self.fork(now, slot, cpu);
            }
        }
        let abort = (self.run.abort_at_deadline && !fair).then_some((deadline, slot, generation));
        Released { next, abort }
    }

    /// The job of `task` the policy knew ended at `now`: give it the next held job, if any.
    #[inline]
    pub(super) fn next_of_task(&mut self, now: Time, task: u32, fair: bool) {
        match self.run.held[task as usize].pop_front() {
            Some(j) => {
                self.run.jobs[j as usize].held = false;
                if self.locking.is_none() || !self.lock_gates(now, j) {
                    self.fork(now, j, None);
                }
            }
            None => {
                self.run.task_busy[task as usize] = false;
                let r = &mut self.run;
                if fair {
                    // A best-effort task sleeps, then wakes for its next burst.
                    let s = &mut r.streams[task as usize];
                    let at = now + s.fair.map_or(0, |b| s.sleep(&b));
                    if at < r.duration || r.undecided > 0 {
                        r.wakeups.push((at, task));
                    }
                }
            }
        }
    }

    /// Whether best-effort tasks went to sleep and are due to wake ([`Ledger::take_wakeups`]).
    #[inline]
    pub fn has_wakeups(&self) -> bool {
        !self.run.wakeups.is_empty()
    }

    /// The best-effort bursts due after a sleep, as (time, task): the driver releases each then
    /// (`release(now, task, time)`), as it releases a periodic task's next job.
    pub fn take_wakeups(&mut self, out: &mut Vec<(Time, u32)>) {
        out.clear();
        out.append(&mut self.run.wakeups);
    }
}

impl Run<'_> {
    /// Job `job` of `task`, due at `at`: each thread's demand (into `demands`), their total,
    /// when the task's next job is due and this one's deadline. Drawn from the task's streams,
    /// or replayed from its `execution_times`. A best-effort burst (rare): no deadline
    /// (`NEVER`), its successor after it and a sleep.
    #[inline]
    fn draw(
        &mut self,
        task: u32,
        job: u64,
        at: Time,
        demands: &mut Vec<Time>,
    ) -> (Time, Time, Time) {
        let ts: &TaskSet = &self.ts;
        let t = &ts.tasks[task as usize];
        let s = &mut self.streams[task as usize];
        if s.fair.is_none() {
            let d = if t.execution_times.is_empty() {
                s.job_demands(&ts.run.execution, &self.programs[task as usize], demands)
            } else {
                crate::streams::replayed(&t.execution_times, job, demands)
            };
            (d, at + s.interarrival(t), at + t.deadline)
        } else {
            self.bursts[task as usize] += 1;
            (s.fair_burst(demands), NEVER, NEVER)
        }
    }
}
