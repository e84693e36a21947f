//! Blocking under the global OMLP in the global tests (docs/locking.md "The global OMLP").
//!
//! Brandenburg & Anderson, *Optimality results for multiprocessor real-time locking* (RTSS
//! 2010), and Brandenburg's thesis (UNC 2011): under global scheduling on m CPUs with the
//! global OMLP, each request of a job for resource ℓ_k is *s-oblivious pi-blocked* (the job
//! waits while fewer than m jobs of higher priority are pending) during at most 2m − 1 other
//! requests for ℓ_k: at most m while it waits in the priority queue PQ, m − 1 ahead of it in
//! the FIFO queue FQ. Each lasts at most L_k, the longest section of ℓ_k; so a job of τ_i is
//! pi-blocked at most
//!   b_i = Σ_k N_{i,k} · (2m − 1) · L_k,
//! N_{i,k} its sections of ℓ_k and L_k the longest section of ℓ_k among the *other* tasks (a
//! task's own jobs run one at a time: docs/semantics.md). The inheritance a holder gets adds
//! no term under global scheduling: a job kept from a CPU by a holder running at an inherited
//! priority above its own has, for each such holder, a distinct pending waiter of higher
//! priority (sections do not nest, so a waiter waits for one resource), so with the jobs
//! running at their own priorities it has m jobs of higher priority pending and is not
//! s-oblivious pi-blocked (the paper's argument for priority inheritance under global
//! scheduling).
//!
//! The *suspension-oblivious* analysis: each task's WCET is inflated by b_i (its waits are
//! counted as execution) and the ordinary global test is run on the inflated set
//! (C'_i = C_i + b_i); its response bounds then bound the real responses. The hook is
//! [`charge`], called where a global test reads its tasks (`registry.rs`): the tests whose
//! entries take [`TAKES`] — `gedf-gfb`, `gedf-bcl`, `gedf-rta`, `gedf-baruah` and the
//! `gfp-rta-*` family — see the inflated WCETs, and each task row gets b_i as its
//! `blocking_ns`. The bound is the paper's form with L per resource; SchedCAT's refinement
//! (fewer requests when a resource has at most m + 1 users, a per-task cap over a response
//! window) is not applied.
//!
//! Checked against the simulator (`tests/locking_vs_sim.rs`, `omlp_bounds_hold_in_simulation`):
//! an accepted set never misses under `gfp:file` and `gedf` from random offsets and every
//! simulated response is within its bound; the bounds with b_i dropped are caught.

use super::bounds::{self, TaskBound};
use super::registry::{Sections, Subject};
use super::{blocking, Verdict};
use rtsched_model::{Protocol, TaskSet, Time};

/// The protocols a global test that bounds OMLP blocking takes (its `registry::Applies`
/// sections: `Sections::Blocking(TAKES)`).
pub const TAKES: &[Protocol] = &[Protocol::Omlp];

/// b_i for each of the tasks `idx` of `ts` on `m` CPUs (the overview's form).
pub fn blocking_terms(ts: &TaskSet, idx: &[usize], m: u32) -> Vec<Time> {
    let longest = |r: u32, not: usize| {
        ts.tasks
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != not)
            .flat_map(|(_, t)| t.sections.iter())
            .filter(|s| s.resource == r)
            .map(|s| s.length)
            .max()
            .unwrap_or(0)
    };
    let per = 2 * m.max(1) as Time - 1;
    idx.iter()
        .map(|&i| {
            ts.tasks[i]
                .sections
                .iter()
                .map(|s| per * longest(s.resource, i))
                .sum()
        })
        .collect()
}

/// For a global test (its entry models `Sections::Blocking(TAKES)`), on a subject whose
/// sections are all under `omlp`: inflate each task's WCET by its b_i and return the terms;
/// else `None` (nothing changes: sets without `omlp` do not pay, nor the uniprocessor tests,
/// which bound `omlp` on one CPU by `pip`'s terms, `uniprocessor.rs`).
pub fn charge(s: &mut Subject<'_>, sections: Sections) -> Option<Vec<Time>> {
    let takes = sections == Sections::Blocking(TAKES);
    if !takes || blocking::protocol_of(s.set()) != Ok(Some(Protocol::Omlp)) {
        return None;
    }
    let b = blocking_terms(s.set(), s.indices(), s.cpus());
    s.inflate(&b);
    Some(b)
}

/// `v` with each task row's blocking term `b` (from [`charge`]), when there is one.
pub fn with_blocking(v: Verdict, b: Option<Vec<Time>>) -> Verdict {
    match b {
        Some(b) => {
            let rows: Vec<TaskBound> = bounds::with_blocking(v.tasks.clone(), &b);
            let detail = format!("{} (WCETs + OMLP blocking)", v.detail);
            Verdict {
                tasks: rows,
                detail,
                ..v
            }
        }
        None => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedulability::registry::find;
    use crate::schedulability::ENTRIES;
    use rtsched_model::{parse_taskset, Format};

    const MS: Time = 1_000_000;

    /// The 2-CPU example of docs/locking.md ("The global OMLP"), periods 20 ms, deadlines =
    /// periods: a (priority 1, C 4, R 4), b (2, C 2, R 2), c (4, C 1, R 1), d (6, C 1, R 1),
    /// e (5, C 6), f (3, C 3). With m = 2 each request counts 3 sections: b_a = 3·2 (b's
    /// is the longest of the others), b_b = 3·4, b_c = b_d = 3·4, so C' = a 10, b 14, c 13,
    /// d 13, e 6, f 3.
    fn example() -> TaskSet {
        let task = |n: &str, p: u32, c: u64, r: bool| {
            let s = if r {
                format!(", sections: [{{resource: R, start: 0, length: {c}}}]")
            } else {
                String::new()
            };
            format!("  - {{name: {n}, period: 20, wcet: {c}, priority: {p}{s}}}\n")
        };
        parse_taskset(
            &format!(
                "platform: {{cpus: 2}}\nrun: {{locking: omlp}}\nresources: [R]\ntasks:\n{}{}{}{}{}{}",
                task("a", 1, 4, true),
                task("b", 2, 2, true),
                task("c", 4, 1, true),
                task("d", 6, 1, true),
                task("e", 5, 6, false),
                task("f", 3, 3, false),
            ),
            Format::Yaml,
            "omlp.yaml",
        )
        .unwrap()
    }

    #[test]
    fn blocking_terms_by_hand() {
        let ts = example();
        let b = blocking_terms(&ts, &[0, 1, 2, 3, 4, 5], 2);
        assert_eq!(b, vec![6 * MS, 12 * MS, 12 * MS, 12 * MS, 0, 0]);
    }

    /// gfp-rta-file on the inflated set, by hand (Bertogna & Cirinei, m = 2, priorities d 6,
    /// e 5, c 4, f 3, b 2, a 1; C' as above):
    /// - d: no higher task, R = 13.
    /// - e: d above it, W_d(x) = C'_d = 13 capped at x − 6 + 1: R = 6 + ⌊min(13, R − 5)/2⌋
    ///   → from 6: 6 + ⌊1/2⌋ = 6: R_e = 6.
    /// - and so on: only d and e are checked here, with every row's blocking term.
    #[test]
    fn the_example_under_gfp_rta_file() {
        let ts = example();
        let v = find(ENTRIES, "gfp-rta-file").unwrap().run(&ts).unwrap();
        let row = |n: &str| v.tasks.iter().find(|t| t.name == n).unwrap().clone();
        assert_eq!(row("d").bound, Some(13 * MS));
        assert_eq!(row("e").bound, Some(6 * MS));
        let b: Vec<Option<Time>> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|n| row(n).blocking)
            .collect();
        assert_eq!(b, [6, 12, 12, 12, 0, 0].map(|x| Some(x * MS)).to_vec());
        assert!(v.detail.contains("OMLP"), "{}", v.detail);
    }

    /// Every global test named in the overview applies to an `omlp` set; under `pip` they say
    /// why not.
    #[test]
    fn the_global_tests_take_omlp_only() {
        let ts = example();
        for name in [
            "gedf-gfb",
            "gedf-bcl",
            "gedf-rta",
            "gedf-baruah",
            "gfp-rta-rm",
            "gfp-rta-dm",
            "gfp-rta-file",
            "gfp-rta-lc-rm",
            "gfp-rta-lc-dm",
            "gfp-rta-lc-file",
        ] {
            let t = find(ENTRIES, name).unwrap();
            assert!(t.run(&ts).is_ok(), "{name}");
            let mut pip = ts.clone();
            pip.run.locking = Protocol::Pip;
            let na = t.run(&pip).unwrap_err();
            assert!(
                na.words(&pip).contains("omlp"),
                "{name}: {}",
                na.words(&pip)
            );
        }
    }
}
