//! The cost-model seam: how the simulator charges overheads at dispatch and how fast work
//! progresses while an entity runs. The engine's event logic never computes a cost itself, so
//! a richer model (the cache model of the LWFG paper: a job's memory part costing more on a
//! cold or shared cache) plugs in here without touching it.
//!
//! Today's model is [`ConstantOverheads`]: the task set's constant context-switch and
//! migration costs (DESIGN.md "Simulator"; `run.overheads` in task files), paid before the
//! entity's own work resumes, and work at rate 1 (one ns of CPU time does one ns of work).

use rtsched_model::{TaskSet, Time};
use rtsched_policies::EntityId;

/// Costs of running entities on CPUs. Called on the hot path: keep implementations free of
/// allocation; `work` and `time_for` must be inverse to each other (`work(time_for(w)) >= w`).
pub trait CostModel {
    /// Overhead `e` pays when it starts on `cpu`: `switched` (the CPU ran another entity
    /// last) and `migrated` (`e` last ran on another CPU) say why.
    fn dispatch(&mut self, cpu: u32, e: EntityId, switched: bool, migrated: bool) -> Time;
    /// Work `e` does on `cpu` in `elapsed` ns of its own execution.
    #[inline]
    fn work(&self, _cpu: u32, _e: EntityId, elapsed: Time) -> Time {
        elapsed
    }
    /// CPU time `e` needs on `cpu` to do `work`.
    #[inline]
    fn time_for(&self, _cpu: u32, _e: EntityId, work: Time) -> Time {
        work
    }
}

/// Constant context-switch and migration costs, work at rate 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantOverheads {
    pub context_switch: Time,
    pub migration: Time,
}

impl ConstantOverheads {
    /// The overheads a task set's `run.overheads` names.
    pub fn of(ts: &TaskSet) -> Self {
        ConstantOverheads { context_switch: ts.run.overheads.context_switch, migration: ts.run.overheads.migration }
    }
}

impl CostModel for ConstantOverheads {
    #[inline]
    fn dispatch(&mut self, _cpu: u32, _e: EntityId, switched: bool, migrated: bool) -> Time {
        self.context_switch * switched as u64 + self.migration * migrated as u64
    }
}
