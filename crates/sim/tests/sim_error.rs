//! A run's failure is a value (`SimError`): a deadlock the policy does not resolve is told
//! apart from a scheduler that does not build for the set without reading the message (a
//! sweep row's status comes from it).

use rtsched_model::results::TotalSink;
use rtsched_model::{file::parse_taskset, Format, TaskSet};
use rtsched_sim::{simulate, Failure, Options, Records, SimError, SimScratch};

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "t.yaml").unwrap()
}

fn run(ts: &TaskSet, spec: &str) -> Result<(), SimError> {
    let mut total = TotalSink::default();
    total.reset_for(ts);
    let mut scratch = SimScratch::default();
    let options = Options::spec(spec)
        .records(Records::Into(&mut total))
        .scratch(&mut scratch);
    simulate(ts, options).map(|_| ())
}

/// Two tasks that take x / y at 0 and request y / x at 1 ms: on 2 CPUs they deadlock at 1 ms.
const DEADLOCK: &str = "
platform: {cpus: 2}
run: {duration: 10}
tasks:
  - {name: a, period: 10, wcet: 4, tuf: 5, sections: [{resource: x, start: 0, length: 3}, {resource: y, start: 1, length: 1}]}
  - {name: b, period: 10, wcet: 4, tuf: 2, sections: [{resource: y, start: 0, length: 3}, {resource: x, start: 1, length: 1}]}
";

#[test]
fn an_unresolved_deadlock_is_a_deadlock_failure() {
    match run(&ts(DEADLOCK), "gedf") {
        Err(SimError::Stopped {
            source,
            failure: Failure::Deadlock(m),
        }) => {
            assert_eq!(source, "t.yaml");
            assert!(m.starts_with("deadlock at 1ms: "), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // The message is the one the text-only callers had.
    let e = run(&ts(DEADLOCK), "gedf").unwrap_err();
    assert!(String::from(e).starts_with("t.yaml: deadlock at 1ms: "));
    // A policy that resolves deadlocks aborts a job and the run goes on.
    assert_eq!(run(&ts(DEADLOCK), "ggua"), Ok(()));
}

#[test]
fn a_set_a_partitioner_cannot_place_is_unplaced_and_a_bad_spec_an_input_error() {
    let three = "
platform: {cpus: 2}
run: {duration: 10}
tasks:
  - {name: a, period: 10, wcet: 6}
  - {name: b, period: 10, wcet: 6}
  - {name: c, period: 10, wcet: 6}
";
    assert!(matches!(
        run(&ts(three), "pedf:ffd"),
        Err(SimError::Unplaced(m)) if m.starts_with("t.yaml: ")
    ));
    // A fallback chain that ends in `global` on a set it cannot partition: unplaced too.
    assert!(matches!(
        run(&ts(three), "pedf:ffd+global"),
        Err(SimError::Unplaced(_))
    ));
    // The spec's own errors, and a set the policy refuses for another reason, are not.
    assert!(matches!(
        run(&ts(three), "pedf:nope"),
        Err(SimError::Input(_))
    ));
    assert!(matches!(run(&ts(three), "pedf"), Err(SimError::Input(_))));
    assert!(
        matches!(run(&ts(three), "GEDF"), Err(SimError::Input(m)) if m.contains("did you mean 'gedf'"))
    );
}
