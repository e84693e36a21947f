//! Data age and reaction time of implicit-communication chains by their immediate job chains
//! (M. Dürr, G. von der Brüggen, K.-H. Chen, J.-J. Chen, *End-to-end timing analysis of
//! sporadic cause-effect chains in distributed systems*, ACM TECS 18(5s), EMSOFT 2019:
//! Theorem 5.4, the maximum reaction time by immediate forward job chains; Theorem 5.10, the
//! maximum data age by immediate backward job chains; M. Günzel et al., *Timing analysis of
//! asynchronized distributed cause-effect chains*, RTAS 2021, restate both). Tighter than
//! Davare's sum (`dataflow.rs`) where a task's successor in the chain has a lower priority on
//! the same CPU, and never looser.
//!
//! For a chain τ_1 … τ_n, T_i the longest inter-arrival, R_i the worst-case response from the
//! existing analysis (`holistic.rs`), and per hop i → i+1 the **lower-priority case** L_i:
//! τ_{i+1} has a strictly lower priority than τ_i on the same CPU (one CPU, or both tasks'
//! `cpu`) and τ_i does not self-suspend (a suspended job lets lower-priority work run, which
//! the argument below excludes; Dürr et al. have no suspensions, so they do not state it):
//! - **reaction time** ≤ T_1 + R_n + Σ_{i<n} h_i, with h_i = max(R_i, T_{i+1}) under L_i, else
//!   T_{i+1} + R_i (Theorem 5.4). Grouped by task this is Davare's Σ (T_i + R_i) with the
//!   hop's T_{i+1} + R_i replaced by max(R_i, T_{i+1}) under L_i. h_i bounds r(J_{i+1}) − r(J_i) along the
//!   immediate forward job chain (J_{i+1} the first job of τ_{i+1} to read at or after J_i
//!   published): in general J_{i+1}'s previous job started before f(J_i), so J_{i+1} is
//!   released before f(J_i) + T_{i+1} ≤ r(J_i) + R_i + T_{i+1}; under L_i the first job of
//!   τ_{i+1} released at or after r(J_i) cannot start while J_i (or τ_i's job before it) is
//!   pending, so it reads J_i's output and J_{i+1} is released before r(J_i) + T_{i+1}.
//! - **data age** ≤ R_n + Σ_{i<n} (T_i + g_i), with g_i = 0 under L_i, else R_i (Theorem
//!   5.10; with data age ending at the output's publication, docs/chains.md choice 2, as in
//!   `dataflow.rs`). Backwards from J_{i+1}'s read s_{i+1}: the job N of τ_i after the one read
//!   (J_i) had not published at s_{i+1}; under L_i it was not even released then (pending and
//!   of higher priority, it would have kept J_{i+1} off the CPU), so
//!   s_{i+1} − s_i ≤ r(N) − r(J_i) ≤ T_i; else N was released after s_{i+1} − R_i, giving
//!   Davare's T_i + R_i.
//!
//! Both reduce to Davare's bounds when no hop is in the lower-priority case. The proof's
//! argument gives T_{i+1} alone for h_i under L_i; the theorem's max(R_i, T_{i+1}) is kept.
//!
//! Registry entries `implicit-durr-rm` and `implicit-durr-file`: every implicit chain's data-age
//! bound within its deadline, and every task within its own (sufficient).

use super::holistic::{self, Responses, Suspension};
use super::registry::{Entry, Kind, Priorities, Subject, WithOverheads};
use super::Verdict;
use rtsched_model::{Chain, Communication, TaskSet, Time};

/// Whether hop `a` → `b` (task indices of `set`) is in the lower-priority case: `b` strictly
/// below `a` under `prio` (larger is more urgent), both on one CPU, `a` not self-suspending.
pub fn lower_priority_hop(set: &TaskSet, prio: &[u32], a: usize, b: usize) -> bool {
    let (ta, tb) = (&set.tasks[a], &set.tasks[b]);
    let same_cpu = set.platform.cpus == 1 || (ta.cpu.is_some() && ta.cpu == tb.cpu);
    same_cpu && prio[b] < prio[a] && ta.suspensions.is_empty()
}

/// (maximum data age, maximum reaction time) bounds of the implicit chain `chain` of `set`
/// from the responses `r` under the priorities `prio` (both indexed as `set`'s tasks).
pub fn bounds(set: &TaskSet, chain: &Chain, r: &Responses, prio: &[u32]) -> (Time, Time) {
    bounds_with(set, chain, r, |a, b| lower_priority_hop(set, prio, a, b))
}

/// [`bounds`] with the lower-priority case decided by `lower` (a test's control can credit it
/// where it does not hold).
pub fn bounds_with(
    set: &TaskSet,
    chain: &Chain,
    r: &Responses,
    lower: impl Fn(usize, usize) -> bool,
) -> (Time, Time) {
    let tasks: Vec<usize> = chain.tasks.iter().map(|&t| t as usize).collect();
    let t = |i: usize| {
        let x = &set.tasks[i];
        x.max_interarrival.unwrap_or(x.period)
    };
    let (first, last) = (tasks[0], *tasks.last().expect("a chain has tasks"));
    let (mut age, mut reaction) = (r.own[last], t(first) + r.own[last]);
    for w in tasks.windows(2) {
        let (a, b) = (w[0], w[1]);
        if lower(a, b) {
            reaction += r.own[a].max(t(b));
            age += t(a);
        } else {
            reaction += t(b) + r.own[a];
            age += t(a) + r.own[a];
        }
    }
    (age, reaction)
}

fn verdict(s: &Subject<'_>, name: &str, by: Priorities) -> Verdict {
    let mut v = holistic::verdict(s, name, by, Suspension::Jitter);
    let set = s.set();
    let (Some(r), Some(prio)) = (holistic::responses(set, by).ok(), s.priorities(by)) else {
        return v;
    };
    let mut ok = v.schedulable == Some(true);
    for chain in set
        .chains
        .iter()
        .filter(|c| c.communication == Some(Communication::Implicit))
    {
        let (age, reaction) = bounds(set, chain, &r, &prio);
        v.detail += &format!(
            "; chain '{}': data age ≤ {age}ns, reaction ≤ {reaction}ns",
            chain.name
        );
        ok &= chain.deadline.is_none_or(|d| age <= d);
    }
    v.schedulable = match v.schedulable {
        Some(false) => Some(false),
        _ => ok.then_some(true),
    };
    v
}

const CITATION: &str =
    "Dürr et al., EMSOFT 2019 (TECS 18(5s)), Theorems 5.4 and 5.10; responses: fp-holistic";

pub const IMPLICIT_DURR_RM: Entry = Entry {
    name: "implicit-durr-rm",
    summary: "implicit-communication chains: Dürr et al.'s immediate job-chain bounds, rate-monotonic priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: super::dataflow::IMPLICIT,
    verdict: |s| verdict(s, IMPLICIT_DURR_RM.name, Priorities::RateMonotonic),
    overheads: WithOverheads::Not,
};

pub const IMPLICIT_DURR_FILE: Entry = Entry {
    name: "implicit-durr-file",
    summary: "implicit-communication chains: Dürr et al.'s immediate job-chain bounds, the file's priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: super::registry::Applies {
        priorities: true,
        ..super::dataflow::IMPLICIT
    },
    verdict: |s| verdict(s, IMPLICIT_DURR_FILE.name, Priorities::File),
    overheads: WithOverheads::Not,
};

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::{parse_taskset, Format};

    const MS: Time = 1_000_000;

    /// By hand, on one CPU with rate-monotonic priorities: a (T 5, C 1), b (T 10, C 2), c (T 20,
    /// C 4); R = 1, 3, 8 (c: 4 + 2 of b + 2 of a's jobs at 0 and 5 → 8). Chain [a, b, c]: both
    /// hops go to a lower priority on the same CPU.
    /// Davare: reaction Σ (T + R) = 6 + 13 + 28 = 47; data age 47 − 20 = 27.
    /// Dürr: reaction T_a + R_c + max(R_a, T_b) + max(R_b, T_c) = 5 + 8 + 10 + 20 = 43;
    /// data age R_c + T_a + T_b = 8 + 5 + 10 = 23. Reversed [c, b, a] (each hop to a higher
    /// priority): Davare's, 47 and 47 − 5 = 42.
    #[test]
    fn a_chain_down_the_priorities_by_hand() {
        let y = "platform: {cpus: 1}\ntasks:\n  - {name: a, period: 5ms, wcet: 1ms}\n  \
                 - {name: b, period: 10ms, wcet: 2ms}\n  - {name: c, period: 20ms, wcet: 4ms}\n\
                 chains:\n  - {name: down, tasks: [a, b, c], communication: implicit}\n  \
                 - {name: up, tasks: [c, b, a], communication: implicit}\n";
        let set = parse_taskset(y, Format::Yaml, "hand.yaml").unwrap();
        let r = holistic::responses(&set, Priorities::RateMonotonic).unwrap();
        assert_eq!(r.own, vec![MS, 3 * MS, 8 * MS]);
        let prio = Subject::whole(&set)
            .priorities(Priorities::RateMonotonic)
            .unwrap();
        assert_eq!(bounds(&set, &set.chains[0], &r, &prio), (23 * MS, 43 * MS));
        assert_eq!(
            super::super::dataflow::bounds(&set, &set.chains[0], &r),
            (27 * MS, 47 * MS)
        );
        assert_eq!(bounds(&set, &set.chains[1], &r, &prio), (42 * MS, 47 * MS));
    }
}
