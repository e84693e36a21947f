//! A sweep row, the one implementation every executor runs (through `batch::sweep_batch`: the
//! in-process batch, the local pool's workers, Dask's): the task set's seed and the rows'
//! keys, the set made from its generator, what a row warns about, and the row's outcome — its
//! summaries, or why it did not run, as a [`Status`], never read from an error's text.

use crate::PyTaskSet;
use pyo3::PyResult;
use rtsched_analysis::gen;
use rtsched_analysis::schedulability::named::Named;
use rtsched_model::results::{RunResult, Summary, TotalSink};
use rtsched_model::TaskSet;
use rtsched_sim::{Failure, Options, Records, SimError, SimScratch};
use std::fmt::Write;

/// Integer columns of a row (the sweep table's names; `table.py` SUMMARY_COLUMNS and
/// MODEL_COLUMNS hold the order).
pub const INT_COLUMNS: [&str; 30] = [
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
    "pulls",
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
pub const FLOAT_COLUMNS: [&str; 8] = [
    "dsr",
    "accrued_utility",
    "possible_utility",
    "aur",
    "mean_tardiness_ns",
    "mean_response_ns",
    "exec_inflation",
    "ipc_proxy",
];

/// A row's outcome (the `status` column); the discriminant is its code in a batch's `status`
/// buffer. The same words name why a scheduler of a comparison (`rtsched simulate -s A B`,
/// `run`, `compare`) did not run: the `status` of the error `_core.simulate` and
/// `_core.run_real` raise (lib.rs `sim_err`, `run_err`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    Ok = 0,
    /// The scheduler's partitioner (or federated placement) found no place for every task.
    PartitionFailed = 1,
    /// A deadlock the scheduler did not resolve stopped the run.
    Deadlock = 2,
    /// Not run: its estimated work is over the limit (or the run outgrew what it can hold).
    TooLong = 3,
    /// The scheduler (or a `test:NAME` row's test) does not apply to the set: the error says
    /// why (a scheduler that refuses the set for another reason than placement).
    NotApplicable = 4,
    /// A real run failed (a worker, the machine): never a sweep's row, which simulates.
    RunFailed = 5,
}

impl Status {
    /// Every status, in the order of their codes.
    pub const ALL: [Status; 6] = [
        Status::Ok,
        Status::PartitionFailed,
        Status::Deadlock,
        Status::TooLong,
        Status::NotApplicable,
        Status::RunFailed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::PartitionFailed => "partition-failed",
            Status::Deadlock => "deadlock",
            Status::TooLong => "too-long",
            Status::NotApplicable => "not-applicable",
            Status::RunFailed => "run-failed",
        }
    }

    /// The status of a simulation that failed. Every scheduler of a spec (or of a comparison)
    /// was first built for a trivial set, so an error is about this set: a placement failure,
    /// a deadlock, a run that outgrew what it can hold, or a set the scheduler refuses.
    pub fn of(e: &SimError) -> Status {
        match e {
            SimError::Stopped {
                failure: Failure::Deadlock(_),
                ..
            } => Status::Deadlock,
            SimError::Stopped {
                failure: Failure::Capacity(_),
                ..
            } => Status::TooLong,
            SimError::Unplaced(_) => Status::PartitionFailed,
            SimError::Input(_) => Status::NotApplicable,
        }
    }
}

/// What one row holds besides its coordinates. Returned once per row and moved at once into
/// the batch's columns: the large variant stays unboxed (a box would allocate for every row).
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// The run completed: its numeric columns, in the order of `INT_COLUMNS` / `FLOAT_COLUMNS`.
    Ran([i64; 30], [f64; 8]),
    /// A `test:NAME` row: the test's verdict (`None`: inconclusive).
    Tested(Option<bool>),
    /// It did not: why, and the message of the `error` column.
    NotRun(Status, String),
}

/// The options every task set of a sweep shares.
pub struct SetOptions<'a> {
    pub duration_ns: u64,
    pub on_miss: &'a str,
    /// The run options and the topology (JSON, as `TaskSet.with_options(run, topology, source)`).
    pub run: Option<&'a str>,
    pub topology: Option<&'a str>,
    pub source: &'a str,
}

/// The task set of a row: generator `name` with parameters `params` ("k=v,k=v") and `seed`,
/// then the run's length, seed and miss handling, then the run options (what the task-file
/// reader makes of them).
pub fn make_set(name: &str, params: &str, seed: u64, o: &SetOptions<'_>) -> PyResult<TaskSet> {
    let p = gen::Params::parse(params).map_err(crate::input_err)?;
    let g = gen::by_name(name, &p, seed).map_err(crate::input_err)?;
    let mut ts = PyTaskSet { inner: g.taskset }.with_run(
        Some(o.duration_ns),
        Some(seed),
        Some(o.on_miss),
    )?;
    if o.run.is_some() || o.topology.is_some() {
        ts = ts.with_options(o.run, o.topology, o.source)?;
    }
    Ok(ts.inner)
}

/// Run `ts` under `sched` into one row's outcome. Each run's records go into `total` as they
/// are decided, none held (a row needs no more), and `scratch` holds the simulator's buffers
/// from run to run: many short runs allocate nothing anew.
pub fn run(ts: &TaskSet, sched: &str, total: &mut TotalSink, scratch: &mut SimScratch) -> Outcome {
    if let Some(name) = sched.strip_prefix(TEST_PREFIX) {
        return tested(ts, name);
    }
    // A row whose run would take hours (PAWS on tens of thousands of CPUs, a 1 ns tick) is
    // not run: its status says so, with the estimate (the CLI's --max-work).
    if let Some(e) = too_long(ts, sched) {
        return Outcome::NotRun(Status::TooLong, e);
    }
    total.reset_for(ts);
    let options = Options::spec(sched)
        .records(Records::Into(total))
        .scratch(scratch);
    match rtsched_sim::simulate(ts, options) {
        Ok(o) => {
            let (i, f) = summarise(&o.result, &total.summary());
            Outcome::Ran(i, f)
        }
        Err(e) => Outcome::NotRun(Status::of(&e), e.to_string()),
    }
}

/// A sweep scheduler that is a schedulability test: `test:NAME` (`named::Named`).
pub const TEST_PREFIX: &str = "test:";

/// A `test:NAME` row: the named test's verdict on `ts` (with the overheads of its run options,
/// if any), or why it does not apply. The name was checked when the spec was read; a name
/// that does not parse here is reported as not applicable, with the parser's message.
fn tested(ts: &TaskSet, name: &str) -> Outcome {
    match Named::parse(name) {
        Ok(t) => match t.verdict(ts) {
            Ok(v) => Outcome::Tested(v.schedulable),
            Err(why) => Outcome::NotRun(Status::NotApplicable, why.to_string()),
        },
        Err(e) => Outcome::NotRun(Status::NotApplicable, e),
    }
}

/// The error of a row whose estimated work is over the default limit (`None`: run it).
fn too_long(ts: &TaskSet, sched: &str) -> Option<String> {
    let e = rtsched_sim::estimate_spec(ts, sched).ok()?;
    (e.steps > rtsched_sim::DEFAULT_MAX_WORK).then(|| {
        format!(
            "not run: the run would take about {:.2e} steps of scheduling work ({} decisions of about {} steps each on {} CPUs), more than the limit of {:.0e}",
            e.steps as f64, e.decisions, e.per_decision, ts.platform.cpus, rtsched_sim::DEFAULT_MAX_WORK as f64
        )
    })
}

/// The numeric columns of one completed run (its counters, and `s`, its total summary).
fn summarise(r: &RunResult, s: &Summary) -> ([i64; 30], [f64; 8]) {
    let c = &r.counters;
    let o = &c.overheads;
    // The CPU time the overheads took: every kind but the release latency (which delays a job
    // but takes no CPU), and the throttled time when the cap is on.
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
        // The simulator measures every job's (`None` only where a real kernel placed them).
        i(s.pulls.unwrap_or(0)),
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

/// What running a task set under a scheduler warns about (`checks.py` words it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Note {
    /// The set has time-utility functions; the scheduler ignores them.
    Tufs(String),
    /// The set's nested critical sections can deadlock (the cycle); the scheduler does not
    /// resolve deadlocks.
    Deadlock(String, String),
}

/// The notes of running `ts` (whose lock-order cycle is `cycle`) under `sched`: a policy spec
/// or a real-run backend (`testbed:POLICY` is the policy; the kernel's schedulers neither read
/// TUFs nor resolve deadlocks). A spec that does not build for the set is not warned about:
/// its run says why.
pub fn notes(ts: &TaskSet, cycle: Option<&str>, sched: &str, out: &mut impl Extend<Note>) {
    let tufs = ts.has_tufs();
    if (!tufs && cycle.is_none()) || sched.starts_with(TEST_PREFIX) {
        return;
    }
    let (uses_tufs, resolves) = if sched.starts_with("kernel:") {
        (false, false)
    } else {
        match rtsched_policies::build(sched.strip_prefix("testbed:").unwrap_or(sched), ts) {
            Ok(p) => (p.uses_tufs(), p.resolves_deadlocks()),
            Err(_) => (true, true),
        }
    };
    if tufs && !uses_tufs {
        out.extend([Note::Tufs(sched.to_string())]);
    }
    if let (Some(c), false) = (cycle, resolves) {
        out.extend([Note::Deadlock(sched.to_string(), c.to_string())]);
    }
}

/// A task set's seed: a hash of its coordinates only, never of the order rows complete in,
/// so the same spec gives the same sets on any executor. The first 8 bytes (big-endian) of
/// the SHA-256 of the canonical JSON list `[spec seed, generator, params, param, per_cpu,
/// repr(point), replication]`, shifted right by one; `head` is that text up to the
/// replication ("[…,", `keys._seed_head`: one per generator and point). `text` is a
/// buffer reused from set to set.
pub fn taskset_seed(head: &str, replication: i128, text: &mut String) -> u64 {
    use sha2::{Digest, Sha256};
    text.clear();
    let _ = write!(text, "{head}{replication}]");
    let digest = Sha256::digest(text.as_bytes());
    let first: [u8; 8] = digest[..8]
        .try_into()
        .expect("a SHA-256 digest has 32 bytes");
    u64::from_be_bytes(first) >> 1
}

/// Append a row's key, readable, sortable and unique: `at` ("GENERATOR/POINT/", the point as
/// `016.6f`; `keys._key_at`), the replication in 10 digits, and `tail`
/// ("/SCHEDULER/VARIANT").
pub fn push_key(out: &mut String, at: &str, replication: i128, tail: &str) {
    let _ = write!(out, "{at}{replication:010}{tail}");
}
