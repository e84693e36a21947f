//! The overhead-aware tests against the overhead-charged simulator (issue #13: "overhead-aware
//! tests never accept a set the overhead-charged simulator shows missing"). Random small task
//! sets (1–4 CPUs, implicit or constrained deadlines, synchronous periodic releases) with
//! random overheads — decision, context switch, migration, release latency, tick — are
//! analysed with `analyze_with_overheads` and partitioned with overhead-aware admission; every
//! "schedulable" is simulated with the same overheads for at least two hyperperiods under the
//! scheduler the test speaks for, and must meet every deadline.

use proptest::prelude::*;
use rtsched_analysis::overheads::analyze_with_overheads;
use rtsched_analysis::partition::{by_name, Admission};
use rtsched_analysis::schedulability::analyze;
use rtsched_model::{Overheads, Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const US: Time = 1_000;
const MS: Time = 1_000_000;

/// The scheduler a test's verdict speaks for (as in crates/sim/tests/analysis_vs_sim.rs).
fn scheduler_for(test: &str) -> Option<&'static str> {
    Some(match test {
        "edf-exact" | "edf-density" | "gedf-gfb" | "gedf-bcl" => "gedf",
        "fp-rta-rm" | "rm-liu-layland" | "rm-hyperbolic" => "gfp:rm",
        "fp-rta-dm" => "gfp:dm",
        "fp-rta-file" | "gfp-rta-file" | "gfp-rta-lc-file" => "gfp:file",
        "gedf-rta" | "gedf-baruah" => "gedf",
        "gfp-rta-rm" | "gfp-rta-lc-rm" => "gfp:rm",
        "gfp-rta-dm" | "gfp-rta-lc-dm" => "gfp:dm",
        "p-edf-exact" | "p-edf-density" => "pedf",
        "p-fp-rta-rm" | "p-rm-liu-layland" | "p-rm-hyperbolic" => "pfp:rm",
        "p-fp-rta-dm" => "pfp:dm",
        "p-fp-rta-file" => "pfp:file",
        _ => return None,
    })
}

fn gcd(a: Time, b: Time) -> Time {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Periods divide 40 ms, so a hyperperiod is at most 40 ms.
const PERIODS_MS: [Time; 6] = [1, 2, 4, 5, 8, 10];
const TICK_PERIODS: [Time; 4] = [250 * US, 500 * US, MS, 4 * MS];

/// Real-time bandwidth cap periods (the simulator checks the cap every tick period).
const RT_PERIODS: [Time; 3] = [5 * MS, 10 * MS, 20 * MS];

/// (m, partitioned, tasks: (period index, C per mille of T, D per cent of T, implicit, CPU,
/// phase per mille of T or none), overheads: (decision, cs, migration, release, tick, tick
/// period index), bandwidth cap: (runtime per mille of its period, period index) or none).
type Raw = (
    u32,
    bool,
    Vec<(usize, u64, u64, bool, u32, Option<u64>)>,
    (Time, Time, Time, Time, Time, usize),
    Option<(u64, usize)>,
);

fn build((m, partitioned, tasks, (dec, cs, mig, rel, tick, tp), cap): Raw) -> TaskSet {
    let tasks: Vec<Task> = tasks
        .iter()
        .enumerate()
        .map(|(i, &(p, cpm, dpct, implicit, cpu, phase))| {
            let period = PERIODS_MS[p] * MS;
            let mut t = Task::periodic(format!("t{i}"), period, (period * cpm / 1000).max(1));
            if !implicit {
                t.deadline = (period * dpct / 100).max(t.wcet);
            }
            // A phase moves the task off the synchronous release (not the worst case for
            // global EDF) and makes it sporadic, up to 20% late.
            if let Some(ph) = phase {
                t.offset = period * ph / 1000;
                t.max_interarrival = Some(period + period * (ph % 200) / 1000);
            }
            t.priority = Some(10 * (cpu + 1) + i as u32); // distinct
            t.cpu = partitioned.then_some(cpu % m);
            t
        })
        .collect();
    let mut ts = TaskSet::new(m, tasks);
    ts.run.overheads = Overheads {
        decision: dec,
        context_switch: cs,
        migration: mig,
        release: rel,
        tick,
        tick_period: TICK_PERIODS[tp],
        ..Overheads::default()
    };
    if let Some((pm, rp)) = cap {
        ts.run.overheads.rt_period = RT_PERIODS[rp];
        ts.run.overheads.rt_runtime = RT_PERIODS[rp] * pm / 1000;
    }
    let hyper = ts
        .tasks
        .iter()
        .fold(1, |l, t| l / gcd(l, t.period) * t.period);
    ts.run.duration = 2 * hyper.max(4 * ts.tasks.iter().map(|t| t.period).max().unwrap());
    ts
}

fn arb_raw() -> impl Strategy<Value = Raw> {
    // Mostly light tasks, some heavy ones (C up to 99% of T: tight single-task cases).
    let c = prop_oneof![3 => 5u64..=600, 1 => 600u64..=990];
    let phase = prop_oneof![3 => Just(None), 1 => (0u64..1000).prop_map(Some)];
    let task = (0usize..6, c, 40u64..=100, any::<bool>(), 0u32..4, phase);
    let oh = (
        0..=30 * US,
        0..=30 * US,
        0..=80 * US,
        0..=200 * US,
        0..=40 * US,
        0usize..4,
    );
    let cap = prop_oneof![3 => Just(None), 1 => (700u64..=990, 0usize..3).prop_map(Some)];
    (
        1u32..=4,
        any::<bool>(),
        prop::collection::vec(task, 1..=6),
        oh,
        cap,
    )
}

fn misses(ts: &TaskSet, spec: &str) -> u64 {
    let r = simulate(ts, Options::spec(spec))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
        .result;
    // What the analysis relies on: a job occupies its CPUs for its work and its charges only.
    for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
        assert_eq!(
            j.exec,
            j.demand + j.overhead,
            "{spec}: job {}/{} ran {} for demand {} + overhead {}",
            j.task,
            j.job,
            j.exec,
            j.demand,
            j.overhead
        );
    }
    r.summaries().total.missed
}

/// Check one task set; returns how many overhead-aware acceptances were simulated.
fn check(ts: &TaskSet) -> Result<usize, TestCaseError> {
    let mut checked = 0;
    for v in analyze_with_overheads(ts, &ts.run.overheads).verdicts {
        if v.schedulable != Some(true) {
            continue;
        }
        let Some(spec) = scheduler_for(&v.test) else {
            continue;
        };
        let missed = misses(ts, spec);
        prop_assert_eq!(
            missed,
            0,
            "{} with overheads said schedulable ({}) but {} missed {}: {:?}",
            v.test,
            v.detail,
            spec,
            missed,
            ts
        );
        checked += 1;
    }
    // Partitioning: admission reads `run.overheads` (and so does the policy when it partitions).
    let mut unbound = ts.clone();
    unbound.tasks.iter_mut().for_each(|t| t.cpu = None);
    for (heuristic, spec) in [("ffd", "pedf:ffd"), ("wfd", "pedf:wfd")] {
        if by_name(heuristic)
            .unwrap()
            .partition(&unbound, &Admission::EdfExact)
            .is_ok()
        {
            let missed = misses(&unbound, spec);
            prop_assert_eq!(
                missed,
                0,
                "{} admitted with overheads but {} missed {}: {:?}",
                heuristic,
                spec,
                missed,
                unbound
            );
            checked += 1;
        }
    }
    let rm = rtsched_analysis::priority::rate_monotonic(&unbound.tasks);
    if by_name("ffd")
        .unwrap()
        .partition(&unbound, &Admission::FpRta(rm))
        .is_ok()
    {
        let missed = misses(&unbound, "pfp:rm,partition=ffd");
        prop_assert_eq!(
            missed,
            0,
            "ffd (RM admission) with overheads but pfp missed {}: {:?}",
            missed,
            unbound
        );
        checked += 1;
    }
    Ok(checked)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn an_overhead_aware_acceptance_is_never_contradicted(raw in arb_raw()) {
        check(&build(raw))?;
    }
}

/// The property has teeth: over a fixed sample, the overhead-aware tests accept many sets,
/// and the plain tests accept sets that the overhead-charged simulator shows missing (so an
/// analysis that forgot the overheads would fail the property above).
#[test]
fn overheads_matter_and_acceptances_are_checked() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let (mut accepted, mut plain_wrong) = (0, 0);
    for _ in 0..300 {
        let ts = build(arb_raw().new_tree(&mut runner).unwrap().current());
        accepted += check(&ts).unwrap();
        for v in analyze(&ts) {
            if v.schedulable == Some(true)
                && scheduler_for(&v.test).is_some_and(|s| misses(&ts, s) > 0)
            {
                plain_wrong += 1;
                break;
            }
        }
    }
    assert!(
        accepted >= 100,
        "only {accepted} overhead-aware acceptances to check"
    );
    assert!(
        plain_wrong >= 10,
        "only {plain_wrong} sets where the plain analysis is contradicted by the overheads"
    );
    eprintln!("checked {accepted} overhead-aware acceptances; plain analysis contradicted on {plain_wrong} of 300 sets");
}

/// Hand-worked: one CPU, (C, T) = (4ms, 10ms), (5ms, 10ms), U = 0.9, decision and context
/// switch 10us each, and a tick of 150us every 1ms. Plain EDF accepts; the simulator misses:
/// a runs 4ms + 20us + the ticks at 1..4ms = 4.62ms, b then 5ms + 20us + the ticks at 5..10ms
/// = 5.92ms, finishing at 10.54ms. The overhead-aware test does not accept:
/// C'' = ⌈(4ms + 2·20us + 150us)·1ms/850us⌉ = 4929412ns, ⌈5.19ms/0.85⌉ = 6105883ns: U'' = 1.10.
#[test]
fn tick_steals_the_slack_by_hand() {
    let mut ts = TaskSet::new(
        1,
        vec![
            Task::periodic("a", 10 * MS, 4 * MS),
            Task::periodic("b", 10 * MS, 5 * MS),
        ],
    );
    ts.run.overheads = Overheads {
        decision: 10 * US,
        context_switch: 10 * US,
        tick: 150 * US,
        tick_period: MS,
        ..Overheads::default()
    };
    ts.run.duration = 100 * MS;
    let plain = analyze(&ts)
        .into_iter()
        .find(|v| v.test == "edf-exact")
        .unwrap();
    assert_eq!(plain.schedulable, Some(true));
    assert!(misses(&ts, "gedf") > 0);
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    assert_eq!(a.tasks[0].partitioned.task.c, 4_929_412);
    assert_eq!(a.tasks[1].partitioned.task.c, 6_105_883);
    let r = simulate(&ts, Options::spec("gedf")).unwrap().result;
    assert_eq!(
        (r.jobs[0].finish, r.jobs[1].finish),
        (Some(4_620_000), Some(10_540_000))
    );
    assert_eq!(
        a.verdicts
            .iter()
            .find(|v| v.test == "edf-exact")
            .unwrap()
            .schedulable,
        None
    );
    // A smaller tick leaves room: 10us every 1ms: C'' = 4.05/0.99 = 4.090…, 5.05/0.99 =
    // 5.101…ms: U'' = .92. The simulator then finishes a at 4.06ms: 4ms + 20us + 4 ticks.
    ts.run.overheads.tick = 10 * US;
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    assert_eq!(
        a.verdicts
            .iter()
            .find(|v| v.test == "edf-exact")
            .unwrap()
            .schedulable,
        Some(true)
    );
    let r = simulate(&ts, Options::spec("gedf")).unwrap().result;
    assert_eq!(r.summaries().total.missed, 0);
    assert_eq!(
        (r.jobs[0].finish, r.jobs[0].overhead),
        (Some(4_060_000), 60_000)
    );
}

/// Global EDF, by hand: two tasks (C, D = T) = (950us, 1ms) on 2 CPUs. Plain BCL accepts
/// (n ≤ m). With decision + context switch = 60us each job needs 1010us from its arrival:
/// every job misses, and the overhead-aware BCL sees C'' = 950 + 60 = 1010us > D. With 40us:
/// C'' = 990us, accepted, and no job misses (it finishes at 990us).
#[test]
fn global_dispatch_cost_by_hand() {
    let mut ts = TaskSet::new(
        2,
        vec![
            Task::periodic("a", MS, 950 * US),
            Task::periodic("b", MS, 950 * US),
        ],
    );
    ts.run.duration = 10 * MS;
    ts.run.overheads = Overheads {
        decision: 30 * US,
        context_switch: 30 * US,
        migration: 500 * US,
        ..Overheads::default()
    };
    let bcl = |a: &[rtsched_analysis::schedulability::Verdict]| {
        a.iter().find(|v| v.test == "gedf-bcl").unwrap().schedulable
    };
    let gfp = |a: &[rtsched_analysis::schedulability::Verdict]| {
        a.iter()
            .find(|v| v.test == "gfp-rta-rm")
            .unwrap()
            .schedulable
    };
    assert_eq!(bcl(&analyze(&ts)), Some(true));
    assert_eq!(gfp(&analyze(&ts)), Some(true));
    assert_eq!(misses(&ts, "gedf"), 20);
    assert_eq!(misses(&ts, "gfp:rm"), 20);
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    assert_eq!(
        (
            a.tasks[0].global.unwrap().task.c,
            a.tasks[0].global.unwrap().migrations
        ),
        (1010 * US, 0)
    );
    assert_eq!(bcl(&a.verdicts), None);
    assert_eq!(gfp(&a.verdicts), None);
    ts.run.overheads.decision = 10 * US;
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    assert_eq!(bcl(&a.verdicts), Some(true));
    // Global FP counts a's arrivals within b's deadline as possible preemptions of b (RM, ties
    // to the first task: a above b): p_b = ⌈1000/1000⌉ = 1, C''_b = 950 + 2·40 + 500 = 1530us
    // > D, not proven — pessimistic here (two tasks on two CPUs are never preempted); a alone
    // is charged its one dispatch, 990us.
    assert_eq!(gfp(&a.verdicts), None);
    let r = simulate(&ts, Options::spec("gedf")).unwrap().result;
    assert_eq!(
        (r.summaries().total.missed, r.jobs[0].finish),
        (0, Some(990 * US))
    );
    assert_eq!(misses(&ts, "gfp:rm"), 0);
    ts.run.overheads.migration = 0;
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    assert_eq!(gfp(&a.verdicts), None, "1030us > D");
    ts.run.overheads.context_switch = 10 * US;
    let a = analyze_with_overheads(&ts, &ts.run.overheads);
    // o = 20us: C''_b = 950 + 40 = 990us, accepted.
    assert_eq!(gfp(&a.verdicts), Some(true));
}
