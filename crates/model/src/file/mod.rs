//! Task-set files (YAML or JSON; docs/taskset-format.md). Reading (`read/`) parses the text
//! into one generic tree (`crate::input`) and validates it by hand, field by field
//! (`crate::validate`), so that every error names the file, the task and the field;
//! `write.rs` writes a task set back as YAML.

mod options;
mod read;
mod write;

pub use crate::input::{read_input_text, Format, InputError};
pub use options::{with_options, with_run};
pub use read::{
    load_taskset, parse_taskset, MAX_TASKSET_BYTES, MAX_THREADS_PER_SET, MAX_THREADS_PER_TASK,
};
pub use write::{to_yaml, to_yaml_with, TaskNote};

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod tests;
