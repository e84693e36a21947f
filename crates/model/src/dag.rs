//! A task's job as a directed acyclic graph (DAG) of nodes: the sporadic DAG task model
//! (Baruah et al., "A generalized parallel task model for recurrent real-time processes",
//! RTSS 2012; used by PAWS's authors' later global-scheduling analyses). A node is a piece of
//! sequential work with a WCET; an edge (u, v) means v may start only when u has finished. A
//! node becomes ready when its last predecessor finishes.
//!
//! PAWS's fork-join regions (§3, `program.rs`) are the special case in which every thread of
//! region k+1 depends on every thread of region k: [`Dag::from_regions`] builds that graph, so
//! the work C (sum of every node's WCET) and the critical-path length L (the longest chain of
//! WCETs) agree with `Task::wcet` and `Task::critical_path` however the task was written.
//!
//! The graph is stored as written (nodes in file order, edges as pairs); the derived views
//! (predecessor counts, successor lists, a topological order) are computed by the methods
//! below, which assume a validated, acyclic graph.

use crate::program::{CriticalSection, Precedence, Program, Region};
use crate::time::Time;
use serde::Serialize;

/// One node: a named piece of sequential work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Node {
    pub name: String,
    pub wcet: Time,
}

/// A job's precedence graph. `edges` are (from, to) indices into `nodes`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Dag {
    pub nodes: Vec<Node>,
    pub edges: Vec<(u32, u32)>,
}

impl Dag {
    /// The work C: every node's WCET summed (its length run on one CPU).
    pub fn work(&self) -> Time {
        self.nodes.iter().map(|n| n.wcet).sum()
    }

    /// How many predecessors each node has.
    pub fn in_degrees(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.nodes.len()];
        for &(_, v) in &self.edges {
            d[v as usize] += 1;
        }
        d
    }

    /// Each node's successors, in the order the edges list them.
    pub fn successors(&self) -> Vec<Vec<u32>> {
        let mut s = vec![Vec::new(); self.nodes.len()];
        for &(u, v) in &self.edges {
            s[u as usize].push(v);
        }
        s
    }

    /// A topological order (Kahn's algorithm, smallest index first among the ready, so the
    /// order is deterministic), or `None` when the graph has a cycle.
    pub fn topological_order(&self) -> Option<Vec<u32>> {
        let succ = self.successors();
        let mut indeg = self.in_degrees();
        let mut ready: std::collections::BTreeSet<u32> = (0..self.nodes.len() as u32)
            .filter(|&i| indeg[i as usize] == 0)
            .collect();
        let mut out = Vec::with_capacity(self.nodes.len());
        while let Some(u) = ready.pop_first() {
            out.push(u);
            for &v in &succ[u as usize] {
                indeg[v as usize] -= 1;
                if indeg[v as usize] == 0 {
                    ready.insert(v);
                }
            }
        }
        (out.len() == self.nodes.len()).then_some(out)
    }

    /// The critical-path length L: the largest sum of WCETs along a path (0 for no nodes).
    /// Assumes an acyclic graph (validated); a cycle gives the work as a bound.
    pub fn critical_path(&self) -> Time {
        let Some(order) = self.topological_order() else {
            return self.work();
        };
        let succ = self.successors();
        // finish[v]: the longest path ending with v, v included.
        let mut finish = vec![0 as Time; self.nodes.len()];
        for &u in &order {
            finish[u as usize] += self.nodes[u as usize].wcet;
            let f = finish[u as usize];
            for &v in &succ[u as usize] {
                finish[v as usize] = finish[v as usize].max(f);
            }
        }
        finish.into_iter().max().unwrap_or(0)
    }

    /// The DAG a sequence of fork-join regions is: node `r{k}.t{j}` per thread j of region k
    /// (1-based, PAWS §3's w_k^j), and an edge from every thread of region k to every thread
    /// of region k+1 (the join, then the fork). No regions: no nodes.
    pub fn from_regions(regions: &[Region]) -> Dag {
        let mut dag = Dag::default();
        let mut prev: std::ops::Range<u32> = 0..0;
        for (k, r) in regions.iter().enumerate() {
            let start = dag.nodes.len() as u32;
            for (j, &w) in r.threads.iter().enumerate() {
                dag.nodes.push(Node {
                    name: format!("r{}.t{}", k + 1, j + 1),
                    wcet: w,
                });
            }
            let here = start..dag.nodes.len() as u32;
            for u in prev.clone() {
                for v in here.clone() {
                    dag.edges.push((u, v));
                }
            }
            prev = here;
        }
        dag
    }
}

impl Precedence {
    /// A validated DAG's precedence (`program.rs`).
    pub fn of(dag: &Dag) -> Precedence {
        let n = dag.nodes.len();
        let indeg = dag.in_degrees();
        let mut start = vec![0u32; n + 1];
        for &(u, _) in &dag.edges {
            start[u as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut succ = vec![0u32; dag.edges.len()];
        for &(u, v) in &dag.edges {
            succ[fill[u as usize] as usize] = v;
            fill[u as usize] += 1;
        }
        // Each node's successors in index order: nodes made ready together reach the policy
        // in index order.
        for u in 0..n {
            succ[start[u] as usize..start[u + 1] as usize].sort_unstable();
        }
        let sources = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
        Precedence {
            indeg,
            start,
            succ,
            sources,
        }
    }
}

impl Program {
    /// A DAG task's program: one region of its nodes (a section names its node as region 0,
    /// thread = node index), and its precedence.
    pub fn build_dag(dag: &Dag, sections: &[CriticalSection]) -> Program {
        let nodes = [Region {
            threads: dag.nodes.iter().map(|n| n.wcet).collect(),
        }];
        let mut p = Program::build_general(dag.work(), &nodes, sections);
        p.dag = Some(Box::new(Precedence::of(dag)));
        p
    }
}

impl Dag {
    /// A cycle (its nodes in order, the first repeated at the end), or `None` if the graph is
    /// acyclic. Depth-first from each node in index order, so the cycle named is deterministic.
    pub fn find_cycle(&self) -> Option<Vec<u32>> {
        let succ = self.successors();
        let n = self.nodes.len();
        // 0: not seen, 1: on the current path, 2: done.
        let mut state = vec![0u8; n];
        let mut path: Vec<u32> = Vec::new();
        let mut next: Vec<usize> = Vec::new();
        for root in 0..n as u32 {
            if state[root as usize] != 0 {
                continue;
            }
            state[root as usize] = 1;
            path.push(root);
            next.push(0);
            while let Some(&u) = path.last() {
                let k = next.last_mut().expect("parallel to path");
                if let Some(&v) = succ[u as usize].get(*k) {
                    *k += 1;
                    match state[v as usize] {
                        0 => {
                            state[v as usize] = 1;
                            path.push(v);
                            next.push(0);
                        }
                        1 => {
                            let at = path.iter().position(|&x| x == v).expect("on the path");
                            let mut cycle = path[at..].to_vec();
                            cycle.push(v);
                            return Some(cycle);
                        }
                        _ => {}
                    }
                } else {
                    state[u as usize] = 2;
                    path.pop();
                    next.pop();
                }
            }
        }
        None
    }

    /// The nodes not reachable from node 0 when edges are taken in either direction (empty:
    /// the graph is weakly connected).
    pub fn unconnected(&self) -> Vec<u32> {
        let n = self.nodes.len();
        if n == 0 {
            return Vec::new();
        }
        let mut adj = vec![Vec::new(); n];
        for &(u, v) in &self.edges {
            adj[u as usize].push(v);
            adj[v as usize].push(u);
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0u32];
        seen[0] = true;
        while let Some(u) = stack.pop() {
            for &v in &adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    stack.push(v);
                }
            }
        }
        (0..n as u32).filter(|&i| !seen[i as usize]).collect()
    }

    /// The nodes without predecessors (where a job starts) and without successors (where it
    /// ends), in index order.
    pub fn sources_and_sinks(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.nodes.len();
        let (mut has_in, mut has_out) = (vec![false; n], vec![false; n]);
        for &(u, v) in &self.edges {
            has_out[u as usize] = true;
            has_in[v as usize] = true;
        }
        (
            (0..n as u32).filter(|&i| !has_in[i as usize]).collect(),
            (0..n as u32).filter(|&i| !has_out[i as usize]).collect(),
        )
    }

    /// Whether some two nodes may run at once (some node has two successors or two sources).
    pub fn is_parallel(&self) -> bool {
        let (sources, _) = self.sources_and_sinks();
        sources.len() > 1 || self.successors().iter().any(|s| s.len() > 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, wcet: Time) -> Node {
        Node {
            name: name.into(),
            wcet,
        }
    }

    /// a(2) → {b(4), c(3)} → d(1): C = 10, L = 2 + 4 + 1 = 7.
    #[test]
    fn work_and_critical_path_by_hand() {
        let dag = Dag {
            nodes: vec![node("a", 2), node("b", 4), node("c", 3), node("d", 1)],
            edges: vec![(0, 1), (0, 2), (1, 3), (2, 3)],
        };
        assert_eq!(dag.work(), 10);
        assert_eq!(dag.critical_path(), 7);
        assert_eq!(dag.topological_order(), Some(vec![0, 1, 2, 3]));
        assert_eq!(dag.in_degrees(), vec![0, 1, 1, 2]);
    }

    #[test]
    fn a_cycle_has_no_topological_order() {
        let dag = Dag {
            nodes: vec![node("a", 1), node("b", 1)],
            edges: vec![(0, 1), (1, 0)],
        };
        assert_eq!(dag.topological_order(), None);
    }

    /// Regions [2], [4, 3, 4], [1, 5]: 6 nodes, 3 + 6 edges; C = 19, L = 2 + 4 + 5.
    #[test]
    fn regions_read_as_their_dag() {
        let regions: Vec<Region> = [vec![2], vec![4, 3, 4], vec![1, 5]]
            .into_iter()
            .map(|threads| Region { threads })
            .collect();
        let dag = Dag::from_regions(&regions);
        assert_eq!(dag.nodes.len(), 6);
        assert_eq!(dag.edges.len(), 3 + 6);
        assert_eq!(dag.nodes[3].name, "r2.t3");
        assert_eq!((dag.work(), dag.critical_path()), (19, 11));
    }

    #[test]
    fn cycles_connectivity_and_precedence() {
        let mut dag = Dag {
            nodes: vec![node("a", 1), node("b", 1), node("c", 1), node("d", 1)],
            edges: vec![(0, 1), (1, 2), (2, 1), (0, 3)],
        };
        assert_eq!(dag.find_cycle(), Some(vec![1, 2, 1]));
        dag.edges = vec![(0, 1), (0, 2), (1, 3), (2, 3)];
        assert_eq!(dag.find_cycle(), None);
        assert!(dag.unconnected().is_empty() && dag.is_parallel());
        assert_eq!(dag.sources_and_sinks(), (vec![0], vec![3]));
        let p = Precedence::of(&dag);
        assert_eq!((p.successors(0), p.successors(3)), (&[1, 2][..], &[][..]));
        assert_eq!(
            (p.indeg.clone(), p.sources.clone()),
            (vec![0, 1, 1, 2], vec![0])
        );
        dag.edges = vec![(0, 1), (2, 3)];
        assert_eq!(dag.unconnected(), vec![2, 3]);
        let chain = Dag::from_regions(&[Region { threads: vec![1] }, Region { threads: vec![2] }]);
        assert!(!chain.is_parallel());
    }
}
