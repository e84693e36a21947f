//! PAWS (Fonseca, Nogueira, Maia, Pinho, §4): the readings of docs/papers/paws.md that the
//! paper leaves open and `paws` offers as options (`pull=`, `master=`), the authors' kernel
//! where `paws` follows it (a stolen thread taken back by its home core is local again), and
//! who preempts — each on a hand-worked case, every reading of an option run on it.
//!
//! Times are in ms; an interval is (cpu, task, thread, start, end), listed in (start, cpu)
//! order. Deadlines in the comments are absolute.

use rtsched_model::results::RunResult;
use rtsched_model::{parse_taskset, Format, TaskSet, Time};
use rtsched_sim::{simulate, simulate_with_stats};

const MS: u64 = 1_000_000;

fn ts(yaml: &str) -> TaskSet {
    parse_taskset(yaml, Format::Yaml, "paws_readings.yaml").unwrap()
}

type Iv = (u32, u32, u32, f64, f64);

/// (cpu, task, thread, start ms, end ms), in (start, cpu) order.
fn ivs(r: &RunResult) -> Vec<Iv> {
    let ms = |t: Time| t as f64 / MS as f64;
    let mut v: Vec<Iv> = r.intervals.iter().map(|i| (i.cpu, i.task, i.thread, ms(i.start), ms(i.end))).collect();
    v.sort_by(|a, b| (a.3, a.0, a.4).partial_cmp(&(b.3, b.0, b.4)).unwrap());
    v
}

fn finishes(r: &RunResult) -> Vec<Option<f64>> {
    r.jobs.iter().map(|j| j.finish.map(|f| f as f64 / MS as f64)).collect()
}

fn run(t: &TaskSet, spec: &str) -> RunResult {
    simulate(t, spec, true).unwrap()
}

fn stat(t: &TaskSet, spec: &str, name: &str) -> f64 {
    let stats = simulate_with_stats(t, spec, false).unwrap().1;
    stats.iter().find(|(n, _)| n == name).map(|(_, v)| *v).unwrap_or_else(|| panic!("no stat {name}"))
}

// ------------------------------------------------------------------------------------------
// Who preempts: only arrivals; a preempted stolen thread requeued globally does not
// ------------------------------------------------------------------------------------------

/// 2 CPUs (tasks b=0, r=1, p=2, a1=3, a2=4):
///   0: the global queue holds b (40) and r (200): CPU 0 takes b [0,3.5], CPU 1 r's region 0.
///   1: r forks on CPU 1: deque(200) = [r0 r1]; CPU 1 takes r1 [1,2].
///   2: p (52) arrives and preempts r1 (200, the latest): r1 back to CPU 1's deque (4 left).
///      p's region 0 on CPU 1 [2,3].
///   3: p forks on CPU 1: deque(52) = [p0 p1] before deque(200); CPU 1 takes p1 [3,4].
///   3.5: b ends; CPU 0 steals the top of CPU 1's most urgent deque: p0 [3.5,4].
///   4: a1 (10) and a2 (11) arrive. a1 preempts p1 (52, thread 1: the latest key), a local
///      thread: back to CPU 1's deque(52) (3 left). a2 preempts p0 (52), a stolen thread: to
///      the global queue (Rule F; 3.5 left). a1 [4,5] on CPU 1, a2 [4,11] on CPU 0.
///   5: a1 ends; CPU 1 takes p1 from its deque [5,8].
///   8: p1 ends; CPU 1 takes its own r1 (200) [8,12], although p0 (52) waits in the global
///      queue: the requeued stolen thread is no arrival and preempts nothing, and a core reads
///      the global queue only when its local queue is empty (Rule D).
///  11: a2 ends; CPU 0 has no local work and takes p0 from the global queue [11,14.5].
///  12: r1 ends; CPU 1 takes r0 [12,17].
/// Fails if a stolen thread requeued in the global queue keeps the right to preempt (p0 would
/// take CPU 1 from r1 at 8).
const REQUEUED_STOLEN: &str = "platform: {cpus: 2}
run: {duration: 100}
tasks:
  - {name: b, period: 100, deadline: 40, wcet: 3.5}
  - {name: r, period: 200, regions: [1, [5, 5]]}
  - {name: p, period: 100, offset: 2, deadline: 50, regions: [1, [4, 4]]}
  - {name: a1, period: 100, offset: 4, deadline: 6, wcet: 1}
  - {name: a2, period: 100, offset: 4, deadline: 7, wcet: 7}
";

#[test]
fn a_preempted_stolen_thread_requeued_globally_preempts_nothing() {
    let r = run(&ts(REQUEUED_STOLEN), "paws");
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0.0, 3.5),
            (1, 1, 0, 0.0, 1.0),
            (1, 1, 1, 1.0, 2.0),
            (1, 2, 0, 2.0, 3.0),
            (1, 2, 1, 3.0, 4.0),
            (0, 2, 0, 3.5, 4.0),
            (0, 4, 0, 4.0, 11.0),
            (1, 3, 0, 4.0, 5.0),
            (1, 2, 1, 5.0, 8.0),
            (1, 1, 1, 8.0, 12.0),
            (0, 2, 0, 11.0, 14.5),
            (1, 1, 0, 12.0, 17.0),
        ]
    );
    assert_eq!(finishes(&r), vec![Some(3.5), Some(17.0), Some(14.5), Some(5.0), Some(11.0)]);
}

// ------------------------------------------------------------------------------------------
// The authors' kernel: a stolen thread taken back by its home core is local again
// ------------------------------------------------------------------------------------------

/// `pull_task_rtws` clears a thread's `stolen` mark when the core pulling it from the global
/// queue is the one it was stolen from, so a later preemption returns it to that core's deque.
/// 2 CPUs (tasks p=0, a=1, b=2, c=3, g=4):
///   0: p (100, regions [1, [4, 4]]) region 0 on CPU 0 [0,1].
///   1: p forks on CPU 0: deque = [p0 p1]; CPU 0 takes p1, CPU 1 steals p0 (home: CPU 0).
///   2: a (10) and b (11) arrive: a preempts p1 (thread 1, the latest key; back to CPU 0's
///      deque), b preempts p0 (stolen: to the global queue). a [2,3] on CPU 0, b [2,10] on 1.
///   3: a ends; CPU 0 takes p1 from its deque [3,6].
///   6: p1 ends; CPU 0's local queue is empty: it takes p0 from the global queue [6,7] —
///      its home core: p0 is a local thread of CPU 0 again.
///   7: c (20) arrives and preempts p0 (100, the latest): p0 goes back to CPU 0's deque
///      (before: to the global queue, as a stolen thread). c [7,9].
///   8: g (90) arrives; the running deadlines are 20 and 11: g waits in the global queue.
///   9: c ends; CPU 0 takes p0 from its deque [9,11] (g waits: Rule C before D); p ends at
///      11. 10: b ends; CPU 1 takes g [10,12].
/// Before (p0 stays stolen): at 9 CPU 0 has no local work and takes the global head, g (90)
/// before p0 (100): g [9,11], then p0 [10,12] on CPU 1; p ends at 12, g at 11.
#[test]
fn a_stolen_thread_taken_back_by_its_home_core_is_local_again() {
    let t = ts("platform: {cpus: 2}
run: {duration: 100}
tasks:
  - {name: p, period: 100, regions: [1, [4, 4]]}
  - {name: a, period: 100, offset: 2, deadline: 8, wcet: 1}
  - {name: b, period: 100, offset: 2, deadline: 9, wcet: 8}
  - {name: c, period: 100, offset: 7, deadline: 13, wcet: 2}
  - {name: g, period: 100, offset: 8, deadline: 82, wcet: 2}
");
    let r = run(&t, "paws");
    assert_eq!(
        ivs(&r),
        vec![
            (0, 0, 0, 0.0, 1.0),
            (0, 0, 1, 1.0, 2.0),
            (1, 0, 0, 1.0, 2.0),
            (0, 1, 0, 2.0, 3.0),
            (1, 2, 0, 2.0, 10.0),
            (0, 0, 1, 3.0, 6.0),
            (0, 0, 0, 6.0, 7.0),
            (0, 3, 0, 7.0, 9.0),
            (0, 0, 0, 9.0, 11.0),
            (1, 4, 0, 10.0, 12.0),
        ]
    );
    assert_eq!(finishes(&r), vec![Some(11.0), Some(3.0), Some(10.0), Some(9.0), Some(12.0)]);
    // p0 was requeued twice: to the global queue at 2 (stolen), to CPU 0's deque at 7.
    assert_eq!((stat(&t, "paws", "requeued_global"), stat(&t, "paws", "requeued_local")), (1.0, 2.0));
}

// ------------------------------------------------------------------------------------------
// pull=empty|inversion: when a core with local work takes the global head
// ------------------------------------------------------------------------------------------

/// Rule D's set in paws_rules.rs (tasks r=0, x=1, y=2, q=3; 2 CPUs): at 4 y (7) ends on
/// CPU 1, whose deque holds x's threads (100), while q (10) waits in the global queue.
///   `pull=empty` (Rule D as written, the default): CPU 1 takes x1 [4,7]; q waits for CPU 0,
///   free at 6: q [6,8]; CPU 1 takes x0 [7,11]. x ends at 11, q at 8.
///   `pull=inversion` (the kernel's `dec_pjobs_rtws`): CPU 1's deadline level drops from y's
///   7 to 100, and the global head's 10 is earlier than 100, so CPU 1 takes q [4,6]. At 6 r
///   ends on CPU 0 and q on CPU 1: CPU 1 takes x1 [6,9] (its level rises from 10 to 100 but
///   the global queue is empty); CPU 0 steals x0 [6,10]. x ends at 10, q at 6.
const RULE_D: &str = "platform: {cpus: 2}
run: {duration: 100}
tasks:
  - {name: r, period: 100, deadline: 9, wcet: 6}
  - {name: x, period: 100, regions: [1, [4, 4]]}
  - {name: y, period: 100, offset: 2, deadline: 5, wcet: 2}
  - {name: q, period: 100, offset: 3, deadline: 7, wcet: 2}
";

#[test]
fn pull_inversion_takes_the_global_head_when_the_local_deadline_level_drops() {
    let t = ts(RULE_D);
    let common = [(0, 0, 0, 0.0, 6.0), (1, 1, 0, 0.0, 1.0), (1, 1, 1, 1.0, 2.0), (1, 2, 0, 2.0, 4.0)];
    let empty = run(&t, "paws:pull=empty");
    assert_eq!(ivs(&empty)[..4], common);
    assert_eq!(ivs(&empty)[4..], [(1, 1, 1, 4.0, 7.0), (0, 3, 0, 6.0, 8.0), (1, 1, 0, 7.0, 11.0)]);
    assert_eq!(finishes(&empty), vec![Some(6.0), Some(11.0), Some(4.0), Some(8.0)]);
    assert_eq!(ivs(&run(&t, "paws")), ivs(&empty), "pull=empty is the default");

    let inversion = run(&t, "paws:pull=inversion");
    assert_eq!(ivs(&inversion)[..4], common);
    assert_eq!(ivs(&inversion)[4..], [(1, 3, 0, 4.0, 6.0), (0, 1, 0, 6.0, 10.0), (1, 1, 1, 6.0, 9.0)]);
    assert_eq!(finishes(&inversion), vec![Some(6.0), Some(10.0), Some(4.0), Some(6.0)]);
    assert_eq!(stat(&t, "paws:pull=inversion", "inversion_pulls"), 1.0);
    assert_eq!(stat(&t, "paws", "inversion_pulls"), 0.0);
}

/// The set of `a_preempted_stolen_thread_requeued_globally_preempts_nothing` under
/// `pull=inversion`: at 8 p1 (52) ends on CPU 1, whose local queue now holds only r's threads
/// (200), and p0 (52) heads the global queue: CPU 1 takes p0 [8,11.5] — its home core, so p0
/// is local there again. 11: a2 ends; CPU 0 steals r0 from CPU 1 [11,16]. 11.5: p ends; CPU 1
/// takes r1 [11.5,15.5]. p ends at 11.5 (14.5 under `pull=empty`), r at 16 (17).
#[test]
fn pull_inversion_brings_a_requeued_stolen_thread_back_to_its_home_core() {
    let t = ts(REQUEUED_STOLEN);
    let r = run(&t, "paws:pull=inversion");
    assert_eq!(
        ivs(&r)[8..],
        [(1, 2, 1, 5.0, 8.0), (1, 2, 0, 8.0, 11.5), (0, 1, 0, 11.0, 16.0), (1, 1, 1, 11.5, 15.5)]
    );
    assert_eq!(finishes(&r), vec![Some(3.5), Some(16.0), Some(11.5), Some(5.0), Some(11.0)]);
    assert_eq!(stat(&t, "paws:pull=inversion", "inversion_pulls"), 1.0);
}

// ------------------------------------------------------------------------------------------
// master=global|joining: where the master thread resumes after a join
// ------------------------------------------------------------------------------------------

/// 2 CPUs, p (regions [1, [3, 2], 1]) alone: CPU 0 runs region 0 [0,1] and forks; it takes
/// thread 1 [1,3], CPU 1 steals thread 0 [1,4]. The region joins on CPU 1 at 4; CPU 0 has
/// been idle since 3.
///   `master=global` (the default): the master's one-thread region arrives in the global
///   queue like a job, and the first free core, CPU 0, takes it [4,5]: a fresh thread run
///   away from the CPU it was forked on (kernel migrations: the steal and this, 2).
///   `master=joining`: it is forked on CPU 1, which takes it [4,5] (kernel migrations: 1).
#[test]
fn master_joining_resumes_the_master_on_the_joining_core() {
    let t = ts("platform: {cpus: 2}\nrun: {duration: 20}\ntasks:\n  - {name: p, period: 20, regions: [1, [3, 2], 1]}\n");
    let before = [(0, 0, 0, 0.0, 1.0), (0, 0, 1, 1.0, 3.0), (1, 0, 0, 1.0, 4.0)];
    let global = run(&t, "paws:master=global");
    assert_eq!(ivs(&global)[..3], before);
    assert_eq!(ivs(&global)[3..], [(0, 0, 0, 4.0, 5.0)]);
    assert_eq!(global.counters.kernel_migrations, 2);
    assert_eq!(ivs(&run(&t, "paws")), ivs(&global), "master=global is the default");

    let joining = run(&t, "paws:master=joining");
    assert_eq!(ivs(&joining)[..3], before);
    assert_eq!(ivs(&joining)[3..], [(1, 0, 0, 4.0, 5.0)]);
    assert_eq!(joining.counters.kernel_migrations, 1);
    assert_eq!(finishes(&joining), finishes(&global));
}
