//! The field checks every input document is validated with: each error names the file, the
//! context (a task, `run`, `platform`) and the field. The task-set reader (`file/read/`)
//! adds its per-section readers to these.

use crate::input::InputError;
use crate::text::{closest, parse_size};
use crate::time::{ms_f64_to_ns, parse_duration_str, Time, NS_PER_MS};
use serde_json::{Map, Value};

pub(crate) struct Validator<'a> {
    pub(crate) file: &'a str,
}

impl<'a> Validator<'a> {
    pub(crate) fn new(file: &'a str) -> Self {
        Validator { file }
    }

    pub(crate) fn err(
        &self,
        ctx: Option<&str>,
        field: Option<&str>,
        msg: impl Into<String>,
    ) -> InputError {
        InputError {
            file: self.file.into(),
            context: ctx.map(Into::into),
            field: field.map(Into::into),
            message: msg.into(),
        }
    }

    pub(crate) fn object<'v>(
        &self,
        v: &'v Value,
        ctx: Option<&str>,
        field: Option<&str>,
    ) -> Result<&'v Map<String, Value>, InputError> {
        v.as_object()
            .ok_or_else(|| self.err(ctx, field, format!("expected a mapping, got {}", kind(v))))
    }

    pub(crate) fn check_fields(
        &self,
        m: &Map<String, Value>,
        known: &[&str],
        ctx: Option<&str>,
    ) -> Result<(), InputError> {
        for k in m.keys() {
            if !known.contains(&k.as_str()) {
                let hint = closest(k, known)
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                return Err(self.err(
                    ctx,
                    Some(k),
                    format!("unknown field{hint}; known fields: {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn duration(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<Time, InputError> {
        let r = match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    u.checked_mul(NS_PER_MS)
                        .ok_or_else(|| "is too large".to_string())
                } else if let Some(f) = n.as_f64() {
                    ms_f64_to_ns(f)
                } else {
                    Err("is not a number".into())
                }
            }
            Value::String(s) => parse_duration_str(s),
            other => Err(format!(
                "expected a duration (a number in ms, or a string like \"250us\"), got {}",
                kind(other)
            )),
        };
        r.map_err(|m| self.err(ctx, Some(field), m))
    }

    pub(crate) fn positive_duration(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<Time, InputError> {
        let d = self.duration(v, ctx, field)?;
        if d == 0 {
            return Err(self.err(ctx, Some(field), format!("must be > 0, got {}", show(v))));
        }
        Ok(d)
    }

    pub(crate) fn uint(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<u64, InputError> {
        v.as_u64().ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!("expected a non-negative integer, got {}", show(v)),
            )
        })
    }

    pub(crate) fn float(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<f64, InputError> {
        v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!("expected a number, got {}", show(v)),
            )
        })
    }

    /// A per-line cost in picoseconds: a number of ns (may be fractional) or "1.5ns"/"2000ps".
    pub(crate) fn picos(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<u64, InputError> {
        let r = match v {
            Value::Number(n) => n
                .as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|f| (f * 1000.0).round() as u64)
                .ok_or_else(|| format!("expected a non-negative number of ns, got {n}")),
            Value::String(s) => {
                let t = s.trim();
                let (num, scale) = if let Some(x) = t.strip_suffix("ps") {
                    (x, 1.0)
                } else if let Some(x) = t.strip_suffix("ns") {
                    (x, 1000.0)
                } else {
                    (t, 1000.0)
                };
                num.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| (f * scale).round() as u64)
                    .ok_or_else(|| {
                        format!("expected a per-line cost like \"1.5ns\" or \"800ps\", got '{s}'")
                    })
            }
            other => Err(format!(
                "expected a per-line cost in ns, got {}",
                kind(other)
            )),
        };
        r.map_err(|m| self.err(ctx, Some(field), m))
    }

    pub(crate) fn size(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<u64, InputError> {
        let r = match v {
            Value::Number(n) => n
                .as_u64()
                .ok_or_else(|| format!("expected a whole number of bytes, got {n}")),
            Value::String(s) => parse_size(s),
            other => Err(format!(
                "expected a size (bytes, or a string like \"64KiB\"), got {}",
                kind(other)
            )),
        };
        r.map_err(|m| self.err(ctx, Some(field), m))
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        Value::Array(_) | Value::Object(_) => kind(v).to_string(),
        other => other.to_string(),
    }
}
