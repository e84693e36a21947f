//! `gedf` — global preemptive earliest deadline first.
//!
//! The baseline of every paper here: PAWS §2 ("global EDF ... SCHED_DEADLINE-like"), the
//! gedf-heap paper §2–3 (the schedule its distributed run queues must reproduce), ChronOS §5
//! (G-EDF). Rules: at every instant the m ready jobs with the earliest absolute deadlines run;
//! a released job preempts the running job with the latest deadline if its own is earlier.
//!
//! Total order: absolute deadline, then release time, then task index, job index, thread.

use crate::common::{GlobalDomain, Key, Order};
use crate::policy::EntityInfo;

/// EDF's comparator, shared by every EDF variant (global, partitioned, non-preemptive).
#[derive(Clone, Copy, Debug, Default)]
pub struct EdfOrder;

impl Order for EdfOrder {
    #[inline]
    fn key(&self, e: &EntityInfo) -> Key {
        Key::new(e.deadline, e.release, e)
    }
}

pub fn gedf(cpus: u32) -> GlobalDomain<EdfOrder> {
    GlobalDomain::new("gedf", EdfOrder, cpus, true)
}
