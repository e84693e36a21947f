//! Platform topology (LWFG §2 "cache distance", §5 Table 2): the caches of each level, which
//! CPUs share each one, and the NUMA nodes. The cache model of the simulator and the
//! cache-aware partitioners read it; nothing here simulates anything.
//!
//! A topology is a list of cache *instances* (one per group of CPUs sharing it) and a list of
//! nodes. In task files (docs/taskset-format.md "topology") it is a preset name —
//! `opteron6164x4` (LWFG's 4 × 12-core AMD Opteron 6164 HE as Table 2 gives it: private 64 KiB
//! L1-I and L1-D and 512 KiB L2, a 5118 KiB L3 shared by 6 cores, NUMA nodes of 12 cores),
//! `opteron6164x4-dies` (the same caches, a NUMA node per 6-core die as the processor has it)
//! or `host` (this machine, from sysfs) — or levels written out, each shared by groups of
//! `shared_by` consecutive CPUs or by explicit CPU lists.

use serde::Serialize;

/// What a cache holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

impl CacheKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheKind::Data => "data",
            CacheKind::Instruction => "instruction",
            CacheKind::Unified => "unified",
        }
    }
    pub fn parse(s: &str) -> Option<CacheKind> {
        match s.to_ascii_lowercase().as_str() {
            "data" | "d" => Some(CacheKind::Data),
            "instruction" | "i" => Some(CacheKind::Instruction),
            "unified" | "u" => Some(CacheKind::Unified),
            _ => None,
        }
    }
}

/// One cache: its level, what it holds, its geometry, and the CPUs that share it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    /// Bytes.
    pub size: u64,
    /// Line size in bytes.
    pub line: u64,
    /// Associativity (ways); `size / line / ways` sets.
    pub ways: u32,
    /// The CPUs that share it, ascending.
    pub cpus: Vec<u32>,
}

/// The caches and NUMA nodes of a platform.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Topology {
    /// Where it came from: a preset's name, or `None` for one written out.
    pub preset: Option<String>,
    pub caches: Vec<Cache>,
    /// CPUs of each NUMA node, ascending; empty: one node.
    pub nodes: Vec<Vec<u32>>,
}

impl Topology {
    /// The known preset names.
    pub const PRESETS: &'static [&'static str] = &["opteron6164x4", "opteron6164x4-dies", "host"];

    /// LWFG's platform as Table 2 gives it, restricted to its first `cpus` CPUs (at most 48).
    ///
    /// From the paper (Table 2, "12-core AMD Opteron 6164 HE", 4 of them): L1-I and L1-D 64 Kb
    /// 2-way and L2 512 Kb 16-way per core, L3 5118 Kb 48-way "shared between 6 cores", "NUMA
    /// Node: 12 cores", 64-byte lines (§4.1.1). From the processor (Magny-Cours, socket G34): a
    /// package is two 6-core dies, each with its own L3 (6 MB, of which HT Assist's probe filter
    /// takes 1 MB on multi-socket machines: about the 5118 KiB Table 2 lists) and its own memory
    /// controller; so an L3 group here is a die (CPUs 6k..6k+5) and Table 2's 12-core node a
    /// package. A node per die: [`Topology::opteron6164x4_dies`].
    pub fn opteron6164x4(cpus: u32) -> Result<Topology, String> {
        Self::opteron("opteron6164x4", cpus, 12)
    }

    /// [`Topology::opteron6164x4`] with a NUMA node per die (8 nodes of 6 cores), as the
    /// processor has it: each die's memory controller drives its own DDR3 channels, and the
    /// other die of the same package is reached over HyperTransport like another package's.
    /// Table 2 says "NUMA Node: 12 cores" (4 Gb of its 16 Gb), which a BIOS interleaving the two
    /// dies' memory, or memory on one die only, would give; the paper does not say which.
    pub fn opteron6164x4_dies(cpus: u32) -> Result<Topology, String> {
        Self::opteron("opteron6164x4-dies", cpus, 6)
    }

    /// 48 Opteron 6164 HE cores with Table 2's caches (an L3 per 6-core die) and NUMA nodes of
    /// `node` consecutive cores, restricted to the first `cpus`.
    fn opteron(name: &str, cpus: u32, node: u32) -> Result<Topology, String> {
        if cpus > 48 {
            return Err(format!(
                "preset '{name}' has 48 CPUs; the platform has {cpus}"
            ));
        }
        const KIB: u64 = 1024;
        let levels = [
            (1, CacheKind::Instruction, 64 * KIB, 2, 1),
            (1, CacheKind::Data, 64 * KIB, 2, 1),
            (2, CacheKind::Unified, 512 * KIB, 16, 1),
            (3, CacheKind::Unified, 5118 * KIB, 48, 6),
        ];
        let mut caches = Vec::new();
        for (level, kind, size, ways, shared_by) in levels {
            caches.extend(groups(cpus, shared_by).into_iter().map(|g| Cache {
                level,
                kind,
                size,
                line: 64,
                ways,
                cpus: g,
            }));
        }
        Ok(Topology {
            preset: Some(name.into()),
            caches,
            nodes: groups(cpus, node),
        })
    }

    /// This machine's topology, read from sysfs (`/sys/devices/system/cpu/cpu*/cache`,
    /// `/sys/devices/system/node`), restricted to CPUs `0..cpus`.
    pub fn host(cpus: u32) -> Result<Topology, String> {
        Self::from_sysfs(std::path::Path::new("/sys/devices/system"), cpus)
    }

    /// The topology under a sysfs tree rooted at `root` (`.../system`), for CPUs `0..cpus`.
    pub fn from_sysfs(root: &std::path::Path, cpus: u32) -> Result<Topology, String> {
        let read = |p: std::path::PathBuf| {
            std::fs::read_to_string(&p)
                .map(|s| s.trim().to_string())
                .map_err(|e| format!("cannot read {}: {e}", p.display()))
        };
        let mut caches: Vec<Cache> = Vec::new();
        for cpu in 0..cpus {
            let dir = root.join(format!("cpu/cpu{cpu}/cache"));
            if !dir.exists() {
                return Err(format!("preset 'host': {} does not exist (the platform has {cpus} CPUs; this machine has fewer, or sysfs shows no caches)", dir.display()));
            }
            let mut k = 0;
            while dir.join(format!("index{k}")).exists() {
                let ix = dir.join(format!("index{k}"));
                k += 1;
                let level: u8 = read(ix.join("level"))?
                    .parse()
                    .map_err(|e| format!("{}: level: {e}", ix.display()))?;
                let kind = CacheKind::parse(&read(ix.join("type"))?)
                    .ok_or_else(|| format!("{}: unknown cache type", ix.display()))?;
                let size = crate::text::parse_size(
                    &read(ix.join("size"))?
                        .replace('K', "KiB")
                        .replace('M', "MiB"),
                )?;
                let line = read(ix.join("coherency_line_size"))
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(64);
                let ways = read(ix.join("ways_of_associativity"))
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(1)
                    .max(1);
                let shared: Vec<u32> = parse_cpu_list(&read(ix.join("shared_cpu_list"))?)?
                    .into_iter()
                    .filter(|&c| c < cpus)
                    .collect();
                let c = Cache {
                    level,
                    kind,
                    size,
                    line,
                    ways,
                    cpus: shared,
                };
                if !caches.contains(&c) {
                    caches.push(c);
                }
            }
        }
        let mut nodes = Vec::new();
        let mut n = 0;
        while root.join(format!("node/node{n}")).exists() {
            let list: Vec<u32> =
                parse_cpu_list(&read(root.join(format!("node/node{n}/cpulist")))?)?
                    .into_iter()
                    .filter(|&c| c < cpus)
                    .collect();
            if !list.is_empty() {
                nodes.push(list);
            }
            n += 1;
        }
        caches.sort_by(|a, b| {
            (a.level, a.kind.as_str(), &a.cpus).cmp(&(b.level, b.kind.as_str(), &b.cpus))
        });
        Ok(Topology {
            preset: Some("host".into()),
            caches,
            nodes,
        })
    }

    /// The preset `name` for a platform of `cpus` CPUs.
    pub fn preset(name: &str, cpus: u32) -> Result<Topology, String> {
        match name {
            "opteron6164x4" => Self::opteron6164x4(cpus),
            "opteron6164x4-dies" => Self::opteron6164x4_dies(cpus),
            "host" => Self::host(cpus),
            other => Err(format!(
                "unknown topology preset '{other}' (known: {})",
                Self::PRESETS.join(", ")
            )),
        }
    }

    /// Check the caches and nodes against a platform of `cpus` CPUs. An error says which
    /// cache instance (index into `caches`) if it is about one, the field (`size`, `cpus`,
    /// `nodes[1]`...) and what is wrong.
    pub fn validate(&self, cpus: u32) -> Result<(), (Option<usize>, String, String)> {
        for (i, c) in self.caches.iter().enumerate() {
            if c.level == 0 {
                return Err((Some(i), "level".to_string(), "must be 1 or more".into()));
            }
            if c.line == 0 || !c.line.is_power_of_two() {
                return Err((
                    Some(i),
                    "line".to_string(),
                    format!("must be a power of two number of bytes, got {}", c.line),
                ));
            }
            if c.size < c.line {
                return Err((
                    Some(i),
                    "size".to_string(),
                    format!(
                        "{} bytes is smaller than one line ({} bytes)",
                        c.size, c.line
                    ),
                ));
            }
            if c.ways == 0 || c.size / c.line < c.ways as u64 {
                return Err((
                    Some(i),
                    "ways".to_string(),
                    format!("{} ways do not fit {} lines", c.ways, c.size / c.line),
                ));
            }
            if c.cpus.is_empty() {
                return Err((
                    Some(i),
                    "cpus".to_string(),
                    "no CPU shares this cache".into(),
                ));
            }
            if let Some(&bad) = c.cpus.iter().find(|&&x| x >= cpus) {
                return Err((
                    Some(i),
                    "cpus".to_string(),
                    format!(
                        "CPU {bad} does not exist: the platform has {cpus} CPUs (0..={})",
                        cpus - 1
                    ),
                ));
            }
            for (j, o) in self.caches[..i].iter().enumerate() {
                if o.level == c.level && o.kind == c.kind {
                    if let Some(x) = c.cpus.iter().find(|x| o.cpus.contains(x)) {
                        let _ = j;
                        return Err((
                            Some(i),
                            "cpus".to_string(),
                            format!(
                                "CPU {x} already has a level-{} {} cache",
                                c.level,
                                c.kind.as_str()
                            ),
                        ));
                    }
                }
            }
        }
        let mut seen = vec![false; cpus as usize];
        for (i, n) in self.nodes.iter().enumerate() {
            for &x in n {
                if x >= cpus {
                    return Err((
                        None,
                        format!("nodes[{i}]"),
                        format!("CPU {x} does not exist: the platform has {cpus} CPUs"),
                    ));
                }
                if std::mem::replace(&mut seen[x as usize], true) {
                    return Err((
                        None,
                        format!("nodes[{i}]"),
                        format!("CPU {x} is in two nodes"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The caches `cpu` reaches, innermost first (level, then data before unified).
    pub fn caches_of(&self, cpu: u32) -> impl Iterator<Item = &Cache> + '_ {
        let mut v: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.cpus.contains(&cpu))
            .collect();
        v.sort_by_key(|c| (c.level, c.kind == CacheKind::Unified));
        v.into_iter()
    }

    /// The last-level cache of `cpu` (the largest level holding data), if any.
    pub fn llc(&self, cpu: u32) -> Option<&Cache> {
        self.caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction && c.cpus.contains(&cpu))
            .max_by_key(|c| c.level)
    }

    /// The lowest level of a data cache CPUs `a` and `b` share (LWFG's cache distance: the
    /// closer they are, the cheaper sharing memory is); `None` if they share none.
    pub fn shared_level(&self, a: u32, b: u32) -> Option<u8> {
        self.caches
            .iter()
            .filter(|c| {
                c.kind != CacheKind::Instruction && c.cpus.contains(&a) && c.cpus.contains(&b)
            })
            .map(|c| c.level)
            .min()
    }

    /// One line for people: `opteron6164x4: L1-I 64KiB x48, L1-D 64KiB x48, L2 512KiB x48,
    /// L3 5118KiB x8 (6 CPUs each); 4 NUMA nodes`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut seen: Vec<(u8, CacheKind, u64, usize)> = Vec::new();
        for c in &self.caches {
            let key = (c.level, c.kind, c.size, c.cpus.len());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let n = self
                .caches
                .iter()
                .filter(|o| (o.level, o.kind, o.size, o.cpus.len()) == key)
                .count();
            let name = match c.kind {
                CacheKind::Data => format!("L{}-D", c.level),
                CacheKind::Instruction => format!("L{}-I", c.level),
                CacheKind::Unified => format!("L{}", c.level),
            };
            let size = if c.size % (1 << 20) == 0 {
                format!("{}MiB", c.size >> 20)
            } else if c.size % 1024 == 0 {
                format!("{}KiB", c.size >> 10)
            } else {
                format!("{}B", c.size)
            };
            let shared = if c.cpus.len() > 1 {
                format!(" ({} CPUs each)", c.cpus.len())
            } else {
                String::new()
            };
            parts.push(format!("{name} {size} x{n}{shared}"));
        }
        let nodes = if self.nodes.len() > 1 {
            format!("; {} NUMA nodes", self.nodes.len())
        } else {
            String::new()
        };
        let caches = if parts.is_empty() {
            "no caches given".to_string()
        } else {
            parts.join(", ")
        };
        match &self.preset {
            Some(p) => format!("{p}: {caches}{nodes}"),
            None => format!("{caches}{nodes}"),
        }
    }

    /// The NUMA node of `cpu` (0 when no nodes are given).
    pub fn node_of(&self, cpu: u32) -> u32 {
        self.nodes
            .iter()
            .position(|n| n.contains(&cpu))
            .unwrap_or(0) as u32
    }
}

/// Consecutive groups of `size` CPUs covering `0..cpus` (the last may be smaller).
pub fn groups(cpus: u32, size: u32) -> Vec<Vec<u32>> {
    let size = size.max(1);
    (0..cpus)
        .step_by(size as usize)
        .map(|s| (s..(s + size).min(cpus)).collect())
        .collect()
}

/// A Linux CPU list: `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("bad CPU list '{s}'");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if b < a {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opteron_preset_is_table_2() {
        let t = Topology::opteron6164x4(48).unwrap();
        t.validate(48).unwrap();
        let l3: Vec<&Cache> = t.caches.iter().filter(|c| c.level == 3).collect();
        assert_eq!(l3.len(), 8, "one L3 per 6 cores (Table 2), i.e. per die");
        assert!(l3
            .iter()
            .all(|c| c.size == 5118 * 1024 && c.ways == 48 && c.cpus.len() == 6));
        assert_eq!(
            t.caches.iter().filter(|c| c.level == 1).count(),
            96,
            "private L1-I and L1-D"
        );
        // Table 2: "NUMA Node: 12 cores" — 4 nodes, each a package of two dies (two L3s).
        assert_eq!(t.nodes, groups(48, 12));
        assert_eq!(
            (
                t.shared_level(0, 0),
                t.shared_level(0, 5),
                t.shared_level(0, 6)
            ),
            (Some(1), Some(3), None)
        );
        assert_eq!(t.llc(7).unwrap().cpus, (6..12).collect::<Vec<_>>());
        assert_eq!(
            (t.node_of(6), t.node_of(11), t.node_of(12)),
            (0, 0, 1),
            "CPU 6 (die 1) on CPU 0's node"
        );
        // Fewer CPUs: the first ones, groups cut short.
        let t8 = Topology::opteron6164x4(8).unwrap();
        t8.validate(8).unwrap();
        assert_eq!(t8.llc(7).unwrap().cpus, vec![6, 7]);
        assert!(Topology::opteron6164x4(49).unwrap_err().contains("48 CPUs"));
        assert_eq!(t.describe(), "opteron6164x4: L1-I 64KiB x48, L1-D 64KiB x48, L2 512KiB x48, L3 5118KiB x8 (6 CPUs each); 4 NUMA nodes");
    }

    #[test]
    fn the_dies_preset_has_a_node_per_die() {
        // The processor: each 6-core die has its own L3 and memory controller, so 48 cores are
        // 8 nodes of 6, and a node is exactly an L3 group. CPU 6 is on die 1 of package 0:
        // CPU 0's node under Table 2 (above), another node here.
        let t = Topology::preset("opteron6164x4-dies", 48).unwrap();
        t.validate(48).unwrap();
        assert_eq!(
            t.caches,
            Topology::opteron6164x4(48).unwrap().caches,
            "Table 2's caches"
        );
        assert_eq!(t.nodes, groups(48, 6));
        assert!(
            t.nodes.iter().all(|n| t.llc(n[0]).unwrap().cpus == *n),
            "a node per L3"
        );
        assert_eq!((t.node_of(5), t.node_of(6), t.node_of(47)), (0, 1, 7));
        assert_eq!(
            Topology::preset("opteron6164x4-dies", 8).unwrap().nodes,
            vec![(0..6).collect::<Vec<_>>(), vec![6, 7]]
        );
        assert!(Topology::preset("opteron6164x4-dies", 49)
            .unwrap_err()
            .contains("preset 'opteron6164x4-dies' has 48 CPUs"));
        assert_eq!(t.describe(), "opteron6164x4-dies: L1-I 64KiB x48, L1-D 64KiB x48, L2 512KiB x48, L3 5118KiB x8 (6 CPUs each); 8 NUMA nodes");
        assert!(Topology::preset("opteron", 4)
            .unwrap_err()
            .contains("known: opteron6164x4, opteron6164x4-dies, host"));
    }

    #[test]
    fn sysfs_is_read_from_a_tree() {
        let dir = std::env::temp_dir().join(format!("rtsched-sysfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for cpu in 0..2 {
            for (k, (level, kind, size, shared)) in [
                (1, "Data", "32K", format!("{cpu}")),
                (2, "Unified", "1024K", "0-1".to_string()),
            ]
            .iter()
            .enumerate()
            {
                let ix = dir.join(format!("cpu/cpu{cpu}/cache/index{k}"));
                std::fs::create_dir_all(&ix).unwrap();
                for (f, v) in [
                    ("level", level.to_string()),
                    ("type", kind.to_string()),
                    ("size", size.to_string()),
                    ("shared_cpu_list", shared.clone()),
                    ("coherency_line_size", "64".into()),
                    ("ways_of_associativity", "8".into()),
                ] {
                    std::fs::write(ix.join(f), format!("{v}\n")).unwrap();
                }
            }
        }
        std::fs::create_dir_all(dir.join("node/node0")).unwrap();
        std::fs::write(dir.join("node/node0/cpulist"), "0-1\n").unwrap();
        let t = Topology::from_sysfs(&dir, 2).unwrap();
        t.validate(2).unwrap();
        assert_eq!(
            t.caches.len(),
            3,
            "two private L1s, one shared L2 (listed once)"
        );
        assert_eq!(
            (t.shared_level(0, 1), t.llc(1).unwrap().size),
            (Some(2), 1024 * 1024)
        );
        assert_eq!(t.nodes, vec![vec![0, 1]]);
        assert!(Topology::from_sysfs(&dir, 3).unwrap_err().contains("cpu2"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn validation_names_the_field() {
        let base = Cache {
            level: 2,
            kind: CacheKind::Unified,
            size: 4096,
            line: 64,
            ways: 4,
            cpus: vec![0, 1],
        };
        let bad = |f: fn(&mut Topology), cache: Option<usize>, field: &str, needle: &str| {
            let mut t = Topology {
                preset: None,
                caches: vec![base.clone()],
                nodes: vec![],
            };
            f(&mut t);
            let (c, fl, msg) = t.validate(2).unwrap_err();
            assert!(
                c == cache && fl == field && msg.contains(needle),
                "{c:?} {fl}: {msg}"
            );
        };
        bad(
            |t| t.caches[0].cpus = vec![1, 2],
            Some(0),
            "cpus",
            "CPU 2 does not exist",
        );
        bad(
            |t| t.caches[0].size = 32,
            Some(0),
            "size",
            "smaller than one line",
        );
        bad(|t| t.caches[0].line = 48, Some(0), "line", "power of two");
        bad(|t| t.caches[0].ways = 128, Some(0), "ways", "do not fit");
        bad(
            |t| {
                t.caches.push(Cache {
                    cpus: vec![1],
                    ..t.caches[0].clone()
                })
            },
            Some(1),
            "cpus",
            "already has a level-2 unified cache",
        );
        bad(
            |t| t.nodes = vec![vec![0], vec![0, 1]],
            None,
            "nodes[1]",
            "two nodes",
        );
        assert_eq!(
            parse_cpu_list("0-2, 5,7-8").unwrap(),
            vec![0, 1, 2, 5, 7, 8]
        );
        assert!(parse_cpu_list("3-1").is_err());
        // This machine's own topology validates (whatever it is).
        if let Ok(h) = Topology::host(1) {
            h.validate(1).unwrap();
        }
    }
}
