//! Global EDF on m identical CPUs.
//!
//! - GFB (Goossens, Funk & Baruah 2003), the test PAWS §2 quotes: implicit deadlines are
//!   schedulable if U ≤ m − (m − 1)·u_max. With constrained deadlines we apply it to densities
//!   (λ_sum ≤ m − (m − 1)·λ_max, Bertogna et al.), which is also sufficient.
//! - BCL (Bertogna, Cirinei & Lipari, ECRTS 2005): bound the interference each task τ_i can
//!   cause in the window [r_k, d_k] of a job of τ_k by its workload
//!   W_i = N_i·C_i + min(C_i, max(0, D_k − N_i·T_i)), N_i = ⌊(D_k − D_i)/T_i⌋ + 1;
//!   τ_k is safe if Σ_{i≠k} min(W_i, D_k − C_k) < m·(D_k − C_k), or equality holds and some
//!   0 < W_i ≤ D_k − C_k. Constrained deadlines only. Incomparable with GFB in general.
//!
//! Per-task rows (`bounds.rs`; each task passes iff its row is within its deadline, and the
//! verdict is "every task passes"):
//! - BCL's own quantity, C_k + ⌈I_k/m⌉ with I_k = Σ_{i≠k} min(W_i, D_k − C_k): the test's
//!   condition I_k < m·(D_k − C_k) read as the load of τ_k's window [r_k, d_k] ([`bcl_loads`]).
//!   A deadline check, not a response time: it does not bound when the job finishes.
//! - GFB is a condition on the whole set, and no per-task form of it is claimed from the
//!   literature here. Its row is the task's own term of the condition rewritten: Λ + (m − 1)·λ_max
//!   ≤ m holds iff Λ + (m − 1)·λ_k ≤ m for every k, and that term holds iff min(D_k, T_k) ≥
//!   m·C_k/(m − Λ_{−k}): the row is that least deadline ([`least_deadlines`]), which says which
//!   tasks break the condition and by how much their deadline would have to grow, the others
//!   unchanged. The density test (`edf-density`, one CPU, Σλ ≤ 1) has the same rows with m = 1.
//!
//! Registry entries (`registry.rs`): `gedf-gfb` and `gedf-bcl` (D ≤ T), for several CPUs and
//! independent sequential tasks.

use super::bounds::{self, Quantity};
use super::registry::Subject;
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Tasks, WithOverheads,
};
use super::{cmp_sum, Cdt, Verdict};
use rtsched_model::Time;
use std::cmp::Ordering;

/// Several CPUs, independent sequential tasks.
const GLOBAL: Applies = Applies {
    cpus: Cpus::Several,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Blocking(super::omlp::TAKES),
    priorities: false,
    flow: Flow::Not,
};

pub const GFB: Entry = Entry {
    name: "gedf-gfb",
    summary: "global EDF, U ≤ m − (m−1)·u_max (densities when D < T)",
    citation: "Goossens, Funk & Baruah 2003 (quoted in PAWS §2)",
    kind: Kind::Sufficient,
    applies: GLOBAL,
    verdict: |s| with_least_deadlines(gfb(s.cdt(), s.cpus()), s, s.cpus()),
    overheads: WithOverheads::Global,
};

pub const BCL: Entry = Entry {
    name: "gedf-bcl",
    summary: "global EDF, each task's interference bounded by the workload in its window",
    citation: "Bertogna, Cirinei & Lipari, ECRTS 2005",
    kind: Kind::Sufficient,
    applies: Applies {
        deadlines: Deadlines::Constrained,
        ..GLOBAL
    },
    verdict: bcl_verdict,
    overheads: WithOverheads::Global,
};

/// Necessary conditions: U ≤ m, and C ≤ D for every task.
pub fn necessary(ts: &[Cdt], m: u32) -> Verdict {
    let u: f64 = ts.iter().map(Cdt::utilisation).sum();
    if let Some(i) = ts.iter().position(|x| x.c > x.d) {
        return Verdict::necessary(Some(false), format!("task {i}: C > D"));
    }
    let s = if cmp_sum(ts.iter().map(|x| (x.c, x.t)), m as u64, 1) == Ordering::Greater {
        Some(false)
    } else {
        None
    };
    Verdict::necessary(s, format!("U={u:.6} vs m={m}"))
}

/// GFB: Σλ + (m − 1)·λ_max ≤ m, exactly (λ = u with implicit deadlines).
pub fn gfb(ts: &[Cdt], m: u32) -> Verdict {
    let dens = |x: &Cdt| (x.c, x.d.min(x.t));
    let Some(max) = ts.iter().max_by(|a, b| {
        (a.c as u128 * b.d.min(b.t) as u128).cmp(&(b.c as u128 * a.d.min(a.t) as u128))
    }) else {
        return Verdict::new("gedf-gfb", Some(true), "no tasks");
    };
    let (cm, dm) = dens(max);
    let terms = ts
        .iter()
        .map(dens)
        .chain(std::iter::once(((m as u64 - 1) * cm, dm)));
    let l: f64 = ts.iter().map(Cdt::density).sum();
    let lmax = max.density();
    let bound = m as f64 - (m as f64 - 1.0) * lmax;
    let ok = lmax <= 1.0 && cmp_sum(terms, m as u64, 1) != Ordering::Greater;
    Verdict::new(
        "gedf-gfb",
        if ok { Some(true) } else { None },
        format!("Σλ={l:.6} vs m-(m-1)λmax={bound:.6}"),
    )
}

/// Each task's least passing deadline under GFB's condition on m CPUs (the density test's,
/// Σλ ≤ 1, with m = 1): the condition Λ + (m − 1)·λ_max ≤ m holds iff every task's own term
/// Λ + (m − 1)·λ_k ≤ m does (λ = C/min(D, T), Λ = Σλ), and that term holds, the other tasks
/// unchanged, iff min(D_k, T_k) ≥ m·C_k/(m − Λ_{−k}) (Λ_{−k}: the others' Σλ). The row is that
/// least min(D, T), rounded up; `None` where no deadline would do (it is past T). The term is
/// decided exactly (`cmp_sum`) and the row kept on its side of D: the task passes iff row ≤ D.
/// A property of the set's condition, not of the task's jobs: no response time is claimed.
pub fn least_deadlines(ts: &[Cdt], m: u32) -> Vec<Option<Time>> {
    let lambda: Vec<f64> = ts.iter().map(Cdt::density).collect();
    let total: f64 = lambda.iter().sum();
    (0..ts.len())
        .map(|k| {
            let x = ts[k];
            let delta = x.d.min(x.t);
            let terms = ts
                .iter()
                .map(|y| (y.c, y.d.min(y.t)))
                .chain(std::iter::once(((m as u64 - 1) * x.c, delta)));
            let pass = cmp_sum(terms, m as u64, 1) != Ordering::Greater;
            let others = (total - lambda[k]).max(0.0);
            let least = m as f64 * x.c as f64 / (m as f64 - others);
            let least = if least.is_finite() && least > 0.0 && least < 1e18 {
                exact_least(ts, k, m, least.ceil() as Time)
            } else {
                Time::MAX
            };
            if pass {
                Some(least.min(delta))
            } else if x.d >= x.t || least > x.t {
                None
            } else {
                Some(least.max(x.d + 1))
            }
        })
        .collect()
}

/// The least x ≥ 1 with Λ_{−k} + m·C_k/x ≤ m, decided exactly (`cmp_sum`), from `guess` (the
/// float's ceiling, off by a few ns at most).
fn exact_least(ts: &[Cdt], k: usize, m: u32, guess: Time) -> Time {
    let holds = |x: Time| {
        let others = (0..ts.len())
            .filter(|&i| i != k)
            .map(|i| (ts[i].c, ts[i].d.min(ts[i].t)));
        let terms = others.chain(std::iter::once((m as u64 * ts[k].c, x)));
        cmp_sum(terms, m as u64, 1) != Ordering::Greater
    };
    let mut x = guess.max(1);
    for _ in 0..8 {
        if x > 1 && holds(x - 1) {
            x -= 1;
        } else if !holds(x) {
            x += 1;
        } else {
            break;
        }
    }
    x
}

/// `v` (GFB's verdict on m CPUs, or the density test's with m = 1) with each task's least
/// passing deadline ([`least_deadlines`]) as its row.
pub fn with_least_deadlines(v: Verdict, s: &Subject<'_>, m: u32) -> Verdict {
    let rows = bounds::of(s, Quantity::LeastDeadline, &least_deadlines(s.cdt(), m));
    v.with_tasks(rows)
}

/// BCL's sum for task k, I_k = Σ_{i≠k} min(W_i, D_k − C_k), and whether τ_k passes: I_k <
/// m·(D_k − C_k), or equality and some 0 < W_i ≤ D_k − C_k.
fn bcl_task(ts: &[Cdt], k: usize, m: u32) -> (u128, bool) {
    let tk = &ts[k];
    let slack = tk.d.saturating_sub(tk.c) as u128;
    let mut sum: u128 = 0;
    let mut small_positive = false;
    for (i, ti) in ts.iter().enumerate() {
        if i == k {
            continue;
        }
        let n_i = ((tk.d as i128 - ti.d as i128).div_euclid(ti.t as i128) + 1).max(0) as u128;
        let carry = (tk.d as i128 - n_i as i128 * ti.t as i128).max(0) as u128;
        let w = n_i * ti.c as u128 + carry.min(ti.c as u128);
        sum += w.min(slack);
        small_positive |= w > 0 && w <= slack;
    }
    let cap = m as u128 * slack;
    (sum, sum < cap || (sum == cap && small_positive))
}

/// Each task's BCL quantity, C_k + ⌈I_k/m⌉ (ns; the test's condition I_k < m·(D_k − C_k) read
/// as a load on the job's window [r, r + D_k]), and whether the task passes; the quantity is
/// ≤ D_k iff it does: at the one point where the test's strict inequality decides (I_k =
/// m·(D_k − C_k) without a 0 < W_i ≤ D_k − C_k) it is given as D_k + 1. With n ≤ m every task
/// passes (its own CPU), as the verdict says. Constrained deadlines (D ≤ T).
pub fn bcl_loads(ts: &[Cdt], m: u32) -> Vec<(Time, bool)> {
    let own_cpu = ts.len() <= m as usize;
    (0..ts.len())
        .map(|k| {
            let (sum, pass) = bcl_task(ts, k, m);
            let pass = pass || (own_cpu && ts[k].c <= ts[k].d);
            let load = ts[k].c as u128 + sum.div_ceil(m as u128);
            let load = if pass {
                load
            } else {
                load.max(ts[k].d as u128 + 1)
            };
            (load.min(Time::MAX as u128) as Time, pass)
        })
        .collect()
}

/// BCL, exactly in integers (the test scaled by D_k). Refuses D > T itself too: `federated`
/// asks it about its light tasks directly.
pub fn bcl(ts: &[Cdt], m: u32) -> Verdict {
    if ts.iter().any(|x| x.d > x.t) {
        return Verdict::new("gedf-bcl", None, "not applicable: some D > T");
    }
    if ts.iter().any(|x| x.c > x.d) {
        return Verdict::new("gedf-bcl", Some(false), "some C > D");
    }
    if ts.len() <= m as usize {
        return Verdict::new("gedf-bcl", Some(true), "n ≤ m: every task has its own CPU");
    }
    for k in 0..ts.len() {
        let (sum, pass) = bcl_task(ts, k, m);
        if !pass {
            let cap = m as u128 * (ts[k].d - ts[k].c) as u128;
            return Verdict::new(
                "gedf-bcl",
                None,
                format!("task {k}: Σmin(W_i, D_k-C_k)={sum} vs m(D_k-C_k)={cap}"),
            );
        }
    }
    Verdict::new("gedf-bcl", Some(true), "every task passes")
}

/// `gedf-bcl` on `s`: [`bcl`]'s verdict, each task's load ([`bcl_loads`]) as its row, and a
/// failing task named.
fn bcl_verdict(s: &Subject<'_>) -> Verdict {
    let v = bcl(s.cdt(), s.cpus());
    let loads = bcl_loads(s.cdt(), s.cpus());
    let b: Vec<Option<Time>> = loads.iter().map(|&(l, _)| Some(l)).collect();
    let rows = bounds::of(s, Quantity::BclLoad, &b);
    debug_assert_eq!(
        v.schedulable == Some(true),
        loads.iter().all(|&(_, p)| p),
        "{v:?}"
    );
    let detail = match rows.iter().find(|r| r.slack().is_some_and(|x| x < 0)) {
        Some(r) if v.schedulable != Some(true) => format!(
            "'{}': C + ⌈Σmin(W_i, D-C)/m⌉ = {}ns > D = {}ns",
            r.name,
            r.bound.unwrap_or(0),
            r.deadline
        ),
        _ => v.detail.clone(),
    };
    Verdict { detail, ..v }.with_tasks(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// Two CPUs, (C, D, T) = (2, 5, 5) twice and (4, 10, 10). τ0: D − C = 3; τ1: N = ⌊0/5⌋ + 1
    /// = 1, carry [5 − 5]_0 = 0: W = 2 → 2; τ2: N = ⌊−5/10⌋ + 1 = 0, carry min(4, 5): W = 4 → 3;
    /// I = 5 < 2·3: passes, load 2 + ⌈5/2⌉ = 5. τ2: D − C = 6, τ0 and τ1: N = ⌊5/5⌋ + 1 = 2,
    /// carry [10 − 10]_0: W = 4 each: I = 8 < 12, load 4 + 4 = 8. Rows (5, 5, 8).
    /// Three (2, 2, 4): D − C = 0, W = 2 → min 0: I = 0 = m·0 and no 0 < W ≤ 0: the strict
    /// inequality fails, and the load C + 0 = 2 = D is given as D + 1 = 3. Four (2, 4, 4): I = 3·2
    /// = 6 > 2·2: load 2 + 3 = 5 > 4.
    #[test]
    fn bcl_loads_by_hand() {
        let ts = [cdt(2, 5, 5), cdt(2, 5, 5), cdt(4, 10, 10)];
        assert_eq!(bcl_loads(&ts, 2), vec![(5, true), (5, true), (8, true)]);
        assert_eq!(bcl(&ts, 2).schedulable, Some(true));
        let tight = [cdt(2, 2, 4); 3];
        assert_eq!(bcl_loads(&tight, 2), vec![(3, false); 3]);
        assert_eq!(bcl(&tight, 2).schedulable, None);
        let four = [cdt(2, 4, 4); 4];
        assert_eq!(bcl_loads(&four, 2), vec![(5, false); 4]);
        // n ≤ m: each task on its own CPU passes, C = D included.
        assert_eq!(bcl_loads(&tight[..2], 2), vec![(2, true); 2]);
    }

    /// GFB on two CPUs: a (2, 4, 4), b (1, 4, 4), c (3, 4, 8): λ = .5, .25, .75, Λ = 1.5;
    /// Λ + λ_max = 2.25 > 2 fails. Least deadlines 2·C/(2 − Λ_{−k}): a 4/(2 − 1) = 4 (its term
    /// 1.5 + .5 = 2 holds, exactly), b 2/.75 → 3, c 6/1.25 = 4.8 → 5 > D = 4: only c fails.
    /// With c's T = 4 no deadline would do (5 > T): None. Density (m = 1): (1, 4, 4) and
    /// (1, 2, 8), Σλ = .75: 1/(1 − .5) = 2 and 1/(1 − .25) → 2 = D.
    #[test]
    fn least_deadlines_by_hand() {
        let ts = [cdt(2, 4, 4), cdt(1, 4, 4), cdt(3, 4, 8)];
        assert_eq!(least_deadlines(&ts, 2), vec![Some(4), Some(3), Some(5)]);
        assert_eq!(gfb(&ts, 2).schedulable, None);
        let ts = [cdt(2, 4, 4), cdt(1, 4, 4), cdt(3, 4, 4)];
        assert_eq!(least_deadlines(&ts, 2), vec![Some(4), Some(3), None]);
        let ok = [cdt(1, 4, 4), cdt(1, 4, 4), cdt(3, 4, 4)];
        assert_eq!(least_deadlines(&ok, 2), vec![Some(2), Some(2), Some(4)]);
        assert_eq!(gfb(&ok, 2).schedulable, Some(true));
        assert_eq!(
            least_deadlines(&[cdt(1, 4, 4), cdt(1, 2, 8)], 1),
            vec![Some(2), Some(2)]
        );
        // Exact where the float is not: Λ_{−k} = 23/12 on 4 CPUs, 4·1e6/(25/12) = 1.92e6 (the
        // float lands just above it, and its ceiling 1 ns past).
        let ms = 1_000_000;
        let ts = [
            cdt(ms, 4 * ms, 4 * ms),
            cdt(2 * ms, 5 * ms, 5 * ms),
            cdt(2 * ms, 5 * ms, 6 * ms),
            cdt(4 * ms, 10 * ms, 10 * ms),
            cdt(5 * ms, 12 * ms, 12 * ms),
            cdt(6 * ms, 20 * ms, 20 * ms),
        ];
        assert_eq!(least_deadlines(&ts, 4)[0], Some(1_920_000));
    }
}
