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
//! 5. **Per job (the victims).** While an inversion holds, each counted job with a ready entity
//!    whose deadline is strictly earlier than the latest running deadline — a ready entity
//!    that runs nowhere while a later deadline runs — accrues the time as its own inversion
//!    time. The victims are recomputed (over the set bits) after every decision at which an
//!    inversion is possible; a job with several such threads counts the time once. The times
//!    live in arrays indexed by job slot (reused as slots are: no hashing, no sorting). A
//!    job's time is final when it ends ([`Inversions::job_done`]): it then goes into a running
//!    count, sum and maximum and a bounded tail of the largest times (the `n / 100 + 2` a
//!    nearest-rank p99 over at most `n` jobs needs), so memory follows the live jobs, not the
//!    run's length. At the end: `inverted_jobs` (how many accrued any), their sum, their
//!    maximum and the 99th percentile over every counted job (zeros included).
//!
//! Held jobs are not entities yet, and a blocked entity is not ready: neither is ever in the
//! set.

use crate::state::{CpuState, Ent, NONE};
use rtsched_model::Time;
use rtsched_policies::EntityId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Not a victim (`Inversions::since`).
const NOT: Time = Time::MAX;

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
    /// The job slots that are victims now; per job slot: since when (`NOT` if it is not
    /// one: `victim_since`), its time so far, and the last recomputation that found it a victim.
    victims: Vec<u32>,
    victim_since: Vec<Time>,
    acc: Vec<Time>,
    mark: Vec<u32>,
    epoch: u32,
    /// Jobs ended with some inversion time: how many, their sum, the longest, and the largest
    /// `keep` of them (a min-heap: what a nearest-rank p99 over the run's jobs needs).
    ended: u64,
    total: Time,
    max: Time,
    tail: BinaryHeap<Reverse<Time>>,
    keep: usize,
}

/// Priority-inversion time per job (docs/semantics.md): the counted jobs that accrued any, the
/// sum, the longest and the 99th percentile over all `jobs` counted jobs (nearest rank, zeros
/// included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerJob {
    pub jobs: u64,
    pub total_ns: Time,
    pub max_ns: Time,
    pub p99_ns: Time,
}

impl Inversions {
    /// For `slots` entity slots (see [`Inversions::grow`]), in `bits`'s allocation (whatever
    /// it holds: a run after another reuses the one before's).
    pub(crate) fn in_buffer(mut bits: Vec<u64>, slots: usize) -> Self {
        bits.clear();
        bits.resize(slots.div_ceil(64), 0);
        Inversions {
            bits,
            count: 0,
            ready_min: Time::MAX,
            min_stale: false,
            on: false,
            since: 0,
            onsets: 0,
            ns: 0,
            victims: Vec::new(),
            victim_since: Vec::new(),
            acc: Vec::new(),
            mark: Vec::new(),
            epoch: 0,
            ended: 0,
            total: 0,
            max: 0,
            tail: BinaryHeap::new(),
            keep: usize::MAX,
        }
    }

    /// The run counts at most `jobs` jobs: the per-job p99 keeps only the times it can need.
    pub(crate) fn bound_jobs(&mut self, jobs: u64) {
        self.keep = usize::try_from(jobs / 100 + 2).unwrap_or(usize::MAX);
    }

    /// Counted job slot `j` ended at `now` (completed or aborted): its inversion time is final.
    #[inline]
    pub(crate) fn job_done(&mut self, j: u32, now: Time) {
        let j = j as usize;
        if j >= self.acc.len() {
            return; // never a victim
        }
        if self.victim_since[j] != NOT {
            self.acc[j] += now.saturating_sub(self.victim_since[j]);
            self.victim_since[j] = NOT;
            if let Some(i) = self.victims.iter().position(|&v| v as usize == j) {
                self.victims.swap_remove(i);
            }
        }
        let t = std::mem::take(&mut self.acc[j]);
        self.ended_with(t);
    }

    fn ended_with(&mut self, t: Time) {
        if t == 0 {
            return;
        }
        self.ended += 1;
        self.total += t;
        self.max = self.max.max(t);
        if self.tail.len() < self.keep {
            self.tail.push(Reverse(t));
        } else if self.tail.peek().is_some_and(|&Reverse(low)| t > low) {
            self.tail.pop();
            self.tail.push(Reverse(t));
        }
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
        if holds || !self.victims.is_empty() {
            self.victims_at(now, if holds { latest } else { 0 }, ents);
        }
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

    /// The victims after a decision at `now`: the counted jobs with a ready entity whose
    /// deadline is before `latest` (none when `latest` is 0). Jobs that stop being victims
    /// add their time since they became one.
    #[inline(never)]
    fn victims_at(&mut self, now: Time, latest: Time, ents: &[Ent]) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        if latest != 0 {
            for (i, &word) in self.bits.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    let e = &ents[i * 64 + w.trailing_zeros() as usize];
                    w &= w - 1;
                    if e.info.deadline >= latest || e.rec == NONE {
                        continue;
                    }
                    let j = e.job as usize;
                    if j >= self.acc.len() {
                        // Job slots grow as a run's live jobs do (amortised, then reused).
                        self.acc.resize(j + 1, 0);
                        self.victim_since.resize(j + 1, NOT);
                        self.mark.resize(j + 1, 0);
                    }
                    if self.mark[j] != self.epoch {
                        self.mark[j] = self.epoch;
                        if self.victim_since[j] == NOT {
                            self.victim_since[j] = now;
                            self.victims.push(j as u32);
                        }
                    }
                }
            }
        }
        // Leavers accrue their time since they became victims.
        let mut i = 0;
        while i < self.victims.len() {
            let j = self.victims[i] as usize;
            if self.mark[j] == self.epoch {
                i += 1;
            } else {
                self.acc[j] += now - self.victim_since[j];
                self.victim_since[j] = NOT;
                self.victims.swap_remove(i);
            }
        }
    }

    /// The run ends at `end`: an inversion still holding counts until then.
    pub(crate) fn finish(&mut self, end: Time) {
        if self.on {
            self.ns += end.saturating_sub(self.since);
            self.on = false;
        }
        for j in std::mem::take(&mut self.victims) {
            let j = j as usize;
            self.acc[j] += end.saturating_sub(self.victim_since[j]);
            self.victim_since[j] = NOT;
        }
    }

    /// Per-job inversion time over `jobs` counted jobs (after [`Inversions::finish`]; the jobs
    /// still live at the end count with their time so far).
    pub(crate) fn per_job(&mut self, jobs: u64) -> PerJob {
        for j in 0..self.acc.len() {
            let t = std::mem::take(&mut self.acc[j]);
            self.ended_with(t);
        }
        let jobs = jobs.max(self.ended);
        // Nearest rank: the ceil(0.99 n)-th smallest of all n jobs, the zeros first, i.e. the
        // (n - rank + 1)-th largest, which the tail holds unless it is a zero.
        let rank = (jobs * 99).div_ceil(100);
        let from_top = (jobs + 1).saturating_sub(rank);
        let mut largest: Vec<Time> = self.tail.iter().map(|&Reverse(t)| t).collect();
        largest.sort_unstable_by(|a, b| b.cmp(a));
        let p99 = if rank == 0 {
            0
        } else {
            usize::try_from(from_top - 1)
                .ok()
                .and_then(|i| largest.get(i).copied())
                .unwrap_or(0)
        };
        PerJob {
            jobs: self.ended,
            total_ns: self.total,
            max_ns: self.max,
            p99_ns: p99,
        }
    }

    /// Whether an inversion held after the last decision (observers, tests).
    pub(crate) fn holding(&self) -> bool {
        self.on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-job summary over n counted jobs: nearest-rank p99 with the jobs that had no
    /// inversion counted as zeros.
    impl Inversions {
        /// Job slot `j` has accrued `t` more.
        fn accrued(&mut self, j: u32, t: Time) {
            let j = j as usize;
            if j >= self.acc.len() {
                self.acc.resize(j + 1, 0);
                self.victim_since.resize(j + 1, NOT);
                self.mark.resize(j + 1, 0);
            }
            self.acc[j] += t;
        }
    }

    #[test]
    fn the_per_job_p99_counts_the_jobs_without_inversion() {
        let three = || {
            let mut inv = Inversions::in_buffer(Vec::new(), 64);
            for (j, ns) in [(3, 5), (8, 40)] {
                inv.accrued(j, ns);
                inv.job_done(j, 100);
            }
            inv.accrued(9, 7); // live at the end: counts with its time so far
            inv
        };
        // 3 of 3 jobs: the 99th percentile is the largest.
        assert_eq!(
            three().per_job(3),
            PerJob {
                jobs: 3,
                total_ns: 52,
                max_ns: 40,
                p99_ns: 40
            }
        );
        // 200 jobs, 197 without: rank 198 is the smallest of the three.
        assert_eq!(three().per_job(200).p99_ns, 5);
        // 1,000 jobs: rank 990 is a zero.
        assert_eq!(
            three().per_job(1000),
            PerJob {
                jobs: 3,
                total_ns: 52,
                max_ns: 40,
                p99_ns: 0
            }
        );
        assert_eq!(
            Inversions::in_buffer(Vec::new(), 1).per_job(0),
            PerJob::default()
        );
    }

    /// A bounded tail gives the p99 of keeping every time; the map holds the live jobs only.
    #[test]
    fn the_bounded_tail_gives_the_same_p99_as_every_time() {
        let times: Vec<Time> = (0..5_000u64)
            .map(|i| (i * 7919) % 1_013 * u64::from(i % 3 != 0))
            .collect();
        let mut every = Inversions::in_buffer(Vec::new(), 64);
        let mut bounded = Inversions::in_buffer(Vec::new(), 64);
        bounded.bound_jobs(times.len() as u64);
        for (rec, &t) in times.iter().enumerate() {
            for inv in [&mut every, &mut bounded] {
                inv.accrued(rec as u32 % 16, t); // 16 job slots, reused
                inv.job_done(rec as u32 % 16, 0);
            }
        }
        assert!(bounded.acc.len() == 16 && bounded.tail.len() <= 5_000 / 100 + 2);
        let (a, b) = (every.per_job(5_000), bounded.per_job(5_000));
        assert_eq!(a, b);
        let mut sorted = times.clone();
        sorted.sort_unstable();
        assert_eq!(a.p99_ns, sorted[(5_000 * 99usize).div_ceil(100) - 1]);
        assert_eq!(a.max_ns, *sorted.last().unwrap());
    }
}
