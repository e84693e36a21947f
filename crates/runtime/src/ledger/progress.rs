//! Progress of a running entity: its checkpoints and its completion (ChronOS §3; ledger
//! overview 4).
//!
//! A thread's program has checkpoints (acquire, release) scaled to its actual demand
//! ([`next_step`], docs/semantics.md "Demand"; several may fall on one point, in program
//! order). A driver works a running entity off to its next checkpoint and calls
//! [`Ledger::advance`], which handles those reached and says what comes next ([`Step`]): run
//! on (paying overhead it owes first), blocked on a held resource, done — or stop, when its
//! CPU is no longer its own (a real worker may learn that late): then only releases are
//! handled, the rest waits until it runs again.
//!
//! [`Ledger::complete`] ends an entity that is done: it leaves its CPU and its slot, its
//! task's thread now sits on that CPU (queues.rs), and its job moves on — the next
//! region forks where this one joined, a DAG node's successors fork (fork.rs), or the job is
//! finished: its record closed (records.rs) and its task's next held job given to the policy
//! (release.rs).

use super::{rec_at, Ledger, Off, Substrate};
use crate::state::{NEVER, NONE};
use rtsched_model::program::scale;
use rtsched_model::{Action, Time};
use rtsched_policies::{EntityId, DAG_REGION};

/// The next step of a running entity, after the checkpoints it reached were handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Pay `owed` overhead, then run `work` more (to the next checkpoint or the end).
    Run { owed: Time, work: Time },
    /// It requested a held resource: blocked, off its CPU.
    Blocked,
    /// It spins for a resource held on another CPU (`msrp`, `mrsp`; ledger/locking.rs): it
    /// keeps its CPU and does no work until it is handed the resource, when the ledger
    /// re-plans it through [`Substrate::charged`](super::Substrate::charged).
    Spin,
    /// All its work and checkpoints are done: report [`Ledger::complete`].
    Done,
    /// Its CPU is no longer its own: stop here (what is left waits until it runs again).
    Stop,
}

/// Where a thread stands in its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// This much more work before the next checkpoint (or the end).
    Run(Time),
    /// The next checkpoint is reached: do its action.
    At(Action),
    /// All work and every checkpoint done.
    Done,
}

/// Where a thread with program `tp`, actual demand `demand`, `done` work and `cp` checkpoints
/// handled stands. Checkpoints scale to the demand (docs/semantics.md "Demand"); several may
/// fall on one point, in program order.
#[inline]
pub fn next_step(tp: &rtsched_model::ThreadProgram, demand: Time, done: Time, cp: u32) -> Next {
    match tp.checkpoints.get(cp as usize) {
        Some(c) => {
            let at = scale(c.at, tp.wcet, demand);
            if at > done {
                Next::Run(at - done)
            } else {
                Next::At(c.action)
            }
        }
        None if done < demand => Next::Run(demand - done),
        None => Next::Done,
    }
}

impl<'t> Ledger<'t> {
    /// Handle the checkpoints the entity `e` on `cpu` has reached and say what it does next.
    /// `holds_cpu`: its CPU is still its own (a real worker may learn late that it was taken);
    /// if not, only releases are handled and it stops (`Step::Stop`), to go on — or complete —
    /// when it runs again.
    #[inline]
    pub fn advance<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        holds_cpu: bool,
        sub: &mut S,
    ) -> Step {
        if self.locking.is_some() && self.lock_spinning(e) {
            // Spinning for a resource (msrp, mrsp: locking.rs): no work, no checkpoint.
            return if holds_cpu { Step::Spin } else { Step::Stop };
        }
        loop {
            let owed = self.run.ents[e as usize].owed;
            match self.run.next_of(e) {
                Next::Run(work) if holds_cpu => return Step::Run { owed, work },
                Next::At(_) | Next::Done if owed > 0 && holds_cpu => {
                    return Step::Run { owed, work: 0 }
                }
                Next::At(Action::Release(r)) => {
                    self.run.ents[e as usize].cp += 1;
                    self.release_resource(now, r, e);
                }
                Next::At(Action::Acquire(r)) if holds_cpu => {
                    if self.locking.is_some() && self.lock_ceiling_blocks(now, cpu, e, r, sub) {
                        // Ceiling blocked (pcp:original): it requests `r` again when woken.
                        return Step::Blocked;
                    }
                    let holder = self.run.resources[r as usize].holder;
                    // The request is made either way: once it holds `r`, it is past it.
                    self.run.ents[e as usize].cp += 1;
                    if !self.run.resources[r as usize].request(e) {
                        if self.locking.is_some() && self.lock_spins(now, e, r) {
                            return Step::Spin;
                        }
                        self.block(now, cpu, e, r, holder, sub);
                        return Step::Blocked;
                    }
                    if self.locking.is_some() {
                        self.lock_taken(now, e, r);
                    }
                }
                Next::Done if holds_cpu => return Step::Done,
                _ => return Step::Stop,
            }
        }
    }

    /// The entity `e` on `cpu` finished its work and its program (`Step::Done`). `finish` is
    /// the completion time recorded (the simulator's `now`; a real run's measured instant).
    #[inline]
    pub fn complete<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        finish: Time,
        sub: &mut S,
    ) {
        let x = &mut self.run.ents[e as usize];
        assert!(
            x.live && x.cpu == cpu,
            "entity {e} completed on CPU {cpu}, which does not run it"
        );
        sub.off_cpu(
            now,
            cpu,
            &mut self.run.cpus[cpu as usize],
            x,
            Off::Completed,
        );
        x.cpu = NONE;
        x.last_cpu = cpu;
        x.live = false;
        if x.rec != NONE {
            // Its CPU time is final (a real worker reports its last piece before this).
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)].exec += x.ran;
        }
        if x.info.deadline == NEVER {
            // A best-effort burst: its task's CPU share.
            self.run.task_cpu[x.info.task as usize] += x.ran;
        }
        let (j, node, task) = (x.job, x.info.thread, x.info.task);
        if x.executing {
            x.free_when_stopped = true;
        } else {
            self.run.free.push(e);
        }
        self.run.thread_completed_on(task, cpu);
        let c = &mut self.run.cpus[cpu as usize];
        c.running = None;
        c.deadline = 0;
        self.dec.vacate(cpu);
        self.dec.note_cpu_event(cpu);
        self.policy.get().complete(now, e, cpu);
        let job = &mut self.run.jobs[j as usize];
        if let Some(p) = job.ents.iter().position(|&x| x == e) {
            job.ents.swap_remove(p);
        }
        job.pending -= 1;
        let task = job.task as usize;
        if job.region == DAG_REGION {
            if job.pending > 0 {
                self.fork_successors(now, j, node, cpu);
                return;
            }
        } else if job.pending > 0 {
            return;
        } else if (job.region as usize) + 1 < self.run.programs[task].regions.len() {
            // Join: the next region forks where this one ended.
            job.first += self.run.programs[task].regions[job.region as usize].len() as u32;
            let region = job.region;
            job.region += 1;
            // A self-suspending job suspends between its run segments (flow.rs).
            if self.run.flow.is_some() && self.flow_suspends(now, j, region, cpu) {
                return;
            }
            self.fork(now, j, Some(cpu));
            return;
        }
        job.live = false;
        let fair = job.deadline == NEVER;
        if job.rec != NONE {
            self.run.inv.job_done(j, now);
            let r = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, job.rec)];
            r.finish = Some(finish);
            r.missed = finish > r.deadline;
            r.accrue(&self.run.ts.tasks[task]);
            self.run.undecided -= 1;
            self.hand_on_decided();
        }
        if self.run.flow.as_ref().is_some_and(|f| f.on_finish(task)) {
            self.flow_finished(now, task as u32, j, cpu, finish);
        }
        self.run.free_jobs.push(j);
        self.next_of_task(now, task as u32, fair);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::CriticalSection;
    use rtsched_model::{Program, Region};

    const MS: Time = 1_000_000;

    #[test]
    fn pieces_end_at_checkpoints_scaled_to_the_demand() {
        // One thread of WCET 10 ms holding resource 0 for work [2, 6) ms.
        let sections = [CriticalSection {
            resource: 0,
            region: 0,
            thread: 0,
            start: 2 * MS,
            length: 4 * MS,
        }];
        let p = Program::build(10 * MS, &[], &sections);
        let tp = &p.regions[0][0];
        // At its WCET: run 2, acquire, run 4, release, run 4, done.
        assert_eq!(next_step(tp, 10 * MS, 0, 0), Next::Run(2 * MS));
        assert_eq!(
            next_step(tp, 10 * MS, 2 * MS, 0),
            Next::At(Action::Acquire(0))
        );
        assert_eq!(next_step(tp, 10 * MS, 2 * MS, 1), Next::Run(4 * MS));
        assert_eq!(
            next_step(tp, 10 * MS, 6 * MS, 1),
            Next::At(Action::Release(0))
        );
        assert_eq!(next_step(tp, 10 * MS, 6 * MS, 2), Next::Run(4 * MS));
        assert_eq!(next_step(tp, 10 * MS, 10 * MS, 2), Next::Done);
        // At half its WCET every boundary halves: acquire at 1, release at 3, end at 5.
        assert_eq!(next_step(tp, 5 * MS, 0, 0), Next::Run(MS));
        assert_eq!(next_step(tp, 5 * MS, MS, 1), Next::Run(2 * MS));
        assert_eq!(next_step(tp, 5 * MS, 3 * MS, 2), Next::Run(2 * MS));
        // A boundary that does not divide exactly is rounded down (7 ms of 10 at 3 ms: 2.1).
        let odd = Program::build(
            10 * MS,
            &[],
            &[CriticalSection {
                resource: 0,
                region: 0,
                thread: 0,
                start: 7 * MS,
                length: 3 * MS,
            }],
        );
        assert_eq!(
            next_step(&odd.regions[0][0], 3 * MS, 0, 0),
            Next::Run(2_100_000)
        );
        // A section from the start to the end: acquire before any work, release before done.
        let whole = Program::build(
            4 * MS,
            &[],
            &[CriticalSection {
                resource: 1,
                region: 0,
                thread: 0,
                start: 0,
                length: 4 * MS,
            }],
        );
        let tp = &whole.regions[0][0];
        assert_eq!(next_step(tp, 4 * MS, 0, 0), Next::At(Action::Acquire(1)));
        assert_eq!(
            next_step(tp, 4 * MS, 4 * MS, 1),
            Next::At(Action::Release(1))
        );
        assert_eq!(next_step(tp, 4 * MS, 4 * MS, 2), Next::Done);
        // A thread of a later region, with its own WCET.
        let par = Program::build(
            9 * MS,
            &[
                Region { threads: vec![MS] },
                Region {
                    threads: vec![3 * MS, 5 * MS],
                },
            ],
            &[],
        );
        assert_eq!(
            next_step(&par.regions[1][1], 5 * MS, 0, 0),
            Next::Run(5 * MS)
        );
    }
}
