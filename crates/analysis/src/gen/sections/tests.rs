//! The section generator's promises (sections.rs overview): the model's distributions, sections
//! within the WCET and never nested, determinism, and the tasks untouched by the sections.

use super::super::{by_name, Generated, Params};
use super::*;
use proptest::prelude::*;

fn gen(name: &str, params: &str, seed: u64) -> Result<Generated, String> {
    by_name(name, &Params::parse(params).unwrap(), seed)
}

/// Every section of `g`: in its task's thread 0, after the previous one ends (not nested, in
/// order), within the WCET, of a declared resource.
fn check_placement(g: &Generated, resources: usize) -> Result<(), TestCaseError> {
    prop_assert_eq!(g.taskset.resources.len(), resources);
    for t in &g.taskset.tasks {
        let mut end = 0;
        for s in &t.sections {
            prop_assert_eq!((s.region, s.thread), (0, 0));
            prop_assert!(
                s.length > 0 && s.start >= end,
                "{}: {:?}",
                t.name,
                t.sections
            );
            end = s.end();
            prop_assert!(
                end <= t.wcet,
                "{}: a section ends at {end} > C = {}",
                t.name,
                t.wcet
            );
            prop_assert!((s.resource as usize) < resources);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Within the WCET and not nested, every length in its range (or cut to what was left,
    /// then the last section of its job, ending at the WCET), every (task, resource) with 0
    /// or N in nreq's range requests; the same seed gives the same set, and the tasks are
    /// those of the same seed without sections.
    #[test]
    fn sections_follow_the_model(seed: u64, which in 0usize..3, n_r in 1u32..6, p_tenths in 0u32..=10,
                                 lo in 1u32..4, extra in 0u32..3, long: bool) {
        let name = ["uunifast-discard", "randfixedsum", "uunifast"][which];
        let u = if name == "uunifast" { 0.9 } else { 2.5 };
        let (csl, range) = if long { ("long", (5_000, 1_280_000)) } else { ("20us..200us", (20_000, 200_000)) };
        let base = format!("n=10,U={u},m=4,tmin=1ms,tmax=20ms");
        let p = format!("{base},resources={n_r},p_acc={},nreq={lo}..{},csl={csl},protocol=pcp", p_tenths as f64 / 10.0, lo + extra);
        let g = gen(name, &p, seed).unwrap();
        check_placement(&g, n_r as usize)?;
        prop_assert_eq!(g.taskset.run.locking, Protocol::Pcp);
        for t in &g.taskset.tasks {
            for (k, s) in t.sections.iter().enumerate() {
                let cut = k + 1 == t.sections.len() && s.end() == t.wcet;
                prop_assert!(s.length <= range.1 && (s.length >= range.0 || cut), "{}: {:?}", t.name, s);
            }
            for r in 0..n_r {
                let count = t.sections.iter().filter(|s| s.resource == r).count() as u32;
                let whole = t.sections.iter().map(|s| s.length).sum::<Time>() < t.wcet;
                prop_assert!(count == 0 || count <= lo + extra, "{}: {count} requests of r{r}", t.name);
                if whole { prop_assert!(count == 0 || count >= lo, "{}: {count} requests of r{r}", t.name); }
            }
            prop_assert!(t.priority.is_some());
        }
        if p_tenths == 0 { prop_assert!(g.taskset.tasks.iter().all(|t| t.sections.is_empty())); }
        // Deterministic, and the tasks as drawn without sections.
        prop_assert_eq!(&g, &gen(name, &p, seed).unwrap());
        let plain = gen(name, &base, seed).unwrap();
        prop_assert_eq!(&g.utilisations, &plain.utilisations);
        for (a, b) in g.taskset.tasks.iter().zip(&plain.taskset.tasks) {
            prop_assert_eq!((a.period, a.wcet, a.deadline, &a.name), (b.period, b.wcet, b.deadline, &b.name));
        }
    }
}

/// p_acc is the fraction of (task, resource) pairs accessed, and the lengths are uniform in
/// their range: 400 tasks × 5 resources (2,000 pairs, 3 standard deviations ≈ 0.03).
#[test]
fn access_probability_and_lengths_are_as_asked() {
    let g = gen(
        "randfixedsum",
        "n=400,U=40,m=64,tmin=10ms,tmax=100ms,resources=5,p_acc=0.3,nreq=2..2,csl=short",
        7,
    )
    .unwrap();
    let pairs = g.taskset.tasks.len() * 5;
    let accessed: usize = g
        .taskset
        .tasks
        .iter()
        .map(|t| {
            (0..5)
                .filter(|&r| t.sections.iter().any(|s| s.resource == r))
                .count()
        })
        .sum();
    let share = accessed as f64 / pairs as f64;
    assert!((share - 0.3).abs() < 0.03, "accessed share {share}");
    let lengths: Vec<Time> = g
        .taskset
        .tasks
        .iter()
        .flat_map(|t| t.sections.iter().map(|s| s.length))
        .collect();
    // Two requests per accessed resource where nothing was cut (C >= 5 x 2 x 15 us).
    for t in g.taskset.tasks.iter().filter(|t| t.wcet >= 150 * NS_PER_US) {
        for r in 0..5 {
            let k = t.sections.iter().filter(|s| s.resource == r).count();
            assert!(k == 0 || k == 2, "{}: {k} requests of r{r}", t.name);
        }
    }
    assert!(lengths
        .iter()
        .all(|&l| (NS_PER_US..=15 * NS_PER_US).contains(&l)));
    let mean = lengths.iter().sum::<Time>() as f64 / lengths.len() as f64 / NS_PER_US as f64;
    assert!(
        (mean - 8.0).abs() < 0.5,
        "mean length {mean} us, uniform 1-15 us has 8"
    );
}

/// A section drawn longer than what is left of the WCET is cut to it, and one with nothing
/// left is dropped: 1 ms sections in tasks of C ≈ 0.1 ms.
#[test]
fn sections_are_cut_to_the_wcet() {
    let g = gen(
        "uunifast-discard",
        "n=8,U=0.08,tmin=1ms,tmax=2ms,resources=3,p_acc=1,nreq=3,csl=1ms..1ms",
        3,
    )
    .unwrap();
    for t in &g.taskset.tasks {
        assert_eq!(t.sections.len(), 1, "{}: {:?}", t.name, t.sections);
        assert_eq!((t.sections[0].start, t.sections[0].length), (0, t.wcet));
    }
}

#[test]
fn sections_change_with_the_seed_and_survive_the_yaml_round_trip() {
    let p = "n=6,U=0.8,resources=2,p_acc=0.5,nreq=1..3,csl=medium,protocol=srp";
    let a = gen("uunifast", p, 1).unwrap();
    let b = gen("uunifast", p, 2).unwrap();
    assert_ne!(a.taskset.tasks, b.taskset.tasks);
    let text = rtsched_model::file::to_yaml(&a.taskset);
    let back = rtsched_model::parse_taskset(&text, rtsched_model::Format::Yaml, "x.yaml").unwrap();
    assert_eq!(back.tasks, a.taskset.tasks);
    assert_eq!(back.resources, a.taskset.resources);
    assert_eq!(back.run.locking, Protocol::Srp);
    let none = gen("uunifast", &format!("{p},prio=none"), 1).unwrap();
    assert!(none.taskset.tasks.iter().all(|t| t.priority.is_none()));
}

#[test]
fn bad_section_parameters_are_named() {
    let base = "n=4,U=0.5";
    for (extra, says) in [
        (
            "p_acc=0.3",
            "parameter p_acc: critical sections need resources=N",
        ),
        ("resources=2,p_acc=1.5", "parameter p_acc=1.5"),
        ("resources=2,nreq=0", "parameter nreq=0"),
        ("resources=2,nreq=3..2", "parameter nreq=3..2"),
        ("resources=2,nreq=x", "parameter nreq=x"),
        (
            "resources=2,csl=huge",
            "parameter csl=huge: expected short (1-15us)",
        ),
        (
            "resources=2,csl=5us..1us",
            "parameter csl=5us..1us: expected 0 < A <= B",
        ),
        ("resources=2,csl=0..1us", "parameter csl=0..1us"),
        (
            "resources=2,protocol=foo",
            "parameter protocol=foo: known protocols: none, pip",
        ),
        ("resources=2,prio=dm", "parameter prio=dm"),
        ("resources=x", "parameter resources=x"),
        ("resources=5000", "parameter resources=5000"),
    ] {
        let e = gen("uunifast", &format!("{base},{extra}"), 1).unwrap_err();
        assert!(e.contains(says), "{extra}: {e}");
    }
    // resources=0 is no sections, the set as without.
    assert_eq!(
        gen("uunifast", &format!("{base},resources=0"), 1)
            .unwrap()
            .taskset
            .tasks,
        gen("uunifast", base, 1).unwrap().taskset.tasks
    );
    // Generators that draw their own structure do not take them.
    assert!(gen("lelli2011", "resources=2", 1)
        .unwrap_err()
        .contains("no parameter 'resources'"));
}

/// `place=wf` gives every task the CPU of worst fit on load (decreasing utilisation); without
/// it no task has one.
#[test]
fn place_wf_gives_the_worst_fit_cpus() {
    let p = "n=8,m=2,U=1.2,resources=2,p_acc=0.5";
    let g = gen("randfixedsum", &format!("{p},place=wf"), 4).unwrap();
    let cpus: Vec<u32> = g.taskset.tasks.iter().map(|t| t.cpu.unwrap()).collect();
    assert_eq!(cpus, crate::gen::papers::worst_fit_load(&g.utilisations, 2));
    assert!(cpus.contains(&0) && cpus.contains(&1));
    let mut load = [0.0; 2];
    for (u, &c) in g.utilisations.iter().zip(&cpus) {
        load[c as usize] += u;
    }
    assert!((load[0] - load[1]).abs() <= g.utilisations.iter().cloned().fold(0.0, f64::max));
    let unplaced = gen("randfixedsum", p, 4).unwrap();
    assert!(unplaced.taskset.tasks.iter().all(|t| t.cpu.is_none()));
    assert!(gen("randfixedsum", &format!("{p},place=ffd"), 4)
        .unwrap_err()
        .contains("parameter place=ffd"));
}
