//! rtsched's sched_ext scheduler: the BPF program (bpf/rtsched.bpf.c, compiled by build.rs)
//! and its loader. [`Loaded::load`] checks the kernel and privileges, writes the
//! configuration into the object's read-only data, loads it (the kernel verifies every
//! program), pins the registry maps for the threads that register (rtsched_linux::scx) and
//! attaches the struct_ops; dropping it detaches, after which the kernel returns every
//! SCHED_EXT task to the fair class.

use libbpf_rs::{Link, MapCore, Object, ObjectBuilder};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

#[cfg(rtsched_bpf)]
static OBJECT: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/rtsched.bpf.o")));
#[cfg(not(rtsched_bpf))]
static OBJECT: Option<&[u8]> = None;

pub const STATE: &str = rtsched_linux::scx::STATE;

/// Scheduling modes of the BPF program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Global EDF; `linear` finds the CPU to preempt by scanning instead of the cpudl heap.
    Gedf { linear: bool },
    /// Partitioned EDF: each registered thread names its CPU.
    Pedf,
    /// User space decides: BPF dispatches the thread a decider wrote into `choice`.
    User,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "gedf" => Ok(Mode::Gedf { linear: false }),
            "gedf-linear" => Ok(Mode::Gedf { linear: true }),
            "pedf" => Ok(Mode::Pedf),
            "user" => Ok(Mode::User),
            o => Err(format!(
                "unknown mode '{o}' (known: gedf, gedf-linear, pedf, user)"
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Gedf { linear: false } => "gedf",
            Mode::Gedf { linear: true } => "gedf-linear",
            Mode::Pedf => "pedf",
            Mode::User => "user",
        }
    }
}

/// The `cfg` of bpf/rtsched.bpf.c (its only read-only global, at offset 0 of .rodata).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub mode: u32,
    pub linear: u32,
    pub nr_cpus: u32,
    pub pad: u32,
    pub fair_slice_ns: u64,
    pub fair_starve_ns: u64,
}

/// The BPF program's counters, in the order of its `stats` map.
pub const STATS: [&str; 15] = [
    "rt_enqueues",
    "fair_enqueues",
    "rt_dispatches",
    "fair_dispatches",
    "kick_idle",
    "kick_preempt",
    "no_target",
    "fair_rescues",
    "heap_finds",
    "scan_finds",
    "user_kicks",
    "user_misses",
    "user_move_failures",
    "user_boosts",
    "user_unchosen",
];

/// What the loader pins under its directory for the threads that register and the decider.
pub const PINNED_MAPS: [&str; 3] = ["slots", "tid_slot", "choice"];

pub struct Options {
    pub mode: Mode,
    /// The fair queue is served at least this often (ns) however busy the real-time jobs are.
    pub fair_starve_ns: u64,
    pub fair_slice_ns: u64,
    /// Directory under a bpffs where the registry maps are pinned.
    pub pin: Option<PathBuf>,
    /// Attach the scheduler (false: load and verify only).
    pub attach: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Gedf { linear: false },
            fair_starve_ns: 1_000_000_000,
            fair_slice_ns: 2_000_000,
            pin: None,
            attach: true,
        }
    }
}

/// One program's verification: instructions the verifier processed, and translated size.
pub struct Verified {
    pub program: String,
    pub verified_insns: u32,
    pub insns: usize,
}

pub struct Loaded {
    obj: Object,
    link: Option<Link>,
    pin: Option<PathBuf>,
}

fn online_cpus() -> u32 {
    // SAFETY: plain query.
    (unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).max(1) as u32
}

/// Why loading is not possible here, before anything is changed.
pub fn precheck(attach: bool) -> Result<(), String> {
    if OBJECT.is_none() {
        return Err(format!(
            "this build has no BPF scheduler: {}",
            option_env!("RTSCHED_BPF_MISSING").unwrap_or("unknown")
        ));
    }
    let st = rtsched_linux::scx::state()?;
    // SAFETY: plain query.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "loading a BPF scheduler needs root (CAP_BPF and CAP_SYS_ADMIN). Nothing was changed."
                .into(),
        );
    }
    if attach && st != "disabled" {
        let ops = std::fs::read_to_string("/sys/kernel/sched_ext/root/ops").unwrap_or_default();
        return Err(format!("a sched_ext scheduler is already loaded ({STATE}: {st}, ops: {}). Nothing was changed.", ops.trim()));
    }
    if online_cpus() > 64 {
        return Err(format!(
            "this machine has {} CPUs; the scheduler's cpudl mask holds 64",
            online_cpus()
        ));
    }
    Ok(())
}

impl Loaded {
    pub fn load(o: &Options) -> Result<Loaded, String> {
        precheck(o.attach)?;
        let bytes = OBJECT.expect("prechecked");
        let mut open = ObjectBuilder::default()
            .open_memory(bytes)
            .map_err(|e| format!("cannot open the BPF object: {e}"))?;
        let cfg = Config {
            mode: match o.mode {
                Mode::Gedf { .. } => 0,
                Mode::Pedf => 1,
                Mode::User => 2,
            },
            linear: matches!(o.mode, Mode::Gedf { linear: true }) as u32,
            nr_cpus: online_cpus(),
            pad: 0,
            fair_slice_ns: o.fair_slice_ns,
            fair_starve_ns: o.fair_starve_ns,
        };
        let mut set = false;
        for mut m in open.maps_mut() {
            if m.name().to_string_lossy().ends_with(".rodata") {
                let v = m
                    .initial_value_mut()
                    .ok_or("the object's .rodata has no initial value")?;
                let n = std::mem::size_of::<Config>();
                // SAFETY: Config is plain repr(C) data of n bytes.
                let raw =
                    unsafe { std::slice::from_raw_parts(&cfg as *const Config as *const u8, n) };
                v.get_mut(..n)
                    .ok_or("the object's .rodata is smaller than its config")?
                    .copy_from_slice(raw);
                set = true;
            }
        }
        if !set {
            return Err("the BPF object has no .rodata config".into());
        }
        let obj = open
            .load()
            .map_err(|e| format!("the kernel refused the BPF scheduler: {e}"))?;
        let mut loaded = Loaded {
            obj,
            link: None,
            pin: None,
        };
        loaded.associate_kick();
        if let Some(dir) = &o.pin {
            if o.attach {
                remove_stale_pins(dir);
            }
            std::fs::create_dir_all(dir).map_err(|e| {
                format!(
                    "cannot create {} (is a bpffs mounted at /sys/fs/bpf?): {e}",
                    dir.display()
                )
            })?;
            loaded.pin = Some(dir.clone());
            for mut m in loaded.obj.maps_mut() {
                let name = m.name().to_string_lossy().to_string();
                if PINNED_MAPS.contains(&name.as_str()) {
                    m.pin(dir.join(&name))
                        .map_err(|e| format!("cannot pin {name} under {}: {e}", dir.display()))?;
                }
            }
            for mut p in loaded.obj.progs_mut() {
                if p.name() == "rtsched_kick" {
                    p.pin(dir.join("kick")).map_err(|e| {
                        format!("cannot pin the kick program under {}: {e}", dir.display())
                    })?;
                }
            }
        }
        if o.attach {
            for mut m in loaded.obj.maps_mut() {
                if m.name() == "rtsched_ops" {
                    loaded.link = Some(
                        m.attach_struct_ops()
                            .map_err(|e| format!("cannot attach the scheduler: {e}"))?,
                    );
                }
            }
            if loaded.link.is_none() {
                return Err("the BPF object has no rtsched_ops".into());
            }
        }
        Ok(loaded)
    }

    /// Associate the syscall program rtsched_kick with the scheduler's struct_ops map: on
    /// kernels that can run several sched_ext schedulers (7.x), a sched_ext kfunc called from a
    /// program outside the struct_ops (the decider's kick) acts for the scheduler its program is
    /// associated with. Older kernels have no such command and need none.
    fn associate_kick(&self) {
        let Some(ops) = self.obj.maps().find(|m| m.name() == "rtsched_ops") else {
            return;
        };
        let Some(kick) = self.obj.progs().find(|p| p.name() == "rtsched_kick") else {
            return;
        };
        let mut opts = libbpf_sys::bpf_prog_assoc_struct_ops_opts {
            sz: std::mem::size_of::<libbpf_sys::bpf_prog_assoc_struct_ops_opts>() as _,
            ..Default::default()
        };
        // SAFETY: two live descriptors of this object and a sized options struct.
        let r = unsafe {
            libbpf_sys::bpf_prog_assoc_struct_ops(
                kick.as_fd().as_raw_fd(),
                ops.as_fd().as_raw_fd(),
                &mut opts,
            )
        };
        if r != 0 && r != -libc::EINVAL && r != -libc::EOPNOTSUPP {
            eprintln!("rtsched-scx: warning: cannot associate the kick program with the scheduler ({r}); user-space decisions may wait for the next scheduling event");
        }
    }

    /// The verifier's work per program.
    pub fn verified(&self) -> Vec<Verified> {
        self.obj
            .progs()
            .map(|p| {
                // SAFETY: bpf_prog_info is plain data; the kernel fills up to `len` bytes.
                let mut info: libbpf_sys::bpf_prog_info = unsafe { std::mem::zeroed() };
                let mut len = std::mem::size_of_val(&info) as u32;
                let fd = p.as_fd().as_raw_fd();
                let ok =
                    unsafe { libbpf_sys::bpf_prog_get_info_by_fd(fd, &mut info, &mut len) } == 0;
                Verified {
                    program: p.name().to_string_lossy().to_string(),
                    verified_insns: if ok { info.verified_insns } else { 0 },
                    insns: p.insn_cnt(),
                }
            })
            .collect()
    }

    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        let Some(m) = self.obj.maps().find(|m| m.name() == "stats") else {
            return Vec::new();
        };
        STATS
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v = m
                    .lookup(&(i as u32).to_ne_bytes(), libbpf_rs::MapFlags::ANY)
                    .ok()
                    .flatten()
                    .map(|b| u64::from_ne_bytes(b[..8].try_into().unwrap()))
                    .unwrap_or(0);
                (*n, v)
            })
            .collect()
    }

    /// The kernel's reason if it stopped the scheduler (kind 0: still running).
    pub fn exit_info(&self) -> (i64, String) {
        let Some(m) = self.obj.maps().find(|m| m.name() == "exit_info") else {
            return (0, String::new());
        };
        let Some(b) = m
            .lookup(&0u32.to_ne_bytes(), libbpf_rs::MapFlags::ANY)
            .ok()
            .flatten()
        else {
            return (0, String::new());
        };
        let kind = i64::from_ne_bytes(b[..8].try_into().unwrap());
        let cstr = |s: &[u8]| {
            String::from_utf8_lossy(&s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())])
                .to_string()
        };
        let (reason, msg) = (cstr(&b[16..144]), cstr(&b[144..400]));
        (
            kind,
            if msg.is_empty() {
                reason
            } else {
                format!("{reason}: {msg}")
            },
        )
    }

    pub fn attached(&self) -> bool {
        self.link.is_some()
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        self.link.take();
        if let Some(dir) = self.pin.take() {
            for n in PINNED_MAPS.iter().chain(&["kick"]) {
                let _ = std::fs::remove_file(dir.join(n));
            }
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// A loader killed outright (SIGKILL) cannot unpin: its maps stay pinned, and alive in the
/// kernel, under `DIR` or a sibling `rtsched-PID` whose process is gone. Called once no
/// scheduler is loaded (precheck), when no live loader can own them, before pinning anew.
fn remove_stale_pins(dir: &Path) {
    let remove = |d: &Path| {
        for n in PINNED_MAPS.iter().chain(&["kick"]) {
            let _ = std::fs::remove_file(d.join(n));
        }
        let _ = std::fs::remove_dir(d);
    };
    remove(dir);
    let Some(parent) = dir.parent() else { return };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let pid = name
            .strip_prefix("rtsched-")
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            remove(&e.path());
        }
    }
}

/// Wait up to `ms` for the kernel's sched_ext state to read `want`.
pub fn wait_state(want: &str, ms: u64) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    loop {
        if std::fs::read_to_string(Path::new(STATE)).is_ok_and(|s| s.trim() == want) {
            return true;
        }
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_name_themselves() {
        for m in ["gedf", "gedf-linear", "pedf", "user"] {
            assert_eq!(Mode::parse(m).unwrap().name(), m);
        }
        assert!(Mode::parse("edf")
            .unwrap_err()
            .contains("known: gedf, gedf-linear, pedf, user"));
    }

    /// The BPF object and the Rust side agree on what they share: the config in .rodata, the
    /// registry slot, the counters. (Opening an object needs no kernel support.)
    #[test]
    fn the_object_and_the_rust_layouts_agree() {
        let Some(bytes) = OBJECT else {
            eprintln!(
                "not checked: {}",
                option_env!("RTSCHED_BPF_MISSING").unwrap_or("no BPF object")
            );
            return;
        };
        use libbpf_rs::AsRawLibbpf;
        let open = ObjectBuilder::default().open_memory(bytes).unwrap();
        let mut seen = Vec::new();
        for m in open.maps() {
            let name = m.name().to_string_lossy().to_string();
            let raw = m.as_libbpf_object().as_ptr();
            // SAFETY: `raw` is a live map of the open object.
            let (key, value) = unsafe {
                (
                    libbpf_sys::bpf_map__key_size(raw),
                    libbpf_sys::bpf_map__value_size(raw),
                )
            };
            match name.as_str() {
                // A trace build's bpf_printk formats follow the config (a global, first).
                n if n.ends_with(".rodata") && cfg!(rtsched_bpf_trace) => {
                    assert!(m.initial_value().unwrap().len() >= std::mem::size_of::<Config>())
                }
                n if n.ends_with(".rodata") => assert_eq!(
                    m.initial_value().unwrap().len(),
                    std::mem::size_of::<Config>()
                ),
                "slots" => {
                    assert_eq!(
                        value as usize,
                        std::mem::size_of::<rtsched_linux::scx::Slot>()
                    );
                    assert_eq!(m.max_entries() as usize, rtsched_linux::scx::MAX_SLOTS);
                }
                "tid_slot" => assert_eq!((key, value), (4, 4)),
                "stats" => assert_eq!(m.max_entries() as usize, STATS.len()),
                "exit_info" => assert_eq!(value, 400),
                _ => {}
            }
            seen.push(name);
        }
        for want in [
            "slots",
            "tid_slot",
            "choice",
            "stats",
            "exit_info",
            "cpudl_map",
            "rtsched_ops",
        ] {
            assert!(
                seen.iter().any(|s| s == want),
                "{want} missing from {seen:?}"
            );
        }
    }

    #[test]
    fn a_kernel_without_sched_ext_is_refused_with_a_reason() {
        if std::path::Path::new(STATE).exists() {
            return;
        }
        let e = Loaded::load(&Options::default()).err().unwrap();
        assert!(
            e.contains("CONFIG_SCHED_CLASS_EXT") || e.contains("no BPF scheduler"),
            "{e}"
        );
        assert!(
            e.contains("Nothing was") || e.contains("no BPF scheduler"),
            "{e}"
        );
    }
}
