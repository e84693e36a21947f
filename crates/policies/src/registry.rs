//! Every policy by name: the list users see (`rtsched schedulers`) and the constructor the
//! substrates call. A scheduler is written `NAME[:OPTION[,KEY=VALUE...]]`, e.g. `gedf`,
//! `gfp:rm`, `pfp:prio=dm`. A bare option is the policy's main option (`prio` for
//! fixed-priority policies).
//!
//! The registry knows no policy by name: each policy file exports its description
//! (`pub const INFO: PolicyInfo`) and its constructor (`pub fn build(spec, ctx)`, see
//! [`crate::ctx`] for what it is handed), and [`ENTRIES`] lists them. Adding a policy is one
//! new file, its `pub mod` in lib.rs and one line in [`ENTRIES`].

use crate::ctx::BuildCtx;
use crate::policy::Policy;
use crate::spec::{PolicyInfo, SchedulerSpec, Takes};
use crate::{
    cfs, dasa, federated, gedf, gedf_dist, gedf_seq, gfifo, gfp, gfp_dist, ggua, ghvdf, gnpedf,
    lbesa, linux, nggua, paws, pedf, pfp,
};
use rtsched_model::text::closest;
use rtsched_model::{Task, TaskSet};

/// A policy's constructor: from its parsed spec (whose name is the policy's) and the build
/// context. It validates the options, so its errors name what the user wrote.
pub type BuildFn = fn(&SchedulerSpec, &mut BuildCtx<'_>) -> Result<Box<dyn Policy>, String>;

/// One policy of the registry.
#[derive(Clone, Copy)]
pub struct Entry {
    pub info: PolicyInfo,
    pub build: BuildFn,
}

/// Every policy, in the order `rtsched schedulers` lists them.
pub const ENTRIES: &[Entry] = &[
    Entry {
        info: gedf::INFO,
        build: gedf::build,
    },
    Entry {
        info: gnpedf::INFO,
        build: gnpedf::build,
    },
    Entry {
        info: pedf::INFO,
        build: pedf::build,
    },
    Entry {
        info: gfp::INFO,
        build: gfp::build,
    },
    Entry {
        info: pfp::INFO,
        build: pfp::build,
    },
    Entry {
        info: gedf_dist::INFO,
        build: gedf_dist::build,
    },
    Entry {
        info: gfp_dist::INFO,
        build: gfp_dist::build,
    },
    Entry {
        info: gfifo::INFO,
        build: gfifo::build,
    },
    Entry {
        info: paws::INFO,
        build: paws::build,
    },
    Entry {
        info: federated::INFO,
        build: federated::build,
    },
    Entry {
        info: gedf_seq::INFO,
        build: gedf_seq::build,
    },
    Entry {
        info: ggua::INFO,
        build: ggua::build,
    },
    Entry {
        info: nggua::INFO,
        build: nggua::build,
    },
    Entry {
        info: ghvdf::INFO,
        build: ghvdf::build,
    },
    Entry {
        info: dasa::INFO,
        build: dasa::build,
    },
    Entry {
        info: dasa::INFO_PARTITIONED,
        build: dasa::build,
    },
    Entry {
        info: lbesa::INFO,
        build: lbesa::build,
    },
    Entry {
        info: cfs::INFO,
        build: cfs::build,
    },
    Entry {
        info: linux::INFO,
        build: linux::build,
    },
];

/// The descriptions of [`ENTRIES`], in their order (what the CLI and the Python package list).
pub const POLICIES: &[PolicyInfo] = &infos::<{ ENTRIES.len() }>();

const fn infos<const N: usize>() -> [PolicyInfo; N] {
    let mut out = [ENTRIES[0].info; N];
    let mut i = 0;
    while i < N {
        out[i] = ENTRIES[i].info;
        i += 1;
    }
    out
}

/// The registry entry of policy `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.info.name == name)
}

pub fn names() -> Vec<&'static str> {
    POLICIES.iter().map(|p| p.name).collect()
}

impl SchedulerSpec {
    /// Parse `NAME[:OPTION[,KEY=VALUE...]]`, checking the name against the registry (hence
    /// here and not beside the type: the policies name the type, the registry names them).
    pub fn parse(spec: &str) -> Result<SchedulerSpec, String> {
        let s = SchedulerSpec::split(spec);
        if find(&s.name).is_none() {
            let hint = closest(&s.name, &names())
                .map(|c| format!(" (did you mean '{c}'?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown scheduler '{}'{hint}; known schedulers: {}",
                s.name,
                names().join(", ")
            ));
        }
        Ok(s)
    }
}

/// The policies that take `what` ([`PolicyInfo::takes`]), in the registry's order.
pub fn taking(what: impl Fn(&Takes) -> bool) -> Vec<&'static str> {
    POLICIES
        .iter()
        .filter(|p| what(&p.takes))
        .map(|p| p.name)
        .collect()
}

/// Why policy `info` does not take the set `ts`: a task with a part the policy does not run
/// ([`PolicyInfo::takes`]: best-effort tasks first, then DAG tasks, fork-join tasks and
/// critical sections), naming the file, the task and the field, and the policies that take
/// it. `None` when it takes every part of the set. [`build_for`] asks it before building.
pub fn refusal(info: &PolicyInfo, ts: &TaskSet) -> Option<String> {
    if let Some(t) = ts.tasks.iter().find(|t| t.is_fair()) {
        if !info.takes.fair {
            return Some(format!(
                "{}: task '{}' is best-effort (class: fair) and scheduler '{}' has no fair class; use {}",
                ts.source,
                t.name,
                info.name,
                taking(|k| k.fair).join(" or ")
            ));
        }
    }
    type Part = (
        fn(&Takes) -> bool,
        fn(&Task) -> bool,
        &'static str,
        &'static str,
    );
    let parts: [Part; 3] = [
        (|k| k.dag, |t| t.dag.is_some(), "dag", "DAG tasks"),
        (
            |k| k.fork_join,
            |t| t.dag.is_none() && t.is_parallel(),
            "regions",
            "parallel (fork-join) tasks",
        ),
        (
            |k| k.sections,
            |t| !t.sections.is_empty(),
            "sections",
            "critical sections",
        ),
    ];
    for (takes, has, field, what) in parts {
        if takes(&info.takes) {
            continue;
        }
        if let Some(t) = ts.tasks.iter().find(|t| has(t)) {
            return Some(format!(
                "{}: task '{}': field '{field}': scheduler '{}' does not run {what}; {} do",
                ts.source,
                t.name,
                info.name,
                taking(takes).join(", ")
            ));
        }
    }
    None
}

/// Why a policy does not build for a task set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// The set's tasks do not fit on its CPUs under the partitioner (or federated placement)
    /// the spec chose ([`BuildCtx::unplaced`]): the set's failure, not the spec's.
    Unplaced(String),
    /// Any other refusal: an unknown name or option, or a set the policy cannot run (its
    /// message says which).
    Refused(String),
}

impl From<BuildError> for String {
    fn from(e: BuildError) -> String {
        match e {
            BuildError::Unplaced(m) | BuildError::Refused(m) => m,
        }
    }
}

/// Build the policy `spec` for task set `ts`; a placement failure is told apart from other
/// refusals ([`BuildError`]).
pub fn build_for(spec: &str, ts: &TaskSet) -> Result<Box<dyn Policy>, BuildError> {
    let s = SchedulerSpec::parse(spec).map_err(BuildError::Refused)?;
    let entry = find(&s.name).expect("parse checked the name");
    build_entry(&entry.info, entry.build, &s, ts)
}

/// Build `s` by `build` for `ts`, refused first by what `info` says the policy takes.
fn build_entry(
    info: &PolicyInfo,
    build: BuildFn,
    s: &SchedulerSpec,
    ts: &TaskSet,
) -> Result<Box<dyn Policy>, BuildError> {
    if let Some(m) = refusal(info, ts) {
        return Err(BuildError::Refused(m));
    }
    let mut ctx = BuildCtx::new(ts);
    build(s, &mut ctx).map_err(|m| {
        if ctx.is_unplaced() {
            BuildError::Unplaced(m)
        } else {
            BuildError::Refused(m)
        }
    })
}

/// Build the policy `spec` for task set `ts` (the message of [`build_for`]'s error).
pub fn build(spec: &str, ts: &TaskSet) -> Result<Box<dyn Policy>, String> {
    build_for(spec, ts).map_err(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::ua;
    use crate::spec::Partitioning;
    use rtsched_model::Task;

    /// The partition a partitioned policy's spec yields (`pedf` and `pfp`).
    fn partition(spec: &SchedulerSpec, ts: &TaskSet) -> Result<Vec<u32>, String> {
        let ctx = BuildCtx::new(ts);
        let p = match spec.name.as_str() {
            "pedf" => pedf::partition(spec, &ctx),
            "pfp" => pfp::partition(spec, &ctx),
            other => panic!("'{other}' is not a partitioned policy"),
        };
        p.map(|(p, _)| p)
    }

    #[test]
    fn entries_are_distinct_and_listed_in_order() {
        assert_eq!(POLICIES.len(), ENTRIES.len());
        for (i, (p, e)) in POLICIES.iter().zip(ENTRIES).enumerate() {
            assert_eq!(p.name, e.info.name);
            assert!(
                ENTRIES[..i].iter().all(|o| o.info.name != p.name),
                "'{}' listed twice",
                p.name
            );
            assert_eq!(SchedulerSpec::parse(p.name).unwrap().name, p.name);
        }
        assert_eq!(
            names(),
            [
                "gedf",
                "gnpedf",
                "pedf",
                "gfp",
                "pfp",
                "gedf-dist",
                "gfp-dist",
                "gfifo",
                "paws",
                "federated",
                "gedf-seq",
                "ggua",
                "nggua",
                "ghvdf",
                "dasa",
                "pdasa",
                "lbesa",
                "cfs",
                "linux"
            ]
        );
    }

    #[test]
    fn specs() {
        assert!(SchedulerSpec::parse("gedff")
            .unwrap_err()
            .contains("did you mean 'gedf'"));
        let ts = TaskSet::new(
            2,
            vec![Task::periodic("a", 10, 1), Task::periodic("b", 5, 1)],
        );
        assert_eq!(build("gfp", &ts).unwrap().name(), "gfp:rm");
        assert_eq!(build("gfp:dm", &ts).unwrap().name(), "gfp:dm");
        assert!(build("gfp:file", &ts).err().unwrap().contains("'priority'"));
        assert!(build("gedf:fast", &ts)
            .err()
            .unwrap()
            .contains("no option 'fast'"));
        assert!(build("pedf", &ts).err().unwrap().contains("field 'cpu'"));
        assert_eq!(build("gedf-dist", &ts).unwrap().name(), "gedf-dist:heap");
        assert_eq!(
            build("gedf-dist:linear,measure", &ts).unwrap().name(),
            "gedf-dist:linear,measure"
        );
        assert_eq!(
            build("gedf-dist:push=fmask", &ts).unwrap().name(),
            "gedf-dist:fmask"
        );
        assert!(build("gedf-dist:cpupri", &ts)
            .err()
            .unwrap()
            .contains("gfp-dist"));
        assert!(build("gedf-dist:tree", &ts)
            .err()
            .unwrap()
            .contains("unknown push variant"));
        assert!(build("gedf-dist:heap,prio=rm", &ts)
            .err()
            .unwrap()
            .contains("no option 'prio'"));
        assert_eq!(
            build("gedf-dist:heap,wake=free", &ts).unwrap().name(),
            "gedf-dist:heap,wake=free"
        );
        assert_eq!(
            build("gedf-dist:wake=last", &ts).unwrap().name(),
            "gedf-dist:heap"
        );
        assert!(build("gedf-dist:wake=near", &ts)
            .err()
            .unwrap()
            .contains("wake=near: expected last or free"));
        assert_eq!(
            build("gfp-dist", &ts).unwrap().name(),
            "gfp-dist:rm,push=cpupri"
        );
        assert_eq!(
            build("gfp-dist:dm,push=heap", &ts).unwrap().name(),
            "gfp-dist:dm,push=heap"
        );
    }

    #[test]
    fn partitioned_policies_can_partition() {
        use rtsched_model::time::NS_PER_MS;
        // u = .6, .5, .4, .3 on 2 CPUs; no `cpu` fields.
        let tasks: Vec<Task> = [6, 5, 4, 3]
            .iter()
            .enumerate()
            .map(|(i, &c)| Task::periodic(format!("t{i}"), 10 * NS_PER_MS, c * NS_PER_MS))
            .collect();
        let ts = TaskSet::new(2, tasks.clone());
        let cpus = |spec: &str| partition(&SchedulerSpec::parse(spec).unwrap(), &ts);
        assert_eq!(cpus("pedf:ffd").unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(cpus("pedf:partition=wfd").unwrap(), vec![0, 1, 1, 0]);
        assert_eq!(cpus("pedf:lwfg+ffd").unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(cpus("pfp:partition=ffd").unwrap(), vec![0, 1, 0, 1]);
        assert!(build("pedf:ffd", &ts).is_ok());
        assert!(build("pfp:prio=dm,partition=bfd", &ts).is_ok());
        assert!(build("pfp:partition=ffd,prio=rm", &ts).is_ok());
        assert!(build("pedf:fdd", &ts)
            .err()
            .unwrap()
            .contains("unknown partitioner 'fdd'"));
        assert!(build("pfp:ffd", &ts)
            .err()
            .unwrap()
            .contains("unknown priority assignment 'ffd'"));
        assert!(build("gfp:partition=ffd", &ts)
            .err()
            .unwrap()
            .contains("no option 'partition'"));
        assert!(build("pedf:global", &ts)
            .err()
            .unwrap()
            .contains("use a global scheduler"));
        // A chain is labelled with its whole name, whichever of its heuristics placed the
        // tasks, and is written with '+' only (',' separates options).
        assert_eq!(build("pedf:lwfg+ffd", &ts).unwrap().name(), "pedf:lwfg+ffd");
        assert_eq!(
            build("pedf:partition= lwfg + ffd", &ts).unwrap().name(),
            "pedf:lwfg+ffd"
        );
        assert_eq!(build("pedf:ffd", &ts).unwrap().name(), "pedf:ffd");
        assert_eq!(
            build("pfp:rm,partition=lwfg+ffd", &ts).unwrap().name(),
            "pfp:rm,partition=lwfg+ffd"
        );
        let e = build("pedf:lwfg,ffd", &ts).err().unwrap();
        assert!(
            e.contains("2 partitioners given (lwfg, ffd)") && e.contains("pedf:lwfg+ffd"),
            "{e}"
        );
        let e = build("pfp:partition=lwfg,partition=ffd", &ts)
            .err()
            .unwrap();
        assert!(e.contains("pfp:partition=lwfg+ffd"), "{e}");
        // RM admission is stricter than EDF: (1,4), (2,6), (4,10) ms fit one CPU under EDF only.
        let ms = |x: u64| x * NS_PER_MS;
        let one = TaskSet::new(
            1,
            vec![
                Task::periodic("a", ms(4), ms(1)),
                Task::periodic("b", ms(6), ms(2)),
                Task::periodic("c", ms(10), ms(4)),
            ],
        );
        assert!(partition(&SchedulerSpec::parse("pedf:ffd").unwrap(), &one).is_ok());
        let e = partition(&SchedulerSpec::parse("pfp:partition=ffd").unwrap(), &one).unwrap_err();
        // FFD takes c (.4), b (.33), then a (.25), whose arrival pushes c's response time past 10 ms.
        assert!(e.contains("task 'a'") && e.contains("fp-rta"), "{e}");
    }

    fn yaml(text: &str) -> TaskSet {
        rtsched_model::file::parse_taskset(text, rtsched_model::file::Format::Yaml, "t.yaml")
            .unwrap()
    }

    /// The spec of `info`'s policy that names partitioner `heuristic` as its description says.
    fn with_heuristic(info: &PolicyInfo, heuristic: &str) -> String {
        match info.partition {
            Some(p) if p.bare => format!("{}:{heuristic}", info.name),
            _ => format!("{}:partition={heuristic}", info.name),
        }
    }

    /// `Err(why)` unless `check` holds.
    macro_rules! check {
        ($check:expr, $($why:tt)*) => {
            if !$check {
                return Err(format!($($why)*));
            }
        };
    }

    /// Whether the policy built by `build` behaves as `info` describes it: the traits its
    /// built policy reports, the TUFs it refuses, the partial priorities it refuses, the
    /// partition it needs and takes (with the heuristics and admission declared), the
    /// best-effort tasks it takes. `Err` says the first difference.
    fn as_described(info: &PolicyInfo, build: BuildFn) -> Result<(), String> {
        use crate::spec::{PartitionAdmission, Tufs};
        let run = |spec: &str, ts: &TaskSet| {
            build_entry(info, build, &SchedulerSpec::parse(spec).unwrap(), ts)
        };
        let name = info.name;
        let probe = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0, priority: 1}\n");
        let rising = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0, tuf: {shape: piecewise, points: [[0, 1], [5ms, 2]]}}\n");
        let partial = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0, priority: 1}\n  - {name: b, period: 20, wcet: 1, cpu: 0}\n");
        let unplaced = yaml("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 1}\n  - {name: b, period: 20, wcet: 1}\n");
        // Fits one CPU under EDF, not under RM ((1,4), (2,6), (4,10) ms: U = .983).
        let edf_only = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 4, wcet: 1}\n  - {name: b, period: 6, wcet: 2}\n  - {name: c, period: 10, wcet: 4}\n");
        let fair = yaml("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 1, cpu: 0}\n  - {name: f, class: fair}\n");
        let p = run(name, &probe).map_err(String::from)?;
        check!(p.uses_tufs() == (info.tufs != Tufs::Ignored), "tufs");
        check!(
            p.resolves_deadlocks() == info.resolves_deadlocks,
            "resolves_deadlocks"
        );
        check!(
            p.grants_resources() == info.grants_resources,
            "grants_resources"
        );
        let r = run(name, &rising).map_err(String::from);
        let refused = r
            .as_ref()
            .err()
            .is_some_and(|m| m.contains("task 'a': field 'tuf'"));
        check!(
            refused == (info.tufs == Tufs::NonIncreasing),
            "tufs: a rising one {r:?}",
            r = r.err()
        );
        let r = run(name, &partial).map_err(String::from);
        if info.fixed_priorities {
            let want = format!("t.yaml: task 'b': field 'priority': missing, while other tasks have one; give every task a priority, or choose {name}:rm / {name}:dm");
            check!(
                r.as_ref().err() == Some(&want),
                "fixed_priorities: {:?}",
                r.err()
            );
            check!(
                run(&format!("{name}:dm"), &partial).is_ok(),
                "fixed_priorities: {name}:dm"
            );
        } else {
            check!(r.is_ok(), "fixed_priorities: {:?}", r.err());
        }
        match info.partition {
            Some(how) => {
                let m = run(name, &unplaced)
                    .err()
                    .map(String::from)
                    .unwrap_or_default();
                check!(
                    m.contains("task 'a': field 'cpu'"),
                    "partition: no cpu fields: {m:?}"
                );
                for h in ["ffd", "wfd", "lwfg+ffd"].iter().chain(how.own) {
                    let spec = with_heuristic(info, h);
                    check!(run(&spec, &unplaced).is_ok(), "partition: {spec}");
                }
                let spec = with_heuristic(info, "ffd");
                let placed =
                    run(&format!("{spec},prio=rm"), &edf_only).or_else(|_| run(&spec, &edf_only));
                let fp_refused =
                    matches!(placed, Err(BuildError::Unplaced(ref m)) if m.contains("fp-rta"));
                let ok = match how.admission {
                    PartitionAdmission::EdfExact => placed.is_ok(),
                    PartitionAdmission::FpRta => fp_refused,
                };
                check!(ok, "partition: admission {:?} ({spec})", how.admission);
            }
            None => check!(
                run(name, &unplaced).is_ok(),
                "partition: none, yet it needs one"
            ),
        }
        let r = run(name, &fair).map_err(String::from);
        if info.takes.fair {
            check!(r.is_ok(), "takes.fair: {:?}", r.err());
        } else {
            let fair = taking(|k| k.fair).join(" or ");
            let want = format!("t.yaml: task 'f' is best-effort (class: fair) and scheduler '{name}' has no fair class; use {fair}");
            check!(r.as_ref().err() == Some(&want), "takes.fair: {:?}", r.err());
        }
        Ok(())
    }

    /// Every registered policy behaves as its description says.
    #[test]
    fn every_policy_is_as_its_description_says() {
        for e in ENTRIES {
            if let Err(why) = as_described(&e.info, e.build) {
                panic!("{}: not as described: {why}", e.info.name);
            }
        }
    }

    /// The control: a description that differs from its policy in any one field is caught
    /// (lbesa's and gfp's, each field changed in turn).
    #[test]
    fn a_wrong_description_is_caught() {
        use crate::spec::{PartitionAdmission, Tufs};
        let lbesa = find("lbesa").unwrap();
        let gfp = find("gfp").unwrap();
        let i = lbesa.info;
        let fp = PartitionAdmission::FpRta;
        let wrong = [
            (
                lbesa,
                PolicyInfo {
                    partition: None,
                    ..i
                },
                "partition",
            ),
            (
                lbesa,
                PolicyInfo {
                    partition: Some(Partitioning {
                        admission: fp,
                        ..ua::PARTITION
                    }),
                    ..i
                },
                "partition: admission",
            ),
            (
                lbesa,
                PolicyInfo {
                    fixed_priorities: true,
                    ..i
                },
                "fixed_priorities",
            ),
            (
                lbesa,
                PolicyInfo {
                    tufs: Tufs::Ignored,
                    ..i
                },
                "tufs",
            ),
            (
                lbesa,
                PolicyInfo {
                    resolves_deadlocks: true,
                    ..i
                },
                "resolves_deadlocks",
            ),
            (
                lbesa,
                PolicyInfo {
                    grants_resources: false,
                    ..i
                },
                "grants_resources",
            ),
            (
                gfp,
                PolicyInfo {
                    fixed_priorities: false,
                    ..gfp.info
                },
                "fixed_priorities",
            ),
            (
                gfp,
                PolicyInfo {
                    partition: Some(pfp::PARTITION),
                    ..gfp.info
                },
                "partition",
            ),
        ];
        for (e, info, field) in wrong {
            let why = as_described(&info, e.build).expect_err(field);
            assert!(why.starts_with(field), "{field}: {why}");
        }
    }

    /// A policy that takes none of a set's parts is refused before it is built, naming the
    /// task, the field and the policies that take it (none registered today lacks one; the
    /// description of a new one may).
    #[test]
    fn what_a_policy_does_not_take_is_refused_naming_the_task_and_field() {
        let none = Takes {
            fork_join: false,
            dag: false,
            sections: false,
            fair: false,
        };
        let info = PolicyInfo {
            name: "narrow",
            takes: none,
            ..gedf::INFO
        };
        let ts = yaml("platform: {cpus: 2}\ntasks:\n  - {name: s, period: 10, wcet: 1}\n  - {name: p, period: 10, regions: [1, [2, 2]]}\n  - {name: d, period: 20, dag: {nodes: {x: 1, y: 2}, edges: [[x, y]]}}\n  - {name: c, period: 10, wcet: 4, sections: [{resource: r, start: 0, length: 1}]}\n");
        assert_eq!(
            refusal(&info, &ts).unwrap(),
            "t.yaml: task 'd': field 'dag': scheduler 'narrow' does not run DAG tasks; gedf, gnpedf, pedf, gfp, pfp, gedf-dist, gfp-dist, gfifo, paws, federated, gedf-seq, ggua, nggua, ghvdf, dasa, pdasa, lbesa, cfs, linux do"
        );
        let dag = Takes { dag: true, ..none };
        let m = refusal(&PolicyInfo { takes: dag, ..info }, &ts).unwrap();
        assert!(
            m.starts_with("t.yaml: task 'p': field 'regions': scheduler 'narrow' does not run parallel (fork-join) tasks;"),
            "{m}"
        );
        let forks = Takes {
            fork_join: true,
            ..dag
        };
        let m = refusal(
            &PolicyInfo {
                takes: forks,
                ..info
            },
            &ts,
        )
        .unwrap();
        assert!(
            m.starts_with("t.yaml: task 'c': field 'sections': scheduler 'narrow' does not run critical sections;"),
            "{m}"
        );
        let all = Takes {
            sections: true,
            ..forks
        };
        assert_eq!(refusal(&PolicyInfo { takes: all, ..info }, &ts), None);
        for e in ENTRIES {
            assert_eq!(refusal(&e.info, &ts), None, "{}", e.info.name);
        }
    }
}
