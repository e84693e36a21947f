//! rtsched's model: tasks, platform, task-set files and the results schema.
//! It knows nothing of scheduling; every substrate (simulator, real threads, kernel) shares it.

pub mod dag;
pub mod file;
mod input;
pub mod jobs_parquet;
pub mod linux;
pub mod locking;
pub mod locks;
pub mod overheads;
pub mod program;
pub mod protocol;
pub mod results;
pub mod strict;
pub mod task;
pub mod text;
pub mod time;
pub mod topology;
pub mod tuf;
mod validate;

pub use dag::{Dag, Node};
pub use file::{load_taskset, parse_taskset, Format, InputError};
pub use locking::Protocol;
pub use overheads::Overheads;
pub use program::{
    Action, Checkpoint, CriticalSection, Precedence, Program, Region, ResourceId, ThreadProgram,
};
pub use task::*;
pub use time::Time;
pub use topology::{Cache, CacheKind, Topology};
pub use tuf::Tuf;
