//! Policy-free pieces shared by the policies: the total-order key, an indexed heap, the
//! global and partitioned scheduling domains, a global domain that runs parallel jobs
//! sequentially (`sequential`), and the distributed run queues of the gedf-heap
//! paper — the domain (`dist`), its per-CPU queues (`runqueue`, `pushable`), find-CPU and its
//! push structures (`findcpu`: CPU masks, the `cpudl` max-heap, `cpupri`), and what the
//! utility-accrual policies share (`ua`: tracked jobs, dependency chains, PUD, feasibility).

pub mod cpudl;
pub mod cpudl_sync;
pub mod cpumask;
pub mod cpupri;
pub mod dist;
pub mod findcpu;
pub mod global;
pub mod global_model;
pub mod heap;
pub mod key;
pub mod partitioned;
pub(crate) mod pushable;
pub(crate) mod runqueue;
pub mod sequential;
pub mod ua;

pub use dist::{DistDomain, DistStats};
pub use findcpu::PushFind;
pub use global::GlobalDomain;
pub use heap::IndexedHeap;
pub use key::{Key, Order};
pub use partitioned::PartitionedDomain;
pub use sequential::SequentialDomain;

/// A policy's named operation counters as `Policy::stats` reports them.
pub fn counters(named: &[(&str, u64)]) -> Vec<(String, f64)> {
    named
        .iter()
        .map(|&(k, x)| (k.to_string(), x as f64))
        .collect()
}
