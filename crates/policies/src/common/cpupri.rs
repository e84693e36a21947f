//! `cpupri`: per priority level, the mask of CPUs whose most urgent entity is at that level
//! (the structure of Linux's `kernel/sched/cpupri.c`, described in the gedf-heap paper §3.1 as
//! a two-dimensional bitmap: priority class × CPU). A push for an entity at level `p` scans the
//! levels below `p`, lowest first, and takes a CPU from the first non-empty one: the cost
//! depends on the number of levels, not on the number of CPUs (mask scans aside).
//!
//! Levels are dense integers: 0 is "free" (nothing to run), 1.. are priority levels, larger =
//! more urgent (as `SCHED_FIFO`). A per-level count lets a scan skip empty levels without
//! reading their masks. Updating a CPU's level touches two masks (`set`).
//!
//! Deviation from the kernel: one structure for one scheduler, no per-level locks (the
//! simulator is single-threaded).

use super::cpumask::CpuMask;

#[derive(Clone, Debug)]
pub struct CpuPri {
    level_of: Vec<u32>,
    masks: Vec<CpuMask>,
    counts: Vec<u32>,
}

/// The level of a CPU with nothing to run.
pub const FREE: u32 = 0;

impl CpuPri {
    /// `cpus` CPUs, all free, and priority levels `1..=levels`.
    pub fn new(cpus: u32, levels: u32) -> Self {
        let mut masks = vec![CpuMask::new(cpus); levels as usize + 1];
        masks[FREE as usize] = CpuMask::full(cpus);
        let mut counts = vec![0; levels as usize + 1];
        counts[FREE as usize] = cpus;
        CpuPri {
            level_of: vec![FREE; cpus as usize],
            masks,
            counts,
        }
    }
    #[inline]
    pub fn level_of(&self, cpu: u32) -> u32 {
        self.level_of[cpu as usize]
    }
    /// The CPUs currently at `level`.
    #[inline]
    pub fn cpus_at(&self, level: u32) -> &CpuMask {
        &self.masks[level as usize]
    }

    /// `cpu`'s most urgent entity is now at `level` (`FREE` if it has none). Returns the
    /// number of masks touched (0 if unchanged, else 2).
    #[inline]
    pub fn set(&mut self, cpu: u32, level: u32) -> u32 {
        let old = self.level_of[cpu as usize];
        if old == level {
            return 0;
        }
        self.masks[old as usize].clear(cpu);
        self.counts[old as usize] -= 1;
        self.masks[level as usize].set(cpu);
        self.counts[level as usize] += 1;
        self.level_of[cpu as usize] = level;
        2
    }

    /// A CPU at the lowest level strictly below `level` (`prefer` if it is at that level);
    /// returns the CPU and the number of levels plus mask words read.
    #[inline]
    pub fn find_lower(&self, level: u32, prefer: Option<u32>) -> (Option<u32>, u32) {
        let mut touched = 0;
        for l in 0..level.min(self.counts.len() as u32) {
            touched += 1;
            if self.counts[l as usize] == 0 {
                continue;
            }
            let (cpu, words) = self.masks[l as usize].pick(prefer);
            return (cpu, touched + words);
        }
        (None, touched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_level_first() {
        let mut p = CpuPri::new(4, 3);
        assert_eq!(
            p.find_lower(1, Some(2)).0,
            Some(2),
            "free CPUs are below every level"
        );
        p.set(0, 3);
        p.set(1, 1);
        p.set(2, 2);
        p.set(3, 2);
        assert_eq!(p.find_lower(3, None).0, Some(1));
        assert_eq!(
            p.find_lower(1, None).0,
            None,
            "nothing strictly below level 1"
        );
        p.set(1, FREE);
        assert_eq!(p.find_lower(1, None).0, Some(1));
        assert_eq!(p.cpus_at(2).iter().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(
            p.find_lower(3, Some(3)).0,
            Some(1),
            "a lower level wins over prefer"
        );
    }
}
