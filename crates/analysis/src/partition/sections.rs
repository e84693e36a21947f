//! Blocking-aware admission (docs/locking.md, "Analysis"): a partition of a set with critical
//! sections under a protocol the admission test bounds — `pip`, `pcp` or `srp` for the FP
//! response-time analysis and for EDF's demand test — keeps every resource *local* (a task
//! is not admitted to a CPU while a task it shares a resource with sits on another), and admits
//! a task only if the CPU's tasks pass the uniprocessor test with their blocking terms
//! (`schedulability::blocking`). Global resources would need a multiprocessor protocol's bound
//! (MSRP's and MrsP's are in `schedulability::spinning`, for a placed set, but admission does
//! not charge them yet); this keeps the partition clear of them, as the
//! synchronization-aware packing of Lakshmanan, de Niz & Rajkumar (RTSS 2009, §5) bundles the
//! tasks that share resources: the fit heuristics place a task's whole bundle at once
//! ([`Sections::bundles`], `fit.rs`), and never split one (their step of breaking a bundle
//! that fits nowhere makes its resources global, which `pcp` and `srp` cannot have).
//!
//! A set whose protocol the test does not bound (`none`, mixed protocols, nested sections
//! under `pip`, `srp` levels that disagree with the priorities) is admitted as before, its
//! sections not counted: `counts_sections` says which, and `rtsched partition` warns.

use super::Admission;
use crate::schedulability::blocking;
use crate::schedulability::uniprocessor::{edf_exact, edf_srp_with, response_time_blocked};
use crate::schedulability::Cdt;
use rtsched_model::{Protocol, Task, TaskSet};

/// What blocking-aware admission needs of the set: its tasks (sections) and the protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct Sections {
    pub tasks: Vec<Task>,
    pub protocol: Protocol,
}

impl Sections {
    /// Each task's bundle ([`bundles`]).
    pub fn bundles(&self) -> Vec<usize> {
        bundles(&self.tasks)
    }
}

/// Each task's bundle, named by its first task: the tasks linked to it by a chain of shared
/// resources (a task without sections is a bundle of its own).
pub fn bundles(tasks: &[Task]) -> Vec<usize> {
    let n = tasks.len();
    let mut b: Vec<usize> = (0..n).collect();
    let shares = |i: usize, j: usize| {
        tasks[i]
            .sections
            .iter()
            .any(|x| tasks[j].sections.iter().any(|y| y.resource == x.resource))
    };
    // Relabel to the smallest linked label until nothing changes (n is small).
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            for j in i + 1..n {
                if b[i] != b[j] && shares(i, j) {
                    let (lo, hi) = (b[i].min(b[j]), b[i].max(b[j]));
                    b.iter_mut().filter(|x| **x == hi).for_each(|x| *x = lo);
                    changed = true;
                }
            }
        }
    }
    b
}

impl Admission {
    /// `self` charging `ts`'s critical sections, when its test bounds their blocking; else
    /// `self` unchanged.
    pub fn counting_sections(self, ts: &TaskSet) -> Admission {
        let Ok(Some(p)) = blocking::protocol_of(ts) else {
            return self;
        };
        let none_used = (0..ts.resources.len())
            .any(|r| ts.protocol(r) == Protocol::None && ts.users(r).next().is_some());
        // msrp, mrsp, fmlp+: global resources allowed, every CPU re-checked (`remote.rs`).
        if p.partitioned() {
            return match super::remote::Remote::admission(&self, ts, p) {
                Some(r) if !none_used => Admission::Remote(Box::new(self), Box::new(r)),
                _ => self,
            };
        }
        let takes = match &self {
            Admission::FpRta(prio) => {
                let all: Vec<&Task> = ts.tasks.iter().collect();
                matches!(
                    p,
                    Protocol::Pip | Protocol::Pcp | Protocol::PcpOriginal | Protocol::Srp
                ) && blocking::fp_blocking(&all, prio, p).is_ok()
                    && !(p == Protocol::Pip && ts.tasks.iter().any(blocking::nests))
            }
            Admission::EdfExact => {
                matches!(p, Protocol::Pip | Protocol::Pcp | Protocol::Srp)
                    && !(p == Protocol::Pip && ts.tasks.iter().any(blocking::nests))
            }
            _ => false,
        };
        if none_used || !takes || p == Protocol::None {
            return self;
        }
        Admission::Blocking(
            Box::new(self),
            Box::new(Sections {
                tasks: ts.tasks.clone(),
                protocol: p,
            }),
        )
    }

    /// Whether admission charges the set's critical sections.
    pub fn counts_sections(&self) -> bool {
        self.counted().is_some()
    }

    /// The protocol whose blocking (and spin) terms admission charges, if any.
    pub fn counted(&self) -> Option<Protocol> {
        match self {
            Admission::Blocking(_, s) => Some(s.protocol),
            Admission::Remote(_, r) => Some(r.protocol),
            _ => None,
        }
    }
}

/// Whether the tasks `idx` (a CPU's, the newcomers among them) pass `base` with blocking,
/// `new` sharing no resource with a task of `elsewhere` (the other CPUs' tasks).
pub fn admits(
    cdt: &[Cdt],
    idx: &[usize],
    new: &[usize],
    elsewhere: impl IntoIterator<Item = usize>,
    base: &Admission,
    s: &Sections,
) -> bool {
    let uses = |i: usize, r: u32| s.tasks[i].sections.iter().any(|x| x.resource == r);
    let split = elsewhere.into_iter().any(|j| {
        new.iter()
            .any(|&i| s.tasks[i].sections.iter().any(|x| uses(j, x.resource)))
    });
    if split {
        return false;
    }
    let c: Vec<Cdt> = idx.iter().map(|&i| cdt[i]).collect();
    let tasks: Vec<&Task> = idx.iter().map(|&i| &s.tasks[i]).collect();
    match base {
        Admission::FpRta(prio) => {
            let p: Vec<u32> = idx.iter().map(|&i| prio[i]).collect();
            match blocking::fp_blocking(&tasks, &p, s.protocol) {
                Ok(b) => (0..c.len()).all(|k| response_time_blocked(&c, &p, k, b[k]).is_some()),
                Err(_) => false,
            }
        }
        Admission::EdfExact => {
            edf_exact(&c) == Some(true)
                && edf_srp_with(&c, |l| blocking::edf_term(&tasks, s.protocol, l)).is_ok()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::by_name;
    use crate::priority::Priorities;
    use rtsched_model::CriticalSection;

    const MS: u64 = 1_000_000;

    fn task(name: &str, t: u64, c: u64, r: Option<u64>) -> Task {
        let mut x = Task::periodic(name, t * MS, c * MS);
        x.sections = r
            .map(|len| CriticalSection {
                resource: 0,
                region: 0,
                thread: 0,
                start: 0,
                length: len * MS,
            })
            .into_iter()
            .collect();
        x
    }

    fn set(m: u32, tasks: Vec<Task>, p: Protocol) -> TaskSet {
        let mut ts = TaskSet::new(m, tasks);
        ts.resources = vec!["R".into()];
        ts.run.locking = p;
        ts
    }

    fn rm(ts: &TaskSet) -> Admission {
        Admission::FpRta(Priorities::RateMonotonic.of(&ts.tasks).unwrap())
    }

    /// One CPU, RM: hi (T 4, C 2, R for 1), lo (T 100, C 3, R for 3). Without blocking both
    /// fit (R_hi = 2, R_lo = 3 + 2·2 = 7); with pcp B_hi = 3, R_hi = 5 > 4: lo is refused.
    /// Under `none` the sections are not counted (and `partition` warns).
    #[test]
    fn blocking_can_refuse_what_utilisation_admits() {
        let ts = set(
            1,
            vec![task("hi", 4, 2, Some(1)), task("lo", 100, 3, Some(3))],
            Protocol::Pcp,
        );
        let adm = rm(&ts).counting_sections(&ts);
        assert!(adm.counts_sections());
        let ffd = by_name("ffd").unwrap();
        let e = ffd.partition(&ts, &adm).unwrap_err();
        assert_eq!(e.task_name, "hi", "hi brings lo, its bundle");
        assert!(e.message.contains("with the tasks it shares"), "{e}");
        assert!(
            ffd.partition(&ts, &rm(&ts)).is_ok(),
            "the control: sections ignored"
        );
        let none = set(1, ts.tasks.clone(), Protocol::None);
        assert!(!rm(&none).counting_sections(&none).counts_sections());
        assert!(
            Admission::EdfExact.counting_sections(&ts).counts_sections(),
            "edf bounds pcp"
        );
        let orig = set(1, ts.tasks.clone(), Protocol::PcpOriginal);
        assert!(
            !Admission::EdfExact
                .counting_sections(&orig)
                .counts_sections(),
            "edf does not bound pcp:original"
        );
        let srp = set(1, ts.tasks.clone(), Protocol::Srp);
        assert!(Admission::EdfExact
            .counting_sections(&srp)
            .counts_sections());
    }

    /// Two CPUs, T = 10 ms, ffd by utilisation: w (6), x (5, R for 4), z (3), y (2, R for 1).
    /// w → 0, x → 1, z → 0 (0.9), y: CPU 0 has room by U only if ... 0.9 + 0.2 > 1, so CPU 1
    /// with x (R_x = 5 + B 1 = 6, R_y = 2 + 5 = 7): R stays local. Sections ignored, the same
    /// set with y needing CPU 0 would split R; here it checks y lands beside x.
    #[test]
    fn sharers_are_kept_on_one_cpu() {
        let ts = set(
            2,
            vec![
                task("x", 10, 5, Some(4)),
                task("y", 10, 2, Some(1)),
                task("z", 10, 3, None),
                task("w", 10, 6, None),
            ],
            Protocol::Pcp,
        );
        let adm = rm(&ts).counting_sections(&ts);
        let p = by_name("ffd").unwrap().partition(&ts, &adm).unwrap();
        assert_eq!(p.cpu_of_task, vec![1, 1, 0, 0]);
        // wfd spreads by load: x and y would go apart without the rule.
        let p = by_name("wfd").unwrap().partition(&ts, &adm).unwrap();
        assert_eq!(p.cpu_of_task[0], p.cpu_of_task[1], "{p:?}");
        let loose = by_name("wfd").unwrap().partition(&ts, &rm(&ts)).unwrap();
        assert_ne!(
            loose.cpu_of_task[0], loose.cpu_of_task[1],
            "the control: {loose:?}"
        );
    }

    /// Two CPUs, T = 10 ms, RM (ties by file order), pcp; FFD order x (.5, R for 1), w (.4),
    /// y (.4, R for 1). One task at a time, x → 0, w → 0 (.9), and y fits beside x nowhere:
    /// blocking-aware FFD would fail, and ignoring the sections it puts y on CPU 1 (R split).
    /// Bundled, x brings y: {x, y} (.9) → 0 (R_x = 5 + B 1 = 6, R_y = 4 + 5 = 9), w → 1.
    /// A bundle that fits nowhere (x .6, y .5) fails, naming x; sections ignored, it places.
    #[test]
    fn a_bundle_of_sharers_is_placed_whole() {
        let ts = set(
            2,
            vec![
                task("x", 10, 5, Some(1)),
                task("w", 10, 4, None),
                task("y", 10, 4, Some(1)),
            ],
            Protocol::Pcp,
        );
        let adm = rm(&ts).counting_sections(&ts);
        let Admission::Blocking(_, s) = &adm else {
            panic!("counts sections")
        };
        assert_eq!(s.bundles(), vec![0, 1, 0]);
        let ffd = by_name("ffd").unwrap();
        assert_eq!(ffd.partition(&ts, &adm).unwrap().cpu_of_task, vec![0, 1, 0]);
        let loose = ffd.partition(&ts, &rm(&ts)).unwrap();
        assert_eq!(loose.cpu_of_task, vec![0, 0, 1], "the control: R split");
        let edf = Admission::EdfExact.counting_sections(&ts);
        assert_eq!(ffd.partition(&ts, &edf).unwrap().cpu_of_task, vec![0, 1, 0]);
        let big = set(
            2,
            vec![task("x", 10, 6, Some(1)), task("y", 10, 5, Some(1))],
            Protocol::Pcp,
        );
        let e = ffd
            .partition(&big, &rm(&big).counting_sections(&big))
            .unwrap_err();
        assert_eq!(e.task_name, "x");
        assert!(ffd.partition(&big, &rm(&big)).is_ok());
    }
}
