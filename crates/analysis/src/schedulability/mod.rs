//! Schedulability tests. Each returns a `Verdict`: `Some(true)` proven schedulable,
//! `Some(false)` proven unschedulable, `None` inconclusive (a sufficient test that did not pass,
//! or an exact test that hit its iteration cap).
//!
//! - `uniprocessor`: EDF exact (processor demand with QPA, Zhang & Burns 2009), density,
//!   fixed-priority response-time analysis (Joseph & Pandya 1986; Audsley et al. 1993),
//!   Liu & Layland's RM bound (1973) and the hyperbolic bound (Bini, Buttazzo & Buttazzo 2003).
//! - `global`: global EDF on m CPUs — GFB (Goossens, Funk & Baruah 2003; quoted in PAWS §2)
//!   and BCL (Bertogna, Cirinei & Lipari 2005).
//!
//! All comparisons are made in integer ns or exact rationals, so a task set sitting exactly on
//! a bound (U = 1, U = m − (m−1)u_max) is judged the way the theorem says.

pub mod global;
pub mod uniprocessor;

use crate::priority::{deadline_monotonic, rate_monotonic};
use rtsched_model::{Task, TaskSet, Time};
use std::cmp::Ordering;

/// A sporadic task as the tests see it: WCET C, relative deadline D, period T (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cdt {
    pub c: Time,
    pub d: Time,
    pub t: Time,
}

impl From<&Task> for Cdt {
    fn from(t: &Task) -> Cdt {
        Cdt { c: t.wcet, d: t.deadline, t: t.period }
    }
}

impl Cdt {
    pub fn utilisation(&self) -> f64 {
        self.c as f64 / self.t as f64
    }
    /// λ = C / min(D, T) (LWFG §2).
    pub fn density(&self) -> f64 {
        self.c as f64 / self.d.min(self.t) as f64
    }
}

/// The outcome of one test.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub test: String,
    pub schedulable: Option<bool>,
    /// The quantity the test compared, e.g. "U=0.883 > bound 0.780".
    pub detail: String,
}

impl Verdict {
    pub fn new(test: impl Into<String>, schedulable: Option<bool>, detail: impl Into<String>) -> Verdict {
        Verdict { test: test.into(), schedulable, detail: detail.into() }
    }
}

/// Compare Σ num_i/den_i with lim_num/lim_den, exactly when the common denominator fits in
/// u128 (and in f64 otherwise, which only matters within ~1e-15 of the limit).
pub fn cmp_sum(terms: impl Iterator<Item = (u64, u64)> + Clone, lim_num: u64, lim_den: u64) -> Ordering {
    let approx: f64 = terms.clone().map(|(a, b)| a as f64 / b as f64).sum();
    let lim = lim_num as f64 / lim_den as f64;
    let margin = 1e-9 * lim.max(1.0);
    if approx < lim - margin {
        return Ordering::Less;
    }
    if approx > lim + margin {
        return Ordering::Greater;
    }
    exact_cmp(terms, lim_num, lim_den).unwrap_or_else(|| approx.partial_cmp(&lim).unwrap_or(Ordering::Greater))
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn exact_cmp(terms: impl Iterator<Item = (u64, u64)>, lim_num: u64, lim_den: u64) -> Option<Ordering> {
    let (mut num, mut den): (u128, u128) = (0, 1);
    for (a, b) in terms {
        let (a, b) = (a as u128, b as u128);
        let g = gcd(den, b);
        let l = den.checked_mul(b / g)?;
        num = num.checked_mul(l / den)?.checked_add(a.checked_mul(l / b)?)?;
        den = l;
        let r = gcd(num, den);
        if r > 1 {
            num /= r;
            den /= r;
        }
    }
    Some(num.checked_mul(lim_den as u128)?.cmp(&(lim_num as u128).checked_mul(den)?))
}

/// Σ C/T compared with 1.
pub fn utilisation_cmp_one(ts: &[Cdt]) -> Ordering {
    cmp_sum(ts.iter().map(|x| (x.c, x.t)), 1, 1)
}

/// Σ C/min(D,T) compared with 1.
pub fn density_cmp_one(ts: &[Cdt]) -> Ordering {
    cmp_sum(ts.iter().map(|x| (x.c, x.d.min(x.t))), 1, 1)
}

/// Every applicable test on `ts`:
/// - one CPU: the uniprocessor tests on the whole set;
/// - m > 1: a necessary condition and the global EDF tests; and, when every task has a `cpu`,
///   the uniprocessor tests on each CPU, prefixed `p-` (schedulable iff every CPU is).
pub fn analyze(ts: &TaskSet) -> Vec<Verdict> {
    let m = ts.platform.cpus;
    let cdt: Vec<Cdt> = ts.tasks.iter().map(Cdt::from).collect();
    let file_prio: Option<Vec<u32>> = ts.tasks.iter().map(|t| t.priority).collect();
    if m == 1 {
        return uniprocessor::all(&cdt, &rate_monotonic(&ts.tasks), &deadline_monotonic(&ts.tasks), file_prio.as_deref());
    }
    let mut out = vec![global::necessary(&cdt, m), global::gfb(&cdt, m), global::bcl(&cdt, m)];
    if ts.tasks.iter().all(|t| t.cpu.is_some()) {
        let mut per_cpu: Vec<Vec<Verdict>> = Vec::new();
        for cpu in 0..m {
            let idx: Vec<usize> = (0..ts.tasks.len()).filter(|&i| ts.tasks[i].cpu == Some(cpu)).collect();
            if idx.is_empty() {
                continue;
            }
            let sub: Vec<Task> = idx.iter().map(|&i| ts.tasks[i].clone()).collect();
            let c: Vec<Cdt> = idx.iter().map(|&i| cdt[i]).collect();
            let fp: Option<Vec<u32>> = file_prio.as_ref().map(|p| idx.iter().map(|&i| p[i]).collect());
            let v = uniprocessor::all(&c, &rate_monotonic(&sub), &deadline_monotonic(&sub), fp.as_deref());
            per_cpu.push(v.into_iter().map(|mut x| {
                x.detail = format!("cpu {cpu}: {}", x.detail);
                x
            }).collect());
        }
        // Combine test by test: the first CPU that fails (or is inconclusive) explains the verdict.
        if let Some(first) = per_cpu.first() {
            for (k, v0) in first.iter().enumerate() {
                let column = per_cpu.iter().map(|v| &v[k]);
                let bad = column.clone().find(|v| v.schedulable == Some(false)).or_else(|| column.clone().find(|v| v.schedulable.is_none()));
                let (s, detail) = match bad {
                    Some(b) => (b.schedulable, b.detail.clone()),
                    None => (Some(true), format!("all {} used CPUs pass", per_cpu.len())),
                };
                out.push(Verdict::new(format!("p-{}", v0.test), s, detail));
            }
        }
    }
    out
}
