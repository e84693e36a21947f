//! Policy-free pieces shared by the policies: the total-order key, an indexed heap, the
//! global and partitioned scheduling domains, and the push structures of distributed run
//! queues (CPU masks, the `cpudl` max-heap, `cpupri`).

pub mod cpudl;
pub mod cpudl_sync;
pub mod cpumask;
pub mod cpupri;
pub mod global;
pub mod heap;
pub mod key;
pub mod partitioned;

pub use global::GlobalDomain;
pub use heap::IndexedHeap;
pub use key::{Key, Order};
pub use partitioned::PartitionedDomain;
