//! A best-effort task (`class: fair`, or `policy: other` with a `behaviour`): its nice value
//! and behaviour (hog, sleeper, bursty), the load the opzone paper's §4 runs beside the
//! real-time tasks, scheduled by the fair class of `cfs` and `linux` (docs/taskset-format.md
//! "Best-effort tasks").

use crate::input::InputError;
use crate::task::*;
use crate::time::Time;
use crate::validate::{show, Validator};
use serde_json::{Map, Value};

/// What a best-effort (fair-class) task may give; the real-time timing fields do not apply.
const FAIR_FIELDS: &[&str] = &[
    "name",
    "class",
    "policy",
    "nice",
    "behaviour",
    "run",
    "sleep",
    "cpu",
    "offset",
    "wss",
    "group",
];

impl Validator<'_> {
    /// A best-effort task: `{name, class: fair, nice: 5, behaviour: sleeper, run: 2ms, sleep:
    /// 8ms}`; `behaviour: hog` needs no run / sleep; `bursty` takes ranges `run: [1ms, 20ms]`.
    pub(super) fn fair_task(
        &self,
        name: String,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        platform: &Platform,
    ) -> Result<Task, InputError> {
        for k in m.keys() {
            if !FAIR_FIELDS.contains(&k.as_str()) {
                return Err(self.err(
                    ctx,
                    Some(k),
                    format!(
                        "does not apply to a best-effort task (class: fair); its fields: {}",
                        FAIR_FIELDS.join(", ")
                    ),
                ));
            }
        }
        if let Some(v) = m.get("policy").filter(|v| !v.is_null()) {
            let kind = self.policy_kind(v, ctx, "policy")?;
            if kind != PolicyKind::Other {
                return Err(self.err(
                    ctx,
                    Some("policy"),
                    format!(
                        "a best-effort task runs under policy other (SCHED_OTHER), not {}",
                        kind.name()
                    ),
                ));
            }
        }
        let nice = match m.get("nice") {
            None | Some(Value::Null) => 0,
            Some(v) => self.nice(v, ctx)?,
        };
        let behaviour = self.behaviour(m, ctx)?;
        let mut t = Task::fair(name, nice, behaviour);
        if let Some(v) = m.get("offset") {
            t.offset = self.duration(v, ctx, "offset")?;
        }
        if let Some(v) = m.get("cpu").filter(|v| !v.is_null()) {
            t.cpu = Some(self.cpu(v, ctx, platform)?);
        }
        if let Some(v) = m.get("wss").filter(|v| !v.is_null()) {
            t.wss = Some(self.size(v, ctx, "wss")?);
        }
        if let Some(v) = m.get("group").filter(|v| !v.is_null()) {
            t.group = Some(self.uint(v, ctx, "group")? as u32);
        }
        Ok(t)
    }

    /// `behaviour` with its `run` and `sleep`: a hog takes neither, a sleeper one duration
    /// each, a bursty task a `[min, max]` range (or one duration) each; a burst is > 0.
    fn behaviour(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
    ) -> Result<Behaviour, InputError> {
        let range = |field: &str| self.burst_range(m, ctx, field);
        let behaviour = match m.get("behaviour") {
            None | Some(Value::Null) => Behaviour::Hog,
            Some(Value::String(b)) if b == "hog" => Behaviour::Hog,
            Some(Value::String(b)) if b == "sleeper" => {
                let (run, sleep) = (range("run")?, range("sleep")?);
                if run.0 != run.1 || sleep.0 != sleep.1 {
                    return Err(self.err(
                        ctx,
                        Some("run"),
                        "a sleeper takes one run and one sleep (ranges: behaviour: bursty)",
                    ));
                }
                Behaviour::Sleeper {
                    run: run.0,
                    sleep: sleep.0,
                }
            }
            Some(Value::String(b)) if b == "bursty" => Behaviour::Bursty {
                run: range("run")?,
                sleep: range("sleep")?,
            },
            Some(v) => {
                return Err(self.err(
                    ctx,
                    Some("behaviour"),
                    format!(
                        "unknown behaviour {} (known: hog, sleeper, bursty)",
                        show(v)
                    ),
                ))
            }
        };
        if matches!(behaviour, Behaviour::Hog) {
            for f in ["run", "sleep"] {
                if m.contains_key(f) {
                    return Err(self.err(
                        ctx,
                        Some(f),
                        "a hog runs without a break; give behaviour: sleeper or bursty",
                    ));
                }
            }
        }
        match behaviour {
            Behaviour::Sleeper { run: 0, .. } => Err(self.err(ctx, Some("run"), "must be > 0")),
            Behaviour::Bursty { run, .. } if run.0 == 0 => {
                Err(self.err(ctx, Some("run"), "must be > 0"))
            }
            _ => Ok(behaviour),
        }
    }

    /// `run` or `sleep` of a sleeper or a bursty task: a `[min, max]` range, or one duration
    /// (a range of one value).
    fn burst_range(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<(Time, Time), InputError> {
        match m.get(field) {
            None => Err(self.err(
                ctx,
                Some(field),
                "missing required field for this behaviour",
            )),
            Some(Value::Array(xs)) if xs.len() == 2 => {
                let (a, b) = (
                    self.duration(&xs[0], ctx, field)?,
                    self.duration(&xs[1], ctx, field)?,
                );
                if a > b {
                    return Err(self.err(ctx, Some(field), "a range [min, max] needs min <= max"));
                }
                Ok((a, b))
            }
            Some(v) => {
                let x = self.duration(v, ctx, field)?;
                Ok((x, x))
            }
        }
    }
}
