//! The task-set reader on any YAML text: a task set that round-trips through `to_yaml`, or an
//! error naming the file; never a panic, a hang or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtsched_model::Format;

fuzz_target!(|data: &[u8]| {
    // A file that is not UTF-8 is refused before parsing (crates/model/tests/adversarial.rs).
    if let Ok(text) = std::str::from_utf8(data) {
        rtsched_fuzz::check_taskset(text, Format::Yaml);
    }
});
