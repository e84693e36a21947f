//! ChronOS's global best-effort half (issue #12): G-GUA, NG-GUA and GHVDF, the two global
//! models (stop-the-world, application-concurrent) and the 3-pass mapper
//! (`common/global_model.rs`). Hand-worked schedules are written out in ms; properties check
//! what must hold on random sets.

mod common;
mod worked;

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{Task, TaskSet, Tuf};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Options};
use worked::{ivs, MS};

fn ts(yaml: &str) -> TaskSet {
    worked::ts_named(yaml, "ua-global.yaml")
}

fn run(ts: &TaskSet, spec: &str) -> RunResult {
    simulate(ts, Options::spec(spec).intervals(true))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .result
}

/// Per job: (task, job, start, finish, missed).
type JobRow = (u32, u64, Option<u64>, Option<u64>, bool);

fn jobs(r: &RunResult) -> Vec<JobRow> {
    r.jobs
        .iter()
        .map(|j| (j.task, j.job, j.start, j.finish, j.missed))
        .collect()
}

/// G-GUA on 2 CPUs, four jobs released at 0 (ms): a (C 4, D 5, U 10), b (C 4, D 6, U 4),
/// c (C 3, D 8, U 6), d (C 2, D 4, U 1). PUDs: a 2.5, c 2, b 1, d 0.5.
/// - a → CPU 0 (loads 0, 0): [a]; c → CPU 1: [c]; b → CPU 1 (load 3 < 4): [b, c], b ends at
///   4 ≤ 6, c at 7 ≤ 8: feasible. d → CPU 0 (load 4): [d, a], a ends at 6 > 5; CPU 1: [d, b, c],
///   c ends at 9 > 8: dropped. Heads: a (CPU 0), b (CPU 1).
/// - d could still finish by 4 if it started by 2; 1 ns later it cannot: aborted at 2 ms + 1 ns
///   (the timer G-GUA set for that instant).
/// - At 4 a and b complete; c runs [4, 7] on CPU 0 (pass 3: lowest free CPU) and meets 8.
///
/// Accrued 10 + 4 + 6 = 20 of 21.
#[test]
fn ggua_hand_worked_on_two_cpus() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  \
        - {name: a, period: 20, wcet: 4, deadline: 5, tuf: 10}\n  \
        - {name: b, period: 20, wcet: 4, deadline: 6, tuf: 4}\n  \
        - {name: c, period: 20, wcet: 3, deadline: 8, tuf: 6}\n  \
        - {name: d, period: 20, wcet: 2, deadline: 4, tuf: 1}\n");
    let r = run(&t, "ggua");
    assert_eq!(
        ivs(&r),
        vec![(0, 0, 0, 0, 4), (0, 2, 0, 4, 7), (1, 1, 0, 0, 4)]
    );
    let d = &r.jobs[3];
    assert!(d.aborted && d.missed && d.start.is_none());
    assert_eq!(d.aborted_at, Some(2 * MS + 1));
    let s = r.summaries().total;
    assert_eq!((s.accrued_utility, s.possible_utility), (20.0, 21.0));
    // The set is feasible: G-EDF runs d [0, 2] then b [2, 6] on one CPU, a [0, 4] then c [4, 7]
    // on the other, and earns all 21. G-GUA's greedy test (a whole schedule per CPU, built in
    // PUD order) is pessimistic in underload: it gives up d, the least dense.
    let g = run(&t, "gedf").summaries().total;
    assert_eq!(g.accrued_utility, 21.0);
}

/// A release that stop-the-world preempts for at once, and application-concurrent only at
/// the next event of a deciding CPU. G-EDF on 2 CPUs (ms): a (C 6, D 20), b (C 4, D 18) at
/// 0; c (C 2, D 4) released at 1.
/// - stw: at 1 one decision for all: c preempts a (latest deadline) on CPU 1 (pass 1 keeps b
///   on CPU 0), runs [1, 3]; a resumes on CPU 1 (its queued CPU) [3, 8].
/// - ac: c's task never ran, so c is queued on no CPU and no CPU is idle: nobody decides at
///   1. At 4 b completes on CPU 0, which decides and takes c [4, 6]: c misses 5. a runs [0, 6].
#[test]
fn ac_preempts_only_at_a_deciding_cpus_event() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  \
        - {name: a, period: 40, wcet: 6, deadline: 20}\n  \
        - {name: b, period: 40, wcet: 4, deadline: 18}\n  \
        - {name: c, period: 40, wcet: 2, deadline: 4, offset: 1}\n");
    let stw = run(&t, "gedf:model=stw");
    assert_eq!(
        ivs(&stw),
        vec![
            (0, 1, 0, 0, 4),
            (1, 0, 0, 0, 1),
            (1, 0, 0, 3, 8),
            (1, 2, 0, 1, 3)
        ]
    );
    assert!(stw.jobs.iter().all(|j| !j.missed));
    let ac = run(&t, "gedf:model=ac");
    assert_eq!(
        ivs(&ac),
        vec![(0, 1, 0, 0, 4), (0, 2, 0, 4, 6), (1, 0, 0, 0, 6)]
    );
    assert!(ac.jobs[2].missed && !ac.jobs[0].missed && !ac.jobs[1].missed);
}

/// Fig 4's point on 3 CPUs, G-EDF (ms): x (C 10, D 30), y (C 8, D 20), z (C 6, D 10) at 0,
/// w (C 2, D 3) at 2. At 0 both mappers place z, y, x on CPUs 0, 1, 2. At 2 w displaces x:
/// 3pass keeps z on 0 and y on 1 (pass 1) and puts w on 2 (pass 3); at 4 x returns to CPU 2
/// (pass 2, its queued CPU): no migration at all. `none` puts the list w, z, y on CPUs 0, 1,
/// 2 (z, y move: 2), at 4 z, y, x (z, y move back: 2), at 6 y, x on 0, 1 (2), at 8 x on 0 (1): 7.
#[test]
fn three_pass_mapper_keeps_running_jobs_in_place() {
    let t = ts("platform: {cpus: 3}\nrun: {duration: 10}\ntasks:\n  \
        - {name: x, period: 40, wcet: 10, deadline: 30}\n  \
        - {name: y, period: 40, wcet: 8, deadline: 20}\n  \
        - {name: z, period: 40, wcet: 6, deadline: 10}\n  \
        - {name: w, period: 40, wcet: 2, deadline: 3, offset: 2}\n");
    let p3 = run(&t, "gedf:mapper=3pass");
    assert_eq!(
        ivs(&p3),
        vec![
            (0, 2, 0, 0, 6),
            (1, 1, 0, 0, 8),
            (2, 0, 0, 0, 2),
            (2, 0, 0, 4, 12),
            (2, 3, 0, 2, 4)
        ]
    );
    assert_eq!(p3.summaries().total.migrations, 0);
    let none = run(&t, "gedf:mapper=none");
    assert_eq!(none.summaries().total.migrations, 7, "{:?}", ivs(&none));
    let finish = |r: &RunResult| r.jobs.iter().map(|j| j.finish).collect::<Vec<_>>();
    assert_eq!(
        finish(&p3),
        finish(&none),
        "same chosen sets, same finishing times"
    );
}

/// A fixed overload, normalised load 1.5 on 2 CPUs: six tasks of utilisation 1/2 with step
/// TUFs of mixed utilities. G-EDF's domino effect makes most jobs miss; the UA policies
/// abort or shed the hopeless ones and accrue strictly more.
#[test]
fn overload_gua_beats_gedf_domino() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 600}\ntasks:\n  \
        - {name: t0, period: 10, wcet: 5, tuf: 1}\n  \
        - {name: t1, period: 12, wcet: 6, tuf: 10}\n  \
        - {name: t2, period: 15, wcet: 7.5, tuf: 2}\n  \
        - {name: t3, period: 20, wcet: 10, tuf: 8}\n  \
        - {name: t4, period: 25, wcet: 12.5, tuf: 3}\n  \
        - {name: t5, period: 30, wcet: 15, tuf: 6}\n");
    let g = run(&t, "gedf").summaries().total;
    let gg = run(&t, "ggua").summaries().total;
    let ng = run(&t, "nggua").summaries().total;
    let hv = run(&t, "ghvdf").summaries().total;
    eprintln!("gedf aur {:.3} dsr {:.3}; ggua aur {:.3} dsr {:.3}; nggua aur {:.3} dsr {:.3}; ghvdf aur {:.3}", g.aur, g.dsr, gg.aur, gg.dsr, ng.aur, ng.dsr, hv.aur);
    assert!(
        g.dsr < 0.3 && g.aur < 0.3,
        "the domino effect: gedf aur {} dsr {}",
        g.aur,
        g.dsr
    );
    assert!(gg.aur > g.aur && ng.aur > g.aur);
    assert!(gg.aur > 0.5 && ng.aur > 0.5);
}

#[test]
fn bad_options_name_the_scheduler_and_option() {
    let t = ts("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n");
    let e = simulate(&t, Options::spec("ggua:model=xyz"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'ggua'") && e.contains("'model'") && e.contains("xyz"),
        "{e}"
    );
    let e = simulate(&t, Options::spec("gedf:mapper=foo"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'gedf'") && e.contains("'mapper'") && e.contains("foo"),
        "{e}"
    );
    let e = simulate(&t, Options::spec("nggua:fast"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'nggua'") && e.contains("no option 'fast'"),
        "{e}"
    );
    assert!(simulate(&t, Options::spec("gfp:rm,model=ac")).is_ok());
    let up = ts("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1, tuf: {shape: piecewise, points: [[0, 1], [4, 3], [8, 0]]}}\n");
    let e = simulate(&up, Options::spec("ggua"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ua-global.yaml") && e.contains("task 'a'") && e.contains("field 'tuf'"),
        "{e}"
    );
}

/// Underloaded implicit-deadline sets that pass the GFB test (U ≤ m − (m−1)·u_max, so G-EDF
/// meets every deadline), with step TUFs of random utilities.
fn arb_underloaded() -> impl Strategy<Value = TaskSet> {
    (
        2u32..=4,
        proptest::collection::vec((1u64..=16, 5u64..=60, 1u32..=10), 2..9),
    )
        .prop_filter_map("GFB", |(m, tasks)| {
            let tasks: Vec<Task> = tasks
                .into_iter()
                .enumerate()
                .map(|(i, (p, pct, u))| {
                    let period = p * 500_000;
                    let mut t =
                        Task::periodic(format!("t{i}"), period, (period * pct / 100).max(1));
                    t.tuf = Some(Tuf::Step {
                        utility: u as f64,
                        termination: period,
                    });
                    t
                })
                .collect();
            let us: Vec<f64> = tasks
                .iter()
                .map(|t| t.wcet as f64 / t.period as f64)
                .collect();
            let (sum, max) = (
                us.iter().sum::<f64>(),
                us.iter().cloned().fold(0.0, f64::max),
            );
            if sum > m as f64 - (m - 1) as f64 * max {
                return None;
            }
            let mut ts = TaskSet::new(m, tasks);
            ts.run.duration = 40 * 500_000;
            Some(ts)
        })
}

/// Against the 3-pass mapper's passes 1 and 2, counted over a run's intervals: (a) an entity
/// whose interval on one CPU ends at t and whose next starts at t on another (it ran up to a
/// decision, still runs after it, and moved); (b) an entity that resumes at t on another CPU
/// than its last while that CPU is idle just after t (its queued CPU was free).
fn mapper_violations(r: &RunResult) -> (usize, usize) {
    use std::collections::HashMap;
    /// (task, job, region, thread) → its intervals as (start, end, cpu).
    type Runs = HashMap<(u32, u64, u32, u32), Vec<(u64, u64, u32)>>;
    let mut by_entity = Runs::new();
    for iv in &r.intervals {
        by_entity
            .entry((iv.task, iv.job, iv.region, iv.thread))
            .or_default()
            .push((iv.start, iv.end, iv.cpu));
    }
    let busy_after = |cpu: u32, t: u64| {
        r.intervals
            .iter()
            .any(|iv| iv.cpu == cpu && iv.start <= t && t < iv.end)
    };
    let (mut moved, mut passed_over) = (0, 0);
    for ivs in by_entity.values_mut() {
        ivs.sort_unstable();
        for w in ivs.windows(2) {
            let ((_, end, from), (start, _, to)) = (w[0], w[1]);
            if from == to {
                continue;
            }
            if start == end {
                moved += 1;
            } else if !busy_after(from, start) {
                passed_over += 1;
            }
        }
    }
    (moved, passed_over)
}

/// Over a whole run the 3-pass mapper can migrate more than no mapping (placing by queued
/// CPU changes which CPU each later entity is queued on): this set, found by a property that
/// claimed otherwise, migrates 60 times under 3pass and 41 under none, with the same finishes.
/// The control of `three_pass_keeps_running_entities_and_prefers_queued_cpus`: no mapping
/// breaks pass 1 or 2 here.
#[test]
fn three_pass_can_migrate_more_over_a_run() {
    let set = ts("platform: {cpus: 2}\nrun: {duration: 20, seed: 0}\ntasks:\n  - {name: t0, period: 0.5, wcet: 0.33, offset: 0.5}\n  - {name: t1, period: 4.5, wcet: 1.89}\n  - {name: t2, period: 0.5, wcet: 0.25, offset: 0.25}\n  - {name: t3, period: 0.5, wcet: 0.005}\n  - {name: t4, period: 1.5, wcet: 0.345}\n");
    let (p3, none) = (
        run(&set, "gedf:mapper=3pass"),
        run(&set, "gedf:mapper=none"),
    );
    let migrations = |r: &RunResult| r.summaries().total.migrations;
    assert_eq!((migrations(&p3), migrations(&none)), (60, 41));
    assert_eq!(jobs(&p3), jobs(&none));
    assert_eq!(mapper_violations(&p3), (0, 0));
    let (moved, passed_over) = mapper_violations(&none);
    assert!(
        moved + passed_over > 0,
        "no mapping keeps the 3-pass rules here"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// In underload NG-GUA sheds nothing and chooses G-EDF's set at every instant.
    #[test]
    fn nggua_equals_gedf_in_underload(t in arb_underloaded()) {
        let g = run(&t, "gedf");
        prop_assert!(g.jobs.iter().all(|j| !j.missed), "GFB promises no miss");
        prop_assert_eq!(jobs(&run(&t, "nggua")), jobs(&g));
        prop_assert_eq!(jobs(&run(&t, "nggua:model=stw,mapper=none")), jobs(&g));
    }

    /// gedf through the stop-the-world model makes the same selection as its native domain:
    /// same finishing times job by job (zero overheads); only CPUs may differ.
    #[test]
    fn gedf_stw_equals_gedf(t in worked::arb_sequential()) {
        let finish = |r: &RunResult| r.jobs.iter().map(|j| (j.task, j.job, j.finish)).collect::<Vec<_>>();
        let g = run(&t, "gedf");
        prop_assert_eq!(finish(&run(&t, "gedf:model=stw,mapper=3pass")), finish(&g));
        prop_assert_eq!(finish(&run(&t, "gedf:mapper=none")), finish(&g));
    }

    /// The 3-pass mapper's two rules, decision by decision (ChronOS §5.3, Fig 4): pass 1, an
    /// entity that runs on a CPU up to a decision and still runs after it stays on that CPU;
    /// pass 2, an entity that resumes on another CPU than the one it last ran on finds that CPU
    /// taken. Same finishes as no mapping (placement only). Not a run-level "never migrates
    /// more": placement changes which CPU each later entity is queued on, and on
    /// `three_pass_can_migrate_more_over_a_run` it migrates more (60 vs 41).
    #[test]
    fn three_pass_keeps_running_entities_and_prefers_queued_cpus(t in worked::arb_sequential(), spec in prop_oneof![Just("gedf"), Just("ggua"), Just("nggua"), Just("ghvdf")]) {
        let p3 = run(&t, &format!("{spec}:mapper=3pass"));
        let none = run(&t, &format!("{spec}:mapper=none"));
        prop_assert_eq!(mapper_violations(&p3), (0, 0), "{}", spec);
        prop_assert_eq!(jobs(&p3), jobs(&none));
    }

    /// Both models under the protocol checker, on sets with regions, critical sections,
    /// aborts and overruns.
    #[test]
    fn models_keep_the_protocol(t in common::arb_structured_taskset(), spec in prop_oneof![
        Just("gedf:model=ac"), Just("gnpedf:model=ac"), Just("gfifo:model=stw"), Just("gfp:model=ac"),
        Just("ggua"), Just("ggua:model=ac"), Just("nggua:model=ac"), Just("ghvdf:model=ac,mapper=none")]) {
        let m = t.platform.cpus;
        let mut p = ProtocolChecker::new(rtsched_policies::build(spec, &t).unwrap(), m);
        let r = simulate(&t, Options::policy(&mut p)).unwrap().result;
        prop_assert!(r.jobs.iter().all(|j| j.finish.is_some() || j.aborted || j.missed || j.start.is_none() || j.deadline >= r.end));
    }
}

#[test]
fn ghvdf_runs_the_densest_and_aborts_a_job_past_its_deadline() {
    // One CPU. a: C = 5, D = 4, utility 10 — completing at 5 > 4 earns nothing, so its value
    // density is 0; b: C = 2, D = 10, utility 1, density 1/2 per ms. b runs [0, 2); a then runs
    // [2, 4] and is aborted just after its deadline (ChronOS's check_task_failure), not before:
    // GHVDF does not judge feasibility.
    let r = simulate(&ts("platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 20, wcet: 5, deadline: 4, tuf: 10}\n  - {name: b, period: 20, wcet: 2, deadline: 10, tuf: 1}\n"), Options::spec("ghvdf").intervals(true)).map(|o| o.result)
    .unwrap();
    assert_eq!(ivs(&r), vec![(0, 0, 0, 2, 4), (0, 1, 0, 0, 2)]);
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!(
        (a.aborted, a.aborted_at, a.utility),
        (true, Some(4 * MS + 1), 0.0)
    );
    assert_eq!((b.finish, b.utility), (Some(2 * MS), 1.0));
}

#[test]
fn ggua_and_nggua_break_a_deadlock_by_aborting_the_least_pud() {
    // a and b take x / y at 0 and request y / x at 1 ms (2 CPUs): a deadlock at 1 ms. Each has
    // 3 ms left of a 4 ms WCET; a's utility is 5, b's 2, so b has the least PUD and is
    // aborted; a takes y at once and finishes at 4 ms.
    let set = ts("platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  - {name: a, period: 10, wcet: 4, tuf: 5, sections: [{resource: x, start: 0, length: 3}, {resource: y, start: 1, length: 1}]}\n  - {name: b, period: 10, wcet: 4, tuf: 2, sections: [{resource: y, start: 0, length: 3}, {resource: x, start: 1, length: 1}]}\n");
    for spec in ["ggua", "nggua", "ggua:model=ac"] {
        let mut p = ProtocolChecker::new(rtsched_policies::build(spec, &set).unwrap(), 2);
        let r = simulate(&set, Options::policy(&mut p)).unwrap().result;
        assert_eq!(r.counters.deadlocks, 1, "{spec}");
        let (a, b) = (&r.jobs[0], &r.jobs[1]);
        assert_eq!((a.finish, a.utility), (Some(4 * MS), 5.0), "{spec}");
        assert_eq!((b.aborted, b.aborted_at), (true, Some(MS)), "{spec}");
    }
}

#[test]
fn ggua_under_ac_aborts_what_stw_would_have_run_in_time() {
    // The set of `ac_preempts_only_at_a_deciding_cpus_event` under G-GUA (step TUFs of 1).
    // stw: at 1 c (PUD 1/2 per ms) is placed first, b (1/3) on the other CPU, a (1/5) behind c:
    // the heads c and b run, c preempts a and meets its deadline (finishes at 3; deadline 1 + 4).
    // ac: c's task never ran, so no CPU is its queued CPU, none is idle and none has an event:
    // c waits; at 3 ms + 1 ns it can no longer finish by its deadline 5 (G-GUA's timer) and is
    // aborted, though CPU 0 frees up at 4.
    let t = ts("platform: {cpus: 2}\nrun: {duration: 10}\ntasks:\n  \
        - {name: a, period: 40, wcet: 6, deadline: 20}\n  \
        - {name: b, period: 40, wcet: 4, deadline: 18}\n  \
        - {name: c, period: 40, wcet: 2, deadline: 4, offset: 1}\n");
    let stw = run(&t, "ggua:model=stw");
    assert_eq!(
        ivs(&stw),
        vec![
            (0, 1, 0, 0, 4),
            (1, 0, 0, 0, 1),
            (1, 0, 0, 3, 8),
            (1, 2, 0, 1, 3)
        ]
    );
    assert_eq!(stw.summaries().total.aur, 1.0);
    let ac = run(&t, "ggua:model=ac");
    assert_eq!(ivs(&ac), vec![(0, 1, 0, 0, 4), (1, 0, 0, 0, 6)]);
    assert_eq!(
        (ac.jobs[2].aborted, ac.jobs[2].aborted_at),
        (true, Some(3 * MS + 1))
    );
    assert!((ac.summaries().total.aur - 2.0 / 3.0).abs() < 1e-12);
}
