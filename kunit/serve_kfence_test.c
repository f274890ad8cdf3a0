// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_serve's KFENCE case: KFENCE keeps sampling a served cache. A
 * sampled object is KFENCE's from allocation to free: rslub never counts
 * it, every way it goes back (kmem_cache_free, kfree_rcu, a bulk free
 * mixed with rslub's objects) hands it to KFENCE, and KFENCE reports a bad
 * access to it, naming the function that made it and the cache.
 *
 * The test kernel has KFENCE built in and off (config/test.config): the
 * case sets a 1 ms sample interval through its parameter and puts the
 * one before back when it ends.
 */
#include <kunit/test.h>
#include <linux/jiffies.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "rslub.h"
#include "rslub_kunit.h"
#include "serve_test.h"

/* In each of KFENCE's reports on this case's objects. */
#define KT_CACHE "cache=rslub_kt_kfence"
#define KFENCE_INTERVAL "/sys/module/kfence/parameters/sample_interval"

/*
 * 64 bytes: a KFENCE object placed at the right of its page then ends at
 * the page's end, so the byte after it is in the guard page. The rcu_head
 * is in the middle, so kfree_rcu() must find the object's start.
 */
struct kt_kfence_obj {
	char before[24];
	struct rcu_head rcu;
	char after[24];
};

/* Where the case keeps KFENCE's sample interval from before it. */
#define KFENCE_SAVED "/tmp/rslub_kt_kfence_interval"

/* Saves KFENCE's sample interval, then sets it to @ms: 0 or why not. */
static int kfence_interval(const char *ms)
{
	return kt_sh("cat %s > %s && echo %s > %s", KFENCE_INTERVAL, KFENCE_SAVED,
		     ms, KFENCE_INTERVAL);
}

/* Puts the saved interval back (0, as the test kernel boots: off). */
static void kfence_restore(void *unused)
{
	kt_sh("cat %s > %s", KFENCE_SAVED, KFENCE_INTERVAL);
}

/*
 * An object of @s that KFENCE sampled: allocates and frees until one is
 * (the limit only ends a failing case: 60 s).
 */
static void *kt_sampled(struct kunit *test, struct kmem_cache *s)
{
	unsigned long end = jiffies + 60 * HZ;

	while (time_before(jiffies, end)) {
		void *p = kmem_cache_alloc(s, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, p);
		if (is_kfence_address(p))
			return p;
		kmem_cache_free(s, p);
		cond_resched();
	}
	KUNIT_FAIL_AND_ABORT(test, "KFENCE sampled no object of the served cache in 60 s");
	return NULL;
}

/* The byte just outside @obj, in the guard page beside it. */
static u8 *kt_beyond(void *obj)
{
	if (offset_in_page(obj) == 0)
		return (u8 *)obj - 1;
	return (u8 *)obj + sizeof(struct kt_kfence_obj);
}

struct kt_kfence_free {
	struct kmem_cache *s;
	void *obj;
};

static noinline void kt_kfence_free_again(void *arg)
{
	struct kt_kfence_free *f = arg;

	kmem_cache_free(f->s, f->obj);
	barrier();	/* a call, not a jump: this function is in the stack */
}

void kfence_samples_a_served_cache(struct kunit *test)
{
	const char *name = "rslub_kt_kfence";
	struct kmem_cache *s;
	struct kt_kfence_obj *obj;
	struct kt_kfence_free f;
	void *p[3];
	long out;
	int i;

	if (!IS_ENABLED(CONFIG_KFENCE))
		kunit_skip(test, "kernel without KFENCE");
	if (IS_ENABLED(CONFIG_KASAN))
		kunit_skip(test, "KASAN is on: the kernel serves no cache");
	KUNIT_ASSERT_EQ_MSG(test, kfence_interval("1"), 0, "cannot write " KFENCE_INTERVAL);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kfence_restore, NULL), 0);
	s = kmem_cache_create(name, sizeof(*obj), 0, SLAB_NO_MERGE, NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);

	/* KFENCE's object: rslub does not count it, KFENCE guards it. */
	obj = kt_sampled(test, s);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KUNIT_EXPECT_EQ(test, ksize(obj), sizeof(*obj));
	KT_EXPECT_REPORT(test, kt_read_byte, kt_beyond(obj),
			 "BUG: KFENCE: out-of-bounds read in kt_read_byte",
			 KT_CACHE);
	/* Freed to KFENCE: a read after is reported, so is a second free. */
	kmem_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KT_EXPECT_REPORT(test, kt_read_byte, obj,
			 "BUG: KFENCE: use-after-free read in kt_read_byte",
			 KT_CACHE);
	f.s = s;
	f.obj = obj;
	KT_EXPECT_REPORT(test, kt_kfence_free_again, &f,
			 "BUG: KFENCE: invalid free in kt_kfence_free_again",
			 KT_CACHE);

	/* A bulk free of KFENCE's object among rslub's. */
	p[1] = kt_sampled(test, s);
	p[0] = kmem_cache_alloc(s, GFP_KERNEL);
	p[2] = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	KUNIT_ASSERT_NOT_NULL(test, p[2]);
	/* Each may be sampled too: rslub counts the others. */
	for (out = 0, i = 0; i < ARRAY_SIZE(p); i++)
		out += !is_kfence_address(p[i]);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), out);
	obj = p[1];	/* the bulk free clears the array's entries */
	kmem_cache_free_bulk(s, ARRAY_SIZE(p), p);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 0);
	KT_EXPECT_REPORT(test, kt_read_byte, obj,
			 "BUG: KFENCE: use-after-free read in kt_read_byte",
			 KT_CACHE);

	/*
	 * kfree_rcu() by a head inside the object, last: the object may wait
	 * in the cache's RCU sheaf, which only the cache's destroy is sure to
	 * flush (with the barrier of its kfree_rcu()s). KFENCE names the
	 * cache of an object freed before its destroy "<destroyed>". KFENCE
	 * stays on until the case ends: switched off, it lets a fault on its
	 * pages through without a report.
	 */
	obj = kt_sampled(test, s);
	kfree_rcu(obj, rcu);
	kmem_cache_destroy(s);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), -ENOENT);
	KT_EXPECT_REPORT(test, kt_read_byte, obj->after,
			 "BUG: KFENCE: use-after-free read in kt_read_byte",
			 "cache=<destroyed>");
}
