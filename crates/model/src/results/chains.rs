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
use crate::task::Chain;
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

/// Max, mean and p99 (nearest rank) of `v`; None if empty.
fn stats(mut v: Vec<Time>) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let rank = ((0.99 * n as f64).ceil() as usize).clamp(1, n);
    Some((v[n - 1] as f64, mean, v[rank - 1] as f64))
}

/// Each chain's summary over `records` (in the set's chain order).
pub fn chain_summaries(chains: &[Chain], records: &[ChainRecord]) -> Vec<ChainSummary> {
    chains
        .iter()
        .enumerate()
        .map(|(c, ch)| {
            let mine = records.iter().filter(|r| r.chain as usize == c);
            let pick = |f: fn(&ChainRecord) -> Option<Time>| -> Vec<Time> {
                mine.clone().filter_map(f).collect()
            };
            let e2e = if ch.communication.is_none() {
                pick(|r| r.latency)
            } else {
                pick(|r| r.data_age)
            };
            ChainSummary {
                name: ch.name.clone(),
                instances: mine.clone().count() as u64,
                latency: stats(pick(|r| r.latency)),
                data_age: stats(pick(|r| r.data_age)),
                reaction_time: stats(pick(|r| r.reaction_time)),
                deadline: ch.deadline,
                deadline_misses: ch
                    .deadline
                    .map_or(0, |d| e2e.iter().filter(|&&x| x > d).count() as u64),
            }
        })
        .collect()
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

/// The chains' summaries as the results document holds them (`chains`: by name, each metric's
/// `max`, `mean` and `p99` in ns or null, the instance count, the deadline and its misses).
pub fn summaries_json(chains: &[Chain], records: &[ChainRecord]) -> serde_json::Value {
    let stat = |s: Option<(f64, f64, f64)>| match s {
        None => serde_json::Value::Null,
        Some((max, mean, p99)) => serde_json::json!({"max": max, "mean": mean, "p99": p99}),
    };
    let mut out = serde_json::Map::new();
    for s in chain_summaries(chains, records) {
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
