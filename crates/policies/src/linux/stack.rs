//! The `linux` scheduler: Linux's class stack (`kernel/sched/core.c` `pick_next_task`, which
//! asks each class in turn, highest first), each task under its own policy:
//!
//! 1. the **deadline class** ([`super::dl`]): SCHED_DEADLINE tasks, global EDF with push/pull
//!    and `cpudl` under each thread's CBS, and each CPU's **fair server** ([`super::server`]),
//!    a deadline entity pinned to its CPU (an external occupant of the deadline domain at its
//!    deadline);
//! 2. the **RT class** ([`super::rt`]): SCHED_FIFO / SCHED_RR, global fixed priority with
//!    push/pull and `cpupri`, RR slices, RT throttling; a CPU the deadline class holds is
//!    occupied for it;
//! 3. the **fair class**: SCHED_OTHER tasks, the `cfs` model with its Linux balancer
//!    ([`crate::cfs::Cfs`], reused: it decides for the CPUs no higher class holds, in a
//!    decision buffer of its own that this file merges); a CPU whose fair server runs is the
//!    fair class's.
//!
//! One instant: the timers due are handled (runtime exhausted, replenishment, 0-lag, RT
//! period, server deferral), RR ticks, the lanes that slept; then the classes decide top down
//! — deadline, RT (its occupied CPUs from the deadline class), fair (its CPUs from both) —
//! and each CPU's server starts, stops or changes its state from what the fair class holds
//! and runs there; a server that became runnable or stopped changes the deadline class's
//! CPUs, and the three decide again (at most a few rounds: each server changes once). Each
//! CPU runs its deadline entity, else (its server running) its fair entity, else its RT
//! entity, else its fair entity.

use super::build::{grub_rqs, reserve, Options};
use super::constants::RtBandwidth;
use super::dl::DlClass;
use super::rt::RtClass;
use super::server::{Fair, FairServer};
use super::timers::Timers;
use crate::cfs::{Cfs, CfsParams};
use crate::common::key::Key;
use crate::ctx::BuildCtx;
use crate::policy::{Decisions, Dispatch, EntityId, EntityInfo, Policy};
use crate::spec::SchedulerSpec;
use rtsched_model::{SchedPolicy, TaskSet, Time};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Deadline,
    Rt,
    Fair,
}

/// The fair class and the fair servers.
struct FairClass {
    cfs: Cfs,
    /// The fair class's own decisions (what it runs where), merged into the stack's.
    dec: Decisions,
    /// Per CPU (empty with `fair_server=off`).
    servers: Vec<FairServer>,
    server_bw: u64,
    /// Per CPU: the server's key the deadline domain holds.
    ext: Vec<Option<Key>>,
    scratch_t: Vec<Time>,
    scratch_c: Vec<(u32, Time)>,
    scratch_d: Vec<u32>,
}

/// Linux's class stack (see the overview).
pub struct Linux {
    label: String,
    /// The tasks' names, for the per-task counters.
    names: Vec<String>,
    m: u32,
    class: Vec<Class>,
    /// Per entity id: its task.
    ent_task: Vec<u32>,
    dl: DlClass,
    rt: Option<RtClass>,
    fair: Option<FairClass>,
    timers: Timers,
    /// Timer owners: lanes `[0, L)`, their 0-lag timers `[L, 2L)`, each CPU's RT throttle
    /// from `rt_base`, each CPU's server from `server_base`.
    rt_base: u32,
    server_base: u32,
    tick: Option<Time>,
    ticked: Vec<u32>,
    /// Per CPU: what this policy last had it run; CPUs to decide again.
    assigned: Vec<Option<EntityId>>,
    dirty: Vec<u32>,
    is_dirty: Vec<bool>,
}

impl Linux {
    pub(super) fn new(label: String, ts: &TaskSet, o: &Options) -> Result<Linux, String> {
        let m = ts.platform.cpus;
        let class: Vec<Class> = (0..ts.tasks.len() as u32)
            .map(|t| match ts.sched_policy(t) {
                SchedPolicy::Deadline { .. } => Class::Deadline,
                SchedPolicy::Fifo | SchedPolicy::Rr => Class::Rt,
                SchedPolicy::Other { .. } => Class::Fair,
            })
            .collect();
        let (lanes, first, root) = reserve(ts, o)?;
        let nl = lanes.len() as u32;
        let (rt_base, server_base) = (2 * nl, 2 * nl + m);
        let has_fair = class.contains(&Class::Fair);
        let server_bw = if o.fair_server {
            super::attr::DlAttr::new(
                super::constants::FAIR_SERVER_RUNTIME_NS,
                super::constants::FAIR_SERVER_PERIOD_NS,
                super::constants::FAIR_SERVER_PERIOD_NS,
            )
            .dl_bw()
        } else {
            0
        };
        let grub = o.reclaim.then(|| grub_rqs(m, &lanes, &root, server_bw));
        let dl = DlClass::new(m, lanes, first, grub, nl);
        let rt = class.contains(&Class::Rt).then(|| {
            let prio: Vec<Option<u32>> = ts
                .tasks
                .iter()
                .zip(&class)
                .map(|(t, &c)| (c == Class::Rt).then(|| t.priority.unwrap_or(1)))
                .collect();
            let rr = (0..ts.tasks.len() as u32)
                .map(|t| ts.sched_policy(t) == SchedPolicy::Rr)
                .collect();
            let bw = RtBandwidth::DEFAULT;
            let throttle = (o.rt_throttle)
                .then(|| bw.global_rt_runtime().map(|r| (r, bw.global_rt_period())))
                .flatten();
            RtClass::new(m, &prio, rr, o.rr_ticks(), throttle, rt_base)
        });
        let fair = has_fair.then(|| {
            // The balancer's costs are the overhead model's business here (`run.overheads`),
            // as every other class's are: none charged by the class itself.
            let p = CfsParams {
                tick: o.tick,
                balance_cost: 0,
                balance_cost_per_cpu: 0,
                check_cost: 0,
                lock: 0,
                ..CfsParams::default()
            };
            let cfs = Cfs::with_classes("linux:fair".into(), ts, p, None, true, |t| {
                match t.sched_policy(ts.run.default_policy) {
                    SchedPolicy::Other { nice } => Some(rtsched_model::nice_weight(nice)),
                    _ => None,
                }
            });
            FairClass {
                cfs,
                dec: Decisions::new(m),
                servers: if o.fair_server {
                    vec![FairServer::default(); m as usize]
                } else {
                    Vec::new()
                },
                server_bw,
                ext: vec![None; m as usize],
                scratch_t: Vec::new(),
                scratch_c: Vec::new(),
                scratch_d: Vec::with_capacity(m as usize),
            }
        });
        let rr = (0..ts.tasks.len() as u32).any(|t| ts.sched_policy(t) == SchedPolicy::Rr);
        Ok(Linux {
            label,
            names: ts.tasks.iter().map(|t| t.name.clone()).collect(),
            m,
            class,
            ent_task: Vec::with_capacity(64),
            dl,
            rt,
            fair,
            timers: Timers::new((server_base + m) as usize),
            rt_base,
            server_base,
            tick: (has_fair || rr).then_some(o.tick),
            ticked: Vec::with_capacity(m as usize),
            assigned: vec![None; m as usize],
            dirty: Vec::with_capacity(4 * m as usize),
            is_dirty: vec![false; m as usize],
        })
    }

    fn class_of(&self, e: EntityId) -> Class {
        self.class[self.ent_task[e as usize] as usize]
    }

    /// The CPU this policy last had run `e` (an abort's; O(m), aborts are rare).
    fn cpu_of(&self, e: EntityId) -> Option<u32> {
        self.assigned
            .iter()
            .position(|&x| x == Some(e))
            .map(|c| c as u32)
    }

    /// Every timer due at `now`, to its class.
    fn timers_due(&mut self, now: Time) {
        while let Some(owner) = self.timers.pop_due(now) {
            if owner < self.rt_base {
                self.dl.timer(now, owner, &mut self.timers);
            } else if owner < self.server_base {
                if let Some(rt) = self.rt.as_mut() {
                    rt.timer(now, owner - self.rt_base, &mut self.timers);
                }
            } else if let Some(f) = self.fair.as_mut() {
                let c = owner - self.server_base;
                let s = &mut f.servers[c as usize];
                let same = match s.fair {
                    Fair::Idle => Fair::Idle,
                    Fair::Served(_) => Fair::Served(now),
                    Fair::Background(_) => Fair::Background(now),
                };
                s.count(now, same);
                s.timer(now);
            }
        }
    }

    /// The RT class, its CPUs held by the deadline class (or its own throttling) first.
    fn decide_rt(&mut self, now: Time) {
        let Some(rt) = self.rt.as_mut() else {
            return;
        };
        for c in 0..self.m {
            let server = self
                .fair
                .as_ref()
                .is_some_and(|f| f.ext[c as usize].is_some());
            rt.set_higher(c, self.dl.curr(c).is_some() || server);
        }
        rt.balance(now, &mut self.timers, &mut self.dirty);
    }

    /// The fair class on the CPUs no higher class holds, then each CPU's server; whether a
    /// server's change asks the deadline class to decide again.
    fn decide_fair(&mut self, now: Time, d: &mut Dispatch<'_>) -> bool {
        let Some(f) = self.fair.as_mut() else {
            return false;
        };
        for c in 0..self.m {
            let taken = self.dl.curr(c).is_some()
                || self.rt.as_ref().is_some_and(|rt| rt.curr(c).is_some());
            f.cfs.set_taken(c, taken);
        }
        {
            let mut fd = Dispatch::new(&mut f.dec, d.run());
            f.cfs.schedule(now, &mut fd);
        }
        f.dec.take_timers(&mut f.scratch_t);
        for &t in &f.scratch_t {
            d.wake_at(t);
        }
        f.dec.take_charges(&mut f.scratch_c);
        for &(c, ns) in &f.scratch_c {
            d.charge(c, ns);
        }
        f.dec.take_dirty(&mut f.scratch_d);
        self.dirty.extend_from_slice(&f.scratch_d);
        let mut again = false;
        for c in 0..f.servers.len() as u32 {
            let s = &mut f.servers[c as usize];
            let queued = f.cfs.has_queued(c);
            if queued && !s.active() {
                s.start(now);
                self.dl
                    .server_active(now, c, f.server_bw, true, &mut self.timers);
            } else if !queued && s.active() {
                s.count(now, Fair::Idle);
                s.stop();
                self.dl
                    .server_active(now, c, f.server_bw, false, &mut self.timers);
            }
            let runs = f.dec.current(c).is_some();
            let serving = self.dl.curr(c).is_none() && f.ext[c as usize].is_some();
            let mode = match (runs, serving) {
                (false, _) => Fair::Idle,
                (true, true) => Fair::Served(now),
                (true, false) => Fair::Background(now),
            };
            if std::mem::discriminant(&mode) != std::mem::discriminant(&s.fair) {
                s.count(now, mode);
            }
            let key = s.key(c);
            if key != f.ext[c as usize] {
                f.ext[c as usize] = key;
                self.dl.dom.set_ext(c, key);
                self.dirty.push(c);
                again = true;
            }
            match s.next_timer() {
                Some(t) => self.timers.set(self.server_base + c, t),
                None => self.timers.cancel(self.server_base + c),
            }
        }
        again
    }

    /// What CPU `c` runs: its deadline entity, else (its server running) its fair entity,
    /// else its RT entity, else its fair entity.
    fn pick(&self, c: u32) -> Option<EntityId> {
        if let Some(e) = self.dl.curr(c) {
            return Some(e);
        }
        let fair = self.fair.as_ref().and_then(|f| f.dec.current(c));
        if self
            .fair
            .as_ref()
            .is_some_and(|f| f.ext[c as usize].is_some())
        {
            return fair;
        }
        self.rt.as_ref().and_then(|rt| rt.curr(c)).or(fair)
    }
}

impl Policy for Linux {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn release(&mut self, now: Time, e: &EntityInfo) {
        let i = e.id as usize;
        if self.ent_task.len() <= i {
            self.ent_task.resize(i + 1, NONE);
        }
        self.ent_task[i] = e.task;
        match self.class[e.task as usize] {
            Class::Deadline => self.dl.release(now, e, &mut self.timers),
            Class::Rt => self.rt.as_mut().expect("RT tasks").release(now, e),
            Class::Fair => self.fair.as_mut().expect("fair tasks").cfs.release(now, e),
        }
    }

    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        match self.class_of(e) {
            Class::Deadline => self.dl.left(now, e, Some(cpu), &mut self.timers),
            Class::Rt => {
                let rt = self.rt.as_mut().expect("RT tasks");
                rt.left(now, e, Some(cpu), &mut self.timers)
            }
            Class::Fair => {
                let f = self.fair.as_mut().expect("fair tasks");
                f.cfs.complete(now, e, cpu);
                if f.dec.current(cpu) == Some(e) {
                    f.dec.vacate(cpu);
                }
            }
        }
        self.assigned[cpu as usize] = None;
        self.dirty.push(cpu);
    }

    fn aborted(&mut self, now: Time, e: EntityId) {
        let cpu = self.cpu_of(e);
        match self.class_of(e) {
            Class::Deadline => self.dl.left(now, e, cpu, &mut self.timers),
            Class::Rt => {
                let rt = self.rt.as_mut().expect("RT tasks");
                rt.left(now, e, cpu, &mut self.timers)
            }
            Class::Fair => {
                let f = self.fair.as_mut().expect("fair tasks");
                f.cfs.aborted(now, e);
                if let Some(c) = (0..self.m).find(|&c| f.dec.current(c) == Some(e)) {
                    f.dec.vacate(c);
                }
            }
        }
        if let Some(c) = cpu {
            self.assigned[c as usize] = None;
            self.dirty.push(c);
        }
    }

    fn tick_interval(&self) -> Option<Time> {
        self.tick
    }

    fn tick(&mut self, now: Time, cpu: u32) {
        self.ticked.push(cpu);
        if let Some(f) = self.fair.as_mut() {
            f.cfs.tick(now, cpu);
        }
    }

    fn timer(&mut self, now: Time) {
        self.timers.fired(now);
    }

    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        self.timers_due(now);
        if let Some(rt) = self.rt.as_mut() {
            for &c in &self.ticked {
                rt.tick(now, c);
            }
        }
        self.ticked.clear();
        self.dl.settle_sleeps(now, &mut self.timers);
        for round in 0.. {
            debug_assert!(
                round < 2 + 2 * self.m as usize,
                "the class stack does not settle"
            );
            self.dl.balance(now, &mut self.timers, &mut self.dirty);
            self.decide_rt(now);
            if !self.decide_fair(now, d) {
                break;
            }
        }
        for i in 0..self.dirty.len() {
            let c = self.dirty[i];
            if std::mem::replace(&mut self.is_dirty[c as usize], true) {
                continue;
            }
            let want = self.pick(c);
            self.assigned[c as usize] = want;
            if d.current(c) != want {
                d.assign(c, want);
            }
        }
        for i in 0..self.dirty.len() {
            self.is_dirty[self.dirty[i] as usize] = false;
        }
        self.dirty.clear();
        self.timers.ask(d);
    }

    fn finish(&mut self, end: Time) {
        self.dl.finish(end);
    }

    fn stats(&self) -> Vec<(String, f64)> {
        let mut total = (0, 0);
        let mut per_task = Vec::new();
        for (t, &c) in self.class.iter().enumerate() {
            if c != Class::Deadline {
                continue;
            }
            let (th, re) = self.dl.counters(t as u32);
            total = (total.0 + th, total.1 + re);
            per_task.push((t, th, re));
        }
        let mut v = vec![
            ("throttles".to_string(), total.0 as f64),
            ("replenishments".to_string(), total.1 as f64),
        ];
        for (t, th, re) in per_task {
            v.push((format!("dl.{}.throttles", self.names[t]), th as f64));
            v.push((format!("dl.{}.replenishments", self.names[t]), re as f64));
        }
        if let Some(f) = &self.fair {
            let n: u64 = f.servers.iter().map(|s| s.activations).sum();
            v.push(("dl.fair_server.activations".into(), n as f64));
        }
        v
    }
}

/// `linux[:reclaim,fair_server=on|off,rt_throttle=on|off,tick=T,rr_timeslice=T]`.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let o = Options::parse(spec)?;
    let label = if o.shown.is_empty() {
        "linux".to_string()
    } else {
        format!("linux:{}", o.shown.join(","))
    };
    Ok(Box::new(Linux::new(label, ctx.ts, &o)?))
}
