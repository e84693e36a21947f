//! Structure-level model of find-CPU for the four push variants of the gedf-heap paper
//! (linear Fig 3, fmask Fig 4, heap Figs 5–7, cpupri §3.1), shared by `benches/cpudl.rs` and
//! `examples/findcpu_scaling.rs` (included with `#[path]`). Each CPU's earliest key lives in
//! its own 64-byte per-CPU record, as the kernel's per-CPU run queues, so the linear loop pays
//! one cache line per CPU; the other variants use the library's `CpuMask`, `Cpudl` and
//! `CpuPri` exactly as `gedf-dist` does.
#![allow(dead_code)]

use rtsched_policies::common::cpudl::Cpudl;
use rtsched_policies::common::cpumask::CpuMask;
use rtsched_policies::common::cpupri::{self, CpuPri};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Linear,
    Fmask,
    Heap,
    Cpupri,
}

pub const VARIANTS: [Variant; 4] = [
    Variant::Linear,
    Variant::Fmask,
    Variant::Heap,
    Variant::Cpupri,
];

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Linear => "linear",
            Variant::Fmask => "fmask",
            Variant::Heap => "heap",
            Variant::Cpupri => "cpupri",
        }
    }
}

/// Keys are drawn below this bound; cpupri maps them to `LEVELS` levels (smaller key = more
/// urgent = higher level), as SCHED_FIFO's 99 real-time priorities.
pub const KEY_SPACE: u64 = 1 << 20;
pub const LEVELS: u32 = 99;

#[repr(align(64))]
#[derive(Clone, Copy)]
struct PerCpu {
    /// The CPU's earliest key; `u64::MAX` = free.
    earliest: u64,
}

pub struct Model {
    pub variant: Variant,
    cpus: Vec<PerCpu>,
    free: CpuMask,
    heap: Cpudl<u64>,
    pri: CpuPri,
}

#[inline]
fn level(key: u64) -> u32 {
    LEVELS - (key * LEVELS as u64 / KEY_SPACE) as u32
}

impl Model {
    pub fn new(variant: Variant, m: u32) -> Self {
        Model {
            variant,
            cpus: vec![PerCpu { earliest: u64::MAX }; m as usize],
            free: CpuMask::full(m),
            heap: Cpudl::new(m),
            pri: CpuPri::new(m, LEVELS),
        }
    }

    /// `cpu`'s earliest key becomes `key` (None: it has nothing to run). Keys must be
    /// distinct across CPUs (callers add the CPU number in the low bits).
    #[inline]
    pub fn update(&mut self, cpu: u32, key: Option<u64>) {
        self.cpus[cpu as usize].earliest = key.unwrap_or(u64::MAX);
        match self.variant {
            Variant::Linear => {}
            Variant::Fmask => {
                if key.is_some() {
                    self.free.clear(cpu)
                } else {
                    self.free.set(cpu)
                }
            }
            Variant::Heap => {
                match key {
                    Some(k) => self.heap.set(cpu, k),
                    None => self.heap.clear(cpu),
                };
            }
            Variant::Cpupri => {
                self.pri.set(cpu, key.map_or(cpupri::FREE, level));
            }
        }
    }

    /// The loop of Fig 3: a free CPU, else the CPU with the latest key later than `key`.
    #[inline]
    fn scan(&self, key: u64) -> Option<u32> {
        let mut best: Option<(u64, u32)> = None;
        for (c, p) in self.cpus.iter().enumerate() {
            if p.earliest > key && best.is_none_or(|(b, _)| p.earliest > b) {
                best = Some((p.earliest, c as u32));
            }
        }
        best.map(|b| b.1)
    }

    /// Find a CPU for an entity with `key`.
    #[inline]
    pub fn find(&self, key: u64) -> Option<u32> {
        match self.variant {
            Variant::Linear => self.scan(key),
            Variant::Fmask => self.free.first().0.or_else(|| self.scan(key)),
            Variant::Heap => self.heap.find(key, None).0,
            Variant::Cpupri => self.pri.find_lower(level(key), None).0,
        }
    }
}

/// A deterministic xorshift stream (no dependency needed for a benchmark's inputs).
pub struct Xs(pub u64);
impl Xs {
    #[inline]
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random key for `cpu` (distinct per CPU) or None with probability `1 - busy`.
#[inline]
pub fn draw(rng: &mut Xs, cpu: u32, busy: f64) -> Option<u64> {
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (u < busy).then(|| (rng.below(KEY_SPACE >> 11) << 11) | cpu as u64)
}

/// A model of `m` CPUs, a fraction `busy` of them busy with random keys.
pub fn populated(variant: Variant, m: u32, busy: f64, seed: u64) -> Model {
    let mut model = Model::new(variant, m);
    let mut rng = Xs(seed | 1);
    for c in 0..m {
        let k = draw(&mut rng, c, busy);
        model.update(c, k);
    }
    model
}
