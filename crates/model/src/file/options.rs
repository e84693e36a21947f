//! A task set with some of its run options replaced: what `TaskSet.with_run` and
//! `TaskSet.with_options` do for Python, and a sweep does to every set it generates (its
//! duration, seed and miss handling; its `run:` and `topology:`).

use super::read::parse_taskset;
use crate::input::{Format, InputError};
use crate::task::{OnMiss, TaskSet};
use crate::time::Time;

/// `ts` with its run's length, seed and miss handling replaced where given. A zero duration,
/// or a miss handling other than `continue` and `abort`, is refused with the message a user
/// reads.
pub fn with_run(
    ts: &TaskSet,
    duration: Option<Time>,
    seed: Option<u64>,
    on_miss: Option<&str>,
) -> Result<TaskSet, String> {
    let mut ts = ts.clone();
    if let Some(d) = duration {
        if d == 0 {
            return Err("duration must be > 0".into());
        }
        ts.run.duration = d;
    }
    if let Some(s) = seed {
        ts.run.seed = s;
    }
    match on_miss {
        None => {}
        Some("continue") => ts.run.on_miss = OnMiss::Continue,
        Some("abort") => ts.run.on_miss = OnMiss::Abort,
        Some(o) => {
            return Err(format!(
                "on_miss: expected 'continue' or 'abort', got '{o}'"
            ))
        }
    }
    Ok(ts)
}

/// `ts` with the execution model, overheads and cache model of `run` (JSON text of a task
/// file's `run:` mapping; what it leaves out takes the default) and the platform topology
/// `topology` (JSON text of `platform.topology`: a preset name or a mapping). Read exactly as a
/// task file named `source` reads them, so errors name `source` and the field, and a relative
/// overhead profile is read beside `source`.
pub fn with_options(
    ts: &TaskSet,
    run: Option<&str>,
    topology: Option<&str>,
    source: &str,
) -> Result<TaskSet, InputError> {
    let mut ts = ts.clone();
    let topo = topology.map_or(String::new(), |t| format!(", \"topology\": {t}"));
    let run_field = run.map_or(String::new(), |r| format!(", \"run\": {r}"));
    let doc = format!("{{\"platform\": {{\"cpus\": {}{topo}}}{run_field}, \"tasks\": [{{\"name\": \"_\", \"period\": 1, \"wcet\": 1}}]}}", ts.platform.cpus);
    let probe = parse_taskset(&doc, Format::Json, source)?;
    if run.is_some() {
        ts.run.execution = probe.run.execution;
        ts.run.overheads = probe.run.overheads;
        ts.run.cache = probe.run.cache;
    }
    if topology.is_some() {
        ts.platform.topology = probe.platform.topology;
    }
    Ok(ts)
}
