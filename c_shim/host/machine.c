// SPDX-License-Identifier: GPL-2.0
/*
 * The host machine as a whole, for host tests of the core: its shape
 * (rslub_host_configure), the reset between tests, the constants the core
 * reads, and the kernel services that are neither CPUs (cpus.c) nor
 * memory (memory.c): RCU grace periods, the shrinker, random numbers, the
 * caller, time, the debug parameter and reports. Together the three files
 * implement c_shim/shim.h in userspace, as the kernel shim does in the
 * module; hooks.h is what tests drive them with.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../shim.h"
#include "hooks.h"
#include "machine.h"

unsigned int host_nr_cpus = 4, host_nr_nodes = 2;
static long reports;

void rslub_host_configure(unsigned int cpus, unsigned int nodes)
{
	host_cpus_init();
	host_nr_cpus = cpus > HOST_MAX_CPUS ? HOST_MAX_CPUS : (cpus ? cpus : 1);
	host_nr_nodes = nodes > HOST_MAX_NODES ? HOST_MAX_NODES : (nodes ? nodes : 1);
}

long rslub_host_reports(void)
{
	return __atomic_load_n(&reports, __ATOMIC_RELAXED);
}

void rslub_host_count_report(void)
{
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
}

void rslub_host_reset(void)
{
	rslub_host_set_migrate(0);
	rslub_host_fail_pages(0);
	rslub_host_fail_pages_above(-1);
	rslub_host_set_memoryless(-1);
	for (unsigned int c = 0; c < HOST_MAX_CPUS; c++)
		rslub_host_set_online(c, true);
	rslub_host_set_irq_hook(NULL, NULL, 0);
	rslub_host_set_irq_at_call(NULL, NULL, 0);
	rslub_host_set_migrate_in_alloc_pages(-1);
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
	c->nr_node_ids = host_nr_nodes;
	c->nr_cpu_ids = host_nr_cpus;
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
	host_irq_point();
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

	host_irq_point();
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = host_rng() ^ (uintptr_t)&v;
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
