//! The chain rule (docs/chains.md "Metrics"): what each job of a chain's task carries and when
//! a chain instance ends, written once for every substrate.
//!
//! [`ChainBook`] is told a job's release, its first run and its finish, in time order. The
//! simulator's ledger tells it inline as the events happen (`ledger/flow.rs`); a real run whose
//! jobs no ledger follows (the kernel backends) replays its job records through it with
//! [`chain_records`], so both compute the same records by the same code.
//!
//! Each job of a chain's task carries, per chain, its *origin*: the release of the first task's
//! job it descends from (event chain), or the first task's read at the head of the data it
//! read (data-flow chain; Dürr et al., EMSOFT 2019, immediate backward job chains). An event
//! chain's instance ends when its last task's job finishes (`latency`); a data-flow chain's
//! output is its last task's publication (`data_age`, `reaction_time`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::results::{ChainRecord, JobRecord};
use rtsched_model::{Communication, Suspension, TaskSet, Time};
use std::collections::VecDeque;

/// No data (a chain's head has not read yet), and not read yet (an implicit reader's job
/// before it starts).
const NEVER: Time = Time::MAX;
const NO_DATA: Origin = (NEVER, u64::MAX);
const UNREAD: Origin = (NEVER, u64::MAX - 1);
/// (time, the first task's job index).
type Origin = (Time, u64);
/// No job (a register nothing was handed to or published in yet).
const NO_JOB: u64 = u64::MAX;

/// The stream a task's suspension lengths are drawn from: apart from its demand and arrival
/// streams (2 task, 2 task + 1), so a set's other draws do not change.
const SUSPENSION_STREAM: u64 = 1 << 62;

/// Task `task`'s suspension lengths, drawn in job order, suspension by suspension: uniformly
/// from `[lo, hi]` with the run's seed, from a stream of the task's own (docs/chains.md
/// "Self-suspension"). The simulator and the kernel backends draw through it alike.
pub struct SuspensionDraws(Option<ChaCha8Rng>);

impl SuspensionDraws {
    pub fn new(ts: &TaskSet, task: usize) -> Self {
        let varies = ts.tasks[task].suspensions.iter().any(|s| s.hi > s.lo);
        SuspensionDraws(varies.then(|| {
            let mut r = ChaCha8Rng::seed_from_u64(ts.run.seed);
            r.set_stream(SUSPENSION_STREAM | task as u64);
            r
        }))
    }

    /// The next length of suspension `s` of the task.
    #[inline]
    pub fn draw(&mut self, s: Suspension) -> Time {
        match &mut self.0 {
            Some(rng) if s.hi > s.lo => rng.random_range(s.lo..=s.hi),
            _ => s.lo,
        }
    }
}

/// Per chain, what its jobs carry and the records of its instances.
pub struct ChainBook {
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
    pub records: Vec<ChainRecord>,
    /// With [`ChainBook::keep_paths`]: per chain, per position, per job index, the job of the
    /// previous position it was released by or read from (`NO_JOB` for none); and the
    /// records' paths, flattened (`RunResult::chain_paths`).
    from: Option<Vec<Vec<Vec<u64>>>>,
    pub paths: Vec<u64>,
    /// The counted window's end: an event chain's instance is counted if its first job is.
    duration: Time,
}

impl ChainBook {
    pub fn new(ts: &TaskSet) -> Self {
        let mut member = vec![Vec::new(); ts.tasks.len()];
        for (c, ch) in ts.chains.iter().enumerate() {
            for (k, &t) in ch.tasks.iter().enumerate() {
                member[t as usize].push((c as u32, k as u32));
            }
        }
        ChainBook {
            member,
            comm: ts.chains.iter().map(|c| c.communication).collect(),
            last: ts.chains.iter().map(|c| c.tasks.len() as u32 - 1).collect(),
            prev_head: vec![NEVER; ts.chains.len()],
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
        }
    }

    /// Give each record its path: the job of each of its chain's tasks, walked back from its
    /// last (each job of a position > 0 notes the job it was released by or read from).
    pub fn keep_paths(&mut self) {
        self.from = Some(
            self.last
                .iter()
                .map(|&l| vec![Vec::new(); l as usize + 1])
                .collect(),
        );
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
    pub fn released(&mut self, task: u32, slot: u32, job: u64, at: Time, d: Time, counted: bool) {
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

    /// A job of `task` (slot `slot`, its `job`-th) runs at `now`: an implicit reader reads
    /// its input the first time.
    pub fn started(&mut self, task: u32, slot: u32, job: u64, now: Time) {
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
    pub fn finished(&mut self, task: u32, slot: u32, job: u64, finish: Time, counted: bool) {
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

/// What happened to a job at an instant, in the order the simulator handles one instant: a
/// finish (its publication, and the triggered releases it makes) before a release, a release
/// before a first run (a read sees what was published at its instant, docs/chains.md choice 1).
/// A job that finishes at the instant it starts finishes after it starts.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Happened {
    Finished,
    Released,
    Started,
    FinishedAtStart,
}

/// The chain records of a run from its job records alone (any order): each job's release,
/// first run and finish (an aborted or unfinished job has none) replayed in time order through
/// the [`ChainBook`] the simulator fills as it runs. A triggered job's release must be the
/// finish of the job that released it (the real backends record it so).
pub fn chain_records(ts: &TaskSet, jobs: &[JobRecord]) -> Vec<ChainRecord> {
    if ts.chains.is_empty() {
        return Vec::new();
    }
    let mut book = ChainBook::new(ts);
    let mut events: Vec<(Time, Happened, u32, u64, u32)> = Vec::new();
    for (k, j) in jobs.iter().enumerate() {
        if book.member[j.task as usize].is_empty() {
            continue;
        }
        let k = k as u32;
        events.push((j.release, Happened::Released, j.task, j.job, k));
        if let Some(s) = j.start {
            events.push((s, Happened::Started, j.task, j.job, k));
        }
        if let (Some(f), false) = (j.finish, j.aborted) {
            let at_start = j.start.is_some_and(|s| s >= f);
            let h = if at_start {
                Happened::FinishedAtStart
            } else {
                Happened::Finished
            };
            events.push((f, h, j.task, j.job, k));
        }
    }
    events.sort_unstable();
    for (at, h, task, job, k) in events {
        let j = &jobs[k as usize];
        let counted = j.release < ts.run.duration;
        match h {
            Happened::Released => {
                let d = ts.tasks[task as usize].deadline;
                book.released(task, k, job, at, d, counted);
            }
            Happened::Started => book.started(task, k, job, at),
            Happened::Finished | Happened::FinishedAtStart => {
                book.finished(task, k, job, at, counted)
            }
        }
    }
    book.records
}
