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
    /// The original priority ceiling protocol (Sha, Rajkumar & Lehoczky 1990, `pcp:original`):
    /// a job locks a free resource only if its priority is above the ceilings of the resources
    /// other jobs hold (else it is *ceiling blocked*); a holder inherits whom it blocks.
    #[serde(rename = "pcp:original")]
    PcpOriginal,
    Srp,
    /// Multiprocessor SRP (Gai, Lipari & Di Natale 2001): `srp` for a local resource; for a
    /// global one, non-preemptive FIFO spinning and a non-preemptive section.
    Msrp,
    /// The multiprocessor resource sharing protocol (Burns & Wellings 2013): FIFO spinning and
    /// the section at the resource's local ceiling, with migration-based helping.
    Mrsp,
    /// The global O(m) locking protocol (Brandenburg & Anderson, RTSS 2010): for global
    /// scheduling, a FIFO queue of at most m jobs per resource and a priority queue behind it;
    /// waiters suspend and the holder inherits the most urgent of them.
    Omlp,
    /// The FIFO multiprocessor locking protocol for partitioned scheduling (Brandenburg,
    /// ECRTS 2014, `fmlp+`): FIFO queues, a waiting job suspends, a holder is priority boosted,
    /// boosted jobs ordered by the time of their requests.
    #[serde(rename = "fmlp+")]
    FmlpPlus,
}

impl Protocol {
    pub const NAMES: &'static [&'static str] = &[
        "none",
        "pip",
        "pcp",
        "pcp:original",
        "srp",
        "msrp",
        "mrsp",
        "omlp",
        "fmlp+",
    ];

    pub fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "none" => Protocol::None,
            "pip" => Protocol::Pip,
            "pcp" => Protocol::Pcp,
            "pcp:original" => Protocol::PcpOriginal,
            "srp" => Protocol::Srp,
            "msrp" => Protocol::Msrp,
            "mrsp" => Protocol::Mrsp,
            "omlp" => Protocol::Omlp,
            "fmlp+" => Protocol::FmlpPlus,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Protocol::None => "none",
            Protocol::Pip => "pip",
            Protocol::Pcp => "pcp",
            Protocol::PcpOriginal => "pcp:original",
            Protocol::Srp => "srp",
            Protocol::Msrp => "msrp",
            Protocol::Mrsp => "mrsp",
            Protocol::Omlp => "omlp",
            Protocol::FmlpPlus => "fmlp+",
        }
    }
    pub fn is_none(&self) -> bool {
        *self == Protocol::None
    }
    /// Whether it raises a holder to a ceiling (which needs every user's priority or level).
    pub fn is_ceiling(self) -> bool {
        matches!(self, Protocol::Pcp | Protocol::PcpOriginal | Protocol::Srp)
    }
    /// Whether its ceiling is the highest priority of its users (`pcp`, `pcp:original`).
    pub fn is_pcp(self) -> bool {
        matches!(self, Protocol::Pcp | Protocol::PcpOriginal)
    }
    /// Whether a request for its resource held on another CPU spins (a multiprocessor
    /// protocol: `msrp`, `mrsp`), which needs a partitioned scheduler.
    pub fn spins(self) -> bool {
        matches!(self, Protocol::Msrp | Protocol::Mrsp)
    }
    /// Whether it is for global scheduling only (`omlp`): a partitioned scheduler is refused.
    pub fn is_global(self) -> bool {
        self == Protocol::Omlp
    }
    /// Whether it is for partitioned scheduling (its local and global resources follow from
    /// the partition, and its sections may not nest): `msrp`, `mrsp`, `fmlp+`.
    pub fn partitioned(self) -> bool {
        self.spins() || self == Protocol::FmlpPlus
    }
}
