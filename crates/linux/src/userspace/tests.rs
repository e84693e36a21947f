//! Tests of userspace.rs: the decider driven by hand through the ledger.

use super::*;
use rtsched_runtime::ledger::testing::{hand_driven, Nop};

const MS: Time = 1_000_000;

/// A decider that comes late catches up in release order: task c's release at 147 ms before
/// task a's at 150 ms (a CI run under host steal wrote them the other way round, task by
/// task), an abort before a release at its instant, nothing after `now` or past the window.
#[test]
fn a_late_decider_handles_what_is_due_in_time_order() {
    let mut next = vec![150 * MS, 165 * MS, 147 * MS];
    let mut aborts = vec![154 * MS];
    let mut order = Vec::new();
    let now = 155 * MS;
    loop {
        aborts.sort_unstable_by(|a, b| b.cmp(a));
        match next_due(aborts.last().copied(), &next, |at| at < 160 * MS, now) {
            Some(Due::Abort) => order.push(("abort", aborts.pop().unwrap() / MS)),
            Some(Due::Release(t)) => {
                order.push((["a", "b", "c"][t], next[t] / MS));
                next[t] += [10, 15, 7][t] * MS;
            }
            None => break,
        }
    }
    assert_eq!(order, [("c", 147), ("a", 150), ("abort", 154), ("c", 154)]);
    assert_eq!(next_due(None, &[160 * MS], |_| true, 159 * MS), None);
    assert_eq!(next_due(None, &[150 * MS], |_| false, 159 * MS), None);
}

/// The decider's timed events take the ledger's flow (docs/chains.md): a job that suspends
/// after its first run segment makes the suspension's end the next event, and is resumed
/// then, not before; a triggered task is never released by the timer. Control: before the
/// flow is taken, the next event is the next release (the suspended job would wait for it).
#[test]
fn the_decider_resumes_a_suspended_job_at_the_suspensions_end() {
    let (ts, mut led) = hand_driven(
        "platform: {cpus: 1}\nrun: {duration: 40ms}\ntasks:\n  - {name: s, period: 20, segments: [2, {suspend: 3}, 1]}\n  - {name: b, trigger: s, deadline: 20, wcet: 1}\n",
        "s.yaml",
        "gedf",
        false,
    );
    let mut timed = Timed {
        next_release: first_releases(&ts),
        aborts: BinaryHeap::new(),
        timers: BinaryHeap::new(),
        new_timers: Vec::new(),
        tick: None,
        next_tick: u64::MAX,
        resumes: BinaryHeap::new(),
        new_resumes: Vec::new(),
        new_aborts: Vec::new(),
    };
    let (mut nop, mut jitter) = (Nop, Samples::default());
    timed.release_and_abort(&mut led, &mut nop, &mut jitter, 0);
    led.decide(0, &mut nop);
    let e = led.run.cpu(0).running.expect("s runs");
    led.complete(2 * MS, 0, e, 2 * MS, &mut nop);
    assert_eq!(
        timed.next(&led).0,
        20 * MS,
        "control: the flow not taken yet"
    );
    timed.take_flow(&mut led);
    assert_eq!(timed.next(&led), (5 * MS, 20 * MS));
    timed.resume_due(&mut led, 4 * MS);
    led.decide(4 * MS, &mut nop);
    assert!(led.run.cpu(0).running.is_none(), "suspended until 5 ms");
    timed.resume_due(&mut led, 5 * MS);
    led.decide(5 * MS, &mut nop);
    let e = led.run.cpu(0).running.expect("s's second segment runs");
    led.complete(6 * MS, 0, e, 6 * MS, &mut nop);
    // s's finish released b (by the ledger, not the timer).
    timed.take_flow(&mut led);
    led.decide(6 * MS, &mut nop);
    let b = led.run.cpu(0).running.expect("b runs");
    led.complete(7 * MS, 0, b, 7 * MS, &mut nop);
    let out = led.finish(7 * MS);
    let fin: Vec<_> = out
        .jobs
        .iter()
        .map(|j| (j.task, j.release, j.finish))
        .collect();
    assert_eq!(fin, [(0, 0, Some(6 * MS)), (1, 6 * MS, Some(7 * MS))]);
}
