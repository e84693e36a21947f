//! ChronOS's two global scheduling models and its task→CPU mapper (ChronOS §5.2–5.3), as a
//! framework any global policy that can *choose* runs in.
//!
//! A policy implements [`Choose`]: from the entities it tracks (ready, running and blocked,
//! [`Tracked`]) it names at most m *runnable* entities that should run now, best first, and
//! the jobs it aborts. [`GlobalModel`] wraps it into a [`Policy`] and decides which CPU runs
//! what, under one of two models (option `model=`) and, for stop-the-world, one of two
//! mappers (option `mapper=`):
//!
//! 1. **Stop-the-world** (`stw`, §5.2.2). At each instant with events (any CPU event, a
//!    release, an unblock, a timer, or a redecision after the policy's own aborts) one
//!    decision for all m CPUs: `choose`, then the mapper places the chosen entities.
//!    CPUs left without a chosen entity idle.
//! 2. **The 3-pass mapper** (`3pass`, §5.3, Fig 4). Pass 1: a chosen entity that is running
//!    stays on its CPU. Pass 2: each other chosen entity, best first, goes to the CPU it is
//!    *queued on* if that CPU is still free. The queued CPU is the CPU the entity last ran on;
//!    for an entity that never ran, the CPU its task's latest running job last ran on (none for
//!    a task that never ran). Pass 3: the rest, best first, go to the remaining CPUs in
//!    ascending order. `none`: the i-th chosen entity goes to CPU i — no mapping, so what the
//!    mapper saves shows in the migration counts. The two mappers see the same chosen list at
//!    each instant and differ only in placement.
//! 3. **Application-concurrent** (`ac`, §5.2.1). No decision for all: each CPU decides for
//!    itself, one at a time under the global lock, in ascending CPU order. The deciding CPUs
//!    of an instant are: those with an event of their own (`Dispatch::event_cpus`: their
//!    entity completed, blocked or was aborted; their tick), the idle ones (the IPI of
//!    §5.2.1 wakes them), and the queued CPU of each entity released or unblocked since the
//!    last decision. `choose` runs once per instant (the list is what each CPU would compute
//!    under the lock; no CPU's decision changes the tracked set). A deciding CPU takes the
//!    best entity of the chosen list that no CPU runs (after the earlier CPUs' decisions of
//!    this round): if it has no entity; or, for a preemptive policy, if that entity ranks
//!    before its own in the list (one not in the list ranks last; a preemptive CPU whose own
//!    entity is not chosen and finds no candidate idles). A non-preemptive CPU keeps its own.
//!    Every other CPU keeps what it runs, even an entity no longer chosen — the
//!    difference from stw: a release preempts only at the next event of a deciding CPU.
//!
//! Aborts asked by `choose` are issued before placement and never placed; the ledger calls
//! `schedule` again at the same instant, which decides again. A chooser may ask for a timer
//! ([`Choose::wake`]), e.g. when a waiting job becomes hopeless, and may choose who gets a
//! freed resource ([`Choose::grant_by`]: before `choose`, so the grantee is a candidate).
//!
//! Cost per decision: O(m + n) here plus the chooser's (O(n log n) for a sort). Scratch
//! vectors live in the wrapper; nothing is allocated per decision once ids have been seen.

use super::ua::{self, Alarm, GrantBy, Tracked};
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy, ResourceId, RunView};
use crate::spec::SchedulerSpec;
use rtsched_model::Time;

const NO_CPU: u32 = u32::MAX;
const NO_RANK: u32 = u32::MAX;

/// What a chooser decides: entities to run (runnable, at most m, best first) and jobs to abort.
#[derive(Clone, Debug, Default)]
pub struct Choice {
    pub run: Vec<EntityId>,
    pub abort: Vec<EntityId>,
}

/// A global policy that chooses what runs (ChronOS's `schedule` hook of a global scheduler).
pub trait Choose: Send + 'static {
    /// Fill `out` (cleared by the caller): at most `m` runnable tracked entities (live, not
    /// blocked, not aborted), best first, and the entities whose jobs to abort.
    fn choose(
        &mut self,
        now: Time,
        view: &dyn RunView,
        tracked: &Tracked,
        m: u32,
        out: &mut Choice,
    );
    /// Whether a better entity may take a CPU from a running one (used by `ac`).
    fn preemptive(&self) -> bool {
        true
    }
    fn uses_tufs(&self) -> bool {
        false
    }
    fn resolves_deadlocks(&self) -> bool {
        false
    }
    /// [`Policy::decision_work`] of the choice (the model's placement adds `m + n`).
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        m.saturating_add(n)
    }
    /// A deadlock among `cycle` (see [`Policy::deadlock`]): abort one of them in the next `choose`.
    fn deadlock(&mut self, _now: Time, _cycle: &[EntityId]) {}
    /// When the chooser wants to decide again even if nothing happens (after `choose`).
    fn wake(&self, _now: Time, _view: &dyn RunView, _tracked: &Tracked, _m: u32) -> Option<Time> {
        None
    }
    /// How the chooser hands a freed resource to a waiter (`None`: the substrate's FIFO).
    fn grant_by(&self) -> Option<GrantBy> {
        None
    }
}

/// `model=`: how the CPUs decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    StopTheWorld,
    AppConcurrent,
}

/// `mapper=`: how a stop-the-world decision places the chosen entities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapper {
    ThreePass,
    None,
}

impl Model {
    pub fn as_str(self) -> &'static str {
        match self {
            Model::StopTheWorld => "stw",
            Model::AppConcurrent => "ac",
        }
    }
}

impl Mapper {
    pub fn as_str(self) -> &'static str {
        match self {
            Mapper::ThreePass => "3pass",
            Mapper::None => "none",
        }
    }
}

/// The help text of the two options.
pub const OPTIONS: &str = "model=stw|ac (ChronOS §5.2), mapper=3pass|none (§5.3)";

/// Read `model=` and `mapper=` from `spec`, which may carry no other option. `Ok(None)` when
/// neither is given (a policy with a faster native path keeps it); defaults fill the other.
pub fn options(spec: &SchedulerSpec) -> Result<Option<(Model, Mapper)>, String> {
    let allowed = ["model", "mapper"];
    for (k, v) in &spec.options {
        if !allowed.contains(&k.as_str()) {
            let k = if k.is_empty() { v.as_str() } else { k.as_str() };
            return Err(format!("scheduler '{}' has no option '{k}' (known: model, mapper; write model=stw|ac, mapper=3pass|none)", spec.name));
        }
    }
    read(spec)
}

/// Read `model=` and `mapper=` from `spec`, whose other options the caller validates.
pub fn read(spec: &SchedulerSpec) -> Result<Option<(Model, Mapper)>, String> {
    let value = |key: &str| {
        spec.options
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let (model, mapper) = (value("model"), value("mapper"));
    if model.is_none() && mapper.is_none() {
        return Ok(None);
    }
    let model = match model.as_deref() {
        None | Some("stw") => Model::StopTheWorld,
        Some("ac") => Model::AppConcurrent,
        Some(x) => {
            return Err(format!(
                "scheduler '{}': option 'model': unknown model '{x}' (known: stw, ac)",
                spec.name
            ))
        }
    };
    let mapper = match mapper.as_deref() {
        None | Some("3pass") => Mapper::ThreePass,
        Some("none") => Mapper::None,
        Some(x) => {
            return Err(format!(
                "scheduler '{}': option 'mapper': unknown mapper '{x}' (known: 3pass, none)",
                spec.name
            ))
        }
    };
    Ok(Some((model, mapper)))
}

/// A [`Choose`] policy run under a global model (see the module doc).
pub struct GlobalModel<C: Choose> {
    label: String,
    pub chooser: C,
    model: Model,
    mapper: Mapper,
    m: u32,
    tracked: Tracked,
    /// Per entity id: the CPU it last ran on (its queued CPU), or NO_CPU.
    last_cpu: Vec<u32>,
    /// Per task: the CPU its latest running entity was placed on, or NO_CPU.
    task_last: Vec<u32>,
    /// Queued CPUs of entities released or unblocked since the last decision (ac).
    woken: Vec<u32>,
    /// Decide at the next `schedule` even without events (own aborts, deadlock, timer).
    force: bool,
    /// The earliest timer asked for and not yet fired.
    alarm: Alarm,
    /// Scratch: the resources awaiting a grant.
    pending: Vec<ResourceId>,
    choice: Choice,
    /// Scratch: per CPU the placement being built; per entity id its rank in the chosen list
    /// (valid when `stamp_of[e] == stamp`) and whether it is placed.
    target: Vec<Option<EntityId>>,
    rank: Vec<u32>,
    stamp_of: Vec<u32>,
    placed: Vec<u32>,
    stamp: u32,
    deciders: Vec<u32>,
}

impl<C: Choose> GlobalModel<C> {
    pub fn new(
        label: impl Into<String>,
        chooser: C,
        cpus: u32,
        model: Model,
        mapper: Mapper,
    ) -> Self {
        GlobalModel {
            label: label.into(),
            chooser,
            model,
            mapper,
            m: cpus,
            tracked: Tracked::new(),
            last_cpu: Vec::with_capacity(64),
            task_last: Vec::new(),
            woken: Vec::with_capacity(cpus as usize),
            force: false,
            alarm: Alarm::default(),
            pending: Vec::new(),
            choice: Choice {
                run: Vec::with_capacity(cpus as usize),
                abort: Vec::new(),
            },
            target: vec![None; cpus as usize],
            rank: Vec::with_capacity(64),
            stamp_of: Vec::with_capacity(64),
            placed: Vec::with_capacity(64),
            stamp: 0,
            deciders: Vec::with_capacity(cpus as usize),
        }
    }

    fn grow(&mut self, e: EntityId) {
        let i = e as usize + 1;
        if self.last_cpu.len() < i {
            self.last_cpu.resize(i, NO_CPU);
            self.rank.resize(i, NO_RANK);
            self.stamp_of.resize(i, 0);
            self.placed.resize(i, 0);
        }
    }

    fn queued_cpu(&self, e: EntityId) -> u32 {
        self.last_cpu.get(e as usize).copied().unwrap_or(NO_CPU)
    }

    /// Put `e` on `cpu` in the decision being built.
    fn place(&mut self, cpu: u32, e: EntityId) {
        self.target[cpu as usize] = Some(e);
        self.placed[e as usize] = self.stamp;
    }

    fn is_placed(&self, e: EntityId) -> bool {
        self.placed[e as usize] == self.stamp
    }

    /// `e`'s position in the chosen list, or NO_RANK.
    fn rank_of(&self, e: EntityId) -> u32 {
        match self.stamp_of.get(e as usize) {
            Some(&s) if s == self.stamp => self.rank[e as usize],
            _ => NO_RANK,
        }
    }

    /// Stop-the-world: place the whole chosen list (module doc, items 1–2).
    fn map_all(&mut self, d: &mut Dispatch) {
        self.target.iter_mut().for_each(|t| *t = None);
        let n = self.choice.run.len();
        match self.mapper {
            Mapper::None => {
                for i in 0..n {
                    let e = self.choice.run[i];
                    self.place(i as u32, e);
                }
            }
            Mapper::ThreePass => {
                // Pass 1: running chosen entities stay where they run.
                for c in 0..self.m {
                    if let Some(e) = d.current(c) {
                        if self.rank_of(e) != NO_RANK {
                            self.place(c, e);
                        }
                    }
                }
                // Pass 2: the others go to their queued CPU if it is free.
                for i in 0..n {
                    let e = self.choice.run[i];
                    let q = self.queued_cpu(e);
                    if !self.is_placed(e) && q < self.m && self.target[q as usize].is_none() {
                        self.place(q, e);
                    }
                }
                // Pass 3: the rest on the remaining CPUs, ascending.
                let mut c = 0usize;
                for i in 0..n {
                    let e = self.choice.run[i];
                    if self.is_placed(e) {
                        continue;
                    }
                    while self.target[c].is_some() {
                        c += 1;
                    }
                    self.place(c as u32, e);
                }
            }
        }
        for c in 0..self.m {
            let t = self.target[c as usize];
            if d.current(c) != t {
                d.assign(c, t);
            }
        }
    }

    /// Application-concurrent: each deciding CPU in turn (module doc, item 3).
    fn decide_each(&mut self, d: &mut Dispatch) {
        self.deciders.clear();
        self.deciders.extend_from_slice(d.event_cpus());
        self.deciders
            .extend(self.woken.iter().copied().filter(|&q| q < self.m));
        for c in 0..self.m {
            if d.current(c).is_none() {
                self.deciders.push(c);
            }
        }
        self.deciders.sort_unstable();
        self.deciders.dedup();
        // What runs now counts as taken; an entity being aborted is no CPU's any more.
        for c in 0..self.m {
            if let Some(e) = d.current(c) {
                if !self.choice.abort.contains(&e) {
                    self.grow(e);
                    self.placed[e as usize] = self.stamp;
                }
            }
        }
        let preemptive = self.chooser.preemptive();
        for k in 0..self.deciders.len() {
            let c = self.deciders[k];
            let own = d.current(c).filter(|e| !self.choice.abort.contains(e));
            let cand = self
                .choice
                .run
                .iter()
                .copied()
                .find(|&e| !self.is_placed(e));
            let take = match (own, cand) {
                (None, _) => cand,
                (Some(o), Some(x)) if preemptive && self.rank_of(x) < self.rank_of(o) => Some(x),
                (Some(o), None) if preemptive && self.rank_of(o) == NO_RANK => None,
                (Some(o), _) => Some(o),
            };
            if take != own {
                if let Some(o) = own {
                    self.placed[o as usize] = 0;
                }
                if let Some(x) = take {
                    self.placed[x as usize] = self.stamp;
                }
            }
            if take != d.current(c) {
                d.assign(c, take);
            }
        }
    }
}

impl<C: Choose> Policy for GlobalModel<C> {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn release(&mut self, _now: Time, e: &EntityInfo) {
        self.grow(e.id);
        let t = e.task as usize;
        if self.task_last.len() <= t {
            self.task_last.resize(t + 1, NO_CPU);
        }
        self.tracked.add(e);
        let q = self.task_last[t];
        self.last_cpu[e.id as usize] = q;
        self.woken.push(q);
    }
    fn complete(&mut self, _now: Time, e: EntityId, _cpu: u32) {
        self.tracked.remove(e);
    }
    fn aborted(&mut self, _now: Time, e: EntityId) {
        self.tracked.remove(e);
    }
    fn blocked(&mut self, _now: Time, e: EntityId, _cpu: u32) {
        self.tracked.set_blocked(e, true);
    }
    fn unblocked(&mut self, _now: Time, e: &EntityInfo) {
        self.grow(e.id);
        self.tracked.add(e);
        self.woken.push(self.last_cpu[e.id as usize]);
    }
    fn uses_tufs(&self) -> bool {
        self.chooser.uses_tufs()
    }
    fn resolves_deadlocks(&self) -> bool {
        self.chooser.resolves_deadlocks()
    }
    fn decision_work(&self, m: u64, n: u64) -> u64 {
        self.chooser
            .decision_work(m, n)
            .saturating_add(m)
            .saturating_add(n)
    }
    fn deadlock(&mut self, now: Time, cycle: &[EntityId]) {
        self.chooser.deadlock(now, cycle);
        self.force = true;
    }
    fn timer(&mut self, now: Time) {
        self.alarm.fired(now);
        self.force = true;
    }
    fn requested(&mut self, _now: Time, e: EntityId, r: ResourceId, _holder: Option<EntityId>) {
        self.tracked.set_waiting(e, r);
    }
    fn grants_resources(&self) -> bool {
        self.chooser.grant_by().is_some()
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        if !self.force
            && !d.global_event()
            && d.event_cpus().is_empty()
            && d.pending_grants().is_empty()
        {
            return;
        }
        let view = d.run();
        self.tracked.prune(view);
        if let Some(by) = self.chooser.grant_by() {
            ua::grant_pending(now, view, &mut self.tracked, by, &mut self.pending, d);
            // A grantee is ready again, as after `unblocked`: its queued CPU decides (ac).
            for &(_, e) in d.granted() {
                self.grow(e);
                self.woken.push(self.last_cpu[e as usize]);
            }
        }
        self.choice.run.clear();
        self.choice.abort.clear();
        self.chooser
            .choose(now, view, &self.tracked, self.m, &mut self.choice);
        debug_assert!(self.choice.run.len() <= self.m as usize);
        self.stamp = self.stamp.wrapping_add(1).max(1);
        for i in 0..self.choice.run.len() {
            let e = self.choice.run[i];
            self.grow(e);
            self.rank[e as usize] = i as u32;
            self.stamp_of[e as usize] = self.stamp;
        }
        for &e in &self.choice.abort {
            d.abort(e);
        }
        // After our own aborts the ledger calls again at this instant: decide again then.
        self.force = !self.choice.abort.is_empty();
        if self.force && self.model == Model::StopTheWorld {
            // Placing now would put entities on CPUs for 0 ns, and the CPU an entity was put
            // on (not one it ran on) would become its queued CPU for pass 2: place once, in
            // the decision after the aborts.
            return;
        }
        match self.model {
            Model::StopTheWorld => self.map_all(d),
            Model::AppConcurrent => self.decide_each(d),
        }
        self.woken.clear();
        for c in 0..self.m {
            if let Some(e) = d.current(c) {
                self.last_cpu[e as usize] = c;
                if let Some(i) = self.tracked.get(e) {
                    self.task_last[i.task as usize] = c;
                }
            }
        }
        let w = self.chooser.wake(now, view, &self.tracked, self.m);
        self.alarm.arm(now, w, d);
    }
}

/// A label with the two options: `NAME:model=M,mapper=P` (`gfp:rm,model=M,mapper=P`).
pub fn label(name: &str, model: Model, mapper: Mapper) -> String {
    let sep = if name.contains(':') { ',' } else { ':' };
    format!(
        "{name}{sep}model={},mapper={}",
        model.as_str(),
        mapper.as_str()
    )
}

/// The chooser of a job-level fixed-priority global policy (G-EDF, G-FP, G-FIFO, G-NP-EDF)
/// under a model: the m best runnable entities by `order`; without preemption, what runs
/// stays chosen and the best waiting ones fill the rest.
pub struct OrderChooser<O: super::key::Order> {
    pub order: O,
    pub preemptive: bool,
    scratch: Vec<(super::key::Key, EntityId)>,
}

impl<O: super::key::Order> OrderChooser<O> {
    pub fn new(order: O, preemptive: bool) -> Self {
        OrderChooser {
            order,
            preemptive,
            scratch: Vec::with_capacity(64),
        }
    }
}

impl<O: super::key::Order> Choose for OrderChooser<O> {
    fn choose(
        &mut self,
        _now: Time,
        view: &dyn RunView,
        tracked: &Tracked,
        m: u32,
        out: &mut Choice,
    ) {
        self.scratch.clear();
        for &e in tracked.ids() {
            if tracked.is_blocked(e) {
                continue;
            }
            let info = tracked.get(e).expect("listed ids are tracked");
            let mut k = self.order.key(info);
            if !self.preemptive && (0..m).any(|c| view.running(c) == Some(e)) {
                // Non-preemptive: a running entity ranks before every waiting one.
                k.primary = 0;
                k.secondary = 0;
            }
            self.scratch.push((k, e));
        }
        self.scratch.sort_unstable();
        out.run
            .extend(self.scratch.iter().take(m as usize).map(|&(_, e)| e));
    }
    fn preemptive(&self) -> bool {
        self.preemptive
    }
}

/// Build a job-level fixed-priority policy under a model, named `name:model=..,mapper=..`.
pub fn ordered<O: super::key::Order>(
    name: &str,
    order: O,
    preemptive: bool,
    cpus: u32,
    (model, mapper): (Model, Mapper),
) -> Box<dyn Policy> {
    Box::new(GlobalModel::new(
        label(name, model, mapper),
        OrderChooser::new(order, preemptive),
        cpus,
        model,
        mapper,
    ))
}
