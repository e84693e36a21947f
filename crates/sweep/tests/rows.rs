//! A sweep's rows: made by the catalogue's row columns, equal to what a run holding its records
//! gives, and typed outcomes for rows that do not run.

use rtsched_model::results::columns::{self, Place, Value};
use rtsched_model::results::{Cell, TotalSink};
use rtsched_sim::{simulate, Options, SimScratch};
use rtsched_sweep::batch::{run_sets, Values};
use rtsched_sweep::{make_set, metric_columns, Outcome, SetOptions, Status};

const OPTIONS: SetOptions<'static> = SetOptions {
    duration_ns: 200_000_000,
    on_miss: "continue",
    run: None,
    topology: None,
    source: "<test>",
};

/// The metrics are the row's columns read from a run, in the table's order.
#[test]
fn a_rows_metrics_are_the_catalogues() {
    let want: Vec<&str> = columns::columns(Place::Row)
        .iter()
        .filter(|c| matches!(c.value, Value::Summary(_) | Value::Run(_)))
        .map(|c| c.name)
        .collect();
    let got: Vec<&str> = metric_columns().iter().map(|c| c.name).collect();
    assert_eq!(got, want);
    assert_eq!(got.first(), Some(&"jobs"));
    assert!(got.contains(&"overhead_ns") && !got.contains(&"status"));
}

/// A row's run (records folded into a total as they end, buffers reused) gives every metric the
/// same run holding its records gives, under several schedulers and with the models on.
#[test]
fn a_row_is_the_held_runs_summary() {
    let run = r#"{"overheads": {"decision": "2us", "context_switch": "5us", "tick": "1us", "tick_period": "4ms"}, "cache": true}"#;
    let o = SetOptions {
        run: Some(run),
        topology: Some("\"opteron6164x4\""),
        ..OPTIONS
    };
    // LWFG's MWH sets carry working sets of 4-8 MiB: the cache model has misses to count.
    let ts = make_set("mwh", "m=48,U=30", 7, &o).unwrap();
    assert_eq!((ts.run.duration, ts.run.seed), (200_000_000, 7));
    let (mut total, mut scratch) = (TotalSink::default(), SimScratch::default());
    for sched in ["gedf", "pedf:ffd", "paws", "ggua"] {
        let held = simulate(&ts, Options::spec(sched)).unwrap().result;
        let summary = held.total_summary();
        let Outcome::Ran(row) = rtsched_sweep::run(&ts, sched, &mut total, &mut scratch) else {
            panic!("{sched} did not run")
        };
        for c in metric_columns() {
            assert_eq!(
                row.cell(c),
                c.of_run(&held, &summary).unwrap(),
                "{sched} {}",
                c.name
            );
        }
        // The models' columns are not all zero: the comparison means something.
        for name in ["jobs", "misses_llc", "overhead_ns"] {
            let c = metric_columns().iter().find(|c| c.name == name).unwrap();
            assert!(
                matches!(row.cell(c), Cell::Uint(n) if n > 0),
                "{sched} {name}"
            );
        }
    }
}

/// Rows that do not run say why, typed; their metrics are null in the batch, a test's too.
#[test]
fn rows_that_do_not_run_are_typed_and_empty() {
    let schedulers: Vec<String> = ["gedf", "pedf:ffd", "test:gedf-gfb"]
        .map(String::from)
        .to_vec();
    // U = 3.9 on 4 CPUs, 5 tasks: first-fit decreasing cannot place every one of these.
    let b = run_sets(
        &schedulers,
        &["randfixedsum".into()],
        &OPTIONS,
        &[0],
        &["m=4,n=5,U=3.9,tmin=10ms,tmax=20ms".into()],
        &[3],
        &[1, 1, 1],
    )
    .unwrap();
    assert_eq!(b.rows(), 3);
    assert_eq!(b.status[0], Status::Ok as u8);
    assert_eq!(b.status[1], Status::PartitionFailed as u8);
    assert_eq!(b.status[2], Status::Ok as u8, "a test's row");
    assert_eq!(b.errors.len(), 1);
    for m in &b.metrics {
        // A chain metric is null in a row that ran too: this set has no chains.
        let ran = m.column.measured == columns::Measured::Chains;
        assert_eq!(m.null, [ran, true, true], "{}", m.column.name);
        let len = match &m.values {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
        };
        assert_eq!(len, 3);
    }
    let bad = run_sets(
        &schedulers,
        &["randfixedsum".into()],
        &OPTIONS,
        &[0],
        &["m=4,n=5,U=9".into()],
        &[3],
        &[1, 1, 1],
    );
    assert!(bad.is_err(), "a generator's error is the batch's");
}

/// One exit code per failure kind: a run the ledger stopped has the status of its failure
/// whether it was simulated (`Status::of` a `SimError`) or real (`Status::stopped`, what
/// `_core` gives a real run's `RunError::Stopped`); every status but `run-failed` (the run
/// failed on the machine, 1) is the input's (2), a deadlock among them.
#[test]
fn a_failure_has_one_status_and_exit_code_simulated_or_real() {
    use rtsched_sim::{Failure, SimError};
    let kinds = [
        (
            Failure::Deadlock("deadlock at 1ms".into()),
            Status::Deadlock,
        ),
        (Failure::Capacity("too many jobs".into()), Status::TooLong),
    ];
    for (failure, status) in kinds {
        assert_eq!(Status::stopped(&failure), status);
        let sim = SimError::Stopped {
            source: "t.yaml".into(),
            failure,
        };
        assert_eq!(Status::of(&sim), status);
    }
    assert_eq!(
        Status::of(&SimError::Unplaced("x".into())),
        Status::PartitionFailed
    );
    let codes: Vec<(&str, u8)> = Status::ALL
        .iter()
        .map(|s| (s.name(), s.exit_code()))
        .collect();
    assert_eq!(
        codes,
        [
            ("ok", 0),
            ("partition-failed", 2),
            ("deadlock", 2),
            ("too-long", 2),
            ("not-applicable", 2),
            ("run-failed", 1)
        ]
    );
}

/// A row of a set with chains (docs/chains.md "Sweeps") carries each chain metric as the
/// largest over the run's chain instances, the held run's: event chains a latency and no data
/// age, LET chains a data age and a reaction time and no latency.
#[test]
fn a_rows_chain_metrics_are_the_largest_instance() {
    let (mut total, mut scratch) = (TotalSink::default(), SimScratch::default());
    for (gen, params, has) in [
        ("ros2-tree", "m=2,n=8,U=1,p_join=0.3", [true, false, false]),
        (
            "waters2015-chains",
            "m=1,U=0.5,chains=4,communication=let",
            [false, true, true],
        ),
    ] {
        let ts = make_set(gen, params, 5, &OPTIONS).unwrap();
        let held = simulate(&ts, Options::spec("gedf")).unwrap().result;
        let Outcome::Ran(row) = rtsched_sweep::run(&ts, "gedf", &mut total, &mut scratch) else {
            panic!("{gen} did not run")
        };
        let largest: [Option<u64>; 3] = [
            held.chains.iter().filter_map(|c| c.latency).max(),
            held.chains.iter().filter_map(|c| c.data_age).max(),
            held.chains.iter().filter_map(|c| c.reaction_time).max(),
        ];
        let names = [
            "chain_latency_max_ns",
            "chain_data_age_max_ns",
            "chain_reaction_time_max_ns",
        ];
        for ((name, want), has) in names.iter().zip(largest).zip(has) {
            let c = metric_columns().iter().find(|c| c.name == *name).unwrap();
            assert_eq!(want.is_some(), has, "{gen} {name}");
            assert_eq!(
                row.cell(c),
                want.map_or(Cell::Null, Cell::Uint),
                "{gen} {name}"
            );
        }
    }
}

/// A `locking` axis's entry `SCHEDULER@PROTOCOL` runs the set under the protocol: the same set
/// under `none` and `pcp` (one CPU, every task on R) blocks directly under the plain mutex and
/// at the ceiling under `pcp`; an unknown protocol is that row's `not-applicable`, the others run.
#[test]
fn a_locking_entry_runs_the_set_under_its_protocol() {
    use rtsched_model::Protocol;
    assert_eq!(
        rtsched_sweep::split_locking("pfp:ffd"),
        Ok(("pfp:ffd", None))
    );
    assert_eq!(
        rtsched_sweep::split_locking("test:p-fp-rta-rm@fmlp+"),
        Ok(("test:p-fp-rta-rm", Some(Protocol::FmlpPlus)))
    );
    let schedulers: Vec<String> = ["gfp:rm@none", "gfp:rm@pcp", "gfp:rm@nope"]
        .map(String::from)
        .to_vec();
    let b = run_sets(
        &schedulers,
        &["uunifast".into()],
        &OPTIONS,
        &[0],
        &["n=4,U=0.7,tmin=10ms,tmax=40ms,resources=1,p_acc=1,csl=1ms..3ms".into()],
        &[5],
        &[1, 1, 1],
    )
    .unwrap();
    assert_eq!(
        b.status,
        [
            Status::Ok as u8,
            Status::Ok as u8,
            Status::NotApplicable as u8
        ]
    );
    assert!(b.errors[0].1.contains("unknown locking protocol 'nope'"));
    let col = |name: &str| {
        let m = b.metrics.iter().find(|m| m.column.name == name).unwrap();
        match &m.values {
            Values::Int(v) => v.clone(),
            Values::Float(_) => panic!("{name} is an integer column"),
        }
    };
    let (direct, ceiling) = (col("max_blocked_ns"), col("max_blocked_ceiling_ns"));
    assert!(
        direct[0] > 0 && ceiling[0] == 0,
        "none: {direct:?} {ceiling:?}"
    );
    assert!(
        direct[1] == 0 && ceiling[1] > 0,
        "pcp: {direct:?} {ceiling:?}"
    );
}
