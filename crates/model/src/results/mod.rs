//! The one results schema (docs/semantics.md, docs/outputs.md): per-job records, per-task and total
//! summaries, counters, and execution intervals. The simulator, real runs and kernel runs all
//! fill a [`RunResult`]; everything else (JSON, CSV, Perfetto trace, tables, plots) is
//! computed from it, so any two runs can be diffed. The catalogue of its columns (`columns.rs`:
//! what each is, where it appears, how it is read), the document's types (`schema.rs`), the
//! statistics over its records (`stats.rs`), its written forms (`write.rs`) and the atomic
//! output file (`atomic.rs`) are apart.

mod atomic;
mod chains;
pub mod columns;
mod schema;
mod stats;
mod write;

pub use atomic::{output_target, write_atomic, write_atomic_file, AtomicFile, OutputTarget};
pub use chains::{chain_cell, chain_columns};
pub use columns::{
    job_columns, jobs_csv_header, Cell, Column, Measured, Place, COLUMNS, LEDGER_COUNTERS,
};
pub use schema::*;
pub use stats::{chain_summaries, ChainAcc, SummaryAcc, SummarySink, TotalSink};
pub(crate) use write::held_jobs;
pub use write::{
    chain_flows, write_chains_csv, write_jobs_csv, write_results_json, write_trace,
    ChainsCsvWriter, FlowPoint, JobsCsvWriter, NotRun,
};
