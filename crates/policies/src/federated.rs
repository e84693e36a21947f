//! `federated` — federated scheduling of parallel (fork-join) real-time tasks (J. Li,
//! J.-J. Chen, K. Agrawal, C. Lu, C. Gill, A. Saifullah, "Analysis of Federated and Global
//! Scheduling for Parallel Real-Time Tasks", ECRTS 2014: the federated scheduling algorithm).
//!
//! # Rules, and where each lives
//!
//! A task τ_i has total work C_i (the sum of all its threads' WCETs, the task's `wcet`),
//! critical path L_i ([`Task::critical_path`]: the sum over regions of the longest thread) and
//! deadline D_i ([`deadline`]).
//! 1. **Classification**: τ_i is *heavy* if C_i > D_i (it cannot meet D_i on one CPU), *light*
//!    otherwise; C_i = D_i is light.
//! 2. **Mapping** ([`place`]): a heavy task gets n_i = ⌈(C_i − L_i)/(D_i − L_i)⌉ dedicated CPUs
//!    ([`cores_needed`]), in task order, lowest CPU indices first; the light tasks share the
//!    m − Σ n_i CPUs left, the highest ones.
//! 3. **Heavy tasks**: each runs alone on its CPUs under a greedy (work-conserving) scheduler:
//!    one [`GlobalDomain`] per heavy task over its CPUs. Its jobs run one after another (the
//!    ledger holds a job until its predecessor ends), so its cluster only ever holds threads
//!    of one job. Alone on n_i CPUs, greedy, a job finishes within L_i + (C_i − L_i)/n_i ≤ D_i
//!    (Graham's bound): the reason for n_i.
//! 4. **Light tasks**: run sequentially — a region's threads one after another, as the paper
//!    treats light tasks as sequential tasks — under global EDF on the shared CPUs
//!    ([`SequentialDomain`], the `gedf-seq` domain).
//! 5. **Refusals** (build errors, exit 2): a heavy task with L_i ≥ D_i (no number of CPUs
//!    suffices); Σ n_i > m (the first heavy task that does not fit is named, with its n_i and
//!    the total); light tasks with no CPU left, or with Σ C_i/T_i over them above the CPUs left.
//!
//! # Readings (docs/papers/paws.md "Baselines")
//!
//! - D_i is min(deadline, period): the paper's tasks have implicit deadlines (D = T); with
//!   D > T a job must still end within its period, since the next job of its task waits for it.
//! - The greedy scheduler of a cluster orders threads by `gedf`'s total order (deadline,
//!   release, task, job, thread): lower thread indices first.
//! - The light tasks are admitted on utilisation only (Σ u ≤ CPUs left): a placement that can
//!   work, not a guarantee; whether global EDF meets their deadlines on the shared CPUs is a
//!   schedulability test's question: the `federated` test of `rtsched analyze` (analysis
//!   crate, `schedulability/dag.rs`) asks it with GFB and BCL on the CPUs left.
//! - The placement is reported in the policy's stats (`Policy::stats`): `heavy_tasks`,
//!   `dedicated_cpus`, `shared_cpus`, and per heavy task `first_cpu:NAME`, `cpus:NAME`.

use crate::common::{GlobalDomain, SequentialDomain};
use crate::ctx::BuildCtx;
use crate::gedf::EdfOrder;
use crate::policy::{Dispatch, EntityId, EntityInfo, Policy};
use crate::spec::{PolicyInfo, SchedulerSpec, Takes, Tufs};
use rtsched_analysis::schedulability::cmp_sum;
use rtsched_model::time::fmt_duration;
use rtsched_model::{Task, TaskSet, Time};
use std::cmp::Ordering;
use std::ops::Range;

/// The deadline federated scheduling works with: min(D, T) (see the module's readings).
pub fn deadline(t: &Task) -> Time {
    t.deadline.min(t.period)
}

/// Whether `t` is heavy: C > D (rule 1).
pub fn is_heavy(t: &Task) -> bool {
    t.wcet > deadline(t)
}

/// n = ⌈(C − L)/(D − L)⌉, the CPUs a heavy task (C > D) needs so that a greedy scheduler meets
/// D; `None` when L ≥ D (no number suffices).
pub fn cores_needed(c: Time, l: Time, d: Time) -> Option<u64> {
    if l >= d {
        return None;
    }
    Some(c.saturating_sub(l).div_ceil(d - l))
}

/// Where federated scheduling puts each task (rule 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Per task, in file order: its dedicated CPUs if it is heavy, `None` if it is light.
    pub dedicated: Vec<Option<Range<u32>>>,
    /// The CPUs the light tasks share: those left after the heavy tasks', the highest ones.
    pub shared: Range<u32>,
}

/// `D = 10ms`, or `D = min(deadline, period) = 10ms` when the period is the shorter.
fn d_label(t: &Task) -> String {
    if t.deadline > t.period {
        format!("D = min(deadline, period) = {}", fmt_duration(deadline(t)))
    } else {
        format!("D = {}", fmt_duration(t.deadline))
    }
}

/// Federated scheduling's mapping of `ts` (rule 2), or why it cannot place it (rule 5).
pub fn place(ts: &TaskSet) -> Result<Placement, String> {
    let m = ts.platform.cpus as u64;
    let src = &ts.source;
    let mut needs = Vec::with_capacity(ts.tasks.len());
    for t in &ts.tasks {
        if !is_heavy(t) {
            needs.push(None);
            continue;
        }
        let (c, l, d) = (t.wcet, t.critical_path(), deadline(t));
        let n = cores_needed(c, l, d).ok_or_else(|| {
            format!(
                "{src}: task '{}': federated: heavy (C = {} > D) with critical path L = {} ≥ {}: no number of dedicated CPUs meets its deadline (n = ⌈(C − L)/(D − L)⌉ is unbounded)",
                t.name,
                fmt_duration(c),
                fmt_duration(l),
                d_label(t)
            )
        })?;
        needs.push(Some(n));
    }
    let total: u64 = needs.iter().flatten().sum();
    let mut next = 0u64;
    let mut dedicated = Vec::with_capacity(ts.tasks.len());
    for (t, n) in ts.tasks.iter().zip(&needs) {
        let Some(n) = *n else {
            dedicated.push(None);
            continue;
        };
        if next + n > m {
            return Err(format!(
                "{src}: task '{}': federated: needs n = ⌈(C − L)/(D − L)⌉ = ⌈({} − {})/({} − {})⌉ = {n} dedicated CPUs ({}), but only {} of the {m} CPUs are left after the heavy tasks before it; the heavy tasks need {total} CPUs in all",
                t.name,
                fmt_duration(t.wcet),
                fmt_duration(t.critical_path()),
                fmt_duration(deadline(t)),
                fmt_duration(t.critical_path()),
                d_label(t),
                m - next,
            ));
        }
        dedicated.push(Some(next as u32..(next + n) as u32));
        next += n;
    }
    let light: Vec<&Task> = ts.tasks.iter().filter(|t| !is_heavy(t)).collect();
    let left = m - next;
    if let Some(first) = light.first() {
        if left == 0 {
            return Err(format!(
                "{src}: federated: the heavy tasks take all {m} CPUs (Σ n_i = {next}), leaving none for the {} light task(s) (C ≤ D), the first '{}'",
                light.len(),
                first.name
            ));
        }
        if cmp_sum(light.iter().map(|t| (t.wcet, t.period)), left, 1) == Ordering::Greater {
            let u: f64 = light.iter().map(|t| t.utilization()).sum();
            return Err(format!(
                "{src}: federated: the {} light task(s) (C ≤ D) have total utilisation {u:.6} > the {left} CPU(s) left after the heavy tasks' {next}",
                light.len()
            ));
        }
    }
    Ok(Placement {
        dedicated,
        shared: next as u32..m as u32,
    })
}

/// A task's domain: a heavy task's cluster index, or `LIGHT`.
const LIGHT: u32 = u32::MAX;

pub struct Federated {
    placement: Placement,
    names: Vec<String>,
    /// Rule 3: one greedy domain per heavy task, over its dedicated CPUs.
    clusters: Vec<GlobalDomain<EdfOrder>>,
    /// Rule 4: the light tasks, sequential, under global EDF on the shared CPUs.
    shared: SequentialDomain<EdfOrder>,
    /// Per task and per CPU: its cluster, or `LIGHT`.
    domain_of_task: Vec<u32>,
    domain_of_cpu: Vec<u32>,
    /// Per entity id: its task's domain (read when it is aborted).
    domain_of_ent: Vec<u32>,
}

impl Federated {
    pub fn new(ts: &TaskSet, placement: Placement) -> Self {
        let m = ts.platform.cpus;
        let mut clusters = Vec::new();
        let mut domain_of_task = vec![LIGHT; ts.tasks.len()];
        let mut domain_of_cpu = vec![LIGHT; m as usize];
        for (i, cpus) in placement.dedicated.iter().enumerate() {
            let Some(cpus) = cpus else { continue };
            let k = clusters.len() as u32;
            domain_of_task[i] = k;
            for c in cpus.clone() {
                domain_of_cpu[c as usize] = k;
            }
            clusters.push(GlobalDomain::on_cpus(
                format!("federated:{}", ts.tasks[i].name),
                EdfOrder,
                cpus.start,
                cpus.len() as u32,
                true,
            ));
        }
        let shared = SequentialDomain::new(GlobalDomain::on_cpus(
            "federated",
            EdfOrder,
            placement.shared.start,
            placement.shared.len() as u32,
            true,
        ));
        Federated {
            placement,
            names: ts.tasks.iter().map(|t| t.name.clone()).collect(),
            clusters,
            shared,
            domain_of_task,
            domain_of_cpu,
            domain_of_ent: Vec::with_capacity(64),
        }
    }

    fn note(&mut self, e: &EntityInfo) -> u32 {
        let k = self.domain_of_task[e.task as usize];
        let i = e.id as usize;
        if self.domain_of_ent.len() <= i {
            self.domain_of_ent.resize(i + 1, LIGHT);
        }
        self.domain_of_ent[i] = k;
        k
    }
}

impl Policy for Federated {
    fn name(&self) -> String {
        "federated".into()
    }

    fn release(&mut self, _now: Time, e: &EntityInfo) {
        match self.note(e) {
            LIGHT => self.shared.release(e),
            k => self.clusters[k as usize].release(e),
        }
    }

    fn forked(&mut self, _now: Time, _cpu: Option<u32>, threads: &[EntityInfo]) {
        let Some(first) = threads.first() else { return };
        let k = self.domain_of_task[first.task as usize];
        for t in threads {
            self.note(t);
        }
        match k {
            LIGHT => self.shared.forked(threads),
            k => threads
                .iter()
                .for_each(|t| self.clusters[k as usize].release(t)),
        }
    }

    fn complete(&mut self, _now: Time, e: EntityId, cpu: u32) {
        match self.domain_of_cpu[cpu as usize] {
            LIGHT => self.shared.complete(e, cpu),
            k => self.clusters[k as usize].complete(e, cpu),
        }
    }

    fn blocked(&mut self, _now: Time, e: EntityId, cpu: u32) {
        match self.domain_of_cpu[cpu as usize] {
            LIGHT => self.shared.blocked(e, cpu),
            k => self.clusters[k as usize].complete(e, cpu),
        }
    }

    fn unblocked(&mut self, _now: Time, e: &EntityInfo) {
        match self.domain_of_task[e.task as usize] {
            LIGHT => self.shared.unblocked(e),
            k => self.clusters[k as usize].release(e),
        }
    }

    fn aborted(&mut self, _now: Time, e: EntityId) {
        match self.domain_of_ent[e as usize] {
            LIGHT => self.shared.aborted(e),
            k => self.clusters[k as usize].aborted(e),
        }
    }

    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        // Each domain owns its own CPUs: deciding them one after another is deciding all.
        for c in &mut self.clusters {
            c.schedule(now, d);
        }
        self.shared.schedule(now, d);
    }

    fn stats(&self) -> Vec<(String, f64)> {
        let dedicated: u32 = self
            .placement
            .dedicated
            .iter()
            .flatten()
            .map(|r| r.len() as u32)
            .sum();
        let mut out = crate::common::counters(&[
            ("heavy_tasks", self.clusters.len() as u64),
            (
                "light_tasks",
                (self.names.len() - self.clusters.len()) as u64,
            ),
            ("dedicated_cpus", dedicated as u64),
            ("shared_cpus", self.placement.shared.len() as u64),
            ("serialised_threads", self.shared.serialised),
        ]);
        for (name, cpus) in self.names.iter().zip(&self.placement.dedicated) {
            if let Some(r) = cpus {
                out.push((format!("first_cpu:{name}"), r.start as f64));
                out.push((format!("cpus:{name}"), r.len() as f64));
            }
        }
        out
    }
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "federated",
    summary: "heavy tasks (C > D) alone on ⌈(C−L)/(D−L)⌉ CPUs each, greedy; light ones sequential, global EDF on the rest",
    paper: "federated scheduling (Li et al., ECRTS 2014)",
    options: "",
    partition: None,
    fixed_priorities: false,
    takes: Takes::REAL_TIME,
    tufs: Tufs::Ignored,
    resolves_deadlocks: false,
    grants_resources: false,
};

/// No options; refuses a task set it cannot place (rule 5).
pub fn build(spec: &SchedulerSpec, ctx: &mut BuildCtx) -> Result<Box<dyn Policy>, String> {
    spec.option("", &[])?;
    let p = place(ctx.ts).map_err(|e| ctx.unplaced(e))?;
    Ok(Box::new(Federated::new(ctx.ts, p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::time::NS_PER_MS;
    use rtsched_model::Region;

    const MS: Time = NS_PER_MS;

    /// A task with period = deadline `d` ms and the given regions (ms); C is their sum.
    fn task(name: &str, d: u64, regions: &[&[u64]]) -> Task {
        let mut t = Task::periodic(name, d * MS, 0);
        t.regions = regions
            .iter()
            .map(|r| Region {
                threads: r.iter().map(|&x| x * MS).collect(),
            })
            .collect();
        t.wcet = t.regions.iter().flat_map(|r| r.threads.iter()).sum();
        t
    }

    #[test]
    fn core_counts_worked_by_hand() {
        // (C, L, D) → n = ⌈(C − L)/(D − L)⌉.
        assert_eq!(cores_needed(18, 6, 10), Some(3)); // 12/4 = 3 exactly
        assert_eq!(cores_needed(10, 2, 6), Some(2)); // 8/4 = 2 exactly: no rounding up
        assert_eq!(cores_needed(11, 2, 6), Some(3)); // 9/4 = 2.25 → 3
        assert_eq!(cores_needed(13, 5, 6), Some(8)); // 8/1: L one unit short of D
        assert_eq!(cores_needed(11, 1, 10), Some(2)); // C = D + 1: just heavy, 10/9 → 2
        assert_eq!(cores_needed(100, 10, 20), Some(9)); // 90/10
        assert_eq!(cores_needed(101, 10, 20), Some(10)); // 91/10 → 10
        assert_eq!(cores_needed(30, 10, 10), None); // L = D: unbounded
        assert_eq!(cores_needed(30, 12, 10), None); // L > D
                                                    // Times in ns at the scale of real task sets (no overflow in C − L).
        assert_eq!(
            cores_needed(u64::MAX, 1, 3),
            Some((u64::MAX - 1).div_ceil(2))
        );
    }

    #[test]
    fn heavy_means_c_above_d_and_c_equal_d_is_light() {
        let t = task("a", 10, &[&[2], &[4, 4]]);
        assert_eq!(t.wcet, 10 * MS);
        assert!(!is_heavy(&t), "C = D is light");
        let t = task("a", 10, &[&[2], &[4, 4], &[1]]);
        assert!(is_heavy(&t));
        // D > T: the period bounds the job (min(D, T)).
        let mut t = task("b", 10, &[&[1], &[4, 4]]);
        t.deadline = 20 * MS;
        assert!(!is_heavy(&t));
        t.period = 8 * MS;
        assert!(is_heavy(&t));
        assert_eq!(deadline(&t), 8 * MS);
    }

    #[test]
    fn heavy_tasks_take_the_lowest_cpus_in_task_order_and_light_tasks_the_rest() {
        // h1: C = 18, L = 6, D = 10 → 3 CPUs; l: light; h2: C = 11, L = 2, D = 6 → 3 CPUs.
        let h1 = task("h1", 10, &[&[1], &[4, 4, 4, 4], &[1]]);
        let l = task("l", 10, &[&[1], &[2, 2]]);
        let h2 = task("h2", 6, &[&[1], &[1, 1, 1, 1, 1, 1, 1, 1, 1], &[1]]);
        assert_eq!((h2.wcet, h2.critical_path()), (11 * MS, 3 * MS));
        // h2: ⌈(11 − 3)/(6 − 3)⌉ = ⌈8/3⌉ = 3.
        let ts = TaskSet::new(8, vec![h1, l, h2]);
        let p = place(&ts).unwrap();
        assert_eq!(p.dedicated, vec![Some(0..3), None, Some(3..6)]);
        assert_eq!(p.shared, 6..8);
        // Exactly enough CPUs: 6 heavy + 1 for the light task (u = .5).
        let mut ts = ts;
        ts.platform.cpus = 7;
        assert_eq!(place(&ts).unwrap().shared, 6..7);
        // No light task: every CPU may be dedicated.
        ts.tasks.remove(1);
        ts.platform.cpus = 6;
        let p = place(&ts).unwrap();
        assert_eq!(
            (p.dedicated, p.shared),
            (vec![Some(0..3), Some(3..6)], 6..6)
        );
    }

    #[test]
    fn refusals_name_the_task_and_the_numbers() {
        // L ≥ D.
        let long = task("long", 10, &[&[6], &[4, 4], &[2]]);
        let ts = TaskSet::new(8, vec![task("ok", 10, &[&[1]]), long]);
        let e = place(&ts).unwrap_err();
        assert!(
            e.contains("task 'long'")
                && e.contains("L = 12ms ≥ D = 10ms")
                && e.contains("C = 16ms"),
            "{e}"
        );
        // L ≥ min(D, T) when T < D.
        let mut t = task("t", 20, &[&[1], &[6, 6]]);
        t.period = 7 * MS;
        let e = place(&TaskSet::new(4, vec![t])).unwrap_err();
        assert!(
            e.contains("L = 7ms ≥ D = min(deadline, period) = 7ms"),
            "{e}"
        );
        // Σ n_i > m: h1 needs 3 (fits on 4), h2 needs 3 with 1 left; 6 in all.
        let h1 = task("h1", 10, &[&[1], &[4, 4, 4, 4], &[1]]);
        let h2 = task("h2", 10, &[&[1], &[4, 4, 4, 4], &[1]]);
        let e = place(&TaskSet::new(4, vec![h1.clone(), h2])).unwrap_err();
        assert!(
            e.contains("task 'h2'")
                && e.contains("= 3 dedicated CPUs")
                && e.contains("only 1 of the 4 CPUs")
                && e.contains("6 CPUs in all"),
            "{e}"
        );
        assert!(e.contains("⌈(18ms − 6ms)/(10ms − 6ms)⌉"), "{e}");
        // Light tasks, no CPU left.
        let e = place(&TaskSet::new(3, vec![h1.clone(), task("x", 10, &[&[3]])])).unwrap_err();
        assert!(
            e.contains("all 3 CPUs") && e.contains("1 light task(s)") && e.contains("'x'"),
            "{e}"
        );
        // Light tasks over the CPUs left: u = .6 + .6 > 1.
        let ts = TaskSet::new(4, vec![h1, task("x", 10, &[&[6]]), task("y", 10, &[&[6]])]);
        let e = place(&ts).unwrap_err();
        assert!(
            e.contains("2 light task(s)")
                && e.contains("1.200000 > the 1 CPU(s) left")
                && e.contains("heavy tasks' 3"),
            "{e}"
        );
        // Exactly full: u = 1 on the one CPU left is placed.
        let ts = TaskSet::new(
            4,
            vec![
                task("h1", 10, &[&[1], &[4, 4, 4, 4], &[1]]),
                task("x", 10, &[&[6]]),
                task("y", 10, &[&[4]]),
            ],
        );
        assert_eq!(place(&ts).unwrap().shared, 3..4);
    }

    #[test]
    fn build_rejects_options_and_reports_the_placement_in_stats() {
        let ts = TaskSet::new(
            4,
            vec![
                task("l", 10, &[&[2]]),
                task("h", 10, &[&[1], &[4, 4, 4, 4], &[1]]),
            ],
        );
        let build = |s: &str| build(&SchedulerSpec::split(s), &mut BuildCtx::new(&ts));
        let e = build("federated:fast").err().unwrap();
        assert!(e.contains("takes no options"), "{e}");
        let p = build("federated").unwrap();
        assert_eq!(p.name(), "federated");
        let stats = p.stats();
        let get = |k: &str| stats.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        assert_eq!(get("heavy_tasks"), Some(1.0));
        assert_eq!(get("light_tasks"), Some(1.0));
        assert_eq!(get("dedicated_cpus"), Some(3.0));
        assert_eq!(get("shared_cpus"), Some(1.0));
        assert_eq!((get("first_cpu:h"), get("cpus:h")), (Some(0.0), Some(3.0)));
        assert_eq!(get("cpus:l"), None);
    }
}
