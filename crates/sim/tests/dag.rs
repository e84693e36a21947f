//! DAG tasks in the simulator (docs/dag.md). A fork-join task is the DAG `Dag::from_regions`
//! makes of it (PAWS §3's regions: every thread of region k precedes every thread of region
//! k+1); written as a `dag:` in a file it must give, under every scheduler, job for job the
//! same records and the same execution intervals as its regions. And a small diamond worked by
//! hand under global EDF.

mod common;
mod worked;

use proptest::prelude::*;
use rtsched_model::file::to_yaml;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Dag, Format, Region, TaskSet};
use rtsched_sim::{simulate, Options};
use worked::MS;

/// `ts` with every task written as a DAG: regions (or the one sequential thread) through
/// `Dag::from_regions`, sections moved to their node; then written to YAML and read back, so
/// the file path (writer and reader) is what is compared.
fn as_dag(ts: &TaskSet) -> TaskSet {
    let mut d = ts.clone();
    for t in &mut d.tasks {
        let regions = if t.regions.is_empty() {
            vec![Region {
                threads: vec![t.wcet],
            }]
        } else {
            std::mem::take(&mut t.regions)
        };
        let mut first = vec![0u32];
        for r in &regions {
            first.push(first.last().unwrap() + r.threads.len() as u32);
        }
        for s in &mut t.sections {
            s.thread += first[s.region as usize];
            s.region = 0;
        }
        t.dag = Some(Dag::from_regions(&regions));
    }
    let text = to_yaml(&d);
    assert!(text.contains("dag: {nodes: {\"r1.t1\""), "{text}");
    parse_taskset(&text, Format::Yaml, "as-dag.yaml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Intervals as (cpu, task, job, thread within its region, start, end, overhead); a DAG
/// task's node `r{k}.t{j}` is thread j - 1.
fn intervals(r: &RunResult) -> Vec<(u32, u32, u64, u32, u64, u64, u64)> {
    r.intervals
        .iter()
        .map(|i| {
            let thread = match r.node_names[i.task as usize].get(i.thread as usize) {
                Some(n) => n.rsplit(".t").next().unwrap().parse::<u32>().unwrap() - 1,
                None => i.thread,
            };
            (i.cpu, i.task, i.job, thread, i.start, i.end, i.overhead)
        })
        .collect()
}

/// Runs `ts` both ways under `spec`: None if the policy refuses the set.
fn both(ts: &TaskSet, spec: &str) -> Option<(RunResult, RunResult)> {
    rtsched_policies::build(spec, ts).ok()?;
    let run = |t: &TaskSet| {
        let out = simulate(t, Options::spec(spec).intervals(true).policy_stats(true)).unwrap();
        (out.result, out.stats)
    };
    let (a, sa) = run(ts);
    let (b, sb) = run(&as_dag(ts));
    assert_eq!(sa, sb, "{spec}: policy stats");
    Some((a, b))
}

fn same(ts: &TaskSet, spec: &str) {
    if let Some((a, b)) = both(ts, spec) {
        assert_eq!(a.jobs, b.jobs, "{spec}: job records");
        assert_eq!(intervals(&a), intervals(&b), "{spec}: intervals");
        assert_eq!(a.counters, b.counters, "{spec}: counters");
        assert_eq!(a.end, b.end, "{spec}: end");
    }
}

/// The PAWS hand-worked shape (regions [2, [4, 4, 4], 2]) beside a sequential task, under the
/// three schedulers the issue names (PAWS with its readings' options too) and gedf-seq.
#[test]
fn a_fork_join_task_written_as_a_dag_gives_the_same_schedule() {
    let ts = worked::ts_named(
        "platform: {cpus: 2}\nrun: {duration: 60}\ntasks:\n  - {name: p, period: 20, deadline: 18, regions: [2, [4, 4, 4], 2]}\n  - {name: s, period: 10, wcet: 3, deadline: 5}\n  - {name: q, period: 30, regions: [[1, 2], 3, [2, 2, 2, 1]], sections: [{resource: r, region: 2, thread: 1, start: 0.5, length: 1}]}\n",
        "fj.yaml",
    );
    for spec in [
        "gedf",
        "paws",
        "paws:master=joining",
        "paws:pull=inversion",
        "federated",
        "gedf-seq",
    ] {
        let (a, b) = both(&ts, spec).unwrap();
        assert!(!a.jobs.is_empty());
        assert_eq!(a.jobs, b.jobs, "{spec}");
        assert_eq!(intervals(&a), intervals(&b), "{spec}");
        assert_eq!(a.counters, b.counters, "{spec}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random fork-join sets (regions, critical sections, execution-time models, aborts):
    /// the DAG form is the regions form job for job, under every registered scheduler that
    /// takes the set.
    #[test]
    fn fork_join_sets_as_dags_are_the_same_job_for_job(ts in common::arb_structured_taskset()) {
        // Not `linux`: its deadline class reserves a CBS per thread, as SCHED_DEADLINE does (a
        // fork-join lane is one thread over every region, with the sum of its regions' work as
        // runtime; a DAG node a thread of its own), so the two forms are different reservations
        // and may be throttled, replenished and placed differently (docs/linux-classes.md).
        for info in rtsched_policies::POLICIES.iter().filter(|i| i.name != "linux") {
            same(&ts, info.name);
        }
    }
}

/// The diamond a(2) -> {b(4), c(2)} -> d(1) (p, D = T = 20) beside s (C 3, T 10, D 4), under
/// gedf on 2 CPUs. By hand:
///   0: a (deadline 20) and s (deadline 4) start, one on each CPU.
///   2: a completes; b and c are ready together (forked where a ran). One CPU is free: b
///      (equal deadlines: the lower node index) runs [2, 6]; c waits.
///   3: s completes; c runs [3, 5].
///   5: c completes; d still waits for b (a node is ready when its last predecessor is done).
///   6: b completes; d runs [6, 7]; p finishes at 7 (its critical path a, b, d = 7).
///  10: s's second job runs [10, 13].
#[test]
fn a_diamond_under_gedf_by_hand() {
    let ts = worked::ts_named(
        "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - name: p\n    period: 20\n    dag: {nodes: {a: 2, b: 4, c: 2, d: 1}, edges: [[a, b], [a, c], [b, d], [c, d]]}\n  - {name: s, period: 10, wcet: 3, deadline: 4}\n",
        "diamond.yaml",
    );
    let r = simulate(&ts, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let mut got: Vec<(String, u64, u64)> = r
        .intervals
        .iter()
        .map(|i| {
            let who = match r.node_names[i.task as usize].get(i.thread as usize) {
                Some(n) => format!("p.{n}"),
                None => r.task_names[i.task as usize].clone(),
            };
            (who, i.start / MS, i.end / MS)
        })
        .collect();
    got.sort_by_key(|x| (x.1, x.0.clone()));
    let want: Vec<(String, u64, u64)> = [
        ("p.a", 0, 2),
        ("s", 0, 3),
        ("p.b", 2, 6),
        ("p.c", 3, 5),
        ("p.d", 6, 7),
        ("s", 10, 13),
    ]
    .into_iter()
    .map(|(w, a, b)| (w.to_string(), a, b))
    .collect();
    assert_eq!(got, want);
    let finish: Vec<(u32, u64)> = r
        .jobs
        .iter()
        .map(|j| (j.task, j.finish.unwrap() / MS))
        .collect();
    assert_eq!(finish, vec![(0, 7), (1, 3), (1, 13)]);
    assert!(r.jobs.iter().all(|j| !j.missed));
    // Each of a, b and c ran on one CPU without moving; d ran where one of b, c finished.
    let mut out = Vec::new();
    rtsched_model::results::write_trace(&[&r], &mut out).unwrap();
    let trace = String::from_utf8(out).unwrap();
    for n in [
        "\"p/0.a\"",
        "\"p/0.b\"",
        "\"p/0.c\"",
        "\"p/0.d\"",
        "\"s/0\"",
    ] {
        assert!(trace.contains(n), "the trace names {n}: {trace}");
    }
}

/// Two sources and two sinks: the job starts with both sources and ends when both sinks have
/// finished. x(1), y(3) -> z(2); y -> w(4), alone on 2 CPUs under gedf: x [0,1] and y [0,3];
/// at 3 z and w are ready together: z [3,5], w [3,7]; the job finishes at 7.
#[test]
fn several_sources_and_sinks() {
    let ts = worked::ts_named(
        "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, dag: {nodes: {x: 1, y: 3, z: 2, w: 4}, edges: [[x, z], [y, z], [y, w]]}}\n",
        "two.yaml",
    );
    for spec in ["gedf", "paws"] {
        let r = simulate(&ts, Options::spec(spec).intervals(true))
            .unwrap()
            .result;
        let mut iv: Vec<(u32, u64, u64)> = r
            .intervals
            .iter()
            .map(|i| (i.thread, i.start / MS, i.end / MS))
            .collect();
        iv.sort();
        assert_eq!(
            iv,
            vec![(0, 0, 1), (1, 0, 3), (2, 3, 5), (3, 3, 7)],
            "{spec}"
        );
        assert_eq!(r.jobs[0].finish, Some(7 * MS), "{spec}");
    }
    // gedf-seq, and federated, whose light task (C 10 <= D 20) runs sequentially: one node at
    // a time, the lowest index first: x, y, z, w back to back.
    for spec in ["gedf-seq", "federated"] {
        let r = simulate(&ts, Options::spec(spec).intervals(true))
            .unwrap()
            .result;
        let mut iv: Vec<(u64, u32, u64)> = r
            .intervals
            .iter()
            .map(|i| (i.start / MS, i.thread, i.end / MS))
            .collect();
        iv.sort();
        assert_eq!(
            iv,
            vec![(0, 0, 1), (1, 1, 4), (4, 2, 6), (6, 3, 10)],
            "{spec}"
        );
    }
}

/// Federated scheduling with a heavy DAG task: the diamond a(2) -> {b(4), c(2)} -> d(1) with
/// D = 8 has C = 9 > D, L = 7 (the DAG's critical path, not a region's), so it gets
/// ⌈(C − L)/(D − L)⌉ = ⌈2/1⌉ = 2 CPUs of its own and runs there as under global EDF: a [0,2],
/// b [2,6] beside c [2,4], d [6,7]. The light s (C 3, T 10) runs on the third CPU alone.
#[test]
fn a_heavy_dag_task_gets_its_cores_under_federated() {
    let ts = worked::ts_named(
        "platform: {cpus: 3}\nrun: {duration: 20}\ntasks:\n  - name: p\n    period: 20\n    deadline: 8\n    dag: {nodes: {a: 2, b: 4, c: 2, d: 1}, edges: [[a, b], [a, c], [b, d], [c, d]]}\n  - {name: s, period: 10, wcet: 3}\n",
        "heavy.yaml",
    );
    assert_eq!(
        (ts.tasks[0].wcet, ts.tasks[0].critical_path()),
        (9 * MS, 7 * MS)
    );
    let r = simulate(&ts, Options::spec("federated").intervals(true))
        .unwrap()
        .result;
    let cpus = |task: u32| {
        let mut c: Vec<u32> = r
            .intervals
            .iter()
            .filter(|i| i.task == task)
            .map(|i| i.cpu)
            .collect();
        c.sort();
        c.dedup();
        c
    };
    let (p, s) = (cpus(0), cpus(1));
    assert_eq!(p.len(), 2, "p's CPUs {p:?}");
    assert!(s.len() == 1 && !p.contains(&s[0]), "p on {p:?}, s on {s:?}");
    let mut iv: Vec<(u32, u64, u64)> = r
        .intervals
        .iter()
        .filter(|i| i.task == 0)
        .map(|i| (i.thread, i.start / MS, i.end / MS))
        .collect();
    iv.sort();
    assert_eq!(iv, vec![(0, 0, 2), (1, 2, 6), (2, 2, 4), (3, 6, 7)]);
    assert!(r.jobs.iter().all(|j| !j.missed));
}
