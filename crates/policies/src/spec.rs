//! What a policy file hands the registry besides its constructor, and what the constructor
//! reads: the policy's description ([`PolicyInfo`], its `pub const INFO`) and the scheduler as
//! the user wrote it, parsed ([`SchedulerSpec`]). Below both the policies and the registry, so
//! that the registry can list the policies without the policies naming the registry.
//! [`SchedulerSpec::parse`] is in [`crate::registry`]: it checks the name against the list.

/// What users are told of a policy (`rtsched schedulers`, the Python package's list).
#[derive(Clone, Copy, Debug)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Where it comes from.
    pub paper: &'static str,
    /// Options it takes, for the help text.
    pub options: &'static str,
}

/// A parsed scheduler spec, `NAME[:OPTION[,KEY=VALUE...]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerSpec {
    pub name: String,
    /// (key, value); a bare option has key "".
    pub options: Vec<(String, String)>,
}

impl SchedulerSpec {
    /// `spec` cut at its colon and commas; the name is not checked.
    pub(crate) fn split(spec: &str) -> SchedulerSpec {
        let spec = spec.trim();
        let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut options = Vec::new();
        for part in rest.split(',').filter(|s| !s.is_empty()) {
            match part.split_once('=') {
                Some((k, v)) => options.push((k.trim().to_string(), v.trim().to_string())),
                None => options.push((String::new(), part.trim().to_string())),
            }
        }
        SchedulerSpec {
            name: name.to_string(),
            options,
        }
    }

    /// The value of option `key` (a bare option counts as `main`), checking no other is given.
    pub fn option(&self, main: &str, allowed: &[&str]) -> Result<Option<String>, String> {
        let mut v = None;
        for (k, val) in &self.options {
            let k = if k.is_empty() { main } else { k.as_str() };
            if !allowed.contains(&k) {
                let known = if allowed.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("known: {}", allowed.join(", "))
                };
                return Err(format!(
                    "scheduler '{}' has no option '{k}' ({known})",
                    self.name
                ));
            }
            if k == main {
                v = Some(val.clone());
            }
        }
        Ok(v)
    }
}
