//! docs/architecture.md "Rules every part keeps": no allocation per event on the hot path. With a counting global allocator,
//! simulating four times as long (four times the events and jobs) must not allocate more than
//! a run of a quarter of the length, beyond a small constant: every per-event structure is
//! preallocated or reused (entity slots, per-CPU state, the event heap, the records, which are
//! reserved from the expected job count).

use rtsched_model::{CriticalSection, Dag, ExecModel, Node, Region, Task, TaskSet};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations as allocated_so_far;

/// The structured set with its fork-join tasks written as DAGs (`Dag::from_regions`, sections
/// moved to their node) and a third of the others made a DAG with two sinks, a(1) -> {b(2),
/// c(1)}, b -> d(1), whose nodes fork one at a time while others run: DAG jobs reuse their
/// slots' predecessor counts.
fn dag_taskset(seconds: u64) -> TaskSet {
    let ms = 1_000_000;
    let mut ts = taskset(seconds, true);
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        if !t.regions.is_empty() {
            let regions = std::mem::take(&mut t.regions);
            for s in &mut t.sections {
                s.thread += if s.region > 0 { 1 } else { 0 };
                s.region = 0;
            }
            t.dag = Some(Dag::from_regions(&regions));
        } else if i % 3 == 1 && t.sections.is_empty() {
            let node = |name: &str, wcet| Node {
                name: name.into(),
                wcet,
            };
            let d = Dag {
                nodes: vec![
                    node("a", ms / 2),
                    node("b", ms),
                    node("c", ms / 2),
                    node("d", ms / 2),
                ],
                edges: vec![(0, 1), (0, 2), (1, 3)],
            };
            t.wcet = d.work();
            t.dag = Some(d);
        }
    }
    ts
}

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

/// The plain set with every Linux policy (by task: deadline, FIFO, RR, other in turn) and a
/// fair sleeper: every class of `linux`, the fair server and RT throttling at work.
fn classes_taskset(seconds: u64) -> TaskSet {
    use rtsched_model::{Behaviour, SchedPolicy};
    let mut ts = taskset(seconds, false);
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        t.priority = Some(10 + i as u32);
        t.policy = Some(match i % 4 {
            0 => SchedPolicy::Deadline { runtime: None },
            1 => SchedPolicy::Fifo,
            2 => SchedPolicy::Rr,
            _ => SchedPolicy::Other { nice: 0 },
        });
    }
    let ms = 1_000_000;
    ts.tasks.push(Task::fair(
        "sleeper",
        0,
        Behaviour::Sleeper {
            run: 3 * ms,
            sleep: 5 * ms,
        },
    ));
    ts
}

/// Allocations and events of one run; `kind`: 0 plain, 1 structured, 2 with DAGs, 3 every
/// Linux class.
fn allocations(spec: &str, seconds: u64, kind: u8) -> (u64, u64) {
    let structured = matches!(kind, 1 | 2 | 4 | 5 | 6 | 7 | 8 | 9);
    let mut ts = match kind {
        2 => dag_taskset(seconds),
        3 => classes_taskset(seconds),
        _ => taskset(seconds, structured),
    };
    // Locking protocols (docs/locking.md): inheritance on both resources; a ceiling on one and
    // srp's gate on the other; msrp on one and mrsp on the other (spinning, partitioned only);
    // the original ceiling protocol on both (ceiling blocking); the global OMLP on both; fmlp+
    // on both (suspension and boosting, partitioned only).
    use rtsched_model::Protocol;
    match kind {
        4 => ts.run.locking = Protocol::Pip,
        5 => ts.run.resource_locking = vec![Some(Protocol::Pcp), Some(Protocol::Srp)],
        6 => ts.run.resource_locking = vec![Some(Protocol::Msrp), Some(Protocol::Mrsp)],
        7 => ts.run.locking = Protocol::PcpOriginal,
        8 => ts.run.locking = Protocol::Omlp,
        9 => ts.run.locking = Protocol::FmlpPlus,
        _ => {}
    }
    if matches!(kind, 5 | 7) {
        // Each resource's users on one CPU (the file's `cpu`), the others spread.
        for (i, t) in ts.tasks.iter_mut().enumerate() {
            t.cpu = Some(t.sections.first().map_or(i as u32 % 4, |x| x.resource));
        }
    }
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
        // Linux's class stack on deadline-only sets (every task SCHED_DEADLINE), with GRUB.
        "linux",
        "linux:reclaim",
    ];
    for (spec, kind) in specs.iter().flat_map(|s| [(*s, 0), (*s, 1), (*s, 2)]) {
        let (short, ev_short) = allocations(spec, 5, kind);
        let (long, ev_long) = allocations(spec, 20, kind);
        assert!(
            ev_long > 3 * ev_short,
            "{spec}: the long run must have many more events"
        );
        assert!(long <= short + 16, "{spec} (kind {kind}: plain, structured, DAGs): {short} allocations for {ev_short} events, {long} for {ev_long}");
    }
    // The ceiling protocols (kinds 5 and 7) bind their users to one CPU: partitioned
    // schedulers only (a global one is refused, docs/locking.md).
    for (spec, kind) in ["gedf", "gfp:rm", "pedf:wfd"]
        .iter()
        .map(|s| (*s, 4))
        .chain([("pedf", 5), ("pfp:rm", 5), ("pfp:rm", 7)])
        .chain([("gedf", 8), ("gfp:rm", 8)])
        .chain([("pedf:wfd", 6), ("pfp:rm,partition=wfd", 6)])
        .chain([("pfp:rm,partition=wfd", 9)])
    {
        let (short, ev_short) = allocations(spec, 5, kind);
        let (long, ev_long) = allocations(spec, 20, kind);
        assert!(ev_long > 3 * ev_short, "{spec}: many more events");
        assert!(
            long <= short + 16,
            "{spec} (kind {kind}: locking): {short} allocations for {ev_short} events, {long} for {ev_long}"
        );
    }
    the_class_stack_does_not_allocate_per_event();
}

/// `linux` with all its classes at once (deadline, FIFO, RR with slices, periodic and
/// best-effort fair tasks, the fair server): no allocation per event either. (Called from the
/// one test above: the counting allocator counts every thread, so tests here must not run
/// side by side.)
fn the_class_stack_does_not_allocate_per_event() {
    for spec in ["linux", "linux:reclaim,rr_timeslice=8ms"] {
        let (short, ev_short) = allocations(spec, 5, 3);
        let (long, ev_long) = allocations(spec, 20, 3);
        assert!(ev_long > 3 * ev_short);
        assert!(
            long <= short + 16,
            "{spec}: {short} allocations for {ev_short} events, {long} for {ev_long}"
        );
    }
}
