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
//!   uniformly from the task's own stream (seeded by the run's seed; drawn in job order;
//!   [`crate::chains::SuspensionDraws`]).
//! - **Chains.** Each job of a chain's task carries, per chain, its *origin*: the release of
//!   the first task's job it descends from (event chain), or the first task's read at the head
//!   of the data it read (data-flow chain). The rule is [`crate::chains`]'s, which the real
//!   backends without a ledger replay their job records through; the metrics' summaries are
//!   `chains.rs` of the results. A record leaves for the run's sink as soon as it is made
//!   when the run streams its records ([`Ledger::stream_records`]), so a long run holds none;
//!   with [`Ledger::keep_chain_paths`] (traces) each record also gets its path, the jobs a
//!   trace links with flow arrows (`write_trace`).

use super::{Ledger, Run};
use crate::chains::{ChainBook, SuspensionDraws};
use rtsched_model::results::ChainRecord;
use rtsched_model::{TaskSet, Time};

pub(super) struct Flow {
    /// Per task: whether a finished job of it is the flow's business (it triggers a task or
    /// is in a chain); else the finish is not told ([`Flow::on_finish`]), so a set with
    /// suspensions alone pays no call per job for it.
    finishes: Vec<bool>,
    /// Per task: the tasks it triggers, with its index among each one's triggers.
    succ: Vec<Vec<(u32, u32)>>,
    /// Per task triggered by `all`: which triggers finished a job since its last release.
    seen: Vec<Vec<bool>>,
    /// Per task: its suspensions' lengths (crate::chains).
    susp: Vec<SuspensionDraws>,
    /// Per job slot: the CPU where it suspended.
    susp_cpu: Vec<u32>,
    /// For the driver: suspended jobs' ends (time, slot, generation), and triggered jobs'
    /// deadline aborts (time, slot, generation).
    resumes: Vec<(Time, u32, u32)>,
    aborts: Vec<(Time, u32, u32)>,
    /// The chains' rule, told as jobs are released, start and finish (crate::chains).
    pub(super) chains: ChainBook,
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
        let in_chain = |i: usize| ts.chains.iter().any(|c| c.tasks.contains(&(i as u32)));
        let finishes = (0..n).map(|i| !succ[i].is_empty() || in_chain(i)).collect();
        Some(Box::new(Flow {
            finishes,
            succ,
            seen,
            susp: (0..n).map(|i| SuspensionDraws::new(ts, i)).collect(),
            susp_cpu: Vec::new(),
            resumes: Vec::new(),
            aborts: Vec::new(),
            chains: ChainBook::new(ts),
        }))
    }

    /// Whether a finished job of `task` is told ([`Ledger::flow_finished`]).
    #[inline]
    pub(super) fn on_finish(&self, task: usize) -> bool {
        self.finishes[task]
    }

    /// A job of `task` in slot `slot` released (see [`ChainBook::released`]).
    #[inline]
    pub(super) fn released(
        &mut self,
        task: u32,
        slot: u32,
        job: u64,
        at: Time,
        d: Time,
        counted: bool,
    ) {
        self.chains.released(task, slot, job, at, d, counted);
    }

    /// A job of `task` (slot `slot`, its `job`-th) runs at `now` (see
    /// [`ChainBook::started`]).
    #[inline]
    pub(super) fn started(&mut self, task: u32, slot: u32, job: u64, now: Time) {
        self.chains.started(task, slot, job, now);
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
        f.chains.finished(task, j, job, finish, counted);
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
        let len = f.susp[task].draw(s);
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
            f.chains.keep_paths();
        }
    }

    /// A streaming run's chain records made so far go to its sink, if it takes them
    /// (`JobSink::takes_chains`; else they stay, as without a sink): their buffer keeps its
    /// room, and the paths of records streamed away are dropped with them.
    #[inline]
    pub(super) fn chain_records_out(&mut self) {
        let (Some(f), Some(sink)) = (self.run.flow.as_mut(), self.sink.as_mut()) else {
            return;
        };
        let sink = sink.get();
        if f.chains.records.is_empty() || !sink.takes_chains() {
            return;
        }
        for r in &f.chains.records {
            sink.chain(r);
        }
        f.chains.records.clear();
        f.chains.paths.clear();
    }

    /// The chain records of the run and their paths (taken).
    pub(super) fn take_chain_records(&mut self) -> (Vec<ChainRecord>, Vec<u64>) {
        self.chain_records_out();
        self.run
            .flow
            .as_mut()
            .map(|f| {
                let c = &mut f.chains;
                (std::mem::take(&mut c.records), std::mem::take(&mut c.paths))
            })
            .unwrap_or_default()
    }
}
