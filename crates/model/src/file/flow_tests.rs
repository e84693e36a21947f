//! Triggers, segments and chains read, refused and written back (docs/chains.md).

use super::*;
use crate::task::*;
use crate::time::NS_PER_MS as MS;

fn yaml(s: &str) -> Result<TaskSet, InputError> {
    parse_taskset(s, Format::Yaml, "ts.yaml")
}
fn msg(s: &str) -> String {
    yaml(s).unwrap_err().to_string()
}

const FLOW: &str = "platform: {cpus: 1}
tasks:
  - {name: a, period: 10ms, wcet: 2ms, priority: 5}
  - {name: b, trigger: a, deadline: 10ms, wcet: 3ms, priority: 4}
  - {name: s, period: 20ms, segments: [2ms, {suspend: 1ms}, 1ms, {suspend: [1ms, 3ms]}, 1ms]}
  - {name: j, trigger: {all: [b, s]}, deadline: 20ms, wcet: 1ms}
chains:
  - {name: ab, tasks: [a, b], deadline: 6ms}
  - {name: flow, tasks: [a, s], communication: let}
";

#[test]
fn triggers_segments_and_chains_are_read() {
    let ts = yaml(FLOW).unwrap();
    let b = &ts.tasks[1];
    assert_eq!(
        b.trigger,
        Some(Trigger {
            tasks: vec![0],
            all: false
        })
    );
    assert_eq!(
        (b.period, b.deadline, b.offset),
        (10 * MS, 10 * MS, 0),
        "period inherited"
    );
    let s = &ts.tasks[2];
    assert_eq!(s.wcet, 4 * MS, "WCET = sum of the run segments");
    assert_eq!(s.regions.len(), 3);
    assert_eq!(
        s.suspensions,
        vec![
            Suspension { lo: MS, hi: MS },
            Suspension { lo: MS, hi: 3 * MS }
        ]
    );
    let j = &ts.tasks[3];
    assert_eq!(
        j.trigger,
        Some(Trigger {
            tasks: vec![1, 2],
            all: true
        })
    );
    assert_eq!(j.period, 20 * MS, "the longest of its triggers' periods");
    assert_eq!(ts.chains.len(), 2);
    assert_eq!(ts.chains[0].tasks, vec![0, 1]);
    assert_eq!(ts.chains[0].deadline, Some(6 * MS));
    assert_eq!(ts.chains[1].communication, Some(Communication::Let));
    assert!(ts.has_flow() && ts.has_structure());
}

#[test]
fn the_writer_round_trips_them() {
    let ts = yaml(FLOW).unwrap();
    let back = yaml(&to_yaml(&ts)).unwrap();
    assert_eq!(back, ts);
}

#[test]
fn a_set_without_them_is_as_before() {
    let ts = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n").unwrap();
    assert!(!ts.has_flow());
    let out = to_yaml(&ts);
    assert!(!out.contains("chains") && !out.contains("trigger") && !out.contains("segments"));
    let one =
        yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, segments: [2]}\n").unwrap();
    assert_eq!(one.tasks[0], ts.tasks[0], "one run segment is a plain task");
}

#[test]
fn bad_flows_are_refused_naming_file_task_and_field() {
    let head = "platform: {cpus: 1}\ntasks:\n";
    assert_eq!(
        msg(&format!("{head}  - {{name: a, trigger: c, deadline: 5, wcet: 1}}\n  - {{name: b, trigger: a, deadline: 5, wcet: 1}}\n  - {{name: c, trigger: b, deadline: 5, wcet: 1}}\n")),
        "ts.yaml: task 'a' (tasks[0]): field 'trigger': triggers form a cycle: a → b → c → a (a triggered task's jobs must come from a periodic or sporadic task's)"
    );
    assert_eq!(
        msg(&format!("{head}  - {{name: a, trigger: a, deadline: 5, wcet: 1}}\n")),
        "ts.yaml: task 'a' (tasks[0]): field 'trigger': triggers form a cycle: a → a (a triggered task's jobs must come from a periodic or sporadic task's)"
    );
    assert!(msg(&format!(
        "{head}  - {{name: a, trigger: x, deadline: 5, wcet: 1}}\n"
    ))
    .contains("field 'trigger': \"x\" names no task"));
    assert!(msg(&format!(
        "{head}  - {{name: a, period: 5, wcet: 1}}\n  - {{name: b, trigger: a, wcet: 1}}\n"
    ))
    .contains("task 'b' (tasks[1]): field 'deadline': missing required field"));
    assert!(msg(&format!("{head}  - {{name: a, period: 5, wcet: 1}}\n  - {{name: b, trigger: a, period: 5, deadline: 5, wcet: 1}}\n")).contains("field 'period': a triggered task"));
    assert!(msg(&format!(
        "{head}  - {{name: a, period: 5, segments: [1, 1]}}\n"
    ))
    .contains("field 'segments[1]': expected {suspend: D}"));
    assert!(msg(&format!(
        "{head}  - {{name: a, period: 5, segments: [1, {{suspend: 1}}]}}\n"
    ))
    .contains("field 'segments': must start and end with a run"));
    assert!(msg(&format!(
        "{head}  - {{name: a, period: 5, segments: [1, {{suspend: [2, 1]}}, 1]}}\n"
    ))
    .contains("field 'suspend': expected [lo, hi]"));
    assert!(msg(&format!(
        "{head}  - {{name: a, period: 5, wcet: 3, segments: [1, {{suspend: 1}}, 1]}}\n"
    ))
    .contains("field 'wcet': is 3ms but the run segments sum to 2ms"));
    let two = format!("{head}  - {{name: a, period: 5, wcet: 1}}\n  - {{name: b, period: 10, wcet: 1}}\n  - {{name: t, trigger: a, deadline: 5, wcet: 1}}\n");
    assert_eq!(
        msg(&format!("{two}chains:\n  - {{name: c, tasks: [a, b]}}\n")),
        "ts.yaml: chain 'c' (chains[0]): field 'tasks[1]': 'b' is not triggered by 'a': an event chain's tasks each trigger the next (give 'communication: implicit' or 'let' for a data-flow chain of periodic tasks)"
    );
    assert!(msg(&format!("{two}chains:\n  - {{name: c, tasks: [a, t], communication: let}}\n")).contains("field 'communication': applies to data-flow chains of periodic tasks; 't' (tasks[1]) is triggered"));
    assert!(
        msg(&format!("{two}chains:\n  - {{name: c, tasks: [a, z]}}\n"))
            .contains("chain 'c' (chains[0]): field 'tasks[1]': \"z\" names no task")
    );
    assert!(msg(&format!(
        "{two}chains:\n  - {{name: c, tasks: [a, t]}}\n  - {{name: c, tasks: [a]}}\n"
    ))
    .contains("duplicate chain name"));
    assert!(msg(&format!(
        "{two}chains:\n  - {{name: c, tasks: [a, b], communication: lett}}\n"
    ))
    .contains("unknown communication"));
}
