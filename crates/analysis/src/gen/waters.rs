//! `waters2015`: automotive task sets from the distributions of S. Kramer, D. Ziegenbein and
//! A. Hamann, "Real World Automotive Benchmarks For Free", WATERS 2015 (Robert Bosch GmbH; the
//! characteristics of a real engine-management ECU, published so that benchmarks can be drawn
//! from them). Choices where the paper leaves one: docs/generators.md "waters2015".
//!
//! 1. **Runnables.** The unit of code is the runnable. Each one belongs to a period class
//!    with the share of runnables in the paper's table of runnable periods (Table III: 1 ms 3%,
//!    2 ms 2%, 5 ms 2%, 10 ms 25%, 20 ms 25%, 50 ms 3%, 100 ms 20%, 200 ms 1%, 1000 ms 4%,
//!    angle-synchronous 15%), drawn as an integer in 0..100 so the shares are exact.
//! 2. **ACET.** The paper gives the minimum, average and maximum of the runnables' average
//!    execution times per class (Table IV, µs) and no law. We draw the law of largest entropy
//!    on [min, max] with that mean: an exponential truncated to [min, max], its rate solved so
//!    its mean is the table's average (falling for nine classes; rising for 1000 ms, whose
//!    average 0.43 lies above the midpoint of [0.37, 0.46]). A triangular law with the average
//!    as mode, another common reading, has mean (min + avg + max)/3: 107 µs for the 10 ms class
//!    against the table's 10.09.
//! 3. **BCET, WCET.** BCET = ACET · f_min and WCET = ACET · f_max, with f_min and f_max uniform
//!    in the per-class ranges of the paper's table of factors (Table V). The task set holds the
//!    WCETs (the budget a scheduler is told); the ACET and BCET of each runnable are in
//!    [`Runnable`] (the task-set format has no per-task execution-time law yet).
//! 4. **Angle-synchronous** runnables run once per combustion: every 120 / (rpm · cylinders) s.
//!    `angle=sporadic` (default): a sporadic task whose inter-arrival time lies between the
//!    times at `rpm_max` (its T: 5 ms at 6000 rpm, 4 cylinders) and `rpm_min` (30 ms at 1000
//!    rpm); `angle=periodic`: periodic at the `rpm_max` time; `angle=exclude`: no such
//!    runnables, the other shares renormalised (of 85).
//! 5. **How many.** Runnables are drawn until Σ WCET/T reaches U·(1 − `tolerance`); a set that
//!    then exceeds `U` is discarded and drawn again whole (PAWS's window rule: no runnable is
//!    trimmed or skipped, so the set is the tables' law conditioned on its sum). Or exactly `n`.
//!    Stopping at the first runnable that does not fit (LWFG's cap rule) would leave Σ short of
//!    U whenever a large runnable comes up: at U = 2, 9% of sets ended below 1.9, one at 1.61.
//! 6. **Tasks.** `tasks=period` (default): the runnables of one period class run in sequence in
//!    one task of that period (an AUTOSAR ECU's "10 ms task"), C = Σ WCET; a task that would
//!    exceed its period is split (next fit in draw order), so every task fits its period.
//!    `tasks=runnable`: each runnable is a task. D = T, integer ns (ACET µs · 1000, rounded).

use super::{Generated, Params, MAX_DRAWS, MAX_TASKS};
use rand::Rng;
use rtsched_model::time::{fmt_duration, NS_PER_MS};
use rtsched_model::{Task, TaskSet, Time};

/// One period class: a row of the paper's Tables III, IV and V.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodClass {
    /// `1ms` … `1000ms`, or `angle`.
    pub label: &'static str,
    /// The period in ms; `None` for angle-synchronous runnables (their period follows the rpm).
    pub period_ms: Option<u64>,
    /// Share of runnables in percent (Table III).
    pub share: u32,
    /// Runnables' ACET in µs: minimum, average, maximum (Table IV).
    pub acet_us: (f64, f64, f64),
    /// BCET = ACET · f_min, f_min uniform in this range (Table V).
    pub bcet_factor: (f64, f64),
    /// WCET = ACET · f_max, f_max uniform in this range (Table V).
    pub wcet_factor: (f64, f64),
}

const fn class(
    label: &'static str,
    period_ms: Option<u64>,
    share: u32,
    acet_us: (f64, f64, f64),
    bcet_factor: (f64, f64),
    wcet_factor: (f64, f64),
) -> PeriodClass {
    PeriodClass {
        label,
        period_ms,
        share,
        acet_us,
        bcet_factor,
        wcet_factor,
    }
}

/// Kramer, Ziegenbein & Hamann (WATERS 2015), Tables III (share), IV (ACET) and V (factors).
pub const TABLE: [PeriodClass; 10] = [
    class(
        "1ms",
        Some(1),
        3,
        (0.34, 5.00, 30.11),
        (0.19, 0.92),
        (1.30, 29.11),
    ),
    class(
        "2ms",
        Some(2),
        2,
        (0.32, 4.20, 40.69),
        (0.12, 0.89),
        (1.54, 19.04),
    ),
    class(
        "5ms",
        Some(5),
        2,
        (0.36, 11.04, 83.38),
        (0.17, 0.94),
        (1.13, 18.44),
    ),
    class(
        "10ms",
        Some(10),
        25,
        (0.21, 10.09, 309.87),
        (0.05, 0.99),
        (1.06, 30.03),
    ),
    class(
        "20ms",
        Some(20),
        25,
        (0.25, 8.74, 291.42),
        (0.11, 0.98),
        (1.06, 15.61),
    ),
    class(
        "50ms",
        Some(50),
        3,
        (0.29, 17.56, 92.98),
        (0.32, 0.95),
        (1.13, 7.76),
    ),
    class(
        "100ms",
        Some(100),
        20,
        (0.21, 10.53, 420.43),
        (0.09, 0.99),
        (1.02, 8.88),
    ),
    class(
        "200ms",
        Some(200),
        1,
        (0.22, 2.56, 21.95),
        (0.45, 0.98),
        (1.03, 4.90),
    ),
    class(
        "1000ms",
        Some(1000),
        4,
        (0.37, 0.43, 0.46),
        (0.68, 0.80),
        (1.84, 4.75),
    ),
    class(
        "angle",
        None,
        15,
        (0.45, 6.52, 88.58),
        (0.13, 0.92),
        (1.20, 28.17),
    ),
];

/// The most sets drawn and discarded before `waters2015` gives up on a window.
pub const MAX_TRIES: u32 = 100_000;

/// Index of the angle-synchronous class in [`TABLE`].
pub const ANGLE: usize = 9;

/// The parameters `waters2015` reads.
pub const KEYS: &[&str] = &[
    "m",
    "U",
    "tolerance",
    "n",
    "tasks",
    "angle",
    "rpm_min",
    "rpm_max",
    "cylinders",
];

/// Help text for `rtsched gen --list`.
pub const HELP: &str = "m=4, U=m/2 (Σ WCET/T lands in [U·(1-tolerance), U]), tolerance=0.01; or n (runnables); tasks=period|runnable, angle=sporadic|periodic|exclude, rpm_min=1000, rpm_max=6000, cylinders=4";

/// How angle-synchronous runnables are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Angle {
    /// Sporadic: inter-arrival time in [min, max] (the times at rpm_max and rpm_min).
    Sporadic { min: Time, max: Time },
    /// Periodic at the given period (the time at rpm_max).
    Periodic(Time),
    /// None drawn: the other classes' shares are renormalised.
    Exclude,
}

/// How runnables become tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// One task per period class (split where C would exceed T).
    Period,
    /// One task per runnable.
    Runnable,
}

/// How many runnables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// Σ WCET/T in [cap · (1 − tolerance), cap].
    Cap { cap: f64, tolerance: f64 },
    /// Exactly this many.
    Runnables(usize),
}

/// The generator's settings, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub m: u32,
    pub amount: Amount,
    pub mapping: Mapping,
    pub angle: Angle,
}

/// One drawn runnable. Times in µs as drawn; [`Runnable::wcet_ns`] etc. round to ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runnable {
    /// Index into [`TABLE`].
    pub class: usize,
    pub acet_us: f64,
    /// f_min: BCET = ACET · f_min.
    pub bcet_factor: f64,
    /// f_max: WCET = ACET · f_max.
    pub wcet_factor: f64,
}

fn us_to_ns(us: f64) -> Time {
    ((us * 1000.0).round() as Time).max(1)
}

impl Runnable {
    pub fn acet_ns(&self) -> Time {
        us_to_ns(self.acet_us)
    }
    pub fn bcet_ns(&self) -> Time {
        us_to_ns(self.acet_us * self.bcet_factor)
    }
    pub fn wcet_ns(&self) -> Time {
        us_to_ns(self.acet_us * self.wcet_factor)
    }
}

/// The time between two combustions: 120 / (rpm · cylinders) s (a four-stroke engine fires
/// every cylinder once in two revolutions), rounded to the ns.
pub fn combustion_interval(rpm: u64, cylinders: u64) -> Time {
    let d = rpm.saturating_mul(cylinders).max(1) as u128;
    ((120_000_000_000u128 + d / 2) / d) as Time
}

impl Config {
    /// Read and check the parameters (the keys are checked by the caller).
    pub fn from_params(p: &Params) -> Result<Config, String> {
        let m = p.cpus_or("m", 4)?;
        let amount = match (p.raw("n"), p.raw("U")) {
            (Some(_), Some(_)) => {
                return Err(
                    "generator waters2015: give n (runnables) or U (utilisation), not both".into(),
                )
            }
            (Some(_), None) if p.raw("tolerance").is_some() => {
                return Err("generator waters2015: tolerance is for U, not n".into())
            }
            (Some(_), None) => {
                let n = p.uint_req("n")?;
                if n == 0 {
                    return Err("parameter n=0: at least 1 runnable".into());
                }
                if n > MAX_TASKS as u64 {
                    return Err(format!("parameter n={n}: at most {MAX_TASKS} runnables"));
                }
                Amount::Runnables(n as usize)
            }
            _ => {
                let cap = p.f64_or("U", 0.5 * m as f64)?;
                if cap <= 0.0 {
                    return Err(format!("utilisation U={cap} must be > 0"));
                }
                if cap > m as f64 {
                    return Err(format!(
                        "utilisation U={cap} exceeds the platform's m = {m}"
                    ));
                }
                let tolerance = p.f64_or("tolerance", 0.01)?;
                if !(tolerance > 0.0 && tolerance <= 1.0) {
                    return Err(format!(
                        "parameter tolerance={tolerance} must be in (0, 1] (a fraction of U)"
                    ));
                }
                Amount::Cap { cap, tolerance }
            }
        };
        let mapping = match p.str_or("tasks", "period") {
            "period" => Mapping::Period,
            "runnable" => Mapping::Runnable,
            other => return Err(format!("generator waters2015: parameter tasks={other}: known: period (one task per period class), runnable (one task per runnable)")),
        };
        let (rpm_min, rpm_max, cyl) = (
            p.uint_or("rpm_min", 1000)?,
            p.uint_or("rpm_max", 6000)?,
            p.uint_or("cylinders", 4)?,
        );
        if rpm_min == 0 || cyl == 0 {
            return Err(format!(
                "parameters rpm_min={rpm_min} and cylinders={cyl} must be > 0"
            ));
        }
        if rpm_min > rpm_max {
            return Err(format!("rpm_min={rpm_min} exceeds rpm_max={rpm_max}"));
        }
        let (t_min, t_max) = (
            combustion_interval(rpm_max, cyl),
            combustion_interval(rpm_min, cyl),
        );
        let longest = us_to_ns(TABLE[ANGLE].acet_us.2 * TABLE[ANGLE].wcet_factor.1);
        let angle = match p.str_or("angle", "sporadic") {
            "exclude" => Angle::Exclude,
            a @ ("sporadic" | "periodic") => {
                if t_min < longest {
                    return Err(format!(
                        "rpm_max={rpm_max} and cylinders={cyl} give an angle-synchronous inter-arrival time of {}, shorter than the longest angle-synchronous WCET {} (Tables IV, V); lower rpm_max or cylinders, or angle=exclude",
                        fmt_duration(t_min),
                        fmt_duration(longest)
                    ));
                }
                if a == "sporadic" {
                    Angle::Sporadic {
                        min: t_min,
                        max: t_max,
                    }
                } else {
                    Angle::Periodic(t_min)
                }
            }
            other => {
                return Err(format!(
                "generator waters2015: parameter angle={other}: known: sporadic, periodic, exclude"
            ))
            }
        };
        Ok(Config {
            m,
            amount,
            mapping,
            angle,
        })
    }

    /// The period (for a sporadic class: the minimum inter-arrival time) of class `c`.
    pub fn period(&self, c: usize) -> Time {
        match (TABLE[c].period_ms, self.angle) {
            (Some(ms), _) => ms * NS_PER_MS,
            (None, Angle::Sporadic { min, .. }) | (None, Angle::Periodic(min)) => min,
            (None, Angle::Exclude) => {
                unreachable!("no angle-synchronous runnable is drawn with angle=exclude")
            }
        }
    }

    /// The classes drawn from: all ten, or nine without the angle-synchronous one.
    fn classes(&self) -> usize {
        if self.angle == Angle::Exclude {
            ANGLE
        } else {
            TABLE.len()
        }
    }
}

/// Rate s (per unit of width) of the exponential truncated to [0, 1] whose mean is `r`
/// (0 < r < 1): mean(s) = 1/s − 1/(e^s − 1), falling from 1 to 0 as s goes from −∞ to ∞.
/// Solved by bisection; s = 0 (the uniform law) at r = 1/2.
pub fn truncated_exponential_rate(r: f64) -> f64 {
    let mean = |s: f64| {
        if s.abs() < 1e-6 {
            0.5 - s / 12.0
        } else {
            1.0 / s - 1.0 / s.exp_m1()
        }
    };
    let (mut lo, mut hi) = (-700.0f64, 700.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mean(mid) > r {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A draw in [0, 1] from the exponential of rate `s` truncated to [0, 1] (inverse CDF).
fn truncated_exponential<R: Rng>(rng: &mut R, s: f64) -> f64 {
    let u: f64 = rng.random();
    let y = if s.abs() < 1e-9 {
        u
    } else {
        -(u * (-s).exp_m1()).ln_1p() / s
    };
    y.clamp(0.0, 1.0)
}

/// The rates of the ten classes' ACET laws.
pub fn acet_rates() -> [f64; 10] {
    TABLE.map(|c| {
        let (lo, avg, hi) = c.acet_us;
        truncated_exponential_rate((avg - lo) / (hi - lo))
    })
}

/// Draw one runnable: its class by the shares of the first `classes` rows, then ACET, f_min
/// and f_max, in that order.
pub fn draw_runnable<R: Rng>(rng: &mut R, classes: usize, rates: &[f64; 10]) -> Runnable {
    let total: u32 = TABLE[..classes].iter().map(|c| c.share).sum();
    let mut k = rng.random_range(0..total);
    let mut class = 0;
    while k >= TABLE[class].share {
        k -= TABLE[class].share;
        class += 1;
    }
    let row = &TABLE[class];
    let (lo, _, hi) = row.acet_us;
    let acet_us = lo + (hi - lo) * truncated_exponential(rng, rates[class]);
    let uniform = |rng: &mut R, (a, b): (f64, f64)| a + (b - a) * rng.random::<f64>();
    let bcet_factor = uniform(rng, row.bcet_factor);
    let wcet_factor = uniform(rng, row.wcet_factor);
    Runnable {
        class,
        acet_us,
        bcet_factor,
        wcet_factor,
    }
}

/// The runnables of one set, in draw order.
pub fn draw_runnables<R: Rng>(rng: &mut R, cfg: &Config) -> Result<Vec<Runnable>, String> {
    let rates = acet_rates();
    let classes = cfg.classes();
    match cfg.amount {
        Amount::Runnables(n) => Ok((0..n)
            .map(|_| draw_runnable(rng, classes, &rates))
            .collect()),
        Amount::Cap { cap, tolerance } => {
            let floor = cap * (1.0 - tolerance);
            let mut out = Vec::new();
            let mut draws = 0u64;
            for _ in 0..MAX_TRIES {
                out.clear();
                let mut sum = 0.0;
                while sum < floor || out.is_empty() {
                    if out.len() >= MAX_TASKS {
                        return Err(format!("utilisation U={cap} needs more than {MAX_TASKS} runnables (the limit of a generated set)"));
                    }
                    if draws >= MAX_DRAWS {
                        break;
                    }
                    let r = draw_runnable(rng, classes, &rates);
                    sum += r.wcet_ns() as f64 / cfg.period(r.class) as f64;
                    out.push(r);
                    draws += 1;
                }
                if sum <= cap && sum >= floor {
                    return Ok(out);
                }
                if draws >= MAX_DRAWS {
                    break;
                }
            }
            Err(format!("no set of runnables with Σ WCET/T in [{floor}, {cap}] found in {MAX_TRIES} tries or {MAX_DRAWS} draws; widen tolerance={tolerance} or raise U"))
        }
    }
}

/// A task of class `c` with WCET `wcet`.
fn task(cfg: &Config, name: String, c: usize, wcet: Time) -> Task {
    let mut t = Task::periodic(name, cfg.period(c), wcet);
    if let (None, Angle::Sporadic { max, .. }) = (TABLE[c].period_ms, cfg.angle) {
        t.max_interarrival = Some(max);
    }
    t
}

/// The tasks of `runnables` under `cfg.mapping`, and each task's runnables (indices).
pub fn tasks_of(cfg: &Config, runnables: &[Runnable]) -> (Vec<Task>, Vec<Vec<usize>>) {
    match cfg.mapping {
        Mapping::Runnable => runnables
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (
                    task(
                        cfg,
                        format!("r{i}_{}", TABLE[r.class].label),
                        r.class,
                        r.wcet_ns(),
                    ),
                    vec![i],
                )
            })
            .unzip(),
        Mapping::Period => {
            let (mut tasks, mut members) = (Vec::new(), Vec::new());
            for (c, row) in TABLE.iter().enumerate() {
                let period = if c == ANGLE && cfg.angle == Angle::Exclude {
                    continue;
                } else {
                    cfg.period(c)
                };
                let mut parts: Vec<(Time, Vec<usize>)> = Vec::new();
                for (i, r) in runnables.iter().enumerate().filter(|(_, r)| r.class == c) {
                    let w = r.wcet_ns();
                    match parts.last_mut() {
                        Some((sum, idx)) if *sum + w <= period => {
                            *sum += w;
                            idx.push(i);
                        }
                        _ => parts.push((w, vec![i])),
                    }
                }
                for (k, (wcet, idx)) in parts.into_iter().enumerate() {
                    let name = if k == 0 {
                        format!("task_{}", row.label)
                    } else {
                        format!("task_{}_{k}", row.label)
                    };
                    tasks.push(task(cfg, name, c, wcet));
                    members.push(idx);
                }
            }
            (tasks, members)
        }
    }
}

/// `waters2015` with its parameters.
pub fn waters2015<R: Rng>(rng: &mut R, p: &Params) -> Result<Generated, String> {
    let cfg = Config::from_params(p)?;
    let runnables = draw_runnables(rng, &cfg)?;
    let (tasks, _) = tasks_of(&cfg, &runnables);
    let utilisations = tasks
        .iter()
        .map(|t| t.wcet as f64 / t.period as f64)
        .collect();
    Ok(Generated {
        taskset: TaskSet::new(cfg.m, tasks),
        utilisations,
        threads: None,
        utilities: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{by_name, rng};

    fn gen(params: &str, seed: u64) -> Result<Generated, String> {
        by_name("waters2015", &Params::parse(params).unwrap(), seed)
    }

    fn cfg(params: &str) -> Config {
        Config::from_params(&Params::parse(params).unwrap()).unwrap()
    }

    /// 100,000 runnables (fixed seed): each class's share within 1 percentage point of
    /// Table III (the binomial σ is at most 0.14 points), every ACET within Table IV's
    /// [min, max] and its mean within 4 standard errors of the table's average, every f_min and f_max within
    /// Table V's ranges, BCET ≤ ACET ≤ WCET.
    #[test]
    fn draws_follow_tables_iii_iv_v() {
        let n = 100_000;
        let rs = draw_runnables(&mut rng(2015), &cfg(&format!("n={n}"))).unwrap();
        assert_eq!(rs.len(), n);
        let mut count = [0usize; 10];
        let (mut acet_sum, mut acet_sq) = ([0.0f64; 10], [0.0f64; 10]);
        for r in &rs {
            let row = &TABLE[r.class];
            count[r.class] += 1;
            acet_sum[r.class] += r.acet_us;
            acet_sq[r.class] += r.acet_us * r.acet_us;
            assert!(
                (row.acet_us.0..=row.acet_us.2).contains(&r.acet_us),
                "{}: ACET {} µs",
                row.label,
                r.acet_us
            );
            assert!(
                (row.bcet_factor.0..=row.bcet_factor.1).contains(&r.bcet_factor),
                "{}: f_min {}",
                row.label,
                r.bcet_factor
            );
            assert!(
                (row.wcet_factor.0..=row.wcet_factor.1).contains(&r.wcet_factor),
                "{}: f_max {}",
                row.label,
                r.wcet_factor
            );
            assert_eq!(
                r.wcet_ns(),
                ((r.acet_us * r.wcet_factor * 1000.0).round() as Time).max(1)
            );
            assert!(
                r.bcet_ns() <= r.acet_ns() && r.acet_ns() <= r.wcet_ns(),
                "{r:?}"
            );
        }
        for (c, row) in TABLE.iter().enumerate() {
            let share = 100.0 * count[c] as f64 / n as f64;
            assert!(
                (share - row.share as f64).abs() < 1.0,
                "{}: {share:.2}% drawn, Table III {}%",
                row.label,
                row.share
            );
            // The sample mean within 4 standard errors of the table's average.
            let k = count[c] as f64;
            let mean = acet_sum[c] / k;
            let se = ((acet_sq[c] / k - mean * mean) / k).sqrt();
            eprintln!("{:>6}: {share:5.2}% (Table III {:2}%), mean ACET {mean:7.3} µs (Table IV {:6.2}, se {se:.3})", row.label, row.share, row.acet_us.1);
            assert!(
                (mean - row.acet_us.1).abs() < 4.0 * se,
                "{}: mean ACET {mean:.3} µs, Table IV {} (se {se:.3})",
                row.label,
                row.acet_us.1
            );
        }
    }

    /// The truncated exponential's rate reproduces the table's mean exactly (analytically).
    #[test]
    fn acet_law_has_the_table_mean() {
        for (row, s) in TABLE.iter().zip(acet_rates()) {
            let (lo, avg, hi) = row.acet_us;
            let mean = lo + (hi - lo) * (1.0 / s - 1.0 / s.exp_m1());
            assert!((mean - avg).abs() < 1e-9, "{}: {mean} vs {avg}", row.label);
            // Falling density except for 1000 ms, whose average is above the midpoint.
            assert_eq!(s < 0.0, row.label == "1000ms", "{}: s = {s}", row.label);
        }
        assert!(truncated_exponential_rate(0.5).abs() < 1e-9);
    }

    #[test]
    fn angle_exclude_renormalises_the_other_shares() {
        let n = 50_000;
        let rs = draw_runnables(&mut rng(7), &cfg(&format!("n={n},angle=exclude"))).unwrap();
        assert!(rs.iter().all(|r| r.class != ANGLE));
        let tens = rs.iter().filter(|r| r.class == 3).count() as f64 / n as f64;
        assert!((tens - 25.0 / 85.0).abs() < 0.01, "{tens}");
    }

    /// A hand-worked mapping: two 10 ms runnables of WCET 6 ms and 5 ms do not fit one 10 ms
    /// task (11 > 10): next fit gives task_10ms = {0} and task_10ms_1 = {1, 3} (5 + 4 = 9 ms);
    /// the angle-synchronous runnable is a sporadic task in [5 ms, 30 ms].
    #[test]
    fn period_mapping_splits_by_next_fit() {
        let r = |class, acet_us: f64, wcet_factor| Runnable {
            class,
            acet_us,
            bcet_factor: 0.5,
            wcet_factor,
        };
        let rs = [
            r(3, 300.0, 20.0),
            r(3, 250.0, 20.0),
            r(ANGLE, 50.0, 2.0),
            r(3, 200.0, 20.0),
            r(0, 10.0, 2.0),
        ];
        let c = cfg("");
        let (tasks, members) = tasks_of(&c, &rs);
        let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["task_1ms", "task_10ms", "task_10ms_1", "task_angle"]
        );
        assert_eq!(members, vec![vec![4], vec![0], vec![1, 3], vec![2]]);
        let wcets: Vec<Time> = tasks.iter().map(|t| t.wcet).collect();
        assert_eq!(wcets, [20_000, 6_000_000, 9_000_000, 100_000]);
        assert_eq!(
            (
                tasks[3].period,
                tasks[3].max_interarrival,
                tasks[3].deadline
            ),
            (5 * NS_PER_MS, Some(30 * NS_PER_MS), 5 * NS_PER_MS)
        );
        let (per, _) = tasks_of(
            &Config {
                mapping: Mapping::Runnable,
                ..c
            },
            &rs,
        );
        assert_eq!(
            per.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["r0_10ms", "r1_10ms", "r2_angle", "r3_10ms", "r4_1ms"]
        );
    }

    #[test]
    fn sets_respect_the_cap_and_fit_their_periods() {
        for (p, seed) in [
            ("m=4,U=2", 1),
            ("m=8,U=7.5", 2),
            ("m=2,U=1.5,tasks=runnable", 3),
            ("m=4,U=3,angle=periodic", 4),
            ("m=1,U=0.9,angle=exclude", 5),
        ] {
            let g = gen(p, seed).unwrap();
            let ts = &g.taskset;
            let cap: f64 = p
                .split(',')
                .find_map(|kv| kv.strip_prefix("U="))
                .unwrap()
                .parse()
                .unwrap();
            let u = ts.utilization();
            assert!(u <= cap + 1e-9 && u >= 0.99 * cap - 1e-9, "{p}: U = {u}");
            assert!((g.utilisations.iter().sum::<f64>() - u).abs() < 1e-9);
            for t in &ts.tasks {
                assert!(
                    t.wcet >= 1 && t.wcet <= t.period && t.deadline == t.period,
                    "{p}: {t:?}"
                );
            }
            let periods: Vec<Time> = ts.tasks.iter().map(|t| t.period).collect();
            let allowed: Vec<Time> = TABLE[..ANGLE]
                .iter()
                .map(|c| c.period_ms.unwrap() * NS_PER_MS)
                .chain([5 * NS_PER_MS])
                .collect();
            assert!(
                periods.iter().all(|p| allowed.contains(p)),
                "{p}: {periods:?}"
            );
        }
        // The default (m = 4, U = 2) on seed 1: a set per period class, split where needed.
        let g = gen("", 1).unwrap();
        assert_eq!(g.taskset.platform.cpus, 4);
        assert!(g.taskset.tasks.iter().any(|t| t.name == "task_10ms"));
        // n runnables: exactly n tasks with tasks=runnable.
        assert_eq!(
            gen("n=50,tasks=runnable", 9).unwrap().taskset.tasks.len(),
            50
        );
    }

    #[test]
    fn same_seed_same_set() {
        for p in ["m=4,U=2", "n=300,tasks=runnable,angle=periodic"] {
            let a = gen(p, 11).unwrap();
            assert_eq!(a, gen(p, 11).unwrap());
            assert_ne!(a.taskset.tasks, gen(p, 12).unwrap().taskset.tasks);
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |p: &str| gen(p, 1).unwrap_err();
        assert!(err("n=10,U=1").contains("give n (runnables) or U"));
        assert!(err("n=0").contains("n=0"));
        assert!(err("n=100001").contains("at most 100000 runnables"));
        assert!(err("m=2,U=3").contains("U=3 exceeds the platform's m = 2"));
        assert!(err("tolerance=0").contains("tolerance=0 must be in (0, 1]"));
        assert!(err("n=5,tolerance=0.1").contains("tolerance is for U"));
        assert!(err("U=0").contains("U=0 must be > 0"));
        assert!(err("U=-1").contains("U=-1"));
        assert!(err("tasks=core").contains("tasks=core"));
        assert!(err("angle=crank").contains("angle=crank"));
        assert!(err("rpm_min=7000").contains("rpm_min=7000 exceeds rpm_max=6000"));
        assert!(err("cylinders=0").contains("cylinders=0"));
        assert!(err("rpm_max=12000,cylinders=8")
            .contains("shorter than the longest angle-synchronous WCET"));
        assert!(err("U=0.0000001").contains("widen tolerance"));
        assert!(err("rpm=3000").contains("no parameter 'rpm'"));
        // angle=exclude needs no engine: a fast one is no error then.
        assert!(gen("rpm_max=12000,cylinders=8,angle=exclude", 1).is_ok());
    }

    #[test]
    fn combustion_intervals() {
        assert_eq!(combustion_interval(6000, 4), 5 * NS_PER_MS);
        assert_eq!(combustion_interval(1000, 4), 30 * NS_PER_MS);
        assert_eq!(combustion_interval(7000, 6), 2_857_143);
    }

    #[test]
    fn generated_sets_survive_the_yaml_round_trip() {
        let g = gen("m=4,U=2", 3).unwrap();
        let text = rtsched_model::file::to_yaml(&g.taskset);
        let back =
            rtsched_model::parse_taskset(&text, rtsched_model::Format::Yaml, "x.yaml").unwrap();
        assert_eq!(back.tasks, g.taskset.tasks);
    }
}
