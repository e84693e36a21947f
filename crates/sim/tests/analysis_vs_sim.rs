//! Sufficient schedulability tests against the simulator: whenever a test of the analysis crate
//! says "schedulable", the simulator must not find a single deadline miss under the scheduler
//! the test is about (uniprocessor EDF exact/density, FP response-time analysis and the
//! Liu-Layland / hyperbolic bounds, global EDF GFB, BCL, Bertogna & Cirinei's RTA and Baruah's
//! test, global FP response-time analyses, and each uniprocessor test per CPU of a
//! partitioned set). Task sets are synchronous and periodic (the critical instant for FP and
//! the worst case for EDF's demand), simulated over several periods of the slowest task.

use proptest::prelude::*;
use rtsched_analysis::schedulability::analyze;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Options};

const US: Time = 1_000;

/// The scheduler a test speaks for.
fn scheduler_for(test: &str) -> Option<&'static str> {
    Some(match test {
        "edf-exact" | "edf-density" | "gedf-gfb" | "gedf-bcl" | "gedf-rta" | "gedf-baruah" => {
            "gedf"
        }
        "fp-rta-rm" | "rm-liu-layland" | "rm-hyperbolic" | "gfp-rta-rm" | "gfp-rta-lc-rm" => {
            "gfp:rm"
        }
        "fp-rta-dm" | "gfp-rta-dm" | "gfp-rta-lc-dm" => "gfp:dm",
        "fp-rta-file" | "gfp-rta-file" | "gfp-rta-lc-file" => "gfp:file",
        "p-edf-exact" | "p-edf-density" => "pedf",
        "p-fp-rta-rm" | "p-rm-liu-layland" | "p-rm-hyperbolic" => "pfp:rm",
        "p-fp-rta-dm" => "pfp:dm",
        "p-fp-rta-file" => "pfp:file",
        _ => return None,
    })
}

fn arb_taskset() -> impl Strategy<Value = TaskSet> {
    (1u32..=4, 1usize..=7, any::<bool>()).prop_flat_map(|(m, n, partitioned)| {
        let task = (2u64..=40, 1u64..=60, 60u64..=100, 1u32..=9, 0u32..4);
        proptest::collection::vec(task, n).prop_map(move |ts| {
            let tasks = ts
                .iter()
                .enumerate()
                .map(|(i, &(p, cpct, dpct, prio, cpu))| {
                    let period = p * 250 * US;
                    let mut t =
                        Task::periodic(format!("t{i}"), period, (period * cpct / 100).max(1));
                    t.deadline = (period * dpct / 100).max(t.wcet);
                    t.priority = Some(prio * 10 + i as u32); // distinct
                    t.cpu = partitioned.then_some(cpu % m);
                    t
                })
                .collect();
            let mut s = TaskSet::new(m, tasks);
            let longest = s.tasks.iter().map(|t| t.period).max().unwrap();
            s.run.duration = 12 * longest;
            s
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn a_sufficient_test_that_accepts_is_never_contradicted(ts in arb_taskset()) {
        for v in analyze(&ts) {
            if v.schedulable != Some(true) {
                continue;
            }
            let Some(spec) = scheduler_for(&v.test) else { continue };
            let r = simulate(&ts, Options::spec(spec)).unwrap().result;
            let missed = r.summaries().total.missed;
            prop_assert_eq!(missed, 0, "{} said schedulable ({}) but {} missed {} deadlines", v.test, v.detail, spec, missed);
        }
    }
}

#[test]
fn every_test_name_is_mapped() {
    // A renamed or new test must be mapped above, or this property would silently skip it.
    let mut ts = TaskSet::new(
        2,
        vec![
            Task::periodic("a", 10 * US, US),
            Task::periodic("b", 20 * US, 2 * US),
        ],
    );
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        t.cpu = Some(i as u32);
        t.priority = Some(i as u32 + 1);
    }
    let mut one = ts.clone();
    one.platform.cpus = 1;
    one.tasks.iter_mut().for_each(|t| t.cpu = None);
    for v in analyze(&ts).into_iter().chain(analyze(&one)) {
        assert!(
            v.test == "necessary" || scheduler_for(&v.test).is_some(),
            "unmapped test {}",
            v.test
        );
    }
}
