//! Every policy by name: the list users see (`rtsched schedulers`) and the constructor the
//! substrates call. A scheduler is written `NAME[:OPTION[,KEY=VALUE...]]`, e.g. `gedf`,
//! `gfp:rm`, `pfp:prio=dm`. A bare option is the policy's main option (`prio` for
//! fixed-priority policies).

use crate::policy::Policy;
use rtsched_model::file::closest;
use rtsched_model::TaskSet;

#[derive(Clone, Copy, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Where it comes from.
    pub paper: &'static str,
    /// Options it takes, for the help text.
    pub options: &'static str,
}

pub const POLICIES: &[PolicyInfo] = &[
    PolicyInfo { name: "gedf", summary: "global preemptive EDF (one ready queue, m earliest deadlines run)", paper: "baseline of PAWS §2, gedf-heap §3, ChronOS G-EDF", options: "" },
    PolicyInfo { name: "gnpedf", summary: "global non-preemptive EDF", paper: "ChronOS §5 (G-NP-EDF)", options: "" },
    PolicyInfo { name: "pedf", summary: "partitioned EDF (uniprocessor EDF per CPU; tasks' `cpu` fields)", paper: "LWFG §2, ChronOS P-EDF", options: "partition=NAME, or bare pedf:NAME (ffd, wfd, bfd, nfd, bf, lwfg, FIT:ORDER; chains with '+', e.g. lwfg+ffd): partition with the exact EDF test instead of reading `cpu` fields" },
    PolicyInfo { name: "gfp", summary: "global preemptive fixed priority (file priorities, or RM / DM)", paper: "gedf-heap §4 (SCHED_FIFO, cpupri)", options: "prio=file|rm|dm (default: file if every task has one, else rm)" },
    PolicyInfo { name: "pfp", summary: "partitioned fixed priority (SCHED_FIFO + affinity)", paper: "classic baseline (Liu & Layland; RTA)", options: "prio=file|rm|dm (default as gfp); partition=NAME (as pedf, admission by response-time analysis under those priorities) instead of `cpu` fields" },
    PolicyInfo { name: "gedf-dist", summary: "global EDF on per-CPU run queues with push/pull (Linux SCHED_DEADLINE); same schedule as gedf", paper: "gedf-heap §3–5 (push/pull, free-CPU mask, cpudl max-heap; Figs 3, 4, 7)", options: "push=linear|fmask|heap (default heap; bare option = push), measure (time each operation, stats only)" },
    PolicyInfo { name: "gfp-dist", summary: "global fixed priority on per-CPU run queues with push/pull (Linux SCHED_FIFO); same schedule as gfp", paper: "gedf-heap §3 (SCHED_FIFO, cpupri), baseline of §6", options: "prio=file|rm|dm (as gfp; bare option = prio), push=cpupri|linear|fmask|heap (default cpupri), measure" },
    PolicyInfo { name: "gfifo", summary: "global FIFO, non-preemptive (naive baseline)", paper: "baseline", options: "" },
];

pub fn names() -> Vec<&'static str> {
    POLICIES.iter().map(|p| p.name).collect()
}

/// A parsed scheduler spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerSpec {
    pub name: String,
    /// (key, value); a bare option has key "".
    pub options: Vec<(String, String)>,
}

impl SchedulerSpec {
    pub fn parse(spec: &str) -> Result<SchedulerSpec, String> {
        let spec = spec.trim();
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        if !POLICIES.iter().any(|p| p.name == name) {
            let hint = closest(name, &names()).map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default();
            return Err(format!("unknown scheduler '{name}'{hint}; known schedulers: {}", names().join(", ")));
        }
        let mut options = Vec::new();
        for part in rest.split(',').filter(|s| !s.is_empty()) {
            match part.split_once('=') {
                Some((k, v)) => options.push((k.trim().to_string(), v.trim().to_string())),
                None => options.push((String::new(), part.trim().to_string())),
            }
        }
        Ok(SchedulerSpec { name: name.to_string(), options })
    }

    /// The value of option `key` (a bare option counts as `main`), checking no other is given.
    fn option(&self, main: &str, allowed: &[&str]) -> Result<Option<String>, String> {
        let mut v = None;
        for (k, val) in &self.options {
            let k = if k.is_empty() { main } else { k.as_str() };
            if !allowed.contains(&k) {
                let known = if allowed.is_empty() { "it takes no options".to_string() } else { format!("known: {}", allowed.join(", ")) };
                return Err(format!("scheduler '{}' has no option '{k}' ({known})", self.name));
            }
            if k == main {
                v = Some(val.clone());
            }
        }
        Ok(v)
    }
}

/// Task priorities for a fixed-priority policy, and the label naming how they were chosen.
fn priorities(spec: &SchedulerSpec, ts: &TaskSet) -> Result<(Vec<u32>, String), String> {
    let allowed: &[&str] = if spec.name == "pfp" { &["prio", "partition"] } else { &["prio"] };
    let mode = spec.option("prio", allowed)?;
    let given = ts.tasks.iter().filter(|t| t.priority.is_some()).count();
    let mode = match mode.as_deref() {
        Some(m) => m.to_string(),
        None if given == ts.tasks.len() => "file".into(),
        None if given == 0 => "rm".into(),
        None => {
            let missing = ts.tasks.iter().find(|t| t.priority.is_none()).expect("some task lacks one");
            return Err(format!(
                "{}: task '{}': field 'priority': missing, while other tasks have one; give every task a priority, or choose {}:rm / {}:dm",
                ts.source, missing.name, spec.name, spec.name
            ));
        }
    };
    let prio = match mode.as_str() {
        "file" => {
            if let Some(t) = ts.tasks.iter().find(|t| t.priority.is_none()) {
                return Err(format!("{}: task '{}': field 'priority': missing, and {}:file needs every task's priority", ts.source, t.name, spec.name));
            }
            ts.tasks.iter().map(|t| t.priority.unwrap()).collect()
        }
        "rm" => rtsched_analysis::priority::rate_monotonic(&ts.tasks),
        "dm" => rtsched_analysis::priority::deadline_monotonic(&ts.tasks),
        other => return Err(format!("scheduler '{}': unknown priority assignment '{other}' (known: file, rm, dm)", spec.name)),
    };
    Ok((prio, format!("{}:{mode}", spec.name)))
}

/// The partition (CPU of each task): computed by the partitioner named in `partition=NAME`
/// (for pedf also the bare option), else read from the tasks' `cpu` fields. pedf admits a task
/// to a CPU by the exact EDF test, pfp by response-time analysis under its priorities.
#[cfg(test)]
fn partition(spec: &SchedulerSpec, ts: &TaskSet) -> Result<Vec<u32>, String> {
    partition_labelled(spec, ts).map(|(p, _)| p)
}

/// The partition and, when a heuristic made it, the heuristic that succeeded.
fn partition_labelled(spec: &SchedulerSpec, ts: &TaskSet) -> Result<(Vec<u32>, Option<String>), String> {
    use rtsched_analysis::partition::{by_name, Admission};
    let bare_is_partition = spec.name == "pedf";
    let chosen = spec.options.iter().rev().find(|(k, _)| k == "partition" || (k.is_empty() && bare_is_partition));
    if let Some((_, name)) = chosen {
        let partitioner = by_name(name).map_err(|e| format!("scheduler '{}': {e}", spec.name))?;
        let admission = if spec.name == "pfp" { Admission::FpRta(priorities(spec, ts)?.0) } else { Admission::EdfExact };
        let p = partitioner.partition(ts, &admission).map_err(|e| format!("{}: {e}", ts.source))?;
        if p.is_global() {
            return Err(format!(
                "{}: partitioner '{name}' fell back to 'global': the task set cannot be partitioned onto {} CPUs; use a global scheduler",
                ts.source, ts.platform.cpus
            ));
        }
        return Ok((p.cpu_of_task, Some(p.heuristic)));
    }
    let from_file: Result<Vec<u32>, String> = ts.tasks
        .iter()
        .map(|t| {
            t.cpu.ok_or_else(|| {
                format!(
                    "{}: task '{}': field 'cpu': missing; the partitioned scheduler '{}' needs every task's CPU",
                    ts.source, t.name, spec.name
                )
            })
        })
        .collect();
    Ok((from_file?, None))
}

/// The options of the distributed-run-queue policies: `push=VARIANT` (also bare when
/// `bare_is_push`), `measure[=on|off]`; returns the remaining options as a spec.
fn dist_options(spec: &SchedulerSpec, bare_is_push: bool) -> Result<(Option<crate::gedf_dist::PushFind>, bool, SchedulerSpec), String> {
    let (mut find, mut measure) = (None, false);
    let mut rest = SchedulerSpec { name: spec.name.clone(), options: Vec::new() };
    for (k, v) in &spec.options {
        match (k.as_str(), v.as_str()) {
            ("", "measure") | ("measure", "on" | "true" | "1") => measure = true,
            ("measure", "off" | "false" | "0") => measure = false,
            ("measure", other) => return Err(format!("scheduler '{}': measure={other}: expected on or off", spec.name)),
            ("push", v) | ("", v) if k == "push" || bare_is_push => {
                find = Some(crate::gedf_dist::PushFind::parse(v).ok_or_else(|| {
                    format!("scheduler '{}': unknown push variant '{v}' (known: linear, fmask, heap, cpupri)", spec.name)
                })?);
            }
            _ => rest.options.push((k.clone(), v.clone())),
        }
    }
    if bare_is_push {
        rest.option("push", &["push", "measure"])?;
    }
    Ok((find, measure, rest))
}

/// Build the policy `spec` for task set `ts`.
pub fn build(spec: &str, ts: &TaskSet) -> Result<Box<dyn Policy>, String> {
    let s = SchedulerSpec::parse(spec)?;
    let m = ts.platform.cpus;
    Ok(match s.name.as_str() {
        "gedf" | "gnpedf" | "gfifo" => {
            s.option("", &[])?;
            match s.name.as_str() {
                "gedf" => Box::new(crate::gedf::gedf(m)),
                "gnpedf" => Box::new(crate::gnpedf::gnpedf(m)),
                _ => Box::new(crate::gfifo::gfifo(m)),
            }
        }
        "pedf" => {
            s.option("partition", &["partition"])?;
            let (p, how) = partition_labelled(&s, ts)?;
            let label = how.map_or("pedf".to_string(), |h| format!("pedf:{h}"));
            Box::new(crate::pedf::pedf(label, m, p))
        }
        "gfp" => {
            let (p, label) = priorities(&s, ts)?;
            Box::new(crate::gfp::gfp(label, m, p))
        }
        "pfp" => {
            let (p, label) = priorities(&s, ts)?;
            let (cpus, how) = partition_labelled(&s, ts)?;
            let label = how.map_or(label.clone(), |h| format!("{label},partition={h}"));
            Box::new(crate::pfp::pfp(label, m, cpus, p))
        }
        "gedf-dist" => {
            let (find, measure, _) = dist_options(&s, true)?;
            let find = find.unwrap_or(crate::gedf_dist::PushFind::Heap);
            if find == crate::gedf_dist::PushFind::Cpupri {
                return Err("scheduler 'gedf-dist': push=cpupri is for fixed priority (use gfp-dist); EDF's push variants: linear, fmask, heap".into());
            }
            Box::new(crate::gedf_dist::gedf_dist(m, find, measure))
        }
        "gfp-dist" => {
            let (find, measure, rest) = dist_options(&s, false)?;
            let (p, label) = priorities(&rest, ts)?;
            Box::new(crate::gfp_dist::gfp_dist(label, m, p, find.unwrap_or(crate::gedf_dist::PushFind::Cpupri), measure))
        }
        _ => unreachable!("parse checked the name"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::Task;

    #[test]
    fn specs() {
        assert!(SchedulerSpec::parse("gedff").unwrap_err().contains("did you mean 'gedf'"));
        let ts = TaskSet::new(2, vec![Task::periodic("a", 10, 1), Task::periodic("b", 5, 1)]);
        assert_eq!(build("gfp", &ts).unwrap().name(), "gfp:rm");
        assert_eq!(build("gfp:dm", &ts).unwrap().name(), "gfp:dm");
        assert!(build("gfp:file", &ts).err().unwrap().contains("'priority'"));
        assert!(build("gedf:fast", &ts).err().unwrap().contains("takes no options"));
        assert!(build("pedf", &ts).err().unwrap().contains("field 'cpu'"));
        assert_eq!(build("gedf-dist", &ts).unwrap().name(), "gedf-dist:heap");
        assert_eq!(build("gedf-dist:linear,measure", &ts).unwrap().name(), "gedf-dist:linear,measure");
        assert_eq!(build("gedf-dist:push=fmask", &ts).unwrap().name(), "gedf-dist:fmask");
        assert!(build("gedf-dist:cpupri", &ts).err().unwrap().contains("gfp-dist"));
        assert!(build("gedf-dist:tree", &ts).err().unwrap().contains("unknown push variant"));
        assert!(build("gedf-dist:heap,prio=rm", &ts).err().unwrap().contains("no option 'prio'"));
        assert_eq!(build("gfp-dist", &ts).unwrap().name(), "gfp-dist:rm,push=cpupri");
        assert_eq!(build("gfp-dist:dm,push=heap", &ts).unwrap().name(), "gfp-dist:dm,push=heap");
    }

    #[test]
    fn partitioned_policies_can_partition() {
        use rtsched_model::time::NS_PER_MS;
        // u = .6, .5, .4, .3 on 2 CPUs; no `cpu` fields.
        let tasks: Vec<Task> = [6, 5, 4, 3].iter().enumerate().map(|(i, &c)| Task::periodic(format!("t{i}"), 10 * NS_PER_MS, c * NS_PER_MS)).collect();
        let ts = TaskSet::new(2, tasks.clone());
        let cpus = |spec: &str| partition(&SchedulerSpec::parse(spec).unwrap(), &ts);
        assert_eq!(cpus("pedf:ffd").unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(cpus("pedf:partition=wfd").unwrap(), vec![0, 1, 1, 0]);
        assert_eq!(cpus("pedf:lwfg+ffd").unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(cpus("pfp:partition=ffd").unwrap(), vec![0, 1, 0, 1]);
        assert!(build("pedf:ffd", &ts).is_ok());
        assert!(build("pfp:prio=dm,partition=bfd", &ts).is_ok());
        assert!(build("pfp:partition=ffd,prio=rm", &ts).is_ok());
        assert!(build("pedf:fdd", &ts).err().unwrap().contains("unknown partitioner 'fdd'"));
        assert!(build("pfp:ffd", &ts).err().unwrap().contains("unknown priority assignment 'ffd'"));
        assert!(build("gfp:partition=ffd", &ts).err().unwrap().contains("no option 'partition'"));
        assert!(build("pedf:global", &ts).err().unwrap().contains("use a global scheduler"));
        // RM admission is stricter than EDF: (1,4), (2,6), (4,10) ms fit one CPU under EDF only.
        let ms = |x: u64| x * NS_PER_MS;
        let one = TaskSet::new(1, vec![Task::periodic("a", ms(4), ms(1)), Task::periodic("b", ms(6), ms(2)), Task::periodic("c", ms(10), ms(4))]);
        assert!(partition(&SchedulerSpec::parse("pedf:ffd").unwrap(), &one).is_ok());
        let e = partition(&SchedulerSpec::parse("pfp:partition=ffd").unwrap(), &one).unwrap_err();
        // FFD takes c (.4), b (.33), then a (.25), whose arrival pushes c's response time past 10 ms.
        assert!(e.contains("task 'a'") && e.contains("fp-rta"), "{e}");
    }
}
