//! Registration with rtsched's sched_ext scheduler (crates/scx), in the spirit of ChronOS's
//! real-time segments: a thread declares its period, relative deadline and WCET, and marks its
//! job boundaries, through BPF maps the loader pinned, with no syscall patch.
//!
//! The maps are reached with the raw bpf(2) syscall (BPF_OBJ_GET, BPF_MAP_UPDATE_ELEM,
//! BPF_MAP_DELETE_ELEM) and the slot array is mmap-ed, so a job boundary is two stores and
//! this crate needs no libbpf: only the loader links it. Slot 0 is the registry's header; its
//! `tid` word is the lock under which registration sums the admitted bandwidth.
//!
//! [`Session`] runs the loader (`rtsched-scx load`) for the kernel backends `kernel:scx-gedf`
//! and `kernel:scx-pedf`: it waits until the scheduler is attached, hands out the registry,
//! and at the end stops the loader and collects its counters.

use crate::lanes::lane_wcets;
use crate::options::RunError;
use rtsched_model::TaskSet;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Slots in the registry (MAX_SLOTS in bpf/rtsched.bpf.c), slot 0 being the header.
pub const MAX_SLOTS: usize = 256;
/// Where the kernel says whether a sched_ext scheduler is loaded.
pub const STATE: &str = "/sys/kernel/sched_ext/state";

/// One registered thread: `struct rt_slot` of bpf/rtsched.bpf.c.
#[repr(C)]
pub struct Slot {
    pub tid: AtomicU32,
    pub cpu: AtomicU32,
    pub period: AtomicU64,
    pub deadline: AtomicU64,
    pub wcet: AtomicU64,
    pub abs_deadline: AtomicU64,
    pub job: AtomicU64,
    pub runs: AtomicU64,
    pub kicks: AtomicU64,
    /// User-space mode: the CPU the decider chose for the thread, -1 none.
    pub user_cpu: std::sync::atomic::AtomicI64,
    /// User-space mode: > 0 while the thread waits for or holds the decider's lock; the
    /// scheduler then runs it whatever the choice (it must not keep the decider waiting).
    pub critical: AtomicU64,
}

const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_OBJ_GET: libc::c_long = 7;
const BPF_PROG_TEST_RUN: libc::c_long = 10;
/// CPUs the scheduler handles (MAX_CPUS in bpf/rtsched.bpf.c).
pub const MAX_CPUS: usize = 64;

fn bpf(cmd: libc::c_long, attr: &mut [u64; 10]) -> io::Result<i64> {
    // SAFETY: `attr` is a zero-padded union bpf_attr of 80 bytes, valid for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(attr) as u32,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i64)
    }
}

fn obj_get(path: &Path) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::other("path with NUL"))?;
    let mut attr = [0u64; 10];
    attr[0] = c.as_ptr() as u64;
    let fd = bpf(BPF_OBJ_GET, &mut attr)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    // SAFETY: the kernel just returned this new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Why a registration was refused.
#[derive(Debug)]
pub enum RegisterError {
    /// Admission control: the bandwidth would exceed the CPUs (or the partition's CPU).
    Bandwidth(String),
    Full,
    Io(io::Error),
}

impl std::fmt::Display for RegisterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterError::Bandwidth(s) => f.write_str(s),
            RegisterError::Full => write!(f, "the registry is full ({} threads)", MAX_SLOTS - 1),
            RegisterError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The pinned registry of a loaded scheduler.
pub struct Registry {
    slots: *mut Slot,
    len: usize,
    tid_slot: OwnedFd,
    cpus: u32,
    /// User-space mode: the thread each CPU must run (the `choice` map), and the program that
    /// kicks a CPU.
    choice: *mut std::sync::atomic::AtomicU64,
    kick: OwnedFd,
}

// SAFETY: the mapping is shared memory accessed only through atomics.
unsafe impl Send for Registry {}
unsafe impl Sync for Registry {}

/// Timing a thread declares at registration.
#[derive(Clone, Copy, Debug)]
pub struct Declared {
    pub period: u64,
    pub deadline: u64,
    pub wcet: u64,
    /// P-EDF: the CPU of its partition.
    pub cpu: Option<u32>,
}

impl Registry {
    /// Open the maps pinned under `dir` by `rtsched-scx load --pin DIR`.
    pub fn open(dir: &Path, cpus: u32) -> io::Result<Registry> {
        let slots_fd = obj_get(&dir.join("slots"))?;
        let tid_slot = obj_get(&dir.join("tid_slot"))?;
        let len = MAX_SLOTS * std::mem::size_of::<Slot>();
        // SAFETY: mapping the whole mmap-able array map; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                slots_fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let choice_fd = obj_get(&dir.join("choice"))?;
        let kick = obj_get(&dir.join("kick"))?;
        // SAFETY: as above, the `choice` array of MAX_CPUS u64.
        let c = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                MAX_CPUS * 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                choice_fd.as_raw_fd(),
                0,
            )
        };
        if c == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: the mapping just made.
            unsafe { libc::munmap(p, len) };
            return Err(e);
        }
        Ok(Registry {
            slots: p as *mut Slot,
            len,
            tid_slot,
            cpus,
            choice: c as *mut std::sync::atomic::AtomicU64,
            kick,
        })
    }

    /// User-space mode: CPU `cpu` must run thread `tid` (0: none, the fair queue); the thread's
    /// slot learns the CPU so that its wake-up prompts that CPU. Then [`Registry::kick`].
    pub fn choose(&self, cpu: usize, tid: u32, slot: Option<usize>) {
        assert!(cpu < MAX_CPUS);
        if let Some(s) = slot {
            self.slot(s).user_cpu.store(cpu as i64, Ordering::Release);
        }
        // SAFETY: within the mapping of MAX_CPUS atomics.
        unsafe { &*self.choice.add(cpu) }.store(tid as u64, Ordering::Release);
    }

    /// User-space mode: the thread of `slot` has no CPU any more.
    pub fn unchoose(&self, slot: usize) {
        self.slot(slot).user_cpu.store(-1, Ordering::Release);
    }

    /// Make `cpu` reschedule now (the BPF program rtsched_kick, run by BPF_PROG_TEST_RUN).
    pub fn kick(&self, cpu: usize) -> io::Result<()> {
        let args: [u32; 2] = [cpu as u32, 0];
        let mut attr = [0u64; 10];
        attr[0] = self.kick.as_raw_fd() as u64;
        attr[5] = (std::mem::size_of_val(&args) as u64) & 0xffff_ffff; // ctx_size_in
        attr[6] = args.as_ptr() as u64; // ctx_in
        bpf(BPF_PROG_TEST_RUN, &mut attr)?;
        match (attr[0] >> 32) as i32 {
            0 => Ok(()),
            r => Err(io::Error::other(format!(
                "rtsched_kick({cpu}) returned {r}"
            ))),
        }
    }

    pub fn slot(&self, i: usize) -> &Slot {
        assert!(i < MAX_SLOTS);
        // SAFETY: within the mapping; Slot is all atomics.
        unsafe { &*self.slots.add(i) }
    }

    fn lock(&self) -> SlotLock<'_> {
        let me = std::process::id().max(1);
        while self
            .slot(0)
            .tid
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
        SlotLock(self)
    }

    /// Admit and register thread `tid` (admission: the sum of WCET/period over registered
    /// threads stays within the CPUs, within 1 on a partition's CPU). Returns its slot. The
    /// caller then switches the thread to SCHED_EXT.
    pub fn register(&self, tid: i32, d: Declared) -> Result<usize, RegisterError> {
        let _l = self.lock();
        let bw = |wcet: u64, period: u64| wcet as f64 / period.max(1) as f64;
        let (mut total, mut free) = (bw(d.wcet, d.period), None);
        let mut on_cpu = total;
        for i in 1..MAX_SLOTS {
            let s = self.slot(i);
            if s.tid.load(Ordering::Acquire) == 0 {
                free.get_or_insert(i);
                continue;
            }
            let b = bw(
                s.wcet.load(Ordering::Relaxed),
                s.period.load(Ordering::Relaxed),
            );
            total += b;
            if d.cpu.is_some() && s.cpu.load(Ordering::Relaxed) == d.cpu.unwrap() {
                on_cpu += b;
            }
        }
        if let Some(c) = d.cpu {
            if on_cpu > 1.0 + 1e-9 {
                return Err(RegisterError::Bandwidth(format!(
                    "registration refused: CPU {c} would carry bandwidth {on_cpu:.3} (this thread {:.3}: WCET {} ns / period {} ns) > 1",
                    bw(d.wcet, d.period),
                    d.wcet,
                    d.period
                )));
            }
        }
        if total > self.cpus as f64 + 1e-9 {
            return Err(RegisterError::Bandwidth(format!(
                "registration refused: total bandwidth would be {total:.3} (this thread {:.3}: WCET {} ns / period {} ns) > {} CPUs",
                bw(d.wcet, d.period),
                d.wcet,
                d.period,
                self.cpus
            )));
        }
        let i = free.ok_or(RegisterError::Full)?;
        let s = self.slot(i);
        s.cpu.store(d.cpu.unwrap_or(u32::MAX), Ordering::Relaxed);
        s.period.store(d.period, Ordering::Relaxed);
        s.deadline.store(d.deadline, Ordering::Relaxed);
        s.wcet.store(d.wcet, Ordering::Relaxed);
        s.abs_deadline.store(u64::MAX - 1, Ordering::Relaxed);
        s.job.store(0, Ordering::Relaxed);
        s.runs.store(0, Ordering::Relaxed);
        s.kicks.store(0, Ordering::Relaxed);
        s.user_cpu.store(-1, Ordering::Relaxed);
        s.critical.store(0, Ordering::Relaxed);
        s.tid.store(tid as u32, Ordering::Release);
        let (key, val) = (tid as u32, i as u32);
        let mut attr = [0u64; 10];
        attr[0] = self.tid_slot.as_raw_fd() as u64;
        attr[1] = &key as *const u32 as u64;
        attr[2] = &val as *const u32 as u64;
        if let Err(e) = bpf(BPF_MAP_UPDATE_ELEM, &mut attr) {
            s.tid.store(0, Ordering::Release);
            return Err(RegisterError::Io(e));
        }
        Ok(i)
    }

    /// Job boundary: the absolute deadline (CLOCK_MONOTONIC ns) of the job the thread is about
    /// to run or sleep until. Written before the thread sleeps, so its wake-up carries it.
    pub fn job(&self, slot: usize, abs_deadline: u64, job: u64) {
        let s = self.slot(slot);
        s.job.store(job, Ordering::Relaxed);
        s.abs_deadline.store(abs_deadline, Ordering::Release);
    }

    /// Leave the registry: the thread is fair again.
    /// Leave the registry; returns the slot's counters: times the thread was put on a CPU,
    /// times its wake-ups kicked a CPU to preempt.
    pub fn unregister(&self, slot: usize) -> (u64, u64) {
        let _l = self.lock();
        let s = self.slot(slot);
        let counts = (
            s.runs.load(Ordering::Relaxed),
            s.kicks.load(Ordering::Relaxed),
        );
        let key = s.tid.load(Ordering::Relaxed);
        let mut attr = [0u64; 10];
        attr[0] = self.tid_slot.as_raw_fd() as u64;
        attr[1] = &key as *const u32 as u64;
        let _ = bpf(BPF_MAP_DELETE_ELEM, &mut attr);
        s.tid.store(0, Ordering::Release);
        counts
    }
}

/// Per task, the sum of its threads' registry counters (runs, kicks), added as they leave.
#[derive(Default)]
pub struct Tally(Vec<[AtomicU64; 2]>);

impl Tally {
    pub fn new(tasks: usize) -> Tally {
        Tally((0..tasks).map(|_| Default::default()).collect())
    }
    pub fn add(&self, task: usize, (runs, kicks): (u64, u64)) {
        self.0[task][0].fetch_add(runs, Ordering::Relaxed);
        self.0[task][1].fetch_add(kicks, Ordering::Relaxed);
    }
    /// `scx.task.NAME.runs` and `.kicks`, into a run's measurements.
    pub fn report(&self, names: &[String], out: &mut std::collections::BTreeMap<String, f64>) {
        for (t, name) in self.0.iter().zip(names) {
            out.insert(
                format!("scx.task.{name}.runs"),
                t[0].load(Ordering::Relaxed) as f64,
            );
            out.insert(
                format!("scx.task.{name}.kicks"),
                t[1].load(Ordering::Relaxed) as f64,
            );
        }
    }
}

struct SlotLock<'a>(&'a Registry);
impl Drop for SlotLock<'_> {
    fn drop(&mut self) {
        self.0.slot(0).tid.store(0, Ordering::Release);
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // SAFETY: the mappings made in open().
        unsafe {
            libc::munmap(self.slots as *mut libc::c_void, self.len);
            libc::munmap(self.choice as *mut libc::c_void, MAX_CPUS * 8);
        }
    }
}

/// The scheduler's admission test, before anything runs: the sum of WCET/period (over every
/// thread of every task) within the CPUs, and within 1 on each CPU of a partition. The
/// registry applies the same test thread by thread ([`Registry::register`]).
pub(crate) fn admission(ts: &TaskSet, cpu: Option<&[Option<u32>]>) -> Result<(), RunError> {
    let bw = |t: &rtsched_model::Task| {
        lane_wcets(&t.program())
            .iter()
            .map(|&w| w as f64 / t.period as f64)
            .sum::<f64>()
    };
    let total: f64 = ts.tasks.iter().map(bw).sum();
    let m = ts.platform.cpus;
    if total > m as f64 + 1e-9 {
        return Err(RunError::Input(format!(
            "{}: field 'tasks': total bandwidth {total:.3} (sum of WCET/period) exceeds the {m} CPUs; kernel:scx-* refuses it at registration"
            , ts.source
        )));
    }
    if let Some(cpu) = cpu {
        for c in 0..m {
            let on: Vec<&rtsched_model::Task> = ts
                .tasks
                .iter()
                .zip(cpu)
                .filter(|(_, &x)| x == Some(c))
                .map(|(t, _)| t)
                .collect();
            let u: f64 = on.iter().map(|t| bw(t)).sum();
            if u > 1.0 + 1e-9 {
                return Err(RunError::Input(format!(
                    "{}: task '{}': field 'cpu': CPU {c} would carry bandwidth {u:.3} > 1 ({})",
                    ts.source,
                    on.last().unwrap().name,
                    on.iter()
                        .map(|t| format!("{} {:.3}", t.name, bw(t)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Whether this kernel can load a sched_ext scheduler, and whether one is loaded.
pub fn state() -> Result<String, String> {
    match std::fs::read_to_string(STATE) {
        Ok(s) => Ok(s.trim().to_string()),
        Err(_) => Err(format!(
            "this kernel has no sched_ext ({STATE} does not exist): kernel:scx-* needs Linux 6.13 or later built with CONFIG_SCHED_CLASS_EXT (see docs/kernel.md). Nothing was run."
        )),
    }
}

/// The loader binary: $RTSCHED_SCX, else `rtsched-scx` beside the running executable, on PATH,
/// or in this checkout's target/release.
pub fn loader_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RTSCHED_SCX") {
        return Some(PathBuf::from(p));
    }
    let mut cands = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            cands.push(d.join("rtsched-scx"));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        cands.extend(std::env::split_paths(&path).map(|d| d.join("rtsched-scx")));
    }
    cands.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/rtsched-scx"));
    cands.into_iter().find(|p| p.is_file())
}

/// A loaded scheduler for one run: the loader process.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// Where the registry is pinned ([`Registry::open`]).
    pub pin: PathBuf,
}

impl Session {
    /// Start `rtsched-scx load --mode MODE` and wait until it has attached.
    pub fn start(mode: &str) -> Result<Session, String> {
        let st = state()?;
        if st != "disabled" {
            return Err(format!("a sched_ext scheduler is already loaded ({STATE}: {st}); unload it first. Nothing was run."));
        }
        let loader = loader_path().ok_or_else(|| {
            "cannot find the loader 'rtsched-scx' (build it with `cargo build --release -p rtsched-scx`, or set RTSCHED_SCX). Nothing was run."
                .to_string()
        })?;
        let pin = PathBuf::from(format!("/sys/fs/bpf/rtsched-{}", std::process::id()));
        let mut child = Command::new(&loader)
            .args(["load", "--mode", mode, "--stdin", "--pin"])
            .arg(&pin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", loader.display()))?;
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                return Err(format!("the sched_ext loader failed ({status}); its message is above. Nothing was run."));
            }
            if line.trim() == "ready" {
                break;
            }
        }
        Ok(Session {
            child,
            stdin,
            stdout,
            pin,
        })
    }

    /// Stop the loader (the kernel returns every SCHED_EXT task to the fair class) and return
    /// its counters, `name value` per line.
    pub fn stop(mut self) -> Result<Vec<(String, f64)>, String> {
        drop(self.stdin.take());
        let mut out = Vec::new();
        let mut line = String::new();
        while self.stdout.read_line(&mut line).unwrap_or(0) > 0 {
            let mut w = line.split_whitespace();
            if let (Some(k), Some(v)) = (w.next(), w.next().and_then(|v| v.parse::<f64>().ok())) {
                out.push((k.to_string(), v));
            }
            line.clear();
        }
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("the sched_ext loader ended with {status}"));
        }
        Ok(out)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.flush();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
