// SPDX-License-Identifier: GPL-2.0
/*
 * A/B micro-benchmarks of the in-tree SLUB (kmem_cache_*, a private
 * SLAB_NO_MERGE cache) and rslub, through the same code path (a table of
 * function pointers), on one pinned CPU, A and B interleaved round by round.
 * Costs are in TSC ticks, which under QEMU's -icount shift=0 are executed
 * instructions. Workloads:
 *   pair    alloc immediately followed by free; cost per pair
 *   repeat  N allocations, then N frees; cost per alloc and per free
 *   bulk    alloc_bulk then free_bulk of a batch; cost per object
 * Results go to the kernel log. Loading fails with -EAGAIN on purpose once
 * they are printed, so nothing needs unloading, unless hold=1 keeps a cache
 * with live objects around for inspection (sysfs, rslabinfo) until the
 * module is removed.
 */
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timex.h>
#include <linux/vmalloc.h>

#include "rslub.h"

static unsigned int pairs = 20000;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "operations per round (pairs; repeat allocations)");

static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per allocator (A B A B ...)");

static unsigned int batch = 16;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "bulk batch size (1..128)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "after the run, stay loaded holding a cache with live objects (for rslabinfo)");

#define MAX_ROUNDS 16
#define MAX_BATCH 128
#define HOLD_OBJS 1000
static struct rslub_cache *held_cache;
static void *held[HOLD_OBJS];

struct ops {
	const char *name;
	void *(*alloc)(void *cache);
	void (*free)(void *cache, void *obj);
	bool (*alloc_bulk)(void *cache, size_t nr, void **p);
	void (*free_bulk)(void *cache, size_t nr, void **p);
};

static void *slub_alloc(void *c)
{
	return kmem_cache_alloc(c, GFP_KERNEL);
}

static void slub_free(void *c, void *o)
{
	kmem_cache_free(c, o);
}

static bool slub_alloc_bulk(void *c, size_t nr, void **p)
{
	return kmem_cache_alloc_bulk(c, GFP_KERNEL, nr, p);
}

static void slub_free_bulk(void *c, size_t nr, void **p)
{
	kmem_cache_free_bulk(c, nr, p);
}

static void *rslub_alloc(void *c)
{
	return rslub_cache_alloc(c, GFP_KERNEL);
}

static void rslub_free(void *c, void *o)
{
	rslub_cache_free(c, o);
}

static bool rslub_alloc_bulk(void *c, size_t nr, void **p)
{
	return rslub_cache_alloc_bulk(c, GFP_KERNEL, nr, p);
}

static void rslub_free_bulk(void *c, size_t nr, void **p)
{
	rslub_cache_free_bulk(c, nr, p);
}

static const struct ops allocators[] = {
	{ "slub", slub_alloc, slub_free, slub_alloc_bulk, slub_free_bulk },
	{ "rslub", rslub_alloc, rslub_free, rslub_alloc_bulk, rslub_free_bulk },
};

/* Ticks per pair. */
static u64 run_pair(const struct ops *a, void *cache, void **scratch)
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

/* Ticks per allocation (*free_cost: per free) of pairs objects held at once. */
static u64 run_repeat(const struct ops *a, void *cache, void **scratch,
		      u64 *free_cost)
{
	cycles_t t0, t1, t2;
	unsigned int i;

	t0 = get_cycles();
	for (i = 0; i < pairs; i++)
		scratch[i] = a->alloc(cache);
	t1 = get_cycles();
	for (i = 0; i < pairs; i++)
		a->free(cache, scratch[i]);
	t2 = get_cycles();
	*free_cost = div_u64(t2 - t1, pairs);
	return div_u64(t1 - t0, pairs);
}

/* Ticks per object of alloc_bulk + free_bulk of batch objects. */
static u64 run_bulk(const struct ops *a, void *cache, void **scratch)
{
	unsigned int i, n = max(pairs / batch, 1u);
	cycles_t t0, t1;

	t0 = get_cycles();
	for (i = 0; i < n; i++) {
		if (!a->alloc_bulk(cache, batch, scratch))
			return 0;
		a->free_bulk(cache, batch, scratch);
	}
	t1 = get_cycles();
	return div_u64(t1 - t0, (u64)n * batch);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *workload, unsigned int size, const char *what,
		   const char *name, u64 *res)
{
	sort(res, rounds, sizeof(u64), cmp_u64, NULL);
	pr_info("rslub_bench: %s size=%u batch=%u %s %s median=%llu min=%llu max=%llu ticks/op (%u ops x %u rounds)\n",
		workload, size, !strcmp(workload, "bulk") ? batch : 1, what,
		name, res[rounds / 2], res[0], res[rounds - 1], pairs, rounds);
}

static int bench_size(unsigned int size, void **scratch)
{
	u64 pair[2][MAX_ROUNDS], rep_a[2][MAX_ROUNDS], rep_f[2][MAX_ROUNDS];
	u64 bulk[2][MAX_ROUNDS];
	void *caches[2];
	unsigned int r, k;

	caches[0] = kmem_cache_create("rslub_bench_slub", size, 0, SLAB_NO_MERGE,
				      NULL);
	caches[1] = rslub_cache_create("rslub_bench", size, 0, 0, NULL);
	if (!caches[0] || IS_ERR(caches[1])) {
		kmem_cache_destroy(caches[0]);
		if (!IS_ERR(caches[1]))
			rslub_cache_destroy(caches[1]);
		return -ENOMEM;
	}
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < 2; k++) {
			pair[k][r] = run_pair(&allocators[k], caches[k], scratch);
			rep_a[k][r] = run_repeat(&allocators[k], caches[k], scratch,
						 &rep_f[k][r]);
			bulk[k][r] = run_bulk(&allocators[k], caches[k], scratch);
		}
	}
	for (k = 0; k < 2; k++) {
		report("pair", size, "pair", allocators[k].name, pair[k]);
		report("repeat", size, "alloc", allocators[k].name, rep_a[k]);
		report("repeat", size, "free", allocators[k].name, rep_f[k]);
		report("bulk", size, "object", allocators[k].name, bulk[k]);
	}
	kmem_cache_destroy(caches[0]);
	return rslub_cache_destroy(caches[1]);
}

static int __init rslub_bench_init(void)
{
	static const unsigned int sizes[] = { 64, 256 };
	unsigned int si, k;
	void **scratch;
	int ret = 0;

	rounds = clamp(rounds, 1u, (unsigned int)MAX_ROUNDS);
	batch = clamp(batch, 1u, (unsigned int)MAX_BATCH);
	pairs = max(pairs, 1u);
	scratch = vmalloc_array(max_t(unsigned int, pairs, MAX_BATCH), sizeof(void *));
	if (!scratch)
		return -ENOMEM;
	/* One CPU for the whole run: GFP_KERNEL paths may sleep, so pin. */
	set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	for (si = 0; si < ARRAY_SIZE(sizes) && !ret; si++)
		ret = bench_size(sizes[si], scratch);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	vfree(scratch);
	if (ret)
		return ret;
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

MODULE_DESCRIPTION("rslub vs in-tree SLUB micro-benchmarks (pair, repeat, bulk)");
MODULE_LICENSE("GPL");
