// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_serve's cases of what a served cache keeps to beside the free
 * paths (the suite is in serve_test.c): constructors, __GFP_ZERO and
 * nodes, what serving refuses, memory cgroup charging and allocation
 * profiling (the object extensions rslub's slabs do not have), a destroy
 * with objects out, hardened usercopy, DMA32, higher orders, init_on_free,
 * the sheaf prefill API, and serving racing a destroy or a reused cache
 * address.
 */
#include <kunit/test.h>
#include <linux/alloc_tag.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ucopysize.h>

#include "rslub.h"
#include "rslub_kunit.h"
#include "serve_test.h"

/*
 * Allocation profiling can be switched on at run time (the kernel was
 * booted with it supported: /proc/allocinfo exists; scripts/guest/kunit.sh
 * passes profiling=1 then). Switched on without that support, the
 * kernel's own tags have no counters: SLUB's allocations oops.
 */
static bool profiling;
module_param(profiling, bool, 0444);
MODULE_PARM_DESC(profiling, "Allocation profiling may be switched on (boot had it supported)");

static void ctor_fill(void *p)
{
	memset(p, 0x5a, 40);
}

/* Constructor, __GFP_ZERO and node allocations of a served cache. */
void ctor_zero_and_node(struct kunit *test)
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

static void kt_serve(void *name)
{
	rslub_serve(name);
}

/*
 * What cannot be served is refused, and nothing is half-made. On the test
 * kernel (no SLUB debugging) the one reason left is allocation profiling
 * switched on, tried where the boot allows it (profiling=1); on the debug
 * flavor every cache is refused, KASAN being on.
 */

void refusals(struct kunit *test)
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
	if (IS_ENABLED(CONFIG_KASAN)) {
		/* No cache is served under KASAN; one line says why, per cache. */
		KT_EXPECT_REPORT(test, kt_serve, (void *)name,
				 "serve rslub_kt_refused: refused: KASAN is on");
		KUNIT_EXPECT_EQ(test, rslub_serve(name), -EINVAL);
		KUNIT_EXPECT_EQ(test, rslub_served_objects(name), -ENOENT);
	}
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

void charging_a_served_object(struct kunit *test)
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
void allocation_profiling_switched_on(struct kunit *test)
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
void destroy_with_objects_out(struct kunit *test)
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
void usercopy_from_a_damaged_slab(struct kunit *test)
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
 * running this has one: make check). Before, rslub took its pages
 * with the caller's gfp alone.
 */
void dma32_slabs_stay_below_4g(struct kunit *test)
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
 * task (fail_page_alloc, set up by scripts/guest/kunit.sh: min-order 1,
 * task-filter, verbose 2). Every allocation succeeds; none is rslub's; and
 * the guest's log has no stack of a failed request made without
 * __GFP_NOWARN (judged by make check: before, rslub's order-3 request
 * printed one). That __GFP_NORETRY and __GFP_NOMEMALLOC are set too is read
 * in the hook, not tested.
 */
void higher_orders_fail_softly(struct kunit *test)
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
 * With init_on_free=1 (make check boots one guest so), a served
 * object comes back all zero, rslub's free pointer included: the kernel
 * wipes an object when it is freed, before rslub writes its free pointer
 * into it, so that word is cleared again when the object is handed out.
 */
void init_on_free_objects_come_back_zero(struct kunit *test)
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
 * The sheaf prefill API of a served cache. A sheaf prefilled before serving
 * holds SLUB's objects; refilled while serving it gets rslub's beside them;
 * a new sheaf, and an oversize one, get rslub's. Returned, a sheaf gives
 * its unused objects back to their allocators (SLUB keeps no sheaf that may
 * hold rslub's objects), and objects taken from a sheaf go back to rslub
 * when freed.
 */
void prefilled_sheaves_come_from_rslub(struct kunit *test)
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
void serving_races_with_destroy(struct kunit *test)
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

void a_cache_address_reused_before_serving(struct kunit *test)
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
