// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_stress: a timed stress of rslub from every context at once.
 *
 * Several caches of random geometry (size, align, SLAB_HWCACHE_ALIGN, some
 * with a constructor) are hammered for `duration` seconds by:
 *   - one kthread per possible CPU, each soft-pinned to its home CPU (or any
 *     online CPU) with set_cpus_allowed_ptr() before every round. They are
 *     not kthread_bind()-bound: when their CPU goes offline the scheduler
 *     moves them, and they re-pin at the next round;
 *   - one hrtimer per worker (hard irq on !PREEMPT_RT: HRTIMER_MODE_REL, not
 *     _HARD, whose callbacks may not take spinlock_t, like in-tree kmalloc);
 *   - one timer_list per worker (softirq);
 *   all allocating and freeing, single and bulk, GFP_KERNEL/NOWAIT/ATOMIC,
 *   with and without a node, and handing objects to each other through a
 *   locked exchange ring, so that objects allocated on one CPU are freed on
 *   another;
 *   - a tuner kthread: rslub_cache_shrink() and rslub_cache_set() of
 *     cpu_partial, min_partial, max_empty, random_freelist on the live
 *     caches;
 *   - a hotplug kthread: remove_cpu()/add_cpu() of a random CPU other than
 *     CPU 0 every `hotplug_ms` (on average).
 *
 * Every object carries a checksum: its first word is a tag (random bits, the
 * allocating CPU, the cache index), the rest a pseudo-random stream seeded by
 * the tag and the object's address. It is written at allocation and checked
 * at free. Constructor caches are also checked at allocation for the
 * constructed state, and restored to it before free. __GFP_ZERO allocations
 * are checked for zeroes.
 *
 * With faults=1 the worker and tuner kthreads mark themselves for the
 * kernel's fault injection (task->make_it_fail; scripts/guest/oom.sh sets
 * failslab and fail_page_alloc to fail a share of such tasks' requests):
 * then a NULL from any allocation, and false from alloc_bulk, is expected
 * and counted, and at least one must be seen; everything else is judged
 * the same. The tuner also turns random_freelist on, whose index sequence
 * is allocated then, and makes and destroys a scratch cache (-ENOMEM is
 * expected from both, anything else fails the run).
 *
 * The contexts only count; the init thread collects and judges: 0 checksum
 * failures, 0 `errors` in any cache, `validate` clean at the end, no
 * GFP_KERNEL allocation failure (without faults=1), every context ran in
 * the context it claims, every cache destroys with 0 live objects, and
 * rslub_pages_allocated() is back where it started (not compared with
 * serving=1: kernel caches rslub serves meanwhile hold pages too). The last
 * line is "rslub_stress: PASS ..." (init returns 0: the module stays loaded,
 * idle, until removed) or "rslub_stress: FAIL <why>" (init returns -EIO).
 *
 * This file holds the parameters and the init thread's run and judgement;
 * the caches and objects are in stress_objects.c, the contexts in
 * stress_contexts.c, and stress.h is what they share.
 */
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sprintf.h>
#include <linux/timer.h>

#include "rslub.h"
#include "stress.h"

static unsigned int duration = 60;
module_param(duration, uint, 0444);
MODULE_PARM_DESC(duration, "seconds of stress (default 60)");

unsigned int stress_ncaches = 6;
module_param_named(ncaches, stress_ncaches, uint, 0444);
MODULE_PARM_DESC(ncaches, "number of caches (1..8)");

unsigned int stress_hotplug_ms = 300;
module_param_named(hotplug_ms, stress_hotplug_ms, uint, 0444);
MODULE_PARM_DESC(hotplug_ms, "mean ms between CPU offline/online steps (0: no hotplug)");

unsigned long long stress_seed;
module_param_named(seed, stress_seed, ullong, 0444);
MODULE_PARM_DESC(seed, "random seed (0: pick one; printed)");

unsigned int stress_inject;
module_param_named(inject, stress_inject, uint, 0444);
MODULE_PARM_DESC(inject, "self-test of the judge: 1 corrupts a held object, 2 leaks one (both must FAIL)");

bool stress_faults;
module_param_named(faults, stress_faults, bool, 0444);
MODULE_PARM_DESC(faults, "mark the kthreads for fault injection: NULLs are expected and counted");

static bool serving;
module_param(serving, bool, 0444);
MODULE_PARM_DESC(serving, "rslub serves kernel caches meanwhile (make stress SERVE=1): their pages come and go with the programs, so rslub_pages_allocated() is not compared; every cache of this module must still destroy empty");

static void add_stats(struct stats *sum, const struct stats *st)
{
	const unsigned long *src = (const unsigned long *)st;
	unsigned long *dst = (unsigned long *)sum;
	unsigned int i;

	for (i = 0; i < sizeof(*st) / sizeof(unsigned long); i++)
		dst[i] += src[i];
}

/* Waits for a context's "done", saying what is slow instead of hanging mute. */
static void wait_done(struct completion *done, const char *who, unsigned int id)
{
	unsigned int waited = 0;

	while (!wait_for_completion_timeout(done, 30 * HZ)) {
		waited += 30;
		pr_warn("rslub_stress: still waiting for %s %u after %u s\n", who,
			id, waited);
	}
}

static int __init rslub_stress_init(void)
{
	struct stats sum[NR_CTX] = {}, all = {};
	unsigned long cpu_ops_line_len = 0;
	ktime_t start = ktime_get(), end;
	long pages_start, pages_end, errors = 0, invalid = 0;
	unsigned int i, c, destroyed = 0, busy = 0, elapsed;
	char why[200] = "", cpu_ops[160] = "";
	u64 rng;
	int ret;

	stress_ncaches = clamp(stress_ncaches, 1u, (unsigned int)MAX_CACHES);
	if (!stress_seed)
		stress_seed = get_random_u64() | 1;
	rng = stress_seed;
	stress_nr_workers = min_t(unsigned int, num_possible_cpus(), MAX_WORKERS);
	WRITE_ONCE(stress_stop, false);
	atomic_set(&stress_reports, 0);
	pages_start = rslub_pages_allocated();
	pr_info("rslub_stress: seed=%llu duration=%us caches=%u workers=%u cpus=%u nodes=%u hotplug_ms=%u faults=%d pages_start=%ld\n",
		stress_seed, duration, stress_ncaches, stress_nr_workers, num_online_cpus(),
		num_node_state(N_MEMORY), stress_hotplug_ms, stress_faults, pages_start);
#ifndef CONFIG_FAULT_INJECTION
	if (stress_faults) {
		pr_err("rslub_stress: FAIL faults=1 needs a kernel with CONFIG_FAULT_INJECTION\n");
		return -EINVAL;
	}
#endif

	ret = make_caches(&rng);
	if (ret)
		goto destroy;
	stress_workers = kvcalloc(stress_nr_workers, sizeof(*stress_workers), GFP_KERNEL);
	if (!stress_workers) {
		ret = -ENOMEM;
		goto destroy;
	}
	for (i = 0; i < stress_nr_workers; i++) {
		struct worker *w = &stress_workers[i];

		w->id = i;
		w->home = cpumask_nth(i, cpu_possible_mask);
		w->rng = stress_seed ^ (OBJ_KEY * (3 * i + 1));
		w->hrt_rng = stress_seed ^ (OBJ_KEY * (3 * i + 2));
		w->tl_rng = stress_seed ^ (OBJ_KEY * (3 * i + 3));
		init_completion(&w->done);
		hrtimer_setup(&w->hrt, hrt_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		timer_setup(&w->tl, tl_fn, 0);
	}
	/* Create everything first: nothing runs until every thread exists. */
	for (i = 0; i < stress_nr_workers; i++) {
		stress_workers[i].task = kthread_create(worker_fn, &stress_workers[i],
							"rslub_stress/%u", i);
		if (IS_ERR(stress_workers[i].task))
			break;
	}
	init_completion(&stress_tuner.done);
	init_completion(&stress_hp.done);
	stress_tuner.task = kthread_create(tuner_fn, NULL, "rslub_stress_tune");
	stress_hp.task = stress_hotplug_ms && nr_cpu_ids > 2 ?
		  kthread_create(hotplug_fn, NULL, "rslub_stress_hp") : NULL;
	if (i < stress_nr_workers || IS_ERR(stress_tuner.task) || IS_ERR(stress_hp.task)) {
		/* Never woken: kthread_stop() ends them without running them. */
		while (i--)
			kthread_stop(stress_workers[i].task);
		if (!IS_ERR(stress_tuner.task))
			kthread_stop(stress_tuner.task);
		if (!IS_ERR_OR_NULL(stress_hp.task))
			kthread_stop(stress_hp.task);
		pr_err("rslub_stress: FAIL could not create the kthreads\n");
		ret = -ENOMEM;
		goto free_workers;
	}
	for (i = 0; i < stress_nr_workers; i++)
		wake_up_process(stress_workers[i].task);
	wake_up_process(stress_tuner.task);
	if (stress_hp.task)
		wake_up_process(stress_hp.task);

	/* By the clock: under TCG, msleep() oversleeps by a third. */
	end = ktime_add_ms(ktime_get(), duration * MSEC_PER_SEC);
	for (elapsed = 0; ktime_before(ktime_get(), end); elapsed++) {
		msleep(100);
		if (elapsed % 150 == 149) {
			unsigned long ops = 0;

			for (i = 0; i < stress_nr_workers; i++)
				ops += READ_ONCE(stress_workers[i].st.allocs) +
				       READ_ONCE(stress_workers[i].hrt_st.allocs) +
				       READ_ONCE(stress_workers[i].tl_st.allocs);
			pr_info("rslub_stress: t=%llds allocations=%lu cpu_offline_events=%lu pages=%ld\n",
				ktime_to_ms(ktime_sub(ktime_get(), start)) / MSEC_PER_SEC,
				ops, READ_ONCE(stress_hp.offline), rslub_pages_allocated());
		}
	}
	WRITE_ONCE(stress_stop, true);

	/* Collect: every context is done before anything is judged or freed. */
	for (i = 0; i < stress_nr_workers; i++)
		wait_done(&stress_workers[i].done, "worker", i);
	wait_done(&stress_tuner.done, "tuner", 0);
	if (stress_hp.task)
		wait_done(&stress_hp.done, "hotplug", 0);
	for (i = 0; i < stress_nr_workers; i++) {
		hrtimer_cancel(&stress_workers[i].hrt);
		timer_shutdown_sync(&stress_workers[i].tl);
		kthread_stop(stress_workers[i].task);
	}
	kthread_stop(stress_tuner.task);
	if (stress_hp.task)
		kthread_stop(stress_hp.task);
	for (i = 0; i < stress_nr_workers; i++) {
		struct worker *w = &stress_workers[i];

		for (c = 0; c < TIMER_HOLD; c++) {
			free_one(&w->hrt_st, &w->hrt_held[c], CTX_HARDIRQ);
			free_one(&w->tl_st, &w->tl_held[c], CTX_SOFTIRQ);
		}
	}
	pop_and_free(&stress_workers[0].st, XCHG_SLOTS, CTX_THREAD);

	for (i = 0; i < stress_nr_workers; i++) {
		add_stats(&sum[CTX_THREAD], &stress_workers[i].st);
		add_stats(&sum[CTX_HARDIRQ], &stress_workers[i].hrt_st);
		add_stats(&sum[CTX_SOFTIRQ], &stress_workers[i].tl_st);
	}
	for (c = 0; c < NR_CTX; c++) {
		struct stats *s = &sum[c];

		add_stats(&all, s);
		pr_info("rslub_stress: ops %s: alloc=%lu free=%lu (bulk: alloc=%lu free=%lu failed=%lu) fires=%lu null_atomic=%lu null_kernel=%lu pushed=%lu popped=%lu\n",
			stress_ctx_name[c], s->allocs, s->frees, s->bulk_allocs,
			s->bulk_frees, s->bulk_fail, s->fires, s->atomic_fail,
			s->kernel_fail, s->pushed, s->popped);
	}
	for_each_possible_cpu(i) {
		if (cpu_ops_line_len < sizeof(cpu_ops) - 24)
			cpu_ops_line_len += scnprintf(cpu_ops + cpu_ops_line_len,
						      sizeof(cpu_ops) - cpu_ops_line_len,
						      " %u:%lu", i,
						      per_cpu(stress_ops_on_cpu, i));
	}
	pr_info("rslub_stress: ops per cpu (alloc+free):%s\n", cpu_ops);
	pr_info("rslub_stress: handoff: freed_on_other_cpu=%lu freed_on_other_node=%lu\n",
		all.remote_cpu, all.remote_node);
	pr_info("rslub_stress: tuner: shrinks=%lu sets=%lu reads=%lu failed_calls=%lu enomem_sets=%lu\n",
		stress_tuner.shrinks, stress_tuner.sets, stress_tuner.reads, stress_tuner.set_fail,
		stress_tuner.set_nomem);
	if (stress_faults)
		pr_info("rslub_stress: faults: null_returns=%lu (GFP_KERNEL %lu, atomic %lu; %lu of them alloc_bulk false) random_freelist_enomem=%lu scratch_creates=%lu scratch_enomem=%lu\n",
			all.kernel_fail + all.atomic_fail, all.kernel_fail,
			all.atomic_fail, all.bulk_fail, stress_tuner.set_nomem,
			stress_tuner.creates, stress_tuner.create_nomem);
	pr_info("rslub_stress: hotplug: offline=%lu online=%lu refused=%lu add_failed=%lu last_err=%d cpus_online=%u\n",
		stress_hp.offline, stress_hp.online, stress_hp.refused,
		stress_hp.add_fail, stress_hp.last_err, num_online_cpus());
	pr_info("rslub_stress: verified=%lu checksum_failures=%lu ctor_failures=%lu zero_failures=%lu align_failures=%lu ctor_calls=%ld\n",
		all.verified, all.bad_sum, all.bad_ctor, all.bad_zero,
		all.bad_align, atomic_long_read(&stress_ctor_calls));

	for (c = 0; c < stress_ncaches; c++) {
		errors += rslub_cache_get(stress_caches[c].s, "errors");
		invalid += rslub_cache_validate(stress_caches[c].s);
	}
	pr_info("rslub_stress: validate: %ld problems in %u caches\n", invalid, stress_ncaches);

#define FAIL_IF(cond, ...) \
	do { \
		if ((cond) && !why[0]) \
			scnprintf(why, sizeof(why), __VA_ARGS__); \
	} while (0)
	FAIL_IF(all.bad_sum, "%lu checksum failures", all.bad_sum);
	FAIL_IF(all.bad_ctor, "%lu objects not in the constructed state", all.bad_ctor);
	FAIL_IF(all.bad_zero, "%lu __GFP_ZERO objects not zeroed", all.bad_zero);
	FAIL_IF(all.bad_align, "%lu misaligned objects", all.bad_align);
	FAIL_IF(errors, "caches report %ld errors", errors);
	FAIL_IF(invalid, "validate found %ld problems", invalid);
	FAIL_IF(stress_tuner.errors_seen, "errors seen during the run (%lu reads)",
		stress_tuner.errors_seen);
	FAIL_IF(!stress_faults && all.kernel_fail, "%lu GFP_KERNEL allocations returned NULL",
		all.kernel_fail);
	FAIL_IF(stress_faults && !(all.kernel_fail + all.atomic_fail),
		"faults=1 but no allocation returned NULL (is fault injection set up?)");
	FAIL_IF(all.allocs != all.frees, "allocations %lu != frees %lu", all.allocs, all.frees);
	FAIL_IF(all.verified != all.frees, "verified %lu != frees %lu", all.verified, all.frees);
	FAIL_IF(sum[CTX_HARDIRQ].wrong_ctx, "hrtimer callback not in hard irq");
	FAIL_IF(sum[CTX_SOFTIRQ].wrong_ctx, "timer_list callback not in softirq");
	FAIL_IF(!sum[CTX_HARDIRQ].allocs || !sum[CTX_SOFTIRQ].allocs || !sum[CTX_THREAD].allocs,
		"a context made no allocation (thread %lu, hardirq %lu, softirq %lu)",
		sum[CTX_THREAD].allocs, sum[CTX_HARDIRQ].allocs, sum[CTX_SOFTIRQ].allocs);
	FAIL_IF(stress_tuner.set_fail, "%lu shrink/set/get calls failed", stress_tuner.set_fail);
	FAIL_IF(stress_hp.add_fail, "%lu add_cpu failures (last %d)", stress_hp.add_fail,
		stress_hp.last_err);
	FAIL_IF(stress_hp.task && duration >= 5 && !stress_hp.offline, "no CPU went offline");
	ret = 0;

free_workers:
	kvfree(stress_workers);
	stress_workers = NULL;
destroy:
	for (c = 0; c < stress_ncaches && stress_caches[c].s; c++) {
		long long live = rslub_cache_get(stress_caches[c].s, "objects");
		int r = rslub_cache_destroy(stress_caches[c].s);

		stress_caches[c].s = NULL;
		if (r) {
			busy++;
			pr_err("rslub_stress: destroy %s returned %d (objects=%lld)\n",
			       stress_caches[c].name, r, live);
		} else {
			destroyed++;
		}
	}
	pages_end = rslub_pages_allocated();
	pr_info("rslub_stress: destroyed=%u busy=%u errors=%ld pages_start=%ld pages_peak=%ld pages_end=%ld\n",
		destroyed, busy, errors, pages_start, stress_tuner.peak_pages, pages_end);
	if (ret)
		return ret;
	FAIL_IF(busy, "%u caches still had objects at destroy", busy);
	FAIL_IF(!serving && pages_end != pages_start, "pages did not return: start %ld end %ld",
		pages_start, pages_end);
#undef FAIL_IF
	if (why[0]) {
		pr_err("rslub_stress: FAIL %s\n", why);
		return -EIO;
	}
	pr_info("rslub_stress: PASS seconds=%u allocs=%lu frees=%lu verified=%lu cpu_offline=%lu cpu_online=%lu pages_end=%ld wall=%llds\n",
		duration, all.allocs, all.frees, all.verified, stress_hp.offline,
		stress_hp.online, pages_end,
		ktime_to_ms(ktime_sub(ktime_get(), start)) / MSEC_PER_SEC);
	return 0;
}
module_init(rslub_stress_init);

static void __exit rslub_stress_exit(void)
{
}
module_exit(rslub_stress_exit);

MODULE_DESCRIPTION("rslub stress: every context, CPU hotplug, checksummed objects");
MODULE_LICENSE("GPL");
