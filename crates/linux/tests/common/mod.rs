//! Helpers of the real Linux-class tests (`kernel_linux_real`, `linux_classes_real`): whether
//! this machine can run them, and the kernel's own admission answer for a set of reservations.

use rtsched_linux::sys;
use rtsched_policies::linux::DlAttr;
use std::sync::{mpsc, Mutex};

const MS: u64 = 1_000_000;

/// Real-time privilege and 2 CPUs; without them the test says why and passes.
pub fn privileged() -> bool {
    match sys::check_rt_privilege() {
        Ok(()) if sys::online_cpus() >= 2 => true,
        Ok(()) => {
            eprintln!("real-run test not run: needs 2 CPUs");
            false
        }
        Err(e) => {
            eprintln!("real-run test not run: {e}");
            false
        }
    }
}

/// One thread per reservation of `set`, started in order, each trying `sched_setattr` on
/// itself: true if admitted, false if refused with EBUSY (any other error panics). Every
/// thread holds its reservation, blocked, until all have tried; then all go back to
/// SCHED_OTHER and exit, and the reservations are given back at their 0-lag time (at once
/// here: each deadline is a full period away), which the caller waits out.
pub fn kernel_admits(set: &[DlAttr]) -> Vec<bool> {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = std::sync::Arc::new(Mutex::new(release_rx));
    let mut threads = Vec::new();
    let mut admitted = Vec::new();
    for a in set.iter().copied() {
        let (tx, rx) = mpsc::channel();
        let release = release_rx.clone();
        threads.push(std::thread::spawn(move || {
            let tid = sys::gettid();
            let r = sys::set_deadline(tid, a.runtime, a.deadline, a.period, 0);
            let ok = match r {
                Ok(()) => true,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => false,
                Err(e) => panic!("sched_setattr({a:?}): {e}"),
            };
            tx.send(ok).unwrap();
            if ok {
                // Blocked until the main thread drops the sender: nothing runs meanwhile.
                let _ = release.lock().unwrap().recv();
                sys::set_other(tid).expect("back to SCHED_OTHER");
            }
        }));
        admitted.push(rx.recv().expect("the thread reports"));
    }
    drop(release_tx);
    for t in threads {
        t.join().expect("admission thread");
    }
    let longest = set.iter().map(|a| a.dl_period()).max().unwrap_or(0);
    std::thread::sleep(std::time::Duration::from_nanos(longest + 20 * MS));
    admitted
}
