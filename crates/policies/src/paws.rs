//! `paws` — global EDF with priority-aware work stealing for parallel (fork-join) jobs
//! (J. C. Fonseca, L. Nogueira, C. Maia, L. M. Pinho, "Real-Time Scheduling of Parallel Tasks in
//! the Linux Kernel", §4).
//!
//! # Rules, and where each lives
//!
//! - **Rule A** (one global ready queue in deadline order; the most urgent jobs run):
//!   [`Paws::global`]; `release` and `unblocked` of jobs enqueue there; [`Paws::preempt`] lets a
//!   newly arrived entry take the CPU of the running entity with the latest deadline when no
//!   CPU is free ("whenever a new job is released … and all the cores are busy").
//! - **Rule B** (a region's threads stay on the core that forked them): `forked` pushes them
//!   on that CPU's [`LocalQueue`], never on the global queue.
//! - **Rule C** (each local entry is a deque of equal-deadline threads; the core takes the
//!   bottom thread of its most urgent deque): [`LocalQueue::pop_bottom`], the owner's role.
//! - **Rule D** (empty local queue: take from the global queue): step 2 of [`Paws::fill`].
//! - **Rule E** (still nothing: steal the top thread of the most urgent deque of a randomly
//!   chosen busy core): [`LocalQueue::steal_top`], the stealer's role, with the victim drawn
//!   from the run's seeded generator. `stats` counts `steals`, `steal_attempts` (at most one
//!   per free core per decision) and `failed_steals` (no core had a thread to steal); the
//!   results take them into their run-level counters.
//! - **Rule F** (a stolen thread that is preempted goes to the global queue, a local one back
//!   to its deque, a job to the global queue): [`Paws::requeue`], by [`Origin`]. As in the
//!   authors' kernel (`pull_task_rtws`), a stolen thread that its home core (the one it was
//!   stolen from) takes back from the global queue is a local thread again.
//!
//! Only arrivals in the global queue preempt (a released job, a first region's threads, an
//! unblocked job or stolen thread): forked threads wait in their core's local queue until that
//! core is free or a free core steals them (the paper's "controlled priority inversion"), and a
//! preempted stolen thread requeued in the global queue waits there for a free core. A released
//! job finds an idle core directly (the global queue is read by every free core in the same
//! decision: the paper's dispatching routine).
//!
//! # Readings (docs/papers/paws.md)
//!
//! - Deque order: a fork pushes thread 0 first, so thread 0 is at the top (the oldest, stolen
//!   first) and the owner takes the last thread first.
//! - "Randomly select a busy core": uniformly among the cores that run something *and* have a
//!   thread to steal, so a steal fails only when nobody has one.
//! - Only arrivals preempt (above); a job that waits in the global queue because a free core
//!   took local work first does not preempt later (Rules C before D).
//! - A first region with several threads, forked at release on no core, goes to the global
//!   queue thread by thread as jobs (the paper's jobs start sequentially).
//! - Global-queue ties: deadline, then release, task, job and thread (the EDF total order),
//!   where the paper says FIFO.
//! - Free cores are filled in rounds — local work, then the global queue, then steals — so an
//!   owner whose join just freed it takes its own threads before another core steals them.
//! - `pull=empty` (default, Rule D as written) or `pull=inversion` (the authors' kernel,
//!   `dec_pjobs_rtws`): a core whose entity left and whose local queue's most urgent deadline
//!   is now later than both the leaving entity's and the global head's takes the global head.
//! - `master=global` (default) or `master=joining`: the master thread resuming after a join (a
//!   one-thread region, which reaches the policy by `release`) enters the global queue as a
//!   job, or is forked on the core where the region joined, as a region of one thread.
//!
//! # Weakened variants (negative controls of docs/papers/paws.md's claims)
//!
//! Not the paper's scheduler: each takes one credited mechanism away and keeps everything
//! else (the victim is still drawn the same way from the same seeded generator).
//!
//! - `steal=` — which thread a free core steals (Rule E):
//!   - `top` (default, the paper's): the top (oldest) thread of the victim's *most urgent*
//!     deque, "the highest priority thread in that core" (§4).
//!   - `random`: classic randomized work stealing, priority-unaware (Blumofe & Leiserson,
//!     JACM 1999, the paper's [6]; rayon's `find_work`): the victim's local queue read as the
//!     one deque of classic work stealing, in push order, and its steal end taken — the
//!     thread pushed longest ago, whatever its deadline ([`LocalQueue::steal_oldest`]). The
//!     negative control of every claim credited to *priority-aware* stealing: it differs from
//!     `top` only when the victim holds threads of several deadlines, and then only in which
//!     thread it takes. The owner still takes the bottom of its most urgent deque (Rule C).
//!   - `bottom`: the bottom (newest) thread of the victim's most urgent deque — still
//!     priority-aware, but from the owner's end, which §4 rejects ("stealing cores operate on
//!     the opposite end of the deque"; the top is the oldest, likely cache-cold and heaviest
//!     thread): the control of the choice of end, not of priority.
//!   - `none`: never steals (Rule E off: a free core waits for the global queue).
//! - `fork=global` puts a forked region's threads on the global queue as jobs instead of the
//!   forking core's deque (Rules B and C off: no locality, and the threads preempt like
//!   arriving jobs); `fork=local` is the default.
//!
//! [`VARIANTS`] lists every reading and variant, for the tests that walk them.

use crate::common::{IndexedHeap, Key, Order};
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rtsched_model::Time;
use std::collections::VecDeque;

/// Where an entity came from, which decides where it goes when it is preempted (Rule F).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// A job (or a thread that arrived like one): back to the global queue.
    Job,
    /// A thread of a region forked on `home`: back to that core's deque.
    Local(u32),
    /// A thread that another core stole from `home`'s deque: to the global queue. Taken
    /// back from the global queue by `home`, it is `Local(home)` again (the kernel's
    /// `pull_task_rtws` clears `stolen` when the puller is the core it was stolen from).
    Stolen(u32),
}

/// One entry of a local priority queue: the threads of equal deadline, top (oldest) first.
#[derive(Clone, Debug, Default)]
struct Deque {
    deadline: Time,
    threads: VecDeque<EntityId>,
}

/// A core's local priority queue (Rules B, C, E): deques in deadline order. The owner pushes
/// and pops at the bottom; stealers take from the top. Emptied deques are kept for reuse, so
/// steady-state forks allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct LocalQueue {
    deques: Vec<Deque>,
    spare: Vec<VecDeque<EntityId>>,
    len: usize,
}

impl LocalQueue {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn len(&self) -> usize {
        self.len
    }
    /// The deadline of the most urgent non-empty deque.
    pub fn first_deadline(&self) -> Option<Time> {
        self.deques.first().map(|q| q.deadline)
    }
    /// Owner: `e` with deadline `d` at the bottom of its deque.
    pub fn push_bottom(&mut self, e: EntityId, d: Time) {
        let i = match self.deques.binary_search_by_key(&d, |q| q.deadline) {
            Ok(i) => i,
            Err(i) => {
                let threads = self.spare.pop().unwrap_or_default();
                self.deques.insert(
                    i,
                    Deque {
                        deadline: d,
                        threads,
                    },
                );
                i
            }
        };
        self.deques[i].threads.push_back(e);
        self.len += 1;
    }
    /// Owner (Rule C): the bottom thread of the most urgent non-empty deque.
    pub fn pop_bottom(&mut self) -> Option<EntityId> {
        let e = self.deques.first_mut()?.threads.pop_back()?;
        self.took();
        Some(e)
    }
    /// Stealer (Rule E): the top thread of the most urgent non-empty deque.
    pub fn steal_top(&mut self) -> Option<EntityId> {
        let e = self.deques.first_mut()?.threads.pop_front()?;
        self.took();
        Some(e)
    }
    /// Stealer, priority-unaware (`steal=random`): of the threads at the top of each deque,
    /// the one pushed longest ago (`pushed` gives a thread's push stamp) — the steal end of
    /// the one deque classic work stealing keeps, in which these threads lie in push order.
    /// A deque's top is its oldest thread (pushes go to the bottom), so the oldest of the
    /// queue is one of them: O(deques), nothing allocated.
    pub fn steal_oldest(&mut self, pushed: impl Fn(EntityId) -> u64) -> Option<EntityId> {
        let i = (0..self.deques.len()).min_by_key(|&i| pushed(self.deques[i].threads[0]))?;
        let e = self.deques[i].threads.pop_front()?;
        self.len -= 1;
        self.drop_if_empty(i);
        Some(e)
    }
    /// Take `e` out wherever it is (its job was aborted).
    pub fn remove(&mut self, e: EntityId) -> bool {
        for i in 0..self.deques.len() {
            if let Some(p) = self.deques[i].threads.iter().position(|&x| x == e) {
                self.deques[i].threads.remove(p);
                self.len -= 1;
                self.drop_if_empty(i);
                return true;
            }
        }
        false
    }
    fn took(&mut self) {
        self.len -= 1;
        self.drop_if_empty(0);
    }
    fn drop_if_empty(&mut self, i: usize) {
        if self.deques[i].threads.is_empty() {
            let q = self.deques.remove(i);
            self.spare.push(q.threads);
        }
    }
}

/// Per-entity state, indexed by id.
#[derive(Clone, Copy, Debug)]
struct Ent {
    info: EntityInfo,
    key: Key,
    origin: Origin,
    /// When it was last pushed on a local queue (a stamp of `Paws::pushes`): its place in
    /// push order, which `steal=random` reads.
    pushed: u64,
}

/// Operation counts (`stats`).
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    local_picks: u64,
    global_picks: u64,
    steals: u64,
    /// Free cores that looked for a victim (no local work, empty global queue), at most once
    /// per core per decision, and those of them that found none (the kernel's
    /// `steal_pjob_rtws` failing). `steal_attempts == steals + failed_steals`.
    steal_attempts: u64,
    failed_steals: u64,
    preemptions: u64,
    /// Global heads taken over local work under `pull=inversion`.
    inversion_pulls: u64,
    requeued_local: u64,
    requeued_global: u64,
}

pub struct Paws {
    /// Rule A: the global ready queue.
    global: IndexedHeap<Key>,
    /// Rules B, C, E: one local queue per core.
    local: Vec<LocalQueue>,
    /// What each core runs (as this policy decided).
    running: Vec<Option<EntityId>>,
    ents: Vec<Option<Ent>>,
    /// Global-queue entries that arrived since the last decision (they may preempt).
    arrived: Vec<EntityId>,
    rng: ChaCha8Rng,
    victims: Vec<u32>,
    /// Pushes on local queues so far (the next push stamp).
    pushes: u64,
    /// Per core, the decision (`decision`) in which it last attempted a steal.
    attempted: Vec<u64>,
    decision: u64,
    counts: Counts,
    opts: Options,
    /// Per core, the deadline of the entity that left it (completed or blocked) since the last
    /// decision (`pull=inversion`).
    left: Vec<Option<Time>>,
    /// Where the last `complete` happened and whose thread it was (task, job): the join that a
    /// one-thread region's `release` follows (`master=joining`).
    last_complete: Option<(u32, u32, u64)>,
}

/// Which thread a free core steals (Rule E: the top), or none (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal {
    /// The top of the victim's most urgent deque (the paper's).
    Top,
    /// The oldest thread of the victim's queue, whatever its deadline (priority-unaware).
    Random,
    /// The bottom of the victim's most urgent deque.
    Bottom,
    Never,
}

/// When a core that has local work takes the global queue's head instead (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pull {
    /// Rule D as written: only when its local queue is empty.
    Empty,
    /// The authors' kernel (`dec_pjobs_rtws`, `priority_inversion_rtws`): also when the entity
    /// that left it was more urgent than its local queue, and the global head is too.
    Inversion,
}

/// Where the master thread resumes after a join (a one-thread region; module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Master {
    /// In the global queue, as a job.
    Global,
    /// Forked on the joining core, as a region of one thread (Rule B).
    Joining,
}

/// The readings and weakened variants of [`Paws`] (module doc); `Default` is the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub steal: Steal,
    /// Forked threads go to the global queue as jobs (`fork=global`).
    pub fork_global: bool,
    pub pull: Pull,
    pub master: Master,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            steal: Steal::Top,
            fork_global: false,
            pull: Pull::Empty,
            master: Master::Global,
        }
    }
}

impl Paws {
    pub fn new(cpus: u32, rng: ChaCha8Rng) -> Self {
        Paws::with(cpus, rng, Options::default())
    }

    /// A reading or weakened variant (module doc).
    pub fn with(cpus: u32, rng: ChaCha8Rng, opts: Options) -> Self {
        let m = cpus as usize;
        Paws {
            global: IndexedHeap::with_capacity(64),
            local: vec![LocalQueue::default(); m],
            running: vec![None; m],
            ents: Vec::with_capacity(64),
            arrived: Vec::with_capacity(16),
            rng,
            victims: Vec::with_capacity(m),
            pushes: 0,
            attempted: vec![0; m],
            decision: 0,
            counts: Counts::default(),
            opts,
            left: vec![None; m],
            last_complete: None,
        }
    }

    fn set(&mut self, info: &EntityInfo, origin: Origin) {
        let i = info.id as usize;
        if self.ents.len() <= i {
            self.ents.resize(i + 1, None);
        }
        self.ents[i] = Some(Ent {
            info: *info,
            key: EdfOrder.key(info),
            origin,
            pushed: 0,
        });
    }

    /// Rules B, C, F: `e` (deadline `d`) at the bottom of core `c`'s local queue, stamped
    /// with its place in push order.
    fn push_local(&mut self, c: u32, e: EntityId, d: Time) {
        if let Some(x) = self.ents[e as usize].as_mut() {
            x.pushed = self.pushes;
        }
        self.pushes += 1;
        self.local[c as usize].push_bottom(e, d);
    }

    fn ent(&self, e: EntityId) -> Ent {
        self.ents[e as usize].expect("an entity this policy has")
    }

    /// A global-queue entry arrives (Rule A): it may take a CPU in this decision.
    fn enqueue_global(&mut self, e: EntityId) {
        let k = self.ent(e).key;
        self.global.push(e, k);
        self.arrived.push(e);
    }

    /// Rule F: where a preempted (or unblocked) entity goes, by where it came from.
    fn requeue(&mut self, e: EntityId) {
        let x = self.ent(e);
        match x.origin {
            Origin::Local(home) => {
                self.push_local(home, e, x.info.deadline);
                self.counts.requeued_local += 1;
            }
            Origin::Job | Origin::Stolen(_) => {
                self.global.push(e, x.key);
                self.counts.requeued_global += 1;
            }
        }
    }

    /// Core `c` takes the global queue's head (Rule D). A stolen thread taken back by its home
    /// core is local again (Rule F then returns it to that core's deque).
    fn pull(&mut self, c: usize) -> Option<EntityId> {
        let (_, e) = self.global.pop()?;
        self.counts.global_picks += 1;
        if let Some(x) = self.ents[e as usize].as_mut() {
            if x.origin == Origin::Stolen(c as u32) {
                x.origin = Origin::Local(c as u32);
            }
        }
        Some(e)
    }

    /// `pull=inversion` (the kernel's `dec_pjobs_rtws`): core `c`, freed by an entity of
    /// deadline `left`, takes the global head instead of its local work when its most urgent
    /// local deadline is later than both `left` (the core's deadline level drops) and the
    /// global head's.
    fn inversion_pull(&self, c: usize) -> bool {
        let (Some(left), Some(local), Some((head, _))) = (
            self.left[c],
            self.local[c].first_deadline(),
            self.global.peek(),
        ) else {
            return false;
        };
        left < local && head.primary < local
    }

    fn run(&mut self, cpu: u32, e: EntityId, d: &mut Dispatch<'_>) {
        self.running[cpu as usize] = Some(e);
        d.assign(cpu, Some(e));
    }

    /// Fill free cores: local work (Rule C), then the global queue (Rule D), then steals
    /// (Rule E), in rounds until no free core finds anything.
    fn fill(&mut self, d: &mut Dispatch<'_>) {
        self.decision += 1;
        loop {
            let mut progress = false;
            for c in 0..self.running.len() {
                if self.running[c].is_none() {
                    if self.opts.pull == Pull::Inversion && self.inversion_pull(c) {
                        let e = self.pull(c).expect("the global queue has a head");
                        self.counts.inversion_pulls += 1;
                        self.run(c as u32, e, d);
                        progress = true;
                    } else if let Some(e) = self.local[c].pop_bottom() {
                        self.counts.local_picks += 1;
                        self.run(c as u32, e, d);
                        progress = true;
                    }
                }
            }
            // A core still free has no local work (it would have taken it above).
            for c in 0..self.running.len() {
                if self.running[c].is_none() {
                    if let Some(e) = self.pull(c) {
                        self.run(c as u32, e, d);
                        progress = true;
                    }
                }
            }
            for c in 0..self.running.len() {
                if self.opts.steal == Steal::Never {
                    break;
                }
                if self.running[c].is_some() || !self.local[c].is_empty() || !self.global.is_empty()
                {
                    continue;
                }
                self.victims.clear();
                for v in 0..self.running.len() {
                    if self.running[v].is_some() && !self.local[v].is_empty() {
                        self.victims.push(v as u32);
                    }
                }
                // One attempt per core per decision: a core that failed in an earlier round and
                // succeeds now turns its failed attempt into a steal.
                let first = self.attempted[c] != self.decision;
                self.attempted[c] = self.decision;
                self.counts.steal_attempts += first as u64;
                if self.victims.is_empty() {
                    self.counts.failed_steals += first as u64;
                    continue;
                }
                if !first {
                    self.counts.failed_steals -= 1;
                }
                let v = self.victims[self.rng.random_range(0..self.victims.len())];
                let ents = &self.ents;
                let q = &mut self.local[v as usize];
                let e = match self.opts.steal {
                    Steal::Top | Steal::Never => q.steal_top(),
                    Steal::Random => q.steal_oldest(|e| ents[e as usize].map_or(0, |x| x.pushed)),
                    Steal::Bottom => q.pop_bottom(),
                };
                let e = e.expect("a victim has a thread");
                if let Some(x) = self.ents[e as usize].as_mut() {
                    x.origin = Origin::Stolen(v);
                }
                self.counts.steals += 1;
                self.run(c as u32, e, d);
                progress = true;
            }
            if !progress {
                break;
            }
        }
    }

    /// Rule A's preemption: each arrival still in the global queue, most urgent first, takes
    /// the CPU of the running entity with the latest deadline if its own is earlier.
    fn preempt(&mut self, d: &mut Dispatch<'_>) {
        self.arrived
            .sort_unstable_by_key(|&e| self.ents[e as usize].map(|x| x.key));
        for i in 0..self.arrived.len() {
            let e = self.arrived[i];
            let Some(k) = self.global.key_of(e) else {
                continue;
            }; // placed, or gone
            let victim = (0..self.running.len())
                .filter_map(|c| self.running[c].map(|r| (self.ent(r).key, c as u32, r)))
                .max();
            let Some((vk, cpu, v)) = victim else { continue };
            if k >= vk {
                continue;
            }
            self.global.remove(e);
            self.counts.preemptions += 1;
            self.requeue(v);
            self.run(cpu, e, d);
        }
        self.arrived.clear();
    }
}

impl Policy for Paws {
    /// `paws`, with the options that differ from the paper's (e.g. `paws:steal=random`), so
    /// that a run's results say which variant ran.
    fn name(&self) -> String {
        let o = &self.opts;
        let d = Options::default();
        let mut parts: Vec<&str> = Vec::new();
        if o.steal != d.steal {
            parts.push(match o.steal {
                Steal::Top => "steal=top",
                Steal::Random => "steal=random",
                Steal::Bottom => "steal=bottom",
                Steal::Never => "steal=none",
            });
        }
        if o.fork_global {
            parts.push("fork=global");
        }
        if o.pull == Pull::Inversion {
            parts.push("pull=inversion");
        }
        if o.master == Master::Joining {
            parts.push("master=joining");
        }
        if parts.is_empty() {
            "paws".into()
        } else {
            format!("paws:{}", parts.join(","))
        }
    }

    /// Each free CPU looks through the other CPUs' queues for a victim: m² a decision when
    /// most are free (measured: 1,500 jobs took 0.7 s on 2 CPUs, 6.7 s on 1,024, and more than
    /// a minute on 16,384).
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        m.saturating_mul(m).saturating_add(n)
    }

    fn release(&mut self, now: Time, e: &EntityInfo) {
        // A one-thread region after a join comes right after the `complete` that joined it.
        if let (Master::Joining, true, Some((c, task, job))) =
            (self.opts.master, e.region > 0, self.last_complete)
        {
            if (task, job) == (e.task, e.job) {
                return self.forked(now, Some(c), std::slice::from_ref(e));
            }
        }
        self.set(e, Origin::Job);
        self.enqueue_global(e.id);
    }

    fn forked(&mut self, _now: Time, cpu: Option<u32>, threads: &[EntityInfo]) {
        match cpu {
            Some(c) if !self.opts.fork_global => {
                for t in threads {
                    self.set(t, Origin::Local(c));
                    self.push_local(c, t.id, t.deadline);
                }
            }
            _ => {
                for t in threads {
                    self.set(t, Origin::Job);
                    self.enqueue_global(t.id);
                }
            }
        }
    }

    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        debug_assert_eq!(self.running[cpu as usize], Some(e));
        self.running[cpu as usize] = None;
        let x = self.ent(e);
        self.left[cpu as usize] = Some(x.info.deadline);
        self.last_complete = Some((cpu, x.info.task, x.info.job));
        self.ents[e as usize] = None;
    }

    fn blocked(&mut self, _now: Time, e: EntityId, cpu: u32) {
        debug_assert_eq!(self.running[cpu as usize], Some(e));
        self.running[cpu as usize] = None;
        self.left[cpu as usize] = Some(self.ent(e).info.deadline);
    }

    fn unblocked(&mut self, _now: Time, e: &EntityInfo) {
        match self.ent(e.id).origin {
            Origin::Local(home) => self.push_local(home, e.id, e.deadline),
            Origin::Job | Origin::Stolen(_) => self.enqueue_global(e.id),
        }
    }

    fn aborted(&mut self, _now: Time, e: EntityId) {
        if self.global.remove(e).is_none() {
            if let Some(c) = self.running.iter().position(|r| *r == Some(e)) {
                self.running[c] = None;
            } else if let Some(Origin::Local(home)) = self
                .ents
                .get(e as usize)
                .copied()
                .flatten()
                .map(|x| x.origin)
            {
                self.local[home as usize].remove(e);
            }
        }
        self.ents[e as usize] = None;
    }

    fn schedule(&mut self, _now: Time, d: &mut Dispatch<'_>) {
        self.fill(d);
        self.preempt(d);
        // A preemption can leave nothing free, so nothing more to fill.
        self.left.fill(None);
        self.last_complete = None;
    }

    fn stats(&self) -> Vec<(String, f64)> {
        let c = &self.counts;
        crate::common::counters(&[
            ("local_picks", c.local_picks),
            ("global_picks", c.global_picks),
            ("steals", c.steals),
            ("steal_attempts", c.steal_attempts),
            ("failed_steals", c.failed_steals),
            ("preemptions", c.preemptions),
            ("inversion_pulls", c.inversion_pulls),
            ("requeued_local", c.requeued_local),
            ("requeued_global", c.requeued_global),
        ])
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "paws",
    summary: "global EDF for jobs + priority-aware work stealing of parallel threads (per-core deques)",
    paper: "PAWS §4 (Rules A–F)",
    options: "pull=empty|inversion (Rule D as written, or also on a priority inversion as the authors' kernel), master=global|joining (where the master resumes after a join); weakened controls: steal=top|random|bottom|none (the thread a free core steals: the top of the victim's most urgent deque as the paper; random: priority-unaware, classic randomized work stealing, the victim's oldest thread whatever its deadline; bottom: the newest of its most urgent deque; none: no stealing), fork=local|global (defaults: empty, global, top, local)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// Every reading and weakened variant, one option each (beside the default `paws`): what
/// the property tests walk, so a new option value is covered where it is declared.
pub const VARIANTS: [&str; 7] = [
    "paws:steal=random",
    "paws:steal=bottom",
    "paws:steal=none",
    "paws:fork=global",
    "paws:pull=inversion",
    "paws:master=joining",
    "paws:pull=inversion,master=joining",
];

/// The victim choice draws from the run's seeded generator. Options: the readings
/// `pull=empty|inversion` and `master=global|joining`; the weakened variants (not the paper's
/// scheduler) `steal=top|random|bottom|none` and `fork=local|global`.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    const KNOWN: [&str; 4] = ["steal", "fork", "pull", "master"];
    let steal = match spec.option("steal", &KNOWN)?.as_deref() {
        None | Some("top") => Steal::Top,
        Some("random") => Steal::Random,
        Some("bottom") => Steal::Bottom,
        Some("none") => Steal::Never,
        Some(x) => {
            return Err(format!(
                "paws: steal={x}: expected top, random, bottom or none"
            ))
        }
    };
    let fork_global = match spec.option("fork", &KNOWN)?.as_deref() {
        None | Some("local") => false,
        Some("global") => true,
        Some(x) => return Err(format!("paws: fork={x}: expected local or global")),
    };
    let pull = match spec.option("pull", &KNOWN)?.as_deref() {
        None | Some("empty") => Pull::Empty,
        Some("inversion") => Pull::Inversion,
        Some(x) => return Err(format!("paws: pull={x}: expected empty or inversion")),
    };
    let master = match spec.option("master", &KNOWN)?.as_deref() {
        None | Some("global") => Master::Global,
        Some("joining") => Master::Joining,
        Some(x) => return Err(format!("paws: master={x}: expected global or joining")),
    };
    let rng = ctx.rng().clone();
    Ok(Box::new(Paws::with(
        ctx.cpus(),
        rng,
        Options {
            steal,
            fork_global,
            pull,
            master,
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_takes_the_bottom_and_a_stealer_the_top_of_the_most_urgent_deque() {
        let mut q = LocalQueue::default();
        for (e, d) in [(1, 50), (2, 50), (3, 50), (7, 20), (8, 20), (9, 90)] {
            q.push_bottom(e, d);
        }
        assert_eq!(q.len(), 6);
        assert_eq!(q.pop_bottom(), Some(8)); // deadline 20: bottom
        assert_eq!(q.steal_top(), Some(7)); // deadline 20: top; the deque empties
        assert_eq!(q.steal_top(), Some(1)); // now deadline 50: top (oldest)
        assert_eq!(q.pop_bottom(), Some(3));
        assert!(q.remove(2));
        assert!(!q.remove(2));
        assert_eq!(q.pop_bottom(), Some(9));
        assert!(q.is_empty() && q.pop_bottom().is_none() && q.steal_top().is_none());
        // Emptied deques are kept for reuse.
        assert_eq!(q.spare.len(), 3);
        q.push_bottom(4, 10);
        assert_eq!(q.spare.len(), 2);
    }

    /// The two stealers on one queue: deque(20) = [7 8] pushed after deque(50) = [1 2 3].
    /// The priority-aware stealer takes 7, the top of the most urgent deque; the
    /// priority-unaware one takes 1, pushed first, although its deadline is later.
    #[test]
    fn the_priority_unaware_stealer_takes_the_oldest_thread_whatever_its_deadline() {
        let mut q = LocalQueue::default();
        let mut stamp = [0u64; 10];
        for (k, (e, d)) in [(1, 50), (2, 50), (3, 50), (7, 20), (8, 20)]
            .into_iter()
            .enumerate()
        {
            stamp[e as usize] = k as u64;
            q.push_bottom(e, d);
        }
        let mut aware = q.clone();
        assert_eq!(aware.steal_top(), Some(7));
        assert_eq!(q.steal_oldest(|e| stamp[e as usize]), Some(1));
        assert_eq!(q.steal_oldest(|e| stamp[e as usize]), Some(2));
        // A thread pushed again (a preempted local thread, Rule F) is the newest.
        stamp[3] = 9;
        assert!(q.remove(3));
        q.push_bottom(3, 50);
        let at = |e: EntityId| stamp[e as usize];
        assert_eq!(q.steal_oldest(at), Some(7));
        assert_eq!(q.steal_oldest(at), Some(8));
        assert_eq!(q.steal_oldest(at), Some(3));
        assert!(q.is_empty() && q.steal_oldest(at).is_none());
    }

    #[test]
    fn the_readings_and_weakened_variants_parse_and_bad_values_are_refused() {
        let ts = rtsched_model::parse_taskset(
            "platform: {cpus: 2}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4], 2]}\n",
            rtsched_model::Format::Yaml,
            "t.yaml",
        )
        .unwrap();
        let build = |s: &str| build(&SchedulerSpec::split(s), &mut BuildCtx::new(&ts));
        // A variant's name is its spec (options in the order steal, fork, pull, master).
        for v in VARIANTS {
            assert_eq!(build(v).unwrap().name(), v);
        }
        assert_eq!(build("paws:steal=top,fork=local").unwrap().name(), "paws");
        for ok in [
            "paws",
            "paws:steal=top",
            "paws:steal=random",
            "paws:steal=bottom",
            "paws:steal=none",
            "paws:fork=global",
            "paws:steal=none,fork=local",
            "paws:pull=empty",
            "paws:pull=inversion",
            "paws:master=global",
            "paws:master=joining",
            "paws:pull=inversion,master=joining",
        ]
        .into_iter()
        .chain(VARIANTS)
        {
            assert!(build(ok).is_ok(), "{ok}");
        }
        for (bad, says) in [
            (
                "paws:steal=left",
                "steal=left: expected top, random, bottom or none",
            ),
            ("paws:fork=far", "fork=far"),
            (
                "paws:pull=always",
                "paws: pull=always: expected empty or inversion",
            ),
            (
                "paws:master=forking",
                "paws: master=forking: expected global or joining",
            ),
            (
                "paws:victim=first",
                "no option 'victim' (known: steal, fork, pull, master)",
            ),
        ] {
            let e = build(bad).err().expect(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
