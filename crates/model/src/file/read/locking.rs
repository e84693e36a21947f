//! `resources` entries with a protocol (`{name: bus, protocol: pcp}`) and `run.locking`; the
//! checks of crate::locking on the whole set (docs/taskset-format.md "Critical sections").

use crate::input::InputError;
use crate::locking::Protocol;
use crate::task::TaskSet;
use crate::validate::{show, Validator};
use serde_json::Value;

const RESOURCE_FIELDS: &[&str] = &["name", "protocol"];

impl Validator<'_> {
    /// A locking protocol's name (`Protocol::NAMES`).
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

#[cfg(test)]
mod tests {
    use crate::locking::Protocol;
    use crate::{parse_taskset, Format, TaskSet};

    fn load(yaml: &str) -> Result<TaskSet, String> {
        parse_taskset(yaml, Format::Yaml, "l.yaml").map_err(|e| e.to_string())
    }

    const TASKS: &str = "tasks:\n  - {name: l, period: 20, wcet: 4, priority: 1, sections: [{resource: R, start: 0, length: 4}]}\n  - {name: h, period: 20, wcet: 2, sections: [{resource: R, start: 0, length: 1}]}\n";

    #[test]
    fn protocols_come_from_the_resource_then_the_set_then_none() {
        let ts = load("platform: {cpus: 1}\nrun: {locking: pip}\nresources: [{name: R, protocol: none}, S]\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: R, start: 0, length: 1}, {resource: S, start: 1, length: 1}]}\n").unwrap();
        assert_eq!(ts.protocol(0), Protocol::None);
        assert_eq!(ts.protocol(1), Protocol::Pip);
        let plain = load("platform: {cpus: 1}\ntasks:\n  - {name: a, period: 10, wcet: 2, sections: [{resource: R, start: 0, length: 1}]}\n").unwrap();
        assert_eq!(plain.protocol(0), Protocol::None);
        assert!(!plain.has_locking());
    }

    #[test]
    fn protocols_survive_writing_and_reading_back() {
        let ts = load("platform: {cpus: 1}\nrun: {locking: srp}\nresources: [{name: R, protocol: 'pcp:original'}, S]\ntasks:\n  - {name: a, period: 10, wcet: 2, priority: 1, sections: [{resource: R, start: 0, length: 1}, {resource: S, start: 1, length: 1}]}\n").unwrap();
        let back = load(&crate::file::to_yaml(&ts)).unwrap();
        assert_eq!(back.run.locking, Protocol::Srp);
        assert_eq!(
            (back.protocol(0), back.protocol(1)),
            (Protocol::PcpOriginal, Protocol::Srp)
        );
    }

    #[test]
    fn a_ceiling_protocol_needs_every_users_priority_and_one_cpu() {
        let e = load(&format!(
            "platform: {{cpus: 1}}\nresources: [{{name: R, protocol: pcp}}]\n{TASKS}"
        ))
        .unwrap_err();
        assert!(
            e.contains("l.yaml")
                && e.contains("task 'h'")
                && e.contains("resource 'R'")
                && e.contains("'priority'"),
            "{e}"
        );
        // The original ceiling protocol needs the same, and says its name.
        let e = load(&format!(
            "platform: {{cpus: 1}}\nresources: [{{name: R, protocol: 'pcp:original'}}]\n{TASKS}"
        ))
        .unwrap_err();
        assert!(
            e.contains("task 'h'") && e.contains("uses pcp:original") && e.contains("'priority'"),
            "{e}"
        );
        let e = load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: pcp:original}}\n{}",
            TASKS
                .replacen("{name: l,", "{name: l, cpu: 0,", 1)
                .replacen("{name: h,", "{name: h, priority: 2,", 1)
        ))
        .unwrap_err();
        assert!(e.contains("pcp:original") && e.contains("'cpu'"), "{e}");
        // srp's levels come from the deadlines: no field needed on one CPU.
        assert!(load(&format!(
            "platform: {{cpus: 1}}\nrun: {{locking: srp}}\n{TASKS}"
        ))
        .is_ok());
        // On 2 CPUs with no task's `cpu`, a partitioner places the set (keeping R's users
        // together); one user's `cpu` without the other's is refused.
        assert!(load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: srp}}\n{TASKS}"
        ))
        .is_ok());
        let one = TASKS.replacen("{name: h,", "{name: h, cpu: 1,", 1);
        let e = load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: srp}}\n{one}"
        ))
        .unwrap_err();
        assert!(e.contains("task 'l'") && e.contains("'cpu'"), "{e}");
        // pip needs neither.
        assert!(load(&format!(
            "platform: {{cpus: 2}}\nrun: {{locking: pip}}\n{TASKS}"
        ))
        .is_ok());
        let e = load("platform: {cpus: 1}\nrun: {locking: ceiling}\ntasks:\n  - {name: a, period: 10, wcet: 2}\n").unwrap_err();
        assert!(e.contains("locking") && e.contains("pcp"), "{e}");
        let e = load("platform: {cpus: 1}\nresources: [{name: R, protocl: pip}]\ntasks:\n  - {name: a, period: 10, wcet: 2}\n").unwrap_err();
        assert!(e.contains("protocl") && e.contains("protocol"), "{e}");
    }
}
