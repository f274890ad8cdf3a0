/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two files of the rslub_slub suite share: short forms of the
 * introspection calls, pinning the test thread to a CPU, the free policy
 * of the loaded build variant, and the cases of slub_smp_test.c, which
 * slub_test.c's case table lists.
 */
#ifndef _RSLUB_SLUB_TEST_H
#define _RSLUB_SLUB_TEST_H

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "rslub.h"

static inline long long st(struct rslub_cache *s, const char *name)
{
	return rslub_cache_stat(s, name);
}

static inline long long get(struct rslub_cache *s, const char *name)
{
	return rslub_cache_get(s, name);
}

static inline void set(struct kunit *test, struct rslub_cache *s, const char *name,
		       long long v)
{
	KUNIT_ASSERT_EQ(test, rslub_cache_set(s, name, v), 0);
}

/* Runs the test thread on cpu only, until unpin(). */
static inline void pin(struct kunit *test, int cpu)
{
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	KUNIT_ASSERT_EQ(test, raw_smp_processor_id(), cpu);
}

static inline void unpin(void)
{
	set_cpus_allowed_ptr(current, cpu_possible_mask);
}

/*
 * Whether the rslub.ko loaded is the free_batch build variant (Kbuild
 * VARIANT=free_batch), the only build with batched frees and the
 * free_batch tunable. Asked once per load of this module: an unknown name
 * logs a line.
 */
bool has_free_batch(struct rslub_cache *s);

/*
 * The classic free policy (a free that misses the CPU slab goes to its
 * slab at once), which the cases that test slab_free's transitions need.
 * It is the only policy of the default module; the free_batch variant
 * batches by default (its free_batch parameter is 32), so there it is set.
 */
static inline void classic(struct kunit *test, struct rslub_cache *s)
{
	if (has_free_batch(s))
		set(test, s, "free_batch", 0);
}

/*
 * Skips a batched-free case, with the reason, when the loaded rslub.ko is
 * not the free_batch build variant (destroying s first).
 */
static inline void need_free_batch(struct kunit *test, struct rslub_cache *s)
{
	if (has_free_batch(s))
		return;
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	kunit_skip(test, "no free_batch tunable: batched frees are the free_batch build variant");
}

static inline int other_cpu(int cpu)
{
	int c = cpumask_next(cpu, cpu_online_mask);

	return c < nr_cpu_ids ? c : cpumask_first(cpu_online_mask);
}

static inline void **objs_array(struct kunit *test, size_t n)
{
	void **p = kunit_kcalloc(test, n, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* slub_smp_test.c: several CPUs, CPU hotplug, batched frees */
void producer_consumer_across_cpus(struct kunit *test);
void every_cpu_hammers_one_cache(struct kunit *test);
void cpu_offline_flushes_its_slabs(struct kunit *test);
void batched_free_waits_and_is_reused(struct kunit *test);
void full_batch_returns_in_slab_groups(struct kunit *test);

#endif /* _RSLUB_SLUB_TEST_H */
