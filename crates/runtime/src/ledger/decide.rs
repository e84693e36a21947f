//! Decisions: `schedule`, and what it decided applied (ledger overview 6).
//!
//! [`Ledger::decide`] calls `schedule`, applies grants and CPU changes with the counting rules
//! of docs/semantics.md (preemption, migration, context switch; kernel migrations and pulls,
//! queues.rs) and the invariants every driver asserts (only ready entities run; no entity
//! on two CPUs), then handles aborts and ungranted resources, calling `schedule` again at the
//! instant. Every CPU that changes stops its old entity before any new one starts, so an entity
//! moved between two CPUs has left the first; overhead the policy charged goes to what its CPU
//! runs. After the last call of an instant the inversion meter observes the CPUs.
//!
//! Also here: the events that only reach the policy (ticks, timers), and an entity taken off
//! its CPU outside a decision (blocked, aborted).

use super::{queues, rec_at, Ledger, Off, Substrate};
use crate::state::NONE;
use rtsched_model::Time;
use rtsched_policies::{Dispatch, EntityId};

impl<'t> Ledger<'t> {
    /// After the events of instant `now`: let the policy decide and apply what it decided, as
    /// often as aborts and ungranted resources require.
    #[inline]
    pub fn decide<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.run.now = now;
        if self.locking.is_some() {
            self.lock_replan(now, sub);
        }
        loop {
            self.run.invocations += 1;
            if self.measure {
                let t0 = std::time::Instant::now();
                self.policy
                    .get()
                    .schedule(now, &mut Dispatch::new(&mut self.dec, &self.run));
                let ns = t0.elapsed().as_nanos() as u64;
                self.policy_ns.0 += ns;
                self.policy_ns.1 = self.policy_ns.1.max(ns);
            } else {
                self.policy
                    .get()
                    .schedule(now, &mut Dispatch::new(&mut self.dec, &self.run));
            }
            self.dec.clear_events();
            let again = self.grants_resources && self.apply_grants(now);
            self.apply(now, sub);
            // MrsP's helping (locking/mrsp.rs): a holder placed on another CPU calls for
            // another decision at the instant.
            let helped = self.locking.is_some() && self.mrsp_help(now);
            if !self.dec.has_aborts() && !again && !helped {
                if self.unresolved.is_some() {
                    self.check_resolved(now);
                }
                if self.locking.is_some() {
                    self.lock_observe(now);
                }
                let r = &mut self.run;
                r.inv.observe(now, &r.ents, &r.cpus);
                return;
            }
            self.dec.take_aborts(&mut self.lists.aborts);
            let aborts = std::mem::take(&mut self.lists.aborts);
            for &e in &aborts {
                // Several threads of one job may be named; the first aborts the job.
                if self.run.ents[e as usize].live {
                    let j = self.run.ents[e as usize].job;
                    self.abort_job(now, j, sub);
                }
            }
            self.lists.aborts = aborts;
        }
    }

    /// Apply the policy's CPU changes: stop what leaves, start what arrives, count, assert.
    #[inline(always)]
    fn apply<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.dec.take_dirty(&mut self.lists.dirty);
        self.stop_leaving(now, sub);
        // Every CPU that changed has stopped its old entity: now the new ones start (an
        // entity moved between two CPUs has left the first by now).
        for i in 0..self.lists.dirty.len() {
            let cpu = self.lists.dirty[i];
            let Some(e) = self.dec.current(cpu) else {
                continue;
            };
            if self.run.cpus[cpu as usize].running == Some(e) {
                continue;
            }
            self.start(now, cpu, e, sub);
        }
        self.count_preemptions();
        if !self.dec.has_charges() {
            return;
        }
        self.pay_charges(now, sub);
    }

    /// Each changed CPU's old entity leaves it (preempted: ready again), listed in
    /// `lists.stopped`; a CPU left idle is told to the driver.
    #[inline(always)]
    fn stop_leaving<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.lists.stopped.clear();
        for i in 0..self.lists.dirty.len() {
            let cpu = self.lists.dirty[i];
            let old = self.run.cpus[cpu as usize].running;
            let new = self.dec.current(cpu);
            if old == new {
                continue;
            }
            if let Some(o) = old {
                let x = &mut self.run.ents[o as usize];
                sub.off_cpu(
                    now,
                    cpu,
                    &mut self.run.cpus[cpu as usize],
                    x,
                    Off::Preempted,
                );
                x.cpu = NONE;
                x.last_cpu = cpu;
                self.run.inv.ready(o, x.info.deadline);
                let c = &mut self.run.cpus[cpu as usize];
                c.running = None;
                c.deadline = 0;
                self.lists.stopped.push(o);
            }
            if new.is_none() {
                sub.assigned(cpu, None);
            }
        }
    }

    /// `e` starts on `cpu`, which runs nothing now: the invariants asserted, the counting done
    /// (context switch, migration, kernel migration, pull; queues.rs), its job's record told,
    /// and the driver.
    #[inline(always)]
    fn start<S: Substrate>(&mut self, now: Time, cpu: u32, e: EntityId, sub: &mut S) {
        let x = &self.run.ents[e as usize];
        if !(x.live && !x.is_blocked() && x.cpu == NONE) {
            self.invalid_dispatch(cpu, e);
        }
        let work = if x.cp >= x.ncp {
            x.demand - x.done
        } else {
            self.run.work_to_next(e)
        };
        let d = x.info.deadline;
        let x = &mut self.run.ents[e as usize];
        let id = ((x.generation as u64) << 32) | e as u64;
        let c = &mut self.run.cpus[cpu as usize];
        let switched = c.last != id;
        let migrated = x.last_cpu != NONE && x.last_cpu != cpu;
        let (kernel_migrated, pulled) = queues::dispatched(x, cpu);
        self.run.kernel_migrations += kernel_migrated as u64;
        c.running = Some(e);
        c.deadline = d;
        c.last = id;
        c.mark = now;
        x.cpu = cpu;
        if let Some(f) = self.run.flow.as_mut() {
            // An implicit reader reads its input when its job first runs.
            f.started(x.info.task, x.job, self.run.jobs[x.job as usize].job, now);
        }
        if x.rec != NONE {
            let rec = &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)];
            if self.start_at_dispatch {
                rec.start.get_or_insert(now);
            }
            rec.cpus.insert(cpu);
            rec.context_switches += switched as u32;
            rec.migrations += migrated as u32;
            if let Some(p) = rec.pulls.as_mut() {
                *p += pulled as u32;
            }
        }
        let rec = if x.rec != NONE {
            Some(&mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)])
        } else {
            None
        };
        sub.on_cpu(now, cpu, c, x, switched, migrated, work, rec);
        sub.assigned(cpu, Some(e));
        self.run.inv.unready(e, d);
    }

    /// A preemption for each stopped entity that is ready, not running elsewhere now.
    #[inline(always)]
    fn count_preemptions(&mut self) {
        for i in 0..self.lists.stopped.len() {
            let x = &self.run.ents[self.lists.stopped[i] as usize];
            if x.cpu == NONE && x.live && x.rec != NONE {
                self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)]
                    .preemptions += 1;
            }
        }
    }

    /// The overhead the policy charged, each to what its CPU runs (an idle CPU absorbs it).
    #[inline(always)]
    fn pay_charges<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        self.dec.take_charges(&mut self.lists.charges);
        for i in 0..self.lists.charges.len() {
            let (cpu, ns) = self.lists.charges[i];
            self.run.charged += ns;
            if let Some(e) = self.run.cpus[cpu as usize].running {
                let work = self.run.work_to_next(e);
                let x = &mut self.run.ents[e as usize];
                let rec = if x.rec != NONE {
                    Some(
                        &mut self.run.records[rec_at(self.run.rec_base, self.run.rec_front, x.rec)],
                    )
                } else {
                    None
                };
                sub.charged(now, cpu, &mut self.run.cpus[cpu as usize], x, ns, work, rec);
            }
        }
    }

    #[cold]
    fn invalid_dispatch(&mut self, cpu: u32, e: EntityId) -> ! {
        let name = self.policy.get().name();
        let x = &self.run.ents[e as usize];
        if !x.live || x.is_blocked() {
            panic!("policy '{name}' dispatched entity {e}, which is not ready");
        }
        panic!(
            "policy '{name}' put entity {e} on CPU {cpu} while it runs on CPU {}",
            x.cpu
        );
    }

    /// Take `e` off `cpu` (it runs there) at the decision level.
    #[inline]
    pub(super) fn unlink<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        why: Off,
        sub: &mut S,
    ) {
        let x = &mut self.run.ents[e as usize];
        debug_assert_eq!(x.cpu, cpu);
        sub.off_cpu(now, cpu, &mut self.run.cpus[cpu as usize], x, why);
        x.cpu = NONE;
        x.last_cpu = cpu;
        let c = &mut self.run.cpus[cpu as usize];
        c.running = None;
        c.deadline = 0;
        self.dec.vacate(cpu);
        self.dec.note_cpu_event(cpu);
    }

    /// Time every `schedule` call with a clock (a run asked to measure the policy's overhead;
    /// ChronOS Fig 6). The result is in [`Outcome::policy_ns`](super::Outcome::policy_ns).
    pub fn measure_policy(&mut self, on: bool) {
        self.measure = on;
    }

    /// The policy's tick period, if it wants one.
    pub fn tick_interval(&mut self) -> Option<Time> {
        self.policy.get().tick_interval()
    }

    /// The periodic tick on `cpu`.
    pub fn tick(&mut self, now: Time, cpu: u32) {
        self.dec.note_cpu_event(cpu);
        self.policy.get().tick(now, cpu);
    }

    /// A timer the policy set fired.
    pub fn timer(&mut self, now: Time) {
        self.dec.note_global_event();
        self.policy.get().timer(now);
    }

    /// Timers the policy set since the last call, for the driver to arm.
    #[inline]
    pub fn take_timers(&mut self, out: &mut Vec<Time>) {
        self.dec.take_timers(out);
    }

    /// Whether the policy set timers since the last `take_timers`.
    #[inline]
    pub fn has_timers(&self) -> bool {
        self.dec.has_timers()
    }
}
