//! A real run's timing samples (decision overhead, release jitter, latencies, start delays,
//! per-job CPU overhead) in bounded memory: reported as median, p99 and max by nearest rank.
//!
//! Up to [`EXACT_UP_TO`] samples are kept as they are and the figures are exact (every test
//! and short run). Beyond that they move into a log-linear histogram — 64 linear buckets per
//! power of two, exact below 128 ns — so a run of any length holds 30 KB per measurement, and
//! the median and p99 are each bucket's midpoint, within 0.8% of the exact value; count and
//! max stay exact. (Written here rather than taken from a crate: it is 60 lines, and the
//! exact-then-histogram switch is what keeps short runs' figures unchanged.)

use std::collections::BTreeMap;

/// Samples kept exactly before the histogram takes over (512 KB of them).
pub const EXACT_UP_TO: usize = 65_536;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = (2 * SUB + (63 - SUB_BITS as u64) * SUB) as usize;

#[derive(Clone, Debug, Default)]
pub struct Samples {
    exact: Vec<u64>,
    hist: Option<Box<[u64]>>,
    count: u64,
    max: u64,
}

fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    (2 * SUB + (e - SUB_BITS - 1) as u64 * SUB + ((v >> shift) & (SUB - 1))) as usize
}

/// The midpoint of bucket `i`'s values.
fn midpoint(i: usize) -> f64 {
    let i = i as u64;
    if i < 2 * SUB {
        return i as f64;
    }
    let k = i - 2 * SUB;
    let shift = k / SUB + 1;
    let low = (SUB + k % SUB) << shift;
    low as f64 + ((1u64 << shift) - 1) as f64 / 2.0
}

impl Samples {
    pub fn push(&mut self, v: u64) {
        self.count += 1;
        self.max = self.max.max(v);
        match &mut self.hist {
            Some(h) => h[bucket(v)] += 1,
            None => {
                self.exact.push(v);
                if self.exact.len() > EXACT_UP_TO {
                    self.spill_to_histogram();
                }
            }
        }
    }

    fn spill_to_histogram(&mut self) {
        let mut h = vec![0u64; BUCKETS].into_boxed_slice();
        for &v in &self.exact {
            h[bucket(v)] += 1;
        }
        self.exact = Vec::new();
        self.hist = Some(h);
    }

    /// Add `o`'s samples (the kernel driver's threads each keep their own).
    pub fn merge(&mut self, o: &Samples) {
        match &o.hist {
            None => o.exact.iter().for_each(|&v| self.push(v)),
            Some(oh) => {
                if self.hist.is_none() {
                    self.spill_to_histogram();
                }
                let h = self.hist.as_mut().expect("just made");
                h.iter_mut().zip(oh.iter()).for_each(|(a, b)| *a += b);
                self.count += o.count;
                self.max = self.max.max(o.max);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Whether the figures are exact (the samples were not too many to keep).
    pub fn is_exact(&self) -> bool {
        self.hist.is_none()
    }

    /// The nearest-rank `q` quantile (0 < q <= 1): exact while the samples are kept, else
    /// the midpoint of the bucket it falls in (never above the max).
    pub fn quantile(&mut self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        match &self.hist {
            None => {
                self.exact.sort_unstable();
                self.exact[rank as usize - 1] as f64
            }
            Some(h) => {
                let mut seen = 0;
                for (i, &n) in h.iter().enumerate() {
                    seen += n;
                    if seen >= rank {
                        return midpoint(i).min(self.max as f64);
                    }
                }
                self.max as f64
            }
        }
    }

    /// Median, p99 (nearest rank), max and count into a run's `measurements`, under
    /// `name.*`; nothing if there is no sample.
    pub fn report(&mut self, name: &str, measurements: &mut BTreeMap<String, f64>) {
        if self.is_empty() {
            return;
        }
        measurements.insert(format!("{name}.median_ns"), self.quantile(0.5));
        measurements.insert(format!("{name}.p99_ns"), self.quantile(0.99));
        measurements.insert(format!("{name}.max_ns"), self.max() as f64);
        measurements.insert(format!("{name}.count"), self.count() as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn nearest_rank(xs: &mut [u64], q: f64) -> u64 {
        xs.sort_unstable();
        xs[((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1]
    }

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..5000u64).chain([u64::MAX / 3, u64::MAX - 1, u64::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS && b >= last, "{v}: {b}");
            last = b;
            let m = midpoint(b);
            assert!(
                (m - v as f64).abs() <= v as f64 / 128.0 + 0.5,
                "{v}: midpoint {m}"
            );
        }
    }

    proptest! {
        /// Few samples: the same figures as sorting them all. Many: within 0.8% of them, with
        /// count and max exact, in 30 KB; merged per thread, the same as pushed in one.
        #[test]
        fn quantiles_are_exact_then_within_a_bucket(xs in prop::collection::vec(0u64..50_000_000, 1..3000), extra in 0usize..2) {
            // Past the exact limit: the same values repeated.
            let reps = if extra == 1 { EXACT_UP_TO / xs.len() + 2 } else { 1 };
            let all: Vec<u64> = xs.iter().copied().cycle().take(xs.len() * reps).collect();
            let mut s = Samples::default();
            let (mut a, mut b) = (Samples::default(), Samples::default());
            for (i, &v) in all.iter().enumerate() {
                s.push(v);
                if i % 3 == 0 { a.push(v) } else { b.push(v) }
            }
            a.merge(&b);
            prop_assert_eq!(s.count(), all.len() as u64);
            prop_assert_eq!(s.max(), *xs.iter().max().unwrap());
            prop_assert_eq!(s.is_exact(), reps == 1);
            for q in [0.5, 0.99, 1.0] {
                let want = nearest_rank(&mut all.clone(), q) as f64;
                let got = s.quantile(q);
                prop_assert_eq!(got, a.quantile(q));
                if reps == 1 {
                    prop_assert_eq!(got, want);
                } else {
                    prop_assert!((got - want).abs() <= want / 128.0 + 0.5, "q {}: {} vs {}", q, got, want);
                }
            }
        }
    }
}
