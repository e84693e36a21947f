//! `ctx`: what a policy's `build` function is handed besides its parsed spec — the task set,
//! a seeded generator, and the helpers every constructor needs (priority assignment,
//! partitioning, the distributed policies' options). Option lookup itself is
//! [`SchedulerSpec::option`]. A build function reads the spec, validates its options (its
//! error messages name the scheduler as the user wrote it), and returns the policy:
//!
//! ```ignore
//! pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
//!     let (prio, label) = ctx.priorities(spec, &["prio"])?;
//!     Ok(Box::new(gfp(label, ctx.cpus(), prio)))
//! }
//! ```
//!
//! **A set that cannot be placed.** A partitioner that finds no partition (or federated
//! scheduling that cannot place its heavy tasks) is the task set's failure, not the spec's: its
//! error goes through [`BuildCtx::unplaced`], so [`crate::registry::build_for`] reports it as
//! [`crate::registry::BuildError::Unplaced`] (a comparison gives that scheduler the status
//! `partition-failed` and runs the others).
//!
//! **Randomness.** A randomised policy (PAWS's victim choice) draws only from
//! [`BuildCtx::rng`], a ChaCha8 generator seeded with the run's seed (`ts.run.seed`) on its own
//! stream [`POLICY_STREAM`]: the same task set and seed give the same decisions in every
//! substrate, and the policy's draws neither repeat nor shift the drivers' per-task streams
//! (execution demands and arrival gaps, `crates/runtime/src/streams.rs`).

use crate::common::findcpu::PushFind;
use crate::spec::{Partitioning, SchedulerSpec};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::partition::{by_name, Admission};
use rtsched_analysis::priority::{self, Priorities};
use rtsched_model::TaskSet;
use std::cell::Cell;

/// The ChaCha8 stream of the policies' generator. Every driver (`rtsched_runtime::streams`)
/// seeds `ChaCha8Rng` with the same run seed and draws task `t`'s demands from stream `2t` and
/// its arrival gaps from `2t + 1`; `u64::MAX` would be `2t + 1` only for `t = 2^63 - 1`, far
/// beyond any task index (`u32`), so no driver's stream ever equals it.
pub const POLICY_STREAM: u64 = u64::MAX;

/// The policies' generator for a run with seed `seed` (see [`POLICY_STREAM`]).
pub fn policy_rng(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(POLICY_STREAM);
    rng
}

/// What a policy is built from: the task set and the run's generator (see the module doc).
pub struct BuildCtx<'a> {
    pub ts: &'a TaskSet,
    rng: ChaCha8Rng,
    /// Set by [`BuildCtx::unplaced`]: the build failed because the set could not be placed.
    unplaced: Cell<bool>,
}

/// The options of the distributed-run-queue policies (see [`BuildCtx::dist_options`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistOptions {
    /// `push=VARIANT`, if given.
    pub find: Option<PushFind>,
    /// `measure`: time each operation (stats only).
    pub measure: bool,
    /// Every other option, under the same scheduler name.
    pub rest: SchedulerSpec,
}

impl<'a> BuildCtx<'a> {
    pub fn new(ts: &'a TaskSet) -> Self {
        BuildCtx {
            ts,
            rng: policy_rng(ts.run.seed),
            unplaced: Cell::new(false),
        }
    }

    /// `message`, marked as a placement failure: the set's tasks do not fit on its CPUs under
    /// the partitioner (or placement) the spec chose (see the module doc).
    pub fn unplaced(&self, message: String) -> String {
        self.unplaced.set(true);
        message
    }

    /// Whether the build failed through [`BuildCtx::unplaced`].
    pub fn is_unplaced(&self) -> bool {
        self.unplaced.get()
    }

    /// The number of CPUs of the platform.
    pub fn cpus(&self) -> u32 {
        self.ts.platform.cpus
    }

    /// The run's generator for policies. A policy that draws while it runs keeps its own
    /// copy (`ctx.rng().clone()`); draws made here at build time advance it for later users.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Task priorities for a fixed-priority policy, and the label naming how they were chosen
    /// (`NAME:file|rm|dm`). The main option (bare) is `prio`; `allowed` lists every option
    /// the spec may carry (including `prio`). Without `prio`, the rule every fixed-priority
    /// scheduler follows, the kernel's `kernel:fifo` too ([`priority::assign`]): `file` if
    /// every task has a priority, `rm` if none has, else an error.
    pub fn priorities(
        &self,
        spec: &SchedulerSpec,
        allowed: &[&str],
    ) -> Result<(Vec<u32>, String), String> {
        let ts = self.ts;
        let named = match spec.option("prio", allowed)? {
            None => None,
            Some(m) => Some(Priorities::parse(&m).ok_or_else(|| {
                format!(
                    "scheduler '{}': unknown priority assignment '{m}' (known: file, rm, dm)",
                    spec.name
                )
            })?),
        };
        let (prio, by) =
            priority::assign(&ts.tasks, named).map_err(|e| e.message(ts, &spec.name))?;
        Ok((prio, format!("{}:{}", spec.name, by.name())))
    }

    /// The partition (CPU of each task) of a partitioned policy and, when a heuristic made it,
    /// the heuristic's name for the run's label: a fallback chain's whole name (`lwfg+ffd`),
    /// whichever of its heuristics succeeded, so every set run under one spec has one label.
    /// Computed by the partitioner named in `partition=NAME` (also the bare option when
    /// `how.bare`, as the policy's [`crate::PolicyInfo::partition`] says; two of them are
    /// refused: a chain is written `a+b`, since `,` separates options), admitting a task to a
    /// CPU by `admission` (of the kind `how` declares); else read from the tasks' `cpu` fields.
    pub fn partition_labelled(
        &self,
        spec: &SchedulerSpec,
        how: &Partitioning,
        admission: Admission,
    ) -> Result<(Vec<u32>, Option<String>), String> {
        assert_eq!(
            admission.name(),
            how.admission.name(),
            "scheduler '{}' admits otherwise than its description says",
            spec.name
        );
        let bare_is_partition = how.bare;
        let ts = self.ts;
        let given: Vec<&String> = spec
            .options
            .iter()
            .filter(|(k, _)| k == "partition" || (k.is_empty() && bare_is_partition))
            .map(|(_, v)| v)
            .collect();
        if given.len() > 1 {
            let names: Vec<&str> = given.iter().map(|s| s.as_str()).collect();
            let key = if bare_is_partition { "" } else { "partition=" };
            return Err(format!(
                "scheduler '{}': {} partitioners given ({}); a fallback chain is written with '+': {}:{key}{}",
                spec.name,
                names.len(),
                names.join(", "),
                spec.name,
                names.join("+")
            ));
        }
        if let Some(name) = given.first() {
            let partitioner =
                by_name(name).map_err(|e| format!("scheduler '{}': {e}", spec.name))?;
            // Blocking-aware where the admission bounds the set's protocol (resources
            // kept local, their users placed together: rtsched_analysis::partition::sections).
            let admission = admission.counting_sections(ts);
            let p = partitioner
                .partition(ts, &admission)
                .map_err(|e| self.unplaced(format!("{}: {e}", ts.source)))?;
            if p.is_global() {
                return Err(self.unplaced(format!(
                    "{}: partitioner '{name}' fell back to 'global': the task set cannot be partitioned onto {} CPUs; use a global scheduler",
                    ts.source, ts.platform.cpus
                )));
            }
            return Ok((p.cpu_of_task, Some(partitioner.name())));
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
    /// `bare_is_push`, and then no other option is allowed), `measure[=on|off]`; the others
    /// are returned in `rest` for the policy to read.
    pub fn dist_options(
        &self,
        spec: &SchedulerSpec,
        bare_is_push: bool,
    ) -> Result<DistOptions, String> {
        let (mut find, mut measure) = (None, false);
        let mut rest = SchedulerSpec {
            name: spec.name.clone(),
            options: Vec::new(),
        };
        for (k, v) in &spec.options {
            match (k.as_str(), v.as_str()) {
                ("", "measure") | ("measure", "on" | "true" | "1") => measure = true,
                ("measure", "off" | "false" | "0") => measure = false,
                ("measure", other) => {
                    return Err(format!(
                        "scheduler '{}': measure={other}: expected on or off",
                        spec.name
                    ))
                }
                ("push", v) | ("", v) if k == "push" || bare_is_push => {
                    find = Some(PushFind::parse(v).ok_or_else(|| {
                        format!("scheduler '{}': unknown push variant '{v}' (known: linear, fmask, heap, cpupri)", spec.name)
                    })?);
                }
                _ => rest.options.push((k.clone(), v.clone())),
            }
        }
        if bare_is_push {
            rest.option("push", &["push", "measure"])?;
        }
        Ok(DistOptions {
            find,
            measure,
            rest,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::RngCore;
    use rtsched_model::Task;

    fn draws(rng: &mut ChaCha8Rng) -> Vec<u64> {
        (0..8).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn same_seed_same_draws_and_apart_from_the_simulators_streams() {
        let mut ts = TaskSet::new(2, vec![Task::periodic("a", 10, 1)]);
        ts.run.seed = 42;
        let a = draws(BuildCtx::new(&ts).rng());
        assert_eq!(a, draws(BuildCtx::new(&ts).rng()), "same seed, same draws");
        assert_eq!(a, draws(&mut policy_rng(42)));
        ts.run.seed = 43;
        assert_ne!(
            a,
            draws(BuildCtx::new(&ts).rng()),
            "another seed, other draws"
        );
        // The simulator's per-task streams (2·task, 2·task+1) of the same seed draw otherwise.
        for stream in 0..8 {
            let mut sim = ChaCha8Rng::seed_from_u64(42);
            sim.set_stream(stream);
            assert_ne!(a, draws(&mut sim), "stream {stream}");
        }
    }
}
