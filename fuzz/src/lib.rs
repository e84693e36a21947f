//! What the fuzz targets share: the task-set reader's contract, and the structured task sets
//! the simulator target builds (as JSON documents, so every set it runs went through the same
//! reader and validation as a user's file).

use arbitrary::Arbitrary;
use rtsched_model::file::to_yaml;
use rtsched_model::{parse_taskset, Format, TaskSet};
use serde_json::{json, Value};

/// The reader's contract on any text: a task set that writes back to YAML and reads back to the
/// same value, or an error that names the file. Never a panic.
pub fn check_taskset(text: &str, format: Format) {
    let source = if format == Format::Json {
        "fuzz.json"
    } else {
        "fuzz.yaml"
    };
    match parse_taskset(text, format, source) {
        Err(e) => {
            let shown = e.to_string();
            assert!(
                shown.starts_with(source) && !e.message.is_empty(),
                "an error that does not name the file: {shown:?}"
            );
        }
        Ok(ts) => {
            let yaml = to_yaml(&ts);
            let back = parse_taskset(&yaml, Format::Yaml, "round-trip.yaml")
                .unwrap_or_else(|e| panic!("to_yaml wrote what the reader refuses: {e}\n{yaml}"));
            assert_eq!(
                TaskSet {
                    source: ts.source.clone(),
                    ..back
                },
                ts,
                "to_yaml does not read back to the same task set:\n{yaml}"
            );
        }
    }
}

/// A small task set: up to 6 tasks on up to 4 CPUs, periods of 10 µs to 2 ms, a window of at
/// most 4 ms. Zero and out-of-range values are left in on purpose: validation must refuse them.
#[derive(Arbitrary, Debug)]
pub struct SetInput {
    pub cpus: u8,
    pub policy: u16,
    pub abort: bool,
    pub exec: u8,
    pub seed: u64,
    pub duration: u8,
    pub overheads: Option<[u8; 4]>,
    pub resources: u8,
    pub tasks: Vec<TaskInput>,
}

#[derive(Arbitrary, Debug)]
pub struct TaskInput {
    pub period: u8,
    pub wcet: u16,
    pub deadline: Option<u16>,
    pub offset: u8,
    pub priority: Option<u8>,
    pub cpu: Option<u8>,
    pub max_interarrival: Option<u8>,
    pub regions: Vec<Vec<u8>>,
    pub wcet_given: bool,
    pub sections: Vec<SectionInput>,
    pub tuf: Option<TufInput>,
    pub fair: Option<(i8, u8, u8)>,
}

#[derive(Arbitrary, Debug)]
pub struct SectionInput {
    pub resource: u8,
    pub region: u8,
    pub thread: u8,
    pub start: u8,
    pub length: u8,
}

#[derive(Arbitrary, Debug)]
pub enum TufInput {
    Step(u8),
    Linear(u8, Option<u16>),
    Quadratic(u8, Option<u16>),
    Piecewise(Vec<(u16, u8)>),
}

fn us(x: u64) -> Value {
    Value::String(format!("{x}us"))
}

impl SetInput {
    /// The task-set document (JSON) this input describes.
    pub fn document(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .take(6)
            .enumerate()
            .map(|(i, t)| t.document(i, self.resources))
            .collect();
        let mut run = json!({
            "duration": us((self.duration as u64 % 40 + 1) * 100),
            "seed": self.seed,
            "on_miss": if self.abort { "abort" } else { "continue" },
        });
        run["execution"] = match self.exec % 3 {
            0 => json!("wcet"),
            1 => json!({"model": "uniform", "min": 0.3, "max": 1.0}),
            _ => json!({"model": "overrun", "ratio": 1.5, "probability": 0.5}),
        };
        if let Some([d, c, m, a]) = self.overheads {
            run["overheads"] = json!({"decision": us(d as u64 % 5), "context_switch": us(c as u64 % 5), "migration": us(m as u64 % 5), "abort_handler": us(a as u64 % 5)});
        }
        let mut doc = json!({"platform": {"cpus": self.cpus % 5}, "run": run, "tasks": tasks});
        if self.resources % 4 > 0 {
            doc["resources"] = json!((0..self.resources % 4)
                .map(|r| format!("R{r}"))
                .collect::<Vec<_>>());
        }
        doc
    }
}

impl TaskInput {
    fn document(&self, i: usize, resources: u8) -> Value {
        let mut t = json!({"name": format!("t{i}")});
        if let Some((nice, behaviour, run)) = self.fair {
            t["nice"] = json!(nice % 21);
            match behaviour % 3 {
                0 => t["behaviour"] = json!("hog"),
                1 => {
                    t["behaviour"] = json!("sleeper");
                    t["run"] = us(run as u64 * 10);
                    t["sleep"] = us(self.period as u64 * 10);
                }
                _ => {
                    t["behaviour"] = json!("bursty");
                    t["run"] = json!([us(run as u64 * 10), us(run as u64 * 10 + 50)]);
                    t["sleep"] = json!([
                        us(self.period as u64 * 10),
                        us(self.period as u64 * 10 + 100)
                    ]);
                }
            }
            return t;
        }
        let period = (self.period as u64 % 201) * 10;
        match self.max_interarrival {
            Some(extra) => {
                t["min_interarrival"] = us(period);
                t["max_interarrival"] = us(period + extra as u64);
            }
            None => t["period"] = us(period),
        }
        if self.regions.is_empty() || self.wcet_given {
            t["wcet"] = Value::String(format!("{}ns", self.wcet as u64 % 2501 * 100));
        }
        if !self.regions.is_empty() {
            let regions: Vec<Value> = self
                .regions
                .iter()
                .take(3)
                .map(|r| {
                    json!(r
                        .iter()
                        .take(4)
                        .map(|&w| us(w as u64 % 50))
                        .collect::<Vec<_>>())
                })
                .collect();
            t["regions"] = json!(regions);
        }
        if let Some(d) = self.deadline {
            t["deadline"] = Value::String(format!("{}ns", d as u64 % 2501 * 1000));
        }
        if self.offset > 0 {
            t["offset"] = us(self.offset as u64 * 10);
        }
        if let Some(p) = self.priority {
            t["priority"] = json!(p % 8);
        }
        if let Some(c) = self.cpu {
            t["cpu"] = json!(c % 5);
        }
        if !self.sections.is_empty() {
            let n = (resources % 4).max(1);
            let s: Vec<Value> = self
                .sections
                .iter()
                .take(3)
                .map(|s| json!({"resource": format!("R{}", s.resource % n), "region": s.region % 3, "thread": s.thread % 4, "start": us(s.start as u64 % 40), "length": us(s.length as u64 % 40)}))
                .collect();
            t["sections"] = json!(s);
        }
        if let Some(f) = &self.tuf {
            t["tuf"] = match f {
                TufInput::Step(u) => json!(*u as f64 / 4.0),
                TufInput::Linear(u, x) => match x {
                    Some(x) => {
                        json!({"shape": "linear", "utility": u, "termination": us(*x as u64 % 3000)})
                    }
                    None => json!({"shape": "linear", "utility": u}),
                },
                TufInput::Quadratic(u, x) => match x {
                    Some(x) => {
                        json!({"shape": "quadratic", "utility": u, "termination": us(*x as u64 % 3000)})
                    }
                    None => json!({"shape": "quadratic", "utility": u}),
                },
                TufInput::Piecewise(pts) => {
                    json!({"shape": "piecewise", "points": pts.iter().take(4).map(|(t, u)| json!([us(*t as u64 % 3000), u])).collect::<Vec<_>>()})
                }
            };
        }
        t
    }
}

/// Every scheduler in the registry, and the variants with options of their own code paths
/// (push variants, partitioners, priority orders, ChronOS's global models).
pub fn schedulers() -> Vec<String> {
    let mut s: Vec<String> = rtsched_policies::registry::names()
        .into_iter()
        .map(String::from)
        .collect();
    for v in [
        "gfp:rm",
        "gfp:dm",
        "pfp:rm",
        "pedf:ffd",
        "pedf:wfd",
        "pedf:lwfg+ffd",
        "pfp:partition=bfd",
        "gedf-dist:linear",
        "gedf-dist:fmask",
        "gfp-dist:dm,push=heap",
        "ggua:model=ac",
        "gedf:model=ac,mapper=none",
        "gnpedf:model=stw",
    ] {
        s.push(v.to_string());
    }
    s
}
