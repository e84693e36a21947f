//! What every real run has, whatever its driver: its options, its limits and its errors.

use rtsched_model::Time;

/// Longest run allowed (a real run occupies real cores).
pub const MAX_DURATION: Time = 600 * 1_000_000_000;
/// The measurement holding where a real run's time 0 lies on this boot's CLOCK_MONOTONIC, in
/// ns (exact as an f64 for 104 days of uptime).
pub const TIME_ZERO_KEY: &str = "host.time_zero_monotonic_ns";

/// Tests that start real-time threads hold this lock: two at once would take each other's CPUs
/// (a SCHED_FIFO spinner of one starves the other's workers, and the schedule it checks).
#[cfg(test)]
pub(crate) fn real_threads_lock() -> std::sync::MutexGuard<'static, ()> {
    static REAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    REAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Debug)]
pub enum RunError {
    /// Bad input or options (exit 2).
    Input(String),
    /// The policy's partitioner (or federated placement) found no place for every task on the
    /// set's CPUs (`rtsched_policies::BuildError::Unplaced`): nothing ran (exit 2).
    Unplaced(String),
    /// Not permitted: nothing was run (exit 2).
    Privilege(String),
    /// Ctrl-C or SIGTERM: every thread was stopped.
    Interrupted,
    /// A worker failed; every thread was stopped.
    Failed(String),
    /// The ledger stopped the run (a deadlock the policy does not resolve, a capacity
    /// exceeded); `source` is the task set's, which the message begins with.
    Stopped {
        source: String,
        failure: rtsched_runtime::Failure,
    },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Input(s)
            | RunError::Unplaced(s)
            | RunError::Privilege(s)
            | RunError::Failed(s) => f.write_str(s),
            RunError::Interrupted => f.write_str("interrupted; every rtsched thread was stopped"),
            RunError::Stopped { source, failure } => write!(f, "{source}: {failure}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalModel {
    /// One decider thread makes every decision and notifies the CPUs (ChronOS "stop-the-world").
    StopTheWorld,
    /// Each CPU's worker decides for itself, under one lock, when it sees an event
    /// (ChronOS "application-concurrent").
    Concurrent,
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub allow_overload: bool,
    pub model: GlobalModel,
    /// Record execution intervals (for traces).
    pub record_intervals: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            allow_overload: false,
            model: GlobalModel::StopTheWorld,
            record_intervals: true,
        }
    }
}

/// A policy that does not build for the set: placement failures apart from other refusals.
impl From<rtsched_policies::BuildError> for RunError {
    fn from(e: rtsched_policies::BuildError) -> RunError {
        match e {
            rtsched_policies::BuildError::Unplaced(m) => RunError::Unplaced(m),
            rtsched_policies::BuildError::Refused(m) => RunError::Input(m),
        }
    }
}
