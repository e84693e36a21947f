//! The necessary condition, on any set: no scheduler meets every deadline of a set whose total
//! work exceeds its CPUs (Σ C/T > m) or with a job that cannot finish by its deadline even
//! alone on as many CPUs as it can use — C > D for a sequential task, its critical path L > D
//! for a parallel one (the longest chain of its DAG; for regions, the sum over regions of the
//! longest thread; Baruah et al., RTSS 2012, for the DAG model). It refutes or stays silent:
//! a set it does not refute is "not refuted", not proven.
//!
//! With overheads (`crate::overheads`): each job needs at least C + decision + context switch
//! between its arrival and its deadline D' = D − release latency.

use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Subject, Tasks, WithOverheads,
};
use super::{dag, global, registry, Cdt, Verdict};
use rtsched_model::Overheads;

pub const ENTRY: Entry = Entry {
    name: "necessary",
    summary: "necessary condition: U ≤ m and C ≤ D (critical path ≤ D for parallel tasks)",
    citation: "total work and the critical path (Baruah et al., RTSS 2012, for DAG tasks)",
    kind: Kind::Necessary,
    applies: Applies {
        cpus: Cpus::Any,
        tasks: Tasks::Any,
        deadlines: Deadlines::Arbitrary,
        sections: Sections::Any,
        priorities: false,
        flow: Flow::Any,
    },
    verdict,
    overheads: WithOverheads::Own(with_overheads),
};

/// Sequential independent tasks: [`global::necessary`] (U compared exactly). With parallel
/// tasks or critical sections: U ≤ m and every task's critical path ≤ D.
fn verdict(s: &Subject<'_>) -> Verdict {
    let ts = s.set();
    let m = s.cpus();
    if !registry::structured(ts) {
        return global::necessary(s.cdt(), m);
    }
    let u = ts.utilization();
    for t in s.tasks() {
        let path = dag::span(t);
        if path > t.deadline {
            return Verdict::new(
                ENTRY.name,
                Some(false),
                format!(
                    "task '{}': critical path {path} ns > D {} ns",
                    t.name, t.deadline
                ),
            );
        }
    }
    Verdict::new(
        ENTRY.name,
        if u > m as f64 { Some(false) } else { None },
        format!("U={u:.6} vs m={m}; critical paths ≤ D"),
    )
}

/// On (C + decision + context switch, D − release, T): the first dispatch of a job always costs
/// a decision and a context switch (its entity is new).
fn with_overheads(s: &Subject<'_>, oh: &Overheads) -> Verdict {
    let least: Vec<Cdt> = s
        .cdt()
        .iter()
        .map(|x| Cdt {
            c: x.c + oh.decision + oh.context_switch,
            d: x.d - oh.release,
            t: x.t,
        })
        .collect();
    let mut v = global::necessary(&least, s.cpus());
    v.detail = format!(
        "with C + decision + context switch, D − release: {}",
        v.detail
    );
    v
}
