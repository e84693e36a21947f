//! `cfs` — Linux's two classes on per-CPU run queues: real-time tasks (`SCHED_FIFO`) above
//! best-effort tasks shared by a CFS-like fair class, with a load balancer between the queues:
//! Linux's periodic one (opzone paper §2, Fig 1), the operation-zone balancer (§3, Figs 2–5,
//! decisions in [`crate::opzone`]) or none.
//!
//! The rules:
//! 1. **Classes.** Each CPU runs its highest-priority ready real-time entity (priority, then
//!    release, task, job: `SCHED_FIFO`; the file's priorities, or rate-monotonic when no
//!    real-time task has one), else a fair one. A real-time task with a `cpu` is pinned
//!    there; one without goes where the running entity matters least (idle, fair, then the
//!    lowest real-time priority). Real-time entities never move once queued.
//! 2. **Fair class** (CFS): each best-effort entity carries a virtual runtime that grows by its
//!    CPU time × 1024 / weight (`nice` → the kernel's weight table); a CPU runs the least
//!    virtual runtime of its queue for a slice of `latency` × weight / queue weight (at least
//!    `min_granularity`), checked at each tick; a waking entity preempts one `wakeup_granularity`
//!    ahead of it. Virtual runtimes are kept per task across bursts, placed at the queue's
//!    minimum on wake-up (minus `latency`/2: sleepers' credit) and carried relative to the
//!    queue's minimum when moved.
//! 3. **Placement.** A new fair task starts where it is spawned: its `cpu` (then pinned), else
//!    CPU 0 — unless the balancer places it (Linux: the idlest CPU, `sched_balance_fork`;
//!    opzone: a check at task creation). A waking one returns to its last CPU (Linux: an idle
//!    CPU if that one is busy, `select_idle_sibling`).
//! 4. **Linux balancer** (§2): at its tick, each CPU whose balance interval has passed compares
//!    its queue's load (the weights of its fair entities) with the busiest queue's and, when
//!    that is more than `imbalance_pct` heavier, pulls waiting unpinned entities until half
//!    the difference has moved. The interval starts at `balance_min` (10 ms), doubles up to
//!    `balance_max` (100 ms) while the CPU is busy and balanced, and resets when it moves
//!    tasks; an idle CPU balances every `balance_min`, and a CPU that runs out of work pulls at
//!    once (newly idle). **Opzone balancer** (§3): no periodic balancing; the zone check
//!    ([`ZoneBalancer::check`]) runs only at the check points — a task's creation, a task's
//!    wake-up on an idle CPU, and the busiest CPU's balance interval (a task of the busiest
//!    group) — and a `Balance { from, to }` moves the one waiting entity that
//!    [`ZoneBalancer::choose`] picks (the rule the real balancer shares): only when `from` has
//!    at least two runnable fair entities more than `to` (utilisations lag the queues; without
//!    this a busy pair would trade tasks back and forth), under a warm policy never a task whose
//!    own usage (rule 6) is below the warm zone (option `task_floor`), then the heaviest,
//!    the latest in virtual runtime. Either balancer moves only waiting entities
//!    from a queue of two or more (`busiest->nr_running > 1`). Option `guard` sets the
//!    two-more rule for either balancer (default: on for opzone, off for linux; the opzone
//!    reproduction's ablation turns it off, and on for Linux, to see what it does). Option
//!    `checks=periodic` moves the zone check from the paper's check points to Linux's: every
//!    CPU at its balance interval (doubling while nothing moves), none at creation or wake-up.
//! 5. **Cost** (§2 "direct" and "latency" costs). A balance pass occupies its CPU for
//!    `balance_cost` + `balance_cost_per_cpu` × m (the scan of `find_busiest_group`), an opzone
//!    check for `check_cost`; each migration holds both run queues' locks for `lock` (the
//!    double lock of `move_tasks`). These sections are not preemptible: nothing changes on
//!    their CPUs until they end (an urgent task woken meanwhile waits — the latency the paper
//!    measures), and their time is charged to what the CPU runs. A moved entity also pays the
//!    overhead model's migration cost when it next runs.
//! 6. **Utilisation** for the zones: per CPU, a running average of busy ticks (the PELT-like
//!    `util = util × 31/32 + busy/32` per tick, about 22 ticks' half-life), in per-mille; per
//!    fair task (opzone only, for the task floor) the same average of its *demand*, busy at the
//!    ticks it is runnable — running or waiting in a queue — (`task_usage=demand`, the
//!    default; a hog sharing a CPU with three others demands ~100 % though it runs 25 %), or
//!    busy at the ticks it runs (`task_usage=running`).
//!
//! The total order per CPU: real-time (priority, release, task, job, thread), then fair
//! (virtual runtime, task, job).

use crate::ctx::BuildCtx;
use crate::opzone::{Candidate, Permille, TaskUsage, Trigger, ZoneBalancer, ZoneConfig};
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_model::time::{parse_duration_str, NS_PER_MS, NS_PER_US};
use rtsched_model::{TaskSet, Time};

pub const INFO: PolicyInfo = PolicyInfo {
    name: "cfs",
    summary: "Linux's classes on per-CPU run queues: SCHED_FIFO above a CFS-like fair class, with a load balancer (linux, opzone or none)",
    paper: "opzone (Lim, Min & Eom, Linux Symposium 2012) §2–3; Linux CFS",
    options: "balancer=linux|opzone|none (default linux); opzone: zone=cold|warm-low|warm-mid|warm-high|hot, cold_threshold, hot_threshold, \
              warm_spot_low/mid/high, prize_time, punish_time, score_step, util=per-cpu|average, \
              task_floor=warm-zone|spot|off (warm policies: move no task below the warm zone / not above the spot / any), \
              task_usage=demand|running (a task's usage for the floor: its runnable or its running share); tick=1ms, latency=6ms, min_granularity=750us, \
              wakeup_granularity=1ms, balance_min=10ms, balance_max=100ms, imbalance_pct=117, balance_cost=2us, balance_cost_per_cpu=250ns, \
              check_cost=1us, lock=20us, guard=on|off (move only from a queue of two more fair entities; default on for opzone, off for linux), \
              checks=points|periodic (opzone: the paper's check points, or every CPU's balance interval as Linux)",
    partition: None,
    fixed_priorities: false,
    takes: Takes {
        fork_join: true,
        dag: true,
        sections: true,
        fair: true,
    },
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

const NONE: u32 = u32::MAX;
const NICE_0: u64 = 1024;

/// Which balancer moves fair tasks between the run queues.
#[derive(Clone, Debug)]
enum Balancer {
    None,
    Linux,
    Opzone(Box<ZoneBalancer>),
}

/// The times and costs of the fair class and the balancers (options of the same names).
#[derive(Clone, Copy, Debug)]
pub struct CfsParams {
    pub tick: Time,
    pub latency: Time,
    pub min_granularity: Time,
    pub wakeup_granularity: Time,
    pub balance_min: Time,
    pub balance_max: Time,
    /// Percent: a queue this much heavier than ours is imbalanced (the MC domain's 117).
    pub imbalance_pct: u64,
    pub balance_cost: Time,
    pub balance_cost_per_cpu: Time,
    pub check_cost: Time,
    pub lock: Time,
    /// Move only from a queue with at least two runnable fair entities more than the target's
    /// (rule 4); `None`: the balancer's own (opzone on, linux off).
    pub guard: Option<bool>,
    /// Opzone: check at every CPU's balance interval (Linux's sites) instead of the paper's
    /// check points (option `checks=periodic`).
    pub periodic_checks: bool,
}

impl Default for CfsParams {
    fn default() -> Self {
        CfsParams {
            tick: NS_PER_MS,
            latency: 6 * NS_PER_MS,
            min_granularity: 750 * NS_PER_US,
            wakeup_granularity: NS_PER_MS,
            balance_min: 10 * NS_PER_MS,
            balance_max: 100 * NS_PER_MS,
            imbalance_pct: 117,
            balance_cost: 2 * NS_PER_US,
            balance_cost_per_cpu: 250,
            check_cost: NS_PER_US,
            lock: 20 * NS_PER_US,
            guard: None,
            periodic_checks: false,
        }
    }
}

const TIME_KEYS: [&str; 10] = [
    "tick",
    "latency",
    "min_granularity",
    "wakeup_granularity",
    "balance_min",
    "balance_max",
    "balance_cost",
    "balance_cost_per_cpu",
    "check_cost",
    "lock",
];

/// Per task: what persists across its jobs (bursts).
#[derive(Clone, Copy, Debug)]
struct TaskState {
    /// `SCHED_FIFO` priority (real-time tasks), or `None` (fair).
    rt: Option<u32>,
    weight: u64,
    pinned: Option<u32>,
    vruntime: u64,
    last_cpu: u32,
    created: bool,
    /// Its own usage (opzone balancer only, for the warm zone's task floor): rule 6's running
    /// average over the ticks, busy at the ticks it is runnable (or runs: `task_usage`),
    /// counted up to (not including) tick number `util_tick`.
    util: Permille,
    util_tick: u64,
}

/// `util` after `ticks` idle ticks (rule 6's average with busy = 0); it reaches 0
/// within a few hundred ticks, so the loop is bounded.
fn decay(mut util: Permille, ticks: u64) -> Permille {
    for _ in 0..ticks {
        if util == 0 {
            break;
        }
        util = util * 31 / 32;
    }
    util
}

/// Per entity (indexed by id).
#[derive(Clone, Copy, Debug)]
struct EntState {
    task: u32,
    rq: u32,
    vruntime: u64,
    /// Since when its CPU time is not yet in its virtual runtime (fair, running).
    since: Time,
    running: bool,
    release: Time,
    job: u64,
    thread: u32,
}

impl EntState {
    const EMPTY: EntState = EntState {
        task: NONE,
        rq: NONE,
        vruntime: 0,
        since: 0,
        running: false,
        release: 0,
        job: 0,
        thread: 0,
    };
}

#[derive(Clone, Debug, Default)]
struct Rq {
    rt: Vec<EntityId>,
    fair: Vec<EntityId>,
    /// Sum of the weights of its fair entities (the balancer's load).
    load: u64,
    min_vruntime: u64,
    /// When its current fair entity's slice began, and whether the tick asked to reschedule.
    slice_start: Time,
    resched: bool,
    /// Whether the policy last gave it an entity (so an empty pick now is "newly idle").
    busy: bool,
    /// The end of the non-preemptible balancing section it is in (0: none).
    held_until: Time,
    next_balance: Time,
    interval: Time,
    util: Permille,
}

pub struct Cfs {
    label: String,
    p: CfsParams,
    balancer: Balancer,
    tasks: Vec<TaskState>,
    ents: Vec<EntState>,
    rqs: Vec<Rq>,
    /// Scratch (no allocation per decision once grown): utilisations, the CPUs that ticked
    /// and the entities released since the last decision.
    utils: Vec<Permille>,
    ticked: Vec<u32>,
    pending: Vec<EntityId>,
    /// Scratch: the tasks an opzone balance could move.
    candidates: Vec<Candidate>,
    // Counters (`stats`).
    invocations: u64,
    checks: u64,
    migrations: u64,
    balance_ns: Time,
    held_waits: u64,
    /// Per CPU: a higher class runs there (the `linux` scheduler's stack: a deadline or RT
    /// task), so the fair class runs nothing on it, does not count it idle, and does not pull
    /// to it ([`Cfs::set_taken`]). Never set under `cfs` itself.
    taken: Vec<bool>,
}

impl Cfs {
    pub fn new(
        label: String,
        ts: &TaskSet,
        p: CfsParams,
        balancer: Option<ZoneConfig>,
        linux: bool,
    ) -> Cfs {
        Cfs::with_classes(label, ts, p, balancer, linux, |t| {
            t.fair_params().map(|f| f.weight())
        })
    }

    /// [`Cfs::new`] where `fair_weight` says which tasks are the fair class's, and their load
    /// weights (`None`: a real-time task). The `linux` scheduler gives it its `other` tasks,
    /// periodic ones with job records included, and schedules the others in its own classes.
    pub fn with_classes(
        label: String,
        ts: &TaskSet,
        p: CfsParams,
        balancer: Option<ZoneConfig>,
        linux: bool,
        fair_weight: impl Fn(&rtsched_model::Task) -> Option<u64>,
    ) -> Cfs {
        let m = ts.platform.cpus;
        // Real-time priorities: the file's; when no real-time task has one, rate-monotonic (as
        // `kernel:fifo`), the shortest period the most urgent.
        let rt: Vec<&rtsched_model::Task> = ts
            .tasks
            .iter()
            .filter(|t| fair_weight(t).is_none())
            .collect();
        let rm = rt.iter().all(|t| t.priority.is_none());
        let rank =
            |t: &rtsched_model::Task| rt.iter().filter(|o| o.period > t.period).count() as u32 + 1;
        let tasks = ts
            .tasks
            .iter()
            .map(|t| TaskState {
                rt: if fair_weight(t).is_some() {
                    None
                } else if rm {
                    Some(rank(t))
                } else {
                    Some(t.priority.unwrap_or(0))
                },
                weight: fair_weight(t).unwrap_or(NICE_0),
                pinned: t.cpu,
                vruntime: 0,
                last_cpu: t.cpu.unwrap_or(0),
                created: false,
                util: 0,
                util_tick: 0,
            })
            .collect();
        let balancer = match (balancer, linux) {
            (Some(z), _) => Balancer::Opzone(Box::new(ZoneBalancer::new(z, m))),
            (None, true) => Balancer::Linux,
            (None, false) => Balancer::None,
        };
        let rqs = (0..m)
            .map(|_| Rq {
                interval: p.balance_min,
                next_balance: p.balance_min,
                ..Rq::default()
            })
            .collect();
        Cfs {
            label,
            p,
            balancer,
            tasks,
            ents: Vec::new(),
            rqs,
            utils: vec![0; m as usize],
            ticked: Vec::with_capacity(m as usize),
            pending: Vec::new(),
            candidates: Vec::new(),
            invocations: 0,
            checks: 0,
            migrations: 0,
            balance_ns: 0,
            held_waits: 0,
            taken: vec![false; m as usize],
        }
    }

    /// Whether a higher class runs on `cpu` (see the field).
    pub fn set_taken(&mut self, cpu: u32, taken: bool) {
        self.taken[cpu as usize] = taken;
    }

    /// Whether `cpu`'s fair run queue holds an entity, running or waiting (the fair server's
    /// `cfs.h_nr_queued`).
    #[inline]
    pub fn has_queued(&self, cpu: u32) -> bool {
        !self.rqs[cpu as usize].fair.is_empty()
    }

    /// No entity on `cpu`, of this class or a higher one.
    #[inline]
    fn idle(&self, cpu: u32, d: &Dispatch<'_>) -> bool {
        d.current(cpu).is_none() && !self.taken[cpu as usize]
    }

    fn m(&self) -> u32 {
        self.rqs.len() as u32
    }

    fn is_rt(&self, e: EntityId) -> bool {
        self.tasks[self.ents[e as usize].task as usize].rt.is_some()
    }

    /// `SCHED_FIFO` order: is `a` more urgent than `b`?
    fn rt_before(&self, a: EntityId, b: EntityId) -> bool {
        let (x, y) = (&self.ents[a as usize], &self.ents[b as usize]);
        let (px, py) = (
            self.tasks[x.task as usize].rt,
            self.tasks[y.task as usize].rt,
        );
        (std::cmp::Reverse(px), x.release, x.task, x.job, x.thread)
            < (std::cmp::Reverse(py), y.release, y.task, y.job, y.thread)
    }

    /// Fair order: least virtual runtime, then task, job.
    fn fair_key(&self, e: EntityId) -> (u64, u32, u64) {
        let x = &self.ents[e as usize];
        (x.vruntime, x.task, x.job)
    }

    /// Bring the running fair entity `e`'s virtual runtime up to `now`.
    fn update_curr(&mut self, e: EntityId, now: Time) {
        let x = &mut self.ents[e as usize];
        if !x.running || now <= x.since {
            return;
        }
        let w = self.tasks[x.task as usize].weight;
        let delta = now - x.since;
        x.since = now;
        if self.tasks[x.task as usize].rt.is_none() {
            x.vruntime += (delta as u128 * NICE_0 as u128 / w as u128) as u64;
        }
    }

    fn enqueue(&mut self, e: EntityId, cpu: u32) {
        let x = &mut self.ents[e as usize];
        x.rq = cpu;
        let rq = &mut self.rqs[cpu as usize];
        match self.tasks[x.task as usize].rt {
            Some(_) => rq.rt.push(e),
            None => {
                rq.fair.push(e);
                rq.load += self.tasks[x.task as usize].weight;
            }
        }
    }

    fn dequeue(&mut self, e: EntityId) {
        let x = self.ents[e as usize];
        if x.rq == NONE {
            return;
        }
        let rq = &mut self.rqs[x.rq as usize];
        let w = self.tasks[x.task as usize].weight;
        let list = if self.tasks[x.task as usize].rt.is_some() {
            &mut rq.rt
        } else {
            &mut rq.fair
        };
        if let Some(i) = list.iter().position(|&y| y == e) {
            list.swap_remove(i);
            if self.tasks[x.task as usize].rt.is_none() {
                rq.load -= w;
            }
        }
        self.ents[e as usize].rq = NONE;
    }

    /// The queue's minimum virtual runtime, kept monotone (`update_min_vruntime`).
    fn update_min_vruntime(&mut self, cpu: u32) {
        let rq = &self.rqs[cpu as usize];
        if let Some(v) = rq
            .fair
            .iter()
            .map(|&e| self.ents[e as usize].vruntime)
            .min()
        {
            let rq = &mut self.rqs[cpu as usize];
            rq.min_vruntime = rq.min_vruntime.max(v);
        }
    }

    /// The CPU a new real-time entity goes to (rule 1).
    fn rt_cpu(&self, e: EntityId, d: &Dispatch<'_>) -> u32 {
        if let Some(c) = self.tasks[self.ents[e as usize].task as usize].pinned {
            return c;
        }
        let mut best = (3u8, 0u32);
        for c in 0..self.m() {
            let rank = match d.current(c) {
                None if self.rqs[c as usize].rt.is_empty() => 0,
                None => 2,
                Some(x) if !self.is_rt(x) && self.rqs[c as usize].rt.is_empty() => 1,
                _ => 2,
            };
            if rank < best.0 {
                best = (rank, c);
            }
        }
        best.1
    }

    /// The idlest CPU allowed to `task` (least load, then fewest entities, lowest index).
    fn idlest(&self, task: u32) -> u32 {
        if let Some(c) = self.tasks[task as usize].pinned {
            return c;
        }
        (0..self.m())
            .min_by_key(|&c| {
                let rq = &self.rqs[c as usize];
                (
                    rq.load + rq.rt.len() as u64 * NICE_0,
                    rq.fair.len() + rq.rt.len(),
                    c,
                )
            })
            .unwrap_or(0)
    }

    fn utils(&mut self) -> &[Permille] {
        for (u, rq) in self.utils.iter_mut().zip(&self.rqs) {
            *u = rq.util;
        }
        &self.utils
    }

    /// Occupy `cpu` with a non-preemptible section of `ns` from `now` (or from the end of the
    /// one it is in), charged to what it runs.
    fn hold(&mut self, cpu: u32, now: Time, ns: Time, d: &mut Dispatch<'_>) {
        if ns == 0 {
            return;
        }
        let rq = &mut self.rqs[cpu as usize];
        rq.held_until = rq.held_until.max(now) + ns;
        self.balance_ns += ns;
        d.charge(cpu, ns);
        d.wake_at(rq.held_until);
    }

    /// Move the waiting fair entity `e` to `to`'s queue (rule 3's relative virtual runtime),
    /// holding both queues' locks for `lock`.
    fn migrate(&mut self, e: EntityId, to: u32, now: Time, d: &mut Dispatch<'_>) {
        let from = self.ents[e as usize].rq;
        let rel = self.ents[e as usize]
            .vruntime
            .saturating_sub(self.rqs[from as usize].min_vruntime);
        self.dequeue(e);
        self.ents[e as usize].vruntime = self.rqs[to as usize].min_vruntime + rel;
        self.enqueue(e, to);
        self.tasks[self.ents[e as usize].task as usize].last_cpu = to;
        self.migrations += 1;
        // Both CPUs wait for the double lock (one after the other would not be more exact).
        let start = self.rqs[from as usize]
            .held_until
            .max(self.rqs[to as usize].held_until)
            .max(now);
        for c in [from, to] {
            let rq = &mut self.rqs[c as usize];
            let until = start + self.p.lock;
            let extra = until - rq.held_until.max(now);
            rq.held_until = until;
            d.charge(c, extra);
            self.balance_ns += extra;
        }
        d.wake_at(start + self.p.lock);
    }

    /// Linux's balancer: a waiting (not running) unpinned fair entity of `cpu`'s queue, the
    /// heaviest first (the balancer moves load), then the latest in virtual runtime
    /// (cache-coldest) — the order opzone's `ZoneBalancer::choose` shares.
    fn movable(&self, cpu: u32, d: &Dispatch<'_>) -> Option<EntityId> {
        let running = d.current(cpu);
        self.rqs[cpu as usize]
            .fair
            .iter()
            .copied()
            .filter(|&e| {
                Some(e) != running
                    && self.tasks[self.ents[e as usize].task as usize]
                        .pinned
                        .is_none()
            })
            .max_by_key(|&e| {
                (
                    self.tasks[self.ents[e as usize].task as usize].weight,
                    self.ents[e as usize].vruntime,
                    std::cmp::Reverse(e),
                )
            })
    }

    /// Whether a move needs two runnable fair entities more on its source than on its target
    /// (option `guard`; by default the opzone balancer's rule, not Linux's).
    fn guarded(&self) -> bool {
        self.p
            .guard
            .unwrap_or(matches!(self.balancer, Balancer::Opzone(_)))
    }

    /// Linux's `load_balance` for `this` (rule 4): returns whether it moved anything.
    fn load_balance(&mut self, this: u32, now: Time, d: &mut Dispatch<'_>) -> bool {
        self.invocations += 1;
        let cost = self.p.balance_cost + self.p.balance_cost_per_cpu * self.m() as u64;
        self.hold(this, now, cost, d);
        let busiest = (0..self.m())
            .filter(|&c| c != this)
            .max_by_key(|&c| (self.rqs[c as usize].load, std::cmp::Reverse(c)));
        let Some(busiest) = busiest else { return false };
        let (bl, tl) = (
            self.rqs[busiest as usize].load,
            self.rqs[this as usize].load,
        );
        // A queue of one entity has nothing waiting to move (`busiest->nr_running > 1`).
        if self.rqs[busiest as usize].fair.len() < 2
            || bl * 100 <= tl * self.p.imbalance_pct
            || bl <= tl
        {
            return false;
        }
        let mut to_move = (bl - tl) / 2;
        let mut moved = false;
        while to_move > 0 {
            if self.guarded()
                && self.rqs[busiest as usize].fair.len() <= self.rqs[this as usize].fair.len() + 1
            {
                break;
            }
            let Some(e) = self.movable(busiest, d) else {
                break;
            };
            let w = self.tasks[self.ents[e as usize].task as usize].weight;
            if moved && w > to_move {
                break;
            }
            self.migrate(e, this, now, d);
            to_move = to_move.saturating_sub(w);
            moved = true;
        }
        moved
    }

    /// The zone balancer's check at `trigger` (rule 4): a `Balance` moves one waiting entity.
    fn zone_check(&mut self, trigger: Trigger, at: u32, now: Time, d: &mut Dispatch<'_>) {
        self.checks += 1;
        self.hold(at, now, self.p.check_cost, d);
        self.utils();
        let Balancer::Opzone(zb) = &mut self.balancer else {
            return;
        };
        let Some(b) = zb.check(trigger, &self.utils, now) else {
            return;
        };
        self.invocations += 1;
        // Which entity moves is the shared rule (`ZoneBalancer::choose`, also the real
        // balancer's): the queue counts for its guard, the waiting unpinned entities with their
        // tasks' own usage (rule 6, decayed to now) for its task floor.
        let (nf, nt) = (
            self.rqs[b.from as usize].fair.len(),
            self.rqs[b.to as usize].fair.len(),
        );
        let (running, k) = (d.current(b.from), now / self.p.tick);
        self.candidates.clear();
        for &e in &self.rqs[b.from as usize].fair {
            let t = &self.tasks[self.ents[e as usize].task as usize];
            if Some(e) != running && t.pinned.is_none() {
                let util = decay(t.util, (k + 1).saturating_sub(t.util_tick));
                self.candidates.push(Candidate {
                    util,
                    weight: t.weight,
                    vruntime: self.ents[e as usize].vruntime,
                    id: e as u64,
                });
            }
        }
        let guard = self.guarded();
        let Balancer::Opzone(zb) = &self.balancer else {
            return;
        };
        if let Some(i) = zb.choose(nf, nt, guard, &self.candidates) {
            self.migrate(self.candidates[i].id as EntityId, b.to, now, d);
        }
    }

    /// What `cpu` should run now (rule 1, 2).
    fn pick(&self, cpu: u32, d: &Dispatch<'_>) -> Option<EntityId> {
        if self.taken[cpu as usize] {
            return None;
        }
        let rq = &self.rqs[cpu as usize];
        let mut best: Option<EntityId> = None;
        for &e in &rq.rt {
            if best.is_none_or(|b| self.rt_before(e, b)) {
                best = Some(e);
            }
        }
        if best.is_some() {
            return best;
        }
        let cur = d
            .current(cpu)
            .filter(|&e| self.ents[e as usize].rq == cpu && !self.is_rt(e));
        if let Some(c) = cur {
            if !rq.resched {
                return Some(c);
            }
        }
        rq.fair.iter().copied().min_by_key(|&e| self.fair_key(e))
    }

    /// The slice of the fair entity running on `cpu` (`sched_slice`).
    fn slice(&self, cpu: u32, e: EntityId) -> Time {
        let rq = &self.rqs[cpu as usize];
        let w = self.tasks[self.ents[e as usize].task as usize].weight;
        let period = self
            .p
            .latency
            .max(self.p.min_granularity * rq.fair.len() as u64);
        (period as u128 * w as u128 / rq.load.max(1) as u128) as Time
    }
}

// The steps of one decision (`schedule`), in their order.
impl Cfs {
    /// Account what runs, and the ticks' work on utilisation (rule 6): per CPU, and per fair
    /// task for opzone's task floor; the zone balancer observes the new utilisations.
    #[inline]
    fn account(&mut self, now: Time, ticked: &[u32], d: &Dispatch<'_>) {
        let m = self.m();
        for c in 0..m {
            if let Some(e) = d.current(c) {
                self.update_curr(e, now);
            }
        }
        for &c in ticked {
            let busy = !self.idle(c, d) || self.rqs[c as usize].held_until > now;
            let rq = &mut self.rqs[c as usize];
            rq.util = ((rq.util as u64 * 31 + busy as u64 * 1000) / 32) as Permille;
            // The fair tasks' own usage, the same average (opzone's task floor): busy at this
            // tick every runnable one of its queue (demand), or only the running one.
            if let Balancer::Opzone(zb) = &self.balancer {
                let k = now / self.p.tick;
                let demand = zb.config().task_usage == TaskUsage::Demand;
                let running = d.current(c);
                let (tasks, ents) = (&mut self.tasks, &self.ents);
                let mut busy_tick = |e: EntityId| {
                    let t = &mut tasks[ents[e as usize].task as usize];
                    if t.rt.is_none() && t.util_tick <= k {
                        t.util =
                            ((decay(t.util, k - t.util_tick) as u64 * 31 + 1000) / 32) as Permille;
                        t.util_tick = k + 1;
                    }
                };
                if demand {
                    self.rqs[c as usize].fair.iter().for_each(|&e| busy_tick(e));
                } else if let Some(e) = running {
                    busy_tick(e);
                }
            }
        }
        if !ticked.is_empty() {
            if let Balancer::Opzone(_) = self.balancer {
                self.utils();
                if let Balancer::Opzone(zb) = &mut self.balancer {
                    zb.observe(&self.utils, now);
                }
            }
        }
    }

    /// New entities: placement (rules 1, 3), with the opzone check at creation and wake-up.
    #[inline]
    fn place_new(&mut self, now: Time, pending: &[EntityId], d: &mut Dispatch<'_>) {
        let m = self.m();
        for &e in pending {
            let i = e as usize;
            let x = self.ents[i];
            if x.task == NONE || x.rq != NONE {
                continue;
            }
            let task = x.task;
            if self.tasks[task as usize].rt.is_some() {
                let c = self.rt_cpu(e, d);
                self.enqueue(e, c);
                continue;
            }
            let t = self.tasks[task as usize];
            let first = !t.created;
            self.tasks[task as usize].created = true;
            let cpu = match (&self.balancer, first) {
                (Balancer::Linux, true) => self.idlest(task),
                (Balancer::Linux, false) => {
                    let prev = t.last_cpu;
                    if t.pinned.is_none()
                        && (!self.idle(prev, d) || !self.rqs[prev as usize].fair.is_empty())
                    {
                        (0..m)
                            .find(|&c| {
                                self.idle(c, d)
                                    && self.rqs[c as usize].fair.is_empty()
                                    && self.rqs[c as usize].rt.is_empty()
                            })
                            .unwrap_or(prev)
                    } else {
                        prev
                    }
                }
                _ => t.last_cpu,
            };
            let was_idle = self.idle(cpu, d);
            // Place its virtual runtime (rule 2): a new task at the queue's minimum, a sleeper
            // with up to half a latency of credit.
            let minv = self.rqs[cpu as usize].min_vruntime;
            let v = if first {
                t.vruntime.max(minv)
            } else {
                t.vruntime.max(minv.saturating_sub(self.p.latency / 2))
            };
            self.ents[i].vruntime = v;
            self.enqueue(e, cpu);
            if let Some(cur) = d.current(cpu) {
                if !self.is_rt(cur)
                    && self.ents[cur as usize].vruntime > v + self.p.wakeup_granularity
                {
                    self.rqs[cpu as usize].resched = true;
                }
            }
            if let (Balancer::Opzone(_), false) = (&self.balancer, self.p.periodic_checks) {
                if first {
                    self.zone_check(Trigger::TaskCreated, cpu, now, d);
                } else if was_idle {
                    self.zone_check(Trigger::IdleWakeup, cpu, now, d);
                }
            }
        }
    }

    /// Ticks: slices (rule 2), and the periodic balancers (rule 4).
    #[inline]
    fn tick_work(&mut self, now: Time, ticked: &[u32], d: &mut Dispatch<'_>) {
        let m = self.m();
        for &c in ticked {
            if let Some(e) = d.current(c) {
                if !self.is_rt(e)
                    && now.saturating_sub(self.rqs[c as usize].slice_start)
                        >= self.slice(c, e).max(self.p.min_granularity)
                {
                    self.rqs[c as usize].resched = true;
                }
            }
            if now < self.rqs[c as usize].next_balance {
                continue;
            }
            let idle = self.idle(c, d);
            match self.balancer {
                Balancer::None => {}
                Balancer::Linux => {
                    let moved = self.load_balance(c, now, d);
                    let rq = &mut self.rqs[c as usize];
                    rq.interval = if moved || idle {
                        self.p.balance_min
                    } else {
                        (rq.interval * 2).min(self.p.balance_max)
                    };
                }
                Balancer::Opzone(_) if self.p.periodic_checks => {
                    // Linux's sites (`checks=periodic`): every CPU at its interval, which doubles
                    // while the check moves nothing (the trigger is only a name for a check).
                    let before = self.migrations;
                    self.zone_check(Trigger::BusiestGroup, c, now, d);
                    let moved = self.migrations > before;
                    let rq = &mut self.rqs[c as usize];
                    rq.interval = if moved || idle {
                        self.p.balance_min
                    } else {
                        (rq.interval * 2).min(self.p.balance_max)
                    };
                }
                Balancer::Opzone(_) => {
                    // A task of the busiest group: the busiest CPU's interval is a check point.
                    let busiest = (0..m)
                        .max_by_key(|&x| (self.rqs[x as usize].load, std::cmp::Reverse(x)))
                        .unwrap_or(0);
                    if busiest == c && d.current(c).is_some_and(|e| !self.is_rt(e)) {
                        self.zone_check(Trigger::BusiestGroup, c, now, d);
                    }
                    self.rqs[c as usize].interval = self.p.balance_min;
                }
            }
            let rq = &mut self.rqs[c as usize];
            rq.next_balance = now + rq.interval;
        }
    }

    /// Pick (rules 1, 2); a CPU in a balancing section keeps what it runs until it ends.
    #[inline]
    fn pick_all(&mut self, now: Time, d: &mut Dispatch<'_>) {
        let m = self.m();
        for c in 0..m {
            let mut want = self.pick(c, d);
            if want.is_none()
                && self.rqs[c as usize].busy
                && !self.taken[c as usize]
                && matches!(self.balancer, Balancer::Linux)
                && self.rqs[c as usize].held_until <= now
                && self.rqs.iter().any(|r| r.fair.len() > 1)
            {
                // Newly idle (it ran something until now): pull at once, once (`newidle_balance`).
                if self.load_balance(c, now, d) {
                    want = self.pick(c, d);
                }
            }
            if want.is_none() {
                self.rqs[c as usize].busy = false;
            }
            let cur = d.current(c);
            if want == cur {
                continue;
            }
            if self.rqs[c as usize].held_until > now && !self.taken[c as usize] {
                self.held_waits += 1;
                let until = self.rqs[c as usize].held_until;
                d.wake_at(until);
                continue;
            }
            if let Some(old) = cur {
                self.update_curr(old, now);
                self.ents[old as usize].running = false;
            }
            if let Some(new) = want {
                let x = &mut self.ents[new as usize];
                x.running = true;
                x.since = now;
                self.tasks[x.task as usize].last_cpu = c;
            }
            let rq = &mut self.rqs[c as usize];
            rq.slice_start = now;
            rq.resched = false;
            rq.busy = want.is_some();
            d.assign(c, want);
        }
    }
}

impl Policy for Cfs {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn release(&mut self, now: Time, e: &EntityInfo) {
        let id = e.id as usize;
        if self.ents.len() <= id {
            self.ents.resize(id + 1, EntState::EMPTY);
        }
        let t = self.tasks[e.task as usize];
        self.ents[id] = EntState {
            task: e.task,
            rq: NONE,
            vruntime: t.vruntime,
            since: now,
            running: false,
            release: e.release,
            job: e.job,
            thread: e.thread,
        };
        self.pending.push(e.id);
    }

    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.update_curr(e, now);
        let x = self.ents[e as usize];
        self.dequeue(e);
        let t = &mut self.tasks[x.task as usize];
        t.vruntime = x.vruntime;
        t.last_cpu = cpu;
        self.ents[e as usize] = EntState::EMPTY;
    }

    fn aborted(&mut self, now: Time, e: EntityId) {
        self.update_curr(e, now);
        self.dequeue(e);
        self.ents[e as usize] = EntState::EMPTY;
    }

    fn tick_interval(&self) -> Option<Time> {
        Some(self.p.tick)
    }

    fn tick(&mut self, _now: Time, cpu: u32) {
        // The tick's work happens in `schedule`.
        self.ticked.push(cpu);
    }

    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        let ticked = std::mem::take(&mut self.ticked);
        self.account(now, &ticked, d);
        let pending = std::mem::take(&mut self.pending);
        self.place_new(now, &pending, d);
        self.tick_work(now, &ticked, d);
        self.pending = pending;
        self.pending.clear();
        self.ticked = ticked;
        self.ticked.clear();
        self.pick_all(now, d);
        for c in 0..self.m() {
            self.update_min_vruntime(c);
        }
    }

    fn stats(&self) -> Vec<(String, f64)> {
        vec![
            ("balance.invocations".into(), self.invocations as f64),
            ("balance.checks".into(), self.checks as f64),
            ("balance.migrations".into(), self.migrations as f64),
            ("balance.ns".into(), self.balance_ns as f64),
            ("balance.held_waits".into(), self.held_waits as f64),
        ]
    }
}

/// `cfs[:balancer=linux|opzone|none,KEY=VALUE...]` (see [`INFO`]).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let name = "cfs";
    let mut p = CfsParams::default();
    let mut balancer = "linux".to_string();
    let mut zone_opts: Vec<(String, String)> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for (k, v) in &spec.options {
        let k = if k.is_empty() { "balancer" } else { k.as_str() };
        option(&mut p, &mut balancer, &mut zone_opts, &mut shown, k, v)?;
    }
    check(&p, &balancer, &zone_opts)?;
    let zone = if balancer == "opzone" {
        Some(ZoneConfig::from_options(name, &zone_opts)?)
    } else {
        None
    };
    let mut label = format!("{name}:balancer={balancer}");
    if let Some(z) = &zone {
        if !zone_opts.iter().any(|(k, _)| k == "zone") {
            label.push_str(&format!(",zone={}", z.operation_zone.name()));
        }
    }
    for s in shown {
        label.push(',');
        label.push_str(&s);
    }
    Ok(Box::new(Cfs::new(
        label,
        ctx.ts,
        p,
        zone,
        balancer == "linux",
    )))
}

/// One option of `cfs` (key `k`, value `v`) into the parameters, the balancer's name, the
/// zone options (for `ZoneConfig`), and the options shown in the label.
fn option(
    p: &mut CfsParams,
    balancer: &mut String,
    zone_opts: &mut Vec<(String, String)>,
    shown: &mut Vec<String>,
    k: &str,
    v: &str,
) -> Result<(), String> {
    let name = "cfs";
    if k == "balancer" {
        if !["linux", "opzone", "none"].contains(&v) {
            return Err(format!(
                "scheduler '{name}': option 'balancer': unknown balancer '{v}'; known: linux, opzone, none"
            ));
        }
        *balancer = v.to_string();
    } else if ZoneConfig::KEYS.contains(&k) {
        zone_opts.push((k.to_string(), v.to_string()));
        shown.push(format!("{k}={v}"));
    } else if TIME_KEYS.contains(&k) {
        let t =
            parse_duration_str(v).map_err(|e| format!("scheduler '{name}': option '{k}': {e}"))?;
        let slot = match k {
            "tick" => &mut p.tick,
            "latency" => &mut p.latency,
            "min_granularity" => &mut p.min_granularity,
            "wakeup_granularity" => &mut p.wakeup_granularity,
            "balance_min" => &mut p.balance_min,
            "balance_max" => &mut p.balance_max,
            "balance_cost" => &mut p.balance_cost,
            "balance_cost_per_cpu" => &mut p.balance_cost_per_cpu,
            "check_cost" => &mut p.check_cost,
            _ => &mut p.lock,
        };
        *slot = t;
        shown.push(format!("{k}={v}"));
    } else if k == "guard" {
        p.guard = Some(match v {
            "on" => true,
            "off" => false,
            _ => {
                return Err(format!(
                    "scheduler '{name}': option 'guard': expected on or off, got '{v}'"
                ))
            }
        });
        shown.push(format!("{k}={v}"));
    } else if k == "checks" {
        p.periodic_checks = match v {
            "points" => false,
            "periodic" => true,
            _ => {
                return Err(format!(
                    "scheduler '{name}': option 'checks': expected points or periodic, got '{v}'"
                ))
            }
        };
        shown.push(format!("{k}={v}"));
    } else if k == "imbalance_pct" {
        p.imbalance_pct = v
            .parse()
            .ok()
            .filter(|&x| (100..=1000).contains(&x))
            .ok_or_else(|| format!("scheduler '{name}': option 'imbalance_pct': expected an integer percent from 100 to 1000, got '{v}'"))?;
        shown.push(format!("{k}={v}"));
    } else {
        let mut known: Vec<&str> = vec!["balancer", "imbalance_pct", "guard", "checks"];
        known.extend(TIME_KEYS);
        known.extend(ZoneConfig::KEYS);
        let hint = rtsched_model::text::closest(k, &known)
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        return Err(format!(
            "scheduler '{name}' has no option '{k}'{hint} (known: {})",
            known.join(", ")
        ));
    }
    Ok(())
}

/// What the options say together: positive times, balance_max ≥ balance_min, the opzone
/// options with balancer=opzone only.
fn check(p: &CfsParams, balancer: &str, zone_opts: &[(String, String)]) -> Result<(), String> {
    let name = "cfs";
    for (k, t) in [
        ("tick", p.tick),
        ("latency", p.latency),
        ("min_granularity", p.min_granularity),
        ("balance_min", p.balance_min),
    ] {
        if t == 0 {
            return Err(format!(
                "scheduler '{name}': option '{k}': must be positive"
            ));
        }
    }
    if p.balance_max < p.balance_min {
        return Err(format!(
            "scheduler '{name}': option 'balance_max': is below balance_min"
        ));
    }
    if balancer != "opzone" && p.periodic_checks {
        return Err(format!(
            "scheduler '{name}': option 'checks' applies to balancer=opzone only"
        ));
    }
    if balancer != "opzone" && !zone_opts.is_empty() {
        return Err(format!(
            "scheduler '{name}': option '{}' applies to balancer=opzone only",
            zone_opts[0].0
        ));
    }
    Ok(())
}
