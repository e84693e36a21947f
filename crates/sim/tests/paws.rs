//! PAWS (§4, Rules A–F) worked by hand in the simulator, and its properties: with sequential
//! jobs it is global EDF, job for job; with parallel jobs the victim choice is seeded.

mod worked;

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::TaskSet;
use rtsched_sim::{simulate, Options};
use worked::{arb_sequential, ivs, MS};

fn ts(yaml: &str) -> TaskSet {
    worked::ts_named(yaml, "paws.yaml")
}

/// One job p, regions [2, [4, 4, 4], 2] ms, on 2 CPUs.
///   [0,2] region 0 on CPU 0 (from the global queue). At 2 it forks on CPU 0: the threads go
///   to CPU 0's deque, thread 0 on top, thread 2 at the bottom (Rule B). CPU 0 takes the
///   bottom, thread 2 (Rule C); CPU 1 has no local work and the global queue is empty, so it
///   steals the top of CPU 0's deque, thread 0 (Rule E). At 6 both end: CPU 0 takes thread 1;
///   CPU 1 finds nothing. The region joins at 10; region 2 runs [10,12] on CPU 0.
#[test]
fn threads_stay_on_the_forking_core_and_an_idle_core_steals_the_top() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n");
    let r = simulate(&t, Options::spec("paws").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 2),
            (0, 0, 0, 10, 12),
            (0, 0, 1, 6, 10),
            (0, 0, 2, 2, 6),
            (1, 0, 0, 2, 6)
        ]
    );
    assert_eq!(r.jobs[0].finish, Some(12 * MS));
    let stats = simulate(&t, Options::spec("paws").policy_stats(true))
        .unwrap()
        .stats;
    let get = |k: &str| stats.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(
        (get("steals"), get("local_picks"), get("global_picks")),
        (Some(1.0), Some(2.0), Some(2.0))
    );
}

/// The recorded intervals say which region and thread ran and that entity's demand, so a
/// Gantt chart can place a fork-join thread's critical sections on its bars. The job above,
/// hand-worked: region 0 [0,2], region 1's threads 2 and 0 [2,6] and thread 1 [6,10], region
/// 2 [10,12]; at WCET (the default model) each demand is its thread's WCET. With demands drawn
/// (uniform 0.5-1.0 of the WCET), each thread has its own draw, and the work of a finished
/// job's thread adds up to it.
#[test]
fn intervals_carry_their_region_thread_and_demand() {
    let yaml = "platform: {cpus: 2}\nrun: {duration: 20EXEC}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n";
    let r = simulate(
        &ts(&yaml.replace("EXEC", "")),
        Options::spec("paws").intervals(true),
    )
    .unwrap()
    .result;
    let mut got: Vec<_> = r
        .intervals
        .iter()
        .map(|i| {
            (
                i.start / MS,
                i.end / MS,
                i.cpu,
                i.region,
                i.thread,
                i.demand / MS,
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            (0, 2, 0, 0, 0, 2),
            (2, 6, 0, 1, 2, 4),
            (2, 6, 1, 1, 0, 4),
            (6, 10, 0, 1, 1, 4),
            (10, 12, 0, 2, 0, 2)
        ]
    );
    let drawn = yaml.replace(
        "EXEC",
        ", seed: 3, execution: {model: uniform, min: 0.5, max: 1.0}",
    );
    let r = simulate(&ts(&drawn), Options::spec("paws").intervals(true))
        .unwrap()
        .result;
    assert!(r.jobs[0].finish.is_some());
    let mut per: std::collections::BTreeMap<(u32, u32), (u64, u64)> = Default::default();
    for i in r.intervals.iter().filter(|i| i.job == 0) {
        let e = per.entry((i.region, i.thread)).or_insert((i.demand, 0));
        assert_eq!(e.0, i.demand, "one entity, one demand");
        e.1 += i.end - i.start - i.overhead;
    }
    assert_eq!(per.len(), 5);
    for (k, (demand, work)) in &per {
        assert_eq!(demand, work, "thread {k:?}: its work is its demand");
    }
    let demands: std::collections::BTreeSet<_> = per.values().map(|v| v.0).collect();
    assert!(
        demands.len() > 2,
        "each thread draws its own demand: {per:?}"
    );
    assert_eq!(per.values().map(|v| v.0).sum::<u64>(), r.jobs[0].demand);
}

/// Rule F. As above, and two urgent jobs q1, q2 (C = 2, deadline 10) arrive at 3 while both
/// cores are busy with p's threads (deadline 100). Each preempts the running entity with the
/// latest key: q1 takes CPU 0 from thread 2 (a local thread: back to the bottom of CPU 0's
/// deque), q2 takes CPU 1 from thread 0 (a stolen thread: to the global queue, Rule F). At 5
/// both end: CPU 0 takes its deque's bottom (thread 2), CPU 1 has no local work and takes the
/// global queue's head (thread 0). Both have 3 ms left: [5,8]. At 8 CPU 0 takes thread 1
/// [8,12]; CPU 1 finds nothing to steal. Join at 12, region 2 [12,14].
#[test]
fn a_preempted_stolen_thread_goes_to_the_global_queue_and_a_local_one_to_its_deque() {
    let t = ts("platform: {cpus: 2}
run: {duration: 20}
tasks:
  - {name: p, period: 100, regions: [2, [4, 4, 4], 2]}
  - {name: q1, period: 100, offset: 3, deadline: 10, wcet: 2}
  - {name: q2, period: 100, offset: 3, deadline: 10, wcet: 2}
");
    let r = simulate(&t, Options::spec("paws").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 2),
            (0, 0, 0, 12, 14),
            (0, 0, 1, 8, 12),
            (0, 0, 2, 2, 3),
            (0, 0, 2, 5, 8),
            (0, 1, 0, 3, 5),
            (1, 0, 0, 2, 3),
            (1, 0, 0, 5, 8),
            (1, 2, 0, 3, 5),
        ]
    );
    assert_eq!(
        r.jobs
            .iter()
            .map(|j| j.finish.unwrap() / MS)
            .collect::<Vec<_>>(),
        vec![14, 5, 5]
    );
}

/// Forked threads preempt nothing: a region forked while a less urgent job runs elsewhere
/// waits for its own core (no steal while every core is busy, and a local thread does not
/// take another core). 2 CPUs: r (deadline 50, C 10) runs on CPU 1 from 0; p forks [3, 3] at
/// 1 on CPU 0 (deadline 20): CPU 0 runs thread 1, thread 0 waits in the deque although r is
/// less urgent; at 4 CPU 0 takes thread 0 [4,7]. (gedf would preempt r at 1.)
#[test]
fn parallel_threads_preempt_nothing() {
    let t = ts("platform: {cpus: 2}
run: {duration: 60}
tasks:
  - {name: p, period: 60, deadline: 20, regions: [1, [3, 3]]}
  - {name: r, period: 60, deadline: 50, wcet: 10}
");
    let r = simulate(&t, Options::spec("paws").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0, 1),
            (0, 0, 0, 4, 7),
            (0, 0, 1, 1, 4),
            (1, 1, 0, 0, 10)
        ]
    );
    let g = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    assert_eq!(
        g.jobs[0].finish,
        Some(4 * MS),
        "gedf runs both threads at once"
    );
    assert_eq!(r.jobs[0].finish, Some(7 * MS));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Without parallel regions there is nothing to steal: PAWS is global EDF (Rule A), job
    /// for job (starts, finishes, misses), under every reading (no local work to pull past,
    /// no join to resume after).
    #[test]
    fn with_sequential_jobs_paws_is_global_edf(ts in arb_sequential()) {
        let b = simulate(&ts, Options::spec("gedf")).unwrap().result;
        let key = |r: &RunResult| r.jobs.iter().map(|j| (j.task, j.job, j.start, j.finish, j.missed)).collect::<Vec<_>>();
        for spec in ["paws", "paws:pull=inversion", "paws:master=joining"] {
            let a = simulate(&ts, Options::spec(spec)).unwrap().result;
            prop_assert_eq!(key(&a), key(&b), "{}", spec);
        }
    }
}

/// The victim choice is the run's seeded draw: same seed, same schedule to the byte; another
/// seed may choose other victims.
#[test]
fn steals_are_deterministic_for_a_seed() {
    let yaml = "platform: {cpus: 4}\nrun: {duration: 200, seed: SEED}\ntasks:\n  - {name: a, period: 40, regions: [1, [3, 3, 3, 3, 3, 3], 1]}\n  - {name: b, period: 50, regions: [1, [4, 4, 4, 4], 1]}\n  - {name: c, period: 30, regions: [1, [2, 2, 2, 2, 2], 1]}\n";
    let run = |seed: u64| {
        let r = simulate(
            &ts(&yaml.replace("SEED", &seed.to_string())),
            Options::spec("paws").intervals(true),
        )
        .unwrap()
        .result;
        (r.to_json_value(true).to_string(), ivs(&r))
    };
    assert_eq!(run(1), run(1));
    assert!(
        (2..12).any(|s| run(s).1 != run(1).1),
        "ten seeds, one schedule: the victim draw is not used"
    );
}
