//! Real runs on Linux (DESIGN.md "Real runs on Linux"), producing the same results schema as
//! the simulator:
//!
//! - `kernel:deadline`, `kernel:fifo[:rm|:dm]`, `kernel:other` (option `:pi`: mutexes with
//!   priority inheritance) — each task's thread, plus helper threads for its parallel regions,
//!   under the kernel's own policy (the baselines a user would otherwise get);
//! - `testbed:POLICY` — any rtsched policy decides, one pinned SCHED_FIFO worker per CPU executes
//!   what it chose ([`testbed`]), in ChronOS's stop-the-world or application-concurrent model.
//!
//! Safety: refuses without real-time privilege (and runs nothing); never touches the kernel's
//! RT throttling; bounded duration; Ctrl-C / SIGTERM or a worker panic stop every thread, and
//! the calling thread's own policy is never changed (only threads this module creates are).

pub mod calibrate;
pub mod kernel;
pub mod latency;
pub mod perf;
pub mod samples;
pub mod scx;
pub mod stream;
pub mod sys;
pub mod testbed;
pub mod work;

use rtsched_model::results::{JobSink, RunResult};
use rtsched_model::{TaskSet, Time};
use std::sync::atomic::{AtomicBool, Ordering};

/// Tests that start real-time threads hold this lock: two at once would take each other's CPUs
/// (a SCHED_FIFO spinner of one starves the other's workers, and the schedule it checks).
#[cfg(test)]
pub(crate) fn real_threads_lock() -> std::sync::MutexGuard<'static, ()> {
    static REAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    REAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Longest run allowed (a real run occupies real cores).
pub const MAX_DURATION: Time = 600 * 1_000_000_000;
/// The measurement holding where a real run's time 0 lies on this boot's CLOCK_MONOTONIC, in
/// ns (exact as an f64 for 104 days of uptime).
pub const TIME_ZERO_KEY: &str = "host.time_zero_monotonic_ns";

#[derive(Debug)]
pub enum RunError {
    /// Bad input or options (exit 2).
    Input(String),
    /// Not permitted: nothing was run (exit 2).
    Privilege(String),
    /// Ctrl-C or SIGTERM: every thread was stopped.
    Interrupted,
    /// A worker failed; every thread was stopped.
    Failed(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Input(s) | RunError::Privilege(s) | RunError::Failed(s) => f.write_str(s),
            RunError::Interrupted => f.write_str("interrupted; every rtsched thread was stopped"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalModel {
    /// One decider thread makes every decision and notifies the CPUs (ChronOS "stop-the-world").
    StopTheWorld,
    /// Each CPU's worker decides for itself, under one lock, when it sees an event
    /// (ChronOS "application-concurrent").
    Concurrent,
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub allow_overload: bool,
    pub model: GlobalModel,
    /// Record execution intervals (for traces).
    pub record_intervals: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            allow_overload: false,
            model: GlobalModel::StopTheWorld,
            record_intervals: true,
        }
    }
}

/// Set by SIGINT / SIGTERM during a run.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs SIGINT/SIGTERM handlers for the duration of a run and restores the old ones.
struct SignalGuard {
    old: [libc::sigaction; 2],
}

impl SignalGuard {
    fn install() -> SignalGuard {
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

/// The backends, for help texts. Every kernel backend takes the option `:pi`: critical
/// sections lock their pthread mutexes with `PTHREAD_PRIO_INHERIT` instead of `PTHREAD_PRIO_NONE`.
pub const BACKENDS: &[(&str, &str)] = &[
    ("kernel:deadline", "each task's threads under SCHED_DEADLINE (runtime = WCET + max(250 us, 10%), deadline, period; one reservation per thread of a parallel task); kernel:deadline:reclaim adds GRUB reclaiming, :pi priority inheritance"),
    ("kernel:fifo", "each task's threads under SCHED_FIFO, RM priorities (kernel:fifo:dm for DM, :file for the file's; :pi for priority inheritance, e.g. kernel:fifo:rm:pi); partitioned through affinity if every task has a cpu"),
    ("kernel:other", "each task's threads under SCHED_OTHER (CFS/EEVDF): what a user gets by default (kernel:other:pi for priority inheritance)"),
    ("kernel:scx-gedf", "rtsched's sched_ext scheduler (needs a kernel with sched_ext and the rtsched-scx loader): global EDF in BPF, idle CPU first, else preempt the latest deadline found in the cpudl tree (kernel:scx-gedf:linear scans instead); tasks register period, deadline and WCET"),
    ("kernel:scx-pedf", "rtsched's sched_ext scheduler: partitioned EDF in BPF, partition from the file's cpu fields or a heuristic (kernel:scx-pedf:ffd, :wfd, :lwfg+ffd, ...)"),
    ("kernel:scx:POLICY", "rtsched's sched_ext scheduler in user-space mode: any rtsched policy decides over the job ledger (as on the testbed), BPF puts each task's own SCHED_EXT thread on the CPU decided for it (e.g. kernel:scx:gedf, kernel:scx:ggua)"),
    ("testbed:POLICY", "any rtsched policy decides, one pinned SCHED_FIFO worker per CPU executes (e.g. testbed:gedf, testbed:pedf)"),
];

fn check_common(ts: &TaskSet, opts: &RunOptions) -> Result<(), RunError> {
    if let Some(t) = ts.tasks.iter().find(|t| t.is_fair()) {
        // Best-effort tasks live in the simulator (`cfs`); on a real machine the kernel's own
        // fair class runs them: `rtsched stress` makes the load, `rtsched balance` moves it.
        return Err(RunError::Input(format!(
            "{}: task '{}': field 'class': best-effort (fair) tasks are simulated only (scheduler cfs); on this machine use `rtsched stress` for the load and `rtsched balance` for the zone balancer",
            ts.source, t.name
        )));
    }
    if ts.run.duration > MAX_DURATION {
        return Err(RunError::Input(format!(
            "{}: run: field 'duration': a real run is limited to {} s, got {} s",
            ts.source,
            MAX_DURATION / 1_000_000_000,
            ts.run.duration as f64 / 1e9
        )));
    }
    let u = ts.utilization();
    if u > ts.platform.cpus as f64 && !opts.allow_overload {
        return Err(RunError::Input(format!(
            "{}: total utilisation {u:.3} exceeds the {} CPUs; a real run of an overloaded set is refused unless --allow-overload",
            ts.source, ts.platform.cpus
        )));
    }
    let online = sys::online_cpus();
    if ts.platform.cpus as usize > online {
        return Err(RunError::Input(format!(
            "{}: platform: field 'cpus': the task set needs {} CPUs, this machine has {online} online",
            ts.source, ts.platform.cpus
        )));
    }
    Ok(())
}

/// Run `ts` for real on `backend` (see [`BACKENDS`]).
pub fn run(ts: &TaskSet, backend: &str, opts: &RunOptions) -> Result<RunResult, RunError> {
    run_with(ts, backend, opts, None)
}

/// [`run`] without holding the per-job records: each goes, in release order, into the
/// summaries and then to `next` (a Parquet writer) as its job ends, so memory stays bounded
/// whatever the duration ([`crate::stream`]). The result's `jobs` is empty and `streamed`
/// holds the count and the summaries.
pub fn run_streamed(
    ts: &TaskSet,
    backend: &str,
    opts: &RunOptions,
    next: Option<&mut (dyn JobSink + Send)>,
) -> Result<RunResult, RunError> {
    let mut c = stream::Collector::for_run(ts, next);
    let mut r = run_with(ts, backend, opts, Some(&mut c))?;
    r.streamed = Some(c.streamed(&r.task_names));
    Ok(r)
}

/// The `scheduler` a run of `ts` on `backend` will report (e.g. `kernel:fifo:file
/// (partitioned)`, `testbed:gedf`), known before it runs: a streamed run's Parquet rows carry it.
pub fn scheduler_label(ts: &TaskSet, backend: &str) -> Result<String, RunError> {
    let (kind, rest) = backend.split_once(':').unwrap_or((backend, ""));
    match kind {
        "kernel" if rest.starts_with("scx:") => {
            let p = rtsched_policies::build(&rest[4..], ts)
                .map_err(|e| RunError::Input(format!("kernel:scx: {e}")))?;
            Ok(format!("kernel:scx:{}", p.name()))
        }
        "kernel" => Ok(kernel::KernelPlan::new(ts, rest)?.label),
        "testbed" => Ok(format!(
            "testbed:{}",
            rtsched_policies::build(rest, ts)
                .map_err(RunError::Input)?
                .name()
        )),
        _ => Err(RunError::Input(format!("unknown backend '{backend}'"))),
    }
}

fn run_with(
    ts: &TaskSet,
    backend: &str,
    opts: &RunOptions,
    out: Option<&mut stream::Collector<'_>>,
) -> Result<RunResult, RunError> {
    check_common(ts, opts)?;
    let (kind, rest) = backend.split_once(':').unwrap_or((backend, ""));
    // Validate everything before touching any thread.
    // kernel:scx:POLICY: any rtsched policy decides in user space for SCHED_EXT threads.
    let user_scx = kind == "kernel" && rest.starts_with("scx:");
    let plan = match kind {
        "kernel" if user_scx => {
            rtsched_policies::build(&rest[4..], ts)
                .map_err(|e| RunError::Input(format!("kernel:scx: {e}")))?;
            None
        }
        "kernel" => Some(kernel::KernelPlan::new(ts, rest)?),
        "testbed" => {
            rtsched_policies::build(rest, ts).map_err(RunError::Input)?;
            None
        }
        _ => {
            let known: Vec<&str> = BACKENDS.iter().map(|b| b.0).collect();
            return Err(RunError::Input(format!(
                "unknown backend '{backend}'; known: {}",
                known.join(", ")
            )));
        }
    };
    sys::check_rt_privilege().map_err(RunError::Privilege)?;
    let _guard = SignalGuard::install();
    let steal0 = steal_ticks();
    let r = match plan {
        Some(p) => kernel::run_into(ts, &p, opts, out),
        None if user_scx => testbed::run_scx(ts, &rest[4..], opts, out),
        None => testbed::run_into(ts, rest, opts, out),
    };
    if interrupted() {
        return Err(RunError::Interrupted);
    }
    r.map(|mut r| {
        // In a virtual machine the host may take the CPUs away; a run with much steal measured
        // the host as much as the scheduler.
        if let (Some(a), Some(b)) = (steal0, steal_ticks()) {
            r.measurements.insert(
                "host.steal_ms".into(),
                (b.saturating_sub(a)) as f64 * 1000.0 / clock_ticks() as f64,
            );
        }
        r
    })
}

/// CPU time stolen by the hypervisor, all CPUs, in clock ticks (/proc/stat "cpu" line, 8th).
fn steal_ticks() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/stat").ok()?;
    s.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no memory effects.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64
}
