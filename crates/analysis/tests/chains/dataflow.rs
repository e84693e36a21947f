//! Data-flow chain bounds against the simulator (a module of chains_vs_sim, no binary of its
//! own): Dürr et al.'s implicit bounds (`durr.rs`) and the LET sum for sporadic tasks
//! (`let_sporadic.rs`), on seeded sets of 3–5 periodic or sporadic tasks with random offsets,
//! priorities and suspensions, one CPU under `gfp:file` or two under `pfp:file`:
//! - no simulated data age or reaction time exceeds the bounds, and Dürr's is never above
//!   Davare's;
//! - controls, each refuted by some seed: Dürr's lower-priority case credited on every hop
//!   (whatever the priorities and CPUs); the LET sum with the minimum inter-arrival in place
//!   of the maximum.

use super::*;
use rtsched_analysis::schedulability::let_sporadic;

/// A random set from `seed`: 3–5 tasks (T in 2, 5, 10, 20 ms; offsets in [0, T) on half the
/// seeds; sporadic, inter-arrival up to 2T, on half the seeds for a third of the tasks),
/// distinct priorities, a fifth self-suspending, U ≤ 0.7 per CPU, one CPU or two; two
/// implicit chains and a LET chain of 2–4 distinct tasks.
fn dataflow_set(seed: u64) -> (TaskSet, &'static str) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(3..=5usize);
    let cpus = if rng.random_bool(0.3) { 2 } else { 1 };
    let (offsets, sporadic) = (rng.random_bool(0.5), rng.random_bool(0.5));
    let mut prio: Vec<u32> = (1..=n as u32).collect();
    for i in (1..n).rev() {
        prio.swap(i, rng.random_range(0..=i));
    }
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 400ms}}\ntasks:\n");
    let period: Vec<Time> = (0..n)
        .map(|_| [2, 5, 10, 20][rng.random_range(0..4)] * MS)
        .collect();
    let cpu: Vec<u32> = (0..n).map(|_| rng.random_range(0..cpus)).collect();
    // Each CPU's share of 0.7, split at random among its tasks.
    for i in 0..n {
        let on_cpu = cpu.iter().filter(|&&c| c == cpu[i]).count() as f64;
        let u = 0.7 / on_cpu * rng.random_range(0.3..=1.0);
        let c = ((period[i] as f64 * u) as Time / US).max(4) * US;
        let body = if rng.random_bool(0.2) {
            let a = c / 2;
            let s = rng.random_range(100 * US..=period[i] / 5) / US * US;
            format!(
                "segments: [{}us, {{suspend: {}us}}, {}us]",
                a / US,
                s / US,
                (c - a) / US
            )
        } else {
            format!("wcet: {}us", c / US)
        };
        let arrival = if sporadic && rng.random_bool(0.35) {
            let max = rng.random_range(period[i]..=2 * period[i]) / US;
            format!(
                "min_interarrival: {}us, max_interarrival: {max}us",
                period[i] / US
            )
        } else {
            format!("period: {}us", period[i] / US)
        };
        let offset = if offsets {
            rng.random_range(0..period[i]) / (500 * US) * 500
        } else {
            0
        };
        let place = if cpus > 1 {
            format!(", cpu: {}", cpu[i])
        } else {
            String::new()
        };
        y += &format!(
            "  - {{name: t{i}, {arrival}, offset: {offset}us, {body}, priority: {}{place}}}\n",
            prio[i]
        );
    }
    y += "chains:\n";
    for (k, comm) in ["implicit", "implicit", "let"].iter().enumerate() {
        let len = rng.random_range(2..=n.min(4));
        let mut pick: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            pick.swap(i, rng.random_range(0..=i));
        }
        let names: Vec<String> = pick[..len].iter().map(|i| format!("t{i}")).collect();
        y += &format!(
            "  - {{name: c{k}, tasks: [{}], communication: {comm}}}\n",
            names.join(", ")
        );
    }
    let ts =
        parse_taskset(&y, Format::Yaml, "dataflow.yaml").unwrap_or_else(|e| panic!("{e}\n{y}"));
    (ts, if cpus > 1 { "pfp:file" } else { "gfp:file" })
}

/// Per chain: the simulated maxima of latency, data age and reaction time.
type Maxima = [Option<Time>; 3];
/// (set, simulated maxima per chain, responses, file priorities).
type DataflowCase = (TaskSet, Vec<Maxima>, Responses, Vec<u32>);
/// A weakened bound's (simulated, bound) pairs on a case.
type Weakened<'a> = &'a dyn Fn(&TaskSet, &[Maxima], &Responses) -> Vec<(Time, Time)>;

/// The case of `seed`, or None when unanalysed.
fn dataflow_case(seed: u64) -> Option<DataflowCase> {
    let (ts, spec) = dataflow_set(seed);
    let r = responses(&ts, Suspension::Jitter)?;
    let prio = Subject::whole(&ts).priorities(Priorities::File)?;
    let sim = run(&ts, spec);
    Some((ts.clone(), max_chain(&ts, &sim), r, prio))
}

/// Per chain of `ts`: (simulated data age, bound), (simulated reaction time, bound) from
/// `bound` (None: the chain is not of the kind it bounds).
fn pairs(
    ts: &TaskSet,
    sim: &[Maxima],
    bound: impl Fn(&rtsched_model::Chain) -> Option<(Time, Time)>,
) -> Vec<(Time, Time)> {
    let mut out = Vec::new();
    for (k, c) in ts.chains.iter().enumerate() {
        if let Some((age, reaction)) = bound(c) {
            out.extend(sim[k][1].map(|s| (s, age)));
            out.extend(sim[k][2].map(|s| (s, reaction)));
        }
    }
    out
}

fn is(c: &rtsched_model::Chain, comm: Communication) -> bool {
    c.communication == Some(comm)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Dürr's bounds hold against the simulator and are never above Davare's; the LET sum holds.
    #[test]
    fn no_dataflow_bound_is_below_the_simulation(seed in any::<u64>()) {
        let Some((ts, sim, r, prio)) = dataflow_case(seed) else { return Ok(()) };
        for (k, c) in ts.chains.iter().enumerate() {
            let (got, davare) = if is(c, Communication::Implicit) {
                (durr::bounds(&ts, c, &r, &prio), Some(dataflow::bounds(&ts, c, &r)))
            } else {
                (let_sporadic::bounds(&ts, c), None)
            };
            prop_assert!(sim[k][1].is_none_or(|s| s <= got.0), "{}: data age {:?} > {got:?}\n{ts:?}", c.name, sim[k]);
            prop_assert!(sim[k][2].is_none_or(|s| s <= got.1), "{}: reaction {:?} > {got:?}\n{ts:?}", c.name, sim[k]);
            if let Some(d) = davare {
                prop_assert!(got.0 <= d.0 && got.1 <= d.1, "Dürr {got:?} above Davare {d:?}");
            }
        }
    }
}

/// Negative controls, and the property is not vacuous (most seeds analysed, Dürr below
/// Davare on some).
#[test]
fn weakened_dataflow_bounds_are_refuted() {
    let cases: Vec<_> = (0..120).filter_map(dataflow_case).collect();
    assert!(
        cases.len() >= 90,
        "only {} of 120 seeds analysed",
        cases.len()
    );
    let tighter = cases.iter().any(|(ts, _, r, prio)| {
        ts.chains.iter().any(|c| {
            is(c, Communication::Implicit)
                && durr::bounds(ts, c, r, prio) != dataflow::bounds(ts, c, r)
        })
    });
    assert!(tighter, "Dürr never below Davare");
    let refutes = |f: Weakened<'_>| {
        cases
            .iter()
            .position(|(ts, sim, r, _)| f(ts, sim, r).iter().any(|(s, b)| s > b))
    };
    // Dürr's lower-priority case credited on every hop.
    let everywhere = refutes(&|ts, sim, r| {
        pairs(ts, sim, |c| {
            is(c, Communication::Implicit).then(|| durr::bounds_with(ts, c, r, |_, _| true))
        })
    });
    assert!(everywhere.is_some(), "the priority order never mattered");
    // The LET sum with the minimum inter-arrival.
    let minimum = refutes(&|ts, sim, _| {
        let mut periodic = ts.clone();
        periodic
            .tasks
            .iter_mut()
            .for_each(|t| t.max_interarrival = None);
        pairs(ts, sim, |c| {
            is(c, Communication::Let).then(|| let_sporadic::bounds(&periodic, c))
        })
    });
    assert!(
        minimum.is_some(),
        "the maximum inter-arrival never mattered"
    );
    eprintln!("refuting cases: credited everywhere {everywhere:?}, T min {minimum:?}");
}
