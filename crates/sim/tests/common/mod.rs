//! Shared by the property tests: random task sets (proptest strategies).

use proptest::prelude::*;
use rtsched_model::{CriticalSection, Dag, ExecModel, Node, OnMiss, Region, Task, TaskSet, Time};

const US: Time = 1_000;

/// Sequential task sets: 1-6 CPUs, 1-10 tasks with periods on a small grid, constrained
/// deadlines, offsets, fixed priorities and a CPU each (for the partitioned policies), three
/// execution-time models, `on_miss` continue or abort.
pub fn arb_taskset() -> impl Strategy<Value = TaskSet> {
    (1u32..=6, 1usize..=10, any::<u64>(), 0u8..3, any::<bool>()).prop_flat_map(
        |(m, n, seed, exec, abort)| {
            // Periods from a small grid so that equal deadlines and simultaneous events are common.
            let task = (1u64..=12, 1u64..=100, 0u64..=4, 50u64..=100, 1u32..=4).prop_map(
                move |(p, cpct, off, dpct, prio)| {
                    let period = p * 500 * US;
                    let wcet = (period * cpct / 100).max(1);
                    let mut t = Task::periodic("t", period, wcet);
                    t.deadline = (period * dpct / 100).max(wcet.min(period));
                    t.offset = off * 250 * US;
                    t.priority = Some(prio);
                    t
                },
            );
            (
                proptest::collection::vec(task, n),
                proptest::collection::vec(0..m, n),
            )
                .prop_map(move |(mut tasks, cpus)| {
                    for (i, t) in tasks.iter_mut().enumerate() {
                        t.name = format!("t{i}");
                        t.cpu = Some(cpus[i]);
                    }
                    let mut ts = TaskSet::new(m, tasks);
                    ts.run.duration = 30 * 500 * US;
                    ts.run.seed = seed;
                    ts.run.on_miss = if abort {
                        OnMiss::Abort
                    } else {
                        OnMiss::Continue
                    };
                    ts.run.execution = match exec {
                        0 => ExecModel::Wcet,
                        1 => ExecModel::Uniform { min: 0.3, max: 1.0 },
                        _ => ExecModel::Overrun {
                            ratio: 1.5,
                            probability: 0.3,
                        },
                    };
                    ts
                })
        },
    )
}

/// The same task sets with structure: some tasks split into regions of threads, and some
/// threads given critical sections on up to three shared resources. Nested sections request
/// resources in increasing order (the global order the file loader demands).
pub fn arb_structured_taskset() -> impl Strategy<Value = TaskSet> {
    (
        arb_taskset(),
        proptest::collection::vec(
            (
                0u8..4,
                1usize..4,
                1usize..4,
                0u32..3,
                0u8..3,
                1u64..60,
                1u64..40,
            ),
            10,
        ),
    )
        .prop_map(|(mut ts, shapes)| {
            ts.resources = vec!["R0".into(), "R1".into(), "R2".into()];
            for (t, &(kind, nreg, nthr, res, nest, at_pct, len_pct)) in
                ts.tasks.iter_mut().zip(&shapes)
            {
                if kind >= 2 {
                    // Regions: nreg regions of up to nthr threads sharing the WCET.
                    let pieces = (nreg * nthr) as u64;
                    let each = (t.wcet / pieces).max(1);
                    t.regions = (0..nreg)
                        .map(|r| Region {
                            threads: vec![each; 1 + (r + nthr) % nthr.max(1)],
                        })
                        .collect();
                    t.wcet = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
                }
                if kind % 2 == 1 {
                    let (region, thread) = (t.regions.len().saturating_sub(1) as u32, 0u32);
                    let tw = if t.regions.is_empty() {
                        t.wcet
                    } else {
                        t.regions[region as usize].threads[0]
                    };
                    let start = tw * at_pct / 100;
                    let length = ((tw - start) * len_pct / 100).max(1).min(tw - start);
                    if length == 0 {
                        continue;
                    }
                    t.sections.push(CriticalSection {
                        resource: res,
                        region,
                        thread,
                        start,
                        length,
                    });
                    if nest > 0 && res < 2 && length >= 3 {
                        // A nested section on a higher-numbered resource.
                        t.sections.push(CriticalSection {
                            resource: res + 1,
                            region,
                            thread,
                            start: start + 1,
                            length: length - 2,
                        });
                    }
                }
            }
            ts
        })
}

/// The sequential sets with some tasks made random DAGs (docs/dag.md): 1-7 nodes sharing the
/// task's WCET unevenly, an edge (i, j), i < j, for each set bit; a node left apart is linked
/// from node 0, so the graph is connected but may have several sources and sinks. Some DAGs
/// get a critical section in one node.
#[allow(dead_code)] // used by the tests that run DAG sets, not by every one that shares this
pub fn arb_dag_taskset() -> impl Strategy<Value = TaskSet> {
    (
        arb_taskset(),
        proptest::collection::vec(
            (
                any::<bool>(),
                proptest::collection::vec(1u64..=9, 1..=7),
                any::<u32>(),
                0u32..3,
                any::<bool>(),
            ),
            10,
        ),
    )
        .prop_map(|(mut ts, shapes)| {
            ts.resources = vec!["R0".into(), "R1".into(), "R2".into()];
            for (t, (dag, weights, bits, res, section)) in ts.tasks.iter_mut().zip(shapes) {
                if !dag {
                    continue;
                }
                let total: u64 = weights.iter().sum();
                let n = weights.len();
                let mut g = Dag::default();
                for (k, w) in weights.iter().enumerate() {
                    g.nodes.push(Node {
                        name: format!("n{k}"),
                        wcet: (t.wcet * w / total).max(1),
                    });
                }
                let mut bit = 0;
                for j in 1..n as u32 {
                    for i in 0..j {
                        if bits >> (bit % 32) & 1 == 1 {
                            g.edges.push((i, j));
                        }
                        bit += 1;
                    }
                }
                for k in g.unconnected() {
                    g.edges.push((0, k));
                }
                t.wcet = g.work();
                if section {
                    let k = (bits as usize) % n;
                    let w = g.nodes[k].wcet;
                    t.sections.push(CriticalSection {
                        resource: res,
                        region: 0,
                        thread: k as u32,
                        start: w / 4,
                        length: (w / 2).max(1).min(w - w / 4),
                    });
                }
                t.dag = Some(g);
            }
            ts
        })
}
