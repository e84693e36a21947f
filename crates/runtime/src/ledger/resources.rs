//! Resources: mutexes, their holders and FIFO queues (ChronOS §3; ledger overview 4).
//!
//! A request for a held resource reports `requested`, blocks the thread (its CPU is vacated,
//! the policy hears `blocked`) and queues it; a release reports `released` and hands the
//! resource to the longest waiter (`unblocked`) — or, for a policy that grants resources
//! itself, waits for its [`Dispatch::grant`](rtsched_policies::Dispatch::grant); what such a
//! policy leaves ungranted after its decision goes FIFO (`apply_grants`). A waiter's time
//! blocked is added to its job's record. A mutex is not recursive, and only its holder
//! releases it. A request that closes a cycle of holders is a deadlock (deadlock.rs).

use super::{rec_at, Ledger, Off, Substrate};
use crate::state::NONE;
use rtsched_model::Time;
use rtsched_policies::EntityId;
use std::collections::VecDeque;

/// A mutex: its holder, its FIFO queue, and whether it awaits the policy's grant.
#[derive(Clone, Debug)]
pub(super) struct Resource {
    pub(super) holder: u32,
    pub(super) queue: VecDeque<EntityId>,
    pub(super) pending: bool,
}

impl Default for Resource {
    fn default() -> Self {
        Resource {
            holder: NONE,
            queue: VecDeque::new(),
            pending: false,
        }
    }
}

impl Resource {
    /// `e` requests it: true if it took it (free, and not awaiting a grant), false if it must
    /// wait (queued last).
    pub(super) fn request(&mut self, e: EntityId) -> bool {
        if self.holder == NONE && !self.pending {
            self.holder = e;
            return true;
        }
        debug_assert_ne!(self.holder, e, "a mutex is not recursive");
        self.queue.push_back(e);
        false
    }
    /// `e` stops waiting (its job was aborted). Returns true if that was the last waiter of
    /// a resource awaiting a grant: nobody is left to grant it to, so it is simply free.
    pub(super) fn leave(&mut self, e: EntityId) -> bool {
        if let Some(i) = self.queue.iter().position(|&w| w == e) {
            self.queue.remove(i);
        }
        if self.pending && self.queue.is_empty() {
            self.pending = false;
            return true;
        }
        false
    }
    /// The holder `e` lets go. With `fifo`, the longest waiter takes it and is returned; else
    /// a resource with waiters awaits the policy's grant.
    pub(super) fn release(&mut self, e: EntityId, fifo: bool) -> Option<EntityId> {
        assert_eq!(
            self.holder, e,
            "entity {e} released a resource it does not hold"
        );
        self.holder = NONE;
        if self.queue.is_empty() {
            return None;
        }
        if fifo {
            self.holder = self.queue.pop_front().expect("a waiter");
            Some(self.holder)
        } else {
            self.pending = true;
            None
        }
    }
}

impl<'t> Ledger<'t> {
    /// `e`, running on `cpu`, requested `r`, which `holder` holds (or which awaits a grant),
    /// and is queued: it leaves its CPU and waits.
    pub(super) fn block<S: Substrate>(
        &mut self,
        now: Time,
        cpu: u32,
        e: EntityId,
        r: u32,
        holder: u32,
        sub: &mut S,
    ) {
        self.policy
            .get()
            .requested(now, e, r, (holder != NONE).then_some(holder));
        self.unlink(now, cpu, e, Off::Blocked, sub);
        let x = &mut self.run.ents[e as usize];
        x.blocked_on = r;
        x.blocked_since = now;
        self.policy.get().blocked(now, e, cpu);
        if holder != NONE {
            self.detect_deadlock(now, e, holder);
        }
        if self.locking.is_some() {
            self.lock_blocked(now, r, holder);
        }
    }

    /// `e` releases `r`: tell the policy, then hand `r` on.
    pub(super) fn release_resource(&mut self, now: Time, r: u32, e: EntityId) {
        self.policy.get().released(now, e, r);
        self.hand_on(now, r, e);
    }

    /// The holder `e` frees `r`: it goes to its longest waiter — or, for a policy that grants
    /// resources itself, waits for its grant.
    pub(super) fn hand_on(&mut self, now: Time, r: u32, e: EntityId) {
        let fifo = !self.grants_resources;
        if self.locking.is_some() {
            self.lock_choose(r);
        }
        let to = match self.run.resources[r as usize].release(e, fifo) {
            Some(w) if self.locking.is_some() && self.lock_spinning(w) => {
                self.spin_granted(now, w);
                NONE
            }
            Some(w) => {
                self.took(now, r, w);
                let info = self.run.ents[w as usize].info;
                self.dec.note_global_event();
                self.policy.get().unblocked(now, &info);
                w
            }
            None if self.run.resources[r as usize].pending => {
                self.dec.add_pending_grant(r);
                NONE
            }
            None => NONE,
        };
        if self.locking.is_some() {
            self.lock_released(now, e, r, to);
        }
    }

    /// `w`, out of `r`'s queue, holds `r` now and is ready again.
    fn took(&mut self, now: Time, r: u32, w: EntityId) {
        let res = &mut self.run.resources[r as usize];
        res.holder = w;
        res.pending = false;
        let x = &mut self.run.ents[w as usize];
        debug_assert_eq!(x.blocked_on, r);
        x.blocked_on = NONE;
        let (waited, rec) = (now - x.blocked_since, x.rec);
        self.run.inv.ready(w, x.info.deadline);
        if rec != NONE {
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)].blocked += waited;
        }
    }

    /// Grants the policy made, then (for a granting policy) FIFO for what it left ungranted.
    /// Returns whether an `unblocked` was reported, which calls for another `schedule`.
    #[cold]
    #[inline(never)]
    pub(super) fn apply_grants(&mut self, now: Time) -> bool {
        self.dec.take_grants(&mut self.lists.grants);
        for i in 0..self.lists.grants.len() {
            let (r, w) = self.lists.grants[i];
            let res = &mut self.run.resources[r as usize];
            let at = res.queue.iter().position(|&x| x == w);
            assert!(
                res.pending && at.is_some(),
                "policy '{}' granted resource {r} to entity {w}, which does not wait for it (or {r} was not freed)",
                self.policy.get().name()
            );
            res.queue.remove(at.unwrap());
            self.took(now, r, w);
        }
        let mut ungranted = std::mem::take(&mut self.lists.ungranted);
        self.dec.take_pending_grants(&mut ungranted);
        let mut woke = false;
        for &r in &ungranted {
            let res = &mut self.run.resources[r as usize];
            if !res.pending {
                continue;
            }
            let w = res
                .queue
                .pop_front()
                .expect("a pending resource has waiters");
            self.took(now, r, w);
            let info = self.run.ents[w as usize].info;
            self.dec.note_global_event();
            self.policy.get().unblocked(now, &info);
            woke = true;
        }
        self.lists.ungranted = ungranted;
        woke
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_granted_in_request_order() {
        let mut r = Resource::default();
        assert!(r.request(3));
        assert!(!r.request(5));
        assert!(!r.request(7));
        assert!(!r.request(9));
        assert!(!r.leave(7));
        assert_eq!(r.release(3, true), Some(5));
        assert_eq!(r.release(5, true), Some(9));
        assert_eq!(r.release(9, true), None);
        assert_eq!(r.holder, NONE);
        assert!(r.request(7));
        // A policy that grants: a freed resource with waiters is reserved for its grant.
        assert!(!r.request(8));
        assert_eq!(r.release(7, false), None);
        assert!(r.pending && !r.request(6));
        // Aborts take its waiters away before the policy grants it: the last one leaving frees it.
        assert!(!r.leave(8));
        assert!(r.leave(6));
        assert!(!r.pending && r.request(1));
    }

    #[test]
    #[should_panic(expected = "does not hold")]
    fn releasing_a_resource_one_does_not_hold_is_a_bug() {
        let mut r = Resource::default();
        assert!(r.request(1));
        r.release(2, true);
    }
}
