//! `gfp-dist` — global fixed priority on distributed run queues with push and pull: the Linux
//! `SCHED_FIFO` class of the gedf-heap paper §3 (its baseline in §6, Figs 8–11).
//!
//! The machinery is [`crate::common::dist::DistDomain`] with gfp's comparator [`FpOrder`]
//! (priority, then release, task, job, thread); the schedule is exactly `gfp`'s. Find-CPU
//! defaults to `cpupri` (§3.1): per priority level (the tasks' distinct priorities, densely
//! numbered, plus "free" below them all), the mask of CPUs whose most urgent entity is at that
//! level; a push takes a CPU from the lowest non-empty level below the entity's own — a cost
//! in the number of levels, not of CPUs. `linear`, `fmask` and `heap` work too (the heap is
//! keyed by the same total order), for comparisons at equal policy.
//!
//! Why cpupri only for fixed priority (§4): its levels are a small fixed set (100 in Linux),
//! while EDF's keys are absolute deadlines, unbounded and ever growing; mapping deadlines to
//! levels would either need re-levelling as time advances or lose the order. The paper
//! therefore compares `SCHED_FIFO`+cpupri against EDF+heap as two schedulers, and so do we.
//!
//! Deviation from `cpupri.c`: SCHED_FIFO never preempts within one level, but rtsched's FP
//! order breaks ties inside a level (earlier release first). When no lower level has a CPU,
//! find-CPU also scans the entity's own level for the CPU whose key is the latest and later
//! than the entity's (rare: two equal-priority jobs released at the same instant).

use crate::common::dist::DistDomain;
use crate::common::findcpu::PushFind;
use crate::ctx::BuildCtx;
use crate::gfp::FpOrder;
use crate::policy::Policy;
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

pub fn gfp_dist(
    label: String,
    cpus: u32,
    priority: Vec<u32>,
    find: PushFind,
    measure: bool,
) -> DistDomain<FpOrder> {
    let levels: Vec<u64> = priority.iter().map(|&p| (u32::MAX - p) as u64).collect();
    let label = format!(
        "{label},push={}{}",
        find.name(),
        if measure { ",measure" } else { "" }
    );
    DistDomain::new(label, FpOrder { priority }, cpus, find, levels, measure)
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gfp-dist",
    summary: "global fixed priority on per-CPU run queues with push/pull (Linux SCHED_FIFO); same schedule as gfp",
    paper: "gedf-heap §3 (SCHED_FIFO, cpupri), baseline of §6",
    options: "prio=file|rm|dm (as gfp; bare option = prio), push=cpupri|linear|fmask|heap (default cpupri), measure",
    partition: None,
    fixed_priorities: true,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `prio=file|rm|dm` (also bare), `push=cpupri|linear|fmask|heap` (default cpupri), `measure`.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let o = ctx.dist_options(spec, false)?;
    let (p, label) = ctx.priorities(&o.rest, &["prio"])?;
    Ok(Box::new(gfp_dist(
        label,
        ctx.cpus(),
        p,
        o.find.unwrap_or(PushFind::Cpupri),
        o.measure,
    )))
}
