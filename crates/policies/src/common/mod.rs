//! Policy-free pieces shared by the policies: the total-order key, an indexed heap, and the
//! global and partitioned scheduling domains.

pub mod global;
pub mod heap;
pub mod key;
pub mod partitioned;

pub use global::GlobalDomain;
pub use heap::IndexedHeap;
pub use key::{Key, Order};
pub use partitioned::PartitionedDomain;
