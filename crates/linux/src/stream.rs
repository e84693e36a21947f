//! Per-job records of a real run that leave it as its jobs end, so that a run of any length
//! holds only its recent stretch (issue "Hardening": soak runs must not grow).
//!
//! A real run's records are made on threads that must not wait for a writer (the testbed's
//! workers and decider under the state lock; the kernel driver's task threads), so they are
//! put into an [`Outbox`] — a lock-free ring, so that a real-time thread never waits for the
//! main thread — and the run's main thread, which otherwise only waits for the others, drains
//! it every [`DRAIN_EVERY`] into the caller's sink. Records reach the sink in release order:
//! the testbed's ledger emits them so; the kernel driver's threads each emit their own task's
//! in order and [`Merger`] interleaves them by (release, task, job), the order a held run sorts
//! its records into.
//!
//! Chain records (docs/chains.md "Long runs") leave the same way: the testbed's ledger makes
//! them as the run goes and hands them over beside its job records ([`Handoff`]); a kernel
//! run's are made on the main thread, from the merged job records as they pass
//! ([`Collector::replay_chains`]: the chain rule's [`ChainReplay`]). Either way each goes into
//! the chains' summaries and on to the caller's sink (`--chains-csv`), and none is held.

use crate::samples::Samples;
use crossbeam_queue::ArrayQueue;
use rtsched_model::results::{
    ChainRecord, ChainSummary, JobRecord, JobSink, Streamed, SummarySink,
};
use rtsched_model::Time;
use rtsched_runtime::chains::ChainReplay;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the main thread moves records from the run's threads to the sink.
pub const DRAIN_EVERY: Duration = Duration::from_millis(50);

/// Records the ring holds before a producer spills (about 1 MB): 17 s of the soak's jobs, or
/// 50 ms of 80,000 jobs a second, between two drains.
pub const OUTBOX_RING: usize = 4096;

/// Records made on a run's threads, waiting for the main thread.
///
/// The producers are real-time threads (SCHED_DEADLINE or SCHED_FIFO, the testbed's decider
/// while it holds the state lock); the consumer is the caller's thread, SCHED_OTHER. A mutex
/// between them was a priority inversion with no bound: the main thread preempted inside its
/// few-nanosecond critical section by the run's own threads held every one of them that
/// finished a job until it ran again. So a push is a compare-and-swap into a ring
/// (`crossbeam_queue::ArrayQueue`). Only when the ring is full, the main thread having not
/// drained it for that long, does a producer take a lock: it spills into a vector, and keeps
/// spilling until the main thread has taken the spill, so each producer's records stay in
/// its push order (the ring's before its spilled ones, which `take` returns after them).
pub struct Outbox<T = JobRecord>(Arc<Shared<T>>);

impl<T> Clone for Outbox<T> {
    fn clone(&self) -> Self {
        Outbox(self.0.clone())
    }
}

struct Shared<T> {
    ring: ArrayQueue<T>,
    spill: Mutex<Vec<T>>,
    /// Set by a producer once it spilled, cleared by `take` as it empties the spill: while set,
    /// every push spills (so none overtakes a spilled record).
    spilling: AtomicBool,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox::with_capacity(OUTBOX_RING)
    }
}

impl<T> Outbox<T> {
    pub fn with_capacity(ring: usize) -> Self {
        Outbox(Arc::new(Shared {
            ring: ArrayQueue::new(ring.max(1)),
            spill: Mutex::new(Vec::new()),
            spilling: AtomicBool::new(false),
        }))
    }

    pub fn push(&self, rec: T) {
        let s = &*self.0;
        let rec = if s.spilling.load(Ordering::SeqCst) {
            rec
        } else {
            match s.ring.push(rec) {
                Ok(()) => return,
                Err(rec) => rec,
            }
        };
        let mut spill = s.spill.lock().unwrap_or_else(|p| p.into_inner());
        spill.push(rec);
        s.spilling.store(true, Ordering::SeqCst);
    }

    /// Everything pushed since the last call, in each producer's push order, into `spare`
    /// (emptied first; the caller keeps it, so neither side allocates once it has grown).
    pub fn take(&self, spare: &mut Vec<T>) {
        spare.clear();
        let s = &*self.0;
        let mut spill = s.spill.lock().unwrap_or_else(|p| p.into_inner());
        // The records in the ring now: every ring record of a producer that spilled came before
        // its spill. Records pushed meanwhile wait for the next call.
        for _ in 0..s.ring.len() {
            match s.ring.pop() {
                Some(r) => spare.push(r),
                None => break,
            }
        }
        spare.append(&mut spill);
        s.spilling.store(false, Ordering::SeqCst);
    }
}

/// The testbed's ledger's sink: its job records and its chain records, each through an
/// [`Outbox`] of its own (the chains' ring is small when the set has none).
#[derive(Clone)]
pub struct Handoff {
    pub jobs: Outbox,
    pub chains: Outbox<ChainRecord>,
}

impl Handoff {
    pub fn for_run(ts: &rtsched_model::TaskSet) -> Self {
        let chains = if ts.chains.is_empty() { 1 } else { OUTBOX_RING };
        Handoff {
            jobs: Outbox::default(),
            chains: Outbox::with_capacity(chains),
        }
    }

    /// Everything handed over since the last call, into `c`: job records with `end` (the run's
    /// end for the last ones, else `Time::MAX`), then chain records.
    pub fn drain(
        &self,
        c: &mut Collector<'_>,
        end: Time,
        bufs: &mut (Vec<JobRecord>, Vec<ChainRecord>),
    ) {
        self.jobs.take(&mut bufs.0);
        for rec in &bufs.0 {
            c.job(rec, end);
        }
        self.chains.take(&mut bufs.1);
        for rec in &bufs.1 {
            c.chain(rec);
        }
    }
}

impl JobSink for Handoff {
    fn job(&mut self, rec: &JobRecord, _end: Time) {
        // Records the testbed's ledger decides during the run; the undecided ones at its end
        // come through here too, final by then.
        self.jobs.push(rec.clone());
    }
    fn takes_chains(&self) -> bool {
        true
    }
    fn chain(&mut self, rec: &ChainRecord) {
        self.chains.push(*rec);
    }
}

/// The main thread's end of a streamed run: the summaries, the count, the end of the run
/// (the latest finish, or deadline of an unfinished job, as a held kernel run computes it),
/// and the caller's sink after them.
pub struct Collector<'a> {
    acc: SummarySink<'a>,
    pub jobs: u64,
    pub latest: Time,
    /// Thread-per-task runs' start delays, kept only when [`Collector::track_start_delays`]
    /// asked for them.
    pub start_delays: Option<StartDelays>,
    /// A kernel run's chain rule, fed the records as they pass
    /// ([`Collector::replay_chains`]).
    chains: Option<ChainReplay>,
}

impl<'a> Collector<'a> {
    /// Keeping every response time (tests).
    pub fn new(tasks: usize, next: Option<&'a mut (dyn JobSink + Send)>) -> Self {
        Collector {
            acc: SummarySink::new(tasks, next),
            jobs: 0,
            latest: 0,
            start_delays: None,
            chains: None,
        }
    }
    /// For a run of `ts`: the p99s keep about 1% of the response times
    /// ([`SummarySink::for_run`]).
    pub fn for_run(
        ts: &rtsched_model::TaskSet,
        next: Option<&'a mut (dyn JobSink + Send)>,
    ) -> Self {
        Collector {
            acc: SummarySink::for_run(ts, next),
            jobs: 0,
            latest: 0,
            start_delays: None,
            chains: None,
        }
    }
    pub fn job(&mut self, rec: &JobRecord, end: Time) {
        self.jobs += 1;
        self.latest = self.latest.max(rec.finish.unwrap_or(rec.deadline));
        if let Some(d) = &mut self.start_delays {
            d.job(rec);
        }
        self.acc.job(rec, end);
        // A job its thread never reached (made at a kernel run's end) has no start: the chains
        // see no such job, as a held run's do not.
        if rec.start.is_some() {
            self.chain_job(rec);
        }
    }
    pub fn track_start_delays(&mut self, tasks: usize) {
        self.start_delays
            .get_or_insert_with(|| StartDelays::new(tasks));
    }
    /// One chain instance's record, made as the run went (the testbed's ledger's).
    pub fn chain(&mut self, rec: &ChainRecord) {
        self.acc.chain(rec);
    }
    /// Make the chain records from the job records as they pass, in release order (a kernel
    /// run, which has no ledger), by the chain rule ([`ChainReplay`]); nothing for a set
    /// without chains.
    pub fn replay_chains(&mut self, ts: &rtsched_model::TaskSet) {
        if !ts.chains.is_empty() {
            self.chains = Some(ChainReplay::new(ts));
        }
    }
    /// A job the chains see but the run does not count (a triggered job released after the
    /// window, which ends a counted instance), after every counted one, in release order.
    pub fn chain_job(&mut self, rec: &JobRecord) {
        if let Some(ch) = &mut self.chains {
            ch.job(rec);
            for r in ch.records().drain(..) {
                self.acc.chain(&r);
            }
        }
    }
    /// No record comes any more: the chain records still to be made, made.
    pub fn end_chains(&mut self) {
        if let Some(ch) = &mut self.chains {
            ch.finish();
            for r in ch.records().drain(..) {
                self.acc.chain(&r);
            }
        }
    }
    /// The chains' summaries of the records streamed (None: a set without chains).
    pub fn chain_summaries(&mut self) -> Option<Vec<ChainSummary>> {
        self.acc.chain_summaries()
    }
    pub fn streamed(mut self, task_names: &[String]) -> Streamed {
        Streamed {
            jobs: self.jobs,
            summaries: self.acc.summaries(task_names),
        }
    }
}

/// Start delay of thread-per-task runs: how late a job's thread began it after its release,
/// over jobs whose thread was idle at the release (otherwise the previous job delays it). It
/// includes both wake-up latency and waiting behind more urgent threads. Fed each task's jobs
/// in order (a held run's records, or a streamed run's as they pass).
pub struct StartDelays {
    last_finish: Vec<Time>,
    pub samples: Samples,
}

impl StartDelays {
    pub fn new(tasks: usize) -> Self {
        StartDelays {
            last_finish: vec![0; tasks],
            samples: Samples::default(),
        }
    }
    pub fn job(&mut self, rec: &JobRecord) {
        let last = &mut self.last_finish[rec.task as usize];
        if let Some(s) = rec.start {
            if *last <= rec.release {
                self.samples.push(s.saturating_sub(rec.release));
            }
        }
        *last = rec.finish.unwrap_or(Time::MAX);
    }
}

/// Interleaves per-task streams (each in job order) into release order, (release, task, job),
/// as soon as that order is certain: a record goes out when every task still running has a
/// later one waiting or has ended. A record of a job that never finished holds back the rest
/// until the end: its tardiness depends on the run's end (and such records are made only
/// when a task runs out of time, at the end of its stream).
pub struct Merger {
    queues: Vec<VecDeque<JobRecord>>,
    ended: Vec<bool>,
    held_back: bool,
}

impl Merger {
    pub fn new(tasks: usize) -> Self {
        Merger {
            queues: (0..tasks).map(|_| VecDeque::new()).collect(),
            ended: vec![false; tasks],
            held_back: false,
        }
    }

    /// A record of its task's stream (in that task's job order).
    pub fn push(&mut self, rec: JobRecord) {
        self.queues[rec.task as usize].push_back(rec);
    }

    /// Task `t` will push nothing more.
    pub fn end_task(&mut self, t: usize) {
        self.ended[t] = true;
    }

    /// Records now queued, in all.
    pub fn queued(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    /// Hand out every record whose place in release order is certain.
    pub fn emit(&mut self, out: &mut Collector<'_>) {
        while !self.held_back {
            let mut best: Option<usize> = None;
            for (t, q) in self.queues.iter().enumerate() {
                match q.front() {
                    None if self.ended[t] => {}
                    // A running task with nothing queued may yet push an earlier record.
                    None => return,
                    Some(r) => {
                        if best.is_none_or(|b| key(r) < key(&self.queues[b][0])) {
                            best = Some(t);
                        }
                    }
                }
            }
            let Some(b) = best else { return };
            if self.queues[b][0].finish.is_none() {
                self.held_back = true;
                return;
            }
            let r = self.queues[b].pop_front().expect("front seen");
            out.job(&r, Time::MAX);
        }
    }

    /// Every task has ended: everything left, in order, with the run's end.
    pub fn finish(
        mut self,
        out: &mut Collector<'_>,
        end: impl FnOnce(&Collector<'_>, &[VecDeque<JobRecord>]) -> Time,
    ) {
        self.ended.iter_mut().for_each(|e| *e = true);
        self.emit(out);
        let end = end(out, &self.queues);
        let mut rest: Vec<JobRecord> = self.queues.iter_mut().flat_map(|q| q.drain(..)).collect();
        rest.sort_by_key(key);
        for r in &rest {
            out.job(r, end);
        }
    }
}

fn key(r: &JobRecord) -> (Time, u32, u64) {
    (r.release, r.task, r.job)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(task: u32, job: u64, release: Time, finish: Option<Time>) -> JobRecord {
        JobRecord {
            task,
            job,
            release,
            deadline: release + 10,
            finish,
            start: Some(release),
            ..Default::default()
        }
    }

    /// Four producers and a consumer taking as they push, into a ring of 8 (so they spill
    /// and leave the spill again thousands of times): every record comes out once, and each
    /// producer's in its push order.
    #[test]
    fn the_outbox_keeps_each_producers_order_and_loses_nothing() {
        const N: u64 = 20_000;
        let ob = Outbox::with_capacity(8);
        let done = Arc::new(AtomicBool::new(false));
        let producers: Vec<_> = (0..4u32)
            .map(|t| {
                let ob = ob.clone();
                std::thread::spawn(move || (0..N).for_each(|j| ob.push(rec(t, j, j, Some(j)))))
            })
            .collect();
        let consumer = {
            let (ob, done) = (ob.clone(), done.clone());
            std::thread::spawn(move || {
                let (mut got, mut buf) = (Vec::new(), Vec::new());
                loop {
                    let last = done.load(Ordering::SeqCst);
                    ob.take(&mut buf);
                    got.extend(buf.iter().map(|r| (r.task, r.job)));
                    if last {
                        return got;
                    }
                }
            })
        };
        producers.into_iter().for_each(|p| p.join().unwrap());
        done.store(true, Ordering::SeqCst);
        let got = consumer.join().unwrap();
        assert_eq!(got.len() as u64, 4 * N);
        for t in 0..4 {
            let jobs: Vec<u64> = got.iter().filter(|r| r.0 == t).map(|r| r.1).collect();
            assert_eq!(jobs, (0..N).collect::<Vec<_>>(), "producer {t}");
        }
    }

    /// A producer does not wait for a consumer stopped inside `take` (the main thread, below
    /// every real-time thread, preempted there) while the ring has room.
    #[test]
    fn a_push_does_not_wait_for_the_main_thread() {
        let ob = Outbox::with_capacity(64);
        let held = ob.0.spill.lock().unwrap(); // as `take` holds it
        let (tx, rx) = std::sync::mpsc::channel();
        let producer = {
            let ob = ob.clone();
            std::thread::spawn(move || {
                (0..10).for_each(|j| ob.push(rec(0, j, j, Some(j))));
                tx.send(()).unwrap();
            })
        };
        let pushed = rx.recv_timeout(Duration::from_secs(10)).is_ok();
        drop(held);
        producer.join().unwrap();
        assert!(pushed, "a push waited for the consumer's lock");
        let mut buf = Vec::new();
        ob.take(&mut buf);
        assert_eq!(
            buf.iter().map(|r| r.job).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
    }

    proptest! {
        /// Whatever the interleaving of the tasks' pushes and the main thread's drains, the
        /// records come out in (release, task, job) order, each once, as a held run sorts them.
        #[test]
        fn merged_streams_come_out_in_release_order(
            periods in prop::collection::vec(1u64..7, 1..5),
            unfinished_tail in prop::collection::vec(0usize..3, 5),
            schedule in prop::collection::vec((0usize..5, 0usize..4), 0..200),
        ) {
            let n = periods.len();
            let mut streams: Vec<VecDeque<JobRecord>> = periods.iter().enumerate().map(|(t, &p)| {
                let jobs = 12 / p + 1;
                (0..jobs).map(|j| {
                    let fin = (j + (unfinished_tail[t] as u64) < jobs).then_some(j * p + 1);
                    rec(t as u32, j, j * p, fin)
                }).collect()
            }).collect();
            let mut want: Vec<JobRecord> = streams.iter().flatten().cloned().collect();
            want.sort_by_key(key);
            let mut got = Vec::new();
            let mut sink_vec: Vec<JobRecord> = Vec::new();
            {
                let mut out = Collector::new(n, Some(&mut sink_vec));
                let mut m = Merger::new(n);
                for (t, k) in schedule {
                    let t = t % n;
                    for _ in 0..k {
                        if let Some(r) = streams[t].pop_front() { m.push(r); }
                    }
                    if streams[t].is_empty() { m.end_task(t); }
                    m.emit(&mut out);
                }
                for (t, s) in streams.iter_mut().enumerate() {
                    for r in s.drain(..) { m.push(r); }
                    m.end_task(t);
                }
                m.finish(&mut out, |o, _| o.latest);
                got.push(out.jobs);
            }
            prop_assert_eq!(got[0], want.len() as u64);
            prop_assert_eq!(sink_vec, want);
        }
    }

    #[test]
    fn a_running_task_with_nothing_queued_holds_the_others_back() {
        let mut held = Vec::new();
        let mut out = Collector::new(2, Some(&mut held));
        let mut m = Merger::new(2);
        m.push(rec(0, 0, 0, Some(1)));
        m.push(rec(0, 1, 5, Some(6)));
        m.emit(&mut out);
        assert_eq!(
            out.jobs, 0,
            "task 1 may still push a record released at 0..5"
        );
        m.push(rec(1, 0, 3, Some(4)));
        m.emit(&mut out);
        assert_eq!(
            out.jobs, 2,
            "0@0 and 1@3 are certain; 0@5 waits for task 1's next"
        );
        m.end_task(1);
        m.emit(&mut out);
        assert_eq!(out.jobs, 3);
        m.finish(&mut out, |o, _| o.latest);
        assert_eq!(
            held.iter().map(|r| (r.task, r.job)).collect::<Vec<_>>(),
            vec![(0, 0), (1, 0), (0, 1)]
        );
    }
}
