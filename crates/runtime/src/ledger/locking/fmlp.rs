//! The FMLP+ under partitioned scheduling (Brandenburg, *The FMLP+: an asymptotically optimal
//! real-time locking protocol for suspension-aware analysis*, ECRTS 2014; the partitioned
//! protocol is that of Brandenburg's dissertation, UNC 2011, which the paper generalises to
//! clusters; docs/locking.md "Suspending: `fmlp+`").
//!
//! The rules, in the paper's words:
//! 1. Each resource has a FIFO queue: a request for a held resource is appended to it, and a
//!    released resource goes to the head (resources.rs's plain mutex queue, unchanged).
//! 2. A job waiting for a resource *suspends*: it leaves its CPU, which lower-priority jobs may
//!    use (the ledger's `block`, as under `none`).
//! 3. A job holding a resource is *priority boosted*: it is more urgent than every job of its
//!    CPU that is not boosted; among boosted jobs the one whose request was *issued* earlier
//!    goes first (FIFO by request time, not by priority and not by when the lock was granted).
//!
//! Rule 3 is an urgency ([`Policy::boost`](rtsched_policies::Policy::boost)): a holder is lent
//! `(0, t)`, `t` the instant it issued its request. Every job's own urgency has a criterion
//! above 0 (an inverted priority below `u32::MAX`, an absolute deadline after 0), so a boosted
//! job precedes every job that is not, and boosted jobs compare by `t` (the policy's tie-break
//! of task, job and thread orders two requests of one instant). The partitioned policy orders
//! only the jobs of one CPU against each other, so a boost reaches its holder's CPU only.
//! FMLP+ makes no difference between local and global resources (the dissertation's analysis
//! charges both alike): a local one is also FIFO with a boosted holder.
//!
//! Blocking kinds: a job's suspension is *direct* blocking (`JobRecord::blocked`); the time it
//! is ready while its CPU runs a boosted job of lower own priority is counted as *ceiling*
//! blocking (`JobRecord::blocked_ceiling`), as for `msrp`'s non-preemptive sections: the
//! paper's boost blocking. Nothing spins.

use super::Locking;
use rtsched_model::Time;
use rtsched_policies::{EntityId, Urgency};

impl Locking {
    /// `e` issued a request at `now` (taken at once or queued): the instant its boost is
    /// ordered by once it holds the resource. At most one request per entity is outstanding
    /// (sections do not nest under `fmlp+`).
    pub(super) fn fmlp_requested(&mut self, e: EntityId, now: Time) {
        let i = e as usize;
        if self.issued.len() <= i {
            self.issued.resize(i + 1, 0);
        }
        self.issued[i] = now;
    }

    /// The urgency a holder `e` of an `fmlp+` resource is lent: boosted, ordered by the time
    /// its request was issued.
    #[inline]
    pub(super) fn fmlp_boost(&self, e: EntityId) -> Urgency {
        (0, self.issued.get(e as usize).copied().unwrap_or(0))
    }
}
