//! rtsched's deterministic discrete-event simulator: integer nanoseconds, one event order,
//! seeded execution-time models; same task set + seed gives byte-identical results.

pub mod engine;
pub mod exec;

pub use engine::{simulate, simulate_observed, simulate_policy, simulate_with_stats, Observer, View};
