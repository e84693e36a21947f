//! Partitioning heuristics as pure functions: task set in, CPU of each task out.
//!
//! The bin-packing family of LWFG §3.1 — first, next, best and worst fit, each over a task
//! order — and LWFG itself (§3.2, Algorithm 1, in `lwfg.rs`). A CPU is a bin; whether a task
//! (or a memory-sharing group) fits is decided by an `Admission` test on the bin's tasks plus
//! the newcomers, by default the exact uniprocessor EDF test. Best and worst fit rank bins by
//! their total density (the "size" of LWFG §3.1).
//!
//! Names (`by_name`): `ffd`, `bfd`, `wfd`, `nfd` (decreasing utilisation), `ffdd`, `bfdd`, `wfdd`,
//! `nfdd` (decreasing density), `bf` (Baruah & Fisher: first fit, increasing relative deadline),
//! `lwfg`, any `FIT:ORDER` (FIT in first|next|best|worst, ORDER in util|density|deadline|wss|none),
//! `global` (always "succeeds", meaning: schedule globally), and fallback chains joined by `+`
//! (`lwfg+ffd+global`, as LWFG §3.2 recommends), tried left to right. `+` is the one chain form,
//! here, in `rtsched partition` and inside a scheduler spec (where `,` separates options, so
//! `pedf:lwfg,ffd` would be two options); a `,` in a name is refused, saying so.
//!
//! Overflow: `NAME-overflow` (e.g. `lwfg-overflow`, `ffd-overflow`) runs the heuristic but places
//! a task that no CPU admits on the least utilised CPU and goes on, instead of failing: the
//! "infeasibly-partitioned tasksets" LWFG §5 (Obs. 5, Fig. 4) ran anyway and counted the misses
//! of. Such a partition is not schedulable by construction; `Partition::overflowed` names the
//! tasks placed beyond admission.
//!
//! Overheads: when the task set sets `run.overheads` (or a profile is given to
//! `partition_with`), every heuristic admits on the WCETs inflated by them
//! (`crate::overheads`), so a partition it accepts holds in the overhead-charged simulator.

pub mod fit;
pub mod lwfg;
pub mod remote;
pub mod sections;

pub use fit::{Fit, Order};

use crate::overheads::{inflate, Class};
use crate::schedulability::uniprocessor::{edf_exact, fp_rta};
use crate::schedulability::{cmp_sum, Cdt};
use rtsched_model::text::closest;
use rtsched_model::{Overheads, TaskSet};
use std::cmp::Ordering;
use std::fmt;

/// The test that decides whether tasks fit on one CPU.
#[derive(Clone, Debug, PartialEq)]
pub enum Admission {
    /// Exact uniprocessor EDF: U ≤ 1 when D ≥ T, processor demand (QPA) otherwise.
    EdfExact,
    /// Σ C/min(D,T) ≤ 1 (what LWFG §3.2 "Feasibility" uses; exact for implicit deadlines).
    Density,
    /// Exact preemptive FP response-time analysis with these priorities (per task of the set;
    /// larger is more urgent). For partitioned FP (`pfp`).
    FpRta(Vec<u32>),
    /// The test with the set's blocking terms, resources kept local (`sections.rs`).
    Blocking(Box<Admission>, Box<sections::Sections>),
    /// The test with a multiprocessor protocol's spin and blocking terms, resources local or
    /// global as placed, every CPU re-checked at each placement (`remote.rs`).
    Remote(Box<Admission>, Box<remote::Remote>),
}

impl Admission {
    pub fn name(&self) -> &'static str {
        match self {
            Admission::EdfExact => "edf-exact",
            Admission::Density => "density",
            Admission::FpRta(_) => "fp-rta",
            Admission::Blocking(base, _) | Admission::Remote(base, _) => base.name(),
        }
    }
}

/// A successful partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// CPU of each task (file order). Empty when `heuristic == "global"`.
    pub cpu_of_task: Vec<u32>,
    /// The heuristic that produced it (in a chain, the one that succeeded; the chain's own name
    /// is `Partitioner::name`).
    pub heuristic: String,
    /// Tasks placed without passing admission (`-overflow` heuristics only), in placing order.
    pub overflowed: Vec<usize>,
}

impl Partition {
    pub fn is_global(&self) -> bool {
        self.heuristic == "global"
    }
}

/// A heuristic could not place a task.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionError {
    pub heuristic: String,
    /// Index and name of the task that did not fit.
    pub task: usize,
    pub task_name: String,
    pub message: String,
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: task '{}' (tasks[{}]) {}",
            self.heuristic, self.task_name, self.task, self.message
        )
    }
}

impl std::error::Error for PartitionError {}

/// CPUs as bins: their tasks and running sums for the fast path of the admission test.
pub struct Bins<'a> {
    pub(crate) tasks: &'a [Cdt],
    admission: &'a Admission,
    members: Vec<Vec<usize>>,
    util: Vec<f64>,
    dens: Vec<f64>,
    /// Every member has D ≥ T, so U ≤ 1 is the exact EDF test.
    d_ge_t: Vec<bool>,
    scratch: Vec<Cdt>,
    /// Tasks placed by `overflow`, beyond admission.
    overflowed: Vec<usize>,
    /// Why the last placement `Admission::Remote` refused was refused (the test's words).
    pub(crate) refused: Option<String>,
}

/// Tasks offered to a CPU together (one task, or an LWFG memory-sharing group).
pub struct Newcomers<'n> {
    idx: &'n [usize],
    util: f64,
    dens: f64,
    d_ge_t: bool,
}

/// Within this distance of 1 the f64 running sums are not trusted: recompute exactly.
const NEAR: f64 = 1e-9;

impl<'a> Bins<'a> {
    pub fn new(tasks: &'a [Cdt], m: u32, admission: &'a Admission) -> Self {
        let m = m as usize;
        Bins {
            tasks,
            admission,
            members: vec![Vec::new(); m],
            util: vec![0.0; m],
            dens: vec![0.0; m],
            d_ge_t: vec![true; m],
            scratch: Vec::new(),
            overflowed: Vec::new(),
            refused: None,
        }
    }

    pub fn cpus(&self) -> usize {
        self.members.len()
    }

    /// Total density on `cpu` (the bin's level for best / worst fit).
    pub fn load(&self, cpu: usize) -> f64 {
        self.dens[cpu]
    }

    fn sum_le_one(
        &self,
        cpu: usize,
        new: &[usize],
        fast: f64,
        term: impl Fn(&Cdt) -> (u64, u64),
    ) -> bool {
        if fast < 1.0 - NEAR {
            return true;
        }
        if fast > 1.0 + NEAR {
            return false;
        }
        let all = self.members[cpu]
            .iter()
            .chain(new)
            .map(|&i| term(&self.tasks[i]));
        cmp_sum(all, 1, 1) != Ordering::Greater
    }

    /// The tasks `idx` as one candidate for `admits`, their sums computed once for all CPUs.
    pub fn newcomers<'n>(&self, idx: &'n [usize]) -> Newcomers<'n> {
        let t = self.tasks;
        Newcomers {
            idx,
            util: idx.iter().map(|&i| t[i].utilisation()).sum(),
            dens: idx.iter().map(|&i| t[i].density()).sum(),
            d_ge_t: idx.iter().all(|&i| t[i].d >= t[i].t),
        }
    }

    /// Would `cpu` still pass the admission test with `new` added?
    pub fn admits(&mut self, cpu: usize, new: &Newcomers) -> bool {
        let idx = new.idx;
        let adm: &'a Admission = self.admission;
        if !self.sum_le_one(cpu, idx, self.util[cpu] + new.util, |x| (x.c, x.t)) {
            if let Admission::Remote(..) = adm {
                self.refused = Some(format!("cpu {cpu}: U > 1"));
            }
            return false; // U > 1 fails every test
        }
        if let Admission::Remote(base, r) = adm {
            let placed: Vec<(usize, u32)> = (0..self.cpus())
                .flat_map(|c| self.members[c].iter().map(move |&i| (i, c as u32)))
                .chain(idx.iter().map(|&i| (i, cpu as u32)))
                .collect();
            let verdict = remote::check(self.tasks, &placed, base, r);
            self.refused = verdict.as_ref().err().cloned();
            return verdict.is_ok();
        }
        if let Admission::Blocking(base, s) = adm {
            let all: Vec<usize> = self.members[cpu].iter().chain(idx).copied().collect();
            let elsewhere = (0..self.cpus())
                .filter(|&c| c != cpu)
                .flat_map(|c| self.members[c].iter().copied());
            return sections::admits(self.tasks, &all, idx, elsewhere, base, s);
        }
        let d_ge_t = self.d_ge_t[cpu] && new.d_ge_t;
        let dens = self.dens[cpu] + new.dens;
        match self.admission {
            Admission::EdfExact if d_ge_t => true,
            Admission::Density if d_ge_t => true,
            Admission::Density => self.sum_le_one(cpu, idx, dens, |x| (x.c, x.d.min(x.t))),
            Admission::EdfExact => {
                // Density ≤ 1 is sufficient and cheap; only otherwise run QPA.
                if self.sum_le_one(cpu, idx, dens, |x| (x.c, x.d.min(x.t))) {
                    return true;
                }
                self.fill_scratch(cpu, idx);
                edf_exact(&self.scratch) == Some(true)
            }
            Admission::FpRta(prio) => {
                let p: Vec<u32> = self.members[cpu]
                    .iter()
                    .chain(idx)
                    .map(|&i| prio[i])
                    .collect();
                self.fill_scratch(cpu, idx);
                fp_rta(&self.scratch, &p).0
            }
            Admission::Blocking(..) | Admission::Remote(..) => unreachable!("decided above"),
        }
    }

    fn fill_scratch(&mut self, cpu: usize, new: &[usize]) {
        self.scratch.clear();
        let tasks = self.tasks;
        self.scratch
            .extend(self.members[cpu].iter().chain(new).map(|&i| tasks[i]));
    }

    pub fn place(&mut self, cpu: usize, new: &Newcomers) {
        for &i in new.idx {
            let x = self.tasks[i];
            self.util[cpu] += x.utilisation();
            self.dens[cpu] += x.density();
            self.d_ge_t[cpu] &= x.d >= x.t;
            self.members[cpu].push(i);
        }
    }

    /// CPU of each task; every task must have been placed.
    /// Overflow: the CPU with the least utilisation (lowest index on ties) takes `new` although
    /// it does not admit it; remembered for `Partition::overflowed`.
    pub fn overflow(&mut self, new: &Newcomers) -> usize {
        let c = (0..self.cpus())
            .min_by(|&a, &b| self.util[a].total_cmp(&self.util[b]).then(a.cmp(&b)))
            .expect("m >= 1");
        self.overflowed.extend_from_slice(new.idx);
        c
    }

    pub fn into_assignment(self) -> (Vec<u32>, Vec<usize>) {
        let mut cpu_of = vec![u32::MAX; self.tasks.len()];
        for (c, ms) in self.members.iter().enumerate() {
            for &i in ms {
                cpu_of[i] = c as u32;
            }
        }
        debug_assert!(
            cpu_of.iter().all(|&c| c != u32::MAX),
            "a task was left unplaced"
        );
        (cpu_of, self.overflowed)
    }
}

/// What one partitioning is run on: the tasks as admission sees them (inflated when
/// `overheads`), or the reason no task can be admitted at all.
struct Job<'j> {
    cdt: &'j [Cdt],
    wss: &'j [u64],
    group: &'j [Option<u32>],
    m: u32,
    adm: &'j Admission,
    overheads: bool,
    infeasible: Option<&'j (usize, String)>,
}

/// A partitioning heuristic (or a fallback chain of them).
#[derive(Clone, Debug, PartialEq)]
pub enum Partitioner {
    AnyFit {
        name: String,
        fit: Fit,
        order: Order,
        overflow: bool,
    },
    Lwfg {
        overflow: bool,
    },
    /// Never fails: the answer "schedule this set globally".
    Global,
    Chain(Vec<Partitioner>),
}

impl Partitioner {
    pub fn name(&self) -> String {
        match self {
            Partitioner::AnyFit { name, .. } => name.clone(),
            Partitioner::Lwfg { overflow } => {
                if *overflow {
                    "lwfg-overflow".into()
                } else {
                    "lwfg".into()
                }
            }
            Partitioner::Global => "global".into(),
            Partitioner::Chain(v) => v
                .iter()
                .map(Partitioner::name)
                .collect::<Vec<_>>()
                .join("+"),
        }
    }

    /// Partition `ts` onto its platform's CPUs. When the task file sets overheads
    /// (`run.overheads`), admission charges them (`partition_with`).
    pub fn partition(
        &self,
        ts: &TaskSet,
        admission: &Admission,
    ) -> Result<Partition, PartitionError> {
        let oh = &ts.run.overheads;
        self.partition_with(ts, admission, oh.any().then_some(oh))
    }

    /// Partition `ts` with the admission test run on the tasks' WCETs inflated by `overheads`
    /// (`crate::overheads`, partitioned class: each job pays two dispatches, ticks stretch it,
    /// release latency shortens its deadline), or on the plain WCETs with `None`.
    pub fn partition_with(
        &self,
        ts: &TaskSet,
        admission: &Admission,
        overheads: Option<&Overheads>,
    ) -> Result<Partition, PartitionError> {
        let mut cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
        let mut infeasible = None;
        if let Some(oh) = overheads {
            match inflate(&cdt, oh, Class::Partitioned) {
                Ok(inf) => cdt = inf.iter().map(|x| x.task).collect(),
                Err(e) => infeasible = Some((e.task.unwrap_or(0), e.message)),
            }
        }
        let wss: Vec<u64> = ts.tasks.iter().map(|t| t.wss.unwrap_or(0)).collect();
        let group: Vec<Option<u32>> = ts.tasks.iter().map(|t| t.group).collect();
        let name_of = |i: usize| ts.tasks[i].name.clone();
        let job = Job {
            cdt: &cdt,
            wss: &wss,
            group: &group,
            m: ts.platform.cpus,
            adm: admission,
            overheads: overheads.is_some(),
            infeasible: infeasible.as_ref(),
        };
        self.run(&job, &name_of)
    }

    fn run(
        &self,
        job: &Job,
        name_of: &dyn Fn(usize) -> String,
    ) -> Result<Partition, PartitionError> {
        let Job {
            cdt,
            wss,
            group,
            m,
            adm,
            ..
        } = *job;
        if let Admission::FpRta(p) = adm {
            assert_eq!(p.len(), cdt.len(), "one priority per task");
        }
        if let Admission::Blocking(base, _) | Admission::Remote(base, _) = adm {
            if let Admission::FpRta(p) = &**base {
                assert_eq!(p.len(), cdt.len(), "one priority per task");
            }
        }
        let fail = |heuristic: String, i: usize, msg: String| PartitionError {
            heuristic,
            task: i,
            task_name: name_of(i),
            message: msg,
        };
        // Blocking-aware, a task is placed with the tasks it shares resources with (fit.rs).
        // Under a multiprocessor protocol's (remote.rs), every CPU is re-checked and a bundle
        // may be split: say whose terms were counted, and why the last CPU tried refused.
        let (bundle, counted) = match adm {
            Admission::Blocking(..) => (" with the tasks it shares a resource with", String::new()),
            Admission::Remote(_, r) => (
                "",
                format!(", counting {}'s terms on every CPU", r.protocol.name()),
            ),
            _ => ("", String::new()),
        };
        let why = |w: Option<String>| {
            w.map(|w| format!("; the last CPU tried: {w}"))
                .unwrap_or_default()
        };
        // With overheads, what admission saw is the inflated task: say so.
        let (with, seen) = if job.overheads {
            (" with overheads", "inflated ")
        } else {
            ("", "")
        };
        if let (Some((i, why)), false) = (
            job.infeasible,
            matches!(self, Partitioner::Global | Partitioner::Chain(_)),
        ) {
            return Err(fail(self.name(), *i, format!("fits on no CPU: {why}")));
        }
        match self {
            Partitioner::AnyFit { name, fit, order, overflow } => fit::any_fit(cdt, wss, m, adm, *fit, *order, *overflow)
                .map(|(cpu_of_task, overflowed)| Partition { cpu_of_task, heuristic: name.clone(), overflowed })
                .map_err(|(i, w)| fail(name.clone(), i, format!("does not fit on any of the {m} CPUs{bundle} ({} admission{with}{counted}, {seen}{}){}", adm.name(), describe(&cdt[i]), why(w))))
                .and_then(|p| recheck(cdt, adm, p, &fail)),
            Partitioner::Lwfg { overflow } => lwfg::lwfg(cdt, wss, group, m, adm, *overflow)
                .map(|(cpu_of_task, overflowed)| Partition { cpu_of_task, heuristic: self.name(), overflowed })
                .map_err(|(i, w)| fail("lwfg".into(), i, format!("fits on none of the {m} CPUs beside the tasks LWFG placed before it ({} admission{with}{counted}, {seen}{}){}", adm.name(), describe(&cdt[i]), why(w))))
                .and_then(|p| recheck(cdt, adm, p, &fail)),
            Partitioner::Global => Ok(Partition { cpu_of_task: Vec::new(), heuristic: "global".into(), overflowed: Vec::new() }),
            Partitioner::Chain(list) => {
                let mut errs: Vec<PartitionError> = Vec::new();
                for p in list {
                    match p.run(job, name_of) {
                        Ok(part) => return Ok(part),
                        Err(e) => errs.push(e),
                    }
                }
                let last = errs.pop().expect("a chain is never empty");
                let earlier: Vec<String> = errs.iter().map(ToString::to_string).collect();
                let message = format!("{} under {}, the last in the chain (earlier: {})", last.message, last.heuristic, earlier.join("; "));
                Err(PartitionError { heuristic: self.name(), message, ..last })
            }
        }
    }
}

/// Under a multiprocessor protocol's admission, the final partition `p` re-checked whole
/// (`remote.rs`, overview 5); a partition with tasks placed beyond admission is not.
fn recheck(
    cdt: &[Cdt],
    adm: &Admission,
    p: Partition,
    fail: &dyn Fn(String, usize, String) -> PartitionError,
) -> Result<Partition, PartitionError> {
    let Admission::Remote(base, r) = adm else {
        return Ok(p);
    };
    if !p.overflowed.is_empty() {
        return Ok(p);
    }
    let placed: Vec<(usize, u32)> = p.cpu_of_task.iter().copied().enumerate().collect();
    match remote::check(cdt, &placed, base, r) {
        Ok(()) => Ok(p),
        Err(w) => Err(fail(
            p.heuristic.clone(),
            0,
            format!(
                "the whole partition fails counting {}'s terms: {w}",
                r.protocol.name()
            ),
        )),
    }
}

fn describe(x: &Cdt) -> String {
    format!("u={:.4}, λ={:.4}", x.utilisation(), x.density())
}

/// The heuristics with short names (help text: name, what it is).
pub const NAMED: &[(&str, &str)] = &[
    ("ffd", "first fit, decreasing utilisation"),
    ("bfd", "best fit, decreasing utilisation"),
    ("wfd", "worst fit, decreasing utilisation"),
    ("nfd", "next fit (LWFG §3.1), decreasing utilisation"),
    ("ffdd", "first fit, decreasing density"),
    ("bfdd", "best fit, decreasing density"),
    ("wfdd", "worst fit, decreasing density"),
    ("nfdd", "next fit, decreasing density"),
    (
        "bf",
        "Baruah & Fisher: first fit, increasing relative deadline",
    ),
    (
        "lwfg",
        "LWFG Algorithm 1: next fit, decreasing WSS, memory-sharing groups placed whole",
    ),
    (
        "global",
        "no partition: schedule globally (end of a fallback chain)",
    ),
];

fn one(name: &str) -> Result<Partitioner, String> {
    if let Some(base) = name.strip_suffix("-overflow") {
        return match one(base)? {
            Partitioner::AnyFit { fit, order, .. } => Ok(Partitioner::AnyFit { name: name.to_string(), fit, order, overflow: true }),
            Partitioner::Lwfg { .. } => Ok(Partitioner::Lwfg { overflow: true }),
            _ => Err(format!("partitioner '{name}': '-overflow' applies to a heuristic (ffd, lwfg, FIT:ORDER, ...), not to '{base}'")),
        };
    }
    let any = |fit, order| {
        Ok(Partitioner::AnyFit {
            name: name.to_string(),
            fit,
            order,
            overflow: false,
        })
    };
    match name {
        "ffd" => any(Fit::First, Order::DecreasingUtilisation),
        "bfd" => any(Fit::Best, Order::DecreasingUtilisation),
        "wfd" => any(Fit::Worst, Order::DecreasingUtilisation),
        "nfd" => any(Fit::Next, Order::DecreasingUtilisation),
        "ffdd" => any(Fit::First, Order::DecreasingDensity),
        "bfdd" => any(Fit::Best, Order::DecreasingDensity),
        "wfdd" => any(Fit::Worst, Order::DecreasingDensity),
        "nfdd" => any(Fit::Next, Order::DecreasingDensity),
        "bf" => any(Fit::First, Order::IncreasingDeadline),
        "lwfg" => Ok(Partitioner::Lwfg { overflow: false }),
        "global" => Ok(Partitioner::Global),
        _ => {
            if let Some((f, o)) = name.split_once(':') {
                if let (Some(fit), Some(order)) = (Fit::parse(f), Order::parse(o)) {
                    return any(fit, order);
                }
                return Err(format!("unknown partitioner '{name}': FIT:ORDER takes FIT in first|next|best|worst and ORDER in util|density|deadline|wss|none"));
            }
            let known: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
            let hint = closest(name, &known)
                .map(|s| format!(" (did you mean '{s}'?)"))
                .unwrap_or_default();
            Err(format!("unknown partitioner '{name}'{hint}; known: {}, FIT:ORDER, or a chain like lwfg+ffd+global", known.join(", ")))
        }
    }
}

/// A partitioner by name, or a fallback chain `a+b+c`.
pub fn by_name(name: &str) -> Result<Partitioner, String> {
    if name.contains(',') {
        let chain: Vec<&str> = name.split([',', '+']).map(str::trim).collect();
        return Err(format!(
            "partitioner '{name}': a fallback chain is written with '+' ({}), the same everywhere (in a scheduler spec ',' separates options)",
            chain.join("+")
        ));
    }
    let parts: Vec<&str> = name.split('+').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("partitioner '{name}': empty name in chain"));
    }
    if parts.len() == 1 {
        return one(parts[0]);
    }
    if let Some(i) = parts.iter().position(|&p| p == "global") {
        if i != parts.len() - 1 {
            return Err(format!(
                "partitioner '{name}': 'global' always succeeds, so it can only come last"
            ));
        }
    }
    Ok(Partitioner::Chain(
        parts.into_iter().map(one).collect::<Result<_, _>>()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::time::NS_PER_MS;
    use rtsched_model::Task;

    /// Implicit-deadline tasks with T = 10 ms and C in ms (so u = C/10).
    fn set(m: u32, c_tenths: &[u64]) -> TaskSet {
        let tasks = c_tenths
            .iter()
            .enumerate()
            .map(|(i, &c)| Task::periodic(format!("t{i}"), 10 * NS_PER_MS, c * NS_PER_MS))
            .collect();
        TaskSet::new(m, tasks)
    }

    fn run(name: &str, ts: &TaskSet) -> Vec<u32> {
        by_name(name)
            .unwrap()
            .partition(ts, &Admission::EdfExact)
            .unwrap()
            .cpu_of_task
    }

    /// u = 0.6, 0.5, 0.4, 0.3, 0.2 on 3 CPUs (already in decreasing order):
    ///
    /// best fit:  .6→0; .5→1 (0 would be 1.1; 1 and 2 tie at 0, lowest wins); .4→0 (fullest
    ///            that admits: 0 at .6 → 1.0); .3→1 (0 is full; 1 at .5 beats 2 at 0) → .8;
    ///            .2→1 → 1.0.                                            = [0, 1, 0, 1, 1]
    /// worst fit: .6→0; .5→1; .4→2; .3→2 (emptiest: loads .6 .5 .4); .2→1 (loads .6 .5 .7)
    ///                                                                   = [0, 1, 2, 2, 1]
    /// next fit:  .6→0; .5→1 (scan starts after 0); .4→2; .3→0 (after 2 comes 0: .9);
    ///            .2→1 (.7)                                              = [0, 1, 2, 0, 1]
    /// first fit: .6→0; .5→1; .4→0 (1.0, exactly full); .3→1; .2→1       = [0, 1, 0, 1, 1]
    #[test]
    fn best_worst_next_fit_differ_by_hand() {
        let ts = set(3, &[6, 5, 4, 3, 2]);
        assert_eq!(run("bfd", &ts), vec![0, 1, 0, 1, 1]);
        assert_eq!(run("wfd", &ts), vec![0, 1, 2, 2, 1]);
        assert_eq!(run("nfd", &ts), vec![0, 1, 2, 0, 1]);
        assert_eq!(run("ffd", &ts), vec![0, 1, 0, 1, 1]);
        // Order matters: the same tasks shuffled give the same decreasing-utilisation result.
        let shuffled = set(3, &[3, 6, 2, 5, 4]);
        assert_eq!(run("wfd", &shuffled), vec![2, 0, 1, 1, 2]);
    }

    /// File order u = .3, .8, .1 on 2 CPUs: first fit puts .1 on CPU 0 (load .3, first that
    /// admits); best fit on CPU 1 (load .8, the fullest that admits); worst fit on CPU 0.
    #[test]
    fn first_and_best_fit_differ_by_hand() {
        let ts = set(2, &[3, 8, 1]);
        assert_eq!(run("first:none", &ts), vec![0, 1, 0]);
        assert_eq!(run("best:none", &ts), vec![0, 1, 1]);
        assert_eq!(run("worst:none", &ts), vec![0, 1, 0]);
    }

    #[test]
    fn baruah_fisher_orders_by_deadline_and_density_admission() {
        // Constrained deadlines: (C, D, T) = (2,3,6), (2,4,8), (3,5,10) ms on one CPU.
        let mk = |n: &str, c, d, t| {
            let mut x = Task::periodic(n, t * NS_PER_MS, c * NS_PER_MS);
            x.deadline = d * NS_PER_MS;
            x
        };
        let ts = TaskSet::new(1, vec![mk("a", 2, 4, 8), mk("b", 2, 3, 6)]);
        // Density 2/4 + 2/3 > 1 but processor demand holds: h(3)=2, h(4)=4, h(9)=6, h(12)=8.
        assert!(by_name("bf")
            .unwrap()
            .partition(&ts, &Admission::Density)
            .is_err());
        assert_eq!(
            by_name("bf")
                .unwrap()
                .partition(&ts, &Admission::EdfExact)
                .unwrap()
                .cpu_of_task,
            vec![0, 0]
        );
        let ts2 = TaskSet::new(
            2,
            vec![mk("a", 2, 4, 8), mk("b", 2, 3, 6), mk("c", 3, 5, 10)],
        );
        // Deadline order b(3), a(4), c(5): b→0, a→0 (exact EDF), c: h on CPU 0 at t=3: 2+0,
        // t=4: 4, t=5: 4+3 = 7 > 5, so CPU 1.
        assert_eq!(
            by_name("bf")
                .unwrap()
                .partition(&ts2, &Admission::EdfExact)
                .unwrap()
                .cpu_of_task,
            vec![0, 0, 1]
        );
    }

    fn wss_task(name: &str, c_tenths: u64, wss_kib: u64, group: Option<u32>) -> Task {
        let mut t = Task::periodic(name, 10 * NS_PER_MS, c_tenths * NS_PER_MS);
        t.wss = Some(wss_kib * 1024);
        t.group = group;
        t
    }

    /// LWFG on 2 CPUs. Group 1 = A (4 MiB, u .5), B (3 MiB, u .3), C (2 MiB, u .4); X (2.5 MiB,
    /// u .6) and Y (512 KiB, u .2) share nothing. WSS order: A, B, X, C, Y.
    ///
    /// 1. A with its mates B, C: density 1.2 fits nowhere; the least sharer with A is C (2 MiB
    ///    < 3 MiB); {A, B} = .8 goes to CPU 0 (scan starts at 0). last = 0.
    /// 2. X (.6): scan from CPU 1 → CPU 1. last = 1.
    /// 3. C (.4), now alone: CPU 0 would be 1.2; CPU 1 → 1.0. last = 1.
    /// 4. Y (.2): CPU 0 → 1.0.
    ///
    /// Result A0 B0 C1 X1 Y0. Dropping B instead of C would put {A, C} on 0, X on 1, B on 1 and
    /// leave Y (.2) without room: the rule matters.
    #[test]
    fn lwfg_splits_a_group_by_hand() {
        let ts = TaskSet::new(
            2,
            vec![
                wss_task("A", 5, 4096, Some(1)),
                wss_task("B", 3, 3072, Some(1)),
                wss_task("C", 4, 2048, Some(1)),
                wss_task("X", 6, 2560, None),
                wss_task("Y", 2, 512, None),
            ],
        );
        let p = by_name("lwfg")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap();
        assert_eq!(p.cpu_of_task, vec![0, 0, 1, 1, 0]);
        assert_eq!(p.heuristic, "lwfg");
        // A group that fits whole stays whole, even where next fit alone would spread it.
        // WSS order A, Z, W, B; next fit alone: A0 Z1 W0 B1; LWFG: {A, B}0, Z1, W0.
        let ts = TaskSet::new(
            2,
            vec![
                wss_task("A", 3, 100, Some(7)),
                wss_task("B", 3, 90, Some(7)),
                wss_task("Z", 3, 95, None),
                wss_task("W", 3, 92, None),
            ],
        );
        assert_eq!(
            by_name("lwfg")
                .unwrap()
                .partition(&ts, &Admission::EdfExact)
                .unwrap()
                .cpu_of_task,
            vec![0, 0, 1, 0]
        );
        assert_eq!(run("next:wss", &ts), vec![0, 1, 1, 0]);
        assert_eq!(run("first:wss", &ts), vec![0, 1, 0, 0]); // A0 Z0 W0, B has to go to 1
    }

    #[test]
    fn lwfg_fails_naming_the_task_and_chain_falls_back() {
        // WSS order A(.3), B(.7), C(.3), D(.7): next fit puts A, C on 0 and B on 1; D fits
        // nowhere. FFD (.7, .7, .3, .3) pairs them and succeeds.
        let ts = TaskSet::new(
            2,
            vec![
                wss_task("A", 3, 9, None),
                wss_task("B", 7, 8, None),
                wss_task("C", 3, 7, None),
                wss_task("D", 7, 6, None),
            ],
        );
        let e = by_name("lwfg")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap_err();
        assert_eq!((e.task, e.task_name.as_str()), (3, "D"));
        assert!(
            e.to_string()
                .starts_with("lwfg: task 'D' (tasks[3]) fits on none"),
            "{e}"
        );
        let chain = by_name("lwfg+ffd+global").unwrap();
        assert_eq!(chain.name(), "lwfg+ffd+global");
        let p = chain.partition(&ts, &Admission::EdfExact).unwrap();
        assert_eq!(
            (p.heuristic.as_str(), p.cpu_of_task),
            ("ffd", vec![0, 0, 1, 1])
        );
        let over = set(2, &[9, 9, 9]);
        let p = by_name("lwfg+ffd+global")
            .unwrap()
            .partition(&over, &Admission::EdfExact)
            .unwrap();
        assert!(p.is_global() && p.cpu_of_task.is_empty());
        let e = by_name("lwfg+wfd")
            .unwrap()
            .partition(&over, &Admission::EdfExact)
            .unwrap_err();
        assert!(
            e.to_string().contains("under wfd") && e.to_string().contains("earlier: lwfg"),
            "{e}"
        );
    }

    #[test]
    fn fp_rta_admission() {
        // (C, T) = (1,4), (2,6), (4,10) ms: U = .983 fits EDF on one CPU but not RM (R3 = 11 > 10).
        let tasks = vec![
            Task::periodic("a", 4 * NS_PER_MS, NS_PER_MS),
            Task::periodic("b", 6 * NS_PER_MS, 2 * NS_PER_MS),
            Task::periodic("c", 10 * NS_PER_MS, 4 * NS_PER_MS),
        ];
        let ts = TaskSet::new(2, tasks.clone());
        let rm = crate::priority::rate_monotonic(&tasks);
        assert_eq!(
            by_name("first:none")
                .unwrap()
                .partition(&ts, &Admission::EdfExact)
                .unwrap()
                .cpu_of_task,
            vec![0, 0, 0]
        );
        assert_eq!(
            by_name("first:none")
                .unwrap()
                .partition(&ts, &Admission::FpRta(rm))
                .unwrap()
                .cpu_of_task,
            vec![0, 0, 1]
        );
    }

    /// u = .5, .5, .8 (T = 10ms) on 2 CPUs. Plainly FFD gives t2→0, t0, t1→1 (1.0 exactly).
    /// With decision 10us + cs 20us and a 100us tick every 1ms, admission sees
    /// C'' = (C + 60us + 100us)/0.9: t0, t1 = 5.733ms, t2 = 9.067ms; t1 fits beside neither. The
    /// task file's `run.overheads` is what `partition` charges; a tick ≥ its period admits nothing.
    #[test]
    fn admission_charges_overheads_by_hand() {
        let mut ts = set(2, &[5, 5, 8]);
        assert_eq!(run("ffd", &ts), vec![1, 1, 0]);
        ts.run.overheads = Overheads {
            decision: 10_000,
            context_switch: 20_000,
            tick: 100_000,
            tick_period: NS_PER_MS,
            ..Overheads::default()
        };
        let e = by_name("ffd")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap_err();
        assert_eq!(e.task_name, "t1");
        assert!(
            e.message.contains("with overheads, inflated u=0.5733"),
            "{e}"
        );
        let plain = by_name("ffd")
            .unwrap()
            .partition_with(&ts, &Admission::EdfExact, None)
            .unwrap();
        assert_eq!(plain.cpu_of_task, vec![1, 1, 0]);
        assert!(by_name("ffd+global")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap()
            .is_global());
        ts.run.overheads.tick = NS_PER_MS;
        let e = by_name("lwfg")
            .unwrap()
            .partition(&ts, &Admission::Density)
            .unwrap_err();
        assert!(e.message.contains("tick"), "{e}");
    }

    #[test]
    fn names() {
        assert!(by_name("ffdx").unwrap_err().contains("did you mean 'ffd'"));
        assert!(by_name("best:size").unwrap_err().contains("ORDER in"));
        assert!(by_name("global+ffd")
            .unwrap_err()
            .contains("only come last"));
        assert!(by_name("lwfg++ffd").unwrap_err().contains("empty name"));
        // One chain form: ',' is refused, naming the '+' spelling.
        let e = by_name("lwfg, ffd,global").unwrap_err();
        assert!(e.contains("written with '+' (lwfg+ffd+global)"), "{e}");
        assert_eq!(by_name(" lwfg + ffd ").unwrap().name(), "lwfg+ffd");
        for (n, _) in NAMED {
            assert_eq!(by_name(n).unwrap().name(), *n);
            if *n != "global" {
                assert_eq!(
                    by_name(&format!("{n}-overflow")).unwrap().name(),
                    format!("{n}-overflow")
                );
            }
        }
        assert!(by_name("global-overflow")
            .unwrap_err()
            .contains("applies to a heuristic"));
        assert!(by_name("ffd-overflow-overflow").is_ok_and(|p| p.name() == "ffd-overflow-overflow"));
    }

    /// u = 0.6 ×3 on 2 CPUs: FFD fails on the third; FFD-overflow puts it on the less utilised
    /// CPU (1, holding 0.6 vs CPU 0's 0.6: tie, lowest index 0) and names it.
    #[test]
    fn overflow_places_what_fits_nowhere_on_the_least_utilised_cpu() {
        let ts = set(2, &[6, 6, 6, 3]);
        assert!(by_name("ffd")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .is_err());
        let p = by_name("ffd-overflow")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap();
        // 0.6→0, 0.6→1, 0.6 fits nowhere → least utilised (tie → 0), 0.3 first fit → 1.
        assert_eq!(
            (p.cpu_of_task, p.overflowed, p.heuristic.as_str()),
            (vec![0, 1, 0, 1], vec![2], "ffd-overflow")
        );
        // LWFG: WSS order is file order here (no wss): next fit 0.6→0, 0.6→1, 0.6 → overflow to 0, 0.3 → next after 0 = 1.
        let p = by_name("lwfg-overflow")
            .unwrap()
            .partition(&ts, &Admission::EdfExact)
            .unwrap();
        assert_eq!((p.cpu_of_task, p.overflowed), (vec![0, 1, 0, 1], vec![2]));
        // A set that fits: overflow changes nothing.
        let ok = set(2, &[6, 4, 4, 6]);
        for h in ["ffd", "wfd", "lwfg", "bf"] {
            let a = by_name(h)
                .unwrap()
                .partition(&ok, &Admission::EdfExact)
                .unwrap();
            let b = by_name(&format!("{h}-overflow"))
                .unwrap()
                .partition(&ok, &Admission::EdfExact)
                .unwrap();
            assert_eq!(
                (a.cpu_of_task, b.overflowed.len()),
                (b.cpu_of_task, 0),
                "{h}"
            );
        }
    }
}
