//! The column catalogue: every column of rtsched's results declared once — its name, type, unit,
//! meaning, where it appears, what measures it (and how a run says it did not), and how its
//! value is read from a run. As polars keeps its schema in one place and the bindings only
//! convert, every written form of a result reads this list: the results document
//! (`write.rs`), the per-job CSV (`write.rs`) and Parquet file (`jobs_parquet.rs`), a sweep's
//! row (`rtsched-sweep`), and through `_core.columns()` the Python side: `Result`, the sweep
//! table's columns and types (`sweep/table.py`), the comparison table and its machine records
//! (`report.py`).
//!
//! **A column added is one entry of [`COLUMNS`]** (and, for a new measurement, the code that
//! measures it: a field of [`JobRecord`], [`Summary`] or [`Counters`](super::Counters) and
//! what fills it). It then appears in every place its `at` names and, by its `doc`, in the
//! results document. Where it goes within a place: the catalogue's order, after the columns of
//! schema 4 for the outputs whose order predates this catalogue and differs from it (the
//! layouts below, frozen so that no existing output changes; a reader by position never sees
//! a column move).
//!
//! Names are unique within a place, not across places: `missed` is a job's flag and a
//! summary's count, `overhead_ns` a job's charged overhead and a run's.

use super::schema::{ChainRecord, CpuSet, JobRecord, RunResult, Summary};
use crate::time::Time;
use serde::Serialize;
use std::sync::LazyLock;

mod catalogue;
pub use catalogue::COLUMNS;

/// A column's type (how every writer stores it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer (times in ns, counts): INT64 in Parquet, int64 (Int64 if nullable) in pandas.
    Int,
    /// A float: DOUBLE, float64.
    Float,
    /// A flag: BOOLEAN; `1`/`0` in the per-job CSV.
    Bool,
    /// Text: UTF-8.
    Text,
    /// The set of CPUs a job ran on: a list of INT32; `0;3` in the CSV.
    Cpus,
    /// A JSON object (a group of counters the document nests).
    Object,
}

/// A column's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    /// Nanoseconds (integer time, docs/semantics.md "Time").
    Ns,
    Count,
    /// A ratio (DSR, AUR, exec inflation, IPC proxy).
    Ratio,
    /// Utility accrued by time-utility functions.
    Utility,
    /// Cache lines.
    Lines,
}

/// Where a column appears (besides the results document, which [`Doc`] places it in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A per-job record: `--jobs-csv`, `--jobs-parquet`, `Result.jobs`.
    Job,
    /// A task's summary: `Result.tasks`.
    Task,
    /// The run's summary: `Result.summary`, `--format csv|json`.
    Run,
    /// A sweep's row (`sweep/table.py`), in [`ROW_LAYOUT`]'s order.
    Row,
    /// The comparison table (`--columns`), in [`TABLE_LAYOUT`]'s order, and its records for
    /// machines (`--format csv|json`): the columns with a [`Column::table`].
    Table,
    /// A chain instance's record (docs/chains.md): `--chains-csv`, `Result.chains`.
    Chain,
}

impl Place {
    pub const ALL: [Place; 6] = [
        Place::Job,
        Place::Task,
        Place::Run,
        Place::Row,
        Place::Table,
        Place::Chain,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Place::Job => "job",
            Place::Task => "task",
            Place::Run => "run",
            Place::Row => "row",
            Place::Table => "table",
            Place::Chain => "chain",
        }
    }

    pub fn parse(s: &str) -> Option<Place> {
        Place::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// What measures a column, and how a run that could not says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measured {
    /// Every driver: the simulator and every real-run backend.
    Always,
    /// The job ledger where it decides every dispatch: the simulator and the testbed. A run
    /// without that (the kernel backends; sched_ext's user-space mode, where the kernel
    /// dispatches too) lists the column in [`RunResult::unmeasured`]: null in its document and
    /// in `Result.values`, `-` in the tables.
    Ledger,
    /// The simulator's cache model (`run.cache`); 0 without it.
    CacheModel,
    /// The overheads charged (`run.overheads` in the simulator; a kernel backend's thread time
    /// outside its work, per job); 0 without them.
    Overheads,
    /// Hardware counters: real runs on a machine with a PMU; null otherwise (the run's
    /// `unavailable` says why).
    Pmu,
    /// The job ledger's run queues (where a thread sits between its runs): the simulator and
    /// the testbed; a run whose threads a real kernel placed (the kernel backends, sched_ext's
    /// user-space mode) has none per job: null in its records and summaries.
    RunQueues,
    /// A policy with a CBS (the `linux` scheduler's deadline class): null for every other
    /// policy and for real runs (the kernel's throttles are not seen).
    Cbs,
    /// Timed on the wall clock where asked (`--measure-policy`, real testbed runs); null
    /// otherwise.
    Timed,
    /// Not a measurement: the run's identity, or a sweep's coordinates and a row's outcome.
    Given,
    /// The set's chains (docs/chains.md), by every driver that measures them: null in a run
    /// whose set has no chain that gives the metric (a sweep row of a set without chains).
    Chains,
}

impl Measured {
    pub fn name(self) -> &'static str {
        match self {
            Measured::Always => "always",
            Measured::Ledger => "ledger",
            Measured::RunQueues => "run-queues",
            Measured::CacheModel => "cache-model",
            Measured::Overheads => "overheads",
            Measured::Pmu => "pmu",
            Measured::Cbs => "cbs",
            Measured::Timed => "timed",
            Measured::Given => "given",
            Measured::Chains => "chains",
        }
    }
}

/// How the results document holds a column, in the object its value comes from (a job record,
/// a summary, the counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Doc {
    /// Not in the document (derived from other columns, or a sweep's).
    No,
    /// Under its own name.
    Key,
    /// An element of the list under this key, in catalogue order (`misses`: L1, L2, LLC).
    Item(&'static str),
    /// A member of the object under this key (the column's name less `key_`), in catalogue
    /// order; the object is null when every member is (`hw`).
    Member(&'static str, &'static str),
}

/// How the per-job Parquet file encodes an integer column (docs/outputs.md "Cost").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A dictionary: columns with few distinct values per task (counts, demands, `cpus`).
    Dict,
    /// Delta-binary-packed: times that grow with the row (rows are in release order) and
    /// columns that are usually constant (zeros without a model), which take no bits.
    Delta,
}

/// When the comparison table shows a column without `--columns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    Always,
    /// When some run's value of the named column is neither 0 nor null.
    IfAny(&'static str),
    /// When some run's value of the named column is off 1 (by more than 1e-9).
    IfNotOne(&'static str),
    /// When some run's value of the named column is below 1.
    IfBelowOne(&'static str),
    /// When some run has a value of the named column.
    IfPresent(&'static str),
    /// Only on request (`--columns`).
    OnRequest,
}

/// How the comparison table writes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    /// As it is (a name, a count).
    Plain,
    /// ns as ms, 3 decimals.
    Ms,
    /// 4 decimals.
    Ratio,
    /// A whole number (rounded).
    Whole,
}

/// A column of the comparison table.
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub header: &'static str,
    /// Headers `--columns` still takes, for a column whose header changed.
    pub aliases: &'static [&'static str],
    /// When the table is wider than the terminal, the highest rank is left out first (0: never).
    pub rank: u8,
    pub show: Show,
    pub fmt: Fmt,
}

/// How a column's value is read.
#[derive(Clone, Copy)]
pub enum Value {
    /// The run's scheduler, as the user wrote it (each writer knows its run's label).
    Scheduler,
    /// The job's task, by name.
    Task,
    /// From a per-job record and the run's end (the tardiness of a job unfinished at the end).
    Job(for<'a> fn(&'a JobRecord, Time) -> Cell<'a>),
    /// From a summary (the run's total, or a task's).
    Summary(fn(&Summary) -> Cell<'static>),
    /// From the run (its counters, its measurements).
    Run(for<'a> fn(&'a RunResult) -> Cell<'a>),
    /// Given by a sweep (its coordinates, a row's outcome: `rtsched-sweep`, `sweep/`).
    Sweep,
    /// The chain of a chain instance's record, by name.
    ChainName,
    /// From a chain instance's record.
    Chain(fn(&ChainRecord) -> Cell<'static>),
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.source())
    }
}

impl Value {
    /// What the value comes from, in a word (`_core.columns()`' `source`).
    pub fn source(&self) -> &'static str {
        match self {
            Value::Scheduler => "scheduler",
            Value::Task => "task",
            Value::Job(_) => "job",
            Value::Summary(_) => "summary",
            Value::Run(_) => "run",
            Value::Sweep => "sweep",
            Value::ChainName | Value::Chain(_) => "chain",
        }
    }
}

/// One value of a column.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Uint(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(&'a str),
    Cpus(&'a CpuSet),
    Object(serde_json::Value),
}

impl From<u64> for Cell<'_> {
    fn from(v: u64) -> Self {
        Cell::Uint(v)
    }
}
impl From<u32> for Cell<'_> {
    fn from(v: u32) -> Self {
        Cell::Uint(v.into())
    }
}
impl From<f64> for Cell<'_> {
    fn from(v: f64) -> Self {
        Cell::Float(v)
    }
}
impl From<bool> for Cell<'_> {
    fn from(v: bool) -> Self {
        Cell::Bool(v)
    }
}
impl<'a, T: Into<Cell<'a>>> From<Option<T>> for Cell<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Cell::Null, Into::into)
    }
}

impl Serialize for Cell<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Null => s.serialize_none(),
            Cell::Uint(v) => s.serialize_u64(*v),
            Cell::Int(v) => s.serialize_i64(*v),
            Cell::Float(v) => s.serialize_f64(*v),
            Cell::Bool(v) => s.serialize_bool(*v),
            Cell::Text(v) => s.serialize_str(v),
            Cell::Cpus(v) => v.serialize(s),
            Cell::Object(v) => v.serialize(s),
        }
    }
}

/// A column of rtsched's results.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub unit: Unit,
    /// May be null: an empty CSV cell, a Parquet null, pandas' `<NA>`.
    pub nullable: bool,
    pub meaning: &'static str,
    /// Where it appears besides the results document (and the comparison table, which shows
    /// the columns with a `table`).
    pub at: &'static [Place],
    pub measured: Measured,
    /// Where the results document holds it.
    pub doc: Doc,
    pub value: Value,
    /// How the per-job Parquet file encodes it (integer columns).
    pub store: Store,
    /// Its column in the comparison table, if it has one.
    pub table: Option<Table>,
}

impl Column {
    pub fn is_at(&self, p: Place) -> bool {
        match p {
            Place::Table => self.table.is_some(),
            _ => self.at.contains(&p),
        }
    }
    /// Its value in run `r`, whose total summary is `total`: null where the run could not
    /// measure it ([`RunResult::unmeasured`]). `None` for a column a run does not give as one
    /// value (a job's, a sweep's); the scheduler is the run's.
    pub fn of_run<'a>(&self, r: &'a RunResult, total: &Summary) -> Option<Cell<'a>> {
        let v = match self.value {
            Value::Summary(f) => f(total),
            Value::Run(f) => f(r),
            Value::Scheduler => Cell::Text(&r.scheduler),
            Value::Job(_) | Value::Task | Value::Sweep | Value::ChainName | Value::Chain(_) => {
                return None
            }
        };
        Some(if r.unmeasured.contains(&self.name) {
            Cell::Null
        } else {
            v
        })
    }
}

impl Column {
    /// Where the results document holds it, within its object: `name`, `misses[2]` (an element
    /// of a list), `hw.cycles` (a member of an object); `None` if it does not.
    pub fn doc_path(&self) -> Option<String> {
        match self.doc {
            Doc::No => None,
            Doc::Key => Some(self.name.to_string()),
            Doc::Item(k) => {
                // (A column is its name and source: `misses_l1` is a job's and a summary's.)
                let src = self.value.source();
                let i = COLUMNS
                    .iter()
                    .filter(|c| c.doc == self.doc && c.value.source() == src)
                    .take_while(|c| c.name != self.name)
                    .count();
                Some(format!("{k}[{i}]"))
            }
            Doc::Member(k, m) => Some(format!("{k}.{m}")),
        }
    }
}

// ---- the layouts of schema 4 (frozen: a column added since follows them, in catalogue order)

/// A sweep's table (`sweep/table.py`).
#[rustfmt::skip]
pub const ROW_LAYOUT: &[&str] = &[
    "key", "sweep", "generator", "gen_params", "param", "point", "replication", "taskset_seed",
    "scheduler", "kind", "m", "n", "U", "duration_ns", "on_miss", "run", "topology", "status",
    "error", "jobs", "completed", "met", "missed", "aborted", "dsr", "accrued_utility",
    "possible_utility", "aur", "max_tardiness_ns", "mean_tardiness_ns", "max_response_ns",
    "mean_response_ns", "p99_response_ns", "preemptions", "migrations", "pulls", "context_switches",
    "scheduler_invocations", "steals", "steal_attempts", "failed_steals", "priority_inversions",
    "priority_inversion_ns", "inverted_jobs", "inversion_job_ns", "inversion_job_max_ns",
    "inversion_job_p99_ns", "kernel_migrations", "deadlocks", "exec_inflation", "ipc_proxy",
    "misses_l1", "misses_l2", "misses_llc", "invalidations", "evictions", "overhead_ns",
    "schedulable", "verdict", "schema",
];

/// The comparison table (`report.py`; `--columns` lists its headers in this order).
#[rustfmt::skip]
pub const TABLE_LAYOUT: &[&str] = &[
    "scheduler", "jobs", "missed", "aborted", "dsr", "aur", "max_tardiness_ns", "unfinished",
    "mean_response_ns", "p99_response_ns", "max_blocked_ns", "preemptions", "migrations", "pulls",
    "context_switches", "scheduler_invocations", "steals", "steal_attempts", "failed_steals",
    "priority_inversions", "priority_inversion_ns", "deadlocks", "policy_ns_per_invocation",
    "overhead_ns", "exec_inflation", "ipc_proxy", "llc_misses",
];

/// The keys of a job's record in the results document.
#[rustfmt::skip]
pub const JOB_DOC_LAYOUT: &[&str] = &[
    "task", "job", "release_ns", "deadline_ns", "demand_ns", "start_ns", "finish_ns", "cpus",
    "preemptions", "migrations", "pulls", "context_switches", "blocked_ns", "missed", "aborted",
    "aborted_at_ns", "utility", "max_utility", "exec_ns", "overhead_ns", "stall_ns", "misses", "hw",
];

/// The layout a place keeps, if it has one.
fn layout(p: Place) -> Option<&'static [&'static str]> {
    match p {
        Place::Row => Some(ROW_LAYOUT),
        Place::Table => Some(TABLE_LAYOUT),
        Place::Job | Place::Task | Place::Run | Place::Chain => None,
    }
}

/// `items` in `layout`'s order (by `key`), then the rest in their own order.
fn in_layout<T: Copy>(items: Vec<T>, layout: &[&str], key: impl Fn(&T) -> &'static str) -> Vec<T> {
    let mut out: Vec<T> = layout
        .iter()
        .filter_map(|n| items.iter().find(|c| key(c) == *n).copied())
        .collect();
    out.extend(items.into_iter().filter(|c| !layout.contains(&key(c))));
    out
}

/// The columns of place `p`, in its order.
pub fn columns(p: Place) -> Vec<&'static Column> {
    let here: Vec<&'static Column> = COLUMNS.iter().filter(|c| c.is_at(p)).collect();
    match layout(p) {
        Some(l) => in_layout(here, l, |c| c.name),
        None => here,
    }
}

static JOB_COLUMNS: LazyLock<Vec<&'static Column>> = LazyLock::new(|| columns(Place::Job));

/// The per-job records' columns, in order (the CSV's header).
pub fn job_columns() -> &'static [&'static Column] {
    &JOB_COLUMNS
}

/// The CSV header of per-job records.
pub fn jobs_csv_header() -> String {
    let names: Vec<&str> = job_columns().iter().map(|c| c.name).collect();
    names.join(",")
}

/// How a key of a document object holds its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    One,
    List,
    Object,
}

/// One key of a document object and the columns under it.
#[derive(Clone, Debug)]
pub(crate) struct DocKey {
    pub key: &'static str,
    pub shape: Shape,
    pub cols: Vec<&'static Column>,
}

/// The keys of a document object holding `cols` (those whose `doc` places them), in
/// `layout`'s order then the catalogue's.
fn doc_keys(cols: impl Iterator<Item = &'static Column>, layout: &[&str]) -> Vec<DocKey> {
    let mut keys: Vec<DocKey> = Vec::new();
    for c in cols {
        let (key, shape) = match c.doc {
            Doc::No => continue,
            Doc::Key => (c.name, Shape::One),
            Doc::Item(k) => (k, Shape::List),
            Doc::Member(k, _) => (k, Shape::Object),
        };
        match keys.iter_mut().find(|k| k.key == key) {
            Some(k) => k.cols.push(c),
            None => keys.push(DocKey {
                key,
                shape,
                cols: vec![c],
            }),
        }
    }
    // Stable: the keys no layout lists keep the catalogue's order, after those it lists.
    keys.sort_by_key(|k| {
        layout
            .iter()
            .position(|n| *n == k.key)
            .unwrap_or(layout.len())
    });
    keys
}

/// The keys of the document's objects: a job's record, the run's total, a task's summary and
/// the counters.
pub(crate) struct DocKeys {
    pub job: Vec<DocKey>,
    pub total: Vec<DocKey>,
    pub task: Vec<DocKey>,
    pub counters: Vec<DocKey>,
}

pub(crate) static DOC: LazyLock<DocKeys> = LazyLock::new(|| {
    let summary = |p: Place| {
        doc_keys(
            COLUMNS
                .iter()
                .filter(move |c| matches!(c.value, Value::Summary(_)) && c.is_at(p)),
            &[],
        )
    };
    DocKeys {
        job: doc_keys(
            COLUMNS
                .iter()
                .filter(|c| matches!(c.value, Value::Job(_) | Value::Task)),
            JOB_DOC_LAYOUT,
        ),
        total: summary(Place::Run),
        task: summary(Place::Task),
        counters: doc_keys(
            COLUMNS.iter().filter(|c| matches!(c.value, Value::Run(_))),
            &[],
        ),
    }
});

/// The run-level counters a run without a job ledger deciding every dispatch cannot measure
/// ([`Measured::Ledger`]): what such a driver sets [`RunResult::unmeasured`] to.
pub const LEDGER_COUNTERS: [&str; measured_count(Measured::Ledger)] =
    measured_names(Measured::Ledger);

/// How many run-level columns `m` measures.
const fn measured_count(m: Measured) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < COLUMNS.len() {
        if matches!(COLUMNS[i].value, Value::Run(_)) && COLUMNS[i].measured as u8 == m as u8 {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names of the run-level columns `m` measures, in catalogue order.
const fn measured_names<const N: usize>(m: Measured) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < COLUMNS.len() {
        if matches!(COLUMNS[i].value, Value::Run(_)) && COLUMNS[i].measured as u8 == m as u8 {
            out[n] = COLUMNS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests;
