//! `dist`: global scheduling on distributed run queues with push and pull, as Linux's
//! `SCHED_DEADLINE` and `SCHED_FIFO` classes implement it (gedf-heap paper: Lelli, Lipari,
//! Faggioli, Cucinotta 2011), under any job-level order: [`DistDomain`] is `gedf-dist` with
//! EDF's order and `gfp-dist` with fixed priority (see those files for each policy's rules).
//!
//! # Overview
//!
//! The schedule is exactly the one-queue domain's (the m ready entities with the smallest
//! keys run: `gedf`'s, `gfp`'s); what differs is *how* it is reached, and what that costs per
//! operation as m grows (§6, Figs 8–11).
//!
//! 1. **Run queues (§3.1, §4, Fig 2; `runqueue.rs`, `pushable.rs`).** Each CPU has a run
//!    queue: `curr`, the entity it runs, and `pushable`, the entities queued on it but not
//!    running, ordered by key (an array min-heap; one back-index for all queues). Each queue
//!    caches its earliest key (`earliest`, the kernel's `earliest_dl.curr`) and its
//!    next-earliest (`next`, the earliest pushable: `earliest_dl.next`). A queue holding more
//!    than one entity is *overloaded*; the overload mask lists those queues for pulls.
//! 2. **Enqueue / dequeue.** A release is enqueued on the CPU its task last ran on, unless
//!    that CPU's earliest entity is earlier, in which case find-CPU chooses a CPU where it
//!    would run (the kernel's `select_task_rq_dl`). Completions and aborts dequeue. Whenever
//!    a queue's earliest key changes, the push structure is updated (mask bit, heap slot or
//!    cpupri level): that is the extra enqueue/dequeue cost of Figs 10–11.
//! 3. **Pick (§3.2).** A CPU runs the earliest entity of its own queue; an earlier arrival
//!    preempts `curr`, which becomes pushable ("inserted at the head of the queue").
//! 4. **Push (§3.2, §4).** After a pick, while the queue has a pushable entity, find-CPU looks
//!    for a CPU that is free or whose earliest entity is later than it; if there is one, the
//!    entity moves there (dequeue + enqueue) and that CPU re-schedules; else pushing stops.
//! 5. **Pull (§3.2, §4).** A CPU whose `curr` left (completion, abort) scans the overloaded
//!    queues and pulls every pushable entity earlier than its own earliest — except one that
//!    is about to preempt its own queue's `curr`, which stays where it will run (as the kernel).
//! 6. **Find-CPU (the paper's variants, option `push=`; [`super::findcpu`]):** `linear` — the
//!    original loop over every CPU (Fig 3, O(m)); `fmask` — the free-CPU mask first, then the
//!    loop (§4.1, Fig 4); `heap` — the free mask, then the root of the
//!    [`Cpudl`](super::cpudl::Cpudl) max-heap (§5, Figs 5–7, O(1) lookup, O(log m) update);
//!    `cpupri` — the per-priority-level masks of `SCHED_FIFO` (§3.1), only for fixed priority
//!    ([`crate::gfp_dist`]). All variants pick the same CPU: the task's last CPU if free, else
//!    the lowest free CPU, else the CPU whose earliest key is the latest (cpupri: a CPU of the
//!    lowest level, see [`super::findcpu`]), so linear, fmask and heap produce identical
//!    schedules *and* placements.
//! 7. **External occupants** ([`DistDomain::set_ext`]; the `linux` scheduler's class stack).
//!    A CPU may be occupied by something the domain does not schedule, with a key of the same
//!    order: a higher class (for the RT class, a CPU running a deadline task: a key below
//!    every entity's, `cpupri`'s `CPUPRI_HIGHER`) or a deadline server pinned to the CPU (for
//!    the deadline class, the fair server at its scheduling deadline). It counts in the
//!    queue's earliest key, so pushes avoid it unless they are earlier, and pick lets an
//!    entity run there only if it is earlier than the occupant; a `curr` it overtakes becomes
//!    pushable and is pushed away. Without one (every paper policy) nothing changes.
//!
//! # One instant
//!
//! The substrate delivers every event of an instant, then calls `schedule` once. Events only
//! enqueue/dequeue and mark CPUs; `schedule` runs a work list of marked CPUs — pull (if its
//! `curr` left), pick, push — where every CPU that receives a pushed entity is marked again,
//! until the list is empty. It is then the fixed point of global scheduling under the order
//! (global EDF's for `gedf-dist`): no queue can push, i.e. every pushable entity is later than
//! every `curr` and no CPU is free while one waits (debug builds assert it after every
//! `schedule`). Ties: the one total order [`Key`] of the policy's [`Order`] (for EDF: deadline,
//! release, task, job, thread) is used by the queues, find-CPU and the heap, so the set of
//! running jobs is the one-queue domain's at every instant.
//!
//! # Costs
//!
//! [`DistStats`] counts enqueues, dequeues, push and pull calls, entities moved, find-CPU calls
//! and the CPUs / heap slots / mask words they read, and structure-update touches. With option
//! `measure` each enqueue, dequeue, push, pull and find-CPU is timed with `Instant`, except
//! inside another timed operation (a push's time includes its find-CPU, dequeue and enqueue;
//! stand-alone find-CPU figures come from wake-ups). Timings are reported by `Policy::stats`
//! only, with what the timer adds to each (`ns_timer_overhead`, [`timer_overhead_ns`]) to
//! subtract, and without the operations the machine preempted (longer than [`PREEMPTED_NS`],
//! counted in `timed_preempted`); the simulation results never contain wall-clock numbers.
//!
//! Deviations from the kernel: no affinities, no locks (a single-threaded substrate runs the
//! whole protocol; see [`super::cpudl_sync`] for the concurrent heap), no run-queue "linking"
//! delay: a pushed entity runs at once on its new CPU. A periodic task's jobs are separate
//! entities; a new job wakes on the CPU its task last ran on (`task_cpu`), initially
//! `task mod m`.

use super::cpumask::CpuMask;
use super::findcpu::{Finder, PushFind};
use super::key::{Key, Order};
use super::pushable::NONE;
use super::runqueue::RunQueue;
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy};
use rtsched_model::Time;
use std::time::Instant;

/// Operation counts and (with `measure`) wall-clock nanoseconds summed per operation kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DistStats {
    pub enqueues: u64,
    pub dequeues: u64,
    /// Local preemptions by a pick.
    pub picks: u64,
    /// Push operations (one per entity a push tried to place).
    pub push_calls: u64,
    /// Entities moved by pushes.
    pub pushed: u64,
    pub pull_calls: u64,
    /// Entities moved by pulls.
    pub pulled: u64,
    /// Run queues a pull examined.
    pub pull_scanned: u64,
    /// Find-CPU calls (pushes and wake-ups).
    pub find_calls: u64,
    /// CPUs (linear), mask words, heap slots or levels read by find-CPU.
    pub find_touched: u64,
    /// Mask bits, heap slots or levels written by the push structure's updates.
    pub update_touched: u64,
    /// Work-list entries processed by `schedule` (rounds of pull/pick/push on one CPU).
    pub rounds: u64,
    /// Operations timed (those not enclosed by another timed operation) and their ns.
    pub timed_enqueue: u64,
    pub timed_dequeue: u64,
    pub timed_push: u64,
    pub timed_pull: u64,
    pub timed_find: u64,
    pub ns_enqueue: u64,
    pub ns_dequeue: u64,
    pub ns_push: u64,
    pub ns_pull: u64,
    pub ns_find: u64,
    /// Timed operations longer than [`PREEMPTED_NS`]: preempted by the machine's other work,
    /// left out of the means.
    pub timed_preempted: u64,
}

/// A timed operation that took longer was preempted (a shared machine's other work), not slow:
/// the slowest here, a linear push at m = 512, takes about 5 µs; a preemption lasts a time
/// slice (milliseconds). Left out of the means, counted in `timed_preempted`.
pub const PREEMPTED_NS: u64 = 100_000;

impl DistStats {
    /// Counters as (name, value) pairs; with `measure`, also the mean ns per operation.
    pub fn to_pairs(&self, measured: bool) -> Vec<(String, f64)> {
        let mut v = super::counters(&[
            ("enqueue", self.enqueues),
            ("dequeue", self.dequeues),
            ("pick_preemptions", self.picks),
            ("push_calls", self.push_calls),
            ("pushed", self.pushed),
            ("pull_calls", self.pull_calls),
            ("pulled", self.pulled),
            ("pull_scanned_rqs", self.pull_scanned),
            ("find_cpu_calls", self.find_calls),
            ("find_cpu_touched", self.find_touched),
            ("update_touched", self.update_touched),
            ("schedule_rounds", self.rounds),
        ]);
        if measured {
            let per = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 };
            v.push((
                "ns_per_enqueue".into(),
                per(self.ns_enqueue, self.timed_enqueue),
            ));
            v.push((
                "ns_per_dequeue".into(),
                per(self.ns_dequeue, self.timed_dequeue),
            ));
            v.push(("ns_per_push".into(), per(self.ns_push, self.timed_push)));
            v.push(("ns_per_pull".into(), per(self.ns_pull, self.timed_pull)));
            v.push(("ns_per_find_cpu".into(), per(self.ns_find, self.timed_find)));
            v.push(("timed_preempted".into(), self.timed_preempted as f64));
        }
        v
    }
}

/// Global scheduling by distributed run queues under any job-level order (EDF for
/// `gedf-dist`, fixed priority for `gfp-dist`).
pub struct DistDomain<O: Order> {
    label: String,
    order: O,
    m: u32,
    rqs: Vec<RunQueue>,
    overloaded: CpuMask,
    finder: Finder,
    keys: Vec<Key>,
    rq_of: Vec<u32>,
    /// Per entity, its slot in its queue's `pushable` heap.
    pos: Vec<u32>,
    task_cpu: Vec<u32>,
    /// `wake=free`: a woken job whose task's last CPU is busy goes where find-CPU says (a free
    /// CPU first) instead of that CPU (see [`DistDomain::release`]).
    wake_free: bool,
    work: Vec<u32>,
    changed: Vec<u32>,
    measure: bool,
    /// A timed operation is running (see `timed!`).
    timing: bool,
    stats: DistStats,
}

/// Times `$e` into `stats.$ns` / `stats.$n` when measuring, unless another timed operation
/// encloses it (a push's find-CPU, dequeue and enqueue are part of the push's time), so no
/// timer runs inside another and each figure carries exactly one timer's cost. One longer than
/// [`PREEMPTED_NS`] was preempted: counted apart, not in the mean.
macro_rules! timed {
    ($self:ident, $ns:ident, $n:ident, $e:expr) => {{
        if $self.measure && !$self.timing {
            $self.timing = true;
            let t0 = Instant::now();
            let r = $e;
            let ns = t0.elapsed().as_nanos() as u64;
            if ns < PREEMPTED_NS {
                $self.stats.$ns += ns;
                $self.stats.$n += 1;
            } else {
                $self.stats.timed_preempted += 1;
            }
            $self.timing = false;
            r
        } else {
            $e
        }
    }};
}

impl<O: Order> DistDomain<O> {
    /// `levels`: for `PushFind::Cpupri`, the distinct primary keys of the order (any order).
    pub fn new(
        label: impl Into<String>,
        order: O,
        cpus: u32,
        find: PushFind,
        levels: Vec<u64>,
        measure: bool,
    ) -> Self {
        DistDomain {
            label: label.into(),
            order,
            m: cpus,
            rqs: vec![RunQueue::empty(); cpus as usize],
            overloaded: CpuMask::new(cpus),
            finder: Finder::new(find, cpus, levels),
            keys: Vec::with_capacity(64),
            rq_of: Vec::with_capacity(64),
            pos: Vec::with_capacity(64),
            task_cpu: Vec::new(),
            wake_free: false,
            work: Vec::with_capacity(cpus as usize),
            changed: Vec::with_capacity(cpus as usize),
            measure,
            timing: false,
            stats: DistStats::default(),
        }
    }

    pub fn stats(&self) -> &DistStats {
        &self.stats
    }

    /// `wake=free`: not the kernel's placement (a negative control of the paper PAWS's claim
    /// that SCHED_DEADLINE "blindly assigns new jobs to the core where the task was last
    /// executed"): a woken job whose task's last CPU is busy is placed by find-CPU, a free CPU
    /// first, as global EDF places it; push and pull are unchanged.
    pub fn with_wake_free(mut self) -> Self {
        self.wake_free = true;
        self.label.push_str(",wake=free");
        self
    }

    fn mark(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        if !rq.queued {
            rq.queued = true;
            self.work.push(cpu);
        }
    }

    fn mark_changed(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        if !rq.changed {
            rq.changed = true;
            self.changed.push(cpu);
        }
    }

    /// Refresh `cpu`'s cached earliest/next, overload bit and push structure after its
    /// membership changed.
    fn refresh(&mut self, cpu: u32) {
        let rq = &mut self.rqs[cpu as usize];
        let top = rq.pushable.peek().map(|(k, _)| k);
        let mut earliest = match (rq.curr, top) {
            (Some((c, _)), Some(t)) => Some(c.min(t)),
            (Some((c, _)), None) => Some(c),
            (None, t) => t,
        };
        if let Some(x) = rq.ext {
            earliest = Some(earliest.map_or(x, |e| e.min(x)));
        }
        rq.next = top;
        if rq.overloaded() {
            self.overloaded.set(cpu);
        } else {
            self.overloaded.clear(cpu);
        }
        if rq.earliest == earliest {
            return;
        }
        rq.earliest = earliest;
        let touched = self.finder.update(cpu, earliest);
        self.stats.update_touched += touched as u64;
    }

    /// Put `e` on `cpu`'s queue as pushable.
    fn enqueue(&mut self, cpu: u32, e: EntityId, k: Key) {
        timed!(self, ns_enqueue, timed_enqueue, {
            self.rqs[cpu as usize].pushable.push(&mut self.pos, e, k);
            self.rq_of[e as usize] = cpu;
            self.refresh(cpu);
        });
        self.stats.enqueues += 1;
    }

    /// Take pushable `e` off `cpu`'s queue.
    fn dequeue(&mut self, cpu: u32, e: EntityId) {
        timed!(self, ns_dequeue, timed_dequeue, {
            self.rqs[cpu as usize].pushable.remove(&mut self.pos, e);
            self.rq_of[e as usize] = NONE;
            self.refresh(cpu);
        });
        self.stats.dequeues += 1;
    }

    /// A CPU that is free or whose earliest key is later than `k` (see the overview for the
    /// choice among several).
    fn find_cpu(&mut self, k: Key, prefer: u32) -> Option<u32> {
        let prefer = (prefer != NONE).then_some(prefer);
        let (cpu, touched) = timed!(
            self,
            ns_find,
            timed_find,
            self.finder.find(&self.rqs, k, prefer)
        );
        self.stats.find_calls += 1;
        self.stats.find_touched += touched as u64;
        cpu
    }

    /// Local pick: the earliest entity of `cpu`'s queue runs; a preempted `curr` becomes
    /// pushable.
    fn pick(&mut self, cpu: u32) {
        let (rq, pos) = (&mut self.rqs[cpu as usize], &mut self.pos);
        if let Some(x) = rq.ext {
            // The external occupant runs unless an entity of this domain is earlier; a `curr`
            // it overtakes becomes pushable (as a preempted one does).
            let top = rq.pushable.peek().map(|(k, _)| k);
            let best = [rq.curr.map(|c| c.0), top].into_iter().flatten().min();
            if best.is_none_or(|b| x < b) {
                if let Some((ck, ce)) = rq.curr.take() {
                    rq.pushable.push(pos, ce, ck);
                    rq.next = rq.pushable.peek().map(|(k, _)| k);
                    self.stats.picks += 1;
                    self.mark_changed(cpu);
                }
                return;
            }
        }
        let Some((k, e)) = rq.pushable.peek() else {
            return;
        };
        if rq.curr.is_some_and(|(ck, _)| ck < k) {
            return;
        }
        rq.pushable.pop(pos);
        if let Some((ck, ce)) = rq.curr {
            rq.pushable.push(pos, ce, ck);
            self.stats.picks += 1;
        }
        rq.curr = Some((k, e));
        rq.next = rq.pushable.peek().map(|(k, _)| k);
        self.mark_changed(cpu);
    }

    /// Push (§3.2): move `cpu`'s pushable entities, earliest first, to CPUs where they run,
    /// until find-CPU finds none.
    fn push(&mut self, cpu: u32) {
        while let Some(k) = self.rqs[cpu as usize].next {
            let moved = timed!(self, ns_push, timed_push, {
                let e = self.rqs[cpu as usize]
                    .pushable
                    .peek()
                    .expect("next is cached")
                    .1;
                let prefer = self.task_cpu[self.keys[e as usize].task as usize];
                match self.find_cpu(k, prefer) {
                    Some(t) => {
                        debug_assert_ne!(t, cpu);
                        self.dequeue(cpu, e);
                        self.enqueue(t, e, k);
                        self.mark(t);
                        true
                    }
                    None => false,
                }
            });
            self.stats.push_calls += 1;
            if !moved {
                break;
            }
            self.stats.pushed += 1;
        }
    }

    /// Pull (§3.2): `cpu` takes every pushable entity of an overloaded queue that is earlier
    /// than its own earliest, unless that entity will preempt its own queue's `curr`.
    fn pull(&mut self, cpu: u32) {
        timed!(self, ns_pull, timed_pull, {
            if !self.overloaded.is_empty() {
                for src in 0..self.m {
                    if src == cpu || !self.overloaded.test(src) {
                        continue;
                    }
                    self.stats.pull_scanned += 1;
                    let s = &self.rqs[src as usize];
                    let Some((k, e)) = s.pushable.peek() else {
                        continue;
                    };
                    // It is about to run where it is.
                    let runs_there =
                        s.curr.is_none_or(|(ck, _)| k < ck) && s.ext.is_none_or(|x| k < x);
                    if runs_there || self.rqs[cpu as usize].earliest.is_some_and(|mine| mine < k) {
                        continue;
                    }
                    self.dequeue(src, e);
                    self.enqueue(cpu, e, k);
                    self.stats.pulled += 1;
                }
            }
        });
        self.stats.pull_calls += 1;
    }

    fn ensure(&mut self, e: &EntityInfo) {
        let i = e.id as usize;
        if self.keys.len() <= i {
            self.keys.resize(i + 1, Key::default());
            self.rq_of.resize(i + 1, NONE);
            self.pos.resize(i + 1, NONE);
        }
        let t = e.task as usize;
        if self.task_cpu.len() <= t {
            let m = self.m;
            let old = self.task_cpu.len();
            self.task_cpu.resize(t + 1, 0);
            for (j, c) in self.task_cpu.iter_mut().enumerate().skip(old) {
                *c = j as u32 % m;
            }
        }
    }

    pub fn release(&mut self, e: &EntityInfo) {
        let k = self.order.key(e);
        self.release_key(e, k);
    }

    /// Enqueue the ready entity `e` under key `k` instead of its order's (a policy whose keys
    /// change while an entity lives: the CBS's scheduling deadline, a round-robin requeue).
    /// Keys of distinct entities must differ, as the order's do.
    pub fn release_key(&mut self, e: &EntityInfo, k: Key) {
        self.ensure(e);
        self.keys[e.id as usize] = k;
        // Wake-up (select_task_rq): the task's CPU, unless its earliest is earlier than us
        // (or, `wake=free`, unless it is busy at all).
        let home = self.task_cpu[e.task as usize];
        let cpu = match self.rqs[home as usize].earliest {
            Some(h) if h < k || self.wake_free => self.find_cpu(k, home).unwrap_or(home),
            _ => home,
        };
        self.enqueue(cpu, e.id, k);
        self.mark(cpu);
    }

    /// `curr` of `cpu` left (completion, abort).
    fn curr_left(&mut self, cpu: u32, e: EntityId) {
        timed!(self, ns_dequeue, timed_dequeue, {
            let rq = &mut self.rqs[cpu as usize];
            debug_assert_eq!(rq.curr.map(|c| c.1), Some(e));
            rq.curr = None;
            rq.needs_pull = true;
            self.rq_of[e as usize] = NONE;
            self.refresh(cpu);
        });
        self.stats.dequeues += 1;
        self.mark_changed(cpu);
        self.mark(cpu);
    }

    pub fn complete(&mut self, e: EntityId, cpu: u32) {
        self.curr_left(cpu, e);
    }

    pub fn aborted(&mut self, e: EntityId) {
        let cpu = self.rq_of[e as usize];
        if cpu == NONE {
            return;
        }
        if self.rqs[cpu as usize].curr.is_some_and(|(_, x)| x == e) {
            self.curr_left(cpu, e);
        } else {
            self.dequeue(cpu, e);
            self.mark(cpu);
        }
    }

    pub fn schedule(&mut self, _now: Time, d: &mut Dispatch) {
        self.balance();
        self.commit(|cpu, now_runs| {
            if d.current(cpu) != now_runs {
                d.assign(cpu, now_runs);
            }
        });
    }

    /// `cpu` is occupied (`Some(k)`) or no longer (`None`) by something this domain does not
    /// schedule, competing with its entities there under key `k`: the kernel's higher class on
    /// the CPU (a key below every entity's: nothing of this domain runs or is pushed there,
    /// and what ran is pushed away, as `cpupri`'s `CPUPRI_HIGHER` keeps RT tasks off a CPU
    /// running a deadline task) or a deadline server pinned to it (its deadline: EDF decides
    /// between it and the entities). Takes effect at the next [`DistDomain::balance`].
    pub fn set_ext(&mut self, cpu: u32, k: Option<Key>) {
        let rq = &mut self.rqs[cpu as usize];
        if rq.ext == k {
            return;
        }
        // Room made (gone, or later): entities elsewhere may now run here.
        if k.is_none_or(|new| rq.ext.is_some_and(|old| new > old)) {
            rq.needs_pull = true;
        }
        rq.ext = k;
        self.refresh(cpu);
        self.mark(cpu);
    }

    /// What `cpu` runs from this domain after the last [`DistDomain::balance`].
    #[inline]
    pub fn curr(&self, cpu: u32) -> Option<EntityId> {
        self.rqs[cpu as usize].curr.map(|c| c.1)
    }

    /// The key `e` is queued or runs under, if it is in the domain.
    #[inline]
    pub fn key_of(&self, e: EntityId) -> Option<Key> {
        let c = *self.rq_of.get(e as usize)?;
        (c != NONE).then(|| self.keys[e as usize])
    }

    /// Take `e` out of the domain, running or queued (an abort; a policy's own dequeue, as a
    /// throttle). Nothing if it is not in it.
    pub fn remove(&mut self, e: EntityId) {
        DistDomain::aborted(self, e)
    }

    /// The work list of one instant: pull (where `curr` left), pick, push, until no CPU is
    /// marked (see the overview "One instant"). [`DistDomain::commit`] then reports what
    /// changed; `schedule` is the two.
    pub fn balance(&mut self) {
        // FIFO over the work list; CPUs marked while it runs are appended.
        let mut i = 0;
        while i < self.work.len() {
            let cpu = self.work[i];
            i += 1;
            self.rqs[cpu as usize].queued = false;
            self.stats.rounds += 1;
            if std::mem::take(&mut self.rqs[cpu as usize].needs_pull) {
                self.pull(cpu);
            }
            self.pick(cpu);
            self.push(cpu);
        }
        self.work.clear();
    }

    /// Report each CPU whose `curr` changed in the last [`DistDomain::balance`], with what it
    /// runs now (`f(cpu, curr)`), in the order they changed; then (debug builds) assert the
    /// fixed point.
    #[inline]
    pub fn commit(&mut self, mut f: impl FnMut(u32, Option<EntityId>)) {
        for j in 0..self.changed.len() {
            let cpu = self.changed[j];
            let rq = &mut self.rqs[cpu as usize];
            rq.changed = false;
            let now_runs = rq.curr.map(|c| c.1);
            if let Some(e) = now_runs {
                self.task_cpu[self.keys[e as usize].task as usize] = cpu;
            }
            f(cpu, now_runs);
        }
        self.changed.clear();
        #[cfg(debug_assertions)]
        {
            if let Err(msg) = self.check() {
                panic!(
                    "{}: not at the global fixed point after schedule: {msg}",
                    self.label
                );
            }
        }
    }

    /// The fixed point of global scheduling and the caches' consistency (O(m + n)).
    pub fn check(&self) -> Result<(), String> {
        let mut max_curr: Option<Key> = None;
        let mut any_free = false;
        let mut min_pushable: Option<Key> = None;
        for (c, rq) in self.rqs.iter().enumerate() {
            let top = rq.pushable.peek().map(|x| x.0);
            // What occupies the CPU: its curr, or the external occupant (the earlier of two).
            let occupant = [rq.curr.map(|x| x.0), rq.ext].into_iter().flatten().min();
            if let (Some((k, _)), Some(x)) = (rq.curr, rq.ext) {
                if x < k {
                    return Err(format!(
                        "cpu {c}: curr runs although the external occupant is earlier"
                    ));
                }
            }
            match occupant {
                Some(k) => max_curr = max_curr.max(Some(k)),
                None => any_free = true,
            }
            if let Some(t) = top {
                min_pushable = Some(min_pushable.map_or(t, |m: Key| m.min(t)));
                if occupant.is_none_or(|k| t < k) {
                    return Err(format!("cpu {c}: a pushable entity is earlier than curr"));
                }
            }
            let earliest = [rq.curr.map(|x| x.0), top, rq.ext]
                .into_iter()
                .flatten()
                .min();
            if rq.earliest != earliest || rq.next != top {
                return Err(format!("cpu {c}: stale earliest/next cache"));
            }
            if self.overloaded.test(c as u32) != rq.overloaded() {
                return Err(format!("cpu {c}: overload bit wrong"));
            }
        }
        if let Some(p) = min_pushable {
            if any_free {
                return Err("a CPU idles while an entity waits".into());
            }
            if max_curr.is_some_and(|mc| mc > p) {
                return Err("a waiting entity is earlier than a running one".into());
            }
        }
        self.finder.check(&self.rqs)
    }
}

impl<O: Order> Policy for DistDomain<O> {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        DistDomain::release(self, e)
    }
    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        DistDomain::complete(self, e, cpu)
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        DistDomain::aborted(self, e)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch) {
        DistDomain::schedule(self, now, d)
    }
    fn stats(&self) -> Vec<(String, f64)> {
        let mut v = self.stats.to_pairs(self.measure);
        if self.measure {
            v.push(("ns_timer_overhead".into(), timer_overhead_ns()));
        }
        v
    }
}

/// What the timer adds to every timed operation, to subtract from the ns figures: the mean
/// reading of an empty timed region (`t0 = Instant::now(); t0.elapsed()`, as `timed!` takes
/// it), about one clock read — not the wall time of a loop of such pairs, which counts two
/// reads and the loop and made cheap operations come out below zero. The least mean of 20
/// batches of 500, so that a batch the machine preempted (a shared machine's other work) does
/// not inflate it.
pub fn timer_overhead_ns() -> f64 {
    let (batches, n) = (20, 500u32);
    (0..batches)
        .map(|_| {
            let mut acc = 0u128;
            for _ in 0..n {
                let t0 = Instant::now();
                acc += std::hint::black_box(t0).elapsed().as_nanos();
            }
            acc as f64 / f64::from(n)
        })
        .fold(f64::INFINITY, f64::min)
}
