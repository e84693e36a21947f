//! `ThreadProgram::held` (what a Gantt chart hatches) against the ledger's own walk of a
//! thread's checkpoints (`next_step`): for any sections and any demand, the stretches `held`
//! gives are exactly those between the work done at each acquire and at its release as the
//! ledger reaches them.

use proptest::prelude::*;
use rtsched_model::{Action, CriticalSection, Program, ResourceId, Time};
use rtsched_runtime::{next_step, Next};

/// The stretches the ledger's walk passes: (resource, work done at the acquire, at the release),
/// in the order of the acquires.
fn walked(p: &Program, demand: Time) -> Vec<(ResourceId, Time, Time)> {
    let tp = &p.regions[0][0];
    let (mut done, mut cp, mut out, mut open) = (0, 0u32, Vec::new(), Vec::new());
    loop {
        match next_step(tp, demand, done, cp) {
            Next::Run(x) => done += x,
            Next::At(Action::Acquire(r)) => {
                open.push(out.len());
                out.push((r, done, done));
                cp += 1;
            }
            Next::At(Action::Release(r)) => {
                let k = open.iter().rposition(|&i: &usize| out[i].0 == r).unwrap();
                out[open.remove(k)].2 = done;
                cp += 1;
            }
            Next::Done => return out,
        }
    }
}

/// Sections one after another over a thread: each (gap, length, inner) an outer section on
/// resource 0 after `gap`, holding resource 1 over its middle third when `inner`. Returns the
/// thread's WCET (1 past the last section) and the sections.
fn sections(parts: &[(Time, Time, bool)]) -> (Time, Vec<CriticalSection>) {
    let (mut at, mut out) = (0, Vec::new());
    let sec = |resource, start, length| CriticalSection {
        resource,
        region: 0,
        thread: 0,
        start,
        length,
    };
    for &(gap, len, inner) in parts {
        at += gap;
        out.push(sec(0, at, len));
        if inner && len >= 3 {
            out.push(sec(1, at + len / 3, len / 3));
        }
        at += len;
    }
    (at + 1, out)
}

proptest! {
    #[test]
    fn held_is_what_the_ledger_walks(
        parts in prop::collection::vec((0u64..50, 1u64..60, any::<bool>()), 1..6),
        permille in 1u64..2000,
    ) {
        let (wcet, secs) = sections(&parts);
        let p = Program::build(wcet, &[], &secs);
        let demand = (wcet * permille / 1000).max(1);
        prop_assert_eq!(p.regions[0][0].held(demand), walked(&p, demand));
        prop_assert_eq!(p.regions[0][0].held(wcet), walked(&p, wcet));
    }
}
