//! rtsched's deterministic discrete-event simulator: integer nanoseconds, one event order,
//! seeded execution-time models; same task set + seed gives byte-identical results. A driver of
//! the job ledger in `rtsched-runtime`, like the real-threads testbed.

pub mod cache;
pub mod cost;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod simulation;

/// The execution-time and arrival streams (moved to the ledger's crate; kept here by name).
pub mod exec {
    pub use rtsched_runtime::streams::*;
}

pub use cache::CacheModel;
pub use cost::{CostModel, NoCache};
pub use engine::{NoObserver, Observer, SimScratch, View};
pub use error::{Failure, SimError};
pub use estimate::{estimate, estimate_spec, Estimate, DEFAULT_MAX_WORK};
/// Test-only: turn MrsP's helping off for runs on the calling thread (the negative control of
/// MrsP's bound, docs/locking.md "Helping"). Not a user option.
#[doc(hidden)]
pub use rtsched_runtime::set_mrsp_helping;
pub use simulation::{simulate, Options, Outcome, Records};
