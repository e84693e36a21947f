//! The policies as Python reads them: each one's description with what it takes and needs
//! (`rtsched_policies::PolicyInfo`, read by `rtsched.schedulers()`, the CLI's `--partition`,
//! `-s all` and its warnings, instead of lists of names).

use crate::{input_err, PyTaskSet};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rtsched_policies::{PolicyInfo, SchedulerSpec, Tufs};

/// One policy's description as a dict: name, summary, paper, options (text), `partition`
/// (None, or `bare`, `admission`, `own` heuristics), `fixed_priorities`, `takes`
/// (`fork_join`, `dag`, `sections`, `fair`), `tufs` (`ignored` or `non-increasing`),
/// `resolves_deadlocks`, `grants_resources`.
fn info_dict<'py>(py: Python<'py>, p: &PolicyInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", p.name)?;
    d.set_item("summary", p.summary)?;
    d.set_item("paper", p.paper)?;
    d.set_item("options", p.options)?;
    match p.partition {
        None => d.set_item("partition", py.None())?,
        Some(how) => {
            let h = PyDict::new(py);
            h.set_item("bare", how.bare)?;
            h.set_item("admission", how.admission.name())?;
            h.set_item("own", how.own.to_vec())?;
            d.set_item("partition", h)?;
        }
    }
    d.set_item("fixed_priorities", p.fixed_priorities)?;
    let t = PyDict::new(py);
    t.set_item("fork_join", p.takes.fork_join)?;
    t.set_item("dag", p.takes.dag)?;
    t.set_item("sections", p.takes.sections)?;
    t.set_item("fair", p.takes.fair)?;
    d.set_item("takes", t)?;
    let tufs = match p.tufs {
        Tufs::Ignored => "ignored",
        Tufs::NonIncreasing => "non-increasing",
    };
    d.set_item("tufs", tufs)?;
    d.set_item("resolves_deadlocks", p.resolves_deadlocks)?;
    d.set_item("grants_resources", p.grants_resources)?;
    Ok(d)
}

/// Every policy's description (see `info_dict`), in the registry's order.
#[pyfunction]
fn policies(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for p in rtsched_policies::POLICIES {
        out.append(info_dict(py, p)?)?;
    }
    Ok(out)
}

/// Why policy `scheduler` does not run `taskset`, or None when it does: first a part of the
/// set its description says it does not take (`registry::refusal`: best-effort, DAG,
/// fork-join tasks, critical sections), then what its build refuses (a partition or
/// priorities it needs, TUFs it needs non-increasing, a partition its heuristic cannot place).
/// Nothing runs. A name or option wrong whatever the set raises InputError.
#[pyfunction]
fn refusal(taskset: &PyTaskSet, scheduler: &str) -> PyResult<Option<String>> {
    SchedulerSpec::parse(scheduler).map_err(input_err)?;
    Ok(
        match rtsched_policies::build_for(scheduler, &taskset.inner) {
            Ok(_) => None,
            Err(e) => Some(String::from(e)),
        },
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(refusal, m)?)?;
    Ok(())
}
