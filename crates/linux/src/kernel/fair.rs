//! A best-effort task (`class: fair`) under `kernel:linux`: its thread, SCHED_OTHER at its
//! nice, uses the CPU as its behaviour says, from the run's time base to the end of its
//! duration — a hog spins throughout (`stress --cpu`), a sleeper runs `run` of CPU time and
//! then sleeps `sleep` — and reports the CPU time it got, as the simulator's fair class does
//! (`fair.<task>.cpu_ns`, `.share` of the duration, `.bursts`; docs/taskset-format.md
//! "Best-effort tasks"). A bursty task is refused by the plan (its draws are the simulator's
//! alone).

use super::thread::Ctx;
use crate::signal::{interrupted, INTERRUPTED};
use crate::sys;
use rtsched_model::task::{Behaviour, FOREVER};
use rtsched_model::{Class, Task, Time};
use std::sync::atomic::Ordering;

/// What a best-effort task's thread got: its CPU time and its bursts begun.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FairUse {
    pub(super) cpu_ns: Time,
    pub(super) bursts: u64,
}

/// Run best-effort `task` until `duration` after `ctx.base` (or a stop).
pub(super) fn run_fair(ctx: &Ctx, task: &Task, duration: Time) -> FairUse {
    let (run, sleep) = match &task.class {
        Class::Fair(f) => match f.behaviour {
            Behaviour::Sleeper { run, sleep } => (run, sleep),
            _ => (FOREVER, 0),
        },
        Class::Rt => (FOREVER, 0),
    };
    let end = ctx.base + duration;
    let stop = || sys::mono_ns() >= end || interrupted() || ctx.failed.load(Ordering::Relaxed);
    sys::sleep_until(ctx.base, &INTERRUPTED);
    let cpu0 = sys::thread_cpu_ns();
    let mut bursts = 0;
    'run: while !stop() {
        bursts += 1;
        let from = sys::thread_cpu_ns();
        while sys::thread_cpu_ns() - from < run {
            if stop() {
                break 'run;
            }
        }
        sys::sleep_until((sys::mono_ns() + sleep).min(end), &INTERRUPTED);
    }
    FairUse {
        cpu_ns: sys::thread_cpu_ns() - cpu0,
        bursts,
    }
}

/// The simulator's fair-class measurements for each best-effort task's use.
pub(super) fn report(
    name: &str,
    u: FairUse,
    duration: Time,
    m: &mut std::collections::BTreeMap<String, f64>,
) {
    m.insert(format!("fair.{name}.cpu_ns"), u.cpu_ns as f64);
    m.insert(
        format!("fair.{name}.share"),
        u.cpu_ns as f64 / duration.max(1) as f64,
    );
    m.insert(format!("fair.{name}.bursts"), u.bursts as f64);
}
