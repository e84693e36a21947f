//! `opzone` — the decision logic of the operation-zone load balancer (opzone paper: Lim, Min,
//! Eom, "Load-Balancing for Improving User Responsiveness on Multicore Embedded Systems", §3).
//! Pure logic, no run queues: a fair policy with per-CPU run queues (the simulator's `cfs`, the
//! real balancer `python/rtsched/balance.py` through the binding) asks it *whether* to run its
//! load balance, *from which CPU to which* and *which task*, and does the moving itself.
//!
//! The rules (§3, §3.1, §3.2):
//! 1. **Check points** (§3, Fig 2). Balancing is considered only when the status of tasks can
//!    change: a task is created, an idle CPU's task wakes up, a running task belongs to the
//!    busiest scheduling group ([`Trigger`]). Never on a plain periodic tick.
//! 2. **Operation zone** (§3.1, Fig 3): the administrator's policy ([`OperationZone`]).
//!    *Cold* (§3.1.1): no balancing while the utilisation is in the cold zone, 0–30 %; balance
//!    once it exceeds it. *Hot* (§3.1.2): balance only in the hot zone, 80–100 %. *Warm*
//!    (§3.1.3): balance when the utilisation is higher than the chosen spot — low 30 %, mid
//!    50 %, high 80 % — as moved by the weight-based score (rule 3).
//! 3. **Weight-based score** (§3.1.3, Fig 5), warm policies only: a usage that stays high for
//!    longer than `balance_weight_{prize|punish}_time` (5 s) counts 5 points lower; a usage of
//!    the spot that lasts shorter counts 5 points higher; the score never leaves
//!    [low spot, high spot].
//! 4. **Utilisation** (§3.2): per CPU (default) or the average of all CPUs
//!    (`balance_cpus_avg_enable=1`), [`UtilMode`].
//! 5. **What moves** (§3.1.3, Fig 4): a task of the CPU with the highest utilisation goes to
//!    the CPU with the lowest ([`Balance`]). Which task: [`ZoneBalancer::choose`] — never one
//!    "lower than the CPU usage of the *warm zone* area" under a warm policy ([`TaskFloor`]),
//!    nothing from a CPU with one runnable task, nor (the guard) unless it has two more than
//!    the target; of the rest the heaviest, then the latest in virtual runtime. A task's usage
//!    is the caller's measure, by default its *demand* ([`TaskUsage`]).
//!
//! Units: utilisation in per-mille ([`Permille`], 1000 = 100 %, values above 1000 allowed for
//! an overloaded CPU); time in integer ns. [`ZoneBalancer::new`] allocates its per-unit state
//! once; `observe`, `check` and `zone` never allocate (they sit on the simulator's hot path).
//!
//! Use (a fair policy's balancer, e.g. for `cfs:balancer=opzone,zone=warm-high,prize_time=5s`):
//!
//! ```
//! use rtsched_policies::opzone::{Balance, Trigger, ZoneBalancer, ZoneConfig};
//! let options = [("balancer", "opzone"), ("zone", "warm-mid"), ("util", "average")];
//! let options: Vec<(String, String)> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
//! let mut zb = ZoneBalancer::new(ZoneConfig::from_options("cfs", &options)?, 4);
//! zb.observe(&[500, 850, 250, 550], 0); // at every utilisation sample, e.g. each tick
//! // At a check point (Fig 4: average 53.75% > mid spot 50%): a task of CPU1 goes to CPU2.
//! assert_eq!(zb.check(Trigger::TaskCreated, &[500, 850, 250, 550], 1_000_000), Some(Balance { from: 1, to: 2 }));
//! # Ok::<(), String>(())
//! ```
//!
//! ## Reading the paper
//!
//! §3 is short and in places ambiguous; each choice below names the sentence it reads.
//!
//! - **The score is the weighted spot.** "Although the score of task can increase or decrease,
//!   these tasks cannot exceed the maximum value, *high spot*, and go below the minimum value,
//!   *low spot*" and "The spot performs the role of controlling the CPU usage of tasks that can
//!   be changed according to weight score": the score lives in spot units and is bounded by
//!   the spots, so we keep it as the spot a unit's usage must exceed, starting at the
//!   configured spot. The paper states its ±5 on the *usage* ("-5 which means that CPU
//!   utilization is lower", "+5 elevates the load-balancing possibility"); counting a usage 5
//!   lower against a spot is the same as raising that spot by 5, so the signs here are the
//!   paper's, mirrored. This reading makes the three spots' bullets hold as written: from the
//!   high spot the score "cannot go up any more", from the low spot it "cannot go down any
//!   more", from the mid spot it moves both ways; and a warm policy always lies between the
//!   cold one (balance above 30 %) and the hot one (balance from 80 %), "the middle between".
//! - **Prize and punish.** The paper names both times in one sentence and never says which is
//!   which. Prize: a usage above the spot "more than five seconds" — the task "that utilizes
//!   CPU resources continually and actively", which the score supports "to use the existing CPU
//!   continually" — raises the weighted spot by `score_step` once per full `prize_time` the
//!   episode lasts (fewer migrations: it keeps its cache). Punish: an above-spot episode that
//!   ends "shorter than five seconds" lowers it by `score_step` when it ends.
//! - **"High usage" is measured against the configured spot**, not the weighted one, so an
//!   episode does not end just because the score moved; an episode is the time between the
//!   first observation above the spot and the first one at or below it (so its length is only
//!   as precise as the caller's sampling).
//! - **No decay.** The paper gives no rule that brings a score back to its spot when a CPU
//!   goes quiet; none is invented here. A raised score comes down only through punishes.
//! - **Units of the score.** The paper scores tasks; this module sees only CPU utilisations
//!   (the caller owns tasks), so a score belongs to a CPU in per-CPU mode and to the whole
//!   system in average mode: on per-CPU run queues a CPU's usage is its tasks' usage.
//! - **Boundaries.** "cold zone, 0~30%" and "performs the load-balancing only when the CPU
//!   utilization exceeds cold zone": 30 % itself is cold (balance iff u > 30 %). "hot zone,
//!   80~100%": 80 % itself is hot (balance iff u >= 80 %). "when the average usage of CPU is
//!   over 50%": a warm policy balances iff u > spot, strictly. Averages are compared exactly
//!   (sum against spot × CPUs), not rounded.
//! - **Per-CPU mode**: "kernel executes task migration depending on the usage ratio of each
//!   CPU" — balance when *any* CPU is over its bar; the source is the busiest such CPU. The
//!   system's zone is the zone of its busiest CPU (per-CPU) or of the average.
//! - **Nothing to move.** When the chosen source is not strictly busier than the least used
//!   CPU (one CPU, or all equal) there is no imbalance: no balance.
//! - **Tasks below the warm zone.** "In case of *high spot* and the *warm zone* policy, the
//!   load-balancer starts the operations when the average usage of CPU is over 80%. Tasks that
//!   are lower than the CPU usage of the *warm zone* area is not migrated into another CPU":
//!   a task's *own* usage (the CPU's is already judged by the zone check). The warm zone area
//!   starts at the low spot ("This spot has the lowest CPU usage in the *warm zone* policy"),
//!   so by default (`task_floor=warm-zone`) a task under `warm_spot_low` stays. The paragraph
//!   before says "If CPU usage of a task is higher than that of the configured spot [...],
//!   kernel performs load-balancing through task migration": `task_floor=spot` moves only a
//!   task above the configured (unweighted) spot; `task_floor=off` any task. Cold and hot
//!   policies have no warm zone to be under: any task.
//! - **A task's CPU usage is its demand.** The paper defines a CPU's usage, not a task's
//!   ("the CPU usage information [...] is calculated by the scheduling element of a task",
//!   which keeps both its time on a CPU and its time waiting). As time *running*, a task
//!   sharing a CPU hardly reaches the floor — a hog sharing a CPU with three others runs 25 %
//!   — yet the paper's warm-high runs under "heavy background stress" of more tasks than CPUs
//!   "while maintaining overall CPU utilization balanced". So by default (`task_usage=demand`)
//!   a task's usage is the share of the window it was *runnable*, running or waiting on a run
//!   queue: a hog demands ~100 % wherever it runs, a light periodic task its duty cycle.
//!   `task_usage=running`: time on a CPU only (the reading before). The caller measures it
//!   ([`Candidate::util`]): the simulator over its ticks, the real balancer from
//!   `/proc/<pid>/task/<tid>/schedstat`.
//! - **Default policy.** The paper states no default zone; the default here is warm-high, the
//!   configuration of its evaluation (§4.2, Fig 7).
//! - **Spots lie in the warm zone** (low ≥ cold threshold, high ≤ hot threshold, as the
//!   defaults 30/80 do): checked for warm policies only, where the spots are used.

mod balancer;
mod config;

pub use balancer::{Balance, Candidate, Trigger, ZoneBalancer};
pub use config::{OperationZone, TaskFloor, TaskUsage, UtilMode, Zone, ZoneConfig};

/// Utilisation (and thresholds, spots, score steps) in per-mille: 1000 = 100 %.
pub type Permille = u32;

#[cfg(test)]
mod tests;
