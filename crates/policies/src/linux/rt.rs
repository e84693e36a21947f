//! The RT class of the `linux` scheduler (`kernel/sched/rt.c`): SCHED_FIFO and SCHED_RR as
//! global fixed priority on per-CPU run queues with push and pull and `cpupri` — the machinery
//! of `gfp-dist` ([`DistDomain`], reused) — below the deadline class and above the fair one.
//!
//! 1. **Order** (`pick_next_rt_entity`, `enqueue_rt_entity`): Linux priority 1..99, larger
//!    first; within a priority, queue order — a woken task goes to the tail (key: the instant
//!    it was enqueued), a preempted one keeps its place (its key is kept).
//! 2. **Higher classes** (`cpupri`'s `CPUPRI_HIGHER`, `pick_next_task`'s class order): a CPU
//!    running a deadline entity or the fair server is occupied for this class (an external
//!    occupant below every key, [`DistDomain::set_ext`]): its RT entity is pushed to a CPU
//!    running something less urgent, or waits.
//! 3. **SCHED_RR** (`task_tick_rt`): at each tick on a CPU running an RR task its time slice
//!    (`sched_rr_timeslice_ms`, 100 ms = 25 ticks at HZ=250) loses a tick; at 0 it is refilled
//!    and the task goes to the tail of its priority (`requeue_task_rt`), where an equal one
//!    waiting overtakes it.
//! 4. **RT throttling** (`sched_rt_runtime_exceeded`, `do_sched_rt_period_timer`; this kernel
//!    has `CONFIG_RT_GROUP_SCHED=y`, option `rt_throttle=off` for one without): per CPU, RT
//!    tasks may run `sched_rt_runtime_us` (950 ms) of each `sched_rt_period_us` (1 s, periods
//!    from time 0); a CPU whose RT time reaches it is throttled for the class until its period
//!    ends, when the runtime is subtracted from the time used. RT time is counted exactly
//!    (the kernel counts it at ticks and scheduling events); `RT_RUNTIME_SHARE` (borrowing from
//!    other CPUs) is off, as by default. A throttled CPU is occupied for the class as in rule 2,
//!    so its RT entity may be pushed to another CPU, where the kernel leaves it queued: a
//!    departure on more than one CPU.
//!
//! How this interacts with the fair server (6.18): both run. Under an RT task that never
//! sleeps, the fair server (deferred) reaches its zero-laxity instant, 950 ms into its period,
//! when RT throttling also stops the RT class; from then on the server, no longer deferring,
//! runs its 50 ms at the start of each of its periods, ahead of the RT class (a deadline
//! entity), so the RT class never uses its whole 950 ms again: the fair class gets 5 % in one
//! 50 ms stretch per second, as measured on this machine (docs/linux-classes.md).

use super::timers::Timers;
use crate::common::dist::DistDomain;
use crate::common::findcpu::PushFind;
use crate::common::key::Key;
use crate::gfp::FpOrder;
use crate::policy::{EntityId, EntityInfo};
use rtsched_model::Time;

const NONE: u32 = u32::MAX;

/// The occupant key of a CPU a higher class holds: below every entity's.
const HIGHER: Key = Key {
    primary: 0,
    secondary: 0,
    task: 0,
    job: 0,
    thread: 0,
};

/// RT throttling's bandwidth and each CPU's use of it (rule 4).
struct Throttle {
    runtime: Time,
    period: Time,
    rt_time: Vec<Time>,
    period_end: Vec<Time>,
    throttled: Vec<bool>,
}

/// The RT class (see the overview).
pub(super) struct RtClass {
    dom: DistDomain<FpOrder>,
    /// Per task: its key's primary (`u32::MAX - priority`), whether it is SCHED_RR, and its RR
    /// time slice left, in ticks.
    primary: Vec<u64>,
    rr: Vec<bool>,
    slice: Vec<u32>,
    rr_ticks: u32,
    infos: Vec<EntityInfo>,
    /// Per CPU: the RT entity it runs, since when its RT time is uncounted, whether a higher
    /// class occupies it.
    on_cpu: Vec<EntityId>,
    since: Vec<Time>,
    higher: Vec<bool>,
    throttle: Option<Throttle>,
    changed: Vec<(u32, Option<EntityId>)>,
    /// Timer owner of CPU `c`'s throttling: `owner_base + c`.
    owner_base: u32,
}

impl RtClass {
    /// `prio[t]`: task `t`'s Linux priority if it is SCHED_FIFO or SCHED_RR (`rr[t]`);
    /// `rr_ticks`: the RR slice in ticks; `throttle`: (runtime, period) per CPU, or none.
    pub(super) fn new(
        cpus: u32,
        prio: &[Option<u32>],
        rr: Vec<bool>,
        rr_ticks: u32,
        throttle: Option<(Time, Time)>,
        owner_base: u32,
    ) -> Self {
        let m = cpus as usize;
        let prios: Vec<u32> = prio.iter().map(|p| p.unwrap_or(0)).collect();
        // cpupri's levels: the tasks' priorities, and CPUPRI_HIGHER above them all.
        let mut levels: Vec<u64> = prio
            .iter()
            .flatten()
            .map(|&p| (u32::MAX - p) as u64)
            .collect();
        levels.push(HIGHER.primary);
        RtClass {
            primary: prios.iter().map(|&p| (u32::MAX - p) as u64).collect(),
            dom: DistDomain::new(
                "linux:rt",
                FpOrder { priority: prios },
                cpus,
                PushFind::Cpupri,
                levels,
                false,
            ),
            slice: vec![rr_ticks; rr.len()],
            rr,
            rr_ticks: rr_ticks.max(1),
            infos: Vec::with_capacity(64),
            on_cpu: vec![NONE; m],
            since: vec![0; m],
            higher: vec![false; m],
            throttle: throttle.map(|(runtime, period)| Throttle {
                runtime,
                period,
                rt_time: vec![0; m],
                period_end: vec![period; m],
                throttled: vec![false; m],
            }),
            changed: Vec::with_capacity(m),
            owner_base,
        }
    }

    #[inline]
    pub(super) fn curr(&self, cpu: u32) -> Option<EntityId> {
        self.dom.curr(cpu)
    }

    /// Rule 1: `e` is enqueued at `now`, at the tail of its priority.
    pub(super) fn release(&mut self, now: Time, e: &EntityInfo) {
        let i = e.id as usize;
        if self.infos.len() <= i {
            self.infos.resize(i + 1, *e);
        }
        self.infos[i] = *e;
        let k = Key::new(self.primary[e.task as usize], now, e);
        self.dom.release_key(e, k);
    }

    /// `e` left (completed on `cpu`, or aborted).
    pub(super) fn left(&mut self, now: Time, e: EntityId, cpu: Option<u32>, timers: &mut Timers) {
        match cpu {
            Some(c) if self.dom.curr(c) == Some(e) => self.dom.complete(e, c),
            _ => self.dom.remove(e),
        }
        let at = match cpu {
            Some(c) if self.on_cpu[c as usize] == e => Some(c),
            _ => (0..self.on_cpu.len() as u32).find(|&c| self.on_cpu[c as usize] == e),
        };
        if let Some(c) = at {
            self.account(now, c);
            self.on_cpu[c as usize] = NONE;
            self.rearm(now, c, timers);
        }
    }

    /// Rule 3: a tick on `cpu` at `now`.
    pub(super) fn tick(&mut self, now: Time, cpu: u32) {
        let e = self.on_cpu[cpu as usize];
        if e == NONE {
            return;
        }
        let t = self.infos[e as usize].task as usize;
        if !self.rr[t] {
            return;
        }
        self.slice[t] -= 1;
        if self.slice[t] > 0 {
            return;
        }
        self.slice[t] = self.rr_ticks;
        let info = self.infos[e as usize];
        self.dom.remove(e);
        self.dom
            .release_key(&info, Key::new(self.primary[t], now, &info));
    }

    /// Whether a higher class occupies `cpu` (rule 2); takes effect at the next balance.
    pub(super) fn set_higher(&mut self, cpu: u32, on: bool) {
        self.higher[cpu as usize] = on;
        self.update_ext(cpu);
    }

    fn update_ext(&mut self, cpu: u32) {
        let throttled = self
            .throttle
            .as_ref()
            .is_some_and(|t| t.throttled[cpu as usize]);
        let ext = (self.higher[cpu as usize] || throttled).then_some(HIGHER);
        self.dom.set_ext(cpu, ext);
    }

    /// The domain's work list; `dirty` gets every CPU whose RT entity changed.
    pub(super) fn balance(&mut self, now: Time, timers: &mut Timers, dirty: &mut Vec<u32>) {
        self.dom.balance();
        self.changed.clear();
        let changed = &mut self.changed;
        self.dom.commit(|c, e| changed.push((c, e)));
        for i in 0..self.changed.len() {
            let (c, e) = self.changed[i];
            dirty.push(c);
            let e = e.unwrap_or(NONE);
            if self.on_cpu[c as usize] != e {
                self.account(now, c);
                self.on_cpu[c as usize] = e;
                self.rearm(now, c, timers);
            }
        }
    }

    /// Rule 4: count `cpu`'s RT time up to `now` and roll its periods over.
    fn account(&mut self, now: Time, cpu: u32) {
        let running = self.on_cpu[cpu as usize] != NONE;
        let c = cpu as usize;
        let since = std::mem::replace(&mut self.since[c], now);
        let Some(t) = self.throttle.as_mut() else {
            return;
        };
        if running && !t.throttled[c] {
            t.rt_time[c] += now - since;
        }
        if now >= t.period_end[c] {
            let k = (now - t.period_end[c]) / t.period + 1;
            t.rt_time[c] = t.rt_time[c].saturating_sub(k * t.runtime);
            t.period_end[c] += k * t.period;
        }
    }

    /// Rule 4: throttle or unthrottle `cpu` after its time was counted, and time its next
    /// check: the end of its period while throttled, or where its RT time would reach the
    /// runtime while an RT entity runs.
    fn rearm(&mut self, now: Time, cpu: u32, timers: &mut Timers) {
        let c = cpu as usize;
        let owner = self.owner_base + cpu;
        let Some(t) = self.throttle.as_mut() else {
            return;
        };
        let was = t.throttled[c];
        t.throttled[c] = t.rt_time[c] >= t.runtime;
        if t.throttled[c] {
            timers.set(owner, t.period_end[c]);
        } else if self.on_cpu[c] != NONE {
            timers.set(owner, t.period_end[c].min(now + (t.runtime - t.rt_time[c])));
        } else {
            timers.cancel(owner);
        }
        if was != t.throttled[c] {
            self.update_ext(cpu);
        }
    }

    /// Rule 4's timer of `cpu` fired at `now`.
    pub(super) fn timer(&mut self, now: Time, cpu: u32, timers: &mut Timers) {
        self.account(now, cpu);
        self.rearm(now, cpu, timers);
    }
}
