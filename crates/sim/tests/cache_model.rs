//! The cache model (docs/cache-model.md) on hand-worked cases, with the properties:
//! a task alone warms its cache; tasks whose working sets overflow the LLC evict each other;
//! memory sharers on CPUs sharing an L3 miss less than on CPUs that do not (LWFG §2-§3); a
//! migration to a CPU not sharing the cache costs a refill; more WSS never costs less; the
//! model off changes nothing; same input, same output.
//!
//! Costs are `run.cache`'s defaults, per 64-byte line: own L2 2 ns, own L3 / a cache under the
//! same L3 8 ns, another core's cache on the node 20 ns, on another node 30 ns, local memory
//! 25 ns, remote memory 40 ns. Opteron 6164 (LWFG Table 2) in lines: L1-D 64 KiB = 1024,
//! L2 512 KiB = 8192, L3 5118 KiB = 81888 shared by CPUs 6k..6k+5, nodes of 12 CPUs.

mod common;

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::topology::{Cache, CacheKind, Topology};
use rtsched_model::{parse_taskset, Format, Task, TaskSet, Time};
use rtsched_sim::{simulate, NoCache, Options};

const US: Time = 1_000;
const MS: Time = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "cache.yaml").unwrap()
}

fn run(ts: &TaskSet, spec: &str) -> RunResult {
    simulate(ts, Options::spec(spec)).unwrap().result
}

/// Per job of task `t`: its stall.
fn stalls(r: &RunResult, t: u32) -> Vec<Time> {
    r.jobs
        .iter()
        .filter(|j| j.task == t)
        .map(|j| j.stall)
        .collect()
}

#[test]
fn a_task_alone_warms_its_cache() {
    // 32 KiB = 512 lines; it fits the L1-D of both topologies (Opteron 1024 lines, the
    // default 512). Job 0 finds nothing: 512 lines from local memory, 512 × 25 ns = 12.8 us,
    // a miss at every level. Jobs 1-4 find all 512 in their L1: 0 ns, no miss.
    for topology in ["topology: opteron6164x4", "{}"] {
        let platform = if topology == "{}" {
            "{cpus: 1}".to_string()
        } else {
            format!("{{cpus: 1, {topology}}}")
        };
        let t = ts(&format!("platform: {platform}\nrun: {{duration: 50, cache: true}}\ntasks:\n  - {{name: a, period: 10, wcet: 1, wss: 32KiB}}\n"));
        let r = run(&t, "gedf");
        assert_eq!(stalls(&r, 0), vec![12_800, 0, 0, 0, 0], "{topology}");
        assert_eq!(r.jobs[0].misses, [512, 512, 512]);
        assert!(r.jobs[1..].iter().all(|j| j.misses == [0; 3]));
        assert_eq!(
            (r.jobs[0].exec, r.jobs[0].finish),
            (MS + 12_800, Some(MS + 12_800)),
            "the stall delays its work"
        );
        let c = &r.counters.cache;
        assert_eq!(
            (c.accesses, c.misses, c.invalidations, c.evictions),
            (5 * 512, [512; 3], 0, 0)
        );
    }
}

#[test]
fn two_tasks_whose_working_sets_overflow_the_llc_evict_each_other() {
    // a and b, 4 MiB = 65536 lines each, on one Opteron CPU; their sum (131072) exceeds the
    // L3 (81888). Neither fits L1 or L2: a sweep over more lines than a cache holds finds
    // nothing there (LRU thrashing), so every sweep misses L1 and L2.
    //
    // a0 (t = 0): cold, 65536 × 25 ns = 1_638_400 ns. The L3 holds a's 65536.
    // b0 (t = 5 ms): cold too, 1_638_400 ns; filling its 65536 evicts 49184 of a's lines
    //   (81888 − 65536 = 16352 were free), and all of a's L1 (1024) and L2 (8192).
    // a1 (t = 10 ms): finds 16352 in the L3 (8 ns) and 49184 in memory (25 ns):
    //   16352 × 8 + 49184 × 25 = 130_816 + 1_229_600 = 1_360_416 ns; LLC misses 49184. Its
    //   fill evicts 49184 of b's in turn; b1, a2, b2... pay the same.
    let two = ts("platform: {cpus: 1, topology: opteron6164x4}\nrun: {duration: 40, cache: true}\ntasks:\n  - {name: a, period: 10, wcet: 1, wss: 4MiB}\n  - {name: b, period: 10, wcet: 1, offset: 5, wss: 4MiB}\n");
    let r = run(&two, "gedf");
    let (cold, warm) = (1_638_400, 1_360_416);
    assert_eq!(stalls(&r, 0), vec![cold, warm, warm, warm]);
    assert_eq!(stalls(&r, 1), vec![cold, warm, warm, warm]);
    assert!(r
        .jobs
        .iter()
        .filter(|j| j.job > 0)
        .all(|j| j.misses == [65536, 65536, 49184]));
    // Evicted: b0's 1024 + 8192 + 49184 = 58400 of a's, then every later job the same of the
    // other's: 7 × 58400.
    assert_eq!(r.counters.cache.evictions, 7 * 58_400);

    // Alone, a's later jobs find all 65536 in the L3: 65536 × 8 ns = 524_288 ns, no LLC miss.
    let mut alone = two.clone();
    alone.tasks.truncate(1);
    let r = run(&alone, "gedf");
    assert_eq!(stalls(&r, 0), vec![cold, 524_288, 524_288, 524_288]);
    assert_eq!(r.jobs[1].misses, [65536, 65536, 0]);
}

/// Two memory sharers (group 1, 256 KiB = 4096 lines each: more than an L1, less than an L2)
/// partitioned on CPUs `a` and `b` of the Opteron under P-EDF, released together every 10 ms.
fn sharers(a: u32, b: u32) -> RunResult {
    let t = ts(&format!(
        "platform: {{cpus: 24, topology: opteron6164x4}}\nrun: {{duration: 30, cache: true}}\ntasks:\n  - {{name: a, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: {a}}}\n  - {{name: b, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: {b}}}\n"
    ));
    run(&t, "pedf")
}

#[test]
fn memory_sharers_sharing_an_l3_miss_less_than_sharers_that_do_not() {
    // At each release both are dispatched at once, a (the lower CPU) first. Each sweep writes
    // the whole group's memory, so the other's private copies are invalidated and it finds the
    // lines where a just wrote them. The very first sweep (a0) finds nothing: 4096 × 25 ns =
    // 102_400 ns. Every other job:
    // - CPUs 0, 1 (one L3): in the shared L3, 4096 × 8 ns = 32_768 ns; misses L1 and L2 only;
    //   it invalidates the other's L1 (1024) and L2 (4096) copies: 5120 lines.
    // - CPUs 0, 6 (other L3, same node): in CPU 0's caches at the node distance,
    //   4096 × 20 ns = 81_920 ns, missing the LLC too; invalidates L1 + L2 + L3 = 9216.
    // - CPUs 0, 12 (other node): 4096 × 30 ns = 122_880 ns.
    // - CPU 0 for both (run one after the other): the lines are in its L2, 4096 × 2 ns = 8192.
    let cold = 102_400;
    let cases = [
        ((0, 1), 32_768, [4096, 4096, 0], 5120),
        ((0, 6), 81_920, [4096; 3], 9216),
        ((0, 12), 122_880, [4096; 3], 9216),
        ((0, 0), 8_192, [4096, 0, 0], 0),
    ];
    let mut llc = Vec::new();
    for ((a, b), each, misses, invalidated) in cases {
        let r = sharers(a, b);
        assert_eq!(stalls(&r, 0), vec![cold, each, each], "cpus {a},{b}");
        assert_eq!(stalls(&r, 1), vec![each; 3], "cpus {a},{b}");
        assert!(
            r.jobs
                .iter()
                .filter(|j| j.stall == each)
                .all(|j| j.misses == misses),
            "cpus {a},{b}"
        );
        assert_eq!(
            r.counters.cache.invalidations,
            5 * invalidated,
            "cpus {a},{b}"
        );
        let s = r.summaries().total;
        llc.push((
            s.misses[2],
            r.jobs.iter().map(|j| j.stall).sum::<Time>(),
            s.ipc_proxy,
        ));
    }
    // Sharing an L3 beats not sharing one on every measure; same core beats both.
    assert!(
        llc[0].0 < llc[1].0 && llc[0].1 < llc[1].1 && llc[0].2 > llc[1].2,
        "{llc:?}"
    );
    assert!(llc[1].1 < llc[2].1 && llc[3].1 < llc[0].1, "{llc:?}");
}

/// x (32 KiB = 512 lines) is preempted at 1 ms by z (deadline 21 ms) on its CPU; at 5 ms y
/// completes on the other CPU and x resumes there: a migration. Global EDF on 2 CPUs. Only x
/// has a working set.
fn migrating(topology: &str) -> RunResult {
    let t = ts(&format!(
        "platform: {{cpus: 2, topology: {topology}}}\nrun: {{duration: 100, cache: true}}\ntasks:\n  - {{name: x, period: 100, wcet: 10, wss: 32KiB}}\n  - {{name: y, period: 100, wcet: 5, deadline: 50}}\n  - {{name: z, period: 100, wcet: 10, deadline: 20, offset: 1}}\n"
    ));
    run(&t, "gedf")
}

#[test]
fn a_migration_to_a_cpu_not_sharing_the_cache_costs_a_refill() {
    // First dispatch: 512 lines from memory, 12_800 ns. The resume finds them in the old
    // CPU's L1: with private caches only (one node) at 20 ns, 10_240 ns, missing every level;
    // where the two CPUs share an L3 (the Opteron's first CPUs), in it at 8 ns, 4_096 ns, no
    // LLC miss. Had nothing happened x would have found them in its L1 (0 ns): that is the
    // refill.
    let private = "{caches: [{level: 1, type: data, size: 64KiB, ways: 2}, {level: 2, size: 512KiB, ways: 16}]}";
    for (topology, refill, misses) in [
        (private, 10_240, [512, 512, 512]),
        ("opteron6164x4", 4_096, [512, 512, 0]),
    ] {
        let r = migrating(topology);
        let x = &r.jobs[0];
        assert_eq!(
            (x.task, x.migrations, x.preemptions),
            (0, 1, 1),
            "{topology}"
        );
        assert_eq!(x.stall, 12_800 + refill, "{topology}");
        assert_eq!(
            x.misses,
            [512 + misses[0], 512 + misses[1], 512 + misses[2]],
            "{topology}"
        );
        assert_eq!(x.exec, 10 * MS + x.stall);
    }
    // Preempted but not migrated (one CPU): z has no working set, x's L1 still holds its
    // lines, the resume costs nothing.
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100, cache: true}\ntasks:\n  - {name: x, period: 100, wcet: 10, wss: 32KiB}\n  - {name: z, period: 100, wcet: 10, deadline: 20, offset: 1}\n");
    let x = &run(&t, "gedf").jobs[0];
    assert_eq!((x.preemptions, x.migrations, x.stall), (1, 0, 12_800));
}

#[test]
fn results_show_stalls_as_ipc_proxy_below_one_and_inflation_above_one() {
    let yaml = |cache: &str, wss: &str| {
        format!("platform: {{cpus: 2, topology: opteron6164x4}}\nrun: {{duration: 100, cache: {cache}}}\ntasks:\n  - {{name: a, period: 10, wcet: 1{wss}}}\n  - {{name: b, period: 15, wcet: 2{wss}, group: 1}}\n  - {{name: c, period: 20, wcet: 3{wss}, group: 1}}\n")
    };
    let s = run(&ts(&yaml("true", ", wss: 1MiB")), "gedf")
        .summaries()
        .total;
    assert!(
        s.ipc_proxy < 1.0 && s.exec_inflation > 1.0,
        "{} {}",
        s.ipc_proxy,
        s.exec_inflation
    );
    assert!(s.misses[0] > 0);
    for (cache, wss) in [("true", ""), ("false", ", wss: 1MiB")] {
        let s = run(&ts(&yaml(cache, wss)), "gedf").summaries().total;
        assert_eq!(
            (s.ipc_proxy, s.exec_inflation, s.misses),
            (1.0, 1.0, [0; 3]),
            "cache {cache} wss '{wss}'"
        );
    }
}

#[test]
fn passes_over_a_working_set_larger_than_a_level_thrash_it() {
    // One task alone, 3 passes. 32 KiB (fits L1): 512 × 25 ns once, the other two passes hit
    // the L1: 12_800 ns, then 0. 256 KiB = 4096 lines (fits L2, not L1): the first pass from
    // memory (102_400 ns), each later pass from the L2 (4096 × 2 ns = 8_192 ns): 118_784 ns;
    // later jobs 3 × 8_192 = 24_576 ns (misses L1 only).
    let yaml = |wss: &str| {
        format!("platform: {{cpus: 1, topology: opteron6164x4}}\nrun: {{duration: 30, cache: {{passes: 3}}}}\ntasks:\n  - {{name: a, period: 10, wcet: 1, wss: {wss}}}\n")
    };
    let r = run(&ts(&yaml("32KiB")), "gedf");
    assert_eq!(stalls(&r, 0), vec![12_800, 0, 0]);
    assert_eq!(r.counters.cache.accesses, 3 * 3 * 512);
    let r = run(&ts(&yaml("256KiB")), "gedf");
    assert_eq!(stalls(&r, 0), vec![118_784, 24_576, 24_576]);
    assert_eq!(r.jobs[1].misses, [3 * 4096, 0, 0]);
}

#[test]
fn sharers_running_at_once_on_cpus_not_sharing_a_cache_ping_pong() {
    // Two passes. a (CPU 0) and b (CPU 6) sharers released together: b is dispatched while a
    // runs, so b's second pass finds the lines in CPU 0's caches again (a keeps writing them):
    // 4096 × 20 ns, on top of the first pass's 4096 × 20 ns. Alone, b's second pass would hit
    // its L2 (4096 × 2 ns). a, dispatched first, sees no sharer running (the model's
    // asymmetry, docs/cache-model.md).
    let t = ts("platform: {cpus: 12, topology: opteron6164x4}\nrun: {duration: 10, cache: {passes: 2}}\ntasks:\n  - {name: a, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: 0}\n  - {name: b, period: 10, wcet: 1, wss: 256KiB, group: 1, cpu: 6}\n");
    let r = run(&t, "pedf");
    assert_eq!(stalls(&r, 0), vec![102_400 + 8_192]);
    assert_eq!(stalls(&r, 1), vec![81_920 + 81_920]);
    // Invalidated: b's first pass 1024 + 4096 + 4096 of CPU 0's copies, its second 4096.
    assert_eq!(r.counters.cache.invalidations, 9216 + 4096);
}

#[test]
fn bad_input_is_an_error_naming_the_task_and_field() {
    let mut t = ts(
        "platform: {cpus: 1}\nrun: {cache: true}\ntasks:\n  - {name: big, period: 10, wcet: 1}\n",
    );
    t.tasks[0].wss = Some(2 << 40);
    let e = simulate(&t, Options::spec("gedf")).unwrap_err().to_string();
    assert!(
        e.contains("task 'big'") && e.contains("field 'wss'") && e.contains("1 TiB"),
        "{e}"
    );
    let mut t =
        ts("platform: {cpus: 2}\nrun: {cache: true}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n");
    t.platform.topology = Some(Topology {
        preset: None,
        caches: vec![Cache {
            level: 1,
            kind: CacheKind::Data,
            size: 4096,
            line: 64,
            ways: 2,
            cpus: vec![2],
        }],
        nodes: vec![],
    });
    let e = simulate(&t, Options::spec("gedf")).unwrap_err().to_string();
    assert!(
        e.contains("caches[0]") && e.contains("field 'cpus'") && e.contains("CPU 2 does not exist"),
        "{e}"
    );
    // Off, the model reads nothing.
    t.run.cache.enabled = false;
    assert!(simulate(&t, Options::spec("gedf")).is_ok());
}

// ---- properties ----------------------------------------------------------------------------

/// Up to 12 Opteron CPUs (two L3s), one task per CPU under P-EDF, at most 1 ms of work per
/// 20-80 ms period and at most 8 MiB (more than an L3: evictions there) in 2 passes (< 11 ms
/// of stall at 40 ns a line): every job ends before its
/// task's next release, so the schedule (who is dispatched where and when) does not depend on
/// the stalls and only the caches' contents differ between two runs. Groups share one size
/// (LWFG's MTTs); `target` names the task or group whose size grows by `grow` bytes.
fn arb_partitioned() -> impl Strategy<Value = (TaskSet, usize, u64)> {
    (1u32..=12, 1usize..=12, 1u32..=2, any::<u64>()).prop_flat_map(|(m, n, passes, seed)| {
        let n = n.min(m as usize);
        let task = (0u64..3, 100u64..=1000, 0u64..=3, 0u8..4, 1u64..=8192);
        (
            proptest::collection::vec(task, n),
            proptest::collection::vec(1u64..=8192, 3),
            Just(m),
            Just(passes),
            Just(seed),
            0..n,
            0u64..=1024,
        )
            .prop_map(move |(tasks, gsize, m, passes, seed, target, grow)| {
                let mut ts = TaskSet::new(m, Vec::new());
                for (i, (p, c, off, g, kib)) in tasks.into_iter().enumerate() {
                    let mut t = Task::periodic(format!("t{i}"), (20 << p) * MS, c * US);
                    t.offset = off * MS;
                    t.cpu = Some(i as u32);
                    if g < 3 {
                        t.group = Some(g as u32);
                        t.wss = Some(gsize[g as usize] * 1024);
                    } else {
                        t.wss = Some(kib * 1024);
                    }
                    ts.tasks.push(t);
                }
                ts.platform.topology = Some(Topology::opteron6164x4(m).unwrap());
                ts.run.duration = 400 * MS;
                ts.run.seed = seed;
                ts.run.cache.enabled = true;
                ts.run.cache.passes = passes;
                (ts, target, grow * 1024)
            })
    })
}

fn grown(ts: &TaskSet, target: usize, by: u64) -> TaskSet {
    let mut g = ts.clone();
    let group = ts.tasks[target].group;
    for (i, t) in g.tasks.iter_mut().enumerate() {
        if i == target || (group.is_some() && t.group == group) {
            t.wss = t.wss.map(|w| w + by);
        }
    }
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// More WSS (of a task, or of a whole group) never gives fewer misses at any level nor
    /// less stall, all else equal.
    #[test]
    fn more_wss_never_costs_less((ts, target, by) in arb_partitioned()) {
        let a = run(&ts, "pedf");
        let b = run(&grown(&ts, target, by), "pedf");
        prop_assert_eq!(a.jobs.len(), b.jobs.len());
        let pre = |r: &RunResult| r.jobs.iter().map(|j| (j.start, j.preemptions)).collect::<Vec<_>>();
        prop_assert_eq!(pre(&a), pre(&b), "the schedule does not change");
        let stall = |r: &RunResult| r.jobs.iter().map(|j| j.stall).sum::<Time>();
        prop_assert!(stall(&b) >= stall(&a), "stall {} -> {}", stall(&a), stall(&b));
        for l in 0..3 {
            prop_assert!(b.counters.cache.misses[l] >= a.counters.cache.misses[l], "L{} misses {:?} -> {:?}", l + 1, a.counters.cache.misses, b.counters.cache.misses);
        }
        prop_assert!(b.counters.cache.accesses >= a.counters.cache.accesses);
    }

    /// With the model off, working sets and groups change nothing: the results are those of
    /// the engine without a cost model, exactly; with it on and no working set, likewise.
    #[test]
    fn the_model_off_changes_nothing(ts in common::arb_structured_taskset(), kib in proptest::collection::vec(0u64..=4096, 10), spec in prop::sample::select(vec!["gedf", "pedf", "gfp:rm", "paws", "gedf-dist:heap"])) {
        let mut with = ts.clone();
        for (t, &k) in with.tasks.iter_mut().zip(&kib) {
            t.wss = (k > 0).then_some(k * 1024);
            t.group = (k % 3 == 0).then_some(1);
        }
        with.platform.topology = Some(Topology::opteron6164x4(ts.platform.cpus).unwrap());
        let mut p = rtsched_policies::build(spec, &ts).unwrap();
        let reference = simulate(&ts, Options::policy(p.as_mut()).cost(NoCache)).unwrap().result;
        prop_assert_eq!(&run(&with, spec), &reference);
        let mut on = ts.clone();
        on.run.cache.enabled = true;
        prop_assert_eq!(&run(&on, spec), &reference);
    }

    /// Same input, same output, with the model on under a global policy (migrations, sharers
    /// across L3s and nodes, passes, preemptions).
    #[test]
    fn the_model_is_deterministic(ts in common::arb_structured_taskset(), kib in proptest::collection::vec(1u64..=8192, 10), passes in 1u32..=3) {
        let mut t = ts.clone();
        for (x, &k) in t.tasks.iter_mut().zip(&kib) {
            x.wss = Some(k * 1024);
            x.group = (k % 2 == 0).then_some((k % 3) as u32);
        }
        t.platform.topology = Some(Topology::opteron6164x4(ts.platform.cpus).unwrap());
        t.run.cache.enabled = true;
        t.run.cache.passes = passes;
        let a = run(&t, "gedf");
        let b = run(&t, "gedf");
        prop_assert_eq!(&a, &b);
        // Every job's CPU time is its work, its overhead and its stall.
        for j in a.jobs.iter().filter(|j| j.finish.is_some() && !j.aborted) {
            prop_assert_eq!(j.exec, j.demand + j.overhead + j.stall);
        }
    }
}
