//! The global O(m) locking protocol, `omlp` (Brandenburg & Anderson, *Optimality results for
//! multiprocessor real-time locking*, RTSS 2010, "the global OMLP"; Brandenburg's thesis,
//! UNC 2011; docs/locking.md).
//!
//! For global scheduling on m CPUs. Each resource has two wait queues: a FIFO queue FQ of at
//! most m jobs, whose head holds the resource, and a priority queue PQ for the rest, ordered
//! by the scheduler's own order. The paper's rules, as the ledger applies them:
//!
//! 1. A job that requests a resource enters FQ if it holds fewer than m jobs, else PQ. It
//!    holds the resource when it is the head of FQ.
//! 2. Every queued job but the holder is suspended (blocked: not ready, the policy hears
//!    `blocked`). The holder inherits the priority of the most urgent job in FQ ∪ PQ (the
//!    paper's "highest-priority blocked job"): its effective urgency is the most urgent of its
//!    own and its waiters' ([`Policy::boost`](rtsched_policies::Policy::boost), as under
//!    `pip`; no chain, since sections do not nest).
//! 3. When the holder releases the resource, the next job in FQ takes it and the head of PQ
//!    (the most urgent) moves to the end of FQ.
//!
//! Representation: the resource's one queue (resources.rs) is FQ's waiters (at most m − 1, in
//! request order) followed by PQ (sorted by the policy's total order: its urgency, then task,
//! job and thread, as `rtsched_policies::common::key::Key`). PQ is non-empty only while FQ is
//! full, so rule 3 is the plain FIFO hand-on: the head of the queue takes the resource and
//! the head of PQ is then FQ's last. A waiter of FQ leaving (its job aborted) lets the head
//! of PQ into FQ the same way. The only work of the protocol is the insertion into PQ
//! (`omlp_enqueue`, no allocation: the queue keeps its capacity); the inheritance is the
//! `pip` rule of locking.rs over the whole queue.
//!
//! Bound (the paper's s-oblivious analysis): a request is pi-blocked (its job waits while
//! fewer than m more urgent jobs are pending) during at most 2m − 1 other requests — up to
//! m while it waits in PQ, m − 1 ahead of it in FQ. `crates/sim/tests/omlp.rs` checks it.

use super::urgency;
use crate::ledger::Ledger;
use rtsched_model::TaskSet;
use rtsched_policies::{EntityId, Policy, Urgency};

impl<'t> Ledger<'t> {
    /// Resource `r` (under `omlp`) has just queued a request last: if FQ was full (m − 1
    /// waiters behind the holder), the request goes to its place in PQ instead.
    pub(super) fn omlp_enqueue(&mut self, r: u32) {
        let fq = self
            .locking
            .as_ref()
            .expect("locking")
            .cpus
            .saturating_sub(1);
        let n = self.run.resources[r as usize].queue.len();
        if n <= fq {
            return;
        }
        let e = self.run.resources[r as usize].queue[n - 1];
        let key = self.omlp_key(e);
        let mut at = n - 1;
        while at > fq && self.omlp_key(self.run.resources[r as usize].queue[at - 1]) > key {
            at -= 1;
        }
        if at < n - 1 {
            let q = &mut self.run.resources[r as usize].queue;
            q.pop_back();
            q.insert(at, e);
        }
    }

    /// `e`'s place in the policy's total order: its urgency, then task, job and thread.
    fn omlp_key(&mut self, e: EntityId) -> (Urgency, u32, u64, u32) {
        let i = self.run.ents[e as usize].info;
        (urgency(self.policy.get(), &i), i.task, i.job, i.thread)
    }
}

/// Why `policy` cannot run `ts`'s `omlp` resources: the protocol is for global scheduling, and
/// the policy binds a user of such a resource to a CPU (a partitioned scheduler).
pub(super) fn refuses_partitioned(ts: &TaskSet, policy: &dyn Policy) -> Option<String> {
    let (r, t, cpu) = (0..ts.resources.len())
        .filter(|&r| ts.protocol(r).is_global())
        .find_map(|r| {
            ts.users(r)
                .find_map(|t| policy.cpu_of_task(t as u32).map(|c| (r, t, c)))
        })?;
    Some(format!(
        "{}: task '{}': resource '{}' uses {}, a protocol for global scheduling: scheduler '{}' binds the task to CPU {cpu} (use gfp or gedf)",
        ts.source,
        ts.tasks[t].name,
        ts.resources[r],
        ts.protocol(r).name(),
        policy.name()
    ))
}
