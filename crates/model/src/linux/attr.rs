//! A SCHED_DEADLINE reservation as `sched_setattr(2)` takes it, and the parameter checks the
//! kernel applies before admission (`__checkparam_dl`, deadline.c; a refusal is EINVAL).
//! Here, below the policies, because a task-set file's `policy: deadline` task is checked
//! with the same rule when it is read (`file/read/policy.rs`) as the `linux` scheduler and
//! admission check it (`rtsched_policies::linux`, which re-exports this module).

use super::bw::{to_ratio, DL_SCALE};
use crate::time::Time;
use std::fmt;

/// `sysctl_sched_dl_period_min` default, us (deadline.c).
pub const SCHED_DEADLINE_PERIOD_MIN_US: u64 = 100;
/// `sysctl_sched_dl_period_max` default, us (1 << 22, ~4.2 s).
pub const SCHED_DEADLINE_PERIOD_MAX_US: u64 = 1 << 22;

/// `struct sched_attr`'s deadline fields, in ns, and `SCHED_FLAG_RECLAIM` (GRUB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlAttr {
    /// `sched_runtime`: the budget per period.
    pub runtime: Time,
    /// `sched_deadline`: the relative deadline.
    pub deadline: Time,
    /// `sched_period`; 0 means "equal to the deadline" (`__setparam_dl`).
    pub period: Time,
    /// `SCHED_FLAG_RECLAIM`: the entity reclaims unused bandwidth (GRUB, `grub.rs`).
    pub reclaim: bool,
}

impl DlAttr {
    pub const fn new(runtime: Time, deadline: Time, period: Time) -> Self {
        DlAttr {
            runtime,
            deadline,
            period,
            reclaim: false,
        }
    }

    /// The same reservation with `SCHED_FLAG_RECLAIM`.
    pub const fn reclaiming(self) -> Self {
        DlAttr {
            reclaim: true,
            ..self
        }
    }

    /// `dl_period`: `sched_period ?: sched_deadline`.
    pub fn dl_period(&self) -> Time {
        if self.period == 0 {
            self.deadline
        } else {
            self.period
        }
    }

    /// `dl_bw` = `to_ratio(dl_period, dl_runtime)`: what admission counts.
    pub fn dl_bw(&self) -> u64 {
        to_ratio(self.dl_period(), self.runtime)
    }

    /// `dl_density` = `to_ratio(dl_deadline, dl_runtime)`: the revised wake-up rule's rate.
    pub fn dl_density(&self) -> u64 {
        to_ratio(self.deadline, self.runtime)
    }
}

/// `sched_deadline_period_{min,max}_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlPeriodLimits {
    pub min_us: u64,
    pub max_us: u64,
}

impl DlPeriodLimits {
    pub const DEFAULT: DlPeriodLimits = DlPeriodLimits {
        min_us: SCHED_DEADLINE_PERIOD_MIN_US,
        max_us: SCHED_DEADLINE_PERIOD_MAX_US,
    };
}

impl Default for DlPeriodLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why `__checkparam_dl` refuses a reservation (EINVAL), one variant per check, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    DeadlineZero,
    RuntimeBelowMinimum {
        runtime: Time,
    },
    /// Bit 63 set in the deadline or the period (the kernel keeps it for wrap-around).
    TooLarge,
    DeadlineAbovePeriod {
        deadline: Time,
        period: Time,
    },
    RuntimeAboveDeadline {
        runtime: Time,
        deadline: Time,
    },
    PeriodOutOfRange {
        period: Time,
        min: Time,
        max: Time,
    },
}

impl ParamError {
    /// The `sched_attr` field the check is about (`runtime`, `deadline` or `period`), for a
    /// message that names the task's field.
    pub fn field(&self) -> &'static str {
        match self {
            ParamError::DeadlineZero | ParamError::RuntimeAboveDeadline { .. } => "deadline",
            ParamError::RuntimeBelowMinimum { .. } => "runtime",
            ParamError::TooLarge
            | ParamError::DeadlineAbovePeriod { .. }
            | ParamError::PeriodOutOfRange { .. } => "period",
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ParamError::DeadlineZero => write!(f, "SCHED_DEADLINE needs a deadline > 0"),
            ParamError::RuntimeBelowMinimum { runtime } => write!(
                f,
                "SCHED_DEADLINE needs runtime >= {} ns (2^DL_SCALE), got {runtime} ns",
                1u64 << DL_SCALE
            ),
            ParamError::TooLarge => write!(f, "SCHED_DEADLINE deadline or period >= 2^63 ns"),
            ParamError::DeadlineAbovePeriod { deadline, period } => write!(
                f,
                "SCHED_DEADLINE needs deadline <= period ({deadline} > {period} ns)"
            ),
            ParamError::RuntimeAboveDeadline { runtime, deadline } => write!(
                f,
                "SCHED_DEADLINE needs runtime <= deadline ({runtime} > {deadline} ns)"
            ),
            ParamError::PeriodOutOfRange { period, min, max } => write!(
                f,
                "SCHED_DEADLINE needs {min} <= period <= {max} ns \
                 (sched_deadline_period_min_us/max_us), got {period} ns"
            ),
        }
    }
}

/// `__checkparam_dl` (deadline.c): deadline > 0; runtime >= 2^`DL_SCALE` ns; neither the
/// deadline nor the period has bit 63; runtime <= deadline <= period (the period defaulting
/// to the deadline); the period within `limits`. (`SCHED_FLAG_SUGOV`, the kernel's own
/// frequency-governor entity, is not a user's and is not modelled.)
pub fn checkparam_dl(attr: &DlAttr, limits: DlPeriodLimits) -> Result<(), ParamError> {
    if attr.deadline == 0 {
        return Err(ParamError::DeadlineZero);
    }
    if attr.runtime < (1 << DL_SCALE) {
        return Err(ParamError::RuntimeBelowMinimum {
            runtime: attr.runtime,
        });
    }
    if (attr.deadline | attr.period) & (1 << 63) != 0 {
        return Err(ParamError::TooLarge);
    }
    let period = attr.dl_period();
    if period < attr.deadline {
        return Err(ParamError::DeadlineAbovePeriod {
            deadline: attr.deadline,
            period,
        });
    }
    if attr.deadline < attr.runtime {
        return Err(ParamError::RuntimeAboveDeadline {
            runtime: attr.runtime,
            deadline: attr.deadline,
        });
    }
    let (min, max) = (limits.min_us * 1000, limits.max_us * 1000);
    if period < min || period > max {
        return Err(ParamError::PeriodOutOfRange { period, min, max });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn checkparam_accepts_the_borders_and_refuses_past_them() {
        let ok = |a: DlAttr| checkparam_dl(&a, DlPeriodLimits::DEFAULT);
        // runtime = deadline = period, runtime exactly 1024 ns, period exactly 100 us / 2^22 us.
        assert_eq!(ok(DlAttr::new(10 * MS, 10 * MS, 10 * MS)), Ok(()));
        assert_eq!(ok(DlAttr::new(1024, 100_000, 100_000)), Ok(()));
        assert_eq!(
            ok(DlAttr::new(1024, 100_000, 0)),
            Ok(()),
            "period 0 = deadline"
        );
        assert_eq!(ok(DlAttr::new(MS, MS, (1 << 22) * 1000)), Ok(()));
        assert_eq!(
            ok(DlAttr::new(1023, MS, MS)),
            Err(ParamError::RuntimeBelowMinimum { runtime: 1023 })
        );
        assert_eq!(ok(DlAttr::new(MS, 0, MS)), Err(ParamError::DeadlineZero));
        assert!(matches!(
            ok(DlAttr::new(MS, 2 * MS, MS)),
            Err(ParamError::DeadlineAbovePeriod { .. })
        ));
        let e = ok(DlAttr::new(3 * MS, 2 * MS, 5 * MS)).unwrap_err();
        assert_eq!(e.field(), "deadline");
        assert_eq!(
            e.to_string(),
            "SCHED_DEADLINE needs runtime <= deadline (3000000 > 2000000 ns)"
        );
        assert!(matches!(
            ok(DlAttr::new(2000, 99_999, 99_999)),
            Err(ParamError::PeriodOutOfRange { .. })
        ));
        assert!(matches!(
            ok(DlAttr::new(MS, MS, (1 << 22) * 1000 + 1)),
            Err(ParamError::PeriodOutOfRange { .. })
        ));
        assert_eq!(ok(DlAttr::new(MS, MS, 1 << 63)), Err(ParamError::TooLarge));
    }

    #[test]
    fn period_zero_means_the_deadline() {
        let a = DlAttr::new(2 * MS, 5 * MS, 0);
        assert_eq!(a.dl_period(), 5 * MS);
        assert_eq!(a.dl_bw(), a.dl_density());
        assert_eq!(DlAttr::new(2 * MS, 5 * MS, 10 * MS).dl_bw(), 209_715);
        assert_eq!(DlAttr::new(2 * MS, 5 * MS, 10 * MS).dl_density(), 419_430);
    }
}
