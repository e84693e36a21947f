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
use crate::results::stats::chain_summaries;

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
