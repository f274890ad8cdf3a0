// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal A/B micro-benchmark: the cost of one alloc+free pair, in TSC ticks
 * (instructions under QEMU's -icount shift=0), for the in-tree SLUB
 * (kmem_cache_*, a private SLAB_NO_MERGE cache) and rslub, through the same
 * code path, interleaved in rounds on one CPU. Results go to the kernel log;
 * loading fails with -EAGAIN on purpose once they are printed, so nothing
 * needs unloading, unless hold=1 keeps a cache with live objects around
 * for inspection (sysfs, rslabinfo) until the module is removed.
 */
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timex.h>

#include "rslub.h"

static unsigned int pairs = 20000;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "alloc+free pairs per round");

static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per allocator (A B A B ...)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "after the run, stay loaded holding a cache with live objects (for rslabinfo)");

#define HOLD_OBJS 1000
static struct rslub_cache *held_cache;
static void *held[HOLD_OBJS];

struct ops {
	const char *name;
	void *(*alloc)(void *cache);
	void (*free)(void *cache, void *obj);
};

static void *slub_alloc(void *c)
{
	return kmem_cache_alloc(c, GFP_KERNEL);
}

static void slub_free(void *c, void *o)
{
	kmem_cache_free(c, o);
}

static void *rslub_alloc(void *c)
{
	return rslub_cache_alloc(c, GFP_KERNEL);
}

static void rslub_free(void *c, void *o)
{
	rslub_cache_free(c, o);
}

static const struct ops allocators[] = {
	{ "slub", slub_alloc, slub_free },
	{ "rslub", rslub_alloc, rslub_free },
};

/* Ticks per pair for one round (the caller pins the task to one CPU). */
static u64 pair_round(const struct ops *a, void *cache)
{
	cycles_t t0, t1;
	unsigned int i;
	void *o;

	/* Warm the CPU slab / sheaf. */
	o = a->alloc(cache);
	a->free(cache, o);
	t0 = get_cycles();
	for (i = 0; i < pairs; i++) {
		o = a->alloc(cache);
		a->free(cache, o);
	}
	t1 = get_cycles();
	return div_u64(t1 - t0, pairs);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int __init rslub_bench_init(void)
{
	static const unsigned int sizes[] = { 64, 256 };
	u64 res[2][16];
	unsigned int si, r, k;

	rounds = clamp(rounds, 1u, 16u);
	/* One CPU for the whole run: GFP_KERNEL paths may sleep, so pin. */
	set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	for (si = 0; si < ARRAY_SIZE(sizes); si++) {
		void *caches[2];

		caches[0] = kmem_cache_create("rslub_bench_slub", sizes[si], 0,
					      SLAB_NO_MERGE, NULL);
		caches[1] = rslub_cache_create("rslub_bench", sizes[si], 0, 0,
					       NULL);
		if (!caches[0] || IS_ERR(caches[1])) {
			kmem_cache_destroy(caches[0]);
			if (!IS_ERR(caches[1]))
				rslub_cache_destroy(caches[1]);
			set_cpus_allowed_ptr(current, cpu_possible_mask);
			return -ENOMEM;
		}
		for (r = 0; r < rounds; r++)
			for (k = 0; k < 2; k++)
				res[k][r] = pair_round(&allocators[k], caches[k]);
		for (k = 0; k < 2; k++) {
			sort(res[k], rounds, sizeof(u64), cmp_u64, NULL);
			pr_info("rslub_bench: pair size=%u %s median=%llu min=%llu max=%llu ticks/pair (%u pairs x %u rounds)\n",
				sizes[si], allocators[k].name, res[k][rounds / 2],
				res[k][0], res[k][rounds - 1], pairs, rounds);
		}
		kmem_cache_destroy(caches[0]);
		rslub_cache_destroy(caches[1]);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	if (!hold)
		return -EAGAIN;
	held_cache = rslub_cache_create("rslub_bench_hold", 192, 0,
					SLAB_HWCACHE_ALIGN, NULL);
	if (IS_ERR(held_cache))
		return PTR_ERR(held_cache);
	for (k = 0; k < HOLD_OBJS; k++) {
		held[k] = rslub_cache_alloc(held_cache, GFP_KERNEL);
		/* Free every third: partial slabs, remote-looking activity. */
		if (k % 3 == 2) {
			rslub_cache_free(held_cache, held[k]);
			held[k] = NULL;
		}
	}
	return 0;
}
module_init(rslub_bench_init);

static void __exit rslub_bench_exit(void)
{
	unsigned int k;

	for (k = 0; k < HOLD_OBJS; k++)
		rslub_cache_free(held_cache, held[k]);
	rslub_cache_destroy(held_cache);
}
module_exit(rslub_bench_exit);

MODULE_DESCRIPTION("rslub vs in-tree SLUB alloc+free pair micro-benchmark");
MODULE_LICENSE("GPL");
