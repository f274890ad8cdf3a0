// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel implementation of c_shim/shim.h, the cold part: pages, RCU,
 * metadata blocks, per-CPU allocation and work, topology, CPU hotplug, the
 * shrinker, the debug= parameter and small services of the running task.
 * The functions the fast paths call are in shim_hot.c, the sysfs
 * directories in sysfs.c, and serving the kernel's caches (the slab
 * backend's ops) in backend.c. No allocator policy lives here.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/jump_label.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/nodemask.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/sprintf.h>
#include <linux/topology.h>
#include <linux/workqueue.h>
#include <asm/cpufeature.h>

#include "shim.h"
#include "shim_internal.h"
#include "../include/rslub.h"

void rslub_shim_get_consts(struct rslub_shim_consts *c)
{
	c->page_size = PAGE_SIZE;
	c->page_shift = PAGE_SHIFT;
	c->cache_line = cache_line_size();
	c->numa_no_node = NUMA_NO_NODE;
	c->nr_node_ids = nr_node_ids;
	c->nr_cpu_ids = nr_cpu_ids;
	c->gfp_zero = (__force unsigned int)__GFP_ZERO;
	c->gfp_thisnode = (__force unsigned int)__GFP_THISNODE;
	c->gfp_nomemalloc = (__force unsigned int)__GFP_NOMEMALLOC;
	c->gfp_light = (__force unsigned int)(__GFP_NORETRY | __GFP_NOWARN);
	c->flag_hwcache_align = (__force unsigned int)SLAB_HWCACHE_ALIGN;
	c->flag_no_merge = (__force unsigned int)SLAB_NO_MERGE;
	c->flag_consistency_checks = (__force unsigned int)SLAB_CONSISTENCY_CHECKS;
	c->flag_red_zone = (__force unsigned int)SLAB_RED_ZONE;
	c->flag_poison = (__force unsigned int)SLAB_POISON;
	c->flag_store_user = (__force unsigned int)SLAB_STORE_USER;
	c->flag_typesafe_by_rcu = (__force unsigned int)SLAB_TYPESAFE_BY_RCU;
}

bool rslub_shim_has_cmpxchg128(void)
{
	return system_has_cmpxchg128();
}

/* Slab pages held from the page allocator, for rslub_pages_allocated(). */
static atomic_long_t rslub_pages = ATOMIC_LONG_INIT(0);

void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order,
			     void *owner)
{
	struct page *page;

#ifdef CONFIG_SLAB_BACKEND
	/* A served slab: the kernel's page policy for owner, and its mark. */
	if (owner)
		page = rslub_backend_alloc_slab(owner, (__force gfp_t)gfp, node,
						order);
	else
#endif
		page = alloc_pages_node(node, (__force gfp_t)gfp, order);
	if (!page)
		return NULL;
	atomic_long_add(1L << order, &rslub_pages);
	return page_address(page);
}

void rslub_shim_free_pages(void *addr, unsigned int order, void *owner)
{
	atomic_long_sub(1L << order, &rslub_pages);
#ifdef CONFIG_SLAB_BACKEND
	if (owner) {
		rslub_backend_free_slab(virt_to_page(addr));
		return;
	}
#endif
	free_pages((unsigned long)addr, order);
}

/*
 * A dead slab waiting for its grace period: the rcu_head and the cache
 * live in the block's struct page, where an overflow of the slab cannot
 * reach them. A served slab is a slab page of the kernel's, whose struct
 * slab the kernel lends for this (slab_backend_call_rcu()); rslub's own
 * block is an ordinary page whose owner may use its rcu_head, and whose
 * index word is free (private may name the slab's header).
 */
static void rslub_rcu_free_page(struct rcu_head *head)
{
	struct page *page = container_of(head, struct page, rcu_head);
	void *cache = (void *)page->__folio_index;

	page->__folio_index = 0;
	rslub_rust_rcu_free_slab(cache, page_address(page));
}

void rslub_shim_call_rcu_slab(void *base, void *owner, void *cache)
{
	struct page *page = virt_to_page(base);

#ifdef CONFIG_SLAB_BACKEND
	if (owner) {
		rslub_backend_call_rcu(page, cache);
		return;
	}
#endif
	page->__folio_index = (unsigned long)cache;
	call_rcu(&page->rcu_head, rslub_rcu_free_page);
}

void rslub_shim_rcu_barrier(void)
{
	rcu_barrier();
}

long rslub_shim_pages_held(void)
{
	return atomic_long_read(&rslub_pages);
}

/*
 * A slab header kept outside its slab: a kmalloc block (64 bytes, so
 * naturally aligned), with the page allocation's flags less those of pages
 * only. While kmalloc-64 is served by rslub it comes from there: one level
 * deeper, never further (served caches keep their headers in their slabs).
 */
void *rslub_shim_alloc_header(int node, unsigned int gfp)
{
	gfp_t flags = (__force gfp_t)gfp & ~(__GFP_ZERO | __GFP_COMP | GFP_ZONEMASK);

	return kmalloc_node(RSLUB_HEADER_SIZE, flags, node);
}

void rslub_shim_free_header(void *p)
{
	kfree(p);
}

void *rslub_shim_alloc_meta(unsigned long size, int node)
{
	return kzalloc_node(size, GFP_KERNEL, node);
}

void rslub_shim_free_meta(void *p)
{
	kfree(p);
}

bool rslub_shim_addr_has_page(const void *addr)
{
	return virt_addr_valid(addr);
}

bool rslub_shim_read_word_nofault(const void *src, unsigned long *word)
{
	return !copy_from_kernel_nofault(word, src, sizeof(*word));
}

bool rslub_shim_node_has_memory(int node)
{
	return node >= 0 && node < nr_node_ids && node_state(node, N_MEMORY);
}

int rslub_shim_node_distance(int from, int to)
{
	return node_distance(from, to);
}

bool rslub_shim_cpu_possible(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_possible(cpu);
}

unsigned long rslub_shim_alloc_percpu(unsigned long size, unsigned long align)
{
	return (unsigned long)__alloc_percpu(size, align);
}

void rslub_shim_free_percpu(unsigned long pcpu)
{
	free_percpu((void __percpu *)pcpu);
}

struct each_cpu_work {
	struct work_struct work;
	void (*fn)(void *info, unsigned int cpu);
	void *info;
};

static void each_cpu_work_fn(struct work_struct *w)
{
	struct each_cpu_work *ew = container_of(w, struct each_cpu_work, work);
	unsigned long flags;

	/* A bound worker: it runs on the CPU it was queued on. */
	local_irq_save(flags);
	ew->fn(ew->info, smp_processor_id());
	local_irq_restore(flags);
}

/* One work item per CPU, reused by every caller under the mutex. */
static DEFINE_PER_CPU(struct each_cpu_work, each_cpu_works);
static DEFINE_MUTEX(each_cpu_mutex);

/*
 * Like upstream SLUB's flush_all: per-CPU work items rather than IPIs, so
 * the callback may take spinlock_t locks (not allowed from IPI context
 * under PREEMPT_RT, which lockdep checks). The items are static, so a
 * flush (from the shrinker, say) never allocates.
 */
void rslub_shim_on_each_cpu(void (*fn)(void *info, unsigned int cpu),
			    void *info)
{
	struct each_cpu_work *ew;
	unsigned int cpu;

	cpus_read_lock();
	mutex_lock(&each_cpu_mutex);
	for_each_online_cpu(cpu) {
		ew = per_cpu_ptr(&each_cpu_works, cpu);
		ew->fn = fn;
		ew->info = info;
		INIT_WORK(&ew->work, each_cpu_work_fn);
		queue_work_on(cpu, system_percpu_wq, &ew->work);
	}
	for_each_online_cpu(cpu)
		flush_work(&per_cpu_ptr(&each_cpu_works, cpu)->work);
	mutex_unlock(&each_cpu_mutex);
	cpus_read_unlock();
}

static int rslub_cpu_dead(unsigned int cpu)
{
	rslub_rust_cpu_dead(cpu);
	return 0;
}

int rslub_shim_cpuhp_register(void)
{
	return cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "mm/rslub:dead",
					 NULL, rslub_cpu_dead);
}

void rslub_shim_cpuhp_unregister(int state)
{
	cpuhp_remove_state_nocalls(state);
}

static unsigned long rslub_shrink_count(struct shrinker *sh,
					struct shrink_control *sc)
{
	return rslub_rust_shrink_count(sc->nid) ?: SHRINK_EMPTY;
}

static unsigned long rslub_shrink_scan(struct shrinker *sh,
				       struct shrink_control *sc)
{
	unsigned long freed = rslub_rust_shrink_scan(sc->nid, sc->nr_to_scan);

	BUILD_BUG_ON(RSLUB_SHRINK_STOP != SHRINK_STOP);
	return freed;
}

void *rslub_shim_shrinker_register(void)
{
	struct shrinker *sh;

	sh = shrinker_alloc(SHRINKER_NUMA_AWARE, "rslub-empty-slabs");
	if (!sh)
		return NULL;
	sh->count_objects = rslub_shrink_count;
	sh->scan_objects = rslub_shrink_scan;
	/*
	 * An empty slab costs one page allocation to make again and no I/O:
	 * seeks = 0 makes reclaim ask for half of them at every pass, as for
	 * other caches that are free to rebuild.
	 */
	sh->seeks = 0;
	shrinker_register(sh);
	return sh;
}

void rslub_shim_shrinker_unregister(void *shrinker)
{
	shrinker_free(shrinker);
}

int rslub_shim_format_symbol(char *buf, unsigned long size, const void *fn)
{
	return scnprintf(buf, size, "%pS", fn);
}

unsigned long rslub_shim_random_long(void)
{
	return get_random_long();
}

unsigned long rslub_shim_api_caller(void)
{
	unsigned long entries[24];
	unsigned int n, i;
	bool inside = false;

	n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);
	for (i = 0; i < n; i++) {
		bool ours = within_module(entries[i], THIS_MODULE);

		if (ours)
			inside = true;
		else if (inside)
			return entries[i];
	}
	return 0;
}

int rslub_shim_current_pid(void)
{
	return task_pid_nr(current);
}

unsigned int rslub_shim_current_cpu(void)
{
	return raw_smp_processor_id();
}

unsigned long rslub_shim_jiffies(void)
{
	return jiffies;
}

#if IS_ENABLED(CONFIG_KUNIT)
/* For the module's own KUnit suite (rust/selftest.rs) only. */
int rslub_shim_pin_current(int cpu)
{
	if (cpu < 0)
		return set_cpus_allowed_ptr(current, cpu_possible_mask);
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	return set_cpus_allowed_ptr(current, cpumask_of(cpu));
}
#endif

/*
 * slub_debug-style flag letters for every new cache: F (consistency
 * checks), Z (red zones), P (poisoning), U (owner tracking); "-" or empty
 * for none. A charp parameter, which the Rust module! macro cannot declare.
 */
static char *debug_flags;
module_param_named(debug, debug_flags, charp, 0444);
MODULE_PARM_DESC(debug, "Debug features of every new cache, slub_debug letters F,Z,P,U (\"-\": none)");

int rslub_shim_debug_param(char *buf, unsigned long size)
{
	if (!size)
		return 0;
	return strscpy(buf, debug_flags ? debug_flags : "", size) < 0 ?
	       (int)size - 1 : (int)strlen(buf);
}

bool rslub_shim_module_tryget(void)
{
	return try_module_get(THIS_MODULE);
}

void rslub_shim_module_put(void)
{
	module_put(THIS_MODULE);
}

bool rslub_shim_want_init_on_free(void)
{
	return want_init_on_free();
}

