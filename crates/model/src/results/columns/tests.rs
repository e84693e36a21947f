//! The catalogue's own rules, and the layouts of schema 4 it must keep (hand-written here from
//! the outputs as they were before the catalogue: a change of order is caught).

use super::*;
use crate::results::schema::{Counters, HwCounters, JobRecord, RunResult};
use crate::task::{Task, TaskSet};

fn names(p: Place) -> Vec<&'static str> {
    columns(p).iter().map(|c| c.name).collect()
}

#[test]
fn names_are_unique_within_a_place() {
    for p in Place::ALL {
        let mut seen = std::collections::BTreeSet::new();
        for n in names(p) {
            assert!(seen.insert(n), "{n} twice in {p:?}");
        }
    }
}

#[test]
fn every_layout_names_columns_of_its_place() {
    for (p, l) in [(Place::Row, ROW_LAYOUT), (Place::Table, TABLE_LAYOUT)] {
        let here = names(p);
        for n in l {
            assert!(here.contains(n), "{n} of {p:?}'s layout is no column there");
        }
    }
    let job_keys: Vec<&str> = DOC.job.iter().map(|k| k.key).collect();
    for n in JOB_DOC_LAYOUT {
        assert!(job_keys.contains(n), "{n} is no key of a job's record");
    }
}

/// `now` begins with `then`, in its order: the columns of schema 4 keep their places, and a
/// column added since comes after them.
fn extends(now: &[&str], then: &str) {
    let then: Vec<&str> = then.split(',').collect();
    assert!(
        now.len() >= then.len() && now[..then.len()] == then[..],
        "schema 4's columns moved:\n  were {then:?}\n  are  {now:?}"
    );
}

/// The per-job CSV's header, the results document's keys, the sweep row's and the comparison
/// table's columns and `Result.summary`'s counters as schema 4 wrote them before the catalogue
/// (with `pulls`, added within schema 4 beside `migrations`), first and in that order.
#[test]
fn the_outputs_keep_schema_4s_order() {
    let csv = jobs_csv_header();
    extends(
        &csv.split(',').collect::<Vec<_>>(),
        "scheduler,task,job,release_ns,deadline_ns,start_ns,finish_ns,response_ns,tardiness_ns,demand_ns,cpus,preemptions,migrations,pulls,context_switches,missed,aborted,blocked_ns,blocked_inheritance_ns,blocked_ceiling_ns,spin_ns,aborted_at_ns,utility,max_utility,exec_ns,overhead_ns,stall_ns,misses_l1,misses_l2,misses_llc,hw_instructions,hw_cycles,hw_llc_misses",
    );
    let keys = |k: &[DocKey]| k.iter().map(|k| k.key).collect::<Vec<_>>();
    extends(&keys(&DOC.job), &JOB_DOC_LAYOUT.join(","));
    let summary = "jobs,completed,met,missed,aborted,dsr,max_tardiness_ns,mean_tardiness_ns,max_response_ns,mean_response_ns,p99_response_ns,preemptions,migrations,pulls,context_switches,max_blocked_ns,total_blocked_ns,max_blocked_inheritance_ns,max_blocked_ceiling_ns,max_spin_ns,total_spin_ns,accrued_utility,possible_utility,aur,exec_inflation,ipc_proxy,misses";
    extends(&keys(&DOC.total), summary);
    extends(&keys(&DOC.task), summary);
    extends(
        &keys(&DOC.counters),
        "scheduler_invocations,events,releases,steals,steal_attempts,failed_steals,priority_inversions,priority_inversion_ns,inverted_jobs,inversion_job_ns,inversion_job_max_ns,inversion_job_p99_ns,kernel_migrations,deadlocks,overheads,cache",
    );
    extends(&names(Place::Row), &ROW_LAYOUT.join(","));
    extends(&names(Place::Table), &TABLE_LAYOUT.join(","));
    // Result.summary's counters (RUN_COUNTERS in result.py).
    let run: Vec<&str> = columns(Place::Run)
        .iter()
        .filter(|c| matches!(c.value, Value::Run(_)))
        .map(|c| c.name)
        .collect();
    extends(
        &run,
        "scheduler_invocations,steals,steal_attempts,failed_steals,priority_inversions,priority_inversion_ns,inverted_jobs,inversion_job_ns,inversion_job_max_ns,inversion_job_p99_ns,kernel_migrations,deadlocks",
    );
}

/// The check above fails on a column moved among schema 4's (its negative control).
#[test]
#[should_panic(expected = "schema 4's columns moved")]
fn a_column_moved_is_caught() {
    extends(&["jobs", "met", "completed"], "jobs,completed,met");
}

#[test]
fn the_ledger_counters_are_those_the_ledger_measures() {
    assert_eq!(
        LEDGER_COUNTERS.join(","),
        "steals,steal_attempts,failed_steals,priority_inversions,priority_inversion_ns,inverted_jobs,inversion_job_ns,inversion_job_max_ns,inversion_job_p99_ns,kernel_migrations,deadlocks,helping_migrations"
    );
}

/// A run whose every value is set: two jobs (one finished, one not, with hardware counters),
/// counters all non-zero.
fn run() -> RunResult {
    let ts = TaskSet::new(2, vec![Task::periodic("a", 10, 1)]);
    let mut r = RunResult::new("sim", "gedf", &ts);
    r.end = 100;
    let mut done = JobRecord {
        release: 0,
        deadline: 10,
        demand: 1,
        start: Some(0),
        finish: Some(3),
        exec: 2,
        hw: Some(HwCounters {
            instructions: 5,
            cycles: 6,
            llc_misses: 7,
        }),
        max_utility: 1.0,
        ..Default::default()
    };
    done.cpus.insert(1);
    let late = JobRecord {
        job: 1,
        release: 10,
        deadline: 20,
        missed: true,
        ..Default::default()
    };
    r.jobs = vec![done, late];
    r.counters = Counters {
        scheduler_invocations: 3,
        steals: 1,
        steal_attempts: 2,
        failed_steals: 1,
        ..Default::default()
    };
    r.measurements
        .insert("policy_ns_per_invocation".into(), 12.5);
    r
}

/// Every column's value is of its kind, and null only where it may be.
#[test]
fn cells_are_of_their_columns_kind() {
    let r = run();
    let total = r.total_summary();
    for c in COLUMNS {
        let cells: Vec<Cell<'_>> = match c.value {
            Value::Job(f) => r.jobs.iter().map(|j| f(j, r.end)).collect(),
            Value::Summary(_) | Value::Run(_) | Value::Scheduler => {
                vec![c.of_run(&r, &total).unwrap()]
            }
            Value::Task | Value::Sweep | Value::ChainName | Value::Chain(_) => continue,
        };
        for v in cells {
            let ok = match (c.kind, &v) {
                (_, Cell::Null) => c.nullable || c.measured == Measured::Timed,
                (Kind::Int, Cell::Uint(_) | Cell::Int(_)) => true,
                (Kind::Float, Cell::Float(_)) => true,
                (Kind::Bool, Cell::Bool(_)) => true,
                (Kind::Text, Cell::Text(_)) => true,
                (Kind::Cpus, Cell::Cpus(_)) => true,
                (Kind::Object, Cell::Object(_)) => true,
                _ => false,
            };
            assert!(ok, "{}: {v:?} in a {:?} column", c.name, c.kind);
        }
    }
}

/// A column a run lists as unmeasured is null wherever it is read: `of_run` (Python's
/// `Result.values`, a sweep's row) and the document; the same run with nothing unmeasured
/// has its value.
#[test]
fn what_a_run_did_not_measure_is_null() {
    let mut r = run();
    let total = r.total_summary();
    let steals = COLUMNS.iter().find(|c| c.name == "steals").unwrap();
    assert_eq!(steals.of_run(&r, &total), Some(Cell::Uint(1)));
    assert_eq!(r.to_json_value(false)["counters"]["steals"], 1);
    r.unmeasured = &LEDGER_COUNTERS;
    assert_eq!(steals.of_run(&r, &total), Some(Cell::Null));
    assert!(r.to_json_value(false)["counters"]["steals"].is_null());
    // Measured by every driver: never null for it.
    let jobs = COLUMNS.iter().find(|c| c.name == "jobs").unwrap();
    assert_eq!(jobs.of_run(&r, &total), Some(Cell::Uint(2)));
}

#[test]
fn the_table_shows_columns_by_what_runs_have() {
    let readable: Vec<&str> = COLUMNS
        .iter()
        .filter(|c| matches!(c.value, Value::Summary(_) | Value::Run(_)))
        .map(|c| c.name)
        .collect();
    for c in columns(Place::Table) {
        let t = c.table.unwrap();
        match t.show {
            Show::IfAny(n) | Show::IfNotOne(n) | Show::IfBelowOne(n) | Show::IfPresent(n) => {
                assert!(
                    readable.contains(&n),
                    "{}: shown by {n}, no run's value",
                    c.name
                )
            }
            Show::Always | Show::OnRequest => {}
        }
    }
}

#[test]
fn document_paths() {
    let path = |name: &str, source: &str| {
        COLUMNS
            .iter()
            .find(|c| c.name == name && c.value.source() == source)
            .unwrap()
            .doc_path()
    };
    assert_eq!(path("misses_llc", "job").as_deref(), Some("misses[2]"));
    assert_eq!(path("misses_l1", "summary").as_deref(), Some("misses[0]"));
    assert_eq!(path("hw_cycles", "job").as_deref(), Some("hw.cycles"));
    assert_eq!(path("response_ns", "job"), None);
    assert_eq!(path("dsr", "summary").as_deref(), Some("dsr"));
}
