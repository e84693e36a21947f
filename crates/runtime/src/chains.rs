//! The chain rule (docs/chains.md "Metrics"): what each job of a chain's task carries and when
//! a chain instance ends, written once for every substrate.
//!
//! [`ChainBook`] is told a job's release, its first run and its finish, in time order. The
//! simulator's ledger tells it inline as the events happen (`ledger/flow.rs`); a real run whose
//! jobs no ledger follows (the kernel backends) replays its job records through it with
//! [`ChainReplay`] (as they come, in release order) or [`chain_records`] (all at once), so both
//! compute the same records by the same code.
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
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// The chain records of a run from its job records alone (any order): [`ChainReplay`] fed
/// them in release order. A triggered job's release must be the finish of the job that
/// released it (the real backends record it so).
pub fn chain_records(ts: &TaskSet, jobs: &[JobRecord]) -> Vec<ChainRecord> {
    if ts.chains.is_empty() {
        return Vec::new();
    }
    let mut order: Vec<&JobRecord> = jobs.iter().collect();
    order.sort_by_key(|j| (j.release, j.task, j.job));
    let mut replay = ChainReplay::new(ts);
    for j in order {
        replay.job(j);
    }
    replay.finish();
    replay.book.records
}

/// One event of a job: (time, what, task, job index, slot).
type Event = (Time, Happened, u32, u64, u32);

/// A run's job records replayed through the [`ChainBook`] the simulator fills as it runs: each
/// job's release, first run and finish (an aborted or unfinished job has none), in time order
/// (at one instant in [`Happened`]'s order), so that a run whose jobs no ledger follows (the
/// kernel backends) makes the simulator's records by the same code.
///
/// The records come in release order, (release, task, job), as a streamed run's main thread
/// merges its threads' records (`rtsched_linux`'s `stream::Merger`): no record to come has an
/// event before the release of the last one, so the events before it are replayed as each
/// record comes, and the chain records are made as the run goes ([`ChainReplay::records`]).
/// What is held is the events of the jobs whose events are not all past (a few per task) and
/// the book's per-job slots, reused: nothing grows with the run.
pub struct ChainReplay {
    book: ChainBook,
    deadline: Vec<Time>,
    duration: Time,
    pending: BinaryHeap<Reverse<Event>>,
    /// Per slot: the events of its job still pending, and whether the job is counted
    /// (released in the window).
    slots: Vec<(u8, bool)>,
    free: Vec<u32>,
}

impl ChainReplay {
    pub fn new(ts: &TaskSet) -> Self {
        ChainReplay {
            book: ChainBook::new(ts),
            deadline: ts.tasks.iter().map(|t| t.deadline).collect(),
            duration: ts.run.duration,
            pending: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The next job record, in release order after the previous ones (a job of a task in no
    /// chain is passed over).
    pub fn job(&mut self, j: &JobRecord) {
        if self.book.member[j.task as usize].is_empty() {
            return;
        }
        self.until(j.release);
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push((0, false));
            self.slots.len() as u32 - 1
        });
        let mut n = 1;
        self.pending.push(Reverse((
            j.release,
            Happened::Released,
            j.task,
            j.job,
            slot,
        )));
        if let Some(s) = j.start {
            n += 1;
            self.pending
                .push(Reverse((s, Happened::Started, j.task, j.job, slot)));
        }
        if let (Some(f), false) = (j.finish, j.aborted) {
            n += 1;
            let h = if j.start.is_some_and(|s| s >= f) {
                Happened::FinishedAtStart
            } else {
                Happened::Finished
            };
            self.pending.push(Reverse((f, h, j.task, j.job, slot)));
        }
        self.slots[slot as usize] = (n, j.release < self.duration);
    }

    /// No record comes any more: every event left is replayed.
    pub fn finish(&mut self) {
        while let Some(Reverse(e)) = self.pending.pop() {
            self.replay(e);
        }
    }

    /// The chain records made so far (the caller takes them).
    pub fn records(&mut self) -> &mut Vec<ChainRecord> {
        &mut self.book.records
    }

    /// Replay every pending event before `t`.
    fn until(&mut self, t: Time) {
        while self.pending.peek().is_some_and(|Reverse(e)| e.0 < t) {
            let Reverse(e) = self.pending.pop().expect("a peeked event");
            self.replay(e);
        }
    }

    fn replay(&mut self, (at, h, task, job, slot): Event) {
        let (left, counted) = &mut self.slots[slot as usize];
        let counted = *counted;
        *left -= 1;
        if *left == 0 {
            self.free.push(slot);
        }
        match h {
            Happened::Released => {
                let d = self.deadline[task as usize];
                self.book.released(task, slot, job, at, d, counted);
            }
            Happened::Started => self.book.started(task, slot, job, at),
            Happened::Finished | Happened::FinishedAtStart => {
                self.book.finished(task, slot, job, at, counted)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain (a: T 10, C 2; b triggered by a, C 3) over 10,000 instances, fed in
    /// release order: every instance is 5 ms, each record made before the next instance's
    /// jobs come, and the replay holds two jobs' events and slots at most, not the run's.
    #[test]
    fn a_replay_makes_each_record_as_it_goes_and_holds_only_the_jobs_in_flight() {
        let ts = rtsched_model::parse_taskset(
            "platform: {cpus: 1}\nrun: {duration: 100s}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n  - {name: b, trigger: a, deadline: 10, wcet: 3}\nchains:\n  - {name: ab, tasks: [a, b]}\n",
            rtsched_model::Format::Yaml,
            "ab.yaml",
        )
        .unwrap();
        const MS: Time = 1_000_000;
        let job = |task: u32, k: u64, release: Time, finish: Time| JobRecord {
            task,
            job: k,
            release,
            start: Some(release),
            finish: Some(finish),
            ..Default::default()
        };
        let mut replay = ChainReplay::new(&ts);
        let mut got = Vec::new();
        for k in 0..10_000u64 {
            let t = 10 * MS * k;
            replay.job(&job(0, k, t, t + 2 * MS));
            // Instance k − 1 ended at 10(k − 1) + 5 < 10k: made by now.
            assert_eq!(got.len() + replay.records().len(), k as usize);
            replay.job(&job(1, k, t + 2 * MS, t + 5 * MS));
            got.append(replay.records());
            assert!(replay.slots.len() <= 2 && replay.pending.len() <= 6);
        }
        replay.finish();
        got.append(replay.records());
        assert_eq!(got.len(), 10_000);
        assert!(got
            .iter()
            .enumerate()
            .all(|(k, r)| r.instance == k as u64 && r.latency == Some(5 * MS)));
    }
}
