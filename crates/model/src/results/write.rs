//! The results' written forms: the JSON results file (streamed), the per-job CSV (held or
//! streamed) and the Perfetto trace.

use super::schema::{JobRecord, JobSink, RunResult, SCHEMA};
use crate::time::Time;
use serde::Serialize;
use std::io::{self, Write};

impl RunResult {
    /// The results document: run header, summaries, counters and (optionally) per-job records.
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
            "counters": self.counters,
            "total": s.total,
            "tasks": s.tasks,
        });
        for &k in self.unmeasured {
            v["counters"][k] = serde_json::Value::Null;
        }
        if !self.measurements.is_empty() {
            v["measurements"] =
                serde_json::to_value(&self.measurements).expect("numbers serialise");
        }
        if !self.unavailable.is_empty() {
            v["unavailable"] = serde_json::to_value(&self.unavailable).expect("strings serialise");
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
}

/// One per-job record as the results document spells it (the task by name, times in ns).
struct JobJson<'a> {
    run: &'a RunResult,
    job: &'a JobRecord,
}

impl Serialize for JobJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let j = self.job;
        let mut m = s.serialize_struct("Job", 23)?;
        m.serialize_field("task", &self.run.task_names[j.task as usize])?;
        m.serialize_field("job", &j.job)?;
        m.serialize_field("release_ns", &j.release)?;
        m.serialize_field("deadline_ns", &j.deadline)?;
        m.serialize_field("demand_ns", &j.demand)?;
        m.serialize_field("start_ns", &j.start)?;
        m.serialize_field("finish_ns", &j.finish)?;
        m.serialize_field("cpus", &j.cpus)?;
        m.serialize_field("preemptions", &j.preemptions)?;
        m.serialize_field("migrations", &j.migrations)?;
        m.serialize_field("pulls", &j.pulls)?;
        m.serialize_field("context_switches", &j.context_switches)?;
        m.serialize_field("blocked_ns", &j.blocked)?;
        m.serialize_field("missed", &j.missed)?;
        m.serialize_field("aborted", &j.aborted)?;
        m.serialize_field("aborted_at_ns", &j.aborted_at)?;
        m.serialize_field("utility", &j.utility)?;
        m.serialize_field("max_utility", &j.max_utility)?;
        m.serialize_field("exec_ns", &j.exec)?;
        m.serialize_field("overhead_ns", &j.overhead)?;
        m.serialize_field("stall_ns", &j.stall)?;
        m.serialize_field("misses", &j.misses)?;
        m.serialize_field("hw", &j.hw)?;
        m.end()
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

/// The CSV header for per-job records.
pub const JOBS_CSV_HEADER: &str = "scheduler,task,job,release_ns,deadline_ns,start_ns,finish_ns,response_ns,tardiness_ns,demand_ns,cpus,preemptions,migrations,pulls,context_switches,missed,aborted,blocked_ns,aborted_at_ns,utility,max_utility,exec_ns,overhead_ns,stall_ns,misses_l1,misses_l2,misses_llc,hw_instructions,hw_cycles,hw_llc_misses";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write_jobs_csv(runs: &[&RunResult], w: &mut (impl Write + ?Sized)) -> io::Result<()> {
    held_jobs(runs, true)?;
    writeln!(w, "{JOBS_CSV_HEADER}")?;
    for r in runs {
        let sched = csv_field(&r.scheduler);
        for j in &r.jobs {
            jobs_csv_row(
                w,
                &sched,
                &csv_field(&r.task_names[j.task as usize]),
                j,
                r.end,
            )?;
        }
    }
    Ok(())
}

/// One record as a line of [`JOBS_CSV_HEADER`]'s columns (`sched` and `task` already quoted as
/// CSV needs); `end` is the run's end, for the tardiness of a job missed and unfinished.
fn jobs_csv_row(
    w: &mut (impl Write + ?Sized),
    sched: &str,
    task: &str,
    j: &JobRecord,
    end: Time,
) -> io::Result<()> {
    let opt = |x: Option<Time>| x.map(|v| v.to_string()).unwrap_or_default();
    let cpus: Vec<String> = j.cpus.iter().map(|c| c.to_string()).collect();
    writeln!(
        w,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:?},{:?},{},{},{},{},{},{},{},{},{}",
        sched,
        task,
        j.job,
        j.release,
        j.deadline,
        opt(j.start),
        opt(j.finish),
        opt(j.response()),
        if j.missed { j.tardiness(end) } else { 0 },
        j.demand,
        cpus.join(";"),
        j.preemptions,
        j.migrations,
        opt(j.pulls.map(u64::from)),
        j.context_switches,
        j.missed as u8,
        j.aborted as u8,
        j.blocked,
        opt(j.aborted_at),
        j.utility,
        j.max_utility,
        j.exec,
        j.overhead,
        j.stall,
        j.misses[0],
        j.misses[1],
        j.misses[2],
        opt(j.hw.map(|h| h.instructions)),
        opt(j.hw.map(|h| h.cycles)),
        opt(j.hw.map(|h| h.llc_misses))
    )
}

/// The per-job CSV written while runs go ([`JobSink`]): each record becomes its line as its
/// job is decided, so a run of millions of jobs writes `--jobs-csv` without holding them
/// (held, 10 million records took 2.4 GB before the first line was written). The lines are
/// those [`write_jobs_csv`] writes for the held records, in the same order.
pub struct JobsCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    sched: String,
    tasks: Vec<String>,
    error: Option<io::Error>,
}

impl<W: Write> JobsCsvWriter<W> {
    pub fn new(w: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, w);
        writeln!(out, "{JOBS_CSV_HEADER}")?;
        Ok(JobsCsvWriter {
            out,
            sched: String::new(),
            tasks: Vec::new(),
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
            let task = self.tasks.get(rec.task as usize).map_or("", String::as_str);
            if let Err(e) = jobs_csv_row(&mut self.out, &self.sched, task, rec, end) {
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
/// CPU, one complete ("X") slice per execution interval, an instant event per missed deadline.
/// Opens in ui.perfetto.dev and chrome://tracing.
pub fn write_trace(runs: &[&RunResult], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
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
    }
    writeln!(w, "\n]}}")?;
    Ok(())
}

/// An error unless every run holds its per-job records (when they are to be written): a run
/// that streamed them away has none, and writing none would read as "no jobs".
pub(crate) fn held_jobs(runs: &[&RunResult], needed: bool) -> io::Result<()> {
    match runs.iter().find(|r| needed && r.streamed.is_some()) {
        Some(r) => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("run {} did not keep its per-job records (they were streamed away as its jobs ended)", r.scheduler))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::LEDGER_COUNTERS;
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
        for (k, x) in v["counters"].as_object().unwrap() {
            let unmeasured = LEDGER_COUNTERS.contains(&k.as_str());
            assert_eq!(x.is_null(), unmeasured, "{k}");
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
