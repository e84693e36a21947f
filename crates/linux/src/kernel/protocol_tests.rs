//! The kernel backends' mutexes follow the file's locking protocol (`protocols.rs`), planned
//! through [`KernelPlan`] as a run plans them: no thread is started.

use super::plan::KernelPlan;
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
