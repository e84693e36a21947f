//! The simulator on small structured task sets (regions of parallel threads, critical sections
//! on shared resources, TUFs, sporadic arrivals, best-effort tasks, overheads, on_miss abort)
//! under any registered scheduler. Every set goes through the reader's validation first (an
//! invalid one must be refused with an error, not a panic); a valid one is run under the
//! protocol checker (it panics on a violation) and its results must keep the accounting every
//! run keeps (crates/sim/tests/invariants.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtsched_model::{parse_taskset, Format, Time};
use rtsched_runtime::ProtocolChecker;
use rtsched_sim::engine::{Engine, NoObserver};
use rtsched_sim::NoCache;
use std::collections::HashMap;

/// Jobs a run may release in its window; a bigger input is skipped (it would only be slow).
const MAX_JOBS: u64 = 2_000;

fuzz_target!(|input: rtsched_fuzz::SetInput| {
    let doc = input.document().to_string();
    let ts = match parse_taskset(&doc, Format::Json, "fuzz.json") {
        Ok(ts) => ts,
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz.json") && !e.message.is_empty());
            return;
        }
    };
    if ts.jobs_released_by(ts.run.duration) > MAX_JOBS {
        return;
    }
    let specs = rtsched_fuzz::schedulers();
    let spec = &specs[input.policy as usize % specs.len()];
    let policy = match rtsched_policies::build(spec, &ts) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.is_empty());
            return;
        }
    };
    let mut checked = ProtocolChecker::new(policy, ts.platform.cpus);
    // An unresolved deadlock (a lock-order cycle the file was warned about) stops the run with
    // an error: an accepted outcome (docs/taskset-format.md "Critical sections").
    let Ok(r) = Engine::new(&ts, &mut checked, NoObserver, NoCache, true).try_run() else {
        return;
    };

    let m = ts.platform.cpus as usize;
    let exact = !ts.run.overheads.any();
    // Per job: its work, the overhead it paid and its CPU time, from the trace's intervals.
    // An interval opens with the overhead its entity owes; a job cut off (aborted, or the run
    // ended) while paying it pays only the part it ran.
    let mut work: HashMap<(u32, u64), (Time, Time, Time)> = HashMap::new();
    let mut per_cpu: Vec<Vec<(Time, Time)>> = vec![Vec::new(); m];
    for iv in &r.intervals {
        assert!(
            iv.end > iv.start && (iv.cpu as usize) < m,
            "{spec}: interval {iv:?}"
        );
        per_cpu[iv.cpu as usize].push((iv.start, iv.end));
        let len = iv.end - iv.start;
        let paid = iv.overhead.min(len);
        let w = work.entry((iv.task, iv.job)).or_default();
        *w = (w.0 + len - paid, w.1 + paid, w.2 + len);
    }
    for ivs in &mut per_cpu {
        ivs.sort_unstable();
        for w in ivs.windows(2) {
            assert!(
                w[0].1 <= w[1].0,
                "{spec}: a CPU runs two things at once: {w:?}\n{doc}"
            );
        }
    }
    for j in &r.jobs {
        let t = &ts.tasks[j.task as usize];
        if t.is_fair() {
            continue;
        }
        let (got, paid, cpu) = work.get(&(j.task, j.job)).copied().unwrap_or((0, 0, 0));
        if exact {
            // The record's CPU time and overhead are what its intervals show (no cache model
            // here, so no stall; no bandwidth-cap stops without run.overheads).
            assert_eq!(
                (j.exec, j.overhead),
                (cpu, paid),
                "{spec}: job {}/{} exec and overhead against its intervals\n{doc}",
                j.task,
                j.job
            );
        }
        match j.finish {
            Some(f) => {
                assert!(
                    f >= j.release,
                    "{spec}: job {}/{} finishes before its release",
                    j.task,
                    j.job
                );
                assert_eq!(
                    j.missed,
                    f > j.deadline,
                    "{spec}: job {}/{} miss flag\n{doc}",
                    j.task,
                    j.job
                );
                if exact {
                    assert_eq!(
                        got, j.demand,
                        "{spec}: job {}/{} ran {got} ns of its demand {}\n{doc}",
                        j.task, j.job, j.demand
                    );
                }
            }
            None => {
                assert!(
                    j.missed || j.deadline > r.end,
                    "{spec}: unfinished job {}/{} past its deadline not missed\n{doc}",
                    j.task,
                    j.job
                );
                if exact {
                    assert!(
                        got < j.demand,
                        "{spec}: unfinished job {}/{} ran its whole demand\n{doc}",
                        j.task,
                        j.job
                    );
                }
            }
        }
        if j.aborted {
            assert!(
                j.missed && j.finish.is_none() && j.aborted_at.is_some_and(|a| a >= j.release),
                "{spec}: aborted job {j:?}"
            );
        }
        assert!(
            j.utility >= 0.0 && j.utility <= t.max_utility(),
            "{spec}: utility {} of at most {}",
            j.utility,
            t.max_utility()
        );
    }
    let s = r.summaries().total;
    assert!(
        (0.0..=1.0).contains(&s.aur) || s.aur.is_nan(),
        "{spec}: AUR {}",
        s.aur
    );
});
