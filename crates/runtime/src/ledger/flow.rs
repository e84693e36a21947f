//! Triggers, self-suspensions and chains (docs/chains.md; ledger overview 11).
//!
//! Kept apart from the rest of the ledger and built only for a set that has them
//! (`Run::flow` is `None` otherwise: one branch where a job is released, starts and finishes).
//! The rules:
//! - **Triggers.** A job of task A that finishes on CPU c releases, at that instant, a job of
//!   each task `trigger: A`, woken on c (its kernel CPU and run queue, as a thread a kernel
//!   wakes where its waker runs); a task `trigger: {all: [A, B]}` is released when each of A
//!   and B has finished a job since its last release. An aborted job triggers nothing. The
//!   release is the ledger's own ([`Ledger::release_on`]), so every policy sees a triggered
//!   job as any other; under `on_miss: abort` its deadline abort goes to the driver
//!   ([`Ledger::take_flow_events`]).
//! - **Suspensions.** A self-suspending job's run segments are one-thread regions; when one
//!   ends (a join) and a suspension follows, the job has no entity — it is on no CPU and not
//!   ready — until the driver calls [`Ledger::resume`] at the suspension's end, when the next
//!   segment forks on the CPU where the job suspended. A suspension `[lo, hi]` is drawn
//!   uniformly from the task's own stream (seeded by the run's seed; drawn in job order).
//! - **Chains.** Each job of a chain's task carries, per chain, its *origin*: the release of
//!   the first task's job it descends from (event chain), or the first task's read at the head
//!   of the data it read (data-flow chain). See `chains.rs` of the results for the metrics.
//!   A record leaves for the run's sink as soon as it is made when the run streams its
//!   records ([`Ledger::stream_records`]), so a long run holds none of them.
//! - **Paths** (for traces only, [`Ledger::keep_chain_paths`]): each job of a chain's task at
//!   position i > 0 notes the job of position i − 1 it was released by or read from; a record
//!   is then given its path, the job of each position walked back from its last, which the
//!   trace links with flow arrows (`write_trace`).

use super::{Ledger, Run};
use crate::state::NEVER;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::results::ChainRecord;
use rtsched_model::{Communication, TaskSet, Time};
use std::collections::VecDeque;

/// No data (a chain's head has not read yet), and not read yet (an implicit reader's job
/// before it starts).
const NO_DATA: Origin = (NEVER, u64::MAX);
const UNREAD: Origin = (NEVER, u64::MAX - 1);
/// (time, the first task's job index).
type Origin = (Time, u64);

/// No job (a register nothing was handed to or published in yet).
const NO_JOB: u64 = u64::MAX;

/// The stream a task's suspension lengths are drawn from: apart from its demand and arrival
/// streams (2 task, 2 task + 1), so a set's other draws do not change.
const SUSPENSION_STREAM: u64 = 1 << 62;

pub(super) struct Flow {
    /// Per task: the tasks it triggers, with its index among each one's triggers.
    succ: Vec<Vec<(u32, u32)>>,
    /// Per task triggered by `all`: which triggers finished a job since its last release.
    seen: Vec<Vec<bool>>,
    /// Per task with a suspension of varying length: its stream.
    susp: Vec<Option<ChaCha8Rng>>,
    /// Per job slot: the CPU where it suspended.
    susp_cpu: Vec<u32>,
    /// For the driver: suspended jobs' ends (time, slot, generation), and triggered jobs'
    /// deadline aborts (time, slot, generation).
    resumes: Vec<(Time, u32, u32)>,
    aborts: Vec<(Time, u32, u32)>,
    /// Per task: (chain, position) of each chain it is in.
    member: Vec<Vec<(u32, u32)>>,
    /// Per chain: its communication, last position, and the previous output's head read.
    comm: Vec<Option<Communication>>,
    last: Vec<u32>,
    prev_head: Vec<Time>,
    /// Per job slot × chain: the job's origin.
    origin: Vec<Origin>,
    /// Per chain, per position: event chain, the origin handed from the job of position i − 1
    /// that finished last to the next release at position i; data-flow, the origin of what
    /// position i published last (its output register).
    reg: Vec<Vec<Origin>>,
    /// Per chain, per position: the job index of the job whose hand-over or publication `reg`
    /// holds.
    reg_job: Vec<Vec<u64>>,
    /// LET: per chain, per position, publications still to come (time, origin, job index).
    due: Vec<Vec<VecDeque<(Time, Origin, u64)>>>,
    pub(super) records: Vec<ChainRecord>,
    /// With [`Ledger::keep_chain_paths`]: per chain, per position, per job index, the job of
    /// the previous position it was released by or read from (`NO_JOB` for none); and the
    /// records' paths (`RunResult::chain_paths`).
    from: Option<Vec<Vec<Vec<u64>>>>,
    pub(super) paths: Vec<u64>,
    /// The counted window's end: an event chain's instance is counted if its first job is.
    duration: Time,
}

impl Flow {
    /// The flow of `ts`, if it has triggers, suspensions or chains.
    pub(super) fn of(ts: &TaskSet) -> Option<Box<Flow>> {
        if !ts.has_flow() {
            return None;
        }
        let n = ts.tasks.len();
        let mut succ = vec![Vec::new(); n];
        let mut seen = vec![Vec::new(); n];
        for (i, t) in ts.tasks.iter().enumerate() {
            if let Some(tr) = &t.trigger {
                for (k, &p) in tr.tasks.iter().enumerate() {
                    succ[p as usize].push((i as u32, k as u32));
                }
                if tr.all {
                    seen[i] = vec![false; tr.tasks.len()];
                }
            }
        }
        let susp = ts
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                t.suspensions.iter().any(|s| s.hi > s.lo).then(|| {
                    let mut r = ChaCha8Rng::seed_from_u64(ts.run.seed);
                    r.set_stream(SUSPENSION_STREAM | i as u64);
                    r
                })
            })
            .collect();
        let mut member = vec![Vec::new(); n];
        for (c, ch) in ts.chains.iter().enumerate() {
            for (k, &t) in ch.tasks.iter().enumerate() {
                member[t as usize].push((c as u32, k as u32));
            }
        }
        let nc = ts.chains.len();
        Some(Box::new(Flow {
            succ,
            seen,
            susp,
            susp_cpu: Vec::new(),
            resumes: Vec::new(),
            aborts: Vec::new(),
            member,
            comm: ts.chains.iter().map(|c| c.communication).collect(),
            last: ts.chains.iter().map(|c| c.tasks.len() as u32 - 1).collect(),
            prev_head: vec![NEVER; nc],
            origin: Vec::new(),
            reg: ts
                .chains
                .iter()
                .map(|c| vec![NO_DATA; c.tasks.len()])
                .collect(),
            reg_job: ts
                .chains
                .iter()
                .map(|c| vec![NO_JOB; c.tasks.len()])
                .collect(),
            due: ts
                .chains
                .iter()
                .map(|c| vec![VecDeque::new(); c.tasks.len()])
                .collect(),
            records: Vec::new(),
            from: None,
            paths: Vec::new(),
            duration: ts.run.duration,
        }))
    }

    /// Job slot `slot`'s origin in chain `c` (grown as slots are).
    #[inline]
    fn origin_mut(&mut self, slot: u32, c: u32) -> &mut Origin {
        let nc = self.comm.len();
        let i = slot as usize * nc + c as usize;
        if i >= self.origin.len() {
            self.origin.resize((slot as usize + 1) * nc, NO_DATA);
        }
        &mut self.origin[i]
    }

    /// A job of `task` in slot `slot` (its `job`-th), released at `at` with relative deadline
    /// `d`: its origin in each chain of `task`. `counted`: released in the window.
    pub(super) fn released(
        &mut self,
        task: u32,
        slot: u32,
        job: u64,
        at: Time,
        d: Time,
        counted: bool,
    ) {
        for m in 0..self.member[task as usize].len() {
            let (c, i) = self.member[task as usize][m];
            let (cu, iu) = (c as usize, i as usize);
            let o = match self.comm[cu] {
                None if i == 0 => (at, job),
                None => {
                    let by = std::mem::replace(&mut self.reg_job[cu][iu], NO_JOB);
                    self.note_from(c, i, job, by);
                    std::mem::replace(&mut self.reg[cu][iu], NO_DATA)
                }
                Some(Communication::Implicit) => UNREAD,
                Some(Communication::Let) => {
                    // Reads at its release what was published at or before it.
                    let o = if i == 0 {
                        (at, job)
                    } else {
                        let q = &mut self.due[cu][iu - 1];
                        while q.front().is_some_and(|&(p, _, _)| p <= at) {
                            let (_, o, by) = q.pop_front().expect("a front");
                            self.reg[cu][iu - 1] = o;
                            self.reg_job[cu][iu - 1] = by;
                        }
                        self.note_from(c, i, job, self.reg_job[cu][iu - 1]);
                        self.reg[cu][iu - 1]
                    };
                    if i < self.last[cu] {
                        // For the next position's reads (the last one's outputs have none:
                        // queued, they would grow with the run).
                        self.due[cu][iu].push_back((at + d, o, job));
                    } else if counted {
                        self.output(c, job, o, at + d);
                    }
                    o
                }
            };
            *self.origin_mut(slot, c) = o;
        }
    }

    /// A job of `task` (slot `slot`, its `job`-th) first runs at `now`: an implicit reader
    /// reads its input.
    pub(super) fn started(&mut self, task: u32, slot: u32, job: u64, now: Time) {
        for m in 0..self.member[task as usize].len() {
            let (c, i) = self.member[task as usize][m];
            if self.comm[c as usize] != Some(Communication::Implicit) {
                continue;
            }
            let reg = if i == 0 {
                NO_DATA
            } else {
                self.reg[c as usize][i as usize - 1]
            };
            let o = self.origin_mut(slot, c);
            if *o == UNREAD {
                *o = if i == 0 { (now, 0) } else { reg };
                if i > 0 {
                    let by = self.reg_job[c as usize][i as usize - 1];
                    self.note_from(c, i, job, by);
                }
            }
        }
    }

    /// The `job`-th job of `task` (slot `slot`) finished at `finish`: it hands its origin on
    /// (event chains), publishes (implicit), and a chain's last task's job ends an instance.
    /// `counted`: released in the window.
    pub(super) fn finished(&mut self, task: u32, slot: u32, job: u64, finish: Time, counted: bool) {
        for m in 0..self.member[task as usize].len() {
            let (c, i) = self.member[task as usize][m];
            let (cu, iu) = (c as usize, i as usize);
            let o = *self.origin_mut(slot, c);
            match self.comm[cu] {
                None if i == self.last[cu] => {
                    if o != NO_DATA && o.0 < self.duration {
                        self.push(
                            ChainRecord {
                                chain: c,
                                instance: o.1,
                                start: o.0,
                                end: finish,
                                latency: Some(finish - o.0),
                                data_age: None,
                                reaction_time: None,
                            },
                            job,
                        );
                    }
                }
                None => {
                    self.reg[cu][iu + 1] = o;
                    self.reg_job[cu][iu + 1] = job;
                }
                Some(Communication::Implicit) => {
                    self.reg[cu][iu] = o;
                    self.reg_job[cu][iu] = job;
                    if i == self.last[cu] && counted {
                        self.output(c, job, o, finish);
                    }
                }
                Some(Communication::Let) => {}
            }
        }
    }

    /// An output of data-flow chain `c` (its last task's `job`-th job) published at `p` with
    /// head read `o`: its data age and reaction time (none before the head's first read).
    fn output(&mut self, c: u32, job: u64, o: Origin, p: Time) {
        if o == NO_DATA || o == UNREAD {
            return;
        }
        let prev = self.prev_head[c as usize];
        let reaction = (prev != NEVER && prev < o.0).then(|| p - prev);
        if prev == NEVER || o.0 > prev {
            self.prev_head[c as usize] = o.0;
        }
        self.push(
            ChainRecord {
                chain: c,
                instance: job,
                start: o.0,
                end: p,
                latency: None,
                data_age: Some(p - o.0),
                reaction_time: reaction,
            },
            job,
        );
    }

    /// Record `r`, whose chain's last task's job is its `last`-th; with paths kept, its path.
    fn push(&mut self, r: ChainRecord, last: u64) {
        if let Some(from) = &self.from {
            let c = r.chain as usize;
            let n = self.last[c] as usize + 1;
            let at = self.paths.len();
            self.paths.resize(at + n, NO_JOB);
            self.paths[at + n - 1] = last;
            for i in (1..n).rev() {
                let j = self.paths[at + i];
                self.paths[at + i - 1] = from[c][i].get(j as usize).copied().unwrap_or(NO_JOB);
            }
        }
        self.records.push(r);
    }

    /// With paths kept: the `job`-th job of chain `c`'s position `i` (> 0) was released by or
    /// read from job `by` of position i − 1.
    #[inline]
    fn note_from(&mut self, c: u32, i: u32, job: u64, by: u64) {
        if let Some(from) = &mut self.from {
            let v = &mut from[c as usize][i as usize];
            let j = job as usize;
            if v.len() <= j {
                v.resize(j + 1, NO_JOB);
            }
            v[j] = by;
        }
    }
}

impl<'t> Ledger<'t> {
    /// Job slot `j` of `task`, its job `job`, finished on `cpu` at `now` (`finish` recorded):
    /// chains told, and the jobs it triggers released on `cpu`.
    #[inline(never)]
    pub(super) fn flow_finished(&mut self, now: Time, task: u32, j: u32, cpu: u32, finish: Time) {
        let (job, release) = {
            let x = &self.run.jobs[j as usize];
            (x.job, x.release)
        };
        let counted = release < self.run.duration;
        let f = self.run.flow.as_mut().expect("a flow");
        f.finished(task, j, job, finish, counted);
        let n = f.succ[task as usize].len();
        self.chain_records_out();
        for k in 0..n {
            let f = self.run.flow.as_mut().expect("a flow");
            let (s, idx) = f.succ[task as usize][k];
            if !f.seen[s as usize].is_empty() {
                f.seen[s as usize][idx as usize] = true;
                if !f.seen[s as usize].iter().all(|&b| b) {
                    continue;
                }
                f.seen[s as usize].iter_mut().for_each(|b| *b = false);
            }
            if self.keeps_releasing(now) {
                let rel = self.release_on(now, s, now, Some(cpu));
                if let Some(a) = rel.abort {
                    self.run.flow.as_mut().expect("a flow").aborts.push(a);
                }
            }
        }
    }

    /// Job slot `j` joined region `region` on `cpu` at `now`: if a suspension follows, the job
    /// suspends (true) and the driver resumes it; else (false) the next region forks now.
    #[inline(never)]
    pub(super) fn flow_suspends(&mut self, now: Time, j: u32, region: u32, cpu: u32) -> bool {
        let r: &mut Run = &mut self.run;
        let task = r.jobs[j as usize].task as usize;
        let Some(s) = r.ts.tasks[task].suspensions.get(region as usize).copied() else {
            return false;
        };
        let f = r.flow.as_mut().expect("a flow");
        let len = match &mut f.susp[task] {
            Some(rng) if s.hi > s.lo => rng.random_range(s.lo..=s.hi),
            _ => s.lo,
        };
        if len == 0 {
            return false;
        }
        if f.susp_cpu.len() <= j as usize {
            f.susp_cpu.resize(j as usize + 1, 0);
        }
        f.susp_cpu[j as usize] = cpu;
        f.resumes
            .push((now + len, j, r.jobs[j as usize].generation));
        true
    }

    /// A suspended job (slot `slot`, generation `generation`) is ready again at `now`: its next
    /// run segment forks where it suspended. Nothing if it was aborted meanwhile.
    pub fn resume(&mut self, now: Time, slot: u32, generation: u32) {
        let j = &self.run.jobs[slot as usize];
        if !(j.live && j.generation == generation) {
            return;
        }
        let cpu = self.run.flow.as_ref().expect("a flow").susp_cpu[slot as usize];
        self.fork(now, slot, Some(cpu));
    }

    /// Whether suspensions or triggered releases left the driver something to schedule.
    #[inline]
    pub fn has_flow_events(&self) -> bool {
        self.run
            .flow
            .as_ref()
            .is_some_and(|f| !f.resumes.is_empty() || !f.aborts.is_empty())
    }

    /// The suspended jobs' ends (the driver calls [`Ledger::resume`] then) and the triggered
    /// jobs' deadline aborts ([`Ledger::deadline_abort`]), each (time, slot, generation).
    pub fn take_flow_events(
        &mut self,
        resumes: &mut Vec<(Time, u32, u32)>,
        aborts: &mut Vec<(Time, u32, u32)>,
    ) {
        resumes.clear();
        aborts.clear();
        if let Some(f) = self.run.flow.as_mut() {
            resumes.append(&mut f.resumes);
            aborts.append(&mut f.aborts);
        }
    }

    /// Keep each chain record's path (`RunResult::chain_paths`: the jobs a trace links with
    /// flow arrows). Call before the run; nothing for a set without chains.
    pub fn keep_chain_paths(&mut self) {
        if let Some(f) = self.run.flow.as_mut() {
            f.from = Some(
                f.last
                    .iter()
                    .map(|&l| vec![Vec::new(); l as usize + 1])
                    .collect(),
            );
        }
    }

    /// A streaming run's chain records made so far go to its sink (their buffer keeps its
    /// room; the paths of records streamed away are dropped with them).
    #[inline]
    pub(super) fn chain_records_out(&mut self) {
        let (Some(f), Some(sink)) = (self.run.flow.as_mut(), self.sink.as_mut()) else {
            return;
        };
        if f.records.is_empty() {
            return;
        }
        let sink = sink.get();
        for r in &f.records {
            sink.chain(r);
        }
        f.records.clear();
        f.paths.clear();
    }

    /// The chain records of the run and their paths (taken).
    pub(super) fn take_chain_records(&mut self) -> (Vec<ChainRecord>, Vec<u64>) {
        self.chain_records_out();
        self.run
            .flow
            .as_mut()
            .map(|f| (std::mem::take(&mut f.records), std::mem::take(&mut f.paths)))
            .unwrap_or_default()
    }
}
