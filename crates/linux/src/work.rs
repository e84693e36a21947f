//! Synthetic work. It is cooperative: it burns the calling thread's CPU time (measured with
//! CLOCK_THREAD_CPUTIME_ID, so no calibration is needed and time stolen by other threads is
//! not counted) in short chunks, and between chunks asks whether it should stop. That is what
//! lets any policy — preemptive, partitioned, global — be enforced precisely on real cores.

use crate::sys;
use std::hint::black_box;

/// Iterations of the inner loop between clock reads: about a microsecond of arithmetic.
const CHUNK_ITERS: u32 = 200;

#[inline(never)]
fn spin(mut x: u64) -> u64 {
    for _ in 0..CHUNK_ITERS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    x
}

/// Burn up to `ns` of thread CPU time. Returns (CPU time used, completed). Stops early, between
/// chunks, as soon as `should_stop` says so. `on_chunk` sees the CPU after each chunk.
pub fn burn(ns: u64, mut should_stop: impl FnMut() -> bool, mut on_chunk: impl FnMut(u32)) -> (u64, bool) {
    let start = sys::thread_cpu_ns();
    let mut x = start | 1;
    loop {
        x = spin(x);
        let used = sys::thread_cpu_ns() - start;
        on_chunk(sys::current_cpu());
        if used >= ns {
            return (used, true);
        }
        if should_stop() {
            return (used, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burns_what_it_is_asked() {
        let (used, done) = burn(2_000_000, || false, |_| {});
        assert!(done);
        assert!((2_000_000..2_200_000).contains(&used), "{used}");
        let mut n = 0;
        let (used, done) = burn(50_000_000, || { n += 1; n > 3 }, |_| {});
        assert!(!done && used < 50_000_000);
    }
}

/// Memory-stride work over a working-set buffer (tasks with a `wss`). The amount of work is
/// fixed — a number of cache-line updates, `demand × rate`, with the rate calibrated once
/// per run on a warm cache with nothing else running — so that cache interference (a
/// co-runner evicting the shared cache, a migration to a cold core) shows as longer
/// execution, as in the LWFG paper's measurements. Buffers are shared within a memory group.
pub mod memory {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    const LINE_WORDS: usize = 8; // 64-byte cache lines
    /// Lines between consecutive touches: an odd step that defeats the next-line prefetcher
    /// while still visiting every line of the buffer (the line count is made coprime to it).
    const STEP: usize = 97;
    const CHUNK: u64 = 64;

    pub struct Buffer {
        words: Vec<AtomicU64>,
        lines: usize,
    }

    impl Buffer {
        pub fn new(bytes: u64) -> Buffer {
            let mut lines = ((bytes as usize).div_ceil(64)).max(1);
            while lines > 1 && lines.is_multiple_of(STEP) {
                lines += 1;
            }
            Buffer { words: (0..lines * LINE_WORDS).map(|i| AtomicU64::new(i as u64)).collect(), lines }
        }
        pub fn bytes(&self) -> usize {
            self.lines * 64
        }
        /// Touch `count` lines starting at line `pos`; returns the next position. Relaxed
        /// atomics compile to plain loads and stores on x86 while keeping sharing defined.
        #[inline]
        pub fn stride(&self, mut pos: usize, count: u64) -> usize {
            for _ in 0..count {
                let w = &self.words[pos * LINE_WORDS];
                w.store(w.load(Ordering::Relaxed).wrapping_mul(6364136223846793005).wrapping_add(1), Ordering::Relaxed);
                pos += STEP;
                if pos >= self.lines {
                    pos -= self.lines;
                }
            }
            pos
        }
    }

    /// A task's memory work: its (possibly shared) buffer and the calibrated rate.
    pub struct MemWork {
        pub buf: Arc<Buffer>,
        /// Cache-line updates per nanosecond on a warm cache, alone.
        pub rate: f64,
    }

    impl MemWork {
        /// Calibrate on `buf`: warm it, then time a few milliseconds of strides.
        pub fn calibrate(buf: Arc<Buffer>) -> MemWork {
            let mut pos = buf.stride(0, buf.lines as u64 * 2);
            let t0 = crate::sys::thread_cpu_ns();
            let mut n = 0u64;
            while crate::sys::thread_cpu_ns() - t0 < 5_000_000 {
                pos = buf.stride(pos, 4096);
                n += 4096;
            }
            let rate = n as f64 / (crate::sys::thread_cpu_ns() - t0) as f64;
            MemWork { buf, rate }
        }

        /// Do the work worth `ns` at the calibrated rate, stopping early between chunks if
        /// asked. Returns (work done in calibrated ns, completed).
        pub fn run(&self, ns: u64, mut should_stop: impl FnMut() -> bool, mut on_chunk: impl FnMut(u32)) -> (u64, bool) {
            let total = ((ns as f64) * self.rate).ceil().max(1.0) as u64;
            let mut done = 0u64;
            let mut pos = (ns as usize).wrapping_mul(31) % self.buf.lines;
            while done < total {
                let c = CHUNK.min(total - done);
                pos = self.buf.stride(pos, c);
                done += c;
                on_chunk(crate::sys::current_cpu());
                if done < total && should_stop() {
                    return (((done as f64) / self.rate) as u64, false);
                }
            }
            (ns, true)
        }
    }
}

/// How each task's jobs do their work in a real run: CPU burn, or memory strides (tasks with
/// a working-set size), with one buffer per memory group.
pub enum Workload {
    Cpu,
    Memory(memory::MemWork),
}

impl Workload {
    pub fn execute(&self, ns: u64, should_stop: impl FnMut() -> bool, on_chunk: impl FnMut(u32)) -> (u64, bool) {
        match self {
            Workload::Cpu => burn(ns, should_stop, on_chunk),
            Workload::Memory(m) => m.run(ns, should_stop, on_chunk),
        }
    }

    /// Build (and calibrate) every task's workload. Tasks of one memory group share a buffer
    /// as large as the group's largest working set.
    pub fn for_taskset(ts: &rtsched_model::TaskSet) -> Vec<std::sync::Arc<Workload>> {
        use std::collections::BTreeMap;
        use std::sync::Arc;
        let mut group_size: BTreeMap<u32, u64> = BTreeMap::new();
        for t in &ts.tasks {
            if let (Some(w), Some(g)) = (t.wss, t.group) {
                let e = group_size.entry(g).or_default();
                *e = (*e).max(w);
            }
        }
        let mut group_buf: BTreeMap<u32, Arc<memory::Buffer>> = BTreeMap::new();
        let mut rate_of: BTreeMap<usize, f64> = BTreeMap::new();
        ts.tasks
            .iter()
            .map(|t| match t.wss {
                None => Arc::new(Workload::Cpu),
                Some(w) => {
                    let buf = match t.group {
                        Some(g) => group_buf.entry(g).or_insert_with(|| Arc::new(memory::Buffer::new(group_size[&g]))).clone(),
                        None => Arc::new(memory::Buffer::new(w)),
                    };
                    // One calibration per buffer size.
                    let mw = match rate_of.get(&buf.bytes()) {
                        Some(&rate) => memory::MemWork { buf, rate },
                        None => {
                            let mw = memory::MemWork::calibrate(buf);
                            rate_of.insert(mw.buf.bytes(), mw.rate);
                            mw
                        }
                    };
                    Arc::new(Workload::Memory(mw))
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod memory_tests {
    use super::memory::*;
    use std::sync::Arc;

    #[test]
    fn stride_visits_every_line() {
        let b = Buffer::new(64 * 200);
        let mut seen = [false; 200];
        let mut pos = 0;
        for _ in 0..200 {
            seen[pos] = true;
            pos = b.stride(pos, 1);
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn calibrated_work_takes_about_its_demand_when_alone() {
        let mw = MemWork::calibrate(Arc::new(Buffer::new(32 * 1024)));
        let t0 = crate::sys::thread_cpu_ns();
        let (done, ok) = mw.run(3_000_000, || false, |_| {});
        let took = crate::sys::thread_cpu_ns() - t0;
        assert!(ok && done == 3_000_000);
        assert!((1_500_000..6_000_000).contains(&took), "{took}");
    }
}
