//! Per-job records as a zstd-compressed Parquet file: the columns of the jobs CSV (the column
//! catalogue's per-job columns, [`job_columns`]), typed, written in row groups of
//! [`ROW_GROUP_JOBS`] jobs straight from the run's records — each row group is encoded column by
//! column from a small scratch buffer, so no second copy of the jobs is ever built.
//!
//! Column types (docs/outputs.md "Per-job records"), from each column's [`Kind`]: text (`scheduler`
//! and `task`) is UTF-8 (dictionary-encoded, so a task name costs a few bits per row); integers
//! (times and counts) are signed INT64 (ns fit: 2^63 ns is 292 years), optional where the
//! column is nullable (null where the CSV cell is empty); `cpus` is a list of INT32 (the CSV's
//! `0;3`); flags are BOOLEAN (the CSV's 1/0); floats DOUBLE. Rows are in the CSV's order: run by
//! run, each run's jobs in release order. A run's rows never share a row group with another run's, and the key-value metadata
//! `rtsched.runs` (JSON) names each run's row groups, so one run reads back alone.

use crate::results::columns::{Kind, Store, Value};
use crate::results::{job_columns, Cell, Column, JobRecord, JobSink, RunResult, SCHEMA};
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

/// The file's message type: the per-job columns in the CSV's order.
fn schema_text() -> String {
    let mut t = String::from("message rtsched_jobs {\n");
    for c in job_columns() {
        let rep = if c.nullable { "optional" } else { "required" };
        let n = c.name;
        t += &match c.kind {
            Kind::Text => format!("  {rep} binary {n} (STRING);\n"),
            Kind::Int => format!("  {rep} int64 {n};\n"),
            Kind::Float => format!("  {rep} double {n};\n"),
            Kind::Bool => format!("  {rep} boolean {n};\n"),
            Kind::Cpus => format!(
                "  {rep} group {n} (LIST) {{ repeated group list {{ required int32 element; }} }}\n"
            ),
            Kind::Object => unreachable!("{n}: a job's column is never an object"),
        };
    }
    t + "}"
}

/// Integer columns take delta encoding ([`Store::Delta`]) instead of a dictionary where the
/// catalogue says so: times that grow with the row and nearly all differ (a dictionary only
/// costs hashing while deltas take a few bits), and columns usually constant (zeros without
/// overheads, a cache model or hardware counters), which deltas store in no bits without
/// hashing. The rest — `response_ns`, `demand_ns`, `exec_ns` (few distinct values per task), the
/// counts and `cpus` — keep the dictionary, which measured smaller for them (docs/outputs.md
/// "Cost").
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
    for c in job_columns() {
        // Min / max of the names would cost a string comparison a row, and filter nothing.
        if c.kind == Kind::Text {
            b = b.set_column_statistics_enabled(ColumnPath::from(c.name), EnabledStatistics::None);
        }
        if c.kind == Kind::Int && c.store == Store::Delta {
            let p = ColumnPath::from(c.name);
            b = b
                .set_column_dictionary_enabled(p.clone(), false)
                .set_column_encoding(p, Encoding::DELTA_BINARY_PACKED);
        }
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
        parquet::schema::parser::parse_message_type(&schema_text())
            .expect("the schema text parses"),
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

/// One column's values in a row group, by its [`Kind`]; for a nullable column also a
/// definition level per row (1 present, 0 null) and only the present values.
enum Buf {
    Text(Vec<ByteArray>),
    Int {
        values: Vec<i64>,
        defs: Option<Vec<i16>>,
    },
    Float(Vec<f64>),
    Bool(Vec<bool>),
    /// Repetition level 0 starts a row's list, 1 continues it; an empty list (a job that
    /// never ran) is one level-0 entry with definition level 0.
    Cpus {
        values: Vec<i32>,
        defs: Vec<i16>,
        reps: Vec<i16>,
    },
}

impl Buf {
    fn of(c: &Column) -> Buf {
        match c.kind {
            Kind::Text => Buf::Text(Vec::new()),
            Kind::Int => Buf::Int {
                values: Vec::new(),
                defs: c.nullable.then(Vec::new),
            },
            Kind::Float => Buf::Float(Vec::new()),
            Kind::Bool => Buf::Bool(Vec::new()),
            Kind::Cpus => Buf::Cpus {
                values: Vec::new(),
                defs: Vec::new(),
                reps: Vec::new(),
            },
            Kind::Object => unreachable!("{}: a job's column is never an object", c.name),
        }
    }

    fn clear(&mut self) {
        match self {
            Buf::Text(v) => v.clear(),
            Buf::Int { values, defs } => {
                values.clear();
                if let Some(d) = defs {
                    d.clear();
                }
            }
            Buf::Float(v) => v.clear(),
            Buf::Bool(v) => v.clear(),
            Buf::Cpus { values, defs, reps } => {
                values.clear();
                defs.clear();
                reps.clear();
            }
        }
    }

    #[inline]
    fn push(&mut self, cell: Cell<'_>) {
        match (self, cell) {
            (Buf::Int { values, defs }, cell) => {
                let v = match cell {
                    Cell::Uint(v) => Some(v as i64),
                    Cell::Int(v) => Some(v),
                    _ => None,
                };
                if let Some(v) = v {
                    values.push(v);
                }
                if let Some(d) = defs {
                    d.push(v.is_some() as i16);
                }
            }
            (Buf::Float(v), Cell::Float(x)) => v.push(x),
            (Buf::Bool(v), Cell::Bool(x)) => v.push(x),
            (Buf::Cpus { values, defs, reps }, Cell::Cpus(set)) => {
                let before = values.len();
                for c in set.iter() {
                    reps.push((values.len() > before) as i16);
                    values.push(c as i32);
                    defs.push(1);
                }
                if values.len() == before {
                    defs.push(0);
                    reps.push(0);
                }
            }
            (_, cell) => unreachable!("a cell {cell:?} of another kind than its column's"),
        }
    }

    /// Write the column's values through `cw` (its column in the row group).
    fn write(&self, cw: &mut ColumnWriter<'_>) -> PqResult<usize> {
        match (self, cw) {
            (Buf::Text(v), ColumnWriter::ByteArrayColumnWriter(w)) => w.write_batch(v, None, None),
            (Buf::Int { values, defs }, ColumnWriter::Int64ColumnWriter(w)) => {
                w.write_batch(values, defs.as_deref(), None)
            }
            (Buf::Float(v), ColumnWriter::DoubleColumnWriter(w)) => w.write_batch(v, None, None),
            (Buf::Bool(v), ColumnWriter::BoolColumnWriter(w)) => w.write_batch(v, None, None),
            (Buf::Cpus { values, defs, reps }, ColumnWriter::Int32ColumnWriter(w)) => {
                w.write_batch(values, Some(defs), Some(reps))
            }
            _ => unreachable!("the schema's column is of the buffer's kind"),
        }
    }
}

/// One row group's columns ([`job_columns`], in order). Filled a record at a time (each
/// record read once: a pass per column would stream the whole run through the cache once per
/// column), then written column by column; reused from row group to row group.
struct Columns {
    bufs: Vec<Buf>,
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            bufs: job_columns().iter().map(|c| Buf::of(c)).collect(),
        }
    }
}

impl Columns {
    fn clear(&mut self) {
        self.bufs.iter_mut().for_each(Buf::clear);
    }

    #[inline]
    fn push(&mut self, j: &JobRecord, end: Time, sched: &ByteArray, names: &[ByteArray]) {
        for (c, b) in job_columns().iter().zip(&mut self.bufs) {
            match (c.value, b) {
                // Clones of a ByteArray share its bytes: no copy of a name per row.
                (Value::Scheduler, Buf::Text(v)) => v.push(sched.clone()),
                (Value::Task, Buf::Text(v)) => v.push(names[j.task as usize].clone()),
                (Value::Job(f), b) => b.push(f(j, end)),
                _ => unreachable!("{}: not a job's column", c.name),
            }
        }
    }

    /// The columns in schema order (the row group hands them out in that order).
    fn write<W: Write + Send>(&self, rg: &mut SerializedRowGroupWriter<'_, W>) -> PqResult<()> {
        for b in &self.bufs {
            let mut c = rg.next_column()?.expect("the schema has this column");
            b.write(c.untyped())?;
            c.close()?;
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
                    blocked_inheritance: (i % 5) as Time,
                    blocked_ceiling: (i % 4) as Time,
                    spin: (i % 3) as Time,
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
