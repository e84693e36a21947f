//! GRUB bandwidth reclaiming (`SCHED_FLAG_RECLAIM`) as Linux 6.18 charges it: `grub_reclaim`
//! in `kernel/sched/deadline.c`, the "GRUB-PA" form of Abeni, Lelli, Scordino & Palopoli
//! ("Greedy CPU reclaiming for SCHED_DEADLINE", RTLWS 2014), with the SMP correction of
//! Vineeth Pillai (Linux 6.6: the `max_bw` / `bw_ratio` terms).
//!
//! A reclaiming entity that runs for `dt` has its runtime decreased not by `dt` but by
//!
//! ```text
//! dq = -(max{u, Umax - Uinact - Uextra} / Umax) dt
//! ```
//!
//! with, all per run queue (CPU) and in 2^-20 fixed point:
//! - `u` = the entity's `dl_bw` (runtime / period);
//! - `Umax` = `max_bw` = sched_rt_runtime / sched_rt_period (0.95 by default), applied as
//!   `bw_ratio` = 1 / Umax with 8 fractional bits (269 by default);
//! - `Uinact` = `this_bw - running_bw`: the bandwidth of the deadline entities on this CPU
//!   (`this_bw`, blocked ones included) that are not active. `running_bw` counts the entities
//!   that are runnable or blocked but before their 0-lag time (`task_non_contending`: the
//!   "inactive timer" removes them at `deadline - runtime * period / dl_runtime`;
//!   [`super::Cbs::block`] returns that instant);
//! - `Uextra` = `extra_bw`: the bandwidth admission left unreserved, spread over the root
//!   domain's CPUs (`__dl_add` / `__dl_sub` take `dl_bw / cpus` from every CPU's
//!   `extra_bw`; [`super::RootDomain::extra_bw`]). The fair servers' 0.05 per CPU counts
//!   as reserved, and they are in `this_bw` too.
//!
//! The kernel compares `Uinact + Uextra > Umax - u` rather than subtracting, so the rate is `u`
//! whenever the difference would be below `u`. On one CPU, `Uextra = Umax - this_bw`, so the
//! rate reduces to `max{u, running_bw} / Umax`: a reclaiming task alone can run up to Umax of
//! the CPU (95 %), two active ones share it in proportion.
//!
//! Not modelled: the frequency and capacity scaling that non-reclaiming entities get
//! instead (`dl_scaled_delta_exec`'s `cap_scale(delta, freq)` and `cap_scale(delta, cpu)`):
//! this machine's CPUs are symmetric (capacity 1024) and the model runs at full frequency, so
//! both factors are 1024 and the charge is `delta`.

use super::bw::{BW_SHIFT, RATIO_SHIFT};
use super::constants::RtBandwidth;

/// One CPU's `struct dl_rq` bandwidths that `grub_reclaim` reads (2^-20 fixed point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrubRq {
    /// `this_bw`: Σ `dl_bw` of the deadline entities assigned to this CPU (fair server included).
    pub this_bw: u64,
    /// `running_bw`: Σ `dl_bw` of those that are active (contending, or before their 0-lag).
    pub running_bw: u64,
    /// `extra_bw`: the root domain's unreserved bandwidth per CPU.
    pub extra_bw: u64,
    /// `max_bw`: Umax.
    pub max_bw: u64,
    /// `bw_ratio`: 1 / Umax, 8 fractional bits.
    pub bw_ratio: u64,
}

impl GrubRq {
    /// An empty run queue under `rt` (`init_dl_rq` + `init_dl_rq_bw_ratio`): no entities,
    /// `extra_bw = max_bw`.
    pub fn new(rt: RtBandwidth) -> Self {
        GrubRq {
            this_bw: 0,
            running_bw: 0,
            extra_bw: rt.max_bw(),
            max_bw: rt.max_bw(),
            bw_ratio: rt.bw_ratio(),
        }
    }

    /// `u_act` of `grub_reclaim` after the `bw_ratio` scaling: the runtime charged per ns run,
    /// times 2^20, for an entity of bandwidth `dl_bw`.
    pub fn u_act(&self, dl_bw: u64) -> u64 {
        let u_inact = self.this_bw.wrapping_sub(self.running_bw);
        let u_act = if u_inact.wrapping_add(self.extra_bw) > self.max_bw.wrapping_sub(dl_bw) {
            dl_bw
        } else {
            self.max_bw - u_inact - self.extra_bw
        };
        u_act.wrapping_mul(self.bw_ratio) >> RATIO_SHIFT
    }

    /// `grub_reclaim(delta, rq, dl_se)`: the runtime charged for `delta` ns run by an entity of
    /// bandwidth `dl_bw`, `(delta * u_act) >> BW_SHIFT`.
    #[inline]
    pub fn reclaim(&self, delta: u64, dl_bw: u64) -> u64 {
        ((u128::from(delta) * u128::from(self.u_act(dl_bw))) >> BW_SHIFT) as u64
    }

    /// The least run time whose charge reaches `runtime` (> 0), or `None` when the rate is 0:
    /// the smallest `dt` with `(dt * u_act) >> BW_SHIFT >= runtime`.
    pub fn time_to_charge(&self, runtime: u64, dl_bw: u64) -> Option<u64> {
        let u = u128::from(self.u_act(dl_bw));
        (u > 0).then(|| ((u128::from(runtime) << BW_SHIFT).div_ceil(u)) as u64)
    }

    /// `__add_running_bw`: an entity becomes active (`task_contending`, a new entity's enqueue).
    pub fn add_running_bw(&mut self, dl_bw: u64) {
        self.running_bw += dl_bw;
        debug_assert!(self.running_bw <= self.this_bw, "running_bw above this_bw");
    }

    /// `__sub_running_bw`: an entity becomes inactive (blocked past its 0-lag time, or the
    /// inactive timer fired); clamped at 0 as the kernel clamps an underflow.
    pub fn sub_running_bw(&mut self, dl_bw: u64) {
        self.running_bw = self.running_bw.saturating_sub(dl_bw);
    }

    /// `__add_rq_bw`: an entity is assigned to this CPU.
    pub fn add_rq_bw(&mut self, dl_bw: u64) {
        self.this_bw += dl_bw;
    }

    /// `__sub_rq_bw`: an entity leaves this CPU (migration, exit, policy change).
    pub fn sub_rq_bw(&mut self, dl_bw: u64) {
        self.this_bw = self.this_bw.saturating_sub(dl_bw);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linux::bw::to_ratio;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// One CPU, default RT bandwidth, its fair server (52428) and two reclaiming tasks,
    /// A (2 ms / 10 ms: 209715) and B (3 ms / 10 ms: 314572), all admitted: extra_bw =
    /// 996147 - 52428 - 209715 - 314572 = 419432, this_bw = 576715.
    fn two_tasks() -> (GrubRq, u64, u64) {
        let (a, b, fair) = (to_ratio(10 * MS, 2 * MS), to_ratio(10 * MS, 3 * MS), 52_428);
        assert_eq!((a, b), (209_715, 314_572));
        let mut rq = GrubRq::new(RtBandwidth::DEFAULT);
        for bw in [fair, a, b] {
            rq.add_rq_bw(bw);
            rq.extra_bw -= bw;
        }
        assert_eq!((rq.this_bw, rq.extra_bw), (576_715, 419_432));
        (rq, a, b)
    }

    #[test]
    fn hand_worked_two_tasks() {
        let (mut rq, a, b) = two_tasks();
        // A alone active (B blocked past its 0-lag, fair server idle): Uinact = 367000,
        // Uinact + Uextra = 786432 = Umax - u exactly, not greater, so u_act = Umax - Uinact -
        // Uextra = 209715; * 269 >> 8 = 220364; 1 ms costs (1e6 * 220364) >> 20 = 210155 ns.
        rq.add_running_bw(a);
        assert_eq!(rq.u_act(a), 220_364);
        assert_eq!(rq.reclaim(MS, a), 210_155);
        // A's 2 ms budget lasts ceil((2e6 << 20) / 220364) = 9516764 ns: 95 % of the CPU (Umax).
        assert_eq!(rq.time_to_charge(2 * MS, a), Some(9_516_764));
        assert!(rq.reclaim(9_516_764, a) >= 2 * MS && rq.reclaim(9_516_763, a) < 2 * MS);
        // A and B active: Uinact = 52428 (the fair server), u_act = 524287 = running_bw;
        // * 269 >> 8 = 550910; 1 ms costs 525388 ns (about 0.5 / 0.95).
        rq.add_running_bw(b);
        assert_eq!(rq.u_act(a), 550_910);
        assert_eq!(rq.reclaim(MS, a), 525_388);
        assert_eq!(
            rq.reclaim(MS, b),
            525_388,
            "both are charged at the same rate"
        );
        // B blocked again: back to A alone.
        rq.sub_running_bw(b);
        assert_eq!(rq.reclaim(MS, a), 210_155);
    }

    #[test]
    fn without_spare_bandwidth_the_rate_is_the_tasks_own() {
        // A fully reserved CPU (extra_bw 0), everything active: u_act = Umax - 0 - 0, the
        // most a reclaiming task can be charged (0.95 * 269 / 256 of a ns per ns, just under 1).
        let mut rq = GrubRq::new(RtBandwidth::DEFAULT);
        rq.add_rq_bw(rq.max_bw);
        rq.add_running_bw(rq.max_bw);
        rq.extra_bw = 0;
        assert_eq!(rq.u_act(104_857), (996_147 * 269) >> 8);
        assert!(rq.reclaim(MS, 104_857) <= MS);
    }

    proptest! {
        /// For any consistent run queue, the charge lies between what the task's own
        /// bandwidth alone would give (the most it can reclaim is Umax - u) and delta itself.
        #[test]
        fn charge_between_own_rate_and_wall_time(
            bws in prop::collection::vec(1_000u64..199_000, 1..6),
            active in prop::collection::vec(any::<bool>(), 6),
            delta in 1u64..100_000_000,
        ) {
            let mut rq = GrubRq::new(RtBandwidth::DEFAULT);
            let total: u64 = bws.iter().sum();
            assert!(total <= rq.max_bw);
            rq.extra_bw = rq.max_bw - total;
            for (i, &bw) in bws.iter().enumerate() {
                rq.add_rq_bw(bw);
                if active[i] || i == 0 {
                    rq.add_running_bw(bw);
                }
            }
            let own_rate = u128::from((bws[0] * rq.bw_ratio) >> RATIO_SHIFT);
            let own = ((u128::from(delta) * own_rate) >> BW_SHIFT) as u64;
            let charged = rq.reclaim(delta, bws[0]);
            prop_assert!(charged >= own && charged <= delta, "{} not in [{}, {}]", charged, own, delta);
        }
    }
}
