// SPDX-License-Identifier: GPL-2.0
/*
 * rtsched's sched_ext scheduler: real-time tasks scheduled by their declared timing.
 *
 * A thread joins by registration (ChronOS's begin_rt_seg, without a syscall patch): user
 * space writes its period, relative deadline, WCET and the absolute deadline of its current
 * job into a slot of the mmap-able array `slots` and maps its tid to the slot in `tid_slot`
 * (crates/linux/src/scx.rs). At the end of a job it writes the next job's deadline before it
 * sleeps until that release, so the wake-up that starts a job already carries its deadline.
 * Threads that are not registered run in a lower fair queue (weighted virtual time, as
 * scx_simple) so the system stays usable.
 *
 * Modes (cfg.mode):
 *  - G-EDF (gedf-heap-linux.txt §3): one global DSQ ordered by absolute deadline; every CPU
 *    dispatches its earliest job. A woken job goes to an idle CPU first, else it preempts the
 *    CPU that runs the latest deadline if that is later than its own. The latest-deadline CPU
 *    comes from `cpudl`: a max-heap of the deadlines the CPUs run plus a mask of the CPUs that
 *    run no real-time job (idle or fair) -- the cpudl structure of the paper, under one BPF
 *    spin lock. `cfg.linear` replaces it by a scan of every CPU's running deadline (the
 *    paper's baseline), for comparison.
 *  - P-EDF: one DSQ per CPU ordered by absolute deadline; a task's slot names its CPU (from an
 *    rtsched partition) and its thread is pinned there. A woken job preempts its CPU if the
 *    CPU runs a later deadline or no real-time job.
 *  - User space decides (in the pattern of scx_rustland): registered threads wait in USER_DSQ;
 *    a decider in user space (any rtsched policy over the job ledger) writes the thread each
 *    CPU must run into `choice` and kicks the CPU through the syscall program rtsched_kick;
 *    dispatch() moves that thread from USER_DSQ to the CPU. BPF decides nothing here.
 *
 * Watchdog: registered jobs run with an infinite slice, so a saturated system would starve
 * the fair queue until sched_ext's watchdog ejects the scheduler. A CPU that finds the fair
 * queue unserved for cfg.fair_starve_ns (default 1 s) gives it one fair slice of 2 ms (RT
 * throttling's idea for SCHED_FIFO, at a smaller share); tick() ends the running job's slice
 * to get there, and that job goes back to its queue without preempting another CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define MAX_CPUS 64 /* cpudl's free mask is one u64 */
#define MAX_SLOTS 256
#define EDF_DSQ 1
#define FAIR_DSQ 2
#define PCPU_DSQ 16 /* P-EDF: DSQ PCPU_DSQ + cpu */
#define NO_RT ((u64)-1) /* running deadline of a CPU that runs no real-time job */

enum { MODE_GEDF = 0, MODE_PEDF = 1, MODE_USER = 2 };
#define USER_DSQ 3
#define BOOST_DSQ 4 /* user-space mode: threads in the decider's critical section */
/* User-space mode: a chosen thread's slice. It bounds how long a decision can wait when the
 * kick cannot reach the CPU (the decider kicking its own CPU); a thread still chosen at the
 * end of its slice is dispatched again at once. */
#define USER_SLICE_NS 1000000

/* Set by the loader in .rodata before load (struct Config in crates/scx/src/lib.rs). */
const volatile struct {
	u32 mode;
	u32 linear;
	u32 nr_cpus;
	u32 pad;
	u64 fair_slice_ns;
	u64 fair_starve_ns;
} cfg = { .mode = MODE_GEDF, .nr_cpus = 1, .fair_slice_ns = 2000000, .fair_starve_ns = 1000000000 };

/* One registered thread; shared with user space (struct Slot in crates/linux/src/scx.rs). */
struct rt_slot {
	u32 tid;
	s32 cpu;	  /* P-EDF partition CPU, -1 if global */
	u64 period;	  /* relative, ns */
	u64 deadline;	  /* relative, ns */
	u64 wcet;	  /* ns */
	u64 abs_deadline; /* of the current or next job, CLOCK_MONOTONIC ns */
	u64 job;	  /* job number (written by user space) */
	u64 runs;	  /* times it was put on a CPU (BPF) */
	u64 kicks;	  /* times its wake-up kicked a CPU to preempt (BPF) */
	s64 user_cpu;	  /* user-space mode: the CPU the decider chose for it, -1 none */
	u64 critical;	  /* user-space mode: > 0 while it waits for or holds the decider's lock */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, u32);
	__type(value, struct rt_slot);
	__uint(max_entries, MAX_SLOTS);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u32);   /* tid */
	__type(value, u32); /* slot */
	__uint(max_entries, MAX_SLOTS);
} tid_slot SEC(".maps");

/* Registered threads whose slice tick() ended for the fair queue (by tid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u32);
	__type(value, u8);
	__uint(max_entries, MAX_SLOTS);
} rescued SEC(".maps");

/* User-space mode: the tid each CPU must run (0: none, run the fair queue). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, MAX_CPUS);
} choice SEC(".maps");

/* Counters read by the loader at exit (enum Stat in crates/scx/src/lib.rs). */
enum {
	ST_RT_ENQ, ST_FAIR_ENQ, ST_RT_DISPATCH, ST_FAIR_DISPATCH, ST_KICK_IDLE, ST_KICK_PREEMPT,
	ST_NO_TARGET, ST_FAIR_RESCUE, ST_HEAP_FIND, ST_SCAN_FIND, ST_USER_KICK, ST_USER_MISS, ST_USER_MOVE_FAIL, ST_USER_BOOST, ST_USER_UNCHOSEN, ST_MAX
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, ST_MAX);
} stats SEC(".maps");

/* Why the scheduler stopped (scx_exit_info), for the loader to print. */
struct exit_rec {
	s64 kind;
	s64 code;
	char reason[128];
	char msg[256];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct exit_rec);
	__uint(max_entries, 1);
} exit_info SEC(".maps");

/* Development aid (RTSCHED_BPF_TRACE=1 at build time): the user-space mode's kicks, wake-ups and
 * dispatches as bpf_printk lines in the kernel's trace buffer, beside sched_switch. */
#ifdef RTSCHED_TRACE
#define TRACE(...) bpf_printk(__VA_ARGS__)
#else
#define TRACE(...) do { } while (0)
#endif

static __always_inline void stat(u32 i)
{
	u64 *v = bpf_map_lookup_elem(&stats, &i);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/* cpudl: the latest deadline any CPU runs, and which CPU runs it, plus the mask of CPUs that run
 * no real-time job -- the paper's cpudl_find in O(1), cpudl_set in O(log m). The paper keeps a
 * binary max-heap in an array with a CPU-to-position index; here the heap is a heap-ordered
 * tournament tree with one fixed leaf per CPU (node k is the larger of nodes 2k and 2k+1,
 * node 1 the root), because its update is a fixed walk of log2(64) = 6 levels that the
 * verifier bounds cheaply, where the array heap's data-dependent sifting exceeded its
 * instruction budget. A CPU that runs no real-time job has deadline 0 in the tree and its bit
 * set in `free`. */
struct rt_cpudl {
	struct bpf_spin_lock lock;
	u64 free;
	u64 dl[2 * MAX_CPUS];
	u32 cpu[2 * MAX_CPUS];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct rt_cpudl);
	__uint(max_entries, 1);
} cpudl_map SEC(".maps");

/* Every CPU's running deadline (NO_RT when none): the linear scan's input and P-EDF's test. */
u64 running_dl[MAX_CPUS];
u64 vtime_now;		/* fair queue's virtual time */
u64 fair_served_at;	/* last time a CPU started a fair task */

/* An index masked where it is used, so the verifier sees it in bounds (a plain `&` is folded
 * away by the compiler when it thinks it knows better). */
static __always_inline u64 I(u64 x)
{
	asm volatile("%[x] &= %[m]" : [x] "+r"(x) : [m] "i"(MAX_CPUS - 1));
	return x;
}

static __always_inline u64 N(u64 x)
{
	asm volatile("%[x] &= %[m]" : [x] "+r"(x) : [m] "i"(2 * MAX_CPUS - 1));
	return x;
}

/* cpudl_set / cpudl_clear of the paper: the CPU now runs deadline `dl` (NO_RT: none). */
static __always_inline void cpudl_set(s32 cpu, u64 dl)
{
	u32 zero = 0;
	struct rt_cpudl *h = bpf_map_lookup_elem(&cpudl_map, &zero);
	if (!h || cpu < 0 || cpu >= MAX_CPUS)
		return;
	u64 k = MAX_CPUS + I(cpu);
	bpf_spin_lock(&h->lock);
	h->dl[N(k)] = dl == NO_RT ? 0 : dl;
	h->cpu[N(k)] = cpu;
	if (dl == NO_RT)
		h->free |= 1ULL << I(cpu);
	else
		h->free &= ~(1ULL << I(cpu));
	for (int n = 0; n < 6; n++) {
		k = N(k >> 1);
		u64 l = N(2 * k), r = N(2 * k + 1);
		u64 w = h->dl[l] >= h->dl[r] ? l : r;
		h->dl[N(k)] = h->dl[N(w)];
		h->cpu[N(k)] = h->cpu[N(w)];
	}
	bpf_spin_unlock(&h->lock);
}

/* cpudl_find: a CPU that runs no real-time job, else the CPU of the latest deadline if it is
 * later than `dl`; -1 if every CPU runs an earlier (or equal) deadline. */
static __always_inline s32 cpudl_find(u64 dl)
{
	u32 zero = 0;
	s32 cpu = -1;
	struct rt_cpudl *h = bpf_map_lookup_elem(&cpudl_map, &zero);
	if (!h)
		return -1;
	stat(ST_HEAP_FIND);
	bpf_spin_lock(&h->lock);
	u64 free = h->free;
	if (!free && h->dl[1] > dl)
		cpu = h->cpu[1];
	bpf_spin_unlock(&h->lock);
	if (free) {
		for (u32 c = 0; c < MAX_CPUS; c++)
			if (free & (1ULL << c))
				return c;
	}
	return cpu;
}

/* The paper's baseline: scan every CPU's running deadline. */
static __always_inline s32 scan_find(u64 dl)
{
	s32 best = -1;
	u64 latest = dl;
	stat(ST_SCAN_FIND);
	for (u32 c = 0; c < MAX_CPUS && c < cfg.nr_cpus; c++) {
		u64 d = running_dl[I(c)];
		if (d == NO_RT)
			return c;
		if (d > latest) {
			latest = d;
			best = c;
		}
	}
	return best;
}

/* A registered thread's slot. Registration takes effect when the thread switches to SCHED_EXT
 * (policy 7): until then it is fair, so that a thread between its registration and that switch
 * (it may hold the registry's lock) is never left waiting as a real-time thread. */
static __always_inline struct rt_slot *slot_of(struct task_struct *p)
{
	u32 tid = p->pid;
	if (p->policy != 7)
		return NULL;
	u32 *i = bpf_map_lookup_elem(&tid_slot, &tid);
	if (!i)
		return NULL;
	return bpf_map_lookup_elem(&slots, i);
}

static __always_inline bool fair_starving(void)
{
	return scx_bpf_dsq_nr_queued(FAIR_DSQ) > 0 && bpf_ktime_get_ns() - fair_served_at > cfg.fair_starve_ns;
}

static __always_inline void enqueue_fair(struct task_struct *p, u64 enq_flags)
{
	u64 vtime = p->scx.dsq_vtime;
	/* A sleeper gets at most one slice of credit. */
	if ((s64)(vtime - (vtime_now - cfg.fair_slice_ns)) < 0)
		vtime = vtime_now - cfg.fair_slice_ns;
	stat(ST_FAIR_ENQ);
	scx_bpf_dsq_insert_vtime(p, FAIR_DSQ, cfg.fair_slice_ns, vtime, enq_flags);
	s32 cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

SEC("struct_ops/rtsched_select_cpu")
s32 BPF_PROG(rtsched_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct rt_slot *s = slot_of(p);
	if (s) {
		/* enqueue() places real-time jobs; P-EDF threads are pinned to their CPU. */
		if (cfg.mode == MODE_PEDF && s->cpu >= 0)
			return s->cpu;
		return prev_cpu;
	}
	bool idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);
	if (idle && !scx_bpf_dsq_nr_queued(EDF_DSQ))
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.fair_slice_ns, 0);
	return cpu;
}

SEC("struct_ops/rtsched_enqueue")
void BPF_PROG(rtsched_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct rt_slot *s = slot_of(p);
	if (!s) {
		enqueue_fair(p, enq_flags);
		return;
	}
	u64 dl = s->abs_deadline;
	s32 cpu;
	stat(ST_RT_ENQ);
	if (cfg.mode == MODE_USER) {
		/* Wait for the decider; if it already chose a CPU for this thread, that CPU may
		 * have looked for it before it woke: have it look again. */
		s64 c = s->user_cpu;
		if (s->critical) {
			/* It holds (or waits for) the lock the decider needs: run it anywhere, first. */
			stat(ST_USER_BOOST);
			scx_bpf_dsq_insert(p, BOOST_DSQ, USER_SLICE_NS, enq_flags);
			c = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
			if (c >= 0)
				scx_bpf_kick_cpu(c, SCX_KICK_IDLE);
			return;
		}
		TRACE("rtsched enq %d chosen-for %lld", p->pid, c);
		if (c < 0 || c >= MAX_CPUS || c >= cfg.nr_cpus) {
			/* Chosen for no CPU: it runs only to learn that and sleep again (a lane
			 * woken to give its CPU up, or preempted and not chosen again). In USER_DSQ,
			 * which only choices empty, it would stay runnable until the watchdog ejects
			 * the scheduler; it waits with the fair tasks instead (dispatch_choice looks
			 * there too, should it be chosen meanwhile). */
			stat(ST_USER_UNCHOSEN);
			enqueue_fair(p, enq_flags);
			return;
		}
		scx_bpf_dsq_insert(p, USER_DSQ, USER_SLICE_NS, enq_flags);
		scx_bpf_kick_cpu(c, SCX_KICK_PREEMPT);
		return;
	}
	if (cfg.mode == MODE_PEDF && s->cpu >= 0 && s->cpu < MAX_CPUS) {
		cpu = s->cpu;
		scx_bpf_dsq_insert_vtime(p, PCPU_DSQ + cpu, SCX_SLICE_INF, dl, enq_flags);
		u32 tid = p->pid;
		if (bpf_map_delete_elem(&rescued, &tid) == 0)
			return;
		if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
			stat(ST_KICK_IDLE);
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		} else if (running_dl[I(cpu)] > dl) {
			stat(ST_KICK_PREEMPT);
			__sync_fetch_and_add(&s->kicks, 1);
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		}
		return;
	}
	scx_bpf_dsq_insert_vtime(p, EDF_DSQ, SCX_SLICE_INF, dl, enq_flags);
	u32 tid = p->pid;
	if (bpf_map_delete_elem(&rescued, &tid) == 0)
		return;
	/* An idle CPU first (claimed, so two wake-ups do not pick the same one) ... */
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		stat(ST_KICK_IDLE);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	/* ... else the CPU running the latest deadline, if later than this job's. */
	cpu = cfg.linear ? scan_find(dl) : cpudl_find(dl);
	if (cpu >= 0) {
		stat(ST_KICK_PREEMPT);
		__sync_fetch_and_add(&s->kicks, 1);
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	} else {
		stat(ST_NO_TARGET);
	}
}

/* User-space mode: move thread `tid` from `dsq` to this CPU, if it waits there. */
static __always_inline bool move_tid(u64 dsq, u32 tid)
{
	struct bpf_iter_scx_dsq it;
	struct task_struct *p;
	bool moved = false;
	if (bpf_iter_scx_dsq_new(&it, dsq, 0) == 0) {
		while ((p = bpf_iter_scx_dsq_next(&it))) {
			if (p->pid == tid) {
				/* With the slice of a chosen thread, wherever it waited. */
				scx_bpf_dsq_move_set_slice(&it, USER_SLICE_NS);
				moved = scx_bpf_dsq_move(&it, p, SCX_DSQ_LOCAL, 0);
				if (!moved)
					stat(ST_USER_MOVE_FAIL);
				break;
			}
		}
	}
	bpf_iter_scx_dsq_destroy(&it);
	return moved;
}

/* User-space mode: move the thread the decider chose for `cpu` from USER_DSQ to this CPU. */
static __always_inline bool dispatch_choice(s32 cpu)
{
	u32 k = I(cpu);
	u64 *want = bpf_map_lookup_elem(&choice, &k);
	bool moved;
	if (!want || !*want)
		return false;
	u32 tid = *want;
	moved = move_tid(USER_DSQ, tid);
	/* Chosen while it waited, unchosen, with the fair tasks. */
	if (!moved)
		moved = move_tid(FAIR_DSQ, tid);
	TRACE("rtsched dispatch cpu %d want %u moved %d", cpu, tid, moved);
	stat(moved ? ST_RT_DISPATCH : ST_USER_MISS);
	return moved;
}

/* User-space mode: the decider kicks a CPU whose choice changed (BPF_PROG_TEST_RUN). */
struct kick_args {
	s32 cpu;
	u32 pad;
};

SEC("syscall")
int rtsched_kick(struct kick_args *a)
{
	s32 cpu = a->cpu;
	if (cpu < 0 || cpu >= MAX_CPUS || cpu >= cfg.nr_cpus)
		return -22;
	stat(ST_USER_KICK);
#ifdef RTSCHED_TRACE
	{
		u32 k = I(cpu);
		u64 *w = bpf_map_lookup_elem(&choice, &k);
		TRACE("rtsched kick %d choice %llu", cpu, w ? *w : 0);
	}
#endif
	/* A kick of the calling CPU (the decider's own) does nothing: the thread the decider
	 * displaced there resumes when it sleeps, and gives its CPU up at the end of its slice
	 * (USER_SLICE_NS), when dispatch() runs the choice. */
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return 0;
}

SEC("struct_ops/rtsched_dispatch")
void BPF_PROG(rtsched_dispatch, s32 cpu, struct task_struct *prev)
{
	if (fair_starving() && scx_bpf_dsq_move_to_local(FAIR_DSQ)) {
		stat(ST_FAIR_RESCUE);
		stat(ST_FAIR_DISPATCH);
		return;
	}
	if (cfg.mode == MODE_USER) {
		if (scx_bpf_dsq_move_to_local(BOOST_DSQ))
			return;
		if (dispatch_choice(cpu))
			return;
		if (scx_bpf_dsq_move_to_local(FAIR_DSQ))
			stat(ST_FAIR_DISPATCH);
		return;
	}
	u64 dsq = cfg.mode == MODE_PEDF ? PCPU_DSQ + (u64)cpu : EDF_DSQ;
	if (scx_bpf_dsq_move_to_local(dsq)) {
		stat(ST_RT_DISPATCH);
		return;
	}
	if (scx_bpf_dsq_move_to_local(FAIR_DSQ))
		stat(ST_FAIR_DISPATCH);
}

SEC("struct_ops/rtsched_running")
void BPF_PROG(rtsched_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct rt_slot *s = slot_of(p);
	u64 dl = NO_RT;
	if (s) {
		dl = s->abs_deadline;
		__sync_fetch_and_add(&s->runs, 1);
	} else {
		fair_served_at = bpf_ktime_get_ns();
		if ((s64)(p->scx.dsq_vtime - vtime_now) > 0)
			vtime_now = p->scx.dsq_vtime;
	}
	if (cpu >= 0 && cpu < MAX_CPUS)
		running_dl[I(cpu)] = dl;
	if (cfg.mode == MODE_GEDF && !cfg.linear)
		cpudl_set(cpu, dl);
}

SEC("struct_ops/rtsched_stopping")
void BPF_PROG(rtsched_stopping, struct task_struct *p, bool runnable)
{
	if (slot_of(p))
		return;
	/* Fair tasks pay for the slice they used, inversely to their weight. */
	p->scx.dsq_vtime += (cfg.fair_slice_ns - p->scx.slice) * 100 / p->scx.weight;
}

SEC("struct_ops/rtsched_tick")
void BPF_PROG(rtsched_tick, struct task_struct *p)
{
	/* A real-time job has an infinite slice: end it if the fair queue starves. Its
	 * enqueue() then only queues it (it must not preempt another CPU: it gave its own up). */
	if (p->scx.slice == SCX_SLICE_INF && fair_starving()) {
		u32 tid = p->pid;
		u8 one = 1;
		bpf_map_update_elem(&rescued, &tid, &one, BPF_ANY);
		p->scx.slice = 0;
	}
}

SEC("struct_ops/rtsched_update_idle")
void BPF_PROG(rtsched_update_idle, s32 cpu, bool idle)
{
	if (!idle || cpu < 0 || cpu >= MAX_CPUS)
		return;
	running_dl[I(cpu)] = NO_RT;
	if (cfg.mode == MODE_GEDF && !cfg.linear)
		cpudl_set(cpu, NO_RT);
}

SEC("struct_ops/rtsched_enable")
void BPF_PROG(rtsched_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

SEC("struct_ops.s/rtsched_init")
s32 BPF_PROG(rtsched_init)
{
	u32 zero = 0;
	struct rt_cpudl *h = bpf_map_lookup_elem(&cpudl_map, &zero);
	s32 err;
	if (!h)
		return -22;
	bpf_spin_lock(&h->lock);
	h->free = 0;
	for (u32 c = 0; c < MAX_CPUS; c++)
		if (c < cfg.nr_cpus)
			h->free |= 1ULL << c;
	bpf_spin_unlock(&h->lock);
	for (u32 c = 0; c < MAX_CPUS; c++)
		running_dl[c] = NO_RT;
	fair_served_at = bpf_ktime_get_ns();
	err = scx_bpf_create_dsq(EDF_DSQ, -1);
	if (err)
		return err;
	err = scx_bpf_create_dsq(FAIR_DSQ, -1);
	if (err)
		return err;
	err = scx_bpf_create_dsq(USER_DSQ, -1);
	if (err)
		return err;
	err = scx_bpf_create_dsq(BOOST_DSQ, -1);
	if (err)
		return err;
	for (u32 c = 0; c < MAX_CPUS && c < cfg.nr_cpus; c++) {
		err = scx_bpf_create_dsq(PCPU_DSQ + c, -1);
		if (err)
			return err;
	}
	return 0;
}

SEC("struct_ops/rtsched_exit")
void BPF_PROG(rtsched_exit, struct scx_exit_info *ei)
{
	u32 zero = 0;
	struct exit_rec *e = bpf_map_lookup_elem(&exit_info, &zero);
	if (!e)
		return;
	e->kind = ei->kind;
	e->code = ei->exit_code;
	bpf_probe_read_kernel_str(e->reason, sizeof(e->reason), ei->reason);
	bpf_probe_read_kernel_str(e->msg, sizeof(e->msg), ei->msg);
}

SEC(".struct_ops.link")
struct sched_ext_ops rtsched_ops = {
	.select_cpu = (void *)rtsched_select_cpu,
	.enqueue = (void *)rtsched_enqueue,
	.dispatch = (void *)rtsched_dispatch,
	.running = (void *)rtsched_running,
	.stopping = (void *)rtsched_stopping,
	.tick = (void *)rtsched_tick,
	.update_idle = (void *)rtsched_update_idle,
	.enable = (void *)rtsched_enable,
	.init = (void *)rtsched_init,
	.exit = (void *)rtsched_exit,
	.flags = SCX_OPS_KEEP_BUILTIN_IDLE,
	.timeout_ms = 10000,
	.name = "rtsched",
};
