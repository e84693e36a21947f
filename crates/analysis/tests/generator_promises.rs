//! Every generator gives what it is asked for, or refuses (docs/generators.md, "What each
//! generator promises"). `rtsched gen uunifast n=8 m=4 U=3.5` used to write a set of U = 3.050
//! without a word: shares above 1 were clipped to C = T. Here every registered generator
//! (`gen::GENERATORS`: a new one without a case here fails `every_generator_is_held_to_a_promise`)
//! is drawn with random parameters, inside its domain and beyond it, and each draw either
//! refuses with an error naming a parameter or keeps the promise:
//!
//! - **A total** (`uunifast`, `uunifast-discard`, `randfixedsum`, `lelli2011` with U = R·m,
//!   `chronos2011`, `dag-nfj`, `dag-layered`, `ros2-tree`): the drawn utilisations sum to U (to 1e-9) and
//!   each lies in [u_min, u_max]; the written set's Σ C/T is U within what integer time allows.
//! - **A window** (`paws2013`: tasks added until Σu is in [U_min, U_max]; LWFG's MTT sets: a
//!   cap, cap − u_max < Σu ≤ cap; `waters2015` and `waters2015-chains`: Σ WCET/T in
//!   [U·(1 − tolerance), U], exact).
//!
//! **The tolerance, derived.** A period is a multiple of the granularity, and C is computed
//! from that rounded period: C_i = round(u_i·T_i) ns, raised to `least_i` (1 ns; a DAG task's
//! node count, each node running at least 1 ns). So |C_i − u_i·T_i| ≤ max(0.5, least_i −
//! u_i·T_i) ns (`gen::wcet_error_ns`), and |Σ C_i/T_i − Σ u_i| ≤ Σ that / T_i. Periods'
//! rounding moves no share: it happens before C is computed. Every task's C/T is checked
//! against its drawn u with that bound, then the sums.
//!
//! Cheap: a few hundred small sets per generator family, well under a second in all.

use proptest::prelude::*;
use rtsched_analysis::gen::{self, by_name, papers::Mtt, wcet_error_ns, Generated, Params};
use rtsched_model::Time;

/// What a draw must give when it is not refused.
#[derive(Clone, Debug)]
enum Promise {
    /// The drawn utilisations sum to `u`, each in [lo, hi]; `sequential`: every C ≤ T.
    Total {
        u: f64,
        lo: f64,
        hi: f64,
        sequential: bool,
    },
    /// The drawn utilisations' sum lies in [w_lo, w_hi] (`open_lo`: above w_lo), each in [lo, hi].
    Window {
        w_lo: f64,
        w_hi: f64,
        open_lo: bool,
        lo: f64,
        hi: f64,
    },
    /// The written Σ C/T itself lies in [w_lo, w_hi] (waters2015 draws whole-ns WCETs).
    Written { w_lo: f64, w_hi: f64 },
}

/// One draw: generator, parameters, what it promises, and whether it must not refuse (the
/// parameters are inside its domain).
#[derive(Clone, Debug)]
struct Case {
    name: &'static str,
    params: String,
    promise: Promise,
    feasible: bool,
}

/// How much of a value a float sum may lose: relative 1e-9.
fn eps(x: f64) -> f64 {
    1e-9 * x.abs().max(1.0)
}

/// Whether `g` keeps `p`; the error says how it does not.
fn keeps(g: &Generated, p: &Promise) -> Result<(), String> {
    let ts = &g.taskset;
    if ts.tasks.is_empty() || ts.tasks.len() != g.utilisations.len() {
        return Err(format!(
            "{} tasks, {} utilisations",
            ts.tasks.len(),
            g.utilisations.len()
        ));
    }
    let written = ts.utilization();
    let drawn: f64 = g.utilisations.iter().sum();
    // Σ over tasks of the most C_i/T_i may differ from u_i.
    let mut slack = 0.0;
    for (t, &u) in ts.tasks.iter().zip(&g.utilisations) {
        let least = t.dag.as_ref().map_or(1, |d| d.nodes.len() as Time);
        let bound = wcet_error_ns(u, t.period, least);
        let off = (t.wcet as f64 - u * t.period as f64).abs();
        if off > bound + 1e-6 {
            return Err(format!(
                "task {}: C = {} ns but u·T = {} ns (u = {u}, T = {}): off by {off} ns, more than the {bound} ns rounding allows",
                t.name,
                t.wcet,
                u * t.period as f64,
                t.period
            ));
        }
        slack += bound / t.period as f64;
    }
    let (lo, hi) = match *p {
        Promise::Total {
            u,
            lo,
            hi,
            sequential,
        } => {
            if (drawn - u).abs() > eps(u) {
                return Err(format!("drawn Σu = {drawn}, asked U = {u}"));
            }
            if (written - u).abs() > slack + eps(u) {
                return Err(format!(
                    "written Σ C/T = {written}, asked U = {u}: off by {}, more than the rounding bound {slack}",
                    (written - u).abs()
                ));
            }
            if sequential {
                if let Some(t) = ts.tasks.iter().find(|t| t.wcet > t.period) {
                    return Err(format!(
                        "task {}: C = {} > T = {}",
                        t.name, t.wcet, t.period
                    ));
                }
            }
            (lo, hi)
        }
        Promise::Window {
            w_lo,
            w_hi,
            open_lo,
            lo,
            hi,
        } => {
            let below = if open_lo {
                drawn <= w_lo
            } else {
                drawn < w_lo - eps(w_lo)
            };
            if below || drawn > w_hi + eps(w_hi) {
                return Err(format!(
                    "drawn Σu = {drawn} outside the window [{w_lo}, {w_hi}]"
                ));
            }
            if (written - drawn).abs() > slack + eps(drawn) {
                return Err(format!(
                    "written Σ C/T = {written}, drawn Σu = {drawn}: more than the rounding bound {slack} apart"
                ));
            }
            (lo, hi)
        }
        Promise::Written { w_lo, w_hi } => {
            if written < w_lo - eps(w_lo) || written > w_hi + eps(w_hi) {
                return Err(format!(
                    "written Σ C/T = {written} outside [{w_lo}, {w_hi}]"
                ));
            }
            if let Some(t) = ts.tasks.iter().find(|t| t.wcet > t.period) {
                return Err(format!(
                    "task {}: C = {} > T = {}",
                    t.name, t.wcet, t.period
                ));
            }
            (0.0, 1.0)
        }
    };
    if let Some(u) = g
        .utilisations
        .iter()
        .find(|&&u| u < lo - eps(lo) || u > hi + eps(hi))
    {
        return Err(format!("a share u = {u} outside [{lo}, {hi}]"));
    }
    // PAWS's threads are the task's C, exactly (a task file's reader requires it).
    for t in ts.tasks.iter().filter(|t| !t.regions.is_empty()) {
        let sum: Time = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
        if sum != t.wcet || t.regions.iter().flat_map(|r| &r.threads).any(|&w| w == 0) {
            return Err(format!(
                "task {}: threads sum to {sum}, C = {}",
                t.name, t.wcet
            ));
        }
    }
    Ok(())
}

/// Draw `c` with `seed`: a refusal of a case inside the domain, or a set that breaks its
/// promise, fails.
fn check(c: &Case, seed: u64) -> Result<(), TestCaseError> {
    match by_name(c.name, &Params::parse(&c.params).unwrap(), seed) {
        Ok(g) => keeps(&g, &c.promise).map_err(|e| {
            TestCaseError::fail(format!("{} {} (seed {seed}): {e}", c.name, c.params))
        }),
        Err(e) if c.feasible => Err(TestCaseError::fail(format!(
            "{} {} (seed {seed}) refused inside its domain: {e}",
            c.name, c.params
        ))),
        Err(e) => {
            prop_assert!(
                e.contains("parameter") || e.contains('='),
                "{} {}: a refusal must name the parameter: {e}",
                c.name,
                c.params
            );
            Ok(())
        }
    }
}

/// Periods and deadlines as the generic generators take them: periods from 1 µs to 1 s (the
/// shortest make the ns rounding matter), every distribution and granularity.
fn timing() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just(1_000u64),
            Just(20_000),
            Just(1_000_000),
            Just(10_000_000)
        ],
        1u64..=100,
        prop_oneof![Just("loguniform"), Just("uniform"), Just("harmonic")],
        prop_oneof![Just("1ns"), Just("1us"), Just("1ms")],
        any::<bool>(),
    )
        .prop_map(|(tmin, k, period, g, constrained)| {
            let d = if constrained {
                "deadline=constrained,f=0.3"
            } else {
                "deadline=implicit"
            };
            format!(
                "period={period},tmin={tmin}ns,tmax={}ns,granularity={g},{d}",
                tmin * k
            )
        })
}

/// `uunifast`: U from 0 to 3 — above 1 it must refuse (a share could exceed 1).
fn uunifast() -> impl Strategy<Value = Case> {
    (1usize..=12, 1u32..=4, 0.001f64..3.0, timing()).prop_map(|(n, m, u, t)| Case {
        name: "uunifast",
        params: format!("n={n},m={m},U={u},{t}"),
        promise: Promise::Total {
            u,
            lo: 0.0,
            hi: u.min(1.0),
            sequential: true,
        },
        feasible: u <= 1.0,
    })
}

/// `uunifast-discard` and `randfixedsum`: bounds up to 1.3 (above 1 refused), U anywhere in
/// [n·u_min, n·u_max]. UUniFast-Discard may give up on a thin domain (refusing, naming
/// randfixedsum), so only RandFixedSum's draws must succeed.
fn bounded() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just("uunifast-discard"), Just("randfixedsum")],
        1usize..=12,
        0.0f64..0.3,
        0.05f64..1.3,
        0.0f64..=1.0,
        timing(),
    )
        .prop_map(|(name, n, a, w, f, t)| {
            let (lo, hi) = (a, (a + w).min(1.3));
            let u = n as f64 * (lo + f * (hi - lo));
            Case {
                name,
                params: format!("n={n},m=4,U={u},u_min={lo},u_max={hi},{t}"),
                promise: Promise::Total {
                    u,
                    lo,
                    hi,
                    sequential: true,
                },
                feasible: name == "randfixedsum" && hi <= 1.0,
            }
        })
}

/// `dag-nfj`, `dag-layered`: u_max may exceed 1 (a task that needs several CPUs); the
/// tolerance of a task is a ns per node.
fn dags() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(("dag-nfj", "k=3,d=2")),
            Just(("dag-layered", "nodes=5..12,layers=2..3"))
        ],
        1usize..=6,
        0.05f64..2.0,
        0.0f64..=1.0,
        any::<bool>(),
        timing(),
    )
        .prop_map(|(name, n, hi, f, unifast, t)| {
            let u = n as f64 * f * hi;
            let util = if unifast {
                "util=uunifast".to_string()
            } else {
                format!("util=randfixedsum,u_max={hi}")
            };
            Case {
                name: name.0,
                params: format!("{},n={n},m=4,U={u},{util},{t}", name.1),
                promise: Promise::Total {
                    u,
                    lo: 0.0,
                    hi: if unifast { u } else { hi },
                    sequential: false,
                },
                feasible: true,
            }
        })
}

/// `lelli2011` (U = R·m) and `chronos2011` (U as asked, u ≤ 1; U above n refused).
fn papers_total() -> impl Strategy<Value = Case> {
    prop_oneof![
        (1u32..=8, 0.01f64..=1.0, 1u64..=4).prop_map(|(m, r, x)| Case {
            name: "lelli2011",
            params: format!("m={m},R={r},x={x}"),
            promise: Promise::Total {
                u: r * m as f64,
                lo: 0.0,
                hi: 1.0,
                sequential: true
            },
            feasible: true,
        }),
        (1u32..=4, 1usize..=24, 0.0f64..1.2, 0.0f64..=1.0).prop_map(|(m, n, f, p_join)| {
            let u = f * n as f64 * 0.8;
            Case {
                name: "ros2-tree",
                params: format!("m={m},n={n},U={u},u_max=0.8,p_join={p_join},timers=1"),
                promise: Promise::Total {
                    u,
                    lo: 0.0,
                    hi: 0.8,
                    sequential: true,
                },
                feasible: u <= n as f64 * 0.8,
            }
        }),
        (1u32..=8, 1usize..=24, 0.0f64..1.2).prop_map(|(m, n, f)| {
            let u = f * n as f64;
            Case {
                name: "chronos2011",
                params: format!("m={m},n={n},U={u}"),
                promise: Promise::Total {
                    u,
                    lo: 0.0,
                    hi: 1.0,
                    sequential: true,
                },
                feasible: u <= n as f64,
            }
        }),
    ]
}

/// PAWS §5's windows (fractions of m), as its Table 1 gives them.
const PAWS_WINDOWS: [(f64, f64); 4] = [(0.28, 0.30), (0.58, 0.60), (0.78, 0.80), (0.83, 0.85)];

/// `paws2013` (u_max up to 1.2: above 1 refused), LWFG's eight MTT sets, `waters2015`.
fn papers_window() -> impl Strategy<Value = Case> {
    prop_oneof![
        (1u32..=4, 1usize..=4, any::<bool>(), 0.4f64..1.2).prop_map(|(m, k, par, hi)| {
            let (a, b) = PAWS_WINDOWS[k - 1];
            Case {
                name: "paws2013",
                params: format!("m={m},window={k},parallel={},u_max={hi}", par as u8),
                promise: Promise::Window {
                    w_lo: a * m as f64,
                    w_hi: b * m as f64,
                    open_lo: false,
                    lo: 0.1,
                    hi,
                },
                feasible: hi <= 1.0,
            }
        }),
        (0usize..8, 1u32..=8, 0.0f64..=1.0).prop_map(|(d, m, f)| {
            let d = Mtt::TABLE_1[d];
            let cap = d.util.1 + f * (m as f64 - d.util.1);
            Case {
                name: d.name,
                params: format!("m={m},U={cap}"),
                promise: Promise::Window {
                    w_lo: cap - d.util.1,
                    w_hi: cap,
                    open_lo: true,
                    lo: d.util.0,
                    hi: d.util.1,
                },
                feasible: true,
            }
        }),
        (
            1u32..=4,
            0.25f64..=1.0,
            prop_oneof![Just(0.01), Just(0.05)],
            prop_oneof![Just("period"), Just("runnable")]
        )
            .prop_map(|(m, f, tol, tasks)| {
                let u = f * m as f64;
                Case {
                    name: "waters2015",
                    params: format!("m={m},U={u},tolerance={tol},tasks={tasks}"),
                    promise: Promise::Written {
                        w_lo: u * (1.0 - tol),
                        w_hi: u,
                    },
                    feasible: true,
                }
            }),
        (
            1u32..=2,
            0.25f64..=1.0,
            prop_oneof![Just("implicit"), Just("let")]
        )
            .prop_map(|(m, f, comm)| {
                let u = f * m as f64;
                Case {
                    name: "waters2015-chains",
                    params: format!("m={m},U={u},chains=1..3,communication={comm}"),
                    promise: Promise::Written {
                        w_lo: u * 0.99,
                        w_hi: u,
                    },
                    feasible: true,
                }
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn uunifast_gives_its_total_or_refuses(c in uunifast(), seed: u64) {
        check(&c, seed)?;
    }

    #[test]
    fn bounded_generators_give_their_total_within_the_bounds(c in bounded(), seed: u64) {
        check(&c, seed)?;
    }

    #[test]
    fn dag_generators_give_their_total(c in dags(), seed: u64) {
        check(&c, seed)?;
    }

    #[test]
    fn paper_generators_give_their_total(c in papers_total(), seed: u64) {
        check(&c, seed)?;
    }
}

proptest! {
    // Windows draw whole sets until one fits (waters2015: thousands of runnables at U = 4).
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn paper_generators_land_in_their_window(c in papers_window(), seed: u64) {
        check(&c, seed)?;
    }
}

/// The generators the strategies above draw: every registered one.
const COVERED: &[&str] = &[
    "uunifast",
    "uunifast-discard",
    "randfixedsum",
    "dag-nfj",
    "dag-layered",
    "lelli2011",
    "chronos2011",
    "paws2013",
    "mlu",
    "mmu",
    "mwl",
    "mwh",
    "mwlp",
    "mwhp",
    "mwlu",
    "mwhu",
    "waters2015",
    "waters2015-chains",
    "ros2-tree",
];

#[test]
fn every_generator_is_held_to_a_promise() {
    let mut registered = gen::names();
    registered.sort_unstable();
    let mut covered = COVERED.to_vec();
    covered.sort_unstable();
    assert_eq!(
        registered, covered,
        "a generator without a promise tested here"
    );
    for d in Mtt::TABLE_1 {
        assert!(COVERED.contains(&d.name), "{}", d.name);
    }
}

/// The case, by hand: UUniFast at U = 3.5 refuses and names both generators that
/// honour u_max; UUniFast-Discard gives 3.5 (written Σ C/T within 8 · 0.5 ns / 10 ms).
#[test]
fn uunifast_above_one_refuses_and_discard_gives_it() {
    let p = Params::parse("n=8,m=4,U=3.5").unwrap();
    let e = by_name("uunifast", &p, 2).unwrap_err();
    assert!(
        e.starts_with("parameter U=3.5")
            && e.contains("uunifast-discard")
            && e.contains("randfixedsum"),
        "{e}"
    );
    // U = 1 exactly is UUniFast's own domain.
    assert!(by_name("uunifast", &Params::parse("n=8,U=1").unwrap(), 2).is_ok());
    let g = by_name("uunifast-discard", &p, 2).unwrap();
    assert!((g.taskset.utilization() - 3.5).abs() <= 8.0 * 0.5 / 10e6);
    assert!(g.taskset.tasks.iter().all(|t| t.wcet <= t.period));
    for (name, params) in [
        ("randfixedsum", "n=8,U=3.5,u_max=1.5"),
        ("uunifast-discard", "n=8,U=3.5,u_max=1.01"),
        ("paws2013", "u_max=1.5"),
    ] {
        let e = by_name(name, &Params::parse(params).unwrap(), 1).unwrap_err();
        assert!(e.starts_with("parameter u_max="), "{name}: {e}");
    }
    let e = by_name("uunifast", &Params::parse("n=8,U=0.5,u_max=1").unwrap(), 1).unwrap_err();
    assert!(e.contains("uunifast takes no u_min/u_max"), "{e}");
}

/// The negative control of the promise checker: a set as `uunifast` wrote it before it refused
/// U > 1 (a share of 1.3 clipped to C = T, the set's Σ C/T at 3.2 for an asked 3.5) breaks the
/// promise, whether the clipped share is reported as drawn or as clipped, and so does the
/// share left unclipped (C > T); the same periods with every share at most 1 keep it.
#[test]
fn the_checker_refuses_what_uunifast_wrote_before() {
    let p = Params::parse("n=8,m=4,U=3.5").unwrap();
    let base = by_name("uunifast-discard", &p, 2).unwrap();
    let promise = Promise::Total {
        u: 3.5,
        lo: 0.0,
        hi: 1.0,
        sequential: true,
    };
    assert_eq!(keeps(&base, &promise), Ok(()));
    // `drawn`: the utilisations the generator reports; `c_of`: the WCET it writes from a share.
    let with = |drawn: [f64; 8], c_of: &dyn Fn(f64) -> f64| {
        let mut g = base.clone();
        g.utilisations = drawn.to_vec();
        for (t, &u) in g.taskset.tasks.iter_mut().zip(&drawn) {
            t.wcet = (c_of(u) * t.period as f64).round() as Time;
        }
        g
    };
    let fits = [0.9, 0.7, 0.5, 0.4, 0.4, 0.3, 0.2, 0.1];
    assert_eq!(keeps(&with(fits, &|u| u), &promise), Ok(()));
    let over = [1.3, 0.7, 0.5, 0.4, 0.3, 0.2, 0.05, 0.05];
    let clipped = |u: f64| u.min(1.0);
    let e = keeps(&with(over, &clipped), &promise).unwrap_err();
    assert!(e.starts_with("task t0: C = "), "{e}");
    let mut reported = over;
    reported[0] = 1.0;
    let e = keeps(&with(reported, &clipped), &promise).unwrap_err();
    assert!(
        e.starts_with("drawn Σu = 3.19") && e.ends_with("asked U = 3.5"),
        "{e}"
    );
    let e = keeps(&with(over, &|u| u), &promise).unwrap_err();
    assert!(e.starts_with("task t0: C = ") && e.contains("> T"), "{e}");
}
