//! Real runs on Linux (docs/real-runs.md; docs/architecture.md "The ledger and the drivers"), producing the same results schema as
//! the simulator:
//!
//! - `kernel:deadline`, `kernel:fifo[:rm|:dm]`, `kernel:other` (option `:pi`: mutexes with
//!   priority inheritance) — each task's thread, plus helper threads for its parallel regions,
//!   under the kernel's own policy (the baselines a user would otherwise get);
//! - `kernel:scx:POLICY` — any rtsched policy decides in user space, rtsched's sched_ext
//!   scheduler puts each task's own thread on the CPU decided for it ([`scx_user`]);
//! - `testbed:POLICY` — any rtsched policy decides, one pinned SCHED_FIFO worker per CPU executes
//!   what it chose ([`testbed`]), in ChronOS's stop-the-world or application-concurrent model.
//!
//! `backend` parses the backend once and hands it to its driver; the drivers share the
//! modules below them (the decision machinery of `userspace`, the run's records in
//! [`stream`] and [`samples`], the system calls in [`sys`]) and never each other.
//!
//! Safety: refuses without real-time privilege (and runs nothing); never touches the kernel's
//! RT throttling; bounded duration; Ctrl-C / SIGTERM or a worker panic stop every thread, and
//! the calling thread's own policy is never changed (only threads this module creates are).

mod backend;
pub mod calibrate;
pub mod kernel;
pub mod lanes;
pub mod latency;
mod options;
pub mod perf;
pub mod samples;
pub mod scx;
pub mod scx_user;
mod signal;
pub mod stream;
pub mod sys;
pub mod testbed;
mod userspace;
pub mod work;

pub use backend::{run, run_streamed, scheduler_label, Backend, BACKENDS};
pub use options::{GlobalModel, RunError, RunOptions, MAX_DURATION, TIME_ZERO_KEY};
