//! Hardware performance counters of real runs: instructions, cycles and last-level-cache
//! misses per job, the quantities LWFG §4.1 reads with `perf` from the PMU (its IPC, Figs 1-2).
//!
//! The perf_event_open wrapper is written by hand here (libc has only the raw syscall number).
//! Each thread that executes jobs opens one counter *group* for itself — cycles as the leader,
//! instructions and the LLC-miss event as members — counting user space only (the jobs' work
//! is user code; user-only counting is what `perf_event_paranoid` 2 still allows for one's own
//! threads). A group is scheduled onto the PMU all at once, so one `read` gives three
//! consistent values; the readers take deltas around each piece of a job's work and add them
//! to its record (`JobRecord.hw`). If the kernel had to multiplex the group (more events than
//! counters), the deltas are scaled by time enabled / time running, as `perf stat` does.
//!
//! Whether the machine has a PMU at all is probed once per run, before it starts ([`probe`]).
//! A virtual machine without a virtual PMU (this project's Firecracker guests) has none: the
//! run then says so in `unavailable["hardware_counters"]`, with the kernel's reason, leaves
//! every `hw` empty, and execution-time inflation (`exec_ns / demand_ns`, [`crate::work`]) is
//! the measure of cache interference instead.

use crate::sys::PerfEventAttr;
use rtsched_model::results::{HwCounters, RunResult};
use std::io;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_HW_CACHE: u32 = 3;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
const PERF_COUNT_HW_CACHE_MISSES: u64 = 3;
/// PERF_COUNT_HW_CACHE_LL | PERF_COUNT_HW_CACHE_OP_READ << 8 | PERF_COUNT_HW_CACHE_RESULT_MISS << 16.
const LL_READ_MISS: u64 = 2 | (1 << 16);

const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 2;
const PERF_FORMAT_GROUP: u64 = 8;
/// perf_event_attr flag bits: exclude_kernel (bit 5), exclude_hv (bit 6).
const EXCLUDE_KERNEL_HV: u64 = (1 << 5) | (1 << 6);
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// Which event counts LLC misses: the generic cache event for last-level read misses, or,
/// where the PMU driver does not map that one, the generic "cache misses" hardware event (on
/// most CPUs also the last level's misses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlcEvent {
    LlReadMiss,
    CacheMisses,
}

impl LlcEvent {
    fn event(self) -> (u32, u64) {
        match self {
            LlcEvent::LlReadMiss => (PERF_TYPE_HW_CACHE, LL_READ_MISS),
            LlcEvent::CacheMisses => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            LlcEvent::LlReadMiss => "ll_read_miss",
            LlcEvent::CacheMisses => "cache_misses",
        }
    }
}

/// perf_event_open(2) for the calling thread on any CPU, counting user space only; `group`
/// is the leader's fd or -1.
fn open_event(kind: u32, config: u64, group: i32, read_format: u64) -> io::Result<i32> {
    let attr = PerfEventAttr {
        type_: kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config,
        read_format,
        flags: EXCLUDE_KERNEL_HV,
        ..Default::default()
    };
    // SAFETY: attr is a valid, fully initialised perf_event_attr of the size it declares;
    // pid 0 = the calling thread, cpu -1 = any, group -1 or an fd this thread opened.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            0,
            -1,
            group,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(fd as i32)
    }
}

/// A group of up to three counters of the calling thread, read together.
pub struct Group {
    fds: Vec<i32>,
}

/// One read of a group: time enabled and running (ns), and each counter's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub enabled: u64,
    pub running: u64,
    pub values: [u64; 3],
}

impl Group {
    /// Open `events` ((type, config), the first the leader) for the calling thread. On a
    /// failure, says which event the kernel refused.
    pub fn open(events: &[(u32, u64)]) -> Result<Group, (usize, io::Error)> {
        assert!(
            !events.is_empty() && events.len() <= 3,
            "a group of 1 to 3 events"
        );
        let mut g = Group {
            fds: Vec::with_capacity(events.len()),
        };
        for (i, &(kind, config)) in events.iter().enumerate() {
            let leader = g.fds.first().copied().unwrap_or(-1);
            let format =
                PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            // On an error `g` is dropped, closing what was opened.
            g.fds
                .push(open_event(kind, config, leader, format).map_err(|e| (i, e))?);
        }
        Ok(g)
    }

    /// The group's counters now (zeros if the read fails).
    pub fn read(&self) -> Sample {
        // nr, time_enabled, time_running, then one value per event (PERF_FORMAT_GROUP).
        let mut buf = [0u64; 6];
        let want = (3 + self.fds.len()) * 8;
        // SAFETY: reading at most `want` <= 48 bytes into a 48-byte buffer.
        let got = unsafe { libc::read(self.fds[0], buf.as_mut_ptr() as *mut libc::c_void, want) };
        let mut s = Sample::default();
        if got == want as isize && buf[0] as usize == self.fds.len() {
            s.enabled = buf[1];
            s.running = buf[2];
            s.values[..self.fds.len()].copy_from_slice(&buf[3..3 + self.fds.len()]);
        }
        s
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // Members first, then the leader.
        for &fd in self.fds.iter().rev() {
            // SAFETY: fds opened by this group, each closed once.
            unsafe { libc::close(fd) };
        }
    }
}

impl Sample {
    /// Each counter's increase since `before`, scaled up by enabled / running if the group
    /// was multiplexed meanwhile (0 if it never ran).
    pub fn delta(&self, before: &Sample) -> [u64; 3] {
        let (de, dr) = (
            self.enabled.saturating_sub(before.enabled),
            self.running.saturating_sub(before.running),
        );
        let mut out = [0u64; 3];
        for (o, (a, b)) in out
            .iter_mut()
            .zip(self.values.iter().zip(before.values.iter()))
        {
            let d = a.saturating_sub(*b);
            *o = if dr == 0 {
                0
            } else if dr < de {
                (d as u128 * de as u128 / dr as u128) as u64
            } else {
                d
            };
        }
        out
    }

    /// As hardware counters (a group opened by [`HwGroup`]: cycles, instructions, LLC misses).
    pub fn since(&self, before: &Sample) -> HwCounters {
        let [cycles, instructions, llc_misses] = self.delta(before);
        HwCounters {
            instructions,
            cycles,
            llc_misses,
        }
    }
}

/// The calling thread's hardware counters: cycles (leader), instructions, LLC misses.
pub struct HwGroup(Group);

impl HwGroup {
    fn open(llc: LlcEvent) -> Result<HwGroup, (usize, io::Error)> {
        Group::open(&[
            (PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
            (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
            llc.event(),
        ])
        .map(HwGroup)
    }

    /// For a thread of a run whose [`probe`] found `llc`; `None` if this thread cannot have
    /// them after all (its jobs then have no `hw`).
    pub fn open_for_thread(llc: LlcEvent) -> Option<HwGroup> {
        HwGroup::open(llc).ok()
    }

    pub fn read(&self) -> Sample {
        self.0.read()
    }
}

/// Add a piece's counters to a job's.
pub fn add(hw: &mut Option<HwCounters>, d: HwCounters) {
    let h = hw.get_or_insert_with(HwCounters::default);
    h.instructions += d.instructions;
    h.cycles += d.cycles;
    h.llc_misses += d.llc_misses;
}

const NAMES: [&str; 3] = [
    "PERF_COUNT_HW_CPU_CYCLES",
    "PERF_COUNT_HW_INSTRUCTIONS",
    "the LLC-miss event",
];

/// Can this machine count cycles, instructions and LLC misses for a thread? Tried once, on
/// the calling thread (the counters are closed again). `Ok`: which LLC event to use; `Err`:
/// why not, in words.
pub fn probe() -> Result<LlcEvent, String> {
    let mut last = None;
    for llc in [LlcEvent::LlReadMiss, LlcEvent::CacheMisses] {
        match HwGroup::open(llc) {
            Ok(g) => {
                let _ = g.read();
                return Ok(llc);
            }
            // Only the LLC event refused: try the other one.
            Err((2, e)) => last = Some((2, e)),
            Err(e) => return Err(reason(NAMES[e.0], &e.1)),
        }
    }
    let (i, e) = last.expect("both LLC events were tried");
    Err(reason(NAMES[i], &e))
}

/// Why perf_event_open refused `what`, for a person: the kernel's error and what it means.
pub fn reason(what: &str, e: &io::Error) -> String {
    let errno = e.raw_os_error().unwrap_or(0);
    let why = match errno {
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV => {
            if pmu_listed() {
                "this PMU does not support the event".to_string()
            } else {
                "no hardware PMU: none is listed in /sys/bus/event_source/devices (a virtual machine without a virtual PMU)".to_string()
            }
        }
        libc::EACCES | libc::EPERM => {
            let p = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "?".into());
            format!("not permitted: kernel.perf_event_paranoid = {p} (counting one's own threads in user space needs <= 2, or CAP_PERFMON)")
        }
        _ => "the kernel refused it".to_string(),
    };
    format!("perf_event_open({what}) failed: {e}; {why}")
}

/// Is a core PMU listed (named `cpu`, or `cpu_core`/`cpu_atom` on hybrid Intel CPUs)?
fn pmu_listed() -> bool {
    ["cpu", "cpu_core", "cpu_atom"].iter().any(|d| {
        std::path::Path::new("/sys/bus/event_source/devices")
            .join(d)
            .exists()
    })
}

/// The text of `unavailable["hardware_counters"]` for a probe failure.
pub fn unavailable_text(why: &str) -> String {
    format!(
        "not available here: {why}; execution-time inflation (exec_ns / demand_ns) is the measure"
    )
}

/// Record the run's probe: on success, which LLC event was used (`hw.llc_event.NAME = 1` in
/// measurements); on failure, `unavailable["hardware_counters"]`.
pub fn report(probe: &Result<LlcEvent, String>, r: &mut RunResult) {
    match probe {
        Ok(llc) => {
            r.measurements
                .insert(format!("hw.llc_event.{}", llc.name()), 1.0);
        }
        Err(why) => {
            r.unavailable
                .insert("hardware_counters".into(), unavailable_text(why));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERF_TYPE_SOFTWARE: u32 = 1;
    const SW_TASK_CLOCK: u64 = 1;
    const SW_PAGE_FAULTS: u64 = 2;
    const SW_PAGE_FAULTS_MIN: u64 = 5;

    /// The group mechanics (open a leader and members, one read of all, deltas) on software
    /// events, which every Linux has: the same code the hardware group runs. (Counting user
    /// space only, as the hardware group does; a page fault counts where user code faulted.)
    #[test]
    fn a_software_group_counts_the_calling_threads_work() {
        let g = match Group::open(&[
            (PERF_TYPE_SOFTWARE, SW_TASK_CLOCK),
            (PERF_TYPE_SOFTWARE, SW_PAGE_FAULTS),
            (PERF_TYPE_SOFTWARE, SW_PAGE_FAULTS_MIN),
        ]) {
            Ok(g) => g,
            Err((i, e)) => {
                // perf_event_open itself may be forbidden (paranoid 3, seccomp): nothing to test.
                eprintln!("software perf events not available: event {i}: {e}");
                return;
            }
        };
        let a = g.read();
        let (_, done) = crate::work::burn(3_000_000, || false, |_| {});
        // Touch 256 fresh pages of a new mapping (not the allocator's, which may reuse
        // memory already faulted in): page faults, all minor.
        let len = 256 * 4096;
        // SAFETY: a fresh private anonymous mapping, written within its length, then unmapped.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as *mut u8;
            assert!(p as *mut libc::c_void != libc::MAP_FAILED);
            for i in (0..len).step_by(4096) {
                std::ptr::write_volatile(p.add(i), 1);
            }
            libc::munmap(p as *mut libc::c_void, len);
        }
        let b = g.read();
        let [task_clock, faults, minor] = b.delta(&a);
        assert!(done);
        assert!(
            b.enabled > a.enabled && b.running > a.running,
            "{a:?} {b:?}"
        );
        assert!(
            task_clock >= 3_000_000,
            "task clock {task_clock} ns for 3 ms of burn"
        );
        // One read gives both fault counters at one instant: minor faults are among the faults.
        // (Not asserted >= 256: in one of about 50 runs here neither counted the touches.)
        assert!(minor <= faults, "{a:?} {b:?}");
    }

    #[test]
    fn deltas_scale_for_multiplexing_and_never_underflow() {
        let before = Sample {
            enabled: 100,
            running: 100,
            values: [10, 20, 30],
        };
        let after = Sample {
            enabled: 300,
            running: 200,
            values: [60, 70, 40],
        };
        // Ran 100 of the 200 ns enabled: the counts are doubled.
        assert_eq!(after.delta(&before), [100, 100, 20]);
        let h = after.since(&before);
        assert_eq!((h.cycles, h.instructions, h.llc_misses), (100, 100, 20));
        // Never scheduled: nothing counted. A counter that went backwards: 0.
        assert_eq!(
            Sample {
                enabled: 300,
                running: 100,
                values: [60, 70, 40]
            }
            .delta(&before),
            [0; 3]
        );
        assert_eq!(
            Sample {
                enabled: 200,
                running: 200,
                values: [5, 20, 30]
            }
            .delta(&before),
            [0, 0, 0]
        );
        let mut hw = None;
        add(&mut hw, h);
        add(&mut hw, h);
        assert_eq!(
            hw,
            Some(HwCounters {
                instructions: 200,
                cycles: 200,
                llc_misses: 40
            })
        );
    }

    /// On this project's VMs (no PMU) the probe reports why, in words, and never panics; on a
    /// machine with a PMU it finds an LLC event and a thread can open and read the group.
    #[test]
    fn the_probe_says_whether_hardware_counters_exist() {
        match probe() {
            Ok(llc) => {
                let g = HwGroup::open_for_thread(llc).expect("the probe succeeded on this thread");
                let a = g.read();
                crate::work::burn(2_000_000, || false, |_| {});
                let h = g.read().since(&a);
                assert!(h.cycles > 0 && h.instructions > 0, "{h:?}");
            }
            Err(why) => {
                assert!(
                    why.starts_with("perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: "),
                    "{why}"
                );
                if !pmu_listed() {
                    assert!(why.contains("no hardware PMU"), "{why}");
                }
                let text = unavailable_text(&why);
                assert!(
                    text.starts_with("not available here: ")
                        && text.ends_with(
                            "execution-time inflation (exec_ns / demand_ns) is the measure"
                        )
                );
                let ts = rtsched_model::parse_taskset(
                    "platform: {cpus: 1}\ntasks: [{name: a, period: 10, wcet: 1}]\n",
                    rtsched_model::Format::Yaml,
                    "p.yaml",
                )
                .unwrap();
                let mut r = RunResult::new("testbed", "testbed:pedf", &ts);
                report(&Err(why), &mut r);
                assert_eq!(r.unavailable.get("hardware_counters"), Some(&text));
            }
        }
    }

    #[test]
    fn refusals_are_explained() {
        let e = |n| io::Error::from_raw_os_error(n);
        let r = reason("PERF_COUNT_HW_CPU_CYCLES", &e(libc::EACCES));
        assert!(
            r.contains("Permission denied") && r.contains("kernel.perf_event_paranoid = "),
            "{r}"
        );
        let r = reason("PERF_COUNT_HW_INSTRUCTIONS", &e(libc::ENOENT));
        assert!(
            r.starts_with(
                "perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) failed: No such file or directory"
            ),
            "{r}"
        );
        assert!(
            r.contains(if pmu_listed() {
                "does not support the event"
            } else {
                "no hardware PMU"
            }),
            "{r}"
        );
        assert!(reason("x", &e(libc::EINVAL)).ends_with("the kernel refused it"));
    }
}
