//! Kernel baselines: each task's threads under the kernel's own policy, executing the task's
//! program for real (`kernel:linux`: each task under its own policy from the file, as the
//! `linux` scheduler stacks them, docs/linux-classes.md).
//!
//! - **Jobs.** The task's own thread sleeps until each release (absolute CLOCK_MONOTONIC) and
//!   runs the job; it records release, start (when it woke) and finish. Jobs and every thread's
//!   demand come from the same seeded streams as the simulator's
//!   ([`TaskStreams::job_demands`](rtsched_runtime::TaskStreams::job_demands)), so a simulated
//!   and a real run see the same jobs.
//! - **Parallel regions** (PAWS §3 fork-join) run on real threads: a task whose widest region
//!   has `w` threads gets `w - 1` *helper* threads at setup, under the same policy as its own
//!   thread (same SCHED_FIFO priority and affinity; under SCHED_DEADLINE each helper has its
//!   own reservation, see [`dl_runtimes`]). For each region the task's thread hands threads
//!   1..n-1 to helpers 1..n-1 (one futex word per helper), runs thread 0 itself, then waits on
//!   a join counter until the last helper of the region has finished. Thread k of every region
//!   therefore always runs on the same kernel thread: *lane* k.
//! - **Critical sections** run on real mutexes: one `pthread_mutex_t` per resource of the task
//!   set (`PTHREAD_PRIO_NONE`, `PTHREAD_PRIO_INHERIT` for a `pip` resource or with the
//!   backend option `pi`, or `PTHREAD_PRIO_PROTECT` at the resource's ceiling for a `pcp` one
//!   or with `kernel:fifo`'s `pcp`; under a partitioned `kernel:fifo` a FIFO spin lock for a
//!   global `msrp` resource and every `mrsp` one, `spinlock.rs`, taken at a raised priority,
//!   its spin the job's `spin`; any other protocol in the file is refused), shared
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
//!
//! One file per concern: `plan.rs` parses the backend string into a [`KernelPlan`] (and the
//! SCHED_DEADLINE runtimes), `protocols.rs` each resource's mutex protocol from the file's
//! locking protocol and the backend option; `admission.rs` checks what the kernel will admit before any
//! thread starts (`/proc` and debugfs bandwidth, the thread limit); `root.rs` is this
//! machine's root domain, which `kernel:linux` admits a set into with the simulator's rule;
//! `locks.rs` holds the resources' mutexes; `thread.rs` runs one thread of a job; `team.rs` is
//! the futex lane team of a parallel task; `start.rs` sets each thread's policy and starts
//! them together; `jobs.rs` is the task's and the helpers' loops over their jobs; `fair.rs` a
//! best-effort task's thread under `kernel:linux`. This file runs them:
//! [`run`], spawning, joining, and the results.

mod admission;
mod fair;
mod flow;
mod jobs;
mod locks;
mod plan;
#[cfg(test)]
mod protocol_tests;
mod protocols;
mod root;
mod spinlock;
mod start;
mod team;
mod thread;

pub use admission::MAX_KERNEL_THREADS;
pub use plan::{dl_runtime, dl_runtimes, fifo_levels, KernelPlan, KernelPolicy};
pub use root::machine_root_domain;

use crate::lanes::lane_wcets;
use crate::options::{RunError, RunOptions, TIME_ZERO_KEY};
use crate::samples::Samples;
use crate::stream::{self, Collector, Merger, Outbox};
use crate::{perf, scx, sys, work};
use admission::{admission_message, check_thread_count, deadline_precheck};
use jobs::{helper_main, task_main, ThreadOut};
use locks::{resource_locks, Lock};
use rtsched_model::program::Program;
use rtsched_model::results::{ChainRecord, JobRecord, RunResult, LEDGER_COUNTERS};
use rtsched_model::{TaskSet, Time};
use rtsched_runtime::chains::ChainReplay;
use start::{Spawn, Start};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use team::Team;

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
    let locks = Arc::new(resource_locks(ts, plan)?);
    let failed = Arc::new(AtomicBool::new(false));
    // kernel:scx-*: load the scheduler first (it refuses here if the kernel cannot).
    let (session, registry) = load_scx(plan)?;
    let tally = Arc::new(scx::Tally::new(n));
    let handoff = Outbox::default();
    // Before any thread starts: calibrate the memory work and probe the PMU (once per run).
    let workloads = work::Workloads::for_taskset(ts);
    let probe = perf::probe();
    let window = ts.run.duration + drain(ts);
    let triggers = Arc::new(flow::Triggers::new(ts));
    let spawned = spawn_threads(ts, &programs, |l, task, team| Spawn {
        ti: l.ti,
        task: task.clone(),
        program: programs[l.ti].clone(),
        policy: plan.policy.clone(),
        runtime: plan.lane_runtime(l.ti, l.lane).unwrap_or(l.runtime),
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
        triggers: triggers.clone(),
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
        // The chain records are made from the merged records as they pass.
        c.replay_chains(ts);
        drain_while_running(&mains, &handoff, &mut merger, c);
    }
    let mut outs = join_threads(mains, helpers, &failed)?;
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
    let mut past_window: Vec<JobRecord> = outs
        .iter_mut()
        .flat_map(|o| o.past_window.drain(..))
        .collect();
    past_window.sort_by_key(|j| (j.release, j.task, j.job));
    assemble(ts, outs, &locks, &mut r);
    match out {
        Some(c) => finish_stream(&handoff, merger, c, &past_window, &mut r),
        None => r.chains = held_chains(ts, &r.jobs, &past_window),
    }
    Ok(r)
}

/// The chains of a run that held its records, from the real timestamps, by the simulator's
/// rule ([`ChainReplay`]): the records in release order (a job its thread never reached, made
/// at the run's end, has no start and is not one the chains saw), then the jobs released past
/// the window. A streamed run's records pass through the same rule as they go
/// ([`Collector::replay_chains`]).
fn held_chains(ts: &TaskSet, jobs: &[JobRecord], past_window: &[JobRecord]) -> Vec<ChainRecord> {
    if ts.chains.is_empty() {
        return Vec::new();
    }
    let mut replay = ChainReplay::new(ts);
    for j in jobs.iter().filter(|j| j.start.is_some()).chain(past_window) {
        replay.job(j);
    }
    replay.finish();
    std::mem::take(replay.records())
}

/// How long after the run's duration its threads may still work: twice the longest
/// deadline or period of a task with jobs, for the last jobs to end.
fn drain(ts: &TaskSet) -> Time {
    ts.tasks
        .iter()
        .filter(|t| !t.is_fair())
        .map(|t| t.deadline.max(t.period))
        .max()
        .unwrap_or(0)
        * 2
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
    let busy = e.raw_os_error() == Some(libc::EBUSY);
    if busy && matches!(plan.policy, KernelPolicy::Linux { .. }) {
        format!("{}: task '{}': the kernel refused SCHED_DEADLINE admission ({e}) although the set fits this machine's root domain by the kernel's rule (checked before starting, the fair servers counted): another program holds deadline reservations, or the fair servers are not the default 50 ms / 1 s. Nothing was run.", ts.source, ts.tasks[ti].name)
    } else if busy && matches!(plan.policy, KernelPolicy::Deadline { .. }) {
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
    for (t, o) in ts.tasks.iter().zip(outs.iter()) {
        if let Some(u) = o.fair {
            fair::report(&t.name, u, ts.run.duration, &mut r.measurements);
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

/// Streaming: the records handed over last, then the rest in release order, then the jobs
/// released past the window to the chains; the run's end, job count and start delays are the
/// stream's.
fn finish_stream(
    handoff: &Outbox,
    mut merger: Merger,
    c: &mut Collector<'_>,
    past_window: &[JobRecord],
    r: &mut RunResult,
) {
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
    for j in past_window {
        c.chain_job(j);
    }
    c.end_chains();
    r.end = c.latest;
    r.counters.releases = c.jobs;
    if let Some(d) = &mut c.start_delays {
        d.samples.report("start_delay", &mut r.measurements);
    }
}

#[cfg(test)]
mod tests {
    use super::admission::{parse_total_bw, rt_bandwidth};
    use super::*;
    use crate::sys::MutexProtocol;
    use rtsched_model::file::{parse_taskset, Format};
    use rtsched_model::SchedPolicy;
    use rtsched_runtime::TaskStreams;

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

    const PLAIN: &str = "platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, period: 20, wcet: 3}\n";

    fn err(ts: &TaskSet, spec: &str) -> String {
        match KernelPlan::new(ts, spec) {
            Err(RunError::Input(m)) => m,
            Ok(p) => panic!("{spec} accepted as {}", p.label),
            Err(e) => panic!("{spec}: {e}"),
        }
    }

    /// `kernel:fifo:pcp`: each resource's ceiling is the highest SCHED_FIFO priority of its
    /// users' threads (issue 56's example: r used by l and h, so h's level; s by m alone; t by
    /// nobody, 1). Controls: no ceilings without pcp; pcp beside pi, or on another backend, is
    /// refused.
    #[test]
    fn fifo_pcp_takes_each_resources_ceiling() {
        let ts = taskset(
            "platform: {cpus: 1}\nresources: [r, s, t]\ntasks:\n  - {name: l, period: 100, wcet: 4, priority: 1, sections: [{resource: r, start: 0, length: 4}]}\n  - {name: h, period: 100, wcet: 2, priority: 3, sections: [{resource: r, start: 0, length: 1}]}\n  - {name: m, period: 100, wcet: 5, priority: 2, sections: [{resource: s, start: 0, length: 1}]}\n",
        );
        let p = KernelPlan::new(&ts, "fifo:pcp").unwrap();
        let KernelPolicy::Fifo { prio, .. } = &p.policy else {
            panic!("{:?}", p.policy)
        };
        assert_eq!(prio, &vec![10, 89, 49]);
        assert_eq!(p.mutexes, [89, 49, 1].map(MutexProtocol::Protect).to_vec());
        assert_eq!(p.label, "kernel:fifo:file:pcp");
        assert_eq!(
            KernelPlan::new(&ts, "fifo:rm:pcp").unwrap().label,
            "kernel:fifo:rm:pcp"
        );
        assert_eq!(
            KernelPlan::new(&ts, "fifo").unwrap().mutexes,
            vec![MutexProtocol::None; 3]
        );
        assert_eq!(
            KernelPlan::new(&ts, "fifo:pi").unwrap().mutexes,
            vec![MutexProtocol::Inherit; 3]
        );
        assert!(err(&ts, "fifo:pi:pcp").contains("choose one locking protocol"));
        assert_eq!(
            err(&ts, "deadline:pcp"),
            "kernel:deadline: unknown option 'pcp' (known: reclaim, pi)"
        );
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
            assert_eq!(p.label, label, "{spec}");
            assert_eq!(p.label.ends_with(":pi"), pi, "{spec}");
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
            "kernel:fifo: unknown option or priority assignment 'xx' (known: rm, dm, file, pi, pcp)"
        );
        assert_eq!(
            err(&ts, "other:reclaim"),
            "kernel:other: unknown option 'reclaim' (known: pi)"
        );
        assert!(err(&ts, "fifo:rm:dm").contains("choose one priority assignment"));
        assert!(err(&ts, "deadline:pi:pi").contains("given twice"));
        assert!(err(&ts, "fifo:file").contains("task 'a': field 'priority'"));
        // Priorities for some tasks only: refused as gfp refuses them (one rule,
        // `rtsched_analysis::priority::assign`), unless an assignment is named.
        let some = taskset(&PLAIN.replace("wcet: 3}", "wcet: 3, priority: 5}"));
        assert_eq!(
            err(&some, "fifo"),
            "t.yaml: task 'a': field 'priority': missing, while other tasks have one; give every task a priority, or choose kernel:fifo:rm / kernel:fifo:dm"
        );
        assert_eq!(
            KernelPlan::new(&some, "fifo:dm").unwrap().label,
            "kernel:fifo:dm"
        );
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

    const MIXED: &str = "platform: {cpus: 2}
tasks:
  - {name: d, period: 10, wcet: 4, policy: deadline, runtime: 2}
  - {name: d2, period: 20, deadline: 10, wcet: 3, policy: deadline}
  - {name: f, period: 5, wcet: 1, policy: fifo, priority: 50}
  - {name: r, period: 20, wcet: 3, policy: rr, priority: 20}
  - {name: o, period: 20, wcet: 2, policy: other, nice: 5}
  - {name: hog, class: fair, behaviour: hog}
";

    /// kernel:linux takes each task's policy from the file, reserves what the `linux`
    /// scheduler reserves (the file's runtime, else the WCET: no allowance), and admits with
    /// the simulator's rule in this machine's root domain.
    #[test]
    fn kernel_linux_plans_each_tasks_own_policy() {
        let ts = taskset(MIXED);
        let p = KernelPlan::new(&ts, "linux").unwrap();
        assert_eq!(p.label, "kernel:linux");
        let KernelPolicy::Linux {
            policies,
            runtimes,
            reclaim,
        } = &p.policy
        else {
            panic!("{:?}", p.policy)
        };
        assert!(!reclaim);
        assert_eq!(
            policies,
            &[
                SchedPolicy::Deadline {
                    runtime: Some(2_000_000)
                },
                SchedPolicy::Deadline { runtime: None },
                SchedPolicy::Fifo,
                SchedPolicy::Rr,
                SchedPolicy::Other { nice: 5 },
                SchedPolicy::Other { nice: 0 },
            ]
        );
        assert_eq!(runtimes[0], vec![2_000_000]);
        assert_eq!(
            runtimes[1],
            vec![3_000_000],
            "the WCET, as linux reserves it"
        );
        assert!(runtimes[2..].iter().all(Vec::is_empty));
        assert_eq!(
            (p.lane_runtime(0, 0), p.lane_runtime(2, 0)),
            (Some(2_000_000), None)
        );
        let p = KernelPlan::new(&ts, "linux:reclaim:pi").unwrap();
        assert_eq!(p.label, "kernel:linux:reclaim:pi");
        assert_eq!(
            err(&ts, "linux:grub"),
            "kernel:linux: unknown option 'grub' (known: reclaim, pi)"
        );
        let bursty = taskset(&MIXED.replace(
            "behaviour: hog}",
            "behaviour: bursty, run: [1ms, 2ms], sleep: [1ms, 2ms]}",
        ));
        assert!(err(&bursty, "linux").starts_with("t.yaml: task 'hog': field 'behaviour': "));
    }

    /// What sched_setattr would refuse is refused before any thread starts, with the
    /// simulator's message (the same rule: `rtsched_policies::linux::admit_set`), here in this
    /// machine's root domain (its CPUs and RT sysctls, the fair servers on 6.12+).
    #[test]
    fn kernel_linux_refuses_what_admission_refuses() {
        let root = root::machine_root_domain().unwrap();
        let Some(limit) = root.limit() else { return };
        let cpus = root.cpus();
        // Reservations of 0.9 each: as many as fit, then one more.
        let fit = ((limit - root.total_bw()) / 943_718) as usize;
        let set = |n: usize| {
            let mut y = format!("platform: {{cpus: {cpus}}}\ntasks:\n");
            for i in 0..n {
                y += &format!("  - {{name: t{i}, period: 10, wcet: 9, policy: deadline}}\n");
            }
            y += "  - {name: f, period: 10, wcet: 9, policy: fifo, priority: 10}\n";
            taskset(&y)
        };
        assert!(KernelPlan::new(&set(fit), "linux").is_ok());
        let m = err(&set(fit + 1), "linux");
        assert!(
            m.starts_with(&format!("t.yaml: task 't{fit}': SCHED_DEADLINE admission refused (EBUSY): bandwidth 0.900000"))
                && m.ends_with("Nothing was run."),
            "{m}"
        );
        // EINVAL: the kernel's own parameter check, as the simulator makes it: a task without
        // a policy is SCHED_DEADLINE with runtime = WCET, here above its deadline.
        let long = taskset(
            "platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, deadline: 5, wcet: 6}\n",
        );
        let m = err(&long, "linux");
        assert!(
            m.starts_with("t.yaml: task 'a': field 'deadline'") && m.contains("EINVAL"),
            "{m}"
        );
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
