//! Building the `linux` scheduler for a task set: its options, each task's class from its
//! Linux policy ([`rtsched_model::Task::sched_policy`]; a set without policies is all
//! `deadline`, its best-effort tasks `other`), the SCHED_DEADLINE threads (lanes) and their
//! reservations, and admission as `sched_setattr` decides it ([`RootDomain::admit`], the fair
//! servers' bandwidth counted): a set the kernel would refuse is refused, naming the task, the
//! bandwidths and the limit.

use super::admission::{AdmissionError, RootDomain};
use super::attr::DlAttr;
use super::cbs::Cbs;
use super::constants::{
    RtBandwidth, FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS, SCHED_RR_TIMESLICE_NS,
    THIS_MACHINE_HZ,
};
use super::dl::Lane;
use super::grub::GrubRq;
use crate::spec::SchedulerSpec;
use rtsched_model::time::{parse_duration_str, NS_PER_S};
use rtsched_model::{SchedPolicy, Task, TaskSet, Time};

/// The options of `linux` (see `INFO`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Options {
    /// `reclaim`: every deadline task with `SCHED_FLAG_RECLAIM` (GRUB).
    pub reclaim: bool,
    /// `fair_server=on|off`: each CPU's fair server (6.12+).
    pub fair_server: bool,
    /// `rt_throttle=on|off`: RT throttling (`CONFIG_RT_GROUP_SCHED`, this kernel's).
    pub rt_throttle: bool,
    /// `tick=`: the scheduler tick (1/HZ; this machine's HZ=250).
    pub tick: Time,
    /// `rr_timeslice=`: SCHED_RR's slice, counted in ticks.
    pub rr_timeslice: Time,
    /// What the label shows besides the name.
    pub shown: Vec<String>,
}

impl Options {
    pub(super) fn parse(spec: &SchedulerSpec) -> Result<Options, String> {
        let mut o = Options {
            reclaim: false,
            fair_server: true,
            rt_throttle: true,
            tick: NS_PER_S / THIS_MACHINE_HZ,
            rr_timeslice: SCHED_RR_TIMESLICE_NS,
            shown: Vec::new(),
        };
        let on_off = |k: &str, v: &str| match v {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => Err(format!(
                "scheduler 'linux': option '{k}': expected on or off, got '{v}'"
            )),
        };
        for (k, v) in &spec.options {
            match (k.as_str(), v.as_str()) {
                ("", "reclaim") | ("reclaim", "on") => o.reclaim = true,
                ("reclaim", "off") => o.reclaim = false,
                ("fair_server", v) => o.fair_server = on_off(k, v)?,
                ("rt_throttle", v) => o.rt_throttle = on_off(k, v)?,
                ("tick", v) | ("rr_timeslice", v) => {
                    let t = parse_duration_str(v)
                        .ok()
                        .filter(|&t| t > 0)
                        .ok_or_else(|| format!("scheduler 'linux': option '{k}': expected a positive duration (e.g. 4ms), got '{v}'"))?;
                    if k == "tick" {
                        o.tick = t;
                    } else {
                        o.rr_timeslice = t;
                    }
                }
                _ => {
                    let known = [
                        "reclaim",
                        "fair_server",
                        "rt_throttle",
                        "tick",
                        "rr_timeslice",
                    ];
                    let k = if k.is_empty() { v } else { k };
                    let hint = rtsched_model::text::closest(k, &known)
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    return Err(format!(
                        "scheduler 'linux' has no option '{k}'{hint} (known: {})",
                        known.join(", ")
                    ));
                }
            }
            o.shown.push(if k.is_empty() {
                v.clone()
            } else {
                format!("{k}={v}")
            });
        }
        Ok(o)
    }

    /// The RR slice in ticks (`RR_TIMESLICE`, at least one).
    pub(super) fn rr_ticks(&self) -> u32 {
        (self.rr_timeslice / self.tick).clamp(1, u64::from(u32::MAX)) as u32
    }
}

/// Each SCHED_DEADLINE thread a task has: its lanes' runtimes. A sequential task is one lane
/// of its `runtime` (default the WCET); a parallel one a lane per thread lane — thread k of
/// every region, or each DAG node — reserving that lane's work per job.
pub fn lane_runtimes(t: &Task, runtime: Option<Time>) -> Result<Vec<Time>, String> {
    if let Some(g) = &t.dag {
        return match runtime {
            Some(r) if g.nodes.len() == 1 => Ok(vec![r]),
            Some(_) => Err("field 'runtime' applies to sequential tasks only: each DAG node reserves its own work".into()),
            _ => Ok(g.nodes.iter().map(|n| n.wcet).collect()),
        };
    }
    let width = t.regions.iter().map(|r| r.threads.len()).max().unwrap_or(1);
    if t.regions.is_empty() || (width == 1 && runtime.is_some()) {
        return Ok(vec![runtime.unwrap_or(t.wcet)]);
    }
    if runtime.is_some() {
        return Err("field 'runtime' applies to sequential tasks only: each thread lane of a parallel task reserves its lane's work".into());
    }
    let mut w = vec![0; width];
    for r in &t.regions {
        for (k, &c) in r.threads.iter().enumerate() {
            w[k] += c;
        }
    }
    Ok(w)
}

/// What admission leaves: the lanes, per task its first lane and count, the root domain.
pub(super) type Reserved = (Vec<Lane>, Vec<(u32, u32)>, RootDomain);

/// The deadline class's lanes, admitted in task order as threads calling `sched_setattr` one
/// after another: (lanes, per task its first lane and count, the root domain after admission).
pub(super) fn reserve(ts: &TaskSet, o: &Options) -> Result<Reserved, String> {
    let m = ts.platform.cpus;
    let mut root = RootDomain::symmetric(RtBandwidth::DEFAULT, m);
    if o.fair_server {
        root = root
            .with_fair_servers(FAIR_SERVER_RUNTIME_NS, FAIR_SERVER_PERIOD_NS)
            .map_err(|e| format!("{}: the fair servers do not fit: {e}", ts.source))?;
    }
    reserve_in(ts, o, root)
}

/// Admission of `ts`'s deadline tasks into `root` (`kernel:linux`: the root domain of the
/// machine it runs on), with `SCHED_FLAG_RECLAIM` if `reclaim`: the rule and the refusals
/// `linux` gives ([`reserve`]). The root domain after admission.
pub fn admit_set(ts: &TaskSet, reclaim: bool, root: RootDomain) -> Result<RootDomain, String> {
    let spec = SchedulerSpec {
        name: "linux".into(),
        options: Vec::new(),
    };
    let o = Options {
        reclaim,
        ..Options::parse(&spec)?
    };
    reserve_in(ts, &o, root).map(|(_, _, root)| root)
}

/// [`reserve`] into a given root domain.
fn reserve_in(ts: &TaskSet, o: &Options, mut root: RootDomain) -> Result<Reserved, String> {
    let m = ts.platform.cpus;
    let mut lanes = Vec::new();
    let mut first = Vec::with_capacity(ts.tasks.len());
    for (i, t) in ts.tasks.iter().enumerate() {
        let SchedPolicy::Deadline { runtime } = ts.sched_policy(i as u32) else {
            first.push((lanes.len() as u32, 0));
            continue;
        };
        let at = |msg: String| format!("{}: task '{}': {msg}", ts.source, t.name);
        let runtimes = lane_runtimes(t, runtime).map_err(at)?;
        first.push((lanes.len() as u32, runtimes.len() as u32));
        for (k, &r) in runtimes.iter().enumerate() {
            let lane = if runtimes.len() > 1 {
                format!(" (thread lane {k})")
            } else {
                String::new()
            };
            let mut attr = DlAttr::new(r, t.deadline, t.period);
            if o.reclaim {
                attr = attr.reclaiming();
            }
            root.admit(&attr).map_err(|e| match e {
                AdmissionError::Invalid(p) => at(format!(
                    "field '{}'{lane}: {p}: sched_setattr would refuse it (EINVAL){}",
                    match p.field() {
                        "runtime" if runtime.is_none() => "wcet",
                        f => f,
                    },
                    if ts.has_policies() {
                        ""
                    } else {
                        " (under 'linux' a task without a policy is SCHED_DEADLINE with runtime = WCET; give it 'policy')"
                    }
                )),
                AdmissionError::Busy(b) => at(format!("{b}{lane}")),
            })?;
            lanes.push(Lane::new(i as u32, Cbs::new(attr), i as u32 % m));
        }
    }
    Ok((lanes, first, root))
}

/// Each CPU's GRUB bandwidths after admission: `this_bw` of the lanes it starts with (a
/// lane's first CPU, as its `rq`) and of its fair server; `extra_bw` what admission left.
pub(super) fn grub_rqs(m: u32, lanes: &[Lane], root: &RootDomain, server_bw: u64) -> Vec<GrubRq> {
    let mut g = vec![GrubRq::new(root.rt()); m as usize];
    for rq in &mut g {
        rq.extra_bw = root.extra_bw();
        rq.add_rq_bw(server_bw);
    }
    for l in lanes {
        g[(l.task % m) as usize].add_rq_bw(l.cbs.dl_bw());
    }
    g
}
