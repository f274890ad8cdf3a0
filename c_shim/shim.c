// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel implementation of c_shim/shim.h, the cold part: pages, per-CPU
 * allocation, topology, CPU hotplug, sysfs plumbing, module parameters.
 * The functions the fast paths call are in shim_hot.c. No allocator policy
 * lives here.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/jump_label.h>
#include <linux/kobject.h>
#include <linux/jiffies.h>
#include <linux/delay.h>
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
#ifdef CONFIG_SLAB_BACKEND
#include <linux/slab_backend.h>
#endif
#include <linux/smp.h>
#include <linux/sprintf.h>
#include <linux/sysfs.h>
#include <linux/topology.h>
#include <linux/workqueue.h>
#include <asm/cpufeature.h>

#include "shim.h"
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

#ifdef CONFIG_SLAB_BACKEND
static const struct slab_backend_ops rslub_backend_ops;
#endif

/* Slab pages held from the page allocator, for rslub_pages_allocated(). */
static atomic_long_t rslub_pages = ATOMIC_LONG_INIT(0);

void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order,
			     void *owner)
{
	struct page *page;

#ifdef CONFIG_SLAB_BACKEND
	/* A served slab: the kernel's page policy for owner, and its mark. */
	if (owner)
		page = slab_backend_alloc_slab(&rslub_backend_ops, owner,
					       (__force gfp_t)gfp, node, order);
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
		slab_backend_free_slab(&rslub_backend_ops, virt_to_page(addr));
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

#ifdef CONFIG_SLAB_BACKEND
static void rslub_rcu_free_served(struct rcu_head *head)
{
	void *cache;
	struct page *page = slab_backend_rcu_page(head, &cache);

	rslub_rust_rcu_free_slab(cache, page_address(page));
}
#endif

void rslub_shim_call_rcu_slab(void *base, void *owner, void *cache)
{
	struct page *page = virt_to_page(base);

#ifdef CONFIG_SLAB_BACKEND
	if (owner) {
		slab_backend_call_rcu(page, cache, rslub_rcu_free_served);
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

struct rslub_attr {
	struct kobj_attribute ka;
	unsigned int index;
};

#define RSLUB_ROOT_ATTRS 8

struct rslub_root {
	struct kobject *kobj;
	struct rslub_attr attrs[RSLUB_ROOT_ATTRS];
	struct attribute *ptrs[RSLUB_ROOT_ATTRS + 1];
	struct attribute_group group;
};

static ssize_t rslub_root_show(struct kobject *kobj, struct kobj_attribute *ka,
			       char *buf)
{
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_root_show(a->index, buf);
}

static ssize_t rslub_serve_show(struct kobject *kobj, struct kobj_attribute *ka,
				char *buf)
{
	return rslub_rust_serve_show(buf);
}

static ssize_t rslub_serve_store(struct kobject *kobj, struct kobj_attribute *ka,
				 const char *buf, size_t len)
{
	return rslub_rust_serve_store(buf, len);
}

static ssize_t rslub_serve_refused_show(struct kobject *kobj,
					struct kobj_attribute *ka, char *buf)
{
	return rslub_rust_serve_refused_show(buf);
}

void *rslub_shim_sysfs_root_create(const char *const *names, unsigned int n)
{
	struct rslub_root *r;
	unsigned int i;

	/* n read-only defaults, then "serve" and "serve_refused". */
	if (n + 2 > RSLUB_ROOT_ATTRS)
		return NULL;
	r = kzalloc_obj(*r);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		sysfs_attr_init(&r->attrs[i].ka.attr);
		r->attrs[i].ka.attr.name = names[i];
		r->attrs[i].ka.attr.mode = 0444;
		r->attrs[i].ka.show = rslub_root_show;
		r->attrs[i].index = i;
		r->ptrs[i] = &r->attrs[i].ka.attr;
	}
	sysfs_attr_init(&r->attrs[n].ka.attr);
	r->attrs[n].ka.attr.name = "serve";
	r->attrs[n].ka.attr.mode = 0644;
	r->attrs[n].ka.show = rslub_serve_show;
	r->attrs[n].ka.store = rslub_serve_store;
	r->ptrs[n] = &r->attrs[n].ka.attr;
	/*
	 * serve_refused walks every kernel cache under slab_mutex: root's
	 * alone, as /proc/slabinfo is.
	 */
	sysfs_attr_init(&r->attrs[n + 1].ka.attr);
	r->attrs[n + 1].ka.attr.name = "serve_refused";
	r->attrs[n + 1].ka.attr.mode = 0400;
	r->attrs[n + 1].ka.show = rslub_serve_refused_show;
	r->ptrs[n + 1] = &r->attrs[n + 1].ka.attr;
	r->group.attrs = r->ptrs;
	r->kobj = kobject_create_and_add("rslub", kernel_kobj);
	if (!r->kobj)
		goto free;
	if (sysfs_create_group(r->kobj, &r->group))
		goto put;
	return r;
put:
	kobject_put(r->kobj);
free:
	kfree(r);
	return NULL;
}

void rslub_shim_sysfs_root_destroy(void *root)
{
	struct rslub_root *r = root;

	sysfs_remove_group(r->kobj, &r->group);
	kobject_put(r->kobj);
	kfree(r);
}

struct rslub_dir {
	struct kobject kobj;
	void *cache;
	unsigned int n;
	struct attribute **ptrs;	/* n + 1, NULL-terminated */
	struct attribute_group group;
	struct rslub_attr attrs[];
};

static void rslub_dir_release(struct kobject *kobj)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);

	kfree(d->ptrs);
	kfree(d);
}

static const struct kobj_type rslub_dir_type = {
	.release = rslub_dir_release,
	.sysfs_ops = &kobj_sysfs_ops,
};

static ssize_t rslub_attr_show(struct kobject *kobj, struct kobj_attribute *ka,
			       char *buf)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_show(d->cache, a->index, buf);
}

static ssize_t rslub_attr_store(struct kobject *kobj, struct kobj_attribute *ka,
				const char *buf, size_t len)
{
	struct rslub_dir *d = container_of(kobj, struct rslub_dir, kobj);
	struct rslub_attr *a = container_of(ka, struct rslub_attr, ka);

	return rslub_rust_sysfs_store(d->cache, a->index, buf, len);
}

void *rslub_shim_sysfs_cache_add(void *root_handle, const char *name, void *cache,
				 const char *const *names,
				 const unsigned short *modes, unsigned int n)
{
	struct rslub_dir *d;
	unsigned int i;

	d = kzalloc(struct_size(d, attrs, n), GFP_KERNEL);
	if (!d)
		return NULL;
	d->ptrs = kcalloc(n + 1, sizeof(*d->ptrs), GFP_KERNEL);
	if (!d->ptrs) {
		kfree(d);
		return NULL;
	}
	d->cache = cache;
	d->n = n;
	for (i = 0; i < n; i++) {
		struct rslub_attr *a = &d->attrs[i];

		sysfs_attr_init(&a->ka.attr);
		a->ka.attr.name = names[i];
		a->ka.attr.mode = modes[i];
		a->ka.show = (modes[i] & 0444) ? rslub_attr_show : NULL;
		a->ka.store = (modes[i] & 0222) ? rslub_attr_store : NULL;
		a->index = i;
		d->ptrs[i] = &a->ka.attr;
	}
	d->group.attrs = d->ptrs;
	if (kobject_init_and_add(&d->kobj, &rslub_dir_type,
				 ((struct rslub_root *)root_handle)->kobj, "%s", name))
		goto put;
	if (sysfs_create_group(&d->kobj, &d->group)) {
		kobject_del(&d->kobj);
		goto put;
	}
	kobject_uevent(&d->kobj, KOBJ_ADD);
	return d;
put:
	kobject_put(&d->kobj);
	return NULL;
}

void rslub_shim_sysfs_cache_remove(void *dir)
{
	struct rslub_dir *d = dir;

	if (!d)
		return;
	kobject_del(&d->kobj);
	kobject_put(&d->kobj);
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

/*
 * Serving the kernel's own caches (rust/serve/ decides; the kernel's
 * hook is patches/, include/linux/slab_backend.h).
 */
static char *serve_patterns;
module_param_named(serve, serve_patterns, charp, 0444);
MODULE_PARM_DESC(serve, "Kernel caches to serve from load: comma-separated names or shell globs, e.g. kmalloc-*,skbuff_head_cache (needs CONFIG_SLAB_BACKEND)");

int rslub_shim_serve_param(char *buf, unsigned long size)
{
	if (!size)
		return 0;
	return strscpy(buf, serve_patterns ? serve_patterns : "", size) < 0 ?
	       (int)size - 1 : (int)strlen(buf);
}

#if IS_ENABLED(CONFIG_KUNIT)
/* Test-only: where a serve request races with a destroy or an unload. */
static unsigned int serve_pause_ms;
module_param(serve_pause_ms, uint, 0644);
MODULE_PARM_DESC(serve_pause_ms, "Test only: a serve request pauses this long between listing and serving, and unload before unregistering");

static DEFINE_MUTEX(serve_pause_lock);
static void (*serve_pause_fn)(void *arg);
static void *serve_pause_arg;

void rslub_test_set_serve_pause(void (*fn)(void *arg), void *arg)
{
	mutex_lock(&serve_pause_lock);
	serve_pause_fn = fn;
	serve_pause_arg = arg;
	mutex_unlock(&serve_pause_lock);
}
EXPORT_SYMBOL_GPL(rslub_test_set_serve_pause);

void rslub_shim_serve_pause(bool at_exit)
{
	unsigned int ms = READ_ONCE(serve_pause_ms);

	mutex_lock(&serve_pause_lock);
	if (serve_pause_fn) {
		if (!at_exit)
			serve_pause_fn(serve_pause_arg);
		ms = 0;
	}
	mutex_unlock(&serve_pause_lock);
	if (ms) {
		pr_info("rslub: serve_pause_ms: pausing %u ms %s\n", ms,
			at_exit ? "before unregistering" : "before serving");
		msleep(ms);
	}
}
#else
void rslub_shim_serve_pause(bool at_exit)
{
}
#endif

bool rslub_shim_module_tryget(void)
{
	return try_module_get(THIS_MODULE);
}

void rslub_shim_module_put(void)
{
	module_put(THIS_MODULE);
}

static void rslub_reap_fn(struct work_struct *work)
{
	rslub_rust_serve_reap();
}

static DECLARE_DELAYED_WORK(rslub_reap_work, rslub_reap_fn);

void rslub_shim_reap_schedule(unsigned int ms)
{
	queue_delayed_work(system_dfl_wq, &rslub_reap_work, msecs_to_jiffies(ms));
}

void rslub_shim_reap_cancel(void)
{
	cancel_delayed_work_sync(&rslub_reap_work);
}

bool rslub_shim_want_init_on_free(void)
{
	return want_init_on_free();
}

#ifdef CONFIG_SLAB_BACKEND
static void *rslub_backend_object_start(struct kmem_cache *s, void *cache,
					void *base, const void *ptr)
{
	return rslub_rust_served_object_start(cache, base, ptr);
}

static int rslub_backend_cache_destroy(struct kmem_cache *s, void *cache)
{
	return rslub_rust_served_destroy(s);
}

/*
 * Called through the ops pointer, so with the kernel's own types: a
 * kernel with kCFI checks the callee's type at an indirect call.
 */
static unsigned int rslub_backend_alloc_bulk(struct kmem_cache *s, void *cache,
					     gfp_t gfp, unsigned int nr, void **p)
{
	return rslub_rust_served_alloc_bulk(s, cache, (__force unsigned int)gfp,
					    nr, p);
}

static void rslub_backend_free_bulk(struct kmem_cache *s, void *cache,
				    unsigned int nr, void **p)
{
	rslub_rust_served_free_bulk(s, cache, nr, p);
}

/*
 * The hot operations are rslub's Rust functions themselves (shim.h): the
 * kernel calls them through static calls, direct calls with no type check.
 */
static const struct slab_backend_ops rslub_backend_ops = {
	.alloc = rslub_rust_served_alloc,
	.alloc_bulk = rslub_backend_alloc_bulk,
	.free = rslub_rust_served_free,
	.free_bulk = rslub_backend_free_bulk,
	.object_start = rslub_backend_object_start,
	.cache_destroy = rslub_backend_cache_destroy,
};

int rslub_shim_backend_register(void)
{
	return slab_backend_register(&rslub_backend_ops);
}

void rslub_shim_backend_unregister(void)
{
	slab_backend_unregister(&rslub_backend_ops);
}

static int rslub_candidate(struct kmem_cache *s,
			   const struct slab_backend_cache_info *info, void *arg)
{
	return rslub_rust_serve_candidate(arg, s, info->id, info->name,
					  info->object_size,
					  info->align, (__force unsigned int)info->flags,
					  info->ctor, info->freeptr_offset,
					  info->useroffset,
					  info->usersize, info->refused);
}

int rslub_shim_backend_list(void *arg)
{
	return slab_backend_list_caches(rslub_candidate, arg);
}

int rslub_shim_backend_serve(void *s, unsigned long long id, void *cache)
{
	return slab_backend_serve(s, id, cache);
}

void rslub_shim_backend_unserve(void *s)
{
	slab_backend_unserve(s);
}

void rslub_shim_backend_drained(void *s)
{
	slab_backend_drained(s);
}
#else
int rslub_shim_backend_register(void)
{
	return -EOPNOTSUPP;
}

void rslub_shim_backend_unregister(void)
{
}

int rslub_shim_backend_list(void *arg)
{
	return -EOPNOTSUPP;
}

int rslub_shim_backend_serve(void *s, unsigned long long id, void *cache)
{
	return -EOPNOTSUPP;
}

void rslub_shim_backend_unserve(void *s)
{
}

void rslub_shim_backend_drained(void *s)
{
}

#endif
