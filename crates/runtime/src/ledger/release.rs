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

use super::{Failure, Job, Ledger};
use crate::state::{NEVER, NONE};
use rtsched_model::results::JobRecord;
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
        let r = &mut self.run;
        let ts: &TaskSet = &r.ts;
        let t = &ts.tasks[task as usize];
        let (rel_deadline, duration) = (t.deadline, r.duration);
        let job = r.next_job[task as usize];
        r.next_job[task as usize] += 1;
        let slot = match r.free_jobs.pop() {
            Some(s) => s,
            None => {
                let (demands, ents) = r.spare.pop().unwrap_or_default();
                r.jobs.push(Job {
                    task: 0,
                    job: 0,
                    release: 0,
                    deadline: 0,
                    generation: 0,
                    live: false,
                    held: false,
                    rec: NONE,
                    region: 0,
                    pending: 0,
                    demands,
                    first: 0,
                    ents,
                });
                r.preds.push(Vec::new());
                (r.jobs.len() - 1) as u32
            }
        };
        let mut demands = std::mem::take(&mut r.jobs[slot as usize].demands);
        demands.clear();
        // A best-effort burst (rare; out of line): no deadline (NEVER, so two fair entities never
        // make a priority inversion); its successor comes after it and a sleep.
        let fair = r.streams[task as usize].fair.is_some();
        let (demand, next, deadline) = if !fair {
            let d = if t.execution_times.is_empty() {
                r.streams[task as usize].job_demands(
                    &ts.run.execution,
                    &r.programs[task as usize],
                    &mut demands,
                )
            } else {
                crate::streams::replayed(&t.execution_times, job, &mut demands)
            };
            (
                d,
                at + r.streams[task as usize].interarrival(t),
                at + rel_deadline,
            )
        } else {
            r.bursts[task as usize] += 1;
            (
                r.streams[task as usize].fair_burst(&mut demands),
                NEVER,
                NEVER,
            )
        };
        let rec = if at < duration && !fair {
            let id = r.rec_base.wrapping_add(r.records.len() as u32);
            if id == NONE && self.failure.is_none() {
                // Four billion counted jobs: ids would wrap onto "no record". The driver stops
                // the run with this (the CLI refuses such runs up front, `--max-jobs`).
                self.failure = Some(Failure::Capacity(format!(
                    "more than {} counted jobs in one run: shorten the window",
                    NONE - 1
                )));
            }
            if r.records.capacity() == 0 {
                let room = if self.sink.is_some() {
                    Self::STREAMED_RECORDS
                } else {
                    r.expected_jobs
                };
                let room = room.min(r.expected_jobs).max(1);
                // A run that holds its records asks for them all at once: refused by the
                // machine, that is the run's error, not an abort of the process.
                if r.records.try_reserve_exact(room).is_err() && self.failure.is_none() {
                    self.failure = Some(Failure::Capacity(format!(
                        "cannot hold the run's {room} per-job records ({:.1} GB): the machine refused the memory; stream them instead (--jobs-parquet, or no output that reads them after the run)",
                        (room * std::mem::size_of::<JobRecord>()) as f64 / 1e9
                    )));
                }
            }
            r.records.push(JobRecord {
                task,
                job,
                release: at,
                deadline,
                demand,
                max_utility: t.max_utility(),
                pulls: r.pulls.then_some(0),
                ..Default::default()
            });
            r.undecided += 1;
            id
        } else {
            NONE
        };
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
        if held {
            r.held[task as usize].push_back(slot);
        } else {
            r.task_busy[task as usize] = true;
            self.fork(now, slot, None);
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
                self.fork(now, j, None);
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
