//! The results' written forms: the JSON results file (streamed), the per-job CSV (held or
//! streamed) and the Perfetto trace.

use super::columns::{self, Cell, DocKey, Shape, Value, DOC};
use super::schema::{JobRecord, JobSink, RunResult, Summary, SCHEMA};
use crate::time::Time;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::Serialize;
use std::io::{self, Write};

fn doc(x: impl Serialize) -> serde_json::Value {
    serde_json::to_value(x).expect("a document serialises")
}

impl RunResult {
    /// The results document: run header, summaries, counters and (optionally) per-job records,
    /// each object's keys those the column catalogue places in it (`columns::DOC`).
    pub fn to_json_value(&self, with_jobs: bool) -> serde_json::Value {
        let s = self.summaries();
        let mut v = serde_json::json!({
            "schema": self.schema,
            "substrate": self.substrate,
            "scheduler": self.scheduler,
            "taskset": self.taskset,
            "cpus": self.cpus,
            "duration_ns": self.duration,
            "seed": self.seed,
            "end_ns": self.end,
        });
        v["counters"] = doc(&Object {
            keys: &DOC.counters,
            cell: &|c| self.cell(c, None),
        });
        v["total"] = doc(&Object {
            keys: &DOC.total,
            cell: &|c| self.cell(c, Some(&s.total)),
        });
        v["tasks"] = s
            .tasks
            .iter()
            .map(|t| {
                doc(&Named {
                    name: &t.name,
                    object: Object {
                        keys: &DOC.task,
                        cell: &|c| self.cell(c, Some(&t.summary)),
                    },
                })
            })
            .collect();
        if !self.measurements.is_empty() {
            v["measurements"] =
                serde_json::to_value(&self.measurements).expect("numbers serialise");
        }
        if !self.unavailable.is_empty() {
            v["unavailable"] = serde_json::to_value(&self.unavailable).expect("strings serialise");
        }
        if !self.chain_defs.is_empty() {
            v["chains"] = super::chains::summaries_json(self);
        }
        if with_jobs {
            v["jobs"] = self
                .jobs
                .iter()
                .map(|j| {
                    serde_json::to_value(JobJson { run: self, job: j }).expect("a job serialises")
                })
                .collect();
        }
        v
    }

    /// Column `c`'s value in this run, from `summary` (a summary's column) or the run (a
    /// counter); null where the run could not measure it.
    fn cell(&self, c: &columns::Column, summary: Option<&Summary>) -> Cell<'_> {
        let v = match (c.value, summary) {
            (Value::Summary(f), Some(s)) => f(s),
            (Value::Run(f), _) => f(self),
            _ => unreachable!("{}: not a summary's or the run's column", c.name),
        };
        if self.unmeasured.contains(&c.name) {
            Cell::Null
        } else {
            v
        }
    }
}

/// A document object: `keys`, each holding its columns' cells (one, a list, or an object that
/// is null when every member is).
struct Object<'a, 'c> {
    keys: &'a [DocKey],
    cell: &'a dyn Fn(&columns::Column) -> Cell<'c>,
}

impl Serialize for Object<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.keys.len()))?;
        for k in self.keys {
            m.serialize_key(k.key)?;
            serialize_key(k, self.cell, &mut m)?;
        }
        m.end()
    }
}

/// The value of key `k` into map `m`, each column's cell from `cell`.
fn serialize_key<'c, M: SerializeMap>(
    k: &DocKey,
    cell: &dyn Fn(&columns::Column) -> Cell<'c>,
    m: &mut M,
) -> Result<(), M::Error> {
    match k.shape {
        Shape::One => m.serialize_value(&cell(k.cols[0])),
        Shape::List => m.serialize_value(&List(k, cell)),
        Shape::Object => m.serialize_value(&Members(k, cell)),
    }
}

struct List<'a, 'c>(&'a DocKey, &'a dyn Fn(&columns::Column) -> Cell<'c>);

impl Serialize for List<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut q = s.serialize_seq(Some(self.0.cols.len()))?;
        for c in &self.0.cols {
            q.serialize_element(&(self.1)(c))?;
        }
        q.end()
    }
}

struct Members<'a, 'c>(&'a DocKey, &'a dyn Fn(&columns::Column) -> Cell<'c>);

impl Serialize for Members<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let cols = &self.0.cols;
        if cols.iter().all(|c| (self.1)(c) == Cell::Null) {
            return s.serialize_none();
        }
        let mut m = s.serialize_map(Some(cols.len()))?;
        for c in cols {
            let columns::Doc::Member(_, name) = c.doc else {
                unreachable!("an object's columns are its members")
            };
            m.serialize_entry(name, &(self.1)(c))?;
        }
        m.end()
    }
}

/// A task's summary: its name, then the summary's keys.
struct Named<'a, 'c> {
    name: &'a str,
    object: Object<'a, 'c>,
}

impl Serialize for Named<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.object.keys.len() + 1))?;
        m.serialize_entry("name", self.name)?;
        for k in self.object.keys {
            m.serialize_key(k.key)?;
            serialize_key(k, self.object.cell, &mut m)?;
        }
        m.end()
    }
}

/// One per-job record as the results document spells it (the task by name, times in ns).
struct JobJson<'a> {
    run: &'a RunResult,
    job: &'a JobRecord,
}

impl Serialize for JobJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (r, j) = (self.run, self.job);
        Object {
            keys: &DOC.job,
            cell: &|c| match c.value {
                Value::Task => Cell::Text(&r.task_names[j.task as usize]),
                Value::Job(f) => f(j, r.end),
                _ => unreachable!("{}: not a job's column", c.name),
            },
        }
        .serialize(s)
    }
}

/// A scheduler of a comparison that could not run (`rtsched simulate -s A B`, `run`,
/// `compare`): the results file lists it under `not_run` with the status a sweep's row would
/// have (`partition-failed`, `deadlock`, `not-applicable`, `too-long`, `run-failed`) and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NotRun {
    pub scheduler: String,
    pub substrate: String,
    pub status: String,
    pub error: String,
}

/// The results file: `{"schema", "runs": [document, ...]}`, pretty-printed, and, when some
/// scheduler could not run, `"not_run": [{scheduler, substrate, status, error}, ...]` after
/// the runs. With `with_jobs`, each document ends with its per-job records, streamed one record
/// per line as they are serialised: neither the document nor the records are ever held as one
/// JSON value, so a run of millions of jobs writes in constant memory.
pub fn write_results_json(
    runs: &[&RunResult],
    not_run: &[NotRun],
    with_jobs: bool,
    w: &mut dyn Write,
) -> io::Result<()> {
    held_jobs(runs, with_jobs)?;
    write!(w, "{{\n  \"schema\": {},\n  \"runs\": [", json_str(SCHEMA))?;
    for (i, r) in runs.iter().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        // The header (summaries, counters) is small: printed as a whole, indented to its depth.
        let head = serde_json::to_string_pretty(&r.to_json_value(false))?.replace('\n', "\n    ");
        if !with_jobs {
            w.write_all(head.as_bytes())?;
            continue;
        }
        let open = head
            .strip_suffix('}')
            .expect("a document is an object")
            .trim_end();
        write!(w, "{open},\n      \"jobs\": [")?;
        // serde_json writes a record in dozens of small pieces: a buffer of a concrete type
        // takes them inline instead of through `dyn Write` calls.
        let mut bw = io::BufWriter::with_capacity(1 << 16, &mut *w);
        for (k, j) in r.jobs.iter().enumerate() {
            bw.write_all(if k == 0 {
                b"\n        "
            } else {
                b",\n        "
            })?;
            serde_json::to_writer(&mut bw, &JobJson { run: r, job: j })?;
        }
        bw.flush()?;
        drop(bw);
        w.write_all(if r.jobs.is_empty() {
            b"]\n    }"
        } else {
            b"\n      ]\n    }"
        })?;
    }
    w.write_all(if runs.is_empty() { b"]" } else { b"\n  ]" })?;
    if !not_run.is_empty() {
        let list = serde_json::to_string_pretty(not_run)?.replace('\n', "\n  ");
        write!(w, ",\n  \"not_run\": {list}")?;
    }
    w.write_all(b"\n}\n")
}

pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write_jobs_csv(runs: &[&RunResult], w: &mut (impl Write + ?Sized)) -> io::Result<()> {
    held_jobs(runs, true)?;
    writeln!(w, "{}", columns::jobs_csv_header())?;
    let mut line = Vec::new();
    for r in runs {
        let sched = csv_field(&r.scheduler);
        let names: Vec<String> = r.task_names.iter().map(|t| csv_field(t)).collect();
        for j in &r.jobs {
            jobs_csv_row(&mut line, &sched, &names, j, r.end);
            w.write_all(&line)?;
        }
    }
    Ok(())
}

/// One record as a line of the CSV's columns ([`columns::job_columns`]), into `line` (emptied
/// first): `sched` and the task `names` already quoted as CSV needs; `end` is the run's end,
/// for the tardiness of a job missed and unfinished. Integers as decimals, floats as Rust's
/// `{:?}` (always with a decimal point), flags as `1`/`0`, CPUs joined by `;`, null empty.
fn jobs_csv_row(line: &mut Vec<u8>, sched: &str, names: &[String], j: &JobRecord, end: Time) {
    line.clear();
    for (i, c) in columns::job_columns().iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        let cell = match c.value {
            Value::Scheduler => Cell::Text(sched),
            Value::Task => Cell::Text(names.get(j.task as usize).map_or("", String::as_str)),
            Value::Job(f) => f(j, end),
            _ => unreachable!("{}: not a job's column", c.name),
        };
        // (Writes into a Vec cannot fail.)
        let _ = match cell {
            Cell::Null => Ok(()),
            Cell::Uint(v) => write!(line, "{v}"),
            Cell::Int(v) => write!(line, "{v}"),
            Cell::Float(v) => write!(line, "{v:?}"),
            Cell::Bool(v) => write!(line, "{}", v as u8),
            Cell::Text(v) => write!(line, "{v}"),
            Cell::Cpus(set) => {
                for (k, cpu) in set.iter().enumerate() {
                    let _ = write!(line, "{}{cpu}", if k > 0 { ";" } else { "" });
                }
                Ok(())
            }
            Cell::Object(v) => write!(line, "{v}"),
        };
    }
    line.push(b'\n');
}

/// The per-job CSV written while runs go ([`JobSink`]): each record becomes its line as its
/// job is decided, so a run of millions of jobs writes `--jobs-csv` without holding them
/// (held, 10 million records took 2.4 GB before the first line was written). The lines are
/// those [`write_jobs_csv`] writes for the held records, in the same order.
pub struct JobsCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    sched: String,
    tasks: Vec<String>,
    line: Vec<u8>,
    error: Option<io::Error>,
}

impl<W: Write> JobsCsvWriter<W> {
    pub fn new(w: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, w);
        writeln!(out, "{}", columns::jobs_csv_header())?;
        Ok(JobsCsvWriter {
            out,
            sched: String::new(),
            tasks: Vec::new(),
            line: Vec::new(),
            error: None,
        })
    }
    /// The records that follow are run `scheduler`'s, over tasks `task_names`.
    pub fn begin_run(&mut self, scheduler: &str, task_names: &[String]) {
        self.sched = csv_field(scheduler);
        self.tasks = task_names.iter().map(|t| csv_field(t)).collect();
    }
    /// The first write error, if any (the records after it were dropped).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }
    /// Flush; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write> JobSink for JobsCsvWriter<W> {
    fn job(&mut self, rec: &JobRecord, end: Time) {
        if self.error.is_none() {
            jobs_csv_row(&mut self.line, &self.sched, &self.tasks, rec, end);
            if let Err(e) = self.out.write_all(&self.line) {
                self.error = Some(e);
            }
        }
    }
}

/// ns as a decimal number of microseconds, exactly ("12.345"), as the trace format wants.
fn us(ns: Time) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("string serialises")
}

/// A Chrome / Perfetto trace (JSON trace-event format): one process per run, one track per
/// CPU, one complete ("X") slice per execution interval, an instant event per missed deadline,
/// and flow arrows along each chain record's path ([`chain_flows`]). Opens in ui.perfetto.dev
/// and chrome://tracing.
pub fn write_trace(runs: &[&RunResult], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
    // Flow ids are the trace's, across its runs (Perfetto keys a flow by id, cat and name).
    let mut flow_id = 0u64;
    let mut sep = |w: &mut dyn Write| -> io::Result<()> {
        if !first {
            writeln!(w, ",")?;
        }
        first = false;
        Ok(())
    };
    for (pid, r) in runs.iter().enumerate() {
        sep(w)?;
        write!(
            w,
            "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_str(&format!("{} ({})", r.scheduler, r.substrate))
        )?;
        for cpu in 0..r.cpus {
            sep(w)?;
            write!(w, "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{cpu},\"name\":\"thread_name\",\"args\":{{\"name\":\"CPU {cpu}\"}}}}")?;
        }
        sep(w)?;
        write!(w, "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"deadline misses\"}}}}", r.cpus)?;
        for iv in &r.intervals {
            sep(w)?;
            let name = &r.task_names[iv.task as usize];
            let node = r
                .node_names
                .get(iv.task as usize)
                .and_then(|n| n.get(iv.thread as usize));
            let label = if let Some(node) = node {
                // A DAG task's interval: its node by name.
                format!("{name}/{}.{node}", iv.job)
            } else if iv.thread == 0 {
                format!("{name}/{}", iv.job)
            } else {
                format!("{name}/{}.{}", iv.job, iv.thread)
            };
            write!(
                w,
                "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":{}}}",
                iv.cpu,
                us(iv.start),
                us(iv.end - iv.start),
                json_str(&label),
                json_str(name)
            )?;
            if iv.overhead > 0 {
                sep(w)?;
                write!(
                    w,
                    "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"overhead\",\"cat\":\"overhead\"}}",
                    iv.cpu,
                    us(iv.start),
                    us(iv.overhead.min(iv.end - iv.start))
                )?;
            }
        }
        for j in r.jobs.iter().filter(|j| j.missed) {
            sep(w)?;
            write!(
                w,
                "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"name\":{}}}",
                r.cpus,
                us(j.deadline),
                json_str(&format!("miss {}/{}", r.task_names[j.task as usize], j.job))
            )?;
        }
        for (name, from, to) in chain_flows(r) {
            for (ph, (cpu, ts)) in [("s", from), ("f", to)] {
                sep(w)?;
                write!(
                    w,
                    "{{\"ph\":\"{ph}\",\"bp\":\"e\",\"id\":{flow_id},\"pid\":{pid},\"tid\":{cpu},\"ts\":{},\"name\":{},\"cat\":\"chain\"}}",
                    us(ts),
                    json_str(name),
                )?;
            }
            flow_id += 1;
        }
    }
    writeln!(w, "\n]}}")?;
    Ok(())
}

/// Where a flow arrow starts or ends: (CPU, ts).
pub type FlowPoint = (u32, Time);

/// The flow arrows of run `r`'s chain records (docs/chains.md "In a trace"): for each record
/// with a path (`RunResult::chain_paths`, kept with the intervals) and each consecutive pair of
/// jobs on it, (chain name, (CPU, ts) in the earlier job's last slice, (CPU, ts) in the later
/// job's first slice): an event chain instance's jobs, each released by the one before; a
/// data-flow output's data path, each job having read the one before's publication. Each point
/// is inside its slice (past the overhead drawn nested in it), so the arrow binds to that slice
/// (Perfetto binds a flow's start, and its end with `"bp":"e"`, to the slice enclosing it).
/// Jobs that ran no interval (none recorded) are skipped.
pub fn chain_flows(r: &RunResult) -> Vec<(&str, FlowPoint, FlowPoint)> {
    const NO_JOB: u64 = u64::MAX;
    // Per (task, job): its first and last interval.
    let mut ends: std::collections::HashMap<(u32, u64), (usize, usize)> = Default::default();
    for (k, iv) in r.intervals.iter().enumerate() {
        let e = ends.entry((iv.task, iv.job)).or_insert((k, k));
        if iv.start < r.intervals[e.0].start {
            e.0 = k;
        }
        if iv.end >= r.intervals[e.1].end {
            e.1 = k;
        }
    }
    let inside = |k: usize| {
        let iv = &r.intervals[k];
        let ov = iv.overhead.min(iv.end - iv.start);
        (iv.cpu, iv.start + ov + (iv.end - iv.start - ov) / 2)
    };
    let mut out = Vec::new();
    let mut at = 0;
    for rec in &r.chains {
        let ch = &r.chain_defs[rec.chain as usize];
        let n = ch.tasks.len();
        let Some(path) = r.chain_paths.get(at..at + n) else {
            break;
        };
        at += n;
        for i in 1..n {
            let (a, b) = ((ch.tasks[i - 1], path[i - 1]), (ch.tasks[i], path[i]));
            if a.1 == NO_JOB || b.1 == NO_JOB {
                continue;
            }
            if let (Some(x), Some(y)) = (ends.get(&a), ends.get(&b)) {
                out.push((ch.name.as_str(), inside(x.1), inside(y.0)));
            }
        }
    }
    out
}

/// An error unless every run holds its per-job records (when they are to be written): a run
/// that streamed them away has none, and writing none would read as "no jobs".
pub(crate) fn held_jobs(runs: &[&RunResult], needed: bool) -> io::Result<()> {
    match runs.iter().find(|r| needed && r.streamed.is_some()) {
        Some(r) => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("run {} did not keep its per-job records (they were streamed away as its jobs ended)", r.scheduler))),
        None => Ok(()),
    }
}

/// The chain instances of `runs` as CSV, the catalogue's chain columns (an empty cell where a
/// metric does not apply), written to `w`; an error if a run streamed its chain records away.
/// The lines are those a [`ChainsCsvWriter`] fed the same records writes as the runs go.
pub fn write_chains_csv(runs: &[&RunResult], w: &mut dyn std::io::Write) -> std::io::Result<()> {
    if let Some(r) = runs.iter().find(|r| r.chain_summaries.is_some()) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("run {} did not keep its chain records (they were streamed into its chains' summaries as they were made)", r.scheduler)));
    }
    let mut out = ChainsCsvWriter::new(w)?;
    for run in runs {
        out.begin_run(&run.scheduler, &run.chain_defs);
        for r in &run.chains {
            out.chain(r);
        }
    }
    out.finish().map(|_| ())
}

/// `--chains-csv` written as the runs go: a [`JobSink`] that takes a run's chain records
/// ([`JobSink::takes_chains`]) and writes each as a CSV line as it is made, so a long run
/// holds none (docs/chains.md "Long runs"). Its lines are [`write_chains_csv`]'s for the held
/// records, in the same order; job records pass by.
pub struct ChainsCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    cols: Vec<&'static columns::Column>,
    sched: String,
    chains: Vec<String>,
    line: String,
    error: Option<io::Error>,
}

impl<W: Write> ChainsCsvWriter<W> {
    /// The header now; each run's lines after its [`ChainsCsvWriter::begin_run`].
    pub fn new(w: W) -> io::Result<Self> {
        let cols: Vec<&'static columns::Column> = super::chains::chain_columns().collect();
        let mut out = io::BufWriter::with_capacity(1 << 16, w);
        let header: Vec<&str> = cols.iter().map(|c| c.name).collect();
        writeln!(out, "{}", header.join(","))?;
        Ok(ChainsCsvWriter {
            out,
            cols,
            sched: String::new(),
            chains: Vec::new(),
            line: String::new(),
            error: None,
        })
    }
    /// The records that follow are run `scheduler`'s, of the chains `defs` (the set's).
    pub fn begin_run(&mut self, scheduler: &str, defs: &[crate::task::Chain]) {
        self.sched = csv_field(scheduler);
        self.chains = defs.iter().map(|c| csv_field(&c.name)).collect();
    }
    /// The first write error, if any (the records after it were dropped).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }
    /// Flush; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write> JobSink for ChainsCsvWriter<W> {
    fn job(&mut self, _rec: &JobRecord, _end: Time) {}
    fn takes_chains(&self) -> bool {
        true
    }
    fn chain(&mut self, r: &super::schema::ChainRecord) {
        if self.error.is_some() {
            return;
        }
        self.line.clear();
        for (i, c) in self.cols.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            let cell = match c.value {
                Value::Scheduler => Cell::Text(&self.sched),
                Value::ChainName => Cell::Text(&self.chains[r.chain as usize]),
                Value::Chain(f) => f(r),
                _ => unreachable!("{}: not a chain column", c.name),
            };
            match cell {
                Cell::Null => {}
                Cell::Uint(v) => {
                    use std::fmt::Write as _;
                    let _ = write!(self.line, "{v}");
                }
                // Already a CSV field (begin_run).
                Cell::Text(t) => self.line.push_str(t),
                other => {
                    use std::fmt::Write as _;
                    let _ = write!(self.line, "{other:?}");
                }
            }
        }
        self.line.push('\n');
        if let Err(e) = self.out.write_all(self.line.as_bytes()) {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::columns::LEDGER_COUNTERS;
    use crate::results::stats::tests::job;
    use crate::task::{Task, TaskSet};

    /// The counters a driver lists as unmeasured are `null`, in their places; the rest stay.
    #[test]
    fn unmeasured_counters_are_null() {
        let ts = TaskSet::new(1, vec![Task::periodic("a", 10, 1)]);
        let measured = RunResult::new("sim", "gedf", &ts).to_json_value(false);
        let mut r = RunResult::new("kernel", "kernel:gedf", &ts);
        r.unmeasured = &LEDGER_COUNTERS;
        let v = r.to_json_value(false);
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v["counters"].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(keys(&v), keys(&measured));
        // A CBS's counters are null in both: no policy with a CBS ran.
        let cbs = |k: &str| {
            crate::results::columns::COLUMNS
                .iter()
                .any(|c| c.name == k && c.measured == crate::results::columns::Measured::Cbs)
        };
        for (k, x) in v["counters"].as_object().unwrap() {
            let unmeasured = LEDGER_COUNTERS.contains(&k.as_str());
            assert_eq!(x.is_null(), unmeasured || cbs(k), "{k}");
        }
    }

    #[test]
    fn streamed_json_is_the_documents() {
        let ts = TaskSet::new(
            1,
            vec![Task::periodic("a", 10, 1), Task::periodic("b", 10, 1)],
        );
        let mut r = RunResult::new("sim", "gedf", &ts);
        r.end = 100;
        r.jobs = vec![job(0, 0, 10, Some(5)), job(1, 0, 10, None)];
        r.jobs[0].cpus.insert(70);
        let empty = RunResult::new("sim", "pedf", &ts);
        let runs = [&r, &empty];
        let doc = |jobs: bool| serde_json::json!({"schema": SCHEMA, "runs": runs.iter().map(|r| r.to_json_value(jobs)).collect::<Vec<_>>()});
        let text = |jobs: bool| {
            let mut out = Vec::new();
            write_results_json(&runs, &[], jobs, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // Without jobs: exactly the pretty-printed document.
        assert_eq!(
            text(false),
            serde_json::to_string_pretty(&doc(false)).unwrap() + "\n"
        );
        let with: serde_json::Value = serde_json::from_str(&text(true)).unwrap();
        assert_eq!(with, doc(true));
        assert_eq!(
            with["runs"][0]["jobs"][1]["finish_ns"],
            serde_json::Value::Null
        );
        assert_eq!(with["runs"][1]["jobs"], serde_json::json!([]));
        let mut none = Vec::new();
        write_results_json(&[], &[], true, &mut none).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&none).unwrap(),
            serde_json::json!({"schema": SCHEMA, "runs": []})
        );
        // A scheduler that could not run is listed after the runs, with its status and why.
        let failed = NotRun {
            scheduler: "pedf:ffd".into(),
            substrate: "sim".into(),
            status: "partition-failed".into(),
            error: "t.yaml: task 'a' does not fit".into(),
        };
        let mut out = Vec::new();
        write_results_json(&runs, std::slice::from_ref(&failed), false, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["runs"], doc(false)["runs"]);
        assert_eq!(
            v["not_run"],
            serde_json::json!([{"scheduler": "pedf:ffd", "substrate": "sim", "status": "partition-failed", "error": "t.yaml: task 'a' does not fit"}])
        );
    }
}
