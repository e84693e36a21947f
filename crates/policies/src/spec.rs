//! What a policy file hands the registry besides its constructor, and what the constructor
//! reads: the policy's description ([`PolicyInfo`], its `pub const INFO`) and the scheduler as
//! the user wrote it, parsed ([`SchedulerSpec`]). Below both the policies and the registry, so
//! that the registry can list the policies without the policies naming the registry.
//! [`SchedulerSpec::parse`] is in [`crate::registry`]: it checks the name against the list.

/// What users are told of a policy (`rtsched schedulers`, the Python package's list), and what
/// it takes and needs of a task set: read by the registry's checks ([`crate::registry`]
/// refuses a set with parts the policy does not take, before building it) and by the CLI
/// (which policies `--partition` reaches, which use TUFs or resolve deadlocks), instead of
/// lists of names. Every field is required, so a new policy says each; a test builds every
/// registered policy and checks that it behaves as its description says.
#[derive(Clone, Copy, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Where it comes from.
    pub paper: &'static str,
    /// Options it takes, for the help text.
    pub options: &'static str,
    /// Whether it runs each CPU's tasks apart on a partition, and how the partition is chosen.
    /// `None`: it places tasks itself (global, federated, or the tasks' own `cpu` pins).
    pub partition: Option<Partitioning>,
    /// Whether it orders jobs by fixed task priorities, chosen by `prio=file|rm|dm` under the
    /// one rule of every fixed-priority scheduler (`rtsched_analysis::priority::assign`): a
    /// set where only some tasks have a priority is refused unless an assignment is named.
    pub fixed_priorities: bool,
    /// The parts of a task set it runs; a set with another is refused before the policy is
    /// built ([`crate::registry::build_for`]).
    pub takes: Takes,
    /// What it does with the tasks' time-utility functions.
    pub tufs: Tufs,
    /// Whether it breaks a deadlock by aborting a job ([`crate::Policy::resolves_deadlocks`]);
    /// else a deadlock stops the run.
    pub resolves_deadlocks: bool,
    /// Whether it chooses who gets a freed resource ([`crate::Policy::grants_resources`]);
    /// else the longest waiter gets it (FIFO).
    pub grants_resources: bool,
}

/// How a partitioned policy gets its partition (`ctx::BuildCtx::partition_labelled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// The bare option names the heuristic (`pedf:ffd`); else only `partition=NAME` does (the
    /// bare option is another: `pfp:rm,partition=ffd`).
    pub bare: bool,
    /// The test that admits a task to a CPU when a heuristic places it.
    pub admission: PartitionAdmission,
    /// Heuristics of the policy's own besides every partitioner of
    /// `rtsched_analysis::partition::by_name` (ffd, wfd, lwfg, chains, ...).
    pub own: &'static [&'static str],
}

/// What decides, in [`Partitioning`], whether a task fits a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionAdmission {
    /// The exact uniprocessor EDF test.
    EdfExact,
    /// Response-time analysis under the policy's fixed priorities.
    FpRta,
}

impl PartitionAdmission {
    /// Its name (`rtsched_analysis::partition::Admission::name`).
    pub fn name(self) -> &'static str {
        match self {
            PartitionAdmission::EdfExact => "edf-exact",
            PartitionAdmission::FpRta => "fp-rta",
        }
    }
}

/// The parts of a task set a policy runs ([`PolicyInfo::takes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Takes {
    /// Parallel fork-join tasks (`regions`): each region's threads reach it as entities.
    pub fork_join: bool,
    /// DAG tasks (`dag`): each node reaches it as an entity when its predecessors are done.
    pub dag: bool,
    /// Critical sections (`sections`) on shared resources.
    pub sections: bool,
    /// Best-effort tasks (`class: fair`).
    pub fair: bool,
}

impl Takes {
    /// Every part but best-effort tasks: what the real-time policies take.
    pub const REAL_TIME: Takes = Takes {
        fork_join: true,
        dag: true,
        sections: true,
        fair: false,
    };
}

/// What a policy does with time-utility functions ([`PolicyInfo::tufs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tufs {
    /// It ignores them (the run still measures the accrued utility).
    Ignored,
    /// It decides by them (utility accrual) and needs each to be non-increasing: a set with
    /// an increasing one is refused.
    NonIncreasing,
}

/// A parsed scheduler spec, `NAME[:OPTION[,KEY=VALUE...]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerSpec {
    pub name: String,
    /// (key, value); a bare option has key "".
    pub options: Vec<(String, String)>,
}

impl SchedulerSpec {
    /// `spec` cut at its colon and commas; the name is not checked.
    pub(crate) fn split(spec: &str) -> SchedulerSpec {
        let spec = spec.trim();
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut options = Vec::new();
        for part in rest.split(',').filter(|s| !s.is_empty()) {
            match part.split_once('=') {
                Some((k, v)) => options.push((k.trim().to_string(), v.trim().to_string())),
                None => options.push((String::new(), part.trim().to_string())),
            }
        }
        SchedulerSpec {
            name: name.to_string(),
            options,
        }
    }

    /// The value of option `key` (a bare option counts as `main`), checking no other is given.
    pub fn option(&self, main: &str, allowed: &[&str]) -> Result<Option<String>, String> {
        let mut v = None;
        for (k, val) in &self.options {
            let k = if k.is_empty() { main } else { k.as_str() };
            if !allowed.contains(&k) {
                let known = if allowed.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("known: {}", allowed.join(", "))
                };
                return Err(format!(
                    "scheduler '{}' has no option '{k}' ({known})",
                    self.name
                ));
            }
            if k == main {
                v = Some(val.clone());
            }
        }
        Ok(v)
    }
}
