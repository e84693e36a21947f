//! Triggers, self-suspensions and chains (docs/chains.md), worked by hand, plus a property
//! that holds for any event chain.

use proptest::prelude::*;
use rtsched_model::results::{ChainRecord, RunResult};
use rtsched_model::{parse_taskset, Format, TaskSet};
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "chains.yaml").unwrap()
}

fn run(t: &TaskSet, spec: &str) -> RunResult {
    simulate(t, Options::spec(spec)).unwrap().result
}

fn of(r: &RunResult, chain: u32) -> Vec<ChainRecord> {
    r.chains
        .iter()
        .filter(|c| c.chain == chain)
        .copied()
        .collect()
}

/// The case: on 1 CPU under gfp with the file's priorities, a (T 10, C 2, priority 5)
/// and b (trigger: a, C 3, priority 4): a runs [0, 2], releases b at 2 on CPU 0, b runs [2, 5];
/// every instance of the chain [a, b] has latency 5 ms.
#[test]
fn an_event_chain_of_a_task_and_the_one_it_triggers_takes_5ms() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ab, tasks: [a, b]}\n");
    let r = run(&t, "gfp:file");
    let ab = of(&r, 0);
    assert_eq!(ab.len(), 10);
    for (k, c) in ab.iter().enumerate() {
        assert_eq!(c.instance, k as u64);
        assert_eq!(
            (c.start, c.end),
            (10 * k as u64 * MS, (10 * k as u64 + 5) * MS)
        );
        assert_eq!(c.latency, Some(5 * MS));
        assert_eq!((c.data_age, c.reaction_time), (None, None));
    }
    let b: Vec<_> = r.jobs.iter().filter(|j| j.task == 1).collect();
    assert_eq!(b.len(), 10);
    assert_eq!((b[3].release, b[3].finish), (32 * MS, Some(35 * MS)));
}

/// A LET chain from a 5 ms task to a 10 ms task (Dürr et al. 2019's LET: read at release,
/// publish at the deadline, a publication visible to a read at the same instant). The 10 ms
/// task's job released at 10k reads what the 5 ms task's job released at 10k − 5 published at
/// 10k; it publishes at 10k + 10: data age 15 ms on every output (the job at 0 reads no data
/// yet: no output). Reaction time: the previous head read was at 10k − 15, so 25 ms.
#[test]
fn a_let_chain_from_5ms_to_10ms_has_data_age_15ms() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: fast, period: 5, wcet: 1}\n  - {name: slow, period: 10, wcet: 2}\nchains:\n  - {name: flow, tasks: [fast, slow], communication: let}\n");
    for spec in ["gedf", "gfp"] {
        let f = of(&run(&t, spec), 0);
        assert_eq!(f.len(), 9, "{spec}: outputs 1..9 (output 0 had no data)");
        for c in &f {
            assert_eq!(c.data_age, Some(15 * MS), "{spec} {c:?}");
            assert_eq!(c.latency, None);
            assert_eq!(c.end, (10 * c.instance + 10) * MS);
        }
        assert_eq!(f[0].reaction_time, None, "no earlier head read");
        assert!(f[1..].iter().all(|c| c.reaction_time == Some(25 * MS)));
    }
}

/// Implicit communication (read at the start, publish at the finish): a (T 10, C 2) then c
/// (T 10, C 3) on 1 CPU, a first: a reads at 10k, publishes at 10k + 2; c starts at 10k + 2,
/// reads it, publishes at 10k + 5: data age 5 ms; reaction time from the previous head read,
/// 10k − 10: 15 ms.
#[test]
fn an_implicit_chain_is_read_at_start_and_published_at_finish() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 50}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: c, period: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ac, tasks: [a, c], communication: implicit, deadline: 4}\n");
    let f = of(&run(&t, "gfp:file"), 0);
    assert_eq!(f.len(), 5);
    assert!(f.iter().all(|c| c.data_age == Some(5 * MS)));
    assert_eq!(f[0].reaction_time, None);
    assert!(f[1..].iter().all(|c| c.reaction_time == Some(15 * MS)));
}

/// A job with segments [2, {suspend: 1}, 1] alone responds in 4 ms under every policy that
/// takes it; with a lower-priority task beside it, that task runs during the suspension
/// [2, 3] and finishes at 3, and the suspending job still responds in 4.
#[test]
fn a_suspension_leaves_the_cpu_to_another_task() {
    let alone = ts("platform: {cpus: 1}\nrun: {duration: 30}\ntasks:\n  - {name: s, period: 10, segments: [2, {suspend: 1}, 1], priority: 5, cpu: 0}\n");
    for spec in [
        "gedf",
        "gnpedf",
        "pedf",
        "gfp",
        "pfp",
        "gfifo",
        "gedf-dist",
        "gfp-dist",
        "paws",
        "gedf-seq",
        "ggua",
        "nggua",
        "ghvdf",
        "dasa",
        "lbesa",
    ] {
        let r = run(&alone, spec);
        assert_eq!(r.jobs.len(), 3, "{spec}");
        for j in &r.jobs {
            assert_eq!(j.finish, Some(j.release + 4 * MS), "{spec}: {j:?}");
            assert_eq!(j.exec, 3 * MS, "{spec}: CPU time is the run segments'");
        }
    }
    let two = ts("platform: {cpus: 1}\nrun: {duration: 10}\ntasks:\n  - {name: s, period: 10, segments: [2, {suspend: 1}, 1], priority: 5}\n  - {name: o, period: 10, wcet: 1, priority: 4}\n");
    let r = simulate(&two, Options::spec("gfp:file").intervals(true))
        .unwrap()
        .result;
    assert_eq!(r.jobs[0].finish, Some(4 * MS));
    assert_eq!(
        (r.jobs[1].start, r.jobs[1].finish),
        (Some(2 * MS), Some(3 * MS))
    );
    let s: Vec<_> = r
        .intervals
        .iter()
        .filter(|i| i.task == 0)
        .map(|i| (i.start / MS, i.end / MS))
        .collect();
    assert_eq!(s, vec![(0, 2), (3, 4)]);
}

/// A suspension of [1, 3] ms is drawn with the run's seed: the same seed gives the same
/// lengths, each within [1, 3]; another seed other lengths.
#[test]
fn a_ranged_suspension_is_drawn_from_the_seed() {
    let yaml = |seed: u64| {
        ts(&format!("platform: {{cpus: 1}}\nrun: {{duration: 200, seed: {seed}}}\ntasks:\n  - {{name: s, period: 10, segments: [2, {{suspend: [1ms, 3ms]}}, 1]}}\n"))
    };
    let resp = |seed| -> Vec<u64> {
        run(&yaml(seed), "gedf")
            .jobs
            .iter()
            .map(|j| j.finish.unwrap() - j.release)
            .collect()
    };
    let (a, b, c) = (resp(1), resp(1), resp(2));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.iter().all(|&x| (4 * MS..=6 * MS).contains(&x)), "{a:?}");
}

/// trigger: {all: [a, b]}: j is released when both have finished a job since its last
/// release. a (T 10, C 1), b (T 20, C 2), j (C 1), priorities a > b > j on 1 CPU: a [0, 1],
/// b [1, 3], j released at 3 runs [3, 4]; at 10 only a finishes: no release; at 20 a [20, 21],
/// b [21, 23], j [23, 24]. Chains [b, j] and [a, j] (the a job that finished last): 4 ms.
#[test]
fn a_trigger_on_all_waits_for_each() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 60}\ntasks:\n  - {name: a, period: 10, wcet: 1, priority: 5}\n  - {name: b, period: 20, wcet: 2, priority: 4}\n  - {name: j, trigger: {all: [a, b]}, deadline: 20, wcet: 1, priority: 3}\nchains:\n  - {name: bj, tasks: [b, j]}\n  - {name: aj, tasks: [a, j]}\n");
    let r = run(&t, "gfp:file");
    let j: Vec<_> = r
        .jobs
        .iter()
        .filter(|x| x.task == 2)
        .map(|x| (x.release / MS, x.finish.unwrap() / MS))
        .collect();
    assert_eq!(j, vec![(3, 4), (23, 24), (43, 44)]);
    let bj: Vec<_> = of(&r, 0)
        .iter()
        .map(|c| (c.instance, c.latency.unwrap() / MS))
        .collect();
    assert_eq!(bj, vec![(0, 4), (1, 4), (2, 4)]);
    let aj: Vec<_> = of(&r, 1)
        .iter()
        .map(|c| (c.instance, c.start / MS, c.latency.unwrap() / MS))
        .collect();
    assert_eq!(aj, vec![(0, 0, 4), (2, 20, 4), (4, 40, 4)]);
}

/// A trigger chain on 2 CPUs: the triggered job is woken on the CPU where its trigger
/// finished (its kernel CPU): under partitioned EDF each stays on its own CPU.
#[test]
fn a_triggered_job_is_released_at_its_triggers_finish() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 40}\ntasks:\n  - {name: a, period: 10, wcet: 2, cpu: 0}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, cpu: 1}\n  - {name: c, trigger: b, deadline: 10, wcet: 1, cpu: 0}\nchains:\n  - {name: abc, tasks: [a, b, c], deadline: 5}\n");
    for spec in ["pedf", "gedf"] {
        let r = run(&t, spec);
        let abc = of(&r, 0);
        assert_eq!(abc.len(), 4, "{spec}");
        assert!(
            abc.iter().all(|c| c.latency == Some(6 * MS)),
            "{spec}: {abc:?}"
        );
        let c: Vec<_> = r
            .jobs
            .iter()
            .filter(|x| x.task == 2)
            .map(|x| x.release / MS)
            .collect();
        assert_eq!(c, vec![5, 15, 25, 35], "{spec}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any event chain's latency is at least the sum of its tasks' WCETs (each job of it runs
    /// its WCET after the one before it finished), whatever runs beside it. Control: alone on
    /// its CPUs the chain takes exactly that sum, so a bound one nanosecond larger is caught.
    #[test]
    fn an_event_chains_latency_is_at_least_its_wcets(
        cs in prop::collection::vec(1u64..4, 1..4),
        others in prop::collection::vec((1u64..4, 4u64..12), 0..4),
        cpus in 1u32..3,
        spec in prop::sample::select(vec!["gedf", "gfp", "gfifo", "gnpedf"]),
    ) {
        let chain_len = cs.len();
        let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 60}}\ntasks:\n  - {{name: t0, period: 20, wcet: {}}}\n", cs[0]);
        for (k, c) in cs.iter().enumerate().skip(1) {
            y += &format!("  - {{name: t{k}, trigger: t{}, deadline: 20, wcet: {c}}}\n", k - 1);
        }
        let alone = ts(&format!("{y}chains:\n  - {{name: e, tasks: [{}]}}\n", (0..chain_len).map(|k| format!("t{k}")).collect::<Vec<_>>().join(", ")));
        for (k, (c, p)) in others.iter().enumerate() {
            y += &format!("  - {{name: o{k}, period: {p}, wcet: {c}}}\n");
        }
        y += &format!("chains:\n  - {{name: e, tasks: [{}]}}\n", (0..chain_len).map(|k| format!("t{k}")).collect::<Vec<_>>().join(", "));
        let busy = ts(&y);
        let sum: u64 = cs.iter().sum::<u64>() * MS;
        let r = run(&busy, spec);
        // (An overloaded set may starve the chain: then no instance ends, and nothing to check.)
        for c in &r.chains {
            prop_assert!(c.latency.unwrap() >= sum, "{c:?} < {sum}");
        }
        // Control: tight alone — the sum + 1 ns would be refuted.
        let a = run(&alone, spec);
        prop_assert_eq!(a.chains.len(), 3);
        prop_assert!(a.chains.iter().all(|c| c.latency == Some(sum)));
        prop_assert!(a.chains.iter().any(|c| c.latency.unwrap() < sum + 1));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Every policy the registry lists keeps the call protocol (the ledger's checker panics on a
    /// violation) on sets with triggers (one and all), ranged suspensions and chains, and each
    /// finished job ran exactly its demand (plus the overheads its policy charges): triggered releases and suspensions go through the
    /// one ledger whatever the policy.
    #[test]
    fn every_policy_keeps_the_protocol_with_triggers_and_suspensions(
        c in prop::collection::vec(1u64..4, 4),
        sus in 1u64..4,
        cpus in 1u32..3,
        which in 0usize..64,
        seed in 0u64..1000,
    ) {
        let names = rtsched_policies::registry::names();
        let spec = names[which % names.len()];
        let y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 80, seed: {seed}, execution: {{model: uniform, min: 0.5, max: 1.0}}}}\ntasks:\n  - {{name: a, period: 20, wcet: {}, priority: 4, cpu: 0}}\n  - {{name: b, trigger: a, deadline: 20, wcet: {}, priority: 3, cpu: {}}}\n  - {{name: s, period: 40, segments: [{}, {{suspend: [1, {sus}]}}, 1], priority: 2, cpu: 0}}\n  - {{name: j, trigger: {{all: [b, s]}}, deadline: 40, wcet: {}, priority: 1, cpu: 0}}\nchains:\n  - {{name: e, tasks: [a, b, j]}}\n  - {{name: d, tasks: [a, s], communication: implicit}}\n", c[0], c[1], cpus - 1, c[2], c[3]);
        let t = ts(&y);
        let Ok(inner) = rtsched_policies::build(spec, &t) else { return Ok(()) };
        let mut policy = rtsched_runtime::ProtocolChecker::new(inner, cpus);
        let r = simulate(&t, Options::policy(&mut policy)).unwrap().result;
        for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
            // CPU time is the demand plus what the policy's own costs add (cfs charges its
            // context switches: `overhead`), as the ledger accounts every job.
            prop_assert_eq!(j.exec, j.demand + j.overhead + j.stall, "{}: {:?}", spec, j);
        }
        prop_assert!(r.jobs.iter().any(|j| j.task == 3), "{spec}: j was released");
    }
}

/// A run's chain records, sorted for comparison.
fn sorted(mut v: Vec<ChainRecord>) -> Vec<ChainRecord> {
    v.sort_by_key(|c| (c.chain, c.start, c.end, c.instance));
    v
}

/// The worked cases above, replayed from their job records alone
/// (`rtsched_runtime::chains::chain_records`, what a kernel backend's run computes its chains
/// with): the same records as the simulator's ledger made inline.
#[test]
fn replaying_the_job_records_gives_the_simulators_chain_records() {
    let sets = [
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ab, tasks: [a, b]}\n",
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: fast, period: 5, wcet: 1}\n  - {name: slow, period: 10, wcet: 2}\nchains:\n  - {name: flow, tasks: [fast, slow], communication: let}\n",
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: c, period: 10, wcet: 3}\nchains:\n  - {name: d, tasks: [a, c], communication: implicit}\n",
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 1, priority: 3}\n  - {name: b, period: 20, wcet: 2, priority: 2}\n  - {name: j, trigger: {all: [a, b]}, deadline: 20, wcet: 1, priority: 1}\nchains:\n  - {name: bj, tasks: [b, j]}\n  - {name: aj, tasks: [a, j]}\n",
    ];
    for y in sets {
        let t = ts(y);
        let spec = if y.contains("priority") {
            "gfp:file"
        } else {
            "gedf"
        };
        let r = run(&t, spec);
        assert!(!r.chains.is_empty(), "{y}");
        let replayed = rtsched_runtime::chains::chain_records(&t, &r.jobs);
        assert_eq!(sorted(replayed), sorted(r.chains.clone()), "{y}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// On random sets with triggers (one and all), ranged suspensions, event and data-flow
    /// chains, under several policies, the replay of the job records is the ledger's inline
    /// account, record for record. Control: a job record whose finish is moved by 1 ns changes
    /// the replayed records (the replay reads the timestamps, not the simulator's state).
    #[test]
    fn the_chain_rule_replayed_from_job_records_is_the_simulators(
        c in prop::collection::vec(1u64..4, 4),
        sus in 1u64..4,
        cpus in 1u32..3,
        spec in prop::sample::select(vec!["gedf", "gfp:file", "pedf", "gfifo"]),
        comm in prop::sample::select(vec!["implicit", "let"]),
        seed in 0u64..1000,
    ) {
        let y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 80, seed: {seed}, execution: {{model: uniform, min: 0.5, max: 1.0}}}}\ntasks:\n  - {{name: a, period: 20, wcet: {}, priority: 4, cpu: 0}}\n  - {{name: b, trigger: a, deadline: 20, wcet: {}, priority: 3, cpu: {}}}\n  - {{name: s, period: 10, segments: [{}, {{suspend: [1, {sus}]}}, 1], priority: 2, cpu: 0}}\n  - {{name: j, trigger: {{all: [b, s]}}, deadline: 40, wcet: {}, priority: 1, cpu: 0}}\nchains:\n  - {{name: e, tasks: [a, b, j]}}\n  - {{name: f, tasks: [s, j]}}\n  - {{name: d, tasks: [a, s], communication: {comm}}}\n", c[0], c[1], cpus - 1, c[2], c[3]);
        let t = ts(&y);
        let r = run(&t, spec);
        let inline = sorted(r.chains.clone());
        prop_assert!(!inline.is_empty());
        prop_assert_eq!(sorted(rtsched_runtime::chains::chain_records(&t, &r.jobs)), inline.clone());
        // Control: the last task's first finished job finishing 1 ns later is seen.
        let mut jobs = r.jobs.clone();
        let k = jobs.iter().position(|x| x.task == 3 && x.finish.is_some()).expect("a finished j");
        jobs[k].finish = jobs[k].finish.map(|f| f + 1);
        prop_assert_ne!(sorted(rtsched_runtime::chains::chain_records(&t, &jobs)), inline);
    }
}
