//! A resource's locking protocol, by name (docs/locking.md): what a task set's `run.locking`
//! and `resources` entries hold. The protocols' rules on a set are in locking.rs; their
//! behaviour in the ledger in crates/runtime/src/ledger/locking.rs.

use serde::Serialize;

/// A resource's locking protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    #[default]
    None,
    Pip,
    Pcp,
    Srp,
}

impl Protocol {
    pub const NAMES: &'static [&'static str] = &["none", "pip", "pcp", "srp"];

    pub fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "none" => Protocol::None,
            "pip" => Protocol::Pip,
            "pcp" => Protocol::Pcp,
            "srp" => Protocol::Srp,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Protocol::None => "none",
            Protocol::Pip => "pip",
            Protocol::Pcp => "pcp",
            Protocol::Srp => "srp",
        }
    }
    pub fn is_none(&self) -> bool {
        *self == Protocol::None
    }
    /// Whether it raises a holder to a ceiling (which needs every user's priority or level).
    pub fn is_ceiling(self) -> bool {
        matches!(self, Protocol::Pcp | Protocol::Srp)
    }
}
