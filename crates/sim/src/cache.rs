//! The cache model (docs/cache-model.md; LWFG §2 "cache distance" and "memory sharing", §4.1
//! workload): which working sets each cache instance holds and how much of each, and what a
//! job pays to find its lines. A model, not a cycle-accurate simulator.
//!
//! 1. A *working set* is a task's `wss` bytes, or, for tasks with a `group` (LWFG's MTT), the
//!    group's memory, shared whole by its members. Counted in lines of the platform's line size.
//! 2. The drawn demand is the job's time with every access hitting its L1 (the compute part).
//!    Each dispatch adds a memory part, paid before the work resumes (the engine's `owed`):
//!    - first dispatch of an entity: `passes` sweeps over its working set (LWFG §4.1.1: every
//!      line touched and written once per sweep). The first sweep finds each line where it is
//!      now — own L1 (free), own L2 / shared cache, another core's cache at its distance (same
//!      LLC, same node, other node) or memory (the working set's home node, first touch) — at
//!      the per-line costs of `run.cache`. Later sweeps find the lines at the innermost own
//!      level big enough to hold the whole working set (a cyclic sweep over more lines than an
//!      LRU cache holds hits nothing there: thrashing), or at the sharer's caches while a
//!      memory sharer runs on a CPU not sharing that level (coherence ping-pong);
//!    - later dispatches (resumes): the refill — one sweep from the state found now, less what
//!      that sweep would have cost had nothing happened (the steady sweep on its last CPU).
//!      A migration to a CPU not sharing the cache falls out of this: the lines are found in
//!      the old CPU's caches at their distance.
//! 3. State: a sweep writes every line (the paper's sharers write their whole WSS), so valid
//!    copies of a working set live only on the path (L1 → LLC) of the CPU that wrote it last;
//!    copies elsewhere are invalidated. Each cache instance holds up to its capacity; room is
//!    made by evicting the least recently used working sets (whole working sets ordered by last
//!    use, partially).
//!
//! Integer arithmetic throughout: per-line costs in picoseconds, one dispatch's sum rounded up
//! to whole ns. Every table is sized at construction; `dispatch` allocates nothing (the
//! per-entity table grows with the ledger's entity slots, like the ledger's own).

use crate::cost::CostModel;
use rtsched_model::results::{CacheTotals, JobRecord};
use rtsched_model::topology::{Cache, CacheKind, Topology};
use rtsched_model::{TaskSet, Time};
use rtsched_policies::EntityInfo;

const NONE: u32 = u32::MAX;
/// Data cache levels on one CPU's path at most.
pub const MAX_LEVELS: usize = 6;
/// Where a line is found, nearest first: positions `0..MAX_LEVELS` on the CPU's own path, then
/// another CPU's cache under the same LLC, on the same node, on another node, then memory.
const T_SAME_LLC: usize = MAX_LEVELS;
const T_SAME_NODE: usize = MAX_LEVELS + 1;
const T_OTHER_NODE: usize = MAX_LEVELS + 2;
const T_MEMORY: usize = MAX_LEVELS + 3;
const TIERS: usize = MAX_LEVELS + 4;
/// Miss bits of a tier: missed L1, missed L2, missed the LLC (the whole own path).
const MISS_L1: u8 = 1;
const MISS_L2: u8 = 2;
const MISS_LLC: u8 = 4;
/// Largest working set the model takes (the memory part stays far from overflowing time).
pub const MAX_WSS: u64 = 1 << 40;
/// A stall is clamped here so that time arithmetic cannot overflow.
const MAX_STALL: Time = 1 << 62;

/// The topology the model assumes when the task file gives none: each CPU a private 32 KiB
/// 8-way L1-D and 1 MiB 16-way L2, one 16-way LLC shared by all CPUs with 2 MiB per CPU,
/// 64-byte lines, one NUMA node.
pub fn default_topology(cpus: u32) -> Topology {
    const KIB: u64 = 1024;
    let all: Vec<u32> = (0..cpus).collect();
    let mut caches = Vec::new();
    for c in 0..cpus {
        caches.push(Cache {
            level: 1,
            kind: CacheKind::Data,
            size: 32 * KIB,
            line: 64,
            ways: 8,
            cpus: vec![c],
        });
        caches.push(Cache {
            level: 2,
            kind: CacheKind::Unified,
            size: 1024 * KIB,
            line: 64,
            ways: 16,
            cpus: vec![c],
        });
    }
    caches.push(Cache {
        level: 3,
        kind: CacheKind::Unified,
        size: 2048 * KIB * cpus.max(1) as u64,
        line: 64,
        ways: 16,
        cpus: all,
    });
    Topology {
        preset: Some("default".into()),
        caches,
        nodes: Vec::new(),
    }
}

/// One cache instance.
#[derive(Clone, Debug)]
struct Inst {
    /// Capacity and occupancy, in lines.
    lines: u64,
    used: u64,
    /// The working sets it holds, a doubly linked list through them (`Ws::prev`/`next`):
    /// `head` least recently used, `tail` most. O(1) to move or drop one.
    head: u32,
    tail: u32,
}

/// One CPU: its path of data caches, innermost first, and what a line costs by where found.
#[derive(Clone, Copy, Debug)]
struct CpuPath {
    caches: [u32; MAX_LEVELS],
    len: usize,
    node: u32,
    /// Per tier: picoseconds per line (memory: local; remote memory is `remote_memory_ps`).
    cost: [u64; TIERS],
    miss: [u8; TIERS],
}

/// A working set: the CPU whose path holds its valid copies, how much each of those caches
/// holds (by position on that path) with its neighbours in that cache's LRU list (it is in the
/// list iff it holds lines there), its home node, and how many CPUs run one of its users.
#[derive(Clone, Copy, Debug)]
struct Ws {
    holder: u32,
    res: [u64; MAX_LEVELS],
    prev: [u32; MAX_LEVELS],
    next: [u32; MAX_LEVELS],
    home: u32,
    running: u32,
}

/// What an entity was last dispatched as (a slot reused by another entity differs) and where.
#[derive(Clone, Copy, Debug)]
struct EntState {
    task: u32,
    job: u64,
    region: u32,
    thread: u32,
    cpu: u32,
}

impl EntState {
    const EMPTY: EntState = EntState {
        task: NONE,
        job: 0,
        region: 0,
        thread: 0,
        cpu: NONE,
    };
}

/// The cache model of a task set (`run.cache`, `platform.topology`, tasks' `wss` and `group`).
#[derive(Clone, Debug)]
pub struct CacheModel {
    insts: Vec<Inst>,
    cpus: Vec<CpuPath>,
    /// `tier[cache * m + cpu]`: where a line held by `cache` is found from `cpu`.
    tier: Vec<u8>,
    ncpus: usize,
    /// Per task: its working set (NONE: no memory part) and its lines.
    task_ws: Vec<(u32, u64)>,
    ws: Vec<Ws>,
    ents: Vec<EntState>,
    /// Per CPU: the working set of the entity it runs (NONE: none, or one without).
    running: Vec<u32>,
    passes: u64,
    remote_memory_ps: u64,
    /// The misses of the last dispatch, for `count`.
    pending: [u64; 3],
    totals: CacheTotals,
}

impl CacheModel {
    /// The model of `ts`. Errors name the task set, then the task and field or the topology's
    /// cache and field.
    pub fn new(ts: &TaskSet) -> Result<CacheModel, String> {
        let m = ts.platform.cpus;
        let p = &ts.run.cache;
        let default;
        let topo = match &ts.platform.topology {
            Some(t) => t,
            None => {
                default = default_topology(m);
                &default
            }
        };
        topo.validate(m).map_err(|(i, field, msg)| match i {
            Some(i) => format!(
                "{}: platform.topology.caches[{i}]: field '{field}': {msg}",
                ts.source
            ),
            None => format!("{}: platform.topology: field '{field}': {msg}", ts.source),
        })?;
        let data: Vec<&Cache> = topo
            .caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction)
            .collect();
        // One line size for the whole model: the smallest (normally every cache's).
        let line = data.iter().map(|c| c.line).min().unwrap_or(64);
        let insts: Vec<Inst> = data
            .iter()
            .map(|c| Inst {
                lines: c.size / line,
                used: 0,
                head: NONE,
                tail: NONE,
            })
            .collect();
        let ncpus = m as usize;
        let mut cpus = Vec::with_capacity(ncpus);
        for c in 0..m {
            let mut on: Vec<usize> = (0..data.len())
                .filter(|&i| data[i].cpus.contains(&c))
                .collect();
            on.sort_by_key(|&i| (data[i].level, data[i].kind == CacheKind::Unified));
            if on.len() > MAX_LEVELS {
                return Err(format!("{}: platform.topology: CPU {c} has {} data caches; the cache model takes at most {MAX_LEVELS}", ts.source, on.len()));
            }
            let mut path = CpuPath {
                caches: [NONE; MAX_LEVELS],
                len: on.len(),
                node: topo.node_of(c),
                cost: [0; TIERS],
                miss: [MISS_L1 | MISS_L2 | MISS_LLC; TIERS],
            };
            for (k, &i) in on.iter().enumerate() {
                path.caches[k] = i as u32;
                let level = data[i].level;
                path.cost[k] = match level {
                    1 => 0,
                    2 => p.l2_ps,
                    _ => p.l3_ps,
                };
                path.miss[k] =
                    if level > 1 { MISS_L1 } else { 0 } | if level > 2 { MISS_L2 } else { 0 };
            }
            path.cost[T_SAME_LLC] = p.l3_ps;
            path.cost[T_SAME_NODE] = p.remote_cache_ps;
            path.cost[T_OTHER_NODE] = p.remote_node_ps;
            path.cost[T_MEMORY] = p.memory_ps;
            cpus.push(path);
        }
        // Where a line in cache `i` is found from CPU `c`: its own position, or by distance.
        // Built in O(caches × CPUs × sharers) with two CPU × CPU tables (it is paid per run).
        let mut under_llc = vec![false; ncpus * ncpus];
        for (c, path) in cpus.iter().enumerate() {
            if path.len > 0 {
                for &y in &data[path.caches[path.len - 1] as usize].cpus {
                    under_llc[c * ncpus + y as usize] = true;
                }
            }
        }
        let mut tier = vec![0u8; data.len() * ncpus];
        for (i, x) in data.iter().enumerate() {
            for (c, path) in cpus.iter().enumerate() {
                let own = (0..path.len).find(|&k| path.caches[k] as usize == i);
                tier[i * ncpus + c] = match own {
                    Some(k) => k,
                    None if x.cpus.iter().any(|&y| under_llc[c * ncpus + y as usize]) => T_SAME_LLC,
                    None if x.cpus.iter().any(|&y| cpus[y as usize].node == path.node) => {
                        T_SAME_NODE
                    }
                    None => T_OTHER_NODE,
                } as u8;
            }
        }
        // Working sets: one per group, one per ungrouped task; tasks without `wss` have none.
        let mut task_ws = Vec::with_capacity(ts.tasks.len());
        let mut groups: Vec<(u32, u32)> = Vec::new();
        let mut nws = 0u32;
        for t in &ts.tasks {
            let Some(bytes) = t.wss.filter(|&b| b > 0) else {
                task_ws.push((NONE, 0));
                continue;
            };
            if bytes > MAX_WSS {
                return Err(format!("{}: task '{}': field 'wss': {bytes} bytes is more than the cache model takes ({MAX_WSS} bytes, 1 TiB)", ts.source, t.name));
            }
            let w = match t.group {
                Some(g) => match groups.iter().find(|x| x.0 == g) {
                    Some(&(_, w)) => w,
                    None => {
                        groups.push((g, nws));
                        nws += 1;
                        nws - 1
                    }
                },
                None => {
                    nws += 1;
                    nws - 1
                }
            };
            task_ws.push((w, bytes.div_ceil(line)));
        }
        Ok(CacheModel {
            insts,
            cpus,
            tier,
            ncpus,
            task_ws,
            ws: vec![
                Ws {
                    holder: NONE,
                    res: [0; MAX_LEVELS],
                    prev: [NONE; MAX_LEVELS],
                    next: [NONE; MAX_LEVELS],
                    home: NONE,
                    running: 0
                };
                nws as usize
            ],
            ents: Vec::with_capacity(2 * ts.tasks.len() + ncpus),
            running: vec![NONE; ncpus],
            passes: p.passes.max(1) as u64,
            remote_memory_ps: p.remote_memory_ps,
            pending: [0; 3],
            totals: CacheTotals::default(),
        })
    }

    /// Per-line cost and miss bits of tier `t` from CPU `c` for working set `w`.
    #[inline]
    fn price(&self, c: usize, t: usize, w: usize) -> (u64, u8) {
        let p = &self.cpus[c];
        if t == T_MEMORY && self.ws[w].home != p.node {
            return (self.remote_memory_ps, p.miss[t]);
        }
        (p.cost[t], p.miss[t])
    }

    /// One sweep of `lines` lines of `w` from CPU `c`, from the state now: (ps, misses).
    #[inline]
    fn sweep(&self, c: usize, w: usize, lines: u64) -> (u128, [u64; 3]) {
        let ws = &self.ws[w];
        let mut best = [0u64; TIERS];
        if ws.holder != NONE {
            let h = &self.cpus[ws.holder as usize];
            for k in 0..h.len {
                let r = ws.res[k];
                if r == 0 {
                    continue;
                }
                let x = h.caches[k] as usize;
                let t = self.tier[x * self.ncpus + c] as usize;
                // An own cache smaller than the sweep is swept clean before its lines are
                // reached (LRU thrashing); another CPU's cache keeps what it holds.
                if t < MAX_LEVELS && self.insts[x].lines < lines {
                    continue;
                }
                best[t] = best[t].max(r.min(lines));
            }
        }
        // Each cache holds the most recently written part of a working set, so holdings nest:
        // what tiers up to `t` hold together is the largest of them.
        let (mut cum, mut ps, mut miss) = (0u64, 0u128, [0u64; 3]);
        for (t, &b) in best.iter().enumerate().take(T_MEMORY) {
            if b > cum {
                let n = b - cum;
                cum = b;
                let (cost, bits) = self.price(c, t, w);
                ps += n as u128 * cost as u128;
                add_misses(&mut miss, bits, n);
            }
        }
        let n = lines - cum;
        let (cost, bits) = self.price(c, T_MEMORY, w);
        ps += n as u128 * cost as u128;
        add_misses(&mut miss, bits, n);
        (ps, miss)
    }

    /// Where a repeated sweep of `lines` lines on CPU `c` finds them: the innermost own cache
    /// that holds them all, else memory.
    #[inline]
    fn steady_tier(&self, c: usize, lines: u64) -> usize {
        let p = &self.cpus[c];
        (0..p.len)
            .find(|&k| self.insts[p.caches[k] as usize].lines >= lines)
            .unwrap_or(T_MEMORY)
    }

    /// Where CPU `c` finds the lines CPU `d` (running a sharer) keeps writing: the nearest of
    /// `d`'s caches as seen from `c`.
    #[inline]
    fn pingpong_tier(&self, c: usize, d: usize, lines: u64) -> usize {
        let p = &self.cpus[d];
        let mut best = T_MEMORY;
        for k in 0..p.len {
            let x = p.caches[k] as usize;
            let t = self.tier[x * self.ncpus + c] as usize;
            if t < MAX_LEVELS && self.insts[x].lines < lines {
                continue;
            }
            best = best.min(t);
        }
        best
    }

    /// `c` has swept `w` (`lines` of it): it holds it on its path, up to each cache's
    /// capacity; copies off its path are invalidated; room is made by LRU eviction.
    fn fill(&mut self, c: usize, w: usize, lines: u64) {
        let holder = self.ws[w].holder;
        if holder as usize != c {
            let (mut res, mut prev, mut next) =
                ([0u64; MAX_LEVELS], [NONE; MAX_LEVELS], [NONE; MAX_LEVELS]);
            if holder != NONE {
                let h = self.cpus[holder as usize];
                for (k, &x) in h.caches[..h.len].iter().enumerate() {
                    let r = self.ws[w].res[k];
                    if r == 0 {
                        continue;
                    }
                    let x = x as usize;
                    let t = self.tier[x * self.ncpus + c] as usize;
                    if t < MAX_LEVELS {
                        // A cache both paths share keeps its copy, and its place in the list.
                        res[t] = r;
                        prev[t] = self.ws[w].prev[k];
                        next[t] = self.ws[w].next[k];
                    } else {
                        self.totals.invalidations += r;
                        self.insts[x].used -= r;
                        self.unlink(x, w as u32, k);
                    }
                }
            }
            // From here the neighbours find `w`'s links at its positions on `c`'s path.
            let ws = &mut self.ws[w];
            (ws.res, ws.prev, ws.next) = (res, prev, next);
            ws.holder = c as u32;
        }
        for k in 0..self.cpus[c].len {
            let x = self.cpus[c].caches[k] as usize;
            let target = lines.min(self.insts[x].lines);
            let r = self.ws[w].res[k];
            if target > r {
                let need = target - r;
                let free = self.insts[x].lines - self.insts[x].used;
                if need > free {
                    self.evict(x, need - free, w as u32);
                }
                self.insts[x].used += need;
                self.ws[w].res[k] = target;
            }
            // Most recently used last; already there when the same working set runs again.
            if self.insts[x].tail != w as u32 {
                if r > 0 {
                    self.unlink(x, w as u32, k);
                }
                self.push_back(x, w as u32, k);
            }
        }
    }

    /// The position of cache `x` on the path of `v`'s holder (`x` holds some of `v`).
    #[inline]
    fn pos(&self, x: usize, v: u32) -> usize {
        let k = self.tier[x * self.ncpus + self.ws[v as usize].holder as usize] as usize;
        debug_assert!(
            k < MAX_LEVELS,
            "a cache holds only working sets of its holders' paths"
        );
        k
    }

    /// Take `v` (at position `k` of its holder's path) out of cache `x`'s LRU list.
    #[inline]
    fn unlink(&mut self, x: usize, v: u32, k: usize) {
        let (p, n) = (self.ws[v as usize].prev[k], self.ws[v as usize].next[k]);
        if p == NONE {
            self.insts[x].head = n;
        } else {
            let kp = self.pos(x, p);
            self.ws[p as usize].next[kp] = n;
        }
        if n == NONE {
            self.insts[x].tail = p;
        } else {
            let kn = self.pos(x, n);
            self.ws[n as usize].prev[kn] = p;
        }
        self.ws[v as usize].prev[k] = NONE;
        self.ws[v as usize].next[k] = NONE;
    }

    /// Put `v` (at position `k` of its holder's path) at the most recently used end of `x`'s list.
    #[inline]
    fn push_back(&mut self, x: usize, v: u32, k: usize) {
        let t = self.insts[x].tail;
        self.ws[v as usize].prev[k] = t;
        self.ws[v as usize].next[k] = NONE;
        if t == NONE {
            self.insts[x].head = v;
        } else {
            let kt = self.pos(x, t);
            self.ws[t as usize].next[kt] = v;
        }
        self.insts[x].tail = v;
    }

    /// Free `need` lines of cache `x` from its least recently used working sets other than
    /// `keep` (they hold at least that much: `keep` fits).
    fn evict(&mut self, x: usize, mut need: u64, keep: u32) {
        let mut v = self.insts[x].head;
        while need > 0 && v != NONE {
            let k = self.pos(x, v);
            let next = self.ws[v as usize].next[k];
            if v != keep {
                let r = &mut self.ws[v as usize].res[k];
                let take = need.min(*r);
                *r -= take;
                need -= take;
                self.insts[x].used -= take;
                self.totals.evictions += take;
                if self.ws[v as usize].res[k] == 0 {
                    self.unlink(x, v, k);
                }
            }
            v = next;
        }
        debug_assert_eq!(need, 0, "cache {x}: not enough lines to evict");
    }

    /// Debug builds: every cache's list holds exactly the working sets with lines in it, in
    /// consistent order both ways, and its occupancy is their sum, within its capacity.
    #[cfg(debug_assertions)]
    fn check(&self) {
        for (x, inst) in self.insts.iter().enumerate() {
            let (mut sum, mut n, mut prev, mut v) = (0, 0, NONE, inst.head);
            while v != NONE {
                let k = self.pos(x, v);
                let ws = &self.ws[v as usize];
                assert!(
                    ws.res[k] > 0 && ws.prev[k] == prev,
                    "cache {x}: working set {v} listed wrongly"
                );
                sum += ws.res[k];
                n += 1;
                (prev, v) = (v, ws.next[k]);
            }
            assert_eq!((inst.tail, sum), (prev, inst.used), "cache {x}");
            assert!(inst.used <= inst.lines, "cache {x} over capacity");
            let holding = self
                .ws
                .iter()
                .filter(|w| {
                    w.holder != NONE
                        && self.tier[x * self.ncpus + w.holder as usize] < MAX_LEVELS as u8
                        && w.res[self.tier[x * self.ncpus + w.holder as usize] as usize] > 0
                })
                .count();
            assert_eq!(
                n, holding,
                "cache {x}: a working set holding lines is not listed"
            );
        }
    }

    #[inline]
    fn set_running(&mut self, cpu: usize, w: u32) {
        let old = std::mem::replace(&mut self.running[cpu], w);
        if old != NONE {
            self.ws[old as usize].running -= 1;
        }
        if w != NONE {
            self.ws[w as usize].running += 1;
        }
    }
}

#[inline]
fn add_misses(miss: &mut [u64; 3], bits: u8, n: u64) {
    for (l, m) in miss.iter_mut().enumerate() {
        if bits & (1 << l) != 0 {
            *m += n;
        }
    }
}

impl CostModel for CacheModel {
    fn dispatch(
        &mut self,
        _now: Time,
        cpu: u32,
        e: &EntityInfo,
        _switched: bool,
        _migrated: bool,
        _rec: Option<&JobRecord>,
    ) -> Time {
        self.pending = [0; 3];
        let c = cpu as usize;
        let (w, lines) = self.task_ws[e.task as usize];
        self.set_running(c, w);
        if w == NONE {
            return 0;
        }
        let w = w as usize;
        if self.ws[w].home == NONE {
            self.ws[w].home = self.cpus[c].node; // first touch
        }
        let id = e.id as usize;
        if id >= self.ents.len() {
            self.ents.resize(id + 1, EntState::EMPTY);
        }
        let st = self.ents[id];
        let first = (st.task, st.job, st.region, st.thread) != (e.task, e.job, e.region, e.thread);
        let (mut ps, mut miss) = self.sweep(c, w, lines);
        if first {
            self.ents[id] = EntState {
                task: e.task,
                job: e.job,
                region: e.region,
                thread: e.thread,
                cpu,
            };
            self.totals.accesses += lines * self.passes;
            if self.passes > 1 {
                let mut t = self.steady_tier(c, lines);
                let steady = t;
                if self.ws[w].running > 1 {
                    for d in 0..self.ncpus {
                        if d != c && self.running[d] == w as u32 {
                            t = t.max(self.pingpong_tier(c, d, lines));
                        }
                    }
                }
                let more = self.passes - 1;
                if t > steady {
                    self.totals.invalidations += lines * more;
                }
                let (cost, bits) = self.price(c, t, w);
                ps += (lines * more) as u128 * cost as u128;
                add_misses(&mut miss, bits, lines * more);
            }
        } else {
            // The refill: this sweep less the steady sweep it would have made uninterrupted.
            let last = if st.cpu == NONE { c } else { st.cpu as usize };
            let (cost, bits) = self.price(last, self.steady_tier(last, lines), w);
            ps = ps.saturating_sub(lines as u128 * cost as u128);
            let mut base = [0u64; 3];
            add_misses(&mut base, bits, lines);
            for (m, b) in miss.iter_mut().zip(base) {
                *m = m.saturating_sub(b);
            }
            self.ents[id].cpu = cpu;
            self.totals.accesses += miss[0];
        }
        self.fill(c, w, lines);
        #[cfg(debug_assertions)]
        self.check();
        for (t, m) in self.totals.misses.iter_mut().zip(miss) {
            *t += m;
        }
        self.pending = miss;
        (ps.div_ceil(1000)).min(MAX_STALL as u128) as Time
    }

    #[inline]
    fn count(&mut self, _e: &EntityInfo, rec: &mut JobRecord) {
        for (r, m) in rec.misses.iter_mut().zip(self.pending) {
            *r += m;
        }
    }

    #[inline]
    fn off_cpu(&mut self, _now: Time, cpu: u32, _e: &EntityInfo) {
        self.set_running(cpu as usize, NONE);
    }

    // `work` and `time_for`: the trait's defaults (memory time is charged as a stall at
    // dispatch, so work proceeds at one ns per ns once the entity runs).

    fn finish(&mut self, totals: &mut CacheTotals) {
        *totals = self.totals.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_topology_is_valid_and_as_documented() {
        for m in [1, 2, 7] {
            let t = default_topology(m);
            t.validate(m).unwrap();
            assert_eq!(t.llc(0).unwrap().size, 2048 * 1024 * m as u64);
            assert_eq!(t.shared_level(0, m - 1), Some(if m == 1 { 1 } else { 3 }));
        }
    }
}
