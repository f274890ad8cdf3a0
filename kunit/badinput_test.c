// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite rslub_badinput: the C API's entries with bad arguments, the
 * rows of the "Bad input" tables in docs/reliability.md that the other
 * suites do not cover. Each case checks the contract: the return value,
 * and that nothing changed (objects, pages, tunables, statistics) and the
 * cache still works. Every refusal also logs one "rslub: " line, which
 * the table quotes; the cases do not read the log.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "rslub_kunit.h"

/* Allocates and frees a few objects: the cache still works. */
static void expect_works(struct kunit *test, struct rslub_cache *s)
{
	void *p[16];
	int i;

	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 16, p));
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_NOT_NULL(test, p[i]);
	rslub_cache_free_bulk(s, 16, p);
	p[0] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, p[0]);
	rslub_cache_free(s, p[0]);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 0);
}

/* Every entry refuses a NULL cache; nothing is allocated or freed. */
static void null_cache_is_refused(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-null", 64, 0, 0, NULL);
	long pages = rslub_pages_allocated();
	void *obj = rslub_cache_alloc(s, GFP_KERNEL);
	void *p[4] = { obj, NULL, NULL, NULL };

	KUNIT_ASSERT_NOT_NULL(test, obj);
	pages = rslub_pages_allocated();
	KUNIT_EXPECT_NULL(test, rslub_cache_alloc(NULL, GFP_KERNEL));
	KUNIT_EXPECT_NULL(test, rslub_cache_alloc_node(NULL, GFP_KERNEL, 0));
	KUNIT_EXPECT_FALSE(test, rslub_cache_alloc_bulk(NULL, GFP_KERNEL, 4, p));
	KUNIT_EXPECT_PTR_EQ(test, p[0], obj);
	rslub_cache_free(NULL, obj);
	rslub_cache_free(NULL, NULL);
	rslub_cache_free_bulk(NULL, 1, p);
	KUNIT_EXPECT_PTR_EQ(test, p[0], obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(NULL, "alloc_fastpath"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat_clear(NULL, "all"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(NULL, "objects"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(NULL, "cpu_partial", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(NULL), 0);
	/* The object is still allocated, nothing else was. */
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 1);
	KUNIT_EXPECT_EQ(test, rslub_pages_allocated(), pages);
	rslub_cache_free(s, obj);
	expect_works(test, s);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Names that are NULL, empty, too long or unknown, for each lookup call. */
static void bad_attribute_names_are_refused(struct kunit *test)
{
	static const char *const bad[] = {
		"", "nope", "objects ", "OBJECTS", "alloc_fastpath\n",
		"a_name_that_is_longer_than_32_bytes_x",
	};
	struct rslub_cache *s = make(test, "rslub-b-names", 64, 0, 0, NULL);
	long long fast, cp;
	int i;

	expect_works(test, s);
	fast = rslub_cache_stat(s, "alloc_fastpath");
	cp = rslub_cache_get(s, "cpu_partial");
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat_clear(s, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, NULL, 1), -EINVAL);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_stat(s, bad[i]), -EINVAL,
				    "'%s'", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_stat_clear(s, bad[i]),
				    -EINVAL, "'%s'", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_get(s, bad[i]), -EINVAL,
				    "'%s'", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_set(s, bad[i], 1), -EINVAL,
				    "'%s'", bad[i]);
	}
	/* A statistic is no attribute, an attribute no statistic. */
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "alloc_fastpath"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, "objects"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat_clear(s, "objects"), -EINVAL);
	/* Read-only attributes are no tunables. */
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "objects", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "errors", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "freelist_harden", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "alloc_fastpath", 0), -EINVAL);
	/* Nothing was cleared or set. */
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, "alloc_fastpath"), fast);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "cpu_partial"), cp);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "freelist_harden"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

struct bad_value {
	const char *name;
	long long value;
};

/* Each tunable just past its range, and far out; then its limits work. */
static void tunables_out_of_range_are_refused(struct kunit *test)
{
	static const struct bad_value bad[] = {
		{ "cpu_partial", -1 }, { "cpu_partial", 100001 },
		{ "cpu_partial", 1LL << 32 }, { "cpu_partial", LLONG_MIN },
		{ "cpu_partial", LLONG_MAX },
		{ "min_partial", -1 }, { "min_partial", 1001 },
		{ "min_partial", 1LL << 32 },
		{ "max_empty", -1 }, { "max_empty", 1001 },
		{ "max_empty", (1LL << 32) + 2 },
		{ "random_freelist", -1 }, { "random_freelist", 2 },
	};
	static const struct bad_value limits[] = {
		{ "cpu_partial", 100000 }, { "min_partial", 1000 },
		{ "max_empty", 1000 },
	};
	static const char *const knobs[] = { "cpu_partial", "min_partial",
					     "max_empty", "random_freelist" };
	struct rslub_cache *s = make(test, "rslub-b-range", 64, 0, 0, NULL);
	long long before[ARRAY_SIZE(knobs)];
	int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		before[i] = rslub_cache_get(s, knobs[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_set(s, bad[i].name, bad[i].value),
				    -EINVAL, "%s = %lld", bad[i].name, bad[i].value);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_get(s, knobs[i]), before[i],
				    "%s", knobs[i]);
	expect_works(test, s);
	for (i = 0; i < ARRAY_SIZE(limits); i++)
		KUNIT_EXPECT_EQ_MSG(test, rslub_cache_set(s, limits[i].name,
							  limits[i].value), 0,
				    "%s = %lld", limits[i].name, limits[i].value);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "cpu_partial"), 100000);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "min_partial"), 1000);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "max_empty"), 1000);
	expect_works(test, s);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* Names a cache cannot have (the others are in rslub_api). */
static void create_refuses_directory_names_and_huge_align(struct kunit *test)
{
	static const char *const bad[] = { ".", "..", "/", "a/", "/a" };
	struct rslub_cache *s;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		s = rslub_cache_create(bad[i], 64, 0, 0, NULL);
		KUNIT_EXPECT_TRUE_MSG(test, IS_ERR(s), "'%s'", bad[i]);
		if (IS_ERR(s))
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(s), -EINVAL, "'%s'", bad[i]);
		else
			rslub_cache_destroy(s);
	}
	/* "..." is an ordinary name. */
	s = make(test, "...", 64, 0, 0, NULL);
	expect_works(test, s);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	/* A power of two, but no slab layout fits it. */
	s = rslub_cache_create("rslub-b-align", 64, 1u << 31, 0, NULL);
	KUNIT_EXPECT_TRUE(test, IS_ERR(s));
	if (IS_ERR(s))
		KUNIT_EXPECT_EQ(test, PTR_ERR(s), -EINVAL);
	else
		rslub_cache_destroy(s);
}

/* Nodes that do not exist; __GFP_THISNODE on a node without memory. */
static void alloc_node_refuses_bad_nodes(struct kunit *test)
{
	static const int bad[] = { -2, INT_MIN, INT_MAX, MAX_NUMNODES };
	struct rslub_cache *s = make(test, "rslub-b-node", 128, 0, 0, NULL);
	long pages = rslub_pages_allocated();
	int i, nid;
	void *o;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_NULL_MSG(test, rslub_cache_alloc_node(s, GFP_KERNEL, bad[i]),
				      "node %d", bad[i]);
		KUNIT_EXPECT_NULL_MSG(test, rslub_cache_alloc_node(s, GFP_KERNEL |
								   __GFP_THISNODE,
								   bad[i]),
				      "node %d", bad[i]);
	}
	KUNIT_EXPECT_NULL(test, rslub_cache_alloc_node(s, GFP_KERNEL, nr_node_ids));
	/* Memoryless nodes (none in make check's VMs; the host test has one). */
	for_each_node(nid) {
		if (node_state(nid, N_MEMORY))
			continue;
		KUNIT_EXPECT_NULL(test, rslub_cache_alloc_node(s, GFP_KERNEL |
							       __GFP_THISNODE, nid));
		o = rslub_cache_alloc_node(s, GFP_KERNEL, nid);
		KUNIT_EXPECT_NOT_NULL(test, o);
		rslub_cache_free(s, o);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_pages_allocated(), pages);
	/* __GFP_THISNODE on a node with memory gets that node. */
	for_each_node_state(nid, N_MEMORY) {
		o = rslub_cache_alloc_node(s, GFP_KERNEL | __GFP_THISNODE, nid);
		KUNIT_ASSERT_NOT_NULL(test, o);
		KUNIT_EXPECT_EQ(test, page_to_nid(virt_to_page(o)), nid);
		rslub_cache_free(s, o);
	}
	expect_works(test, s);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* NULL arrays, nr 0, NULL and bad entries in bulk calls. */
static void bulk_calls_with_bad_arrays(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-bulk", 64, 0, 0, NULL);
	struct rslub_cache *t = make(test, "rslub-b-bulk2", 64, 0, 0, NULL);
	void *p[8] = { NULL }, *other, *km;
	unsigned long local = 0;
	int i;

	KUNIT_EXPECT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 0, NULL));
	KUNIT_EXPECT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 0, p));
	KUNIT_EXPECT_NULL(test, p[0]);
	KUNIT_EXPECT_FALSE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 4, NULL));
	rslub_cache_free_bulk(s, 0, NULL);
	rslub_cache_free_bulk(s, 4, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	/* NULL entries are skipped, the others freed. */
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 4, p));
	p[4] = p[3];
	p[3] = NULL;
	p[5] = NULL;
	rslub_cache_free_bulk(s, 6, p);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 0);
	/* Bad entries are reported one by one; the good ones are freed. */
	other = rslub_cache_alloc(t, GFP_KERNEL);
	km = kmalloc(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_NOT_NULL(test, km);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 3, p));
	p[3] = other;			/* another cache's object */
	p[4] = km;			/* kmalloc memory */
	p[5] = &local;			/* a stack address */
	p[6] = (u8 *)p[0] + 8;		/* an interior pointer */
	p[7] = NULL;
	rslub_cache_free_bulk(s, 8, p);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 4);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "isolated_slabs"), 0);
	KUNIT_EXPECT_EQ(test, local, 0ul);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(t, "objects"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_validate(s), 0);
	kfree(km);
	rslub_cache_free(t, other);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		p[i] = NULL;
	expect_works(test, t);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(t), 0);
}

/*
 * A caller freeing a bad pointer in a loop: every free is refused and
 * counted, the cache keeps working. (The log gets the first 10 and then
 * the errors numbered by a power of two: 16 lines for these 1000; the
 * host test a_flood_of_bad_frees_leaves_a_bounded_log counts them.)
 */
static void a_flood_of_bad_frees_is_counted(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-flood", 64, 0, 0, NULL);
	void *obj = rslub_cache_alloc(s, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, obj);
	for (i = 0; i < 1000; i++)
		rslub_cache_free(s, (u8 *)obj + 8);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1000);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 1);
	rslub_cache_free(s, obj);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, obj);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1000);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * A forged slab: a page holding a byte copy of a live slab's header (what
 * an attacker who read one header could write, or an overflow could leave)
 * is no slab of the cache. A free of a pointer into it is refused and
 * counted, and nothing is written to the page (until 2026-12-01 the copy
 * passed the magic check and the free cmpxchg'd the page's bytes).
 */
static void a_copied_slab_header_is_refused_on_plain_layout(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-forge", 64, 0, 0, NULL);
	unsigned int order = rslub_cache_get(s, "order");
	unsigned long bytes = PAGE_SIZE << order, off;
	struct page *page = alloc_pages(GFP_KERNEL, order);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL), *base, *fake, *copy;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	copy = kunit_kmalloc(test, bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, copy);
	fake = page_address(page);
	base = (u8 *)((unsigned long)obj & ~(bytes - 1));
	off = obj - base;
	memcpy(fake, base, bytes);
	memcpy(copy, fake, bytes);
	rslub_cache_free(s, fake + off);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 1);
	KUNIT_EXPECT_EQ(test, memcmp(fake, copy, bytes), 0);
	__free_pages(page, order);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* The case forges slabs of the plain layout, byte for byte. */
static void a_copied_slab_header_is_refused(struct kunit *test)
{
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		kunit_skip(test, "API objects have red zones on a KASAN kernel: %s",
			   "not the layout this case forges");
	a_copied_slab_header_is_refused_on_plain_layout(test);
}

/*
 * An overflow of 16 bytes from the memory before a slab lands on the first
 * words of its header. They are the magic and the owner, which every free
 * checks first, and not the [freelist, counters] pair: a full slab whose
 * first 16 bytes now read freelist 0, counters 1 refuses the free of one of
 * its objects (counted in errors), keeps its pages through a shrink, and
 * none of its live objects is handed out again. With the pair first (until
 * 2026-12-01), that free emptied the slab by its forged count, the shrink
 * gave its pages back, and the live objects were handed out again.
 */
static void an_overflow_onto_a_slab_header_frees_nothing(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-prefix", 64, 0, 0, NULL);
	unsigned int per = rslub_cache_get(s, "objs_per_slab");
	unsigned long bytes = PAGE_SIZE << rslub_cache_get(s, "order");
	unsigned long forged[2] = { 0, 1 }, saved[2];
	unsigned int n = 3 * per, i, j, in_slab = 0;
	void **objs = kunit_kcalloc(test, n, sizeof(void *), GFP_KERNEL);
	void **fresh = kunit_kcalloc(test, n, sizeof(void *), GFP_KERNEL);
	u8 *base;

	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, fresh);
	/* No CPU partial list, no empty slab kept: an emptied slab goes. */
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, "cpu_partial", 0), 0);
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, "min_partial", 0), 0);
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, "max_empty", 0), 0);
	for (i = 0; i < n; i++) {
		objs[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	/*
	 * A slab all of whose objects are in objs: full and none of its
	 * objects the CPU's to hand out (the test may have moved to another
	 * CPU while it allocated, so not necessarily the first slab).
	 */
	for (j = 0; j < n && in_slab != per; j++) {
		base = (u8 *)((unsigned long)objs[j] & ~(bytes - 1));
		for (i = 0, in_slab = 0; i < n; i++)
			in_slab += (unsigned long)((u8 *)objs[i] - base) < bytes;
	}
	KUNIT_ASSERT_EQ(test, in_slab, per);
	j--;
	memcpy(saved, base, sizeof(saved));
	memcpy(base, forged, sizeof(forged));
	rslub_cache_free(s, objs[j]);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), n);
	for (i = 0; i < n; i++) {
		fresh[i] = rslub_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fresh[i]);
		KUNIT_EXPECT_FALSE_MSG(test, (unsigned long)((u8 *)fresh[i] - base) < bytes,
				       "object %u of the new ones is in the damaged slab", i);
	}
	/* The header repaired, everything goes back. */
	memcpy(base, saved, sizeof(saved));
	for (i = 0; i < n; i++) {
		rslub_cache_free(s, fresh[i]);
		rslub_cache_free(s, objs[i]);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * Objects of 16 KiB keep their slab header outside the slab, named by
 * the slab's first struct page (its private word). A page of somebody
 * else's whose word names that live header, or names a block that is no
 * header, is no slab of the cache: the free is refused, the page untouched.
 */
static void a_page_naming_another_slabs_header_is_refused_on_plain_layout(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-outside", 16384, 0, 0, NULL);
	unsigned int order = rslub_cache_get(s, "order");
	unsigned long bytes = PAGE_SIZE << order, off;
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_ZERO, order);
	u8 *obj = rslub_cache_alloc(s, GFP_KERNEL), *base, *fake;
	void *decoy = kunit_kzalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_NOT_NULL(test, decoy);
	if (PAGE_SIZE == 4096) {
		/* 4 in an order-4 slab (3 with the header in it). */
		KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objs_per_slab"), 4);
		KUNIT_EXPECT_EQ(test, order, 4);
	}
	fake = page_address(page);
	base = (u8 *)((unsigned long)obj & ~(bytes - 1));
	off = obj - base;
	/* The objects start at the slab's first byte: no header in it. */
	KUNIT_EXPECT_EQ(test, off % 16384, 0);
	set_page_private(page, page_private(virt_to_page(base)));
	KUNIT_EXPECT_NE(test, page_private(page), 0);
	rslub_cache_free(s, fake + off);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 1);
	set_page_private(page, (unsigned long)decoy);
	rslub_cache_free(s, fake + off);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 2);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 1);
	KUNIT_EXPECT_TRUE(test, mem_is_zero(fake, bytes));
	set_page_private(page, 0);
	__free_pages(page, order);
	rslub_cache_free(s, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 2);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* The case forges slabs of the plain layout, byte for byte. */
static void a_page_naming_another_slabs_header_is_refused(struct kunit *test)
{
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		kunit_skip(test, "API objects have red zones on a KASAN kernel: %s",
			   "not the layout this case forges");
	a_page_naming_another_slabs_header_is_refused_on_plain_layout(test);
}

/* Pointers that are no live cache: refused, nothing freed twice. */
static void destroy_refuses_non_caches(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-b-destroy", 64, 0, 0, NULL);
	void *km = kmalloc(256, GFP_KERNEL);
	void *obj;

	KUNIT_ASSERT_NOT_NULL(test, km);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(km), -EINVAL);
	kfree(km);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	/* Destroyed already (no cache was created since, so no reuse). */
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EINVAL);
	/* After -EBUSY the cache is leaked and no longer live. */
	s = make(test, "rslub-b-destroy", 64, 0, 0, NULL);
	obj = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EBUSY);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), -EINVAL);
	/* The name is free again. */
	s = make(test, "rslub-b-destroy", 64, 0, 0, NULL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* The pages rslub holds come back to where they were. */
static void pages_count_returns_to_start(struct kunit *test)
{
	long pages = rslub_pages_allocated();
	struct rslub_cache *s = make(test, "rslub-b-pages", 64, 0, 0, NULL);

	expect_works(test, s);
	expect_works(test, s);
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, rslub_pages_allocated(), pages);
}

static struct kunit_case rslub_badinput_cases[] = {
	KUNIT_CASE(null_cache_is_refused),
	KUNIT_CASE(bad_attribute_names_are_refused),
	KUNIT_CASE(tunables_out_of_range_are_refused),
	KUNIT_CASE(create_refuses_directory_names_and_huge_align),
	KUNIT_CASE(alloc_node_refuses_bad_nodes),
	KUNIT_CASE(bulk_calls_with_bad_arrays),
	KUNIT_CASE(a_flood_of_bad_frees_is_counted),
	KUNIT_CASE(a_copied_slab_header_is_refused),
	KUNIT_CASE(an_overflow_onto_a_slab_header_frees_nothing),
	KUNIT_CASE(a_page_naming_another_slabs_header_is_refused),
	KUNIT_CASE(destroy_refuses_non_caches),
	KUNIT_CASE(pages_count_returns_to_start),
	{}
};

static struct kunit_suite rslub_badinput_suite = {
	.name = "rslub_badinput",
	.test_cases = rslub_badinput_cases,
};

kunit_test_suite(rslub_badinput_suite);
