//! The schedulability tests' registry walked over generated sets of every kind its predicates
//! tell apart (one CPU or several; sequential, fork-join and DAG tasks; critical sections or
//! none; implicit, constrained and arbitrary deadlines; priorities and `cpu` fields or none):
//! every test (each form of each entry of `ENTRIES`) applies to some set and refuses each of the
//! others with a reason that is true of that set, checked here from the task fields; each of
//! its predicate's restrictions refuses some set; `analyze` lists it exactly when it applies or
//! the set is outside its model, with the verdict or the reason; a sweep's `test:NAME` parses
//! to it and gives the same answer. The walk has teeth: a family of sets too narrow for a test,
//! and a registry with a test listed twice, are caught. And every `Entry` declared in
//! `schedulability/` is listed in `ENTRIES` (a test written but not listed was once missed by
//! sweeps).

use rtsched_analysis::gen;
use rtsched_analysis::schedulability::named::Named;
use rtsched_analysis::schedulability::registry::{
    self, BlockingReason, Cpus, Deadlines, Entry, Flow, Form, Reason, Sections, Tasks, Test,
};
use rtsched_analysis::schedulability::{analyze, ENTRIES};
use rtsched_model::{
    Chain, Communication, CriticalSection, Protocol, Region, Suspension, TaskSet, Trigger,
};
use std::collections::BTreeSet;

/// `ts` in every combination of the variations the predicates tell apart.
fn variants(ts: &TaskSet, out: &mut Vec<TaskSet>) {
    let m = ts.platform.cpus;
    // Implicit deadlines; task 0's constrained; task 0's arbitrary (D > T); every task's
    // constrained.
    for deadlines in 0..4 {
        for cpus in [false, true] {
            for priorities in [false, true] {
                for sections in [false, true] {
                    let mut v = ts.clone();
                    for (i, t) in v.tasks.iter_mut().enumerate() {
                        match deadlines {
                            1 if i == 0 => t.deadline = (t.period * 3 / 4).max(t.critical_path()),
                            3 => t.deadline = (t.period * 3 / 4).max(t.critical_path()),
                            2 if i == 0 => t.deadline = t.period + t.period / 2,
                            _ => t.deadline = t.period,
                        }
                        t.cpu = cpus.then_some(i as u32 % m);
                        t.priority = priorities.then_some(100 - i as u32);
                    }
                    if sections {
                        v.resources = vec!["r".into()];
                        // A bounded protocol with priorities and half the deadline variants, a
                        // plain mutex otherwise.
                        if priorities && deadlines % 2 == 0 {
                            v.run.locking = Protocol::Pcp;
                        }
                        let t = &mut v.tasks[0];
                        let length =
                            (t.regions.first().map_or(t.wcet, |r| r.threads[0]) / 4).max(1);
                        t.sections = vec![CriticalSection {
                            resource: 0,
                            region: 0,
                            thread: 0,
                            start: 0,
                            length,
                        }];
                    }
                    out.push(v);
                }
            }
        }
    }
}

fn chain(name: &str, tasks: Vec<u32>, communication: Option<Communication>) -> Chain {
    Chain {
        name: name.into(),
        tasks,
        communication,
        deadline: None,
    }
}

/// Sequential sets on 1, 2 and 4 CPUs, the same with a fork-join task, with a triggered task,
/// a suspending one and chains, and DAG sets on 1 and 4.
fn family() -> Vec<TaskSet> {
    let mut out = Vec::new();
    for (g, p) in [
        ("uunifast", "n=4,U=0.7,m=1"),
        ("randfixedsum", "n=5,U=1.2,m=2"),
        ("randfixedsum", "n=8,U=2.5,m=4"),
        ("dag-nfj", "n=3,U=0.6,m=1"),
        ("dag-nfj", "n=4,U=2,m=4"),
    ] {
        let params = gen::Params::parse(p).unwrap();
        let ts = gen::by_name(g, &params, 7).unwrap().taskset;
        variants(&ts, &mut out);
        if g != "dag-nfj" {
            // Task 0 as a fork-join: a third of its work, then two threads of a third each.
            let mut fj = ts.clone();
            let t = &mut fj.tasks[0];
            let third = (t.wcet / 3).max(1);
            t.regions = vec![
                Region {
                    threads: vec![third],
                },
                Region {
                    threads: vec![third, third],
                },
            ];
            t.wcet = 3 * third;
            variants(&fj, &mut out);
            // Triggers, a suspension and chains (docs/chains.md): task 1 triggered by task 0,
            // with an event chain [0, 1]; task 0 alone suspending; and both, with an implicit
            // and a LET chain [2, 3].
            let mut trig = ts.clone();
            trig.tasks[1].trigger = Some(Trigger {
                tasks: vec![0],
                all: false,
            });
            trig.tasks[1].period = trig.tasks[0].period;
            trig.chains.push(chain("ab", vec![0, 1], None));
            variants(&trig, &mut out);
            let mut susp = ts.clone();
            let t = &mut susp.tasks[0];
            let half = (t.wcet / 2).max(1);
            t.regions = vec![
                Region {
                    threads: vec![half],
                },
                Region {
                    threads: vec![half],
                },
            ];
            t.wcet = 2 * half;
            t.suspensions = vec![Suspension { lo: half, hi: half }];
            variants(&susp, &mut out);
            let mut both = susp.clone();
            both.tasks[1].trigger = trig.tasks[1].trigger.clone();
            both.tasks[1].period = both.tasks[0].period;
            both.chains = vec![
                chain("ab", vec![0, 1], None),
                chain("imp", vec![2, 3], Some(Communication::Implicit)),
                chain("let", vec![2, 3], Some(Communication::Let)),
            ];
            variants(&both, &mut out);
            // The fork-join set with the same trigger and chains, and task 2 suspending; and
            // with the suspension alone.
            let mut fj_susp = fj.clone();
            let t = &mut fj_susp.tasks[2];
            let half = (t.wcet / 2).max(1);
            t.regions = vec![
                Region {
                    threads: vec![half],
                },
                Region {
                    threads: vec![half],
                },
            ];
            t.wcet = 2 * half;
            t.suspensions = vec![Suspension { lo: half, hi: half }];
            variants(&fj_susp, &mut out);
            let mut fj_trig = fj_susp.clone();
            fj_trig.tasks[1].trigger = trig.tasks[1].trigger.clone();
            fj_trig.tasks[1].period = fj_trig.tasks[0].period;
            fj_trig.chains = both.chains.clone();
            variants(&fj_trig, &mut out);
        }
    }
    out
}

/// Whether `reason` is true of `ts`, read from the task fields (not the registry's helpers).
fn holds(test: &Test, reason: &Reason, ts: &TaskSet) -> bool {
    let a = &test.entry.applies;
    let m = ts.platform.cpus;
    let parallel =
        |t: &rtsched_model::Task| t.dag.is_some() || t.regions.iter().any(|r| r.threads.len() > 1);
    let has_parallel = ts.tasks.iter().any(parallel);
    let has_sections = ts.tasks.iter().any(|t| !t.sections.is_empty());
    let has_triggers = ts.tasks.iter().any(|t| t.trigger.is_some());
    let has_suspensions = ts.tasks.iter().any(|t| !t.suspensions.is_empty());
    match *reason {
        Reason::OneCpu { cpus } => {
            test.form == Form::Whole && a.cpus == Cpus::One && cpus == m && m > 1
        }
        Reason::SeveralCpus => a.cpus == Cpus::Several && m == 1,
        Reason::PerCpuOnOne => test.form == Form::PerCpu && m == 1,
        Reason::NoCpu { task } => {
            (test.form == Form::PerCpu || (a.cpus == Cpus::Partitioned && m > 1))
                && ts.tasks[task].cpu.is_none()
        }
        Reason::NoFlow(flow) => {
            flow == a.flow
                && match flow {
                    Flow::Suspensions => !has_suspensions,
                    Flow::Triggers => !has_triggers && !has_suspensions,
                    Flow::Chain(c) => !ts.chains.iter().any(|k| k.communication == Some(c)),
                    Flow::Not | Flow::Any => false,
                }
        }
        Reason::UnmodelledFlow {
            triggers,
            suspensions,
            ignoring,
        } => {
            let stripped = registry::without_structure(ts);
            triggers == (matches!(a.flow, Flow::Not | Flow::Suspensions) && has_triggers)
                && suspensions == (a.flow == Flow::Not && has_suspensions)
                && (triggers || suspensions)
                && !(a.tasks == Tasks::Sequential && has_parallel)
                && (!has_sections || a.sections.modelled())
                && ignoring == test.run(&stripped).ok().map(|v| v.schedulable)
        }
        Reason::NoPriority { task } => a.priorities && ts.tasks[task].priority.is_none(),
        Reason::NoParallelTask => a.tasks == Tasks::Parallel && !has_parallel,
        Reason::Unmodelled {
            parallel: p,
            sections,
            ignoring,
        } => {
            let stripped = registry::without_structure(ts);
            p.is_some() == (a.tasks == Tasks::Sequential && has_parallel)
                && sections == (!a.sections.modelled() && has_sections)
                && (p.is_some() || sections)
                && ignoring == test.run(&stripped).ok().map(|v| v.schedulable)
        }
        Reason::Deadline { task, takes } => {
            let t = &ts.tasks[task];
            takes == a.deadlines
                && match takes {
                    Deadlines::Implicit => t.deadline != t.period,
                    Deadlines::Constrained => t.deadline > t.period,
                    Deadlines::Arbitrary => false,
                }
        }
        Reason::Blocking(b) => {
            let Sections::Blocking(takes) = a.sections else {
                return false;
            };
            let used = |r: usize| {
                ts.tasks
                    .iter()
                    .any(|t| t.sections.iter().any(|s| s.resource as usize == r))
            };
            match b {
                BlockingReason::Protocol {
                    resource,
                    protocol,
                    takes: t,
                } => {
                    t == takes
                        && used(resource)
                        && ts.protocol(resource) == protocol
                        && !takes.contains(&protocol)
                }
                BlockingReason::Mixed { a, b } => {
                    used(a) && used(b) && ts.protocol(a) != ts.protocol(b)
                }
                BlockingReason::Global { resource } => {
                    m > 1 && {
                        let cpus: BTreeSet<Option<u32>> = ts
                            .tasks
                            .iter()
                            .filter(|t| t.sections.iter().any(|s| s.resource as usize == resource))
                            .map(|t| t.cpu)
                            .collect();
                        cpus.len() > 1 || cpus.contains(&None)
                    }
                }
                BlockingReason::NestedPip { .. } | BlockingReason::NestedMsrp { .. } => false, // the family nests no sections
            }
        }
        _ => false, // only the overhead-aware forms give the others
    }
}

/// A restriction of a predicate: its name, and whether a reason is one of its refusals.
type Restriction = (&'static str, fn(&Reason) -> bool);

/// The restrictions of a test's predicate.
fn restrictions(test: &Test) -> Vec<Restriction> {
    let a = &test.entry.applies;
    let mut out: Vec<Restriction> = Vec::new();
    match (test.form, a.cpus) {
        (Form::PerCpu, _) => {
            out.push(("one CPU", |r| matches!(r, Reason::PerCpuOnOne)));
            out.push(("cpu fields", |r| matches!(r, Reason::NoCpu { .. })));
        }
        (_, Cpus::One) => out.push(("CPUs", |r| matches!(r, Reason::OneCpu { .. }))),
        (_, Cpus::Several) => out.push(("CPUs", |r| matches!(r, Reason::SeveralCpus))),
        (_, Cpus::Partitioned) => out.push(("cpu fields", |r| matches!(r, Reason::NoCpu { .. }))),
        (_, Cpus::Any) => {}
    }
    match a.flow {
        Flow::Not => out.push(("triggers and suspensions", |r| {
            matches!(r, Reason::UnmodelledFlow { .. })
        })),
        Flow::Suspensions => {
            out.push(("sets without suspensions", |r| {
                matches!(r, Reason::NoFlow(_))
            }));
            out.push(("triggers", |r| {
                matches!(r, Reason::UnmodelledFlow { triggers: true, .. })
            }));
        }
        Flow::Triggers | Flow::Chain(_) => {
            out.push(("sets without them", |r| matches!(r, Reason::NoFlow(_))))
        }
        Flow::Any => {}
    }
    match a.tasks {
        Tasks::Sequential => out.push(("parallel tasks", |r| {
            matches!(
                r,
                Reason::Unmodelled {
                    parallel: Some(_),
                    ..
                }
            )
        })),
        Tasks::Parallel => out.push(("sequential set", |r| matches!(r, Reason::NoParallelTask))),
        Tasks::Any => {}
    }
    if let Sections::Blocking(_) = a.sections {
        out.push(("protocols", |r| matches!(r, Reason::Blocking(_))));
    }
    if a.sections == Sections::Not {
        out.push(("sections", |r| {
            matches!(r, Reason::Unmodelled { sections: true, .. })
        }));
    }
    if a.deadlines != Deadlines::Arbitrary {
        out.push(("deadlines", |r| matches!(r, Reason::Deadline { .. })));
    }
    if a.priorities {
        out.push(("priorities", |r| matches!(r, Reason::NoPriority { .. })));
    }
    out
}

/// Everything wrong with the registry `entries` on the sets `sets` (empty: nothing).
fn walk(entries: &'static [Entry], sets: &[TaskSet]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for test in registry::tests_of(entries) {
        let name = test.name();
        if !names.insert(name.clone()) {
            problems.push(format!("{name}: listed twice"));
        }
        let mut applied = 0;
        let mut refused: Vec<Reason> = Vec::new();
        for ts in sets {
            let listed = registry::analyze_with(entries, ts)
                .into_iter()
                .find(|(t, _)| *t == test)
                .map(|(_, v)| v);
            match test.run(ts) {
                Ok(v) => {
                    applied += 1;
                    if v.test != name || listed.as_ref() != Some(&v) {
                        problems.push(format!("{name}: ran as {v:?}, listed as {listed:?}"));
                    }
                }
                Err(na) => {
                    if na.test != test.entry.name || !holds(&test, &na.reason, ts) {
                        problems.push(format!("{name}: refused {ts:?} for {na:?}, not true of it"));
                    }
                    let shown = listed.map(|v| (v.schedulable, v.detail));
                    let expected = (!na.reason.for_other_sets()).then(|| (None, na.words(ts)));
                    if shown != expected {
                        problems.push(format!("{name}: refused ({na}), listed as {shown:?}"));
                    }
                    refused.push(na.reason);
                }
            }
        }
        if applied == 0 {
            problems.push(format!("{name}: applies to none of the sets"));
        }
        for (what, is) in restrictions(&test) {
            if !refused.iter().any(is) {
                problems.push(format!("{name}: its restriction on {what} refuses no set"));
            }
        }
    }
    problems
}

#[test]
fn every_test_applies_to_some_set_and_refuses_the_others_with_a_true_reason() {
    let sets = family();
    assert_eq!(walk(ENTRIES, &sets), Vec::<String>::new());
    // What the sweeps and `analyze` run is the registry: every form parses to itself and the
    // listing is `analyze`'s.
    for test in registry::tests_of(ENTRIES) {
        assert_eq!(Named::parse(&test.name()), Ok(Named::Test(test)));
    }
    for ts in &sets {
        let listed: Vec<_> = registry::analyze_with(ENTRIES, ts)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        assert_eq!(analyze(ts), listed);
    }
}

/// Negative controls: a family with no set of several CPUs leaves the global tests applying to
/// none (and their CPU restriction refusing none); a test listed twice is named.
#[test]
fn the_walk_catches_a_narrow_family_and_a_duplicate() {
    let one_cpu: Vec<TaskSet> = family()
        .into_iter()
        .filter(|ts| ts.platform.cpus == 1)
        .collect();
    let problems = walk(ENTRIES, &one_cpu);
    assert!(
        problems.contains(&"gedf-gfb: applies to none of the sets".to_string())
            && problems.contains(&"p-edf-exact: applies to none of the sets".to_string()),
        "{problems:#?}"
    );
    const TWICE: &[Entry] = &[ENTRIES[0], ENTRIES[3], ENTRIES[0]];
    let problems = walk(TWICE, &family());
    assert_eq!(problems, vec!["necessary: listed twice".to_string()]);
}

/// Each `pub const NAME: Entry` of the files of `schedulability/` as `file::NAME`.
fn declared(files: &[(String, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (file, text) in files {
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("pub const ") {
                if let Some((name, ty)) = rest.split_once(':') {
                    if ty.trim_start().starts_with("Entry ") {
                        out.insert(format!("{file}::{name}"));
                    }
                }
            }
        }
    }
    out
}

/// The `file::NAME`s of `declared` that `mod_rs`'s `ENTRIES` does not list.
fn unlisted(files: &[(String, String)], mod_rs: &str) -> Vec<String> {
    let list = mod_rs
        .split_once("pub const ENTRIES: &[Entry] = &[")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map_or("", |(list, _)| list);
    let listed: BTreeSet<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    declared(files)
        .into_iter()
        .filter(|d| !listed.contains(d.as_str()))
        .collect()
}

#[test]
fn every_declared_entry_is_listed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/schedulability");
    let mut files = Vec::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        let path = f.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if stem != "mod" && path.extension().is_some_and(|e| e == "rs") {
            files.push((stem, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mod_rs = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    assert!(declared(&files).len() >= ENTRIES.len(), "{files:?}");
    assert_eq!(unlisted(&files, &mod_rs), Vec::<String>::new());
    // Negative control: an entry written but not listed is named.
    files.push((
        "extra".into(),
        "pub const ZERO: Entry = Entry {\n".to_string(),
    ));
    assert_eq!(unlisted(&files, &mod_rs), vec!["extra::ZERO".to_string()]);
}
