//! The deadline class of the `linux` scheduler (`kernel/sched/deadline.c`): global EDF on
//! per-CPU run queues with push and pull and the `cpudl` heap — the machinery of
//! `gedf-dist:heap` ([`DistDomain`], reused, keyed here by each entity's *scheduling*
//! deadline) — with one [`Cbs`] per SCHED_DEADLINE thread driving that deadline.
//!
//! A *lane* is one SCHED_DEADLINE thread: a sequential task, or one thread lane of a parallel
//! task (thread k of every region; a DAG node). Its jobs' entities come and go; its CBS stays.
//! What each rule follows:
//! 1. **Wake-up** (`enqueue_task_dl(ENQUEUE_WAKEUP)` → `update_dl_entity`, [`Cbs::wakeup`]):
//!    when a lane's next entity arrives after the lane slept. A lane whose entity completes at
//!    the instant its next one is released never slept (rt-app's timer in the past: the thread
//!    does not block), so its CBS goes on unchanged. A throttled lane's entity waits for the
//!    replenishment; any other is enqueued with key (scheduling deadline, release, task, job,
//!    thread) — `gedf-dist`'s EDF order with the CBS deadline in place of the job's.
//! 2. **Charging** (`update_curr_dl`): a lane is charged the time it ran (its CPU's wall time
//!    while it was `curr`) whenever it stops — preempted, completed, blocked, aborted — and at
//!    the instant its runtime runs out ([`Cbs::exhaust_at`], a timer): exactly, as the kernel
//!    charges a task that enters the kernel (rtsched's workers read their CPU clock; see
//!    `cbs.rs` on tick-late charging, not modelled). A throttled lane leaves the domain
//!    (`dl_runtime_exceeded` → `dequeue_dl_entity`; the CPU pulls or runs a lower class) and
//!    returns at its replenishment (`dl_task_timer` → `replenish_dl_entity`) with its new
//!    deadline; one replenished at once (`start_dl_timer` refused) is re-keyed in place. A
//!    lane throttled as its entity leaves (a job that ran out its runtime as it completed)
//!    asks the substrate for no wake-up: nothing reads its CBS before its next entity, whose
//!    release replenishes it as of the timer's instant first, or before the run's end, which
//!    does the same ([`DlClass::finish`]) — the kernel's timer, one event fewer per job.
//! 3. **Blocking** (`dequeue_task_dl(DEQUEUE_SLEEP)` → `task_non_contending`): at the end of
//!    the instant its entity left, a lane not given another sleeps ([`Cbs::block`], read by
//!    GRUB alone: skipped without reclaiming).
//! 4. **GRUB** (`linux:reclaim`, `SCHED_FLAG_RECLAIM` on every deadline task; `grub_reclaim`):
//!    each CPU keeps the bandwidths of [`GrubRq`] — `this_bw` of the lanes whose bandwidth it
//!    holds (the fair server's included), `running_bw` of those active (woken, or blocked
//!    before their 0-lag time: `inactive_task_timer`), the root domain's `extra_bw`; a lane's
//!    bandwidth moves with it when it runs on another CPU (`migrate_task_rq_dl`), and a running
//!    lane is charged and re-timed whenever its CPU's bandwidths change.
//!
//! Departures: the kernel moves a woken task's bandwidth to its new CPU when it is enqueued
//! (`select_task_rq_dl`), here when it first runs there; a stopped lane's wall time is its CPU
//! time (the simulator charges overheads to the entity on the CPU, as the kernel's
//! `sum_exec_runtime` does).

use super::cbs::{Cbs, Charged, Inactive};
use super::grub::GrubRq;
use super::timers::Timers;
use crate::common::dist::DistDomain;
use crate::common::findcpu::PushFind;
use crate::common::key::Key;
use crate::gedf::EdfOrder;
use crate::policy::{EntityId, EntityInfo};
use rtsched_model::Time;

pub(super) const NONE: u32 = u32::MAX;

/// One SCHED_DEADLINE thread (see the overview).
#[derive(Clone, Debug)]
pub(super) struct Lane {
    pub(super) task: u32,
    pub(super) cbs: Cbs,
    /// Its entity now (a job, or a job's thread of this lane); NONE between jobs.
    ent: EntityId,
    /// The CPU it runs on (NONE: not running) and since when it is not charged.
    cpu: u32,
    since: Time,
    /// Its entity left at `left_at` and no other came since: it sleeps at the instant's end.
    left_at: Time,
    sleep_pending: bool,
    /// GRUB: the CPU whose bandwidths hold it, and whether it counts in its `running_bw`.
    rq: u32,
    active: bool,
}

impl Lane {
    pub(super) fn new(task: u32, cbs: Cbs, rq: u32) -> Lane {
        Lane {
            task,
            cbs,
            ent: NONE,
            cpu: NONE,
            since: 0,
            left_at: 0,
            sleep_pending: false,
            rq,
            active: false,
        }
    }
}

/// The deadline class: the domain, the lanes, and (with reclaiming) each CPU's bandwidths.
pub(super) struct DlClass {
    pub(super) dom: DistDomain<EdfOrder>,
    pub(super) lanes: Vec<Lane>,
    /// Per task: its first lane and its number of lanes (0: not a deadline task).
    first: Vec<(u32, u32)>,
    /// Per entity id: its lane and its info (for re-keying).
    lane_of: Vec<u32>,
    infos: Vec<EntityInfo>,
    /// Per CPU: the lane it runs (NONE).
    on_cpu: Vec<u32>,
    grub: Option<Vec<GrubRq>>,
    /// Scratch (no allocation once grown): lanes whose entity left this instant; the CPUs the
    /// domain changed.
    pending_sleep: Vec<u32>,
    changed: Vec<(u32, Option<EntityId>)>,
    /// Timer owners: lane `l`'s CBS timer is `l`, its inactive timer `inactive_base + l`.
    inactive_base: u32,
}

impl DlClass {
    /// `lanes` in task order; `first[t]` = (first lane, lanes) of task `t`; `grub`: each CPU's
    /// bandwidths when the lanes reclaim (their `this_bw` already counting the lanes' `rq`).
    pub(super) fn new(
        cpus: u32,
        lanes: Vec<Lane>,
        first: Vec<(u32, u32)>,
        grub: Option<Vec<GrubRq>>,
        inactive_base: u32,
    ) -> Self {
        let n = lanes.len();
        DlClass {
            dom: DistDomain::new(
                "linux:dl",
                EdfOrder,
                cpus,
                PushFind::Heap,
                Vec::new(),
                false,
            ),
            lanes,
            first,
            lane_of: Vec::with_capacity(64),
            infos: Vec::with_capacity(64),
            on_cpu: vec![NONE; cpus as usize],
            grub,
            pending_sleep: Vec::with_capacity(n),
            changed: Vec::with_capacity(cpus as usize),
            inactive_base,
        }
    }

    /// The lane running on `cpu`'s entity, if any.
    #[inline]
    pub(super) fn curr(&self, cpu: u32) -> Option<EntityId> {
        self.dom.curr(cpu)
    }

    #[inline]
    fn key(&self, l: u32) -> Key {
        let lane = &self.lanes[l as usize];
        let e = &self.infos[lane.ent as usize];
        Key::new(lane.cbs.deadline(), e.release, e)
    }

    fn enqueue(&mut self, l: u32) {
        let k = self.key(l);
        let e = self.infos[self.lanes[l as usize].ent as usize];
        self.dom.release_key(&e, k);
    }

    /// Rule 1: `e` (of a deadline task) is ready at `now`.
    pub(super) fn release(&mut self, now: Time, e: &EntityInfo, timers: &mut Timers) {
        let i = e.id as usize;
        if self.lane_of.len() <= i {
            self.lane_of.resize(i + 1, NONE);
            self.infos.resize(i + 1, *e);
        }
        let (first, n) = self.first[e.task as usize];
        let l = first + e.thread.min(n - 1);
        self.lane_of[i] = l;
        self.infos[i] = *e;
        let lane = &mut self.lanes[l as usize];
        debug_assert_eq!(lane.ent, NONE, "a lane runs one entity at a time");
        lane.ent = e.id;
        if let Some(at) = lane.cbs.replenish_at().filter(|&t| t <= now) {
            // Its replenishment is due: at this instant too (a periodic task whose job used
            // its runtime is replenished at the start of its next period, the instant its next
            // job is released), or earlier, unasked (`after_charge`): it comes first, as of
            // its own instant.
            timers.cancel(l);
            lane.cbs.replenish(at);
        }
        if lane.sleep_pending && lane.left_at == now {
            // Its previous entity left at this very instant: it never slept.
            lane.sleep_pending = false;
        } else {
            lane.sleep_pending = false;
            let woken = lane.cbs.wakeup(now);
            if self.grub.is_some() {
                if woken.add_running_bw {
                    let (rq, bw) = (lane.rq, lane.cbs.dl_bw());
                    lane.active = true;
                    self.grub_mut(rq).add_running_bw(bw);
                    self.regrub(now, rq, timers);
                } else {
                    timers.cancel(self.inactive_base + l);
                }
            }
        }
        let cbs = &self.lanes[l as usize].cbs;
        match cbs.replenish_at() {
            // Throttled (still, a throttle left unasked by `after_charge` whether or not it
            // slept since, or by the wake-up): its entity waits for the timer, armed now.
            Some(until) if cbs.throttled() => timers.set(l, until),
            _ => self.enqueue(l),
        }
    }

    /// Rules 2, 3: `e` left (completed or blocked on `cpu`, or aborted) at `now`.
    pub(super) fn left(&mut self, now: Time, e: EntityId, cpu: Option<u32>, timers: &mut Timers) {
        let l = self.lane_of[e as usize];
        match cpu {
            Some(c) if self.dom.curr(c) == Some(e) => self.dom.complete(e, c),
            _ => self.dom.remove(e),
        }
        let lane = &mut self.lanes[l as usize];
        lane.ent = NONE;
        lane.left_at = now;
        lane.sleep_pending = true;
        self.pending_sleep.push(l);
        if lane.cpu != NONE {
            let r = self.charge(now, l);
            self.stop(l, timers);
            self.after_charge(now, l, r, timers);
        }
    }

    /// The instant's events are in: lanes whose entity left and got no other sleep (rule 3).
    pub(super) fn settle_sleeps(&mut self, now: Time, timers: &mut Timers) {
        for i in 0..self.pending_sleep.len() {
            let l = self.pending_sleep[i];
            let lane = &mut self.lanes[l as usize];
            if !lane.sleep_pending || lane.ent != NONE {
                continue;
            }
            lane.sleep_pending = false;
            if self.grub.is_none() {
                // Only GRUB reads what blocking decides (the 0-lag time, when the bandwidth
                // leaves `running_bw`): without reclaiming, nothing to do (and no 128-bit
                // division per job).
                continue;
            }
            match lane.cbs.block(now) {
                Inactive::Now => self.inactive(now, l, timers),
                Inactive::At(z) => timers.set(self.inactive_base + l, z),
            }
        }
        self.pending_sleep.clear();
    }

    /// GRUB: lane `l`'s bandwidth leaves its CPU's `running_bw` (0-lag time reached).
    fn inactive(&mut self, now: Time, l: u32, timers: &mut Timers) {
        let lane = &mut self.lanes[l as usize];
        if lane.active {
            lane.active = false;
            let (rq, bw) = (lane.rq, lane.cbs.dl_bw());
            self.grub_mut(rq).sub_running_bw(bw);
            self.regrub(now, rq, timers);
        }
    }

    /// Timer `owner` (one of this class's) fired at `now`: a running lane's runtime ran out,
    /// a throttled one's replenishment, or a blocked one's 0-lag time.
    pub(super) fn timer(&mut self, now: Time, owner: u32, timers: &mut Timers) {
        if owner >= self.inactive_base {
            let l = owner - self.inactive_base;
            if self.lanes[l as usize].cbs.inactive_timer() {
                self.inactive(now, l, timers);
            }
            return;
        }
        let l = owner;
        if self.lanes[l as usize].cpu != NONE {
            let r = self.charge(now, l);
            self.after_charge(now, l, r, timers);
            if self.lanes[l as usize].cpu != NONE {
                self.arm(now, l, timers);
            }
        } else if self.lanes[l as usize].cbs.throttled() {
            self.lanes[l as usize].cbs.replenish(now);
            if self.lanes[l as usize].ent != NONE {
                self.enqueue(l);
            }
        }
    }

    /// Charge running lane `l` for the time since its mark (rule 2).
    fn charge(&mut self, now: Time, l: u32) -> Charged {
        let lane = &mut self.lanes[l as usize];
        let ran = now - lane.since;
        lane.since = now;
        let rq = self.grub.as_ref().map(|g| &g[lane.cpu as usize]);
        lane.cbs.charge(now, ran, rq)
    }

    /// What a charge decided: a throttled lane leaves the domain until its replenishment (at
    /// once if that instant is now); a replenished one is re-keyed.
    fn after_charge(&mut self, now: Time, l: u32, r: Charged, timers: &mut Timers) {
        match r {
            Charged::Running => {}
            Charged::Throttled { until } if until > now => {
                self.stop(l, timers);
                let e = self.lanes[l as usize].ent;
                if e != NONE {
                    timers.set(l, until);
                    self.dom.remove(e);
                }
                // A lane with no entity (its job left as it ran out) waits for no wake-up:
                // nothing can observe its CBS before its next entity, whose `release`
                // replenishes it as of `until` first (or arms the timer, if `until` is still
                // ahead), or the run's end (`finish`). One engine event and two timer-heap
                // operations fewer per job of a task whose job runs out its runtime.
            }
            Charged::Throttled { .. } => {
                self.lanes[l as usize].cbs.replenish(now);
                self.requeue(l, timers);
            }
            Charged::ReplenishedAtOnce => self.requeue(l, timers),
        }
    }

    /// Re-key lane `l`'s entity under its new deadline (it restarts where it is picked).
    fn requeue(&mut self, l: u32, timers: &mut Timers) {
        let e = self.lanes[l as usize].ent;
        if e == NONE {
            return;
        }
        self.stop(l, timers);
        self.dom.remove(e);
        self.enqueue(l);
    }

    /// Lane `l` no longer runs (charged already): forget its CPU and its exhaustion timer.
    fn stop(&mut self, l: u32, timers: &mut Timers) {
        let lane = &mut self.lanes[l as usize];
        if lane.cpu != NONE {
            if self.on_cpu[lane.cpu as usize] == l {
                self.on_cpu[lane.cpu as usize] = NONE;
            }
            lane.cpu = NONE;
            timers.cancel(l);
        }
    }

    /// Arm running lane `l`'s exhaustion timer ([`Cbs::exhaust_at`]).
    fn arm(&mut self, now: Time, l: u32, timers: &mut Timers) {
        let lane = &self.lanes[l as usize];
        let rq = self.grub.as_ref().map(|g| &g[lane.cpu as usize]);
        match lane.cbs.exhaust_at(now, rq) {
            Some(t) => timers.set(l, t),
            None => timers.cancel(l),
        }
    }

    /// Lane `l` starts running on `cpu` at `now`; its bandwidth follows it (GRUB).
    fn start(&mut self, now: Time, l: u32, cpu: u32, timers: &mut Timers) {
        self.on_cpu[cpu as usize] = l;
        let lane = &mut self.lanes[l as usize];
        lane.cpu = cpu;
        lane.since = now;
        let (old, bw, active) = (lane.rq, lane.cbs.dl_bw(), lane.active);
        if self.grub.is_some() && old != cpu {
            self.lanes[l as usize].rq = cpu;
            let g = self.grub.as_mut().expect("reclaiming");
            g[old as usize].sub_rq_bw(bw);
            g[cpu as usize].add_rq_bw(bw);
            if active {
                g[old as usize].sub_running_bw(bw);
                g[cpu as usize].add_running_bw(bw);
            }
            self.regrub(now, old, timers);
        }
        self.arm(now, l, timers);
    }

    /// The domain's work list, then the lanes that stopped and started: `dirty` gets every CPU
    /// whose deadline entity changed. A lane throttled at the instant it stops leaves the
    /// domain, which then balances again.
    pub(super) fn balance(&mut self, now: Time, timers: &mut Timers, dirty: &mut Vec<u32>) {
        loop {
            self.dom.balance();
            self.changed.clear();
            let changed = &mut self.changed;
            self.dom.commit(|c, e| changed.push((c, e)));
            if self.changed.is_empty() {
                return;
            }
            for i in 0..self.changed.len() {
                let (c, e) = self.changed[i];
                dirty.push(c);
                let l = self.on_cpu[c as usize];
                if l != NONE && Some(self.lanes[l as usize].ent) != e {
                    let r = self.charge(now, l);
                    self.stop(l, timers);
                    self.after_charge(now, l, r, timers);
                }
            }
            for i in 0..self.changed.len() {
                let (c, e) = self.changed[i];
                if let Some(e) = e {
                    let l = self.lane_of[e as usize];
                    if self.on_cpu[c as usize] != l && self.dom.curr(c) == Some(e) {
                        self.start(now, l, c, timers);
                    }
                }
            }
        }
    }

    /// GRUB: `cpu`'s bandwidths changed: its running reclaiming lane is charged at the old
    /// rate and its exhaustion re-timed at the new one.
    fn regrub(&mut self, now: Time, cpu: u32, timers: &mut Timers) {
        let l = self.on_cpu[cpu as usize];
        if l == NONE || self.grub.is_none() {
            return;
        }
        let r = self.charge(now, l);
        self.after_charge(now, l, r, timers);
        if self.lanes[l as usize].cpu != NONE {
            self.arm(now, l, timers);
        }
    }

    fn grub_mut(&mut self, cpu: u32) -> &mut GrubRq {
        &mut self.grub.as_mut().expect("reclaiming")[cpu as usize]
    }

    /// GRUB: the fair server of `cpu` becomes active (`true`) or not: its bandwidth enters or
    /// leaves the CPU's `running_bw`.
    pub(super) fn server_active(
        &mut self,
        now: Time,
        cpu: u32,
        bw: u64,
        on: bool,
        timers: &mut Timers,
    ) {
        if self.grub.is_none() {
            return;
        }
        if on {
            self.grub_mut(cpu).add_running_bw(bw);
        } else {
            self.grub_mut(cpu).sub_running_bw(bw);
        }
        self.regrub(now, cpu, timers);
    }

    /// The run ended at `end`: the replenishments left unasked (`after_charge`) that a timer
    /// would have made by then.
    pub(super) fn finish(&mut self, end: Time) {
        for lane in &mut self.lanes {
            if let Some(at) = lane.cbs.replenish_at().filter(|&t| t <= end) {
                if lane.ent == NONE {
                    lane.cbs.replenish(at);
                }
            }
        }
    }

    /// Per task: throttles and replenishments, summed over its lanes.
    pub(super) fn counters(&self, task: u32) -> (u64, u64) {
        let (first, n) = self.first[task as usize];
        self.lanes[first as usize..(first + n) as usize]
            .iter()
            .fold((0, 0), |(t, r), l| {
                let c = l.cbs.counters();
                (t + c.throttles, r + c.replenishments)
            })
    }
}
