//! DAG task sets (docs/generators.md, "DAG generators"): each task's job is a directed acyclic
//! graph (`rtsched_model::Dag`) with one source and one sink, its work C split over the nodes.
//!
//! - `dag-nfj`: nested fork-join graphs, as the generator of Melani, Bertogna, Bonifaci,
//!   Marchetti-Spaccamela, Buttazzo ("Response-Time Analysis of Conditional DAG Tasks in
//!   Multiprocessor Systems", ECRTS 2015, §VII) builds them without conditional nodes: the top
//!   node always forks; below it, each node forks with probability `p` into 2..=`k` branches
//!   (uniform), each branch expanded the same way, until depth `d`; the branches join in one
//!   node. Then every pair (u, v) with u before v in creation order and no edge gets an extra
//!   edge u → v with probability `p_add` (0 by default: pure nested fork-join). Creation order
//!   (fork, its branches, their join) is topological, so the extra edges keep it acyclic.
//! - `dag-layered`: layered random graphs: a source, `layers` layers holding the `nodes` − 2
//!   other nodes (each layer at least one, the rest spread uniformly), a sink. An edge joins
//!   each node of a layer to each of the next with probability `p`; a node left without a
//!   predecessor (successor) in the adjacent layer gets one drawn uniformly, so every path runs
//!   source → layer 1 → … → sink and the graph is connected.
//!
//! Timing as the generic generators: utilisations by RandFixedSum (`util=randfixedsum`, the
//! default, with `u_min`, `u_max`) or UUniFast (`util=uunifast`); periods by `period`, `tmin`,
//! `tmax`, `granularity`. C = max(round(u·T), nodes) ns — u may exceed 1 (a task needing more
//! than one CPU) — split over the nodes by uniform random weights: each node gets 1 ns plus its
//! share of the rest, floored, the remainder a ns each to the first nodes, so Σ = C exactly.
//! A DAG task's granule is thus a ns per node: C/T is within `gen::wcet_error_ns(u, T, nodes)`
//! / T of u (the tolerance `tests/generator_promises.rs` holds the set's Σ C/T to).
//! Deadlines: `deadline=implicit` (D = T) or `constrained,f=F`: D uniform in
//! [L + F·(T − L), T] with L the critical path (D = T when L ≥ T).

use super::{
    deadline_param, granularity_param, period_param, randfixedsum, tasks_param, uunifast,
    DeadlineDist, Generated, Params, MAX_DRAWS, MAX_THREADS,
};
use rand::Rng;
use rtsched_model::{Dag, Node, Task, TaskSet, Time};

/// The most nodes in one task's DAG.
pub const MAX_DAG_NODES: u64 = 10_000;

/// Parameters every DAG generator reads besides the generic ones (`gen::GENERIC_KEYS`) and its
/// shape's: how the task utilisations are drawn.
pub const COMMON_KEYS: &[&str] = &["util"];

pub const NFJ_HELP: &str = "n, U (required); m=1, p=0.8 (fork probability), k=4 (2..k branches), d=3 (nesting depth), p_add=0 (extra forward edges), util=randfixedsum|uunifast, u_min=0, u_max=1 (may exceed 1), period=loguniform|uniform|harmonic, tmin=10ms, tmax=100ms, deadline=implicit|constrained, f=0 (D in [L+f(T-L), T]), granularity=1us";
pub const LAYERED_HELP: &str = "n, U (required); m=1, nodes=10 (or A..B per task; source and sink included), layers=3 (or A..B; at most nodes-2), p=0.5 (edge probability between adjacent layers), util, u_min, u_max, period, tmin, tmax, deadline, f, granularity as dag-nfj";

/// A DAG's shape, drawn per task.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    NestedForkJoin {
        p: f64,
        k: u64,
        d: u64,
        p_add: f64,
    },
    Layered {
        nodes: (u64, u64),
        layers: (u64, u64),
        p: f64,
    },
}

fn probability(params: &Params, key: &str, default: f64) -> Result<f64, String> {
    let x = params.f64_or(key, default)?;
    if !(0.0..=1.0).contains(&x) {
        return Err(format!(
            "parameter {key}={x}: a probability must be in [0, 1]"
        ));
    }
    Ok(x)
}

/// `A` or `A..B` (inclusive) as a range of integers.
pub(super) fn range(params: &Params, key: &str, default: u64) -> Result<(u64, u64), String> {
    let Some(v) = params.raw(key) else {
        return Ok((default, default));
    };
    let bad = || format!("parameter {key}={v} is not a non-negative integer or a range A..B");
    let (a, b) = match v.split_once("..") {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (v, v),
    };
    let (a, b) = (
        a.parse::<u64>().map_err(|_| bad())?,
        b.parse::<u64>().map_err(|_| bad())?,
    );
    if a > b {
        return Err(format!("parameter {key}={v}: {a} exceeds {b}"));
    }
    Ok((a, b))
}

impl Shape {
    /// The shape of generator `name` from its parameters, checked.
    pub fn from_params(name: &str, params: &Params) -> Result<Shape, String> {
        match name {
            "dag-nfj" => {
                let k = params.uint_or("k", 4)?;
                let d = params.uint_or("d", 3)?;
                if k < 2 {
                    return Err(format!("parameter k={k}: a fork has at least 2 branches"));
                }
                let shape = Shape::NestedForkJoin {
                    p: probability(params, "p", 0.8)?,
                    k,
                    d,
                    p_add: probability(params, "p_add", 0.0)?,
                };
                let most = shape.most_nodes();
                if most > MAX_DAG_NODES {
                    return Err(format!("parameters k={k}, d={d}: a DAG could have {most} nodes, above the limit of {MAX_DAG_NODES} per task"));
                }
                Ok(shape)
            }
            _ => {
                let nodes = range(params, "nodes", 10)?;
                let layers = range(params, "layers", 3)?;
                if layers.0 < 1 {
                    return Err("parameter layers must be at least 1".into());
                }
                if nodes.0 < layers.1 + 2 {
                    return Err(format!("parameter nodes={}: at least layers + 2 = {} (a source, a sink and a node per layer)", nodes.0, layers.1 + 2));
                }
                if nodes.1 > MAX_DAG_NODES {
                    return Err(format!(
                        "parameter nodes={}: at most {MAX_DAG_NODES} per task",
                        nodes.1
                    ));
                }
                Ok(Shape::Layered {
                    nodes,
                    layers,
                    p: probability(params, "p", 0.5)?,
                })
            }
        }
    }

    /// The most nodes one DAG of this shape can have.
    pub fn most_nodes(&self) -> u64 {
        match *self {
            // N(0) = 1, N(j) = 2 + k·N(j − 1): a fork, k branches, a join.
            Shape::NestedForkJoin { k, d, .. } => (0..d).fold(1u64, |n, _| {
                k.saturating_mul(n).saturating_add(2).min(u64::MAX / 2)
            }),
            Shape::Layered { nodes, .. } => nodes.1,
        }
    }

    /// One DAG's structure (nodes with WCET 0, edges).
    pub fn draw<R: Rng>(&self, rng: &mut R) -> Dag {
        let mut dag = Dag::default();
        match *self {
            Shape::NestedForkJoin { p, k, d, p_add } => {
                nfj(rng, &mut dag, 0, d, p, k);
                if p_add > 0.0 {
                    let n = dag.nodes.len() as u32;
                    let has: std::collections::HashSet<(u32, u32)> =
                        dag.edges.iter().copied().collect();
                    for u in 0..n {
                        for v in u + 1..n {
                            if !has.contains(&(u, v)) && rng.random::<f64>() < p_add {
                                dag.edges.push((u, v));
                            }
                        }
                    }
                }
            }
            Shape::Layered { nodes, layers, p } => {
                let layers = rng.random_range(layers.0..=layers.1) as usize;
                let nodes = rng.random_range(nodes.0.max(layers as u64 + 2)..=nodes.1) as usize;
                let mut size = vec![1usize; layers];
                for _ in 0..nodes - 2 - layers {
                    size[rng.random_range(0..layers)] += 1;
                }
                add_node(&mut dag); // the source, 0
                let mut prev: Vec<u32> = vec![0];
                for &s in &size {
                    let here: Vec<u32> = (0..s).map(|_| add_node(&mut dag)).collect();
                    connect(rng, &mut dag, &prev, &here, p);
                    prev = here;
                }
                let sink = add_node(&mut dag);
                connect(rng, &mut dag, &prev, &[sink], p);
            }
        }
        dag
    }
}

fn add_node(dag: &mut Dag) -> u32 {
    dag.nodes.push(Node {
        name: format!("v{}", dag.nodes.len()),
        wcet: 0,
    });
    dag.nodes.len() as u32 - 1
}

/// Edges from layer `a` to layer `b`, each with probability `p`; then every node of `b`
/// without a predecessor gets one, and every node of `a` without a successor gets one.
fn connect<R: Rng>(rng: &mut R, dag: &mut Dag, a: &[u32], b: &[u32], p: f64) {
    let (mut has_pred, mut has_succ) = (vec![false; b.len()], vec![false; a.len()]);
    for (i, &u) in a.iter().enumerate() {
        for (j, &v) in b.iter().enumerate() {
            // One source or one sink: every node joins it (no draw needed).
            if a.len() == 1 || b.len() == 1 || rng.random::<f64>() < p {
                dag.edges.push((u, v));
                (has_succ[i], has_pred[j]) = (true, true);
            }
        }
    }
    for (j, &v) in b.iter().enumerate() {
        if !has_pred[j] {
            let i = rng.random_range(0..a.len());
            dag.edges.push((a[i], v));
            has_succ[i] = true;
        }
    }
    for (i, &u) in a.iter().enumerate() {
        if !has_succ[i] {
            dag.edges.push((u, b[rng.random_range(0..b.len())]));
        }
    }
}

/// Expand one node at `depth` (Melani et al.'s recursion); returns (first, last) node.
fn nfj<R: Rng>(rng: &mut R, dag: &mut Dag, depth: u64, d: u64, p: f64, k: u64) -> (u32, u32) {
    let fork = depth < d && (depth == 0 || rng.random::<f64>() < p);
    let first = add_node(dag);
    if !fork {
        return (first, first);
    }
    let branches = rng.random_range(2..=k);
    let mut ends = Vec::with_capacity(branches as usize);
    for _ in 0..branches {
        let (s, e) = nfj(rng, dag, depth + 1, d, p, k);
        dag.edges.push((first, s));
        ends.push(e);
    }
    let join = add_node(dag);
    dag.edges.extend(ends.into_iter().map(|e| (e, join)));
    (first, join)
}

/// Split `c` ns over the nodes of `dag`: 1 ns each plus a uniform-weight share of the rest,
/// the flooring remainder a ns each to the first nodes. Needs c ≥ the node count.
pub fn split_work<R: Rng>(rng: &mut R, dag: &mut Dag, c: Time) {
    let n = dag.nodes.len() as u64;
    let rest = c - n;
    let w: Vec<f64> = (0..n).map(|_| rng.random::<f64>() + f64::EPSILON).collect();
    let total: f64 = w.iter().sum();
    let mut given = 0;
    for (node, &x) in dag.nodes.iter_mut().zip(&w) {
        let share = ((rest as f64 * x / total).floor() as Time).min(rest - given);
        node.wcet = 1 + share;
        given += share;
    }
    for node in dag.nodes.iter_mut().take((rest - given) as usize) {
        node.wcet += 1;
    }
}

/// A DAG task set: `name` is `dag-nfj` or `dag-layered`.
pub fn generate<R: Rng>(rng: &mut R, name: &str, params: &Params) -> Result<Generated, String> {
    let n = tasks_param(params.uint_req("n")?)?;
    let m = params.cpus_or("m", 1)?;
    let total = params.f64_req("U")?;
    let utils = match params.str_or("util", "randfixedsum") {
        "uunifast" => {
            if params.raw("u_min").is_some() || params.raw("u_max").is_some() {
                return Err("util=uunifast takes no u_min/u_max (use util=randfixedsum)".into());
            }
            uunifast(rng, n, total)?
        }
        "randfixedsum" => randfixedsum(
            rng,
            n,
            total,
            params.f64_or("u_min", 0.0)?,
            params.f64_or("u_max", 1.0)?,
        )?,
        other => {
            return Err(format!(
                "parameter util={other}: known: randfixedsum, uunifast"
            ))
        }
    };
    let periods = period_param(params)?;
    let deadlines = deadline_param(params)?;
    let g = granularity_param(params)?;
    let shape = Shape::from_params(name, params)?;
    if let Shape::NestedForkJoin { p_add, .. } = shape {
        let pairs = (n as u64).saturating_mul(shape.most_nodes().saturating_pow(2)) / 2;
        if p_add > 0.0 && pairs > MAX_DRAWS {
            return Err(format!("parameter p_add={p_add}: drawing an extra edge for each pair of nodes would take up to {pairs} draws for n={n} tasks of up to {} nodes (limit {MAX_DRAWS}); lower k, d or n", shape.most_nodes()));
        }
    }
    if (n as u64).saturating_mul(shape.most_nodes()) > MAX_THREADS {
        return Err(format!(
            "parameter n={n}: {n} tasks of up to {} nodes exceed the limit of {MAX_THREADS} nodes in a set",
            shape.most_nodes()
        ));
    }
    let mut tasks = Vec::with_capacity(n);
    for (i, &u) in utils.iter().enumerate() {
        let period = periods.draw(rng, g);
        let mut dag = shape.draw(rng);
        let c = ((u * period as f64).round() as Time).max(dag.nodes.len() as Time);
        split_work(rng, &mut dag, c);
        let mut t = Task::periodic(format!("t{i}"), period, c);
        t.deadline = match deadlines {
            DeadlineDist::Implicit => period,
            DeadlineDist::Constrained { f } => {
                let l = dag.critical_path();
                if l >= period {
                    period
                } else {
                    let lo = l as f64 + f * (period - l) as f64;
                    let d = lo + rng.random::<f64>() * (period as f64 - lo);
                    (d.round() as Time).clamp(l, period)
                }
            }
        };
        t.dag = Some(dag);
        tasks.push(t);
    }
    Ok(Generated {
        taskset: TaskSet::new(m, tasks),
        utilisations: utils,
        threads: None,
        utilities: None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{by_name, Params};
    use super::*;
    use proptest::prelude::*;

    fn gen(name: &str, params: &str, seed: u64) -> Result<Generated, String> {
        by_name(name, &Params::parse(params).unwrap(), seed)
    }

    /// Acyclic, one source, one sink, connected (every node on a source-sink path).
    fn check_dag(dag: &Dag) -> Result<(), String> {
        let order = dag.topological_order().ok_or("a cycle")?;
        let n = dag.nodes.len();
        let indeg = dag.in_degrees();
        let succ = dag.successors();
        let sources: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let sinks: Vec<usize> = (0..n).filter(|&i| succ[i].is_empty()).collect();
        if sources.len() != 1 || sinks.len() != 1 {
            return Err(format!("sources {sources:?}, sinks {sinks:?}"));
        }
        // One source and acyclic: every node is reached from it along the topological order.
        let mut reached = vec![false; n];
        reached[sources[0]] = true;
        for &u in &order {
            if reached[u as usize] {
                for &v in &succ[u as usize] {
                    reached[v as usize] = true;
                }
            }
        }
        if reached.iter().any(|r| !r) {
            return Err("a node unreachable from the source".into());
        }
        let mut edges = dag.edges.clone();
        edges.sort();
        edges.dedup();
        if edges.len() != dag.edges.len() {
            return Err("a repeated edge".into());
        }
        Ok(())
    }

    fn arb_case() -> impl Strategy<Value = (&'static str, String)> {
        prop_oneof![
            (
                0.0f64..=1.0,
                2u64..=5,
                0u64..=4,
                prop_oneof![Just(0.0), 0.0f64..=0.3]
            )
                .prop_map(|(p, k, d, p_add)| (
                    "dag-nfj",
                    format!("p={p},k={k},d={d},p_add={p_add}")
                )),
            (1u64..=5, 0u64..=20, 0.0f64..=1.0).prop_map(|(layers, extra, p)| (
                "dag-layered",
                format!(
                    "layers={layers},nodes={}..{},p={p}",
                    layers + 2,
                    layers + 2 + extra
                )
            )),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Same seed, same set; every DAG valid; C = Σ node WCETs; U as asked within rounding.
        #[test]
        fn dag_sets_are_valid_and_reproducible(
            seed: u64,
            (name, shape) in arb_case(),
            n in 1usize..=8,
            m in 1u32..=8,
            uunifast: bool,
            constrained: bool,
        ) {
            let total = 0.4 * n as f64;
            let params = format!(
                "{shape},n={n},m={m},U={total},util={}{}",
                if uunifast { "uunifast" } else { "randfixedsum" },
                if constrained { ",deadline=constrained,f=0.2" } else { "" }
            );
            let a = gen(name, &params, seed).unwrap();
            prop_assert_eq!(&a, &gen(name, &params, seed).unwrap());
            prop_assert_eq!(a.taskset.platform.cpus, m);
            prop_assert_eq!(a.taskset.tasks.len(), n);
            let mut sum = 0.0;
            for t in &a.taskset.tasks {
                let dag = t.dag.as_ref().unwrap();
                check_dag(dag).map_err(|e| TestCaseError::fail(format!("{}: {e}: {dag:?}", t.name)))?;
                prop_assert!(t.regions.is_empty());
                prop_assert_eq!(t.wcet, dag.work());
                prop_assert!(dag.nodes.iter().all(|x| x.wcet >= 1));
                prop_assert!(t.deadline <= t.period);
                prop_assert!(t.deadline >= dag.critical_path().min(t.period));
                if !constrained {
                    prop_assert_eq!(t.deadline, t.period);
                }
                sum += t.wcet as f64 / t.period as f64;
                // The nodes' 1 ns each may raise a tiny C; otherwise rounding to the ns.
                let nodes = dag.nodes.len() as f64;
                prop_assert!(t.wcet as f64 <= (a.utilisations[t.name[1..].parse::<usize>().unwrap()] * t.period as f64).max(nodes) + 0.5 + 1e-6);
            }
            prop_assert!((sum - total).abs() <= n as f64 * 1e-4, "Σ C/T = {} vs U = {}", sum, total);
        }

        #[test]
        fn a_seed_changes_the_set(seed: u64, (name, shape) in arb_case()) {
            let p = format!("{shape},n=4,U=2,m=2");
            prop_assert_ne!(gen(name, &p, seed).unwrap().taskset.tasks, gen(name, &p, seed.wrapping_add(1)).unwrap().taskset.tasks);
        }
    }

    /// Shapes: nested fork-join with p = 1 is the complete tree — k = 2, d = 2: 1 fork, 2 forks
    /// of 2 leaves, 2 joins, 1 join = 1 + 2·(1 + 2 + 1) + 1 = 10 nodes, as `most_nodes` says;
    /// p = 0 is one fork of leaves. Layered: `nodes` exactly, and the longest chain of edges is
    /// layers + 1.
    #[test]
    fn shapes_by_hand() {
        let mut rng = super::super::rng(1);
        let full = Shape::NestedForkJoin {
            p: 1.0,
            k: 2,
            d: 2,
            p_add: 0.0,
        };
        assert_eq!(full.most_nodes(), 10);
        let dag = full.draw(&mut rng);
        assert_eq!((dag.nodes.len(), dag.edges.len()), (10, 12));
        let flat = Shape::NestedForkJoin {
            p: 0.0,
            k: 3,
            d: 5,
            p_add: 0.0,
        };
        for _ in 0..20 {
            let dag = flat.draw(&mut rng);
            let b = dag.nodes.len() - 2;
            assert!((2..=3).contains(&b));
            assert_eq!(dag.edges.len(), 2 * b);
        }
        let layered = Shape::Layered {
            nodes: (12, 12),
            layers: (4, 4),
            p: 0.3,
        };
        for _ in 0..20 {
            let mut dag = layered.draw(&mut rng);
            assert_eq!(dag.nodes.len(), 12);
            check_dag(&dag).unwrap();
            dag.nodes.iter_mut().for_each(|x| x.wcet = 1);
            assert_eq!(dag.critical_path(), 6); // source, 4 layers, sink
        }
    }

    #[test]
    fn work_is_split_exactly() {
        let mut rng = super::super::rng(2);
        let mut dag = Shape::Layered {
            nodes: (7, 7),
            layers: (2, 2),
            p: 0.5,
        }
        .draw(&mut rng);
        for c in [7, 8, 13, 1_000_003] {
            split_work(&mut rng, &mut dag, c);
            assert_eq!(dag.work(), c);
            assert!(dag.nodes.iter().all(|x| x.wcet >= 1));
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = |name: &str, p: &str| gen(name, p, 1).unwrap_err();
        assert!(e("dag-nfj", "n=2,U=1,k=1").contains("k=1"));
        assert!(e("dag-nfj", "n=2,U=1,k=10,d=6").contains("above the limit"));
        assert!(e("dag-nfj", "n=2,U=1,p=1.5").contains("p=1.5"));
        // k = 6, d = 4: up to 1,814 nodes, 1.6 million pairs per task; 100 tasks: 165 million.
        assert!(e("dag-nfj", "n=100,U=1,k=6,d=4,p_add=0.1").contains("p_add=0.1"));
        assert!(gen("dag-nfj", "n=4,U=1,k=6,d=4,p=0.3,p_add=0.01", 1).is_ok());
        assert!(e("dag-layered", "n=2,U=1,nodes=4,layers=3").contains("nodes=4"));
        assert!(e("dag-layered", "n=2,U=1,nodes=9..5").contains("9 exceeds 5"));
        assert!(e("dag-layered", "n=2,U=1,layers=0").contains("layers"));
        assert!(e("dag-layered", "n=2,U=1,util=beta").contains("util=beta"));
        assert!(e("dag-layered", "n=2,U=1,util=uunifast,u_max=1").contains("u_max"));
        assert!(e("dag-layered", "n=2,U=1,wcet=3").contains("has no parameter 'wcet'"));
        assert!(e("dag-layered", "n=200000,U=1").contains("n=200000"));
        // u may exceed 1 with u_max above 1 (heavy tasks).
        let g = gen("dag-layered", "n=2,U=3,m=4,u_max=2", 1).unwrap();
        assert!(g.taskset.tasks.iter().any(|t| t.wcet > t.period));
    }
}
