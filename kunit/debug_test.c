// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rslub_debug: rslub's debug features and hardening, case by
 * case the equivalents of in-tree lib/tests/slub_kunit.c (red zones,
 * poison, free pointer corruption, destroy with a live object), plus the
 * always-on checks of bad frees. Each case corrupts something on purpose
 * and checks that it is detected (the cache's "errors" counter rises; the
 * report goes to the kernel log as "rslub: " lines) and harmless (the cache
 * keeps allocating and freeing, validate is clean afterwards).
 *
 * Object layouts the cases rely on (docs/design.md): without debug
 * features the free pointer is the word half-way into the object
 * (FREE_PTR_WORD: word 4 of a 64-byte object, as in-tree); with SLAB_POISON it
 * follows the object (at the object size rounded up to a word, when there
 * are no red zones); with SLAB_RED_ZONE the byte right after the object is
 * red zone.
 */
#include <kunit/test.h>
#include <linux/poison.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "rslub_kunit.h"

/* The free pointer's word in a 64-byte object without debug features. */
#define FREE_PTR_WORD (64 / 2 / sizeof(unsigned long))

#define DEBUG_ALL (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | \
		   SLAB_STORE_USER)

static long long errors(struct rslub_cache *s)
{
	return rslub_cache_get(s, "errors");
}

/* The cache still works: allocate and free a batch, then validate clean. */
static void expect_healthy(struct kunit *test, struct rslub_cache *s,
			   unsigned int size)
{
	void *objs[64];
	long long before = errors(s);
	int i;

	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
		memset(objs[i], i, size);
	}
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		KUNIT_EXPECT_EQ(test, ((u8 *)objs[i])[size - 1], (u8)i);
		rslub_cache_free(s, objs[i]);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 0);
	KUNIT_EXPECT_EQ(test, errors(s), before);
}

static void debug_flags_are_accepted_and_shown(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-flags", RSLUB_MAX_OBJECT_SIZE, 0,
				     DEBUG_ALL | SLAB_HWCACHE_ALIGN, NULL);

	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "sanity_checks"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "red_zone"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "poison"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "store_user"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "freelist_harden"), 1);
	KUNIT_EXPECT_GE(test, rslub_cache_get(s, "slab_size"),
			(long long)RSLUB_MAX_OBJECT_SIZE + 16);
	/* The largest object works with every debug feature on. */
	expect_healthy(test, s, RSLUB_MAX_OBJECT_SIZE);
	/* Debug caches never take the lockless fast path. */
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, "alloc_fastpath"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* in-tree test_clobber_zone: one byte past a red-zoned object. */
static void write_past_object_detected_by_validate(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-rz", 64, 0, SLAB_RED_ZONE, NULL);
	u8 *p = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p[64] = 0x12;
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 1);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 1);
	rslub_cache_free(s, p);	/* its slab is isolated: ignored */
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void write_past_object_detected_on_free(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-rzf", 64, 0,
				     SLAB_RED_ZONE | SLAB_STORE_USER, NULL);
	u8 *p = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p[64] = 0x12;
	rslub_cache_free(s, p);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 1);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* in-tree test_next_pointer, on a hardened cache without debug features. */
static void corrupt_free_pointer_detected(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-fp", 64, 0, 0, NULL);
	unsigned long *p = rslub_cache_alloc(s, GFP_KERNEL);
	void *q = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "freelist_harden"), 1);
	rslub_cache_free(s, p);
	p[FREE_PTR_WORD] ^= 0xff;	/* the stored free pointer */
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 1);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 1);
	rslub_cache_free(s, q);	/* in the isolated slab: ignored */
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* The same, caught by the allocation that would follow the pointer. */
static void corrupt_free_pointer_detected_on_alloc(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-fpa", 64, 0, 0, NULL);
	unsigned long *p, *x;

	/* Free and reallocate on one CPU, so p heads this CPU's freelist. */
	preempt_disable();
	p = rslub_cache_alloc(s, GFP_ATOMIC);
	if (p) {
		rslub_cache_free(s, p);
		p[FREE_PTR_WORD] ^= 0xff;
	}
	x = rslub_cache_alloc(s, GFP_ATOMIC);
	preempt_enable();
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_EXPECT_PTR_NE(test, x, p);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	rslub_cache_free(s, x);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * Allocates and frees one 64-byte object of a fresh cache with @flags, then
 * XORs the byte at @offset of it with @flip (a write after free): validate
 * must find exactly that one damaged slab, and the cache must keep working.
 */
static void damage_after_free(struct kunit *test, const char *name,
			      slab_flags_t flags, unsigned int offset, u8 flip)
{
	struct rslub_cache *s = make(test, name, 64, 0, flags, NULL);
	u8 *p = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	rslub_cache_free(s, p);
	p[offset] ^= flip;
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 1);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Free pointer after the object in a poisoned cache (in-tree's layout). */
static void corrupt_free_pointer_of_poisoned_object(struct kunit *test)
{
	damage_after_free(test, "rslub-d-fpp", SLAB_POISON, 64, 0xff);
}

/* in-tree test_first_word: write the first word of a freed object. */
static void write_first_word_after_free(struct kunit *test)
{
	damage_after_free(test, "rslub-d-w0", SLAB_POISON, 0, 0x78 ^ POISON_FREE);
}

/* in-tree test_clobber_50th_byte. */
static void write_50th_byte_after_free(struct kunit *test)
{
	damage_after_free(test, "rslub-d-w50", SLAB_POISON, 50, 0x9a ^ POISON_FREE);
}

/* A write into a freed object is caught by the next allocation too. */
static void write_after_free_caught_on_alloc(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-wa", 64, 0,
				     SLAB_POISON | SLAB_STORE_USER, NULL);
	u8 *p = rslub_cache_alloc(s, GFP_KERNEL);
	u8 *x;

	KUNIT_ASSERT_NOT_NULL(test, p);
	rslub_cache_free(s, p);
	p[50] = 0x9a;
	x = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_EXPECT_PTR_NE(test, x, p);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	rslub_cache_free(s, x);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* in-tree test_clobber_redzone_free. */
static void clobber_red_zone_after_free(struct kunit *test)
{
	damage_after_free(test, "rslub-d-rzaf", SLAB_RED_ZONE, 64, 0xab ^ SLUB_RED_INACTIVE);
}

/* in-tree test_leak_destroy. */
static void destroy_with_live_object_is_reported(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-leak", 64, 0, DEBUG_ALL, NULL);
	void *p = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EBUSY);
	/* A failed destroy leaks the cache, so it can still be read. */
	KUNIT_EXPECT_EQ(test, errors(s), 1);
}

static void double_free(struct kunit *test, slab_flags_t flags)
{
	struct rslub_cache *s = make(test, "rslub-d-df", 64, 0, flags, NULL);
	void *p, *q;

	/* One CPU, so the second free meets the first at the freelist head. */
	preempt_disable();
	p = rslub_cache_alloc(s, GFP_ATOMIC);
	if (p) {
		rslub_cache_free(s, p);
		rslub_cache_free(s, p);
	}
	preempt_enable();
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	if (flags) {
		/* Debug caches also catch an object deeper in the freelist. */
		p = rslub_cache_alloc(s, GFP_KERNEL);
		q = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_ASSERT_NOT_NULL(test, q);
		rslub_cache_free(s, p);
		rslub_cache_free(s, q);
		rslub_cache_free(s, p);
		KUNIT_EXPECT_EQ(test, errors(s), 2);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 0);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void double_free_detected(struct kunit *test)
{
	double_free(test, 0);
}

static void double_free_detected_debug(struct kunit *test)
{
	double_free(test, SLAB_CONSISTENCY_CHECKS);
}

/* The same pointer twice in one bulk free (in-tree's naive check). */
static void bulk_double_free_detected(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-bdf", 64, 0, 0, NULL);
	void *objs[3];

	objs[0] = rslub_cache_alloc(s, GFP_KERNEL);
	objs[1] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs[0]);
	KUNIT_ASSERT_NOT_NULL(test, objs[1]);
	objs[2] = objs[1];
	rslub_cache_free_bulk(s, 3, objs);
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * A bulk free of 64 objects in a row of a slab of more than 64 (16-byte
 * objects, 252 a slab) and of the CPU freelist's head just after them:
 * the head is the one double free. The first object shares the head's
 * bit in the chain's filter and is freed all the same; a refusal would
 * leave it live, and the destroy would fail. The batch of 65 takes the
 * exact set from the start, and the same with the first 63 objects (64
 * entries, the 64th object freed after) the filter and its settling of
 * the head's bit.
 */
static void bulk_free_on_the_freelist_heads_bit(struct kunit *test)
{
	void *objs[65], *batch[65];
	unsigned int n, i;

	for (n = 64; n >= 63; n--) {
		/* A fresh cache: its first slab hands objects out in order. */
		struct rslub_cache *s = make(test, "rslub-d-bhb", 16, 0, 0, NULL);
		bool ok;

		/* One CPU, so objs[64] heads its freelist at the bulk free. */
		preempt_disable();
		ok = rslub_cache_alloc_bulk(s, GFP_ATOMIC, ARRAY_SIZE(objs), objs);
		if (ok) {
			rslub_cache_free(s, objs[64]);
			memcpy(batch, objs, n * sizeof(*batch));
			batch[n] = objs[64];
			rslub_cache_free_bulk(s, n + 1, batch);
			for (i = n; i < 64; i++)
				rslub_cache_free(s, objs[i]);
		}
		preempt_enable();
		KUNIT_ASSERT_TRUE(test, ok);
		KUNIT_EXPECT_EQ_MSG(test, errors(s), 1, "%u objects", n);
		expect_healthy(test, s, 16);
		KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	}
}

static void bad_frees(struct kunit *test, slab_flags_t flags)
{
	struct rslub_cache *s = make(test, "rslub-d-bad", 64, 0, flags, NULL);
	struct rslub_cache *t = make(test, "rslub-d-bad2", 64, 0, flags, NULL);
	unsigned long local = 0;
	u8 *p = rslub_cache_alloc(s, GFP_KERNEL);
	void *other = rslub_cache_alloc(t, GFP_KERNEL);
	void *km = kmalloc(64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_NOT_NULL(test, km);
	rslub_cache_free(s, other);		/* wrong cache */
	KUNIT_EXPECT_EQ(test, errors(s), 1);
	rslub_cache_free(s, &local);		/* a stack address */
	KUNIT_EXPECT_EQ(test, errors(s), 2);
	rslub_cache_free(s, km);		/* kmalloc memory */
	KUNIT_EXPECT_EQ(test, errors(s), 3);
	rslub_cache_free(s, p + 8);		/* an interior pointer */
	KUNIT_EXPECT_EQ(test, errors(s), 4);
	KUNIT_EXPECT_EQ(test, local, 0ul);
	kfree(km);
	/* Nothing was written into a freelist: both caches are intact. */
	memset(p, 0x11, 64);
	rslub_cache_free(s, p);
	rslub_cache_free(t, other);
	KUNIT_EXPECT_EQ(test, errors(t), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 0);
	expect_healthy(test, s, 64);
	expect_healthy(test, t, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(t), 0);
}

static void bad_frees_detected(struct kunit *test)
{
	bad_frees(test, 0);
}

static void bad_frees_detected_debug(struct kunit *test)
{
	bad_frees(test, DEBUG_ALL);
}

static void random_freelist_tunable(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-rnd", 64, 0, 0, NULL);
	unsigned long prev = 0;
	long long n;
	bool sorted = true;
	void **objs;
	int i;

	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "random_freelist"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "random_freelist", 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "random_freelist", 1), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "random_freelist"), 1);
	n = rslub_cache_get(s, "objs_per_slab");
	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	/* One CPU, one new slab: its objects in freelist order. */
	preempt_disable();
	for (i = 0; i < n; i++)
		objs[i] = rslub_cache_alloc(s, GFP_ATOMIC);
	preempt_enable();
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
		if ((unsigned long)objs[i] < prev)
			sorted = false;
		prev = (unsigned long)objs[i];
	}
	KUNIT_EXPECT_FALSE(test, sorted);
	for (i = 0; i < n; i++)
		rslub_cache_free(s, objs[i]);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * Every new slab gets its own freelist order (a random rotation of the
 * cache's shuffled sequence, as upstream), not one order for all: the
 * objects' offsets in their slab, in the order they are handed out, differ
 * between slabs. One CPU and a new cache, so the objects come slab by slab.
 */
static void random_freelist_differs_across_slabs(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-d-rnd2", 64, 0, 0, NULL);
	long long n = rslub_cache_get(s, "objs_per_slab");
	unsigned long slab_bytes = PAGE_SIZE << rslub_cache_get(s, "order");
	const int slabs = 8;
	unsigned long *off;
	int i, j, distinct = 0;
	bool one_slab_each = true;
	void **objs;

	KUNIT_ASSERT_GT(test, n, 1LL);
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, "random_freelist", 1), 0);
	objs = kunit_kcalloc(test, slabs * n, sizeof(*objs), GFP_KERNEL);
	off = kunit_kcalloc(test, slabs * n, sizeof(*off), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, off);
	preempt_disable();
	for (i = 0; i < slabs * n; i++)
		objs[i] = rslub_cache_alloc(s, GFP_ATOMIC);
	preempt_enable();
	for (i = 0; i < slabs * n; i++) {
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
		off[i] = (unsigned long)objs[i] & (slab_bytes - 1);
		/* Slab j holds objects j * n .. j * n + n - 1. */
		if (((unsigned long)objs[i] & ~(slab_bytes - 1)) !=
		    ((unsigned long)objs[i - i % n] & ~(slab_bytes - 1)))
			one_slab_each = false;
	}
	KUNIT_EXPECT_TRUE(test, one_slab_each);
	for (j = 0; j < slabs; j++) {
		for (i = 0; i < j; i++)
			if (!memcmp(&off[i * n], &off[j * n], n * sizeof(*off)))
				break;
		distinct += i == j;
	}
	/* Eight random starts among n give at most a few repeats. */
	KUNIT_EXPECT_GE(test, distinct, slabs / 2);
	for (i = 0; i < slabs * n; i++)
		rslub_cache_free(s, objs[i]);
	expect_healthy(test, s, 64);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static struct kunit_case rslub_debug_cases[] = {
	KUNIT_CASE(debug_flags_are_accepted_and_shown),
	KUNIT_CASE(write_past_object_detected_by_validate),
	KUNIT_CASE(write_past_object_detected_on_free),
	KUNIT_CASE(corrupt_free_pointer_detected),
	KUNIT_CASE(corrupt_free_pointer_detected_on_alloc),
	KUNIT_CASE(corrupt_free_pointer_of_poisoned_object),
	KUNIT_CASE(write_first_word_after_free),
	KUNIT_CASE(write_50th_byte_after_free),
	KUNIT_CASE(write_after_free_caught_on_alloc),
	KUNIT_CASE(clobber_red_zone_after_free),
	KUNIT_CASE(destroy_with_live_object_is_reported),
	KUNIT_CASE(double_free_detected),
	KUNIT_CASE(double_free_detected_debug),
	KUNIT_CASE(bulk_double_free_detected),
	KUNIT_CASE(bulk_free_on_the_freelist_heads_bit),
	KUNIT_CASE(bad_frees_detected),
	KUNIT_CASE(bad_frees_detected_debug),
	KUNIT_CASE(random_freelist_tunable),
	KUNIT_CASE(random_freelist_differs_across_slabs),
	{}
};

static struct kunit_suite rslub_debug_suite = {
	.name = "rslub_debug",
	.test_cases = rslub_debug_cases,
};

kunit_test_suite(rslub_debug_suite);
