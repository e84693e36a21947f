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
    for (p, instead, specs) in [
        ("srp", "testbed:gedf", &["fifo", "fifo:pi"][..]),
        ("pcp:original", "testbed:gfp", &["fifo", "fifo:pi"]),
        ("msrp", "use kernel:fifo with every task's 'cpu'", &[]),
        ("mrsp", "use kernel:fifo with every task's 'cpu'", &[]),
        ("fmlp+", "testbed:pfp", &["fifo", "fifo:pi"]),
        ("omlp", "testbed:gfp", &["fifo", "fifo:pi"]),
    ] {
        let ts = locking(p);
        let others = ["deadline", "other", "scx-gedf", "scx-pedf"];
        for spec in specs.iter().chain(&others) {
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

/// The 2-CPU example of docs/locking.md ("The 2-CPU example"), pinned: R global (a on CPU 0,
/// b on CPU 1), L local (b and c on CPU 1). File priorities 2, 2, 3 map to SCHED_FIFO 10,
/// 10, 89.
fn spinning(locking: &str, cpus: bool) -> TaskSet {
    let c = |k: u32| {
        if cpus {
            format!(", cpu: {k}")
        } else {
            String::new()
        }
    };
    let text = format!(
        "platform: {{cpus: 2}}\nrun: {{locking: {locking}}}\nresources: [R, L]\ntasks:\n  - {{name: a, period: 20, wcet: 8, priority: 2{}, sections: [{{resource: R, start: 0, length: 6}}]}}\n  - {{name: b, period: 20, wcet: 6, priority: 2, offset: 2{}, sections: [{{resource: R, start: 0, length: 4}}, {{resource: L, start: 5, length: 1}}]}}\n  - {{name: c, period: 20, wcet: 1, priority: 3, offset: 4{}, sections: [{{resource: L, start: 0, length: 1}}]}}\n",
        c(0),
        c(1),
        c(1)
    );
    parse_taskset(&text, Format::Yaml, "two.yaml").unwrap()
}

/// `msrp` on kernel:fifo: the global R is a spin lock taken at 90 (above every task) by both
/// its users; the local L a PTHREAD_PRIO_PROTECT mutex at its ceiling (c's 89), as `srp`
/// in priority order; the label says `:msrp`.
#[test]
fn msrp_spins_globally_at_the_top_and_takes_ceilings_locally() {
    let p = KernelPlan::new(&spinning("msrp", true), "fifo").unwrap();
    assert_eq!(p.mutexes, vec![MutexProtocol::None, Protect(89)]);
    assert_eq!(p.spins, vec![Some(vec![90, 90, 0]), None]);
    assert_eq!(super::protocols::NP_PRIORITY, 90);
    assert_eq!(p.label, "kernel:fifo:file:msrp (partitioned)");
}

/// `mrsp` on kernel:fifo: every resource a spin lock at its local ceiling — R's is each
/// user's own level (c, above it on CPU 1, does not use R), L's is c's 89 on CPU 1. Control:
/// with c using R too, b's local ceiling for R becomes 89 while a's stays 10.
#[test]
fn mrsp_spins_at_the_local_ceiling() {
    let p = KernelPlan::new(&spinning("mrsp", true), "fifo").unwrap();
    assert_eq!(p.mutexes, vec![MutexProtocol::None; 2]);
    assert_eq!(p.spins, vec![Some(vec![10, 10, 0]), Some(vec![0, 89, 89])]);
    assert_eq!(p.label, "kernel:fifo:file:mrsp (partitioned)");
    let mut ts = spinning("mrsp", true);
    ts.tasks[2].sections[0].resource = 0;
    let p = KernelPlan::new(&ts, "fifo").unwrap();
    assert_eq!(p.spins[0], Some(vec![10, 89, 89]));
}

/// Without a partition (kernel:fifo pins only when every task has a `cpu`) an `msrp` or
/// `mrsp` file is refused naming the task; a backend option contradicts either protocol.
#[test]
fn spinning_needs_a_partition_and_no_option() {
    for p in ["msrp", "mrsp"] {
        let m = refused(&spinning(p, false), "fifo");
        let head = format!("two.yaml: task 'a': resource 'R' uses {p} (run: field 'locking'), a protocol for partitioned scheduling: kernel:fifo does not pin the task to a CPU");
        assert!(m.starts_with(&head), "{p}: {m}");
        let mut half = spinning(p, true);
        half.tasks[1].cpu = None;
        assert!(refused(&half, "fifo").contains("task 'b'"), "{p}");
        for (opt, says) in [
            ("pi", "priority inheritance"),
            ("pcp", "the priority ceiling"),
        ] {
            let m = refused(&spinning(p, true), &format!("fifo:{opt}"));
            assert!(
                m.contains(&format!("the backend option ':{opt}' asks for {says}")),
                "{p} {opt}: {m}"
            );
        }
        for spec in ["deadline", "other", "scx-gedf", "scx-pedf"] {
            let m = refused(&spinning(p, true), spec);
            assert!(
                m.starts_with(&format!("two.yaml: resource 'R' uses {p}"))
                    && m.contains("cannot give its spin lock"),
                "{spec}: {m}"
            );
        }
    }
}
