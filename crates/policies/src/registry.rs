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
use crate::spec::{PolicyInfo, SchedulerSpec};
use crate::{
    cfs, dasa, federated, gedf, gedf_dist, gedf_seq, gfifo, gfp, gfp_dist, ggua, ghvdf, gnpedf,
    lbesa, linux, nggua, paws, pedf, pfp,
};
use rtsched_model::text::closest;
use rtsched_model::TaskSet;

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

/// The policies that schedule best-effort (fair-class) tasks.
pub const FAIR_CLASS: &[&str] = &["cfs", "linux"];

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
    if let Some(t) = ts.tasks.iter().find(|t| t.is_fair()) {
        if !FAIR_CLASS.contains(&s.name.as_str()) {
            return Err(BuildError::Refused(format!(
                "{}: task '{}' is best-effort (class: fair) and scheduler '{}' has no fair class; use {}",
                ts.source,
                t.name,
                s.name,
                FAIR_CLASS.join(" or ")
            )));
        }
    }
    let mut ctx = BuildCtx::new(ts);
    (entry.build)(&s, &mut ctx).map_err(|m| {
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
}
