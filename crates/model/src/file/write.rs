//! Writing a task set as a task-set file (YAML): the `platform`, `run`, `resources`, `tasks`
//! and `chains` sections in the order docs/taskset-format.md gives them, each task on one line in
//! flow style; the reader (`read/`) takes the text back to the same value.

use crate::overheads::Statistic;
use crate::task::*;
use crate::time::{fmt_duration, Time};
use crate::topology::{Cache, Topology};
use crate::tuf::Tuf;
use std::fmt::Write;

/// The task set as YAML that `parse_taskset` reads back to the same value (except `source`).
/// Durations are strings with a unit (`fmt_duration`), so they are exact; optional fields are
/// written only when they differ from their defaults.
pub fn to_yaml(ts: &TaskSet) -> String {
    to_yaml_with(ts, &[])
}

/// What a task's line of [`to_yaml_with`] says beyond the task itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskNote {
    /// Written as a comment at the end of the task's line (a line break in it as a space).
    pub comment: String,
    /// T written as `min_interarrival` (a sporadic task's minimum inter-arrival time, which the
    /// reader takes as T exactly as it takes `period`) rather than `period`.
    pub sporadic: bool,
}

/// [`to_yaml`] with `notes[i]` on task i's line (tasks beyond `notes` get none): the same
/// task set to the reader, annotated as `rtsched record` writes what it measured.
pub fn to_yaml_with(ts: &TaskSet, notes: &[TaskNote]) -> String {
    let mut out = String::new();
    platform(&mut out, &ts.platform);
    run(&mut out, &ts.run);
    if !ts.resources.is_empty() {
        let _ = writeln!(
            out,
            "resources: [{}]",
            ts.resources
                .iter()
                .enumerate()
                .map(
                    |(i, r)| match ts.run.resource_locking.get(i).copied().flatten() {
                        Some(p) => format!("{{name: {}, protocol: {}}}", q(r), p.name()),
                        None => q(r),
                    }
                )
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out.push_str("tasks:\n");
    for (i, t) in ts.tasks.iter().enumerate() {
        let note = notes.get(i);
        match t.fair_params() {
            Some(f) => fair_task(&mut out, t, f),
            None => rt_task(&mut out, t, ts, note.is_some_and(|n| n.sporadic)),
        }
        if let Some(n) = note.filter(|n| !n.comment.is_empty()) {
            out.pop(); // the line's end, after the task's closing brace
            let _ = writeln!(out, "   # {}", n.comment.replace(['\n', '\r'], " "));
        }
    }
    if !ts.chains.is_empty() {
        chains(&mut out, ts);
    }
    out
}

/// `chains`: each with its tasks by name, its communication and deadline where given.
fn chains(out: &mut String, ts: &TaskSet) {
    out.push_str("chains:\n");
    for c in &ts.chains {
        let names: Vec<String> = c
            .tasks
            .iter()
            .map(|&i| q(&ts.tasks[i as usize].name))
            .collect();
        let _ = write!(
            out,
            "  - {{name: {}, tasks: [{}]",
            q(&c.name),
            names.join(", ")
        );
        if let Some(m) = c.communication {
            let _ = write!(out, ", communication: {}", m.name());
        }
        if let Some(x) = c.deadline {
            let _ = write!(out, ", deadline: {}", d(x));
        }
        out.push_str("}\n");
    }
}

/// A string as YAML: a JSON string is a YAML double-quoted string, but JSON leaves DEL, the
/// C1 controls, U+FEFF, U+FFFE / U+FFFF unescaped, which YAML may not print, and NEL, U+2028
/// and U+2029, which a YAML reader folds as line breaks: those go as \u escapes.
fn q(s: &str) -> String {
    let json = serde_json::to_string(s).expect("a string serialises");
    let printable = |c: char| {
        !matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
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
}

/// A duration, exact, as a quoted string with a unit.
fn d(ns: Time) -> String {
    format!("\"{}\"", fmt_duration(ns))
}

/// `platform`: the CPUs, and the topology by its preset's name (opteron6164x4) or written
/// out (a `host` topology too: the file must mean the same on another machine).
fn platform(out: &mut String, p: &Platform) {
    match &p.topology {
        None => {
            let _ = writeln!(out, "platform: {{cpus: {}}}", p.cpus);
        }
        Some(t) if t.preset.as_deref() == Some("opteron6164x4") => {
            let _ = writeln!(
                out,
                "platform: {{cpus: {}, topology: opteron6164x4}}",
                p.cpus
            );
        }
        Some(t) => topology(out, p.cpus, t),
    }
}

/// A topology written out: one entry per cache level (its instances' CPU groups together),
/// and the NUMA nodes.
fn topology(out: &mut String, cpus: u32, t: &Topology) {
    let list = |g: &[u32]| {
        format!(
            "[{}]",
            g.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    };
    let mut levels: Vec<(&Cache, Vec<&[u32]>)> = Vec::new();
    for c in &t.caches {
        match levels.iter_mut().find(|(k, _)| {
            (k.level, k.kind, k.size, k.line, k.ways) == (c.level, c.kind, c.size, c.line, c.ways)
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
        cpus,
        caches.join(", "),
        nodes.join(", ")
    );
}

/// `run`: every field, the cache model only when it is on or not the default.
fn run(out: &mut String, r: &RunOptions) {
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
    if o.statistic != Statistic::Median {
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
    if r.locking != crate::locking::Protocol::None {
        let _ = write!(out, ", locking: {}", r.locking.name());
    }
    if let Some(p) = r.default_policy {
        let _ = write!(out, ", default_policy: {}", p.name());
    }
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
}

/// A best-effort task: nice, behaviour, and where given, offset, cpu, wss, group.
fn fair_task(out: &mut String, t: &Task, f: &Fair) {
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
}

/// A real-time task: its timing (T as `min_interarrival` when `sporadic`; a triggered task's
/// trigger and deadline), the optional fields that differ from their defaults, then its work's
/// structure (segments, regions or DAG), sections, TUF and replayed execution times.
fn rt_task(out: &mut String, t: &Task, ts: &TaskSet, sporadic: bool) {
    let resources = &ts.resources;
    match &t.trigger {
        None => {
            let _ = write!(
                out,
                "  - {{name: {}, {}: {}, wcet: {}",
                q(&t.name),
                if sporadic {
                    "min_interarrival"
                } else {
                    "period"
                },
                d(t.period),
                d(t.wcet)
            );
        }
        Some(tr) => {
            let names: Vec<String> = tr
                .tasks
                .iter()
                .map(|&i| q(&ts.tasks[i as usize].name))
                .collect();
            let trigger = if tr.all {
                format!("{{all: [{}]}}", names.join(", "))
            } else {
                names.join(", ")
            };
            let _ = write!(
                out,
                "  - {{name: {}, trigger: {trigger}, deadline: {}, wcet: {}",
                q(&t.name),
                d(t.deadline),
                d(t.wcet)
            );
        }
    }
    if t.deadline != t.period && t.trigger.is_none() {
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
    if let Some(p) = &t.policy {
        policy(out, p);
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
    work(out, t);
    if !t.sections.is_empty() {
        sections(out, t, resources);
    }
    if let Some(f) = &t.tuf {
        tuf(out, f);
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

/// `policy`, with a deadline task's `runtime` and an other task's `nice` where given.
fn policy(out: &mut String, p: &SchedPolicy) {
    let _ = write!(out, ", policy: {}", p.kind().name());
    match *p {
        SchedPolicy::Deadline { runtime: Some(r) } => {
            let _ = write!(out, ", runtime: {}", d(r));
        }
        SchedPolicy::Other { nice } if nice != 0 => {
            let _ = write!(out, ", nice: {nice}");
        }
        _ => {}
    }
}

/// `segments` (run segments and suspensions), `regions` (each a list of thread WCETs) or
/// `dag` (nodes and edges by name).
fn work(out: &mut String, t: &Task) {
    if !t.suspensions.is_empty() {
        let mut segs: Vec<String> = Vec::with_capacity(2 * t.regions.len());
        for (k, r) in t.regions.iter().enumerate() {
            if k > 0 {
                let s = t.suspensions[k - 1];
                segs.push(if s.lo == s.hi {
                    format!("{{suspend: {}}}", d(s.lo))
                } else {
                    format!("{{suspend: [{}, {}]}}", d(s.lo), d(s.hi))
                });
            }
            segs.push(d(r.threads[0]));
        }
        let _ = write!(out, ", segments: [{}]", segs.join(", "));
        return;
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
    if let Some(g) = &t.dag {
        let nodes: Vec<String> = g
            .nodes
            .iter()
            .map(|n| format!("{}: {}", q(&n.name), d(n.wcet)))
            .collect();
        let edges: Vec<String> = g
            .edges
            .iter()
            .map(|&(u, v)| {
                format!(
                    "[{}, {}]",
                    q(&g.nodes[u as usize].name),
                    q(&g.nodes[v as usize].name)
                )
            })
            .collect();
        let _ = write!(
            out,
            ", dag: {{nodes: {{{}}}, edges: [{}]}}",
            nodes.join(", "),
            edges.join(", ")
        );
    }
}

/// `sections`: each with its resource's name and its place (a DAG's node, or region and
/// thread).
fn sections(out: &mut String, t: &Task, resources: &[String]) {
    let ss: Vec<String> = t
        .sections
        .iter()
        .map(|s| {
            let place = match &t.dag {
                Some(g) => format!("node: {}", q(&g.nodes[s.thread as usize].name)),
                None => format!("region: {}, thread: {}", s.region, s.thread),
            };
            format!(
                "{{resource: {}, {place}, start: {}, length: {}}}",
                q(&resources[s.resource as usize]),
                d(s.start),
                d(s.length)
            )
        })
        .collect();
    let _ = write!(out, ", sections: [{}]", ss.join(", "));
}

/// `tuf`: its shape with utility and termination, or a piecewise one's points.
fn tuf(out: &mut String, f: &Tuf) {
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
