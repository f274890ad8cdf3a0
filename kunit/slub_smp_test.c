// SPDX-License-Identifier: GPL-2.0
/*
 * The rslub_slub suite's cases across CPUs (its table is in slub_test.c):
 * a producer allocating on one CPU while a consumer frees on another,
 * every CPU hammering one cache, a CPU going offline with slabs of its
 * own, and the free_batch variant's batched frees. Work done in kthreads
 * is collected and asserted here, in the test thread.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "rslub.h"
#include "rslub_kunit.h"
#include "slub_test.h"

/* --- producer on one CPU, consumer freeing on another --- */

#define RING 256

struct handoff {
	struct rslub_cache *s;
	spinlock_t lock;	/* protects ring, head, tail, done_producing */
	void *ring[RING];
	unsigned int head, tail;
	long count, produced, consumed, bad, failed;
	bool done_producing;
	struct completion producer_done, consumer_done;
};

static int producer_fn(void *arg)
{
	struct handoff *h = arg;
	long i;

	for (i = 0; i < h->count; i++) {
		long *o = rslub_cache_alloc(h->s, GFP_KERNEL);

		if (!o) {
			h->failed++;
			continue;
		}
		*o = i;
		o[1] = ~i;
		for (;;) {
			spin_lock(&h->lock);
			if (h->head - h->tail < RING) {
				h->ring[h->head++ % RING] = o;
				spin_unlock(&h->lock);
				break;
			}
			spin_unlock(&h->lock);
			cond_resched();
		}
		h->produced++;
	}
	spin_lock(&h->lock);
	h->done_producing = true;
	spin_unlock(&h->lock);
	complete(&h->producer_done);
	return 0;
}

static int consumer_fn(void *arg)
{
	struct handoff *h = arg;

	for (;;) {
		long *o = NULL;
		bool done;

		spin_lock(&h->lock);
		if (h->tail != h->head)
			o = h->ring[h->tail++ % RING];
		done = h->done_producing && h->tail == h->head;
		spin_unlock(&h->lock);
		if (o) {
			if (o[1] != ~o[0])
				h->bad++;
			rslub_cache_free(h->s, o);
			h->consumed++;
			continue;
		}
		if (done)
			break;
		cond_resched();
	}
	complete(&h->consumer_done);
	return 0;
}

void producer_consumer_across_cpus(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct handoff *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct task_struct *p, *c;

	KUNIT_ASSERT_NOT_NULL(test, h);
	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	h->s = make(test, "rslub-s-prodcons", 128, 0, 0, NULL);
	classic(test, h->s);
	h->count = 50000;
	spin_lock_init(&h->lock);
	init_completion(&h->producer_done);
	init_completion(&h->consumer_done);
	p = kthread_run_on_cpu(producer_fn, h, c0, "rslub_prod/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(p));
	c = kthread_run_on_cpu(consumer_fn, h, c1, "rslub_cons/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	wait_for_completion(&h->producer_done);
	wait_for_completion(&h->consumer_done);
	KUNIT_EXPECT_EQ(test, h->failed, 0L);
	KUNIT_EXPECT_EQ(test, h->produced, h->count);
	KUNIT_EXPECT_EQ(test, h->consumed, h->count);
	KUNIT_EXPECT_EQ(test, h->bad, 0L);
	/* The consumer's frees hit slabs that are not its own. */
	KUNIT_EXPECT_GT(test, st(h->s, "free_slowpath"), h->count / 2);
	KUNIT_EXPECT_EQ(test, get(h->s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(h->s), 0);
}

/*
 * --- every CPU hammering one cache, with frees across CPUs, while the test
 * thread changes tunables and shrinks ---
 */

struct hammer_shared {
	spinlock_t lock;	/* protects slot */
	void *slot;		/* objects swapped between CPUs */
};

struct hammer {
	struct rslub_cache *s;
	struct hammer_shared *sh;
	int cpu;
	long ops, bad, failed;
	struct completion done;
};

static int hammer_fn(void *arg)
{
	struct hammer *h = arg;
	long tagv = (long)h->cpu << 32;
	long *held[32];
	long i, j;

	for (i = 0; i < 20000; i += ARRAY_SIZE(held)) {
		for (j = 0; j < ARRAY_SIZE(held); j++) {
			held[j] = rslub_cache_alloc(h->s, GFP_KERNEL);
			if (!held[j]) {
				h->failed++;
				continue;
			}
			held[j][0] = tagv | j;
			held[j][7] = ~(tagv | j);
		}
		for (j = 0; j < ARRAY_SIZE(held); j++) {
			void *o = held[j];

			if (!o)
				continue;
			if (held[j][0] != (tagv | j) || held[j][7] != ~(tagv | j))
				h->bad++;
			/* Every 4th object is swapped with one from another CPU. */
			if ((j & 3) == 0) {
				spin_lock(&h->sh->lock);
				swap(h->sh->slot, o);
				spin_unlock(&h->sh->lock);
			}
			rslub_cache_free(h->s, o);
			h->ops++;
		}
		cond_resched();
	}
	complete(&h->done);
	return 0;
}

void every_cpu_hammers_one_cache(struct kunit *test)
{
	struct rslub_cache *s = make(test, "rslub-s-hammer", 64, 0, 0, NULL);
	struct hammer_shared *sh = kunit_kzalloc(test, sizeof(*sh), GFP_KERNEL);
	struct hammer *hs;
	int cpu, n = 0, i;

	KUNIT_ASSERT_NOT_NULL(test, sh);
	spin_lock_init(&sh->lock);
	hs = kunit_kcalloc(test, nr_cpu_ids, sizeof(*hs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hs);
	for_each_online_cpu(cpu) {
		struct hammer *h = &hs[n++];
		struct task_struct *t;

		h->s = s;
		h->sh = sh;
		h->cpu = cpu;
		init_completion(&h->done);
		t = kthread_run_on_cpu(hammer_fn, h, cpu, "rslub_hammer/%u");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	/* Tunables change under load; wait_for_completion_timeout paces it. */
	for (i = 0; i < n; i++) {
		unsigned int round = 0;

		while (!wait_for_completion_timeout(&hs[i].done, msecs_to_jiffies(2))) {
			round++;
			KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "cpu_partial",
							      (round % 3) * 15), 0);
			KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "min_partial", round % 6), 0);
			KUNIT_EXPECT_EQ(test, rslub_cache_set(s, "max_empty", round % 4), 0);
			if (!(round % 16))
				KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
		}
	}
	rslub_cache_free(s, sh->slot);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, hs[i].bad, 0L);
		KUNIT_EXPECT_EQ(test, hs[i].failed, 0L);
		KUNIT_EXPECT_GT(test, hs[i].ops, 0L);
	}
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/* --- CPU hotplug --- */

void cpu_offline_flushes_its_slabs(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-hotplug", 256, 0, 0, NULL);
	long per = get(s, "objs_per_slab"), i, n;
	void **p;
	int ret;

	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	n = 4 * per + 3;
	p = objs_array(test, n);
	/* c1 gets a CPU slab with free objects and, by remote frees, CPU partials. */
	pin(test, c0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, n, p));
	pin(test, c1);
	for (i = 0; i < n; i += 2)
		rslub_cache_free(s, p[i]);
	p[0] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	pin(test, c0);
	unpin();
	KUNIT_EXPECT_GE(test, get(s, "cpu_slabs"), 2);
	ret = remove_cpu(c1);
	if (ret) {
		for (i = 0; i < n; i++)
			if (i == 0 || i % 2)
				rslub_cache_free(s, p[i]);
		rslub_cache_destroy(s);
		kunit_skip(test, "cannot take CPU %d offline (%d)", c1, ret);
	}
	/* c1's CPU slab and CPU partial list went back to the nodes. */
	KUNIT_EXPECT_EQ(test, get(s, "cpu_slabs"), 1);
	KUNIT_EXPECT_GE(test, st(s, "cpuslab_flush"), 1);
	for (i = 0; i < n; i++)
		if (i == 0 || i % 2)
			rslub_cache_free(s, p[i]);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	/* No phantom objects on the dead CPU. */
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, add_cpu(c1), 0);
}

/*
 * The batched free policy (the free_batch build variant, free_batch > 0): a
 * free that misses the CPU slab waits in the freeing CPU's batch, a second
 * free of it is reported, and the next allocation there that misses its
 * freelist takes it back; shrink returns the batch to the slab.
 */
void batched_free_waits_and_is_reused(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-batch", 64, 0, 0, NULL);
	long long errors;
	void *a, *b;

	need_free_batch(test, s);
	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	set(test, s, "free_batch", 32);
	pin(test, c0);
	a = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	pin(test, c1);
	rslub_cache_free(s, a);
	KUNIT_EXPECT_EQ(test, st(s, "free_batched"), 1);
	KUNIT_EXPECT_EQ(test, st(s, "free_slowpath"), 0);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 1);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	errors = get(s, "errors");
	rslub_cache_free(s, a);
	KUNIT_EXPECT_EQ(test, get(s, "errors"), errors + 1);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 1);
	/* c1 has no CPU slab: its slow path takes the batched object. */
	b = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_EXPECT_PTR_EQ(test, b, a);
	KUNIT_EXPECT_EQ(test, st(s, "alloc_from_batch"), 1);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 0);
	rslub_cache_free(s, b);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 1);
	unpin();
	KUNIT_EXPECT_EQ(test, rslub_cache_shrink(s), 0);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 0);
	KUNIT_EXPECT_GE(test, st(s, "free_batch_flush"), 1);
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * A full batch goes back grouped by slab (the free_batch build variant):
 * frees in allocation order from another CPU cost one slab update per run
 * of one slab, not one per object.
 */
void full_batch_returns_in_slab_groups(struct kunit *test)
{
	int c0 = cpumask_first(cpu_online_mask), c1 = other_cpu(c0);
	struct rslub_cache *s = make(test, "rslub-s-batchfull", 64, 0, 0, NULL);
	long per, n, i;
	void **p;

	need_free_batch(test, s);
	if (c1 == c0)
		kunit_skip(test, "needs two online CPUs");
	set(test, s, "free_batch", 16);
	per = get(s, "objs_per_slab");
	n = 16 * DIV_ROUND_UP(3 * per, 16);
	p = objs_array(test, n);
	pin(test, c0);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, n, p));
	pin(test, c1);
	for (i = 0; i < n; i++)
		rslub_cache_free(s, p[i]);
	unpin();
	KUNIT_EXPECT_EQ(test, st(s, "free_batched"), n);
	KUNIT_EXPECT_EQ(test, st(s, "free_batch_flush"), n / 16);
	KUNIT_EXPECT_EQ(test, st(s, "free_fastpath"), 0);
	/* 16 consecutive objects span at most two slabs. */
	KUNIT_EXPECT_GE(test, st(s, "free_slowpath"), n / 16);
	KUNIT_EXPECT_LE(test, st(s, "free_slowpath"), 2 * (n / 16));
	KUNIT_EXPECT_EQ(test, get(s, "objects"), 0);
	KUNIT_EXPECT_EQ(test, get(s, "free_batch_objects"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}
