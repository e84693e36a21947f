//! The utility-accrual policies against their sources (issue #38, ChronOS part), each rule
//! worked by hand: a job is abandoned at its TUF's termination, not its deadline; NG-GUA's
//! EDF-PIP order along dependency chains (`nggua.c`); G-GUA's chain PUD summed over every
//! dependent (`agg_util` / `agg_left`); G-HVDF refusing rising TUFs as every UA policy does;
//! DASA's and LBESA's hopeless timer; a freed resource handed by the policy (§3.2).

mod worked;

use rtsched_model::results::RunResult;
use rtsched_model::Time;
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy, ResourceId};
use rtsched_sim::{simulate, Options};
use worked::{ivs, MS};

fn ts(yaml: &str) -> rtsched_model::TaskSet {
    worked::ts_named(yaml, "ua-fidelity.yaml")
}

fn run(t: &rtsched_model::TaskSet, spec: &str) -> RunResult {
    simulate(t, Options::spec(spec).intervals(true))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .result
}

/// Per job: (task, finish ms, aborted at ns, utility).
fn outcome(r: &RunResult) -> Vec<(u32, Option<u64>, Option<u64>, f64)> {
    r.jobs
        .iter()
        .map(|j| (j.task, j.finish.map(|f| f / MS), j.aborted_at, j.utility))
        .collect()
}

const UA: [&str; 5] = ["dasa", "lbesa", "ggua", "nggua", "ghvdf"];

/// The audit's case. One job on one CPU: C 6, D 5, linear TUF 10 → 0 at X = 15 ms. It cannot
/// meet its deadline, but completing at 6 still earns 10 · (1 − 6/15) = 6 of 10 (AUR 0.6).
/// G-EDF runs it [0, 6]. Before, every UA policy aborted it at 0 (0 + 6 > 5; G-HVDF at
/// 5 ms + 1 ns, its deadline passed): 0. Now it is hopeless only once now + 6 > 15, at 9 ms + 1 ns;
/// no feasibility test (by the deadline) admits it, but a CPU the schedule leaves idle runs
/// it (DASA's and G-GUA's empty schedule; LBESA and NG-GUA never shed a CPU's densest job;
/// G-HVDF does not test feasibility): each earns 6, as G-EDF.
#[test]
fn a_job_is_abandoned_at_its_termination_not_its_deadline() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  \
        - {name: a, period: 20, wcet: 6, deadline: 5, tuf: {shape: linear, utility: 10, termination: 15}}\n");
    let g = run(&t, "gedf");
    assert_eq!(outcome(&g), vec![(0, Some(6), None, 6.0)]);
    assert!((g.summaries().total.aur - 0.6).abs() < 1e-12);
    for spec in UA {
        let r = run(&t, spec);
        assert_eq!(outcome(&r), vec![(0, Some(6), None, 6.0)], "{spec}");
        assert_eq!(ivs(&r), vec![(0, 0, 0, 0, 6)], "{spec}");
    }
}

/// The termination still bounds what may be earned: the same job with C 16 is hopeless from
/// the start (0 + 16 > 15) and every UA policy aborts it at 0, except G-HVDF, which does not
/// judge feasibility and aborts it once its TUF has ended (15 ms + 1 ns).
#[test]
fn the_termination_bounds_what_a_job_may_still_earn() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  \
        - {name: a, period: 20, wcet: 16, deadline: 5, tuf: {shape: linear, utility: 10, termination: 15}}\n");
    for spec in ["dasa", "lbesa", "ggua", "nggua"] {
        assert_eq!(
            outcome(&run(&t, spec)),
            vec![(0, None, Some(0), 0.0)],
            "{spec}"
        );
    }
    assert_eq!(
        outcome(&run(&t, "ghvdf")),
        vec![(0, None, Some(15 * MS + 1), 0.0)]
    );
}

/// NG-GUA's order on one CPU (ms). h (C 4, D 20, utility 1) holds r for its first 3 ms of
/// work. At 1: t (C 2, D 7 → 8, utility 5) asks for r at once and blocks on h; m (C 4, D 10 →
/// 11, utility 2) is ready.
/// - `nggua.c` orders the zero in-degree jobs by `temp_deadline`, the least deadline of the
///   job and its dependents: h's is t's 8 < m's 11, so [h, m] (ends 4, 8: feasible): h runs
///   [1, 3] and frees r; t [3, 5] meets 8; m [5, 9] meets 11; h [9, 10]. All 8 earned.
/// - By each job's own deadline (before; `chains=off` still orders so): [m, h] (ends 5, 8):
///   m runs [1, 5], h [5, 8] (frees r at 7); t can no longer finish by 8 from 6 ms + 1 ns
///   on (+ 2 > 8): aborted then, while it waits. 3 earned.
#[test]
fn nggua_runs_a_holder_by_the_deadline_of_its_dependents() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  \
        - {name: h, period: 40, wcet: 4, deadline: 20, tuf: 1, sections: [{resource: r, start: 0, length: 3}]}\n  \
        - {name: t, period: 40, wcet: 2, deadline: 7, offset: 1, tuf: 5, sections: [{resource: r, start: 0, length: 1}]}\n  \
        - {name: m, period: 40, wcet: 4, deadline: 10, offset: 1, tuf: 2}\n");
    let r = run(&t, "nggua");
    // h's interval breaks at 1, where t took the CPU for no time before it blocked.
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 1),
            (0, 0, 0, 1, 3),
            (0, 0, 0, 9, 10),
            (0, 1, 0, 3, 5),
            (0, 2, 0, 5, 9)
        ]
    );
    assert_eq!(
        outcome(&r),
        vec![
            (0, Some(10), None, 1.0),
            (1, Some(5), None, 5.0),
            (2, Some(9), None, 2.0)
        ]
    );
    let own = run(&t, "nggua:chains=off");
    assert_eq!(
        outcome(&own),
        vec![
            (0, Some(8), None, 1.0),
            (1, None, Some(6 * MS + 1), 0.0),
            (2, Some(5), None, 2.0)
        ]
    );
}

/// G-GUA's chain PUD on one CPU (ms). h (C 4, D 7, utility 1) holds r for all its work.
/// b1, b2 (C 1, D 5 → 6, utility 2 each) are released at 1, run first (EDF heads of a feasible
/// schedule), ask for r and block on h; h runs [1, 2]. At 2 x (C 4, D 4 → 6, utility 4.4)
/// arrives: x alone or h alone is feasible, [x, h] is not (6, then 8 > 7).
/// - Sum (ChronOS, the default): h's PUD is h then b1, b2 completed at 4, 5, 6 (all in time):
///   (1 + 2 + 2) / 4 = 1.25 > x's 4.4 / 4 = 1.1. h runs [2, 4]; b1 (granted r first: equal
///   PUDs, EDF tie-break) [4, 5], b2 [5, 6]; x, dropped, is hopeless from 2 ms + 1 ns. 5 earned.
/// - Max (`chain_pud=max`, before): the best single chain, h then b1: (1 + 2) / 3 = 1 < 1.1.
///   x runs [2, 6] (4.4); h, b1, b2 are hopeless from 5 ms + 1 ns (h: + 2 > 7; b: + 1 > 6).
#[test]
fn ggua_sums_the_pud_of_every_job_waiting_on_a_holder() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  \
        - {name: h, period: 20, wcet: 4, deadline: 7, tuf: 1, sections: [{resource: r, start: 0, length: 4}]}\n  \
        - {name: b1, period: 20, wcet: 1, deadline: 5, offset: 1, tuf: 2, sections: [{resource: r, start: 0, length: 1}]}\n  \
        - {name: b2, period: 20, wcet: 1, deadline: 5, offset: 1, tuf: 2, sections: [{resource: r, start: 0, length: 1}]}\n  \
        - {name: x, period: 20, wcet: 4, deadline: 4, offset: 2, tuf: 4.4}\n");
    let sum = run(&t, "ggua");
    assert_eq!(
        outcome(&sum),
        vec![
            (0, Some(4), None, 1.0),
            (1, Some(5), None, 2.0),
            (2, Some(6), None, 2.0),
            (3, None, Some(2 * MS + 1), 0.0)
        ]
    );
    assert_eq!(sum.summaries().total.accrued_utility, 5.0);
    let max = run(&t, "ggua:chain_pud=max");
    assert_eq!(
        outcome(&max),
        vec![
            (0, None, Some(5 * MS + 1), 0.0),
            (1, None, Some(5 * MS + 1), 0.0),
            (2, None, Some(5 * MS + 1), 0.0),
            (3, Some(6), None, 4.4)
        ]
    );
    assert_eq!(run(&t, "ggua:chain_pud=sum").jobs.len(), 4);
    let e = simulate(&t, Options::spec("ggua:chain_pud=avg"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'ggua'")
            && e.contains("'chain_pud'")
            && e.contains("avg")
            && e.contains("sum, max"),
        "{e}"
    );
}

/// Every UA policy refuses a rising TUF with the same message; G-HVDF accepted it before.
#[test]
fn ghvdf_refuses_a_rising_tuf_as_every_ua_policy_does() {
    let up = ts("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, tuf: {shape: piecewise, points: [[0, 1], [4ms, 3], [8ms, 0]]}}\n");
    for spec in UA {
        let e = simulate(&up, Options::spec(spec)).unwrap_err().to_string();
        assert!(
            e.contains("ua-fidelity.yaml")
                && e.contains("task 'a'")
                && e.contains("field 'tuf'")
                && e.contains("non-increasing")
                && e.contains(&format!("'{spec}'")),
            "{spec}: {e}"
        );
    }
}

/// One CPU (ms): a (C 4, D 5, utility 5) and b (C 3, D 4, utility 1) at 0. DASA: a (PUD 1.25)
/// first, [b, a] ends 3, 7 > 5: b is left out; LBESA: EDF [b, a] is infeasible, b (density
/// 1/3) is shed. a runs [0, 4]. b can finish by 4 only if it starts by 1: from 1 ms + 1 ns it
/// is hopeless, and the timer aborts it then. Before, nothing happened until a completed:
/// aborted at 4.
#[test]
fn dasa_and_lbesa_abort_a_job_the_instant_it_becomes_hopeless() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  \
        - {name: a, period: 20, wcet: 4, deadline: 5, tuf: 5}\n  \
        - {name: b, period: 20, wcet: 3, deadline: 4, tuf: 1}\n");
    for spec in ["dasa", "lbesa", "pdasa"] {
        let r = run(&t, spec);
        assert_eq!(
            outcome(&r),
            vec![(0, Some(4), None, 5.0), (1, None, Some(MS + 1), 0.0)],
            "{spec}"
        );
    }
}

/// A policy with every call passed to `inner`, except that it leaves freed resources to the
/// substrate (FIFO): the UA policies as they were before they granted.
struct Fifo(Box<dyn Policy>);

impl Policy for Fifo {
    fn name(&self) -> String {
        self.0.name()
    }
    fn release(&mut self, now: Time, e: &EntityInfo) {
        self.0.release(now, e)
    }
    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.0.complete(now, e, cpu)
    }
    fn aborted(&mut self, now: Time, e: EntityId) {
        self.0.aborted(now, e)
    }
    fn blocked(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.0.blocked(now, e, cpu)
    }
    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        self.0.unblocked(now, e)
    }
    fn requested(&mut self, now: Time, e: EntityId, r: ResourceId, h: Option<EntityId>) {
        self.0.requested(now, e, r, h)
    }
    fn released(&mut self, now: Time, e: EntityId, r: ResourceId) {
        self.0.released(now, e, r)
    }
    fn uses_tufs(&self) -> bool {
        self.0.uses_tufs()
    }
    fn resolves_deadlocks(&self) -> bool {
        self.0.resolves_deadlocks()
    }
    fn deadlock(&mut self, now: Time, cycle: &[EntityId]) {
        self.0.deadlock(now, cycle)
    }
    fn timer(&mut self, now: Time) {
        self.0.timer(now)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        self.0.schedule(now, d)
    }
}

/// One CPU (ms). h (C 4, D 20, utility 1) holds r for its first 3 ms of work. At 1 w1 (C 3,
/// D 5 → 6, utility 1; r for all its work) and w2 (C 2, D 6 → 7, utility 10; r for its first
/// 1 ms) arrive. DASA runs w1 (the EDF head of a feasible schedule), which asks for r and
/// waits; then w2 (with h it cannot fit beside w1), which waits too: w1 is the longer waiter.
/// h runs [1, 3] and frees r.
/// - DASA picks (§3.2): w2, of PUD 10 / 2 = 5 against w1's 1 / 3. w2 [3, 5] meets 7; w1 (3 +
///   3 > 6) is hopeless from 3 ms + 1 ns; h [5, 6]. 11 earned.
/// - FIFO (before): w1 gets r and runs [3, 6]; w2 waits on w1 and cannot finish by 7 from
///   5 ms + 1 ns; h [6, 7]. 2 earned.
#[test]
fn a_freed_resource_goes_to_the_waiter_the_policy_ranks_first() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  \
        - {name: h, period: 40, wcet: 4, deadline: 20, tuf: 1, sections: [{resource: r, start: 0, length: 3}]}\n  \
        - {name: w1, period: 40, wcet: 3, deadline: 5, offset: 1, tuf: 1, sections: [{resource: r, start: 0, length: 3}]}\n  \
        - {name: w2, period: 40, wcet: 2, deadline: 6, offset: 1, tuf: 10, sections: [{resource: r, start: 0, length: 1}]}\n");
    let chosen = run(&t, "dasa");
    assert_eq!(
        outcome(&chosen),
        vec![
            (0, Some(6), None, 1.0),
            (1, None, Some(3 * MS + 1), 0.0),
            (2, Some(5), None, 10.0)
        ]
    );
    let mut fifo = Fifo(rtsched_policies::build("dasa", &t).unwrap());
    let before = simulate(&t, Options::policy(&mut fifo).intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        outcome(&before),
        vec![
            (0, Some(7), None, 1.0),
            (1, Some(6), None, 1.0),
            (2, None, Some(5 * MS + 1), 0.0)
        ]
    );
}

/// Every UA policy grants, each by its own order, where FIFO loses a job. One CPU (ms): h
/// (C 4, D 20, utility 1) holds r for its first 3 ms of work; w1 (C 3, D 11 → 12, utility 1;
/// r for all its work) arrives at 1 and w2 (C 2, D 5 → 7, utility 4; r for its first 1 ms) at
/// 2; each runs first on arrival (earliest deadline, or densest), asks for r and waits. h frees
/// r at 3. w2 comes first by deadline (LBESA, NG-GUA) and by density (DASA, G-GUA, G-HVDF: 2
/// against 1/3): it runs [3, 5] and meets 7, and w1 and h still meet theirs. FIFO (before)
/// hands r to w1, the longer waiter, which holds it until 6: w2 can no longer finish by 7.
#[test]
fn every_ua_policy_grants_by_its_own_order() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  \
        - {name: h, period: 40, wcet: 4, deadline: 20, tuf: 1, sections: [{resource: r, start: 0, length: 3}]}\n  \
        - {name: w1, period: 40, wcet: 3, deadline: 11, offset: 1, tuf: 1, sections: [{resource: r, start: 0, length: 3}]}\n  \
        - {name: w2, period: 40, wcet: 2, deadline: 5, offset: 2, tuf: 4, sections: [{resource: r, start: 0, length: 1}]}\n");
    for spec in UA {
        let r = run(&t, spec);
        assert_eq!(
            (r.jobs[2].finish, r.jobs[2].utility),
            (Some(5 * MS), 4.0),
            "{spec}: {:?}",
            ivs(&r)
        );
        assert_eq!(
            r.summaries().total.accrued_utility,
            6.0,
            "{spec}: {:?}",
            outcome(&r)
        );
        let mut fifo = Fifo(rtsched_policies::build(spec, &t).unwrap());
        let before = simulate(&t, Options::policy(&mut fifo).intervals(true))
            .unwrap()
            .result;
        assert!(
            before.jobs[2].aborted && before.jobs[1].finish.is_some(),
            "{spec}: {:?}",
            outcome(&before)
        );
    }
}
