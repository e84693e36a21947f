//! Per-task results of a test, as data: for each task of the subject, its name (tasks are
//! named, never numbered, in what a user reads), the test's bound on it, its deadline and the
//! slack between them. A response-time analysis bounds each task's response time (Joseph &
//! Pandya 1986 on one CPU; Bertogna & Cirinei, RTSS 2007, and Guan et al., RTSS 2009, on
//! several); a test without a per-task quantity gives none (`Verdict::tasks` is empty).
//!
//! A bound of `None` is "not bounded within the deadline": the fixed-point iteration crossed
//! D (the analysis gives up there, as the papers do), so no finite bound is claimed.
//!
//! Tests that bound no response time give their own per-task quantity, each named for what it
//! is ([`Quantity`]) and compared with the task's deadline so that the task passes iff
//! bound ≤ D, and the verdict is "every task passes": BCL's window load (`global.rs`),
//! Baruah's worst window (`gedf_baruah.rs`), and for GFB and the density test, which are
//! conditions on the whole set, each task's term of the condition as the least deadline at
//! which it still holds (`global.rs`, [`Quantity::LeastDeadline`]).
//!
//! [`synchronous_at_wcet`] is the set the bounds are compared with in simulation (`rtsched
//! analyze --simulate`, the property tests): every task released at 0, periodically, each job
//! running its WCET.

use super::registry::Subject;
use rtsched_model::{ExecModel, OnMiss, Overheads, TaskSet, Time};

/// What a per-task bound bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// The worst-case response time (release to completion), ns.
    ResponseTime,
    /// The longest a job can wait for lower-priority work holding a resource, ns (a test
    /// that bounds no response, EDF's demand test under `srp`).
    Blocking,
    /// BCL (`global.rs`): C_k plus the interference the test bounds in a job's window
    /// [r, r + D_k], divided among the m CPUs, ⌈I_k/m⌉ — a deadline check, not a response time.
    BclLoad,
    /// Baruah's test (`gedf_baruah.rs`): C_k + max over the windows checked of ⌊Ω_k(A)/m⌋ − A,
    /// the test's condition rearranged — a deadline check, not a response time.
    BaruahLoad,
    /// GFB or the density test (`global.rs`): the least min(D, T) at which the task's own term of
    /// the set's condition still holds, the other tasks unchanged — a property of the set's
    /// condition, not a response time.
    LeastDeadline,
}

impl Quantity {
    pub fn name(self) -> &'static str {
        match self {
            Quantity::ResponseTime => "response time",
            Quantity::Blocking => "blocking",
            Quantity::BclLoad => "BCL window load",
            Quantity::BaruahLoad => "Baruah window load",
            Quantity::LeastDeadline => "least passing deadline",
        }
    }
}

/// One task's bound under one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskBound {
    /// The task's index in the set.
    pub task: usize,
    pub name: String,
    pub quantity: Quantity,
    /// The bound in ns; `None`: not bounded within the deadline.
    pub bound: Option<Time>,
    pub deadline: Time,
    /// The blocking term the bound charges (`blocking.rs`), ns; `None` for a test that charges
    /// none (a set without critical sections, a test that does not model them).
    pub blocking: Option<Time>,
    /// The spin term the bound charges per job (`spinning.rs`, MSRP's global resources; the
    /// WCET in the bound is inflated by it), ns; `None` for a test that charges none.
    pub spin: Option<Time>,
    /// The CPU the bound is for, in a per-CPU test (`p-NAME`, and so every partitioning
    /// attempt): the task's `cpu`; `None` in a test of the whole set.
    pub cpu: Option<u32>,
}

impl TaskBound {
    /// D − bound, ns; `None` when the bound is not within D.
    pub fn slack(&self) -> Option<i64> {
        self.bound.map(|b| self.deadline as i64 - b as i64)
    }
}

/// The bounds `bounds` (one per task of `s`, in its order) as the subject's tasks' rows. A
/// subject of one CPU taken from a set of several is one CPU of a per-CPU test: its rows carry
/// the tasks' `cpu`.
pub fn of(s: &Subject<'_>, quantity: Quantity, bounds: &[Option<Time>]) -> Vec<TaskBound> {
    let per_cpu = s.cpus() == 1 && s.set().platform.cpus > 1;
    s.indices()
        .iter()
        .zip(s.tasks())
        .zip(bounds)
        .map(|((&task, t), &bound)| TaskBound {
            task,
            name: t.name.clone(),
            quantity,
            bound,
            deadline: t.deadline,
            blocking: None,
            spin: None,
            cpu: t.cpu.filter(|_| per_cpu),
        })
        .collect()
}

/// `rows` with each task's blocking term `b` (in the same order).
pub fn with_blocking(rows: Vec<TaskBound>, b: &[Time]) -> Vec<TaskBound> {
    rows.into_iter()
        .zip(b)
        .map(|(r, &b)| TaskBound {
            blocking: Some(b),
            ..r
        })
        .collect()
}

/// `rows` with each task's spin term `spin` (in the same order).
pub fn with_spin(rows: Vec<TaskBound>, spin: &[Time]) -> Vec<TaskBound> {
    rows.into_iter()
        .zip(spin)
        .map(|(r, &s)| TaskBound { spin: Some(s), ..r })
        .collect()
}

/// The largest R/D of `bounds`, in words for a verdict's detail ("max R/D=0.906 (b: R=66150002
/// ns)"), or the first task not bounded within its deadline.
pub fn worst_in_words(bounds: &[TaskBound]) -> String {
    if let Some(b) = bounds.iter().find(|b| b.bound.is_none()) {
        return format!("'{}': R > D = {}ns", b.name, b.deadline);
    }
    let ratio = |b: &TaskBound| b.bound.unwrap_or(0) as f64 / b.deadline as f64;
    match bounds
        .iter()
        .max_by(|a, b| ratio(a).total_cmp(&ratio(b)).then(b.task.cmp(&a.task)))
    {
        Some(b) => format!(
            "max R/D={:.3} ('{}': R={}ns)",
            ratio(b),
            b.name,
            b.bound.unwrap_or(0)
        ),
        None => "no tasks".into(),
    }
}

/// The simulated scheduler a test's per-task bounds speak for, by the test's name (its
/// whole or per-CPU form), for the tests that give bounds: the run they are set beside.
pub const SIMULATED_BY: &[(&str, &str)] = &[
    ("edf-exact", "gedf"),
    ("p-edf-exact", "pedf"),
    ("fp-rta-rm", "gfp:rm"),
    ("fp-rta-dm", "gfp:dm"),
    ("fp-rta-file", "gfp:file"),
    ("p-fp-rta-rm", "pfp:rm"),
    ("p-fp-rta-dm", "pfp:dm"),
    ("p-fp-rta-file", "pfp:file"),
    ("gfp-rta-rm", "gfp:rm"),
    ("gfp-rta-dm", "gfp:dm"),
    ("gfp-rta-lc-rm", "gfp:rm"),
    ("gfp-rta-lc-dm", "gfp:dm"),
    ("gfp-rta-file", "gfp:file"),
    ("gfp-rta-lc-file", "gfp:file"),
    ("gedf-rta", "gedf"),
    ("gfp-dag-melani-rm", "gfp:rm"),
    ("gfp-dag-melani-dm", "gfp:dm"),
    ("gfp-dag-melani-file", "gfp:file"),
];

/// The scheduler `test`'s bounds speak for ([`SIMULATED_BY`]).
pub fn simulated_by(test: &str) -> Option<&'static str> {
    SIMULATED_BY
        .iter()
        .find(|(t, _)| *t == test)
        .map(|(_, s)| *s)
}

/// How long the synchronous run lasts: the hyperperiod and the longest deadline (every job of
/// the first hyperperiod decided), at most 50 of the longest period.
pub fn horizon(ts: &TaskSet) -> Time {
    let longest = ts.tasks.iter().map(|t| t.period).max().unwrap_or(0);
    let d_max = ts.tasks.iter().map(|t| t.deadline).max().unwrap_or(0);
    let cap = longest.saturating_mul(50);
    let h = ts.tasks.iter().try_fold(1u64, |h, t| {
        let l = h / gcd(h, t.period) * t.period;
        (l <= cap).then_some(l)
    });
    h.map_or(cap, |h| h + d_max)
}

fn gcd(mut a: Time, mut b: Time) -> Time {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `ts` released synchronously at 0 and periodically, every job running its WCET (late jobs
/// run on), for `horizon` ns, without overheads or cache costs (the bounds charge none): the
/// run whose per-task maximum response a bound is set beside.
pub fn synchronous_at_wcet(ts: &TaskSet, horizon: Time) -> TaskSet {
    let mut s = ts.clone();
    for t in &mut s.tasks {
        t.offset = 0;
        t.max_interarrival = None;
        t.execution_times.clear();
    }
    s.run.execution = ExecModel::Wcet;
    s.run.on_miss = OnMiss::Continue;
    s.run.overheads = Overheads::default();
    s.run.cache.enabled = false;
    s.run.duration = horizon;
    s
}
