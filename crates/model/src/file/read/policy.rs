//! A task's Linux policy (`policy: deadline | fifo | rr | other`, with `runtime` for
//! deadline, `priority` for fifo and rr, `nice` for other) and the set's `run.default_policy`,
//! as `sched_setattr(2)` would take them (docs/taskset-format.md "Linux policies"). A deadline
//! task is held to the kernel's own parameter rule, `__checkparam_dl` (`crate::linux::attr`,
//! which the `linux` scheduler and admission use too): runtime ≥ 1024 ns, runtime ≤ deadline ≤
//! period, the period within 100 us .. 2^22 us.
//!
//! Checked here only for a task that names a policy or a set that names a default one: a set
//! without them reads as before, and the `linux` scheduler checks its tasks when it is built.

use crate::input::InputError;
use crate::linux::attr::{checkparam_dl, DlAttr, DlPeriodLimits, ParamError};
use crate::task::{PolicyKind, SchedPolicy};
use crate::time::Time;
use crate::validate::{show, Validator};
use serde_json::{Map, Value};

/// What the policy rule reads of a task with jobs, read before it.
pub(super) struct Timing {
    pub period: Time,
    pub deadline: Time,
    pub wcet: Time,
    pub priority: Option<u32>,
    /// Regions or a DAG: its threads each reserve their lane's work (no `runtime`).
    pub parallel: bool,
}

impl Validator<'_> {
    /// A policy's name (`field` is `policy` or `run.default_policy`'s `default_policy`).
    pub(super) fn policy_kind(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<PolicyKind, InputError> {
        v.as_str().and_then(PolicyKind::parse).ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!(
                    "unknown policy {} (known: deadline, fifo, rr, other: SCHED_DEADLINE, SCHED_FIFO, SCHED_RR, SCHED_OTHER)",
                    show(v)
                ),
            )
        })
    }

    /// The `policy` a task with jobs names (with its `runtime` or `nice`), checked with its
    /// priority and timing; `default` is the set's `run.default_policy`, which the same checks
    /// apply to. `None` when the task names no policy (it follows the default).
    pub(super) fn sched_policy(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        default: Option<PolicyKind>,
        t: &Timing,
    ) -> Result<Option<SchedPolicy>, InputError> {
        let given = match m.get("policy") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.policy_kind(v, ctx, "policy")?),
        };
        let Some(kind) = given.or(default) else {
            // No policy anywhere: the fields that only a policy gives are out of place.
            if m.contains_key("runtime") {
                return Err(self.err(ctx, Some("runtime"), "applies to policy: deadline only"));
            }
            return Ok(None);
        };
        let how = if given.is_some() {
            format!("policy {}", kind.name())
        } else {
            format!("run.default_policy {}", kind.name())
        };
        for (f, only) in [
            ("runtime", PolicyKind::Deadline),
            ("nice", PolicyKind::Other),
        ] {
            if kind != only && m.contains_key(f) {
                return Err(self.err(
                    ctx,
                    Some(f),
                    format!(
                        "applies to policy: {} only (this task runs under {how})",
                        only.name()
                    ),
                ));
            }
        }
        let policy = match kind {
            PolicyKind::Deadline => SchedPolicy::Deadline {
                runtime: self.deadline_runtime(m, ctx, t)?,
            },
            PolicyKind::Fifo | PolicyKind::Rr => {
                match t.priority {
                    Some(p) if (1..=99).contains(&p) => {}
                    Some(p) => {
                        return Err(self.err(
                            ctx,
                            Some("priority"),
                            format!(
                            "{how} needs a priority from 1 to 99 ({}'s sched_priority), got {p}",
                            kind.kernel_name()
                        ),
                        ))
                    }
                    None => {
                        return Err(self.err(
                            ctx,
                            Some("priority"),
                            format!(
                            "missing: {how} needs a priority from 1 to 99 ({}'s sched_priority)",
                            kind.kernel_name()
                        ),
                        ))
                    }
                }
                kind.with_defaults()
            }
            PolicyKind::Other => SchedPolicy::Other {
                nice: match m.get("nice") {
                    None | Some(Value::Null) => 0,
                    Some(v) => self.nice(v, ctx)?,
                },
            },
        };
        Ok(given.map(|_| policy))
    }

    /// A deadline task's `runtime` (`None`: its WCET), held to `__checkparam_dl` with its
    /// deadline and period. A parallel task takes none: each of its thread lanes reserves its
    /// own work, checked by the `linux` scheduler.
    fn deadline_runtime(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        t: &Timing,
    ) -> Result<Option<Time>, InputError> {
        let runtime = match m.get("runtime") {
            None | Some(Value::Null) => None,
            Some(_) if t.parallel => {
                return Err(self.err(
                    ctx,
                    Some("runtime"),
                    "applies to sequential tasks only: each thread lane of a parallel task reserves its lane's work per job",
                ))
            }
            Some(v) => Some(self.positive_duration(v, ctx, "runtime")?),
        };
        if t.parallel {
            return Ok(None);
        }
        let attr = DlAttr::new(runtime.unwrap_or(t.wcet), t.deadline, t.period);
        if let Err(e) = checkparam_dl(&attr, DlPeriodLimits::DEFAULT) {
            let field = match e {
                ParamError::RuntimeBelowMinimum { .. }
                | ParamError::RuntimeAboveDeadline { .. } => {
                    if runtime.is_some() {
                        "runtime"
                    } else {
                        "wcet"
                    }
                }
                other => other.field(),
            };
            let note = if runtime.is_none() && field == "wcet" {
                " (the runtime is the WCET unless 'runtime' is given)"
            } else {
                ""
            };
            return Err(self.err(
                ctx,
                Some(field),
                format!("{e}{note}: sched_setattr would refuse it (EINVAL)"),
            ));
        }
        Ok(runtime)
    }

    /// `nice`: an integer from -20 to 19 (a best-effort task's, or a `policy: other` task's).
    pub(super) fn nice(&self, v: &Value, ctx: Option<&str>) -> Result<i8, InputError> {
        match v.as_i64() {
            Some(n) if (-20..=19).contains(&n) => Ok(n as i8),
            _ => Err(self.err(
                ctx,
                Some("nice"),
                format!(
                    "must be an integer from -20 to 19 (Linux nice), got {}",
                    show(v)
                ),
            )),
        }
    }
}
