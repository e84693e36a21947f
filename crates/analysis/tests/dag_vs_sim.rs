//! The DAG tests (`schedulability::dag`) against the simulator: a set a sufficient test accepts
//! never misses a deadline when simulated from a synchronous periodic release at WCET (the
//! run's default execution model), under the scheduler the test speaks for — `federated` for
//! the federated test (Li et al., ECRTS 2014), `gedf` for Li et al.'s capacity augmentation
//! bound (ECRTS 2013).
//!
//! Sets are generated near each test's bound (the fewest CPUs the test accepts, heavy tasks'
//! deadlines at exactly the n they need), so acceptances are the rule, not the exception. And
//! the properties have teeth: a test weakened — federated giving each heavy task one CPU fewer
//! than ⌈(C − L)/(D − L)⌉ (and the policy placed likewise), or the capacity bound relaxed from
//! 4 − 2/m to 5/4 — accepts sets the simulator shows missing
//! (`acceptances_are_common_and_weakened_tests_are_caught`).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rtsched_analysis::gen::dag;
use rtsched_analysis::schedulability::dag::{
    cores_needed, federated, federated_with, gedf_li, gedf_li_with, DagTask,
};
use rtsched_model::{ExecModel, Region, Task, TaskSet, Time};
use rtsched_policies::federated::{Federated, Placement};
use rtsched_sim::{simulate, Options};

/// The time unit of generated WCETs: 100 µs.
const UNIT: Time = 100_000;

/// How a generated task's job is written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// Fork-join regions (`regions:`), which the simulator runs.
    ForkJoin,
    /// A DAG (`dag:`) drawn by the generators' shapes (`gen::dag`: nested fork-join or
    /// layered), its work split over the nodes as they split it.
    Dag,
}

/// The shapes the properties simulate: fork-join regions and DAGs (the simulator runs both,
/// and `federated` places a DAG task by its DAG's critical path).
const SIMULATED: &[Shape] = &[Shape::ForkJoin, Shape::Dag];

fn arb_shape() -> impl Strategy<Value = Shape> {
    prop::sample::select(SIMULATED.to_vec())
}

/// A task with only its structure and `wcet` (its work) set; timing is filled in later.
fn arb_structure(shape: Shape) -> BoxedStrategy<Task> {
    match shape {
        Shape::ForkJoin => prop::collection::vec(prop::collection::vec(1u64..=30, 1..=6), 1..=4)
            .prop_map(|regions| {
                let mut t = Task::periodic("t", 1, 0);
                t.regions = regions
                    .into_iter()
                    .map(|r| Region {
                        threads: r.into_iter().map(|x| x * UNIT).collect(),
                    })
                    .collect();
                t.wcet = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
                t
            })
            .boxed(),
        Shape::Dag => (any::<u64>(), any::<bool>(), 1u64..=12)
            .prop_map(|(seed, nested, per_node)| {
                // The DAG generators' shapes (`gen::dag`), each node 1..=12 units on average.
                let shape = if nested {
                    dag::Shape::NestedForkJoin {
                        p: 0.7,
                        k: 3,
                        d: 2,
                        p_add: 0.1,
                    }
                } else {
                    dag::Shape::Layered {
                        nodes: (3, 10),
                        layers: (1, 3),
                        p: 0.5,
                    }
                };
                let mut rng = rtsched_analysis::gen::rng(seed);
                let mut g = shape.draw(&mut rng);
                let c = g.nodes.len() as Time * per_node * UNIT;
                dag::split_work(&mut rng, &mut g, c);
                let mut t = Task::periodic("t", 1, 0);
                t.wcet = g.work();
                t.dag = Some(g);
                t
            })
            .boxed(),
    }
}

fn span(t: &Task) -> Time {
    rtsched_analysis::schedulability::dag::span(t)
}

/// Name the tasks, simulate six of the longest periods from a synchronous release.
fn finish(m: u32, mut tasks: Vec<Task>) -> TaskSet {
    for (i, t) in tasks.iter_mut().enumerate() {
        t.name = format!("t{i}");
    }
    let mut ts = TaskSet::new(m.max(1), tasks);
    ts.run.duration = 6 * ts.tasks.iter().map(|t| t.period).max().unwrap();
    ts
}

/// How many CPUs federated gives a heavy task: the rule, or (weakened) one fewer.
fn cores(weakened: bool) -> impl Fn(Time, Time, Time) -> Option<u64> {
    move |c, l, d| cores_needed(c, l, d).map(|n| if weakened { (n - 1).max(1) } else { n })
}

/// Federated sets: heavy tasks with D − L = ⌈(C − L)/n⌉ (exactly n CPUs needed), light ones
/// with D ≥ C, T ≥ D; m = Σ n_i + ⌈U_light⌉ + extra, with n_i as `weakened` counts them.
fn arb_federated(weakened: bool) -> impl Strategy<Value = TaskSet> {
    let task = arb_shape().prop_flat_map(|s| {
        (
            arb_structure(s),
            any::<bool>(),
            2u64..=6,
            0u64..=60,
            0u64..=50,
        )
    });
    (prop::collection::vec(task, 1..=6), 0u32..=2).prop_map(move |(tasks, extra)| {
        let tasks: Vec<Task> = tasks
            .into_iter()
            .map(|(mut t, heavy, n, slack, tslack)| {
                let (c, l) = (t.wcet, span(&t));
                t.deadline = if heavy && c - l >= 2 * UNIT {
                    l + (c - l).div_ceil(n).max(1)
                } else {
                    c + c * slack / 100
                };
                let stretch = if t.deadline >= c { 250 } else { 100 } + tslack;
                t.period = t.deadline * stretch / 100;
                t
            })
            .collect();
        let dt: Vec<DagTask> = tasks.iter().map(DagTask::from).collect();
        let n = cores(weakened);
        let heavy: u64 = dt
            .iter()
            .filter(|x| x.is_heavy())
            .map(|x| n(x.c, x.l, x.federated_deadline()).unwrap())
            .sum();
        let u_light: f64 = dt
            .iter()
            .filter(|x| !x.is_heavy())
            .map(|x| x.c as f64 / x.t as f64)
            .sum();
        finish(heavy as u32 + u_light.ceil() as u32 + extra, tasks)
    })
}

/// Global EDF sets: D = T = ⌈b_max·L·(100 + slack)/100⌉ (so L ≤ D/b), on the fewest CPUs
/// the test with bound `b` accepts: U just under m/b.
fn arb_gedf(b: Bound) -> impl Strategy<Value = TaskSet> {
    let task = arb_shape().prop_flat_map(|s| (arb_structure(s), 0u64..=50));
    prop::collection::vec(task, 1..=6).prop_map(move |tasks| {
        let tasks: Vec<Task> = tasks
            .into_iter()
            .map(|(mut t, slack)| {
                let (num, den) = b.max();
                t.period = (num * span(&t) * (100 + slack)).div_ceil(100 * den);
                t.deadline = t.period;
                t
            })
            .collect();
        let dt: Vec<DagTask> = tasks.iter().map(DagTask::from).collect();
        let m = (1..=256u32)
            .find(|&m| li(&dt, m, b).schedulable == Some(true))
            .unwrap_or(256);
        finish(m, tasks)
    })
}

/// The capacity augmentation bound b a test uses: the theorem's 4 − 2/m, or a fixed b/den.
#[derive(Clone, Copy, Debug)]
enum Bound {
    Li,
    Fixed(u64, u64),
}

impl Bound {
    /// The largest b over every m, as a fraction.
    fn max(self) -> (u64, u64) {
        match self {
            Bound::Li => (4, 1),
            Bound::Fixed(n, d) => (n, d),
        }
    }
}

/// Li et al.'s test with bound `b`.
fn li(dt: &[DagTask], m: u32, b: Bound) -> rtsched_analysis::schedulability::Verdict {
    match b {
        Bound::Li => gedf_li(dt, m),
        Bound::Fixed(n, d) => gedf_li_with(dt, m, n, d),
    }
}

fn missed(ts: &TaskSet, opts: Options) -> u64 {
    assert_eq!(ts.run.execution, ExecModel::Wcet, "jobs run at their WCET");
    let r = simulate(ts, opts).unwrap().result;
    // Six of the longest periods: every task releases at least six jobs.
    assert!(r.jobs.len() >= 6 * ts.tasks.len(), "{} jobs", r.jobs.len());
    r.summaries().total.missed
}

/// Federated on `ts`: `None` if the test (or its weakened form) does not accept it, else the
/// misses of the federated policy placed as the test counted.
fn federated_case(ts: &TaskSet, weakened: bool) -> Option<u64> {
    let dt: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
    let m = ts.platform.cpus;
    let v = if weakened {
        federated_with(&dt, m, cores(true))
    } else {
        federated(&dt, m)
    };
    if v.schedulable != Some(true) {
        return None;
    }
    if !weakened {
        return Some(missed(ts, Options::spec("federated")));
    }
    // The policy as the weakened test placed it: heavy tasks on n − 1 CPUs, in task order.
    let n = cores(true);
    let mut next = 0u32;
    let dedicated = dt
        .iter()
        .map(|x| {
            x.is_heavy().then(|| {
                let k = n(x.c, x.l, x.federated_deadline()).unwrap() as u32;
                next += k;
                next - k..next
            })
        })
        .collect();
    let mut policy = Federated::new(
        ts,
        Placement {
            dedicated,
            shared: next..m,
        },
    );
    Some(missed(ts, Options::policy(&mut policy)))
}

/// Li et al. on `ts` with bound `b`: `None` if not accepted, else gedf's misses.
fn gedf_case(ts: &TaskSet, b: Bound) -> Option<u64> {
    let dt: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
    (li(&dt, ts.platform.cpus, b).schedulable == Some(true))
        .then(|| missed(ts, Options::spec("gedf")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn a_federated_acceptance_never_misses(ts in arb_federated(false)) {
        if let Some(missed) = federated_case(&ts, false) {
            prop_assert_eq!(missed, 0, "federated accepted but the policy missed: {:?}", ts);
        }
    }

    /// The test counts CPUs as the policy places them: when it accepts, `federated::place`
    /// succeeds with n_i = ⌈(C − L)/(D − L)⌉ CPUs per heavy task and the rest shared; and a set
    /// the policy refuses is never accepted. Up to 3 CPUs fewer than the set was made for, so
    /// that the policy refuses some.
    #[test]
    fn federated_counts_cpus_as_the_policy_places(mut ts in arb_federated(false), cut in 0u32..=3) {
        ts.platform.cpus = ts.platform.cpus.saturating_sub(cut).max(1);
        let dt: Vec<DagTask> = ts.tasks.iter().map(DagTask::from).collect();
        let accepted = federated(&dt, ts.platform.cpus).schedulable == Some(true);
        match rtsched_policies::federated::place(&ts) {
            Ok(p) => {
                let mut used = 0;
                for (x, d) in dt.iter().zip(&p.dedicated) {
                    let n = x.is_heavy().then(|| cores_needed(x.c, x.l, x.federated_deadline()).unwrap());
                    prop_assert_eq!(d.as_ref().map(|r| r.len() as u64), n);
                    used += n.unwrap_or(0);
                }
                prop_assert_eq!(p.shared.len() as u64, ts.platform.cpus as u64 - used);
            }
            Err(e) => prop_assert!(!accepted, "accepted, but the policy refuses: {}", e),
        }
    }

    #[test]
    fn a_gedf_dag_li_acceptance_never_misses(ts in arb_gedf(Bound::Li)) {
        if let Some(missed) = gedf_case(&ts, Bound::Li) {
            prop_assert_eq!(missed, 0, "gedf-dag-li accepted but gedf missed: {:?}", ts);
        }
    }
}

/// Over a fixed sample: how many sets the test accepts, and how many of those miss.
fn sample(
    n: usize,
    seed: u8,
    strategy: impl Strategy<Value = TaskSet>,
    mut case: impl FnMut(&TaskSet) -> Option<u64>,
) -> (usize, usize) {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    );
    let (mut accepted, mut missing) = (0, 0);
    for _ in 0..n {
        let ts = strategy.new_tree(&mut runner).unwrap().current();
        if let Some(m) = case(&ts) {
            accepted += 1;
            missing += (m > 0) as usize;
        }
    }
    (accepted, missing)
}

/// Acceptances are common (the properties above check something), and each weakened test
/// accepts sets the simulator shows missing (the properties would catch such a test).
#[test]
fn acceptances_are_common_and_weakened_tests_are_caught() {
    let (acc, miss) = sample(300, 3, arb_federated(false), |ts| federated_case(ts, false));
    eprintln!("federated: {acc} of 300 accepted, {miss} missed");
    assert!(
        acc >= 150 && miss == 0,
        "federated: {acc} accepted, {miss} missed"
    );
    let (acc, miss) = sample(300, 3, arb_gedf(Bound::Li), |ts| gedf_case(ts, Bound::Li));
    eprintln!("gedf-dag-li: {acc} of 300 accepted, {miss} missed");
    assert!(
        acc >= 250 && miss == 0,
        "gedf-dag-li: {acc} accepted, {miss} missed"
    );
    let (acc, miss) = sample(300, 5, arb_federated(true), |ts| federated_case(ts, true));
    eprintln!("federated with n − 1 CPUs: {acc} of 300 accepted, {miss} missed");
    assert!(
        miss >= 10,
        "federated with n − 1 CPUs: {acc} accepted, only {miss} missed"
    );
    // b = 5/4 for every m (U ≤ 0.8m, every L ≤ 0.8D: a feasible-looking bound) in place of
    // 4 − 2/m. (Relaxed to 3/2 or 2, the same sample shows no miss: synchronous releases of
    // random sets rarely reach GEDF's worst case.)
    let b = Bound::Fixed(5, 4);
    let (acc, miss) = sample(300, 5, arb_gedf(b), |ts| gedf_case(ts, b));
    eprintln!("gedf-dag-li with b = 5/4: {acc} of 300 accepted, {miss} missed");
    assert!(
        miss >= 10,
        "gedf-dag-li with b = 5/4: {acc} accepted, only {miss} missed"
    );
}

/// A DAG-shaped task is analysed by its work and its critical path, like a fork-join task with
/// the same C and L (the shape the simulator cannot run yet is at least generated and analysed).
#[test]
fn dag_shape_is_analysed_like_its_work_and_span() {
    let mut runner = TestRunner::deterministic();
    for _ in 0..100 {
        let t = arb_structure(Shape::Dag)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let dag = t.dag.as_ref().unwrap();
        assert!(dag.topological_order().is_some());
        let x = DagTask::from(&t);
        assert_eq!((x.c, x.l), (dag.work(), dag.critical_path()));
        assert!(x.l <= x.c && x.l >= dag.nodes.iter().map(|n| n.wcet).max().unwrap());
    }
}
