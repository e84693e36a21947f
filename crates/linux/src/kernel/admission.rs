//! What the kernel will take, checked before any thread starts: the real-time bandwidth
//! SCHED_DEADLINE admits (`/proc/sys/kernel/sched_rt_*`, the reservations already held as
//! `/sys/kernel/debug/sched/debug` shows them, the fair servers of Linux 6.12+), the message
//! when it refuses, and the number of kernel threads a run may start.

use super::plan::dl_runtimes;
use super::root::fair_servers_default;
use crate::options::RunError;
use rtsched_model::{TaskSet, Time};

pub(super) fn admission_message(ts: &TaskSet, upto: usize, err: &std::io::Error) -> String {
    let read = |f: &str| {
        std::fs::read_to_string(f)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
    };
    let (rt, period) = (
        read("/proc/sys/kernel/sched_rt_runtime_us"),
        read("/proc/sys/kernel/sched_rt_period_us"),
    );
    let bw: f64 = ts.tasks[..=upto]
        .iter()
        .map(|t| dl_runtimes(t).iter().sum::<Time>() as f64 / t.period as f64)
        .sum();
    let in_use = match dl_reserved(ts.platform.cpus) {
        (u, true) if u > 0.0 => format!(", less {u:.3} already reserved (the kernel's fair servers and other deadline tasks: .dl_bw->total_bw in /sys/kernel/debug/sched/debug)"),
        (u, false) if u > 0.0 => format!(", less about {u:.3} for the kernel's fair servers (5% per CPU by default since Linux 6.12; mount debugfs for the exact figure)"),
        _ => String::new(),
    };
    let limit = match (rt, period) {
        (Some(r), Some(p)) if r >= 0.0 && p > 0.0 => format!(
            "{:.2} (= {} CPUs x {:.0}% from sched_rt_runtime_us/sched_rt_period_us){in_use}",
            ts.platform.cpus as f64 * r / p,
            ts.platform.cpus,
            100.0 * r / p
        ),
        _ => "the kernel's real-time bandwidth limit".into(),
    };
    let helpers = if ts.tasks[..=upto].iter().any(|t| t.is_parallel()) {
        " (one reservation per thread of a parallel task)"
    } else {
        ""
    };
    format!(
        "{}: task '{}': the kernel refused SCHED_DEADLINE admission ({err}). Admission control accepts a new reservation \
         only while the total bandwidth (runtime/period) stays within {limit}; admitting tasks 0..={upto} needs {bw:.3}{helpers}. \
         Reduce WCETs or the number of tasks (or run another backend). Nothing was run.",
        ts.source, ts.tasks[upto].name
    )
}

/// The kernel's real-time bandwidth for `m` CPUs (sched_rt_runtime_us / sched_rt_period_us),
/// or `None` when unlimited or unreadable.
pub(super) fn rt_bandwidth(m: u32) -> Option<f64> {
    let read = |f: &str| {
        std::fs::read_to_string(f)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
    };
    match (
        read("/proc/sys/kernel/sched_rt_runtime_us"),
        read("/proc/sys/kernel/sched_rt_period_us"),
    ) {
        (Some(r), Some(p)) if r >= 0.0 && p > 0.0 => Some(m as f64 * r / p),
        _ => None,
    }
}

/// Deadline bandwidth the kernel has already reserved in this root domain, as a number of CPUs:
/// `.dl_bw->total_bw` (units of 2^-20) from the scheduler's debug file. Since Linux 6.12 each
/// CPU's fair server holds a reservation (5% by default) that counts against the same limit,
/// so a plan within sched_rt_runtime_us can still be refused. `None` when debugfs is not
/// mounted or not readable (then the check below is optimistic and the kernel has the last word).
pub(super) fn dl_bandwidth_in_use() -> Option<f64> {
    let text = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    parse_total_bw(&text)
}

/// Reserved deadline bandwidth: read when possible, else the fair servers' default (and
/// whether it was read).
pub(super) fn dl_reserved(m: u32) -> (f64, bool) {
    match dl_bandwidth_in_use() {
        Some(u) => (u, true),
        None => (fair_servers_default(m), false),
    }
}

pub(super) fn parse_total_bw(text: &str) -> Option<f64> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(".dl_bw->total_bw"))?;
    let v: i64 = line.rsplit(':').next()?.trim().parse().ok()?;
    Some(v.max(0) as f64 / (1u64 << 20) as f64)
}

/// Refuse, before asking the kernel, a SCHED_DEADLINE plan whose reservations cannot fit the
/// real-time bandwidth: the kernel would admit the first threads and refuse a later one, and
/// admitting reservations only to drop them at once is both wasteful and, on some kernels,
/// the path on which the DL bandwidth total went wrong (see `Spawn::begin`).
pub(super) fn deadline_precheck(ts: &TaskSet) -> Result<(), RunError> {
    let Some(cap) = rt_bandwidth(ts.platform.cpus) else {
        return Ok(());
    };
    let cap = cap - dl_reserved(ts.platform.cpus).0;
    let mut total = 0.0;
    for (i, t) in ts.tasks.iter().enumerate() {
        total += dl_runtimes(t).iter().sum::<Time>() as f64 / t.period as f64;
        if total > cap {
            let err = std::io::Error::from_raw_os_error(libc::EBUSY);
            return Err(RunError::Input(admission_message(ts, i, &err).replace(
                "the kernel refused SCHED_DEADLINE admission (Device or resource busy (os error 16))",
                "SCHED_DEADLINE admission would be refused (checked before asking the kernel)",
            )));
        }
    }
    Ok(())
}

/// The most threads a kernel run starts: one per lane of each task (its widest region), each a
/// real thread with its own stack that waits at one barrier. A set of 70,000 threads spent
/// minutes starting them; the testbed runs any number of threads on one worker per CPU.
pub const MAX_KERNEL_THREADS: usize = 4096;

pub(super) fn check_thread_count(ts: &TaskSet) -> Result<(), RunError> {
    let mut threads = 0usize;
    for t in &ts.tasks {
        threads += t
            .regions
            .iter()
            .map(|r| r.threads.len())
            .max()
            .unwrap_or(1)
            .max(1);
        if threads > MAX_KERNEL_THREADS {
            return Err(RunError::Input(format!(
                "{}: task '{}': field 'regions': a kernel run starts one thread per thread of a region; the tasks up to this one need {threads}, more than the limit of {MAX_KERNEL_THREADS} (the testbed backends run any number on one worker per CPU)",
                ts.source, t.name
            )));
        }
    }
    Ok(())
}
