//! `gedf` — global preemptive earliest deadline first.
//!
//! The baseline of every paper here: PAWS §2 ("global EDF ... SCHED_DEADLINE-like"), the
//! gedf-heap paper §2–3 (the schedule its distributed run queues must reproduce), ChronOS §5
//! (G-EDF). Rules: at every instant the m ready jobs with the earliest absolute deadlines run;
//! a released job preempts the running job with the latest deadline if its own is earlier.
//!
//! Total order: absolute deadline, then release time, then task index, job index, thread.

use crate::common::global_model;
use crate::common::{GlobalDomain, Key, Order};
use crate::ctx::BuildCtx;
use crate::policy::{EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

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

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gedf",
    summary: "global preemptive EDF (one ready queue, m earliest deadlines run)",
    paper: "baseline of PAWS §2, gedf-heap §3, ChronOS G-EDF",
    options: "model=stw|ac, mapper=3pass|none (ChronOS §5.2-5.3; without them, the native domain)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `model=`, `mapper=` (run through [`global_model`]); none: the native domain.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    if let Some(mm) = global_model::options(spec)? {
        return Ok(global_model::ordered(
            "gedf",
            EdfOrder,
            true,
            ctx.cpus(),
            mm,
        ));
    }
    Ok(Box::new(gedf(ctx.cpus())))
}
