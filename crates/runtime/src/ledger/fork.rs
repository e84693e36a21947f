//! Fork and join (PAWS §3; ledger overview 3).
//!
//! A job is a sequence of regions of threads. A region's threads reach the policy together
//! (`release` for one, `forked` for several) and join when the last completes
//! (progress.rs); the next region forks on the CPU where it joined.
//!
//! A DAG task's job (`rtsched_model::dag`) is one region of nodes with a precedence (a node's
//! entity has region `DAG_REGION` and its node index as thread): its sources reach the policy
//! together at release (as a first region's threads); when a node completes, the successors
//! whose last predecessor it was reach the policy together on its CPU (`forked`, as a region
//! forks where the previous one joined) — or by `release` when it is one node and nothing else
//! of the job is live (a join, as a one-thread region after a join). The job completes when
//! every node has.
//!
//! Each fork is a global event for the policy's next decision. The common case, a sequential
//! job, forks one thread by `release` without touching a scratch list.

use super::Ledger;
use rtsched_model::Time;
use rtsched_policies::DAG_REGION;

impl<'t> Ledger<'t> {
    /// Create the entities of job `j`'s current region and give them to the policy.
    #[inline]
    pub(super) fn fork(&mut self, now: Time, j: u32, cpu: Option<u32>) {
        let job = &self.run.jobs[j as usize];
        let (task, region) = (job.task, job.region);
        if region == DAG_REGION {
            return self.fork_sources(now, j);
        }
        let n = self.run.programs[task as usize].regions[region as usize].len();
        self.run.jobs[j as usize].pending = n as u32;
        self.dec.note_global_event();
        if n == 1 {
            // The common case (every sequential job): no fork event, no scratch list.
            let info = self.new_thread(j, 0, cpu);
            self.policy.get().release(now, &info);
            return;
        }
        self.lists.forked.clear();
        for t in 0..n {
            let info = self.new_thread(j, t, cpu);
            self.lists.forked.push(info);
        }
        let forked = std::mem::take(&mut self.lists.forked);
        self.policy.get().forked(now, cpu, &forked);
        self.lists.forked = forked;
    }

    /// A DAG job starts: its predecessor counts set, its sources given to the policy (one by
    /// `release`, several by `forked` on no CPU, as a first region's threads).
    #[inline(never)]
    fn fork_sources(&mut self, now: Time, j: u32) {
        let task = self.run.jobs[j as usize].task as usize;
        let prec = self.run.programs[task].dag.as_ref().expect("a DAG task");
        let preds = &mut self.run.preds[j as usize];
        preds.clear();
        preds.extend_from_slice(&prec.indeg);
        self.run.jobs[j as usize].pending = prec.indeg.len() as u32;
        let sources = prec.sources.len();
        self.dec.note_global_event();
        self.lists.forked.clear();
        for k in 0..sources {
            let t = self.run.programs[task]
                .dag
                .as_ref()
                .expect("a DAG task")
                .sources[k];
            let info = self.new_thread(j, t as usize, None);
            self.lists.forked.push(info);
        }
        self.hand_forked(now, None, false);
    }

    /// Node `node` of DAG job `j` completed on `cpu` (other nodes remain): each successor whose
    /// last predecessor it was becomes a fresh entity, kernel CPU `cpu`, and they reach the
    /// policy together.
    #[inline(never)]
    pub(super) fn fork_successors(&mut self, now: Time, j: u32, node: u32, cpu: u32) {
        let task = self.run.jobs[j as usize].task as usize;
        let prec = self.run.programs[task].dag.as_ref().expect("a DAG task");
        let (a, b) = (
            prec.start[node as usize] as usize,
            prec.start[node as usize + 1] as usize,
        );
        self.lists.forked.clear();
        for i in a..b {
            let v = self.run.programs[task]
                .dag
                .as_ref()
                .expect("a DAG task")
                .succ[i];
            let left = &mut self.run.preds[j as usize][v as usize];
            *left -= 1;
            if *left == 0 {
                let info = self.new_thread(j, v as usize, Some(cpu));
                self.lists.forked.push(info);
            }
        }
        if self.lists.forked.is_empty() {
            return;
        }
        self.dec.note_global_event();
        // A join: one node ready and nothing else of the job live.
        let join = self.run.jobs[j as usize].ents.len() == 1;
        self.hand_forked(now, Some(cpu), join);
    }

    /// Give `lists.forked` to the policy: one by `release` if it is a job's first or a join
    /// (`alone`), else all by `forked` on `cpu`.
    #[inline]
    fn hand_forked(&mut self, now: Time, cpu: Option<u32>, alone: bool) {
        if self.lists.forked.len() == 1 && (cpu.is_none() || alone) {
            let info = self.lists.forked[0];
            self.policy.get().release(now, &info);
            return;
        }
        let forked = std::mem::take(&mut self.lists.forked);
        self.policy.get().forked(now, cpu, &forked);
        self.lists.forked = forked;
    }
}
