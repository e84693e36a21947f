//! SCHED_DEADLINE admission control as Linux 6.18 computes it, per root domain (`struct
//! dl_bw`, deadline.c). A reservation is admitted iff
//!
//! ```text
//! total_bw - old_bw + new_bw <= cap_scale(bw, cap)          (__dl_overflow is its negation)
//! ```
//!
//! where `bw` = `to_ratio(sched_rt_period, sched_rt_runtime)` (0.95 = 996147 / 2^20 by
//! default, `init_dl_bw`; no limit at all when `sched_rt_runtime_us` is −1), `cap` =
//! `dl_bw_capacity`, the root domain's CPUs × 1024 on a symmetric machine or the sum of the
//! CPUs' capacities otherwise, `cap_scale(bw, cap)` = `bw * cap >> 10`, and `total_bw` the
//! bandwidths already reserved, each `to_ratio(period, runtime)` truncated to 2^-20
//! (`sched_dl_overflow`). Since 6.12 every CPU's fair server reserves 50 ms per 1000 ms in
//! the same total (`dl_server_apply_params(init)` at boot), so 2 CPUs leave 2 × 0.95 −
//! 2 × 0.05 = 1.80 to tasks: 18 reservations of 0.1, or 0.9 + 0.9 (measured on this machine,
//! `crates/linux/tests/linux_classes_real.rs`).
//!
//! [`RootDomain::admit`] is `sched_setattr`'s path for a task entering SCHED_DEADLINE:
//! `__checkparam_dl` (EINVAL) then `sched_dl_overflow` (EBUSY). A task's bandwidth is given
//! back ([`RootDomain::release`]) not when it leaves the class but at its 0-lag time
//! (`task_non_contending` / `inactive_task_timer`), which [`super::Cbs::block`] computes.
//! Not modelled: several root domains (exclusive cpusets), CPU hotplug, the
//! `SCHED_FLAG_SUGOV` entities, and the corner where a task re-enters the class before its
//! old 0-lag time (its old bandwidth is then subtracted at once).

use super::attr::{checkparam_dl, DlAttr, DlPeriodLimits, ParamError};
use super::bw::{bw_f64, cap_scale, to_ratio, SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SHIFT};
use super::constants::{RtBandwidth, FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS};
use rtsched_model::Time;
use std::fmt;

/// One root domain's deadline bandwidth (`struct dl_bw`) and what it is computed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootDomain {
    rt: RtBandwidth,
    limits: DlPeriodLimits,
    /// `dl_b->bw`; `None` for the kernel's −1 (`RUNTIME_INF`).
    bw: Option<u64>,
    cpus: u32,
    /// `dl_bw_capacity`.
    cap: u64,
    /// `dl_b->total_bw`.
    total_bw: u64,
    /// The part of `total_bw` reserved by fair servers.
    fair_bw: u64,
    /// Every CPU's `dl_rq->extra_bw` (`__dl_update` changes them all alike).
    extra_bw: i64,
}

/// A refused reservation (EBUSY), with the numbers behind the refusal (2^-20 fixed point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// The refused reservation's `dl_bw`.
    pub new_bw: u64,
    /// `total_bw` before it (fair servers included).
    pub total_bw: u64,
    /// The fair servers' part of `total_bw`.
    pub fair_bw: u64,
    /// `cap_scale(bw, cap)`.
    pub limit: u64,
    pub cpus: u32,
    pub capacity: u64,
    pub rt: RtBandwidth,
}

/// Why `sched_setattr` would refuse a reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdmissionError {
    /// EINVAL: the parameters (`__checkparam_dl`).
    Invalid(ParamError),
    /// EBUSY: the bandwidth (`__dl_overflow`).
    Busy(Overflow),
}

impl AdmissionError {
    /// The errno `sched_setattr` returns.
    pub fn errno_name(&self) -> &'static str {
        match self {
            AdmissionError::Invalid(_) => "EINVAL",
            AdmissionError::Busy(_) => "EBUSY",
        }
    }
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let after = self.total_bw + self.new_bw;
        let cpus = if self.capacity == u64::from(self.cpus) << SCHED_CAPACITY_SHIFT {
            format!("{} CPUs", self.cpus)
        } else {
            format!("CPU capacity {}/{SCHED_CAPACITY_SCALE}", self.capacity)
        };
        write!(
            f,
            "SCHED_DEADLINE admission refused (EBUSY): bandwidth {:.6} ({}/2^20) would bring the \
             root domain's reserved deadline bandwidth to {:.6} ({after}/2^20, of which {:.6} \
             the fair servers'), above its limit {:.6} ({}/2^20) = {cpus} x sched_rt_runtime_us \
             / sched_rt_period_us = {} / {}",
            bw_f64(self.new_bw),
            self.new_bw,
            bw_f64(after),
            bw_f64(self.fair_bw),
            bw_f64(self.limit),
            self.limit,
            self.rt.runtime_us,
            self.rt.period_us,
        )
    }
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmissionError::Invalid(e) => write!(f, "{e} (EINVAL)"),
            AdmissionError::Busy(o) => o.fmt(f),
        }
    }
}

impl RootDomain {
    /// An empty root domain of CPUs with `capacities` (`arch_scale_cpu_capacity`, 1024 each on
    /// a symmetric machine) under `rt`: no reservation, not even the fair servers'.
    pub fn new(rt: RtBandwidth, capacities: &[u64]) -> Self {
        let cpus = capacities.len() as u32;
        // dl_bw_capacity: cpus << SCHED_CAPACITY_SHIFT when every CPU is full-size, else Σ.
        let cap = if capacities.iter().all(|&c| c == SCHED_CAPACITY_SCALE) {
            u64::from(cpus) << SCHED_CAPACITY_SHIFT
        } else {
            capacities.iter().sum()
        };
        RootDomain {
            rt,
            limits: DlPeriodLimits::DEFAULT,
            bw: rt.dl_bw(),
            cpus,
            cap,
            total_bw: 0,
            fair_bw: 0,
            extra_bw: rt.max_bw() as i64,
        }
    }

    /// `cpus` full-size CPUs under `rt`, no reservation yet.
    pub fn symmetric(rt: RtBandwidth, cpus: u32) -> Self {
        Self::new(rt, &vec![SCHED_CAPACITY_SCALE; cpus as usize])
    }

    /// The kernel after boot on `cpus` symmetric CPUs with default sysctls: each CPU's fair
    /// server (50 ms / 1000 ms) reserved.
    pub fn linux_default(cpus: u32) -> Self {
        Self::symmetric(RtBandwidth::DEFAULT, cpus)
            .with_fair_servers(FAIR_SERVER_RUNTIME_NS, FAIR_SERVER_PERIOD_NS)
            .expect("the default fair servers fit the default RT bandwidth")
    }

    /// Reserve one fair server of `runtime` per `period` on every CPU, as
    /// `sched_init_dl_servers` does at boot (`dl_server_apply_params(.., init = 1)`); a runtime
    /// of 0 disables them (nothing reserved).
    pub fn with_fair_servers(
        mut self,
        runtime: Time,
        period: Time,
    ) -> Result<Self, AdmissionError> {
        let new_bw = to_ratio(period, runtime);
        for _ in 0..self.cpus {
            if self.overflow(0, new_bw) {
                return Err(AdmissionError::Busy(self.refusal(new_bw)));
            }
            self.add(new_bw);
            self.fair_bw += new_bw;
        }
        Ok(self)
    }

    /// The period limits `__checkparam_dl` applies (`sched_deadline_period_{min,max}_us`).
    pub fn with_period_limits(mut self, limits: DlPeriodLimits) -> Self {
        self.limits = limits;
        self
    }

    pub fn rt(&self) -> RtBandwidth {
        self.rt
    }
    pub fn cpus(&self) -> u32 {
        self.cpus
    }
    /// `dl_bw_capacity`.
    pub fn capacity(&self) -> u64 {
        self.cap
    }
    /// `total_bw`: everything reserved, fair servers included.
    pub fn total_bw(&self) -> u64 {
        self.total_bw
    }
    /// The fair servers' part of [`RootDomain::total_bw`].
    pub fn fair_bw(&self) -> u64 {
        self.fair_bw
    }
    /// `cap_scale(bw, cap)`: the most `total_bw` may reach; `None` without a limit.
    pub fn limit(&self) -> Option<u64> {
        self.bw.map(|bw| cap_scale(bw, self.cap))
    }
    /// Every CPU's `extra_bw` for GRUB ([`super::GrubRq::extra_bw`]).
    pub fn extra_bw(&self) -> u64 {
        self.extra_bw.max(0) as u64
    }

    /// `__dl_overflow(dl_b, cap, old_bw, new_bw)`: would replacing `old_bw` by `new_bw`
    /// exceed the limit?
    pub fn overflow(&self, old_bw: u64, new_bw: u64) -> bool {
        self.limit()
            .is_some_and(|limit| limit < self.total_bw - old_bw + new_bw)
    }

    /// `__dl_add`: total_bw += bw; every CPU's extra_bw -= (s32)bw / cpus.
    fn add(&mut self, bw: u64) {
        self.total_bw += bw;
        self.extra_bw -= i64::from(bw as i32 / self.cpus.max(1) as i32);
    }

    /// `__dl_sub`, the reverse of `add`.
    fn sub(&mut self, bw: u64) {
        self.total_bw -= bw;
        self.extra_bw += i64::from(bw as i32 / self.cpus.max(1) as i32);
    }

    fn refusal(&self, new_bw: u64) -> Overflow {
        Overflow {
            new_bw,
            total_bw: self.total_bw,
            fair_bw: self.fair_bw,
            limit: self.limit().unwrap_or(u64::MAX),
            cpus: self.cpus,
            capacity: self.cap,
            rt: self.rt,
        }
    }

    /// `sched_setattr` of a task entering SCHED_DEADLINE with `attr`: `__checkparam_dl`, then
    /// `sched_dl_overflow` (reserving the bandwidth when it fits). Returns the reserved
    /// `dl_bw`, to [`RootDomain::release`] at the task's 0-lag time when it leaves.
    pub fn admit(&mut self, attr: &DlAttr) -> Result<u64, AdmissionError> {
        checkparam_dl(attr, self.limits).map_err(AdmissionError::Invalid)?;
        let new_bw = attr.dl_bw();
        if self.overflow(0, new_bw) {
            return Err(AdmissionError::Busy(self.refusal(new_bw)));
        }
        self.add(new_bw);
        Ok(new_bw)
    }

    /// `sched_setattr` of a SCHED_DEADLINE task holding `old_bw` to new parameters `attr`
    /// (`sched_dl_overflow`'s second case): admitted iff the total with `old_bw` replaced fits.
    pub fn change(&mut self, old_bw: u64, attr: &DlAttr) -> Result<u64, AdmissionError> {
        checkparam_dl(attr, self.limits).map_err(AdmissionError::Invalid)?;
        let new_bw = attr.dl_bw();
        if new_bw == old_bw {
            return Ok(new_bw);
        }
        if self.overflow(old_bw, new_bw) {
            return Err(AdmissionError::Busy(self.refusal(new_bw)));
        }
        self.sub(old_bw);
        self.add(new_bw);
        Ok(new_bw)
    }

    /// Give back a reservation (`__dl_sub`): when a task that left SCHED_DEADLINE, or exited,
    /// reaches its 0-lag time.
    pub fn release(&mut self, dl_bw: u64) {
        self.sub(dl_bw);
    }

    /// Admit `attrs` one after the other, as threads calling `sched_setattr` in that order;
    /// the first refusal stops, naming its index. Reserves the admitted ones.
    pub fn admit_all(&mut self, attrs: &[DlAttr]) -> Result<(), (usize, AdmissionError)> {
        for (i, a) in attrs.iter().enumerate() {
            self.admit(a).map_err(|e| (i, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Time = 1_000_000;
    const S: Time = 1_000_000_000;

    fn busy(r: Result<u64, AdmissionError>) -> bool {
        matches!(r, Err(AdmissionError::Busy(_)))
    }

    #[test]
    fn two_cpus_leave_one_point_eight_to_tasks() {
        // Limit cap_scale(996147, 2048) = 1992294; fair servers 2 x 52428 = 104856.
        let rd = RootDomain::linux_default(2);
        assert_eq!(
            (rd.limit(), rd.total_bw(), rd.fair_bw()),
            (Some(1_992_294), 104_856, 104_856)
        );
        // extra_bw: 996147 - 2 x (52428 / 2).
        assert_eq!(rd.extra_bw(), 943_719);
        // 18 of 0.1 (104857 each: 1992282 in all) fit; the 19th does not.
        let mut d = rd.clone();
        let tenth = DlAttr::new(10 * MS, 100 * MS, 100 * MS);
        assert_eq!(d.admit_all(&[tenth; 18]), Ok(()));
        assert_eq!(d.total_bw(), 1_992_282);
        assert!(busy(d.admit(&tenth)));
        // 0.9 + 0.9 (943718 each: 1992292 in all, 2 below the limit) fit; a third does not.
        let mut d = rd.clone();
        let nine = DlAttr::new(9 * MS, 10 * MS, 10 * MS);
        assert_eq!(d.admit_all(&[nine, nine]), Ok(()));
        assert_eq!(d.total_bw(), 1_992_292);
        assert!(busy(d.admit(&nine)));
    }

    #[test]
    fn the_fixed_point_decides_the_border() {
        // Beside 0.9 + 0.9 on 2 CPUs, 2 units of 2^-20 are left. 2861 ns per second is
        // to_ratio = 2.99998 -> 2: admitted, although 0.9 + 0.9 + 2.861e-6 > 2 x 0.95 - 2 x 0.05
        // in exact arithmetic; 2862 ns per second is 3.0010 -> 3: refused.
        let nine = DlAttr::new(9 * MS, 10 * MS, 10 * MS);
        let (fits, over) = (DlAttr::new(2861, S, S), DlAttr::new(2862, S, S));
        assert_eq!((fits.dl_bw(), over.dl_bw()), (2, 3));
        // What a computation in real numbers would decide: refuse.
        let exact_fits = |set: &[DlAttr]| {
            let u: f64 = set
                .iter()
                .map(|a| a.runtime as f64 / a.dl_period() as f64)
                .sum();
            u <= 2.0 * 0.95 - 2.0 * 0.05
        };
        assert!(!exact_fits(&[nine, nine, fits]));
        let mut d = RootDomain::linux_default(2);
        d.admit_all(&[nine, nine]).unwrap();
        assert!(busy(d.clone().admit(&over)));
        assert_eq!(d.admit(&fits), Ok(2));
        assert_eq!(d.limit(), Some(d.total_bw()), "exactly full");
    }

    #[test]
    fn one_cpu_refuses_a_whole_cpu_and_fits_point_nine() {
        let mut d = RootDomain::linux_default(1);
        assert_eq!(d.limit(), Some(996_147));
        // Total bandwidth 1.0 (one reservation of 1, or two of 0.5) is refused.
        assert!(busy(d.clone().admit(&DlAttr::new(
            10 * MS,
            10 * MS,
            10 * MS
        ))));
        let half = DlAttr::new(5 * MS, 10 * MS, 10 * MS);
        assert_eq!(d.clone().admit_all(&[half, half]).unwrap_err().0, 1);
        // 0.9 + the fair server's 0.05: 943718 + 52428 = 996146, 1 unit below the limit.
        d.admit(&DlAttr::new(9 * MS, 10 * MS, 10 * MS)).unwrap();
        assert_eq!(d.admit(&DlAttr::new(1049, S, S)), Ok(1));
        assert!(busy(d.admit(&DlAttr::new(1049, S, S))));
    }

    #[test]
    fn release_change_capacity_and_no_limit() {
        let mut d = RootDomain::linux_default(2);
        let nine = DlAttr::new(9 * MS, 10 * MS, 10 * MS);
        let bw = d.admit(&nine).unwrap();
        d.admit(&nine).unwrap();
        assert!(busy(d.admit(&nine)));
        d.release(bw);
        assert_eq!(
            d.admit(&nine),
            Ok(bw),
            "released bandwidth is admitted again"
        );
        // Changing 0.9 to 0.95 overflows; to 0.5 fits and frees room.
        assert!(busy(
            d.change(bw, &DlAttr::new(95 * MS / 10, 10 * MS, 10 * MS))
        ));
        let half = d
            .change(bw, &DlAttr::new(5 * MS, 10 * MS, 10 * MS))
            .unwrap();
        assert_eq!(d.total_bw(), 104_856 + 943_718 + half);
        // A big and a little CPU: capacity 1024 + 512, limit cap_scale(996147, 1536) = 1494220.
        let asym = RootDomain::new(RtBandwidth::DEFAULT, &[1024, 512]);
        assert_eq!((asym.capacity(), asym.limit()), (1536, Some(1_494_220)));
        // sched_rt_runtime_us = -1: no admission limit at all.
        let inf = RtBandwidth {
            runtime_us: -1,
            period_us: 1_000_000,
        };
        let mut d = RootDomain::symmetric(inf, 1);
        let whole = DlAttr::new(10 * MS, 10 * MS, 10 * MS);
        assert_eq!(d.admit_all(&[whole, whole, whole]), Ok(()));
    }

    #[test]
    fn refusals_name_the_bandwidths_and_the_limit() {
        let mut d = RootDomain::linux_default(2);
        let nine = DlAttr::new(9 * MS, 10 * MS, 10 * MS);
        let (i, e) = d.admit_all(&[nine, nine, nine]).unwrap_err();
        assert_eq!((i, e.errno_name()), (2, "EBUSY"));
        assert_eq!(
            e.to_string(),
            "SCHED_DEADLINE admission refused (EBUSY): bandwidth 0.900000 (943718/2^20) would \
             bring the root domain's reserved deadline bandwidth to 2.799997 (2936010/2^20, of \
             which 0.099998 the fair servers'), above its limit 1.900000 (1992294/2^20) = 2 CPUs \
             x sched_rt_runtime_us / sched_rt_period_us = 950000 / 1000000"
        );
        let e = d.admit(&DlAttr::new(1000, MS, MS)).unwrap_err();
        assert_eq!(e.errno_name(), "EINVAL");
        assert!(e.to_string().contains("runtime >= 1024 ns"), "{e}");
    }

    proptest! {
        /// Admitting and then releasing any sequence restores the root domain exactly, and
        /// what is reserved never exceeds the limit.
        #[test]
        fn admit_release_round_trip(
            cpus in 1u32..5,
            set in prop::collection::vec((1u64..1000, 1u64..1000), 1..25),
        ) {
            let start = RootDomain::linux_default(cpus);
            let mut d = start.clone();
            let mut held = Vec::new();
            for (r, p) in set {
                let attr = DlAttr::new(r.min(p) * 10_000, p * 10_000 + 100_000, 0);
                if let Ok(bw) = d.admit(&attr) {
                    held.push(bw);
                }
                prop_assert!(d.total_bw() <= d.limit().unwrap());
            }
            for bw in held {
                d.release(bw);
            }
            prop_assert_eq!(d, start);
        }
    }
}
