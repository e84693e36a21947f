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
