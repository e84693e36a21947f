//! Binding of the operation-zone balancer (`rtsched_policies::opzone`) for the real-Linux
//! balancer in `python/rtsched/balance.py`: the daemon samples /proc/stat and moves tasks, and
//! every decision is the simulator's own code, so the two cannot drift (DESIGN: "a policy is
//! written once"). Bad input raises InputError instead of the Rust asserts' panics.

use crate::input_err;
use pyo3::prelude::*;
use rtsched_model::task::nice_weight;
use rtsched_model::time::{fmt_duration, Time};
use rtsched_policies::opzone::{
    Balance, Candidate, Permille, Trigger, Zone, ZoneBalancer, ZoneConfig,
};

/// `_core.ZoneBalancer(options, cpus, source="balance")`: options are (key, value) pairs of
/// `ZoneConfig::KEYS` (`[("zone", "warm-high"), ("prize_time", "5s")]`); errors read
/// "SOURCE: option 'KEY': ...". Utilisations are per-mille, one per CPU; times are ns and
/// never decrease from call to call.
#[pyclass(name = "ZoneBalancer", module = "rtsched._core")]
pub struct PyZoneBalancer {
    inner: ZoneBalancer,
    last_now: Time,
}

#[pymethods]
impl PyZoneBalancer {
    #[new]
    #[pyo3(signature = (options, cpus, source="balance"))]
    fn new(options: Vec<(String, String)>, cpus: u32, source: &str) -> PyResult<Self> {
        // Unlike a scheduler spec, nothing else here reads options: an unknown key is an error.
        if let Some((k, _)) = options
            .iter()
            .find(|(k, _)| !ZoneConfig::KEYS.contains(&k.as_str()))
        {
            return Err(input_err(format!(
                "{source}: unknown option '{k}'; known: {}",
                ZoneConfig::KEYS.join(", ")
            )));
        }
        if cpus == 0 {
            return Err(input_err(format!("{source}: cpus must be at least 1")));
        }
        // from_options names a scheduler; here the caller is a command, so say its name instead.
        let config = ZoneConfig::from_options(source, &options).map_err(|e| {
            let prefix = format!("scheduler '{source}': ");
            input_err(format!(
                "{source}: {}",
                e.strip_prefix(&prefix).unwrap_or(&e)
            ))
        })?;
        Ok(PyZoneBalancer {
            inner: ZoneBalancer::new(config, cpus),
            last_now: 0,
        })
    }

    #[getter]
    fn cpus(&self) -> u32 {
        self.inner.cpus()
    }

    /// The operation zone policy, e.g. "warm-high".
    #[getter]
    fn operation_zone(&self) -> &'static str {
        self.inner.config().operation_zone.name()
    }

    /// The effective configuration as (key, value) in `keys()` order, values as options are
    /// written ("80%", "5s", "per-cpu").
    fn config(&self) -> Vec<(&'static str, String)> {
        config_items(self.inner.config())
    }

    /// Samples the utilisations at `now_ns` into the weight-based score (no decision).
    fn observe(&mut self, utils_permille: Vec<Permille>, now_ns: Time) -> PyResult<()> {
        self.guard(&utils_permille, now_ns)?;
        self.inner.observe(&utils_permille, now_ns);
        Ok(())
    }

    /// At check point `trigger` ("task-created", "idle-wakeup", "busiest-group"; "tick" is
    /// never one): (from, to) when one task of CPU `from` should move to CPU `to`, else None.
    fn check(
        &mut self,
        trigger: &str,
        utils_permille: Vec<Permille>,
        now_ns: Time,
    ) -> PyResult<Option<(u32, u32)>> {
        let t = parse_trigger(trigger)?;
        self.guard(&utils_permille, now_ns)?;
        Ok(self
            .inner
            .check(t, &utils_permille, now_ns)
            .map(|Balance { from, to }| (from, to)))
    }

    /// Which task moves on a balance, by the simulator's own rule (`ZoneBalancer::choose`):
    /// `candidates` are the source CPU's movable tasks as (util_permille, nice, vruntime_ns,
    /// id), util being the task's usage as `config()`'s `task_usage` says (its demand, the
    /// share of the window it was runnable, by default); `from_runnable` / `to_runnable` count the runnable tasks of the two CPUs. Returns
    /// the index of the task to move, or None: none when the source has fewer than two
    /// runnable, or (`guard`) not two more than the target, and under a warm policy never a
    /// task below the warm zone (`task_floor`); else the heaviest (nice), the latest vruntime,
    /// the lowest id.
    #[pyo3(signature = (from_runnable, to_runnable, candidates, guard=true))]
    fn choose(
        &self,
        from_runnable: usize,
        to_runnable: usize,
        candidates: Vec<(Permille, i64, u64, u64)>,
        guard: bool,
    ) -> PyResult<Option<usize>> {
        let mut cands = Vec::with_capacity(candidates.len());
        for (i, &(util, nice, vruntime, id)) in candidates.iter().enumerate() {
            if !(-20..=19).contains(&nice) {
                return Err(input_err(format!(
                    "candidates[{i}]: nice {nice} is outside -20..19"
                )));
            }
            cands.push(Candidate {
                util,
                weight: nice_weight(nice as i8),
                vruntime,
                id,
            });
        }
        Ok(self.inner.choose(from_runnable, to_runnable, guard, &cands))
    }

    /// The weighted spots (per CPU, or one for the average; none for cold and hot).
    fn scores(&self) -> Vec<Permille> {
        self.inner.scores().to_vec()
    }

    /// The zone the system is in: "cold", "warm" or "hot".
    fn zone(&self, utils_permille: Vec<Permille>) -> PyResult<&'static str> {
        self.guard_len(&utils_permille)?;
        Ok(match self.inner.zone(&utils_permille) {
            Zone::Cold => "cold",
            Zone::Warm => "warm",
            Zone::Hot => "hot",
        })
    }

    /// Every option key with its default, as written: [("zone", "warm-high"), ...].
    #[staticmethod]
    fn defaults() -> Vec<(&'static str, String)> {
        config_items(&ZoneConfig::default())
    }

    /// The operation zone names, in order from cold to hot.
    #[staticmethod]
    fn zones() -> Vec<&'static str> {
        rtsched_policies::opzone::OperationZone::NAMES.to_vec()
    }

    fn __repr__(&self) -> String {
        let c = self.inner.config();
        format!(
            "<ZoneBalancer {} ({}) on {} CPUs>",
            c.operation_zone.name(),
            c.util.name(),
            self.inner.cpus()
        )
    }
}

impl PyZoneBalancer {
    fn guard_len(&self, utils: &[Permille]) -> PyResult<()> {
        let n = self.inner.cpus() as usize;
        if utils.len() != n {
            return Err(input_err(format!(
                "utils_permille: {} values for {n} CPUs (one per CPU)",
                utils.len()
            )));
        }
        Ok(())
    }

    fn guard(&mut self, utils: &[Permille], now: Time) -> PyResult<()> {
        self.guard_len(utils)?;
        if now < self.last_now {
            return Err(input_err(format!(
                "now_ns: time went back from {} to {now}",
                self.last_now
            )));
        }
        self.last_now = now;
        Ok(())
    }
}

fn parse_trigger(s: &str) -> PyResult<Trigger> {
    Ok(match s {
        "task-created" => Trigger::TaskCreated,
        "idle-wakeup" => Trigger::IdleWakeup,
        "busiest-group" => Trigger::BusiestGroup,
        "tick" => Trigger::Tick,
        _ => {
            return Err(input_err(format!(
                "trigger: unknown '{s}'; known: task-created, idle-wakeup, busiest-group, tick"
            )))
        }
    })
}

/// Per-mille as a percentage option value ("80%", "32.5%").
fn pct(p: Permille) -> String {
    if p.is_multiple_of(10) {
        format!("{}%", p / 10)
    } else {
        format!("{}.{}%", p / 10, p % 10)
    }
}

fn config_items(c: &ZoneConfig) -> Vec<(&'static str, String)> {
    ZoneConfig::KEYS
        .iter()
        .map(|&k| {
            let v = match k {
                "zone" => c.operation_zone.name().to_string(),
                "cold_threshold" => pct(c.cold_threshold),
                "hot_threshold" => pct(c.hot_threshold),
                "warm_spot_low" => pct(c.warm_spot_low),
                "warm_spot_mid" => pct(c.warm_spot_mid),
                "warm_spot_high" => pct(c.warm_spot_high),
                "prize_time" => fmt_duration(c.prize_time),
                "punish_time" => fmt_duration(c.punish_time),
                "score_step" => pct(c.score_step),
                "util" => c.util.name().to_string(),
                "task_floor" => c.task_floor.name().to_string(),
                "task_usage" => c.task_usage.name().to_string(),
                _ => unreachable!("every key of ZoneConfig::KEYS is listed"),
            };
            (k, v)
        })
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyZoneBalancer>()
}
