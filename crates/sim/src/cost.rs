//! The cost-model seam: what a CPU's caches cost an entity when it is dispatched and how fast
//! its work progresses while it runs. The engine's event logic never computes a cost itself:
//! the constant overheads of `run.overheads` (decision, context switch, migration, release,
//! tick; docs/overheads.md) are charged by the engine, and the memory costs of the cache model
//! (docs/cache-model.md) plug in here.
//!
//! Without `run.cache` the model is [`NoCache`]: no stalls, work at rate 1 (one ns of CPU time
//! does one ns of work).

use rtsched_model::results::{CacheTotals, JobRecord};
use rtsched_model::Time;
use rtsched_policies::{EntityId, EntityInfo};

/// Memory costs of running entities on CPUs. Called on the hot path: keep implementations
/// free of allocation; `work` and `time_for` must be inverse to each other
/// (`work(time_for(w)) >= w`).
pub trait CostModel {
    /// `e` starts on `cpu` at `now` (`switched`: the CPU ran another entity last; `migrated`:
    /// `e` last ran on another CPU). Returns the stall it pays before its work resumes (the
    /// refill of its working set). `rec`: its job's record, read-only here.
    #[inline]
    fn dispatch(
        &mut self,
        _now: Time,
        _cpu: u32,
        _e: &EntityInfo,
        _switched: bool,
        _migrated: bool,
        _rec: Option<&JobRecord>,
    ) -> Time {
        0
    }
    /// After `dispatch`: add what this dispatch cost to the job's record (misses per level).
    #[inline]
    fn count(&mut self, _e: &EntityInfo, _rec: &mut JobRecord) {}
    /// `e` leaves `cpu` at `now`.
    #[inline]
    fn off_cpu(&mut self, _now: Time, _cpu: u32, _e: &EntityInfo) {}
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
    /// At the end of the run: the model's totals.
    fn finish(&mut self, _totals: &mut CacheTotals) {}
}

/// No cache model: no stalls, work at rate 1.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCache;

impl CostModel for NoCache {}
