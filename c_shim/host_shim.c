// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace twin of c_shim/shim.c, for host tests: threads stand in for
 * tasks, and a thread runs "on" a CPU while it holds that CPU's run mutex,
 * so one CPU executes one thread at a time, as in the kernel. The CPU lock
 * (irqs off) then needs no exclusion of its own. Preemption and migration
 * are simulated between reading the per-CPU pair and the cmpxchg16b: the
 * thread gives up its CPU and takes a random one, and other threads may run
 * on the old CPU meanwhile. That is exactly the window the tid protects.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "host_shim.h"

#define HOST_MAX_CPUS 64
#define HOST_MAX_NODES 8
#define HOST_PAGE_SIZE 4096UL
#define HOST_MAX_ORDER 4
#define TABLE_SIZE (1 << 18)
/* The order recorded for an alloc_meta block (beyond any page order). */
#define META_ORDER 0xffffu

static unsigned int nr_cpus = 4, nr_nodes = 2;
#define HOST_PCPU_STRIDE 4096UL

/*
 * A CPU's run mutex is robust: when a thread dies holding it, the next one
 * to enter gets it (and the recovery is counted) instead of waiting for
 * ever. A wait longer than CPU_WAIT_SECONDS means a thread is stuck on the
 * CPU: the process aborts with a line saying so, so a broken test fails in
 * seconds rather than at the outer timeout.
 */
#define CPU_WAIT_SECONDS 20
static pthread_mutex_t cpu_run[HOST_MAX_CPUS];
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;
static bool cpu_offline[HOST_MAX_CPUS];
static long cpus_recovered;
static __thread unsigned int cur_cpu;
static __thread bool on_cpu;
/* Interrupts off (CPU lock or node lock held), nesting depth. */
static __thread unsigned int irqs_off;
/* The interrupt at the k-th interruptible shim call. */
static __thread void (*irq_at_fn)(void *);
static __thread void *irq_at_arg;
static __thread unsigned long irq_at_countdown;
static __thread unsigned long irq_points;
/* In a simulated interrupt handler: it cannot migrate. */
static __thread bool in_irq;
static __thread uint64_t rng_state;
static unsigned int migrate_one_in;
static __thread void (*irq_hook)(void *);
static __thread void *irq_hook_arg;
static __thread unsigned int irq_hook_countdown;
static long pages_in_use, bytes_in_use, reports, meta_in_use;
static int fail_pages;
static int fail_above = -1;
/* rslub_host_set_migrate_in_alloc_pages: the CPU to move to, or -1. */
static __thread int alloc_pages_move_to = -1;
/*
 * rslub_host_set_recycle_headers: freed header blocks kept for the next
 * header allocations (last freed first), freed page blocks parked; both
 * under table_lock.
 */
#define RECYCLE_MAX 64
static bool recycle_headers;
static void *recycled_headers[RECYCLE_MAX];
static unsigned int nr_recycled_headers;
static void *parked_pages[RECYCLE_MAX];
static unsigned int nr_parked_pages;
static unsigned int last_page_gfp;
static int memoryless_node = -1;

/* Live page blocks: open addressing on the block base, with its node. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block {
	uintptr_t base;
	int node;
	unsigned int order;
	void *owner;		/* alloc_pages' owner, checked by free_pages */
	unsigned long private;	/* the first struct page's private word */
} table[TABLE_SIZE];

static void init_locks(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	for (int i = 0; i < HOST_MAX_CPUS; i++)
		pthread_mutex_init(&cpu_run[i], &a);
	pthread_mutexattr_destroy(&a);
}

/* Takes cpu's run mutex: see CPU_WAIT_SECONDS. */
static void lock_cpu(unsigned int cpu)
{
	struct timespec until;
	int ret;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CPU_WAIT_SECONDS;
	ret = pthread_mutex_timedlock(&cpu_run[cpu], &until);
	if (ret == EOWNERDEAD) {
		fprintf(stderr, "rslub host: CPU %u was held by a thread that died; released\n",
			cpu);
		pthread_mutex_consistent(&cpu_run[cpu]);
		__atomic_fetch_add(&cpus_recovered, 1, __ATOMIC_RELAXED);
	} else if (ret) {
		fprintf(stderr, "rslub host: CPU %u not released within %d s (%s): a thread is stuck on it; aborting\n",
			cpu, CPU_WAIT_SECONDS, strerror(ret));
		abort();
	}
}

long rslub_host_cpus_recovered(void)
{
	return __atomic_load_n(&cpus_recovered, __ATOMIC_RELAXED);
}

static bool is_online(unsigned int cpu)
{
	return cpu < nr_cpus && !__atomic_load_n(&cpu_offline[cpu], __ATOMIC_RELAXED);
}

/* cpu if it is online, else the next online CPU after it. */
static unsigned int online_from(unsigned int cpu)
{
	for (unsigned int i = 0; i < nr_cpus; i++)
		if (is_online((cpu + i) % nr_cpus))
			return (cpu + i) % nr_cpus;
	abort();	/* every CPU offline */
}

void rslub_host_set_online(unsigned int cpu, bool online)
{
	if (cpu < HOST_MAX_CPUS)
		__atomic_store_n(&cpu_offline[cpu], !online, __ATOMIC_RELAXED);
}

void rslub_host_irqs_disable(void)
{
	irqs_off++;
}

void rslub_host_irqs_enable(void)
{
	if (!irqs_off)
		abort();	/* unbalanced */
	irqs_off--;
}

void rslub_host_set_irq_at_call(void (*fn)(void *), void *arg, unsigned int k)
{
	irq_at_fn = fn;
	irq_at_arg = arg;
	irq_at_countdown = k;
}

bool rslub_host_irq_pending(void)
{
	return irq_at_fn != NULL;
}

unsigned long rslub_host_irq_points(void)
{
	return irq_points;
}

/*
 * Called first thing in every shim function the core uses: where the
 * kernel could take an interrupt (on a CPU, irqs on), count the point and
 * fire the pending interrupt when its turn has come.
 */
static void irq_point(void)
{
	void (*fn)(void *) = irq_at_fn;

	if (!on_cpu || irqs_off)
		return;
	irq_points++;
	if (fn && irq_at_countdown-- == 0) {
		irq_at_fn = NULL;
		in_irq = true;
		fn(irq_at_arg);
		in_irq = false;
	}
}

void rslub_host_configure(unsigned int cpus, unsigned int nodes)
{
	pthread_once(&locks_once, init_locks);
	nr_cpus = cpus > HOST_MAX_CPUS ? HOST_MAX_CPUS : (cpus ? cpus : 1);
	nr_nodes = nodes > HOST_MAX_NODES ? HOST_MAX_NODES : (nodes ? nodes : 1);
}

void rslub_host_enter(unsigned int cpu)
{
	pthread_once(&locks_once, init_locks);
	if (on_cpu) {
		fprintf(stderr, "rslub host: enter CPU %u while on CPU %u\n", cpu, cur_cpu);
		abort();
	}
	cur_cpu = cpu % nr_cpus;
	if (!is_online(cur_cpu)) {
		fprintf(stderr, "rslub host: enter offline CPU %u\n", cur_cpu);
		abort();
	}
	lock_cpu(cur_cpu);
	on_cpu = true;
	irqs_off = 0;
}

void rslub_host_exit(void)
{
	on_cpu = false;
	irqs_off = 0;
	pthread_mutex_unlock(&cpu_run[cur_cpu]);
}

/* Moves to cpu, or the next online CPU after it. */
void rslub_host_yield(unsigned int cpu)
{
	rslub_host_exit();
	rslub_host_enter(online_from(cpu % nr_cpus));
}

unsigned int rslub_host_current_cpu(void)
{
	return cur_cpu;
}

void rslub_host_set_migrate(unsigned int one_in)
{
	__atomic_store_n(&migrate_one_in, one_in, __ATOMIC_RELAXED);
}

static uint64_t rng(void)
{
	if (!rng_state)
		rng_state = (uintptr_t)&rng_state | 1;
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void maybe_migrate(void)
{
	unsigned int n = __atomic_load_n(&migrate_one_in, __ATOMIC_RELAXED);

	if (n && on_cpu && !irqs_off && !in_irq && rng() % n == 0)
		rslub_host_yield(rng() % nr_cpus);
}

long rslub_host_pages_in_use(void)
{
	return __atomic_load_n(&pages_in_use, __ATOMIC_RELAXED);
}

long rslub_host_bytes_in_use(void)
{
	return __atomic_load_n(&bytes_in_use, __ATOMIC_RELAXED);
}

long rslub_host_reports(void)
{
	return __atomic_load_n(&reports, __ATOMIC_RELAXED);
}

void rslub_host_count_report(void)
{
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
}

unsigned int rslub_host_last_page_gfp(void)
{
	return __atomic_load_n(&last_page_gfp, __ATOMIC_RELAXED);
}

void rslub_host_fail_pages(int n)
{
	__atomic_store_n(&fail_pages, n, __ATOMIC_RELAXED);
}

void rslub_host_fail_pages_above(int order)
{
	__atomic_store_n(&fail_above, order, __ATOMIC_RELAXED);
}

void rslub_host_reset(void)
{
	rslub_host_set_migrate(0);
	rslub_host_fail_pages(0);
	rslub_host_fail_pages_above(-1);
	rslub_host_set_memoryless(-1);
	for (unsigned int c = 0; c < HOST_MAX_CPUS; c++)
		rslub_host_set_online(c, true);
	irq_hook = NULL;
	irq_at_fn = NULL;
	alloc_pages_move_to = -1;
	rslub_host_set_recycle_headers(false);
	rslub_host_rcu_grace_period();
}

void rslub_shim_get_consts(struct rslub_shim_consts *c)
{
	memset(c, 0, sizeof(*c));
	c->page_size = HOST_PAGE_SIZE;
	c->page_shift = 12;
	c->cache_line = 64;
	c->numa_no_node = -1;
	c->nr_node_ids = nr_nodes;
	c->nr_cpu_ids = nr_cpus;
	c->gfp_zero = 0x100;
	c->gfp_thisnode = 0x200000;
	c->gfp_nomemalloc = 0x10000;
	c->gfp_light = 0x30000000;
	c->flag_hwcache_align = 0x10;
	c->flag_no_merge = 0x1000;
	c->flag_consistency_checks = 0x100;
	c->flag_red_zone = 0x400;
	c->flag_poison = 0x800;
	c->flag_store_user = 0x10000;
	c->flag_typesafe_by_rcu = 0x80000;
}

/*
 * RCU: callbacks wait on a list until the test ends a grace period
 * (rslub_host_rcu_grace_period) or the core waits for them all
 * (rslub_shim_rcu_barrier). A callback may queue no other. Each entry is
 * the twin's own allocation, as the kernel keeps the callback's state in
 * the slab's struct page: nothing of it lies in the slab.
 */
struct host_rcu_head {
	struct host_rcu_head *next;
	void *base;
	void *cache;
};
static pthread_mutex_t rcu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_rcu_head *rcu_queue;
static long rcu_queued;

void rslub_shim_call_rcu_slab(void *base, void *owner, void *cache)
{
	struct host_rcu_head *h = malloc(sizeof(*h));

	(void)owner;
	if (!h)
		abort();
	irq_point();
	pthread_mutex_lock(&rcu_lock);
	h->base = base;
	h->cache = cache;
	h->next = rcu_queue;
	rcu_queue = h;
	rcu_queued++;
	pthread_mutex_unlock(&rcu_lock);
}

long rslub_host_rcu_grace_period(void)
{
	struct host_rcu_head *h;
	long n;

	pthread_mutex_lock(&rcu_lock);
	h = rcu_queue;
	n = rcu_queued;
	rcu_queue = NULL;
	rcu_queued = 0;
	pthread_mutex_unlock(&rcu_lock);
	while (h) {
		struct host_rcu_head *next = h->next;

		rslub_rust_rcu_free_slab(h->cache, h->base);
		free(h);
		h = next;
	}
	return n;
}

long rslub_host_rcu_queued(void)
{
	long n;

	pthread_mutex_lock(&rcu_lock);
	n = rcu_queued;
	pthread_mutex_unlock(&rcu_lock);
	return n;
}

void rslub_shim_rcu_barrier(void)
{
	rslub_host_rcu_grace_period();
}

bool rslub_shim_has_cmpxchg128(void)
{
	return true;
}

static size_t slot_of(uintptr_t base)
{
	return (base >> 12) * 0x9e3779b97f4a7c15ULL >> (64 - 18);
}

/* Finds base's slot; caller holds table_lock. */
static struct block *lookup(uintptr_t base)
{
	for (size_t i = slot_of(base); table[i].base; i = (i + 1) % TABLE_SIZE)
		if (table[i].base == base)
			return &table[i];
	return NULL;
}

/* Deletes b with backward shift (probe chains stay intact); holds table_lock. */
static void table_delete(struct block *b)
{
	size_t i = b - table, j, k;

	table[i].base = 0;
	for (j = (i + 1) % TABLE_SIZE; table[j].base; j = (j + 1) % TABLE_SIZE) {
		k = slot_of(table[j].base);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			table[i] = table[j];
			table[j].base = 0;
			i = j;
		}
	}
}

/* Adds a block; caller holds table_lock. */
static void table_insert(uintptr_t base, int node, unsigned int order, void *owner)
{
	size_t i;

	for (i = slot_of(base); table[i].base; i = (i + 1) % TABLE_SIZE)
		;
	table[i] = (struct block){ base, node, order, owner, 0 };
}

void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order,
			     void *owner)
{
	size_t bytes = HOST_PAGE_SIZE << order;
	void *p;

	irq_point();
	if (alloc_pages_move_to >= 0 && on_cpu && !irqs_off && !in_irq) {
		unsigned int to = (unsigned int)alloc_pages_move_to;

		alloc_pages_move_to = -1;
		rslub_host_yield(to);
	}
	__atomic_store_n(&last_page_gfp, gfp, __ATOMIC_RELAXED);
	if (__atomic_load_n(&fail_pages, __ATOMIC_RELAXED) > 0 &&
	    __atomic_fetch_sub(&fail_pages, 1, __ATOMIC_RELAXED) > 0)
		return NULL;
	if ((int)order > __atomic_load_n(&fail_above, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&fail_above, __ATOMIC_RELAXED) >= 0)
		return NULL;
	if (posix_memalign(&p, bytes, bytes))
		return NULL;
	if (node < 0 || node >= (int)nr_nodes)
		node = cur_cpu % nr_nodes;
	pthread_mutex_lock(&table_lock);
	table_insert((uintptr_t)p, node, order, owner);
	pthread_mutex_unlock(&table_lock);
	__atomic_fetch_add(&pages_in_use, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bytes_in_use, (long)bytes, __ATOMIC_RELAXED);
	return p;
}

void rslub_shim_free_pages(void *addr, unsigned int order, void *owner)
{
	struct block *b;
	bool parked;

	irq_point();
	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)addr);
	/*
	 * The core freed something it did not allocate, or not so, or left
	 * its header's address in the page (the kernel would keep it).
	 */
	if (!b || b->order != order || b->owner != owner || b->private)
		abort();
	table_delete(b);
	parked = recycle_headers && nr_parked_pages < RECYCLE_MAX;
	if (parked)
		parked_pages[nr_parked_pages++] = addr;
	pthread_mutex_unlock(&table_lock);
	__atomic_fetch_sub(&pages_in_use, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&bytes_in_use, (long)(HOST_PAGE_SIZE << order), __ATOMIC_RELAXED);
	if (!parked)
		free(addr);
}

int rslub_shim_addr_to_node(const void *addr)
{
	struct block *b;
	int node = 0;

	irq_point();
	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)addr);
	if (b)
		node = b->node;
	pthread_mutex_unlock(&table_lock);
	return node;
}

bool rslub_shim_addr_is_direct_mapped(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	bool found = false;

	irq_point();
	pthread_mutex_lock(&table_lock);
	for (unsigned int o = 0; o <= HOST_MAX_ORDER && !found; o++) {
		struct block *b = lookup(a & ~((HOST_PAGE_SIZE << o) - 1));

		found = b && b->order == o;
	}
	pthread_mutex_unlock(&table_lock);
	return found;
}

/* No irq_point: the kernel's is a load, on the free fast path. */
unsigned long rslub_shim_slab_meta(const void *base)
{
	unsigned long word = 0;
	struct block *b;

	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)base);
	if (b)
		word = b->private;
	pthread_mutex_unlock(&table_lock);
	return word;
}

void rslub_shim_set_slab_meta(void *base, unsigned long word)
{
	struct block *b;

	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)base);
	/* Only a block of ours has a page to keep the word in. */
	if (!b)
		abort();
	b->private = word;
	pthread_mutex_unlock(&table_lock);
}

/* The twin's page table is exact: the full check is the same. */
bool rslub_shim_addr_has_page(const void *addr)
{
	return rslub_shim_addr_is_direct_mapped(addr);
}

/* rslub_shim_alloc_meta without its interrupt point. */
static void *meta_alloc(unsigned long size, int node)
{
	void *p;

	if (posix_memalign(&p, 64, size))
		return NULL;
	memset(p, 0, size);
	pthread_mutex_lock(&table_lock);
	table_insert((uintptr_t)p, node, META_ORDER, NULL);
	pthread_mutex_unlock(&table_lock);
	__atomic_fetch_add(&meta_in_use, 1, __ATOMIC_RELAXED);
	return p;
}

void *rslub_shim_alloc_meta(unsigned long size, int node)
{
	irq_point();
	return meta_alloc(size, node);
}

bool rslub_host_meta_is_live(const void *p)
{
	struct block *b;
	bool live;

	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)p);
	live = b && b->order == META_ORDER;
	pthread_mutex_unlock(&table_lock);
	return live;
}

long rslub_host_meta_in_use(void)
{
	return __atomic_load_n(&meta_in_use, __ATOMIC_RELAXED);
}

/*
 * The twin's headers are metadata blocks (meta_addr_valid knows them).
 * With rslub_host_set_recycle_headers on, the last one freed comes back
 * first, as the kernel's header cache would hand it out.
 */
void *rslub_shim_alloc_header(int node, unsigned int gfp)
{
	void *p = NULL;

	(void)gfp;
	irq_point();
	pthread_mutex_lock(&table_lock);
	if (recycle_headers && nr_recycled_headers) {
		p = recycled_headers[--nr_recycled_headers];
		memset(p, 0, RSLUB_HEADER_SIZE);
		table_insert((uintptr_t)p, node, META_ORDER, NULL);
	}
	pthread_mutex_unlock(&table_lock);
	if (!p)
		return meta_alloc(RSLUB_HEADER_SIZE, node);
	__atomic_fetch_add(&meta_in_use, 1, __ATOMIC_RELAXED);
	return p;
}

/*
 * Takes p out of the table of live metadata blocks; with keep, the block
 * is recycled as a header if there is room (returns true) instead of freed.
 */
static bool meta_forget(void *p, bool keep)
{
	struct block *b;
	bool kept;

	pthread_mutex_lock(&table_lock);
	b = lookup((uintptr_t)p);
	/* The core freed metadata it did not allocate. */
	if (!b || b->order != META_ORDER)
		abort();
	table_delete(b);
	kept = keep && recycle_headers && nr_recycled_headers < RECYCLE_MAX;
	if (kept)
		recycled_headers[nr_recycled_headers++] = p;
	pthread_mutex_unlock(&table_lock);
	__atomic_fetch_sub(&meta_in_use, 1, __ATOMIC_RELAXED);
	return kept;
}

void rslub_shim_free_header(void *p)
{
	irq_point();
	if (p && !meta_forget(p, true))
		free(p);
}

void rslub_shim_free_meta(void *p)
{
	irq_point();
	if (p)
		meta_forget(p, false);
	free(p);
}

void rslub_host_set_recycle_headers(bool on)
{
	void *headers[RECYCLE_MAX], *pages[RECYCLE_MAX];
	unsigned int nh, np;

	pthread_mutex_lock(&table_lock);
	recycle_headers = on;
	nh = on ? 0 : nr_recycled_headers;
	np = on ? 0 : nr_parked_pages;
	memcpy(headers, recycled_headers, nh * sizeof(void *));
	memcpy(pages, parked_pages, np * sizeof(void *));
	if (!on) {
		nr_recycled_headers = 0;
		nr_parked_pages = 0;
	}
	pthread_mutex_unlock(&table_lock);
	for (unsigned int i = 0; i < nh; i++)
		free(headers[i]);
	for (unsigned int i = 0; i < np; i++)
		free(pages[i]);
}

void rslub_host_set_migrate_in_alloc_pages(int cpu)
{
	alloc_pages_move_to = cpu;
}

bool rslub_shim_gfp_allows_blocking(unsigned int gfp)
{
	irq_point();
	return gfp & 0x400;	/* __GFP_DIRECT_RECLAIM's value in the kernel */
}

void rslub_host_set_memoryless(int node)
{
	__atomic_store_n(&memoryless_node, node, __ATOMIC_RELAXED);
}

bool rslub_shim_node_has_memory(int node)
{
	irq_point();
	return node >= 0 && node < (int)nr_nodes &&
	       node != __atomic_load_n(&memoryless_node, __ATOMIC_RELAXED);
}

int rslub_shim_numa_node_id(void)
{
	irq_point();
	return cur_cpu % nr_nodes;
}

/* A ring: node + 1 is nearer than node + 2, and so on. */
int rslub_shim_node_distance(int from, int to)
{
	irq_point();
	return from == to ? 10 : 20 + (to - from + (int)nr_nodes) % (int)nr_nodes;
}

bool rslub_shim_cpu_possible(unsigned int cpu)
{
	return cpu < nr_cpus;
}

bool rslub_shim_cpu_online(unsigned int cpu)
{
	irq_point();
	return is_online(cpu);
}

/*
 * A per-CPU area: one fixed-stride block per CPU, so a handle plus an
 * offset (a counter's address) is a handle too, as in the kernel.
 */
unsigned long rslub_shim_alloc_percpu(unsigned long size, unsigned long align)
{
	void *p;

	if (size > HOST_PCPU_STRIDE || align > 64)
		abort();
	if (posix_memalign(&p, 64, HOST_PCPU_STRIDE * HOST_MAX_CPUS))
		return 0;
	memset(p, 0, HOST_PCPU_STRIDE * HOST_MAX_CPUS);
	__atomic_fetch_add(&meta_in_use, 1, __ATOMIC_RELAXED);
	return (unsigned long)p;
}

void rslub_shim_free_percpu(unsigned long pcpu)
{
	if (pcpu)
		__atomic_fetch_sub(&meta_in_use, 1, __ATOMIC_RELAXED);
	free((void *)pcpu);
}

void *rslub_shim_per_cpu_ptr(unsigned long pcpu, unsigned int cpu)
{
	return (char *)pcpu + HOST_PCPU_STRIDE * cpu;
}

/*
 * The fast paths take this pointer, read through it, then cmpxchg: a
 * migration right after taking it is the window to exercise.
 */
void *rslub_shim_this_cpu_ptr(unsigned long pcpu)
{
	void *p;

	irq_point();
	p = rslub_shim_per_cpu_ptr(pcpu, cur_cpu);

	maybe_migrate();
	return p;
}

void rslub_host_set_irq_hook(void (*fn)(void *), void *arg,
			     unsigned int skip)
{
	irq_hook = fn;
	irq_hook_arg = arg;
	irq_hook_countdown = skip;
}

static bool cas128(unsigned long *p, unsigned long o0, unsigned long o1,
		   unsigned long n0, unsigned long n1)
{
	unsigned __int128 old = ((unsigned __int128)o1 << 64) | o0;
	unsigned __int128 new = ((unsigned __int128)n1 << 64) | n0;

	return __sync_bool_compare_and_swap((unsigned __int128 *)p, old, new);
}

bool rslub_shim_this_cpu_cmpxchg_pair(unsigned long pcpu, unsigned long old0,
				      unsigned long old1, unsigned long new0,
				      unsigned long new1)
{
	unsigned long *p;

	irq_point();
	p = rslub_shim_per_cpu_ptr(pcpu, cur_cpu);
	if (irq_hook && irq_hook_countdown-- == 0) {
		void (*fn)(void *) = irq_hook;

		irq_hook = NULL;
		fn(irq_hook_arg);	/* an "interrupt" on this CPU, right here */
	}
	return cas128(p, old0, old1, new0, new1);
}

/* The twin has no lock prefix to add: the same operation. */
bool rslub_shim_this_cpu_cmpxchg_pair_locked(unsigned long pcpu,
					     unsigned long old0,
					     unsigned long old1,
					     unsigned long new0,
					     unsigned long new1)
{
	return rslub_shim_this_cpu_cmpxchg_pair(pcpu, old0, old1, new0, new1);
}

void rslub_shim_this_cpu_inc(unsigned long pcpu)
{
	/* Never a migration point: counters are bumped under the CPU lock too. */
	irq_point();
	__atomic_fetch_add((unsigned long *)rslub_shim_per_cpu_ptr(pcpu, cur_cpu), 1,
			   __ATOMIC_RELAXED);
}

bool rslub_shim_cmpxchg_pair(unsigned long *pair, unsigned long old0,
			     unsigned long old1, unsigned long new0,
			     unsigned long new1)
{
	irq_point();
	return cas128(pair, old0, old1, new0, new1);
}

/* The caller already runs alone on its CPU: nothing to exclude. */
unsigned long rslub_shim_cpu_lock(unsigned int *cpu)
{
	if (!on_cpu)
		abort();	/* allocator used from a thread not on a CPU */
	irq_point();
	rslub_host_irqs_disable();
	if (cpu)
		*cpu = cur_cpu;
	return 0;
}

void rslub_shim_cpu_unlock(unsigned long token)
{
	(void)token;
	rslub_host_irqs_enable();
	irq_point();
}

/*
 * Leaves our CPU, then runs fn on each online CPU in turn while holding it
 * (like the kernel's bound work items under cpus_read_lock).
 */
void rslub_shim_on_each_cpu(void (*fn)(void *info, unsigned int cpu),
			    void *info)
{
	unsigned int home = cur_cpu;
	bool was_on = on_cpu;

	irq_point();
	if (was_on)
		rslub_host_exit();
	pthread_once(&locks_once, init_locks);
	for (unsigned int c = 0; c < nr_cpus; c++) {
		if (!is_online(c))
			continue;
		lock_cpu(c);
		fn(info, c);
		pthread_mutex_unlock(&cpu_run[c]);
	}
	if (was_on)
		rslub_host_enter(home);
}

int rslub_shim_cpuhp_register(void)
{
	return 1;
}

void rslub_shim_cpuhp_unregister(int state)
{
	(void)state;
}

/* No memory pressure on the host: the core's reclaim is tested directly. */
void *rslub_shim_shrinker_register(void)
{
	return NULL;
}

void rslub_shim_shrinker_unregister(void *shrinker)
{
	(void)shrinker;
}

unsigned long rslub_shim_random_long(void)
{
	unsigned long v;

	irq_point();
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = rng() ^ (uintptr_t)&v;
	return v;
}

/* The host core is called directly by tests: the caller is our caller. */
unsigned long rslub_shim_api_caller(void)
{
	return (unsigned long)__builtin_return_address(0);
}

int rslub_shim_current_pid(void)
{
	return (int)gettid();
}

unsigned int rslub_shim_current_cpu(void)
{
	return cur_cpu;
}

/* Threads stand in for CPUs here: nothing to bind (the kernel suite's hook). */
int rslub_shim_pin_current(int cpu)
{
	(void)cpu;
	return -1;
}

static unsigned long host_jiffies;

unsigned long rslub_shim_jiffies(void)
{
	return __atomic_add_fetch(&host_jiffies, 1, __ATOMIC_RELAXED);
}

static const char *host_debug = "";

void rslub_host_set_debug_param(const char *flags)
{
	host_debug = flags ? flags : "";
}

int rslub_shim_debug_param(char *buf, unsigned long size)
{
	if (!size)
		return 0;
	snprintf(buf, size, "%s", host_debug);
	return (int)strlen(buf);
}

int rslub_shim_format_symbol(char *buf, unsigned long size, const void *fn)
{
	return snprintf(buf, size, "%p", fn);
}
