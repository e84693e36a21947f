//! The runtime layer (docs/architecture.md): the one place that knows what a job is while it runs.
//!
//! Every driver — the simulator, the real-threads testbed, and sched_ext's user-space mode —
//! runs jobs through the same [`Ledger`]: slots, held jobs, fork/join, resources and their
//! queues, aborts, the counting and invariant checks of a decision, and the end-of-run
//! records. A driver only says how time passes and how work gets done ([`Substrate`]), so
//! the drivers cannot drift apart. [`ProtocolChecker`] wraps any policy and asserts the call
//! protocol of `rtsched_policies::policy` under whichever driver runs it.

pub mod chains;
pub mod checker;
mod inversion;
pub mod ledger;
pub mod state;
pub mod streams;

pub use checker::ProtocolChecker;
pub use ledger::{
    drain_limit, next_step, refuses_locking, set_mrsp_helping, Failure, Ledger, LedgerParts, Next,
    Off, Outcome, Released, Run, Step, Substrate,
};
pub use state::{CpuState, Ent, NONE};
pub use streams::TaskStreams;
