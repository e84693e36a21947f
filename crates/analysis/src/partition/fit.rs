//! The classic bin-packing heuristics as LWFG §3.1 defines them, m bins of capacity one:
//!
//! - first fit: the first CPU (from CPU 0) that admits the task;
//! - next fit: the first CPU that admits it *starting with the CPU after the one that took the
//!   previous task*, wrapping round (no bin is ever closed, unlike textbook next fit);
//! - best fit: the admitting CPU with the smallest remaining capacity (highest density);
//! - worst fit: the admitting CPU with the largest remaining capacity (lowest density).
//!
//! Ties go to the lowest CPU index. Task orders (ties by file order): non-increasing
//! utilisation (FFD/WFD, [6,14] of LWFG), non-increasing density, non-decreasing relative
//! deadline (Baruah & Fisher [7]), non-increasing WSS (LWFG §3.2).
//!
//! Under blocking-aware admission (`sections.rs`) a task comes with the not yet placed tasks
//! it shares resources with, directly or through others (its *bundle*, as Lakshmanan, de Niz &
//! Rajkumar, RTSS 2009, §5, bundle the tasks of a resource), and the bundle is placed whole by
//! the same fit rule, as LWFG places a memory-sharing group; a bundle that fits on no CPU
//! fails the partition (it is not split: `pcp` and `srp` need every resource local). Under
//! a multiprocessor protocol's admission (`remote.rs`) such a bundle is split instead: the
//! task that brought it is placed alone and its mates go back to their own turns (as LWFG
//! drops a group member), so their resources may become global.

use super::{sections, Admission, Bins, Newcomers};
use crate::schedulability::Cdt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    First,
    Next,
    Best,
    Worst,
}

impl Fit {
    pub fn parse(s: &str) -> Option<Fit> {
        Some(match s {
            "first" => Fit::First,
            "next" => Fit::Next,
            "best" => Fit::Best,
            "worst" => Fit::Worst,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    DecreasingUtilisation,
    DecreasingDensity,
    IncreasingDeadline,
    DecreasingWss,
    /// File order.
    Given,
}

impl Order {
    pub fn parse(s: &str) -> Option<Order> {
        Some(match s {
            "util" => Order::DecreasingUtilisation,
            "density" => Order::DecreasingDensity,
            "deadline" => Order::IncreasingDeadline,
            "wss" => Order::DecreasingWss,
            "none" => Order::Given,
            _ => return None,
        })
    }

    /// Task indices in this order; a stable sort keeps file order among equals.
    pub fn sort(self, tasks: &[Cdt], wss: &[u64]) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..tasks.len()).collect();
        // Fractions compared by cross-multiplication, so equal utilisations tie exactly.
        let frac_desc = |a: (u64, u64), b: (u64, u64)| {
            (b.0 as u128 * a.1 as u128).cmp(&(a.0 as u128 * b.1 as u128))
        };
        match self {
            Order::DecreasingUtilisation => {
                idx.sort_by(|&a, &b| frac_desc((tasks[a].c, tasks[a].t), (tasks[b].c, tasks[b].t)))
            }
            Order::DecreasingDensity => idx.sort_by(|&a, &b| {
                frac_desc(
                    (tasks[a].c, tasks[a].d.min(tasks[a].t)),
                    (tasks[b].c, tasks[b].d.min(tasks[b].t)),
                )
            }),
            Order::IncreasingDeadline => idx.sort_by_key(|&i| tasks[i].d),
            Order::DecreasingWss => idx.sort_by(|&a, &b| wss[b].cmp(&wss[a])),
            Order::Given => {}
        }
        idx
    }
}

/// A task no CPU admits: its index and, under `Admission::Remote`, the test's words on the
/// last placement refused.
pub type Unplaced = (usize, Option<String>);

/// Place every task; `Err` names the first task that no CPU admits. With `overflow`, such a
/// task goes to the least utilised CPU instead (`Bins::overflow`) and placing goes on.
pub fn any_fit(
    tasks: &[Cdt],
    wss: &[u64],
    m: u32,
    adm: &Admission,
    fit: Fit,
    order: Order,
    overflow: bool,
) -> Result<(Vec<u32>, Vec<usize>), Unplaced> {
    let mut bins = Bins::new(tasks, m, adm);
    // `last` starts on the last CPU so that next fit's first scan begins at CPU 0.
    let mut last = bins.cpus() - 1;
    let order = order.sort(tasks, wss);
    // Bundles only under blocking-aware admission (otherwise each task alone, without the
    // quadratic scan); under a multiprocessor protocol's a bundle may be split (`remote.rs`).
    let (bundle, split) = match adm {
        Admission::Blocking(_, s) => (Some(s.bundles()), false),
        Admission::Remote(_, r) => (Some(sections::bundles(&r.tasks)), true),
        _ => (None, false),
    };
    let mut placed = vec![false; tasks.len()];
    let mut members: Vec<usize> = Vec::new();
    for &i in &order {
        if placed[i] {
            continue;
        }
        members.clear();
        match &bundle {
            Some(b) => members.extend(order.iter().filter(|&&j| b[j] == b[i] && !placed[j])),
            None => members.push(i),
        }
        for &j in &members {
            placed[j] = true;
        }
        let new = bins.newcomers(&members);
        if let Some(c) = choose(&mut bins, fit, last, &new) {
            bins.place(c, &new);
            last = c;
            continue;
        }
        // A bundle that fits whole nowhere, under a multiprocessor protocol's admission: the
        // task that brought it alone, its mates back to their own turns (`remote.rs`).
        let new = match split && members.len() > 1 {
            true => {
                for &j in &members[1..] {
                    placed[j] = false;
                }
                members.truncate(1);
                let new = bins.newcomers(&members);
                choose(&mut bins, fit, last, &new).map(|c| (c, new))
            }
            false => None,
        };
        let (c, new) = match new {
            Some(x) => x,
            None if overflow => {
                let new = bins.newcomers(&members);
                (bins.overflow(&new), new)
            }
            None => return Err((i, bins.refused.take())),
        };
        bins.place(c, &new);
        last = c;
    }
    Ok(bins.into_assignment())
}

/// The CPU `fit` chooses for `new` (`last`: the CPU of the previous placement, for next fit).
fn choose(bins: &mut Bins, fit: Fit, last: usize, new: &Newcomers) -> Option<usize> {
    let cpus = bins.cpus();
    match fit {
        Fit::First => (0..cpus).find(|&c| bins.admits(c, new)),
        Fit::Next => (1..=cpus)
            .map(|k| (last + k) % cpus)
            .find(|&c| bins.admits(c, new)),
        Fit::Best | Fit::Worst => {
            let mut best: Option<(usize, f64)> = None;
            for c in 0..cpus {
                let load = bins.load(c);
                let better = match best {
                    None => true,
                    Some((_, b)) => {
                        if fit == Fit::Best {
                            load > b
                        } else {
                            load < b
                        }
                    }
                };
                if better && bins.admits(c, new) {
                    best = Some((c, load));
                }
            }
            best.map(|(c, _)| c)
        }
    }
}
