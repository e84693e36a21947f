//! `gnpedf` — global non-preemptive EDF (ChronOS §5, G-NP-EDF).
//!
//! Rules: a job, once started, runs to completion; whenever a CPU becomes free it takes the
//! ready job with the earliest absolute deadline. No CPU idles while a job waits.
//!
//! Total order: EDF's (absolute deadline, release, task, job, thread).

use crate::common::GlobalDomain;
use crate::gedf::EdfOrder;

pub fn gnpedf(cpus: u32) -> GlobalDomain<EdfOrder> {
    GlobalDomain::new("gnpedf", EdfOrder, cpus, false)
}
