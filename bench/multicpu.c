// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads on several CPUs: remote (one kthread allocates, another
 * frees, through a ring of batches) and parallel (k CPUs run pair, then
 * repeat, at once), with the memory they keep between rounds. harness.c
 * says what each measures.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "bench.h"

/* --- remote: allocate on one CPU, free on another ------------------------ */

#define RING 64

struct remote {
	struct subject *s;
	unsigned int batch, nbatches;
	void *(*ring)[MAX_BATCH];
	unsigned int head, tail;	/* batches produced, consumed */
	u64 alloc_ticks, free_ticks, start_ns, end_ns;
	u64 id;		/* marking: the bursts' mark ids */
	bool oom, lockstep;
	wait_queue_head_t wq;	/* lockstep: bursts handed over */
	struct completion done[2];
};

/* Lockstep: a burst is RING batches (or what is left of them). */
static bool burst_end(struct remote *x, unsigned int i)
{
	return x->lockstep && (i % RING == 0 || i == x->nbatches);
}

static int producer_fn(void *arg)
{
	struct remote *x = arg;
	unsigned int i, k;

	x->start_ns = ktime_get_ns();
	for (i = 0; i < x->nbatches; i++) {
		void **slot = x->ring[i % RING];
		u64 t0;

		if (x->lockstep && i && i % RING == 0)
			/* Acquire: pairs with the consumer's release of tail. */
			wait_event(x->wq, smp_load_acquire(&x->tail) == i);
		if (x->lockstep && i % RING == 0)
			mark(0);
		/* Acquire: pairs with the consumer's release of tail. */
		while (i - smp_load_acquire(&x->tail) >= RING)
			cond_resched();
		t0 = now();
		for (k = 0; k < x->batch; k++)
			slot[k] = x->s->ops->alloc(x->s->cache);
		x->alloc_ticks += now() - t0;
		/* Publishes the slot's pointers to the consumer's acquire. */
		smp_store_release(&x->head, i + 1);
		if (burst_end(x, i + 1)) {
			mark(x->id | 1);
			wake_up(&x->wq);
		}
	}
	complete(&x->done[0]);
	return 0;
}

static int consumer_fn(void *arg)
{
	struct remote *x = arg;
	unsigned int i, k;

	for (i = 0; i < x->nbatches; i++) {
		void **slot = x->ring[i % RING];
		u64 t0;

		if (x->lockstep && i % RING == 0)
			/* Acquire: pairs with the producer's release of head. */
			wait_event(x->wq, smp_load_acquire(&x->head) >=
				   min(i + RING, x->nbatches));
		if (x->lockstep && i % RING == 0)
			mark(0);
		/* Acquire: pairs with the producer's release of head. */
		while (smp_load_acquire(&x->head) == i)
			cond_resched();
		t0 = now();
		for (k = 0; k < x->batch; k++) {
			if (likely(slot[k]))
				x->s->ops->free(x->s->cache, slot[k]);
			else
				x->oom = true;
		}
		x->free_ticks += now() - t0;
		/* Hands the slot back (pairs with the producer's acquire). */
		smp_store_release(&x->tail, i + 1);
		if (burst_end(x, i + 1)) {
			mark(x->id | 2);
			wake_up(&x->wq);
		}
	}
	x->end_ns = ktime_get_ns();
	complete(&x->done[1]);
	return 0;
}

/* Kept between rounds (multicpu_alloc): the ring, and remote's state. */
static void *(*remote_ring)[MAX_BATCH];
static struct remote remote_run;

void run_remote(struct subject *s, unsigned int size, unsigned int r)
{
	struct remote *x = &remote_run;
	int c0 = cpumask_first(cpu_online_mask);
	int c1 = bench_remote_cpu >= 0 && bench_remote_cpu != c0 ?
		 bench_remote_cpu : cpumask_next(c0, cpu_online_mask);
	struct task_struct *p, *q;
	u64 n;

	if (c1 >= nr_cpu_ids) {
		if (!r)
			pr_info("rslub_bench: remote needs two online CPUs; skipped\n");
		return;
	}
	memset(x, 0, sizeof(*x));
	x->s = s;
	x->batch = clamp(bench_remote_batch, 1u, (unsigned int)MAX_BATCH);
	x->nbatches = max(bench_ops / x->batch, 1u);
	x->ring = remote_ring;
	/* The plugin's marks need the bursts: lockstep whatever was asked. */
	x->lockstep = bench_remote_lockstep < 0 ? !bench_use_ns :
		      bench_remote_lockstep || bench_marking;
	x->id = mark_ids();
	init_waitqueue_head(&x->wq);
	init_completion(&x->done[0]);
	init_completion(&x->done[1]);
	/* Both created before either runs: neither can wait for a missing peer. */
	p = kthread_create_on_cpu(producer_fn, x, c0, "rsb_prod/%u");
	if (IS_ERR(p)) {
		bench_failed = PTR_ERR(p);
		return;
	}
	q = kthread_create_on_cpu(consumer_fn, x, c1, "rsb_cons/%u");
	if (IS_ERR(q)) {
		kthread_stop(p);
		bench_failed = PTR_ERR(q);
		return;
	}
	wake_up_process(q);
	wake_up_process(p);
	wait_for_completion(&x->done[0]);
	wait_for_completion(&x->done[1]);
	if (x->oom)
		return note_oom(s, "remote", size);
	n = (u64)x->nbatches * x->batch;
	result_marked("remote", "alloc", size, x->batch, 2, s->ops->name, s->variant,
		      cost_metric(), r, x->alloc_ticks, n, n, x->id | 1, 0);
	result_marked("remote", "free", size, x->batch, 2, s->ops->name, s->variant,
		      cost_metric(), r, x->free_ticks, n, n, x->id | 2, 0);
	result_marked("remote", "object", size, x->batch, 2, s->ops->name, s->variant,
		      cost_metric(), r, x->alloc_ticks + x->free_ticks, n, n,
		      x->id | 1, x->id | 2);
	if (bench_use_ns)
		result("remote", "object", size, x->batch, 2, s->ops->name,
		       s->variant, "ops_per_s", r, n * NSEC_PER_SEC,
		       x->end_ns - x->start_ns);
}

/* --- parallel: k CPUs run pair, then repeat, at once ---------------------- */

struct par_thread {
	struct par *par;
	void **scratch;
	u64 end_ns[2];
	bool oom;
};

struct par {
	struct subject *s;
	unsigned int n;		/* repeat: objects held per thread */
	atomic_t left;
	struct completion all, go[2];
	struct par_thread t[];
};

static void par_arrive(struct par *x)
{
	if (atomic_dec_and_test(&x->left))
		complete(&x->all);
}

static int par_fn(void *arg)
{
	struct par_thread *t = arg;
	struct par *x = t->par;
	void *c = x->s->cache, *o;
	unsigned int i;

	par_arrive(x);
	wait_for_completion(&x->go[0]);
	for (i = 0; i < bench_ops; i++) {
		o = x->s->ops->alloc(c);
		x->s->ops->free(c, o);
	}
	t->end_ns[0] = ktime_get_ns();
	par_arrive(x);
	wait_for_completion(&x->go[1]);
	for (i = 0; i < x->n; i++)
		t->scratch[i] = x->s->ops->alloc(c);
	for (i = 0; i < x->n; i++) {
		if (t->scratch[i])
			x->s->ops->free(c, t->scratch[i]);
		else
			t->oom = true;
	}
	t->end_ns[1] = ktime_get_ns();
	par_arrive(x);
	return 0;
}

static void run_parallel(struct subject *s, unsigned int size, unsigned int r,
			 struct par *x, unsigned int k)
{
	static const char * const phase[] = { "pair", "repeat" };
	struct task_struct *tasks[MAX_PAR];
	unsigned int i, ph;
	int cpu = -1;
	u64 start, end;

	x->s = s;
	x->n = held_objects(size);
	init_completion(&x->all);
	init_completion(&x->go[0]);
	init_completion(&x->go[1]);
	/* All created before any runs, so a failure leaves nobody waiting. */
	for (i = 0; i < k; i++) {
		cpu = cpumask_next(cpu, cpu_online_mask);
		x->t[i].par = x;
		x->t[i].oom = false;
		tasks[i] = kthread_create_on_cpu(par_fn, &x->t[i], cpu, "rsb_par/%u");
		if (IS_ERR(tasks[i])) {
			bench_failed = PTR_ERR(tasks[i]);
			while (i--)
				kthread_stop(tasks[i]);
			return;
		}
	}
	atomic_set(&x->left, k);
	for (i = 0; i < k; i++)
		wake_up_process(tasks[i]);
	wait_for_completion(&x->all);
	for (ph = 0; ph < 2; ph++) {
		u64 id = mark_ids(), n = (u64)k * (ph ? x->n : bench_ops);

		/* Nobody arrives again before go[ph]. */
		reinit_completion(&x->all);
		atomic_set(&x->left, k);
		mark(0);
		start = ktime_get_ns();
		complete_all(&x->go[ph]);
		wait_for_completion(&x->all);
		mark(id | (ph + 1));
		end = start;
		for (i = 0; i < k; i++)
			end = max(end, x->t[i].end_ns[ph]);
		/*
		 * pair: pairs per second; repeat: objects allocated and freed
		 * per second. Under the model, cycles per pair or object of
		 * all the CPUs' cycles.
		 */
		result_marked("parallel", phase[ph], size, 1, k, s->ops->name,
			      s->variant, "ops_per_s", r, n * NSEC_PER_SEC,
			      end - start, n, id ? id | (ph + 1) : 0, 0);
	}
	for (i = 0; i < k; i++)
		if (x->t[i].oom)
			note_oom(s, "parallel", size);
}

/* Kept between rounds (multicpu_alloc), with each thread's scratch. */
static struct par *par;

void run_parallel_counts(struct subject *s, unsigned int size, unsigned int r,
			 unsigned int ncpus)
{
	struct par *x = par;
	unsigned int c;

	if (bench_nr_par_cpus) {
		for (c = 0; c < bench_nr_par_cpus && !bench_failed; c++)
			run_parallel(s, size, r, x, bench_par_cpus[c]);
		return;
	}
	for (c = 1; c <= ncpus && !bench_failed; c++)
		run_parallel(s, size, r, x, c);
}

void multicpu_free(void)
{
	unsigned int i;

	if (par)
		for (i = 0; i < MAX_PAR; i++)
			vfree(par->t[i].scratch);
	kfree(par);
	par = NULL;
	vfree(remote_ring);
	remote_ring = NULL;
}

/* The ring, and with parallel its threads' scratch arrays; 0 or -ENOMEM. */
int multicpu_alloc(bool parallel)
{
	unsigned int i, n = max_t(unsigned int, bench_ops, MAX_BATCH);

	remote_ring = vmalloc_array(RING, sizeof(*remote_ring));
	if (!remote_ring)
		return -ENOMEM;
	if (!parallel)
		return 0;
	par = kzalloc(struct_size(par, t, MAX_PAR), GFP_KERNEL);
	if (!par)
		return -ENOMEM;
	for (i = 0; i < MAX_PAR; i++) {
		par->t[i].scratch = vmalloc_array(n, sizeof(void *));
		if (!par->t[i].scratch)
			return -ENOMEM;
	}
	return 0;
}
