//! DESIGN.md: "no allocation per event on the hot path". With a counting global allocator,
//! simulating four times as long (four times the events and jobs) must not allocate more than
//! a run of a quarter of the length, beyond a small constant: every per-event structure is
//! preallocated or reused (entity slots, per-CPU state, the event heap, the records, which are
//! reserved from the expected job count).

use rtsched_model::{ExecModel, Task, TaskSet};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn taskset(seconds: u64) -> TaskSet {
    let ms = 1_000_000;
    let tasks = (0..12).map(|i| Task::periodic(format!("t{i}"), (7 + 3 * i) * ms, (2 + i % 4) * ms)).collect();
    let mut ts = TaskSet::new(4, tasks);
    ts.run.duration = seconds * 1_000 * ms;
    ts.run.execution = ExecModel::Uniform { min: 0.5, max: 1.0 };
    ts
}

fn allocations(spec: &str, seconds: u64) -> (u64, u64) {
    let ts = taskset(seconds);
    let mut policy = rtsched_policies::build(spec, &ts).unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = rtsched_sim::simulate_policy(&ts, policy.as_mut(), false);
    (ALLOCS.load(Ordering::Relaxed) - before, r.counters.events)
}

#[test]
fn allocations_do_not_grow_with_the_number_of_events() {
    for spec in ["gedf", "gnpedf", "gfp:rm", "gedf-dist:heap", "gfp-dist:rm"] {
        let (short, ev_short) = allocations(spec, 5);
        let (long, ev_long) = allocations(spec, 20);
        assert!(ev_long > 3 * ev_short, "{spec}: the long run must have many more events");
        assert!(long <= short + 16, "{spec}: {short} allocations for {ev_short} events, {long} for {ev_long}");
    }
}
