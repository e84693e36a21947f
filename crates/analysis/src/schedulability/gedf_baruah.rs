//! Global EDF on m identical CPUs: Baruah's test, "Techniques for Multiprocessor Global
//! Schedulability Analysis" (RTSS 2007), for constrained deadlines.
//!
//! Suppose a job of τ_k, released at t_a, misses its deadline t_d = t_a + D_k, and let t_0 ≤ t_a
//! be the earliest instant such that every CPU is busy with jobs of deadline ≤ t_d throughout
//! [t_0, t_a); A_k = t_a − t_0 and t = A_k + D_k. The job runs less than C_k in [t_a, t_d), so
//! the m CPUs are busy with other work at more than t − C_k instants of [t_0, t_d) — in
//! discrete time (integer ns) at X = t − C_k + 1 of them at least. On X such instants the
//! tasks do m·X of work, each at most X of it (τ_k's earlier jobs at most A_k: they end by t_a).
//! At t_0 − 1 some CPU is not busy with such work, so at most m − 1 tasks carry a job into
//! [t_0, t_d). A task without carry-in does at most its demand bound DBF(τ_i, t) =
//! (⌊(t − D_i)/T_i⌋ + 1)·C_i, one with carry-in at most DBF'(τ_i, t) = ⌊t/T_i⌋·C_i +
//! min(C_i, t mod T_i). So with
//!   I_1(τ_i) = min(DBF(τ_i, t), X),  I_2(τ_i) = min(DBF'(τ_i, t), X)   (i ≠ k),
//!   I_1(τ_k) = min(DBF(τ_k, t) − C_k, A_k),  I_2(τ_k) = min(DBF'(τ_k, t) − C_k, A_k),
//!   Ω_k(A_k) = Σ_i I_1(τ_i) + the m − 1 largest I_2(τ_i) − I_1(τ_i),
//! a miss needs Ω_k(A_k) ≥ m·X for some k and A_k ≥ 0: the set is schedulable if Ω_k(A_k) < m·X
//! everywhere (the paper's condition with its +1 for discrete time).
//!
//! Where to check: with DBF' − DBF ≤ C_i and DBF(τ_i, t) ≤ U_i·(t + T_i − D_i), a miss needs
//! t·(m − U) < Σ_i U_i·(T_i − D_i) + C_Σ + m·C_k (C_Σ: the m − 1 largest C_i), Baruah's bound
//! on A_k (U < m; at U ≥ m the test says nothing). Below it, every term is linear between the
//! instants where a DBF steps, a DBF' changes slope, or a term meets its cap; there Ω_k is the
//! largest of linear functions (one per choice of carry-in tasks), so Ω_k − m·X is convex and
//! largest at the ends of each such piece: checking those ends (and nothing between) is exact.
//! Past [`MAX_POINTS`] points for one task the verdict is inconclusive.
//!
//! Per-task rows (`bounds.rs`, [`load`]): the condition Ω_k(A) < m·(A + D_k − C_k + 1) in
//! integers is C_k + ⌊Ω_k(A)/m⌋ − A ≤ D_k, so each task's row is the largest C_k + ⌊Ω_k(A)/m⌋ −
//! A over the A_k checked, compared with D_k — the test's condition rearranged into a window
//! load, a deadline check and not a response time. The verdict is "every row within its
//! deadline"; [`baruah`], which stops at the first failure, agrees (`rows_agree_with_the_test`
//! in `tests/per_task_rows.rs`).
//!
//! Overhead-aware form: the inflation for global EDF (`crate::overheads`). Checked against the
//! simulator (`tests/global_rta_vs_sim.rs`): a set it accepts never misses under `gedf` from a
//! synchronous release at WCET; the test weakened to compare the work against m + 1 CPUs'
//! capacity (the negative control) accepts a set that misses. (`carry_in` false, which drops
//! the I_2 − I_1 terms, is the other weakening; on the generated sets it is caught too rarely
//! to be the control.)
//!
//! Registry entry (`registry.rs`): `gedf-baruah`.

use super::bounds::{self, Quantity};
use super::registry::Subject;
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Tasks, WithOverheads,
};
use super::{Cdt, Verdict};
use rtsched_model::Time;

pub const GEDF_BARUAH: Entry = Entry {
    name: "gedf-baruah",
    summary:
        "global EDF, demand bounds over the window back to the last idle instant, ≤ m−1 carry-in",
    citation: "Baruah, RTSS 2007",
    kind: Kind::Sufficient,
    applies: Applies {
        cpus: Cpus::Several,
        tasks: Tasks::Sequential,
        deadlines: Deadlines::Constrained,
        sections: Sections::Blocking(super::omlp::TAKES),
        priorities: false,
        flow: Flow::Not,
    },
    verdict,
    overheads: WithOverheads::Global,
};

/// `gedf-baruah` on `s`: each task's load ([`load`]) as its row; schedulable iff every load
/// is within its deadline, which is [`baruah`]'s verdict (`tests::rows_agree_with_the_test`).
fn verdict(s: &Subject<'_>) -> Verdict {
    let (ts, m) = (s.cdt(), s.cpus());
    let worst: Vec<Result<Worst, Fails>> = if ts.iter().any(|x| x.c > x.d) {
        vec![Err(Fails::Overloaded); ts.len()]
    } else {
        (0..ts.len()).map(|k| load(ts, k, m)).collect()
    };
    let b: Vec<Option<Time>> = worst.iter().map(|w| w.ok().map(|w| w.load)).collect();
    let rows = bounds::of(s, Quantity::BaruahLoad, &b);
    let fails = worst.iter().zip(&rows).find_map(|(w, r)| match w {
        Err(Fails::Overloaded) => Some("U ≥ m (or some C > D)".to_string()),
        Err(Fails::TooMany { .. }) => Some(format!(
            "'{}': more than {MAX_POINTS} points to check",
            r.name
        )),
        Ok(w) if w.load > r.deadline => Some(format!(
            "'{}': Ω={} ≥ m·(A+D−C+1)={} at A={}ns (C + ⌊Ω/m⌋ − A = {}ns > D)",
            r.name, w.omega, w.cap, w.a, w.load
        )),
        _ => None,
    });
    let ok = fails.is_none();
    let detail = fails.unwrap_or_else(|| "every task passes".into());
    Verdict::new(GEDF_BARUAH.name, ok.then_some(true), detail).with_tasks(rows)
}

/// Task k's worst window: the largest C_k + ⌊Ω_k(A)/m⌋ − A over the A_k checked (ns), where,
/// and the Ω_k and m·X there. The condition Ω_k(A) < m·(A + D_k − C_k + 1) is exactly
/// C_k + ⌊Ω_k(A)/m⌋ − A ≤ D_k, so τ_k passes iff `load` ≤ D_k.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Worst {
    pub load: Time,
    pub a: Time,
    pub omega: u128,
    pub cap: u128,
}

/// [`Worst`] of task k (C ≤ D for every task), or why there is none.
pub fn load(ts: &[Cdt], k: usize, m: u32) -> Result<Worst, Fails> {
    let end = t_max(ts, k, m).ok_or(Fails::Overloaded)?;
    let points = points(ts, k, end).ok_or(Fails::TooMany { k })?;
    let tk = &ts[k];
    let mut worst: Option<(i128, Worst)> = None;
    for t in points {
        let omega = omega(ts, k, m, t, true);
        let a = t - tk.d;
        let v = tk.c as i128 + (omega / m as u128) as i128 - a as i128;
        if worst.is_none_or(|(w, _)| v > w) {
            let cap = m as u128 * (t - tk.c + 1) as u128;
            let load = v.max(0) as Time;
            worst = Some((
                v,
                Worst {
                    load,
                    a,
                    omega,
                    cap,
                },
            ));
        }
    }
    worst.map(|(_, w)| w).ok_or(Fails::TooMany { k })
}

/// The most points checked for one task before the verdict is left inconclusive.
pub const MAX_POINTS: usize = 20_000;

/// Why the test did not pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fails {
    Nowhere,
    /// Task `k`'s condition fails at A_k = `a`.
    At {
        k: usize,
        a: Time,
        omega: u128,
        cap: u128,
    },
    TooMany {
        k: usize,
    },
    Overloaded,
}

fn dbf(x: &Cdt, t: Time) -> u128 {
    if t < x.d {
        0
    } else {
        ((t - x.d) / x.t + 1) as u128 * x.c as u128
    }
}

fn dbf_carry(x: &Cdt, t: Time) -> u128 {
    (t / x.t) as u128 * x.c as u128 + (t % x.t).min(x.c) as u128
}

/// Ω_k at window length t = A_k + D_k; `carry_in`: whether the m − 1 largest I_2 − I_1 count
/// (false only for the negative control).
pub fn omega(ts: &[Cdt], k: usize, m: u32, t: Time, carry_in: bool) -> u128 {
    let tk = &ts[k];
    let x = (t - tk.c + 1) as u128;
    let a = (t - tk.d) as u128;
    let mut sum = 0;
    let mut diff: Vec<u128> = Vec::with_capacity(ts.len());
    for (i, ti) in ts.iter().enumerate() {
        let (i1, i2) = if i == k {
            let own = |d: u128| d.saturating_sub(tk.c as u128).min(a);
            (own(dbf(ti, t)), own(dbf_carry(ti, t)))
        } else {
            (dbf(ti, t).min(x), dbf_carry(ti, t).min(x))
        };
        sum += i1;
        diff.push(i2 - i1);
    }
    if carry_in {
        diff.sort_unstable_by(|a, b| b.cmp(a));
        sum += diff.iter().take(m as usize - 1).sum::<u128>();
    }
    sum
}

/// The largest window length t = A_k + D_k at which τ_k's condition can fail, or None at U ≥ m.
fn t_max(ts: &[Cdt], k: usize, m: u32) -> Option<Time> {
    let u: f64 = ts.iter().map(Cdt::utilisation).sum();
    if u >= m as f64 {
        return None;
    }
    let mut c: Vec<Time> = ts.iter().map(|x| x.c).collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let c_sigma: Time = c.iter().take(m as usize - 1).sum();
    let slack: f64 = ts
        .iter()
        .map(|x| x.utilisation() * (x.t - x.d) as f64)
        .sum();
    let num = slack + c_sigma as f64 + m as f64 * ts[k].c as f64;
    let t = (num / (m as f64 - u)) * (1.0 + 1e-9) + 2.0;
    (t < 1e18).then(|| (t as Time).max(ts[k].d))
}

/// Every point in [D_k, t_end] where a term of Ω_k changes slope, and the point before it.
fn points(ts: &[Cdt], k: usize, t_end: Time) -> Option<Vec<Time>> {
    let tk = &ts[k];
    let mut p: Vec<Time> = vec![tk.d, t_end];
    let push = |t: Time, p: &mut Vec<Time>| {
        if (tk.d..=t_end).contains(&t) {
            p.push(t);
            p.push(t.saturating_sub(1).max(tk.d));
        }
    };
    for (i, ti) in ts.iter().enumerate() {
        // Values a term takes on a flat piece: (j + 1)·C_i; its cap meets it at v + C_k − 1
        // (τ_k itself: at v − C_k + D_k, where A_k = v − C_k).
        let cap_at = |v: Time| {
            if i == k {
                v - tk.c + tk.d
            } else {
                v + tk.c - 1
            }
        };
        let mut j: Time = 0;
        loop {
            let start = j * ti.t;
            if start > t_end {
                break;
            }
            for t in [start, start + ti.c, start + ti.d, cap_at((j + 1) * ti.c)] {
                push(t, &mut p);
            }
            if p.len() > 2 * MAX_POINTS {
                return None;
            }
            j += 1;
        }
    }
    p.sort_unstable();
    p.dedup();
    Some(p)
}

/// Baruah's test on `ts` on `m` CPUs (D ≤ T); `carry_in` false drops the carry-in terms (the
/// negative control only).
pub fn baruah(ts: &[Cdt], m: u32, carry_in: bool) -> (bool, Fails) {
    if ts.iter().any(|x| x.c > x.d) {
        return (false, Fails::Overloaded);
    }
    for k in 0..ts.len() {
        let Some(end) = t_max(ts, k, m) else {
            return (false, Fails::Overloaded);
        };
        let Some(points) = points(ts, k, end) else {
            return (false, Fails::TooMany { k });
        };
        for t in points {
            let omega = omega(ts, k, m, t, carry_in);
            let cap = m as u128 * (t - ts[k].c + 1) as u128;
            if omega >= cap {
                let a = t - ts[k].d;
                return (false, Fails::At { k, a, omega, cap });
            }
        }
    }
    (true, Fails::Nowhere)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdt(c: Time, d: Time, t: Time) -> Cdt {
        Cdt { c, d, t }
    }

    /// Two CPUs. (a) (1, 4, 4) ×3: for τ0 at A = 0 (t = 4, X = 4): DBF = 1 for each other task,
    /// own DBF − C = 0: Σ I_1 = 2, DBF' = 1 too: Ω = 2 < 8. Passes everywhere.
    /// (b) (2, 2, 4) ×3: τ0 at A = 0 (t = 2, X = 1): I_1 = min(2, 1) = 1 for the two others,
    /// Ω = 2 ≥ m·X = 2: fails — rightly, three jobs of 2 with deadline 2 on two CPUs miss.
    /// Rows: (a) only A = 0 is checked (Baruah's bound on A: t·(2 − .75) < 0 + 1 + 2·1 gives
    /// t ≤ 4 = D), load 1 + ⌊2/2⌋ − 0 = 2 for each task. (b) A = 0: 2 + ⌊2/2⌋ = 3 > D = 2; at
    /// A = 1 (t = 3, X = 2: I_1 = 2 each, no carry-in gain) 2 + 2 − 1 = 3; at A = 4j (t = 4j + 2,
    /// the others' DBF 2(j + 1) each, own 2j) 2 + ⌊(6j + 4)/2⌋ − 4j = 4 − j: 3 at j = 1, less
    /// after; between, the −A term outgrows Ω/m (U = 1.5 < 2). Worst 3, first at A = 0.
    #[test]
    fn loads_by_hand() {
        let a = [cdt(1, 4, 4), cdt(1, 4, 4), cdt(1, 4, 4)];
        assert_eq!(load(&a, 0, 2).map(|w| (w.load, w.a)), Ok((2, 0)));
        let b = [cdt(2, 2, 4), cdt(2, 2, 4), cdt(2, 2, 4)];
        let w = Worst {
            load: 3,
            a: 0,
            omega: 2,
            cap: 2,
        };
        assert_eq!(
            (0..3).map(|k| load(&b, k, 2)).collect::<Vec<_>>(),
            vec![Ok(w); 3]
        );
        // U ≥ m: no window is bounded.
        assert_eq!(load(&[cdt(2, 2, 2); 3], 0, 2), Err(Fails::Overloaded));
    }

    #[test]
    fn by_hand() {
        let a = [cdt(1, 4, 4), cdt(1, 4, 4), cdt(1, 4, 4)];
        assert_eq!(omega(&a, 0, 2, 4, true), 2);
        assert_eq!(baruah(&a, 2, true), (true, Fails::Nowhere));
        let b = [cdt(2, 2, 4), cdt(2, 2, 4), cdt(2, 2, 4)];
        assert_eq!(
            baruah(&b, 2, true),
            (
                false,
                Fails::At {
                    k: 0,
                    a: 0,
                    omega: 2,
                    cap: 2
                }
            )
        );
    }
}
