//! Reading a task-set file: the document (YAML or JSON) validated section by section into a
//! [`TaskSet`] (docs/taskset-format.md). Unknown fields are errors (with a "did you mean"
//! hint): a typo must never silently fall back to a default.
//!
//! One file per section of the file, each an `impl Validator` block of its readers (the field
//! checks they use are `crate::validate`'s):
//! - this file: the document's top level (`platform`, `run`, `resources`, the task list) and
//!   the limits on a file's size and threads;
//! - `run.rs`: `run` (`execution`, `overheads`, `cache`);
//! - `topology.rs`: `platform.topology` (presets, caches, NUMA nodes);
//! - `task.rs`: one real-time task and its `regions`; `fair.rs`: a best-effort task;
//!   `policy.rs`: a task's Linux `policy` and `run.default_policy`;
//! - `dag.rs`: a task's `dag`; `sections.rs`: its critical sections; `tuf.rs`: its `tuf`.

mod dag;
mod fair;
mod flow;
mod locking;
mod policy;
mod run;
mod sections;
mod task;
mod topology;
mod tuf;

use crate::input::{read_document, read_input_text, Format, InputError};
use crate::task::*;
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
    "chains",
];
const PLATFORM_FIELDS: &[&str] = &["cpus", "topology"];

// The document's top level.
impl Validator<'_> {
    pub(super) fn taskset(&self, root: &Value) -> Result<TaskSet, InputError> {
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
            Some(p) => self.platform(p)?,
        };
        let run = match top.get("run") {
            None => RunOptions::default(),
            Some(r) => self.run_options(r)?,
        };
        let list = self.task_list(top)?;
        // Declared resources fix their order and catch typos in section names.
        let mut resources: Vec<String> = Vec::new();
        let declared = top.get("resources").is_some();
        let mut resource_locking = Vec::new();
        if let Some(rv) = top.get("resources") {
            (resources, resource_locking) = self.resources(rv)?;
        }
        let fixed = declared.then_some(resources.len());
        let mut tasks = self.tasks(list, &platform, &mut resources, fixed, run.default_policy)?;
        self.triggers(list, &mut tasks)?;
        let chains = match top.get("chains") {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(v) => self.chains(v, &tasks)?,
        };
        let mut run = run;
        if resource_locking.iter().any(Option::is_some) {
            run.resource_locking = resource_locking;
        }
        let ts = TaskSet {
            chains,
            source: self.file.into(),
            platform,
            run,
            tasks,
            resources,
        };
        self.locking(&ts)?;
        Ok(ts)
    }

    /// `platform`: `cpus` (1 to 65,536) and an optional `topology`.
    fn platform(&self, p: &Value) -> Result<Platform, InputError> {
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
        Ok(Platform {
            cpus: cpus as u32,
            topology,
        })
    }

    /// `tasks`: a non-empty list.
    fn task_list<'v>(&self, top: &'v Map<String, Value>) -> Result<&'v [Value], InputError> {
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
        Ok(list)
    }

    /// `resources`: names (or `{name, protocol}`, locking.rs), each new and non-empty, in the
    /// order their indices take; and each one's protocol, if it names one.
    #[allow(clippy::type_complexity)]
    fn resources(
        &self,
        rv: &Value,
    ) -> Result<(Vec<String>, Vec<Option<crate::locking::Protocol>>), InputError> {
        let mut resources: Vec<String> = Vec::new();
        let mut protocols = Vec::new();
        let names = rv.as_array().ok_or_else(|| {
            self.err(
                None,
                Some("resources"),
                format!("expected a list of resource names, got {}", kind(rv)),
            )
        })?;
        for (k, n) in names.iter().enumerate() {
            let (name, protocol) = self.resource_entry(k, n)?;
            protocols.push(protocol);
            match name {
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
        Ok((resources, protocols))
    }

    /// Each task of the list, its name unique, the set's threads within MAX_THREADS_PER_SET.
    fn tasks(
        &self,
        list: &[Value],
        platform: &Platform,
        resources: &mut Vec<String>,
        fixed: Option<usize>,
        default: Option<PolicyKind>,
    ) -> Result<Vec<Task>, InputError> {
        let mut tasks: Vec<Task> = Vec::with_capacity(list.len());
        // Names seen, by position: a scan of the tasks before each one made loading quadratic.
        let mut seen: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(list.len());
        let mut threads = 0u64;
        for (i, tv) in list.iter().enumerate() {
            let task = self.task(i, tv, platform, resources, fixed, default)?;
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
        Ok(tasks)
    }
}
