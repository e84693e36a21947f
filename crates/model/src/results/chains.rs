//! Per-instance chain records and their summaries (docs/chains.md "Metrics").
//!
//! An *event chain* instance is one job of its first task and the jobs its finish released
//! down the chain: `latency` = finish of the last task's job − release of the first task's.
//! A *data-flow chain* instance is one output (a job of its last task): `data age` = its
//! publication − the first task's read at the head of its data path, `reaction time` = its
//! publication − the previous distinct head read (Dürr et al., EMSOFT 2019, §4; the choices
//! are in docs/chains.md).

use crate::results::columns::{Cell, Column, Place, Value, COLUMNS};
use crate::results::schema::{ChainRecord, RunResult};
use crate::results::stats::Tail;
use crate::task::{Chain, TaskSet};
use crate::time::Time;

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
/// ([`ChainAcc::for_run`], through [`SummarySink`](super::SummarySink)); the same figures
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

/// The chain columns of the catalogue, in its order.
pub fn chain_columns() -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(|c| c.is_at(Place::Chain))
}

/// A chain record of run `run` in column `c`.
pub fn chain_cell<'a>(c: &Column, run: &'a RunResult, r: &ChainRecord) -> Cell<'a> {
    match c.value {
        Value::Scheduler => Cell::Text(&run.scheduler),
        Value::ChainName => Cell::Text(&run.chain_defs[r.chain as usize].name),
        Value::Chain(f) => f(r),
        _ => unreachable!("{}: not a chain column", c.name),
    }
}

/// The chains' summaries of `run` as the results document holds them (`chains`: by name, each
/// metric's `max`, `mean` and `p99` in ns or null, the instance count, the deadline and its
/// misses): those accumulated as its records streamed away, or over the records it holds.
pub fn summaries_json(run: &RunResult) -> serde_json::Value {
    let stat = |s: Option<(f64, f64, f64)>| match s {
        None => serde_json::Value::Null,
        Some((max, mean, p99)) => serde_json::json!({"max": max, "mean": mean, "p99": p99}),
    };
    let mut out = serde_json::Map::new();
    let summaries = match &run.chain_summaries {
        Some(s) => s.clone(),
        None => chain_summaries(&run.chain_defs, &run.chains),
    };
    for s in summaries {
        out.insert(
            s.name.clone(),
            serde_json::json!({
                "instances": s.instances,
                "latency_ns": stat(s.latency),
                "data_age_ns": stat(s.data_age),
                "reaction_time_ns": stat(s.reaction_time),
                "deadline_ns": s.deadline,
                "deadline_misses": s.deadline_misses,
            }),
        );
    }
    serde_json::Value::Object(out)
}
