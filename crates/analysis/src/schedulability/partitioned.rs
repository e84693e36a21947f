//! Partitioning tried: what `rtsched analyze` reports of a set of several CPUs, whether or not
//! its tasks give a `cpu` — each bin-packing heuristic (first, worst and best fit by decreasing
//! utilisation, `crate::partition`; LWFG, Lee et al.'s cache-aware grouping, where the set has
//! groups) with each uniprocessor test as its admission test, and whether it places every
//! task. A placement found is run through the test's per-CPU form (`p-NAME`, `registry.rs`),
//! which gives its verdict and each task's row with the CPU it was placed on (`bounds.rs`):
//! under `edf-exact` and the FP analyses its response-time bound on that CPU (Spuri's EDF
//! analysis, `edf_response.rs`; Joseph & Pandya's), under `edf-density` its least passing
//! deadline (`global.rs`, the density condition per task, not a response time); the CPUs'
//! utilisations show how the heuristic spread the load (worst fit evens it, first fit packs).
//!
//! The admission tests are the uniprocessor tests `crate::partition` admits by: `edf-exact`
//! (processor demand), `edf-density`, `fp-rta-rm` and `fp-rta-dm` (the set's rate- and
//! deadline-monotonic priorities; partitioned FP keeps them per CPU, `crate::priority`).

use super::registry::{self, Form};
use super::{Verdict, ENTRIES};
use crate::partition::{self, Admission};
use crate::priority::Priorities;
use rtsched_model::TaskSet;

/// The heuristics tried, and LWFG's, tried when some task gives a `group`.
pub const HEURISTICS: &[&str] = &["ffd", "wfd", "bfd"];
pub const GROUPED: &str = "lwfg";

/// The admission tests tried, by the registry name of their uniprocessor test.
pub const TESTS: &[&str] = &["edf-exact", "edf-density", "fp-rta-rm", "fp-rta-dm"];

/// One heuristic under one admission test.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub heuristic: &'static str,
    /// The admission test's registry name.
    pub test: &'static str,
    /// The per-CPU test's verdict on the placement found (named `p-TEST`, with its per-task
    /// bounds), or, when the heuristic places not every task, "NOT schedulable" naming the task
    /// that did not fit.
    pub verdict: Verdict,
    /// Each CPU's utilisation under the placement (empty when none was found).
    pub loads: Vec<f64>,
}

/// The admission of `test`, charging `ts`'s critical sections where the test bounds their
/// protocol (`partition::sections`: pip, pcp, srp, resources kept local; `partition::remote`:
/// msrp, mrsp, fmlp+, every CPU re-checked with the terms of the partial placement).
fn admission(test: &str, ts: &TaskSet) -> Admission {
    let prio = |p: Priorities| p.of(&ts.tasks).unwrap_or_default();
    match test {
        "edf-exact" => Admission::EdfExact,
        "edf-density" => Admission::Density,
        "fp-rta-rm" => Admission::FpRta(prio(Priorities::RateMonotonic)),
        _ => Admission::FpRta(prio(Priorities::DeadlineMonotonic)),
    }
    .counting_sections(ts)
}

/// Every attempt on `ts`: none on one CPU, or for a set the uniprocessor tests do not model
/// (parallel tasks, triggers, suspensions; critical sections are, under a protocol the tests
/// bound, and otherwise the per-CPU verdict says why not).
pub fn attempts(ts: &TaskSet) -> Vec<Attempt> {
    let (triggers, suspensions) = registry::flow(ts);
    if ts.platform.cpus < 2 || registry::parallel(ts).is_some() || triggers || suspensions {
        return Vec::new();
    }
    if registry::has_sections(ts) && !TESTS.iter().any(|t| admission(t, ts).counts_sections()) {
        return Vec::new();
    }
    let grouped = ts.tasks.iter().any(|t| t.group.is_some());
    let heuristics = HEURISTICS.iter().copied().chain(grouped.then_some(GROUPED));
    let mut out = Vec::new();
    for heuristic in heuristics {
        let p = partition::by_name(heuristic).expect("a known heuristic");
        for &test in TESTS {
            out.push(attempt(ts, heuristic, &p, test));
        }
    }
    out
}

fn attempt(
    ts: &TaskSet,
    heuristic: &'static str,
    p: &partition::Partitioner,
    test: &'static str,
) -> Attempt {
    let per_cpu = registry::find(ENTRIES, &format!("p-{test}")).expect("a uniprocessor test");
    debug_assert_eq!(per_cpu.form, Form::PerCpu);
    match p.partition(ts, &admission(test, ts)) {
        Ok(part) => {
            let mut placed = ts.clone();
            let mut loads = vec![0.0; ts.platform.cpus as usize];
            for (t, &cpu) in placed.tasks.iter_mut().zip(&part.cpu_of_task) {
                t.cpu = Some(cpu);
                loads[cpu as usize] += t.wcet as f64 / t.period as f64;
            }
            let verdict = per_cpu
                .run(&placed)
                .unwrap_or_else(|na| Verdict::new(per_cpu.name(), None, na.words(&placed)));
            Attempt {
                heuristic,
                test,
                verdict,
                loads,
            }
        }
        Err(e) => Attempt {
            heuristic,
            test,
            verdict: Verdict::new(per_cpu.name(), Some(false), e.to_string()),
            loads: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::Task;

    /// Dhall's set on 2 CPUs: two (1, 10) and a heavy (10, 11). By decreasing utilisation the
    /// heavy task goes first, to CPU 0; neither light task fits beside it (.909 + .1 > 1), so
    /// first, best and worst fit all put both on CPU 1: loads {.909, .2}, under every test. RM
    /// on CPU 1: R_a = 1, R_b = 1 + 1 = 2; the heavy task alone: R = 10 ≤ 11. Three (6, 10)
    /// tasks: no heuristic places the third (.6 + .6 > 1 on either CPU).
    #[test]
    fn by_hand() {
        let ms = 1_000_000;
        let ts = TaskSet::new(
            2,
            vec![
                Task::periodic("a", 10 * ms, ms),
                Task::periodic("b", 10 * ms, ms),
                Task::periodic("heavy", 11 * ms, 10 * ms),
            ],
        );
        let a = attempts(&ts);
        assert_eq!(a.len(), HEURISTICS.len() * TESTS.len());
        for x in &a {
            assert_eq!(x.verdict.schedulable, Some(true), "{x:?}");
            let mut loads = x.loads.clone();
            loads.sort_by(f64::total_cmp);
            assert!(
                (loads[0] - 0.2).abs() < 1e-9 && (loads[1] - 10.0 / 11.0).abs() < 1e-9,
                "{x:?}"
            );
        }
        let rta = a
            .iter()
            .find(|x| x.heuristic == "ffd" && x.test == "fp-rta-rm")
            .unwrap();
        let r: Vec<(&str, Option<u64>)> = rta
            .verdict
            .tasks
            .iter()
            .map(|b| (b.name.as_str(), b.bound))
            .collect();
        assert_eq!(
            r,
            vec![
                ("a", Some(ms)),
                ("b", Some(2 * ms)),
                ("heavy", Some(10 * ms))
            ]
        );
        // EDF on CPU 1: a and b tie at deadline 10, each counted against the other: R = 2 for
        // both (Spuri); heavy alone on CPU 0: 10. Density: a's least deadline 1/(1 − .1) ms.
        let rows = |test: &str| -> Vec<(Option<u64>, Option<u32>)> {
            let x = a.iter().find(|x| x.heuristic == "ffd" && x.test == test);
            x.unwrap()
                .verdict
                .tasks
                .iter()
                .map(|b| (b.bound, b.cpu))
                .collect()
        };
        assert_eq!(
            rows("edf-exact"),
            vec![
                (Some(2 * ms), Some(1)),
                (Some(2 * ms), Some(1)),
                (Some(10 * ms), Some(0))
            ]
        );
        assert_eq!(rows("edf-density")[0], (Some(1_111_112), Some(1)));
        assert_eq!(rows("edf-density")[2], (Some(10 * ms), Some(0)));
        let heavy = TaskSet::new(
            2,
            (0..3)
                .map(|i| Task::periodic(format!("t{i}"), 10 * ms, 6 * ms))
                .collect(),
        );
        for x in attempts(&heavy) {
            assert_eq!(x.verdict.schedulable, Some(false), "{x:?}");
            assert!(x.verdict.detail.contains("'t2'"), "{x:?}");
        }
    }
}
