//! `gedf-seq` — global preemptive EDF with parallel jobs run sequentially: a forked region's
//! threads run one after another, in thread order, never two threads of one job at once.
//!
//! The baseline of what an application that is not parallelised gets (the PAWS §3 task run
//! "as if all threads are executed sequentially in the same core", response ≥ C), beside
//! `gedf` (threads as independent entities) and `paws` (work stealing). It is also the shared
//! half of `federated` (light tasks run sequentially).
//!
//! Rules: the not-yet-started threads of a region wait per job, FIFO in thread order
//! ([`SequentialDomain`]); each job has at most one ready entity, and the m most urgent run
//! under `gedf`'s total order (absolute deadline, release, task, job, thread). On sequential
//! task sets it is `gedf`, job for job.

use crate::common::{GlobalDomain, SequentialDomain};
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::Policy;
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

pub fn gedf_seq(cpus: u32) -> SequentialDomain<EdfOrder> {
    SequentialDomain::new(GlobalDomain::new("gedf-seq", EdfOrder, cpus, true))
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gedf-seq",
    summary: "global preemptive EDF, each parallel job run sequentially (a region's threads one after another)",
    paper: "baseline: unparallelised jobs (PAWS §3)",
    options: "",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// No options.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    spec.option("", &[])?;
    Ok(Box::new(gedf_seq(ctx.cpus())))
}
