// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_stress: a timed stress of rslub from every context at once.
 *
 * Several caches of random geometry (size, align, SLAB_HWCACHE_ALIGN, some
 * with a constructor) are hammered for `duration` seconds by:
 *   - one kthread per possible CPU, each soft-pinned to its home CPU (or any
 *     online CPU) with set_cpus_allowed_ptr() before every round. They are
 *     not kthread_bind()-bound: when their CPU goes offline the scheduler
 *     moves them, and they re-pin at the next round;
 *   - one hrtimer per worker (hard irq on !PREEMPT_RT: HRTIMER_MODE_REL, not
 *     _HARD, whose callbacks may not take spinlock_t, like in-tree kmalloc);
 *   - one timer_list per worker (softirq);
 *   all allocating and freeing, single and bulk, GFP_KERNEL/NOWAIT/ATOMIC,
 *   with and without a node, and handing objects to each other through a
 *   locked exchange ring, so that objects allocated on one CPU are freed on
 *   another;
 *   - a tuner kthread: rslub_cache_shrink() and rslub_cache_set() of
 *     cpu_partial, min_partial, max_empty, random_freelist on the live
 *     caches;
 *   - a hotplug kthread: remove_cpu()/add_cpu() of a random CPU other than
 *     CPU 0 every `hotplug_ms` (on average).
 *
 * Every object carries a checksum: its first word is a tag (random bits, the
 * allocating CPU, the cache index), the rest a pseudo-random stream seeded by
 * the tag and the object's address. It is written at allocation and checked
 * at free. Constructor caches are also checked at allocation for the
 * constructed state, and restored to it before free. __GFP_ZERO allocations
 * are checked for zeroes.
 *
 * With faults=1 the worker and tuner kthreads mark themselves for the
 * kernel's fault injection (task->make_it_fail; scripts/guest-oom.sh sets
 * failslab and fail_page_alloc to fail a share of such tasks' requests):
 * then a NULL from any allocation, and false from alloc_bulk, is expected
 * and counted, and at least one must be seen; everything else is judged
 * the same. The tuner also turns random_freelist on, whose index sequence
 * is allocated then, and makes and destroys a scratch cache (-ENOMEM is
 * expected from both, anything else fails the run).
 *
 * The contexts only count; the init thread collects and judges: 0 checksum
 * failures, 0 `errors` in any cache, `validate` clean at the end, no
 * GFP_KERNEL allocation failure (without faults=1), every context ran in
 * the context it claims, every cache destroys with 0 live objects, and
 * rslub_pages_allocated() is back where it started (not compared with
 * serving=1: kernel caches rslub serves meanwhile hold pages too). The last
 * line is "rslub_stress: PASS ..." (init returns 0: the module stays loaded,
 * idle, until removed) or "rslub_stress: FAIL <why>" (init returns -EIO).
 */
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/topology.h>

#include "rslub.h"

static unsigned int duration = 60;
module_param(duration, uint, 0444);
MODULE_PARM_DESC(duration, "seconds of stress (default 60)");

static unsigned int ncaches = 6;
module_param(ncaches, uint, 0444);
MODULE_PARM_DESC(ncaches, "number of caches (1..8)");

static unsigned int hotplug_ms = 300;
module_param(hotplug_ms, uint, 0444);
MODULE_PARM_DESC(hotplug_ms, "mean ms between CPU offline/online steps (0: no hotplug)");

static unsigned long long seed;
module_param(seed, ullong, 0444);
MODULE_PARM_DESC(seed, "random seed (0: pick one; printed)");

static unsigned int inject;
module_param(inject, uint, 0444);
MODULE_PARM_DESC(inject, "self-test of the judge: 1 corrupts a held object, 2 leaks one (both must FAIL)");

static bool faults;
module_param(faults, bool, 0444);
MODULE_PARM_DESC(faults, "mark the kthreads for fault injection: NULLs are expected and counted");

static bool serving;
module_param(serving, bool, 0444);
MODULE_PARM_DESC(serving, "rslub serves kernel caches meanwhile (make stress SERVE=1): their pages come and go with the programs, so rslub_pages_allocated() is not compared; every cache of this module must still destroy empty");

#define MAX_CACHES	8
#define MAX_WORKERS	64
#define WORKER_HOLD	256	/* objects a worker holds at most */
#define TIMER_HOLD	32	/* objects a timer holds at most */
#define ROUND_OPS	256	/* worker operations between re-pinning */
#define BULK_MAX	32
#define XCHG_SLOTS	1024
#define REPORTS_MAX	5	/* detailed checksum reports */

enum ctx { CTX_THREAD, CTX_HARDIRQ, CTX_SOFTIRQ, NR_CTX };
static const char *const ctx_name[NR_CTX] = { "thread", "hardirq", "softirq" };

struct scache {
	struct rslub_cache *s;
	char name[32];
	unsigned int idx, size, align, min_align;
	bool hwcache, ctor;
};

/* Counters of one context instance; only its owner writes them. */
struct stats {
	unsigned long allocs, frees, bulk_allocs, bulk_frees;
	unsigned long atomic_fail, kernel_fail;	/* NULL from GFP_ATOMIC/NOWAIT, GFP_KERNEL */
	unsigned long bulk_fail;		/* alloc_bulk returned false */
	unsigned long verified, bad_sum, bad_ctor, bad_zero, bad_align;
	unsigned long pushed, popped, remote_cpu, remote_node;
	unsigned long fires, wrong_ctx;
};

struct obj {
	void *p;
	unsigned int c;		/* cache index */
};

struct worker {
	unsigned int id, home;
	struct task_struct *task;
	struct completion done;
	u64 rng;
	struct stats st;
	struct obj held[WORKER_HOLD];
	void *bulk[BULK_MAX];

	struct hrtimer hrt;
	u64 hrt_rng;
	struct stats hrt_st;
	struct obj hrt_held[TIMER_HOLD];

	struct timer_list tl;
	u64 tl_rng;
	struct stats tl_st;
	struct obj tl_held[TIMER_HOLD];
};

static struct scache caches[MAX_CACHES];
static struct worker *workers;
static unsigned int nr_workers;
static bool stop;

static DEFINE_SPINLOCK(xchg_lock);
static struct obj xchg_ring[XCHG_SLOTS];
static unsigned int xchg_head, xchg_count;

static DEFINE_PER_CPU(unsigned long, ops_on_cpu);
static atomic_t reports = ATOMIC_INIT(0);
static atomic_long_t ctor_calls = ATOMIC_LONG_INIT(0);

/* Tuner and hotplug results. */
static struct {
	struct task_struct *task;
	struct completion done;
	unsigned long shrinks, sets, set_fail, set_nomem, reads, errors_seen;
	unsigned long creates, create_nomem;
	long peak_pages;
} tuner;

static struct {
	struct task_struct *task;
	struct completion done;
	unsigned long offline, online, refused, add_fail;
	int last_err;
	unsigned long offlined[BITS_TO_LONGS(NR_CPUS)];
} hp;

static u64 rnd(u64 *x)
{
	u64 v = *x;

	v ^= v << 13;
	v ^= v >> 7;
	v ^= v << 17;
	*x = v;
	return v;
}

static u32 rnd_below(u64 *x, u32 n)
{
	return (u32)((rnd(x) >> 32) % n);
}

/* Writes the stream from state x over p[0, len). */
static void fill(u8 *p, unsigned int len, u64 x)
{
	unsigned int i;
	u64 w;

	x |= 1;
	for (i = 0; i + 8 <= len; i += 8)
		*(u64 *)(p + i) = rnd(&x);
	if (i < len) {
		w = rnd(&x);
		memcpy(p + i, &w, len - i);
	}
}

/*
 * Checks p[0, len) against the stream from state x. Returns the offset of
 * the first differing byte, or -1; *want and *got are that byte.
 */
static int check(const u8 *p, unsigned int len, u64 x, u8 *want, u8 *got)
{
	unsigned int i, j;
	u64 w;

	x |= 1;
	for (i = 0; i < len; i += 8) {
		w = rnd(&x);
		for (j = 0; j < 8 && i + j < len; j++) {
			if (p[i + j] != ((u8 *)&w)[j]) {
				*want = ((u8 *)&w)[j];
				*got = p[i + j];
				return i + j;
			}
		}
	}
	return -1;
}

#define CTOR_KEY 0xc7057a11c7057a11ull
#define OBJ_KEY 0x9e3779b97f4a7c15ull

static u64 ctor_state(const struct scache *c, const void *p)
{
	return CTOR_KEY ^ c->idx ^ (unsigned long)p;
}

static void ctor_fill(unsigned int idx, void *p)
{
	atomic_long_inc(&ctor_calls);
	fill(p, caches[idx].size, ctor_state(&caches[idx], p));
}

static void ctor0(void *p) { ctor_fill(0, p); }
static void ctor1(void *p) { ctor_fill(1, p); }
static void ctor2(void *p) { ctor_fill(2, p); }
static void ctor3(void *p) { ctor_fill(3, p); }
static void ctor4(void *p) { ctor_fill(4, p); }
static void ctor5(void *p) { ctor_fill(5, p); }
static void ctor6(void *p) { ctor_fill(6, p); }
static void ctor7(void *p) { ctor_fill(7, p); }

static void (*const ctors[MAX_CACHES])(void *) = {
	ctor0, ctor1, ctor2, ctor3, ctor4, ctor5, ctor6, ctor7,
};

static void report(const struct scache *c, const void *p, const char *what,
		   int off, u8 want, u8 got, enum ctx ctx)
{
	if (atomic_inc_return(&reports) > REPORTS_MAX)
		return;
	pr_err("rslub_stress: %s failure: cache %s object %p (size %u) offset %d: expected %02x found %02x (%s, cpu %u)\n",
	       what, c->name, p, c->size, off, want, got, ctx_name[ctx],
	       raw_smp_processor_id());
	print_hex_dump(KERN_ERR, "rslub_stress: ", DUMP_PREFIX_OFFSET, 16, 1, p,
		       min(c->size, 64u), false);
}

/* Allocation-time checks and the checksum; false when p is NULL. */
static bool on_alloc(struct stats *st, struct scache *c, void *p, gfp_t gfp,
		     u64 *rng, enum ctx ctx)
{
	unsigned int cpu = raw_smp_processor_id();
	u8 want = 0, got = 0;
	u64 tag;
	int off;

	if (!p) {
		if (gfpflags_allow_blocking(gfp))
			st->kernel_fail++;
		else
			st->atomic_fail++;
		return false;
	}
	st->allocs++;
	this_cpu_inc(ops_on_cpu);
	if (!IS_ALIGNED((unsigned long)p, c->min_align)) {
		st->bad_align++;
		report(c, p, "alignment", 0, 0, 0, ctx);
	}
	if (c->ctor) {
		off = check(p, c->size, ctor_state(c, p), &want, &got);
		if (off >= 0) {
			st->bad_ctor++;
			report(c, p, "constructed-state", off, want, got, ctx);
		}
	} else if (gfp & __GFP_ZERO) {
		u8 *nz = memchr_inv(p, 0, c->size);

		if (nz) {
			st->bad_zero++;
			report(c, p, "__GFP_ZERO", nz - (u8 *)p, 0, *nz, ctx);
		}
	}
	tag = (rnd(rng) & ~0xffffffull) | ((u64)(cpu & 0xffff) << 8) | c->idx;
	*(u64 *)p = tag;
	fill((u8 *)p + 8, c->size - 8, tag ^ OBJ_KEY ^ (unsigned long)p);
	return true;
}

/* Verifies the checksum, counts where the object was allocated, and
 * restores the constructed state; the caller then frees p.
 */
static void on_free(struct stats *st, struct scache *c, void *p, enum ctx ctx)
{
	unsigned int cpu = raw_smp_processor_id(), from;
	u64 tag = *(u64 *)p;
	u8 want = 0, got = 0;
	int off;

	st->verified++;
	this_cpu_inc(ops_on_cpu);
	if ((tag & 0xff) != c->idx) {
		st->bad_sum++;
		report(c, p, "tag", 0, c->idx, tag & 0xff, ctx);
	} else {
		off = check((u8 *)p + 8, c->size - 8,
			    tag ^ OBJ_KEY ^ (unsigned long)p, &want, &got);
		if (off >= 0) {
			st->bad_sum++;
			report(c, p, "checksum", off + 8, want, got, ctx);
		}
	}
	from = (tag >> 8) & 0xffff;
	if (from != cpu) {
		st->remote_cpu++;
		if (from < nr_cpu_ids && cpu_to_node(from) != cpu_to_node(cpu))
			st->remote_node++;
	}
	if (c->ctor)
		fill(p, c->size, ctor_state(c, p));
}

static void free_one(struct stats *st, struct obj *o, enum ctx ctx)
{
	if (!o->p)
		return;
	on_free(st, &caches[o->c], o->p, ctx);
	rslub_cache_free(caches[o->c].s, o->p);
	st->frees++;
	o->p = NULL;
}

static gfp_t pick_gfp(u64 *rng, struct scache *c, enum ctx ctx)
{
	gfp_t gfp = ctx == CTX_THREAD ? GFP_KERNEL : GFP_ATOMIC;
	u32 r = rnd_below(rng, 16);

	if (ctx == CTX_THREAD && r == 0)
		gfp = GFP_NOWAIT;
	else if (ctx == CTX_THREAD && r == 1)
		gfp = GFP_ATOMIC;
	if (!c->ctor && r >= 13)
		gfp |= __GFP_ZERO;
	return gfp;
}

static void alloc_into(struct stats *st, struct obj *o, u64 *rng, enum ctx ctx)
{
	unsigned int ci = rnd_below(rng, ncaches);
	struct scache *c = &caches[ci];
	gfp_t gfp = pick_gfp(rng, c, ctx);
	void *p;
	int node;

	free_one(st, o, ctx);
	if (rnd_below(rng, 8) == 0) {
		node = (int)rnd_below(rng, nr_node_ids + 1) - 1;
		p = rslub_cache_alloc_node(c->s, gfp, node);
	} else {
		p = rslub_cache_alloc(c->s, gfp);
	}
	if (on_alloc(st, c, p, gfp, rng, ctx)) {
		o->p = p;
		o->c = ci;
	}
}

/* Hands o to whoever pops it next (likely on another CPU); frees it when full. */
static void push(struct stats *st, struct obj *o, enum ctx ctx)
{
	unsigned long flags;
	bool done = false;

	if (!o->p)
		return;
	spin_lock_irqsave(&xchg_lock, flags);
	if (xchg_count < XCHG_SLOTS) {
		xchg_ring[(xchg_head + xchg_count) % XCHG_SLOTS] = *o;
		xchg_count++;
		done = true;
	}
	spin_unlock_irqrestore(&xchg_lock, flags);
	if (done) {
		st->pushed++;
		o->p = NULL;
	} else {
		free_one(st, o, ctx);
	}
}

static bool pop(struct obj *o)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&xchg_lock, flags);
	if (xchg_count) {
		*o = xchg_ring[xchg_head];
		xchg_head = (xchg_head + 1) % XCHG_SLOTS;
		xchg_count--;
		got = true;
	}
	spin_unlock_irqrestore(&xchg_lock, flags);
	return got;
}

static void pop_and_free(struct stats *st, unsigned int n, enum ctx ctx)
{
	struct obj o;

	while (n-- && pop(&o)) {
		st->popped++;
		free_one(st, &o, ctx);
	}
}

/* One operation of a timer (hard irq or softirq) on its own objects. */
static void timer_op(struct stats *st, struct obj *held, u64 *rng, enum ctx ctx)
{
	struct obj *o = &held[rnd_below(rng, TIMER_HOLD)];
	u32 r = rnd_below(rng, 10);

	if (r < 4)
		alloc_into(st, o, rng, ctx);
	else if (r < 7)
		free_one(st, o, ctx);
	else if (r < 9)
		push(st, o, ctx);
	else
		pop_and_free(st, 2, ctx);
}

static enum hrtimer_restart hrt_fn(struct hrtimer *t)
{
	struct worker *w = container_of(t, struct worker, hrt);
	int i;

	w->hrt_st.fires++;
	if (!in_hardirq())
		w->hrt_st.wrong_ctx++;
	for (i = 0; i < 4; i++)
		timer_op(&w->hrt_st, w->hrt_held, &w->hrt_rng, CTX_HARDIRQ);
	if (READ_ONCE(stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((500 + rnd_below(&w->hrt_rng, 1000)) *
					   NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void tl_fn(struct timer_list *t)
{
	struct worker *w = timer_container_of(w, t, tl);
	int i;

	w->tl_st.fires++;
	if (!in_serving_softirq() || in_hardirq())
		w->tl_st.wrong_ctx++;
	for (i = 0; i < 8; i++)
		timer_op(&w->tl_st, w->tl_held, &w->tl_rng, CTX_SOFTIRQ);
	if (!READ_ONCE(stop))
		mod_timer(&w->tl, jiffies + 1);
}

static unsigned int pick_online_cpu(u64 *rng)
{
	unsigned int cpu = rnd_below(rng, nr_cpu_ids);

	return cpu_online(cpu) ? cpu : cpumask_any(cpu_online_mask);
}

/* Frees up to BULK_MAX held objects of one cache with one free_bulk. */
static void bulk_free_held(struct worker *w)
{
	unsigned int ci = rnd_below(&w->rng, ncaches), i, n = 0;

	for (i = 0; i < WORKER_HOLD && n < BULK_MAX; i++) {
		struct obj *o = &w->held[i];

		if (o->p && o->c == ci) {
			on_free(&w->st, &caches[ci], o->p, CTX_THREAD);
			w->bulk[n++] = o->p;
			o->p = NULL;
		}
	}
	if (n) {
		rslub_cache_free_bulk(caches[ci].s, n, w->bulk);
		w->st.bulk_frees += n;
		w->st.frees += n;
	}
}

/* alloc_bulk of 1..BULK_MAX objects; keeps some, frees the rest in bulk. */
static void bulk_alloc(struct worker *w)
{
	unsigned int ci = rnd_below(&w->rng, ncaches), i, n, keep;
	struct scache *c = &caches[ci];
	gfp_t gfp = pick_gfp(&w->rng, c, CTX_THREAD);

	n = 1 + rnd_below(&w->rng, BULK_MAX);
	if (!rslub_cache_alloc_bulk(c->s, gfp, n, w->bulk)) {
		w->st.bulk_fail++;
		on_alloc(&w->st, c, NULL, gfp, &w->rng, CTX_THREAD);
		return;
	}
	w->st.bulk_allocs += n;
	for (i = 0; i < n; i++)
		on_alloc(&w->st, c, w->bulk[i], gfp, &w->rng, CTX_THREAD);
	keep = rnd_below(&w->rng, n + 1);
	for (i = 0; i < keep; i++) {
		struct obj *o = &w->held[rnd_below(&w->rng, WORKER_HOLD)];

		free_one(&w->st, o, CTX_THREAD);
		o->p = w->bulk[i];
		o->c = ci;
	}
	for (i = keep; i < n; i++)
		on_free(&w->st, c, w->bulk[i], CTX_THREAD);
	if (n > keep) {
		rslub_cache_free_bulk(c->s, n - keep, w->bulk + keep);
		w->st.bulk_frees += n - keep;
		w->st.frees += n - keep;
	}
}

/* inject=1: one byte of a held object changes under its owner; inject=2: one
 * object is dropped without a free. Worker 0, once, after its first round.
 */
static void inject_fault(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < WORKER_HOLD; i++) {
		struct obj *o = &w->held[i];

		if (!o->p)
			continue;
		if (inject == 1)
			((u8 *)o->p)[caches[o->c].size / 2] ^= 0x40;
		else
			o->p = NULL;
		pr_info("rslub_stress: inject=%u into an object of %s\n", inject,
			caches[o->c].name);
		return;
	}
}

static void worker_round(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < ROUND_OPS; i++) {
		struct obj *o = &w->held[rnd_below(&w->rng, WORKER_HOLD)];
		u32 r = rnd_below(&w->rng, 100);

		if (r < 40)
			alloc_into(&w->st, o, &w->rng, CTX_THREAD);
		else if (r < 68)
			free_one(&w->st, o, CTX_THREAD);
		else if (r < 78)
			push(&w->st, o, CTX_THREAD);
		else if (r < 90)
			pop_and_free(&w->st, 4, CTX_THREAD);
		else if (r < 95)
			bulk_alloc(w);
		else
			bulk_free_held(w);
	}
}

static void park_until_stopped(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
}

/* faults=1: this kthread's allocations may be failed by fault injection. */
static void mark_for_faults(void)
{
#ifdef CONFIG_FAULT_INJECTION
	if (faults)
		current->make_it_fail = 1;
#endif
}

static int worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	mark_for_faults();
	set_cpus_allowed_ptr(current, cpumask_of(w->home));
	hrtimer_start(&w->hrt, ns_to_ktime(1000 * NSEC_PER_USEC), HRTIMER_MODE_REL);
	mod_timer(&w->tl, jiffies + 1);
	while (!READ_ONCE(stop)) {
		unsigned int cpu = w->home;

		/* Mostly home; sometimes elsewhere, so held objects travel. */
		if (!cpu_online(cpu) || rnd_below(&w->rng, 4) == 0)
			cpu = pick_online_cpu(&w->rng);
		set_cpus_allowed_ptr(current, cpumask_of(cpu));
		worker_round(w);
		if (inject && w->id == 0) {
			inject_fault(w);
			inject = 0;
		}
		cond_resched();
	}
	for (i = 0; i < WORKER_HOLD; i++)
		free_one(&w->st, &w->held[i], CTX_THREAD);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	complete(&w->done);
	park_until_stopped();
	return 0;
}

/*
 * faults=1: a cache made and destroyed while the stress runs, its metadata
 * allocations failing at random: -ENOMEM or a working cache. 0 or -errno.
 */
static int scratch_cache(void)
{
	struct rslub_cache *s;
	void *p;

	s = rslub_cache_create("rslub_stress_scratch", 100, 0, 0, NULL);
	if (IS_ERR(s)) {
		if (PTR_ERR(s) != -ENOMEM)
			return PTR_ERR(s);
		tuner.create_nomem++;
		return 0;
	}
	tuner.creates++;
	p = rslub_cache_alloc(s, GFP_KERNEL);	/* NULL when its page fails */
	if (p) {
		memset(p, 0x5c, 100);
		rslub_cache_free(s, p);
	}
	return rslub_cache_destroy(s);
}

static int tuner_fn(void *arg)
{
	static const int cpu_partial[] = { 0, 1, 2, 6, 13, 30, 52, 120, 1000 };
	static const char *const reads[] = {
		"objects", "slabs", "partial", "cpu_slabs", "slabs_cpu_partial",
		"empty_slabs", "objects_partial",
	};
	u64 rng = seed ^ 0x7e7e7e7e;
	unsigned int i;

	mark_for_faults();
	while (!READ_ONCE(stop)) {
		struct scache *c = &caches[rnd_below(&rng, ncaches)];
		long long v;
		long pages;
		int ret = 0;

		msleep(10 + rnd_below(&rng, 30));
		switch (rnd_below(&rng, 10)) {
		case 0:
		case 1:
			ret = rslub_cache_shrink(c->s);
			tuner.shrinks++;
			break;
		case 2:
		case 3:
			v = cpu_partial[rnd_below(&rng, ARRAY_SIZE(cpu_partial))];
			ret = rslub_cache_set(c->s, "cpu_partial", v);
			tuner.sets++;
			break;
		case 4:
			ret = rslub_cache_set(c->s, "min_partial", rnd_below(&rng, 9));
			tuner.sets++;
			break;
		case 5:
			ret = rslub_cache_set(c->s, "max_empty", rnd_below(&rng, 9));
			tuner.sets++;
			break;
		case 6:
			if (faults && rnd_below(&rng, 2)) {
				ret = scratch_cache();
			} else if (faults) {
				/* Allocates the shuffled sequence the first time. */
				ret = rslub_cache_set(c->s, "random_freelist", 1);
				if (ret == -ENOMEM) {
					tuner.set_nomem++;
					ret = 0;
				}
			} else {
				ret = rslub_cache_set(c->s, "random_freelist",
						      rnd_below(&rng, 2));
			}
			tuner.sets++;
			break;
		case 7:
		case 8:
			v = rslub_cache_get(c->s, reads[rnd_below(&rng, ARRAY_SIZE(reads))]);
			if (v < 0)
				ret = (int)v;
			if (rslub_cache_get(c->s, "errors") != 0)
				tuner.errors_seen++;
			tuner.reads++;
			break;
		default:
			for (i = 0; i < ncaches; i++)
				ret |= rslub_cache_shrink(caches[i].s);
			tuner.shrinks += ncaches;
			break;
		}
		if (ret)
			tuner.set_fail++;
		pages = rslub_pages_allocated();
		if (pages > tuner.peak_pages)
			tuner.peak_pages = pages;
	}
	complete(&tuner.done);
	park_until_stopped();
	return 0;
}

static void hotplug_online(unsigned int cpu)
{
	int ret = add_cpu(cpu);

	if (ret) {
		hp.add_fail++;
		hp.last_err = ret;
		pr_err("rslub_stress: add_cpu(%u) failed: %d\n", cpu, ret);
	} else {
		hp.online++;
	}
	clear_bit(cpu, hp.offlined);
}

static int hotplug_fn(void *arg)
{
	u64 rng = seed ^ 0x40400404;
	unsigned int cpu;
	int ret;

	while (!READ_ONCE(stop)) {
		msleep(hotplug_ms / 2 + rnd_below(&rng, hotplug_ms));
		if (READ_ONCE(stop))
			break;
		cpu = find_first_bit(hp.offlined, nr_cpu_ids);
		/* Bring one back half the time, and whenever two are down. */
		if (cpu < nr_cpu_ids &&
		    (rnd_below(&rng, 2) || num_online_cpus() <= 2)) {
			hotplug_online(cpu);
			continue;
		}
		cpu = 1 + rnd_below(&rng, nr_cpu_ids - 1);
		if (!cpu_online(cpu) || num_online_cpus() <= 2)
			continue;
		ret = remove_cpu(cpu);
		if (ret) {
			hp.refused++;
			hp.last_err = ret;
		} else {
			hp.offline++;
			set_bit(cpu, hp.offlined);
		}
	}
	for_each_set_bit(cpu, hp.offlined, nr_cpu_ids)
		hotplug_online(cpu);
	complete(&hp.done);
	park_until_stopped();
	return 0;
}

static int make_caches(u64 *rng)
{
	static const unsigned int aligns[] = { 0, 0, 8, 16, 32, 64, 128, 256 };
	unsigned int i, shift;

	for (i = 0; i < ncaches; i++) {
		struct scache *c = &caches[i];

		c->idx = i;
		if (i == 0) {
			c->size = 16 + rnd_below(rng, 49);	/* small: many per slab */
		} else if (i == ncaches - 1 && ncaches >= 4) {
			c->size = 4097 + rnd_below(rng, 8192);	/* order-3+ slabs */
		} else if (i == 2 && ncaches >= 5) {
			/* Slab headers outside the slabs (but with a ctor). */
			c->size = 16384;
		} else {
			shift = 4 + rnd_below(rng, 8);		/* 16 .. 4095 */
			c->size = (1u << shift) + rnd_below(rng, 1u << shift);
		}
		c->align = aligns[rnd_below(rng, ARRAY_SIZE(aligns))];
		c->hwcache = rnd_below(rng, 2);
		c->ctor = i % 3 == 1 || rnd_below(rng, 5) == 0;
		c->min_align = max(c->align, 8u);
		if (c->hwcache)
			c->min_align = max_t(unsigned int, c->min_align, cache_line_size());
		snprintf(c->name, sizeof(c->name), "rslub_stress_%u", i);
		c->s = rslub_cache_create(c->name, c->size, c->align,
					  c->hwcache ? SLAB_HWCACHE_ALIGN : 0,
					  c->ctor ? ctors[i] : NULL);
		if (IS_ERR(c->s)) {
			int ret = PTR_ERR(c->s);

			pr_err("rslub_stress: FAIL creating cache %s (size %u align %u): %d\n",
			       c->name, c->size, c->align, ret);
			c->s = NULL;
			return ret;
		}
		pr_info("rslub_stress: cache %s size=%u align=%u hwcache_align=%d ctor=%d objs_per_slab=%lld order=%lld\n",
			c->name, c->size, c->align, c->hwcache, c->ctor,
			rslub_cache_get(c->s, "objs_per_slab"),
			rslub_cache_get(c->s, "order"));
	}
	return 0;
}

static void add_stats(struct stats *sum, const struct stats *st)
{
	const unsigned long *src = (const unsigned long *)st;
	unsigned long *dst = (unsigned long *)sum;
	unsigned int i;

	for (i = 0; i < sizeof(*st) / sizeof(unsigned long); i++)
		dst[i] += src[i];
}

/* Waits for a context's "done", saying what is slow instead of hanging mute. */
static void wait_done(struct completion *done, const char *who, unsigned int id)
{
	unsigned int waited = 0;

	while (!wait_for_completion_timeout(done, 30 * HZ)) {
		waited += 30;
		pr_warn("rslub_stress: still waiting for %s %u after %u s\n", who,
			id, waited);
	}
}

static int __init rslub_stress_init(void)
{
	struct stats sum[NR_CTX] = {}, all = {};
	unsigned long cpu_ops_line_len = 0;
	ktime_t start = ktime_get(), end;
	long pages_start, pages_end, errors = 0, invalid = 0;
	unsigned int i, c, destroyed = 0, busy = 0, elapsed;
	char why[200] = "", cpu_ops[160] = "";
	u64 rng;
	int ret;

	ncaches = clamp(ncaches, 1u, (unsigned int)MAX_CACHES);
	if (!seed)
		seed = get_random_u64() | 1;
	rng = seed;
	nr_workers = min_t(unsigned int, num_possible_cpus(), MAX_WORKERS);
	WRITE_ONCE(stop, false);
	atomic_set(&reports, 0);
	pages_start = rslub_pages_allocated();
	pr_info("rslub_stress: seed=%llu duration=%us caches=%u workers=%u cpus=%u nodes=%u hotplug_ms=%u faults=%d pages_start=%ld\n",
		seed, duration, ncaches, nr_workers, num_online_cpus(),
		num_node_state(N_MEMORY), hotplug_ms, faults, pages_start);
#ifndef CONFIG_FAULT_INJECTION
	if (faults) {
		pr_err("rslub_stress: FAIL faults=1 needs a kernel with CONFIG_FAULT_INJECTION\n");
		return -EINVAL;
	}
#endif

	ret = make_caches(&rng);
	if (ret)
		goto destroy;
	workers = kvcalloc(nr_workers, sizeof(*workers), GFP_KERNEL);
	if (!workers) {
		ret = -ENOMEM;
		goto destroy;
	}
	for (i = 0; i < nr_workers; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->home = cpumask_nth(i, cpu_possible_mask);
		w->rng = seed ^ (OBJ_KEY * (3 * i + 1));
		w->hrt_rng = seed ^ (OBJ_KEY * (3 * i + 2));
		w->tl_rng = seed ^ (OBJ_KEY * (3 * i + 3));
		init_completion(&w->done);
		hrtimer_setup(&w->hrt, hrt_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		timer_setup(&w->tl, tl_fn, 0);
	}
	/* Create everything first: nothing runs until every thread exists. */
	for (i = 0; i < nr_workers; i++) {
		workers[i].task = kthread_create(worker_fn, &workers[i],
						 "rslub_stress/%u", i);
		if (IS_ERR(workers[i].task))
			break;
	}
	init_completion(&tuner.done);
	init_completion(&hp.done);
	tuner.task = kthread_create(tuner_fn, NULL, "rslub_stress_tune");
	hp.task = hotplug_ms && nr_cpu_ids > 2 ?
		  kthread_create(hotplug_fn, NULL, "rslub_stress_hp") : NULL;
	if (i < nr_workers || IS_ERR(tuner.task) || IS_ERR(hp.task)) {
		/* Never woken: kthread_stop() ends them without running them. */
		while (i--)
			kthread_stop(workers[i].task);
		if (!IS_ERR(tuner.task))
			kthread_stop(tuner.task);
		if (!IS_ERR_OR_NULL(hp.task))
			kthread_stop(hp.task);
		pr_err("rslub_stress: FAIL could not create the kthreads\n");
		ret = -ENOMEM;
		goto free_workers;
	}
	for (i = 0; i < nr_workers; i++)
		wake_up_process(workers[i].task);
	wake_up_process(tuner.task);
	if (hp.task)
		wake_up_process(hp.task);

	/* By the clock: under TCG, msleep() oversleeps by a third. */
	end = ktime_add_ms(ktime_get(), duration * MSEC_PER_SEC);
	for (elapsed = 0; ktime_before(ktime_get(), end); elapsed++) {
		msleep(100);
		if (elapsed % 150 == 149) {
			unsigned long ops = 0;

			for (i = 0; i < nr_workers; i++)
				ops += READ_ONCE(workers[i].st.allocs) +
				       READ_ONCE(workers[i].hrt_st.allocs) +
				       READ_ONCE(workers[i].tl_st.allocs);
			pr_info("rslub_stress: t=%llds allocations=%lu cpu_offline_events=%lu pages=%ld\n",
				ktime_to_ms(ktime_sub(ktime_get(), start)) / MSEC_PER_SEC,
				ops, READ_ONCE(hp.offline), rslub_pages_allocated());
		}
	}
	WRITE_ONCE(stop, true);

	/* Collect: every context is done before anything is judged or freed. */
	for (i = 0; i < nr_workers; i++)
		wait_done(&workers[i].done, "worker", i);
	wait_done(&tuner.done, "tuner", 0);
	if (hp.task)
		wait_done(&hp.done, "hotplug", 0);
	for (i = 0; i < nr_workers; i++) {
		hrtimer_cancel(&workers[i].hrt);
		timer_shutdown_sync(&workers[i].tl);
		kthread_stop(workers[i].task);
	}
	kthread_stop(tuner.task);
	if (hp.task)
		kthread_stop(hp.task);
	for (i = 0; i < nr_workers; i++) {
		struct worker *w = &workers[i];

		for (c = 0; c < TIMER_HOLD; c++) {
			free_one(&w->hrt_st, &w->hrt_held[c], CTX_HARDIRQ);
			free_one(&w->tl_st, &w->tl_held[c], CTX_SOFTIRQ);
		}
	}
	pop_and_free(&workers[0].st, XCHG_SLOTS, CTX_THREAD);

	for (i = 0; i < nr_workers; i++) {
		add_stats(&sum[CTX_THREAD], &workers[i].st);
		add_stats(&sum[CTX_HARDIRQ], &workers[i].hrt_st);
		add_stats(&sum[CTX_SOFTIRQ], &workers[i].tl_st);
	}
	for (c = 0; c < NR_CTX; c++) {
		struct stats *s = &sum[c];

		add_stats(&all, s);
		pr_info("rslub_stress: ops %s: alloc=%lu free=%lu (bulk: alloc=%lu free=%lu failed=%lu) fires=%lu null_atomic=%lu null_kernel=%lu pushed=%lu popped=%lu\n",
			ctx_name[c], s->allocs, s->frees, s->bulk_allocs,
			s->bulk_frees, s->bulk_fail, s->fires, s->atomic_fail,
			s->kernel_fail, s->pushed, s->popped);
	}
	for_each_possible_cpu(i) {
		if (cpu_ops_line_len < sizeof(cpu_ops) - 24)
			cpu_ops_line_len += scnprintf(cpu_ops + cpu_ops_line_len,
						      sizeof(cpu_ops) - cpu_ops_line_len,
						      " %u:%lu", i,
						      per_cpu(ops_on_cpu, i));
	}
	pr_info("rslub_stress: ops per cpu (alloc+free):%s\n", cpu_ops);
	pr_info("rslub_stress: handoff: freed_on_other_cpu=%lu freed_on_other_node=%lu\n",
		all.remote_cpu, all.remote_node);
	pr_info("rslub_stress: tuner: shrinks=%lu sets=%lu reads=%lu failed_calls=%lu enomem_sets=%lu\n",
		tuner.shrinks, tuner.sets, tuner.reads, tuner.set_fail,
		tuner.set_nomem);
	if (faults)
		pr_info("rslub_stress: faults: null_returns=%lu (GFP_KERNEL %lu, atomic %lu; %lu of them alloc_bulk false) random_freelist_enomem=%lu scratch_creates=%lu scratch_enomem=%lu\n",
			all.kernel_fail + all.atomic_fail, all.kernel_fail,
			all.atomic_fail, all.bulk_fail, tuner.set_nomem,
			tuner.creates, tuner.create_nomem);
	pr_info("rslub_stress: hotplug: offline=%lu online=%lu refused=%lu add_failed=%lu last_err=%d cpus_online=%u\n",
		hp.offline, hp.online, hp.refused, hp.add_fail, hp.last_err,
		num_online_cpus());
	pr_info("rslub_stress: verified=%lu checksum_failures=%lu ctor_failures=%lu zero_failures=%lu align_failures=%lu ctor_calls=%ld\n",
		all.verified, all.bad_sum, all.bad_ctor, all.bad_zero,
		all.bad_align, atomic_long_read(&ctor_calls));

	for (c = 0; c < ncaches; c++) {
		errors += rslub_cache_get(caches[c].s, "errors");
		invalid += rslub_cache_validate(caches[c].s);
	}
	pr_info("rslub_stress: validate: %ld problems in %u caches\n", invalid, ncaches);

#define FAIL_IF(cond, ...) \
	do { \
		if ((cond) && !why[0]) \
			scnprintf(why, sizeof(why), __VA_ARGS__); \
	} while (0)
	FAIL_IF(all.bad_sum, "%lu checksum failures", all.bad_sum);
	FAIL_IF(all.bad_ctor, "%lu objects not in the constructed state", all.bad_ctor);
	FAIL_IF(all.bad_zero, "%lu __GFP_ZERO objects not zeroed", all.bad_zero);
	FAIL_IF(all.bad_align, "%lu misaligned objects", all.bad_align);
	FAIL_IF(errors, "caches report %ld errors", errors);
	FAIL_IF(invalid, "validate found %ld problems", invalid);
	FAIL_IF(tuner.errors_seen, "errors seen during the run (%lu reads)", tuner.errors_seen);
	FAIL_IF(!faults && all.kernel_fail, "%lu GFP_KERNEL allocations returned NULL",
		all.kernel_fail);
	FAIL_IF(faults && !(all.kernel_fail + all.atomic_fail),
		"faults=1 but no allocation returned NULL (is fault injection set up?)");
	FAIL_IF(all.allocs != all.frees, "allocations %lu != frees %lu", all.allocs, all.frees);
	FAIL_IF(all.verified != all.frees, "verified %lu != frees %lu", all.verified, all.frees);
	FAIL_IF(sum[CTX_HARDIRQ].wrong_ctx, "hrtimer callback not in hard irq");
	FAIL_IF(sum[CTX_SOFTIRQ].wrong_ctx, "timer_list callback not in softirq");
	FAIL_IF(!sum[CTX_HARDIRQ].allocs || !sum[CTX_SOFTIRQ].allocs || !sum[CTX_THREAD].allocs,
		"a context made no allocation (thread %lu, hardirq %lu, softirq %lu)",
		sum[CTX_THREAD].allocs, sum[CTX_HARDIRQ].allocs, sum[CTX_SOFTIRQ].allocs);
	FAIL_IF(tuner.set_fail, "%lu shrink/set/get calls failed", tuner.set_fail);
	FAIL_IF(hp.add_fail, "%lu add_cpu failures (last %d)", hp.add_fail, hp.last_err);
	FAIL_IF(hp.task && duration >= 5 && !hp.offline, "no CPU went offline");
	ret = 0;

free_workers:
	kvfree(workers);
	workers = NULL;
destroy:
	for (c = 0; c < ncaches && caches[c].s; c++) {
		long long live = rslub_cache_get(caches[c].s, "objects");
		int r = rslub_cache_destroy(caches[c].s);

		caches[c].s = NULL;
		if (r) {
			busy++;
			pr_err("rslub_stress: destroy %s returned %d (objects=%lld)\n",
			       caches[c].name, r, live);
		} else {
			destroyed++;
		}
	}
	pages_end = rslub_pages_allocated();
	pr_info("rslub_stress: destroyed=%u busy=%u errors=%ld pages_start=%ld pages_peak=%ld pages_end=%ld\n",
		destroyed, busy, errors, pages_start, tuner.peak_pages, pages_end);
	if (ret)
		return ret;
	FAIL_IF(busy, "%u caches still had objects at destroy", busy);
	FAIL_IF(!serving && pages_end != pages_start, "pages did not return: start %ld end %ld",
		pages_start, pages_end);
#undef FAIL_IF
	if (why[0]) {
		pr_err("rslub_stress: FAIL %s\n", why);
		return -EIO;
	}
	pr_info("rslub_stress: PASS seconds=%u allocs=%lu frees=%lu verified=%lu cpu_offline=%lu cpu_online=%lu pages_end=%ld wall=%llds\n",
		duration, all.allocs, all.frees, all.verified, hp.offline,
		hp.online, pages_end,
		ktime_to_ms(ktime_sub(ktime_get(), start)) / MSEC_PER_SEC);
	return 0;
}
module_init(rslub_stress_init);

static void __exit rslub_stress_exit(void)
{
}
module_exit(rslub_stress_exit);

MODULE_DESCRIPTION("rslub stress: every context, CPU hotplug, checksummed objects");
MODULE_LICENSE("GPL");
