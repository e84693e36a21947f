//! A sweep's rows (docs/sweeps.md): for each task set a sweep draws (its seed and its rows'
//! keys from their coordinates), the set generated and given the sweep's run options, run in
//! the simulator under each scheduler (or judged by a schedulability test, `test:NAME`), and
//! summarised into the row's columns as the column catalogue (`rtsched_model::results::columns`)
//! declares them; a row that does not run says why as a typed [`Status`]. Every executor
//! computes rows here (`_core.sweep_batch` converts a [`batch::Batch`] for Python; the
//! `sweep_rows` example times them without Python), so any executor gives the same rows.
//!
//! Above `sim` and `analysis` (it generates, tests and simulates), below the bindings.

pub mod batch;
pub mod row;

pub use row::{
    make_set, metric_columns, notes, push_key, run, split_locking, taskset_seed, Note, Outcome,
    Ran, SetOptions, Status, LOCKING_SEP, TEST_PREFIX,
};
