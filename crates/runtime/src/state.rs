//! What the ledger keeps of each entity ([`Ent`]) and each CPU ([`CpuState`]): the records
//! its slot vectors hold (ledger overview 1), which the inversion meter reads as well. Apart
//! from the ledger so that the meter needs nothing of the ledger's own.

use rtsched_model::Time;
use rtsched_policies::{EntityId, EntityInfo};

/// "No slot / no CPU / no resource".
pub const NONE: u32 = u32::MAX;
/// "No next release": a best-effort task's next burst comes after this one and a sleep.
pub const NEVER: Time = Time::MAX;

/// One thread of one region of a job: what the policy schedules.
#[derive(Clone, Copy, Debug)]
pub struct Ent {
    pub info: EntityInfo,
    pub generation: u32,
    /// Given to the policy and neither completed nor aborted (blocked entities are live).
    pub live: bool,
    /// Its job's slot, and the job's record (NONE outside the counted window).
    pub job: u32,
    pub rec: u32,
    /// Its actual demand, the work done of it, and the overhead still to pay before its work
    /// resumes (simulator: context switch, migration, charged policy operations).
    pub demand: Time,
    pub done: Time,
    pub owed: Time,
    /// CPU time consumed so far (work and overhead), up to its CPU's `mark`.
    pub ran: Time,
    /// Next checkpoint of its thread program, and how many it has.
    pub cp: u32,
    pub ncp: u32,
    /// The resource it waits for (NONE if it is not blocked), and since when.
    pub blocked_on: u32,
    pub blocked_since: Time,
    /// The CPU it is linked to by the last applied decision (NONE if none), and the last one.
    pub cpu: u32,
    pub last_cpu: u32,
    /// Its kernel CPU (`kernel_migrations`, ledger/queues.rs): where it was forked or woken until it
    /// first runs, then where it last ran (NONE: not known).
    pub kcpu: u32,
    /// The CPU whose run queue it sits on (pulls and the abort handler, ledger/queues.rs): where it
    /// was forked or woken until it first runs, then where it last ran. Always a CPU.
    pub rq: u32,
    /// A real worker executes it right now: its slot is not reused until it stops.
    pub executing: bool,
    pub(crate) free_when_stopped: bool,
}

impl Ent {
    pub(crate) const EMPTY: Ent = Ent {
        info: EntityInfo {
            id: 0,
            task: 0,
            job: 0,
            region: 0,
            thread: 0,
            release: 0,
            deadline: 0,
        },
        generation: 0,
        live: false,
        job: NONE,
        rec: NONE,
        demand: 0,
        done: 0,
        owed: 0,
        ran: 0,
        cp: 0,
        ncp: 0,
        blocked_on: NONE,
        blocked_since: 0,
        cpu: NONE,
        last_cpu: NONE,
        kcpu: NONE,
        rq: 0,
        executing: false,
        free_when_stopped: false,
    };

    #[inline]
    pub fn is_blocked(&self) -> bool {
        self.blocked_on != NONE
    }

    /// Account `ran` ns of CPU time: the overhead owed first, then its own work (`work` of it
    /// done at the rate the cost model says; rate 1: `work == ran - paid`).
    #[inline]
    pub fn pay(&mut self, ran: Time, work: impl FnOnce(Time) -> Time) {
        let paid = ran.min(self.owed);
        self.owed -= paid;
        self.ran += ran;
        if ran > paid {
            self.done = (self.done + work(ran - paid)).min(self.demand);
        }
    }
}

/// What the ledger knows of a CPU.
#[derive(Clone, Copy, Debug)]
pub struct CpuState {
    pub running: Option<EntityId>,
    /// Until when the running entity's CPU time is accounted in its `ran`: the ledger sets it
    /// at dispatch, the driver whenever it accounts work. [`RunView::executed`] adds the time
    /// since.
    pub mark: Time,
    /// (slot, generation) of the last entity it ran, for context-switch counting.
    pub(crate) last: u64,
    /// The deadline of `running` (0 while idle), for priority inversions.
    pub(crate) deadline: Time,
}
