//! `rtsched._core`: thin wrappers over the Rust crates. The Python package (`python/rtsched`)
//! holds the user-facing API, CLI and plots; everything here converts and delegates.
//! Long calls release the GIL.

mod analysis;
mod batch;
mod jobs_out;
mod opzone;
mod policies;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rtsched_model::results::columns::Value;
use rtsched_model::results::{self, Cell, Place, RunResult};
use rtsched_model::{Format, InputError as ModelInputError, OnMiss, TaskSet};
use std::path::Path;

create_exception!(
    _core,
    InputError,
    PyValueError,
    "Bad user input: a file, task, field or option. The message names them."
);
create_exception!(
    _core,
    PrivilegeError,
    pyo3::exceptions::PyPermissionError,
    "Real-time scheduling is not permitted; nothing was run."
);
create_exception!(
    _core,
    RunFailed,
    pyo3::exceptions::PyRuntimeError,
    "A real run failed; every thread was stopped."
);

pub(crate) fn input_err(e: impl std::fmt::Display) -> PyErr {
    InputError::new_err(e.to_string())
}

/// `e` with the status word of a run that could not run (`rtsched_sweep::Status`) as its
/// `status` attribute: a comparison reports that scheduler's row so and runs the others.
fn with_status(e: PyErr, status: rtsched_sweep::Status) -> PyErr {
    Python::attach(|py| {
        // An exception instance takes attributes; failing that, the error itself still says it.
        let _ = e.value(py).setattr("status", status.name());
    });
    e
}

/// A run that could not run, as the exception of its status's exit code
/// (`rtsched_sweep::Status::exit_code`, the same for a simulated and a real run): InputError
/// (exit 2: the input must change) or RunFailed (exit 1: the run failed on the machine), with
/// the status word as its `status` attribute.
fn status_err(status: rtsched_sweep::Status, message: String) -> PyErr {
    let e = match status.exit_code() {
        1 => RunFailed::new_err(message),
        _ => InputError::new_err(message),
    };
    with_status(e, status)
}

/// A simulation's failure, its `status` from the failure's kind (never its text).
fn sim_err(e: rtsched_sim::SimError) -> PyErr {
    status_err(rtsched_sweep::Status::of(&e), e.to_string())
}

/// A real run's failure as the Python exception it raises: PrivilegeError, KeyboardInterrupt,
/// or the exception of its status (`status_err`): `partition-failed` for a set its partitioner
/// cannot place, `not-applicable` for one the backend refuses, the ledger's stops as in a
/// simulation (`deadlock`, `too-long`: `Status::stopped`), else `run-failed`.
fn run_err(e: rtsched_linux::RunError) -> PyErr {
    use rtsched_linux::RunError;
    use rtsched_sweep::Status;
    match e {
        RunError::Input(s) => status_err(Status::NotApplicable, s),
        RunError::Unplaced(s) => status_err(Status::PartitionFailed, s),
        RunError::Privilege(s) => PrivilegeError::new_err(s),
        RunError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted; every rtsched thread was stopped",
        ),
        RunError::Stopped {
            ref failure,
            source: _,
        } => status_err(Status::stopped(failure), e.to_string()),
        RunError::Failed(s) => status_err(Status::RunFailed, s),
    }
}

pub(crate) fn io_err(path: &str, e: std::io::Error) -> PyErr {
    InputError::new_err(format!("{path}: cannot write: {e}"))
}

/// A validated task set.
#[pyclass(name = "TaskSet", module = "rtsched._core", frozen)]
#[derive(Clone)]
pub struct PyTaskSet {
    pub inner: TaskSet,
}

#[pymethods]
impl PyTaskSet {
    #[getter]
    fn source(&self) -> String {
        self.inner.source.clone()
    }
    #[getter]
    fn cpus(&self) -> u32 {
        self.inner.platform.cpus
    }
    #[getter]
    fn duration_ns(&self) -> u64 {
        self.inner.run.duration
    }
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.run.seed
    }
    /// The most jobs a run of this set counts (released in [0, duration)), known before it runs.
    #[getter]
    fn estimated_jobs(&self) -> u64 {
        self.inner.jobs_released_by(self.inner.run.duration)
    }
    /// The pre-run estimate of a run's work under `scheduler` (`rtsched_sim::estimate`):
    /// (decisions, tick events, steps per decision, steps, threads ready at once).
    fn estimated_work(&self, scheduler: &str) -> PyResult<(u64, u64, u64, u64, u64)> {
        let e = rtsched_sim::estimate_spec(&self.inner, scheduler).map_err(sim_err)?;
        Ok((e.decisions, e.ticks, e.per_decision, e.steps, e.threads))
    }
    /// Bytes one per-job record takes in memory (the run holds one per counted job).
    #[getter]
    fn job_record_bytes(&self) -> usize {
        std::mem::size_of::<rtsched_model::results::JobRecord>()
    }
    /// The set's chains by name (docs/chains.md).
    #[getter]
    fn chain_names(&self) -> Vec<String> {
        self.inner.chains.iter().map(|c| c.name.clone()).collect()
    }
    /// Whether some task is best-effort (scheduled by `cfs` beside the real-time ones).
    #[getter]
    fn has_fair_tasks(&self) -> bool {
        self.inner.tasks.iter().any(|t| t.is_fair())
    }
    /// Whether some task names a Linux policy, or the set a default one (`policy`,
    /// `run.default_policy`): a set written for the class stack (`linux`).
    #[getter]
    fn has_policies(&self) -> bool {
        self.inner.has_policies()
    }
    /// `run.default_policy` (deadline, fifo, rr, other), or None.
    #[getter]
    fn default_policy(&self) -> Option<&'static str> {
        self.inner.run.default_policy.map(|p| p.name())
    }
    #[getter]
    fn on_miss(&self) -> &'static str {
        match self.inner.run.on_miss {
            OnMiss::Continue => "continue",
            OnMiss::Abort => "abort",
        }
    }
    /// The platform's caches and NUMA nodes in one line, or None if not given.
    #[getter]
    fn topology(&self) -> Option<String> {
        self.inner.platform.topology.as_ref().map(|t| t.describe())
    }
    /// The overheads charged (`run.overheads`) in one line, or None if none are.
    #[getter]
    fn overheads(&self) -> Option<String> {
        let o = &self.inner.run.overheads;
        if !o.any() {
            return None;
        }
        let d = rtsched_model::time::fmt_duration;
        let mut s = format!(
            "decision {}, context switch {}, migration {}, release {}, tick {} every {}, abort handler {}",
            d(o.decision),
            d(o.context_switch),
            d(o.migration),
            d(o.release),
            d(o.tick),
            d(o.tick_period),
            d(o.abort_handler)
        );
        if let Some(p) = &o.profile {
            s.push_str(&format!(" (profile {p}, {})", o.statistic.name()));
        }
        Some(s)
    }
    /// The cache model's parameters in one line, or None if it is off.
    #[getter]
    fn cache(&self) -> Option<String> {
        let c = &self.inner.run.cache;
        c.enabled.then(|| {
            let ns = |ps: u64| format!("{}", ps as f64 / 1000.0);
            format!(
                "per line: L2 {} ns, L3 {} ns, other core's cache {} ns, other node's cache {} ns, memory {} ns, remote memory {} ns; {} pass(es) per job",
                ns(c.l2_ps),
                ns(c.l3_ps),
                ns(c.remote_cache_ps),
                ns(c.remote_node_ps),
                ns(c.memory_ps),
                ns(c.remote_memory_ps),
                c.passes
            )
        })
    }
    /// Whether any task carries a time-utility function.
    #[getter]
    fn has_tufs(&self) -> bool {
        self.inner.has_tufs()
    }
    /// A cycle of nested critical sections that can deadlock, described, or None.
    #[getter]
    fn lock_order_cycle(&self) -> Option<String> {
        self.inner.lock_order_cycle()
    }
    #[getter]
    fn utilization(&self) -> f64 {
        self.inner.utilization()
    }
    /// Names of the resources critical sections use.
    #[getter]
    fn resources(&self) -> Vec<String> {
        self.inner.resources.clone()
    }
    #[getter]
    fn task_names(&self) -> Vec<String> {
        self.inner.tasks.iter().map(|t| t.name.clone()).collect()
    }
    /// The tasks as a list of dicts (times in ns).
    fn tasks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for t in &self.inner.tasks {
            let d = PyDict::new(py);
            d.set_item("name", &t.name)?;
            d.set_item("period_ns", t.period)?;
            d.set_item("max_interarrival_ns", t.max_interarrival)?;
            d.set_item("deadline_ns", t.deadline)?;
            d.set_item("wcet_ns", t.wcet)?;
            // What a job takes alone on enough CPUs (`Task::critical_path`): its WCET when
            // sequential, the sum of each region's longest thread, a DAG's longest path.
            d.set_item("critical_path_ns", t.critical_path())?;
            d.set_item("offset_ns", t.offset)?;
            d.set_item("priority", t.priority)?;
            d.set_item("cpu", t.cpu)?;
            d.set_item("utilization", t.utilization())?;
            d.set_item("fair", t.is_fair())?;
            // The Linux policy the task names (None: the set's default) and the one it runs
            // under (`Task::sched_policy`), with a deadline task's runtime (None: its WCET) and
            // an other task's nice.
            d.set_item("policy", t.policy.map(|p| p.kind().name()))?;
            // A best-effort task's behaviour: (kind, (run min, max), (sleep min, max)) in ns.
            d.set_item(
                "behaviour",
                t.fair_params().map(|f| match f.behaviour {
                    rtsched_model::Behaviour::Hog => ("hog", (0, 0), (0, 0)),
                    rtsched_model::Behaviour::Sleeper { run, sleep } => {
                        ("sleeper", (run, run), (sleep, sleep))
                    }
                    rtsched_model::Behaviour::Bursty { run, sleep } => ("bursty", run, sleep),
                }),
            )?;
            let eff = t.sched_policy(self.inner.run.default_policy);
            d.set_item("sched_policy", eff.kind().name())?;
            d.set_item(
                "runtime_ns",
                match eff {
                    rtsched_model::SchedPolicy::Deadline { runtime } => runtime,
                    _ => None,
                },
            )?;
            d.set_item(
                "nice",
                match eff {
                    rtsched_model::SchedPolicy::Other { nice } => Some(nice),
                    _ => None,
                },
            )?;
            // Regions as lists of thread WCETs (ns); empty for a sequential task.
            d.set_item(
                "regions",
                t.regions
                    .iter()
                    .map(|r| r.threads.clone())
                    .collect::<Vec<_>>(),
            )?;
            // A DAG task's graph: {"nodes": [[name, wcet_ns], ...], "edges": [[from, to], ...]}
            // (edges as node indices); None for a task without one.
            match &t.dag {
                Some(g) => {
                    let x = PyDict::new(py);
                    x.set_item(
                        "nodes",
                        g.nodes
                            .iter()
                            .map(|n| (n.name.clone(), n.wcet))
                            .collect::<Vec<_>>(),
                    )?;
                    x.set_item("edges", g.edges.clone())?;
                    x.set_item("critical_path_ns", g.critical_path())?;
                    d.set_item("dag", x)?;
                }
                None => d.set_item("dag", py.None())?,
            }
            let secs = PyList::empty(py);
            for s in &t.sections {
                let x = PyDict::new(py);
                x.set_item("resource", &self.inner.resources[s.resource as usize])?;
                x.set_item("region", s.region)?;
                x.set_item("thread", s.thread)?;
                x.set_item("start_ns", s.start)?;
                x.set_item("length_ns", s.length)?;
                secs.append(x)?;
            }
            d.set_item("sections", secs)?;
            // An event-triggered task's trigger (docs/chains.md): {"tasks": [names], "all":
            // bool}, None for a periodic or sporadic task; a self-suspending task's
            // suspensions as [(lo_ns, hi_ns)] between its run segments (`regions`).
            let name = |id: &u32| self.inner.tasks[*id as usize].name.clone();
            match &t.trigger {
                Some(g) => {
                    let x = PyDict::new(py);
                    x.set_item("tasks", g.tasks.iter().map(name).collect::<Vec<_>>())?;
                    x.set_item("all", g.all)?;
                    d.set_item("trigger", x)?;
                }
                None => d.set_item("trigger", py.None())?,
            }
            d.set_item(
                "suspensions",
                t.suspensions
                    .iter()
                    .map(|s| (s.lo, s.hi))
                    .collect::<Vec<_>>(),
            )?;
            list.append(d)?;
        }
        Ok(list)
    }
    /// The set's chains as dicts: name, tasks (names), communication ("implicit", "let" or
    /// None for an event chain), deadline_ns (None without one).
    fn chains<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for c in &self.inner.chains {
            let d = PyDict::new(py);
            d.set_item("name", &c.name)?;
            let tasks: Vec<&str> = c
                .tasks
                .iter()
                .map(|id| self.inner.tasks[*id as usize].name.as_str())
                .collect();
            d.set_item("tasks", tasks)?;
            d.set_item("communication", c.communication.map(|m| m.name()))?;
            d.set_item("deadline_ns", c.deadline)?;
            list.append(d)?;
        }
        Ok(list)
    }
    /// The stretches of work in which thread (`region`, `thread`) of task `task` (its index)
    /// holds a resource when its actual demand is `demand_ns`: `[(resource index, from, to)]`
    /// in ns of the thread's work, scaled as the ledger scales its checkpoints
    /// (`ThreadProgram::held`); empty for a thread without critical sections. A DAG node is
    /// asked as its intervals record it: region `DAG_REGION`, thread = the node's index.
    fn held_work(
        &self,
        task: usize,
        region: u32,
        thread: u32,
        demand_ns: u64,
    ) -> Vec<(u32, u64, u64)> {
        let Some(t) = self.inner.tasks.get(task) else {
            return Vec::new();
        };
        // The ledger's reading of a record's region: a DAG's nodes are its program's one region.
        let region = if region == rtsched_policies::DAG_REGION {
            0
        } else {
            region
        };
        t.program()
            .regions
            .get(region as usize)
            .and_then(|r| r.get(thread as usize))
            .map_or_else(Vec::new, |tp| tp.held(demand_ns))
    }
    /// A copy with run options replaced.
    #[pyo3(signature = (duration_ns=None, seed=None, on_miss=None))]
    fn with_run(
        &self,
        duration_ns: Option<u64>,
        seed: Option<u64>,
        on_miss: Option<&str>,
    ) -> PyResult<PyTaskSet> {
        let ts = rtsched_model::file::with_run(&self.inner, duration_ns, seed, on_miss)
            .map_err(input_err)?;
        Ok(PyTaskSet { inner: ts })
    }
    /// A copy whose execution model, overheads and cache model are those of `run` (JSON text
    /// of a task file's `run:` mapping; what it leaves out takes the default) and whose
    /// platform topology is `topology` (JSON text of `platform.topology`: a preset name or a
    /// mapping). Read exactly as a task file named `source` reads them, so errors name
    /// `source` and the field, and a relative overhead profile is read beside `source`.
    #[pyo3(signature = (run=None, topology=None, source="<options>"))]
    fn with_options(
        &self,
        run: Option<&str>,
        topology: Option<&str>,
        source: &str,
    ) -> PyResult<PyTaskSet> {
        let ts = rtsched_model::file::with_options(&self.inner, run, topology, source)
            .map_err(input_err)?;
        Ok(PyTaskSet { inner: ts })
    }
    fn __repr__(&self) -> String {
        format!(
            "<TaskSet {} : {} tasks on {} CPUs, U={:.3}>",
            self.inner.source,
            self.inner.tasks.len(),
            self.inner.platform.cpus,
            self.inner.utilization()
        )
    }
}

/// The results of one run (simulated or real), in the one results schema.
#[pyclass(name = "RunResult", module = "rtsched._core", frozen)]
pub struct PyRunResult {
    pub inner: RunResult,
    /// The policy's own operation counters, of a simulation asked for them (else empty).
    pub policy_stats: Vec<(String, f64)>,
}

#[pymethods]
impl PyRunResult {
    #[getter]
    fn scheduler(&self) -> String {
        self.inner.scheduler.clone()
    }
    #[getter]
    fn substrate(&self) -> String {
        self.inner.substrate.clone()
    }
    #[getter]
    fn cpus(&self) -> u32 {
        self.inner.cpus
    }
    #[getter]
    fn end_ns(&self) -> u64 {
        self.inner.end
    }
    #[getter]
    fn task_names(&self) -> Vec<String> {
        self.inner.task_names.clone()
    }
    /// Substrate-specific measurements (real runs).
    #[getter]
    fn measurements(&self) -> std::collections::BTreeMap<String, f64> {
        self.inner.measurements.clone()
    }
    /// The results document as JSON text (with per-job records if `jobs`).
    #[pyo3(signature = (jobs=false))]
    fn to_json(&self, jobs: bool) -> String {
        self.inner.to_json_value(jobs).to_string()
    }
    /// The results document (header, summaries, counters; per-job records if `jobs`) as
    /// Python objects, built here: the values `json.loads(to_json(jobs))` gives, without the
    /// text in between.
    #[pyo3(signature = (jobs=false))]
    fn document<'py>(&self, py: Python<'py>, jobs: bool) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.inner.to_json_value(jobs))
    }
    /// The policy's own operation counters (pushes, pulls, find-CPU calls; ns per operation
    /// for specs with `measure`) as (name, value), of a simulation run with `policy_stats`.
    #[getter]
    fn policy_stats(&self) -> Vec<(String, f64)> {
        self.policy_stats.clone()
    }
    /// Counted jobs, whether their records are held or were streamed away.
    #[getter]
    fn job_count(&self) -> u64 {
        self.inner.job_count()
    }
    /// Whether the per-job records are held (false: streamed to a file or only summarised).
    #[getter]
    fn jobs_held(&self) -> bool {
        self.inner.streamed.is_none()
    }
    /// Whether the chain instances' records are held (false: streamed into the chains'
    /// summaries as each was made).
    #[getter]
    fn chains_held(&self) -> bool {
        self.inner.chain_summaries.is_none()
    }
    /// Per-job records as columns (dict of lists), for a DataFrame: the CSV's columns (the
    /// catalogue's per-job columns) but `scheduler`.
    fn jobs_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.inner;
        let d = PyDict::new(py);
        for c in results::job_columns() {
            let list = PyList::empty(py);
            match c.value {
                Value::Scheduler => continue,
                Value::Task => {
                    for j in &r.jobs {
                        list.append(r.task_names[j.task as usize].as_str())?;
                    }
                }
                Value::Job(f) => {
                    for j in &r.jobs {
                        list.append(cell_to_python(py, f(j, r.end))?)?;
                    }
                }
                _ => unreachable!("{}: not a job's column", c.name),
            }
            d.set_item(c.name, list)?;
        }
        Ok(d)
    }
    /// Chain instances' records as columns (dict of lists; the catalogue's chain columns), for
    /// a DataFrame: None where a metric does not apply (docs/chains.md).
    fn chains_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.inner;
        let d = PyDict::new(py);
        for c in results::chain_columns() {
            if matches!(c.value, Value::Scheduler) {
                continue;
            }
            let list = PyList::empty(py);
            for x in &r.chains {
                list.append(cell_to_python(py, results::chain_cell(c, r, x))?)?;
            }
            d.set_item(c.name, list)?;
        }
        Ok(d)
    }
    /// The value of every column of the catalogue this run gives as one value (its total
    /// summary's, its counters', its measurements'; `_core.columns()`), by name: None where the
    /// run could not measure it (`unmeasured`) or has none.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.inner;
        let total = r.total_summary();
        let d = PyDict::new(py);
        for c in results::COLUMNS {
            if matches!(c.value, Value::Summary(_) | Value::Run(_)) {
                if let Some(v) = c.of_run(r, &total) {
                    d.set_item(c.name, cell_to_python(py, v)?)?;
                }
            }
        }
        Ok(d)
    }
    /// The columns this run could not measure (null in its document, None in `values()`), as
    /// its driver said: a run without a job ledger deciding every dispatch lists the ledger's
    /// counters.
    #[getter]
    fn unmeasured(&self) -> Vec<&'static str> {
        self.inner.unmeasured.to_vec()
    }
    /// Execution intervals as columns (recorded only if the run asked for them).
    fn intervals_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let iv = &self.inner.intervals;
        let names = &self.inner.task_names;
        let d = PyDict::new(py);
        d.set_item("cpu", iv.iter().map(|x| x.cpu).collect::<Vec<_>>())?;
        d.set_item(
            "task",
            iv.iter()
                .map(|x| names[x.task as usize].as_str())
                .collect::<Vec<_>>(),
        )?;
        d.set_item("job", iv.iter().map(|x| x.job).collect::<Vec<_>>())?;
        d.set_item("region", iv.iter().map(|x| x.region).collect::<Vec<_>>())?;
        d.set_item("thread", iv.iter().map(|x| x.thread).collect::<Vec<_>>())?;
        d.set_item("demand_ns", iv.iter().map(|x| x.demand).collect::<Vec<_>>())?;
        // A set with DAG tasks: each interval's node name (None for a task without a DAG).
        let nodes = &self.inner.node_names;
        if nodes.iter().any(|n| !n.is_empty()) {
            d.set_item(
                "node",
                iv.iter()
                    .map(|x| {
                        nodes[x.task as usize]
                            .get(x.thread as usize)
                            .map(String::as_str)
                    })
                    .collect::<Vec<_>>(),
            )?;
        }
        d.set_item("start_ns", iv.iter().map(|x| x.start).collect::<Vec<_>>())?;
        d.set_item("end_ns", iv.iter().map(|x| x.end).collect::<Vec<_>>())?;
        d.set_item(
            "overhead_ns",
            iv.iter().map(|x| x.overhead).collect::<Vec<_>>(),
        )?;
        Ok(d)
    }
    fn __repr__(&self) -> String {
        let s = self.inner.summaries().total;
        format!(
            "<RunResult {} ({}): {} jobs, {} missed>",
            self.inner.scheduler, self.inner.substrate, s.jobs, s.missed
        )
    }
}

/// A column's value as a Python object (what the results document's JSON reads back as).
fn cell_to_python<'py>(py: Python<'py>, c: Cell<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Cell::Null => py.None().into_bound(py),
        Cell::Uint(v) => v.into_pyobject(py)?.into_any(),
        Cell::Int(v) => v.into_pyobject(py)?.into_any(),
        Cell::Float(v) => v.into_pyobject(py)?.into_any(),
        Cell::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Cell::Text(v) => v.into_pyobject(py)?.into_any(),
        Cell::Cpus(set) => PyList::new(py, set.iter().collect::<Vec<u32>>())?.into_any(),
        Cell::Object(v) => to_python(py, &v)?,
    })
}

/// The column catalogue as data (`rtsched_model::results::columns`): one dict per column, of
/// `place` ("job", "task", "run", "row", "table") in that place's order, or every column in
/// the catalogue's order. Each: `name`, `kind` (int, float, bool, text, cpus, object), `unit`,
/// `nullable`, `meaning`, `at` (the places), `measured` (what measures it: always, ledger,
/// cache-model, overheads, pmu, timed, given), `doc` (where the results document holds it in
/// its object: `name`, `misses[2]`, `hw.cycles`, or None), `source` (what its value is read
/// from: scheduler, task, job, summary, run, sweep), and `table` (None, or the comparison
/// table's `header`, `aliases`, `rank`, `show` as (when, column), `fmt`). An unknown place
/// raises InputError.
#[pyfunction]
#[pyo3(signature = (place=None))]
fn columns<'py>(py: Python<'py>, place: Option<&str>) -> PyResult<Bound<'py, PyList>> {
    use results::columns::Show;
    let cols: Vec<&results::Column> = match place {
        None => results::COLUMNS.iter().collect(),
        Some(p) => results::columns::columns(Place::parse(p).ok_or_else(|| {
            input_err(format!(
                "unknown place '{p}' (job, task, run, row, table or chain)"
            ))
        })?),
    };
    let out = PyList::empty(py);
    for c in cols {
        let d = PyDict::new(py);
        d.set_item("name", c.name)?;
        d.set_item("kind", format!("{:?}", c.kind).to_lowercase())?;
        d.set_item("unit", format!("{:?}", c.unit).to_lowercase())?;
        d.set_item("nullable", c.nullable)?;
        d.set_item("meaning", c.meaning)?;
        let at = Place::ALL.into_iter().filter(|p| c.is_at(*p));
        d.set_item("at", at.map(Place::name).collect::<Vec<_>>())?;
        d.set_item("measured", c.measured.name())?;
        d.set_item("doc", c.doc_path())?;
        d.set_item("source", c.value.source())?;
        match &c.table {
            None => d.set_item("table", py.None())?,
            Some(t) => {
                let x = PyDict::new(py);
                x.set_item("header", t.header)?;
                x.set_item("aliases", t.aliases.to_vec())?;
                x.set_item("rank", t.rank)?;
                let show: (&str, Option<&str>) = match t.show {
                    Show::Always => ("always", None),
                    Show::IfAny(n) => ("any", Some(n)),
                    Show::IfNotOne(n) => ("not-one", Some(n)),
                    Show::IfBelowOne(n) => ("below-one", Some(n)),
                    Show::IfPresent(n) => ("present", Some(n)),
                    Show::OnRequest => ("on-request", None),
                };
                x.set_item("show", show)?;
                x.set_item("fmt", format!("{:?}", t.fmt).to_lowercase())?;
                d.set_item("table", x)?;
            }
        }
        out.append(d)?;
    }
    Ok(out)
}

/// A JSON value as the Python object `json.loads` makes of its text.
fn to_python<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().expect("a number").into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_python(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_python(py, x)?)?;
            }
            d.into_any()
        }
    })
}

#[pyfunction]
fn load_taskset(py: Python<'_>, path: &str) -> PyResult<PyTaskSet> {
    let ts = py
        .detach(|| rtsched_model::load_taskset(path))
        .map_err(|e: ModelInputError| input_err(e))?;
    Ok(PyTaskSet { inner: ts })
}

/// Parse task-set text; `format` is "yaml" or "json".
#[pyfunction]
#[pyo3(signature = (text, format="yaml", source="<string>"))]
fn parse_taskset(text: &str, format: &str, source: &str) -> PyResult<PyTaskSet> {
    let f = match format {
        "yaml" | "yml" => Format::Yaml,
        "json" => Format::Json,
        o => return Err(input_err(format!("unknown format '{o}' (yaml or json)"))),
    };
    Ok(PyTaskSet {
        inner: rtsched_model::parse_taskset(text, f, source).map_err(input_err)?,
    })
}

/// A duration as written in files ("250us", "10ms", "2s", or a number string in ms) to ns.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<u64> {
    rtsched_model::time::parse_duration_str(text).map_err(input_err)
}

/// A duration in ns for reading (`time::fmt_duration_rounded`): in the largest unit in which
/// it is at least 1, to `digits` significant digits ("1.5ms", "33.3333ms", "250us").
#[pyfunction]
#[pyo3(signature = (ns, digits=6))]
fn format_duration(ns: u64, digits: usize) -> String {
    rtsched_model::time::fmt_duration_rounded(ns, digits)
}

/// `ns` as a number of `unit` ("ns", "us", "ms", "s"; `time::fmt_duration_in`): `decimals`
/// places, or six significant digits when None ("1.235", "1.23457"). `ns` may be fractional
/// (a mean over jobs).
#[pyfunction]
#[pyo3(signature = (ns, unit, decimals=None))]
fn format_duration_in(ns: f64, unit: &str, decimals: Option<usize>) -> PyResult<String> {
    let unit_ns = rtsched_model::time::unit_ns(unit)
        .filter(|_| !unit.is_empty())
        .ok_or_else(|| PyValueError::new_err(format!("unknown unit '{unit}'")))?;
    Ok(rtsched_model::time::fmt_duration_in(ns, unit_ns, decimals))
}

/// Simulate `taskset` under `scheduler` (`rtsched_sim::simulate`, its options as keywords);
/// releases the GIL while it runs. `record_intervals`: keep the execution intervals.
/// `measure_policy`: time every decision of the policy (measurements `policy_ns_*`).
/// `keep_jobs`: hold every per-job record in the result (else only the summaries, built as
/// each job is decided, so memory stays bounded); `parquet`, `csv`: also stream each record
/// into these open files as it is decided (implies not holding them); `chains_csv`: each chain
/// record into this open file as it is made (implies not holding them either). `policy_stats`:
/// keep the policy's own counters (the result's `policy_stats`).
#[pyfunction]
#[pyo3(signature = (taskset, scheduler, record_intervals=false, measure_policy=false, keep_jobs=true, parquet=None, csv=None, policy_stats=false, chains_csv=None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    taskset: &PyTaskSet,
    scheduler: &str,
    record_intervals: bool,
    measure_policy: bool,
    keep_jobs: bool,
    parquet: Option<PyRefMut<'_, jobs_out::PyJobsParquetFile>>,
    csv: Option<PyRefMut<'_, jobs_out::PyJobsCsvFile>>,
    policy_stats: bool,
    chains_csv: Option<PyRefMut<'_, jobs_out::PyChainsCsvFile>>,
) -> PyResult<PyRunResult> {
    let ts = &taskset.inner;
    let mut stats = Vec::new();
    let r = if parquet.is_some() || csv.is_some() || chains_csv.is_some() {
        let files = jobs_out::Files(parquet, csv, chains_csv);
        jobs_out::streamed_into(files, scheduler, ts, |sink| {
            // The sink lives in this call only, so the options are built in it.
            let options = rtsched_sim::Options::spec(scheduler)
                .intervals(record_intervals)
                .measure_policy(measure_policy)
                .policy_stats(policy_stats)
                .records(rtsched_sim::Records::Summarised(Some(sink)));
            py.detach(|| rtsched_sim::simulate(ts, options))
                .map(|o| {
                    stats = o.stats;
                    o.result
                })
                .map_err(sim_err)
        })?
    } else {
        let options = rtsched_sim::Options::spec(scheduler)
            .intervals(record_intervals)
            .measure_policy(measure_policy)
            .policy_stats(policy_stats)
            .records(if keep_jobs {
                rtsched_sim::Records::Held
            } else {
                rtsched_sim::Records::Summarised(None)
            });
        let o = py
            .detach(|| rtsched_sim::simulate(ts, options))
            .map_err(sim_err)?;
        stats = o.stats;
        o.result
    };
    Ok(PyRunResult {
        inner: r,
        policy_stats: stats,
    })
}

/// Run `taskset` for real on `backend` (kernel:deadline, kernel:fifo, kernel:other,
/// testbed:POLICY); releases the GIL. Ctrl-C stops every thread and raises KeyboardInterrupt.
/// `keep_jobs`: hold every per-job record in the result (else only the summaries, built as
/// each job ends, so memory stays bounded whatever the duration); `parquet`: also write each
/// record into this open [`jobs_out::PyJobsParquetFile`] as its job ends (implies not holding),
/// as `csv` (a JobsCsvFile); `chains_csv`: each chain record into this open ChainsCsvFile as it
/// is made (docs/chains.md "Long runs").
#[pyfunction]
#[pyo3(signature = (taskset, backend, allow_overload=false, model="stw", record_intervals=true, keep_jobs=true, parquet=None, csv=None, chains_csv=None))]
#[allow(clippy::too_many_arguments)] // the Python function's keyword arguments, one by one
fn run_real(
    py: Python<'_>,
    taskset: &PyTaskSet,
    backend: &str,
    allow_overload: bool,
    model: &str,
    record_intervals: bool,
    keep_jobs: bool,
    parquet: Option<PyRefMut<'_, jobs_out::PyJobsParquetFile>>,
    csv: Option<PyRefMut<'_, jobs_out::PyJobsCsvFile>>,
    chains_csv: Option<PyRefMut<'_, jobs_out::PyChainsCsvFile>>,
) -> PyResult<PyRunResult> {
    let model = match model {
        "stw" | "stop-the-world" => rtsched_linux::GlobalModel::StopTheWorld,
        "concurrent" | "application-concurrent" => rtsched_linux::GlobalModel::Concurrent,
        o => {
            return Err(input_err(format!(
                "unknown global model '{o}' (stw or concurrent)"
            )))
        }
    };
    let opts = rtsched_linux::RunOptions {
        allow_overload,
        model,
        record_intervals,
    };
    let ts = &taskset.inner;
    let r = if parquet.is_some() || csv.is_some() || chains_csv.is_some() {
        let label = rtsched_linux::scheduler_label(ts, backend).map_err(run_err)?;
        // The run's own error is kept apart from the files' (a failed run ends no file's run).
        let mut failed = None;
        let files = jobs_out::Files(parquet, csv, chains_csv);
        let r = jobs_out::streamed_into(files, &label, ts, |sink| {
            py.detach(|| rtsched_linux::run_streamed(ts, backend, &opts, Some(sink)))
                .map_err(|e| {
                    failed = Some(e);
                    pyo3::exceptions::PyRuntimeError::new_err("")
                })
        });
        match (r, failed) {
            (_, Some(e)) => Err(e),
            (Ok(r), None) => Ok(r),
            (Err(e), None) => return Err(e),
        }
    } else if !keep_jobs {
        py.detach(|| rtsched_linux::run_streamed(ts, backend, &opts, None))
    } else {
        py.detach(|| rtsched_linux::run(ts, backend, &opts))
    };
    match r {
        Ok(r) => Ok(PyRunResult {
            inner: r,
            policy_stats: Vec::new(),
        }),
        Err(e) => Err(run_err(e)),
    }
}

/// Check, without running, that `backend` runs `taskset`: the backend is parsed and its policy
/// built for the set (no privilege needed). Raises the InputError the run would, with its
/// `status` (`partition-failed`, `not-applicable`).
#[pyfunction]
fn check_backend(taskset: &PyTaskSet, backend: &str) -> PyResult<()> {
    rtsched_linux::scheduler_label(&taskset.inner, backend)
        .map(|_| ())
        .map_err(run_err)
}

/// Cyclictest-like wake-up latency probe: `(start_ns, samples)`, per CPU the latency of every
/// cycle in ns, cycle `i` due at `start_ns + (i + 1) * interval_ns` on CLOCK_MONOTONIC.
/// `pm_qos`: hold /dev/cpu_dma_latency at 0 while probing (as cyclictest does).
#[pyfunction]
#[pyo3(signature = (duration_ns, interval_ns=1_000_000, priority=80, cpus=None, pm_qos=true))]
fn latency_probe(
    py: Python<'_>,
    duration_ns: u64,
    interval_ns: u64,
    priority: u32,
    cpus: Option<Vec<usize>>,
    pm_qos: bool,
) -> PyResult<(u64, Vec<Vec<u64>>)> {
    match py
        .detach(|| rtsched_linux::latency::probe(duration_ns, interval_ns, priority, cpus, pm_qos))
    {
        Ok(r) => Ok((r.start, r.samples)),
        Err(e) => Err(run_err(e)),
    }
}

/// Measure this machine's overheads (`rtsched calibrate`): `backend` "testbed[:POLICY]" or
/// "kernel", `samples` per cost, `wss` the migration benchmark's working set ("256KiB").
/// `progress(stage, done, total)` is called from the calling thread while it runs. Returns the
/// profile as YAML and notes on what else was measured, as (name, text).
#[pyfunction]
#[pyo3(signature = (backend="testbed", samples=2000, wss="256KiB", progress=None))]
fn calibrate(
    py: Python<'_>,
    backend: &str,
    samples: usize,
    wss: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, Vec<(String, String)>)> {
    use rtsched_linux::calibrate as cal;
    let backend = cal::Backend::parse(backend).map_err(input_err)?;
    let wss = rtsched_model::text::parse_size(wss).map_err(|e| input_err(format!("--wss: {e}")))?;
    let opts = cal::Options {
        backend,
        samples,
        wss,
    };
    let mut report = |stage: &str, done: u64, total: u64| {
        if let Some(cb) = &progress {
            // A failing progress callback must not stop a measurement.
            let _ = Python::attach(|py| cb.call1(py, (stage, done, total)));
        }
    };
    match py.detach(|| cal::calibrate(&opts, &mut report)) {
        Ok(c) => Ok((c.profile.to_yaml(), c.notes)),
        Err(e) => Err(run_err(e)),
    }
}

/// Real-run backends: (name, summary).
#[pyfunction]
fn backends() -> Vec<(&'static str, &'static str)> {
    rtsched_linux::BACKENDS.to_vec()
}

/// The SCHED_DEADLINE runtimes (ns) `kernel:deadline` reserves for each task of `taskset`,
/// one per thread lane: the lane's work per job plus an allowance of 10% (at least 250 us),
/// capped at the deadline (docs/real-runs.md, "Departures"). A job whose thread is charged more
/// CPU time than that in a period is throttled to the next one.
#[pyfunction]
fn sched_deadline_runtimes(taskset: &PyTaskSet) -> Vec<Vec<u64>> {
    taskset
        .inner
        .tasks
        .iter()
        .map(rtsched_linux::kernel::dl_runtimes)
        .collect()
}

/// The SCHED_DEADLINE runtimes (ns) each task reserves under its Linux policy (`linux`,
/// `kernel:linux`): one per thread lane, its `runtime` or else its WCET (a parallel task: each
/// lane's work per job); empty for a task under another policy. Raises InputError for a
/// `runtime` given to a parallel task.
#[pyfunction]
fn linux_runtimes(taskset: &PyTaskSet) -> PyResult<Vec<Vec<u64>>> {
    let ts = &taskset.inner;
    (0..ts.tasks.len())
        .map(|i| match ts.sched_policy(i as u32) {
            rtsched_model::SchedPolicy::Deadline { runtime } => {
                rtsched_policies::linux::lane_runtimes(&ts.tasks[i], runtime).map_err(|e| {
                    input_err(format!("{}: task '{}': {e}", ts.source, ts.tasks[i].name))
                })
            }
            _ => Ok(Vec::new()),
        })
        .collect()
}

/// Split a scheduler spec (`NAME[:OPTION,KEY=VALUE,...]`) the way the core does: (name,
/// [(key, value)]), a bare option with key "". An unknown name raises InputError (with a
/// did-you-mean hint); options are checked by the policy itself, not here.
#[pyfunction]
fn parse_scheduler(spec: &str) -> PyResult<(String, Vec<(String, String)>)> {
    let s = rtsched_policies::SchedulerSpec::parse(spec).map_err(input_err)?;
    Ok((s.name, s.options))
}

pub(crate) fn runs_of<'py>(list: &Bound<'py, PyList>) -> PyResult<Vec<PyRef<'py, PyRunResult>>> {
    list.iter()
        .map(|x| x.extract::<PyRef<'_, PyRunResult>>().map_err(PyErr::from))
        .collect()
}

/// Write the results document(s) to `path` as JSON, atomically; with `jobs`, each run's
/// per-job records too, streamed; `not_run`: (scheduler, substrate, status, error) of each
/// scheduler of the comparison that could not run.
#[pyfunction]
#[pyo3(signature = (runs, path, jobs=false, not_run=Vec::new()))]
fn write_results_json(
    py: Python<'_>,
    runs: &Bound<'_, PyList>,
    path: &str,
    jobs: bool,
    not_run: Vec<(String, String, String, String)>,
) -> PyResult<()> {
    let refs = runs_of(runs)?;
    let v: Vec<&RunResult> = refs.iter().map(|r| &r.inner).collect();
    let not_run: Vec<results::NotRun> = not_run
        .into_iter()
        .map(|(scheduler, substrate, status, error)| results::NotRun {
            scheduler,
            substrate,
            status,
            error,
        })
        .collect();
    py.detach(|| {
        results::write_atomic(Path::new(path), |w| {
            results::write_results_json(&v, &not_run, jobs, w)
        })
    })
    .map_err(|e| io_err(path, e))
}

/// Write the chain instances of every run to one CSV, atomically (`--chains-csv`).
#[pyfunction]
fn write_chains_csv(py: Python<'_>, runs: &Bound<'_, PyList>, path: &str) -> PyResult<()> {
    let refs = runs_of(runs)?;
    let v: Vec<&RunResult> = refs.iter().map(|r| &r.inner).collect();
    py.detach(|| results::write_atomic(Path::new(path), |w| results::write_chains_csv(&v, w)))
        .map_err(|e| io_err(path, e))
}

/// Write per-job records of every run to one CSV, atomically.
#[pyfunction]
fn write_jobs_csv(py: Python<'_>, runs: &Bound<'_, PyList>, path: &str) -> PyResult<()> {
    let refs = runs_of(runs)?;
    let v: Vec<&RunResult> = refs.iter().map(|r| &r.inner).collect();
    py.detach(|| results::write_atomic(Path::new(path), |w| results::write_jobs_csv(&v, w)))
        .map_err(|e| io_err(path, e))
}

/// Write a Chrome/Perfetto trace of every run (one process per run, one track per CPU).
#[pyfunction]
fn write_trace(py: Python<'_>, runs: &Bound<'_, PyList>, path: &str) -> PyResult<()> {
    let refs = runs_of(runs)?;
    let v: Vec<&RunResult> = refs.iter().map(|r| &r.inner).collect();
    py.detach(|| results::write_atomic(Path::new(path), |w| results::write_trace(&v, w)))
        .map_err(|e| io_err(path, e))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("PrivilegeError", m.py().get_type::<PrivilegeError>())?;
    m.add("RunFailed", m.py().get_type::<RunFailed>())?;
    m.add_function(wrap_pyfunction!(run_real, m)?)?;
    m.add_function(wrap_pyfunction!(check_backend, m)?)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(sched_deadline_runtimes, m)?)?;
    m.add_function(wrap_pyfunction!(linux_runtimes, m)?)?;
    m.add_function(wrap_pyfunction!(latency_probe, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_class::<PyTaskSet>()?;
    m.add_class::<PyRunResult>()?;
    m.add_function(wrap_pyfunction!(load_taskset, m)?)?;
    m.add_function(wrap_pyfunction!(parse_taskset, m)?)?;
    m.add("DEFAULT_MAX_WORK", rtsched_sim::DEFAULT_MAX_WORK)?;
    m.add("TEST_PREFIX", rtsched_sweep::TEST_PREFIX)?;
    m.add("LOCKING_SEP", rtsched_sweep::LOCKING_SEP.to_string())?;
    m.add("LOCKING_PROTOCOLS", rtsched_model::Protocol::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration_in, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(write_results_json, m)?)?;
    m.add_function(wrap_pyfunction!(write_jobs_csv, m)?)?;
    m.add_function(wrap_pyfunction!(write_chains_csv, m)?)?;
    m.add_function(wrap_pyfunction!(write_trace, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    analysis::register(m)?;
    batch::register(m)?;
    opzone::register(m)?;
    policies::register(m)?;
    jobs_out::register(m)?;
    // Each status word's exit code (`rtsched_sweep::Status::exit_code`): `exit_status`.
    let codes = PyDict::new(m.py());
    for st in rtsched_sweep::Status::ALL {
        codes.set_item(st.name(), st.exit_code())?;
    }
    m.add("STATUS_EXIT_CODES", codes)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RESULTS_SCHEMA", results::SCHEMA)?;
    Ok(())
}
