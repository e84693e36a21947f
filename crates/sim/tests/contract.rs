//! The wider policy contract, worked by hand in the simulator: the run view (executed time,
//! who runs where, dependency chains), the CPUs that saw events, `requested`/`released`,
//! policy grants (and the FIFO default), one-shot timers, charged overheads and ticks. Every
//! policy here runs under the protocol checker.

use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy, ResourceId};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Options};
use std::sync::{Arc, Mutex};

const MS: Time = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "contract.yaml").unwrap()
}

type Log = Arc<Mutex<Vec<String>>>;

/// gedf, plus hooks that write what the policy sees to a log.
struct Probe {
    inner: Box<dyn Policy>,
    log: Log,
    /// Grant freed resources to their most recent waiter (LIFO) instead of leaving them FIFO.
    grant_lifo: Option<bool>,
    timer_at: Option<Time>,
    charge_at_release: Option<Time>,
    tick: Option<Time>,
}

impl Probe {
    fn new(ts: &TaskSet, log: Log) -> Probe {
        Probe {
            inner: rtsched_policies::build("gedf", ts).unwrap(),
            log,
            grant_lifo: None,
            timer_at: None,
            charge_at_release: None,
            tick: None,
        }
    }
    fn note(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
    fn checked(self, cpus: u32) -> ProtocolChecker {
        ProtocolChecker::new(Box::new(self), cpus)
    }
}

impl Policy for Probe {
    fn name(&self) -> String {
        "probe".into()
    }
    fn release(&mut self, now: Time, e: &EntityInfo) {
        self.inner.release(now, e)
    }
    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.inner.complete(now, e, cpu)
    }
    fn aborted(&mut self, now: Time, e: EntityId) {
        self.inner.aborted(now, e)
    }
    fn blocked(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.inner.blocked(now, e, cpu)
    }
    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        self.note(format!("{} unblocked {}", now / MS, e.task));
        self.inner.unblocked(now, e)
    }
    fn requested(&mut self, now: Time, e: EntityId, r: ResourceId, holder: Option<EntityId>) {
        self.note(format!(
            "{} requested e{e} r{r} held by {holder:?}",
            now / MS
        ));
    }
    fn released(&mut self, now: Time, e: EntityId, r: ResourceId) {
        self.note(format!("{} released e{e} r{r}", now / MS));
    }
    fn grants_resources(&self) -> bool {
        self.grant_lifo.is_some()
    }
    fn timer(&mut self, now: Time) {
        self.note(format!("{} timer", now / MS));
    }
    fn tick_interval(&self) -> Option<Time> {
        self.tick
    }
    fn tick(&mut self, now: Time, cpu: u32) {
        self.note(format!("{} tick {cpu}", now / MS));
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        let run = d.run();
        let mut running = Vec::new();
        for c in 0..d.cpus() {
            if let Some(e) = run.running(c) {
                let i = run.entity(e).unwrap();
                running.push(format!("cpu{c}:t{}={}", i.task, run.executed(e) / MS));
            }
        }
        // Every blocked entity's chain: requester -> holder -> ... (DASA's dependency chain).
        let mut chains = Vec::new();
        for e in 0..64 {
            if run.waiting_for(e).is_some() {
                let mut chain = vec![format!("t{}", run.entity(e).unwrap().task)];
                let mut at = e;
                while let Some((r, h)) = run.waiting_for(at) {
                    chain.push(format!("r{r}->t{}", run.entity(h).unwrap().task));
                    at = h;
                }
                chains.push(chain.join(" "));
            }
        }
        self.note(format!(
            "{} schedule events={:?} global={} running=[{}] chains=[{}]",
            now / MS,
            d.event_cpus(),
            d.global_event(),
            running.join(" "),
            chains.join("; ")
        ));
        if let (Some(lifo), Some(&r)) = (self.grant_lifo, d.pending_grants().first()) {
            if lifo {
                let w = *run.waiters(r).last().unwrap();
                let info = run.entity(w).unwrap();
                self.note(format!("{} grant r{r} to t{}", now / MS, info.task));
                d.grant(r, w);
                // The policy granted it: it is ready again for the policy's own queue.
                self.inner.unblocked(now, &info);
            }
        }
        if let Some(t) = self.timer_at.take() {
            d.wake_at(t);
            d.wake_at(now); // at once: a new instant at the same time
        }
        self.inner.schedule(now, d);
        if let Some(ns) = self.charge_at_release {
            if d.global_event() {
                d.charge(0, ns);
            }
        }
    }
}

/// One CPU: a (C=4) runs from 0; b (C=2, deadline 6) arrives at 1 and preempts it; a resumes
/// at 3 and ends at 6. What the policy reads: a has executed 1 ms at 1, 2 ms at 4. (The
/// instant at 4 is a's completion planned before it was preempted: a stale event still makes
/// an instant, and the policy is called with no event noted.)
#[test]
fn the_run_view_shows_executed_time_and_event_cpus() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 4}\n  - {name: b, period: 10, deadline: 5, offset: 1, wcet: 2}\n");
    let log = Log::default();
    let mut p = Probe::new(&t, log.clone()).checked(1);
    let r = simulate(&t, Options::policy(&mut p)).unwrap().result;
    assert_eq!(
        r.jobs
            .iter()
            .map(|j| j.finish.unwrap() / MS)
            .collect::<Vec<_>>(),
        vec![6, 3]
    );
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "0 schedule events=[] global=true running=[] chains=[]",
            "1 schedule events=[] global=true running=[cpu0:t0=1] chains=[]",
            "3 schedule events=[0] global=false running=[] chains=[]",
            "4 schedule events=[] global=false running=[cpu0:t0=2] chains=[]",
            "6 schedule events=[0] global=false running=[] chains=[]",
        ]
    );
    assert!(p.calls() > 8);
}

/// Three CPUs. b holds R1 over [0, 5) of its work; a takes R0 at 1 and requests R1 at 2
/// (nested), waiting for b; c requests R0 at 3 and waits for a. The chain c -> a -> b is
/// walkable from the view; b's release at 5 hands R1 to a, a's hands R0 to c.
#[test]
fn dependency_chains_are_walkable_and_requests_name_the_holder() {
    let t = ts("platform: {cpus: 3}
run: {duration: 20}
resources: [R0, R1]
tasks:
  - {name: b, period: 20, wcet: 6, sections: [{resource: R1, start: 0, length: 5}]}
  - {name: a, period: 20, offset: 1, wcet: 4, sections: [{resource: R0, start: 0, length: 3}, {resource: R1, start: 1, length: 1}]}
  - {name: c, period: 20, offset: 3, wcet: 2, sections: [{resource: R0, start: 0, length: 1}]}
");
    let log = Log::default();
    let mut p = Probe::new(&t, log.clone()).checked(3);
    let r = simulate(&t, Options::policy(&mut p)).unwrap().result;
    let log = log.lock().unwrap().clone();
    let pick = |prefix: &str| {
        log.iter()
            .filter(|l| l.starts_with(prefix))
            .cloned()
            .collect::<Vec<_>>()
    };
    // a (entity 1) requests R1 held by b (entity 0) at 2; c (entity 2) requests R0 held by a at 3.
    assert!(
        log.contains(&"2 requested e1 r1 held by Some(0)".to_string()),
        "{log:#?}"
    );
    assert!(
        log.contains(&"3 requested e2 r0 held by Some(1)".to_string()),
        "{log:#?}"
    );
    // Two instants at 3: c's release, then its request (at 0 of its work) once it runs.
    let at3 = pick("3 schedule");
    assert_eq!(at3.len(), 2);
    assert!(at3[0].contains("chains=[t1 r1->t0]"), "{at3:?}");
    assert!(
        at3[1].contains("chains=[t1 r1->t0; t2 r0->t1 r1->t0]"),
        "{at3:?}"
    );
    // b releases R1 at 5: a takes it (FIFO default), is ready; a finishes its section...
    assert!(
        log.contains(&"5 released e0 r1".to_string()) && log.contains(&"5 unblocked 1".to_string()),
        "{log:#?}"
    );
    // a: 1 ms done at 2, resumes at 5, releases R1 at 6 and R0 at 7; c gets R0 at 7.
    assert!(
        log.contains(&"7 released e1 r0".to_string()) && log.contains(&"7 unblocked 2".to_string()),
        "{log:#?}"
    );
    let fin: Vec<_> = r
        .jobs
        .iter()
        .map(|j| (j.finish.unwrap() / MS, j.blocked / MS))
        .collect();
    assert_eq!(fin, vec![(6, 0), (8, 3), (9, 4)]);
}

/// One holder h keeps R over [0, 5) on CPU 0; w1 requests it at 1, w2 at 2 (CPUs 1, 2). FIFO
/// (the default, and a granting policy that does not grant) gives it to w1 at 5; a policy
/// that grants to the most recent waiter gives it to w2, which may run at once.
#[test]
fn a_granting_policy_chooses_who_gets_a_freed_resource() {
    let t = ts("platform: {cpus: 3}
run: {duration: 20}
resources: [R]
tasks:
  - {name: h, period: 20, wcet: 5, sections: [{resource: R, start: 0, length: 5}]}
  - {name: w1, period: 20, offset: 1, wcet: 2, sections: [{resource: R, start: 0, length: 2}]}
  - {name: w2, period: 20, offset: 2, wcet: 2, sections: [{resource: R, start: 0, length: 2}]}
");
    let finishes = |grant: Option<bool>| {
        let log = Log::default();
        let mut p = Probe::new(&t, log.clone());
        p.grant_lifo = grant;
        let mut p = p.checked(3);
        let r = simulate(&t, Options::policy(&mut p)).unwrap().result;
        let lines = log.lock().unwrap().clone();
        (
            r.jobs
                .iter()
                .map(|j| (j.finish.unwrap() / MS, j.blocked / MS))
                .collect::<Vec<_>>(),
            lines,
        )
    };
    let (fifo, _) = finishes(None);
    assert_eq!(fifo, vec![(5, 0), (7, 4), (9, 5)]);
    // A granting policy that grants nothing: FIFO after its `schedule`, with `unblocked`.
    let (fallback, log) = finishes(Some(false));
    assert_eq!(fallback, fifo);
    assert!(log.contains(&"5 unblocked 1".to_string()), "{log:#?}");
    let (lifo, log) = finishes(Some(true));
    assert_eq!(lifo, vec![(5, 0), (9, 6), (7, 3)]);
    assert!(log.contains(&"5 grant r0 to t2".to_string()), "{log:#?}");
    // Granted in `schedule`, so no `unblocked` is reported for w2.
    assert!(!log.iter().any(|l| l.contains("unblocked 2")), "{log:#?}");
}

/// A timer set at the first decision fires at the time asked, in an instant of its own; one
/// set for "now" fires at once.
#[test]
fn timers_fire_once_at_their_time() {
    let t = ts(
        "platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 4}\n",
    );
    let log = Log::default();
    let mut p = Probe::new(&t, log.clone());
    p.timer_at = Some(7 * MS);
    let mut p = p.checked(1);
    simulate(&t, Options::policy(&mut p)).unwrap();
    let log = log.lock().unwrap().clone();
    let timers: Vec<_> = log
        .iter()
        .filter(|l| l.ends_with("timer"))
        .cloned()
        .collect();
    assert_eq!(timers, vec!["0 timer", "7 timer"]);
    assert!(
        log.contains(&"7 schedule events=[] global=true running=[] chains=[]".to_string()),
        "{log:#?}"
    );
}

/// A policy that charges CPU 0 1 ms at each release delays what runs there by 1 ms; the
/// charges are counted in the results.
#[test]
fn charged_operations_delay_the_work_and_are_counted() {
    let t = ts(
        "platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  - {name: a, period: 10, wcet: 4}\n",
    );
    let log = Log::default();
    let mut p = Probe::new(&t, log.clone());
    p.charge_at_release = Some(MS);
    let mut p = p.checked(1);
    let r = simulate(&t, Options::policy(&mut p)).unwrap().result;
    assert_eq!(
        r.jobs
            .iter()
            .map(|j| j.finish.unwrap() / MS)
            .collect::<Vec<_>>(),
        vec![5, 15]
    );
    assert_eq!(
        r.measurements.get("policy.charged_ns"),
        Some(&(2.0 * MS as f64))
    );
    // Without charges, nothing changes and nothing is counted.
    let mut plain = Probe::new(&t, Log::default()).checked(1);
    let r = simulate(&t, Options::policy(&mut plain)).unwrap().result;
    assert_eq!(
        r.jobs
            .iter()
            .map(|j| j.finish.unwrap() / MS)
            .collect::<Vec<_>>(),
        vec![4, 14]
    );
    assert!(!r.measurements.contains_key("policy.charged_ns"));
}

/// Ticks reach every CPU at each period until the run ends, and name their CPU as an event.
#[test]
fn ticks_are_delivered_per_cpu() {
    let t = ts(
        "platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 9}\n",
    );
    let log = Log::default();
    let mut p = Probe::new(&t, log.clone());
    p.tick = Some(3 * MS);
    let mut p = p.checked(2);
    simulate(&t, Options::policy(&mut p)).unwrap();
    let log = log.lock().unwrap().clone();
    let ticks: Vec<_> = log.iter().filter(|l| l.contains("tick")).cloned().collect();
    assert_eq!(
        ticks,
        vec!["3 tick 0", "3 tick 1", "6 tick 0", "6 tick 1", "9 tick 0", "9 tick 1"]
    );
    assert!(
        log.contains(
            &"3 schedule events=[0, 1] global=false running=[cpu0:t0=3] chains=[]".to_string()
        ),
        "{log:#?}"
    );
}
