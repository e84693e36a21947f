//! A ledger built: fresh, or in the buffers an earlier run left.
//!
//! A sweep runs many short simulations. [`Ledger::finish_parts`] hands a finished ledger's
//! allocations ([`LedgerParts`]) on, and [`Ledger::borrowed_in`] builds in them the same state
//! a fresh ledger has (every list empty, slots numbered from 0): each task's program rebuilt
//! over the one its slot held, room reserved for the run's entities, jobs, CPUs and a region's
//! threads, so the run's hot path grows nothing. Each task's thread starts on the CPU it is
//! created on (overview 10).

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
        parts: LedgerParts,
    ) -> Self {
        let m = ts.platform.cpus as usize;
        let n = ts.tasks.len();
        let duration = ts.run.duration;
        let expected_jobs = ts.jobs_released_by(duration);
        let LedgerParts {
            mut programs,
            ents,
            free,
            mut jobs,
            mut spare,
            free_jobs,
            cpus,
            mut streams,
            next_job,
            task_busy,
            mut held,
            mut records,
            task_cpu,
            bursts,
            wakeups,
            inv_bits,
            task_last,
            task_rq,
            dec,
            lists,
            pinned,
        } = parts;
        // Each task's program over the one its slot held (a sweep's sets are alike: no allocation).
        programs.truncate(n);
        for (p, t) in programs.iter_mut().zip(&ts.tasks) {
            t.rebuild_program(p);
        }
        let built = programs.len();
        programs.extend(ts.tasks[built..].iter().map(|t| t.program()));
        let width: usize = programs.iter().map(Program::width).sum();
        let widest = programs.iter().map(Program::width).max().unwrap_or(1);
        let threads: usize = programs.iter().map(Program::threads).sum();
        let resources = (0..ts.resources.len())
            .map(|_| Resource {
                queue: VecDeque::with_capacity(threads),
                ..Resource::default()
            })
            .collect();
        let seeded = TaskStreams::seeded(ts.run.seed);
        streams.clear();
        streams.extend((0..n as u32).map(|i| {
            let mut s = TaskStreams::from_seeded(&seeded, i);
            s.fair = ts.tasks[i as usize].fair_params().map(|f| f.behaviour);
            s
        }));
        fn filled<T: Clone>(mut v: Vec<T>, len: usize, x: T) -> Vec<T> {
            v.clear();
            v.resize(len, x);
            v
        }
        for mut j in jobs.drain(..) {
            j.demands.clear();
            j.ents.clear();
            spare.push((j.demands, j.ents));
        }
        held.truncate(n);
        held.iter_mut().for_each(VecDeque::clear);
        // Empty until a job is held behind its predecessor (an overrun): no allocation before.
        held.resize_with(n, VecDeque::new);
        records.clear();
        let mut policy = policy;
        let grants_resources = policy.get().grants_resources();
        Ledger {
            run: Run {
                programs,
                ents: empty(ents, 2 * width + m),
                free: empty(free, 2 * width + m),
                preds: Vec::new(),
                jobs: empty(jobs, 2 * n),
                spare,
                free_jobs: empty(free_jobs, 2 * n),
                resources,
                cpus: filled(
                    cpus,
                    m,
                    CpuState {
                        running: None,
                        mark: 0,
                        last: u64::MAX,
                        deadline: 0,
                    },
                ),
                streams,
                next_job: filled(next_job, n, 0),
                task_busy: filled(task_busy, n, false),
                held,
                // Reserved at the first record (`expected_jobs`), once it is known whether
                // the run holds its records or streams them (a few then suffice), unless
                // an earlier run left room.
                records,
                expected_jobs: expected_jobs.min(1 << 26) as usize,
                rec_base: 0,
                rec_front: 0,
                undecided: 0,
                task_cpu: filled(task_cpu, n, 0),
                bursts: filled(bursts, n, 0),
                wakeups: empty(wakeups, 0),
                releases: 0,
                invocations: 0,
                charged: 0,
                abort_handler_ns: 0,
                deadlocks: 0,
                inv: {
                    let mut inv = Inversions::in_buffer(inv_bits, 2 * width + m);
                    inv.bound_jobs(expected_jobs);
                    inv
                },
                task_last: filled(task_last, n, NONE),
                kernel_migrations: 0,
                task_rq: {
                    let mut v = empty(task_rq, n);
                    v.extend(
                        ts.tasks
                            .iter()
                            .enumerate()
                            .map(|(i, t)| created_on(t.cpu, i, m)),
                    );
                    v
                },
                pulls: true,
                now: 0,
                duration,
                abort_at_deadline: ts.run.on_miss == OnMiss::Abort,
                ts,
            },
            dec: dec.map_or_else(|| Decisions::new(m as u32), |d| d.renew(m as u32)),
            policy,
            start_at_dispatch,
            grants_resources,
            lists: lists.emptied(m, widest),
            unresolved: None,
            failure: None,
            sink: None,
            pinned: empty(pinned, m),
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

/// The buffers of a finished ledger ([`Ledger::finish_parts`]) for the next one
/// ([`Ledger::borrowed_in`]): their allocations, none of their contents. Empty by default.
#[derive(Default)]
pub struct LedgerParts {
    pub(super) programs: Vec<Program>,
    pub(super) ents: Vec<Ent>,
    pub(super) free: Vec<u32>,
    pub(super) jobs: Vec<Job>,
    pub(super) spare: Vec<(Vec<Time>, Vec<EntityId>)>,
    pub(super) free_jobs: Vec<u32>,
    pub(super) cpus: Vec<CpuState>,
    pub(super) streams: Vec<TaskStreams>,
    pub(super) next_job: Vec<u64>,
    pub(super) task_busy: Vec<bool>,
    pub(super) held: Vec<VecDeque<u32>>,
    pub(super) records: Vec<JobRecord>,
    pub(super) task_cpu: Vec<Time>,
    pub(super) bursts: Vec<u64>,
    pub(super) wakeups: Vec<(Time, u32)>,
    pub(super) inv_bits: Vec<u64>,
    pub(super) task_last: Vec<u32>,
    pub(super) task_rq: Vec<u32>,
    pub(super) dec: Option<Decisions>,
    pub(super) lists: Lists,
    pub(super) pinned: Vec<u32>,
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

/// The CPU task `i`'s thread is created on, on `m` CPUs (overview 10, docs/semantics.md "Pull"):
/// where the file places it (`cpu`: pinned there, as by affinity), else `i mod m` — a launcher
/// creating the threads in task order on an idle machine, where Linux's fork balancing
/// (`select_task_rq_fair`, `SD_BALANCE_FORK`) puts each new thread on the idlest CPU.
fn created_on(cpu: Option<u32>, i: usize, m: usize) -> u32 {
    cpu.filter(|&c| (c as usize) < m)
        .unwrap_or((i % m.max(1)) as u32)
}

/// `v` emptied, with room for `room`: `clear` then `reserve` (a no-op when the room is there).
fn empty<T>(mut v: Vec<T>, room: usize) -> Vec<T> {
    v.clear();
    v.reserve(room);
    v
}
