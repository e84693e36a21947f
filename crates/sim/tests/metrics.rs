//! Run-level metrics of the results schema (docs/semantics.md "Priority inversions", "Work
//! stealing"): hand-worked cases with exact counts and times, a brute-force oracle over random
//! task sets under every policy, and the properties that hold by construction (global EDF has
//! no inversion; PAWS's attempts are its steals plus its failed steals).

mod common;

use common::{arb_structured_taskset, arb_taskset};
use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Observer, Options, View};

const MS: Time = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "metrics.yaml").unwrap()
}

/// Records, after every instant, whether an inversion holds as the ledger says and as a
/// brute-force look at every live entity says, and accumulates the oracle's onsets and time.
#[derive(Default)]
struct Oracle {
    /// (now, ledger says, oracle says) at each instant.
    states: Vec<(Time, bool, bool)>,
    onsets: u64,
    ns: Time,
    since: Option<Time>,
}

impl Oracle {
    /// The oracle's totals once the run ended at `end`.
    fn totals(&self, end: Time) -> (u64, Time) {
        (self.onsets, self.ns + self.since.map_or(0, |s| end - s))
    }
    /// Instants at which the ledger and the oracle disagree.
    fn disagreements(&self) -> Vec<(Time, bool, bool)> {
        self.states
            .iter()
            .copied()
            .filter(|&(_, a, b)| a != b)
            .collect()
    }
}

impl Observer for &mut Oracle {
    fn after_instant(&mut self, v: &View<'_>) {
        // Ready: live, not blocked, on no CPU. `live()` leaves blocked entities out.
        let mut min_ready = Time::MAX;
        let mut max_running = None;
        for (e, cpu) in v.live() {
            match cpu {
                None => min_ready = min_ready.min(e.deadline),
                Some(_) => max_running = max_running.max(Some(e.deadline)),
            }
        }
        let holds = max_running.is_some_and(|d| min_ready < d);
        match (holds, self.since) {
            (true, None) => {
                self.onsets += 1;
                self.since = Some(v.now);
            }
            (false, Some(s)) => {
                self.ns += v.now - s;
                self.since = None;
            }
            _ => {}
        }
        self.states.push((v.now, v.priority_inversion(), holds));
    }
}

fn observed(t: &TaskSet, spec: &str) -> (RunResult, Oracle) {
    try_observed(t, spec).expect("the policy accepts the task set")
}

/// As `observed`, or None if the policy refuses the task set (federated cannot place it).
fn try_observed(t: &TaskSet, spec: &str) -> Option<(RunResult, Oracle)> {
    let mut oracle = Oracle::default();
    let mut p = ProtocolChecker::new(rtsched_policies::build(spec, t).ok()?, t.platform.cpus);
    let r = simulate(t, Options::policy(&mut p).observer(&mut oracle))
        .unwrap()
        .result;
    Some((r, oracle))
}

/// The hand-worked partitioned case on 2 CPUs (ms; every task's period is 100, so each
/// releases once in the window [0, 50)):
///
/// | task | CPU | release | WCET | deadline (abs.) |
/// |---|---|---|---|---|
/// | a | 0 | 0 | 10 | 30 |
/// | s | 0 | 4 | 1 | 200 |
/// | b | 1 | 0 | 8 | 15 |
/// | c | 1 | 0 | 4 | 25 |
/// | f | 0 | 20 | 6 | 50 |
/// | g | 0 | 20 | 4 | 80 |
/// | d | 1 | 20 | 10 | 120 |
/// | p, q | 0 | 40 | 5 each | 60 |
/// | r | 1 | 40 | 10 | 60 |
///
/// - [0, 8): CPU 0 runs a (30), CPU 1 runs b (15); c (25) waits on CPU 1's queue: 25 < 30,
///   an inversion (a ready entity queued on another CPU counts). At 4, s (200) arrives on CPU
///   0: a decision, but the inversion persists — still one onset.
/// - At 8 b ends and c runs: nothing earlier waits (s: 200). a ends at 10, s runs [10, 11),
///   c ends at 12.
/// - [20, 26): CPU 0 runs f (50), CPU 1 runs d (120); g (80) waits on CPU 0: 80 < 120, the
///   second onset. At 26 g runs; f and g end by 30, d at 30.
/// - [40, 50): p (60) and r (60) run, q (60) waits: equal deadlines are no inversion.
///
/// So 2 inversions, 8 + 6 = 14 ms. Under global EDF on the same jobs: none.
const PEDF_CASE: &str = include_str!("../../../tests/data/pedf-inversions.yaml");

#[test]
fn partitioned_edf_inversions_worked_by_hand() {
    let t = ts(PEDF_CASE);
    let (r, oracle) = observed(&t, "pedf");
    assert_eq!(r.summaries().total.missed, 0);
    assert_eq!(
        (
            r.counters.priority_inversions,
            r.counters.priority_inversion_ns
        ),
        (2, 14 * MS)
    );
    // When it held: after the decisions at 0 and 4 (persisting) and 20; not at 8, 26, 40.
    let held: Vec<(Time, bool)> = oracle
        .states
        .iter()
        .map(|&(now, ledger, _)| (now / MS, ledger))
        .collect();
    for (at, want) in [
        (0, true),
        (4, true),
        (8, false),
        (10, false),
        (20, true),
        (26, false),
        (40, false),
    ] {
        assert!(held.contains(&(at, want)), "at {at} ms: {held:?}");
    }
    assert!(
        oracle.disagreements().is_empty(),
        "{:?}",
        oracle.disagreements()
    );
    assert_eq!(oracle.totals(r.end), (2, 14 * MS));
    // The same jobs under global EDF: the most urgent always run.
    let g = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!(
        (
            g.counters.priority_inversions,
            g.counters.priority_inversion_ns
        ),
        (0, 0)
    );
    // In the results document.
    let doc = r.to_json_value(false);
    assert_eq!(doc["counters"]["priority_inversions"], 2);
    assert_eq!(doc["counters"]["priority_inversion_ns"], 14 * MS);
    assert_eq!(doc["counters"]["steals"], 0);
}

/// An inversion still holding when the run ends counts until the end. On one CPU under fixed
/// priorities, h (priority 2, C = T = 10 ms) runs back to back and l (priority 1, deadline 5)
/// waits from 0 — an inversion, since every job of h has a later deadline — until the run
/// stops at its drain limit (10 + 2 × 1000 ms) with l unfinished.
#[test]
fn an_inversion_open_at_the_end_counts_until_the_end() {
    let t = ts("platform: {cpus: 1}
run: {duration: 10}
tasks:
  - {name: h, period: 10, wcet: 10, priority: 2}
  - {name: l, period: 1000, wcet: 1, deadline: 5, priority: 1}
");
    let (r, oracle) = observed(&t, "gfp:file");
    assert!(oracle.disagreements().is_empty());
    assert_eq!(r.end, 2010 * MS);
    assert!(r.jobs.iter().any(|j| j.task == 1 && j.finish.is_none()));
    assert_eq!(
        (
            r.counters.priority_inversions,
            r.counters.priority_inversion_ns
        ),
        (1, 2010 * MS)
    );
    assert_eq!(oracle.totals(r.end), (1, 2010 * MS));
}

/// PAWS §4's "controlled priority inversion" (docs/papers/paws.md): threads stay on the core
/// that forked them (Rule B) and only a free core steals (Rule E), so an urgent parallel job's
/// threads can wait while another core runs a less urgent job.
///
/// On 2 CPUs: l (sequential, 10 ms, deadline 80) and p (regions [1, [3, 3, 3]], deadline 30)
/// are released at 0. CPU 0 takes p's first region (deadline order), CPU 1 takes l. At 1 p forks
/// on CPU 0: CPU 0 takes thread 2 (the bottom of its deque), threads 0 and 1 (30) wait there
/// while CPU 1 runs l (80): an inversion. At 4 CPU 0 takes thread 1; thread 0 still waits. At 7
/// it takes thread 0: no inversion any more. Both CPUs are free at 10: each attempts a steal
/// and finds no victim. Global EDF would have preempted l at 1.
#[test]
fn paws_controlled_priority_inversion_and_failed_steals_worked_by_hand() {
    let t = ts("platform: {cpus: 2}
run: {duration: 20}
tasks:
  - {name: l, period: 100, wcet: 10, deadline: 80}
  - {name: p, period: 100, deadline: 30, regions: [1, [3, 3, 3]]}
");
    let (r, oracle) = observed(&t, "paws");
    assert!(
        oracle.disagreements().is_empty(),
        "{:?}",
        oracle.disagreements()
    );
    assert_eq!(r.summaries().total.missed, 0);
    assert_eq!(
        (
            r.counters.priority_inversions,
            r.counters.priority_inversion_ns
        ),
        (1, 6 * MS)
    );
    assert_eq!(
        (
            r.counters.steals,
            r.counters.steal_attempts,
            r.counters.failed_steals
        ),
        (0, 2, 2)
    );
    let g = simulate(&t, Options::spec("gedf")).unwrap().result;
    assert_eq!(g.counters.priority_inversions, 0);
}

/// The steal counters on the hand-worked case of crates/sim/tests/paws.rs (one job p, regions
/// [2, [4, 4, 4], 2] on 2 CPUs). Per decision:
/// - 0: CPU 0 takes p's first region from the global queue; CPU 1 attempts, no victim.
/// - 2: p forks on CPU 0, which takes thread 2; CPU 1 attempts and steals thread 0.
/// - 6: CPU 0 takes thread 1; CPU 1 attempts, no victim (CPU 0's deque is empty).
/// - 10: the last region goes to the global queue; CPU 0 takes it; CPU 1 attempts, fails.
/// - 12: p ends; both CPUs attempt and fail.
///
/// So 1 steal, 6 attempts, 5 failed; each free core counts once per decision although `fill`
/// visits it in every round.
#[test]
fn paws_steal_attempts_worked_by_hand() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n");
    let r = simulate(&t, Options::spec("paws")).unwrap().result;
    assert_eq!(
        (
            r.counters.steals,
            r.counters.steal_attempts,
            r.counters.failed_steals
        ),
        (1, 6, 5)
    );
    // The policy's own counters say the same.
    let stats = simulate(&t, Options::spec("paws").policy_stats(true))
        .unwrap()
        .stats;
    let get = |k: &str| stats.iter().find(|(n, _)| n == k).map(|&(_, v)| v as u64);
    assert_eq!(
        (get("steals"), get("steal_attempts"), get("failed_steals")),
        (Some(1), Some(6), Some(5))
    );
    let doc = r.to_json_value(false);
    assert_eq!(
        (
            doc["counters"]["steals"].as_u64(),
            doc["counters"]["steal_attempts"].as_u64(),
            doc["counters"]["failed_steals"].as_u64()
        ),
        (Some(1), Some(6), Some(5))
    );
    // No inversion: one job.
    assert_eq!(r.counters.priority_inversions, 0);
}

// ------------------------------------------------------------------------------------------
// Pulls (docs/semantics.md "Pull"; ChronOS §6.3, Fig. 7)
// ------------------------------------------------------------------------------------------

/// G-NP-EDF on 2 CPUs (ms): a pull is a CPU taking a thread from another CPU's run queue, which
/// a non-preemptive scheduler does although no job ever resumes elsewhere (migrations = 0):
///
/// | task | index, created on | release | WCET | deadline (abs.) | period |
/// |---|---|---|---|---|---|
/// | a | 0, CPU 0 | 0, 10 | 2 | 10, 20 | 10 |
/// | c | 1, CPU 1 | 1, 11 | 3 | 10, 20 | 10 |
/// | b | 2, CPU 0 | 0 | 4 | 20 | 20 |
///
/// - 0: a and b wake on CPU 0, where their threads were created; a takes CPU 0 [0,2] and b
///   CPU 1 [0,4]: b is pulled from CPU 0 (one pull, b#0).
/// - 1: c#0 wakes on CPU 1, busy (as is CPU 0): it waits there. 2: a ends on CPU 0, which
///   takes c#0 [2,5] from CPU 1's run queue: a pull (c#0). c#0 ends on CPU 0.
/// - 10: a#1 wakes on CPU 0 (where a#0 ended) and runs there [10,12]: no pull. 11: c#1 wakes
///   on CPU 0 (where c#0 ended), busy; CPU 1 is idle and takes it [11,14]: a pull (c#1).
///
/// Pulls: a 0, c 2, b 1 — 3 in all; migrations 0; `kernel_migrations` 1 (c#1 only: it has no
/// CPU for a task's first job). Fails if a first job sits nowhere (c#1's pull only); if a
/// woken job sits where its task's thread was created rather than where it last ran (c#1: no
/// pull); if a job woken on a busy CPU were placed on an idle one at wake-up (Linux's
/// `select_task_rq_rt`, not modelled: c#1 no pull).
#[test]
fn gnpedf_pulls_worked_by_hand() {
    let t = ts("platform: {cpus: 2}
run: {duration: 20}
tasks:
  - {name: a, period: 10, wcet: 2}
  - {name: c, period: 10, offset: 1, deadline: 9, wcet: 3}
  - {name: b, period: 20, wcet: 4}
");
    let r = simulate(&t, Options::spec("gnpedf").intervals(true))
        .unwrap()
        .result;
    let mut ivs: Vec<_> = r
        .intervals
        .iter()
        .map(|i| (i.start / MS, i.cpu, i.task, i.job, i.end / MS))
        .collect();
    ivs.sort();
    assert_eq!(
        ivs,
        vec![
            (0, 0, 0, 0, 2),
            (0, 1, 2, 0, 4),
            (2, 0, 1, 0, 5),
            (10, 0, 0, 1, 12),
            (11, 1, 1, 1, 14)
        ]
    );
    let pulls: Vec<_> = r.jobs.iter().map(|j| (j.task, j.job, j.pulls)).collect();
    assert_eq!(
        pulls,
        vec![
            (0, 0, Some(0)),
            (2, 0, Some(1)),
            (1, 0, Some(1)),
            (0, 1, Some(0)),
            (1, 1, Some(1))
        ]
    );
    let s = r.summaries();
    let per_task: Vec<_> = s.tasks.iter().map(|t| t.summary.pulls).collect();
    assert_eq!(per_task, vec![Some(0), Some(2), Some(1)]);
    assert_eq!((s.total.pulls, s.total.migrations), (Some(3), 0));
    assert_eq!(r.counters.kernel_migrations, 1);
    // In the document: per job, per task and in the total, beside migrations.
    let doc = r.to_json_value(true);
    assert_eq!(doc["total"]["pulls"], 3);
    assert_eq!(doc["tasks"][1]["pulls"], 2);
    assert_eq!(doc["jobs"][2]["pulls"], 1);
}

/// Where a file places a task (`cpu`), its thread is created there: P-EDF on its own CPUs
/// pulls nothing, a partitioned scheduler's threads never leaving their CPU's run queue.
#[test]
fn partitioned_edf_on_the_files_cpus_pulls_nothing() {
    let t = ts(PEDF_CASE);
    let r = simulate(&t, Options::spec("pedf")).unwrap().result;
    assert!(r.jobs.iter().all(|j| j.pulls == Some(0)));
    assert_eq!(r.summaries().total.pulls, Some(0));
}

/// Pulls seen from outside the ledger, for sequential tasks (one thread per job, jobs of a
/// task one after another): after every instant, each entity on a CPU that did not run it
/// after the previous instant was dispatched there, and is pulled if its task's thread sat
/// elsewhere — on the CPU of the task's last dispatch, or before its first where it was
/// created (its `cpu` field, which `arb_taskset` sets). An aborted job that never ran leaves
/// the task where it was; one that ran, where it last ran: the same rule. (The intervals
/// would not do: a dispatch at the run's last instant runs for no time and leaves none.)
struct PullOracle {
    sits: Vec<u32>,
    /// Per CPU, the (task, job) it ran after the previous instant.
    ran: Vec<Option<(u32, u64)>>,
    pulls: std::collections::BTreeMap<(u32, u64), u32>,
}

impl PullOracle {
    fn new(t: &TaskSet) -> Self {
        PullOracle {
            sits: t.tasks.iter().map(|x| x.cpu.unwrap()).collect(),
            ran: vec![None; t.platform.cpus as usize],
            pulls: Default::default(),
        }
    }
    /// Per counted job of `r`, (task, job, pulls).
    fn per_job(&self, r: &RunResult) -> Vec<(u32, u64, u32)> {
        r.jobs
            .iter()
            .map(|j| {
                (
                    j.task,
                    j.job,
                    self.pulls.get(&(j.task, j.job)).copied().unwrap_or(0),
                )
            })
            .collect()
    }
}

impl Observer for &mut PullOracle {
    fn after_instant(&mut self, v: &View<'_>) {
        let mut now_ran = vec![None; self.ran.len()];
        for (e, cpu) in v.live() {
            let Some(c) = cpu else { continue };
            now_ran[c as usize] = Some((e.task, e.job));
            if self.ran[c as usize] == Some((e.task, e.job)) {
                continue;
            }
            let at = &mut self.sits[e.task as usize];
            *self.pulls.entry((e.task, e.job)).or_default() += (*at != c) as u32;
            *at = c;
        }
        self.ran = now_ran;
    }
}

const POLICIES: [&str; 9] = [
    "gedf",
    "gfp:file",
    "gnpedf",
    "gfifo",
    "pedf",
    "pfp:file",
    "paws",
    "gedf-seq",
    "federated",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The ledger's inversion state after every instant is the brute-force one, and its
    /// totals are the oracle's, for every policy, with regions and critical sections
    /// (federated: the sets it can place).
    #[test]
    fn inversions_are_what_a_brute_force_oracle_sees(t in arb_structured_taskset(), which in 0usize..POLICIES.len()) {
        let spec = POLICIES[which];
        let Some((r, oracle)) = try_observed(&t, spec) else { return Ok(()) };
        prop_assert!(oracle.disagreements().is_empty(), "{}: {:?}", spec, oracle.disagreements());
        prop_assert_eq!((r.counters.priority_inversions, r.counters.priority_inversion_ns), oracle.totals(r.end), "{}", spec);
        prop_assert!(r.counters.priority_inversion_ns <= r.end);
    }

    /// Every job's pulls are what an observer sees after every instant (`PullOracle`), under
    /// every registered policy (with its defaults) on sequential sets, with aborts at
    /// deadlines and overruns; and a job resuming elsewhere (a migration) is always a pull.
    /// The utility-accrual policies abort on their own and then decide again within the
    /// instant: a dispatch undone there is never seen from outside, but is counted (as its
    /// preemption and migration are), so for them the observer sees at most the ledger's.
    #[test]
    fn pulls_are_what_an_observer_sees(t in arb_taskset(), which in 0usize..rtsched_policies::POLICIES.len()) {
        let spec = rtsched_policies::POLICIES[which].name;
        let Ok(p) = rtsched_policies::build(spec, &t) else { return Ok(()) };
        let redecides = p.uses_tufs() || p.resolves_deadlocks();
        let mut p = ProtocolChecker::new(p, t.platform.cpus);
        let mut oracle = PullOracle::new(&t);
        let r = simulate(&t, Options::policy(&mut p).observer(&mut oracle)).unwrap().result;
        let got: Vec<_> = r.jobs.iter().map(|j| (j.task, j.job, j.pulls.unwrap())).collect();
        let seen = oracle.per_job(&r);
        if redecides {
            for (g, s) in got.iter().zip(&seen) {
                prop_assert!(g.2 >= s.2, "{}: {:?} < {:?}", spec, g, s);
            }
        } else {
            prop_assert_eq!(got, seen, "{}", spec);
        }
        for j in &r.jobs {
            prop_assert!(j.pulls.unwrap() >= j.migrations, "{}: {:?}", spec, j);
        }
    }

    /// Global EDF runs the m most urgent ready entities at every instant: no inversion, ever.
    #[test]
    fn global_edf_has_no_inversions_on_sequential_sets(t in arb_taskset()) {
        let r = simulate(&t, Options::spec("gedf")).unwrap().result;
        prop_assert_eq!((r.counters.priority_inversions, r.counters.priority_inversion_ns), (0, 0));
    }

    /// PAWS: every attempt is a steal or a failed steal; policies that do not steal report 0.
    #[test]
    fn steal_attempts_are_steals_plus_failed_steals(t in arb_structured_taskset()) {
        let r = simulate(&t, Options::spec("paws")).unwrap().result;
        let c = &r.counters;
        prop_assert_eq!(c.steal_attempts, c.steals + c.failed_steals);
        let g = simulate(&t, Options::spec("gedf")).unwrap().result;
        prop_assert_eq!((g.counters.steals, g.counters.steal_attempts, g.counters.failed_steals), (0, 0, 0));
    }
}
