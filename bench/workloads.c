// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads that run on one CPU: pair, repeat, fifo, shuffle and bulk
 * (one cost line per op and round), churn (caches left with live objects
 * for the guest script to read from sysfs) and trace (marks for a
 * debugger). harness.c says what each measures; each times its window with
 * now() and marks it for the cost model with mark().
 */
#include <linux/delay.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/printk.h>
#include <linux/vmalloc.h>

#include "bench.h"

void run_pair(struct subject *s, unsigned int size, unsigned int r)
{
	void *c = s->cache, *o;
	u64 t0, t1, id;
	unsigned int i;

	/* Warm the CPU slab / sheaf. */
	o = s->ops->alloc(c);
	if (!o)
		return note_oom(s, "pair", size);
	s->ops->free(c, o);
	id = mark_ids();
	mark(0);
	t0 = now();
	for (i = 0; i < bench_ops; i++) {
		o = s->ops->alloc(c);
		s->ops->free(c, o);
	}
	t1 = now();
	mark(id | 1);
	cost("pair", "pair", size, 1, s, r, t1 - t0, bench_ops, id | 1);
}

void run_repeat(struct subject *s, unsigned int size, unsigned int r,
		void **scratch)
{
	unsigned int i, n = held_objects(size);
	void *c = s->cache;
	u64 t0, t1, t2, id = mark_ids();

	mark(0);
	t0 = now();
	for (i = 0; i < n; i++)
		scratch[i] = s->ops->alloc(c);
	t1 = now();
	mark(id | 1);
	for (i = 0; i < n; i++) {
		if (!scratch[i])
			return note_oom(s, "repeat", size);
		s->ops->free(c, scratch[i]);
	}
	t2 = now();
	mark(id | 2);
	cost("repeat", "alloc", size, 1, s, r, t1 - t0, n, id | 1);
	cost("repeat", "free", size, 1, s, r, t2 - t1, n, id | 2);
}

/* Allocates n live objects into scratch[]; on failure frees them, false. */
static bool alloc_live(struct subject *s, void **scratch, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		scratch[i] = s->ops->alloc(s->cache);
		if (!scratch[i]) {
			while (i--)
				s->ops->free(s->cache, scratch[i]);
			return false;
		}
	}
	return true;
}

void run_fifo(struct subject *s, unsigned int size, unsigned int r,
	      void **scratch)
{
	unsigned int i, n = held_objects(size), head = 0, done;
	void *c = s->cache, *o;
	u64 t0, t1, id = mark_ids();

	if (!alloc_live(s, scratch, n))
		return note_oom(s, "fifo", size);
	/* scratch[] is a ring: the oldest object is at head. */
	mark(0);
	t0 = now();
	for (i = 0; i < bench_ops; i++) {
		o = s->ops->alloc(c);
		if (unlikely(!o))
			break;
		s->ops->free(c, scratch[head]);
		scratch[head] = o;
		head = head + 1 == n ? 0 : head + 1;
	}
	t1 = now();
	mark(id | 1);
	done = i;
	for (i = 0; i < n; i++)
		s->ops->free(c, scratch[i]);
	if (done < bench_ops)
		return note_oom(s, "fifo", size);
	cost("fifo", "step", size, 1, s, r, t1 - t0, bench_ops, id | 1);
}

void run_shuffle(struct subject *s, unsigned int size, unsigned int r,
		 void **scratch)
{
	unsigned int i, n = held_objects(size);
	struct rnd_state rnd;
	void *c = s->cache;
	u64 t0, t1, id = mark_ids();

	if (!alloc_live(s, scratch, n))
		return note_oom(s, "shuffle", size);
	/* The same order for every allocator and round of this size. */
	prandom_seed_state(&rnd, size);
	for (i = n - 1; i > 0; i--) {
		/* One draw per step: swap() evaluates its arguments twice. */
		unsigned int j = prandom_u32_state(&rnd) % (i + 1);

		swap(scratch[i], scratch[j]);
	}
	mark(0);
	t0 = now();
	for (i = 0; i < n; i++)
		s->ops->free(c, scratch[i]);
	t1 = now();
	mark(id | 1);
	cost("shuffle", "free", size, 1, s, r, t1 - t0, n, id | 1);
}

void run_bulk(struct subject *s, unsigned int size, unsigned int r,
	      void **scratch)
{
	int b;

	for (b = 0; b < bench_nr_batches; b++) {
		unsigned int i, batch = bench_batches[b], n = max(bench_ops / batch, 1u);
		u64 t0, t1, id = mark_ids();

		mark(0);
		t0 = now();
		for (i = 0; i < n; i++) {
			if (!s->ops->alloc_bulk(s->cache, batch, scratch))
				return note_oom(s, "bulk", size);
			s->ops->free_bulk(s->cache, batch, scratch);
		}
		t1 = now();
		mark(id | 1);
		cost("bulk", "object", size, batch, s, r, t1 - t0, (u64)n * batch, id | 1);
	}
}

/* --- churn: random frees over a live set, pages read from sysfs ---------- */

struct churn {
	struct subject s;
	unsigned int size, nslots;
	void **slots;
};

static struct churn churns[MAX_ALLOCS * MAX_SIZES];
static unsigned int nr_churns, churn_ideal_done;

/* Each size prints its "ideal" line once. */
void churn_new_size(void)
{
	churn_ideal_done = 0;
}

bool churning(void)
{
	return nr_churns;
}

/*
 * Fills every slot, then toggles random slots (free if full, allocate if
 * empty) 4 x slots times: about half the objects stay live, spread over
 * slabs the way a long-running user leaves them.
 */
void run_churn(struct subject *s, unsigned int size, unsigned int r)
{
	struct churn *ch = &churns[nr_churns];
	unsigned int i, live = 0;
	struct rnd_state rnd;

	ch->s = *s;
	ch->size = size;
	ch->nslots = held_objects(size);
	ch->slots = vzalloc(array_size(ch->nslots, sizeof(void *)));
	if (!ch->slots) {
		bench_failed = -ENOMEM;
		return;
	}
	nr_churns++;
	s->cache = NULL;	/* now owned by the churn entry, until rmmod */
	prandom_seed_state(&rnd, 0x5eed0000ull + bench_round_base + r);
	for (i = 0; i < ch->nslots; i++)
		ch->slots[i] = ch->s.ops->alloc(ch->s.cache);
	for (i = 0; i < 4 * ch->nslots; i++) {
		void **slot = &ch->slots[prandom_u32_state(&rnd) % ch->nslots];

		if (*slot) {
			ch->s.ops->free(ch->s.cache, *slot);
			*slot = NULL;
		} else {
			*slot = ch->s.ops->alloc(ch->s.cache);
		}
	}
	for (i = 0; i < ch->nslots; i++)
		live += !!ch->slots[i];
	pr_info("rslub_bench: churn alloc=%s variant=%s size=%u round=%u live=%u sysfs=/sys/kernel/%s/%s\n",
		s->ops->name, s->variant, size, bench_round_base + r, live,
		subject_is(s, "slub") ? "slab" : "rslub", ch->s.name);
	if (!churn_ideal_done++)
		result("churn", "ideal", size, 1, 1, "ideal", "-", "pages", r,
		       (u64)live * size, PAGE_SIZE);
}

void free_churns(void)
{
	unsigned int i, k;

	for (i = 0; i < nr_churns; i++) {
		struct churn *ch = &churns[i];

		for (k = 0; k < ch->nslots; k++)
			if (ch->slots[k])
				ch->s.ops->free(ch->s.cache, ch->slots[k]);
		vfree(ch->slots);
		ch->s.ops->destroy(ch->s.cache);
	}
	nr_churns = 0;
}

/*
 * trace: the instructions of one pair, for make trace-pair, which
 * single-steps the guest from one mark to the next under gdb. The marks
 * are calls of an empty function that must stay a call.
 */
#define TRACE_PAIRS 3
#define TRACE_WARM 1000
#define TRACE_WAIT_MS 300000

noinline void rslub_bench_trace_mark(void);
noinline void rslub_bench_trace_mark(void)
{
	asm volatile("" ::: "memory");
}

int run_trace(struct subject *s, unsigned int size)
{
	void *c = s->cache, *o;
	unsigned int i, waited = 0;

	static void *objs[MAX_BATCH];
	unsigned int n = clamp(bench_trace_bulk, 1u, (unsigned int)MAX_BATCH);

	for (i = 0; i < TRACE_WARM; i++) {
		if (bench_trace_bulk) {
			if (!s->ops->alloc_bulk(c, n, objs))
				return -ENOMEM;
			s->ops->free_bulk(c, n, objs);
			continue;
		}
		o = s->ops->alloc(c);
		if (!o)
			return -ENOMEM;
		s->ops->free(c, o);
	}
	while (!READ_ONCE(bench_trace_go)) {
		if (waited >= TRACE_WAIT_MS) {
			pr_err("rslub_bench: trace: trace_go not set in %u s\n",
			       TRACE_WAIT_MS / 1000);
			return -ETIMEDOUT;
		}
		msleep(100);
		waited += 100;
	}
	pr_info("rslub_bench: trace alloc=%s size=%u pairs=%u bulk=%u\n",
		s->ops->name, size, TRACE_PAIRS, bench_trace_bulk);
	for (i = 0; i < TRACE_PAIRS; i++) {
		if (bench_trace_bulk) {
			rslub_bench_trace_mark();
			if (!s->ops->alloc_bulk(c, n, objs))
				return -ENOMEM;
			rslub_bench_trace_mark();
			s->ops->free_bulk(c, n, objs);
			rslub_bench_trace_mark();
			continue;
		}
		rslub_bench_trace_mark();
		o = s->ops->alloc(c);
		rslub_bench_trace_mark();
		s->ops->free(c, o);
		rslub_bench_trace_mark();
	}
	return 0;
}
