//! `run`: how long, which seed, what a miss does, and the models the simulator charges:
//! `execution` (each job's demand from its WCET), `overheads` (costs, or a calibrated
//! profile; docs/overheads.md) and `cache` (the cache model's per-line costs;
//! docs/cache-model.md); and `default_policy`, the Linux policy of a task that names none
//! (`policy.rs`). docs/taskset-format.md "run".

use crate::input::InputError;
use crate::overheads::{self, Overheads};
use crate::task::*;
use crate::time::fmt_duration;
use crate::validate::{show, Validator};
use serde_json::Value;
use std::path::Path;

const RUN_FIELDS: &[&str] = &[
    "duration",
    "seed",
    "on_miss",
    "execution",
    "overheads",
    "cache",
    "default_policy",
    "locking",
];
const EXEC_FIELDS: &[&str] = &["model", "min", "max", "ratio", "probability"];
const OVERHEAD_FIELDS: &[&str] = &[
    "profile",
    "statistic",
    "decision",
    "context_switch",
    "migration",
    "release",
    "tick",
    "tick_period",
    "abort_handler",
    "rt_runtime",
    "rt_period",
];
const CACHE_PARAM_FIELDS: &[&str] = &[
    "enabled",
    "l2",
    "l3",
    "remote_cache",
    "remote_node",
    "memory",
    "remote_memory",
    "passes",
];

impl Validator<'_> {
    /// `run`: `duration`, `seed`, `on_miss`, and the models of `execution`, `overheads`
    /// and `cache`; what is not given keeps its default.
    pub(super) fn run_options(&self, r: &Value) -> Result<RunOptions, InputError> {
        let mut run = RunOptions::default();
        let ctx = Some("run");
        let m = self.object(r, ctx, None)?;
        self.check_fields(m, RUN_FIELDS, ctx)?;
        if let Some(v) = m.get("duration") {
            run.duration = self.positive_duration(v, ctx, "duration")?;
        }
        if let Some(v) = m.get("seed") {
            run.seed = self.uint(v, ctx, "seed")?;
        }
        if let Some(v) = m.get("on_miss") {
            run.on_miss = match v.as_str() {
                Some("continue") => OnMiss::Continue,
                Some("abort") => OnMiss::Abort,
                _ => {
                    return Err(self.err(
                        ctx,
                        Some("on_miss"),
                        format!("expected 'continue' or 'abort', got {}", show(v)),
                    ))
                }
            };
        }
        if let Some(v) = m.get("locking") {
            run.locking = self.protocol(v, ctx, "locking")?;
        }
        if let Some(v) = m.get("execution") {
            run.execution = self.exec_model(v)?;
        }
        if let Some(v) = m.get("overheads") {
            run.overheads = self.overheads(v)?;
        }
        if let Some(v) = m.get("cache") {
            run.cache = self.cache_params(v)?;
        }
        if let Some(v) = m.get("default_policy").filter(|v| !v.is_null()) {
            run.default_policy = Some(self.policy_kind(v, ctx, "default_policy")?);
        }
        Ok(run)
    }
    /// `run.overheads`: a profile's path (`overheads: profile.yaml`), or a mapping of costs,
    /// optionally on top of a profile (`{profile: p.yaml, statistic: p99, tick: 0}`). A
    /// relative profile path is read beside the task file.
    pub(super) fn overheads(&self, v: &Value) -> Result<Overheads, InputError> {
        let ctx = Some("run.overheads");
        let (m, profile) = match v {
            Value::String(p) => (None, Some(p.as_str())),
            _ => {
                let m = self.object(v, ctx, None)?;
                self.check_fields(m, OVERHEAD_FIELDS, ctx)?;
                let p = match m.get("profile") {
                    None => None,
                    Some(Value::String(p)) => Some(p.as_str()),
                    Some(x) => {
                        return Err(self.err(
                            ctx,
                            Some("profile"),
                            format!("expected the path of an overhead profile, got {}", show(x)),
                        ))
                    }
                };
                (Some(m), p)
            }
        };
        let statistic = match m.and_then(|m| m.get("statistic")) {
            None => overheads::Statistic::Median,
            Some(x) => overheads::Statistic::parse(x.as_str().unwrap_or(""))
                .map_err(|e| self.err(ctx, Some("statistic"), e))?,
        };
        let mut o = match profile {
            None => Overheads {
                statistic,
                ..Overheads::default()
            },
            Some(p) => {
                let path = Path::new(p);
                let path = match Path::new(self.file).parent() {
                    Some(dir) if path.is_relative() && !self.file.starts_with('<') => {
                        dir.join(path)
                    }
                    _ => path.to_path_buf(),
                };
                // Errors name this file and the field first, then (when the profile is what is
                // wrong) the profile's own file and field.
                let (pctx, pfield) = if m.is_some() {
                    (ctx, "profile")
                } else {
                    (Some("run"), "overheads")
                };
                let text = overheads::read_profile_text(&path).map_err(|e| {
                    self.err(
                        pctx,
                        Some(pfield),
                        format!("cannot read overhead profile {}: {e}", path.display()),
                    )
                })?;
                let prof =
                    overheads::parse_profile(&text, &path.display().to_string()).map_err(|e| {
                        self.err(pctx, Some(pfield), format!("in the overhead profile: {e}"))
                    })?;
                prof.overheads(statistic, p)
            }
        };
        if let Some(m) = m {
            for (k, slot) in [
                ("decision", &mut o.decision),
                ("context_switch", &mut o.context_switch),
                ("migration", &mut o.migration),
                ("release", &mut o.release),
                ("tick", &mut o.tick),
                ("abort_handler", &mut o.abort_handler),
            ] {
                if let Some(x) = m.get(k) {
                    *slot = self.duration(x, ctx, k)?;
                }
            }
            if let Some(x) = m.get("tick_period") {
                o.tick_period = self.positive_duration(x, ctx, "tick_period")?;
            }
            if let Some(x) = m.get("rt_period") {
                o.rt_period = self.positive_duration(x, ctx, "rt_period")?;
            }
            if let Some(x) = m.get("rt_runtime") {
                o.rt_runtime = self.duration(x, ctx, "rt_runtime")?;
            }
        }
        if o.rt_runtime > o.rt_period {
            return Err(self.err(
                ctx,
                Some("rt_runtime"),
                format!(
                    "{} is longer than rt_period ({})",
                    fmt_duration(o.rt_runtime),
                    fmt_duration(o.rt_period)
                ),
            ));
        }
        Ok(o)
    }

    /// `run.cache`: `true`, or a mapping of the cache model's per-line costs (durations; "ns"
    /// may carry decimals down to the picosecond here) and passes per job.
    pub(super) fn cache_params(&self, v: &Value) -> Result<CacheParams, InputError> {
        let ctx = Some("run.cache");
        let mut c = CacheParams {
            enabled: true,
            ..CacheParams::default()
        };
        match v {
            Value::Bool(b) => c.enabled = *b,
            _ => {
                let m = self.object(v, ctx, None)?;
                self.check_fields(m, CACHE_PARAM_FIELDS, ctx)?;
                if let Some(x) = m.get("enabled") {
                    c.enabled = x.as_bool().ok_or_else(|| {
                        self.err(
                            ctx,
                            Some("enabled"),
                            format!("expected true or false, got {}", show(x)),
                        )
                    })?;
                }
                for (k, slot) in [
                    ("l2", &mut c.l2_ps),
                    ("l3", &mut c.l3_ps),
                    ("remote_cache", &mut c.remote_cache_ps),
                    ("remote_node", &mut c.remote_node_ps),
                    ("memory", &mut c.memory_ps),
                    ("remote_memory", &mut c.remote_memory_ps),
                ] {
                    if let Some(x) = m.get(k) {
                        *slot = self.picos(x, ctx, k)?;
                    }
                }
                if let Some(x) = m.get("passes") {
                    let n = self.uint(x, ctx, "passes")?;
                    if n == 0 || n > 1_000 {
                        return Err(self.err(
                            ctx,
                            Some("passes"),
                            format!("must be 1 to 1000, got {n}"),
                        ));
                    }
                    c.passes = n as u32;
                }
            }
        }
        Ok(c)
    }

    pub(super) fn exec_model(&self, v: &Value) -> Result<ExecModel, InputError> {
        let ctx = Some("run.execution");
        if let Some(s) = v.as_str() {
            return match s {
                "wcet" => Ok(ExecModel::Wcet),
                _ => Err(self.err(
                    ctx,
                    Some("model"),
                    format!("unknown execution model '{s}' (known: wcet, uniform, overrun)"),
                )),
            };
        }
        let m = self.object(v, ctx, None)?;
        self.check_fields(m, EXEC_FIELDS, ctx)?;
        let model = m.get("model").and_then(Value::as_str).unwrap_or("");
        let get = |f: &str, default: Option<f64>| -> Result<f64, InputError> {
            match (m.get(f), default) {
                (Some(x), _) => self.float(x, ctx, f),
                (None, Some(d)) => Ok(d),
                (None, None) => Err(self.err(
                    ctx,
                    Some(f),
                    format!("missing required field for model '{model}'"),
                )),
            }
        };
        match model {
            "wcet" => Ok(ExecModel::Wcet),
            "uniform" => {
                let (min, max) = (get("min", None)?, get("max", Some(1.0))?);
                if !(min > 0.0 && min <= max) {
                    return Err(self.err(
                        ctx,
                        Some("min"),
                        format!("need 0 < min <= max, got min={min} max={max}"),
                    ));
                }
                Ok(ExecModel::Uniform { min, max })
            }
            "overrun" => {
                let (ratio, probability) = (get("ratio", None)?, get("probability", Some(1.0))?);
                if ratio <= 0.0 {
                    return Err(self.err(ctx, Some("ratio"), format!("must be > 0, got {ratio}")));
                }
                if !(0.0..=1.0).contains(&probability) {
                    return Err(self.err(
                        ctx,
                        Some("probability"),
                        format!("must be in [0, 1], got {probability}"),
                    ));
                }
                Ok(ExecModel::Overrun { ratio, probability })
            }
            _ => Err(self.err(
                ctx,
                Some("model"),
                format!(
                    "unknown execution model {} (known: wcet, uniform, overrun)",
                    show(m.get("model").unwrap_or(&Value::Null))
                ),
            )),
        }
    }
}
