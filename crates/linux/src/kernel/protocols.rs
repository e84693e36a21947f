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

use super::plan::{fifo_ceilings, KernelPolicy};
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

/// The mutexes' protocols under `policy`: a ceiling is its resource's highest SCHED_FIFO
/// priority of its users ([`fifo_ceilings`]). A resource the file puts under `pcp` on several
/// CPUs needs its users pinned to one CPU (a local resource), as the testbed refuses a global
/// scheduler for it; the option `:pcp` on a `none` file is taken as asked.
pub(super) fn mutexes(
    ts: &TaskSet,
    kinds: &[Kind],
    policy: &KernelPolicy,
) -> Result<Vec<MutexProtocol>, RunError> {
    let ceilings = match policy {
        KernelPolicy::Fifo { prio, cpu, .. } => {
            if ts.platform.cpus > 1 {
                split_refused(ts, kinds, cpu)?;
            }
            fifo_ceilings(ts, prio)
        }
        _ => Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::super::plan::KernelPlan;
    use crate::options::RunError;
    use crate::sys::MutexProtocol::{self, Inherit, Protect};
    use rtsched_model::file::{parse_taskset, Format};
    use rtsched_model::TaskSet;

    /// Issue 56's example (docs/locking.md): R used by l and h, so R's ceiling is h's level
    /// (89); S used by m alone (49).
    fn golden(run: &str, resources: &str) -> TaskSet {
        let text = format!(
            "platform: {{cpus: 1}}\nrun: {{{run}}}\nresources: {resources}\ntasks:\n  - {{name: l, period: 100, wcet: 4, priority: 1, sections: [{{resource: R, start: 0, length: 4}}]}}\n  - {{name: h, period: 100, wcet: 2, priority: 3, offset: 1, sections: [{{resource: R, start: 0, length: 1}}]}}\n  - {{name: m, period: 100, wcet: 5, priority: 2, offset: 2, sections: [{{resource: S, start: 0, length: 1}}]}}\n"
        );
        parse_taskset(&text, Format::Yaml, "g.yaml").unwrap()
    }

    fn locking(p: &str) -> TaskSet {
        golden(&format!("locking: {p}"), "[R, S]")
    }

    fn plan(ts: &TaskSet, spec: &str) -> (Vec<MutexProtocol>, String) {
        let p = KernelPlan::new(ts, spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        (p.mutexes, p.label)
    }

    fn refused(ts: &TaskSet, spec: &str) -> String {
        match KernelPlan::new(ts, spec) {
            Err(RunError::Input(m)) => m,
            Ok(p) => panic!("{spec} accepted as {} {:?}", p.label, p.mutexes),
            Err(e) => panic!("{spec}: {e}"),
        }
    }

    /// A `pip` file runs on PTHREAD_PRIO_INHERIT mutexes under every kernel policy that has
    /// them, as the option `:pi` does, with `:pi` in the label; `:pi` beside it agrees.
    #[test]
    fn a_pip_file_inherits_as_pi_does() {
        let ts = locking("pip");
        let none = locking("none");
        for spec in ["fifo", "fifo:pi", "deadline", "other", "fifo:rm"] {
            let (m, label) = plan(&ts, spec);
            assert_eq!(m, vec![Inherit; 2], "{spec}");
            assert!(label.ends_with(":pi"), "{spec}: {label}");
        }
        assert_eq!(plan(&ts, "fifo"), plan(&none, "fifo:pi"));
        assert_eq!(plan(&ts, "deadline").1, "kernel:deadline:pi");
        // Control: the same set under `none` keeps plain mutexes.
        assert_eq!(plan(&none, "fifo").0, vec![MutexProtocol::None; 2]);
    }

    /// A `pcp` file under kernel:fifo: PTHREAD_PRIO_PROTECT at each resource's ceiling, the
    /// plan `kernel:fifo:pcp` makes of a `none` file; the ceilings follow the priorities used
    /// (RM's under `fifo:rm`: h and l share the period, so R's ceiling is l's and h's level).
    #[test]
    fn a_pcp_file_takes_the_ceilings_as_pcp_does() {
        let ts = locking("pcp");
        let (m, label) = plan(&ts, "fifo");
        assert_eq!(m, vec![Protect(89), Protect(49)]);
        assert_eq!(label, "kernel:fifo:file:pcp");
        assert_eq!(plan(&ts, "fifo"), plan(&locking("none"), "fifo:pcp"));
        assert_eq!(plan(&ts, "fifo:pcp"), plan(&ts, "fifo"));
        let (rm, _) = plan(&ts, "fifo:rm");
        assert!(matches!(rm[..], [Protect(_), Protect(_)]), "{rm:?}");
    }

    /// A protocol the kernel's mutexes cannot give is refused naming the file, the resource,
    /// the protocol and what to run instead, on every kernel policy: never a plain mutex.
    #[test]
    fn protocols_the_kernel_cannot_give_are_refused() {
        for (p, instead) in [
            ("srp", "testbed:gedf"),
            ("pcp:original", "testbed:gfp"),
            ("msrp", "testbed:pfp"),
            ("mrsp", "testbed:pfp"),
            ("fmlp+", "testbed:pfp"),
            ("omlp", "testbed:gfp"),
        ] {
            let ts = locking(p);
            for spec in [
                "fifo", "fifo:pi", "deadline", "other", "scx-gedf", "scx-pedf",
            ] {
                let m = refused(&ts, spec);
                let head = format!("g.yaml: resource 'R' uses {p} (run: field 'locking'): ");
                assert!(
                    m.starts_with(&head) && m.contains(instead),
                    "{p} {spec}: {m}"
                );
            }
        }
    }

    /// `pcp` needs SCHED_FIFO priorities, and the BPF schedulers cannot lend by inheritance:
    /// refused, saying what to use instead.
    #[test]
    fn pcp_off_fifo_and_pip_on_bpf_are_refused() {
        let pcp = locking("pcp");
        for spec in ["deadline", "deadline:pi", "other", "scx-gedf", "scx-pedf"] {
            let m = refused(&pcp, spec);
            assert!(
                m.starts_with("g.yaml: resource 'R' uses pcp (run: field 'locking'): ")
                    && m.contains("use kernel:fifo"),
                "{spec}: {m}"
            );
        }
        for spec in ["scx-gedf", "scx-pedf"] {
            let m = refused(&locking("pip"), spec);
            assert!(
                m.contains("cannot give priority inheritance") && m.contains("kernel:scx:POLICY"),
                "{spec}: {m}"
            );
        }
    }

    /// A backend option that contradicts the file is refused, naming the option; `none`
    /// resources follow the option, a resource's own `protocol` field is named as such.
    #[test]
    fn an_option_that_contradicts_the_file_is_refused() {
        let m = refused(&locking("pcp"), "fifo:pi");
        assert!(
            m.starts_with("g.yaml: resource 'R' uses pcp (run: field 'locking'): the backend option ':pi' asks for priority inheritance"),
            "{m}"
        );
        let m = refused(&locking("pip"), "fifo:pcp");
        assert!(m.contains("the backend option ':pcp'"), "{m}");
        // R under pip by its own field, S under none: S follows the option.
        let mixed = golden("", "[{name: R, protocol: pip}, S]");
        assert_eq!(
            plan(&mixed, "fifo"),
            (
                vec![Inherit, MutexProtocol::None],
                "kernel:fifo:file:pi".into()
            )
        );
        assert_eq!(plan(&mixed, "fifo:pi").0, vec![Inherit; 2]);
        let m = refused(&mixed, "fifo:pcp");
        assert!(
            m.starts_with("g.yaml: resource 'R' uses pip (its field 'protocol'): "),
            "{m}"
        );
        // Both protocols in one file: both in the label.
        let both = golden("locking: pcp", "[{name: R, protocol: pip}, S]");
        assert_eq!(
            plan(&both, "fifo"),
            (vec![Inherit, Protect(49)], "kernel:fifo:file:pi:pcp".into())
        );
    }

    /// On several CPUs a file's `pcp` resource needs its users pinned to one CPU (a
    /// uniprocessor protocol, as the testbed refuses a global scheduler for it); the option
    /// `:pcp` on a `none` file is taken as asked (today's behaviour).
    #[test]
    fn a_pcp_file_on_several_cpus_needs_its_users_on_one() {
        let two = |run: &str, cpu: &str| {
            let text = format!("platform: {{cpus: 2}}\nrun: {{{run}}}\nresources: [R]\ntasks:\n  - {{name: a, period: 10, wcet: 1, priority: 1{cpu}, sections: [{{resource: R, start: 0, length: 1}}]}}\n  - {{name: b, period: 10, wcet: 1, priority: 2{cpu}, sections: [{{resource: R, start: 0, length: 1}}]}}\n");
            parse_taskset(&text, Format::Yaml, "two.yaml").unwrap()
        };
        let m = refused(&two("locking: pcp", ""), "fifo");
        assert!(
            m.starts_with("two.yaml: resource 'R' uses pcp (run: field 'locking'), a uniprocessor protocol: on 2 CPUs")
                && m.contains("task 'a'"),
            "{m}"
        );
        assert_eq!(plan(&two("", ""), "fifo:pcp").0, vec![Protect(89)]);
        let (m, label) = plan(&two("locking: pcp", ", cpu: 1"), "fifo");
        assert_eq!(
            (m, label.as_str()),
            (vec![Protect(89)], "kernel:fifo:file:pcp (partitioned)")
        );
    }
}
