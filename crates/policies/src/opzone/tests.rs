//! The operation-zone balancer on hand-worked cases: the paper's defaults and zone
//! boundaries, the options, Fig 4's per-CPU and average judgements, the prize and punish of
//! Fig 5, which task moves; and a property over any valid configuration.

use super::*;
use proptest::prelude::*;
use rtsched_model::time::{Time, NS_PER_MS, NS_PER_S};

/// The options of a spec written after the scheduler's name, e.g. `balancer=opzone,zone=hot`.
fn opts(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (String::new(), p.to_string()),
        })
        .collect()
}

fn parse(s: &str) -> Result<ZoneConfig, String> {
    ZoneConfig::from_options("cfs", &opts(s))
}

#[test]
fn defaults_are_the_papers() {
    let c = ZoneConfig::default();
    assert_eq!((c.cold_threshold, c.hot_threshold), (300, 800));
    assert_eq!(
        (c.warm_spot_low, c.warm_spot_mid, c.warm_spot_high),
        (300, 500, 800)
    );
    assert_eq!((c.prize_time, c.punish_time), (5 * NS_PER_S, 5 * NS_PER_S));
    assert_eq!(c.score_step, 50);
    assert_eq!(c.util, UtilMode::PerCpu);
    assert_eq!(c.operation_zone, OperationZone::WarmHigh);
    assert_eq!(c.spot(), Some(800));
    assert_eq!(c.task_floor, TaskFloor::WarmZone);
    assert_eq!(c.task_usage, TaskUsage::Demand);
    assert!(c.validate().is_ok());
    for (i, n) in OperationZone::NAMES.iter().enumerate() {
        assert_eq!(OperationZone::parse(n).unwrap().name(), *n, "zone {i}");
    }
}

#[test]
fn zone_boundaries() {
    let c = ZoneConfig::default();
    assert_eq!(c.zone_of(0), Zone::Cold);
    assert_eq!(c.zone_of(300), Zone::Cold, "0~30% is cold, 30% included");
    assert_eq!(c.zone_of(301), Zone::Warm);
    assert_eq!(c.zone_of(799), Zone::Warm);
    assert_eq!(c.zone_of(800), Zone::Hot, "80~100% is hot, 80% included");
    assert_eq!(c.zone_of(1500), Zone::Hot, "an overloaded CPU");
}

#[test]
fn options_override_the_defaults_and_leave_the_callers_alone() {
    let spec = "balancer=opzone,zone=warm-mid,prize_time=3s,punish_time=500ms,util=average,warm_spot_low=32.5%,score_step=10,fast";
    let c = parse(spec).unwrap();
    assert_eq!(c.operation_zone, OperationZone::WarmMid);
    assert_eq!(
        (c.prize_time, c.punish_time),
        (3 * NS_PER_S, 500 * NS_PER_MS)
    );
    assert_eq!(c.util, UtilMode::Average);
    assert_eq!((c.warm_spot_low, c.score_step), (325, 100));
    assert_eq!(c.warm_spot_mid, 500, "untouched");
    assert_eq!(parse("").unwrap(), ZoneConfig::default());
    assert_eq!(
        parse("prize_time=250").unwrap().prize_time,
        250 * NS_PER_MS,
        "a bare number is ms"
    );
    assert_eq!(
        parse("task_floor=spot").unwrap().task_floor,
        TaskFloor::Spot
    );
    assert_eq!(parse("task_floor=off").unwrap().task_floor.name(), "off");
    assert_eq!(
        parse("task_usage=running").unwrap().task_usage,
        TaskUsage::Running
    );
    assert_eq!(
        parse("task_usage=demand").unwrap().task_usage.name(),
        "demand"
    );
    // cold and hot policies do not use the spots, so their thresholds may pass them.
    assert_eq!(
        parse("zone=cold,cold_threshold=40%")
            .unwrap()
            .cold_threshold,
        400
    );
    assert_eq!(
        parse("zone=hot,hot_threshold=70%").unwrap().hot_threshold,
        700
    );
}

const S: Time = NS_PER_S;
const CHECKS: [Trigger; 3] = [
    Trigger::TaskCreated,
    Trigger::IdleWakeup,
    Trigger::BusiestGroup,
];

fn balancer(spec: &str, cpus: u32) -> ZoneBalancer {
    ZoneBalancer::new(parse(spec).unwrap(), cpus)
}

fn mv(from: u32, to: u32) -> Option<Balance> {
    Some(Balance { from, to })
}

/// §3.1.1: nothing moves while utilisation is in 0~30%, however unequal; once a CPU
/// exceeds 30% it does.
#[test]
fn cold_zone_never_balances() {
    let mut b = balancer("zone=cold", 4);
    let mut now = 0;
    for utils in [
        [300, 0, 0, 0],
        [300, 300, 0, 100],
        [0, 0, 0, 0],
        [250, 0, 300, 10],
    ] {
        assert_eq!(b.zone(&utils), Zone::Cold);
        for _ in 0..30 {
            for t in CHECKS {
                assert_eq!(b.check(t, &utils, now), None, "{utils:?} at {now}");
            }
            now += S;
        }
    }
    assert_eq!(
        b.check(Trigger::TaskCreated, &[301, 0, 0, 0], now),
        mv(0, 1)
    );
    // Average mode: 100%, 20%, 0, 0 average to exactly 30%, still cold.
    let mut avg = balancer("zone=cold,util=average", 4);
    assert_eq!(avg.zone(&[1000, 200, 0, 0]), Zone::Cold);
    assert_eq!(avg.check(Trigger::TaskCreated, &[1000, 200, 0, 0], 0), None);
    assert_eq!(
        avg.check(Trigger::TaskCreated, &[1000, 201, 0, 0], 0),
        mv(0, 2)
    );
}

/// §3.1.2: an imbalance in the hot zone (80~100%) is balanced at the next check point (not
/// at a tick); below 80% the hot policy does nothing at all.
#[test]
fn hot_zone_imbalance_balances_at_the_next_check() {
    let mut b = balancer("zone=hot", 4);
    let utils = [850, 100, 400, 400];
    assert_eq!(b.zone(&utils), Zone::Hot);
    assert_eq!(
        b.check(Trigger::Tick, &utils, 0),
        None,
        "a tick is no check point"
    );
    for (i, t) in CHECKS.into_iter().enumerate() {
        assert_eq!(b.check(t, &utils, i as Time), mv(0, 1), "{t:?}");
    }
    assert_eq!(
        b.check(Trigger::IdleWakeup, &[100, 799, 0, 400], 5),
        None,
        "79.9% is warm"
    );
    assert_eq!(
        b.check(Trigger::IdleWakeup, &[100, 800, 0, 400], 6),
        mv(1, 2),
        "80% is hot"
    );
    assert_eq!(
        b.check(Trigger::IdleWakeup, &[900, 900, 900, 900], 7),
        None,
        "hot but nothing to even out"
    );
    assert_eq!(b.check(Trigger::Tick, &[1000, 0, 0, 0], 8), None);
}

/// §3.1.3, Fig 4: CPUs at 50, 85, 25, 55% (average 53.75%). Mid spot on the average: over
/// 50%, CPU1's task goes to CPU2. High spot on the average: under 80%, nothing; high spot
/// per CPU: CPU1 is over 80%, so it does move.
#[test]
fn figure_4_average_and_per_cpu_differ() {
    let fig4 = [500, 850, 250, 550];
    let check = |spec: &str| balancer(spec, 4).check(Trigger::TaskCreated, &fig4, 0);
    assert_eq!(check("zone=warm-mid,util=average"), mv(1, 2));
    assert_eq!(check("zone=warm-high,util=average"), None);
    assert_eq!(check("zone=warm-high,util=per-cpu"), mv(1, 2));
    assert_eq!(check("zone=warm-mid"), mv(1, 2));
    assert_eq!(
        balancer("zone=warm-high", 4).zone(&fig4),
        Zone::Hot,
        "its busiest CPU"
    );
    assert_eq!(
        balancer("zone=warm-high,util=average", 4).zone(&fig4),
        Zone::Warm,
        "53.75%"
    );
}

/// The average is compared exactly: 49.9% and 50.1% average to 50%, not over the mid spot,
/// while per CPU one of them is; 50% and 50.1% average to 50.05%, which is over it (a
/// rounded-down average would say 50%).
#[test]
fn average_is_compared_exactly() {
    let check = |spec: &str, utils: [Permille; 2]| {
        balancer(spec, 2).check(Trigger::BusiestGroup, &utils, 0)
    };
    assert_eq!(check("zone=warm-mid,util=average", [499, 501]), None);
    assert_eq!(check("zone=warm-mid,util=per-cpu", [499, 501]), mv(1, 0));
    assert_eq!(check("zone=warm-mid,util=average", [500, 501]), mv(1, 0));
}

/// Prize: CPU0 stays at 60% (above the mid spot) continually. For the first 5 s it is
/// balanced; at 5 s its weighted spot goes to 55%, at 10 s to 60%, and then 60% is no
/// longer over it: the task keeps its CPU. It rises 5% per 5 s up to the high spot (80%)
/// and no further. CPU1, idle, keeps the mid spot.
#[test]
fn prize_raises_the_spot_after_prize_time_up_to_the_high_spot() {
    let mut b = balancer("zone=warm-mid", 2);
    let busy = [600, 100];
    for ms in (0..5000).step_by(100) {
        b.observe(&busy, ms * NS_PER_MS);
    }
    assert_eq!(b.scores(), [500, 500]);
    assert_eq!(b.check(Trigger::TaskCreated, &busy, 5 * S - 1), mv(0, 1));
    assert_eq!(b.scores(), [500, 500], "4.999999999 s is not yet 5 s");
    b.observe(&busy, 5 * S);
    assert_eq!(b.scores(), [550, 500]);
    b.observe(&busy, 10 * S - 1);
    assert_eq!(b.scores(), [550, 500]);
    assert_eq!(
        b.check(Trigger::TaskCreated, &busy, 10 * S),
        None,
        "60% is not over 60%"
    );
    assert_eq!(b.scores(), [600, 500]);
    for s in 11..=60 {
        b.observe(&busy, s * S);
    }
    assert_eq!(
        b.scores(),
        [800, 500],
        "500 + 12 x 50 stops at the high spot"
    );
    assert_eq!(b.check(Trigger::TaskCreated, &[800, 100], 61 * S), None);
    assert_eq!(b.check(Trigger::TaskCreated, &[810, 100], 62 * S), mv(0, 1));
}

/// Punish: an episode above the spot that ends within 5 s lowers the weighted spot by 5%;
/// one that lasts exactly 5 s does not. Down to the low spot (30%) and no further, where
/// 31% is balanced though it is under the configured mid spot.
#[test]
fn punish_lowers_the_spot_after_a_short_episode_down_to_the_low_spot() {
    let mut b = balancer("zone=warm-mid", 2);
    let (busy, quiet) = ([600, 0], [100, 0]);
    b.observe(&busy, 0);
    b.observe(&busy, 4 * S);
    b.observe(&quiet, 5 * S - 1);
    assert_eq!(b.scores(), [450, 500]);
    // 10 s to 15 s: 5 s, not shorter than punish_time; not prized either (the last
    // observation above the spot is before 15 s).
    b.observe(&busy, 10 * S);
    b.observe(&busy, 15 * S - 1);
    b.observe(&quiet, 15 * S);
    assert_eq!(b.scores(), [450, 500]);
    for k in 0..4 {
        b.observe(&busy, (20 + 2 * k) * S);
        b.observe(&quiet, (21 + 2 * k) * S);
    }
    assert_eq!(b.scores(), [300, 500], "450 - 4 x 50 stops at the low spot");
    assert_eq!(b.check(Trigger::IdleWakeup, &[310, 0], 30 * S), mv(0, 1));
    assert_eq!(
        balancer("zone=warm-mid", 2).check(Trigger::IdleWakeup, &[310, 0], 30 * S),
        None
    );
}

/// §3.1.3's spots: "the task of high spot cannot go up any more", "the task of low spot
/// cannot go down any more"; each can go the other way.
#[test]
fn high_spot_cannot_go_up_and_low_spot_cannot_go_down() {
    let sustained = |spec: &str| {
        let mut b = balancer(spec, 1);
        (0..=20).for_each(|s| b.observe(&[900], s * S));
        b.scores()[0]
    };
    let bursts = |spec: &str| {
        let mut b = balancer(spec, 1);
        (0..10).for_each(|s| b.observe(&[if s % 2 == 0 { 900 } else { 0 }], s * S));
        b.scores()[0]
    };
    assert_eq!(sustained("zone=warm-high"), 800);
    assert_eq!(bursts("zone=warm-high"), 550, "five bursts: 800 - 5 x 50");
    assert_eq!(bursts("zone=warm-low"), 300);
    assert_eq!(
        sustained("zone=warm-low"),
        500,
        "four prizes in 20 s: 300 + 4 x 50"
    );
}

/// Observations 17 s apart still count every whole prize time in between.
#[test]
fn sparse_observations_count_every_prize_time() {
    let mut b = balancer("zone=warm-mid,util=average", 2);
    b.observe(&[700, 400], 0);
    b.observe(&[700, 400], 17 * S);
    assert_eq!(b.scores(), [650], "three prizes (15 s)");
    b.observe(&[700, 400], 20 * S);
    assert_eq!(b.scores(), [700], "the fourth at 20 s, not 17 + 5 s");
    // The average (55%) is not over the weighted spot (70%) any more.
    assert_eq!(b.check(Trigger::TaskCreated, &[700, 400], 21 * S), None);
    assert_eq!(
        b.check(Trigger::TaskCreated, &[1000, 401], 22 * S),
        mv(0, 1)
    );
}

#[test]
fn only_warm_policies_keep_scores() {
    assert!(balancer("zone=cold", 4).scores().is_empty());
    assert!(balancer("zone=hot", 4).scores().is_empty());
    assert_eq!(balancer("zone=warm-low", 4).scores(), [300; 4]);
    assert_eq!(balancer("zone=warm-mid,util=average", 4).scores(), [500]);
    assert_eq!(balancer("zone=warm-high,score_step=0", 1).scores(), [800]);
}

fn cand(util: Permille, weight: u64, vruntime: u64, id: u64) -> Candidate {
    Candidate {
        util,
        weight,
        vruntime,
        id,
    }
}

/// §3.1.3: "Tasks that are lower than the CPU usage of the warm zone area is not migrated".
/// CPU0's waiting tasks: A uses 25% itself at nice -5 (weight 3121), B 60% at nice 0 (1024);
/// 3 runnable on CPU0, 0 on CPU1. Warm-high: A is heavier, but 25% < the low spot 30%, so B
/// (index 1) moves; without the floor (the old rule) A (index 0). `task_floor=spot`: only a
/// task above the 80% spot — neither of these; one at 81% does. Cold and hot: no warm zone,
/// the heavier A.
#[test]
fn a_task_below_the_warm_zone_is_not_migrated() {
    let tasks = [cand(250, 3121, 0, 7), cand(600, 1024, 0, 8)];
    let choose = |spec: &str, tasks: &[Candidate]| balancer(spec, 2).choose(3, 0, true, tasks);
    assert_eq!(choose("zone=warm-high", &tasks), Some(1));
    assert_eq!(choose("zone=warm-low", &tasks), Some(1));
    assert_eq!(choose("zone=warm-high,task_floor=off", &tasks), Some(0));
    assert_eq!(choose("zone=warm-high,task_floor=spot", &tasks), None);
    assert_eq!(
        choose(
            "zone=warm-high,task_floor=spot",
            &[tasks[0], tasks[1], cand(810, 15, 0, 9)]
        ),
        Some(2)
    );
    assert_eq!(
        choose("zone=warm-high", &[cand(299, 1024, 0, 1)]),
        None,
        "29.9% is under 30%"
    );
    assert_eq!(
        choose("zone=warm-high", &[cand(300, 1024, 0, 1)]),
        Some(0),
        "30% is the low spot"
    );
    assert_eq!(
        choose("zone=warm-mid,warm_spot_low=40%", &[cand(350, 1024, 0, 1)]),
        None,
        "the configured low spot"
    );
    assert_eq!(choose("zone=cold", &tasks), Some(0));
    assert_eq!(choose("zone=hot", &tasks), Some(0));
}

/// Rule 5's order and queue rules. Equal weights: the latest virtual runtime (id 5, at 9 ms),
/// then of equal runtimes the lowest id. 2 runnable against 1: the guard (2 <= 1 + 1)
/// refuses, without it the move is allowed; 1 runnable: nothing waits, nothing moves.
#[test]
fn choose_orders_by_weight_then_vruntime_and_keeps_the_guard() {
    let b = balancer("zone=hot", 2);
    let tasks = [
        cand(900, 1024, 3_000_000, 4),
        cand(900, 1024, 9_000_000, 5),
        cand(900, 1024, 9_000_000, 6),
    ];
    assert_eq!(b.choose(4, 0, true, &tasks), Some(1));
    assert_eq!(
        b.choose(4, 0, true, &[tasks[2], tasks[1]]),
        Some(1),
        "id 5 before id 6, in any order"
    );
    assert_eq!(
        b.choose(2, 1, true, &tasks),
        None,
        "the guard: 2 is not two more than 1"
    );
    assert_eq!(b.choose(3, 1, true, &tasks), Some(1));
    assert_eq!(b.choose(2, 1, false, &tasks), Some(1));
    assert_eq!(
        b.choose(1, 0, false, &tasks),
        None,
        "one runnable task: it is the running one"
    );
    assert_eq!(b.choose(5, 0, true, &[]), None);
}

/// A valid configuration: sorted thresholds and spots, any policy and mode, steps and
/// times small enough that prizes and punishes happen within a sequence.
fn any_config() -> impl Strategy<Value = ZoneConfig> {
    (
        proptest::collection::vec(0u32..=1000, 5),
        0usize..5,
        any::<bool>(),
        0u32..=400,
        1u64..=3000,
        1u64..=3000,
    )
        .prop_filter_map(
            "cold below hot",
            |(mut v, zone, avg, step, prize_ms, punish_ms)| {
                v.sort_unstable();
                (v[0] < v[4]).then(|| ZoneConfig {
                    operation_zone: OperationZone::ALL[zone],
                    cold_threshold: v[0],
                    warm_spot_low: v[1],
                    warm_spot_mid: v[2],
                    warm_spot_high: v[3],
                    hot_threshold: v[4],
                    score_step: step,
                    prize_time: prize_ms * NS_PER_MS,
                    punish_time: punish_ms * NS_PER_MS,
                    util: if avg {
                        UtilMode::Average
                    } else {
                        UtilMode::PerCpu
                    },
                    task_floor: TaskFloor::WarmZone,
                    task_usage: TaskUsage::Demand,
                })
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Whatever the utilisations and however time passes, every score stays within
    /// [low spot, high spot], and every answer moves from a busier CPU to a less busy one.
    #[test]
    fn score_stays_within_the_spots(
        config in any_config(),
        steps in proptest::collection::vec((proptest::array::uniform4(0u32..=1200), 0u64..=4000, 0usize..4), 1..300),
    ) {
        prop_assert!(config.validate().is_ok());
        let mut b = ZoneBalancer::new(config, 4);
        let triggers = [Trigger::TaskCreated, Trigger::IdleWakeup, Trigger::BusiestGroup, Trigger::Tick];
        let mut now = 0;
        for (utils, dt_ms, t) in steps {
            now += dt_ms * NS_PER_MS;
            let answer = b.check(triggers[t], &utils, now);
            for &s in b.scores() {
                let (low, high) = (config.warm_spot_low, config.warm_spot_high);
                prop_assert!((low..=high).contains(&s), "score {} outside [{}, {}]", s, low, high);
            }
            if let Some(Balance { from, to }) = answer {
                prop_assert!(triggers[t] != Trigger::Tick);
                prop_assert!(utils[from as usize] > utils[to as usize]);
            }
            if config.operation_zone == OperationZone::Cold && b.zone(&utils) == Zone::Cold {
                prop_assert_eq!(answer, None);
            }
        }
    }
}

/// Every bad input gives an error naming the scheduler and the field.
#[test]
fn bad_options_name_the_field() {
    let cases = [
        ("warm_spot_low=60%", "scheduler 'cfs': option 'warm_spot_low': 60% is above warm_spot_mid (50%)"),
        ("warm_spot_mid=90", "scheduler 'cfs': option 'warm_spot_mid': 90% is above warm_spot_high (80%)"),
        ("warm_spot_high=40%", "scheduler 'cfs': option 'warm_spot_high': 40% is below warm_spot_mid (50%)"),
        ("warm_spot_low=60%,warm_spot_mid=55%", "scheduler 'cfs': option 'warm_spot_low': 60% is above warm_spot_mid (55%)"),
        ("warm_spot_low=20%", "scheduler 'cfs': option 'warm_spot_low': 20% is below cold_threshold (30%)"),
        ("warm_spot_low=20%,cold_threshold=25", "scheduler 'cfs': option 'cold_threshold': 25% is above warm_spot_low (20%)"),
        ("cold_threshold=40%", "scheduler 'cfs': option 'cold_threshold': 40% is above warm_spot_low (30%)"),
        ("hot_threshold=70%", "scheduler 'cfs': option 'hot_threshold': 70% is below warm_spot_high (80%)"),
        ("zone=cold,cold_threshold=80%", "scheduler 'cfs': option 'cold_threshold': 80% is not below hot_threshold (80%)"),
        ("zone=hot,hot_threshold=20%", "scheduler 'cfs': option 'hot_threshold': 20% is not above cold_threshold (30%)"),
        ("hot_threshold=120%", "scheduler 'cfs': option 'hot_threshold': 120% is outside 0–100%"),
        ("cold_threshold=-5%", "scheduler 'cfs': option 'cold_threshold': -5% is outside 0–100%"),
        ("score_step=101", "scheduler 'cfs': option 'score_step': 101% is outside 0–100%"),
        ("warm_spot_mid=half", "scheduler 'cfs': option 'warm_spot_mid': 'half' is not a percentage"),
        ("warm_spot_mid=50.25%", "scheduler 'cfs': option 'warm_spot_mid': '50.25%' is not a percentage"),
        ("zone=warm", "scheduler 'cfs': option 'zone': unknown operation zone 'warm'; known: cold, warm-low, warm-mid, warm-high, hot"),
        ("zone=hto", "scheduler 'cfs': option 'zone': unknown operation zone 'hto' (did you mean 'hot'?)"),
        ("util=avg", "scheduler 'cfs': option 'util': unknown utilisation mode 'avg'; known: per-cpu, average"),
        ("task_floor=low", "scheduler 'cfs': option 'task_floor': unknown task floor 'low'; known: warm-zone, spot, off"),
        ("task_usage=waiting", "scheduler 'cfs': option 'task_usage': unknown task usage 'waiting'; known: demand, running"),
        ("prize_time=5parsecs", "scheduler 'cfs': option 'prize_time': unknown unit 'parsecs'"),
        ("punish_time=0s", "scheduler 'cfs': option 'punish_time': must be positive, got 0"),
        ("prize_time=-1s", "scheduler 'cfs': option 'prize_time': must not be negative"),
        ("zone=hot,zone=cold", "scheduler 'cfs': option 'zone' is given twice"),
    ];
    for (spec, want) in cases {
        let e = parse(spec).expect_err(spec);
        assert!(
            e.starts_with(want),
            "{spec}: got \"{e}\", want \"{want}...\""
        );
    }
    // A configuration built by hand is checked the same way.
    let c = ZoneConfig {
        warm_spot_low: 600,
        ..ZoneConfig::default()
    };
    assert_eq!(
        c.validate().unwrap_err(),
        "option 'warm_spot_low': 60% is above warm_spot_mid (50%)"
    );
}
