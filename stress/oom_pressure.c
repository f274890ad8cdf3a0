// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_oom's test=pressure, for a small-memory VM: fill (three caches
 * filled until the system has nothing left, every object stamped and
 * verified at free, every page back after destroy) and shrinker (a hog
 * takes memory until reclaim runs rslub's shrinker, which must give the
 * empty slabs back while allocation keeps working). oom_main.c's comment
 * has the whole story.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "oom.h"

#define STAMP_KEY	0x5ca1ab1e0ddba11ull
#define SHRINK_SLABS	600	/* empty slabs the shrinker check caches */

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

void test_fill(unsigned int round)
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

void test_shrinker(unsigned int round)
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
