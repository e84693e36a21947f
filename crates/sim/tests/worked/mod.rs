//! Shared by the hand-worked schedule tests: a task set from YAML, and a run's intervals in
//! whole milliseconds, the unit the hand-worked comments use.

#![allow(dead_code)] // each test file uses what it needs

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, Task, TaskSet};

pub const MS: u64 = 1_000_000;

/// A task set written inline in a test; `name` is what a parse error would cite.
pub fn ts_named(yaml: &str, name: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, name).unwrap()
}

/// (cpu, task, thread, start ms, end ms), sorted.
pub fn ivs(r: &RunResult) -> Vec<(u32, u32, u32, u64, u64)> {
    let mut v: Vec<_> = r
        .intervals
        .iter()
        .map(|i| (i.cpu, i.task, i.thread, i.start / MS, i.end / MS))
        .collect();
    v.sort();
    v
}

/// Sequential task sets (no regions): 1-6 CPUs, 1-9 tasks with periods on a 0.5 ms grid,
/// offsets, 20 ms runs; for "equals gedf on sequential sets" properties.
pub fn arb_sequential() -> impl Strategy<Value = TaskSet> {
    (
        1u32..=6,
        proptest::collection::vec((1u64..=20, 1u64..=90, 0u64..=5), 1..10),
        any::<u64>(),
    )
        .prop_map(|(m, tasks, seed)| {
            let tasks = tasks
                .into_iter()
                .enumerate()
                .map(|(i, (p, c, o))| {
                    let period = p * 500_000;
                    let mut t = Task::periodic(format!("t{i}"), period, (period * c / 100).max(1));
                    t.offset = o * 250_000;
                    t
                })
                .collect();
            let mut ts = TaskSet::new(m, tasks);
            ts.run.duration = 40 * 500_000;
            ts.run.seed = seed;
            ts
        })
}
