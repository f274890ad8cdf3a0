/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of rslub_bench.ko share: the allocator table and the
 * subjects of allocs= (subjects.c), the parameters and the result lines
 * (harness.c), and the workloads (workloads.c on one CPU, multicpu.c on
 * several). The module's interface and output are described in harness.c.
 */
#ifndef RSLUB_BENCH_H
#define RSLUB_BENCH_H

#include <linux/ktime.h>
#include <linux/timex.h>
#include <linux/types.h>

#include "rslub_mark.h"

#define MAX_SIZES 16
#define MAX_BATCH 128
#define MAX_ROUNDS 16
#define MAX_ALLOCS 8
#define MAX_PAR 32

/* --- parameters and run state (harness.c) -------------------------------- */

extern unsigned int bench_ops;
extern unsigned int bench_batches[];
extern int bench_nr_batches;
extern unsigned int bench_remote_batch;
extern int bench_remote_cpu;
extern int bench_remote_lockstep;
extern unsigned int bench_par_cpus[];
extern int bench_nr_par_cpus;
extern unsigned int bench_round_base;
extern bool bench_trace_go;
extern unsigned int bench_trace_bulk;

/* Whether ticks are ns (mode=wall), and whether windows are marked. */
extern bool bench_use_ns, bench_marking;
/* The first error of the run; every loop stops on it. */
extern int bench_failed;

/*
 * Marks for the cost model's plugin (mode=model, or marks=1); nothing
 * otherwise. A measurement's ids are mark_ids() | its op's number (1..15);
 * id 0 is discarded. Inline, with now(): they sit at the edges of the
 * measured windows, as they did when the module was one file.
 */
static inline void mark(u64 id)
{
	if (bench_marking)
		rslub_mark(id);
}

static inline u64 mark_ids(void)
{
	/* Unique in a boot: under -icount, ns count instructions. */
	return bench_marking ? ktime_get_ns() << 4 : 0;
}

static inline u64 now(void)
{
	return bench_use_ns ? ktime_get_ns() : (u64)get_cycles();
}

/* --- the allocators under test (subjects.c) ------------------------------ */

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

/* One entry of allocs=: an allocator and, for rslub, its knobs. */
struct subject {
	const struct ops *ops;
	char variant[64];	/* "-" or "knob=v:knob=v" */
	void *cache;		/* for the size being measured */
	char name[48];		/* of that cache */
};

extern struct subject bench_subjects[MAX_ALLOCS];
extern unsigned int bench_nr_subjects;

int parse_allocs(const char *allocs);
int create_caches(const char *workload, unsigned int size, unsigned int cap);
void destroy_caches(void);
/* Whether s is the allocator of that name in allocs= ("slub", "floor"...). */
bool subject_is(const struct subject *s, const char *name);
/* hold=1: a cache with live objects kept until rmmod (rslabinfo's). */
int hold_cache(void);
void release_held(void);
bool holding(void);

/* --- result lines (harness.c) --------------------------------------------- */

void result_marked(const char *workload, const char *op, unsigned int size,
		   unsigned int batch, unsigned int cpus, const char *alloc,
		   const char *variant, const char *metric, unsigned int round,
		   u64 num, u64 den, u64 n, u64 m1, u64 m2);
void result(const char *workload, const char *op, unsigned int size,
	    unsigned int batch, unsigned int cpus, const char *alloc,
	    const char *variant, const char *metric, unsigned int round,
	    u64 num, u64 den);
const char *cost_metric(void);
void cost(const char *workload, const char *op, unsigned int size,
	  unsigned int batch, struct subject *s, unsigned int r,
	  u64 ticks, u64 n, u64 id);
void note_oom(struct subject *s, const char *workload, unsigned int size);
/* Objects a repeat or churn round holds at once (budget_kb). */
unsigned int held_objects(unsigned int size);

/* --- workloads on one CPU (workloads.c) ----------------------------------- */

void run_pair(struct subject *s, unsigned int size, unsigned int r);
void run_repeat(struct subject *s, unsigned int size, unsigned int r,
		void **scratch);
void run_fifo(struct subject *s, unsigned int size, unsigned int r,
	      void **scratch);
void run_shuffle(struct subject *s, unsigned int size, unsigned int r,
		 void **scratch);
void run_bulk(struct subject *s, unsigned int size, unsigned int r,
	      void **scratch);
/* churn: caches kept with their live objects until rmmod (free_churns). */
void churn_new_size(void);
void run_churn(struct subject *s, unsigned int size, unsigned int r);
void free_churns(void);
bool churning(void);
int run_trace(struct subject *s, unsigned int size);

/* --- workloads on several CPUs (multicpu.c) ------------------------------- */

int multicpu_alloc(bool parallel);
void multicpu_free(void);
void run_remote(struct subject *s, unsigned int size, unsigned int r);
/* parallel at each count of par_cpus, or at every count 1..ncpus */
void run_parallel_counts(struct subject *s, unsigned int size, unsigned int r,
			 unsigned int ncpus);

#endif /* RSLUB_BENCH_H */
