//! Lock-order analysis of a task set: whether its nested critical sections can deadlock.

use crate::program::CriticalSection;
use crate::task::TaskSet;

// A method of `TaskSet` defined here, apart from the model's types, so that the task model
// does not depend on its analyses.
impl TaskSet {
    /// Nested sections make a thread request one resource while holding others. If those
    /// "held while requesting" edges form a cycle, jobs can deadlock: the description of one
    /// such cycle. Not an error: the job ledger detects a deadlock when it happens and the
    /// policy resolves it by an abort (DASA, the GUA family); a policy that cannot is stopped
    /// with a clear error, and the CLI warns beforehand (the classic remedy: acquire resources
    /// in one global order).
    pub fn lock_order_cycle(&self) -> Option<String> {
        let (tasks, resources) = (&self.tasks, &self.resources);
        let n = resources.len();
        if n < 2 {
            return None;
        }
        // edges[a] = (b, task) : some thread of `task` requests b while holding a.
        let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (ti, t) in tasks.iter().enumerate() {
            let mut open: Vec<&CriticalSection> = Vec::new();
            let mut at = (u32::MAX, u32::MAX);
            for s in &t.sections {
                if (s.region, s.thread) != at {
                    open.clear();
                    at = (s.region, s.thread);
                }
                while open.last().is_some_and(|o| o.end() <= s.start) {
                    open.pop();
                }
                for o in &open {
                    edges[o.resource as usize].push((s.resource as usize, ti));
                }
                open.push(s);
            }
        }
        // Depth-first search for a cycle (colour 1 = on the path).
        fn dfs(
            u: usize,
            edges: &[Vec<(usize, usize)>],
            colour: &mut [u8],
            path: &mut Vec<(usize, usize)>,
        ) -> bool {
            colour[u] = 1;
            for &(v, t) in &edges[u] {
                path.push((v, t));
                if colour[v] == 1 || (colour[v] == 0 && dfs(v, edges, colour, path)) {
                    return true;
                }
                path.pop();
            }
            colour[u] = 2;
            false
        }
        let mut colour = vec![0u8; n];
        for r in 0..n {
            let mut path = vec![(r, usize::MAX)];
            if colour[r] == 0 && dfs(r, &edges, &mut colour, &mut path) {
                let last = path.last().expect("a cycle has edges").0;
                let from = path.iter().position(|p| p.0 == last).unwrap_or(0);
                let steps: Vec<String> = path[from..]
                    .windows(2)
                    .map(|w| {
                        format!(
                            "task '{}' requests '{}' while holding '{}'",
                            tasks[w[1].1].name, resources[w[1].0], resources[w[0].0]
                        )
                    })
                    .collect();
                return Some(format!(
                    "nested critical sections can deadlock: {}",
                    steps.join(", and ")
                ));
            }
        }
        None
    }
}
