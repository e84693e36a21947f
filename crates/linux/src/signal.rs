//! Ctrl-C and SIGTERM during a real run: the handlers only raise a flag, which every thread of
//! the run polls between pieces of work and stops on.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT / SIGTERM during a run.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs SIGINT/SIGTERM handlers for the duration of a run and restores the old ones.
pub(crate) struct SignalGuard {
    old: [libc::sigaction; 2],
}

impl SignalGuard {
    pub(crate) fn install() -> SignalGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        // SAFETY: sigaction structs are plain data; the handler only stores an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: [libc::sigaction; 2] = std::mem::zeroed();
            libc::sigaction(libc::SIGINT, &sa, &mut old[0]);
            libc::sigaction(libc::SIGTERM, &sa, &mut old[1]);
            SignalGuard { old }
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        // SAFETY: restoring the handlers saved by install.
        unsafe {
            libc::sigaction(libc::SIGINT, &self.old[0], std::ptr::null_mut());
            libc::sigaction(libc::SIGTERM, &self.old[1], std::ptr::null_mut());
        }
    }
}

pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
