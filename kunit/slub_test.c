// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for rslub's SLUB algorithm, seen through the public API and
 * its introspection calls: fast and slow paths, CPU partial lists, node
 * partial lists, the empty-slab cache, NUMA, CPU hotplug, bulk, and
 * concurrency across CPUs. Counters are checked where they make a claim
 * testable. Work done in kthreads is collected and asserted here, in the
 * test thread.
 */
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "rslub.h"
#include "rslub_kunit.h"
#include "slub_test.h"

bool has_free_batch(struct rslub_cache *s)
{
	static int has = -1;

	if (has < 0)
		has = rslub_cache_get(s, "free_batch") >= 0;
	return has;
}

/* At 64 bytes the slab header is in the slab, at 16384 outside it. */
static const unsigned int fast_sizes[] = { 64, 16384 };

static void fast_size_desc(const unsigned int *size, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "size %u", *size);
}

KUNIT_ARRAY_PARAM(fast_sizes, fast_sizes, fast_size_desc);

static void first_alloc_is_slow_then_fast(struct kunit *test)
{
	const unsigned int *size = test->param_value;
	struct rslub_cache *s = make(test, "rslub-s-fast", *size, 0, 0, NULL);
	void *a, *b;

	pin(test, cpumask_first(cpu_online_mask));
	a = rslub_cache_alloc(s, GFP_KERNEL);
	b = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_slowpath"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_slab"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_fastpath"), 1);
	rslub_cache_free(s, b);
	KUNIT_EXPECT_EQ(test, st(s, "free_fastpath"), 1);
	/* LIFO: the object just freed on this CPU comes back first. */
	KUNIT_EXPECT_PTR_EQ(test, rslub_cache_alloc(s, GFP_KERNEL), b);
	rslub_cache_free(s, a);
	rslub_cache_free(s, b);
	unpin();
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void remote_free_is_slow(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-remote", 64, 0, 0, NULL);
	void *a;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	pin(test, c0);
	a = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	pin(test, c1);
	rslub_cache_free(s, a);
	unpin();
	KUNIT_EXPECT_EQ(test, st(s, "free_slowpath"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "free_frozen"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "free_fastpath"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Allocates n objects, expects them distinct, frees them. */
static void expect_distinct(struct kunit *test, struct rslub_cache *s, int n)
{
	void **p = objs_array(test, n);
	int i, j, same = 0;

	for (i = 0; i < n; i++) {
		p[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p[i]);
		for (j = 0; j < i; j++)
			same += p[j] == p[i];
	}
	KUNIT_EXPECT_EQ_MSG(test, same, 0, "an object handed out twice");
	for (i = 0; i < n; i++)
		rslub_cache_free(s, p[i]);
}

/*
 * Double frees through the bulk API: a batch whose tail heads the CPU
 * freelist (it looped the freelist: one object handed out 16 times), one
 * object twice in a batch, and a remote batch whose tail heads the slab's
 * freelist. Each is reported once, the rest of the batch is freed, and
 * nothing is handed out twice or left in use.
 */
static void bulk_double_frees_are_refused(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-bulkdf", 64, 0, 0, NULL);
	void *p[6], *b[3];

	classic(test, s);
	pin(test, c0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 6, p));
	rslub_cache_free(s, p[0]);
	b[0] = p[1];
	b[1] = p[0];
	rslub_cache_free_bulk(s, 2, b);
	KUNIT_EXPECT_EQ(test, get(s, "errors"), 1);
	expect_distinct(test, s, 16);
	b[0] = p[2];
	b[1] = p[3];
	b[2] = p[2];
	rslub_cache_free_bulk(s, 3, b);
	KUNIT_EXPECT_EQ(test, get(s, "errors"), 2);
	expect_distinct(test, s, 16);
	if (c1 != c0) {
		pin(test, c1);
		rslub_cache_free(s, p[4]);
		b[0] = p[5];
		b[1] = p[4];
		rslub_cache_free_bulk(s, 2, b);
		KUNIT_EXPECT_EQ(test, get(s, "errors"), 3);
		pin(test, c0);
		expect_distinct(test, s, 16);
	} else {
		rslub_cache_free(s, p[4]);
		rslub_cache_free(s, p[5]);
	}
	unpin();
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 0);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * The bulk double frees on a slab of the node's partial list (the case the
 * test above leaves out): with cpu_partial 0, a remote free puts a full
 * slab there, a second one heads its freelist, and batches naming that
 * object again, as the tail and twice, are refused; nothing is lost.
 */
static void bulk_double_frees_on_a_node_partial_slab(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-bulkdfn", 64, 0, 0, NULL);
	void **p, *b[3];
	long per, i;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	set(test, s, "cpu_partial", 0);
	per = get(s, "objs_per_slab");
	p = objs_array(test, 2 * per);
	pin(test, c0);
	/* The first slab's objects are p[0..per): full, on no list. */
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 2 * per, p));
	pin(test, c1);
	rslub_cache_free(s, p[0]);
	KUNIT_EXPECT_EQ(test, get(s, "partial"), 1);
	rslub_cache_free(s, p[1]);
	b[0] = p[2];
	b[1] = p[1];
	rslub_cache_free_bulk(s, 2, b);
	KUNIT_EXPECT_EQ(test, get(s, "errors"), 1);
	b[0] = p[3];
	b[1] = p[4];
	b[2] = p[3];
	rslub_cache_free_bulk(s, 3, b);
	KUNIT_EXPECT_EQ(test, get(s, "errors"), 2);
	KUNIT_EXPECT_EQ(test, get(s, "partial"), 1);
	expect_distinct(test, s, 2 * per);
	pin(test, c0);
	for (i = 5; i < 2 * per; i++)
		rslub_cache_free(s, p[i]);
	unpin();
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 0);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * Fills nr_slabs full slabs on CPU c0 and frees everything from c1. The
 * last slab stays c0's CPU slab; the others were full when freed from.
 */
static void fill_then_free_remote(struct kunit *test, struct rslub_cache *s,
				  int nr_slabs, int c0, int c1)
{
	long per = get(s, "objs_per_slab");
	long n = per * nr_slabs, i;
	void **p = objs_array(test, n);

	pin(test, c0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, n, p));
	pin(test, c1);
	for (i = 0; i < n; i++)
		rslub_cache_free(s, p[i]);
	unpin();
}

static void cpu_partial_zero_keeps_cpu_partial_empty(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-cp0", 256, 0, 0, NULL);

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	set(test, s, "cpu_partial", 0);
	set(test, s, "min_partial", 100);
	fill_then_free_remote(test, s, 6, c0, c1);
	KUNIT_EXPECT_EQ(test, get(s, "slabs_cpu_partial"), 0);
	KUNIT_EXPECT_EQ(test, st(s, "cpu_partial_free"), 0);
	/* Full slabs gaining a free object went to the node list instead. */
	KUNIT_EXPECT_GE(test, st(s, "free_add_partial"), 5);
	KUNIT_EXPECT_GE(test, get(s, "partial"), 5);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void remote_frees_fill_cpu_partial_then_drain(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-cp", 256, 0, 0, NULL);
	long limit;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	set(test, s, "cpu_partial", 30);
	limit = DIV_ROUND_UP(30 * 2, get(s, "objs_per_slab"));
	fill_then_free_remote(test, s, 3 * limit, c0, c1);
	/* Each full slab's first free froze it onto c1's partial list... */
	KUNIT_EXPECT_GT(test, st(s, "cpu_partial_free"), 0);
	/* ...which overflowed and was returned to the node. */
	KUNIT_EXPECT_GT(test, st(s, "cpu_partial_drain"), 0);
	KUNIT_EXPECT_LE(test, get(s, "slabs_cpu_partial"), limit);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void node_partials_refill_cpu_partial_up_to_half(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-fill", 256, 0, 0, NULL);
	long per, limit, n, i;
	void **p;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	/* Build 12 partial slabs on the node with CPU partials off. */
	set(test, s, "cpu_partial", 0);
	set(test, s, "min_partial", 100);
	per = get(s, "objs_per_slab");
	n = 12 * per;
	p = objs_array(test, n);
	pin(test, c0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, n, p));
	pin(test, c1);
	for (i = 0; i < n; i += per)
		rslub_cache_free(s, p[i]);
	set(test, s, "cpu_partial", 30);
	limit = DIV_ROUND_UP(30 * 2, per);
	rslub_cache_stat_clear(s, "all");
	/* c1 has no CPU slab: the slow path takes slabs from the node. */
	p[0] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	unpin();
	KUNIT_EXPECT_EQ(test, st(s, "alloc_from_partial"), 1);
	/* It stops once the number moved is greater than cpu_partial/2. */
	KUNIT_EXPECT_EQ(test, st(s, "cpu_partial_node"), limit / 2 + 1);
	for (i = 0; i < n; i++)
		if (i % per)
			rslub_cache_free(s, p[i]);
	rslub_cache_free(s, p[0]);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void empty_slabs_cached_reused_and_shrunk(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-empty", 512, 0, 0, NULL);
	long slabs_before;
	void *o;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	classic(test, s);
	set(test, s, "cpu_partial", 0);
	set(test, s, "min_partial", 0);
	set(test, s, "max_empty", 3);
	fill_then_free_remote(test, s, 6, c0, c1);
	KUNIT_EXPECT_EQ(test, get(s, "empty_slabs"), 3);
	KUNIT_EXPECT_EQ(test, st(s, "empty_cache_add"), 3);
	/* A CPU without a slab reuses a cached one before new pages. */
	slabs_before = st(s, "alloc_slab");
	pin(test, c1);
	o = rslub_cache_alloc(s, GFP_KERNEL);
	unpin();
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_EXPECT_EQ(test, st(s, "empty_cache_hit"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_slab"), slabs_before);
	rslub_cache_free(s, o);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, get(s, "empty_slabs"), 0);
	KUNIT_EXPECT_EQ(test, get(s, "slabs"), 0);
	KUNIT_EXPECT_GT(test, st(s, "empty_cache_release"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void max_empty_zero_frees_at_once(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-empty0", 512, 0, 0, NULL);

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	set(test, s, "cpu_partial", 0);
	set(test, s, "min_partial", 0);
	set(test, s, "max_empty", 0);
	fill_then_free_remote(test, s, 6, c0, c1);
	KUNIT_EXPECT_EQ(test, get(s, "empty_slabs"), 0);
	KUNIT_EXPECT_EQ(test, st(s, "empty_cache_add"), 0);
	/* Only c0's CPU slab is left. */
	KUNIT_EXPECT_EQ(test, get(s, "slabs"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "free_slab"), 5);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void min_partial_keeps_empty_partial_slabs(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-minp", 512, 0, 0, NULL);

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	set(test, s, "cpu_partial", 0);
	set(test, s, "min_partial", 4);
	set(test, s, "max_empty", 0);
	fill_then_free_remote(test, s, 8, c0, c1);
	KUNIT_EXPECT_EQ(test, get(s, "partial"), 4);
	KUNIT_EXPECT_EQ(test, get(s, "slabs"), 5);	/* + c0's CPU slab */
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, get(s, "slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void bulk_free_publishes_a_slab_group_once(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-s-bulk", 128, 0, 0, NULL);
	long per = get(s, "objs_per_slab");
	void **p = objs_array(test, per);
	long before;

	pin(test, cpumask_first(cpu_online_mask));
	/* One whole slab: the CPU slab, after one slow path. */
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, per, p));
	KUNIT_EXPECT_EQ(test, st(s, "alloc_slab"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_fastpath") + st(s, "alloc_slowpath"), per);
	before = st(s, "free_fastpath");
	rslub_cache_free_bulk(s, per, p);
	/* All objects of one slab go back with one cmpxchg16b. */
	KUNIT_EXPECT_EQ(test, st(s, "free_fastpath") - before, 1);
	unpin();
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void alloc_node_and_node_mismatch(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-s-numa", 256, 0, 0, NULL);
	int nid, nodes = 0;
	void *o;

	pin(test, cpumask_first(cpu_online_mask));
	for_each_node_state(nid, N_MEMORY) {
		int i;

		for (i = 0; i < 50; i++) {
			o = rslub_cache_alloc_node(s, GFP_KERNEL, nid);
			KUNIT_ASSERT_NOT_NULL(test, o);
			KUNIT_EXPECT_EQ(test, page_to_nid(virt_to_page(o)), nid);
			rslub_cache_free(s, o);
		}
		nodes++;
	}
	unpin();
	if (nodes > 1)
		KUNIT_EXPECT_GT(test, st(s, "alloc_node_mismatch"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void sizes_reuse_and_keep_contents(struct kunit *test)
{
	static const unsigned int sizes[] = { 8, 16, 24, 40, 64, 96, 128, 200,
					      256, 512, 1024, 2000, 4096, 8192,
					      16384 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct rslub_cache *s = make(test, "rslub-s-sizes", sizes[i], 0, 0, NULL);
		u8 *p[64];

		for (j = 0; j < ARRAY_SIZE(p); j++) {
			p[j] = rslub_cache_alloc(s, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, p[j]);
			memset(p[j], j, sizes[i]);
		}
		for (j = 0; j < ARRAY_SIZE(p); j++) {
			KUNIT_EXPECT_EQ(test, p[j][0], (u8)j);
			KUNIT_EXPECT_EQ(test, p[j][sizes[i] - 1], (u8)j);
			rslub_cache_free(s, p[j]);
		}
		KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
		KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	}
}

static atomic_t slub_ctor_calls;

static void count_ctor(void *obj)
{
	atomic_inc(&slub_ctor_calls);
	memset(obj, 0x3c, 48);
}

static void ctor_count_matches_slabs(struct kunit *test)
{
	struct rslub_cache *s;
	void **p;
	long i, n = 500;

	atomic_set(&slub_ctor_calls, 0);
	s = make(test, "rslub-s-ctor", 48, 0, 0, count_ctor);
	p = objs_array(test, n);
	for (i = 0; i < n; i++) {
		p[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p[i]);
		KUNIT_EXPECT_EQ(test, ((u8 *)p[i])[47], 0x3c);
	}
	KUNIT_EXPECT_EQ(test, (long)atomic_read(&slub_ctor_calls),
			st(s, "alloc_slab") * get(s, "objs_per_slab"));
	for (i = 0; i < n; i++)
		rslub_cache_free(s, p[i]);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void tunables_reject_bad_values(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-s-tune", 64, 0, 0, NULL);
	long long cp = get(s, "cpu_partial");

	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "cpu_partial", -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "cpu_partial", 1LL << 40), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "min_partial", 1001), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "no_such_knob", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, get(s, "cpu_partial"), cp);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, "no_such_stat"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "no_such_attr"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void churn_100k_objects(struct kunit *test)
{
	const long n = 100000;
	struct rslub_cache *s = make(test, "rslub-s-churn", 64, 0, 0, NULL);
	void **p = vzalloc(n * sizeof(*p));
	long i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < n; i++) {
		p[i] = rslub_cache_alloc(s, GFP_KERNEL);
		if (!p[i])
			break;
		*(long *)p[i] = i;
	}
	KUNIT_EXPECT_EQ(test, i, n);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), n);
	for (i = 0; i < 4 * n; i++) {
		long k = get_random_u32_below(n);

		if (*(long *)p[k] != k)
			bad++;
		rslub_cache_free(s, p[k]);
		p[k] = rslub_cache_alloc(s, GFP_KERNEL);
		if (!p[k])
			break;
		*(long *)p[k] = k;
		if (!(i & 4095))
			cond_resched();
	}
	KUNIT_EXPECT_EQ(test, bad, 0L);
	for (i = 0; i < n; i++)
		rslub_cache_free(s, p[i]);
	vfree(p);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static struct kunit_case rslub_slub_cases[] = {
	KUNIT_CASE_PARAM(first_alloc_is_slow_then_fast, fast_sizes_gen_params),
	KUNIT_CASE(remote_free_is_slow),
	KUNIT_CASE(bulk_double_frees_are_refused),
	KUNIT_CASE(bulk_double_frees_on_a_node_partial_slab),
	KUNIT_CASE(cpu_partial_zero_keeps_cpu_partial_empty),
	KUNIT_CASE(remote_frees_fill_cpu_partial_then_drain),
	KUNIT_CASE(node_partials_refill_cpu_partial_up_to_half),
	KUNIT_CASE(empty_slabs_cached_reused_and_shrunk),
	KUNIT_CASE(max_empty_zero_frees_at_once),
	KUNIT_CASE(min_partial_keeps_empty_partial_slabs),
	KUNIT_CASE(bulk_free_publishes_a_slab_group_once),
	KUNIT_CASE(alloc_node_and_node_mismatch),
	KUNIT_CASE(sizes_reuse_and_keep_contents),
	KUNIT_CASE(ctor_count_matches_slabs),
	KUNIT_CASE(tunables_reject_bad_values),
	KUNIT_CASE_SLOW(churn_100k_objects),
	KUNIT_CASE(producer_consumer_across_cpus),
	KUNIT_CASE(every_cpu_hammers_one_cache),
	KUNIT_CASE(cpu_offline_flushes_its_slabs),
	KUNIT_CASE(batched_free_waits_and_is_reused),
	KUNIT_CASE(full_batch_returns_in_slab_groups),
	{}
};

static struct kunit_suite rslub_slub_suite = {
	.name = "rslub_slub",
	.test_cases = rslub_slub_cases,
};

kunit_test_suite(rslub_slub_suite);
