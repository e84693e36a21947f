//! Kernel baselines: one thread per task under the kernel's own policy. Each thread sleeps
//! until its job's release (absolute CLOCK_MONOTONIC), burns the job's demand in thread CPU
//! time, and records release, start (when it woke) and finish. Jobs and demands come from the
//! same seeded streams as the simulator's, so a simulated and a real run see the same jobs.
//! Per-job preemptions and migrations are the kernel's own counts (perf software events on
//! the thread; /proc as a fallback).

use crate::sys::{self, ThreadCounters};
use crate::{interrupted, work, RunError, RunOptions};
use rtsched_model::results::{CpuSet, Interval, JobRecord, RunResult};
use rtsched_model::{TaskSet, Time};
use rtsched_sim::exec::TaskStreams;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

#[derive(Clone, Debug, PartialEq)]
pub enum KernelPolicy {
    /// SCHED_DEADLINE; `reclaim` sets SCHED_FLAG_RECLAIM (GRUB bandwidth reclaiming).
    Deadline { reclaim: bool },
    /// SCHED_FIFO priority per task (1..=99) and optional CPU per task.
    Fifo { prio: Vec<u32>, cpu: Vec<Option<u32>>, label: String },
    Other,
}

pub struct KernelPlan {
    pub policy: KernelPolicy,
    pub label: String,
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

impl KernelPlan {
    pub fn new(ts: &TaskSet, rest: &str) -> Result<KernelPlan, RunError> {
        let (name, opt) = rest.split_once(':').unwrap_or((rest, ""));
        match name {
            "deadline" => {
                for t in &ts.tasks {
                    if t.deadline > t.period {
                        return Err(RunError::Input(format!(
                            "{}: task '{}': field 'deadline': SCHED_DEADLINE needs deadline <= period ({} > {} ns)",
                            ts.source, t.name, t.deadline, t.period
                        )));
                    }
                    if t.wcet < 1024 || t.wcet > t.deadline {
                        return Err(RunError::Input(format!(
                            "{}: task '{}': field 'wcet': SCHED_DEADLINE needs 1024 ns <= runtime (WCET) <= deadline",
                            ts.source, t.name
                        )));
                    }
                }
                let reclaim = match opt {
                    "" => false,
                    "reclaim" => true,
                    o => return Err(RunError::Input(format!("kernel:deadline: unknown option '{o}' (known: reclaim)"))),
                };
                Ok(KernelPlan { policy: KernelPolicy::Deadline { reclaim }, label: if reclaim { "kernel:deadline:reclaim" } else { "kernel:deadline" }.into() })
            }
            "fifo" => {
                let mode = if opt.is_empty() { if ts.tasks.iter().all(|t| t.priority.is_some()) { "file" } else { "rm" } } else { opt };
                let prio = match mode {
                    "rm" => rtsched_analysis::priority::rate_monotonic(&ts.tasks),
                    "dm" => rtsched_analysis::priority::deadline_monotonic(&ts.tasks),
                    "file" => match ts.tasks.iter().find(|t| t.priority.is_none()) {
                        Some(t) => return Err(RunError::Input(format!("{}: task '{}': field 'priority': missing, and kernel:fifo:file needs every task's priority", ts.source, t.name))),
                        None => ts.tasks.iter().map(|t| t.priority.unwrap()).collect(),
                    },
                    o => return Err(RunError::Input(format!("kernel:fifo: unknown priority assignment '{o}' (known: rm, dm, file)"))),
                };
                let partitioned = ts.tasks.iter().all(|t| t.cpu.is_some());
                let cpu = ts.tasks.iter().map(|t| if partitioned { t.cpu } else { None }).collect();
                let label = format!("kernel:fifo:{mode}{}", if partitioned { " (partitioned)" } else { "" });
                Ok(KernelPlan { policy: KernelPolicy::Fifo { prio: fifo_levels(&prio), cpu, label: label.clone() }, label })
            }
            "other" => Ok(KernelPlan { policy: KernelPolicy::Other, label: "kernel:other".into() }),
            o => Err(RunError::Input(format!("unknown kernel backend 'kernel:{o}' (known: kernel:deadline, kernel:fifo, kernel:other)"))),
        }
    }
}

/// The SCHED_DEADLINE runtime: the WCET plus an allowance of 10% (at least 250 us), capped at
/// the deadline. The thread's own CPU time per job beyond the demand (waking, counters, the
/// last chunk; measured as `job_cpu_overhead`) was median 19 us, p99 208 us, max 822 us on a
/// saturated 2-vCPU guest; a job that overruns its reservation is throttled to its next period
/// and misses, so runtime = WCET exactly would measure the harness, not the scheduler.
pub fn dl_runtime(t: &rtsched_model::Task) -> Time {
    (t.wcet + (t.wcet / 10).max(250_000)).min(t.deadline)
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
    /// Thread CPU time per job beyond its demand (bookkeeping around the burn).
    overhead: Vec<u64>,
    intervals: Vec<Interval>,
    counter_source: &'static str,
}

fn admission_message(ts: &TaskSet, upto: usize, err: &std::io::Error) -> String {
    let read = |f: &str| std::fs::read_to_string(f).ok().and_then(|s| s.trim().parse::<f64>().ok());
    let (rt, period) = (read("/proc/sys/kernel/sched_rt_runtime_us"), read("/proc/sys/kernel/sched_rt_period_us"));
    let bw: f64 = ts.tasks[..=upto].iter().map(|t| dl_runtime(t) as f64 / t.period as f64).sum();
    let limit = match (rt, period) {
        (Some(r), Some(p)) if r >= 0.0 && p > 0.0 => format!("{:.2} (= {} CPUs x {:.0}% from sched_rt_runtime_us/sched_rt_period_us)", ts.platform.cpus as f64 * r / p, ts.platform.cpus, 100.0 * r / p),
        _ => "the kernel's real-time bandwidth limit".into(),
    };
    format!(
        "{}: task '{}': the kernel refused SCHED_DEADLINE admission ({err}). Admission control accepts a new reservation \
         only while the total bandwidth (runtime/period) stays within {limit}; admitting tasks 0..={upto} needs {bw:.3}. \
         Reduce WCETs or the number of tasks (or run another backend). Nothing was run.",
        ts.source, ts.tasks[upto].name
    )
}

pub fn run(ts: &TaskSet, plan: &KernelPlan, opts: &RunOptions) -> Result<RunResult, RunError> {
    let n = ts.tasks.len();
    let duration = ts.run.duration;
    let drain = ts.tasks.iter().map(|t| t.deadline.max(t.period)).max().unwrap_or(0) * 2;
    let ready = Arc::new(Barrier::new(n + 1));
    let go = Arc::new(Barrier::new(n + 1));
    let abort = Arc::new(AtomicBool::new(false));
    let t0 = Arc::new(AtomicU64::new(0));
    let errors: Arc<Mutex<Vec<(usize, std::io::Error)>>> = Arc::default();
    let workloads = work::Workload::for_taskset(ts);
    let mut handles = Vec::with_capacity(n);
    for (ti, task) in ts.tasks.iter().enumerate() {
        let (task, ts2) = (task.clone(), ts.clone());
        let (ready, go, abort2, t0, errors) = (ready.clone(), go.clone(), abort.clone(), t0.clone(), errors.clone());
        let policy = plan.policy.clone();
        let record = opts.record_intervals;
        let workload = workloads[ti].clone();
        let h = std::thread::Builder::new().name(format!("rtsched-{}", task.name)).spawn(move || -> ThreadOut {
            let tid = sys::gettid();
            let set = match &policy {
                KernelPolicy::Deadline { reclaim } => sys::set_deadline(tid, dl_runtime(&task), task.deadline, task.period, if *reclaim { sys::SCHED_FLAG_RECLAIM } else { 0 }),
                KernelPolicy::Fifo { prio, cpu, .. } => sys::set_affinity(tid, cpu[ti].map(|c| c as usize)).and_then(|_| sys::set_fifo(tid, prio[ti])),
                KernelPolicy::Other => sys::set_other(tid),
            };
            if let Err(e) = set {
                errors.lock().unwrap_or_else(|p| p.into_inner()).push((ti, e));
            }
            ready.wait();
            go.wait();
            let mut out = ThreadOut { jobs: Vec::new(), overhead: Vec::new(), intervals: Vec::new(), counter_source: "" };
            if abort2.load(Ordering::SeqCst) {
                return out;
            }
            let counters = ThreadCounters::open();
            out.counter_source = counters.source();
            let base = t0.load(Ordering::SeqCst);
            let limit = base + duration + drain;
            let mut streams = TaskStreams::new(ts2.run.seed, ti as u32);
            let (mut release, mut job) = (task.offset, 0u64);
            let mut chunks: Vec<(u32, Time, Time)> = Vec::new();
            while release < duration && !interrupted() {
                let demand = streams.demand(&ts2.run.execution, task.wcet);
                sys::sleep_until(base + release, &crate::INTERRUPTED);
                let start = sys::mono_ns() - base;
                let cpu_at_wake = sys::thread_cpu_ns();
                let (cs0, mig0) = counters.read();
                let mut cpus = CpuSet::default();
                let mut ib = IntervalBuilder { cpu: sys::current_cpu(), start, last: start };
                chunks.clear();
                let (_, done) = workload.execute(
                    demand,
                    || interrupted() || sys::mono_ns() > limit,
                    |cpu| {
                        cpus.insert(cpu);
                        if record {
                            ib.sample(cpu, sys::mono_ns() - base, &mut chunks);
                        }
                    },
                );
                let finish = sys::mono_ns() - base;
                let (cs1, mig1) = counters.read();
                if matches!(*workload, work::Workload::Cpu) {
                    out.overhead.push(sys::thread_cpu_ns().saturating_sub(cpu_at_wake).saturating_sub(demand));
                }
                if record {
                    ib.close(&mut chunks);
                    out.intervals.extend(chunks.iter().map(|&(cpu, s, e)| Interval { cpu, task: ti as u32, job, thread: 0, start: s, end: e }));
                }
                let deadline = release + task.deadline;
                let switched_out = cs1.saturating_sub(cs0);
                out.jobs.push(JobRecord {
                    task: ti as u32,
                    job,
                    release,
                    deadline,
                    demand,
                    start: Some(start),
                    finish: done.then_some(finish),
                    cpus,
                    preemptions: switched_out as u32,
                    migrations: mig1.saturating_sub(mig0) as u32,
                    context_switches: 1 + switched_out as u32,
                    missed: !done || finish > deadline,
                    aborted: false,
                    blocked: 0,
                });
                if !done {
                    job += 1;
                    release += streams.interarrival(&task);
                    break;
                }
                job += 1;
                release += streams.interarrival(&task);
            }
            // Counted jobs the thread never reached (it ran out of time behind late jobs): they
            // exist, were never started, and miss.
            while release < duration {
                let demand = streams.demand(&ts2.run.execution, task.wcet);
                let deadline = release + task.deadline;
                out.jobs.push(JobRecord { task: ti as u32, job, release, deadline, demand, missed: true, ..Default::default() });
                job += 1;
                release += streams.interarrival(&task);
            }
            out
        });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                abort.store(true, Ordering::SeqCst);
                return Err(RunError::Failed(format!("cannot start a thread: {e}")));
            }
        }
    }
    ready.wait();
    let errs = std::mem::take(&mut *errors.lock().unwrap_or_else(|p| p.into_inner()));
    if !errs.is_empty() {
        abort.store(true, Ordering::SeqCst);
    }
    t0.store(sys::mono_ns() + 20_000_000, Ordering::SeqCst);
    go.wait();
    let mut outs = Vec::with_capacity(n);
    for h in handles {
        outs.push(h.join().map_err(|_| RunError::Failed("a task thread panicked; every thread was stopped".into()))?);
    }
    if let Some((ti, e)) = errs.into_iter().min_by_key(|(ti, _)| *ti) {
        let msg = if e.raw_os_error() == Some(libc::EBUSY) && matches!(plan.policy, KernelPolicy::Deadline { .. }) {
            admission_message(ts, ti, &e)
        } else if e.raw_os_error() == Some(libc::EPERM) {
            format!("{}: task '{}': not permitted to set the scheduling policy ({e}); real runs need root or CAP_SYS_NICE. Nothing was run.", ts.source, ts.tasks[ti].name)
        } else {
            format!("{}: task '{}': cannot set the scheduling policy for {}: {e}. Nothing was run.", ts.source, ts.tasks[ti].name, plan.label)
        };
        return Err(RunError::Input(msg));
    }
    let mut r = RunResult::new("kernel", &plan.label, ts);
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
            r.measurements.insert(format!("counters_from_{}", o.counter_source), 1.0);
        }
    }
    let mut overhead: Vec<u64> = outs.iter_mut().flat_map(|o| std::mem::take(&mut o.overhead)).collect();
    crate::testbed::put_stats(&mut r, "job_cpu_overhead", &mut overhead);
    r.jobs.sort_by_key(|j| (j.release, j.task, j.job));
    r.intervals.sort_by_key(|i| (i.start, i.cpu));
    r.end = end;
    r.counters.releases = r.jobs.len() as u64;
    crate::testbed::add_start_delay(&mut r);
    Ok(r)
}
