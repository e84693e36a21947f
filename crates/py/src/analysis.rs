//! Bindings for the analysis crate: generators, schedulability tests, partitioners.

use crate::{input_err, PyTaskSet};
use pyo3::prelude::*;
use rtsched_analysis::{gen, partition, schedulability};

/// A generated task set with its utilisations, PAWS threads and ChronOS utilities.
type GeneratedTuple = (PyTaskSet, Vec<f64>, Option<Vec<u32>>, Option<Vec<f64>>);

/// Generate a task set: `name` from `generators()`, `params` as "k=v,k=v". Returns
/// (TaskSet, utilisations, threads or None, utilities or None).
#[pyfunction]
#[pyo3(signature = (name, params="", seed=1))]
fn generate(py: Python<'_>, name: &str, params: &str, seed: u64) -> PyResult<GeneratedTuple> {
    let p = gen::Params::parse(params).map_err(input_err)?;
    let g = py.detach(|| gen::by_name(name, &p, seed)).map_err(input_err)?;
    Ok((PyTaskSet { inner: g.taskset }, g.utilisations, g.threads, g.utilities))
}

/// Every generator: (name, summary, parameters).
#[pyfunction]
fn generators() -> Vec<(&'static str, &'static str, &'static str)> {
    gen::GENERATORS.iter().map(|g| (g.name, g.summary, g.params)).collect()
}

/// Every applicable schedulability test: (test, verdict True/False/None, detail).
#[pyfunction]
fn analyze(py: Python<'_>, taskset: &PyTaskSet) -> Vec<(String, Option<bool>, String)> {
    let ts = &taskset.inner;
    py.detach(|| schedulability::analyze(ts)).into_iter().map(|v| (v.test, v.schedulable, v.detail)).collect()
}

/// Partition with `heuristic` (a name or a chain "lwfg+ffd+global"); `admission` is
/// "edf" (exact EDF, default), "density", "rm", "dm" or "file" (FP response-time analysis).
/// Returns (task set with `cpu` fields, or None when the chain fell back to global; heuristic).
#[pyfunction]
#[pyo3(signature = (taskset, heuristic, admission="edf"))]
fn partition_taskset(py: Python<'_>, taskset: &PyTaskSet, heuristic: &str, admission: &str) -> PyResult<(Option<PyTaskSet>, String)> {
    let ts = &taskset.inner;
    let adm = match admission {
        "edf" => partition::Admission::EdfExact,
        "density" => partition::Admission::Density,
        "rm" => partition::Admission::FpRta(rtsched_analysis::priority::rate_monotonic(&ts.tasks)),
        "dm" => partition::Admission::FpRta(rtsched_analysis::priority::deadline_monotonic(&ts.tasks)),
        "file" => match ts.tasks.iter().find(|t| t.priority.is_none()) {
            Some(t) => return Err(input_err(format!("{}: task '{}': field 'priority': missing, and admission 'file' needs every task's priority", ts.source, t.name))),
            None => partition::Admission::FpRta(ts.tasks.iter().map(|t| t.priority.unwrap()).collect()),
        },
        o => return Err(input_err(format!("unknown admission test '{o}' (known: edf, density, rm, dm, file)"))),
    };
    let p = partition::by_name(heuristic).map_err(input_err)?;
    let r = py.detach(|| p.partition(ts, &adm)).map_err(|e| input_err(format!("{}: {e}", ts.source)))?;
    if r.is_global() {
        return Ok((None, r.heuristic));
    }
    let mut out = ts.clone();
    for (t, c) in out.tasks.iter_mut().zip(&r.cpu_of_task) {
        t.cpu = Some(*c);
    }
    Ok((Some(PyTaskSet { inner: out }), r.heuristic))
}

/// The task set as YAML text (durations with units, so it reads back exactly).
#[pyfunction]
fn to_yaml(taskset: &PyTaskSet) -> String {
    rtsched_model::file::to_yaml(&taskset.inner)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(partition_taskset, m)?)?;
    m.add_function(wrap_pyfunction!(to_yaml, m)?)?;
    Ok(())
}
