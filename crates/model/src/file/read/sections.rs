//! A task's critical sections (`sections`): the resource, where in which thread (a region's
//! thread, or a DAG's node) it is requested and for how much work it is held; sections of
//! one thread are disjoint or properly nested, a mutex is not recursive, and the top-level
//! `resources` list, when given, fixes the names (docs/taskset-format.md "Critical sections";
//! docs/semantics.md for blocking).

use crate::dag::Dag;
use crate::input::InputError;
use crate::program::{CriticalSection, Region};
use crate::text::closest;
use crate::time::{fmt_duration, Time};
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};

const SECTION_FIELDS: &[&str] = &["resource", "start", "length", "region", "thread", "node"];

impl Validator<'_> {
    /// `sections: [{resource: bus, start: 1ms, length: 0.5ms, region: 0, thread: 0}]`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sections(
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
            let (region, thread, tw) =
                self.section_thread(o, cx, wcet, regions, dag, &node_wcets)?;
            let (start, length) = self.section_extent(o, cx, tw)?;
            let resource = self.resource_index(&name, cx, resources, declared)?;
            out.push(CriticalSection {
                resource,
                region: region as u32,
                thread: thread as u32,
                start,
                length,
            });
            names.push((k, name));
        }
        self.nesting(ctx, out, &names)
    }

    /// Where the section is: a DAG task's `node`, or `region` and `thread` (default 0, 0);
    /// with that thread's WCET.
    fn section_thread(
        &self,
        o: &Map<String, Value>,
        cx: Option<&str>,
        wcet: Time,
        regions: &[Region],
        dag: Option<&Dag>,
        node_wcets: &[Time],
    ) -> Result<(u64, u64, Time), InputError> {
        let mut dag_node: Option<u64> = None;
        if let Some(d) = dag {
            dag_node = Some(self.section_node(o, cx, d)?);
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
            node_wcets
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
        Ok((region, thread, thread_wcets[thread as usize]))
    }

    /// A DAG task's section: its `node` (by name; optional when the DAG has one node), never a
    /// region or thread.
    fn section_node(
        &self,
        o: &Map<String, Value>,
        cx: Option<&str>,
        d: &Dag,
    ) -> Result<u64, InputError> {
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
        Ok(k as u64)
    }

    /// `start` (work before the request) and `length` (work holding it), within the
    /// thread's WCET `tw`.
    fn section_extent(
        &self,
        o: &Map<String, Value>,
        cx: Option<&str>,
        tw: Time,
    ) -> Result<(Time, Time), InputError> {
        let start =
            match o.get("start") {
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
        Ok((start, length))
    }

    /// The index of resource `name`: its place in the declared `resources` list (a name not
    /// in it is refused, with the closest), or, without that list, in the order of first use.
    fn resource_index(
        &self,
        name: &str,
        cx: Option<&str>,
        resources: &mut Vec<String>,
        declared: Option<usize>,
    ) -> Result<u32, InputError> {
        let resource = match resources.iter().position(|r| *r == name) {
            Some(r) => r as u32,
            None if declared.is_some() => {
                let known: Vec<&str> = resources.iter().map(String::as_str).collect();
                let hint = closest(name, &known)
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
                resources.push(name.to_string());
                (resources.len() - 1) as u32
            }
        };
        Ok(resource)
    }

    /// The sections in the order `Program::build` reads them, checked to be disjoint or
    /// properly nested within each thread and never to request a held resource.
    fn nesting(
        &self,
        ctx: Option<&str>,
        out: Vec<CriticalSection>,
        names: &[(usize, String)],
    ) -> Result<Vec<CriticalSection>, InputError> {
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
