// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_serve's cases of RCU on served caches (the suites are in
 * serve_test.c): kfree_rcu() of both allocators' objects before a destroy,
 * kfree_rcu()'s list path, which must find each object's start in a slab
 * of rslub's layout, on caches of the test's own and (rslub_serve_kmalloc)
 * on kmalloc caches, and a SLAB_TYPESAFE_BY_RCU cache under an RCU reader.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sprintf.h>

#include "rslub.h"
#include "rslub_kunit.h"
#include "serve_test.h"

struct rcu_obj {
	struct rcu_head rcu;
	char data[48];
};

/* kfree_rcu() objects of both allocators; destroy waits for them. */
void kfree_rcu_and_destroy(struct kunit *test)
{
	const char *name = "rslub_kt_rcu";
	struct kmem_cache *s = kmem_cache_create(name, sizeof(struct rcu_obj),
						 0, SLAB_NO_MERGE, NULL);
	struct rcu_obj *o[12];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	o[0] = kmem_cache_alloc(s, GFP_KERNEL);
	o[1] = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, o[0] && o[1]);
	serve(test, name);
	for (i = 2; i < ARRAY_SIZE(o); i++) {
		o[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, o[i]);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 10);
	for (i = 0; i < ARRAY_SIZE(o); i++)
		kfree_rcu(o[i], rcu);
	/* Waits for the kfree_rcu()s; rslub's cache goes with the kernel's. */
	kmem_cache_destroy(s);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), -ENOENT);
}

/*
 * kfree_rcu()'s list path. With no page of pointer arrays at hand,
 * kvfree_call_rcu() links the objects by their rcu_heads instead (it
 * writes the head's first word), and after the grace period finds each
 * object's start from its rcu_head's page (kvmalloc_obj_start_addr()):
 * by SLUB's arithmetic on s->size, that lands inside a neighbour of an
 * object of rslub's layout (its slab header comes first), so the free was
 * refused and, with init_on_free=1, the live neighbour wiped. The head
 * sits 40 bytes into the object, so the start must be found, not assumed.
 */
struct kt_rcu_mid {
	char before[40];
	struct rcu_head rcu;
};

/* The first word of a head kfree_rcu() has not linked yet. */
#define KT_RCU_UNLINKED ((struct rcu_head *)0x5a5a5a5a5a5a5a5aUL)
/* Pairs allocated at most, and list-path frees wanted at least. */
#define KT_RCU_PAIRS 8192
#define KT_RCU_LISTED 256

/* A byte of live object @i's pattern, at offset @j. */
static u8 kt_rcu_byte(unsigned int i, unsigned int j)
{
	return (u8)(i * 131 + j * 7 + 1);
}

/*
 * Waits for every kfree_rcu() in flight: kmem_cache_destroy() does
 * (kvfree_rcu_barrier() itself is not exported).
 */
void kt_kfree_rcu_barrier(struct kunit *test)
{
	struct kmem_cache *b = kmem_cache_create("rslub_kt_rcu_barrier", 8, 0,
						 SLAB_NO_MERGE, NULL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	kmem_cache_destroy(b);
}

struct kt_rcu_run {
	void **o;		/* 2 * KT_RCU_PAIRS objects */
	unsigned int pairs;	/* odd objects freed by kfree_rcu() */
	unsigned int listed;	/* of those, freed by the list path */
	unsigned int sampled;	/* of all, KFENCE's */
};

/*
 * Allocates pairs of objects of @size bytes (from @s, or kmalloc() when
 * NULL), fills them, then, with preemption off, frees the odd ones by
 * kfree_rcu() (kvfree_rcu() when @kv) until KT_RCU_LISTED of them took
 * the list path. Preemption off keeps this CPU's page cache of pointer
 * arrays from being refilled (its work item runs on this CPU) and every
 * object from being freed (no grace period ends): once the arrays are
 * full, every free takes the list path, and each is counted by its head.
 */
static void kt_rcu_free_odd(struct kunit *test, struct kmem_cache *s,
			    unsigned int size, bool kv, struct kt_rcu_run *r)
{
	unsigned int i, j;

	r->o = kvcalloc(2 * KT_RCU_PAIRS, sizeof(void *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->o);
	r->sampled = 0;
	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		u8 *x = s ? kmem_cache_alloc(s, GFP_KERNEL) : kmalloc(size, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, x);
		for (j = 0; j < size; j++)
			x[j] = kt_rcu_byte(i, j);
		r->o[i] = x;
		r->sampled += is_kfence_address(x);
	}
	r->pairs = 0;
	r->listed = 0;
	preempt_disable();
	for (i = 1; i < 2 * KT_RCU_PAIRS && r->listed < KT_RCU_LISTED; i += 2) {
		struct kt_rcu_mid *m = r->o[i];

		WRITE_ONCE(m->rcu.next, KT_RCU_UNLINKED);
		if (kv)
			kvfree_rcu(m, rcu);
		else
			kfree_rcu(m, rcu);
		r->listed += READ_ONCE(m->rcu.next) != KT_RCU_UNLINKED;
		r->o[i] = NULL;
		r->pairs++;
	}
	preempt_enable();
	kunit_info(test, "%u objects by kfree_rcu(), %u of them by its list path; %u of all sampled by KFENCE",
		   r->pairs, r->listed, r->sampled);
}

/* Live objects whose bytes changed since kt_rcu_free_odd() filled them. */
static unsigned int kt_rcu_damaged(struct kt_rcu_run *r, unsigned int size)
{
	unsigned int i, j, bad = 0;

	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		u8 *x = r->o[i];

		if (!x)
			continue;
		for (j = 0; j < size; j++) {
			if (x[j] != kt_rcu_byte(i, j)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* Frees what kt_rcu_free_odd() left live, and its array. */
static void kt_rcu_free_rest(struct kmem_cache *s, struct kt_rcu_run *r)
{
	unsigned int i;

	for (i = 0; i < 2 * KT_RCU_PAIRS; i++) {
		if (!r->o[i])
			continue;
		if (s)
			kmem_cache_free(s, r->o[i]);
		else
			kfree(r->o[i]);
	}
	kvfree(r->o);
}

/*
 * A served cache of @size-byte objects: objects freed by kfree_rcu()'s
 * list path go back to rslub, their live neighbours keep every byte (with
 * init_on_free=1 a wrong start would wipe one), nothing is refused, and
 * the cache drains and is destroyed without a warning.
 */
static void kt_rcu_list_path_on(struct kunit *test, const char *name,
				unsigned int size)
{
	struct kmem_cache *s = kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
	struct kt_rcu_run r;
	char stop[40];

	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	kt_rcu_free_odd(test, s, size, false, &r);
	kt_kfree_rcu_barrier(test);
	KUNIT_EXPECT_GE(test, r.listed, KT_RCU_LISTED);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "errors"), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name),
			(long)(2 * KT_RCU_PAIRS - r.pairs));
	KUNIT_EXPECT_EQ(test, kt_rcu_damaged(&r, size), 0);
	kt_rcu_free_rest(s, &r);
	snprintf(stop, sizeof(stop), "-%s", name);
	KUNIT_EXPECT_EQ(test, rslub_serve(stop), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

void kfree_rcu_list_path_96(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu96", 96);
}

void kfree_rcu_list_path_192(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu192", 192);
}

void kfree_rcu_list_path_200(struct kunit *test)
{
	kt_rcu_list_path_on(test, "rslub_kt_rcu200", 200);
}

/*
 * A SLAB_TYPESAFE_BY_RCU kernel cache served. An RCU reader (rcu_reader.c)
 * keeps reading a served object while the test frees it, allocates and
 * frees again, and shrinks rslub's cache: the slab leaves the cache but
 * its pages wait for the reader (rcu_pending_slabs above 0 while it is
 * inside), and the reader sees only what the test wrote (neither a poison
 * nor a free pointer where it reads: the cache sets a freeptr_offset,
 * which rslub keeps to). Asserted here from what the reader counted.
 */
struct typesafe_obj {
	unsigned long seq;
	unsigned long freeptr;	/* The cache's freeptr_offset. */
	char data[80];
};

void typesafe_by_rcu_served_under_a_reader(struct kunit *test)
{
	const char *name = "rslub_kt_typesafe";
	struct kmem_cache_args args = {
		.freeptr_offset = offsetof(struct typesafe_obj, freeptr),
		.use_freeptr_offset = true,
	};
	struct typesafe_obj *o, *again;
	struct kt_rcu_reader *r;
	struct kmem_cache *s;

	s = kmem_cache_create(name, sizeof(*o), &args, SLAB_TYPESAFE_BY_RCU);
	KUNIT_ASSERT_NOT_NULL(test, s);
	serve(test, name);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "typesafe_by_rcu"), 1);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_EXPECT_EQ(test, rslub_served_objects(name), 1);
	r = kt_rcu_reader_start(test, &o->seq);

	kmem_cache_free(s, o);
	again = kmem_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, again);
	if (again) {
		again->seq = KT_RCU_READER_SECOND;
		kmem_cache_free(s, again);
	}
	KUNIT_EXPECT_EQ(test, rslub_served_shrink(name), 0);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "slabs"), 0);
	/* Time for a grace period, were the reader not inside. */
	msleep(100);
	KUNIT_EXPECT_GT(test, rslub_served_get(name, "rcu_pending_slabs"), 0);

	kt_rcu_reader_stop(test, r);
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "rcu_pending_slabs"), 0);
	KUNIT_EXPECT_EQ(test, rslub_serve("-rslub_kt_typesafe"), 0);
	KUNIT_EXPECT_EQ(test, wait_gone(name), -ENOENT);
	kmem_cache_destroy(s);
}

/*
 * The list path of kvfree_rcu() and kfree_rcu() on kmalloc caches, which
 * only the served-cache guest serves (serve='*': a kmalloc cache served
 * for a moment would keep the kernel's long-lived objects in rslub, and
 * rslub loaded). The cache's own counters cannot be exact there (the
 * kernel allocates and frees beside the test): what is checked is that
 * the objects came from rslub, nothing was refused and no live neighbour
 * changed.
 */
/*
 * @x lies in a slab page of a slab backend: the patch marks those with
 * SL_backend, which is PG_owner_priv_1 of the slab's head page.
 */
static bool kt_from_backend(const void *x)
{
	struct page *head = compound_head(virt_to_page(x));

	return PageSlab(head) && test_bit(PG_owner_priv_1, &head->flags.f);
}

static void kt_rcu_list_path_kmalloc(struct kunit *test, const char *name,
				     unsigned int size, bool kv)
{
	unsigned int i, theirs = 0;
	long long errors;
	struct kt_rcu_run r;

	if (rslub_served_objects(name) < 0)
		kunit_skip(test, "%s is not served: the served-cache guest runs this (serve='*')",
			   name);
	errors = rslub_served_get(name, "errors");
	kt_rcu_free_odd(test, NULL, size, kv, &r);
	/*
	 * The live ones came from rslub (their slab pages are a backend's),
	 * but for those KFENCE sampled (the served-cache guest samples).
	 */
	for (i = 0; i < 2 * KT_RCU_PAIRS; i++)
		theirs += r.o[i] && !kt_from_backend(r.o[i]) && !is_kfence_address(r.o[i]);
	KUNIT_EXPECT_EQ(test, theirs, 0);
	kt_kfree_rcu_barrier(test);
	KUNIT_EXPECT_GE(test, r.listed, KT_RCU_LISTED);
	KUNIT_EXPECT_EQ(test, rslub_served_get(name, "errors"), errors);
	KUNIT_EXPECT_EQ(test, kt_rcu_damaged(&r, size), 0);
	kt_rcu_free_rest(NULL, &r);
}

void kvfree_rcu_list_path_kmalloc_96(struct kunit *test)
{
	kt_rcu_list_path_kmalloc(test, "kmalloc-96", 96, true);
}

void kfree_rcu_list_path_kmalloc_192(struct kunit *test)
{
	kt_rcu_list_path_kmalloc(test, "kmalloc-192", 192, false);
}
