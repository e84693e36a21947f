//! `gfifo` — global first-in first-out (non-preemptive), the naive baseline.
//!
//! Rules: jobs run in release order on whichever CPU frees first, each to completion.
//!
//! Total order: release time, then task index, job index, thread.

use crate::common::global_model;
use crate::common::{GlobalDomain, Key, Order};
use crate::ctx::BuildCtx;
use crate::policy::{EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

#[derive(Clone, Copy, Debug, Default)]
pub struct FifoOrder;

impl Order for FifoOrder {
    #[inline]
    fn key(&self, e: &EntityInfo) -> Key {
        Key::new(e.release, 0, e)
    }
}

pub fn gfifo(cpus: u32) -> GlobalDomain<FifoOrder> {
    GlobalDomain::new("gfifo", FifoOrder, cpus, false)
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gfifo",
    summary: "global FIFO, non-preemptive (naive baseline)",
    paper: "baseline",
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
            "gfifo",
            FifoOrder,
            false,
            ctx.cpus(),
            mm,
        ));
    }
    Ok(Box::new(gfifo(ctx.cpus())))
}
