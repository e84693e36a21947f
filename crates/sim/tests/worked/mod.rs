//! Shared by the hand-worked schedule tests: a task set from YAML, and a run's intervals in
//! whole milliseconds, the unit the hand-worked comments use.

#![allow(dead_code)] // each test file uses what it needs

use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet};

pub const MS: u64 = 1_000_000;

/// A task set written inline in a test; `name` is what a parse error would cite.
pub fn ts_named(yaml: &str, name: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, name).unwrap()
}

/// (cpu, task, thread, start ms, end ms), sorted.
pub fn ivs(r: &RunResult) -> Vec<(u32, u32, u32, u64, u64)> {
    let mut v: Vec<_> = r.intervals.iter().map(|i| (i.cpu, i.task, i.thread, i.start / MS, i.end / MS)).collect();
    v.sort();
    v
}
