//! `execution_times` (a task's measured execution times, from `rtsched record --replay`):
//! job k demands times[k mod n] in place of the run's execution model; the file's checks.

use rtsched_model::file::to_yaml;
use rtsched_model::{parse_taskset, Format};
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;

/// One task, T = 10 ms, C = 4 ms, replaying 1, 3, 2 ms over five jobs in 50 ms: jobs 0-4
/// run 1, 3, 2, 1, 3 ms (the list in turn, from the start again), whatever `execution` says.
#[test]
fn jobs_replay_the_measured_times_in_turn() {
    let ts = parse_taskset(
        "platform: {cpus: 1}\nrun: {duration: 50ms, execution: {model: uniform, min: 0.1, max: 0.2}}\ntasks:\n  - {name: a, period: 10ms, wcet: 4ms, execution_times: [1ms, 3ms, 2ms]}\n",
        Format::Yaml,
        "replay.yaml",
    )
    .unwrap();
    let r = simulate(&ts, Options::spec("gedf").intervals(true))
        .unwrap()
        .result;
    let ran: Vec<u64> = r
        .jobs
        .iter()
        .map(|j| j.finish.unwrap() - j.release)
        .collect();
    assert_eq!(ran, vec![MS, 3 * MS, 2 * MS, MS, 3 * MS]);
    // Written back, read again: the same list.
    let back = parse_taskset(&to_yaml(&ts), Format::Yaml, "back.yaml").unwrap();
    assert_eq!(back.tasks[0].execution_times, vec![MS, 3 * MS, 2 * MS]);
}

#[test]
fn bad_execution_times_name_the_task_and_the_field() {
    let err = |tasks: &str| {
        parse_taskset(
            &format!("platform: {{cpus: 1}}\ntasks:\n  - {tasks}\n"),
            Format::Yaml,
            "bad.yaml",
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("{name: a, period: 10ms, wcet: 4ms, execution_times: [1ms, 0]}");
    assert!(
        e.contains("task 'a'") && e.contains("execution_times[1]") && e.contains("> 0"),
        "{e}"
    );
    let e = err("{name: a, period: 10ms, wcet: 4ms, execution_times: []}");
    assert!(e.contains("execution_times") && e.contains("got 0"), "{e}");
    let e = err("{name: a, period: 10ms, wcet: 4ms, execution_times: 3ms}");
    assert!(e.contains("execution_times") && e.contains("list"), "{e}");
    let e = err("{name: a, period: 10ms, regions: [[1ms, 1ms]], execution_times: [1ms]}");
    assert!(
        e.contains("execution_times") && e.contains("sequential"),
        "{e}"
    );
}
