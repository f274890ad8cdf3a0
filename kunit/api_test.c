// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for rslub's public API (include/rslub.h), case by case: the
 * contract a module using rslub relies on. Built as rslub_kunit.ko; the
 * suites run when it is loaded (boot with kunit.enable=1).
 *
 * Written in C on purpose: it exercises the API exactly as a C user does,
 * through the exported symbols.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "rslub.h"
#include "rslub_kunit.h"

static void expect_create_err(struct kunit *test, const char *name,
			      unsigned int size, unsigned int align,
			      slab_flags_t flags, long err)
{
	struct rslub_cache *s = rslub_cache_create(name, size, align, flags, NULL);

	KUNIT_EXPECT_TRUE(test, IS_ERR(s));
	if (IS_ERR(s))
		KUNIT_EXPECT_EQ(test, PTR_ERR(s), err);
	else
		rslub_cache_destroy(s);
}

static void create_rejects_bad_names(struct kunit *test)
{
	char name[RSLUB_NAME_MAX + 2];
	struct rslub_cache *s;

	expect_create_err(test, NULL, 32, 0, 0, -EINVAL);
	expect_create_err(test, "", 32, 0, 0, -EINVAL);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_create_err(test, name, 32, 0, 0, -EINVAL);
	/* Exactly RSLUB_NAME_MAX bytes is accepted. */
	name[RSLUB_NAME_MAX] = '\0';
	s = make(test, name, 32, 0, 0, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void create_rejects_bad_sizes(struct kunit *test)
{
	struct rslub_cache *s;
	void *obj;

	expect_create_err(test, "rslub-t-size", 0, 0, 0, -EINVAL);
	expect_create_err(test, "rslub-t-size", RSLUB_MAX_OBJECT_SIZE + 1, 0, 0,
			  -EINVAL);
	s = make(test, "rslub-t-size", RSLUB_MAX_OBJECT_SIZE, 0, 0, NULL);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	memset(obj, 0xa5, RSLUB_MAX_OBJECT_SIZE);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void create_rejects_bad_align(struct kunit *test)
{
	expect_create_err(test, "rslub-t-align", 32, 3, 0, -EINVAL);
	expect_create_err(test, "rslub-t-align", 32, 24, 0, -EINVAL);
	expect_create_err(test, "rslub-t-align", 32, 0x80000001u, 0, -EINVAL);
}

static void create_rejects_unsupported_flags(struct kunit *test)
{
	struct rslub_cache *s;

	/* Flags that are real bits in every configuration. */
	expect_create_err(test, "rslub-t-flags", 32, 0, SLAB_RECLAIM_ACCOUNT,
			  -EINVAL);
	expect_create_err(test, "rslub-t-flags", 32, 0, SLAB_CACHE_DMA, -EINVAL);
	expect_create_err(test, "rslub-t-flags", 32, 0, SLAB_PANIC, -EINVAL);
	s = make(test, "rslub-t-flags", 32, 0, SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE,
		 NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void create_duplicate_name_is_eexist(struct kunit *test)
{
	struct rslub_cache *a, *b;

	a = make(test, "rslub-t-dup", 64, 0, 0, NULL);
	expect_create_err(test, "rslub-t-dup", 128, 0, 0, -EEXIST);
	/* Taken by a file of /sys/kernel/rslub, and not a sysfs name. */
	expect_create_err(test, "default_max_empty", 64, 0, 0, -EEXIST);
	expect_create_err(test, "a/b", 64, 0, 0, -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(a), 0);
	/* The name is free again after destroy. */
	b = make(test, "rslub-t-dup", 128, 0, 0, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(b), 0);
}

static const unsigned int test_sizes[] = { 1, 8, 24, 64, 100, 192, 256, 1000,
					   2048, 4096, 5000, 8192, 16384 };
static const unsigned int test_aligns[] = { 0, 8, 16, 64, 256, 4096 };

static void check_alignment(struct kunit *test, unsigned int size,
			    unsigned int align, slab_flags_t flags)
{
	unsigned long want = max(align, 8u);
	struct rslub_cache *s;
	void *objs[4];
	int n;

	if (flags & SLAB_HWCACHE_ALIGN)
		want = max_t(unsigned long, want, cache_line_size());
	s = make(test, "rslub-t-align", size, align, flags, NULL);
	for (n = 0; n < ARRAY_SIZE(objs); n++) {
		objs[n] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[n]);
		KUNIT_EXPECT_EQ_MSG(test, (unsigned long)objs[n] % want, 0ul,
				    "size %u align %u flags %x", size, align,
				    (unsigned int)flags);
		memset(objs[n], n, size);
	}
	for (n = 0; n < ARRAY_SIZE(objs); n++) {
		KUNIT_EXPECT_EQ(test, ((u8 *)objs[n])[size - 1], (u8)n);
		rslub_cache_free(s, objs[n]);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void objects_are_aligned(struct kunit *test)
{
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(test_sizes); i++) {
		for (j = 0; j < ARRAY_SIZE(test_aligns); j++) {
			check_alignment(test, test_sizes[i], test_aligns[j], 0);
			check_alignment(test, test_sizes[i], test_aligns[j],
					SLAB_HWCACHE_ALIGN);
		}
	}
}

static int cmp_ptr(const void *a, const void *b)
{
	unsigned long x = *(unsigned long *)a, y = *(unsigned long *)b;

	return x < y ? -1 : x > y;
}

static bool contains(void **sorted, unsigned int n, void *p)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (sorted[mid] == p)
			return true;
		if ((unsigned long)sorted[mid] < (unsigned long)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Live objects never overlap, and freed memory is reused, not grown. */
static void objects_are_distinct_and_reused(struct kunit *test)
{
	const unsigned int size = 48;
	struct rslub_cache *s;
	void **objs, **again;
	unsigned int nr, i, reused = 0;
	long long slabs;

	/* One CPU: objects parked on another CPU's lists would be unreachable. */
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current,
						   cpumask_of(raw_smp_processor_id())), 0);
	s = make(test, "rslub-t-distinct", size, 0, 0, NULL);
	/* Whole slabs, so a reallocation cannot come from never-used objects. */
	nr = 24 * rslub_cache_get(s, "objs_per_slab");
	objs = kunit_kcalloc(test, nr, sizeof(*objs), GFP_KERNEL);
	again = kunit_kcalloc(test, nr, sizeof(*again), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, again);
	for (i = 0; i < nr; i++) {
		objs[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
		memset(objs[i], i & 0xff, size);
	}
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, ((u8 *)objs[i])[size - 1], (u8)(i & 0xff));
	sort(objs, nr, sizeof(*objs), cmp_ptr, NULL);
	for (i = 1; i < nr; i++)
		KUNIT_EXPECT_GE(test, (unsigned long)objs[i] - (unsigned long)objs[i - 1],
				(unsigned long)size);
	slabs = rslub_cache_get(s, "slabs");
	/* Keep every emptied slab, so no memory goes back to the pages. */
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, "max_empty", 1000), 0);
	for (i = 0; i < nr; i++)
		rslub_cache_free(s, objs[i]);
	/* The same number again comes from the same memory. */
	for (i = 0; i < nr; i++) {
		again[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, again[i]);
		reused += contains(objs, nr, again[i]);
	}
	KUNIT_EXPECT_EQ(test, reused, nr);
	KUNIT_EXPECT_LE(test, rslub_cache_get(s, "slabs"), slabs);
	for (i = 0; i < nr; i++)
		rslub_cache_free(s, again[i]);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void gfp_zero_zeroes(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-zero", 200, 0, 0, NULL);
	u8 *obj;
	int i;

	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	memset(obj, 0xff, 200);
	rslub_cache_free(s, obj);
	obj = rslub_cache_alloc(s, GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	for (i = 0; i < 200; i++)
		KUNIT_EXPECT_EQ(test, obj[i], 0);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static atomic_t ctor_calls;

static void test_ctor(void *obj)
{
	atomic_inc(&ctor_calls);
	memset(obj, 0x5c, 40);
}

/* The ctor runs once per object when its slab is made, not per allocation. */
static void ctor_runs_once_per_object(struct kunit *test)
{
	struct rslub_cache *s;
	u8 *obj;
	int i, after_first;

	atomic_set(&ctor_calls, 0);
	s = make(test, "rslub-t-ctor", 40, 0, 0, test_ctor);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	after_first = atomic_read(&ctor_calls);
	KUNIT_EXPECT_GT(test, after_first, 1);
	for (i = 0; i < 40; i++)
		KUNIT_EXPECT_EQ(test, obj[i], 0x5c);
	/* A constructed object returned intact comes back constructed. */
	rslub_cache_free(s, obj);
	for (i = 0; i < 10; i++) {
		obj = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, obj);
		KUNIT_EXPECT_EQ(test, obj[39], 0x5c);
		rslub_cache_free(s, obj);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctor_calls), after_first);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void free_null_is_noop(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-null", 32, 0, 0, NULL);

	rslub_cache_free(s, NULL);
	rslub_cache_free_bulk(s, 0, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(NULL), 0);
}

static void bulk_alloc_and_free(struct kunit *test)
{
	static const size_t counts[] = { 1, 8, 16, 64, 300 };
	struct rslub_cache *s = make(test, "rslub-t-bulk", 96, 0, 0, NULL);
	void **p;
	size_t i, j;

	p = kunit_kcalloc(test, 300, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, counts[i], p));
		for (j = 0; j < counts[i]; j++) {
			KUNIT_ASSERT_NOT_NULL(test, p[j]);
			memset(p[j], 0x11, 96);
		}
		sort(p, counts[i], sizeof(*p), cmp_ptr, NULL);
		for (j = 1; j < counts[i]; j++)
			KUNIT_EXPECT_PTR_NE(test, p[j], p[j - 1]);
		rslub_cache_free_bulk(s, counts[i], p);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void alloc_node_honours_node(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-node", 128, 0, 0, NULL);
	void *obj;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		obj = rslub_cache_alloc_node(s, GFP_KERNEL, nid);
		KUNIT_ASSERT_NOT_NULL(test, obj);
		KUNIT_EXPECT_EQ(test, page_to_nid(virt_to_page(obj)), nid);
		rslub_cache_free(s, obj);
	}
	obj = rslub_cache_alloc_node(s, GFP_KERNEL, NUMA_NO_NODE);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void destroy_with_live_object_is_ebusy(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-busy", 64, 0, 0, NULL);
	void *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	/* The object's slab is leaked on purpose: that is the contract. */
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EBUSY);
	s = make(test, "rslub-t-busy", 64, 0, 0, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Frees of things that are not this cache's live objects change nothing. */
static void bad_frees_are_ignored(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-bad", 64, 0, 0, NULL);
	struct rslub_cache *t = make(test, "rslub-t-bad2", 64, 0, 0, NULL);
	void *obj, *other, *km, *again;
	u64 on_stack = 0;

	obj = rslub_cache_alloc(s, GFP_KERNEL);
	other = rslub_cache_alloc(t, GFP_KERNEL);
	km = kmalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_NOT_NULL(test, km);
	rslub_cache_free(s, &on_stack);
	rslub_cache_free(s, km);
	rslub_cache_free(s, other);
	rslub_cache_free(s, (u8 *)obj + 8);
	rslub_cache_free(s, obj);
	rslub_cache_free(s, obj);	/* naive double free */
	/* The cache still works and hands the object out once. */
	again = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_PTR_EQ(test, again, obj);
	KUNIT_EXPECT_PTR_NE(test, rslub_cache_alloc(s, GFP_KERNEL), obj);
	kfree(km);
	rslub_cache_free(t, other);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(t), 0);
	/* Two objects are still allocated in s. */
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EBUSY);
}

static void shrink_returns_zero_and_cache_works(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-shrink", 512, 0, 0, NULL);
	void **p = kunit_kcalloc(test, 200, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 200, p));
	rslub_cache_free_bulk(s, 200, p);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 200, p));
	rslub_cache_free_bulk(s, 200, p);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* GFP_ATOMIC alloc/free from hard irq, racing the same CPU's thread. */
struct irq_ctx {
	struct hrtimer timer;
	struct rslub_cache *s;
	int fires, failures, bad;
	struct completion done;
};

static enum hrtimer_restart irq_fn(struct hrtimer *t)
{
	struct irq_ctx *c = container_of(t, struct irq_ctx, timer);
	void *objs[8];
	int i;

	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = rslub_cache_alloc(c->s, GFP_ATOMIC);
		if (!objs[i])
			c->failures++;
		else
			memset(objs[i], 0xee, 64);
	}
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		if (objs[i] && ((u8 *)objs[i])[63] != 0xee)
			c->bad++;
		rslub_cache_free(c->s, objs[i]);
	}
	if (++c->fires >= 200) {
		complete(&c->done);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void alloc_free_in_hardirq(struct kunit *test)
{
	struct irq_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long thread_ops = 0, thread_bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->s = make(test, "rslub-t-irq", 64, 0, 0, NULL);
	init_completion(&c->done);
	hrtimer_setup(&c->timer, irq_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	hrtimer_start(&c->timer, ns_to_ktime(50 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
	while (!completion_done(&c->done)) {
		u8 *obj = rslub_cache_alloc(c->s, GFP_KERNEL);

		if (obj) {
			memset(obj, 0x77, 64);
			if (obj[0] != 0x77 || obj[63] != 0x77)
				thread_bad++;
			rslub_cache_free(c->s, obj);
		}
		thread_ops++;
		if (!(thread_ops & 255))
			cond_resched();
	}
	hrtimer_cancel(&c->timer);
	KUNIT_EXPECT_EQ(test, c->fires, 200);
	KUNIT_EXPECT_EQ(test, c->failures, 0);
	KUNIT_EXPECT_EQ(test, c->bad, 0);
	KUNIT_EXPECT_EQ(test, thread_bad, 0ul);
	KUNIT_EXPECT_GT(test, thread_ops, 0ul);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(c->s), 0);
}

/*
 * SLAB_TYPESAFE_BY_RCU: an RCU reader (rcu_reader.c) keeps reading an
 * object while the test frees it, allocates and frees again, and shrinks
 * the cache. The slab leaves the cache, but its pages wait for the
 * reader: rcu_pending_slabs stays above 0 while the reader is inside (a
 * grace period cannot end), and the reader only ever sees the values the
 * test wrote (a free neither poisons nor writes the free pointer into the
 * object). Asserted in the test thread from what the reader counted.
 */
static void typesafe_by_rcu_slab_outlives_its_readers(struct kunit *test)
{
	struct kt_rcu_reader *r;
	struct rslub_cache *s;
	unsigned long *obj, *again;

	s = make(test, "rslub-t-rcu", 128, 0, SLAB_TYPESAFE_BY_RCU, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "typesafe_by_rcu"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "max_empty", 0), 0);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	r = kt_rcu_reader_start(test, &obj[0]);

	rslub_cache_free(s, obj);
	again = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, again);
	if (again) {
		again[0] = KT_RCU_READER_SECOND;
		rslub_cache_free(s, again);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "slabs"), 0);
	/* Time for a grace period, were the reader not inside. */
	msleep(100);
	KUNIT_EXPECT_GT(test, rslub_cache_get(s, "rcu_pending_slabs"), 0);

	kt_rcu_reader_stop(test, r);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "rcu_pending_slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Destroy of a SLAB_TYPESAFE_BY_RCU cache waits for its slabs' grace periods. */
static void typesafe_by_rcu_destroy_waits(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-t-rcu-destroy", 256, 0,
				     SLAB_TYPESAFE_BY_RCU, NULL);
	long pages = rslub_pages_allocated(), pending = 0;
	void *o[64];
	int i, tries;

	/*
	 * Slabs waiting for a grace period when destroy comes. On a slow or
	 * loaded host the grace period may end before the count is read
	 * (seen once under load): then the setup is made again.
	 */
	for (tries = 0; tries < 10 && pending <= 0; tries++) {
		for (i = 0; i < ARRAY_SIZE(o); i++) {
			o[i] = rslub_cache_alloc(s, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, o[i]);
		}
		for (i = 0; i < ARRAY_SIZE(o); i++)
			rslub_cache_free(s, o[i]);
		KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
		pending = rslub_cache_get(s, "rcu_pending_slabs");
	}
	KUNIT_EXPECT_GT(test, pending, 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	/* Nothing else in this guest allocates rslub slabs meanwhile. */
	KUNIT_EXPECT_LE(test, rslub_pages_allocated(), pages);
}

/*
 * A cache of rslub's own above its smallest order asks for its pages
 * lightly (no retry, no warning) and, when the page allocator says no,
 * takes a slab of the smallest order from its fallback with the caller's
 * flags, as classic SLUB falls back to its minimum order. Order 1 and up
 * fail for this task (fail_page_alloc, set up by scripts/guest/kunit.sh:
 * min-order 1, task-filter, verbose 2). Every allocation succeeds, from the
 * fallback; its objects go back to it one by one and in bulk; and the
 * guest's log has no stack of a failed request made without __GFP_NOWARN
 * (judged by make check). Before, the cache's one order-2 request
 * failed the allocation with a stack.
 */
static void higher_orders_fall_back(struct kunit *test)
{
#ifdef CONFIG_FAIL_PAGE_ALLOC
	struct rslub_cache *s = make(test, "rslub-t-fallback", 1024, 0, 0, NULL);
	void *x[8];
	int i;

	KUNIT_ASSERT_GT(test, rslub_cache_get(s, "order"), 0);
	current->make_it_fail = 1;
	for (i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = rslub_cache_alloc(s, GFP_KERNEL);
	current->make_it_fail = 0;
	for (i = 0; i < ARRAY_SIZE(x); i++)
		KUNIT_EXPECT_NOT_NULL(test, x[i]);
	KUNIT_EXPECT_GT(test, rslub_cache_get(s, "fallback_slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "fallback_objects"), ARRAY_SIZE(x));
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	for (i = 0; i < 4; i++)
		rslub_cache_free(s, x[i]);
	rslub_cache_free_bulk(s, ARRAY_SIZE(x) - 4, x + 4);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "fallback_objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "fallback_slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
#else
	kunit_skip(test, "kernel without CONFIG_FAIL_PAGE_ALLOC");
#endif
}

static struct kunit_case rslub_api_cases[] = {
	KUNIT_CASE(create_rejects_bad_names),
	KUNIT_CASE(create_rejects_bad_sizes),
	KUNIT_CASE(create_rejects_bad_align),
	KUNIT_CASE(create_rejects_unsupported_flags),
	KUNIT_CASE(create_duplicate_name_is_eexist),
	KUNIT_CASE(objects_are_aligned),
	KUNIT_CASE(objects_are_distinct_and_reused),
	KUNIT_CASE(gfp_zero_zeroes),
	KUNIT_CASE(ctor_runs_once_per_object),
	KUNIT_CASE(free_null_is_noop),
	KUNIT_CASE(bulk_alloc_and_free),
	KUNIT_CASE(alloc_node_honours_node),
	KUNIT_CASE(destroy_with_live_object_is_ebusy),
	KUNIT_CASE(bad_frees_are_ignored),
	KUNIT_CASE(shrink_returns_zero_and_cache_works),
	KUNIT_CASE(alloc_free_in_hardirq),
	KUNIT_CASE(typesafe_by_rcu_slab_outlives_its_readers),
	KUNIT_CASE(typesafe_by_rcu_destroy_waits),
	KUNIT_CASE(higher_orders_fall_back),
	{}
};

static struct kunit_suite rslub_api_suite = {
	.name = "rslub_api",
	.test_cases = rslub_api_cases,
};

kunit_test_suite(rslub_api_suite);

MODULE_DESCRIPTION("KUnit tests of rslub: public API and SLUB algorithm");
MODULE_LICENSE("GPL");
