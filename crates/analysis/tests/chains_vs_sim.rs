//! The chain and self-suspension analyses (`schedulability::{holistic, suspension, dataflow,
//! let_exact, chains}`) against the simulator, on seeded random sets of triggered,
//! self-suspending and periodic tasks (one CPU under `gfp:file`, or two under `pfp:file` with
//! the `cpu` fields), simulated from synchronous release at WCET:
//! - no job's response exceeds its task's bound (from its own release), under either
//!   suspension analysis; no event chain's latency exceeds its bound; no implicit chain's data
//!   age or reaction time exceeds Davare's bounds or Dürr's;
//! - a LET chain's exact maxima equal the simulated maxima;
//! - negative controls, each refuted by some seed: the chain bound less 1 ns; the bound with
//!   the interference dropped (Σ C + S along the chain); the analysis with the propagated
//!   jitter dropped; a suspending task read as its WCET alone (what `analyze` did before);
//!   Davare's bound without its T terms.
//!
//! The issue's example is a golden test: bound 5 ms, simulated 5 ms. Dürr et al.'s implicit
//! bounds and the LET sum for sporadic tasks are tested in `chains/dataflow.rs`.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::schedulability::chains::chain_bounds;
use rtsched_analysis::schedulability::holistic::event_bounds;
use rtsched_analysis::schedulability::holistic::{analyse, nodes, Responses, Suspension};
use rtsched_analysis::schedulability::let_exact;
use rtsched_analysis::schedulability::registry::{Priorities, Subject};
use rtsched_analysis::schedulability::{analyze, dataflow, durr};
use rtsched_analysis::schedulability::{holistic, holistic_edf};
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Communication, Format, TaskSet, Time};
use rtsched_sim::{simulate, Options};

#[path = "chains/dataflow.rs"]
mod dataflow_chains;

const US: Time = 1_000;
const MS: Time = 1_000_000;

/// A random set from `seed`: 1–3 periodic heads (T in 5, 10, 20 ms), 1–3 tasks each
/// triggered by an earlier task, some with a suspension; distinct priorities; U ≤ 0.8 per
/// CPU; an event chain from each triggered task's head to it, an implicit and a LET chain
/// between two heads. One CPU, or two with random `cpu` fields. Returns (set, scheduler).
fn random_set(seed: u64) -> (TaskSet, &'static str) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let heads = rng.random_range(1..=3usize);
    let triggered = rng.random_range(1..=3usize);
    let n = heads + triggered;
    let cpus = if rng.random_bool(0.3) { 2 } else { 1 };
    let mut period = vec![0; n];
    let mut parent = vec![None; n];
    for i in 0..n {
        if i < heads {
            period[i] = [5, 10, 20][rng.random_range(0..3)] * MS;
        } else {
            let g = rng.random_range(0..i);
            parent[i] = Some(g);
            period[i] = period[g];
        }
    }
    let mut prio: Vec<u32> = (1..=n as u32).collect();
    for i in (1..n).rev() {
        prio.swap(i, rng.random_range(0..=i));
    }
    let cpu: Vec<u32> = (0..n).map(|_| rng.random_range(0..cpus)).collect();
    // (run segments, suspension) per task, scaled down until each CPU's U ≤ 0.8.
    let mut work: Vec<(Vec<Time>, Option<Time>)> = (0..n)
        .map(|i| {
            let c = rng.random_range(200 * US..=period[i] / 4);
            if rng.random_bool(0.3) {
                let a = rng.random_range(US..c - US); // both segments ≥ 1 us
                let s = rng.random_range(100 * US..=period[i] / 5);
                (vec![a, c - a], Some(s))
            } else {
                (vec![c], None)
            }
        })
        .collect();
    for k in 0..cpus {
        loop {
            let u: f64 = (0..n)
                .filter(|&i| cpu[i] == k)
                .map(|i| work[i].0.iter().sum::<Time>() as f64 / period[i] as f64)
                .sum();
            if u <= 0.8 {
                break;
            }
            for (i, w) in work.iter_mut().enumerate() {
                if cpu[i] == k {
                    w.0.iter_mut().for_each(|x| *x = (*x / 2).max(US));
                }
            }
        }
    }
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 400ms}}\ntasks:\n");
    for i in 0..n {
        let (segs, susp) = &work[i];
        let body = match susp {
            Some(s) => format!(
                "segments: [{}us, {{suspend: {}us}}, {}us]",
                segs[0] / US,
                s / US,
                segs[1] / US
            ),
            None => format!("wcet: {}us", segs[0] / US),
        };
        let arrival = match parent[i] {
            Some(g) => format!("trigger: t{g}, deadline: {}ms", period[i] / MS),
            None => format!("period: {}ms", period[i] / MS),
        };
        let place = if cpus > 1 {
            format!(", cpu: {}", cpu[i])
        } else {
            String::new()
        };
        y += &format!(
            "  - {{name: t{i}, {arrival}, {body}, priority: {}{place}}}\n",
            prio[i]
        );
    }
    y += "chains:\n";
    for i in heads..n {
        let mut path = vec![i];
        while let Some(g) = parent[*path.last().unwrap()] {
            path.push(g);
        }
        path.reverse();
        let names: Vec<String> = path.iter().map(|k| format!("t{k}")).collect();
        y += &format!("  - {{name: e{i}, tasks: [{}]}}\n", names.join(", "));
    }
    if heads >= 2 {
        y += "  - {name: imp, tasks: [t0, t1], communication: implicit}\n";
        y += "  - {name: let, tasks: [t1, t0], communication: let}\n";
    }
    let ts = parse_taskset(&y, Format::Yaml, "random.yaml").unwrap_or_else(|e| panic!("{e}\n{y}"));
    (ts, if cpus > 1 { "pfp:file" } else { "gfp:file" })
}

fn responses(ts: &TaskSet, mode: Suspension) -> Option<Responses> {
    let s = Subject::whole(ts);
    let prio = s.priorities(Priorities::File)?;
    analyse(&nodes(&s, &prio).ok()?, mode).ok()
}

fn run(ts: &TaskSet, spec: &str) -> RunResult {
    simulate(ts, Options::spec(spec)).unwrap().result
}

/// The largest simulated response of each task, from its own release.
fn max_response(ts: &TaskSet, r: &RunResult) -> Vec<Time> {
    let mut out = vec![0; ts.tasks.len()];
    for j in &r.jobs {
        if let Some(f) = j.finish {
            out[j.task as usize] = out[j.task as usize].max(f - j.release);
        }
    }
    out
}

/// Per chain: the largest simulated latency, data age and reaction time.
fn max_chain(ts: &TaskSet, r: &RunResult) -> Vec<[Option<Time>; 3]> {
    let mut out = vec![[None; 3]; ts.chains.len()];
    for c in &r.chains {
        let m = &mut out[c.chain as usize];
        for (slot, v) in m.iter_mut().zip([c.latency, c.data_age, c.reaction_time]) {
            *slot = (*slot).max(v);
        }
    }
    out
}

/// What one seed shows: for each claim, (simulated, bound) pairs.
struct Case {
    responses: Vec<(Time, Time)>,
    latencies: Vec<(Time, Time)>,
}

fn case(seed: u64, mode: Suspension) -> Option<(TaskSet, RunResult, Responses)> {
    let (ts, spec) = random_set(seed);
    let r = responses(&ts, mode)?;
    Some((ts.clone(), run(&ts, spec), r))
}

fn compare(ts: &TaskSet, sim: &RunResult, r: &Responses) -> Case {
    let resp = max_response(ts, sim);
    let chains = max_chain(ts, sim);
    let latencies = event_bounds(ts, r)
        .into_iter()
        .filter_map(|(c, b)| {
            let k = ts.chains.iter().position(|x| x.name == c.name)?;
            chains[k][0].map(|l| (l, b))
        })
        .collect();
    Case {
        responses: resp.into_iter().zip(r.own.iter().copied()).collect(),
        latencies,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every bound holds against the simulator, under either suspension analysis; LET is exact.
    #[test]
    fn no_bound_is_below_the_simulation(seed in any::<u64>()) {
        for mode in [Suspension::Jitter, Suspension::Oblivious] {
            let Some((ts, sim, r)) = case(seed, mode) else { continue };
            let c = compare(&ts, &sim, &r);
            for (k, (s, b)) in c.responses.iter().enumerate() {
                prop_assert!(s <= b, "{mode:?}: task {k}: simulated {s} > bound {b}\n{ts:?}");
            }
            for (s, b) in &c.latencies {
                prop_assert!(s <= b, "{mode:?}: latency {s} > bound {b}\n{ts:?}");
            }
            let chains = max_chain(&ts, &sim);
            for (k, chain) in ts.chains.iter().enumerate() {
                match chain.communication {
                    Some(Communication::Implicit) => {
                        let prio = Subject::whole(&ts).priorities(Priorities::File).unwrap();
                        for (age, reaction) in [dataflow::bounds(&ts, chain, &r), durr::bounds(&ts, chain, &r, &prio)] {
                            prop_assert!(chains[k][1].is_none_or(|s| s <= age), "data age {chains:?} > {age}");
                            prop_assert!(chains[k][2].is_none_or(|s| s <= reaction), "reaction {chains:?} > {reaction}");
                        }
                    }
                    Some(Communication::Let) => {
                        let m = let_exact::maxima(&ts, chain).unwrap();
                        prop_assert_eq!((m.data_age, m.reaction_time), (chains[k][1], chains[k][2]));
                    }
                    None => {}
                }
            }
        }
    }
}

/// Whether some seed of the first `n` has a (simulated, bound) pair with simulated > bound
/// once `weaken` is applied, under `mode` and the claim `pick` reads.
fn refuted(
    n: u64,
    mode: Suspension,
    pick: impl Fn(&TaskSet, &RunResult, &Responses) -> Vec<(Time, Time)>,
) -> Option<u64> {
    (0..n).find(|&seed| {
        case(seed, mode).is_some_and(|(ts, sim, r)| pick(&ts, &sim, &r).iter().any(|(s, b)| s > b))
    })
}

/// Negative controls: each weakened bound is refuted by the simulator on some seed. (And the
/// property above is not vacuous: most seeds are analysed, under both analyses.)
#[test]
fn weakened_bounds_are_refuted() {
    for mode in [Suspension::Jitter, Suspension::Oblivious] {
        let analysed = (0..100).filter(|&s| case(s, mode).is_some()).count();
        assert!(
            analysed >= 80,
            "{mode:?}: only {analysed} of 100 seeds analysed"
        );
    }
    let n = 300;
    // The chain bound less 1 ns (some seed's bound is attained).
    let tight = refuted(n, Suspension::Jitter, |ts, sim, r| {
        compare(ts, sim, r)
            .latencies
            .into_iter()
            .map(|(s, b)| (s, b - 1))
            .collect()
    });
    assert!(tight.is_some(), "no chain bound is attained on {n} seeds");
    eprintln!("refuting seeds: bound − 1 ns {tight:?}");
    // The interference dropped: the chain's own work, C + S of each task.
    let alone = refuted(n, Suspension::Jitter, |ts, sim, r| {
        let lat = max_chain(ts, sim);
        let mut out = Vec::new();
        for (k, c) in ts.chains.iter().enumerate() {
            if c.communication.is_none() {
                let own: Time = c
                    .tasks
                    .iter()
                    .map(|&i| {
                        let t = &ts.tasks[i as usize];
                        t.wcet + t.suspensions.iter().map(|x| x.hi).sum::<Time>()
                    })
                    .sum();
                out.extend(lat[k][0].map(|l| (l, own)));
            }
        }
        let _ = r;
        out
    });
    assert!(alone.is_some(), "interference never mattered on {n} seeds");
    // A suspending task read as its WCET alone (its suspension ignored).
    let as_wcet = refuted(n, Suspension::Jitter, |ts, sim, _| {
        let resp = max_response(ts, sim);
        ts.tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.suspensions.is_empty())
            .map(|(i, t)| (resp[i], t.wcet))
            .collect()
    });
    assert!(as_wcet.is_some(), "no suspension mattered on {n} seeds");
    // Davare's bound without its T terms (Σ R).
    let no_t = refuted(n, Suspension::Jitter, |ts, sim, r| {
        let m = max_chain(ts, sim);
        ts.chains
            .iter()
            .enumerate()
            .filter(|(_, c)| c.communication == Some(Communication::Implicit))
            .filter_map(|(k, c)| {
                let sum_r: Time = c.tasks.iter().map(|&i| r.own[i as usize]).sum();
                m[k][2].map(|s| (s, sum_r))
            })
            .collect()
    });
    assert!(
        no_t.is_some(),
        "Davare's T terms never mattered on {n} seeds"
    );
    eprintln!(
        "interference dropped {alone:?}, suspension ignored {as_wcet:?}, Davare without T {no_t:?}"
    );
}

/// Negative control of the jitter propagation: the fixed point with every release jitter
/// forced to 0 (offsets kept) is below some simulated response or latency.
#[test]
fn dropping_the_propagated_jitter_is_refuted() {
    let found = (0..400u64).find(|&seed| {
        let Some((ts, sim, mut r)) = case(seed, Suspension::Jitter) else {
            return false;
        };
        if r.jitter.iter().all(|&j| j == 0) {
            return false;
        }
        let s = Subject::whole(&ts);
        let prio = s.priorities(Priorities::File).unwrap();
        let n = nodes(&s, &prio).unwrap();
        r = rtsched_analysis::schedulability::holistic::analyse_without_jitter(&n).unwrap();
        let c = compare(&ts, &sim, &r);
        c.responses.iter().chain(&c.latencies).any(|(s, b)| s > b)
    });
    assert!(found.is_some(), "the jitter never mattered on 400 seeds");
    eprintln!("jitter dropped: refuted by seed {found:?}");
}

/// The issue's example: 1 CPU, gfp with the file's priorities, a (T 10, C 2, prio 5) and b
/// (trigger a, C 3, prio 4): the bound is 5 ms and every simulated instance is 5 ms.
#[test]
fn the_issues_chain_is_bounded_at_5ms_and_simulates_at_5ms() {
    let ts = parse_taskset(
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ab, tasks: [a, b]}\n",
        Format::Yaml,
        "issue.yaml",
    )
    .unwrap();
    let b = chain_bounds(&ts);
    assert_eq!(b.len(), 1);
    assert_eq!((b[0].chain.as_str(), b[0].latency), ("ab", Some(5 * MS)));
    let sim = run(&ts, "gfp:file");
    assert!(sim.chains.iter().all(|c| c.latency == Some(5 * MS)));
    assert_eq!(sim.chains.len(), 10);
    // The registry's entry says so, and the classic tests refuse the triggered task.
    let v = analyze(&ts);
    let holistic = v.iter().find(|v| v.test == "fp-holistic-file").unwrap();
    assert_eq!(holistic.schedulable, Some(true), "{v:?}");
    assert!(holistic.detail.contains("chain 'ab' ≤ 5000000ns"), "{v:?}");
    let rta = v.iter().find(|v| v.test == "fp-rta-file").unwrap();
    assert_eq!(rta.schedulable, None);
    assert!(
        rta.detail.contains("does not model triggered tasks"),
        "{v:?}"
    );
}

/// The EDF case of `seed`: `random_set`'s set with half the tasks' deadlines drawn in
/// [T/2, T] (EDF's order depends on them), its holistic EDF responses (`analyse`, or the
/// jitter-less control), simulated under `gedf` on one CPU or `pedf` with the `cpu` fields.
fn edf_case(
    seed: u64,
    analyse: fn(&[holistic::Node]) -> Result<Responses, holistic::Unanalysed>,
) -> Option<(TaskSet, RunResult, Responses)> {
    let (mut ts, spec) = random_set(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xedf0);
    for t in &mut ts.tasks {
        if rng.random_bool(0.5) {
            t.deadline = rng.random_range(t.period / 2..=t.period);
        }
    }
    let s = Subject::whole(&ts);
    let r = analyse(&nodes(&s, &vec![0; ts.tasks.len()]).ok()?).ok()?;
    let spec = if spec == "pfp:file" { "pedf" } else { "gedf" };
    let sim = run(&ts, spec);
    Some((ts, sim, r))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// EDF (`edf-holistic`): no job's response exceeds its task's bound, no event chain's
    /// latency its chain's bound.
    #[test]
    fn no_edf_bound_is_below_the_simulation(seed in any::<u64>()) {
        if let Some((ts, sim, r)) = edf_case(seed, holistic_edf::analyse) {
            let c = compare(&ts, &sim, &r);
            for (k, (s, b)) in c.responses.iter().enumerate() {
                prop_assert!(s <= b, "task {k}: simulated {s} > bound {b}\n{ts:?}");
            }
            for (s, b) in &c.latencies {
                prop_assert!(s <= b, "latency {s} > bound {b}\n{ts:?}");
            }
        }
    }
}

/// Negative controls of the EDF analysis, each refuted by some seed: a response or chain
/// bound less 1 ns (some bound is attained), and the fixed point with the propagated jitter
/// held at 0. The property above is not vacuous: most seeds are analysed.
#[test]
fn weakened_edf_bounds_are_refuted() {
    let analysed = (0..100)
        .filter(|&s| edf_case(s, holistic_edf::analyse).is_some())
        .count();
    assert!(analysed >= 80, "only {analysed} of 100 seeds analysed");
    let below = |pairs: Vec<(Time, Time)>| pairs.iter().any(|(s, b)| s > b);
    let tight = (0..300u64).find(|&seed| {
        edf_case(seed, holistic_edf::analyse).is_some_and(|(ts, sim, r)| {
            let c = compare(&ts, &sim, &r);
            let all = c.responses.into_iter().chain(c.latencies);
            below(all.map(|(s, b)| (s, b - 1)).collect())
        })
    });
    assert!(tight.is_some(), "no EDF bound is attained on 300 seeds");
    let no_jitter = (0..300u64).find(|&seed| {
        edf_case(seed, holistic_edf::analyse_without_jitter).is_some_and(|(ts, sim, r)| {
            let c = compare(&ts, &sim, &r);
            below(c.responses.into_iter().chain(c.latencies).collect())
        })
    });
    assert!(
        no_jitter.is_some(),
        "the jitter never mattered under EDF on 300 seeds"
    );
    // The offsets credited too much: every job of a transaction at its earliest release
    // after its head's (the jitters dropped from the offset bound).
    let too_much = (0..300u64).find(|&seed| {
        edf_case(seed, holistic_edf::analyse_offsets_without_jitter).is_some_and(|(ts, sim, r)| {
            let c = compare(&ts, &sim, &r);
            below(c.responses.into_iter().chain(c.latencies).collect())
        })
    });
    assert!(
        too_much.is_some(),
        "the jitters never mattered to the offsets on 300 seeds"
    );
    eprintln!(
        "EDF: bound − 1 ns refuted by seed {tight:?}, jitter dropped by {no_jitter:?}, offsets without jitter by {too_much:?}"
    );
}

/// The offsets of a transaction under EDF (`holistic_edf.rs`, point 4) never loosen Spuri's
/// bounds and tighten some chain's on some seed; the issue's chain under EDF is bounded at
/// 5 ms (10 ms without the offsets) and simulates at 5 ms under `gedf`.
#[test]
fn edf_offsets_tighten_and_the_issues_chain_is_5ms() {
    let mut tighter = 0;
    for seed in 0..60u64 {
        let (Some((ts, _, r)), Some((_, _, spuri))) = (
            edf_case(seed, holistic_edf::analyse),
            edf_case(seed, holistic_edf::analyse_without_offsets),
        ) else {
            continue;
        };
        let (with, without) = (event_bounds(&ts, &r), event_bounds(&ts, &spuri));
        for ((c, b), (_, s)) in with.iter().zip(&without) {
            assert!(b <= s, "seed {seed}: chain {}: {b} > Spuri's {s}", c.name);
            tighter += usize::from(b < s);
        }
    }
    assert!(
        tighter > 0,
        "the offsets never tightened a chain on 60 seeds"
    );
    eprintln!("EDF offsets tightened {tighter} chains on 60 seeds");
    let ts = parse_taskset(
        "platform: {cpus: 1}\nrun: {duration: 100}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, trigger: a, deadline: 10, wcet: 3}\nchains:\n  - {name: ab, tasks: [a, b]}\n",
        Format::Yaml,
        "issue.yaml",
    )
    .unwrap();
    let edf = chain_bounds(&ts)[0].edf.clone().unwrap();
    assert_eq!(edf.latency, Some(5 * MS), "{edf:?}");
    let sim = run(&ts, "gedf");
    assert!(sim.chains.iter().all(|c| c.latency == Some(5 * MS)));
    let v = analyze(&ts);
    let holistic = v.iter().find(|v| v.test == "edf-holistic").unwrap();
    assert!(holistic.detail.contains("chain 'ab' ≤ 5000000ns"), "{v:?}");
}

/// A random set with a join from `seed`: a head h (T in 5, 10, 20 ms) triggering a and b,
/// j joining them (`trigger: {all: [a, b]}`), sometimes k after j; 0–2 periodic interferers;
/// a quarter of the tasks suspending; distinct priorities; U ≤ 0.7 per CPU; one CPU, or two
/// with random `cpu` fields. Chains [h, a, j(, k)] and [h, b, j]. Returns (set, FP scheduler,
/// EDF scheduler).
fn join_set(seed: u64) -> (TaskSet, &'static str, &'static str) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cpus = if rng.random_bool(0.3) { 2 } else { 1 };
    let t = [5, 10, 20][rng.random_range(0..3)] * MS;
    let with_k = rng.random_bool(0.5);
    let mut names = vec!["h", "a", "b", "j"];
    if with_k {
        names.push("k");
    }
    let extra = rng.random_range(0..=2usize);
    names.extend(["x0", "x1"].iter().take(extra));
    let n = names.len();
    let period: Vec<Time> = (0..n)
        .map(|i| match names[i] {
            "x0" | "x1" => [5, 10, 20][rng.random_range(0..3)] * MS,
            _ => t,
        })
        .collect();
    let cpu: Vec<u32> = (0..n).map(|_| rng.random_range(0..cpus)).collect();
    let mut c: Vec<Time> = (0..n)
        .map(|i| rng.random_range(100 * US..=period[i] / 4))
        .collect();
    let susp: Vec<Option<Time>> = (0..n)
        .map(|i| {
            rng.random_bool(0.25)
                .then(|| rng.random_range(100 * US..=period[i] / 5))
        })
        .collect();
    for k in 0..cpus {
        while (0..n)
            .filter(|&i| cpu[i] == k)
            .map(|i| c[i] as f64 / period[i] as f64)
            .sum::<f64>()
            > 0.7
        {
            (0..n)
                .filter(|&i| cpu[i] == k)
                .for_each(|i| c[i] = (c[i] / 2).max(2 * US));
        }
    }
    let mut prio: Vec<u32> = (1..=n as u32).collect();
    for i in (1..n).rev() {
        prio.swap(i, rng.random_range(0..=i));
    }
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 400ms}}\ntasks:\n");
    for i in 0..n {
        let arrival = match names[i] {
            "a" | "b" => format!("trigger: h, deadline: {}us", t / US),
            "j" => format!("trigger: {{all: [a, b]}}, deadline: {}us", t / US),
            "k" => format!("trigger: j, deadline: {}us", t / US),
            _ => format!("period: {}us", period[i] / US),
        };
        let body = match susp[i] {
            Some(s) if c[i] >= 2 * US => {
                let a = c[i] / 2;
                format!(
                    "segments: [{}ns, {{suspend: {}us}}, {}ns]",
                    a,
                    s / US,
                    c[i] - a
                )
            }
            _ => format!("wcet: {}ns", c[i]),
        };
        let place = if cpus > 1 {
            format!(", cpu: {}", cpu[i])
        } else {
            String::new()
        };
        y += &format!(
            "  - {{name: {}, {arrival}, {body}, priority: {}{place}}}\n",
            names[i], prio[i]
        );
    }
    let tail = if with_k { ", k" } else { "" };
    y += &format!(
        "chains:\n  - {{name: haj, tasks: [h, a, j{tail}]}}\n  - {{name: hbj, tasks: [h, b, j]}}\n"
    );
    let ts = parse_taskset(&y, Format::Yaml, "join.yaml").unwrap_or_else(|e| panic!("{e}\n{y}"));
    match cpus {
        1 => (ts, "gfp:file", "gedf"),
        _ => (ts, "pfp:file", "pedf"),
    }
}

/// The join case of `seed` under FP (`edf` false) or EDF, with `weaken` applied to the nodes
/// before the analysis.
fn join_case(
    seed: u64,
    edf: bool,
    weaken: impl Fn(&mut Vec<holistic::Node>),
) -> Option<(TaskSet, RunResult, Responses)> {
    let (ts, fp, edf_spec) = join_set(seed);
    let s = Subject::whole(&ts);
    let prio = s.priorities(Priorities::File)?;
    let mut n = nodes(&s, &prio).ok()?;
    weaken(&mut n);
    let r = if edf {
        holistic_edf::analyse(&n).ok()?
    } else {
        analyse(&n, Suspension::Jitter).ok()?
    };
    let sim = run(&ts, if edf { edf_spec } else { fp });
    Some((ts, sim, r))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Joins: under FP and EDF, no job's response and no chain's latency through the join
    /// exceeds its bound.
    #[test]
    fn joins_are_bounded(seed in any::<u64>()) {
        for edf in [false, true] {
            let Some((ts, sim, r)) = join_case(seed, edf, |_| {}) else { continue };
            let c = compare(&ts, &sim, &r);
            for (k, (s, b)) in c.responses.iter().enumerate() {
                prop_assert!(s <= b, "edf {edf}: task {k}: simulated {s} > bound {b}\n{ts:?}");
            }
            for (s, b) in &c.latencies {
                prop_assert!(s <= b, "edf {edf}: latency {s} > bound {b}\n{ts:?}");
            }
        }
    }
}

/// Negative control of the joins: the join read as triggered by its first trigger alone (b's
/// finish dropped from its release) is refuted by some seed, under FP; most seeds are
/// analysed (joins in step; 52 of 60 under FP, 30 under EDF when this was written).
#[test]
fn a_join_read_as_its_first_trigger_is_refuted() {
    for edf in [false, true] {
        let analysed = (0..30)
            .filter(|&s| join_case(s, edf, |_| {}).is_some())
            .count();
        // EDF's bounds, without the offsets, put more joins out of step: about half analysed.
        let least = if edf { 10 } else { 20 };
        eprintln!("edf {edf}: {analysed} of 30 join seeds analysed");
        assert!(
            analysed >= least,
            "edf {edf}: only {analysed} of 30 seeds analysed"
        );
    }
    let first_only = |n: &mut Vec<holistic::Node>| {
        for x in n.iter_mut() {
            x.triggers.truncate(1);
        }
    };
    let found = (0..100u64).find(|&seed| {
        join_case(seed, false, first_only).is_some_and(|(ts, sim, r)| {
            let c = compare(&ts, &sim, &r);
            c.responses.iter().chain(&c.latencies).any(|(s, b)| s > b)
        })
    });
    assert!(found.is_some(), "b's finish never mattered on 100 seeds");
    eprintln!("join read as its first trigger: refuted by seed {found:?}");
}

/// A set from `seed` whose lowest-priority task l has several jobs in its level-i window, as in
/// Lehoczky's example of arbitrary deadlines (RTSS 1990: C 26, T 70 above C 62, T 100, whose
/// third job responds later than its first), scaled to ms and with a suspension: h (T 7 ms,
/// C 2.0–2.6 ms) above l (T 10 ms, D 40 ms, two run segments of 2.3–2.9 ms around a 0.1–0.6
/// ms suspension), one CPU.
fn long_suspension_set(seed: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let c = rng.random_range(2000..=2600);
    let (a, b) = (rng.random_range(2300..=2900), rng.random_range(2300..=2900));
    let s = rng.random_range(100..=600);
    let y = format!(
        "platform: {{cpus: 1}}\nrun: {{duration: 400ms}}\ntasks:\n  - {{name: h, period: 7ms, wcet: {c}us, priority: 2}}\n  - {{name: l, period: 10ms, deadline: 40ms, segments: [{a}us, {{suspend: {s}us}}, {b}us], priority: 1}}\n"
    );
    parse_taskset(&y, Format::Yaml, "susp.yaml").unwrap_or_else(|e| panic!("{e}\n{y}"))
}

/// A suspending task whose window holds several of its jobs is bounded (the q-job
/// iteration), under either suspension analysis; most seeds have R_l > T_l (such a window);
/// the control — each task's first job of its window alone — is refuted by some seed.
#[test]
fn suspending_windows_of_several_jobs_are_bounded() {
    let (mut several, mut refuted) = (0, None);
    for seed in 0..60u64 {
        let ts = long_suspension_set(seed);
        let sim = run(&ts, "gfp:file");
        let s = Subject::whole(&ts);
        let n = nodes(&s, &s.priorities(Priorities::File).unwrap()).unwrap();
        for mode in [Suspension::Jitter, Suspension::Oblivious] {
            let Ok(r) = analyse(&n, mode) else { continue };
            let c = compare(&ts, &sim, &r);
            for (k, (s, b)) in c.responses.iter().enumerate() {
                assert!(s <= b, "{mode:?}: seed {seed}: task {k}: {s} > {b}\n{ts:?}");
            }
            several += usize::from(mode == Suspension::Jitter && r.own[n.len() - 1] > 10 * MS);
        }
        if refuted.is_none() {
            let weak = holistic::analyse_first_job_only(&n).unwrap();
            if compare(&ts, &sim, &weak)
                .responses
                .iter()
                .any(|(s, b)| s > b)
            {
                refuted = Some(seed);
            }
        }
    }
    assert!(several >= 20, "only {several} of 60 seeds have R_l > T_l");
    assert!(
        refuted.is_some(),
        "the later jobs never mattered on 60 seeds"
    );
    eprintln!("several-job windows: {several} of 60; first job only refuted by seed {refuted:?}");
}

/// A random set with a join across transactions from `seed`: heads h (T in 5, 7, 10, 13,
/// 20 ms) and g (another such period), a triggered by h, b by g, j joining a and b, sometimes
/// k after j; 0–2 periodic interferers; a fifth of the tasks suspending, or in two sets of
/// five every WCET a tenth (light: the wait for the other trigger then dominates a chain's
/// latency); distinct priorities; U ≤ 0.6 per CPU; one CPU, or two with random `cpu` fields. Chains [h, a, j(, k)] and
/// [g, b, j(, k)]. Returns (set, FP scheduler, EDF scheduler).
fn across_set(seed: u64) -> (TaskSet, &'static str, &'static str) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cpus = if rng.random_bool(0.3) { 2 } else { 1 };
    let mut pick = || [5, 7, 10, 13, 20][rng.random_range(0..5)] * MS;
    let (th, tg) = (pick(), pick());
    let mut names = vec!["h", "g", "a", "b", "j"];
    if rng.random_bool(0.5) {
        names.push("k");
    }
    names.extend(["x0", "x1"].iter().take(rng.random_range(0..=2usize)));
    let n = names.len();
    let period: Vec<Time> = (0..n)
        .map(|i| match names[i] {
            "h" | "a" => th,
            "g" | "b" => tg,
            "j" | "k" => th.max(tg),
            _ => [5, 10, 20][rng.random_range(0..3)] * MS,
        })
        .collect();
    let cpu: Vec<u32> = (0..n).map(|_| rng.random_range(0..cpus)).collect();
    let mut c: Vec<Time> = (0..n)
        .map(|i| rng.random_range(100 * US..=period[i] / 5))
        .collect();
    let light = rng.random_bool(0.4);
    if light {
        c.iter_mut().for_each(|x| *x = (*x / 10).max(20 * US));
    }
    let susp: Vec<Option<Time>> = (0..n)
        .map(|i| {
            (!light && rng.random_bool(0.2)).then(|| rng.random_range(100 * US..=period[i] / 6))
        })
        .collect();
    for k in 0..cpus {
        let u = |c: &[Time]| -> f64 {
            (0..n)
                .filter(|&i| cpu[i] == k)
                .map(|i| (c[i] + susp[i].unwrap_or(0)) as f64 / period[i] as f64)
                .sum()
        };
        while u(&c) > 0.6 {
            (0..n)
                .filter(|&i| cpu[i] == k)
                .for_each(|i| c[i] = (c[i] / 2).max(20 * US));
        }
    }
    let mut prio: Vec<u32> = (1..=n as u32).collect();
    for i in (1..n).rev() {
        prio.swap(i, rng.random_range(0..=i));
    }
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 400ms}}\ntasks:\n");
    for i in 0..n {
        let arrival = match names[i] {
            "a" => format!("trigger: h, deadline: {}us", period[i] / US),
            "b" => format!("trigger: g, deadline: {}us", period[i] / US),
            "j" => format!("trigger: {{all: [a, b]}}, deadline: {}us", period[i] / US),
            "k" => format!("trigger: j, deadline: {}us", period[i] / US),
            _ => format!("period: {}us", period[i] / US),
        };
        let body = match susp[i] {
            Some(s) => format!(
                "segments: [{}ns, {{suspend: {}us}}, {}ns]",
                c[i] / 2,
                s / US,
                c[i] - c[i] / 2
            ),
            None => format!("wcet: {}ns", c[i]),
        };
        let place = match cpus {
            1 => String::new(),
            _ => format!(", cpu: {}", cpu[i]),
        };
        y += &format!(
            "  - {{name: {}, {arrival}, {body}, priority: {}{place}}}\n",
            names[i], prio[i]
        );
    }
    let tail = if names.contains(&"k") { ", k" } else { "" };
    y += &format!("chains:\n  - {{name: haj, tasks: [h, a, j{tail}]}}\n  - {{name: gbj, tasks: [g, b, j{tail}]}}\n");
    let ts = parse_taskset(&y, Format::Yaml, "across.yaml").unwrap_or_else(|e| panic!("{e}\n{y}"));
    match cpus {
        1 => (ts, "gfp:file", "gedf"),
        _ => (ts, "pfp:file", "pedf"),
    }
}

/// The case of `seed` under FP (`edf` false) or EDF: the set, the simulated run, its nodes and
/// responses.
fn across_case(
    seed: u64,
    edf: bool,
) -> Option<(TaskSet, RunResult, Vec<holistic::Node>, Responses)> {
    let (ts, fp, edf_spec) = across_set(seed);
    let s = Subject::whole(&ts);
    let n = nodes(&s, &s.priorities(Priorities::File)?).ok()?;
    let r = match edf {
        true => holistic_edf::analyse(&n).ok()?,
        false => analyse(&n, Suspension::Jitter).ok()?,
    };
    let sim = run(&ts, if edf { edf_spec } else { fp });
    Some((ts, sim, n, r))
}

/// (simulated, bound) of every task's response and every chain's latency.
fn across_pairs(
    ts: &TaskSet,
    sim: &RunResult,
    n: &[holistic::Node],
    r: &Responses,
) -> Vec<(Time, Time)> {
    let resp = max_response(ts, sim);
    let chains = max_chain(ts, sim);
    let mut out: Vec<(Time, Time)> = resp.into_iter().zip(r.own.iter().copied()).collect();
    for (k, c) in ts.chains.iter().enumerate() {
        let b = holistic::chain_latency(ts, n, c, r);
        out.extend(chains[k][0].map(|l| (l, b)));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Joins across transactions (`holistic.rs` point 5): under FP and EDF, no job's response
    /// and no chain's latency through the join exceeds its bound.
    #[test]
    fn joins_across_transactions_are_bounded(seed in any::<u64>()) {
        for edf in [false, true] {
            let Some((ts, sim, n, r)) = across_case(seed, edf) else { continue };
            prop_assert!(n.iter().any(|x| !x.joined.is_empty()));
            for (s, b) in across_pairs(&ts, &sim, &n, &r) {
                prop_assert!(s <= b, "edf {edf}: simulated {s} > bound {b}\n{ts:?}");
            }
        }
    }
}

/// Most seeds with a join across transactions are analysed, and the control — the wait for
/// the other trigger dropped: the join read as released by the chain's trigger alone (a task
/// of that trigger's transaction, `trigger: A`), each chain by its own such analysis — is
/// refuted by some seed under FP and under EDF.
#[test]
fn a_join_across_transactions_without_the_wait_is_refuted() {
    for edf in [false, true] {
        let analysed = (0..40).filter(|&s| across_case(s, edf).is_some()).count();
        assert!(
            analysed >= 24,
            "edf {edf}: only {analysed} of 40 seeds analysed"
        );
        let found = (0..200u64).find(|&seed| {
            let Some((ts, sim, n, _)) = across_case(seed, edf) else {
                return false;
            };
            let chains = max_chain(&ts, &sim);
            ts.chains.iter().enumerate().any(|(k, c)| {
                let mut alone = n.clone();
                let (a, j) = (c.tasks[1] as usize, c.tasks[2] as usize);
                alone[j].joined.clear();
                alone[j].triggers = vec![a];
                let r = match edf {
                    true => holistic_edf::analyse(&alone),
                    false => analyse(&alone, Suspension::Jitter),
                };
                r.is_ok_and(|r| {
                    let b = holistic::chain_latency(&ts, &alone, c, &r);
                    chains[k][0].is_some_and(|l| l > b)
                })
            })
        });
        assert!(
            found.is_some(),
            "edf {edf}: the wait never mattered on 200 seeds"
        );
        eprintln!(
            "edf {edf}: {analysed} of 40 analysed; the wait dropped refuted by seed {found:?}"
        );
    }
}
