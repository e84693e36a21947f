//! `resources` entries with a protocol (`{name: bus, protocol: pcp}`) and `run.locking`; the
//! checks of crate::locking on the whole set (docs/taskset-format.md "Critical sections").

use crate::input::InputError;
use crate::locking::Protocol;
use crate::task::TaskSet;
use crate::validate::{show, Validator};
use serde_json::Value;

const RESOURCE_FIELDS: &[&str] = &["name", "protocol"];

impl Validator<'_> {
    /// A locking protocol's name (`none`, `pip`, `pcp`, `srp`).
    pub(super) fn protocol(
        &self,
        v: &Value,
        ctx: Option<&str>,
        field: &str,
    ) -> Result<Protocol, InputError> {
        v.as_str().and_then(Protocol::parse).ok_or_else(|| {
            self.err(
                ctx,
                Some(field),
                format!(
                    "expected a locking protocol ({}), got {}",
                    Protocol::NAMES.join(", "),
                    show(v)
                ),
            )
        })
    }

    /// One `resources` entry: a name, or `{name, protocol}`.
    pub(super) fn resource_entry<'v>(
        &self,
        k: usize,
        n: &'v Value,
    ) -> Result<(Option<&'v str>, Option<Protocol>), InputError> {
        let Some(m) = n.as_object() else {
            return Ok((n.as_str(), None));
        };
        let pos = format!("resources[{k}]");
        self.check_fields(m, RESOURCE_FIELDS, Some(&pos))?;
        let protocol = match m.get("protocol") {
            None | Some(Value::Null) => None,
            Some(p) => Some(self.protocol(p, Some(&pos), "protocol")?),
        };
        Ok((m.get("name").and_then(Value::as_str), protocol))
    }

    /// The set's protocols checked against its tasks (crate::locking).
    pub(super) fn locking(&self, ts: &TaskSet) -> Result<(), InputError> {
        match ts.locking_error() {
            None => Ok(()),
            Some(e) => Err(self.err(
                Some(&format!("task '{}'", e.task)),
                Some("sections"),
                e.message,
            )),
        }
    }
}
