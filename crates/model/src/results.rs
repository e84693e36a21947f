//! The one results schema (DESIGN.md "Semantics"): per-job records, per-task and total
//! summaries, counters, and execution intervals. The simulator, real runs and kernel runs all
//! fill a [`RunResult`]; everything else (JSON, CSV, Perfetto trace, tables, plots) is
//! computed from it, so any two runs can be diffed.

use crate::task::{TaskId, TaskSet};
use crate::time::Time;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// The results document's version. 2: run-level `steals`, `steal_attempts`, `failed_steals`,
/// `priority_inversions` and `priority_inversion_ns` in `counters`. 3: utility (`accrued_utility`,
/// `possible_utility`, `aur` in every summary; `utility`, `max_utility`, `aborted_at_ns` per
/// job), `deadlocks` in `counters`. 4: execution time, overheads and caches: per job `exec_ns`,
/// `overhead_ns`, `stall_ns`, `misses` (L1, L2, LLC) and `hw` (hardware counters); `overheads`
/// (charged ns by kind) and `cache` in `counters`; `exec_inflation`, `ipc_proxy` and `misses`
/// in every summary; `unavailable` (what this run could not measure, and why).
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
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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
    pub context_switches: u32,
    /// Total time its threads spent blocked on resources (critical sections).
    pub blocked: Time,
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
    pub fn accrue(&mut self, task: &crate::task::Task) {
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

/// A stretch of time during which one CPU ran one entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Interval {
    pub cpu: u32,
    pub task: TaskId,
    pub job: u64,
    pub thread: u32,
    pub start: Time,
    pub end: Time,
    /// The first `overhead` ns of it were overhead paid before the entity's work resumed
    /// (decision, context switch, migration, cache refill, a tick): drawn as a nested slice.
    pub overhead: Time,
}

/// Counts over the whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Times the policy was asked to decide.
    pub scheduler_invocations: u64,
    /// Events processed by the substrate.
    pub events: u64,
    /// Jobs released (counted or not).
    pub releases: u64,
    /// Work stealing, as the policy counts it (PAWS; 0 for policies that do not steal): threads
    /// stolen; attempts (a free core with no local work and an empty global queue looked for a
    /// victim, at most once per core per decision); attempts that found no victim. Always
    /// `steal_attempts == steals + failed_steals`.
    pub steals: u64,
    pub steal_attempts: u64,
    pub failed_steals: u64,
    /// Priority inversions (docs/semantics.md): how many times one began (a decision after
    /// which some CPU runs an entity with a later deadline than a ready entity's, while none
    /// did after the previous decision), and the total time one held. Over the whole run.
    /// Measured by the job ledger (simulator, testbed); kernel runs have none: `null` in their
    /// documents ([`NOT_MEASURED_IN_KERNEL_RUNS`]).
    pub priority_inversions: u64,
    pub priority_inversion_ns: Time,
    /// Priority inversion per job (docs/semantics.md): a counted job accrues the time during
    /// which it has a ready entity with a strictly earlier deadline than an entity some CPU
    /// runs. How many jobs accrued any, their sum, the longest, and the 99th percentile over
    /// all counted jobs (nearest rank, zeros included). Kernel runs: `null`.
    pub inverted_jobs: u64,
    pub inversion_job_ns: Time,
    pub inversion_job_max_ns: Time,
    pub inversion_job_p99_ns: Time,
    /// Migrations as a kernel counts them (`set_task_cpu`, docs/semantics.md): dispatches on a
    /// CPU other than the one the entity was forked or woken on (first run) or last ran on —
    /// `migrations` plus steals and fresh threads first run elsewhere. Kernel runs: `null`
    /// (their `migrations` is the kernel's own count).
    pub kernel_migrations: u64,
    /// Deadlocks the job ledger detected (a cycle of jobs each waiting for a resource the next
    /// holds), each resolved by the policy's abort. Kernel runs: `null`.
    pub deadlocks: u64,
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
    /// Charged by the policy itself (`Dispatch::charge`: e.g. PAWS's steal cost).
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

/// Run-level counters a kernel run (`kernel:*`, no ledger) cannot measure: `null` in its document.
pub const NOT_MEASURED_IN_KERNEL_RUNS: [&str; 11] = [
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
];

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    pub schema: &'static str,
    /// "sim", "testbed", "kernel".
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
    pub counters: Counters,
    /// The per-job records, in release order; empty when the run streamed them to a
    /// [`JobSink`] instead (then `streamed` holds the summaries and the count).
    pub jobs: Vec<JobRecord>,
    #[serde(skip)]
    pub streamed: Option<Streamed>,
    #[serde(skip)]
    pub intervals: Vec<Interval>,
    /// Substrate-specific measurements (real runs: decision overhead, release jitter, preemption
    /// latency, kernel counters), by name. Empty for simulations, which stay free of wall-clock.
    pub measurements: std::collections::BTreeMap<String, f64>,
    /// What this run could not measure, and why (e.g. `hardware_counters`: "not available
    /// here: no PMU"), by name.
    pub unavailable: std::collections::BTreeMap<String, String>,
}

/// What a run that streamed its per-job records away keeps of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    pub jobs: u64,
    pub summaries: Summaries,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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
    pub context_switches: u64,
    /// Time jobs spent blocked on resources: the longest for one job, and the sum.
    pub max_blocked_ns: Time,
    pub total_blocked_ns: Time,
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

impl Summary {
    fn of<'a>(
        jobs: impl Iterator<Item = &'a JobRecord>,
        end: Time,
        scratch: &mut Vec<Time>,
    ) -> Summary {
        scratch.clear();
        let mut acc = SummaryAcc {
            responses: Tail::every(std::mem::take(scratch)),
            ..SummaryAcc::default()
        };
        for j in jobs {
            acc.add(j, end);
        }
        let s = acc.summary();
        *scratch = acc.responses.into_buffer();
        s
    }
}

/// The response times a nearest-rank p99 needs, out of a stream of them.
///
/// The p99 of `c` values is the `ceil(0.99 c)`-th smallest, i.e. the `k(c)`-th largest with
/// `k(c) = c - ceil(0.99 c) + 1`, at most `c / 100 + 2`. When the stream is known to hold at
/// most `n` values (a run counts at most [`TaskSet::jobs_released_by`] jobs), the
/// `n / 100 + 2` largest seen so far always contain the answer, whatever comes later: that
/// is all a bounded tail keeps (a min-heap), about 1% of the values, exactly the same p99.
/// Without a bound every value is kept (a sweep row's few dozen, a slice of held records).
#[derive(Clone, Debug, Default)]
struct Tail {
    /// `Some(k)`: keep only the `k` largest (`kept` is then a min-heap); `None`: keep all.
    keep: Option<usize>,
    /// The most values a bounded tail expects.
    bound: u64,
    kept: Vec<Time>,
    count: u64,
}

impl Tail {
    /// Keep every value (in `buf`, emptied first, whose room is reused).
    fn every(mut buf: Vec<Time>) -> Self {
        buf.clear();
        Tail {
            keep: None,
            bound: u64::MAX,
            kept: buf,
            count: 0,
        }
    }
    /// Keep what the p99 of at most `n` values needs (in `buf`, emptied first).
    fn bounded(n: u64, mut buf: Vec<Time>) -> Self {
        buf.clear();
        let keep = usize::try_from(n / 100 + 2).unwrap_or(usize::MAX);
        Tail {
            keep: Some(keep),
            bound: n,
            kept: buf,
            count: 0,
        }
    }
    fn into_buffer(self) -> Vec<Time> {
        self.kept
    }
    #[inline]
    fn push(&mut self, v: Time) {
        self.count += 1;
        let Some(k) = self.keep else {
            self.kept.push(v);
            return;
        };
        if self.kept.len() < k {
            sift_up_min(&mut self.kept, v);
        } else if v > self.kept[0] {
            // Full: `v` replaces the smallest kept value.
            self.kept[0] = v;
            sift_down_min(&mut self.kept);
        }
        if self.count > self.bound {
            // More values than the bound (a driver counting more jobs than its task set can
            // release): keep every one from here on, so only values dropped before now can be
            // missing from the p99. Not expected; a debug build stops here.
            debug_assert!(
                false,
                "{} response times, more than the bound {}",
                self.count, self.bound
            );
            self.keep = None;
        }
    }
    /// Add every value `o` kept (tails that keep everything; a bounded total is fed directly).
    fn extend(&mut self, o: &Tail) {
        debug_assert!(
            self.keep.is_none() && o.keep.is_none(),
            "only tails keeping every value merge"
        );
        self.kept.extend_from_slice(&o.kept);
        self.count += o.count;
    }
    /// The nearest-rank p99 of every value seen (0 when none). Reorders what is kept.
    fn p99(&mut self) -> Time {
        if self.count == 0 || self.kept.is_empty() {
            return 0;
        }
        let rank = ((0.99 * self.count as f64).ceil() as u64).max(1);
        // The rank-th smallest of all is the (count - rank + 1)-th largest: the
        // (kept - (count - rank + 1))-th smallest of the largest ones kept.
        let from_top = usize::try_from(self.count - rank + 1)
            .unwrap_or(usize::MAX)
            .min(self.kept.len());
        let i = self.kept.len() - from_top;
        // O(kept): the same value a full sort puts there.
        *self.kept.select_nth_unstable(i).1
    }
}

/// Restore the min-heap order of `h` after its root was replaced. Written by hand rather than
/// a `BinaryHeap<Reverse<Time>>`: one plain `Vec<Time>` serves both kinds of tail and is reused
/// from run to run (`TotalSink::reset_for`; `Summary::of`'s scratch buffer), which a heap of
/// another element type could not be without copying.
#[inline]
fn sift_down_min(h: &mut [Time]) {
    let (n, mut i) = (h.len(), 0);
    let v = h[0];
    loop {
        let l = 2 * i + 1;
        if l >= n {
            break;
        }
        let c = if l + 1 < n && h[l + 1] < h[l] {
            l + 1
        } else {
            l
        };
        if h[c] >= v {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/// Push `v` onto the min-heap `h`.
#[inline]
fn sift_up_min(h: &mut Vec<Time>, v: Time) {
    let mut i = h.len();
    h.push(v);
    while i > 0 {
        let p = (i - 1) / 2;
        if h[p] <= v {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

/// A [`Summary`] built one record at a time, in run order: what a run that streams its records
/// away keeps instead of them (a few words, and the response times the p99 needs: every one,
/// or about 1% of them when the number of jobs is bounded, see [`Tail`]). [`Summary::of`] is
/// this over a slice, so the two cannot disagree.
#[derive(Clone, Debug, Default)]
pub struct SummaryAcc {
    s: Summary,
    tard_sum: u128,
    resp_sum: u128,
    demand: u128,
    exec: u128,
    busy: u128,
    responses: Tail,
}

impl SummaryAcc {
    /// Count one job. `end` is the run's end; only an unfinished, unaborted job's tardiness
    /// depends on it (such records reach a sink only at the end, when it is known).
    #[inline]
    pub fn add(&mut self, j: &JobRecord, end: Time) {
        let s = &mut self.s;
        s.jobs += 1;
        if let Some(r) = j.response() {
            s.completed += 1;
            self.resp_sum += r as u128;
            s.max_response_ns = s.max_response_ns.max(r);
            self.responses.push(r);
        }
        if j.missed {
            s.missed += 1;
        } else {
            s.met += 1;
        }
        s.aborted += j.aborted as u64;
        let t = if j.missed { j.tardiness(end) } else { 0 };
        self.tard_sum += t as u128;
        s.max_tardiness_ns = s.max_tardiness_ns.max(t);
        s.preemptions += j.preemptions as u64;
        s.migrations += j.migrations as u64;
        s.context_switches += j.context_switches as u64;
        s.max_blocked_ns = s.max_blocked_ns.max(j.blocked);
        s.total_blocked_ns += j.blocked;
        s.accrued_utility += j.utility;
        s.possible_utility += j.max_utility;
        if j.finish.is_some() && !j.aborted && j.exec > 0 {
            self.demand += j.demand as u128;
            self.exec += j.exec as u128;
            self.busy += j.exec.saturating_sub(j.overhead) as u128;
        }
        for l in 0..3 {
            s.misses[l] += j.misses[l];
        }
    }

    /// The summary of the jobs counted so far (reorders the response times for the p99).
    pub fn summary(&mut self) -> Summary {
        let mut s = self.s.clone();
        s.exec_inflation = if self.demand > 0 {
            self.exec as f64 / self.demand as f64
        } else {
            1.0
        };
        s.ipc_proxy = if self.busy > 0 {
            self.demand as f64 / self.busy as f64
        } else {
            1.0
        };
        s.aur = if s.possible_utility > 0.0 {
            s.accrued_utility / s.possible_utility
        } else {
            1.0
        };
        if s.jobs > 0 {
            s.dsr = s.met as f64 / s.jobs as f64;
            s.mean_tardiness_ns = self.tard_sum as f64 / s.jobs as f64;
        } else {
            s.dsr = 1.0;
        }
        if s.completed > 0 {
            s.mean_response_ns = self.resp_sum as f64 / s.completed as f64;
            s.p99_response_ns = self.responses.p99();
        }
        s
    }
}

/// Where a run's per-job records go as they are decided, when they are not held in
/// [`RunResult::jobs`]: in release order (the order `jobs` would hold them), each once.
pub trait JobSink {
    /// One record, final. `end` is the run's end for the records still undecided when it
    /// ended (emitted last); records decided during the run come with `Time::MAX`, since no
    /// figure of theirs depends on the end.
    fn job(&mut self, rec: &JobRecord, end: Time);
}

/// The summaries of a run whose records were streamed away: each task's, accumulated in run
/// order, and the total merged from them at the end (its two floating-point sums, utility
/// accrued and possible, are kept in run order here so they round as the held run's do);
/// plus an optional further sink (a Parquet writer) fed the same records.
pub struct SummarySink<'a> {
    tasks: Vec<SummaryAcc>,
    /// The whole run's response times, when the tasks' tails are bounded (a total p99 cannot
    /// be merged from each task's largest 1%: one task may hold most of the run's).
    total_tail: Option<Tail>,
    accrued: f64,
    possible: f64,
    next: Option<&'a mut (dyn JobSink + Send)>,
}

impl<'a> SummarySink<'a> {
    /// For a run of `tasks` tasks, keeping every response time.
    pub fn new(tasks: usize, next: Option<&'a mut (dyn JobSink + Send)>) -> Self {
        SummarySink {
            tasks: vec![SummaryAcc::default(); tasks],
            total_tail: None,
            accrued: 0.0,
            possible: 0.0,
            next,
        }
    }
    /// For a run of `ts` over its window (`run.duration`): each task counts at most
    /// [`Task::jobs_released_by`](crate::task::Task::jobs_released_by) jobs, so the p99s need
    /// only about 1% of the response times (twice: each task's and the run's), whatever the
    /// run's length.
    pub fn for_run(ts: &TaskSet, next: Option<&'a mut (dyn JobSink + Send)>) -> Self {
        let d = ts.run.duration;
        let acc = |n| SummaryAcc {
            responses: Tail::bounded(n, Vec::new()),
            ..SummaryAcc::default()
        };
        let tasks = ts
            .tasks
            .iter()
            .map(|t| acc(t.jobs_released_by(d)))
            .collect();
        let total_tail = Some(Tail::bounded(ts.jobs_released_by(d), Vec::new()));
        SummarySink {
            tasks,
            total_tail,
            accrued: 0.0,
            possible: 0.0,
            next,
        }
    }
    /// Records seen so far.
    pub fn jobs(&self) -> u64 {
        self.tasks.iter().map(|a| a.s.jobs).sum()
    }
    /// The total and per-task summaries (`task_names` in task order).
    pub fn summaries(&mut self, task_names: &[String]) -> Summaries {
        let mut total = SummaryAcc::default();
        for a in &self.tasks {
            total.merge(a, self.total_tail.is_none());
        }
        if let Some(t) = self.total_tail.take() {
            total.responses = t;
        }
        total.s.accrued_utility = self.accrued;
        total.s.possible_utility = self.possible;
        let tasks = self
            .tasks
            .iter_mut()
            .zip(task_names)
            .map(|(a, n)| TaskSummary {
                name: n.clone(),
                summary: a.summary(),
            })
            .collect();
        Summaries {
            total: total.summary(),
            tasks,
        }
    }
}

impl SummaryAcc {
    /// Add `o`'s counts, sums and (with `responses`) response times; not its floating-point
    /// sums: their order matters, see [`SummarySink`].
    fn merge(&mut self, o: &SummaryAcc, responses: bool) {
        let (s, t) = (&mut self.s, &o.s);
        s.jobs += t.jobs;
        s.completed += t.completed;
        s.met += t.met;
        s.missed += t.missed;
        s.aborted += t.aborted;
        s.max_tardiness_ns = s.max_tardiness_ns.max(t.max_tardiness_ns);
        s.max_response_ns = s.max_response_ns.max(t.max_response_ns);
        s.preemptions += t.preemptions;
        s.migrations += t.migrations;
        s.context_switches += t.context_switches;
        s.max_blocked_ns = s.max_blocked_ns.max(t.max_blocked_ns);
        s.total_blocked_ns += t.total_blocked_ns;
        for l in 0..3 {
            s.misses[l] += t.misses[l];
        }
        self.tard_sum += o.tard_sum;
        self.resp_sum += o.resp_sum;
        self.demand += o.demand;
        self.exec += o.exec;
        self.busy += o.busy;
        if responses {
            self.responses.extend(&o.responses);
        }
    }
}

impl JobSink for SummarySink<'_> {
    #[inline]
    fn job(&mut self, rec: &JobRecord, end: Time) {
        self.tasks[rec.task as usize].add(rec, end);
        if let (Some(t), Some(r)) = (&mut self.total_tail, rec.response()) {
            t.push(r);
        }
        self.accrued += rec.utility;
        self.possible += rec.max_utility;
        if let Some(n) = self.next.as_deref_mut() {
            n.job(rec, end);
        }
    }
}

/// The total summary alone, accumulated as the records stream by: what a sweep's row keeps
/// of a run. Equal to [`RunResult::total_summary`] of the same run holding its records (the
/// same [`SummaryAcc`] over the same records in the same order). [`TotalSink::reset_for`] keeps
/// its buffer, so a batch of runs allocates it once.
#[derive(Default)]
pub struct TotalSink {
    acc: SummaryAcc,
}

impl TotalSink {
    /// Forget every record seen (the response-time buffer keeps its room), ready for a run of
    /// `ts` over its window: it counts at most [`TaskSet::jobs_released_by`] jobs, so the p99
    /// needs only about 1% of their response times, whatever the run's length.
    pub fn reset_for(&mut self, ts: &TaskSet) {
        let buf = std::mem::take(&mut self.acc.responses).into_buffer();
        let n = ts.jobs_released_by(ts.run.duration);
        self.acc = SummaryAcc {
            responses: Tail::bounded(n, buf),
            ..SummaryAcc::default()
        };
    }
    /// The summary of the records seen since the last reset.
    pub fn summary(&mut self) -> Summary {
        self.acc.summary()
    }
}

impl JobSink for TotalSink {
    #[inline]
    fn job(&mut self, rec: &JobRecord, end: Time) {
        self.acc.add(rec, end);
    }
}

/// A sink that holds the records (tests compare it with `RunResult::jobs`).
impl JobSink for Vec<JobRecord> {
    fn job(&mut self, rec: &JobRecord, _end: Time) {
        self.push(rec.clone());
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskSummary {
    pub name: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// Summaries derived from a run (never stored separately, so they cannot disagree).
#[derive(Clone, Debug, PartialEq, Serialize)]
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
            counters: Counters::default(),
            jobs: Vec::new(),
            streamed: None,
            intervals: Vec::new(),
            measurements: Default::default(),
            unavailable: Default::default(),
        }
    }

    /// Counted jobs: held in `jobs`, or streamed away.
    pub fn job_count(&self) -> u64 {
        self.streamed
            .as_ref()
            .map_or(self.jobs.len() as u64, |s| s.jobs)
    }

    pub fn summaries(&self) -> Summaries {
        if let Some(s) = &self.streamed {
            return s.summaries.clone();
        }
        let mut scratch = Vec::with_capacity(self.jobs.len());
        let total = Summary::of(self.jobs.iter(), self.end, &mut scratch);
        // Each task's jobs gathered in one pass (in run order, so sums are unchanged): a
        // filtered pass per task would read every record once per task.
        let mut by_task: Vec<Vec<&JobRecord>> = vec![Vec::new(); self.task_names.len()];
        for j in &self.jobs {
            by_task[j.task as usize].push(j);
        }
        let tasks = by_task
            .iter()
            .enumerate()
            .map(|(t, jobs)| TaskSummary {
                name: self.task_names[t].clone(),
                summary: Summary::of(jobs.iter().copied(), self.end, &mut scratch),
            })
            .collect();
        Summaries { total, tasks }
    }

    /// The total summary alone: what a sweep row keeps, without the per-task summaries
    /// [`summaries`](Self::summaries) also derives (a sweep pays for every allocation per run).
    pub fn total_summary(&self) -> Summary {
        if let Some(s) = &self.streamed {
            return s.summaries.total.clone();
        }
        Summary::of(
            self.jobs.iter(),
            self.end,
            &mut Vec::with_capacity(self.jobs.len()),
        )
    }

    /// The results document: run header, summaries, counters and (optionally) per-job records.
    pub fn to_json_value(&self, with_jobs: bool) -> serde_json::Value {
        let s = self.summaries();
        let mut v = serde_json::json!({
            "schema": self.schema,
            "substrate": self.substrate,
            "scheduler": self.scheduler,
            "taskset": self.taskset,
            "cpus": self.cpus,
            "duration_ns": self.duration,
            "seed": self.seed,
            "end_ns": self.end,
            "counters": self.counters,
            "total": s.total,
            "tasks": s.tasks,
        });
        if self.substrate == "kernel" {
            // No job ledger and no rtsched policy decides: these are not measured, and a 0
            // would read as "none happened".
            for k in NOT_MEASURED_IN_KERNEL_RUNS {
                v["counters"][k] = serde_json::Value::Null;
            }
        }
        if !self.measurements.is_empty() {
            v["measurements"] =
                serde_json::to_value(&self.measurements).expect("numbers serialise");
        }
        if !self.unavailable.is_empty() {
            v["unavailable"] = serde_json::to_value(&self.unavailable).expect("strings serialise");
        }
        if with_jobs {
            v["jobs"] = self
                .jobs
                .iter()
                .map(|j| {
                    serde_json::to_value(JobJson { run: self, job: j }).expect("a job serialises")
                })
                .collect();
        }
        v
    }
}

/// One per-job record as the results document spells it (the task by name, times in ns).
struct JobJson<'a> {
    run: &'a RunResult,
    job: &'a JobRecord,
}

impl Serialize for JobJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let j = self.job;
        let mut m = s.serialize_struct("Job", 22)?;
        m.serialize_field("task", &self.run.task_names[j.task as usize])?;
        m.serialize_field("job", &j.job)?;
        m.serialize_field("release_ns", &j.release)?;
        m.serialize_field("deadline_ns", &j.deadline)?;
        m.serialize_field("demand_ns", &j.demand)?;
        m.serialize_field("start_ns", &j.start)?;
        m.serialize_field("finish_ns", &j.finish)?;
        m.serialize_field("cpus", &j.cpus)?;
        m.serialize_field("preemptions", &j.preemptions)?;
        m.serialize_field("migrations", &j.migrations)?;
        m.serialize_field("context_switches", &j.context_switches)?;
        m.serialize_field("blocked_ns", &j.blocked)?;
        m.serialize_field("missed", &j.missed)?;
        m.serialize_field("aborted", &j.aborted)?;
        m.serialize_field("aborted_at_ns", &j.aborted_at)?;
        m.serialize_field("utility", &j.utility)?;
        m.serialize_field("max_utility", &j.max_utility)?;
        m.serialize_field("exec_ns", &j.exec)?;
        m.serialize_field("overhead_ns", &j.overhead)?;
        m.serialize_field("stall_ns", &j.stall)?;
        m.serialize_field("misses", &j.misses)?;
        m.serialize_field("hw", &j.hw)?;
        m.end()
    }
}

/// The results file: `{"schema", "runs": [document, ...]}`, pretty-printed. With `with_jobs`,
/// each document ends with its per-job records, streamed one record per line as they are
/// serialised: neither the document nor the records are ever held as one JSON value, so a
/// run of millions of jobs writes in constant memory.
pub fn write_results_json(
    runs: &[&RunResult],
    with_jobs: bool,
    w: &mut dyn Write,
) -> io::Result<()> {
    held_jobs(runs, with_jobs)?;
    write!(w, "{{\n  \"schema\": {},\n  \"runs\": [", json_str(SCHEMA))?;
    for (i, r) in runs.iter().enumerate() {
        w.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        // The header (summaries, counters) is small: printed as a whole, indented to its depth.
        let head = serde_json::to_string_pretty(&r.to_json_value(false))?.replace('\n', "\n    ");
        if !with_jobs {
            w.write_all(head.as_bytes())?;
            continue;
        }
        let open = head
            .strip_suffix('}')
            .expect("a document is an object")
            .trim_end();
        write!(w, "{open},\n      \"jobs\": [")?;
        // serde_json writes a record in dozens of small pieces: a buffer of a concrete type
        // takes them inline instead of through `dyn Write` calls.
        let mut bw = io::BufWriter::with_capacity(1 << 16, &mut *w);
        for (k, j) in r.jobs.iter().enumerate() {
            bw.write_all(if k == 0 {
                b"\n        "
            } else {
                b",\n        "
            })?;
            serde_json::to_writer(&mut bw, &JobJson { run: r, job: j })?;
        }
        bw.flush()?;
        drop(bw);
        w.write_all(if r.jobs.is_empty() {
            b"]\n    }"
        } else {
            b"\n      ]\n    }"
        })?;
    }
    w.write_all(if runs.is_empty() {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    })
}

/// The CSV header for per-job records.
pub const JOBS_CSV_HEADER: &str = "scheduler,task,job,release_ns,deadline_ns,start_ns,finish_ns,response_ns,tardiness_ns,demand_ns,cpus,preemptions,migrations,context_switches,missed,aborted,blocked_ns,aborted_at_ns,utility,max_utility,exec_ns,overhead_ns,stall_ns,misses_l1,misses_l2,misses_llc,hw_instructions,hw_cycles,hw_llc_misses";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write_jobs_csv(runs: &[&RunResult], w: &mut (impl Write + ?Sized)) -> io::Result<()> {
    held_jobs(runs, true)?;
    writeln!(w, "{JOBS_CSV_HEADER}")?;
    for r in runs {
        let sched = csv_field(&r.scheduler);
        for j in &r.jobs {
            jobs_csv_row(
                w,
                &sched,
                &csv_field(&r.task_names[j.task as usize]),
                j,
                r.end,
            )?;
        }
    }
    Ok(())
}

/// One record as a line of [`JOBS_CSV_HEADER`]'s columns (`sched` and `task` already quoted as
/// CSV needs); `end` is the run's end, for the tardiness of a job missed and unfinished.
fn jobs_csv_row(
    w: &mut (impl Write + ?Sized),
    sched: &str,
    task: &str,
    j: &JobRecord,
    end: Time,
) -> io::Result<()> {
    let opt = |x: Option<Time>| x.map(|v| v.to_string()).unwrap_or_default();
    let cpus: Vec<String> = j.cpus.iter().map(|c| c.to_string()).collect();
    writeln!(
        w,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:?},{:?},{},{},{},{},{},{},{},{},{}",
        sched,
        task,
        j.job,
        j.release,
        j.deadline,
        opt(j.start),
        opt(j.finish),
        opt(j.response()),
        if j.missed { j.tardiness(end) } else { 0 },
        j.demand,
        cpus.join(";"),
        j.preemptions,
        j.migrations,
        j.context_switches,
        j.missed as u8,
        j.aborted as u8,
        j.blocked,
        opt(j.aborted_at),
        j.utility,
        j.max_utility,
        j.exec,
        j.overhead,
        j.stall,
        j.misses[0],
        j.misses[1],
        j.misses[2],
        opt(j.hw.map(|h| h.instructions)),
        opt(j.hw.map(|h| h.cycles)),
        opt(j.hw.map(|h| h.llc_misses))
    )
}

/// The per-job CSV written while runs go ([`JobSink`]): each record becomes its line as its
/// job is decided, so a run of millions of jobs writes `--jobs-csv` without holding them
/// (held, 10 million records took 2.4 GB before the first line was written). The lines are
/// those [`write_jobs_csv`] writes for the held records, in the same order.
pub struct JobsCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    sched: String,
    tasks: Vec<String>,
    error: Option<io::Error>,
}

impl<W: Write> JobsCsvWriter<W> {
    pub fn new(w: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, w);
        writeln!(out, "{JOBS_CSV_HEADER}")?;
        Ok(JobsCsvWriter {
            out,
            sched: String::new(),
            tasks: Vec::new(),
            error: None,
        })
    }
    /// The records that follow are run `scheduler`'s, over tasks `task_names`.
    pub fn begin_run(&mut self, scheduler: &str, task_names: &[String]) {
        self.sched = csv_field(scheduler);
        self.tasks = task_names.iter().map(|t| csv_field(t)).collect();
    }
    /// The first write error, if any (the records after it were dropped).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }
    /// Flush; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write> JobSink for JobsCsvWriter<W> {
    fn job(&mut self, rec: &JobRecord, end: Time) {
        if self.error.is_none() {
            let task = self.tasks.get(rec.task as usize).map_or("", String::as_str);
            if let Err(e) = jobs_csv_row(&mut self.out, &self.sched, task, rec, end) {
                self.error = Some(e);
            }
        }
    }
}

/// ns as a decimal number of microseconds, exactly ("12.345"), as the trace format wants.
fn us(ns: Time) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("string serialises")
}

/// A Chrome / Perfetto trace (JSON trace-event format): one process per run, one track per
/// CPU, one complete ("X") slice per execution interval, an instant event per missed deadline.
/// Opens in ui.perfetto.dev and chrome://tracing.
pub fn write_trace(runs: &[&RunResult], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    let mut first = true;
    let mut sep = |w: &mut dyn Write| -> io::Result<()> {
        if !first {
            writeln!(w, ",")?;
        }
        first = false;
        Ok(())
    };
    for (pid, r) in runs.iter().enumerate() {
        sep(w)?;
        write!(
            w,
            "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json_str(&format!("{} ({})", r.scheduler, r.substrate))
        )?;
        for cpu in 0..r.cpus {
            sep(w)?;
            write!(w, "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{cpu},\"name\":\"thread_name\",\"args\":{{\"name\":\"CPU {cpu}\"}}}}")?;
        }
        sep(w)?;
        write!(w, "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":\"deadline misses\"}}}}", r.cpus)?;
        for iv in &r.intervals {
            sep(w)?;
            let name = &r.task_names[iv.task as usize];
            let label = if iv.thread == 0 {
                format!("{name}/{}", iv.job)
            } else {
                format!("{name}/{}.{}", iv.job, iv.thread)
            };
            write!(
                w,
                "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":{}}}",
                iv.cpu,
                us(iv.start),
                us(iv.end - iv.start),
                json_str(&label),
                json_str(name)
            )?;
            if iv.overhead > 0 {
                sep(w)?;
                write!(
                    w,
                    "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":\"overhead\",\"cat\":\"overhead\"}}",
                    iv.cpu,
                    us(iv.start),
                    us(iv.overhead.min(iv.end - iv.start))
                )?;
            }
        }
        for j in r.jobs.iter().filter(|j| j.missed) {
            sep(w)?;
            write!(
                w,
                "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"name\":{}}}",
                r.cpus,
                us(j.deadline),
                json_str(&format!("miss {}/{}", r.task_names[j.task as usize], j.job))
            )?;
        }
    }
    writeln!(w, "\n]}}")?;
    Ok(())
}

/// An error unless every run holds its per-job records (when they are to be written): a run
/// that streamed them away has none, and writing none would read as "no jobs".
pub(crate) fn held_jobs(runs: &[&RunResult], needed: bool) -> io::Result<()> {
    match runs.iter().find(|r| needed && r.streamed.is_some()) {
        Some(r) => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("run {} did not keep its per-job records (they were streamed away as its jobs ended)", r.scheduler))),
        None => Ok(()),
    }
}

/// Write a file atomically: into a temporary file beside it, flushed and synced, then renamed
/// over the target. A crash or error leaves either the old file or the new one, never half.
/// What the path names decides how (see [`AtomicFile::create`]): a device is written through,
/// never replaced; a directory or an other kind of file is refused.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_atomic_file(path, |w| f(w))
}

/// [`write_atomic`] for writers that need a concrete, `Send` writer (the Parquet writer).
pub fn write_atomic_file(
    path: &Path,
    f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    let mut a = AtomicFile::create(path)?;
    f(a.writer())?;
    a.commit()
}

/// How an output path is written ([`output_target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file, or none yet: replaced atomically. For a symbolic link, the file it
    /// leads to (the link stays a link).
    Replace(std::path::PathBuf),
    /// `-` (standard output), a character device (`/dev/null`, `/dev/stdout`) or a FIFO the
    /// user named: opened and written, never replaced.
    Through(std::path::PathBuf),
}

/// Decide how `path` is written, or refuse it: a directory, a block device, a socket, or a
/// symbolic link that leads nowhere is never replaced, whoever runs this (root too).
pub fn output_target(path: &Path) -> io::Result<OutputTarget> {
    use std::os::unix::fs::FileTypeExt;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    if path.as_os_str() == "-" {
        return Ok(OutputTarget::Through(path.to_path_buf()));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(OutputTarget::Replace(path.to_path_buf()))
        }
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    let (target, meta) = if meta.file_type().is_symlink() {
        match (std::fs::canonicalize(path), std::fs::metadata(path)) {
            (Ok(t), Ok(m)) => (t, m),
            _ => return refuse("a symbolic link that leads to no file: refusing to write through it or to replace it".into()),
        }
    } else {
        (path.to_path_buf(), meta)
    };
    let ft = meta.file_type();
    if ft.is_file() {
        Ok(OutputTarget::Replace(target))
    } else if ft.is_char_device() || ft.is_fifo() {
        Ok(OutputTarget::Through(target))
    } else if ft.is_dir() {
        refuse("is a directory".into())
    } else {
        let kind = if ft.is_block_device() {
            "a block device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        refuse(format!("is {kind}: refusing to replace it"))
    }
}

/// A file written atomically over a time: into a temporary file beside the target, renamed
/// over it by `commit` once flushed and synced. Dropped without `commit` (an error, a
/// panic, an interrupted run), the temporary file is removed and the target is untouched.
/// A target that is written through ([`OutputTarget::Through`]) is written as it goes.
pub struct AtomicFile {
    path: std::path::PathBuf,
    /// The temporary file, None when writing through.
    tmp: Option<std::path::PathBuf>,
    w: Option<io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let path = match output_target(path)? {
            OutputTarget::Through(p) => {
                let file = if p.as_os_str() == "-" {
                    use std::os::fd::AsFd;
                    std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?)
                } else {
                    std::fs::OpenOptions::new().write(true).open(&p)?
                };
                return Ok(AtomicFile {
                    path: p,
                    tmp: None,
                    w: Some(io::BufWriter::with_capacity(1 << 16, file)),
                });
            }
            OutputTarget::Replace(p) => p,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)?;
        let fname = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
        // A new file only (O_EXCL): whatever already has a temporary file's name, a link
        // someone left there included, is never opened or written.
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut attempt = 0;
        let (tmp, file) = loop {
            let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tmp = dir.join(format!(
                ".{}.tmp.{}.{n}",
                fname.to_string_lossy(),
                std::process::id()
            ));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
            {
                Ok(f) => break (tmp, f),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(e) => return Err(e),
            }
        };
        Ok(AtomicFile {
            path,
            tmp: Some(tmp),
            w: Some(io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    pub fn writer(&mut self) -> &mut io::BufWriter<std::fs::File> {
        self.w.as_mut().expect("not committed yet")
    }

    /// Flush, sync and rename over the target (written through: flush).
    pub fn commit(mut self) -> io::Result<()> {
        let bw = self.w.take().expect("committed once");
        let Some(tmp) = self.tmp.take() else {
            return bw.into_inner().map(drop).map_err(|e| e.into_error());
        };
        let res = (|| {
            let file = bw.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            if let Some(tmp) = &self.tmp {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(task: TaskId, release: Time, deadline: Time, finish: Option<Time>) -> JobRecord {
        JobRecord {
            task,
            release,
            deadline,
            finish,
            start: finish.map(|_| release),
            missed: finish.is_none_or(|f| f > deadline),
            ..Default::default()
        }
    }

    #[test]
    fn summary_by_hand() {
        let mut ts = crate::task::TaskSet::new(
            1,
            vec![
                crate::task::Task::periodic("a", 10, 1),
                crate::task::Task::periodic("b", 10, 1),
            ],
        );
        ts.source = "x".into();
        let mut r = RunResult::new("sim", "gedf", &ts);
        r.end = 100;
        r.jobs = vec![
            job(0, 0, 10, Some(5)),
            job(0, 10, 20, Some(25)),
            job(1, 0, 10, None),
            job(1, 10, 20, Some(20)),
        ];
        let s = r.summaries();
        assert_eq!(s.total.jobs, 4);
        assert_eq!(s.total.missed, 2);
        assert_eq!(s.total.met, 2);
        assert_eq!(s.total.dsr, 0.5);
        assert_eq!(s.total.max_tardiness_ns, 90); // unfinished: end - deadline
        assert_eq!(s.total.mean_tardiness_ns, (5.0 + 90.0) / 4.0);
        assert_eq!(s.total.max_response_ns, 15);
        assert_eq!(s.total.p99_response_ns, 15);
        assert_eq!(s.tasks[1].summary.jobs, 2);
        assert_eq!(s.tasks[1].summary.completed, 1);
        assert_eq!(
            r.total_summary(),
            s.total,
            "a sweep row's summary is the document's total"
        );
    }

    #[test]
    fn streamed_json_is_the_documents() {
        let ts = crate::task::TaskSet::new(
            1,
            vec![
                crate::task::Task::periodic("a", 10, 1),
                crate::task::Task::periodic("b", 10, 1),
            ],
        );
        let mut r = RunResult::new("sim", "gedf", &ts);
        r.end = 100;
        r.jobs = vec![job(0, 0, 10, Some(5)), job(1, 0, 10, None)];
        r.jobs[0].cpus.insert(70);
        let empty = RunResult::new("sim", "pedf", &ts);
        let runs = [&r, &empty];
        let doc = |jobs: bool| serde_json::json!({"schema": SCHEMA, "runs": runs.iter().map(|r| r.to_json_value(jobs)).collect::<Vec<_>>()});
        let text = |jobs: bool| {
            let mut out = Vec::new();
            write_results_json(&runs, jobs, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // Without jobs: exactly the pretty-printed document.
        assert_eq!(
            text(false),
            serde_json::to_string_pretty(&doc(false)).unwrap() + "\n"
        );
        let with: serde_json::Value = serde_json::from_str(&text(true)).unwrap();
        assert_eq!(with, doc(true));
        assert_eq!(
            with["runs"][0]["jobs"][1]["finish_ns"],
            serde_json::Value::Null
        );
        assert_eq!(with["runs"][1]["jobs"], serde_json::json!([]));
        let mut none = Vec::new();
        write_results_json(&[], true, &mut none).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&none).unwrap(),
            serde_json::json!({"schema": SCHEMA, "runs": []})
        );
    }

    #[test]
    fn cpuset() {
        let mut c = CpuSet::default();
        for x in [3, 70, 0, 3, 65] {
            c.insert(x);
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![0, 3, 65, 70]);
    }

    #[test]
    fn atomic_write_replaces_whole() {
        let d = std::env::temp_dir().join(format!("rtsched-aw-{}", std::process::id()));
        let p = d.join("out.txt");
        write_atomic(&p, |w| w.write_all(b"one")).unwrap();
        let e = write_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("boom"))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Only a regular file is replaced: a link is followed (and stays a link), a device or a
    /// FIFO is written through, a directory and a link to nothing are refused.
    #[test]
    fn outputs_replace_only_regular_files() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let d = std::env::temp_dir().join(format!("rtsched-out-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("file.txt");
        std::fs::write(&file, "old").unwrap();
        let link = d.join("link.txt");
        symlink(&file, &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");

        let dangling = d.join("dangling");
        symlink(d.join("nowhere/x"), &dangling).unwrap();
        let e = write_atomic(&dangling, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("leads to no file"), "{e}");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!d.join("nowhere").exists());

        let e = write_atomic(&d, |w| w.write_all(b"x")).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert_eq!(
            output_target(Path::new("/dev/null")).unwrap(),
            OutputTarget::Through("/dev/null".into())
        );
        assert_eq!(
            output_target(Path::new("-")).unwrap(),
            OutputTarget::Through("-".into())
        );

        // A FIFO: written through to its reader, still a FIFO after.
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        extern "C" {
            fn mkfifo(path: *const std::os::raw::c_char, mode: u32) -> i32;
        }
        // SAFETY: a valid NUL-terminated path; mkfifo reads it only.
        assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomic(&fifo, |w| w.write_all(b"through")).unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        let names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 4, "no temporary file left: {names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[cfg(test)]
mod tail_tests {
    use super::*;
    use proptest::prelude::*;

    fn p99_of_all(v: &[Time]) -> Time {
        let mut t = Tail::every(Vec::new());
        v.iter().for_each(|&x| t.push(x));
        t.p99()
    }

    proptest! {
        /// A bounded tail keeps about 1% of the values and gives the p99 a full sort gives,
        /// whatever the order (sorted both ways, where the kept set changes most) and the slack
        /// between the count and the bound.
        #[test]
        fn a_bounded_tail_gives_the_exact_p99(
            v in prop::collection::vec(0u64..1_000, 0..3_000), slack in 0u64..500, order in 0u8..3,
        ) {
            let mut v = v;
            match order {
                1 => v.sort_unstable(),
                2 => v.sort_unstable_by(|a, b| b.cmp(a)),
                _ => {}
            }
            let n = v.len() as u64 + slack;
            let mut t = Tail::bounded(n, Vec::new());
            for (i, &x) in v.iter().enumerate() {
                t.push(x);
                prop_assert!(t.kept.len() as u64 <= n / 100 + 2);
                // Exact at every prefix, not only at the end.
                if i % 97 == 0 {
                    let mut u = t.clone();
                    prop_assert_eq!(u.p99(), p99_of_all(&v[..=i]));
                }
            }
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let want = if v.is_empty() { 0 } else { sorted[((0.99 * v.len() as f64).ceil() as usize).max(1) - 1] };
            prop_assert_eq!(t.p99(), want);
            prop_assert_eq!(p99_of_all(&v), want);
        }
    }

    #[test]
    fn a_run_long_or_short_keeps_one_percent_of_its_response_times() {
        // 1,000,000 response times, the largest last: 10,002 kept, not a million.
        let mut t = Tail::bounded(1_000_000, Vec::new());
        for x in 0..1_000_000u64 {
            t.push(x);
        }
        assert_eq!(t.kept.len(), 10_002);
        assert_eq!(t.p99(), 989_999, "the 990,000th smallest of 0..1e6");
    }
}
