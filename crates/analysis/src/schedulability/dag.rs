//! Tests for parallel tasks: sporadic DAG tasks (Baruah et al., RTSS 2012), of which fork-join
//! tasks (PAWS's regions) are the special case `Dag::from_regions` builds. A task is seen as
//! its work C (every node's WCET summed: the task's `wcet`), its critical-path length L (the
//! longest chain of WCETs, [`span`]), its deadline D and its period T.
//!
//! - `federated`: J. Li, J.-J. Chen, K. Agrawal, C. Lu, C. Gill, A. Saifullah, "Analysis of
//!   Federated and Global Scheduling for Parallel Real-Time Tasks", ECRTS 2014 — the federated
//!   algorithm's own admission, with the rules exactly as the `federated` policy applies them
//!   (crates/policies/src/federated.rs): with D = min(deadline, period), a task is heavy if
//!   C > D and gets n = ⌈(C − L)/(D − L)⌉ dedicated CPUs (needs L < D); schedulable if Σ n ≤ m
//!   and the light tasks — run sequentially, as (C, D, T) tasks, under global EDF on the
//!   m − Σ n CPUs left — pass GFB or BCL there (`global.rs`), or there are none. A heavy task
//!   alone on its n CPUs under a greedy scheduler ends within L + (C − L)/n ≤ D (Graham).
//! - `gedf-dag-li`: J. Li, K. Agrawal, C. Lu, C. Gill, "Analysis of Global EDF for Parallel
//!   Tasks", ECRTS 2013 — global EDF (every ready node of a job at the job's deadline) has a
//!   capacity augmentation bound of b = 4 − 2/m for implicit-deadline DAG tasks: a set is
//!   schedulable on m CPUs if U = Σ C/T ≤ m/b and every L ≤ D/b. Only D = T (the paper's model);
//!   other sets get "not applicable". Compared exactly: U·(4m − 2) ≤ m² and L·(4m − 2) ≤ D·m.
//!
//! Neither test models critical sections (blocking); `analyze` reports them as not applicable
//! when a parallel set has any. Registry entries (`registry.rs`): `federated` and
//! `gedf-dag-li`, for sets with at least one parallel task (a sequential task is a DAG of one
//! node; on a set of them the sequential tests answer).

use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Subject, Tasks, WithOverheads,
};
use super::{cmp_sum, global, Cdt, Verdict};
use rtsched_model::{Task, Time};
use std::cmp::Ordering;

/// Sets with parallel tasks, on any number of CPUs; no critical sections.
const PARALLEL: Applies = Applies {
    cpus: Cpus::Any,
    tasks: Tasks::Parallel,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Not,
};

pub const FEDERATED: Entry = Entry {
    name: "federated",
    summary: "federated scheduling's admission: a heavy task gets ⌈(C−L)/(D−L)⌉ CPUs of its own, light ones share the rest under global EDF",
    citation: "Li, Chen, Agrawal, Lu, Gill & Saifullah, ECRTS 2014",
    kind: Kind::Sufficient,
    applies: PARALLEL,
    verdict: |s| federated(&dag_tasks(s), s.cpus()),
    overheads: WithOverheads::Not,
};

pub const GEDF_LI: Entry = Entry {
    name: "gedf-dag-li",
    summary: "global EDF of parallel tasks, capacity augmentation bound 4 − 2/m",
    citation: "Li, Agrawal, Lu & Gill, ECRTS 2013",
    kind: Kind::Sufficient,
    applies: Applies {
        deadlines: Deadlines::Implicit,
        ..PARALLEL
    },
    verdict: |s| gedf_li(&dag_tasks(s), s.cpus()),
    overheads: WithOverheads::Not,
};

fn dag_tasks(s: &Subject<'_>) -> Vec<DagTask> {
    s.tasks().map(DagTask::from).collect()
}

/// A parallel task as these tests see it: work C, critical path L, deadline D, period T (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DagTask {
    pub c: Time,
    pub l: Time,
    pub d: Time,
    pub t: Time,
}

/// The critical-path length L of `t`: its DAG's when it has one, else the sum over its regions
/// of the longest thread (C for a sequential task).
pub fn span(t: &Task) -> Time {
    match &t.dag {
        Some(dag) => dag.critical_path(),
        None => t.critical_path(),
    }
}

/// Whether `t` has intra-job parallelism: a DAG, or a region of more than one thread.
pub fn is_parallel(t: &Task) -> bool {
    t.dag.is_some() || t.is_parallel()
}

impl From<&Task> for DagTask {
    fn from(t: &Task) -> DagTask {
        DagTask {
            c: t.wcet,
            l: span(t),
            d: t.deadline,
            t: t.period,
        }
    }
}

impl DagTask {
    /// The deadline federated scheduling works with: min(D, T) (a job must end before its
    /// task's next one starts).
    pub fn federated_deadline(&self) -> Time {
        self.d.min(self.t)
    }
    /// Heavy under federated scheduling: C > min(D, T).
    pub fn is_heavy(&self) -> bool {
        self.c > self.federated_deadline()
    }
}

/// n = ⌈(C − L)/(D − L)⌉: the CPUs with which a greedy scheduler meets D (Graham's bound
/// L + (C − L)/n ≤ D); `None` when L ≥ D.
pub fn cores_needed(c: Time, l: Time, d: Time) -> Option<u64> {
    if l >= d {
        return None;
    }
    Some(c.saturating_sub(l).div_ceil(d - l))
}

/// The federated test with `cores` computing each heavy task's n (the policy's rule is
/// [`cores_needed`]; tests weaken it to show the property test has teeth).
pub fn federated_with(
    ts: &[DagTask],
    m: u32,
    cores: impl Fn(Time, Time, Time) -> Option<u64>,
) -> Verdict {
    const NAME: &str = "federated";
    let mut dedicated: u64 = 0;
    for (i, x) in ts.iter().enumerate() {
        if !x.is_heavy() {
            continue;
        }
        let d = x.federated_deadline();
        let Some(n) = cores(x.c, x.l, d) else {
            // L ≥ min(D, T): no number of CPUs suffices; L > D is a miss under any scheduler.
            let s = if x.l > x.d { Some(false) } else { None };
            return Verdict::new(
                NAME,
                s,
                format!("task {i}: heavy with L={} ns ≥ D={d} ns", x.l),
            );
        };
        dedicated += n;
    }
    if dedicated > m as u64 {
        return Verdict::new(
            NAME,
            None,
            format!("heavy tasks need Σn={dedicated} > m={m} CPUs"),
        );
    }
    let left = (m as u64 - dedicated) as u32;
    let light: Vec<Cdt> = ts
        .iter()
        .filter(|x| !x.is_heavy())
        .map(|x| Cdt {
            c: x.c,
            d: x.d,
            t: x.t,
        })
        .collect();
    if light.is_empty() {
        return Verdict::new(
            NAME,
            Some(true),
            format!("Σn={dedicated} ≤ m={m}; no light tasks"),
        );
    }
    if left == 0 || cmp_sum(light.iter().map(|x| (x.c, x.t)), left as u64, 1) == Ordering::Greater {
        return Verdict::new(
            NAME,
            None,
            format!(
                "Σn={dedicated}: the {} light task(s) do not fit the {left} CPU(s) left",
                light.len()
            ),
        );
    }
    for v in [global::gfb(&light, left), global::bcl(&light, left)] {
        if v.schedulable == Some(true) {
            return Verdict::new(
                NAME,
                Some(true),
                format!(
                    "Σn={dedicated} ≤ m={m}; light tasks pass {} on {left} CPU(s)",
                    v.test
                ),
            );
        }
    }
    Verdict::new(
        NAME,
        None,
        format!("Σn={dedicated} ≤ m={m}; light tasks pass neither GFB nor BCL on {left} CPU(s)"),
    )
}

/// Federated scheduling's admission (Li et al., ECRTS 2014), as the `federated` policy places.
pub fn federated(ts: &[DagTask], m: u32) -> Verdict {
    federated_with(ts, m, cores_needed)
}

/// Li et al.'s capacity augmentation test with the bound b = `b_num`/`b_den` (the theorem's
/// b = 4 − 2/m = (4m − 2)/m is [`gedf_li`]; tests scale it to show the property has teeth):
/// U ≤ m/b and every L ≤ D/b, with D = T.
pub fn gedf_li_with(ts: &[DagTask], m: u32, b_num: u64, b_den: u64) -> Verdict {
    const NAME: &str = "gedf-dag-li";
    // The registry refuses such sets before this runs; a direct caller is refused here.
    if let Some(i) = ts.iter().position(|x| x.d != x.t) {
        return Verdict::new(
            NAME,
            None,
            format!("not applicable: task {i} has D ≠ T (the bound is for implicit deadlines)"),
        );
    }
    let b = b_num as f64 / b_den as f64;
    // L ≤ D/b ⇔ L·b_num ≤ D·b_den.
    if let Some(i) = ts
        .iter()
        .position(|x| x.l as u128 * b_num as u128 > x.d as u128 * b_den as u128)
    {
        let x = ts[i];
        return Verdict::new(
            NAME,
            None,
            format!(
                "task {i}: L={} ns > D/b={:.0} ns (b={b:.4})",
                x.l,
                x.d as f64 / b
            ),
        );
    }
    // U ≤ m/b ⇔ Σ C/T ≤ m·b_den/b_num.
    let u: f64 = ts.iter().map(|x| x.c as f64 / x.t as f64).sum();
    let ok = cmp_sum(ts.iter().map(|x| (x.c, x.t)), m as u64 * b_den, b_num) != Ordering::Greater;
    Verdict::new(
        NAME,
        if ok { Some(true) } else { None },
        format!(
            "U={u:.6} vs m/b={:.6} (b=4-2/m={b:.4}); every L ≤ D/b",
            m as f64 / b
        ),
    )
}

/// Global EDF for implicit-deadline DAG tasks (Li, Agrawal, Lu, Gill, ECRTS 2013): the
/// capacity augmentation bound 4 − 2/m.
pub fn gedf_li(ts: &[DagTask], m: u32) -> Verdict {
    gedf_li_with(ts, m, 4 * m as u64 - 2, m as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(c: Time, l: Time, d: Time, t: Time) -> DagTask {
        DagTask { c, l, d, t }
    }

    /// Federated by hand, m = 4.
    /// h = (C 18, L 6, D = T = 10): heavy, n = ⌈12/4⌉ = 3. Light a = (3, 10, 10) and
    /// b = (3, 8, 8) on the 1 CPU left: Σλ = .3 + .375 = .675 ≤ 1 (GFB, m = 1): schedulable.
    /// With a's D = 4: U = .675 fits, but Σλ = .75 + .375 > 1 (GFB fails), and BCL, k = a:
    /// slack 1, N_b = ⌊(4 − 8)/8⌋ + 1 = 0, W_b = min(3, 4) = 3 → min 1, Σ = 1 = 1·1 with no
    /// 0 < W ≤ 1: inconclusive. With b = (8, 8, 8): U = 1.3 > 1, the light tasks do not fit.
    /// With h's D = 7 (T 10): n = ⌈12/1⌉ = 12 > 4. With h's L = 10 = D: no n; L = 11 > D: a miss.
    #[test]
    fn federated_by_hand() {
        let h = dt(18, 6, 10, 10);
        let ok = federated(&[h, dt(3, 3, 10, 10), dt(3, 2, 8, 8)], 4);
        assert_eq!(ok.schedulable, Some(true), "{ok:?}");
        assert!(ok.detail.contains("Σn=3"), "{ok:?}");
        let v = federated(&[h, dt(3, 3, 4, 10), dt(3, 2, 8, 8)], 4);
        assert_eq!(v.schedulable, None, "{v:?}");
        assert!(v.detail.contains("neither"), "{v:?}");
        let v = federated(&[h, dt(3, 3, 10, 10), dt(8, 8, 8, 8)], 4);
        assert_eq!(v.schedulable, None, "{v:?}");
        assert!(v.detail.contains("do not fit"), "{v:?}");
        let v = federated(&[dt(18, 6, 7, 10)], 4);
        assert_eq!(v.schedulable, None);
        assert!(v.detail.contains("Σn=12"), "{v:?}");
        assert_eq!(federated(&[dt(18, 10, 10, 10)], 64).schedulable, None);
        assert_eq!(
            federated(&[dt(18, 11, 10, 10)], 64).schedulable,
            Some(false)
        );
        // The heavy task alone, exactly its 3 CPUs: schedulable; on 2: not proven.
        assert_eq!(federated(&[h], 3).schedulable, Some(true));
        assert_eq!(federated(&[h], 2).schedulable, None);
        // Light tasks but no CPU left.
        assert_eq!(federated(&[h, dt(1, 1, 10, 10)], 3).schedulable, None);
    }

    /// Federated's D is min(deadline, period): (C 12, L 4, D 20, T 10) is heavy (12 > 10),
    /// n = ⌈8/6⌉ = 2, as the policy places it.
    #[test]
    fn federated_uses_min_of_deadline_and_period() {
        let x = dt(12, 4, 20, 10);
        assert!(x.is_heavy());
        assert_eq!(cores_needed(x.c, x.l, x.federated_deadline()), Some(2));
        assert_eq!(federated(&[x], 2).schedulable, Some(true));
        assert_eq!(federated(&[x], 1).schedulable, None);
    }

    /// Li et al. by hand. m = 2: b = 4 − 1 = 3, m/b = 2/3. Tasks (C, L, D = T):
    /// (20, 10, 30) and (10, 5, 30): U = 1, L/D = 1/3, 1/6: U = 1 > 2/3, not proven.
    /// (10, 10, 30) and (10, 5, 30): U = 2/3 = m/b exactly, L = 10 = D/3 exactly: schedulable.
    /// (10, 11, 30): L > D/3. m = 4: b = 3.5, m/b = 8/7: (40, 10, 35) has u = 8/7, L = 10 = 35/3.5.
    #[test]
    fn gedf_li_by_hand() {
        let v = gedf_li(&[dt(20, 10, 30, 30), dt(10, 5, 30, 30)], 2);
        assert_eq!(v.schedulable, None, "{v:?}");
        let v = gedf_li(&[dt(10, 10, 30, 30), dt(10, 5, 30, 30)], 2);
        assert_eq!(v.schedulable, Some(true), "{v:?}");
        let v = gedf_li(&[dt(10, 11, 30, 30), dt(10, 5, 30, 30)], 2);
        assert_eq!(v.schedulable, None);
        assert!(v.detail.contains("task 0"), "{v:?}");
        assert_eq!(gedf_li(&[dt(40, 10, 35, 35)], 4).schedulable, Some(true));
        assert_eq!(gedf_li(&[dt(41, 10, 35, 35)], 4).schedulable, None);
        assert_eq!(gedf_li(&[dt(40, 11, 35, 35)], 4).schedulable, None);
        let v = gedf_li(&[dt(10, 5, 20, 30)], 2);
        assert!(
            v.schedulable.is_none() && v.detail.contains("D ≠ T"),
            "{v:?}"
        );
        // m = 1: b = 2, U ≤ 1/2, L ≤ D/2.
        assert_eq!(gedf_li(&[dt(5, 5, 10, 10)], 1).schedulable, Some(true));
    }
}
