//! The ledger driven by hand: a minimal driver over real policies, for what only a whole run
//! shows (streamed and pinned records, steals, fresh threads, inversions).

use super::testing::{hand_driven, Nop};
use super::*;
use rtsched_model::results::{Counters, JobRecord, JobSink};
use rtsched_model::Time;
use rtsched_policies::EntityId;

const MS: Time = 1_000_000;

#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<JobRecord>>>);
impl JobSink for Shared {
    fn job(&mut self, rec: &JobRecord, _end: Time) {
        self.0.lock().unwrap().push(rec.clone());
    }
}

/// A testbed worker is inside a piece when its job is aborted at the deadline: the job is
/// decided, but the piece's CPU time comes after. Its pinned record waits for it.
#[test]
fn a_pinned_record_leaves_the_stream_only_when_unpinned() {
    for pin in [false, true] {
        let (_, mut led) = hand_driven(
            "platform: {cpus: 1}\nrun: {duration: 30ms, on_miss: abort}\ntasks:\n  - {name: a, period: 10, wcet: 8}\n",
            "pin.yaml",
            "gedf",
            false,
        );
        let sink = Shared::default();
        led.stream_records_owned(Box::new(sink.clone()));
        let rel = led.release(0, 0, 0);
        led.decide(0, &mut Nop);
        let e = led.run.cpu(0).running.expect("job 0 runs");
        let rec = led.run.ent(e).rec;
        if pin {
            led.pin_record(rec);
        }
        let (at, slot, generation) = rel.abort.expect("on_miss: abort");
        led.deadline_abort(at, slot, generation, &mut Nop);
        let handed = sink.0.lock().unwrap().len();
        if !pin {
            assert_eq!(handed, 1, "decided and not pinned: handed on at once");
            continue;
        }
        assert_eq!(handed, 0, "decided but pinned: held");
        led.run.record_mut(rec).expect("still held").exec += 123;
        led.unpin_record(rec);
        let got = sink.0.lock().unwrap().clone();
        assert_eq!(got.len(), 1);
        assert!(got[0].aborted && got[0].exec >= 123, "{:?}", got[0]);
    }
}

/// A minimal driver: every task's first job released at 0, each running entity's demand
/// worked off at rate 1, completions in CPU order, a decision after each instant.
fn drive(yaml: &str, policy: &str) -> Outcome {
    drive_with(yaml, policy, true)
}

/// [`drive`], with pulls measured or not ([`Ledger::pulls_unmeasured`]).
fn drive_with(yaml: &str, policy: &str, pulls: bool) -> Outcome {
    let (ts, mut led) = hand_driven(yaml, "drive.yaml", policy, true);
    let n = ts.tasks.len() as u32;
    let m = ts.platform.cpus;
    if !pulls {
        led.pulls_unmeasured();
    }
    for t in 0..n {
        led.release(0, t, 0);
    }
    led.decide(0, &mut Nop);
    let (mut now, mut left) = (0, std::collections::HashMap::<EntityId, Time>::new());
    loop {
        let running: Vec<(u32, EntityId)> = (0..m)
            .filter_map(|c| led.run.cpu(c).running.map(|e| (c, e)))
            .collect();
        if running.is_empty() {
            break;
        }
        for &(_, e) in &running {
            left.entry(e).or_insert(led.run.ent(e).demand);
        }
        let dt = running.iter().map(|(_, e)| left[e]).min().unwrap();
        now += dt;
        for &(c, e) in &running {
            let l = left.get_mut(&e).unwrap();
            *l -= dt;
            if *l == 0 {
                left.remove(&e);
                led.complete(now, c, e, now, &mut Nop);
            }
        }
        led.decide(now, &mut Nop);
    }
    led.finish(now)
}

/// One steal (the hand-worked case of crates/sim/tests/paws.rs): p, regions [2, [4, 4, 4],
/// 2], alone on 2 CPUs under PAWS. CPU 0 runs the first region; at 2 p forks on CPU 0,
/// which takes thread 2 while CPU 1 steals thread 0 — one kernel migration (the thief's
/// `set_task_cpu`), none as an entity resuming elsewhere. At 6 CPU 0 takes thread 1 from
/// its own deque; at 10 the last region forks on CPU 0 and runs there.
#[test]
fn a_steal_is_a_kernel_migration() {
    let o = drive("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n", "paws");
    let stat = |k: &str| o.stats.iter().find(|(n, _)| n == k).map(|&(_, v)| v as u64);
    assert_eq!(stat("steals"), Some(1));
    assert_eq!(o.kernel_migrations, 1);
    assert_eq!(o.jobs[0].migrations, 0);
    assert_eq!(o.jobs[0].finish, Some(12 * MS));
}

/// The same steal is a pull (queues.rs): p's thread, created on CPU 0 (task 0), runs its
/// first region there; the forked threads sit on CPU 0, and the thief takes thread 0 from
/// CPU 0's run queue; the last region forks and runs on CPU 0. One pull. A driver whose
/// threads a real kernel places records none (`None`: not measured).
#[test]
fn a_steal_is_a_pull_unless_a_kernel_places_the_threads() {
    let yaml = "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4, 4], 2]}\n";
    assert_eq!(drive(yaml, "paws").jobs[0].pulls, Some(1));
    let o = drive_with(yaml, "paws", false);
    assert_eq!((o.jobs[0].pulls, o.jobs[0].finish), (None, Some(12 * MS)));
}

/// A fork placing a thread on the other CPU: p, regions [2, [4, 4]], alone on 2 CPUs under
/// global EDF. The first region runs on one CPU; at 2 both threads, forked there, go to
/// the global queue and each CPU takes one: the thread first run on the other CPU is one
/// kernel migration; no entity resumed elsewhere.
#[test]
fn a_fresh_thread_first_run_elsewhere_is_a_kernel_migration() {
    let o = drive("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [2, [4, 4]]}\n", "gedf");
    assert_eq!((o.kernel_migrations, o.jobs[0].migrations), (1, 0));
    assert_eq!(o.jobs[0].finish, Some(6 * MS));
    // One job's thread alone: nothing moves.
    let o = drive(
        "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: s, period: 20, wcet: 5}\n",
        "gedf",
    );
    assert_eq!(o.kernel_migrations, 0);
}

/// An inversion of known length, attributed to its victim (the case of
/// crates/sim/tests/metrics.rs `paws_controlled_priority_inversion...`): on 2 CPUs under
/// PAWS, l (10 ms, deadline 80) runs on CPU 1 while p (regions [1, [3, 3, 3]], deadline
/// 30) forks on CPU 0 at 1; p's threads wait in CPU 0's deque until 7: p accrues 6 ms, l
/// none. Of 2 jobs the 99th percentile (nearest rank: the 2nd) is p's 6 ms. Global EDF:
/// no victim.
#[test]
fn inversion_time_goes_to_the_job_that_waits() {
    let yaml = "platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: l, period: 100, wcet: 10, deadline: 80}\n  - {name: p, period: 100, deadline: 30, regions: [1, [3, 3, 3]]}\n";
    let o = drive(yaml, "paws");
    assert_eq!(
        (o.priority_inversions, o.priority_inversion_ns),
        (1, 6 * MS)
    );
    assert_eq!(
        o.inversion_per_job,
        crate::inversion::PerJob {
            jobs: 1,
            total_ns: 6 * MS,
            max_ns: 6 * MS,
            p99_ns: 6 * MS
        }
    );
    let g = drive(yaml, "gedf");
    assert_eq!(g.inversion_per_job, crate::inversion::PerJob::default());
    // In the run's counters.
    let mut c = Counters::default();
    o.fill_counters(&mut c);
    assert_eq!(
        (
            c.inverted_jobs,
            c.inversion_job_ns,
            c.inversion_job_max_ns,
            c.inversion_job_p99_ns
        ),
        (1, 6 * MS, 6 * MS, 6 * MS)
    );
}
