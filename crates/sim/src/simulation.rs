//! The one way to run a simulation: [`simulate`] with [`Options`] saying which scheduler, what
//! to record, where the per-job records go, which buffers to reuse, and (generic, so the
//! engine's per-event path calls them directly) an observer and a cost model.

use crate::cache::CacheModel;
use crate::cost::{CostModel, NoCache};
use crate::engine::{Engine, NoObserver, Observer, SimScratch};
use crate::error::SimError;
use rtsched_model::results::{JobSink, RunResult, Streamed, SummarySink};
use rtsched_model::TaskSet;
use rtsched_policies::Policy;

/// The policy a simulation runs.
enum Scheduler<'a> {
    /// Built from a spec (e.g. `"gedf"`, `"gfp:rm"`) for the task set.
    Spec(&'a str),
    /// Already built by the caller (who may look at it after the run).
    Policy(&'a mut dyn Policy),
}

/// Where the per-job records go.
pub enum Records<'a> {
    /// Held in the result's `jobs`.
    Held,
    /// Folded, as each job is decided, into the run's summaries (and handed on to the sink if
    /// given, e.g. a Parquet writer), so memory stays bounded whatever the run's length. The
    /// result's `jobs` is empty and `streamed` holds the count and the summaries, equal to
    /// those of the held records (same order, same sums). Chain records likewise, as each is
    /// made: the result's `chains` is empty and `chain_summaries` holds theirs.
    Summarised(Option<&'a mut (dyn JobSink + Send)>),
    /// Handed to the caller's sink and nothing else (chain records too): the result's `jobs`
    /// and `chains` are empty and it has no summaries of its own (the sink keeps them, e.g. a
    /// [`TotalSink`](rtsched_model::results::TotalSink) for a sweep's row).
    Into(&'a mut (dyn JobSink + Send)),
}

/// How to run one simulation. Built from the scheduler ([`Options::spec`],
/// [`Options::policy`]), then each setting by its method; every other setting is off.
pub struct Options<'a, O: Observer = NoObserver, C: CostModel = NoCache> {
    scheduler: Scheduler<'a>,
    intervals: bool,
    measure_policy: bool,
    policy_stats: bool,
    records: Records<'a>,
    scratch: Option<&'a mut SimScratch>,
    observer: O,
    /// None: the one the task file asks for (the cache model with `run.cache` enabled,
    /// docs/cache-model.md, else none).
    cost: Option<C>,
}

impl<'a> Options<'a> {
    /// Run the scheduler `spec` (e.g. `"gedf"`, `"gfp:rm"`).
    pub fn spec(spec: &'a str) -> Self {
        Options::of(Scheduler::Spec(spec))
    }

    /// Run an already-built policy.
    pub fn policy(policy: &'a mut dyn Policy) -> Self {
        Options::of(Scheduler::Policy(policy))
    }

    fn of(scheduler: Scheduler<'a>) -> Self {
        Options {
            scheduler,
            intervals: false,
            measure_policy: false,
            policy_stats: false,
            records: Records::Held,
            scratch: None,
            observer: NoObserver,
            cost: None,
        }
    }
}

impl<'a, O: Observer, C: CostModel> Options<'a, O, C> {
    /// Record the execution intervals (the result's `intervals`: Gantt charts, traces).
    pub fn intervals(mut self, on: bool) -> Self {
        self.intervals = on;
        self
    }

    /// Time the policy's every decision with a clock ([`Engine::measure_policy`]).
    pub fn measure_policy(mut self, on: bool) -> Self {
        self.measure_policy = on;
        self
    }

    /// Return the policy's own operation counters ([`Policy::stats`]: pushes, pulls, find-CPU
    /// calls, and ns per operation with `measure`) in [`Outcome::stats`]. Apart from the
    /// work-stealing ones the results schema names (`steals`, `steal_attempts`,
    /// `failed_steals` in `counters`), they stay out of the results document, which remains
    /// free of wall-clock figures.
    pub fn policy_stats(mut self, on: bool) -> Self {
        self.policy_stats = on;
        self
    }

    /// Where the per-job records go (default: held).
    pub fn records(mut self, records: Records<'a>) -> Self {
        self.records = records;
        self
    }

    /// Run in the buffers the run before left in `scratch`, and leave this run's there for
    /// the next: the same result, without allocating the simulator's state anew for each of
    /// many short runs (a sweep batch).
    pub fn scratch(mut self, scratch: &'a mut SimScratch) -> Self {
        self.scratch = Some(scratch);
        self
    }

    /// Call `observer` after every scheduling instant.
    pub fn observer<P: Observer>(self, observer: P) -> Options<'a, P, C> {
        Options {
            scheduler: self.scheduler,
            intervals: self.intervals,
            measure_policy: self.measure_policy,
            policy_stats: self.policy_stats,
            records: self.records,
            scratch: self.scratch,
            observer,
            cost: self.cost,
        }
    }

    /// Charge work through `cost`, whatever `run.cache` says.
    pub fn cost<D: CostModel>(self, cost: D) -> Options<'a, O, D> {
        Options {
            scheduler: self.scheduler,
            intervals: self.intervals,
            measure_policy: self.measure_policy,
            policy_stats: self.policy_stats,
            records: self.records,
            scratch: self.scratch,
            observer: self.observer,
            cost: Some(cost),
        }
    }
}

/// What a simulation returns.
#[derive(Debug)]
pub struct Outcome {
    pub result: RunResult,
    /// The policy's own counters, with [`Options::policy_stats`] (else empty).
    pub stats: Vec<(String, f64)>,
}

/// Simulate `ts` as `options` say. An error: the spec does not build for `ts` (its partitioner
/// found no partition: [`SimError::Unplaced`]), bad cache-model input, or a deadlock the policy
/// does not resolve (the run stops there).
pub fn simulate<O: Observer, C: CostModel>(
    ts: &TaskSet,
    options: Options<'_, O, C>,
) -> Result<Outcome, SimError> {
    let Options {
        scheduler,
        intervals,
        measure_policy,
        policy_stats,
        records,
        mut scratch,
        observer,
        cost,
    } = options;
    let mut built;
    let policy: &mut dyn Policy = match scheduler {
        Scheduler::Spec(spec) => {
            built = rtsched_policies::build_for(spec, ts).map_err(SimError::from)?;
            built.as_mut()
        }
        Scheduler::Policy(p) => p,
    };
    if let Some(why) = rtsched_runtime::refuses_locking(ts, policy) {
        return Err(SimError::Input(why));
    }
    let mut summarised = None;
    let sink: Option<&mut (dyn JobSink + Send)> = match records {
        Records::Held => None,
        Records::Summarised(next) => Some(summarised.insert(SummarySink::for_run(ts, next))),
        Records::Into(sink) => Some(sink),
    };
    let run = Run {
        ts,
        policy: &mut *policy,
        observer,
        intervals,
        measure_policy,
        sink,
        buffers: scratch
            .as_deref_mut()
            .map(std::mem::take)
            .unwrap_or_default(),
    };
    // The engine is generic over the cost model, so the choice is made once here and the hot
    // path calls the model directly.
    let (run, buffers) = match cost {
        Some(c) => run.with(c),
        None if ts.run.cache.enabled => run.with(CacheModel::new(ts).map_err(SimError::Input)?),
        None => run.with(NoCache),
    };
    if let Some(s) = scratch {
        *s = buffers;
    }
    let mut result = run?;
    if let Some(mut acc) = summarised {
        result.streamed = Some(Streamed {
            jobs: acc.jobs(),
            summaries: acc.summaries(&result.task_names),
        });
        result.chain_summaries = acc.chain_summaries();
    }
    let stats = if policy_stats {
        policy.stats()
    } else {
        Vec::new()
    };
    Ok(Outcome { result, stats })
}

/// A run's engine but its cost model, which [`simulate`] chooses.
struct Run<'p, O: Observer> {
    ts: &'p TaskSet,
    policy: &'p mut dyn Policy,
    observer: O,
    intervals: bool,
    measure_policy: bool,
    sink: Option<&'p mut (dyn JobSink + Send)>,
    buffers: SimScratch,
}

impl<'p, O: Observer> Run<'p, O> {
    /// Run to the end; the result and the buffers for the next run (none after an error).
    fn with<C: CostModel>(self, cost: C) -> (Result<RunResult, SimError>, SimScratch) {
        Engine::new_in(
            self.ts,
            self.policy,
            self.observer,
            cost,
            self.intervals,
            self.buffers,
        )
        .measure_policy(self.measure_policy)
        .stream_records(self.sink)
        .try_run_in()
    }
}
