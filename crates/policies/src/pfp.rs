//! `pfp` — partitioned fixed priority: each task bound to one CPU, each CPU runs uniprocessor
//! preemptive fixed priority (what `SCHED_FIFO` with per-thread affinity gives).
//!
//! Priorities as for `gfp` (file, `rm` or `dm`). Exact per-CPU analysis: response-time
//! analysis (Joseph & Pandya), in the analysis crate.
//!
//! Total order per CPU: priority (higher first), then release time, task, job, thread.

use crate::common::PartitionedDomain;
use crate::gfp::FpOrder;

pub fn pfp(label: String, cpus: u32, cpu_of_task: Vec<u32>, priority: Vec<u32>) -> PartitionedDomain<FpOrder> {
    PartitionedDomain::new(label, FpOrder { priority }, cpus, cpu_of_task, true)
}
