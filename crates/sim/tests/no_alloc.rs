//! docs/architecture.md "Rules every part keeps": no allocation per event on the hot path. With a counting global allocator,
//! simulating four times as long (four times the events and jobs) must not allocate more than
//! a run of a quarter of the length, beyond a small constant: every per-event structure is
//! preallocated or reused (entity slots, per-CPU state, the event heap, the records, which are
//! reserved from the expected job count).

use rtsched_model::{CriticalSection, ExecModel, Region, Task, TaskSet};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations as allocated_so_far;

fn taskset(seconds: u64, structured: bool) -> TaskSet {
    let ms = 1_000_000;
    let mut tasks: Vec<Task> = (0..12)
        .map(|i| Task::periodic(format!("t{i}"), (7 + 3 * i) * ms, (2 + i % 4) * ms))
        .collect();
    if structured {
        // Fork-join jobs and critical sections: forks, joins, blocking and hand-overs reuse
        // job slots, entity slots and the resources' queues too.
        for (i, t) in tasks.iter_mut().enumerate() {
            if i % 3 == 0 {
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
            if i % 2 == 0 {
                let r = (i / 2 % 2) as u32;
                let region = if t.regions.is_empty() { 0 } else { 1 };
                t.sections = vec![CriticalSection {
                    resource: r,
                    region,
                    thread: 0,
                    start: ms / 10,
                    length: ms / 5,
                }];
            }
        }
    }
    // Linear TUFs (utility 1..4, zero at 1.5 deadlines): what the UA policies weigh.
    for (i, t) in tasks.iter_mut().enumerate() {
        t.tuf = Some(rtsched_model::Tuf::Linear {
            utility: 1.0 + (i % 4) as f64,
            termination: t.deadline * 3 / 2,
        });
    }
    let mut ts = TaskSet::new(4, tasks);
    if structured {
        ts.resources = vec!["a".into(), "b".into()];
    }
    ts.run.duration = seconds * 1_000 * ms;
    ts.run.execution = ExecModel::Uniform { min: 0.5, max: 1.0 };
    ts
}

fn allocations(spec: &str, seconds: u64, structured: bool) -> (u64, u64) {
    let mut ts = taskset(seconds, structured);
    if spec == "federated" && structured {
        // A heavy task on 2 CPUs of its own (C = 14 > D = 10 ms, L = 4 ms: ⌈10/6⌉), so that
        // its cluster runs too.
        let ms = 1_000_000;
        let mut h = Task::periodic("heavy", 10 * ms, 14 * ms);
        h.regions = vec![
            Region { threads: vec![ms] },
            Region {
                threads: vec![2 * ms; 6],
            },
            Region { threads: vec![ms] },
        ];
        ts.tasks.push(h);
        ts.platform.cpus += 2;
    }
    let mut policy = rtsched_policies::build(spec, &ts).unwrap();
    let before = allocated_so_far();
    let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::policy(policy.as_mut()))
        .unwrap()
        .result;
    (allocated_so_far() - before, r.counters.events)
}

#[test]
fn allocations_do_not_grow_with_the_number_of_events() {
    let specs = [
        "gedf",
        "gnpedf",
        "gfp:rm",
        "gedf-dist:heap",
        "gfp-dist:rm",
        "gedf-seq",
        "federated",
        // The utility-accrual policies and ChronOS's global models (TUFs on the tasks below).
        "pdasa:partition=load",
        "lbesa:partition=load",
        "ggua",
        "nggua",
        "ghvdf",
        "gedf:model=ac,mapper=none",
    ];
    for (spec, structured) in specs.iter().flat_map(|s| [(*s, false), (*s, true)]) {
        let (short, ev_short) = allocations(spec, 5, structured);
        let (long, ev_long) = allocations(spec, 20, structured);
        assert!(
            ev_long > 3 * ev_short,
            "{spec}: the long run must have many more events"
        );
        assert!(long <= short + 16, "{spec} (structured: {structured}): {short} allocations for {ev_short} events, {long} for {ev_long}");
    }
}
