//! `ggua` — Greedy Global Utility Accrual (G-GUA): P. Garyali, M. Dellinger, B. Ravindran,
//! "On best-effort utility accrual real-time scheduling on multiprocessors", OPODIS 2010;
//! ChronOS §6.1 ("For brevity, the details of the algorithms have been omitted": where the
//! paper is silent, ChronOS's `ggua.c`). A best-effort global scheduler for overloads: it keeps
//! what earns the most utility per unit of time and still meets deadlines, and aborts what
//! cannot earn any more.
//!
//! Rules, at each decision (a [`Choose`] run under ChronOS's global models, `global_model`):
//! 1. Abort every job that can no longer complete by its TUF's termination (`ua::hopeless`:
//!    now + remaining > release + X; remaining = WCET − executed, as a kernel estimates it).
//!    A timer fires when a waiting job becomes so (`ua::hopeless_at`).
//! 2. Weigh each runnable job by its potential utility density (PUD, `ua::pud`). A blocked
//!    job is represented by the head of its dependency chain (the "zero in-degree" job,
//!    ChronOS Fig 3): the head's PUD is that of itself and every job waiting on it, summed
//!    (ChronOS's `agg_util` / `agg_left`; `chain_pud=max`: the larger of its own and each
//!    single chain's, `ua::ChainPud`).
//! 3. In decreasing PUD (ties: EDF order), insert each job into the deadline-ordered
//!    tentative schedule of one CPU: the least-loaded one (load = sum of remaining times;
//!    ties: lower index) where that schedule stays feasible (`ua::feasible`: each job by its
//!    deadline), trying CPUs in increasing load (`find_processor_ex`). A job feasible on no
//!    CPU is dropped from this decision (not aborted).
//! 4. The head of each CPU's schedule is chosen; a CPU whose schedule is empty takes the
//!    densest dropped job that is not hopeless (ours: ChronOS's step TUFs end at the deadline,
//!    so there a job infeasible alone is aborted; a TUF that outlives its deadline still pays).
//!    The chosen list is ordered by EDF.
//! 5. A freed resource goes to its waiter of highest PUD (`ua::grant_pending`, ChronOS §3.2).
//!
//! Deadlocks: the job of least PUD in the cycle is aborted (`ua::least_pud`).
//!
//! Defaults `model=stw,mapper=3pass` (ChronOS runs G-GUA stop-the-world). TUFs must be
//! non-increasing (checked at build). Cost: O(n log n + n·m·(m + n)) per decision.
//! Negative controls (not G-GUA; for experiments that credit one of its mechanisms):
//! `abort=off` skips step 1 (a hopeless job is then dropped by step 3's feasibility test, not
//! aborted), `chains=off` skips step 2's lending along chains (`ua::Mechanisms`).

use crate::common::global_model::{self, Choice, Choose, GlobalModel, Mapper, Model};
use crate::common::ua::{self, Candidate, Tracked};
use crate::ctx::BuildCtx;
use crate::policy::{EntityId, Policy, RunView};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::Time;

/// G-GUA's chooser, with its scratch space.
#[derive(Default)]
pub struct Ggua {
    cands: Vec<Candidate>,
    scratch: ua::Scratch,
    /// Per candidate: whether a CPU's schedule holds it.
    placed: Vec<bool>,
    /// Per CPU: its tentative schedule (candidate indices in EDF order) and load.
    sched: Vec<Vec<usize>>,
    load: Vec<Time>,
    by_load: Vec<u32>,
    heads: Vec<usize>,
    /// A deadlock cycle to break at the next decision.
    cycle: Vec<EntityId>,
    /// Mechanisms switched off for a negative control (`abort=off`, `chains=off`).
    mech: ua::Mechanisms,
}

impl Ggua {
    /// Whether CPU `c`'s schedule stays feasible with candidate `j` inserted; inserts it if so.
    fn try_insert(&mut self, now: Time, c: usize, j: usize) -> bool {
        let cands = &self.cands;
        let s = &mut self.sched[c];
        let at = s.partition_point(|&i| cands[i].key < cands[j].key);
        s.insert(at, j);
        if ua::feasible(now, s.iter().map(|&i| (cands[i].deadline, cands[i].rem))) {
            self.load[c] += cands[j].rem;
            true
        } else {
            s.remove(at);
            false
        }
    }
}

/// The head of each CPU's schedule (candidate indices), chosen in EDF order.
fn heads_in_edf_order(
    sched: &[Vec<usize>],
    cands: &[Candidate],
    heads: &mut Vec<usize>,
    out: &mut Choice,
) {
    heads.clear();
    heads.extend(sched.iter().filter_map(|s| s.first().copied()));
    heads.sort_unstable_by_key(|&i| cands[i].key);
    out.run.extend(heads.iter().map(|&i| cands[i].e));
}

impl Choose for Ggua {
    /// The overview's cost: n·m·(m + n) (the n log n sort is below it).
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        n.saturating_mul(m).saturating_mul(m.saturating_add(n))
    }
    fn choose(
        &mut self,
        now: Time,
        view: &dyn RunView,
        tracked: &Tracked,
        m: u32,
        out: &mut Choice,
    ) {
        if let Some(e) = ua::least_pud(now, view, &self.cycle) {
            out.abort.push(e);
        }
        self.cycle.clear();
        ua::candidates(
            now,
            view,
            tracked,
            self.mech,
            &mut self.scratch,
            &mut out.abort,
            &mut self.cands,
        );
        self.cands
            .sort_unstable_by(|a, b| b.pud.total_cmp(&a.pud).then(a.key.cmp(&b.key)));
        let m = m as usize;
        self.sched.resize_with(m, Vec::new);
        self.sched.iter_mut().for_each(Vec::clear);
        self.load.clear();
        self.load.resize(m, 0);
        for j in 0..self.cands.len() {
            self.by_load.clear();
            self.by_load.extend(0..m as u32);
            let load = &self.load;
            self.by_load.sort_by_key(|&c| (load[c as usize], c));
            for k in 0..m {
                let c = self.by_load[k] as usize;
                if self.try_insert(now, c, j) {
                    break;
                }
            }
        }
        // Step 4: an empty schedule takes the densest dropped job that can still earn.
        self.placed.clear();
        self.placed.resize(self.cands.len(), false);
        for s in &self.sched {
            for &j in s {
                self.placed[j] = true;
            }
        }
        let mut next = 0;
        for c in 0..m {
            if !self.sched[c].is_empty() {
                continue;
            }
            while next < self.cands.len() && (self.placed[next] || self.cands[next].hopeless) {
                next += 1;
            }
            if next == self.cands.len() {
                break;
            }
            self.placed[next] = true;
            self.sched[c].push(next);
        }
        heads_in_edf_order(&self.sched, &self.cands, &mut self.heads, out);
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
    fn wake(&self, now: Time, view: &dyn RunView, tracked: &Tracked, m: u32) -> Option<Time> {
        if !self.mech.abort {
            return None;
        }
        ua::next_hopeless(now, view, tracked, |e| {
            (0..m).any(|c| view.running(c) == Some(e))
        })
    }
    fn grant_by(&self) -> Option<ua::GrantBy> {
        Some(ua::GrantBy::Pud)
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "ggua",
    summary: "greedy global utility accrual (PUD order, per-CPU feasible EDF schedules, aborts)",
    paper: "ChronOS §6.1; Garyali et al. OPODIS 2010 (G-GUA)",
    options: "model=stw|ac, mapper=3pass|none (default stw, 3pass); chain_pud=sum|max (a chain head's PUD: all its dependents summed, ChronOS's, the default; or the best single chain); negative controls (each mechanism is on unless switched off): abort=off (no abort of hopeless jobs), chains=off (no PUD lent along dependency chains)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: true,
    grants_resources: true,
};

/// `model=`, `mapper=`, `chain_pud=`; the controls `abort=`, `chains=` (on|off, default on).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let mech = ua::check_options(spec, &[])?;
    let (model, mapper) =
        global_model::read(spec)?.unwrap_or((Model::StopTheWorld, Mapper::ThreePass));
    ua::require_non_increasing_tufs(ctx.ts, &spec.name)?;
    let mut label = global_model::label("ggua", model, mapper);
    for (on, key) in [(mech.abort, "abort"), (mech.chains, "chains")] {
        if !on {
            label.push_str(&format!(",{key}=off"));
        }
    }
    if mech.chain_pud == ua::ChainPud::Max {
        label.push_str(",chain_pud=max");
    }
    Ok(Box::new(GlobalModel::new(
        label,
        Ggua {
            mech,
            ..Ggua::default()
        },
        ctx.cpus(),
        model,
        mapper,
    )))
}
