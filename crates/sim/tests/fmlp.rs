//! The FMLP+ under partitioned fixed priority (Brandenburg, ECRTS 2014; docs/locking.md
//! "Suspending: fmlp+"; crates/runtime/src/ledger/locking/fmlp.rs): two examples worked by
//! hand — a suspended waiter letting a lower job of its CPU run and a boosted holder keeping a
//! higher one out, and boosted jobs ordered by when they issued their requests — the bound on
//! one request's wait on random 2- and 3-CPU sets, its control, and the refusals.

use proptest::prelude::*;
use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "fmlp.yaml").unwrap()
}

/// Simulated under `spec`, through the protocol checker, with intervals.
fn run(t: &TaskSet, spec: &str) -> Result<RunResult, String> {
    let inner = rtsched_policies::build(spec, t).map_err(|e| e.to_string())?;
    let mut p = ProtocolChecker::new(inner, t.platform.cpus);
    simulate(t, Options::policy(&mut p).intervals(true))
        .map(|o| o.result)
        .map_err(|e| e.to_string())
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

/// Each task's first job: (response, direct blocking, ceiling blocking, spin) in ms.
fn first_jobs(r: &RunResult) -> Vec<(u64, u64, u64, u64)> {
    let mut jobs = r.jobs.clone();
    jobs.sort_by_key(|j| (j.task, j.job));
    jobs.dedup_by_key(|j| j.task);
    jobs.iter()
        .map(|j| {
            (
                (j.finish.unwrap() - j.release) / MS,
                j.blocked / MS,
                j.blocked_ceiling / MS,
                j.spin / MS,
            )
        })
        .collect()
}

/// Two CPUs, `pfp` with the file's partition and priorities (higher is more urgent):
/// - `a` (CPU 0, priority 2, WCET 6) holds R for its first 4 ms from 0;
/// - `l` (CPU 1, priority 1, WCET 5) needs nothing;
/// - `b` (CPU 1, priority 2, released at 1, WCET 4) needs R for its first 2 ms;
/// - `h` (CPU 1, priority 3, released at 5, WCET 2) needs nothing.
fn pair(locking: &str) -> TaskSet {
    ts(&format!("platform: {{cpus: 2}}\nrun: {{duration: 40, locking: {locking}}}\nresources: [R]\ntasks:\n  - {{name: a, period: 100, wcet: 6, priority: 2, cpu: 0, sections: [{{resource: R, start: 0, length: 4}}]}}\n  - {{name: l, period: 100, wcet: 5, priority: 1, cpu: 1}}\n  - {{name: b, period: 100, offset: 1, wcet: 4, priority: 2, cpu: 1, sections: [{{resource: R, start: 0, length: 2}}]}}\n  - {{name: h, period: 100, offset: 5, wcet: 2, priority: 3, cpu: 1}}\n"))
}

/// `fmlp+`: `a` locks R at 0 and runs 0–6 alone on CPU 0. On CPU 1 `l` runs 0–1; `b`,
/// released at 1, requests R, held by `a`, and *suspends* 1–4: `l` runs on 1–4 (under
/// `msrp` b would spin there). At 4 R goes to `b`, boosted: it holds R 4–6, and `h`,
/// released at 5, waits for it (a boosted holder is above every job of its CPU that is not):
/// h 6–8, b 8–10, l 10–11. b responds in 9 ms (3 of them suspended: direct blocking); h in 3
/// (1 ms of boost blocking, counted as ceiling blocking); nothing spins.
///
/// `none` (the control of the boost): b holds R 4–5 at its own priority, h preempts it at 5:
/// h 5–7, b 7–10, l 10–11: h responds in 2 ms, not blocked.
#[test]
fn a_suspended_waiter_and_a_boosted_holder() {
    let r = run(&pair("fmlp+"), "pfp").unwrap();
    assert_eq!(pieces(&r, 0), vec![(0, 6)]);
    assert_eq!(pieces(&r, 1), vec![(0, 4), (10, 11)]);
    assert_eq!(pieces(&r, 2), vec![(4, 6), (8, 10)]);
    assert_eq!(pieces(&r, 3), vec![(6, 8)]);
    assert_eq!(
        first_jobs(&r),
        vec![(6, 0, 0, 0), (11, 0, 0, 0), (9, 3, 0, 0), (3, 0, 1, 0)]
    );

    let r = run(&pair("none"), "pfp").unwrap();
    assert_eq!(pieces(&r, 2), vec![(4, 5), (7, 10)]);
    assert_eq!(pieces(&r, 3), vec![(5, 7)]);
    assert_eq!(first_jobs(&r)[3], (2, 0, 0, 0));
}

/// Three CPUs, `pfp`, resources S and R:
/// - `a` (CPU 0, priority 1, WCET 7) holds S for its first 6 ms from 0;
/// - `p` (CPU 1, priority 1, released at 1, WCET 3) needs S for its first 2 ms;
/// - `q` (CPU 1, priority 2, released at 2, WCET 6) needs R for its first 5 ms;
/// - `z` (CPU 2, priority 1, released at 3, WCET 1) needs R for its 1 ms.
fn boosted_order() -> TaskSet {
    ts("platform: {cpus: 3}\nrun: {duration: 40, locking: fmlp+}\nresources: [S, R]\ntasks:\n  - {name: a, period: 100, wcet: 7, priority: 1, cpu: 0, sections: [{resource: S, start: 0, length: 6}]}\n  - {name: p, period: 100, offset: 1, wcet: 3, priority: 1, cpu: 1, sections: [{resource: S, start: 0, length: 2}]}\n  - {name: q, period: 100, offset: 2, wcet: 6, priority: 2, cpu: 1, sections: [{resource: R, start: 0, length: 5}]}\n  - {name: z, period: 100, offset: 3, wcet: 1, priority: 1, cpu: 2, sections: [{resource: R, start: 0, length: 1}]}\n")
}

/// `p` requests S at 1 and suspends (a holds it to 6); `q` takes the free R at 2, boosted
/// (request at 2), and runs 2–6; `z` requests R at 3 and suspends. At 6 S goes to `p`,
/// boosted with its request at 1, *earlier* than q's: p preempts q, which holds R and is of
/// higher priority (the paper's order among boosted jobs: by request time, not by priority
/// nor by the grant): p 6–8; q finishes its section 8–9 and R goes to z (z 9–10); q 9–10,
/// p 10–11. z's request waited 6 ms (3–9): one section of every task of the CPU where R
/// was held (q's 5 and p's 2, which delayed q's), but more than the sections of R ahead
/// of it (q's 5): the per-request bound without the boosted jobs of the holder's CPU is
/// caught.
#[test]
fn boosted_jobs_go_in_the_order_of_their_requests() {
    let t = boosted_order();
    let r = run(&t, "pfp").unwrap();
    assert_eq!(pieces(&r, 0), vec![(0, 7)]);
    assert_eq!(pieces(&r, 1), vec![(6, 8), (10, 11)]);
    assert_eq!(pieces(&r, 2), vec![(2, 6), (8, 10)]);
    assert_eq!(pieces(&r, 3), vec![(9, 10)]);
    assert_eq!(
        first_jobs(&r),
        vec![(7, 0, 0, 0), (10, 5, 0, 0), (8, 0, 2, 0), (7, 6, 0, 0)]
    );
    assert!(within_wait_bound(&t, &r, true).is_ok());
    let e = within_wait_bound(&t, &r, false).unwrap_err();
    assert!(e.contains("z#0 waited 6000000 > 5000000"), "{e}");
}

/// The FMLP+'s bound on one request's wait (its suspension): the requests that can delay a
/// request of τ_i for q were issued before it and are still outstanding — at most one per
/// other task (a task runs one job at a time, and sections do not nest) — namely one of every
/// task holding q ahead of it in the FIFO queue and one of every task boosted above such a
/// holder on its CPU. So the wait is at most Σ over the CPUs where another task uses q of
/// Σ over that CPU's other tasks of their longest section. With `boosted` false only the
/// users of q are counted (the control: the holders' boosted neighbours forgotten).
fn within_wait_bound(t: &TaskSet, r: &RunResult, boosted: bool) -> Result<(), String> {
    let longest = |x: usize| t.tasks[x].sections.iter().map(|s| s.length).max();
    for j in &r.jobs {
        let i = j.task as usize;
        let mut limit = 0;
        for s in &t.tasks[i].sections {
            let q = s.resource as usize;
            let others: Vec<usize> = t.users(q).filter(|&x| x != i).collect();
            for x in (0..t.tasks.len()).filter(|&x| x != i) {
                limit += match boosted {
                    true if others.iter().any(|&u| t.tasks[u].cpu == t.tasks[x].cpu) => {
                        longest(x).unwrap_or(0)
                    }
                    false if others.contains(&x) => longest(x).unwrap_or(0),
                    _ => 0,
                };
            }
        }
        if j.blocked > limit {
            let name = &t.tasks[i].name;
            return Err(format!("{name}#{} waited {} > {limit}", j.job, j.blocked));
        }
    }
    Ok(())
}

/// A random partitioned set on `cpus` CPUs: task i on CPU i % cpus, priority i + 1, released
/// at a random offset, each with at most one section of R or S (both shared by every CPU
/// that draws them) or of its CPU's own resource.
type Drawn = (u64, u64, u64, Option<(u8, u64, u64)>);

fn set(cpus: u32, tasks: &[Drawn]) -> TaskSet {
    let mut y = format!("platform: {{cpus: {cpus}}}\nrun: {{duration: 150, locking: fmlp+}}\nresources: [R, S, L0, L1, L2]\ntasks:\n");
    for (i, &(period, offset, wcet, sec)) in tasks.iter().enumerate() {
        let cpu = i as u32 % cpus;
        let s = match sec {
            Some((which, start, len)) => {
                let start = start.min(wcet - 1);
                let res = match which % 3 {
                    0 => "R".to_string(),
                    1 => "S".to_string(),
                    _ => format!("L{cpu}"),
                };
                let len = len.clamp(1, wcet - start);
                format!(", sections: [{{resource: {res}, start: {start}, length: {len}}}]")
            }
            None => String::new(),
        };
        y.push_str(&format!(
            "  - {{name: t{i}, period: {period}, offset: {offset}, wcet: {wcet}, priority: {}, cpu: {cpu}{s}}}\n",
            i + 1
        ));
    }
    ts(&y)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// On random 2- and 3-CPU partitioned sets under `pfp` and `pedf` (random offsets), every
    /// job's direct blocking (its suspension) is within the per-request bound, and nothing
    /// spins.
    #[test]
    fn each_wait_is_within_the_fmlp_bound(
        cpus in 2u32..4,
        tasks in prop::collection::vec(
            (20u64..60, 0u64..10, 1u64..6, prop::option::of((0u8..3, 0u64..4, 1u64..4))),
            2..8,
        )
    ) {
        let t = set(cpus, &tasks);
        // The bound's argument holds whatever orders the jobs of a CPU: under pedf too.
        for spec in ["pfp", "pedf"] {
            let r = run(&t, spec).unwrap();
            within_wait_bound(&t, &r, true).map_err(|e| TestCaseError::fail(format!("{spec}: {e}")))?;
            prop_assert!(r.jobs.iter().all(|j| j.spin == 0));
        }
    }
}

#[test]
fn fmlp_under_a_global_scheduler_is_refused() {
    let e = run(&pair("fmlp+"), "gfp").unwrap_err();
    assert!(
        e.contains("resource 'R' uses fmlp+")
            && e.contains("task 'a'")
            && e.contains("partitioned"),
        "{e}"
    );
}

#[test]
fn nested_fmlp_sections_are_refused() {
    let e = parse_taskset(
        "platform: {cpus: 2}\nrun: {locking: fmlp+}\nresources: [R, S]\ntasks:\n  - {name: a, period: 10, wcet: 4, cpu: 0, sections: [{resource: R, start: 0, length: 3}, {resource: S, start: 1, length: 1}]}\n",
        Format::Yaml,
        "nested.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("task 'a'")
            && e.contains("resource 'R' uses fmlp+")
            && e.contains("may not nest"),
        "{e}"
    );
}
