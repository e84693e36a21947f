//! Ceiling blocking under the original priority ceiling protocol, `pcp:original` (Sha,
//! Rajkumar & Lehoczky 1990, §IV "The Priority Ceiling Protocol"; docs/locking.md).
//!
//! A resource's *priority ceiling* is that of `pcp` (its users' highest priority, as the policy
//! ranks them). Taking a resource does not raise its holder: what the protocol adds is a rule
//! at the request. A job J requesting a *free* resource takes it only if its priority (its
//! effective urgency) is higher than the *system ceiling*: the highest ceiling among the
//! `pcp:original` resources held by jobs other than J (of J's CPU: the protocol is a
//! uniprocessor one, its resources local). Otherwise J is *ceiling blocked* "by" the job
//! holding the resource of that ceiling, which inherits J's priority (the paper's rule 3) as
//! a holder inherits its direct waiters' under `pip`.
//!
//! In the ledger a ceiling blocked entity leaves its CPU as a blocked one does, with
//! `blocked_on` the resource of the system ceiling but outside its queue (it wants another),
//! and its request is not made: its checkpoint is not passed, so it requests again when it
//! runs. It is woken (the policy hears `unblocked`) when that resource is freed, and its
//! wait is ceiling blocking (`JobRecord::blocked_ceiling`). The policy hears `requested` with
//! the resource it wanted and, as the holder, the job that blocks it.

use super::{representative, urgency};
use crate::ledger::{rec_at, Ledger, Off, Substrate};
use crate::state::NONE;
use rtsched_model::{Protocol, Time};
use rtsched_policies::{EntityId, Urgency};

impl<'t> Ledger<'t> {
    /// `e`, running on `cpu`, is about to request `r`. Under `pcp:original`, when `r` is free
    /// but `e` is not above the system ceiling, `e` is ceiling blocked (true; see the
    /// overview); else it requests `r` as usual (false).
    #[inline]
    pub(in crate::ledger) fn lock_ceiling_blocks<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        r: u32,
        sub: &mut S,
    ) -> bool {
        if !self.lock_is(r, Protocol::PcpOriginal) || self.run.resources[r as usize].holder != NONE
        {
            return false;
        }
        let top = self.system_ceiling(e);
        if top == NONE {
            return false;
        }
        let holder = self.run.resources[top as usize].holder;
        self.policy.get().requested(now, e, r, Some(holder));
        self.unlink(now, cpu, e, Off::Blocked, sub);
        let x = &mut self.run.ents[e as usize];
        x.blocked_on = top;
        x.blocked_since = now;
        self.policy.get().blocked(now, e, cpu);
        let l = self.locking.as_mut().expect("locking");
        l.ceiling_blocked.push((e, now));
        self.reurge(now, holder);
        true
    }

    /// The `pcp:original` resource held by a job other than `e`'s, on `e`'s CPU, whose
    /// ceiling is the most urgent, if that ceiling is at least as urgent as `e`'s effective
    /// urgency (`e` is then ceiling blocked); NONE otherwise. Ceilings are compared as jobs
    /// of their tasks released when `e`'s job was.
    fn system_ceiling(&mut self, e: EntityId) -> u32 {
        let info = self.run.ents[e as usize].info;
        let mut best: (u32, Urgency) = (NONE, self.effective(e));
        for r in 0..self.run.resources.len() {
            let l = self.locking.as_ref().expect("locking");
            let h = self.run.resources[r].holder;
            if l.protocol[r] != Protocol::PcpOriginal || h == NONE {
                continue;
            }
            let hi = self.run.ents[h as usize].info;
            if (hi.task, hi.job) == (info.task, info.job)
                || l.task_cpu[hi.task as usize] != l.task_cpu[info.task as usize]
            {
                continue;
            }
            let rep = representative(
                &self.run.ts,
                l.ceiling_task[r] as usize,
                info.release,
                &info,
            );
            let c = urgency(self.policy.get(), &rep);
            if c <= best.1 && (best.0 == NONE || c < best.1) {
                best = (r as u32, c);
            }
        }
        best.0
    }

    /// The most urgent effective urgency among the entities ceiling blocked on `r` (what its
    /// holder inherits from them besides its queue's).
    pub(super) fn ceiling_inherited(&mut self, r: u32) -> Urgency {
        let mut u = (u64::MAX, u64::MAX);
        for i in 0..self
            .locking
            .as_ref()
            .expect("locking")
            .ceiling_blocked
            .len()
        {
            let w = self.locking.as_ref().expect("locking").ceiling_blocked[i].0;
            if self.run.ents[w as usize].blocked_on == r {
                u = u.min(self.effective(w));
            }
        }
        u
    }

    /// `r` was freed: the entities ceiling blocked on it are ready again, in the order they
    /// blocked, to request what they wanted anew; their wait is ceiling blocking.
    pub(super) fn ceiling_wake(&mut self, now: Time, r: u32) {
        let mut i = 0;
        while i < self
            .locking
            .as_ref()
            .expect("locking")
            .ceiling_blocked
            .len()
        {
            let l = self.locking.as_mut().expect("locking");
            let (w, since) = l.ceiling_blocked[i];
            if self.run.ents[w as usize].blocked_on != r {
                i += 1;
                continue;
            }
            l.ceiling_blocked.remove(i);
            let lent = l.boost_of(w).map(|b| b.0);
            let x = &mut self.run.ents[w as usize];
            x.blocked_on = NONE;
            let (rec, info) = (x.rec, x.info);
            self.run.inv.ready(w, info.deadline);
            if rec != NONE {
                let at = rec_at(self.run.rec_base, self.run.rec_front, rec);
                self.run.records[at].blocked_ceiling += now - since;
            }
            self.dec.note_global_event();
            self.policy.get().unblocked(now, &info);
            if lent.is_some() {
                // Unblocked, the policy keyed it afresh: lend again what it had.
                self.policy.get().boost(now, &info, lent);
            }
        }
    }
}
