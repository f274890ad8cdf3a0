// SPDX-License-Identifier: GPL-2.0
/*
 * The host machine's memory, for host tests of the core: page blocks
 * (posix_memalign, naturally aligned, kept in a table with their node,
 * order, owner and the first struct page's private word), metadata blocks
 * and slab headers (with recycling, to make stale header pointers land on
 * live memory), per-CPU areas, the NUMA nodes, and the failures a test
 * injects: failing pages, a memoryless node, a migration while the task
 * waits for pages.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "../shim.h"
#include "hooks.h"
#include "machine.h"

#define TABLE_SIZE (1 << 18)
/* The order recorded for an alloc_meta block (beyond any page order). */
#define META_ORDER 0xffffu

static long pages_in_use, bytes_in_use, meta_in_use;
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

long rslub_host_pages_in_use(void)
{
	return __atomic_load_n(&pages_in_use, __ATOMIC_RELAXED);
}

long rslub_host_bytes_in_use(void)
{
	return __atomic_load_n(&bytes_in_use, __ATOMIC_RELAXED);
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

	host_irq_point();
	if (alloc_pages_move_to >= 0 && host_may_sleep()) {
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
	if (node < 0 || node >= (int)host_nr_nodes)
		node = host_cpu() % host_nr_nodes;
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

	host_irq_point();
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

	host_irq_point();
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

	host_irq_point();
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
	host_irq_point();
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
	host_irq_point();
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
	host_irq_point();
	if (p && !meta_forget(p, true))
		free(p);
}

void rslub_shim_free_meta(void *p)
{
	host_irq_point();
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
	host_irq_point();
	return gfp & 0x400;	/* __GFP_DIRECT_RECLAIM's value in the kernel */
}

void rslub_host_set_memoryless(int node)
{
	__atomic_store_n(&memoryless_node, node, __ATOMIC_RELAXED);
}

bool rslub_shim_node_has_memory(int node)
{
	host_irq_point();
	return node >= 0 && node < (int)host_nr_nodes &&
	       node != __atomic_load_n(&memoryless_node, __ATOMIC_RELAXED);
}

int rslub_shim_numa_node_id(void)
{
	host_irq_point();
	return host_cpu() % host_nr_nodes;
}

/* A ring: node + 1 is nearer than node + 2, and so on. */
int rslub_shim_node_distance(int from, int to)
{
	host_irq_point();
	return from == to ? 10 : 20 + (to - from + (int)host_nr_nodes) % (int)host_nr_nodes;
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
