//! Each resource's mutex protocol under a kernel backend: the task set's own locking protocol
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
//! - Nothing else: `pcp:original`'s ceiling blocking of a free mutex, `srp`'s start gate,
//!   spinning (`msrp`, `mrsp`), FIFO suspension queues with boosting (`fmlp+`) and `omlp`'s
//!   queues are rules the ledger applies, so they run on the testbed and in the simulator. A
//!   file asking for one is refused with exit 2, naming the file, the resource and what to use
//!   instead: never run as a plain mutex.
//!
//! A backend option that contradicts the file (`:pi` on a `pcp` resource, `:pcp` on a `pip`
//! one) is refused likewise; one that agrees with it is accepted.

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
}

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
        Protocol::Msrp | Protocol::Mrsp | Protocol::FmlpPlus => "run it on testbed:pfp or testbed:pedf",
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
            let (kind, contradicts) = match p {
                Protocol::None => return Ok(option),
                Protocol::Pip if name.starts_with("scx-") => {
                    return Err(refuse(format!(
                        "kernel:{name} cannot give priority inheritance (its BPF scheduler orders threads by deadline, which a PTHREAD_PRIO_INHERIT mutex does not lend); run it on kernel:scx:POLICY or testbed:POLICY"
                    )))
                }
                Protocol::Pip => (Kind::Inherit, Kind::Ceiling),
                Protocol::Pcp if !fifo => {
                    return Err(refuse(format!(
                        "kernel:{name} cannot give the priority ceiling (PTHREAD_PRIO_PROTECT raises a thread to a SCHED_FIFO priority); use kernel:fifo, or run it on testbed:POLICY"
                    )))
                }
                Protocol::Pcp => (Kind::Ceiling, Kind::Inherit),
                _ => {
                    return Err(refuse(format!(
                        "the kernel's mutexes cannot give it (they give pip, PTHREAD_PRIO_INHERIT, and under kernel:fifo pcp, PTHREAD_PRIO_PROTECT); {}",
                        instead(p)
                    )))
                }
            };
            if option == contradicts {
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
/// one has a ceiling, both for a file that mixes them.
pub(super) fn suffix(option: Kind, kinds: &[Kind]) -> String {
    let any = |k: Kind| option == k || kinds.contains(&k);
    let mut s = String::new();
    if any(Kind::Inherit) {
        s.push_str(":pi");
    }
    if any(Kind::Ceiling) {
        s.push_str(":pcp");
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

/// The mutexes' protocols; `fifo` is kernel:fifo's SCHED_FIFO priority and CPU per task (no
/// ceiling without it: [`kinds`] refused `pcp` elsewhere). A ceiling is its resource's
/// highest SCHED_FIFO priority of its users ([`fifo_ceilings`]). A resource the file puts
/// under `pcp` on several CPUs needs its users pinned to one CPU (a local resource), as the
/// testbed refuses a global scheduler for it; the option `:pcp` on a `none` file is taken as
/// asked.
pub(super) fn mutexes(
    ts: &TaskSet,
    kinds: &[Kind],
    fifo: Option<(&[u32], &[Option<u32>])>,
) -> Result<Vec<MutexProtocol>, RunError> {
    let ceilings = match fifo {
        Some((prio, cpu)) => {
            if ts.platform.cpus > 1 {
                split_refused(ts, kinds, cpu)?;
            }
            fifo_ceilings(ts, prio)
        }
        None => Vec::new(),
    };
    Ok(kinds
        .iter()
        .enumerate()
        .map(|(r, k)| match k {
            Kind::Plain => MutexProtocol::None,
            Kind::Inherit => MutexProtocol::Inherit,
            Kind::Ceiling => MutexProtocol::Protect(ceilings[r]),
        })
        .collect())
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
