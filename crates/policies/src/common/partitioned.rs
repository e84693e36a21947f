//! A partitioned domain: each task is bound to one CPU, and each CPU runs a uniprocessor
//! scheduler over its own ready queue (as in SimSo, partitioning is a plain function handed
//! to a uniprocessor policy). Only CPUs that saw an event are reconsidered.
//!
//! One exception to the binding, asked by the ledger: MrsP's *helping* (Burns & Wellings,
//! ECRTS 2013; [`Policy::place`](crate::Policy::place)) puts a resource holder in another
//! CPU's queue, just before the spinner it stands in for, until it goes back to its own.

use super::heap::IndexedHeap;
use super::key::{boosted, Key, Order};
use crate::policy::{Dispatch, EntityId, EntityInfo, Urgency};
use rtsched_model::Time;

pub struct PartitionedDomain<O: Order> {
    /// Display name with options.
    pub label: String,
    pub order: O,
    pub preemptive: bool,
    /// CPU of each task.
    cpu_of_task: Vec<u32>,
    ready: Vec<IndexedHeap<Key>>,
    linked: Vec<Option<(Key, EntityId)>>,
    cpu_of_entity: Vec<u32>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

impl<O: Order> PartitionedDomain<O> {
    pub fn new(
        label: impl Into<String>,
        order: O,
        cpus: u32,
        cpu_of_task: Vec<u32>,
        preemptive: bool,
    ) -> Self {
        PartitionedDomain {
            label: label.into(),
            order,
            preemptive,
            cpu_of_task,
            ready: (0..cpus).map(|_| IndexedHeap::with_capacity(16)).collect(),
            linked: vec![None; cpus as usize],
            cpu_of_entity: Vec::with_capacity(64),
            dirty: Vec::with_capacity(cpus as usize),
            is_dirty: vec![false; cpus as usize],
        }
    }

    fn touch(&mut self, cpu: u32) {
        if !self.is_dirty[cpu as usize] {
            self.is_dirty[cpu as usize] = true;
            self.dirty.push(cpu);
        }
    }

    pub fn release(&mut self, e: &EntityInfo) {
        let cpu = self.cpu_of_task[e.task as usize];
        let i = e.id as usize;
        if self.cpu_of_entity.len() <= i {
            self.cpu_of_entity.resize(i + 1, 0);
        }
        self.cpu_of_entity[i] = cpu;
        self.ready[cpu as usize].push(e.id, self.order.key(e));
        self.touch(cpu);
    }

    pub fn complete(&mut self, _e: EntityId, cpu: u32) {
        self.linked[cpu as usize] = None;
        self.touch(cpu);
    }

    pub fn aborted(&mut self, e: EntityId) {
        let cpu = self.cpu_of_entity[e as usize];
        if self.ready[cpu as usize].remove(e).is_none()
            && self.linked[cpu as usize].is_some_and(|(_, x)| x == e)
        {
            self.linked[cpu as usize] = None;
        }
        self.touch(cpu);
    }

    /// `e` re-keyed with `to`'s criterion and tie-break ([`Policy::boost`](crate::Policy::boost))
    /// on its CPU, which is reconsidered.
    pub fn boost(&mut self, e: &EntityInfo, to: Option<Urgency>) {
        let k = boosted(self.order.key(e), to);
        let cpu = self.cpu_of_entity[e.id as usize];
        let c = cpu as usize;
        if self.ready[c].remove(e.id).is_some() {
            self.ready[c].push(e.id, k);
        } else if self.linked[c].is_some_and(|(_, x)| x == e.id) {
            self.linked[c] = Some((k, e.id));
        }
        self.touch(cpu);
    }

    /// MrsP's helping ([`Policy::place`](crate::Policy::place)): `e` leaves the CPU it is
    /// queued on or linked to, for `cpu`'s queue just before `w` (`Some((cpu, w))`, `w` linked
    /// to or queued on `cpu`), or for its own CPU's queue with its own key (`None`). Both CPUs
    /// are reconsidered.
    pub fn place(&mut self, e: &EntityInfo, to: Option<(u32, EntityId)>) {
        let from = self.cpu_of_entity[e.id as usize];
        let f = from as usize;
        let was = match self.ready[f].remove(e.id) {
            Some(k) => Some(k),
            None if self.linked[f].is_some_and(|(_, x)| x == e.id) => {
                self.linked[f].take().map(|(k, _)| k)
            }
            None => None,
        };
        let (cpu, key) = match to {
            Some((cpu, w)) => {
                let c = cpu as usize;
                let wk = match self.linked[c] {
                    Some((k, x)) if x == w => Some(k),
                    _ => self.ready[c].key_of(w),
                };
                debug_assert!(wk.is_some(), "place: {w} is not on CPU {cpu}");
                (cpu, wk.map_or_else(|| self.order.key(e), Key::before))
            }
            None => (self.cpu_of_task[e.task as usize], self.order.key(e)),
        };
        self.cpu_of_entity[e.id as usize] = cpu;
        if was.is_some() {
            self.ready[cpu as usize].push(e.id, key);
        }
        self.touch(from);
        self.touch(cpu);
    }

    pub fn schedule(&mut self, _now: Time, d: &mut Dispatch) {
        for i in 0..self.dirty.len() {
            let cpu = self.dirty[i];
            self.is_dirty[cpu as usize] = false;
            let c = cpu as usize;
            let Some((k, e)) = self.ready[c].peek() else {
                if self.linked[c].is_none() && d.current(cpu).is_some() {
                    // Its entity was placed on another CPU (helping).
                    d.assign(cpu, None);
                }
                continue;
            };
            match self.linked[c] {
                None => {
                    self.ready[c].pop();
                    self.linked[c] = Some((k, e));
                    d.assign(cpu, Some(e));
                }
                Some((rk, re)) if self.preemptive && k < rk => {
                    self.ready[c].pop();
                    self.ready[c].push(re, rk);
                    self.linked[c] = Some((k, e));
                    d.assign(cpu, Some(e));
                }
                _ => {}
            }
        }
        self.dirty.clear();
    }
}

impl<O: Order> crate::policy::Policy for PartitionedDomain<O> {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        PartitionedDomain::release(self, e)
    }
    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        PartitionedDomain::complete(self, e, cpu)
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        PartitionedDomain::aborted(self, e)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        PartitionedDomain::schedule(self, now, d)
    }
    fn urgency(&self, e: &EntityInfo) -> Option<Urgency> {
        let k = self.order.key(e);
        Some((k.primary, k.secondary))
    }
    fn cpu_of_task(&self, task: u32) -> Option<u32> {
        self.cpu_of_task.get(task as usize).copied()
    }
    fn boost(&mut self, _now: Time, e: &EntityInfo, to: Option<Urgency>) {
        PartitionedDomain::boost(self, e, to)
    }
    fn place(&mut self, _now: Time, e: &EntityInfo, to: Option<(u32, EntityId)>) -> bool {
        PartitionedDomain::place(self, e, to);
        true
    }
}
