//! The class stack's own timers — the kernel's hrtimers of each class: a deadline entity's
//! replenishment (`dl_timer`, `start_dl_timer`) and its 0-lag inactive timer
//! (`inactive_timer`), the instant a running entity's runtime runs out (where the kernel's
//! `update_curr_dl` would find `dl_runtime_exceeded`, charged exactly here), the RT class's
//! period and throttle per CPU (`sched_rt_period_timer`, `sched_rt_runtime_exceeded`), the fair
//! server's deferral, exhaustion and replenishment.
//!
//! Each owner (a lane, a CPU's RT bandwidth, a CPU's server) has at most one pending timer:
//! an indexed min-heap of `(time, owner)` — one total order, ties by owner — with re-arm and
//! cancel in O(log n). The substrate has one-shot timers only and no cancellation, so the
//! policy asks it for a wake-up at the earliest pending time unless a wake-up already asked
//! for comes no later: a cancelled or re-armed timer costs at most one early wake-up, never a
//! late one. No allocation once the heaps have grown to the owners and the asked times.

use crate::common::heap::IndexedHeap;
use crate::policy::Dispatch;
use rtsched_model::Time;

pub(super) struct Timers {
    heap: IndexedHeap<(Time, u32)>,
    /// Wake-ups asked of the substrate and not yet fired. A wake-up is asked only before
    /// every one pending, so they are in decreasing order: a stack whose top is the earliest.
    asked: Vec<Time>,
}

impl Timers {
    pub(super) fn new(owners: usize) -> Self {
        let mut heap = IndexedHeap::with_capacity(owners);
        if owners > 0 {
            // Grow the back-index to every owner now, not on the hot path.
            heap.push(owners as u32 - 1, (0, 0));
            heap.remove(owners as u32 - 1);
        }
        Timers {
            heap,
            asked: Vec::with_capacity(owners.max(4)),
        }
    }

    /// Arm (or re-arm) `owner`'s timer at `at`.
    #[inline]
    pub(super) fn set(&mut self, owner: u32, at: Time) {
        // One sift (re-key in place), not a removal and a push.
        self.heap.update(owner, (at, owner));
    }

    /// Cancel `owner`'s timer, if any.
    #[inline]
    pub(super) fn cancel(&mut self, owner: u32) {
        if self.heap.contains(owner) {
            self.heap.remove(owner);
        }
    }

    /// `owner`'s pending time.
    #[cfg(test)]
    pub(super) fn at(&self, owner: u32) -> Option<Time> {
        self.heap.key_of(owner).map(|k| k.0)
    }

    /// Take the earliest timer due at or before `now` (its owner), if any.
    #[inline]
    pub(super) fn pop_due(&mut self, now: Time) -> Option<u32> {
        match self.heap.peek() {
            Some(((t, _), owner)) if t <= now => {
                self.heap.remove(owner);
                Some(owner)
            }
            _ => None,
        }
    }

    /// A wake-up the substrate was asked for fired at `now`.
    #[inline]
    pub(super) fn fired(&mut self, now: Time) {
        while self.asked.last().is_some_and(|&t| t <= now) {
            self.asked.pop();
        }
    }

    /// Ask the substrate for a wake-up at the earliest pending timer, unless one already
    /// asked for comes no later.
    #[inline]
    pub(super) fn ask(&mut self, d: &mut Dispatch<'_>) {
        let Some(((t, _), _)) = self.heap.peek() else {
            return;
        };
        if self.asked.last().is_some_and(|&a| a <= t) {
            return;
        }
        self.asked.push(t);
        d.wake_at(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_by_owner_and_rearm_replaces() {
        let mut t = Timers::new(4);
        t.set(2, 50);
        t.set(1, 50);
        t.set(3, 10);
        t.set(3, 70);
        assert_eq!(t.at(3), Some(70));
        assert_eq!(t.pop_due(49), None);
        assert_eq!(
            (t.pop_due(60), t.pop_due(60), t.pop_due(60)),
            (Some(1), Some(2), None)
        );
        t.cancel(3);
        assert_eq!(t.pop_due(u64::MAX), None);
    }
}
