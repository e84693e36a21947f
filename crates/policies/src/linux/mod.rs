//! Linux's scheduling classes as the kernel computes them: the rules of SCHED_DEADLINE (the
//! CBS of each entity, GRUB reclaiming, admission control) and the constants of the RT class
//! and the fair server, as pure functions and small state machines over integer ns, for the
//! `linux` scheduler (simulation) and `kernel:linux` (real runs) to share. Read against Linux
//! 6.18 (`kernel/sched/deadline.c`, `rt.c`, `core.c`, `sched.h`) and
//! `Documentation/scheduler/sched-deadline.rst`; each function names the kernel function it
//! follows. Nothing here is a policy yet: no registry entry.
//!
//! - [`bw`]: the kernel's 2^-20 fixed point (`to_ratio`, `cap_scale`, `dl_time_before`),
//!   reproduced rather than approximated, so borderline sets decide as the kernel decides.
//! - [`attr`]: a reservation as `sched_setattr` takes it, and `__checkparam_dl`.
//! - [`cbs`]: one entity's CBS: wake-up rule (original and revised), charging, throttling,
//!   replenishment, yield, the 0-lag time; the exact exhaustion instant; counters.
//! - [`grub`]: `grub_reclaim`, the charge of a `SCHED_FLAG_RECLAIM` entity, and the per-CPU
//!   bandwidths it reads.
//! - [`admission`]: `sched_dl_overflow` / `__dl_overflow` per root domain, with the CPUs'
//!   capacities and the fair servers' reservations (counted since 6.12).
//! - [`constants`]: sched_rt_{runtime,period}_us, the RR slice, the fair server, the deadline
//!   period limits, each with its source.
//!
//! docs/linux-classes.md describes the rules and this machine's measured facts
//! (`crates/linux/tests/linux_classes_real.rs`).

pub mod admission;
pub mod cbs;
pub mod constants;
pub mod grub;

/// The reservation and `__checkparam_dl` (`attr`) and the fixed point (`bw`) live in the model,
/// which checks a file's `policy: deadline` tasks with the same rule; re-exported here so the
/// class's files name them as the kernel's.
pub use rtsched_model::linux::{attr, bw};

pub use admission::{AdmissionError, RootDomain};
pub use attr::{checkparam_dl, DlAttr, DlPeriodLimits, ParamError};
pub use cbs::{Cbs, CbsCounters, Charged, Inactive, Wakeup, Woken};
pub use constants::RtBandwidth;
pub use grub::GrubRq;
