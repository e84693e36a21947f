//! Synthetic work for real runs. Two kinds, both cooperative (between short chunks they ask
//! whether to stop, which is what lets any policy — preemptive, partitioned, global — be
//! enforced precisely on real cores):
//!
//! - **CPU burn** ([`burn`]): arithmetic on registers for a given amount of the thread's own CPU
//!   time (CLOCK_THREAD_CPUTIME_ID: time other threads take is not counted, so no calibration).
//! - **Memory strides** ([`memory`]), for tasks with a working-set size: a *fixed number* of
//!   cache-line updates over the task's buffer (one buffer per memory group: LWFG §4.1.2's MTT),
//!   the number being demand × a rate calibrated before the run on a warm buffer, alone. The
//!   same work then takes longer when another task evicted the buffer from the shared cache
//!   or the job moved to a cold core: the interference LWFG §5 measures as lost IPC (with a
//!   PMU) shows as execution-time inflation, CPU time / demand ([`Done`]). LWFG §4.1.1 strides
//!   sequentially by one line; here the step is 97 lines, so that the next-line prefetcher
//!   does not hide the misses (every line is still visited once per pass).

use crate::sys;
use rtsched_model::Time;
use std::hint::black_box;

/// Iterations of the inner loop between clock reads: about a microsecond of arithmetic.
const CHUNK_ITERS: u32 = 200;

#[inline(never)]
fn spin(mut x: u64) -> u64 {
    for _ in 0..CHUNK_ITERS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    x
}

/// Burn up to `ns` of thread CPU time. Returns (CPU time used, completed). Stops early, between
/// chunks, as soon as `should_stop` says so. `on_chunk` sees the CPU after each chunk.
pub fn burn(
    ns: u64,
    mut should_stop: impl FnMut() -> bool,
    mut on_chunk: impl FnMut(u32),
) -> (u64, bool) {
    let start = sys::thread_cpu_ns();
    let mut x = start | 1;
    loop {
        x = spin(x);
        let used = sys::thread_cpu_ns() - start;
        on_chunk(sys::current_cpu());
        if used >= ns {
            return (used, true);
        }
        if should_stop() {
            return (used, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burns_what_it_is_asked() {
        let (used, done) = burn(2_000_000, || false, |_| {});
        assert!(done);
        assert!((2_000_000..2_200_000).contains(&used), "{used}");
        let mut n = 0;
        let (used, done) = burn(
            50_000_000,
            || {
                n += 1;
                n > 3
            },
            |_| {},
        );
        assert!(!done && used < 50_000_000);
    }
}

/// What one piece of work did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The calling thread's CPU time it took (CLOCK_THREAD_CPUTIME_ID).
    pub cpu: Time,
    /// The work done, in calibrated ns: the piece asked for if it completed, else its part.
    pub work: Time,
    pub completed: bool,
}

/// Memory-stride work over a working-set buffer (tasks with a `wss`). The amount of work is
/// fixed — a number of cache-line updates, `demand × rate`, with the rate calibrated once
/// per run, before it starts, on a warm buffer with nothing of the run running — so that
/// cache interference (a co-runner evicting the shared cache, a migration to a cold core)
/// shows as longer execution, as in the LWFG paper's measurements. Buffers are shared within
/// a memory group.
pub mod memory {
    use super::Done;
    use crate::sys::{self, thread_cpu_ns};
    use rtsched_model::Time;
    use std::hint::black_box;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::Arc;

    const LINE_WORDS: usize = 8; // 64-byte cache lines
    /// Lines between consecutive touches: an odd step that defeats the next-line prefetcher
    /// while still visiting every line of the buffer (the line count is made coprime to it).
    const STEP: usize = 97;
    /// Lines between two "should I stop?" checks: 256 lines take about 0.5 us from L2 and
    /// 5 us from memory, so a stop is seen within microseconds while the checks (a CPU
    /// number and a clock or two atomics) stay a small part of the work.
    const CHUNK: u64 = 256;
    /// Calibration: the median rate of this many trials of about `TRIAL_NS` CPU time each,
    /// after warming the buffer with two passes (at most `WARM_NS`).
    const TRIALS: usize = 9;
    const TRIAL_NS: Time = 1_000_000;
    const WARM_NS: Time = 50_000_000;
    const HUGE: usize = 2 << 20;

    /// A working-set buffer: whole cache lines, in its own anonymous mapping aligned to 2 MiB
    /// and advised for transparent huge pages (MADV_HUGEPAGE), so that a buffer of megabytes
    /// costs a handful of TLB entries: with 4 KiB pages the 97-line step lands on a new page
    /// at every touch and TLB misses, not cache misses, would dominate beyond a few MiB.
    pub struct Buffer {
        base: *mut libc::c_void,
        map_len: usize,
        words: *const AtomicU64,
        lines: usize,
        /// Where the next piece of work starts: where the last one (of any task sharing the
        /// buffer) stopped. Jobs thus sweep the whole buffer in turn, so the working set a
        /// task keeps warm is its `wss`, not the part one job touches.
        next: AtomicUsize,
    }

    // SAFETY: the mapping is only accessed through atomics, and freed once, in Drop.
    unsafe impl Send for Buffer {}
    unsafe impl Sync for Buffer {}

    impl Buffer {
        /// A buffer of at least `bytes` (whole lines), every page touched (faulted in) now.
        pub fn new(bytes: u64) -> Buffer {
            let mut lines = ((bytes as usize).div_ceil(64)).max(1);
            while lines > 1 && lines.is_multiple_of(STEP) {
                lines += 1;
            }
            let len = lines * 64;
            let map_len = len + HUGE;
            // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert!(
                base != libc::MAP_FAILED,
                "cannot map {len} bytes for a working set: {}",
                std::io::Error::last_os_error()
            );
            let start = (base as usize).next_multiple_of(HUGE);
            // SAFETY: [start, start + len) lies within the mapping (map_len = len + HUGE);
            // madvise is only advice (it fails harmlessly where THP is off).
            unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    len.next_multiple_of(HUGE)
                        .min(base as usize + map_len - start),
                    libc::MADV_HUGEPAGE,
                )
            };
            let words = start as *const AtomicU64;
            for i in 0..lines * LINE_WORDS {
                // SAFETY: i < lines * 8 words of 8 bytes = len bytes from start, in the mapping;
                // start is 2 MiB-aligned, more than AtomicU64 needs.
                unsafe { (*words.add(i)).store(i as u64, Ordering::Relaxed) };
            }
            Buffer {
                base,
                map_len,
                words,
                lines,
                next: AtomicUsize::new(0),
            }
        }
        pub fn bytes(&self) -> usize {
            self.lines * 64
        }
        pub fn lines(&self) -> usize {
            self.lines
        }
        /// Touch `count` lines starting at line `pos`; returns the next position. Relaxed
        /// atomics compile to plain loads and stores on x86 while keeping sharing defined.
        #[inline]
        pub fn stride(&self, mut pos: usize, count: u64) -> usize {
            assert!(pos < self.lines);
            for _ in 0..count {
                // SAFETY: pos < lines (checked on entry, kept below by the wrap), so the
                // word is inside the buffer, initialised in new and alive while self is.
                let w = unsafe { &*self.words.add(pos * LINE_WORDS) };
                w.store(
                    w.load(Ordering::Relaxed)
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1),
                    Ordering::Relaxed,
                );
                pos += STEP;
                if pos >= self.lines {
                    pos -= self.lines;
                }
            }
            pos
        }

        /// Touch up to `total` lines from where the last piece stopped, in chunks, asking
        /// `should_stop` between chunks. Returns the lines touched.
        #[inline]
        fn sweep(
            &self,
            total: u64,
            mut should_stop: impl FnMut() -> bool,
            mut on_chunk: impl FnMut(u32),
        ) -> u64 {
            let mut pos = self.next.load(Ordering::Relaxed) % self.lines;
            let mut done = 0u64;
            while done < total {
                let c = CHUNK.min(total - done);
                pos = self.stride(pos, c);
                done += c;
                on_chunk(sys::current_cpu());
                if done < total && should_stop() {
                    break;
                }
            }
            self.next.store(pos, Ordering::Relaxed);
            done
        }
    }

    impl Drop for Buffer {
        fn drop(&mut self) {
            // SAFETY: the mapping made in new, unmapped once; no reference outlives self.
            unsafe { libc::munmap(self.base, self.map_len) };
        }
    }

    /// What calibrating one buffer found: line updates per ns (median, slowest and fastest
    /// trial) and the CPU time calibration took.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Calibration {
        pub bytes: usize,
        pub rate: f64,
        pub min: f64,
        pub max: f64,
        pub took_ns: Time,
        /// Cache-line updates per trial.
        pub trial_lines: u64,
    }

    /// A task's memory work: its (possibly shared) buffer and the calibrated rate.
    pub struct MemWork {
        pub buf: Arc<Buffer>,
        /// Cache-line updates per nanosecond on a warm buffer, alone.
        pub rate: f64,
    }

    /// The checks a run makes between chunks cost about this: a clock read and a CPU number.
    fn typical_check() -> bool {
        black_box(sys::mono_ns()) == 0
    }

    impl MemWork {
        /// Calibrate on `buf`, on the calling thread: warm it, size a trial to about
        /// `TRIAL_NS`, then time `TRIALS` trials of the same loop jobs run (chunks, with a
        /// typical check between them; only two clock reads per trial) and take the median
        /// rate: a trial the host or another thread disturbed is an outlier, not the measure.
        pub fn calibrate(buf: Arc<Buffer>) -> (MemWork, Calibration) {
            let start = thread_cpu_ns();
            let mut warmed = 0;
            while warmed < 2 * buf.lines as u64 && thread_cpu_ns() - start < WARM_NS {
                warmed += buf.sweep(65536, || false, |_| {});
            }
            let timed = |n: u64| {
                let t0 = thread_cpu_ns();
                buf.sweep(n, typical_check, |_| {});
                (thread_cpu_ns() - t0).max(1)
            };
            let mut n = 4096u64;
            while timed(n) < TRIAL_NS / 4 {
                n *= 2;
            }
            n *= 4;
            let mut rates = [0f64; TRIALS];
            for r in rates.iter_mut() {
                *r = n as f64 / timed(n) as f64;
            }
            rates.sort_by(f64::total_cmp);
            let cal = Calibration {
                bytes: buf.bytes(),
                rate: rates[TRIALS / 2],
                min: rates[0],
                max: rates[TRIALS - 1],
                took_ns: thread_cpu_ns() - start,
                trial_lines: n,
            };
            (
                MemWork {
                    buf,
                    rate: cal.rate,
                },
                cal,
            )
        }

        /// Line updates worth `ns` of calibrated work (at least one).
        pub fn lines_for(&self, ns: Time) -> u64 {
            ((ns as f64) * self.rate).ceil().max(1.0) as u64
        }

        /// Do the work worth `ns` at the calibrated rate, stopping early between chunks if
        /// asked.
        pub fn run(
            &self,
            ns: Time,
            should_stop: impl FnMut() -> bool,
            on_chunk: impl FnMut(u32),
        ) -> Done {
            let t0 = thread_cpu_ns();
            let total = self.lines_for(ns);
            let done = self.buf.sweep(total, should_stop, on_chunk);
            let cpu = thread_cpu_ns() - t0;
            if done >= total {
                Done {
                    cpu,
                    work: ns,
                    completed: true,
                }
            } else {
                Done {
                    cpu,
                    work: (((done as f64) / self.rate) as Time).min(ns),
                    completed: false,
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Each piece continues where the last one stopped, also across the tasks sharing a
        /// buffer: two jobs of half the buffer each update every line exactly once.
        #[test]
        fn pieces_sweep_the_buffer_in_turn() {
            let buf = Arc::new(Buffer::new(64 * 200));
            let (a, b) = (
                MemWork {
                    buf: buf.clone(),
                    rate: 1.0,
                },
                MemWork {
                    buf: buf.clone(),
                    rate: 1.0,
                },
            );
            assert!(a.run(100, || false, |_| {}).completed);
            assert!(b.run(100, || false, |_| {}).completed);
            // SAFETY (test): reading the first word of each line, all initialised.
            let first =
                |l: usize| unsafe { (*buf.words.add(l * LINE_WORDS)).load(Ordering::Relaxed) };
            let once = |l: usize| {
                (l as u64 * 8)
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1)
            };
            assert!(
                (0..200).all(|l| first(l) == once(l)),
                "some line was touched twice or never"
            );
            assert_eq!(buf.next.load(Ordering::Relaxed), 0);
        }
    }
}

/// How each task's jobs do their work in a real run: CPU burn, or memory strides (tasks with
/// a working-set size), with one buffer per memory group.
pub enum Workload {
    Cpu,
    Memory(memory::MemWork),
}

impl Workload {
    pub fn execute(
        &self,
        ns: Time,
        should_stop: impl FnMut() -> bool,
        on_chunk: impl FnMut(u32),
    ) -> Done {
        match self {
            Workload::Cpu => {
                let (cpu, completed) = burn(ns, should_stop, on_chunk);
                Done {
                    cpu,
                    work: if completed { ns } else { cpu.min(ns) },
                    completed,
                }
            }
            Workload::Memory(m) => m.run(ns, should_stop, on_chunk),
        }
    }
}

/// Every task's workload for one run, and what calibrating them found.
pub struct Workloads {
    pub per_task: Vec<std::sync::Arc<Workload>>,
    /// One per buffer size, in the order calibrated.
    pub calibrations: Vec<memory::Calibration>,
}

impl Workloads {
    /// Build (and calibrate, before any of the run's threads runs) every task's workload. Tasks of one memory group share a buffer as large as the
    /// group's largest working set; a task without a group has its own. Buffers of one size
    /// are calibrated once.
    pub fn for_taskset(ts: &rtsched_model::TaskSet) -> Workloads {
        use std::collections::BTreeMap;
        use std::sync::Arc;
        let mut group_size: BTreeMap<u32, u64> = BTreeMap::new();
        for t in &ts.tasks {
            if let (Some(w), Some(g)) = (t.wss, t.group) {
                let e = group_size.entry(g).or_default();
                *e = (*e).max(w);
            }
        }
        if ts.tasks.iter().all(|t| t.wss.is_none()) {
            return Workloads {
                per_task: ts.tasks.iter().map(|_| Arc::new(Workload::Cpu)).collect(),
                calibrations: Vec::new(),
            };
        }
        // Calibrate on a thread of its own under SCHED_FIFO where permitted (a real run is),
        // so that no ordinary process preempts a trial and refills the caches meanwhile.
        std::thread::scope(|s| {
            s.spawn(|| {
                let _ = crate::sys::set_fifo(crate::sys::gettid(), 1);
                Workloads::build(ts, &group_size)
            })
            .join()
            .expect("calibration thread")
        })
    }

    fn build(
        ts: &rtsched_model::TaskSet,
        group_size: &std::collections::BTreeMap<u32, u64>,
    ) -> Workloads {
        use std::collections::BTreeMap;
        use std::sync::Arc;
        let mut group_buf: BTreeMap<u32, Arc<memory::Buffer>> = BTreeMap::new();
        let mut calibrations: Vec<memory::Calibration> = Vec::new();
        let per_task = ts
            .tasks
            .iter()
            .map(|t| match t.wss {
                None => Arc::new(Workload::Cpu),
                Some(w) => {
                    let buf = match t.group {
                        Some(g) => group_buf
                            .entry(g)
                            .or_insert_with(|| Arc::new(memory::Buffer::new(group_size[&g])))
                            .clone(),
                        None => Arc::new(memory::Buffer::new(w)),
                    };
                    let mw = match calibrations.iter().find(|c| c.bytes == buf.bytes()) {
                        Some(c) => memory::MemWork { buf, rate: c.rate },
                        None => {
                            let (mw, c) = memory::MemWork::calibrate(buf);
                            calibrations.push(c);
                            mw
                        }
                    };
                    Arc::new(Workload::Memory(mw))
                }
            })
            .collect();
        Workloads {
            per_task,
            calibrations,
        }
    }

    /// Put the calibration in a run's measurements: per buffer size, `memory.<bytes>B.lines_per_us`
    /// (the median rate the jobs' work is counted in) with `_min` / `_max` (slowest and fastest
    /// trial), and `memory.calibration_ms` (CPU time spent calibrating, before the run).
    pub fn report(&self, m: &mut std::collections::BTreeMap<String, f64>) {
        if self.calibrations.is_empty() {
            return;
        }
        for c in &self.calibrations {
            m.insert(format!("memory.{}B.lines_per_us", c.bytes), c.rate * 1e3);
            m.insert(format!("memory.{}B.lines_per_us_min", c.bytes), c.min * 1e3);
            m.insert(format!("memory.{}B.lines_per_us_max", c.bytes), c.max * 1e3);
        }
        m.insert(
            "memory.calibration_ms".into(),
            self.calibrations.iter().map(|c| c.took_ns).sum::<Time>() as f64 / 1e6,
        );
    }
}

#[cfg(test)]
mod memory_tests {
    use super::memory::*;
    use std::sync::Arc;

    #[test]
    fn stride_visits_every_line() {
        let b = Buffer::new(64 * 200);
        let mut seen = [false; 200];
        let mut pos = 0;
        for _ in 0..200 {
            seen[pos] = true;
            pos = b.stride(pos, 1);
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn calibrated_work_takes_about_its_demand_when_alone() {
        let _one = crate::options::real_threads_lock();
        let (mw, cal) = MemWork::calibrate(Arc::new(Buffer::new(32 * 1024)));
        assert!(
            cal.min <= cal.rate && cal.rate <= cal.max && cal.rate > 0.0,
            "{cal:?}"
        );
        assert_eq!(cal.bytes, 32 * 1024);
        let d = mw.run(3_000_000, || false, |_| {});
        assert!(d.completed && d.work == 3_000_000, "{d:?}");
        // Thread CPU time: only a disturbed trial or a disturbed run moves it far.
        assert!((1_500_000..6_000_000).contains(&d.cpu), "{d:?}");
    }

    #[test]
    fn stopped_work_reports_its_part() {
        let _one = crate::options::real_threads_lock();
        let (mw, _) = MemWork::calibrate(Arc::new(Buffer::new(64 * 1024)));
        let mut n = 0;
        let d = mw.run(
            50_000_000,
            || {
                n += 1;
                n > 10
            },
            |_| {},
        );
        assert!(!d.completed && d.work < 50_000_000 && d.cpu > 0, "{d:?}");
        // 11 chunks of 256 lines at the calibrated rate.
        let expect = (11.0 * 256.0 / mw.rate) as u64;
        assert!(d.work.abs_diff(expect) <= 1, "{d:?} vs {expect}");
    }
}

#[cfg(test)]
mod workload_tests {
    use super::*;
    use rtsched_model::{parse_taskset, Format};

    #[test]
    fn groups_share_one_buffer_and_each_size_is_calibrated_once() {
        let _one = crate::options::real_threads_lock();
        let ts = parse_taskset(
            "platform: {cpus: 2}
tasks:
  - {name: a, period: 10, wcet: 1, wss: 64KiB, group: 1}
  - {name: b, period: 10, wcet: 1, wss: 128KiB, group: 1}
  - {name: c, period: 10, wcet: 1, wss: 128KiB}
  - {name: d, period: 10, wcet: 1}
",
            Format::Yaml,
            "w.yaml",
        )
        .unwrap();
        let w = Workloads::for_taskset(&ts);
        let buf = |i: usize| match &*w.per_task[i] {
            Workload::Memory(m) => m.buf.clone(),
            Workload::Cpu => panic!("task {i} burns CPU"),
        };
        // a and b: one buffer, as large as the group's largest working set; c its own.
        assert!(std::sync::Arc::ptr_eq(&buf(0), &buf(1)));
        assert!(!std::sync::Arc::ptr_eq(&buf(1), &buf(2)));
        assert_eq!((buf(0).bytes(), buf(2).bytes()), (128 * 1024, 128 * 1024));
        assert!(matches!(*w.per_task[3], Workload::Cpu));
        assert_eq!(w.calibrations.len(), 1);
        let mut m = std::collections::BTreeMap::new();
        w.report(&mut m);
        assert!(m["memory.131072B.lines_per_us"] > 0.0, "{m:?}");
        assert!(m["memory.131072B.lines_per_us_min"] <= m["memory.131072B.lines_per_us"]);
        // The trials are sized to about 1 ms from one timed sweep, so they can be shorter when
        // that sweep was slow (a CI run measured 8.6 ms for nine): what holds is that each trial
        // took trial_lines / its rate >= trial_lines / the fastest rate, and the calibration
        // at least the nine of them.
        let c = &w.calibrations[0];
        let trials_ns = 9.0 * c.trial_lines as f64 / c.max;
        assert!(
            c.took_ns as f64 >= trials_ns * (1.0 - 1e-9),
            "{m:?}: {} ns < {trials_ns} ns",
            c.took_ns
        );
        assert!(
            m["memory.calibration_ms"] * 1e6 >= trials_ns * (1.0 - 1e-9),
            "{m:?}"
        );
    }

    #[test]
    fn cpu_work_reports_its_cpu_time_as_its_work() {
        let _one = crate::options::real_threads_lock();
        let d = Workload::Cpu.execute(1_000_000, || false, |_| {});
        assert!(
            d.completed && d.work == 1_000_000 && d.cpu >= 1_000_000,
            "{d:?}"
        );
        let mut n = 0;
        let d = Workload::Cpu.execute(
            50_000_000,
            || {
                n += 1;
                n > 3
            },
            |_| {},
        );
        assert!(
            !d.completed && d.work == d.cpu && d.work < 50_000_000,
            "{d:?}"
        );
    }
}
