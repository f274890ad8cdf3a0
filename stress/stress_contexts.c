// SPDX-License-Identifier: GPL-2.0
/*
 * The contexts of rslub_stress, which only count: one worker kthread per
 * possible CPU, soft-pinned and re-pinned every round, with its hrtimer
 * (hard irq) and timer_list (softirq), all allocating and freeing through
 * stress_objects.c; the tuner kthread (shrink, set and get on the live
 * caches, and with faults=1 a scratch cache); the hotplug kthread
 * (remove_cpu()/add_cpu() of a random CPU other than CPU 0).
 */
#include <linux/bitops.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"
#include "stress.h"

struct worker *stress_workers;
unsigned int stress_nr_workers;
bool stress_stop;
struct stress_tuner stress_tuner;
struct stress_hotplug stress_hp;

/* One operation of a timer (hard irq or softirq) on its own objects. */
static void timer_op(struct stats *st, struct obj *held, u64 *rng, enum ctx ctx)
{
	struct obj *o = &held[rnd_below(rng, TIMER_HOLD)];
	u32 r = rnd_below(rng, 10);

	if (r < 4)
		alloc_into(st, o, rng, ctx);
	else if (r < 7)
		free_one(st, o, ctx);
	else if (r < 9)
		push(st, o, ctx);
	else
		pop_and_free(st, 2, ctx);
}

enum hrtimer_restart hrt_fn(struct hrtimer *t)
{
	struct worker *w = container_of(t, struct worker, hrt);
	int i;

	w->hrt_st.fires++;
	if (!in_hardirq())
		w->hrt_st.wrong_ctx++;
	for (i = 0; i < 4; i++)
		timer_op(&w->hrt_st, w->hrt_held, &w->hrt_rng, CTX_HARDIRQ);
	if (READ_ONCE(stress_stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((500 + rnd_below(&w->hrt_rng, 1000)) *
					   NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

void tl_fn(struct timer_list *t)
{
	struct worker *w = timer_container_of(w, t, tl);
	int i;

	w->tl_st.fires++;
	if (!in_serving_softirq() || in_hardirq())
		w->tl_st.wrong_ctx++;
	for (i = 0; i < 8; i++)
		timer_op(&w->tl_st, w->tl_held, &w->tl_rng, CTX_SOFTIRQ);
	if (!READ_ONCE(stress_stop))
		mod_timer(&w->tl, jiffies + 1);
}

static unsigned int pick_online_cpu(u64 *rng)
{
	unsigned int cpu = rnd_below(rng, nr_cpu_ids);

	return cpu_online(cpu) ? cpu : cpumask_any(cpu_online_mask);
}

/* Frees up to BULK_MAX held objects of one cache with one free_bulk. */
static void bulk_free_held(struct worker *w)
{
	unsigned int ci = rnd_below(&w->rng, stress_ncaches), i, n = 0;

	for (i = 0; i < WORKER_HOLD && n < BULK_MAX; i++) {
		struct obj *o = &w->held[i];

		if (o->p && o->c == ci) {
			on_free(&w->st, &stress_caches[ci], o->p, CTX_THREAD);
			w->bulk[n++] = o->p;
			o->p = NULL;
		}
	}
	if (n) {
		rslub_cache_free_bulk(stress_caches[ci].s, n, w->bulk);
		w->st.bulk_frees += n;
		w->st.frees += n;
	}
}

/* alloc_bulk of 1..BULK_MAX objects; keeps some, frees the rest in bulk. */
static void bulk_alloc(struct worker *w)
{
	unsigned int ci = rnd_below(&w->rng, stress_ncaches), i, n, keep;
	struct scache *c = &stress_caches[ci];
	gfp_t gfp = pick_gfp(&w->rng, c, CTX_THREAD);

	n = 1 + rnd_below(&w->rng, BULK_MAX);
	if (!rslub_cache_alloc_bulk(c->s, gfp, n, w->bulk)) {
		w->st.bulk_fail++;
		on_alloc(&w->st, c, NULL, gfp, &w->rng, CTX_THREAD);
		return;
	}
	w->st.bulk_allocs += n;
	for (i = 0; i < n; i++)
		on_alloc(&w->st, c, w->bulk[i], gfp, &w->rng, CTX_THREAD);
	keep = rnd_below(&w->rng, n + 1);
	for (i = 0; i < keep; i++) {
		struct obj *o = &w->held[rnd_below(&w->rng, WORKER_HOLD)];

		free_one(&w->st, o, CTX_THREAD);
		o->p = w->bulk[i];
		o->c = ci;
	}
	for (i = keep; i < n; i++)
		on_free(&w->st, c, w->bulk[i], CTX_THREAD);
	if (n > keep) {
		rslub_cache_free_bulk(c->s, n - keep, w->bulk + keep);
		w->st.bulk_frees += n - keep;
		w->st.frees += n - keep;
	}
}

/* inject=1: one byte of a held object changes under its owner; inject=2: one
 * object is dropped without a free. Worker 0, once, after its first round.
 */
static void inject_fault(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < WORKER_HOLD; i++) {
		struct obj *o = &w->held[i];

		if (!o->p)
			continue;
		if (stress_inject == 1)
			((u8 *)o->p)[stress_caches[o->c].size / 2] ^= 0x40;
		else
			o->p = NULL;
		pr_info("rslub_stress: inject=%u into an object of %s\n", stress_inject,
			stress_caches[o->c].name);
		return;
	}
}

static void worker_round(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < ROUND_OPS; i++) {
		struct obj *o = &w->held[rnd_below(&w->rng, WORKER_HOLD)];
		u32 r = rnd_below(&w->rng, 100);

		if (r < 40)
			alloc_into(&w->st, o, &w->rng, CTX_THREAD);
		else if (r < 68)
			free_one(&w->st, o, CTX_THREAD);
		else if (r < 78)
			push(&w->st, o, CTX_THREAD);
		else if (r < 90)
			pop_and_free(&w->st, 4, CTX_THREAD);
		else if (r < 95)
			bulk_alloc(w);
		else
			bulk_free_held(w);
	}
}

static void park_until_stopped(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
}

/* faults=1: this kthread's allocations may be failed by fault injection. */
static void mark_for_faults(void)
{
#ifdef CONFIG_FAULT_INJECTION
	if (stress_faults)
		current->make_it_fail = 1;
#endif
}

int worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	mark_for_faults();
	set_cpus_allowed_ptr(current, cpumask_of(w->home));
	hrtimer_start(&w->hrt, ns_to_ktime(1000 * NSEC_PER_USEC), HRTIMER_MODE_REL);
	mod_timer(&w->tl, jiffies + 1);
	while (!READ_ONCE(stress_stop)) {
		unsigned int cpu = w->home;

		/* Mostly home; sometimes elsewhere, so held objects travel. */
		if (!cpu_online(cpu) || rnd_below(&w->rng, 4) == 0)
			cpu = pick_online_cpu(&w->rng);
		set_cpus_allowed_ptr(current, cpumask_of(cpu));
		worker_round(w);
		if (stress_inject && w->id == 0) {
			inject_fault(w);
			stress_inject = 0;
		}
		cond_resched();
	}
	for (i = 0; i < WORKER_HOLD; i++)
		free_one(&w->st, &w->held[i], CTX_THREAD);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	complete(&w->done);
	park_until_stopped();
	return 0;
}

/*
 * faults=1: a cache made and destroyed while the stress runs, its metadata
 * allocations failing at random: -ENOMEM or a working cache. 0 or -errno.
 */
static int scratch_cache(void)
{
	struct rslub_cache *s;
	void *p;

	s = rslub_cache_create("rslub_stress_scratch", 100, 0, 0, NULL);
	if (IS_ERR(s)) {
		if (PTR_ERR(s) != -ENOMEM)
			return PTR_ERR(s);
		stress_tuner.create_nomem++;
		return 0;
	}
	stress_tuner.creates++;
	p = rslub_cache_alloc(s, GFP_KERNEL);	/* NULL when its page fails */
	if (p) {
		memset(p, 0x5c, 100);
		rslub_cache_free(s, p);
	}
	return rslub_cache_destroy(s);
}

int tuner_fn(void *arg)
{
	static const int cpu_partial[] = { 0, 1, 2, 6, 13, 30, 52, 120, 1000 };
	static const char *const reads[] = {
		"objects", "slabs", "partial", "cpu_slabs", "slabs_cpu_partial",
		"empty_slabs", "objects_partial",
	};
	u64 rng = stress_seed ^ 0x7e7e7e7e;
	unsigned int i;

	mark_for_faults();
	while (!READ_ONCE(stress_stop)) {
		struct scache *c = &stress_caches[rnd_below(&rng, stress_ncaches)];
		long long v;
		long pages;
		int ret = 0;

		msleep(10 + rnd_below(&rng, 30));
		switch (rnd_below(&rng, 10)) {
		case 0:
		case 1:
			ret = rslub_cache_shrink(c->s);
			stress_tuner.shrinks++;
			break;
		case 2:
		case 3:
			v = cpu_partial[rnd_below(&rng, ARRAY_SIZE(cpu_partial))];
			ret = rslub_cache_set(c->s, "cpu_partial", v);
			stress_tuner.sets++;
			break;
		case 4:
			ret = rslub_cache_set(c->s, "min_partial", rnd_below(&rng, 9));
			stress_tuner.sets++;
			break;
		case 5:
			ret = rslub_cache_set(c->s, "max_empty", rnd_below(&rng, 9));
			stress_tuner.sets++;
			break;
		case 6:
			if (stress_faults && rnd_below(&rng, 2)) {
				ret = scratch_cache();
			} else if (stress_faults) {
				/* Allocates the shuffled sequence the first time. */
				ret = rslub_cache_set(c->s, "random_freelist", 1);
				if (ret == -ENOMEM) {
					stress_tuner.set_nomem++;
					ret = 0;
				}
			} else {
				ret = rslub_cache_set(c->s, "random_freelist",
						      rnd_below(&rng, 2));
			}
			stress_tuner.sets++;
			break;
		case 7:
		case 8:
			v = rslub_cache_get(c->s, reads[rnd_below(&rng, ARRAY_SIZE(reads))]);
			if (v < 0)
				ret = (int)v;
			if (rslub_cache_get(c->s, "errors") != 0)
				stress_tuner.errors_seen++;
			stress_tuner.reads++;
			break;
		default:
			for (i = 0; i < stress_ncaches; i++)
				ret |= rslub_cache_shrink(stress_caches[i].s);
			stress_tuner.shrinks += stress_ncaches;
			break;
		}
		if (ret)
			stress_tuner.set_fail++;
		pages = rslub_pages_allocated();
		if (pages > stress_tuner.peak_pages)
			stress_tuner.peak_pages = pages;
	}
	complete(&stress_tuner.done);
	park_until_stopped();
	return 0;
}

static void hotplug_online(unsigned int cpu)
{
	int ret = add_cpu(cpu);

	if (ret) {
		stress_hp.add_fail++;
		stress_hp.last_err = ret;
		pr_err("rslub_stress: add_cpu(%u) failed: %d\n", cpu, ret);
	} else {
		stress_hp.online++;
	}
	clear_bit(cpu, stress_hp.offlined);
}

int hotplug_fn(void *arg)
{
	u64 rng = stress_seed ^ 0x40400404;
	unsigned int cpu;
	int ret;

	while (!READ_ONCE(stress_stop)) {
		msleep(stress_hotplug_ms / 2 + rnd_below(&rng, stress_hotplug_ms));
		if (READ_ONCE(stress_stop))
			break;
		cpu = find_first_bit(stress_hp.offlined, nr_cpu_ids);
		/* Bring one back half the time, and whenever two are down. */
		if (cpu < nr_cpu_ids &&
		    (rnd_below(&rng, 2) || num_online_cpus() <= 2)) {
			hotplug_online(cpu);
			continue;
		}
		cpu = 1 + rnd_below(&rng, nr_cpu_ids - 1);
		if (!cpu_online(cpu) || num_online_cpus() <= 2)
			continue;
		ret = remove_cpu(cpu);
		if (ret) {
			stress_hp.refused++;
			stress_hp.last_err = ret;
		} else {
			stress_hp.offline++;
			set_bit(cpu, stress_hp.offlined);
		}
	}
	for_each_set_bit(cpu, stress_hp.offlined, nr_cpu_ids)
		hotplug_online(cpu);
	complete(&stress_hp.done);
	park_until_stopped();
	return 0;
}

