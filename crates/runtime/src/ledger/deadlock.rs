//! Deadlocks: a request that closes a cycle of holders (docs/ledger.md).
//!
//! When a thread blocks on a held resource, the chain of holders from there is followed (one
//! step per blocked entity at most); if it leads back to the thread, the jobs on it wait for
//! each other forever. A policy that resolves deadlocks hears `deadlock(cycle)` and must abort
//! one of the cycle's jobs in its next `schedule` (`check_resolved`); any other policy, or
//! one that aborts none of them, stops the run with a [`Failure::Deadlock`] naming the jobs
//! and resources of the cycle ("deadlock at 12.5ms: a#3 waits for 'R2', held by b#1; ...").
//! Drivers check [`Ledger::failure`] after each decision.

use super::{Failure, Ledger};
use crate::state::{Ent, NONE};
use rtsched_model::Time;
use rtsched_policies::EntityId;

impl<'t> Ledger<'t> {
    /// `e` now waits for what `holder` holds: if the chain of holders leads back to `e`, the
    /// jobs on it wait for each other forever. Tell the policy (it must abort one of them in its
    /// next `schedule`); a policy that cannot resolve deadlocks stops the run with an error.
    #[cold]
    pub(super) fn detect_deadlock(&mut self, now: Time, e: EntityId, holder: u32) {
        let mut cycle = std::mem::take(&mut self.lists.cycle);
        cycle.clear();
        cycle.push(e);
        let mut h = holder;
        // At most one step per blocked entity: a chain that does not close ends at a holder
        // that is not blocked (or a resource awaiting a grant).
        while h != NONE && h != e && cycle.len() <= self.run.ents.len() {
            cycle.push(h);
            let b = self.run.ents[h as usize].blocked_on;
            if b == NONE {
                break;
            }
            h = self.run.resources[b as usize].holder;
        }
        if h == e {
            self.run.deadlocks += 1;
            if self.policy.get().resolves_deadlocks() {
                self.policy.get().deadlock(now, &cycle);
                self.unresolved = Some(cycle.clone());
            } else if self.failure.is_none() {
                self.failure = Some(Failure::Deadlock(format!(
                    "{}; scheduler '{}' does not resolve deadlocks (dasa, pdasa, ggua and nggua abort a job to break one), or acquire the resources in one global order",
                    self.describe_deadlock(now, &cycle),
                    self.policy.get().name()
                )));
            }
        }
        self.lists.cycle = cycle;
    }

    /// "deadlock at 12.5ms: a#3 waits for 'R2', held by b#1; b#1 waits for 'R1', held by a#3".
    fn describe_deadlock(&self, now: Time, cycle: &[EntityId]) -> String {
        let r = &self.run;
        let name = |e: EntityId| {
            let i = r.ents[e as usize].info;
            format!("{}#{}", r.ts.tasks[i.task as usize].name, i.job)
        };
        let steps: Vec<String> = cycle
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                let next = cycle[(k + 1) % cycle.len()];
                let res = r.ents[e as usize].blocked_on;
                let rname = r.ts.resources.get(res as usize).map_or("?", String::as_str);
                format!("{} waits for '{}', held by {}", name(e), rname, name(next))
            })
            .collect();
        format!(
            "deadlock at {}: {}",
            rtsched_model::time::fmt_duration(now),
            steps.join("; ")
        )
    }

    /// After a deadlock was reported: the policy must have aborted one of its jobs by now.
    #[cold]
    pub(super) fn check_resolved(&mut self, now: Time) {
        let cycle = self.unresolved.take().expect("a reported deadlock");
        let gen = |x: &Ent| x.live && x.is_blocked();
        // Broken if some entity of the cycle is gone (aborted; its slot may be reused since).
        if cycle.iter().all(|&e| gen(&self.run.ents[e as usize])) && self.failure.is_none() {
            self.failure = Some(Failure::Deadlock(format!(
                "{}; scheduler '{}' was told of it and aborted none of its jobs",
                self.describe_deadlock(now, &cycle),
                self.policy.get().name()
            )));
        }
    }
}
