//! The jobs of a task on real threads: the task's thread sleeps to each release, runs thread 0
//! of every region and forks the others to its helpers, and records the job (demands drawn
//! from the simulator's seeded streams, or replayed); the helpers run what they are handed;
//! jobs the thread never reached are recorded as missed. A triggered task's thread waits for
//! its triggers instead of a release time, and a self-suspending job sleeps between its run
//! segments (`flow.rs`).

use super::flow::{Suspend, Triggers};
use super::start::Spawn;
use super::team::{HelperGuard, TaskGuard, Team};
use super::thread::{run_thread, Ctx, ThreadRun};
use crate::samples::Samples;
use crate::signal::{interrupted, INTERRUPTED};
use crate::stream::Outbox;
use crate::sys::{self, ThreadCounters};
use crate::{perf, work};
use rtsched_model::program::Program;
use rtsched_model::results::{Interval, JobRecord};
use rtsched_model::{TaskSet, Time};
use rtsched_runtime::chains::SuspensionDraws;
use rtsched_runtime::TaskStreams;
use std::sync::atomic::Ordering;

pub(super) struct ThreadOut {
    pub(super) jobs: Vec<JobRecord>,
    /// Thread CPU time per job beyond its demand (bookkeeping around the work), summed over
    /// the job's threads.
    pub(super) overhead: Samples,
    pub(super) intervals: Vec<Interval>,
    pub(super) counter_source: &'static str,
    /// A best-effort task's CPU use (`kernel:linux`).
    pub(super) fair: Option<super::fair::FairUse>,
    /// A chain member's jobs released past the window (a triggered job that ends a counted
    /// chain instance): the chains see them after the run's records.
    pub(super) past_window: Vec<JobRecord>,
}

/// A task thread's end, however it ends: the tasks it triggers wait for it no more.
struct Ends<'a>(&'a Triggers, usize);

impl Drop for Ends<'_> {
    fn drop(&mut self) {
        self.0.ended(self.1);
    }
}

/// A helper: runs thread `lane` of each region handed to it until dismissed.
pub(super) fn helper_main(sp: Spawn, lane: usize) {
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
pub(super) fn task_main(sp: Spawn, ts: &TaskSet) -> ThreadOut {
    let duration = ts.run.duration;
    let mut out = ThreadOut {
        jobs: Vec::new(),
        overhead: Samples::default(),
        intervals: Vec::new(),
        counter_source: "",
        fair: None,
        past_window: Vec::new(),
    };
    let _ends = Ends(&sp.triggers, sp.ti);
    let Some(ctx) = sp.begin() else {
        sp.team.dismiss();
        return out;
    };
    let (ti, task, program, team, base) = (sp.ti, &sp.task, &*sp.program, &*sp.team, ctx.base);
    let _guard = TaskGuard {
        team,
        failed: &ctx.failed,
    };
    if task.is_fair() {
        out.fair = Some(super::fair::run_fair(&ctx, task, duration));
        return out;
    }
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
    // Triggers and suspensions (flow.rs): a triggered task's releases are its triggers'
    // finishes; a chain member keeps the jobs released past the window for the chains.
    let triggered = sp.triggers.triggered(ti);
    let in_chain = ts.chains.iter().any(|c| c.tasks.contains(&(ti as u32)));
    let mut suspend = Suspend {
        lengths: &task.suspensions,
        draws: SuspensionDraws::new(ts, ti),
    };
    while !interrupted() && !ctx.failed.load(Ordering::Relaxed) {
        if triggered {
            match sp.triggers.wait_release(ti, &ctx.failed, ctx.limit) {
                Some(at) => release = at,
                None => break,
            }
        } else if release >= duration {
            break;
        }
        let demand = draw(ts, task, program, &mut streams, job, &mut demands);
        if let Some(r) = &ctx.scx {
            // Job boundary (ChronOS's begin_rt_seg): the job's deadline is in the registry
            // before the wake-up at its release, for every lane of the task.
            r.job_for_lanes(&team.scx_slots, base + release + task.deadline, job);
        }
        if !triggered {
            sys::sleep_until(base + release, &INTERRUPTED);
        }
        let start = sys::mono_ns() - base;
        let mut j = Job {
            job,
            start,
            demands: &demands,
            suspend: &mut suspend,
        };
        let (acc, runs, own_work) = run_regions(
            &ctx,
            &counters,
            team,
            program,
            &mut j,
            &mut chunks,
            &mut out.intervals,
        );
        if acc.done {
            sp.triggers.finished(ti, acc.end);
        }
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
        // A triggered job released past the window is run for the chains only.
        if release < duration {
            keep(&mut out, &sp.handoff, rec);
        } else if in_chain {
            out.past_window.push(rec);
        }
        job += 1;
        if !triggered {
            release += streams.interarrival(task);
        }
        if !done {
            break;
        }
    }
    // Counted jobs the thread never reached (it ran out of time behind late jobs): they exist,
    // were never started, and miss. (A triggered task's jobs are known only as released.)
    let mut next = (release, job);
    while !triggered && next.0 < duration {
        let rec = unreached(ts, ti, task, program, &mut streams, &mut demands, &mut next);
        keep(&mut out, &sp.handoff, rec);
    }
    out
}

/// The record of job `next` = (release, job), which its thread never reached: drawn like
/// every job, never started, missed. `next` moves on to the task's next job.
pub(super) fn unreached(
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
pub(super) fn draw(
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
pub(super) struct Job<'a, 's> {
    pub(super) job: u64,
    pub(super) start: Time,
    pub(super) demands: &'a [Time],
    /// Its task's suspensions between run segments (flow.rs).
    pub(super) suspend: &'a mut Suspend<'s>,
}

/// Run job `j`'s regions one after another: thread 0 of each on the calling thread, the
/// others forked to the helpers and joined. The job's totals, the threads run and the calling
/// thread's own work (CPU time).
pub(super) fn run_regions(
    ctx: &Ctx,
    counters: &ThreadCounters,
    team: &Team,
    program: &Program,
    j: &mut Job<'_, '_>,
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
        // A self-suspending job's suspension after this run segment (flow.rs).
        j.suspend.after(r);
    }
    (acc, runs, own_work)
}

/// The record of job `job` of task `ti` that ran `runs` threads with the totals `acc`;
/// `outside` is the CPU time its thread was charged beyond its work.
#[allow(clippy::too_many_arguments)]
pub(super) fn job_record(
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
        spin: acc.spin,
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
pub(super) fn keep(out: &mut ThreadOut, handoff: &Option<Outbox>, rec: JobRecord) {
    match handoff {
        Some(h) => h.push(rec),
        None => out.jobs.push(rec),
    }
}

/// Add one thread's run to its job's totals.
pub(super) fn merge(acc: &mut ThreadRun, run: ThreadRun, intervals: &mut Vec<Interval>) {
    acc.end = acc.end.max(run.end);
    for c in run.cpus.iter() {
        acc.cpus.insert(c);
    }
    acc.switches += run.switches;
    acc.preemptions += run.preemptions;
    acc.migrations += run.migrations;
    acc.blocked += run.blocked;
    acc.spin += run.spin;
    acc.overhead += run.overhead;
    acc.exec += run.exec;
    if let Some(h) = run.hw {
        perf::add(&mut acc.hw, h);
    }
    acc.done &= run.done;
    intervals.extend(run.intervals);
}
