// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rslub_serve: rslub serving kernel kmem_caches (rslub_serve(),
 * the test kernel's slab backend hook). Each case serves a cache of its
 * own, so the rest of the kernel is not touched: every way an object goes
 * back (kmem_cache_free, kfree, the bulk frees with SLUB's and rslub's
 * objects mixed, kfree_rcu, kfree_nolock, krealloc), ksize, kmem_dump_obj,
 * what serving refuses, and the served cache going away once its objects
 * are back. The caches are SLAB_NO_MERGE: a merged cache is served under
 * the name of the cache it was merged into. On a kernel without the hook
 * every case is skipped.
 *
 * This file holds the suites (rslub_serve, rslub_serve_kept,
 * rslub_serve_kmalloc), the helpers the cases share and the cases of the
 * free paths; the kfree_rcu() and SLAB_TYPESAFE_BY_RCU cases are in
 * serve_rcu_test.c, the kernel features a served cache keeps to in
 * serve_features_test.c.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "serve_test.h"

/*
 * The memory cgroup of the task that loaded this module (taken at suite
 * init, which runs in that task), when it is not the root one:
 * scripts/guest/kunit.sh loads the module from a child memory cgroup, so
 * that the charging cases charge a real one.
 */
struct mem_cgroup *kt_memcg;

/*
 * The case that leaves a cache kept for good (an isolated slab): rslub can
 * no longer be unloaded after it, so only the served-cache guest runs it,
 * last (scripts/guest/serve.sh: run_kept=1).
 */
static bool run_kept;
module_param(run_kept, bool, 0444);
MODULE_PARM_DESC(run_kept, "Run rslub_serve_kept (rslub cannot be unloaded afterwards)");

/* Serves @name, or skips the case on a kernel without the hook. */
void serve(struct kunit *test, const char *name)
{
	int ret = rslub_serve(name);

	if (ret == -EOPNOTSUPP)
		kunit_skip(test, "kernel without the slab backend hook");
	if (IS_ENABLED(CONFIG_KASAN) && ret == -EINVAL)
		kunit_skip(test, "KASAN is on: the kernel serves no cache");
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/*
 * Waits until rslub neither serves nor drains @name. The limit only ends a
 * failing case (a passing one returns as soon as the cache is gone), so it
 * is far above what a slow, loaded TCG guest needs: 60 s.
 */
long wait_gone(const char *name)
{
	unsigned long end = jiffies + 60 * HZ;
	long n;

	/* Each empty request is a look of the reaper (its own back off). */
	while ((n = rslub_served_objects(name)) != -ENOENT &&
	       time_before(jiffies, end)) {
		msleep(20);
		rslub_serve("");
	}
	return n;
}

/* Waits until @name has @want objects out (30 s at most, as above). */
long wait_objects(const char *name, long want)
{
	unsigned long end = jiffies + 30 * HZ;
	long n;

	while ((n = rslub_served_objects(name)) != want &&
	       time_before(jiffies, end))
		msleep(20);
	return n;
}

/*
 * Counts SLUB's reports in this case instead of warning: SLUB looks for
 * this named resource (slab_in_kunit_test()), as its own KUnit suite does.
 */
void expect_slab_errors(struct kunit *test)
{
	static struct kunit_resource res;
	static int errors;
	int ret;

	errors = 0;
	ret = kunit_add_named_resource(test, NULL, NULL, &res, "slab_errors",
				       &errors);
	KUNIT_ASSERT_EQ(test, ret, 0);
}

static void every_free_goes_back_to_its_allocator(struct kunit *test)
{
	const char *name = "rslub_kt_serve";
	struct kmem_cache *s = kmem_cache_create(name, 96, 0, SLAB_NO_MERGE, NULL);
	void *pre, *a[8], *b, *grown, *p[3];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	/* Allocated by SLUB before serving starts: goes back to SLUB. */
	pre = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pre);
	serve(test, name);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	for (i = 0; i < ARRAY_SIZE(a); i++) {
		a[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, a[i]);
		memset(a[i], 0xab, 96);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 8);
	KUNIT_EXPECT_EQ(test, ksize(a[0]), 96);
	KUNIT_EXPECT_TRUE(test, kmem_dump_obj((char *)a[0] + 5));

	kmem_cache_free(s, a[0]);
	kfree(a[1]);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 6);
	/* Both allocators' objects in one array. */
	p[0] = a[2];
	p[1] = pre;
	p[2] = a[3];
	kmem_cache_free_bulk(s, 3, p);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 4);
	pre = kmem_cache_alloc(s, GFP_KERNEL);	/* rslub's now */
	KUNIT_ASSERT_NOT_NULL(test, pre);
	p[0] = a[4];
	p[1] = a[5];
	p[2] = pre;
	kfree_bulk(3, p);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 2);

	/* krealloc: shrinking keeps the object, growing frees it to rslub. */
	KUNIT_EXPECT_PTR_EQ(test, krealloc(a[6], 50, GFP_KERNEL), a[6]);
	grown = krealloc(a[6], 1000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, grown);
	KUNIT_EXPECT_EQ(test, ((u8 *)grown)[49], 0xab);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	kfree(grown);

	/* Serving stops: SLUB allocates, rslub's last object still returns. */
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_serve"), 0);
	b = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	kmem_cache_free(s, a[7]);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_free(s, b);
	kmem_cache_destroy(s);
}

/*
 * kmem_cache_alloc_bulk() of a served cache takes every object from rslub,
 * through SLUB's post-allocation hook (__GFP_ZERO); kmem_cache_free_bulk()
 * hands rslub's back in one call and SLUB's, in the same array, to SLUB.
 * On a machine with two nodes, two of SLUB's objects are from the other
 * node: SLUB sorts them out with rslub's (not for its sheaf), and the
 * hook then parts the two (a mixed list once lost and doubled objects).
 */
static void bulk_calls_are_served(struct kunit *test)
{
	const char *name = "rslub_kt_bulk";
	struct kmem_cache *s = kmem_cache_create(name, 80, 0, SLAB_NO_MERGE, NULL);
	void *pre[4], *p[40];
	int i, nid, other = NUMA_NO_NODE;

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_TRUE(test, kmem_cache_alloc_bulk(s, GFP_KERNEL, 2, pre));
	for_each_node_state(nid, N_MEMORY) {
		if (nid != numa_mem_id()) {
			other = nid;
			break;
		}
	}
	for (i = 2; i < ARRAY_SIZE(pre); i++) {
		pre[i] = kmem_cache_alloc_node(s, GFP_KERNEL, other);
		KUNIT_ASSERT_NOT_NULL(test, pre[i]);
	}
	serve(test, name);
	KUNIT_ASSERT_TRUE(test, kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ZERO,
						      36, p));
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 36);
	for (i = 0; i < 36; i++) {
		KUNIT_EXPECT_NULL(test, memchr_inv(p[i], 0, 80));
		memset(p[i], 0x5a, 80);
	}
	/* SLUB's objects among rslub's, first, in the middle and last. */
	swap(pre[0], p[0]);
	swap(pre[1], p[17]);
	for (i = 0; i < ARRAY_SIZE(pre); i++)
		p[36 + i] = pre[i];
	kmem_cache_free_bulk(s, ARRAY_SIZE(p), p);
	/* Each to its own allocator: rslub refused none of SLUB's. */
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "errors"), 0);
	KUNIT_ASSERT_TRUE(test, kmem_cache_alloc_bulk(s, GFP_KERNEL, 36, p));
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 36);
	kmem_cache_free_bulk(s, 36, p);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_bulk"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/* kfree_nolock() defers an rslub object to the kernel's irq_work. */
static void kfree_nolock_is_deferred(struct kunit *test)
{
	const char *name = "rslub_kt_nolock";
	struct kmem_cache *s = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	void *x;

	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	kfree_nolock(x);
	KUNIT_EXPECT_EQ(test, wait_objects(name, 0), 0);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_nolock"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * rslub_badinput's an_overflow_onto_a_slab_header_frees_nothing on a served
 * slab: 16 bytes from the memory before the slab overwrite the first words
 * of its header, the magic and the owner word. The kernel's free of one of
 * the slab's objects then finds no live slab of rslub's there and drops the
 * object (a log line); the slab's count is not touched, so none of its live
 * objects is handed out again. With the [freelist, counters] pair first,
 * the forged count emptied the slab and its live objects were handed out
 * again. The header repaired, every object goes back and the cache drains.
 */
static void an_overflow_onto_a_served_slab_header_frees_nothing(struct kunit *test)
{
	const char *name = "rslub_kt_prefix";
	struct kmem_cache *s = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	unsigned long forged[2] = { 0, 1 }, saved[2], bytes = 0;
	unsigned int n = 192, i, j, in_slab = 0, victim = 0;
	void **objs = kunit_kcalloc(test, n, sizeof(void *), GFP_KERNEL);
	void **fresh = kunit_kcalloc(test, n, sizeof(void *), GFP_KERNEL);
	u8 *base = NULL;

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, fresh);
	serve(test, name);
	for (i = 0; i < n; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	KUNIT_ASSERT_EQ(test, rslub_served_objects(name), n);
	/* The slab (a compound page of rslub's) most of whose objects are ours. */
	for (j = 0; j < n; j++) {
		struct page *head = virt_to_head_page(objs[j]);
		u8 *b = page_address(head);
		unsigned int c = 0;

		for (i = 0; i < n; i++)
			c += (unsigned long)((u8 *)objs[i] - b) < page_size(head);
		if (c > in_slab) {
			in_slab = c;
			base = b;
			bytes = page_size(head);
			victim = j;
		}
	}
	/* Full: all its objects but the room of rslub's 64-byte header. */
	KUNIT_ASSERT_EQ(test, in_slab, bytes / 64 - 1);
	memcpy(saved, base, sizeof(saved));
	memcpy(base, forged, sizeof(forged));
	kmem_cache_free(s, objs[victim]);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), n);
	for (i = 0; i < n; i++) {
		fresh[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fresh[i]);
		KUNIT_EXPECT_FALSE_MSG(test, (unsigned long)((u8 *)fresh[i] - base) < bytes,
				       "object %u of the new ones is in the damaged slab", i);
	}
	/* The header repaired, everything goes back, the dropped object too. */
	memcpy(base, saved, sizeof(saved));
	for (i = 0; i < n; i++) {
		kmem_cache_free(s, fresh[i]);
		kmem_cache_free(s, objs[i]);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_prefix"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

static struct kunit_case rslub_serve_cases[] = {
	KUNIT_CASE(every_free_goes_back_to_its_allocator),
	KUNIT_CASE(bulk_calls_are_served),
	KUNIT_CASE(kfree_rcu_and_destroy),
	KUNIT_CASE(kfree_rcu_list_path_96),
	KUNIT_CASE(kfree_rcu_list_path_192),
	KUNIT_CASE(kfree_rcu_list_path_200),
	KUNIT_CASE(kfree_nolock_is_deferred),
	KUNIT_CASE(an_overflow_onto_a_served_slab_header_frees_nothing),
	KUNIT_CASE(ctor_zero_and_node),
	KUNIT_CASE(refusals),
	KUNIT_CASE(charging_a_served_object),
	KUNIT_CASE(allocation_profiling_switched_on),
	KUNIT_CASE(destroy_with_objects_out),
	KUNIT_CASE(usercopy_from_a_damaged_slab),
	KUNIT_CASE(dma32_slabs_stay_below_4g),
	KUNIT_CASE(higher_orders_fail_softly),
	KUNIT_CASE(init_on_free_objects_come_back_zero),
	KUNIT_CASE(serving_races_with_destroy),
	KUNIT_CASE(typesafe_by_rcu_served_under_a_reader),
	KUNIT_CASE(prefilled_sheaves_come_from_rslub),
	KUNIT_CASE(a_cache_address_reused_before_serving),
	KUNIT_CASE(kfence_samples_a_served_cache),
	{}
};

/* Runs in the task loading the module: its memory cgroup, if a child. */
static int serve_suite_init(struct kunit_suite *suite)
{
	struct mem_cgroup *memcg = current->mm ? get_mem_cgroup_from_mm(current->mm) : NULL;

	if (memcg && mem_cgroup_is_root(memcg)) {
		mem_cgroup_put(memcg);
		memcg = NULL;
	}
	kt_memcg = memcg;
	return 0;
}

static void serve_suite_exit(struct kunit_suite *suite)
{
	mem_cgroup_put(kt_memcg);
	kt_memcg = NULL;
}

static struct kunit_suite rslub_serve_suite = {
	.name = "rslub_serve",
	.suite_init = serve_suite_init,
	.suite_exit = serve_suite_exit,
	.test_cases = rslub_serve_cases,
};

/*
 * A served slab isolated after a reported corruption outlives serving: the
 * kernel may still hold its objects and free them, so the rslub cache is
 * kept for good (and with it rslub), never destroyed by the reaper nor with
 * the kernel cache. A freed object's free pointer is overwritten (a use
 * after free); the next allocation reports it and isolates the CPU slab,
 * whose other objects are still out. Before, the reaper destroyed the cache
 * once the counts (which leave the isolated slab out) said empty, and the
 * frees that followed read the freed cache.
 */
static void an_isolated_served_slab_keeps_its_cache(struct kunit *test)
{
	const char *name = "rslub_kt_kept";
	struct kmem_cache *s;
	u8 *x[8], *y;
	int i;

	if (!run_kept)
		kunit_skip(test,
			   "leaves rslub loaded for good: run by the serve guest (run_kept=1)");
	s = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	expect_slab_errors(test);
	serve(test, name);
	migrate_disable();
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		x[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, x[i]);
	}
	kmem_cache_free(s, x[7]);
	memset(x[7], 0xa5, 64);
	y = kmem_cache_alloc(s, GFP_KERNEL);
	migrate_enable();
	KUNIT_ASSERT_NOT_NULL(test, y);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "isolated_slabs"), 1);
	KUNIT_EXPECT_GE(test, rslub_served_get(name, "errors"), 1);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_kept"), 0);
	for (i = 0; i < 7; i++)
		kmem_cache_free(s, x[i]);
	kmem_cache_free(s, y);
	/* Looks of the reaper (at 1 and 3 s, and one asked for): it stays. */
	rslub_serve("");
	msleep(3500);
	KUNIT_EXPECT_GE(test, rslub_served_objects(name), 0);
	kmem_cache_destroy(s);
	KUNIT_EXPECT_GE(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "isolated_slabs"), 1);
}

static struct kunit_case rslub_serve_kept_cases[] = {
	KUNIT_CASE(an_isolated_served_slab_keeps_its_cache),
	{}
};

static struct kunit_suite rslub_serve_kept_suite = {
	.name = "rslub_serve_kept",
	.test_cases = rslub_serve_kept_cases,
};

static struct kunit_case rslub_serve_kmalloc_cases[] = {
	KUNIT_CASE(kvfree_rcu_list_path_kmalloc_96),
	KUNIT_CASE(kfree_rcu_list_path_kmalloc_192),
	{}
};

static struct kunit_suite rslub_serve_kmalloc_suite = {
	.name = "rslub_serve_kmalloc",
	.test_cases = rslub_serve_kmalloc_cases,
};

kunit_test_suites(&rslub_serve_suite, &rslub_serve_kept_suite,
		  &rslub_serve_kmalloc_suite);
