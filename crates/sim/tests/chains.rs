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

/// A trigger outside every chain still releases at its trigger's finish (the ledger tells a
/// finish to the flow only for a task that triggers one or is in a chain, `Flow::on_finish`):
/// the first set without chains, the second with a chain that holds neither task.
#[test]
fn a_trigger_outside_every_chain_releases_its_task() {
    let base = "platform: {cpus: 1}\nrun: {duration: 40}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\n  - {name: s, period: 20, segments: [1, {suspend: 1}, 1], priority: 1}\n  - {name: f, period: 20, wcet: 1, priority: 2}\n";
    for yaml in [
        base.to_string(),
        format!("{base}chains:\n  - {{name: sf, tasks: [s, f], communication: let}}\n"),
    ] {
        let r = run(&ts(&yaml), "gfp:file");
        let b: Vec<_> = r
            .jobs
            .iter()
            .filter(|x| x.task == 1)
            .map(|x| (x.release / MS, x.finish.map(|f| f / MS)))
            .collect();
        assert_eq!(
            b,
            vec![(2, Some(5)), (12, Some(15)), (22, Some(25)), (32, Some(35))],
            "{yaml}"
        );
    }
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

/// The slice of `slices` (pid, tid, start, end in µs, name) enclosing `(pid, tid, ts)`: the
/// innermost, as Perfetto binds a flow event to a slice.
fn enclosing(slices: &[(u64, u64, f64, f64, String)], pid: u64, tid: u64, ts: f64) -> Option<&str> {
    slices
        .iter()
        .filter(|s| s.0 == pid && s.1 == tid && s.2 <= ts && ts < s.3)
        .min_by(|a, b| (a.3 - a.2).total_cmp(&(b.3 - b.2)))
        .map(|s| s.4.as_str())
}

/// The flow arrows of the trace of `t` under `spec`: per flow id, (chain, the slice its start
/// binds to, the slice its end binds to), each flow's start and end checked to be one "s" and
/// one "f" bound to the enclosing slice ("bp": "e").
fn flows(t: &TaskSet, spec: &str) -> Vec<(String, String, String)> {
    let r = simulate(t, Options::spec(spec).intervals(true))
        .unwrap()
        .result;
    let mut text = Vec::new();
    rtsched_model::results::write_trace(&[&r], &mut text).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let mut out = Vec::new();
    let ev = v["traceEvents"].as_array().unwrap();
    let n = |e: &serde_json::Value, k: &str| e[k].as_u64().unwrap();
    let ts = |e: &serde_json::Value| e["ts"].as_f64().unwrap();
    let slices: Vec<_> = ev
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let (a, d) = (ts(e), e["dur"].as_f64().unwrap());
            let name = e["name"].as_str().unwrap().to_string();
            (n(e, "pid"), n(e, "tid"), a, a + d, name)
        })
        .collect();
    let mut by_id = std::collections::BTreeMap::<u64, Vec<&serde_json::Value>>::new();
    for e in ev.iter().filter(|e| e["ph"] == "s" || e["ph"] == "f") {
        by_id.entry(n(e, "id")).or_default().push(e);
    }
    for (id, es) in &by_id {
        let (s, f) = (es[0], es[es.len() - 1]);
        assert_eq!(es.len(), 2, "flow {id}: one start and one end");
        assert_eq!(
            (&s["ph"], &f["ph"]),
            (&"s".into(), &"f".into()),
            "flow {id}"
        );
        assert_eq!(
            f["bp"], "e",
            "flow {id}: its end binds to the enclosing slice"
        );
        assert_eq!(
            (&s["cat"], &s["name"]),
            (&f["cat"], &f["name"]),
            "flow {id}"
        );
        assert_eq!(s["cat"], "chain");
        let at = |e: &serde_json::Value| {
            enclosing(&slices, n(e, "pid"), n(e, "tid"), ts(e))
                .unwrap_or_else(|| panic!("flow {id}: no slice encloses {e}"))
                .to_string()
        };
        out.push((s["name"].as_str().unwrap().to_string(), at(s), at(f)));
    }
    // Without the intervals (no trace wanted) no path is kept: the trace has no flows.
    let plain = run(t, spec);
    assert!(plain.chain_paths.is_empty());
    out
}

/// The example in a trace: one flow arrow per instance of the chain [a, b], from a's
/// job k (the slice "a/k", [10k, 10k + 2]) to the job of b it released ("b/k", [10k + 2,
/// 10k + 5]); ids distinct.
#[test]
fn a_trace_links_each_event_chain_instances_jobs() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ab, tasks: [a, b]}\n");
    let f = flows(&t, "gfp:file");
    let want: Vec<_> = (0..10)
        .map(|k| ("ab".to_string(), format!("a/{k}"), format!("b/{k}")))
        .collect();
    assert_eq!(f, want);
}

/// A three-task event chain whose middle job is preempted: the arrow into b's job binds to its
/// first slice, the arrow out of it to its last. On 1 CPU (gfp, file priorities) a (T 10,
/// C 1, prio 9) releases b (C 4, prio 5) at 1; h (T 10, offset 2, C 2, prio 8) preempts b at
/// [2, 4]; b finishes at 7 and releases c (C 1, prio 4) [7, 8].
#[test]
fn a_trace_binds_arrows_to_a_preempted_jobs_first_and_last_slices() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 20}\ntasks:\n  - {name: a, period: 10, wcet: 1, priority: 9}\n  - {name: b, trigger: a, deadline: 10, wcet: 4, priority: 5}\n  - {name: c, trigger: b, deadline: 10, wcet: 1, priority: 4}\n  - {name: h, period: 10, offset: 2, wcet: 2, priority: 8}\nchains:\n  - {name: abc, tasks: [a, b, c]}\n");
    let r = simulate(&t, Options::spec("gfp:file").intervals(true))
        .unwrap()
        .result;
    let b0: Vec<_> = r
        .intervals
        .iter()
        .filter(|iv| iv.task == 1 && iv.job == 0)
        .map(|iv| (iv.start / MS, iv.end / MS))
        .collect();
    assert_eq!(b0, vec![(1, 2), (4, 7)], "b's first job is preempted by h");
    let flows_of = rtsched_model::results::chain_flows(&r);
    // Two arrows per instance: a → b into b's first slice, b → c out of its last.
    assert_eq!(flows_of.len(), 4);
    let (s0, e0) = (flows_of[0].1 .1, flows_of[0].2 .1);
    assert!((0..MS).contains(&s0), "a/0's slice [0, 1]: {s0}");
    assert!((MS..2 * MS).contains(&e0), "b/0's first slice [1, 2]: {e0}");
    let (s1, e1) = (flows_of[1].1 .1, flows_of[1].2 .1);
    assert!(
        (4 * MS..7 * MS).contains(&s1),
        "b/0's last slice [4, 7]: {s1}"
    );
    assert!((7 * MS..8 * MS).contains(&e1), "c/0's slice [7, 8]: {e1}");
    let f = flows(&t, "gfp:file");
    assert_eq!(
        f.iter()
            .map(|x| (x.1.as_str(), x.2.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("a/0", "b/0"),
            ("b/0", "c/0"),
            ("a/1", "b/1"),
            ("b/1", "c/1")
        ]
    );
}

/// A LET data-flow chain's data paths in a trace: output k of slow (released at 10k) read
/// what fast's job released at 10k − 5 (job 2k − 1) published at 10k: one arrow from
/// "fast/(2k−1)" to "slow/k" per output (output 0 read no data and has no record).
#[test]
fn a_trace_links_each_data_flow_outputs_data_path() {
    let t = ts("platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: fast, period: 5, wcet: 1}\n  - {name: slow, period: 10, wcet: 2}\nchains:\n  - {name: flow, tasks: [fast, slow], communication: let}\n");
    let f = flows(&t, "gedf");
    let want: Vec<_> = (1..10)
        .map(|k| {
            let from = format!("fast/{}", 2 * k - 1);
            ("flow".to_string(), from, format!("slow/{k}"))
        })
        .collect();
    assert_eq!(f, want);
}

/// A run that streams its records (`Records::Summarised`) hands each chain record to the sink
/// as it is made, holds none, and reports the chains' summaries the held run derives from its
/// records (the results document's `chains`, field for field); a `ChainsCsvWriter` so fed
/// (`--chains-csv` as the run goes) writes the held records' CSV, line for line.
#[test]
fn streamed_chain_records_are_the_held_ones() {
    struct Chains(Vec<ChainRecord>);
    impl rtsched_model::results::JobSink for Chains {
        fn job(&mut self, _: &rtsched_model::results::JobRecord, _: u64) {}
        fn chain(&mut self, rec: &ChainRecord) {
            self.0.push(*rec);
        }
    }
    let t = ts("platform: {cpus: 2}\nrun: {duration: 200, seed: 3, execution: {model: uniform, min: 0.5}}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\n  - {name: fast, period: 5, wcet: 1, priority: 3}\n  - {name: slow, period: 7, wcet: 2, priority: 2}\nchains:\n  - {name: ab, tasks: [a, b], deadline: 4}\n  - {name: let, tasks: [fast, slow], communication: let}\n  - {name: imp, tasks: [fast, slow], communication: implicit}\n");
    for spec in ["gedf", "gfp:file", "pedf:ffd"] {
        let held = run(&t, spec);
        let mut sink = Chains(Vec::new());
        let streamed = simulate(
            &t,
            Options::spec(spec).records(rtsched_sim::Records::Summarised(Some(&mut sink))),
        )
        .unwrap()
        .result;
        assert!(held.chains.len() > 60, "{spec}: {}", held.chains.len());
        assert!(streamed.chains.is_empty(), "{spec}: streamed records held");
        assert_eq!(sink.0, held.chains, "{spec}");
        assert!(held.chain_summaries.is_none());
        assert_eq!(
            streamed.to_json_value(false)["chains"],
            held.to_json_value(false)["chains"],
            "{spec}"
        );
        assert!(held.to_json_value(false)["chains"]["ab"]["deadline_misses"].as_u64() > Some(0));
        // `--chains-csv` written as the run goes: the lines of the held records' CSV.
        let mut csv = rtsched_model::results::ChainsCsvWriter::new(Vec::new()).unwrap();
        csv.begin_run(&held.scheduler, &t.chains);
        let streamed = simulate(
            &t,
            Options::spec(spec).records(rtsched_sim::Records::Summarised(Some(&mut csv))),
        )
        .unwrap()
        .result;
        assert!(streamed.chains.is_empty(), "{spec}: streamed records held");
        let mut want = Vec::new();
        rtsched_model::results::write_chains_csv(&[&held], &mut want).unwrap();
        let got = String::from_utf8(csv.finish().unwrap()).unwrap();
        assert_eq!(got.lines().count(), held.chains.len() + 1, "{spec}");
        assert_eq!(got, String::from_utf8(want).unwrap(), "{spec}");
        // A sink that does not take chain records (a sweep's TotalSink, the testbed's
        // handoff): the run holds them, as without a sink.
        let mut total = rtsched_model::results::TotalSink::default();
        let into = simulate(
            &t,
            Options::spec(spec).records(rtsched_sim::Records::Into(&mut total)),
        )
        .unwrap()
        .result;
        assert_eq!(into.chains, held.chains, "{spec}");
    }
}

/// Every record's path (kept with the intervals) is the chain's definition read off the job
/// records, under several policies and two CPUs, with execution times drawn below the WCET:
/// event chain, each job released at its predecessor's finish, the first at the record's
/// start, the last finishing at its end; LET, each job released at or after its predecessor's
/// deadline (its publication) and before the next one's; implicit, each job started at or
/// after its predecessor's finish and before the next one's.
#[test]
fn each_records_path_is_the_chain_read_off_the_job_records() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 300, seed: 5, execution: {model: uniform, min: 0.3}}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\n  - {name: c, trigger: b, deadline: 10, wcet: 1, priority: 3}\n  - {name: f, period: 4, wcet: 1, priority: 6}\n  - {name: g, period: 7, wcet: 2, priority: 2}\n  - {name: h, period: 11, wcet: 2, priority: 1}\nchains:\n  - {name: abc, tasks: [a, b, c]}\n  - {name: let, tasks: [f, g, h], communication: let}\n  - {name: imp, tasks: [f, g, h], communication: implicit}\n");
    for spec in ["gedf", "gfp:file", "pedf:ffd", "gedf-dist:heap"] {
        let r = simulate(&t, Options::spec(spec).intervals(true))
            .unwrap()
            .result;
        let job = |task: u32, k: u64| r.jobs.iter().find(|j| j.task == task && j.job == k);
        let mut at = 0;
        let mut seen = [0; 3];
        for rec in &r.chains {
            let ch = &r.chain_defs[rec.chain as usize];
            let path = &r.chain_paths[at..at + ch.tasks.len()];
            at += ch.tasks.len();
            seen[rec.chain as usize] += 1;
            let jobs: Vec<_> = (0..path.len())
                .map(|i| job(ch.tasks[i], path[i]).expect("a path's job is a counted one"))
                .collect();
            let last = jobs[jobs.len() - 1];
            for i in 1..jobs.len() {
                let (p, q) = (jobs[i - 1], jobs[i]);
                let next = job(ch.tasks[i - 1], p.job + 1);
                match ch.communication {
                    None => assert_eq!(Some(q.release), p.finish, "{spec} {rec:?}"),
                    Some(rtsched_model::Communication::Let) => {
                        assert!(p.deadline <= q.release, "{spec} {rec:?}");
                        assert!(
                            next.is_none_or(|n| n.deadline > q.release),
                            "{spec} {rec:?}"
                        );
                    }
                    Some(rtsched_model::Communication::Implicit) => {
                        let read = q.start.unwrap();
                        assert!(p.finish.unwrap() <= read, "{spec} {rec:?}");
                        assert!(
                            next.is_none_or(|n| n.finish.is_none_or(|f| f > read)),
                            "{spec} {rec:?}"
                        );
                    }
                }
            }
            match ch.communication {
                None => assert_eq!((jobs[0].release, last.finish), (rec.start, Some(rec.end))),
                Some(rtsched_model::Communication::Let) => {
                    assert_eq!((jobs[0].release, last.deadline), (rec.start, rec.end))
                }
                Some(rtsched_model::Communication::Implicit) => {
                    assert_eq!(
                        (jobs[0].start, last.finish),
                        (Some(rec.start), Some(rec.end))
                    )
                }
            }
        }
        assert_eq!(at, r.chain_paths.len(), "{spec}: one path per record");
        assert!(seen.iter().all(|&n| n > 20), "{spec}: {seen:?}");
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
