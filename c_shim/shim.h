/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C shim's interface to rslub's Rust code. bindgen reads this header to
 * generate the Rust declarations (rust/shim_bindings.rs in the module,
 * OUT_DIR in the host crate), so it is kept self-contained: plain C types
 * only, no kernel headers.
 *
 * Two implementations: c_shim/ (kernel: shim.c, shim_hot.c, sysfs.c,
 * backend.c) and c_shim/host/ (the host machine for host tests, threads
 * standing in for CPUs).
 *
 * The shim holds what Rust cannot express from a module: the per-CPU
 * cmpxchg16b and this_cpu operations, and static inline kernel helpers
 * (page_address, numa_node_id, local_irq_save, ...). It makes no allocator
 * decisions.
 */
#ifndef RSLUB_SHIM_H
#define RSLUB_SHIM_H

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#include "../include/rslub_limits.h"

/* Bytes of a slab header (the core's HEADER_SIZE; both Rust builds assert it). */
#define RSLUB_HEADER_SIZE 64

/* Kernel constants the Rust side needs, read once at module load. */
struct rslub_shim_consts {
	unsigned long page_size;
	unsigned int page_shift;
	unsigned int cache_line;
	int numa_no_node;
	int nr_node_ids;
	unsigned int nr_cpu_ids;
	unsigned int gfp_zero;
	unsigned int gfp_thisnode;
	unsigned int gfp_nomemalloc;
	unsigned int gfp_light;		/* __GFP_NORETRY | __GFP_NOWARN */
	unsigned int flag_hwcache_align;
	unsigned int flag_no_merge;
	/* Debug flags (SLAB_*); 0 where the kernel compiles them out. */
	unsigned int flag_consistency_checks;
	unsigned int flag_red_zone;
	unsigned int flag_poison;
	unsigned int flag_store_user;
	/* SLAB_TYPESAFE_BY_RCU: a slab's pages wait a grace period. */
	unsigned int flag_typesafe_by_rcu;
};

void rslub_shim_get_consts(struct rslub_shim_consts *c);

/* True when the CPU has cmpxchg16b (the allocator's fast path needs it). */
bool rslub_shim_has_cmpxchg128(void);

/* --- pages and bookkeeping memory --- */

/*
 * 2^order naturally aligned pages from node (negative: local), or NULL.
 * owner: NULL, or the kmem_cache a served cache's slabs belong to (a
 * compound page, a slab page of owner, taken as the kernel takes its own
 * slab pages for owner but without retrying or reserves; see "serving"
 * below).
 */
void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order,
			     void *owner);
void rslub_shim_free_pages(void *addr, unsigned int order, void *owner);
/* Slab pages currently held from the page allocator, over all caches. */
long rslub_shim_pages_held(void);
/* Node of the memory at addr (a slab address). */
int rslub_shim_addr_to_node(const void *addr);
/*
 * The private word of the struct page of base (a direct-mapped slab start):
 * where a slab whose header is outside it keeps the header's address. Any
 * value for a page that is not such a slab's (only checked by the caller).
 */
unsigned long rslub_shim_slab_meta(const void *base);
/* Sets that word, of a block from rslub_shim_alloc_pages (0 before freeing). */
void rslub_shim_set_slab_meta(void *base, unsigned long word);
/*
 * One block for a slab header kept outside its slab (RSLUB_HEADER_SIZE
 * bytes, naturally aligned), on node (or any), with the gfp of the slab's
 * pages; NULL on failure.
 */
void *rslub_shim_alloc_header(int node, unsigned int gfp);
void rslub_shim_free_header(void *p);
/*
 * True when addr may be aligned down to a slab start and read: a cheap
 * range check (the kernel's direct map of RAM, below high_memory), inlined
 * into the free fast path.
 */
bool rslub_shim_addr_is_direct_mapped(const void *addr);
/* The full check (virt_addr_valid: a struct page backs addr): debug caches. */
bool rslub_shim_addr_has_page(const void *addr);
/* Copies the word at src to *word; false (nothing read) if it would fault. */
bool rslub_shim_read_word_nofault(const void *src, unsigned long *word);
/* Zeroed memory for the allocator's own structures, preferably on node. */
void *rslub_shim_alloc_meta(unsigned long size, int node);
void rslub_shim_free_meta(void *p);
bool rslub_shim_gfp_allows_blocking(unsigned int gfp);

/* --- topology --- */

bool rslub_shim_node_has_memory(int node);
int rslub_shim_numa_node_id(void);
/* NUMA distance from node to node (10: itself); the order is Rust's. */
int rslub_shim_node_distance(int from, int to);
bool rslub_shim_cpu_possible(unsigned int cpu);
bool rslub_shim_cpu_online(unsigned int cpu);

/* --- per-CPU data; a handle is a __percpu pointer in the kernel --- */

unsigned long rslub_shim_alloc_percpu(unsigned long size, unsigned long align);
void rslub_shim_free_percpu(unsigned long pcpu);
void *rslub_shim_per_cpu_ptr(unsigned long pcpu, unsigned int cpu);
/* This CPU's instance (raw_cpu_ptr); the caller may migrate right after. */
void *rslub_shim_this_cpu_ptr(unsigned long pcpu);
/* cmpxchg16b on this CPU's pair at pcpu, no lock prefix ("cmpxchg_local"). */
bool rslub_shim_this_cpu_cmpxchg_pair(unsigned long pcpu, unsigned long old0,
				      unsigned long old1, unsigned long new0,
				      unsigned long new1);
/* The same with a lock prefix (the bench's "cmpxchg" experiment). */
bool rslub_shim_this_cpu_cmpxchg_pair_locked(unsigned long pcpu,
					     unsigned long old0,
					     unsigned long old1,
					     unsigned long new0,
					     unsigned long new1);
/* this_cpu_inc of the unsigned long at pcpu. */
void rslub_shim_this_cpu_inc(unsigned long pcpu);
/* Locked cmpxchg16b on ordinary memory; pair is 16-byte aligned. */
bool rslub_shim_cmpxchg_pair(unsigned long *pair, unsigned long old0,
			     unsigned long old1, unsigned long new0,
			     unsigned long new1);

/* --- the CPU lock: irqs off on this CPU (local_irq_save) --- */

/* Stores this CPU's number through cpu unless it is NULL. */
unsigned long rslub_shim_cpu_lock(unsigned int *cpu);
void rslub_shim_cpu_unlock(unsigned long flags);
/*
 * Runs fn(info, cpu) on every online CPU, on that CPU with irqs off, from
 * process context (a bound work item); waits for all. Sleeps.
 */
void rslub_shim_on_each_cpu(void (*fn)(void *info, unsigned int cpu),
			    void *info);

/*
 * --- RCU: the slabs of SLAB_TYPESAFE_BY_RCU caches go back to the page
 * allocator one grace period after they were freed ---
 *
 * rslub_shim_call_rcu_slab(base, owner, cache): base is a dead slab (a
 * block of rslub_shim_alloc_pages with owner); after a grace period
 * rslub_rust_rcu_free_slab(cache, base) runs (softirq context in the
 * kernel). The rcu_head and cache are kept in the block's struct page,
 * never in the slab's memory. rslub_shim_rcu_barrier() waits until every
 * callback queued so far has run; it sleeps.
 */
void rslub_shim_call_rcu_slab(void *base, void *owner, void *cache);
void rslub_shim_rcu_barrier(void);
/* Implemented in Rust. */
void rslub_rust_rcu_free_slab(void *cache, void *base);

/* --- CPU hotplug: calls rslub_rust_cpu_dead(cpu) after a CPU went down --- */

int rslub_shim_cpuhp_register(void);
void rslub_shim_cpuhp_unregister(int state);
/* Implemented in Rust. */
void rslub_rust_cpu_dead(unsigned int cpu);

/*
 * --- the shrinker: cached empty slabs go back when memory is short ---
 *
 * A NUMA-aware shrinker whose objects are the slabs of the per-node
 * empty-slab caches: count_objects asks rslub_rust_shrink_count(nid),
 * scan_objects rslub_rust_shrink_scan(nid, nr_to_scan). Register returns a
 * handle or NULL; unregister waits for running callbacks.
 */
void *rslub_shim_shrinker_register(void);
void rslub_shim_shrinker_unregister(void *shrinker);
/* Implemented in Rust: cached empty slabs on node nid over every cache. */
unsigned long rslub_rust_shrink_count(int nid);
/*
 * Implemented in Rust: gives back up to nr of them, returns how many went
 * back, or RSLUB_SHRINK_STOP when the registry is busy (reclaim may run
 * inside rslub_cache_create, which holds it).
 */
unsigned long rslub_rust_shrink_scan(int nid, unsigned long nr);
#define RSLUB_SHRINK_STOP (~0UL)

/* --- sysfs: /sys/kernel/rslub/<cache>/<attr>; formatting is Rust's --- */

/*
 * Creates /sys/kernel/rslub with n read-only files names[i] (the module's
 * defaults), shown by rslub_rust_sysfs_root_show(index, buf); returns a
 * handle or NULL.
 */
void *rslub_shim_sysfs_root_create(const char *const *names, unsigned int n);
void rslub_shim_sysfs_root_destroy(void *root);
/*
 * Adds root/<name>/ with n attributes named names[i], read-only (mode 0444)
 * or read-write (0644) or write-only (0200) as modes[i] says. show/store go
 * to rslub_rust_sysfs_show/store(cache, index, ...). Returns a handle or
 * NULL.
 */
void *rslub_shim_sysfs_cache_add(void *root, const char *name, void *cache,
				 const char *const *names,
				 const unsigned short *modes, unsigned int n);
/* Removes the directory; no show/store runs once this returns. */
void rslub_shim_sysfs_cache_remove(void *dir);
/* Implemented in Rust: fill buf (PAGE_SIZE) and return its length, or -errno. */
long rslub_rust_sysfs_root_show(unsigned int index, char *buf);
long rslub_rust_sysfs_show(void *cache, unsigned int index, char *buf);
long rslub_rust_sysfs_store(void *cache, unsigned int index, const char *buf,
			    unsigned long len);
/* "%pS" of fn into buf (size bytes); returns the length. */
int rslub_shim_format_symbol(char *buf, unsigned long size, const void *fn);

/* --- hardening and debugging --- */

/* A random word (get_random_long). */
unsigned long rslub_shim_random_long(void);
/*
 * The return address into the first caller outside rslub (the API's
 * caller), found by a stack walk; 0 when unknown. Debug caches only.
 */
unsigned long rslub_shim_api_caller(void);
/* The current task's pid, the current CPU (may be stale), jiffies. */
int rslub_shim_current_pid(void);
unsigned int rslub_shim_current_cpu(void);
unsigned long rslub_shim_jiffies(void);
/*
 * Binds the current task to cpu (negative: lets it run anywhere again);
 * 0 or -errno. For rslub's KUnit suite (rust/selftest.rs).
 */
int rslub_shim_pin_current(int cpu);
/*
 * The module parameter "debug" (slub_debug-style flag letters), copied
 * into buf (size bytes, NUL-terminated); returns its length.
 */
int rslub_shim_debug_param(char *buf, unsigned long size);

/*
 * --- serving the kernel's own caches (a kernel with CONFIG_SLAB_BACKEND,
 * patches/; include/linux/slab_backend.h) ---
 *
 * Registers rslub as the slab backend: 0, or -EOPNOTSUPP on a kernel
 * without the hook, or -EBUSY. Unregister waits for calls in flight.
 */
int rslub_shim_backend_register(void);
void rslub_shim_backend_unregister(void);
/*
 * Calls rslub_rust_serve_candidate(arg, ...) for every kmem_cache, under
 * the kernel's slab_mutex (the callback must not serve or sleep long);
 * refused is NULL or why the kernel cannot let it be served.
 */
int rslub_shim_backend_list(void *arg);
int rslub_rust_serve_candidate(void *arg, void *s, unsigned long long id,
			       const char *name,
			       unsigned int object_size, unsigned int align,
			       unsigned int flags, void (*ctor)(void *),
			       unsigned int freeptr_offset,
			       unsigned int useroffset, unsigned int usersize,
			       const char *refused);
/*
 * slab_backend_serve/unserve/drained (see the kernel header); id is the
 * one the listing gave for s: -ESTALE when another cache took its address.
 */
int rslub_shim_backend_serve(void *s, unsigned long long id, void *cache);
void rslub_shim_backend_unserve(void *s);
void rslub_shim_backend_drained(void *s);
/* Whether freed objects are wiped (init_on_free=1). */
bool rslub_shim_want_init_on_free(void);
/*
 * The kernel's memory debuggers on an API object (c_shim/kdebug.c), called
 * only on a kernel with generic KASAN or kmemleak. At allocation: its size
 * bytes addressable, its red zones (red_left bytes before it, up to inuse
 * after it) not, kmemleak told, init_on_alloc applied unless keeps (a
 * constructor or SLAB_TYPESAFE_BY_RCU keeps contents). At free: false for
 * an object KASAN's shadow says is free (the caller reports it and frees
 * nothing), else kmemleak told, init_on_free applied unless keeps, and it
 * is marked freed unless rcu (RCU readers may still read it), but for the
 * word at free_offset (its free pointer).
 */
/* KASAN's reports off (on) for this task, around rslub's own work. */
void rslub_shim_kdebug_quiet(bool on);
void rslub_shim_kdebug_alloc(void *obj, unsigned int size,
			     unsigned int red_left, unsigned int inuse,
			     unsigned int gfp, bool keeps);
bool rslub_shim_kdebug_free(void *obj, unsigned int size,
			    unsigned int free_offset, bool keeps, bool rcu);
/*
 * Implemented in Rust: the backend's operations. s: the kernel cache;
 * cache: the rslub cache the kernel holds for it (NULL once drained);
 * base: the slab's start. cache_destroy: nonzero if objects are out.
 * alloc and free are the kernel's slab_backend_ops themselves (its types:
 * gfp_t is an unsigned int), so that the kernel's static calls land in
 * rslub's code directly; alloc_bulk and free_bulk, called through the ops
 * pointer, have C wrappers of the kernel's exact types (kCFI).
 */
struct kmem_cache;
void *rslub_rust_served_alloc(void *cache, unsigned int gfp, int node,
			      struct kmem_cache *s);
/* nr objects into p, or 0 and none. */
unsigned int rslub_rust_served_alloc_bulk(struct kmem_cache *s, void *cache,
					  unsigned int gfp, unsigned int nr,
					  void **p);
void rslub_rust_served_free(void *cache, void *obj, struct kmem_cache *s);
/* The nr objects in p, each as rslub_rust_served_free() would. */
void rslub_rust_served_free_bulk(struct kmem_cache *s, void *cache,
				 unsigned int nr, void **p);
void *rslub_rust_served_object_start(void *cache, void *base, const void *ptr);
int rslub_rust_served_destroy(void *s);
/* The running task (current), as an address only. */
void *rslub_shim_current(void);
/*
 * A module reference while caches are served (rmmod is refused); false
 * when the module is being unloaded (try_module_get()).
 */
bool rslub_shim_module_tryget(void);
void rslub_shim_module_put(void);
/*
 * Calls rslub_rust_serve_reap() from a work item after ms milliseconds
 * (again if already pending: the earlier time wins); cancel waits.
 */
void rslub_shim_reap_schedule(unsigned int ms);
void rslub_shim_reap_cancel(void);
void rslub_rust_serve_reap(void);
/* Implemented in Rust: /sys/kernel/rslub/serve and serve_refused. */
long rslub_rust_serve_show(char *buf);
long rslub_rust_serve_store(const char *buf, unsigned long len);
long rslub_rust_serve_refused_show(char *buf);
/* The "serve" module parameter into buf (NUL-terminated); its length. */
int rslub_shim_serve_param(char *buf, unsigned long size);
/*
 * The test-only pause of a serve request (include/rslub.h,
 * rslub_test_set_serve_pause): at_exit is false between listing and
 * serving, true at unload before unregistering. Nothing on a kernel
 * without CONFIG_KUNIT.
 */
void rslub_shim_serve_pause(bool at_exit);

#endif /* RSLUB_SHIM_H */
