//! `platform.topology`: a preset (`opteron6164x4`, `host`, …) or the caches and NUMA nodes
//! written out, each cache instance remembered by where it was written so that
//! `Topology::validate`'s findings name the field (docs/taskset-format.md "topology";
//! the model is `crate::topology`, after LWFG §2's cache distance).

use crate::input::InputError;
use crate::topology::{self, Cache, CacheKind, Topology};
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};

const TOPOLOGY_FIELDS: &[&str] = &["preset", "caches", "nodes"];
const CACHE_FIELDS: &[&str] = &["level", "type", "size", "line", "ways", "shared_by", "cpus"];

impl Validator<'_> {
    /// `topology: opteron6164x4` / `host`, or `{caches: [{level, type, size, line, ways,
    /// shared_by | cpus}], nodes: N | [[cpus]]}` (docs/taskset-format.md "topology").
    pub(super) fn topology(&self, v: &Value, cpus: u32) -> Result<Topology, InputError> {
        let ctx = Some("platform");
        let preset = |name: &str| {
            Topology::preset(name, cpus).map_err(|e| self.err(ctx, Some("topology"), e))
        };
        if let Value::String(name) = v {
            return preset(name);
        }
        let m = self.object(v, ctx, Some("topology"))?;
        self.check_fields(m, TOPOLOGY_FIELDS, Some("platform.topology"))?;
        let mut t = match m.get("preset") {
            Some(Value::String(name)) => preset(name)?,
            Some(other) => {
                return Err(self.err(
                    ctx,
                    Some("topology.preset"),
                    format!("expected a preset name, got {}", show(other)),
                ))
            }
            None => Topology::default(),
        };
        // Where each cache instance was written (`caches[i]`, `caches[i].cpus[k]`), for errors.
        let mut origin: Vec<String> = Vec::new();
        if let Some(list) = m.get("caches") {
            let list = list.as_array().ok_or_else(|| {
                self.err(
                    ctx,
                    Some("topology.caches"),
                    format!("expected a list of cache levels, got {}", kind(list)),
                )
            })?;
            t.preset = None;
            t.caches.clear();
            for (i, cv) in list.iter().enumerate() {
                self.cache(i, cv, cpus, &mut t.caches, &mut origin)?;
            }
        }
        if let Some(nv) = m.get("nodes") {
            t.preset = None;
            t.nodes = self.nodes(nv, cpus)?;
        }
        t.validate(cpus).map_err(|(cache, field, msg)| {
            let path = match cache.map(|j| origin.get(j)) {
                // `caches[i].cpus[k]` already names the field for a CPU problem.
                Some(Some(o)) if o.ends_with(']') && o.contains(".cpus[") && field == "cpus" => {
                    format!("topology.{o}")
                }
                Some(Some(o)) => format!("topology.{o}.{field}"),
                Some(None) => format!(
                    "topology (cache {} of the preset).{field}",
                    cache.unwrap_or(0)
                ),
                None => format!("topology.{field}"),
            };
            self.err(ctx, Some(&path), msg)
        })?;
        Ok(t)
    }

    /// `caches[i]`: one cache level, its instances (one per group of CPUs sharing one)
    /// added to `caches`, and where each was written to `origin`.
    fn cache(
        &self,
        i: usize,
        cv: &Value,
        cpus: u32,
        caches: &mut Vec<Cache>,
        origin: &mut Vec<String>,
    ) -> Result<(), InputError> {
        let ctx = Some("platform");
        let f = |x: &str| format!("topology.caches[{i}].{x}");
        let cm = self.object(cv, ctx, Some(&format!("topology.caches[{i}]")))?;
        self.check_fields(
            cm,
            CACHE_FIELDS,
            Some(&format!("platform.topology.caches[{i}]")),
        )?;
        let level = match cm.get("level") {
            Some(x) => self.uint(x, ctx, &f("level"))?,
            None => return Err(self.err(ctx, Some(&f("level")), "missing required field")),
        };
        if level == 0 || level > 9 {
            return Err(self.err(
                ctx,
                Some(&f("level")),
                format!("must be 1 to 9, got {level}"),
            ));
        }
        let kind_ = match cm.get("type") {
            None => CacheKind::Unified,
            Some(Value::String(x)) => CacheKind::parse(x).ok_or_else(|| {
                self.err(
                    ctx,
                    Some(&f("type")),
                    format!("expected data, instruction or unified, got '{x}'"),
                )
            })?,
            Some(other) => {
                return Err(self.err(
                    ctx,
                    Some(&f("type")),
                    format!("expected data, instruction or unified, got {}", show(other)),
                ))
            }
        };
        let size = match cm.get("size") {
            Some(x) => self.size(x, ctx, &f("size"))?,
            None => return Err(self.err(ctx, Some(&f("size")), "missing required field")),
        };
        let line = cm
            .get("line")
            .map_or(Ok(64), |x| self.size(x, ctx, &f("line")))?;
        let ways = cm
            .get("ways")
            .map_or(Ok(1), |x| self.uint(x, ctx, &f("ways")))?
            .min(u32::MAX as u64) as u32;
        let groups = self.cache_groups(cm, i, cpus)?;
        let explicit = matches!(cm.get("cpus"), Some(Value::Array(_)));
        for (k, mut g) in groups.into_iter().enumerate() {
            g.sort_unstable();
            g.dedup();
            origin.push(if explicit {
                format!("caches[{i}].cpus[{k}]")
            } else {
                format!("caches[{i}]")
            });
            caches.push(Cache {
                level: level as u8,
                kind: kind_,
                size,
                line,
                ways,
                cpus: g,
            });
        }
        Ok(())
    }

    /// A cache's instances: `shared_by: N` (groups of N consecutive CPUs), `cpus: [...]`
    /// (explicit groups, lists or "0-5"), or one per CPU.
    fn cache_groups(
        &self,
        cm: &Map<String, Value>,
        i: usize,
        cpus: u32,
    ) -> Result<Vec<Vec<u32>>, InputError> {
        let ctx = Some("platform");
        let f = |x: &str| format!("topology.caches[{i}].{x}");
        let groups = match (cm.get("shared_by"), cm.get("cpus")) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    ctx,
                    Some(&f("cpus")),
                    "give either 'shared_by' or 'cpus', not both",
                ))
            }
            (Some(x), None) => {
                let n = self.uint(x, ctx, &f("shared_by"))?;
                if n == 0 || n > cpus as u64 {
                    return Err(self.err(
                        ctx,
                        Some(&f("shared_by")),
                        format!("must be between 1 and the platform's {cpus} CPUs, got {n}"),
                    ));
                }
                topology::groups(cpus, n as u32)
            }
            (None, Some(Value::Array(gs))) => {
                let mut out = Vec::with_capacity(gs.len());
                for (k, g) in gs.iter().enumerate() {
                    let gf = format!("topology.caches[{i}].cpus[{k}]");
                    let group = match g {
                        Value::String(sl) => {
                            topology::parse_cpu_list(sl).map_err(|e| self.err(ctx, Some(&gf), e))?
                        }
                        Value::Array(xs) => xs
                            .iter()
                            .map(|x| {
                                self.uint(x, ctx, &gf)
                                    .map(|c| c.min(u32::MAX as u64) as u32)
                            })
                            .collect::<Result<Vec<u32>, _>>()?,
                        other => {
                            return Err(self.err(
                                ctx,
                                Some(&gf),
                                format!(
                                    "expected a list of CPUs or a CPU list like \"0-5\", got {}",
                                    show(other)
                                ),
                            ))
                        }
                    };
                    out.push(group);
                }
                out
            }
            (None, Some(other)) => {
                return Err(self.err(
                    ctx,
                    Some(&f("cpus")),
                    format!("expected a list of CPU groups, got {}", kind(other)),
                ))
            }
            (None, None) => topology::groups(cpus, 1),
        };
        Ok(groups)
    }

    /// `nodes`: CPUs per NUMA node, or the nodes' CPU lists.
    fn nodes(&self, nv: &Value, cpus: u32) -> Result<Vec<Vec<u32>>, InputError> {
        let ctx = Some("platform");
        let nodes = match nv {
            Value::Number(_) => {
                let n = self.uint(nv, ctx, "topology.nodes")?;
                if n == 0 {
                    return Err(self.err(
                        ctx,
                        Some("topology.nodes"),
                        "CPUs per node must be at least 1",
                    ));
                }
                topology::groups(cpus, n.min(u32::MAX as u64) as u32)
            }
            Value::Array(gs) => gs
                .iter()
                .enumerate()
                .map(|(k, g)| match g {
                    Value::String(sl) => topology::parse_cpu_list(sl)
                        .map_err(|e| self.err(ctx, Some(&format!("topology.nodes[{k}]")), e)),
                    Value::Array(xs) => xs
                        .iter()
                        .map(|x| {
                            self.uint(x, ctx, &format!("topology.nodes[{k}]"))
                                .map(|c| c.min(u32::MAX as u64) as u32)
                        })
                        .collect(),
                    other => Err(self.err(
                        ctx,
                        Some(&format!("topology.nodes[{k}]")),
                        format!("expected a list of CPUs, got {}", show(other)),
                    )),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(self.err(
                    ctx,
                    Some("topology.nodes"),
                    format!(
                        "expected CPUs per node or a list of CPU lists, got {}",
                        show(other)
                    ),
                ))
            }
        };
        Ok(nodes)
    }
}
