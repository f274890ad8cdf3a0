/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of rslub_stress.ko share: the caches and their objects
 * (stress_objects.c: checksums, constructors, the exchange ring), the
 * contexts that hammer them (stress_contexts.c: workers, timers, tuner,
 * hotplug) and the parameters and judge (stress_main.c, whose comment
 * says what the stress does and what passes).
 */
#ifndef RSLUB_STRESS_H
#define RSLUB_STRESS_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/threads.h>
#include <linux/timer.h>
#include <linux/types.h>

#define MAX_CACHES	8
#define MAX_WORKERS	64
#define WORKER_HOLD	256	/* objects a worker holds at most */
#define TIMER_HOLD	32	/* objects a timer holds at most */
#define ROUND_OPS	256	/* worker operations between re-pinning */
#define BULK_MAX	32
#define XCHG_SLOTS	1024
#define REPORTS_MAX	5	/* detailed checksum reports */
#define OBJ_KEY 0x9e3779b97f4a7c15ull

/* Parameters (stress_main.c). */
extern unsigned int stress_ncaches, stress_hotplug_ms, stress_inject;
extern unsigned long long stress_seed;
extern bool stress_faults;

enum ctx { CTX_THREAD, CTX_HARDIRQ, CTX_SOFTIRQ, NR_CTX };
extern const char *const stress_ctx_name[NR_CTX];

struct scache {
	struct rslub_cache *s;
	char name[32];
	unsigned int idx, size, align, min_align;
	bool hwcache, ctor;
};

/* Counters of one context instance; only its owner writes them. */
struct stats {
	unsigned long allocs, frees, bulk_allocs, bulk_frees;
	unsigned long atomic_fail, kernel_fail;	/* NULL from GFP_ATOMIC/NOWAIT, GFP_KERNEL */
	unsigned long bulk_fail;		/* alloc_bulk returned false */
	unsigned long verified, bad_sum, bad_ctor, bad_zero, bad_align;
	unsigned long pushed, popped, remote_cpu, remote_node;
	unsigned long fires, wrong_ctx;
};

struct obj {
	void *p;
	unsigned int c;		/* cache index */
};

struct worker {
	unsigned int id, home;
	struct task_struct *task;
	struct completion done;
	u64 rng;
	struct stats st;
	struct obj held[WORKER_HOLD];
	void *bulk[BULK_MAX];

	struct hrtimer hrt;
	u64 hrt_rng;
	struct stats hrt_st;
	struct obj hrt_held[TIMER_HOLD];

	struct timer_list tl;
	u64 tl_rng;
	struct stats tl_st;
	struct obj tl_held[TIMER_HOLD];
};

/* Tuner and hotplug results. */
struct stress_tuner {
	struct task_struct *task;
	struct completion done;
	unsigned long shrinks, sets, set_fail, set_nomem, reads, errors_seen;
	unsigned long creates, create_nomem;
	long peak_pages;
};

struct stress_hotplug {
	struct task_struct *task;
	struct completion done;
	unsigned long offline, online, refused, add_fail;
	int last_err;
	unsigned long offlined[BITS_TO_LONGS(NR_CPUS)];
};

/* --- the caches and their objects (stress_objects.c) ---------------------- */

extern struct scache stress_caches[MAX_CACHES];
DECLARE_PER_CPU(unsigned long, stress_ops_on_cpu);
extern atomic_t stress_reports;
extern atomic_long_t stress_ctor_calls;

static inline u64 rnd(u64 *x)
{
	u64 v = *x;

	v ^= v << 13;
	v ^= v >> 7;
	v ^= v << 17;
	*x = v;
	return v;
}

static inline u32 rnd_below(u64 *x, u32 n)
{
	return (u32)((rnd(x) >> 32) % n);
}

int make_caches(u64 *rng);
/* Allocation-time checks and the checksum; false when p is NULL. */
bool on_alloc(struct stats *st, struct scache *c, void *p, gfp_t gfp,
	      u64 *rng, enum ctx ctx);
/*
 * Verifies the checksum, counts where the object was allocated, and
 * restores the constructed state; the caller then frees p.
 */
void on_free(struct stats *st, struct scache *c, void *p, enum ctx ctx);
void free_one(struct stats *st, struct obj *o, enum ctx ctx);
gfp_t pick_gfp(u64 *rng, struct scache *c, enum ctx ctx);
void alloc_into(struct stats *st, struct obj *o, u64 *rng, enum ctx ctx);
/* Hands o to whoever pops it next (likely on another CPU); frees it when full. */
void push(struct stats *st, struct obj *o, enum ctx ctx);
void pop_and_free(struct stats *st, unsigned int n, enum ctx ctx);

/* --- the contexts (stress_contexts.c) ------------------------------------- */

extern struct worker *stress_workers;
extern unsigned int stress_nr_workers;
extern bool stress_stop;
extern struct stress_tuner stress_tuner;
extern struct stress_hotplug stress_hp;

enum hrtimer_restart hrt_fn(struct hrtimer *t);
void tl_fn(struct timer_list *t);
int worker_fn(void *arg);
int tuner_fn(void *arg);
int hotplug_fn(void *arg);

#endif /* RSLUB_STRESS_H */
