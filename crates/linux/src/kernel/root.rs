//! This machine's root domain as the kernel holds it for SCHED_DEADLINE admission
//! (`sched_dl_overflow`): what `kernel:linux` admits a set into with the simulator's rule,
//! and the fair servers' default reservation the other deadline checks assume.

use crate::options::RunError;
use rtsched_policies::linux::bw::SCHED_CAPACITY_SCALE;
use rtsched_policies::linux::constants::{FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS};
use rtsched_policies::linux::{RootDomain, RtBandwidth};

/// This machine's root domain as the kernel holds it for `sched_dl_overflow`: its RT sysctls
/// (`sched_rt_runtime_us` / `sched_rt_period_us`), its online CPUs and their capacities
/// (`cpu_capacity`, 1024 where the kernel does not say), and one default fair server per CPU
/// on Linux 6.12+ (their parameters are in debugfs, which may be unreadable). Reservations
/// other programs hold are not seen: the kernel then has the last word (EBUSY at start).
pub fn machine_root_domain() -> Result<RootDomain, RunError> {
    let read = |name: &str| {
        let path = format!("/proc/sys/kernel/{name}");
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .ok_or_else(|| RunError::Failed(format!("cannot read {path}")))
    };
    let rt = RtBandwidth {
        runtime_us: read("sched_rt_runtime_us")?,
        period_us: read("sched_rt_period_us")?.max(1) as u64,
    };
    let caps: Vec<u64> = (0..crate::sys::online_cpus())
        .map(|c| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{c}/cpu_capacity"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(SCHED_CAPACITY_SCALE)
        })
        .collect();
    let root = RootDomain::new(rt, &caps);
    if fair_servers_default(1) == 0.0 {
        return Ok(root);
    }
    root.with_fair_servers(FAIR_SERVER_RUNTIME_NS, FAIR_SERVER_PERIOD_NS)
        .map_err(|e| {
            RunError::Input(format!(
                "this machine's fair servers do not fit its RT bandwidth: {e}"
            ))
        })
}

/// What [`dl_bandwidth_in_use`] would most likely read when debugfs is not mounted: the fair
/// servers' default 50 ms every second on each CPU, on kernels that have them (6.12+).
pub(super) fn fair_servers_default(m: u32) -> f64 {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut v = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<u32>().ok());
    match (v.next(), v.next()) {
        (Some(major), Some(minor)) if (major, minor) >= (6, 12) => 0.05 * m as f64,
        _ => 0.0,
    }
}
