//! The backend string `kernel:NAME[:OPTION...]` parsed once into a plan: which kernel policy
//! (SCHED_DEADLINE, SCHED_FIFO with its priorities and partition, SCHED_OTHER, rtsched's
//! sched_ext scheduler), with its label and each resource's mutex protocol (the file's
//! locking protocol, or the backend option's: inheritance, or under SCHED_FIFO the immediate
//! priority ceiling, one ceiling per resource, or an `msrp`/`mrsp` spin lock; `protocols.rs`);
//! and the
//! SCHED_DEADLINE runtime each thread reserves (the WCET plus an allowance, per lane).

use super::protocols;
use crate::lanes::lane_wcets;
use crate::options::RunError;
use crate::scx;
use crate::sys::MutexProtocol;
use rtsched_analysis::priority::{self, Priorities};
use rtsched_model::task::Behaviour;
use rtsched_model::{Class, SchedPolicy, TaskSet, Time};

#[derive(Clone, Debug, PartialEq)]
pub enum KernelPolicy {
    /// SCHED_DEADLINE; `reclaim` sets SCHED_FLAG_RECLAIM (GRUB bandwidth reclaiming).
    Deadline {
        reclaim: bool,
    },
    /// SCHED_FIFO priority per task (1..=99) and optional CPU per task.
    Fifo {
        prio: Vec<u32>,
        cpu: Vec<Option<u32>>,
        label: String,
    },
    Other,
    /// `kernel:linux`: each task under its own Linux policy (`policy` in the file, else
    /// `run.default_policy`, else SCHED_DEADLINE with runtime = WCET; a best-effort task
    /// SCHED_OTHER at its nice), as the `linux` scheduler stacks them (docs/linux-classes.md).
    Linux {
        policies: Vec<SchedPolicy>,
        /// Per task, each lane's SCHED_DEADLINE runtime as `linux` reserves it
        /// ([`rtsched_policies::linux::lane_runtimes`]); empty for the other policies.
        runtimes: Vec<Vec<Time>>,
        /// SCHED_FLAG_RECLAIM (GRUB) for every deadline task.
        reclaim: bool,
    },
    /// rtsched's sched_ext scheduler (crates/scx) in `mode` (gedf, gedf-linear, pedf): each
    /// thread registers its timing ([`crate::scx`]) and runs under SCHED_EXT; `cpu` is the
    /// P-EDF partition.
    Scx {
        mode: String,
        cpu: Vec<Option<u32>>,
    },
}

pub struct KernelPlan {
    pub policy: KernelPolicy,
    pub label: String,
    /// Per resource, its mutex's protocol ([`super::protocols`]): the file's locking protocol
    /// where it names one (`pip`: `PTHREAD_PRIO_INHERIT`; `pcp` under SCHED_FIFO:
    /// `PTHREAD_PRIO_PROTECT` at the resource's ceiling, the highest SCHED_FIFO priority of
    /// the threads of its users, 1 for a resource nobody uses), else the backend option's
    /// (`pi`, `pcp`), else none.
    pub mutexes: Vec<MutexProtocol>,
    /// Per resource, its spin lock's rule under kernel:fifo (a global `msrp` resource, an
    /// `mrsp` one: [`protocols::SpinRule`]), `None` for a mutex.
    pub spins: Vec<Option<protocols::SpinRule>>,
}

/// Map priorities (larger = more urgent) onto SCHED_FIFO 10..=89 preserving their order;
/// rtsched's own threads stay below the kernel's threaded interrupts (50) only if few levels
/// are needed, so the order is what matters.
pub fn fifo_levels(prio: &[u32]) -> Vec<u32> {
    let mut levels: Vec<u32> = prio.to_vec();
    levels.sort_unstable();
    levels.dedup();
    let k = levels.len().max(2) as u32;
    prio.iter()
        .map(|p| {
            let i = levels.binary_search(p).expect("present") as u32;
            10 + i * 79 / (k - 1)
        })
        .collect()
}

/// Every option of `kernel:{name}` is one of `known`, and none is given twice.
pub(super) fn check_options(name: &str, known: &[&str], opts: &[&str]) -> Result<(), RunError> {
    for (i, o) in opts.iter().enumerate() {
        if !known.contains(o) {
            let what = if name == "fifo" {
                "option or priority assignment"
            } else {
                "option"
            };
            return Err(RunError::Input(format!(
                "kernel:{name}: unknown {what} '{o}' (known: {})",
                known.join(", ")
            )));
        }
        if opts[..i].contains(o) {
            return Err(RunError::Input(format!(
                "kernel:{name}: option '{o}' given twice"
            )));
        }
    }
    Ok(())
}

impl KernelPlan {
    /// `rest` is what follows `kernel:`: the backend's name, then options separated by ':'
    /// (`deadline[:reclaim][:pi]`, `fifo[:rm|:dm|:file][:pi|:pcp]`, `other[:pi]`).
    pub fn new(ts: &TaskSet, rest: &str) -> Result<KernelPlan, RunError> {
        // The kernel's own policies run a job's threads as lanes joined by barriers (regions);
        // a DAG's precedence has no such form.
        if let Some(t) = ts.tasks.iter().find(|t| t.dag.is_some()) {
            return Err(RunError::Input(format!(
                "{}: task '{}': field 'dag': kernel:{rest} runs a job's threads as fork-join lanes joined by barriers, which cannot keep a DAG's precedence; run DAG tasks in the simulator, on testbed:POLICY or on kernel:scx:POLICY (docs/dag.md)",
                ts.source,
                t.name
            )));
        }
        let mut parts = rest.split(':');
        let name = parts.next().unwrap_or("");
        let mut opts: Vec<&str> = parts.collect();
        let known: &[&str] = match name {
            "deadline" => &["reclaim", "pi"],
            "fifo" => &["rm", "dm", "file", "pi", "pcp"],
            "other" => &["pi"],
            "linux" => &["reclaim", "pi"],
            "scx-gedf" => &["linear"],
            // The rest is the partitioner, as the pedf policy takes it.
            "scx-pedf" => return Self::scx_pedf(ts, &opts),
            o => {
                return Err(RunError::Input(format!(
                    "unknown kernel backend 'kernel:{o}' (known: kernel:deadline, kernel:fifo, kernel:other, kernel:linux, kernel:scx-gedf, kernel:scx-pedf)"
                )))
            }
        };
        check_options(name, known, &opts)?;
        if opts.contains(&"pi") && opts.contains(&"pcp") {
            return Err(RunError::Input(
                "kernel:fifo: choose one locking protocol, got 'pi' and 'pcp'".into(),
            ));
        }
        let option = protocols::option_kind(&opts);
        opts.retain(|o| *o != "pi" && *o != "pcp");
        let kinds = protocols::kinds(ts, name, option)?;
        let pi = &protocols::suffix(option, &kinds);
        let (policy, label) = match name {
            "deadline" => Self::deadline(ts, &opts, pi)?,
            "fifo" => Self::fifo(ts, &opts, pi)?,
            "linux" => Self::linux(ts, &opts, pi)?,
            "scx-gedf" => Self::scx_gedf(ts, &opts)?,
            _ => (KernelPolicy::Other, format!("kernel:other{pi}")),
        };
        let fifo = match &policy {
            KernelPolicy::Fifo { prio, cpu, .. } => Some((&prio[..], &cpu[..])),
            _ => None,
        };
        let (mutexes, spins) = protocols::mutexes(ts, &kinds, fifo)?;
        Ok(KernelPlan {
            policy,
            label,
            mutexes,
            spins,
        })
    }

    /// `kernel:deadline[:reclaim]`: every task within what SCHED_DEADLINE admits.
    pub(super) fn deadline(
        ts: &TaskSet,
        opts: &[&str],
        pi: &str,
    ) -> Result<(KernelPolicy, String), RunError> {
        for t in &ts.tasks {
            if t.deadline > t.period {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'deadline': SCHED_DEADLINE needs deadline <= period ({} > {} ns)",
                    ts.source, t.name, t.deadline, t.period
                )));
            }
            if t.wcet < 1024 || (!t.is_parallel() && t.wcet > t.deadline) {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'wcet': SCHED_DEADLINE needs 1024 ns <= runtime (WCET) <= deadline",
                    ts.source, t.name
                )));
            }
            if let Some((k, w)) = lane_wcets(&t.program())
                .into_iter()
                .enumerate()
                .find(|&(_, w)| w > t.deadline)
            {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'regions': SCHED_DEADLINE needs each thread's runtime <= deadline, but thread {k} \
                     of the regions runs {} ns per job ({} ns deadline)",
                    ts.source, t.name, w, t.deadline
                )));
            }
        }
        let reclaim = opts.contains(&"reclaim");
        let label = format!(
            "kernel:deadline{}{pi}",
            if reclaim { ":reclaim" } else { "" }
        );
        Ok((KernelPolicy::Deadline { reclaim }, label))
    }

    /// `kernel:linux[:reclaim]`: each task's policy, its deadline lanes' runtimes, and
    /// admission as `linux` decides it ([`rtsched_policies::linux::admit_set`]) in this
    /// machine's root domain ([`super::root::machine_root_domain`]): a set the kernel
    /// would refuse is refused here, with the kernel's reason, before any thread starts.
    pub(super) fn linux(
        ts: &TaskSet,
        opts: &[&str],
        pi: &str,
    ) -> Result<(KernelPolicy, String), RunError> {
        let reclaim = opts.contains(&"reclaim");
        let at = |t: &rtsched_model::Task, msg: String| {
            RunError::Input(format!("{}: task '{}': {msg}", ts.source, t.name))
        };
        let mut policies = Vec::with_capacity(ts.tasks.len());
        let mut runtimes = Vec::with_capacity(ts.tasks.len());
        for (i, t) in ts.tasks.iter().enumerate() {
            let p = ts.sched_policy(i as u32);
            let lanes = match p {
                SchedPolicy::Deadline { runtime } => {
                    rtsched_policies::linux::lane_runtimes(t, runtime).map_err(|m| at(t, m))?
                }
                SchedPolicy::Fifo | SchedPolicy::Rr if t.priority.is_none() => {
                    return Err(at(
                        t,
                        "field 'priority': missing: SCHED_FIFO and SCHED_RR need one (1..99)"
                            .into(),
                    ))
                }
                _ => Vec::new(),
            };
            if let Class::Fair(f) = &t.class {
                if let Behaviour::Bursty { .. } = f.behaviour {
                    return Err(at(t, "field 'behaviour': kernel:linux runs hog and sleeper best-effort tasks; a bursty one is simulated only".into()));
                }
            }
            policies.push(p);
            runtimes.push(lanes);
        }
        let root = super::root::machine_root_domain()?;
        rtsched_policies::linux::admit_set(ts, reclaim, root)
            .map_err(|m| RunError::Input(format!("{m}. Nothing was run.")))?;
        let label = format!("kernel:linux{}{pi}", if reclaim { ":reclaim" } else { "" });
        let policy = KernelPolicy::Linux {
            policies,
            runtimes,
            reclaim,
        };
        Ok((policy, label))
    }

    /// The SCHED_DEADLINE runtime of `lane` of task `ti` under this plan, if it sets its own
    /// (`kernel:linux`; the other backends reserve [`dl_runtimes`]).
    pub(super) fn lane_runtime(&self, ti: usize, lane: usize) -> Option<Time> {
        match &self.policy {
            KernelPolicy::Linux { runtimes, .. } => runtimes[ti].get(lane).copied(),
            _ => None,
        }
    }

    /// `kernel:fifo[:rm|:dm|:file]`: the priorities by the rule of every fixed-priority
    /// scheduler ([`priority::assign`], as `gfp` and `pfp`: the file's if every task has one
    /// and no assignment is named, RM if none has, refused if only some have), partitioned if
    /// every task has a CPU.
    pub(super) fn fifo(
        ts: &TaskSet,
        opts: &[&str],
        pi: &str,
    ) -> Result<(KernelPolicy, String), RunError> {
        if opts.len() > 1 {
            return Err(RunError::Input(format!(
                "kernel:fifo: choose one priority assignment, got '{}' and '{}' (known: rm, dm, file)",
                opts[0], opts[1]
            )));
        }
        // check_options let only rm, dm and file through.
        let named = opts.first().and_then(|m| Priorities::parse(m));
        let (prio, by) = priority::assign(&ts.tasks, named)
            .map_err(|e| RunError::Input(e.message(ts, "kernel:fifo")))?;
        let mode = by.name();
        let partitioned = ts.tasks.iter().all(|t| t.cpu.is_some());
        let cpu = ts
            .tasks
            .iter()
            .map(|t| if partitioned { t.cpu } else { None })
            .collect();
        let label = format!(
            "kernel:fifo:{mode}{pi}{}",
            if partitioned { " (partitioned)" } else { "" }
        );
        let policy = KernelPolicy::Fifo {
            prio: fifo_levels(&prio),
            cpu,
            label: label.clone(),
        };
        Ok((policy, label))
    }

    /// `kernel:scx-gedf[:linear]`: admitted as the scheduler will admit it.
    pub(super) fn scx_gedf(
        ts: &TaskSet,
        opts: &[&str],
    ) -> Result<(KernelPolicy, String), RunError> {
        let linear = opts.contains(&"linear");
        scx::admission(ts, None)?;
        let mode = if linear { "gedf-linear" } else { "gedf" };
        let label = format!("kernel:scx-gedf{}", if linear { ":linear" } else { "" });
        let policy = KernelPolicy::Scx {
            mode: mode.into(),
            cpu: vec![None; ts.tasks.len()],
        };
        Ok((policy, label))
    }

    /// `kernel:scx-pedf[:HEURISTIC]`: the partition from the file's `cpu` fields, or made by
    /// a partitioning heuristic exactly as the `pedf` policy makes it (`ffd`, `wfd`,
    /// `lwfg+ffd`, ...).
    pub(super) fn scx_pedf(ts: &TaskSet, opts: &[&str]) -> Result<KernelPlan, RunError> {
        let kinds = protocols::kinds(ts, "scx-pedf", protocols::Kind::Plain)?;
        let spec_text = if opts.is_empty() {
            "pedf".to_string()
        } else {
            format!("pedf:{}", opts.join(":"))
        };
        let spec = rtsched_policies::SchedulerSpec::parse(&spec_text)
            .map_err(|e| RunError::Input(format!("kernel:scx-pedf: {e}")))?;
        let ctx = rtsched_policies::ctx::BuildCtx::new(ts);
        let (cpus, how) = rtsched_policies::pedf::partition(&spec, &ctx)
            .map_err(|e| RunError::Input(format!("kernel:scx-pedf: {e}")))?;
        let cpu: Vec<Option<u32>> = cpus.into_iter().map(Some).collect();
        scx::admission(ts, Some(&cpu))?;
        let label = format!(
            "kernel:scx-pedf{}",
            how.map_or(String::new(), |h| format!(":{h}"))
        );
        Ok(KernelPlan {
            policy: KernelPolicy::Scx {
                mode: "pedf".into(),
                cpu,
            },
            label,
            mutexes: vec![MutexProtocol::None; kinds.len()],
            spins: vec![None; kinds.len()],
        })
    }
}

/// A SCHED_DEADLINE runtime for `wcet` of work per period: an allowance of 10% (at least
/// 250 us), capped at the deadline (see [`dl_runtime`]).
pub(super) fn dl_margin(wcet: Time, deadline: Time) -> Time {
    (wcet + (wcet / 10).max(250_000)).min(deadline)
}

/// The SCHED_DEADLINE runtime: the WCET plus an allowance of 10% (at least 250 us), capped at
/// the deadline. The thread's own CPU time per job beyond the demand (waking, counters, the
/// last chunk; measured as `job_cpu_overhead`) was median 19 us, p99 208 us, max 822 us on a
/// saturated 2-vCPU guest; a job that overruns its reservation is throttled to its next period
/// and misses, so runtime = WCET exactly would measure the harness, not the scheduler.
pub fn dl_runtime(t: &rtsched_model::Task) -> Time {
    dl_margin(t.wcet, t.deadline)
}

/// The SCHED_DEADLINE reservations of a task's kernel threads, one per lane ([`lane_wcets`]):
/// each has the task's deadline and period and runtime = the lane's work per job with the
/// [`dl_runtime`] allowance. A lane runs its thread of *every* region that has one within one
/// period, so its budget is the sum over those regions (not the largest one: a helper that
/// ran in two regions would be throttled). The admitted bandwidth of a parallel task is
/// therefore the sum of its lanes' runtimes over the period: larger than C / T by one
/// allowance per lane. A sequential task has the one reservation [`dl_runtime`].
pub fn dl_runtimes(t: &rtsched_model::Task) -> Vec<Time> {
    lane_wcets(&t.program())
        .into_iter()
        .map(|w| dl_margin(w, t.deadline))
        .collect()
}
