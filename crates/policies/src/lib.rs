//! rtsched's scheduling policies, written once against [`policy::Policy`] and driven by any
//! substrate (the simulator, the real-threads testbed). One file per policy, each opening with
//! its rules and the paper section it implements and ending with its registry entry (`INFO`,
//! `build`, listed in [`registry::ENTRIES`]); what constructors are handed in [`ctx`] and
//! [`spec`] (which the policies import, never the registry); shared, policy-free pieces in
//! [`common`].

pub mod common;
pub mod ctx;
pub mod policy;
pub mod registry;
pub mod spec;

pub mod cfs;
pub mod dasa;
pub mod federated;
pub mod gedf;
pub mod gedf_dist;
pub mod gedf_seq;
pub mod gfifo;
pub mod gfp;
pub mod gfp_dist;
pub mod ggua;
pub mod ghvdf;
pub mod gnpedf;
pub mod lbesa;
/// Linux's class rules (CBS, GRUB, admission, constants) and the `linux` class stack.
pub mod linux;
pub mod nggua;
pub mod opzone;
pub mod paws;
pub mod pedf;
pub mod pfp;

pub use policy::*;
pub use registry::{build, build_for, BuildError, POLICIES};
pub use spec::{PartitionAdmission, Partitioning, PolicyInfo, SchedulerSpec, Takes, Tufs};
