//! A cyclictest-like wake-up latency probe: per CPU one pinned SCHED_FIFO thread sleeps until
//! absolute CLOCK_MONOTONIC deadlines `interval` apart and records how late it woke (the same
//! measurement as `cyclictest -S -m`, against which the tests validate it). Like cyclictest it
//! asks for zero wake-up latency through /dev/cpu_dma_latency while it runs (`pm_qos`).

use crate::options::RunError;
use crate::signal::{interrupted, SignalGuard};
use crate::sys;
use rtsched_model::Time;
use std::io::Write;

pub struct ProbeResult {
    /// Per CPU, the wake-up latency of every cycle, in ns.
    pub samples: Vec<Vec<Time>>,
    /// On CLOCK_MONOTONIC, in ns: cycle `i` was due at `start + (i + 1) * interval`.
    pub start: Time,
}

/// The longest probe: a 10-minute real run (crate::MAX_DURATION) watched with a margin on each
/// side. A probe sleeps almost all the time; what bounds it is the samples it keeps (8 bytes a
/// cycle and CPU: 7.2 MB per CPU at 1 ms).
pub const MAX_PROBE_DURATION: Time = 900 * 1_000_000_000;

/// The probe's options within their bounds on this machine; the CPUs to probe.
fn check(
    duration: Time,
    interval: Time,
    priority: u32,
    cpus: Option<Vec<usize>>,
) -> Result<Vec<usize>, RunError> {
    if !(10_000..=1_000_000_000).contains(&interval) {
        return Err(RunError::Input(format!(
            "latency probe: interval must be between 10 us and 1 s, got {interval} ns"
        )));
    }
    if duration > MAX_PROBE_DURATION || duration < interval {
        return Err(RunError::Input(format!(
            "latency probe: duration must be at least one interval and at most {} s",
            MAX_PROBE_DURATION / 1_000_000_000
        )));
    }
    if !(1..=99).contains(&priority) {
        return Err(RunError::Input(format!(
            "latency probe: SCHED_FIFO priority must be 1..99, got {priority}"
        )));
    }
    let online = sys::online_cpus();
    let cpus = cpus.unwrap_or_else(|| (0..online).collect());
    if let Some(c) = cpus.iter().find(|&&c| c >= online) {
        return Err(RunError::Input(format!(
            "latency probe: CPU {c} is not online (this machine has {online})"
        )));
    }
    Ok(cpus)
}

/// On the calling thread, pinned to `cpu` under SCHED_FIFO `priority`: how late it woke for
/// each of `cycles` = (start, interval, count) absolute deadlines.
fn wake_latencies(
    cpu: usize,
    priority: u32,
    (start, interval, n): (Time, Time, usize),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<Time>, String> {
    let tid = sys::gettid();
    sys::set_affinity(tid, Some(cpu))
        .and_then(|_| sys::set_fifo(tid, priority))
        .map_err(|e| format!("CPU {cpu}: {e}"))?;
    let mut out = Vec::with_capacity(n);
    let mut next = start;
    for _ in 0..n {
        next += interval;
        sys::sleep_until(next, stop);
        let now = sys::mono_ns();
        if interrupted() {
            break;
        }
        out.push(now.saturating_sub(next));
    }
    Ok(out)
}

/// `pm_qos`: ask for zero wake-up latency (/dev/cpu_dma_latency) while probing, as cyclictest
/// does; without it the CPUs idle as they would anyway (what a probe watching a run wants: the
/// request keeps idle vCPUs polling, which changes what the host does).
pub fn probe(
    duration: Time,
    interval: Time,
    priority: u32,
    cpus: Option<Vec<usize>>,
    pm_qos: bool,
) -> Result<ProbeResult, RunError> {
    let cpus = check(duration, interval, priority, cpus)?;
    sys::check_rt_privilege().map_err(RunError::Privilege)?;
    let _guard = SignalGuard::install();
    // Keep the CPUs out of deep idle states while we measure, as cyclictest does.
    let dma = pm_qos.then(|| {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|_| f))
            .ok()
    });
    let start = sys::mono_ns() + 10_000_000;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<Result<Vec<Time>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let stop = &stop;
                std::thread::Builder::new()
                    .name(format!("rtsched-probe{cpu}"))
                    .spawn_scoped(s, move || {
                        let cycles = (start, interval, (duration / interval) as usize);
                        wake_latencies(cpu, priority, cycles, stop)
                    })
                    .expect("spawn probe thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("probe thread panicked".into()))
            })
            .collect()
    });
    drop(dma);
    if interrupted() {
        return Err(RunError::Interrupted);
    }
    let samples = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(RunError::Failed)?;
    Ok(ProbeResult { samples, start })
}
