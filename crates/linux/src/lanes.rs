//! A task's lanes: the kernel threads that run its program, one per thread of its widest
//! region. Lane 0 is the task's own thread (thread 0 of every region), lane k >= 1 its k-th
//! helper (thread k of every region that has one): the thread-per-task drivers (the kernel
//! backends, kernel:scx:POLICY) run thread k of every region on lane k.

use rtsched_model::program::Program;
use rtsched_model::Time;

/// Per-job WCET of each lane of a task. A sequential task has one lane of its WCET.
pub fn lane_wcets(p: &Program) -> Vec<Time> {
    let mut w = vec![0; p.width()];
    for region in &p.regions {
        for (k, t) in region.iter().enumerate() {
            w[k] += t.wcet;
        }
    }
    w
}
