//! Aborts: a whole job taken out (ledger overview 5).
//!
//! Deadline aborts (`on_miss: abort`) and the policy's own take the whole job: waiting threads
//! leave their queues, running threads leave their CPUs, the policy hears `aborted` for each
//! thread it still has, and then the job's resources are handed on. A held job (never given to
//! the policy) leaves its task's queue and nobody is told. The record of an aborted job is a
//! miss with no utility, and its CPU time is what its threads ran (overhead they still owed
//! was never paid). Each thread's abort handler (`run.overheads.abort_handler`) is charged on
//! the CPU whose run queue it sits on (queues.rs): the CPU it last ran on, whether it runs
//! or waits; for a thread that never ran, where it was forked or woken — a task's first job
//! included.

use super::{rec_at, Ledger, Off, Substrate};
use crate::state::{NEVER, NONE};
use rtsched_model::Time;
use rtsched_policies::{EntityId, ResourceId};

impl<'t> Ledger<'t> {
    /// The deadline of job slot `slot` (generation `generation`) passed under `on_miss: abort`.
    pub fn deadline_abort<S: Substrate>(
        &mut self,
        now: Time,
        slot: u32,
        generation: u32,
        sub: &mut S,
    ) {
        let j = &self.run.jobs[slot as usize];
        if j.live && j.generation == generation {
            self.abort_job(now, slot, sub);
        }
    }

    /// Remove a live job and all its threads without completing it. Its waiting threads leave
    /// their queues first (no `aborted` for them: the policy gave them up when they blocked);
    /// then each other thread leaves its CPU, `released` is reported for what it holds, and
    /// `aborted`; last, the resources go to their next holders (`unblocked`).
    pub(super) fn abort_job<S: Substrate>(&mut self, now: Time, j: u32, sub: &mut S) {
        let job = &self.run.jobs[j as usize];
        assert!(job.live, "aborting job slot {j}, which is not live");
        let (held, task, rec) = (job.held, job.task, job.rec);
        // A job `srp` withholds (locking.rs) is its task's current one, never given either.
        let gated = held && self.locking.is_some() && self.lock_ungate(j);
        if held && !gated {
            // Never given to the policy: drop it from its task's queue, tell nobody.
            self.run.held[task as usize].retain(|&s| s != j);
        } else if !held {
            self.abort_threads(now, j, task, rec, sub);
        }
        self.run.jobs[j as usize].live = false;
        if rec != NONE {
            self.run.inv.job_done(j, now);
            let r = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)];
            r.aborted = true;
            r.aborted_at = Some(now);
            r.missed = true;
            r.utility = 0.0;
            self.run.undecided -= 1;
            self.hand_on_decided();
        }
        self.run.free_jobs.push(j);
        if !held || gated {
            let fair = self.run.jobs[j as usize].deadline == NEVER;
            self.next_of_task(now, task, fair);
        }
    }

    /// The threads of job `j` of `task` (record `rec`), which the policy has: waiting ones
    /// leave their queues, then each leaves its CPU and the policy, then what they held is
    /// handed on and their slots freed.
    #[inline]
    fn abort_threads<S: Substrate>(&mut self, now: Time, j: u32, task: u32, rec: u32, sub: &mut S) {
        let mut doomed = std::mem::take(&mut self.lists.doomed);
        doomed.clear();
        doomed.extend_from_slice(&self.run.jobs[j as usize].ents);
        // Its task's thread stays on the run queue it sat on (queues.rs).
        if let Some(&e) = doomed.first() {
            let rq = self.run.ents[e as usize].rq;
            self.run.job_aborted_on(task, rq);
        }
        // Waiting threads leave their queues first, so no resource goes to this job.
        self.leave_queues(now, &doomed, rec);
        // Each thread leaves its CPU, gives up what it holds and is gone to the policy; then
        // what they held is handed on (to other jobs' threads).
        let handler = self.run.ts.run.overheads.abort_handler;
        for &e in &doomed {
            self.abort_thread(now, e, rec, handler, sub);
        }
        for &e in &doomed {
            for r in 0..self.run.resources.len() {
                if self.run.resources[r].holder == e {
                    self.hand_on(now, r as u32, e);
                }
            }
            self.free_entity(e);
        }
        self.run.jobs[j as usize].ents.clear();
        self.lists.doomed = doomed;
    }

    /// The blocked ones of `doomed` (of a job with record `rec`) leave their resources' queues,
    /// their wait added to the record; not the policy's since they blocked, so no `aborted`.
    #[inline]
    fn leave_queues(&mut self, now: Time, doomed: &[EntityId], rec: u32) {
        for &e in doomed {
            if self.locking.is_some() {
                self.lock_abort_spin(now, e);
            }
            let x = &mut self.run.ents[e as usize];
            if x.is_blocked() {
                let r = x.blocked_on as usize;
                x.blocked_on = NONE;
                // Not the policy's since it blocked: no `aborted` for it.
                x.live = false;
                let waited = now - x.blocked_since;
                if self.run.resources[r].leave(e) {
                    self.dec.drop_pending_grant(r as ResourceId);
                }
                if self.locking.is_some() {
                    self.lock_left(now, r as u32);
                }
                if rec != NONE {
                    self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)].blocked +=
                        waited;
                }
            }
        }
    }

    /// Thread `e` of an aborted job (record `rec`) leaves its CPU, if it runs, and is charged
    /// the abort `handler`; if the policy still has it, the policy hears `released` for what it
    /// holds, then `aborted`.
    #[inline]
    fn abort_thread<S: Substrate>(
        &mut self,
        now: Time,
        e: EntityId,
        rec: u32,
        handler: Time,
        sub: &mut S,
    ) {
        self.run
            .inv
            .gone(e, self.run.ents[e as usize].info.deadline);
        let x = self.run.ents[e as usize];
        if x.cpu != NONE {
            self.unlink(now, x.cpu, e, Off::Aborted, sub);
        }
        if rec != NONE {
            // What it ran so far (a real worker still executing adds its last piece
            // when it stops: the testbed does). Overhead it still owed (a charge cut
            // off by the abort) was never paid: not CPU time of the job.
            let x = &self.run.ents[e as usize];
            let r = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)];
            r.exec += x.ran;
            // (A spinner's debt, ledger/locking.rs, is no charge.)
            if x.owed < super::locking::SPIN_OWED / 2 {
                r.overhead = r.overhead.saturating_sub(x.owed);
            }
        }
        // The abort handler cleans up on the CPU whose run queue the thread sits on,
        // running there or not (docs/semantics.md): the CPU it last ran on, or for a
        // thread that never ran where it was forked or woken — a task's first job on
        // the CPU its thread was created on (queues.rs). Whatever runs there next
        // pays it (an idle CPU absorbs it).
        if handler > 0 {
            self.dec.add_charge(x.rq, handler);
            self.run.abort_handler_ns += handler;
        }
        if x.live {
            for r in 0..self.run.resources.len() {
                if self.run.resources[r].holder == e {
                    self.policy.get().released(now, e, r as u32);
                }
            }
            self.run.ents[e as usize].live = false;
            self.policy.get().aborted(now, e);
        }
    }
}
