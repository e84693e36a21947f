//! Data age and reaction time of LET chains whose tasks are sporadic (inter-arrival times in
//! [T_i, T_i^max], `max_interarrival`), bounded: a LET job reads at its release and publishes
//! at its absolute deadline (docs/chains.md), so the schedule does not matter, but a sporadic
//! task has no one timeline to walk as `let_exact.rs` does. The bound is the LET form of
//! Davare's sum, R_i replaced by D_i (the LET sum of R. Hamann et al., *Communication centric
//! design in complex automotive embedded systems*, ECRTS 2017; M. Günzel et al., *Timing
//! analysis of cause-effect chains with heterogeneous communication mechanisms*, RTNS 2023,
//! use it for sporadic LET), derived here with the definitions and choices of docs/chains.md:
//!
//! - **data age** ≤ Σ_{i<n} (T_i^max + D_i) + D_n. Backwards from an output released at r_n
//!   (published at r_n + D_n): it read the job J_{n−1} of τ_{n−1} with the latest publication
//!   at or before r_n; the next job N of τ_{n−1} publishes after r_n and is released at most
//!   T_{n−1}^max after J_{n−1}, so r_n < r(N) + D_{n−1} ≤ r(J_{n−1}) + T_{n−1}^max + D_{n−1};
//!   likewise down to the head's release h, and data age = r_n + D_n − h.
//! - **reaction time** ≤ Σ_i (T_i^max + D_i). From the previous head read h' (the release of
//!   a job of τ_1), the next job of τ_1 is released by h' + T_1^max and publishes D_1 later;
//!   the first job of τ_{i+1} released at or after a publication p is released before
//!   p + T_{i+1}^max (its previous job, released before p, exists: an earlier output's path
//!   went through an earlier job of every task) and reads it or newer data; the output
//!   publishes D_n after its release.
//!
//! Both hold for periodic tasks too (T^max = T), where `let_exact.rs` gives the exact maxima;
//! `chains.rs` takes this bound only for a chain with a sporadic task. The sums are suprema
//! approached when every inter-arrival on the path is T^max and each read just misses a
//! publication. Registry entry `let-sporadic`: every LET chain's data-age bound within its
//! deadline (sufficient).

use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Subject, Tasks, WithOverheads,
};
use super::Verdict;
use rtsched_model::{Chain, Communication, TaskSet, Time};

/// (maximum data age, maximum reaction time) bounds of the LET chain `chain` of `set`.
pub fn bounds(set: &TaskSet, chain: &Chain) -> (Time, Time) {
    let step = |&i: &u32| {
        let t = &set.tasks[i as usize];
        t.max_interarrival.unwrap_or(t.period) + t.deadline
    };
    let reaction: Time = chain.tasks.iter().map(step).sum();
    let (last, rest) = chain.tasks.split_last().expect("a chain has tasks");
    let age = rest.iter().map(step).sum::<Time>() + set.tasks[*last as usize].deadline;
    (age, reaction)
}

fn verdict(s: &Subject<'_>) -> Verdict {
    let set = s.set();
    let (mut ok, mut details) = (true, Vec::new());
    for chain in set
        .chains
        .iter()
        .filter(|c| c.communication == Some(Communication::Let))
    {
        let (age, reaction) = bounds(set, chain);
        details.push(format!(
            "chain '{}': data age ≤ {age}ns, reaction ≤ {reaction}ns",
            chain.name
        ));
        ok &= chain.deadline.is_none_or(|d| age <= d);
    }
    Verdict::new(LET_SPORADIC.name, ok.then_some(true), details.join("; "))
}

pub const LET_SPORADIC: Entry = Entry {
    name: "let-sporadic",
    summary: "LET chains of sporadic tasks: data age ≤ Σ(T^max + D) − T^max_n within each chain's deadline",
    citation: "LET sum (Hamann et al., ECRTS 2017; Günzel et al., RTNS 2023)",
    kind: Kind::Sufficient,
    applies: Applies {
        cpus: Cpus::Any,
        tasks: Tasks::Any,
        deadlines: Deadlines::Arbitrary,
        sections: Sections::Any,
        priorities: false,
        flow: Flow::Chain(Communication::Let),
    },
    verdict,
    overheads: WithOverheads::Not,
};

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::{parse_taskset, Format};

    const MS: Time = 1_000_000;

    /// By hand: f (inter-arrival 5–8 ms, D 5) to g (T 10, D 10): data age ≤ 8 + 5 + 10 = 23,
    /// reaction ≤ 13 + 20 = 33. Periodic (f every 5 ms) the bound is 20 and 30 where the exact
    /// maxima are 15 and 25 (`let_exact.rs`).
    #[test]
    fn a_sporadic_let_chain_by_hand() {
        let y = "platform: {cpus: 1}\ntasks:\n  \
                 - {name: f, min_interarrival: 5ms, max_interarrival: 8ms, wcet: 1ms}\n  \
                 - {name: g, period: 10ms, wcet: 2ms}\n\
                 chains:\n  - {name: fg, tasks: [f, g], communication: let}\n";
        let mut set = parse_taskset(y, Format::Yaml, "hand.yaml").unwrap();
        assert_eq!(bounds(&set, &set.chains[0]), (23 * MS, 33 * MS));
        set.tasks[0].max_interarrival = None;
        assert_eq!(bounds(&set, &set.chains[0]), (20 * MS, 30 * MS));
    }
}
