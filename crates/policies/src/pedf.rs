//! `pedf` — partitioned EDF: each task is bound to one CPU (its `cpu` field, or a
//! partitioning heuristic), and each CPU runs uniprocessor preemptive EDF.
//!
//! The baseline of the LWFG paper (§2: partitioned EDF with WFD/FFD/LWFG bins) and ChronOS
//! (P-EDF). On one CPU EDF is optimal: if U <= 1 (implicit deadlines) no job misses.
//!
//! Total order per CPU: EDF's (absolute deadline, release, task, job, thread).

use crate::common::PartitionedDomain;
use crate::gedf::EdfOrder;

pub fn pedf(label: String, cpus: u32, cpu_of_task: Vec<u32>) -> PartitionedDomain<EdfOrder> {
    PartitionedDomain::new(label, EdfOrder, cpus, cpu_of_task, true)
}
