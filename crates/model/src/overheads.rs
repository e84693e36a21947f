//! Overheads: the costs the simulator charges ([`Overheads`], a task set's `run.overheads`),
//! and overhead profiles: the costs `rtsched calibrate` measures on one machine (medians and 99th
//! percentiles), written as YAML and loaded by the simulator (`run: {overheads: FILE}`) and by
//! the overhead-aware analysis (`rtsched analyze --overheads FILE`). docs/overheads.md.
//!
//! ```yaml
//! schema: rtsched.overheads/1
//! machine: "…"            # what it was measured on (free text)
//! backend: testbed        # which driver's costs these are
//! migration_wss: 256KiB   # the cold working set the migration cost was measured with
//! tick_period: 4ms        # the kernel's tick on that machine
//! costs:                  # every kind is required; durations as in task files
//!   decision:       {median: 2.1us, p99: 9.5us, samples: 2000}
//!   context_switch: {median: …, p99: …, samples: …}
//!   migration:      {…}
//!   release:        {…}
//!   tick:           {…}
//! ```

use crate::input::{read_document, read_input_text, Format, InputError};
use crate::time::{fmt_duration, Time, NS_PER_MS, NS_PER_S};
use crate::validate::Validator;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

pub const PROFILE_SCHEMA: &str = "rtsched.overheads/1";

/// The cost kinds a profile holds, in the order they are written.
pub const KINDS: [&str; 5] = ["decision", "context_switch", "migration", "release", "tick"];

/// Overheads the simulator charges (zero by default; docs/overheads.md). Each is charged as
/// time the CPU spends on the scheduler's behalf, paid before the entity's own work resumes:
/// - `decision`: a scheduling decision that (re)assigns a CPU, charged to the entity it
///   dispatches (with the dispatch);
/// - `context_switch`: every dispatch of an entity other than the one the CPU ran last;
/// - `migration`: a dispatch on another CPU than the entity last ran on (with the cache model
///   on, the refill it causes is computed by the model instead and this stays an extra
///   constant: the kernel's migration bookkeeping);
/// - `release`: release latency: a job becomes ready (is given to the policy) this long after
///   its release time; its deadline is still counted from the release time;
/// - `tick`: one timer tick every `tick_period` on each busy CPU, charged to what it runs;
/// - `abort_handler`: an aborted job's abort handler (ChronOS §3.2 aborts; DASA's abort cost),
///   charged, for each of its threads, to the CPU the thread last ran on, running or waiting
///   (one that never ran: the CPU it was forked or woken on; docs/semantics.md);
/// - `rt_runtime` / `rt_period`: the kernel's real-time bandwidth cap (RT throttling,
///   `sched_rt_runtime_us` of `sched_rt_period_us`; on kernels with the fair server, the time it
///   takes for waiting ordinary tasks): per CPU, in each period starting at a multiple of
///   `rt_period`, at most `rt_runtime` of execution; a CPU that has used it stops until the
///   period ends (what it runs, or is dispatched, waits). 0 (the default): no cap.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overheads {
    pub decision: Time,
    pub context_switch: Time,
    pub migration: Time,
    pub release: Time,
    pub tick: Time,
    pub tick_period: Time,
    pub abort_handler: Time,
    pub rt_runtime: Time,
    pub rt_period: Time,
    /// The calibrated profile these came from (`run: {overheads: profile.yaml}`), if any,
    /// and which of its statistics was taken.
    pub profile: Option<String>,
    pub statistic: Statistic,
}

impl Default for Overheads {
    fn default() -> Self {
        Overheads {
            decision: 0,
            context_switch: 0,
            migration: 0,
            release: 0,
            tick: 0,
            tick_period: NS_PER_MS,
            abort_handler: 0,
            rt_runtime: 0,
            rt_period: NS_PER_S,
            profile: None,
            statistic: Statistic::Median,
        }
    }
}

impl Overheads {
    /// Whether any cost is charged at all (the simulator skips the bookkeeping otherwise).
    pub fn any(&self) -> bool {
        self.decision
            + self.context_switch
            + self.migration
            + self.release
            + self.tick
            + self.abort_handler
            > 0
            || self.throttles()
    }

    /// Whether the real-time bandwidth cap is on (`rt_runtime` below `rt_period`).
    pub fn throttles(&self) -> bool {
        self.rt_runtime > 0 && self.rt_runtime < self.rt_period
    }
}

/// Which statistic of a profile's measurements to charge: the median predicts typical
/// behaviour (the simulator's default); the 99th percentile is the safer bound (the
/// analysis's default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    #[default]
    Median,
    P99,
}

impl Statistic {
    pub fn parse(s: &str) -> Result<Statistic, String> {
        match s {
            "median" => Ok(Statistic::Median),
            "p99" => Ok(Statistic::P99),
            _ => Err(format!("expected 'median' or 'p99', got '{s}'")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::P99 => "p99",
        }
    }
}

/// One measured cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stat {
    pub median: Time,
    pub p99: Time,
    pub samples: u64,
}

impl Stat {
    pub fn get(&self, s: Statistic) -> Time {
        match s {
            Statistic::Median => self.median,
            Statistic::P99 => self.p99,
        }
    }
}

/// A machine's measured overheads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Profile {
    pub machine: String,
    pub backend: String,
    pub migration_wss: u64,
    pub tick_period: Time,
    /// The real-time bandwidth cap the machine enforces (`sched_rt_runtime_us` of
    /// `sched_rt_period_us`); 0: none (unlimited, or not read).
    pub rt_runtime: Time,
    pub rt_period: Time,
    /// Indexed like [`KINDS`].
    pub costs: [Stat; 5],
}

impl Profile {
    pub fn cost(&self, kind: &str) -> Option<&Stat> {
        KINDS
            .iter()
            .position(|k| *k == kind)
            .map(|i| &self.costs[i])
    }

    /// The overheads to charge, with `statistic` of each cost (abort handler: not measured, 0).
    pub fn overheads(&self, statistic: Statistic, source: &str) -> Overheads {
        let g = |i: usize| self.costs[i].get(statistic);
        Overheads {
            decision: g(0),
            context_switch: g(1),
            migration: g(2),
            release: g(3),
            tick: g(4),
            tick_period: if self.tick_period > 0 {
                self.tick_period
            } else {
                Overheads::default().tick_period
            },
            abort_handler: 0,
            rt_runtime: self.rt_runtime,
            rt_period: if self.rt_period > 0 {
                self.rt_period
            } else {
                Overheads::default().rt_period
            },
            profile: Some(source.to_string()),
            statistic,
        }
    }

    /// The profile as YAML (what [`load_profile`] reads back to an equal profile).
    pub fn to_yaml(&self) -> String {
        let mut s = format!(
            "schema: {PROFILE_SCHEMA}\nmachine: {}\nbackend: {}\nmigration_wss: {}\ntick_period: {}\n",
            serde_json::to_string(&self.machine).expect("string"),
            serde_json::to_string(&self.backend).expect("string"),
            self.migration_wss,
            ns(self.tick_period),
        );
        if self.rt_runtime > 0 {
            s.push_str(&format!(
                "rt_runtime: {}\nrt_period: {}\n",
                ns(self.rt_runtime),
                ns(self.rt_period)
            ));
        }
        s.push_str("costs:\n");
        for (k, c) in KINDS.iter().zip(&self.costs) {
            s.push_str(&format!(
                "  {k}: {{median: {}, p99: {}, samples: {}}}\n",
                ns(c.median),
                ns(c.p99),
                c.samples
            ));
        }
        s
    }

    /// One line per cost, for humans.
    pub fn describe(&self) -> String {
        KINDS
            .iter()
            .zip(&self.costs)
            .map(|(k, c)| {
                format!(
                    "{k:>15}: median {:>9}  p99 {:>9}  ({} samples)",
                    fmt_duration(c.median),
                    fmt_duration(c.p99),
                    c.samples
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Exact ns as a duration string the task-file parser reads back unchanged.
fn ns(t: Time) -> String {
    format!("\"{t}ns\"")
}

const PROFILE_FIELDS: &[&str] = &[
    "schema",
    "machine",
    "backend",
    "migration_wss",
    "tick_period",
    "rt_runtime",
    "rt_period",
    "costs",
];
const STAT_FIELDS: &[&str] = &["median", "p99", "samples"];

/// Read and validate a profile file. Every cost kind is required; a missing or negative one
/// is an error naming the field (`costs.migration.p99`).
pub fn load_profile(path: impl AsRef<Path>) -> Result<Profile, InputError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = read_profile_text(path)
        .map_err(|e| InputError::new(&name, format!("cannot read overhead profile: {e}")))?;
    parse_profile(&text, &name)
}

/// An overhead profile's text: a regular file (or a FIFO) of at most 1 MiB (a profile is a few
/// hundred bytes; a device or a huge file named by mistake is refused, not read forever).
pub(crate) fn read_profile_text(path: &Path) -> std::io::Result<String> {
    read_input_text(path, 1 << 20, "an overhead profile")
}

pub fn parse_profile(text: &str, source: &str) -> Result<Profile, InputError> {
    let root = read_document(text, Format::Yaml, source)?;
    let v = Validator::new(source);
    let top = v.object(&root, None, None)?;
    v.check_fields(top, PROFILE_FIELDS, None)?;
    match top.get("schema").and_then(Value::as_str) {
        Some(PROFILE_SCHEMA) => {}
        Some(other) => {
            return Err(v.err(
                None,
                Some("schema"),
                format!("unknown profile schema '{other}' (this rtsched reads {PROFILE_SCHEMA})"),
            ))
        }
        None => {
            return Err(v.err(
                None,
                Some("schema"),
                format!("missing (an overhead profile starts with 'schema: {PROFILE_SCHEMA}')"),
            ))
        }
    }
    let text_of = |k: &str| top.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut p = Profile {
        machine: text_of("machine"),
        backend: text_of("backend"),
        ..Default::default()
    };
    if let Some(x) = top.get("migration_wss") {
        p.migration_wss = v.size(x, None, "migration_wss")?;
    }
    if let Some(x) = top.get("tick_period") {
        p.tick_period = v.duration(x, None, "tick_period")?;
    }
    if let Some(x) = top.get("rt_runtime") {
        p.rt_runtime = v.duration(x, None, "rt_runtime")?;
        let x = top.get("rt_period").ok_or_else(|| {
            v.err(
                None,
                Some("rt_period"),
                "missing (rt_runtime is a share of it)",
            )
        })?;
        p.rt_period = v.duration(x, None, "rt_period")?;
        if p.rt_period == 0 || p.rt_runtime > p.rt_period {
            return Err(v.err(
                None,
                Some("rt_runtime"),
                format!(
                    "must be at most rt_period ({} > {})",
                    fmt_duration(p.rt_runtime),
                    fmt_duration(p.rt_period)
                ),
            ));
        }
    }
    let costs = top.get("costs").ok_or_else(|| {
        v.err(
            None,
            Some("costs"),
            format!("missing (one entry per cost: {})", KINDS.join(", ")),
        )
    })?;
    let costs = v.object(costs, None, Some("costs"))?;
    v.check_fields(costs, &KINDS, Some("costs"))?;
    for (i, k) in KINDS.iter().enumerate() {
        let ctx = format!("costs.{k}");
        let c = costs.get(*k).ok_or_else(|| {
            v.err(
                Some("costs"),
                Some(k),
                "missing: every cost kind must be measured (or written as 0)",
            )
        })?;
        let c = v.object(c, Some(&ctx), None)?;
        v.check_fields(c, STAT_FIELDS, Some(&ctx))?;
        let mut st = Stat::default();
        for (f, slot) in [("median", &mut st.median), ("p99", &mut st.p99)] {
            let x = c
                .get(f)
                .ok_or_else(|| v.err(Some(&ctx), Some(f), "missing"))?;
            *slot = v.duration(x, Some(&ctx), f)?;
        }
        if let Some(x) = c.get("samples") {
            st.samples = v.uint(x, Some(&ctx), "samples")?;
        }
        if st.p99 < st.median {
            return Err(v.err(
                Some(&ctx),
                Some("p99"),
                format!(
                    "is below the median ({} < {})",
                    fmt_duration(st.p99),
                    fmt_duration(st.median)
                ),
            ));
        }
        p.costs[i] = st;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        let mut p = Profile {
            machine: "test box: 2 CPUs".into(),
            backend: "testbed".into(),
            migration_wss: 262_144,
            tick_period: 4_000_000,
            ..Default::default()
        };
        for (i, c) in p.costs.iter_mut().enumerate() {
            *c = Stat {
                median: 1_000 * (i as u64 + 1) + 7,
                p99: 9_000 * (i as u64 + 1),
                samples: 100 + i as u64,
            };
        }
        p
    }

    #[test]
    fn round_trips() {
        let p = sample();
        assert_eq!(parse_profile(&p.to_yaml(), "p.yaml").unwrap(), p);
        // With the machine's real-time bandwidth cap, which the overheads carry.
        let capped = Profile {
            rt_runtime: 950_000_000,
            rt_period: 1_000_000_000,
            ..sample()
        };
        assert_eq!(parse_profile(&capped.to_yaml(), "p.yaml").unwrap(), capped);
        let o = capped.overheads(Statistic::Median, "p.yaml");
        assert!(o.throttles() && (o.rt_runtime, o.rt_period) == (950_000_000, 1_000_000_000));
        assert!(!p.overheads(Statistic::Median, "p.yaml").throttles());
    }

    #[test]
    fn a_bad_bandwidth_cap_names_the_field() {
        let y = Profile {
            rt_runtime: 950_000_000,
            rt_period: 1_000_000_000,
            ..sample()
        }
        .to_yaml();
        let e = parse_profile(&y.replace("rt_period: \"1000000000ns\"\n", ""), "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'rt_period'") && e.contains("missing"), "{e}");
        let e = parse_profile(
            &y.replace("rt_runtime: \"950000000ns\"", "rt_runtime: 2s"),
            "p.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'rt_runtime'") && e.contains("at most rt_period"),
            "{e}"
        );
    }

    #[test]
    fn bad_profiles_name_the_field() {
        let y = sample().to_yaml();
        let e = parse_profile(&y.replace("  tick: ", "  tock: "), "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("costs") && e.contains("tock"), "{e}");
        let e = parse_profile(
            &y.replace(
                "migration: {median: \"3007ns\"",
                "migration: {median: \"-3us\"",
            ),
            "p.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("costs.migration") && e.contains("'median'"),
            "{e}"
        );
        let e = parse_profile(&y.replace("p99: \"36000ns\", ", ""), "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("costs.release") && e.contains("'p99'") && e.contains("missing"),
            "{e}"
        );
        let e = parse_profile("schema: rtsched.overheads/1\ncosts: {}\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'decision'") && e.contains("missing"), "{e}");
        let e = parse_profile("costs: {}\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'schema'"), "{e}");
    }

    #[test]
    fn statistic_picks_the_column() {
        let p = sample();
        let o = p.overheads(Statistic::P99, "p.yaml");
        assert_eq!(
            (o.decision, o.context_switch, o.migration, o.release, o.tick),
            (9_000, 18_000, 27_000, 36_000, 45_000)
        );
        assert_eq!(p.overheads(Statistic::Median, "p.yaml").decision, 1_007);
        assert_eq!(o.tick_period, 4_000_000);
    }
}
