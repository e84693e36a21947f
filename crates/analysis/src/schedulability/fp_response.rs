//! The uniprocessor fixed-priority response-time recurrence, R = C_i + B_i + Σ_{j ∈ hp(i)}
//! ⌈R/T_j⌉·C_j to a fixed point (Joseph & Pandya 1986; Audsley et al. 1993), over every job of
//! the level-i busy period when D_i > T_i (Lehoczky 1990; Tindell). Tasks with equal priority
//! count as higher priority. Kept apart from `uniprocessor.rs` (the tests and their registry
//! entries) so that the protocols' analyses that run it (`fmlp.rs`) and the tests that call
//! them do not import each other.

use super::Cdt;
use rtsched_model::Time;

/// Iteration cap of the fixed-point loops; beyond it the answer is None (inconclusive).
const MAX_ITER: u32 = 1_000_000;

/// Worst-case response time of task `i` under preemptive FP, or None if it exceeds D_i
/// (or the busy period does not close within the iteration cap).
pub fn response_time(ts: &[Cdt], prio: &[u32], i: usize) -> Option<Time> {
    response_time_blocked(ts, prio, i, 0)
}

/// [`response_time`] with blocking term `b`: each job of the level-i busy period may first
/// wait `b` for lower-priority work (R = C_i + B_i + Σ ⌈R/T_j⌉·C_j).
pub fn response_time_blocked(ts: &[Cdt], prio: &[u32], i: usize, b: Time) -> Option<Time> {
    let me = ts[i];
    let hp: Vec<Cdt> = (0..ts.len())
        .filter(|&j| j != i && prio[j] >= prio[i])
        .map(|j| ts[j])
        .collect();
    let interference = |w: Time| -> u128 {
        hp.iter()
            .map(|x| w.div_ceil(x.t) as u128 * x.c as u128)
            .sum()
    };
    let mut worst: Time = 0;
    // Job q of the level-i busy period (q = 0 is the only one when D ≤ T and it meets D).
    for q in 0..MAX_ITER as u64 {
        let own = (q + 1) as u128 * me.c as u128 + b as u128;
        let mut w: u128 = own + hp.iter().map(|x| x.c as u128).sum::<u128>();
        let limit = me.d as u128 + q as u128 * me.t as u128;
        let mut iter = 0;
        loop {
            let next = own + interference(w.min(Time::MAX as u128) as Time);
            if next > limit {
                return None; // job q finishes after its deadline
            }
            if next == w {
                break;
            }
            w = next;
            iter += 1;
            if iter > MAX_ITER {
                return None;
            }
        }
        worst = worst.max((w - q as u128 * me.t as u128) as Time);
        if w <= (q + 1) as u128 * me.t as u128 {
            return Some(worst); // the busy period ends before the next release
        }
    }
    None
}
