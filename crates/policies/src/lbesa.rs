//! `lbesa` — Locke's Best-Effort Scheduling Algorithm (C. D. Locke, *Best-Effort Decision
//! Making for Real-Time Scheduling*, CMU-CS-86-134, 1986; ChronOS's single-core LBESA):
//! EDF while it can meet every deadline, and under overload shed the jobs of least value
//! density until it can. Uniprocessor; per CPU on a partition when m > 1.
//!
//! At each decision, for the ready and running jobs of each CPU:
//! 1. **Abort the hopeless.** A job that can no longer finish by its TUF's termination (now +
//!    remaining > release + X, `ua::hopeless`; remaining = WCET − executed; X = the deadline
//!    for a step TUF) is aborted — blocked ones too, which frees what they hold — at that very
//!    instant: a timer is set for the next job to become so (`ua::hopeless_at`). Best-effort
//!    policies abort on their own (docs/semantics.md), whatever `on_miss` says; ChronOS's
//!    `check_task_failure` does so before each decision.
//! 2. **Schedule** the jobs in EDF order (deadline, release, task, job, thread).
//! 3. **Shed.** While the schedule is infeasible (`ua::feasible`: run back to back from now,
//!    some job finishes after its deadline) and holds more than one job, remove from it the
//!    job of least *value density*: its utility at its expected completion (now + remaining)
//!    per ns of remaining time (ties: the later EDF order goes first). ChronOS's `sched_lbesa`
//!    never unlinks the densest job, so a job whose TUF outlives its deadline still runs
//!    alone. A shed job is not aborted — it can still earn (step 1 took those that cannot) —
//!    only not run now; the next decision reconsiders it.
//! 4. **Dispatch** the head of what is left (never empty while a job is ready).
//! 5. **Freed resources** go to the waiter first in EDF order (`ua::grant_pending`; ChronOS
//!    §3.2: the scheduling algorithm picks who gets a released resource).
//!
//! No dependency awareness otherwise: a blocked job leaves the schedule until it is handed the
//! resource. TUFs must be non-increasing (the build refuses others).
//! Partition as DASA (`ua::partition`): none on one CPU; else `cpu` fields or
//! `partition=HEURISTIC` (`load` for overload). Complexity: O(n log n) for the EDF order plus
//! O(n²) for shedding (at most n removals, each an O(n) feasibility check) per CPU and
//! decision; no allocation once the scratch vectors have grown.

use crate::common::ua::{self, Tracked};
use crate::common::{Key, Order};
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy, RunView};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::Time;

/// A job of the schedule.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: Key,
    e: EntityId,
    deadline: Time,
    remaining: Time,
    /// Value density: utility at now + remaining, per remaining ns.
    density: f64,
}

pub struct Lbesa {
    label: String,
    cpus: u32,
    cpu_of_task: Vec<u32>,
    jobs: Tracked,
    /// The timer for the next job to become hopeless.
    alarm: ua::Alarm,
    /// Scratch, reused by every decision.
    schedule: Vec<Slot>,
    pending: Vec<crate::policy::ResourceId>,
}

impl Lbesa {
    pub fn new(label: String, cpus: u32, cpu_of_task: Vec<u32>) -> Self {
        Lbesa {
            label,
            cpus,
            cpu_of_task,
            jobs: Tracked::new(),
            alarm: ua::Alarm::default(),
            schedule: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Steps 2–4 for `cpu`: the job it should run.
    fn decide(&mut self, now: Time, view: &dyn RunView, cpu: u32) -> Option<EntityId> {
        self.schedule.clear();
        for &e in self.jobs.ids() {
            let info = self.jobs.get(e).expect("listed ids are tracked");
            if self.cpu_of_task[info.task as usize] != cpu || self.jobs.is_blocked(e) {
                continue;
            }
            let remaining = ua::remaining(view, info);
            let density = ua::pud(view, now, info, &[]);
            self.schedule.push(Slot {
                key: EdfOrder.key(info),
                e,
                deadline: info.deadline,
                remaining,
                density,
            });
        }
        self.schedule.sort_by_key(|s| s.key);
        while self.schedule.len() > 1
            && !ua::feasible(now, self.schedule.iter().map(|s| (s.deadline, s.remaining)))
        {
            let least = (0..self.schedule.len())
                .min_by(|&a, &b| {
                    let (a, b) = (&self.schedule[a], &self.schedule[b]);
                    a.density.total_cmp(&b.density).then(b.key.cmp(&a.key))
                })
                .expect("a schedule of two or more jobs");
            self.schedule.remove(least);
        }
        self.schedule.first().map(|s| s.e)
    }
}

impl Policy for Lbesa {
    fn name(&self) -> String {
        self.label.clone()
    }
    /// The overview's O(n²) per CPU to shed.
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
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        let view = d.run();
        self.jobs.prune(view);
        ua::grant_pending(
            now,
            view,
            &mut self.jobs,
            ua::GrantBy::Deadline,
            &mut self.pending,
            d,
        );
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
    name: "lbesa",
    summary: "LBESA: EDF that sheds the least value-density jobs under overload, with aborts (uniprocessor; per CPU on a partition when m > 1)",
    paper: "Locke 1986 (CMU-CS-86-134), ChronOS LBESA",
    options: "partition=NAME, or bare lbesa:NAME (load: worst fit without admission, for overload; or any pedf partitioner); needed on m > 1 unless tasks have `cpu` fields",
    partition: Some(ua::PARTITION),
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: false,
    grants_resources: true,
};

/// `partition=NAME` (also bare), else the tasks' `cpu` fields (none needed on one CPU).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    ua::require_non_increasing_tufs(ctx.ts, &spec.name)?;
    let (p, how) = ua::partition(spec, ctx)?;
    let label = how.map_or(spec.name.clone(), |h| format!("{}:{h}", spec.name));
    Ok(Box::new(Lbesa::new(label, ctx.cpus(), p)))
}
