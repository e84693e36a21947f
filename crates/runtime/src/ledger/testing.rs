//! The ledger driven by hand, for tests: this crate's (ledger/tests.rs) and a driver's (the
//! testbed decider's, rtsched-linux's userspace/tests.rs, through the `testing` feature). A
//! substrate with nothing to carry out, and a ledger over a set written in YAML.

use super::{Ledger, Off, Substrate};
use crate::state::{CpuState, Ent};
use rtsched_model::results::JobRecord;
use rtsched_model::{TaskSet, Time};

/// A substrate with nothing to carry out: the test moves the ledger's time and completes its
/// entities itself.
pub struct Nop;

impl Substrate for Nop {
    fn off_cpu(&mut self, _: Time, _: u32, _: &mut CpuState, _: &mut Ent, _: Off) {}
    fn on_cpu(
        &mut self,
        _: Time,
        _: u32,
        _: &mut CpuState,
        _: &mut Ent,
        _: bool,
        _: bool,
        _: Time,
        _: Option<&mut JobRecord>,
    ) {
    }
    fn charged(
        &mut self,
        _: Time,
        _: u32,
        _: &mut CpuState,
        _: &mut Ent,
        _: Time,
        _: Time,
        _: Option<&mut JobRecord>,
    ) {
    }
}

/// The set `yaml` (called `file` in its messages) and a ledger that owns a copy of it under
/// `policy` (`start_at_dispatch` as [`Ledger::owned`]'s); panics on a bad set or policy.
pub fn hand_driven(
    yaml: &str,
    file: &str,
    policy: &str,
    start_at_dispatch: bool,
) -> (TaskSet, Ledger<'static>) {
    let ts = rtsched_model::parse_taskset(yaml, rtsched_model::Format::Yaml, file).unwrap();
    let policy = rtsched_policies::build(policy, &ts).unwrap();
    (ts.clone(), Ledger::owned(ts, policy, start_at_dispatch))
}
