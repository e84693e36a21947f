//! Slots: where jobs and entities live (ledger overview 1).
//!
//! Jobs (`Job`) and entities ([`Ent`], one thread of one region of a job) live in
//! preallocated slot vectors with generation numbers; a slot is reused after its occupant
//! ends, so policies can index plain vectors by [`EntityId`]. The rules:
//! - a fresh entity takes a free slot, or a new one (the inversion meter grows with it), and
//!   the slot's next generation; it starts ready, so it is told to the inversion meter;
//! - where a fresh thread sits — its kernel CPU and its run queue (queues.rs) — is the
//!   CPU it forks on, else where its task's thread is;
//! - an entity that a real worker still executes keeps its slot until the worker lets go
//!   ([`Ledger::stopped_executing`]): its end only marks it (`free_when_stopped`).

use super::{Job, Ledger, Run};
use crate::state::{Ent, NONE};
use rtsched_policies::{EntityId, EntityInfo, DAG_REGION};

impl<'t> Ledger<'t> {
    /// A fresh entity for thread `t` of job `j`'s current region, forked on `cpu` (`None`: a
    /// job's first thread, woken). Where a kernel has it: the CPU it forks on, or where its
    /// task's thread is — for `kernel_migrations` the CPU its task last completed a thread on
    /// (queues.rs), for pulls and the abort handler the run queue it sits on (queues.rs).
    #[inline]
    pub(super) fn new_thread(&mut self, j: u32, t: usize, cpu: Option<u32>) -> EntityInfo {
        let r = &mut self.run;
        let job = &r.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        let (kcpu, rq) = r.fresh_thread_on(task, cpu);
        let demand = job.demands[job.first as usize + t];
        let (jobno, release, deadline, rec) = (job.job, job.release, job.deadline, job.rec);
        // A DAG job's nodes are the program's one region.
        let in_program = if region == DAG_REGION { 0 } else { region };
        let ncp = r.programs[task as usize].regions[in_program as usize][t]
            .checkpoints
            .len() as u32;
        let slot = match r.free.pop() {
            Some(s) => s,
            None => {
                r.ents.push(Ent::EMPTY);
                r.inv.grow(r.ents.len());
                (r.ents.len() - 1) as u32
            }
        };
        let info = EntityInfo {
            id: slot,
            task,
            job: jobno,
            region,
            thread: t as u32,
            release,
            deadline,
        };
        let e = &mut r.ents[slot as usize];
        let generation = e.generation.wrapping_add(1);
        *e = Ent {
            info,
            generation,
            live: true,
            job: j,
            rec,
            demand,
            ncp,
            kcpu,
            rq,
            ..Ent::EMPTY
        };
        r.inv.ready(slot, deadline);
        r.jobs[j as usize].ents.push(slot);
        info
    }

    #[inline]
    pub(super) fn free_entity(&mut self, e: EntityId) {
        let x = &mut self.run.ents[e as usize];
        if x.executing {
            x.free_when_stopped = true;
        } else {
            self.run.free.push(e);
        }
    }

    /// A real worker stopped executing `e`: its slot may be reused if `e` ended meanwhile.
    pub fn stopped_executing(&mut self, e: EntityId) {
        let x = &mut self.run.ents[e as usize];
        x.executing = false;
        if x.free_when_stopped {
            x.free_when_stopped = false;
            self.run.free.push(e);
        }
    }
}

impl Run<'_> {
    /// A free job slot, or a new one (its lists an earlier run's, if any are left).
    #[inline]
    pub(super) fn job_slot(&mut self) -> u32 {
        match self.free_jobs.pop() {
            Some(s) => s,
            None => {
                let (demands, ents) = self.spare.pop().unwrap_or_default();
                self.jobs.push(Job {
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
                self.preds.push(Vec::new());
                (self.jobs.len() - 1) as u32
            }
        }
    }
}
