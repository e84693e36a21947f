//! The spin lock of a global `msrp` or `mrsp` resource under `kernel:fifo` (docs/locking.md,
//! "Real runs"): a FIFO ticket lock — the FIFO spin lock of Gai, Lipari & Di Natale's MSRP
//! (RTSS 2001) and of Burns & Wellings' MrsP (ECRTS 2013), as the ledger's rule spins
//! (crates/runtime/src/ledger/locking.rs) — with the time its taker busy-waited.
//!
//! The lock is `spin::mutex::TicketMutex` (the `spin` crate): a request takes the next ticket
//! (`fetch_add`) and busy-waits until the ticket being served is its own, so requests are
//! served in the order they were made — what both protocols need and what their spin bound
//! (one section per other CPU) rests on. The crate is written for exactly this, so nothing is
//! hand-written here but the measurement.
//!
//! The measurement: the time the taker spun, on the thread's CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`) around the busy-wait, so a spinner preempted on its CPU (under
//! `mrsp`, by a job above the local ceiling) does not count the time it was off it — as the
//! simulator counts a spin only while the job is on its CPU. A free lock is taken without a
//! spin (0). The priority a spinner runs at is its caller's (`locks.rs` raises it first).

use crate::sys;
use rtsched_model::Time;
use spin::mutex::{TicketMutex, TicketMutexGuard};
use spin::relax::{RelaxStrategy, Spin};

/// One resource's FIFO spin lock; `R` is how a waiter busy-waits (a `pause` per look).
pub(super) struct SpinLock<R = Spin>(TicketMutex<(), R>);

/// A taken spin lock: dropping it hands the lock to the next ticket.
pub(super) type SpinGuard<'a, R = Spin> = TicketMutexGuard<'a, (), R>;

impl<R: RelaxStrategy> SpinLock<R> {
    pub(super) const fn new() -> Self {
        SpinLock(TicketMutex::new(()))
    }

    /// Take the lock, in FIFO order of the requests; with the thread CPU time spent spinning
    /// for it (0 if it was free).
    pub(super) fn lock(&self) -> (SpinGuard<'_, R>, Time) {
        if let Some(g) = self.0.try_lock() {
            return (g, 0);
        }
        let t0 = sys::thread_cpu_ns();
        let g = self.0.lock();
        (g, sys::thread_cpu_ns().saturating_sub(t0))
    }
}

#[cfg(test)]
mod tests {
    //! The lock's FIFO order, made deterministic: each waiter is started only once the one
    //! before it is seen busy-waiting (its ticket taken), through a relax strategy that tells.
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};

    /// The waiters seen spinning, as a bit per waiter (its thread-local number).
    static SPINNING: AtomicU32 = AtomicU32::new(0);
    thread_local!(static WHO: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });

    struct Tell;
    impl RelaxStrategy for Tell {
        fn relax() {
            SPINNING.fetch_or(1 << WHO.with(|w| w.get()), Ordering::SeqCst);
            // Kind to the tests beside it: five waiters busy-wait on two CPUs.
            std::thread::yield_now();
        }
    }

    fn wait_until(bit: u32) {
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while SPINNING.load(Ordering::SeqCst) & (1 << bit) == 0 {
            assert!(
                std::time::Instant::now() < give_up,
                "waiter {bit} never spun"
            );
            std::thread::yield_now();
        }
    }

    /// Five waiters queued while the lock is held are served in the order they asked, not
    /// by who looks first when it is freed; each spun (> 0), the uncontended take did not.
    #[test]
    fn waiters_are_served_in_the_order_they_asked() {
        // Not beside the tests that time real runs (its waiters take CPUs from them).
        let _one = crate::options::real_threads_lock();
        let lock = Arc::new(SpinLock::<Tell>::new());
        let order = Arc::new(Mutex::new(Vec::new()));
        let (held, spun) = lock.lock();
        assert_eq!(spun, 0, "a free lock is taken without a spin");
        // Asked in the order 3, 1, 4, 0, 2 (bit k+1 for waiter k: bit 0 is the main thread).
        let mut threads = Vec::new();
        for k in [3u32, 1, 4, 0, 2] {
            let (lock, order) = (lock.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                WHO.with(|w| w.set(k + 1));
                let (_g, spun) = lock.lock();
                order.lock().unwrap().push(k);
                spun
            }));
            wait_until(k + 1);
        }
        drop(held);
        let spins: Vec<Time> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(*order.lock().unwrap(), vec![3, 1, 4, 0, 2]);
        assert!(spins.iter().all(|&s| s > 0), "{spins:?}");
    }
}
