//! Threads hammering the concurrent cpudl versions (common/cpudl_sync.rs). Each thread owns a
//! set of CPUs (as each CPU's run-queue lock owner in the kernel) and sets or clears their
//! deadlines while querying `maximum` and `find`. Deadlines carry their CPU in the low 10 bits,
//! so a torn read (a deadline paired with the wrong CPU) is detected. After the threads join,
//! the structure must be exact: heap property, back-indices, free mask, published shard roots,
//! and every CPU's final deadline as its owner last set it.
#![cfg(not(feature = "loom"))]

use rtsched_policies::common::cpudl_sync::{ConcurrentCpudl, LockedCpudl, ShardedCpudl};
use std::sync::Arc;

const CPU_BITS: u32 = 10;

fn stress(h: Arc<dyn ConcurrentCpudl>, threads: u32, iters: u64) {
    let m = h.cpus();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let h = Arc::clone(&h);
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9u64 ^ ((t as u64 + 1) * 0x1234_5678_9ABC_DEF1);
                let mut last: Vec<(u32, Option<u64>)> = (t..m)
                    .step_by(threads as usize)
                    .map(|c| (c, None))
                    .collect();
                for i in 0..iters {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let slot = (x % last.len() as u64) as usize;
                    let cpu = last[slot].0;
                    let dl = if x.is_multiple_of(5) {
                        None
                    } else {
                        Some((((x >> 20) % 1_000_000 + i) << CPU_BITS) | cpu as u64)
                    };
                    match dl {
                        Some(d) => h.set(cpu, d),
                        None => h.clear(cpu),
                    }
                    last[slot].1 = dl;
                    if let Some((c, d)) = h.maximum() {
                        assert_eq!(
                            (d & ((1 << CPU_BITS) - 1)) as u32,
                            c,
                            "torn read: deadline {d:#x} paired with cpu {c}"
                        );
                    }
                    if let Some(c) = h.find(x >> 24) {
                        assert!(c < m);
                    }
                }
                last
            })
        })
        .collect();
    let mut finals = Vec::new();
    for th in handles {
        finals.extend(th.join().unwrap());
    }
    h.check().unwrap();
    for (cpu, dl) in &finals {
        assert_eq!(h.key_of(*cpu), *dl, "cpu {cpu}");
    }
    let want = finals
        .iter()
        .filter_map(|(c, d)| d.map(|d| (d, *c)))
        .max()
        .map(|(d, c)| (c, d));
    assert_eq!(h.maximum(), want);
}

#[test]
fn locked_cpudl_under_threads() {
    stress(Arc::new(LockedCpudl::new(16)), 4, 50_000);
}

#[test]
fn sharded_cpudl_under_threads() {
    stress(Arc::new(ShardedCpudl::new(16, 4)), 4, 50_000);
    stress(Arc::new(ShardedCpudl::new(130, 64)), 3, 30_000);
    stress(Arc::new(ShardedCpudl::new(7, 1)), 7, 20_000);
}
