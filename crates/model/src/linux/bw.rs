//! The kernel's fixed point for bandwidths and its wrap-safe time comparison, as
//! `kernel/sched/sched.h` and `kernel/sched/core.c` define them (Linux 6.18).
//!
//! A bandwidth (runtime / period) is an integer in units of 2^-20 ([`BW_SHIFT`]): 0.1 is
//! `to_ratio(100 ms, 10 ms)` = 104857, not 104857.6. Admission and GRUB decide on these
//! truncated integers, so a set at the border of the limit is admitted or refused exactly as
//! the kernel decides only if the same integers are used (see `admission.rs`' tests: a third
//! reservation of 2861 ns per second fits beside 0.9 + 0.9 on 2 CPUs, 2862 ns does not).

use crate::time::Time;

/// `BW_SHIFT` (sched.h): bandwidths are fixed point with 20 fractional bits.
pub const BW_SHIFT: u32 = 20;
/// `BW_UNIT`: a bandwidth of 1 (one whole CPU).
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// `RATIO_SHIFT` (sched.h): `dl_rq->bw_ratio`, 1 / Umax, has 8 fractional bits.
pub const RATIO_SHIFT: u32 = 8;
/// `DL_SCALE` (sched.h): `dl_entity_overflow` drops 10 bits (~1 us) from each factor, and
/// `__checkparam_dl` refuses a runtime below 2^10 ns.
pub const DL_SCALE: u32 = 10;
/// `SCHED_CAPACITY_SHIFT` (include/linux/sched.h): a CPU's capacity, 1024 for the biggest.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// `SCHED_CAPACITY_SCALE`: the capacity of a full-speed CPU (every CPU of a symmetric machine).
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;

/// `to_ratio(period, runtime)` (core.c): `runtime << BW_SHIFT / period`, truncated; 0 when
/// the period is 0. (The kernel's `RUNTIME_INF` case is `rtsched_policies::linux::RtBandwidth`'s `None`.)
#[inline]
pub fn to_ratio(period: Time, runtime: Time) -> u64 {
    if period == 0 {
        return 0;
    }
    ((u128::from(runtime) << BW_SHIFT) / u128::from(period)) as u64
}

/// `cap_scale(v, cap)` (sched.h): `v * cap >> SCHED_CAPACITY_SHIFT`.
#[inline]
pub fn cap_scale(v: u64, cap: u64) -> u64 {
    ((u128::from(v) * u128::from(cap)) >> SCHED_CAPACITY_SHIFT) as u64
}

/// `dl_time_before(a, b)` (sched.h): `(s64)(a - b) < 0`, true when `a` is before `b` on the
/// wrapping u64 clock.
#[inline]
pub fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// A fixed-point bandwidth as a decimal, for messages only (decisions use the integers).
pub fn bw_f64(bw: u64) -> f64 {
    bw as f64 / BW_UNIT as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_ratio_truncates_as_the_kernel() {
        // Hand-worked: (10e6 << 20) / 100e6 = 104857.6 -> 104857; 0.95 -> 996147.2 -> 996147;
        // the fair server's 50/1000 -> 52428.8 -> 52428; 0.9 -> 943718.4 -> 943718.
        assert_eq!(to_ratio(100_000_000, 10_000_000), 104_857);
        assert_eq!(to_ratio(1_000_000_000, 950_000_000), 996_147);
        assert_eq!(to_ratio(1_000_000_000, 50_000_000), 52_428);
        assert_eq!(to_ratio(10_000_000, 9_000_000), 943_718);
        assert_eq!(to_ratio(7, 7), BW_UNIT);
        assert_eq!(to_ratio(0, 5), 0);
        // 1 / 0.95 with 8 fractional bits (init_dl_rq_bw_ratio's bw_ratio): 269.
        assert_eq!(
            to_ratio(950_000_000, 1_000_000_000) >> (BW_SHIFT - RATIO_SHIFT),
            269
        );
    }

    #[test]
    fn cap_scale_and_time_before() {
        assert_eq!(cap_scale(996_147, 2 * SCHED_CAPACITY_SCALE), 1_992_294);
        assert_eq!(cap_scale(1000, 512), 500);
        assert!(dl_time_before(1, 2));
        assert!(!dl_time_before(2, 2));
        assert!(
            dl_time_before(u64::MAX, 0),
            "wraps as the kernel's s64 difference"
        );
    }
}
