/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the serve suites share (serve_test.c holds the suites,
 * serve_rcu_test.c, serve_features_test.c and serve_kfence_test.c more of
 * their cases): serving a cache for a case, waiting for rslub to let it
 * go, counting SLUB's reports, the loading task's memory cgroup, and the
 * cases the suite tables list from the other files.
 */
#ifndef _RSLUB_SERVE_TEST_H
#define _RSLUB_SERVE_TEST_H

#include <kunit/test.h>

struct mem_cgroup;

/* The loading task's memory cgroup, when a child one (suite init). */
extern struct mem_cgroup *kt_memcg;

/* Serves @name, or skips the case on a kernel without the hook. */
void serve(struct kunit *test, const char *name);
/* Waits until rslub neither serves nor drains @name (60 s at most). */
long wait_gone(const char *name);
/* Waits until @name has @want objects out (30 s at most). */
long wait_objects(const char *name, long want);
/* Counts SLUB's reports in this case instead of warning. */
void expect_slab_errors(struct kunit *test);

/* serve_rcu_test.c: kfree_rcu(), SLAB_TYPESAFE_BY_RCU */
/* Waits for every kfree_rcu() in flight. */
void kt_kfree_rcu_barrier(struct kunit *test);
void kfree_rcu_and_destroy(struct kunit *test);
void kfree_rcu_list_path_96(struct kunit *test);
void kfree_rcu_list_path_192(struct kunit *test);
void kfree_rcu_list_path_200(struct kunit *test);
void typesafe_by_rcu_served_under_a_reader(struct kunit *test);
void kvfree_rcu_list_path_kmalloc_96(struct kunit *test);
void kfree_rcu_list_path_kmalloc_192(struct kunit *test);

/* serve_features_test.c: what else a served cache must keep to */
void ctor_zero_and_node(struct kunit *test);
void refusals(struct kunit *test);
void charging_a_served_object(struct kunit *test);
void allocation_profiling_switched_on(struct kunit *test);
void destroy_with_objects_out(struct kunit *test);
void usercopy_from_a_damaged_slab(struct kunit *test);
void dma32_slabs_stay_below_4g(struct kunit *test);
void higher_orders_fail_softly(struct kunit *test);
void init_on_free_objects_come_back_zero(struct kunit *test);
void serving_races_with_destroy(struct kunit *test);
void prefilled_sheaves_come_from_rslub(struct kunit *test);
void a_cache_address_reused_before_serving(struct kunit *test);

/* serve_kfence_test.c: KFENCE keeps sampling a served cache */
void kfence_samples_a_served_cache(struct kunit *test);

#endif /* _RSLUB_SERVE_TEST_H */
