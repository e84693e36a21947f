//! A sweep row, the one implementation every executor runs (through [`crate::batch`]: the
//! in-process batch, the local pool's workers, Dask's): the task set's seed and the rows'
//! keys, the set made from its generator, what a row warns about, and the row's outcome — its
//! run and summary, whose columns the catalogue reads ([`metric_columns`]), or why it did not
//! run, as a [`Status`], never read from an error's text.

use rtsched_analysis::gen;
use rtsched_analysis::schedulability::named::Named;
use rtsched_model::results::columns::{self, Column, Place, Value};
use rtsched_model::results::{Cell, RunResult, Summary, TotalSink};
use rtsched_model::{Protocol, TaskSet};
use rtsched_policies::Tufs;
use rtsched_sim::{Failure, Options, Records, SimError, SimScratch};
use std::fmt::Write;
use std::sync::LazyLock;

static METRICS: LazyLock<Vec<&'static Column>> = LazyLock::new(|| {
    columns::columns(Place::Row)
        .into_iter()
        .filter(|c| matches!(c.value, Value::Summary(_) | Value::Run(_)))
        .collect()
});

/// The columns of a row that its run gives (the catalogue's row columns read from a summary or
/// from the run), in the table's order: the metrics, empty in a row that did not run.
pub fn metric_columns() -> &'static [&'static Column] {
    &METRICS
}

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
            SimError::Stopped { failure, .. } => Status::stopped(failure),
            SimError::Unplaced(_) => Status::PartitionFailed,
            SimError::Input(_) => Status::NotApplicable,
        }
    }

    /// The status of a run the ledger stopped, simulated or real (one ledger behind both): a
    /// deadlock the policy does not resolve, or a run that outgrew what it can hold.
    pub fn stopped(failure: &Failure) -> Status {
        match failure {
            Failure::Deadlock(_) => Status::Deadlock,
            Failure::Capacity(_) => Status::TooLong,
        }
    }

    /// The exit code of a command that ends with this status, the same for a simulated and a
    /// real run: 2 when the input must change (a set or scheduler the user gave: a partition
    /// that fails, a deadlock of the set's lock order under a scheduler that does not resolve
    /// it, a run too long to hold, a scheduler that does not apply), as for every input
    /// error; 1 when the run itself failed on the machine (`run-failed`); 0 for `ok`.
    /// `_core` raises `InputError` for a status of exit 2 and `RunFailed` for one of exit 1.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::RunFailed => 1,
            Status::PartitionFailed
            | Status::Deadlock
            | Status::TooLong
            | Status::NotApplicable => 2,
        }
    }
}

/// What one row holds besides its coordinates. Returned once per row and read at once into
/// the batch's columns: the large variant stays unboxed (a box would allocate for every row).
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// The run completed: the run (its counters; its records went into the summary) and its
    /// total summary, which [`Ran::cell`] reads the metric columns from.
    Ran(Ran),
    /// A `test:NAME` row: the test's verdict (`None`: inconclusive).
    Tested(Option<bool>),
    /// It did not: why, and the message of the `error` column.
    NotRun(Status, String),
}

/// A run that completed, as a row keeps it.
pub struct Ran {
    pub result: RunResult,
    pub total: Summary,
}

impl Ran {
    /// The value of metric column `c` ([`metric_columns`]).
    pub fn cell(&self, c: &Column) -> Cell<'_> {
        c.of_run(&self.result, &self.total).unwrap_or(Cell::Null)
    }
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
/// reader makes of them). An error is the message a user reads (an input error).
pub fn make_set(
    name: &str,
    params: &str,
    seed: u64,
    o: &SetOptions<'_>,
) -> Result<TaskSet, String> {
    use rtsched_model::file::{with_options, with_run};
    let p = gen::Params::parse(params).map_err(|e| e.to_string())?;
    let g = gen::by_name(name, &p, seed).map_err(|e| e.to_string())?;
    let mut ts = with_run(&g.taskset, Some(o.duration_ns), Some(seed), Some(o.on_miss))?;
    if o.run.is_some() || o.topology.is_some() {
        ts = with_options(&ts, o.run, o.topology, o.source).map_err(|e| e.to_string())?;
    }
    Ok(ts)
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
        Ok(o) => Outcome::Ran(Ran {
            result: o.result,
            total: total.summary(),
        }),
        Err(e) => Outcome::NotRun(Status::of(&e), e.to_string()),
    }
}

/// A sweep scheduler that is a schedulability test: `test:NAME` (`named::Named`).
pub const TEST_PREFIX: &str = "test:";

/// What joins a row's scheduler and the locking protocol of a spec's `locking` axis in the
/// row's entry (`pfp:ffd@pcp`, `test:p-fp-rta-rm:ffd@msrp`; docs/sweeps.md "Locking
/// protocols"): neither a scheduler spec nor a test name holds it.
pub const LOCKING_SEP: char = '@';

/// A row's entry split into its scheduler and the protocol it runs the set under (`None`: the
/// set's own). An unknown protocol is an error a user reads (the spec's reader refuses one).
pub fn split_locking(entry: &str) -> Result<(&str, Option<Protocol>), String> {
    match entry.rsplit_once(LOCKING_SEP) {
        None => Ok((entry, None)),
        Some((sched, name)) => match Protocol::parse(name) {
            Some(p) => Ok((sched, Some(p))),
            None => Err(format!(
                "unknown locking protocol '{name}'; known: {}",
                Protocol::NAMES.join(", ")
            )),
        },
    }
}

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
/// or a real-run backend (`testbed:POLICY` and `kernel:scx:POLICY` are the policy, as its
/// description says, `PolicyInfo`; the kernel's own schedulers neither read TUFs nor resolve
/// deadlocks). A spec that does not build for the set is not warned about: its run says why.
pub fn notes(ts: &TaskSet, cycle: Option<&str>, sched: &str, out: &mut impl Extend<Note>) {
    let tufs = ts.has_tufs();
    if (!tufs && cycle.is_none()) || sched.starts_with(TEST_PREFIX) {
        return;
    }
    let policy = match sched.strip_prefix("kernel:") {
        Some(rest) => rest.strip_prefix("scx:"),
        None => Some(sched.strip_prefix("testbed:").unwrap_or(sched)),
    };
    let info = policy.map(|p| rtsched_policies::SchedulerSpec::parse(p).map(|s| s.name));
    let (uses_tufs, resolves) = match &info {
        None => (false, false),
        Some(Ok(name)) => {
            let info = &rtsched_policies::registry::find(name).expect("parsed").info;
            (info.tufs != Tufs::Ignored, info.resolves_deadlocks)
        }
        Some(Err(_)) => (true, true),
    };
    let tufs = tufs && !uses_tufs;
    let deadlock = cycle.filter(|_| !resolves);
    if (tufs || deadlock.is_some())
        && policy.is_some_and(|p| rtsched_policies::build(p, ts).is_err())
    {
        return;
    }
    if tufs {
        out.extend([Note::Tufs(sched.to_string())]);
    }
    if let Some(c) = deadlock {
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
