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
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/alloc_tag.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ucopysize.h>

#include "rslub.h"

/*
 * The memory cgroup of the task that loaded this module (taken at suite
 * init, which runs in that task), when it is not the root one:
 * scripts/guest-kunit.sh loads the module from a child memory cgroup, so
 * that the charging cases charge a real one.
 */
static struct mem_cgroup *kt_memcg;

/*
 * The case that leaves a cache kept for good (an isolated slab): rslub can
 * no longer be unloaded after it, so only the served-cache guest runs it,
 * last (scripts/guest-serve.sh: run_kept=1).
 */
static bool run_kept;
module_param(run_kept, bool, 0444);
MODULE_PARM_DESC(run_kept, "Run rslub_serve_kept (rslub cannot be unloaded afterwards)");

/*
 * Allocation profiling can be switched on at run time (the kernel was
 * booted with it supported: /proc/allocinfo exists; scripts/guest-kunit.sh
 * passes profiling=1 then). Switched on without that support, the
 * kernel's own tags have no counters: SLUB's allocations oops.
 */
static bool profiling;
module_param(profiling, bool, 0444);
MODULE_PARM_DESC(profiling, "Allocation profiling may be switched on (boot had it supported)");

/* Serves @name, or skips the case on a kernel without the hook. */
static void serve(struct kunit *test, const char *name)
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
static long wait_gone(const char *name)
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

/*
 * kfree_rcu()'s list path. With no page of pointer arrays at hand,
 * kvfree_call_rcu() links the objects by their rcu_heads instead (it
 * writes the head's first word), and after the grace period finds each
 * object's start from its rcu_head's page (kvmalloc_obj_start_addr()):
 * by SLUB's arithmetic on s->size, that lands inside a neighbour of an
 * object of rslub's layout (its slab header comes first), so the free was
 * refused and, with init_on_free=1, the live neighbour wiped. The head
 * sits 40 bytes into the object, so the start must be found, not assumed.
 */
struct kt_rcu_mid {
	char before[40];
	struct rcu_head rcu;
};

/* The first word of a head kfree_rcu() has not linked yet. */
#define KT_RCU_UNLINKED ((struct rcu_head *)0x5a5a5a5a5a5a5a5aUL)
/* Pairs allocated at most, and list-path frees wanted at least. */
#define KT_RCU_PAIRS 8192
#define KT_RCU_LISTED 256

/* A byte of live object @i's pattern, at offset @j. */
static u8 kt_rcu_byte(unsigned int i, unsigned int j)
{
	return (u8)(i * 131 + j * 7 + 1);
}

/*
 * Waits for every kfree_rcu() in flight: kmem_cache_destroy() does
 * (kvfree_rcu_barrier() itself is not exported).
 */
static void kt_kfree_rcu_barrier(struct kunit *test)
{
	struct kmem_cache *b = kmem_cache_create("rslub_kt_rcu_barrier", 8, 0,
						 SLAB_NO_MERGE, NULL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	kmem_cache_destroy(b);
}

struct kt_rcu_run {
	void **o;		/* 2 * KT_RCU_PAIRS objects */
	unsigned int pairs;	/* odd objects freed by kfree_rcu() */
	unsigned int listed;	/* of those, freed by the list path */
};

/*
 * Allocates pairs of objects of @size bytes (from @s, or kmalloc() when
 * NULL), fills them, then, with preemption off, frees the odd ones by
 * kfree_rcu() (kvfree_rcu() when @kv) until KT_RCU_LISTED of them took
 * the list path. Preemption off keeps this CPU's page cache of pointer
 * arrays from being refilled (its work item runs on this CPU) and every
 * object from being freed (no grace period ends): once the arrays are
 * full, every free takes the list path, and each is counted by its head.
 */
static void kt_rcu_free_odd(struct kunit *test, struct kmem_cache *s,
			    unsigned int size, bool kv, struct kt_rcu_run *r)
{
	unsigned int i, j;

	r->o = kvcalloc(2 * KT_RCU_PAIRS, sizeof(void *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->o);
	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		u8 *x = s ? kmem_cache_alloc(s, GFP_KERNEL) : kmalloc(size, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, x);
		for (j = 0; j < size; j++)
			x[j] = kt_rcu_byte(i, j);
		r->o[i] = x;
	}
	r->pairs = 0;
	r->listed = 0;
	preempt_disable();
	for (i = 1; i < 2 * KT_RCU_PAIRS && r->listed < KT_RCU_LISTED; i += 2) {
		struct kt_rcu_mid *m = r->o[i];

		WRITE_ONCE(m->rcu.next, KT_RCU_UNLINKED);
		if (kv)
			kvfree_rcu(m, rcu);
		else
			kfree_rcu(m, rcu);
		r->listed += READ_ONCE(m->rcu.next) != KT_RCU_UNLINKED;
		r->o[i] = NULL;
		r->pairs++;
	}
	preempt_enable();
	kunit_info(test, "%u objects by kfree_rcu(), %u of them by its list path",
		   r->pairs, r->listed);
}

/* Live objects whose bytes changed since kt_rcu_free_odd() filled them. */
static unsigned int kt_rcu_damaged(struct kt_rcu_run *r, unsigned int size)
{
	unsigned int i, j, bad = 0;

	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		u8 *x = r->o[i];

		if (!x)
			continue;
		for (j = 0; j < size; j++) {
			if (x[j] != kt_rcu_byte(i, j)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* Frees what kt_rcu_free_odd() left live, and its array. */
static void kt_rcu_free_rest(struct kmem_cache *s, struct kt_rcu_run *r)
{
	unsigned int i;

	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		if (!r->o[i])
			continue;
		if (s)
			kmem_cache_free(s, r->o[i]);
		else
			kfree(r->o[i]);
	}
	kvfree(r->o);
}

/*
 * A served cache of @size-byte objects: objects freed by kfree_rcu()'s
 * list path go back to rslub, their live neighbours keep every byte (with
 * init_on_free=1 a wrong start would wipe one), nothing is refused, and
 * the cache drains and is destroyed without a warning.
 */
static void kt_rcu_list_path_on(struct kunit *test, const char *name,
				unsigned int size)
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
	struct kt_rcu_run r;
	char stop[40];

	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	kt_rcu_free_odd(test, s, size, false, &r);
	kt_kfree_rcu_barrier(test);
	KUNIT_EXPECT_GE(test, r.listed, KT_RCU_LISTED);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "errors"), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name),
			(long)(2 * KT_RCU_PAIRS - r.pairs));
	KUNIT_EXPECT_EQ(test, kt_rcu_damaged(&r, size), 0);
	kt_rcu_free_rest(s, &r);
	snprintf(stop, sizeof(stop), "-%s", name);
	KUNIT_EXPECT_EQ(test, rslub_serve(stop), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

static void kfree_rcu_list_path_96(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu96", 96);
}

static void kfree_rcu_list_path_192(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu192", 192);
}

static void kfree_rcu_list_path_200(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu200", 200);
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

/*
 * What cannot be served is refused, and nothing is half-made. On the test
 * kernel (no SLUB debugging) the one reason left is allocation profiling
 * switched on, tried where the boot allows it (profiling=1).
 */
static void refusals(struct kunit *test)
{
	const char *name = "rslub_kt_refused";
	struct kmem_cache *r = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, r);
	ret = rslub_serve("rslub_kt_no_such_cache");
	if (ret == -EOPNOTSUPP) {
		kmem_cache_destroy(r);
		kunit_skip(test, "kernel without the slab backend hook");
	}
	KUNIT_EXPECT_EQ(test, ret, -ENOENT);
#ifdef CONFIG_MEM_ALLOC_PROFILING
	if (profiling && !mem_alloc_profiling_enabled()) {
		static_branch_enable(&mem_alloc_profiling_key);
		KUNIT_EXPECT_EQ(test, rslub_serve(name), -EINVAL);
		/* A glob skips what it cannot serve. */
		KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_refus*"), 0);
		KUNIT_EXPECT_EQ(test, rslub_served_objects(name), -ENOENT);
		static_branch_disable(&mem_alloc_profiling_key);
	}
#endif
	KUNIT_EXPECT_EQ(test, rslub_serve("rslub_kt_none*"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_refused"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_serve(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_served_get("rslub_kt_no_such_cache", "errors"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_served_get(NULL, "errors"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_served_shrink("rslub_kt_no_such_cache"), -ENOENT);
	KUNIT_EXPECT_EQ(test, rslub_served_shrink(NULL), -ENOENT);
	kmem_cache_destroy(r);
}

/*
 * Counts SLUB's reports in this case instead of warning: SLUB looks for
 * this named resource (slab_in_kunit_test()), as its own KUnit suite does.
 */
static void expect_slab_errors(struct kunit *test)
{
	static struct kunit_resource res;
	static int errors;
	int ret;

	errors = 0;
	ret = kunit_add_named_resource(test, NULL, NULL, &res, "slab_errors",
				       &errors);
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/*
 * rslub's slabs have no object count for SLUB's object extensions, so
 * nothing may ask for them. kmem_cache_charge() of a served object from a
 * child memory cgroup leaves it uncharged (before, it wrote through a
 * zero-sized vector: an oops); a request SLUB would charge goes to SLUB, a
 * bulk one too. A SLAB_ACCOUNT cache is served too: its allocations from
 * the root cgroup (this kthread's), which SLUB does not charge either,
 * come from rslub, those from a child cgroup from SLUB.
 */
static void charge_one(struct kunit *test, const char *name, slab_flags_t flags)
{
	struct kmem_cache *s = kmem_cache_create(name, 128, 0,
						 SLAB_NO_MERGE | flags, NULL);
	struct mem_cgroup *old;
	char stop[40];
	void *x, *y, *z[3];
	bool bulk;

	KUNIT_ASSERT_NOT_NULL(test, s);
	snprintf(stop, sizeof(stop), "-%s", name);
	serve(test, name);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_EXPECT_EQ_MSG(test, rslub_served_objects(name), 1, "%s", name);
	if (!kt_memcg) {
		kmem_cache_free(s, x);
		KUNIT_EXPECT_EQ(test, rslub_serve(stop), 0);
		KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
		kmem_cache_destroy(s);
		kunit_skip(test, "module not loaded from a child memory cgroup");
	}
	old = set_active_memcg(kt_memcg);
	KUNIT_EXPECT_TRUE(test, memcg_kmem_online());
	KUNIT_EXPECT_TRUE(test, kmem_cache_charge(x, GFP_KERNEL));
	y = kmem_cache_alloc(s, GFP_KERNEL | __GFP_ACCOUNT);
	bulk = kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ACCOUNT,
				     ARRAY_SIZE(z), z);
	set_active_memcg(old);
	KUNIT_ASSERT_NOT_NULL(test, y);
	KUNIT_ASSERT_TRUE(test, bulk);
	KUNIT_EXPECT_EQ_MSG(test, rslub_served_objects(name), 1, "%s", name);
	kmem_cache_free_bulk(s, ARRAY_SIZE(z), z);
	kmem_cache_free(s, y);
	kmem_cache_free(s, x);
	KUNIT_EXPECT_EQ(test, rslub_serve(stop), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

static void charging_a_served_object(struct kunit *test)
{
	charge_one(test, "rslub_kt_charge", 0);
	charge_one(test, "rslub_kt_account", SLAB_ACCOUNT);
}

/*
 * The missing object extensions again, met through allocation profiling,
 * whose tags live in them: profiling switched on while a cache is served
 * (sysctl vm.mem_profiling=1 flips this key, and nothing else). New
 * objects come from SLUB, which tags them; rslub's objects still go back
 * to rslub. Before, the served allocation reached the tagging hook: an
 * oops.
 */
static void allocation_profiling_switched_on(struct kunit *test)
{
#ifdef CONFIG_MEM_ALLOC_PROFILING
	const char *name = "rslub_kt_profiled";
	struct kmem_cache *s;
	void *x, *y;

	if (!profiling)
		kunit_skip(test, "profiling=0: boot with sysctl.vm.mem_profiling=0 to test it");
	if (mem_alloc_profiling_enabled())
		kunit_skip(test, "allocation profiling is already on");
	s = kmem_cache_create(name, 128, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	static_branch_enable(&mem_alloc_profiling_key);
	y = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	kmem_cache_free(s, x);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	kmem_cache_free(s, y);
	static_branch_disable(&mem_alloc_profiling_key);
	KUNIT_EXPECT_NOT_NULL(test, y);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_profiled"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
#else
	kunit_skip(test, "kernel without CONFIG_MEM_ALLOC_PROFILING");
#endif
}

/*
 * kmem_cache_destroy() of a served cache whose objects rslub still has out.
 * As SLUB does with its own, the kernel keeps the cache (and reports it,
 * counted here instead of warning); the object is freed through it later
 * and the rslub cache drains and goes. Before, the kmem_cache was freed and
 * that free read it.
 */
static void destroy_with_objects_out(struct kunit *test)
{
	const char *name = "rslub_kt_orphan";
	struct kmem_cache *s = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	void *x;

	KUNIT_ASSERT_NOT_NULL(test, s);
	expect_slab_errors(test);
	serve(test, name);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	kmem_cache_destroy(s);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	kmem_cache_free(s, x);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
}

/*
 * The usercopy check of a live object in a served slab whose header an
 * overflow damaged. rslub finds the object from the cache's geometry, not
 * the header, so the copy is allowed (before, the check found no object and
 * killed the task); a copy past the object's end is still refused by the
 * bounds the object start gives (not run: it BUGs).
 */
static void usercopy_from_a_damaged_slab(struct kunit *test)
{
	const char *name = "rslub_kt_usercopy";
	struct kmem_cache *s = kmem_cache_create_usercopy(name, 96, 0, SLAB_NO_MERGE,
							  0, 96, NULL);
	unsigned long saved[2], forged[2] = { 0, 1 };
	u8 *x, *base;

	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	x = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	base = page_address(virt_to_head_page(x));
	memcpy(saved, base, sizeof(saved));
	memcpy(base, forged, sizeof(forged));
#ifdef CONFIG_HARDENED_USERCOPY
	/* What copy_to_user() calls for a size not known at build time. */
	__check_object_size(x + 8, 80, true);
#endif
	KUNIT_EXPECT_TRUE(test, kmem_dump_obj(x + 8));
	memcpy(base, saved, sizeof(saved));
	kmem_cache_free(s, x);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_usercopy"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * A served SLAB_CACHE_DMA32 cache's slabs come from below 4 GiB, as SLUB's
 * do, even when asked for on a node whose memory is all above it (the guest
 * running this has one: scripts/check.sh). Before, rslub took its pages
 * with the caller's gfp alone.
 */
static void dma32_slabs_stay_below_4g(struct kunit *test)
{
	const char *name = "rslub_kt_dma32";
	struct kmem_cache *s;
	int nid, high = NUMA_NO_NODE, i;
	void *x[8];

	for_each_online_node(nid) {
		struct zone *z = &NODE_DATA(nid)->node_zones[ZONE_NORMAL];

		if (populated_zone(z) && !populated_zone(&NODE_DATA(nid)->node_zones[ZONE_DMA32]))
			high = nid;
	}
	if (high == NUMA_NO_NODE)
		kunit_skip(test, "no node with memory above 4 GiB only");
	s = kmem_cache_create(name, 256, 0, SLAB_NO_MERGE | SLAB_CACHE_DMA32, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		x[i] = kmem_cache_alloc_node(s, GFP_KERNEL, high);
		KUNIT_ASSERT_NOT_NULL(test, x[i]);
		KUNIT_EXPECT_LT(test, (u64)virt_to_phys(x[i]), 1ULL << 32);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), ARRAY_SIZE(x));
	for (i = 0; i < ARRAY_SIZE(x); i++)
		kmem_cache_free(s, x[i]);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_dma32"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * rslub's slabs of order > 0 are asked for lightly (no retry, no warning,
 * no reserves); when the page allocator says no, SLUB serves the object
 * with its own fallback to its minimum order. Order 1 and up fail for this
 * task (fail_page_alloc, set up by scripts/guest-kunit.sh: min-order 1,
 * task-filter, verbose 2). Every allocation succeeds; none is rslub's; and
 * the guest's log has no stack of a failed request made without
 * __GFP_NOWARN (judged by scripts/check.sh: before, rslub's order-3 request
 * printed one). That __GFP_NORETRY and __GFP_NOMEMALLOC are set too is read
 * in the hook, not tested.
 */
static void higher_orders_fail_softly(struct kunit *test)
{
#ifdef CONFIG_FAIL_PAGE_ALLOC
	const char *name = "rslub_kt_order";
	struct kmem_cache *s;
	void *x[16];
	int i;

	s = kmem_cache_create(name, 2048, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	KUNIT_ASSERT_GT(test, rslub_served_get(name, "order"), 0);
	current->make_it_fail = 1;
	for (i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = kmem_cache_alloc(s, GFP_KERNEL);
	current->make_it_fail = 0;
	for (i = 0; i < ARRAY_SIZE(x); i++)
		KUNIT_EXPECT_NOT_NULL(test, x[i]);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	for (i = 0; i < ARRAY_SIZE(x); i++)
		kmem_cache_free(s, x[i]);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_order"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
#else
	kunit_skip(test, "kernel without CONFIG_FAIL_PAGE_ALLOC");
#endif
}

/*
 * With init_on_free=1 (scripts/check.sh boots one guest so), a served
 * object comes back all zero, rslub's free pointer included: the kernel
 * wipes an object when it is freed, before rslub writes its free pointer
 * into it, so that word is cleared again when the object is handed out.
 */
static void init_on_free_objects_come_back_zero(struct kunit *test)
{
	const char *name = "rslub_kt_wiped";
	struct kmem_cache *s;
	u8 *x[4];
	int i, j;

	if (!want_init_on_free())
		kunit_skip(test, "init_on_free is off (boot with init_on_free=1)");
	s = kmem_cache_create(name, 64, 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		x[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, x[i]);
		memset(x[i], 0xff, 64);
	}
	for (i = 0; i < ARRAY_SIZE(x); i++)
		kmem_cache_free(s, x[i]);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		x[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, x[i]);
		for (j = 0; j < 64; j++)
			KUNIT_EXPECT_EQ_MSG(test, x[i][j], 0, "object %d byte %d", i, j);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), ARRAY_SIZE(x));
	for (i = 0; i < ARRAY_SIZE(x); i++)
		kmem_cache_free(s, x[i]);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_wiped"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * A SLAB_TYPESAFE_BY_RCU kernel cache served. An RCU reader (a kthread in a
 * read section) keeps reading a served object while the test frees it,
 * allocates and frees again, and shrinks rslub's cache: the slab leaves the
 * cache but its pages wait for the reader (rcu_pending_slabs above 0 while
 * it is inside), and the reader sees only what the test wrote (neither a
 * poison nor a free pointer where it reads: the cache sets a
 * freeptr_offset, which rslub keeps to). Asserted here from what the reader
 * counted.
 */
struct typesafe_obj {
	unsigned long seq;
	unsigned long freeptr;	/* The cache's freeptr_offset. */
	char data[80];
};

struct served_reader {
	unsigned long *word;
	unsigned long ok[2];
	struct completion in, out;
	atomic_t leave;
	unsigned long reads, bad;
};

static int served_reader_fn(void *p)
{
	struct served_reader *r = p;

	rcu_read_lock();
	complete(&r->in);
	while (!atomic_read(&r->leave)) {
		unsigned long v = READ_ONCE(*r->word);

		if (v != r->ok[0] && v != r->ok[1])
			r->bad++;
		r->reads++;
		cpu_relax();
	}
	rcu_read_unlock();
	complete(&r->out);
	return 0;
}

static void typesafe_by_rcu_served_under_a_reader(struct kunit *test)
{
	const char *name = "rslub_kt_typesafe";
	struct kmem_cache_args args = {
		.freeptr_offset = offsetof(struct typesafe_obj, freeptr),
		.use_freeptr_offset = true,
	};
	struct served_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct typesafe_obj *o, *again;
	struct kmem_cache *s;
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, r);
	s = kmem_cache_create(name, sizeof(*o), &args, SLAB_TYPESAFE_BY_RCU);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "typesafe_by_rcu"), 1);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	r->word = &o->seq;
	r->ok[0] = 0x5afe;
	r->ok[1] = 0xa9a1;
	o->seq = r->ok[0];
	init_completion(&r->in);
	init_completion(&r->out);
	t = kthread_run(served_reader_fn, r, "rslub_kt_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->in);

	kmem_cache_free(s, o);
	again = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, again);
	if (again) {
		again->seq = r->ok[1];
		kmem_cache_free(s, again);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_shrink(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "slabs"), 0);
	/* Time for a grace period, were the reader not inside. */
	msleep(100);
	KUNIT_EXPECT_GT(test, rslub_served_get(name, "rcu_pending_slabs"), 0);

	atomic_set(&r->leave, 1);
	wait_for_completion(&r->out);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "rcu_pending_slabs"), 0);
	KUNIT_EXPECT_GT(test, r->reads, 0ul);
	KUNIT_EXPECT_EQ(test, r->bad, 0ul);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_typesafe"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * The sheaf prefill API of a served cache. A sheaf prefilled before serving
 * holds SLUB's objects; refilled while serving it gets rslub's beside them;
 * a new sheaf, and an oversize one, get rslub's. Returned, a sheaf gives
 * its unused objects back to their allocators (SLUB keeps no sheaf that may
 * hold rslub's objects), and objects taken from a sheaf go back to rslub
 * when freed.
 */
static void prefilled_sheaves_come_from_rslub(struct kunit *test)
{
#ifdef CONFIG_SLAB_BACKEND
	const char *name = "rslub_kt_sheaf";
	struct kmem_cache_args args = { .sheaf_capacity = 8 };
	struct slab_sheaf *before, *served, *big;
	struct kmem_cache *s;
	void *x[3], *y[4];
	unsigned int cap;
	int i;

	s = kmem_cache_create(name, 64, &args, SLAB_NO_MERGE);
	KUNIT_ASSERT_NOT_NULL(test, s);
	/*
	 * Prefilled by SLUB to the cache's capacity (at least the 8 asked
	 * for: SLUB rounds it up); four objects taken from it.
	 */
	before = kmem_cache_prefill_sheaf(s, GFP_KERNEL, 8);
	KUNIT_ASSERT_NOT_NULL(test, before);
	cap = kmem_cache_sheaf_size(before);
	KUNIT_ASSERT_GE(test, cap, 8);
	for (i = 0; i < ARRAY_SIZE(y); i++) {
		y[i] = kmem_cache_alloc_from_sheaf(s, GFP_KERNEL, before);
		KUNIT_ASSERT_NOT_NULL(test, y[i]);
	}
	serve(test, name);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);

	served = kmem_cache_prefill_sheaf(s, GFP_KERNEL, cap);
	KUNIT_ASSERT_NOT_NULL(test, served);
	KUNIT_EXPECT_EQ(test, kmem_cache_sheaf_size(served), cap);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), cap);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		x[i] = kmem_cache_alloc_from_sheaf(s, GFP_KERNEL | __GFP_ZERO, served);
		KUNIT_ASSERT_NOT_NULL(test, x[i]);
		KUNIT_EXPECT_TRUE(test, mem_is_zero(x[i], 64));
	}
	KUNIT_EXPECT_EQ(test, kmem_cache_sheaf_size(served), cap - 3);

	/* SLUB's sheaf, topped up from rslub: both allocators in one sheaf. */
	KUNIT_EXPECT_EQ(test, kmem_cache_refill_sheaf(s, GFP_KERNEL, &before, cap), 0);
	KUNIT_EXPECT_EQ(test, kmem_cache_sheaf_size(before), cap);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), cap + 4);

	/* Above the capacity: a sheaf of its own, filled from rslub. */
	big = kmem_cache_prefill_sheaf(s, GFP_KERNEL, cap + 12);
	KUNIT_ASSERT_NOT_NULL(test, big);
	KUNIT_EXPECT_EQ(test, kmem_cache_sheaf_size(big), cap + 12);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 2 * cap + 16);

	kmem_cache_return_sheaf(s, GFP_KERNEL, before);
	kmem_cache_return_sheaf(s, GFP_KERNEL, served);
	kmem_cache_return_sheaf(s, GFP_KERNEL, big);
	/* Only the three objects taken from a sheaf are still out. */
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 3);
	for (i = 0; i < ARRAY_SIZE(x); i++)
		kmem_cache_free(s, x[i]);
	for (i = 0; i < ARRAY_SIZE(y); i++)
		kmem_cache_free(s, y[i]);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_sheaf"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
#else
	/* Only patches/0005 exports the sheaf API to modules. */
	kunit_skip(test, "kernel without the slab backend hook");
#endif
}

struct race {
	struct kmem_cache *s;
	struct completion go, served, destroyed;
	unsigned int delay_us;
	int serve_ret;
};

static int race_serve(void *p)
{
	struct race *r = p;

	wait_for_completion(&r->go);
	r->serve_ret = rslub_serve("rslub_kt_race");
	complete(&r->served);
	return 0;
}

static int race_destroy(void *p)
{
	struct race *r = p;

	wait_for_completion(&r->go);
	udelay(r->delay_us);
	kmem_cache_destroy(r->s);
	complete(&r->destroyed);
	return 0;
}

/* Starts @fn(@r) on @cpu. */
static struct task_struct *race_start(int (*fn)(void *), struct race *r, int cpu)
{
	struct task_struct *t = kthread_create(fn, r, "rslub_kt_race/%d", cpu);

	if (IS_ERR(t))
		return t;
	kthread_bind(t, cpu);
	wake_up_process(t);
	return t;
}

/*
 * Serving a cache races with its kmem_cache_destroy(). The destroy starts
 * at a delay swept over the serve's own length (rslub makes its cache, then
 * the kernel publishes it); whichever wins, rslub must end up serving
 * nothing for the destroyed cache: either the serve is refused, or the
 * destroy tells rslub, which lets its cache go. Before, the kernel
 * published the serve after dropping slab_mutex and the destroy checked the
 * static key without it: a destroy in between was never told, and rslub
 * kept serving a freed cache. Asserted in the test thread, from what the
 * two threads left.
 */
static void serving_races_with_destroy(struct kunit *test)
{
	int cpu0 = cpumask_first(cpu_online_mask);
	int cpu1 = cpumask_next(cpu0, cpu_online_mask);
	unsigned int i, served = 0, refused = 0, left = 0;
	struct race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *a, *b;

	KUNIT_ASSERT_NOT_NULL(test, r);
	if (cpu1 >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
	for (i = 0; i < 48; i++) {
		r->s = kmem_cache_create("rslub_kt_race", 64, 0, SLAB_NO_MERGE, NULL);
		KUNIT_ASSERT_NOT_NULL(test, r->s);
		init_completion(&r->go);
		init_completion(&r->served);
		init_completion(&r->destroyed);
		r->delay_us = (i % 16) * 250;
		a = race_start(race_serve, r, cpu0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(a));
		b = race_start(race_destroy, r, cpu1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(b));
		complete_all(&r->go);
		wait_for_completion(&r->served);
		wait_for_completion(&r->destroyed);
		if (r->serve_ret == -EOPNOTSUPP)
			kunit_skip(test, "kernel without the slab backend hook");
		if (r->serve_ret)
			refused++;
		else
			served++;
		if (wait_gone("rslub_kt_race") != -ENOENT) {
			left++;
			break;
		}
	}
	kunit_info(test, "%u rounds: %u served before the destroy, %u refused",
		   i, served, refused);
	KUNIT_EXPECT_EQ_MSG(test, left, 0,
			    "rslub still serves the destroyed cache after round %u", i);
}

/*
 * A cache address reused between listing and serving: rslub lists the
 * kernel's caches, then creates its own cache for each (allocations,
 * sysfs), then serves. If a listed cache is destroyed meanwhile and a new
 * one, of another geometry, takes its struct kmem_cache address, rslub must
 * not serve the new cache with the old one's object size (a heap
 * overflow) and constructor. The test pause destroys the 64-byte cache and
 * creates a 512-byte one of the same name in that gap, until the new one
 * lands at the old address.
 */
struct reuse {
	const char *name;
	struct kmem_cache *old, *new;
};

static void reuse_in_the_gap(void *arg)
{
	struct reuse *r = arg;

	kmem_cache_destroy(r->old);
	r->new = kmem_cache_create(r->name, 512, 0, SLAB_NO_MERGE, NULL);
}

static void a_cache_address_reused_before_serving(struct kunit *test)
{
	struct reuse r = { .name = "rslub_kt_reuse" };
	int i, ret = 0;

	for (i = 0; i < 20; i++) {
		r.old = kmem_cache_create(r.name, 64, 0, SLAB_NO_MERGE, NULL);
		KUNIT_ASSERT_NOT_NULL(test, r.old);
		r.new = NULL;
		rslub_test_set_serve_pause(reuse_in_the_gap, &r);
		ret = rslub_serve(r.name);
		rslub_test_set_serve_pause(NULL, NULL);
		if (ret == -EOPNOTSUPP)
			kunit_skip(test, "kernel without the slab backend hook");
		KUNIT_ASSERT_NOT_NULL(test, r.new);
		if (r.new == r.old)
			break;
		/* Another address: nothing to race; stop and try again. */
		rslub_serve("-rslub_kt_reuse");
		KUNIT_ASSERT_EQ(test, wait_gone(r.name), -ENOENT);
		kmem_cache_destroy(r.new);
	}
	if (r.new != r.old)
		kunit_skip(test, "the new cache never took the old one's address in %d tries", i);
	kunit_info(test, "the 512-byte cache took the 64-byte one's address (try %d)", i + 1);
	KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
	/* Not served, and rslub's cache made for the old one is gone. */
	KUNIT_EXPECT_EQ(test, rslub_served_objects(r.name), -ENOENT);
	if (rslub_served_objects(r.name) != -ENOENT) {
		rslub_serve("-rslub_kt_reuse");
		wait_gone(r.name);
	}
	/* Served again from a fresh listing, with the new geometry. */
	KUNIT_EXPECT_EQ(test, rslub_serve(r.name), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_get(r.name, "object_size"), 512);
	rslub_serve("-rslub_kt_reuse");
	KUNIT_EXPECT_EQ(test, wait_gone(r.name), -ENOENT);
	kmem_cache_destroy(r.new);
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

/*
 * The list path of kvfree_rcu() and kfree_rcu() on kmalloc caches, which
 * only the served-cache guest serves (serve='*': a kmalloc cache served
 * for a moment would keep the kernel's long-lived objects in rslub, and
 * rslub loaded). The cache's own counters cannot be exact there (the
 * kernel allocates and frees beside the test): what is checked is that
 * the objects came from rslub, nothing was refused and no live neighbour
 * changed.
 */
/*
 * @x lies in a slab page of a slab backend: the patch marks those with
 * SL_backend, which is PG_owner_priv_1 of the slab's head page.
 */
static bool kt_from_backend(const void *x)
{
	struct page *head = compound_head(virt_to_page(x));

	return PageSlab(head) && test_bit(PG_owner_priv_1, &head->flags.f);
}

static void kt_rcu_list_path_kmalloc(struct kunit *test, const char *name,
				     unsigned int size, bool kv)
{
	unsigned int i, theirs = 0;
	long long errors;
	struct kt_rcu_run r;

	if (rslub_served_objects(name) < 0)
		kunit_skip(test, "%s is not served: the served-cache guest runs this (serve='*')",
			   name);
	errors = rslub_served_get(name, "errors");
	kt_rcu_free_odd(test, NULL, size, kv, &r);
	/* The live ones came from rslub: their slab pages are a backend's. */
	for (i = 0; i < 2 * KT_RCU_PAIRS; i++)
		theirs += r.o[i] && !kt_from_backend(r.o[i]);
	KUNIT_EXPECT_EQ(test, theirs, 0);
	kt_kfree_rcu_barrier(test);
	KUNIT_EXPECT_GE(test, r.listed, KT_RCU_LISTED);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "errors"), errors);
	KUNIT_EXPECT_EQ(test, kt_rcu_damaged(&r, size), 0);
	kt_rcu_free_rest(NULL, &r);
}

static void kvfree_rcu_list_path_kmalloc_96(struct kunit *test)
{
	kt_rcu_list_path_kmalloc(test, "kmalloc-96", 96, true);
}

static void kfree_rcu_list_path_kmalloc_192(struct kunit *test)
{
	kt_rcu_list_path_kmalloc(test, "kmalloc-192", 192, false);
}

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
