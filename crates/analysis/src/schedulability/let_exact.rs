//! Data age and reaction time of LET chains, exactly (logical execution time: a job reads at
//! its release and publishes at its absolute deadline; docs/chains.md). The LET timeline does
//! not depend on the schedule (C. M. Kirsch & A. Sokolova, *The logical execution time
//! paradigm*, 2012; Dürr et al., EMSOFT 2019, §5 use it for the LET bound), so for periodic
//! tasks every output's data path is a function of the releases alone, periodic in the chain's
//! hyperperiod H once every task has published. The maximum over every output is the maximum
//! over the outputs released before W + 2H, W = the largest offset + Σ (T_i + D_i) (by then
//! every path has data): exact, with the definitions (and choices) of docs/chains.md, the same
//! the simulator measures (`rtsched_runtime::ledger::flow`):
//! - an output (a job of the last task released at r) reads what the previous task's job with
//!   the latest publication at or before r published (a publication at r is seen), and so on
//!   back to the first task's job, whose release is the head read h; **data age** = r + D_n − h;
//! - **reaction time** of an output whose head read is later than the previous output's h'
//!   = its publication − h'.
//!
//! A sporadic task (`max_interarrival`) has no one timeline: not analysed. Registry entry
//! `let-exact`: every LET chain's maximum data age within its deadline (exact).

use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Sections, Subject, Tasks, WithOverheads,
};
use super::Verdict;
use rtsched_model::{Chain, Communication, TaskSet, Time};

/// Most outputs walked for one chain; a longer hyperperiod is not analysed.
const MAX_OUTPUTS: u64 = 4_000_000;

/// The exact maxima of a LET chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LetMaxima {
    pub data_age: Option<Time>,
    pub reaction_time: Option<Time>,
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The exact maxima of LET chain `chain` of `set`, or why it is not analysed.
pub fn maxima(set: &TaskSet, chain: &Chain) -> Result<LetMaxima, String> {
    let tasks: Vec<&rtsched_model::Task> = chain
        .tasks
        .iter()
        .map(|&i| &set.tasks[i as usize])
        .collect();
    if let Some(t) = tasks
        .iter()
        .find(|t| t.max_interarrival.is_some() || t.trigger.is_some())
    {
        return Err(format!(
            "task '{}' is not periodic: its LET timeline is not one",
            t.name
        ));
    }
    let h = tasks
        .iter()
        .try_fold(1u128, |h, t| {
            let p = t.period as u128;
            let l = h / gcd(h, p) * p;
            (l < 1 << 62).then_some(l)
        })
        .ok_or("the hyperperiod overflows")? as Time;
    let warm: Time = tasks.iter().map(|t| t.offset).max().unwrap_or(0)
        + tasks.iter().map(|t| t.period + t.deadline).sum::<Time>();
    let last = *tasks.last().expect("a chain has tasks");
    let end = warm + 2 * h;
    if (end / last.period) > MAX_OUTPUTS {
        return Err(format!("the hyperperiod ({h} ns) is too long to walk"));
    }
    let (mut age, mut reaction, mut prev) = (None::<Time>, None::<Time>, None::<Time>);
    let mut r = last.offset;
    while r < end {
        if let Some(head) = head_read(&tasks, r) {
            let p = r + last.deadline;
            age = age.max(Some(p - head));
            if prev.is_some_and(|x| x < head) {
                reaction = reaction.max(prev.map(|x| p - x));
            }
            if prev.is_none_or(|x| head > x) {
                prev = Some(head);
            }
        }
        r += last.period;
    }
    Ok(LetMaxima {
        data_age: age,
        reaction_time: reaction,
    })
}

/// The head read of the output released at `r`: backwards, each task's job with the latest
/// publication (release + D) at or before the read; None if one has published nothing yet.
fn head_read(tasks: &[&rtsched_model::Task], r: Time) -> Option<Time> {
    let mut read = r;
    for t in tasks[..tasks.len() - 1].iter().rev() {
        let first = t.offset + t.deadline;
        if read < first {
            return None;
        }
        read = t.offset + (read - first) / t.period * t.period;
    }
    Some(read)
}

fn verdict(s: &Subject<'_>) -> Verdict {
    let set = s.set();
    let (mut ok, mut details) = (Some(true), Vec::new());
    for chain in set
        .chains
        .iter()
        .filter(|c| c.communication == Some(Communication::Let))
    {
        match maxima(set, chain) {
            Ok(m) => {
                let show = |x: Option<Time>| x.map_or("none".into(), |v| format!("{v}ns"));
                details.push(format!(
                    "chain '{}': data age {}, reaction {}",
                    chain.name,
                    show(m.data_age),
                    show(m.reaction_time)
                ));
                if let (Some(d), Some(a)) = (chain.deadline, m.data_age) {
                    if a > d && ok.is_some() {
                        ok = Some(false);
                    }
                }
            }
            Err(e) => {
                details.push(format!("chain '{}': {e}", chain.name));
                ok = ok.and(None);
            }
        }
    }
    Verdict::new(LET_EXACT.name, ok, details.join("; "))
}

pub const LET_EXACT: Entry = Entry {
    name: "let-exact",
    summary:
        "LET chains: the exact maximum data age (and reaction time) within each chain's deadline",
    citation: "LET timeline (Kirsch & Sokolova 2012); definitions: Dürr et al., EMSOFT 2019",
    kind: Kind::Exact,
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
    use rtsched_model::Task;

    const MS: Time = 1_000_000;

    /// The issue's LET chain: a 5 ms task to a 10 ms task: data age 15 ms, reaction 25 ms
    /// (docs/chains.md's worked example). Reversed (10 ms to 5 ms): the 5 ms task's output at
    /// 10k + 5 reads the 10 ms task's job released at 10k − 10 (published at 10k): age 20;
    /// at 10k: the same publication, age 15; reaction from the head read 10k − 20 to the first
    /// output with head 10k − 10, released at 10k: 10k + 5 − (10k − 20) = 25.
    #[test]
    fn the_issues_let_chain_and_its_reverse() {
        let mut ts = TaskSet::new(
            1,
            vec![
                Task::periodic("f", 5 * MS, MS),
                Task::periodic("s", 10 * MS, 2 * MS),
            ],
        );
        ts.chains.push(Chain {
            name: "fs".into(),
            tasks: vec![0, 1],
            communication: Some(Communication::Let),
            deadline: None,
        });
        let m = maxima(&ts, &ts.chains[0]).unwrap();
        assert_eq!(
            (m.data_age, m.reaction_time),
            (Some(15 * MS), Some(25 * MS))
        );
        ts.chains[0].tasks = vec![1, 0];
        let m = maxima(&ts, &ts.chains[0]).unwrap();
        assert_eq!(
            (m.data_age, m.reaction_time),
            (Some(20 * MS), Some(25 * MS))
        );
    }
}
