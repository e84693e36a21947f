//! A global domain in which parallel jobs run *sequentially*: a forked region's threads run one
//! after another, in thread order, never two threads of one job at once — what a job gets when
//! its application is not parallelised (`gedf-seq`), and how federated scheduling runs its
//! light tasks ("treated as sequential tasks").
//!
//! The threads of a region reach the policy together (`forked`); a DAG job's nodes arrive as
//! their predecessors complete (`forked`, or `release` at a join). Each job has at most one
//! *active* entity in the [`GlobalDomain`] (ready, running or blocked); the others are *held*
//! per task (a task has at most one job with the policy), and when the active one completes
//! the held entity of lowest thread (node) index becomes active. The pick waits for the
//! instant's `schedule`, so that a DAG node forked by the completion competes with the nodes
//! held before it. Only a job's active entity is ever ready in the domain, so the domain's
//! order compares jobs exactly as it would compare sequential jobs. A held entity is live for
//! the substrate (it was forked) but never dispatched.
//!
//! No allocation per event in the steady state: the per-task lists keep their capacity, the
//! per-entity flags grow to the largest id seen.

use super::global::GlobalDomain;
use super::key::Order;
use crate::policy::{Dispatch, EntityId, EntityInfo};
use rtsched_model::Time;

pub struct SequentialDomain<O: Order> {
    pub domain: GlobalDomain<O>,
    /// Per task: its held entities, by thread index, highest first (the next is the last).
    held: Vec<Vec<EntityInfo>>,
    /// Per task: its job's active entity, if any.
    active: Vec<Option<EntityId>>,
    /// Per entity id: held (not in the domain), and its task.
    is_held: Vec<bool>,
    task_of: Vec<u32>,
    /// Tasks whose active entity completed with others held: picked at `schedule`.
    pick: Vec<u32>,
    /// Threads that were held behind a sibling (stats).
    pub serialised: u64,
}

impl<O: Order> SequentialDomain<O> {
    pub fn new(domain: GlobalDomain<O>) -> Self {
        SequentialDomain {
            domain,
            held: Vec::new(),
            active: Vec::new(),
            is_held: Vec::with_capacity(64),
            task_of: Vec::with_capacity(64),
            pick: Vec::new(),
            serialised: 0,
        }
    }

    fn grow(&mut self, e: &EntityInfo) {
        let (i, t) = (e.id as usize, e.task as usize);
        if self.is_held.len() <= i {
            self.is_held.resize(i + 1, false);
            self.task_of.resize(i + 1, 0);
        }
        self.task_of[i] = e.task;
        if self.held.len() <= t {
            self.held.resize_with(t + 1, Vec::new);
            self.active.resize(t + 1, None);
        }
    }

    fn activate(&mut self, e: &EntityInfo) {
        self.is_held[e.id as usize] = false;
        self.active[e.task as usize] = Some(e.id);
        self.domain.release(e);
    }

    /// A job (or a one-thread region, or a DAG node at a join) is ready.
    pub fn release(&mut self, e: &EntityInfo) {
        self.grow(e);
        self.activate(e);
    }

    /// Threads of a job are ready: the job's next one (lowest index) becomes active if it has
    /// none active; the others are held.
    pub fn forked(&mut self, threads: &[EntityInfo]) {
        for t in threads {
            self.grow(t);
            self.is_held[t.id as usize] = true;
            let h = &mut self.held[t.task as usize];
            let at = h.partition_point(|x| x.thread > t.thread);
            h.insert(at, *t);
            self.serialised += 1;
        }
        if let Some(f) = threads.first() {
            if self.active[f.task as usize].is_none() {
                self.serialised -= 1;
                self.next(f.task);
            }
        }
    }

    /// Task `task`'s lowest held entity becomes active.
    fn next(&mut self, task: u32) {
        if let Some(n) = self.held[task as usize].pop() {
            self.activate(&n);
        }
    }

    /// `e` completed on `cpu`: its job's next held entity, if any, becomes active at the
    /// instant's `schedule`.
    pub fn complete(&mut self, e: EntityId, cpu: u32) {
        self.domain.complete(e, cpu);
        let t = self.task_of[e as usize];
        if self.active[t as usize] == Some(e) {
            self.active[t as usize] = None;
            if !self.held[t as usize].is_empty() {
                self.pick.push(t);
            }
        }
    }

    /// `e` blocked on a resource: it leaves its CPU, and stays its job's active entity.
    pub fn blocked(&mut self, e: EntityId, cpu: u32) {
        self.domain.complete(e, cpu);
    }

    /// The blocked `e` has its resource: ready again.
    pub fn unblocked(&mut self, e: &EntityInfo) {
        self.domain.release(e);
    }

    /// `e`'s job was aborted: the substrate reports every entity of it, held or not.
    pub fn aborted(&mut self, e: EntityId) {
        let i = e as usize;
        if self.is_held.get(i).copied().unwrap_or(false) {
            self.is_held[i] = false;
            let h = &mut self.held[self.task_of[i] as usize];
            if let Some(k) = h.iter().position(|x| x.id == e) {
                h.remove(k);
            }
        } else {
            self.domain.aborted(e);
            if let Some(a) = self.active.get_mut(self.task_of[i] as usize) {
                if *a == Some(e) {
                    *a = None;
                }
            }
        }
    }

    pub fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        while let Some(t) = self.pick.pop() {
            if self.active[t as usize].is_none() {
                self.next(t);
            }
        }
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
