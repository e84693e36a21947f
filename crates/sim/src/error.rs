//! How a simulation fails, as a value: a caller that treats the kinds apart (a sweep's row
//! status) matches on it rather than on the message.

pub use rtsched_runtime::Failure;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The input makes no run: the scheduler does not build for this task set (a spec it
    /// refuses, a set it cannot run), or the cache model's input is bad.
    Input(String),
    /// The scheduler's partitioner (or federated placement) found no place for every task on
    /// the set's CPUs (`rtsched_policies::BuildError::Unplaced`): nothing ran.
    Unplaced(String),
    /// The run stopped part-way ([`Failure`]); `source` is the task set's, which the message
    /// begins with.
    Stopped { source: String, failure: Failure },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Input(m) | SimError::Unplaced(m) => f.write_str(m),
            SimError::Stopped { source, failure } => write!(f, "{source}: {failure}"),
        }
    }
}

/// The message alone, for the callers whose errors are text.
impl From<SimError> for String {
    fn from(e: SimError) -> String {
        e.to_string()
    }
}

/// A policy that does not build for the set: placement failures apart from other refusals.
impl From<rtsched_policies::BuildError> for SimError {
    fn from(e: rtsched_policies::BuildError) -> SimError {
        match e {
            rtsched_policies::BuildError::Unplaced(m) => SimError::Unplaced(m),
            rtsched_policies::BuildError::Refused(m) => SimError::Input(m),
        }
    }
}
