//! `gfp` — global preemptive fixed priority (task-level), e.g. global RM / DM.
//!
//! The scheduler the Linux `SCHED_FIFO` class implements (the `cpupri` variant of the
//! gedf-heap paper §4 finds CPUs for it). Rules: the m ready jobs of the highest-priority
//! tasks run; a release preempts the lowest-priority running job if its task's priority is
//! higher. Priorities come from the file (`priority`, larger = more urgent, as `SCHED_FIFO`),
//! or from rate-monotonic / deadline-monotonic assignment (`gfp:rm`, `gfp:dm`).
//!
//! Total order: priority (higher first), then release time, task, job, thread.

use crate::common::global_model;
use crate::common::{GlobalDomain, Key, Order};
use crate::ctx::BuildCtx;
use crate::policy::{EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

/// Fixed-priority comparator over per-task priorities (larger = more urgent).
#[derive(Clone, Debug)]
pub struct FpOrder {
    pub priority: Vec<u32>,
}

impl Order for FpOrder {
    #[inline]
    fn key(&self, e: &EntityInfo) -> Key {
        Key::new(
            (u32::MAX - self.priority[e.task as usize]) as u64,
            e.release,
            e,
        )
    }
}

pub fn gfp(label: String, cpus: u32, priority: Vec<u32>) -> GlobalDomain<FpOrder> {
    GlobalDomain::new(label, FpOrder { priority }, cpus, true)
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gfp",
    summary: "global preemptive fixed priority (file priorities, or RM / DM)",
    paper: "gedf-heap §4 (SCHED_FIFO, cpupri)",
    options: "prio=file|rm|dm (default: file if every task has one, else rm); model=stw|ac, mapper=3pass|none (ChronOS §5.2-5.3; without them, the native domain)",
    partition: None,
    fixed_priorities: true,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `prio=file|rm|dm` (also bare); `model=`, `mapper=` run it through [`global_model`].
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let (p, label) = ctx.priorities(spec, &["prio", "model", "mapper"])?;
    if let Some(mm) = global_model::read(spec)? {
        return Ok(global_model::ordered(
            &label,
            FpOrder { priority: p },
            true,
            ctx.cpus(),
            mm,
        ));
    }
    Ok(Box::new(gfp(label, ctx.cpus(), p)))
}
