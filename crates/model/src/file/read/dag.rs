//! A task's `dag`: named nodes with their WCETs and the edges between them, checked to be a
//! connected acyclic graph whose edges name known nodes (docs/dag.md; the model is
//! `crate::dag`).

use super::MAX_THREADS_PER_TASK;
use crate::dag::{Dag, Node};
use crate::input::InputError;
use crate::text::closest;
use crate::validate::{kind, show, Validator};
use serde_json::{Map, Value};
use std::collections::HashMap;

const DAG_FIELDS: &[&str] = &["nodes", "edges"];

impl Validator<'_> {
    /// An unknown node name, with the closest known one.
    pub(super) fn unknown_node(
        &self,
        ctx: Option<&str>,
        field: &str,
        name: &str,
        known: &[&str],
    ) -> InputError {
        let hint = closest(name, known)
            .map(|s| format!(" (did you mean '{s}'?)"))
            .unwrap_or_default();
        self.err(ctx, Some(field), format!("unknown node '{name}'{hint}"))
    }

    /// `dag: {nodes: {a: 2ms, b: 4ms, c: 3ms, d: 1ms}, edges: [[a, b], [a, c], [b, d], [c, d]]}`:
    /// nodes in file order, each with its WCET; edges (from, to). Checked: names non-empty,
    /// WCETs > 0, edges naming known nodes, no self-loop, no duplicate edge, no cycle (one is
    /// named), weakly connected. Several sources or sinks are allowed (docs/dag.md).
    pub(super) fn dag(&self, v: &Value, ctx: Option<&str>) -> Result<Dag, InputError> {
        let m = v.as_object().ok_or_else(|| {
            self.err(
                ctx,
                Some("dag"),
                format!(
                    "expected a mapping {{nodes: {{NAME: WCET, ...}}, edges: [[FROM, TO], ...]}}, got {}",
                    kind(v)
                ),
            )
        })?;
        for k in m.keys() {
            if !DAG_FIELDS.contains(&k.as_str()) {
                let hint = closest(k, DAG_FIELDS)
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default();
                return Err(self.err(
                    ctx,
                    Some(&format!("dag.{k}")),
                    format!(
                        "unknown field{hint}; known fields: {}",
                        DAG_FIELDS.join(", ")
                    ),
                ));
            }
        }
        let (mut dag, index) = self.dag_nodes(m, ctx)?;
        self.dag_edges(m, ctx, &mut dag, &index)?;
        self.dag_shape(&dag, ctx)?;
        Ok(dag)
    }

    /// `dag.nodes`: a non-empty mapping of names to WCETs, in file order; with each name's index.
    fn dag_nodes<'v>(
        &self,
        m: &'v Map<String, Value>,
        ctx: Option<&str>,
    ) -> Result<(Dag, HashMap<&'v str, u32>), InputError> {
        let nodes_v = m.get("nodes").ok_or_else(|| {
            self.err(
                ctx,
                Some("dag.nodes"),
                "missing required field (a mapping of node names to WCETs)",
            )
        })?;
        let nm = nodes_v.as_object().ok_or_else(|| {
            self.err(
                ctx,
                Some("dag.nodes"),
                format!(
                    "expected a mapping of node names to WCETs (e.g. {{a: 2ms, b: 1ms}}), got {}",
                    kind(nodes_v)
                ),
            )
        })?;
        if nm.is_empty() {
            return Err(self.err(
                ctx,
                Some("dag.nodes"),
                "is empty: a DAG needs at least one node",
            ));
        }
        if nm.len() as u64 > MAX_THREADS_PER_TASK {
            return Err(self.err(
                ctx,
                Some("dag.nodes"),
                format!(
                    "has {} nodes, more than the limit of {MAX_THREADS_PER_TASK} threads in a task",
                    nm.len()
                ),
            ));
        }
        let mut dag = Dag::default();
        let mut index: HashMap<&str, u32> = HashMap::with_capacity(nm.len());
        for (name, w) in nm {
            // Duplicate keys are refused by the document reader; names are unique here.
            if name.trim().is_empty() {
                return Err(self.err(ctx, Some("dag.nodes"), "a node name is empty"));
            }
            let wcet = self.positive_duration(w, ctx, &format!("dag.nodes.{name}"))?;
            index.insert(name.as_str(), dag.nodes.len() as u32);
            dag.nodes.push(Node {
                name: name.clone(),
                wcet,
            });
        }
        Ok((dag, index))
    }

    /// `dag.edges`: pairs [FROM, TO] of known nodes, no self-loop, no duplicate.
    fn dag_edges(
        &self,
        m: &Map<String, Value>,
        ctx: Option<&str>,
        dag: &mut Dag,
        index: &HashMap<&str, u32>,
    ) -> Result<(), InputError> {
        let names: Vec<&str> = dag.nodes.iter().map(|n| n.name.as_str()).collect();
        let edges_v = m.get("edges");
        let list: &[Value] = match edges_v {
            None | Some(Value::Null) => &[],
            Some(Value::Array(a)) => a,
            Some(x) => {
                return Err(self.err(
                    ctx,
                    Some("dag.edges"),
                    format!("expected a list of [FROM, TO] pairs, got {}", kind(x)),
                ))
            }
        };
        let mut seen: std::collections::HashMap<(u32, u32), usize> =
            std::collections::HashMap::with_capacity(list.len());
        for (k, e) in list.iter().enumerate() {
            let field = format!("dag.edges[{k}]");
            let pair = match e {
                Value::Array(p) if p.len() == 2 => p,
                x => {
                    return Err(self.err(
                        ctx,
                        Some(&field),
                        format!("expected a pair [FROM, TO] of node names, got {}", show(x)),
                    ))
                }
            };
            let mut ends = [0u32; 2];
            for (i, x) in pair.iter().enumerate() {
                let name = match x {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => {
                        return Err(self.err(
                            ctx,
                            Some(&field),
                            format!("expected a node name, got {}", show(other)),
                        ))
                    }
                };
                ends[i] = match index.get(name.as_str()) {
                    Some(&u) => u,
                    None => return Err(self.unknown_node(ctx, &field, &name, &names)),
                };
            }
            let [u, v] = ends;
            if u == v {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!(
                        "a self-loop on '{}': a node cannot precede itself",
                        names[u as usize]
                    ),
                ));
            }
            if let Some(j) = seen.insert((u, v), k) {
                return Err(self.err(
                    ctx,
                    Some(&field),
                    format!(
                        "duplicate edge '{}' -> '{}' (also dag.edges[{j}])",
                        names[u as usize], names[v as usize]
                    ),
                ));
            }
            dag.edges.push((u, v));
        }
        Ok(())
    }

    /// The graph as a whole: acyclic (a cycle is named) and weakly connected.
    fn dag_shape(&self, dag: &Dag, ctx: Option<&str>) -> Result<(), InputError> {
        let names: Vec<&str> = dag.nodes.iter().map(|n| n.name.as_str()).collect();
        if let Some(cycle) = dag.find_cycle() {
            let path: Vec<&str> = cycle.iter().map(|&u| names[u as usize]).collect();
            return Err(self.err(
                ctx,
                Some("dag.edges"),
                format!(
                    "the graph has a cycle: {} (a DAG is acyclic)",
                    path.join(" -> ")
                ),
            ));
        }
        let apart = dag.unconnected();
        if !apart.is_empty() {
            let shown: Vec<String> = apart
                .iter()
                .take(5)
                .map(|&u| format!("'{}'", names[u as usize]))
                .collect();
            return Err(self.err(
                ctx,
                Some("dag.edges"),
                format!(
                    "the graph is not connected: {}{}{} not linked to '{}' by any edge (one task is one connected DAG; give separate tasks separately)",
                    shown.join(", "),
                    if apart.len() > 5 { ", ..." } else { "" },
                    if apart.len() == 1 { " is" } else { " are" },
                    names[0]
                ),
            ));
        }
        Ok(())
    }
}
