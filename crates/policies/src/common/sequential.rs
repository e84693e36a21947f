//! A global domain in which parallel jobs run *sequentially*: a forked region's threads run one
//! after another, in thread order, never two threads of one job at once — what a job gets when
//! its application is not parallelised (`gedf-seq`), and how federated scheduling runs its
//! light tasks ("treated as sequential tasks").
//!
//! The threads of a region reach the policy together (`forked`). The first goes to the
//! [`GlobalDomain`]; the others are *held* in a chain, each behind its predecessor, and the next
//! is released to the domain when the one before it completes. Only the job's current thread
//! is ever ready in the domain, so the domain's order compares jobs exactly as it would compare
//! sequential jobs. A held thread is live for the substrate (it was forked) but never dispatched.
//!
//! No allocation per event: the chain is one slot per entity id (`next`), grown to the largest
//! id seen.

use super::global::GlobalDomain;
use super::key::Order;
use crate::policy::{Dispatch, EntityId, EntityInfo};
use rtsched_model::Time;

pub struct SequentialDomain<O: Order> {
    pub domain: GlobalDomain<O>,
    /// Per entity id: the thread of its region to release when it completes.
    next: Vec<Option<EntityInfo>>,
    /// Per entity id: forked but held behind a sibling (not in the domain).
    held: Vec<bool>,
    /// Threads that were held behind a sibling (stats).
    pub serialised: u64,
}

impl<O: Order> SequentialDomain<O> {
    pub fn new(domain: GlobalDomain<O>) -> Self {
        SequentialDomain {
            domain,
            next: Vec::with_capacity(64),
            held: Vec::with_capacity(64),
            serialised: 0,
        }
    }

    fn slot(&mut self, e: EntityId) -> usize {
        let i = e as usize;
        if self.next.len() <= i {
            self.next.resize(i + 1, None);
            self.held.resize(i + 1, false);
        }
        i
    }

    /// A job (or a one-thread region) is ready.
    pub fn release(&mut self, e: &EntityInfo) {
        let i = self.slot(e.id);
        self.next[i] = None;
        self.held[i] = false;
        self.domain.release(e);
    }

    /// A region forked: its first thread is ready, the others wait in thread order.
    pub fn forked(&mut self, threads: &[EntityInfo]) {
        let Some((first, rest)) = threads.split_first() else {
            return;
        };
        self.release(first);
        let mut prev = first.id;
        for t in rest {
            let i = self.slot(t.id);
            self.held[i] = true;
            self.next[i] = None;
            self.next[prev as usize] = Some(*t);
            prev = t.id;
            self.serialised += 1;
        }
    }

    /// `e` completed on `cpu`: the next thread of its region, if any, becomes ready.
    pub fn complete(&mut self, e: EntityId, cpu: u32) {
        self.domain.complete(e, cpu);
        if let Some(n) = self.next[e as usize].take() {
            self.held[n.id as usize] = false;
            self.domain.release(&n);
        }
    }

    /// `e` blocked on a resource: it leaves its CPU, and its successors keep waiting for it.
    pub fn blocked(&mut self, e: EntityId, cpu: u32) {
        self.domain.complete(e, cpu);
    }

    /// The blocked `e` has its resource: ready again.
    pub fn unblocked(&mut self, e: &EntityInfo) {
        self.domain.release(e);
    }

    /// `e`'s job was aborted: the substrate reports every thread of the region, held or not,
    /// in any order, so each forgets only its own link.
    pub fn aborted(&mut self, e: EntityId) {
        let i = e as usize;
        self.next[i] = None;
        if self.held[i] {
            self.held[i] = false;
        } else {
            self.domain.aborted(e);
        }
    }

    pub fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        self.domain.schedule(now, d);
    }
}

impl<O: Order> crate::policy::Policy for SequentialDomain<O> {
    fn name(&self) -> String {
        self.domain.label.clone()
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        SequentialDomain::release(self, e)
    }
    fn forked(&mut self, _now: Time, _cpu: Option<u32>, threads: &[EntityInfo]) {
        SequentialDomain::forked(self, threads)
    }
    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        SequentialDomain::complete(self, e, cpu)
    }
    fn blocked(&mut self, _now: Time, e: EntityId, cpu: u32) {
        SequentialDomain::blocked(self, e, cpu)
    }
    fn unblocked(&mut self, _now: Time, e: &EntityInfo) {
        SequentialDomain::unblocked(self, e)
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        SequentialDomain::aborted(self, e)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        SequentialDomain::schedule(self, now, d)
    }
    fn stats(&self) -> Vec<(String, f64)> {
        super::counters(&[("serialised_threads", self.serialised)])
    }
}
