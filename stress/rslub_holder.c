// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_holder: the user module of the lifecycle test
 * (scripts/guest/lifecycle.sh). At load it creates caches, allocates (single
 * and bulk), frees, shrinks and destroys them, checking each step; then it
 * keeps one cache, rslub_holder_keep, with `keep` live objects, which pins
 * rslub.ko (the module loader counts the use of its symbols) until this
 * module is removed. Removal frees them and destroys the cache.
 * Load fails (-EIO) with a "rslub_holder: FAIL <why>" line on any mismatch.
 *
 * With rcu_busy=1 it also keeps a SLAB_TYPESAFE_BY_RCU cache with objects
 * in several slabs, and removal frees all but one, shrinks (the empty
 * slabs wait for an RCU grace period) and destroys it with that one still
 * out (-EBUSY, the cache leaked): the lifecycle test then unloads rslub at
 * once, before the grace period's callbacks may have run.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"

static unsigned int keep = 100;
module_param(keep, uint, 0444);
MODULE_PARM_DESC(keep, "live objects kept in rslub_holder_keep while loaded (0..1000)");

static bool rcu_busy;
module_param(rcu_busy, bool, 0444);
MODULE_PARM_DESC(rcu_busy, "at removal, destroy a SLAB_TYPESAFE_BY_RCU cache with one object out, its freed slabs waiting for RCU");

#define KEEP_MAX 1000
#define CHURN 300
#define RCU_OBJS 200

static struct rslub_cache *rcu_cache;
static void *rcu_objs[RCU_OBJS];

static struct rslub_cache *kept;
static void *kept_objs[KEEP_MAX];

static void ctor(void *p)
{
	memset(p, 0x5a, 200);
}

/* Create, fill, empty, shrink and destroy one cache; 0 or a reason. */
static const char *churn(const char *name, unsigned int size, slab_flags_t flags,
			 void (*c)(void *))
{
	static void *objs[CHURN];
	struct rslub_cache *s;
	unsigned int i;

	s = rslub_cache_create(name, size, 0, flags, c);
	if (IS_ERR(s))
		return "create failed";
	if (!rslub_cache_alloc_bulk(s, GFP_KERNEL, CHURN / 2, objs))
		goto fail_alloc;
	for (i = CHURN / 2; i < CHURN; i++) {
		objs[i] = rslub_cache_alloc(s, GFP_KERNEL);
		if (!objs[i])
			goto fail_alloc;
		memset(objs[i], 0xa5, size);
		if (c)	/* return constructed objects constructed */
			c(objs[i]);
	}
	if (rslub_cache_get(s, "objects") != CHURN)
		return "objects count after allocation is wrong";
	for (i = 0; i < CHURN; i += 2)
		rslub_cache_free(s, objs[i]);
	for (i = 1; i < CHURN; i += 2)
		objs[i / 2] = objs[i];
	rslub_cache_free_bulk(s, CHURN / 2, objs);
	rslub_cache_shrink(s);
	if (rslub_cache_get(s, "errors") != 0)
		return "errors counted";
	if (rslub_cache_destroy(s) != 0)
		return "destroy with no live objects did not return 0";
	return NULL;
fail_alloc:
	return "GFP_KERNEL allocation failed";
}

static int __init rslub_holder_init(void)
{
	const char *why;
	unsigned int i;

	why = churn("rslub_holder_a", 40, 0, NULL);
	if (!why)
		why = churn("rslub_holder_b", 200, SLAB_HWCACHE_ALIGN, ctor);
	if (!why)
		why = churn("rslub_holder_c", 5000, 0, NULL);
	if (why)
		goto fail;
	keep = min_t(unsigned int, keep, KEEP_MAX);
	kept = rslub_cache_create("rslub_holder_keep", 128, 0, 0, NULL);
	if (IS_ERR(kept)) {
		why = "create rslub_holder_keep failed";
		kept = NULL;
		goto fail;
	}
	for (i = 0; i < keep; i++) {
		kept_objs[i] = rslub_cache_alloc(kept, GFP_KERNEL);
		if (!kept_objs[i]) {
			why = "GFP_KERNEL allocation failed";
			goto fail;
		}
	}
	if (rcu_busy) {
		rcu_cache = rslub_cache_create("rslub_holder_rcu", 256, 0,
					       SLAB_TYPESAFE_BY_RCU, NULL);
		if (IS_ERR(rcu_cache)) {
			why = "create rslub_holder_rcu failed";
			rcu_cache = NULL;
			goto fail;
		}
		if (!rslub_cache_alloc_bulk(rcu_cache, GFP_KERNEL, RCU_OBJS, rcu_objs)) {
			why = "GFP_KERNEL bulk allocation failed";
			goto fail;
		}
		pr_info("rslub_holder: rcu_busy: holding %d objects in rslub_holder_rcu\n",
			RCU_OBJS);
		return 0;
	}
	pr_info("rslub_holder: holding %u objects in rslub_holder_keep, pages=%ld\n",
		keep, rslub_pages_allocated());
	return 0;
fail:
	pr_err("rslub_holder: FAIL %s\n", why);
	if (rcu_cache)
		rslub_cache_destroy(rcu_cache);
	if (kept) {
		for (i = 0; i < keep; i++)
			rslub_cache_free(kept, kept_objs[i]);
		rslub_cache_destroy(kept);
	}
	return -EIO;
}
module_init(rslub_holder_init);

static void __exit rslub_holder_exit(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < keep; i++)
		rslub_cache_free(kept, kept_objs[i]);
	ret = rslub_cache_destroy(kept);
	if (ret)
		pr_err("rslub_holder: FAIL destroy returned %d\n", ret);
	else if (!rcu_cache)
		pr_info("rslub_holder: released, pages=%ld\n", rslub_pages_allocated());
	if (rcu_cache) {
		long long pending;

		rslub_cache_free_bulk(rcu_cache, RCU_OBJS - 1, rcu_objs + 1);
		rslub_cache_shrink(rcu_cache);
		pending = rslub_cache_get(rcu_cache, "rcu_pending_slabs");
		ret = rslub_cache_destroy(rcu_cache);
		pr_info("rslub_holder: rcu_busy: destroy returned %d with %lld freed slabs waiting for RCU\n",
			ret, pending);
	}
}
module_exit(rslub_holder_exit);

MODULE_DESCRIPTION("rslub lifecycle helper: creates, uses and holds rslub caches");
MODULE_LICENSE("GPL");
