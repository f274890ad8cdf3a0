// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_oom: rslub when memory runs out (scripts/guest-oom.sh).
 *
 * test=create: systematic fault injection. task->fail_nth (the per-task
 * form of the kernel's fault injection, /proc/<pid>/fail-nth) makes the Nth
 * failslab or fail_page_alloc check of this task fail. Every cache is
 * created with N = 1, 2, ... until a create makes fewer than N requests, so
 * each allocation rslub_cache_create makes (registry, cache, nodes, per-CPU
 * area, sysfs directory and its kernfs nodes) fails once. Each attempt must
 * give a working cache or ERR_PTR(-ENOMEM) with nothing left behind: no
 * sysfs directory, the name free again (the next attempt would get -EEXIST),
 * no page. Then the random_freelist tunable, single allocations (sleeping,
 * atomic, on a node) and a bulk allocation, each failed at one page request:
 * NULL, -ENOMEM or false, with nothing half-allocated. Needs failslab and
 * fail_page_alloc with ignore-gfp-wait=N and fail_page_alloc min-order=0.
 *
 * test=pressure: real memory exhaustion, for a small-memory VM.
 *   fill: three caches are filled round-robin with GFP_KERNEL |
 *   __GFP_RETRY_MAYFAIL (reclaim hard, no OOM killer) until each returns
 *   NULL, then GFP_NOWAIT and a bulk allocation are tried on the full
 *   system; every object is stamped and verified when freed; after shrink
 *   and destroy rslub holds no page.
 *   shrinker: a cache with max_empty=1000 keeps hundreds of empty slabs;
 *   a hog then takes pages until reclaim runs rslub's shrinker, while a
 *   kthread keeps allocating from another cache. The empty slabs must go
 *   back (the cache's empty_cache_reclaim counts exactly the ones that
 *   went), allocation must keep working, and the cache must allocate again
 *   afterwards.
 *
 * Each check prints "rslub_oom: PASS <check> <figures>" or
 * "rslub_oom: FAIL <check>: <why>"; init returns -EIO if any failed.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"

static char *test = "create";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "create (systematic injected failures) or pressure (a small-memory VM)");

static unsigned int rounds = 1;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "test=pressure: how many times the fill and shrinker checks run");

#define SWEEP_MAX	400	/* injected failures per create, at most */
#define CREATE_CACHES	16	/* caches created by sweeps, live together */
#define SWEEP_FULL	4	/* of them swept through every request */
#define SWEEP_SHORT	4	/* requests failed in the others' creates */
#define STAMP_KEY	0x5ca1ab1e0ddba11ull
#define SHRINK_SLABS	600	/* empty slabs the shrinker check caches */

static unsigned int failed_checks;

static __printf(2, 3) void pass(const char *check, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("rslub_oom: PASS %s %pV\n", check, &vaf);
	va_end(args);
}

static __printf(2, 3) void fail(const char *check, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("rslub_oom: FAIL %s: %pV\n", check, &vaf);
	va_end(args);
	failed_checks++;
}

/* --- test=create --------------------------------------------------------- */

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

static void test_create(void)
{
	test_create_sweep();
	test_random_freelist();
	test_alloc_and_bulk();
	test_fallback();
}
#else
static void test_create(void)
{
	fail("create", "needs a kernel with CONFIG_FAULT_INJECTION");
}
#endif

/* --- test=pressure ------------------------------------------------------- */

/* Objects are chained through their first word; the second is a stamp. */
static void stamp(void *p, void **head, unsigned int idx)
{
	((u64 *)p)[0] = (unsigned long)*head;
	((u64 *)p)[1] = (unsigned long)p ^ STAMP_KEY ^ idx;
	*head = p;
}

/* Frees a chain; returns how many were freed, counting bad stamps. */
static unsigned long free_chain(struct rslub_cache *s, void *head,
				unsigned int idx, unsigned long *bad)
{
	unsigned long n = 0;

	while (head) {
		void *next = (void *)(unsigned long)((u64 *)head)[0];

		if (((u64 *)head)[1] != ((unsigned long)head ^ STAMP_KEY ^ idx)) {
			if (!*bad)
				pr_err("rslub_oom: object %p of cache %u: bad stamp\n",
				       head, idx);
			(*bad)++;
			break;	/* the chain itself cannot be trusted */
		}
		rslub_cache_free(s, head);
		head = next;
		n++;
	}
	return n;
}

#define FILLS 3
static const unsigned int fill_sizes[FILLS] = { 256, 1024, 3000 };

static void test_fill(unsigned int round)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	struct rslub_cache *s[FILLS] = {};
	void *head[FILLS] = {};
	unsigned long count[FILLS] = {}, nulls = 0, nowait_null = 0, bulk_false = 0;
	unsigned long total = 0, freed = 0, bad = 0;
	long pages_start = rslub_pages_allocated(), pages_peak = 0, pages_end = 0;
	long avail_start = si_mem_available(), avail_peak = 0;
	bool full[FILLS] = {};
	unsigned int i, k, left = FILLS;
	const char *why = NULL;
	void *bulk[32];
	char name[32];
	int busy = 0;

	for (i = 0; i < FILLS; i++) {
		snprintf(name, sizeof(name), "rslub_oom_fill%u", i);
		s[i] = rslub_cache_create(name, fill_sizes[i], 0, 0, NULL);
		if (IS_ERR(s[i])) {
			pr_err("rslub_oom: create %s: %ld\n", name, PTR_ERR(s[i]));
			s[i] = NULL;
			why = "cannot create the caches";
			goto destroy;
		}
	}
	/* Round-robin until each cache has returned NULL once. */
	while (left) {
		for (i = 0; i < FILLS; i++) {
			for (k = 0; k < 64 && !full[i]; k++) {
				void *p = rslub_cache_alloc(s[i], gfp);

				if (!p) {
					full[i] = true;
					nulls++;
					left--;
					break;
				}
				stamp(p, &head[i], i);
				count[i]++;
			}
		}
		cond_resched();
	}
	pages_peak = rslub_pages_allocated();
	avail_peak = si_mem_available();
	/* The system is out of memory now: atomic and bulk must fail cleanly. */
	for (i = 0; i < FILLS; i++) {
		void *p = rslub_cache_alloc(s[i], GFP_NOWAIT | __GFP_NOWARN);
		long long before;

		if (p) {
			stamp(p, &head[i], i);
			count[i]++;
		} else {
			nowait_null++;
		}
		before = rslub_cache_get(s[i], "objects");
		if (rslub_cache_alloc_bulk(s[i], gfp, ARRAY_SIZE(bulk), bulk)) {
			for (k = 0; k < ARRAY_SIZE(bulk); k++) {
				stamp(bulk[k], &head[i], i);
				count[i]++;
			}
		} else {
			bulk_false++;
			if (rslub_cache_get(s[i], "objects") != before)
				why = "alloc_bulk returned false with objects left allocated";
		}
	}
	for (i = 0; i < FILLS; i++) {
		total += count[i];
		freed += free_chain(s[i], head[i], i, &bad);
		head[i] = NULL;
		rslub_cache_shrink(s[i]);
		if (rslub_cache_get(s[i], "objects") || rslub_cache_get(s[i], "errors") ||
		    rslub_cache_validate(s[i]))
			why = why ?: "objects, errors or validate not 0 after freeing everything";
	}
	pages_end = rslub_pages_allocated();
	if (bad)
		why = "bad stamps";
	else if (freed != total)
		why = "not every object was freed";
	else if (pages_end != pages_start)
		why = "slab pages did not go back after shrink";
	else if (!total)
		why = "nothing was allocated";
destroy:
	for (i = 0; i < FILLS; i++)
		if (s[i])
			busy += rslub_cache_destroy(s[i]) != 0;
	if (busy)
		why = why ?: "a cache did not destroy";
	if (rslub_pages_allocated() != pages_start)
		why = why ?: "slab pages left after destroy";
	if (why) {
		fail("fill", "round %u: %s (objects %lu, freed %lu, bad %lu, pages %ld/%ld/%ld)",
		     round, why, total, freed, bad, pages_start, pages_peak,
		     rslub_pages_allocated());
		return;
	}
	pass("fill",
	     "round=%u objects=%lu (%u B: %lu, %u B: %lu, %u B: %lu) null_returns=%lu nowait_null=%lu bulk_false=%lu verified=%lu pages_start=%ld pages_peak=%ld pages_end=%ld memavailable_kib start=%ld at_peak=%ld end=%ld",
	     round, total, fill_sizes[0], count[0], fill_sizes[1], count[1],
	     fill_sizes[2], count[2], nulls, nowait_null, bulk_false, freed,
	     pages_start, pages_peak, pages_end, avail_start << (PAGE_SHIFT - 10),
	     avail_peak << (PAGE_SHIFT - 10), si_mem_available() << (PAGE_SHIFT - 10));
}

/* The kthread that keeps allocating while the hog takes memory. */
static struct {
	struct rslub_cache *s;
	struct completion done;
	bool stop;
	unsigned long ok, null, bad;
} side;

static int side_fn(void *arg)
{
	void *head;
	unsigned long bad;
	unsigned int k;

	while (!READ_ONCE(side.stop)) {
		head = NULL;
		for (k = 0; k < 16; k++) {
			void *p = rslub_cache_alloc(side.s, GFP_KERNEL | __GFP_NORETRY |
						    __GFP_NOWARN);

			if (!p) {
				WRITE_ONCE(side.null, side.null + 1);
				continue;
			}
			stamp(p, &head, 9);
			WRITE_ONCE(side.ok, side.ok + 1);
		}
		bad = 0;
		free_chain(side.s, head, 9, &bad);
		side.bad += bad;
		cond_resched();
	}
	complete(&side.done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static void test_shrinker(unsigned int round)
{
	const gfp_t hog_gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	long long empty0 = 0, empty1 = 0, rec0 = 0, rec1 = 0, order = 0, per = 0;
	long held0 = 0, held1 = 0, pages_start = rslub_pages_allocated();
	unsigned long hog = 0, ok_before, ok_during = 0, bad = 0, n, i;
	struct rslub_cache *e, *f = NULL;
	struct task_struct *t = NULL;
	const char *why = NULL, *hog_end = "the shrinker gave back 90%";
	LIST_HEAD(hog_pages);
	struct page *page, *tmp;
	void *head = NULL;

	e = rslub_cache_create("rslub_oom_empty", 2000, 0, 0, NULL);
	if (IS_ERR(e)) {
		fail("shrinker", "create: %ld", PTR_ERR(e));
		return;
	}
	f = rslub_cache_create("rslub_oom_side", 512, 0, 0, NULL);
	if (IS_ERR(f)) {
		fail("shrinker", "create: %ld", PTR_ERR(f));
		f = NULL;
		goto out;
	}
	/* Every emptied slab goes to the empty-slab cache, up to 1000. */
	if (rslub_cache_set(e, "max_empty", 1000) || rslub_cache_set(e, "min_partial", 0) ||
	    rslub_cache_set(e, "cpu_partial", 0)) {
		why = "cannot set the tunables";
		goto out;
	}
	per = rslub_cache_get(e, "objs_per_slab");
	order = rslub_cache_get(e, "order");
	n = per * SHRINK_SLABS;
	for (i = 0; i < n; i++) {
		void *p = rslub_cache_alloc(e, GFP_KERNEL);

		if (!p)
			break;
		stamp(p, &head, 7);
	}
	if (free_chain(e, head, 7, &bad) != i || bad || i != n) {
		why = "could not allocate and free the objects to cache";
		goto out;
	}
	empty0 = rslub_cache_get(e, "empty_slabs");
	rec0 = rslub_cache_stat(e, "empty_cache_reclaim");
	held0 = rslub_pages_allocated();
	if (empty0 < SHRINK_SLABS / 2) {
		why = "the empty-slab cache did not fill";
		goto out;
	}

	side.s = f;
	side.stop = false;
	side.ok = 0;
	side.null = 0;
	side.bad = 0;
	init_completion(&side.done);
	t = kthread_run(side_fn, NULL, "rslub_oom_side");
	if (IS_ERR(t)) {
		t = NULL;
		why = "cannot start the allocating kthread";
		goto out;
	}
	msleep(20);
	ok_before = READ_ONCE(side.ok);
	/*
	 * Take pages until reclaim has given back most of the cache (reclaim
	 * asks for half of what is left at each pass, so the last few slabs
	 * may take long), or until no page is left.
	 */
	for (;;) {
		page = alloc_page(hog_gfp);
		if (!page) {
			hog_end = "the hog got NULL";
			break;
		}
		list_add(&page->lru, &hog_pages);
		hog++;
		if (hog % 256 == 0) {
			if (rslub_cache_get(e, "empty_slabs") <= empty0 / 10)
				break;
			if (hog > totalram_pages()) {
				hog_end = "the hog took every page";
				break;
			}
			cond_resched();
		}
	}
	empty1 = rslub_cache_get(e, "empty_slabs");
	rec1 = rslub_cache_stat(e, "empty_cache_reclaim");
	held1 = rslub_pages_allocated();
	ok_during = READ_ONCE(side.ok) - ok_before;
	list_for_each_entry_safe(page, tmp, &hog_pages, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
	msleep(20);
	WRITE_ONCE(side.stop, true);
	wait_for_completion(&side.done);
	kthread_stop(t);
	t = NULL;

	/* The cache allocates again, from new pages. */
	head = NULL;
	for (i = 0; i < 4 * per; i++) {
		void *p = rslub_cache_alloc(e, GFP_KERNEL);

		if (!p)
			break;
		stamp(p, &head, 7);
	}
	bad = 0;
	if (free_chain(e, head, 7, &bad) != 4 * per || bad)
		why = "the cache does not allocate after the pressure";
	else if (empty1 >= empty0)
		why = "the empty slabs held did not drop under pressure";
	else if (rec1 - rec0 != empty0 - empty1)
		why = "empty_cache_reclaim does not count the slabs that went";
	else if (!ok_during)
		why = "no allocation succeeded during the pressure";
	else if (side.bad)
		why = "bad stamps in the allocating kthread";
	else if (rslub_cache_validate(e) || rslub_cache_validate(f) ||
		 rslub_cache_get(e, "errors") || rslub_cache_get(f, "errors"))
		why = "validate or errors report a problem";
out:
	if (t) {
		WRITE_ONCE(side.stop, true);
		wait_for_completion(&side.done);
		kthread_stop(t);
	}
	if (rslub_cache_destroy(e))
		why = why ?: "destroy failed";
	if (f && rslub_cache_destroy(f))
		why = why ?: "destroy failed";
	if (!why && rslub_pages_allocated() != pages_start)
		why = "slab pages left after destroy";
	if (why) {
		fail("shrinker", "round %u: %s", round, why);
		return;
	}
	pass("shrinker",
	     "round=%u empty_slabs %lld -> %lld reclaimed_slabs=%lld pages_given_back=%lld (order %lld) rslub_pages %ld -> %ld hog_pages=%lu (%s) side_allocs_during=%lu side_nulls=%lu",
	     round, empty0, empty1, rec1 - rec0, (rec1 - rec0) << order, order,
	     held0, held1, hog, hog_end, ok_during, side.null);
}

static int __init rslub_oom_init(void)
{
	unsigned int r;

	if (!strcmp(test, "create")) {
		test_create();
	} else if (!strcmp(test, "pressure")) {
		for (r = 1; r <= max(rounds, 1u); r++) {
			test_fill(r);
			test_shrinker(r);
		}
	} else {
		pr_err("rslub_oom: FAIL test=%s: not create or pressure\n", test);
		return -EINVAL;
	}
	if (failed_checks) {
		pr_err("rslub_oom: done test=%s, %u checks failed\n", test, failed_checks);
		return -EIO;
	}
	pr_info("rslub_oom: done test=%s\n", test);
	return 0;
}
module_init(rslub_oom_init);

static void __exit rslub_oom_exit(void)
{
}
module_exit(rslub_oom_exit);

MODULE_DESCRIPTION("rslub out of memory: injected failures and real pressure");
MODULE_LICENSE("GPL");
