// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rslub_kdebug: rslub's API objects under the kernel's memory
 * debuggers (c_shim/kdebug.c), on a kernel with generic KASAN (the debug
 * flavor, make check DEBUG=1); every case skips elsewhere.
 *
 * Each bad access runs in a kthread of its own: a KASAN report inside a
 * KUnit test's own thread fails that test (mm/kasan/report.c), and the
 * API KASAN's own tests use to stop that is built only with
 * CONFIG_KASAN_KUNIT_TEST. The report is seen the way KASAN's tests see
 * theirs, by a probe on the console tracepoint that looks for "BUG:
 * KASAN: " and the kind of report; the kthread only collects, the test
 * thread asserts. The guest boots with kasan_multi_shot (every report
 * printed, not the first alone).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <trace/events/printk.h>

#include "rslub.h"
#include "rslub_kunit.h"

#define OBJ_SIZE 60

/* What the console showed since the last reset. */
static struct {
	bool report;	/* "BUG: KASAN: " */
	bool uaf;	/* "slab-use-after-free" */
	bool oob;	/* "slab-out-of-bounds" */
	bool dfree;	/* the cache's report of a double free */
} seen;

static void probe_console(void *ignore, const char *buf, size_t len)
{
	if (strnstr(buf, "BUG: KASAN: ", len))
		WRITE_ONCE(seen.report, true);
	if (strnstr(buf, "slab-use-after-free", len))
		WRITE_ONCE(seen.uaf, true);
	if (strnstr(buf, "slab-out-of-bounds", len))
		WRITE_ONCE(seen.oob, true);
	if (strnstr(buf, "(double free)", len))
		WRITE_ONCE(seen.dfree, true);
}

static int kdebug_suite_init(struct kunit_suite *suite)
{
	if (!IS_ENABLED(CONFIG_KASAN_GENERIC))
		return 0;
	return register_trace_console(probe_console, NULL);
}

static void kdebug_suite_exit(struct kunit_suite *suite)
{
	if (!IS_ENABLED(CONFIG_KASAN_GENERIC))
		return;
	unregister_trace_console(probe_console, NULL);
	tracepoint_synchronize_unregister();
}

static int kdebug_init(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_KASAN_GENERIC))
		kunit_skip(test, "needs a kernel with generic KASAN (make check DEBUG=1)");
	memset(&seen, 0, sizeof(seen));
	return 0;
}

/* A bad access, made by a kthread (see the top). */
struct bad {
	void (*fn)(struct bad *b);
	u8 *obj;
	struct completion done;
};

static int bad_thread(void *arg)
{
	struct bad *b = arg;

	b->fn(b);
	complete(&b->done);
	return 0;
}

static void run_bad(struct kunit *test, void (*fn)(struct bad *b), u8 *obj)
{
	struct bad b = { .fn = fn, .obj = obj };
	struct task_struct *t;

	init_completion(&b.done);
	t = kthread_run(bad_thread, &b, "rslub_kdebug");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&b.done);
}

static void read_first(struct bad *b)
{
	/* Not the word at OBJ_SIZE / 2 rounded down: the free pointer. */
	READ_ONCE(b->obj[0]);
}

static void write_past_end(struct bad *b)
{
	WRITE_ONCE(b->obj[OBJ_SIZE], 0x5a);
}

static void write_before_start(struct bad *b)
{
	WRITE_ONCE(b->obj[-1], 0x5a);
}

static void read_last(struct bad *b)
{
	READ_ONCE(b->obj[OBJ_SIZE - 1]);
}

/* A read of a freed API object: slab-use-after-free. */
static void kdebug_use_after_free(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_uaf", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	run_bad(test, read_first, obj);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.report));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.uaf));
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* A write one byte past an object, and one byte before it. */
static void kdebug_out_of_bounds(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_oob", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	run_bad(test, write_past_end, obj);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.report));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.oob));
	memset(&seen, 0, sizeof(seen));
	run_bad(test, write_before_start, obj);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.oob));
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
	run_bad(test, read_last, obj);
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
	KUNIT_EXPECT_FALSE(test, READ_ONCE(seen.report));
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * A second free is reported and refused: the object is not handed out
 * twice afterwards.
 */
static void kdebug_double_free(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub_kt_kd_df", OBJ_SIZE, 0, 0, NULL);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL);
	u8 *a, *b;

	KUNIT_ASSERT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(seen.dfree));
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

static struct kunit_case rslub_kdebug_cases[] = {
	KUNIT_CASE(kdebug_use_after_free),
	KUNIT_CASE(kdebug_out_of_bounds),
	KUNIT_CASE(kdebug_in_bounds_is_quiet),
	KUNIT_CASE(kdebug_double_free),
	KUNIT_CASE(kdebug_init_on_alloc),
	{}
};

static struct kunit_suite rslub_kdebug_suite = {
	.name = "rslub_kdebug",
	.suite_init = kdebug_suite_init,
	.suite_exit = kdebug_suite_exit,
	.init = kdebug_init,
	.test_cases = rslub_kdebug_cases,
};

kunit_test_suite(rslub_kdebug_suite);
