//! The fair server of one CPU (`rq->fair_server`, a `dl_server`: kernel/sched/deadline.c
//! `dl_server_*`, fair.c `fair_server_init`; Linux 6.12+, read against 6.18): a deadline
//! entity of 50 ms per 1 s, pinned to its CPU, that runs the CPU's fair class when the
//! classes above starve it. It is *deferred* (`dl_defer`): it waits for its zero-laxity
//! instant instead of running at once, so fair tasks that get the CPU anyway never see it.
//!
//! 1. **Start and stop** (`dl_server_start` from `enqueue_task_fair`, `dl_server_stop`): it
//!    starts when its CPU's fair run queue gains a task — the CBS wake-up rule
//!    (`update_dl_entity`) decides whether it keeps its deadline — and stops when the queue
//!    empties (its throttle and timer forgotten). Unless it is already *defer-running* it is
//!    then *armed*: throttled until `deadline - runtime` (`start_dl_timer` with
//!    `dl_defer_armed`).
//! 2. **Background consumption** (`update_curr_fair` → `dl_server_update` →
//!    `update_curr_dl_se`): fair tasks that run on the CPU outside the server consume its
//!    runtime while it is throttled (armed, or out of budget); when the runtime reaches 0 the
//!    starvation is over: it leaves defer-running, starts a new period from that instant and
//!    is armed again (`replenish_dl_new_period`, `start_dl_timer`).
//! 3. **Zero laxity** (`dl_server_timer` with `dl_defer_armed`): when the timer fires the
//!    background consumption is counted; if the zero-laxity instant moved 1 ms or more later
//!    (`dl_server_min_res`) the timer is pushed there, else the server becomes
//!    defer-running and is enqueued as a deadline entity (`enqueue_dl_entity(ENQUEUE_REPLENISH)`)
//!    at its deadline: EDF places it among the deadline tasks, ahead of every RT task.
//! 4. **Running** (`update_curr_dl_se`, `dl_task_timer`): while its fair tasks run under it,
//!    it is charged as any deadline entity; out of runtime it is throttled until its next
//!    period and then replenished — defer-running, it does not defer again.
//!
//! Departures: the kernel stops the server lazily, when it is picked and finds no fair task,
//! and counts idle time as background consumption (`dl_server_update_idle_time`); here it
//! stops as the fair run queue empties, so idle time never reaches it. The server's own
//! charging is wall time, as the lanes'.

use super::cbs::{Cbs, Charged};
use super::constants::{FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS};
use crate::common::key::Key;
use rtsched_model::linux::attr::DlAttr;
use rtsched_model::Time;

/// `dl_server_min_res`: the zero-laxity timer is pushed only by 1 ms or more.
const DL_SERVER_MIN_RES: Time = 1_000_000;

/// How the CPU's fair work runs since the server last counted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fair {
    /// No fair entity runs.
    Idle,
    /// Under the server (it is the CPU's deadline occupant), since the instant given.
    Served(Time),
    /// Outside it (no higher class wants the CPU), since the instant given.
    Background(Time),
}

/// One CPU's fair server (see the overview).
#[derive(Clone, Debug)]
pub(super) struct FairServer {
    pub(super) cbs: Cbs,
    active: bool,
    armed: bool,
    /// The armed zero-laxity timer's instant.
    armed_at: Time,
    defer_running: bool,
    pub(super) fair: Fair,
    /// Times it started running as a deadline entity (rule 3).
    pub(super) activations: u64,
}

impl Default for FairServer {
    fn default() -> Self {
        FairServer::new(DlAttr::new(
            FAIR_SERVER_RUNTIME_NS,
            FAIR_SERVER_PERIOD_NS,
            FAIR_SERVER_PERIOD_NS,
        ))
    }
}

impl FairServer {
    pub(super) fn new(attr: DlAttr) -> Self {
        FairServer {
            cbs: Cbs::new(attr),
            active: false,
            armed: false,
            armed_at: 0,
            defer_running: false,
            fair: Fair::Idle,
            activations: 0,
        }
    }

    pub(super) fn active(&self) -> bool {
        self.active
    }

    /// Its key as the CPU's deadline occupant while it is runnable (active, neither armed
    /// nor out of budget): its deadline, after any task of the same deadline.
    pub(super) fn key(&self, cpu: u32) -> Option<Key> {
        (self.active && !self.armed && !self.cbs.throttled()).then_some(Key {
            primary: self.cbs.deadline(),
            secondary: u64::MAX,
            task: u32::MAX,
            job: u64::from(cpu),
            thread: u32::MAX,
        })
    }

    /// Rule 1: the CPU's fair run queue gained a task at `now`.
    pub(super) fn start(&mut self, now: Time) {
        debug_assert!(!self.active);
        self.active = true;
        self.cbs.wakeup(now);
        if !self.defer_running {
            self.arm();
        }
    }

    /// Armed: throttled until the zero-laxity instant.
    fn arm(&mut self) {
        self.armed = true;
        self.armed_at = self
            .cbs
            .deadline()
            .saturating_sub(self.cbs.runtime().max(0) as Time);
    }

    /// Rule 1: the CPU's fair run queue emptied (counted up to `now` first: [`Self::count`]).
    pub(super) fn stop(&mut self) {
        self.active = false;
        self.armed = false;
        self.cbs.unthrottle();
        self.fair = Fair::Idle;
    }

    /// Count the fair work since the last count (rules 2, 4) and go on from `now` as `next`.
    pub(super) fn count(&mut self, now: Time, next: Fair) {
        match self.fair {
            Fair::Idle => {}
            Fair::Served(since) => match self.cbs.charge(now, now - since, None) {
                Charged::Throttled { until } if until <= now => self.cbs.replenish(now),
                Charged::Running | Charged::Throttled { .. } | Charged::ReplenishedAtOnce => {}
            },
            Fair::Background(since) => self.background(since, now),
        }
        self.fair = next;
    }

    /// Rule 2 over `[from, to)`, the runtime reaching 0 any number of times.
    fn background(&mut self, mut from: Time, to: Time) {
        if !(self.armed || self.cbs.throttled()) {
            return;
        }
        while from < to {
            let left = self.cbs.runtime().max(0) as Time;
            if from + left > to {
                self.cbs.debit(to - from);
                return;
            }
            // Exhausted in the background at `from + left`: the starvation is over.
            from += left;
            self.defer_running = false;
            self.cbs.new_period_at(from);
            self.arm();
        }
    }

    /// The server's timer, if any: zero laxity (armed), exhaustion (serving), replenishment.
    pub(super) fn next_timer(&self) -> Option<Time> {
        if !self.active {
            return None;
        }
        if self.armed {
            return Some(self.armed_at);
        }
        if let Some(t) = self.cbs.replenish_at() {
            return Some(t);
        }
        match self.fair {
            Fair::Served(since) => Some(since + self.cbs.runtime().max(0) as Time),
            _ => None,
        }
    }

    /// Its timer fired at `now` (rules 3, 4), after [`Self::count`] up to `now`.
    pub(super) fn timer(&mut self, now: Time) {
        if !self.active {
            return;
        }
        if self.armed {
            if now < self.armed_at {
                return;
            }
            let zero_laxity = self
                .cbs
                .deadline()
                .saturating_sub(self.cbs.runtime().max(0) as Time);
            if now + DL_SERVER_MIN_RES <= zero_laxity {
                self.armed_at = zero_laxity;
                return;
            }
            self.armed = false;
            self.defer_running = true;
            self.activations += 1;
            self.cbs.unthrottle();
            self.cbs.replenish(now);
        } else if self.cbs.replenish_at().is_some_and(|t| t <= now) {
            self.cbs.replenish(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn starved_it_waits_for_zero_laxity_then_runs_its_budget_at_each_period() {
        // A fair task queued at 0 on a CPU an RT task holds: armed until 1000 - 50 = 950 ms.
        let mut s = FairServer::default();
        s.start(0);
        assert_eq!((s.key(0), s.next_timer()), (None, Some(950 * MS)));
        s.count(950 * MS, Fair::Idle);
        s.timer(950 * MS);
        // Runnable at its deadline 1 s, 50 ms left; serving from 950 ms it runs out at 1 s.
        assert_eq!(s.key(0).map(|k| k.primary), Some(1000 * MS));
        s.count(950 * MS, Fair::Served(950 * MS));
        assert_eq!(s.next_timer(), Some(1000 * MS));
        // At 1 s: throttled until its next period, 1 s: replenished at once, runnable to 2 s.
        s.count(1000 * MS, Fair::Served(1000 * MS));
        assert_eq!(s.key(0).map(|k| k.primary), Some(2000 * MS));
        assert_eq!(
            s.next_timer(),
            Some(1050 * MS),
            "50 ms of budget, not deferred again"
        );
        s.count(1050 * MS, Fair::Idle);
        assert_eq!((s.key(0), s.next_timer()), (None, Some(2000 * MS)));
        s.timer(2000 * MS);
        assert_eq!(s.key(0).map(|k| k.primary), Some(3000 * MS));
        assert_eq!(s.activations, 1);
    }

    #[test]
    fn fair_work_outside_it_postpones_it_and_ends_the_starvation() {
        // Armed at 950 ms; fair runs in the background 30 ms from 100 ms: 20 ms left, the
        // zero-laxity instant is 980 ms; the timer at 950 ms is pushed there (30 ms >= 1 ms).
        let mut s = FairServer::default();
        s.start(0);
        s.count(100 * MS, Fair::Background(100 * MS));
        s.count(130 * MS, Fair::Idle);
        assert_eq!(s.cbs.runtime(), 20 * MS as i64);
        s.timer(950 * MS);
        assert_eq!((s.key(0), s.next_timer()), (None, Some(980 * MS)));
        // 25 ms more in the background from 200 ms: the budget runs out at 220 ms: a new
        // period from there (deadline 1220 ms), armed at 1170 ms; 5 ms more consumed.
        s.count(200 * MS, Fair::Background(200 * MS));
        s.count(225 * MS, Fair::Idle);
        assert_eq!(s.cbs.deadline(), 1220 * MS);
        assert_eq!(s.cbs.runtime(), 45 * MS as i64);
        assert_eq!(s.next_timer(), Some(1170 * MS));
        s.timer(1170 * MS);
        assert_eq!(s.next_timer(), Some(1175 * MS), "pushed: 5 ms later");
        s.timer(1175 * MS);
        assert!(s.key(0).is_some());
        // A zero-laxity instant that moved less than 1 ms does not push the timer
        // (dl_server_min_res): 0.5 ms of background work, activated at 950 ms all the same.
        let mut s = FairServer::default();
        s.start(0);
        s.count(10 * MS, Fair::Background(10 * MS));
        s.count(10 * MS + 500_000, Fair::Idle);
        s.timer(950 * MS);
        assert_eq!(s.key(0).map(|k| k.primary), Some(1000 * MS));
    }
}
