//! `nggua` — Non-Greedy Global Utility Accrual (NG-GUA): P. Garyali, M. Dellinger,
//! B. Ravindran, OPODIS 2010; ChronOS §6.1 (whose details the paper leaves to [7] and to
//! ChronOS's `nggua.c`). The deadline-first sibling of G-GUA: it schedules like global EDF
//! (EDF with priority inheritance along dependency chains) until a CPU's share is infeasible,
//! and only then sheds by PUD.
//!
//! Rules, at each decision (a [`Choose`] run under ChronOS's global models, `global_model`):
//! 1. Abort every job that can no longer complete by its TUF's termination (as G-GUA).
//! 2. Runnable jobs (a blocked job represented by the head of its chain, whose PUD it raises,
//!    as G-GUA) are taken in *PIP deadline* order — the least deadline of the job and of every
//!    job waiting on it ("to default to EDF-PIP behavior", `nggua.c`'s `temp_deadline`; ties:
//!    EDF order) — and each appended to the schedule of the least-loaded CPU (load = sum of
//!    remaining times; ties: lower index).
//! 3. Per CPU, while its schedule (in that order) is infeasible (`ua::feasible`, each job by
//!    its own deadline) and holds more than one job, remove its job of lowest PUD (ties: the
//!    latest in EDF order): `create_feasible_schedule` never removes a CPU's densest job. A
//!    lone job left that is hopeless (only with `abort=off`) is removed too. Removed jobs are
//!    not aborted.
//! 4. The heads of the per-CPU schedules are chosen, in the order of step 2.
//! 5. A freed resource goes to its waiter of earliest deadline (`ua::grant_pending`, §3.2).
//!
//! In underload nothing is removed: the first m jobs in EDF order land on m distinct CPUs, so
//! the chosen set is G-EDF's (tests/ua_global.rs checks it job by job).
//!
//! Defaults `model=stw,mapper=3pass`. TUFs must be non-increasing (checked at build).
//! Cost: O(n log n + n·m) to assign, O(n²) per CPU to shed in the worst case.
//! Negative controls (not NG-GUA; for experiments that credit one of its mechanisms):
//! `shed=off` skips step 3 (what remains is G-EDF's choice with step 1's aborts), `abort=off`
//! skips step 1, `chains=off` lends neither PUD nor deadline along chains (`ua::Mechanisms`);
//! `chain_pud=max` reads the chain PUD as G-GUA's option does.

use crate::common::global_model::{self, Choice, Choose, GlobalModel, Mapper, Model};
use crate::common::ua::{self, Candidate, Tracked};
use crate::ctx::BuildCtx;
use crate::policy::{EntityId, Policy, RunView};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::Time;

/// NG-GUA's chooser, with its scratch space.
pub struct Nggua {
    cands: Vec<Candidate>,
    scratch: ua::Scratch,
    sched: Vec<Vec<usize>>,
    load: Vec<Time>,
    heads: Vec<usize>,
    cycle: Vec<EntityId>,
    /// Mechanisms switched off for a negative control (`abort=off`, `chains=off`).
    mech: ua::Mechanisms,
    /// Step 3 (`shed=off` skips it: a negative control, G-EDF with the UA aborts).
    shed: bool,
}

impl Default for Nggua {
    fn default() -> Self {
        Nggua {
            cands: Vec::new(),
            scratch: ua::Scratch::default(),
            sched: Vec::new(),
            load: Vec::new(),
            heads: Vec::new(),
            cycle: Vec::new(),
            mech: ua::Mechanisms::default(),
            shed: true,
        }
    }
}

impl Choose for Nggua {
    /// The overview's cost: n·m to assign, n² a CPU to shed (the n log n sort is below them).
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        n.saturating_mul(m)
            .saturating_add(m.saturating_mul(n).saturating_mul(n))
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
        self.cands.sort_unstable_by_key(|c| (c.pip, c.key));
        let m = m as usize;
        self.sched.resize_with(m, Vec::new);
        self.sched.iter_mut().for_each(Vec::clear);
        self.load.clear();
        self.load.resize(m, 0);
        for j in 0..self.cands.len() {
            let c = (0..m).min_by_key(|&c| (self.load[c], c)).expect("m >= 1");
            self.sched[c].push(j);
            self.load[c] += self.cands[j].rem;
        }
        let cands = &self.cands;
        if self.shed {
            for s in self.sched.iter_mut() {
                while s.len() > 1
                    && !ua::feasible(now, s.iter().map(|&i| (cands[i].deadline, cands[i].rem)))
                {
                    let worst = (0..s.len())
                        .min_by(|&a, &b| {
                            cands[s[a]]
                                .pud
                                .total_cmp(&cands[s[b]].pud)
                                .then(cands[s[b]].key.cmp(&cands[s[a]].key))
                        })
                        .expect("an infeasible schedule is not empty");
                    s.remove(worst);
                }
                if s.len() == 1 && cands[s[0]].hopeless {
                    s.clear();
                }
            }
        }
        // The heads in step 2's order (candidate indices are in it).
        self.heads.clear();
        self.heads
            .extend(self.sched.iter().filter_map(|s| s.first().copied()));
        self.heads.sort_unstable();
        out.run.extend(self.heads.iter().map(|&i| self.cands[i].e));
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
        Some(ua::GrantBy::Deadline)
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "nggua",
    summary: "non-greedy global utility accrual (EDF to least-loaded CPUs, shed lowest PUD, aborts)",
    paper: "ChronOS §6.1; Garyali et al. OPODIS 2010 (NG-GUA)",
    options: "model=stw|ac, mapper=3pass|none (default stw, 3pass); chain_pud=sum|max (as ggua); negative controls (each mechanism is on unless switched off): shed=off (no step 3), abort=off (no abort of hopeless jobs), chains=off (neither PUD nor deadline lent along dependency chains)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: true,
    grants_resources: true,
};

/// `model=`, `mapper=`, `chain_pud=`; the controls `shed=`, `abort=`, `chains=` (on|off, default on).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let mech = ua::check_options(spec, &["shed"])?;
    let shed = ua::switch(spec, "shed")?;
    let (model, mapper) =
        global_model::read(spec)?.unwrap_or((Model::StopTheWorld, Mapper::ThreePass));
    ua::require_non_increasing_tufs(ctx.ts, &spec.name)?;
    let mut label = global_model::label("nggua", model, mapper);
    for (on, key) in [
        (shed, "shed"),
        (mech.abort, "abort"),
        (mech.chains, "chains"),
    ] {
        if !on {
            label.push_str(&format!(",{key}=off"));
        }
    }
    if mech.chain_pud == ua::ChainPud::Max {
        label.push_str(",chain_pud=max");
    }
    Ok(Box::new(GlobalModel::new(
        label,
        Nggua {
            mech,
            shed,
            ..Nggua::default()
        },
        ctx.cpus(),
        model,
        mapper,
    )))
}
