//! `findcpu`: where a push sends an entity — the find-CPU step of distributed global
//! scheduling (the kernel's `find_later_rq` / `cpudl_find` / `cpupri_find`), in the variants
//! the gedf-heap paper compares (option `push=`; §4–6, Figs 3, 4, 7, costs in Figs 8–11).
//!
//! A *push structure* ([`PushFind`] chooses one) mirrors each CPU's earliest key and is updated
//! whenever that key changes (`Finder::update`, the extra enqueue/dequeue cost of Figs 10–11);
//! a find reads it (`Finder::find`):
//!
//! 1. `linear` — no structure; the original `SCHED_DEADLINE` loop over every CPU (Fig 3, O(m)).
//! 2. `fmask` — the free-CPU mask (`dlf_mask`, §4.1, Fig 4), then the loop when none is free.
//! 3. `heap` — the free mask, then the root of the [`Cpudl`] max-heap of earliest keys (§5,
//!    Figs 5–7): O(1) lookup, O(log m) update.
//! 4. `cpupri` — the per-priority-level masks of `SCHED_FIFO` (§3.1, [`CpuPri`]); only for
//!    fixed priority (`gfp-dist`), whose keys fall into a small fixed set of levels.
//!
//! All variants pick the same CPU for a key `k`: the task's last CPU if free, else the lowest
//! free CPU, else the CPU whose earliest key is the latest and later than `k` (cpupri: a CPU
//! of the lowest level below `k`'s, see below), or none. So linear, fmask and heap produce
//! identical schedules *and* placements, as the tests below check by hand and
//! `crates/sim/tests/gedf_dist_equivalence.rs` on random task sets. Each find and update
//! returns what it read or wrote (CPUs, mask words, heap slots, levels) for the cost counters.
//!
//! Deviation from `cpupri.c`: SCHED_FIFO never preempts within one level, but rtsched's FP
//! order breaks ties inside a level (release, task, job). When no lower level has a CPU,
//! find-CPU also scans the entity's own level for the CPU whose key is the latest and later
//! than the entity's (rare: two equal-priority jobs released at the same instant).

use super::cpudl::Cpudl;
use super::cpumask::CpuMask;
use super::cpupri::{self, CpuPri};
use super::key::Key;
use super::runqueue::RunQueue;

/// How a push finds its destination CPU (the paper's variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushFind {
    /// Loop over every CPU (original `SCHED_DEADLINE`, Fig 3).
    Linear,
    /// Free-CPU mask, then the loop (§4.1, Fig 4).
    Fmask,
    /// Free-CPU mask, then the max-heap root (§5, Fig 7).
    Heap,
    /// Per-priority-level CPU masks (`SCHED_FIFO`'s `cpupri`, §3.1); fixed priority only.
    Cpupri,
}

impl PushFind {
    pub fn parse(s: &str) -> Option<PushFind> {
        Some(match s {
            "linear" => PushFind::Linear,
            "fmask" => PushFind::Fmask,
            "heap" => PushFind::Heap,
            "cpupri" => PushFind::Cpupri,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            PushFind::Linear => "linear",
            PushFind::Fmask => "fmask",
            PushFind::Heap => "heap",
            PushFind::Cpupri => "cpupri",
        }
    }
}

/// The push structure of the chosen variant.
pub(crate) enum Finder {
    Linear,
    Fmask(CpuMask),
    Heap(Cpudl<Key>),
    /// cpupri, with the primary keys of levels 1.. (least urgent first).
    Cpupri(CpuPri, Vec<u64>),
}

impl Finder {
    /// The structure of `find` for `cpus` CPUs, all free. `levels`: for `PushFind::Cpupri`,
    /// the distinct primary keys of the order (any order, duplicates allowed).
    pub(crate) fn new(find: PushFind, cpus: u32, levels: Vec<u64>) -> Finder {
        match find {
            PushFind::Linear => Finder::Linear,
            PushFind::Fmask => Finder::Fmask(CpuMask::full(cpus)),
            PushFind::Heap => Finder::Heap(Cpudl::new(cpus)),
            PushFind::Cpupri => {
                let mut l = levels;
                l.sort_unstable_by(|a, b| b.cmp(a));
                l.dedup();
                Finder::Cpupri(CpuPri::new(cpus, l.len() as u32), l)
            }
        }
    }

    /// The cpupri level of a key (1 = least urgent).
    #[inline]
    fn level(levels: &[u64], k: &Key) -> u32 {
        levels.partition_point(|&p| p > k.primary) as u32 + 1
    }

    /// `cpu`'s earliest key became `earliest` (None: free). Returns the mask bits, heap slots
    /// or levels written.
    #[inline]
    pub(crate) fn update(&mut self, cpu: u32, earliest: Option<Key>) -> u32 {
        match self {
            Finder::Linear => 0,
            Finder::Fmask(free) => {
                if earliest.is_some() {
                    free.clear(cpu)
                } else {
                    free.set(cpu)
                }
                1
            }
            Finder::Heap(h) => match earliest {
                Some(k) => h.set(cpu, k),
                None => h.clear(cpu),
            },
            Finder::Cpupri(p, levels) => {
                let l = earliest.map_or(cpupri::FREE, |k| Self::level(levels, &k));
                p.set(cpu, l)
            }
        }
    }

    /// A CPU that is free or whose earliest key (in `rqs`) is later than `k` (see the overview
    /// for the choice among several), and the CPUs, mask words, heap slots or levels read.
    #[inline]
    pub(crate) fn find(&self, rqs: &[RunQueue], k: Key, prefer: Option<u32>) -> (Option<u32>, u32) {
        match self {
            Finder::Linear => scan(rqs, k, prefer, None),
            Finder::Fmask(free) => {
                let (c, w) = free.pick(prefer);
                match c {
                    Some(c) => (Some(c), w),
                    None => {
                        let (c, t) = scan(rqs, k, None, Some(free));
                        (c, t + w)
                    }
                }
            }
            Finder::Heap(h) => h.find(k, prefer),
            Finder::Cpupri(p, levels) => {
                let l = Self::level(levels, &k);
                match p.find_lower(l, prefer) {
                    (Some(c), t) => (Some(c), t),
                    (None, t) => {
                        // rtsched's FP order breaks ties inside a level (release, task,
                        // job), where SCHED_FIFO never preempts: look at k's own level.
                        let mut best: Option<(Key, u32)> = None;
                        let mut n = 0;
                        for c in p.cpus_at(l).iter() {
                            n += 1;
                            let e = rqs[c as usize].earliest.expect("busy CPU");
                            if e > k && best.is_none_or(|(b, _)| e > b) {
                                best = Some((e, c));
                            }
                        }
                        (best.map(|b| b.1), t + n)
                    }
                }
            }
        }
    }

    /// The structure agrees with the queues' earliest keys (checked for the heap only).
    pub(crate) fn check(&self, rqs: &[RunQueue]) -> Result<(), String> {
        if let Finder::Heap(h) = self {
            h.check()?;
            for (c, rq) in rqs.iter().enumerate() {
                if h.key_of(c as u32) != rq.earliest {
                    return Err(format!(
                        "cpu {c}: heap key differs from the queue's earliest"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The loop over every CPU (Fig 3): a free CPU (`prefer` first), else the latest earliest
/// key later than `k`. With `skip_free`, the caller already knows no CPU is free.
fn scan(
    rqs: &[RunQueue],
    k: Key,
    prefer: Option<u32>,
    skip_free: Option<&CpuMask>,
) -> (Option<u32>, u32) {
    let mut free: Option<u32> = None;
    let mut latest: Option<(Key, u32)> = None;
    for (c, rq) in rqs.iter().enumerate() {
        match rq.earliest {
            None => {
                if free.is_none() || prefer == Some(c as u32) {
                    free = Some(c as u32);
                }
            }
            Some(e) => {
                if e > k && latest.is_none_or(|(l, _)| e > l) {
                    latest = Some((e, c as u32));
                }
            }
        }
    }
    debug_assert!(skip_free.is_none() || free.is_none());
    (free.or(latest.map(|l| l.1)), rqs.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys by primary; the task index breaks ties, as in every policy's total order.
    fn key(primary: u64, task: u32) -> Key {
        Key {
            primary,
            secondary: 0,
            task,
            job: 0,
            thread: 0,
        }
    }

    /// Queues with these earliest keys, and each variant's structure updated to match.
    fn setup(earliest: &[Option<Key>]) -> (Vec<RunQueue>, Vec<(PushFind, Finder)>) {
        let m = earliest.len() as u32;
        let rqs: Vec<RunQueue> = earliest
            .iter()
            .map(|&e| RunQueue {
                earliest: e,
                ..RunQueue::empty()
            })
            .collect();
        let levels = vec![10, 20, 30, 40];
        let finders = [
            PushFind::Linear,
            PushFind::Fmask,
            PushFind::Heap,
            PushFind::Cpupri,
        ]
        .into_iter()
        .map(|v| {
            let mut f = Finder::new(v, m, levels.clone());
            for (c, &e) in earliest.iter().enumerate() {
                f.update(c as u32, e);
            }
            f.check(&rqs).unwrap();
            (v, f)
        })
        .collect();
        (rqs, finders)
    }

    #[test]
    fn free_cpus_first_the_preferred_one_if_free() {
        let (rqs, finders) = setup(&[Some(key(10, 0)), None, Some(key(30, 2)), None]);
        for (v, f) in &finders {
            assert_eq!(
                f.find(&rqs, key(5, 9), Some(3)).0,
                Some(3),
                "{v:?}: the task's last CPU is free"
            );
            assert_eq!(
                f.find(&rqs, key(5, 9), Some(0)).0,
                Some(1),
                "{v:?}: else the lowest free CPU"
            );
            assert_eq!(
                f.find(&rqs, key(50, 9), None).0,
                Some(1),
                "{v:?}: a free CPU even for a late key"
            );
        }
    }

    #[test]
    fn busy_cpus_the_latest_earliest_key_later_than_the_entity() {
        // Levels 4, 1, 2, 3 for cpupri (10 is the most urgent key).
        let (rqs, finders) = setup(&[
            Some(key(10, 0)),
            Some(key(40, 1)),
            Some(key(30, 2)),
            Some(key(20, 3)),
        ]);
        for (v, f) in &finders {
            assert_eq!(
                f.find(&rqs, key(20, 9), Some(3)).0,
                Some(1),
                "{v:?}: the CPU running 40, not the preferred one"
            );
            assert_eq!(f.find(&rqs, key(10, 9), None).0, Some(1), "{v:?}");
            assert_eq!(
                f.find(&rqs, key(40, 9), None).0,
                None,
                "{v:?}: every CPU runs something earlier"
            );
            // Equal primary keys: the task index decides (cpupri: its own-level scan).
            assert_eq!(
                f.find(&rqs, key(40, 0), None).0,
                Some(1),
                "{v:?}: earlier than the running (40, task 1)"
            );
        }
    }

    #[test]
    fn updates_count_what_they_touch() {
        let mut f = Finder::new(PushFind::Fmask, 2, Vec::new());
        assert_eq!(f.update(0, Some(key(1, 0))), 1);
        let mut f = Finder::new(PushFind::Cpupri, 2, vec![7, 3, 7]);
        assert_eq!(
            f.update(0, Some(key(7, 0))),
            2,
            "free -> level 1: two masks"
        );
        assert_eq!(f.update(0, Some(key(7, 1))), 0, "same level: nothing");
        assert_eq!(
            Finder::new(PushFind::Linear, 2, Vec::new()).update(1, None),
            0
        );
    }
}
