//! The overhead model (docs/overheads.md) worked by hand: each cost charged where and when it
//! says, counted per job and per run, and drawn in the trace.

use rtsched_model::results::write_trace;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_sim::{simulate, Options};

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
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let j = &r.jobs[0];
    assert_eq!((j.start, j.finish), (Some(0), Some(2 * MS + 150 * US)));
    assert_eq!(
        (j.exec, j.overhead, j.stall),
        (2 * MS + 150 * US, 150 * US, 0)
    );
    let o = &r.counters.overheads;
    assert_eq!(
        (o.decision_ns, o.context_switch_ns, o.migration_ns),
        (100 * US, 50 * US, 0)
    );
    let s = r.summaries().total;
    assert!(
        (s.exec_inflation - 2.15 / 2.0).abs() < 1e-12,
        "{}",
        s.exec_inflation
    );
    assert_eq!(s.ipc_proxy, 1.0, "overhead is not a stall");
}

/// Release latency: the job is ready 30 us after its release; its deadline (and response time)
/// still count from the release.
#[test]
fn release_latency_delays_readiness_not_the_deadline() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20, overheads: {release: 30us}}\ntasks:\n  - {name: a, period: 10, wcet: 2, deadline: 2}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    for (k, j) in r.jobs.iter().enumerate() {
        let rel = k as Time * 10 * MS;
        assert_eq!((j.release, j.deadline), (rel, rel + 2 * MS));
        assert_eq!(
            (j.start, j.finish),
            (Some(rel + 30 * US), Some(rel + 2 * MS + 30 * US))
        );
        assert!(
            j.missed,
            "a job that needs all of its deadline misses it by the latency"
        );
        assert_eq!(j.overhead, 0, "latency takes no CPU time");
    }
    assert_eq!(
        r.counters.overheads.release_ns,
        30 * US * r.counters.releases
    );
}

/// Ticks every 1 ms cost 10 us each on a busy CPU, charged to what runs: the job of 2.5 ms
/// sees the ticks at 1 ms and 2 ms (resuming at 1.01 and 2.01 ms) and ends at 2.52 ms. The
/// tick at 3 ms finds the CPU idle and costs nothing.
#[test]
fn ticks_charge_what_runs() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10, overheads: {tick: 10us, tick_period: 1ms}}\ntasks:\n  - {name: a, period: 10, wcet: 2.5}\n");
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let j = &r.jobs[0];
    assert_eq!(j.finish, Some(2_520 * US));
    assert_eq!((j.exec, j.overhead), (2_520 * US, 20 * US));
    assert_eq!(r.counters.overheads.tick_ns, 20 * US);
    // The trace splits the job's execution at each tick; each later piece begins with it.
    let iv: Vec<_> = r
        .intervals
        .iter()
        .map(|i| (i.start, i.end, i.overhead))
        .collect();
    assert_eq!(
        iv,
        vec![
            (0, MS, 0),
            (MS, 2 * MS, 10 * US),
            (2 * MS, 2_520 * US, 10 * US)
        ]
    );
    let mut out = Vec::new();
    write_trace(&[&r], &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let slices: Vec<_> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "overhead")
        .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
        .collect();
    assert_eq!(slices, vec![(1000.0, 10.0), (2000.0, 10.0)]);
}

/// G-EDF on 2 CPUs: a (C 2, D 10) on CPU 0 and b (C 6, D 20) on CPU 1 at 0; c (C 2, D 3)
/// arrives at 1 and preempts b, the latest deadline running. At 2 a ends and b resumes on
/// CPU 0: a migration, which costs 200 us before its 5 ms left: b ends at 7.2 ms.
#[test]
fn a_migration_is_charged_to_the_migrated_entity() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10, overheads: {migration: 200us}}\ntasks:\n  - {name: a, period: 100, wcet: 2, deadline: 10}\n  - {name: b, period: 100, wcet: 6, deadline: 20}\n  - {name: c, period: 100, wcet: 2, deadline: 3, offset: 1}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let b = r.jobs.iter().find(|j| j.task == 1).unwrap();
    assert_eq!(
        (b.migrations, b.overhead, b.finish),
        (1, 200 * US, Some(7_200 * US))
    );
    assert_eq!(r.counters.overheads.migration_ns, 200 * US);
    let a = r.jobs.iter().find(|j| j.task == 0).unwrap();
    assert_eq!((a.overhead, a.finish), (0, Some(2 * MS)));
}

/// Without `run.overheads` nothing is charged: the results are those of the model-free
/// simulator (exec = demand for every completed job).
#[test]
fn no_overheads_no_charges() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 50}\ntasks:\n  - {name: a, period: 4, wcet: 3}\n  - {name: b, period: 6, wcet: 4}\n  - {name: c, period: 12, wcet: 5}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!(r.counters.overheads, Default::default());
    for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
        assert_eq!((j.exec, j.overhead), (j.demand, 0), "{j:?}");
    }
}

/// The real-time bandwidth cap (RT throttling, 950 ms of every 1 s, counted each 1 ms): a task
/// that keeps one CPU busy (C = T = 100 ms) runs 0-950 ms, the CPU stops until 1 s, and the
/// job released at 900 ms finishes at 1050 ms, 50 ms late; from then on every job is 50 ms
/// late (the backlog never drains), and the CPU stops again at 1950 ms, as job 19 starts: it
/// finishes at 2100 ms. A task at U = 0.9
/// (900 ms of every second) never reaches the cap.
#[test]
fn the_bandwidth_cap_stops_a_cpu_that_used_its_runtime() {
    let full = ts("platform: {cpus: 1}\nrun: {duration: 2000, on_miss: continue, overheads: {rt_runtime: 950ms, rt_period: 1s, tick_period: 1ms}}\ntasks:\n  - {name: a, period: 100, wcet: 100}\n");
    let r = simulate(&full, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    assert_eq!(r.jobs.len(), 20);
    for (k, j) in r.jobs.iter().enumerate() {
        let late = match k {
            0..=8 => 0,
            9..=18 => 50,
            _ => 100, // starts at 1950 ms as the CPU's runtime runs out again: stopped until 2 s
        };
        let want = (k as Time + 1) * 100 * MS + late * MS;
        assert_eq!(j.finish, Some(want), "job {k}");
        assert_eq!(j.missed, k >= 9, "job {k}");
        assert_eq!(
            j.overhead, 0,
            "the stop is the CPU's, not the job's overhead"
        );
    }
    assert_eq!(r.counters.overheads.throttle_ns, 2 * 50 * MS);
    assert_eq!(r.counters.overheads.cpu_ns(), 0);
    // The trace shows each stop as the start of the interval that resumes after it.
    assert!(
        r.intervals
            .iter()
            .any(|i| i.start == 950 * MS && i.overhead == 50 * MS),
        "{:?}",
        r.intervals
    );
    let light = ts("platform: {cpus: 1}\nrun: {duration: 2000, overheads: {rt_runtime: 950ms, rt_period: 1s, tick_period: 1ms}}\ntasks:\n  - {name: a, period: 100, wcet: 90}\n");
    let r = simulate(&light, Options::spec("gedf")).unwrap().result;
    assert!(r
        .jobs
        .iter()
        .all(|j| !j.missed && j.finish == Some(j.release + 90 * MS)));
    assert_eq!(r.counters.overheads.throttle_ns, 0);
}

/// A job dispatched to a stopped CPU waits there until the period ends; the job it replaced
/// leaves the rest of the stop behind (it is the CPU's). 1 CPU, cap 50 of 100 ms: a (C = T =
/// 100 ms, deadline 100) is stopped at 50 ms; b (released at 60 ms, deadline 70 ms, C = 5 ms)
/// preempts it and waits until 100 ms, finishing at 105 ms; a resumes owing nothing.
#[test]
fn the_stop_stays_with_the_cpu() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100, on_miss: continue, overheads: {rt_runtime: 50ms, rt_period: 100ms, tick_period: 1ms}}\ntasks:\n  - {name: a, period: 200, wcet: 60, deadline: 200}\n  - {name: b, period: 200, wcet: 5, deadline: 10, offset: 60}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!((b.start, b.finish), (Some(60 * MS), Some(105 * MS)));
    assert!(b.missed);
    // a ran 0-50, stood stopped 50-60, was preempted; after b it runs its last 10 ms.
    assert_eq!(a.finish, Some(115 * MS));
    assert_eq!(r.counters.overheads.throttle_ns, 50 * MS);
}

/// Ticks go on while a CPU stands stopped: a tick's cost is paid after the stop, not during it.
/// As in the first case with a 10 us tick every 1 ms (the tick at 950 ms lands as the CPU
/// stops): the job released at 900 ms has run 50 ms less its ticks by 950 ms and finishes
/// after the stop plus every tick it met.
#[test]
fn charges_during_a_stop_are_paid_after_it() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 1000, on_miss: continue, overheads: {tick: 10us, tick_period: 1ms, rt_runtime: 950ms, rt_period: 1s}}\ntasks:\n  - {name: a, period: 1000, wcet: 990}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let j = &r.jobs[0];
    // Work 990 ms + one 10 us tick per ms of running and of standing stopped.
    assert!(j.finish.unwrap() > 1040 * MS, "{:?}", j.finish);
    assert_eq!(
        j.exec,
        j.demand + j.overhead,
        "the stop is not CPU time of the job"
    );
    assert_eq!(r.counters.overheads.throttle_ns, 50 * MS);
    // The stopped CPU's ticks are still counted as ticks (charged when it resumes).
    assert_eq!(r.counters.overheads.tick_ns, j.overhead);
}

/// A job aborted while it still pays a charge: it owes 3 ms of decision overhead from its
/// dispatch at 0 and is aborted at its deadline, 2 ms: it ran 2 ms, all of it overhead. The
/// third millisecond was never paid, so it is not in the record (`overhead` ≤ `exec`).
#[test]
fn an_abort_mid_charge_counts_only_the_overhead_paid() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10, on_miss: abort, overheads: {decision: 3ms}}\ntasks:\n  - {name: a, period: 10, wcet: 1, deadline: 2}\n");
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let j = &r.jobs[0];
    assert!(j.aborted && j.finish.is_none());
    assert_eq!((j.exec, j.overhead), (2 * MS, 2 * MS));
    let iv: Vec<_> = r
        .intervals
        .iter()
        .filter(|i| i.task == 0 && i.job == 0)
        .map(|i| (i.start, i.end, i.overhead))
        .collect();
    assert_eq!(
        iv,
        vec![(0, 2 * MS, 3 * MS)],
        "the trace shows the charge it owed"
    );
}

/// A job still running when the run stops at its drain limit (10 ms window + 2 × 10 ms):
/// its CPU time is all it ran, 30 ms — the last stretch included, as in the trace.
#[test]
fn a_job_running_at_the_end_counts_its_last_stretch() {
    let t = ts(
        "platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 50}\n",
    );
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    assert_eq!(r.end, 30 * MS);
    let j = &r.jobs[0];
    assert_eq!((j.finish, j.exec, j.overhead), (None, 30 * MS, 0));
    let ran: Time = r
        .intervals
        .iter()
        .filter(|i| i.task == 0 && i.job == 0)
        .map(|i| i.end - i.start)
        .sum();
    assert_eq!(ran, 30 * MS);
}
