//! `pedf` — partitioned EDF: each task is bound to one CPU (its `cpu` field, or a
//! partitioning heuristic), and each CPU runs uniprocessor preemptive EDF.
//!
//! The baseline of the LWFG paper (§2: partitioned EDF with WFD/FFD/LWFG bins) and ChronOS
//! (P-EDF). On one CPU EDF is optimal: if U <= 1 (implicit deadlines) no job misses.
//!
//! Total order per CPU: EDF's (absolute deadline, release, task, job, thread).

use crate::common::PartitionedDomain;
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::Policy;
use crate::spec::{PartitionAdmission, Partitioning, PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_analysis::partition::Admission;

pub fn pedf(label: String, cpus: u32, cpu_of_task: Vec<u32>) -> PartitionedDomain<EdfOrder> {
    PartitionedDomain::new(label, EdfOrder, cpus, cpu_of_task, true)
}

/// The bare option names the heuristic; tasks are admitted by the exact EDF test.
pub const PARTITION: Partitioning = Partitioning {
    bare: true,
    admission: PartitionAdmission::EdfExact,
    own: &[],
};

pub const INFO: PolicyInfo = PolicyInfo {
    name: "pedf",
    summary: "partitioned EDF (uniprocessor EDF per CPU; tasks' `cpu` fields)",
    paper: "LWFG §2, ChronOS P-EDF",
    options: "partition=NAME, or bare pedf:NAME (ffd, wfd, bfd, nfd, bf, lwfg, FIT:ORDER; chains with '+', e.g. lwfg+ffd; NAME-overflow places what fits nowhere on the least utilised CPU and runs it anyway): partition with the exact EDF test (counting the blocking and spin terms of pip, pcp, srp, msrp or fmlp+) instead of reading `cpu` fields",
    partition: Some(PARTITION),
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `partition=NAME` (also bare), admitting tasks to a CPU by the exact EDF test; else the
/// tasks' `cpu` fields.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let (p, how) = partition(spec, ctx)?;
    let label = how.map_or("pedf".to_string(), |h| format!("pedf:{h}"));
    Ok(Box::new(pedf(label, ctx.cpus(), p)))
}

/// The partition and, when a heuristic made it, the heuristic that succeeded.
pub fn partition(
    spec: &SchedulerSpec,
    ctx: &BuildCtx,
) -> Result<(Vec<u32>, Option<String>), String> {
    spec.option("partition", &["partition"])?;
    ctx.partition_labelled(spec, &PARTITION, Admission::EdfExact)
}
