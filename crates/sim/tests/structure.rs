//! Parallel regions (PAWS §3) and critical sections (ChronOS §III), worked by hand
//! (docs/semantics.md "Parallel jobs and critical sections"), plus properties that hold for
//! any fork-join structure.

use proptest::prelude::*;
use rtsched_model::results::Interval;
use rtsched_model::{parse_taskset, Format, Region, Task, TaskSet};
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "structure.yaml").unwrap()
}

fn iv(r: &rtsched_model::results::RunResult, task: u32) -> Vec<(u32, u32, u64, u64)> {
    let mut v: Vec<_> = r
        .intervals
        .iter()
        .filter(|i| i.task == task && i.job == 0)
        .map(|i: &Interval| (i.cpu, i.thread, i.start / US, i.end / US))
        .collect();
    v.sort_by_key(|x| (x.2, x.0));
    v
}

/// One fork-join job alone on 2 CPUs: regions [2, [4, 3], 1] ms.
///   [0,2] region 0 on CPU 0; at 2 it forks two threads: thread 0 (4 ms) on CPU 0, thread 1
///   (3 ms) on CPU 1; thread 1 ends at 5, thread 0 at 6: the region joins at 6 and region 2
///   runs [6,7] on CPU 0 (where the join happened, which is also the lowest idle CPU).
/// Response 7 ms = the critical path 2 + 4 + 1, against C = 10 ms sequentially.
#[test]
fn fork_join_runs_threads_in_parallel_and_joins() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 3], 1]}\n");
    assert_eq!(t.tasks[0].wcet, 10 * MS);
    for spec in ["gedf", "gfp:rm", "gnpedf", "gedf-dist:heap"] {
        let r = simulate(&t, Options::spec(spec).intervals(true))
            .unwrap()
            .result;
        let j = &r.jobs[0];
        assert_eq!(
            (j.start, j.finish, j.demand),
            (Some(0), Some(7 * MS), 10 * MS),
            "{spec}"
        );
        assert_eq!(j.cpus.iter().collect::<Vec<_>>(), vec![0, 1], "{spec}");
        if !spec.contains("dist") {
            // (gedf-dist may pick either idle CPU for region 2.)
            assert_eq!(
                iv(&r, 0),
                vec![
                    (0, 0, 0, 2000),
                    (0, 0, 2000, 6000),
                    (1, 1, 2000, 5000),
                    (0, 0, 6000, 7000)
                ],
                "{spec}"
            );
        }
        // Four threads, each started once: four context switches, no migration or preemption.
        assert_eq!(
            (j.context_switches, j.migrations, j.preemptions),
            (4, 0, 0),
            "{spec}"
        );
    }
    // Partitioned: every thread on the task's CPU, so no parallelism: response = C.
    let mut p = t.clone();
    p.tasks[0].cpu = Some(1);
    let r = simulate(&p, Options::spec("pedf")).unwrap().result;
    assert_eq!(r.jobs[0].finish, Some(10 * MS));
    assert_eq!(r.jobs[0].cpus.iter().collect::<Vec<_>>(), vec![1]);
}

/// Two tasks share a mutex on 2 CPUs (gedf).
///   a (C=4, section R at [1,3] of its work) starts at 0 on CPU 0 and takes R at 1.
///   b (released at 2, C=3, section R at [0,2]) starts on CPU 1 and requests R at once:
///   blocked until a releases R at 3; b then takes R and runs [3,6] on CPU 1.
///   a finishes at 4; b at 6, with 1 ms blocked.
#[test]
fn a_held_resource_blocks_until_released() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: a, period: 20, wcet: 4, sections: [{resource: R, start: 1, length: 2}]}\n  - {name: b, period: 20, offset: 2, wcet: 3, sections: [{resource: R, start: 0, length: 2}]}\n");
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!((a.finish, a.blocked), (Some(4 * MS), 0));
    assert_eq!(
        (b.start, b.finish, b.blocked),
        (Some(2 * MS), Some(6 * MS), MS)
    );
    // Blocking is not a preemption; b resumes on its CPU: no migration.
    assert_eq!((b.preemptions, b.migrations, b.context_switches), (0, 0, 1));
    assert_eq!(iv(&r, 1), vec![(1, 0, 3000, 6000)]);
    // Without the section b would finish at 5.
    let mut free = t.clone();
    free.tasks[1].sections.clear();
    assert_eq!(
        simulate(&free, Options::spec("gedf")).unwrap().result.jobs[1].finish,
        Some(5 * MS)
    );
}

/// Priority inversion on one CPU (gedf): low-urgency l (D=100, C=4, R at [1,3]) takes R at 1;
/// h (released 2, D=10, C=2, R at [0.5,1.5]) preempts l at 2, requests R at 2.5 and blocks;
/// l resumes at 2.5 and releases R at 3.5 (its work 3); h takes R, preempts l again, holds R
/// to 4.5 and finishes at 5; l finishes at 6. h was blocked 1 ms (no inheritance).
#[test]
fn priority_inversion_on_one_cpu() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 50}\ntasks:\n  - {name: l, period: 100, wcet: 4, sections: [{resource: R, start: 1, length: 2}]}\n  - {name: h, period: 50, deadline: 10, offset: 2, wcet: 2, sections: [{resource: R, start: 0.5, length: 1}]}\n");
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let (l, h) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!((h.finish, h.blocked, h.preemptions), (Some(5 * MS), MS, 0));
    assert_eq!((l.finish, l.blocked, l.preemptions), (Some(6 * MS), 0, 2));
    assert_eq!(
        iv(&r, 0),
        vec![(0, 0, 0, 2000), (0, 0, 2500, 3500), (0, 0, 5000, 6000)]
    );
    assert_eq!(iv(&r, 1), vec![(0, 0, 2000, 2500), (0, 0, 3500, 5000)]);
}

/// Nested sections: the outer resource is held across the inner one, and a waiter for the
/// inner one gets it as soon as the inner section ends, before the outer one ends.
///   a (C=6): O at [0,5], I nested at [1,2]. b (released 1, C=2): I at [0.5,1.5].
///   b starts at 1 on CPU 1, requests I at 1.5 while a holds it (a's work 1..2 = time 1..2):
///   blocked 0.5 ms until 2, then holds I to 3, finishes at 3.5.
#[test]
fn nested_sections_hand_over_the_inner_resource_first() {
    let t = ts("platform: {cpus: 2}\nresources: [O, I]\nrun: {duration: 20}\ntasks:\n  - {name: a, period: 20, wcet: 6, sections: [{resource: O, start: 0, length: 5}, {resource: I, start: 1, length: 1}]}\n  - {name: b, period: 20, offset: 1, wcet: 2, sections: [{resource: I, start: 0.5, length: 1}]}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!((r.jobs[0].finish, r.jobs[0].blocked), (Some(6 * MS), 0));
    assert_eq!(
        (r.jobs[1].finish, r.jobs[1].blocked),
        (Some(3500 * US), 500 * US)
    );
}

/// A job aborted at its deadline while holding a resource releases it to its waiter.
///   l (D=3, C=5, R over all its work) runs [0,3] on CPU 0 and is aborted at 3;
///   h (released 1, D=20, C=1, R at [0,1]) blocks at 1 on CPU 1, gets R at 3, finishes at 4.
#[test]
fn abort_releases_held_resources() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10, on_miss: abort}\ntasks:\n  - {name: l, period: 10, deadline: 3, wcet: 5, sections: [{resource: R, start: 0, length: 5}]}\n  - {name: h, period: 20, offset: 1, wcet: 1, sections: [{resource: R, start: 0, length: 1}]}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let (l, h) = (&r.jobs[0], r.jobs.iter().find(|j| j.task == 1).unwrap());
    assert!(l.aborted && l.missed);
    assert_eq!(
        (h.finish, h.blocked, h.missed),
        (Some(4 * MS), 2 * MS, false)
    );
    // The next job of l (released 10) is outside the window; the run ends cleanly.
    assert_eq!(r.summaries().total.jobs, 2);
}

/// A waiting thread whose job is aborted leaves the queue: the resource then goes to the next
/// waiter. On 3 CPUs: a holds R over [0,4]; b (D=2, released 0.5) waits from 0.5 and is
/// aborted at 2.5; c (released 1) waits behind b and gets R at 4.
#[test]
fn aborted_waiter_leaves_the_queue() {
    let t = ts("platform: {cpus: 3}\nrun: {duration: 10, on_miss: abort}\ntasks:\n  - {name: a, period: 20, wcet: 4, sections: [{resource: R, start: 0, length: 4}]}\n  - {name: b, period: 20, offset: 0.5, deadline: 2, wcet: 1, sections: [{resource: R, start: 0, length: 1}]}\n  - {name: c, period: 20, offset: 1, wcet: 1, sections: [{resource: R, start: 0, length: 1}]}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let job = |task| r.jobs.iter().find(|j| j.task == task).unwrap();
    assert!(job(1).aborted);
    assert_eq!(job(1).blocked, 2 * MS);
    assert_eq!((job(2).finish, job(2).blocked), (Some(5 * MS), 3 * MS));
}

/// The job's demand is the sum of its threads' draws, and the same under every scheduler.
#[test]
fn thread_demands_are_schedule_independent() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 200, execution: {model: uniform, min: 0.3}}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 3, 3], 1], sections: [{resource: R, region: 1, thread: 2, start: 1, length: 1}]}\n  - {name: q, period: 15, wcet: 6, sections: [{resource: R, start: 2, length: 2}]}\n");
    let d = |spec: &str| {
        simulate(&t, Options::spec(spec))
            .map(|o| o.result)
            .unwrap()
            .jobs
            .iter()
            .map(|j| (j.task, j.job, j.demand))
            .collect::<Vec<_>>()
    };
    let g = d("gedf");
    assert_eq!(g, d("gfp:rm"));
    assert_eq!(g, d("gnpedf"));
    assert!(
        g.iter().any(|x| x.2 != 10 * MS),
        "the uniform model varies demand"
    );
}

fn arb_parallel_task() -> impl Strategy<Value = Vec<Vec<u64>>> {
    prop::collection::vec(prop::collection::vec(1u64..40, 1..5), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Alone on m >= width CPUs under any work-conserving global policy, a fork-join job's
    /// response time is its critical path: the sum over regions of the longest thread.
    #[test]
    fn alone_a_job_takes_its_critical_path(regions in arb_parallel_task(), extra in 0u32..3) {
        let width = regions.iter().map(Vec::len).max().unwrap() as u32;
        let mut task = Task::periodic("p", 100 * MS, 0);
        task.regions = regions.iter().map(|r| Region { threads: r.iter().map(|&x| x * 100 * US).collect() }).collect();
        task.wcet = task.regions.iter().flat_map(|r| r.threads.iter()).sum();
        let mut t = TaskSet::new(width + extra, vec![task]);
        t.run.duration = 100 * MS;
        let path: u64 = regions.iter().map(|r| r.iter().max().unwrap() * 100 * US).sum();
        for spec in ["gedf", "gfp:rm", "gnpedf", "gfifo", "gedf-dist:fmask"] {
            let r = simulate(&t, Options::spec(spec).intervals(true)).unwrap().result;
            prop_assert_eq!(r.jobs[0].finish, Some(path), "{}", spec);
            let busy: u64 = r.intervals.iter().map(|i| i.end - i.start).sum();
            prop_assert_eq!(busy, t.tasks[0].wcet, "{}: every thread gets exactly its demand", spec);
        }
    }

    /// With one CPU a fork-join job is sequential: response = C.
    #[test]
    fn on_one_cpu_a_job_takes_its_wcet(regions in arb_parallel_task()) {
        let mut task = Task::periodic("p", 100 * MS, 0);
        task.regions = regions.iter().map(|r| Region { threads: r.iter().map(|&x| x * 100 * US).collect() }).collect();
        task.wcet = task.regions.iter().flat_map(|r| r.threads.iter()).sum();
        let mut t = TaskSet::new(1, vec![task]);
        t.run.duration = 100 * MS;
        let r = simulate(&t, Options::spec("gedf")).unwrap().result;
        prop_assert_eq!(r.jobs[0].finish, Some(t.tasks[0].wcet));
    }
}
