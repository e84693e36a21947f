//! Differential test of the distributed-run-queue policies (gedf-heap paper §3–5) against the
//! one-queue reference: on seeded random task sets, every `gedf-dist` push variant must give
//! every job exactly the start and finish times (and abort / miss outcome) it gets under
//! `gedf`, and `gfp-dist` exactly those of `gfp`. The variants linear, fmask and heap choose
//! CPUs by the same rule, so their execution intervals (placements) must agree too. After every
//! instant, the invariant of global preemptive scheduling is checked for each variant: exactly
//! the min(m, ready) most urgent entities run.
//!
//! Task sets: m from 1 to 16 mostly, some up to 64; periods on a coarse grid so that equal
//! deadlines and simultaneous events are common; constrained deadlines; offsets; loads from
//! light to overloaded; uniform / WCET / overrun execution times; `on_miss` abort and continue.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::results::RunResult;
use rtsched_model::{ExecModel, OnMiss, Task, TaskSet, Time};
use rtsched_policies::EntityInfo;
use rtsched_sim::{simulate, Observer, Options, View};

const US: Time = 1_000;

fn random_taskset(seed: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m: u32 = match rng.random_range(0..10) {
        0 => *[17u32, 24, 32, 48, 64].get(rng.random_range(0..5)).unwrap(),
        _ => rng.random_range(1..=16),
    };
    let n = rng.random_range(1..=(3 * m as usize + 2));
    // Target load per CPU, from light to overloaded.
    let r: f64 = rng.random_range(0.2..1.3);
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let period = rng.random_range(1u64..=12) * 500 * US;
        let u = (r * m as f64 / n as f64 * rng.random_range(0.3..1.7)).min(1.0);
        let wcet = ((period as f64 * u) as Time).max(1);
        let mut t = Task::periodic(format!("t{i}"), period, wcet);
        t.deadline = (period * rng.random_range(50u64..=100) / 100).max(wcet.min(period));
        if rng.random_bool(0.3) {
            t.deadline = period;
        }
        t.offset = rng.random_range(0u64..=4) * 250 * US;
        t.priority = Some(rng.random_range(1..=4));
        tasks.push(t);
    }
    let mut ts = TaskSet::new(m, tasks);
    ts.run.duration = 30 * 500 * US;
    ts.run.seed = seed;
    ts.run.on_miss = if rng.random_bool(0.5) {
        OnMiss::Abort
    } else {
        OnMiss::Continue
    };
    ts.run.execution = match rng.random_range(0..4) {
        0 => ExecModel::Wcet,
        1 => ExecModel::Overrun {
            ratio: 1.5,
            probability: 0.3,
        },
        _ => ExecModel::Uniform { min: 0.3, max: 1.0 },
    };
    ts
}

type KeyFn = Box<dyn Fn(&EntityInfo) -> (u64, u64, u32, u64, u32)>;

/// Global preemptive invariant after every instant: exactly the min(m, ready) most urgent run.
struct Checker {
    m: usize,
    key: KeyFn,
    failure: Option<String>,
}

impl Observer for &mut Checker {
    fn after_instant(&mut self, v: &View<'_>) {
        if self.failure.is_some() {
            return;
        }
        let mut keys: Vec<_> = v
            .live()
            .map(|(e, c)| ((self.key)(&e), c.is_some()))
            .collect();
        keys.sort();
        for (i, (k, on)) in keys.iter().enumerate() {
            if *on != (i < self.m) {
                self.failure = Some(format!("t={} rank {i} key {k:?} running={on}", v.now));
                return;
            }
        }
    }
}

type JobKey = (u32, u64, Option<Time>, Option<Time>, bool, bool);

fn jobs(r: &RunResult) -> Vec<JobKey> {
    r.jobs
        .iter()
        .map(|j| (j.task, j.job, j.start, j.finish, j.aborted, j.missed))
        .collect()
}

fn run(ts: &TaskSet, spec: &str, key: KeyFn) -> (RunResult, Vec<(String, f64)>) {
    let mut checker = Checker {
        m: ts.platform.cpus as usize,
        key,
        failure: None,
    };
    let mut p = rtsched_policies::build(spec, ts).unwrap();
    let r = simulate(
        ts,
        Options::policy(p.as_mut())
            .observer(&mut checker)
            .intervals(true),
    )
    .unwrap()
    .result;
    if let Some(f) = checker.failure {
        panic!("seed {} m={} {spec}: {f}", ts.run.seed, ts.platform.cpus);
    }
    (r, p.stats())
}

fn stat(s: &[(String, f64)], name: &str) -> f64 {
    s.iter()
        .find(|(k, _)| k == name)
        .map(|x| x.1)
        .unwrap_or_else(|| panic!("no stat {name}"))
}

#[test]
fn distributed_variants_reproduce_the_global_queue_schedule() {
    let cases = std::env::var("RTSCHED_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1200u64);
    let (mut jobs_compared, mut max_m, mut pushes, mut pulls) = (0u64, 0, 0.0, 0.0);
    for seed in 0..cases {
        let ts = random_taskset(seed);
        let m = ts.platform.cpus;
        max_m = max_m.max(m);
        let prio: Vec<u32> = ts.tasks.iter().map(|t| t.priority.unwrap()).collect();
        let edf = || -> KeyFn {
            Box::new(|e: &EntityInfo| (e.deadline, e.release, e.task, e.job, e.thread))
        };
        let fp = || -> KeyFn {
            let prio = prio.clone();
            Box::new(move |e: &EntityInfo| {
                (
                    (u32::MAX - prio[e.task as usize]) as u64,
                    e.release,
                    e.task,
                    e.job,
                    e.thread,
                )
            })
        };

        let reference = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec("gedf"))
            .unwrap()
            .result;
        let want = jobs(&reference);
        let mut placements = None;
        for variant in ["linear", "fmask", "heap"] {
            let spec = format!("gedf-dist:{variant}");
            let (r, stats) = run(&ts, &spec, edf());
            assert_eq!(
                jobs(&r),
                want,
                "seed {seed} m={m}: {spec} differs from gedf"
            );
            // Same CPU choice rule: identical placements.
            match &placements {
                None => placements = Some(r.intervals.clone()),
                Some(p) => assert_eq!(
                    &r.intervals, p,
                    "seed {seed}: {spec} placed jobs differently from linear"
                ),
            }
            if variant == "linear" {
                assert_eq!(
                    stat(&stats, "find_cpu_touched"),
                    stat(&stats, "find_cpu_calls") * m as f64,
                    "linear reads every CPU"
                );
            }
            pushes += stat(&stats, "pushed");
            pulls += stat(&stats, "pulled");
            jobs_compared += want.len() as u64;
        }

        let reference = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec("gfp:file"))
            .unwrap()
            .result;
        let want = jobs(&reference);
        for variant in ["cpupri", "heap"] {
            let spec = format!("gfp-dist:file,push={variant}");
            let (r, _) = run(&ts, &spec, fp());
            assert_eq!(jobs(&r), want, "seed {seed} m={m}: {spec} differs from gfp");
            jobs_compared += want.len() as u64;
        }
    }
    eprintln!("{cases} task sets (m up to {max_m}), {jobs_compared} job records compared; {pushes} pushes and {pulls} pulls moved entities");
    assert!(
        pushes > 0.0 && pulls > 0.0,
        "the test exercises both migration paths"
    );
}

/// `wake=free` (the negative control of PAWS's claim that SCHED_DEADLINE's blind wake-up
/// placement causes preemptions) takes only that placement away: global EDF's schedule, job by
/// job, as before; fewer context switches in all, fewer on some sets, never a different job.
#[test]
fn wake_free_keeps_the_schedule_and_preempts_less() {
    let (mut last, mut free, mut fewer) = (0u64, 0u64, 0);
    for seed in 0..300u64 {
        let ts = random_taskset(seed);
        let edf = || -> KeyFn {
            Box::new(|e: &EntityInfo| (e.deadline, e.release, e.task, e.job, e.thread))
        };
        let (a, _) = run(&ts, "gedf-dist:heap", edf());
        let (b, _) = run(&ts, "gedf-dist:heap,wake=free", edf());
        assert_eq!(
            jobs(&b),
            jobs(&a),
            "seed {seed}: wake=free changed the schedule"
        );
        let switches = |r: &RunResult| {
            r.jobs
                .iter()
                .map(|j| u64::from(j.context_switches))
                .sum::<u64>()
        };
        let (x, y) = (switches(&a), switches(&b));
        last += x;
        free += y;
        fewer += usize::from(y < x);
    }
    assert!(
        free < last && fewer > 0,
        "wake=free: {free} context switches against {last}, fewer on {fewer} sets"
    );
}

/// The stats carry wall-clock figures only when asked, and the results never do.
#[test]
fn measure_option_only_adds_stats() {
    let ts = random_taskset(7);
    let mut plain = rtsched_policies::build("gedf-dist:heap", &ts).unwrap();
    let mut timed = rtsched_policies::build("gedf-dist:heap,measure", &ts).unwrap();
    let a = simulate(&ts, Options::policy(plain.as_mut()).intervals(true))
        .unwrap()
        .result;
    let b = simulate(&ts, Options::policy(timed.as_mut()).intervals(true))
        .unwrap()
        .result;
    assert_eq!(jobs(&a), jobs(&b));
    assert_eq!(a.intervals, b.intervals);
    assert!(plain.stats().iter().all(|(k, _)| !k.starts_with("ns_")));
    assert!(timed.stats().iter().any(|(k, _)| k == "ns_per_push"));
    let s = a.to_json_value(true).to_string();
    assert!(!s.contains("ns_per"));
}
