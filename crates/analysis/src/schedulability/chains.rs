//! End-to-end bounds of a set's chains (docs/chains.md), as `rtsched analyze` shows them and
//! the Python API returns them: per chain, by the analysis its kind takes —
//! - an **event chain** (each task triggered by the one before it): its latency (the last
//!   task's job's finish − the first task's job's release) ≤ R^w(last) − Φ(first), the holistic
//!   fixed point's worst finish of the last task after the head's nominal release, less the
//!   earliest the first task's job can be released after it (`holistic.rs`);
//! - an **implicit** data-flow chain: Dürr et al.'s data-age and reaction-time bounds on the
//!   same responses (`durr.rs`; never looser than Davare's of `dataflow.rs`, which
//!   [`chain_bounds_by`] gives on request);
//! - a **LET** chain: the exact maxima of its schedule-independent timeline (`let_exact.rs`),
//!   or, where that is not walked (a sporadic task, a hyperperiod too long), the LET sum's
//!   bounds (`let_sporadic.rs`).
//!
//! Responses are under the priorities the fixed-priority schedulers would give the set
//! (`crate::priority::assign`: the file's when every task has one, else rate monotonic), one
//! CPU or each task's `cpu`, self-suspensions by the jitter-based analysis. An event chain also
//! gets its bound under EDF ([`ChainBound::edf`]): the holistic EDF fixed point
//! (`holistic_edf.rs`), on one CPU or each task's `cpu`. On several CPUs with some task not
//! bound to a `cpu`, an event chain's bounds are global FP's and global EDF's
//! (`holistic_global.rs`); the data-flow chains' bounds there use the global FP responses.

use super::holistic::{event_bounds, responses, Responses};
use super::holistic_global::{self, Global};
use super::{dataflow, durr, holistic_edf, let_exact, let_sporadic};
use rtsched_model::{Communication, TaskSet, Time};

/// The bounds of one chain (ns); `None` where a metric does not apply or no bound was found
/// (`note` says why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainBound {
    pub chain: String,
    pub communication: Option<Communication>,
    pub latency: Option<Time>,
    pub data_age: Option<Time>,
    pub reaction_time: Option<Time>,
    /// The chain's end-to-end deadline, and whether the bound (latency, or data age) is
    /// within it.
    pub deadline: Option<Time>,
    pub meets_deadline: Option<bool>,
    /// The analysis, and whether its values are exact maxima (LET) rather than upper bounds.
    pub method: &'static str,
    pub exact: bool,
    pub note: String,
    /// An event chain's latency bound under EDF (the fields above are fixed priority's);
    /// `None` for a data-flow chain.
    pub edf: Option<SchedBound>,
}

/// An event chain's latency bound under one scheduler family (ns), or why none (`note`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedBound {
    pub latency: Option<Time>,
    pub meets_deadline: Option<bool>,
    pub method: &'static str,
    pub note: String,
}

/// The latency bound of event chain `name` of `set` under responses `r` (or why none), by
/// `method`, against the chain's `deadline`.
fn event_bound(
    set: &TaskSet,
    name: &str,
    deadline: Option<Time>,
    r: &Result<Responses, String>,
    method: &'static str,
) -> SchedBound {
    let (latency, note) = match r {
        Ok(r) => (
            event_bounds(set, r)
                .into_iter()
                .find(|(k, _)| k.name == name)
                .map(|(_, v)| v),
            String::new(),
        ),
        Err(e) => (None, e.clone()),
    };
    SchedBound {
        latency,
        meets_deadline: deadline.zip(latency).map(|(d, v)| v <= d),
        method: if latency.is_some() { method } else { "" },
        note,
    }
}

/// Which bound an implicit chain gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implicit {
    /// Dürr et al. 2019 (`durr.rs`), the default.
    Durr,
    /// Davare et al. 2007 (`dataflow.rs`).
    Davare,
}

/// The bounds of every chain of `set` (in its order).
pub fn chain_bounds(set: &TaskSet) -> Vec<ChainBound> {
    chain_bounds_by(set, Implicit::Durr)
}

/// [`chain_bounds`] with the implicit chains' bound `implicit`.
pub fn chain_bounds_by(set: &TaskSet, implicit: Implicit) -> Vec<ChainBound> {
    let by = crate::priority::assign(&set.tasks, None).map(|(_, by)| by);
    let prio = by
        .ok()
        .and_then(|by| super::registry::Subject::whole(set).priorities(by))
        .unwrap_or_default();
    let global = holistic_global::is_global(set);
    let r = match by {
        Ok(_) if global => holistic_global::responses(set, &prio, Global::Fp),
        Ok(by) => responses(set, by),
        Err(_) => Err("some tasks give a priority and others none".into()),
    };
    let edf = set
        .chains
        .iter()
        .any(|c| c.communication.is_none())
        .then(|| match global {
            true => holistic_global::responses(set, &vec![0; set.tasks.len()], Global::Edf),
            false => holistic_edf::responses(set),
        });
    let (fp_method, edf_method) = match global {
        true => (Global::Fp.method(), Global::Edf.method()),
        false => (super::holistic::METHOD, holistic_edf::METHOD),
    };
    set.chains
        .iter()
        .map(|c| {
            let mut b = ChainBound {
                chain: c.name.clone(),
                communication: c.communication,
                latency: None,
                data_age: None,
                reaction_time: None,
                deadline: c.deadline,
                meets_deadline: None,
                method: "",
                exact: false,
                note: String::new(),
                edf: edf
                    .as_ref()
                    .filter(|_| c.communication.is_none())
                    .map(|r| event_bound(set, &c.name, c.deadline, r, edf_method)),
            };
            match (c.communication, &r) {
                (Some(Communication::Let), _) => {
                    b.method = "let-exact";
                    b.exact = true;
                    match let_exact::maxima(set, c) {
                        Ok(m) => (b.data_age, b.reaction_time) = (m.data_age, m.reaction_time),
                        Err(e) => {
                            b.method = "LET sum (Hamann et al. 2017)";
                            b.exact = false;
                            let (age, reaction) = let_sporadic::bounds(set, c);
                            (b.data_age, b.reaction_time) = (Some(age), Some(reaction));
                            b.note = format!("not exact: {e}");
                        }
                    }
                }
                (_, Err(e)) => b.note = e.clone(),
                (None, Ok(_)) => {
                    let fp = event_bound(set, &c.name, None, &r, fp_method);
                    (b.method, b.latency) = (fp.method, fp.latency);
                }
                (Some(Communication::Implicit), Ok(r)) => {
                    let (age, reaction) = match implicit {
                        Implicit::Durr => {
                            b.method = "Dürr et al. 2019";
                            durr::bounds(set, c, r, &prio)
                        }
                        Implicit::Davare => {
                            b.method = "Davare et al. 2007";
                            dataflow::bounds(set, c, r)
                        }
                    };
                    (b.data_age, b.reaction_time) = (Some(age), Some(reaction));
                }
            }
            let compared = b.latency.or(b.data_age);
            b.meets_deadline = c.deadline.zip(compared).map(|(d, v)| v <= d);
            b
        })
        .collect()
}
