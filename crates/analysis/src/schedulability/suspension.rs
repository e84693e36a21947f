//! Self-suspending tasks on one CPU under fixed priority (J.-J. Chen et al., *Many
//! suspensions, many problems: a review of self-suspending tasks in real-time systems*,
//! Real-Time Systems 55, 2019). The response-time iteration is `holistic.rs`'s (a set without
//! triggers is one transaction per task, with no offsets or jitters of its own); these entries
//! choose how a suspension is counted:
//!
//! - `fp-susp-obliv-*`: every suspension counted as execution (the review's
//!   suspension-oblivious analysis, §4): C' = C + S for the task under analysis and for every
//!   higher-priority task. Sound, pessimistic when suspensions are long.
//! - `fp-susp-jitter-*`: the task under analysis counts its suspensions as execution, a
//!   higher-priority self-suspending task j its execution only, released with jitter
//!   R_j − C_j (the jitter-based analysis the review proves sound). The review's unsound
//!   variants — the jitter S_j alone, a suspension as blocking only (§5) — are not used.
//!
//! Both are sufficient, for one CPU and per CPU of a partitioned set (`p-NAME`); a suspending
//! task's level-i window may hold several of its jobs (`holistic.rs`, point 3).
//! A set with triggered tasks is for `fp-holistic-*`, which counts suspensions as here.
//! Before these, `analyze` read a suspending task as its WCET alone, which is not sound: the
//! classic tests now refuse sets with suspensions (`registry::Flow::Not`).

use super::holistic::{verdict, Suspension};
use super::registry::{
    Applies, Cpus, Deadlines, Entry, Flow, Kind, Priorities, Sections, Tasks, WithOverheads,
};

/// One CPU, sequential tasks without critical sections, with self-suspending tasks.
const SUSPENDING: Applies = Applies {
    cpus: Cpus::One,
    tasks: Tasks::Sequential,
    deadlines: Deadlines::Arbitrary,
    sections: Sections::Not,
    priorities: false,
    flow: Flow::Suspensions,
};

const OBLIVIOUS: &str = "suspension-oblivious: Chen et al., Real-Time Systems 2019, §4";
const JITTER: &str =
    "jitter-based (R − C): Chen et al., Real-Time Systems 2019 (proved sound there)";

pub const FP_SUSP_OBLIVIOUS_RM: Entry = Entry {
    name: "fp-susp-obliv-rm",
    summary: "fixed priority, suspensions counted as execution, rate-monotonic priorities",
    citation: OBLIVIOUS,
    kind: Kind::Sufficient,
    applies: SUSPENDING,
    verdict: |s| {
        verdict(
            s,
            FP_SUSP_OBLIVIOUS_RM.name,
            Priorities::RateMonotonic,
            Suspension::Oblivious,
        )
    },
    overheads: WithOverheads::Not,
};

pub const FP_SUSP_OBLIVIOUS_FILE: Entry = Entry {
    name: "fp-susp-obliv-file",
    summary: "fixed priority, suspensions counted as execution, the file's priorities",
    citation: OBLIVIOUS,
    kind: Kind::Sufficient,
    applies: Applies {
        priorities: true,
        ..SUSPENDING
    },
    verdict: |s| {
        verdict(
            s,
            FP_SUSP_OBLIVIOUS_FILE.name,
            Priorities::File,
            Suspension::Oblivious,
        )
    },
    overheads: WithOverheads::Not,
};

pub const FP_SUSP_JITTER_RM: Entry = Entry {
    name: "fp-susp-jitter-rm",
    summary:
        "fixed priority, higher-priority suspensions as jitter R − C, rate-monotonic priorities",
    citation: JITTER,
    kind: Kind::Sufficient,
    applies: SUSPENDING,
    verdict: |s| {
        verdict(
            s,
            FP_SUSP_JITTER_RM.name,
            Priorities::RateMonotonic,
            Suspension::Jitter,
        )
    },
    overheads: WithOverheads::Not,
};

pub const FP_SUSP_JITTER_FILE: Entry = Entry {
    name: "fp-susp-jitter-file",
    summary: "fixed priority, higher-priority suspensions as jitter R − C, the file's priorities",
    citation: JITTER,
    kind: Kind::Sufficient,
    applies: Applies {
        priorities: true,
        ..SUSPENDING
    },
    verdict: |s| {
        verdict(
            s,
            FP_SUSP_JITTER_FILE.name,
            Priorities::File,
            Suspension::Jitter,
        )
    },
    overheads: WithOverheads::Not,
};
