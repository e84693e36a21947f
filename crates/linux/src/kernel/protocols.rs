//! Each resource's locking protocol under a kernel backend: the task set's own protocol
//! (docs/locking.md: `run.locking`, a resource's `protocol`) where the kernel can give it, the
//! backend option (`:pi`, `:pcp`) for a resource under `none`, and a refusal otherwise.
//!
//! What the kernel gives (POSIX `pthread_mutexattr_setprotocol`, [`MutexProtocol`]):
//! - `pip` (Sha, Rajkumar & Lehoczky 1990): `PTHREAD_PRIO_INHERIT`, the kernel's rt_mutex: a
//!   holder runs at its most urgent waiter's priority (under SCHED_DEADLINE its deadline), on
//!   `kernel:fifo`, `:deadline`, `:other` and `:linux`, as the option `:pi` does.
//! - `pcp` (the immediate ceiling protocol): `PTHREAD_PRIO_PROTECT` at the resource's ceiling,
//!   the highest SCHED_FIFO priority of its users' threads ([`fifo_ceilings`]), under
//!   `kernel:fifo` only (the ceiling is a SCHED_FIFO priority), as the option `:pcp` does; on
//!   several CPUs only for a resource whose users are all pinned to one CPU (a uniprocessor
//!   protocol, as the testbed requires: `rtsched_runtime::refuses_locking`).
//! - `msrp` and `mrsp` (Gai, Lipari & Di Natale 2001; Burns & Wellings 2013) under
//!   `kernel:fifo` with every task pinned (partitioned), as the ledger runs them under `pfp`.
//!   A *global* resource (users on several CPUs) is a FIFO spin lock (`spinlock.rs`) taken at
//!   a raised SCHED_FIFO priority, from the request through the section ([`SpinRule`]): under
//!   `msrp` [`NP_PRIORITY`], above every task of the run (non-preemptive), under `mrsp` the
//!   resource's *local ceiling*, the highest priority of its users on the requester's CPU
//!   (MrsP's *helping*, a preempted holder migrating to a spinner's CPU, has no portable form
//!   in user space: not given). A *local* `msrp` resource (every user on one CPU) takes
//!   `PTHREAD_PRIO_PROTECT` at its ceiling — the ledger's rule for it is `srp`, whose
//!   fixed-priority form with levels in priority order is this immediate ceiling; a local
//!   `mrsp` one takes its spin rule, whose local ceiling is then the ceiling (never contended).
//!   Their other kernel backends are refused: SCHED_DEADLINE and sched_ext have no priority
//!   to raise a spinner to (and SCHED_DEADLINE cannot be pinned to one CPU of a root domain),
//!   `kernel:other` and `kernel:linux` no partition of fixed priorities.
//! - Nothing else: `pcp:original`'s ceiling blocking of a free mutex, `srp`'s start gate,
//!   FIFO suspension queues with boosting (`fmlp+`) and `omlp`'s queues are rules the ledger
//!   applies, so they run on the testbed and in the simulator. A file asking for one is
//!   refused with exit 2, naming the file, the resource and what to use instead: never run as
//!   a plain mutex.
//!
//! A backend option that contradicts the file (`:pi` on a `pcp` resource, `:pcp` on a `pip`
//! one, either on an `msrp` or `mrsp` one) is refused likewise; one that agrees with it is
//! accepted.

use crate::options::RunError;
use crate::sys::MutexProtocol;
use rtsched_model::locking::Protocol;
use rtsched_model::TaskSet;

/// What a resource's mutex does, before the ceilings are known (they need the priorities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Plain,
    Inherit,
    Ceiling,
    /// `msrp` or `mrsp` under kernel:fifo: a spin lock, or for a local `msrp` resource a
    /// ceiling (decided with the partition, [`mutexes`]).
    Spin(Protocol),
}

/// The SCHED_FIFO priority `msrp` raises a requester of a global resource to, from its
/// request through its section: above every task of the run ([`super::plan::fifo_levels`]
/// maps the set's priorities onto 10..=89), below the kernel's own threads at 99
/// (migration, watchdog): non-preemptive for the task set.
pub const NP_PRIORITY: u32 = 90;

/// A resource's spin lock under kernel:fifo: per task, the SCHED_FIFO priority its threads
/// run at from a request of the resource through the section (0 for a task that does not
/// use it): [`NP_PRIORITY`] under `msrp`, the local ceiling on the task's CPU under `mrsp`.
pub type SpinRule = Vec<u32>;

/// The backend option's protocol (`:pi`, `:pcp`, neither).
pub(super) fn option_kind(opts: &[&str]) -> Kind {
    if opts.contains(&"pi") {
        Kind::Inherit
    } else if opts.contains(&"pcp") {
        Kind::Ceiling
    } else {
        Kind::Plain
    }
}

/// Where resource `r`'s protocol is written: its own `protocol` field, or the set's `locking`.
fn field(ts: &TaskSet, r: usize) -> &'static str {
    match ts.run.resource_locking.get(r).copied().flatten() {
        Some(_) => "its field 'protocol'",
        None => "run: field 'locking'",
    }
}

/// What to run a protocol the kernel's mutexes cannot give on instead.
fn instead(p: Protocol) -> &'static str {
    match p {
        Protocol::PcpOriginal => "run it on testbed:gfp or testbed:pfp, or use pcp (the immediate ceiling, PTHREAD_PRIO_PROTECT) on kernel:fifo",
        Protocol::Srp => "run it on testbed:gedf or testbed:pedf, or use pcp on kernel:fifo (its fixed-priority counterpart)",
        Protocol::Msrp | Protocol::Mrsp => "use kernel:fifo with every task's 'cpu' (a FIFO spin lock at a raised SCHED_FIFO priority), or run it on testbed:pfp or testbed:pedf",
        Protocol::FmlpPlus => "run it on testbed:pfp or testbed:pedf",
        Protocol::Omlp => "run it on testbed:gfp or testbed:gedf",
        _ => "run it on the testbed (testbed:POLICY)",
    }
}

/// Per resource of `ts`, its mutex's kind under `kernel:{name}` with the backend option
/// `option`: the file's protocol if it names one (`pip`, `pcp`), else the option's.
pub(super) fn kinds(ts: &TaskSet, name: &str, option: Kind) -> Result<Vec<Kind>, RunError> {
    let fifo = name == "fifo";
    (0..ts.resources.len())
        .map(|r| {
            let p = ts.protocol(r);
            let refuse = |why: String| {
                RunError::Input(format!(
                    "{}: resource '{}' uses {} ({}): {why}",
                    ts.source,
                    ts.resources[r],
                    p.name(),
                    field(ts, r)
                ))
            };
            let kind = match p {
                Protocol::None => return Ok(option),
                Protocol::Pip if name.starts_with("scx-") => {
                    return Err(refuse(format!(
                        "kernel:{name} cannot give priority inheritance (its BPF scheduler orders threads by deadline, which a PTHREAD_PRIO_INHERIT mutex does not lend); run it on kernel:scx:POLICY or testbed:POLICY"
                    )))
                }
                Protocol::Pip => Kind::Inherit,
                Protocol::Pcp if !fifo => {
                    return Err(refuse(format!(
                        "kernel:{name} cannot give the priority ceiling (PTHREAD_PRIO_PROTECT raises a thread to a SCHED_FIFO priority); use kernel:fifo, or run it on testbed:POLICY"
                    )))
                }
                Protocol::Pcp => Kind::Ceiling,
                Protocol::Msrp | Protocol::Mrsp if !fifo => {
                    return Err(refuse(format!(
                        "kernel:{name} cannot give its spin lock (a spinner runs at a raised SCHED_FIFO priority on the CPU its task is pinned to); {}",
                        instead(p)
                    )))
                }
                Protocol::Msrp | Protocol::Mrsp => Kind::Spin(p),
                _ => {
                    return Err(refuse(format!(
                        "the kernel's mutexes cannot give it (they give pip, PTHREAD_PRIO_INHERIT, and under kernel:fifo pcp, PTHREAD_PRIO_PROTECT, and msrp and mrsp spin locks); {}",
                        instead(p)
                    )))
                }
            };
            if option != Kind::Plain && option != kind {
                let (opt, says) = match option {
                    Kind::Inherit => (":pi", "priority inheritance"),
                    _ => (":pcp", "the priority ceiling"),
                };
                return Err(refuse(format!(
                    "the backend option '{opt}' asks for {says}, which contradicts it; drop '{opt}' (kernel:{name} follows the file) or change the file's protocol"
                )));
            }
            Ok(kind)
        })
        .collect()
}

/// The label's protocol suffix: `:pi` if a mutex inherits (or the option asks it), `:pcp` if
/// one has a ceiling, all for a file that mixes them; `:msrp`, `:mrsp` for the spin locks.
pub(super) fn suffix(option: Kind, kinds: &[Kind]) -> String {
    let any = |k: Kind| option == k || kinds.contains(&k);
    let mut s = String::new();
    if any(Kind::Inherit) {
        s.push_str(":pi");
    }
    if any(Kind::Ceiling) {
        s.push_str(":pcp");
    }
    for p in [Protocol::Msrp, Protocol::Mrsp] {
        if kinds.contains(&Kind::Spin(p)) {
            s.push(':');
            s.push_str(p.name());
        }
    }
    s
}

/// Per resource of `ts`, the highest of `prio` (SCHED_FIFO priorities, by task) over its users
/// ([`TaskSet::users`]); 1 (SCHED_FIFO's lowest) for a resource no task uses.
pub(super) fn fifo_ceilings(ts: &TaskSet, prio: &[u32]) -> Vec<u32> {
    (0..ts.resources.len())
        .map(|r| ts.users(r).map(|t| prio[t]).max().unwrap_or(1))
        .collect()
}

/// The mutexes' protocols and the spin locks' rules, per resource; `fifo` is kernel:fifo's
/// SCHED_FIFO priority and CPU per task (no ceiling nor spin lock without it: [`kinds`]
/// refused `pcp`, `msrp` and `mrsp` elsewhere). A ceiling is its resource's highest
/// SCHED_FIFO priority of its users ([`fifo_ceilings`]). A resource the file puts under
/// `pcp` on several CPUs needs its users pinned to one CPU (a local resource), as the
/// testbed refuses a global scheduler for it; one under `msrp` or `mrsp` needs every task
/// pinned ([`unpinned_refused`]); the option `:pcp` on a `none` file is taken as asked.
pub(super) fn mutexes(
    ts: &TaskSet,
    kinds: &[Kind],
    fifo: Option<(&[u32], &[Option<u32>])>,
) -> Result<(Vec<MutexProtocol>, Vec<Option<SpinRule>>), RunError> {
    let (ceilings, prio, cpu) = match fifo {
        Some((prio, cpu)) => {
            if ts.platform.cpus > 1 {
                split_refused(ts, kinds, cpu)?;
            }
            unpinned_refused(ts, kinds, cpu)?;
            (fifo_ceilings(ts, prio), prio, cpu)
        }
        None => (Vec::new(), &[][..], &[][..]),
    };
    let mut spins = vec![None; kinds.len()];
    let mutexes = kinds
        .iter()
        .enumerate()
        .map(|(r, k)| match k {
            Kind::Plain => MutexProtocol::None,
            Kind::Inherit => MutexProtocol::Inherit,
            Kind::Ceiling => MutexProtocol::Protect(ceilings[r]),
            Kind::Spin(Protocol::Msrp) if local(ts, r, cpu) => MutexProtocol::Protect(ceilings[r]),
            Kind::Spin(p) => {
                spins[r] = Some(spin_rule(ts, r, *p, prio, cpu));
                MutexProtocol::None
            }
        })
        .collect();
    Ok((mutexes, spins))
}

/// Whether every user of resource `r` is pinned to one CPU (the ledger's `local`).
fn local(ts: &TaskSet, r: usize, cpu: &[Option<u32>]) -> bool {
    let mut cpus = ts.users(r).map(|t| cpu[t]);
    let first = cpus.next();
    cpus.all(|c| Some(c) == first)
}

/// Resource `r`'s spin rule under protocol `p` (`msrp` or `mrsp`): per user task, the
/// priority it spins and holds at ([`SpinRule`]); every user is pinned ([`unpinned_refused`]).
fn spin_rule(ts: &TaskSet, r: usize, p: Protocol, prio: &[u32], cpu: &[Option<u32>]) -> SpinRule {
    let mut raise = vec![0; ts.tasks.len()];
    for t in ts.users(r) {
        raise[t] = match p {
            Protocol::Msrp => NP_PRIORITY,
            // The local ceiling: the highest priority of r's users on t's CPU.
            _ => ts
                .users(r)
                .filter(|&u| cpu[u] == cpu[t])
                .map(|u| prio[u])
                .max()
                .unwrap_or(prio[t]),
        };
    }
    raise
}

/// A file's `msrp` or `mrsp` resource on kernel:fifo without a partition: the protocols are
/// for partitioned scheduling (a spinner keeps its CPU, a local ceiling is per CPU), and
/// kernel:fifo pins tasks only when every task has a `cpu`. Names a user without one, else
/// the first task without one.
fn unpinned_refused(ts: &TaskSet, kinds: &[Kind], cpu: &[Option<u32>]) -> Result<(), RunError> {
    for (r, k) in kinds.iter().enumerate() {
        let Kind::Spin(p) = k else { continue };
        if ts.users(r).all(|t| cpu[t].is_some()) {
            continue;
        }
        let t = ts
            .users(r)
            .find(|&t| ts.tasks[t].cpu.is_none())
            .or_else(|| ts.tasks.iter().position(|t| t.cpu.is_none()))
            .unwrap_or(0);
        return Err(RunError::Input(format!(
            "{}: task '{}': resource '{}' uses {} ({}), a protocol for partitioned scheduling: kernel:fifo does not pin the task to a CPU (it partitions only when every task has a 'cpu'); give every task a 'cpu' (rtsched partition places them), or run it on testbed:pfp:partition=ffd",
            ts.source,
            ts.tasks[t].name,
            ts.resources[r],
            p.name(),
            field(ts, r),
        )));
    }
    Ok(())
}

/// A file's `pcp` resource whose users `kernel:fifo` does not pin to one CPU.
fn split_refused(ts: &TaskSet, kinds: &[Kind], cpu: &[Option<u32>]) -> Result<(), RunError> {
    for (r, k) in kinds.iter().enumerate() {
        if *k != Kind::Ceiling || ts.protocol(r) != Protocol::Pcp {
            continue;
        }
        let mut users = ts.users(r);
        let Some(first) = users.next() else { continue };
        if let Some(t) = std::iter::once(first)
            .chain(users)
            .find(|&t| cpu[t].is_none() || cpu[t] != cpu[first])
        {
            return Err(RunError::Input(format!(
                "{}: resource '{}' uses pcp ({}), a uniprocessor protocol: on {} CPUs its users must share one CPU, but kernel:fifo does not pin task '{}' to {} (it partitions only when every task has a 'cpu'); give every task a 'cpu' (rtsched partition places them), or run it on testbed:pfp:partition=ffd",
                ts.source,
                ts.resources[r],
                field(ts, r),
                ts.platform.cpus,
                ts.tasks[t].name,
                cpu[first].map_or("one CPU".to_string(), |c| format!("CPU {c}")),
            )));
        }
    }
    Ok(())
}
