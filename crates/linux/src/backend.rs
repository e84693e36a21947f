//! The backends a real run can take: one parse of the backend's name into a [`Backend`], the
//! checks every real run passes before any thread starts, and the hand-over to the driver.

use crate::kernel::{self, KernelPlan};
use crate::options::{RunError, RunOptions, MAX_DURATION};
use crate::signal::{interrupted, SignalGuard};
use crate::stream::{self, Collector};
use crate::{scx_user, sys, testbed};
use rtsched_model::results::{JobSink, RunResult};
use rtsched_model::TaskSet;
use rtsched_policies::Policy;

/// The backends, for help texts. The kernel's own policies follow the file's locking protocol
/// (`pip`: `PTHREAD_PRIO_INHERIT` mutexes; `pcp` under kernel:fifo: `PTHREAD_PRIO_PROTECT` at
/// each resource's ceiling; `msrp` and `mrsp` under a partitioned kernel:fifo: FIFO spin locks
/// at a raised priority; any other refused) and, for a resource under `none`, the option
/// `:pi` (every one but scx-gedf and scx-pedf) or kernel:fifo's `:pcp`.
pub const BACKENDS: &[(&str, &str)] = &[
    ("kernel:deadline", "each task's threads under SCHED_DEADLINE (runtime = WCET + max(250 us, 10%), deadline, period; one reservation per thread of a parallel task); kernel:deadline:reclaim adds GRUB reclaiming, :pi priority inheritance"),
    ("kernel:fifo", "each task's threads under SCHED_FIFO, the file's priorities if every task has one, else RM (kernel:fifo:rm, :dm for DM, :file; priorities on only some tasks are refused unless one is named, as by gfp; :pi for priority inheritance, e.g. kernel:fifo:rm:pi, or :pcp for the immediate priority ceiling, PTHREAD_PRIO_PROTECT at each resource's ceiling; a file's run.locking or resource protocol pip or pcp chooses them itself; msrp and mrsp run FIFO spin locks at a raised priority when every task has a cpu; any other protocol is refused); partitioned through affinity if every task has a cpu"),
    ("kernel:linux", "each task under its own Linux policy from the file (policy: deadline with runtime, fifo or rr with priority, other with nice; run.default_policy; best-effort tasks SCHED_OTHER at their nice), as the simulator's linux scheduler stacks them; refused before starting, with the kernel's reason, if sched_setattr would refuse a reservation (the fair servers counted); kernel:linux:reclaim adds GRUB, :pi priority inheritance"),
    ("kernel:other", "each task's threads under SCHED_OTHER (CFS/EEVDF): what a user gets by default (kernel:other:pi for priority inheritance)"),
    ("kernel:scx-gedf", "rtsched's sched_ext scheduler (needs a kernel with sched_ext and the rtsched-scx loader): global EDF in BPF, idle CPU first, else preempt the latest deadline found in the cpudl tree (kernel:scx-gedf:linear scans instead); tasks register period, deadline and WCET"),
    ("kernel:scx-pedf", "rtsched's sched_ext scheduler: partitioned EDF in BPF, partition from the file's cpu fields or a heuristic (kernel:scx-pedf:ffd, :wfd, :lwfg+ffd, ...)"),
    ("kernel:scx:POLICY", "rtsched's sched_ext scheduler in user-space mode: any rtsched policy decides over the job ledger (as on the testbed), BPF puts each task's own SCHED_EXT thread on the CPU decided for it (e.g. kernel:scx:gedf, kernel:scx:ggua)"),
    ("testbed:POLICY", "any rtsched policy decides, one pinned SCHED_FIFO worker per CPU executes (e.g. testbed:gedf, testbed:pedf)"),
];

/// A backend, parsed and checked against its task set: what its driver runs.
pub enum Backend {
    /// `kernel:deadline`, `kernel:fifo`, `kernel:other`, `kernel:scx-gedf`, `kernel:scx-pedf`:
    /// each task's threads under the kernel's own policy ([`kernel`]).
    Kernel(KernelPlan),
    /// `kernel:scx:POLICY`: the policy decides in user space, rtsched's sched_ext scheduler
    /// runs each task's own threads as decided ([`scx_user`]).
    ScxUser(Box<dyn Policy>),
    /// `testbed:POLICY`: the policy decides, one worker per CPU executes ([`testbed`]).
    Testbed(Box<dyn Policy>),
}

impl Backend {
    /// Parse `backend` (see [`BACKENDS`]) for `ts`: the kernel plan or the policy built.
    pub fn parse(ts: &TaskSet, backend: &str) -> Result<Backend, RunError> {
        Self::parse_known(ts, backend)?.ok_or_else(|| {
            let known: Vec<&str> = BACKENDS.iter().map(|b| b.0).collect();
            RunError::Input(format!(
                "unknown backend '{backend}'; known: {}",
                known.join(", ")
            ))
        })
    }

    /// [`Backend::parse`], `None` for a name that is neither `kernel:` nor `testbed:`.
    fn parse_known(ts: &TaskSet, backend: &str) -> Result<Option<Backend>, RunError> {
        let (kind, rest) = backend.split_once(':').unwrap_or((backend, ""));
        Ok(Some(match kind {
            "kernel" => match rest.strip_prefix("scx:") {
                Some(spec) => {
                    let p = rtsched_policies::build_for(spec, ts).map_err(
                        |e| match RunError::from(e) {
                            RunError::Unplaced(m) => RunError::Unplaced(format!("kernel:scx: {m}")),
                            other => RunError::Input(format!("kernel:scx: {other}")),
                        },
                    )?;
                    // The ledger applies the file's protocols, as on the testbed.
                    if let Some(why) = rtsched_runtime::refuses_locking(ts, p.as_ref()) {
                        return Err(RunError::Input(format!("kernel:scx: {why}")));
                    }
                    Backend::ScxUser(p)
                }
                None => Backend::Kernel(KernelPlan::new(ts, rest)?),
            },
            "testbed" => {
                let p = rtsched_policies::build_for(rest, ts)?;
                if let Some(why) = rtsched_runtime::refuses_locking(ts, p.as_ref()) {
                    return Err(RunError::Input(format!("testbed: {why}")));
                }
                Backend::Testbed(p)
            }
            _ => return Ok(None),
        }))
    }

    /// The `scheduler` a run on this backend reports (e.g. `kernel:fifo:file (partitioned)`,
    /// `testbed:gedf`).
    pub fn label(&self) -> String {
        match self {
            Backend::Kernel(plan) => plan.label.clone(),
            Backend::ScxUser(p) => format!("kernel:scx:{}", p.name()),
            Backend::Testbed(p) => format!("testbed:{}", p.name()),
        }
    }
}

/// Triggers, self-suspensions and chains (docs/chains.md) run on the testbed, the kernel's own
/// policies (kernel:fifo, :deadline, :other, :linux) and rtsched's sched_ext scheduler in
/// user-space mode (kernel:scx:POLICY: the ledger's flow, as on the testbed). Its BPF-native
/// modes (kernel:scx-gedf, kernel:scx-pedf) do not take them yet: the BPF program reads a
/// thread's deadline from its slot when the thread wakes, and a triggered thread's release is
/// known only once it is woken, so its wake-up would carry its previous job's deadline (its
/// suspensions and data-flow chains were not tried there). Such a run is refused, naming the
/// first, rather than run wrongly.
fn flow_refused(ts: &TaskSet, backend: &str) -> Option<String> {
    if !backend.starts_with("kernel:scx-") {
        return None;
    }
    let why = "not yet supported by rtsched's sched_ext scheduler in its BPF-native modes (a triggered thread's wake-up would carry its previous job's deadline); kernel:scx:POLICY, the testbed, kernel:fifo, :deadline, :other, :linux and the simulator run it";
    if let Some(t) = ts.tasks.iter().find(|t| t.trigger.is_some()) {
        return Some(format!(
            "{}: task '{}': field 'trigger': event-triggered tasks are {why}",
            ts.source, t.name
        ));
    }
    if let Some(t) = ts.tasks.iter().find(|t| !t.suspensions.is_empty()) {
        return Some(format!(
            "{}: task '{}': field 'segments': self-suspensions are {why}",
            ts.source, t.name
        ));
    }
    ts.chains.first().map(|c| {
        format!(
            "{}: chain '{}' (chains[0]): field 'chains': chains are {why}",
            ts.source, c.name
        )
    })
}

fn check_common(ts: &TaskSet, backend: &str, opts: &RunOptions) -> Result<(), RunError> {
    // kernel:linux runs them as SCHED_OTHER threads at their nice (crate::kernel's fair.rs).
    let fair_runs = backend == "kernel:linux" || backend.starts_with("kernel:linux:");
    if let Some(t) = ts.tasks.iter().find(|t| t.is_fair() && !fair_runs) {
        // Best-effort tasks live in the simulator (`cfs`); on a real machine the kernel's own
        // fair class runs them: `rtsched stress` makes the load, `rtsched balance` moves it.
        return Err(RunError::Input(format!(
            "{}: task '{}': field 'class': best-effort (fair) tasks are simulated only (scheduler cfs); on this machine use `rtsched stress` for the load and `rtsched balance` for the zone balancer",
            ts.source, t.name
        )));
    }
    if let Some(why) = flow_refused(ts, backend) {
        return Err(RunError::Input(why));
    }
    if ts.run.duration > MAX_DURATION {
        return Err(RunError::Input(format!(
            "{}: run: field 'duration': a real run is limited to {} s, got {} s",
            ts.source,
            MAX_DURATION / 1_000_000_000,
            ts.run.duration as f64 / 1e9
        )));
    }
    let u = ts.utilization();
    if u > ts.platform.cpus as f64 && !opts.allow_overload {
        return Err(RunError::Input(format!(
            "{}: total utilisation {u:.3} exceeds the {} CPUs; a real run of an overloaded set is refused unless --allow-overload",
            ts.source, ts.platform.cpus
        )));
    }
    let online = sys::online_cpus();
    if ts.platform.cpus as usize > online {
        return Err(RunError::Input(format!(
            "{}: platform: field 'cpus': the task set needs {} CPUs, this machine has {online} online",
            ts.source, ts.platform.cpus
        )));
    }
    Ok(())
}

/// Run `ts` for real on `backend` (see [`BACKENDS`]).
pub fn run(ts: &TaskSet, backend: &str, opts: &RunOptions) -> Result<RunResult, RunError> {
    run_with(ts, backend, opts, None)
}

/// [`run`] without holding the per-job records: each goes, in release order, into the
/// summaries and then to `next` (a Parquet writer) as its job ends, so memory stays bounded
/// whatever the duration ([`crate::stream`]); so does each chain record as it is made
/// ([`JobSink::chain`]). The result's `jobs` and `chains` are empty, `streamed` holds the
/// count and the summaries, `chain_summaries` the chains'.
pub fn run_streamed(
    ts: &TaskSet,
    backend: &str,
    opts: &RunOptions,
    next: Option<&mut (dyn JobSink + Send)>,
) -> Result<RunResult, RunError> {
    let mut c = stream::Collector::for_run(ts, next);
    let mut r = run_with(ts, backend, opts, Some(&mut c))?;
    // The chain records went the same way, into their summaries and on to `next`.
    debug_assert!(r.chains.is_empty(), "a streamed run held chain records");
    r.chain_summaries = c.chain_summaries();
    r.streamed = Some(c.streamed(&r.task_names));
    Ok(r)
}

/// The `scheduler` a run of `ts` on `backend` will report, known before it runs: a streamed
/// run's Parquet rows carry it.
pub fn scheduler_label(ts: &TaskSet, backend: &str) -> Result<String, RunError> {
    match Backend::parse_known(ts, backend)? {
        Some(b) => Ok(b.label()),
        None => Err(RunError::Input(format!("unknown backend '{backend}'"))),
    }
}

fn run_with(
    ts: &TaskSet,
    backend: &str,
    opts: &RunOptions,
    out: Option<&mut Collector<'_>>,
) -> Result<RunResult, RunError> {
    check_common(ts, backend, opts)?;
    // Validate everything before touching any thread.
    let backend = Backend::parse(ts, backend)?;
    sys::check_rt_privilege().map_err(RunError::Privilege)?;
    let _guard = SignalGuard::install();
    let steal0 = sys::steal_ticks();
    let r = match backend {
        Backend::Kernel(plan) => kernel::run_into(ts, &plan, opts, out),
        Backend::ScxUser(policy) => scx_user::run_into(ts, policy, opts, out),
        Backend::Testbed(policy) => testbed::run_into(ts, policy, opts, out),
    };
    if interrupted() {
        return Err(RunError::Interrupted);
    }
    r.map(|mut r| {
        // In a virtual machine the host may take the CPUs away; a run with much steal measured
        // the host as much as the scheduler.
        if let (Some(a), Some(b)) = (steal0, sys::steal_ticks()) {
            r.measurements.insert(
                "host.steal_ms".into(),
                (b.saturating_sub(a)) as f64 * 1000.0 / sys::clock_ticks() as f64,
            );
        }
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DAG sets: refused by the kernel's own policies (`kernel/`), taken by the backends that
    /// run through the job ledger.
    #[test]
    fn the_ledger_backends_take_dag_sets() {
        let ts = rtsched_model::parse_taskset(
            "platform: {cpus: 2}\ntasks:\n  - {name: p, period: 20, dag: {nodes: {x: 1, y: 2}, edges: [[x, y]]}}\n",
            rtsched_model::Format::Yaml,
            "t.yaml",
        )
        .unwrap();
        for backend in ["testbed:paws", "testbed:gedf", "kernel:scx:paws"] {
            assert!(Backend::parse(&ts, backend).is_ok(), "{backend}");
        }
        assert!(Backend::parse(&ts, "kernel:fifo").is_err());
    }

    /// Triggers, suspensions and chains: taken by the testbed and the kernel's own policies,
    /// refused (exit 2, naming the task and field) by rtsched's sched_ext scheduler only.
    #[test]
    fn only_sched_exts_bpf_native_modes_refuse_triggers_suspensions_and_chains() {
        let ts = rtsched_model::parse_taskset(
            "platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 5}\n  - {name: b, trigger: a, deadline: 10, wcet: 3, priority: 4}\nchains:\n  - {name: ab, tasks: [a, b]}\n",
            rtsched_model::Format::Yaml,
            "t.yaml",
        )
        .unwrap();
        for b in [
            "testbed:gfp",
            "kernel:fifo",
            "kernel:deadline",
            "kernel:other",
            "kernel:linux",
            "kernel:scx:gedf",
        ] {
            assert_eq!(flow_refused(&ts, b), None, "{b}");
        }
        for b in [
            "kernel:scx-gedf",
            "kernel:scx-pedf",
            "kernel:scx-gedf:linear",
        ] {
            let m = flow_refused(&ts, b).expect(b);
            assert!(m.contains("t.yaml: task 'b': field 'trigger'"), "{m}");
        }
    }

    /// A protocol in the file: the ledger backends (testbed, kernel:scx:POLICY) run it under a
    /// policy that takes it and refuse one that does not, as the simulator does; the kernel's
    /// own policies give `pip` as `:pi` (kernel/protocols.rs).
    #[test]
    fn the_ledger_backends_refuse_a_policy_without_urgencies() {
        let ts = rtsched_model::parse_taskset(
            "platform: {cpus: 1}\nrun: {locking: pip}\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 2, sections: [{resource: R, start: 0, length: 1}]}\n  - {name: b, period: 20, wcet: 3, priority: 1, sections: [{resource: R, start: 0, length: 1}]}\n",
            rtsched_model::Format::Yaml,
            "t.yaml",
        )
        .unwrap();
        for backend in ["testbed:gfp", "kernel:scx:gfp", "kernel:fifo"] {
            assert!(Backend::parse(&ts, backend).is_ok(), "{backend}");
        }
        for backend in ["testbed:dasa", "kernel:scx:dasa"] {
            let Err(RunError::Input(m)) = Backend::parse(&ts, backend) else {
                panic!("{backend} accepted")
            };
            assert!(
                m.contains("t.yaml: resource 'R' uses pip, which scheduler 'dasa' does not take"),
                "{backend}: {m}"
            );
        }
    }
}
