//! Thread-safe `cpudl` for the real-threads testbed (gedf-heap paper §5, and its §7 plan to
//! reduce contention on the heap). Two implementations of [`ConcurrentCpudl`]:
//!
//! - [`LockedCpudl`]: the kernel's design — one lock around the whole max-heap + free mask
//!   (`cpudeadline.c` takes one raw spinlock in `cpudl_set` / `cpudl_clear`). Every update and
//!   every lookup serialises on it.
//! - [`ShardedCpudl`]: less contention. CPUs are split into shards of `shard_size`; each shard
//!   is a locked [`Cpudl`] over its own CPUs that, after every update and still under its lock,
//!   publishes its root `(deadline, cpu)` through a sequence lock (writers bump `seq` to odd,
//!   store, bump to even; readers retry on an odd or changed `seq`). The free-CPU mask is a
//!   bitmap of atomic words updated with `fetch_or` / `fetch_and` (as the paper's `set_bit`,
//!   §4.1). An update locks one shard only; `find` takes no lock at all: free words first, then
//!   the maximum over the published shard roots — O(m/64 + m/shard_size) reads.
//!
//! Both answer `find` with a *hint*, as in the kernel: by the time the caller acts, the CPU may
//! have changed, so a push re-checks the destination under that CPU's run-queue lock. What is
//! guaranteed: a returned `(cpu, deadline)` pair is one that `cpu` really published (never torn
//! across two updates), and at quiescence the structure is exact (`check`).
//!
//! Deadlines are `u64`, keys must be distinct across CPUs for a unique maximum (callers put the
//! CPU number in the low bits, as the tests do). Convention: each CPU is updated by one thread
//! at a time (its own, holding its run-queue lock), as in the kernel.
//!
//! Tests: `tests/cpudl_sync_stress.rs` (threads hammering both versions, invariants checked
//! during and after) and the loom model test, run with
//!
//! ```text
//! cargo test --release -p rtsched-policies --features loom --test loom_cpudl
//! ```
//!
//! (`make test-loom`). Under the feature `loom` the locks and atomics below are loom's, and
//! the tests shrink to 2–3 threads and 2 CPUs.

use super::cpudl::Cpudl;

#[cfg(feature = "loom")]
use loom::sync::{
    atomic::{AtomicU32, AtomicU64, Ordering::SeqCst},
    Mutex,
};
#[cfg(not(feature = "loom"))]
use std::sync::{
    atomic::{AtomicU32, AtomicU64, Ordering::SeqCst},
    Mutex,
};

#[inline]
fn relax() {
    #[cfg(feature = "loom")]
    loom::thread::yield_now();
    #[cfg(not(feature = "loom"))]
    std::hint::spin_loop();
}

const NO_CPU: u32 = u32::MAX;

/// A max-heap of per-CPU deadlines shared by threads.
pub trait ConcurrentCpudl: Send + Sync {
    fn cpus(&self) -> u32;
    /// `cpu`'s earliest deadline is now `dl` (it is busy).
    fn set(&self, cpu: u32, dl: u64);
    /// `cpu` has nothing to run (it is free).
    fn clear(&self, cpu: u32);
    /// The busy CPU with the latest deadline (a snapshot).
    fn maximum(&self) -> Option<(u32, u64)>;
    /// A free CPU, else the latest-deadline CPU if its deadline is later than `dl` (a hint).
    fn find(&self, dl: u64) -> Option<u32>;
    /// Exactness at quiescence: heap property, back-indices, free mask, published roots.
    fn check(&self) -> Result<(), String>;
    /// `cpu`'s deadline at quiescence.
    fn key_of(&self, cpu: u32) -> Option<u64>;
}

/// One lock around the heap (the kernel's `cpudl`).
pub struct LockedCpudl {
    heap: Mutex<Cpudl<u64>>,
    cpus: u32,
}

impl LockedCpudl {
    pub fn new(cpus: u32) -> Self {
        LockedCpudl {
            heap: Mutex::new(Cpudl::new(cpus)),
            cpus,
        }
    }
}

impl ConcurrentCpudl for LockedCpudl {
    fn cpus(&self) -> u32 {
        self.cpus
    }
    fn set(&self, cpu: u32, dl: u64) {
        self.heap.lock().unwrap().set(cpu, dl);
    }
    fn clear(&self, cpu: u32) {
        self.heap.lock().unwrap().clear(cpu);
    }
    fn maximum(&self) -> Option<(u32, u64)> {
        self.heap.lock().unwrap().maximum()
    }
    fn find(&self, dl: u64) -> Option<u32> {
        self.heap.lock().unwrap().find(dl, None).0
    }
    fn check(&self) -> Result<(), String> {
        self.heap.lock().unwrap().check()
    }
    fn key_of(&self, cpu: u32) -> Option<u64> {
        self.heap.lock().unwrap().key_of(cpu)
    }
}

struct Shard {
    heap: Mutex<Cpudl<u64>>,
    /// Sequence lock over (`max_dl`, `max_cpu`): odd while a writer publishes.
    seq: AtomicU64,
    max_dl: AtomicU64,
    /// Global CPU number of the shard's root, `NO_CPU` if the shard has no busy CPU.
    max_cpu: AtomicU32,
}

/// Sharded heaps with lock-free lookup (see the module overview).
pub struct ShardedCpudl {
    cpus: u32,
    shard_size: u32,
    shards: Vec<Shard>,
    free: Vec<AtomicU64>,
}

impl ShardedCpudl {
    pub fn new(cpus: u32, shard_size: u32) -> Self {
        assert!(shard_size > 0);
        let n = cpus.div_ceil(shard_size);
        let shards = (0..n)
            .map(|s| Shard {
                heap: Mutex::new(Cpudl::new(shard_size.min(cpus - s * shard_size))),
                seq: AtomicU64::new(0),
                max_dl: AtomicU64::new(0),
                max_cpu: AtomicU32::new(NO_CPU),
            })
            .collect();
        let free = (0..(cpus as usize).div_ceil(64))
            .map(|w| {
                let lo = w as u32 * 64;
                let bits = (cpus - lo).min(64);
                AtomicU64::new(if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                })
            })
            .collect();
        ShardedCpudl {
            cpus,
            shard_size,
            shards,
            free,
        }
    }

    #[inline]
    fn locate(&self, cpu: u32) -> (&Shard, u32, u32) {
        let s = cpu / self.shard_size;
        (
            &self.shards[s as usize],
            s * self.shard_size,
            cpu - s * self.shard_size,
        )
    }

    /// Under the shard's lock: publish its root.
    fn publish(shard: &Shard, heap: &Cpudl<u64>, base: u32) {
        let (cpu, dl) = heap.maximum().map_or((NO_CPU, 0), |(c, d)| (base + c, d));
        shard.seq.fetch_add(1, SeqCst);
        shard.max_dl.store(dl, SeqCst);
        shard.max_cpu.store(cpu, SeqCst);
        shard.seq.fetch_add(1, SeqCst);
    }

    /// A consistent snapshot of a shard's published root.
    fn root(shard: &Shard) -> Option<(u32, u64)> {
        loop {
            let s1 = shard.seq.load(SeqCst);
            if s1 & 1 == 1 {
                relax();
                continue;
            }
            let dl = shard.max_dl.load(SeqCst);
            let cpu = shard.max_cpu.load(SeqCst);
            if shard.seq.load(SeqCst) == s1 {
                return (cpu != NO_CPU).then_some((cpu, dl));
            }
            relax();
        }
    }

    fn first_free(&self) -> Option<u32> {
        for (w, word) in self.free.iter().enumerate() {
            let bits = word.load(SeqCst);
            if bits != 0 {
                return Some(w as u32 * 64 + bits.trailing_zeros());
            }
        }
        None
    }
}

impl ConcurrentCpudl for ShardedCpudl {
    fn cpus(&self) -> u32 {
        self.cpus
    }
    fn set(&self, cpu: u32, dl: u64) {
        let (shard, base, local) = self.locate(cpu);
        let mut heap = shard.heap.lock().unwrap();
        heap.set(local, dl);
        Self::publish(shard, &heap, base);
        self.free[(cpu / 64) as usize].fetch_and(!(1u64 << (cpu % 64)), SeqCst);
    }
    fn clear(&self, cpu: u32) {
        let (shard, base, local) = self.locate(cpu);
        let mut heap = shard.heap.lock().unwrap();
        heap.clear(local);
        Self::publish(shard, &heap, base);
        self.free[(cpu / 64) as usize].fetch_or(1u64 << (cpu % 64), SeqCst);
    }
    fn maximum(&self) -> Option<(u32, u64)> {
        self.shards
            .iter()
            .filter_map(Self::root)
            .max_by_key(|&(_, dl)| dl)
    }
    fn find(&self, dl: u64) -> Option<u32> {
        if let Some(c) = self.first_free() {
            return Some(c);
        }
        self.maximum().filter(|&(_, max)| dl < max).map(|(c, _)| c)
    }
    fn check(&self) -> Result<(), String> {
        for (s, shard) in self.shards.iter().enumerate() {
            let base = s as u32 * self.shard_size;
            let heap = shard.heap.lock().unwrap();
            heap.check()?;
            let want = heap.maximum().map(|(c, d)| (base + c, d));
            if Self::root(shard) != want {
                return Err(format!(
                    "shard {s}: published root {:?}, heap root {want:?}",
                    Self::root(shard)
                ));
            }
            for local in 0..heap.cpus() {
                let cpu = base + local;
                let free = self.free[(cpu / 64) as usize].load(SeqCst) & (1u64 << (cpu % 64)) != 0;
                if free != heap.key_of(local).is_none() {
                    return Err(format!(
                        "cpu {cpu}: free bit {free} disagrees with the heap"
                    ));
                }
            }
        }
        Ok(())
    }
    fn key_of(&self, cpu: u32) -> Option<u64> {
        let (shard, _, local) = self.locate(cpu);
        shard.heap.lock().unwrap().key_of(local)
    }
}
