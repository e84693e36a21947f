//! Task-set generators (docs/generators.md).
//!
//! A generator draws per-task utilisations (`utilisation`), periods and deadlines, and builds
//! an `rtsched_model::TaskSet`. Everything is seeded (ChaCha8): the same name, parameters and
//! seed give the same task set on every machine.
//!
//! **What is asked, or a refusal.** A generator gives the set its parameters describe or
//! refuses them with an error naming the parameter; no share is clipped to make a draw fit.
//! `uunifast` refuses U > 1 ([`UUNIFAST_MAX_U`]), the sequential generators refuse u_max > 1
//! ([`SEQUENTIAL_MAX_U`]), and each paper's generator keeps the promise written beside it
//! (docs/generators.md, "What each generator promises"; `tests/generator_promises.rs` holds
//! every registered generator to it).
//!
//! Conversion to integer time: a period is rounded to the nearest multiple of the granularity
//! (default 1 µs, at least one granule); WCET = round(u·T) ns of that rounded period, at least
//! 1 ns ([`wcet_of`]). The returned `Generated::utilisations` are the drawn values before
//! rounding (they sum to U exactly up to floating-point error); each task's C/T differs from
//! its drawn u by at most 0.5 ns / T_i (1 ns / T_i for a draw below half a ns of work, raised
//! to 1 ns), so the set's Σ C/T differs from U by at most Σ 0.5 ns / T_i in all but that case
//! ([`wcet_error_ns`]).

/// The help text of the critical-section parameters (`sections::HELP`), a literal so the
/// sequential generators' help texts can `concat!` it.
macro_rules! sections_help {
    () => {
        "critical sections: resources=0 (n_r shared resources; 0: none), p_acc=0.3 (each task accesses each resource with this probability), nreq=1 (requests per job of an accessed resource, N or A..B, uniform), csl=short (length of a request: short 1-15us, medium 1-100us, long 5-1280us, or A..B such as 10us..100us), protocol=none (the set's run.locking: none, pip, pcp, pcp:original, srp, msrp, mrsp, omlp, fmlp+), prio=rm|none (rate-monotonic priority fields, which pcp needs), place=none|wf (cpu fields by worst fit on load, for the partitioned protocols and the p- tests)"
    };
}

pub mod dag;
pub mod papers;
pub mod ros2;
pub mod sections;
pub mod utilisation;
pub mod waters;
pub mod waters_chains;

pub use utilisation::{randfixedsum, uunifast, uunifast_discard};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::text::closest;
use rtsched_model::time::{fmt_duration, parse_duration_str, NS_PER_MS, NS_PER_US};
use rtsched_model::{Task, TaskSet, Time};

/// The most tasks a generator makes: the scale task files are benchmarked at (100,000 tasks
/// validate in under a second, docs/hardening.md). Beyond it a generator refuses, naming the
/// parameter, rather than allocate whatever was asked for (n = 10^9 would need ~250 GB).
pub const MAX_TASKS: usize = 100_000;
/// The most CPUs: a task file's own limit (`platform.cpus`, docs/taskset-format.md).
pub const MAX_CPUS: u64 = 65_536;
/// The most random draws a rejection loop (UUniFast-Discard, PAWS's window) makes over all its
/// tries before it gives up with an error: about a second of work.
pub const MAX_DRAWS: u64 = 100_000_000;
/// The most threads in all the parallel regions of one generated set (PAWS: up to 3m per task).
pub const MAX_THREADS: u64 = 1_000_000;

/// The generator's RNG for `seed`.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// How periods are drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum PeriodDist {
    /// Uniform in [min, max].
    Uniform { min: Time, max: Time },
    /// ln T uniform in [ln min, ln max] (as many periods per decade; Emberson et al. 2010).
    LogUniform { min: Time, max: Time },
    /// Uniform over the harmonic set {min·2^k ≤ max}: every period divides the longer ones.
    Harmonic { min: Time, max: Time },
}

impl PeriodDist {
    fn bounds(&self) -> (Time, Time) {
        match *self {
            PeriodDist::Uniform { min, max }
            | PeriodDist::LogUniform { min, max }
            | PeriodDist::Harmonic { min, max } => (min, max),
        }
    }

    pub fn check(&self) -> Result<(), String> {
        let (min, max) = self.bounds();
        if min == 0 {
            return Err("minimum period tmin must be > 0".into());
        }
        if min > max {
            return Err(format!(
                "minimum period tmin={} exceeds maximum period tmax={}",
                fmt_duration(min),
                fmt_duration(max)
            ));
        }
        Ok(())
    }

    /// One period, rounded to a multiple of `granularity` (at least one granule).
    pub fn draw<R: Rng>(&self, rng: &mut R, granularity: Time) -> Time {
        let x: f64 = rng.random();
        let raw = match *self {
            PeriodDist::Uniform { min, max } => min as f64 + x * (max - min) as f64,
            PeriodDist::LogUniform { min, max } => {
                ((min as f64).ln() + x * ((max as f64).ln() - (min as f64).ln())).exp()
            }
            PeriodDist::Harmonic { min, max } => {
                let levels = (max / min).ilog2() + 1;
                return round_to(min << rng.random_range(0..levels), granularity);
            }
        };
        round_to(raw.round() as Time, granularity)
    }
}

fn round_to(t: Time, g: Time) -> Time {
    let g = g.max(1);
    ((t + g / 2) / g).max(1) * g
}

/// How relative deadlines are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeadlineDist {
    /// D = T.
    Implicit,
    /// D uniform in [C + f·(T − C), T], rounded to ns; f in [0, 1]. f = 0 is the widest
    /// constrained spread; f = 1 gives implicit deadlines.
    Constrained { f: f64 },
}

impl DeadlineDist {
    pub fn check(&self) -> Result<(), String> {
        match *self {
            DeadlineDist::Constrained { f } if !(0.0..=1.0).contains(&f) => {
                Err(format!("deadline factor f={f} must be in [0, 1]"))
            }
            _ => Ok(()),
        }
    }
    fn draw<R: Rng>(&self, rng: &mut R, wcet: Time, period: Time) -> Time {
        match *self {
            DeadlineDist::Implicit => period,
            DeadlineDist::Constrained { f } => {
                let lo = wcet as f64 + f * (period - wcet) as f64;
                let d = lo + rng.random::<f64>() * (period as f64 - lo);
                (d.round() as Time).clamp(wcet, period)
            }
        }
    }
}

/// A generated task set and what the model cannot hold yet.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub taskset: TaskSet,
    /// Drawn utilisation of each task, before rounding to integer ns.
    pub utilisations: Vec<f64>,
    /// PAWS: threads in each task's parallel region (also built into the tasks' `regions`).
    pub threads: Option<Vec<u32>>,
    /// ChronOS: the utility (height of a step TUF) of each task (the model has no TUFs yet).
    pub utilities: Option<Vec<f64>>,
}

/// Tasks `t0..t{n-1}` from utilisations and periods; WCET = [`wcet_of`] (u, T).
pub fn build<R: Rng>(
    rng: &mut R,
    utils: &[f64],
    periods: &[Time],
    deadlines: DeadlineDist,
) -> Vec<Task> {
    utils
        .iter()
        .zip(periods)
        .enumerate()
        .map(|(i, (&u, &period))| {
            let mut t = Task::periodic(format!("t{i}"), period, wcet_of(u, period));
            t.deadline = deadlines.draw(rng, t.wcet, period);
            t
        })
        .collect()
}

/// WCET = round(u·T) ns, at least 1 ns. Nothing caps it at T: the sequential generators
/// draw u ≤ 1 ([`SEQUENTIAL_MAX_U`]), so round(u·T) ≤ T, and a cap here would hide a share
/// above 1 by clipping it.
pub fn wcet_of(u: f64, period: Time) -> Time {
    ((u * period as f64).round() as Time).max(1)
}

/// The most `wcet` (an integer number of ns, at least `least`) can differ from `u·T` ns when it
/// is u·T rounded to the ns and raised to `least`: half a ns, or what raising it added. The
/// set's Σ C/T differs from Σu by at most Σ wcet_error_ns / T_i (docs/generators.md).
pub fn wcet_error_ns(u: f64, period: Time, least: Time) -> f64 {
    f64::max(0.5, least as f64 - u * period as f64)
}

/// The largest utilisation of a sequential task: one CPU (C ≤ T). A task that needs more is a
/// parallel one (`dag-nfj`, `dag-layered`, whose `u_max` may exceed 1).
pub const SEQUENTIAL_MAX_U: f64 = 1.0;

/// The largest total utilisation `uunifast` takes. UUniFast (Bini & Buttazzo, "Measuring the
/// performance of schedulability tests", Real-Time Systems 30(1-2), 2005) draws uniformly
/// over the whole simplex {u ≥ 0, Σu = U}, and it was written for one processor (U ≤ 1). For
/// U > 1 every vertex (U, 0, …, 0) of that simplex, and a region around it of positive
/// volume, has a share above 1: any U > 1 gives each draw a nonzero chance of a sequential
/// task with C > T. Davis & Burns ("Priority assignment for global fixed priority pre-emptive
/// scheduling in multiprocessor real-time systems", RTSS 2009) introduced UUniFast-Discard
/// for U > 1: the same draw, discarded until every share is at most 1. So `uunifast` refuses
/// U > 1 — always, not only on the seeds whose draw goes above 1, so that whether a sweep
/// point runs does not depend on its seeds — and names the two generators that honour u_max.
pub const UUNIFAST_MAX_U: f64 = 1.0;

/// The refusal of [`UUNIFAST_MAX_U`], or of a sequential generator's `u_max` above
/// [`SEQUENTIAL_MAX_U`]: `None` when the parameters are within them.
fn sequential_bounds(name: &str, total: f64, u_max: f64) -> Option<String> {
    if name == "uunifast" && total > UUNIFAST_MAX_U {
        return Some(format!(
            "parameter U={total}: uunifast draws from the whole simplex Σu = U (Bini & Buttazzo 2005), where for U > {UUNIFAST_MAX_U} a task may get u > 1 (C > T, more than one CPU); \
             use uunifast-discard (UUniFast redrawn until every u <= u_max, Davis & Burns 2009) or randfixedsum (uniform with every u in [u_min, u_max]), both with u_max=1 by default"
        ));
    }
    if u_max > SEQUENTIAL_MAX_U {
        return Some(format!(
            "parameter u_max={u_max}: a sequential task's utilisation is at most {SEQUENTIAL_MAX_U} (C <= T) and {name} makes sequential tasks; \
             tasks that need more than one CPU are DAG tasks (dag-nfj, dag-layered take u_max above 1)"
        ));
    }
    None
}

/// Generator parameters `key=value` as the CLI passes them (`m=4,U=2.5,period=loguniform`).
/// Every generator declares the keys it reads; any other key is an error naming the known ones.
#[derive(Clone, Debug, Default)]
pub struct Params {
    items: Vec<(String, String)>,
}

impl Params {
    /// Parse `k=v,k=v` (empty string: no parameters).
    pub fn parse(text: &str) -> Result<Params, String> {
        let mut items = Vec::new();
        for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!("generator parameter '{part}' is not of the form key=value")
            })?;
            items.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(Params { items })
    }
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Params {
        Params {
            items: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
    fn check_known(&self, gen: &str, known: &[&str]) -> Result<(), String> {
        for (k, _) in &self.items {
            if !known.contains(&k.as_str()) {
                // A key that differs only in case is the one meant (`u=2.5` for `U`), before
                // any key one edit away (`n`).
                let hint = known
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(k))
                    .copied()
                    .or_else(|| closest(k, known))
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "generator '{gen}' has no parameter '{k}'{hint}; known: {}",
                    known.join(", ")
                ));
            }
        }
        Ok(())
    }
    fn raw(&self, key: &str) -> Option<&str> {
        self.items
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("parameter {key}={v} is not a number")),
        }
    }
    pub fn f64_req(&self, key: &str) -> Result<f64, String> {
        if self.raw(key).is_none() {
            return Err(format!("missing parameter {key}"));
        }
        self.f64_or(key, 0.0)
    }
    pub fn uint_or(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| format!("parameter {key}={v} is not a non-negative integer")),
        }
    }
    pub fn uint_req(&self, key: &str) -> Result<u64, String> {
        if self.raw(key).is_none() {
            return Err(format!("missing parameter {key}"));
        }
        self.uint_or(key, 0)
    }
    /// A number of CPUs, 1 to [`MAX_CPUS`] (checked before it is narrowed to `u32`: m = 2^32
    /// must not wrap to 0).
    pub fn cpus_or(&self, key: &str, default: u64) -> Result<u32, String> {
        let m = self.uint_or(key, default)?;
        if !(1..=MAX_CPUS).contains(&m) {
            return Err(format!("parameter {key}={m}: the number of CPUs must be between 1 and {MAX_CPUS} (as a task file's platform.cpus)"));
        }
        Ok(m as u32)
    }
    pub fn duration_or(&self, key: &str, default: Time) -> Result<Time, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => parse_duration_str(v).map_err(|e| format!("parameter {key}: {e}")),
        }
    }
    pub fn str_or<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.raw(key).unwrap_or(default)
    }
}

/// A generator in the registry.
pub struct GeneratorInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Parameters it reads, with defaults, for the help text.
    pub params: &'static str,
}

const GENERIC_KEYS: &[&str] = &[
    "n",
    "m",
    "U",
    "u_min",
    "u_max",
    "period",
    "tmin",
    "tmax",
    "deadline",
    "f",
    "granularity",
];

pub const GENERATORS: &[GeneratorInfo] = &[
    GeneratorInfo { name: "uunifast", summary: "UUniFast (Bini & Buttazzo 2005): uniform over the simplex; U <= 1 (above, a share could exceed 1: use uunifast-discard or randfixedsum)", params: UUNIFAST_HELP },
    GeneratorInfo { name: "uunifast-discard", summary: "UUniFast-Discard (Davis & Burns 2009): UUniFast redrawn until u in [u_min, u_max]", params: GENERIC_HELP },
    GeneratorInfo { name: "randfixedsum", summary: "RandFixedSum (Stafford; Emberson et al. 2010): uniform with u in [u_min, u_max]", params: GENERIC_HELP },
    GeneratorInfo { name: "paws2013", summary: "PAWS §5: u in [0.1,0.4], T in [100,150] ms, tasks added until U is in a window; threads per task", params: "m=2, window=1..4 (the paper's 28-30%, 58-60%, 78-80%, 83-85%; default 1) or U_min, U_max (fractions of m unless absolute=1), u_min=0.1, u_max=0.4, tmin=100ms, tmax=150ms, absolute=0, parallel=1 (0: sequential tasks, no regions)" },
    GeneratorInfo { name: "lelli2011", summary: "gedf-heap §6.2: N = x·m, U = R·m by RandFixedSum, T log-uniform in [10,100] ms", params: "m=4, R=0.6, x=3" },
    GeneratorInfo { name: "mlu", summary: "LWFG Table 1 MLU: 1-4 tasks/MTT, u in [0.01,0.1] and T in [24,240] ms per MTT, WSS = e/3·128 KiB", params: LWFG_HELP },
    GeneratorInfo { name: "mmu", summary: "LWFG Table 1 MMU: 1-4 tasks/MTT, u in [0.1,0.4] and T in [24,240] ms per MTT, WSS = e/3·128 KiB", params: LWFG_HELP },
    GeneratorInfo { name: "mwl", summary: "LWFG Table 1 MWL: 1-8 tasks/MTT, u, T per MTT, WSS in [64,512] KiB", params: LWFG_HELP },
    GeneratorInfo { name: "mwh", summary: "LWFG Table 1 MWH: 1-8 tasks/MTT, u, T per MTT, WSS in [4096,8192] KiB", params: LWFG_HELP },
    GeneratorInfo { name: "mwlp", summary: "LWFG Table 1 MWLP: as MWL but u per task", params: LWFG_HELP },
    GeneratorInfo { name: "mwhp", summary: "LWFG Table 1 MWHP: as MWH but u per task", params: LWFG_HELP },
    GeneratorInfo { name: "mwlu", summary: "LWFG Table 1 MWLU: as MWL but T per task", params: LWFG_HELP },
    GeneratorInfo { name: "mwhu", summary: "LWFG Table 1 MWHU: as MWH but T per task", params: LWFG_HELP },
    GeneratorInfo { name: "chronos2011", summary: "ChronOS §6.2: 12 tasks, T in [40 ms, 2 s], step TUFs with utilities in [1, 100], cpu fields by worst fit on load", params: "m=4, U=m/2 (may exceed m: overload; at most n), n=12, tmin=40ms, tmax=2s, place=wf|none (cpu fields for partitioned policies)" },
    GeneratorInfo { name: "dag-nfj", summary: "DAG tasks: nested fork-join (Melani et al., ECRTS 2015): forks with probability p into 2..k branches, depth d; u by RandFixedSum or UUniFast", params: dag::NFJ_HELP },
    GeneratorInfo { name: "dag-layered", summary: "DAG tasks: layered random graphs, one source and one sink, edges between adjacent layers with probability p; u by RandFixedSum or UUniFast", params: dag::LAYERED_HELP },
    GeneratorInfo { name: "waters2015", summary: "Kramer et al., WATERS 2015: automotive runnables by the paper's period shares, ACETs and BCET/WCET factors, grouped into tasks", params: waters::HELP },
    GeneratorInfo { name: "waters2015-chains", summary: "waters2015's set with cause-effect chains as Dürr et al. (EMSOFT 2019) draw them: 1-3 periods per chain, 2-5 tasks per period; implicit or LET", params: waters_chains::HELP },
    GeneratorInfo { name: "ros2-tree", summary: "ROS 2-like callbacks (Casini et al., ECRTS 2019): timers at the roots, subscribers triggered by their publisher, bounded fan-out, optional joins; an event chain per leaf; U exact", params: ros2::HELP },
];

const UUNIFAST_HELP: &str = concat!("n, U (required; U <= 1, refused above: use uunifast-discard or randfixedsum); m=1, period=loguniform|uniform|harmonic, tmin=10ms, tmax=100ms, deadline=implicit|constrained, f=0, granularity=1us; ", sections_help!());
const GENERIC_HELP: &str = concat!("n, U (required); m=1, u_min=0, u_max=1 (at most 1: sequential tasks), period=loguniform|uniform|harmonic, tmin=10ms, tmax=100ms, deadline=implicit|constrained, f=0, granularity=1us; ", sections_help!());
const LWFG_HELP: &str =
    "m=48, U=m/2 (utilisation cap: tasks are added until the next would exceed it)";

pub fn names() -> Vec<&'static str> {
    GENERATORS.iter().map(|g| g.name).collect()
}

/// Generate a task set with generator `name`.
pub fn by_name(name: &str, params: &Params, seed: u64) -> Result<Generated, String> {
    let mut rng = rng(seed);
    let mut g = match name {
        "uunifast" | "uunifast-discard" | "randfixedsum" => {
            params.check_known(name, &[GENERIC_KEYS, sections::KEYS].concat())?;
            let sections = sections::Sections::from_params(params)?;
            let mut g = generic(name, params, &mut rng)?;
            if let Some(s) = sections {
                s.add_to(&mut g.taskset, &g.utilisations, seed);
            }
            g
        }
        "paws2013" => {
            params.check_known(
                name,
                &[
                    "m", "window", "U_min", "U_max", "u_min", "u_max", "tmin", "tmax", "absolute",
                    "parallel",
                ],
            )?;
            papers::paws2013(&mut rng, params)?
        }
        "lelli2011" => {
            params.check_known(name, &["m", "R", "x"])?;
            let m = params.cpus_or("m", 4)?;
            papers::lelli2011(
                &mut rng,
                m,
                params.f64_or("R", 0.6)?,
                params.uint_or("x", 3)?,
            )?
        }
        "chronos2011" => {
            params.check_known(name, &["m", "U", "n", "tmin", "tmax", "place"])?;
            let m = params.cpus_or("m", 4)?;
            let periods = PeriodDist::LogUniform {
                min: params.duration_or("tmin", 40 * NS_PER_MS)?,
                max: params.duration_or("tmax", 2_000 * NS_PER_MS)?,
            };
            let place = match params.str_or("place", "wf") {
                "wf" => papers::Placement::WorstFitLoad,
                "none" => papers::Placement::None,
                other => return Err(format!("generator chronos2011: parameter place={other}: known: wf (worst fit on load, no admission), none")),
            };
            papers::chronos2011(
                &mut rng,
                m,
                params.f64_or("U", 0.5 * m as f64)?,
                tasks_param(params.uint_or("n", 12)?)?,
                periods,
                place,
            )?
        }
        "dag-nfj" | "dag-layered" => {
            let shape: &[&str] = if name == "dag-nfj" {
                &["p", "k", "d", "p_add"]
            } else {
                &["nodes", "layers", "p"]
            };
            params.check_known(name, &[GENERIC_KEYS, dag::COMMON_KEYS, shape].concat())?;
            dag::generate(&mut rng, name, params)?
        }
        "waters2015" => {
            params.check_known(name, waters::KEYS)?;
            waters::waters2015(&mut rng, params)?
        }
        "waters2015-chains" => {
            params.check_known(name, &waters_chains::keys())?;
            waters_chains::generate(&mut rng, params)?
        }
        "ros2-tree" => {
            params.check_known(name, ros2::KEYS)?;
            ros2::generate(&mut rng, params)?
        }
        _ => match papers::Mtt::by_name(name) {
            Some(dist) => {
                params.check_known(name, &["m", "U"])?;
                let m = params.cpus_or("m", 48)?;
                papers::lwfg_mtt(&mut rng, &dist, m, params.f64_or("U", 0.5 * m as f64)?)?
            }
            None => {
                let hint = closest(name, &names())
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown generator '{name}'{hint}; known generators: {}",
                    names().join(", ")
                ));
            }
        },
    };
    let shown: Vec<String> = params
        .items
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    g.taskset.source = format!(
        "gen:{name}({}seed={seed})",
        shown.iter().map(|s| format!("{s},")).collect::<String>()
    );
    g.taskset.run.seed = seed;
    Ok(g)
}

/// UUniFast-Discard's tries for `n` tasks: 100,000, fewer for large n so that all of them
/// together stay within [`MAX_DRAWS`] (n ≤ 1000 keeps 100,000 and the same sets as before).
fn discard_tries(n: usize) -> u32 {
    (MAX_DRAWS / n.max(1) as u64).clamp(1, 100_000) as u32
}

/// A task count `n` as given, checked against [`MAX_TASKS`] before anything is allocated.
fn tasks_param(n: u64) -> Result<usize, String> {
    if n > MAX_TASKS as u64 {
        return Err(format!("parameter n={n}: at most {MAX_TASKS} tasks (a set of {n} would need about {} of memory)", fmt_bytes(n.saturating_mul(TASK_BYTES))));
    }
    Ok(n as usize)
}

/// About what one generated task costs in memory (the task, its name, its drawn values).
pub const TASK_BYTES: u64 = 256;

/// `bytes` for a message: `1.5 GB`, `240.0 GB`, `12.0 MB`.
pub fn fmt_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else {
        format!("{:.1} MB", b / 1e6)
    }
}

fn generic<R: Rng>(name: &str, p: &Params, rng: &mut R) -> Result<Generated, String> {
    let n = tasks_param(p.uint_req("n")?)?;
    let m = p.cpus_or("m", 1)?;
    let total = p.f64_req("U")?;
    let (u_min, u_max) = (p.f64_or("u_min", 0.0)?, p.f64_or("u_max", 1.0)?);
    if name == "uunifast" && (p.raw("u_min").is_some() || p.raw("u_max").is_some()) {
        return Err("uunifast takes no u_min/u_max (use uunifast-discard or randfixedsum)".into());
    }
    if let Some(e) = sequential_bounds(name, total, u_max) {
        return Err(e);
    }
    let utils = match name {
        "uunifast" => uunifast(rng, n, total)?,
        "uunifast-discard" => uunifast_discard(rng, n, total, u_min, u_max, discard_tries(n))?,
        _ => randfixedsum(rng, n, total, u_min, u_max)?,
    };
    let periods = period_param(p)?;
    let deadlines = deadline_param(p)?;
    let g = granularity_param(p)?;
    let ps: Vec<Time> = (0..n).map(|_| periods.draw(rng, g)).collect();
    let tasks = build(rng, &utils, &ps, deadlines);
    Ok(Generated {
        taskset: TaskSet::new(m, tasks),
        utilisations: utils,
        threads: None,
        utilities: None,
    })
}

/// `period=loguniform|uniform|harmonic`, `tmin=10ms`, `tmax=100ms`: the generic generators'
/// period parameters (the DAG generators take them too).
fn period_param(p: &Params) -> Result<PeriodDist, String> {
    let (tmin, tmax) = (
        p.duration_or("tmin", 10 * NS_PER_MS)?,
        p.duration_or("tmax", 100 * NS_PER_MS)?,
    );
    let periods = match p.str_or("period", "loguniform") {
        "uniform" => PeriodDist::Uniform {
            min: tmin,
            max: tmax,
        },
        "loguniform" => PeriodDist::LogUniform {
            min: tmin,
            max: tmax,
        },
        "harmonic" => PeriodDist::Harmonic {
            min: tmin,
            max: tmax,
        },
        other => {
            return Err(format!(
            "parameter period={other}: known period distributions: uniform, loguniform, harmonic"
        ))
        }
    };
    periods.check()?;
    Ok(periods)
}

/// `deadline=implicit|constrained`, `f=0`.
fn deadline_param(p: &Params) -> Result<DeadlineDist, String> {
    let deadlines = match p.str_or("deadline", "implicit") {
        "implicit" => DeadlineDist::Implicit,
        "constrained" => DeadlineDist::Constrained {
            f: p.f64_or("f", 0.0)?,
        },
        other => {
            return Err(format!(
                "parameter deadline={other}: known: implicit, constrained"
            ))
        }
    };
    deadlines.check()?;
    Ok(deadlines)
}

/// `granularity=1us`, > 0.
fn granularity_param(p: &Params) -> Result<Time, String> {
    let g = p.duration_or("granularity", NS_PER_US)?;
    if g == 0 {
        return Err("parameter granularity must be > 0".into());
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gen(name: &str, params: &str, seed: u64) -> Result<Generated, String> {
        by_name(name, &Params::parse(params).unwrap(), seed)
    }

    proptest! {
        #[test]
        fn reproducible_by_seed(seed: u64, which in 0usize..5) {
            let (name, p) = [("randfixedsum", "n=10,U=3,m=4,u_max=0.5"), ("lelli2011", "m=2"), ("mwlp", "m=4,U=2"), ("paws2013", "U_min=0.5,U_max=0.6"), ("chronos2011", "")][which];
            let a = gen(name, p, seed).unwrap();
            prop_assert_eq!(&a, &gen(name, p, seed).unwrap());
            prop_assert_ne!(a.taskset.tasks, gen(name, p, seed.wrapping_add(1)).unwrap().taskset.tasks);
        }

        #[test]
        fn tasksets_round_to_the_granularity(seed: u64, constrained: bool) {
            let p = format!("n=8,U=2.5,m=4,u_max=0.6,period=uniform,tmin=1ms,tmax=50ms,deadline={}", if constrained { "constrained" } else { "implicit" });
            let g = gen("randfixedsum", &p, seed).unwrap();
            prop_assert!((g.utilisations.iter().sum::<f64>() - 2.5).abs() < 1e-9);
            for (t, &u) in g.taskset.tasks.iter().zip(&g.utilisations) {
                prop_assert_eq!(t.period % NS_PER_US, 0);
                prop_assert!((NS_PER_MS..=50 * NS_PER_MS).contains(&t.period));
                prop_assert!(t.wcet >= 1 && t.wcet <= t.deadline && t.deadline <= t.period);
                prop_assert!((t.wcet as f64 - u * t.period as f64).abs() <= 0.5 + 1e-6);
                if !constrained { prop_assert_eq!(t.deadline, t.period); }
            }
        }
    }

    #[test]
    fn harmonic_periods_divide_each_other() {
        let g = gen(
            "uunifast",
            "n=20,U=0.9,period=harmonic,tmin=5ms,tmax=80ms",
            3,
        )
        .unwrap();
        let ps: Vec<Time> = g.taskset.tasks.iter().map(|t| t.period).collect();
        assert!(
            ps.iter()
                .all(|&p| [5, 10, 20, 40, 80].contains(&(p / NS_PER_MS)) && p % NS_PER_MS == 0),
            "{ps:?}"
        );
        assert!(ps.iter().any(|&p| p != ps[0]));
    }

    #[test]
    fn paper_distributions() {
        let g = gen("lelli2011", "m=8,R=0.7", 1).unwrap();
        assert_eq!(g.taskset.tasks.len(), 24);
        assert!((g.utilisations.iter().sum::<f64>() - 5.6).abs() < 1e-9);
        assert!(g
            .taskset
            .tasks
            .iter()
            .all(|t| (10 * NS_PER_MS..=100 * NS_PER_MS).contains(&t.period)));

        let g = gen("paws2013", "m=2,window=3", 5).unwrap();
        let u: f64 = g.utilisations.iter().sum();
        assert!((1.56..=1.60).contains(&u), "{u}");
        assert!(g.utilisations.iter().all(|u| (0.1..=0.4).contains(u)));
        assert!(g
            .threads
            .as_ref()
            .unwrap()
            .iter()
            .all(|&n| (1..=6).contains(&n)));
        assert!(g
            .taskset
            .tasks
            .iter()
            .all(|t| (100 * NS_PER_MS..=150 * NS_PER_MS).contains(&t.period)));
        // Each task with n_i > 1: sequential, n_i parallel threads, sequential; sum = C.
        for (t, &n) in g.taskset.tasks.iter().zip(g.threads.as_ref().unwrap()) {
            if n > 1 {
                let shape: Vec<usize> = t.regions.iter().map(|r| r.threads.len()).collect();
                assert_eq!(shape, vec![1, n as usize, 1]);
                assert_eq!(
                    t.regions
                        .iter()
                        .flat_map(|r| r.threads.iter())
                        .sum::<Time>(),
                    t.wcet
                );
                assert!(t
                    .regions
                    .iter()
                    .flat_map(|r| r.threads.iter())
                    .all(|&w| w > 0));
            } else {
                assert!(t.regions.is_empty());
            }
        }
        assert!(g.taskset.tasks.iter().any(|t| t.is_parallel()));
        let seq = gen("paws2013", "m=2,window=3,parallel=0", 5).unwrap();
        assert!(seq.taskset.tasks.iter().all(|t| t.regions.is_empty()));

        let g = gen("chronos2011", "U=3", 9).unwrap();
        assert_eq!(g.taskset.tasks.len(), 12);
        assert!(g
            .utilities
            .as_ref()
            .unwrap()
            .iter()
            .all(|&v| (1.0..=100.0).contains(&v)));
        assert!(g
            .taskset
            .tasks
            .iter()
            .all(|t| (40 * NS_PER_MS..=2_000 * NS_PER_MS).contains(&t.period)));
    }

    proptest! {
        /// chronos2011 at any load of Fig. 5 (0.2-2.0 of m = 4): Σu on target, u ≤ 1, periods in
        /// range, D = T, a step TUF of the drawn utility ending at the deadline, and every task
        /// placed by worst fit on load (the emptiest CPU when it was placed).
        #[test]
        fn chronos2011_sets(seed: u64, load_tenths in 2u32..=20, n in 8usize..=24) {
            let u_total = load_tenths as f64 / 10.0 * 4.0;
            let g = gen("chronos2011", &format!("m=4,U={u_total},n={n}"), seed).unwrap();
            prop_assert_eq!(g.taskset.tasks.len(), n);
            prop_assert!((g.utilisations.iter().sum::<f64>() - u_total).abs() < 1e-6);
            prop_assert!(g.utilisations.iter().all(|&u| (0.0..=1.0).contains(&u)));
            let utilities = g.utilities.as_ref().unwrap();
            let mut load = [0.0f64; 4];
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| g.utilisations[b].total_cmp(&g.utilisations[a]).then(a.cmp(&b)));
            for i in order {
                let t = &g.taskset.tasks[i];
                prop_assert!((40 * NS_PER_MS..=2_000 * NS_PER_MS).contains(&t.period));
                prop_assert_eq!(t.deadline, t.period);
                prop_assert!(utilities[i] == utilities[i].round() && (1.0..=100.0).contains(&utilities[i]));
                prop_assert_eq!(t.tuf.clone(), Some(rtsched_model::Tuf::Step { utility: utilities[i], termination: t.deadline }));
                let cpu = t.cpu.unwrap() as usize;
                let least = load.iter().cloned().fold(f64::INFINITY, f64::min);
                prop_assert_eq!(load[cpu], least);
                load[cpu] += g.utilisations[i];
            }
        }
    }

    #[test]
    fn chronos2011_options() {
        let g = gen("chronos2011", "m=2,U=3,place=none,tmin=10ms,tmax=200ms", 4).unwrap();
        assert_eq!(g.taskset.platform.cpus, 2);
        assert!(g
            .taskset
            .tasks
            .iter()
            .all(|t| t.cpu.is_none() && (10 * NS_PER_MS..=200 * NS_PER_MS).contains(&t.period)));
        // Seeded: the same set again, another with the next seed.
        assert_eq!(
            gen("chronos2011", "U=6", 11).unwrap(),
            gen("chronos2011", "U=6", 11).unwrap()
        );
        assert_ne!(
            gen("chronos2011", "U=6", 11).unwrap().taskset.tasks,
            gen("chronos2011", "U=6", 12).unwrap().taskset.tasks
        );
        assert!(gen("chronos2011", "place=ffd", 1)
            .unwrap_err()
            .contains("chronos2011: parameter place=ffd"));
        assert!(
            gen("chronos2011", "n=4,U=5", 1).is_err(),
            "Σu = 5 cannot split into 4 tasks of u ≤ 1"
        );
    }

    #[test]
    fn lwfg_mtt_distributions_follow_table_1() {
        for d in papers::Mtt::TABLE_1 {
            let g = gen(d.name, "m=8,U=6", 42).unwrap();
            let ts = &g.taskset;
            let u: f64 = g.utilisations.iter().sum();
            assert!(u <= 6.0 && u > 6.0 - d.util.1, "{}: U={u}", d.name);
            let groups = ts.tasks.iter().map(|t| t.group.unwrap()).max().unwrap() + 1;
            for gid in 0..groups {
                let members: Vec<usize> = (0..ts.tasks.len())
                    .filter(|&i| ts.tasks[i].group == Some(gid))
                    .collect();
                // The last MTT may be cut short by the cap; the others have their full size.
                assert!(members.len() as u32 <= d.tasks_per_mtt.1, "{}", d.name);
                let same =
                    |f: &dyn Fn(usize) -> u64| members.iter().all(|&i| f(i) == f(members[0]));
                assert!(
                    same(&|i| ts.tasks[i].wss.unwrap()),
                    "{}: WSS differs within an MTT",
                    d.name
                );
                if !d.period_per_task {
                    assert!(same(&|i| ts.tasks[i].period), "{}", d.name);
                }
                if !d.util_per_task && !d.period_per_task {
                    assert!(same(&|i| ts.tasks[i].wcet), "{}", d.name);
                }
                let w = ts.tasks[members[0]].wss.unwrap();
                match d.wss {
                    papers::WssRule::UniformKiB(lo, hi) => {
                        assert!(w / 1024 * 1024 == w && (lo..=hi).contains(&(w / 1024)))
                    }
                    papers::WssRule::FromExecution => {
                        let e_ms = ts.tasks[members[0]].wcet as f64 / NS_PER_MS as f64;
                        assert!(
                            (w as f64 - e_ms / 3.0 * 128.0 * 1024.0).abs() < 2.0,
                            "{w} vs e={e_ms}"
                        );
                    }
                }
            }
            assert!(g
                .utilisations
                .iter()
                .all(|u| (d.util.0..=d.util.1).contains(u)));
        }
        // Per-task utilisations differ within an MTT in MWLP, periods in MWLU.
        let g = gen("mwlp", "m=8,U=6", 1).unwrap();
        assert!(g
            .taskset
            .tasks
            .windows(2)
            .any(|w| w[0].group == w[1].group && w[0].wcet != w[1].wcet));
    }

    #[test]
    fn bad_parameters_are_named() {
        assert_eq!(
            gen("randfixedsum", "n=4,U=5", 1).unwrap_err(),
            "total utilisation U=5 exceeds n·u_max = 4"
        );
        assert!(gen("randfixedsum", "n=4,U=1,u_min=0.5,u_max=0.2", 1)
            .unwrap_err()
            .contains("u_min=0.5 exceeds u_max=0.2"));
        assert!(gen("uunifast", "n=0,U=1", 1).unwrap_err().contains("n=0"));
        assert!(gen("uunifast", "U=1", 1)
            .unwrap_err()
            .contains("missing parameter n"));
        assert!(gen("uunifast", "n=3,U=1,tmin=10ms,tmax=1ms", 1)
            .unwrap_err()
            .contains("tmin=10ms exceeds maximum period tmax=1ms"));
        assert!(gen("uunifast", "n=3,U=1,period=gaussian", 1)
            .unwrap_err()
            .contains("period=gaussian"));
        assert!(gen("uunifast", "n=3,U=1,deadline=constrained,f=2", 1)
            .unwrap_err()
            .contains("f=2"));
        assert!(gen("uunifast", "n=3,U=1,nn=3", 1)
            .unwrap_err()
            .contains("no parameter 'nn' (did you mean 'n'?)"));
        // A key that differs only in case is the one meant, before one an edit away.
        for (g, p) in [
            ("randfixedsum", "n=8,u=2.5"),
            ("mwl", "m=4,u=2"),
            ("lelli2011", "r=0.5"),
        ] {
            let e = gen(g, p, 1).unwrap_err();
            let meant = if g == "lelli2011" { "R" } else { "U" };
            assert!(
                e.contains(&format!("(did you mean '{meant}'?)")),
                "{g}: {e}"
            );
        }
        assert!(gen("uunifast", "n=3,U=x", 1)
            .unwrap_err()
            .contains("U=x is not a number"));
        assert!(gen("lelli2011", "m=2,R=1.5", 1)
            .unwrap_err()
            .contains("R=1.5"));
        assert!(gen("mwl", "m=4,U=9", 1)
            .unwrap_err()
            .contains("exceeds the platform's m = 4"));
        assert!(gen("paws2013", "U_min=0.5,U_max=0.4", 1)
            .unwrap_err()
            .contains("exceeds U_max"));
        assert!(gen("paws2013", "window=5", 1)
            .unwrap_err()
            .contains("window=5 must be 1, 2, 3 or 4"));
        assert!(gen("paws2013", "window=0", 1)
            .unwrap_err()
            .contains("window=0"));
        assert!(gen("uunifst", "", 1)
            .unwrap_err()
            .contains("did you mean 'uunifast'"));
        assert!(Params::parse("m4").unwrap_err().contains("key=value"));
    }

    #[test]
    fn generated_sets_survive_the_yaml_round_trip() {
        for (name, p) in [("mwh", "m=4,U=3"), ("paws2013", "m=4,window=2")] {
            let g = gen(name, p, 7).unwrap();
            let text = rtsched_model::file::to_yaml(&g.taskset);
            let back =
                rtsched_model::parse_taskset(&text, rtsched_model::Format::Yaml, "x.yaml").unwrap();
            assert_eq!(back.tasks, g.taskset.tasks, "{name}");
        }
    }
}
