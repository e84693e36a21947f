//! A schedulability test chosen by name: what a sweep's `test:NAME` scheduler runs on each
//! task set in place of a simulation, so acceptance ratios of analyses and of simulation come
//! out of one sweep, on the same sets (the acceptance-ratio plots of the field, e.g. LWFG §5,
//! Bertogna et al. 2005 Fig. 3).
//!
//! - `NAME`: a test of the registry ([`super::ENTRIES`]: `necessary`, `gedf-gfb`, `gedf-bcl`,
//!   `federated` and `gedf-dag-li` for parallel tasks, `edf-exact`, …, and `p-NAME` for each
//!   uniprocessor test on each CPU of a partitioned set). When the set's run options carry
//!   overheads (`run.overheads`, e.g. from a profile), the test's overhead-aware form is run
//!   (`crate::overheads`), as `rtsched analyze --overheads` shows it.
//! - `partition:HEURISTIC`: whether HEURISTIC (a name or `+` chain of `partition::by_name`)
//!   places every task, each CPU admitting by the exact uniprocessor EDF test (processor
//!   demand): a partition found is a proof the set is P-EDF schedulable; none found is a
//!   failure of the heuristic, reported as "not schedulable" (the usual reading of partitioned
//!   acceptance ratios, LWFG §5). `global` in a chain always succeeds, so it is refused. A set
//!   with critical sections under `pip`, `pcp`, `srp`, `msrp` or `fmlp+` is admitted with their
//!   blocking (and spin) terms, as `rtsched partition --admission edf` does; under any other
//!   protocol the test does not apply.
//!
//! A necessary test (`registry::Kind::Necessary`) accepts a set it does not refute (true: not
//! refuted, not a proof): its acceptance ratio bounds every scheduler's from above.
//!
//! A test that does not apply to a set — its [`Applies`] predicate refuses it: a uniprocessor
//! test on several CPUs, a `p-` test on a set without `cpu` fields, a sequential test on a set
//! with parallel structure or critical sections — gives [`NotApplicable`] with the reason; a
//! test that ran but could not decide gives a verdict of `None` (inconclusive).

use super::registry::{
    self, Applies, Cpus, Deadlines, Flow, Form, Kind, NotApplicable, Reason, Sections, Tasks, Test,
};
use super::{Verdict, ENTRIES};
use crate::overheads::verdict_with_overheads;
use crate::partition::{self, Admission, Partitioner};
use rtsched_model::text::closest;
use rtsched_model::TaskSet;

/// The family of tests `partition:HEURISTIC`.
pub const PARTITION: &str = "partition";

/// What `partition:HEURISTIC` applies to: any set without critical sections, or with ones
/// whose protocol the per-CPU exact EDF test bounds (`partitioned` widens it then).
pub const PARTITION_APPLIES: Applies = Applies {
    cpus: Cpus::Any,
    tasks: Tasks::Any,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Not,
};

/// A line of `rtsched schedulers`' list of tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Help {
    pub name: String,
    pub summary: &'static str,
    /// The sets it applies to, in words.
    pub applies: String,
    pub citation: &'static str,
    pub kind: Kind,
}

/// Every test a sweep can name, in the registry's order, then `partition:HEURISTIC`.
pub fn help() -> Vec<Help> {
    let mut out: Vec<Help> = ENTRIES
        .iter()
        .map(|e| Help {
            name: e.name.to_string(),
            summary: e.summary,
            applies: e.applies.describe(&registry::per_cpu_name(e)),
            citation: e.citation,
            kind: e.kind,
        })
        .collect();
    out.push(Help {
        name: format!("{PARTITION}:HEURISTIC"),
        summary:
            "HEURISTIC (ffd, wfd, lwfg, lwfg+ffd, …) places every task, exact EDF test per CPU (with pip, pcp, srp, msrp or fmlp+ blocking)",
        applies: format!(
            "{}, or critical sections under pip, pcp, srp, msrp or fmlp+ (their blocking charged)",
            PARTITION_APPLIES.describe("")
        ),
        citation: "the heuristic's (`rtsched partition`); per CPU Baruah, Rosier & Howell 1990",
        kind: Kind::Sufficient,
    });
    out
}

/// A parsed test name.
#[derive(Clone, Debug, PartialEq)]
pub enum Named {
    /// A test of the registry, in one of its forms.
    Test(Test),
    /// Partition success under a heuristic.
    Partition(Partitioner),
}

impl Named {
    /// Parse `name` (without the `test:` prefix). An unknown name names the closest known one.
    pub fn parse(name: &str) -> Result<Named, String> {
        if let Some((PARTITION, h)) = name.split_once(':') {
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
        if let Some(t) = registry::find(ENTRIES, name) {
            return Ok(Named::Test(t));
        }
        let names: Vec<String> = registry::tests_of(ENTRIES).map(|t| t.name()).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let hint = closest(name, &refs)
            .map(|s| format!(" (did you mean 'test:{s}'?)"))
            .unwrap_or_default();
        Err(format!(
            "unknown test '{name}'{hint}; tests: {}, p-NAME for a uniprocessor test on each CPU, partition:HEURISTIC",
            registry::tests_of(ENTRIES)
                .filter(|t| t.form == Form::Whole)
                .map(|t| t.entry.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The verdict on `ts`, or why the test does not apply to it.
    pub fn verdict(&self, ts: &TaskSet) -> Result<Verdict, NotApplicable> {
        let t = match self {
            Named::Partition(p) => return partitioned(ts, p),
            Named::Test(t) => t,
        };
        let oh = &ts.run.overheads;
        let v = if oh.any() {
            verdict_with_overheads(t, ts, oh)?
        } else {
            t.run(ts)?
        };
        // A necessary condition refutes or stays silent; its acceptance (the upper bound of
        // every scheduler's) is "not refuted".
        if t.entry.kind == Kind::Necessary && v.schedulable.is_none() {
            return Ok(Verdict::new(
                v.test,
                Some(true),
                format!("meets the necessary condition (not a proof): {}", v.detail),
            ));
        }
        Ok(v)
    }
}

/// Partition `ts` with `p`, each CPU admitting by the exact EDF test (overheads charged when
/// the set's run options give them), charging the set's critical sections where that test
/// bounds their protocol (`pip`, `pcp`, `srp`: `partition::sections`; `msrp`, `fmlp+`: `remote`).
fn partitioned(ts: &TaskSet, p: &Partitioner) -> Result<Verdict, NotApplicable> {
    let adm = Admission::EdfExact.counting_sections(ts);
    let applies = match adm.counts_sections() {
        true => Applies {
            sections: Sections::Any,
            ..PARTITION_APPLIES
        },
        false => PARTITION_APPLIES,
    };
    applies.check(ts).map_err(|reason: Reason| NotApplicable {
        test: PARTITION,
        reason,
    })?;
    let name = format!("{PARTITION}:{}", p.name());
    Ok(match p.partition(ts, &adm) {
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
        let test = |n: &str| match Named::parse(n) {
            Ok(Named::Test(t)) => t.name(),
            other => panic!("{n}: {other:?}"),
        };
        assert_eq!(test("gedf-bcl"), "gedf-bcl");
        assert_eq!(test("p-edf-exact"), "p-edf-exact");
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
        assert!(v("edf-exact").unwrap_err().to_string().contains("2 CPUs"));
        assert!(v("p-edf-exact").unwrap_err().to_string().contains("`cpu`"));
        // Three heavy tasks on 2 CPUs: no partition (each u = 0.6 > 0.5 left).
        let heavy = set(2, &[(6, 10), (6, 10), (6, 10)]);
        let p = Named::parse("partition:ffd")
            .unwrap()
            .verdict(&heavy)
            .unwrap();
        assert_eq!(p.schedulable, Some(false));
        assert!(p.detail.contains("'t2'"), "{}", p.detail);
    }

    /// `partition:ffd` on a set with sections: counted under `msrp` (EDF bounds it; the
    /// `remote.rs` example that fits only ignoring sections: a (.7, R 2), c (.5), b (.4, R 3)
    /// on 2 CPUs, T = 10 ms), not applicable under `none`.
    #[test]
    fn partition_counts_sections_where_edf_bounds_them() {
        let mut ts = set(2, &[(7, 10), (5, 10), (4, 10)]);
        for (i, len) in [(0, 2), (2, 3)] {
            ts.tasks[i].sections = vec![rtsched_model::CriticalSection {
                resource: 0,
                region: 0,
                thread: 0,
                start: 0,
                length: len,
            }];
        }
        ts.resources = vec!["R".into()];
        let v = |ts: &TaskSet| Named::parse("partition:ffd").unwrap().verdict(ts);
        assert!(v(&ts)
            .unwrap_err()
            .to_string()
            .contains("critical sections"));
        ts.run.locking = rtsched_model::Protocol::Msrp;
        let got = v(&ts).unwrap();
        assert_eq!(got.schedulable, Some(false), "{}", got.detail);
        assert!(
            got.detail.contains("counting msrp's terms"),
            "{}",
            got.detail
        );
    }

    /// The necessary condition applies to every set, one CPU too: not refuted at U = 0.9,
    /// refuted at U = 1.1 (its acceptance bounds every scheduler's, so it must never be
    /// "not applicable" where a scheduler can succeed).
    #[test]
    fn necessary_on_one_cpu() {
        let n = Named::parse("necessary").unwrap();
        let v = n.verdict(&set(1, &[(4, 10), (5, 10)])).unwrap();
        assert_eq!(v.schedulable, Some(true));
        assert!(
            v.detail.starts_with("meets the necessary condition"),
            "{v:?}"
        );
        let v = n.verdict(&set(1, &[(6, 10), (5, 10)])).unwrap();
        assert_eq!(v.schedulable, Some(false), "{v:?}");
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
            for v in super::super::analyze(ts) {
                assert!(Named::parse(&v.test).is_ok(), "{}", v.test);
            }
        }
    }
}
