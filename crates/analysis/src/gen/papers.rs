//! The task-set distributions of the papers rtsched reproduces (choices in docs/generators.md).
//!
//! - `paws2013`: PAWS §5 — u_i = u_min + x(u_max − u_min), T_i = T_min + x(T_max − T_min),
//!   tasks added until Σu falls in the window [U_min, U_max]; n_i threads per task from x·3m.
//! - `lelli2011`: gedf-heap §6.2 — N = 3m tasks, U = R·m split by RandFixedSum over (0, 1),
//!   periods log-uniform in [10, 100] ms.
//! - LWFG Table 1 (§4.1.2): multi-threaded tasks (MTTs) whose members share their whole
//!   working set; thread count, then period and utilisation (per MTT or per task), then WSS.
//! - `chronos2011`: ChronOS §6.2 — 12 periodic tasks, periods in [40 ms, 2 s], step TUFs with
//!   random utilities; CPUs by worst fit on load (for the partitioned schedulers in overload).

use super::utilisation::{check_bounds, randfixedsum, MAX_RANDFIXEDSUM_TASKS};
use super::{
    build, wcet_of, DeadlineDist, Generated, Params, PeriodDist, MAX_DRAWS, MAX_TASKS, MAX_THREADS,
    SEQUENTIAL_MAX_U,
};
use rand::Rng;
use rtsched_model::time::{NS_PER_MS, NS_PER_US};
use rtsched_model::{Region, Task, TaskSet, Time, Tuf};

fn cpus(m: u32) -> Result<u32, String> {
    if m < 1 {
        return Err("number of CPUs m=0 must be at least 1".into());
    }
    Ok(m)
}

/// PAWS §5. The window is a fraction of the platform (Σu/m) unless `absolute=1`.
pub fn paws2013<R: Rng>(rng: &mut R, p: &Params) -> Result<Generated, String> {
    let m = p.cpus_or("m", 2)?;
    let (u_lo, u_hi) = (p.f64_or("u_min", 0.1)?, p.f64_or("u_max", 0.4)?);
    check_bounds(1, u_lo, u_lo, u_hi)?;
    if u_hi > SEQUENTIAL_MAX_U {
        // A thread of a PAWS task runs on one CPU at a time, and its C is not capped at T: a
        // task of u > 1 would be written with C > T, which §5's tasks never have.
        return Err(format!("parameter u_max={u_hi}: PAWS §5's task utilisations are at most {SEQUENTIAL_MAX_U} (C <= T)"));
    }
    if u_lo <= 0.0 {
        return Err(format!(
            "u_min={u_lo} must be > 0 (tasks are added until the window is reached)"
        ));
    }
    let scale = if p.uint_or("absolute", 0)? == 1 {
        1.0
    } else {
        m as f64
    };
    let parallel = p.uint_or("parallel", 1)? == 1;
    // The four windows of PAWS §5 / Table 1; `window=k` picks one, U_min / U_max override.
    const WINDOWS: [(f64, f64); 4] = [(0.28, 0.30), (0.58, 0.60), (0.78, 0.80), (0.83, 0.85)];
    let k = p.uint_or("window", 1)? as usize;
    let (d_lo, d_hi) = *WINDOWS.get(k.wrapping_sub(1)).ok_or_else(|| {
        format!("window={k} must be 1, 2, 3 or 4 (PAWS §5: 28-30%, 58-60%, 78-80%, 83-85%)")
    })?;
    let (w_lo, w_hi) = (
        p.f64_or("U_min", d_lo)? * scale,
        p.f64_or("U_max", d_hi)? * scale,
    );
    if w_lo > w_hi {
        return Err(format!("window U_min={w_lo} exceeds U_max={w_hi}"));
    }
    if w_hi < u_lo {
        return Err(format!(
            "window U_max={w_hi} is below u_min={u_lo}: no task fits"
        ));
    }
    if w_hi > m as f64 {
        return Err(format!(
            "window U_max={w_hi} exceeds the platform's m = {m}"
        ));
    }
    let periods = PeriodDist::Uniform {
        min: p.duration_or("tmin", 100 * NS_PER_MS)?,
        max: p.duration_or("tmax", 150 * NS_PER_MS)?,
    };
    periods.check()?;
    // Rejection on the whole set: adding tasks until Σu ≥ U_min overshoots U_max in some draws;
    // those sets are thrown away rather than trimmed, so no task's u is biased.
    // Bounded: at most MAX_TASKS tasks in a set and MAX_DRAWS draws over all the tries.
    let mut utils = Vec::new();
    let mut draws = 0u64;
    for tries in 0..1_000_000u32 {
        utils.clear();
        let mut sum = 0.0;
        while sum < w_lo || utils.is_empty() {
            if utils.len() >= MAX_TASKS {
                return Err(format!("window U_min={w_lo} needs more than {MAX_TASKS} tasks of u >= {u_lo} (the limit of a generated set)"));
            }
            if draws >= MAX_DRAWS {
                return Err(format!("no task set with Σu in [{w_lo}, {w_hi}] found in {tries} tries ({MAX_DRAWS} draws); widen the window"));
            }
            let u = u_lo + rng.random::<f64>() * (u_hi - u_lo);
            utils.push(u);
            sum += u;
            draws += 1;
        }
        if sum <= w_hi {
            let ps: Vec<Time> = utils.iter().map(|_| periods.draw(rng, NS_PER_US)).collect();
            let mut tasks = build(rng, &utils, &ps, DeadlineDist::Implicit);
            // n_i = x·3m threads, x in (0, 1], so 1 ≤ n_i ≤ 3m.
            let threads: Vec<u32> = utils
                .iter()
                .map(|_| (rng.random::<f64>() * 3.0 * m as f64).floor() as u32 + 1)
                .collect();
            let all: u64 = threads.iter().map(|&n| n as u64).sum();
            if parallel && all > MAX_THREADS {
                return Err(format!("{} tasks of up to 3m = {} threads each: {all} threads in all, more than the limit of {MAX_THREADS} (use a smaller m, or parallel=0)", utils.len(), 3 * m as u64));
            }
            if parallel {
                for (t, &n) in tasks.iter_mut().zip(&threads) {
                    t.regions = paws_regions(rng, t.wcet, n);
                }
            }
            return Ok(Generated {
                taskset: TaskSet::new(m, tasks),
                utilisations: utils,
                threads: Some(threads),
                utilities: None,
            });
        }
    }
    Err(format!(
        "no task set with Σu in [{w_lo}, {w_hi}] found in 1000000 tries; widen the window"
    ))
}

/// PAWS §5's workload: "executes sequentially; splits into multiple parallel threads;
/// synchronizes and terminates them; resumes master thread execution", with the sequential,
/// parallel and per-thread times "derived randomly" and summing to C. We draw the three parts'
/// shares and the threads' shares of the parallel part uniformly ([`split`]): each sequential
/// part at least 1 ns, the parallel part at least 1 ns per thread, every thread at least 1 ns,
/// and the threads sum to C exactly (a task file's reader requires it). One thread: no regions.
fn paws_regions<R: Rng>(rng: &mut R, wcet: Time, n: u32) -> Vec<Region> {
    if n <= 1 || wcet < 3 * n as Time {
        return Vec::new();
    }
    let thirds = split(rng, wcet - n as Time - 2, 3);
    let (seq1, par, seq2) = (thirds[0] + 1, thirds[1] + n as Time, thirds[2] + 1);
    let mut threads = split(rng, par, n as usize);
    // A thread whose share floored to 0 gets 1 ns from the largest (par >= n: while one is 0,
    // another holds at least 2).
    while let Some(i) = threads.iter().position(|&t| t == 0) {
        let big = (0..threads.len()).max_by_key(|&j| (threads[j], std::cmp::Reverse(j)));
        let big = big.expect("n >= 2 threads");
        threads[big] -= 1;
        threads[i] = 1;
    }
    vec![
        Region {
            threads: vec![seq1],
        },
        Region { threads },
        Region {
            threads: vec![seq2],
        },
    ]
}

/// `total` ns in `k` parts by uniform random weights: each of the first k − 1 parts gets its
/// floored share, the last what is left, so the parts sum to `total` exactly.
fn split<R: Rng>(rng: &mut R, total: Time, k: usize) -> Vec<Time> {
    let w: Vec<f64> = (0..k).map(|_| 1.0 - rng.random::<f64>()).collect(); // (0, 1]
    let sum: f64 = w.iter().sum();
    let mut left = total;
    let mut parts: Vec<Time> = w[..k - 1]
        .iter()
        .map(|x| {
            let part = (((x / sum) * total as f64).floor() as Time).min(left);
            left -= part;
            part
        })
        .collect();
    parts.push(left);
    parts
}

/// gedf-heap §6.2: N = x·m tasks, U = R·m by RandFixedSum on (0, 1), T log-uniform 10–100 ms.
pub fn lelli2011<R: Rng>(rng: &mut R, m: u32, r: f64, x: u64) -> Result<Generated, String> {
    let m = cpus(m)?;
    if !(r > 0.0 && r <= 1.0) {
        return Err(format!("R={r} must be in (0, 1]"));
    }
    let n = x as u128 * m as u128;
    if n > MAX_RANDFIXEDSUM_TASKS as u128 {
        return Err(format!("x={x} and m={m} give N = x·m = {n} tasks; RandFixedSum draws at most {MAX_RANDFIXEDSUM_TASKS}"));
    }
    let n = n as usize;
    let utils = randfixedsum(rng, n, r * m as f64, 0.0, 1.0)?;
    let periods = PeriodDist::LogUniform {
        min: 10 * NS_PER_MS,
        max: 100 * NS_PER_MS,
    };
    let ps: Vec<Time> = utils.iter().map(|_| periods.draw(rng, NS_PER_US)).collect();
    let tasks = build(rng, &utils, &ps, DeadlineDist::Implicit);
    Ok(Generated {
        taskset: TaskSet::new(m, tasks),
        utilisations: utils,
        threads: None,
        utilities: None,
    })
}

/// Where `chronos2011` puts each task's `cpu` field (read by partitioned policies only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// No `cpu` fields.
    None,
    /// Worst fit, decreasing utilisation, on load alone: every task is placed (no admission
    /// test), on the CPU with the least utilisation so far (ties: the lowest CPU). Overloaded
    /// sets are partitioned too, as a partitioned scheduler in an overload experiment needs.
    WorstFitLoad,
}

/// [`Placement::WorstFitLoad`]: the CPU of each task of utilisation `utils[i]` on `m` CPUs,
/// decreasing utilisation (equal ones in task order: a total order, no float ties left), each
/// on the CPU with the least utilisation so far (ties: the lowest CPU).
pub fn worst_fit_load(utils: &[f64], m: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..utils.len()).collect();
    order.sort_by(|&a, &b| utils[b].total_cmp(&utils[a]).then(a.cmp(&b)));
    let mut load = vec![0.0f64; m.max(1) as usize];
    let mut cpu_of = vec![0u32; utils.len()];
    for i in order {
        let cpu = (0..load.len())
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[cpu] += utils[i];
        cpu_of[i] = cpu as u32;
    }
    cpu_of
}

/// ChronOS §6.2: n tasks (12), T log-uniform in [tmin, tmax] (40 ms, 2 s), u by RandFixedSum
/// on [0, 1] summing to `total` (the same law as UUniFast-Discard with u ≤ 1, without its
/// rejections, which at U = 8 of 12 keep one draw in 4000), D = T, and a step TUF per task
/// whose height (utility) is an integer uniform in [1, 100] and which ends at the deadline.
/// The utilities are also returned in `Generated::utilities`.
pub fn chronos2011<R: Rng>(
    rng: &mut R,
    m: u32,
    total: f64,
    n: usize,
    periods: PeriodDist,
    place: Placement,
) -> Result<Generated, String> {
    let m = cpus(m)?;
    periods.check()?;
    let utils = randfixedsum(rng, n, total, 0.0, 1.0)?;
    let ps: Vec<Time> = utils.iter().map(|_| periods.draw(rng, NS_PER_US)).collect();
    let mut tasks = build(rng, &utils, &ps, DeadlineDist::Implicit);
    let utilities: Vec<f64> = utils
        .iter()
        .map(|_| rng.random_range(1..=100u32) as f64)
        .collect();
    for (t, &v) in tasks.iter_mut().zip(&utilities) {
        t.tuf = Some(Tuf::Step {
            utility: v,
            termination: t.deadline,
        });
    }
    if place == Placement::WorstFitLoad {
        for (t, cpu) in tasks.iter_mut().zip(worst_fit_load(&utils, m)) {
            t.cpu = Some(cpu);
        }
    }
    Ok(Generated {
        taskset: TaskSet::new(m, tasks),
        utilisations: utils,
        threads: None,
        utilities: Some(utilities),
    })
}

/// How an MTT's working-set size is chosen (LWFG Table 1, last column).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WssRule {
    /// e/3 · 128 KiB with e the MTT's execution time in ms (MLU, MMU).
    FromExecution,
    /// Uniform whole KiB in [lo, hi].
    UniformKiB(u64, u64),
}

/// One row of LWFG Table 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mtt {
    pub name: &'static str,
    pub tasks_per_mtt: (u32, u32),
    pub util: (f64, f64),
    pub util_per_task: bool,
    /// Period bounds in ms.
    pub period_ms: (u64, u64),
    pub period_per_task: bool,
    pub wss: WssRule,
}

impl Mtt {
    pub const TABLE_1: [Mtt; 8] = [
        Mtt {
            name: "mlu",
            tasks_per_mtt: (1, 4),
            util: (0.01, 0.1),
            util_per_task: false,
            period_ms: (24, 240),
            period_per_task: false,
            wss: WssRule::FromExecution,
        },
        Mtt {
            name: "mmu",
            tasks_per_mtt: (1, 4),
            util: (0.1, 0.4),
            util_per_task: false,
            period_ms: (24, 240),
            period_per_task: false,
            wss: WssRule::FromExecution,
        },
        Mtt {
            name: "mwl",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: false,
            period_ms: (10, 250),
            period_per_task: false,
            wss: WssRule::UniformKiB(64, 512),
        },
        Mtt {
            name: "mwh",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: false,
            period_ms: (10, 250),
            period_per_task: false,
            wss: WssRule::UniformKiB(4096, 8192),
        },
        Mtt {
            name: "mwlp",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: true,
            period_ms: (10, 250),
            period_per_task: false,
            wss: WssRule::UniformKiB(64, 512),
        },
        Mtt {
            name: "mwhp",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: true,
            period_ms: (10, 250),
            period_per_task: false,
            wss: WssRule::UniformKiB(4096, 8192),
        },
        Mtt {
            name: "mwlu",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: false,
            period_ms: (10, 250),
            period_per_task: true,
            wss: WssRule::UniformKiB(64, 512),
        },
        Mtt {
            name: "mwhu",
            tasks_per_mtt: (1, 8),
            util: (0.1, 0.4),
            util_per_task: false,
            period_ms: (10, 250),
            period_per_task: true,
            wss: WssRule::UniformKiB(4096, 8192),
        },
    ];

    pub fn by_name(name: &str) -> Option<Mtt> {
        Self::TABLE_1.iter().find(|d| d.name == name).copied()
    }
}

/// LWFG §4.1.2: MTTs (memory-sharing groups) are drawn one after another; a task that would
/// push Σu past `cap` ends the set (so cap − u_max < Σu ≤ cap). Group g holds MTT g's tasks.
pub fn lwfg_mtt<R: Rng>(rng: &mut R, d: &Mtt, m: u32, cap: f64) -> Result<Generated, String> {
    let m = cpus(m)?;
    if !(cap.is_finite() && cap >= d.util.1) {
        return Err(format!(
            "utilisation cap U={cap} must be at least the largest task utilisation {} of {}",
            d.util.1, d.name
        ));
    }
    if cap > m as f64 {
        return Err(format!(
            "utilisation cap U={cap} exceeds the platform's m = {m}"
        ));
    }
    let period = PeriodDist::Uniform {
        min: d.period_ms.0 * NS_PER_MS,
        max: d.period_ms.1 * NS_PER_MS,
    };
    let draw_u = |rng: &mut R| d.util.0 + rng.random::<f64>() * (d.util.1 - d.util.0);
    let mut tasks: Vec<Task> = Vec::new();
    let mut utils = Vec::new();
    let mut sum = 0.0;
    'mtts: for g in 0u32.. {
        let threads = rng.random_range(d.tasks_per_mtt.0..=d.tasks_per_mtt.1);
        let (mtt_u, mtt_t) = (draw_u(rng), period.draw(rng, NS_PER_US));
        let wss = match d.wss {
            WssRule::FromExecution => {
                ((mtt_u * mtt_t as f64 / NS_PER_MS as f64) / 3.0 * 128.0 * 1024.0)
                    .round()
                    .max(1.0) as u64
            }
            WssRule::UniformKiB(lo, hi) => rng.random_range(lo..=hi) * 1024,
        };
        for _ in 0..threads {
            let u = if d.util_per_task { draw_u(rng) } else { mtt_u };
            let t = if d.period_per_task {
                period.draw(rng, NS_PER_US)
            } else {
                mtt_t
            };
            if sum + u > cap {
                break 'mtts;
            }
            if tasks.len() >= MAX_TASKS {
                return Err(format!("utilisation cap U={cap} needs more than {MAX_TASKS} tasks of {} (the limit of a generated set)", d.name));
            }
            sum += u;
            let mut task = Task::periodic(format!("t{}", tasks.len()), t, wcet_of(u, t));
            task.wss = Some(wss);
            task.group = Some(g);
            tasks.push(task);
            utils.push(u);
        }
    }
    Ok(Generated {
        taskset: TaskSet::new(m, tasks),
        utilisations: utils,
        threads: None,
        utilities: None,
    })
}

#[cfg(test)]
mod tests {
    use super::paws_regions;
    use crate::gen::rng;
    use rtsched_model::Time;

    /// The threads sum to C exactly and each runs at least 1 ns, down to the smallest C that
    /// has regions (3n): there, shares floor to 0 and a thread gets its 1 ns from the largest.
    /// (Raising each floored share to 1 ns and settling the difference on the last region, as
    /// before, wrote 208 ns of threads for a C of 207 at n = 9: a file its reader refuses.)
    #[test]
    fn paws_regions_sum_to_the_wcet() {
        let r = &mut rng(5);
        for n in 2u32..=16 {
            for wcet in 3 * n as Time..3 * n as Time + 300 {
                for _ in 0..20 {
                    let regions = paws_regions(r, wcet, n);
                    let threads: Vec<Time> = regions
                        .iter()
                        .flat_map(|x| x.threads.iter().copied())
                        .collect();
                    assert_eq!(threads.iter().sum::<Time>(), wcet, "n={n}: {regions:?}");
                    assert!(threads.iter().all(|&t| t >= 1), "n={n}: {regions:?}");
                    assert_eq!(regions[1].threads.len(), n as usize);
                }
            }
        }
    }
}
