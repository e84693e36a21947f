//! One real-time task of `tasks`: its timing (period or minimum inter-arrival, deadline,
//! offset), its work (a WCET, fork-join `regions` as PAWS §3 has them, or a `dag`), where it
//! runs (`priority`, `cpu`), its cache footprint (`wss`, `group`, LWFG), and what `dag.rs`,
//! `sections.rs` and `tuf.rs` read, and its Linux `policy` (`policy.rs`). A best-effort task
//! goes to `fair.rs` (docs/taskset-format.md "tasks").

use super::policy::Timing;
use super::MAX_THREADS_PER_TASK;
use crate::dag::Dag;
use crate::input::InputError;
use crate::program::Region;
use crate::task::*;
use crate::time::{fmt_duration, Time};
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};

const TASK_FIELDS: &[&str] = &[
    "name",
    "period",
    "min_interarrival",
    "max_interarrival",
    "deadline",
    "wcet",
    "offset",
    "priority",
    "cpu",
    "wss",
    "group",
    "regions",
    "dag",
    "sections",
    "tuf",
    "class",
    "policy",
    "runtime",
    "nice",
    "behaviour",
    "run",
    "sleep",
    "execution_times",
    "trigger",
    "segments",
];
/// The most measured execution times one task may list (`execution_times`).
const MAX_EXECUTION_TIMES: usize = 1_000_000;
const REGION_FIELDS: &[&str] = &["threads", "wcet"];

impl Validator<'_> {
    /// `tasks[i]`: a real-time task, or (`class: fair`, or `nice` / `behaviour` given) a
    /// best-effort one. The fields are read in a fixed order, so a task with several faults
    /// is refused for the same one every time. `default` is the set's `run.default_policy`.
    #[allow(clippy::too_many_arguments)] // the set's context, passed through
    pub(super) fn task(
        &self,
        i: usize,
        tv: &Value,
        platform: &Platform,
        resources: &mut Vec<String>,
        declared: Option<usize>,
        default: Option<PolicyKind>,
    ) -> Result<Task, InputError> {
        let pos = format!("tasks[{i}]");
        let m = self.object(tv, Some(&pos), None)?;
        let name = self.task_name(m, &pos)?;
        let ctx_s = format!("task '{name}' ({pos})");
        let ctx = Some(ctx_s.as_str());
        self.check_fields(m, TASK_FIELDS, ctx)?;
        // A `policy` (the task's or the set's default) lets a task with jobs have a `nice`.
        let policies = default.is_some() || m.get("policy").is_some_and(|v| !v.is_null());
        if self.is_fair(m, ctx, policies)? {
            return self.fair_task(name, m, ctx, platform);
        }
        let fair_only: &[&str] = if policies {
            &["behaviour", "run", "sleep"]
        } else {
            &["nice", "behaviour", "run", "sleep"]
        };
        for &f in fair_only {
            if m.contains_key(f) {
                return Err(self.err(
                    ctx,
                    Some(f),
                    "applies to best-effort tasks only (class: fair)",
                ));
            }
        }
        let (period, max_interarrival) = match m.get("trigger") {
            // Triggered (flow.rs): no period; the set's reader sets the trigger and period.
            Some(_) => (self.triggered_timing(m, ctx)?, None),
            None => self.arrivals(m, ctx)?,
        };
        let (regions, suspensions, dag, wcet) = match m.get("segments") {
            Some(v) => self.segmented_work(m, v, ctx)?,
            None => {
                let (r, d, w) = self.work(m, ctx)?;
                (r, Vec::new(), d, w)
            }
        };
        let sections = match m.get("sections") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => self.sections(v, ctx, wcet, &regions, dag.as_ref(), resources, declared)?,
        };
        let deadline = match m.get("deadline") {
            None => period,
            Some(v) => self.positive_duration(v, ctx, "deadline")?,
        };
        let offset = match m.get("offset") {
            None => 0,
            Some(v) => self.duration(v, ctx, "offset")?,
        };
        let priority = match m.get("priority") {
            None => None,
            Some(v) => Some(self.u32_field(v, ctx, "priority")?),
        };
        let cpu = match m.get("cpu") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.cpu(v, ctx, platform)?),
        };
        let wss = match m.get("wss") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.size(v, ctx, "wss")?),
        };
        let group = match m.get("group") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.u32_field(v, ctx, "group")?),
        };
        let tuf = match m.get("tuf") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.tuf(v, ctx, deadline)?),
        };
        let execution_times = self.execution_times(m, ctx, !regions.is_empty(), dag.is_some())?;
        let timing = Timing {
            period,
            deadline,
            wcet,
            priority,
            parallel: !regions.is_empty() || dag.is_some(),
        };
        let policy = self.sched_policy(m, ctx, default, &timing)?;
        Ok(Task {
            name,
            period,
            max_interarrival,
            deadline,
            wcet,
            offset,
            priority,
            cpu,
            wss,
            group,
            regions,
            dag,
            sections,
            tuf,
            class: crate::task::Class::Rt,
            policy,
            execution_times,
            trigger: None,
            suspensions,
        })
    }

    /// `name`: a non-empty string (a number is taken as its text).
    fn task_name(&self, m: &Map<String, Value>, pos: &str) -> Result<String, InputError> {
        match m.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(v) => Err(self.err(
                Some(pos),
                Some("name"),
                format!("expected a non-empty string, got {}", show(v)),
            )),
            None => Err(self.err(Some(pos), Some("name"), "missing required field")),
        }
    }

    /// Whether the task is best-effort: `class: fair`, or (no class) `behaviour`, or `nice`
    /// when no policy applies (`policies`: the task or the set names one, and `nice` may then
    /// be a `policy: other` task's with jobs).
    fn is_fair(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        policies: bool,
    ) -> Result<bool, InputError> {
        match m.get("class") {
            None | Some(Value::Null) => {
                Ok(m.contains_key("behaviour") || (!policies && m.contains_key("nice")))
            }
            Some(Value::String(c)) if c == "fair" => Ok(true),
            Some(Value::String(c)) if c == "rt" => Ok(false),
            Some(v) => Err(self.err(
                ctx,
                Some("class"),
                format!("unknown class {} (known: rt, fair)", show(v)),
            )),
        }
    }

    /// `period` or `min_interarrival` (T), and `max_interarrival` (sporadic arrivals in
    /// [T, max]).
    fn arrivals(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
    ) -> Result<(Time, Option<Time>), InputError> {
        let period = match (m.get("period"), m.get("min_interarrival")) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    ctx,
                    Some("min_interarrival"),
                    "give either 'period' or 'min_interarrival', not both",
                ))
            }
            (Some(v), None) => self.positive_duration(v, ctx, "period")?,
            (None, Some(v)) => self.positive_duration(v, ctx, "min_interarrival")?,
            (None, None) => {
                return Err(self.err(
                    ctx,
                    Some("period"),
                    "missing required field (or 'min_interarrival' for a sporadic task)",
                ))
            }
        };
        let max_interarrival = match m.get("max_interarrival") {
            None => None,
            Some(v) => {
                let x = self.positive_duration(v, ctx, "max_interarrival")?;
                if x < period {
                    return Err(self.err(
                        ctx,
                        Some("max_interarrival"),
                        "must be >= the period / min_interarrival",
                    ));
                }
                Some(x)
            }
        };
        Ok((period, max_interarrival))
    }

    /// The job's work: `regions` or a `dag`, and the WCET C, which is their sum (PAWS §3; a
    /// DAG's work) and may be left out for them.
    fn work(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
    ) -> Result<(Vec<Region>, Option<Dag>, Time), InputError> {
        let regions = match m.get("regions") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => self.regions(v, ctx)?,
        };
        let dag = match m.get("dag") {
            None | Some(Value::Null) => None,
            Some(_) if !regions.is_empty() => {
                return Err(self.err(
                    ctx,
                    Some("dag"),
                    "give either 'regions' or 'dag', not both (fork-join regions are a DAG: write them as one or the other)",
                ))
            }
            Some(v) => Some(self.dag(v, ctx)?),
        };
        if let Some(d) = &dag {
            let work = d.work();
            if let Some(v) = m.get("wcet") {
                let w = self.positive_duration(v, ctx, "wcet")?;
                if w != work {
                    return Err(self.err(
                        ctx,
                        Some("wcet"),
                        format!(
                            "is {} but the DAG's nodes sum to {} (the work C of a DAG task is the sum of its nodes' WCETs); leave 'wcet' out to use the sum",
                            fmt_duration(w),
                            fmt_duration(work)
                        ),
                    ));
                }
            }
        }
        let total: Time = match &dag {
            Some(d) => d.work(),
            None => regions.iter().flat_map(|r| r.threads.iter()).sum(),
        };
        let wcet = match (m.get("wcet"), regions.is_empty() && dag.is_none()) {
            (None, true) => return Err(self.err(ctx, Some("wcet"), "missing required field")),
            (None, false) => total,
            (Some(v), true) => self.positive_duration(v, ctx, "wcet")?,
            (Some(v), false) => {
                let w = self.positive_duration(v, ctx, "wcet")?;
                if w != total {
                    return Err(self.err(
                        ctx,
                        Some("wcet"),
                        format!(
                            "is {} but the regions' threads sum to {} (PAWS §3: C is the sum of every thread's WCET); leave 'wcet' out to use the sum",
                            fmt_duration(w),
                            fmt_duration(total)
                        ),
                    ));
                }
                w
            }
        };
        Ok((regions, dag, wcet))
    }

    /// A whole number up to `u32::MAX` (`priority`, `group`).
    fn u32_field(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<u32, InputError> {
        let x = self.uint(v, ctx, field)?;
        if x > u32::MAX as u64 {
            return Err(self.err(ctx, Some(field), "is too large"));
        }
        Ok(x as u32)
    }

    /// `cpu`: one of the platform's CPUs (a real-time or a best-effort task's).
    pub(super) fn cpu(
        &self,
        v: &Value,
        ctx: Option<&str>,
        platform: &Platform,
    ) -> Result<u32, InputError> {
        let c = self.uint(v, ctx, "cpu")?;
        if c >= platform.cpus as u64 {
            return Err(self.err(
                ctx,
                Some("cpu"),
                format!(
                    "CPU {c} is out of range: the platform has {} CPUs (0..={})",
                    platform.cpus,
                    platform.cpus - 1
                ),
            ));
        }
        Ok(c as u32)
    }

    /// `execution_times`: measured execution times to replay, for a sequential task only.
    fn execution_times(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        has_regions: bool,
        has_dag: bool,
    ) -> Result<Vec<Time>, InputError> {
        match m.get("execution_times") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => {
                if has_regions || has_dag {
                    return Err(self.err(
                        ctx,
                        Some("execution_times"),
                        format!(
                            "applies to sequential tasks only (this task has {})",
                            if has_dag { "a DAG" } else { "regions" }
                        ),
                    ));
                }
                if a.is_empty() || a.len() > MAX_EXECUTION_TIMES {
                    return Err(self.err(
                        ctx,
                        Some("execution_times"),
                        format!(
                            "expected 1 to {MAX_EXECUTION_TIMES} durations, got {}",
                            a.len()
                        ),
                    ));
                }
                let mut v = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    v.push(self.positive_duration(x, ctx, &format!("execution_times[{i}]"))?);
                }
                Ok(v)
            }
            Some(v) => Err(self.err(
                ctx,
                Some("execution_times"),
                format!("expected a list of durations, got {}", show(v)),
            )),
        }
    }

    /// `regions: [2ms, [3ms, 1ms, 1ms], {threads: 4, wcet: 2ms}, 1ms]`.
    pub(super) fn regions(&self, v: &Value, ctx: Option<&str>) -> Result<Vec<Region>, InputError> {
        let list = v.as_array().ok_or_else(|| {
            self.err(ctx, Some("regions"), format!("expected a list of regions (each a duration, a list of thread WCETs, or {{threads: N, wcet: D}}), got {}", kind(v)))
        })?;
        if list.is_empty() {
            return Err(self.err(
                ctx,
                Some("regions"),
                "is empty; leave it out for a sequential task",
            ));
        }
        let mut out = Vec::with_capacity(list.len().min(1024));
        // Threads so far, checked before each region's are made (a region of {threads: N} is
        // a few bytes of text for N threads).
        let mut count = 0u64;
        let too_many = |field: &str, count: u64| {
            self.err(ctx, Some(field), format!("the task's regions have {count} threads up to here, more than the limit of {MAX_THREADS_PER_TASK} threads in a task"))
        };
        for (r, rv) in list.iter().enumerate() {
            let field = format!("regions[{r}]");
            count += match rv {
                Value::Array(ts) => ts.len() as u64,
                Value::Object(o) => o
                    .get("threads")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .min(1 << 40),
                _ => 1,
            };
            if count > MAX_THREADS_PER_TASK {
                return Err(too_many(&field, count));
            }
            let threads = match rv {
                Value::Array(ts) => {
                    if ts.is_empty() {
                        return Err(self.err(
                            ctx,
                            Some(&field),
                            "a region needs at least one thread",
                        ));
                    }
                    ts.iter()
                        .enumerate()
                        .map(|(j, x)| self.positive_duration(x, ctx, &format!("{field}[{j}]")))
                        .collect::<Result<Vec<_>, _>>()?
                }
                Value::Object(o) => {
                    let c = format!("{} {field}", ctx.unwrap_or(""));
                    self.check_fields(o, REGION_FIELDS, Some(&c))?;
                    let n = match o.get("threads") {
                        None => {
                            return Err(self.err(
                                Some(&c),
                                Some("threads"),
                                "missing required field",
                            ))
                        }
                        Some(x) => self.uint(x, Some(&c), "threads")?,
                    };
                    if n == 0 || n > MAX_THREADS_PER_TASK {
                        return Err(self.err(Some(&c), Some("threads"), format!("must be between 1 and {MAX_THREADS_PER_TASK} (the threads a task may have), got {n}")));
                    }
                    let w = match o.get("wcet") {
                        None => {
                            return Err(self.err(
                                Some(&c),
                                Some("wcet"),
                                "missing required field (each thread's WCET)",
                            ))
                        }
                        Some(x) => self.positive_duration(x, Some(&c), "wcet")?,
                    };
                    vec![w; n as usize]
                }
                other => vec![self.positive_duration(other, ctx, &field)?],
            };
            out.push(Region { threads });
        }
        Ok(out)
    }
}
