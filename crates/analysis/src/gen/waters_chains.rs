//! `waters2015-chains`: cause-effect (data-flow) chains on a WATERS 2015 automotive task set
//! (docs/chains.md "Generators"). The task set is `waters2015`'s (Kramer, Ziegenbein & Hamann,
//! "Real World Automotive Benchmarks For Free", WATERS 2015; `waters.rs`), with every one of
//! its parameters and its promise (Σ WCET/T in [U·(1 − tolerance), U]); the chains are drawn
//! on it as the evaluations that use those benchmarks draw them.
//!
//! **The law followed.** Dürr, von der Brüggen, Chen & Chen ("End-to-end timing analysis of
//! sporadic cause-effect chains in distributed systems", EMSOFT 2019, §7) and Günzel et al.
//! after them draw, per task set, 30 to 60 chains, each over 1, 2 or 3 *activation patterns*
//! (distinct periods of the set) with probabilities 0.7, 0.2, 0.1, and 2, 3, 4 or 5 tasks of
//! each activation pattern with probabilities 0.3, 0.4, 0.2, 0.1, no task twice, the chain's
//! tasks then in random order (their public evaluation code, `gen_ce_chains` of
//! tu-dortmund-ls12-rt/end-to-end, read for these numbers; they attribute them to the WATERS
//! 2015 paper's characterisation of effect chains, as Becker et al., JSA 2017, do for theirs).
//!
//! **Where a choice is taken here.**
//! 1. *Tasks.* Their chains are over runnable-level tasks (one task per runnable), so
//!    `tasks=runnable` is this generator's default; `tasks=period` (one task per period class)
//!    is taken too, but leaves few tasks per activation pattern.
//! 2. *A draw that does not fit the set* (more activation patterns than the set has with two
//!    tasks, more tasks than a pattern has): their code skips the chain, so a set gets fewer
//!    chains than drawn. Here the count (`k` or a pattern's size) is drawn again until it
//!    fits: the literature's law conditioned on the set, and always the number of chains asked.
//! 3. *An activation pattern* is a distinct (period, maximum inter-arrival) pair: the
//!    angle-synchronous tasks (sporadic) are one pattern, as each period class is.
//! 4. `chains=30..60` is inclusive (their `randint(30, 60)` excludes 60).
//! 5. `communication=implicit` (default) or `let`: every chain of the set communicates so
//!    (Dürr et al. evaluate implicit communication; LET is Becker et al.'s other model).

use super::dag::range;
use super::{waters, Generated, Params};
use rand::Rng;
use rtsched_model::{Chain, Communication, Task, TaskId, Time};

/// Probability weights (of 10) of a chain's number of activation patterns: 1, 2, 3.
pub const PATTERNS_WEIGHTS: [(usize, u32); 3] = [(1, 7), (2, 2), (3, 1)];
/// Probability weights (of 10) of the tasks drawn from one activation pattern: 2 to 5.
pub const TASKS_WEIGHTS: [(usize, u32); 4] = [(2, 3), (3, 4), (4, 2), (5, 1)];
/// The most a generated set's chains: each is a record stream in a run.
pub const MAX_CHAINS: u64 = 10_000;

/// The keys `waters2015-chains` reads: `waters2015`'s and its own.
pub fn keys() -> Vec<&'static str> {
    [waters::KEYS, &["chains", "communication"]].concat()
}

/// Help text for `rtsched gen --list`.
pub const HELP: &str = "waters2015's parameters (m=4, U=m/2, tolerance=0.01 or n; angle, rpm_min, rpm_max, cylinders) with tasks=runnable by default; chains=30..60 (a count or A..B, drawn per set), communication=implicit|let";

/// One value of `weights` (pairs of value and weight), drawn.
fn weighted<R: Rng>(rng: &mut R, weights: &[(usize, u32)]) -> usize {
    let total: u32 = weights.iter().map(|w| w.1).sum();
    let mut k = rng.random_range(0..total);
    for &(v, w) in weights {
        if k < w {
            return v;
        }
        k -= w;
    }
    unreachable!("k < total")
}

/// `k` distinct indices of 0..n, uniformly (a partial Fisher-Yates shuffle, written out so the
/// draws do not depend on a library's sampling algorithm), in the order drawn.
pub fn pick<R: Rng>(rng: &mut R, n: usize, k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    for i in 0..k.min(n) {
        let j = rng.random_range(i..n);
        idx.swap(i, j);
    }
    idx.truncate(k.min(n));
    idx
}

/// The set's activation patterns: the tasks of each distinct (period, maximum inter-arrival),
/// in order of period, each list in task order.
pub fn activation_patterns(tasks: &[Task]) -> Vec<Vec<TaskId>> {
    let mut keys: Vec<(Time, Option<Time>)> = tasks
        .iter()
        .map(|t| (t.period, t.max_interarrival))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.iter()
        .map(|&k| {
            (0..tasks.len() as TaskId)
                .filter(|&i| (tasks[i as usize].period, tasks[i as usize].max_interarrival) == k)
                .collect()
        })
        .collect()
}

/// One chain over `patterns` (only those with two tasks or more are drawn from): k patterns,
/// then each one's tasks, then the order (see the overview).
pub fn draw_chain<R: Rng>(rng: &mut R, patterns: &[Vec<TaskId>]) -> Vec<TaskId> {
    let eligible: Vec<&Vec<TaskId>> = patterns.iter().filter(|p| p.len() >= 2).collect();
    assert!(!eligible.is_empty(), "checked by the caller");
    let k = loop {
        let k = weighted(rng, &PATTERNS_WEIGHTS);
        if k <= eligible.len() {
            break k;
        }
    };
    let mut tasks: Vec<TaskId> = Vec::new();
    for e in pick(rng, eligible.len(), k) {
        let p = eligible[e];
        let s = loop {
            let s = weighted(rng, &TASKS_WEIGHTS);
            if s <= p.len() {
                break s;
            }
        };
        tasks.extend(pick(rng, p.len(), s).into_iter().map(|i| p[i]));
    }
    let n = tasks.len();
    pick(rng, n, n).into_iter().map(|i| tasks[i]).collect()
}

/// How many WATERS sets [`generate`] draws before it refuses one without two tasks of a period.
const REDRAWS: u32 = 100;

/// `waters2015-chains` with its parameters.
pub fn generate<R: Rng>(rng: &mut R, p: &Params) -> Result<Generated, String> {
    let (lo, hi) = match p.raw("chains") {
        None => (30, 60),
        Some(_) => range(p, "chains", 0)?,
    };
    if lo == 0 {
        return Err(
            "parameter chains: at least 1 chain (a set without chains is waters2015's)".into(),
        );
    }
    if hi > MAX_CHAINS {
        return Err(format!(
            "parameter chains={hi}: at most {MAX_CHAINS} chains"
        ));
    }
    let communication = match p.str_or("communication", "implicit") {
        "implicit" => Communication::Implicit,
        "let" | "LET" => Communication::Let,
        other => {
            return Err(format!(
                "parameter communication={other}: known: implicit (read at start, publish at finish), let (read at release, publish at deadline)"
            ))
        }
    };
    let mut set_params = p.clone();
    if p.raw("tasks").is_none() {
        set_params.items.push(("tasks".into(), "runnable".into()));
    }
    // A set in which no period has two tasks admits no chain: it is drawn again, from the same
    // seeded stream (the first draw, which nearly always has one, is unchanged), up to
    // REDRAWS times; a small U with few tasks can fail each time, and is then refused.
    let mut g = waters::waters2015(rng, &set_params)?;
    let mut patterns = activation_patterns(&g.taskset.tasks);
    for _ in 1..REDRAWS {
        if patterns.iter().any(|p| p.len() >= 2) {
            break;
        }
        g = waters::waters2015(rng, &set_params)?;
        patterns = activation_patterns(&g.taskset.tasks);
    }
    if patterns.iter().all(|p| p.len() < 2) {
        return Err(format!(
            "parameter U (or n): in {REDRAWS} draws, no period of the set's {} task(s) had two of them, so no chain of 2 tasks of one activation pattern can be drawn; raise U or n, or use tasks=runnable",
            g.taskset.tasks.len()
        ));
    }
    let count = rng.random_range(lo..=hi);
    g.taskset.chains = (0..count)
        .map(|i| Chain {
            name: format!("c{i}"),
            tasks: draw_chain(rng, &patterns),
            communication: Some(communication),
            deadline: None,
        })
        .collect();
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{by_name, rng};

    fn gen(params: &str, seed: u64) -> Result<Generated, String> {
        by_name("waters2015-chains", &Params::parse(params).unwrap(), seed)
    }

    /// 20,000 chains on a hand-made set of three patterns of 5 tasks: the number of patterns
    /// and the tasks per pattern follow the weights (each within 1 percentage point; the
    /// binomial σ is at most 0.35 points), no task twice, every task of a pattern equally likely.
    #[test]
    fn chains_follow_the_literatures_law() {
        let patterns: Vec<Vec<TaskId>> = (0..3).map(|p| (5 * p..5 * p + 5).collect()).collect();
        let mut r = rng(53);
        let (mut ks, mut sizes) = ([0u32; 4], [0u32; 6]);
        let mut seen = [0u32; 15];
        let n = 20_000;
        for _ in 0..n {
            let c = draw_chain(&mut r, &patterns);
            let mut sorted = c.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), c.len(), "a task twice: {c:?}");
            let mut per = [0usize; 3];
            for &t in &c {
                per[t as usize / 5] += 1;
                seen[t as usize] += 1;
            }
            let used: Vec<usize> = per.into_iter().filter(|&x| x > 0).collect();
            ks[used.len()] += 1;
            for s in used {
                sizes[s] += 1;
            }
        }
        let share = |x: u32, of: u32| 100.0 * x as f64 / of as f64;
        for (k, w) in PATTERNS_WEIGHTS {
            assert!(
                (share(ks[k], n) - 10.0 * w as f64).abs() < 1.0,
                "k={k}: {ks:?}"
            );
        }
        let total: u32 = sizes.iter().sum();
        for (s, w) in TASKS_WEIGHTS {
            assert!(
                (share(sizes[s], total) - 10.0 * w as f64).abs() < 1.0,
                "s={s}: {sizes:?}"
            );
        }
        let (lo, hi) = (seen.iter().min().unwrap(), seen.iter().max().unwrap());
        assert!((*hi as f64) / (*lo as f64) < 1.1, "{seen:?}");
    }

    /// Conditioning: a pattern of 2 tasks only ever gives 2; one of a single task is never drawn.
    #[test]
    fn a_draw_is_conditioned_on_the_set() {
        let patterns = vec![vec![0], vec![1, 2]];
        let mut r = rng(1);
        for _ in 0..1000 {
            let mut c = draw_chain(&mut r, &patterns);
            c.sort_unstable();
            assert_eq!(c, vec![1, 2]);
        }
    }

    #[test]
    fn sets_carry_their_chains_and_keep_the_waters_window() {
        let g = gen("m=2,U=1,chains=5..8,communication=let", 3).unwrap();
        let ts = &g.taskset;
        assert!((5..=8).contains(&ts.chains.len()));
        let u = ts.utilization();
        assert!((0.99..=1.0 + 1e-9).contains(&u), "{u}");
        for c in &ts.chains {
            assert_eq!(c.communication, Some(Communication::Let));
            assert!((2..=15).contains(&c.tasks.len()), "{c:?}");
            let mut periods: Vec<Time> = c
                .tasks
                .iter()
                .map(|&i| ts.tasks[i as usize].period)
                .collect();
            periods.sort_unstable();
            periods.dedup();
            assert!((1..=3).contains(&periods.len()));
        }
        // Runnable-level tasks by default; the count is the default range's.
        assert!(ts.tasks.iter().all(|t| t.name.starts_with('r')));
        let d = gen("m=2,U=1", 3).unwrap();
        assert!((30..=60).contains(&d.taskset.chains.len()));
        assert_eq!(
            d.taskset.chains[0].communication,
            Some(Communication::Implicit)
        );
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |p: &str| gen(p, 1).unwrap_err();
        assert!(err("chains=0").contains("parameter chains"));
        assert!(err("chains=9..3").contains("chains=9..3"));
        assert!(err("chains=20000").contains("at most 10000"));
        assert!(err("communication=fifo").contains("communication=fifo"));
        assert!(err("n=1").contains("no period of the set's 1 task(s) had two"));
        assert!(err("U=1,n=5").contains("give n (runnables) or U"));
        assert!(err("chain=3").contains("(did you mean 'chains'?)"));
    }
}
