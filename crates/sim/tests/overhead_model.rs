//! The overhead model (docs/overheads.md) worked by hand: each cost charged where and when it
//! says, counted per job and per run, and drawn in the trace.

use rtsched_model::results::write_trace;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_sim::simulate;

const US: Time = 1_000;
const MS: Time = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "overheads.yaml").unwrap()
}

/// One job alone: its one dispatch pays decision + context switch (the idle CPU ran nothing
/// before it, so starting it is a switch) before its 2 ms of work: it finishes at
/// 0 + 100 + 50 us + 2 ms.
#[test]
fn a_dispatch_pays_decision_and_context_switch_first() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10, overheads: {decision: 100us, context_switch: 50us}}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n");
    let r = simulate(&t, "gedf", false).unwrap();
    let j = &r.jobs[0];
    assert_eq!((j.start, j.finish), (Some(0), Some(2 * MS + 150 * US)));
    assert_eq!((j.exec, j.overhead, j.stall), (2 * MS + 150 * US, 150 * US, 0));
    let o = &r.counters.overheads;
    assert_eq!((o.decision_ns, o.context_switch_ns, o.migration_ns), (100 * US, 50 * US, 0));
    let s = r.summaries().total;
    assert!((s.exec_inflation - 2.15 / 2.0).abs() < 1e-12, "{}", s.exec_inflation);
    assert_eq!(s.ipc_proxy, 1.0, "overhead is not a stall");
}

/// Release latency: the job is ready 30 us after its release; its deadline (and response time)
/// still count from the release.
#[test]
fn release_latency_delays_readiness_not_the_deadline() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20, overheads: {release: 30us}}\ntasks:\n  - {name: a, period: 10, wcet: 2, deadline: 2}\n");
    let r = simulate(&t, "gedf", false).unwrap();
    for (k, j) in r.jobs.iter().enumerate() {
        let rel = k as Time * 10 * MS;
        assert_eq!((j.release, j.deadline), (rel, rel + 2 * MS));
        assert_eq!((j.start, j.finish), (Some(rel + 30 * US), Some(rel + 2 * MS + 30 * US)));
        assert!(j.missed, "a job that needs all of its deadline misses it by the latency");
        assert_eq!(j.overhead, 0, "latency takes no CPU time");
    }
    assert_eq!(r.counters.overheads.release_ns, 30 * US * r.counters.releases);
}

/// Ticks every 1 ms cost 10 us each on a busy CPU, charged to what runs: the job of 2.5 ms
/// sees the ticks at 1 ms and 2 ms (resuming at 1.01 and 2.01 ms) and ends at 2.52 ms. The
/// tick at 3 ms finds the CPU idle and costs nothing.
#[test]
fn ticks_charge_what_runs() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10, overheads: {tick: 10us, tick_period: 1ms}}\ntasks:\n  - {name: a, period: 10, wcet: 2.5}\n");
    let r = simulate(&t, "gedf", true).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.finish, Some(2_520 * US));
    assert_eq!((j.exec, j.overhead), (2_520 * US, 20 * US));
    assert_eq!(r.counters.overheads.tick_ns, 20 * US);
    // The trace splits the job's execution at each tick; each later piece begins with it.
    let iv: Vec<_> = r.intervals.iter().map(|i| (i.start, i.end, i.overhead)).collect();
    assert_eq!(iv, vec![(0, MS, 0), (MS, 2 * MS, 10 * US), (2 * MS, 2_520 * US, 10 * US)]);
    let mut out = Vec::new();
    write_trace(&[&r], &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let slices: Vec<_> = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["name"] == "overhead").map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())).collect();
    assert_eq!(slices, vec![(1000.0, 10.0), (2000.0, 10.0)]);
}

/// G-EDF on 2 CPUs: a (C 2, D 10) on CPU 0 and b (C 6, D 20) on CPU 1 at 0; c (C 2, D 3)
/// arrives at 1 and preempts b, the latest deadline running. At 2 a ends and b resumes on
/// CPU 0: a migration, which costs 200 us before its 5 ms left: b ends at 7.2 ms.
#[test]
fn a_migration_is_charged_to_the_migrated_entity() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10, overheads: {migration: 200us}}\ntasks:\n  - {name: a, period: 100, wcet: 2, deadline: 10}\n  - {name: b, period: 100, wcet: 6, deadline: 20}\n  - {name: c, period: 100, wcet: 2, deadline: 3, offset: 1}\n");
    let r = simulate(&t, "gedf", false).unwrap();
    let b = r.jobs.iter().find(|j| j.task == 1).unwrap();
    assert_eq!((b.migrations, b.overhead, b.finish), (1, 200 * US, Some(7_200 * US)));
    assert_eq!(r.counters.overheads.migration_ns, 200 * US);
    let a = r.jobs.iter().find(|j| j.task == 0).unwrap();
    assert_eq!((a.overhead, a.finish), (0, Some(2 * MS)));
}

/// Without `run.overheads` nothing is charged: the results are those of the model-free
/// simulator (exec = demand for every completed job).
#[test]
fn no_overheads_no_charges() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 50}\ntasks:\n  - {name: a, period: 4, wcet: 3}\n  - {name: b, period: 6, wcet: 4}\n  - {name: c, period: 12, wcet: 5}\n");
    let r = simulate(&t, "gedf", false).unwrap();
    assert_eq!(r.counters.overheads, Default::default());
    for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
        assert_eq!((j.exec, j.overhead), (j.demand, 0), "{j:?}");
    }
}
