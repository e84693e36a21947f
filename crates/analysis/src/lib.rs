//! Analysis: priority assignment (and, with later issues, generators, schedulability tests and
//! partitioning heuristics). Pure functions over the model; no simulation here.

pub mod priority;
