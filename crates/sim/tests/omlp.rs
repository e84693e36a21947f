//! The global OMLP (docs/locking.md "The global OMLP"; crates/runtime/src/ledger/locking/omlp.rs):
//! a 2-CPU example worked by hand under `gfp` with the file's priorities (FQ in request order,
//! PQ by priority, the holder inheriting the most urgent waiter), the paper's s-oblivious bound
//! on random sets — a request is pi-blocked during at most 2m − 1 other requests — with m − 1
//! and a plain FIFO queue as the controls that fail, and the refusals (a partitioned
//! scheduler, nested sections).

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_policies::{Dispatch, EntityId, EntityInfo, Policy, ResourceId, Urgency};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Options};
use std::sync::{Arc, Mutex};

const MS: u64 = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "omlp.yaml").unwrap()
}

/// What the run's resources saw: per contended request (task, job, resource, requested at,
/// granted at), and every release (resource, at).
#[derive(Default)]
struct Seen {
    info: Vec<Option<EntityInfo>>,
    open: Vec<(EntityId, u32, u64, ResourceId, Time)>,
    waits: Vec<(u32, u64, ResourceId, Time, Time)>,
    releases: Vec<(ResourceId, Time)>,
}

/// The policy, through the protocol checker, with what its resources saw written to `seen`.
struct Watch {
    inner: ProtocolChecker,
    seen: Arc<Mutex<Seen>>,
}

impl Watch {
    fn know(&self, e: &EntityInfo) {
        let mut s = self.seen.lock().unwrap();
        let i = e.id as usize;
        if s.info.len() <= i {
            s.info.resize(i + 1, None);
        }
        s.info[i] = Some(*e);
    }
}

impl Policy for Watch {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn release(&mut self, now: Time, e: &EntityInfo) {
        self.know(e);
        self.inner.release(now, e)
    }
    fn forked(&mut self, now: Time, cpu: Option<u32>, threads: &[EntityInfo]) {
        threads.iter().for_each(|t| self.know(t));
        self.inner.forked(now, cpu, threads)
    }
    fn complete(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.inner.complete(now, e, cpu)
    }
    fn aborted(&mut self, now: Time, e: EntityId) {
        self.inner.aborted(now, e)
    }
    fn blocked(&mut self, now: Time, e: EntityId, cpu: u32) {
        self.inner.blocked(now, e, cpu)
    }
    fn requested(&mut self, now: Time, e: EntityId, r: ResourceId, holder: Option<EntityId>) {
        let mut s = self.seen.lock().unwrap();
        let i = s.info[e as usize].expect("a known entity");
        s.open.push((e, i.task, i.job, r, now));
        drop(s);
        self.inner.requested(now, e, r, holder)
    }
    fn released(&mut self, now: Time, e: EntityId, r: ResourceId) {
        self.seen.lock().unwrap().releases.push((r, now));
        self.inner.released(now, e, r)
    }
    fn unblocked(&mut self, now: Time, e: &EntityInfo) {
        let mut s = self.seen.lock().unwrap();
        if let Some(k) = s.open.iter().position(|o| o.0 == e.id) {
            let (_, task, job, r, at) = s.open.remove(k);
            s.waits.push((task, job, r, at, now));
        }
        drop(s);
        self.inner.unblocked(now, e)
    }
    fn urgency(&self, e: &EntityInfo) -> Option<Urgency> {
        self.inner.urgency(e)
    }
    fn boost(&mut self, now: Time, e: &EntityInfo, to: Option<Urgency>) {
        self.inner.boost(now, e, to)
    }
    fn cpu_of_task(&self, task: u32) -> Option<u32> {
        self.inner.cpu_of_task(task)
    }
    fn grants_resources(&self) -> bool {
        self.inner.grants_resources()
    }
    fn tick_interval(&self) -> Option<Time> {
        self.inner.tick_interval()
    }
    fn tick(&mut self, now: Time, cpu: u32) {
        self.inner.tick(now, cpu)
    }
    fn timer(&mut self, now: Time) {
        self.inner.timer(now)
    }
    fn schedule(&mut self, now: Time, d: &mut Dispatch<'_>) {
        self.inner.schedule(now, d)
    }
}

/// Simulated under `spec`, through the protocol checker, with intervals and what the
/// resources saw.
fn run(t: &TaskSet, spec: &str) -> Result<(RunResult, Seen), String> {
    let inner = rtsched_policies::build(spec, t).map_err(|e| e.to_string())?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut p = Watch {
        inner: ProtocolChecker::new(inner, t.platform.cpus),
        seen: seen.clone(),
    };
    let r = simulate(t, Options::policy(&mut p).intervals(true))
        .map(|o| o.result)
        .map_err(|e| e.to_string())?;
    drop(p);
    let seen = Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap();
    Ok((r, seen))
}

/// (start, end) in ms of task `task`'s non-empty intervals, contiguous ones joined.
fn pieces(r: &RunResult, task: u32) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for i in r
        .intervals
        .iter()
        .filter(|i| i.task == task && i.end > i.start)
    {
        match out.last_mut() {
            Some(last) if last.1 == i.start / MS => last.1 = i.end / MS,
            _ => out.push((i.start / MS, i.end / MS)),
        }
    }
    out
}

/// Each task's first job: (response, direct blocking, inheritance blocking) in ms.
fn first_jobs(r: &RunResult) -> Vec<(u64, u64, u64)> {
    let mut jobs = r.jobs.clone();
    jobs.sort_by_key(|j| (j.task, j.job));
    jobs.dedup_by_key(|j| j.task);
    jobs.iter()
        .map(|j| {
            (
                (j.finish.unwrap() - j.release) / MS,
                j.blocked / MS,
                j.blocked_inheritance / MS,
            )
        })
        .collect()
}

/// Two CPUs, `gfp:file` (higher priority is more urgent); every user of R needs it for all its
/// work from its start:
/// - `a` (priority 1, WCET 4) holds R from 0;
/// - `b` (priority 2, at 1, WCET 2) and `e` (priority 5, at 1, WCET 6, no R);
/// - `c` (priority 4, at 2, WCET 1) and `f` (priority 3, at 2, WCET 3, no R);
/// - `d` (priority 6, at 3, WCET 1).
fn example(locking: &str) -> TaskSet {
    let task = |n: &str, p: u32, at: u64, c: u64, r: bool| {
        let s = if r {
            format!(", sections: [{{resource: R, start: 0, length: {c}}}]")
        } else {
            String::new()
        };
        format!("  - {{name: {n}, period: 100, offset: {at}, wcet: {c}, priority: {p}{s}}}\n")
    };
    ts(&format!(
        "platform: {{cpus: 2}}\nrun: {{duration: 50, locking: {locking}}}\nresources: [R]\ntasks:\n{}{}{}{}{}{}",
        task("a", 1, 0, 4, true),
        task("b", 2, 1, 2, true),
        task("c", 4, 2, 1, true),
        task("d", 6, 3, 1, true),
        task("e", 5, 1, 6, false),
        task("f", 3, 2, 3, false),
    ))
}

/// `omlp`, m = 2 (FQ: the holder and one waiter):
/// - 0: a takes R. 1: b requests R and enters FQ (a and b); a inherits 2; e runs on the other CPU.
/// - 2: c and f arrive; c runs, requests R, finds FQ full and enters PQ; a inherits 4, so f
///   (3) cannot preempt it. 3: d (6) requests R and enters PQ ahead of c; a inherits 6.
/// - 4: a releases R: b, next in FQ, takes it and d moves from PQ into FQ; b inherits 6 and
///   runs 4–6 (f still waits). 6: d takes R (FIFO), c moves into FQ; d runs 6–7.
/// - 7: c takes R and runs 7–8; e ends at 7 and f runs 7–10.
///
/// Responses a 4, b 5, c 6, d 4, e 6, f 8 ms; direct blocking b 1–4, c 2–7, d 3–6; f was ready
/// 2–6 while a lower-priority holder ran with an inherited priority (4 ms of inheritance
/// blocking). Under `pip` (one priority queue) R goes to d at 4, c at 5, b at 6: b runs only
/// when e ends, 7–9 (responds in 8), c in 4, d in 2.
#[test]
fn the_two_cpu_example_by_hand() {
    let (r, seen) = run(&example("omlp"), "gfp:file").unwrap();
    assert_eq!(pieces(&r, 0), vec![(0, 4)]);
    assert_eq!(pieces(&r, 1), vec![(4, 6)]);
    assert_eq!(pieces(&r, 2), vec![(7, 8)]);
    assert_eq!(pieces(&r, 3), vec![(6, 7)]);
    assert_eq!(pieces(&r, 4), vec![(1, 7)]);
    assert_eq!(pieces(&r, 5), vec![(7, 10)]);
    assert_eq!(
        first_jobs(&r),
        vec![
            (4, 0, 0),
            (5, 3, 0),
            (6, 5, 0),
            (4, 3, 0),
            (6, 0, 0),
            (8, 0, 4)
        ]
    );
    // Served in the order a, b, d, c: FQ before PQ, PQ by priority.
    let order: Vec<u64> = seen.releases.iter().map(|&(_, at)| at / MS).collect();
    assert_eq!(order, vec![4, 6, 7, 8]);

    let (r, _) = run(&example("pip"), "gfp:file").unwrap();
    let resp: Vec<u64> = first_jobs(&r).iter().map(|j| j.0).collect();
    assert_eq!(resp, vec![4, 8, 4, 2, 6, 7]);
}

/// Per contended request of `seen` that ends within the run's duration: the other requests
/// served while it waited during which
/// its job was s-oblivious pi-blocked (pending, not holding R, with fewer than m pending jobs
/// of higher priority: Brandenburg & Anderson 2010), and how long it was so blocked. The
/// error names the first request pi-blocked during more than `limit` of them.
fn within(t: &TaskSet, r: &RunResult, seen: &Seen, limit: usize) -> Result<(), String> {
    let m = t.platform.cpus as usize;
    let prio = |task: u32| t.tasks[task as usize].priority.unwrap();
    // Fewer than m jobs of higher priority than task `task` pending at `at`.
    let blocked_at = |task: u32, at: Time| {
        r.jobs
            .iter()
            .filter(|j| {
                prio(j.task) > prio(task) && j.release <= at && j.finish.is_none_or(|f| f > at)
            })
            .count()
            < m
    };
    let changes: Vec<Time> = r
        .jobs
        .iter()
        .flat_map(|j| [Some(j.release), j.finish])
        .flatten()
        .collect();
    // Jobs released after the run's duration still run (its backlog drains) but have no
    // record, so the pending set is known only up to the duration: a wait that ends later is
    // not judged.
    let horizon = t.run.duration;
    for &(task, job, res, from, to) in seen.waits.iter().filter(|w| w.4 <= horizon) {
        let mut ends: Vec<Time> = seen
            .releases
            .iter()
            .filter(|&&(x, at)| x == res && at > from && at <= to)
            .map(|&(_, at)| at)
            .collect();
        ends.sort_unstable();
        let (mut count, mut starts) = (0, from);
        for &end in &ends {
            // Pieces of [starts, end) between the instants the pending set changes.
            let mut cuts: Vec<Time> = changes
                .iter()
                .copied()
                .filter(|&c| c > starts && c < end)
                .collect();
            cuts.push(starts);
            cuts.sort_unstable();
            if cuts.iter().any(|&c| blocked_at(task, c)) {
                count += 1;
            }
            starts = end;
        }
        if count > limit {
            return Err(format!(
                "{}#{job} waited {from}..{to} and was pi-blocked during {count} requests > {limit}",
                t.tasks[task as usize].name
            ));
        }
    }
    Ok(())
}

#[test]
fn the_example_keeps_the_bound_and_m_minus_1_is_caught() {
    let t = example("omlp");
    let (r, seen) = run(&t, "gfp:file").unwrap();
    within(&t, &r, &seen, 3).unwrap();
    // d (the most urgent) waits through a's and b's sections with nothing above it.
    let e = within(&t, &r, &seen, 1).unwrap_err();
    assert!(e.contains("d#0") && e.contains("during 2 requests"), "{e}");
}

/// Two CPUs: four low-priority users of R queue at 0 (x3 holds it, x2, x1, x0 wait), and `h`,
/// the most urgent, requests it at 1. A plain FIFO queue (`none`) makes h wait for all four
/// (more than 2m − 1 = 3); under `omlp` x1 and x0 are in PQ, behind h: h waits for x3 and x2.
fn crowd(locking: &str) -> TaskSet {
    let mut y = format!(
        "platform: {{cpus: 2}}\nrun: {{duration: 40, locking: {locking}}}\nresources: [R]\ntasks:\n"
    );
    for i in 0..4 {
        y.push_str(&format!("  - {{name: x{i}, period: 100, wcet: 2, priority: {}, sections: [{{resource: R, start: 0, length: 2}}]}}\n", i + 1));
    }
    y.push_str("  - {name: h, period: 100, offset: 1, wcet: 1, priority: 9, sections: [{resource: R, start: 0, length: 1}]}\n");
    ts(&y)
}

#[test]
fn a_fifo_queue_breaks_the_bound() {
    let t = crowd("omlp");
    let (r, seen) = run(&t, "gfp:file").unwrap();
    within(&t, &r, &seen, 3).unwrap();
    let h = r.jobs.iter().find(|j| j.task == 4).unwrap();
    assert_eq!(h.finish.unwrap() - h.release, 4 * MS);
    let t = crowd("none");
    let (r, seen) = run(&t, "gfp:file").unwrap();
    let e = within(&t, &r, &seen, 3).unwrap_err();
    assert!(e.contains("h#0") && e.contains("during 4 requests"), "{e}");
}

/// A random global set: task i has priority i + 1 (distinct) and at most one section of R.
type Drawn = (u64, u64, u64, Option<(u64, u64)>);

fn set(cpus: u32, tasks: &[Drawn]) -> TaskSet {
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 120, locking: omlp}}\nresources: [R]\ntasks:\n");
    for (i, &(period, offset, wcet, sec)) in tasks.iter().enumerate() {
        let s = match sec {
            Some((start, len)) => {
                let start = start.min(wcet - 1);
                format!(
                    ", sections: [{{resource: R, start: {start}, length: {}}}]",
                    len.clamp(1, wcet - start)
                )
            }
            None => String::new(),
        };
        y.push_str(&format!(
            "  - {{name: t{i}, period: {period}, offset: {offset}, wcet: {wcet}, priority: {}{s}}}\n",
            i + 1
        ));
    }
    ts(&y)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// On random 2- and 3-CPU sets under `gfp:file` and random offsets, no request is
    /// pi-blocked during more than 2m − 1 other requests.
    #[test]
    fn a_request_is_pi_blocked_by_at_most_2m_minus_1(
        cpus in 2u32..4,
        tasks in prop::collection::vec(
            (10u64..40, 0u64..8, 1u64..6, prop::option::weighted(0.8, (0u64..3, 1u64..4))),
            3..9,
        )
    ) {
        let t = set(cpus, &tasks);
        let (r, seen) = run(&t, "gfp:file").unwrap();
        within(&t, &r, &seen, 2 * cpus as usize - 1).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn omlp_under_a_partitioned_scheduler_is_refused() {
    let mut t = example("omlp");
    for (i, task) in t.tasks.iter_mut().enumerate() {
        task.cpu = Some(i as u32 % 2);
    }
    let e = run(&t, "pfp").err().unwrap();
    assert!(
        e.contains("task 'a'")
            && e.contains("resource 'R' uses omlp")
            && e.contains("global scheduling"),
        "{e}"
    );
}

#[test]
fn nested_sections_under_omlp_are_refused() {
    let e = parse_taskset(
        "platform: {cpus: 2}\nrun: {locking: omlp}\nresources: [R, S]\ntasks:\n  - {name: a, period: 10, wcet: 4, sections: [{resource: R, start: 0, length: 3}, {resource: S, start: 1, length: 1}]}\n",
        Format::Yaml,
        "nested.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("task 'a'") && e.contains("may not nest") && e.contains("nested.yaml"),
        "{e}"
    );
}
