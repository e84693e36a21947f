//! `pfp` — partitioned fixed priority: each task bound to one CPU, each CPU runs uniprocessor
//! preemptive fixed priority (what `SCHED_FIFO` with per-thread affinity gives).
//!
//! Priorities as for `gfp` (file, `rm` or `dm`). Exact per-CPU analysis: response-time
//! analysis (Joseph & Pandya), in the analysis crate.
//!
//! Total order per CPU: priority (higher first), then release time, task, job, thread.

use crate::common::PartitionedDomain;
use crate::ctx::BuildCtx;
use crate::gfp::FpOrder;
use crate::policy::Policy;
use crate::spec::{PartitionAdmission, Partitioning, PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_analysis::partition::Admission;

pub fn pfp(
    label: String,
    cpus: u32,
    cpu_of_task: Vec<u32>,
    priority: Vec<u32>,
) -> PartitionedDomain<FpOrder> {
    PartitionedDomain::new(label, FpOrder { priority }, cpus, cpu_of_task, true)
}

/// `partition=NAME` only (the bare option is the priority assignment); tasks are admitted by
/// response-time analysis under the priorities.
pub const PARTITION: Partitioning = Partitioning {
    bare: false,
    admission: PartitionAdmission::FpRta,
    own: &[],
};

pub const INFO: PolicyInfo = PolicyInfo {
    name: "pfp",
    summary: "partitioned fixed priority (SCHED_FIFO + affinity)",
    paper: "classic baseline (Liu & Layland; RTA)",
    options: "prio=file|rm|dm (default as gfp); partition=NAME (as pedf, admission by response-time analysis under those priorities, counting the blocking and spin terms of pip, pcp, srp, msrp, mrsp or fmlp+: docs/locking.md, Partitioning) instead of `cpu` fields",
    partition: Some(PARTITION),
    fixed_priorities: true,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `prio=file|rm|dm` (also bare), and `partition=NAME` admitting tasks to a CPU by
/// response-time analysis under those priorities; else the tasks' `cpu` fields.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let (p, label) = ctx.priorities(spec, OPTIONS)?;
    let (cpus, how) = ctx.partition_labelled(spec, &PARTITION, Admission::FpRta(p.clone()))?;
    let label = how.map_or(label.clone(), |h| format!("{label},partition={h}"));
    Ok(Box::new(pfp(label, ctx.cpus(), cpus, p)))
}

const OPTIONS: &[&str] = &["prio", "partition"];

/// The partition and, when a heuristic made it, the heuristic that succeeded.
#[cfg(test)]
pub(crate) fn partition(
    spec: &SchedulerSpec,
    ctx: &BuildCtx,
) -> Result<(Vec<u32>, Option<String>), String> {
    let (p, _) = ctx.priorities(spec, OPTIONS)?;
    ctx.partition_labelled(spec, &PARTITION, Admission::FpRta(p))
}
