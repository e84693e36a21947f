//! Analysis: task-set generators, schedulability tests, priority assignment and partitioning
//! heuristics, and their overhead-aware forms (`overheads`: WCETs inflated by the simulator's
//! overhead model). Pure functions over the model; no simulation here. Randomness is always
//! seeded.

pub mod gen;
pub mod overheads;
pub mod partition;
pub mod priority;
pub mod schedulability;
