//! Hand-worked cases from the literature, each checked job by job.

use rtsched_model::{parse_taskset, Format, TaskSet};
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "golden.yaml").unwrap()
}

/// Dhall's effect (Dhall & Liu 1978): on 2 CPUs, two light tasks (C=2, T=10) and a heavy task
/// (C=10, T=11). At t=0 the light jobs have the earlier deadlines (10 < 11), take both CPUs
/// for [0,2], and the heavy job can only run [2,12]: it misses its deadline 11 by 1 ms,
/// although total utilisation is only 1.31 of 2.
#[test]
fn dhall_effect_under_global_edf() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 11}\ntasks:\n  - {name: l1, period: 10, wcet: 2}\n  - {name: l2, period: 10, wcet: 2}\n  - {name: heavy, period: 11, wcet: 10}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    let heavy: Vec<_> = r.jobs.iter().filter(|j| j.task == 2).collect();
    assert_eq!(heavy[0].start, Some(2 * MS));
    assert_eq!(heavy[0].finish, Some(12 * MS));
    assert!(heavy[0].missed);
    for l in r.jobs.iter().filter(|j| j.task < 2 && j.job == 0) {
        assert_eq!(l.finish, Some(2 * MS));
        assert!(!l.missed);
    }
    // Partitioned EDF (heavy alone on CPU 1) meets every deadline.
    let p = ts("platform: {cpus: 2}\nrun: {duration: 110}\ntasks:\n  - {name: l1, period: 10, wcet: 2, cpu: 0}\n  - {name: l2, period: 10, wcet: 2, cpu: 0}\n  - {name: heavy, period: 11, wcet: 10, cpu: 1}\n");
    let r = simulate(&p, Options::spec("pedf")).unwrap().result;
    assert_eq!(r.summaries().total.missed, 0);
}

/// Fixed priority on one CPU, checked against response-time analysis by hand
/// (Joseph & Pandya 1986). Tasks (C, T): a=(1,4), b=(2,6), c=(3,13), RM priorities a > b > c.
///   R_a = 1
///   R_b = 2 + ceil(R_b/4)·1  -> 3
///   R_c = 3 + ceil(R_c/4)·1 + ceil(R_c/6)·2 : 3 -> 6 -> 7 -> 9 -> 10 -> 10
/// With synchronous release (the critical instant) the first jobs' response times are exactly
/// these worst cases, and c's first job finishes at 10.
#[test]
fn fixed_priority_matches_rta() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 156}\ntasks:\n  - {name: a, period: 4, wcet: 1}\n  - {name: b, period: 6, wcet: 2}\n  - {name: c, period: 13, wcet: 3}\n");
    for spec in ["gfp:rm", "pfp:rm"] {
        let mut t = t.clone();
        if spec.starts_with('p') {
            t.tasks.iter_mut().for_each(|x| x.cpu = Some(0));
        }
        let r = simulate(&t, Options::spec(spec)).unwrap().result;
        let first = |task| {
            r.jobs
                .iter()
                .find(|j| j.task == task && j.job == 0)
                .unwrap()
                .response()
                .unwrap()
        };
        assert_eq!(
            [first(0), first(1), first(2)],
            [MS, 3 * MS, 10 * MS],
            "{spec}"
        );
        let s = r.summaries();
        assert_eq!(s.total.missed, 0);
        assert_eq!(
            s.tasks[2].summary.max_response_ns,
            10 * MS,
            "RTA bound is reached at the critical instant"
        );
    }
}

/// Explicit priorities follow SCHED_FIFO: larger is more urgent. Here c (C=3) gets the top
/// priority, so a's first job waits for it on one CPU: R_a = 3 + 1 = 4.
#[test]
fn explicit_priorities_larger_is_more_urgent() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 12}\ntasks:\n  - {name: a, period: 4, wcet: 1, priority: 1}\n  - {name: c, period: 13, wcet: 3, priority: 9}\n");
    let r = simulate(&t, Options::spec("gfp")).unwrap().result;
    assert_eq!(r.scheduler, "gfp:file");
    assert_eq!(r.jobs[0].task, 0);
    assert_eq!(r.jobs[0].finish, Some(4 * MS));
}

/// Non-preemptive EDF: a job released while a later-deadline job runs must wait.
/// One CPU: x=(C 5, T 20) released at 0; y=(C 1, D 3, T 20) released at 1.
/// gedf preempts x at 1 (y finishes 2, meets 4); gnpedf runs x to 5, y finishes 6 > 4: miss.
#[test]
fn non_preemptive_edf_blocks() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  - {name: x, period: 20, wcet: 5}\n  - {name: y, period: 20, wcet: 1, deadline: 3, offset: 1}\n");
    let p = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!(
        p.jobs.iter().find(|j| j.task == 1).unwrap().finish,
        Some(2 * MS)
    );
    assert_eq!(p.jobs.iter().find(|j| j.task == 0).unwrap().preemptions, 1);
    let np = simulate(&t, Options::spec("gnpedf")).unwrap().result;
    let y = np.jobs.iter().find(|j| j.task == 1).unwrap();
    assert_eq!(y.finish, Some(6 * MS));
    assert!(y.missed);
    assert_eq!(np.summaries().total.preemptions, 0);
    let fifo = simulate(&t, Options::spec("gfifo")).unwrap().result;
    assert_eq!(
        fifo.jobs.iter().find(|j| j.task == 1).unwrap().finish,
        Some(6 * MS)
    );
}

/// Counting rules. 2 CPUs, gedf. a=(C 4, T 10), b=(C 4, T 10), c=(C 2, D 3, T 10, offset 1).
/// t=0: a on CPU0, b on CPU1. t=1: c (deadline 4) preempts the latest deadline running job;
/// a and b tie on deadline 10 and release 0, so task index breaks it: b (index 1) is the
/// lowest-priority and is preempted on CPU1. t=3: c completes, b resumes on CPU1 (its last
/// CPU: no migration). Counters: 1 preemption (b), 0 migrations, context switches a:1 b:2 c:1.
#[test]
fn preemption_migration_context_switch_counting() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 4}\n  - {name: b, period: 10, wcet: 4}\n  - {name: c, period: 10, wcet: 2, deadline: 3, offset: 1}\n");
    let r = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let j = |task: u32| r.jobs.iter().find(|j| j.task == task).unwrap();
    assert_eq!(
        (j(0).preemptions, j(1).preemptions, j(2).preemptions),
        (0, 1, 0)
    );
    assert_eq!(r.summaries().total.migrations, 0);
    assert_eq!(
        (
            j(0).context_switches,
            j(1).context_switches,
            j(2).context_switches
        ),
        (1, 2, 1)
    );
    assert_eq!(j(1).finish, Some(6 * MS));
    assert_eq!(j(1).cpus.iter().collect::<Vec<_>>(), vec![1]);
    assert_eq!(r.intervals.len(), 4);
}

/// `on_miss: abort` removes a late job at its deadline; `continue` lets it finish late.
#[test]
fn abort_at_deadline() {
    let y = "platform: {cpus: 1}\nrun: {duration: 10, on_miss: MODE}\ntasks:\n  - {name: a, period: 10, wcet: 6}\n  - {name: b, period: 10, wcet: 6}\n";
    let r = simulate(&ts(&y.replace("MODE", "abort")), Options::spec("gedf"))
        .unwrap()
        .result;
    let b = &r.jobs[1];
    assert!(b.aborted && b.missed && b.finish.is_none());
    let r = simulate(&ts(&y.replace("MODE", "continue")), Options::spec("gedf"))
        .unwrap()
        .result;
    let b = &r.jobs[1];
    assert_eq!(b.finish, Some(12 * MS));
    assert_eq!(r.summaries().total.max_tardiness_ns, 2 * MS);
}

/// Overheads are charged as extra demand on dispatch: context switch on every dispatch,
/// migration when resuming elsewhere.
#[test]
fn overheads_inflate_execution() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 10, overheads: {context_switch: 0.5}}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n");
    let r = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!(r.jobs[0].finish, Some(2 * MS + MS / 2));
}

/// Jobs of one task run one after another (sporadic task model; one thread per task in a real
/// run; SimSo's `_activations_fifo`). Found by the SimSo differential test: `a`'s job 1 is
/// released at 10 while job 0 (delayed by `b` and `c`) runs until 12. With a CPU free at 10,
/// `a`'s job 1 used to start at once, in parallel with its own predecessor, and finish at 20.
/// It must wait for job 0: it starts at 12 and finishes at 22 (a miss), on either substrate.
#[test]
fn jobs_of_a_task_never_overlap() {
    let y = "platform: {cpus: 2}\nrun: {duration: 20, on_miss: MODE}\ntasks:\n  - {name: a, period: 10, wcet: 10}\n  - {name: b, period: 100, wcet: 2, deadline: 5}\n  - {name: c, period: 100, wcet: 2, deadline: 5}\n";
    for spec in ["gedf", "gfp:dm", "gnpedf"] {
        let r = simulate(
            &ts(&y.replace("MODE", "continue")),
            Options::spec(spec).intervals(true),
        )
        .unwrap()
        .result;
        let a: Vec<_> = r.jobs.iter().filter(|j| j.task == 0).collect();
        assert_eq!(a[0].finish, Some(12 * MS), "{spec}");
        assert_eq!(
            (a[1].release, a[1].deadline),
            (10 * MS, 20 * MS),
            "{spec}: a held job keeps its release and deadline"
        );
        assert_eq!(a[1].start, Some(12 * MS), "{spec}");
        assert_eq!(a[1].finish, Some(22 * MS), "{spec}");
        assert!(a[1].missed, "{spec}");
    }
    // Held past its deadline with on_miss: abort: removed without the policy ever seeing it.
    let y2 = "platform: {cpus: 2}\nrun: {duration: 20, on_miss: abort}\ntasks:\n  - {name: a, period: 4, wcet: 3, deadline: 9}\n  - {name: b, period: 100, wcet: 8}\n  - {name: c, period: 100, wcet: 8}\n";
    let r = simulate(&ts(y2), Options::spec("gedf")).unwrap().result;
    for j in r.jobs.iter().filter(|j| j.task == 0) {
        if let (Some(f), Some(s)) = (j.finish, j.start) {
            let prev = r.jobs.iter().find(|p| p.task == 0 && p.job + 1 == j.job);
            if let Some(p) = prev.and_then(|p| p.finish) {
                assert!(
                    s >= p,
                    "job {} started at {s} before its predecessor finished at {p}",
                    j.job
                );
            }
            assert!(f <= j.deadline);
        }
    }
}
