//! Per-job records for big runs (issue "per-job outputs that keep up with the simulator"):
//! Parquet written in row groups straight from the Rust records, and the same bytes in memory
//! for `Result.jobs`, which pyarrow turns into columns far faster and smaller than Python lists.

use crate::{io_err, runs_of, PyRunResult};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rtsched_model::jobs_parquet;
use rtsched_model::jobs_parquet::JobsParquetWriter;
use rtsched_model::results::{
    self, AtomicFile, ChainsCsvWriter, JobRecord, JobSink, JobsCsvWriter, RunResult,
};
use rtsched_model::TaskSet;
use rtsched_model::Time;
use std::path::Path;

/// A Parquet file of per-job records written while runs go, row groups encoded on a thread of
/// its own (`_core.simulate(...,
/// parquet=f)` streams each record in as it is decided), atomically: nothing appears at
/// `path` until `close()`; dropped or `discard()`ed unclosed, nothing is left behind.
#[pyclass(name = "JobsParquetFile", module = "rtsched._core")]
pub struct PyJobsParquetFile {
    pub path: String,
    w: Option<JobsParquetWriter<AtomicFile>>,
}

impl PyJobsParquetFile {
    pub fn writer(&mut self) -> PyResult<&mut JobsParquetWriter<AtomicFile>> {
        let path = &self.path;
        self.w.as_mut().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("{path}: already closed"))
        })
    }
}

#[pymethods]
impl PyJobsParquetFile {
    /// `row_group`: records per row group (default JOBS_ROW_GROUP; real runs, fed a few
    /// hundred records a second, use fewer so the columns waiting in memory stay small).
    #[new]
    #[pyo3(signature = (path, row_group=None))]
    fn new(path: String, row_group: Option<usize>) -> PyResult<Self> {
        let f = AtomicFile::create(Path::new(&path)).map_err(|e| io_err(&path, e))?;
        let mut w = JobsParquetWriter::threaded(f).map_err(|e| io_err(&path, e))?;
        if let Some(n) = row_group {
            w = w.row_group_jobs(n);
        }
        Ok(PyJobsParquetFile { path, w: Some(w) })
    }
    /// Write the footer and move the file into place.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let path = self.path.clone();
        let w = self.w.take().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!("{path}: already closed"))
        })?;
        py.detach(|| w.close().and_then(|f| f.commit()))
            .map_err(|e| io_err(&path, e))
    }
    /// Give up the file (its temporary is removed; `path` is left as it was).
    fn discard(&mut self) {
        self.w = None;
    }
}

/// A pyclass over a CSV writer of records (`$writer`: `new(file)`, `finish()`), written while
/// runs go and atomically as [`PyJobsParquetFile`]: nothing at `path` until `close()`;
/// dropped or `discard()`ed unclosed, nothing is left behind. (A pyclass cannot be generic.)
macro_rules! csv_file_class {
    ($(#[$doc:meta])* $name:ident, $pyname:literal, $writer:ident) => {
        $(#[$doc])*
        #[pyclass(name = $pyname, module = "rtsched._core")]
        pub struct $name {
            pub path: String,
            w: Option<$writer<AtomicFile>>,
        }

        impl $name {
            pub fn writer(&mut self) -> PyResult<&mut $writer<AtomicFile>> {
                let path = &self.path;
                self.w.as_mut().ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!("{path}: already closed"))
                })
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new(path: String) -> PyResult<Self> {
                let f = AtomicFile::create(Path::new(&path)).map_err(|e| io_err(&path, e))?;
                let w = $writer::new(f).map_err(|e| io_err(&path, e))?;
                Ok($name { path, w: Some(w) })
            }
            /// Flush and move the file into place.
            fn close(&mut self, py: Python<'_>) -> PyResult<()> {
                let path = self.path.clone();
                let w = self.w.take().ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!("{path}: already closed"))
                })?;
                py.detach(|| w.finish().and_then(|f| f.commit()))
                    .map_err(|e| io_err(&path, e))
            }
            /// Give up the file (its temporary is removed; `path` is left as it was).
            fn discard(&mut self) {
                self.w = None;
            }
        }
    };
}

csv_file_class!(
    /// A CSV file of per-job records written while runs go (`--jobs-csv` of a run that does not
    /// hold its records), atomically as [`PyJobsParquetFile`]: nothing at `path` until `close()`.
    PyJobsCsvFile,
    "JobsCsvFile",
    JobsCsvWriter
);

csv_file_class!(
    /// A CSV file of chain records written while runs go (`--chains-csv` of a run that does not
    /// hold its records: docs/chains.md "Long runs"), atomically as [`PyJobsParquetFile`].
    PyChainsCsvFile,
    "ChainsCsvFile",
    ChainsCsvWriter
);

type Out<'a> = Option<&'a mut (dyn JobSink + Send)>;

/// Sinks fed the same records (a run streaming to --jobs-parquet, --jobs-csv and --chains-csv
/// at once); it takes chain records if one of them does.
pub struct Tee<'a>(pub [Out<'a>; 3]);

impl JobSink for Tee<'_> {
    fn job(&mut self, rec: &JobRecord, end: Time) {
        for s in self.0.iter_mut().flatten() {
            s.job(rec, end);
        }
    }
    fn chain(&mut self, rec: &results::ChainRecord) {
        for s in self.0.iter_mut().flatten() {
            s.chain(rec);
        }
    }
    fn takes_chains(&self) -> bool {
        self.0.iter().flatten().any(|s| s.takes_chains())
    }
}

/// The open files a run streams into: Parquet and CSV of its job records, CSV of its chain
/// records (each optional).
pub struct Files<'py>(
    pub Option<PyRefMut<'py, PyJobsParquetFile>>,
    pub Option<PyRefMut<'py, PyJobsCsvFile>>,
    pub Option<PyRefMut<'py, PyChainsCsvFile>>,
);

/// A run (`go`, given the sink) whose records stream into the open `files`, labelled `label`;
/// each file's run is ended, and a write error reported naming its file.
pub fn streamed_into(
    files: Files<'_>,
    label: &str,
    ts: &TaskSet,
    go: impl FnOnce(&mut (dyn JobSink + Send)) -> PyResult<RunResult>,
) -> PyResult<RunResult> {
    let Files(mut parquet, mut csv, mut chains) = files;
    let names: Vec<String> = ts.tasks.iter().map(|t| t.name.clone()).collect();
    let ppath = parquet.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    let cpath = csv.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    let chpath = chains.as_ref().map(|f| f.path.clone()).unwrap_or_default();
    let mut pw = match parquet.as_mut() {
        Some(f) => Some(f.writer()?),
        None => None,
    };
    let mut cw = match csv.as_mut() {
        Some(f) => Some(f.writer()?),
        None => None,
    };
    let mut chw = match chains.as_mut() {
        Some(f) => Some(f.writer()?),
        None => None,
    };
    if let Some(w) = pw.as_mut() {
        w.begin_run(label, &names);
    }
    if let Some(w) = cw.as_mut() {
        w.begin_run(label, &names);
    }
    if let Some(w) = chw.as_mut() {
        w.begin_run(label, &ts.chains);
    }
    let r = {
        let a = pw.as_deref_mut().map(|w| w as &mut (dyn JobSink + Send));
        let b = cw.as_deref_mut().map(|w| w as &mut (dyn JobSink + Send));
        let c = chw.as_deref_mut().map(|w| w as &mut (dyn JobSink + Send));
        go(&mut Tee([a, b, c]))
    };
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            // A run that stopped part-way: the next run of the file starts after its records.
            if let Some(w) = pw {
                w.abandon_run().map_err(|e| io_err(&ppath, e))?;
            }
            return Err(e);
        }
    };
    if let Some(w) = pw {
        w.end_run(&r).map_err(|e| io_err(&ppath, e))?;
    }
    if let Some(e) = cw.and_then(|w| w.take_error()) {
        return Err(io_err(&cpath, e));
    }
    if let Some(e) = chw.and_then(|w| w.take_error()) {
        return Err(io_err(&chpath, e));
    }
    Ok(r)
}

/// Write per-job records of every run to one zstd-compressed Parquet file, atomically.
#[pyfunction]
fn write_jobs_parquet(py: Python<'_>, runs: &Bound<'_, PyList>, path: &str) -> PyResult<()> {
    let refs = runs_of(runs)?;
    let v: Vec<&RunResult> = refs.iter().map(|r| &r.inner).collect();
    py.detach(|| {
        results::write_atomic_file(Path::new(path), |w| jobs_parquet::write_jobs_parquet(&v, w))
    })
    .map_err(|e| io_err(path, e))
}

/// One run's per-job records as the bytes of a Parquet file (the GIL is released while they
/// are encoded).
#[pyfunction]
fn jobs_parquet_bytes<'py>(
    py: Python<'py>,
    run: PyRef<'py, PyRunResult>,
) -> PyResult<Bound<'py, PyBytes>> {
    let r = &run.inner;
    let mut buf = Vec::with_capacity(64 * r.jobs.len());
    py.detach(|| jobs_parquet::write_jobs_parquet(&[r], &mut buf))
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &buf))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyJobsParquetFile>()?;
    m.add_class::<PyJobsCsvFile>()?;
    m.add_class::<PyChainsCsvFile>()?;
    m.add_function(wrap_pyfunction!(write_jobs_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(jobs_parquet_bytes, m)?)?;
    m.add("JOBS_ROW_GROUP", jobs_parquet::ROW_GROUP_JOBS)?;
    Ok(())
}
