// SPDX-License-Identifier: GPL-2.0
/*
 * The allocators under test, each a table of the same calls (struct ops):
 * slub, rslub, served, kmalloc, kserved and the floor (harness.c says what
 * each one is), the subjects that allocs= selects, with the knobs of an
 * rslub variant, their caches for each size, and hold=1's held rslub cache.
 * Everything that names rslub's API is here, so that a build without rslub
 * (RSLUB_BENCH_NO_RSLUB) changes this file only.
 */
#include <linux/err.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "rslub.h"
#include "bench.h"

static void *slub_create(const char *name, unsigned int size)
{
	return kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
}

static void slub_destroy(void *c)
{
	kmem_cache_destroy(c);
}

static void *slub_alloc(void *c)
{
	return kmem_cache_alloc(c, GFP_KERNEL);
}

static void slub_free(void *c, void *o)
{
	kmem_cache_free(c, o);
}

static bool slub_alloc_bulk(void *c, size_t nr, void **p)
{
	return kmem_cache_alloc_bulk(c, GFP_KERNEL, nr, p);
}

static void slub_free_bulk(void *c, size_t nr, void **p)
{
	kmem_cache_free_bulk(c, nr, p);
}

#ifndef RSLUB_BENCH_NO_RSLUB
static void *rslub_create(const char *name, unsigned int size)
{
	struct rslub_cache *c = rslub_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);

	return IS_ERR(c) ? NULL : c;
}

static void rslub_destroy(void *c)
{
	if (rslub_cache_destroy(c))
		bench_failed = -EBUSY;
}

static void *rslub_alloc(void *c)
{
	return rslub_cache_alloc(c, GFP_KERNEL);
}

static void rslub_free(void *c, void *o)
{
	rslub_cache_free(c, o);
}

static bool rslub_alloc_bulk(void *c, size_t nr, void **p)
{
	return rslub_cache_alloc_bulk(c, GFP_KERNEL, nr, p);
}

static void rslub_free_bulk(void *c, size_t nr, void **p)
{
	rslub_cache_free_bulk(c, nr, p);
}

/*
 * served: a kmem_cache of the kernel's whose objects rslub serves (the
 * slab backend hook, patches/0001): the kernel's entry points, as for
 * slub, then the hook's glue into rslub (kmem_cache_alloc_bulk() and
 * kmem_cache_free_bulk() into rslub's bulk calls).
 */
static void *served_create(const char *name, unsigned int size)
{
	struct kmem_cache *c = kmem_cache_create(name, size, 0, SLAB_NO_MERGE, NULL);
	int ret;

	if (!c)
		return NULL;
	ret = rslub_serve(name);
	if (ret) {
		pr_err("rslub_bench: served: cannot serve %s (%d)\n", name, ret);
		kmem_cache_destroy(c);
		return NULL;
	}
	return c;
}

#endif /* !RSLUB_BENCH_NO_RSLUB */

/*
 * kmalloc and kserved: the "cache" is the size and the name of the
 * kernel's kmalloc cache of that size. kmalloc() with a size known only at
 * run time (__kmalloc_noprof(): one table lookup more than a constant
 * size), the same on both.
 */
struct kmcache {
	size_t size;
	char name[24];
};

static void *kmalloc_create(const char *name, unsigned int size)
{
	struct kmcache k = { .size = size };

	/* Only the sizes of a kmalloc cache: above it kmalloc() takes pages. */
	if (size > KMALLOC_MAX_CACHE_SIZE || !is_power_of_2(size) || size < 8)
		return ERR_PTR(-ENOENT);
	if (size >= 1024)
		snprintf(k.name, sizeof(k.name), "kmalloc-%uk", size / 1024);
	else
		snprintf(k.name, sizeof(k.name), "kmalloc-%u", size);
	/* kmemdup(): the bench module also builds on 6.12 (no kzalloc_obj). */
	return kmemdup(&k, sizeof(k), GFP_KERNEL);
}

static void kmalloc_destroy(void *c)
{
	kfree(c);
}

static void *kmalloc_alloc(void *c)
{
	return kmalloc(((struct kmcache *)c)->size, GFP_KERNEL);
}

static void kmalloc_free(void *c, void *o)
{
	kfree(o);
}

static bool kmalloc_alloc_bulk(void *c, size_t nr, void **p)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		p[i] = kmalloc_alloc(c);
		if (!p[i]) {
			while (i--)
				kfree(p[i]);
			return false;
		}
	}
	return true;
}

static void kmalloc_free_bulk(void *c, size_t nr, void **p)
{
	kfree_bulk(nr, p);
}

#ifndef RSLUB_BENCH_NO_RSLUB
static int kserved_enter(void *c)
{
	struct kmcache *k = c;
	int ret = rslub_serve(k->name);

	if (ret)
		pr_err("rslub_bench: kserved: cannot serve %s (%d)\n", k->name, ret);
	return ret;
}

/* Stops serving: rslub's objects still come back to it; it drains. */
static void kserved_leave(void *c)
{
	char stop[32];

	snprintf(stop, sizeof(stop), "-%s", ((struct kmcache *)c)->name);
	rslub_serve(stop);
}
#endif

/*
 * The floor: each online CPU gets a stack of cap objects carved from one
 * vmalloc area. A free pushes onto the current CPU's stack (dropped when it
 * is full; the area is freed whole), an allocation pops (NULL when empty).
 */
struct floor_cpu {
	void **stack;
	unsigned int n, cap;
	void *area;
};

struct floor {
	struct floor_cpu __percpu *pc;
};

static unsigned int floor_cap;	/* objects per CPU for the next create */

static void floor_destroy(void *c)
{
	struct floor *f = c;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct floor_cpu *fc = per_cpu_ptr(f->pc, cpu);

		vfree(fc->stack);
		vfree(fc->area);
	}
	free_percpu(f->pc);
	kfree(f);
}

static void *floor_create(const char *name, unsigned int size)
{
	struct floor *f = kzalloc(sizeof(*f), GFP_KERNEL);
	unsigned int i, cap = floor_cap;
	int cpu;

	if (!f)
		return NULL;
	f->pc = alloc_percpu(struct floor_cpu);
	if (!f->pc) {
		kfree(f);
		return NULL;
	}
	size = ALIGN(size, 8);
	for_each_online_cpu(cpu) {
		struct floor_cpu *fc = per_cpu_ptr(f->pc, cpu);

		fc->stack = vmalloc_array(cap, sizeof(void *));
		fc->area = vmalloc_array(cap, size);
		if (!fc->stack || !fc->area) {
			floor_destroy(f);
			return NULL;
		}
		for (i = 0; i < cap; i++)
			fc->stack[i] = fc->area + (size_t)(cap - 1 - i) * size;
		fc->n = cap;
		fc->cap = cap;
	}
	return f;
}

static void *floor_alloc(void *c)
{
	struct floor *f = c;
	struct floor_cpu *fc;
	void *o = NULL;

	preempt_disable();
	fc = this_cpu_ptr(f->pc);
	if (likely(fc->n))
		o = fc->stack[--fc->n];
	preempt_enable();
	return o;
}

static void floor_free(void *c, void *o)
{
	struct floor *f = c;
	struct floor_cpu *fc;

	preempt_disable();
	fc = this_cpu_ptr(f->pc);
	if (likely(fc->n < fc->cap))
		fc->stack[fc->n++] = o;
	preempt_enable();
}

static bool floor_alloc_bulk(void *c, size_t nr, void **p)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		p[i] = floor_alloc(c);
		if (!p[i])
			return false;
	}
	return true;
}

static void floor_free_bulk(void *c, size_t nr, void **p)
{
	size_t i;

	for (i = 0; i < nr; i++)
		floor_free(c, p[i]);
}

static const struct ops slub_ops = {
	"slub", slub_create, slub_destroy, slub_alloc, slub_free,
	slub_alloc_bulk, slub_free_bulk,
};

static const struct ops kmalloc_ops = {
	"kmalloc", kmalloc_create, kmalloc_destroy, kmalloc_alloc, kmalloc_free,
	kmalloc_alloc_bulk, kmalloc_free_bulk,
};

#ifndef RSLUB_BENCH_NO_RSLUB
static const struct ops rslub_ops = {
	"rslub", rslub_create, rslub_destroy, rslub_alloc, rslub_free,
	rslub_alloc_bulk, rslub_free_bulk,
};

/* kmem_cache_destroy() tells rslub, which lets its served cache go. */
static const struct ops served_ops = {
	"served", served_create, slub_destroy, slub_alloc, slub_free,
	slub_alloc_bulk, slub_free_bulk,
};

static const struct ops kserved_ops = {
	"kserved", kmalloc_create, kmalloc_destroy, kmalloc_alloc, kmalloc_free,
	kmalloc_alloc_bulk, kmalloc_free_bulk, kserved_enter, kserved_leave,
};

/* What allocs=rslub and served select: nothing in a build without rslub. */
#define HAVE_RSLUB true
#define RSLUB_OPS (&rslub_ops)
#define SERVED_OPS (&served_ops)
#define KSERVED_OPS (&kserved_ops)
#else
#define HAVE_RSLUB false
#define RSLUB_OPS ((const struct ops *)NULL)
#define SERVED_OPS ((const struct ops *)NULL)
#define KSERVED_OPS ((const struct ops *)NULL)
#endif

static const struct ops floor_ops = {
	"floor", floor_create, floor_destroy, floor_alloc, floor_free,
	floor_alloc_bulk, floor_free_bulk,
};

/* --- the subjects of allocs= --------------------------------------------- */

struct subject bench_subjects[MAX_ALLOCS];
unsigned int bench_nr_subjects;

int parse_allocs(const char *allocs)
{
	char *list = kstrdup(allocs, GFP_KERNEL), *cur = list, *tok;
	int ret = 0;

	if (!list)
		return -ENOMEM;
	while ((tok = strsep(&cur, ",")) && !ret) {
		char *knobs = strchr(tok, ':');
		struct subject *s;

		if (!*tok)
			continue;
		if (bench_nr_subjects == MAX_ALLOCS) {
			pr_err("rslub_bench: allocs: more than %d entries\n", MAX_ALLOCS);
			ret = -EINVAL;
			break;
		}
		s = &bench_subjects[bench_nr_subjects];
		if (knobs)
			*knobs++ = '\0';
		if ((!strcmp(tok, "rslub") || !strcmp(tok, "served") ||
		     !strcmp(tok, "kserved")) && !HAVE_RSLUB) {
			pr_err("rslub_bench: allocs: %s needs rslub, not in this build (RSLUB_BENCH_NO_RSLUB)\n",
			       tok);
			ret = -EINVAL;
			break;
		}
		if (!strcmp(tok, "slub"))
			s->ops = &slub_ops;
		else if (!strcmp(tok, "rslub"))
			s->ops = RSLUB_OPS;
		else if (!strcmp(tok, "served"))
			s->ops = SERVED_OPS;
		else if (!strcmp(tok, "kmalloc"))
			s->ops = &kmalloc_ops;
		else if (!strcmp(tok, "kserved"))
			s->ops = KSERVED_OPS;
		else if (!strcmp(tok, "floor"))
			s->ops = &floor_ops;
		if (!s->ops || (knobs && s->ops != RSLUB_OPS)) {
			pr_err("rslub_bench: allocs: unknown allocator '%s' (slub, rslub[:knob=v...], served, kmalloc, kserved, floor)\n",
			       tok);
			ret = -EINVAL;
			break;
		}
		strscpy(s->variant, knobs && *knobs ? knobs : "-", sizeof(s->variant));
		bench_nr_subjects++;
	}
	kfree(list);
	if (!ret && !bench_nr_subjects) {
		pr_err("rslub_bench: allocs: empty\n");
		ret = -EINVAL;
	}
	return ret;
}

/*
 * Applies "knob=v:knob=v" of an rslub variant to its fresh cache, through
 * rslub_cache_set. build= names the rslub.ko build (or load) measured, a
 * label; create-time choices (harden=) are module parameters of that load.
 */
static int apply_knobs(struct subject *s)
{
#ifndef RSLUB_BENCH_NO_RSLUB
	char *list, *cur, *tok;
	int ret = 0;

	if (s->ops != RSLUB_OPS || !strcmp(s->variant, "-"))
		return 0;
	list = kstrdup(s->variant, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	cur = list;
	while ((tok = strsep(&cur, ":")) && !ret) {
		char *val = strchr(tok, '=');
		long long v;

		if (!val) {
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		if (!strcmp(tok, "build"))
			continue;
		ret = kstrtoll(val, 0, &v);
		if (ret)
			break;
		ret = rslub_cache_set(s->cache, tok, v);
	}
	if (ret)
		pr_err("rslub_bench: rslub variant '%s': bad knob (%d)\n", s->variant, ret);
	kfree(list);
	return ret;
#else
	return 0;	/* only rslub has knobs (parse_allocs) */
#endif
}

int create_caches(const char *workload, unsigned int size, unsigned int cap)
{
	unsigned int k;

	floor_cap = cap + MAX_BATCH;
	for (k = 0; k < bench_nr_subjects; k++) {
		struct subject *s = &bench_subjects[k];

		snprintf(s->name, sizeof(s->name), "rsb_%s_%s_%u_%u", workload,
			 s->ops->name, size, k);
		s->cache = s->ops->create(s->name, size);
		if (IS_ERR(s->cache)) {
			s->cache = NULL;	/* no such cache for this size: skipped */
			continue;
		}
		if (!s->cache || apply_knobs(s)) {
			pr_err("rslub_bench: cannot create cache %s\n", s->name);
			return -ENOMEM;
		}
	}
	return 0;
}

void destroy_caches(void)
{
	unsigned int k;

	for (k = 0; k < bench_nr_subjects; k++) {
		if (bench_subjects[k].cache)
			bench_subjects[k].ops->destroy(bench_subjects[k].cache);
		bench_subjects[k].cache = NULL;
	}
}

bool subject_is(const struct subject *s, const char *name)
{
	return !strcmp(s->ops->name, name);
}

/* --- hold=1 --------------------------------------------------------------- */

#define HOLD_OBJS 1000

static struct rslub_cache *held_cache;

bool holding(void)
{
	return held_cache;
}

#ifndef RSLUB_BENCH_NO_RSLUB
static void *held[HOLD_OBJS];

int hold_cache(void)
{
	unsigned int k;

	held_cache = rslub_cache_create("rslub_bench_hold", 192, 0,
					SLAB_HWCACHE_ALIGN, NULL);
	if (IS_ERR(held_cache)) {
		int ret = PTR_ERR(held_cache);

		held_cache = NULL;
		return ret;
	}
	for (k = 0; k < HOLD_OBJS; k++) {
		held[k] = rslub_cache_alloc(held_cache, GFP_KERNEL);
		/* Free every third: partial slabs, remote-looking activity. */
		if (k % 3 == 2) {
			rslub_cache_free(held_cache, held[k]);
			held[k] = NULL;
		}
	}
	return 0;
}

void release_held(void)
{
	unsigned int k;

	if (!held_cache)
		return;
	for (k = 0; k < HOLD_OBJS; k++)
		rslub_cache_free(held_cache, held[k]);
	rslub_cache_destroy(held_cache);
}
#else
int hold_cache(void)
{
	pr_err("rslub_bench: hold=1 holds an rslub cache: not in this build\n");
	return -EINVAL;
}

void release_held(void)
{
}
#endif
