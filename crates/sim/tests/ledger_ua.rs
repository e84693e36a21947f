//! The job ledger's part of the best-effort half of ChronOS: utility accrued at completion
//! (time-utility functions), the abort handler's cost, and deadlocks — detected by the ledger,
//! resolved by the policy's abort, or stopping the run with an error that names the cycle.
//! Policy-independent: the policies here are G-EDF and thin test wrappers around it.

mod worked;

use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy, ResourceId};
use rtsched_sim::{simulate, Options};
use worked::{ivs, ts_named, MS};

/// Two tasks that take x / y at 0 and request y / x at 1 ms: on 2 CPUs they deadlock at 1 ms.
const DEADLOCK: &str = "
platform: {cpus: 2}
run: {duration: 10}
tasks:
  - {name: a, period: 10, wcet: 4, tuf: 5, sections: [{resource: x, start: 0, length: 3}, {resource: y, start: 1, length: 1}]}
  - {name: b, period: 10, wcet: 4, tuf: 2, sections: [{resource: y, start: 0, length: 3}, {resource: x, start: 1, length: 1}]}
";

/// G-EDF that says it resolves deadlocks and, told of one, aborts the job of the cycle's
/// entity at `victim` (or none: `None`, a policy that breaks its promise).
struct Resolver {
    inner: Box<dyn Policy>,
    victim: Option<usize>,
    told: Vec<Vec<EntityId>>,
    pending: Option<Vec<EntityId>>,
}

impl Resolver {
    fn new(victim: Option<usize>) -> Self {
        let ts = ts_named(DEADLOCK, "deadlock.yaml");
        Resolver {
            inner: rtsched_policies::build("gedf", &ts).unwrap(),
            victim,
            told: Vec::new(),
            pending: None,
        }
    }
}

impl Policy for Resolver {
    fn name(&self) -> String {
        "resolver".into()
    }
    fn release(&mut self, now: u64, e: &EntityInfo) {
        self.inner.release(now, e)
    }
    fn complete(&mut self, now: u64, e: EntityId, cpu: u32) {
        self.inner.complete(now, e, cpu)
    }
    fn aborted(&mut self, now: u64, e: EntityId) {
        self.inner.aborted(now, e)
    }
    fn blocked(&mut self, now: u64, e: EntityId, cpu: u32) {
        self.inner.blocked(now, e, cpu)
    }
    fn unblocked(&mut self, now: u64, e: &EntityInfo) {
        self.inner.unblocked(now, e)
    }
    fn requested(&mut self, now: u64, e: EntityId, r: ResourceId, h: Option<EntityId>) {
        self.inner.requested(now, e, r, h)
    }
    fn resolves_deadlocks(&self) -> bool {
        true
    }
    fn deadlock(&mut self, _now: u64, cycle: &[EntityId]) {
        self.told.push(cycle.to_vec());
        self.pending = Some(cycle.to_vec());
    }
    fn schedule(&mut self, now: u64, d: &mut Dispatch<'_>) {
        if let (Some(c), Some(v)) = (self.pending.take(), self.victim) {
            d.abort(c[v]);
        }
        self.inner.schedule(now, d)
    }
}

#[test]
fn a_deadlock_under_a_policy_that_cannot_resolve_it_stops_the_run_naming_the_cycle() {
    let ts = ts_named(DEADLOCK, "deadlock.yaml");
    assert!(ts.lock_order_cycle().is_some());
    let e = simulate(&ts, Options::spec("gedf"))
        .unwrap_err()
        .to_string();
    for needle in [
        "deadlock.yaml",
        "deadlock at 1ms",
        "b#0 waits for 'x', held by a#0",
        "a#0 waits for 'y', held by b#0",
        "'gedf' does not resolve deadlocks",
    ] {
        assert!(e.contains(needle), "{needle:?} not in {e:?}");
    }
}

#[test]
fn a_policy_told_of_a_deadlock_that_aborts_nobody_gets_an_error_too() {
    let ts = ts_named(DEADLOCK, "deadlock.yaml");
    let mut p = Resolver::new(None);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        simulate(&ts, Options::policy(&mut p)).unwrap().result
    }));
    let msg = *r
        .expect_err("the run must stop")
        .downcast::<String>()
        .unwrap();
    assert!(
        msg.contains("deadlock at 1ms")
            && msg.contains("'resolver' was told of it and aborted none of its jobs"),
        "{msg}"
    );
}

#[test]
fn a_deadlock_resolved_by_an_abort_lets_the_other_job_finish() {
    let ts = ts_named(DEADLOCK, "deadlock.yaml");
    // Both request at 1 ms; b's request (task order) comes second and closes the cycle:
    // the cycle is [b, a]. Abort b (index 0): a takes y at once and finishes at 4 ms.
    let mut p = Resolver::new(Some(0));
    let r = simulate(&ts, Options::policy(&mut p).intervals(true))
        .unwrap()
        .result;
    assert_eq!(p.told.len(), 1, "told once");
    assert_eq!(r.counters.deadlocks, 1);
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!((a.task, b.task), (0, 1));
    assert_eq!((a.finish, a.missed, a.utility), (Some(4 * MS), false, 5.0));
    assert_eq!(
        (b.aborted, b.aborted_at, b.missed, b.utility, b.max_utility),
        (true, Some(MS), true, 0.0, 2.0)
    );
    let s = r.summaries().total;
    assert_eq!((s.accrued_utility, s.possible_utility), (5.0, 7.0));
    assert!((s.aur - 5.0 / 7.0).abs() < 1e-12);
    // a blocked at 1 ms and was handed y at once by the abort (same instant): it resumes on
    // CPU 0 and finishes at 4 ms; b's interval ends at its abort.
    assert_eq!(
        ivs(&r),
        vec![(0, 0, 0, 0, 1), (0, 0, 0, 1, 4), (1, 1, 0, 0, 1)]
    );
}

#[test]
fn the_deadlock_event_keeps_the_protocol() {
    // Under the protocol checker: the cycle's entities are all blocked when it is reported.
    let ts = ts_named(DEADLOCK, "deadlock.yaml");
    let mut p = rtsched_runtime::ProtocolChecker::new(Box::new(Resolver::new(Some(1))), 2);
    let r = simulate(&ts, Options::policy(&mut p)).unwrap().result;
    assert_eq!(r.counters.deadlocks, 1);
    // Aborting a (index 1) lets b finish instead.
    assert!(r.jobs[0].aborted && r.jobs[1].finish == Some(4 * MS));
}

#[test]
fn utility_is_the_tuf_at_completion_and_zero_when_late_or_aborted() {
    // One CPU; a (linear 10 -> 0 at 8 ms) runs [0, 2): accrues 10 * (1 - 2/8) = 7.5.
    // b (quadratic 4, termination 10) runs [2, 7): accrues 4 * (1 - 0.7^2) = 2.04.
    // c (step 3, deadline 6) runs [7, 8): late, accrues 0 though it completed.
    let ts = ts_named(
        "
platform: {cpus: 1}
run: {duration: 10}
tasks:
  - {name: a, period: 20, wcet: 2, deadline: 5, tuf: {shape: linear, utility: 10, termination: 8}}
  - {name: b, period: 20, wcet: 5, deadline: 5.5, tuf: {shape: quadratic, utility: 4, termination: 10}}
  - {name: c, period: 20, wcet: 1, deadline: 6, tuf: 3}
",
        "tuf.yaml",
    );
    let r = simulate(&ts, Options::spec("gedf")).unwrap().result;
    let got: Vec<(Option<u64>, f64, f64)> = r
        .jobs
        .iter()
        .map(|j| (j.finish, j.utility, j.max_utility))
        .collect();
    assert_eq!(got[0], (Some(2 * MS), 7.5, 10.0));
    assert_eq!(got[1].0, Some(7 * MS));
    assert!(
        (got[1].1 - 4.0 * (1.0 - 0.49)).abs() < 1e-12,
        "{}",
        got[1].1
    );
    assert_eq!(got[2], (Some(8 * MS), 0.0, 3.0));
    let s = r.summaries().total;
    assert!((s.aur - (7.5 + 2.04) / 17.0).abs() < 1e-12, "{}", s.aur);
    // Without TUFs, utility is 1 per job met: AUR is the DSR.
    let plain = ts_named("platform: {cpus: 1}\nrun: {duration: 30}\ntasks:\n  - {name: a, period: 10, wcet: 6}\n  - {name: b, period: 15, wcet: 7}\n", "plain.yaml");
    let s = simulate(&plain, Options::spec("gedf"))
        .unwrap()
        .result
        .summaries()
        .total;
    assert!(
        s.missed > 0 && (s.aur - s.dsr).abs() < 1e-12,
        "aur {} dsr {}",
        s.aur,
        s.dsr
    );
}

#[test]
fn an_aborted_running_job_costs_its_cpu_the_abort_handler() {
    // on_miss: abort. a (wcet 6, deadline 4) is aborted at 4 ms while running on the only CPU;
    // b (released at 0, deadline 20) then runs. Without a handler b runs [4, 9); with a 2 ms
    // handler b first pays it on the CPU and finishes at 11 ms.
    let yaml = |handler: &str| {
        format!(
            "platform: {{cpus: 1}}\nrun: {{duration: 10, on_miss: abort, overheads: {{abort_handler: {handler}}}}}\ntasks:\n  - {{name: a, period: 30, wcet: 6, deadline: 4}}\n  - {{name: b, period: 30, wcet: 5, deadline: 20}}\n"
        )
    };
    let finish_b = |handler: &str| {
        let r = simulate(
            &ts_named(&yaml(handler), "abort.yaml"),
            Options::spec("gedf"),
        )
        .unwrap()
        .result;
        assert_eq!(
            (r.jobs[0].aborted, r.jobs[0].aborted_at),
            (true, Some(4 * MS))
        );
        assert!(
            !r.measurements.contains_key("policy.charged_ns"),
            "the handler is not the policy's charge"
        );
        r.jobs[1].finish
    };
    assert_eq!(finish_b("0"), Some(9 * MS));
    assert_eq!(finish_b("2ms"), Some(11 * MS));
}
