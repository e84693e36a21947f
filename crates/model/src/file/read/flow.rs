//! Triggers, self-suspensions and chains (docs/chains.md, docs/taskset-format.md "chains"):
//! a task's `trigger` in place of its period, its `segments` in place of its WCET, and the
//! set's `chains`. A trigger names tasks that may come later in the file, so triggers are
//! resolved once every task is read ([`Validator::triggers`]), and a cycle of triggers is
//! refused naming it.

use crate::input::InputError;
use crate::program::Region;
use crate::task::*;
use crate::time::{fmt_duration, Time};
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A task's work as `task.rs` reads it: regions, suspensions, DAG, WCET.
type Work = (Vec<Region>, Vec<Suspension>, Option<crate::dag::Dag>, Time);

const CHAIN_FIELDS: &[&str] = &["name", "tasks", "communication", "deadline"];

impl Validator<'_> {
    /// A triggered task's timing: no period, inter-arrival or offset; its own `deadline`
    /// (required). Returns the deadline, the period's placeholder until [`Validator::triggers`].
    pub(super) fn triggered_timing(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
    ) -> Result<Time, InputError> {
        for f in ["period", "min_interarrival", "max_interarrival", "offset"] {
            if m.contains_key(f) {
                return Err(self.err(
                    ctx,
                    Some(f),
                    "a triggered task (trigger) is released by its triggers' jobs: leave out period, min_interarrival, max_interarrival and offset",
                ));
            }
        }
        match m.get("deadline") {
            None => Err(self.err(
                ctx,
                Some("deadline"),
                "missing required field (a triggered task has no period to default it to)",
            )),
            Some(v) => self.positive_duration(v, ctx, "deadline"),
        }
    }

    /// `segments: [2ms, {suspend: 1ms}, 1ms]`: run segments (one-thread regions run one after
    /// another) with a suspension between each two; the WCET is the run segments' sum.
    pub(super) fn segmented_work(
        &self,
        m: &Map<String, Value>,
        v: &Value,
        ctx: Option<&str>,
    ) -> Result<Work, InputError> {
        for f in ["regions", "dag", "execution_times"] {
            if m.contains_key(f) {
                return Err(self.err(
                    ctx,
                    Some(f),
                    "give either 'segments' or 'regions' / 'dag' / 'execution_times', not both",
                ));
            }
        }
        let list = v.as_array().ok_or_else(|| {
            self.err(
                ctx,
                Some("segments"),
                format!("expected a list of run durations and {{suspend: D}} (or {{suspend: [lo, hi]}}), got {}", kind(v)),
            )
        })?;
        if list.len() > 2 * crate::file::MAX_THREADS_PER_TASK as usize {
            return Err(self.err(ctx, Some("segments"), "has too many segments"));
        }
        let (mut regions, mut suspensions) = (Vec::new(), Vec::new());
        for (k, sv) in list.iter().enumerate() {
            let field = format!("segments[{k}]");
            let run = k % 2 == 0;
            match (sv, run) {
                (Value::Object(o), false) => suspensions.push(self.suspension(o, ctx, &field)?),
                (Value::Object(_), true) => {
                    return Err(self.err(ctx, Some(&field), "expected a run segment (a duration): segments alternate run, suspension, run, ... and start with a run"))
                }
                (_, false) => {
                    return Err(self.err(ctx, Some(&field), format!("expected {{suspend: D}} between two run segments (write two runs in a row as their sum), got {}", show(sv))))
                }
                (_, true) => regions.push(Region {
                    threads: vec![self.positive_duration(sv, ctx, &field)?],
                }),
            }
        }
        if list.len() % 2 == 0 {
            return Err(self.err(
                ctx,
                Some("segments"),
                "must start and end with a run segment (a duration)",
            ));
        }
        let total: Time = regions.iter().map(|r| r.threads[0]).sum();
        if let Some(w) = m.get("wcet") {
            let w = self.positive_duration(w, ctx, "wcet")?;
            if w != total {
                return Err(self.err(ctx, Some("wcet"), format!("is {} but the run segments sum to {} (the WCET of a self-suspending task is its run segments' sum); leave 'wcet' out to use the sum", fmt_duration(w), fmt_duration(total))));
            }
        }
        if suspensions.is_empty() {
            // One run segment: a plain sequential task.
            regions.clear();
        }
        Ok((regions, suspensions, None, total))
    }

    /// `{suspend: D}` or `{suspend: [lo, hi]}`.
    fn suspension(
        &self,
        o: &Map<String, Value>,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<Suspension, InputError> {
        let c = format!("{} {field}", ctx.unwrap_or(""));
        self.check_fields(o, &["suspend"], Some(&c))?;
        match o.get("suspend") {
            None => Err(self.err(Some(&c), Some("suspend"), "missing required field")),
            Some(Value::Array(a)) if a.len() == 2 => {
                let lo = self.positive_duration(&a[0], Some(&c), "suspend[0]")?;
                let hi = self.positive_duration(&a[1], Some(&c), "suspend[1]")?;
                if hi < lo {
                    return Err(self.err(
                        Some(&c),
                        Some("suspend"),
                        "expected [lo, hi] with lo <= hi",
                    ));
                }
                Ok(Suspension { lo, hi })
            }
            Some(v) => {
                let x = self.positive_duration(v, Some(&c), "suspend")?;
                Ok(Suspension { lo: x, hi: x })
            }
        }
    }

    /// Resolve every task's `trigger` (names of real-time tasks of the set), refuse cycles,
    /// and give each triggered task its period: the longest of its triggers' periods.
    pub(super) fn triggers(&self, list: &[Value], tasks: &mut [Task]) -> Result<(), InputError> {
        let index: HashMap<&str, usize> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut found: Vec<(usize, Trigger)> = Vec::new();
        for (i, tv) in list.iter().enumerate() {
            let Some(v) = tv.get("trigger") else { continue };
            let ctx = format!("task '{}' (tasks[{i}])", tasks[i].name);
            let (names, all) = match v {
                Value::Object(o) => {
                    self.check_fields(o, &["all"], Some(&ctx))?;
                    match o.get("all") {
                        Some(Value::Array(a)) if !a.is_empty() => (a.clone(), true),
                        _ => {
                            return Err(self.err(
                                Some(&ctx),
                                Some("trigger"),
                                "expected {all: [TASK, ...]} with at least one task",
                            ))
                        }
                    }
                }
                other => (vec![other.clone()], false),
            };
            let mut ids = Vec::with_capacity(names.len());
            for n in &names {
                let id = n
                    .as_str()
                    .and_then(|s| index.get(s).copied())
                    .ok_or_else(|| {
                        self.err(
                            Some(&ctx),
                            Some("trigger"),
                            format!("{} names no task of the set", show(n)),
                        )
                    })?;
                if tasks[id].is_fair() {
                    return Err(self.err(
                        Some(&ctx),
                        Some("trigger"),
                        format!(
                            "'{}' is a best-effort task; a trigger is a real-time task",
                            tasks[id].name
                        ),
                    ));
                }
                if ids.contains(&(id as TaskId)) {
                    return Err(self.err(
                        Some(&ctx),
                        Some("trigger"),
                        format!("names '{}' twice", tasks[id].name),
                    ));
                }
                ids.push(id as TaskId);
            }
            found.push((i, Trigger { tasks: ids, all }));
        }
        for (i, t) in found {
            tasks[i].trigger = Some(t);
        }
        let order = self.trigger_order(tasks)?;
        for i in order {
            if let Some(t) = &tasks[i].trigger {
                let p = t
                    .tasks
                    .iter()
                    .map(|&k| tasks[k as usize].period)
                    .max()
                    .unwrap_or(1);
                tasks[i].period = p;
            }
        }
        Ok(())
    }

    /// The tasks in an order where each triggered one follows its triggers; a cycle is refused,
    /// at its first task in file order, naming its tasks in the order they trigger each other.
    fn trigger_order(&self, tasks: &[Task]) -> Result<Vec<usize>, InputError> {
        // 0: not seen, 1: on the current path, 2: done.
        let mut state = vec![0u8; tasks.len()];
        let mut order = Vec::with_capacity(tasks.len());
        for root in 0..tasks.len() {
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                if *next == 0 && state[u] == 2 {
                    stack.pop();
                    continue;
                }
                state[u] = 1;
                let preds = tasks[u].trigger.as_ref().map_or(&[][..], |t| &t.tasks[..]);
                if let Some(&p) = preds.get(*next) {
                    *next += 1;
                    let p = p as usize;
                    if state[p] == 1 {
                        let from = stack.iter().position(|&(x, _)| x == p).unwrap_or(0);
                        // The path from `p` back along triggers to `u`, which `p` triggers:
                        // reversed, the tasks in the order they release each other.
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|&(x, _)| x).collect();
                        cycle.reverse();
                        let first = *cycle.iter().min().expect("a cycle has a task");
                        let at = cycle.iter().position(|&x| x == first).unwrap_or(0);
                        cycle.rotate_left(at);
                        cycle.push(first);
                        let names: Vec<&str> =
                            cycle.iter().map(|&x| tasks[x].name.as_str()).collect();
                        return Err(self.err(
                            Some(&format!("task '{}' (tasks[{first}])", tasks[first].name)),
                            Some("trigger"),
                            format!("triggers form a cycle: {} (a triggered task's jobs must come from a periodic or sporadic task's)", names.join(" → ")),
                        ));
                    }
                    if state[p] == 0 {
                        stack.push((p, 0));
                    }
                } else {
                    state[u] = 2;
                    order.push(u);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }

    /// `chains: [{name, tasks: [A, B, ...], communication: implicit | let, deadline}]`.
    pub(super) fn chains(&self, v: &Value, tasks: &[Task]) -> Result<Vec<Chain>, InputError> {
        let list = v.as_array().ok_or_else(|| {
            self.err(
                None,
                Some("chains"),
                format!("expected a list of chains, got {}", kind(v)),
            )
        })?;
        let mut out: Vec<Chain> = Vec::with_capacity(list.len());
        for (i, cv) in list.iter().enumerate() {
            let pos = format!("chains[{i}]");
            let m = self.object(cv, Some(&pos), None)?;
            self.check_fields(m, CHAIN_FIELDS, Some(&pos))?;
            let name = match m.get("name") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                Some(v) => {
                    return Err(self.err(
                        Some(&pos),
                        Some("name"),
                        format!("expected a non-empty string, got {}", show(v)),
                    ))
                }
                None => return Err(self.err(Some(&pos), Some("name"), "missing required field")),
            };
            let ctx = format!("chain '{name}' ({pos})");
            let ctx = Some(ctx.as_str());
            if out.iter().any(|c| c.name == name) {
                return Err(self.err(ctx, Some("name"), "duplicate chain name"));
            }
            let ids = self.chain_tasks(m.get("tasks"), ctx, tasks)?;
            let communication = match m.get("communication") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s == "implicit" => Some(Communication::Implicit),
                Some(Value::String(s)) if s == "let" || s == "LET" => Some(Communication::Let),
                Some(v) => {
                    return Err(self.err(
                        ctx,
                        Some("communication"),
                        format!("unknown communication {} (known: implicit, let)", show(v)),
                    ))
                }
            };
            self.chain_links(&ids, communication, ctx, tasks)?;
            let deadline = match m.get("deadline") {
                None | Some(Value::Null) => None,
                Some(v) => Some(self.positive_duration(v, ctx, "deadline")?),
            };
            out.push(Chain {
                name,
                tasks: ids,
                communication,
                deadline,
            });
        }
        Ok(out)
    }

    /// A chain's `tasks`: at least one, each a real-time task of the set, none twice.
    fn chain_tasks(
        &self,
        v: Option<&Value>,
        ctx: Option<&str>,
        tasks: &[Task],
    ) -> Result<Vec<TaskId>, InputError> {
        let a = match v {
            Some(Value::Array(a)) if !a.is_empty() => a,
            Some(v) => {
                return Err(self.err(
                    ctx,
                    Some("tasks"),
                    format!("expected a non-empty list of task names, got {}", show(v)),
                ))
            }
            None => return Err(self.err(ctx, Some("tasks"), "missing required field")),
        };
        let mut ids: Vec<TaskId> = Vec::with_capacity(a.len());
        for (k, n) in a.iter().enumerate() {
            let field = format!("tasks[{k}]");
            let id = n
                .as_str()
                .and_then(|s| tasks.iter().position(|t| t.name == s))
                .ok_or_else(|| {
                    self.err(
                        ctx,
                        Some(&field),
                        format!("{} names no task of the set", show(n)),
                    )
                })?;
            if tasks[id].is_fair() {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!(
                        "'{}' is a best-effort task; a chain's tasks are real-time tasks",
                        tasks[id].name
                    ),
                ));
            }
            if ids.contains(&(id as TaskId)) {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!("'{}' is in the chain twice", tasks[id].name),
                ));
            }
            ids.push(id as TaskId);
        }
        Ok(ids)
    }

    /// An event chain's tasks each trigger the next; a data-flow chain's are periodic or
    /// sporadic (none triggered).
    fn chain_links(
        &self,
        ids: &[TaskId],
        comm: Option<Communication>,
        ctx: Option<&str>,
        tasks: &[Task],
    ) -> Result<(), InputError> {
        for (k, w) in ids.windows(2).enumerate() {
            let (a, b) = (&tasks[w[0] as usize], &tasks[w[1] as usize]);
            let linked = b.trigger.as_ref().is_some_and(|t| t.tasks.contains(&w[0]));
            if comm.is_none() && !linked {
                return Err(self.err(ctx, Some(&format!("tasks[{}]", k + 1)), format!("'{}' is not triggered by '{}': an event chain's tasks each trigger the next (give 'communication: implicit' or 'let' for a data-flow chain of periodic tasks)", b.name, a.name)));
            }
        }
        if comm.is_some() {
            if let Some(k) = ids.iter().position(|&i| tasks[i as usize].is_triggered()) {
                return Err(self.err(ctx, Some("communication"), format!("applies to data-flow chains of periodic tasks; '{}' (tasks[{k}]) is triggered (leave 'communication' out for an event chain)", tasks[ids[k] as usize].name)));
            }
        }
        Ok(())
    }
}
