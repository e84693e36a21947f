//! Bindings for the analysis crate: generators, schedulability tests (plain and
//! overhead-aware), partitioners.

use crate::{input_err, PyTaskSet};
use pyo3::prelude::*;
use rtsched_analysis::{gen, overheads as oha, partition, schedulability};
use rtsched_model::file::TaskNote;
use rtsched_model::overheads::{load_profile, Statistic};
use rtsched_model::{Overheads, TaskSet};

/// A generated task set with its utilisations, PAWS threads and ChronOS utilities.
type GeneratedTuple = (PyTaskSet, Vec<f64>, Option<Vec<u32>>, Option<Vec<f64>>);

/// Generate a task set: `name` from `generators()`, `params` as "k=v,k=v". Returns
/// (TaskSet, utilisations, threads or None, utilities or None).
#[pyfunction]
#[pyo3(signature = (name, params="", seed=1))]
fn generate(py: Python<'_>, name: &str, params: &str, seed: u64) -> PyResult<GeneratedTuple> {
    let p = gen::Params::parse(params).map_err(input_err)?;
    let g = py
        .detach(|| gen::by_name(name, &p, seed))
        .map_err(input_err)?;
    Ok((
        PyTaskSet { inner: g.taskset },
        g.utilisations,
        g.threads,
        g.utilities,
    ))
}

/// Every generator: (name, summary, parameters).
#[pyfunction]
fn generators() -> Vec<(&'static str, &'static str, &'static str)> {
    gen::GENERATORS
        .iter()
        .map(|g| (g.name, g.summary, g.params))
        .collect()
}

/// A per-task bound as Python reads it: (task name, task index, quantity, bound ns or None,
/// deadline ns, slack ns or None, blocking term ns or None, spin term ns or None, the CPU of a
/// per-CPU test's row or None).
type BoundRow = (
    String,
    usize,
    &'static str,
    Option<u64>,
    u64,
    Option<i64>,
    Option<u64>,
    Option<u64>,
    Option<u32>,
);

/// A verdict as Python reads it: (test, True/False/None, detail, the verdict in words, the
/// per-task bounds).
type VerdictRow = (String, Option<bool>, String, &'static str, Vec<BoundRow>);

fn verdict_row(v: schedulability::Verdict) -> VerdictRow {
    let word = v.word();
    let tasks = v
        .tasks
        .iter()
        .map(|b| {
            let slack = b.slack();
            (
                b.name.clone(),
                b.task,
                b.quantity.name(),
                b.bound,
                b.deadline,
                slack,
                b.blocking,
                b.spin,
                b.cpu,
            )
        })
        .collect();
    (v.test, v.schedulable, v.detail, word, tasks)
}

/// The simulated scheduler test `test`'s per-task bounds speak for (`bounds::simulated_by`).
#[pyfunction]
fn simulated_by(test: &str) -> Option<&'static str> {
    schedulability::bounds::simulated_by(test)
}

/// A scheduler and each task's maximum response under it (ns; None: no job completed).
type SimulatedMax = (&'static str, Vec<Option<u64>>);

/// The scheduler test `test`'s per-task bounds speak for (`bounds::simulated_by`), and each
/// task's maximum response time under it (ns; None: no job completed), simulated from a
/// synchronous periodic release at WCET without overheads (`bounds::synchronous_at_wcet`, over
/// `bounds::horizon`): what `rtsched analyze --simulate` sets beside the bounds. None for a
/// test without bounds.
#[pyfunction]
fn simulated_max_response(
    py: Python<'_>,
    taskset: &PyTaskSet,
    test: &str,
) -> PyResult<Option<SimulatedMax>> {
    use schedulability::bounds;
    let Some(scheduler) = bounds::simulated_by(test) else {
        return Ok(None);
    };
    let ts = bounds::synchronous_at_wcet(&taskset.inner, bounds::horizon(&taskset.inner));
    let options = rtsched_sim::Options::spec(scheduler).records(rtsched_sim::Records::Held);
    let r = py
        .detach(|| rtsched_sim::simulate(&ts, options))
        .map_err(crate::sim_err)?
        .result;
    let max = r
        .summaries()
        .tasks
        .iter()
        .map(|t| (t.summary.completed > 0).then_some(t.summary.max_response_ns))
        .collect();
    Ok(Some((scheduler, max)))
}

/// Partitioning tried (`schedulability::partitioned`): per heuristic and admission test,
/// (heuristic, test, the per-CPU test's verdict row, each CPU's utilisation).
#[pyfunction]
fn partition_attempts(
    py: Python<'_>,
    taskset: &PyTaskSet,
) -> Vec<(&'static str, &'static str, VerdictRow, Vec<f64>)> {
    let ts = &taskset.inner;
    py.detach(|| schedulability::partitioned::attempts(ts))
        .into_iter()
        .map(|a| (a.heuristic, a.test, verdict_row(a.verdict), a.loads))
        .collect()
}

/// Every applicable schedulability test: (test, verdict True/False/None, detail, the verdict
/// in words: a necessary condition that holds is "not refuted", not "inconclusive").
#[pyfunction]
fn analyze(py: Python<'_>, taskset: &PyTaskSet) -> Vec<VerdictRow> {
    let ts = &taskset.inner;
    py.detach(|| schedulability::analyze(ts))
        .into_iter()
        .map(verdict_row)
        .collect()
}

/// An event chain's latency bound under EDF as Python reads it: (latency, within the
/// deadline, method, note).
type SchedBoundRow = (Option<u64>, Option<bool>, &'static str, String);

/// A chain's end-to-end bounds as Python reads them (ns): (chain, communication or None,
/// latency, data age, reaction time, deadline, within the deadline, method, exact, note, EDF's
/// bound or None).
type ChainBoundRow = (
    String,
    Option<&'static str>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<bool>,
    &'static str,
    bool,
    String,
    Option<SchedBoundRow>,
);

/// Every chain's end-to-end bounds (analysis crate, `schedulability::chains`), in the set's
/// order; implicit chains by `implicit` ("durr" or "davare").
#[pyfunction]
#[pyo3(signature = (taskset, implicit = "durr"))]
fn chain_bounds(
    py: Python<'_>,
    taskset: &PyTaskSet,
    implicit: &str,
) -> PyResult<Vec<ChainBoundRow>> {
    use schedulability::chains::{chain_bounds_by, Implicit};
    let implicit = match implicit {
        "durr" => Implicit::Durr,
        "davare" => Implicit::Davare,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "implicit: '{other}' is not 'durr' or 'davare'"
            )))
        }
    };
    let ts = &taskset.inner;
    Ok(py
        .detach(|| chain_bounds_by(ts, implicit))
        .into_iter()
        .map(|b| {
            (
                b.chain,
                b.communication.map(|c| c.name()),
                b.latency,
                b.data_age,
                b.reaction_time,
                b.deadline,
                b.meets_deadline,
                b.method,
                b.exact,
                b.note,
                b.edf
                    .map(|e| (e.latency, e.meets_deadline, e.method, e.note)),
            )
        })
        .collect())
}

/// Check a sweep's `test:NAME` scheduler (`name` without the prefix): InputError naming the
/// closest known test when it is not one.
#[pyfunction]
fn check_test(name: &str) -> PyResult<()> {
    schedulability::named::Named::parse(name)
        .map(|_| ())
        .map_err(input_err)
}

/// A test of the registry: (name, what it tests, the sets it applies to, source, kind:
/// "exact", "sufficient" or "necessary").
type TestHelp = (String, &'static str, String, &'static str, &'static str);

/// The tests a sweep can run as `test:NAME`, in the registry's order (`named::help`).
#[pyfunction]
fn tests() -> Vec<TestHelp> {
    schedulability::named::help()
        .into_iter()
        .map(|h| (h.name, h.summary, h.applies, h.citation, h.kind.name()))
        .collect()
}

/// The overheads an analysis charges: those of the profile file `profile` (its `statistic`
/// column), or else the task set's own `run.overheads` when it sets any; None otherwise.
fn overheads_for(
    ts: &TaskSet,
    profile: Option<&str>,
    statistic: &str,
) -> PyResult<Option<Overheads>> {
    let stat = Statistic::parse(statistic).map_err(|e| input_err(format!("statistic: {e}")))?;
    match profile {
        Some(p) => Ok(Some(load_profile(p).map_err(input_err)?.overheads(stat, p))),
        None => Ok(ts.run.overheads.any().then(|| ts.run.overheads.clone())),
    }
}

/// Costs in ns, by kind.
type Costs = Vec<(&'static str, u64)>;

fn costs(o: &Overheads) -> Costs {
    vec![
        ("decision", o.decision),
        ("context_switch", o.context_switch),
        ("migration", o.migration),
        ("release", o.release),
        ("tick", o.tick),
        ("tick_period", o.tick_period),
    ]
}

/// The overheads an overhead-aware analysis of `taskset` would charge (see `overheads_for`):
/// (one-line description, costs in ns by kind), or None.
#[pyfunction]
#[pyo3(signature = (taskset, profile=None, statistic="p99"))]
fn analysis_overheads(
    taskset: &PyTaskSet,
    profile: Option<&str>,
    statistic: &str,
) -> PyResult<Option<(String, Costs)>> {
    Ok(overheads_for(&taskset.inner, profile, statistic)?.map(|o| (oha::describe(&o), costs(&o))))
}

/// One task's inflation under one global scheduler: (C'', dispatches, migrations), or None.
type GlobalInflation = Option<(u64, u64, u64)>;

/// One task of an overhead-aware analysis: (name, C, D, T, C'' and D' on one CPU / per CPU,
/// dispatches charged per job there, C'' under global EDF or None, its dispatches, its
/// migrations, and under global FP with RM, DM and the file's priorities
/// (`overheads::GLOBAL_FP`)), ns.
type TaskRow = (
    String,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    [GlobalInflation; 3],
);

/// Every applicable test with the overheads charged (WCETs inflated; analysis crate,
/// `overheads.rs`): (overheads description, verdicts as in `analyze`, per-task inflation), or
/// None when there are no overheads to charge (no profile and none in the task file).
#[pyfunction]
#[pyo3(signature = (taskset, profile=None, statistic="p99"))]
#[allow(clippy::type_complexity)]
fn analyze_overheads(
    py: Python<'_>,
    taskset: &PyTaskSet,
    profile: Option<&str>,
    statistic: &str,
) -> PyResult<Option<(String, Vec<VerdictRow>, Vec<TaskRow>)>> {
    let ts = &taskset.inner;
    let Some(oh) = overheads_for(ts, profile, statistic)? else {
        return Ok(None);
    };
    let a = py.detach(|| oha::analyze_with_overheads(ts, &oh));
    let verdicts = a.verdicts.into_iter().map(verdict_row).collect();
    let rows = a
        .tasks
        .into_iter()
        .map(|r| {
            let p = r.partitioned;
            (
                r.name,
                r.plain.c,
                r.plain.d,
                r.plain.t,
                p.task.c,
                p.task.d,
                p.dispatches,
                r.global.map(|g| g.task.c),
                r.global.map(|g| g.dispatches),
                r.global.map(|g| g.migrations),
                r.global_fp
                    .map(|g| g.map(|g| (g.task.c, g.dispatches, g.migrations))),
            )
        })
        .collect();
    Ok(Some((oha::describe(&oh), verdicts, rows)))
}

/// The admission test named `admission` (edf, density, rm, dm, file) for `ts`, charging its
/// critical sections where the test bounds their protocol (`partition::sections`).
fn admission_of(ts: &TaskSet, admission: &str) -> PyResult<partition::Admission> {
    // rm, dm, file: the priorities of that assignment (`priority::assign`, the schedulers' rule).
    let fp = |by| match rtsched_analysis::priority::assign(&ts.tasks, Some(by)) {
        Ok((p, _)) => Ok(partition::Admission::FpRta(p)),
        Err(_) => {
            let t = ts
                .tasks
                .iter()
                .find(|t| t.priority.is_none())
                .expect("file lacks one");
            Err(input_err(format!("{}: task '{}': field 'priority': missing, and admission 'file' needs every task's priority", ts.source, t.name)))
        }
    };
    let adm = match admission {
        "edf" => partition::Admission::EdfExact,
        "density" => partition::Admission::Density,
        o => match rtsched_analysis::priority::Priorities::parse(o) {
            Some(by) => fp(by)?,
            None => {
                return Err(input_err(format!(
                    "unknown admission test '{o}' (known: edf, density, rm, dm, file)"
                )))
            }
        },
    };
    Ok(adm.counting_sections(ts))
}

/// Whether `rtsched partition`'s admission `admission` charges `taskset`'s critical sections
/// (blocking-aware, resources kept local), or ignores them.
#[pyfunction]
fn admission_counts_sections(taskset: &PyTaskSet, admission: &str) -> PyResult<bool> {
    Ok(admission_of(&taskset.inner, admission)?.counts_sections())
}

/// Under a multiprocessor protocol's admission (`partition::remote`), the protocol whose terms
/// `admission` counts and each CPU's line of terms on `taskset`'s placement (every task's
/// `cpu` given); `None` for any other admission.
#[pyfunction]
fn admission_terms(
    taskset: &PyTaskSet,
    admission: &str,
) -> PyResult<Option<(String, Vec<String>)>> {
    let ts = &taskset.inner;
    let adm = admission_of(ts, admission)?;
    let Some(p) = adm.counted() else {
        return Ok(None);
    };
    Ok(partition::remote::terms(ts, &adm).map(|lines| (p.name().to_string(), lines)))
}

/// Partition with `heuristic` (a name or a chain "lwfg+ffd+global"); `admission` is
/// "edf" (exact EDF, default), "density", "rm", "dm" or "file" (FP response-time analysis).
/// Admission charges the overheads of `profile` (its `statistic`), or else the task file's own
/// `run.overheads`, if any. Returns (task set with `cpu` fields, or None when the chain fell
/// back to global; heuristic, followed by "; placed beyond admission: NAMES" when an
/// `-overflow` heuristic placed tasks no CPU admitted).
#[pyfunction]
#[pyo3(signature = (taskset, heuristic, admission="edf", profile=None, statistic="p99"))]
fn partition_taskset(
    py: Python<'_>,
    taskset: &PyTaskSet,
    heuristic: &str,
    admission: &str,
    profile: Option<&str>,
    statistic: &str,
) -> PyResult<(Option<PyTaskSet>, String)> {
    let ts = &taskset.inner;
    let oh = overheads_for(ts, profile, statistic)?;
    let adm = admission_of(ts, admission)?;
    let p = partition::by_name(heuristic).map_err(input_err)?;
    let r = py
        .detach(|| p.partition_with(ts, &adm, oh.as_ref()))
        .map_err(|e| input_err(format!("{}: {e}", ts.source)))?;
    if r.is_global() {
        return Ok((None, r.heuristic));
    }
    let mut out = ts.clone();
    for (t, c) in out.tasks.iter_mut().zip(&r.cpu_of_task) {
        t.cpu = Some(*c);
    }
    let mut used = r.heuristic;
    if !r.overflowed.is_empty() {
        let names: Vec<&str> = r
            .overflowed
            .iter()
            .map(|&i| ts.tasks[i].name.as_str())
            .collect();
        used = format!("{used}; placed beyond admission: {}", names.join(", "));
    }
    Ok((Some(PyTaskSet { inner: out }), used))
}

/// The task set as YAML text (durations with units, so it reads back exactly); with `notes`,
/// `(comment, sporadic)` per task in order: the comment at the end of its line, and its T
/// written as `min_interarrival` when `sporadic` (`file::to_yaml_with`).
#[pyfunction]
#[pyo3(signature = (taskset, notes=None))]
fn to_yaml(taskset: &PyTaskSet, notes: Option<Vec<(String, bool)>>) -> String {
    let notes: Vec<TaskNote> = notes
        .unwrap_or_default()
        .into_iter()
        .map(|(comment, sporadic)| TaskNote { comment, sporadic })
        .collect();
    rtsched_model::file::to_yaml_with(&taskset.inner, &notes)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(chain_bounds, m)?)?;
    m.add_function(wrap_pyfunction!(check_test, m)?)?;
    m.add_function(wrap_pyfunction!(tests, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_overheads, m)?)?;
    m.add_function(wrap_pyfunction!(simulated_max_response, m)?)?;
    m.add_function(wrap_pyfunction!(simulated_by, m)?)?;
    m.add_function(wrap_pyfunction!(partition_attempts, m)?)?;
    m.add_function(wrap_pyfunction!(analysis_overheads, m)?)?;
    m.add_function(wrap_pyfunction!(partition_taskset, m)?)?;
    m.add_function(wrap_pyfunction!(admission_counts_sections, m)?)?;
    m.add_function(wrap_pyfunction!(admission_terms, m)?)?;
    m.add_function(wrap_pyfunction!(to_yaml, m)?)?;
    Ok(())
}
