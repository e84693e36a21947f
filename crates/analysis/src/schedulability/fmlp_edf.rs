//! Blocking under the FMLP+ for partitioned EDF, with suspension-oblivious demand analysis
//! (docs/locking.md "Suspending: fmlp+ under partitioned EDF"). The protocol is Brandenburg's
//! (*The FMLP+: an asymptotically optimal real-time locking protocol for suspension-aware
//! analysis*, ECRTS 2014: FIFO queues, waiting jobs suspend, holders priority boosted and
//! ordered by request time; the partitioned form of his dissertation, UNC 2011, §6), as the
//! simulator applies it under `pedf` (`crates/runtime/src/ledger/locking/fmlp.rs`: a boost
//! lends `(0, issued)`, above every absolute deadline). The analysis there is given for job-level
//! fixed priorities in general; the terms below are derived here for EDF and the simulator's
//! rules, in the suspension-oblivious style of Brandenburg's survey (*Multiprocessor real-time
//! locking protocols: a systematic review*, 2019, §§5–6, binary semaphore protocols under
//! suspension-oblivious and suspension-aware analysis), and checked against the simulator
//! (`tests/fmlp_edf_vs_sim.rs`). τ_i is on CPU k; constrained deadlines (D ≤ T), no nesting.
//!
//! - *Remote blocking*: a request of τ_i for q waits, while q's holder is on another CPU, at
//!   most [`fmlp::request_wait`] — one section per task of each other CPU that uses q (the
//!   FIFO queue, and the boosted jobs ahead of a holder on its CPU, all requests issued
//!   earlier, one outstanding per task): the argument of `fmlp.rs` does not depend on the
//!   base scheduler, since a boosted job precedes every unboosted one under EDF too.
//!   remote_i = Σ over τ_i's sections of it. It is charged as execution (the
//!   *suspension-oblivious* treatment, sound on one CPU under EDF as under FP: Chen et al.,
//!   *Many suspensions, many problems*, Real-Time Systems 2019, "suspension-oblivious
//!   analysis"; the window argument below shows it for this case): C'_i = C_i + remote_i.
//! - *Boost blocking*: take the window [t0, d) of a missed deadline d (t0: the last instant
//!   no job of deadline ≤ d released before it is pending). Each instant of it either runs a
//!   job of deadline ≤ d (its C), or has some such job suspended on a holder of another CPU
//!   (its remote term), or runs a job of deadline > d that is *boosted*: otherwise no local
//!   job holds a resource, so every pending job of deadline ≤ d is suspended on a remote
//!   holder. A job of deadline > d that executes in the window was released before d, and
//!   with D ≤ T at most one job of a task x has its release in (d − D_x, d): so at most one
//!   job per task, and none of the task whose job misses at d (its next job is released at
//!   or after d). A job is boosted only while it holds, so for at most its sections:
//!   B(L) = max over the tasks τ_i with D_i ≤ L of B_i, B_i = Σ_{x ≠ i on k} Σ of x's
//!   section lengths. This replaces FP's count (1 + S_i per lower task, `fmlp.rs`): under
//!   EDF a job of later deadline can also lock while *other* jobs of the window suspend,
//!   so the per-job count of suspensions does not bound it; one job per task does.
//!
//! The test: h'(L) + B(L) ≤ L at every absolute deadline L (h' the demand of the C'),
//! up to where U'·L + Σ (T − D)·U'_z + B ≤ L holds for good; and each task's row is Spuri's
//! response-time bound with C' and B_i (`edf_response::response_times_blocked`: the same
//! window argument with J's finish in place of d). A set passes if either does. Sufficient:
//! a set that fails only with its blocking is inconclusive.

use super::bounds::{self, Quantity};
use super::edf_response::{self, demand};
use super::fmlp;
use super::registry::Subject;
use super::{Cdt, Verdict};
use rtsched_model::{TaskSet, Time};

/// Deadlines checked by the demand test at most; beyond it the test gives no answer.
const MAX_DEADLINES: usize = 1_000_000;

/// remote_i for each of the tasks `idx` of `ts` (one CPU's; other CPUs from the `cpu` fields).
pub fn remote_terms(ts: &TaskSet, idx: &[usize]) -> Vec<Time> {
    idx.iter()
        .map(|&i| {
            ts.tasks[i]
                .sections
                .iter()
                .map(|s| fmlp::request_wait(ts, i, s.resource as usize))
                .sum()
        })
        .collect()
}

/// B_i for each of the tasks `idx` of `ts` (one CPU's): the other tasks' section lengths.
pub fn boost_terms(ts: &TaskSet, idx: &[usize]) -> Vec<Time> {
    let held = |i: usize| -> Time { ts.tasks[i].sections.iter().map(|s| s.length).sum() };
    let all: Time = idx.iter().map(|&i| held(i)).sum();
    idx.iter().map(|&i| all - held(i)).collect()
}

/// The demand test on `cdt` (the C') with per-task blocking `b`: h'(L) + B(L) ≤ L at every
/// absolute deadline L, B(L) the largest b_i with D_i ≤ L. `Err(Some(L))` names the first L
/// that fails, `Err(None)` U' > 1, U' = 1 with blocking, or too many deadlines.
pub fn demand_test(cdt: &[Cdt], b: &[Time]) -> Result<(), Option<Time>> {
    let u: f64 = cdt.iter().map(Cdt::utilisation).sum();
    let b_max = b.iter().copied().max().unwrap_or(0) as f64;
    let slack: f64 = cdt
        .iter()
        .map(|x| x.t.saturating_sub(x.d) as f64 * x.utilisation())
        .sum();
    if u >= 1.0 && (u > 1.0 || b_max > 0.0) {
        return Err(None);
    }
    let d_max = cdt.iter().map(|x| x.d).max().unwrap_or(0) as f64;
    // Beyond this, U'·L + slack + B ≤ L: rounded up with a margin (a larger one is safe).
    let end = d_max.max((slack + b_max) / (1.0 - u).max(1e-12) + 1.0);
    if !end.is_finite() || end > 1e18 {
        return Err(None);
    }
    let end = end.ceil() as Time;
    let mut points: Vec<Time> = Vec::new();
    for x in cdt {
        let mut d = x.d;
        while d <= end {
            points.push(d);
            if points.len() > MAX_DEADLINES {
                return Err(None);
            }
            d += x.t;
        }
    }
    points.sort_unstable();
    points.dedup();
    let b_at = |l: Time| {
        (0..cdt.len())
            .filter(|&i| cdt[i].d <= l)
            .map(|i| b[i])
            .max()
            .unwrap_or(0)
    };
    match points
        .into_iter()
        .find(|&l| demand(cdt, l) + b_at(l) as u128 > l as u128)
    {
        Some(l) => Err(Some(l)),
        None => Ok(()),
    }
}

/// The tasks `idx` of `ts` (one CPU's) as (C', D, T), C' = C + remote_i; with `remote` false
/// the plain C (the property test's control).
pub fn inflated(ts: &TaskSet, idx: &[usize], remote: bool) -> Vec<Cdt> {
    let r = remote_terms(ts, idx);
    idx.iter()
        .zip(&r)
        .map(|(&i, &x)| {
            let c = Cdt::from(&ts.tasks[i]);
            Cdt {
                c: c.c + if remote { x } else { 0 },
                ..c
            }
        })
        .collect()
}

/// Each of the tasks `idx`'s (one CPU's) response-time bound (Spuri's, with C' and B_i),
/// `None` past its deadline; with `remote` or `boost` false that term is left out (controls).
pub fn response_times(ts: &TaskSet, idx: &[usize], remote: bool, boost: bool) -> Vec<Option<Time>> {
    let b = match boost {
        true => boost_terms(ts, idx),
        false => vec![0; idx.len()],
    };
    edf_response::response_times_blocked(&inflated(ts, idx, remote), &b)
}

/// Whether the tasks `idx` of `ts` (one CPU's, the others placed by their `cpu` fields) pass
/// under `fmlp+` on EDF: the demand test or every row within its deadline. For admission
/// (`crate::partition`) as for `p-edf-exact`.
pub fn passes(ts: &TaskSet, idx: &[usize]) -> bool {
    let cdt = inflated(ts, idx, true);
    demand_test(&cdt, &boost_terms(ts, idx)).is_ok()
        || response_times(ts, idx, true, true)
            .iter()
            .all(Option::is_some)
}

/// `edf-exact` (one CPU, or per CPU as `p-edf-exact`) under `fmlp+`: the overview's test,
/// each task's row its response-time bound with blocking term remote_i + B_i. `plain_fails`:
/// the plain demand test (no blocking) refutes the tasks, so a failure here is one too.
pub fn verdict(s: &Subject<'_>, name: &str, plain_fails: bool) -> Verdict {
    let ts = s.set();
    if let Some(v) = super::fmlp::unconstrained(s, name, "under EDF") {
        return v;
    }
    let idx = s.indices();
    let (remote, boost) = (remote_terms(ts, idx), boost_terms(ts, idx));
    let cdt = inflated(ts, idx, true);
    let r = response_times(ts, idx, true, true);
    let b: Vec<Time> = remote.iter().zip(&boost).map(|(a, b)| a + b).collect();
    let rows = bounds::with_blocking(bounds::of(s, Quantity::ResponseTime, &r), &b);
    let demand = demand_test(&cdt, &boost);
    let ok = demand.is_ok() || r.iter().all(Option::is_some);
    let verdict = match ok {
        true => Some(true),
        false if plain_fails => Some(false),
        false => None,
    };
    let u: f64 = cdt.iter().map(Cdt::utilisation).sum();
    let why = match demand {
        Ok(()) => "h'(L) + B(L) ≤ L at every deadline".to_string(),
        Err(Some(l)) => format!("h'(L) + B(L) > L at L={l}ns"),
        Err(None) => "the demand test gives no answer".to_string(),
    };
    let detail = format!(
        "U'={u:.6}; {why}; {}; blocking under fmlp+ charged (suspension-oblivious: remote waits as execution, boost blocking of one job per other task)",
        bounds::worst_in_words(&rows)
    );
    Verdict::new(name, verdict, detail).with_tasks(rows)
}
