//! Blocking-aware admission for the multiprocessor protocols `msrp`, `mrsp` and `fmlp+`
//! (docs/locking.md, "Partitioning"), where a resource may be *global*.
//!
//! 1. **Why every CPU is re-checked.** Under these protocols a task's spin (`msrp`, `mrsp`:
//!    one section per other CPU using the resource, `schedulability::spinning`) or remote
//!    blocking (`fmlp+`: every task of another CPU using it, `schedulability::fmlp`) depends on
//!    where the *other* users of its resources sit, so placing a task on one CPU can make a CPU
//!    filled earlier fail. The admission rule is the one of the partitioning heuristics for spin
//!    locks of Wieder & Brandenburg (*Efficient partitioning of sporadic real-time tasks with
//!    shared resources and spin locks*, SIES 2013): a task is placed on a CPU only if *every*
//!    CPU placed so far still passes the per-CPU test with the blocking terms computed from the
//!    partial placement, the tasks not yet placed contributing nothing (their sections are not
//!    there yet). We keep the heuristic's fit rule and order (FFD, WFD, BFD, ...) and only
//!    change what "admits" means; their own Greedy Slacker heuristic (the CPU that leaves the
//!    most slack) is not built.
//! 2. **The test is the registry's** per-CPU one, so a partition is admitted by exactly the
//!    terms `analyze` reports of it: `p-fp-rta-file` with the admission's priorities written in
//!    (MSRP and MrsP: spin added to the WCET, SRP/ceiling blocking; FMLP+: suspension-aware,
//!    remote and boost blocking), `p-edf-exact` under EDF (MSRP, Gai et al. 2001; FMLP+,
//!    `fmlp_edf.rs`: whatever protocols the registry's entry takes), or the
//!    whole-set form on one CPU. A verdict other than "schedulable" (a miss, inconclusive, or
//!    "not applicable", e.g. MrsP without helping where a task outranks a global resource's
//!    local ceiling) refuses the placement; the last refusal's words are kept for the error.
//! 3. **Local or global follows from the placement**, as the simulator decides
//!    (`spinning::is_global`, the ledger): a resource whose placed users are all on one CPU is
//!    local and is counted so (`msrp`: an `srp` resource; `mrsp`: its ceiling; `fmlp+`: boost
//!    blocking only).
//! 4. **Order** (`fit.rs`): a task comes with its *bundle*, the unplaced tasks linked to it by
//!    shared resources, offered whole first so that its resources can stay local (Lakshmanan,
//!    de Niz & Rajkumar, RTSS 2009, §5: bundles placed whole when they fit); when a bundle
//!    fits whole nowhere, the task that brought it is placed alone and its mates go back to
//!    their own turns in the heuristic's order (their step of breaking a bundle, simplified:
//!    no cost-driven cut; as LWFG drops a member of a group that does not fit).
//! 5. The final partition is re-checked whole ([`check`] on every task), so a partition this
//!    admission returns passes the per-CPU test as `analyze` runs it.

use super::Admission;
use crate::schedulability::registry::{find, Sections as Modelled, Test};
use crate::schedulability::{Cdt, ENTRIES};
use rtsched_model::{Protocol, TaskSet, Time};

/// What admission needs of a set under a multiprocessor protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct Remote {
    /// The set (sections, resources, protocols, run options) with no task and no chain: a
    /// partial placement is written into a copy of it.
    pub template: TaskSet,
    /// The tasks, `cpu` cleared.
    pub tasks: Vec<rtsched_model::Task>,
    pub protocol: Protocol,
}

/// The registry test (its one-CPU name) an admission base stands for.
fn test_of(base: &Admission) -> Option<&'static str> {
    match base {
        Admission::FpRta(_) => Some("fp-rta-file"),
        Admission::EdfExact => Some("edf-exact"),
        _ => None,
    }
}

/// Whether the registry's test for `base` bounds protocol `p` (its typed predicate,
/// `registry::Sections::Blocking`).
fn bounds(base: &Admission, ts: &TaskSet, p: Protocol) -> bool {
    let Some(t) = test_of(base).and_then(|n| find(ENTRIES, n)) else {
        return false;
    };
    // A set whose structure the test does not model (parallel regions, DAGs, suspensions)
    // could be placed nowhere by it: such a set is admitted as without sections, as before.
    matches!(t.entry.applies.sections, Modelled::Blocking(takes) if takes.contains(&p))
        && t.entry.applies.models(ts).is_ok()
}

impl Remote {
    /// `base` charging `ts`'s sections under the multiprocessor protocol `p`, where its test
    /// bounds `p` and the set is one it can bound whatever the placement (no nested section;
    /// FMLP+'s bound is for D ≤ T). `None` otherwise.
    pub fn admission(base: &Admission, ts: &TaskSet, p: Protocol) -> Option<Remote> {
        if !p.partitioned() || !bounds(base, ts, p) {
            return None;
        }
        if ts.tasks.iter().any(crate::schedulability::blocking::nests) {
            return None;
        }
        if p == Protocol::FmlpPlus && ts.tasks.iter().any(|t| t.deadline > t.period) {
            return None;
        }
        let mut tasks = ts.tasks.clone();
        for t in &mut tasks {
            t.cpu = None;
        }
        Some(Remote {
            template: TaskSet {
                tasks: Vec::new(),
                chains: Vec::new(),
                ..ts.clone()
            },
            tasks,
            protocol: p,
        })
    }

    /// The set of the tasks `placed` (index, CPU), in file order, as admission sees them:
    /// WCET, deadline and period from `cdt` (inflated by overheads when they are charged, so
    /// the copy charges none again), priorities from an FP `base`.
    fn partial(&self, cdt: &[Cdt], placed: &[(usize, u32)], base: &Admission) -> TaskSet {
        let mut ts = self.template.clone();
        ts.run.overheads = Default::default();
        let mut order: Vec<(usize, u32)> = placed.to_vec();
        order.sort_unstable();
        ts.tasks = order
            .iter()
            .map(|&(i, cpu)| {
                let mut t = self.tasks[i].clone();
                t.cpu = Some(cpu);
                (t.wcet, t.deadline, t.period) = (cdt[i].c, cdt[i].d, cdt[i].t);
                if let Admission::FpRta(prio) = base {
                    t.priority = Some(prio[i]);
                }
                t
            })
            .collect();
        ts
    }
}

/// The test `base` stands for, in the form for `m` CPUs.
fn test(base: &Admission, m: u32) -> Test {
    let name = test_of(base).expect("a Remote admission has a registry test");
    let name = match m {
        1 => name.to_string(),
        _ => format!("p-{name}"),
    };
    find(ENTRIES, &name).expect("a registry test")
}

/// Whether the tasks `placed` (index, CPU) pass `base`'s per-CPU test with `r`'s protocol's
/// terms on the placement they form (tasks not in `placed` contribute nothing). `Err`: the
/// test's words (which CPU fails and why, or why it does not apply).
pub fn check(
    cdt: &[Cdt],
    placed: &[(usize, u32)],
    base: &Admission,
    r: &Remote,
) -> Result<(), String> {
    let ts = r.partial(cdt, placed, base);
    match test(base, ts.platform.cpus).run(&ts) {
        Ok(v) if v.schedulable == Some(true) => Ok(()),
        Ok(v) => Err(v.detail),
        Err(na) => Err(na.words(&ts)),
    }
}

/// Each CPU's counted terms on the placement of `ts` (every task's `cpu` given, as `placed`
/// by a partitioner under `adm`), for `rtsched partition`: one line per CPU, naming the
/// protocol, the largest spin and blocking term charged on it and its global resources.
/// `None` when `adm` does not charge a multiprocessor protocol's terms.
pub fn terms(ts: &TaskSet, adm: &Admission) -> Option<Vec<String>> {
    let Admission::Remote(base, r) = adm else {
        return None;
    };
    let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
    let placed: Vec<(usize, u32)> = ts
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (i, t.cpu.unwrap_or(0)))
        .collect();
    let set = r.partial(&cdt, &placed, base);
    let v = test(base, set.platform.cpus).run(&set).ok()?;
    let ms = |x: Time| format!("{:.3} ms", x as f64 / 1e6);
    let lines = (0..ts.platform.cpus)
        .map(|cpu| {
            let rows = v.tasks.iter().filter(|b| placed[b.task].1 == cpu);
            let (spin, block) = rows.fold((0, 0), |(s, b), x| {
                (s.max(x.spin.unwrap_or(0)), b.max(x.blocking.unwrap_or(0)))
            });
            let global: Vec<&str> = (0..set.resources.len())
                .filter(|&q| {
                    crate::schedulability::spinning::is_global(&set, q)
                        && set.users(q).any(|i| placed[i].1 == cpu)
                })
                .map(|q| set.resources[q].as_str())
                .collect();
            let spin = match r.protocol.spins() {
                true => format!("spin ≤ {}, ", ms(spin)),
                false => String::new(),
            };
            let global = match global.is_empty() {
                true => "none".to_string(),
                false => global.join(", "),
            };
            format!(
                "{} terms counted: {spin}blocking ≤ {}; global resources: {global}",
                r.protocol.name(),
                ms(block)
            )
        })
        .collect();
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::by_name;
    use rtsched_model::{CriticalSection, Task};

    const MS: Time = 1_000_000;

    /// T = D = 10 ms; `prio` the file's (larger is more urgent); a section on R from the start.
    fn task(name: &str, c: Time, prio: u32, r: Option<Time>) -> Task {
        let mut t = Task::periodic(name, 10 * MS, c * MS);
        t.priority = Some(prio);
        t.sections = r
            .map(|len| CriticalSection {
                resource: 0,
                region: 0,
                thread: 0,
                start: 0,
                length: len * MS,
            })
            .into_iter()
            .collect();
        t
    }

    fn set(tasks: Vec<Task>, p: Protocol) -> TaskSet {
        let mut ts = TaskSet::new(2, tasks);
        ts.resources = vec!["R".into()];
        ts.run.locking = p;
        ts
    }

    fn file(ts: &TaskSet) -> Admission {
        Admission::FpRta(ts.tasks.iter().map(|t| t.priority.unwrap()).collect())
    }

    /// `ts` with the CPUs of `cpu_of`, through `p-fp-rta-file`.
    fn analysed(ts: &TaskSet, cpu_of: &[u32]) -> Option<bool> {
        let mut placed = ts.clone();
        for (t, &c) in placed.tasks.iter_mut().zip(cpu_of) {
            t.cpu = Some(c);
        }
        let v = find(ENTRIES, "p-fp-rta-file")
            .unwrap()
            .run(&placed)
            .unwrap();
        v.schedulable
    }

    /// Two CPUs, T = D = 10 ms, `msrp`, the file's priorities: a (C 5, R for 2, priority 1),
    /// c (C 4, no section, priority 2), b (C 3, R for 2, priority 3). FFD order a (.5), c (.4),
    /// b (.3).
    ///
    /// Sections ignored, FFD puts a → 0, c → 0 (.9), b → 1 (1.2 on CPU 0): R is global, and
    /// a request spins for at most the other CPU's section, 2. CPU 0: c (above a) is blocked by
    /// a's non-preemptive spin and section, B_c = 2 + 2, R_c = 4 + 4 = 8; but a runs
    /// C' = 5 + 2 = 7 under c: R_a = 7 + 4 = 11 > 10. The per-CPU test does not accept that
    /// partition (inconclusive: with blocking it is sufficient, and without it a fits).
    ///
    /// Counting msrp's terms: a brings its bundle {a, b} (.8), which fits on CPU 0 with R
    /// local (an srp resource, Baker's levels equal): R_b = 3 + B 2 = 5, R_a = 5 + 3 = 8; c
    /// goes to CPU 1 (.8 + .4 > 1), R_c = 4. Accepted, and it passes whole. WFD finds the same
    /// ({a, b} first to the lowest empty CPU, c to the emptier one).
    /// A set the per-CPU test cannot bound whatever the placement (here a parallel region)
    /// is admitted as without its sections, as before they were counted: placed, not refused.
    #[test]
    fn a_set_the_test_does_not_model_is_admitted_without_sections() {
        let mut ts = set(
            vec![
                task("a", 5, 1, Some(2)),
                task("c", 4, 2, None),
                task("b", 3, 3, Some(2)),
            ],
            Protocol::FmlpPlus,
        );
        assert!(matches!(
            file(&ts).counting_sections(&ts),
            Admission::Remote(..)
        ));
        ts.tasks[1].regions = vec![rtsched_model::Region {
            threads: vec![2 * MS, 2 * MS],
        }];
        let adm = file(&ts).counting_sections(&ts);
        assert!(!matches!(adm, Admission::Remote(..)));
        assert!(by_name("wfd").unwrap().partition(&ts, &adm).is_ok());
    }

    #[test]
    fn spin_aware_ffd_keeps_the_spinners_together_by_hand() {
        let ts = set(
            vec![
                task("a", 5, 1, Some(2)),
                task("c", 4, 2, None),
                task("b", 3, 3, Some(2)),
            ],
            Protocol::Msrp,
        );
        let ffd = by_name("ffd").unwrap();
        let naive = ffd.partition(&ts, &file(&ts)).unwrap();
        assert_eq!(naive.cpu_of_task, vec![0, 0, 1]);
        // With blocking the test is sufficient: its failure is "inconclusive" (None).
        assert_eq!(analysed(&ts, &naive.cpu_of_task), None, "the control");
        let adm = file(&ts).counting_sections(&ts);
        assert_eq!(adm.counted(), Some(Protocol::Msrp));
        assert!(matches!(adm, Admission::Remote(..)));
        let p = ffd.partition(&ts, &adm).unwrap();
        assert_eq!(p.cpu_of_task, vec![0, 1, 0]);
        assert_eq!(analysed(&ts, &p.cpu_of_task), Some(true));
        let w = by_name("wfd").unwrap().partition(&ts, &adm).unwrap();
        assert_eq!(w.cpu_of_task, vec![0, 1, 0]);
        // Each CPU's terms, as `rtsched partition` prints them.
        let mut placed = ts.clone();
        for (t, &c) in placed.tasks.iter_mut().zip(&p.cpu_of_task) {
            t.cpu = Some(c);
        }
        let lines = terms(&placed, &adm).unwrap();
        assert_eq!(
            lines,
            vec![
                "msrp terms counted: spin ≤ 0.000 ms, blocking ≤ 2.000 ms; global resources: none",
                "msrp terms counted: spin ≤ 0.000 ms, blocking ≤ 0.000 ms; global resources: none",
            ]
        );
        assert_eq!(terms(&placed, &file(&ts)), None);
    }

    /// A set that fits only because sections are ignored: a (C 7, R for 2, priority 1), c
    /// (C 5, priority 2), b (C 4, R for 3, priority 3), `msrp`. No two of a, b, c fit on a CPU
    /// but b and c (.9), so every partition is {a}, {b, c}: R global, b spins ≤ a's 2, C'_b = 6,
    /// and R_c = 5 + 6 = 11 > 10. Sections ignored FFD places it; counting them, the bundle
    /// {a, b} (1.1) fits nowhere and is split: a → 0, c → 1, b fits on neither, and the error
    /// names b, the protocol and the CPU that failed (CPU 0 with b would be U = 1.1).
    #[test]
    fn a_set_that_fits_only_ignoring_sections_is_refused_with_the_reason() {
        let ts = set(
            vec![
                task("a", 7, 1, Some(2)),
                task("c", 5, 2, None),
                task("b", 4, 3, Some(3)),
            ],
            Protocol::Msrp,
        );
        let ffd = by_name("ffd").unwrap();
        let naive = ffd.partition(&ts, &file(&ts)).unwrap();
        assert_eq!(naive.cpu_of_task, vec![0, 1, 1]);
        assert_eq!(analysed(&ts, &naive.cpu_of_task), None);
        let e = ffd
            .partition(&ts, &file(&ts).counting_sections(&ts))
            .unwrap_err();
        assert_eq!(e.task_name, "b", "{e}");
        assert!(
            e.message.contains("counting msrp's terms on every CPU"),
            "{e}"
        );
        assert!(e.message.contains("the last CPU tried: cpu 1:"), "{e}");
    }

    /// Which sets the admission counts: msrp, mrsp, fmlp+ under the FP tests; msrp (Gai et
    /// al.) and fmlp+ (`fmlp_edf.rs`) under EDF, not mrsp there; not with nested sections, nor fmlp+ with D > T; never
    /// under density.
    #[test]
    fn which_protocols_are_counted() {
        let tasks = vec![task("a", 2, 1, Some(1)), task("b", 2, 2, Some(1))];
        for p in [Protocol::Msrp, Protocol::Mrsp, Protocol::FmlpPlus] {
            let ts = set(tasks.clone(), p);
            assert_eq!(file(&ts).counting_sections(&ts).counted(), Some(p), "{p:?}");
            assert!(!Admission::Density.counting_sections(&ts).counts_sections());
        }
        let ts = set(tasks.clone(), Protocol::Msrp);
        assert!(Admission::EdfExact.counting_sections(&ts).counts_sections());
        let ts = set(tasks.clone(), Protocol::FmlpPlus);
        assert!(Admission::EdfExact.counting_sections(&ts).counts_sections());
        let ts = set(tasks.clone(), Protocol::Mrsp);
        assert!(!Admission::EdfExact.counting_sections(&ts).counts_sections());
        let mut ts = set(tasks.clone(), Protocol::FmlpPlus);
        ts.tasks[0].deadline = 20 * MS;
        assert!(!file(&ts).counting_sections(&ts).counts_sections());
        let mut ts = set(tasks, Protocol::Msrp);
        ts.resources.push("S".into());
        ts.tasks[0].sections.push(CriticalSection {
            resource: 1,
            region: 0,
            thread: 0,
            start: 0,
            length: MS,
        });
        assert!(
            !file(&ts).counting_sections(&ts).counts_sections(),
            "nested"
        );
    }
}
