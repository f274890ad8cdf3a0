// SPDX-License-Identifier: GPL-2.0
/*
 * A/B micro-benchmarks of the in-tree SLUB, rslub and a "floor" allocator,
 * all called through the same table of function pointers:
 *   slub   kmem_cache_* on a private SLAB_NO_MERGE cache
 *   rslub  rslub_cache_* on a cache of the same size, align and flags;
 *          "rslub:knob=v:knob=v" is a variant with tunables set after create
 *          (cpu_partial, min_partial, max_empty, random_freelist), harden=0|1
 *          set for its create, and build=NAME, a label only: the rslub.ko
 *          loaded is that build variant (scripts/guest/bench.sh loads it)
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
 *             free, and after the free (make trace-pair steps the
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
 *
 * This file is the harness: the parameters, the result lines, and the loop
 * over workloads, sizes, rounds and allocators. The allocators are in
 * subjects.c, the workloads in workloads.c (one CPU) and multicpu.c
 * (remote, parallel); bench.h is what they share.
 */
#include <linux/cpumask.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "rslub.h"
#include "bench.h"

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

static unsigned int sizes[MAX_SIZES] = {
	8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384
};

static int nr_sizes = 12;
module_param_array(sizes, uint, &nr_sizes, 0444);
MODULE_PARM_DESC(sizes, "object sizes (bytes)");

unsigned int bench_batches[8] = { 1, 8, 16, 32, 64, 128 };
int bench_nr_batches = 6;
module_param_array_named(batches, bench_batches, uint, &bench_nr_batches, 0444);
MODULE_PARM_DESC(batches, "bulk batch sizes (1..128)");

unsigned int bench_ops = 10000;
module_param_named(ops, bench_ops, uint, 0444);
MODULE_PARM_DESC(ops, "operations per round and workload");

static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per allocator (A B A B ...)");

static unsigned int budget_kb = 16384;
module_param(budget_kb, uint, 0444);
MODULE_PARM_DESC(budget_kb, "memory held at once per thread and allocator (repeat, churn)");

unsigned int bench_remote_batch = 16;
module_param_named(remote_batch, bench_remote_batch, uint, 0444);
MODULE_PARM_DESC(remote_batch, "objects handed over at once in remote");

int bench_remote_cpu = -1;
module_param_named(remote_cpu, bench_remote_cpu, int, 0444);
MODULE_PARM_DESC(remote_cpu, "remote: the freeing CPU (the allocating one is the first online); -1 = the next online");

int bench_remote_lockstep = -1;
module_param_named(remote_lockstep, bench_remote_lockstep, int, 0444);
MODULE_PARM_DESC(remote_lockstep, "remote: 1 = the CPUs take turns by bursts of 64 batches, 0 = both stream at once, -1 = 1 in icount and cycles mode");

static unsigned int max_cpus;
module_param(max_cpus, uint, 0444);
MODULE_PARM_DESC(max_cpus, "parallel: scale up to this many CPUs (0: all online)");

unsigned int bench_par_cpus[8];
int bench_nr_par_cpus;
module_param_array_named(par_cpus, bench_par_cpus, uint, &bench_nr_par_cpus, 0444);
MODULE_PARM_DESC(par_cpus, "parallel: the CPU counts to run at (default every count 1..max_cpus)");

unsigned int bench_round_base;
module_param_named(round_base, bench_round_base, uint, 0444);
MODULE_PARM_DESC(round_base, "number of the first round printed (churn: the round; seeds the RNG)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "after the run, stay loaded holding a cache with live objects (for rslabinfo)");

bool bench_trace_go;
module_param_named(trace_go, bench_trace_go, bool, 0644);
MODULE_PARM_DESC(trace_go, "trace: set (through sysfs) once a debugger watches rslub_bench_trace_mark()");
unsigned int bench_trace_bulk;
module_param_named(trace_bulk, bench_trace_bulk, uint, 0444);
MODULE_PARM_DESC(trace_bulk, "trace: bulk calls of this many objects (2..128) instead of pairs");

bool bench_use_ns, bench_marking;
int bench_failed;
/* Pass 0 of each size is a warm-up: its result lines are not printed. */
static bool quiet;

/* --- output -------------------------------------------------------------- */

/*
 * One result line, value num / den; with marks (marking, non-zero ids)
 * it names the regions of the cost model's counts that make it (m1, and m2
 * when set) and the n operations they hold.
 */
void result_marked(const char *workload, const char *op, unsigned int size,
		   unsigned int batch, unsigned int cpus, const char *alloc,
		   const char *variant, const char *metric, unsigned int round,
		   u64 num, u64 den, u64 n, u64 m1, u64 m2)
{
	u64 hundredths = div64_u64(num * 100, max(den, 1ull));
	char marks[64] = "";

	if (quiet)
		return;
	if (bench_marking && m2)
		snprintf(marks, sizeof(marks), " n=%llu marks=%llu+%llu", n, m1, m2);
	else if (bench_marking && m1)
		snprintf(marks, sizeof(marks), " n=%llu marks=%llu", n, m1);
	pr_info("rslub_bench: %s mode=%s workload=%s op=%s size=%u batch=%u cpus=%u alloc=%s variant=%s metric=%s round=%u value=%llu.%02llu%s\n",
		"result", mode, workload, op, size, batch, cpus, alloc, variant, metric,
		bench_round_base + round, div_u64(hundredths, 100), hundredths % 100, marks);
}

void result(const char *workload, const char *op, unsigned int size,
	    unsigned int batch, unsigned int cpus, const char *alloc,
	    const char *variant, const char *metric, unsigned int round,
	    u64 num, u64 den)
{
	result_marked(workload, op, size, batch, cpus, alloc, variant, metric, round,
		      num, den, 0, 0, 0);
}

const char *cost_metric(void)
{
	if (bench_use_ns)
		return "ns_per_op";
	return strcmp(mode, "cycles") ? "instr_per_op" : "cycles_per_op";
}

/* A single-CPU cost; `id` names its marked window (0: none). */
void cost(const char *workload, const char *op, unsigned int size,
	  unsigned int batch, struct subject *s, unsigned int r,
	  u64 ticks, u64 n, u64 id)
{
	result_marked(workload, op, size, batch, 1, s->ops->name, s->variant,
		      cost_metric(), r, ticks, n, n, id, 0);
}

void note_oom(struct subject *s, const char *workload, unsigned int size)
{
	if (!bench_failed)
		pr_err("rslub_bench: %s: %s at size %u: allocation failed\n",
		       s->ops->name, workload, size);
	bench_failed = -ENOMEM;
}

unsigned int held_objects(unsigned int size)
{
	return clamp_t(u64, div_u64((u64)budget_kb * 1024, size), 1, bench_ops);
}

/* --- driver -------------------------------------------------------------- */

/* The single-CPU workloads' objects, from the first workload to the last. */
static void **scratch;

enum workload {
	PAIR, REPEAT, FIFO, SHUFFLE, BULK, REMOTE, PARALLEL, CHURN, TRACE, NR_WORKLOADS
};

static const char * const workload_names[NR_WORKLOADS] = {
	"pair", "repeat", "fifo", "shuffle", "bulk", "remote", "parallel", "churn",
	"trace"
};

static int run_workload(enum workload w)
{
	unsigned int ncpus = num_online_cpus(), k, r, pass;
	int si, ret = 0;

	if (max_cpus)
		ncpus = min(ncpus, max_cpus);
	ncpus = min_t(unsigned int, ncpus, MAX_PAR);
	for (si = 0; si < nr_sizes && !ret && !bench_failed; si++) {
		unsigned int size = sizes[si];

		churn_new_size();
		ret = create_caches(workload_names[w], size, held_objects(size));
		/* Pass 0 is a warm-up (new slabs, cold caches), not printed. */
		for (pass = w == CHURN; pass <= rounds && !ret && !bench_failed; pass++) {
			r = pass - 1;
			quiet = pass == 0;
			for (k = 0; k < bench_nr_subjects && !bench_failed; k++) {
				struct subject *s = &bench_subjects[k];

				if (!s->cache)
					continue;	/* none of this size */
				if (s->ops->enter) {
					bench_failed = s->ops->enter(s->cache);
					if (bench_failed)
						break;
				}
				switch (w) {
				case PAIR:
					run_pair(s, size, r);
					break;
				case REPEAT:
					run_repeat(s, size, r, scratch);
					break;
				case FIFO:
					run_fifo(s, size, r, scratch);
					break;
				case SHUFFLE:
					run_shuffle(s, size, r, scratch);
					break;
				case BULK:
					run_bulk(s, size, r, scratch);
					break;
				case REMOTE:
					if (!subject_is(s, "floor"))
						run_remote(s, size, r);
					break;
				case PARALLEL:
					run_parallel_counts(s, size, r, ncpus);
					break;
				case CHURN:
					/* Caches of their own, kept until rmmod. */
					if (!subject_is(s, "floor") && !subject_is(s, "kmalloc") &&
					    !subject_is(s, "kserved"))
						run_churn(s, size, r);
					break;
				case TRACE:
					if (pass == 1 && !bench_failed)
						bench_failed = run_trace(s, size);
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
	return ret ?: bench_failed;
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
	bench_use_ns = !strcmp(mode, "wall");
	bench_marking = mark_windows || !strncmp(mode, "model", 5);
	if (bench_remote_cpu >= 0 &&
	    (bench_remote_cpu >= nr_cpu_ids || !cpu_online(bench_remote_cpu))) {
		pr_err("rslub_bench: remote_cpu=%d: not an online CPU\n", bench_remote_cpu);
		return -EINVAL;
	}
	for (i = 0; i < nr_sizes; i++) {
		if (!sizes[i] || sizes[i] > RSLUB_MAX_OBJECT_SIZE) {
			pr_err("rslub_bench: sizes: %u is not in 1..%u\n", sizes[i],
			       RSLUB_MAX_OBJECT_SIZE);
			return -EINVAL;
		}
	}
	for (i = 0; i < bench_nr_batches; i++) {
		if (!bench_batches[i] || bench_batches[i] > MAX_BATCH) {
			pr_err("rslub_bench: batches: %u is not in 1..%u\n", bench_batches[i],
			       MAX_BATCH);
			return -EINVAL;
		}
	}
	for (i = 0; i < bench_nr_par_cpus; i++) {
		if (!bench_par_cpus[i] ||
		    bench_par_cpus[i] > min(num_online_cpus(), MAX_PAR)) {
			pr_err("rslub_bench: par_cpus: %u is not in 1..%u (the online CPUs, at most %u)\n",
			       bench_par_cpus[i], min(num_online_cpus(), MAX_PAR), MAX_PAR);
			return -EINVAL;
		}
	}
	if (!rounds || rounds > MAX_ROUNDS || !bench_ops) {
		pr_err("rslub_bench: rounds must be 1..%u and ops at least 1\n", MAX_ROUNDS);
		return -EINVAL;
	}
	return parse_allocs(allocs);
}

static void free_mem(void)
{
	multicpu_free();
	vfree(scratch);
	scratch = NULL;
}

static int alloc_mem(bool parallel)
{
	unsigned int n = max_t(unsigned int, bench_ops, MAX_BATCH);

	scratch = vmalloc_array(n, sizeof(void *));
	if (!scratch)
		return -ENOMEM;
	return multicpu_alloc(parallel);
}

static int __init rslub_bench_init(void)
{
	bool want[NR_WORKLOADS] = {};
	int ret, w;

	ret = check_params() ?: parse_workloads(want);
	if (!ret)
		ret = alloc_mem(want[PARALLEL]);
	/* Single-CPU workloads run where they start: GFP_KERNEL may sleep. */
	set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
	for (w = 0; w < NR_WORKLOADS && !ret; w++) {
		if (!want[w])
			continue;
		pr_info("rslub_bench: progress mode=%s workload=%s allocs=%s\n", mode,
			workload_names[w], allocs);
		ret = run_workload(w);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	free_mem();
	if (!ret && hold)
		ret = hold_cache();
	if (ret) {
		free_churns();
		pr_err("rslub_bench: FAILED (%d)\n", ret);
		return ret;
	}
	pr_info("rslub_bench: done\n");
	/* Stay loaded only when something is held for the caller to look at. */
	return churning() || holding() ? 0 : -EAGAIN;
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
