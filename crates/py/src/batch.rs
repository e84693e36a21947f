//! A batch of sweep rows computed without the GIL and without a Python object per row: for
//! each task set, generate it, apply the run options, simulate it under each of its
//! schedulers and summarise each run into the sweep table's numeric columns. The columns come
//! back as little-endian byte buffers (NumPy reads them without a copy per value).
//!
//! What a row holds is the row-at-a-time worker's (`python/rtsched/sweep/worker.py`,
//! `run_unit`), value for value; `tests/test_sweep_batch.py` compares the two tables.

use crate::{input_err, PyTaskSet};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rtsched_analysis::gen;
use rtsched_model::results::{RunResult, Summary, TotalSink};

/// Integer columns of a row (the sweep table's names; `table.py` SUMMARY_COLUMNS and
/// MODEL_COLUMNS hold the order).
const INT_COLUMNS: [&str; 29] = [
    "jobs",
    "completed",
    "met",
    "missed",
    "aborted",
    "max_tardiness_ns",
    "max_response_ns",
    "p99_response_ns",
    "preemptions",
    "migrations",
    "context_switches",
    "scheduler_invocations",
    "steals",
    "steal_attempts",
    "failed_steals",
    "priority_inversions",
    "priority_inversion_ns",
    "inverted_jobs",
    "inversion_job_ns",
    "inversion_job_max_ns",
    "inversion_job_p99_ns",
    "kernel_migrations",
    "deadlocks",
    "misses_l1",
    "misses_l2",
    "misses_llc",
    "invalidations",
    "evictions",
    "overhead_ns",
];
const FLOAT_COLUMNS: [&str; 8] = [
    "dsr",
    "accrued_utility",
    "possible_utility",
    "aur",
    "mean_tardiness_ns",
    "mean_response_ns",
    "exec_inflation",
    "ipc_proxy",
];

/// A row's outcome (`status` column): what the codes of the `status` buffer mean.
const STATUS: [&str; 4] = ["ok", "partition-failed", "deadlock", "too-long"];

/// The numeric columns of one completed run (its counters, and `s`, its total summary), in
/// the order of `INT_COLUMNS` / `FLOAT_COLUMNS`.
fn summarise(r: &RunResult, s: &Summary) -> ([i64; 29], [f64; 8]) {
    let c = &r.counters;
    let o = &c.overheads;
    // As the row-at-a-time worker adds up the results document's `overheads`: every kind but
    // the release latency (which takes no CPU), and the throttled time when the cap is on.
    let overhead = o.cpu_ns() + o.throttle_ns;
    let i = |x: u64| x as i64;
    let ints = [
        i(s.jobs),
        i(s.completed),
        i(s.met),
        i(s.missed),
        i(s.aborted),
        i(s.max_tardiness_ns),
        i(s.max_response_ns),
        i(s.p99_response_ns),
        i(s.preemptions),
        i(s.migrations),
        i(s.context_switches),
        i(c.scheduler_invocations),
        i(c.steals),
        i(c.steal_attempts),
        i(c.failed_steals),
        i(c.priority_inversions),
        i(c.priority_inversion_ns),
        i(c.inverted_jobs),
        i(c.inversion_job_ns),
        i(c.inversion_job_max_ns),
        i(c.inversion_job_p99_ns),
        i(c.kernel_migrations),
        i(c.deadlocks),
        i(s.misses[0]),
        i(s.misses[1]),
        i(s.misses[2]),
        i(c.cache.invalidations),
        i(c.cache.evictions),
        i(overhead),
    ];
    let floats = [
        s.dsr,
        s.accrued_utility,
        s.possible_utility,
        s.aur,
        s.mean_tardiness_ns,
        s.mean_response_ns,
        s.exec_inflation,
        s.ipc_proxy,
    ];
    (ints, floats)
}

/// What one task set and one scheduler warn about (`worker.WARNINGS`): TUFs the scheduler
/// ignores, a lock-order cycle it does not resolve.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Note {
    Tufs(String),
    Deadlock(String, String),
}

fn notes(
    ts: &rtsched_model::TaskSet,
    sched: &str,
    cycle: &Option<String>,
    out: &mut std::collections::BTreeSet<Note>,
) {
    let tufs = ts.has_tufs();
    if !tufs && cycle.is_none() {
        return;
    }
    // As `checks.traits`: the kernel's schedulers do neither; a spec that does not build for
    // this set says why when it runs, so it is not warned about.
    let (uses_tufs, resolves) = if sched.starts_with("kernel:") {
        (false, false)
    } else {
        match rtsched_policies::build(sched.strip_prefix("testbed:").unwrap_or(sched), ts) {
            Ok(p) => (p.uses_tufs(), p.resolves_deadlocks()),
            Err(_) => (true, true),
        }
    };
    if tufs && !uses_tufs {
        out.insert(Note::Tufs(sched.to_string()));
    }
    if let (Some(c), false) = (cycle, resolves) {
        out.insert(Note::Deadlock(sched.to_string(), c.clone()));
    }
}

/// The batch's columns, row by row (rows in set order, then in the order of `schedulers`).
#[derive(Default)]
struct Columns {
    m: Vec<i64>,
    n: Vec<i64>,
    u: Vec<f64>,
    status: Vec<u8>,
    ints: Vec<[i64; 29]>,
    floats: Vec<[f64; 8]>,
    errors: Vec<(usize, String)>,
    notes: std::collections::BTreeSet<Note>,
}

/// The options every set of a batch shares.
struct Shared<'a> {
    schedulers: &'a [String],
    generators: &'a [String],
    duration_ns: u64,
    on_miss: &'a str,
    run: Option<&'a str>,
    topology: Option<&'a str>,
    source: &'a str,
}

/// How a row's error says it was not run for its estimated work.
pub(crate) const TOO_LONG: &str = "not run: the run would take";

/// The error of a row whose estimated work is over the default limit (`None`: run it).
pub(crate) fn too_long(ts: &rtsched_model::TaskSet, sched: &str) -> Option<String> {
    let e = rtsched_sim::estimate_spec(ts, sched).ok()?;
    (e.steps > rtsched_sim::DEFAULT_MAX_WORK).then(|| {
        format!(
            "{TOO_LONG} about {:.2e} steps of scheduling work ({} decisions of about {} steps each on {} CPUs), more than the limit of {:.0e}",
            e.steps as f64, e.decisions, e.per_decision, ts.platform.cpus, rtsched_sim::DEFAULT_MAX_WORK as f64
        )
    })
}

fn run_sets(
    sh: &Shared<'_>,
    set_gen: &[u32],
    set_params: &[String],
    set_seed: &[u64],
    todo: &[u8],
) -> PyResult<Columns> {
    let k = sh.schedulers.len();
    let mut out = Columns::default();
    // Each run's records go into the total summary as they are decided, none held: a row needs
    // no more, and the buffers stay small and are reused from run to run (a run holding its
    // records allocates them anew each time, which costs half as much again where malloc
    // gives freed memory back early, as in Dask's workers: MALLOC_TRIM_THRESHOLD_=65536).
    let mut total = TotalSink::default();
    // Likewise each run reuses the simulator's buffers of the run before.
    let mut scratch = rtsched_sim::SimScratch::default();
    for (s, params) in set_params.iter().enumerate() {
        let name = &sh.generators[set_gen[s] as usize];
        let seed = set_seed[s];
        let p = gen::Params::parse(params).map_err(input_err)?;
        let g = gen::by_name(name, &p, seed).map_err(input_err)?;
        // The same steps, in the same code, as the row-at-a-time worker: with_run, then the
        // options read by the task-file reader.
        let mut ts = PyTaskSet { inner: g.taskset }.with_run(
            Some(sh.duration_ns),
            Some(seed),
            Some(sh.on_miss),
        )?;
        if sh.run.is_some() || sh.topology.is_some() {
            ts = ts.with_options(sh.run, sh.topology, sh.source)?;
        }
        let ts = ts.inner;
        let cycle = ts.lock_order_cycle();
        let (m, n, u) = (
            ts.platform.cpus as i64,
            ts.tasks.len() as i64,
            ts.utilization(),
        );
        for (j, sched) in sh.schedulers.iter().enumerate() {
            if todo[s * k + j] == 0 {
                continue;
            }
            notes(&ts, sched, &cycle, &mut out.notes);
            out.m.push(m);
            out.n.push(n);
            out.u.push(u);
            // A row whose run would take hours (PAWS on tens of thousands of CPUs, a 1 ns
            // tick) is not run: its status says so, with the estimate (the CLI's --max-work).
            let run = match too_long(&ts, sched) {
                Some(e) => Err(e),
                None => {
                    total.reset_for(&ts);
                    let options = rtsched_sim::Options::spec(sched)
                        .records(rtsched_sim::Records::Into(&mut total))
                        .scratch(&mut scratch);
                    rtsched_sim::simulate(&ts, options).map(|o| o.result)
                }
            };
            match run {
                Ok(r) => {
                    let (i, f) = summarise(&r, &total.summary());
                    out.status.push(0);
                    out.ints.push(i);
                    out.floats.push(f);
                }
                Err(e) => {
                    // The scheduler was probed on a trivial set, so this is about this set: a
                    // partitioner that found no partition, or a deadlock left unresolved.
                    out.status.push(if e.starts_with(TOO_LONG) {
                        3
                    } else if e.contains("deadlock at") {
                        2
                    } else {
                        1
                    });
                    out.ints.push([0; 29]);
                    out.floats.push([0.0; 8]);
                    out.errors.push((out.status.len() - 1, e));
                }
            }
        }
    }
    Ok(out)
}

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
/// Returns a dict: `rows`; `m`, `n` and each integer column as little-endian i64 bytes; `U`
/// and each float column as little-endian f64 bytes; `status` as one byte per row (an index
/// into `statuses`); `errors` as [(row, message)] for rows that did not run; `warnings` as
/// the batch's distinct notes (`("tufs", scheduler)`, `("deadlock", scheduler, cycle)`).
/// The metric columns of a row that did not run hold 0 (the caller masks them).
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
    let sh = Shared {
        schedulers: &schedulers,
        generators: &generators,
        duration_ns,
        on_miss,
        run,
        topology,
        source,
    };
    let c = py.detach(|| run_sets(&sh, &set_gen, &set_params, &set_seed, todo))?;
    let d = PyDict::new(py);
    d.set_item("rows", c.status.len())?;
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
    for (k, name) in INT_COLUMNS.iter().enumerate() {
        d.set_item(
            *name,
            le_bytes(
                py,
                c.ints.len(),
                c.ints.iter().map(|r| r[k]),
                i64::to_le_bytes,
            )?,
        )?;
    }
    for (k, name) in FLOAT_COLUMNS.iter().enumerate() {
        d.set_item(
            *name,
            le_bytes(
                py,
                c.floats.len(),
                c.floats.iter().map(|r| r[k]),
                f64::to_le_bytes,
            )?,
        )?;
    }
    d.set_item("status", PyBytes::new(py, &c.status))?;
    d.set_item("statuses", STATUS.to_vec())?;
    d.set_item("errors", c.errors)?;
    let notes = PyList::empty(py);
    for n in c.notes {
        match n {
            Note::Tufs(s) => notes.append(("tufs", s))?,
            Note::Deadlock(s, cycle) => notes.append(("deadlock", s, cycle))?,
        }
    }
    d.set_item("warnings", notes)?;
    Ok(d)
}

/// The task-set seeds and row keys of a span's sets (`keys.Span.batch`): for each piece
/// `(head, at, replications, tails)` of one generator and point, per replication `r` the seed
/// `sha256(head + str(r) + "]")`'s first 8 bytes, big-endian, shifted right by one
/// (`keys._seed_at`), and the keys `at + r as 10 digits + tail` for each tail
/// (`keys.row_key`). Returns the seeds and the keys as an Arrow string column's buffers
/// (little-endian i32 offsets, UTF-8 data): no Python object per row or per set.
#[pyfunction]
fn span_rows<'py>(
    py: Python<'py>,
    pieces: Vec<(String, String, Vec<u64>, Vec<String>)>,
) -> PyResult<(Vec<u64>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
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
            text.clear();
            let _ = write!(text, "{head}{r}]");
            let digest = Sha256::digest(text.as_bytes());
            let first: [u8; 8] = digest[..8]
                .try_into()
                .expect("a SHA-256 digest has 32 bytes");
            seeds.push(u64::from_be_bytes(first) >> 1);
            for tail in tails {
                let _ = write!(data, "{at}{r:010}{tail}");
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep_batch, m)?)?;
    m.add_function(wrap_pyfunction!(span_rows, m)?)?;
    Ok(())
}
