//! A run that streams its per-job records away (`Records::Summarised`) is the run that holds
//! them: the same records in the same order reach the sink, and the summaries accumulated
//! from the stream equal those of the held records, field for field (same order, same sums),
//! under every kind of policy, with parallel regions, critical sections, TUFs and aborts.

mod common;

use common::arb_structured_taskset;
use proptest::prelude::*;
use rtsched_model::results::JobRecord;
use rtsched_model::{Task, TaskSet, Time, Tuf};
use rtsched_sim::{simulate, Options, Records};

const MS: Time = 1_000_000;

fn same_run(ts: &TaskSet, spec: &str) -> Result<(), TestCaseError> {
    let held = simulate(ts, Options::spec(spec));
    let mut got: Vec<JobRecord> = Vec::new();
    let streamed = simulate(
        ts,
        Options::spec(spec).records(Records::Summarised(Some(&mut got))),
    );
    let (held, streamed) = match (held, streamed) {
        (Ok(h), Ok(s)) => (h.result, s.result),
        (Err(a), Err(b)) => {
            prop_assert_eq!(a, b);
            return Ok(());
        }
        (a, b) => {
            return Err(TestCaseError::fail(format!(
                "{spec}: held {:?} but streamed {:?}",
                a.map(|_| ()),
                b.map(|_| ())
            )))
        }
    };
    prop_assert!(
        streamed.jobs.is_empty(),
        "{spec}: a streamed run holds its records"
    );
    prop_assert_eq!(streamed.job_count(), held.jobs.len() as u64);
    prop_assert_eq!(
        &got,
        &held.jobs,
        "{}: the sink's records differ from the held ones",
        spec
    );
    prop_assert_eq!(streamed.summaries(), held.summaries(), "{}", spec);
    prop_assert_eq!(
        streamed.to_json_value(false),
        held.to_json_value(false),
        "{}",
        spec
    );
    Ok(())
}

fn with_tufs(mut ts: TaskSet) -> TaskSet {
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        let u = 1.0 + i as f64;
        t.tuf = Some(if i % 2 == 0 {
            Tuf::Step {
                utility: u,
                termination: t.deadline,
            }
        } else {
            Tuf::Linear {
                utility: u,
                termination: t.deadline + t.deadline / 2,
            }
        });
    }
    ts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn streamed_runs_equal_held_runs(ts in arb_structured_taskset(), which in 0usize..8, abort in any::<bool>(), tufs in any::<bool>()) {
        let mut ts = if tufs { with_tufs(ts) } else { ts };
        if abort {
            ts.run.on_miss = rtsched_model::OnMiss::Abort;
        }
        let spec = ["gedf", "pedf", "gfp:rm", "gnpedf", "gedf-seq", "paws", "dasa", "lbesa"][which];
        same_run(&ts, spec)?;
    }
}

/// An overloaded set whose low-priority task starves: its first job is undecided for the
/// whole run, so every later record waits behind it and all reach the sink at the end, in
/// release order, with the end-dependent tardiness of the unfinished ones.
#[test]
fn a_starved_job_holds_back_the_stream_until_the_end() {
    let mut ts = TaskSet::new(
        1,
        vec![
            Task::periodic("hog", 10 * MS, 10 * MS),
            Task::periodic("starved", 20 * MS, 5 * MS),
        ],
    );
    ts.run.duration = 200 * MS;
    for spec in ["gfp:rm", "gedf"] {
        same_run(&ts, spec).unwrap();
    }
    let mut got: Vec<JobRecord> = Vec::new();
    let r = simulate(
        &ts,
        Options::spec("gfp:rm").records(Records::Summarised(Some(&mut got))),
    )
    .unwrap()
    .result;
    let starved: Vec<&JobRecord> = got.iter().filter(|j| j.task == 1).collect();
    assert!(
        starved.iter().all(|j| j.finish.is_none() && j.missed),
        "{starved:?}"
    );
    assert_eq!(r.summaries().tasks[1].summary.met, 0);
}

/// A long run whose records all leave as they are decided: the count and summaries are those
/// of the held run (the memory it saves is measured by benchmarks/jobs_output.py).
#[test]
fn a_long_run_streams_every_record_once() {
    let tasks = (0..12)
        .map(|i| Task::periodic(format!("t{i}"), (10 + 7 * i) * MS, (2 + i % 3) * MS))
        .collect();
    let mut ts = TaskSet::new(4, tasks);
    ts.run.duration = 400_000 * MS;
    let held = simulate(&ts, Options::spec("gedf")).unwrap().result;
    let mut n = Counter(0, 0);
    let s = simulate(
        &ts,
        Options::spec("gedf").records(Records::Summarised(Some(&mut n))),
    )
    .unwrap()
    .result;
    assert!(held.jobs.len() > 100_000, "{}", held.jobs.len());
    assert_eq!(n.0, held.jobs.len() as u64);
    assert_eq!(
        n.1,
        held.jobs
            .iter()
            .map(|j| j.job ^ j.task as u64)
            .fold(0u64, |a, x| a.wrapping_mul(31).wrapping_add(x))
    );
    assert_eq!(s.summaries(), held.summaries());
}

struct Counter(u64, u64);
impl rtsched_model::results::JobSink for Counter {
    fn job(&mut self, rec: &JobRecord, _end: Time) {
        self.0 += 1;
        self.1 = self
            .1
            .wrapping_mul(31)
            .wrapping_add(rec.job ^ rec.task as u64);
    }
}
