//! The operation-zone balancer's decisions ([`ZoneBalancer`]): at each check point (opzone
//! paper §3, Fig 2) whether to balance, from the busiest CPU over the policy's bar to the
//! least used one (§3.1, Fig 4), the weight-based score that moves a warm policy's spot
//! (§3.1.3, Fig 5), and which waiting task moves. The caller owns the run queues and does
//! the moving; `observe`, `check` and `choose` allocate nothing (the simulator's hot path).

use super::config::{OperationZone, TaskFloor, UtilMode, Zone, ZoneConfig};
use super::Permille;
use rtsched_model::time::Time;

/// The points where the balancer may act (§3, Fig 2). The caller says which one it is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// A task is newly created.
    TaskCreated,
    /// An idle CPU's task wakes up.
    IdleWakeup,
    /// The running task belongs to the busiest scheduling group (the caller finds the group).
    BusiestGroup,
    /// Anything else, e.g. the periodic tick of Linux's balancer (§2): never a check point,
    /// though its utilisations still feed the score.
    Tick,
}

impl Trigger {
    /// Whether the paper checks for balancing here (every variant but `Tick`).
    pub fn is_check_point(self) -> bool {
        self != Trigger::Tick
    }
}

/// The balancer's answer: move one task from CPU `from` (the busiest over its bar) to CPU
/// `to` (the least used); `utils[from] > utils[to]` always holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Balance {
    pub from: u32,
    pub to: u32,
}

/// A task of the source CPU that its owner could move (waiting, allowed on the target): what
/// [`ZoneBalancer::choose`] needs to know of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its own CPU usage, per-mille, over a window as the CPUs' are: its demand (the share it
    /// was runnable) or its running time, as [`ZoneConfig::task_usage`] says.
    pub util: Permille,
    /// Its load weight (the kernel's nice-to-weight table).
    pub weight: u64,
    /// Its virtual runtime on the source CPU, ns.
    pub vruntime: u64,
    /// The caller's identity for it (entity id, thread id): the last tie-break, lowest first.
    pub id: u64,
}

/// One scored unit's current episode of usage above its configured spot.
#[derive(Clone, Copy, Debug, Default)]
struct Episode {
    /// First observation above the spot, while the episode lasts.
    since: Option<Time>,
    /// Up to where the episode has been prized (`since` + whole prize times).
    prized_to: Time,
}

/// The operation-zone balancer of §3 for `cpus` CPUs: the configuration and, for a warm
/// policy, one weight-based score per CPU (per-CPU mode) or one for the system (average mode).
///
/// The caller passes the CPUs' utilisations (per-mille, one per CPU, in CPU order; measured
/// over a window of its choice) and the time, which never decreases from call to call:
/// [`observe`](Self::observe) whenever it samples them (e.g. each tick) so the score sees how
/// long a usage lasts, [`check`](Self::check) at each [`Trigger`].
#[derive(Clone, Debug)]
pub struct ZoneBalancer {
    config: ZoneConfig,
    cpus: u32,
    /// The weighted spots (see "Reading the paper"), in [warm_spot_low, warm_spot_high].
    scores: Box<[Permille]>,
    episodes: Box<[Episode]>,
    last_now: Time,
}

impl ZoneBalancer {
    /// Every score at the configured spot. Panics on an invalid `config` (parse options with
    /// [`ZoneConfig::from_options`], which validates) or on no CPU. The only allocation.
    pub fn new(config: ZoneConfig, cpus: u32) -> Self {
        if let Err(e) = config.validate() {
            panic!("invalid ZoneConfig: {e}");
        }
        assert!(cpus > 0, "a ZoneBalancer needs at least one CPU");
        let (units, spot) = match (config.spot(), config.util) {
            (None, _) => (0, 0),
            (Some(s), UtilMode::PerCpu) => (cpus as usize, s),
            (Some(s), UtilMode::Average) => (1, s),
        };
        ZoneBalancer {
            config,
            cpus,
            scores: vec![spot; units].into(),
            episodes: vec![Episode::default(); units].into(),
            last_now: 0,
        }
    }

    pub fn config(&self) -> &ZoneConfig {
        &self.config
    }

    pub fn cpus(&self) -> u32 {
        self.cpus
    }

    /// The weighted spots: one per CPU (per-CPU mode), one for the system (average mode),
    /// none for the cold and hot policies. Each lies in [warm_spot_low, warm_spot_high].
    pub fn scores(&self) -> &[Permille] {
        &self.scores
    }

    /// The zone the system is in: its busiest CPU's (per-CPU mode) or its average's.
    pub fn zone(&self, utils: &[Permille]) -> Zone {
        let (sum, n) = self.judged(utils);
        let c = &self.config;
        if sum <= c.cold_threshold as u64 * n {
            Zone::Cold
        } else if sum >= c.hot_threshold as u64 * n {
            Zone::Hot
        } else {
            Zone::Warm
        }
    }

    /// Takes a sample of the utilisations at `now` into the weight-based score (warm policies;
    /// a no-op otherwise). Prize: a unit above its configured spot raises its score by
    /// `score_step` for every whole `prize_time` the episode has lasted, up to warm_spot_high.
    /// Punish: an episode that ends (usage back at or below the spot) having lasted less than
    /// `punish_time` lowers it by `score_step`, down to warm_spot_low.
    pub fn observe(&mut self, utils: &[Permille], now: Time) {
        assert_eq!(utils.len(), self.cpus as usize, "one utilisation per CPU");
        debug_assert!(
            now >= self.last_now,
            "time went back from {} to {now}",
            self.last_now
        );
        self.last_now = now;
        let Some(spot) = self.config.spot() else {
            return;
        };
        match self.config.util {
            UtilMode::PerCpu => {
                for (i, &u) in utils.iter().enumerate() {
                    weigh(
                        &self.config,
                        &mut self.scores[i],
                        &mut self.episodes[i],
                        u > spot,
                        now,
                    );
                }
            }
            UtilMode::Average => {
                let sum: u64 = utils.iter().map(|&u| u as u64).sum();
                let above = sum > spot as u64 * utils.len() as u64;
                weigh(
                    &self.config,
                    &mut self.scores[0],
                    &mut self.episodes[0],
                    above,
                    now,
                );
            }
        }
    }

    /// At trigger point `trigger`, time `now`: [`observe`](Self::observe)s the utilisations,
    /// then answers whether to balance and between which CPUs. Balances when the trigger is a
    /// check point and the judged utilisation (each CPU's, or the average) is over the
    /// policy's bar — cold: above `cold_threshold`; hot: at least `hot_threshold`; warm: above
    /// the score — and the busiest such CPU is busier than the least used one.
    pub fn check(&mut self, trigger: Trigger, utils: &[Permille], now: Time) -> Option<Balance> {
        self.observe(utils, now);
        if !trigger.is_check_point() {
            return None;
        }
        let from = match self.config.util {
            UtilMode::PerCpu => {
                let mut best: Option<usize> = None;
                for (i, &u) in utils.iter().enumerate() {
                    if self.over(i, u as u64, 1) && best.is_none_or(|b| u > utils[b]) {
                        best = Some(i);
                    }
                }
                best?
            }
            UtilMode::Average => {
                let sum: u64 = utils.iter().map(|&u| u as u64).sum();
                if !self.over(0, sum, utils.len() as u64) {
                    return None;
                }
                extreme(utils, |u, b| u > b)
            }
        };
        let to = extreme(utils, |u, b| u < b);
        (utils[from] > utils[to]).then_some(Balance {
            from: from as u32,
            to: to as u32,
        })
    }

    /// Which task moves on a [`Balance`] (rule 5): the index in `candidates` of the heaviest
    /// (the balancer moves load), then the latest in virtual runtime (cache-coldest), then the
    /// lowest `id`; or `None`. `from_runnable` and `to_runnable` count the runnable fair tasks
    /// on the two CPUs, the candidates among them. Nothing moves from a CPU with fewer than two
    /// (its one task is running: `busiest->nr_running > 1`), nor, with `guard`, unless the
    /// source has two more than the target (utilisations lag the queues: a move between
    /// nearly equal queues would shift the imbalance, not reduce it). A warm policy never moves
    /// a task under its [`TaskFloor`]. A task's usage only filters: the paper says which tasks
    /// stay, not which of the rest moves, so the order is the balancer's (load, then cache).
    /// Pure and allocation-free.
    pub fn choose(
        &self,
        from_runnable: usize,
        to_runnable: usize,
        guard: bool,
        candidates: &[Candidate],
    ) -> Option<usize> {
        if from_runnable < 2 || (guard && from_runnable <= to_runnable + 1) {
            return None;
        }
        let c = &self.config;
        let floor = match (c.spot(), c.task_floor) {
            (None, _) | (_, TaskFloor::Off) => None,
            // "lower than the CPU usage of the warm zone area is not migrated": from the low spot.
            (Some(_), TaskFloor::WarmZone) => Some(c.warm_spot_low),
            // "higher than that of the configured spot": above it.
            (Some(spot), TaskFloor::Spot) => Some(spot + 1),
        };
        let mut best: Option<usize> = None;
        for (i, t) in candidates.iter().enumerate() {
            if floor.is_some_and(|f| t.util < f) {
                continue;
            }
            let key = |t: &Candidate| (t.weight, t.vruntime, std::cmp::Reverse(t.id));
            if best.is_none_or(|b| key(t) > key(&candidates[b])) {
                best = Some(i);
            }
        }
        best
    }

    /// Whether `sum` over `n` CPUs is over the policy's bar (`unit`'s score for warm ones).
    fn over(&self, unit: usize, sum: u64, n: u64) -> bool {
        let c = &self.config;
        match c.operation_zone {
            OperationZone::Cold => sum > c.cold_threshold as u64 * n,
            OperationZone::Hot => sum >= c.hot_threshold as u64 * n,
            _ => sum > self.scores[unit] as u64 * n,
        }
    }

    /// The utilisation the zones judge, as (sum, count) so averages compare exactly.
    fn judged(&self, utils: &[Permille]) -> (u64, u64) {
        assert_eq!(utils.len(), self.cpus as usize, "one utilisation per CPU");
        match self.config.util {
            UtilMode::PerCpu => (utils.iter().copied().max().unwrap_or(0) as u64, 1),
            UtilMode::Average => (utils.iter().map(|&u| u as u64).sum(), utils.len() as u64),
        }
    }
}

/// The first CPU whose utilisation beats every other's by `better` (ties: the lowest index).
fn extreme(utils: &[Permille], better: impl Fn(Permille, Permille) -> bool) -> usize {
    let mut best = 0;
    for (i, &u) in utils.iter().enumerate().skip(1) {
        if better(u, utils[best]) {
            best = i;
        }
    }
    best
}

/// One unit's prize and punish (see [`ZoneBalancer::observe`]).
fn weigh(c: &ZoneConfig, score: &mut Permille, ep: &mut Episode, above: bool, now: Time) {
    if above {
        if ep.since.is_none() {
            *ep = Episode {
                since: Some(now),
                prized_to: now,
            };
        }
        let prizes = now.saturating_sub(ep.prized_to) / c.prize_time;
        if prizes > 0 {
            ep.prized_to += prizes * c.prize_time;
            let raised = (*score as u64).saturating_add(prizes.saturating_mul(c.score_step as u64));
            *score = raised.min(c.warm_spot_high as u64) as Permille;
        }
    } else if let Some(since) = ep.since.take() {
        if now.saturating_sub(since) < c.punish_time {
            *score = score.saturating_sub(c.score_step).max(c.warm_spot_low);
        }
    }
}
