//! The administrator's side of the operation-zone balancer: the policy (cold, warm at a spot,
//! hot; opzone paper §3.1, Fig 3), which utilisation it judges (§3.2), which tasks a warm
//! policy may move and how their usage is measured (§3.1.3), with every threshold and time
//! of §3 ([`ZoneConfig`]) and the options that set them (`cfs:balancer=opzone,...`). The
//! decisions that read it are `balancer.rs`'s; the readings of the paper are in `mod.rs`.

use super::Permille;
use rtsched_model::text::closest;
use rtsched_model::time::{parse_decimal_scaled, parse_duration_str, Time, NS_PER_S};

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
    pub(super) const ALL: [OperationZone; 5] = [
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
/// paper"). [`ZoneBalancer::choose`](super::ZoneBalancer::choose) compares whatever
/// [`Candidate::util`](super::Candidate::util) holds; this tells the caller what to measure.
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
