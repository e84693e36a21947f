//! Priority inversions, measured by the ledger for every policy under every driver
//! (docs/semantics.md "Priority inversions").
//!
//! # Overview
//!
//! 1. **What is measured.** After each decision the ledger applies, an inversion holds iff
//!    some CPU runs an entity whose absolute deadline is strictly later than that of some
//!    *ready* entity (live, given to the policy, not blocked on a resource, on no CPU):
//!    `min ready deadline < max running deadline`. The state then holds until the next
//!    decision. An *onset* is a decision after which an inversion holds while none held after
//!    the previous one; the time is summed from each onset to the first decision after which
//!    none holds (or the end of the run).
//! 2. **The ready side.** The ready entities are a bitset over entity slots, with a count: a
//!    slot's bit is set when its entity becomes ready (created at a release or fork,
//!    preempted, unblocked) and cleared when it is dispatched or aborted — a few instructions
//!    on the hot path, no allocation. The minimum ready deadline is cached: an entity becoming
//!    ready can only lower it; one at the minimum leaving marks it stale.
//! 3. **The running side.** Each CPU's state keeps the deadline of the entity it runs (0 when
//!    idle: one store wherever the ledger sets what a CPU runs, on a line it writes anyway);
//!    the latest running deadline is their maximum, O(m), computed only when something is
//!    ready.
//! 4. **The test.** With nothing ready — the common case of a work-conserving policy below
//!    saturation — it is one comparison. Otherwise the latest running deadline is compared
//!    with the cached minimum, which, even stale, is a lower bound: only if that leaves an
//!    inversion possible is a stale minimum recomputed (over the set bits). Under global EDF
//!    every ready deadline is at least every running one, so the recomputation happens only
//!    when the minimum was just dispatched and is not the latest running deadline.
//!
//! Held jobs are not entities yet, and a blocked entity is not ready: neither is ever in the
//! set.

use crate::ledger::{CpuState, Ent};
use rtsched_model::Time;
use rtsched_policies::EntityId;

#[derive(Clone, Debug)]
pub(crate) struct Inversions {
    /// One bit per entity slot: ready. Covers every slot of the ledger's `ents`.
    bits: Vec<u64>,
    /// Set bits.
    count: u32,
    /// Minimum deadline of the ready entities (u64::MAX if none); while `min_stale`, a lower
    /// bound of it (an entity at the minimum left).
    ready_min: Time,
    min_stale: bool,
    /// Whether an inversion held after the last decision, and since when.
    on: bool,
    since: Time,
    pub(crate) onsets: u64,
    pub(crate) ns: Time,
}

impl Inversions {
    /// For `slots` entity slots (see [`Inversions::grow`]), in `bits`'s allocation (whatever
    /// it holds: a run after another reuses the one before's).
    pub(crate) fn in_buffer(mut bits: Vec<u64>, slots: usize) -> Self {
        bits.clear();
        bits.resize(slots.div_ceil(64), 0);
        Inversions { bits, count: 0, ready_min: Time::MAX, min_stale: false, on: false, since: 0, onsets: 0, ns: 0 }
    }

    pub(crate) fn into_buffer(self) -> Vec<u64> {
        self.bits
    }

    /// The ledger has `slots` entity slots now (it added one).
    #[cold]
    pub(crate) fn grow(&mut self, slots: usize) {
        if self.bits.len() * 64 < slots {
            self.bits.resize(slots.div_ceil(64), 0);
        }
    }

    /// `e`, with deadline `d`, became ready (created, preempted, or unblocked).
    #[inline(always)]
    pub(crate) fn ready(&mut self, e: EntityId, d: Time) {
        let (w, b) = ((e / 64) as usize, 1u64 << (e % 64));
        debug_assert_eq!(self.bits[w] & b, 0, "entity {e} made ready twice");
        self.bits[w] |= b;
        self.count += 1;
        if d < self.ready_min {
            self.ready_min = d;
        }
    }

    /// `e`, with deadline `d`, is no longer ready (dispatched). Precondition: it was.
    #[inline(always)]
    pub(crate) fn unready(&mut self, e: EntityId, d: Time) {
        let (w, b) = ((e / 64) as usize, 1u64 << (e % 64));
        debug_assert_ne!(self.bits[w] & b, 0, "entity {e} was not ready");
        self.bits[w] &= !b;
        self.count -= 1;
        if d <= self.ready_min {
            self.min_stale = true;
        }
    }

    /// `e`, with deadline `d`, ends (its job is aborted): out of the set if it was ready.
    pub(crate) fn gone(&mut self, e: EntityId, d: Time) {
        if self.bits[(e / 64) as usize] & (1u64 << (e % 64)) != 0 {
            self.unready(e, d);
        }
    }

    /// After a decision at `now`: does an inversion hold? Counts an onset or closes the
    /// interval when the answer changes.
    #[inline(always)]
    pub(crate) fn observe(&mut self, now: Time, ents: &[Ent], cpus: &[CpuState]) {
        if self.count != 0 || self.on {
            self.check(now, ents, cpus);
        }
    }

    /// `min ready deadline < max running deadline`, recomputing a stale minimum only if the
    /// lower bound leaves an inversion possible.
    #[inline(never)]
    fn check(&mut self, now: Time, ents: &[Ent], cpus: &[CpuState]) {
        let latest = cpus.iter().fold(0, |m, c| m.max(c.deadline));
        // A stale minimum is a lower bound of the true one: if even it is not earlier than the
        // latest running deadline, no ready deadline is, and it may stay stale.
        let holds = self.count != 0 && self.ready_min < latest && {
            if self.min_stale {
                let mut min = Time::MAX;
                for (i, &word) in self.bits.iter().enumerate() {
                    let mut w = word;
                    while w != 0 {
                        let e = i * 64 + w.trailing_zeros() as usize;
                        min = min.min(ents[e].info.deadline);
                        w &= w - 1;
                    }
                }
                self.ready_min = min;
                self.min_stale = false;
            }
            self.ready_min < latest
        };
        if holds != self.on {
            if holds {
                self.onsets += 1;
                self.since = now;
            } else {
                self.ns += now - self.since;
            }
            self.on = holds;
        }
    }

    /// The run ends at `end`: an inversion still holding counts until then.
    pub(crate) fn finish(&mut self, end: Time) {
        if self.on {
            self.ns += end.saturating_sub(self.since);
            self.on = false;
        }
    }

    /// Whether an inversion held after the last decision (observers, tests).
    pub(crate) fn holding(&self) -> bool {
        self.on
    }
}
