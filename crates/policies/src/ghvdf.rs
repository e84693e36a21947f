//! `ghvdf` — global highest value density first (ChronOS's GHVDF, after Locke's value-density
//! heuristic; not in the paper): the m runnable jobs of highest value density run.
//!
//! Value density = the utility the job earns if it completes after its remaining time
//! (TUF at now + remaining), divided by that remaining time (WCET − executed) — `ua::pud`
//! without a chain. Total order: density (higher first), then EDF's (deadline, release,
//! task, job, thread). A job whose TUF has ended (now > release + X, `ua::termination`; the
//! deadline for a step TUF) is aborted (ChronOS's GHVDF runs `check_task_failure` first; a
//! timer makes it happen then), not earlier: unlike DASA and the GUA family, GHVDF does not
//! judge feasibility. A freed resource goes to its densest waiter (`ua::grant_pending`).
//! TUFs must be non-increasing, as for every UA policy (`ua::require_non_increasing_tufs`).
//! A density changes as a job runs, so it is recomputed at each decision. Defaults
//! `model=stw,mapper=3pass`. Cost: O(n log n) per decision.

use crate::common::global_model::{self, Choice, Choose, GlobalModel, Mapper, Model};
use crate::common::key::Key;
use crate::common::ua::{self, Tracked};
use crate::ctx::BuildCtx;
use crate::policy::{EntityId, Policy, RunView};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::Time;

/// GHVDF's chooser, with its scratch space.
#[derive(Default)]
pub struct Ghvdf {
    scratch: Vec<(f64, Key, EntityId)>,
}

impl Choose for Ghvdf {
    /// The overview's O(n log n).
    fn decision_work(&self, _m: u64, n: u64) -> u64 {
        n.saturating_mul(64 - n.leading_zeros() as u64)
    }
    fn choose(
        &mut self,
        now: Time,
        view: &dyn RunView,
        tracked: &Tracked,
        m: u32,
        out: &mut Choice,
    ) {
        self.scratch.clear();
        for &e in tracked.ids() {
            let i = tracked.get(e).expect("listed ids are tracked");
            if now > ua::termination(view, i) {
                // ChronOS's `check_task_failure`: a job whose TUF has ended is aborted.
                out.abort.push(e);
                continue;
            }
            if tracked.is_blocked(e) {
                continue;
            }
            self.scratch.push((
                ua::pud(view, now, i, &[]),
                Key::new(i.deadline, i.release, i),
                e,
            ));
        }
        self.scratch
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.run
            .extend(self.scratch.iter().take(m as usize).map(|x| x.2));
    }
    fn uses_tufs(&self) -> bool {
        true
    }
    /// The instant just after the earliest termination still ahead: its job is aborted then.
    fn wake(&self, now: Time, view: &dyn RunView, tracked: &Tracked, _m: u32) -> Option<Time> {
        tracked
            .ids()
            .iter()
            .filter_map(|&e| tracked.get(e))
            .map(|i| ua::termination(view, i) + 1)
            .filter(|&t| t > now)
            .min()
    }
    fn grant_by(&self) -> Option<ua::GrantBy> {
        Some(ua::GrantBy::Pud)
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "ghvdf",
    summary: "global highest value density first (utility / remaining time)",
    paper: "ChronOS (GHVDF); Locke's value density",
    options: "model=stw|ac, mapper=3pass|none (default stw, 3pass)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::NonIncreasing,
    resolves_deadlocks: false,
    grants_resources: true,
};

/// `model=`, `mapper=`.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let (model, mapper) =
        global_model::options(spec)?.unwrap_or((Model::StopTheWorld, Mapper::ThreePass));
    ua::require_non_increasing_tufs(ctx.ts, &spec.name)?;
    Ok(Box::new(GlobalModel::new(
        global_model::label("ghvdf", model, mapper),
        Ghvdf::default(),
        ctx.cpus(),
        model,
        mapper,
    )))
}
