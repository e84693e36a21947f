//! Federated scheduling (Li, Chen, Agrawal, Lu, Gill, Saifullah, ECRTS 2014) in the simulator:
//! a schedule worked by hand, and properties on random fork-join sets — every heavy task stays
//! on its dedicated CPUs and, alone there under a greedy scheduler with n_i = ⌈(C−L)/(D−L)⌉
//! CPUs, never misses (Graham's bound); light tasks run sequentially on the shared CPUs.

mod worked;

use proptest::prelude::*;
use rtsched_analysis::schedulability::{global, Cdt};
use rtsched_model::{Region, Task, TaskSet, Time};
use rtsched_policies::federated::{self, Placement};
use rtsched_policies::EntityInfo;
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Observer, Options, View};
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use worked::{ivs, MS};

const US: u64 = 1_000;

fn ts(yaml: &str) -> TaskSet {
    worked::ts_named(yaml, "federated.yaml")
}

/// 4 CPUs. h: T = D = 10, regions [1, [4, 4, 4, 4], 1]: C = 18 > D, L = 6, so
/// n = ⌈(18 − 6)/(10 − 6)⌉ = 3: CPUs 0–2. Light a (C 3, T 10) and b (T = D = 8, regions
/// [1, [1, 1]]) share CPU 3 (u = .3 + .375).
///   h: region 0 [0,1] on CPU 0; at 1 the fork's threads 0, 1, 2 take CPUs 0, 1, 2 [1,5];
///   thread 3 runs [5,9] on CPU 0; the join at 9 releases region 2, [9,10]: finish 10 = D,
///   exactly Graham's bound L + (C − L)/n = 6 + 12/3.
///   CPU 3 (EDF, sequential): b (deadline 8) first, [0,1]; its fork releases thread 0 [1,2]
///   and holds thread 1 behind it, [2,3]; then a [3,6]. b's second job (released 8):
///   [8,9], [9,10], [10,11]. (h's second job starts at 10 on CPU 0.) Under gedf, b's two threads would run at once on two CPUs.
#[test]
fn a_heavy_task_alone_on_its_cpus_and_light_tasks_sequential_on_the_rest() {
    let t = ts("platform: {cpus: 4}
run: {duration: 10}
tasks:
  - {name: h, period: 10, regions: [1, [4, 4, 4, 4], 1]}
  - {name: a, period: 10, wcet: 3}
  - {name: b, period: 8, regions: [1, [1, 1]]}
");
    let r = simulate(&t, Options::spec("federated").intervals(true))
        .unwrap()
        .result;
    let before =
        |v: Vec<(u32, u32, u32, u64, u64)>| v.into_iter().filter(|x| x.3 < 11).collect::<Vec<_>>();
    assert_eq!(
        before(ivs(&r)),
        vec![
            (0, 0, 0, 0, 1),
            (0, 0, 0, 1, 5),
            (0, 0, 0, 9, 10),
            (0, 0, 0, 10, 11),
            (0, 0, 3, 5, 9),
            (1, 0, 1, 1, 5),
            (2, 0, 2, 1, 5),
            (3, 1, 0, 3, 6),
            (3, 2, 0, 0, 1),
            (3, 2, 0, 1, 2),
            (3, 2, 0, 8, 9),
            (3, 2, 0, 9, 10),
            (3, 2, 1, 2, 3),
            (3, 2, 1, 10, 11),
        ]
    );
    let finish = |task: u32, job: u64| {
        r.jobs
            .iter()
            .find(|j| j.task == task && j.job == job)
            .unwrap()
            .finish
            .map(|f| f / MS)
    };
    assert_eq!(
        (finish(0, 0), finish(1, 0), finish(2, 0), finish(2, 1)),
        (Some(10), Some(6), Some(3), Some(11))
    );
    assert_eq!(r.summaries().total.missed, 0);
    // The placement, as a user reads it from the policy's stats.
    let stats = simulate(&t, Options::spec("federated").policy_stats(true))
        .unwrap()
        .stats;
    let get = |k: &str| stats.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(
        (
            get("heavy_tasks"),
            get("dedicated_cpus"),
            get("shared_cpus")
        ),
        (Some(1.0), Some(3.0), Some(1.0))
    );
    assert_eq!((get("first_cpu:h"), get("cpus:h")), (Some(0.0), Some(3.0)));
    assert_eq!(
        get("serialised_threads"),
        Some(2.0),
        "b's thread 1, in each of its two jobs"
    );
    // gedf runs b's threads in parallel and spreads h over every CPU.
    let g = simulate(&t, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    assert!(g.intervals.iter().any(|i| i.task == 0 && i.cpu == 3));
}

/// The refusals reach the user as build errors naming the task (the CLI exits 2 on them).
#[test]
fn a_set_it_cannot_place_is_refused() {
    let t = ts("platform: {cpus: 4}\nrun: {duration: 10}\ntasks:\n  - {name: h, period: 10, regions: [1, [4, 4, 4, 4], 1]}\n  - {name: k, period: 10, regions: [1, [4, 4, 4, 4], 1]}\n");
    let e = simulate(&t, Options::spec("federated"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("federated.yaml: task 'k': federated: needs n = "),
        "{e}"
    );
    let t = ts("platform: {cpus: 8}\nrun: {duration: 10}\ntasks:\n  - {name: deep, period: 10, regions: [5, [4, 4], 2]}\n");
    let e = simulate(&t, Options::spec("federated"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("task 'deep'") && e.contains("L = 11ms ≥ D = 10ms"),
        "{e}"
    );
}

/// One thread's run on one CPU, with its region (intervals carry no region).
#[derive(Clone, Copy, Debug)]
struct Seg {
    e: EntityInfo,
    start: Time,
    end: Time,
}

/// Records who runs where after every instant, and checks at each instant: no entity on two
/// CPUs, each task's entities only on its CPUs, at most one running thread per light job.
struct Timeline {
    placement: Placement,
    on: Vec<Option<(EntityInfo, Time)>>,
    segs: Vec<Seg>,
    failure: Option<String>,
}

impl Timeline {
    fn new(placement: Placement, m: u32) -> Self {
        Timeline {
            placement,
            on: vec![None; m as usize],
            segs: Vec::new(),
            failure: None,
        }
    }
    fn fail(&mut self, msg: String) {
        self.failure.get_or_insert(msg);
    }
    fn cpus_of(&self, task: u32) -> Range<u32> {
        self.placement.dedicated[task as usize]
            .clone()
            .unwrap_or(self.placement.shared.clone())
    }
}

impl Observer for &mut Timeline {
    fn after_instant(&mut self, v: &View<'_>) {
        let live: BTreeMap<u32, EntityInfo> = v.live().map(|(e, _)| (e.id, e)).collect();
        let mut seen = HashSet::new();
        let mut light_jobs = HashSet::new();
        for (c, r) in v.running.iter().enumerate() {
            let now = r.map(|id| live[&id]);
            if let Some(e) = now {
                if !seen.insert(e.id) {
                    self.fail(format!("t={} entity {} on two CPUs", v.now, e.id));
                }
                if !self.cpus_of(e.task).contains(&(c as u32)) {
                    self.fail(format!(
                        "t={} task {} (thread {}.{}) on CPU {c}, outside {:?}",
                        v.now,
                        e.task,
                        e.region,
                        e.thread,
                        self.cpus_of(e.task)
                    ));
                }
                if self.placement.dedicated[e.task as usize].is_none()
                    && !light_jobs.insert((e.task, e.job))
                {
                    self.fail(format!(
                        "t={} light task {} job {} runs two threads at once",
                        v.now, e.task, e.job
                    ));
                }
            }
            let prev = self.on[c];
            if prev.map(|p| p.0) != now {
                if let Some((e, since)) = prev {
                    if v.now > since {
                        self.segs.push(Seg {
                            e,
                            start: since,
                            end: v.now,
                        });
                    }
                }
                self.on[c] = now.map(|e| (e, v.now));
            }
        }
    }
}

/// A fork-join task in units of 100 µs: regions of threads, and whether to make it heavy.
/// Heavy: D between L and C, with D − L = ⌈(C − L)/n⌉ so that it needs at most n CPUs.
/// Light: D ≥ C. T ≥ D; some tasks sporadic.
fn arb_task() -> impl Strategy<Value = Task> {
    (
        prop::collection::vec(prop::collection::vec(1u64..=30, 1..=6), 1..=4),
        any::<bool>(),
        2u64..=6,
        0u64..=60,
        0u64..=50,
        0u64..=8,
        any::<bool>(),
    )
        .prop_map(|(regions, heavy, n, slack, tslack, off, sporadic)| {
            let unit = 100 * US;
            let mut t = Task::periodic("t", 1, 0);
            t.regions = regions
                .iter()
                .map(|r| Region {
                    threads: r.iter().map(|&x| x * unit).collect(),
                })
                .collect();
            t.wcet = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
            let (c, l) = (t.wcet, t.critical_path());
            t.deadline = if heavy && c - l >= 2 * unit {
                l + (c - l).div_ceil(n).max(1)
            } else {
                c + c * slack / 100
            };
            // Light tasks get longer periods (u ≤ 1/(1 + tslack%)... and down to 1/3.5).
            let stretch = if t.deadline >= c {
                100 + tslack + 150
            } else {
                100 + tslack
            };
            t.period = t.deadline * stretch / 100;
            t.offset = off * 250 * US;
            if sporadic {
                t.max_interarrival = Some(t.period * 3 / 2);
            }
            t
        })
}

/// Sets federated can place: m = Σ n_i + ⌈U_light⌉ + extra.
fn arb_set() -> impl Strategy<Value = TaskSet> {
    (
        prop::collection::vec(arb_task(), 1..=6),
        0u32..=2,
        any::<u64>(),
    )
        .prop_map(|(mut tasks, extra, seed)| {
            for (i, t) in tasks.iter_mut().enumerate() {
                t.name = format!("t{i}");
            }
            let heavy: u64 = tasks
                .iter()
                .filter(|t| federated::is_heavy(t))
                .map(|t| {
                    federated::cores_needed(t.wcet, t.critical_path(), federated::deadline(t))
                        .unwrap()
                })
                .sum();
            let u_light: f64 = tasks
                .iter()
                .filter(|t| !federated::is_heavy(t))
                .map(Task::utilization)
                .sum();
            let m = heavy as u32 + u_light.ceil() as u32 + extra;
            let mut ts = TaskSet::new(m.max(1), tasks);
            let longest = ts.tasks.iter().map(|t| t.period).max().unwrap();
            ts.run.duration = 6 * longest;
            ts.run.seed = seed;
            ts
        })
}

/// Whether global EDF on `m` CPUs provably meets the light tasks' deadlines (GFB or BCL, for
/// sequential sporadic tasks: the light tasks run sequentially).
fn light_tasks_pass_a_gedf_test(ts: &TaskSet, m: u32) -> bool {
    let light: Vec<Cdt> = ts
        .tasks
        .iter()
        .filter(|t| !federated::is_heavy(t))
        .map(Cdt::from)
        .collect();
    light.is_empty()
        || global::gfb(&light, m).schedulable == Some(true)
        || global::bcl(&light, m).schedulable == Some(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// On random fork-join sets, under the protocol checker: no thread on two CPUs, every
    /// task's threads only on its CPUs (heavy: its dedicated ones; light: the shared ones), a
    /// light job never runs two threads at once, no thread of region k+1 starts before every
    /// thread of region k ended, each thread of a finished job ran exactly its WCET (the
    /// execution model is the WCET), and no heavy task misses (Graham's bound with n_i CPUs);
    /// nor does any task when the light tasks pass a global EDF test on the shared CPUs.
    #[test]
    fn heavy_tasks_stay_on_their_cpus_and_meet_their_deadlines(ts in arb_set()) {
        let placement = match federated::place(&ts) {
            Ok(p) => p,
            Err(e) => return Err(TestCaseError::fail(format!("the generator makes placeable sets: {e}"))),
        };
        let m = ts.platform.cpus;
        let mut policy = ProtocolChecker::new(rtsched_policies::build("federated", &ts).unwrap(), m);
        let mut tl = Timeline::new(placement.clone(), m);
        let r = simulate(&ts, Options::policy(&mut policy).observer(&mut tl).intervals(true)).unwrap().result;
        if let Some(f) = tl.failure.take() {
            return Err(TestCaseError::fail(f));
        }
        // Per finished job: its segments by (region, thread).
        let mut by_job: BTreeMap<(u32, u64), Vec<Seg>> = BTreeMap::new();
        for s in &tl.segs {
            by_job.entry((s.e.task, s.e.job)).or_default().push(*s);
        }
        for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
            let segs = &by_job[&(j.task, j.job)];
            let task = &ts.tasks[j.task as usize];
            let mut work: BTreeMap<(u32, u32), Time> = BTreeMap::new();
            for s in segs {
                *work.entry((s.e.region, s.e.thread)).or_default() += s.end - s.start;
            }
            for (ri, region) in task.regions.iter().enumerate() {
                for (ti, &w) in region.threads.iter().enumerate() {
                    prop_assert_eq!(work.get(&(ri as u32, ti as u32)).copied(), Some(w), "task {} job {} thread {}.{}", j.task, j.job, ri, ti);
                }
                if ri + 1 < task.regions.len() {
                    let end = segs.iter().filter(|s| s.e.region == ri as u32).map(|s| s.end).max().unwrap();
                    let next = segs.iter().filter(|s| s.e.region == ri as u32 + 1).map(|s| s.start).min().unwrap();
                    prop_assert!(next >= end, "task {} job {}: region {} starts at {} before region {} ends at {}", j.task, j.job, ri + 1, next, ri, end);
                }
            }
            prop_assert_eq!(j.finish.unwrap() > j.deadline, j.missed);
        }
        let guaranteed = light_tasks_pass_a_gedf_test(&ts, placement.shared.len() as u32);
        for j in &r.jobs {
            let heavy = placement.dedicated[j.task as usize].is_some();
            prop_assert!(!(j.missed && (heavy || guaranteed)), "task {} (heavy: {}) job {} missed: release {} deadline {} finish {:?}; n = {:?}", j.task, heavy, j.job, j.release, j.deadline, j.finish, placement.dedicated[j.task as usize]);
        }
    }
}

/// The generator makes heavy tasks, light tasks, and both together, often enough.
#[test]
fn the_generator_makes_heavy_and_light_tasks() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut heavy, mut light, mut mixed, mut guaranteed) = (0, 0, 0, 0);
    for _ in 0..300 {
        let ts = arb_set().new_tree(&mut runner).unwrap().current();
        let p = federated::place(&ts).unwrap();
        let h = p.dedicated.iter().filter(|d| d.is_some()).count();
        heavy += (h > 0) as u32;
        light += (h < ts.tasks.len()) as u32;
        mixed += (h > 0 && h < ts.tasks.len()) as u32;
        guaranteed += light_tasks_pass_a_gedf_test(&ts, p.shared.len() as u32) as u32;
    }
    assert!(
        heavy > 150 && light > 150 && mixed > 100 && guaranteed > 100,
        "heavy {heavy}, light {light}, mixed {mixed}, light guaranteed {guaranteed}"
    );
}
