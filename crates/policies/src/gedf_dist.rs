//! `gedf-dist` — global EDF on distributed run queues with push and pull, as Linux's
//! `SCHED_DEADLINE` implements it (gedf-heap paper: Lelli, Lipari, Faggioli, Cucinotta 2011).
//!
//! Rules: those of `gedf` — at every instant the m ready jobs with the earliest absolute
//! deadlines run — reached the kernel's way: per-CPU run queues, a push when a queue holds a
//! job that could run elsewhere, a pull when a CPU's job leaves, and a find-CPU step whose
//! variant is the paper's subject (option `push=`: `linear`, Fig 3; `fmask`, §4.1, Fig 4;
//! `heap`, the `cpudl` max-heap of §5, Figs 5–7). The machinery is policy-free and lives in
//! [`crate::common::dist`] (its numbered overview walks through §3–5); this file gives it EDF's
//! comparator [`EdfOrder`] (deadline, release, task, job, thread), so the set of running jobs
//! is `gedf`'s at every instant (checked job by job in `crates/sim/tests/gedf_dist_equivalence.rs`).
//!
//! No `cpupri`: its levels are a small fixed set, while EDF's keys are absolute deadlines,
//! unbounded and ever growing (§4; see [`crate::gfp_dist`]).

use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::Policy;
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};

// The machinery's old home: kept so existing paths (`gedf_dist::PushFind`, ...) still resolve.
pub use crate::common::dist::{timer_overhead_ns, DistDomain, DistStats};
pub use crate::common::findcpu::PushFind;

/// Global EDF with distributed run queues; `find` chooses the push variant.
pub fn gedf_dist(cpus: u32, find: PushFind, measure: bool) -> DistDomain<EdfOrder> {
    assert!(
        find != PushFind::Cpupri,
        "cpupri needs a small fixed set of priority levels; EDF has none"
    );
    let label = format!(
        "gedf-dist:{}{}",
        find.name(),
        if measure { ",measure" } else { "" }
    );
    DistDomain::new(label, EdfOrder, cpus, find, Vec::new(), measure)
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "gedf-dist",
    summary: "global EDF on per-CPU run queues with push/pull (Linux SCHED_DEADLINE); same schedule as gedf",
    paper: "gedf-heap §3–5 (push/pull, free-CPU mask, cpudl max-heap; Figs 3, 4, 7)",
    options: "push=linear|fmask|heap (default heap; bare option = push), measure (time each operation, stats only); negative control: wake=last|free (default last, the kernel's: a woken job on its task's last CPU; free: on a free CPU when that one is busy)",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// `push=linear|fmask|heap` (also bare; default heap), `measure`, `wake=last|free`.
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    let mut rest = spec.clone();
    rest.options.retain(|(k, _)| k != "wake");
    let wake_free = match spec
        .options
        .iter()
        .rev()
        .find(|(k, _)| k == "wake")
        .map(|(_, v)| v.as_str())
    {
        None | Some("last") => false,
        Some("free") => true,
        Some(x) => {
            return Err(format!(
                "scheduler 'gedf-dist': wake={x}: expected last or free"
            ))
        }
    };
    let o = ctx.dist_options(&rest, true)?;
    let find = o.find.unwrap_or(PushFind::Heap);
    if find == PushFind::Cpupri {
        return Err("scheduler 'gedf-dist': push=cpupri is for fixed priority (use gfp-dist); EDF's push variants: linear, fmask, heap".into());
    }
    let d = gedf_dist(ctx.cpus(), find, o.measure);
    Ok(Box::new(if wake_free { d.with_wake_free() } else { d }))
}
