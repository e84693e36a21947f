//! Locking protocols (docs/locking.md; rtsched_model::locking): what inheritance and ceilings
//! change, kept apart from the plain mutex of resources.rs. Built only for a set with a
//! resource whose protocol is not `none`: otherwise the ledger has no `Locking` and every
//! hook below is one branch.
//!
//! The one rule by which the policy sees them ([`Policy::boost`]): an entity's *effective
//! urgency* is the most urgent of
//! - its own ([`Policy::urgency`] of its identity);
//! - under `pip`, the effective urgency of every entity waiting for a resource it holds —
//!   transitively, as a chain of holders is followed (Sha, Rajkumar & Lehoczky 1990,
//!   transitive priority inheritance); a freed `pip` resource goes to its most urgent waiter;
//! - under `pcp` (immediate ceiling, OSEK/AUTOSAR), the ceiling of every resource it holds:
//!   the urgency, at its own release, of the user task the policy ranks most urgent;
//! - under `pcp:original` (Sha, Rajkumar & Lehoczky 1990), as under `pip`, the effective
//!   urgency of every entity waiting for a resource it holds, counting those *ceiling blocked*
//!   by it: a request for a free resource by a job whose effective urgency is not above the
//!   *system ceiling* (the most urgent `pcp` ceiling among the resources held by other jobs of
//!   its CPU) blocks, on the resource of that ceiling, and is made again when it is freed
//!   (locking/ceiling.rs).
//!
//! `srp` (Baker 1991, for EDF) is not an urgency: a job may not *start* while its
//! preemption level is at or below the *system ceiling* of its CPU (the highest ceiling among
//! the `srp` resources held there). The ledger withholds such a job from the policy (it is
//! held, as a task's next job is held) and gives it when the ceiling falls below its level;
//! levels are ordered by relative deadline (a shorter one is higher, Baker's for EDF), and a
//! resource's ceiling is its users' highest. On one CPU a job released to the policy then never
//! meets a locked resource (Baker 1991), so `srp` never blocks a running job.
//!
//! `msrp` (Gai, Lipari & Di Natale 2001) and `mrsp` (Burns & Wellings 2013) are for
//! partitioned scheduling; a resource's users' CPUs come from the policy's partition
//! ([`Policy::cpu_of_task`]). A *local* `msrp` resource (every user on one CPU) is an `srp`
//! one. For a *global* one, a request makes the job non-preemptive (it is lent [`NP`], more
//! urgent than any job's own) until it releases the resource; a request for a resource held
//! on another CPU *spins*: the job keeps its CPU, does no work, and waits in the resource's
//! FIFO queue (Gai et al.'s spin lock). Under `mrsp` a requesting job is lent the resource's
//! *local ceiling* on its CPU (the most urgent of that CPU's users, at its own release) and
//! spins at it, FIFO, holding the section at it; a higher job of its CPU may preempt it, and
//! its spinning then pauses. A holder preempted on its CPU is *helped*: it migrates to a CPU
//! where a job spins for its resource and runs its section there in the spinner's place
//! (Burns & Wellings' helping, locking/mrsp.rs). A spinning entity owes [`SPIN_OWED`], so
//! that a driver that accounts CPU time pays it from that debt and its work does not advance;
//! when it is handed the resource the debt is dropped at the next decision and the driver
//! re-plans its work (`lock_replan`, through [`Substrate::charged`] with nothing charged).
//! Spinning is counted per job (`JobRecord::spin`), the time a spinning entity ran on its CPU.
//!
//! `omlp` (Brandenburg & Anderson 2010, the global OMLP) is for global scheduling: a request
//! queues FIFO among at most m jobs, behind them by urgency, suspended; the holder inherits
//! the most urgent waiter's urgency as under `pip` (locking/omlp.rs).
//!
//! `fmlp+` (Brandenburg 2014, partitioned) queues FIFO and suspends a waiter as `none` does;
//! a holder is lent a *priority boost* ordered by the time its request was issued
//! (locking/fmlp.rs).
//!
//! Blocking, per job, in three kinds (docs/locking.md): *direct*, the time its threads waited
//! for a held resource (`JobRecord::blocked`, resources.rs); *inheritance*, the time it was
//! ready while its CPU ran a job of lower own urgency lent a higher one by inheritance (push-
//! through blocking); *ceiling*, the same for a job raised to a ceiling, plus the time `srp`
//! withheld it. The last two are measured after each decision: a job marked then accrues the
//! time to the next decision (nothing a protocol changes happens between decisions).

use super::{rec_at, Ledger, Substrate};
use crate::state::NONE;
use rtsched_model::{Protocol, TaskSet, Time};
use rtsched_policies::{EntityId, EntityInfo, Policy, Urgency};

mod ceiling;
mod fmlp;
mod mrsp;
mod omlp;

pub use mrsp::set_mrsp_helping;

/// The urgency `msrp` lends a job that requested or holds a global resource: more urgent than
/// any job's own, so that its CPU is not taken from it (non-preemptive).
pub const NP: Urgency = (0, 0);
/// What a spinning entity owes (about 36 years): a driver pays the CPU time it spins from it.
pub const SPIN_OWED: Time = 1 << 60;

/// What lent an entity its effective urgency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Inheritance,
    Ceiling,
}

/// The protocols' state. One per run that has them.
pub(super) struct Locking {
    /// Per resource: its protocol; under `pcp` the user task the policy ranks most urgent
    /// (NONE otherwise); under `srp` its ceiling as the shortest relative deadline of its
    /// users (`Time::MAX` otherwise).
    protocol: Vec<Protocol>,
    ceiling_task: Vec<u32>,
    srp_ceiling: Vec<Time>,
    /// Per task: its CPU (its `cpu` field, else 0: one CPU, or a global set) and relative
    /// deadline (its `srp` preemption level, smaller is higher).
    task_cpu: Vec<u32>,
    level: Vec<Time>,
    /// `srp`: per CPU the system ceiling (`Time::MAX`: none), and the jobs withheld, in
    /// release order, with when.
    system: Vec<Time>,
    gate: Vec<(u32, Time)>,
    /// `srp`: a resource was freed since the system ceilings were last computed. They are
    /// recomputed before the next decision, not at once: a job that frees a resource and
    /// requests one at the same point of its work (touching sections, one stretch in the
    /// analysis: schedulability/blocking.rs `longest_stretch`) holds on, and no withheld job
    /// starts in between, as no job could preempt it between two instructions.
    srp_stale: bool,
    /// Per entity slot: the urgency lent to it and by what (`None`: its own); how many have one.
    boost: Vec<Option<(Urgency, Kind)>>,
    boosted: u32,
    /// Records accruing inheritance or ceiling blocking since the last decision, and when.
    marks: Vec<(u32, Kind)>,
    last: Time,
    /// `mrsp`: per resource and CPU (`r * cpus + cpu`), the user task of that CPU the policy
    /// ranks most urgent (its local ceiling), NONE if none.
    local_ceiling: Vec<u32>,
    cpus: usize,
    /// Per entity slot: the resource it spins for (NONE); the entities spinning on a CPU now,
    /// with their record and since when their spinning is counted; the spinners handed their
    /// resource since the last decision (their debt is dropped then). A spinner's entry:
    /// entity, record, since when, and whether it was on its CPU since then.
    spin: Vec<u32>,
    spinning: Vec<(EntityId, u32, Time, bool)>,
    granted: Vec<EntityId>,
    /// `pcp:original`: the entities ceiling blocked, in the order they blocked, with since
    /// when; each is `blocked_on` the resource whose holder blocks it, outside its queue.
    ceiling_blocked: Vec<(EntityId, Time)>,
    /// `fmlp+`: per entity slot, when its outstanding request was issued (locking/fmlp.rs).
    issued: Vec<Time>,
    /// `mrsp`'s helping (locking/mrsp.rs): whether this run helps (it has a global `mrsp`
    /// resource, and tests did not turn it off); the holders placed on another CPU; how many
    /// placements there were; the rounds of helping at the last instant.
    help: bool,
    helpers: Vec<mrsp::Helper>,
    help_migrations: u64,
    help_round: (Time, u32),
}

/// The urgency of `e` under `policy` (a policy without one is refused before the run, so the
/// fallback, EDF's, is never used for a decision).
#[inline]
fn urgency(policy: &mut dyn Policy, e: &EntityInfo) -> Urgency {
    policy.urgency(e).unwrap_or((e.deadline, e.release))
}

/// A job of task `t` released at `at`, as the ceilings compare it.
fn representative(ts: &TaskSet, t: usize, at: Time, like: &EntityInfo) -> EntityInfo {
    EntityInfo {
        task: t as u32,
        release: at,
        deadline: at.saturating_add(ts.tasks[t].deadline),
        ..*like
    }
}

impl Locking {
    /// The protocols of `ts` under `policy`, or `None` when every resource is `none`.
    pub(super) fn new(ts: &TaskSet, policy: &mut dyn Policy) -> Option<Box<Locking>> {
        if !ts.has_locking() {
            return None;
        }
        let n = ts.resources.len();
        let mut l = Locking {
            protocol: (0..n).map(|r| ts.protocol(r)).collect(),
            ceiling_task: vec![NONE; n],
            srp_ceiling: vec![Time::MAX; n],
            task_cpu: ts.tasks.iter().map(|t| t.cpu.unwrap_or(0)).collect(),
            level: ts.tasks.iter().map(|t| t.deadline).collect(),
            system: vec![Time::MAX; ts.platform.cpus as usize],
            gate: Vec::with_capacity(ts.tasks.len()),
            srp_stale: false,
            boost: Vec::with_capacity(64),
            boosted: 0,
            marks: Vec::with_capacity(ts.tasks.len()),
            last: 0,
            local_ceiling: vec![NONE; n * ts.platform.cpus as usize],
            cpus: ts.platform.cpus as usize,
            spin: Vec::with_capacity(64),
            spinning: Vec::with_capacity(ts.platform.cpus as usize),
            granted: Vec::with_capacity(ts.platform.cpus as usize),
            ceiling_blocked: Vec::with_capacity(ts.tasks.len()),
            issued: Vec::with_capacity(64),
            help: false,
            helpers: Vec::with_capacity(n),
            help_migrations: 0,
            help_round: (0, 0),
        };
        for (t, c) in l.task_cpu.iter_mut().enumerate() {
            *c = policy.cpu_of_task(t as u32).unwrap_or(*c);
        }
        let probe = EntityInfo {
            id: 0,
            task: 0,
            job: 0,
            region: 0,
            thread: 0,
            release: 0,
            deadline: 0,
        };
        for r in 0..n {
            match l.protocol[r] {
                Protocol::Pcp | Protocol::PcpOriginal => {
                    l.ceiling_task[r] = ts
                        .users(r)
                        .min_by_key(|&t| urgency(policy, &representative(ts, t, 0, &probe)))
                        .map_or(NONE, |t| t as u32);
                }
                Protocol::Msrp if l.local(ts, r) => {
                    // A local resource: SRP (Gai et al. 2001).
                    l.protocol[r] = Protocol::Srp;
                    l.srp_ceiling[r] = ts.users(r).map(|t| l.level[t]).min().unwrap_or(Time::MAX);
                }
                Protocol::Srp => {
                    l.srp_ceiling[r] = ts.users(r).map(|t| l.level[t]).min().unwrap_or(Time::MAX);
                }
                Protocol::Mrsp => {
                    l.help |= mrsp::helping_on() && !l.local(ts, r);
                    for cpu in 0..l.cpus {
                        l.local_ceiling[r * l.cpus + cpu] = ts
                            .users(r)
                            .filter(|&t| l.task_cpu[t] as usize == cpu)
                            .min_by_key(|&t| urgency(policy, &representative(ts, t, 0, &probe)))
                            .map_or(NONE, |t| t as u32);
                    }
                }
                _ => {}
            }
        }
        Some(Box::new(l))
    }

    /// Whether every user of `r` is on one CPU.
    fn local(&self, ts: &TaskSet, r: usize) -> bool {
        let mut cpus = ts.users(r).map(|t| self.task_cpu[t]);
        let first = cpus.next();
        cpus.all(|c| Some(c) == first)
    }

    /// The resource entity `e` spins for (NONE).
    #[inline]
    fn spin_of(&self, e: EntityId) -> u32 {
        self.spin.get(e as usize).copied().unwrap_or(NONE)
    }
    fn set_spin(&mut self, e: EntityId, r: u32) {
        let i = e as usize;
        if self.spin.len() <= i {
            self.spin.resize(i + 1, NONE);
        }
        self.spin[i] = r;
    }

    fn set_boost(&mut self, e: EntityId, b: Option<(Urgency, Kind)>) {
        let i = e as usize;
        if self.boost.len() <= i {
            self.boost.resize(i + 1, None);
        }
        self.boosted = self.boosted + b.is_some() as u32 - self.boost[i].is_some() as u32;
        self.boost[i] = b;
    }
    fn boost_of(&self, e: EntityId) -> Option<(Urgency, Kind)> {
        self.boost.get(e as usize).copied().flatten()
    }
}

impl<'t> Ledger<'t> {
    /// Whether resource `r`'s protocol is `p`.
    #[inline]
    pub(super) fn lock_is(&self, r: u32, p: Protocol) -> bool {
        self.locking
            .as_ref()
            .is_some_and(|l| l.protocol[r as usize] == p)
    }

    /// `e` took `r` at once (its request found it free).
    pub(super) fn lock_taken(&mut self, now: Time, e: EntityId, r: u32) {
        match self.locking.as_ref().map(|l| l.protocol[r as usize]) {
            Some(Protocol::Pcp | Protocol::Msrp | Protocol::Mrsp) => self.reurge(now, e),
            Some(Protocol::Srp) => self.srp_system(now),
            Some(Protocol::FmlpPlus) => {
                self.locking
                    .as_mut()
                    .expect("locking")
                    .fmlp_requested(e, now);
                self.reurge(now, e);
            }
            _ => {}
        }
    }

    /// `e`, running on `cpu`, requested `r`, held by another: under `msrp` and `mrsp` it spins
    /// (true; it stays on its CPU, in `r`'s FIFO queue, owing [`SPIN_OWED`]), else it blocks.
    pub(super) fn lock_spins(&mut self, now: Time, e: EntityId, r: u32) -> bool {
        let l = self.locking.as_mut().expect("locking");
        if !l.protocol[r as usize].spins() {
            return false;
        }
        l.set_spin(e, r);
        let x = &mut self.run.ents[e as usize];
        x.owed = SPIN_OWED;
        l.spinning.push((e, x.rec, now, true));
        self.reurge(now, e);
        true
    }

    /// Whether `e` spins (then it neither works nor takes a checkpoint).
    #[inline]
    pub(super) fn lock_spinning(&self, e: EntityId) -> bool {
        self.locking.as_ref().is_some_and(|l| l.spin_of(e) != NONE)
    }

    /// Stop counting `e`'s spinning at `now` (it was handed its resource, or aborted).
    fn spin_ends(&mut self, now: Time, e: EntityId) {
        let l = self.locking.as_mut().expect("locking");
        l.set_spin(e, NONE);
        if let Some(i) = l.spinning.iter().position(|s| s.0 == e) {
            let (_, rec, since, on) = l.spinning.swap_remove(i);
            if on {
                self.add_spin(rec, now - since);
            }
        }
    }

    fn add_spin(&mut self, rec: u32, dt: Time) {
        let i = rec.wrapping_sub(self.run.rec_base) as usize;
        if rec != NONE && i >= self.run.rec_front && i < self.run.records.len() {
            self.run.records[i].spin += dt;
        }
    }

    /// The spinner `w` was handed `r` (FIFO): it holds it and works again once the next
    /// decision drops its debt.
    pub(super) fn spin_granted(&mut self, now: Time, w: EntityId) {
        self.spin_ends(now, w);
        self.locking.as_mut().expect("locking").granted.push(w);
        self.dec.note_global_event();
        self.reurge(now, w);
    }

    /// Spinning entity `e` of an aborted job leaves its resource's queue, and the urgency its
    /// request lent it (its slot is reused); a ceiling blocked one leaves their list.
    pub(super) fn lock_abort_spin(&mut self, now: Time, e: EntityId) {
        let l = self.locking.as_mut().expect("locking");
        if let Some(i) = l.ceiling_blocked.iter().position(|c| c.0 == e) {
            l.ceiling_blocked.remove(i);
        }
        let r = self.locking.as_ref().map_or(NONE, |l| l.spin_of(e));
        if r == NONE {
            return;
        }
        self.run.resources[r as usize].leave(e);
        self.spin_ends(now, e);
        self.reurge(now, e);
    }

    /// Before a decision: spinners handed their resource drop their debt; the driver accounts
    /// their spinning first and re-plans their work (nothing charged).
    pub(super) fn lock_replan<S: Substrate>(&mut self, now: Time, sub: &mut S) {
        if self.locking.as_ref().expect("locking").srp_stale {
            self.srp_system(now);
        }
        let l = self.locking.as_mut().expect("locking");
        while let Some(w) = l.granted.pop() {
            let c = self.run.ents[w as usize].cpu;
            if c == NONE || !self.run.ents[w as usize].live {
                self.run.ents[w as usize].owed = 0;
                continue;
            }
            let work = self.run.work_to_next(w);
            let (cs, x) = (
                &mut self.run.cpus[c as usize],
                &mut self.run.ents[w as usize],
            );
            sub.charged(now, c, cs, x, 0, work, None);
            x.owed = 0;
            sub.charged(now, c, cs, x, 0, work, None);
        }
    }

    /// Whether `r`'s holder inherits from whom it blocks (`pip`, `pcp:original`, `omlp`).
    #[inline]
    fn inherits(&self, r: u32) -> bool {
        self.locking.as_ref().is_some_and(|l| {
            matches!(
                l.protocol[r as usize],
                Protocol::Pip | Protocol::PcpOriginal | Protocol::Omlp
            )
        })
    }

    /// `e` blocked on `r`, which `holder` holds: under `pip`, `pcp:original` and `omlp` the
    /// holder inherits (under `omlp` after the request takes its place, locking/omlp.rs).
    pub(super) fn lock_blocked(&mut self, now: Time, r: u32, holder: u32) {
        if self.lock_is(r, Protocol::Omlp) {
            self.omlp_enqueue(r);
        }
        if holder != NONE && self.inherits(r) {
            self.reurge(now, holder);
        }
    }

    /// Under `pip` and `pcp:original`, `r`'s most urgent waiter goes first in its queue (it
    /// is handed `r`).
    pub(super) fn lock_choose(&mut self, r: u32) {
        let fifo = self.lock_is(r, Protocol::Omlp);
        if fifo || !self.inherits(r) || self.run.resources[r as usize].queue.len() < 2 {
            return;
        }
        let mut best = (0, (u64::MAX, u64::MAX));
        for i in 0..self.run.resources[r as usize].queue.len() {
            let w = self.run.resources[r as usize].queue[i];
            let u = self.effective(w);
            if u < best.1 {
                best = (i, u);
            }
        }
        let q = &mut self.run.resources[r as usize].queue;
        let w = q.remove(best.0).expect("a waiter");
        q.push_front(w);
    }

    /// `e` let go of `r` (handed to `to`, or NONE): both may change urgency; a lowered `srp`
    /// ceiling lets withheld jobs start.
    pub(super) fn lock_released(&mut self, now: Time, e: EntityId, r: u32, to: u32) {
        let Some(p) = self.locking.as_ref().map(|l| l.protocol[r as usize]) else {
            return;
        };
        if to != NONE {
            // Unblocked, the policy keyed it afresh: lend again what it had.
            if let Some((u, _)) = self.locking.as_ref().and_then(|l| l.boost_of(to)) {
                let info = self.run.ents[to as usize].info;
                self.policy.get().boost(now, &info, Some(u));
            }
        }
        if p == Protocol::PcpOriginal {
            self.ceiling_wake(now, r);
        }
        if p == Protocol::Mrsp {
            self.mrsp_released(now, e);
        }
        if p == Protocol::FmlpPlus && to != NONE {
            // Its request was issued when it blocked (resources.rs keeps that instant).
            let at = self.run.ents[to as usize].blocked_since;
            self.locking
                .as_mut()
                .expect("locking")
                .fmlp_requested(to, at);
        }
        match p {
            Protocol::Pip
            | Protocol::Pcp
            | Protocol::PcpOriginal
            | Protocol::Msrp
            | Protocol::Mrsp
            | Protocol::Omlp
            | Protocol::FmlpPlus => {
                self.reurge(now, e);
                if to != NONE {
                    self.reurge(now, to);
                }
            }
            Protocol::Srp => self.locking.as_mut().expect("locking").srp_stale = true,
            Protocol::None => {}
        }
    }

    /// The waiter `w` left `r`'s queue (its job was aborted): the holder may inherit less.
    pub(super) fn lock_left(&mut self, now: Time, r: u32) {
        let holder = self.run.resources[r as usize].holder;
        if holder != NONE && self.inherits(r) {
            self.reurge(now, holder);
        }
    }

    /// `e`'s effective urgency (its own, or what it is lent).
    fn effective(&mut self, e: EntityId) -> Urgency {
        match self.locking.as_ref().and_then(|l| l.boost_of(e)) {
            Some((u, _)) => u,
            None => urgency(self.policy.get(), &self.run.ents[e as usize].info),
        }
    }

    /// Recompute `e`'s effective urgency by the rule of the overview, tell the policy if it
    /// changed, and follow the chain: if `e` waits for a `pip` or `pcp:original` resource
    /// (or is ceiling blocked on one), its holder next. A
    /// chain is at most every entity long (a cycle of holders, a deadlock, ends it).
    fn reurge(&mut self, now: Time, e: EntityId) {
        let l = self.locking.as_ref().expect("locking");
        if !l.helpers.is_empty() && l.helping(e).is_some() {
            // A helper is ordered in its spinner's place (locking/mrsp.rs), not boosted.
            return;
        }
        let mut e = e;
        for _ in 0..=self.run.ents.len() {
            let x = &self.run.ents[e as usize];
            let (info, live, on) = (x.info, x.live, x.blocked_on);
            let mut best: Option<(Urgency, Kind)> = None;
            if live {
                let own = urgency(self.policy.get(), &info);
                let mut top = own;
                let spins = self.locking.as_ref().expect("locking").spin_of(e) as usize;
                for r in 0..self.run.resources.len() {
                    if self.run.resources[r].holder != e && r != spins {
                        continue;
                    }
                    let l = self.locking.as_ref().expect("locking");
                    let (u, kind) = match l.protocol[r] {
                        p @ (Protocol::Pip | Protocol::PcpOriginal | Protocol::Omlp) => {
                            let mut u = (u64::MAX, u64::MAX);
                            for i in 0..self.run.resources[r].queue.len() {
                                let w = self.run.resources[r].queue[i];
                                u = u.min(self.effective(w));
                            }
                            if p == Protocol::PcpOriginal {
                                u = u.min(self.ceiling_inherited(r as u32));
                            }
                            (u, Kind::Inheritance)
                        }
                        Protocol::Pcp => {
                            let t = l.ceiling_task[r] as usize;
                            let rep = representative(&self.run.ts, t, info.release, &info);
                            (urgency(self.policy.get(), &rep), Kind::Ceiling)
                        }
                        Protocol::Msrp => (NP, Kind::Ceiling),
                        Protocol::FmlpPlus => (l.fmlp_boost(e), Kind::Ceiling),
                        Protocol::Mrsp => {
                            let cpu = l.task_cpu[info.task as usize] as usize;
                            let t = l.local_ceiling[r * l.cpus + cpu];
                            if t == NONE {
                                continue;
                            }
                            let rep = representative(&self.run.ts, t as usize, info.release, &info);
                            (urgency(self.policy.get(), &rep), Kind::Ceiling)
                        }
                        _ => continue,
                    };
                    if u < top {
                        top = u;
                        best = Some((u, kind));
                    }
                }
            }
            let l = self.locking.as_mut().expect("locking");
            if best == l.boost_of(e) {
                return;
            }
            let told = best.map(|b| b.0) != l.boost_of(e).map(|b| b.0);
            l.set_boost(e, best);
            if !live {
                return;
            }
            if on == NONE && told {
                self.policy.get().boost(now, &info, best.map(|b| b.0));
                self.dec.note_global_event();
            }
            if on == NONE || !self.inherits(on) {
                return;
            }
            e = self.run.resources[on as usize].holder;
            if e == NONE {
                return;
            }
        }
    }

    /// `srp`: recompute each CPU's system ceiling; withheld jobs whose level is now above
    /// theirs start, in release order, charged the time withheld as ceiling blocking.
    fn srp_system(&mut self, now: Time) {
        let l = self.locking.as_mut().expect("locking");
        l.srp_stale = false;
        l.system.iter_mut().for_each(|c| *c = Time::MAX);
        for (r, res) in self.run.resources.iter().enumerate() {
            if res.holder != NONE && l.protocol[r] == Protocol::Srp {
                let t = self.run.ents[res.holder as usize].info.task as usize;
                let c = &mut l.system[l.task_cpu[t] as usize];
                *c = (*c).min(l.srp_ceiling[r]);
            }
        }
        let mut i = 0;
        while i < self.locking.as_ref().expect("locking").gate.len() {
            let l = self.locking.as_mut().expect("locking");
            let (j, since) = l.gate[i];
            let t = self.run.jobs[j as usize].task as usize;
            if l.level[t] >= l.system[l.task_cpu[t] as usize] {
                i += 1;
                continue;
            }
            l.gate.remove(i);
            self.run.jobs[j as usize].held = false;
            let rec = self.run.jobs[j as usize].rec;
            if rec != NONE {
                let at = rec_at(self.run.rec_base, self.run.rec_front, rec);
                self.run.records[at].blocked_ceiling += now - since;
            }
            self.fork(now, j, None);
        }
    }

    /// Job slot `j` is due to start: under `srp` it is withheld (true) while its level is not
    /// above its CPU's system ceiling; else the caller forks it.
    #[inline]
    pub(super) fn lock_gates(&mut self, now: Time, j: u32) -> bool {
        let Some(l) = self.locking.as_mut() else {
            return false;
        };
        let t = self.run.jobs[j as usize].task as usize;
        if l.level[t] < l.system[l.task_cpu[t] as usize] {
            return false;
        }
        l.gate.push((j, now));
        self.run.jobs[j as usize].held = true;
        true
    }

    /// Job slot `j`, withheld by `srp`, was aborted: true if it was (it leaves the gate).
    pub(super) fn lock_ungate(&mut self, j: u32) -> bool {
        let Some(l) = self.locking.as_mut() else {
            return false;
        };
        match l.gate.iter().position(|&(x, _)| x == j) {
            Some(i) => {
                l.gate.remove(i);
                true
            }
            None => false,
        }
    }

    /// After a decision: the marked jobs accrue the time since the last one; then every job
    /// ready on the CPU of a running entity lent an urgency, and more urgent by its own than
    /// that entity's own, is marked (inheritance or ceiling blocking).
    pub(super) fn lock_observe(&mut self, now: Time) {
        let l = self.locking.as_mut().expect("locking");
        let dt = now - l.last;
        l.last = now;
        let (base, front) = (self.run.rec_base, self.run.rec_front);
        for &(rec, kind) in &l.marks {
            let i = rec.wrapping_sub(base) as usize;
            if dt == 0 || i < front || i >= self.run.records.len() {
                continue;
            }
            let r = &mut self.run.records[i];
            match kind {
                Kind::Inheritance => r.blocked_inheritance += dt,
                Kind::Ceiling => r.blocked_ceiling += dt,
            }
        }
        l.marks.clear();
        if !l.spinning.is_empty() {
            self.observe_spinning(now);
        }
        let l = self.locking.as_mut().expect("locking");
        if l.boosted == 0 {
            return;
        }
        for cpu in 0..self.run.cpus.len() {
            let Some(h) = self.run.cpus[cpu].running else {
                continue;
            };
            let Some((_, kind)) = self.locking.as_ref().expect("locking").boost_of(h) else {
                continue;
            };
            let hi = self.run.ents[h as usize].info;
            let own = urgency(self.policy.get(), &hi);
            let l = self.locking.as_ref().expect("locking");
            let at = l.helping(h).unwrap_or(l.task_cpu[hi.task as usize]);
            for x in 0..self.run.ents.len() {
                let v = &self.run.ents[x];
                let l = self.locking.as_ref().expect("locking");
                if !v.live
                    || v.cpu != NONE
                    || v.blocked_on != NONE
                    || v.rec == NONE
                    || l.task_cpu[v.info.task as usize] != at
                {
                    continue;
                }
                let (rec, vi) = (v.rec, v.info);
                if urgency(self.policy.get(), &vi) < own {
                    let l = self.locking.as_mut().expect("locking");
                    if !l.marks.iter().any(|&(r, _)| r == rec) {
                        l.marks.push((rec, kind));
                    }
                }
            }
        }
    }

    /// Spinners on a CPU since the last decision accrue their spinning up to `now`; whether
    /// each is on one from now on (one preempted under `mrsp` pauses until it runs again;
    /// CPUs change only at decisions while an entity spins).
    fn observe_spinning(&mut self, now: Time) {
        for i in 0..self.locking.as_ref().expect("locking").spinning.len() {
            let (e, rec, since, on) = self.locking.as_ref().expect("locking").spinning[i];
            if on {
                self.add_spin(rec, now - since);
            }
            let on = self.run.ents[e as usize].cpu != NONE;
            self.locking.as_mut().expect("locking").spinning[i] = (e, rec, now, on);
        }
    }
}

/// Why `policy` cannot run `ts`'s locking protocols (docs/locking.md): it has no urgency for
/// the protocols to compare ([`Policy::urgency`]), or binds a user of an `msrp` or `mrsp`
/// resource to no CPU. Every driver of the ledger asks before a run (the simulator, the testbed).
pub fn refuses_locking(ts: &TaskSet, policy: &dyn Policy) -> Option<String> {
    let r = (0..ts.resources.len()).find(|&r| ts.protocol(r) != Protocol::None)?;
    let probe = EntityInfo {
        id: 0,
        task: 0,
        job: 0,
        region: 0,
        thread: 0,
        release: 0,
        deadline: ts.tasks.first().map_or(0, |t| t.deadline),
    };
    if let Some(why) = refuses_spinning(ts, policy).or_else(|| refuses_split(ts, policy)) {
        return Some(why);
    }
    if let Some(why) = omlp::refuses_partitioned(ts, policy) {
        return Some(why);
    }
    policy.urgency(&probe).is_none().then(|| {
        format!(
            "{}: resource '{}' uses {}, which scheduler '{}' does not take (locking protocols run under the fixed-priority and EDF domains: gfp, pfp, gedf, pedf, gfifo, gnpedf)",
            ts.source,
            ts.resources[r],
            ts.protocol(r).name(),
            policy.name()
        )
    })
}

/// Why `policy` cannot run `ts`'s uniprocessor ceiling protocols (`pcp`, `pcp:original`,
/// `srp`) on several CPUs: a resource's users must be bound to one CPU (a local resource), by
/// the policy's partition or else the file's `cpu` fields (checked when it loads; a set
/// without them is placed by the policy's partitioner, checked here: a global scheduler binds
/// no task).
fn refuses_split(ts: &TaskSet, policy: &dyn Policy) -> Option<String> {
    if ts.platform.cpus < 2 {
        return None;
    }
    for r in 0..ts.resources.len() {
        let p = ts.protocol(r);
        if !p.is_ceiling() {
            continue;
        }
        let cpu_of = |t: usize| policy.cpu_of_task(t as u32).or(ts.tasks[t].cpu);
        let mut users = ts.users(r).map(|t| (t, cpu_of(t)));
        let Some((first, cpu)) = users.next() else {
            continue;
        };
        let bad = match cpu {
            None => Some(first),
            Some(_) => users.find(|&(_, c)| c != cpu).map(|(t, _)| t),
        };
        if let Some(t) = bad {
            return Some(unbound(
                ts,
                policy,
                t,
                r,
                "a uniprocessor protocol",
                "does not bind its users to one CPU (give every task's 'cpu', or use pfp or pedf with a partitioner, which keeps them together)",
            ));
        }
    }
    None
}

/// Why `policy` cannot run `ts`'s multiprocessor protocols (`msrp`, `mrsp`, `fmlp+`, docs/locking.md):
/// they are for partitioned scheduling, and the policy binds a user of such a resource to no CPU.
fn refuses_spinning(ts: &TaskSet, policy: &dyn Policy) -> Option<String> {
    for r in 0..ts.resources.len() {
        let p = ts.protocol(r);
        if !p.partitioned() {
            continue;
        }
        if let Some(t) = ts
            .users(r)
            .find(|&t| policy.cpu_of_task(t as u32).is_none())
        {
            return Some(unbound(
                ts,
                policy,
                t,
                r,
                "a protocol for partitioned scheduling",
                "binds the task to no CPU (use pfp or pedf)",
            ));
        }
    }
    None
}

/// The message of a refusal of task `t`'s use of resource `r` because `policy` does not bind
/// it to a CPU as the resource's protocol (of `kind`) needs; `what` says what the scheduler
/// does instead, and the remedy.
fn unbound(
    ts: &TaskSet,
    policy: &dyn Policy,
    t: usize,
    r: usize,
    kind: &str,
    what: &str,
) -> String {
    format!(
        "{}: task '{}': resource '{}' uses {}, {kind}: scheduler '{}' {what}",
        ts.source,
        ts.tasks[t].name,
        ts.resources[r],
        ts.protocol(r).name(),
        policy.name()
    )
}
