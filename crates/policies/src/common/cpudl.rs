//! `cpudl`: a max-heap of the keys (EDF: deadlines) that each CPU runs, with a back-index per
//! CPU and a free-CPU mask — the data structure of the gedf-heap paper §5 (Figs 5–7), kept in
//! mainline Linux as `kernel/sched/cpudeadline.c`.
//!
//! - `elements[0..size]` is an array max-heap of `(key, cpu)`: the root is the busy CPU whose
//!   earliest-deadline entity has the *latest* key, i.e. the CPU a push should preempt (O(1)).
//!   Children of slot `i` are `2i+1` and `2i+2` (0-based; the paper's Fig 6 is 1-based).
//! - `idx[cpu]` is where `cpu` sits in the heap (or `NOT_IN_HEAP` when it is free), so a CPU
//!   whose key changes is re-sifted from its own slot in O(log m) (`set`, `clear`).
//! - `free_cpus` holds the CPUs with nothing to run; `find` looks there first (Fig 7).
//!
//! Everything is allocated in `new`: `elements` has capacity m and never grows past it, so no
//! operation allocates. Every update returns the number of heap slots it touched, which the
//! policy adds to its cost counters. The key type is generic: the distributed EDF policy uses
//! the full total-order [`Key`](super::Key) (deadline, release, task, job, thread), so its
//! choice of victim CPU never depends on ties.
//!
//! Deviation from Fig 7: rtsched has no CPU affinities, so the root is always eligible and the
//! fallback linear loop of Fig 7 (taken when the root is outside the task's affinity) is never
//! needed. The single-threaded structure lives here; the locked and low-contention versions
//! for real threads are in [`super::cpudl_sync`].

use super::cpumask::CpuMask;

const NOT_IN_HEAP: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct Cpudl<K> {
    elements: Vec<(K, u32)>,
    idx: Vec<u32>,
    free_cpus: CpuMask,
}

impl<K: Ord + Copy> Cpudl<K> {
    /// Every one of `cpus` CPUs free.
    pub fn new(cpus: u32) -> Self {
        Cpudl {
            elements: Vec::with_capacity(cpus as usize),
            idx: vec![NOT_IN_HEAP; cpus as usize],
            free_cpus: CpuMask::full(cpus),
        }
    }
    #[inline]
    pub fn cpus(&self) -> u32 {
        self.idx.len() as u32
    }
    /// Number of busy CPUs (heap size).
    #[inline]
    pub fn size(&self) -> usize {
        self.elements.len()
    }
    /// The busy CPU with the latest key, and that key (the heap root).
    #[inline]
    pub fn maximum(&self) -> Option<(u32, K)> {
        self.elements.first().map(|&(k, c)| (c, k))
    }
    #[inline]
    pub fn key_of(&self, cpu: u32) -> Option<K> {
        match self.idx[cpu as usize] {
            NOT_IN_HEAP => None,
            i => Some(self.elements[i as usize].0),
        }
    }
    #[inline]
    pub fn free_cpus(&self) -> &CpuMask {
        &self.free_cpus
    }

    /// Find a CPU for an entity with key `task` (paper Fig 7): a free CPU (`prefer` if it is
    /// free), else the root if its key is later than `task`, else none. Returns the CPU and
    /// the number of mask words plus heap slots read.
    #[inline]
    pub fn find(&self, task: K, prefer: Option<u32>) -> (Option<u32>, u32) {
        // The heap size doubles as a free-CPU count: with every CPU busy, skip the mask scan
        // (m/64 words) and stay O(1) under heavy load.
        let mut words = 0;
        if self.elements.len() < self.idx.len() {
            let (free, w) = self.free_cpus.pick(prefer);
            if free.is_some() {
                return (free, w);
            }
            words = w;
        }
        match self.maximum() {
            Some((cpu, k)) if task < k => (Some(cpu), words + 1),
            _ => (None, words + 1),
        }
    }

    /// `cpu` now has `key` as its earliest entity (it becomes busy if it was free).
    /// O(log m); returns heap slots touched.
    pub fn set(&mut self, cpu: u32, key: K) -> u32 {
        match self.idx[cpu as usize] {
            NOT_IN_HEAP => {
                let i = self.elements.len();
                debug_assert!(i < self.idx.len());
                self.elements.push((key, cpu));
                self.idx[cpu as usize] = i as u32;
                self.free_cpus.clear(cpu);
                1 + self.sift_up(i)
            }
            i => {
                let i = i as usize;
                let old = self.elements[i].0;
                self.elements[i].0 = key;
                1 + if key > old {
                    self.sift_up(i)
                } else {
                    self.sift_down(i)
                }
            }
        }
    }

    /// `cpu` has nothing to run any more: take it out of the heap and mark it free.
    /// O(log m); returns heap slots touched.
    pub fn clear(&mut self, cpu: u32) -> u32 {
        let i = self.idx[cpu as usize];
        if i == NOT_IN_HEAP {
            return 0;
        }
        let i = i as usize;
        self.idx[cpu as usize] = NOT_IN_HEAP;
        self.free_cpus.set(cpu);
        let last = self.elements.pop().expect("cpu is in the heap");
        if i == self.elements.len() {
            return 1;
        }
        // Move the last slot into the hole and restore the heap property in either direction.
        self.elements[i] = last;
        self.idx[last.1 as usize] = i as u32;
        1 + self.sift_up(i) + self.sift_down(i)
    }

    /// Moves slot `i` towards the root while its key is later than its parent's.
    fn sift_up(&mut self, mut i: usize) -> u32 {
        let item = self.elements[i];
        let mut touched = 0;
        while i > 0 {
            let p = (i - 1) / 2;
            touched += 1;
            if self.elements[p].0 >= item.0 {
                break;
            }
            self.elements[i] = self.elements[p];
            self.idx[self.elements[i].1 as usize] = i as u32;
            i = p;
        }
        self.elements[i] = item;
        self.idx[item.1 as usize] = i as u32;
        touched
    }

    /// Moves slot `i` towards the leaves while a child's key is later.
    fn sift_down(&mut self, mut i: usize) -> u32 {
        let n = self.elements.len();
        let item = self.elements[i];
        let mut touched = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.elements[r].0 > self.elements[l].0 {
                r
            } else {
                l
            };
            touched += 1 + (r < n) as u32;
            if self.elements[c].0 <= item.0 {
                break;
            }
            self.elements[i] = self.elements[c];
            self.idx[self.elements[i].1 as usize] = i as u32;
            i = c;
        }
        self.elements[i] = item;
        self.idx[item.1 as usize] = i as u32;
        touched
    }

    /// Checks the heap property, the back-index and the free mask (tests, debug builds).
    pub fn check(&self) -> Result<(), String> {
        for (i, &(k, c)) in self.elements.iter().enumerate() {
            if self.idx[c as usize] != i as u32 {
                return Err(format!(
                    "cpu {c} at slot {i} but idx says {}",
                    self.idx[c as usize]
                ));
            }
            if i > 0 && self.elements[(i - 1) / 2].0 < k {
                return Err(format!("slot {i} is later than its parent"));
            }
            if self.free_cpus.test(c) {
                return Err(format!("busy cpu {c} in free_cpus"));
            }
        }
        for c in 0..self.cpus() {
            if (self.idx[c as usize] == NOT_IN_HEAP) != self.free_cpus.test(c) {
                return Err(format!("cpu {c}: free mask and heap disagree"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn paper_example() {
        // Four CPUs; CPU 2 runs the latest deadline, CPU 3 is free.
        let mut h = Cpudl::new(4);
        h.set(0, 10u64);
        h.set(1, 30);
        h.set(2, 50);
        assert_eq!(h.find(20, None), (Some(3), 1));
        h.set(3, 40);
        assert_eq!(h.maximum(), Some((2, 50)));
        assert_eq!(h.find(45, None).0, Some(2));
        assert_eq!(h.find(55, None).0, None);
        h.set(2, 5);
        assert_eq!(h.maximum(), Some((3, 40)));
        h.clear(3);
        assert_eq!(
            h.find(100, Some(1)).0,
            Some(3),
            "a free CPU wins over the root"
        );
        h.check().unwrap();
    }

    proptest! {
        /// Against a brute-force oracle: after every operation the root is the latest key
        /// and the structure is consistent; capacity never grows.
        #[test]
        fn matches_oracle(ops in proptest::collection::vec((0u32..9, proptest::option::of(0u16..50)), 1..300)) {
            let m = 9;
            let mut h = Cpudl::new(m);
            let cap = h.elements.capacity();
            let mut oracle: Vec<Option<(u16, u32)>> = vec![None; m as usize];
            for (cpu, k) in ops {
                // Keys made distinct by the CPU number, as the policy's keys are.
                let key = k.map(|k| (k, cpu));
                match key {
                    Some(key) => { h.set(cpu, key); }
                    None => { h.clear(cpu); }
                }
                oracle[cpu as usize] = key;
                h.check().map_err(TestCaseError::fail)?;
                let want = oracle.iter().enumerate().filter_map(|(c, k)| k.map(|k| (k, c as u32))).max();
                prop_assert_eq!(h.maximum().map(|(c, k)| (k, c)), want);
                let free: Vec<u32> = (0..m).filter(|&c| oracle[c as usize].is_none()).collect();
                prop_assert_eq!(h.free_cpus().iter().collect::<Vec<_>>(), free);
                prop_assert_eq!(h.elements.capacity(), cap);
            }
        }
    }
}
