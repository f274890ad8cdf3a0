// SPDX-License-Identifier: GPL-2.0
/*
 * A/B micro-benchmarks of the in-tree SLUB, rslub and a "floor" allocator,
 * all called through the same table of function pointers:
 *   slub   kmem_cache_* on a private SLAB_NO_MERGE cache
 *   rslub  rslub_cache_* on a cache of the same size, align and flags;
 *          "rslub:knob=v:knob=v" is a variant with tunables set after create
 *          (cpu_partial, min_partial, max_empty, random_freelist), harden=0|1
 *          set for its create, and build=NAME, a label only: the rslub.ko
 *          loaded is that build variant (scripts/guest-bench.sh loads it)
 *   served a kernel kmem_cache like slub's, served by rslub (rslub_serve,
 *          the slab backend hook): the kernel's entry points and the hook's
 *          glue in front of rslub, the bulk calls too
 *   kmalloc kmalloc(size)/kfree() of the in-tree SLUB (the kernel's own
 *          kmalloc-<size> cache; sizes without one are skipped)
 *   kserved the same calls while rslub serves kmalloc-<size>: served in
 *          each of its rounds only (rslub_serve before, "-" after), so the
 *          kmalloc rounds between them measure the in-tree cache
 *   floor  a per-CPU stack of preallocated objects, preemption disabled
 *          around a push or pop: what doing almost nothing costs
 *
 * Workloads (param workloads=, comma separated), per object size:
 *   pair      alloc immediately followed by free; cost per pair
 *   repeat    N allocations, then N frees; cost per alloc and per free
 *   fifo      a FIFO queue of N live objects: each step allocates one at the
 *             tail and frees the oldest at the head; cost per step (a free
 *             that lands on an older slab than the CPU's, like a ring buffer)
 *   shuffle   N allocations, then the N frees in a random order (fixed seed,
 *             shuffled before timing); cost per free
 *   bulk      alloc_bulk + free_bulk of each batch size; cost per object
 *   remote    a kthread on one CPU allocates batches, a kthread on another
 *             frees them; cost per alloc, per free, per object, objects/s.
 *             In icount mode the two take turns by bursts (remote_lockstep):
 *             QEMU then runs one vCPU at a time, so neither side's timed
 *             window counts the other's instructions.
 *   parallel  1..max_cpus CPUs (or the counts of par_cpus) run pair, then
 *             repeat, at once; ops/s
 *   churn     random alloc/free over a live set; the caches stay with
 *             their live objects until rmmod, so the guest script can read
 *             the pages held from sysfs before and after shrink
 *   trace     for a debugger, not a result: per allocator, warm pairs, then
 *             (once trace_go is set) TRACE_PAIRS pairs with a call of
 *             rslub_bench_trace_mark() before the alloc, between alloc and
 *             free, and after the free (scripts/trace-pair.sh steps the
 *             instructions between the marks); with trace_bulk=N each
 *             alloc and free is a bulk call of N objects
 *
 * Rounds are interleaved (A B A B ...). Costs are in get_cycles() ticks,
 * which under QEMU's -icount shift=0 are executed instructions (mode=icount,
 * metric instr_per_op), or in ktime nanoseconds (mode=wall, ns_per_op).
 * Every round prints one line:
 *   rslub_bench: result mode= workload= op= size= batch= cpus= alloc=
 *                variant= metric= round= value=
 * which tools/rsbench turns into bench.json, tables and plots.
 *
 * mode=model is mode=icount under the cost model's QEMU plugin
 * (tools/costmodel), with marks: each measured window also lies between two
 * marks of include/rslub_mark.h, the one before it with id 0, the one after it with
 * the window's id, (the measurement's start in ns << 4) | the op's number.
 * Its result lines add n= (the operations the value is divided by) and
 * marks=ID[+ID] (the regions of the plugin's counts file the result is
 * made of, all vCPUs); rsbench prices them. mode=model8, model16 and
 * model32 are the same on the model's 8-, 16- and 32-vCPU boots, named
 * apart. parallel's phases are marked
 * whole: their regions hold every CPU's work. remote is marked by bursts
 * (lockstep, forced in this mode): a burst's region also holds the ring's
 * few instructions per batch and the ring's lines passing between the two
 * CPUs, the same for every allocator. marks=1 in mode=icount is the
 * icount boot under the plugin with model=off: the same marks, so that
 * rsbench counts each rep string instruction in a window once (under
 * -icount the clock counts each of its iterations).
 *
 * Built with -DRSLUB_BENCH_NO_RSLUB (bench/Kbuild BENCH_NO_RSLUB=1) the module
 * leaves rslub out and offers slub and floor only: make bench SUITE=classic
 * runs it on Linux 6.12, whose in-tree SLUB is the classic design rslub
 * implements, and where there is no rslub.ko (no Rust in that kernel).
 *
 * Loading fails with -EAGAIN on purpose once the results are printed, so
 * nothing needs unloading; with churn or hold=1 the module stays loaded
 * holding caches with live objects (hold: "rslub_bench_hold", 667 objects,
 * for rslabinfo) until it is removed.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "rslub.h"
#include "rslub_mark.h"

static char *mode = "icount";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "icount (QEMU -icount: ticks are instructions), model (icount and the cost model's marks), cycles (real TSC), wall (ns)");

static bool mark_windows;
module_param_named(marks, mark_windows, bool, 0444);
MODULE_PARM_DESC(marks, "mark each measured window for the cost model's plugin (always on in model modes)");

static char *workloads = "pair,repeat,bulk,remote";
module_param(workloads, charp, 0444);
MODULE_PARM_DESC(workloads, "comma list of pair,repeat,fifo,shuffle,bulk,remote,parallel,churn,trace");

static char *allocs = "slub,rslub,floor";
module_param(allocs, charp, 0444);
MODULE_PARM_DESC(allocs, "comma list of slub, rslub[:knob=v...], served (a kernel cache rslub serves), kmalloc, kserved (kmalloc-<size> served), floor");

#define MAX_SIZES 16
static unsigned int sizes[MAX_SIZES] = {
	8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384
};

static int nr_sizes = 12;
module_param_array(sizes, uint, &nr_sizes, 0444);
MODULE_PARM_DESC(sizes, "object sizes (bytes)");

#define MAX_BATCH 128
static unsigned int batches[8] = { 1, 8, 16, 32, 64, 128 };
static int nr_batches = 6;
module_param_array(batches, uint, &nr_batches, 0444);
MODULE_PARM_DESC(batches, "bulk batch sizes (1..128)");

static unsigned int ops = 10000;
module_param(ops, uint, 0444);
MODULE_PARM_DESC(ops, "operations per round and workload");

static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per allocator (A B A B ...)");

static unsigned int budget_kb = 16384;
module_param(budget_kb, uint, 0444);
MODULE_PARM_DESC(budget_kb, "memory held at once per thread and allocator (repeat, churn)");

static unsigned int remote_batch = 16;
module_param(remote_batch, uint, 0444);
MODULE_PARM_DESC(remote_batch, "objects handed over at once in remote");

static int remote_cpu = -1;
module_param(remote_cpu, int, 0444);
MODULE_PARM_DESC(remote_cpu, "remote: the freeing CPU (the allocating one is the first online); -1 = the next online");

static int remote_lockstep = -1;
module_param(remote_lockstep, int, 0444);
MODULE_PARM_DESC(remote_lockstep, "remote: 1 = the CPUs take turns by bursts of 64 batches, 0 = both stream at once, -1 = 1 in icount and cycles mode");

static unsigned int max_cpus;
module_param(max_cpus, uint, 0444);
MODULE_PARM_DESC(max_cpus, "parallel: scale up to this many CPUs (0: all online)");

static unsigned int par_cpus[8];
static int nr_par_cpus;
module_param_array(par_cpus, uint, &nr_par_cpus, 0444);
MODULE_PARM_DESC(par_cpus, "parallel: the CPU counts to run at (default every count 1..max_cpus)");

static unsigned int round_base;
module_param(round_base, uint, 0444);
MODULE_PARM_DESC(round_base, "number of the first round printed (churn: the round; seeds the RNG)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "after the run, stay loaded holding a cache with live objects (for rslabinfo)");

static bool trace_go;
module_param(trace_go, bool, 0644);
MODULE_PARM_DESC(trace_go, "trace: set (through sysfs) once a debugger watches rslub_bench_trace_mark()");
static unsigned int trace_bulk;
module_param(trace_bulk, uint, 0444);
MODULE_PARM_DESC(trace_bulk, "trace: bulk calls of this many objects (2..128) instead of pairs");
#define TRACE_PAIRS 3
#define TRACE_WARM 1000
#define TRACE_WAIT_MS 300000

#define MAX_ROUNDS 16
#define MAX_ALLOCS 8
#define MAX_PAR 32
#define HOLD_OBJS 1000

static bool use_ns, quiet, marking;
static int failed;

/*
 * Marks for the cost model's plugin (mode=model, or marks=1); nothing
 * otherwise. A measurement's ids are mark_ids() | its op's number (1..15);
 * id 0 is discarded.
 */
static void mark(u64 id)
{
	if (marking)
		rslub_mark(id);
}

static u64 mark_ids(void)
{
	/* Unique in a boot: under -icount, ns count instructions. */
	return marking ? ktime_get_ns() << 4 : 0;
}

static u64 now(void)
{
	return use_ns ? ktime_get_ns() : (u64)get_cycles();
}

/* --- the allocators under test ------------------------------------------ */

struct ops {
	const char *name;
	void *(*create)(const char *name, unsigned int size);
	void (*destroy)(void *cache);
	void *(*alloc)(void *cache);
	void (*free)(void *cache, void *obj);
	bool (*alloc_bulk)(void *cache, size_t nr, void **p);
	void (*free_bulk)(void *cache, size_t nr, void **p);
	/* Optional: around each round of the allocator (not timed). */
	int (*enter)(void *cache);
	void (*leave)(void *cache);
};

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
		failed = -EBUSY;
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

/* One entry of allocs=: an allocator and, for rslub, its knobs. */
struct subject {
	const struct ops *ops;
	char variant[64];	/* "-" or "knob=v:knob=v" */
	void *cache;		/* for the size being measured */
	char name[48];		/* of that cache */
};

static struct subject subjects[MAX_ALLOCS];
static unsigned int nr_subjects;

static int parse_allocs(void)
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
		if (nr_subjects == MAX_ALLOCS) {
			pr_err("rslub_bench: allocs: more than %d entries\n", MAX_ALLOCS);
			ret = -EINVAL;
			break;
		}
		s = &subjects[nr_subjects];
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
		nr_subjects++;
	}
	kfree(list);
	if (!ret && !nr_subjects) {
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

static int create_caches(const char *workload, unsigned int size, unsigned int cap)
{
	unsigned int k;

	floor_cap = cap + MAX_BATCH;
	for (k = 0; k < nr_subjects; k++) {
		struct subject *s = &subjects[k];

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

static void destroy_caches(void)
{
	unsigned int k;

	for (k = 0; k < nr_subjects; k++) {
		if (subjects[k].cache)
			subjects[k].ops->destroy(subjects[k].cache);
		subjects[k].cache = NULL;
	}
}

/* --- output -------------------------------------------------------------- */

/*
 * One result line, value num / den; with marks (marking, non-zero ids)
 * it names the regions of the cost model's counts that make it (m1, and m2
 * when set) and the n operations they hold.
 */
static void result_marked(const char *workload, const char *op, unsigned int size,
			  unsigned int batch, unsigned int cpus, const char *alloc,
			  const char *variant, const char *metric, unsigned int round,
			  u64 num, u64 den, u64 n, u64 m1, u64 m2)
{
	u64 hundredths = div64_u64(num * 100, max(den, 1ull));
	char marks[64] = "";

	if (quiet)
		return;
	if (marking && m2)
		snprintf(marks, sizeof(marks), " n=%llu marks=%llu+%llu", n, m1, m2);
	else if (marking && m1)
		snprintf(marks, sizeof(marks), " n=%llu marks=%llu", n, m1);
	pr_info("rslub_bench: %s mode=%s workload=%s op=%s size=%u batch=%u cpus=%u alloc=%s variant=%s metric=%s round=%u value=%llu.%02llu%s\n",
		"result", mode, workload, op, size, batch, cpus, alloc, variant, metric,
		round_base + round, div_u64(hundredths, 100), hundredths % 100, marks);
}

static void result(const char *workload, const char *op, unsigned int size,
		   unsigned int batch, unsigned int cpus, const char *alloc,
		   const char *variant, const char *metric, unsigned int round,
		   u64 num, u64 den)
{
	result_marked(workload, op, size, batch, cpus, alloc, variant, metric, round,
		      num, den, 0, 0, 0);
}

static const char *cost_metric(void)
{
	if (use_ns)
		return "ns_per_op";
	return strcmp(mode, "cycles") ? "instr_per_op" : "cycles_per_op";
}

/* A single-CPU cost; `id` names its marked window (0: none). */
static void cost(const char *workload, const char *op, unsigned int size,
		 unsigned int batch, struct subject *s, unsigned int r,
		 u64 ticks, u64 n, u64 id)
{
	result_marked(workload, op, size, batch, 1, s->ops->name, s->variant,
		      cost_metric(), r, ticks, n, n, id, 0);
}

static void note_oom(struct subject *s, const char *workload, unsigned int size)
{
	if (!failed)
		pr_err("rslub_bench: %s: %s at size %u: allocation failed\n",
		       s->ops->name, workload, size);
	failed = -ENOMEM;
}

/* --- single-CPU workloads ------------------------------------------------ */

static void run_pair(struct subject *s, unsigned int size, unsigned int r)
{
	void *c = s->cache, *o;
	u64 t0, t1, id;
	unsigned int i;

	/* Warm the CPU slab / sheaf. */
	o = s->ops->alloc(c);
	if (!o)
		return note_oom(s, "pair", size);
	s->ops->free(c, o);
	id = mark_ids();
	mark(0);
	t0 = now();
	for (i = 0; i < ops; i++) {
		o = s->ops->alloc(c);
		s->ops->free(c, o);
	}
	t1 = now();
	mark(id | 1);
	cost("pair", "pair", size, 1, s, r, t1 - t0, ops, id | 1);
}

static unsigned int held_objects(unsigned int size)
{
	return clamp_t(u64, div_u64((u64)budget_kb * 1024, size), 1, ops);
}

static void run_repeat(struct subject *s, unsigned int size, unsigned int r,
		       void **scratch)
{
	unsigned int i, n = held_objects(size);
	void *c = s->cache;
	u64 t0, t1, t2, id = mark_ids();

	mark(0);
	t0 = now();
	for (i = 0; i < n; i++)
		scratch[i] = s->ops->alloc(c);
	t1 = now();
	mark(id | 1);
	for (i = 0; i < n; i++) {
		if (!scratch[i])
			return note_oom(s, "repeat", size);
		s->ops->free(c, scratch[i]);
	}
	t2 = now();
	mark(id | 2);
	cost("repeat", "alloc", size, 1, s, r, t1 - t0, n, id | 1);
	cost("repeat", "free", size, 1, s, r, t2 - t1, n, id | 2);
}

/* Allocates n live objects into scratch[]; on failure frees them, false. */
static bool alloc_live(struct subject *s, void **scratch, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		scratch[i] = s->ops->alloc(s->cache);
		if (!scratch[i]) {
			while (i--)
				s->ops->free(s->cache, scratch[i]);
			return false;
		}
	}
	return true;
}

static void run_fifo(struct subject *s, unsigned int size, unsigned int r,
		     void **scratch)
{
	unsigned int i, n = held_objects(size), head = 0, done;
	void *c = s->cache, *o;
	u64 t0, t1, id = mark_ids();

	if (!alloc_live(s, scratch, n))
		return note_oom(s, "fifo", size);
	/* scratch[] is a ring: the oldest object is at head. */
	mark(0);
	t0 = now();
	for (i = 0; i < ops; i++) {
		o = s->ops->alloc(c);
		if (unlikely(!o))
			break;
		s->ops->free(c, scratch[head]);
		scratch[head] = o;
		head = head + 1 == n ? 0 : head + 1;
	}
	t1 = now();
	mark(id | 1);
	done = i;
	for (i = 0; i < n; i++)
		s->ops->free(c, scratch[i]);
	if (done < ops)
		return note_oom(s, "fifo", size);
	cost("fifo", "step", size, 1, s, r, t1 - t0, ops, id | 1);
}

static void run_shuffle(struct subject *s, unsigned int size, unsigned int r,
			void **scratch)
{
	unsigned int i, n = held_objects(size);
	struct rnd_state rnd;
	void *c = s->cache;
	u64 t0, t1, id = mark_ids();

	if (!alloc_live(s, scratch, n))
		return note_oom(s, "shuffle", size);
	/* The same order for every allocator and round of this size. */
	prandom_seed_state(&rnd, size);
	for (i = n - 1; i > 0; i--) {
		/* One draw per step: swap() evaluates its arguments twice. */
		unsigned int j = prandom_u32_state(&rnd) % (i + 1);

		swap(scratch[i], scratch[j]);
	}
	mark(0);
	t0 = now();
	for (i = 0; i < n; i++)
		s->ops->free(c, scratch[i]);
	t1 = now();
	mark(id | 1);
	cost("shuffle", "free", size, 1, s, r, t1 - t0, n, id | 1);
}

static void run_bulk(struct subject *s, unsigned int size, unsigned int r,
		     void **scratch)
{
	int b;

	for (b = 0; b < nr_batches; b++) {
		unsigned int i, batch = batches[b], n = max(ops / batch, 1u);
		u64 t0, t1, id = mark_ids();

		mark(0);
		t0 = now();
		for (i = 0; i < n; i++) {
			if (!s->ops->alloc_bulk(s->cache, batch, scratch))
				return note_oom(s, "bulk", size);
			s->ops->free_bulk(s->cache, batch, scratch);
		}
		t1 = now();
		mark(id | 1);
		cost("bulk", "object", size, batch, s, r, t1 - t0, (u64)n * batch, id | 1);
	}
}

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

static void *(*remote_ring)[MAX_BATCH];

static void run_remote(struct subject *s, unsigned int size, unsigned int r,
		       struct remote *x)
{
	int c0 = cpumask_first(cpu_online_mask);
	int c1 = remote_cpu >= 0 && remote_cpu != c0 ? remote_cpu :
		 cpumask_next(c0, cpu_online_mask);
	struct task_struct *p, *q;
	u64 n;

	if (c1 >= nr_cpu_ids) {
		if (!r)
			pr_info("rslub_bench: remote needs two online CPUs; skipped\n");
		return;
	}
	memset(x, 0, sizeof(*x));
	x->s = s;
	x->batch = clamp(remote_batch, 1u, (unsigned int)MAX_BATCH);
	x->nbatches = max(ops / x->batch, 1u);
	x->ring = remote_ring;
	/* The plugin's marks need the bursts: lockstep whatever was asked. */
	x->lockstep = remote_lockstep < 0 ? !use_ns : remote_lockstep || marking;
	x->id = mark_ids();
	init_waitqueue_head(&x->wq);
	init_completion(&x->done[0]);
	init_completion(&x->done[1]);
	/* Both created before either runs: neither can wait for a missing peer. */
	p = kthread_create_on_cpu(producer_fn, x, c0, "rsb_prod/%u");
	if (IS_ERR(p)) {
		failed = PTR_ERR(p);
		return;
	}
	q = kthread_create_on_cpu(consumer_fn, x, c1, "rsb_cons/%u");
	if (IS_ERR(q)) {
		kthread_stop(p);
		failed = PTR_ERR(q);
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
	if (use_ns)
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
	for (i = 0; i < ops; i++) {
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
			failed = PTR_ERR(tasks[i]);
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
		u64 id = mark_ids(), n = (u64)k * (ph ? x->n : ops);

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

/* parallel at each count of par_cpus, or at every count 1..ncpus */
static void run_parallel_counts(struct subject *s, unsigned int size, unsigned int r,
				struct par *x, unsigned int ncpus)
{
	unsigned int c;

	if (nr_par_cpus) {
		for (c = 0; c < nr_par_cpus && !failed; c++)
			run_parallel(s, size, r, x, par_cpus[c]);
		return;
	}
	for (c = 1; c <= ncpus && !failed; c++)
		run_parallel(s, size, r, x, c);
}

/* --- churn: random frees over a live set, pages read from sysfs ---------- */

struct churn {
	struct subject s;
	unsigned int size, nslots;
	void **slots;
};

static struct churn churns[MAX_ALLOCS * MAX_SIZES];
static unsigned int nr_churns, churn_ideal_done;

/*
 * Fills every slot, then toggles random slots (free if full, allocate if
 * empty) 4 x slots times: about half the objects stay live, spread over
 * slabs the way a long-running user leaves them.
 */
static void run_churn(struct subject *s, unsigned int size, unsigned int r)
{
	struct churn *ch = &churns[nr_churns];
	unsigned int i, live = 0;
	struct rnd_state rnd;

	ch->s = *s;
	ch->size = size;
	ch->nslots = held_objects(size);
	ch->slots = vzalloc(array_size(ch->nslots, sizeof(void *)));
	if (!ch->slots) {
		failed = -ENOMEM;
		return;
	}
	nr_churns++;
	s->cache = NULL;	/* now owned by the churn entry, until rmmod */
	prandom_seed_state(&rnd, 0x5eed0000ull + round_base + r);
	for (i = 0; i < ch->nslots; i++)
		ch->slots[i] = ch->s.ops->alloc(ch->s.cache);
	for (i = 0; i < 4 * ch->nslots; i++) {
		void **slot = &ch->slots[prandom_u32_state(&rnd) % ch->nslots];

		if (*slot) {
			ch->s.ops->free(ch->s.cache, *slot);
			*slot = NULL;
		} else {
			*slot = ch->s.ops->alloc(ch->s.cache);
		}
	}
	for (i = 0; i < ch->nslots; i++)
		live += !!ch->slots[i];
	pr_info("rslub_bench: churn alloc=%s variant=%s size=%u round=%u live=%u sysfs=/sys/kernel/%s/%s\n",
		s->ops->name, s->variant, size, round_base + r, live,
		s->ops == &slub_ops ? "slab" : "rslub", ch->s.name);
	if (!churn_ideal_done++)
		result("churn", "ideal", size, 1, 1, "ideal", "-", "pages", r,
		       (u64)live * size, PAGE_SIZE);
}

static void free_churns(void)
{
	unsigned int i, k;

	for (i = 0; i < nr_churns; i++) {
		struct churn *ch = &churns[i];

		for (k = 0; k < ch->nslots; k++)
			if (ch->slots[k])
				ch->s.ops->free(ch->s.cache, ch->slots[k]);
		vfree(ch->slots);
		ch->s.ops->destroy(ch->s.cache);
	}
	nr_churns = 0;
}

/*
 * trace: the instructions of one pair, for scripts/trace-pair.sh, which
 * single-steps the guest from one mark to the next under gdb. The marks
 * are calls of an empty function that must stay a call.
 */
noinline void rslub_bench_trace_mark(void);
noinline void rslub_bench_trace_mark(void)
{
	asm volatile("" ::: "memory");
}

static int run_trace(struct subject *s, unsigned int size)
{
	void *c = s->cache, *o;
	unsigned int i, waited = 0;

	static void *objs[MAX_BATCH];
	unsigned int n = clamp(trace_bulk, 1u, (unsigned int)MAX_BATCH);

	for (i = 0; i < TRACE_WARM; i++) {
		if (trace_bulk) {
			if (!s->ops->alloc_bulk(c, n, objs))
				return -ENOMEM;
			s->ops->free_bulk(c, n, objs);
			continue;
		}
		o = s->ops->alloc(c);
		if (!o)
			return -ENOMEM;
		s->ops->free(c, o);
	}
	while (!READ_ONCE(trace_go)) {
		if (waited >= TRACE_WAIT_MS) {
			pr_err("rslub_bench: trace: trace_go not set in %u s\n",
			       TRACE_WAIT_MS / 1000);
			return -ETIMEDOUT;
		}
		msleep(100);
		waited += 100;
	}
	pr_info("rslub_bench: trace alloc=%s size=%u pairs=%u bulk=%u\n",
		s->ops->name, size, TRACE_PAIRS, trace_bulk);
	for (i = 0; i < TRACE_PAIRS; i++) {
		if (trace_bulk) {
			rslub_bench_trace_mark();
			if (!s->ops->alloc_bulk(c, n, objs))
				return -ENOMEM;
			rslub_bench_trace_mark();
			s->ops->free_bulk(c, n, objs);
			rslub_bench_trace_mark();
			continue;
		}
		rslub_bench_trace_mark();
		o = s->ops->alloc(c);
		rslub_bench_trace_mark();
		s->ops->free(c, o);
		rslub_bench_trace_mark();
	}
	return 0;
}

/* --- driver -------------------------------------------------------------- */

enum workload {
	PAIR, REPEAT, FIFO, SHUFFLE, BULK, REMOTE, PARALLEL, CHURN, TRACE, NR_WORKLOADS
};

static const char * const workload_names[NR_WORKLOADS] = {
	"pair", "repeat", "fifo", "shuffle", "bulk", "remote", "parallel", "churn",
	"trace"
};

struct bench_mem {
	void **scratch;
	struct remote remote;
	struct par *par;
};

static int run_workload(enum workload w, struct bench_mem *m)
{
	unsigned int ncpus = num_online_cpus(), k, r, pass;
	int si, ret = 0;

	if (max_cpus)
		ncpus = min(ncpus, max_cpus);
	ncpus = min_t(unsigned int, ncpus, MAX_PAR);
	for (si = 0; si < nr_sizes && !ret && !failed; si++) {
		unsigned int size = sizes[si];

		churn_ideal_done = 0;
		ret = create_caches(workload_names[w], size, held_objects(size));
		/* Pass 0 is a warm-up (new slabs, cold caches), not printed. */
		for (pass = w == CHURN; pass <= rounds && !ret && !failed; pass++) {
			r = pass - 1;
			quiet = pass == 0;
			for (k = 0; k < nr_subjects && !failed; k++) {
				struct subject *s = &subjects[k];

				if (!s->cache)
					continue;	/* none of this size */
				if (s->ops->enter) {
					failed = s->ops->enter(s->cache);
					if (failed)
						break;
				}
				switch (w) {
				case PAIR:
					run_pair(s, size, r);
					break;
				case REPEAT:
					run_repeat(s, size, r, m->scratch);
					break;
				case FIFO:
					run_fifo(s, size, r, m->scratch);
					break;
				case SHUFFLE:
					run_shuffle(s, size, r, m->scratch);
					break;
				case BULK:
					run_bulk(s, size, r, m->scratch);
					break;
				case REMOTE:
					if (s->ops != &floor_ops)
						run_remote(s, size, r, &m->remote);
					break;
				case PARALLEL:
					run_parallel_counts(s, size, r, m->par, ncpus);
					break;
				case CHURN:
					/* Caches of their own, kept until rmmod. */
					if (s->ops != &floor_ops && s->ops != &kmalloc_ops &&
					    s->ops != KSERVED_OPS)
						run_churn(s, size, r);
					break;
				case TRACE:
					if (pass == 1 && !failed)
						failed = run_trace(s, size);
					break;
				default:
					break;
				}
				if (s->ops->leave)
					s->ops->leave(s->cache);
			}
			if (w == CHURN)
				break;	/* one round per load: the script reads sysfs after it */
		}
		destroy_caches();
	}
	return ret ?: failed;
}

static int parse_workloads(bool *want)
{
	char *list = kstrdup(workloads, GFP_KERNEL), *cur = list, *tok;
	int w, ret = 0;

	if (!list)
		return -ENOMEM;
	while ((tok = strsep(&cur, ",")) && !ret) {
		if (!*tok)
			continue;
		w = match_string(workload_names, NR_WORKLOADS, tok);
		if (w < 0) {
			pr_err("rslub_bench: workloads: unknown workload '%s'\n", tok);
			ret = -EINVAL;
		} else {
			want[w] = true;
		}
	}
	kfree(list);
	return ret;
}

static int check_params(void)
{
	int i;

	if (strcmp(mode, "icount") && strcmp(mode, "cycles") && strcmp(mode, "wall") &&
	    strcmp(mode, "model") && strcmp(mode, "model8") && strcmp(mode, "model16") &&
	    strcmp(mode, "model32")) {
		pr_err("rslub_bench: mode=%s: must be icount, model, model8, model16, model32, cycles or wall\n",
		       mode);
		return -EINVAL;
	}
	use_ns = !strcmp(mode, "wall");
	marking = mark_windows || !strncmp(mode, "model", 5);
	if (remote_cpu >= 0 && (remote_cpu >= nr_cpu_ids || !cpu_online(remote_cpu))) {
		pr_err("rslub_bench: remote_cpu=%d: not an online CPU\n", remote_cpu);
		return -EINVAL;
	}
	for (i = 0; i < nr_sizes; i++) {
		if (!sizes[i] || sizes[i] > RSLUB_MAX_OBJECT_SIZE) {
			pr_err("rslub_bench: sizes: %u is not in 1..%u\n", sizes[i],
			       RSLUB_MAX_OBJECT_SIZE);
			return -EINVAL;
		}
	}
	for (i = 0; i < nr_batches; i++) {
		if (!batches[i] || batches[i] > MAX_BATCH) {
			pr_err("rslub_bench: batches: %u is not in 1..%u\n", batches[i],
			       MAX_BATCH);
			return -EINVAL;
		}
	}
	for (i = 0; i < nr_par_cpus; i++) {
		if (!par_cpus[i] || par_cpus[i] > min(num_online_cpus(), MAX_PAR)) {
			pr_err("rslub_bench: par_cpus: %u is not in 1..%u (the online CPUs, at most %u)\n",
			       par_cpus[i], min(num_online_cpus(), MAX_PAR), MAX_PAR);
			return -EINVAL;
		}
	}
	if (!rounds || rounds > MAX_ROUNDS || !ops) {
		pr_err("rslub_bench: rounds must be 1..%u and ops at least 1\n", MAX_ROUNDS);
		return -EINVAL;
	}
	return parse_allocs();
}

static void free_mem(struct bench_mem *m)
{
	unsigned int i;

	if (m->par)
		for (i = 0; i < MAX_PAR; i++)
			vfree(m->par->t[i].scratch);
	kfree(m->par);
	vfree(m->scratch);
	vfree(remote_ring);
	remote_ring = NULL;
}

static int alloc_mem(struct bench_mem *m, bool parallel)
{
	unsigned int i, n = max_t(unsigned int, ops, MAX_BATCH);

	m->scratch = vmalloc_array(n, sizeof(void *));
	remote_ring = vmalloc_array(RING, sizeof(*remote_ring));
	if (!m->scratch || !remote_ring)
		return -ENOMEM;
	if (!parallel)
		return 0;
	m->par = kzalloc(struct_size(m->par, t, MAX_PAR), GFP_KERNEL);
	if (!m->par)
		return -ENOMEM;
	for (i = 0; i < MAX_PAR; i++) {
		m->par->t[i].scratch = vmalloc_array(n, sizeof(void *));
		if (!m->par->t[i].scratch)
			return -ENOMEM;
	}
	return 0;
}

static struct rslub_cache *held_cache;

#ifndef RSLUB_BENCH_NO_RSLUB
static void *held[HOLD_OBJS];

static int hold_cache(void)
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

static void release_held(void)
{
	unsigned int k;

	if (!held_cache)
		return;
	for (k = 0; k < HOLD_OBJS; k++)
		rslub_cache_free(held_cache, held[k]);
	rslub_cache_destroy(held_cache);
}
#else
static int hold_cache(void)
{
	pr_err("rslub_bench: hold=1 holds an rslub cache: not in this build\n");
	return -EINVAL;
}

static void release_held(void)
{
}
#endif

static int __init rslub_bench_init(void)
{
	bool want[NR_WORKLOADS] = {};
	struct bench_mem m = {};
	int ret, w;

	ret = check_params() ?: parse_workloads(want);
	if (!ret)
		ret = alloc_mem(&m, want[PARALLEL]);
	/* Single-CPU workloads run where they start: GFP_KERNEL may sleep. */
	set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	for (w = 0; w < NR_WORKLOADS && !ret; w++) {
		if (!want[w])
			continue;
		pr_info("rslub_bench: progress mode=%s workload=%s allocs=%s\n", mode,
			workload_names[w], allocs);
		ret = run_workload(w, &m);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	free_mem(&m);
	if (!ret && hold)
		ret = hold_cache();
	if (ret) {
		free_churns();
		pr_err("rslub_bench: FAILED (%d)\n", ret);
		return ret;
	}
	pr_info("rslub_bench: done\n");
	/* Stay loaded only when something is held for the caller to look at. */
	return nr_churns || held_cache ? 0 : -EAGAIN;
}
module_init(rslub_bench_init);

static void __exit rslub_bench_exit(void)
{
	free_churns();
	release_held();
}
module_exit(rslub_bench_exit);

MODULE_DESCRIPTION("In-tree SLUB vs rslub vs a floor allocator: micro-benchmarks");
MODULE_LICENSE("GPL");
