// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rslub_kdebug: rslub's API objects under the kernel's memory
 * debuggers (c_shim/kdebug.c), on a kernel with generic KASAN and kmemleak
 * (the debug flavor, make check DEBUG=1); every case skips elsewhere.
 *
 * Each bad access is made by kt_expect_report() (kt_report.c): in a
 * kthread, watched on the console for "BUG: KASAN: " and the kind of
 * report, with the function that made the access (the report's stack).
 * The guest boots with kasan_multi_shot (every report printed, not the
 * first alone).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "rslub_kunit.h"

#define OBJ_SIZE 60

static int kdebug_init(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_KASAN_GENERIC))
		kunit_skip(test, "needs a kernel with generic KASAN (make check DEBUG=1)");
	return 0;
}

/* What a report-free access must not print. */
static const char *const any_report[] = { "BUG: KASAN: " };

/* A read of a freed API object: slab-use-after-free. */
static void kdebug_use_after_free(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_uaf", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	/* Not the word at OBJ_SIZE / 2 rounded down: the free pointer. */
	KT_EXPECT_REPORT(test, kt_read_byte, obj,
			 "BUG: KASAN: slab-use-after-free in kt_read_byte");
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* A write one byte past an object, and one byte before it. */
static void kdebug_out_of_bounds(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_oob", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	KT_EXPECT_REPORT(test, kt_write_byte, obj + OBJ_SIZE,
			 "BUG: KASAN: slab-out-of-bounds in kt_write_byte");
	KT_EXPECT_REPORT(test, kt_write_byte, obj - 1,
			 "BUG: KASAN: slab-out-of-bounds in kt_write_byte");
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Every byte of a live object is the user's: no report. */
static void kdebug_in_bounds_is_quiet(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_ok", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);
	void *batch[16];

	KUNIT_ASSERT_NOT_NULL(test, obj);
	memset(obj, 0xa5, OBJ_SIZE);
	KUNIT_EXPECT_EQ(test, kt_expect_report(test, kt_read_byte, obj + OBJ_SIZE - 1,
					       any_report, 1), 0);
	rslub_cache_free(s, obj);
	/* Bulk objects too, and reuse after free. */
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 16, batch));
	for (int i = 0; i < 16; i++)
		memset(batch[i], i, OBJ_SIZE);
	rslub_cache_free_bulk(s, 16, batch);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	memset(obj, 0, OBJ_SIZE);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * A second free is reported and refused: the object is not handed out
 * twice afterwards.
 */
struct kt_free {
	struct rslub_cache *s;
	void *obj;
};

static noinline void kt_free_again(void *arg)
{
	struct kt_free *f = arg;

	rslub_cache_free(f->s, f->obj);
	barrier();	/* a call, not a jump: this function is in the stack */
}

static void kdebug_double_free(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_df", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);
	struct kt_free f = { .s = s, .obj = obj };
	u8 *a, *b;

	KUNIT_ASSERT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	KT_EXPECT_REPORT(test, kt_free_again, &f, "rslub_kt_kd_df", "(double free)");
	a = rslub_cache_alloc(s, GFP_KERNEL);
	b = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_PTR_NE(test, a, b);
	rslub_cache_free(s, a);
	rslub_cache_free(s, b);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* init_on_alloc (the debug flavor's default): objects come zeroed. */
static void kdebug_init_on_alloc(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_init", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	if (!want_init_on_alloc(GFP_KERNEL)) {
		rslub_cache_free(s, obj);
		rslub_cache_destroy(s);
		kunit_skip(test, "init_on_alloc is off");
	}
	memset(obj, 0xa5, OBJ_SIZE);
	rslub_cache_free(s, obj);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(obj, 0, OBJ_SIZE));
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * kmemleak, which scans every object registered with it for pointers to
 * the others: an rslub object nothing points to is reported as a leak;
 * one only another rslub object points to is not (rslub's objects are
 * scanned). The leak is allocated by a kthread, so no stale copy of its
 * address stays on the test's stack; only its address XOR KT_HIDE is
 * kept, which points nowhere.
 */
#define KT_HIDE 0x5a5a5a5a5a5a5a5aUL
#define KMEMLEAK_FILE "/sys/kernel/debug/kmemleak"
static struct rslub_cache *leak_cache;
static unsigned long leak_hidden;
static void *leak_holder;	/* in .bss, which kmemleak scans */

static noinline void kt_leak(void *arg)
{
	void *obj = rslub_cache_alloc(leak_cache, GFP_KERNEL);

	if (obj) {
		/* A zero object's checksum does not change at the first scan. */
		memset(obj, 0, OBJ_SIZE);
		WRITE_ONCE(leak_hidden, (unsigned long)obj ^ KT_HIDE);
	}
}

/* Whether kmemleak's list of suspected leaks names @addr. */
static bool kmemleak_reports(unsigned long addr)
{
	return kt_sh("grep -q 'unreferenced object 0x%08lx ' " KMEMLEAK_FILE, addr) == 0;
}

static void kdebug_kmemleak(struct kunit *test)
{
	void *kept;
	unsigned long leaked;
	int ret;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "needs a kernel with kmemleak (make check DEBUG=1)");
	ret = kt_sh("echo clear > " KMEMLEAK_FILE);
	if (ret)
		kunit_skip(test, "no %s (kmemleak off, or debugfs not mounted): %d",
			   KMEMLEAK_FILE, ret);
	leak_cache = make(test, "rslub_kt_kd_leak", OBJ_SIZE, 0, 0, NULL);
	kt_run_kthread(test, kt_leak, NULL);
	leaked = READ_ONCE(leak_hidden) ^ KT_HIDE;
	KUNIT_ASSERT_NE(test, leak_hidden, 0);
	leak_holder = rslub_cache_alloc(leak_cache, GFP_KERNEL);
	kept = rslub_cache_alloc(leak_cache, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, leak_holder);
	KUNIT_ASSERT_NOT_NULL(test, kept);
	memset(leak_holder, 0, OBJ_SIZE);
	memset(kept, 0, OBJ_SIZE);
	*(void **)leak_holder = kept;
	kept = NULL;
	/*
	 * kmemleak reports objects older than 5 s, and not at the scan that
	 * first sees their checksum change: two scans, after 5 s.
	 */
	msleep(5500);
	ret = kt_sh("echo scan > %s && echo scan > %s", KMEMLEAK_FILE, KMEMLEAK_FILE);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE_MSG(test, kmemleak_reports(leaked), "the leak is not reported");
	KUNIT_EXPECT_FALSE_MSG(test, kmemleak_reports((unsigned long)*(void **)leak_holder),
			       "an object referenced from an rslub object is reported");
	KUNIT_EXPECT_FALSE_MSG(test, kmemleak_reports((unsigned long)leak_holder),
			       "an object referenced from .bss is reported");
	rslub_cache_free(leak_cache, (void *)leaked);
	rslub_cache_free(leak_cache, *(void **)leak_holder);
	rslub_cache_free(leak_cache, leak_holder);
	leak_holder = NULL;
	leak_hidden = 0;
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(leak_cache), 0);
}

static struct kunit_case rslub_kdebug_cases[] = {
	KUNIT_CASE(kdebug_use_after_free),
	KUNIT_CASE(kdebug_out_of_bounds),
	KUNIT_CASE(kdebug_in_bounds_is_quiet),
	KUNIT_CASE(kdebug_double_free),
	KUNIT_CASE(kdebug_init_on_alloc),
	KUNIT_CASE_SLOW(kdebug_kmemleak),
	{}
};

static struct kunit_suite rslub_kdebug_suite = {
	.name = "rslub_kdebug",
	.init = kdebug_init,
	.test_cases = rslub_kdebug_cases,
};

kunit_test_suite(rslub_kdebug_suite);
