//! Data age and reaction time of data-flow chains with implicit communication (a job reads
//! its input when it first runs and publishes when it finishes; docs/chains.md), bounded from
//! the tasks' response times (A. Davare et al., *Period optimization for hard real-time
//! distributed automotive systems*, DAC 2007: end-to-end latency ≤ Σ_i (T_i + R_i); M. Dürr
//! et al., EMSOFT 2019, show it bounds both the maximum data age and the maximum reaction
//! time).
//!
//! With the definitions of docs/chains.md (data age ends at the output's publication, choice
//! 2 there), for a chain τ_1 … τ_n, T_i the longest inter-arrival (the period, or
//! `max_interarrival`) and R_i the worst-case response (`holistic.rs`):
//! - **data age** ≤ Σ_{i<n} (T_i + R_i) + R_n. Backwards from an output: it read at s_n ≥ its
//!   release; the job of τ_{n−1} that published last before s_n read at s_{n−1}, and the next
//!   one of τ_{n−1}, not yet published at s_n, was released after s_n − R_{n−1}, so
//!   s_n − s_{n−1} < T_{n−1} + R_{n−1}; the output is published within R_n of its release.
//!   This is Davare's sum less T_n, which the formulations that end data age at the next
//!   output's replacement keep.
//! - **reaction time** ≤ Σ_i (T_i + R_i) (Davare's sum): from an event at z, the first job of
//!   τ_1 released after z reads after z and publishes by z + T_1 + R_1; the first job of τ_2
//!   released after that reads it or newer data, and so on.
//!
//! Registry entries `implicit-davare-rm` and `implicit-davare-file`: every implicit chain's
//! data-age bound within its deadline, and every task within its own (sufficient).

use super::holistic::{self, Responses, Suspension};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Subject, Tasks,
    WithOverheads,
};
use super::Verdict;
use rtsched_model::{Chain, Communication, TaskSet, Time};

/// (maximum data age, maximum reaction time) bounds of the implicit chain `chain` of `set`
/// from the responses `r` (indexed as `set`'s tasks).
pub fn bounds(set: &TaskSet, chain: &Chain, r: &Responses) -> (Time, Time) {
    let tasks: Vec<usize> = chain.tasks.iter().map(|&t| t as usize).collect();
    let step = |i: usize| {
        let t = &set.tasks[i];
        t.max_interarrival.unwrap_or(t.period) + r.own[i]
    };
    let reaction: Time = tasks.iter().map(|&i| step(i)).sum();
    let (&last, rest) = tasks.split_last().expect("a chain has tasks");
    let age = rest.iter().map(|&i| step(i)).sum::<Time>() + r.own[last];
    (age, reaction)
}

fn verdict(s: &Subject<'_>, name: &str, by: Priorities) -> Verdict {
    let mut v = holistic::verdict(s, name, by, Suspension::Jitter);
    let set = s.set();
    let Some(r) = holistic::responses(set, by).ok() else {
        return v;
    };
    let mut ok = v.schedulable == Some(true);
    for chain in set
        .chains
        .iter()
        .filter(|c| c.communication == Some(Communication::Implicit))
    {
        let (age, reaction) = bounds(set, chain, &r);
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

/// One CPU or a partitioned set with an implicit chain (`durr.rs` takes the same).
pub(crate) const IMPLICIT: Applies = Applies {
    cpus: Cpus::Partitioned,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Chain(Communication::Implicit),
};

const CITATION: &str = "Davare et al., DAC 2007; Dürr et al., EMSOFT 2019; responses: fp-holistic";

pub const IMPLICIT_DAVARE_RM: Entry = Entry {
    name: "implicit-davare-rm",
    summary: "implicit-communication chains: data age ≤ Σ(T + R) − T_n, rate-monotonic priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: IMPLICIT,
    verdict: |s| verdict(s, IMPLICIT_DAVARE_RM.name, Priorities::RateMonotonic),
    overheads: WithOverheads::Not,
};

pub const IMPLICIT_DAVARE_FILE: Entry = Entry {
    name: "implicit-davare-file",
    summary: "implicit-communication chains: data age ≤ Σ(T + R) − T_n, the file's priorities",
    citation: CITATION,
    kind: Kind::Sufficient,
    applies: Applies {
        priorities: true,
        ..IMPLICIT
    },
    verdict: |s| verdict(s, IMPLICIT_DAVARE_FILE.name, Priorities::File),
    overheads: WithOverheads::Not,
};
