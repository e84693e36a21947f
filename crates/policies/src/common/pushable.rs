//! `pushable`: the entities queued on one CPU's run queue but not running, earliest first —
//! the kernel's `pushable_dl_tasks_root` of the gedf-heap paper §3.1 and §4 (Fig 2), whose
//! head is the run queue's next-earliest key (`earliest_dl.next`) and the candidate of every
//! push and pull.
//!
//! - `heap` is an array min-heap of `(key, id)`: O(1) peek, O(log n) push, pop and removal of
//!   any member (a pull or an abort takes an entity from the middle).
//! - The slot of each entity is kept in one back-index `pos` shared by every CPU's queue and
//!   owned by the caller (indexed by entity id: an entity is on at most one queue), as the
//!   kernel embeds a task's tree node in the task — O(n) memory in all instead of one
//!   id-indexed array per CPU. An entity on no queue has `pos == NONE`.
//!
//! No operation allocates once `heap` has grown to the largest queue seen.

use super::key::Key;
use crate::policy::EntityId;

/// `pos` of an entity on no queue.
pub(crate) const NONE: u32 = u32::MAX;

/// One CPU's pushable entities: an array min-heap of `(key, id)`, with its slots in the
/// caller's shared back-index `pos` (see the overview).
#[derive(Clone, Debug, Default)]
pub(crate) struct Pushable {
    heap: Vec<(Key, EntityId)>,
}

impl Pushable {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
    #[inline]
    pub(crate) fn peek(&self) -> Option<(Key, EntityId)> {
        self.heap.first().copied()
    }
    pub(crate) fn push(&mut self, pos: &mut [u32], e: EntityId, k: Key) {
        self.heap.push((k, e));
        let i = self.heap.len() - 1;
        pos[e as usize] = i as u32;
        self.sift_up(pos, i);
    }
    pub(crate) fn pop(&mut self, pos: &mut [u32]) -> Option<(Key, EntityId)> {
        let top = self.peek()?;
        self.remove_at(pos, 0);
        Some(top)
    }
    /// Remove `e`, which must be in this queue.
    pub(crate) fn remove(&mut self, pos: &mut [u32], e: EntityId) {
        let i = pos[e as usize] as usize;
        debug_assert_eq!(self.heap[i].1, e);
        self.remove_at(pos, i);
    }
    fn remove_at(&mut self, pos: &mut [u32], i: usize) {
        let gone = self.heap[i].1;
        let last = self.heap.pop().expect("non-empty");
        pos[gone as usize] = NONE;
        if i < self.heap.len() {
            self.heap[i] = last;
            pos[last.1 as usize] = i as u32;
            let i = self.sift_up(pos, i);
            self.sift_down(pos, i);
        }
    }
    fn sift_up(&mut self, pos: &mut [u32], mut i: usize) -> usize {
        let item = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if self.heap[p].0 <= item.0 {
                break;
            }
            self.heap[i] = self.heap[p];
            pos[self.heap[i].1 as usize] = i as u32;
            i = p;
        }
        self.heap[i] = item;
        pos[item.1 as usize] = i as u32;
        i
    }
    fn sift_down(&mut self, pos: &mut [u32], mut i: usize) {
        let n = self.heap.len();
        let item = self.heap[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.heap[l + 1].0 < self.heap[l].0 {
                l + 1
            } else {
                l
            };
            if self.heap[c].0 >= item.0 {
                break;
            }
            self.heap[i] = self.heap[c];
            pos[self.heap[i].1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = item;
        pos[item.1 as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn key(primary: u64, e: EntityId) -> Key {
        Key {
            primary,
            secondary: 0,
            task: e,
            job: 0,
            thread: 0,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Two queues sharing one back-index agree with two ordered-set oracles after every
        /// push, pop and removal, and `pos` names each member's slot (NONE for the others).
        #[test]
        fn matches_btreeset_oracle(ops in proptest::collection::vec((0u8..3, 0usize..2, 0u32..32, 0u64..8), 1..200)) {
            let mut qs = [Pushable::default(), Pushable::default()];
            let mut oracle = [BTreeSet::new(), BTreeSet::new()];
            let mut pos = vec![NONE; 32];
            for (op, q, e, primary) in ops {
                let on = (0..2).find(|&i| oracle[i].iter().any(|&(_, x)| x == e));
                match op {
                    0 if on.is_none() => {
                        qs[q].push(&mut pos, e, key(primary, e));
                        oracle[q].insert((key(primary, e), e));
                    }
                    1 => prop_assert_eq!(qs[q].pop(&mut pos), oracle[q].pop_first()),
                    2 => if let Some(i) = on {
                        qs[i].remove(&mut pos, e);
                        oracle[i].retain(|&(_, x)| x != e);
                    },
                    _ => {}
                }
                for i in 0..2 {
                    prop_assert_eq!(qs[i].len(), oracle[i].len());
                    prop_assert_eq!(qs[i].peek(), oracle[i].first().copied());
                    for (slot, &(_, x)) in qs[i].heap.iter().enumerate() {
                        prop_assert_eq!(pos[x as usize], slot as u32);
                    }
                }
                for x in 0..32u32 {
                    if !oracle.iter().any(|o| o.iter().any(|&(_, y)| y == x)) {
                        prop_assert_eq!(pos[x as usize], NONE);
                    }
                }
            }
        }
    }
}
