//! A fixed-size set of CPUs as a bitmap of 64-bit words (the kernel's `struct cpumask`):
//! set / clear / test in O(1), "any CPU in the set" in O(m / 64) word reads. Used for the
//! free-CPU (idle) mask of the gedf-heap paper §4.1 (`dlf_mask`) and §5 (`free_cpus`), for the
//! overload mask of the distributed run queues, and for the per-level masks of `cpupri`.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuMask {
    words: Vec<u64>,
    cpus: u32,
}

impl CpuMask {
    /// An empty mask over `cpus` CPUs.
    pub fn new(cpus: u32) -> Self {
        CpuMask {
            words: vec![0; (cpus as usize).div_ceil(64).max(1)],
            cpus,
        }
    }
    /// A mask with every one of `cpus` CPUs set.
    pub fn full(cpus: u32) -> Self {
        let mut m = CpuMask::new(cpus);
        for c in 0..cpus {
            m.set(c);
        }
        m
    }
    #[inline]
    pub fn cpus(&self) -> u32 {
        self.cpus
    }
    /// Number of 64-bit words (what a scan of the whole mask reads).
    #[inline]
    pub fn words(&self) -> usize {
        self.words.len()
    }
    #[inline]
    pub fn set(&mut self, cpu: u32) {
        self.words[(cpu >> 6) as usize] |= 1u64 << (cpu & 63);
    }
    #[inline]
    pub fn clear(&mut self, cpu: u32) {
        self.words[(cpu >> 6) as usize] &= !(1u64 << (cpu & 63));
    }
    #[inline]
    pub fn test(&self, cpu: u32) -> bool {
        self.words[(cpu >> 6) as usize] & (1u64 << (cpu & 63)) != 0
    }
    /// The lowest CPU in the set, and how many words were read to find it.
    #[inline]
    pub fn first(&self) -> (Option<u32>, u32) {
        for (i, &w) in self.words.iter().enumerate() {
            if w != 0 {
                return (Some((i as u32) * 64 + w.trailing_zeros()), i as u32 + 1);
            }
        }
        (None, self.words.len() as u32)
    }
    /// `prefer` if it is in the set, else the lowest CPU in the set; and words read.
    #[inline]
    pub fn pick(&self, prefer: Option<u32>) -> (Option<u32>, u32) {
        match prefer {
            Some(p) if p < self.cpus && self.test(p) => (Some(p), 1),
            _ => self.first(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }
    /// The CPUs in the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(i as u32 * 64 + b)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_clear_first_pick() {
        let mut m = CpuMask::new(130);
        assert_eq!(m.first(), (None, 3));
        m.set(129);
        m.set(64);
        assert_eq!(m.first(), (Some(64), 2));
        assert_eq!(m.pick(Some(129)), (Some(129), 1));
        assert_eq!(m.pick(Some(3)), (Some(64), 2));
        m.clear(64);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![129]);
        assert_eq!(CpuMask::full(70).count(), 70);
        assert!(!CpuMask::full(1).is_empty());
    }
}
