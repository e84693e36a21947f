//! A run in the buffers an earlier run left (`Options::scratch`, as a sweep batch runs its
//! rows) is the run a fresh simulator makes: the same records reach the sink in the same order
//! and the results are equal, whatever ran before in those buffers — more or fewer CPUs and
//! tasks, parallel regions, critical sections, TUFs, aborts, another policy, a run that failed.

mod common;

use common::arb_structured_taskset;
use proptest::prelude::*;
use rtsched_model::results::JobRecord;
use rtsched_model::{TaskSet, Tuf};
use rtsched_sim::{simulate, Options, Records, SimScratch};

const SPECS: [&str; 9] = [
    "gedf", "pedf", "gfp:rm", "gnpedf", "gedf-seq", "paws", "dasa", "lbesa", "pedf:ffd",
];

fn varied(mut ts: TaskSet, abort: bool, tufs: bool) -> TaskSet {
    if tufs {
        for (i, t) in ts.tasks.iter_mut().enumerate() {
            t.tuf = Some(Tuf::Step {
                utility: 1.0 + i as f64,
                termination: t.deadline,
            });
        }
    }
    if abort {
        ts.run.on_miss = rtsched_model::OnMiss::Abort;
    }
    ts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn runs_in_reused_buffers_equal_fresh_runs(
        runs in prop::collection::vec((arb_structured_taskset(), 0..SPECS.len(), any::<bool>(), any::<bool>()), 2..6),
    ) {
        let mut scratch = SimScratch::default();
        for (i, (ts, which, abort, tufs)) in runs.into_iter().enumerate() {
            let ts = varied(ts, abort, tufs);
            let spec = SPECS[which];
            let mut fresh: Vec<JobRecord> = Vec::new();
            let mut reused: Vec<JobRecord> = Vec::new();
            let a = simulate(&ts, Options::spec(spec).records(Records::Into(&mut fresh)));
            let b = simulate(&ts, Options::spec(spec).records(Records::Into(&mut reused)).scratch(&mut scratch));
            match (a.map(|o| o.result), b.map(|o| o.result)) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(&reused, &fresh, "run {} ({}): the records differ", i, spec);
                    prop_assert_eq!(a.to_json_value(false), b.to_json_value(false), "run {} ({})", i, spec);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => return Err(TestCaseError::fail(format!("run {i} ({spec}): fresh {:?} but reused {:?}", a.map(|_| ()), b.map(|_| ())))),
            }
        }
    }
}
