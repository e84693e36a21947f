//! Task-set files (YAML or JSON; docs/taskset-format.md).
//!
//! Both formats are parsed into one generic tree and then validated by hand, field by
//! field, so that every error names the file, the task and the field. Unknown fields are
//! errors (with a "did you mean" hint): a typo must never silently fall back to a default.

use crate::program::{CriticalSection, Region};
use crate::task::*;
use crate::time::{fmt_duration, ms_f64_to_ns, parse_decimal_scaled, parse_duration_str, Time};
use crate::topology::{Cache, CacheKind, Topology};
use crate::tuf::Tuf;
use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;

/// A problem with user input. Displayed as `FILE: task 'NAME' (tasks[i]): field 'F': message`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    pub file: String,
    /// e.g. `task 't1' (tasks[1])`, `run`, `platform`.
    pub context: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: &str, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            context: None,
            field: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(c) = &self.context {
            write!(f, ": {c}")?;
        }
        if let Some(fl) = &self.field {
            write!(f, ": field '{fl}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    pub fn from_path(path: &str) -> Format {
        let p = path.to_ascii_lowercase();
        if p.ends_with(".json") {
            Format::Json
        } else {
            Format::Yaml
        }
    }
}

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

/// The text of an input file the user named: a regular file of at most `max` bytes, or a FIFO
/// (read up to `max`); anything else (a directory, a device such as /dev/zero, a socket) is
/// refused before it is read, so no input takes unbounded time or memory. `what` names the
/// kind of file in the message.
pub fn read_input_text(path: &Path, max: u64, what: &str) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path)?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    if !ft.is_file() && !ft.is_fifo() {
        let kind = if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else {
            "not a regular file"
        };
        return Err(std::io::Error::other(format!("is {kind}, not {what}")));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than {what}'s limit of {max} bytes",
            meta.len()
        )));
    }
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "more than {what}'s limit of {max} bytes"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Parse and validate task-set text; `source` names it in messages.
pub fn parse_taskset(text: &str, format: Format, source: &str) -> Result<TaskSet, InputError> {
    let root = read_document(text, format, source)?;
    Validator { file: source }.taskset(&root)
}

/// Read YAML or JSON text strictly ([`crate::strict`]): malformed text is reported at its
/// position; a duplicate key, NaN, infinity or negative zero by the field that holds it (a
/// task's by its name, as the validators do).
pub(crate) fn read_document(text: &str, format: Format, source: &str) -> Result<Value, InputError> {
    use crate::strict::{self, ReadError, Seg};
    // A byte-order mark (editors on Windows write one) starts the text, not a document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let what = match format {
        Format::Json => "JSON",
        Format::Yaml => "YAML",
    };
    let read = match format {
        Format::Json => strict::from_json(text),
        Format::Yaml => strict::from_yaml(text),
    };
    match read {
        Ok(v) => Ok(v),
        Err(ReadError::Malformed { line: Some(l), column: Some(c), message }) => {
            // JSON has no NaN or infinity literals; say so rather than "expected value".
            let at = text.lines().nth(l - 1).and_then(|t| t.get(c.saturating_sub(1)..)).unwrap_or("");
            let special = ["NaN", "Infinity", "-Infinity"].into_iter().find(|w| at.starts_with(w));
            let msg = match special {
                Some(w) => format!("{w} is not a value rtsched accepts (JSON has no {w}; write a number)"),
                None => format!("malformed {what}: {}", strip_pos(&message)),
            };
            Err(InputError::new(source, format!("line {l} column {c}: {msg}")))
        }
        Err(ReadError::Malformed { message, .. }) => Err(InputError::new(source, format!("malformed {what}: {message}"))),
        Err(ReadError::Inexact { line, column, written, read }) => Err(InputError::new(
            source,
            format!(
                "line {line} column {column}: the number {written} has more digits than a number is read with: it would be read as {read} without a word; \
                 write at most 15 significant digits, or quote a duration (with its unit: '{written}ms') to have it read exactly or refused as a quoted one is"
            ),
        )),
        Err(ReadError::Refused(r)) => {
            // Under tasks[i]: name the task as the validators do (from a lenient reading).
            let (ctx, rest) = match r.path.as_slice() {
                [Seg::Key(t), Seg::Index(i), rest @ ..] if t == "tasks" && !rest.is_empty() => {
                    let lenient: Option<Value> = match format {
                        Format::Json => serde_json::from_str(text).ok(),
                        Format::Yaml => serde_yaml_ng::from_str(text).ok(),
                    };
                    let name = lenient.as_ref().and_then(|v| v.get("tasks")?.get(*i)?.get("name")?.as_str().map(str::to_owned));
                    let ctx = match name {
                        Some(n) => format!("task '{n}' (tasks[{i}])"),
                        None => format!("tasks[{i}]"),
                    };
                    (Some(ctx), rest)
                }
                path => (None, path),
            };
            Err(InputError { file: source.into(), context: ctx, field: Some(strict::path_string(rest)), message: r.problem.message() })
        }
    }
}

fn strip_pos(msg: &str) -> String {
    // serde's messages end with " at line L column C"; we already print the position first.
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
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
const SECTION_FIELDS: &[&str] = &["resource", "start", "length", "region", "thread"];
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

pub(crate) struct Validator<'a> {
    file: &'a str,
}

/// What other input files (overhead profiles) validate with.
impl<'a> Validator<'a> {
    pub(crate) fn new(file: &'a str) -> Self {
        Validator { file }
    }
    pub(crate) fn error(
        &self,
        ctx: Option<&str>,
        field: Option<&str>,
        msg: impl Into<String>,
    ) -> InputError {
        self.err(ctx, field, msg)
    }
    pub(crate) fn object_of<'v>(
        &self,
        v: &'v Value,
        ctx: Option<&str>,
        field: Option<&str>,
    ) -> Result<&'v Map<String, Value>, InputError> {
        self.object(v, ctx, field)
    }
    pub(crate) fn fields(
        &self,
        m: &Map<String, Value>,
        known: &[&str],
        ctx: Option<&str>,
    ) -> Result<(), InputError> {
        self.check_fields(m, known, ctx)
    }
    pub(crate) fn duration_of(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<Time, InputError> {
        self.duration(v, ctx, field)
    }
    pub(crate) fn size_of(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<u64, InputError> {
        self.size(v, ctx, field)
    }
    pub(crate) fn uint_of(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<u64, InputError> {
        self.uint(v, ctx, field)
    }
}

impl<'a> Validator<'a> {
    fn err(&self, ctx: Option<&str>, field: Option<&str>, msg: impl Into<String>) -> InputError {
        InputError {
            file: self.file.into(),
            context: ctx.map(Into::into),
            field: field.map(Into::into),
            message: msg.into(),
        }
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        ctx: Option<&str>,
        field: Option<&str>,
    ) -> Result<&'v Map<String, Value>, InputError> {
        v.as_object()
            .ok_or_else(|| self.err(ctx, field, format!("expected a mapping, got {}", kind(v))))
    }

    fn check_fields(
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

    fn duration(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<Time, InputError> {
        let r = match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    u.checked_mul(crate::time::NS_PER_MS)
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

    fn positive_duration(
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

    fn uint(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<u64, InputError> {
        v.as_u64().ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!("expected a non-negative integer, got {}", show(v)),
            )
        })
    }

    fn float(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<f64, InputError> {
        v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!("expected a number, got {}", show(v)),
            )
        })
    }

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
            None => crate::overheads::Statistic::Median,
            Some(x) => crate::overheads::Statistic::parse(x.as_str().unwrap_or(""))
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
                let text = crate::overheads::read_profile_text(&path).map_err(|e| {
                    self.err(
                        pctx,
                        Some(pfield),
                        format!("cannot read overhead profile {}: {e}", path.display()),
                    )
                })?;
                let prof = crate::overheads::parse_profile(&text, &path.display().to_string())
                    .map_err(|e| {
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
                    crate::time::fmt_duration(o.rt_runtime),
                    crate::time::fmt_duration(o.rt_period)
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

    /// A per-line cost in picoseconds: a number of ns (may be fractional) or "1.5ns"/"2000ps".
    fn picos(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<u64, InputError> {
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
            threads += task
                .regions
                .iter()
                .map(|r| r.threads.len() as u64)
                .sum::<u64>()
                .max(1);
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
        let total: Time = regions.iter().flat_map(|r| r.threads.iter()).sum();
        let wcet = match (m.get("wcet"), regions.is_empty()) {
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
            Some(v) => self.sections(v, ctx, wcet, &regions, resources, declared)?,
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
                if !regions.is_empty() {
                    return Err(self.err(
                        ctx,
                        Some("execution_times"),
                        "applies to sequential tasks only (this task has regions)",
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

    /// `sections: [{resource: bus, start: 1ms, length: 0.5ms, region: 0, thread: 0}]`.
    fn sections(
        &self,
        v: &Value,
        ctx: Option<&str>,
        wcet: Time,
        regions: &[Region],
        resources: &mut Vec<String>,
        declared: Option<usize>,
    ) -> Result<Vec<CriticalSection>, InputError> {
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
            let thread_wcets: &[Time] = if regions.is_empty() {
                std::slice::from_ref(&wcet)
            } else {
                &regions[region as usize].threads
            };
            let thread = match o.get("thread") {
                None => 0,
                Some(x) => self.uint(x, cx, "thread")?,
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
}

/// Nested sections make a thread request one resource while holding others. If those "held
/// while requesting" edges form a cycle, jobs can deadlock: the description of one such cycle.
/// Not an error: the job ledger detects a deadlock when it happens and the policy resolves it by
/// an abort (DASA, the GUA family); a policy that cannot is stopped with a clear error, and the
/// CLI warns beforehand (the classic remedy: acquire resources in one global order).
pub fn lock_order_cycle(tasks: &[Task], resources: &[String]) -> Option<String> {
    let n = resources.len();
    if n < 2 {
        return None;
    }
    // edges[a] = (b, task) : some thread of `task` requests b while holding a.
    let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (ti, t) in tasks.iter().enumerate() {
        let mut open: Vec<&CriticalSection> = Vec::new();
        let mut at = (u32::MAX, u32::MAX);
        for s in &t.sections {
            if (s.region, s.thread) != at {
                open.clear();
                at = (s.region, s.thread);
            }
            while open.last().is_some_and(|o| o.end() <= s.start) {
                open.pop();
            }
            for o in &open {
                edges[o.resource as usize].push((s.resource as usize, ti));
            }
            open.push(s);
        }
    }
    // Depth-first search for a cycle (colour 1 = on the path).
    fn dfs(
        u: usize,
        edges: &[Vec<(usize, usize)>],
        colour: &mut [u8],
        path: &mut Vec<(usize, usize)>,
    ) -> bool {
        colour[u] = 1;
        for &(v, t) in &edges[u] {
            path.push((v, t));
            if colour[v] == 1 || (colour[v] == 0 && dfs(v, edges, colour, path)) {
                return true;
            }
            path.pop();
        }
        colour[u] = 2;
        false
    }
    let mut colour = vec![0u8; n];
    for r in 0..n {
        let mut path = vec![(r, usize::MAX)];
        if colour[r] == 0 && dfs(r, &edges, &mut colour, &mut path) {
            let last = path.last().expect("a cycle has edges").0;
            let from = path.iter().position(|p| p.0 == last).unwrap_or(0);
            let steps: Vec<String> = path[from..]
                .windows(2)
                .map(|w| {
                    format!(
                        "task '{}' requests '{}' while holding '{}'",
                        tasks[w[1].1].name, resources[w[1].0], resources[w[0].0]
                    )
                })
                .collect();
            return Some(format!(
                "nested critical sections can deadlock: {}",
                steps.join(", and ")
            ));
        }
    }
    None
}

impl Validator<'_> {
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
                        crate::topology::groups(cpus, n as u32)
                    }
                    (None, Some(Value::Array(gs))) => {
                        let mut out = Vec::with_capacity(gs.len());
                        for (k, g) in gs.iter().enumerate() {
                            let gf = format!("topology.caches[{i}].cpus[{k}]");
                            let group = match g {
                                Value::String(sl) => crate::topology::parse_cpu_list(sl).map_err(|e| self.err(ctx, Some(&gf), e))?,
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
                    (None, None) => crate::topology::groups(cpus, 1),
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
                    crate::topology::groups(cpus, n.min(u32::MAX as u64) as u32)
                }
                Value::Array(gs) => gs
                    .iter()
                    .enumerate()
                    .map(|(k, g)| match g {
                        Value::String(sl) => crate::topology::parse_cpu_list(sl)
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

    fn size(&self, v: &Value, ctx: Option<&str>, field: &str) -> Result<u64, InputError> {
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

/// A size in bytes: `"4096"`, `"512B"`, `"64KiB"`, `"2MiB"`, `"1.5GiB"` (binary units only,
/// since "kB" is read as 1000 by some and 1024 by others).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{s}' (use B, KiB, MiB, GiB)"
            ))
        }
    };
    parse_decimal_scaled(num.trim(), scale).map_err(|e| e.replace("nanoseconds", "bytes"))
}

/// The task set as YAML that `parse_taskset` reads back to the same value (except `source`).
/// Durations are strings with a unit (`fmt_duration`), so they are exact; optional fields are
/// written only when they differ from their defaults.
pub fn to_yaml(ts: &TaskSet) -> String {
    use std::fmt::Write;
    // A JSON string is a YAML double-quoted string, but JSON leaves DEL, the C1 controls,
    // U+FEFF, U+FFFE / U+FFFF unescaped, which YAML may not print, and NEL, U+2028 and U+2029,
    // which a YAML reader folds as line breaks: those go as \u escapes.
    let q = |s: &str| {
        let json = serde_json::to_string(s).expect("a string serialises");
        let printable = |c: char| {
            !matches!(
                c,
                '\u{7f}'
                    ..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
        };
        if json.chars().all(printable) {
            return json;
        }
        json.chars()
            .map(|c| {
                if printable(c) {
                    c.to_string()
                } else {
                    format!("\\u{:04X}", c as u32)
                }
            })
            .collect::<String>()
    };
    let d = |ns: Time| format!("\"{}\"", fmt_duration(ns));
    let mut out = String::new();
    let r = &ts.run;
    match &ts.platform.topology {
        None => {
            let _ = writeln!(out, "platform: {{cpus: {}}}", ts.platform.cpus);
        }
        Some(t) if t.preset.as_deref() == Some("opteron6164x4") => {
            let _ = writeln!(
                out,
                "platform: {{cpus: {}, topology: opteron6164x4}}",
                ts.platform.cpus
            );
        }
        Some(t) => {
            // Written out (a `host` topology too: the file must mean the same on another machine).
            let list = |g: &[u32]| {
                format!(
                    "[{}]",
                    g.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                )
            };
            let mut levels: Vec<(&Cache, Vec<&[u32]>)> = Vec::new();
            for c in &t.caches {
                match levels.iter_mut().find(|(k, _)| {
                    (k.level, k.kind, k.size, k.line, k.ways)
                        == (c.level, c.kind, c.size, c.line, c.ways)
                }) {
                    Some((_, gs)) => gs.push(&c.cpus),
                    None => levels.push((c, vec![&c.cpus])),
                }
            }
            let caches: Vec<String> = levels
                .iter()
                .map(|(c, gs)| {
                    format!(
                        "{{level: {}, type: {}, size: {}, line: {}, ways: {}, cpus: [{}]}}",
                        c.level,
                        c.kind.as_str(),
                        c.size,
                        c.line,
                        c.ways,
                        gs.iter().map(|g| list(g)).collect::<Vec<_>>().join(", ")
                    )
                })
                .collect();
            let nodes: Vec<String> = t.nodes.iter().map(|g| list(g)).collect();
            let _ = writeln!(
                out,
                "platform:\n  cpus: {}\n  topology:\n    caches: [{}]\n    nodes: [{}]",
                ts.platform.cpus,
                caches.join(", "),
                nodes.join(", ")
            );
        }
    }
    let exec = match &r.execution {
        ExecModel::Wcet => "wcet".to_string(),
        ExecModel::Uniform { min, max } => {
            format!("{{model: uniform, min: {min:?}, max: {max:?}}}")
        }
        ExecModel::Overrun { ratio, probability } => {
            format!("{{model: overrun, ratio: {ratio:?}, probability: {probability:?}}}")
        }
    };
    let on_miss = match r.on_miss {
        OnMiss::Continue => "continue",
        OnMiss::Abort => "abort",
    };
    let o = &r.overheads;
    let mut overheads = format!(
        "{{decision: {}, context_switch: {}, migration: {}, release: {}, tick: {}, tick_period: {}, abort_handler: {}",
        d(o.decision),
        d(o.context_switch),
        d(o.migration),
        d(o.release),
        d(o.tick),
        d(o.tick_period),
        d(o.abort_handler)
    );
    if o.statistic != crate::overheads::Statistic::Median {
        overheads.push_str(&format!(", statistic: {}", o.statistic.name()));
    }
    if o.rt_runtime > 0 {
        overheads.push_str(&format!(
            ", rt_runtime: {}, rt_period: {}",
            d(o.rt_runtime),
            d(o.rt_period)
        ));
    }
    overheads.push('}');
    let _ = write!(out, "run: {{duration: {}, seed: {}, on_miss: {on_miss}, execution: {exec}, overheads: {overheads}", d(r.duration), r.seed);
    let c = &r.cache;
    if c.enabled || *c != CacheParams::default() {
        let ps = |x: u64| format!("\"{x}ps\"");
        let _ = write!(
            out,
            ", cache: {{enabled: {}, l2: {}, l3: {}, remote_cache: {}, remote_node: {}, memory: {}, remote_memory: {}, passes: {}}}",
            c.enabled,
            ps(c.l2_ps),
            ps(c.l3_ps),
            ps(c.remote_cache_ps),
            ps(c.remote_node_ps),
            ps(c.memory_ps),
            ps(c.remote_memory_ps),
            c.passes
        );
    }
    out.push_str("}\n");
    if !ts.resources.is_empty() {
        let _ = writeln!(
            out,
            "resources: [{}]",
            ts.resources
                .iter()
                .map(|r| q(r))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out.push_str("tasks:\n");
    for t in &ts.tasks {
        if let Some(f) = t.fair_params() {
            let _ = write!(
                out,
                "  - {{name: {}, class: fair, nice: {}",
                q(&t.name),
                f.nice
            );
            match f.behaviour {
                Behaviour::Hog => out.push_str(", behaviour: hog"),
                Behaviour::Sleeper { run, sleep } => {
                    let _ = write!(
                        out,
                        ", behaviour: sleeper, run: {}, sleep: {}",
                        d(run),
                        d(sleep)
                    );
                }
                Behaviour::Bursty { run, sleep } => {
                    let _ = write!(
                        out,
                        ", behaviour: bursty, run: [{}, {}], sleep: [{}, {}]",
                        d(run.0),
                        d(run.1),
                        d(sleep.0),
                        d(sleep.1)
                    );
                }
            }
            let extra = [
                ("offset", (t.offset != 0).then(|| d(t.offset))),
                ("cpu", t.cpu.map(|c| c.to_string())),
                ("wss", t.wss.map(|w| w.to_string())),
                ("group", t.group.map(|g| g.to_string())),
            ];
            for (k, v) in extra {
                if let Some(v) = v {
                    let _ = write!(out, ", {k}: {v}");
                }
            }
            out.push_str("}\n");
            continue;
        }
        let _ = write!(
            out,
            "  - {{name: {}, period: {}, wcet: {}",
            q(&t.name),
            d(t.period),
            d(t.wcet)
        );
        if t.deadline != t.period {
            let _ = write!(out, ", deadline: {}", d(t.deadline));
        }
        if let Some(x) = t.max_interarrival {
            let _ = write!(out, ", max_interarrival: {}", d(x));
        }
        if t.offset != 0 {
            let _ = write!(out, ", offset: {}", d(t.offset));
        }
        if let Some(p) = t.priority {
            let _ = write!(out, ", priority: {p}");
        }
        if let Some(c) = t.cpu {
            let _ = write!(out, ", cpu: {c}");
        }
        if let Some(w) = t.wss {
            let _ = write!(out, ", wss: {w}");
        }
        if let Some(g) = t.group {
            let _ = write!(out, ", group: {g}");
        }
        if !t.regions.is_empty() {
            let rs: Vec<String> = t
                .regions
                .iter()
                .map(|r| {
                    format!(
                        "[{}]",
                        r.threads
                            .iter()
                            .map(|&w| d(w))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect();
            let _ = write!(out, ", regions: [{}]", rs.join(", "));
        }
        if !t.sections.is_empty() {
            let ss: Vec<String> = t
                .sections
                .iter()
                .map(|s| {
                    format!(
                        "{{resource: {}, region: {}, thread: {}, start: {}, length: {}}}",
                        q(&ts.resources[s.resource as usize]),
                        s.region,
                        s.thread,
                        d(s.start),
                        d(s.length)
                    )
                })
                .collect();
            let _ = write!(out, ", sections: [{}]", ss.join(", "));
        }
        if let Some(f) = &t.tuf {
            let num = |u: f64| format!("{u:?}");
            let _ = match f {
                Tuf::Piecewise { points } => write!(
                    out,
                    ", tuf: {{shape: piecewise, points: [{}]}}",
                    points
                        .iter()
                        .map(|&(t, u)| format!("[{}, {}]", d(t), num(u)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Tuf::Step {
                    utility,
                    termination,
                }
                | Tuf::Linear {
                    utility,
                    termination,
                }
                | Tuf::Quadratic {
                    utility,
                    termination,
                } => {
                    write!(
                        out,
                        ", tuf: {{shape: {}, utility: {}, termination: {}}}",
                        f.shape(),
                        num(*utility),
                        d(*termination)
                    )
                }
            };
        }
        if !t.execution_times.is_empty() {
            let _ = write!(
                out,
                ", execution_times: [{}]",
                t.execution_times
                    .iter()
                    .map(|&x| d(x))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        out.push_str("}\n");
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        Value::Array(_) | Value::Object(_) => kind(v).to_string(),
        other => other.to_string(),
    }
}

/// The known name closest to `word` by edit distance, if it is close enough to be a typo.
pub fn closest<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = edit_distance(word, k);
        if d <= 2.max(k.len() / 3) && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != *cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Action;

    fn yaml(s: &str) -> Result<TaskSet, InputError> {
        parse_taskset(s, Format::Yaml, "ts.yaml")
    }

    #[test]
    fn duplicate_keys_nan_infinity_and_negative_zero_are_named() {
        let msg = |t: &str| yaml(t).unwrap_err().to_string();
        let head = "platform: {cpus: 2}\ntasks:\n";
        assert_eq!(
            msg(&format!("{head}  - {{name: cam, period: 10, wcet: 1, period: 5}}\n")),
            "ts.yaml: task 'cam' (tasks[0]): field 'period': given twice in the same mapping (the second would silently replace the first)"
        );
        assert_eq!(
            msg(&format!("{head}  - {{name: a, period: 10, wcet: 1}}\n  - {{name: b, period: 10, wcet: .nan}}\n")),
            "ts.yaml: task 'b' (tasks[1]): field 'wcet': NaN (not a number) is not a value rtsched accepts"
        );
        assert_eq!(
            msg(&format!("{head}  - {{name: a, period: .inf, wcet: 1}}\n")),
            "ts.yaml: task 'a' (tasks[0]): field 'period': infinity is not a value rtsched accepts"
        );
        assert_eq!(
            msg(&format!("{head}  - {{name: a, period: 10, wcet: 1, offset: -0.0}}\n")),
            "ts.yaml: task 'a' (tasks[0]): field 'offset': negative zero (-0.0): write 0 if zero is meant"
        );
        assert_eq!(
            msg(&format!("{head}  - {{name: a, period: 10, regions: [1, [2, -.inf]]}}\n")),
            "ts.yaml: task 'a' (tasks[0]): field 'regions[1][1]': negative infinity is not a value rtsched accepts"
        );
        assert_eq!(msg("platform: {cpus: 2}\nplatform: {cpus: 4}\ntasks: []\n"), "ts.yaml: field 'platform': given twice in the same mapping (the second would silently replace the first)");
        let json = |t: &str| {
            parse_taskset(t, Format::Json, "ts.json")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            json(r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": NaN, "wcet": 1}]}"#),
            "ts.json: line 1 column 61: NaN is not a value rtsched accepts (JSON has no NaN; write a number)"
        );
        assert_eq!(
            json(r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "wcet": 1, "name": "b"}]}"#),
            "ts.json: task 'b' (tasks[0]): field 'name': given twice in the same mapping (the second would silently replace the first)"
        );
    }

    #[test]
    fn issue_example_parses() {
        let ts = yaml(
            "platform: {cpus: 4}\nrun: {duration: 1000, seed: 1, on_miss: continue}\ntasks:\n  - {name: t0, period: 10, wcet: 2}\n  - {name: t1, period: \"25ms\", wcet: 5, deadline: 20, offset: 1, cpu: 1, priority: 3}\n",
        )
        .unwrap();
        assert_eq!(ts.platform.cpus, 4);
        assert_eq!(ts.run.duration, 1_000_000_000);
        assert_eq!(ts.tasks[0].deadline, 10_000_000);
        assert_eq!(ts.tasks[1].period, 25_000_000);
        assert_eq!(ts.tasks[1].deadline, 20_000_000);
        assert_eq!(ts.tasks[1].offset, 1_000_000);
        assert_eq!(ts.tasks[1].cpu, Some(1));
        assert_eq!(ts.tasks[1].priority, Some(3));
    }

    #[test]
    fn json_equals_yaml() {
        let y = yaml("platform: {cpus: 2}\ntasks: [{name: a, period: 2.5, wcet: 0.1}]").unwrap();
        let j = parse_taskset(
            r#"{"platform": {"cpus": 2}, "tasks": [{"name": "a", "period": 2.5, "wcet": 0.1}]}"#,
            Format::Json,
            "ts.yaml",
        )
        .unwrap();
        assert_eq!(y, j);
        assert_eq!(y.tasks[0].wcet, 100_000);
    }

    fn expect_err(s: &str, needles: &[&str]) {
        let e = yaml(s).unwrap_err().to_string();
        for n in needles {
            assert!(e.contains(n), "error {e:?} lacks {n:?}");
        }
        assert!(e.starts_with("ts.yaml"), "{e}");
    }

    #[test]
    fn threads_are_limited_per_task_and_per_set() {
        let p = "platform: {cpus: 2}\ntasks:\n";
        // 49 regions of 4,096 threads: 200,704 threads from 1.3 KB of text.
        let wide = vec!["{threads: 4096, wcet: 1us}"; 49].join(", ");
        expect_err(
            &format!("{p}  - {{name: a, period: 10, regions: [{wide}]}}\n"),
            &[
                "task 'a'",
                "'regions[48]'",
                "200704 threads",
                "limit of 200000 threads in a task",
            ],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, regions: [{{threads: 200001, wcet: 1us}}]}}\n"),
            &["'regions[0]'", "200001 threads"],
        );
        // At the limits: accepted.
        let at = yaml(&format!("{p}  - {{name: a, period: 10, regions: [{{threads: 199998, wcet: 1ns}}, [1ns, 1ns]]}}\n")).unwrap();
        assert_eq!(
            at.tasks[0]
                .regions
                .iter()
                .map(|r| r.threads.len())
                .sum::<usize>(),
            200_000
        );
        // Ten tasks of 200,000 threads are the set's limit; an eleventh (even sequential) is over.
        let tasks: String = (0..10)
            .map(|i| {
                format!(
                    "  - {{name: t{i}, period: 10, regions: [{{threads: 200000, wcet: 1ns}}]}}\n"
                )
            })
            .collect();
        assert!(yaml(&format!("{p}{tasks}")).is_ok());
        expect_err(
            &format!("{p}{tasks}  - {{name: s, period: 10, wcet: 1}}\n"),
            &[
                "task 's' (tasks[10])",
                "2000001 threads",
                "limit of 2000000 threads in a set",
            ],
        );
    }

    #[test]
    fn bad_inputs_name_file_task_field() {
        let p = "platform: {cpus: 2}\ntasks:\n";
        expect_err(
            &format!("{p}  - {{name: t0, perod: 10, wcet: 2}}"),
            &["task 't0'", "'perod'", "did you mean 'period'"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, wcet: 2}}"),
            &["task 't0'", "'period'", "missing"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 0, wcet: 2}}"),
            &["'period'", "must be > 0"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: -3, wcet: 2}}"),
            &["'period'", "negative"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 0}}"),
            &["'wcet'", "> 0"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, deadline: 0}}"),
            &["'deadline'", "> 0"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, cpu: 2}}"),
            &["'cpu'", "out of range"],
        );
        expect_err(
            &format!(
                "{p}  - {{name: t0, period: 10, wcet: 1}}\n  - {{name: t0, period: 5, wcet: 1}}"
            ),
            &["tasks[1]", "duplicate", "tasks[0]"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: [1], wcet: 1}}"),
            &["'period'", "expected a duration"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: \"10 parsecs\", wcet: 1}}"),
            &["unknown unit"],
        );
        expect_err(
            "platform: {cpus: 2}\ntasks: [{name: t0, period: 10, wcet: 1}",
            &["line", "column", "malformed YAML"],
        );
        expect_err(
            "platform: {cpus: 0}\ntasks: [{name: t0, period: 10, wcet: 1}]",
            &["platform", "'cpus'"],
        );
        expect_err(
            "tasks: [{name: t0, period: 10, wcet: 1}]",
            &["'platform'", "missing"],
        );
        expect_err("platform: {cpus: 1}\nrun: {on_miss: explode}\ntasks: [{name: t0, period: 10, wcet: 1}]", &["run", "'on_miss'"]);
        expect_err("platform: {cpus: 1}\ntasks: []", &["empty"]);
    }

    #[test]
    fn wss_and_group() {
        let ts = yaml("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1, wss: \"64KiB\", group: 3}\n  - {name: b, period: 10, wcet: 1, wss: 4096}\n  - {name: c, period: 10, wcet: 1, wss: \"1.5MiB\"}").unwrap();
        assert_eq!(ts.tasks[0].wss, Some(65_536));
        assert_eq!(ts.tasks[0].group, Some(3));
        assert_eq!(ts.tasks[1].wss, Some(4096));
        assert_eq!(ts.tasks[1].group, None);
        assert_eq!(ts.tasks[2].wss, Some(1_572_864));
        let p = "platform: {cpus: 2}\ntasks:\n";
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: \"64kB\"}}"),
            &["task 't0'", "'wss'", "unknown size unit 'kB'"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: -5}}"),
            &["task 't0'", "'wss'", "whole number of bytes"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, wss: \"0.5B\"}}"),
            &["'wss'", "whole number of bytes"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, group: -1}}"),
            &["task 't0'", "'group'", "non-negative integer"],
        );
        expect_err(
            &format!("{p}  - {{name: t0, period: 10, wcet: 1, group: x}}"),
            &["'group'"],
        );
    }

    #[test]
    fn yaml_writer_round_trips() {
        let text = "platform: {cpus: 3}\nrun: {duration: 2500, seed: 9, on_miss: abort, execution: {model: overrun, ratio: 1.25, probability: 0.1}, overheads: {context_switch: \"3us\"}}\ntasks:\n  - {name: \"odd: name\", period: 10.000001, wcet: 0.5, deadline: 7, offset: 2, priority: 4, cpu: 2, wss: \"2MiB\", group: 1}\n  - {name: b, min_interarrival: 3, max_interarrival: 9, wcet: \"17ns\"}\n";
        let ts = yaml(text).unwrap();
        let out = to_yaml(&ts);
        let back = yaml(&out).unwrap();
        assert_eq!(back, ts, "{out}");
        assert!(out.contains("cpu: 2"), "{out}");
        assert!(out.contains("period: \"10000001ns\""), "{out}");
        let mut u = ts.clone();
        u.run.execution = ExecModel::Uniform {
            min: 0.1 + 0.2,
            max: 1.0,
        };
        assert_eq!(yaml(&to_yaml(&u)).unwrap(), u);
    }

    #[test]
    fn regions_and_sections_parse_and_round_trip() {
        let text = "platform: {cpus: 4}\ntasks:\n  - name: fft\n    period: 40\n    regions: [2, [3, 1.5, \"500us\"], {threads: 3, wcet: 1}, 1]\n    sections:\n      - {resource: log, region: 1, thread: 2, start: 0.1, length: 0.2}\n      - {resource: bus, start: 0.5, length: 1}\n      - {resource: log, start: 0.5, length: 0.25}\n  - {name: b, period: 10, wcet: 2, sections: [{resource: bus, start: 0, length: 2}]}\n";
        let ts = yaml(text).unwrap();
        let t = &ts.tasks[0];
        assert_eq!(t.wcet, 2_000_000 + 5_000_000 + 3_000_000 + 1_000_000);
        assert_eq!(t.regions.len(), 4);
        assert_eq!(t.regions[2].threads, vec![1_000_000; 3]);
        assert!(t.is_parallel() && ts.has_structure());
        assert_eq!(ts.resources, vec!["log".to_string(), "bus".to_string()]);
        // Sorted by (region, thread, start, longest first): bus encloses log at 0.5 ms.
        assert_eq!(
            (
                t.sections[0].resource,
                t.sections[1].resource,
                t.sections[2].region
            ),
            (1, 0, 1)
        );
        let p = t.program();
        let cps: Vec<_> = p.regions[0][0]
            .checkpoints
            .iter()
            .map(|c| (c.at / 1000, c.action))
            .collect();
        assert_eq!(
            cps,
            vec![
                (500, Action::Acquire(1)),
                (500, Action::Acquire(0)),
                (750, Action::Release(0)),
                (1500, Action::Release(1))
            ]
        );
        assert_eq!((p.threads(), p.width()), (8, 3));
        let back = yaml(&to_yaml(&ts)).unwrap();
        assert_eq!(back.tasks, ts.tasks);
        assert_eq!(back.resources, ts.resources);
        // The scaled boundaries of a thread that ran 60% of its WCET.
        assert_eq!(
            crate::program::scale(1_500_000, 2_000_000, 1_200_000),
            900_000
        );
    }

    #[test]
    fn bad_structure_is_named() {
        let p = "platform: {cpus: 2}\ntasks:\n";
        expect_err(
            &format!("{p}  - {{name: a, period: 10, wcet: 3, regions: [1, [1, 2]]}}\n"),
            &["task 'a'", "'wcet'", "sum to 4ms"],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, regions: [1, []]}}\n"),
            &["'regions[1]'", "at least one thread"],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, regions: [1, {{threads: 0, wcet: 1}}]}}\n"),
            &["regions[1]", "'threads'"],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, regions: [1, [1, -2]]}}\n"),
            &["'regions[1][1]'"],
        );
        expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 1, length: 2}}]}}\n"), &["sections[0]", "'length'", "after the thread's WCET 2ms"]);
        expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 0, length: 1, thread: 1}}]}}\n"), &["'thread'", "out of range"]);
        expect_err(&format!("{p}  - {{name: a, period: 10, wcet: 2, sections: [{{resource: r, start: 0, lenght: 1}}]}}\n"), &["did you mean 'length'"]);
        expect_err(
            "platform: {cpus: 2}\nresources: [bus]\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: bsu, start: 0, length: 1}]}\n",
            &["'bsu' is not in the top-level 'resources'", "did you mean 'bus'"],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: r, start: 0, length: 2}}, {{resource: s, start: 1, length: 2}}]}}\n"),
            &["sections[1]", "overlaps sections[0]"],
        );
        expect_err(
            &format!("{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: r, start: 0, length: 3}}, {{resource: r, start: 1, length: 1}}]}}\n"),
            &["'resource'", "already holding it"],
        );
        // Nested sections in opposite orders load (the ledger detects the deadlock when it
        // happens), and the cycle is described for the CLI's warning.
        let ts = yaml(&format!(
            "{p}  - {{name: a, period: 10, wcet: 5, sections: [{{resource: x, start: 0, length: 3}}, {{resource: y, start: 1, length: 1}}]}}\n  - {{name: b, period: 10, wcet: 5, sections: [{{resource: y, start: 0, length: 3}}, {{resource: x, start: 1, length: 1}}]}}\n"
        ))
        .unwrap();
        let c = ts.lock_order_cycle().expect("a cycle");
        for n in [
            "can deadlock",
            "task 'a' requests 'y' while holding 'x'",
            "task 'b' requests 'x' while holding 'y'",
        ] {
            assert!(c.contains(n), "{c}");
        }
    }

    #[test]
    fn topologies_parse_validate_and_round_trip() {
        let t = |platform: &str| {
            yaml(&format!(
                "platform: {platform}\ntasks: [{{name: a, period: 10, wcet: 1}}]\n"
            ))
        };
        let opteron = t("{cpus: 48, topology: opteron6164x4}").unwrap();
        let topo = opteron.platform.topology.as_ref().unwrap();
        assert_eq!(
            (topo.caches.len(), topo.nodes.len(), topo.shared_level(0, 5)),
            (48 * 3 + 8, 4, Some(3))
        );
        assert_eq!(
            yaml(&to_yaml(&opteron)).unwrap().platform,
            opteron.platform,
            "a preset round-trips by name"
        );
        let written = t("{cpus: 4, topology: {caches: [{level: 1, type: data, size: 32KiB, ways: 8}, {level: 2, size: 1MiB, line: 64, ways: 16, shared_by: 2}, {level: 3, size: 8MiB, ways: 16, cpus: [\"0-3\"]}], nodes: [[0, 1], [2, 3]]}}").unwrap();
        let w = written.platform.topology.as_ref().unwrap();
        assert_eq!(w.caches.len(), 4 + 2 + 1);
        assert_eq!(
            (
                w.shared_level(0, 1),
                w.shared_level(1, 2),
                w.shared_level(2, 2)
            ),
            (Some(2), Some(3), Some(1))
        );
        assert_eq!((w.llc(3).unwrap().size, w.node_of(2)), (8 << 20, 1));
        assert_eq!(
            yaml(&to_yaml(&written)).unwrap().platform,
            written.platform,
            "written out, it round-trips"
        );
        let host = t("{cpus: 1, topology: host}").unwrap();
        let h = yaml(&to_yaml(&host)).unwrap().platform;
        assert_eq!(
            (
                h.topology.as_ref().unwrap().preset.clone(),
                &h.topology.as_ref().unwrap().caches
            ),
            (None, &host.platform.topology.as_ref().unwrap().caches),
            "host is written out"
        );
        let bad = |platform: &str, needles: &[&str]| {
            let e = t(platform).unwrap_err().to_string();
            for n in needles {
                assert!(e.contains(n), "{e:?} lacks {n:?}");
            }
        };
        bad(
            "{cpus: 4, topology: {caches: [{level: 2, size: 1MiB, cpus: [[0, 1], [2, 5]]}]}}",
            &[
                "platform",
                "'topology.caches[0].cpus[1]'",
                "CPU 5 does not exist",
            ],
        );
        bad(
            "{cpus: 2, topology: {caches: [{level: 1, size: 32, line: 64}]}}",
            &["'topology.caches[0].size'", "smaller than one line"],
        );
        bad("{cpus: 2, topology: {caches: [{level: 1, size: 4KiB}, {level: 1, size: 4KiB, shared_by: 2}]}}", &["'topology.caches[1].cpus'", "already has a level-1"]);
        bad(
            "{cpus: 2, topology: {caches: [{level: 1, size: 4KiB, type: victim}]}}",
            &["'topology.caches[0].type'", "victim"],
        );
        bad(
            "{cpus: 2, topology: {caches: [{size: 4KiB}]}}",
            &["'topology.caches[0].level'", "missing"],
        );
        bad(
            "{cpus: 2, topology: {caches: [{level: 1, size: 4KiB, shared_by: 3}]}}",
            &["'topology.caches[0].shared_by'"],
        );
        bad(
            "{cpus: 2, topology: {nodes: [[0], [0, 1]]}}",
            &["'topology.nodes[1]'", "two nodes"],
        );
        bad(
            "{cpus: 64, topology: opteron6164x4}",
            &["'topology'", "48 CPUs"],
        );
        bad(
            "{cpus: 2, topology: optron}",
            &["unknown topology preset 'optron'"],
        );
        bad(
            "{cpus: 2, topology: {cache: []}}",
            &["did you mean 'caches'"],
        );
    }

    #[test]
    fn tufs_parse_validate_and_round_trip() {
        let p = "platform: {cpus: 1}\ntasks:\n";
        let ts = yaml(&format!(
            "{p}  - {{name: s, period: 10, wcet: 1, tuf: 4}}\n  - {{name: l, period: 10, wcet: 1, tuf: {{shape: linear, utility: 8, termination: 20}}}}\n  - {{name: q, period: 10, wcet: 1, deadline: 5, tuf: {{shape: quadratic, utility: 2}}}}\n  - {{name: w, period: 10, wcet: 1, tuf: {{shape: piecewise, points: [[0, 3], [4, 3], [8ms, 1]]}}}}\n  - {{name: d, period: 10, wcet: 1}}\n"
        ))
        .unwrap();
        let ms = crate::time::NS_PER_MS;
        assert_eq!(
            ts.tasks[0].tuf,
            Some(Tuf::Step {
                utility: 4.0,
                termination: 10 * ms
            })
        );
        assert_eq!(
            ts.tasks[1].tuf,
            Some(Tuf::Linear {
                utility: 8.0,
                termination: 20 * ms
            })
        );
        assert_eq!(
            ts.tasks[2].tuf,
            Some(Tuf::Quadratic {
                utility: 2.0,
                termination: 5 * ms
            }),
            "termination defaults to the deadline"
        );
        assert_eq!(
            ts.tasks[3].tuf,
            Some(Tuf::Piecewise {
                points: vec![(0, 3.0), (4 * ms, 3.0), (8 * ms, 1.0)]
            })
        );
        assert_eq!(
            (
                ts.tasks[4].tuf.clone(),
                ts.tasks[4].max_utility(),
                ts.tasks[4].utility_at(10 * ms),
                ts.tasks[4].utility_at(10 * ms + 1)
            ),
            (None, 1.0, 1.0, 0.0)
        );
        assert_eq!(yaml(&to_yaml(&ts)).unwrap().tasks, ts.tasks, "round trip");
        let bad = |tuf: &str, needles: &[&str]| {
            expect_err(
                &format!("{p}  - {{name: t0, period: 10, wcet: 1, tuf: {tuf}}}"),
                &[&["task 't0'"][..], needles].concat(),
            )
        };
        bad("-1", &["'tuf'", "utility must be >= 0"]);
        bad("{shape: linear, utility: -2}", &["'tuf.utility'", ">= 0"]);
        bad(
            "{shape: linear, termination: -5}",
            &["'tuf.termination'", "after it"],
        );
        bad(
            "{shape: linear, termination: 0}",
            &["'tuf.termination'", "after it"],
        );
        bad(
            "{shape: piecewise, points: [[0, 1], [5, 2], [3, 0]]}",
            &["'tuf.points[2]'", "out of order"],
        );
        bad(
            "{shape: piecewise, points: [[0, 1], [2, -1]]}",
            &["'tuf.points[1]'", ">= 0"],
        );
        bad("{shape: piecewise}", &["'tuf.points'", "needs 'points'"]);
        bad(
            "{shape: piecewise, points: [[0, 1]], utility: 3}",
            &["'tuf.utility'", "does not apply"],
        );
        bad("{shape: cubic}", &["'tuf.shape'", "unknown shape 'cubic'"]);
        bad(
            "{shape: step, utilty: 3}",
            &["utilty", "did you mean 'utility'"],
        );
    }

    #[test]
    fn malformed_json_has_position() {
        let e = parse_taskset(
            "{\"platform\": {\"cpus\": 2},\n \"tasks\": [}",
            Format::Json,
            "x.json",
        )
        .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("x.json: line 2 column"), "{s}");
    }

    #[test]
    fn execution_models() {
        let ts = yaml("platform: {cpus: 1}\nrun: {execution: {model: uniform, min: 0.5}}\ntasks: [{name: a, period: 10, wcet: 1}]").unwrap();
        assert_eq!(ts.run.execution, ExecModel::Uniform { min: 0.5, max: 1.0 });
        let e = yaml("platform: {cpus: 1}\nrun: {execution: {model: uniform, min: 2, max: 1}}\ntasks: [{name: a, period: 10, wcet: 1}]");
        assert!(e.is_err());
    }
}
