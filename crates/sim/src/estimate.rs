//! How much work a run will be, known before it starts: the job limit bounds a run's memory,
//! this bounds its time. A run's time is not its jobs alone: a 1 ns scheduler tick makes a
//! billion tick events a second on every CPU, and PAWS's free CPUs each look through every
//! other CPU's queue at a decision (m² steps on m CPUs). The estimate counts
//!
//! - decisions: per job its release, each of its threads' completions and each critical
//!   section's block and wake-up; per tick instant (the policy's tick, the overhead model's
//!   tick and its real-time throttling) one more;
//! - steps: each decision costs [`DECISION_BASE`] plus what the policy says one costs on m CPUs
//!   with its threads ready ([`Policy::decision_work`]), each tick event on a CPU one step.
//!
//! It is an order of magnitude, not a prediction: its purpose is to refuse, with the numbers,
//! a run that would take hours, as the job limit refuses one that would take 200 GB.

use crate::SimError;
use rtsched_model::{TaskSet, Time};
use rtsched_policies::Policy;

/// Steps of a decision that do not grow with m or n (the event queue, the ledger's
/// bookkeeping): about 50 ns here, where one step of a policy's scan is about 1 ns.
pub const DECISION_BASE: u64 = 50;

/// The steps a run may take by default: about 20-60 s of simulation on this project's 2-CPU
/// test machine (see docs/hardening.md); `--max-work` / `max_work=` raise it.
pub const DEFAULT_MAX_WORK: u64 = 20_000_000_000;

/// What a run of a task set under a policy will take, counted before it starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Scheduling decisions (job events and tick instants).
    pub decisions: u64,
    /// Tick events: per-CPU ticks of the policy and of the overhead model.
    pub ticks: u64,
    /// Steps one decision takes ([`DECISION_BASE`] + the policy's [`Policy::decision_work`]).
    pub per_decision: u64,
    /// `decisions × per_decision + ticks`, saturating.
    pub steps: u64,
    /// The threads that can be ready at once (one job of each task), the `n` of the policy's cost.
    pub threads: u64,
}

/// Tick events of one periodic source on every CPU over the window: (instants, events).
fn ticks(window: Time, period: Time, m: u64) -> (u64, u64) {
    let instants = window / period.max(1);
    (instants, instants.saturating_mul(m))
}

/// The estimate of a run of `ts` (its window, CPUs and overhead model) under `policy`.
pub fn estimate(ts: &TaskSet, policy: &dyn Policy) -> Estimate {
    let window = ts.run.duration;
    let m = ts.platform.cpus as u64;
    let mut decisions = 0u64;
    let mut threads = 0u64;
    for t in &ts.tasks {
        let width: u64 = t
            .regions
            .iter()
            .map(|r| r.threads.len() as u64)
            .sum::<u64>()
            .max(1);
        threads = threads.saturating_add(width);
        let per_job = 1 + width + 2 * t.sections.len() as u64;
        decisions = decisions.saturating_add(t.jobs_released_by(window).saturating_mul(per_job));
    }
    let mut tick_events = 0u64;
    let mut add = |(instants, events): (u64, u64)| {
        decisions = decisions.saturating_add(instants);
        tick_events = tick_events.saturating_add(events);
    };
    if let Some(q) = policy.tick_interval() {
        add(ticks(window, q, m));
    }
    let o = &ts.run.overheads;
    if o.tick > 0 {
        add(ticks(window, o.tick_period, m));
    }
    if o.throttles() {
        add(ticks(window, o.tick_period, m));
    }
    let per_decision = DECISION_BASE.saturating_add(policy.decision_work(m, threads));
    Estimate {
        decisions,
        ticks: tick_events,
        per_decision,
        steps: decisions
            .saturating_mul(per_decision)
            .saturating_add(tick_events),
        threads,
    }
}

/// [`estimate`] for a scheduler spec (`gedf`, `cfs:tick=1ms`), building the policy as a run
/// would; its errors are the build's, as a run gives them ([`SimError::Unplaced`],
/// [`SimError::Input`]).
pub fn estimate_spec(ts: &TaskSet, spec: &str) -> Result<Estimate, SimError> {
    let p = rtsched_policies::build_for(spec, ts).map_err(SimError::from)?;
    Ok(estimate(ts, p.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::file::{parse_taskset, Format};

    fn set(text: &str) -> TaskSet {
        parse_taskset(text, Format::Yaml, "e.yaml").unwrap()
    }

    #[test]
    fn decisions_count_job_events_and_tick_instants() {
        // 1 s: a releases 100 jobs of 3 threads (1 + 3 decisions each), b 50 jobs with one
        // section (1 + 1 + 2 each).
        let ts = set("platform: {cpus: 2}\nrun: {duration: 1s}\ntasks:\n  - {name: a, period: 10, regions: [1, [1, 1]]}\n  - {name: b, period: 20, wcet: 2, sections: [{resource: r, start: 0, length: 1}]}\n");
        let e = estimate_spec(&ts, "gedf").unwrap();
        assert_eq!(e.decisions, 100 * 4 + 50 * 4);
        assert_eq!((e.ticks, e.threads), (0, 4));
        assert_eq!(e.per_decision, DECISION_BASE + 2 + 4);
        assert_eq!(e.steps, e.decisions * e.per_decision);
        // cfs ticks every 1 ms on both CPUs: 1,000 more decisions, 2,000 tick events.
        let c = estimate_spec(&ts, "cfs").unwrap();
        assert_eq!((c.decisions - e.decisions, c.ticks), (1000, 2000));
        // A 1 ns tick: a billion instants a second on each CPU, far past the default limit.
        let fine = estimate_spec(&ts, "cfs:tick=1ns").unwrap();
        assert_eq!(fine.ticks, 2_000_000_000);
        assert!(fine.steps > DEFAULT_MAX_WORK, "{fine:?}");
        // The overhead model's tick counts the same way.
        let oh = set("platform: {cpus: 2}\nrun: {duration: 1s, overheads: {tick: 1us, tick_period: 1ns}}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n");
        assert!(estimate_spec(&oh, "gedf").unwrap().steps > DEFAULT_MAX_WORK);
    }

    #[test]
    fn a_policy_whose_cost_grows_with_m_says_so() {
        let on = |m: u32| {
            set(&format!("platform: {{cpus: {m}}}\nrun: {{duration: 1s}}\ntasks:\n  - {{name: a, period: 1, wcet: 0.5}}\n  - {{name: b, period: 2, wcet: 1}}\n"))
        };
        // The same 1,500 jobs: G-EDF's estimate grows with m, PAWS's with m².
        let (g2, g64k) = (
            estimate_spec(&on(2), "gedf").unwrap(),
            estimate_spec(&on(65536), "gedf").unwrap(),
        );
        let (p2, p64k) = (
            estimate_spec(&on(2), "paws").unwrap(),
            estimate_spec(&on(65536), "paws").unwrap(),
        );
        assert_eq!(g2.decisions, 1500 * 2);
        assert!(
            g64k.steps < DEFAULT_MAX_WORK && p2.steps < DEFAULT_MAX_WORK,
            "{g64k:?} {p2:?}"
        );
        assert!(p64k.steps > DEFAULT_MAX_WORK, "{p64k:?}");
        assert_eq!(p64k.per_decision, DECISION_BASE + 65536 * 65536 + 2);
    }

    #[test]
    fn a_huge_estimate_saturates_instead_of_wrapping() {
        let ts = set("platform: {cpus: 65536}\nrun: {duration: 1000000s}\ntasks:\n  - {name: a, period: 1us, wcet: 0.5us}\n");
        let e = estimate_spec(&ts, "ggua").unwrap();
        assert_eq!(e.steps, u64::MAX);
    }
}
