//! Records: one [`JobRecord`] per job released in the counted window (ledger overview 7).
//!
//! A record's id is its index among all counted jobs (`Job::rec`, `Ent::rec`); `Run::records`
//! holds them from the oldest not yet handed on. Without a sink every record stays until the
//! end ([`Outcome::jobs`]); with one ([`Ledger::stream_records`]) each leaves, in release
//! order, as soon as it and every earlier one are decided (finished or aborted) and not pinned
//! by a driver still writing to it ([`Ledger::pin_record`]), so memory holds only the
//! undecided stretch. At the end ([`Ledger::finish`]) unfinished jobs whose deadline passed
//! are misses, blocked threads add their wait, and [`Outcome`] carries the run's counters.

use super::parts::LedgerParts;
use super::{rec_at, Failure, Ledger, Run};
use crate::state::NONE;
use rtsched_model::results::{Counters, JobRecord, JobSink};
use rtsched_model::Time;
use rtsched_policies::EntityId;

/// Where a streaming ledger's records go: the caller's sink, or one it handed over.
pub(super) enum SinkRef<'t> {
    Borrowed(&'t mut (dyn JobSink + Send)),
    Owned(Box<dyn JobSink + Send>),
}

impl SinkRef<'_> {
    #[inline]
    pub(super) fn get(&mut self) -> &mut (dyn JobSink + Send) {
        match self {
            SinkRef::Borrowed(s) => &mut **s,
            SinkRef::Owned(b) => &mut **b,
        }
    }
}

/// The end-of-run accounting.
pub struct Outcome {
    pub jobs: Vec<JobRecord>,
    pub releases: u64,
    pub invocations: u64,
    /// Overhead the policy charged with `Dispatch::charge`.
    pub charged: Time,
    /// Abort-handler time charged (`run.overheads.abort_handler`).
    pub abort_handler_ns: Time,
    /// Priority inversions (docs/semantics.md): onsets, and the time one held.
    pub priority_inversions: u64,
    pub priority_inversion_ns: Time,
    /// Priority-inversion time per counted job (its victims: docs/semantics.md).
    pub inversion_per_job: crate::inversion::PerJob,
    /// Migrations as a kernel counts them (queues.rs).
    pub kernel_migrations: u64,
    /// The policy's own counters ([`Policy::stats`](rtsched_policies::Policy::stats)) at the end of the run.
    pub stats: Vec<(String, f64)>,
    /// Deadlocks detected (each resolved by an abort of the policy).
    pub deadlocks: u64,
    /// MrsP's helping migrations: holders placed on another CPU (ledger/locking/mrsp.rs).
    pub helping_migrations: u64,
    /// With [`Ledger::measure_policy`]: wall-clock ns spent in `schedule`, in total and in the
    /// longest call.
    pub policy_ns: Option<(u64, u64)>,
    /// Best-effort tasks: CPU time and bursts each got.
    pub fair: Vec<FairOutcome>,
    /// When the run ended.
    pub end: Time,
    /// One record per chain instance (flow.rs), in the order instances ended (none when
    /// they streamed to the sink), and with [`Ledger::keep_chain_paths`] their paths
    /// (`RunResult::chain_paths`).
    pub chains: Vec<rtsched_model::results::ChainRecord>,
    pub chain_paths: Vec<u64>,
}

/// What a best-effort task got in a run.
#[derive(Clone, Debug)]
pub struct FairOutcome {
    pub name: String,
    /// CPU time its bursts consumed (work and the overheads charged to them).
    pub cpu_ns: Time,
    /// Bursts released (a hog has one).
    pub bursts: u64,
}

impl Outcome {
    /// The run-level counters of the results schema that the ledger and the policy know:
    /// invocations, releases, priority inversions, and the work-stealing counters a policy
    /// reports by name in `stats` (`steals`, `steal_attempts`, `failed_steals`; 0 when it
    /// reports none). `events` is the driver's.
    pub fn fill_counters(&self, c: &mut Counters) {
        let stat = |k: &str| {
            self.stats
                .iter()
                .find(|(n, _)| n == k)
                .map_or(0, |&(_, v)| v as u64)
        };
        c.scheduler_invocations = self.invocations;
        c.releases = self.releases;
        c.priority_inversions = self.priority_inversions;
        c.priority_inversion_ns = self.priority_inversion_ns;
        c.inverted_jobs = self.inversion_per_job.jobs;
        c.inversion_job_ns = self.inversion_per_job.total_ns;
        c.inversion_job_max_ns = self.inversion_per_job.max_ns;
        c.inversion_job_p99_ns = self.inversion_per_job.p99_ns;
        c.kernel_migrations = self.kernel_migrations;
        c.steals = stat("steals");
        c.steal_attempts = stat("steal_attempts");
        c.failed_steals = stat("failed_steals");
        c.deadlocks = self.deadlocks;
        c.helping_migrations = self.helping_migrations;
        // A policy with a CBS (`linux`) reports these; none other writes them.
        let opt = |k: &str| {
            self.stats
                .iter()
                .find(|(n, _)| n == k)
                .map(|&(_, v)| v as u64)
        };
        c.throttles = opt("throttles");
        c.replenishments = opt("replenishments");
    }

    /// The policy-overhead measurements of a run asked to measure (ChronOS Fig 6), by name:
    /// `policy_ns_per_invocation` (mean), `policy_ns_max`, `policy_ns_total`.
    pub fn fill_measurements(&self, m: &mut std::collections::BTreeMap<String, f64>) {
        for f in &self.fair {
            m.insert(format!("fair.{}.cpu_ns", f.name), f.cpu_ns as f64);
            m.insert(
                format!("fair.{}.share", f.name),
                f.cpu_ns as f64 / self.end.max(1) as f64,
            );
            m.insert(format!("fair.{}.bursts", f.name), f.bursts as f64);
        }
        // A balancing policy's counters (`cfs`: invocations, time spent, migrations it made);
        // the deadline class's per task (`linux`: `dl.<task>.throttles`, `.replenishments`).
        for (k, v) in self
            .stats
            .iter()
            .filter(|(k, _)| k.starts_with("balance.") || k.starts_with("dl."))
        {
            m.insert(k.clone(), *v);
        }
        if let Some((total, max)) = self.policy_ns {
            m.insert("policy_ns_total".into(), total as f64);
            m.insert("policy_ns_max".into(), max as f64);
            m.insert(
                "policy_ns_per_invocation".into(),
                total as f64 / self.invocations.max(1) as f64,
            );
        }
    }
}

impl<'t> Ledger<'t> {
    /// Hand each counted job's record to `sink` as soon as it and every earlier one are
    /// decided (finished or aborted), and the rest at the end, instead of holding them all:
    /// [`Outcome::jobs`] is then empty and memory holds only the undecided stretch. A driver
    /// that changes a record after its job is decided pins it first ([`Ledger::pin_record`]).
    pub fn stream_records(&mut self, sink: &'t mut (dyn JobSink + Send)) {
        self.sink = Some(SinkRef::Borrowed(sink));
    }

    /// [`Ledger::stream_records`] into a sink the ledger owns (a driver whose ledger outlives
    /// the caller's borrows, such as the testbed's, shared with its threads).
    pub fn stream_records_owned(&mut self, sink: Box<dyn JobSink + Send>) {
        self.sink = Some(SinkRef::Owned(sink));
    }

    /// Records a streaming run makes room for at first: the undecided stretch and the handed-on
    /// records not yet dropped ([`Ledger::hand_on_front`] drops them once there are
    /// `STREAMED_RECORDS / 2`), so the buffer stays at about 8 KB unless more jobs than that
    /// are undecided at once. Small on purpose: a sweep runs many short simulations, and a
    /// buffer past malloc's trim threshold (64 KB where Dask sets `MALLOC_TRIM_THRESHOLD_`)
    /// is given back to the system and faulted in again by every one of them.
    pub(super) const STREAMED_RECORDS: usize = 32;

    /// Open the record of a counted job (`job` of `task`, released at `at`, its `deadline` and
    /// `demand`) and return its id. Ids that would wrap onto "no record", and a run whose
    /// records the machine cannot hold, set the run's failure (the driver stops it).
    #[inline]
    pub(super) fn open_record(
        &mut self,
        task: u32,
        job: u64,
        at: Time,
        deadline: Time,
        demand: Time,
    ) -> u32 {
        let r = &mut self.run;
        let id = r.rec_base.wrapping_add(r.records.len() as u32);
        if id == NONE && self.failure.is_none() {
            // Four billion counted jobs: ids would wrap onto "no record". The driver stops
            // the run with this (the CLI refuses such runs up front, `--max-jobs`).
            self.failure = Some(Failure::Capacity(format!(
                "more than {} counted jobs in one run: shorten the window",
                NONE - 1
            )));
        }
        if r.records.capacity() == 0 {
            let room = if self.sink.is_some() {
                Self::STREAMED_RECORDS
            } else {
                r.expected_jobs
            };
            let room = room.min(r.expected_jobs).max(1);
            // A run that holds its records asks for them all at once: refused by the
            // machine, that is the run's error, not an abort of the process.
            if r.records.try_reserve_exact(room).is_err() && self.failure.is_none() {
                self.failure = Some(Failure::Capacity(format!(
                    "cannot hold the run's {room} per-job records ({:.1} GB): the machine refused the memory; stream them instead (--jobs-parquet, or no output that reads them after the run)",
                    (room * std::mem::size_of::<JobRecord>()) as f64 / 1e9
                )));
            }
        }
        r.records.push(JobRecord {
            task,
            job,
            release: at,
            deadline,
            demand,
            max_utility: r.ts.tasks[task as usize].max_utility(),
            pulls: r.pulls.then_some(0),
            ..Default::default()
        });
        r.undecided += 1;
        id
    }

    /// Keep record `rec` (and every later one) from the stream until [`Ledger::unpin_record`]:
    /// the driver will still add to it, even if its job is decided meanwhile.
    pub fn pin_record(&mut self, rec: u32) {
        if rec != NONE && self.sink.is_some() {
            self.pinned.push(rec);
        }
    }

    /// The driver is done with `rec` (pinned before); the stream moves on past it if it can.
    pub fn unpin_record(&mut self, rec: u32) {
        if let Some(i) = self.pinned.iter().position(|&r| r == rec) {
            self.pinned.swap_remove(i);
            self.hand_on_decided();
        }
    }

    /// Hand every decided record at the front on to the sink, in release order; drop the
    /// handed-on ones from memory once they are at least half of it (amortised O(1) a job).
    #[inline(always)]
    pub(super) fn hand_on_decided(&mut self) {
        // Only the test inline: a run that holds its records pays no call.
        if self.sink.is_some() {
            self.hand_on_front();
        }
    }

    #[inline]
    fn hand_on_front(&mut self) {
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        let sink = sink.get();
        let r = &mut self.run;
        while let Some(rec) = r.records.get(r.rec_front) {
            if rec.finish.is_none() && !rec.aborted {
                break;
            }
            if !self.pinned.is_empty()
                && self
                    .pinned
                    .contains(&r.rec_base.wrapping_add(r.rec_front as u32))
            {
                break;
            }
            sink.job(rec, Time::MAX);
            r.rec_front += 1;
        }
        if r.rec_front >= Self::STREAMED_RECORDS / 2 && 2 * r.rec_front >= r.records.len() {
            r.records.drain(..r.rec_front);
            r.rec_base = r.rec_base.wrapping_add(r.rec_front as u32);
            r.rec_front = 0;
        }
    }

    /// Records leave `pulls` unmeasured (`None`): for a driver whose threads a real kernel
    /// places (sched_ext's user-space mode), where the ledger's run queues are not the
    /// kernel's. Before the first release.
    pub fn pulls_unmeasured(&mut self) {
        self.run.pulls = false;
    }

    /// A driver that measures when work really begins records it here (first time only).
    pub fn mark_started(&mut self, e: EntityId, at: Time) {
        let rec = self.run.ents[e as usize].rec;
        if rec != NONE {
            self.run.records[rec_at(self.run.rec_base, self.run.rec_front, rec)]
                .start
                .get_or_insert(at);
        }
    }

    /// End the run at `end`: unfinished jobs whose deadline passed are misses; threads still
    /// blocked add their wait so far.
    pub fn finish(self, end: Time) -> Outcome {
        self.finish_parts(end).0
    }

    /// [`Ledger::finish`], and the ledger's buffers for the next run
    /// ([`Ledger::borrowed_in`]).
    pub fn finish_parts(mut self, end: Time) -> (Outcome, LedgerParts) {
        self.run.close_records(end);
        let fair = self.run.fair_outcomes(end);
        let outcome = self.outcome(end, fair);
        (outcome, self.into_parts())
    }

    /// The run's accounting at `end`, its records closed: the undecided stretch handed on to
    /// the sink (final now that the end is known), or every record in [`Outcome::jobs`].
    fn outcome(&mut self, end: Time, fair: Vec<FairOutcome>) -> Outcome {
        self.policy.get().finish(end);
        let r = &mut self.run;
        r.inv.finish(end);
        let counted = u64::from(r.rec_base) + r.records.len() as u64;
        let inversion_per_job = r.inv.per_job(counted);
        let (chains, chain_paths) = self.take_chain_records();
        let helping_migrations = self.locking.as_ref().map_or(0, |l| l.help_migrations());
        let r = &mut self.run;
        if let Some(sink) = self.sink.as_mut() {
            let sink = sink.get();
            // The undecided stretch, final now that the end is known.
            for rec in &r.records[r.rec_front..] {
                sink.job(rec, end);
            }
            r.records.clear();
        }
        Outcome {
            jobs: std::mem::take(&mut r.records),
            releases: r.releases,
            invocations: r.invocations,
            charged: r.charged - r.abort_handler_ns,
            abort_handler_ns: r.abort_handler_ns,
            priority_inversions: r.inv.onsets,
            priority_inversion_ns: r.inv.ns,
            inversion_per_job,
            kernel_migrations: r.kernel_migrations,
            stats: self.policy.get().stats(),
            deadlocks: r.deadlocks,
            helping_migrations,
            policy_ns: self.measure.then_some(self.policy_ns),
            fair,
            end,
            chains,
            chain_paths,
        }
    }
}

impl Run<'_> {
    /// The records of the jobs still live at `end`: blocked threads add their wait so far,
    /// a job whose deadline passed is a miss, and each thread's CPU time is added.
    fn close_records(&mut self, end: Time) {
        let r = self;
        for e in r.ents.iter().filter(|e| e.live && e.is_blocked()) {
            if e.rec != NONE {
                r.records[rec_at(r.rec_base, r.rec_front, e.rec)].blocked +=
                    end.saturating_sub(e.blocked_since);
            }
        }
        for j in r.jobs.iter().filter(|j| j.live && j.rec != NONE) {
            let rec = &mut r.records[rec_at(r.rec_base, r.rec_front, j.rec)];
            rec.missed = rec.deadline <= end;
        }
        for e in r.ents.iter().filter(|e| e.live && e.rec != NONE) {
            // The driver accounted every running entity up to `end` first (the simulator's
            // engine does; a real worker adds each piece as it ends). Overhead still owed was
            // never paid: not CPU time of the job.
            let rec = &mut r.records[rec_at(r.rec_base, r.rec_front, e.rec)];
            rec.exec += e.ran;
            rec.overhead = rec.overhead.saturating_sub(e.owed);
        }
    }

    /// What each best-effort task got up to `end`, live entities' CPU time included.
    fn fair_outcomes(&mut self, end: Time) -> Vec<FairOutcome> {
        let r = self;
        let mut fair = Vec::new();
        for e in r.ents.iter().filter(|e| e.live) {
            // A running entity's time since its CPU's mark is not yet in `ran`.
            let now = if e.cpu != NONE {
                end.saturating_sub(r.cpus[e.cpu as usize].mark)
            } else {
                0
            };
            r.task_cpu[e.info.task as usize] += e.ran + now;
        }
        for (i, t) in r.ts.tasks.iter().enumerate().filter(|(_, t)| t.is_fair()) {
            fair.push(FairOutcome {
                name: t.name.clone(),
                cpu_ns: r.task_cpu[i],
                bursts: r.bursts[i],
            });
        }
        fair
    }
}
