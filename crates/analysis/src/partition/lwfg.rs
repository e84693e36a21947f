//! LWFG — Largest WSS First, Grouping (LWFG paper §3.2, Algorithm 1).
//!
//! Tasks are taken in non-increasing WSS order, so each CPU receives one of the m largest
//! working sets before any receives a second (goal 1 of §3: spread the collective WSS).
//! With each task come the not yet partitioned tasks of its memory-sharing group, and the group
//! is placed whole by next fit (goal 2: memory sharers on one CPU, cache distance zero). When no
//! CPU admits the group, the member that shares the least memory with the first task is dropped
//! from the group (it stays in the task list and is placed later, in its own WSS turn) and the
//! smaller group is retried; a single task that fits nowhere fails the whole partition.
//!
//! Readings of Algorithm 1 (docs/generators.md, "Partitioning"):
//! - "for all cpu start after last" scans all m CPUs cyclically from last + 1; `last` starts
//!   at m − 1 so the first group goes to CPU 0 (the pseudocode's `last ← 0` would start at CPU 1:
//!   the same partition with CPUs relabelled). Without the wrap-around only the CPUs after
//!   `last` would be tried, and no set of more than m groups could be partitioned;
//! - the pseudocode's layout puts `break` after `end if` and `remove_least_shared` after the CPU
//!   loop with no guard; we read `break` inside the `if` and the removal as running only when
//!   the loop found no CPU, as the prose says (literally, a placed group would lose a member
//!   and a placed single task would "fail");
//! - tasks share their entire WSS (§2), so member j shares min(w_first, w_j) = w_j with the
//!   first task: the least sharer is the member with the smallest WSS, the later in WSS order
//!   on ties (in Table 1 every member of an MTT has the MTT's WSS, so every split is a tie); a
//!   task without `wss` counts as 0 bytes, without `group` as a group of its own;
//! - `capacity_left(cpu) ≥ density(group)` is the admission test (`Admission`): exact EDF by
//!   default, the paper's density sum with `Admission::Density` — the same for implicit deadlines.
//!
//! LWFG partitions far fewer Table 1 sets at high caps than FFD, WFD or BF. That is the
//! algorithm, not this reading: tests/lwfg_hand_worked.rs works a 7-task example by hand on
//! which every reading fails and every decreasing-order heuristic succeeds, and measures each
//! reading on the generated sets (next fit in WSS order spreads the load evenly, so a large
//! task late in WSS order finds no CPU with room; docs/papers/lwfg.md).

use super::{Admission, Bins, Order};
use crate::schedulability::Cdt;

/// CPU of each task, or `Err((i, why))`: task i alone (its group split down to it) fits on no
/// CPU beside the tasks placed before it (`why`: `Bins::refused`).
/// With `overflow`, a task that fits nowhere goes to the least utilised CPU (`Bins::overflow`)
/// and LWFG goes on (`last` moves there, as after any placement).
pub fn lwfg(
    tasks: &[Cdt],
    wss: &[u64],
    group: &[Option<u32>],
    m: u32,
    adm: &Admission,
    overflow: bool,
) -> Result<(Vec<u32>, Vec<usize>), super::fit::Unplaced> {
    let order = Order::DecreasingWss.sort(tasks, wss);
    let mut bins = Bins::new(tasks, m, adm);
    let cpus = bins.cpus();
    let mut placed = vec![false; tasks.len()];
    let mut last = cpus - 1;
    let mut members: Vec<usize> = Vec::new();
    for (pos, &task) in order.iter().enumerate() {
        if placed[task] {
            continue;
        }
        // get_memory_sharers: the task, then its unplaced group mates in WSS order.
        members.clear();
        members.push(task);
        if let Some(g) = group[task] {
            members.extend(
                order[pos + 1..]
                    .iter()
                    .copied()
                    .filter(|&j| !placed[j] && group[j] == Some(g)),
            );
        }
        loop {
            let new = bins.newcomers(&members);
            if let Some(c) = (1..=cpus)
                .map(|k| (last + k) % cpus)
                .find(|&c| bins.admits(c, &new))
            {
                bins.place(c, &new);
                for &j in &members {
                    placed[j] = true;
                }
                last = c;
                break;
            }
            if members.len() == 1 {
                if !overflow {
                    return Err((task, bins.refused.take()));
                }
                let c = bins.overflow(&new);
                bins.place(c, &new);
                placed[task] = true;
                last = c;
                break;
            }
            // remove_least_shared: smallest WSS; members are in WSS order, so the last one
            // with the minimum is the latest in that order.
            let min_w = members[1..].iter().map(|&j| wss[j]).min().expect("len > 1");
            let at = members
                .iter()
                .rposition(|&j| wss[j] == min_w)
                .expect("present");
            members.remove(at);
        }
    }
    Ok(bins.into_assignment())
}
