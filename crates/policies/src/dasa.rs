//! `dasa` / `pdasa` — Clark's Dependent Activity Scheduling Algorithm (R. K. Clark,
//! *Scheduling Dependent Real-Time Activities*, CMU-CS-90-155, 1990; ChronOS §5 "P-DASA"):
//! a uniprocessor utility-accrual scheduler aware of resource dependencies, run per CPU on a
//! partition when m > 1.
//!
//! At each decision, for the jobs of each CPU (ready, running and blocked: `ua::Tracked`):
//! 1. **Deadlock.** If the ledger reported a cycle, abort the job of the cycle's entity with
//!    the least potential utility density of its own (utility at now + remaining, per
//!    remaining; ties: the later EDF order — latest deadline first; `ua::least_pud`), and
//!    decide again.
//! 2. **Abort the hopeless.** A job that can no longer finish by its TUF's termination (now +
//!    remaining > release + X, `ua::hopeless`; remaining = WCET − executed; X = the deadline
//!    for a step TUF) is aborted, blocked or not, at that very instant: a timer is set for the
//!    next job to become so (`ua::hopeless_at`). Best-effort policies abort on their own
//!    (docs/semantics.md), whatever `on_miss` says.
//! 3. **PUD.** Each job's dependency chain (the holder of what it waits for, its holder, ...:
//!    `ua::chain`) and its potential utility density over the chain (`ua::pud`).
//! 4. **Tentative schedule.** Jobs in decreasing PUD (ties: EDF order — deadline, release,
//!    task, job, thread) are inserted, each *with its chain*, into a schedule kept in deadline
//!    order; a holder goes before its dependent and inherits the dependent's deadline when that
//!    is earlier (deadline inheritance). A job already placed as a holder is not inserted
//!    again. The insertion is kept if every job of the schedule, run back to back from now,
//!    still completes by its own deadline — Clark's critical time (`ua::feasible`) — else
//!    undone.
//! 5. **Dispatch** the first runnable (not blocked) job of the schedule. If none is runnable,
//!    run the highest-PUD runnable job, or the runnable local end of its chain (ChronOS's
//!    `sched_dasa` returns its best-density job when its schedule is empty: an idle CPU earns
//!    nothing; so a job whose TUF outlives its deadline still runs there); with nothing
//!    runnable, idle.
//! 6. **Freed resources** go to the waiter of highest PUD (`ua::grant_pending`; ChronOS §3.2:
//!    the scheduling algorithm picks who gets a released resource).
//!
//! In underload every insertion is feasible, the schedule is all jobs in deadline order and
//! DASA is EDF (Clark §3; tested job by job).
//!
//! **Partition** (`ua::partition`): on one CPU none is needed; on m > 1 the tasks' `cpu` fields
//! or `partition=HEURISTIC` (`load`: worst fit by utilisation without admission, for overload;
//! or any `pedf` partitioner, admitted by the exact EDF test). `dasa` and `pdasa` are the same
//! policy. **A chain that crosses CPUs** (a job blocked on a holder of another CPU's
//! partition): only its local part — up to the first remote holder — counts for the PUD and is
//! placed in the local schedule; the remote holder is its own CPU's business (the local
//! schedule is then optimistic: it assumes the remote holder releases in time).
//!
//! TUFs must be non-increasing (the build refuses others): DASA assumes finishing earlier is
//! never worse. Complexity: O(n²) per CPU and decision for n jobs (n insertions, each an O(n)
//! copy and feasibility check), plus O(n log n) for the PUD order; no allocation once the
//! scratch vectors have grown.

use crate::common::ua::{self, Tracked};
use crate::common::{Key, Order};
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy, RunView};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::Time;

/// A job of the tentative schedule.
#[derive(Clone, Copy, Debug)]
struct Slot {
    e: EntityId,
    /// Its deadline in the schedule: its own, or a dependent's earlier one (inheritance).
    inherited: Time,
    key: Key,
    /// Its own absolute deadline (what feasibility checks).
    deadline: Time,
    remaining: Time,
}

/// A job of this CPU in PUD order: blocked ones included, its PUD over its own chain (unlike
/// `ua::Candidate`, a runnable job that stands for the chains ending at it).
#[derive(Clone, Copy, Debug)]
struct Ranked {
    pud: f64,
    key: Key,
    e: EntityId,
}

pub struct Dasa {
    label: String,
    cpus: u32,
    cpu_of_task: Vec<u32>,
    jobs: Tracked,
    /// The deadlock the ledger reported, to break in the next `schedule`.
    cycle: Vec<EntityId>,
    /// The timer for the next job to become hopeless.
    alarm: ua::Alarm,
    // Scratch, reused by every decision.
    candidates: Vec<Ranked>,
    pending: Vec<crate::policy::ResourceId>,
    chain: Vec<EntityId>,
    schedule: Vec<Slot>,
    tentative: Vec<Slot>,
}

impl Dasa {
    pub fn new(label: String, cpus: u32, cpu_of_task: Vec<u32>) -> Self {
        Dasa {
            label,
            cpus,
            cpu_of_task,
            jobs: Tracked::new(),
            cycle: Vec::new(),
            alarm: ua::Alarm::default(),
            candidates: Vec::new(),
            pending: Vec::new(),
            chain: Vec::new(),
            schedule: Vec::new(),
            tentative: Vec::new(),
        }
    }

    fn local(&self, info: &EntityInfo, cpu: u32) -> bool {
        self.cpu_of_task[info.task as usize] == cpu
    }

    /// `e`'s chain on `cpu` (into `self.chain`): `ua::chain` cut at the first holder that is
    /// not a tracked job of this CPU.
    fn local_chain(&mut self, view: &dyn RunView, e: EntityId, cpu: u32) {
        ua::chain(view, e, &mut self.chain);
        let cut = self
            .chain
            .iter()
            .position(|&h| !self.jobs.get(h).is_some_and(|i| self.local(i, cpu)));
        if let Some(k) = cut {
            self.chain.truncate(k);
        }
    }

    /// Place `e` in the tentative schedule before index `limit` with a deadline of at most
    /// `want` (inheritance), keeping deadline order where the limit allows; its index.
    fn place(&mut self, view: &dyn RunView, e: EntityId, want: Time, mut limit: usize) -> usize {
        let t = &mut self.tentative;
        let mut slot = match t.iter().position(|s| s.e == e) {
            Some(i) if i < limit && t[i].inherited <= want => return i,
            Some(i) => {
                if i < limit {
                    limit -= 1;
                }
                t.remove(i)
            }
            None => {
                let info = *self.jobs.get(e).expect("chains hold tracked jobs");
                Slot {
                    e,
                    inherited: info.deadline,
                    key: EdfOrder.key(&info),
                    deadline: info.deadline,
                    remaining: ua::remaining(view, &info),
                }
            }
        };
        slot.inherited = slot.inherited.min(want);
        let by_deadline = t
            .iter()
            .position(|s| (slot.inherited, slot.key) < (s.inherited, s.key))
            .unwrap_or(t.len());
        let at = by_deadline.min(limit);
        t.insert(at, slot);
        at
    }

    /// Steps 3–5 for `cpu`: the job it should run.
    fn decide(&mut self, now: Time, view: &dyn RunView, cpu: u32) -> Option<EntityId> {
        self.candidates.clear();
        for k in 0..self.jobs.len() {
            let e = self.jobs.ids()[k];
            let info = *self.jobs.get(e).expect("listed ids are tracked");
            if !self.local(&info, cpu) {
                continue;
            }
            self.local_chain(view, e, cpu);
            let pud = ua::pud(view, now, &info, &self.chain);
            self.candidates.push(Ranked {
                pud,
                key: EdfOrder.key(&info),
                e,
            });
        }
        self.candidates
            .sort_by(|a, b| b.pud.total_cmp(&a.pud).then(a.key.cmp(&b.key)));

        self.schedule.clear();
        for c in 0..self.candidates.len() {
            let e = self.candidates[c].e;
            if self.schedule.iter().any(|s| s.e == e) {
                continue;
            }
            self.tentative.clear();
            self.tentative.extend_from_slice(&self.schedule);
            let own = self.jobs.get(e).expect("candidates are tracked").deadline;
            let mut at = self.place(view, e, own, self.tentative.len());
            self.local_chain(view, e, cpu);
            for k in 0..self.chain.len() {
                let want = self.tentative[at].inherited;
                at = self.place(view, self.chain[k], want, at);
            }
            if ua::feasible(
                now,
                self.tentative.iter().map(|s| (s.deadline, s.remaining)),
            ) {
                std::mem::swap(&mut self.schedule, &mut self.tentative);
            }
        }
        if let Some(s) = self.schedule.iter().find(|s| !self.jobs.is_blocked(s.e)) {
            return Some(s.e);
        }
        // Nothing of the schedule can run: the best-density job that can, or the runnable
        // local end of its chain.
        for c in 0..self.candidates.len() {
            let e = self.candidates[c].e;
            self.local_chain(view, e, cpu);
            let end = self.chain.last().copied().unwrap_or(e);
            if !self.jobs.is_blocked(end) {
                return Some(end);
            }
        }
        None
    }

    /// Step 1: abort the cycle's job of least own PUD (`ua::least_pud`).
    fn break_deadlock(&mut self, now: Time, view: &dyn RunView, d: &mut Dispatch) {
        if let Some(e) = ua::least_pud(now, view, &self.cycle) {
            d.abort(e);
        }
        self.cycle.clear();
    }
}

impl Policy for Dasa {
    fn name(&self) -> String {
        self.label.clone()
    }
    /// The overview's O(n²) per CPU and decision.
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        m.saturating_mul(n).saturating_mul(n).saturating_add(m)
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        self.jobs.add(e);
    }
    fn complete(&mut self, _now: Time, e: EntityId, _cpu: u32) {
        self.jobs.remove(e);
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        self.jobs.remove(e);
    }
    fn blocked(&mut self, _now: Time, e: EntityId, _cpu: u32) {
        self.jobs.set_blocked(e, true);
    }
    fn unblocked(&mut self, _now: Time, e: &EntityInfo) {
        self.jobs.add(e);
    }
    fn requested(
        &mut self,
        _now: Time,
        e: EntityId,
        r: crate::policy::ResourceId,
        _holder: Option<EntityId>,
    ) {
        self.jobs.set_waiting(e, r);
    }
    fn grants_resources(&self) -> bool {
        true
    }
    fn timer(&mut self, now: Time) {
        self.alarm.fired(now);
    }
    fn uses_tufs(&self) -> bool {
        true
    }
    fn resolves_deadlocks(&self) -> bool {
        true
    }
    fn deadlock(&mut self, _now: Time, cycle: &[EntityId]) {
        self.cycle.clear();
        self.cycle.extend_from_slice(cycle);
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        let view = d.run();
        self.jobs.prune(view);
        ua::grant_pending(
            now,
            view,
            &mut self.jobs,
            ua::GrantBy::Pud,
            &mut self.pending,
            d,
        );
        if !self.cycle.is_empty() {
            // The ledger calls `schedule` again at this instant, after the abort.
            return self.break_deadlock(now, view, d);
        }
        if ua::abort_hopeless(now, view, &self.jobs, d) {
            // The ledger calls `schedule` again at this instant, after the aborts.
            return;
        }
        for cpu in 0..self.cpus {
            let run = self.decide(now, view, cpu);
            if d.current(cpu) != run {
                d.assign(cpu, run);
            }
        }
        let cpus = self.cpus;
        let at = ua::next_hopeless(now, view, &self.jobs, |e| {
            (0..cpus).any(|c| d.current(c) == Some(e))
        });
        self.alarm.arm(now, at, d);
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "dasa",
    summary: "DASA: utility accrual with dependencies, aborts and deadlock resolution (uniprocessor; per CPU on a partition when m > 1)",
    paper: "Clark 1990 (CMU-CS-90-155), ChronOS P-DASA",
    options: "partition=NAME, or bare dasa:NAME (load: worst fit without admission, for overload; or any pedf partitioner); needed on m > 1 unless tasks have `cpu` fields",
    partition: Some(ua::PARTITION),
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: true,
    grants_resources: true,
};

pub const INFO_PARTITIONED: PolicyInfo = PolicyInfo {
    name: "pdasa",
    summary: "P-DASA: DASA per CPU on a partition (the same policy as dasa)",
    paper: "ChronOS P-DASA, Clark 1990",
    options: "partition=NAME, or bare pdasa:NAME (load, or any pedf partitioner); else the tasks' `cpu` fields",
    partition: Some(ua::PARTITION),
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: true,
    grants_resources: true,
};

/// `partition=NAME` (also bare), else the tasks' `cpu` fields (none needed on one CPU).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    ua::require_non_increasing_tufs(ctx.ts, &spec.name)?;
    let (p, how) = ua::partition(spec, ctx)?;
    let label = how.map_or(spec.name.clone(), |h| format!("{}:{h}", spec.name));
    Ok(Box::new(Dasa::new(label, ctx.cpus(), p)))
}
