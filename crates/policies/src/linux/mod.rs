//! Linux's scheduling classes as the kernel computes them, and the `linux` scheduler that
//! stacks them (docs/linux-classes.md). Read against Linux 6.18 (`kernel/sched/deadline.c`,
//! `rt.c`, `fair.c`, `core.c`, `sched.h`) and `Documentation/scheduler/sched-deadline.rst`;
//! each function names the kernel function it follows.
//!
//! The rules, as pure functions and small state machines over integer ns that the simulator
//! and real runs share:
//! - [`bw`]: the kernel's 2^-20 fixed point (`to_ratio`, `cap_scale`, `dl_time_before`),
//!   reproduced rather than approximated, so borderline sets decide as the kernel decides;
//! - [`attr`]: a reservation as `sched_setattr` takes it, and `__checkparam_dl` (both in the
//!   model, which checks a file's deadline tasks with them, and re-exported here);
//! - [`cbs`]: one entity's CBS: wake-up rule (original and revised), charging, throttling,
//!   replenishment, yield, the 0-lag time; the exact exhaustion instant; counters;
//! - [`grub`]: `grub_reclaim`, the charge of a `SCHED_FLAG_RECLAIM` entity, and the per-CPU
//!   bandwidths it reads;
//! - [`admission`]: `sched_dl_overflow` / `__dl_overflow` per root domain, with the CPUs'
//!   capacities and the fair servers' reservations (counted since 6.12);
//! - [`constants`]: sched_rt_{runtime,period}_us, the RR slice, the fair server, the deadline
//!   period limits, each with its source.
//!
//! The `linux` scheduler (`stack.rs`, its overview gives one instant of the stack), one file
//! per class: `dl.rs` (SCHED_DEADLINE: `gedf-dist:heap`'s machinery keyed by each thread's
//! CBS), `server.rs` (the fair server, a deferred `dl_server`), `rt.rs` (SCHED_FIFO/RR:
//! `gfp-dist`'s machinery with `cpupri`, RR slices, RT throttling), the fair class `cfs.rs`'s
//! model; `build.rs` its options, reservations and admission; `timers.rs` the classes'
//! timers.

pub mod admission;
pub mod cbs;
pub mod constants;
pub mod grub;

/// The reservation and `__checkparam_dl` (`attr`) and the fixed point (`bw`) live in the model,
/// which checks a file's `policy: deadline` tasks with the same rule; re-exported here so the
/// class's files name them as the kernel's.
pub use rtsched_model::linux::{attr, bw};

mod build;
mod dl;
mod rt;
mod server;
mod stack;
mod timers;

pub use admission::{AdmissionError, RootDomain};
pub use attr::{checkparam_dl, DlAttr, DlPeriodLimits, ParamError};
pub use build::admit_set;
pub use build::lane_runtimes;
pub use cbs::{Cbs, CbsCounters, Charged, Inactive, Wakeup, Woken};
pub use constants::RtBandwidth;
pub use grub::GrubRq;
pub use stack::{build, Linux};

use crate::spec::{PolicyInfo, Takes, Tufs};

pub const INFO: PolicyInfo = PolicyInfo {
    name: "linux",
    summary: "Linux's class stack, each task under its own policy: SCHED_DEADLINE (global EDF, push/pull, cpudl, each thread's CBS, admission, the fair server) above SCHED_FIFO/RR (cpupri, RR slice, RT throttling) above the fair class (cfs)",
    paper: "Linux 6.18 kernel/sched: deadline.c, rt.c, fair.c, core.c; gedf-heap §3-5 (push/pull, cpudl); Abeni & Buttazzo 1998 (CBS)",
    options: "reclaim (GRUB for every deadline task), fair_server=on|off (default on), rt_throttle=on|off (default on: CONFIG_RT_GROUP_SCHED), tick=4ms (HZ=250), rr_timeslice=100ms; a task without 'policy' follows run.default_policy, else SCHED_DEADLINE with runtime = WCET (best-effort tasks: SCHED_OTHER)",
    partition: None,
    fixed_priorities: false,
    takes: Takes {
        fair: true,
        ..Takes::REAL_TIME
    },
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};
