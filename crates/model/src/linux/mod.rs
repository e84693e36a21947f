//! What the model knows of Linux's SCHED_DEADLINE: a reservation as `sched_setattr(2)` takes
//! it and `__checkparam_dl`'s rule for it (`attr`), and the kernel's 2^-20 fixed point the
//! rule's bandwidths are computed in (`bw`). A task-set file's `policy: deadline` task is
//! checked with this rule when it is read; the `linux` scheduler and admission
//! (`rtsched_policies::linux`, which re-exports both modules) use the same.

pub mod attr;
pub mod bw;

pub use attr::{checkparam_dl, DlAttr, DlPeriodLimits, ParamError};
