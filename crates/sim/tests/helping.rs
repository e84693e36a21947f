//! MrsP's helping (Burns & Wellings, ECRTS 2013; docs/locking.md "Helping";
//! crates/runtime/src/ledger/locking/mrsp.rs): a holder preempted on its CPU migrates to the
//! CPU where a job spins for its resource and runs its section there, and goes home when its
//! section ends or its own CPU is free for it again. Worked by hand, through the protocol
//! checker (which rejects a partitioned entity off its CPU unless the ledger placed it), with
//! helping turned off as the control.

use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet};
use rtsched_runtime::{set_mrsp_helping, ProtocolChecker};
use rtsched_sim::{simulate, Options};

const MS: u64 = 1_000_000;

/// Two CPUs, `pfp` with the file's partition and priorities (higher is more urgent), R global:
/// - `l` (CPU 0, priority 1, WCET 5) holds R for its first 4 ms from 0;
/// - `x` (CPU 0, priority 3, released at 2, WCET `x_wcet`) needs nothing: above R's local
///   ceiling on CPU 0 (1, l's), so it preempts l in its section;
/// - `a` (CPU 1, priority 2, released at 1, WCET 2) needs R for its first 1 ms.
fn pair(x_wcet: u64) -> TaskSet {
    parse_taskset(
        &format!("platform: {{cpus: 2}}\nrun: {{duration: 40, locking: mrsp}}\nresources: [R]\ntasks:\n  - {{name: l, period: 100, wcet: 5, priority: 1, cpu: 0, sections: [{{resource: R, start: 0, length: 4}}]}}\n  - {{name: x, period: 100, offset: 2, wcet: {x_wcet}, priority: 3, cpu: 0}}\n  - {{name: a, period: 100, offset: 1, wcet: 2, priority: 2, cpu: 1, sections: [{{resource: R, start: 0, length: 1}}]}}\n"),
        Format::Yaml,
        "helping.yaml",
    )
    .unwrap()
}

/// Simulated under `pfp` through the protocol checker, with intervals and helping `on`.
fn run(t: &TaskSet, on: bool) -> RunResult {
    let inner = rtsched_policies::build("pfp", t).unwrap();
    let mut p = ProtocolChecker::new(inner, t.platform.cpus);
    set_mrsp_helping(on);
    let r = simulate(t, Options::policy(&mut p).intervals(true));
    set_mrsp_helping(true);
    r.unwrap().result
}

/// (cpu, start, end) in ms of task `task`'s non-empty intervals, contiguous ones on one CPU
/// joined.
fn pieces(r: &RunResult, task: u32) -> Vec<(u32, u64, u64)> {
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    for i in r
        .intervals
        .iter()
        .filter(|i| i.task == task && i.end > i.start)
    {
        match out.last_mut() {
            Some(last) if last.0 == i.cpu && last.2 == i.start / MS => last.2 = i.end / MS,
            _ => out.push((i.cpu, i.start / MS, i.end / MS)),
        }
    }
    out
}

/// Each task's first job: (response, spin, migrations), times in ms.
fn jobs(r: &RunResult) -> Vec<(u64, u64, u32)> {
    let mut jobs = r.jobs.clone();
    jobs.sort_by_key(|j| (j.task, j.job));
    jobs.dedup_by_key(|j| j.task);
    jobs.iter()
        .map(|j| {
            (
                (j.finish.unwrap() - j.release) / MS,
                j.spin / MS,
                j.migrations,
            )
        })
        .collect()
}

/// x runs 2–6 (WCET 4). l takes R at 0 and runs 0–2 on CPU 0 (2 ms of its section left). a
/// requests R at 1 and spins on CPU 1 at its local ceiling 1–2. At 2 x preempts l: l is not
/// running and a spins on CPU 1, so l migrates there and runs its section's remaining 2 ms
/// 2–4 in a's place (a stays queued, not spinning). At 4 l releases R: FIFO hands it to a,
/// and l goes back to CPU 0's queue, where x runs until 6. a holds R 4–5 and runs on 5–6; l
/// runs its last 1 ms 6–7 on CPU 0.
///
/// a spins 1 ms (1–2, while l ran at home) and responds in 5; l migrates twice (to CPU 1 and
/// back), one helping migration. MrsP's bound on a's spin is l's section, 4 ms.
///
/// Without helping (the control) l is stuck 2–6 under x: it holds R 0–2 and 6–8, a spins
/// 1–8 (7 ms, beyond the bound), holds R 8–9 and runs 9–10 (responds in 9), l runs 8–9.
#[test]
fn a_preempted_holder_runs_its_section_where_its_waiter_spins() {
    let t = pair(4);
    let r = run(&t, true);
    assert_eq!(pieces(&r, 0), vec![(0, 0, 2), (1, 2, 4), (0, 6, 7)]);
    assert_eq!(pieces(&r, 1), vec![(0, 2, 6)]);
    assert_eq!(pieces(&r, 2), vec![(1, 1, 2), (1, 4, 6)]);
    assert_eq!(jobs(&r), vec![(7, 0, 2), (4, 0, 0), (5, 1, 0)]);
    assert_eq!(r.counters.helping_migrations, 1);

    let r = run(&t, false);
    assert_eq!(pieces(&r, 0), vec![(0, 0, 2), (0, 6, 9)]);
    assert_eq!(pieces(&r, 2), vec![(1, 1, 10)]);
    assert_eq!(jobs(&r), vec![(9, 0, 0), (4, 0, 0), (9, 7, 0)]);
    assert_eq!(r.counters.helping_migrations, 0);
}

/// x runs 2–3 only (WCET 1). As above until 2: l helps on CPU 1 from 2. At 3 x ends and CPU 0
/// is free for l again: the holder goes home (the ledger's rule 1) and runs the last 1 ms of
/// its section 3–4 there, then 4–5; a spins again 3–4 on CPU 1 (2 ms in all), is handed R at
/// 4 and runs 4–6.
#[test]
fn a_helper_goes_home_when_its_cpu_is_free_again() {
    let r = run(&pair(1), true);
    assert_eq!(pieces(&r, 0), vec![(0, 0, 2), (1, 2, 3), (0, 3, 5)]);
    assert_eq!(pieces(&r, 2), vec![(1, 1, 2), (1, 3, 6)]);
    assert_eq!(jobs(&r), vec![(5, 0, 2), (1, 0, 0), (5, 2, 0)]);
    assert_eq!(r.counters.helping_migrations, 1);
}

/// A helper that releases its resource goes home and may request the next one there before
/// the next decision: `h` (CPU 0, priority 1, WCET 4) holds R1 for its first 2 ms and R2 for
/// the next 1; `x` (CPU 0, priority 3, at 1, WCET 3) holds R2 for its first 2; `a` (CPU 1,
/// priority 1, at 1, WCET 2) needs R1 for its first 1. At 1 x preempts h and takes R2; a
/// requests R1 and h helps on CPU 1, 1–2. At 2 h releases R1 (a takes it: a 2–4) and requests
/// R2, held by x: h spins at R2's ceiling on CPU 0 (x's priority, lent at h's release 0,
/// earlier than x's 1), which outranks x. x, the holder, takes h's place on its own CPU (no
/// migration): x 2–3, releases R2 to h: h 3–4 in R2, x 4–5, h 5–6. h never spins; without
/// this rule h would spin with x unable to run.
fn home() -> TaskSet {
    parse_taskset(
        "platform: {cpus: 2}\nrun: {duration: 40, locking: mrsp}\nresources: [R1, R2]\ntasks:\n  - {name: h, period: 100, wcet: 4, priority: 1, cpu: 0, sections: [{resource: R1, start: 0, length: 2}, {resource: R2, start: 2, length: 1}]}\n  - {name: x, period: 100, offset: 1, wcet: 3, priority: 3, cpu: 0, sections: [{resource: R2, start: 0, length: 2}]}\n  - {name: a, period: 100, offset: 1, wcet: 2, priority: 1, cpu: 1, sections: [{resource: R1, start: 0, length: 1}]}\n",
        Format::Yaml,
        "home.yaml",
    )
    .unwrap()
}

#[test]
fn a_holder_takes_the_place_of_a_spinner_of_its_own_cpu() {
    let r = run(&home(), true);
    assert_eq!(
        pieces(&r, 0),
        vec![(0, 0, 1), (1, 1, 2), (0, 3, 4), (0, 5, 6)]
    );
    assert_eq!(pieces(&r, 1), vec![(0, 1, 3), (0, 4, 5)]);
    assert_eq!(pieces(&r, 2), vec![(1, 2, 4)]);
    assert_eq!(jobs(&r), vec![(6, 0, 2), (4, 0, 0), (3, 0, 0)]);
    assert_eq!(r.counters.helping_migrations, 1);
}
