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
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"

/* Serves @name, or skips the case on a kernel without the hook. */
static void serve(struct kunit *test, const char *name)
{
	int ret = rslub_serve(name);

	if (ret == -EOPNOTSUPP)
		kunit_skip(test, "kernel without the slab backend hook");
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/*
 * Waits until rslub neither serves nor drains @name. The limit only ends a
 * failing case (a passing one returns as soon as the cache is gone), so it
 * is far above what a slow, loaded TCG guest needs: 60 s.
 */
static long wait_gone(const char *name)
{
	unsigned long end = jiffies + 60 * HZ;
	long n;

	while ((n = rslub_served_objects(name)) != -ENOENT &&
	       time_before(jiffies, end))
		msleep(20);
	return n;
}

/* Waits until @name has @want objects out (30 s at most, as above). */
static long wait_objects(const char *name, long want)
{
	unsigned long end = jiffies + 30 * HZ;
	long n;

	while ((n = rslub_served_objects(name)) != want &&
	       time_before(jiffies, end))
		msleep(20);
	return n;
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

struct rcu_obj {
	struct rcu_head rcu;
	char data[48];
};

/* kfree_rcu() objects of both allocators; destroy waits for them. */
static void kfree_rcu_and_destroy(struct kunit *test)
{
	const char *name = "rslub_kt_rcu";
	struct kmem_cache *s = kmem_cache_create(name, sizeof(struct rcu_obj),
						 0, SLAB_NO_MERGE, NULL);
	struct rcu_obj *o[12];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	o[0] = kmem_cache_alloc(s, GFP_KERNEL);
	o[1] = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, o[0] && o[1]);
	serve(test, name);
	for (i = 2; i < ARRAY_SIZE(o); i++) {
		o[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, o[i]);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 10);
	for (i = 0; i < ARRAY_SIZE(o); i++)
		kfree_rcu(o[i], rcu);
	/* Waits for the kfree_rcu()s; rslub's cache goes with the kernel's. */
	kmem_cache_destroy(s);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), -ENOENT);
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
 * slab (issue 30, finding 1): 16 bytes from the memory before the slab
 * overwrite the first words of its header, the magic and the owner word.
 * The kernel's free of one of the slab's objects then finds no live slab of
 * rslub's there and drops the object (a log line); the slab's count is not
 * touched, so none of its live objects is handed out again. With the
 * [freelist, counters] pair first, the forged count emptied the slab and
 * its live objects were handed out again. The header repaired, every
 * object goes back and the cache drains.
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

static void ctor_fill(void *p)
{
	memset(p, 0x5a, 40);
}

/* Constructor, __GFP_ZERO and node allocations of a served cache. */
static void ctor_zero_and_node(struct kunit *test)
{
	const char *name = "rslub_kt_ctor";
	struct kmem_cache *s = kmem_cache_create(name, 40, 0, 0, ctor_fill);
	struct kmem_cache *z = kmem_cache_create("rslub_kt_zero", 40, 0, SLAB_NO_MERGE,
						 NULL);
	u8 *x, *y;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, z);
	serve(test, "rslub_kt_ctor, rslub_kt_zero");
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	for (i = 0; i < 40; i++)
		KUNIT_EXPECT_EQ(test, x[i], 0x5a);
	kmem_cache_free(s, x);
	y = kmem_cache_alloc_node(z, GFP_KERNEL, first_online_node);
	KUNIT_ASSERT_NOT_NULL(test, y);
	memset(y, 0xff, 40);
	kmem_cache_free(z, y);
	y = kmem_cache_zalloc(z, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, y);
	for (i = 0; i < 40; i++)
		KUNIT_EXPECT_EQ(test, y[i], 0);
	KUNIT_EXPECT_EQ(test, rslub_served_objects("rslub_kt_zero"), 1);
	kmem_cache_free(z, y);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_ctor,-rslub_kt_zero"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	KUNIT_EXPECT_EQ(test, wait_gone("rslub_kt_zero"), -ENOENT);
	kmem_cache_destroy(s);
	kmem_cache_destroy(z);
}

/* What cannot be served is refused, and nothing is half-made. */
static void refusals(struct kunit *test)
{
	struct kmem_cache_args prefill = { .sheaf_capacity = 8 };
	struct kmem_cache *r = kmem_cache_create("rslub_kt_rcu_typesafe", 64, 0,
						 SLAB_TYPESAFE_BY_RCU, NULL);
	struct kmem_cache *p = kmem_cache_create("rslub_kt_prefill", 64,
						 &prefill, 0);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, p);
	ret = rslub_serve("rslub_kt_rcu_typesafe");
	if (ret == -EOPNOTSUPP) {
		kmem_cache_destroy(r);
		kmem_cache_destroy(p);
		kunit_skip(test, "kernel without the slab backend hook");
	}
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_prefill"), -EINVAL);
	/* A glob skips what it cannot serve. */
	KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_pre*"), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_objects("rslub_kt_prefill"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_served_objects("rslub_kt_rcu_typesafe"),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_no_such_cache"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_none*"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_prefill"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve(NULL), -EINVAL);
	kmem_cache_destroy(r);
	kmem_cache_destroy(p);
}

static struct kunit_case rslub_serve_cases[] = {
	KUNIT_CASE(every_free_goes_back_to_its_allocator),
	KUNIT_CASE(kfree_rcu_and_destroy),
	KUNIT_CASE(kfree_nolock_is_deferred),
	KUNIT_CASE(an_overflow_onto_a_served_slab_header_frees_nothing),
	KUNIT_CASE(ctor_zero_and_node),
	KUNIT_CASE(refusals),
	{}
};

static struct kunit_suite rslub_serve_suite = {
	.name = "rslub_serve",
	.test_cases = rslub_serve_cases,
};

kunit_test_suite(rslub_serve_suite);
