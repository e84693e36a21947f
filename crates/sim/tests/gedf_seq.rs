//! `gedf-seq` — global EDF with each parallel job run sequentially — worked by hand, and its
//! properties: it is `gedf` job for job on sequential sets, and on fork-join sets it is `gedf`
//! on the same tasks made sequential (same C); alone, a fork-join job takes its C.

mod worked;

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{Region, Task, TaskSet};
use rtsched_sim::{simulate, Options};
use worked::{arb_sequential, ivs, MS};

const US: u64 = 1_000;

fn ts(yaml: &str) -> TaskSet {
    worked::ts_named(yaml, "gedf-seq.yaml")
}

fn finishes(r: &RunResult) -> Vec<u64> {
    r.jobs.iter().map(|j| j.finish.unwrap() / MS).collect()
}

/// One job, regions [2, [4, 4, 4], 2] ms, on 2 CPUs. gedf-seq: region 0 [0,2]; the fork
/// releases thread 0 [2,6] and holds threads 1 and 2, which follow it, [6,10] and [10,14];
/// region 2 [14,16]: the job takes its C = 16, and CPU 1 idles throughout. gedf runs two
/// threads at once: [2,6] twice, then the third [6,10], region 2 [10,12].
#[test]
fn a_forked_region_runs_one_thread_after_another() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n");
    let r = simulate(&t, Options::spec("gedf-seq").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 2),
            (0, 0, 0, 2, 6),
            (0, 0, 0, 14, 16),
            (0, 0, 1, 6, 10),
            (0, 0, 2, 10, 14)
        ]
    );
    assert_eq!(finishes(&r), vec![16]);
    assert_eq!(
        finishes(&simulate(&t, Options::spec("gedf")).unwrap().result),
        vec![12]
    );
    let stats = simulate(&t, Options::spec("gedf-seq").policy_stats(true))
        .unwrap()
        .stats;
    assert_eq!(stats, vec![("serialised_threads".to_string(), 2.0)]);
}

/// Jobs compete under EDF; a job's held threads wait for their sibling, not for a CPU.
/// 2 CPUs: p (D 10) forks [2, 2, 2] at release; r (D 20, C 6); s (D 30, C 6).
///   gedf-seq: p's thread 0 and r run [0,2]; p's thread 1 (deadline 10) then beats s for
///   CPU 0 [2,4], thread 2 [4,6]; s runs [6,12]. p 6, r 6, s 12.
///   gedf: p's threads 0, 1 [0,2], thread 2 and r [2,4] / [2,8], s [4,10]. p 4, r 8, s 10.
#[test]
fn jobs_compete_under_edf_one_thread_each() {
    let t = ts("platform: {cpus: 2}
run: {duration: 30}
tasks:
  - {name: p, period: 30, deadline: 10, regions: [[2, 2, 2]]}
  - {name: r, period: 30, deadline: 20, wcet: 6}
  - {name: s, period: 30, wcet: 6}
");
    let r = simulate(&t, Options::spec("gedf-seq").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 2),
            (0, 0, 1, 2, 4),
            (0, 0, 2, 4, 6),
            (0, 2, 0, 6, 12),
            (1, 1, 0, 0, 6)
        ]
    );
    assert_eq!(finishes(&r), vec![6, 6, 12]);
    assert_eq!(
        finishes(&simulate(&t, Options::spec("gedf")).unwrap().result),
        vec![4, 8, 10]
    );
}

/// Fork-join sets: each task's C split into regions of threads of random lengths.
fn arb_fork_join() -> impl Strategy<Value = TaskSet> {
    let task = (
        1u64..=20,
        prop::collection::vec(prop::collection::vec(1u64..=20, 1..=4), 1..=3),
        0u64..=5,
        50u64..=100,
    );
    (1u32..=6, prop::collection::vec(task, 1..8), any::<u64>()).prop_map(|(m, tasks, seed)| {
        let tasks = tasks
            .into_iter()
            .enumerate()
            .map(|(i, (p, regions, o, dpct))| {
                let period = p * 500 * US;
                let mut t = Task::periodic(format!("t{i}"), period, 0);
                t.regions = regions
                    .iter()
                    .map(|r| Region {
                        threads: r.iter().map(|&x| x * 10 * US).collect(),
                    })
                    .collect();
                t.wcet = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
                t.deadline = period * dpct / 100;
                t.offset = o * 250 * US;
                t
            })
            .collect();
        let mut ts = TaskSet::new(m, tasks);
        ts.run.duration = 40 * 500 * US;
        ts.run.seed = seed;
        ts
    })
}

/// (task, job, start, finish, missed) of each job.
type JobOutcome = (u32, u64, Option<u64>, Option<u64>, bool);

fn jobs(r: &RunResult) -> Vec<JobOutcome> {
    r.jobs
        .iter()
        .map(|j| (j.task, j.job, j.start, j.finish, j.missed))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Without parallel regions there is nothing to hold: gedf-seq is gedf, job for job.
    #[test]
    fn with_sequential_jobs_gedf_seq_is_global_edf(ts in arb_sequential()) {
        prop_assert_eq!(jobs(&simulate(&ts, Options::spec("gedf-seq")).unwrap().result), jobs(&simulate(&ts, Options::spec("gedf")).unwrap().result));
    }

    /// A sequentialised fork-join job is, to EDF, a sequential job of the same C: gedf-seq on
    /// fork-join tasks schedules every job as gedf does on the same tasks without regions
    /// (execution = WCET, so each thread's demand is its WCET and the job's is C).
    #[test]
    fn on_fork_join_sets_gedf_seq_is_gedf_on_the_tasks_made_sequential(ts in arb_fork_join()) {
        let mut flat = ts.clone();
        flat.tasks.iter_mut().for_each(|t| t.regions.clear());
        prop_assert_eq!(jobs(&simulate(&ts, Options::spec("gedf-seq")).unwrap().result), jobs(&simulate(&flat, Options::spec("gedf")).unwrap().result));
    }

    /// Alone on any number of CPUs, a fork-join job takes exactly its C, and never runs two
    /// threads at once.
    #[test]
    fn alone_a_job_takes_its_c(regions in prop::collection::vec(prop::collection::vec(1u64..40, 1..5), 1..5), m in 1u32..=6) {
        let mut task = Task::periodic("p", 100 * MS, 0);
        task.regions = regions.iter().map(|r| Region { threads: r.iter().map(|&x| x * 100 * US).collect() }).collect();
        task.wcet = task.regions.iter().flat_map(|r| r.threads.iter()).sum();
        let mut t = TaskSet::new(m, vec![task]);
        t.run.duration = 100 * MS;
        let r = simulate(&t, Options::spec("gedf-seq").intervals(true)).unwrap().result;
        prop_assert_eq!(r.jobs[0].finish, Some(t.tasks[0].wcet));
        let mut iv: Vec<_> = r.intervals.iter().map(|i| (i.start, i.end)).collect();
        iv.sort();
        for w in iv.windows(2) {
            prop_assert!(w[0].1 <= w[1].0, "two threads at once: {:?}", w);
        }
    }
}
