//! The results document's types: per-job records, counters, the run, its summaries, and the
//! sink a run's records stream to. Statistics over them are `stats.rs`'s, their written forms
//! `write.rs`'s.

use crate::task::{Task, TaskId, TaskSet};
use crate::time::Time;
use serde::Serialize;

/// The results document's version. 2: run-level `steals`, `steal_attempts`, `failed_steals`,
/// `priority_inversions` and `priority_inversion_ns` in `counters`. 3: utility (`accrued_utility`,
/// `possible_utility`, `aur` in every summary; `utility`, `max_utility`, `aborted_at_ns` per
/// job), `deadlocks` in `counters`. 4: execution time, overheads and caches: per job `exec_ns`,
/// `overhead_ns`, `stall_ns`, `misses` (L1, L2, LLC) and `hw` (hardware counters); `overheads`
/// (charged ns by kind) and `cache` in `counters`; `exec_inflation`, `ipc_proxy` and `misses`
/// in every summary; `unavailable` (what this run could not measure, and why). Later
/// additions within 4 (a reader finds them or not): `kernel_migrations` and the per-job
/// inversion counters in `counters`; `pulls` per job and in every summary (null where not
/// measured).
pub const SCHEMA: &str = "rtsched.results/4";

/// The set of CPUs a job ran on. Inline for CPUs < 64, so recording it allocates nothing
/// on ordinary platforms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet {
    low: u64,
    high: Vec<u32>,
}

impl CpuSet {
    #[inline]
    pub fn insert(&mut self, cpu: u32) {
        if cpu < 64 {
            self.low |= 1 << cpu;
        } else if !self.high.contains(&cpu) {
            self.high.push(cpu);
            self.high.sort_unstable();
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..64u32)
            .filter(move |c| self.low & (1 << c) != 0)
            .chain(self.high.iter().copied())
    }
    pub fn len(&self) -> usize {
        self.low.count_ones() as usize + self.high.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// One counted job (released in [0, duration)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobRecord {
    pub task: TaskId,
    /// Job index within its task, from 0.
    pub job: u64,
    pub release: Time,
    pub deadline: Time,
    /// Actual execution demand drawn by the execution-time model (excluding overheads).
    pub demand: Time,
    pub start: Option<Time>,
    pub finish: Option<Time>,
    pub cpus: CpuSet,
    pub preemptions: u32,
    pub migrations: u32,
    /// Pulls (docs/semantics.md "Pull"; ChronOS §6.3, Fig. 7): dispatches of its threads on
    /// a CPU other than the one whose run queue they sat on. `None`: not measured (a run whose
    /// threads a real kernel placed: the kernel backends).
    pub pulls: Option<u32>,
    pub context_switches: u32,
    /// Total time its threads spent blocked on resources (critical sections): *direct*
    /// blocking, under every locking protocol (docs/locking.md).
    pub blocked: Time,
    /// Time it was ready while its CPU ran a job of lower own priority lent a higher one by
    /// priority inheritance (push-through blocking, `pip`, `pcp:original`; docs/locking.md).
    pub blocked_inheritance: Time,
    /// Time it was ready while its CPU ran a job of lower own priority raised to a resource's
    /// ceiling (`pcp`), or withheld by `srp` before it started, or ceiling blocked by
    /// `pcp:original` at a request for a free resource (docs/locking.md).
    pub blocked_ceiling: Time,
    /// Time its threads spun (busy-waited on their CPU) for a global resource held on another
    /// CPU (`msrp`, `mrsp`; docs/locking.md): CPU time, not counted as blocking.
    pub spin: Time,
    pub missed: bool,
    pub aborted: bool,
    /// When it was aborted (by `on_miss: abort` at its deadline, or by the policy).
    pub aborted_at: Option<Time>,
    /// Utility accrued: its task's TUF at completion (`tuf.rs`); 0 if aborted or unfinished.
    pub utility: f64,
    /// Utility possible: the TUF's maximum (1 without a TUF).
    pub max_utility: f64,
    /// CPU time its threads consumed: its work, the overheads charged to it and its memory
    /// stalls (simulator); the threads' measured CPU time (real runs: the testbed's around
    /// its work; the kernel backends' also the task's thread between jobs, see `overhead`).
    pub exec: Time,
    /// Of `exec`, overhead charged to it (simulator: decision, context switch, migration,
    /// tick, policy operations, abort handler; kernel backends: the CPU time of the task's own
    /// thread outside its work since the previous job's record, as a SCHED_DEADLINE
    /// reservation is charged it: wake-up, bookkeeping, waits that spin; testbed: 0).
    pub overhead: Time,
    /// Of `exec`, time stalled on cache misses (the simulator's cache model; 0 without it).
    pub stall: Time,
    /// Cache lines its accesses missed at L1, L2 and the last-level cache (cache model).
    pub misses: [u64; 3],
    /// Hardware counters over its execution (real runs on a machine with a PMU).
    pub hw: Option<HwCounters>,
}

/// Hardware performance counters of one job (perf_event_open), summed over its threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HwCounters {
    pub instructions: u64,
    pub cycles: u64,
    pub llc_misses: u64,
}

impl JobRecord {
    /// Set the accrued and possible utility from its task's TUF and its finish (every driver
    /// calls this when a job ends, or when it builds the record of one that never finished).
    #[inline]
    pub fn accrue(&mut self, task: &Task) {
        self.max_utility = task.max_utility();
        self.utility = match self.finish {
            Some(f) if !self.aborted => task.utility_at(f - self.release),
            _ => 0.0,
        };
    }
    pub fn response(&self) -> Option<Time> {
        self.finish.map(|f| f - self.release)
    }
    /// max(0, finish - deadline); for a job unfinished at the end, `end - deadline` (a lower
    /// bound); 0 for an aborted job (it was removed, not late: it counts as a miss instead).
    pub fn tardiness(&self, end: Time) -> Time {
        if self.aborted {
            return 0;
        }
        self.finish.unwrap_or(end).saturating_sub(self.deadline)
    }
}

/// A stretch of time during which one CPU ran one entity: a job, or thread `thread` of region
/// `region` of a fork-join job (PAWS §3; both 0 for a sequential job). Intervals are kept for
/// traces and Gantt charts only (never in the results document).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    pub cpu: u32,
    pub task: TaskId,
    pub job: u64,
    pub region: u32,
    pub thread: u32,
    /// The entity's actual demand (its thread's, for a fork-join job): where its critical
    /// sections fall in its work, as the ledger scales them (docs/semantics.md "Demand"),
    /// for a chart to place them on the interval.
    pub demand: Time,
    pub start: Time,
    pub end: Time,
    /// The first `overhead` ns of it were overhead paid before the entity's work resumed
    /// (decision, context switch, migration, cache refill, a tick): drawn as a nested slice.
    pub overhead: Time,
}

/// Counts over the whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Times the policy was asked to decide.
    pub scheduler_invocations: u64,
    /// Events processed by the substrate.
    pub events: u64,
    /// Jobs released (counted or not).
    pub releases: u64,
    /// The policy's own counters of these names, as it reports them (0 when it reports none).
    /// Columns of the schema since version 2, kept for a work-stealing policy: threads stolen;
    /// attempts (a free core with no local work and an empty global queue looked for a victim,
    /// at most once per core per decision); attempts that found no victim. Always
    /// `steal_attempts == steals + failed_steals`.
    pub steals: u64,
    pub steal_attempts: u64,
    pub failed_steals: u64,
    /// Priority inversions (docs/semantics.md): how many times one began (a decision after
    /// which some CPU runs an entity with a later deadline than a ready entity's, while none
    /// did after the previous decision), and the total time one held. Over the whole run.
    /// Measured by the job ledger; a run without one has none: `null` in its document
    /// ([`LEDGER_COUNTERS`](super::LEDGER_COUNTERS)).
    pub priority_inversions: u64,
    pub priority_inversion_ns: Time,
    /// Priority inversion per job (docs/semantics.md): a counted job accrues the time during
    /// which it has a ready entity with a strictly earlier deadline than an entity some CPU
    /// runs. How many jobs accrued any, their sum, the longest, and the 99th percentile over
    /// all counted jobs (nearest rank, zeros included). Without a job ledger: `null`.
    pub inverted_jobs: u64,
    pub inversion_job_ns: Time,
    pub inversion_job_max_ns: Time,
    pub inversion_job_p99_ns: Time,
    /// Migrations as a kernel counts them (`set_task_cpu`, docs/semantics.md): dispatches on a
    /// CPU other than the one the entity was forked or woken on (first run) or last ran on —
    /// `migrations` plus steals and fresh threads first run elsewhere. Without a job ledger:
    /// `null` (`migrations` is then the kernel's own count).
    pub kernel_migrations: u64,
    /// Deadlocks the job ledger detected (a cycle of jobs each waiting for a resource the next
    /// holds), each resolved by the policy's abort. Without a job ledger: `null`.
    pub deadlocks: u64,
    /// MrsP's helping migrations (docs/locking.md "Helping"): times the job ledger placed a
    /// preempted holder of an `mrsp` resource on a CPU where a job spins for it. Each is also
    /// in its job's `migrations`. Without a job ledger: `null`.
    pub helping_migrations: u64,
    /// SCHED_DEADLINE's CBS (the `linux` scheduler): times a deadline entity's runtime ran
    /// out (or was yielded) and it was throttled, and replenishments, over every deadline
    /// task (per task: `measurements`' `dl.<task>.throttles` / `.replenishments`). Set only
    /// by a policy with a CBS: `null` otherwise (the column catalogue's `Measured::Cbs`).
    pub throttles: Option<u64>,
    pub replenishments: Option<u64>,
    /// Overhead charged, by kind, in ns (simulator; real runs measure theirs in
    /// `measurements`).
    pub overheads: OverheadTotals,
    /// The cache model's totals (simulator with `run.cache`).
    pub cache: CacheTotals,
}

/// Overhead charged over a run, by kind (`run.overheads`; docs/overheads.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OverheadTotals {
    pub decision_ns: Time,
    pub context_switch_ns: Time,
    pub migration_ns: Time,
    pub release_ns: Time,
    pub tick_ns: Time,
    pub abort_handler_ns: Time,
    /// Charged by the policy itself (e.g. the cost of a steal).
    pub policy_ns: Time,
    /// Wall time CPUs stood stopped by the real-time bandwidth cap (`rt_runtime` of
    /// `rt_period`) with an entity on them; not CPU work, so not in `cpu_ns`. Written only
    /// when the cap is on.
    #[serde(skip_serializing_if = "is_zero")]
    pub throttle_ns: Time,
}

fn is_zero(t: &Time) -> bool {
    *t == 0
}

impl OverheadTotals {
    /// Overhead that took CPU time (release latency delays a job but takes no CPU).
    pub fn cpu_ns(&self) -> Time {
        self.decision_ns
            + self.context_switch_ns
            + self.migration_ns
            + self.tick_ns
            + self.abort_handler_ns
            + self.policy_ns
    }
}

/// The cache model's counts over a run (docs/cache-model.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheTotals {
    /// Cache lines accessed (working-set lines touched).
    pub accesses: u64,
    /// Lines missed at L1, L2 and the last-level cache.
    pub misses: [u64; 3],
    /// Lines invalidated in other CPUs' caches by memory sharers running at once.
    pub invalidations: u64,
    /// Lines evicted for capacity.
    pub evictions: u64,
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub schema: &'static str,
    /// The substrate that ran it, as its driver names itself ("sim", "testbed", ...).
    pub substrate: String,
    /// The scheduler as written by the user, with its options (e.g. `gfp:rm`).
    pub scheduler: String,
    pub taskset: String,
    pub cpus: u32,
    pub duration: Time,
    pub seed: u64,
    /// When the run stopped (every counted job was decided by then).
    pub end: Time,
    pub task_names: Vec<String>,
    /// Per task, its DAG's node names (empty for a task without a DAG): what traces show
    /// where an interval's `thread` is a node index.
    pub node_names: Vec<Vec<String>>,
    pub counters: Counters,
    /// The per-job records, in release order; empty when the run streamed them to a
    /// [`JobSink`] instead (then `streamed` holds the summaries and the count).
    pub jobs: Vec<JobRecord>,
    pub streamed: Option<Streamed>,
    pub intervals: Vec<Interval>,
    /// Substrate-specific measurements (real runs: decision overhead, release jitter, preemption
    /// latency, kernel counters), by name. Empty for simulations, which stay free of wall-clock.
    pub measurements: std::collections::BTreeMap<String, f64>,
    /// What this run could not measure, and why (e.g. `hardware_counters`: "not available
    /// here: no PMU"), by name.
    pub unavailable: std::collections::BTreeMap<String, String>,
    /// Run-level counters (by their names in `counters`) the driver that filled this run
    /// could not measure (e.g. [`LEDGER_COUNTERS`](super::LEDGER_COUNTERS)): `null` in its
    /// document, where a 0 would read as "none happened" (the catalogue's
    /// [`Measured`](super::Measured) says which columns a driver may not measure).
    pub unmeasured: &'static [&'static str],
    /// The set's chains, and one record per chain instance (docs/chains.md) as recorded (an
    /// event chain's and an implicit output's at their end, a LET output's at its release,
    /// when its publication is known); empty for a set without chains, and for a run that
    /// streamed its records to a [`JobSink`] (then `chain_summaries` holds their summaries).
    pub chain_defs: Vec<crate::task::Chain>,
    pub chains: Vec<ChainRecord>,
    /// The chains' summaries accumulated as their records streamed away; `None` when the run
    /// holds them (its summaries are then derived from `chains`).
    pub chain_summaries: Option<Vec<ChainSummary>>,
    /// With the execution intervals (traces): per record of `chains`, in its order, the job
    /// index of each of its chain's tasks on the record's path (an event chain instance's
    /// jobs; a data-flow output's data path, back to the head read), flattened: record `k`'s
    /// are the chain's length many after those of records `0..k`. Empty otherwise.
    pub chain_paths: Vec<u64>,
}

/// One instance of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainRecord {
    /// Index of the chain in the set's `chains`.
    pub chain: u32,
    /// Event chain: the first task's job index; data-flow chain: the last task's (the output).
    pub instance: u64,
    /// Event chain: the first job's release; data-flow chain: the head read of the data path.
    pub start: Time,
    /// Event chain: the last job's finish; data-flow chain: the output's publication.
    pub end: Time,
    pub latency: Option<Time>,
    pub data_age: Option<Time>,
    pub reaction_time: Option<Time>,
}

/// What a run that streamed its per-job records away keeps of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    pub jobs: u64,
    pub summaries: Summaries,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub jobs: u64,
    pub completed: u64,
    pub met: u64,
    pub missed: u64,
    pub aborted: u64,
    /// Deadline satisfaction ratio: met / jobs.
    pub dsr: f64,
    pub max_tardiness_ns: Time,
    /// Mean over all counted jobs (0 for jobs that met their deadline).
    pub mean_tardiness_ns: f64,
    pub max_response_ns: Time,
    pub mean_response_ns: f64,
    /// Nearest-rank 99th percentile over completed jobs.
    pub p99_response_ns: Time,
    pub preemptions: u64,
    pub migrations: u64,
    /// Pulls of its jobs (`JobRecord::pulls`), summed; `None` (null) when a job's were not
    /// measured.
    pub pulls: Option<u64>,
    pub context_switches: u64,
    /// Time jobs spent blocked on resources: the longest for one job, and the sum.
    pub max_blocked_ns: Time,
    pub total_blocked_ns: Time,
    /// The longest inheritance (push-through) and ceiling blocking of one job
    /// (`JobRecord::blocked_inheritance`, `blocked_ceiling`; docs/locking.md).
    pub max_blocked_inheritance_ns: Time,
    pub max_blocked_ceiling_ns: Time,
    /// Spinning for global resources (`JobRecord::spin`): the longest of one job, and the sum.
    pub max_spin_ns: Time,
    pub total_spin_ns: Time,
    /// Utility accrued and possible (time-utility functions), and their ratio AUR
    /// (1 when no utility was possible).
    pub accrued_utility: f64,
    pub possible_utility: f64,
    pub aur: f64,
    /// CPU time consumed by completed jobs over their demand (1 = no overhead, no stall).
    pub exec_inflation: f64,
    /// Work per unit of non-overhead CPU time of completed jobs, Σ demand / Σ (exec −
    /// overhead): 1 when every access hits its own cache, lower as memory stalls grow. The
    /// simulator's stand-in for IPC (LWFG Figs. 1-2), and the same ratio measured on real runs.
    pub ipc_proxy: f64,
    /// Cache-line misses at L1, L2 and the LLC (cache model).
    pub misses: [u64; 3],
}

/// Where a run's per-job records go as they are decided, when they are not held in
/// [`RunResult::jobs`]: in release order (the order `jobs` would hold them), each once; and
/// its chain instances' records, as each is made, when they are not held in
/// [`RunResult::chains`].
pub trait JobSink {
    /// One record, final. `end` is the run's end for the records still undecided when it
    /// ended (emitted last); records decided during the run come with `Time::MAX`, since no
    /// figure of theirs depends on the end.
    fn job(&mut self, rec: &JobRecord, end: Time);
    /// One chain instance's record (docs/chains.md), final, as it is made (the order the
    /// result's `chains` would hold them), if [`JobSink::takes_chains`].
    fn chain(&mut self, _rec: &ChainRecord) {}
    /// Whether the run hands its chain records to [`JobSink::chain`] instead of holding them
    /// (a sink that summarises them: [`SummarySink`](super::SummarySink) of a set with
    /// chains); false: the run holds them, whatever happens to its job records.
    fn takes_chains(&self) -> bool {
        false
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TaskSummary {
    pub name: String,
    pub summary: Summary,
}

/// Summaries derived from a run (never stored separately, so they cannot disagree).
#[derive(Clone, Debug, PartialEq)]
pub struct Summaries {
    pub total: Summary,
    pub tasks: Vec<TaskSummary>,
}

impl RunResult {
    pub fn new(substrate: &str, scheduler: &str, ts: &TaskSet) -> Self {
        RunResult {
            schema: SCHEMA,
            substrate: substrate.into(),
            scheduler: scheduler.into(),
            taskset: ts.source.clone(),
            cpus: ts.platform.cpus,
            duration: ts.run.duration,
            seed: ts.run.seed,
            end: 0,
            task_names: ts.tasks.iter().map(|t| t.name.clone()).collect(),
            node_names: ts
                .tasks
                .iter()
                .map(|t| {
                    t.dag
                        .as_ref()
                        .map(|d| d.nodes.iter().map(|n| n.name.clone()).collect())
                        .unwrap_or_default()
                })
                .collect(),
            counters: Counters::default(),
            jobs: Vec::new(),
            streamed: None,
            intervals: Vec::new(),
            measurements: Default::default(),
            unavailable: Default::default(),
            unmeasured: &[],
            chain_defs: ts.chains.clone(),
            chains: Vec::new(),
            chain_summaries: None,
            chain_paths: Vec::new(),
        }
    }

    /// Counted jobs: held in `jobs`, or streamed away.
    pub fn job_count(&self) -> u64 {
        self.streamed
            .as_ref()
            .map_or(self.jobs.len() as u64, |s| s.jobs)
    }
}

/// A chain's statistics over its instances: (max, mean, p99) of each metric, and the misses
/// of its end-to-end deadline (latency, or data age, above it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChainSummary {
    pub name: String,
    pub instances: u64,
    pub latency: Option<(f64, f64, f64)>,
    pub data_age: Option<(f64, f64, f64)>,
    pub reaction_time: Option<(f64, f64, f64)>,
    pub deadline: Option<Time>,
    pub deadline_misses: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuset() {
        let mut c = CpuSet::default();
        for x in [3, 70, 0, 3, 65] {
            c.insert(x);
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![0, 3, 65, 70]);
    }
}
