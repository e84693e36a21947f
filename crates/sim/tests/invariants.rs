//! Property tests over thousands of random task sets: the invariants of the policy contract
//! (docs/architecture.md, docs/ledger.md) checked
//! after every scheduling instant, and exact work accounting after the run.

mod common;

use common::{arb_dag_taskset, arb_structured_taskset, arb_taskset};
use proptest::prelude::*;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_policies::EntityInfo;
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Observer, Options, View};
use std::collections::HashMap;
use std::ops::Range;

const US: Time = 1_000;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// Preemptive global job-level fixed priority: exactly the min(m, ready) most urgent run.
    GlobalPreemptive,
    /// Non-preemptive global: work-conserving only.
    GlobalNonPreemptive,
    /// Preemptive per-CPU.
    Partitioned,
    /// Preemptive global over one thread per job (its lowest-indexed unfinished one): a
    /// parallel job runs sequentially (`gedf-seq`).
    Sequential,
    /// Federated scheduling: each heavy task preemptive global on its own CPUs; the light
    /// tasks `Sequential` on the shared CPUs.
    Federated {
        dedicated: Vec<Option<Range<u32>>>,
        shared: Range<u32>,
    },
}

type KeyFn = Box<dyn Fn(&EntityInfo) -> (u64, u64, u32, u64, u32)>;

struct Checker {
    m: usize,
    kind: Kind,
    key: KeyFn,
    cpu_of_task: Vec<u32>,
    instants: u64,
    failure: Option<String>,
}

impl Checker {
    fn fail(&mut self, msg: String) {
        if self.failure.is_none() {
            self.failure = Some(msg);
        }
    }

    /// Global preemptive scheduling of `set` on `cpus`: the `cpus.len()` most urgent run
    /// (all of them if fewer), only on `cpus`, and the others wait.
    fn ranked(&mut self, now: Time, set: &[Placed], cpus: Range<u32>) {
        let mut keys: Vec<_> = set.iter().map(|(e, c)| ((self.key)(e), *c)).collect();
        keys.sort();
        for (i, (k, on)) in keys.into_iter().enumerate() {
            if on.is_some() != (i < cpus.len()) {
                self.fail(format!(
                    "t={now} CPUs {cpus:?}: rank {i} key {k:?} running={on:?}"
                ));
            }
            if on.is_some_and(|c| !cpus.contains(&c)) {
                self.fail(format!(
                    "t={now} key {k:?} runs on {on:?}, outside {cpus:?}"
                ));
            }
        }
    }
}

/// A live entity and the CPU running it.
type Placed = (EntityInfo, Option<u32>);

/// Split `live` into each job's lowest-indexed unfinished thread (live or blocked) when it is
/// live — the one a sequential policy may run — and the rest.
fn heads(v: &View<'_>, live: &[Placed]) -> (Vec<Placed>, Vec<Placed>) {
    let mut first: HashMap<(u32, u64), u32> = HashMap::new();
    for e in live.iter().map(|x| x.0).chain(v.blocked().map(|b| b.0)) {
        let t = first.entry((e.task, e.job)).or_insert(e.thread);
        *t = (*t).min(e.thread);
    }
    live.iter()
        .partition(|(e, _)| first[&(e.task, e.job)] == e.thread)
}

impl Observer for &mut Checker {
    fn after_instant(&mut self, v: &View<'_>) {
        self.instants += 1;
        // No CPU runs two entities (one slot per CPU) and no entity runs on two CPUs.
        let mut seen = HashMap::new();
        for (c, r) in v.running.iter().enumerate() {
            if let Some(e) = r {
                if let Some(other) = seen.insert(*e, c) {
                    self.fail(format!("t={} entity {e} on CPUs {other} and {c}", v.now));
                }
            }
        }
        let live: Vec<(EntityInfo, Option<u32>)> = v.live().collect();
        for (e, cpu) in &live {
            let on = v
                .running
                .iter()
                .position(|r| *r == Some(e.id))
                .map(|c| c as u32);
            if on != *cpu {
                self.fail(format!(
                    "t={} entity {} thinks it is on {cpu:?}, CPUs say {on:?}",
                    v.now, e.id
                ));
            }
        }
        // Resources: a holder is live; a blocked entity is queued, not running, and waits for
        // a resource that somebody holds (no lost wake-up).
        let holders: Vec<_> = v.holders().collect();
        for (r, h) in holders.iter().enumerate() {
            if let Some((e, live)) = h {
                if !live {
                    self.fail(format!(
                        "t={} resource {r} held by dead entity {}",
                        v.now, e.id
                    ));
                }
            }
        }
        for (e, r, queued, on_cpu) in v.blocked() {
            if !queued || on_cpu || holders[r as usize].is_none() {
                self.fail(format!(
                    "t={} entity {} blocked on {r}: queued={queued} on_cpu={on_cpu} holder={:?}",
                    v.now, e.id, holders[r as usize]
                ));
            }
        }
        let running = live.iter().filter(|(_, c)| c.is_some()).count();
        match self.kind.clone() {
            Kind::GlobalPreemptive | Kind::GlobalNonPreemptive => {
                // Work-conserving: no idle CPU while an entity waits.
                if running != live.len().min(self.m) {
                    self.fail(format!(
                        "t={} {} live, {} running on {} CPUs",
                        v.now,
                        live.len(),
                        running,
                        self.m
                    ));
                }
                if self.kind == Kind::GlobalPreemptive {
                    let mut keys: Vec<_> = live
                        .iter()
                        .map(|(e, c)| ((self.key)(e), c.is_some()))
                        .collect();
                    keys.sort();
                    for (i, (k, on)) in keys.iter().enumerate() {
                        if *on != (i < self.m) {
                            self.fail(format!("t={} rank {i} key {k:?} running={on}", v.now));
                        }
                    }
                }
            }
            Kind::Partitioned => {
                for c in 0..self.m as u32 {
                    let mut mine: Vec<_> = live
                        .iter()
                        .filter(|(e, _)| self.cpu_of_task[e.task as usize] == c)
                        .map(|(e, on)| ((self.key)(e), *on))
                        .collect();
                    mine.sort();
                    if let Some((_, on)) = mine.first() {
                        if *on != Some(c) {
                            self.fail(format!(
                                "t={} CPU {c}: most urgent of its tasks not running",
                                v.now
                            ));
                        }
                    }
                    if mine.iter().skip(1).any(|(_, on)| on.is_some()) {
                        self.fail(format!("t={} CPU {c}: a less urgent job runs", v.now));
                    }
                }
            }
            Kind::Sequential => {
                let (heads, rest) = heads(v, &live);
                self.ranked(v.now, &heads, 0..self.m as u32);
                if let Some((e, c)) = rest.iter().find(|(_, c)| c.is_some()) {
                    self.fail(format!(
                        "t={} thread {}.{} of job {}/{} runs on {c:?} before its sibling ends",
                        v.now, e.region, e.thread, e.task, e.job
                    ));
                }
            }
            Kind::Federated { dedicated, shared } => {
                for (task, cpus) in dedicated.iter().enumerate() {
                    if let Some(cpus) = cpus {
                        let mine: Vec<_> = live
                            .iter()
                            .filter(|(e, _)| e.task as usize == task)
                            .copied()
                            .collect();
                        self.ranked(v.now, &mine, cpus.clone());
                    }
                }
                let light: Vec<_> = live
                    .iter()
                    .filter(|(e, _)| dedicated[e.task as usize].is_none())
                    .copied()
                    .collect();
                let (heads, rest) = heads(v, &light);
                self.ranked(v.now, &heads, shared);
                if let Some((e, c)) = rest.iter().find(|(_, c)| c.is_some()) {
                    self.fail(format!("t={} light thread {}.{} of job {}/{} runs on {c:?} before its sibling ends", v.now, e.region, e.thread, e.task, e.job));
                }
            }
        }
    }
}

/// gedf that hands a freed resource to its most urgent waiter (EDF order) instead of the
/// longest one, and sets a timer 1 ms after each instant with a release (exercises grants,
/// `pending_grants`, timers and the FIFO-free path of the ledger under every structure).
/// With `charge`, it also charges CPU 0 that much at each such instant.
struct Granting {
    inner: Box<dyn rtsched_policies::Policy>,
    charge: Time,
    charges: u64,
    timers_set: u64,
    timers_fired: u64,
}

impl rtsched_policies::Policy for Granting {
    fn name(&self) -> String {
        "granting-gedf".into()
    }
    fn release(&mut self, now: Time, e: &EntityInfo) {
        self.inner.release(now, e)
    }
    fn complete(&mut self, now: Time, e: rtsched_policies::EntityId, cpu: u32) {
        self.inner.complete(now, e, cpu)
    }
    fn aborted(&mut self, now: Time, e: rtsched_policies::EntityId) {
        self.inner.aborted(now, e)
    }
    fn blocked(&mut self, now: Time, e: rtsched_policies::EntityId, cpu: u32) {
        self.inner.blocked(now, e, cpu)
    }
    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        self.inner.unblocked(now, e)
    }
    fn grants_resources(&self) -> bool {
        true
    }
    fn timer(&mut self, _now: Time) {
        self.timers_fired += 1;
    }
    fn schedule(&mut self, now: Time, d: &mut rtsched_policies::Dispatch<'_>) {
        let run = d.run();
        let pending: Vec<u32> = d.pending_grants().to_vec();
        for r in pending {
            let key = |w: &u32| {
                let i = run.entity(*w).expect("a waiter is live");
                (i.deadline, i.release, i.task, i.job, i.thread)
            };
            let w = run
                .waiters(r)
                .into_iter()
                .min_by_key(key)
                .expect("a pending resource has waiters");
            let info = run.entity(w).unwrap();
            d.grant(r, w);
            self.inner.unblocked(now, &info);
        }
        if d.global_event() {
            d.wake_at(now + 1_000_000);
            self.timers_set += 1;
            if self.charge > 0 {
                d.charge(0, self.charge);
                self.charges += 1;
            }
        }
        self.inner.schedule(now, d);
    }
}

fn check(ts: &TaskSet, spec: &str) -> Result<(), TestCaseError> {
    let m = ts.platform.cpus as usize;
    let prio: Vec<u32> = ts.tasks.iter().map(|t| t.priority.unwrap()).collect();
    let edf: KeyFn = Box::new(|e| (e.deadline, e.release, e.task, e.job, e.thread));
    let fp: KeyFn = Box::new(move |e| {
        (
            (u32::MAX - prio[e.task as usize]) as u64,
            e.release,
            e.task,
            e.job,
            e.thread,
        )
    });
    let (kind, key) = match spec {
        "gedf" | "granting" => (Kind::GlobalPreemptive, edf),
        "gfp:file" => (Kind::GlobalPreemptive, fp),
        // PAWS lets parallel threads run before more urgent jobs (Rules C, D), but no core
        // idles while anything waits: work-conserving.
        "gnpedf" | "gfifo" => (Kind::GlobalNonPreemptive, edf),
        s if s == "paws" || s.starts_with("paws:") => (Kind::GlobalNonPreemptive, edf),
        "pedf" => (Kind::Partitioned, edf),
        "pfp:file" => (Kind::Partitioned, fp),
        "gedf-seq" => (Kind::Sequential, edf),
        // A set federated cannot place is refused at build: nothing to run.
        "federated" => match rtsched_policies::federated::place(ts) {
            Ok(p) => (
                Kind::Federated {
                    dedicated: p.dedicated,
                    shared: p.shared,
                },
                edf,
            ),
            Err(_) => return Ok(()),
        },
        _ => unreachable!(),
    };
    let mut checker = Checker {
        m,
        kind,
        key,
        cpu_of_task: ts.tasks.iter().map(|t| t.cpu.unwrap()).collect(),
        instants: 0,
        failure: None,
    };
    // Every policy runs under the protocol checker too (it panics on a violation).
    let inner: Box<dyn rtsched_policies::Policy> = match spec {
        "granting" => Box::new(Granting {
            inner: rtsched_policies::build("gedf", ts).unwrap(),
            charge: 0,
            charges: 0,
            timers_set: 0,
            timers_fired: 0,
        }),
        _ => rtsched_policies::build(spec, ts).unwrap(),
    };
    let mut policy = ProtocolChecker::new(inner, m as u32);
    let r = simulate(
        ts,
        Options::policy(&mut policy)
            .observer(&mut checker)
            .intervals(true),
    )
    .unwrap()
    .result;
    if let Some(f) = checker.failure {
        return Err(TestCaseError::fail(format!("{spec}: {f}")));
    }
    prop_assert!(checker.instants > 0);
    accounting(ts, spec, &r)
}

/// What holds of every run, whatever the policy: each finished job received exactly its
/// demand and nothing ran for an aborted one past its abort; misses, aborts and utility agree
/// (a job accrues at most its possible utility, an aborted or unfinished one nothing); no CPU
/// runs two things at once.
fn accounting(
    ts: &TaskSet,
    spec: &str,
    r: &rtsched_model::results::RunResult,
) -> Result<(), TestCaseError> {
    let m = ts.platform.cpus as usize;
    // Each finished job received exactly its execution demand; nothing else ran for it but
    // what the policy charged (cfs's balancing costs), paid by what runs.
    let charged = r.counters.overheads.policy_ns;
    let mut excess: Time = 0;
    let mut work: HashMap<(u32, u64), Time> = HashMap::new();
    for iv in &r.intervals {
        prop_assert!(iv.end > iv.start);
        *work.entry((iv.task, iv.job)).or_default() += iv.end - iv.start;
    }
    for j in &r.jobs {
        let got = work.get(&(j.task, j.job)).copied().unwrap_or(0);
        if let Some(finish) = j.finish {
            if charged == 0 {
                prop_assert_eq!(got, j.demand, "{} job {}/{}", spec, j.task, j.job);
            }
            prop_assert!(got >= j.demand, "{} job {}/{}", spec, j.task, j.job);
            excess += got - j.demand;
            prop_assert_eq!(j.missed, finish > j.deadline);
        } else {
            prop_assert!(got < j.demand + charged);
            prop_assert!(j.missed || j.deadline > r.end);
        }
        if j.aborted {
            prop_assert!(j.missed && j.finish.is_none() && j.aborted_at.is_some());
            prop_assert!(j.aborted_at.unwrap() >= j.release);
        }
        // A thread resuming elsewhere is taken from the run queue it sits on: a pull.
        prop_assert!(
            j.pulls.is_some_and(|p| p >= j.migrations),
            "{} {:?}",
            spec,
            j
        );
        let t = &ts.tasks[j.task as usize];
        prop_assert_eq!(j.max_utility, t.max_utility());
        match j.finish {
            Some(f) if !j.aborted => prop_assert_eq!(j.utility, t.utility_at(f - j.release)),
            _ => prop_assert_eq!(j.utility, 0.0),
        }
        prop_assert!(j.utility <= j.max_utility);
    }
    prop_assert!(
        excess <= charged,
        "{}: {} ns ran beyond the finished jobs' demands, {} charged",
        spec,
        excess,
        charged
    );
    let s = r.summaries().total;
    prop_assert!((0.0..=1.0).contains(&s.aur), "{}: AUR {}", spec, s.aur);
    // A DAG node starts only after every predecessor has finished (docs/dag.md).
    let mut span: HashMap<(u32, u64, u32), (Time, Time)> = HashMap::new();
    for iv in &r.intervals {
        if ts.tasks[iv.task as usize].dag.is_some() {
            let s = span
                .entry((iv.task, iv.job, iv.thread))
                .or_insert((iv.start, iv.end));
            *s = (s.0.min(iv.start), s.1.max(iv.end));
        }
    }
    for (&(task, job, v), &(start, _)) in &span {
        let g = ts.tasks[task as usize].dag.as_ref().unwrap();
        for &(u, _) in g.edges.iter().filter(|e| e.1 == v) {
            let done = span.get(&(task, job, u)).map(|s| s.1);
            prop_assert!(
                done.is_some_and(|d| d <= start),
                "{}: node {} of {}/{} started at {} before its predecessor {} finished ({:?})",
                spec,
                v,
                task,
                job,
                start,
                u,
                done
            );
        }
    }
    // Intervals on one CPU never overlap.
    let mut per_cpu: Vec<Vec<(Time, Time)>> = vec![Vec::new(); m];
    for iv in &r.intervals {
        per_cpu[iv.cpu as usize].push((iv.start, iv.end));
    }
    for ivs in &mut per_cpu {
        ivs.sort();
        for w in ivs.windows(2) {
            prop_assert!(w[0].1 <= w[1].0, "overlap on a CPU: {:?}", w);
        }
    }
    Ok(())
}

/// Time-utility functions of every shape on `ts`'s tasks (`variant` picks the mix).
fn with_tufs(mut ts: TaskSet, variant: u8) -> TaskSet {
    use rtsched_model::Tuf;
    for (i, t) in ts.tasks.iter_mut().enumerate() {
        let u = 1.0 + ((i as u64 * 7 + variant as u64) % 10) as f64;
        let x = if variant & 1 == 0 {
            t.deadline
        } else {
            t.deadline + t.deadline / 2
        };
        t.tuf = Some(match (i + variant as usize) % 4 {
            0 => Tuf::Step {
                utility: u,
                termination: t.deadline,
            },
            1 => Tuf::Linear {
                utility: u,
                termination: x,
            },
            2 => Tuf::Quadratic {
                utility: u,
                termination: x,
            },
            _ => Tuf::Piecewise {
                points: vec![(0, u), (t.deadline / 2, u), (x, u / 4.0)],
            },
        });
    }
    ts
}

/// Every policy the registry lists, with its default options, under the protocol checker and
/// the work accounting of [`accounting`], on sequential and structured sets (regions, critical
/// sections), with and without TUFs: a new policy is covered without editing this test. A set
/// a policy refuses at build (e.g. federated's unplaceable heavy tasks) is skipped with the
/// policy's own reason, but every policy must run on some set, or the test fails showing why.
#[test]
fn every_registered_policy_keeps_the_protocol_and_the_accounting() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::{Cell, RefCell};
    // Sets per policy (the whole registry at 256: under a second on one core).
    const CASES: u32 = 256;
    let sets = (
        prop_oneof![arb_taskset(), arb_structured_taskset(), arb_dag_taskset()],
        proptest::option::of(0u8..8),
    );
    for info in rtsched_policies::POLICIES {
        let ran = Cell::new(0u32);
        let refused = RefCell::new(None);
        let config = Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        runner
            .run(&sets, |(ts, tufs)| {
                let ts = match tufs {
                    Some(variant) => with_tufs(ts, variant),
                    None => ts,
                };
                let inner = match rtsched_policies::build(info.name, &ts) {
                    Ok(p) => p,
                    Err(why) => {
                        refused.replace(Some(why));
                        return Ok(());
                    }
                };
                ran.set(ran.get() + 1);
                let mut policy = ProtocolChecker::new(inner, ts.platform.cpus);
                let r = rtsched_sim::simulate(
                    &ts,
                    rtsched_sim::Options::policy(&mut policy).intervals(true),
                )
                .unwrap()
                .result;
                accounting(&ts, info.name, &r)
            })
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        eprintln!("{}: {} of {CASES} sets run", info.name, ran.get());
        assert!(
            ran.get() > 0,
            "{}: refused every set; the last: {}",
            info.name,
            refused.into_inner().unwrap_or_default()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// The utility-accrual policies and ChronOS's global models: under the protocol checker,
    /// with TUFs of every shape, critical sections (policy-visible blocking and chains),
    /// parallel regions, aborts at deadlines or by the policy, and overruns. No scheduling rule
    /// is asserted here (each policy's own tests work its rules by hand); what every run must
    /// keep is.
    #[test]
    fn utility_accrual_policies_keep_the_protocol_and_the_accounting(ts in arb_structured_taskset(), which in 0usize..9, variant in 0u8..8, abort in any::<bool>()) {
        let mut ts = with_tufs(ts, variant);
        if abort {
            // (No abort-handler cost here: the work accounting counts interval time, which
            // would include it; `ledger_ua.rs` works the handler by hand.)
            ts.run.on_miss = rtsched_model::OnMiss::Abort;
        }
        let spec = ["dasa", "pdasa", "lbesa", "ggua", "nggua", "ghvdf", "ggua:model=ac", "gedf:model=ac,mapper=none", "gnpedf:model=stw"][which];
        let mut policy = ProtocolChecker::new(rtsched_policies::build(spec, &ts).unwrap(), ts.platform.cpus);
        let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::policy(&mut policy).intervals(true)).unwrap().result;
        accounting(&ts, spec, &r)?;
    }

    #[test]
    fn invariants_hold_after_every_event(ts in arb_taskset(), which in 0usize..8) {
        let spec = ["gedf", "gfp:file", "gnpedf", "gfifo", "pedf", "pfp:file", "gedf-seq", "federated"][which];
        check(&ts, spec)?;
    }

    /// The same invariants with parallel regions and critical sections (blocked entities are
    /// not ready, so "the min(m, ready) most urgent run" still holds among the others).
    #[test]
    fn invariants_hold_with_regions_and_sections(ts in arb_structured_taskset(), which in 0usize..8) {
        let spec = ["gedf", "gfp:file", "gnpedf", "gfifo", "pedf", "pfp:file", "gedf-seq", "federated"][which];
        check(&ts, spec)?;
    }

    /// Federated with heavy tasks (some fork-join tasks' deadlines cut between L and C, and
    /// CPUs added for them): each heavy task global on its own CPUs, with critical sections,
    /// aborts and overruns, under the protocol checker.
    #[test]
    fn federated_keeps_the_protocol_with_heavy_tasks(ts in arb_structured_taskset()) {
        let mut ts = ts;
        let mut extra = 0u64;
        for (i, t) in ts.tasks.iter_mut().enumerate() {
            let (c, l) = (t.wcet, t.critical_path());
            if c >= l + 2 {
                let k = 2 + i as u64 % 3;
                t.deadline = l + (c - l).div_ceil(k);
                extra += rtsched_policies::federated::cores_needed(c, l, rtsched_policies::federated::deadline(t)).unwrap_or(0);
            }
        }
        ts.platform.cpus += extra as u32;
        check(&ts, "federated")?;
    }

    /// PAWS keeps the protocol, work conservation and the work accounting; so does each of its
    /// readings and weakened variants (`paws::VARIANTS`, the priority-unaware `steal=random`
    /// among them), but `steal=none`, which idles a core beside another's local threads by
    /// design: held to the protocol and the accounting only. Half the cases are the paper's.
    #[test]
    fn paws_keeps_the_protocol_work_conservation_and_work_accounting(ts in arb_structured_taskset(), which in 0..2 * rtsched_policies::paws::VARIANTS.len()) {
        let spec = rtsched_policies::paws::VARIANTS.get(which).copied().unwrap_or("paws");
        if spec == "paws:steal=none" {
            let mut policy = ProtocolChecker::new(rtsched_policies::build(spec, &ts).unwrap(), ts.platform.cpus);
            let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::policy(&mut policy).intervals(true)).unwrap().result;
            accounting(&ts, spec, &r)?;
        } else {
            check(&ts, spec)?;
        }
    }

    /// A policy that grants freed resources itself (most urgent waiter first) and sets
    /// timers keeps every invariant and the exact work accounting, under the protocol checker.
    #[test]
    fn invariants_hold_when_the_policy_grants_resources(ts in arb_structured_taskset()) {
        check(&ts, "granting")?;
    }

    /// Charged overheads are paid by what runs, counted in the results, and keep the global
    /// EDF invariant; a finished job ran at least its demand.
    #[test]
    fn charges_are_paid_and_counted(ts in arb_taskset(), ns in 1u64..200_000) {
        let m = ts.platform.cpus as usize;
        let edf: KeyFn = Box::new(|e| (e.deadline, e.release, e.task, e.job, e.thread));
        let mut checker = Checker { m, kind: Kind::GlobalPreemptive, key: edf, cpu_of_task: vec![0; ts.tasks.len()], instants: 0, failure: None };
        let mut g = Granting { inner: rtsched_policies::build("gedf", &ts).unwrap(), charge: ns, charges: 0, timers_set: 0, timers_fired: 0 };
        let r = simulate(&ts, Options::policy(&mut g).observer(&mut checker).intervals(true)).unwrap().result;
        if let Some(f) = checker.failure {
            return Err(TestCaseError::fail(f));
        }
        prop_assert!(g.charges > 0);
        prop_assert_eq!(r.measurements.get("policy.charged_ns").copied(), Some((g.charges * ns) as f64));
        prop_assert!(g.timers_fired <= g.timers_set && g.timers_fired > 0);
        let mut work: HashMap<(u32, u64), Time> = HashMap::new();
        for iv in &r.intervals {
            *work.entry((iv.task, iv.job)).or_default() += iv.end - iv.start;
        }
        for j in r.jobs.iter().filter(|j| j.finish.is_some()) {
            prop_assert!(work[&(j.task, j.job)] >= j.demand);
        }
    }

    /// Same input and seed: identical results, to the byte.
    #[test]
    fn deterministic(ts in arb_taskset()) {
        for spec in ["gedf", "pedf"] {
            let a = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec(spec).intervals(true)).unwrap().result;
            let b = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec(spec).intervals(true)).unwrap().result;
            prop_assert_eq!(a.to_json_value(true).to_string(), b.to_json_value(true).to_string());
            prop_assert_eq!(a.intervals, b.intervals);
        }
    }

    /// EDF on one CPU with U <= 1 and implicit deadlines never misses (Liu & Layland 1973).
    #[test]
    fn uniprocessor_edf_with_u_at_most_1_never_misses(periods in proptest::collection::vec(1u64..=40, 1..8), weights in proptest::collection::vec(1u64..=100, 8), offs in proptest::collection::vec(0u64..=20, 8)) {
        let total: u64 = weights.iter().take(periods.len()).sum();
        let tasks: Vec<Task> = periods.iter().enumerate().map(|(i, &p)| {
            let period = p * 100 * US;
            // Utilisation weight_i / total (<= 1 in sum), rounded down to whole ns.
            let mut t = Task::periodic(format!("t{i}"), period, (period * weights[i] / total).max(1));
            t.offset = offs[i] * 100 * US;
            t
        }).collect();
        let u: f64 = tasks.iter().map(|t| t.wcet as f64 / t.period as f64).sum();
        prop_assume!(u <= 1.0);
        let mut ts = TaskSet::new(1, tasks);
        ts.run.duration = 400 * 100 * US;
        let r = rtsched_sim::simulate(&ts, rtsched_sim::Options::spec("gedf")).unwrap().result;
        prop_assert_eq!(r.summaries().total.missed, 0, "U = {}", u);
    }
}
