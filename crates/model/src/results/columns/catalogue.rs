//! The entries of the column catalogue ([`COLUMNS`]): one per column, in the catalogue's order.
//! A column is added here (see the module above for what an entry says and where it then
//! appears).

use super::{Cell, Column, Doc, Fmt, Measured, Place, Show, Store, Table, Unit, Value};
use crate::results::schema::{ChainRecord, JobRecord, RunResult};
use crate::time::Time;
use serde::Serialize;

use super::Kind::{Bool, Cpus, Float, Int, Object, Text};
use Place::{Job as JOB, Row as ROW, Run as RUN, Task as TASK};

/// The defaults of a per-job column.
const JOB_COL: Column = Column {
    name: "",
    kind: Int,
    unit: Unit::Ns,
    nullable: false,
    meaning: "",
    at: &[JOB],
    measured: Measured::Always,
    doc: Doc::Key,
    value: Value::Sweep,
    store: Store::Dict,
    table: None,
};
/// The defaults of a summary's column (a task's and the run's total; a sweep row's).
const SUMMARY_COL: Column = Column {
    at: &[TASK, RUN, ROW],
    ..JOB_COL
};
/// The defaults of a run-level counter (the document's `counters`).
const COUNTER_COL: Column = Column {
    at: &[RUN, ROW],
    unit: Unit::Count,
    ..JOB_COL
};
/// The defaults of a sweep's own column (a coordinate, a row's outcome).
const SWEEP_COL: Column = Column {
    at: &[ROW],
    kind: Text,
    unit: Unit::None,
    measured: Measured::Given,
    doc: Doc::No,
    ..JOB_COL
};

/// A column of the comparison table (header, rank, when shown, how written).
const fn table(header: &'static str, rank: u8, show: Show, fmt: Fmt) -> Option<Table> {
    Some(Table {
        header,
        aliases: &[],
        rank,
        show,
        fmt,
    })
}

/// The tardiness a job's record gives: its lateness if it missed (`end - deadline` if it never
/// finished), else 0.
fn tardiness(j: &JobRecord, end: Time) -> Time {
    if j.missed {
        j.tardiness(end)
    } else {
        0
    }
}

/// Every column, in the catalogue's order: the per-job records' (the CSV's order), the
/// summaries' and the counters' (the results document's order), the comparison table's own,
/// and a sweep's own.
pub const COLUMNS: &[Column] = &[
    // ---- per job (the CSV, the Parquet file, Result.jobs; the document's `jobs`)
    Column {
        name: "scheduler",
        kind: Text,
        unit: Unit::None,
        meaning: "the scheduler as written, with its options (gfp:rm); a sweep's test:NAME is a schedulability test's row",
        at: &[JOB, ROW, Place::Chain],
        measured: Measured::Given,
        doc: Doc::No,
        value: Value::Scheduler,
        table: table("scheduler", 0, Show::Always, Fmt::Plain),
        ..JOB_COL
    },
    Column {
        name: "task",
        kind: Text,
        unit: Unit::None,
        meaning: "the job's task, by name",
        measured: Measured::Given,
        value: Value::Task,
        ..JOB_COL
    },
    Column {
        name: "job",
        unit: Unit::Count,
        meaning: "the job's index within its task, from 0",
        measured: Measured::Given,
        value: Value::Job(|j, _| j.job.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "release_ns",
        meaning: "when the job was released",
        value: Value::Job(|j, _| j.release.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "deadline_ns",
        meaning: "its absolute deadline",
        value: Value::Job(|j, _| j.deadline.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "start_ns",
        nullable: true,
        meaning: "when it first ran (null: never)",
        value: Value::Job(|j, _| j.start.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "finish_ns",
        nullable: true,
        meaning: "when it completed (null: aborted, or unfinished at the end)",
        value: Value::Job(|j, _| j.finish.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "response_ns",
        nullable: true,
        meaning: "finish - release (null: not completed)",
        doc: Doc::No,
        value: Value::Job(|j, _| j.response().into()),
        ..JOB_COL
    },
    Column {
        name: "tardiness_ns",
        meaning: "max(0, finish - deadline) for a job that missed (end - deadline if it never finished, a lower bound; 0 if aborted)",
        doc: Doc::No,
        value: Value::Job(|j, end| tardiness(j, end).into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "demand_ns",
        meaning: "its actual execution demand, drawn by the execution-time model (without overheads)",
        value: Value::Job(|j, _| j.demand.into()),
        ..JOB_COL
    },
    Column {
        name: "cpus",
        kind: Cpus,
        unit: Unit::None,
        meaning: "the CPUs it ran on",
        value: Value::Job(|j, _| Cell::Cpus(&j.cpus)),
        ..JOB_COL
    },
    Column {
        name: "preemptions",
        unit: Unit::Count,
        meaning: "times an entity of it stopped running while still ready (docs/semantics.md)",
        value: Value::Job(|j, _| j.preemptions.into()),
        ..JOB_COL
    },
    Column {
        name: "migrations",
        unit: Unit::Count,
        meaning: "times an entity of it resumed on another CPU than the one it last ran on",
        value: Value::Job(|j, _| j.migrations.into()),
        ..JOB_COL
    },
    Column {
        name: "pulls",
        unit: Unit::Count,
        nullable: true,
        meaning: "dispatches of its threads on a CPU other than the one whose run queue they sat on: a kernel's pull of a task from a remote run queue (docs/semantics.md \"Pull\"; ChronOS Fig. 7)",
        measured: Measured::RunQueues,
        value: Value::Job(|j, _| j.pulls.into()),
        ..JOB_COL
    },
    Column {
        name: "context_switches",
        unit: Unit::Count,
        meaning: "times a CPU started running an entity of it after another entity (idle counts as nothing)",
        value: Value::Job(|j, _| j.context_switches.into()),
        ..JOB_COL
    },
    Column {
        name: "missed",
        kind: Bool,
        unit: Unit::None,
        meaning: "it finished after its deadline, was aborted, or was unfinished at the end past its deadline",
        value: Value::Job(|j, _| j.missed.into()),
        ..JOB_COL
    },
    Column {
        name: "aborted",
        kind: Bool,
        unit: Unit::None,
        meaning: "it was aborted (on_miss: abort at its deadline, or by the policy)",
        value: Value::Job(|j, _| j.aborted.into()),
        ..JOB_COL
    },
    Column {
        name: "blocked_ns",
        meaning: "time its threads spent blocked on resources (critical sections): direct blocking",
        value: Value::Job(|j, _| j.blocked.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "blocked_inheritance_ns",
        meaning: "time it was ready while its CPU ran a lower-priority job lent its priority by inheritance (push-through blocking, docs/locking.md)",
        value: Value::Job(|j, _| j.blocked_inheritance.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "blocked_ceiling_ns",
        meaning: "time it was ready while its CPU ran a lower-priority job at a resource's ceiling (pcp), or withheld from starting by srp, or whose request for a free resource pcp:original ceiling blocked (docs/locking.md)",
        value: Value::Job(|j, _| j.blocked_ceiling.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "spin_ns",
        meaning: "time its threads busy-waited on their CPU for a global resource held on another CPU (msrp, mrsp; docs/locking.md)",
        value: Value::Job(|j, _| j.spin.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "aborted_at_ns",
        nullable: true,
        meaning: "when it was aborted (null: not aborted)",
        value: Value::Job(|j, _| j.aborted_at.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "utility",
        kind: Float,
        unit: Unit::Utility,
        meaning: "utility accrued: its task's TUF at its completion; 0 if aborted or unfinished",
        value: Value::Job(|j, _| j.utility.into()),
        ..JOB_COL
    },
    Column {
        name: "max_utility",
        kind: Float,
        unit: Unit::Utility,
        meaning: "utility possible: the TUF's maximum (1 without a TUF)",
        value: Value::Job(|j, _| j.max_utility.into()),
        ..JOB_COL
    },
    Column {
        name: "exec_ns",
        meaning: "CPU time its threads consumed: its work, the overheads charged to it and its memory stalls (real runs: the threads' measured CPU time)",
        value: Value::Job(|j, _| j.exec.into()),
        ..JOB_COL
    },
    Column {
        name: "overhead_ns",
        meaning: "of exec_ns, the overhead charged to it (decision, context switch, migration, tick, policy, abort handler; kernel backends: its thread's CPU time outside its work)",
        measured: Measured::Overheads,
        value: Value::Job(|j, _| j.overhead.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "stall_ns",
        meaning: "of exec_ns, time stalled on cache misses",
        measured: Measured::CacheModel,
        value: Value::Job(|j, _| j.stall.into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "misses_l1",
        unit: Unit::Lines,
        meaning: "cache lines its accesses missed at L1",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Job(|j, _| j.misses[0].into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "misses_l2",
        unit: Unit::Lines,
        meaning: "cache lines its accesses missed at L2",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Job(|j, _| j.misses[1].into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "misses_llc",
        unit: Unit::Lines,
        meaning: "cache lines its accesses missed at the last-level cache",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Job(|j, _| j.misses[2].into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "hw_instructions",
        unit: Unit::Count,
        nullable: true,
        meaning: "instructions retired over its execution (perf_event_open, summed over its threads)",
        measured: Measured::Pmu,
        doc: Doc::Member("hw", "instructions"),
        value: Value::Job(|j, _| j.hw.map(|h| h.instructions).into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "hw_cycles",
        unit: Unit::Count,
        nullable: true,
        meaning: "CPU cycles over its execution",
        measured: Measured::Pmu,
        doc: Doc::Member("hw", "cycles"),
        value: Value::Job(|j, _| j.hw.map(|h| h.cycles).into()),
        store: Store::Delta,
        ..JOB_COL
    },
    Column {
        name: "hw_llc_misses",
        unit: Unit::Lines,
        nullable: true,
        meaning: "last-level cache misses over its execution",
        measured: Measured::Pmu,
        doc: Doc::Member("hw", "llc_misses"),
        value: Value::Job(|j, _| j.hw.map(|h| h.llc_misses).into()),
        store: Store::Delta,
        ..JOB_COL
    },
    // ---- summaries (a task's and the run's total: the document's `tasks` and `total`)
    Column {
        name: "jobs",
        unit: Unit::Count,
        meaning: "jobs counted: released in [0, duration)",
        value: Value::Summary(|s| s.jobs.into()),
        table: table("jobs", 2, Show::Always, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "completed",
        unit: Unit::Count,
        meaning: "jobs that completed",
        value: Value::Summary(|s| s.completed.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "met",
        unit: Unit::Count,
        meaning: "jobs that met their deadline",
        value: Value::Summary(|s| s.met.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "missed",
        unit: Unit::Count,
        meaning: "jobs that missed their deadline (late, aborted, or unfinished past it at the end)",
        value: Value::Summary(|s| s.missed.into()),
        table: table("missed", 1, Show::Always, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "aborted",
        unit: Unit::Count,
        meaning: "jobs aborted",
        value: Value::Summary(|s| s.aborted.into()),
        table: table("aborted", 2, Show::IfAny("aborted"), Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "dsr",
        kind: Float,
        unit: Unit::Ratio,
        meaning: "deadline satisfaction ratio: met / jobs (1 without jobs)",
        value: Value::Summary(|s| s.dsr.into()),
        table: table("DSR", 1, Show::Always, Fmt::Ratio),
        ..SUMMARY_COL
    },
    Column {
        name: "max_tardiness_ns",
        meaning: "the largest tardiness of a job",
        value: Value::Summary(|s| s.max_tardiness_ns.into()),
        table: table("max tard ms", 2, Show::Always, Fmt::Ms),
        ..SUMMARY_COL
    },
    Column {
        name: "mean_tardiness_ns",
        kind: Float,
        meaning: "the mean tardiness over every counted job (0 for a job that met its deadline)",
        value: Value::Summary(|s| s.mean_tardiness_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "max_response_ns",
        meaning: "the longest response time of a completed job",
        value: Value::Summary(|s| s.max_response_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "mean_response_ns",
        kind: Float,
        meaning: "the mean response time of the completed jobs",
        value: Value::Summary(|s| s.mean_response_ns.into()),
        table: Some(Table {
            header: "mean resp ms (done)",
            aliases: &["mean resp ms"],
            rank: 4,
            show: Show::Always,
            fmt: Fmt::Ms,
        }),
        ..SUMMARY_COL
    },
    Column {
        name: "p99_response_ns",
        meaning: "the 99th percentile (nearest rank) of the completed jobs' response times",
        value: Value::Summary(|s| s.p99_response_ns.into()),
        table: Some(Table {
            header: "p99 resp ms (done)",
            aliases: &["p99 resp ms"],
            rank: 3,
            show: Show::Always,
            fmt: Fmt::Ms,
        }),
        ..SUMMARY_COL
    },
    Column {
        name: "preemptions",
        unit: Unit::Count,
        meaning: "preemptions of the jobs, summed",
        value: Value::Summary(|s| s.preemptions.into()),
        table: table("preempt", 4, Show::Always, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "migrations",
        unit: Unit::Count,
        meaning: "migrations of the jobs, summed",
        value: Value::Summary(|s| s.migrations.into()),
        table: table("migr", 4, Show::Always, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "pulls",
        unit: Unit::Count,
        nullable: true,
        meaning: "pulls of the jobs, summed (null when some job's were not measured)",
        measured: Measured::RunQueues,
        value: Value::Summary(|s| s.pulls.into()),
        table: table("pulls", 4, Show::OnRequest, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "context_switches",
        unit: Unit::Count,
        meaning: "context switches to the jobs, summed",
        value: Value::Summary(|s| s.context_switches.into()),
        table: table("ctx sw", 7, Show::Always, Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "max_blocked_ns",
        meaning: "the longest time one job spent blocked on resources",
        at: &[TASK, RUN, ROW],
        value: Value::Summary(|s| s.max_blocked_ns.into()),
        table: table("max blocked ms", 3, Show::IfAny("total_blocked_ns"), Fmt::Ms),
        ..SUMMARY_COL
    },
    Column {
        name: "total_blocked_ns",
        meaning: "the time jobs spent blocked on resources, summed",
        at: &[TASK, RUN],
        value: Value::Summary(|s| s.total_blocked_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "max_blocked_inheritance_ns",
        meaning: "the longest inheritance (push-through) blocking of one job (docs/locking.md)",
        at: &[TASK, RUN, ROW],
        value: Value::Summary(|s| s.max_blocked_inheritance_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "max_blocked_ceiling_ns",
        meaning: "the longest ceiling blocking of one job (docs/locking.md)",
        at: &[TASK, RUN, ROW],
        value: Value::Summary(|s| s.max_blocked_ceiling_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "max_spin_ns",
        meaning: "the longest spinning of one job for global resources (msrp, mrsp; docs/locking.md)",
        at: &[TASK, RUN, ROW],
        value: Value::Summary(|s| s.max_spin_ns.into()),
        table: table("max spin ms", 3, Show::IfAny("total_spin_ns"), Fmt::Ms),
        ..SUMMARY_COL
    },
    Column {
        name: "total_spin_ns",
        meaning: "the time jobs spun for global resources, summed (msrp, mrsp)",
        at: &[TASK, RUN],
        value: Value::Summary(|s| s.total_spin_ns.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "accrued_utility",
        kind: Float,
        unit: Unit::Utility,
        meaning: "utility accrued (time-utility functions; a job without one is worth 1 if it meets its deadline)",
        value: Value::Summary(|s| s.accrued_utility.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "possible_utility",
        kind: Float,
        unit: Unit::Utility,
        meaning: "utility possible: each job's TUF maximum, summed",
        value: Value::Summary(|s| s.possible_utility.into()),
        ..SUMMARY_COL
    },
    Column {
        name: "aur",
        kind: Float,
        unit: Unit::Ratio,
        meaning: "accrued utility ratio: accrued / possible (1 when none was possible)",
        value: Value::Summary(|s| s.aur.into()),
        table: table("AUR", 5, Show::Always, Fmt::Ratio),
        ..SUMMARY_COL
    },
    Column {
        name: "exec_inflation",
        kind: Float,
        unit: Unit::Ratio,
        meaning: "CPU time of the completed jobs over their demand (1: no overhead, no stall)",
        value: Value::Summary(|s| s.exec_inflation.into()),
        table: table("exec infl", 4, Show::IfNotOne("exec_inflation"), Fmt::Ratio),
        ..SUMMARY_COL
    },
    Column {
        name: "ipc_proxy",
        kind: Float,
        unit: Unit::Ratio,
        meaning: "work per unit of non-overhead CPU time of the completed jobs, sum demand / sum (exec - overhead): the simulator's stand-in for IPC (LWFG Figs. 1-2)",
        value: Value::Summary(|s| s.ipc_proxy.into()),
        table: table("IPC proxy", 5, Show::IfBelowOne("ipc_proxy"), Fmt::Ratio),
        ..SUMMARY_COL
    },
    Column {
        name: "misses_l1",
        unit: Unit::Lines,
        meaning: "cache-line misses at L1, summed over the jobs",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Summary(|s| s.misses[0].into()),
        ..SUMMARY_COL
    },
    Column {
        name: "misses_l2",
        unit: Unit::Lines,
        meaning: "cache-line misses at L2, summed over the jobs",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Summary(|s| s.misses[1].into()),
        ..SUMMARY_COL
    },
    Column {
        name: "misses_llc",
        unit: Unit::Lines,
        meaning: "cache-line misses at the last-level cache, summed over the jobs",
        measured: Measured::CacheModel,
        doc: Doc::Item("misses"),
        value: Value::Summary(|s| s.misses[2].into()),
        ..SUMMARY_COL
    },
    // ---- run-level counters (the document's `counters`)
    Column {
        name: "scheduler_invocations",
        meaning: "times the policy was asked to decide",
        value: Value::Run(|r| r.counters.scheduler_invocations.into()),
        table: table("sched calls", 7, Show::Always, Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "events",
        meaning: "events the substrate processed",
        at: &[],
        value: Value::Run(|r| r.counters.events.into()),
        ..COUNTER_COL
    },
    Column {
        name: "releases",
        meaning: "jobs released, counted or not",
        at: &[],
        value: Value::Run(|r| r.counters.releases.into()),
        ..COUNTER_COL
    },
    Column {
        name: "steals",
        meaning: "threads stolen (work stealing, PAWS; 0 for a policy that does not steal)",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.steals.into()),
        table: table("steals", 5, Show::IfAny("steal_attempts"), Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "steal_attempts",
        meaning: "steal attempts: a free core with no local work and an empty global queue looked for a victim (steals + failed steals)",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.steal_attempts.into()),
        table: table("steal tries", 6, Show::IfAny("steal_attempts"), Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "failed_steals",
        meaning: "steal attempts that found no victim",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.failed_steals.into()),
        table: table("failed", 6, Show::IfAny("steal_attempts"), Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "priority_inversions",
        meaning: "onsets of a priority inversion: a decision after which some CPU runs a later deadline than a ready entity's (docs/semantics.md)",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.priority_inversions.into()),
        table: table("prio inv", 6, Show::Always, Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "priority_inversion_ns",
        unit: Unit::Ns,
        meaning: "the time a priority inversion held, over the whole run",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.priority_inversion_ns.into()),
        table: table("inv ms", 6, Show::Always, Fmt::Ms),
        ..COUNTER_COL
    },
    Column {
        name: "inverted_jobs",
        meaning: "counted jobs that had a ready entity while a later deadline ran",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.inverted_jobs.into()),
        ..COUNTER_COL
    },
    Column {
        name: "inversion_job_ns",
        unit: Unit::Ns,
        meaning: "priority inversion per job: its time, summed over the counted jobs",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.inversion_job_ns.into()),
        ..COUNTER_COL
    },
    Column {
        name: "inversion_job_max_ns",
        unit: Unit::Ns,
        meaning: "priority inversion per job: the longest",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.inversion_job_max_ns.into()),
        ..COUNTER_COL
    },
    Column {
        name: "inversion_job_p99_ns",
        unit: Unit::Ns,
        meaning: "priority inversion per job: the 99th percentile over every counted job (nearest rank, zeros included)",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.inversion_job_p99_ns.into()),
        ..COUNTER_COL
    },
    Column {
        name: "kernel_migrations",
        meaning: "migrations as a kernel counts them (set_task_cpu): migrations plus steals and fresh threads first run elsewhere than where they were forked or woken",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.kernel_migrations.into()),
        ..COUNTER_COL
    },
    Column {
        name: "deadlocks",
        meaning: "deadlocks the job ledger detected, each resolved by the policy's abort",
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.deadlocks.into()),
        table: table("deadlocks", 2, Show::IfAny("deadlocks"), Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "overheads",
        kind: Object,
        unit: Unit::Ns,
        meaning: "overhead charged, by kind: decision_ns, context_switch_ns, migration_ns, release_ns, tick_ns, abort_handler_ns, policy_ns, throttle_ns (when the bandwidth cap is on)",
        at: &[],
        measured: Measured::Overheads,
        value: Value::Run(|r| Cell::Object(to_json(&r.counters.overheads))),
        ..COUNTER_COL
    },
    Column {
        name: "cache",
        kind: Object,
        unit: Unit::Lines,
        meaning: "the cache model's totals: accesses, misses (L1, L2, LLC), invalidations, evictions",
        at: &[],
        measured: Measured::CacheModel,
        value: Value::Run(|r| Cell::Object(to_json(&r.counters.cache))),
        ..COUNTER_COL
    },
    Column {
        name: "invalidations",
        unit: Unit::Lines,
        meaning: "lines invalidated in other CPUs' caches by memory sharers running at once (the document's cache.invalidations)",
        at: &[ROW],
        measured: Measured::CacheModel,
        doc: Doc::No,
        value: Value::Run(|r| r.counters.cache.invalidations.into()),
        ..COUNTER_COL
    },
    Column {
        name: "evictions",
        unit: Unit::Lines,
        meaning: "lines evicted for capacity (the document's cache.evictions)",
        at: &[ROW],
        measured: Measured::CacheModel,
        doc: Doc::No,
        value: Value::Run(|r| r.counters.cache.evictions.into()),
        ..COUNTER_COL
    },
    Column {
        name: "overhead_ns",
        unit: Unit::Ns,
        meaning: "CPU time the overheads took: every kind but the release latency (which delays a job but takes no CPU), and the time throttled by the bandwidth cap",
        at: &[ROW],
        measured: Measured::Overheads,
        doc: Doc::No,
        value: Value::Run(|r| {
            let o = &r.counters.overheads;
            (o.cpu_ns() + o.throttle_ns).into()
        }),
        table: table("overhead ms", 4, Show::IfAny("overhead_ns"), Fmt::Ms),
        ..COUNTER_COL
    },
    Column {
        name: "throttles",
        nullable: true,
        meaning: "SCHED_DEADLINE's CBS (the linux scheduler): times a deadline entity's runtime ran out (or was yielded) and it was throttled until its replenishment, over every deadline task (per task: measurements' dl.<task>.throttles)",
        at: &[RUN],
        measured: Measured::Cbs,
        value: Value::Run(|r| r.counters.throttles.into()),
        table: table("throttles", 4, Show::IfPresent("throttles"), Fmt::Plain),
        ..COUNTER_COL
    },
    Column {
        name: "replenishments",
        nullable: true,
        meaning: "SCHED_DEADLINE's CBS (the linux scheduler): replenishments (runtime refilled, deadline moved a period on), over every deadline task (per task: measurements' dl.<task>.replenishments)",
        at: &[RUN],
        measured: Measured::Cbs,
        value: Value::Run(|r| r.counters.replenishments.into()),
        ..COUNTER_COL
    },
    Column {
        name: "helping_migrations",
        meaning: "MrsP's helping migrations: times the job ledger placed a preempted holder of an mrsp resource on a CPU where a job spins for it (docs/locking.md \"Helping\"); each is also in its job's migrations",
        at: &[RUN],
        measured: Measured::Ledger,
        value: Value::Run(|r| r.counters.helping_migrations.into()),
        table: table("helping", 4, Show::IfAny("helping_migrations"), Fmt::Plain),
        ..COUNTER_COL
    },
    // ---- the comparison table's own
    Column {
        name: "unfinished",
        unit: Unit::Count,
        meaning: "jobs that did not complete (aborted, or unfinished at the end): those the response times leave out",
        at: &[],
        doc: Doc::No,
        value: Value::Summary(|s| (s.jobs - s.completed).into()),
        table: table("unfinished", 3, Show::IfAny("unfinished"), Fmt::Plain),
        ..SUMMARY_COL
    },
    Column {
        name: "policy_ns_per_invocation",
        kind: Float,
        meaning: "wall-clock time the policy took per decision (measurements)",
        at: &[],
        measured: Measured::Timed,
        doc: Doc::No,
        value: Value::Run(|r| r.measurements.get("policy_ns_per_invocation").copied().into()),
        table: table(
            "policy ns/decision",
            3,
            Show::IfPresent("policy_ns_per_invocation"),
            Fmt::Whole,
        ),
        ..COUNTER_COL
    },
    Column {
        name: "llc_misses",
        unit: Unit::Lines,
        meaning: "misses_llc, under the name the comparison table's records give it",
        at: &[],
        measured: Measured::CacheModel,
        doc: Doc::No,
        value: Value::Summary(|s| s.misses[2].into()),
        table: table("LLC misses", 5, Show::IfAny("llc_misses"), Fmt::Plain),
        ..SUMMARY_COL
    },
    // ---- a sweep's own (sweep/table.py, rtsched-sweep)
    Column {
        name: "key",
        meaning: "GENERATOR/POINT/REPLICATION/SCHEDULER/VARIANT: readable, sortable, unique",
        ..SWEEP_COL
    },
    Column {
        name: "sweep",
        meaning: "the spec's name",
        ..SWEEP_COL
    },
    Column {
        name: "generator",
        meaning: "the generator's label",
        ..SWEEP_COL
    },
    Column {
        name: "gen_params",
        meaning: "the generator's parameters at this point, as canonical JSON",
        ..SWEEP_COL
    },
    Column {
        name: "param",
        meaning: "the generator parameter the points set",
        ..SWEEP_COL
    },
    Column {
        name: "point",
        kind: Float,
        meaning: "the point's value of the parameter",
        ..SWEEP_COL
    },
    Column {
        name: "replication",
        kind: Int,
        unit: Unit::Count,
        meaning: "the replication at this point",
        ..SWEEP_COL
    },
    Column {
        name: "taskset_seed",
        kind: Int,
        meaning: "the generator's and execution model's seed: a hash of the spec seed and the coordinates",
        ..SWEEP_COL
    },
    Column {
        name: "kind",
        meaning: "sim (simulated) or test (a schedulability test's row: test:NAME)",
        ..SWEEP_COL
    },
    Column {
        name: "m",
        kind: Int,
        unit: Unit::Count,
        meaning: "CPUs",
        ..SWEEP_COL
    },
    Column {
        name: "n",
        kind: Int,
        unit: Unit::Count,
        meaning: "tasks",
        ..SWEEP_COL
    },
    Column {
        name: "U",
        kind: Float,
        unit: Unit::Ratio,
        meaning: "the set's actual utilisation sum C/T, as generated",
        ..SWEEP_COL
    },
    Column {
        name: "duration_ns",
        kind: Int,
        unit: Unit::Ns,
        meaning: "the counted window",
        ..SWEEP_COL
    },
    Column {
        name: "on_miss",
        meaning: "continue or abort",
        ..SWEEP_COL
    },
    Column {
        name: "run",
        meaning: "the spec's run: options as canonical JSON (empty when not given)",
        ..SWEEP_COL
    },
    Column {
        name: "topology",
        meaning: "the spec's topology: as canonical JSON (empty when not given)",
        ..SWEEP_COL
    },
    Column {
        name: "status",
        meaning: "ok, partition-failed, deadlock, too-long or not-applicable (why the row did not run: metrics empty)",
        ..SWEEP_COL
    },
    Column {
        name: "error",
        meaning: "why the row did not run (empty when it did)",
        ..SWEEP_COL
    },
    Column {
        name: "schedulable",
        kind: Bool,
        meaning: "simulated: ran with no missed deadline; a test: proven schedulable",
        ..SWEEP_COL
    },
    Column {
        name: "verdict",
        kind: Bool,
        nullable: true,
        meaning: "a test's verdict: true, false, or empty (inconclusive); empty for a simulated row",
        ..SWEEP_COL
    },
    Column {
        name: "schema",
        meaning: "the results schema the row was computed under",
        ..SWEEP_COL
    },
    Column {
        name: "locking",
        meaning: "the locking protocol of the spec's locking axis the row ran the set under (empty without the axis: the set's own)",
        ..SWEEP_COL
    },
    // ---- a sweep row's chain metrics: each the largest over every instance of the row's chains
    // (docs/chains.md "Sweeps"), null where the set has no chain that gives it
    Column {
        name: "chain_latency_max_ns",
        meaning: "the largest end-to-end latency of any instance of the set's event chains (docs/chains.md); null without event chains or instances",
        value: Value::Run(|r| chain_max(r, |c| c.latency)),
        ..CHAIN_ROW_COL
    },
    Column {
        name: "chain_data_age_max_ns",
        meaning: "the largest data age of any output of the set's data-flow chains (Dürr et al. 2019; docs/chains.md); null without data-flow chains or outputs",
        value: Value::Run(|r| chain_max(r, |c| c.data_age)),
        ..CHAIN_ROW_COL
    },
    Column {
        name: "chain_reaction_time_max_ns",
        meaning: "the largest reaction time of any output of the set's data-flow chains (Dürr et al. 2019; docs/chains.md); null without data-flow chains or outputs that react",
        value: Value::Run(|r| chain_max(r, |c| c.reaction_time)),
        ..CHAIN_ROW_COL
    },
    // ---- per chain instance (--chains-csv, Result.chains; docs/chains.md)
    Column {
        name: "chain",
        kind: Text,
        unit: Unit::None,
        meaning: "the chain, by name",
        value: Value::ChainName,
        ..CHAIN_COL
    },
    Column {
        name: "instance",
        unit: Unit::Count,
        meaning: "event chain: the first task's job index; data-flow chain: the last task's (the output)",
        value: Value::Chain(|r| Cell::Uint(r.instance)),
        ..CHAIN_COL
    },
    Column {
        name: "start_ns",
        meaning: "event chain: the first job's release; data-flow chain: the first task's read at the head of the output's data path",
        value: Value::Chain(|r| Cell::Uint(r.start)),
        ..CHAIN_COL
    },
    Column {
        name: "end_ns",
        meaning: "event chain: the last job's finish; data-flow chain: the output's publication (implicit: finish; LET: deadline)",
        value: Value::Chain(|r| Cell::Uint(r.end)),
        ..CHAIN_COL
    },
    Column {
        name: "latency_ns",
        nullable: true,
        meaning: "event chain: end-to-end latency, finish of the last task's job - release of the first's (null for a data-flow chain)",
        value: Value::Chain(|r| opt(r.latency)),
        ..CHAIN_COL
    },
    Column {
        name: "data_age_ns",
        nullable: true,
        meaning: "data-flow chain: data age, the output's publication - the head read of its data path (Dürr et al. 2019; null for an event chain)",
        value: Value::Chain(|r| opt(r.data_age)),
        ..CHAIN_COL
    },
    Column {
        name: "reaction_time_ns",
        nullable: true,
        meaning: "data-flow chain: reaction time, the output's publication - the previous distinct head read (the latest input event it is the first to react to; Dürr et al. 2019); null for an event chain and an output that reacts to nothing new",
        value: Value::Chain(|r| opt(r.reaction_time)),
        ..CHAIN_COL
    },
];

/// The defaults of a chain instance's column.
const CHAIN_COL: Column = Column {
    at: &[Place::Chain],
    doc: Doc::No,
    measured: Measured::Always,
    ..JOB_COL
};

/// The defaults of a sweep row's chain metric.
const CHAIN_ROW_COL: Column = Column {
    at: &[ROW],
    nullable: true,
    measured: Measured::Chains,
    doc: Doc::No,
    ..JOB_COL
};

/// The largest of one metric over a run's chain instances (null when none has it).
fn chain_max(r: &RunResult, f: fn(&ChainRecord) -> Option<Time>) -> Cell<'static> {
    opt(r.chains.iter().filter_map(f).max())
}

/// An optional time as a cell (null when absent).
fn opt(x: Option<Time>) -> Cell<'static> {
    x.map_or(Cell::Null, Cell::Uint)
}

fn to_json(v: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("counters serialise")
}
