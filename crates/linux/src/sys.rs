//! Thin wrappers over the Linux system calls the real runs need. Written by hand where libc
//! only has the raw syscall (sched_setattr, futex with an absolute CLOCK_MONOTONIC timeout,
//! perf_event_open for the kernel's own per-thread software counters; the hardware counters
//! are in [`crate::perf`]).

use std::io;
use std::sync::atomic::AtomicU32;

pub const SCHED_OTHER: u32 = 0;
pub const SCHED_FIFO: u32 = 1;
pub const SCHED_RR: u32 = 2;
pub const SCHED_DEADLINE: u32 = 6;

#[inline]
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Sleep until CLOCK_MONOTONIC reaches `abs_ns` (restarting after signals unless `stop`).
pub fn sleep_until(abs_ns: u64, stop: &std::sync::atomic::AtomicBool) {
    let ts = timespec(abs_ns);
    loop {
        // SAFETY: valid timespec; no remaining-time pointer with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR || stop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
    }
}

pub fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

fn setattr(tid: i32, a: &SchedAttr) -> io::Result<()> {
    // SAFETY: a points to a properly sized, initialised sched_attr.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, a as *const SchedAttr, 0u32) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// SCHED_FLAG_RECLAIM: GRUB bandwidth reclaiming for SCHED_DEADLINE.
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;

/// SCHED_DEADLINE with the given reservation (runtime <= deadline <= period, all >= 1024 ns).
pub fn set_deadline(
    tid: i32,
    runtime: u64,
    deadline: u64,
    period: u64,
    flags: u64,
) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: SCHED_DEADLINE,
            flags,
            runtime,
            deadline,
            period,
            ..Default::default()
        },
    )
}

pub fn set_fifo(tid: i32, priority: u32) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: SCHED_FIFO,
            priority,
            ..Default::default()
        },
    )
}

/// SCHED_RR at `priority` (1..=99): SCHED_FIFO with a time slice among equals.
pub fn set_rr(tid: i32, priority: u32) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: SCHED_RR,
            priority,
            ..Default::default()
        },
    )
}

/// SCHED_OTHER at `nice` (-20..=19; below 0 needs CAP_SYS_NICE).
pub fn set_other_nice(tid: i32, nice: i8) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: SCHED_OTHER,
            nice: i32::from(nice),
            ..Default::default()
        },
    )
}

/// SCHED_EXT (7): the thread is scheduled by the loaded sched_ext BPF scheduler (or by the
/// fair class while none is loaded).
pub fn set_ext(tid: i32) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: 7,
            ..Default::default()
        },
    )
}

pub fn set_other(tid: i32) -> io::Result<()> {
    setattr(
        tid,
        &SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: SCHED_OTHER,
            ..Default::default()
        },
    )
}

/// The calling thread's scheduling policy.
pub fn current_policy() -> i32 {
    // SAFETY: plain query of the calling thread.
    unsafe { libc::sched_getscheduler(0) }
}

/// Pin a thread to one CPU, or let it run anywhere (`None`).
pub fn set_affinity(tid: i32, cpu: Option<usize>) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_* macros index within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        match cpu {
            Some(c) => libc::CPU_SET(c, &mut set),
            None => {
                for c in 0..online_cpus() {
                    libc::CPU_SET(c, &mut set);
                }
            }
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory effects.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as usize }
}

#[inline]
pub fn current_cpu() -> u32 {
    // SAFETY: no arguments.
    unsafe { libc::sched_getcpu().max(0) as u32 }
}

/// Wait while `*word == expected`, at most until CLOCK_MONOTONIC `abs_ns` (`None`: forever).
pub fn futex_wait_until(word: &AtomicU32, expected: u32, abs_ns: Option<u64>) {
    let ts = abs_ns.map(timespec);
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: word is a valid, aligned u32 for the duration of the call. FUTEX_WAIT_BITSET
    // takes an absolute CLOCK_MONOTONIC timeout (no FUTEX_CLOCK_REALTIME flag).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            expected,
            tsp,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        );
    }
}

pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: word is valid; waking waiters has no memory effects on it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// Voluntary context switches of the calling thread so far (it blocked or slept;
/// `getrusage(RUSAGE_THREAD)`), to tell them from preemptions.
pub fn voluntary_switches() -> u64 {
    // SAFETY: rusage is plain data; RUSAGE_THREAD reports the calling thread.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        ru.ru_nvcsw as u64
    }
}

/// CPU time stolen by the hypervisor, all CPUs, in clock ticks (/proc/stat "cpu" line, 8th).
pub fn steal_ticks() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    s.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

/// Clock ticks per second (the unit of [`steal_ticks`]).
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no memory effects.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64
}

/// A process-private `pthread_mutex_t` (the mutex a real application's critical section would
/// use). The mutex lives in its own allocation, so it never moves after initialisation.
/// Its protocol is a [`MutexProtocol`].
pub struct PthreadMutex {
    m: Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; all access goes through the
// pthread calls, which synchronise.
unsafe impl Send for PthreadMutex {}
unsafe impl Sync for PthreadMutex {}

fn check(what: &str, r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::new(
            io::Error::from_raw_os_error(r).kind(),
            format!("{what}: {}", io::Error::from_raw_os_error(r)),
        ))
    }
}

/// A mutex's protocol (POSIX `pthread_mutexattr_setprotocol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexProtocol {
    /// `PTHREAD_PRIO_NONE`: the holder keeps its own priority.
    None,
    /// `PTHREAD_PRIO_INHERIT`: a holder runs at the priority of its most urgent waiter (under
    /// SCHED_DEADLINE it inherits the waiter's deadline); the kernel's rt_mutex (futex PI).
    Inherit,
    /// `PTHREAD_PRIO_PROTECT` with this SCHED_FIFO ceiling (1..=99): a thread that locks it
    /// runs at once at the ceiling if that is above its own priority, until it unlocks (the
    /// immediate ceiling protocol). glibc applies it in user space, with `sched_setparam` on
    /// the locking thread (nptl's `__pthread_tpp_change_priority`); a thread whose priority is
    /// above the ceiling is refused the lock (EINVAL).
    Protect(u32),
}

// glibc's PTHREAD_PRIO_PROTECT and its setter, which the libc crate does not declare for
// Linux (<pthread.h>: PTHREAD_PRIO_NONE, _INHERIT, _PROTECT = 0, 1, 2).
const PTHREAD_PRIO_PROTECT: libc::c_int = 2;
extern "C" {
    fn pthread_mutexattr_setprioceiling(
        attr: *mut libc::pthread_mutexattr_t,
        prioceiling: libc::c_int,
    ) -> libc::c_int;
}

impl PthreadMutex {
    pub fn new(protocol: MutexProtocol) -> io::Result<PthreadMutex> {
        // SAFETY: the attribute object is initialised before use and destroyed after; the mutex
        // is initialised in place in its box and not used before that.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            check(
                "pthread_mutexattr_init",
                libc::pthread_mutexattr_init(&mut attr),
            )?;
            let (proto, ceiling) = match protocol {
                MutexProtocol::None => (libc::PTHREAD_PRIO_NONE, None),
                MutexProtocol::Inherit => (libc::PTHREAD_PRIO_INHERIT, None),
                MutexProtocol::Protect(c) => (PTHREAD_PRIO_PROTECT, Some(c as libc::c_int)),
            };
            let r = check(
                "pthread_mutexattr_setprotocol",
                libc::pthread_mutexattr_setprotocol(&mut attr, proto),
            )
            .and_then(|_| match ceiling {
                Some(c) => check(
                    "pthread_mutexattr_setprioceiling",
                    pthread_mutexattr_setprioceiling(&mut attr, c),
                ),
                None => Ok(()),
            })
            .and_then(|_| {
                check(
                    "pthread_mutexattr_settype",
                    libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_NORMAL),
                )
            });
            let m = Box::new(std::cell::UnsafeCell::new(std::mem::zeroed()));
            let r = r.and_then(|_| {
                check(
                    "pthread_mutex_init",
                    libc::pthread_mutex_init(m.get(), &attr),
                )
            });
            libc::pthread_mutexattr_destroy(&mut attr);
            r.map(|_| PthreadMutex { m })
        }
    }

    /// Take the mutex if it is free; false if another thread holds it.
    pub fn try_lock(&self) -> bool {
        // SAFETY: initialised mutex.
        unsafe { libc::pthread_mutex_trylock(self.m.get()) == 0 }
    }

    /// Take the mutex, waiting (blocked, off the CPU) while another thread holds it.
    pub fn lock(&self) -> io::Result<()> {
        // SAFETY: initialised mutex.
        check("pthread_mutex_lock", unsafe {
            libc::pthread_mutex_lock(self.m.get())
        })
    }

    /// Release the mutex; the caller must hold it.
    pub fn unlock(&self) -> io::Result<()> {
        // SAFETY: initialised mutex, held by the caller.
        check("pthread_mutex_unlock", unsafe {
            libc::pthread_mutex_unlock(self.m.get())
        })
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: no thread uses the mutex any more (we own it exclusively).
        unsafe { libc::pthread_mutex_destroy(self.m.get()) };
    }
}

/// The kernel's per-thread software counters (context switches, CPU migrations) through
/// perf_event_open; falls back to /proc when perf is unavailable.
pub struct ThreadCounters {
    fds: Option<[i32; 2]>,
    tid: i32,
}

/// `struct perf_event_attr` (linux/perf_event.h, up to `config3`): also used by [`crate::perf`].
#[repr(C)]
#[derive(Default)]
pub(crate) struct PerfEventAttr {
    pub(crate) type_: u32,
    pub(crate) size: u32,
    pub(crate) config: u64,
    pub(crate) sample_period: u64,
    pub(crate) sample_type: u64,
    pub(crate) read_format: u64,
    pub(crate) flags: u64,
    pub(crate) wakeup_events: u32,
    pub(crate) bp_type: u32,
    pub(crate) config1: u64,
    pub(crate) config2: u64,
    pub(crate) branch_sample_type: u64,
    pub(crate) sample_regs_user: u64,
    pub(crate) sample_stack_user: u32,
    pub(crate) clockid: i32,
    pub(crate) sample_regs_intr: u64,
    pub(crate) aux_watermark: u32,
    pub(crate) sample_max_stack: u16,
    pub(crate) reserved_2: u16,
    pub(crate) aux_sample_size: u32,
    pub(crate) reserved_3: u32,
    pub(crate) sig_data: u64,
    pub(crate) config3: u64,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;
const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;

impl ThreadCounters {
    /// Counters for the calling thread.
    pub fn open() -> ThreadCounters {
        let tid = gettid();
        let open = |config: u64| -> i32 {
            let attr = PerfEventAttr {
                type_: PERF_TYPE_SOFTWARE,
                size: std::mem::size_of::<PerfEventAttr>() as u32,
                config,
                ..Default::default()
            };
            // SAFETY: attr is a valid perf_event_attr; pid = this thread, any CPU, no group.
            unsafe {
                libc::syscall(
                    libc::SYS_perf_event_open,
                    &attr as *const PerfEventAttr,
                    0,
                    -1,
                    -1,
                    8u64, /* PERF_FLAG_FD_CLOEXEC */
                ) as i32
            }
        };
        let (a, b) = (
            open(PERF_COUNT_SW_CONTEXT_SWITCHES),
            open(PERF_COUNT_SW_CPU_MIGRATIONS),
        );
        let fds = if a >= 0 && b >= 0 {
            Some([a, b])
        } else {
            for fd in [a, b] {
                if fd >= 0 {
                    // SAFETY: fd was opened above.
                    unsafe { libc::close(fd) };
                }
            }
            None
        };
        ThreadCounters { fds, tid }
    }

    /// (context switches, migrations) so far.
    pub fn read(&self) -> (u64, u64) {
        match self.fds {
            Some([a, b]) => (read_u64(a), read_u64(b)),
            None => proc_sched(self.tid),
        }
    }

    pub fn source(&self) -> &'static str {
        if self.fds.is_some() {
            "perf"
        } else {
            "proc"
        }
    }
}

impl Drop for ThreadCounters {
    fn drop(&mut self) {
        if let Some(fds) = self.fds {
            for fd in fds {
                // SAFETY: fds were opened by us and are closed once.
                unsafe { libc::close(fd) };
            }
        }
    }
}

fn read_u64(fd: i32) -> u64 {
    let mut v = 0u64;
    // SAFETY: reading 8 bytes into a u64.
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
    v
}

fn proc_sched(tid: i32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/sched")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as u64
    };
    (field("nr_switches"), field("se.nr_migrations"))
}

/// Can this process use real-time policies? Tried on a short-lived probe thread, so nothing
/// of the caller changes.
pub fn check_rt_privilege() -> Result<(), String> {
    std::thread::spawn(|| set_fifo(gettid(), 1).map_err(|e| e.raw_os_error()))
        .join()
        .map_err(|_| "probe thread panicked".to_string())?
        .map_err(|errno| {
            format!(
                "real-time scheduling is not permitted here (sched_setattr: {}). Real runs need root, or CAP_SYS_NICE \
                 (e.g. `sudo setcap cap_sys_nice+ep $(readlink -f $(which python3))`), or an rtprio limit \
                 (`ulimit -r 99`, or '@realtime - rtprio 99' in /etc/security/limits.conf). Nothing was run.",
                io::Error::from_raw_os_error(errno.unwrap_or(libc::EPERM))
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pthread_mutex_excludes_and_both_protocols_initialise() {
        for protocol in [MutexProtocol::None, MutexProtocol::Inherit] {
            let m = std::sync::Arc::new(PthreadMutex::new(protocol).unwrap());
            assert!(m.try_lock());
            assert!(!m.try_lock(), "a held mutex must refuse a second owner");
            let m2 = m.clone();
            let t0 = mono_ns();
            let waiter = std::thread::spawn(move || {
                m2.lock().unwrap();
                let got = mono_ns();
                m2.unlock().unwrap();
                got
            });
            std::thread::sleep(std::time::Duration::from_millis(30));
            let released = mono_ns();
            m.unlock().unwrap();
            let got = waiter.join().unwrap();
            assert!(
                got >= released && got - t0 >= 30_000_000,
                "the waiter ran before the holder released"
            );
            m.lock().unwrap();
            m.unlock().unwrap();
        }
    }

    #[test]
    fn a_ceiling_mutex_takes_a_fifo_priority_as_its_ceiling() {
        // Locking it needs SCHED_FIFO (glibc raises the thread with sched_setparam), which a
        // unit test does not take: tests/test_kernel_structure.py runs it for real.
        for c in [1, 50, 99] {
            assert!(PthreadMutex::new(MutexProtocol::Protect(c)).is_ok(), "{c}");
        }
        for c in [0, 100] {
            let e = PthreadMutex::new(MutexProtocol::Protect(c))
                .err()
                .expect("out of range");
            assert!(
                e.to_string().contains("pthread_mutexattr_setprioceiling"),
                "{e}"
            );
        }
    }

    #[test]
    fn sleeping_is_a_voluntary_switch() {
        let v0 = voluntary_switches();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(voluntary_switches() > v0);
    }
}
