//! A schedulability test chosen by name: what a sweep's `test:NAME` scheduler runs on each
//! task set in place of a simulation, so acceptance ratios of analyses and of simulation come
//! out of one sweep, on the same sets (the acceptance-ratio plots of the field, e.g. LWFG §5,
//! Bertogna et al. 2005 Fig. 3).
//!
//! - `NAME`: a test [`analyze`](super::analyze) reports (`gedf-gfb`, `gedf-bcl`, `edf-exact`,
//!   `federated` and `gedf-dag-li` for parallel tasks, …; [`TESTS`]). When the set's run options carry overheads (`run.overheads`, e.g. from a
//!   profile), the overhead-aware form of the test is run (`crate::overheads`), as
//!   `rtsched analyze --overheads` shows it.
//! - `partition:HEURISTIC`: whether HEURISTIC (a name or `+` chain of `partition::by_name`)
//!   places every task, each CPU admitting by the exact uniprocessor EDF test (processor
//!   demand): a partition found is a proof the set is P-EDF schedulable; none found is a
//!   failure of the heuristic, reported as "not schedulable" (the usual reading of partitioned
//!   acceptance ratios, LWFG §5). `global` in a chain always succeeds, so it is refused.
//!
//! `necessary` accepts a set that meets the necessary condition (true: not refuted, not a
//! proof): its acceptance ratio bounds every scheduler's from above.
//!
//! A test that does not apply to a set (a uniprocessor test on several CPUs, a `p-` test on a
//! set without `cpu` fields, a sufficient test on a set with parallel structure or critical
//! sections) gives [`NotApplicable`] with the reason; a test that ran but could not decide
//! gives a verdict of `None` (inconclusive).

use super::{analyze, Verdict};
use crate::overheads::analyze_with_overheads;
use crate::partition::{self, Admission, Partitioner};
use rtsched_model::text::closest;
use rtsched_model::TaskSet;

/// Every test by name, with what it is (help text). `p-NAME` (each uniprocessor test on each
/// CPU of a set whose tasks all give `cpu`) is accepted for each uniprocessor NAME.
pub const TESTS: &[(&str, &str)] = &[
    (
        "necessary",
        "necessary condition: U ≤ m and C ≤ D (critical path ≤ D for parallel tasks)",
    ),
    (
        "gedf-gfb",
        "global EDF, Goossens, Funk & Baruah 2003 (U ≤ m − (m−1)·u_max)",
    ),
    ("gedf-bcl", "global EDF, Bertogna, Cirinei & Lipari 2005"),
    (
        "federated",
        "parallel (DAG, fork-join) tasks: federated scheduling's admission, Li et al. 2014",
    ),
    (
        "gedf-dag-li",
        "parallel (DAG, fork-join) tasks: global EDF, capacity bound 4 − 2/m, Li et al. 2013; D = T",
    ),
    (
        "edf-exact",
        "uniprocessor EDF, exact (processor demand, QPA); one CPU",
    ),
    ("edf-density", "uniprocessor EDF, Σ C/min(D,T) ≤ 1; one CPU"),
    (
        "fp-rta-rm",
        "fixed priority, response-time analysis, rate-monotonic priorities; one CPU",
    ),
    (
        "fp-rta-dm",
        "fixed priority, response-time analysis, deadline-monotonic priorities; one CPU",
    ),
    (
        "fp-rta-file",
        "fixed priority, response-time analysis, the file's priorities; one CPU",
    ),
    (
        "rm-liu-layland",
        "rate-monotonic, Liu & Layland 1973 bound; one CPU, implicit deadlines",
    ),
    (
        "rm-hyperbolic",
        "rate-monotonic, Bini, Buttazzo & Buttazzo 2003 bound; one CPU, implicit deadlines",
    ),
    (
        "partition:HEURISTIC",
        "HEURISTIC (ffd, wfd, lwfg, lwfg+ffd, …) places every task, exact EDF test per CPU",
    ),
];

/// The uniprocessor tests, which also exist as `p-NAME` on a partitioned set.
const UNIPROCESSOR: &[&str] = &[
    "edf-exact",
    "edf-density",
    "fp-rta-rm",
    "fp-rta-dm",
    "fp-rta-file",
    "rm-liu-layland",
    "rm-hyperbolic",
];

/// A parsed test name.
#[derive(Clone, Debug, PartialEq)]
pub enum Named {
    /// A test of [`analyze`], by its name there.
    Test(String),
    /// Partition success under a heuristic.
    Partition(Partitioner),
}

impl Named {
    /// Parse `name` (without the `test:` prefix). An unknown name names the closest known one.
    pub fn parse(name: &str) -> Result<Named, String> {
        if let Some(h) = name.strip_prefix("partition:") {
            let p = partition::by_name(h)?;
            let global = match &p {
                Partitioner::Global => true,
                Partitioner::Chain(v) => v.contains(&Partitioner::Global),
                _ => false,
            };
            if global {
                return Err(format!(
                    "test 'partition:{h}': 'global' always succeeds, so it decides nothing; give heuristics only (e.g. partition:lwfg+ffd)"
                ));
            }
            return Ok(Named::Partition(p));
        }
        let known = |n: &str| {
            TESTS.iter().any(|(t, _)| *t == n && !t.contains(':'))
                || n.strip_prefix("p-")
                    .is_some_and(|u| UNIPROCESSOR.contains(&u))
        };
        if known(name) {
            return Ok(Named::Test(name.to_string()));
        }
        let mut names: Vec<String> = TESTS
            .iter()
            .filter(|(t, _)| !t.contains(':'))
            .map(|(t, _)| t.to_string())
            .collect();
        names.extend(UNIPROCESSOR.iter().map(|u| format!("p-{u}")));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let hint = closest(name, &refs)
            .map(|s| format!(" (did you mean 'test:{s}'?)"))
            .unwrap_or_default();
        Err(format!(
            "unknown test '{name}'{hint}; tests: {}, p-NAME for a uniprocessor test on each CPU, partition:HEURISTIC",
            TESTS
                .iter()
                .filter(|(t, _)| !t.contains(':'))
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The verdict on `ts`, or why the test does not apply to it.
    pub fn verdict(&self, ts: &TaskSet) -> Result<Verdict, NotApplicable> {
        match self {
            Named::Partition(p) => partitioned(ts, p),
            Named::Test(name) => {
                let oh = &ts.run.overheads;
                let all = if oh.any() {
                    analyze_with_overheads(ts, oh).verdicts
                } else {
                    analyze(ts)
                };
                let Some(v) = all.into_iter().find(|v| v.test == *name) else {
                    return Err(NotApplicable(absent(ts, name)));
                };
                if v.schedulable.is_none() && v.detail.starts_with("not applicable") {
                    return Err(NotApplicable(v.detail));
                }
                // A necessary condition refutes or stays silent; its acceptance (the upper
                // bound of every scheduler's) is "not refuted".
                if v.necessary && v.schedulable.is_none() {
                    return Ok(Verdict::new(
                        v.test,
                        Some(true),
                        format!("meets the necessary condition (not a proof): {}", v.detail),
                    ));
                }
                Ok(v)
            }
        }
    }
}

/// Why a test does not apply to a task set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotApplicable(pub String);

/// Why [`analyze`] reports no test `name` for `ts`.
fn absent(ts: &TaskSet, name: &str) -> String {
    let m = ts.platform.cpus;
    if name.starts_with("p-") {
        "not applicable: a p- test needs every task to give its CPU (`cpu`)".into()
    } else if UNIPROCESSOR.contains(&name) && m > 1 {
        format!("not applicable: a uniprocessor test, and the set has {m} CPUs (p-{name} tests each CPU of a partitioned set)")
    } else if name.starts_with("gedf-") && m == 1 {
        "not applicable: a global test, and the set has 1 CPU (edf-exact decides it)".into()
    } else if name.starts_with("rm-") {
        "not applicable: the bound takes implicit deadlines (D = T) only".into()
    } else if name == "fp-rta-file" {
        "not applicable: not every task gives a priority".into()
    } else {
        format!("not applicable: the analysis has no test '{name}' for this set")
    }
}

/// Partition `ts` with `p`, each CPU admitting by the exact EDF test (overheads charged when
/// the set's run options give them).
fn partitioned(ts: &TaskSet, p: &Partitioner) -> Result<Verdict, NotApplicable> {
    if ts.tasks.iter().any(|t| !t.sections.is_empty()) {
        return Err(NotApplicable(
            "not applicable: the per-CPU test does not model critical sections (blocking)".into(),
        ));
    }
    let name = format!("partition:{}", p.name());
    Ok(match p.partition(ts, &Admission::EdfExact) {
        Ok(part) => Verdict::new(
            name,
            Some(true),
            format!("{} placed every task", part.heuristic),
        ),
        Err(e) => Verdict::new(name, Some(false), e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::Task;

    fn set(m: u32, ct: &[(u64, u64)]) -> TaskSet {
        let tasks = ct
            .iter()
            .enumerate()
            .map(|(i, &(c, t))| Task::periodic(format!("t{i}"), t, c))
            .collect();
        TaskSet::new(m, tasks)
    }

    #[test]
    fn names_parse_or_say_what_is_known() {
        assert_eq!(Named::parse("gedf-bcl"), Ok(Named::Test("gedf-bcl".into())));
        assert_eq!(
            Named::parse("p-edf-exact"),
            Ok(Named::Test("p-edf-exact".into()))
        );
        assert!(matches!(
            Named::parse("partition:lwfg+ffd"),
            Ok(Named::Partition(_))
        ));
        let e = Named::parse("gedf-bc").unwrap_err();
        assert!(e.contains("did you mean 'test:gedf-bcl'"), "{e}");
        let e = Named::parse("partition:ffd+global").unwrap_err();
        assert!(e.contains("'global' always succeeds"), "{e}");
        assert!(Named::parse("partition:nope").is_err());
        assert!(
            Named::parse("p-gedf-gfb").is_err(),
            "p- is for uniprocessor tests"
        );
    }

    /// Dhall's set on 2 CPUs — two light (1, 10) tasks and a heavy (10, 11) one: U = 1.109.
    /// GFB: u_max = 10/11, m − (m−1)u_max = 2 − 0.909 = 1.091 < 1.109: inconclusive. FFD places
    /// the heavy task on CPU 0 and both light ones on CPU 1 (U = 0.2): schedulable.
    #[test]
    fn verdicts_by_hand() {
        let ts = set(2, &[(1, 10), (1, 10), (10, 11)]);
        let v = |n: &str| Named::parse(n).unwrap().verdict(&ts);
        assert_eq!(v("gedf-gfb").unwrap().schedulable, None);
        assert_eq!(v("necessary").unwrap().schedulable, Some(true));
        assert_eq!(v("partition:ffd").unwrap().schedulable, Some(true));
        assert!(v("edf-exact").unwrap_err().0.contains("2 CPUs"));
        assert!(v("p-edf-exact").unwrap_err().0.contains("`cpu`"));
        // Three heavy tasks on 2 CPUs: no partition (each u = 0.6 > 0.5 left).
        let heavy = set(2, &[(6, 10), (6, 10), (6, 10)]);
        let p = Named::parse("partition:ffd")
            .unwrap()
            .verdict(&heavy)
            .unwrap();
        assert_eq!(p.schedulable, Some(false));
        assert!(p.detail.contains("'t2'"), "{}", p.detail);
    }

    /// Every test `analyze` can report is a name `parse` takes.
    #[test]
    fn every_reported_test_is_known() {
        let mut one = set(1, &[(1, 4), (2, 6), (3, 10)]);
        one.tasks[0].priority = Some(3);
        one.tasks[1].priority = Some(2);
        one.tasks[2].priority = Some(1);
        let mut two = set(2, &[(1, 4), (2, 6), (3, 10)]);
        for (t, c) in two.tasks.iter_mut().zip([0, 0, 1]) {
            t.cpu = Some(c);
            t.priority = Some(c + 1);
        }
        let mut par = two.clone();
        for t in &mut par.tasks {
            t.cpu = None;
        }
        // Task 2 (C = 3) as a fork-join: one thread, then two.
        par.tasks[2].regions = [vec![1], vec![1, 1]]
            .into_iter()
            .map(|threads| rtsched_model::Region { threads })
            .collect();
        for ts in [&one, &two, &par] {
            for v in analyze(ts) {
                assert!(Named::parse(&v.test).is_ok(), "{}", v.test);
            }
        }
    }
}
