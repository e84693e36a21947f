//! Per-job records as a zstd-compressed Parquet file: the columns of the jobs CSV
//! ([`JOBS_CSV_HEADER`](crate::results::JOBS_CSV_HEADER)), typed, written in row groups of
//! [`ROW_GROUP_JOBS`] jobs straight from the run's records — each row group is encoded column by
//! column from a small scratch buffer, so no second copy of the jobs is ever built.
//!
//! Column types (docs/semantics.md "Per-job records"): `scheduler` and `task` are UTF-8
//! strings (dictionary-encoded, so a task name costs a few bits per row); times and counts are
//! signed INT64 (ns fit: 2^63 ns is 292 years); `start_ns`, `finish_ns`, `response_ns`,
//! `aborted_at_ns` and `hw_*` are null where the CSV cell is empty; `cpus` is a list of INT32
//! (the CSV's `0;3`); `missed` and `aborted` are BOOLEAN (the CSV's 1/0); `utility` and
//! `max_utility` DOUBLE. Rows are in the CSV's order: run by run, each run's jobs in release
//! order. A run's rows never share a row group with another run's, and the key-value metadata
//! `rtsched.runs` (JSON) names each run's row groups, so one run reads back alone.

use crate::results::{JobRecord, JobSink, RunResult, SCHEMA};
use crate::time::Time;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::types::ColumnPath;
use std::io::{self, Write};
use std::sync::Arc;

/// Jobs per row group: large enough that per-group overhead (headers, statistics) is
/// negligible, small enough that the scratch buffers stay about a megabyte per column.
pub const ROW_GROUP_JOBS: usize = 128 * 1024;

/// The file's message type, in the CSV's column order.
const SCHEMA_TEXT: &str = "message rtsched_jobs {
  required binary scheduler (STRING);
  required binary task (STRING);
  required int64 job;
  required int64 release_ns;
  required int64 deadline_ns;
  optional int64 start_ns;
  optional int64 finish_ns;
  optional int64 response_ns;
  required int64 tardiness_ns;
  required int64 demand_ns;
  required group cpus (LIST) { repeated group list { required int32 element; } }
  required int64 preemptions;
  required int64 migrations;
  optional int64 pulls;
  required int64 context_switches;
  required boolean missed;
  required boolean aborted;
  required int64 blocked_ns;
  optional int64 aborted_at_ns;
  required double utility;
  required double max_utility;
  required int64 exec_ns;
  required int64 overhead_ns;
  required int64 stall_ns;
  required int64 misses_l1;
  required int64 misses_l2;
  required int64 misses_llc;
  optional int64 hw_instructions;
  optional int64 hw_cycles;
  optional int64 hw_llc_misses;
}";

/// Integer columns that take delta encoding instead of a dictionary: times that grow with the
/// row (rows are in release order) and nearly all differ, so a dictionary only costs hashing
/// while deltas take a few bits; and columns usually constant (zeros without overheads, a
/// cache model or hardware counters), which deltas store in no bits without hashing. The
/// rest — `response_ns`, `demand_ns`, `exec_ns` (few distinct values per task), the counts
/// and `cpus` — keep the dictionary, which measured smaller for them (docs/outputs.md "Cost").
const DELTA_COLUMNS: [&str; 16] = [
    "job",
    "release_ns",
    "deadline_ns",
    "start_ns",
    "finish_ns",
    "tardiness_ns",
    "blocked_ns",
    "aborted_at_ns",
    "overhead_ns",
    "stall_ns",
    "misses_l1",
    "misses_l2",
    "misses_llc",
    "hw_instructions",
    "hw_cycles",
    "hw_llc_misses",
];

fn properties() -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(1).expect("level 1 is valid"),
        ))
        // Page statistics buy nothing for a table read whole; chunk statistics stay.
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "rtsched.schema".into(),
            SCHEMA.to_string(),
        )]));
    // Min / max of the names would cost a string comparison a row, and filter nothing.
    for c in ["scheduler", "task"] {
        b = b.set_column_statistics_enabled(ColumnPath::from(c), EnabledStatistics::None);
    }
    for c in DELTA_COLUMNS {
        let p = ColumnPath::from(c);
        b = b
            .set_column_dictionary_enabled(p.clone(), false)
            .set_column_encoding(p, Encoding::DELTA_BINARY_PACKED);
    }
    b.build()
}

/// One run's header and the row groups `[first, end)` that hold its jobs.
fn run_metadata(r: &RunResult, jobs: u64, first: usize, end: usize) -> serde_json::Value {
    serde_json::json!({
        "scheduler": r.scheduler,
        "substrate": r.substrate,
        "taskset": r.taskset,
        "cpus": r.cpus,
        "duration_ns": r.duration,
        "seed": r.seed,
        "end_ns": r.end,
        "jobs": jobs,
        "row_groups": [first, end],
    })
}

fn pq_err(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e)
}

/// Write every run's per-job records to `w` as one Parquet file.
pub fn write_jobs_parquet<W: Write + Send>(runs: &[&RunResult], w: W) -> io::Result<()> {
    crate::results::held_jobs(runs, true)?;
    let mut out = JobsParquetWriter::new(w)?;
    for r in runs {
        out.begin_run(&r.scheduler, &r.task_names);
        for j in &r.jobs {
            out.job(j, r.end);
        }
        out.end_run(r)?;
    }
    out.close().map(|_| ())
}

/// Per-job records written to Parquet as they come (a [`JobSink`]): a row group every
/// [`ROW_GROUP_JOBS`] records, so a run streamed into it holds a bounded number of row
/// groups' columns, whatever its length. Several runs go one after the other into one file
/// (`begin_run` … records … `end_run`); `close` writes the footer with each run's header
/// and row groups (key `rtsched.runs`).
///
/// [`JobsParquetWriter::new`] encodes each row group on the caller's thread;
/// [`JobsParquetWriter::threaded`] on a thread of its own, while the caller (the simulator)
/// fills the next: the same row groups in the same order, so the same bytes.
pub struct JobsParquetWriter<W: Write + Send> {
    backend: Backend<W>,
    cols: Columns,
    rows: usize,
    /// Records per row group ([`ROW_GROUP_JOBS`] unless [`JobsParquetWriter::row_group_jobs`]).
    group_jobs: usize,
    sched: ByteArray,
    names: Vec<ByteArray>,
    /// Row groups written so far, the first of the current run, and its records.
    groups: usize,
    first: usize,
    run_jobs: u64,
    runs: Vec<serde_json::Value>,
    /// The first write error (a sink cannot return one): reported by `end_run` / `close`.
    error: Option<io::Error>,
}

/// What encodes the row groups and writes the file.
enum Backend<W: Write + Send> {
    Inline(SerializedFileWriter<W>),
    /// Full row groups go to the encoder thread (at most one waits), which hands the emptied
    /// columns back for reuse; `Finish` carries the runs' metadata for the footer.
    // (The receiver in a mutex only so that the writer is `Sync`: one thread uses it.)
    Thread {
        to: std::sync::mpsc::SyncSender<ToEncoder>,
        back: std::sync::Mutex<std::sync::mpsc::Receiver<Columns>>,
        handle: std::thread::JoinHandle<io::Result<W>>,
    },
    Gone,
}

// Columns move by value, once a row group (a few thousand jobs); boxing them would add an
// allocation a group for nothing.
#[allow(clippy::large_enum_variant)]
enum ToEncoder {
    Group(Columns),
    Finish(String),
}

fn new_file_writer<W: Write + Send>(w: W) -> io::Result<SerializedFileWriter<W>> {
    let schema = Arc::new(
        parquet::schema::parser::parse_message_type(SCHEMA_TEXT).expect("the schema text parses"),
    );
    SerializedFileWriter::new(w, schema, Arc::new(properties())).map_err(pq_err)
}

fn write_group<W: Write + Send>(
    fw: &mut SerializedFileWriter<W>,
    cols: &Columns,
) -> io::Result<()> {
    let mut rg = fw.next_row_group().map_err(pq_err)?;
    cols.write(&mut rg).map_err(pq_err)?;
    rg.close().map_err(pq_err)?;
    Ok(())
}

fn finish_file<W: Write + Send>(mut fw: SerializedFileWriter<W>, runs: String) -> io::Result<W> {
    fw.append_key_value_metadata(KeyValue::new("rtsched.runs".into(), runs));
    fw.into_inner().map_err(pq_err)
}

impl<W: Write + Send> JobsParquetWriter<W> {
    pub fn new(w: W) -> io::Result<Self> {
        Ok(Self::with(Backend::Inline(new_file_writer(w)?)))
    }

    fn with(backend: Backend<W>) -> Self {
        JobsParquetWriter {
            backend,
            cols: Columns::default(),
            rows: 0,
            group_jobs: ROW_GROUP_JOBS,
            sched: ByteArray::from(""),
            names: Vec::new(),
            groups: 0,
            first: 0,
            run_jobs: 0,
            runs: Vec::new(),
            error: None,
        }
    }

    /// Row groups of `n` records (at least 1) instead of [`ROW_GROUP_JOBS`]: a writer fed
    /// slowly (a real run's few hundred jobs a second) holds fewer columns in memory.
    pub fn row_group_jobs(mut self, n: usize) -> Self {
        self.group_jobs = n.max(1);
        self
    }

    /// The records that follow are run `scheduler`'s, over tasks `task_names`.
    pub fn begin_run(&mut self, scheduler: &str, task_names: &[String]) {
        self.sched = ByteArray::from(scheduler);
        self.names = task_names
            .iter()
            .map(|n| ByteArray::from(n.as_str()))
            .collect();
        self.first = self.groups;
        self.run_jobs = 0;
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        match &mut self.backend {
            Backend::Inline(fw) => {
                write_group(fw, &self.cols)?;
                self.cols.clear();
            }
            Backend::Thread { to, back, .. } => {
                // The encoder's emptied columns if it has handed some back, else new ones.
                let spare = back
                    .get_mut()
                    .map(|b| b.try_recv().unwrap_or_default())
                    .unwrap_or_default();
                let full = std::mem::replace(&mut self.cols, spare);
                // A send fails only if the encoder stopped on an error: `close` reports it.
                let _ = to.send(ToEncoder::Group(full));
            }
            Backend::Gone => unreachable!("a closed writer takes no records"),
        }
        self.rows = 0;
        self.groups += 1;
        Ok(())
    }

    /// The run whose records came since `begin_run` stopped part-way (a deadlock its policy
    /// does not resolve): the records it streamed are written, their `scheduler` column naming
    /// it, but no run of the metadata holds them, so the next run's row groups start after.
    pub fn abandon_run(&mut self) -> io::Result<()> {
        self.flush()
    }

    /// The run whose records came since `begin_run` ended with result `r` (its header).
    pub fn end_run(&mut self, r: &RunResult) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush()?;
        self.runs
            .push(run_metadata(r, self.run_jobs, self.first, self.groups));
        Ok(())
    }

    /// Write the footer; returns the inner writer.
    pub fn close(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush()?;
        let runs = serde_json::Value::Array(std::mem::take(&mut self.runs)).to_string();
        match std::mem::replace(&mut self.backend, Backend::Gone) {
            Backend::Inline(fw) => finish_file(fw, runs),
            Backend::Thread { to, handle, .. } => {
                let _ = to.send(ToEncoder::Finish(runs));
                drop(to);
                handle.join().unwrap_or_else(|_| {
                    Err(io::Error::other("the Parquet encoder thread panicked"))
                })
            }
            Backend::Gone => unreachable!("closed once"),
        }
    }
}

impl<W: Write + Send + 'static> JobsParquetWriter<W> {
    /// A writer whose row groups are encoded on a thread of its own (see the type's docs).
    pub fn threaded(w: W) -> io::Result<Self> {
        let mut fw = new_file_writer(w)?;
        let (to, from) = std::sync::mpsc::sync_channel::<ToEncoder>(1);
        let (give_back, back) = std::sync::mpsc::channel::<Columns>();
        let handle = std::thread::Builder::new()
            .name("rtsched-parquet".into())
            .spawn(move || {
                let mut error = None;
                for msg in from {
                    match msg {
                        ToEncoder::Group(mut cols) => {
                            if error.is_none() {
                                error = write_group(&mut fw, &cols).err();
                            }
                            cols.clear();
                            let _ = give_back.send(cols);
                        }
                        ToEncoder::Finish(runs) => {
                            return match error {
                                Some(e) => Err(e),
                                None => finish_file(fw, runs),
                            }
                        }
                    }
                }
                // Dropped without `close`: the file is given up (an `AtomicFile` removes itself).
                Err(error
                    .unwrap_or_else(|| io::Error::other("the Parquet writer was dropped unclosed")))
            })?;
        Ok(Self::with(Backend::Thread {
            to,
            back: std::sync::Mutex::new(back),
            handle,
        }))
    }
}

impl<W: Write + Send> Drop for JobsParquetWriter<W> {
    /// A threaded writer dropped unclosed waits for its encoder to give the file up, so that
    /// nothing of it is left once the drop returns.
    fn drop(&mut self) {
        if let Backend::Thread { to, handle, .. } =
            std::mem::replace(&mut self.backend, Backend::Gone)
        {
            drop(to);
            let _ = handle.join();
        }
    }
}

impl<W: Write + Send> JobSink for JobsParquetWriter<W> {
    #[inline]
    fn job(&mut self, rec: &JobRecord, end: Time) {
        if self.error.is_some() {
            return;
        }
        self.cols.push(rec, end, &self.sched, &self.names);
        self.rows += 1;
        self.run_jobs += 1;
        if self.rows == self.group_jobs {
            if let Err(e) = self.flush() {
                self.error = Some(e);
            }
        }
    }
}

type PqResult<T> = parquet::errors::Result<T>;

/// A nullable column: the present values, and a definition level per row (1 present, 0 null).
#[derive(Default)]
struct Nullable {
    values: Vec<i64>,
    defs: Vec<i16>,
}

impl Nullable {
    #[inline]
    fn push(&mut self, v: Option<u64>) {
        if let Some(v) = v {
            self.values.push(v as i64);
        }
        self.defs.push(v.is_some() as i16);
    }
}

/// One row group's columns. Filled a record at a time (each record read once: a pass per
/// column would stream the whole run through the cache 30 times), then written column by
/// column; reused from row group to row group.
#[derive(Default)]
struct Columns {
    scheduler: Vec<ByteArray>,
    task: Vec<ByteArray>,
    job: Vec<i64>,
    release: Vec<i64>,
    deadline: Vec<i64>,
    start: Nullable,
    finish: Nullable,
    response: Nullable,
    tardiness: Vec<i64>,
    demand: Vec<i64>,
    cpus: Vec<i32>,
    cpus_defs: Vec<i16>,
    cpus_reps: Vec<i16>,
    preemptions: Vec<i64>,
    migrations: Vec<i64>,
    pulls: Nullable,
    context_switches: Vec<i64>,
    missed: Vec<bool>,
    aborted: Vec<bool>,
    blocked: Vec<i64>,
    aborted_at: Nullable,
    utility: Vec<f64>,
    max_utility: Vec<f64>,
    exec: Vec<i64>,
    overhead: Vec<i64>,
    stall: Vec<i64>,
    misses: [Vec<i64>; 3],
    hw: [Nullable; 3],
}

impl Columns {
    fn clear(&mut self) {
        macro_rules! clear {
            ($($v:expr),*) => { $( $v.clear(); )* };
        }
        clear!(
            self.scheduler,
            self.task,
            self.job,
            self.release,
            self.deadline,
            self.tardiness,
            self.demand,
            self.cpus,
            self.cpus_defs,
            self.cpus_reps
        );
        clear!(
            self.preemptions,
            self.migrations,
            self.context_switches,
            self.missed,
            self.aborted,
            self.blocked,
            self.utility,
            self.max_utility
        );
        clear!(
            self.exec,
            self.overhead,
            self.stall,
            self.misses[0],
            self.misses[1],
            self.misses[2]
        );
        let [h0, h1, h2] = &mut self.hw;
        for n in [
            &mut self.start,
            &mut self.finish,
            &mut self.response,
            &mut self.aborted_at,
            &mut self.pulls,
            h0,
            h1,
            h2,
        ] {
            clear!(n.values, n.defs);
        }
    }

    #[inline]
    fn push(&mut self, j: &JobRecord, end: Time, sched: &ByteArray, names: &[ByteArray]) {
        // Clones of a ByteArray share its bytes: no copy of a name per row.
        self.scheduler.push(sched.clone());
        {
            self.task.push(names[j.task as usize].clone());
            self.job.push(j.job as i64);
            self.release.push(j.release as i64);
            self.deadline.push(j.deadline as i64);
            self.start.push(j.start);
            self.finish.push(j.finish);
            self.response.push(j.response());
            self.tardiness
                .push(if j.missed { j.tardiness(end) } else { 0 } as i64);
            self.demand.push(j.demand as i64);
            // Repetition level 0 starts a row's list, 1 continues it; an empty list (a job
            // that never ran) is one level-0 entry with definition level 0.
            let before = self.cpus.len();
            for c in j.cpus.iter() {
                self.cpus_reps.push((self.cpus.len() > before) as i16);
                self.cpus.push(c as i32);
                self.cpus_defs.push(1);
            }
            if self.cpus.len() == before {
                self.cpus_defs.push(0);
                self.cpus_reps.push(0);
            }
            self.preemptions.push(j.preemptions as i64);
            self.migrations.push(j.migrations as i64);
            self.pulls.push(j.pulls.map(u64::from));
            self.context_switches.push(j.context_switches as i64);
            self.missed.push(j.missed);
            self.aborted.push(j.aborted);
            self.blocked.push(j.blocked as i64);
            self.aborted_at.push(j.aborted_at);
            self.utility.push(j.utility);
            self.max_utility.push(j.max_utility);
            self.exec.push(j.exec as i64);
            self.overhead.push(j.overhead as i64);
            self.stall.push(j.stall as i64);
            for l in 0..3 {
                self.misses[l].push(j.misses[l] as i64);
            }
            self.hw[0].push(j.hw.map(|h| h.instructions));
            self.hw[1].push(j.hw.map(|h| h.cycles));
            self.hw[2].push(j.hw.map(|h| h.llc_misses));
        }
    }

    /// The columns in schema order (the row group hands them out in that order).
    fn write<W: Write + Send>(&self, rg: &mut SerializedRowGroupWriter<'_, W>) -> PqResult<()> {
        let mut next =
            |f: &mut dyn FnMut(&mut ColumnWriter<'_>) -> PqResult<usize>| -> PqResult<()> {
                let mut c = rg.next_column()?.expect("the schema has this column");
                f(c.untyped())?;
                c.close()
            };
        fn strings(cw: &mut ColumnWriter<'_>, v: &[ByteArray]) -> PqResult<usize> {
            match cw {
                ColumnWriter::ByteArrayColumnWriter(w) => w.write_batch(v, None, None),
                _ => unreachable!("a string column"),
            }
        }
        fn ints(cw: &mut ColumnWriter<'_>, v: &[i64], defs: Option<&[i16]>) -> PqResult<usize> {
            match cw {
                ColumnWriter::Int64ColumnWriter(w) => w.write_batch(v, defs, None),
                _ => unreachable!("an INT64 column"),
            }
        }
        fn bools(cw: &mut ColumnWriter<'_>, v: &[bool]) -> PqResult<usize> {
            match cw {
                ColumnWriter::BoolColumnWriter(w) => w.write_batch(v, None, None),
                _ => unreachable!("a BOOLEAN column"),
            }
        }
        fn doubles(cw: &mut ColumnWriter<'_>, v: &[f64]) -> PqResult<usize> {
            match cw {
                ColumnWriter::DoubleColumnWriter(w) => w.write_batch(v, None, None),
                _ => unreachable!("a DOUBLE column"),
            }
        }
        fn opt(cw: &mut ColumnWriter<'_>, n: &Nullable) -> PqResult<usize> {
            ints(cw, &n.values, Some(&n.defs))
        }
        next(&mut |cw| strings(cw, &self.scheduler))?;
        next(&mut |cw| strings(cw, &self.task))?;
        next(&mut |cw| ints(cw, &self.job, None))?;
        next(&mut |cw| ints(cw, &self.release, None))?;
        next(&mut |cw| ints(cw, &self.deadline, None))?;
        next(&mut |cw| opt(cw, &self.start))?;
        next(&mut |cw| opt(cw, &self.finish))?;
        next(&mut |cw| opt(cw, &self.response))?;
        next(&mut |cw| ints(cw, &self.tardiness, None))?;
        next(&mut |cw| ints(cw, &self.demand, None))?;
        next(&mut |cw| match cw {
            ColumnWriter::Int32ColumnWriter(w) => {
                w.write_batch(&self.cpus, Some(&self.cpus_defs), Some(&self.cpus_reps))
            }
            _ => unreachable!("an INT32 list"),
        })?;
        next(&mut |cw| ints(cw, &self.preemptions, None))?;
        next(&mut |cw| ints(cw, &self.migrations, None))?;
        next(&mut |cw| opt(cw, &self.pulls))?;
        next(&mut |cw| ints(cw, &self.context_switches, None))?;
        next(&mut |cw| bools(cw, &self.missed))?;
        next(&mut |cw| bools(cw, &self.aborted))?;
        next(&mut |cw| ints(cw, &self.blocked, None))?;
        next(&mut |cw| opt(cw, &self.aborted_at))?;
        next(&mut |cw| doubles(cw, &self.utility))?;
        next(&mut |cw| doubles(cw, &self.max_utility))?;
        next(&mut |cw| ints(cw, &self.exec, None))?;
        next(&mut |cw| ints(cw, &self.overhead, None))?;
        next(&mut |cw| ints(cw, &self.stall, None))?;
        for l in 0..3 {
            next(&mut |cw| ints(cw, &self.misses[l], None))?;
        }
        for l in 0..3 {
            next(&mut |cw| opt(cw, &self.hw[l]))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{write_jobs_csv, CpuSet, HwCounters};
    use crate::task::{Task, TaskSet};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    /// Jobs that exercise every column: nulls, CPUs past 64, no CPUs, aborts, hardware counters.
    fn run(scheduler: &str, n: usize) -> RunResult {
        let ts = TaskSet::new(
            2,
            vec![Task::periodic("a", 10, 1), Task::periodic("b,x", 7, 2)],
        );
        let mut r = RunResult::new("sim", scheduler, &ts);
        r.end = 10 * n as Time + 50;
        r.jobs = (0..n)
            .map(|i| {
                let t = (i % 2) as u32;
                let release = 10 * i as Time;
                let mut cpus = CpuSet::default();
                for c in 0..(i % 4) as u32 {
                    cpus.insert(c * 31);
                }
                let finished = i % 5 != 3;
                let aborted = i % 7 == 6;
                JobRecord {
                    task: t,
                    job: i as u64 / 2,
                    release,
                    deadline: release + 10,
                    demand: 3 + (i % 3) as Time,
                    start: (i % 11 != 10).then_some(release + 1),
                    finish: finished.then_some(release + 4 + (i % 13) as Time),
                    cpus,
                    preemptions: (i % 3) as u32,
                    migrations: (i % 2) as u32,
                    pulls: (i % 8 != 5).then_some((i % 3) as u32),
                    context_switches: (i % 4) as u32,
                    blocked: (i % 6) as Time,
                    missed: !finished || i % 13 > 6 || aborted,
                    aborted,
                    aborted_at: aborted.then_some(release + 10),
                    utility: (i % 3) as f64 * 0.25,
                    max_utility: 1.0,
                    exec: 5,
                    overhead: 1,
                    stall: (i % 2) as Time,
                    misses: [i as u64, 2, 3],
                    hw: (i % 9 == 0).then_some(HwCounters {
                        instructions: i as u64 * 1000,
                        cycles: 7,
                        llc_misses: 1,
                    }),
                }
            })
            .collect();
        r
    }

    /// A Parquet value in the CSV's spelling.
    fn cell(f: &Field) -> String {
        match f {
            Field::Null => String::new(),
            Field::Bool(b) => (*b as u8).to_string(),
            Field::Int(v) => v.to_string(),
            Field::Long(v) => v.to_string(),
            Field::Double(v) => format!("{v:?}"),
            Field::Str(s) if s.contains(',') => format!("\"{s}\""),
            Field::Str(s) => s.clone(),
            Field::ListInternal(l) => l.elements().iter().map(cell).collect::<Vec<_>>().join(";"),
            o => panic!("unexpected field {o:?}"),
        }
    }

    #[test]
    fn round_trips_to_the_csv_rows() {
        // More than one row group in the first run, a short second run, an empty third.
        let (a, b, c) = (
            run("gedf", ROW_GROUP_JOBS + 37),
            run("pedf:ffd", 300),
            run("gfp", 0),
        );
        let runs = [&a, &b, &c];
        let path =
            std::env::temp_dir().join(format!("rtsched-jobs-{}.parquet", std::process::id()));
        write_jobs_parquet(&runs, std::fs::File::create(&path).unwrap()).unwrap();
        let mut csv = Vec::new();
        write_jobs_csv(&runs, &mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let mut lines = csv.lines();
        let header = lines.next().unwrap();

        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.num_row_groups(), 3);
        let names: Vec<String> = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        assert_eq!(names.join(","), header);
        let kv = meta.file_metadata().key_value_metadata().unwrap();
        let runs_kv: serde_json::Value = serde_json::from_str(
            kv.iter()
                .find(|k| k.key == "rtsched.runs")
                .unwrap()
                .value
                .as_deref()
                .unwrap(),
        )
        .unwrap();
        let groups: Vec<_> = runs_kv
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["scheduler"].as_str().unwrap().to_string(),
                    r["row_groups"].clone(),
                )
            })
            .collect();
        assert_eq!(
            groups,
            [
                ("gedf".into(), serde_json::json!([0, 2])),
                ("pedf:ffd".into(), serde_json::json!([2, 3])),
                ("gfp".into(), serde_json::json!([3, 3]))
            ]
        );

        let mut n = 0;
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
            let got: Vec<String> = row.get_column_iter().map(|(_, f)| cell(f)).collect();
            assert_eq!(got.join(","), lines.next().unwrap(), "row {n}");
            n += 1;
        }
        assert_eq!(lines.next(), None);
        assert_eq!(n, ROW_GROUP_JOBS + 37 + 300);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_threaded_writer_writes_the_same_bytes() {
        let (a, b) = (run("gedf", 3 * ROW_GROUP_JOBS + 5), run("pedf", 10));
        let mut inline = Vec::new();
        write_jobs_parquet(&[&a, &b], &mut inline).unwrap();
        let mut w = JobsParquetWriter::threaded(Vec::new()).unwrap();
        for r in [&a, &b] {
            w.begin_run(&r.scheduler, &r.task_names);
            for j in &r.jobs {
                w.job(j, r.end);
            }
            w.end_run(r).unwrap();
        }
        assert!(w.close().unwrap() == inline);
        // Dropped unclosed, it stops its thread and gives the file up.
        let mut w = JobsParquetWriter::threaded(Vec::new()).unwrap();
        w.begin_run("gedf", &a.task_names);
        for j in &a.jobs {
            w.job(j, a.end);
        }
        drop(w);
    }

    #[test]
    fn same_runs_give_the_same_bytes() {
        let a = run("gedf", 1000);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        write_jobs_parquet(&[&a], &mut x).unwrap();
        write_jobs_parquet(&[&a], &mut y).unwrap();
        assert!(x == y && x.len() > 100);
    }
}
