//! Kernel baselines: each task's threads under the kernel's own policy, executing the task's
//! program for real.
//!
//! - **Jobs.** The task's own thread sleeps until each release (absolute CLOCK_MONOTONIC) and
//!   runs the job; it records release, start (when it woke) and finish. Jobs and every thread's
//!   demand come from the same seeded streams as the simulator's
//!   ([`TaskStreams::job_demands`]), so a simulated and a real run see the same jobs.
//! - **Parallel regions** (PAWS §3 fork-join) run on real threads: a task whose widest region
//!   has `w` threads gets `w - 1` *helper* threads at setup, under the same policy as its own
//!   thread (same SCHED_FIFO priority and affinity; under SCHED_DEADLINE each helper has its
//!   own reservation, see [`dl_runtimes`]). For each region the task's thread hands threads
//!   1..n-1 to helpers 1..n-1 (one futex word per helper), runs thread 0 itself, then waits on
//!   a join counter until the last helper of the region has finished. Thread k of every region
//!   therefore always runs on the same kernel thread: *lane* k.
//! - **Critical sections** run on real mutexes: one `pthread_mutex_t` per resource of the task
//!   set (`PTHREAD_PRIO_NONE`, or `PTHREAD_PRIO_INHERIT` with the backend option `pi`), shared
//!   by every thread. A thread executes its demand in pieces between its checkpoints (scaled by
//!   its demand / WCET, as in the simulator) and locks or unlocks at each. The time a thread
//!   waits in `pthread_mutex_lock` (CLOCK_MONOTONIC around the call, after a failed trylock)
//!   is the job's `blocked` time. Every mutex a thread holds is released before it stops, so a
//!   stop (Ctrl-C, an error, the end of the run) never leaves a waiter hanging.
//! - **Execution time and hardware counters.** Each thread measures the CPU time of its work
//!   pieces (CLOCK_THREAD_CPUTIME_ID; memory work takes longer than its calibrated demand when
//!   its cache was taken, see [`crate::work`]) and, on a machine with a PMU, reads its counter
//!   group around them ([`crate::perf`]); the job's `exec` and `hw` are the sums over its
//!   threads.
//! - **Counters** are the kernel's own per thread (perf software events; /proc as a fallback),
//!   read around each thread's own work and summed over the job's threads: context switches =
//!   threads run + times switched out, preemptions = involuntary switches (a thread that waits
//!   for a mutex is not preempted), migrations = CPU changes while a thread ran its work.

use crate::lanes::lane_wcets;
use crate::options::{RunError, RunOptions, TIME_ZERO_KEY};
use crate::samples::Samples;
use crate::signal::{interrupted, INTERRUPTED};
use crate::stream::{self, Collector, Merger, Outbox};
use crate::sys::{self, ThreadCounters};
use crate::{perf, scx, work};
use rtsched_model::program::{scale, Action, Program, ThreadProgram};
use rtsched_model::results::{CpuSet, HwCounters, Interval, JobRecord, RunResult, LEDGER_COUNTERS};
use rtsched_model::{TaskSet, Time};
use rtsched_runtime::TaskStreams;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

#[derive(Clone, Debug, PartialEq)]
pub enum KernelPolicy {
    /// SCHED_DEADLINE; `reclaim` sets SCHED_FLAG_RECLAIM (GRUB bandwidth reclaiming).
    Deadline {
        reclaim: bool,
    },
    /// SCHED_FIFO priority per task (1..=99) and optional CPU per task.
    Fifo {
        prio: Vec<u32>,
        cpu: Vec<Option<u32>>,
        label: String,
    },
    Other,
    /// rtsched's sched_ext scheduler (crates/scx) in `mode` (gedf, gedf-linear, pedf): each
    /// thread registers its timing ([`crate::scx`]) and runs under SCHED_EXT; `cpu` is the
    /// P-EDF partition.
    Scx {
        mode: String,
        cpu: Vec<Option<u32>>,
    },
}

pub struct KernelPlan {
    pub policy: KernelPolicy,
    pub label: String,
    /// Resources' mutexes use priority inheritance (backend option `pi`).
    pub inherit: bool,
}

/// Map priorities (larger = more urgent) onto SCHED_FIFO 10..=89 preserving their order;
/// rtsched's own threads stay below the kernel's threaded interrupts (50) only if few levels
/// are needed, so the order is what matters.
fn fifo_levels(prio: &[u32]) -> Vec<u32> {
    let mut levels: Vec<u32> = prio.to_vec();
    levels.sort_unstable();
    levels.dedup();
    let k = levels.len().max(2) as u32;
    prio.iter()
        .map(|p| {
            let i = levels.binary_search(p).expect("present") as u32;
            10 + i * 79 / (k - 1)
        })
        .collect()
}

/// Every option of `kernel:{name}` is one of `known`, and none is given twice.
fn check_options(name: &str, known: &[&str], opts: &[&str]) -> Result<(), RunError> {
    for (i, o) in opts.iter().enumerate() {
        if !known.contains(o) {
            let what = if name == "fifo" {
                "option or priority assignment"
            } else {
                "option"
            };
            return Err(RunError::Input(format!(
                "kernel:{name}: unknown {what} '{o}' (known: {})",
                known.join(", ")
            )));
        }
        if opts[..i].contains(o) {
            return Err(RunError::Input(format!(
                "kernel:{name}: option '{o}' given twice"
            )));
        }
    }
    Ok(())
}

impl KernelPlan {
    /// `rest` is what follows `kernel:`: the backend's name, then options separated by ':'
    /// (`deadline[:reclaim][:pi]`, `fifo[:rm|:dm|:file][:pi]`, `other[:pi]`).
    pub fn new(ts: &TaskSet, rest: &str) -> Result<KernelPlan, RunError> {
        // The kernel's own policies run a job's threads as lanes joined by barriers (regions);
        // a DAG's precedence has no such form.
        if let Some(t) = ts.tasks.iter().find(|t| t.dag.is_some()) {
            return Err(RunError::Input(format!(
                "{}: task '{}': field 'dag': kernel:{rest} runs a job's threads as fork-join lanes joined by barriers, which cannot keep a DAG's precedence; run DAG tasks in the simulator, on testbed:POLICY or on kernel:scx:POLICY (docs/dag.md)",
                ts.source,
                t.name
            )));
        }
        let mut parts = rest.split(':');
        let name = parts.next().unwrap_or("");
        let mut opts: Vec<&str> = parts.collect();
        let known: &[&str] = match name {
            "deadline" => &["reclaim", "pi"],
            "fifo" => &["rm", "dm", "file", "pi"],
            "other" => &["pi"],
            "scx-gedf" => &["linear"],
            // The rest is the partitioner, as the pedf policy takes it.
            "scx-pedf" => return Self::scx_pedf(ts, &opts),
            o => {
                return Err(RunError::Input(format!(
                    "unknown kernel backend 'kernel:{o}' (known: kernel:deadline, kernel:fifo, kernel:other, kernel:scx-gedf, kernel:scx-pedf)"
                )))
            }
        };
        check_options(name, known, &opts)?;
        let inherit = opts.contains(&"pi");
        opts.retain(|o| *o != "pi");
        let pi = if inherit { ":pi" } else { "" };
        let (policy, label) = match name {
            "deadline" => Self::deadline(ts, &opts, pi)?,
            "fifo" => Self::fifo(ts, &opts, pi)?,
            "scx-gedf" => Self::scx_gedf(ts, &opts)?,
            _ => (KernelPolicy::Other, format!("kernel:other{pi}")),
        };
        Ok(KernelPlan {
            policy,
            label,
            inherit,
        })
    }

    /// `kernel:deadline[:reclaim]`: every task within what SCHED_DEADLINE admits.
    fn deadline(ts: &TaskSet, opts: &[&str], pi: &str) -> Result<(KernelPolicy, String), RunError> {
        for t in &ts.tasks {
            if t.deadline > t.period {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'deadline': SCHED_DEADLINE needs deadline <= period ({} > {} ns)",
                    ts.source, t.name, t.deadline, t.period
                )));
            }
            if t.wcet < 1024 || (!t.is_parallel() && t.wcet > t.deadline) {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'wcet': SCHED_DEADLINE needs 1024 ns <= runtime (WCET) <= deadline",
                    ts.source, t.name
                )));
            }
            if let Some((k, w)) = lane_wcets(&t.program())
                .into_iter()
                .enumerate()
                .find(|&(_, w)| w > t.deadline)
            {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'regions': SCHED_DEADLINE needs each thread's runtime <= deadline, but thread {k} \
                     of the regions runs {} ns per job ({} ns deadline)",
                    ts.source, t.name, w, t.deadline
                )));
            }
        }
        let reclaim = opts.contains(&"reclaim");
        let label = format!(
            "kernel:deadline{}{pi}",
            if reclaim { ":reclaim" } else { "" }
        );
        Ok((KernelPolicy::Deadline { reclaim }, label))
    }

    /// `kernel:fifo[:rm|:dm|:file]`: the priorities (the file's if every task has one and no
    /// assignment is named, else RM), partitioned if every task has a CPU.
    fn fifo(ts: &TaskSet, opts: &[&str], pi: &str) -> Result<(KernelPolicy, String), RunError> {
        if opts.len() > 1 {
            return Err(RunError::Input(format!(
                "kernel:fifo: choose one priority assignment, got '{}' and '{}' (known: rm, dm, file)",
                opts[0], opts[1]
            )));
        }
        let mode = match opts.first() {
            Some(m) => *m,
            None if ts.tasks.iter().all(|t| t.priority.is_some()) => "file",
            None => "rm",
        };
        let prio = match mode {
            "rm" => rtsched_analysis::priority::rate_monotonic(&ts.tasks),
            "dm" => rtsched_analysis::priority::deadline_monotonic(&ts.tasks),
            _ => match ts.tasks.iter().find(|t| t.priority.is_none()) {
                Some(t) => return Err(RunError::Input(format!("{}: task '{}': field 'priority': missing, and kernel:fifo:file needs every task's priority", ts.source, t.name))),
                None => ts.tasks.iter().map(|t| t.priority.unwrap()).collect(),
            },
        };
        let partitioned = ts.tasks.iter().all(|t| t.cpu.is_some());
        let cpu = ts
            .tasks
            .iter()
            .map(|t| if partitioned { t.cpu } else { None })
            .collect();
        let label = format!(
            "kernel:fifo:{mode}{pi}{}",
            if partitioned { " (partitioned)" } else { "" }
        );
        let policy = KernelPolicy::Fifo {
            prio: fifo_levels(&prio),
            cpu,
            label: label.clone(),
        };
        Ok((policy, label))
    }

    /// `kernel:scx-gedf[:linear]`: admitted as the scheduler will admit it.
    fn scx_gedf(ts: &TaskSet, opts: &[&str]) -> Result<(KernelPolicy, String), RunError> {
        let linear = opts.contains(&"linear");
        scx::admission(ts, None)?;
        let mode = if linear { "gedf-linear" } else { "gedf" };
        let label = format!("kernel:scx-gedf{}", if linear { ":linear" } else { "" });
        let policy = KernelPolicy::Scx {
            mode: mode.into(),
            cpu: vec![None; ts.tasks.len()],
        };
        Ok((policy, label))
    }

    /// `kernel:scx-pedf[:HEURISTIC]`: the partition from the file's `cpu` fields, or made by
    /// a partitioning heuristic exactly as the `pedf` policy makes it (`ffd`, `wfd`,
    /// `lwfg+ffd`, ...).
    fn scx_pedf(ts: &TaskSet, opts: &[&str]) -> Result<KernelPlan, RunError> {
        let spec_text = if opts.is_empty() {
            "pedf".to_string()
        } else {
            format!("pedf:{}", opts.join(":"))
        };
        let spec = rtsched_policies::SchedulerSpec::parse(&spec_text)
            .map_err(|e| RunError::Input(format!("kernel:scx-pedf: {e}")))?;
        let ctx = rtsched_policies::ctx::BuildCtx::new(ts);
        let (cpus, how) = rtsched_policies::pedf::partition(&spec, &ctx)
            .map_err(|e| RunError::Input(format!("kernel:scx-pedf: {e}")))?;
        let cpu: Vec<Option<u32>> = cpus.into_iter().map(Some).collect();
        scx::admission(ts, Some(&cpu))?;
        let label = format!(
            "kernel:scx-pedf{}",
            how.map_or(String::new(), |h| format!(":{h}"))
        );
        Ok(KernelPlan {
            policy: KernelPolicy::Scx {
                mode: "pedf".into(),
                cpu,
            },
            label,
            inherit: false,
        })
    }
}

/// A SCHED_DEADLINE runtime for `wcet` of work per period: an allowance of 10% (at least
/// 250 us), capped at the deadline (see [`dl_runtime`]).
fn dl_margin(wcet: Time, deadline: Time) -> Time {
    (wcet + (wcet / 10).max(250_000)).min(deadline)
}

/// The SCHED_DEADLINE runtime: the WCET plus an allowance of 10% (at least 250 us), capped at
/// the deadline. The thread's own CPU time per job beyond the demand (waking, counters, the
/// last chunk; measured as `job_cpu_overhead`) was median 19 us, p99 208 us, max 822 us on a
/// saturated 2-vCPU guest; a job that overruns its reservation is throttled to its next period
/// and misses, so runtime = WCET exactly would measure the harness, not the scheduler.
pub fn dl_runtime(t: &rtsched_model::Task) -> Time {
    dl_margin(t.wcet, t.deadline)
}

/// The SCHED_DEADLINE reservations of a task's kernel threads, one per lane ([`lane_wcets`]):
/// each has the task's deadline and period and runtime = the lane's work per job with the
/// [`dl_runtime`] allowance. A lane runs its thread of *every* region that has one within one
/// period, so its budget is the sum over those regions (not the largest one: a helper that
/// ran in two regions would be throttled). The admitted bandwidth of a parallel task is
/// therefore the sum of its lanes' runtimes over the period: larger than C / T by one
/// allowance per lane. A sequential task has the one reservation [`dl_runtime`].
pub fn dl_runtimes(t: &rtsched_model::Task) -> Vec<Time> {
    lane_wcets(&t.program())
        .into_iter()
        .map(|w| dl_margin(w, t.deadline))
        .collect()
}

/// Turns per-chunk CPU samples into execution intervals: consecutive chunks on one CPU with no
/// gap longer than `GAP` form one interval.
pub(crate) struct IntervalBuilder {
    pub cpu: u32,
    pub start: Time,
    pub last: Time,
}

const GAP: Time = 30_000;

impl IntervalBuilder {
    pub fn sample(&mut self, cpu: u32, now: Time, out: &mut Vec<(u32, Time, Time)>) {
        if cpu != self.cpu || now.saturating_sub(self.last) > GAP {
            if self.last > self.start {
                out.push((self.cpu, self.start, self.last));
            }
            self.cpu = cpu;
            self.start = now;
        }
        self.last = now;
    }
    pub fn close(&mut self, out: &mut Vec<(u32, Time, Time)>) {
        if self.last > self.start {
            out.push((self.cpu, self.start, self.last));
        }
        self.start = self.last;
    }
}

struct ThreadOut {
    jobs: Vec<JobRecord>,
    /// Thread CPU time per job beyond its demand (bookkeeping around the work), summed over
    /// the job's threads.
    overhead: Samples,
    intervals: Vec<Interval>,
    counter_source: &'static str,
}

fn admission_message(ts: &TaskSet, upto: usize, err: &std::io::Error) -> String {
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

/// One resource's mutex and what the run observed of it.
struct Lock {
    mutex: sys::PthreadMutex,
    /// Threads inside a section of this resource right now (a working mutex keeps it <= 1).
    holders: AtomicU32,
    max_holders: AtomicU32,
    acquisitions: AtomicU64,
    /// Acquisitions that had to wait.
    contended: AtomicU64,
}

/// The mutexes a thread holds; dropping it (normal end, a stop, a panic) releases them all,
/// innermost first, so no waiter is left hanging.
struct Held<'a> {
    locks: &'a [Lock],
    held: Vec<u32>,
}

impl Held<'_> {
    /// Take resource `r`; returns the time spent waiting for it (0 if it was free).
    fn acquire(&mut self, r: u32) -> Time {
        let l = &self.locks[r as usize];
        let waited = if l.mutex.try_lock() {
            0
        } else {
            let t = sys::mono_ns();
            l.mutex.lock().expect("lock a resource's mutex");
            l.contended.fetch_add(1, Ordering::Relaxed);
            sys::mono_ns() - t
        };
        let now = l.holders.fetch_add(1, Ordering::SeqCst) + 1;
        l.max_holders.fetch_max(now, Ordering::SeqCst);
        l.acquisitions.fetch_add(1, Ordering::Relaxed);
        self.held.push(r);
        waited
    }

    fn release(&mut self, r: u32) {
        if let Some(i) = self.held.iter().rposition(|&h| h == r) {
            self.held.remove(i);
            let l = &self.locks[r as usize];
            l.holders.fetch_sub(1, Ordering::SeqCst);
            // Unlocking a mutex this thread holds cannot fail; never panic while unwinding.
            if let Err(e) = l.mutex.unlock() {
                if !std::thread::panicking() {
                    panic!("unlock a resource's mutex: {e}");
                }
            }
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        while let Some(&r) = self.held.last() {
            self.release(r);
        }
    }
}

/// What one thread of one job did (its own work only: not the task's thread's join waits).
#[derive(Default)]
struct ThreadRun {
    /// When its work ended (run time base).
    end: Time,
    cpus: CpuSet,
    /// Times it was switched out (kernel counter).
    switches: u64,
    /// Of which involuntary: preemptions.
    preemptions: u64,
    migrations: u64,
    blocked: Time,
    /// CPU time beyond its demand (CPU workload only).
    overhead: u64,
    /// CPU time its work took (CLOCK_THREAD_CPUTIME_ID around each piece): the job's `exec`.
    exec: Time,
    /// Hardware counters around its work (a machine with a PMU).
    hw: Option<HwCounters>,
    done: bool,
    intervals: Vec<Interval>,
}

/// What every kernel thread of one task needs to run its work.
struct Ctx {
    task: u32,
    workload: Arc<work::Workload>,
    /// This thread's hardware counters, if the run's probe found a PMU.
    hw: Option<perf::HwGroup>,
    locks: Arc<Vec<Lock>>,
    /// Set when any thread of the run panicked: every other stops too.
    failed: Arc<AtomicBool>,
    base: Time,
    limit: Time,
    record: bool,
    /// This thread's slot in the sched_ext registry (kernel:scx-*).
    scx: Option<ScxSlot>,
}

/// A registered thread's slot; leaving the registry when the thread ends.
struct ScxSlot {
    registry: Arc<scx::Registry>,
    slot: usize,
    tally: Arc<scx::Tally>,
    task: usize,
}

impl ScxSlot {
    /// Mark job `job` (absolute deadline `abs_deadline`) for this thread and for the task's
    /// helpers registered in `helpers` (slot + 1 each, 0: none).
    fn job_for_lanes(
        &self,
        helpers: &[std::sync::atomic::AtomicUsize],
        abs_deadline: Time,
        job: u64,
    ) {
        self.registry.job(self.slot, abs_deadline, job);
        for s in helpers {
            match s.load(Ordering::SeqCst) {
                0 => {}
                k => self.registry.job(k - 1, abs_deadline, job),
            }
        }
    }
}

impl Drop for ScxSlot {
    /// Run on the registered thread as it ends: fair again first, so that it never waits as a
    /// real-time thread behind others while it holds the registry's lock.
    fn drop(&mut self) {
        let _ = sys::set_other(sys::gettid());
        self.tally
            .add(self.task, self.registry.unregister(self.slot));
    }
}

impl Ctx {
    fn should_stop(&self) -> bool {
        interrupted() || self.failed.load(Ordering::Relaxed) || sys::mono_ns() > self.limit
    }
}

/// Run one thread of a job on the calling kernel thread: its demand in pieces between its
/// checkpoints (scaled to the demand), taking and releasing resources there. Returns with no
/// mutex held, whether it completed or was stopped.
#[allow(clippy::too_many_arguments)]
fn run_thread(
    ctx: &Ctx,
    counters: &ThreadCounters,
    tp: &ThreadProgram,
    demand: Time,
    job: u64,
    (region, thread): (u32, u32),
    begin: Time,
    chunks: &mut Vec<(u32, Time, Time)>,
) -> ThreadRun {
    let cpu0 = sys::thread_cpu_ns();
    let (cs0, mig0) = counters.read();
    let can_block = !tp.checkpoints.is_empty();
    let vol0 = if can_block {
        sys::voluntary_switches()
    } else {
        0
    };
    let mut out = ThreadRun {
        done: true,
        ..Default::default()
    };
    let mut ib = IntervalBuilder {
        cpu: sys::current_cpu(),
        start: begin,
        last: begin,
    };
    chunks.clear();
    work_between_checkpoints(ctx, tp, demand, &mut out, &mut ib, chunks);
    let (cs1, mig1) = counters.read();
    out.switches = cs1.saturating_sub(cs0);
    out.migrations = mig1.saturating_sub(mig0);
    out.preemptions = if can_block {
        out.switches
            .saturating_sub(sys::voluntary_switches().saturating_sub(vol0))
    } else {
        out.switches
    };
    if matches!(*ctx.workload, work::Workload::Cpu) {
        out.overhead = sys::thread_cpu_ns()
            .saturating_sub(cpu0)
            .saturating_sub(demand);
    }
    if ctx.record {
        ib.close(chunks);
        out.intervals
            .extend(chunks.iter().map(|&(cpu, s, e)| Interval {
                cpu,
                task: ctx.task,
                job,
                region,
                thread,
                demand,
                start: s,
                end: e,
                overhead: 0,
            }));
    }
    out
}

/// The thread's work: its demand in pieces between its checkpoints (scaled to the demand),
/// taking and releasing resources at each; what it ran and waited into `out`, the CPUs it
/// ran on sampled into `chunks`. Returns with no mutex held.
fn work_between_checkpoints(
    ctx: &Ctx,
    tp: &ThreadProgram,
    demand: Time,
    out: &mut ThreadRun,
    ib: &mut IntervalBuilder,
    chunks: &mut Vec<(u32, Time, Time)>,
) {
    let mut held = Held {
        locks: &ctx.locks,
        held: Vec::new(),
    };
    let (cpus, record, base) = (&mut out.cpus, ctx.record, ctx.base);
    let (exec, hw) = (&mut out.exec, &mut out.hw);
    let mut piece = |ns: Time| -> bool {
        if ns == 0 {
            return true;
        }
        let hw0 = ctx.hw.as_ref().map(|g| g.read());
        let d = ctx.workload.execute(
            ns,
            || ctx.should_stop(),
            |cpu| {
                cpus.insert(cpu);
                if record {
                    ib.sample(cpu, sys::mono_ns() - base, chunks);
                }
            },
        );
        *exec += d.cpu;
        if let (Some(g), Some(s0)) = (&ctx.hw, hw0) {
            perf::add(hw, g.read().since(&s0));
        }
        d.completed
    };
    let mut pos = 0;
    for cp in &tp.checkpoints {
        let at = scale(cp.at, tp.wcet, demand);
        if !piece(at.saturating_sub(pos)) {
            out.done = false;
            break;
        }
        pos = pos.max(at);
        match cp.action {
            Action::Acquire(r) => {
                if ctx.should_stop() {
                    out.done = false;
                    break;
                }
                out.blocked += held.acquire(r);
            }
            Action::Release(r) => held.release(r),
        }
    }
    if out.done {
        out.done = piece(demand.saturating_sub(pos));
    }
    out.end = sys::mono_ns() - ctx.base;
    drop(held);
}

/// Work handed to a helper: thread `thread` of region `region` of job `job`.
#[derive(Clone, Copy)]
struct Handoff {
    job: u64,
    region: u32,
    thread: u32,
    demand: Time,
}

/// One helper thread's mailbox.
#[derive(Default)]
struct Slot {
    /// Bumped for each handoff and at quit; the helper's futex word.
    seq: AtomicU32,
    work: Mutex<Option<Handoff>>,
    report: Mutex<ThreadRun>,
}

/// A parallel task's helper threads and the fork-join between them and the task's thread.
#[derive(Default)]
struct Team {
    slots: Vec<Slot>,
    /// kernel:scx-*: each helper's registry slot + 1 (0: none), for the job boundaries the
    /// task's thread marks.
    scx_slots: Vec<std::sync::atomic::AtomicUsize>,
    /// Helpers of the current region still working: the join counter (a futex word).
    pending: AtomicU32,
    /// The task's thread is done: helpers exit.
    quit: AtomicBool,
    /// A helper panicked.
    failed: AtomicBool,
}

impl Team {
    fn new(helpers: usize) -> Team {
        Team {
            slots: (0..helpers).map(|_| Slot::default()).collect(),
            scx_slots: (0..helpers).map(|_| Default::default()).collect(),
            ..Default::default()
        }
    }

    /// Hand thread k (1..=demands.len()) of the region to helper k.
    fn fork(&self, job: u64, region: u32, demands: &[Time]) {
        self.pending.store(demands.len() as u32, Ordering::SeqCst);
        for (i, &demand) in demands.iter().enumerate() {
            let s = &self.slots[i];
            *s.work.lock().unwrap_or_else(|p| p.into_inner()) = Some(Handoff {
                job,
                region,
                thread: i as u32 + 1,
                demand,
            });
            s.seq.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&s.seq);
        }
    }

    /// Wait until every helper of the region has finished.
    fn join(&self) {
        loop {
            let p = self.pending.load(Ordering::SeqCst);
            if p == 0 {
                break;
            }
            sys::futex_wait_until(&self.pending, p, None);
        }
        if self.failed.load(Ordering::SeqCst) {
            panic!("a helper thread panicked");
        }
    }

    fn report(&self, helper: usize) -> ThreadRun {
        std::mem::take(
            &mut *self.slots[helper]
                .report
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// Tell every helper to exit (the task's thread is done, or unwinding).
    fn dismiss(&self) {
        self.quit.store(true, Ordering::SeqCst);
        for s in &self.slots {
            s.seq.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake(&s.seq);
        }
    }
}

/// Held by the task's thread: on exit (or a panic) its helpers are dismissed and, on a panic,
/// every thread of the run is told to stop.
struct TaskGuard<'a> {
    team: &'a Team,
    failed: &'a AtomicBool,
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.failed.store(true, Ordering::SeqCst);
        }
        self.team.dismiss();
    }
}

/// Held by a helper while it runs a handoff: the join counter always comes down, even if the
/// helper panics (then the task's thread panics too and the run fails).
struct HelperGuard<'a> {
    team: &'a Team,
    failed: &'a AtomicBool,
}

impl Drop for HelperGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.team.failed.store(true, Ordering::SeqCst);
            self.failed.store(true, Ordering::SeqCst);
        }
        if self.team.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            sys::futex_wake(&self.team.pending);
        }
    }
}

/// Set the calling thread's policy for `lane` of task `ti`.
fn set_policy(
    policy: &KernelPolicy,
    ti: usize,
    dl_runtime: Time,
    task: &rtsched_model::Task,
) -> std::io::Result<()> {
    let tid = sys::gettid();
    match policy {
        // Registered by Spawn::begin (it needs the registry); here only the CPU of a partition.
        KernelPolicy::Scx { cpu, .. } => sys::set_affinity(tid, cpu[ti].map(|c| c as usize)),
        KernelPolicy::Deadline { reclaim } => {
            // The kernel frees an ended reservation's bandwidth only at its 0-lag time (up to a
            // deadline after it ended), so a run right after another can be refused for
            // bandwidth nobody uses any more: retry a refusal for up to a second before
            // reporting it.
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(1);
            loop {
                match sys::set_deadline(
                    tid,
                    dl_runtime,
                    task.deadline,
                    task.period,
                    if *reclaim { sys::SCHED_FLAG_RECLAIM } else { 0 },
                ) {
                    Err(e)
                        if e.raw_os_error() == Some(libc::EBUSY)
                            && std::time::Instant::now() < give_up =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    r => break r,
                }
            }
        }
        KernelPolicy::Fifo { prio, cpu, .. } => sys::set_affinity(tid, cpu[ti].map(|c| c as usize))
            .and_then(|_| sys::set_fifo(tid, prio[ti])),
        KernelPolicy::Other => sys::set_other(tid),
    }
}

/// What every thread shares for setup: the barriers, the time base and the setup errors.
struct Start {
    ready: Barrier,
    go: Barrier,
    abort: AtomicBool,
    t0: AtomicU64,
    errors: Mutex<Vec<(usize, std::io::Error)>>,
}

impl Start {
    /// The main thread's side: wait until every thread is ready, call the run off if any
    /// could not take its policy, set the time base (20 ms ahead) and let them go. The
    /// threads' setup errors, by task.
    fn release(&self) -> Vec<(usize, std::io::Error)> {
        self.ready.wait();
        let errs = std::mem::take(&mut *self.errors.lock().unwrap_or_else(|p| p.into_inner()));
        if !errs.is_empty() {
            self.abort.store(true, Ordering::SeqCst);
        }
        self.t0.store(sys::mono_ns() + 20_000_000, Ordering::SeqCst);
        self.go.wait();
        errs
    }

    /// Report the policy result, wait for every thread and the start; `None` if the run was
    /// called off, else the run's time base.
    fn wait(&self, ti: usize, set: std::io::Result<()>) -> Option<Time> {
        if let Err(e) = set {
            self.errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((ti, e));
        }
        self.ready.wait();
        self.go.wait();
        if self.abort.load(Ordering::SeqCst) {
            None
        } else {
            Some(self.t0.load(Ordering::SeqCst))
        }
    }
}

/// What a kernel thread of task `ti` is given when it is spawned.
struct Spawn {
    ti: usize,
    task: Arc<rtsched_model::Task>,
    program: Arc<Program>,
    policy: KernelPolicy,
    /// Its SCHED_DEADLINE runtime (lane of [`dl_runtimes`]).
    runtime: Time,
    start: Arc<Start>,
    team: Arc<Team>,
    workload: Arc<work::Workload>,
    hw_event: Option<perf::LlcEvent>,
    locks: Arc<Vec<Lock>>,
    failed: Arc<AtomicBool>,
    /// How long after the time base threads stop working (duration + drain).
    window: Time,
    record: bool,
    /// kernel:scx-*: the registry, and this thread's lane (0: the task's own thread) and WCET.
    scx: Option<Arc<scx::Registry>>,
    scx_tally: Arc<scx::Tally>,
    lane: usize,
    lane_wcet: Time,
    /// Streaming: where the task's records go as its jobs end (else they are held).
    handoff: Option<Outbox>,
}

impl Spawn {
    /// Set the policy, wait for the start; the thread's context, or `None` if called off.
    fn begin(&self) -> Option<Ctx> {
        let mut set = set_policy(&self.policy, self.ti, self.runtime, &self.task);
        let mut scx = None;
        if let (Ok(()), Some(registry), KernelPolicy::Scx { cpu, .. }) =
            (&set, &self.scx, &self.policy)
        {
            let tid = sys::gettid();
            let d = scx::Declared {
                period: self.task.period,
                deadline: self.task.deadline,
                wcet: self.lane_wcet,
                cpu: cpu[self.ti],
            };
            set = match registry.register(tid, d) {
                Ok(slot) => {
                    let s = ScxSlot {
                        registry: registry.clone(),
                        slot,
                        tally: self.scx_tally.clone(),
                        task: self.ti,
                    };
                    if self.lane > 0 {
                        self.team.scx_slots[self.lane - 1].store(slot + 1, Ordering::SeqCst);
                    }
                    let r = sys::set_ext(tid);
                    scx = Some(s);
                    r
                }
                Err(e) => Err(std::io::Error::other(e.to_string())),
            };
        }
        let admitted = set.is_ok() && matches!(self.policy, KernelPolicy::Deadline { .. });
        let Some(base) = self.start.wait(self.ti, set) else {
            // Called off after this thread got a reservation: hand it back explicitly before
            // the thread ends. (On this project's 6.18 guests, reservations of threads that
            // ended while parked right after admission were released twice, corrupting the
            // kernel's DL bandwidth total until reboot; switching to SCHED_OTHER releases it
            // on the ordinary path.)
            if admitted {
                let _ = sys::set_other(sys::gettid());
            }
            return None;
        };
        Some(Ctx {
            task: self.ti as u32,
            workload: self.workload.clone(),
            hw: self.hw_event.and_then(perf::HwGroup::open_for_thread),
            locks: self.locks.clone(),
            failed: self.failed.clone(),
            base,
            limit: base + self.window,
            record: self.record,
            scx,
        })
    }
}

/// A helper: runs thread `lane` of each region handed to it until dismissed.
fn helper_main(sp: Spawn, lane: usize) {
    let Some(ctx) = sp.begin() else { return };
    let (team, program) = (&*sp.team, &*sp.program);
    let counters = ThreadCounters::open();
    let slot = &team.slots[lane - 1];
    let mut chunks = Vec::new();
    let mut seen = 0u32;
    loop {
        let s = slot.seq.load(Ordering::SeqCst);
        if s == seen {
            sys::futex_wait_until(&slot.seq, s, None);
            continue;
        }
        seen = s;
        if team.quit.load(Ordering::SeqCst) {
            return;
        }
        let Some(h) = slot.work.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            continue;
        };
        let _guard = HelperGuard {
            team,
            failed: &ctx.failed,
        };
        let tp = &program.regions[h.region as usize][h.thread as usize];
        let begin = sys::mono_ns() - ctx.base;
        let run = run_thread(
            &ctx,
            &counters,
            tp,
            h.demand,
            h.job,
            (h.region, h.thread),
            begin,
            &mut chunks,
        );
        *slot.report.lock().unwrap_or_else(|p| p.into_inner()) = run;
    }
}

/// The task's own thread: releases, runs thread 0 of every region, forks and joins helpers.
fn task_main(sp: Spawn, ts: &TaskSet) -> ThreadOut {
    let duration = ts.run.duration;
    let mut out = ThreadOut {
        jobs: Vec::new(),
        overhead: Samples::default(),
        intervals: Vec::new(),
        counter_source: "",
    };
    let Some(ctx) = sp.begin() else {
        sp.team.dismiss();
        return out;
    };
    let (ti, task, program, team, base) = (sp.ti, &sp.task, &*sp.program, &*sp.team, ctx.base);
    let _guard = TaskGuard {
        team,
        failed: &ctx.failed,
    };
    let counters = ThreadCounters::open();
    out.counter_source = counters.source();
    let mut streams = TaskStreams::new(ts.run.seed, ti as u32);
    let (mut release, mut job) = (task.offset, 0u64);
    let mut chunks: Vec<(u32, Time, Time)> = Vec::new();
    let mut demands: Vec<Time> = Vec::with_capacity(program.threads());
    let is_cpu = matches!(*ctx.workload, work::Workload::Cpu);
    // This thread's CPU time when the previous job's record was made: what it is charged from
    // there to the end of the next job's work, beyond that work, is the next job's overhead
    // (its wake-up, the bookkeeping between jobs, the previous record's handover, waits that
    // spin). A SCHED_DEADLINE reservation is charged all of it, so a job can be throttled
    // with its work inside the runtime (docs/real-runs.md, "Findings").
    let mut cpu_mark = sys::thread_cpu_ns();
    while release < duration && !interrupted() && !ctx.failed.load(Ordering::Relaxed) {
        let demand = draw(ts, task, program, &mut streams, job, &mut demands);
        if let Some(r) = &ctx.scx {
            // Job boundary (ChronOS's begin_rt_seg): the job's deadline is in the registry
            // before the wake-up at its release, for every lane of the task.
            r.job_for_lanes(&team.scx_slots, base + release + task.deadline, job);
        }
        sys::sleep_until(base + release, &INTERRUPTED);
        let start = sys::mono_ns() - base;
        let j = Job {
            job,
            start,
            demands: &demands,
        };
        let (acc, runs, own_work) = run_regions(
            &ctx,
            &counters,
            team,
            program,
            &j,
            &mut chunks,
            &mut out.intervals,
        );
        let cpu_now = sys::thread_cpu_ns();
        let outside = cpu_now.saturating_sub(cpu_mark).saturating_sub(own_work);
        cpu_mark = cpu_now;
        if is_cpu {
            out.overhead.push(acc.overhead);
        }
        let done = acc.done;
        let mut rec = job_record(
            ti,
            job,
            release,
            demand,
            start,
            task.deadline,
            acc,
            runs,
            outside,
        );
        rec.accrue(task);
        keep(&mut out, &sp.handoff, rec);
        job += 1;
        release += streams.interarrival(task);
        if !done {
            break;
        }
    }
    // Counted jobs the thread never reached (it ran out of time behind late jobs): they exist,
    // were never started, and miss.
    let mut next = (release, job);
    while next.0 < duration {
        let rec = unreached(ts, ti, task, program, &mut streams, &mut demands, &mut next);
        keep(&mut out, &sp.handoff, rec);
    }
    out
}

/// The record of job `next` = (release, job), which its thread never reached: drawn like
/// every job, never started, missed. `next` moves on to the task's next job.
fn unreached(
    ts: &TaskSet,
    ti: usize,
    task: &rtsched_model::Task,
    program: &Program,
    streams: &mut TaskStreams,
    demands: &mut Vec<Time>,
    next: &mut (Time, u64),
) -> JobRecord {
    let (release, job) = *next;
    let demand = draw(ts, task, program, streams, job, demands);
    *next = (release + streams.interarrival(task), job + 1);
    JobRecord {
        task: ti as u32,
        job,
        release,
        deadline: release + task.deadline,
        demand,
        missed: true,
        max_utility: task.max_utility(),
        // The kernel's run queues are not seen: pulls not measured.
        pulls: None,
        ..Default::default()
    }
}

/// Job `job`'s demand, and each of its threads' into `demands`: drawn from the task's seeded
/// streams as the simulator draws them, or replayed from the task's execution times.
fn draw(
    ts: &TaskSet,
    task: &rtsched_model::Task,
    program: &Program,
    streams: &mut TaskStreams,
    job: u64,
    demands: &mut Vec<Time>,
) -> Time {
    demands.clear();
    if task.execution_times.is_empty() {
        streams.job_demands(&ts.run.execution, program, demands)
    } else {
        rtsched_runtime::streams::replayed(&task.execution_times, job, demands)
    }
}

/// The job a task's thread runs: its number, when it started (run time base) and each of its
/// threads' demand.
struct Job<'a> {
    job: u64,
    start: Time,
    demands: &'a [Time],
}

/// Run job `j`'s regions one after another: thread 0 of each on the calling thread, the
/// others forked to the helpers and joined. The job's totals, the threads run and the calling
/// thread's own work (CPU time).
fn run_regions(
    ctx: &Ctx,
    counters: &ThreadCounters,
    team: &Team,
    program: &Program,
    j: &Job<'_>,
    chunks: &mut Vec<(u32, Time, Time)>,
    intervals: &mut Vec<Interval>,
) -> (ThreadRun, u32, Time) {
    let mut acc = ThreadRun {
        end: j.start,
        done: true,
        ..Default::default()
    };
    let mut runs = 0u32;
    let mut first = 0;
    let mut own_work = 0;
    for (r, region) in program.regions.iter().enumerate() {
        let n = region.len();
        if n > 1 {
            team.fork(j.job, r as u32, &j.demands[first + 1..first + n]);
        }
        let begin = if r == 0 {
            j.start
        } else {
            sys::mono_ns() - ctx.base
        };
        let own = run_thread(
            ctx,
            counters,
            &region[0],
            j.demands[first],
            j.job,
            (r as u32, 0),
            begin,
            chunks,
        );
        own_work += own.exec;
        merge(&mut acc, own, intervals);
        if n > 1 {
            team.join();
            for k in 1..n {
                merge(&mut acc, team.report(k - 1), intervals);
            }
        }
        runs += n as u32;
        first += n;
        if !acc.done {
            break;
        }
    }
    (acc, runs, own_work)
}

/// The record of job `job` of task `ti` that ran `runs` threads with the totals `acc`;
/// `outside` is the CPU time its thread was charged beyond its work.
#[allow(clippy::too_many_arguments)]
fn job_record(
    ti: usize,
    job: u64,
    release: Time,
    demand: Time,
    start: Time,
    relative_deadline: Time,
    acc: ThreadRun,
    runs: u32,
    outside: Time,
) -> JobRecord {
    let (done, finish) = (acc.done, acc.end);
    let deadline = release + relative_deadline;
    JobRecord {
        task: ti as u32,
        job,
        release,
        deadline,
        demand,
        start: Some(start),
        finish: done.then_some(finish),
        cpus: acc.cpus,
        preemptions: acc.preemptions as u32,
        migrations: acc.migrations as u32,
        context_switches: runs + acc.switches as u32,
        missed: !done || finish > deadline,
        aborted: false,
        blocked: acc.blocked,
        // As the simulator's: every CPU time charged to the job, and of it the overhead.
        // Its helpers' threads (parallel regions) count their work only.
        exec: acc.exec + outside,
        overhead: outside,
        hw: acc.hw,
        pulls: None,
        ..Default::default()
    }
}

/// A job's record, final: held in the thread's output, or handed to the main thread.
fn keep(out: &mut ThreadOut, handoff: &Option<Outbox>, rec: JobRecord) {
    match handoff {
        Some(h) => h.push(rec),
        None => out.jobs.push(rec),
    }
}

/// Add one thread's run to its job's totals.
fn merge(acc: &mut ThreadRun, run: ThreadRun, intervals: &mut Vec<Interval>) {
    acc.end = acc.end.max(run.end);
    for c in run.cpus.iter() {
        acc.cpus.insert(c);
    }
    acc.switches += run.switches;
    acc.preemptions += run.preemptions;
    acc.migrations += run.migrations;
    acc.blocked += run.blocked;
    acc.overhead += run.overhead;
    acc.exec += run.exec;
    if let Some(h) = run.hw {
        perf::add(&mut acc.hw, h);
    }
    acc.done &= run.done;
    intervals.extend(run.intervals);
}

/// The kernel's real-time bandwidth for `m` CPUs (sched_rt_runtime_us / sched_rt_period_us),
/// or `None` when unlimited or unreadable.
fn rt_bandwidth(m: u32) -> Option<f64> {
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
fn dl_bandwidth_in_use() -> Option<f64> {
    let text = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    parse_total_bw(&text)
}

/// What [`dl_bandwidth_in_use`] would most likely read when debugfs is not mounted: the fair
/// servers' default 50 ms every second on each CPU, on kernels that have them (6.12+).
fn fair_servers_default(m: u32) -> f64 {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut v = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    match (v.next(), v.next()) {
        (Some(major), Some(minor)) if (major, minor) >= (6, 12) => 0.05 * m as f64,
        _ => 0.0,
    }
}

/// Reserved deadline bandwidth: read when possible, else the fair servers' default (and
/// whether it was read).
fn dl_reserved(m: u32) -> (f64, bool) {
    match dl_bandwidth_in_use() {
        Some(u) => (u, true),
        None => (fair_servers_default(m), false),
    }
}

fn parse_total_bw(text: &str) -> Option<f64> {
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
fn deadline_precheck(ts: &TaskSet) -> Result<(), RunError> {
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

fn check_thread_count(ts: &TaskSet) -> Result<(), RunError> {
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

/// Start delays of a run that held its records ([`stream::StartDelays`]).
fn add_start_delay(r: &mut RunResult) {
    let mut d = stream::StartDelays::new(r.task_names.len());
    for j in &r.jobs {
        d.job(j);
    }
    d.samples.report("start_delay", &mut r.measurements);
}

pub fn run(ts: &TaskSet, plan: &KernelPlan, opts: &RunOptions) -> Result<RunResult, RunError> {
    run_into(ts, plan, opts, None)
}

/// [`run`], its records streamed to `out` as its jobs end instead of held (`None`: held):
/// each task thread hands its records over, this thread interleaves them into release order
/// ([`Merger`]) while it waits for the run to end.
pub(crate) fn run_into(
    ts: &TaskSet,
    plan: &KernelPlan,
    opts: &RunOptions,
    mut out: Option<&mut Collector<'_>>,
) -> Result<RunResult, RunError> {
    check_thread_count(ts)?;
    if matches!(plan.policy, KernelPolicy::Deadline { .. }) {
        deadline_precheck(ts)?;
    }
    let n = ts.tasks.len();
    let programs: Vec<Arc<Program>> = ts.tasks.iter().map(|t| Arc::new(t.program())).collect();
    let threads: usize = programs.iter().map(|p| p.width()).sum();
    let start = Arc::new(Start {
        ready: Barrier::new(threads + 1),
        go: Barrier::new(threads + 1),
        abort: AtomicBool::new(false),
        t0: AtomicU64::new(0),
        errors: Mutex::new(Vec::new()),
    });
    let locks = Arc::new(resource_locks(ts, plan.inherit)?);
    let failed = Arc::new(AtomicBool::new(false));
    // kernel:scx-*: load the scheduler first (it refuses here if the kernel cannot).
    let (session, registry) = load_scx(plan)?;
    let tally = Arc::new(scx::Tally::new(n));
    let handoff = Outbox::default();
    // Before any thread starts: calibrate the memory work and probe the PMU (once per run).
    let workloads = work::Workloads::for_taskset(ts);
    let probe = perf::probe();
    let window = ts.run.duration + drain(ts);
    let spawned = spawn_threads(ts, &programs, |l, task, team| Spawn {
        ti: l.ti,
        task: task.clone(),
        program: programs[l.ti].clone(),
        policy: plan.policy.clone(),
        runtime: l.runtime,
        start: start.clone(),
        team: team.clone(),
        workload: workloads.per_task[l.ti].clone(),
        hw_event: probe.as_ref().ok().copied(),
        locks: locks.clone(),
        failed: failed.clone(),
        window,
        record: opts.record_intervals,
        scx: registry.clone(),
        scx_tally: tally.clone(),
        lane: l.lane,
        lane_wcet: l.wcet,
        handoff: out.is_some().then(|| handoff.clone()),
    });
    let (mains, helpers) = match spawned {
        Ok(threads) => threads,
        Err(e) => {
            // The threads already started wait at the barrier, which cannot be called off;
            // they are left there (they have not run anything) and end with the process.
            start.abort.store(true, Ordering::SeqCst);
            return Err(RunError::Failed(format!("cannot start a thread: {e}")));
        }
    };
    let errs = start.release();
    let mut merger = Merger::new(n);
    if let Some(c) = out.as_deref_mut() {
        drain_while_running(&mains, &handoff, &mut merger, c);
    }
    let outs = join_threads(mains, helpers, &failed)?;
    // Every thread has left the registry: unload the scheduler and keep its counters.
    drop(registry);
    let scx_stats = match session {
        Some(s) => Some(s.stop().map_err(RunError::Failed)?),
        None => None,
    };
    if let Some((ti, e)) = errs.into_iter().min_by_key(|(ti, _)| *ti) {
        return Err(RunError::Input(setup_error(ts, plan, ti, &e)));
    }
    let mut r = RunResult::new("kernel", &plan.label, ts);
    r.unmeasured = &LEDGER_COUNTERS;
    // Where the run's time 0 lies on CLOCK_MONOTONIC, to line its records up with anything
    // else timed on this machine (a trace, a latency probe, /proc samples).
    r.measurements
        .insert(TIME_ZERO_KEY.into(), start.t0.load(Ordering::SeqCst) as f64);
    if let Some(stats) = scx_stats {
        r.measurements.extend(stats);
        tally.report(&r.task_names, &mut r.measurements);
    }
    workloads.report(&mut r.measurements);
    perf::report(&probe, &mut r);
    assemble(ts, outs, &locks, &mut r);
    if let Some(c) = out {
        finish_stream(&handoff, merger, c, &mut r);
    }
    Ok(r)
}

/// How long after the run's duration its threads may still work: twice the longest
/// deadline or period, for the last jobs to end.
fn drain(ts: &TaskSet) -> Time {
    ts.tasks
        .iter()
        .map(|t| t.deadline.max(t.period))
        .max()
        .unwrap_or(0)
        * 2
}

/// One mutex per resource of the task set (`inherit`: with priority inheritance).
fn resource_locks(ts: &TaskSet, inherit: bool) -> Result<Vec<Lock>, RunError> {
    (0..ts.resources.len())
        .map(|_| {
            Ok(Lock {
                mutex: sys::PthreadMutex::new(inherit)?,
                holders: AtomicU32::new(0),
                max_holders: AtomicU32::new(0),
                acquisitions: AtomicU64::new(0),
                contended: AtomicU64::new(0),
            })
        })
        .collect::<std::io::Result<_>>()
        .map_err(|e| RunError::Failed(format!("cannot create the resources' mutexes: {e}")))
}

/// kernel:scx-*: load rtsched's sched_ext scheduler in the plan's mode and open its registry.
fn load_scx(
    plan: &KernelPlan,
) -> Result<(Option<scx::Session>, Option<Arc<scx::Registry>>), RunError> {
    let KernelPolicy::Scx { mode, .. } = &plan.policy else {
        return Ok((None, None));
    };
    let session = scx::Session::start(mode).map_err(RunError::Input)?;
    let registry = scx::Registry::open(&session.pin, sys::online_cpus() as u32)
        .map_err(|e| RunError::Failed(format!("cannot open the sched_ext registry: {e}")))?;
    Ok((Some(session), Some(Arc::new(registry))))
}

type Threads = (
    Vec<std::thread::JoinHandle<ThreadOut>>,
    Vec<std::thread::JoinHandle<()>>,
);

/// Lane `lane` of task `ti`: its SCHED_DEADLINE runtime ([`dl_runtimes`]) and its WCET per
/// job ([`lane_wcets`]).
struct LaneOf {
    ti: usize,
    lane: usize,
    runtime: Time,
    wcet: Time,
}

/// Start every task's threads, each task's helpers (lanes 1..) before its own thread, each
/// given what `spawn` makes for its lane. They wait at the start barrier. A thread that
/// cannot be started ends the spawning after its task.
fn spawn_threads(
    ts: &TaskSet,
    programs: &[Arc<Program>],
    spawn: impl Fn(&LaneOf, &Arc<rtsched_model::Task>, &Arc<Team>) -> Spawn,
) -> std::io::Result<Threads> {
    let (mut mains, mut helpers) = (Vec::with_capacity(ts.tasks.len()), Vec::new());
    let mut spawn_error = None;
    for (ti, task) in ts.tasks.iter().enumerate() {
        // Shared by the task's lanes: a clone each would be quadratic in the task's threads.
        let shared = Arc::new(task.clone());
        let runtimes = dl_runtimes(task);
        let wcets = lane_wcets(&programs[ti]);
        let team = Arc::new(Team::new(runtimes.len() - 1));
        let lane = |lane: usize| LaneOf {
            ti,
            lane,
            runtime: runtimes[lane],
            wcet: wcets[lane],
        };
        for k in 1..runtimes.len() {
            let sp = spawn(&lane(k), &shared, &team);
            match std::thread::Builder::new()
                .name(format!("rtsched-{}.{k}", task.name))
                .spawn(move || helper_main(sp, k))
            {
                Ok(h) => helpers.push(h),
                Err(e) => spawn_error = Some(e),
            }
        }
        let (sp, ts2) = (spawn(&lane(0), &shared, &team), ts.clone());
        match std::thread::Builder::new()
            .name(format!("rtsched-{}", task.name))
            .spawn(move || task_main(sp, &ts2))
        {
            Ok(h) => mains.push(h),
            Err(e) => spawn_error = Some(e),
        }
        if spawn_error.is_some() {
            break;
        }
    }
    match spawn_error {
        Some(e) => Err(e),
        None => Ok((mains, helpers)),
    }
}

/// Streaming: while the task threads run, move their records on in release order.
fn drain_while_running(
    mains: &[std::thread::JoinHandle<ThreadOut>],
    handoff: &Outbox,
    merger: &mut Merger,
    c: &mut Collector<'_>,
) {
    let n = mains.len();
    c.track_start_delays(n);
    let mut buf = Vec::new();
    let mut ended = vec![false; n];
    while ended.iter().any(|e| !e) {
        std::thread::sleep(stream::DRAIN_EVERY);
        // A thread seen finished before the take has handed over all it will.
        let finished: Vec<usize> = (0..mains.len())
            .filter(|&t| !ended[t] && mains[t].is_finished())
            .collect();
        handoff.take(&mut buf);
        for rec in buf.drain(..) {
            merger.push(rec);
        }
        for t in finished {
            ended[t] = true;
            merger.end_task(t);
        }
        merger.emit(c);
    }
}

/// Join every thread before deciding anything, so none outlives the run; the task threads'
/// outputs.
fn join_threads(
    mains: Vec<std::thread::JoinHandle<ThreadOut>>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    failed: &AtomicBool,
) -> Result<Vec<ThreadOut>, RunError> {
    let mut outs = Vec::with_capacity(mains.len());
    let mut panicked = false;
    for h in mains {
        match h.join() {
            Ok(o) => outs.push(o),
            Err(_) => {
                failed.store(true, Ordering::SeqCst);
                panicked = true;
            }
        }
    }
    for h in helpers {
        panicked |= h.join().is_err();
    }
    if panicked {
        return Err(RunError::Failed(
            "a task thread panicked; every thread was stopped".into(),
        ));
    }
    Ok(outs)
}

/// Why task `ti`'s thread could not take its scheduling policy, said for the user.
fn setup_error(ts: &TaskSet, plan: &KernelPlan, ti: usize, e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(libc::EBUSY) && matches!(plan.policy, KernelPolicy::Deadline { .. })
    {
        admission_message(ts, ti, e)
    } else if e.raw_os_error() == Some(libc::EPERM) {
        format!("{}: task '{}': not permitted to set the scheduling policy ({e}); real runs need root or CAP_SYS_NICE. Nothing was run.", ts.source, ts.tasks[ti].name)
    } else {
        format!(
            "{}: task '{}': cannot set the scheduling policy for {}: {e}. Nothing was run.",
            ts.source, ts.tasks[ti].name, plan.label
        )
    }
}

/// The task threads' records, intervals and samples, and the resources' counts, into `r`.
fn assemble(ts: &TaskSet, mut outs: Vec<ThreadOut>, locks: &[Lock], r: &mut RunResult) {
    let mut end = 0;
    for o in &outs {
        for j in &o.jobs {
            end = end.max(j.finish.unwrap_or(j.deadline));
        }
    }
    for o in outs.iter_mut() {
        r.jobs.append(&mut o.jobs);
        r.intervals.append(&mut o.intervals);
        if !o.counter_source.is_empty() {
            r.measurements
                .insert(format!("counters_from_{}", o.counter_source), 1.0);
        }
    }
    let mut overhead = Samples::default();
    for o in &outs {
        overhead.merge(&o.overhead);
    }
    overhead.report("job_cpu_overhead", &mut r.measurements);
    for (name, l) in ts.resources.iter().zip(locks.iter()) {
        r.measurements.insert(
            format!("resource.{name}.acquisitions"),
            l.acquisitions.load(Ordering::SeqCst) as f64,
        );
        r.measurements.insert(
            format!("resource.{name}.contended"),
            l.contended.load(Ordering::SeqCst) as f64,
        );
        r.measurements.insert(
            format!("resource.{name}.max_holders"),
            l.max_holders.load(Ordering::SeqCst) as f64,
        );
    }
    r.jobs.sort_by_key(|j| (j.release, j.task, j.job));
    r.intervals.sort_by_key(|i| (i.start, i.cpu));
    r.end = end;
    r.counters.releases = r.jobs.len() as u64;
    add_start_delay(r);
}

/// Streaming: the records handed over last, then the rest in release order; the run's end,
/// job count and start delays are the stream's.
fn finish_stream(handoff: &Outbox, mut merger: Merger, c: &mut Collector<'_>, r: &mut RunResult) {
    let mut buf = Vec::new();
    handoff.take(&mut buf);
    for rec in buf.drain(..) {
        merger.push(rec);
    }
    merger.finish(c, |o, rest| {
        rest.iter()
            .flatten()
            .map(|j| j.finish.unwrap_or(j.deadline))
            .fold(o.latest, Time::max)
    });
    r.end = c.latest;
    r.counters.releases = c.jobs;
    if let Some(d) = &mut c.start_delays {
        d.samples.report("start_delay", &mut r.measurements);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::file::{parse_taskset, Format};

    #[test]
    fn a_kernel_run_refuses_more_threads_than_its_limit_before_starting_any() {
        let set = |width: usize| {
            let text = format!("platform: {{cpus: 2}}\ntasks:\n  - {{name: s, period: 100, wcet: 1}}\n  - {{name: p, period: 100, regions: [1, {{threads: {width}, wcet: 10us}}]}}\n");
            parse_taskset(&text, Format::Yaml, "w.yaml").unwrap()
        };
        assert!(check_thread_count(&set(4095)).is_ok());
        match check_thread_count(&set(4096)) {
            Err(RunError::Input(m)) => assert!(
                m.starts_with("w.yaml: task 'p': field 'regions'")
                    && m.contains("need 4097, more than the limit of 4096"),
                "{m}"
            ),
            other => panic!("{:?}", other.err()),
        }
        // And through the run itself, with no thread started (no privilege needed to see it).
        let plan = KernelPlan::new(&set(10_000), "fifo").unwrap();
        assert!(
            matches!(run(&set(10_000), &plan, &RunOptions::default()), Err(RunError::Input(m)) if m.contains("limit of 4096"))
        );
    }

    /// The line as Linux 6.18 prints it here: two fair servers of 5% each on a 2-CPU root domain.
    #[test]
    fn reserved_deadline_bandwidth_is_read_from_the_debug_file() {
        let text = "rt_rq[0]:\n  .rt_nr_running : 0\n\ndl_rq[0]:\n  .dl_nr_running                 : 0\n  .dl_bw->bw                     : 996147\n  .dl_bw->total_bw               : 104856\n";
        let got = parse_total_bw(text).unwrap();
        assert!((got - 0.1).abs() < 1e-3, "{got}");
        assert_eq!(parse_total_bw("nothing here"), None);
        assert_eq!(parse_total_bw("  .dl_bw->total_bw : -414189\n"), Some(0.0));
        // a corrupted total reads as none
    }

    #[test]
    fn deadline_plans_beyond_the_rt_bandwidth_are_refused_before_the_kernel_is_asked() {
        let Some(cap) = rt_bandwidth(2) else { return };
        // 2 x (9.8 ms + 10%) / 10 ms = 2.16 > cap (at most 2 CPUs' worth).
        let over = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 9.8}\n  - {name: b, period: 10, wcet: 9.8}\n");
        match deadline_precheck(&over) {
            Err(RunError::Input(m)) => {
                assert!(
                    m.contains("task 'b'")
                        && m.contains("checked before asking the kernel")
                        && m.contains("Nothing was run"),
                    "{m}"
                )
            }
            other => panic!("expected a refusal under cap {cap}, got {other:?}"),
        }
        let fits = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n");
        assert!(deadline_precheck(&fits).is_ok());
    }

    fn taskset(yaml: &str) -> TaskSet {
        parse_taskset(yaml, Format::Yaml, "t.yaml").unwrap()
    }

    const PLAIN: &str = "platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, period: 20, wcet: 3, priority: 5}\n";

    fn err(ts: &TaskSet, spec: &str) -> String {
        match KernelPlan::new(ts, spec) {
            Err(RunError::Input(m)) => m,
            Ok(p) => panic!("{spec} accepted as {}", p.label),
            Err(e) => panic!("{spec}: {e}"),
        }
    }

    /// The kernel's own policies cannot keep a DAG's precedence: every one refuses a DAG set,
    /// naming the task and the field (the user-space modes take it: `backend.rs`).
    #[test]
    fn the_kernel_policies_refuse_dag_tasks() {
        let ts = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: p, period: 20, dag: {nodes: {x: 1, y: 2}, edges: [[x, y]]}}\n");
        for spec in ["fifo", "deadline", "other", "scx-gedf", "scx-pedf"] {
            let m = err(&ts, spec);
            assert!(
                m.starts_with("t.yaml: task 'p': field 'dag': ") && m.contains("docs/dag.md"),
                "{spec}: {m}"
            );
        }
    }

    #[test]
    fn backend_options_parse_with_pi() {
        let ts = taskset(PLAIN);
        for (spec, label, pi) in [
            ("deadline", "kernel:deadline", false),
            ("deadline:pi", "kernel:deadline:pi", true),
            ("deadline:reclaim:pi", "kernel:deadline:reclaim:pi", true),
            ("deadline:pi:reclaim", "kernel:deadline:reclaim:pi", true),
            ("fifo", "kernel:fifo:rm", false),
            ("fifo:pi", "kernel:fifo:rm:pi", true),
            ("fifo:dm:pi", "kernel:fifo:dm:pi", true),
            ("other:pi", "kernel:other:pi", true),
        ] {
            let p = KernelPlan::new(&ts, spec).unwrap();
            assert_eq!((p.label.as_str(), p.inherit), (label, pi), "{spec}");
        }
        assert!(matches!(
            KernelPlan::new(&ts, "fifo:rm").unwrap().policy,
            KernelPolicy::Fifo { .. }
        ));
        assert_eq!(
            err(&ts, "deadline:pie"),
            "kernel:deadline: unknown option 'pie' (known: reclaim, pi)"
        );
        assert_eq!(
            err(&ts, "fifo:xx"),
            "kernel:fifo: unknown option or priority assignment 'xx' (known: rm, dm, file, pi)"
        );
        assert_eq!(
            err(&ts, "other:reclaim"),
            "kernel:other: unknown option 'reclaim' (known: pi)"
        );
        assert!(err(&ts, "fifo:rm:dm").contains("choose one priority assignment"));
        assert!(err(&ts, "deadline:pi:pi").contains("given twice"));
        assert!(err(&ts, "fifo:file").contains("task 'a': field 'priority'"));
        assert!(err(&ts, "rr").contains("unknown kernel backend 'kernel:rr'"));
    }

    #[test]
    fn sched_ext_plans_partition_and_admit() {
        let ts = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 6}\n  - {name: b, period: 10, wcet: 5}\n  - {name: c, period: 10, wcet: 4}\n");
        let p = KernelPlan::new(&ts, "scx-gedf").unwrap();
        assert_eq!(p.label, "kernel:scx-gedf");
        assert!(matches!(&p.policy, KernelPolicy::Scx { mode, .. } if mode == "gedf"));
        assert_eq!(
            KernelPlan::new(&ts, "scx-gedf:linear").unwrap().label,
            "kernel:scx-gedf:linear"
        );
        assert_eq!(
            err(&ts, "scx-gedf:pi"),
            "kernel:scx-gedf: unknown option 'pi' (known: linear)"
        );
        // A heuristic makes the partition, as for the pedf policy: .6+.4 and .5.
        let p = KernelPlan::new(&ts, "scx-pedf:ffd").unwrap();
        assert_eq!(p.label, "kernel:scx-pedf:ffd");
        assert!(
            matches!(&p.policy, KernelPolicy::Scx { cpu, .. } if cpu == &[Some(0), Some(1), Some(0)])
        );
        assert!(
            err(&ts, "scx-pedf").contains("field 'cpu'"),
            "{}",
            err(&ts, "scx-pedf")
        );
        assert!(err(&ts, "scx-pedf:fdd").contains("unknown partitioner 'fdd'"));
        // Admission: 2.1 on 2 CPUs is refused with the numbers; so is a CPU above 1.
        let over = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 8}\n  - {name: b, period: 10, wcet: 7}\n  - {name: c, period: 10, wcet: 6}\n");
        assert_eq!(
            err(&over, "scx-gedf"),
            "t.yaml: field 'tasks': total bandwidth 2.100 (sum of WCET/period) exceeds the 2 CPUs; kernel:scx-* refuses it at registration"
        );
        let pinned = taskset("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 6, cpu: 0}\n  - {name: b, period: 10, wcet: 5, cpu: 0}\n");
        assert_eq!(err(&pinned, "scx-pedf"), "t.yaml: task 'b': field 'cpu': CPU 0 would carry bandwidth 1.100 > 1 (a 0.600, b 0.500)");
    }

    const PAR: &str = "platform: {cpus: 2}
run: {duration: 60, seed: 7, execution: {model: uniform, min: 0.5, max: 1.0}}
tasks:
  - name: p
    period: 20
    regions: [1ms, [4ms, 3ms, 2ms], 1ms, [2ms, 500us]]
";

    #[test]
    fn lanes_and_reservations_of_a_parallel_task() {
        let ts = taskset(PAR);
        let t = &ts.tasks[0];
        assert_eq!(
            lane_wcets(&t.program()),
            vec![8_000_000, 3_500_000, 2_000_000]
        );
        // 10% allowance, at least 250 us, per lane.
        assert_eq!(dl_runtimes(t), vec![8_800_000, 3_850_000, 2_250_000]);
        let seq = taskset(PLAIN);
        assert_eq!(dl_runtimes(&seq.tasks[0]), vec![dl_runtime(&seq.tasks[0])]);
        // C = 13 ms > D = 10 ms is fine for a parallel task whose lanes each fit.
        let tight = taskset(&PAR.replace("period: 20", "period: 20\n    deadline: 10"));
        assert!(KernelPlan::new(&tight, "deadline").is_ok());
        let too_long = taskset(&PAR.replace("period: 20", "period: 20\n    deadline: 7"));
        assert!(
            err(&too_long, "deadline").contains("thread 0 of the regions runs 8000000 ns per job")
        );
    }

    /// SCHED_OTHER needs no privilege, so these run anywhere (timing assertions are loose:
    /// other tests run beside them).
    fn run_other(ts: &TaskSet) -> RunResult {
        let plan = KernelPlan::new(ts, "other").unwrap();
        let _one = crate::options::real_threads_lock();
        run(ts, &plan, &RunOptions::default()).unwrap()
    }

    #[test]
    fn parallel_jobs_run_every_thread_with_the_simulators_demands() {
        let ts = taskset(PAR);
        let r = run_other(&ts);
        let program = ts.tasks[0].program();
        let mut streams = TaskStreams::new(7, 0);
        assert_eq!(r.jobs.len(), 3);
        for j in &r.jobs {
            let mut d = Vec::new();
            assert_eq!(
                j.demand,
                streams.job_demands(&ts.run.execution, &program, &mut d),
                "job {}",
                j.job
            );
            assert!(j.finish.is_some() && !j.cpus.is_empty());
            // The regions run one after another: at least the longest thread of each region.
            let (mut first, mut path) = (0, 0);
            for region in &program.regions {
                path += d[first..first + region.len()].iter().max().unwrap();
                first += region.len();
            }
            assert!(
                j.finish.unwrap() - j.start.unwrap() >= path,
                "job {} ended before its critical path",
                j.job
            );
            // Thread runs: 1 + 3 + 1 + 2 context switches at least.
            assert!(j.context_switches >= 7);
            for thread in 0..3 {
                assert!(
                    r.intervals
                        .iter()
                        .any(|i| i.job == j.job && i.thread == thread),
                    "job {} thread {thread} never ran",
                    j.job
                );
            }
        }
        assert!(!r.intervals.iter().any(|i| i.thread > 2));
    }

    #[test]
    fn a_held_resource_blocks_the_other_task() {
        // a holds r for its first 40 ms of work from t = 0; b (released at 20 ms) requests r at
        // once and waits until a releases it (20 ms, more if other load slows a down).
        let ts = taskset(
            "platform: {cpus: 2}
run: {duration: 50, seed: 1}
tasks:
  - {name: a, period: 100, wcet: 41, sections: [{resource: r, start: 0, length: 40}]}
  - {name: b, period: 100, wcet: 2, offset: 20, sections: [{resource: r, start: 0, length: 1}]}
",
        );
        let r = run_other(&ts);
        let (a, b) = (&r.jobs[0], &r.jobs[1]);
        assert_eq!((a.task, b.task), (0, 1));
        assert_eq!(a.blocked, 0);
        assert!(b.blocked >= 10_000_000, "b waited {} ns", b.blocked);
        assert!(
            b.finish.unwrap() >= a.start.unwrap() + 40_000_000,
            "b finished inside a's section"
        );
        assert_eq!(r.measurements["resource.r.max_holders"], 1.0);
        assert_eq!(r.measurements["resource.r.acquisitions"], 2.0);
        assert_eq!(r.measurements["resource.r.contended"], 1.0);
    }
}
