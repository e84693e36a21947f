//! The `linux` scheduler (Linux's class stack: SCHED_DEADLINE with each thread's CBS above
//! SCHED_FIFO/RR above the fair class; docs/linux-classes.md) on hand-worked sets: issue 52's
//! done-when cases, the CBS in the simulator against `linux::cbs`'s own arithmetic, the fair
//! server's stretch, RR slices, admission, and the deadline class against `gedf-dist:heap`.

mod common;

use common::{arb_dag_taskset, arb_structured_taskset, arb_taskset};
use proptest::prelude::*;
use rtsched_model::results::{Interval, RunResult};
use rtsched_model::{
    parse_taskset, Behaviour, ExecModel, Format, OnMiss, SchedPolicy, Task, TaskSet, Time,
};
use rtsched_policies::linux::{Cbs, Charged, DlAttr, Wakeup};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Options};
use std::collections::HashMap;

const MS: Time = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "linux.yaml").unwrap()
}

fn run(t: &TaskSet, spec: &str) -> RunResult {
    simulate(t, Options::spec(spec).intervals(true).policy_stats(true))
        .unwrap()
        .result
}

fn task(r: &RunResult, name: &str) -> u32 {
    r.task_names.iter().position(|n| n == name).unwrap() as u32
}

fn on_cpu<'a>(r: &'a RunResult, name: &str) -> impl Iterator<Item = &'a Interval> + 'a {
    let t = task(r, name);
    r.intervals.iter().filter(move |i| i.task == t)
}

/// CPU time `name` got in `[from, to)`.
fn served(r: &RunResult, name: &str, from: Time, to: Time) -> Time {
    on_cpu(r, name)
        .map(|i| i.end.min(to).saturating_sub(i.start.max(from)))
        .sum()
}

fn stat(r: &RunResult, k: &str) -> f64 {
    r.measurements.get(k).copied().unwrap_or(f64::NAN)
}

/// Issue 52: a deadline task (runtime 2 ms, deadline 5 ms, period 10 ms, WCET 2 ms) beside a
/// FIFO task of priority 50 (period 4 ms, WCET 1 ms) on one CPU always responds in exactly
/// 2 ms: the deadline class is above the RT class, whatever the priority.
#[test]
fn a_deadline_task_responds_in_its_runtime_beside_a_fifo_task() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 1s}\ntasks:\n\
                - {name: dl, policy: deadline, runtime: 2, deadline: 5, period: 10, wcet: 2}\n\
                - {name: ff, policy: fifo, priority: 50, period: 4, wcet: 1}\n");
    let r = run(&t, "linux");
    let dl = task(&r, "dl");
    let jobs: Vec<_> = r.jobs.iter().filter(|j| j.task == dl).collect();
    assert_eq!(jobs.len(), 100);
    for j in &jobs {
        assert_eq!(j.response(), Some(2 * MS), "job {}", j.job);
    }
    // The FIFO task runs around it and misses nothing (U = 0.45).
    assert!(r.jobs.iter().all(|j| !j.missed));
    assert_eq!(
        r.counters.throttles,
        Some(100),
        "each job uses its runtime exactly"
    );
}

/// Issue 52: a deadline task whose jobs want 4 ms against its 2 ms runtime per 10 ms gets at
/// most 20 % of the CPU, while a FIFO task needing 7 ms of each 10 ms misses nothing: the CPU
/// idles while the deadline task is throttled (the CBS isolates the FIFO task from the
/// overrun). Negative control: with the overrun not throttled (runtime = demand = 4 ms) the
/// FIFO task misses.
#[test]
fn an_overrunning_deadline_task_gets_its_bandwidth_and_no_more() {
    let set = |runtime: u32| {
        ts(&format!(
            "platform: {{cpus: 1}}\nrun: {{duration: 1s}}\ntasks:\n\
             - {{name: dl, policy: deadline, runtime: {runtime}, period: 10, wcet: 2, execution_times: [4]}}\n\
             - {{name: ff, policy: fifo, priority: 50, period: 10, wcet: 7}}\n"
        ))
    };
    let r = run(&set(2), "linux");
    let end = 1000 * MS;
    let share = served(&r, "dl", 0, end) as f64 / end as f64;
    assert!(share <= 0.2 + 1e-9, "deadline task got {share}");
    assert!(share > 0.19, "{share}");
    let ff = task(&r, "ff");
    assert!(
        r.jobs.iter().filter(|j| j.task == ff).all(|j| !j.missed),
        "the FIFO task misses nothing"
    );
    // The CPU idles while the deadline task is throttled: 10 % of the time.
    let busy: Time = r
        .intervals
        .iter()
        .map(|i| i.end.min(end) - i.start.min(end))
        .sum();
    assert!((busy as f64 / end as f64 - 0.9).abs() < 0.01, "busy {busy}");
    // Throttled once a period (the last one still throttled at the end), per task and in all.
    assert!(stat(&r, "dl.dl.throttles") >= 99.0);
    assert_eq!(
        r.counters.throttles,
        Some(stat(&r, "dl.dl.throttles") as u64)
    );
    assert_eq!(
        r.counters.replenishments,
        Some(stat(&r, "dl.dl.replenishments") as u64)
    );
    // The control: a 4 ms reservation lets it take 40 %, and the FIFO task (7 ms) misses.
    let r = run(&set(4), "linux");
    assert!(r.jobs.iter().filter(|j| j.task == ff).any(|j| j.missed));
}

/// Issue 52: a FIFO task that never sleeps leaves a fair hog 5 % ± 1 % of the CPU — the fair
/// server's 50 ms per second, in one stretch at the start of each second once it has been
/// starved (the pattern measured on this machine: docs/linux-classes.md). Negative control:
/// without the fair server and RT throttling the hog gets nothing.
#[test]
fn a_fifo_hog_leaves_a_fair_hog_five_percent() {
    let set = "platform: {cpus: 1}\nrun: {duration: 3s}\ntasks:\n\
               - {name: ff, policy: fifo, priority: 50, period: 100, wcet: 100}\n\
               - {name: hog, class: fair, behaviour: hog}\n";
    // Its share of the 3 s run (the FIFO task's late jobs run on after it).
    let share = |r: &RunResult| served(r, "hog", 0, 3000 * MS) as f64 / (3000 * MS) as f64;
    let r = run(&ts(set), "linux");
    assert!(
        (share(&r) - 0.05).abs() <= 0.01,
        "fair hog got {}",
        share(&r)
    );
    assert_eq!(
        stat(&r, "dl.fair_server.activations"),
        1.0,
        "deferred once, then on time"
    );
    // 950-1050 ms (zero laxity, then its next period at once), then 2000-2050 ms.
    assert_eq!(served(&r, "hog", 0, 950 * MS), 0);
    assert_eq!(served(&r, "hog", 950 * MS, 1050 * MS), 100 * MS);
    assert_eq!(served(&r, "hog", 1050 * MS, 2000 * MS), 0);
    assert_eq!(served(&r, "hog", 2000 * MS, 2050 * MS), 50 * MS);
    // RT throttling alone (no fair server) gives the same 5 %, at the end of each RT period.
    let r = run(&ts(set), "linux:fair_server=off");
    assert!((share(&r) - 0.05).abs() <= 0.01, "{}", share(&r));
    assert_eq!(served(&r, "hog", 950 * MS, 1000 * MS), 50 * MS);
    // Neither: the hog starves.
    let r = run(&ts(set), "linux:fair_server=off,rt_throttle=off");
    assert_eq!(share(&r), 0.0);
}

/// Issue 52: deadline tasks of total bandwidth 1.0 on one CPU are refused by admission, with
/// the bandwidths and the limit; 0.9 fits (0.9 + the fair server's 0.05 = 0.95).
#[test]
fn admission_refuses_what_the_kernel_refuses() {
    let set = |a: u32, b: u32| {
        ts(&format!(
            "platform: {{cpus: 1}}\ntasks:\n\
             - {{name: a, policy: deadline, period: 10, wcet: {a}}}\n\
             - {{name: b, policy: deadline, period: 10, wcet: {b}}}\n"
        ))
    };
    let e = rtsched_policies::build("linux", &set(5, 5)).err().unwrap();
    assert!(
        e.contains("task 'b'") && e.contains("admission refused (EBUSY)"),
        "{e}"
    );
    assert!(
        e.contains("limit 0.950000 (996147/2^20)") && e.contains("0.049999 the fair servers'"),
        "{e}"
    );
    assert!(rtsched_policies::build("linux", &set(5, 4)).is_ok());
    // Without the fair server 1.0 still exceeds 0.95; 0.95 itself fits.
    assert!(rtsched_policies::build("linux:fair_server=off", &set(5, 5)).is_err());
    // sched_setattr's parameter rule, for a set without policies too: runtime = WCET < 1024 ns.
    let tiny = ts("platform: {cpus: 1}\ntasks:\n  - {name: t, period: 10, wcet: 0.0005}\n");
    let e = rtsched_policies::build("linux", &tiny).err().unwrap();
    assert!(
        e.contains("task 't': field 'wcet'")
            && e.contains("EINVAL")
            && e.contains("give it 'policy'"),
        "{e}"
    );
}

/// The simulator's throttles against `linux::cbs`'s own arithmetic: a 3 ms / 7 ms task whose
/// jobs want 5 ms runs, alone on a CPU, exactly the intervals the CBS computes by hand —
/// woken at its release, run until exhausted, replenished at the next period.
#[test]
fn throttling_in_the_simulator_follows_the_cbs() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 70ms}\ntasks:\n\
                - {name: a, policy: deadline, runtime: 3, period: 7, wcet: 3, execution_times: [5]}\n");
    let r = run(&t, "linux");
    let got: Vec<(Time, Time)> = on_cpu(&r, "a").map(|i| (i.start, i.end)).collect();
    // The same by the CBS alone: the task is always ready (its backlog grows), so it runs
    // whenever it is not throttled.
    let mut cbs = Cbs::new(DlAttr::new(3 * MS, 7 * MS, 7 * MS));
    assert_eq!(cbs.wakeup(0).rule, Wakeup::NewPeriod);
    let (mut now, mut want) = (0, Vec::new());
    while now < 70 * MS {
        let end = cbs.exhaust_at(now, None).unwrap();
        match cbs.charge(end, end - now, None) {
            Charged::Throttled { until } => {
                want.push((now, end));
                cbs.replenish(until);
                now = until;
            }
            other => panic!("{other:?}"),
        }
    }
    // Merge the simulator's intervals split at job boundaries.
    let mut merged: Vec<(Time, Time)> = Vec::new();
    for (s, e) in got {
        match merged.last_mut() {
            Some(l) if l.1 == s => l.1 = e,
            _ => merged.push((s, e)),
        }
    }
    let n = merged.len().min(want.len());
    assert!(n >= 9);
    assert_eq!(merged[..n], want[..n]);
}

/// A thread throttled as its job completes asks for no replenishment wake-up: nothing sees its
/// CBS before its next job, whose release replenishes it as of the timer's instant, or the
/// run's end, which replenishes it if the timer was due by then (`Policy::finish`). `a` (2 ms
/// of 2 ms per 10 ms, sporadic: its next job far later) throttles at 2 ms, due back at 10 ms,
/// while `b` runs 2-17 ms; the run ends at 17 ms, after a's replenishment instant and before
/// b's (30 ms): one replenishment, as a timer at 10 ms would have made (without `finish`,
/// none).
#[test]
fn a_replenishment_no_event_observes_is_counted_by_the_runs_end() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10ms}\ntasks:\n\
                - {name: a, policy: deadline, runtime: 2, period: 10, max_interarrival: 10s, wcet: 2}\n\
                - {name: b, policy: deadline, runtime: 15, period: 30, wcet: 15}\n");
    let r = run(&t, "linux");
    let runs = |n| on_cpu(&r, n).map(|i| (i.start, i.end)).collect::<Vec<_>>();
    assert_eq!(runs("a"), [(0, 2 * MS)]);
    assert_eq!(runs("b"), [(2 * MS, 17 * MS)]);
    assert_eq!(r.end, 17 * MS);
    let counts = |n: &str| {
        (
            stat(&r, &format!("dl.{n}.throttles")),
            stat(&r, &format!("dl.{n}.replenishments")),
        )
    };
    assert_eq!((counts("a"), counts("b")), ((1.0, 1.0), (1.0, 0.0)));
}

/// SCHED_RR: two tasks of one priority that never sleep share the CPU in 100 ms slices (25
/// ticks of 4 ms); SCHED_FIFO ones would not.
#[test]
fn rr_tasks_take_turns_in_slices() {
    let set = |p: &str| {
        ts(&format!(
            "platform: {{cpus: 1}}\nrun: {{duration: 1s}}\ntasks:\n\
             - {{name: a, policy: {p}, priority: 10, period: 1s, wcet: 1s}}\n\
             - {{name: b, policy: {p}, priority: 10, period: 1s, wcet: 1s}}\n"
        ))
    };
    let r = run(&set("rr"), "linux:rt_throttle=off");
    let a: Vec<(Time, Time)> = on_cpu(&r, "a").map(|i| (i.start, i.end)).take(3).collect();
    assert_eq!(
        a,
        vec![(0, 100 * MS), (200 * MS, 300 * MS), (400 * MS, 500 * MS)]
    );
    let r = run(&set("fifo"), "linux:rt_throttle=off");
    assert_eq!(served(&r, "b", 0, 1000 * MS), 0);
}

/// `other` tasks with job records: periodic SCHED_OTHER tasks run in the fair class below a
/// FIFO task, with records, deadlines = periods.
#[test]
fn periodic_other_tasks_have_job_records() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100ms}\ntasks:\n\
                - {name: ff, policy: fifo, priority: 1, period: 10, wcet: 5}\n\
                - {name: o1, policy: other, period: 20, wcet: 4}\n\
                - {name: o2, policy: other, nice: 5, period: 20, wcet: 4}\n");
    let r = run(&t, "linux");
    let o1 = task(&r, "o1");
    assert_eq!(r.jobs.iter().filter(|j| j.task == o1).count(), 5);
    assert!(r.jobs.iter().all(|j| j.finish.is_some()));
    // The FIFO task is never delayed by them.
    let ff = task(&r, "ff");
    assert!(r
        .jobs
        .iter()
        .filter(|j| j.task == ff)
        .all(|j| j.response() == Some(5 * MS)));
}

/// Give `ts`'s tasks Linux policies by `pick` (per task: 0-1 deadline, 2 fifo, 3 rr, 4 other)
/// with priorities 1..99, and add a fair hog when `hog`.
fn with_policies(mut ts: TaskSet, pick: &[u8], hog: bool) -> TaskSet {
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        let k = pick[i % pick.len()];
        t.policy = Some(match k {
            0 | 1 => SchedPolicy::Deadline { runtime: None },
            2 => SchedPolicy::Fifo,
            3 => SchedPolicy::Rr,
            _ => SchedPolicy::Other {
                nice: (i as i8 % 7) - 3,
            },
        });
        t.priority = Some(1 + (t.priority.unwrap_or(1) * 17 + i as u32) % 99);
    }
    if hog {
        ts.tasks.push(Task::fair("hog", 0, Behaviour::Hog));
    }
    ts
}

/// What every run keeps: each finished job got exactly its demand in its intervals (the
/// fair class's balancing costs nothing here), nothing ran for an unfinished one beyond its
/// demand, misses agree with finishes, and no CPU runs two things at once.
fn accounting(ts: &TaskSet, r: &RunResult) -> Result<(), TestCaseError> {
    let mut work: HashMap<(u32, u64), Time> = HashMap::new();
    for iv in &r.intervals {
        prop_assert!(iv.end > iv.start);
        *work.entry((iv.task, iv.job)).or_default() += iv.end - iv.start;
    }
    for j in &r.jobs {
        let got = work.get(&(j.task, j.job)).copied().unwrap_or(0);
        match j.finish {
            Some(f) => {
                prop_assert_eq!(got, j.demand, "job {}/{}", j.task, j.job);
                prop_assert_eq!(j.missed, f > j.deadline);
            }
            None => prop_assert!(got < j.demand || j.aborted),
        }
    }
    let mut per_cpu: Vec<Vec<(Time, Time)>> = vec![Vec::new(); ts.platform.cpus as usize];
    for iv in &r.intervals {
        per_cpu[iv.cpu as usize].push((iv.start, iv.end));
    }
    for ivs in &mut per_cpu {
        ivs.sort();
        for w in ivs.windows(2) {
            prop_assert!(w[0].1 <= w[1].0, "overlap on a CPU: {:?}", w);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Sets of every structure (regions, critical sections, DAGs; overruns; aborts) with every
    /// Linux policy mixed, a fair hog or none, under each option, keep the protocol (the
    /// checker panics on a violation) and the work accounting.
    #[test]
    fn mixed_policies_keep_the_protocol_and_the_accounting(
        ts in prop_oneof![arb_taskset(), arb_structured_taskset(), arb_dag_taskset()],
        pick in proptest::collection::vec(0u8..5, 1..6),
        hog in any::<bool>(),
        opt in 0usize..4,
    ) {
        let ts = with_policies(ts, &pick, hog);
        let spec = ["linux", "linux:reclaim", "linux:fair_server=off", "linux:rt_throttle=off,rr_timeslice=2ms,tick=1ms"][opt];
        let Ok(p) = rtsched_policies::build(spec, &ts) else {
            return Ok(()); // admission refused it
        };
        let mut policy = ProtocolChecker::new(p, ts.platform.cpus);
        let r = simulate(&ts, Options::policy(&mut policy).intervals(true)).unwrap().result;
        accounting(&ts, &r)?;
    }

    /// The deadline class is `gedf-dist:heap` when nothing overruns: on deadline-only sets
    /// with runtime = WCET, every job run for its WCET and no deadline missed, `linux` runs
    /// the same intervals on the same CPUs (the CBS deadline is the job's: each job wakes its
    /// lane with a new period and exhausts its runtime as it completes).
    #[test]
    fn without_overruns_the_deadline_class_is_gedf_dist_heap(ts in arb_taskset()) {
        let mut ts = ts;
        ts.run.execution = ExecModel::Wcet;
        ts.run.on_miss = OnMiss::Continue;
        let Ok(p) = rtsched_policies::build("linux", &ts) else {
            return Ok(());
        };
        let mut p = p;
        let a = simulate(&ts, Options::spec("gedf-dist:heap").intervals(true)).unwrap().result;
        prop_assume!(a.jobs.iter().all(|j| !j.missed));
        let b = simulate(&ts, Options::policy(p.as_mut()).intervals(true)).unwrap().result;
        let sorted = |r: &RunResult| {
            let mut v: Vec<_> = r.intervals.iter().map(|i| (i.start, i.cpu, i.end, i.task, i.job)).collect();
            v.sort();
            v
        };
        let (x, y) = (sorted(&a), sorted(&b));
        if let Some(i) = (0..x.len().max(y.len())).find(|&i| x.get(i) != y.get(i)) {
            let tasks: Vec<_> = ts.tasks.iter().map(|t| (t.period, t.deadline, t.wcet, t.offset)).collect();
            prop_assert!(false, "m={} tasks (T, D, C, O) {:?}: first difference at {}: gedf-dist {:?}, linux {:?}", ts.platform.cpus, tasks, i, x.get(i), y.get(i));
        }
        prop_assert_eq!(&a.jobs, &b.jobs);
    }
}

/// A set the property test above found looping at one instant (before `Cbs::charge` throttled
/// an entity charged 0 ns with no runtime left): constrained deadline tasks woken just before
/// their deadlines get a revised runtime of 0, and their exhaustion timer fired at the instant
/// it was armed, forever. It now ends, under the protocol checker.
#[test]
fn a_lane_left_no_runtime_is_throttled_at_once() {
    let t = ts(HANG);
    let mut p = ProtocolChecker::new(
        rtsched_policies::build("linux:fair_server=off", &t).unwrap(),
        t.platform.cpus,
    );
    let r = simulate(&t, Options::policy(&mut p).intervals(true))
        .unwrap()
        .result;
    accounting(&t, &r).unwrap();
    assert!(r.counters.throttles.unwrap() > 0);
}

const HANG: &str = r#"platform: {cpus: 2}
run: {duration: "15ms", seed: 9565048147950523701, on_miss: continue, execution: {model: overrun, ratio: 1.5, probability: 0.3}, overheads: {decision: "0", context_switch: "0", migration: "0", release: "0", tick: "0", tick_period: "1ms", abort_handler: "0"}}
resources: ["R0", "R1", "R2"]
tasks:
  - {name: "t0", period: "3500us", wcet: "851666ns", deadline: "2555us", offset: "500us", priority: 52, policy: other, nice: -3, cpu: 0, regions: [["851666ns"]]}
  - {name: "t1", period: "1500us", wcet: "780us", deadline: "1185us", offset: "1ms", priority: 36, policy: deadline, cpu: 1, regions: [["780us"]]}
  - {name: "t2", period: "500us", wcet: "305us", deadline: "305us", priority: 37, policy: fifo, cpu: 0, sections: [{resource: "R0", region: 0, thread: 0, start: "88450ns", length: "36813ns"}]}
  - {name: "t3", period: "2ms", wcet: "273333ns", deadline: "1500us", offset: "750us", priority: 55, policy: other, cpu: 1, regions: [["273333ns"]], sections: [{resource: "R2", region: 0, thread: 0, start: "101133ns", length: "20664ns"}]}
  - {name: "t4", period: "2ms", wcet: "880us", deadline: "1ms", priority: 22, policy: deadline, cpu: 1, sections: [{resource: "R2", region: 0, thread: 0, start: "35200ns", length: "143616ns"}]}
  - {name: "t5", period: "1500us", wcet: "135us", deadline: "840us", offset: "250us", priority: 57, policy: fifo, cpu: 0, sections: [{resource: "R0", region: 0, thread: 0, start: "27us", length: "8640ns"}]}
  - {name: "t6", period: "1ms", wcet: "950us", deadline: "950us", offset: "1ms", priority: 41, policy: other, nice: 3, cpu: 0, regions: [["950us"]], sections: [{resource: "R1", region: 0, thread: 0, start: "47500ns", length: "27075ns"}, {resource: "R2", region: 0, thread: 0, start: "47501ns", length: "27073ns"}]}
  - {name: "t7", period: "2500us", wcet: "812500ns", deadline: "1650us", offset: "500us", priority: 25, policy: deadline, cpu: 1, regions: [["812500ns"]], sections: [{resource: "R2", region: 0, thread: 0, start: "471250ns", length: "102375ns"}]}
  - {name: "hog", class: fair, nice: 0, behaviour: hog}"#;

/// The negative control of the differential test: with jobs overrunning their runtime, the
/// CBS throttles them and the schedules part.
#[test]
fn with_overruns_the_deadline_class_throttles_where_gedf_dist_does_not() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 100ms}\ntasks:\n\
                - {name: a, period: 10, wcet: 3, execution_times: [5]}\n\
                - {name: b, period: 10, wcet: 3}\n\
                - {name: c, period: 10, wcet: 3}\n");
    let a = run(&t, "gedf-dist:heap");
    let b = run(&t, "linux");
    assert_ne!(a.intervals, b.intervals);
    assert!(b.counters.throttles.unwrap() >= 10);
    assert_eq!(a.counters.throttles, None, "no CBS, no counter");
    // In the results document, as the column catalogue places them: null without a CBS.
    let counters = |r: &RunResult| r.to_json_value(false)["counters"].clone();
    assert_eq!(counters(&b)["throttles"], b.counters.throttles.unwrap());
    assert!(counters(&b)["replenishments"].as_u64().unwrap() >= 10);
    assert!(counters(&a)["throttles"].is_null() && counters(&a)["replenishments"].is_null());
}
