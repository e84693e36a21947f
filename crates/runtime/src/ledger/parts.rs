//! A ledger built: fresh, or in the buffers an earlier run left.
//!
//! A sweep runs many short simulations. [`Ledger::finish_parts`] hands a finished ledger's
//! allocations ([`LedgerParts`]) on, and [`Ledger::borrowed_in`] builds in them the same state
//! a fresh ledger has (every list empty, slots numbered from 0): each task's program rebuilt
//! over the one its slot held, room reserved for the run's entities, jobs, CPUs and a region's
//! threads, so the run's hot path grows nothing. Each task's thread starts on the CPU it is
//! created on (queues.rs).

use super::queues::created_on;
use super::resources::Resource;
use super::{Job, Ledger, Lists, PolicyRef, Run};
use crate::inversion::Inversions;
use crate::state::{CpuState, Ent, NONE};
use crate::streams::TaskStreams;
use rtsched_model::results::JobRecord;
use rtsched_model::{OnMiss, Program, TaskSet, Time};
use rtsched_policies::{Decisions, EntityId, Policy};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::mem::take;

impl<'t> Ledger<'t> {
    fn with(ts: Cow<'t, TaskSet>, policy: PolicyRef<'t>, start_at_dispatch: bool) -> Self {
        Ledger::with_parts(ts, policy, start_at_dispatch, LedgerParts::default())
    }

    /// A fresh ledger in the buffers of an earlier one (`parts`): the same state as
    /// [`Ledger::with`] builds (every list empty, slots numbered from 0), only the memory is
    /// reused, so a sweep running many short simulations does not allocate it anew each time.
    fn with_parts(
        ts: Cow<'t, TaskSet>,
        policy: PolicyRef<'t>,
        start_at_dispatch: bool,
        mut parts: LedgerParts,
    ) -> Self {
        let m = ts.platform.cpus as usize;
        let run = Run::in_parts(ts, &mut parts);
        let widest = run.programs.iter().map(Program::width).max().unwrap_or(1);
        let mut policy = policy;
        let grants_resources = policy.get().grants_resources();
        let locking = super::locking::Locking::new(&run.ts, policy.get());
        let dec = parts.dec.take();
        Ledger {
            run,
            dec: dec.map_or_else(|| Decisions::new(m as u32), |d| d.renew(m as u32)),
            policy,
            start_at_dispatch,
            grants_resources,
            lists: take(&mut parts.lists).emptied(m, widest),
            locking,
            unresolved: None,
            failure: None,
            sink: None,
            pinned: empty(take(&mut parts.pinned), m),
            measure: false,
            policy_ns: (0, 0),
        }
    }

    /// [`Ledger::borrowed`] in the buffers an earlier ledger left ([`Ledger::finish_parts`]).
    pub fn borrowed_in(
        ts: &'t TaskSet,
        policy: &'t mut dyn Policy,
        start_at_dispatch: bool,
        parts: LedgerParts,
    ) -> Self {
        Ledger::with_parts(
            Cow::Borrowed(ts),
            PolicyRef::Borrowed(policy),
            start_at_dispatch,
            parts,
        )
    }

    /// A ledger over a borrowed task set and policy (the simulator). `start_at_dispatch`: see
    /// [`Ledger::mark_started`].
    pub fn borrowed(ts: &'t TaskSet, policy: &'t mut dyn Policy, start_at_dispatch: bool) -> Self {
        Ledger::with(
            Cow::Borrowed(ts),
            PolicyRef::Borrowed(policy),
            start_at_dispatch,
        )
    }

    /// A ledger that owns its task set and policy (drivers whose state outlives the caller's).
    pub fn owned(ts: TaskSet, policy: Box<dyn Policy>, start_at_dispatch: bool) -> Ledger<'static> {
        Ledger::with(Cow::Owned(ts), PolicyRef::Owned(policy), start_at_dispatch)
    }
}

impl Ledger<'_> {
    /// The ledger's buffers, its state dropped ([`Ledger::finish_parts`]).
    pub(super) fn into_parts(self) -> LedgerParts {
        let Ledger {
            run,
            dec,
            lists,
            pinned,
            ..
        } = self;
        let Run {
            programs,
            ents,
            free,
            jobs,
            spare,
            free_jobs,
            cpus,
            streams,
            next_job,
            task_busy,
            held,
            records,
            task_cpu,
            bursts,
            wakeups,
            inv,
            task_last,
            task_rq,
            ..
        } = run;
        LedgerParts {
            programs,
            ents,
            free,
            jobs,
            spare,
            free_jobs,
            cpus,
            streams,
            next_job,
            task_busy,
            held,
            records,
            task_cpu,
            bursts,
            wakeups,
            inv_bits: inv.into_buffer(),
            task_last,
            task_rq,
            dec: Some(dec),
            lists,
            pinned,
        }
    }
}

impl<'t> Run<'t> {
    /// A run of `ts` from its start, in the buffers of `parts` (taken out of it): every
    /// list emptied with room for the run, each task's thread on the CPU it is created on.
    fn in_parts(ts: Cow<'t, TaskSet>, parts: &mut LedgerParts) -> Run<'t> {
        let m = ts.platform.cpus as usize;
        let n = ts.tasks.len();
        let duration = ts.run.duration;
        let expected_jobs = ts.jobs_released_by(duration);
        let programs = programs_in(take(&mut parts.programs), &ts);
        let width: usize = programs.iter().map(Program::width).sum();
        let threads: usize = programs.iter().map(Program::threads).sum();
        let mut spare = take(&mut parts.spare);
        let jobs = jobs_emptied(take(&mut parts.jobs), &mut spare);
        let mut inv = Inversions::in_buffer(take(&mut parts.inv_bits), 2 * width + m);
        inv.bound_jobs(expected_jobs);
        let mut task_rq = empty(take(&mut parts.task_rq), n);
        task_rq.extend(
            ts.tasks
                .iter()
                .enumerate()
                .map(|(i, t)| created_on(t.cpu, i, m)),
        );
        let mut records = take(&mut parts.records);
        records.clear();
        Run {
            programs,
            ents: empty(take(&mut parts.ents), 2 * width + m),
            free: empty(take(&mut parts.free), 2 * width + m),
            preds: Vec::new(),
            jobs: empty(jobs, 2 * n),
            spare,
            free_jobs: empty(take(&mut parts.free_jobs), 2 * n),
            resources: resources_for(&ts, threads),
            cpus: filled(take(&mut parts.cpus), m, IDLE_CPU),
            streams: streams_in(take(&mut parts.streams), &ts),
            next_job: filled(take(&mut parts.next_job), n, 0),
            task_busy: filled(take(&mut parts.task_busy), n, false),
            held: held_emptied(take(&mut parts.held), n),
            // Reserved at the first record (`expected_jobs`), once it is known whether
            // the run holds its records or streams them (a few then suffice), unless
            // an earlier run left room.
            records,
            expected_jobs: expected_jobs.min(1 << 26) as usize,
            rec_base: 0,
            rec_front: 0,
            undecided: 0,
            task_cpu: filled(take(&mut parts.task_cpu), n, 0),
            bursts: filled(take(&mut parts.bursts), n, 0),
            wakeups: empty(take(&mut parts.wakeups), 0),
            releases: 0,
            invocations: 0,
            charged: 0,
            abort_handler_ns: 0,
            deadlocks: 0,
            inv,
            task_last: filled(take(&mut parts.task_last), n, NONE),
            kernel_migrations: 0,
            task_rq,
            pulls: true,
            now: 0,
            duration,
            abort_at_deadline: ts.run.on_miss == OnMiss::Abort,
            flow: super::flow::Flow::of(&ts),
            ts,
        }
    }
}

/// A CPU before the run: idle, no mark, no entity ran on it.
const IDLE_CPU: CpuState = CpuState {
    running: None,
    mark: 0,
    last: u64::MAX,
    deadline: 0,
};

/// Each task's program over the one its slot held (a sweep's sets are alike: no allocation).
fn programs_in(mut programs: Vec<Program>, ts: &TaskSet) -> Vec<Program> {
    programs.truncate(ts.tasks.len());
    for (p, t) in programs.iter_mut().zip(&ts.tasks) {
        t.rebuild_program(p);
    }
    let built = programs.len();
    programs.extend(ts.tasks[built..].iter().map(|t| t.program()));
    programs
}

/// Every resource free, its queue with room for all `threads` of the run.
fn resources_for(ts: &TaskSet, threads: usize) -> Vec<Resource> {
    (0..ts.resources.len())
        .map(|_| Resource {
            queue: VecDeque::with_capacity(threads),
            ..Resource::default()
        })
        .collect()
}

/// Each task's streams, seeded from the run's seed.
fn streams_in(mut streams: Vec<TaskStreams>, ts: &TaskSet) -> Vec<TaskStreams> {
    let seeded = TaskStreams::seeded(ts.run.seed);
    streams.clear();
    streams.extend((0..ts.tasks.len() as u32).map(|i| {
        let mut s = TaskStreams::from_seeded(&seeded, i);
        s.fair = ts.tasks[i as usize].fair_params().map(|f| f.behaviour);
        s
    }));
    streams
}

/// The job slots emptied, each slot's lists kept in `spare` for the new slots.
fn jobs_emptied(mut jobs: Vec<Job>, spare: &mut Vec<(Vec<Time>, Vec<EntityId>)>) -> Vec<Job> {
    for mut j in jobs.drain(..) {
        j.demands.clear();
        j.ents.clear();
        spare.push((j.demands, j.ents));
    }
    jobs
}

/// A queue of held jobs per task, each empty.
fn held_emptied(mut held: Vec<VecDeque<u32>>, n: usize) -> Vec<VecDeque<u32>> {
    held.truncate(n);
    held.iter_mut().for_each(VecDeque::clear);
    // Empty until a job is held behind its predecessor (an overrun): no allocation before.
    held.resize_with(n, VecDeque::new);
    held
}

/// `v` emptied, then `len` copies of `x`.
fn filled<T: Clone>(mut v: Vec<T>, len: usize, x: T) -> Vec<T> {
    v.clear();
    v.resize(len, x);
    v
}

/// The buffers of a finished ledger ([`Ledger::finish_parts`]) for the next one
/// ([`Ledger::borrowed_in`]): their allocations, none of their contents. Empty by default.
#[derive(Default)]
pub struct LedgerParts {
    programs: Vec<Program>,
    ents: Vec<Ent>,
    free: Vec<u32>,
    jobs: Vec<Job>,
    spare: Vec<(Vec<Time>, Vec<EntityId>)>,
    free_jobs: Vec<u32>,
    cpus: Vec<CpuState>,
    streams: Vec<TaskStreams>,
    next_job: Vec<u64>,
    task_busy: Vec<bool>,
    held: Vec<VecDeque<u32>>,
    records: Vec<JobRecord>,
    task_cpu: Vec<Time>,
    bursts: Vec<u64>,
    wakeups: Vec<(Time, u32)>,
    inv_bits: Vec<u64>,
    task_last: Vec<u32>,
    task_rq: Vec<u32>,
    dec: Option<Decisions>,
    lists: Lists,
    pinned: Vec<u32>,
}

impl Lists {
    /// Every list empty, with room for `m` CPUs' changes and a region of `widest` threads.
    fn emptied(self, m: usize, widest: usize) -> Lists {
        let Lists {
            dirty,
            stopped,
            aborts,
            grants,
            ungranted,
            charges,
            forked,
            doomed,
            cycle,
        } = self;
        Lists {
            dirty: empty(dirty, m),
            stopped: empty(stopped, m),
            aborts: empty(aborts, 0),
            grants: empty(grants, 0),
            ungranted: empty(ungranted, 0),
            charges: empty(charges, 0),
            forked: empty(forked, widest),
            doomed: empty(doomed, widest),
            cycle: empty(cycle, 0),
        }
    }
}

/// `v` emptied, with room for `room`: `clear` then `reserve` (a no-op when the room is there).
fn empty<T>(mut v: Vec<T>, room: usize) -> Vec<T> {
    v.clear();
    v.reserve(room);
    v
}
