//! `opzone` — the decision logic of the operation-zone load balancer (opzone paper: Lim, Min,
//! Eom, "Load-Balancing for Improving User Responsiveness on Multicore Embedded Systems", §3).
//! Pure logic, no run queues: a fair policy with per-CPU run queues (the simulator's `cfs`, the
//! real balancer `python/rtsched/balance.py` through the binding) asks it *whether* to run its
//! load balance, *from which CPU to which* and *which task*, and does the moving itself.
//!
//! The rules (§3, §3.1, §3.2):
//! 1. **Check points** (§3, Fig 2). Balancing is considered only when the status of tasks can
//!    change: a task is created, an idle CPU's task wakes up, a running task belongs to the
//!    busiest scheduling group ([`Trigger`]). Never on a plain periodic tick.
//! 2. **Operation zone** (§3.1, Fig 3): the administrator's policy ([`OperationZone`]).
//!    *Cold* (§3.1.1): no balancing while the utilisation is in the cold zone, 0–30 %; balance
//!    once it exceeds it. *Hot* (§3.1.2): balance only in the hot zone, 80–100 %. *Warm*
//!    (§3.1.3): balance when the utilisation is higher than the chosen spot — low 30 %, mid
//!    50 %, high 80 % — as moved by the weight-based score (rule 3).
//! 3. **Weight-based score** (§3.1.3, Fig 5), warm policies only: a usage that stays high for
//!    longer than `balance_weight_{prize|punish}_time` (5 s) counts 5 points lower; a usage of
//!    the spot that lasts shorter counts 5 points higher; the score never leaves
//!    [low spot, high spot].
//! 4. **Utilisation** (§3.2): per CPU (default) or the average of all CPUs
//!    (`balance_cpus_avg_enable=1`), [`UtilMode`].
//! 5. **What moves** (§3.1.3, Fig 4): a task of the CPU with the highest utilisation goes to
//!    the CPU with the lowest ([`Balance`]). Which task: [`ZoneBalancer::choose`] — never one
//!    "lower than the CPU usage of the *warm zone* area" under a warm policy ([`TaskFloor`]),
//!    nothing from a CPU with one runnable task, nor (the guard) unless it has two more than
//!    the target; of the rest the heaviest, then the latest in virtual runtime. A task's usage
//!    is the caller's measure, by default its *demand* ([`TaskUsage`]).
//!
//! Units: utilisation in per-mille ([`Permille`], 1000 = 100 %, values above 1000 allowed for
//! an overloaded CPU); time in integer ns. [`ZoneBalancer::new`] allocates its per-unit state
//! once; `observe`, `check` and `zone` never allocate (they sit on the simulator's hot path).
//!
//! Use (a fair policy's balancer, e.g. for `cfs:balancer=opzone,zone=warm-high,prize_time=5s`):
//!
//! ```
//! use rtsched_policies::opzone::{Balance, Trigger, ZoneBalancer, ZoneConfig};
//! let options = [("balancer", "opzone"), ("zone", "warm-mid"), ("util", "average")];
//! let options: Vec<(String, String)> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
//! let mut zb = ZoneBalancer::new(ZoneConfig::from_options("cfs", &options)?, 4);
//! zb.observe(&[500, 850, 250, 550], 0); // at every utilisation sample, e.g. each tick
//! // At a check point (Fig 4: average 53.75% > mid spot 50%): a task of CPU1 goes to CPU2.
//! assert_eq!(zb.check(Trigger::TaskCreated, &[500, 850, 250, 550], 1_000_000), Some(Balance { from: 1, to: 2 }));
//! # Ok::<(), String>(())
//! ```
//!
//! ## Reading the paper
//!
//! §3 is short and in places ambiguous; each choice below names the sentence it reads.
//!
//! - **The score is the weighted spot.** "Although the score of task can increase or decrease,
//!   these tasks cannot exceed the maximum value, *high spot*, and go below the minimum value,
//!   *low spot*" and "The spot performs the role of controlling the CPU usage of tasks that can
//!   be changed according to weight score": the score lives in spot units and is bounded by
//!   the spots, so we keep it as the spot a unit's usage must exceed, starting at the
//!   configured spot. The paper states its ±5 on the *usage* ("-5 which means that CPU
//!   utilization is lower", "+5 elevates the load-balancing possibility"); counting a usage 5
//!   lower against a spot is the same as raising that spot by 5, so the signs here are the
//!   paper's, mirrored. This reading makes the three spots' bullets hold as written: from the
//!   high spot the score "cannot go up any more", from the low spot it "cannot go down any
//!   more", from the mid spot it moves both ways; and a warm policy always lies between the
//!   cold one (balance above 30 %) and the hot one (balance from 80 %), "the middle between".
//! - **Prize and punish.** The paper names both times in one sentence and never says which is
//!   which. Prize: a usage above the spot "more than five seconds" — the task "that utilizes
//!   CPU resources continually and actively", which the score supports "to use the existing CPU
//!   continually" — raises the weighted spot by `score_step` once per full `prize_time` the
//!   episode lasts (fewer migrations: it keeps its cache). Punish: an above-spot episode that
//!   ends "shorter than five seconds" lowers it by `score_step` when it ends.
//! - **"High usage" is measured against the configured spot**, not the weighted one, so an
//!   episode does not end just because the score moved; an episode is the time between the
//!   first observation above the spot and the first one at or below it (so its length is only
//!   as precise as the caller's sampling).
//! - **No decay.** The paper gives no rule that brings a score back to its spot when a CPU
//!   goes quiet; none is invented here. A raised score comes down only through punishes.
//! - **Units of the score.** The paper scores tasks; this module sees only CPU utilisations
//!   (the caller owns tasks), so a score belongs to a CPU in per-CPU mode and to the whole
//!   system in average mode: on per-CPU run queues a CPU's usage is its tasks' usage.
//! - **Boundaries.** "cold zone, 0~30%" and "performs the load-balancing only when the CPU
//!   utilization exceeds cold zone": 30 % itself is cold (balance iff u > 30 %). "hot zone,
//!   80~100%": 80 % itself is hot (balance iff u >= 80 %). "when the average usage of CPU is
//!   over 50%": a warm policy balances iff u > spot, strictly. Averages are compared exactly
//!   (sum against spot × CPUs), not rounded.
//! - **Per-CPU mode**: "kernel executes task migration depending on the usage ratio of each
//!   CPU" — balance when *any* CPU is over its bar; the source is the busiest such CPU. The
//!   system's zone is the zone of its busiest CPU (per-CPU) or of the average.
//! - **Nothing to move.** When the chosen source is not strictly busier than the least used
//!   CPU (one CPU, or all equal) there is no imbalance: no balance.
//! - **Tasks below the warm zone.** "In case of *high spot* and the *warm zone* policy, the
//!   load-balancer starts the operations when the average usage of CPU is over 80%. Tasks that
//!   are lower than the CPU usage of the *warm zone* area is not migrated into another CPU":
//!   a task's *own* usage (the CPU's is already judged by the zone check). The warm zone area
//!   starts at the low spot ("This spot has the lowest CPU usage in the *warm zone* policy"),
//!   so by default (`task_floor=warm-zone`) a task under `warm_spot_low` stays. The paragraph
//!   before says "If CPU usage of a task is higher than that of the configured spot [...],
//!   kernel performs load-balancing through task migration": `task_floor=spot` moves only a
//!   task above the configured (unweighted) spot; `task_floor=off` any task. Cold and hot
//!   policies have no warm zone to be under: any task.
//! - **A task's CPU usage is its demand.** The paper defines a CPU's usage, not a task's
//!   ("the CPU usage information [...] is calculated by the scheduling element of a task",
//!   which keeps both its time on a CPU and its time waiting). As time *running*, a task
//!   sharing a CPU hardly reaches the floor — a hog sharing a CPU with three others runs 25 %
//!   — yet the paper's warm-high runs under "heavy background stress" of more tasks than CPUs
//!   "while maintaining overall CPU utilization balanced". So by default (`task_usage=demand`)
//!   a task's usage is the share of the window it was *runnable*, running or waiting on a run
//!   queue: a hog demands ~100 % wherever it runs, a light periodic task its duty cycle.
//!   `task_usage=running`: time on a CPU only (the reading before). The caller measures it
//!   ([`Candidate::util`]): the simulator over its ticks, the real balancer from
//!   `/proc/<pid>/task/<tid>/schedstat`.
//! - **Default policy.** The paper states no default zone; the default here is warm-high, the
//!   configuration of its evaluation (§4.2, Fig 7).
//! - **Spots lie in the warm zone** (low ≥ cold threshold, high ≤ hot threshold, as the
//!   defaults 30/80 do): checked for warm policies only, where the spots are used.

use rtsched_model::text::closest;
use rtsched_model::time::{parse_decimal_scaled, parse_duration_str, Time, NS_PER_S};

/// Utilisation (and thresholds, spots, score steps) in per-mille: 1000 = 100 %.
pub type Permille = u32;

/// The administrator's load-balancing policy (§3.1, Fig 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationZone {
    /// Balance only once utilisation exceeds the cold zone (`cold_threshold`).
    Cold,
    /// Warm zone policy at the low, mid or high spot (weighted by the score).
    WarmLow,
    WarmMid,
    WarmHigh,
    /// Balance only in the hot zone (from `hot_threshold`).
    Hot,
}

impl OperationZone {
    pub const NAMES: [&'static str; 5] = ["cold", "warm-low", "warm-mid", "warm-high", "hot"];
    const ALL: [OperationZone; 5] = [
        Self::Cold,
        Self::WarmLow,
        Self::WarmMid,
        Self::WarmHigh,
        Self::Hot,
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|&z| z == self).expect("listed")]
    }

    pub fn parse(s: &str) -> Option<OperationZone> {
        Self::NAMES
            .iter()
            .position(|&n| n == s)
            .map(|i| Self::ALL[i])
    }

    pub fn is_warm(self) -> bool {
        matches!(self, Self::WarmLow | Self::WarmMid | Self::WarmHigh)
    }
}

/// Which utilisation the zones are judged on (§3.2, `balance_cpus_avg_enable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilMode {
    /// Each CPU's own (the paper's default).
    PerCpu,
    /// The average over all CPUs.
    Average,
}

impl UtilMode {
    pub const NAMES: [&'static str; 2] = ["per-cpu", "average"];

    pub fn name(self) -> &'static str {
        match self {
            Self::PerCpu => "per-cpu",
            Self::Average => "average",
        }
    }
}

/// Which of its tasks a warm policy may move (§3.1.3: "Tasks that are lower than the CPU usage
/// of the *warm zone* area is not migrated"; option `task_floor`, see "Reading the paper").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskFloor {
    /// A task below the warm zone — its own utilisation under `warm_spot_low`, "the lowest CPU
    /// usage in the warm zone policy" — stays (the default).
    WarmZone,
    /// Only a task whose own utilisation is higher than the configured spot moves ("If CPU
    /// usage of a task is higher than that of the configured spot ...").
    Spot,
    /// Any task may move (the reading before issue #38).
    Off,
}

/// What a task's own CPU usage is, for the [`TaskFloor`] (option `task_usage`, see "Reading the
/// paper"). [`ZoneBalancer::choose`] compares whatever [`Candidate::util`] holds; this tells
/// the caller what to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskUsage {
    /// The share of the window it was runnable: running or waiting on a run queue (the
    /// default).
    Demand,
    /// The share of the window it ran.
    Running,
}

impl TaskUsage {
    pub const NAMES: [&'static str; 2] = ["demand", "running"];

    pub fn name(self) -> &'static str {
        match self {
            Self::Demand => "demand",
            Self::Running => "running",
        }
    }

    pub fn parse(s: &str) -> Option<TaskUsage> {
        match s {
            "demand" => Some(Self::Demand),
            "running" => Some(Self::Running),
            _ => None,
        }
    }
}

impl TaskFloor {
    pub const NAMES: [&'static str; 3] = ["warm-zone", "spot", "off"];
    const ALL: [TaskFloor; 3] = [Self::WarmZone, Self::Spot, Self::Off];

    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|&f| f == self).expect("listed")]
    }

    pub fn parse(s: &str) -> Option<TaskFloor> {
        Self::NAMES
            .iter()
            .position(|&n| n == s)
            .map(|i| Self::ALL[i])
    }
}

/// Every threshold and time of §3, named as in the paper. `Default` is the paper's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    /// The policy (option `zone`; default warm-high, see "Reading the paper").
    pub operation_zone: OperationZone,
    /// Top of the cold zone, inclusive (30 %).
    pub cold_threshold: Permille,
    /// Bottom of the hot zone, inclusive (80 %).
    pub hot_threshold: Permille,
    /// The warm zone's spots (30 / 50 / 80 %); also the score's bounds.
    pub warm_spot_low: Permille,
    pub warm_spot_mid: Permille,
    pub warm_spot_high: Permille,
    /// `balance_weight_prize_time` (5 s): usage above the spot this long raises the score.
    pub prize_time: Time,
    /// `balance_weight_punish_time` (5 s): usage above the spot ending sooner lowers it.
    pub punish_time: Time,
    /// How far one prize or punish moves the score (5 %; 0 turns the weighting off).
    pub score_step: Permille,
    /// Per-CPU or average utilisation (`balance_cpus_avg_enable`; default per-CPU).
    pub util: UtilMode,
    /// Which tasks a warm policy may move (option `task_floor`; default warm-zone).
    pub task_floor: TaskFloor,
    /// What the floor compares: a task's demand or its running time (option `task_usage`;
    /// default demand). Measured by the caller.
    pub task_usage: TaskUsage,
}

impl Default for ZoneConfig {
    fn default() -> Self {
        ZoneConfig {
            operation_zone: OperationZone::WarmHigh,
            cold_threshold: 300,
            hot_threshold: 800,
            warm_spot_low: 300,
            warm_spot_mid: 500,
            warm_spot_high: 800,
            prize_time: 5 * NS_PER_S,
            punish_time: 5 * NS_PER_S,
            score_step: 50,
            util: UtilMode::PerCpu,
            task_floor: TaskFloor::WarmZone,
            task_usage: TaskUsage::Demand,
        }
    }
}

impl ZoneConfig {
    /// The option keys [`ZoneConfig::from_options`] reads.
    pub const KEYS: [&'static str; 12] = [
        "zone",
        "cold_threshold",
        "hot_threshold",
        "warm_spot_low",
        "warm_spot_mid",
        "warm_spot_high",
        "prize_time",
        "punish_time",
        "score_step",
        "util",
        "task_floor",
        "task_usage",
    ];

    /// The spot of a warm policy (None for cold and hot).
    pub fn spot(&self) -> Option<Permille> {
        match self.operation_zone {
            OperationZone::WarmLow => Some(self.warm_spot_low),
            OperationZone::WarmMid => Some(self.warm_spot_mid),
            OperationZone::WarmHigh => Some(self.warm_spot_high),
            OperationZone::Cold | OperationZone::Hot => None,
        }
    }

    /// The zone one utilisation is in: cold up to `cold_threshold`, hot from `hot_threshold`.
    pub fn zone_of(&self, u: Permille) -> Zone {
        if u <= self.cold_threshold {
            Zone::Cold
        } else if u >= self.hot_threshold {
            Zone::Hot
        } else {
            Zone::Warm
        }
    }

    /// The defaults overridden by a scheduler's options, e.g. the options of
    /// `cfs:balancer=opzone,zone=warm-high,prize_time=5s`, validated. Keys outside
    /// [`ZoneConfig::KEYS`] (and bare options) are the caller's and are skipped: the caller
    /// rejects what neither of them knows. Percentages are written `30%` or `30` (one decimal
    /// at most: `32.5%`), durations with a unit (`5s`, `500ms`; a bare number is ms, as in
    /// files). Errors name the scheduler and the option: "scheduler 'cfs': option
    /// 'warm_spot_low': 60% is above warm_spot_mid (50%)".
    pub fn from_options(
        scheduler: &str,
        options: &[(String, String)],
    ) -> Result<ZoneConfig, String> {
        let err = |e: String| format!("scheduler '{scheduler}': {e}");
        let mut c = ZoneConfig::default();
        let mut given: Vec<&str> = Vec::new();
        for (key, value) in options {
            let Some(&key) = Self::KEYS.iter().find(|&&k| k == key) else {
                continue;
            };
            if given.contains(&key) {
                return Err(err(format!("option '{key}' is given twice")));
            }
            given.push(key);
            let v = value.as_str();
            match key {
                "zone" => {
                    c.operation_zone = OperationZone::parse(v).ok_or_else(|| {
                        let hint = closest(v, &OperationZone::NAMES)
                            .map(|s| format!(" (did you mean '{s}'?)"))
                            .unwrap_or_default();
                        err(format!(
                            "option 'zone': unknown operation zone '{v}'{hint}; known: {}",
                            OperationZone::NAMES.join(", ")
                        ))
                    })?
                }
                "util" => {
                    c.util = match v {
                        "per-cpu" => UtilMode::PerCpu,
                        "average" => UtilMode::Average,
                        _ => {
                            let known = UtilMode::NAMES.join(", ");
                            return Err(err(format!(
                                "option 'util': unknown utilisation mode '{v}'; known: {known}"
                            )));
                        }
                    }
                }
                "task_floor" => {
                    c.task_floor = TaskFloor::parse(v).ok_or_else(|| {
                        err(format!(
                            "option 'task_floor': unknown task floor '{v}'; known: {}",
                            TaskFloor::NAMES.join(", ")
                        ))
                    })?
                }
                "task_usage" => {
                    c.task_usage = TaskUsage::parse(v).ok_or_else(|| {
                        err(format!(
                            "option 'task_usage': unknown task usage '{v}'; known: {}",
                            TaskUsage::NAMES.join(", ")
                        ))
                    })?
                }
                "prize_time" | "punish_time" => {
                    let t =
                        parse_duration_str(v).map_err(|e| err(format!("option '{key}': {e}")))?;
                    *if key == "prize_time" {
                        &mut c.prize_time
                    } else {
                        &mut c.punish_time
                    } = t;
                }
                _ => {
                    let p = parse_percent(v).map_err(|e| err(format!("option '{key}': {e}")))?;
                    *match key {
                        "cold_threshold" => &mut c.cold_threshold,
                        "hot_threshold" => &mut c.hot_threshold,
                        "warm_spot_low" => &mut c.warm_spot_low,
                        "warm_spot_mid" => &mut c.warm_spot_mid,
                        "warm_spot_high" => &mut c.warm_spot_high,
                        "score_step" => &mut c.score_step,
                        _ => unreachable!("every key of KEYS is handled"),
                    } = p;
                }
            }
        }
        c.check(&given).map_err(err)?;
        Ok(c)
    }

    /// Checks a configuration built by hand; the error names the field ("option
    /// 'warm_spot_low': 60% is above warm_spot_mid (50%)").
    pub fn validate(&self) -> Result<(), String> {
        self.check(&Self::KEYS)
    }

    /// The checks of [`ZoneConfig::validate`]. Of two fields out of order, the error names the
    /// one the user gave (`given`), or the first when both or neither were.
    fn check(&self, given: &[&str]) -> Result<(), String> {
        let pcts = [
            ("cold_threshold", self.cold_threshold),
            ("hot_threshold", self.hot_threshold),
            ("warm_spot_low", self.warm_spot_low),
            ("warm_spot_mid", self.warm_spot_mid),
            ("warm_spot_high", self.warm_spot_high),
            ("score_step", self.score_step),
        ];
        for (name, p) in pcts {
            if p > 1000 {
                return Err(format!("option '{name}': {} is outside 0–100%", fmt_pct(p)));
            }
        }
        for (name, t) in [
            ("prize_time", self.prize_time),
            ("punish_time", self.punish_time),
        ] {
            if t == 0 {
                return Err(format!("option '{name}': must be positive, got 0"));
            }
        }
        // (lower field, its value, upper field, its value, strict).
        let mut order = vec![
            (
                "cold_threshold",
                self.cold_threshold,
                "hot_threshold",
                self.hot_threshold,
                true,
            ),
            (
                "warm_spot_low",
                self.warm_spot_low,
                "warm_spot_mid",
                self.warm_spot_mid,
                false,
            ),
            (
                "warm_spot_mid",
                self.warm_spot_mid,
                "warm_spot_high",
                self.warm_spot_high,
                false,
            ),
        ];
        if self.operation_zone.is_warm() {
            order.push((
                "cold_threshold",
                self.cold_threshold,
                "warm_spot_low",
                self.warm_spot_low,
                false,
            ));
            order.push((
                "warm_spot_high",
                self.warm_spot_high,
                "hot_threshold",
                self.hot_threshold,
                false,
            ));
        }
        for (lo_name, lo, hi_name, hi, strict) in order {
            if lo > hi || (strict && lo == hi) {
                let relation = if strict { "not below" } else { "above" };
                return Err(if given.contains(&hi_name) && !given.contains(&lo_name) {
                    let relation = if strict { "not above" } else { "below" };
                    format!(
                        "option '{hi_name}': {} is {relation} {lo_name} ({})",
                        fmt_pct(hi),
                        fmt_pct(lo)
                    )
                } else {
                    format!(
                        "option '{lo_name}': {} is {relation} {hi_name} ({})",
                        fmt_pct(lo),
                        fmt_pct(hi)
                    )
                });
            }
        }
        Ok(())
    }
}

/// `30`, `30%`, `32.5%` to per-mille (at most one decimal: a per-mille is the resolution).
fn parse_percent(text: &str) -> Result<Permille, String> {
    let t = text.trim();
    let num = t.strip_suffix('%').unwrap_or(t).trim();
    if num.starts_with('-') {
        return Err(format!("{t} is outside 0–100%"));
    }
    let p = parse_decimal_scaled(num, 10).map_err(|_| {
        format!("'{t}' is not a percentage with at most one decimal (e.g. 30% or 32.5%)")
    })?;
    if p > 1000 {
        return Err(format!("{}% is outside 0–100%", num));
    }
    Ok(p as Permille)
}

/// Per-mille as a percentage: `600` → `60%`, `325` → `32.5%`.
fn fmt_pct(p: Permille) -> String {
    if p.is_multiple_of(10) {
        format!("{}%", p / 10)
    } else {
        format!("{}.{}%", p / 10, p % 10)
    }
}

/// The zone a utilisation is in (§3.1, Fig 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    Cold,
    Warm,
    Hot,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rtsched_model::time::NS_PER_MS;

    /// The options of a spec written after the scheduler's name, e.g. `balancer=opzone,zone=hot`.
    fn opts(s: &str) -> Vec<(String, String)> {
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (String::new(), p.to_string()),
            })
            .collect()
    }

    fn parse(s: &str) -> Result<ZoneConfig, String> {
        ZoneConfig::from_options("cfs", &opts(s))
    }

    #[test]
    fn defaults_are_the_papers() {
        let c = ZoneConfig::default();
        assert_eq!((c.cold_threshold, c.hot_threshold), (300, 800));
        assert_eq!(
            (c.warm_spot_low, c.warm_spot_mid, c.warm_spot_high),
            (300, 500, 800)
        );
        assert_eq!((c.prize_time, c.punish_time), (5 * NS_PER_S, 5 * NS_PER_S));
        assert_eq!(c.score_step, 50);
        assert_eq!(c.util, UtilMode::PerCpu);
        assert_eq!(c.operation_zone, OperationZone::WarmHigh);
        assert_eq!(c.spot(), Some(800));
        assert_eq!(c.task_floor, TaskFloor::WarmZone);
        assert_eq!(c.task_usage, TaskUsage::Demand);
        assert!(c.validate().is_ok());
        for (i, n) in OperationZone::NAMES.iter().enumerate() {
            assert_eq!(OperationZone::parse(n).unwrap().name(), *n, "zone {i}");
        }
    }

    #[test]
    fn zone_boundaries() {
        let c = ZoneConfig::default();
        assert_eq!(c.zone_of(0), Zone::Cold);
        assert_eq!(c.zone_of(300), Zone::Cold, "0~30% is cold, 30% included");
        assert_eq!(c.zone_of(301), Zone::Warm);
        assert_eq!(c.zone_of(799), Zone::Warm);
        assert_eq!(c.zone_of(800), Zone::Hot, "80~100% is hot, 80% included");
        assert_eq!(c.zone_of(1500), Zone::Hot, "an overloaded CPU");
    }

    #[test]
    fn options_override_the_defaults_and_leave_the_callers_alone() {
        let spec = "balancer=opzone,zone=warm-mid,prize_time=3s,punish_time=500ms,util=average,warm_spot_low=32.5%,score_step=10,fast";
        let c = parse(spec).unwrap();
        assert_eq!(c.operation_zone, OperationZone::WarmMid);
        assert_eq!(
            (c.prize_time, c.punish_time),
            (3 * NS_PER_S, 500 * NS_PER_MS)
        );
        assert_eq!(c.util, UtilMode::Average);
        assert_eq!((c.warm_spot_low, c.score_step), (325, 100));
        assert_eq!(c.warm_spot_mid, 500, "untouched");
        assert_eq!(parse("").unwrap(), ZoneConfig::default());
        assert_eq!(
            parse("prize_time=250").unwrap().prize_time,
            250 * NS_PER_MS,
            "a bare number is ms"
        );
        assert_eq!(
            parse("task_floor=spot").unwrap().task_floor,
            TaskFloor::Spot
        );
        assert_eq!(parse("task_floor=off").unwrap().task_floor.name(), "off");
        assert_eq!(
            parse("task_usage=running").unwrap().task_usage,
            TaskUsage::Running
        );
        assert_eq!(
            parse("task_usage=demand").unwrap().task_usage.name(),
            "demand"
        );
        // cold and hot policies do not use the spots, so their thresholds may pass them.
        assert_eq!(
            parse("zone=cold,cold_threshold=40%")
                .unwrap()
                .cold_threshold,
            400
        );
        assert_eq!(
            parse("zone=hot,hot_threshold=70%").unwrap().hot_threshold,
            700
        );
    }

    const S: Time = NS_PER_S;
    const CHECKS: [Trigger; 3] = [
        Trigger::TaskCreated,
        Trigger::IdleWakeup,
        Trigger::BusiestGroup,
    ];

    fn balancer(spec: &str, cpus: u32) -> ZoneBalancer {
        ZoneBalancer::new(parse(spec).unwrap(), cpus)
    }

    fn mv(from: u32, to: u32) -> Option<Balance> {
        Some(Balance { from, to })
    }

    /// §3.1.1: nothing moves while utilisation is in 0~30%, however unequal; once a CPU
    /// exceeds 30% it does.
    #[test]
    fn cold_zone_never_balances() {
        let mut b = balancer("zone=cold", 4);
        let mut now = 0;
        for utils in [
            [300, 0, 0, 0],
            [300, 300, 0, 100],
            [0, 0, 0, 0],
            [250, 0, 300, 10],
        ] {
            assert_eq!(b.zone(&utils), Zone::Cold);
            for _ in 0..30 {
                for t in CHECKS {
                    assert_eq!(b.check(t, &utils, now), None, "{utils:?} at {now}");
                }
                now += S;
            }
        }
        assert_eq!(
            b.check(Trigger::TaskCreated, &[301, 0, 0, 0], now),
            mv(0, 1)
        );
        // Average mode: 100%, 20%, 0, 0 average to exactly 30%, still cold.
        let mut avg = balancer("zone=cold,util=average", 4);
        assert_eq!(avg.zone(&[1000, 200, 0, 0]), Zone::Cold);
        assert_eq!(avg.check(Trigger::TaskCreated, &[1000, 200, 0, 0], 0), None);
        assert_eq!(
            avg.check(Trigger::TaskCreated, &[1000, 201, 0, 0], 0),
            mv(0, 2)
        );
    }

    /// §3.1.2: an imbalance in the hot zone (80~100%) is balanced at the next check point (not
    /// at a tick); below 80% the hot policy does nothing at all.
    #[test]
    fn hot_zone_imbalance_balances_at_the_next_check() {
        let mut b = balancer("zone=hot", 4);
        let utils = [850, 100, 400, 400];
        assert_eq!(b.zone(&utils), Zone::Hot);
        assert_eq!(
            b.check(Trigger::Tick, &utils, 0),
            None,
            "a tick is no check point"
        );
        for (i, t) in CHECKS.into_iter().enumerate() {
            assert_eq!(b.check(t, &utils, i as Time), mv(0, 1), "{t:?}");
        }
        assert_eq!(
            b.check(Trigger::IdleWakeup, &[100, 799, 0, 400], 5),
            None,
            "79.9% is warm"
        );
        assert_eq!(
            b.check(Trigger::IdleWakeup, &[100, 800, 0, 400], 6),
            mv(1, 2),
            "80% is hot"
        );
        assert_eq!(
            b.check(Trigger::IdleWakeup, &[900, 900, 900, 900], 7),
            None,
            "hot but nothing to even out"
        );
        assert_eq!(b.check(Trigger::Tick, &[1000, 0, 0, 0], 8), None);
    }

    /// §3.1.3, Fig 4: CPUs at 50, 85, 25, 55% (average 53.75%). Mid spot on the average: over
    /// 50%, CPU1's task goes to CPU2. High spot on the average: under 80%, nothing; high spot
    /// per CPU: CPU1 is over 80%, so it does move.
    #[test]
    fn figure_4_average_and_per_cpu_differ() {
        let fig4 = [500, 850, 250, 550];
        let check = |spec: &str| balancer(spec, 4).check(Trigger::TaskCreated, &fig4, 0);
        assert_eq!(check("zone=warm-mid,util=average"), mv(1, 2));
        assert_eq!(check("zone=warm-high,util=average"), None);
        assert_eq!(check("zone=warm-high,util=per-cpu"), mv(1, 2));
        assert_eq!(check("zone=warm-mid"), mv(1, 2));
        assert_eq!(
            balancer("zone=warm-high", 4).zone(&fig4),
            Zone::Hot,
            "its busiest CPU"
        );
        assert_eq!(
            balancer("zone=warm-high,util=average", 4).zone(&fig4),
            Zone::Warm,
            "53.75%"
        );
    }

    /// The average is compared exactly: 49.9% and 50.1% average to 50%, not over the mid spot,
    /// while per CPU one of them is; 50% and 50.1% average to 50.05%, which is over it (a
    /// rounded-down average would say 50%).
    #[test]
    fn average_is_compared_exactly() {
        let check = |spec: &str, utils: [Permille; 2]| {
            balancer(spec, 2).check(Trigger::BusiestGroup, &utils, 0)
        };
        assert_eq!(check("zone=warm-mid,util=average", [499, 501]), None);
        assert_eq!(check("zone=warm-mid,util=per-cpu", [499, 501]), mv(1, 0));
        assert_eq!(check("zone=warm-mid,util=average", [500, 501]), mv(1, 0));
    }

    /// Prize: CPU0 stays at 60% (above the mid spot) continually. For the first 5 s it is
    /// balanced; at 5 s its weighted spot goes to 55%, at 10 s to 60%, and then 60% is no
    /// longer over it: the task keeps its CPU. It rises 5% per 5 s up to the high spot (80%)
    /// and no further. CPU1, idle, keeps the mid spot.
    #[test]
    fn prize_raises_the_spot_after_prize_time_up_to_the_high_spot() {
        let mut b = balancer("zone=warm-mid", 2);
        let busy = [600, 100];
        for ms in (0..5000).step_by(100) {
            b.observe(&busy, ms * NS_PER_MS);
        }
        assert_eq!(b.scores(), [500, 500]);
        assert_eq!(b.check(Trigger::TaskCreated, &busy, 5 * S - 1), mv(0, 1));
        assert_eq!(b.scores(), [500, 500], "4.999999999 s is not yet 5 s");
        b.observe(&busy, 5 * S);
        assert_eq!(b.scores(), [550, 500]);
        b.observe(&busy, 10 * S - 1);
        assert_eq!(b.scores(), [550, 500]);
        assert_eq!(
            b.check(Trigger::TaskCreated, &busy, 10 * S),
            None,
            "60% is not over 60%"
        );
        assert_eq!(b.scores(), [600, 500]);
        for s in 11..=60 {
            b.observe(&busy, s * S);
        }
        assert_eq!(
            b.scores(),
            [800, 500],
            "500 + 12 x 50 stops at the high spot"
        );
        assert_eq!(b.check(Trigger::TaskCreated, &[800, 100], 61 * S), None);
        assert_eq!(b.check(Trigger::TaskCreated, &[810, 100], 62 * S), mv(0, 1));
    }

    /// Punish: an episode above the spot that ends within 5 s lowers the weighted spot by 5%;
    /// one that lasts exactly 5 s does not. Down to the low spot (30%) and no further, where
    /// 31% is balanced though it is under the configured mid spot.
    #[test]
    fn punish_lowers_the_spot_after_a_short_episode_down_to_the_low_spot() {
        let mut b = balancer("zone=warm-mid", 2);
        let (busy, quiet) = ([600, 0], [100, 0]);
        b.observe(&busy, 0);
        b.observe(&busy, 4 * S);
        b.observe(&quiet, 5 * S - 1);
        assert_eq!(b.scores(), [450, 500]);
        // 10 s to 15 s: 5 s, not shorter than punish_time; not prized either (the last
        // observation above the spot is before 15 s).
        b.observe(&busy, 10 * S);
        b.observe(&busy, 15 * S - 1);
        b.observe(&quiet, 15 * S);
        assert_eq!(b.scores(), [450, 500]);
        for k in 0..4 {
            b.observe(&busy, (20 + 2 * k) * S);
            b.observe(&quiet, (21 + 2 * k) * S);
        }
        assert_eq!(b.scores(), [300, 500], "450 - 4 x 50 stops at the low spot");
        assert_eq!(b.check(Trigger::IdleWakeup, &[310, 0], 30 * S), mv(0, 1));
        assert_eq!(
            balancer("zone=warm-mid", 2).check(Trigger::IdleWakeup, &[310, 0], 30 * S),
            None
        );
    }

    /// §3.1.3's spots: "the task of high spot cannot go up any more", "the task of low spot
    /// cannot go down any more"; each can go the other way.
    #[test]
    fn high_spot_cannot_go_up_and_low_spot_cannot_go_down() {
        let sustained = |spec: &str| {
            let mut b = balancer(spec, 1);
            (0..=20).for_each(|s| b.observe(&[900], s * S));
            b.scores()[0]
        };
        let bursts = |spec: &str| {
            let mut b = balancer(spec, 1);
            (0..10).for_each(|s| b.observe(&[if s % 2 == 0 { 900 } else { 0 }], s * S));
            b.scores()[0]
        };
        assert_eq!(sustained("zone=warm-high"), 800);
        assert_eq!(bursts("zone=warm-high"), 550, "five bursts: 800 - 5 x 50");
        assert_eq!(bursts("zone=warm-low"), 300);
        assert_eq!(
            sustained("zone=warm-low"),
            500,
            "four prizes in 20 s: 300 + 4 x 50"
        );
    }

    /// Observations 17 s apart still count every whole prize time in between.
    #[test]
    fn sparse_observations_count_every_prize_time() {
        let mut b = balancer("zone=warm-mid,util=average", 2);
        b.observe(&[700, 400], 0);
        b.observe(&[700, 400], 17 * S);
        assert_eq!(b.scores(), [650], "three prizes (15 s)");
        b.observe(&[700, 400], 20 * S);
        assert_eq!(b.scores(), [700], "the fourth at 20 s, not 17 + 5 s");
        // The average (55%) is not over the weighted spot (70%) any more.
        assert_eq!(b.check(Trigger::TaskCreated, &[700, 400], 21 * S), None);
        assert_eq!(
            b.check(Trigger::TaskCreated, &[1000, 401], 22 * S),
            mv(0, 1)
        );
    }

    #[test]
    fn only_warm_policies_keep_scores() {
        assert!(balancer("zone=cold", 4).scores().is_empty());
        assert!(balancer("zone=hot", 4).scores().is_empty());
        assert_eq!(balancer("zone=warm-low", 4).scores(), [300; 4]);
        assert_eq!(balancer("zone=warm-mid,util=average", 4).scores(), [500]);
        assert_eq!(balancer("zone=warm-high,score_step=0", 1).scores(), [800]);
    }

    fn cand(util: Permille, weight: u64, vruntime: u64, id: u64) -> Candidate {
        Candidate {
            util,
            weight,
            vruntime,
            id,
        }
    }

    /// §3.1.3: "Tasks that are lower than the CPU usage of the warm zone area is not migrated".
    /// CPU0's waiting tasks: A uses 25% itself at nice -5 (weight 3121), B 60% at nice 0 (1024);
    /// 3 runnable on CPU0, 0 on CPU1. Warm-high: A is heavier, but 25% < the low spot 30%, so B
    /// (index 1) moves; without the floor (the old rule) A (index 0). `task_floor=spot`: only a
    /// task above the 80% spot — neither of these; one at 81% does. Cold and hot: no warm zone,
    /// the heavier A.
    #[test]
    fn a_task_below_the_warm_zone_is_not_migrated() {
        let tasks = [cand(250, 3121, 0, 7), cand(600, 1024, 0, 8)];
        let choose = |spec: &str, tasks: &[Candidate]| balancer(spec, 2).choose(3, 0, true, tasks);
        assert_eq!(choose("zone=warm-high", &tasks), Some(1));
        assert_eq!(choose("zone=warm-low", &tasks), Some(1));
        assert_eq!(choose("zone=warm-high,task_floor=off", &tasks), Some(0));
        assert_eq!(choose("zone=warm-high,task_floor=spot", &tasks), None);
        assert_eq!(
            choose(
                "zone=warm-high,task_floor=spot",
                &[tasks[0], tasks[1], cand(810, 15, 0, 9)]
            ),
            Some(2)
        );
        assert_eq!(
            choose("zone=warm-high", &[cand(299, 1024, 0, 1)]),
            None,
            "29.9% is under 30%"
        );
        assert_eq!(
            choose("zone=warm-high", &[cand(300, 1024, 0, 1)]),
            Some(0),
            "30% is the low spot"
        );
        assert_eq!(
            choose("zone=warm-mid,warm_spot_low=40%", &[cand(350, 1024, 0, 1)]),
            None,
            "the configured low spot"
        );
        assert_eq!(choose("zone=cold", &tasks), Some(0));
        assert_eq!(choose("zone=hot", &tasks), Some(0));
    }

    /// Rule 5's order and queue rules. Equal weights: the latest virtual runtime (id 5, at 9 ms),
    /// then of equal runtimes the lowest id. 2 runnable against 1: the guard (2 <= 1 + 1)
    /// refuses, without it the move is allowed; 1 runnable: nothing waits, nothing moves.
    #[test]
    fn choose_orders_by_weight_then_vruntime_and_keeps_the_guard() {
        let b = balancer("zone=hot", 2);
        let tasks = [
            cand(900, 1024, 3_000_000, 4),
            cand(900, 1024, 9_000_000, 5),
            cand(900, 1024, 9_000_000, 6),
        ];
        assert_eq!(b.choose(4, 0, true, &tasks), Some(1));
        assert_eq!(
            b.choose(4, 0, true, &[tasks[2], tasks[1]]),
            Some(1),
            "id 5 before id 6, in any order"
        );
        assert_eq!(
            b.choose(2, 1, true, &tasks),
            None,
            "the guard: 2 is not two more than 1"
        );
        assert_eq!(b.choose(3, 1, true, &tasks), Some(1));
        assert_eq!(b.choose(2, 1, false, &tasks), Some(1));
        assert_eq!(
            b.choose(1, 0, false, &tasks),
            None,
            "one runnable task: it is the running one"
        );
        assert_eq!(b.choose(5, 0, true, &[]), None);
    }

    /// A valid configuration: sorted thresholds and spots, any policy and mode, steps and
    /// times small enough that prizes and punishes happen within a sequence.
    fn any_config() -> impl Strategy<Value = ZoneConfig> {
        (
            proptest::collection::vec(0u32..=1000, 5),
            0usize..5,
            any::<bool>(),
            0u32..=400,
            1u64..=3000,
            1u64..=3000,
        )
            .prop_filter_map(
                "cold below hot",
                |(mut v, zone, avg, step, prize_ms, punish_ms)| {
                    v.sort_unstable();
                    (v[0] < v[4]).then(|| ZoneConfig {
                        operation_zone: OperationZone::ALL[zone],
                        cold_threshold: v[0],
                        warm_spot_low: v[1],
                        warm_spot_mid: v[2],
                        warm_spot_high: v[3],
                        hot_threshold: v[4],
                        score_step: step,
                        prize_time: prize_ms * NS_PER_MS,
                        punish_time: punish_ms * NS_PER_MS,
                        util: if avg {
                            UtilMode::Average
                        } else {
                            UtilMode::PerCpu
                        },
                        task_floor: TaskFloor::WarmZone,
                        task_usage: TaskUsage::Demand,
                    })
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the utilisations and however time passes, every score stays within
        /// [low spot, high spot], and every answer moves from a busier CPU to a less busy one.
        #[test]
        fn score_stays_within_the_spots(
            config in any_config(),
            steps in proptest::collection::vec((proptest::array::uniform4(0u32..=1200), 0u64..=4000, 0usize..4), 1..300),
        ) {
            prop_assert!(config.validate().is_ok());
            let mut b = ZoneBalancer::new(config, 4);
            let triggers = [Trigger::TaskCreated, Trigger::IdleWakeup, Trigger::BusiestGroup, Trigger::Tick];
            let mut now = 0;
            for (utils, dt_ms, t) in steps {
                now += dt_ms * NS_PER_MS;
                let answer = b.check(triggers[t], &utils, now);
                for &s in b.scores() {
                    let (low, high) = (config.warm_spot_low, config.warm_spot_high);
                    prop_assert!((low..=high).contains(&s), "score {} outside [{}, {}]", s, low, high);
                }
                if let Some(Balance { from, to }) = answer {
                    prop_assert!(triggers[t] != Trigger::Tick);
                    prop_assert!(utils[from as usize] > utils[to as usize]);
                }
                if config.operation_zone == OperationZone::Cold && b.zone(&utils) == Zone::Cold {
                    prop_assert_eq!(answer, None);
                }
            }
        }
    }

    /// Every bad input gives an error naming the scheduler and the field.
    #[test]
    fn bad_options_name_the_field() {
        let cases = [
            ("warm_spot_low=60%", "scheduler 'cfs': option 'warm_spot_low': 60% is above warm_spot_mid (50%)"),
            ("warm_spot_mid=90", "scheduler 'cfs': option 'warm_spot_mid': 90% is above warm_spot_high (80%)"),
            ("warm_spot_high=40%", "scheduler 'cfs': option 'warm_spot_high': 40% is below warm_spot_mid (50%)"),
            ("warm_spot_low=60%,warm_spot_mid=55%", "scheduler 'cfs': option 'warm_spot_low': 60% is above warm_spot_mid (55%)"),
            ("warm_spot_low=20%", "scheduler 'cfs': option 'warm_spot_low': 20% is below cold_threshold (30%)"),
            ("warm_spot_low=20%,cold_threshold=25", "scheduler 'cfs': option 'cold_threshold': 25% is above warm_spot_low (20%)"),
            ("cold_threshold=40%", "scheduler 'cfs': option 'cold_threshold': 40% is above warm_spot_low (30%)"),
            ("hot_threshold=70%", "scheduler 'cfs': option 'hot_threshold': 70% is below warm_spot_high (80%)"),
            ("zone=cold,cold_threshold=80%", "scheduler 'cfs': option 'cold_threshold': 80% is not below hot_threshold (80%)"),
            ("zone=hot,hot_threshold=20%", "scheduler 'cfs': option 'hot_threshold': 20% is not above cold_threshold (30%)"),
            ("hot_threshold=120%", "scheduler 'cfs': option 'hot_threshold': 120% is outside 0–100%"),
            ("cold_threshold=-5%", "scheduler 'cfs': option 'cold_threshold': -5% is outside 0–100%"),
            ("score_step=101", "scheduler 'cfs': option 'score_step': 101% is outside 0–100%"),
            ("warm_spot_mid=half", "scheduler 'cfs': option 'warm_spot_mid': 'half' is not a percentage"),
            ("warm_spot_mid=50.25%", "scheduler 'cfs': option 'warm_spot_mid': '50.25%' is not a percentage"),
            ("zone=warm", "scheduler 'cfs': option 'zone': unknown operation zone 'warm'; known: cold, warm-low, warm-mid, warm-high, hot"),
            ("zone=hto", "scheduler 'cfs': option 'zone': unknown operation zone 'hto' (did you mean 'hot'?)"),
            ("util=avg", "scheduler 'cfs': option 'util': unknown utilisation mode 'avg'; known: per-cpu, average"),
            ("task_floor=low", "scheduler 'cfs': option 'task_floor': unknown task floor 'low'; known: warm-zone, spot, off"),
            ("task_usage=waiting", "scheduler 'cfs': option 'task_usage': unknown task usage 'waiting'; known: demand, running"),
            ("prize_time=5parsecs", "scheduler 'cfs': option 'prize_time': unknown unit 'parsecs'"),
            ("punish_time=0s", "scheduler 'cfs': option 'punish_time': must be positive, got 0"),
            ("prize_time=-1s", "scheduler 'cfs': option 'prize_time': must not be negative"),
            ("zone=hot,zone=cold", "scheduler 'cfs': option 'zone' is given twice"),
        ];
        for (spec, want) in cases {
            let e = parse(spec).expect_err(spec);
            assert!(
                e.starts_with(want),
                "{spec}: got \"{e}\", want \"{want}...\""
            );
        }
        // A configuration built by hand is checked the same way.
        let c = ZoneConfig {
            warm_spot_low: 600,
            ..ZoneConfig::default()
        };
        assert_eq!(
            c.validate().unwrap_err(),
            "option 'warm_spot_low': 60% is above warm_spot_mid (50%)"
        );
    }
}
