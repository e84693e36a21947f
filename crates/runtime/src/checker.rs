//! A policy wrapper that asserts the call protocol of `rtsched_policies::policy` — who is
//! called when, and what holds at that moment — under any driver. Tests wrap policies in it
//! in the simulator and on the testbed; a violation panics with the call and the reason.
//!
//! What it tracks per entity is what the policy may assume: *ready* (the policy has it),
//! *running* on a CPU (the policy's last applied decision put it there), *blocked* (taken
//! away until `unblocked`). It checks, for each call:
//! - `now` never decreases;
//! - `release`/`forked` bring entities the policy does not have, released no later than `now`,
//!   with ids equal to their slots; a fork's threads are one job's region (threads 0, 1, ...);
//!   for a DAG job (region `DAG_REGION`), one job's nodes in increasing index order, one node
//!   only when forked on a CPU (a node completed there, others still live);
//! - `complete(e, cpu)` and `blocked(e, cpu)`: `e` runs on `cpu`; `blocked` follows
//!   `requested` for the same entity; `requested` names a running requester and a holder the
//!   policy knows;
//! - `unblocked(e)`: `e` was blocked; `aborted(e)`: `e` is ready or running (never blocked);
//! - `tick` only for a policy that asked for ticks;
//! - `schedule`: the CPUs show what the policy last decided, less what completed, blocked or
//!   was aborted; afterwards no entity is on two CPUs and only ready or running entities are
//!   placed;
//! - `place(e, Some((cpu, w)))` (MrsP's helping): `e` is ready or running, and `w` runs on
//!   `cpu`; and after each `schedule` of a partitioned policy (one with `cpu_of_task`), every
//!   entity runs on its task's CPU, or on the one it was last placed on.

use rtsched_model::Time;
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy, ResourceId};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    Running(u32),
    Blocked,
}

/// Wraps a policy and asserts the protocol (see the module doc). `log`, if given, receives one
/// line per event, for tests that compare event orders across drivers.
pub struct ProtocolChecker {
    inner: Box<dyn Policy>,
    ents: Vec<Option<(EntityInfo, State)>>,
    cpus: Vec<Option<EntityId>>,
    now: Time,
    requested: Option<EntityId>,
    /// Per entity slot: the CPU `place` put it on (u32::MAX: its own).
    away: Vec<u32>,
    calls: u64,
    log: Option<Arc<Mutex<Vec<String>>>>,
}

impl ProtocolChecker {
    pub fn new(inner: Box<dyn Policy>, cpus: u32) -> Self {
        ProtocolChecker {
            inner,
            ents: Vec::new(),
            cpus: vec![None; cpus as usize],
            now: 0,
            requested: None,
            away: Vec::new(),
            calls: 0,
            log: None,
        }
    }

    /// Also write every event, as `"<verb> task.job.region.thread"`, to `log`.
    pub fn with_log(mut self, log: Arc<Mutex<Vec<String>>>) -> Self {
        self.log = Some(log);
        self
    }

    /// Calls checked so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    #[track_caller]
    fn fail(&self, what: &str) -> ! {
        panic!(
            "protocol violation at t={} in policy '{}': {what}",
            self.now,
            self.inner.name()
        );
    }

    fn at(&mut self, now: Time, call: &str) {
        self.calls += 1;
        if now < self.now {
            self.fail(&format!(
                "{call}: time went back from {} to {now}",
                self.now
            ));
        }
        self.now = now;
    }

    fn state(&self, e: EntityId, call: &str) -> (EntityInfo, State) {
        match self.ents.get(e as usize).copied().flatten() {
            Some(s) => s,
            None => self.fail(&format!(
                "{call}: entity {e}, which the policy does not have"
            )),
        }
    }

    fn set(&mut self, e: EntityId, s: Option<(EntityInfo, State)>) {
        let i = e as usize;
        if self.ents.len() <= i {
            self.ents.resize(i + 1, None);
        }
        self.ents[i] = s;
    }

    fn set_away(&mut self, e: EntityId, cpu: u32) {
        let i = e as usize;
        if self.away.len() <= i {
            self.away.resize(i + 1, u32::MAX);
        }
        self.away[i] = cpu;
    }

    /// A partitioned policy runs `e` on `c`: its task's CPU, or where it was placed.
    fn bound(&self, e: EntityId, c: u32) {
        let (i, _) = self.state(e, "schedule");
        let Some(home) = self.inner.cpu_of_task(i.task) else {
            return;
        };
        let away = self.away.get(e as usize).copied().unwrap_or(u32::MAX);
        if c != home && c != away {
            self.fail(&format!(
                "schedule: entity {e} of task {} (bound to CPU {home}) runs on CPU {c}",
                i.task
            ));
        }
    }

    fn note(&self, verb: &str, i: &EntityInfo) {
        if let Some(l) = &self.log {
            l.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
                "{verb} {}.{}.{}.{}",
                i.task, i.job, i.region, i.thread
            ));
        }
    }

    fn arrive(&mut self, now: Time, i: &EntityInfo, call: &str) {
        self.set_away(i.id, u32::MAX);
        // A blocked entity whose job is aborted goes silently (the policy gave it up when it
        // blocked), so its slot may come back; any other still belongs to the policy.
        if let Some((_, s)) = self.ents.get(i.id as usize).copied().flatten() {
            if s != State::Blocked {
                self.fail(&format!(
                    "{call}: entity {} arrives while the policy still has it ({s:?})",
                    i.id
                ));
            }
        }
        if i.release > now || i.deadline < i.release {
            self.fail(&format!(
                "{call}: entity {} has release {} and deadline {} at {now}",
                i.id, i.release, i.deadline
            ));
        }
        self.set(i.id, Some((*i, State::Ready)));
    }

    fn off_cpu(&mut self, e: EntityId, cpu: u32, call: &str) -> EntityInfo {
        let (i, s) = self.state(e, call);
        if s != State::Running(cpu) || self.cpus.get(cpu as usize).copied().flatten() != Some(e) {
            self.fail(&format!(
                "{call}: entity {e} on CPU {cpu}, but it is {s:?} and the CPU runs {:?}",
                self.cpus.get(cpu as usize)
            ));
        }
        self.cpus[cpu as usize] = None;
        i
    }
}

impl Policy for ProtocolChecker {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn release(&mut self, now: Time, e: &EntityInfo) {
        self.at(now, "release");
        self.arrive(now, e, "release");
        self.note("release", e);
        self.inner.release(now, e)
    }

    fn forked(&mut self, now: Time, cpu: Option<u32>, threads: &[EntityInfo]) {
        self.at(now, "forked");
        let dag = threads
            .first()
            .is_some_and(|f| f.region == rtsched_policies::DAG_REGION);
        if dag {
            if threads.is_empty() || (threads.len() < 2 && cpu.is_none()) {
                self.fail(&format!(
                    "forked: {} node(s) on {cpu:?}; a job's single source arrives by release",
                    threads.len()
                ));
            }
            let f = &threads[0];
            for (k, t) in threads.iter().enumerate() {
                if (t.task, t.job, t.region) != (f.task, f.job, rtsched_policies::DAG_REGION)
                    || (k > 0 && t.thread <= threads[k - 1].thread)
                {
                    self.fail(&format!(
                        "forked: node {k} is {t:?}, not a later node of the job of {f:?}"
                    ));
                }
            }
        } else if threads.len() < 2 {
            self.fail(&format!(
                "forked: {} thread(s); a single thread arrives by release",
                threads.len()
            ));
        }
        if cpu.is_some_and(|c| c as usize >= self.cpus.len()) {
            self.fail(&format!("forked: on CPU {cpu:?}, which does not exist"));
        }
        for (k, t) in threads.iter().enumerate() {
            let f = &threads[0];
            if !dag && (t.task, t.job, t.region, t.thread) != (f.task, f.job, f.region, k as u32) {
                self.fail(&format!(
                    "forked: thread {k} is {t:?}, not thread {k} of the region of {f:?}"
                ));
            }
            self.arrive(now, t, "forked");
        }
        if let Some(l) = &self.log {
            let names: Vec<String> = threads
                .iter()
                .map(|i| format!("{}.{}.{}.{}", i.task, i.job, i.region, i.thread))
                .collect();
            l.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("forked {} on {cpu:?}", names.join(" ")));
        }
        self.inner.forked(now, cpu, threads)
    }

    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.at(now, "complete");
        let i = self.off_cpu(e, cpu, "complete");
        self.set(e, None);
        self.note("complete", &i);
        self.inner.complete(now, e, cpu)
    }

    fn aborted(&mut self, now: Time, e: EntityId) {
        self.at(now, "aborted");
        let (i, s) = self.state(e, "aborted");
        match s {
            State::Blocked => self.fail(&format!(
                "aborted: entity {e} is blocked (the policy gave it up)"
            )),
            State::Running(c) => {
                self.off_cpu(e, c, "aborted");
            }
            State::Ready => {}
        }
        self.set(e, None);
        self.note("aborted", &i);
        self.inner.aborted(now, e)
    }

    fn requested(&mut self, now: Time, e: EntityId, r: ResourceId, holder: Option<EntityId>) {
        self.at(now, "requested");
        let (_, s) = self.state(e, "requested");
        if !matches!(s, State::Running(_)) {
            self.fail(&format!("requested: entity {e} is {s:?}, not running"));
        }
        if let Some(h) = holder {
            if h == e {
                self.fail(&format!(
                    "requested: entity {e} requests resource {r}, which it holds"
                ));
            }
            self.state(h, "requested (holder)");
        }
        self.requested = Some(e);
        self.inner.requested(now, e, r, holder)
    }

    fn blocked(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.at(now, "blocked");
        if self.requested.take() != Some(e) {
            self.fail(&format!(
                "blocked: entity {e} blocked without `requested` just before"
            ));
        }
        let i = self.off_cpu(e, cpu, "blocked");
        self.set(e, Some((i, State::Blocked)));
        self.note("blocked", &i);
        self.inner.blocked(now, e, cpu)
    }

    fn released(&mut self, now: Time, e: EntityId, r: ResourceId) {
        self.at(now, "released");
        self.state(e, "released");
        self.inner.released(now, e, r)
    }

    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        self.at(now, "unblocked");
        let (i, s) = self.state(e.id, "unblocked");
        if s != State::Blocked || i != *e {
            self.fail(&format!(
                "unblocked: entity {} is {s:?} (info {i:?}, given {e:?})",
                e.id
            ));
        }
        self.set(e.id, Some((i, State::Ready)));
        self.note("unblocked", e);
        self.inner.unblocked(now, e)
    }

    fn grants_resources(&self) -> bool {
        self.inner.grants_resources()
    }

    fn cpu_of_task(&self, task: u32) -> Option<u32> {
        self.inner.cpu_of_task(task)
    }
    fn urgency(&self, e: &EntityInfo) -> Option<rtsched_policies::Urgency> {
        self.inner.urgency(e)
    }

    /// A boost names a live entity, ready or running, by the identity it was given with, and
    /// lends it an urgency more urgent than its own (docs/locking.md).
    fn boost(&mut self, now: Time, e: &EntityInfo, to: Option<rtsched_policies::Urgency>) {
        self.at(now, "boost");
        let (i, s) = self.state(e.id, "boost");
        if s == State::Blocked || i != *e {
            self.fail(&format!(
                "boost: entity {} is {s:?} (info {i:?}, given {e:?})",
                e.id
            ));
        }
        if let (Some(t), Some(own)) = (to, self.inner.urgency(e)) {
            if t >= own {
                self.fail(&format!(
                    "boost: entity {} lent {t:?}, not more urgent than its own {own:?}",
                    e.id
                ));
            }
        }
        self.inner.boost(now, e, to)
    }

    /// A placement (MrsP's helping) names a live entity, ready or running, by its identity, and
    /// a spinner `w` it stands in for that runs on the CPU named.
    fn place(&mut self, now: Time, e: &EntityInfo, to: Option<(u32, EntityId)>) -> bool {
        self.at(now, "place");
        let (i, s) = self.state(e.id, "place");
        if s == State::Blocked || i != *e {
            self.fail(&format!(
                "place: entity {} is {s:?} (info {i:?}, given {e:?})",
                e.id
            ));
        }
        if let Some((cpu, w)) = to {
            let ws = self.ents.get(w as usize).copied().flatten().map(|x| x.1);
            if ws != Some(State::Running(cpu)) || w == e.id {
                self.fail(&format!(
                    "place: entity {} in the place of {w} on CPU {cpu}, which is {ws:?}",
                    e.id
                ));
            }
        }
        self.set_away(e.id, to.map_or(u32::MAX, |t| t.0));
        self.inner.place(now, e, to)
    }

    fn uses_tufs(&self) -> bool {
        self.inner.uses_tufs()
    }

    fn resolves_deadlocks(&self) -> bool {
        self.inner.resolves_deadlocks()
    }

    fn deadlock(&mut self, now: Time, cycle: &[EntityId]) {
        self.at(now, "deadlock");
        if cycle.len() < 2 {
            self.fail(&format!("deadlock: a cycle of {} entities", cycle.len()));
        }
        for &e in cycle {
            let (_, s) = self.state(e, "deadlock");
            if s != State::Blocked {
                self.fail(&format!(
                    "deadlock: entity {e} of the cycle is {s:?}, not blocked"
                ));
            }
        }
        self.inner.deadlock(now, cycle)
    }

    fn timer(&mut self, now: Time) {
        self.at(now, "timer");
        self.inner.timer(now)
    }

    fn tick_interval(&self) -> Option<Time> {
        self.inner.tick_interval()
    }

    fn tick(&mut self, now: Time, cpu: u32) {
        self.at(now, "tick");
        if self.inner.tick_interval().is_none() || cpu as usize >= self.cpus.len() {
            self.fail(&format!("tick on CPU {cpu} for a policy without ticks"));
        }
        self.inner.tick(now, cpu)
    }

    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        self.at(now, "schedule");
        for c in 0..self.cpus.len() {
            if d.current(c as u32) != self.cpus[c] {
                self.fail(&format!(
                    "schedule: CPU {c} shows {:?}, but the policy's last decision there is {:?}",
                    d.current(c as u32),
                    self.cpus[c]
                ));
            }
            if d.run().running(c as u32) != self.cpus[c] {
                self.fail(&format!(
                    "schedule: the run view says CPU {c} runs {:?}, expected {:?}",
                    d.run().running(c as u32),
                    self.cpus[c]
                ));
            }
        }
        self.inner.schedule(now, d);
        for &(r, e) in d.granted() {
            match self.state(e, "grant") {
                (i, State::Blocked) => self.set(e, Some((i, State::Ready))),
                (_, s) => self.fail(&format!(
                    "grant: resource {r} to entity {e}, which is {s:?}, not blocked"
                )),
            }
        }
        let mut placed = vec![None; self.cpus.len()];
        for (c, p) in placed.iter_mut().enumerate() {
            if let Some(e) = d.current(c as u32) {
                let (_, s) = self.state(e, "schedule");
                if s == State::Blocked {
                    self.fail(&format!("schedule: placed blocked entity {e} on CPU {c}"));
                }
                self.bound(e, c as u32);
                *p = Some(e);
            }
        }
        for c in 0..placed.len() {
            if let Some(e) = placed[c] {
                if placed[c + 1..].contains(&Some(e)) {
                    self.fail(&format!("schedule: entity {e} placed on two CPUs"));
                }
            }
        }
        for c in 0..self.cpus.len() {
            if let Some(e) = self.cpus[c] {
                if let Some((i, State::Running(_))) = self.ents[e as usize] {
                    self.ents[e as usize] = Some((i, State::Ready));
                }
            }
        }
        for (c, p) in placed.iter().enumerate() {
            if let Some(e) = p {
                let (i, _) = self.state(*e, "schedule");
                self.ents[*e as usize] = Some((i, State::Running(c as u32)));
            }
        }
        self.cpus = placed;
    }

    fn finish(&mut self, end: Time) {
        self.inner.finish(end)
    }

    fn stats(&self) -> Vec<(String, f64)> {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::Task;
    use rtsched_policies::{Decisions, RunView};

    /// A policy that places whatever it was told to place, and nothing else.
    struct Puppet {
        place: Vec<(u32, Option<EntityId>)>,
    }
    impl Policy for Puppet {
        fn name(&self) -> String {
            "puppet".into()
        }
        fn release(&mut self, _: Time, _: &EntityInfo) {}
        fn complete(&mut self, _: Time, _: EntityId, _: u32) {}
        fn aborted(&mut self, _: Time, _: EntityId) {}
        fn schedule(&mut self, _: Time, d: &mut Dispatch<'_>) {
            for (c, e) in self.place.drain(..) {
                d.assign(c, e);
            }
        }
    }

    /// A view that agrees with whatever the decisions say.
    struct Blank(Task);
    impl RunView for Blank {
        fn now(&self) -> Time {
            0
        }
        fn running(&self, _: u32) -> Option<EntityId> {
            None
        }
        fn entity(&self, _: EntityId) -> Option<EntityInfo> {
            None
        }
        fn executed(&self, _: EntityId) -> Time {
            0
        }
        fn waiting_for(&self, _: EntityId) -> Option<(ResourceId, EntityId)> {
            None
        }
        fn holder(&self, _: ResourceId) -> Option<EntityId> {
            None
        }
        fn waiters(&self, _: ResourceId) -> Vec<EntityId> {
            Vec::new()
        }
        fn task(&self, _: u32) -> &Task {
            &self.0
        }
    }

    fn info(id: EntityId) -> EntityInfo {
        EntityInfo {
            id,
            task: id,
            job: 0,
            region: 0,
            thread: 0,
            release: 0,
            deadline: 10,
        }
    }

    fn checker() -> ProtocolChecker {
        ProtocolChecker::new(Box::new(Puppet { place: Vec::new() }), 2)
    }

    fn panics(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let e = std::panic::catch_unwind(f).expect_err("the checker accepted a protocol violation");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    /// A partitioned puppet: task t bound to CPU t, and it places as the ledger asks.
    struct Bound(Puppet);
    impl Policy for Bound {
        fn name(&self) -> String {
            "bound".into()
        }
        fn release(&mut self, _: Time, _: &EntityInfo) {}
        fn complete(&mut self, _: Time, _: EntityId, _: u32) {}
        fn aborted(&mut self, _: Time, _: EntityId) {}
        fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
            self.0.schedule(now, d)
        }
        fn cpu_of_task(&self, task: u32) -> Option<u32> {
            Some(task)
        }
        fn place(&mut self, _: Time, _: &EntityInfo, _: Option<(u32, EntityId)>) -> bool {
            true
        }
    }

    /// A view whose CPUs run what it is told.
    struct Runs(Blank, [Option<EntityId>; 2]);
    impl RunView for Runs {
        fn now(&self) -> Time {
            0
        }
        fn running(&self, cpu: u32) -> Option<EntityId> {
            self.1[cpu as usize]
        }
        fn entity(&self, _: EntityId) -> Option<EntityInfo> {
            None
        }
        fn executed(&self, _: EntityId) -> Time {
            0
        }
        fn waiting_for(&self, _: EntityId) -> Option<(ResourceId, EntityId)> {
            None
        }
        fn holder(&self, _: ResourceId) -> Option<EntityId> {
            None
        }
        fn waiters(&self, _: ResourceId) -> Vec<EntityId> {
            Vec::new()
        }
        fn task(&self, t: u32) -> &Task {
            self.0.task(t)
        }
    }

    /// Under a partitioned policy an entity runs off its task's CPU only where the ledger
    /// placed it (MrsP's helping): entity 0 (bound to CPU 0) taking CPU 1 from entity 1 is
    /// accepted after `place(0, (1, 1))`, and rejected without it.
    #[test]
    fn a_partitioned_entity_runs_off_its_cpu_only_where_placed() {
        let go = |placed: bool| {
            let mut c = ProtocolChecker::new(Box::new(Bound(Puppet { place: Vec::new() })), 2);
            let mut dec = Decisions::new(2);
            c.release(0, &info(0));
            c.release(0, &info(1));
            c.inner = Box::new(Bound(Puppet {
                place: vec![(1, Some(1))],
            }));
            let view = Runs(Blank(Task::periodic("t", 10, 1)), [None, None]);
            c.schedule(0, &mut Dispatch::new(&mut dec, &view));
            if placed {
                assert!(c.place(1, &info(0), Some((1, 1))));
            }
            c.inner = Box::new(Bound(Puppet {
                place: vec![(1, Some(0))],
            }));
            let view = Runs(Blank(Task::periodic("t", 10, 1)), [None, Some(1)]);
            c.schedule(1, &mut Dispatch::new(&mut dec, &view));
        };
        go(true);
        let m = panics(move || go(false));
        assert!(m.contains("bound to CPU 0) runs on CPU 1"), "{m}");
    }

    #[test]
    fn a_correct_sequence_passes() {
        let mut c = checker();
        let mut dec = Decisions::new(2);
        let view = Blank(Task::periodic("t", 10, 1));
        c.release(0, &info(0));
        c.release(0, &info(1));
        c.inner = Box::new(Puppet {
            place: vec![(0, Some(0)), (1, Some(1))],
        });
        c.schedule(0, &mut Dispatch::new(&mut dec, &view));
        dec.vacate(0);
        c.complete(3, 0, 0);
        c.requested(4, 1, 0, None);
        dec.vacate(1);
        c.blocked(4, 1, 1);
        c.unblocked(5, &info(1));
        c.schedule(5, &mut Dispatch::new(&mut dec, &view));
        c.aborted(6, 1);
        assert!(c.calls() >= 9);
    }

    /// DAG forks: one node may be forked on a CPU (others of the job live); a single node
    /// forked on no CPU (a job's one source arrives by release), nodes out of index order or of
    /// two jobs are violations; a region's fork keeps its own rule.
    #[test]
    fn dag_forks_follow_the_dag_rule() {
        let node = |id: EntityId, thread: u32, job: u64| EntityInfo {
            task: 0,
            job,
            region: rtsched_policies::DAG_REGION,
            thread,
            ..info(id)
        };
        let mut c = checker();
        c.forked(0, Some(1), &[node(0, 2, 0)]);
        c.forked(0, None, &[node(1, 0, 0), node(2, 3, 0)]);
        let m = panics(|| checker().forked(0, None, &[node(0, 0, 0)]));
        assert!(m.contains("single source"), "{m}");
        let m = panics(|| checker().forked(0, Some(0), &[node(0, 3, 0), node(1, 1, 0)]));
        assert!(m.contains("not a later node"), "{m}");
        let m = panics(|| checker().forked(0, Some(0), &[node(0, 1, 0), node(1, 2, 1)]));
        assert!(m.contains("not a later node"), "{m}");
        let thread = |id: EntityId, thread: u32| EntityInfo {
            task: 0,
            thread,
            ..info(id)
        };
        let m = panics(|| checker().forked(0, Some(0), &[thread(0, 0)]));
        assert!(m.contains("arrives by release"), "{m}");
    }

    /// A boost (docs/locking.md) names a ready or running entity and lends it more than its
    /// own urgency: under gedf, an earlier deadline.
    #[test]
    fn boosts_are_checked() {
        let ts = rtsched_model::TaskSet::new(2, vec![Task::periodic("t", 10, 1); 2]);
        let edf = || {
            let mut c = ProtocolChecker::new(rtsched_policies::build("gedf", &ts).unwrap(), 2);
            c.release(0, &info(0));
            c
        };
        let mut c = edf();
        c.boost(0, &info(0), Some((5, 0)));
        c.boost(0, &info(0), None);
        let m = panics(move || edf().boost(0, &info(0), Some((10, 0))));
        assert!(m.contains("not more urgent"), "{m}");
        let m = panics(move || edf().boost(0, &info(1), Some((5, 0))));
        assert!(m.contains("boost"), "{m}");
    }

    #[test]
    fn violations_are_caught() {
        let m = panics(|| checker().complete(0, 3, 0));
        assert!(m.contains("does not have"), "{m}");
        let m = panics(|| {
            let mut c = checker();
            c.release(0, &info(0));
            c.release(0, &info(0));
        });
        assert!(m.contains("still has it"), "{m}");
        let m = panics(|| {
            let mut c = checker();
            c.release(5, &info(0));
            c.aborted(4, 0);
        });
        assert!(m.contains("time went back"), "{m}");
        let m = panics(|| {
            let mut c = checker();
            c.release(0, &info(0));
            c.complete(1, 0, 0);
        });
        assert!(m.contains("on CPU 0"), "{m}");
        // Blocking without a request, aborting a blocked entity, placing a blocked entity.
        let running = || {
            let mut c = checker();
            let mut dec = Decisions::new(2);
            let view = Blank(Task::periodic("t", 10, 1));
            c.release(0, &info(0));
            c.inner = Box::new(Puppet {
                place: vec![(0, Some(0))],
            });
            c.schedule(0, &mut Dispatch::new(&mut dec, &view));
            dec.vacate(0);
            (c, dec)
        };
        let m = panics(move || running().0.blocked(1, 0, 0));
        assert!(m.contains("without `requested`"), "{m}");
        let m = panics(move || {
            let (mut c, _) = running();
            c.requested(1, 0, 0, None);
            c.blocked(1, 0, 0);
            c.aborted(2, 0);
        });
        assert!(m.contains("is blocked"), "{m}");
        let m = panics(move || {
            let (mut c, mut dec) = running();
            let view = Blank(Task::periodic("t", 10, 1));
            c.requested(1, 0, 0, None);
            c.blocked(1, 0, 0);
            c.inner = Box::new(Puppet {
                place: vec![(1, Some(0))],
            });
            c.schedule(2, &mut Dispatch::new(&mut dec, &view));
        });
        assert!(m.contains("placed blocked entity"), "{m}");
        // A substrate that forgot to vacate a completed entity's CPU.
        let m = panics(move || {
            let (mut c, mut dec) = running();
            let view = Blank(Task::periodic("t", 10, 1));
            dec.assign_for_test(0, Some(0));
            c.complete(1, 0, 0);
            c.schedule(1, &mut Dispatch::new(&mut dec, &view));
        });
        assert!(m.contains("shows Some(0)"), "{m}");
    }
}
