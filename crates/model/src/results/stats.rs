//! Statistics over a run's records: its summaries, computed from held records or accumulated
//! as the records stream by, with the same arithmetic in the same order either way.

use super::schema::{
    ChainRecord, ChainSummary, JobRecord, JobSink, RunResult, Summaries, Summary, TaskSummary,
};
use crate::task::{Chain, TaskSet};
use crate::time::Time;

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
pub(super) struct Tail {
    /// `Some(k)`: keep only the `k` largest (`kept` is then a min-heap); `None`: keep all.
    keep: Option<usize>,
    /// The most values a bounded tail expects.
    bound: u64,
    kept: Vec<Time>,
    count: u64,
}

impl Tail {
    /// Keep every value (in `buf`, emptied first, whose room is reused).
    pub(super) fn every(mut buf: Vec<Time>) -> Self {
        buf.clear();
        Tail {
            keep: None,
            bound: u64::MAX,
            kept: buf,
            count: 0,
        }
    }
    /// Keep what the p99 of at most `n` values needs (in `buf`, emptied first).
    pub(super) fn bounded(n: u64, mut buf: Vec<Time>) -> Self {
        buf.clear();
        let keep = usize::try_from(n / 100 + 2).unwrap_or(usize::MAX);
        Tail {
            keep: Some(keep),
            bound: n,
            kept: buf,
            count: 0,
        }
    }
    /// Values seen.
    pub(super) fn count(&self) -> u64 {
        self.count
    }
    fn into_buffer(self) -> Vec<Time> {
        self.kept
    }
    #[inline]
    pub(super) fn push(&mut self, v: Time) {
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
    pub(super) fn p99(&mut self) -> Time {
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
    /// Pulls summed, and whether some job's were not measured (the summary's is then null).
    pulls: u64,
    pulls_unmeasured: bool,
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
        match j.pulls {
            Some(p) => self.pulls += p as u64,
            None => self.pulls_unmeasured = true,
        }
        s.context_switches += j.context_switches as u64;
        s.max_blocked_ns = s.max_blocked_ns.max(j.blocked);
        s.total_blocked_ns += j.blocked;
        s.max_blocked_inheritance_ns = s.max_blocked_inheritance_ns.max(j.blocked_inheritance);
        s.max_blocked_ceiling_ns = s.max_blocked_ceiling_ns.max(j.blocked_ceiling);
        s.max_spin_ns = s.max_spin_ns.max(j.spin);
        s.total_spin_ns += j.spin;
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
        s.pulls = (!self.pulls_unmeasured).then_some(self.pulls);
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
    /// The chains' summaries, for a run of a set with chains ([`SummarySink::for_run`]).
    chains: Option<ChainAcc>,
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
            chains: None,
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
            chains: (!ts.chains.is_empty()).then(|| ChainAcc::for_run(ts)),
            next,
        }
    }
    /// The chains' summaries of the chain records seen (None: not a run of a set with chains
    /// built by [`SummarySink::for_run`]).
    pub fn chain_summaries(&mut self) -> Option<Vec<ChainSummary>> {
        self.chains.as_mut().map(ChainAcc::summaries)
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
        self.pulls += o.pulls;
        self.pulls_unmeasured |= o.pulls_unmeasured;
        s.context_switches += t.context_switches;
        s.max_blocked_ns = s.max_blocked_ns.max(t.max_blocked_ns);
        s.total_blocked_ns += t.total_blocked_ns;
        s.max_blocked_inheritance_ns = s
            .max_blocked_inheritance_ns
            .max(t.max_blocked_inheritance_ns);
        s.max_blocked_ceiling_ns = s.max_blocked_ceiling_ns.max(t.max_blocked_ceiling_ns);
        s.max_spin_ns = s.max_spin_ns.max(t.max_spin_ns);
        s.total_spin_ns += t.total_spin_ns;
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
    fn takes_chains(&self) -> bool {
        self.chains.is_some()
    }
    #[inline]
    fn chain(&mut self, rec: &ChainRecord) {
        if let Some(c) = self.chains.as_mut() {
            c.add(rec);
        }
        if let Some(n) = self.next.as_deref_mut() {
            n.chain(rec);
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

impl RunResult {
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
}

/// One metric's statistics as its values come: max, the sum for the mean (in record order,
/// so a streamed run's mean rounds as the held run's does), and the values its p99 needs.
struct MetricAcc {
    max: Time,
    sum: f64,
    tail: Tail,
}

impl MetricAcc {
    fn push(&mut self, v: Time) {
        self.max = self.max.max(v);
        self.sum += v as f64;
        self.tail.push(v);
    }
    /// (max, mean, p99 by nearest rank); None without a value.
    fn stats(&mut self) -> Option<(f64, f64, f64)> {
        let n = self.tail.count();
        (n > 0).then(|| (self.max as f64, self.sum / n as f64, self.tail.p99() as f64))
    }
}

/// The summaries of a set's chains accumulated record by record: from the held records after
/// a run ([`chain_summaries`]), or as each record is made when a run streams them away
/// ([`ChainAcc::for_run`], through [`SummarySink`]); the same figures
/// either way.
pub struct ChainAcc {
    chains: Vec<OneChain>,
}

struct OneChain {
    name: String,
    event: bool,
    deadline: Option<Time>,
    instances: u64,
    misses: u64,
    /// Latency, data age, reaction time.
    metrics: [MetricAcc; 3],
}

impl ChainAcc {
    /// For `chains`, each metric's p99 from `tail(chain)`.
    fn new(chains: &[Chain], tail: impl Fn(&Chain) -> Tail) -> Self {
        let chains = chains
            .iter()
            .map(|ch| {
                let m = || MetricAcc {
                    max: 0,
                    sum: 0.0,
                    tail: tail(ch),
                };
                OneChain {
                    name: ch.name.clone(),
                    event: ch.communication.is_none(),
                    deadline: ch.deadline,
                    instances: 0,
                    misses: 0,
                    metrics: [m(), m(), m()],
                }
            })
            .collect();
        ChainAcc { chains }
    }
    /// Keeping every value (a held run's records).
    pub fn every(chains: &[Chain]) -> Self {
        ChainAcc::new(chains, |_| Tail::every(Vec::new()))
    }
    /// For a run of `ts` over its window: a chain has at most as many instances as its first
    /// task (event chain) or its last task (data-flow chain: one per output) counts jobs, so
    /// each p99 keeps about 1% of that many values, whatever the run's length (twice the
    /// count, for room).
    pub fn for_run(ts: &TaskSet) -> Self {
        let d = ts.run.duration;
        ChainAcc::new(&ts.chains, |ch| {
            let t = if ch.communication.is_none() {
                ch.tasks[0]
            } else {
                *ch.tasks.last().expect("a chain has tasks")
            };
            let n = ts.tasks[t as usize].jobs_released_by(d);
            Tail::bounded(n.saturating_mul(2).saturating_add(16), Vec::new())
        })
    }
    /// One record.
    #[inline]
    pub fn add(&mut self, r: &ChainRecord) {
        let c = &mut self.chains[r.chain as usize];
        c.instances += 1;
        let vals = [r.latency, r.data_age, r.reaction_time];
        for (m, v) in c.metrics.iter_mut().zip(vals) {
            if let Some(v) = v {
                m.push(v);
            }
        }
        let e2e = if c.event { r.latency } else { r.data_age };
        if let (Some(d), Some(x)) = (c.deadline, e2e) {
            c.misses += (x > d) as u64;
        }
    }
    /// Each chain's summary (in the set's chain order).
    pub fn summaries(&mut self) -> Vec<ChainSummary> {
        self.chains
            .iter_mut()
            .map(|c| {
                let [l, a, r] = &mut c.metrics;
                ChainSummary {
                    name: c.name.clone(),
                    instances: c.instances,
                    latency: l.stats(),
                    data_age: a.stats(),
                    reaction_time: r.stats(),
                    deadline: c.deadline,
                    deadline_misses: c.misses,
                }
            })
            .collect()
    }
}

/// Each chain's summary over `records` (in the set's chain order).
pub fn chain_summaries(chains: &[Chain], records: &[ChainRecord]) -> Vec<ChainSummary> {
    let mut acc = ChainAcc::every(chains);
    records.iter().for_each(|r| acc.add(r));
    acc.summaries()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::task::{Task, TaskId};

    pub(crate) fn job(
        task: TaskId,
        release: Time,
        deadline: Time,
        finish: Option<Time>,
    ) -> JobRecord {
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
        let mut ts = TaskSet::new(
            1,
            vec![Task::periodic("a", 10, 1), Task::periodic("b", 10, 1)],
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

    /// Pulls sum per task and in the total; a summary over a job whose pulls were not
    /// measured is null, held or streamed alike.
    #[test]
    fn pulls_sum_and_are_null_where_a_job_was_not_measured() {
        let ts = TaskSet::new(
            2,
            vec![Task::periodic("a", 10, 1), Task::periodic("b", 10, 1)],
        );
        let mut r = RunResult::new("sim", "gnpedf", &ts);
        r.end = 100;
        let with = |mut j: JobRecord, p: Option<u32>| {
            j.pulls = p;
            j
        };
        r.jobs = vec![
            with(job(0, 0, 10, Some(5)), Some(1)),
            with(job(1, 0, 10, Some(5)), Some(2)),
            with(job(0, 10, 20, Some(15)), Some(3)),
        ];
        let s = r.summaries();
        assert_eq!(s.total.pulls, Some(6));
        assert_eq!(
            (s.tasks[0].summary.pulls, s.tasks[1].summary.pulls),
            (Some(4), Some(2))
        );
        let mut sink = SummarySink::for_run(&ts, None);
        r.jobs.iter().for_each(|j| sink.job(j, Time::MAX));
        assert_eq!(sink.summaries(&r.task_names), s);
        r.jobs.push(with(job(1, 10, 20, Some(15)), None));
        let s = r.summaries();
        assert_eq!(s.total.pulls, None);
        assert_eq!(
            (s.tasks[0].summary.pulls, s.tasks[1].summary.pulls),
            (Some(4), None)
        );
        let mut sink = SummarySink::for_run(&ts, None);
        r.jobs.iter().for_each(|j| sink.job(j, Time::MAX));
        assert_eq!(sink.summaries(&r.task_names), s);
        assert_eq!(
            r.to_json_value(false)["total"]["pulls"],
            serde_json::Value::Null
        );
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
