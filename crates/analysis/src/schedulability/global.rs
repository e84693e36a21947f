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
//! Registry entries (`registry.rs`): `gedf-gfb` and `gedf-bcl` (D ≤ T), for several CPUs and
//! independent sequential tasks.

use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Tasks, WithOverheads,
};
use super::{cmp_sum, Cdt, Verdict};
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
    verdict: |s| gfb(s.cdt(), s.cpus()),
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
    verdict: |s| bcl(s.cdt(), s.cpus()),
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
    for (k, tk) in ts.iter().enumerate() {
        let slack = (tk.d - tk.c) as u128;
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
        if !(sum < cap || (sum == cap && small_positive)) {
            return Verdict::new(
                "gedf-bcl",
                None,
                format!("task {k}: Σmin(W_i, D_k-C_k)={sum} vs m(D_k-C_k)={cap}"),
            );
        }
    }
    Verdict::new("gedf-bcl", Some(true), "every task passes")
}
