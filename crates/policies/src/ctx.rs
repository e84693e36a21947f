//! `ctx`: what a policy's constructor is handed besides its parsed spec — the task set and a
//! seeded generator.
//!
//! **Randomness.** A randomised policy (PAWS's victim choice) draws only from
//! [`BuildCtx::rng`], a ChaCha8 generator seeded with the run's seed (`ts.run.seed`) on its own
//! stream [`POLICY_STREAM`]: the same task set and seed give the same decisions in every
//! substrate, and the policy's draws neither repeat nor shift the simulator's per-task
//! streams (execution demands and arrival gaps, `crates/sim/src/exec.rs`).

use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rtsched_model::TaskSet;

/// The ChaCha8 stream of the policies' generator. The simulator seeds `ChaCha8Rng` with the
/// same run seed and draws task `t`'s demands from stream `2t` and its arrival gaps from
/// `2t + 1`; `u64::MAX` would be `2t + 1` only for `t = 2^63 - 1`, far beyond any task index
/// (`u32`), so no simulator stream ever equals it.
pub const POLICY_STREAM: u64 = u64::MAX;

/// The policies' generator for a run with seed `seed` (see [`POLICY_STREAM`]).
pub fn policy_rng(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(POLICY_STREAM);
    rng
}

/// What a policy is built from: the task set and the run's generator (see the module doc).
pub struct BuildCtx<'a> {
    pub ts: &'a TaskSet,
    rng: ChaCha8Rng,
}

impl<'a> BuildCtx<'a> {
    pub fn new(ts: &'a TaskSet) -> Self {
        BuildCtx { ts, rng: policy_rng(ts.run.seed) }
    }

    /// The number of CPUs of the platform.
    pub fn cpus(&self) -> u32 {
        self.ts.platform.cpus
    }

    /// The run's generator for policies. A policy that draws while it runs keeps its own
    /// copy (`ctx.rng().clone()`); draws made here at build time advance it for later users.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::RngCore;
    use rtsched_model::Task;

    fn draws(rng: &mut ChaCha8Rng) -> Vec<u64> {
        (0..8).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn same_seed_same_draws_and_apart_from_the_simulators_streams() {
        let mut ts = TaskSet::new(2, vec![Task::periodic("a", 10, 1)]);
        ts.run.seed = 42;
        let a = draws(BuildCtx::new(&ts).rng());
        assert_eq!(a, draws(BuildCtx::new(&ts).rng()), "same seed, same draws");
        assert_eq!(a, draws(&mut policy_rng(42)));
        ts.run.seed = 43;
        assert_ne!(a, draws(BuildCtx::new(&ts).rng()), "another seed, other draws");
        // The simulator's per-task streams (2·task, 2·task+1) of the same seed draw otherwise.
        for stream in 0..8 {
            let mut sim = ChaCha8Rng::seed_from_u64(42);
            sim.set_stream(stream);
            assert_ne!(a, draws(&mut sim), "stream {stream}");
        }
    }
}
