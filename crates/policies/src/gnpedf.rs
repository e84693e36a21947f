//! `gnpedf` — global non-preemptive EDF (ChronOS §5, G-NP-EDF).
//!
//! Rules: a job, once started, runs to completion; whenever a CPU becomes free it takes the
//! ready job with the earliest absolute deadline. No CPU idles while a job waits.
//!
//! Total order: EDF's (absolute deadline, release, task, job, thread).

use crate::common::global_model;
use crate::common::GlobalDomain;
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::Policy;
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

pub fn gnpedf(cpus: u32) -> GlobalDomain<EdfOrder> {
    GlobalDomain::new("gnpedf", EdfOrder, cpus, false)
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gnpedf",
    summary: "global non-preemptive EDF",
    paper: "ChronOS §5 (G-NP-EDF)",
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
            "gnpedf",
            EdfOrder,
            false,
            ctx.cpus(),
            mm,
        ));
    }
    Ok(Box::new(gnpedf(ctx.cpus())))
}
