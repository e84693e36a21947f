//! Critical sections added to a generated set, drawn as the experiments on real-time locking
//! protocols draw them (docs/generators.md "Critical sections").
//!
//! The model is the one of Brandenburg's evaluations of multiprocessor locking protocols
//! (*Scheduling and Locking in Multiprocessor Real-Time Operating Systems*, PhD thesis, UNC
//! Chapel Hill, 2011, ch. 6–7; Wieder & Brandenburg, "On spin locks in AUTOSAR: blocking
//! analysis of FIFO, unordered, and priority-ordered spin locks", RTSS 2013) and of SchedCAT's
//! resource model (a task's requirement of a resource: how many requests per job, how long the
//! longest): the set shares n_r resources; each task accesses each resource independently with
//! probability p_acc; a task that accesses a resource issues N requests per job, N uniform in
//! 1..N_max; each request holds the resource for a length uniform in a range, the papers'
//! *short*, *medium* and *long* sections or one given.
//!
//! What this file adds to that model, where the papers leave it open (they analyse a request's
//! count and length, not its place in the job):
//! - **Placement.** A job's requests are placed in a random order, one after the other, never
//!   nested (the multiprocessor protocols do not model nested global resources), at positions
//!   drawn uniformly among the placements that fit: the free work (C minus the sections) is
//!   split by sorted uniform cut points into the gaps before, between and after them.
//! - **Within the WCET.** A section is never longer than the work left after the previous
//!   ones: a request drawn longer is cut to what is left, and one that would start with no
//!   work left is dropped (with short sections and millisecond WCETs, neither happens).
//! - **A stream of their own.** The sections draw from the generator's seed on ChaCha stream
//!   [`SECTIONS_STREAM`], never from the stream the tasks were drawn from: the same seed with
//!   and without sections gives the same periods, WCETs and deadlines.
//! - **Priorities.** A ceiling protocol needs every user's `priority` (`pcp`), so by default
//!   the tasks get rate-monotonic priorities (`prio=rm`; `prio=none` leaves them out).
//! - **The protocol** (`protocol=`) is the set's `run.locking`; a sweep's `locking` axis sets
//!   it per row instead (docs/sweeps.md).
//!
//! - **Placement** on CPUs (`place=wf`): the partitioned protocols (`msrp`, `mrsp`, `fmlp+`)
//!   need a partition, which decides which resources are local and which global. Either a
//!   partitioned scheduler's partitioner makes it (`pfp:ffd`), or the set carries `cpu` fields
//!   by worst fit on load, decreasing utilisation, every task placed, sections ignored (as
//!   `chronos2011`'s `place=wf`; Brandenburg's experiments partition by worst-fit decreasing
//!   before any protocol is chosen). The fixed placement is what a comparison of protocols
//!   needs: every protocol, and the `p-` tests, see the same partition; a uniprocessor
//!   protocol (`pcp`, `srp`) whose resource it leaves on two CPUs is then refused, naming it.

use super::Params;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::program::CriticalSection;
use rtsched_model::time::{fmt_duration, parse_duration_str, NS_PER_US};
use rtsched_model::{Protocol, TaskSet, Time};

/// The ChaCha stream the sections draw from (the tasks draw from stream 0).
pub const SECTIONS_STREAM: u64 = 0x5ec7_1045;

/// The most resources a set may share (the papers use up to a few dozen).
pub const MAX_RESOURCES: u64 = 1_000;
/// The most requests of one resource per job.
pub const MAX_REQUESTS: u64 = 1_000;

/// The parameters this file reads, beside a generator's own.
pub const KEYS: &[&str] = &[
    "resources",
    "p_acc",
    "nreq",
    "csl",
    "protocol",
    "prio",
    "place",
];

/// The help text of [`KEYS`].
pub const HELP: &str = sections_help!();

/// A section-length category: its name and range in µs (both ends included).
pub const CATEGORIES: &[(&str, Time, Time)] =
    &[("short", 1, 15), ("medium", 1, 100), ("long", 5, 1280)];

/// How sections are drawn (module overview).
#[derive(Clone, Debug, PartialEq)]
pub struct Sections {
    pub resources: u32,
    pub p_acc: f64,
    /// Requests per job of an accessed resource, uniform in `lo..=hi`.
    pub nreq: (u32, u32),
    /// A request's length in ns, uniform in `lo..=hi`.
    pub csl: (Time, Time),
    pub protocol: Protocol,
    /// Whether the tasks get rate-monotonic `priority` fields.
    pub priorities: bool,
    /// Whether the tasks get `cpu` fields by worst fit on load (`place=wf`).
    pub place: bool,
}

impl Sections {
    /// The sections `p` asks for: `None` when it sets none of [`KEYS`] (or `resources=0` and
    /// no other); an error naming the parameter otherwise.
    pub fn from_params(p: &Params) -> Result<Option<Sections>, String> {
        let given: Vec<&str> = KEYS
            .iter()
            .copied()
            .filter(|k| p.raw(k).is_some())
            .collect();
        let resources = p.uint_or("resources", 0)?;
        if resources == 0 {
            return match given.iter().find(|k| **k != "resources") {
                Some(k) => Err(format!(
                    "parameter {k}: critical sections need resources=N (N >= 1 shared resources)"
                )),
                None => Ok(None),
            };
        }
        if resources > MAX_RESOURCES {
            return Err(format!(
                "parameter resources={resources}: at most {MAX_RESOURCES} resources"
            ));
        }
        let p_acc = p.f64_or("p_acc", 0.3)?;
        if !(0.0..=1.0).contains(&p_acc) {
            return Err(format!("parameter p_acc={p_acc}: a probability, in [0, 1]"));
        }
        let nreq = nreq_param(p.str_or("nreq", "1"))?;
        let csl = csl_param(p.str_or("csl", "short"))?;
        let name = p.str_or("protocol", "none");
        let protocol = Protocol::parse(name).ok_or_else(|| {
            format!(
                "parameter protocol={name}: known protocols: {}",
                Protocol::NAMES.join(", ")
            )
        })?;
        let priorities = match p.str_or("prio", "rm") {
            "rm" => true,
            "none" => false,
            other => {
                return Err(format!(
                    "parameter prio={other}: known: rm (rate-monotonic priority fields), none"
                ))
            }
        };
        let place = match p.str_or("place", "none") {
            "wf" => true,
            "none" => false,
            other => {
                return Err(format!(
                    "parameter place={other}: known: wf (cpu fields by worst fit on load, decreasing utilisation), none"
                ))
            }
        };
        Ok(Some(Sections {
            place,
            resources: resources as u32,
            p_acc,
            nreq,
            csl,
            protocol,
            priorities,
        }))
    }

    /// Add the sections to `ts` (whose tasks are sequential: no regions, no DAG; `utils` their
    /// drawn utilisations), drawn from `seed` on [`SECTIONS_STREAM`]; declares resources
    /// `r0`..`r{n_r - 1}` and sets the protocol and, with `prio=rm`, the priorities, with
    /// `place=wf` the CPUs.
    pub fn add_to(&self, ts: &mut TaskSet, utils: &[f64], seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(SECTIONS_STREAM);
        ts.resources = (0..self.resources).map(|r| format!("r{r}")).collect();
        ts.run.locking = self.protocol;
        for task in &mut ts.tasks {
            let requests = self.requests(&mut rng);
            task.sections = place(&mut rng, task.wcet, &requests);
        }
        if self.place {
            let cpus = super::papers::worst_fit_load(utils, ts.platform.cpus);
            for (t, cpu) in ts.tasks.iter_mut().zip(cpus) {
                t.cpu = Some(cpu);
            }
        }
        if self.priorities {
            let prio = crate::priority::rate_monotonic(&ts.tasks);
            for (t, p) in ts.tasks.iter_mut().zip(prio) {
                t.priority = Some(p);
            }
        }
    }

    /// One job's requests, (resource, drawn length), resource by resource, then shuffled.
    fn requests<R: Rng>(&self, rng: &mut R) -> Vec<(u32, Time)> {
        let mut out = Vec::new();
        for r in 0..self.resources {
            // One draw per (task, resource) whatever p_acc is, so that changing p_acc changes
            // which resources a task accesses and nothing else about the stream's use.
            let accessed = rng.random::<f64>() < self.p_acc;
            let n = rng.random_range(self.nreq.0..=self.nreq.1);
            if accessed {
                for _ in 0..n {
                    out.push((r, rng.random_range(self.csl.0..=self.csl.1)));
                }
            }
        }
        // Fisher-Yates: the order the requests are issued in.
        for i in (1..out.len()).rev() {
            out.swap(i, rng.random_range(0..=i));
        }
        out
    }
}

/// `requests` placed in order within `wcet` (module overview: cut to what is left, the free
/// work split uniformly into the gaps).
fn place<R: Rng>(rng: &mut R, wcet: Time, requests: &[(u32, Time)]) -> Vec<CriticalSection> {
    let mut lengths = Vec::with_capacity(requests.len());
    let mut used: Time = 0;
    for &(r, len) in requests {
        let len = len.min(wcet - used);
        if len == 0 {
            break;
        }
        lengths.push((r, len));
        used += len;
    }
    let free = wcet - used;
    let mut cuts: Vec<Time> = (0..lengths.len())
        .map(|_| rng.random_range(0..=free))
        .collect();
    cuts.sort_unstable();
    let mut held: Time = 0;
    lengths
        .iter()
        .zip(cuts)
        .map(|(&(resource, length), cut)| {
            let s = CriticalSection {
                resource,
                region: 0,
                thread: 0,
                start: cut + held,
                length,
            };
            held += length;
            s
        })
        .collect()
}

/// `nreq=N` or `nreq=A..B`, 1 <= A <= B <= [`MAX_REQUESTS`].
fn nreq_param(v: &str) -> Result<(u32, u32), String> {
    let bad = || {
        format!("parameter nreq={v}: expected N or A..B, whole numbers with 1 <= A <= B <= {MAX_REQUESTS}")
    };
    let (a, b) = v.split_once("..").unwrap_or((v, v));
    let (a, b): (u64, u64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a == 0 || a > b || b > MAX_REQUESTS {
        return Err(bad());
    }
    Ok((a as u32, b as u32))
}

/// `csl=short|medium|long` ([`CATEGORIES`]) or `csl=A..B` (durations, 0 < A <= B), in ns.
fn csl_param(v: &str) -> Result<(Time, Time), String> {
    if let Some(&(_, lo, hi)) = CATEGORIES.iter().find(|c| c.0 == v) {
        return Ok((lo * NS_PER_US, hi * NS_PER_US));
    }
    let known = || {
        CATEGORIES
            .iter()
            .map(|(n, lo, hi)| format!("{n} ({lo}-{hi}us)"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some((a, b)) = v.split_once("..") else {
        return Err(format!(
            "parameter csl={v}: expected {} or a range A..B such as 10us..100us",
            known()
        ));
    };
    let parse =
        |s: &str| parse_duration_str(s.trim()).map_err(|e| format!("parameter csl={v}: {e}"));
    let (a, b) = (parse(a)?, parse(b)?);
    if a == 0 || a > b {
        return Err(format!(
            "parameter csl={v}: expected 0 < A <= B, got {}..{}",
            fmt_duration(a),
            fmt_duration(b)
        ));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests;
