//! Where a thread sits: its kernel CPU and its run queue (ChronOS §6.3, Fig. 7; ledger
//! overview 9, 10), and what a dispatch elsewhere counts.
//!
//! **Migrations as a kernel counts them.** Besides `migrations` (an entity resumes on a CPU
//! other than the one it last ran on), `kernel_migrations` counts every dispatch of an entity
//! on a CPU other than its *kernel CPU* ([`Ent::kcpu`]) — the CPU a kernel's `set_task_cpu`
//! would have it on: for a fresh thread, the CPU it was forked on (a region's threads: the CPU
//! where the previous region joined) or woken on (a job's first thread: the CPU where its task
//! last completed a thread, unknown for a task's first job); afterwards, the CPU it last ran
//! on. A stolen thread moved to the thief, a fresh thread first run elsewhere and a job
//! resuming elsewhere each count one (docs/semantics.md).
//!
//! **Run queues and pulls.** Every thread sits on one CPU's run queue ([`Ent::rq`]), as in a
//! kernel: a forked thread where it was forked; a job's first thread where its task's thread
//! sits between jobs (`Run::task_rq`: where its previous job ended — the CPU its last thread
//! completed on, or for an aborted job the run queue its thread sat on — or, before its first
//! job, the CPU the thread was created on: the task's `cpu` field, else task index mod m);
//! after it runs, the CPU it last ran on. A *pull* is a dispatch on another CPU than the one
//! whose run queue the entity sits on (it then sits there): ChronOS's `_pull_global_task`
//! taking a task from a remote run queue. Counted per job (`JobRecord::pulls`). It differs
//! from a kernel migration only in where a thread sits before it first runs: a task's first
//! job has a CPU here, and an aborted job leaves its task on the run queue it sat on. The
//! abort handler is charged on the run queue's CPU (abort.rs).

use super::Run;
use crate::state::{Ent, NONE};

impl Run<'_> {
    /// Where a fresh thread of `task` sits, forked on `cpu` (`None`: a job's first thread,
    /// woken): its kernel CPU and its run queue's CPU.
    #[inline(always)]
    pub(super) fn fresh_thread_on(&self, task: u32, cpu: Option<u32>) -> (u32, u32) {
        (
            cpu.unwrap_or(self.task_last[task as usize]),
            cpu.unwrap_or(self.task_rq[task as usize]),
        )
    }

    /// A thread of `task` completed on `cpu`: its task's thread is there now.
    #[inline(always)]
    pub(super) fn thread_completed_on(&mut self, task: u32, cpu: u32) {
        self.task_last[task as usize] = cpu;
        self.task_rq[task as usize] = cpu;
    }

    /// A job of `task` was aborted while its thread sat on `rq`'s run queue: its task's
    /// thread stays there.
    #[inline(always)]
    pub(super) fn job_aborted_on(&mut self, task: u32, rq: u32) {
        self.task_rq[task as usize] = rq;
    }
}

/// `x` is dispatched on `cpu`: whether that is a kernel migration (its kernel CPU is known
/// and another) and a pull (its run queue is another CPU's). It sits on `cpu` for both now.
#[inline(always)]
pub(super) fn dispatched(x: &mut Ent, cpu: u32) -> (bool, bool) {
    let migrated = x.kcpu != NONE && x.kcpu != cpu;
    x.kcpu = cpu;
    let pulled = x.rq != cpu;
    x.rq = cpu;
    (migrated, pulled)
}

/// The CPU task `i`'s thread is created on, on `m` CPUs (docs/semantics.md "Pull"): where the
/// file places it (`cpu`: pinned there, as by affinity), else `i mod m` — a launcher creating
/// the threads in task order on an idle machine, where Linux's fork balancing
/// (`select_task_rq_fair`, `SD_BALANCE_FORK`) puts each new thread on the idlest CPU.
pub(super) fn created_on(cpu: Option<u32>, i: usize, m: usize) -> u32 {
    cpu.filter(|&c| (c as usize) < m)
        .unwrap_or((i % m.max(1)) as u32)
}
