//! Loom model test of the concurrent cpudl versions (common/cpudl_sync.rs): every
//! interleaving of a few threads, each owning one CPU, that set and clear their deadlines
//! while another thread reads the maximum and finds a CPU. Checked: no torn read (a published
//! root always pairs a deadline with the CPU that set it, the CPU being in its low bits), and
//! exactness once the threads have joined.
//!
//!     cargo test --release -p rtsched-policies --features loom --test loom_cpudl
//!
//! Exploration is bounded to 3 preemptions per execution (LOOM_MAX_PREEMPTIONS overrides).
#![cfg(feature = "loom")]

use loom::sync::Arc;
use loom::thread;
use rtsched_policies::common::cpudl_sync::{ConcurrentCpudl, LockedCpudl, ShardedCpudl};

fn scenario<H: ConcurrentCpudl + 'static>(make: fn() -> H) {
    // Bounded like tokio's CI: every interleaving with at most 3 preemptions (set
    // LOOM_MAX_PREEMPTIONS to change it). Unbounded, the seqlock's retry loops make the
    // sharded model's state space too large for a test run.
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(move || {
        let h = Arc::new(make());
        let a = {
            let h = h.clone();
            thread::spawn(move || {
                h.set(0, 0x100);
                h.set(0, 0x300);
            })
        };
        let b = {
            let h = h.clone();
            thread::spawn(move || {
                h.set(1, 0x201);
                h.clear(1);
            })
        };
        // The reader: any root it sees is a (cpu, deadline) pair some writer published.
        if let Some((c, d)) = h.maximum() {
            assert_eq!((d & 0xff) as u32, c);
            assert!([0x100, 0x300, 0x201].contains(&d));
        }
        if let Some(c) = h.find(0x250) {
            assert!(c < 2);
        }
        a.join().unwrap();
        b.join().unwrap();
        h.check().unwrap();
        assert_eq!(h.maximum(), Some((0, 0x300)));
        assert_eq!(h.key_of(1), None);
        assert_eq!(h.find(0x50), Some(1), "cpu 1 is free");
    });
}

#[test]
fn locked_cpudl_interleavings() {
    scenario(|| LockedCpudl::new(2));
}

#[test]
fn sharded_cpudl_interleavings() {
    // One CPU per shard: the maximum is taken across two seqlock-published roots.
    scenario(|| ShardedCpudl::new(2, 1));
}
