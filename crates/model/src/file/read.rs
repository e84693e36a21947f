//! Reading a task-set file: the document (YAML or JSON) validated section by section into a
//! [`TaskSet`] (docs/taskset-format.md). Unknown fields are errors (with a "did you mean"
//! hint): a typo must never silently fall back to a default.

use crate::dag::{Dag, Node};
use crate::input::{read_document, read_input_text, Format, InputError};
use crate::overheads::{self, Overheads};
use crate::program::{CriticalSection, Region};
use crate::task::*;
use crate::text::closest;
use crate::time::{fmt_duration, Time};
use crate::topology::{self, Cache, CacheKind, Topology};
use crate::tuf::Tuf;
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};
use std::path::Path;

/// The largest task-set file read: 100,000 tasks (the generators' limit) take about 10 MB of
/// YAML; reading takes up to ~50 times a file's size in memory (its value tree), so this keeps
/// a file of TUF points or a mistaken path under 2 GB.
pub const MAX_TASKSET_BYTES: u64 = 32 << 20;

/// The most threads one task's job runs over its regions (the sum of the regions' widths):
/// PAWS §5 draws up to 3m threads a task (m ≤ 65,536 CPUs), plus its two sequential parts.
pub const MAX_THREADS_PER_TASK: u64 = 200_000;

/// The most threads a set's tasks have in all (a sequential task counts one): every one is a
/// schedulable entity of each job, with its program in memory. A list of `{threads: 4096}`
/// regions 540 KB long asked for 88 million before this limit.
pub const MAX_THREADS_PER_SET: u64 = 2_000_000;

/// Read and validate a task-set file.
pub fn load_taskset(path: impl AsRef<Path>) -> Result<TaskSet, InputError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = read_input_text(path, MAX_TASKSET_BYTES, "a task-set file")
        .map_err(|e| InputError::new(&name, format!("cannot read file: {e}")))?;
    parse_taskset(&text, Format::from_path(&name), &name)
}

/// Parse and validate task-set text; `source` names it in messages.
pub fn parse_taskset(text: &str, format: Format, source: &str) -> Result<TaskSet, InputError> {
    let root = read_document(text, format, source)?;
    Validator::new(source).taskset(&root)
}

const TOP_FIELDS: &[&str] = &[
    "name",
    "description",
    "platform",
    "run",
    "tasks",
    "resources",
];
const PLATFORM_FIELDS: &[&str] = &["cpus", "topology"];
const TOPOLOGY_FIELDS: &[&str] = &["preset", "caches", "nodes"];
const CACHE_FIELDS: &[&str] = &["level", "type", "size", "line", "ways", "shared_by", "cpus"];
const RUN_FIELDS: &[&str] = &[
    "duration",
    "seed",
    "on_miss",
    "execution",
    "overheads",
    "cache",
];
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
    "nice",
    "behaviour",
    "run",
    "sleep",
    "execution_times",
];
/// The most measured execution times one task may list (`execution_times`).
const MAX_EXECUTION_TIMES: usize = 1_000_000;
/// What a best-effort (fair-class) task may give; the real-time timing fields do not apply.
const FAIR_FIELDS: &[&str] = &[
    "name",
    "class",
    "nice",
    "behaviour",
    "run",
    "sleep",
    "cpu",
    "offset",
    "wss",
    "group",
];
const TUF_FIELDS: &[&str] = &["shape", "utility", "termination", "points"];
const REGION_FIELDS: &[&str] = &["threads", "wcet"];
const SECTION_FIELDS: &[&str] = &["resource", "start", "length", "region", "thread", "node"];
const DAG_FIELDS: &[&str] = &["nodes", "edges"];
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

// The task file's sections, each read with the field checks of `crate::validate`.
impl Validator<'_> {
    /// `run.overheads`: a profile's path (`overheads: profile.yaml`), or a mapping of costs,
    /// optionally on top of a profile (`{profile: p.yaml, statistic: p99, tick: 0}`). A
    /// relative profile path is read beside the task file.
    fn overheads(&self, v: &Value) -> Result<Overheads, InputError> {
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
    fn cache_params(&self, v: &Value) -> Result<CacheParams, InputError> {
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

    fn taskset(&self, root: &Value) -> Result<TaskSet, InputError> {
        let top = self.object(root, None, None)?;
        self.check_fields(top, TOP_FIELDS, None)?;

        let platform = match top.get("platform") {
            None => {
                return Err(self.err(
                    None,
                    Some("platform"),
                    "missing required field (e.g. platform: {cpus: 4})",
                ))
            }
            Some(p) => {
                let ctx = Some("platform");
                let m = self.object(p, ctx, None)?;
                self.check_fields(m, PLATFORM_FIELDS, ctx)?;
                let cpus = match m.get("cpus") {
                    None => return Err(self.err(ctx, Some("cpus"), "missing required field")),
                    Some(v) => self.uint(v, ctx, "cpus")?,
                };
                if cpus == 0 || cpus > 65_536 {
                    return Err(self.err(
                        ctx,
                        Some("cpus"),
                        format!("must be between 1 and 65536, got {cpus}"),
                    ));
                }
                let topology = match m.get("topology") {
                    None | Some(Value::Null) => None,
                    Some(t) => Some(self.topology(t, cpus as u32)?),
                };
                Platform {
                    cpus: cpus as u32,
                    topology,
                }
            }
        };

        let mut run = RunOptions::default();
        if let Some(r) = top.get("run") {
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
            if let Some(v) = m.get("execution") {
                run.execution = self.exec_model(v)?;
            }
            if let Some(v) = m.get("overheads") {
                run.overheads = self.overheads(v)?;
            }
            if let Some(v) = m.get("cache") {
                run.cache = self.cache_params(v)?;
            }
        }

        let tasks_v = top.get("tasks").ok_or_else(|| {
            self.err(
                None,
                Some("tasks"),
                "missing required field (a list of tasks)",
            )
        })?;
        let list = tasks_v.as_array().ok_or_else(|| {
            self.err(
                None,
                Some("tasks"),
                format!("expected a list, got {}", kind(tasks_v)),
            )
        })?;
        if list.is_empty() {
            return Err(self.err(None, Some("tasks"), "the task list is empty"));
        }
        let mut tasks: Vec<Task> = Vec::with_capacity(list.len());
        // Declared resources fix their order and catch typos in section names.
        let mut resources: Vec<String> = Vec::new();
        let declared = top.get("resources").is_some();
        if let Some(rv) = top.get("resources") {
            let names = rv.as_array().ok_or_else(|| {
                self.err(
                    None,
                    Some("resources"),
                    format!("expected a list of resource names, got {}", kind(rv)),
                )
            })?;
            for (k, n) in names.iter().enumerate() {
                match n.as_str() {
                    Some(x) if !x.trim().is_empty() && !resources.iter().any(|r| r == x) => {
                        resources.push(x.to_string())
                    }
                    _ => {
                        return Err(self.err(
                            None,
                            Some(&format!("resources[{k}]")),
                            format!("expected a new, non-empty resource name, got {}", show(n)),
                        ))
                    }
                }
            }
        }
        let fixed = declared.then_some(resources.len());
        // Names seen, by position: a scan of the tasks before each one made loading quadratic.
        let mut seen: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(list.len());
        let mut threads = 0u64;
        for (i, tv) in list.iter().enumerate() {
            let task = self.task(i, tv, &platform, &mut resources, fixed)?;
            threads += match &task.dag {
                Some(d) => d.nodes.len() as u64,
                None => task
                    .regions
                    .iter()
                    .map(|r| r.threads.len() as u64)
                    .sum::<u64>()
                    .max(1),
            };
            if threads > MAX_THREADS_PER_SET {
                return Err(self.err(
                    Some(&format!("task '{}' (tasks[{i}])", task.name)),
                    Some("regions"),
                    format!("the set's tasks up to this one have {threads} threads, more than the limit of {MAX_THREADS_PER_SET} threads in a set"),
                ));
            }
            if let Some(j) = seen.insert(task.name.clone(), i) {
                return Err(self.err(
                    Some(&format!("task '{}' (tasks[{i}])", task.name)),
                    Some("name"),
                    format!("duplicate task name (also tasks[{j}])"),
                ));
            }
            tasks.push(task);
        }
        Ok(TaskSet {
            source: self.file.into(),
            platform,
            run,
            tasks,
            resources,
        })
    }

    fn exec_model(&self, v: &Value) -> Result<ExecModel, InputError> {
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

    fn task(
        &self,
        i: usize,
        tv: &Value,
        platform: &Platform,
        resources: &mut Vec<String>,
        declared: Option<usize>,
    ) -> Result<Task, InputError> {
        let pos = format!("tasks[{i}]");
        let m = self.object(tv, Some(&pos), None)?;
        let name = match m.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(v) => {
                return Err(self.err(
                    Some(&pos),
                    Some("name"),
                    format!("expected a non-empty string, got {}", show(v)),
                ))
            }
            None => return Err(self.err(Some(&pos), Some("name"), "missing required field")),
        };
        let ctx_s = format!("task '{name}' ({pos})");
        let ctx = Some(ctx_s.as_str());
        self.check_fields(m, TASK_FIELDS, ctx)?;
        let fair = match m.get("class") {
            None | Some(Value::Null) => m.contains_key("nice") || m.contains_key("behaviour"),
            Some(Value::String(c)) if c == "fair" => true,
            Some(Value::String(c)) if c == "rt" => false,
            Some(v) => {
                return Err(self.err(
                    ctx,
                    Some("class"),
                    format!("unknown class {} (known: rt, fair)", show(v)),
                ))
            }
        };
        if fair {
            return self.fair_task(name, m, ctx, platform);
        }
        for f in ["nice", "behaviour", "run", "sleep"] {
            if m.contains_key(f) {
                return Err(self.err(
                    ctx,
                    Some(f),
                    "applies to best-effort tasks only (class: fair)",
                ));
            }
        }
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
            Some(v) => {
                let p = self.uint(v, ctx, "priority")?;
                if p > u32::MAX as u64 {
                    return Err(self.err(ctx, Some("priority"), "is too large"));
                }
                Some(p as u32)
            }
        };
        let cpu = match m.get("cpu") {
            None | Some(Value::Null) => None,
            Some(v) => {
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
                Some(c as u32)
            }
        };
        let wss = match m.get("wss") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.size(v, ctx, "wss")?),
        };
        let group = match m.get("group") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let g = self.uint(v, ctx, "group")?;
                if g > u32::MAX as u64 {
                    return Err(self.err(ctx, Some("group"), "is too large"));
                }
                Some(g as u32)
            }
        };
        let tuf = match m.get("tuf") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.tuf(v, ctx, deadline)?),
        };
        let execution_times = match m.get("execution_times") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => {
                if !regions.is_empty() || dag.is_some() {
                    return Err(self.err(
                        ctx,
                        Some("execution_times"),
                        format!(
                            "applies to sequential tasks only (this task has {})",
                            if dag.is_some() { "a DAG" } else { "regions" }
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
                v
            }
            Some(v) => {
                return Err(self.err(
                    ctx,
                    Some("execution_times"),
                    format!("expected a list of durations, got {}", show(v)),
                ))
            }
        };
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
            execution_times,
        })
    }

    /// A best-effort task: `{name, class: fair, nice: 5, behaviour: sleeper, run: 2ms, sleep:
    /// 8ms}`; `behaviour: hog` needs no run / sleep; `bursty` takes ranges `run: [1ms, 20ms]`.
    fn fair_task(
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
        let nice = match m.get("nice") {
            None | Some(Value::Null) => 0,
            Some(v) => match v.as_i64() {
                Some(n) if (-20..=19).contains(&n) => n as i8,
                _ => {
                    return Err(self.err(
                        ctx,
                        Some("nice"),
                        format!(
                            "must be an integer from -20 to 19 (Linux nice), got {}",
                            show(v)
                        ),
                    ))
                }
            },
        };
        let range = |field: &str| -> Result<(Time, Time), InputError> {
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
                        return Err(self.err(
                            ctx,
                            Some(field),
                            "a range [min, max] needs min <= max",
                        ));
                    }
                    Ok((a, b))
                }
                Some(v) => {
                    let x = self.duration(v, ctx, field)?;
                    Ok((x, x))
                }
            }
        };
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
            Behaviour::Sleeper { run: 0, .. } => {
                return Err(self.err(ctx, Some("run"), "must be > 0"))
            }
            Behaviour::Bursty { run, .. } if run.0 == 0 => {
                return Err(self.err(ctx, Some("run"), "must be > 0"))
            }
            _ => {}
        }
        let mut t = Task::fair(name, nice, behaviour);
        if let Some(v) = m.get("offset") {
            t.offset = self.duration(v, ctx, "offset")?;
        }
        if let Some(v) = m.get("cpu").filter(|v| !v.is_null()) {
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
            t.cpu = Some(c as u32);
        }
        if let Some(v) = m.get("wss").filter(|v| !v.is_null()) {
            t.wss = Some(self.size(v, ctx, "wss")?);
        }
        if let Some(v) = m.get("group").filter(|v| !v.is_null()) {
            t.group = Some(self.uint(v, ctx, "group")? as u32);
        }
        Ok(t)
    }

    /// `tuf: {shape: linear, utility: 10, termination: 80ms}`, `{shape: piecewise, points:
    /// [[0, 10], [50ms, 10], [80ms, 0]]}`, or a bare number `U` for a step TUF of utility U.
    /// The termination time defaults to the task's deadline.
    fn tuf(&self, v: &Value, ctx: Option<&str>, deadline: Time) -> Result<Tuf, InputError> {
        let utility = |v: &Value, field: &str| -> Result<f64, InputError> {
            let u = self.float(v, ctx, field)?;
            if u < 0.0 {
                return Err(self.err(ctx, Some(field), format!("utility must be >= 0, got {u}")));
            }
            Ok(u)
        };
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
                    let u = utility(&pair[1], &field)?;
                    if let Some(&(prev, _)) = points.last() {
                        if t <= prev {
                            return Err(self.err(
                                ctx,
                                Some(&field),
                                format!("points are out of order: time {} is not after the previous point's {}", fmt_duration(t), fmt_duration(prev)),
                            ));
                        }
                    }
                    points.push((t, u));
                }
                Ok(Tuf::Piecewise { points })
            }
            other => Err(self.err(
                ctx,
                Some("tuf.shape"),
                format!("unknown shape '{other}' (known: step, linear, quadratic, piecewise)"),
            )),
        }
    }

    /// `regions: [2ms, [3ms, 1ms, 1ms], {threads: 4, wcet: 2ms}, 1ms]`.
    fn regions(&self, v: &Value, ctx: Option<&str>) -> Result<Vec<Region>, InputError> {
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

    /// An unknown node name, with the closest known one.
    fn unknown_node(
        &self,
        ctx: Option<&str>,
        field: &str,
        name: &str,
        known: &[&str],
    ) -> InputError {
        let hint = closest(name, known)
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        self.err(ctx, Some(field), format!("unknown node '{name}'{hint}"))
    }

    /// `dag: {nodes: {a: 2ms, b: 4ms, c: 3ms, d: 1ms}, edges: [[a, b], [a, c], [b, d], [c, d]]}`:
    /// nodes in file order, each with its WCET; edges (from, to). Checked: names non-empty,
    /// WCETs > 0, edges naming known nodes, no self-loop, no duplicate edge, no cycle (one is
    /// named), weakly connected. Several sources or sinks are allowed (docs/dag.md).
    fn dag(&self, v: &Value, ctx: Option<&str>) -> Result<Dag, InputError> {
        let m = v.as_object().ok_or_else(|| {
            self.err(
                ctx,
                Some("dag"),
                format!(
                    "expected a mapping {{nodes: {{NAME: WCET, ...}}, edges: [[FROM, TO], ...]}}, got {}",
                    kind(v)
                ),
            )
        })?;
        for k in m.keys() {
            if !DAG_FIELDS.contains(&k.as_str()) {
                let hint = closest(k, DAG_FIELDS)
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                return Err(self.err(
                    ctx,
                    Some(&format!("dag.{k}")),
                    format!(
                        "unknown field{hint}; known fields: {}",
                        DAG_FIELDS.join(", ")
                    ),
                ));
            }
        }
        let nodes_v = m.get("nodes").ok_or_else(|| {
            self.err(
                ctx,
                Some("dag.nodes"),
                "missing required field (a mapping of node names to WCETs)",
            )
        })?;
        let nm = nodes_v.as_object().ok_or_else(|| {
            self.err(
                ctx,
                Some("dag.nodes"),
                format!(
                    "expected a mapping of node names to WCETs (e.g. {{a: 2ms, b: 1ms}}), got {}",
                    kind(nodes_v)
                ),
            )
        })?;
        if nm.is_empty() {
            return Err(self.err(
                ctx,
                Some("dag.nodes"),
                "is empty: a DAG needs at least one node",
            ));
        }
        if nm.len() as u64 > MAX_THREADS_PER_TASK {
            return Err(self.err(
                ctx,
                Some("dag.nodes"),
                format!(
                    "has {} nodes, more than the limit of {MAX_THREADS_PER_TASK} threads in a task",
                    nm.len()
                ),
            ));
        }
        let mut dag = Dag::default();
        let mut index: std::collections::HashMap<&str, u32> =
            std::collections::HashMap::with_capacity(nm.len());
        for (name, w) in nm {
            // Duplicate keys are refused by the document reader; names are unique here.
            if name.trim().is_empty() {
                return Err(self.err(ctx, Some("dag.nodes"), "a node name is empty"));
            }
            let wcet = self.positive_duration(w, ctx, &format!("dag.nodes.{name}"))?;
            index.insert(name.as_str(), dag.nodes.len() as u32);
            dag.nodes.push(Node {
                name: name.clone(),
                wcet,
            });
        }
        let names: Vec<&str> = dag.nodes.iter().map(|n| n.name.as_str()).collect();
        let edges_v = m.get("edges");
        let list: &[Value] = match edges_v {
            None | Some(Value::Null) => &[],
            Some(Value::Array(a)) => a,
            Some(x) => {
                return Err(self.err(
                    ctx,
                    Some("dag.edges"),
                    format!("expected a list of [FROM, TO] pairs, got {}", kind(x)),
                ))
            }
        };
        let mut seen: std::collections::HashMap<(u32, u32), usize> =
            std::collections::HashMap::with_capacity(list.len());
        for (k, e) in list.iter().enumerate() {
            let field = format!("dag.edges[{k}]");
            let pair = match e {
                Value::Array(p) if p.len() == 2 => p,
                x => {
                    return Err(self.err(
                        ctx,
                        Some(&field),
                        format!("expected a pair [FROM, TO] of node names, got {}", show(x)),
                    ))
                }
            };
            let mut ends = [0u32; 2];
            for (i, x) in pair.iter().enumerate() {
                let name = match x {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => {
                        return Err(self.err(
                            ctx,
                            Some(&field),
                            format!("expected a node name, got {}", show(other)),
                        ))
                    }
                };
                ends[i] = match index.get(name.as_str()) {
                    Some(&u) => u,
                    None => return Err(self.unknown_node(ctx, &field, &name, &names)),
                };
            }
            let [u, v] = ends;
            if u == v {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!(
                        "a self-loop on '{}': a node cannot precede itself",
                        names[u as usize]
                    ),
                ));
            }
            if let Some(j) = seen.insert((u, v), k) {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!(
                        "duplicate edge '{}' -> '{}' (also dag.edges[{j}])",
                        names[u as usize], names[v as usize]
                    ),
                ));
            }
            dag.edges.push((u, v));
        }
        if let Some(cycle) = dag.find_cycle() {
            let path: Vec<&str> = cycle.iter().map(|&u| names[u as usize]).collect();
            return Err(self.err(
                ctx,
                Some("dag.edges"),
                format!(
                    "the graph has a cycle: {} (a DAG is acyclic)",
                    path.join(" -> ")
                ),
            ));
        }
        let apart = dag.unconnected();
        if !apart.is_empty() {
            let shown: Vec<String> = apart
                .iter()
                .take(5)
                .map(|&u| format!("'{}'", names[u as usize]))
                .collect();
            return Err(self.err(
                ctx,
                Some("dag.edges"),
                format!(
                    "the graph is not connected: {}{}{} not linked to '{}' by any edge (one task is one connected DAG; give separate tasks separately)",
                    shown.join(", "),
                    if apart.len() > 5 { ", ..." } else { "" },
                    if apart.len() == 1 { " is" } else { " are" },
                    names[0]
                ),
            ));
        }
        Ok(dag)
    }

    /// `sections: [{resource: bus, start: 1ms, length: 0.5ms, region: 0, thread: 0}]`.
    #[allow(clippy::too_many_arguments)]
    fn sections(
        &self,
        v: &Value,
        ctx: Option<&str>,
        wcet: Time,
        regions: &[Region],
        dag: Option<&Dag>,
        resources: &mut Vec<String>,
        declared: Option<usize>,
    ) -> Result<Vec<CriticalSection>, InputError> {
        // A DAG task's section names its node; the node is thread `index` of the one region
        // the program makes of the nodes (`Program::build_dag`).
        let node_wcets: Vec<Time> = dag
            .map(|d| d.nodes.iter().map(|n| n.wcet).collect())
            .unwrap_or_default();
        let list = v.as_array().ok_or_else(|| {
            self.err(
                ctx,
                Some("sections"),
                format!("expected a list of critical sections, got {}", kind(v)),
            )
        })?;
        let mut out = Vec::with_capacity(list.len());
        let mut names = Vec::with_capacity(list.len());
        for (k, sv) in list.iter().enumerate() {
            let c = format!("{} sections[{k}]", ctx.unwrap_or(""));
            let cx = Some(c.as_str());
            let o = self.object(sv, cx, None)?;
            self.check_fields(o, SECTION_FIELDS, cx)?;
            let name = match o.get("resource") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                Some(x) => {
                    return Err(self.err(
                        cx,
                        Some("resource"),
                        format!("expected a resource name, got {}", show(x)),
                    ))
                }
                None => {
                    return Err(self.err(
                        cx,
                        Some("resource"),
                        "missing required field (the name of the mutex)",
                    ))
                }
            };
            let mut dag_node: Option<u64> = None;
            if let Some(d) = dag {
                for f in ["region", "thread"] {
                    if o.contains_key(f) {
                        return Err(self.err(
                            cx,
                            Some(f),
                            "a DAG task's section names its node ('node: NAME'), not a region or thread",
                        ));
                    }
                }
                let names: Vec<&str> = d.nodes.iter().map(|n| n.name.as_str()).collect();
                let k = match o.get("node") {
                    Some(Value::String(x)) => match names.iter().position(|n| n == x) {
                        Some(k) => k,
                        None => return Err(self.unknown_node(cx, "node", x, &names)),
                    },
                    Some(Value::Number(x)) => {
                        let x = x.to_string();
                        match names.iter().position(|n| *n == x) {
                            Some(k) => k,
                            None => return Err(self.unknown_node(cx, "node", &x, &names)),
                        }
                    }
                    Some(x) => {
                        return Err(self.err(
                            cx,
                            Some("node"),
                            format!("expected a node name, got {}", show(x)),
                        ))
                    }
                    None if names.len() == 1 => 0,
                    None => {
                        return Err(self.err(
                            cx,
                            Some("node"),
                            "missing required field (the DAG node the section is in)",
                        ))
                    }
                };
                dag_node = Some(k as u64);
            } else if o.contains_key("node") {
                return Err(self.err(
                    cx,
                    Some("node"),
                    "applies to DAG tasks only (this task gives 'region' and 'thread')",
                ));
            }
            let region = match o.get("region") {
                None => 0,
                Some(x) => self.uint(x, cx, "region")?,
            };
            let nregions = regions.len().max(1) as u64;
            if region >= nregions {
                return Err(self.err(
                    cx,
                    Some("region"),
                    format!("region {region} is out of range: the task has {nregions} region(s)"),
                ));
            }
            let thread_wcets: &[Time] = if dag.is_some() {
                &node_wcets
            } else if regions.is_empty() {
                std::slice::from_ref(&wcet)
            } else {
                &regions[region as usize].threads
            };
            let thread = match (dag_node, o.get("thread")) {
                (Some(k), _) => k,
                (None, None) => 0,
                (None, Some(x)) => self.uint(x, cx, "thread")?,
            };
            if thread >= thread_wcets.len() as u64 {
                return Err(self.err(
                    cx,
                    Some("thread"),
                    format!(
                        "thread {thread} is out of range: region {region} has {} thread(s)",
                        thread_wcets.len()
                    ),
                ));
            }
            let start = match o.get("start") {
                None => return Err(self.err(
                    cx,
                    Some("start"),
                    "missing required field (work the thread does before it requests the resource)",
                )),
                Some(x) => self.duration(x, cx, "start")?,
            };
            let length = match o.get("length") {
                None => {
                    return Err(self.err(
                        cx,
                        Some("length"),
                        "missing required field (work done while holding the resource)",
                    ))
                }
                Some(x) => self.positive_duration(x, cx, "length")?,
            };
            let tw = thread_wcets[thread as usize];
            if start.checked_add(length).is_none_or(|e| e > tw) {
                return Err(self.err(
                    cx,
                    Some("length"),
                    format!(
                        "the section ends at {} of work, after the thread's WCET {}",
                        fmt_duration(start.saturating_add(length)),
                        fmt_duration(tw)
                    ),
                ));
            }
            let resource = match resources.iter().position(|r| *r == name) {
                Some(r) => r as u32,
                None if declared.is_some() => {
                    let known: Vec<&str> = resources.iter().map(String::as_str).collect();
                    let hint = closest(&name, &known)
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    return Err(self.err(
                        cx,
                        Some("resource"),
                        format!(
                            "'{name}' is not in the top-level 'resources' list{hint}; declared: {}",
                            known.join(", ")
                        ),
                    ));
                }
                None => {
                    resources.push(name.clone());
                    (resources.len() - 1) as u32
                }
            };
            out.push(CriticalSection {
                resource,
                region: region as u32,
                thread: thread as u32,
                start,
                length,
            });
            names.push((k, name));
        }
        // Outer sections first at equal starts, so `Program::build` nests them correctly.
        let mut order: Vec<usize> = (0..out.len()).collect();
        order.sort_by_key(|&i| {
            (
                out[i].region,
                out[i].thread,
                out[i].start,
                std::cmp::Reverse(out[i].length),
                i,
            )
        });
        // Proper nesting within each thread: a stack of the open sections.
        let mut open: Vec<usize> = Vec::new();
        for (pos, &i) in order.iter().enumerate() {
            let s = &out[i];
            if pos > 0 {
                let p = &out[order[pos - 1]];
                if (p.region, p.thread) != (s.region, s.thread) {
                    open.clear();
                }
            }
            while open.last().is_some_and(|&o| out[o].end() <= s.start) {
                open.pop();
            }
            if let Some(&o) = open.last() {
                let c = format!("{} sections[{}]", ctx.unwrap_or(""), names[i].0);
                if s.end() > out[o].end() {
                    return Err(self.err(
                        Some(&c),
                        Some("length"),
                        format!("overlaps sections[{}] without nesting inside it; sections of one thread must be disjoint or nested", names[o].0),
                    ));
                }
                if let Some(&h) = open.iter().find(|&&h| out[h].resource == s.resource) {
                    return Err(self.err(
                        Some(&c),
                        Some("resource"),
                        format!("requests '{}' while already holding it (sections[{}]); a mutex is not recursive", names[i].1, names[h].0),
                    ));
                }
            }
            open.push(i);
        }
        Ok(order.into_iter().map(|i| out[i].clone()).collect())
    }

    /// `topology: opteron6164x4` / `host`, or `{caches: [{level, type, size, line, ways,
    /// shared_by | cpus}], nodes: N | [[cpus]]}` (docs/taskset-format.md "topology").
    fn topology(&self, v: &Value, cpus: u32) -> Result<Topology, InputError> {
        let ctx = Some("platform");
        let preset = |name: &str| {
            Topology::preset(name, cpus).map_err(|e| self.err(ctx, Some("topology"), e))
        };
        if let Value::String(name) = v {
            return preset(name);
        }
        let m = self.object(v, ctx, Some("topology"))?;
        self.check_fields(m, TOPOLOGY_FIELDS, Some("platform.topology"))?;
        let mut t = match m.get("preset") {
            Some(Value::String(name)) => preset(name)?,
            Some(other) => {
                return Err(self.err(
                    ctx,
                    Some("topology.preset"),
                    format!("expected a preset name, got {}", show(other)),
                ))
            }
            None => Topology::default(),
        };
        // Where each cache instance was written (`caches[i]`, `caches[i].cpus[k]`), for errors.
        let mut origin: Vec<String> = Vec::new();
        if let Some(list) = m.get("caches") {
            let list = list.as_array().ok_or_else(|| {
                self.err(
                    ctx,
                    Some("topology.caches"),
                    format!("expected a list of cache levels, got {}", kind(list)),
                )
            })?;
            t.preset = None;
            t.caches.clear();
            for (i, cv) in list.iter().enumerate() {
                let f = |x: &str| format!("topology.caches[{i}].{x}");
                let cm = self.object(cv, ctx, Some(&format!("topology.caches[{i}]")))?;
                self.check_fields(
                    cm,
                    CACHE_FIELDS,
                    Some(&format!("platform.topology.caches[{i}]")),
                )?;
                let level = match cm.get("level") {
                    Some(x) => self.uint(x, ctx, &f("level"))?,
                    None => return Err(self.err(ctx, Some(&f("level")), "missing required field")),
                };
                if level == 0 || level > 9 {
                    return Err(self.err(
                        ctx,
                        Some(&f("level")),
                        format!("must be 1 to 9, got {level}"),
                    ));
                }
                let kind_ = match cm.get("type") {
                    None => CacheKind::Unified,
                    Some(Value::String(x)) => CacheKind::parse(x).ok_or_else(|| {
                        self.err(
                            ctx,
                            Some(&f("type")),
                            format!("expected data, instruction or unified, got '{x}'"),
                        )
                    })?,
                    Some(other) => {
                        return Err(self.err(
                            ctx,
                            Some(&f("type")),
                            format!("expected data, instruction or unified, got {}", show(other)),
                        ))
                    }
                };
                let size = match cm.get("size") {
                    Some(x) => self.size(x, ctx, &f("size"))?,
                    None => return Err(self.err(ctx, Some(&f("size")), "missing required field")),
                };
                let line = cm
                    .get("line")
                    .map_or(Ok(64), |x| self.size(x, ctx, &f("line")))?;
                let ways = cm
                    .get("ways")
                    .map_or(Ok(1), |x| self.uint(x, ctx, &f("ways")))?
                    .min(u32::MAX as u64) as u32;
                let groups: Vec<Vec<u32>> = match (cm.get("shared_by"), cm.get("cpus")) {
                    (Some(_), Some(_)) => {
                        return Err(self.err(
                            ctx,
                            Some(&f("cpus")),
                            "give either 'shared_by' or 'cpus', not both",
                        ))
                    }
                    (Some(x), None) => {
                        let n = self.uint(x, ctx, &f("shared_by"))?;
                        if n == 0 || n > cpus as u64 {
                            return Err(self.err(
                                ctx,
                                Some(&f("shared_by")),
                                format!(
                                    "must be between 1 and the platform's {cpus} CPUs, got {n}"
                                ),
                            ));
                        }
                        topology::groups(cpus, n as u32)
                    }
                    (None, Some(Value::Array(gs))) => {
                        let mut out = Vec::with_capacity(gs.len());
                        for (k, g) in gs.iter().enumerate() {
                            let gf = format!("topology.caches[{i}].cpus[{k}]");
                            let group = match g {
                                Value::String(sl) => topology::parse_cpu_list(sl).map_err(|e| self.err(ctx, Some(&gf), e))?,
                                Value::Array(xs) => xs.iter().map(|x| self.uint(x, ctx, &gf).map(|c| c.min(u32::MAX as u64) as u32)).collect::<Result<Vec<u32>, _>>()?,
                                other => return Err(self.err(ctx, Some(&gf), format!("expected a list of CPUs or a CPU list like \"0-5\", got {}", show(other)))),
                            };
                            out.push(group);
                        }
                        out
                    }
                    (None, Some(other)) => {
                        return Err(self.err(
                            ctx,
                            Some(&f("cpus")),
                            format!("expected a list of CPU groups, got {}", kind(other)),
                        ))
                    }
                    (None, None) => topology::groups(cpus, 1),
                };
                let explicit = matches!(cm.get("cpus"), Some(Value::Array(_)));
                for (k, mut g) in groups.into_iter().enumerate() {
                    g.sort_unstable();
                    g.dedup();
                    origin.push(if explicit {
                        format!("caches[{i}].cpus[{k}]")
                    } else {
                        format!("caches[{i}]")
                    });
                    t.caches.push(Cache {
                        level: level as u8,
                        kind: kind_,
                        size,
                        line,
                        ways,
                        cpus: g,
                    });
                }
            }
        }
        if let Some(nv) = m.get("nodes") {
            t.preset = None;
            t.nodes = match nv {
                Value::Number(_) => {
                    let n = self.uint(nv, ctx, "topology.nodes")?;
                    if n == 0 {
                        return Err(self.err(
                            ctx,
                            Some("topology.nodes"),
                            "CPUs per node must be at least 1",
                        ));
                    }
                    topology::groups(cpus, n.min(u32::MAX as u64) as u32)
                }
                Value::Array(gs) => gs
                    .iter()
                    .enumerate()
                    .map(|(k, g)| match g {
                        Value::String(sl) => topology::parse_cpu_list(sl)
                            .map_err(|e| self.err(ctx, Some(&format!("topology.nodes[{k}]")), e)),
                        Value::Array(xs) => xs
                            .iter()
                            .map(|x| {
                                self.uint(x, ctx, &format!("topology.nodes[{k}]"))
                                    .map(|c| c.min(u32::MAX as u64) as u32)
                            })
                            .collect(),
                        other => Err(self.err(
                            ctx,
                            Some(&format!("topology.nodes[{k}]")),
                            format!("expected a list of CPUs, got {}", show(other)),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                other => {
                    return Err(self.err(
                        ctx,
                        Some("topology.nodes"),
                        format!(
                            "expected CPUs per node or a list of CPU lists, got {}",
                            show(other)
                        ),
                    ))
                }
            };
        }
        t.validate(cpus).map_err(|(cache, field, msg)| {
            let path = match cache.map(|j| origin.get(j)) {
                // `caches[i].cpus[k]` already names the field for a CPU problem.
                Some(Some(o)) if o.ends_with(']') && o.contains(".cpus[") && field == "cpus" => {
                    format!("topology.{o}")
                }
                Some(Some(o)) => format!("topology.{o}.{field}"),
                Some(None) => format!(
                    "topology (cache {} of the preset).{field}",
                    cache.unwrap_or(0)
                ),
                None => format!("topology.{field}"),
            };
            self.err(ctx, Some(&path), msg)
        })?;
        Ok(t)
    }
}
