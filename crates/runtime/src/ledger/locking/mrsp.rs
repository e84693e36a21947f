//! MrsP's *helping* (Burns & Wellings, *A schedulability compatible multiprocessor resource
//! sharing protocol — MrsP*, ECRTS 2013: the protocol's rules, and their implementation by
//! migrating the holder; docs/locking.md "Helping"). The paper was not at hand when this was
//! written: the rules below are the protocol as commonly stated (and as Zhao, Garrido, Burns
//! & Wellings restate it, *New schedulability analysis for MrsP*, RTCSA 2017: "the preempted
//! resource holder can migrate"), and rule 1 is this ledger's choice.
//!
//! The protocol's rules the rest of the ledger already applies (locking.rs): a job that
//! requests a global `mrsp` resource is raised to the resource's local ceiling on its CPU,
//! waits for it in FIFO order *spinning* (it stays on its CPU, at that ceiling), and runs its
//! section at that ceiling. What this file adds is the rule that makes a spinner's wait
//! independent of what preempts the holder: a spinning job must be able to do the holder's
//! work on the holder's behalf. Burns & Wellings give it by migration: a holder preempted on
//! its own CPU moves to a CPU where a job spins for its resource and goes on with its section
//! there, in the spinner's place and at the spinner's priority; the spinner, kept from running,
//! stays queued. So a request waits at most for the sections ahead of it in the FIFO queue,
//! one per other CPU, whatever runs above a ceiling somewhere.
//!
//! The ledger's rules, checked after every decision ([`Ledger::mrsp_help`]), for each `mrsp`
//! resource held by a live entity `h` that is not blocked (a placement is
//! [`Policy::place`](rtsched_policies::Policy::place)):
//! 1. *Home first*: if `h` has been placed on another CPU and its own CPU would run it now (it
//!    is idle, or runs a job less urgent than `h` at its local ceiling there), `h` goes back to
//!    its own CPU (placed with `None`). This is our reading of "the holder may run wherever it
//!    is allowed to": Burns & Wellings let a preempted holder continue on any CPU where a
//!    spinner is active; its own CPU, once it is free for it again, is one of them, and the
//!    one where its section does not displace a spinner.
//! 2. *Help*: else, if `h` runs nowhere, it is placed on the CPU of the first spinner, in FIFO
//!    order, that runs (placed with that CPU and spinner): the policy orders it there just
//!    before the spinner, so it takes the spinner's CPU and nothing else there changes order.
//!    A holder preempted on a CPU where it helps moves on the same way. The spinner may be on
//!    `h`'s own CPU: a helper that released its resource goes home and may request another
//!    there before the next decision, held by a job of its own CPU, and its spin at that
//!    resource's ceiling (lent at its earlier release) would outrank the holder; the holder
//!    then takes its place without migrating (not counted).
//! 3. When `h` releases the resource it goes back to its own CPU (locking.rs `lock_released`)
//!    and the resource passes FIFO, as without helping.
//!
//! Each placement on another CPU is a *helping migration* (counted per run, in the run's
//! `helping_migrations`); the holder's job record counts it among its `migrations` when it
//! starts there, and its return likewise. While it helps, the holder is lent the spinner's
//! effective urgency (the local ceiling there) for the blocking kinds; the policy is not asked
//! to `boost` it.
//!
//! A test-only switch ([`set_mrsp_helping`]) turns helping off for the runs built on the
//! calling thread: the negative control of MrsP's spin bound.

use super::{Kind, Locking};
use crate::ledger::Ledger;
use crate::state::NONE;
use rtsched_model::{Protocol, Time};
use rtsched_policies::{EntityId, Urgency};
use std::cell::Cell;

thread_local! {
    static HELPING: Cell<bool> = const { Cell::new(true) };
}

/// Whether runs whose ledger is built on this thread help (MrsP): on unless a test turned it
/// off, as the negative control of MrsP's bound. Not a user option.
#[doc(hidden)]
pub fn set_mrsp_helping(on: bool) {
    HELPING.with(|h| h.set(on));
}

pub(super) fn helping_on() -> bool {
    HELPING.with(|h| h.get())
}

/// A holder placed on another CPU, and which.
#[derive(Clone, Copy, Debug)]
pub(super) struct Helper {
    holder: EntityId,
    cpu: u32,
}

impl Locking {
    /// Helping migrations so far (the run's `helping_migrations`).
    pub(in crate::ledger) fn help_migrations(&self) -> u64 {
        self.help_migrations
    }

    /// The CPU holder `e` helps on, if it was placed away from its own.
    #[inline]
    pub(super) fn helping(&self, e: EntityId) -> Option<u32> {
        self.helpers.iter().find(|h| h.holder == e).map(|h| h.cpu)
    }

    fn set_helping(&mut self, e: EntityId, cpu: Option<u32>) {
        let at = self.helpers.iter().position(|h| h.holder == e);
        match (at, cpu) {
            (Some(i), Some(c)) => self.helpers[i].cpu = c,
            (None, Some(c)) => self.helpers.push(Helper { holder: e, cpu: c }),
            (Some(i), None) => {
                self.helpers.swap_remove(i);
            }
            (None, None) => {}
        }
    }
}

impl<'t> Ledger<'t> {
    /// After a decision, MrsP's rules 1 and 2 (the overview) for every held `mrsp` resource.
    /// Returns whether a holder was placed (the policy then decides again at `now`).
    pub(in crate::ledger) fn mrsp_help(&mut self, now: Time) -> bool {
        let l = self.locking.as_mut().expect("locking");
        if !l.help {
            return false;
        }
        // Each placement leaves its holder running (or home), so placements settle; a bound
        // on those of one instant guards the loop of `decide` all the same.
        if l.help_round.0 != now {
            l.help_round = (now, 0);
        }
        if l.help_round.1 > 4 * (l.cpus + l.helpers.capacity()) as u32 {
            debug_assert!(false, "helping did not settle at {now}");
            return false;
        }
        let mut placed = false;
        for r in 0..self.run.resources.len() {
            let l = self.locking.as_ref().expect("locking");
            let h = self.run.resources[r].holder;
            if l.protocol[r] != Protocol::Mrsp || h == NONE {
                continue;
            }
            let x = &self.run.ents[h as usize];
            if !x.live || x.is_blocked() {
                continue;
            }
            let home = l.task_cpu[x.info.task as usize];
            let away = l.helping(h).is_some_and(|c| c != home);
            if away && self.home_takes(h, r) {
                self.help_home(now, h);
                placed = true;
            } else if self.run.ents[h as usize].cpu == NONE {
                if let Some((cpu, w)) = self.running_spinner(r) {
                    placed |= self.help_on(now, h, cpu, w);
                }
            }
        }
        self.locking.as_mut().expect("locking").help_round.1 += placed as u32;
        placed
    }

    /// Whether `h`'s own CPU would run it now at its urgency there (its own, or `r`'s local
    /// ceiling): the CPU is idle, or runs something less urgent.
    fn home_takes(&mut self, h: EntityId, r: usize) -> bool {
        let l = self.locking.as_ref().expect("locking");
        let info = self.run.ents[h as usize].info;
        let home = l.task_cpu[info.task as usize] as usize;
        let Some(y) = self.run.cpus[home].running else {
            return true;
        };
        let own = super::urgency(self.policy.get(), &info);
        let at = self.mrsp_ceiling(r, &info).map_or(own, |c| c.min(own));
        self.effective(y) > at
    }

    /// The first waiter of `r` in FIFO order spinning on a CPU (any, `h`'s own too): (CPU, it).
    fn running_spinner(&self, r: usize) -> Option<(u32, EntityId)> {
        let l = self.locking.as_ref().expect("locking");
        let q = &self.run.resources[r].queue;
        (0..q.len()).map(|i| q[i]).find_map(|w| {
            let c = self.run.ents[w as usize].cpu;
            (c != NONE && l.spin_of(w) == r as u32).then_some((c, w))
        })
    }

    /// Place holder `h` on `cpu` in the place of spinner `w` (rule 2): a helping migration.
    fn help_on(&mut self, now: Time, h: EntityId, cpu: u32, w: EntityId) -> bool {
        let info = self.run.ents[h as usize].info;
        if !self.policy.get().place(now, &info, Some((cpu, w))) {
            // A policy that binds no task never runs `mrsp` (refused); stop asking.
            self.locking.as_mut().expect("locking").help = false;
            return false;
        }
        let u: Urgency = self.effective(w);
        let l = self.locking.as_mut().expect("locking");
        l.set_helping(h, Some(cpu));
        l.set_boost(h, Some((u, Kind::Ceiling)));
        l.help_migrations += (cpu != l.task_cpu[info.task as usize]) as u64;
        self.dec.note_global_event();
        true
    }

    /// Holder `h` goes back to its own CPU (rules 1 and 3), keyed again as the rule of the
    /// overview of locking.rs says.
    fn help_home(&mut self, now: Time, h: EntityId) {
        let l = self.locking.as_mut().expect("locking");
        l.set_helping(h, None);
        l.set_boost(h, None);
        let x = &self.run.ents[h as usize];
        if x.live {
            let info = x.info;
            self.policy.get().place(now, &info, None);
            self.dec.note_global_event();
            self.reurge(now, h);
        }
    }

    /// `e` released an `mrsp` resource (rule 3): if it helps elsewhere, it goes home — unless
    /// its program is done, when it completes where it runs (the policy hears `complete` there).
    pub(super) fn mrsp_released(&mut self, now: Time, e: EntityId) {
        let l = self.locking.as_mut().expect("locking");
        if l.helping(e).is_none() {
            return;
        }
        if self.run.next_of(e) == crate::ledger::Next::Done {
            l.set_helping(e, None);
            l.set_boost(e, None);
            return;
        }
        self.help_home(now, e);
    }

    /// `r`'s local ceiling on the CPU of `info`'s task, as the urgency of a job of the
    /// ceiling's task released when `info` was; `None` if no user of `r` is on that CPU.
    pub(super) fn mrsp_ceiling(
        &mut self,
        r: usize,
        info: &rtsched_policies::EntityInfo,
    ) -> Option<Urgency> {
        let l = self.locking.as_ref().expect("locking");
        let cpu = l.task_cpu[info.task as usize] as usize;
        let t = l.local_ceiling[r * l.cpus + cpu];
        if t == NONE {
            return None;
        }
        let rep = super::representative(&self.run.ts, t as usize, info.release, info);
        Some(super::urgency(self.policy.get(), &rep))
    }
}
