//! `ros2-tree`: random event chains shaped like a ROS 2 application's callbacks (docs/chains.md
//! "Generators"). The model is that of Casini, Blaß, Lütkebohle & Brandenburg ("Response-time
//! analysis of ROS 2 processing chains under reservation-based scheduling", ECRTS 2019, §2): a
//! *timer* callback is released periodically; a *subscriber* callback is released when a
//! message it subscribes to arrives, i.e. when the callback that publishes it finishes; a
//! processing chain runs from a timer through the subscribers its messages wake. In rtsched's
//! words (docs/chains.md) a timer is a periodic task and a subscriber `trigger: PUBLISHER`; a
//! callback that waits for two topics (a message filter's synchroniser) is `trigger: {all:
//! [A, B]}`.
//!
//! **The shape, drawn (the parameters are this generator's, not a paper's).**
//! 1. `timers` roots, each with a period from `period`/`tmin`/`tmax` (log-uniform in
//!    [10, 100] ms by default, as the generic generators).
//! 2. Callbacks `timers..n` one at a time: with probability `p_join` (and when two callbacks
//!    can still take a subscriber) a join of two distinct earlier callbacks; otherwise a
//!    subscriber of one. Each publisher is drawn uniformly among the earlier callbacks with
//!    fewer than `fanout` subscribers (a random recursive tree with bounded fan-out). A new
//!    callback can always take a subscriber (fanout ≥ 1), so one always can and every callback
//!    finds a publisher. Triggers point to earlier callbacks only: the graph is acyclic by
//!    construction.
//! 3. A subscriber's period is the model's (docs/chains.md): the longest of its triggers'.
//!    Its deadline is that period (implicit), relative to its release.
//! 4. Utilisations: RandFixedSum over all n callbacks, Σu = U exactly, each in [u_min, u_max]
//!    (u_max ≤ 1: callbacks are sequential); C = round(u·T) of the callback's period, so the
//!    set's Σ C/T is U within the integer-ns rounding of every generator (`gen/mod.rs`).
//! 5. Chains: one event chain per leaf (a callback nobody subscribes to), from its timer down
//!    the first trigger of each callback on the way: `leaf_<name>`.

use super::{granularity_param, period_param, randfixedsum, tasks_param, wcet_of, Generated};
use super::{Params, SEQUENTIAL_MAX_U};
use rand::Rng;
use rtsched_model::{Chain, Task, TaskId, TaskSet, Time, Trigger};

/// The parameters `ros2-tree` reads.
pub const KEYS: &[&str] = &[
    "n",
    "m",
    "U",
    "u_min",
    "u_max",
    "timers",
    "fanout",
    "p_join",
    "period",
    "tmin",
    "tmax",
    "granularity",
];

/// Help text for `rtsched gen --list`.
pub const HELP: &str = "U (required); n=12 (callbacks, timers included; at most 2000), m=1, timers=2, fanout=3 (most subscribers of one callback), p_join=0 (probability a callback joins two topics: trigger {all: [A, B]}), u_min=0, u_max=1, period=loguniform|uniform|harmonic, tmin=10ms, tmax=100ms, granularity=1us";

/// The drawn graph: each callback's triggers (empty for a timer), in callback order.
pub fn draw_graph<R: Rng>(
    rng: &mut R,
    n: usize,
    timers: usize,
    fanout: usize,
    p_join: f64,
) -> Vec<Vec<usize>> {
    let mut triggers: Vec<Vec<usize>> = vec![Vec::new(); timers];
    let mut subscribers = vec![0usize; timers];
    // The callbacks with fewer than `fanout` subscribers (a full one leaves by swap_remove).
    let mut open: Vec<usize> = (0..timers).collect();
    for i in timers..n {
        // Every new callback is open (fanout ≥ 1), so a join of two open ones leaves one open.
        let join = open.len() >= 2 && rng.random::<f64>() < p_join;
        let mut at = vec![rng.random_range(0..open.len())];
        if join {
            let mut b = rng.random_range(0..open.len() - 1);
            if b >= at[0] {
                b += 1;
            }
            at.push(b);
        }
        let chosen: Vec<usize> = at.iter().map(|&k| open[k]).collect();
        // Remove the filled ones from the back so the other index stays valid.
        at.sort_unstable_by(|a, b| b.cmp(a));
        for k in at {
            subscribers[open[k]] += 1;
            if subscribers[open[k]] == fanout {
                open.swap_remove(k);
            }
        }
        triggers.push(chosen);
        subscribers.push(0);
        open.push(i);
    }
    triggers
}

/// `ros2-tree` with its parameters.
pub fn generate<R: Rng>(rng: &mut R, p: &Params) -> Result<Generated, String> {
    let n = tasks_param(p.uint_or("n", 12)?)?;
    let m = p.cpus_or("m", 1)?;
    let total = p.f64_req("U")?;
    let timers = p.uint_or("timers", 2)? as usize;
    let fanout = p.uint_or("fanout", 3)? as usize;
    let p_join = p.f64_or("p_join", 0.0)?;
    let (u_min, u_max) = (p.f64_or("u_min", 0.0)?, p.f64_or("u_max", 1.0)?);
    if timers == 0 || timers > n {
        return Err(format!(
            "parameter timers={timers}: between 1 and n={n} (a callback tree starts at a timer)"
        ));
    }
    if fanout == 0 {
        return Err("parameter fanout=0: a callback has at least one subscriber slot".into());
    }
    if !(0.0..=1.0).contains(&p_join) {
        return Err(format!(
            "parameter p_join={p_join}: a probability must be in [0, 1]"
        ));
    }
    if u_max > SEQUENTIAL_MAX_U {
        return Err(format!("parameter u_max={u_max}: a callback is sequential, its utilisation at most {SEQUENTIAL_MAX_U}"));
    }
    let periods = period_param(p)?;
    let g = granularity_param(p)?;
    if n > super::utilisation::MAX_RANDFIXEDSUM_TASKS {
        return Err(format!(
            "parameter n={n}: at most {} callbacks (their utilisations are drawn by RandFixedSum)",
            super::utilisation::MAX_RANDFIXEDSUM_TASKS
        ));
    }
    let triggers = draw_graph(rng, n, timers, fanout, p_join);
    let mut period: Vec<Time> = (0..timers).map(|_| periods.draw(rng, g)).collect();
    for t in &triggers[timers..] {
        period.push(t.iter().map(|&k| period[k]).max().expect("a trigger"));
    }
    let utils = randfixedsum(rng, n, total, u_min, u_max)?;
    let tasks = tasks_of(&triggers, &period, &utils);
    let chains = leaf_chains(&triggers, &tasks);
    let mut taskset = TaskSet::new(m, tasks);
    taskset.chains = chains;
    Ok(Generated {
        taskset,
        utilisations: utils,
        threads: None,
        utilities: None,
    })
}

/// The callbacks as tasks: `timer{i}` periodic, `cb{i}` triggered; D = T; C = round(u·T).
fn tasks_of(triggers: &[Vec<usize>], period: &[Time], utils: &[f64]) -> Vec<Task> {
    triggers
        .iter()
        .enumerate()
        .map(|(i, tr)| {
            let name = if tr.is_empty() {
                format!("timer{i}")
            } else {
                format!("cb{i}")
            };
            let mut t = Task::periodic(name, period[i], wcet_of(utils[i], period[i]));
            if !tr.is_empty() {
                t.trigger = Some(Trigger {
                    tasks: tr.iter().map(|&k| k as TaskId).collect(),
                    all: tr.len() > 1,
                });
            }
            t
        })
        .collect()
}

/// One event chain per leaf, from its timer along each callback's first trigger.
fn leaf_chains(triggers: &[Vec<usize>], tasks: &[Task]) -> Vec<Chain> {
    let mut has_subscriber = vec![false; triggers.len()];
    for t in triggers {
        for &k in t {
            has_subscriber[k] = true;
        }
    }
    (0..triggers.len())
        .filter(|&i| !has_subscriber[i] && !triggers[i].is_empty())
        .map(|leaf| {
            let mut path = vec![leaf as TaskId];
            let mut at = leaf;
            while let Some(&up) = triggers[at].first() {
                path.push(up as TaskId);
                at = up;
            }
            path.reverse();
            Chain {
                name: format!("leaf_{}", tasks[leaf].name),
                tasks: path,
                communication: None,
                deadline: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{by_name, rng};

    fn gen(params: &str, seed: u64) -> Result<Generated, String> {
        by_name("ros2-tree", &Params::parse(params).unwrap(), seed)
    }

    /// Hand-checked structure over many draws: triggers point backwards, no callback has more
    /// than `fanout` subscribers, joins have two distinct triggers, every non-timer has one.
    #[test]
    fn graphs_are_forests_with_bounded_fanout() {
        let mut r = rng(2);
        for (n, timers, fanout, p_join) in [
            (30, 3, 2, 0.3),
            (10, 1, 1, 0.0),
            (50, 2, 4, 0.9),
            (6, 6, 1, 0.5),
        ] {
            let g = draw_graph(&mut r, n, timers, fanout, p_join);
            assert_eq!(g.len(), n);
            let mut subs = vec![0; n];
            for (i, t) in g.iter().enumerate() {
                assert_eq!(t.is_empty(), i < timers);
                assert!(t.iter().all(|&k| k < i), "{i}: {t:?}");
                assert!(t.len() <= 2 && (t.len() < 2 || t[0] != t[1]));
                for &k in t {
                    subs[k] += 1;
                }
            }
            assert!(subs.iter().all(|&s| s <= fanout), "{subs:?}");
            if p_join == 0.0 {
                assert!(g.iter().all(|t| t.len() <= 1));
            }
        }
        // fanout=1 gives pipelines: one chain per timer that has a subscriber.
        let g = draw_graph(&mut r, 9, 3, 1, 0.0);
        let leaves = (0..9)
            .filter(|&i| !g.iter().any(|t| t.contains(&i)))
            .count();
        assert_eq!(leaves, 3);
    }

    /// A set by hand: 1 timer, fanout 1, 3 callbacks: timer0 → cb1 → cb2, one chain
    /// [timer0, cb1, cb2], every period the timer's, D = T, and Σ C/T = U.
    #[test]
    fn a_pipeline() {
        let g = gen("n=3,timers=1,fanout=1,U=0.6,tmin=10ms,tmax=10ms", 4).unwrap();
        let ts = &g.taskset;
        let names: Vec<&str> = ts.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["timer0", "cb1", "cb2"]);
        assert!(ts
            .tasks
            .iter()
            .all(|t| t.period == 10_000_000 && t.deadline == t.period));
        assert_eq!(ts.tasks[2].trigger.as_ref().unwrap().tasks, vec![1]);
        assert_eq!(ts.chains.len(), 1);
        assert_eq!(ts.chains[0].name, "leaf_cb2");
        assert_eq!(ts.chains[0].tasks, vec![0, 1, 2]);
        assert!((ts.utilization() - 0.6).abs() < 3.0 * 0.5 / 1e7);
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |p: &str| gen(p, 1).unwrap_err();
        assert!(err("n=4").contains("missing parameter U"));
        assert!(err("U=1,timers=0").contains("timers=0"));
        assert!(err("U=1,n=3,timers=4").contains("timers=4"));
        assert!(err("U=1,fanout=0").contains("fanout=0"));
        assert!(err("U=1,p_join=2").contains("p_join=2"));
        assert!(err("U=1,u_max=1.5").contains("u_max=1.5"));
        assert!(err("U=20,n=12").contains("U=20"));
        assert!(err("U=1,tmin=9ms,tmax=1ms").contains("tmin=9ms"));
        assert!(err("U=1,fan_out=2").contains("did you mean 'fanout'"));
        assert!(err("U=1,n=2001").contains("n=2001: at most 2000 callbacks"));
    }
}
