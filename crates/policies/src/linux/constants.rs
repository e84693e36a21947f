//! The constants of Linux's real-time classes that the `linux` scheduler and admission use,
//! each with where it is defined (Linux 6.18) and what this machine reads (6.18.44, 2 CPUs).
//!
//! | constant | value | source | on this machine |
//! |---|---|---|---|
//! | RT period | 1 s | `sysctl_sched_rt_period` (rt.c) | `/proc/sys/kernel/sched_rt_period_us` 1000000 |
//! | RT runtime | 0.95 s | `sysctl_sched_rt_runtime` (rt.c) | `sched_rt_runtime_us` 950000 |
//! | RR time slice | 100 ms | `RR_TIMESLICE` = 100 * HZ / 1000 jiffies (include/linux/sched/rt.h) | `sched_rr_timeslice_ms` 100 |
//! | fair server | 50 ms every 1000 ms, deadline = period, deferred | `sched_init_dl_servers` (deadline.c) | not readable here (debugfs refused); its effect is measured |
//! | deadline period limits | 100 us .. 2^22 us | `sysctl_sched_dl_period_{min,max}` (deadline.c) | `sched_deadline_period_{min,max}_us` 100, 4194304 |
//!
//! The RT pair does two jobs. It is the deadline class's admission limit (`dl_b->bw` =
//! 0.95 per CPU, `init_dl_bw`) and GRUB's Umax (`init_dl_rq_bw_ratio`). And, because this
//! kernel is built with `CONFIG_RT_GROUP_SCHED=y`, it still throttles the RT class: the root
//! group's RT tasks run at most 950 ms of every 1 s per CPU (`sched_rt_runtime_exceeded`). Without
//! RT group scheduling, 6.12+ kernels leave the 5 % to the fair server alone
//! (Documentation/scheduler/sched-rt-group.rst). Both give a fair task under a FIFO hog the
//! same 5 %, measured in `crates/linux/tests/linux_classes_real.rs`.
//!
//! The RR slice is counted in ticks (`task_tick_rt` decrements `rt.time_slice` once per tick),
//! so it is [`rr_timeslice_ticks`] ticks of 1/HZ; this kernel has `CONFIG_HZ=250` (4 ms ticks).

use super::bw::{to_ratio, BW_SHIFT, BW_UNIT, RATIO_SHIFT};
use rtsched_model::Time;

/// `sysctl_sched_rt_period` default, us.
pub const SCHED_RT_PERIOD_US: u64 = 1_000_000;
/// `sysctl_sched_rt_runtime` default, us (−1 means `RUNTIME_INF`: no limit).
pub const SCHED_RT_RUNTIME_US: i64 = 950_000;
/// `sysctl_sched_rr_timeslice` (`sched_rr_timeslice_ms`) default, as ns.
pub const SCHED_RR_TIMESLICE_NS: Time = 100_000_000;
/// The fair server's runtime per period (`sched_init_dl_servers`: 50 * NSEC_PER_MSEC).
pub const FAIR_SERVER_RUNTIME_NS: Time = 50_000_000;
/// The fair server's period and relative deadline (1000 * NSEC_PER_MSEC).
pub const FAIR_SERVER_PERIOD_NS: Time = 1_000_000_000;
/// `sysctl_sched_dl_period_{min,max}` defaults, us (defined beside `__checkparam_dl`, which
/// reads them, in the model).
pub use super::attr::{SCHED_DEADLINE_PERIOD_MAX_US, SCHED_DEADLINE_PERIOD_MIN_US};
/// The tick rate of this machine's kernel (`CONFIG_HZ=250`); a build constant, not Linux's.
pub const THIS_MACHINE_HZ: u64 = 250;

/// `RR_TIMESLICE` in ticks for a kernel built with `hz` ticks per second: 100 * HZ / 1000.
pub const fn rr_timeslice_ticks(hz: u64) -> u64 {
    100 * hz / 1000
}

/// `sched_rt_runtime_us` / `sched_rt_period_us`: the RT bandwidth the deadline class's
/// admission and GRUB are computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtBandwidth {
    /// `sched_rt_runtime_us`; −1 is `RUNTIME_INF`.
    pub runtime_us: i64,
    /// `sched_rt_period_us`.
    pub period_us: u64,
}

impl RtBandwidth {
    /// The kernel's defaults, 950000 of 1000000 us.
    pub const DEFAULT: RtBandwidth = RtBandwidth {
        runtime_us: SCHED_RT_RUNTIME_US,
        period_us: SCHED_RT_PERIOD_US,
    };

    /// `global_rt_runtime()` in ns, `None` for `RUNTIME_INF`.
    pub fn global_rt_runtime(&self) -> Option<Time> {
        (self.runtime_us >= 0).then(|| self.runtime_us as u64 * 1000)
    }

    /// `global_rt_period()` in ns.
    pub fn global_rt_period(&self) -> Time {
        self.period_us * 1000
    }

    /// `dl_b->bw` (`init_dl_bw`): the admissible deadline bandwidth per CPU,
    /// `to_ratio(rt_period, rt_runtime)`; `None` for `RUNTIME_INF` (the kernel's −1: no limit).
    pub fn dl_bw(&self) -> Option<u64> {
        self.global_rt_runtime()
            .map(|r| to_ratio(self.global_rt_period(), r))
    }

    /// `dl_rq->max_bw` (`init_dl_rq_bw_ratio`): GRUB's Umax, `BW_UNIT` for `RUNTIME_INF`.
    pub fn max_bw(&self) -> u64 {
        self.dl_bw().unwrap_or(BW_UNIT)
    }

    /// `dl_rq->bw_ratio`: 1 / Umax with [`RATIO_SHIFT`] fractional bits,
    /// `to_ratio(rt_runtime, rt_period) >> (BW_SHIFT - RATIO_SHIFT)`.
    pub fn bw_ratio(&self) -> u64 {
        match self.global_rt_runtime() {
            None => 1 << RATIO_SHIFT,
            Some(r) => to_ratio(r, self.global_rt_period()) >> (BW_SHIFT - RATIO_SHIFT),
        }
    }
}

impl Default for RtBandwidth {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_as_the_kernel_computes_them() {
        let rt = RtBandwidth::DEFAULT;
        assert_eq!(rt.global_rt_runtime(), Some(950_000_000));
        assert_eq!(rt.dl_bw(), Some(996_147));
        assert_eq!(rt.max_bw(), 996_147);
        assert_eq!(rt.bw_ratio(), 269);
        let inf = RtBandwidth {
            runtime_us: -1,
            ..rt
        };
        assert_eq!(
            (inf.dl_bw(), inf.max_bw(), inf.bw_ratio()),
            (None, BW_UNIT, 256)
        );
        // 25 ticks of 4 ms at HZ=250 = the 100 ms of sched_rr_timeslice_ms.
        assert_eq!(
            rr_timeslice_ticks(THIS_MACHINE_HZ) * 1_000_000_000 / THIS_MACHINE_HZ,
            SCHED_RR_TIMESLICE_NS
        );
    }
}
