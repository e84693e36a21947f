//! A global scheduling domain (in the spirit of LITMUS^RT's `rt_domain` + GSN-EDF's linking):
//! one ready queue ordered by a policy's [`Order`], and per CPU the key of what is linked
//! there. It is policy-free: EDF, FP and FIFO differ only in the order and in whether a
//! more urgent arrival may preempt.
//!
//! `schedule` keeps the invariant of global job-level-fixed-priority scheduling: with
//! preemption, the CPUs run exactly the min(m, ready) most urgent entities; without, no CPU
//! idles while an entity waits. An entity is resumed on the CPU it last ran on when that CPU
//! is free (fewer migrations, same schedule).
//!
//! A domain may own a contiguous range of CPUs rather than all of them ([`GlobalDomain::on_cpus`]:
//! a cluster, such as the dedicated CPUs of a heavy task under federated scheduling); it
//! numbers them from 0 inside and names them by their platform index to the [`Dispatch`].

use super::heap::IndexedHeap;
use super::key::{boosted, Key, Order};
use crate::policy::{Dispatch, EntityId, EntityInfo, Urgency};
use rtsched_model::Time;

const NO_CPU: u32 = u32::MAX;

pub struct GlobalDomain<O: Order> {
    /// Display name with options.
    pub label: String,
    pub order: O,
    pub preemptive: bool,
    /// The platform index of the domain's CPU 0 (its CPUs are `first..first + linked.len()`).
    first: u32,
    /// Ready entities not linked to a CPU.
    ready: IndexedHeap<Key>,
    /// Key of the entity linked to each CPU (None = idle).
    linked: Vec<Option<(Key, EntityId)>>,
    /// Per entity id: key and the CPU (domain index) it last ran on.
    keys: Vec<Key>,
    last_cpu: Vec<u32>,
}

impl<O: Order> GlobalDomain<O> {
    pub fn new(label: impl Into<String>, order: O, cpus: u32, preemptive: bool) -> Self {
        Self::on_cpus(label, order, 0, cpus, preemptive)
    }

    /// A domain over the `count` CPUs `first..first + count` only.
    pub fn on_cpus(
        label: impl Into<String>,
        order: O,
        first: u32,
        count: u32,
        preemptive: bool,
    ) -> Self {
        GlobalDomain {
            label: label.into(),
            order,
            preemptive,
            first,
            // Room for 16 entities to start with (they grow with the ledger's slots): small
            // enough that malloc serves them from its per-thread cache, where a sweep builds
            // one domain per run; 64 keys (2.5 KB) went to its slow path every time.
            ready: IndexedHeap::with_capacity(16),
            linked: vec![None; count as usize],
            keys: Vec::with_capacity(16),
            last_cpu: Vec::with_capacity(16),
        }
    }

    pub fn release(&mut self, e: &EntityInfo) {
        let k = self.order.key(e);
        let i = e.id as usize;
        if self.keys.len() <= i {
            self.keys.resize(i + 1, Key::default());
            self.last_cpu.resize(i + 1, NO_CPU);
        }
        self.keys[i] = k;
        self.last_cpu[i] = NO_CPU;
        self.ready.push(e.id, k);
    }

    /// `e` left `cpu` (a platform index, one of the domain's): completed or blocked.
    pub fn complete(&mut self, e: EntityId, cpu: u32) {
        let c = (cpu - self.first) as usize;
        debug_assert_eq!(self.linked[c].map(|x| x.1), Some(e));
        self.linked[c] = None;
    }

    pub fn aborted(&mut self, e: EntityId) {
        if self.ready.remove(e).is_none() {
            if let Some(c) = self
                .linked
                .iter()
                .position(|l| l.is_some_and(|(_, x)| x == e))
            {
                self.linked[c] = None;
            }
        }
    }

    /// `e`'s key with `to`'s criterion and tie-break ([`Policy::boost`](crate::Policy::boost)),
    /// wherever it is: re-queued if ready, re-keyed if linked (the next `schedule` may then
    /// preempt it); a blocked entity is not here.
    pub fn boost(&mut self, e: &EntityInfo, to: Option<Urgency>) {
        let k = boosted(self.order.key(e), to);
        let i = e.id as usize;
        if i < self.keys.len() {
            self.keys[i] = k;
        }
        if self.ready.remove(e.id).is_some() {
            self.ready.push(e.id, k);
        } else if let Some(c) = self
            .linked
            .iter()
            .position(|l| l.is_some_and(|(_, x)| x == e.id))
        {
            self.linked[c] = Some((k, e.id));
        }
    }

    /// Number of ready entities waiting for a CPU.
    pub fn waiting(&self) -> usize {
        self.ready.len()
    }

    fn idle_cpu(&self, prefer: u32) -> Option<u32> {
        if prefer != NO_CPU && self.linked[prefer as usize].is_none() {
            return Some(prefer);
        }
        self.linked
            .iter()
            .position(Option::is_none)
            .map(|c| c as u32)
    }

    /// The CPU linked to the least urgent entity (largest key).
    fn lowest_cpu(&self) -> Option<(u32, Key)> {
        let mut best: Option<(u32, Key)> = None;
        for (c, l) in self.linked.iter().enumerate() {
            if let Some((k, _)) = l {
                if best.is_none_or(|(_, bk)| *k > bk) {
                    best = Some((c as u32, *k));
                }
            }
        }
        best
    }

    /// Link `e` to the domain's CPU `cpu` (a domain index).
    fn link(&mut self, cpu: u32, k: Key, e: EntityId, d: &mut Dispatch) {
        self.linked[cpu as usize] = Some((k, e));
        self.last_cpu[e as usize] = cpu;
        d.assign(self.first + cpu, Some(e));
    }

    pub fn schedule(&mut self, _now: Time, d: &mut Dispatch) {
        while let Some((k, e)) = self.ready.peek() {
            if let Some(cpu) = self.idle_cpu(self.last_cpu[e as usize]) {
                self.ready.pop();
                self.link(cpu, k, e, d);
                continue;
            }
            if !self.preemptive {
                break;
            }
            let (cpu, lowest) = self
                .lowest_cpu()
                .expect("no idle CPU means every CPU is linked");
            if k >= lowest {
                break;
            }
            self.ready.pop();
            let (_, victim) = self.linked[cpu as usize].expect("linked");
            self.ready.push(victim, lowest);
            self.link(cpu, k, e, d);
        }
    }
}

impl<O: Order> crate::policy::Policy for GlobalDomain<O> {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        GlobalDomain::release(self, e)
    }
    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        GlobalDomain::complete(self, e, cpu)
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        GlobalDomain::aborted(self, e)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        GlobalDomain::schedule(self, now, d)
    }
    fn urgency(&self, e: &EntityInfo) -> Option<Urgency> {
        let k = self.order.key(e);
        Some((k.primary, k.secondary))
    }
    fn boost(&mut self, _now: Time, e: &EntityInfo, to: Option<Urgency>) {
        GlobalDomain::boost(self, e, to)
    }
}
