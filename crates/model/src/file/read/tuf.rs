//! A task's time-utility function (`tuf`, ChronOS §3.2): a step, linear, quadratic or
//! piecewise-linear function of the time since the release (docs/taskset-format.md
//! "Time-utility functions"; the model is `crate::tuf`).

use crate::input::InputError;
use crate::time::{fmt_duration, Time};
use crate::tuf::Tuf;
use crate::validate::{show, Validator};
use serde_json::{Map, Value};

const TUF_FIELDS: &[&str] = &["shape", "utility", "termination", "points"];

impl Validator<'_> {
    /// `tuf: {shape: linear, utility: 10, termination: 80ms}`, `{shape: piecewise, points:
    /// [[0, 10], [50ms, 10], [80ms, 0]]}`, or a bare number `U` for a step TUF of utility U.
    /// The termination time defaults to the task's deadline.
    pub(super) fn tuf(
        &self,
        v: &Value,
        ctx: Option<&str>,
        deadline: Time,
    ) -> Result<Tuf, InputError> {
        let utility = |v: &Value, field: &str| self.tuf_utility(v, ctx, field);
        if v.is_number() {
            return Ok(Tuf::Step {
                utility: utility(v, "tuf")?,
                termination: deadline,
            });
        }
        let m = self.object(v, ctx, Some("tuf"))?;
        let fctx = ctx.map(|c| format!("{c}: field 'tuf'"));
        self.check_fields(m, TUF_FIELDS, fctx.as_deref())?;
        let shape = match m.get("shape") {
            None => "step".to_string(),
            Some(Value::String(s)) => s.to_ascii_lowercase(),
            Some(other) => {
                return Err(self.err(
                    ctx,
                    Some("tuf.shape"),
                    format!(
                        "expected step, linear, quadratic or piecewise, got {}",
                        show(other)
                    ),
                ))
            }
        };
        let termination = || -> Result<Time, InputError> {
            match m.get("termination") {
                None => Ok(deadline),
                Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f <= 0.0) => Err(self.err(
                    ctx,
                    Some("tuf.termination"),
                    format!("is {n}: the termination time is measured from the release and must be after it (> 0)"),
                )),
                Some(t) => self.positive_duration(t, ctx, "tuf.termination"),
            }
        };
        let u = || match m.get("utility") {
            None => Ok(1.0),
            Some(x) => utility(x, "tuf.utility"),
        };
        let only = |allowed: &[&str]| -> Result<(), InputError> {
            for k in m.keys() {
                if !allowed.contains(&k.as_str()) {
                    return Err(self.err(
                        ctx,
                        Some(&format!("tuf.{k}")),
                        format!(
                            "does not apply to a {shape} TUF (its fields: {})",
                            allowed.join(", ")
                        ),
                    ));
                }
            }
            Ok(())
        };
        match shape.as_str() {
            "step" => {
                only(&["shape", "utility", "termination"])?;
                Ok(Tuf::Step {
                    utility: u()?,
                    termination: termination()?,
                })
            }
            "linear" => {
                only(&["shape", "utility", "termination"])?;
                Ok(Tuf::Linear {
                    utility: u()?,
                    termination: termination()?,
                })
            }
            "quadratic" => {
                only(&["shape", "utility", "termination"])?;
                Ok(Tuf::Quadratic {
                    utility: u()?,
                    termination: termination()?,
                })
            }
            "piecewise" => {
                only(&["shape", "points"])?;
                self.tuf_points(m, ctx)
            }
            other => Err(self.err(
                ctx,
                Some("tuf.shape"),
                format!("unknown shape '{other}' (known: step, linear, quadratic, piecewise)"),
            )),
        }
    }

    /// A utility: a number >= 0.
    fn tuf_utility(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<f64, InputError> {
        let u = self.float(v, ctx, field)?;
        if u < 0.0 {
            return Err(self.err(ctx, Some(field), format!("utility must be >= 0, got {u}")));
        }
        Ok(u)
    }

    /// A piecewise TUF's `points`: a non-empty list of `[time, utility]`, times strictly
    /// increasing.
    fn tuf_points(&self, m: &Map<String, Value>, ctx: Option<&str>) -> Result<Tuf, InputError> {
        let list = m.get("points").and_then(Value::as_array).ok_or_else(|| {
            self.err(ctx, Some("tuf.points"), "a piecewise TUF needs 'points': a list of [time, utility] pairs in increasing time")
        })?;
        if list.is_empty() {
            return Err(self.err(
                ctx,
                Some("tuf.points"),
                "is empty: give at least one [time, utility] pair",
            ));
        }
        let mut points = Vec::with_capacity(list.len());
        for (i, p) in list.iter().enumerate() {
            let field = format!("tuf.points[{i}]");
            let pair = p.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
                self.err(
                    ctx,
                    Some(&field),
                    format!("expected [time, utility], got {}", show(p)),
                )
            })?;
            let t = self.duration(&pair[0], ctx, &field)?;
            let u = self.tuf_utility(&pair[1], ctx, &field)?;
            if let Some(&(prev, _)) = points.last() {
                if t <= prev {
                    return Err(self.err(
                        ctx,
                        Some(&field),
                        format!(
                            "points are out of order: time {} is not after the previous point's {}",
                            fmt_duration(t),
                            fmt_duration(prev)
                        ),
                    ));
                }
            }
            points.push((t, u));
        }
        Ok(Tuf::Piecewise { points })
    }
}
