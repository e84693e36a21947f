//! Uniprocessor tests (used alone on one CPU, per CPU on a partition, and as the admission
//! test of the partitioning heuristics).
//!
//! EDF exact: the processor demand criterion — schedulable iff U ≤ 1 and h(t) ≤ t at every
//! absolute deadline t in (0, L), h(t) = Σ_{D_i ≤ t} (⌊(t − D_i)/T_i⌋ + 1)·C_i (Baruah, Rosier &
//! Howell 1990) — checked with Zhang & Burns' Quick Processor-demand Analysis (QPA, 2009), which
//! walks down from L and skips most deadlines.
//!
//! FP response-time analysis: R = C_i + Σ_{j ∈ hp(i)} ⌈R/T_j⌉·C_j to a fixed point; for
//! D_i > T_i, every job in the level-i busy period (Lehoczky 1990; Tindell). Tasks with equal
//! priority count as higher priority (safe whatever the tie-break at run time).
//!
//! Blocking (`blocking.rs`, docs/locking.md "Analysis"): on a set with critical sections under
//! `pip`, `pcp` or `srp`, the FP analyses add each task's blocking term B_i,
//! R = C_i + B_i + Σ ⌈R/T_j⌉·C_j; `edf-exact` under `srp`, `pcp` or `pip` checks Baker's
//! condition h(L) + B(L) ≤ L at every absolute deadline below the longest relative deadline,
//! B(L) the protocol's (`blocking::edf_term`). Both are
//! then sufficient: a failure with blocking is "inconclusive" unless the test fails without it.
//! `fmlp+`: suspension-aware under FP (`fmlp.rs`), suspension-oblivious under EDF
//! (`fmlp_edf.rs`); `msrp`, `mrsp`: `spinning.rs`; `omlp` on one CPU is `pip`
//! (`omlp_on_one_cpu`).
//!
//! Registry entries (`registry.rs`): `edf-exact`, `edf-density`, `fp-rta-rm`, `fp-rta-dm`,
//! `fp-rta-file` (every task's `priority`), `rm-liu-layland` and `rm-hyperbolic` (D = T): one
//! CPU, and per CPU of a partitioned set as `p-NAME`.

use super::blocking;
use super::bounds::{self, Quantity};
pub use super::edf_response::demand;
use super::fmlp;
use super::fmlp_edf;
pub use super::fp_response::{response_time, response_time_blocked};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::spinning;
use super::{density_cmp_one, utilisation_cmp_one, Cdt, Verdict};
use rtsched_model::{Protocol, Task, Time};
use std::cmp::Ordering;

/// The protocols the FP analyses bound (`blocking::fp_blocking`; `msrp`, `mrsp`: `spinning.rs`).
const FP_LOCKING: &[Protocol] = &[
    Protocol::Pip,
    Protocol::Pcp,
    Protocol::PcpOriginal,
    Protocol::Srp,
    Protocol::Msrp,
    Protocol::Mrsp,
    Protocol::FmlpPlus,
    Protocol::Omlp,
];

/// One CPU, independent sequential tasks, any deadlines.
const ONE_CPU: Applies = Applies {
    cpus: Cpus::One,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Not,
};

pub const EDF_EXACT: Entry = Entry {
    name: "edf-exact",
    summary: "uniprocessor EDF, exact (processor demand, QPA)",
    citation: "Baruah, Rosier & Howell 1990; QPA: Zhang & Burns 2009",
    kind: Kind::Exact,
    applies: Applies {
        sections: Sections::Blocking(&[
            Protocol::Pip,
            Protocol::Pcp,
            Protocol::Srp,
            Protocol::Msrp,
            Protocol::FmlpPlus,
            Protocol::Omlp,
        ]),
        ..ONE_CPU
    },
    verdict: |s| super::edf_response::with_bounds(edf_verdict(s), s),
    overheads: WithOverheads::Partitioned,
};

pub const EDF_DENSITY: Entry = Entry {
    name: "edf-density",
    summary: "uniprocessor EDF, Σ C/min(D,T) ≤ 1",
    citation: "Liu & Layland 1973 (U ≤ 1), with densities for D < T",
    kind: Kind::Sufficient,
    applies: ONE_CPU,
    verdict: |s| super::global::with_least_deadlines(density(s.cdt()), s, 1),
    overheads: WithOverheads::Partitioned,
};

pub const FP_RTA_RM: Entry = Entry {
    name: "fp-rta-rm",
    summary: "fixed priority, response-time analysis, rate-monotonic priorities",
    citation: RTA,
    kind: Kind::Exact,
    applies: Applies {
        sections: Sections::Blocking(FP_LOCKING),
        ..ONE_CPU
    },
    verdict: |s| rta(s, FP_RTA_RM.name, Priorities::RateMonotonic),
    overheads: WithOverheads::Partitioned,
};

pub const FP_RTA_DM: Entry = Entry {
    name: "fp-rta-dm",
    summary: "fixed priority, response-time analysis, deadline-monotonic priorities",
    citation: RTA,
    kind: Kind::Exact,
    applies: Applies {
        sections: Sections::Blocking(FP_LOCKING),
        ..ONE_CPU
    },
    verdict: |s| rta(s, FP_RTA_DM.name, Priorities::DeadlineMonotonic),
    overheads: WithOverheads::Partitioned,
};

pub const FP_RTA_FILE: Entry = Entry {
    name: "fp-rta-file",
    summary: "fixed priority, response-time analysis, the file's priorities",
    citation: RTA,
    kind: Kind::Exact,
    applies: Applies {
        priorities: true,
        sections: Sections::Blocking(FP_LOCKING),
        ..ONE_CPU
    },
    verdict: |s| rta(s, FP_RTA_FILE.name, Priorities::File),
    overheads: WithOverheads::Partitioned,
};

pub const RM_LIU_LAYLAND: Entry = Entry {
    name: "rm-liu-layland",
    summary: "rate-monotonic, U ≤ n(2^(1/n) − 1)",
    citation: "Liu & Layland 1973",
    kind: Kind::Sufficient,
    applies: Applies {
        deadlines: Deadlines::Implicit,
        ..ONE_CPU
    },
    verdict: |s| liu_layland(s.cdt()),
    overheads: WithOverheads::Partitioned,
};

pub const RM_HYPERBOLIC: Entry = Entry {
    name: "rm-hyperbolic",
    summary: "rate-monotonic, Π(u_i + 1) ≤ 2",
    citation: "Bini, Buttazzo & Buttazzo 2003",
    kind: Kind::Sufficient,
    applies: Applies {
        deadlines: Deadlines::Implicit,
        ..ONE_CPU
    },
    verdict: |s| hyperbolic(s.cdt()),
    overheads: WithOverheads::Partitioned,
};

const RTA: &str = "Joseph & Pandya 1986; Audsley et al. 1993; D > T: Lehoczky 1990";

/// The protocol of a subject's sections (`registry::Applies::models` has checked there is one
/// the test takes, on local resources), or `None` without sections. `omlp` on one CPU is
/// `pip` (below, [`omlp_on_one_cpu`]).
fn protocol(s: &Subject<'_>) -> Option<Protocol> {
    file_protocol(s).map(|p| match p {
        Protocol::Omlp => Protocol::Pip,
        p => p,
    })
}

/// The protocol the file names for the subject's sections (`omlp` as itself).
fn file_protocol(s: &Subject<'_>) -> Option<Protocol> {
    s.tasks()
        .find_map(|t| t.sections.first())
        .map(|x| s.set().protocol(x.resource as usize))
}

/// The protocol in a verdict's words: `omlp` says whose terms bound it.
fn in_words(s: &Subject<'_>) -> String {
    match file_protocol(s) {
        Some(Protocol::Omlp) => "omlp, on one CPU pip's terms".to_string(),
        p => p.map_or("", Protocol::name).to_string(),
    }
}

/// Why a uniprocessor test does not bound `s`'s `omlp` sections: on several CPUs the global
/// OMLP is for global scheduling (its bound is in the global tests, `omlp.rs`). On one CPU its
/// rules are `pip`'s (`crates/runtime/src/ledger/locking/omlp.rs`): the FIFO queue holds
/// m = 1 job, the holder, so every waiter is in the priority queue, served most urgent first,
/// and the holder inherits its most urgent waiter's priority — with no nesting, exactly the
/// ledger's `pip`. So Sha et al.'s terms bound it (docs/locking.md "OMLP on one CPU").
fn omlp_on_one_cpu(s: &Subject<'_>, name: &str) -> Option<Verdict> {
    (file_protocol(s) == Some(Protocol::Omlp) && s.set().platform.cpus > 1).then(|| {
        Verdict::new(
            name,
            None,
            "not applicable: omlp is for global scheduling on several CPUs (the global tests bound it, suspension-obliviously); the uniprocessor tests bound it on one CPU only, where it is pip",
        )
    })
}

/// [`fp_rta`] under the priorities `by` (the entry's predicate ensures the file gives them),
/// with each task's response time and blocking term (`bounds.rs`, `blocking.rs`).
fn rta(s: &Subject<'_>, name: &str, by: Priorities) -> Verdict {
    let Some(p) = s.priorities(by) else {
        return Verdict::new(name, None, "not every task gives a priority");
    };
    if let Some(v) = omlp_on_one_cpu(s, name) {
        return v;
    }
    let tasks: Vec<&Task> = s.tasks().collect();
    let levels = |hi: usize, lo: usize| {
        Verdict::new(name, None, format!(
            "not applicable: under {} the preemption levels (by relative deadline) must agree with the priorities, and '{}' has a lower priority than '{}' but a shorter deadline",
            protocol(s).map_or("srp", Protocol::name), tasks[lo].name, tasks[hi].name
        ))
    };
    // FMLP+ (`fmlp.rs`): suspension-aware, a response-time recurrence of its own.
    if protocol(s) == Some(Protocol::FmlpPlus) {
        return fmlp::verdict(s, name, &p);
    }
    // MSRP (`spinning.rs`): each job's spin inflates its WCET, C'_i = C_i + spin_i.
    let (b, spin) = match protocol(s) {
        None => (vec![0; tasks.len()], None),
        Some(Protocol::Msrp) => match spinning::msrp_fp(s.set(), s.indices(), &p) {
            Ok((spin, b)) => (b, Some(spin)),
            Err((hi, lo)) => return levels(hi, lo),
        },
        Some(Protocol::Mrsp) => {
            let (spin, b) = spinning::mrsp_fp(s.set(), s.indices(), &p);
            (b, Some(spin))
        }
        Some(proto) => match blocking::fp_blocking(&tasks, &p, proto) {
            Ok(b) => (b, None),
            Err((hi, lo)) => return levels(hi, lo),
        },
    };
    let cdt: Vec<Cdt> = match &spin {
        None => s.cdt().to_vec(),
        Some(x) => s
            .cdt()
            .iter()
            .zip(x)
            .map(|(c, &x)| Cdt { c: c.c + x, ..*c })
            .collect(),
    };
    let r: Vec<Option<Time>> = (0..cdt.len())
        .map(|i| response_time_blocked(&cdt, &p, i, b[i]))
        .collect();
    let rows = bounds::of(s, Quantity::ResponseTime, &r);
    let rows = match protocol(s) {
        Some(_) => bounds::with_blocking(rows, &b),
        None => rows,
    };
    let rows = match &spin {
        Some(x) => bounds::with_spin(rows, x),
        None => rows,
    };
    let ok = r.iter().all(Option::is_some);
    // With blocking (or spinning) the test is sufficient: a failure proves nothing unless it
    // fails without.
    let charged = b.iter().chain(spin.iter().flatten()).any(|&x| x > 0);
    let verdict = if ok || !charged {
        Some(ok)
    } else if (0..b.len()).all(|i| response_time(s.cdt(), &p, i).is_some()) {
        None
    } else {
        Some(false)
    };
    let mut detail = bounds::worst_in_words(&rows);
    if protocol(s).is_some() {
        detail.push_str(&format!("; blocking under {} charged", in_words(s)));
        if spin.is_some() {
            detail.push_str(", each job's spin added to its WCET");
        }
    }
    Verdict::new(name, verdict, detail).with_tasks(rows)
}

/// `edf-exact`: the processor demand test, and with sections Baker's condition with the
/// protocol's B(L) (`srp`, `pcp`, `pip`: `blocking::edf_term`; `msrp`: `spinning.rs`).
fn edf_verdict(s: &Subject<'_>) -> Verdict {
    if let Some(v) = omlp_on_one_cpu(s, EDF_EXACT.name) {
        return v;
    }
    // FMLP+ (`fmlp_edf.rs`): suspension-oblivious, remote waits and boost blocking.
    let proto = protocol(s);
    if proto == Some(Protocol::FmlpPlus) {
        let plain = edf_exact(s.cdt());
        return fmlp_edf::verdict(s, EDF_EXACT.name, plain == Some(false));
    }
    // MSRP (`spinning.rs`, Gai et al. 2001 on partitioned EDF): each job's spin inflates its
    // WCET, and B(L) counts non-preemptive global requests with their spin.
    let msrp = proto == Some(Protocol::Msrp);
    let spin: Vec<Time> = match msrp {
        true => s.tasks().map(|t| spinning::job_spin(s.set(), t)).collect(),
        false => vec![0; s.cdt().len()],
    };
    let cdt: Vec<Cdt> = s
        .cdt()
        .iter()
        .zip(&spin)
        .map(|(c, &x)| Cdt { c: c.c + x, ..*c })
        .collect();
    let u: f64 = cdt.iter().map(Cdt::utilisation).sum();
    let plain = edf_exact(&cdt);
    let detail = format!("U={u:.6}; processor demand (QPA)");
    let Some(proto) = proto.filter(|_| plain == Some(true)) else {
        return Verdict::new(EDF_EXACT.name, plain.filter(|&x| x || !msrp), detail);
    };
    let tasks: Vec<&Task> = s.tasks().collect();
    let b_of = |l: Time| match msrp {
        true => spinning::msrp_edf_blocking(s.set(), s.indices(), l),
        false => blocking::edf_term(&tasks, proto, l),
    };
    let b: Vec<Time> = match msrp {
        true => tasks.iter().map(|t| b_of(t.deadline)).collect(),
        false => blocking::edf_job_terms(&tasks, proto),
    };
    let as_bound: Vec<Option<Time>> = b.iter().map(|&x| Some(x)).collect();
    let rows = bounds::with_blocking(bounds::of(s, Quantity::Blocking, &as_bound), &b);
    let rows = match msrp {
        true => bounds::with_spin(rows, &spin),
        false => rows,
    };
    let (v, why) = match edf_srp_with(&cdt, b_of) {
        Ok(()) => (
            Some(true),
            format!("h(L) + B(L) ≤ L at every deadline ({})", in_words(s)),
        ),
        Err(Some(l)) => (
            None,
            format!("h(L) + B(L) > L at L={l}ns ({}; sufficient)", in_words(s)),
        ),
        Err(None) => (
            None,
            "too many deadlines below the longest D to check".to_string(),
        ),
    };
    Verdict::new(EDF_EXACT.name, v, format!("{detail}; {why}")).with_tasks(rows)
}

/// Deadlines checked by [`edf_srp`] at most.
const MAX_DEADLINES: usize = 1_000_000;

/// Baker's condition below the longest relative deadline (above it B(L) = 0 and the plain
/// demand test decides): h(L) + B(L) ≤ L at every absolute deadline L < D_max. `Err(Some(L))`
/// names the first L that fails; `Err(None)`: more than [`MAX_DEADLINES`] to check.
pub fn edf_srp(ts: &[Cdt], tasks: &[&Task]) -> Result<(), Option<Time>> {
    edf_srp_with(ts, |l| blocking::edf_blocking(tasks, l))
}

/// [`edf_srp`] with the blocking term `b(L)` given (MSRP's: `spinning::msrp_edf_blocking`).
pub fn edf_srp_with(ts: &[Cdt], b: impl Fn(Time) -> Time) -> Result<(), Option<Time>> {
    let d_max = ts.iter().map(|x| x.d).max().unwrap_or(0);
    let mut points: Vec<Time> = Vec::new();
    for x in ts {
        let mut d = x.d;
        while d < d_max {
            points.push(d);
            if points.len() > MAX_DEADLINES {
                return Err(None);
            }
            d += x.t;
        }
    }
    points.sort_unstable();
    points.dedup();
    match points
        .into_iter()
        .find(|&l| demand(ts, l) + b(l) as u128 > l as u128)
    {
        Some(l) => Err(Some(l)),
        None => Ok(()),
    }
}

/// Iteration cap of the fixed-point loops; beyond it the verdict is inconclusive.
const MAX_ITER: u32 = 1_000_000;

/// The latest absolute deadline strictly before `t`, if any.
fn deadline_before(ts: &[Cdt], t: Time) -> Option<Time> {
    ts.iter()
        .filter(|x| x.d < t)
        .map(|x| x.d + (t - x.d - 1) / x.t * x.t)
        .max()
}

/// Length of the synchronous busy period (all tasks released at 0), or None past `limit`.
fn busy_period(ts: &[Cdt], limit: Time) -> Option<Time> {
    let mut w: Time = ts.iter().map(|x| x.c).sum();
    for _ in 0..MAX_ITER {
        let next: u128 = ts
            .iter()
            .map(|x| w.div_ceil(x.t) as u128 * x.c as u128)
            .sum();
        if next > limit as u128 {
            return None;
        }
        if next as Time == w {
            return Some(w);
        }
        w = next as Time;
    }
    None
}

/// EDF exact test. `None` only if U = 1 exactly with constrained deadlines and the busy period
/// did not converge within the iteration cap.
pub fn edf_exact(ts: &[Cdt]) -> Option<bool> {
    if ts.is_empty() {
        return Some(true);
    }
    let u = utilisation_cmp_one(ts);
    if u == Ordering::Greater {
        return Some(false);
    }
    if ts.iter().all(|x| x.d >= x.t) {
        return Some(true); // D ≥ T: U ≤ 1 is exact (Liu & Layland; Baruah et al.)
    }
    // Bound L on the deadlines to check: min(L_a, L_b), L_a only defined for U < 1.
    let d_max = ts.iter().map(|x| x.d).max().unwrap_or(0);
    let l_a = if u == Ordering::Less {
        let total_u: f64 = ts.iter().map(Cdt::utilisation).sum();
        let s: f64 = ts
            .iter()
            .filter(|x| x.t > x.d)
            .map(|x| (x.t - x.d) as f64 * x.utilisation())
            .sum();
        // Rounded up with a margin: a larger L is always safe, only slower.
        let bound = s / (1.0 - total_u).max(1e-12);
        Some(if bound.is_finite() && bound < 1e18 {
            d_max.max(bound.ceil() as Time + 1)
        } else {
            Time::MAX / 4
        })
    } else {
        None
    };
    let l = match (l_a, busy_period(ts, l_a.unwrap_or(Time::MAX / 4))) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    let d_min = ts.iter().map(|x| x.d).min().unwrap_or(0);
    // QPA: from the last deadline ≤ L, jump to h(t) while h(t) < t; step to the previous
    // deadline when h(t) = t; fail as soon as h(t) > t.
    let mut t = match deadline_before(ts, l.saturating_add(1)) {
        Some(t) => t,
        None => return Some(true),
    };
    loop {
        let h = demand(ts, t);
        if h > t as u128 {
            return Some(false);
        }
        if h <= d_min as u128 {
            return Some(true);
        }
        t = if h < t as u128 {
            h as Time
        } else {
            match deadline_before(ts, t) {
                Some(p) => p,
                None => return Some(true),
            }
        };
    }
}

/// FP exact test: every response time within its deadline. The detail names the task with
/// the largest R/D (or the first that misses).
pub fn fp_rta(ts: &[Cdt], prio: &[u32]) -> (bool, String) {
    let mut worst: Option<(f64, usize, Time)> = None;
    for i in 0..ts.len() {
        match response_time(ts, prio, i) {
            None => return (false, format!("task {i}: R > D = {}ns", ts[i].d)),
            Some(r) => {
                let ratio = r as f64 / ts[i].d as f64;
                if worst.is_none_or(|(w, _, _)| ratio > w) {
                    worst = Some((ratio, i, r));
                }
            }
        }
    }
    match worst {
        Some((ratio, i, r)) => (true, format!("max R/D={ratio:.3} (task {i}: R={r}ns)")),
        None => (true, "no tasks".into()),
    }
}

/// Liu & Layland: U ≤ n(2^{1/n} − 1) suffices for RM with implicit deadlines.
pub fn liu_layland(ts: &[Cdt]) -> Verdict {
    let n = ts.len() as f64;
    let bound = n * (2f64.powf(1.0 / n) - 1.0);
    let u: f64 = ts.iter().map(Cdt::utilisation).sum();
    let s = if utilisation_cmp_one(ts) == Ordering::Greater {
        Some(false)
    } else if u <= bound {
        Some(true)
    } else {
        None
    };
    Verdict::new(
        "rm-liu-layland",
        s,
        format!("U={u:.6} vs n(2^(1/n)-1)={bound:.6}"),
    )
}

/// Hyperbolic bound: Π(u_i + 1) ≤ 2 suffices for RM with implicit deadlines.
pub fn hyperbolic(ts: &[Cdt]) -> Verdict {
    // Π(C_i + T_i) ≤ 2·Π T_i, exactly in u128 when it fits.
    let exact = ts.iter().try_fold((1u128, 1u128), |(p, q), x| {
        Some((
            p.checked_mul((x.c + x.t) as u128)?,
            q.checked_mul(x.t as u128)?,
        ))
    });
    let prod: f64 = ts.iter().map(|x| x.utilisation() + 1.0).product();
    let ok = match exact.and_then(|(p, q)| Some((p, q.checked_mul(2)?))) {
        Some((p, q2)) => p <= q2,
        None => prod <= 2.0,
    };
    let s = if ok {
        Some(true)
    } else if utilisation_cmp_one(ts) == Ordering::Greater {
        Some(false)
    } else {
        None
    };
    Verdict::new("rm-hyperbolic", s, format!("Π(u+1)={prod:.6} vs 2"))
}

/// Density test: Σ C/min(D,T) ≤ 1 suffices for EDF (exact when D ≥ T).
pub fn density(ts: &[Cdt]) -> Verdict {
    let l: f64 = ts.iter().map(Cdt::density).sum();
    let s = if density_cmp_one(ts) != Ordering::Greater {
        Some(true)
    } else if utilisation_cmp_one(ts) == Ordering::Greater || ts.iter().all(|x| x.d >= x.t) {
        Some(false)
    } else {
        None
    };
    Verdict::new("edf-density", s, format!("Σλ={l:.6} vs 1"))
}
