//! Per-task utilisations with a fixed total: UUniFast (Bini & Buttazzo 2005), UUniFast-Discard
//! (Davis & Burns 2009) and RandFixedSum (Stafford 2006; Emberson, Stafford & Davis, WATERS
//! 2010), the generator the gedf-heap paper uses (§6.2).
//!
//! All three return vectors uniformly distributed over their domain: UUniFast over the simplex
//! {u ≥ 0, Σu = U}; the other two over that simplex cut by the cube [u_min, u_max]^n.
//! UUniFast-Discard gets there by rejection (slow when the cut is a small part of the simplex);
//! RandFixedSum samples the cut polytope directly, so it never discards.

use rand::Rng;

/// Check the common parameters; the message names the offending one.
pub fn check_bounds(n: usize, total: f64, u_min: f64, u_max: f64) -> Result<(), String> {
    if n < 1 {
        return Err(format!("number of tasks n={n} must be at least 1"));
    }
    if n > super::MAX_TASKS {
        return Err(format!(
            "number of tasks n={n} exceeds the limit of {} tasks",
            super::MAX_TASKS
        ));
    }
    if !total.is_finite() || total < 0.0 {
        return Err(format!(
            "total utilisation U={total} must be a finite number >= 0"
        ));
    }
    if !(u_min.is_finite() && u_max.is_finite()) || u_min < 0.0 {
        return Err(format!(
            "per-task bounds u_min={u_min}, u_max={u_max} must be finite and u_min >= 0"
        ));
    }
    if u_min > u_max {
        return Err(format!("u_min={u_min} exceeds u_max={u_max}"));
    }
    // A relative slack: n·u_max computed in floating point may sit a rounding error below U.
    let slack = 1e-12 * total.max(1.0);
    if total > n as f64 * u_max + slack {
        return Err(format!(
            "total utilisation U={total} exceeds n·u_max = {}",
            n as f64 * u_max
        ));
    }
    if total + slack < n as f64 * u_min {
        return Err(format!(
            "total utilisation U={total} is below n·u_min = {}",
            n as f64 * u_min
        ));
    }
    Ok(())
}

/// UUniFast: n utilisations summing to `total`, uniform over the simplex.
pub fn uunifast<R: Rng>(rng: &mut R, n: usize, total: f64) -> Result<Vec<f64>, String> {
    check_bounds(n, total, 0.0, f64::MAX)?;
    Ok(uunifast_unchecked(rng, n, total))
}

fn uunifast_unchecked<R: Rng>(rng: &mut R, n: usize, total: f64) -> Vec<f64> {
    let mut u = Vec::with_capacity(n);
    let mut rest = total;
    for i in 1..n {
        // The sum of the remaining n-i values is rest·x^(1/(n-i)): the largest of n-i
        // uniforms, which keeps the split uniform over the simplex.
        let next = rest * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        u.push(rest - next);
        rest = next;
    }
    u.push(rest);
    u
}

/// UUniFast-Discard: UUniFast redrawn until every value lies in [u_min, u_max]. Gives up with
/// an error after `max_tries` draws, rather than looping for ever on a nearly empty domain.
pub fn uunifast_discard<R: Rng>(
    rng: &mut R,
    n: usize,
    total: f64,
    u_min: f64,
    u_max: f64,
    max_tries: u32,
) -> Result<Vec<f64>, String> {
    check_bounds(n, total, u_min, u_max)?;
    for _ in 0..max_tries {
        let u = uunifast_unchecked(rng, n, total);
        if u.iter().all(|&x| x >= u_min && x <= u_max) {
            return Ok(u);
        }
    }
    Err(format!(
        "UUniFast-Discard found no vector with every u in [{u_min}, {u_max}] (n={n}, U={total}) in {max_tries} tries; use randfixedsum"
    ))
}

/// The most values [`randfixedsum`] draws: its tables take 16·n² bytes (64 MB at 2000) and
/// as many steps.
pub const MAX_RANDFIXEDSUM_TASKS: usize = 2_000;

/// RandFixedSum: n values in [a, b] summing to `total`, uniform over that polytope.
///
/// Stafford's construction: rescale to the unit cube, where the slice Σx = s (k ≤ s ≤ k+1)
/// is a union of simplices. A table of transition probabilities, built from the volumes of the
/// lower-dimensional slices, picks one simplex with probability proportional to its volume;
/// a uniform point inside it is then built coordinate by coordinate; finally the coordinates
/// are shuffled (the simplices are ordered, the target polytope is symmetric).
pub fn randfixedsum<R: Rng>(
    rng: &mut R,
    n: usize,
    total: f64,
    a: f64,
    b: f64,
) -> Result<Vec<f64>, String> {
    check_bounds(n, total, a, b)?;
    if n > MAX_RANDFIXEDSUM_TASKS {
        return Err(format!(
            "RandFixedSum keeps two n×n tables (n={n}: {} of memory); it draws at most {MAX_RANDFIXEDSUM_TASKS} tasks (uunifast-discard takes up to {})",
            super::fmt_bytes((n as u64).saturating_mul(n as u64).saturating_mul(16)),
            super::MAX_TASKS
        ));
    }
    if n == 1 {
        return Ok(vec![total]);
    }
    if b - a <= f64::EPSILON * b.abs().max(1.0) {
        // A degenerate cube: the only point is (a, ..., a).
        return Ok(vec![total / n as f64; n]);
    }
    let s0 = ((total - n as f64 * a) / (b - a)).clamp(0.0, n as f64);
    let k = (s0.floor() as usize).min(n - 1);
    let s = s0.clamp(k as f64, k as f64 + 1.0);
    // s1[i] = s - (k - i), s2[i] = (k + n - i) - s, for i = 0..n; both non-negative.
    let s1: Vec<f64> = (0..n).map(|i| s - (k as f64 - i as f64)).collect();
    let s2: Vec<f64> = (0..n).map(|i| (k + n - i) as f64 - s).collect();

    // w[i][j]: scaled slice volumes; t[i][j]: probability of *not* stepping down a level
    // when going from dimension i+2 to i+1 in column j. Start at f64::MAX so the products
    // stay representable for large n (they shrink by roughly 1/i each row).
    let mut w = vec![vec![0.0f64; n + 1]; n];
    w[0][1] = f64::MAX;
    let mut t = vec![vec![0.0f64; n]; n - 1];
    for i in 2..=n {
        for j in 1..=i {
            let tmp1 = w[i - 2][j] * s1[j - 1] / i as f64;
            let tmp2 = w[i - 2][j - 1] * s2[n - i + j - 1] / i as f64;
            w[i - 1][j] = tmp1 + tmp2;
            let tmp3 = w[i - 1][j] + f64::MIN_POSITIVE;
            // When both volumes underflow to 0, lean on the side the geometry favours.
            t[i - 2][j - 1] = if s2[n - i + j - 1] > s1[j - 1] {
                tmp2 / tmp3
            } else {
                1.0 - tmp1 / tmp3
            };
        }
    }

    let mut x = vec![0.0f64; n];
    let mut s = s;
    let mut j = k + 1; // 1-based column into t
    let mut sum = 0.0f64;
    let mut prod = 1.0f64;
    for i in (1..n).rev() {
        let step = rng.random::<f64>() <= t[i - 1][j - 1];
        let sx = rng.random::<f64>().powf(1.0 / i as f64);
        sum += (1.0 - sx) * prod * s / (i + 1) as f64;
        prod *= sx;
        let e = if step { 1.0 } else { 0.0 };
        x[n - i - 1] = sum + prod * e;
        if step {
            s -= 1.0;
            j -= 1;
        }
    }
    x[n - 1] = sum + prod * s;

    // Fisher–Yates, then back from the unit cube to [a, b].
    for i in (1..n).rev() {
        let r = rng.random_range(0..=i);
        x.swap(i, r);
    }
    Ok(x.into_iter()
        .map(|v| (a + (b - a) * v).clamp(a, b))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{randfixedsum, uunifast, uunifast_discard};
    use crate::gen::rng;
    use proptest::prelude::*;
    use rand::Rng;

    proptest! {
        #[test]
        fn uunifast_sums_exactly(n in 1usize..40, total in 0.0f64..16.0, seed: u64) {
            let u = uunifast(&mut rng(seed), n, total).unwrap();
            prop_assert_eq!(u.len(), n);
            prop_assert!(u.iter().all(|&x| x >= 0.0));
            prop_assert!((u.iter().sum::<f64>() - total).abs() < 1e-9);
        }

        #[test]
        fn randfixedsum_respects_bounds(n in 1usize..300, a in 0.0f64..0.5, w in 0.01f64..1.0, frac in 0.0f64..=1.0, seed: u64) {
            let b = a + w;
            let total = n as f64 * (a + frac * w);
            let u = randfixedsum(&mut rng(seed), n, total, a, b).unwrap();
            prop_assert_eq!(u.len(), n);
            prop_assert!(u.iter().all(|&x| x >= a && x <= b), "{:?}", u);
            prop_assert!((u.iter().sum::<f64>() - total).abs() < 1e-9, "sum {} vs {}", u.iter().sum::<f64>(), total);
            prop_assert_eq!(u, randfixedsum(&mut rng(seed), n, total, a, b).unwrap());
        }

        #[test]
        fn uunifast_discard_respects_bounds(n in 2usize..8, seed: u64) {
            let total = 0.4 * n as f64;
            let u = uunifast_discard(&mut rng(seed), n, total, 0.05, 0.9, 100_000).unwrap();
            prop_assert!(u.iter().all(|&x| (0.05..=0.9).contains(&x)));
            prop_assert!((u.iter().sum::<f64>() - total).abs() < 1e-9);
        }
    }

    #[test]
    fn impossible_parameters_name_the_parameter() {
        let r = &mut rng(1);
        assert_eq!(
            randfixedsum(r, 4, 5.0, 0.0, 1.0).unwrap_err(),
            "total utilisation U=5 exceeds n·u_max = 4"
        );
        assert!(randfixedsum(r, 4, 0.2, 0.1, 1.0)
            .unwrap_err()
            .contains("below n·u_min = 0.4"));
        assert!(randfixedsum(r, 4, 1.0, 0.5, 0.2)
            .unwrap_err()
            .contains("u_min=0.5 exceeds u_max=0.2"));
        assert!(uunifast(r, 0, 1.0).unwrap_err().contains("n=0"));
        assert!(uunifast(r, 3, -1.0).unwrap_err().contains("U=-1"));
        assert!(uunifast_discard(r, 20, 19.5, 0.0, 1.0, 10)
            .unwrap_err()
            .contains("in 10 tries"));
    }

    /// Pearson χ² of the first coordinate of n = 3 RandFixedSum vectors, bounds [0.1, 0.6],
    /// sum 1, against the analytic marginal: f(x) ∝ length of {x2 ∈ [a,b] : 1 − x − x2 ∈ [a,b]}
    /// = 0.2 + x on [0.1, 0.3], 0.8 − x on [0.3, 0.6] (a trapezoid, not flat).
    fn chi_square(sample: impl Fn(&mut rand_chacha::ChaCha8Rng) -> f64) -> f64 {
        let (a, b, bins, draws) = (0.1, 0.6, 20usize, 20_000usize);
        let width = (b - a) / bins as f64;
        let len = |x: f64| f64::max(0.0, f64::min(b, 1.0 - x - a) - f64::max(a, 1.0 - x - b));
        // The kink at 0.3 is a bin edge, so the trapezoid rule on each bin is exact.
        let mass: Vec<f64> = (0..bins)
            .map(|k| {
                let lo = a + k as f64 * width;
                (len(lo) + len(lo + width)) / 2.0 * width
            })
            .collect();
        let total: f64 = mass.iter().sum();
        let mut count = vec![0usize; bins];
        let r = &mut rng(2011);
        for _ in 0..draws {
            let x = sample(r);
            count[(((x - a) / width) as usize).min(bins - 1)] += 1;
        }
        (0..bins)
            .map(|k| {
                let e = draws as f64 * mass[k] / total;
                (count[k] as f64 - e).powi(2) / e
            })
            .sum()
    }

    /// χ²(19 degrees of freedom) exceeds 43.82 with probability 0.001.
    const CHI2_19_P001: f64 = 43.82;

    #[test]
    fn randfixedsum_is_uniform() {
        let stat = chi_square(|r| randfixedsum(r, 3, 1.0, 0.1, 0.6).unwrap()[0]);
        eprintln!("RandFixedSum n=3 [0.1,0.6] sum 1: chi-square = {stat:.2} (19 dof, 1% critical 36.19, 0.1% {CHI2_19_P001})");
        assert!(stat < CHI2_19_P001, "chi-square {stat}");
        // The same statistic catches a biased generator: scaling uniform draws to the sum and
        // rejecting out-of-bounds vectors is not uniform over the polytope.
        let biased = chi_square(|r| loop {
            let v: [f64; 3] = [r.random(), r.random(), r.random()];
            let s: f64 = v.iter().sum();
            let x: Vec<f64> = v.iter().map(|x| x / s).collect();
            if x.iter().all(|&x| (0.1..=0.6).contains(&x)) {
                break x[0];
            }
        });
        eprintln!("normalise-and-reject (biased) : chi-square = {biased:.2}");
        assert!(
            biased > CHI2_19_P001,
            "the check should reject a biased generator, got {biased}"
        );
    }
}
