//! `runqueue`: one CPU's run queue of distributed global scheduling — the kernel's `dl_rq`
//! (gedf-heap paper §3.1, §4, Fig 2), policy-free: entities are ordered by the policy's
//! [`Key`] only.
//!
//! A queue holds `curr`, the entity its CPU runs (as decided by the last `schedule`), and its
//! [`Pushable`] entities, queued here but not running. It caches its earliest key (`earliest`,
//! the kernel's `earliest_dl.curr`: what the push structure and other CPUs' pushes compare
//! against) and its next-earliest (`next`, the earliest pushable: `earliest_dl.next`, what a
//! push or pull would move). A queue holding more than one entity is *overloaded*
//! ([`RunQueue::nr`] >= 2). The caches are refreshed by the owner, `DistDomain`
//! ([`super::dist`]), which also owns the `queued` / `changed` flags of its work lists.

use super::key::Key;
use super::pushable::Pushable;
use crate::policy::EntityId;

/// One CPU's run queue.
#[derive(Clone, Debug)]
pub(crate) struct RunQueue {
    /// The entity this CPU runs (decided), with its key.
    pub(crate) curr: Option<(Key, EntityId)>,
    /// Entities queued here and not running, earliest first.
    pub(crate) pushable: Pushable,
    /// An occupant this domain does not schedule but must compete with on this CPU, by key
    /// (the kernel: a higher class on the CPU, or a dl_server pinned to it; see
    /// `DistDomain::set_ext`). `None` for the paper's policies.
    pub(crate) ext: Option<Key>,
    /// Cached earliest key of the queue (curr, pushable or ext), None if empty.
    pub(crate) earliest: Option<Key>,
    /// Cached earliest pushable key.
    pub(crate) next: Option<Key>,
    /// `curr` left since the last `schedule` (completion, abort): pull before picking.
    pub(crate) needs_pull: bool,
    /// On the owner's work list of CPUs to pull / pick / push.
    pub(crate) queued: bool,
    /// On the owner's list of CPUs whose `curr` changed during this `schedule`.
    pub(crate) changed: bool,
}

impl RunQueue {
    /// An empty queue: nothing running, nothing queued.
    pub(crate) fn empty() -> RunQueue {
        RunQueue {
            curr: None,
            pushable: Pushable::default(),
            ext: None,
            earliest: None,
            next: None,
            needs_pull: false,
            queued: false,
            changed: false,
        }
    }

    /// The number of entities on the queue (`dl_nr_running`).
    #[inline]
    pub(crate) fn nr(&self) -> usize {
        self.curr.is_some() as usize + self.pushable.len()
    }

    /// Whether an entity waits here that might run elsewhere: more than one occupant,
    /// counting the external one (the overload mask's rule).
    #[inline]
    pub(crate) fn overloaded(&self) -> bool {
        self.nr() + self.ext.is_some() as usize >= 2
    }
}
