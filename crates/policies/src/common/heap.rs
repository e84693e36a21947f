//! An indexed binary min-heap over entity ids, with a back-index from id to heap position
//! (the layout of the kernel's `cpudeadline.c`): O(log n) push, pop, remove and re-key of any
//! member, O(1) membership and peek, and no allocation once its arrays have grown to the
//! largest id seen. Written by hand because removal by id is what std's `BinaryHeap` lacks.

const ABSENT: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct IndexedHeap<K> {
    heap: Vec<(K, u32)>,
    pos: Vec<u32>,
}

impl<K: Ord + Copy> Default for IndexedHeap<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Ord + Copy> IndexedHeap<K> {
    pub fn new() -> Self {
        IndexedHeap {
            heap: Vec::new(),
            pos: Vec::new(),
        }
    }
    pub fn with_capacity(n: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(n),
            pos: Vec::with_capacity(n),
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != ABSENT)
    }
    #[inline]
    pub fn peek(&self) -> Option<(K, u32)> {
        self.heap.first().copied()
    }
    pub fn key_of(&self, id: u32) -> Option<K> {
        self.pos
            .get(id as usize)
            .filter(|&&p| p != ABSENT)
            .map(|&p| self.heap[p as usize].0)
    }

    /// Insert `id` with `key`. Precondition: `id` is not in the heap.
    #[inline(always)]
    pub fn push(&mut self, id: u32, key: K) {
        if self.pos.len() <= id as usize {
            self.pos.resize(id as usize + 1, ABSENT);
        }
        debug_assert_eq!(self.pos[id as usize], ABSENT, "id {id} pushed twice");
        let i = self.heap.len();
        self.heap.push((key, id));
        self.pos[id as usize] = i as u32;
        self.sift_up(i);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(K, u32)> {
        if self.heap.is_empty() {
            return None;
        }
        let top = self.heap[0];
        self.remove_at(0);
        Some(top)
    }

    /// Remove `id` if present; returns its key.
    #[inline]
    pub fn remove(&mut self, id: u32) -> Option<K> {
        let p = *self.pos.get(id as usize)?;
        if p == ABSENT {
            return None;
        }
        let k = self.heap[p as usize].0;
        self.remove_at(p as usize);
        Some(k)
    }

    /// Change the key of a member (or insert it).
    pub fn update(&mut self, id: u32, key: K) {
        match self.pos.get(id as usize).copied() {
            Some(p) if p != ABSENT => {
                let old = self.heap[p as usize].0;
                self.heap[p as usize].0 = key;
                if key < old {
                    self.sift_up(p as usize)
                } else {
                    self.sift_down(p as usize)
                }
            }
            _ => self.push(id, key),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (K, u32)> + '_ {
        self.heap.iter().copied()
    }

    fn remove_at(&mut self, i: usize) {
        let last = self.heap.len() - 1;
        let id = self.heap[i].1;
        self.swap(i, last);
        self.heap.pop();
        self.pos[id as usize] = ABSENT;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i].0 < self.heap[parent].0 {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.heap[l].0 < self.heap[m].0 {
                m = l;
            }
            if r < n && self.heap[r].0 < self.heap[m].0 {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Op {
        Push(u32, u16),
        Pop,
        Remove(u32),
        Update(u32, u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..64, any::<u16>()).prop_map(|(i, k)| Op::Push(i, k)),
            Just(Op::Pop),
            (0u32..64).prop_map(Op::Remove),
            (0u32..64, any::<u16>()).prop_map(|(i, k)| Op::Update(i, k)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The heap agrees with a BTreeMap oracle after every operation.
        #[test]
        fn matches_btreemap_oracle(ops in proptest::collection::vec(op(), 1..200)) {
            let mut h = IndexedHeap::<(u16, u32)>::new();
            let mut oracle: BTreeMap<u32, u16> = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Push(i, k) => { oracle.entry(i).or_insert_with(|| { h.push(i, (k, i)); k }); }
                    Op::Pop => {
                        let want = oracle.iter().map(|(&i, &k)| ((k, i), i)).min();
                        let got = h.pop();
                        prop_assert_eq!(got, want);
                        if let Some((_, i)) = want { oracle.remove(&i); }
                    }
                    Op::Remove(i) => prop_assert_eq!(h.remove(i).map(|k| k.0), oracle.remove(&i)),
                    Op::Update(i, k) => { h.update(i, (k, i)); oracle.insert(i, k); }
                }
                prop_assert_eq!(h.len(), oracle.len());
                let want = oracle.iter().map(|(&i, &k)| ((k, i), i)).min();
                prop_assert_eq!(h.peek(), want);
                for i in 0..64u32 { prop_assert_eq!(h.contains(i), oracle.contains_key(&i)); }
            }
        }
    }
}
