//! Overhead-aware schedulability analysis: the task set's WCETs inflated by the overheads the
//! simulator charges (docs/overheads.md), in the manner of LITMUS^RT's overhead accounting
//! (Brandenburg's thesis, ch. 3: each job's WCET grows by the scheduler's costs it can be made
//! to pay), and every test of `schedulability` run on the inflated set — each in the
//! overhead-aware form its registry entry declares (`registry::WithOverheads`: its verdict on
//! the inflation for one CPU, for global EDF or for global FP below, or a form of its own, as
//! `necessary`'s).
//!
//! Notation (all integer ns): a job of task (C, D, T) is *released* at r; with release latency
//! ρ it *arrives* (is given to the policy) at r + ρ and must finish by r + D, so it is a job of
//! a sporadic task with relative deadline D' = D − ρ (and the same minimum separation T: every
//! release of the simulator is shifted by the same ρ). Each dispatch (the ledger puts an entity
//! on a CPU) costs at most o = decision + context_switch (+ migration when the entity last ran
//! on another CPU). A tick of cost k lands every P = tick_period on each CPU, at the instants
//! P, 2P, …, and is charged to what that CPU runs just before the instant's decision.
//!
//! ## Partitioned and uniprocessor (EDF or FP per CPU): C'' = ⌈(C + 2·o + k) · P / (P − k)⌉
//!
//! Per CPU no entity ever migrates (a job's entity is new, and a partitioned domain only uses
//! its own CPU), so o = decision + context_switch. Under preemptive EDF or FP a job is
//! preempted only at the instant a more urgent job arrives, and that job is the one dispatched
//! in its place: at most one preemption per arrival, so each job is charged for its own first
//! dispatch and for the one resume it causes ("preemption-centric" accounting): 2·o.
//!
//! Soundness for EDF (FP's level-i busy window is the same argument): let t_d be the first
//! missed deadline and t_0 the last instant ≤ t_d at which no job with deadline ≤ t_d that
//! arrived before t_0 is pending; L = t_d − t_0. Throughout (t_0, t_d) the CPU runs (pays
//! overhead for, or executes) only jobs that arrived in [t_0, t_d) with deadline ≤ t_d — the
//! set S; one of them is unfinished at t_d, so L < Σ_S C + dispatch charges + tick charges made
//! in the window. Every resume in the window follows a preemption by a job of S (more urgent,
//! arrived later), each job of S causing at most one: dispatches ≤ 2·|S|. Ticks at instants in
//! (t_0, t_d): at most ⌈L/P⌉ ≤ L/P + 1. With |S| ≥ 1 and n_i(L) jobs of task i in S,
//!   L < Σ n_i (C_i + 2o) + k + L·k/P ≤ Σ n_i (C_i + 2o + k) + L·k/P
//!   ⇒ L·(P − k)/P < Σ n_i (C_i + 2o + k) ⇒ L < Σ n_i C''_i,
//! the processor demand of (C'', D', T) exceeds L: every EDF test (exact, density) on the
//! inflated set rejects a set that can miss. For FP, the response-time fixed point R of the
//! inflated set satisfies R ≥ Σ n_j (C_j + 2o) + k + R·k/P ≥ the demand of the level-i busy
//! window including its ⌈R/P⌉ ticks, so the window closes by R.
//!
//! ## Global EDF: C'' = ⌈(C + f·(o + k) + (f − 1)·migration) · P / (P − k)⌉, f = 1 + p
//!
//! Under global scheduling "one preemption per arrival" does not carry over (a preempted job
//! loses its resume on one CPU while the others stay busy, which an interference bound would
//! have to count m times), so no cost is moved between jobs: each job pays for its own
//! dispatches. A job J of task k is dispatched on arrival and once after each preemption, and
//! it is preempted only at an instant where a job more urgent than J arrives (the domain keeps
//! the m most urgent linked and never moves a linked entity). Arriving after J, that job has a
//! strictly earlier deadline (EDF breaks deadline ties by release time), so it arrives in the
//! open interval (a_J, a_J + D'_k − D'_i): p = Σ_{i ≠ k, D'_i < D'_k} ⌈(D'_k − D'_i)/T_i⌉. Each
//! of J's f ≤ 1 + p execution fragments of length ℓ sees at most ⌈ℓ/P⌉ ticks, so with e the CPU
//! time J occupies, e ≤ C + f·o + (f − 1)·migration + (e/P + f)·k, i.e. e ≤ C''. Up to the
//! first miss the simulated schedule is then the plain global EDF schedule of jobs that
//! execute at most C'' (decisions depend only on arrivals, completions and deadlines), which
//! GFB and BCL on (C'', D', T) cover. Safe, and pessimistic when short-deadline tasks are many.
//!
//! ## Global fixed priority: the same C'', with p counted for FP
//!
//! The argument above holds word for word for global FP (`gfp`: the same domain, ordered by
//! priority, then release): a job J of task k is preempted only where a job of higher priority
//! arrives (an equal-priority job that arrives later is less urgent, ties going to the earlier
//! release), and until the first miss J finishes within D'_k of its arrival, so those arrive in
//! (a_J, a_J + D'_k): p = Σ_{i: π_i > π_k} ⌈D'_k/T_i⌉. The priorities are the test's (RM, DM or
//! the file's), the same on the inflated set (T is unchanged, every D' shifted alike).
//!
//! ## Parallel tasks under global fixed priority (`inflate_dag`)
//!
//! Each node of a job is an entity of its own (the ledger's fork), dispatched when it becomes
//! ready — never a migration, a new entity having run nowhere — and once after each preemption.
//! A node is preempted only where a more urgent node becomes ready: one of a job of higher or
//! equal priority (an equal priority released earlier is more urgent), whose nodes become ready
//! between its arrival and its finish, so a job arrived in (a_J − D'_i, a_J + D'_k): at most
//! ⌈(D'_k + D'_i)/T_i⌉ jobs of n_i nodes; or a node of J itself (n_k − 1). With p_k their sum,
//! the job's volume pays n_k + p_k stays (dispatch, one more tick, one more stop) and p_k
//! migrations, its critical path the stays of its longest chain of nodes and the same p_k,
//! each stretched as above; Melani et al.'s bound grows with both, so charging them apart is
//! safe. The priorities are the test's; D' = D − release.
//!
//! `analyze_with_overheads`'s per-task rows ([`TaskRow`]) give each task's C'' per CPU, under
//! global EDF and under global FP for each priority assignment ([`GLOBAL_FP`]): the WCETs each
//! test's verdict and per-task bounds were computed on.
//!
//! Not charged: the abort handler (only after a miss or an abort) and a policy's own charges
//! (`Dispatch::charge`, e.g. PAWS's steals; none of EDF's and FP's domains charge).

use crate::priority::Priorities;
use crate::schedulability::dag::DagTask;
use crate::schedulability::gfp_dag;
use crate::schedulability::registry::{
    self, Form, InflatedReason, NotApplicable, Reason, Subject, Test, WithOverheads,
};
use crate::schedulability::{Cdt, Verdict, ENTRIES};
use rtsched_model::time::fmt_duration;
use rtsched_model::{Overheads, Task, TaskSet, Time};

/// Whose overheads to bound: those of one CPU (uniprocessor, or a partitioned scheduler's CPU),
/// of global EDF, or of global fixed priority with these priorities (larger is more urgent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class<'a> {
    Partitioned,
    Global,
    GlobalFp(&'a [u32]),
}

/// One task's parameters with its overheads charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inflated {
    /// C'', D' = D − release latency, T.
    pub task: Cdt,
    /// Dispatches (decision + context switch each) and migrations charged per job.
    pub dispatches: u64,
    pub migrations: u64,
}

/// The overheads make a task set certainly unschedulable (they are not a bound here: the
/// simulator shows the miss whatever the schedule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasible {
    /// The task that cannot meet its deadline, or None when no CPU can run anything.
    pub task: Option<usize>,
    pub message: String,
}

/// Inflated WCETs are capped here (a task this long fails every test anyway).
const CAP: u128 = 1 << 62;

/// C'' = ⌈(C + extra) / (1 − k/P − B/R)⌉: the ticks (k every P) and the real-time bandwidth
/// cap's stops (at most B = rt_period − rt_runtime every R = rt_period, at the end of a
/// period, on a busy CPU) in a window of length L number at most L/P + 1 and L/R + 1; the
/// "+ 1"s are in `extra`. Computed as ⌈(C + extra)·P·R / (P·R − k·R − B·P)⌉, positive by
/// `inflate`'s checks.
fn stretch(c: Time, extra: u128, tick: Time, period: Time, stop: Time, rt_period: Time) -> Time {
    let base = c as u128 + extra;
    let (p, r) = (period as u128, rt_period as u128);
    let v = if tick == 0 && stop == 0 {
        base
    } else {
        (base * p * r).div_ceil(p * r - tick as u128 * r - stop as u128 * p)
    };
    v.min(CAP) as Time
}

/// Preemptions a job of task k can suffer under global EDF (see the file's overview).
fn global_preemptions(tasks: &[Cdt], k: usize, d: &[Time]) -> u64 {
    (0..tasks.len())
        .filter(|&i| i != k && d[i] < d[k])
        .map(|i| (d[k] - d[i]).div_ceil(tasks[i].t))
        .fold(0u64, u64::saturating_add)
}

/// Preemptions a job of task k can suffer under global FP with priorities `prio`.
fn global_fp_preemptions(tasks: &[Cdt], k: usize, d: &[Time], prio: &[u32]) -> u64 {
    (0..tasks.len())
        .filter(|&i| prio[i] > prio[k])
        .map(|i| d[k].div_ceil(tasks[i].t))
        .fold(0u64, u64::saturating_add)
}

/// The costs every inflation charges, once the overheads are known not to make a miss certain.
struct Costs {
    /// The tick's cost k and period P (≥ 1).
    tick: Time,
    period: Time,
    /// The real-time cap's stop B per period R (0 and 1 without a cap).
    stop: Time,
    rt_period: Time,
    /// Each dispatch's o = decision + context switch.
    o: u128,
}

impl Costs {
    /// What each stay on a CPU may pay besides migrating: its dispatch, one more tick, one more
    /// stop.
    fn per_stay(&self) -> u128 {
        self.o + self.tick as u128 + self.stop as u128
    }

    fn stretch(&self, c: Time, extra: u128) -> Time {
        stretch(c, extra, self.tick, self.period, self.stop, self.rt_period)
    }
}

/// The costs of `oh`, or why they make a task of `tasks` (or every one) miss for certain.
fn costs(tasks: &[Cdt], oh: &Overheads) -> Result<Costs, Infeasible> {
    // The engine ticks every max(tick_period, 1) ns.
    let period = oh.tick_period.max(1);
    let tick = oh.tick;
    if tick > 0 && tick >= period {
        return Err(Infeasible {
            task: None,
            message: format!(
                "tick {} ≥ tick_period {}: a busy CPU only runs its tick handler",
                fmt_duration(tick),
                fmt_duration(period)
            ),
        });
    }
    if let Some(i) = tasks.iter().position(|x| x.d <= oh.release) {
        return Err(Infeasible {
            task: Some(i),
            message: format!(
                "release latency {} ≥ D = {}: every job arrives after its deadline",
                fmt_duration(oh.release),
                fmt_duration(tasks[i].d)
            ),
        });
    }
    // The real-time bandwidth cap: a busy CPU stops for at most B at the end of each period.
    let (stop, rt_period) = if oh.throttles() {
        (oh.rt_period - oh.rt_runtime, oh.rt_period)
    } else {
        (0, 1)
    };
    if tick as u128 * rt_period as u128 + stop as u128 * period as u128
        >= period as u128 * rt_period as u128
    {
        return Err(Infeasible {
            task: None,
            message: format!(
                "the tick ({} every {}) and the real-time cap ({} of every {}) leave a busy CPU no time",
                fmt_duration(tick),
                fmt_duration(period),
                fmt_duration(oh.rt_runtime),
                fmt_duration(oh.rt_period)
            ),
        });
    }
    Ok(Costs {
        tick,
        period,
        stop,
        rt_period,
        o: (oh.decision + oh.context_switch) as u128,
    })
}

/// The task set's tasks with the overheads `oh` charged for a scheduler of `class`.
pub fn inflate(tasks: &[Cdt], oh: &Overheads, class: Class) -> Result<Vec<Inflated>, Infeasible> {
    let Costs {
        tick,
        period,
        stop,
        rt_period,
        o,
    } = costs(tasks, oh)?;
    let d: Vec<Time> = tasks.iter().map(|x| x.d - oh.release).collect();
    Ok((0..tasks.len())
        .map(|i| {
            let x = tasks[i];
            let (f, mig, extra) = match class {
                Class::Partitioned => (2u64, 0u64, 2 * o + tick as u128 + stop as u128),
                Class::Global | Class::GlobalFp(_) => {
                    // Each of the job's f stays on a CPU may meet one more tick and one more stop.
                    let p = match class {
                        Class::GlobalFp(prio) => global_fp_preemptions(tasks, i, &d, prio),
                        _ => global_preemptions(tasks, i, &d),
                    };
                    let f = p.saturating_add(1);
                    (
                        f,
                        p,
                        f as u128 * (o + tick as u128 + stop as u128)
                            + p as u128 * oh.migration as u128,
                    )
                }
            };
            Inflated {
                task: Cdt {
                    c: stretch(x.c, extra, tick, period, stop, rt_period),
                    d: d[i],
                    t: x.t,
                },
                dispatches: f,
                migrations: mig,
            }
        })
        .collect())
}

/// A parallel task's shape, for its charge: its nodes (threads) and the most nodes on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub nodes: u64,
    pub depth: u64,
}

impl Shape {
    /// The shape of `t`: a DAG's nodes and longest chain of nodes; a fork-join task's threads
    /// and regions (one node and one region for a sequential task).
    pub fn of(t: &Task) -> Shape {
        match &t.dag {
            Some(dag) => {
                let order = dag.topological_order().unwrap_or_default();
                let succ = dag.successors();
                let mut depth = vec![1u64; dag.nodes.len()];
                for &u in &order {
                    for &v in &succ[u as usize] {
                        depth[v as usize] = depth[v as usize].max(depth[u as usize] + 1);
                    }
                }
                Shape {
                    nodes: dag.nodes.len() as u64,
                    depth: depth.into_iter().max().unwrap_or(1),
                }
            }
            None if t.regions.is_empty() => Shape { nodes: 1, depth: 1 },
            None => Shape {
                nodes: t.regions.iter().map(|r| r.threads.len() as u64).sum(),
                depth: t.regions.len() as u64,
            },
        }
    }
}

/// Preemptions a node of a job of parallel task k can suffer under global FP (`prio`): every
/// node of a job of the same or higher priority that may become ready within the job's window
/// (arrived in (a − D'_i, a + D'_k)), and every node of its own job but one.
fn dag_preemptions(tasks: &[DagTask], shape: &[Shape], k: usize, d: &[Time], prio: &[u32]) -> u64 {
    (0..tasks.len())
        .filter(|&i| i != k && prio[i] >= prio[k])
        .map(|i| {
            (d[k] + d[i])
                .div_ceil(tasks[i].t)
                .saturating_mul(shape[i].nodes)
        })
        .fold(shape[k].nodes - 1, u64::saturating_add)
}

/// Parallel tasks with the overheads `oh` charged under global FP with priorities `prio` (the
/// file's overview, "Parallel tasks under global fixed priority"): the volume and the critical
/// path each grown by their dispatches, ticks, stops and migrations, D' = D − release.
pub fn inflate_dag(
    tasks: &[DagTask],
    shape: &[Shape],
    oh: &Overheads,
    prio: &[u32],
) -> Result<Vec<DagTask>, Infeasible> {
    let cdt: Vec<Cdt> = tasks
        .iter()
        .map(|x| Cdt {
            c: x.c,
            d: x.d,
            t: x.t,
        })
        .collect();
    let k = costs(&cdt, oh)?;
    let d: Vec<Time> = tasks.iter().map(|x| x.d - oh.release).collect();
    Ok((0..tasks.len())
        .map(|i| {
            let p = dag_preemptions(tasks, shape, i, &d, prio) as u128;
            let mig = p * oh.migration as u128;
            let stays = |first: u64| (first as u128 + p) * k.per_stay() + mig;
            DagTask {
                c: k.stretch(tasks[i].c, stays(shape[i].nodes)),
                l: k.stretch(tasks[i].l, stays(shape[i].depth)),
                d: d[i],
                t: tasks[i].t,
            }
        })
        .collect())
}

/// One task in an overhead-aware analysis: its plain and inflated parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    pub name: String,
    pub plain: Cdt,
    /// Under a partitioned (or, on one CPU, any) scheduler.
    pub partitioned: Inflated,
    /// Under global EDF (m > 1 only).
    pub global: Option<Inflated>,
    /// Under global fixed priority (m > 1 only), for each assignment of [`GLOBAL_FP`] in its
    /// order: the inflation the `gfp-rta-*` tests of that assignment are run on (`None` on one
    /// CPU, or for `file` when not every task gives a priority).
    pub global_fp: [Option<Inflated>; 3],
}

/// The priority assignments of the global FP tests, in the order of [`TaskRow::global_fp`].
pub const GLOBAL_FP: [Priorities; 3] = [
    Priorities::RateMonotonic,
    Priorities::DeadlineMonotonic,
    Priorities::File,
];

/// Each task's inflation under global FP with the priorities `by` (see the file's overview),
/// or `None` on one CPU, without those priorities, or when the overheads make a miss certain.
fn global_fp(ts: &TaskSet, oh: &Overheads, by: Priorities) -> Option<Vec<Inflated>> {
    if ts.platform.cpus < 2 {
        return None;
    }
    let prio = Subject::whole(ts).priorities(by)?;
    let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
    inflate(&cdt, oh, Class::GlobalFp(&prio)).ok()
}

/// Every applicable test on the inflated set, and the inflation per task.
#[derive(Clone, Debug, PartialEq)]
pub struct OverheadAnalysis {
    pub verdicts: Vec<Verdict>,
    /// Empty when the overheads alone make the set infeasible (the verdicts say why).
    pub tasks: Vec<TaskRow>,
}

/// `ts` with each task's WCET and deadline replaced by the inflated ones.
fn with_inflated(ts: &TaskSet, inf: &[Inflated]) -> TaskSet {
    let mut out = ts.clone();
    for (t, x) in out.tasks.iter_mut().zip(inf) {
        t.wcet = x.task.c;
        t.deadline = x.task.d;
    }
    out
}

/// What a sufficient test on the inflated set says about the overhead-charged schedule: a pass
/// proves it schedulable; a failure proves nothing (the inflation is an upper bound).
fn as_bound(mut v: Verdict) -> Verdict {
    if v.schedulable == Some(false) {
        v.schedulable = None;
        v.detail = format!(
            "fails with inflated WCETs (a bound, not a proof of a miss): {}",
            v.detail
        );
    }
    v
}

/// `ts` with its overheads charged, once for every test: the inflation for one CPU (and each
/// CPU of a partition) and, on several CPUs, for global EDF; or why the overheads alone make a
/// miss certain.
struct Charged {
    part: Vec<Inflated>,
    glob: Option<Vec<Inflated>>,
    part_set: TaskSet,
    glob_set: Option<TaskSet>,
}

fn charge(ts: &TaskSet, oh: &Overheads) -> Result<Charged, String> {
    let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
    let glob = (ts.platform.cpus > 1).then(|| inflate(&cdt, oh, Class::Global));
    match (inflate(&cdt, oh, Class::Partitioned), glob.transpose()) {
        (Ok(part), Ok(glob)) => Ok(Charged {
            part_set: with_inflated(ts, &part),
            glob_set: glob.as_ref().map(|g| with_inflated(ts, g)),
            part,
            glob,
        }),
        (Err(e), _) | (_, Err(e)) => Err(infeasible(ts, e)),
    }
}

/// Why the overheads alone make `ts` miss, naming the task.
fn infeasible(ts: &TaskSet, e: Infeasible) -> String {
    match e.task {
        Some(i) => format!("task '{}': {}", ts.tasks[i].name, e.message),
        None => e.message,
    }
}

/// `test` with the overheads charged (`charged`), by its entry's overhead-aware form: its
/// verdict function on the inflated set (a pass proves, a failure is only inconclusive), or a
/// form of its own.
fn charged_verdict(
    test: &Test,
    ts: &TaskSet,
    oh: &Overheads,
    charged: &Result<Charged, String>,
) -> Result<Verdict, NotApplicable> {
    let c = match charged {
        Ok(c) => c,
        Err(why) => return test.answered(Ok(Verdict::new(test.name(), Some(false), why.clone()))),
    };
    let on = |set: &TaskSet| match test.run(set) {
        Ok(v) => Ok(as_bound(v)),
        // Applying to the set as written, the test can only lose its deadline class to the
        // release latency (D' = D − release).
        Err(NotApplicable {
            reason:
                Reason::Deadline {
                    takes: registry::Deadlines::Implicit,
                    ..
                },
            ..
        }) if test.run(ts).is_ok() => {
            Err(test.refuse(Reason::Inflated(InflatedReason::NotImplicit)))
        }
        Err(e) => Err(e),
    };
    match (test.form, test.entry.overheads) {
        (Form::PerCpu, _) | (Form::Whole, WithOverheads::Partitioned) => on(&c.part_set),
        (Form::Whole, WithOverheads::Global) => match &c.glob_set {
            Some(g) => on(g),
            None => Err(test.refuse(Reason::SeveralCpus)),
        },
        (Form::Whole, WithOverheads::GlobalFp(by)) => {
            let prio = priorities(test, ts, by)?;
            let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
            match inflate(&cdt, oh, Class::GlobalFp(&prio)) {
                Ok(inf) => on(&with_inflated(ts, &inf)),
                Err(e) => test.answered(Ok(Verdict::new(
                    test.name(),
                    Some(false),
                    infeasible(ts, e),
                ))),
            }
        }
        (Form::Whole, WithOverheads::GlobalFpDag(by)) => {
            let prio = priorities(test, ts, by)?;
            let dags: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
            let shape: Vec<Shape> = ts.tasks.iter().map(Shape::of).collect();
            let v = match inflate_dag(&dags, &shape, oh, &prio) {
                Ok(inf) => as_bound(gfp_dag::verdict_charged(ts, &test.name(), &prio, &inf)),
                Err(e) => Verdict::new(test.name(), Some(false), infeasible(ts, e)),
            };
            test.answered(Ok(v))
        }
        (Form::Whole, WithOverheads::Own(f)) => test.answered(Ok(f(&Subject::whole(ts), oh))),
        (Form::Whole, WithOverheads::Not) => Err(test.refuse(Reason::NoOverheadForm)),
    }
}

/// The priorities `by` of `ts`, or the test's refusal naming a task without one.
fn priorities(test: &Test, ts: &TaskSet, by: Priorities) -> Result<Vec<u32>, NotApplicable> {
    Subject::whole(ts).priorities(by).ok_or_else(|| {
        let task = ts
            .tasks
            .iter()
            .position(|t| t.priority.is_none())
            .unwrap_or(0);
        test.refuse(Reason::NoPriority { task })
    })
}

/// Whether `test` has an overhead-aware form for parallel tasks (the inflation covers
/// independent sequential tasks, and parallel ones under Melani et al.'s analysis).
fn charges_parallel(test: &Test, ts: &TaskSet) -> bool {
    matches!(test.entry.overheads, WithOverheads::GlobalFpDag(_))
        && !registry::has_sections(ts)
        && registry::flow(ts) == (false, false)
}

/// `test` on `ts` with the overheads `oh` charged (what a sweep's `test:NAME` runs when the set's
/// run options give overheads), or why it does not apply: a set the test is not for, parallel
/// tasks (but for `GlobalFpDag` forms) or critical sections (the inflation covers independent
/// sequential tasks, and parallel ones under Melani et al.'s analysis), or a
/// set it does not apply to once charged.
pub fn verdict_with_overheads(
    test: &Test,
    ts: &TaskSet,
    oh: &Overheads,
) -> Result<Verdict, NotApplicable> {
    test.is_for(ts)?;
    if registry::structured(ts) && !charges_parallel(test, ts) {
        return Err(test.refuse(Reason::OverheadsSequentialOnly));
    }
    charged_verdict(test, ts, oh, &charge(ts, oh))
}

/// Every test [`schedulability::analyze`](crate::schedulability::analyze) lists for `ts`, with
/// the overheads `oh` charged (see the file's overview): tests for one CPU, and per CPU (`p-`),
/// on the partitioned inflation, global EDF tests on the global one, `necessary` in its own
/// form (each job needs at least C + decision + context_switch between its arrival and its
/// deadline, and Σ of that over T at most m). The rows are the plain analysis's, in its order,
/// so the two can be shown side by side.
pub fn analyze_with_overheads(ts: &TaskSet, oh: &Overheads) -> OverheadAnalysis {
    let listed: Vec<Test> = registry::analyze_with(ENTRIES, ts)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let row = |t: &Test, r: Result<Verdict, NotApplicable>| {
        r.unwrap_or_else(|na| Verdict::new(t.name(), None, na.to_string()))
    };
    if registry::structured(ts) {
        let charged = charge(ts, oh);
        let verdicts = listed
            .iter()
            .map(|t| match charges_parallel(t, ts) {
                true => row(t, charged_verdict(t, ts, oh, &charged)),
                false => row(t, Err(t.refuse(Reason::OverheadsSequentialOnly))),
            })
            .collect();
        return OverheadAnalysis {
            verdicts,
            tasks: Vec::new(),
        };
    }
    let charged = charge(ts, oh);
    let verdicts = listed
        .iter()
        .map(|t| row(t, charged_verdict(t, ts, oh, &charged)))
        .collect();
    let fp = GLOBAL_FP.map(|by| global_fp(ts, oh, by));
    let tasks = match &charged {
        Err(_) => Vec::new(),
        Ok(c) => ts
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskRow {
                name: t.name.clone(),
                plain: Cdt::from(t),
                partitioned: c.part[i],
                global: c.glob.as_ref().map(|g| g[i]),
                global_fp: std::array::from_fn(|a| fp[a].as_ref().map(|x| x[i])),
            })
            .collect(),
    };
    OverheadAnalysis { verdicts, tasks }
}

/// One line naming the charged overheads, for reports.
pub fn describe(oh: &Overheads) -> String {
    let mut s = format!(
        "decision {}, context switch {}, migration {}, release {}, tick {} every {}",
        fmt_duration(oh.decision),
        fmt_duration(oh.context_switch),
        fmt_duration(oh.migration),
        fmt_duration(oh.release),
        fmt_duration(oh.tick),
        fmt_duration(oh.tick_period)
    );
    if let Some(p) = &oh.profile {
        s.push_str(&format!(" ({} of {p})", oh.statistic.name()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000;

    fn oh(
        decision: Time,
        cs: Time,
        mig: Time,
        release: Time,
        tick: Time,
        period: Time,
    ) -> Overheads {
        Overheads {
            decision,
            context_switch: cs,
            migration: mig,
            release,
            tick,
            tick_period: period,
            ..Overheads::default()
        }
    }

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// Partitioned, by hand: C = 1000us, decision 5us, cs 10us, tick 20us every 1000us,
    /// release 50us. C' = 1000 + 2·15 = 1030; (1030 + 20)·1000/980 = 1071.428…us → ⌈⌉ =
    /// 1071429ns; D' = 4000 − 50 = 3950us. Without ticks: exactly 1030us.
    #[test]
    fn partitioned_inflation_by_hand() {
        let ts = [cdt(1000 * US, 4000 * US, 5000 * US)];
        let r = inflate(
            &ts,
            &oh(5 * US, 10 * US, 99 * US, 50 * US, 20 * US, 1000 * US),
            Class::Partitioned,
        )
        .unwrap();
        assert_eq!(r[0].task, cdt(1_071_429, 3950 * US, 5000 * US));
        assert_eq!((r[0].dispatches, r[0].migrations), (2, 0));
        let r = inflate(
            &ts,
            &oh(5 * US, 10 * US, 99 * US, 0, 0, 1000 * US),
            Class::Partitioned,
        )
        .unwrap();
        assert_eq!(r[0].task, cdt(1030 * US, 4000 * US, 5000 * US));
        // No overheads: no change.
        assert_eq!(
            inflate(&ts, &Overheads::default(), Class::Partitioned).unwrap()[0].task,
            ts[0]
        );
    }

    /// Global, by hand: tasks (C, D, T) in us a = (100, 1000, 1000), b = (200, 3000, 4000),
    /// c = (50, 250, 500); release 0. Preemptions: a by c: ⌈(1000−250)/500⌉ = 2 → p = 2;
    /// b by a: ⌈2000/1000⌉ = 2 and by c: ⌈2750/500⌉ = 6 → p = 8; c: no task with D < 250
    /// → p = 0. With decision 1, cs 2, migration 4, no tick: C'' = C + (p+1)·3 + p·4:
    /// a = 100 + 9 + 8 = 117, b = 200 + 27 + 32 = 259, c = 50 + 3 = 53.
    /// With tick 10us every 100us: c = ⌈(50 + 1·(3 + 10))·100/90⌉ = ⌈70⌉ = 70us.
    #[test]
    fn global_inflation_by_hand() {
        let ts = [
            cdt(100 * US, 1000 * US, 1000 * US),
            cdt(200 * US, 3000 * US, 4000 * US),
            cdt(50 * US, 250 * US, 500 * US),
        ];
        let r = inflate(&ts, &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US), Class::Global).unwrap();
        assert_eq!(
            r.iter()
                .map(|x| (x.task.c / US, x.dispatches, x.migrations))
                .collect::<Vec<_>>(),
            vec![(117, 3, 2), (259, 9, 8), (53, 1, 0)]
        );
        let r = inflate(
            &ts,
            &oh(US, 2 * US, 4 * US, 0, 10 * US, 100 * US),
            Class::Global,
        )
        .unwrap();
        assert_eq!(r[2].task.c, 70 * US);
        // A release latency shortens every D' alike, so the preemption counts stay.
        let r = inflate(
            &ts,
            &oh(US, 2 * US, 4 * US, 100 * US, 0, 1000 * US),
            Class::Global,
        )
        .unwrap();
        assert_eq!(
            r.iter()
                .map(|x| (x.task.d / US, x.dispatches))
                .collect::<Vec<_>>(),
            vec![(900, 3), (2900, 9), (150, 1)]
        );
    }

    /// Global FP, by hand, on the tasks of `global_inflation_by_hand` with priorities a = 3,
    /// c = 2, b = 1 (release 0; decision 1, cs 2, migration 4): a is preempted by no one, p = 0:
    /// C'' = 100 + 3 = 103; c only by a, ⌈250/1000⌉ = 1: 50 + 2·3 + 4 = 60; b by a, ⌈3000/1000⌉
    /// = 3, and c, ⌈3000/500⌉ = 6: p = 9, 200 + 10·3 + 9·4 = 266 (EDF's counts were 2, 8, 0).
    #[test]
    fn global_fp_inflation_by_hand() {
        let ts = [
            cdt(100 * US, 1000 * US, 1000 * US),
            cdt(200 * US, 3000 * US, 4000 * US),
            cdt(50 * US, 250 * US, 500 * US),
        ];
        let r = inflate(
            &ts,
            &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US),
            Class::GlobalFp(&[3, 1, 2]),
        )
        .unwrap();
        assert_eq!(
            r.iter()
                .map(|x| (x.task.c / US, x.dispatches, x.migrations))
                .collect::<Vec<_>>(),
            vec![(103, 1, 0), (266, 10, 9), (60, 2, 1)]
        );
        // Equal priorities do not preempt each other (ties go to the earlier release).
        let r = inflate(
            &ts,
            &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US),
            Class::GlobalFp(&[1, 1, 1]),
        )
        .unwrap();
        assert!(r.iter().all(|x| x.dispatches == 1), "{r:?}");
    }

    /// The per-task rows on two CPUs carry global FP's inflation beside global EDF's, per
    /// assignment: the tasks of `global_inflation_by_hand`, priorities in the file a = 3, b = 1,
    /// c = 2 (`global_fp_inflation_by_hand`: 103, 266, 60 us). RM (periods 1000, 4000, 500)
    /// and DM (deadlines 1000, 3000, 250) both rank c, a, b: c is preempted by no one, 50 + 3 =
    /// 53; a by c, ⌈1000/500⌉ = 2: 100 + 3·3 + 2·4 = 117; b by a, 3, and c, 6: 266.
    #[test]
    fn rows_carry_each_global_fp_inflation() {
        use rtsched_model::Task;
        let mut ts = TaskSet::new(
            2,
            vec![
                Task::periodic("a", 1000 * US, 100 * US),
                Task::periodic("b", 4000 * US, 200 * US),
                Task::periodic("c", 500 * US, 50 * US),
            ],
        );
        ts.tasks[1].deadline = 3000 * US;
        ts.tasks[2].deadline = 250 * US;
        let a = analyze_with_overheads(&ts, &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US));
        let c = |k: usize| -> Vec<Option<Time>> {
            a.tasks
                .iter()
                .map(|r| r.global_fp[k].map(|x| x.task.c / US))
                .collect()
        };
        assert_eq!(GLOBAL_FP[0], Priorities::RateMonotonic);
        assert_eq!(c(0), vec![Some(117), Some(266), Some(53)]);
        assert_eq!(c(1), c(0));
        assert_eq!(c(2), vec![None; 3]);
        for (t, p) in ts.tasks.iter_mut().zip([3, 1, 2]) {
            t.priority = Some(p);
        }
        let a = analyze_with_overheads(&ts, &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US));
        let file: Vec<Time> = a
            .tasks
            .iter()
            .map(|r| r.global_fp[2].unwrap().task.c)
            .collect();
        assert_eq!(file, vec![103 * US, 266 * US, 60 * US]);
        // Global EDF's, beside them (`global_inflation_by_hand`): 117, 259, 53.
        assert_eq!(a.tasks[1].global.unwrap().task.c, 259 * US);
    }

    /// Parallel tasks under global FP, by hand (us; release 0; decision 1, cs 2, migration 4):
    /// a sequential (vol = len = 100, D = T = 1000, priority 1), b fork-join [50 ‖ 50] then
    /// [20] (vol 120, len 70, D = T = 500, priority 2; 3 nodes, 2 on a path). b: no task of its
    /// priority or above, its own nodes but one, p = 2: vol 120 + (3 + 2)·3 + 2·4 = 143, len
    /// 70 + (2 + 2)·3 + 8 = 90. a: b's nodes of ⌈(1000 + 500)/500⌉ = 3 jobs, p = 9: 100 +
    /// 10·3 + 9·4 = 166, vol and len. With a tick of 10 every 100: b's vol ⌈(120 + 5·(3 + 10) +
    /// 8)·100/90⌉ = ⌈214.44…⌉ us = 214445 ns.
    #[test]
    fn dag_inflation_by_hand() {
        let dag = |c, l, d, t| DagTask { c, l, d, t };
        let ts = [
            dag(100 * US, 100 * US, 1000 * US, 1000 * US),
            dag(120 * US, 70 * US, 500 * US, 500 * US),
        ];
        let shape = [Shape { nodes: 1, depth: 1 }, Shape { nodes: 3, depth: 2 }];
        let r = inflate_dag(
            &ts,
            &shape,
            &oh(US, 2 * US, 4 * US, 0, 0, 1000 * US),
            &[1, 2],
        )
        .unwrap();
        assert_eq!(
            r.iter().map(|x| (x.c / US, x.l / US)).collect::<Vec<_>>(),
            vec![(166, 166), (143, 90)]
        );
        let r = inflate_dag(
            &ts,
            &shape,
            &oh(US, 2 * US, 4 * US, 0, 10 * US, 100 * US),
            &[1, 2],
        )
        .unwrap();
        assert_eq!(r[1].c, 214_445);
        // The shapes the model gives: a fork-join task's threads and regions, a DAG's nodes
        // and its longest chain (a diamond: 4 nodes, 3 on a path).
        use rtsched_model::{Dag, Region, Task};
        let mut t = Task::periodic("b", 500, 120);
        t.regions = vec![
            Region {
                threads: vec![50, 50],
            },
            Region { threads: vec![20] },
        ];
        assert_eq!(Shape::of(&t), Shape { nodes: 3, depth: 2 });
        let mut d = Dag::from_regions(&[
            Region { threads: vec![1] },
            Region {
                threads: vec![1, 1],
            },
            Region { threads: vec![1] },
        ]);
        assert_eq!(d.nodes.len(), 4);
        t.dag = Some(d.clone());
        t.regions.clear();
        assert_eq!(Shape::of(&t), Shape { nodes: 4, depth: 3 });
        d.edges.clear();
        t.dag = Some(d);
        assert_eq!(Shape::of(&t), Shape { nodes: 4, depth: 1 });
    }

    #[test]
    fn infeasible_overheads_are_named() {
        let ts = [cdt(10, 100, 100), cdt(10, 50, 100)];
        let e = inflate(&ts, &oh(0, 0, 0, 50, 0, 1000), Class::Partitioned).unwrap_err();
        assert_eq!(e.task, Some(1));
        assert!(e.message.contains("release latency"), "{}", e.message);
        let e = inflate(&ts, &oh(0, 0, 0, 0, 1000, 1000), Class::Global).unwrap_err();
        assert_eq!(e.task, None);
        assert!(e.message.contains("tick"), "{}", e.message);
    }

    /// One CPU, (C, T) = (4ms, 10ms) and (5ms, 10ms): U = 0.9. decision + cs = 50us, no tick:
    /// C'' = 4.1 and 5.1ms, U'' = 0.92 — still schedulable. With 300us: 4.6 + 5.6 = 1.02 > 1:
    /// plain EDF says schedulable, the overhead-aware one only "not proven", never "no".
    #[test]
    fn analysis_side_by_side() {
        use rtsched_model::Task;
        let ms = 1_000_000;
        let ts = TaskSet::new(
            1,
            vec![
                Task::periodic("a", 10 * ms, 4 * ms),
                Task::periodic("b", 10 * ms, 5 * ms),
            ],
        );
        let get = |a: &OverheadAnalysis, n: &str| {
            a.verdicts.iter().find(|v| v.test == n).unwrap().schedulable
        };
        let a = analyze_with_overheads(&ts, &oh(40 * US, 10 * US, 0, 0, 0, ms));
        assert_eq!(get(&a, "edf-exact"), Some(true));
        assert_eq!(a.tasks[1].partitioned.task.c, 5100 * US);
        let a = analyze_with_overheads(&ts, &oh(200 * US, 100 * US, 0, 0, 0, ms));
        assert_eq!(get(&a, "edf-exact"), None);
        assert_eq!(get(&a, "necessary"), None);
        // The plain names all appear (the RM bounds too, as not applicable: D' < T with a
        // release latency).
        let plain: Vec<String> = crate::schedulability::analyze(&ts)
            .into_iter()
            .map(|v| v.test)
            .collect();
        assert!(plain
            .iter()
            .all(|n| a.verdicts.iter().any(|v| &v.test == n)));
        let a = analyze_with_overheads(&ts, &oh(0, 0, 0, US, 0, ms));
        let ll = a
            .verdicts
            .iter()
            .find(|v| v.test == "rm-liu-layland")
            .unwrap();
        assert!(
            ll.schedulable.is_none() && ll.detail.contains("not applicable"),
            "{ll:?}"
        );
        // C + decision + cs > D − release: certainly a miss.
        let a = analyze_with_overheads(&ts, &oh(1000 * US, 0, 0, 4500 * US, 0, ms));
        assert_eq!(get(&a, "necessary"), Some(false));
        let a = analyze_with_overheads(&ts, &oh(0, 0, 0, 10 * ms, 0, ms));
        assert!(
            a.verdicts
                .iter()
                .all(|v| v.schedulable == Some(false) && v.detail.contains("task 'a'")),
            "{:?}",
            a.verdicts
        );
    }
}
