//! docs/architecture.md "Rules every part keeps" (no allocation per event on the hot path), with the cache model on
//! (docs/cache-model.md): its tables are sized when it is built (per cache instance, per CPU,
//! per working set), so simulating four times as long allocates no more than a quarter-length
//! run, beyond a small constant. Its own test binary: the counting allocator sees every thread.

use rtsched_model::topology::Topology;
use rtsched_model::{ExecModel, Region, Task, TaskSet};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations as allocated_so_far;

/// 16 tasks on 12 Opteron CPUs (two L3s): working sets from 16 KiB to 6 MiB (some overflow an
/// L3: evictions), four memory groups (invalidations across L3s), fork-join tasks (threads
/// sharing a working set), two passes (ping-pong), migrations under global policies.
fn taskset(seconds: u64, topology: bool) -> TaskSet {
    let ms = 1_000_000;
    let tasks: Vec<Task> = (0..16)
        .map(|i| {
            let mut t = Task::periodic(format!("t{i}"), (7 + 3 * i) * ms, (2 + i % 5) * ms);
            t.wss = Some((16 << (i % 9)) * 1024);
            t.group = (i % 3 == 0).then_some((i % 4) as u32);
            t.cpu = Some((i % 12) as u32);
            if i % 5 == 0 {
                t.regions = vec![
                    Region {
                        threads: vec![ms / 2],
                    },
                    Region {
                        threads: vec![ms / 2; 3],
                    },
                    Region {
                        threads: vec![ms / 2],
                    },
                ];
                t.wcet = 5 * ms / 2;
            }
            t
        })
        .collect();
    let mut ts = TaskSet::new(12, tasks);
    if topology {
        ts.platform.topology = Some(Topology::opteron6164x4(12).unwrap());
    }
    ts.run.duration = seconds * 1_000 * ms;
    ts.run.execution = ExecModel::Uniform { min: 0.5, max: 1.0 };
    ts.run.cache.enabled = true;
    ts.run.cache.passes = 2;
    ts
}

fn allocations(spec: &str, seconds: u64, topology: bool) -> (u64, u64, u64) {
    let ts = taskset(seconds, topology);
    let mut policy = rtsched_policies::build(spec, &ts).unwrap();
    let before = allocated_so_far();
    let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::policy(policy.as_mut()))
        .unwrap()
        .result;
    (
        allocated_so_far() - before,
        r.counters.events,
        r.counters.cache.misses[0],
    )
}

#[test]
fn the_cache_model_allocates_nothing_per_event() {
    for spec in ["gedf", "pedf", "paws", "gedf-dist:heap"] {
        for topology in [true, false] {
            let (short, ev_short, miss_short) = allocations(spec, 5, topology);
            let (long, ev_long, miss_long) = allocations(spec, 20, topology);
            assert!(
                ev_long > 3 * ev_short && miss_long > 3 * miss_short,
                "{spec}: the long run must do much more (and the model must work)"
            );
            assert!(long <= short + 16, "{spec} (topology: {topology}): {short} allocations for {ev_short} events, {long} for {ev_long}");
        }
    }
}
