//! What a policy and a driver read of a run.
//!
//! A policy reads the run through [`RunView`] while it decides: what each CPU runs, an entity's
//! info and CPU time so far (overheads included), who holds and who waits for a resource, a
//! task's parameters. A driver and the checkers read [`Run`] itself: the slots, the CPUs, where
//! an entity stands in its program, the running entity with its job's record for the driver's
//! accounting of work done, and what the invariants are checked on (live, blocked, holders).

use super::progress::{next_step, Next};
use super::{rec_at, Run};
use crate::state::{CpuState, Ent, NONE};
use rtsched_model::results::JobRecord;
use rtsched_model::{Task, TaskId, TaskSet, Time};
use rtsched_policies::{EntityId, EntityInfo, ResourceId, RunView, DAG_REGION};

impl RunView for Run<'_> {
    fn now(&self) -> Time {
        self.now
    }
    fn running(&self, cpu: u32) -> Option<EntityId> {
        self.cpus[cpu as usize].running
    }
    fn entity(&self, e: EntityId) -> Option<EntityInfo> {
        self.ents.get(e as usize).filter(|x| x.live).map(|x| x.info)
    }
    fn executed(&self, e: EntityId) -> Time {
        match self.ents.get(e as usize) {
            Some(x) if x.live => {
                x.ran
                    + if x.cpu != NONE {
                        self.now.saturating_sub(self.cpus[x.cpu as usize].mark)
                    } else {
                        0
                    }
            }
            _ => 0,
        }
    }
    fn waiting_for(&self, e: EntityId) -> Option<(ResourceId, EntityId)> {
        let x = self
            .ents
            .get(e as usize)
            .filter(|x| x.live && x.is_blocked())?;
        let h = self.resources[x.blocked_on as usize].holder;
        (h != NONE).then_some((x.blocked_on, h))
    }
    fn holder(&self, r: ResourceId) -> Option<EntityId> {
        let h = self.resources.get(r as usize)?.holder;
        (h != NONE).then_some(h)
    }
    fn waiters(&self, r: ResourceId) -> Vec<EntityId> {
        self.resources
            .get(r as usize)
            .map(|x| x.queue.iter().copied().collect())
            .unwrap_or_default()
    }
    fn task(&self, t: TaskId) -> &Task {
        &self.ts.tasks[t as usize]
    }
}

impl Run<'_> {
    /// The task set being run.
    pub fn taskset(&self) -> &TaskSet {
        &self.ts
    }
    /// Every entity slot (live or not), for drivers and observers.
    pub fn ents(&self) -> &[Ent] {
        &self.ents
    }
    pub fn ent(&self, e: EntityId) -> &Ent {
        &self.ents[e as usize]
    }
    pub fn cpu(&self, c: u32) -> &CpuState {
        &self.cpus[c as usize]
    }
    /// The thread program of entity info `i`.
    #[inline]
    pub fn thread_program(&self, i: &EntityInfo) -> &rtsched_model::ThreadProgram {
        // A DAG node (region DAG_REGION) is a thread of the program's one region of nodes.
        let region = if i.region == DAG_REGION { 0 } else { i.region };
        &self.programs[i.task as usize].regions[region as usize][i.thread as usize]
    }
    /// Where entity `e` stands in its program.
    #[inline]
    pub fn next_of(&self, e: EntityId) -> Next {
        let x = &self.ents[e as usize];
        if x.cp >= x.ncp {
            // No checkpoint left (every thread without sections): no program to look up.
            return if x.done < x.demand {
                Next::Run(x.demand - x.done)
            } else {
                Next::Done
            };
        }
        next_step(self.thread_program(&x.info), x.demand, x.done, x.cp)
    }
    /// Work `e` has left before its next checkpoint or its end (0 if it is at one).
    #[inline]
    pub fn work_to_next(&self, e: EntityId) -> Time {
        match self.next_of(e) {
            Next::Run(w) => w,
            _ => 0,
        }
    }
    /// The CPU `c` and the entity it runs, for a driver's accounting of work done.
    #[inline]
    pub fn running_mut(&mut self, c: u32) -> Option<(&mut CpuState, &mut Ent)> {
        let cpu = &mut self.cpus[c as usize];
        let e = cpu.running?;
        Some((cpu, &mut self.ents[e as usize]))
    }
    /// The CPU's state, the entity it runs and that entity's job record (None outside the
    /// counted window): for a driver charging it overhead (the simulator's ticks).
    #[inline]
    pub fn running_with_record(
        &mut self,
        c: u32,
    ) -> Option<(&mut CpuState, &mut Ent, Option<&mut JobRecord>)> {
        let cpu = &mut self.cpus[c as usize];
        let e = cpu.running?;
        let x = &mut self.ents[e as usize];
        let rec = if x.rec != NONE {
            Some(&mut self.records[rec_at(self.rec_base, self.rec_front, x.rec)])
        } else {
            None
        };
        Some((cpu, x, rec))
    }
    /// Entity `e`'s slot, for a driver's accounting of work done (testbed).
    #[inline]
    pub fn ent_mut(&mut self, e: EntityId) -> &mut Ent {
        &mut self.ents[e as usize]
    }
    /// Every ready or running entity (live, not blocked) and its CPU.
    pub fn live(&self) -> impl Iterator<Item = (EntityInfo, Option<u32>)> + '_ {
        self.ents
            .iter()
            .filter(|e| e.live && !e.is_blocked())
            .map(|e| (e.info, (e.cpu != NONE).then_some(e.cpu)))
    }
    /// Per resource, the entity holding it (if any) and whether that entity is live.
    pub fn holders(&self) -> impl Iterator<Item = Option<(EntityInfo, bool)>> + '_ {
        self.resources.iter().map(|r| {
            (r.holder != NONE).then(|| {
                (
                    self.ents[r.holder as usize].info,
                    self.ents[r.holder as usize].live,
                )
            })
        })
    }
    /// Blocked entities: (entity, resource, whether it is in that resource's queue, whether a
    /// CPU runs it). A correct ledger answers (_, _, true, false).
    pub fn blocked(&self) -> impl Iterator<Item = (EntityInfo, u32, bool, bool)> + '_ {
        self.ents
            .iter()
            .filter(|e| e.live && e.is_blocked())
            .map(|e| {
                let queued = self.resources[e.blocked_on as usize]
                    .queue
                    .contains(&e.info.id);
                (e.info, e.blocked_on, queued, e.cpu != NONE)
            })
    }
    /// Whether a priority inversion held after the last decision (docs/semantics.md).
    pub fn priority_inversion(&self) -> bool {
        self.inv.holding()
    }
    /// Counted jobs not yet finished or aborted.
    pub fn undecided(&self) -> u64 {
        self.undecided
    }
    /// A job's record (for a driver's own measurements, e.g. the real start time).
    pub fn record_mut(&mut self, rec: u32) -> Option<&mut JobRecord> {
        let i = rec.wrapping_sub(self.rec_base) as usize;
        if i < self.rec_front {
            return None;
        }
        self.records.get_mut(i)
    }
}
