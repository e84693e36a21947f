//! `_core.sweep_batch` and its helpers: a batch of sweep rows computed without the GIL
//! (`rtsched_sweep::batch`), its columns converted to little-endian byte buffers (NumPy reads
//! them without a copy per value); the seeds and keys of rows, and the notes of a task set, for
//! the Python side that needs them without running a row.

use crate::{input_err, PyTaskSet};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rtsched_sweep::batch::{self, Values};
use rtsched_sweep::{Note, SetOptions, Status};

/// A column as a `bytes` of little-endian values, written in place (no buffer to grow and
/// copy: a batch's columns are megabytes).
fn le_bytes<'py, T: Copy, const W: usize>(
    py: Python<'py>,
    n: usize,
    xs: impl Iterator<Item = T>,
    to: impl Fn(T) -> [u8; W],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, n * W, |buf| {
        for (cell, x) in buf.chunks_exact_mut(W).zip(xs) {
            cell.copy_from_slice(&to(x));
        }
        Ok(())
    })
}

/// Compute a batch of sweep rows. Task set `s` is generator `generators[set_gen[s]]` with
/// parameters `set_params[s]` ("k=v,k=v") and seed `set_seed[s]`; it runs under scheduler `j`
/// when `todo[s * len(schedulers) + j]` is non-zero. Each set gets `duration_ns`, `on_miss`
/// and the seed, then the run options `run` and `topology` (JSON, as
/// `TaskSet.with_options(run, topology, source)`).
///
/// Returns a dict: `rows`; `m`, `n` and each integer metric column (the catalogue's row
/// columns a run gives, `rtsched_sweep::metric_columns`) as little-endian i64 bytes; `U` and
/// each float metric column as little-endian f64 bytes; `null` as a dict of one byte per row
/// per metric column (1: null — a row that did not run, a test's row, a value not measured —
/// where the column holds 0); `status` as one byte per row (an index into `statuses`);
/// `verdict` as one byte per row (a `test:NAME` row's verdict: 0 false, 1 true, 2
/// inconclusive; 3 for a simulated row or a test that did not apply); `errors` as [(row,
/// message)] for rows that did not run; `warnings` as the batch's distinct notes (`("tufs",
/// scheduler)`, `("deadlock", scheduler, cycle)`).
/// A generator or options error raises InputError; nothing is returned for the batch.
#[pyfunction]
#[pyo3(signature = (schedulers, generators, set_gen, set_params, set_seed, todo, duration_ns, on_miss, run=None, topology=None, source="<sweep options>"))]
#[allow(clippy::too_many_arguments)]
fn sweep_batch<'py>(
    py: Python<'py>,
    schedulers: Vec<String>,
    generators: Vec<String>,
    set_gen: Vec<u32>,
    set_params: Vec<String>,
    set_seed: Vec<u64>,
    todo: &[u8],
    duration_ns: u64,
    on_miss: &str,
    run: Option<&str>,
    topology: Option<&str>,
    source: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let sets = set_params.len();
    if set_gen.len() != sets || set_seed.len() != sets || todo.len() != sets * schedulers.len() {
        return Err(input_err(format!(
            "sweep_batch: {sets} sets need as many generators and seeds and {sets} x {} todo flags",
            schedulers.len()
        )));
    }
    if let Some(&g) = set_gen.iter().find(|&&g| g as usize >= generators.len()) {
        return Err(input_err(format!(
            "sweep_batch: generator index {g} of {}",
            generators.len()
        )));
    }
    let o = SetOptions {
        duration_ns,
        on_miss,
        run,
        topology,
        source,
    };
    let c = py
        .detach(|| {
            batch::run_sets(
                &schedulers,
                &generators,
                &o,
                &set_gen,
                &set_params,
                &set_seed,
                todo,
            )
        })
        .map_err(input_err)?;
    let d = PyDict::new(py);
    d.set_item("rows", c.rows())?;
    d.set_item(
        "m",
        le_bytes(py, c.m.len(), c.m.iter().copied(), i64::to_le_bytes)?,
    )?;
    d.set_item(
        "n",
        le_bytes(py, c.n.len(), c.n.iter().copied(), i64::to_le_bytes)?,
    )?;
    d.set_item(
        "U",
        le_bytes(py, c.u.len(), c.u.iter().copied(), f64::to_le_bytes)?,
    )?;
    let nulls = PyDict::new(py);
    for m in &c.metrics {
        let name = m.column.name;
        match &m.values {
            Values::Int(v) => d.set_item(
                name,
                le_bytes(py, v.len(), v.iter().copied(), i64::to_le_bytes)?,
            )?,
            Values::Float(v) => d.set_item(
                name,
                le_bytes(py, v.len(), v.iter().copied(), f64::to_le_bytes)?,
            )?,
        }
        let null: Vec<u8> = m.null.iter().map(|&x| x as u8).collect();
        nulls.set_item(name, PyBytes::new(py, &null))?;
    }
    d.set_item("null", nulls)?;
    d.set_item("status", PyBytes::new(py, &c.status))?;
    d.set_item("verdict", PyBytes::new(py, &c.verdict))?;
    d.set_item("statuses", Status::ALL.map(Status::name).to_vec())?;
    d.set_item("errors", c.errors)?;
    d.set_item("warnings", notes_list(py, c.notes)?)?;
    Ok(d)
}

/// The task-set seeds and row keys of a span's sets (`keys.Span.batch`): for each piece
/// `(head, at, replications, tails)` of one generator and point, per replication its seed
/// ([`rtsched_sweep::taskset_seed`] of `head`) and a key per tail ([`rtsched_sweep::push_key`]).
/// Returns the seeds and the keys as an Arrow string column's buffers (little-endian i32
/// offsets, UTF-8 data): no Python object per row or per set.
#[pyfunction]
fn span_rows<'py>(
    py: Python<'py>,
    pieces: Vec<(String, String, Vec<i128>, Vec<String>)>,
) -> PyResult<(Vec<u64>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let sets: usize = pieces.iter().map(|p| p.2.len()).sum();
    let rows: usize = pieces.iter().map(|p| p.2.len() * p.3.len()).sum();
    let mut seeds = Vec::with_capacity(sets);
    let mut offsets: Vec<u8> = Vec::with_capacity(4 * (rows + 1));
    let bytes: usize = pieces
        .iter()
        .map(|(_, at, reps, tails)| {
            reps.len() * tails.iter().map(|t| at.len() + 10 + t.len()).sum::<usize>()
        })
        .sum();
    let mut data = String::with_capacity(bytes);
    let mut text = String::new();
    offsets.extend_from_slice(&0i32.to_le_bytes());
    for (head, at, reps, tails) in &pieces {
        for &r in reps {
            seeds.push(rtsched_sweep::taskset_seed(head, r, &mut text));
            for tail in tails {
                rtsched_sweep::push_key(&mut data, at, r, tail);
                let end = i32::try_from(data.len())
                    .map_err(|_| input_err("span_rows: keys over 2 GiB in one batch"))?;
                offsets.extend_from_slice(&end.to_le_bytes());
            }
        }
    }
    Ok((
        seeds,
        PyBytes::new(py, &offsets),
        PyBytes::new(py, data.as_bytes()),
    ))
}

/// [`span_rows`] of one piece as Python values: the seed of each replication, and its keys
/// (one per tail, replication after replication) as strings (`keys.units`, which filters
/// them against the rows done).
#[pyfunction]
fn point_rows(
    head: &str,
    at: &str,
    replications: Vec<i128>,
    tails: Vec<String>,
) -> (Vec<u64>, Vec<String>) {
    let mut text = String::new();
    let mut key = String::new();
    let mut seeds = Vec::with_capacity(replications.len());
    let mut keys = Vec::with_capacity(replications.len() * tails.len());
    for &r in &replications {
        seeds.push(rtsched_sweep::taskset_seed(head, r, &mut text));
        for tail in &tails {
            key.clear();
            rtsched_sweep::push_key(&mut key, at, r, tail);
            keys.push(key.clone());
        }
    }
    (seeds, keys)
}

/// The notes of running `taskset` under each of `schedulers` (`checks.taskset_warnings`), in
/// their order: `("tufs", scheduler)` and `("deadlock", scheduler, cycle)`.
#[pyfunction]
fn taskset_notes<'py>(
    py: Python<'py>,
    taskset: &PyTaskSet,
    schedulers: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let ts = &taskset.inner;
    let cycle = ts.lock_order_cycle();
    let mut notes = Vec::new();
    for s in &schedulers {
        rtsched_sweep::notes(ts, cycle.as_deref(), s, &mut notes);
    }
    notes_list(py, notes)
}

/// Notes as Python tuples.
fn notes_list<'py>(
    py: Python<'py>,
    notes: impl IntoIterator<Item = Note>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for n in notes {
        match n {
            Note::Tufs(s) => out.append(("tufs", s))?,
            Note::Deadlock(s, cycle) => out.append(("deadlock", s, cycle))?,
        }
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep_batch, m)?)?;
    m.add_function(wrap_pyfunction!(span_rows, m)?)?;
    m.add_function(wrap_pyfunction!(point_rows, m)?)?;
    m.add_function(wrap_pyfunction!(taskset_notes, m)?)?;
    Ok(())
}
