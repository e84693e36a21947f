//! Analysis: task-set generators, schedulability tests, priority assignment and partitioning
//! heuristics. Pure functions over the model; no simulation here. Randomness is always seeded.

pub mod gen;
pub mod partition;
pub mod priority;
pub mod schedulability;
