//! What the utility-accrual (UA) policies share (ChronOS §3–6; Locke's LBESA, Clark's DASA,
//! Garyali et al.'s G-GUA and NG-GUA): the set of jobs a UA policy reasons about, the estimates
//! it may make, when a job is abandoned, and the feasibility test of a tentative schedule.
//!
//! - **What a UA policy knows.** Like a kernel, only WCETs and what has executed: the remaining
//!   time of an entity is its thread's WCET minus [`RunView::executed`] (at least 1 ns, so an
//!   overrunning job still has a density). Never its actual demand.
//! - **Blocked jobs stay in view.** DASA and the GUA family look at jobs that wait for a
//!   resource (their *dependency chain*: the job, the holder of what it waits for, that
//!   holder's holder…), so [`Tracked`] keeps blocked entities too, marked blocked, with the
//!   resource each waits for. The ledger does not report `aborted` for an entity aborted while
//!   blocked, and reuses its id, so [`Tracked::prune`] drops every tracked entry the run no
//!   longer shows with the same identity before each decision.
//! - **Potential utility density** (PUD, DASA §3; "GVD" in ChronOS): the utility the system
//!   accrues by running a job and its chain to completion, divided by the time that takes.
//!   Utilities are taken at the expected completion (now + remaining), so non-step TUFs count
//!   what finishing then would earn.
//! - **Abandoned when it can earn nothing** ([`hopeless`], [`hopeless_at`]): a job is aborted
//!   once it cannot complete by its TUF's *termination* (release + X; the deadline without a
//!   TUF, and for the default step TUF X = deadline): now + remaining > termination. ChronOS's
//!   TUFs are steps that end at the deadline, so its `check_task_failure` tests the deadline;
//!   a TUF that outlives its deadline still pays after it, so the job is kept until then.
//! - **Feasibility** of a tentative schedule (a list in execution order): every job, run one
//!   after another from now for its remaining time, completes by its *deadline* (the critical
//!   time, what ChronOS's `list_is_feasible` compares). A job that can still earn but not by
//!   its deadline is not feasible anywhere; each policy's overview says where it may still run
//!   (on a CPU its schedule leaves idle), so that a UA policy never idles a CPU a job could
//!   earn on.
//! - **Freed resources** ([`grant_pending`]): ChronOS §3.2 "The decision to choose the new task
//!   is done by the scheduling algorithm": a UA policy hands a freed resource to the waiter it
//!   ranks first by its own order, not to the longest waiter.

use crate::ctx::BuildCtx;
use crate::policy::{EntityId, EntityInfo, RunView};
use crate::spec::{PartitionAdmission, Partitioning, SchedulerSpec};
use rtsched_analysis::partition::Admission;
use rtsched_model::{Task, TaskSet, Time};

/// A thread's WCET: its region's thread WCET, a DAG node's WCET (region `DAG_REGION`, the
/// node is the thread index), or the task's WCET for a sequential task. Hot in the UA
/// policies' feasibility checks: a sequential task's answer reads neither `dag` nor a list.
#[inline]
pub fn thread_wcet(task: &Task, info: &EntityInfo) -> Time {
    match task.regions.get(info.region as usize) {
        Some(r) => r
            .threads
            .get(info.thread as usize)
            .copied()
            .unwrap_or(task.wcet),
        None if info.region == crate::policy::DAG_REGION => node_wcet(task, info.thread),
        None => task.wcet,
    }
}

#[cold]
fn node_wcet(task: &Task, node: u32) -> Time {
    task.dag
        .as_ref()
        .and_then(|d| d.nodes.get(node as usize))
        .map_or(task.wcet, |n| n.wcet)
}

/// The remaining time of `info` as a scheduler estimates it: WCET minus executed, at least 1.
#[inline]
pub fn remaining(view: &dyn RunView, info: &EntityInfo) -> Time {
    let task = view.task(info.task);
    thread_wcet(task, info)
        .saturating_sub(view.executed(info.id))
        .max(1)
}

/// The utility `info`'s job accrues if it completes at `at`.
#[inline]
pub fn utility_at(view: &dyn RunView, info: &EntityInfo, at: Time) -> f64 {
    view.task(info.task)
        .utility_at(at.saturating_sub(info.release))
}

/// `e`'s dependency chain after `e` itself: the holder of what it waits for, that holder's
/// holder, and so on (ChronOS Fig 3(b)), into `out` (cleared first). Stops at a holder that is
/// not blocked, and before repeating an entity (a deadlock cycle; the ledger reports those).
pub fn chain(view: &dyn RunView, e: EntityId, out: &mut Vec<EntityId>) {
    out.clear();
    let mut at = e;
    while let Some((_, h)) = view.waiting_for(at) {
        if h == e || out.contains(&h) {
            break;
        }
        out.push(h);
        at = h;
    }
}

/// The potential utility density of `info` with its chain `deps` (holders, in chain order):
/// the utility accrued by completing the holders (last first) and then `info`, from `now`, per
/// ns of remaining time. A job that can earn nothing any more has density 0.
pub fn pud(view: &dyn RunView, now: Time, info: &EntityInfo, deps: &[EntityId]) -> f64 {
    let (mut t, mut u) = (now, 0.0);
    for &d in deps.iter().rev() {
        if let Some(di) = view.entity(d) {
            t += remaining(view, &di);
            u += utility_at(view, &di, t);
        }
    }
    t += remaining(view, info);
    u += utility_at(view, info, t);
    u / (t - now) as f64
}

/// Whether running `jobs` one after another from `now`, each for its remaining time (`.1`),
/// completes every one by its deadline (`.0`).
#[inline]
pub fn feasible(now: Time, jobs: impl IntoIterator<Item = (Time, Time)>) -> bool {
    let mut t = now;
    for (deadline, rem) in jobs {
        t += rem;
        if t > deadline {
            return false;
        }
    }
    true
}

/// The instant after which `info`'s job earns nothing: release + its TUF's termination time
/// (its deadline without a TUF).
#[inline]
pub fn termination(view: &dyn RunView, info: &EntityInfo) -> Time {
    match &view.task(info.task).tuf {
        Some(f) => info.release.saturating_add(f.termination()),
        None => info.deadline,
    }
}

/// The instant `info`'s job becomes hopeless — unable to complete by its [`termination`] —
/// if nothing changes: waiting, when now + remaining first exceeds the termination
/// (termination − remaining + 1 ns); `running` (its remaining shrinks as fast as time passes),
/// at the termination, reached only if it overruns its WCET. Every UA timer is set from this.
#[inline]
pub fn hopeless_at(view: &dyn RunView, info: &EntityInfo, running: bool) -> Time {
    let x = termination(view, info);
    if running {
        x
    } else {
        (x + 1).saturating_sub(remaining(view, info))
    }
}

/// Whether `info`'s job can no longer complete by its termination (now + remaining >
/// termination): it can earn nothing more, and every UA policy aborts it (Clark's DASA aborts
/// what cannot meet its critical time; ChronOS's `check_task_failure`, before each decision,
/// once its step TUF has ended).
#[inline]
pub fn hopeless(now: Time, view: &dyn RunView, info: &EntityInfo) -> bool {
    now >= hopeless_at(view, info, false)
}

/// Ask to abort every tracked job that is [`hopeless`]; whether any was. The ledger calls
/// `schedule` again at this instant after the aborts, so a policy returns at once when true.
pub fn abort_hopeless(
    now: Time,
    view: &dyn RunView,
    tracked: &Tracked,
    d: &mut crate::policy::Dispatch<'_>,
) -> bool {
    let mut any = false;
    for &e in tracked.ids() {
        if hopeless(now, view, tracked.get(e).expect("listed ids are tracked")) {
            d.abort(e);
            any = true;
        }
    }
    any
}

/// The next instant after `now` at which a tracked job becomes [`hopeless`] ([`hopeless_at`];
/// `running(e)`: whether `e` runs, or is being dispatched).
pub fn next_hopeless(
    now: Time,
    view: &dyn RunView,
    tracked: &Tracked,
    running: impl Fn(EntityId) -> bool,
) -> Option<Time> {
    let mut best: Option<Time> = None;
    for &e in tracked.ids() {
        let i = tracked.get(e).expect("listed ids are tracked");
        let waiting = hopeless_at(view, i, false);
        // Running, the instant is later still (the termination): skip the (costlier) check
        // of whether `e` runs when even the waiting instant cannot be the earliest.
        if waiting > now && best.is_some_and(|b| waiting >= b) {
            continue;
        }
        let t = if running(e) {
            hopeless_at(view, i, true)
        } else {
            waiting
        };
        if t > now && best.is_none_or(|b| t < b) {
            best = Some(t);
        }
    }
    best
}

/// A one-shot timer a policy keeps armed for the earliest instant it wants to decide again
/// (DASA, LBESA and the global models: when a waiting job becomes hopeless), without asking
/// the substrate again for an instant already asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alarm {
    armed: Option<Time>,
}

impl Alarm {
    /// A timer fired at `now` (`Policy::timer`).
    pub fn fired(&mut self, now: Time) {
        if self.armed.is_some_and(|a| a <= now) {
            self.armed = None;
        }
    }
    /// Ask for a timer at `at` unless one at or before it is pending.
    pub fn arm(&mut self, now: Time, at: Option<Time>, d: &mut crate::policy::Dispatch<'_>) {
        if let Some(w) = at {
            if w > now && self.armed.is_none_or(|a| a <= now || w < a) {
                self.armed = Some(w);
                d.wake_at(w);
            }
        }
    }
}

const NO_RESOURCE: u32 = u32::MAX;

/// The entities a UA policy reasons about: ready, running and blocked ones, by id.
#[derive(Clone, Debug, Default)]
pub struct Tracked {
    /// Per id: its info, if tracked.
    info: Vec<Option<EntityInfo>>,
    blocked: Vec<bool>,
    /// Per id: the resource it asked for and waits for (`Policy::requested`), or NO_RESOURCE.
    waits_on: Vec<u32>,
    /// Tracked ids, in the order they arrived (swap-removed; sort before relying on order).
    ids: Vec<EntityId>,
}

impl Tracked {
    pub fn new() -> Self {
        Tracked::default()
    }
    fn grow(&mut self, i: usize) {
        if self.info.len() <= i {
            self.info.resize(i + 1, None);
            self.blocked.resize(i + 1, false);
            self.waits_on.resize(i + 1, NO_RESOURCE);
        }
    }
    /// Track `info` as ready (a release, or an unblock), replacing whatever the id named.
    pub fn add(&mut self, info: &EntityInfo) {
        let i = info.id as usize;
        self.grow(i);
        if self.info[i].is_none() {
            self.ids.push(info.id);
        }
        self.info[i] = Some(*info);
        self.blocked[i] = false;
        self.waits_on[i] = NO_RESOURCE;
    }
    /// Stop tracking `e` (completed, aborted).
    pub fn remove(&mut self, e: EntityId) {
        if let Some(slot) = self.info.get_mut(e as usize) {
            if slot.take().is_some() {
                let p = self
                    .ids
                    .iter()
                    .position(|&x| x == e)
                    .expect("tracked ids are listed");
                self.ids.swap_remove(p);
            }
        }
    }
    /// `e` blocked on a resource (`true`) or was handed it (`false`).
    pub fn set_blocked(&mut self, e: EntityId, blocked: bool) {
        if let Some(b) = self.blocked.get_mut(e as usize) {
            *b = blocked;
            if !blocked {
                self.waits_on[e as usize] = NO_RESOURCE;
            }
        }
    }
    /// `e` asked for resource `r`, which it must wait for (`Policy::requested`).
    pub fn set_waiting(&mut self, e: EntityId, r: crate::policy::ResourceId) {
        self.grow(e as usize);
        self.waits_on[e as usize] = r;
    }
    pub fn get(&self, e: EntityId) -> Option<&EntityInfo> {
        self.info.get(e as usize).and_then(Option::as_ref)
    }
    pub fn is_blocked(&self, e: EntityId) -> bool {
        self.blocked.get(e as usize).copied().unwrap_or(false)
    }
    /// Whether `e` is tracked, blocked, and waits for `r`.
    pub fn waits_for(&self, e: EntityId, r: crate::policy::ResourceId) -> bool {
        self.is_blocked(e) && self.waits_on.get(e as usize) == Some(&r)
    }
    pub fn contains(&self, e: EntityId) -> bool {
        self.get(e).is_some()
    }
    /// Every tracked id (ready, running or blocked), in no particular order.
    pub fn ids(&self) -> &[EntityId] {
        &self.ids
    }
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Drop entries the run no longer shows as the same live entity (aborted while blocked,
    /// which the ledger does not report; the id may already name a new entity).
    pub fn prune(&mut self, view: &dyn RunView) {
        let mut k = 0;
        while k < self.ids.len() {
            let e = self.ids[k];
            let mine = self.info[e as usize].expect("listed ids are tracked");
            if view.entity(e) != Some(mine) {
                self.info[e as usize] = None;
                self.ids.swap_remove(k);
            } else {
                k += 1;
            }
        }
    }
}

/// The order in which a UA policy hands a freed resource to one of its waiters: the one it
/// would run first. `Pud`: highest own potential utility density (DASA, G-GUA; G-HVDF's value
/// density is the same quantity); `Deadline`: EDF order (LBESA, NG-GUA). Ties, and every
/// comparison under `Deadline`, by the EDF key; a hopeless waiter ranks last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantBy {
    Pud,
    Deadline,
}

/// Hand each resource of [`Dispatch::pending_grants`](crate::policy::Dispatch::pending_grants)
/// to its tracked waiter ranked first `by` (ChronOS §3.2: on a release "the decision to choose
/// the new task is done by the scheduling algorithm"); the grantee is ready from now on.
/// `scratch` holds the pending list. A resource none of whose waiters is tracked is left to
/// the substrate (FIFO).
pub fn grant_pending(
    now: Time,
    view: &dyn RunView,
    tracked: &mut Tracked,
    by: GrantBy,
    scratch: &mut Vec<crate::policy::ResourceId>,
    d: &mut crate::policy::Dispatch<'_>,
) {
    scratch.clear();
    scratch.extend_from_slice(d.pending_grants());
    for &r in scratch.iter() {
        let mut best: Option<(bool, f64, crate::common::key::Key, EntityId)> = None;
        for &w in tracked.ids() {
            if !tracked.waits_for(w, r) {
                continue;
            }
            let i = tracked.get(w).expect("listed ids are tracked");
            let rank = (
                hopeless(now, view, i),
                if by == GrantBy::Pud {
                    -pud(view, now, i, &[])
                } else {
                    0.0
                },
                crate::common::key::Key::new(i.deadline, i.release, i),
                w,
            );
            let better = match &best {
                None => true,
                Some(b) => rank
                    .0
                    .cmp(&b.0)
                    .then(rank.1.total_cmp(&b.1))
                    .then(rank.2.cmp(&b.2))
                    .is_lt(),
            };
            if better {
                best = Some(rank);
            }
        }
        if let Some((_, _, _, w)) = best {
            d.grant(r, w);
            tracked.set_blocked(w, false);
        }
    }
}

/// How a blocked job's chain raises the PUD of the job at the end of its chain (its head, the
/// holder that can run; option `chain_pud=` of G-GUA and NG-GUA). `Sum` (the default, ChronOS's
/// `agg_util` / `agg_left`): the head stands for everything that waits on it, directly or
/// through others — its PUD is the utility of the head and all those dependents, completed one
/// after another (dependents in EDF order), over their summed remaining time. `Max` (DASA's
/// per-job view): the larger of the head's own PUD and that of each blocked job with its chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainPud {
    Sum,
    Max,
}

/// A runnable job as the global UA policies (G-GUA, NG-GUA) weigh it: its EDF key, deadline,
/// remaining time, its PUD and its PIP deadline, both raised by the blocked jobs whose
/// dependency chain ends at it (the "zero in-degree" job stands for its chain, ChronOS §6.1),
/// and whether it is hopeless (only kept with `abort=off`).
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub e: EntityId,
    pub key: crate::common::key::Key,
    pub deadline: Time,
    pub rem: Time,
    pub pud: f64,
    /// The least deadline of the job and of every job waiting on it, directly or through
    /// others (ChronOS's `temp_deadline`, "to default to EDF-PIP behavior").
    pub pip: Time,
    pub hopeless: bool,
}

/// Whether `e`'s job is among those of `aborts` (one abort ends every thread of a job).
fn job_aborted(tracked: &Tracked, aborts: &[EntityId], e: EntityId) -> bool {
    let Some(i) = tracked.get(e) else { return true };
    aborts.iter().any(|&a| {
        tracked
            .get(a)
            .is_some_and(|x| x.task == i.task && x.job == i.job)
    })
}

/// Two mechanisms of the global UA policies that an option can switch off, for negative
/// controls (an experiment that credits a mechanism runs again without it): `abort=off` (no
/// abort of hopeless jobs, no timer for them: a late job follows the run's `on_miss`; a
/// deadlock is still broken) and `chains=off` (a blocked job lends neither PUD nor deadline to
/// the head of its chain). Both are on by default: the published algorithms. And the reading
/// `chain_pud=sum|max` ([`ChainPud`], default sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mechanisms {
    pub abort: bool,
    pub chains: bool,
    pub chain_pud: ChainPud,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms {
            abort: true,
            chains: true,
            chain_pud: ChainPud::Sum,
        }
    }
}

/// Read the `on|off` switch `key` of `spec` (default on).
pub fn switch(spec: &SchedulerSpec, key: &str) -> Result<bool, String> {
    match spec
        .options
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
    {
        None | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(x) => Err(format!(
            "scheduler '{}': option '{key}': '{x}' is not on or off",
            spec.name
        )),
    }
}

/// The options of a global UA policy: `model=`, `mapper=` (`global_model::read`), `abort=`,
/// `chains=`, `chain_pud=` and the policy's own `extra` switches; any other option is an error.
pub fn check_options(spec: &SchedulerSpec, extra: &[&str]) -> Result<Mechanisms, String> {
    let known = ["model", "mapper", "abort", "chains", "chain_pud"];
    for (k, v) in &spec.options {
        if !known.contains(&k.as_str()) && !extra.contains(&k.as_str()) {
            let k = if k.is_empty() { v.as_str() } else { k.as_str() };
            let all: Vec<&str> = known.iter().chain(extra).copied().collect();
            return Err(format!("scheduler '{}' has no option '{k}' (known: {}; e.g. model=stw|ac, mapper=3pass|none, abort=on|off, chain_pud=sum|max)", spec.name, all.join(", ")));
        }
    }
    let chain_pud = match spec
        .options
        .iter()
        .rev()
        .find(|(k, _)| k == "chain_pud")
        .map(|(_, v)| v.as_str())
    {
        None | Some("sum") => ChainPud::Sum,
        Some("max") => ChainPud::Max,
        Some(x) => {
            return Err(format!(
                "scheduler '{}': option 'chain_pud': unknown reading '{x}' (known: sum, max)",
                spec.name
            ))
        }
    };
    Ok(Mechanisms {
        abort: switch(spec, "abort")?,
        chains: switch(spec, "chains")?,
        chain_pud,
    })
}

/// Scratch space of [`candidates`], reused by every decision.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    deps: Vec<EntityId>,
    /// (candidate index, EDF key, entity) of each blocked job, by the head of its chain.
    dependents: Vec<(usize, crate::common::key::Key, EntityId)>,
}

/// The global UA policies' first step: abort each tracked job that is [`hopeless`] (so also
/// one whose termination has passed), into `aborts` (one entity per job; none with
/// `abort=off`); then the runnable candidates into `out`, sorted by entity id, each head of a
/// chain with the PUD and PIP deadline its dependents lend it (`mech.chains`, [`ChainPud`]).
pub fn candidates(
    now: Time,
    view: &dyn RunView,
    tracked: &Tracked,
    mech: Mechanisms,
    scratch: &mut Scratch,
    aborts: &mut Vec<EntityId>,
    out: &mut Vec<Candidate>,
) {
    out.clear();
    for &e in tracked.ids() {
        let i = tracked.get(e).expect("listed ids are tracked");
        if mech.abort && hopeless(now, view, i) && !job_aborted(tracked, aborts, e) {
            aborts.push(e);
        }
    }
    for &e in tracked.ids() {
        if tracked.is_blocked(e) || job_aborted(tracked, aborts, e) {
            continue;
        }
        let i = tracked.get(e).expect("listed ids are tracked");
        let rem = remaining(view, i);
        let key = crate::common::key::Key::new(i.deadline, i.release, i);
        // With aborts on, a hopeless job was listed in `aborts` above and skipped here.
        let hopeless = !mech.abort && hopeless(now, view, i);
        out.push(Candidate {
            e,
            key,
            deadline: i.deadline,
            rem,
            pud: pud(view, now, i, &[]),
            pip: i.deadline,
            hopeless,
        });
    }
    out.sort_unstable_by_key(|c| c.e);
    if !mech.chains {
        return;
    }
    let Scratch { deps, dependents } = scratch;
    dependents.clear();
    for &b in tracked.ids() {
        if !tracked.is_blocked(b) || job_aborted(tracked, aborts, b) {
            continue;
        }
        chain(view, b, deps);
        if deps.iter().any(|&d| job_aborted(tracked, aborts, d)) {
            continue;
        }
        let Some(&head) = deps.last() else { continue };
        if let Ok(k) = out.binary_search_by_key(&head, |c| c.e) {
            let bi = tracked.get(b).expect("tracked");
            out[k].pip = out[k].pip.min(bi.deadline);
            match mech.chain_pud {
                ChainPud::Max => {
                    let p = pud(view, now, bi, deps);
                    if p > out[k].pud {
                        out[k].pud = p;
                    }
                }
                ChainPud::Sum => dependents.push((
                    k,
                    crate::common::key::Key::new(bi.deadline, bi.release, bi),
                    b,
                )),
            }
        }
    }
    dependents.sort_unstable_by_key(|x| (x.0, x.1));
    let mut g = 0;
    while g < dependents.len() {
        let k = dependents[g].0;
        let head = tracked.get(out[k].e).expect("candidates are tracked");
        let mut t = now + out[k].rem;
        let mut u = utility_at(view, head, t);
        while g < dependents.len() && dependents[g].0 == k {
            let d = tracked
                .get(dependents[g].2)
                .expect("dependents are tracked");
            t += remaining(view, d);
            u += utility_at(view, d, t);
            g += 1;
        }
        out[k].pud = u / (t - now) as f64;
    }
}

/// The entity of `cycle` to abort to break a deadlock (Clark's rule, DASA and the GUA family
/// alike): the least PUD of its own (without chain), ties to the latest in EDF order.
pub fn least_pud(now: Time, view: &dyn RunView, cycle: &[EntityId]) -> Option<EntityId> {
    cycle
        .iter()
        .filter_map(|&e| {
            view.entity(e).map(|i| {
                (
                    pud(view, now, &i, &[]),
                    crate::common::key::Key::new(i.deadline, i.release, &i),
                    e,
                )
            })
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|x| x.2)
}

/// The build-time check of the policies that assume finishing earlier is never worse (DASA,
/// LBESA): every task's TUF is non-increasing. The error names the file, the task and `tuf`.
pub fn require_non_increasing_tufs(ts: &TaskSet, scheduler: &str) -> Result<(), String> {
    match ts.tasks.iter().find(|t| t.tuf.as_ref().is_some_and(|f| !f.is_non_increasing())) {
        Some(t) => Err(format!(
            "{}: task '{}': field 'tuf': utility rises with later completion; scheduler '{scheduler}' needs non-increasing TUFs (it assumes finishing earlier never earns less)",
            ts.source, t.name
        )),
        None => Ok(()),
    }
}

/// How a per-CPU UA policy (P-DASA, LBESA per CPU) gets its partition (see [`partition`]).
pub const PARTITION: Partitioning = Partitioning {
    bare: true,
    admission: PartitionAdmission::EdfExact,
    own: &["load"],
};

/// The partition of a per-CPU UA policy (P-DASA, LBESA per CPU) and the heuristic that made it:
/// - `partition=load` (also bare `load`): worst fit by utilisation *without admission* —
///   tasks in decreasing utilisation (ties: file order), each to the CPU of least load so far
///   (ties: lowest index). For overloaded sets (ChronOS's load above 1 per CPU), which every
///   admission test refuses;
/// - `partition=NAME` (also bare; any partitioner of `rtsched_analysis::partition`), admitting
///   by the exact EDF test as `pedf` does;
/// - else, on one CPU, every task on CPU 0; on more, the tasks' `cpu` fields.
pub fn partition(
    spec: &SchedulerSpec,
    ctx: &BuildCtx,
) -> Result<(Vec<u32>, Option<String>), String> {
    let ts = ctx.ts;
    match spec.option("partition", &["partition"])? {
        Some(name) if name == "load" => Ok((by_load(ts), Some(name))),
        Some(_) => ctx.partition_labelled(spec, &PARTITION, Admission::EdfExact),
        None if ts.platform.cpus == 1 => Ok((vec![0; ts.tasks.len()], None)),
        None => match ts.tasks.iter().find(|t| t.cpu.is_none()) {
            Some(t) => Err(format!(
                "{}: task '{}': field 'cpu': missing; scheduler '{}' on {} CPUs runs per CPU on a partition: give every task a `cpu` field or choose one with partition=HEURISTIC (e.g. {}:partition=load, or wfd)",
                ts.source, t.name, spec.name, ts.platform.cpus, spec.name
            )),
            None => Ok((ts.tasks.iter().map(|t| t.cpu.unwrap()).collect(), None)),
        },
    }
}

/// Worst fit by utilisation, no admission (see [`partition`]).
pub fn by_load(ts: &TaskSet) -> Vec<u32> {
    let m = ts.platform.cpus.max(1) as usize;
    let u: Vec<f64> = ts
        .tasks
        .iter()
        .map(|t| t.wcet as f64 / t.period.max(1) as f64)
        .collect();
    let mut order: Vec<usize> = (0..u.len()).collect();
    order.sort_by(|&a, &b| u[b].total_cmp(&u[a]).then(a.cmp(&b)));
    let (mut load, mut cpu) = (vec![0.0f64; m], vec![0u32; u.len()]);
    for i in order {
        let c = (0..m)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .expect("m >= 1");
        load[c] += u[i];
        cpu[i] = c as u32;
    }
    cpu
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feasibility_is_cumulative() {
        assert!(feasible(0, [(3, 3), (5, 2)]));
        assert!(!feasible(0, [(3, 3), (4, 2)]));
        assert!(feasible(10, []));
        assert!(!feasible(10, [(12, 3)]));
    }

    #[test]
    fn tracked_adds_removes_and_blocks() {
        let info = |id| EntityInfo {
            id,
            task: 0,
            job: id as u64,
            region: 0,
            thread: 0,
            release: 0,
            deadline: 10,
        };
        let mut t = Tracked::new();
        t.add(&info(3));
        t.add(&info(1));
        t.set_blocked(3, true);
        assert!(t.is_blocked(3) && !t.is_blocked(1) && t.len() == 2);
        t.add(&info(3));
        assert!(
            !t.is_blocked(3) && t.len() == 2,
            "re-adding an id replaces it"
        );
        t.remove(3);
        assert_eq!(t.ids(), &[1]);
        t.remove(3);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn control_switches_default_on_and_refuse_the_unknown() {
        let spec = SchedulerSpec::split;
        assert_eq!(
            check_options(&spec("ggua"), &[]).unwrap(),
            Mechanisms::default()
        );
        let m = check_options(&spec("ggua:model=ac,abort=off"), &[]).unwrap();
        assert!(!m.abort && m.chains);
        assert!(
            !check_options(&spec("nggua:chains=off,shed=off"), &["shed"])
                .unwrap()
                .chains
        );
        assert!(!switch(&spec("nggua:shed=off"), "shed").unwrap());
        let e = check_options(&spec("ggua:shed=off"), &[]).unwrap_err();
        assert!(
            e.contains("'ggua'") && e.contains("no option 'shed'"),
            "{e}"
        );
        let e = check_options(&spec("ggua:abort=maybe"), &[]).unwrap_err();
        assert!(e.contains("'abort'") && e.contains("maybe"), "{e}");
        assert_eq!(
            check_options(&spec("ggua"), &[]).unwrap().chain_pud,
            ChainPud::Sum
        );
        assert_eq!(
            check_options(&spec("nggua:chain_pud=max"), &["shed"])
                .unwrap()
                .chain_pud,
            ChainPud::Max
        );
        let e = check_options(&spec("ggua:chain_pud=mean"), &[]).unwrap_err();
        assert!(
            e.contains("'ggua'")
                && e.contains("'chain_pud'")
                && e.contains("mean")
                && e.contains("sum, max"),
            "{e}"
        );
    }

    /// u = .9, .2, .7, .6 on 2 CPUs: .9→0; .7→1; .6→1 (loads .9, .7); .2→0 (loads .9, 1.3).
    #[test]
    fn load_partition_is_worst_fit_without_admission() {
        let ms = 1_000_000;
        let tasks = [9, 2, 7, 6]
            .iter()
            .enumerate()
            .map(|(i, &c)| Task::periodic(format!("t{i}"), 10 * ms, c * ms))
            .collect();
        assert_eq!(by_load(&TaskSet::new(2, tasks)), vec![0, 0, 1, 1]);
    }
}
