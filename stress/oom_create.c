// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_oom's test=create: systematic fault injection through
 * task->fail_nth, on cache creation (every request of a create failed
 * once), the random_freelist tunable, single and bulk allocations, and
 * the fallback to a smaller order. Each attempt must give a working cache
 * or object, or a clean failure with nothing left behind. oom_main.c's
 * comment has the whole story.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "oom.h"

#define SWEEP_MAX	400	/* injected failures per create, at most */
#define CREATE_CACHES	16	/* caches created by sweeps, live together */
#define SWEEP_FULL	4	/* of them swept through every request */
#define SWEEP_SHORT	4	/* requests failed in the others' creates */

#ifdef CONFIG_FAULT_INJECTION
static void fail_nth_set(unsigned int n)
{
	WRITE_ONCE(current->fail_nth, n);
}

static unsigned int fail_nth_left(void)
{
	return READ_ONCE(current->fail_nth);
}

static bool in_sysfs(const char *name)
{
	char buf[96];
	struct path p;

	snprintf(buf, sizeof(buf), "/sys/kernel/rslub/%s", name);
	if (kern_path(buf, 0, &p))
		return false;
	path_put(&p);
	return true;
}

/* A cache must be whole: listed in sysfs, allocating and freeing. */
static const char *check_works(struct rslub_cache *s, const char *name,
			       unsigned int size)
{
	void *p;

	if (!in_sysfs(name))
		return "a cache was returned without its sysfs directory";
	p = rslub_cache_alloc(s, GFP_KERNEL);
	if (!p)
		return "a returned cache cannot allocate";
	memset(p, 0x3c, size);
	rslub_cache_free(s, p);
	if (rslub_cache_get(s, "objects") != 0 || rslub_cache_get(s, "errors") != 0)
		return "a returned cache counts objects or errors after one alloc+free";
	return NULL;
}

struct sweep {
	unsigned long attempts, enomem, absorbed;
	char why[160];
};

static void ctor_fill(void *p)
{
	memset(p, 0x77, 24);
}

/*
 * Creates one cache with the 1st, 2nd, ... request failed until a create
 * needs fewer, or until the last-th (then without a failure); returns the
 * cache, or NULL with sw->why set.
 */
static struct rslub_cache *create_swept(const char *name, unsigned int size,
					unsigned int align, slab_flags_t flags,
					void (*ctor)(void *), unsigned int last,
					struct sweep *sw)
{
	long pages = rslub_pages_allocated();
	struct rslub_cache *s;
	const char *why;
	unsigned int n, left;

	for (n = 1; n <= SWEEP_MAX; n++) {
		bool injected = n <= last;

		fail_nth_set(injected ? n : 0);
		s = rslub_cache_create(name, size, align, flags, ctor);
		left = fail_nth_left();
		fail_nth_set(0);
		sw->attempts++;
		if (IS_ERR(s)) {
			if (PTR_ERR(s) != -ENOMEM) {
				snprintf(sw->why, sizeof(sw->why),
					 "%s with request %u failed: create returned %ld, not -ENOMEM",
					 name, n, PTR_ERR(s));
				return NULL;
			}
			if (left || !injected) {
				snprintf(sw->why, sizeof(sw->why),
					 "%s: -ENOMEM with no injected failure (request %u)",
					 name, n);
				return NULL;
			}
			sw->enomem++;
			if (in_sysfs(name)) {
				snprintf(sw->why, sizeof(sw->why),
					 "%s with request %u failed: -ENOMEM but its sysfs directory exists",
					 name, n);
				return NULL;
			}
			if (rslub_pages_allocated() != pages) {
				snprintf(sw->why, sizeof(sw->why),
					 "%s with request %u failed: slab pages %ld -> %ld",
					 name, n, pages, rslub_pages_allocated());
				return NULL;
			}
			continue;
		}
		why = check_works(s, name, size);
		if (why) {
			snprintf(sw->why, sizeof(sw->why), "%s with request %u failed: %s",
				 name, n, why);
			return NULL;
		}
		if (left || !injected)
			return s;	/* made fewer than n requests: swept */
		/* The nth request failed and create recovered: fine, go on. */
		sw->absorbed++;
		if (rslub_cache_destroy(s)) {
			snprintf(sw->why, sizeof(sw->why),
				 "%s with request %u failed: the cache made anyway does not destroy",
				 name, n);
			return NULL;
		}
	}
	snprintf(sw->why, sizeof(sw->why), "%s: still failing after %u injected failures",
		 name, SWEEP_MAX);
	return NULL;
}

static void test_create_sweep(void)
{
	static const unsigned int sizes[] = { 8, 24, 64, 100, 256, 700, 2048, 5000 };
	struct rslub_cache *made[CREATE_CACHES] = {};
	struct sweep sw = {};
	char name[32];
	unsigned int i;
	int busy = 0;

	/*
	 * Kept live together: the registry grows (1, 2, 4, 8, 16 entries), so
	 * its own allocation is among the ones failed. The first SWEEP_FULL
	 * (plain, ctor and cache-line aligned, align 32, debug) have every
	 * request failed once; the others their first SWEEP_SHORT (the
	 * registry's growth, the cache), which keeps the log short: each failed
	 * create logs a line.
	 */
	for (i = 0; i < CREATE_CACHES; i++) {
		unsigned int size = sizes[i % ARRAY_SIZE(sizes)];
		slab_flags_t flags = i % 3 == 1 ? SLAB_HWCACHE_ALIGN : 0;

		if (i % 4 == 3)
			flags |= SLAB_RED_ZONE | SLAB_STORE_USER;
		snprintf(name, sizeof(name), "rslub_oom_c%u", i);
		made[i] = create_swept(name, size, i % 5 == 2 ? 32 : 0, flags,
				       i % 4 == 1 && size >= 24 ? ctor_fill : NULL,
				       i < SWEEP_FULL ? SWEEP_MAX : SWEEP_SHORT, &sw);
		if (!made[i])
			break;
	}
	for (i = 0; i < CREATE_CACHES; i++)
		if (made[i])
			busy += rslub_cache_destroy(made[i]) != 0;
	if (sw.why[0])
		fail("create", "%s", sw.why);
	else if (busy)
		fail("create", "%d caches did not destroy", busy);
	else if (!sw.enomem)
		fail("create", "no create failed: is fault injection set up (ignore-gfp-wait=N)?");
	else
		pass("create",
		     "caches=%u creates=%lu enomem=%lu recovered=%lu (every request of %u creates failed once, the first %u of the others)",
		     CREATE_CACHES, sw.attempts, sw.enomem, sw.absorbed, SWEEP_FULL,
		     SWEEP_SHORT);
}

static void test_random_freelist(void)
{
	struct rslub_cache *s;
	unsigned int left;
	int ret;
	void *p;

	s = rslub_cache_create("rslub_oom_rf", 72, 0, 0, NULL);
	if (IS_ERR(s)) {
		fail("random_freelist", "create: %ld", PTR_ERR(s));
		return;
	}
	fail_nth_set(1);
	ret = rslub_cache_set(s, "random_freelist", 1);
	left = fail_nth_left();
	fail_nth_set(0);
	if (ret != -ENOMEM || left) {
		fail("random_freelist", "set with its allocation failed returned %d (request %s)",
		     ret, left ? "never came" : "failed");
	} else if (rslub_cache_get(s, "random_freelist") != 0) {
		fail("random_freelist", "the tunable changed although the set failed");
	} else if (rslub_cache_set(s, "random_freelist", 1) != 0 ||
		   rslub_cache_get(s, "random_freelist") != 1) {
		fail("random_freelist", "the set does not work once memory is back");
	} else {
		p = rslub_cache_alloc(s, GFP_KERNEL);
		if (p) {
			rslub_cache_free(s, p);
			pass("random_freelist", "set -> -ENOMEM, unchanged, then set -> 0");
		} else {
			fail("random_freelist", "the cache cannot allocate afterwards");
		}
	}
	if (rslub_cache_destroy(s))
		fail("random_freelist", "destroy failed");
}

/* One allocation with its first page request failed must be NULL. */
static const char *alloc_one_failed(struct rslub_cache *s, gfp_t gfp, int node)
{
	unsigned int left;
	void *p;

	fail_nth_set(1);
	p = node == -2 ? rslub_cache_alloc(s, gfp) :
			 rslub_cache_alloc_node(s, gfp, node);
	left = fail_nth_left();
	fail_nth_set(0);
	if (p) {
		rslub_cache_free(s, p);
		return left ? "an allocation on an empty cache asked for no page" :
			      "an allocation whose page request failed returned an object";
	}
	return NULL;
}

static void test_alloc_and_bulk(void)
{
	long pages0 = rslub_pages_allocated();
	unsigned int per, n, left;
	const char *why = NULL;
	struct rslub_cache *s;
	void **v = NULL;
	bool ok;

	/*
	 * 64-byte objects: slabs of order 0, the smallest, so no fallback
	 * (test_fallback) stands behind a failed page request.
	 */
	s = rslub_cache_create("rslub_oom_a", 64, 0, 0, NULL);
	if (IS_ERR(s)) {
		fail("alloc", "create: %ld", PTR_ERR(s));
		return;
	}
	/* A new cache has no slab: each allocation asks for pages. */
	why = alloc_one_failed(s, GFP_KERNEL, -2);
	if (!why)
		why = alloc_one_failed(s, GFP_ATOMIC, -2);
	if (!why)
		why = alloc_one_failed(s, GFP_NOWAIT, 0);
	if (!why)
		why = alloc_one_failed(s, GFP_KERNEL, NUMA_NO_NODE);
	if (!why && rslub_pages_allocated() != pages0)
		why = "failed allocations left slab pages";
	if (!why && rslub_cache_get(s, "objects") != 0)
		why = "failed allocations left objects";
	if (why)
		fail("alloc", "%s", why);
	else
		pass("alloc",
		     "NULL from GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT on node 0, and NUMA_NO_NODE; no page or object left");

	/* Bulk: the 2nd new slab of at least 4 fails; all or nothing. */
	per = rslub_cache_get(s, "objs_per_slab");
	n = 5 * per;
	v = kcalloc(n, sizeof(*v), GFP_KERNEL);
	if (!v) {
		fail("bulk", "no memory for the test's array");
		goto out;
	}
	fail_nth_set(2);
	ok = rslub_cache_alloc_bulk(s, GFP_KERNEL, n, v);
	left = fail_nth_left();
	fail_nth_set(0);
	if (ok) {
		rslub_cache_free_bulk(s, n, v);
		why = left ? "the bulk allocation asked for fewer than 2 slabs" :
			     "alloc_bulk returned true although a page request failed";
	} else if (rslub_cache_get(s, "objects") != 0) {
		why = "alloc_bulk returned false with objects left allocated";
	} else if (rslub_cache_shrink(s) || rslub_pages_allocated() != pages0) {
		why = "pages of the failed bulk allocation did not go back at shrink";
	} else if (!rslub_cache_alloc_bulk(s, GFP_KERNEL, n, v)) {
		why = "alloc_bulk fails once memory is back";
	} else {
		if (rslub_cache_get(s, "objects") != n)
			why = "alloc_bulk true but the objects count differs";
		rslub_cache_free_bulk(s, n, v);
	}
	if (!why && (rslub_cache_validate(s) || rslub_cache_get(s, "errors")))
		why = "validate or errors report a problem";
	if (why)
		fail("bulk", "%s", why);
	else
		pass("bulk",
		     "alloc_bulk of %u objects with its 2nd page request failed: false, 0 objects left; then true",
		     n);
out:
	kfree(v);
	if (rslub_cache_destroy(s))
		fail("bulk", "destroy failed");
	else if (rslub_pages_allocated() != pages0)
		fail("bulk", "pages %ld after destroy, %ld before",
		     rslub_pages_allocated(), pages0);
}

/*
 * A cache above its smallest order: its page request failed, the
 * allocation takes a slab of the smallest order from the fallback (the
 * second request, which fail-nth lets through), single and bulk.
 */
static void test_fallback(void)
{
	long pages0 = rslub_pages_allocated();
	const char *why = NULL;
	struct rslub_cache *s;
	unsigned int left;
	void *p, *v[8];
	bool ok;

	s = rslub_cache_create("rslub_oom_fb", 1024, 0, 0, NULL);
	if (IS_ERR(s)) {
		fail("fallback", "create: %ld", PTR_ERR(s));
		return;
	}
	if (rslub_cache_get(s, "order") == 0) {
		why = "a cache of 1024-byte objects has slabs of order 0";
		goto out;
	}
	fail_nth_set(1);
	p = rslub_cache_alloc(s, GFP_KERNEL);
	left = fail_nth_left();
	fail_nth_set(0);
	if (!p || left)
		why = left ? "the allocation asked for no page" :
			     "NULL although the fallback could have served it";
	else if (rslub_cache_get(s, "fallback_objects") != 1)
		why = "the object is not the fallback's";
	if (p)
		rslub_cache_free(s, p);
	if (!why) {
		fail_nth_set(1);
		ok = rslub_cache_alloc_bulk(s, GFP_KERNEL, ARRAY_SIZE(v), v);
		fail_nth_set(0);
		if (!ok)
			why = "alloc_bulk false although the fallback could have served it";
		else
			rslub_cache_free_bulk(s, ARRAY_SIZE(v), v);
	}
	if (!why && rslub_cache_get(s, "fallback_objects") != 0)
		why = "the fallback's objects did not go back";
	if (!why && (rslub_cache_validate(s) || rslub_cache_get(s, "errors")))
		why = "validate or errors report a problem";
out:
	if (rslub_cache_destroy(s))
		why = why ?: "destroy failed";
	else if (!why && rslub_pages_allocated() != pages0)
		why = "pages left after destroy";
	if (why)
		fail("fallback", "%s", why);
	else
		pass("fallback",
		     "page request failed: single and bulk allocation from the fallback of order 0, objects back, nothing left");
}

void test_create(void)
{
	test_create_sweep();
	test_random_freelist();
	test_alloc_and_bulk();
	test_fallback();
}
#else
void test_create(void)
{
	fail("create", "needs a kernel with CONFIG_FAULT_INJECTION");
}
#endif

