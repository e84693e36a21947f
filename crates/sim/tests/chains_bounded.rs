//! A long run with chains streams its chain records (docs/chains.md "Cost"): with its records
//! streamed (`Records::Summarised`), the memory a run of a chain set holds at its peak does not
//! grow with its length, though four times as many chain records go by (and are written as
//! `--chains-csv` lines as they go). Its own test binary:
//! a global allocator that keeps the live bytes and their peak.

use rtsched_model::results::{ChainRecord, ChainsCsvWriter, JobRecord, JobSink};
use rtsched_model::{parse_taskset, Format, TaskSet};
use rtsched_sim::{simulate, Options, Records};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Peak;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if n >= l.size() {
            grew(n - l.size());
        } else {
            LIVE.fetch_sub(l.size() - n, Ordering::Relaxed);
        }
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Peak = Peak;

/// Counts the chain records that go by and writes them as `--chains-csv` does as the run goes
/// (to nowhere: the writer's own memory is what is measured).
struct Count(u64, ChainsCsvWriter<std::io::Sink>);

impl JobSink for Count {
    fn job(&mut self, _: &JobRecord, _: u64) {}
    fn chain(&mut self, r: &ChainRecord) {
        self.0 += 1;
        self.1.chain(r);
    }
}

/// An event chain, a LET and an implicit chain on 2 CPUs, run for `seconds`.
fn set(seconds: u64) -> TaskSet {
    let yaml = format!("platform: {{cpus: 2}}\nrun: {{duration: {}}}\ntasks:\n  - {{name: a, period: 2, wcet: 0.5}}\n  - {{name: b, trigger: a, deadline: 2, wcet: 0.5}}\n  - {{name: fast, period: 1, wcet: 0.2}}\n  - {{name: slow, period: 3, wcet: 0.5}}\nchains:\n  - {{name: ab, tasks: [a, b]}}\n  - {{name: let, tasks: [fast, slow], communication: let}}\n  - {{name: imp, tasks: [fast, slow], communication: implicit}}\n", seconds * 1000);
    parse_taskset(&yaml, Format::Yaml, "bounded.yaml").unwrap()
}

/// (bytes held at the run's peak beyond those before it, chain records streamed).
fn peak_of(seconds: u64) -> (usize, u64) {
    let ts = set(seconds);
    let mut count = Count(0, ChainsCsvWriter::new(std::io::sink()).unwrap());
    count.1.begin_run("gedf", &ts.chains);
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = simulate(
        &ts,
        Options::spec("gedf").records(Records::Summarised(Some(&mut count))),
    )
    .unwrap()
    .result;
    assert!(r.chains.is_empty() && r.jobs.is_empty());
    let summaries = r.chain_summaries.as_ref().expect("streamed summaries");
    assert_eq!(
        summaries.iter().map(|s| s.instances).sum::<u64>(),
        count.0,
        "every streamed record is in the summaries"
    );
    drop(r);
    (PEAK.load(Ordering::Relaxed) - before, count.0)
}

#[test]
fn a_streamed_chain_set_holds_no_more_for_a_longer_run() {
    let _ = peak_of(1); // Warm up what the first run allocates once.
    let (short, n_short) = peak_of(10);
    let (long, n_long) = peak_of(40);
    assert!(n_long >= 4 * n_short - 8, "{n_short} then {n_long} records");
    // Held, the 3 × (n_long − n_short) extra records (56 bytes each, and twice as many job
    // records, 272 bytes each) would take megabytes; a bounded run's peak grows by the 1% of
    // values its p99s keep (about 8 bytes × 2% of the extra records per metric) and little
    // else.
    eprintln!("peak {short} bytes for {n_short} chain records, {long} for {n_long}");
    let extra = (n_long - n_short) as usize;
    let held = extra * std::mem::size_of::<ChainRecord>();
    let slack = 64 << 10;
    assert!(
        held > 4 * slack,
        "the control: holding them would be caught"
    );
    assert!(
        long <= short + slack,
        "peak {short} bytes for {n_short} chain records, {long} for {n_long}"
    );
}
