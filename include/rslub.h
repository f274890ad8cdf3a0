/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rslub: a SLUB-variant slab allocator written in Rust, loaded as a module.
 *
 * This is its public C API. It mirrors kmem_cache_*(); the symbols are
 * exported GPL by rslub.ko and stay stable. A module that uses them needs
 * rslub.ko loaded first (modprobe resolves it; with insmod load it by hand).
 *
 * Contexts: every call may be made from any context its gfp flags allow
 * (GFP_ATOMIC from hard irq), the same contexts as kmem_cache_alloc(): the
 * slow paths take spinlock_t locks (and the page allocator's), so not from
 * HRTIMER_MODE_HARD callbacks or raw-spinlock sections on PREEMPT_RT (lockdep
 * with PROVE_RAW_LOCK_NESTING reports it). create, shrink, validate and
 * destroy sleep: process context only.
 *
 * Bad arguments: a NULL cache is refused by every call (NULL, false,
 * -EINVAL or nothing done) with one "rslub: " line on the kernel log, as is
 * every other refusal below; docs/reliability.md ("Bad input") lists them
 * all. A pointer that is not a live cache (destroyed, or never created) is
 * undefined behaviour, except for rslub_cache_destroy, which refuses it.
 */
#ifndef _RSLUB_H
#define _RSLUB_H

#include <linux/gfp.h>
#include <linux/numa.h>
#include <linux/slab.h>
#include <linux/types.h>

#include "rslub_limits.h"	/* RSLUB_NAME_MAX, RSLUB_MAX_OBJECT_SIZE */

struct rslub_cache;

/*
 * rslub_cache_create - create a cache of objects of @size bytes.
 * @name:  unique among live rslub caches; 1..RSLUB_NAME_MAX bytes. Copied.
 * @size:  1..RSLUB_MAX_OBJECT_SIZE.
 * @align: 0 or a power of two. Objects are aligned to max(@align, 8), and to
 *         the cache line size as well with SLAB_HWCACHE_ALIGN.
 * @flags: 0, SLAB_HWCACHE_ALIGN, SLAB_NO_MERGE (rslub caches are never
 *         merged, so it changes nothing), SLAB_TYPESAFE_BY_RCU (below), and
 *         the debug flags
 *         SLAB_CONSISTENCY_CHECKS, SLAB_RED_ZONE, SLAB_POISON (ignored with a
 *         @ctor, like in-tree) and SLAB_STORE_USER (see "Debug features"
 *         below). Anything else is refused.
 * @ctor:  optional; runs once for each object when its slab is created, not
 *         on every allocation. Freed objects must be returned in the
 *         constructed state.
 *
 * SLAB_TYPESAFE_BY_RCU, as in-tree: a freed object may be handed out again
 * at once, but its memory stays an object of this cache until every RCU
 * reader that could have found it has left its read section: a slab's
 * pages go back to the page allocator one grace period after the slab was
 * freed (from the empty-slab cache, shrink, the shrinker and destroy too;
 * rslub_cache_destroy waits for them with rcu_barrier()). Free objects
 * keep their contents (the free pointer lies after the object; SLAB_POISON
 * does not poison them), so a reader that revalidates the object after
 * taking a reference sees either the old or a new object of this type.
 *
 * Return: the cache, or ERR_PTR(-EINVAL) for a NULL or empty name, a name
 * longer than RSLUB_NAME_MAX, a size of 0 or above RSLUB_MAX_OBJECT_SIZE, an
 * align that is not 0 or a power of two, or an unsupported flag;
 * ERR_PTR(-EEXIST) when a live cache has that name; ERR_PTR(-ENOMEM).
 * Each refusal logs one line saying why.
 */
struct rslub_cache *rslub_cache_create(const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags,
				       void (*ctor)(void *));

/*
 * rslub_cache_alloc - allocate one object. __GFP_ZERO zeroes it.
 * Return: the object, or NULL when no memory could be had.
 */
void *rslub_cache_alloc(struct rslub_cache *s, gfp_t gfp);

/*
 * rslub_cache_alloc_node - allocate one object from memory of @node.
 * @node: a node id, or NUMA_NO_NODE for the caller's node. When @node has
 *        no memory the allocation falls back to other nodes, unless @gfp has
 *        __GFP_THISNODE: then it returns NULL (logged). A @node that is
 *        neither NUMA_NO_NODE nor 0..nr_node_ids-1 returns NULL (logged).
 */
void *rslub_cache_alloc_node(struct rslub_cache *s, gfp_t gfp, int node);

/*
 * rslub_cache_free - return @obj to @s. NULL does nothing. A pointer that is
 * not an allocated object of @s (another cache's, not slab memory, not the
 * start of an object, or the naive double free) is reported and ignored.
 */
void rslub_cache_free(struct rslub_cache *s, void *obj);

/*
 * rslub_cache_alloc_bulk - allocate @nr objects into @p. All or nothing:
 * on failure nothing stays allocated and @p's contents are undefined.
 * Return: true when all @nr objects were allocated (@nr 0: true); false
 * for a NULL @p with @nr > 0 (logged).
 */
bool rslub_cache_alloc_bulk(struct rslub_cache *s, gfp_t gfp, size_t nr,
			    void **p);

/*
 * rslub_cache_free_bulk - free @nr objects from @p (NULL entries skipped;
 * other bad entries reported and ignored, as for rslub_cache_free; a NULL
 * @p with @nr > 0 is logged and ignored). Like kmem_cache_free_bulk, it
 * may overwrite @p's entries.
 */
void rslub_cache_free_bulk(struct rslub_cache *s, size_t nr, void **p);

/*
 * rslub_cache_shrink - flush every CPU's slabs of @s, then return every empty
 * slab (including the empty-slab cache) to the page allocator. Sleeps.
 * Return: 0 (-EINVAL for a NULL cache).
 */
int rslub_cache_shrink(struct rslub_cache *s);

/*
 * rslub_cache_destroy - destroy @s. NULL returns 0.
 * Return: 0, or -EBUSY when objects are still allocated: that is logged with
 * their count, the name becomes free, and the slabs holding live objects are
 * leaked (with the cache's bookkeeping) rather than freed under their users.
 * -EINVAL (logged) when @s is not a live cache (e.g. destroyed already).
 */
int rslub_cache_destroy(struct rslub_cache *s);

/*
 * Introspection and tunables, by the names the sysfs files use
 * (/sys/kernel/rslub/<cache>/<name>, same names as /sys/kernel/slab).
 *
 * rslub_cache_stat - total over all CPUs of statistic @name (alloc_fastpath,
 *   free_slowpath, cmpxchg_double_fail, empty_cache_hit, ...; the
 *   SLUB_STATS names). Return: the count, or -EINVAL for an unknown name.
 * rslub_cache_stat_clear - zero statistic @name on every CPU ("all": every
 *   statistic). Return: 0 or -EINVAL.
 * rslub_cache_get - read attribute @name: object_size, slab_size,
 *   objs_per_slab, order, align, objects, objects_partial, slabs, partial,
 *   cpu_slabs, slabs_cpu_partial, empty_slabs, cpu_partial, min_partial,
 *   max_empty, errors, hwcache_align. Counts are exact only while the cache
 *   is idle. The free_batch build variant (Kbuild VARIANT=free_batch) adds
 *   free_batch and free_batch_objects (freed objects waiting in CPU
 *   batches; not in "objects").
 *   Return: the value, or -EINVAL for an unknown name.
 * rslub_cache_set - set tunable @name: cpu_partial (objects, 0..100000),
 *   min_partial (0..1000), max_empty (0..1000; lowering it releases cached
 *   slabs), random_freelist (0 or 1: new slabs thread their free objects in
 *   a random order, like in-tree CONFIG_SLAB_FREELIST_RANDOM; the first 1
 *   allocates the cache's shuffled index sequence and sleeps); in the
 *   free_batch build variant also free_batch (0..32: frees that miss the
 *   CPU slab each CPU gathers before returning them to their slabs grouped
 *   by slab; 0 is classic SLUB; lowering it flushes the CPUs). Safe on a
 *   live cache under load.
 *   Return: 0, or -EINVAL for an unknown name or a value out of range
 *   (the tunable is then unchanged), -ENOMEM when random_freelist's
 *   sequence cannot be allocated.
 * Names are at most 32 bytes. Each -EINVAL (NULL cache, NULL or unknown
 * name, value out of range) logs one line.
 *
 * Read-only attributes of the hardening and debug state: sanity_checks,
 * red_zone, poison, store_user (0/1, the debug features), freelist_harden
 * (0/1), random_freelist (0/1), isolated_slabs (slabs taken out of service
 * after corruption), errors (problems detected), typesafe_by_rcu (0/1) and
 * rcu_pending_slabs (freed slabs of a SLAB_TYPESAFE_BY_RCU cache waiting for
 * their grace period), fallback_slabs and fallback_objects (a cache above
 * its smallest slab order takes a slab of that order from a companion
 * cache when the page allocator cannot give one of its own order: its
 * slabs and the objects out of them; "objects" and "slabs" do not count
 * them).
 */
long long rslub_cache_stat(struct rslub_cache *s, const char *name);
int rslub_cache_stat_clear(struct rslub_cache *s, const char *name);
long long rslub_cache_get(struct rslub_cache *s, const char *name);
int rslub_cache_set(struct rslub_cache *s, const char *name, long long value);

/*
 * rslub_pages_allocated - pages rslub holds from the page allocator for
 * slabs, over all caches (including empty slabs it keeps cached, and freed
 * slabs of SLAB_TYPESAFE_BY_RCU caches waiting for a grace period). Zero when
 * no cache holds a slab. Leak checks compare it before and after.
 */
long rslub_pages_allocated(void);

/*
 * Debug features and hardening (docs/reliability.md has the details).
 *
 * Free pointers are stored obfuscated (next ^ random key ^ byte-swapped
 * slot address, like CONFIG_SLAB_FREELIST_HARDENED) and every free pointer
 * is checked before it is followed; the module parameter harden=0 turns
 * this off for caches created afterwards.
 *
 * Debug features come from the create flags or, for every new cache, from
 * the module parameter debug= with slub_debug's letters: F (consistency
 * checks), Z (red zones), P (poisoning), U (owner tracking); "-" or empty
 * for none. Debug caches take a locked path for every allocation and free
 * (no per-CPU fast path) and check red zones, poison, free pointers and
 * counters there.
 *
 * A detected problem is reported on the kernel log (lines starting with
 * "rslub: ", no stack dump), counted in "errors", and made harmless: a bad
 * free is ignored; a damaged slab is isolated (never allocated from, never
 * freed; later frees of its objects are ignored silently).
 *
 * rslub_cache_validate - flush every CPU, then check every slab of @s
 *   (counters, freelists; in debug caches every object's red zones and
 *   poison). Each damaged slab is reported once and isolated. Sleeps.
 *   Return: the number of damaged slabs found (also added to "errors");
 *   -EINVAL for a NULL cache.
 *   Writing 1 to /sys/kernel/rslub/<cache>/validate does the same.
 */
int rslub_cache_validate(struct rslub_cache *s);

/*
 * Serving the kernel's own caches (a test kernel with CONFIG_SLAB_BACKEND,
 * rslub's patches/; see docs/design.md, "Serving kernel caches").
 *
 * rslub_serve - serve kernel kmem_caches from rslub, or stop. @request is
 *   what /sys/kernel/rslub/serve takes: a cache name or shell glob starts
 *   serving it (an rslub cache of the same name, size, alignment and
 *   constructor gets its new objects), "-NAME" or "-GLOB" stops new
 *   allocations (objects rslub handed out keep coming back to it; the
 *   rslub cache goes once they all have); several separated by commas or
 *   spaces. Each cache refused is logged with the reason. Sleeps.
 *   Return: 0; -ENOENT when no cache has the name (or none is served, for
 *   a stop); -EINVAL when a cache named (not globbed) cannot be served;
 *   -EOPNOTSUPP on a kernel without the hook; -ENOMEM. With several
 *   requests, every one is tried and the first error returned. Every
 *   call (an empty @request too) makes the reaper look at once at the
 *   caches that drain: those whose objects are all back go.
 *
 * rslub_served_objects - objects rslub handed out for the kernel cache
 *   @name and has not got back (flushes every CPU first; sleeps), or
 *   -ENOENT when rslub neither serves nor drains it.
 *
 * rslub_served_get - rslub_cache_get(@attr) of the rslub cache serving or
 *   draining the kernel cache @name (its "errors" or "isolated_slabs",
 *   say), or -ENOENT when there is none.
 *
 * rslub_served_shrink - rslub_cache_shrink() of the rslub cache serving or
 *   draining the kernel cache @name: 0, or -ENOENT when there is none.
 *   Sleeps.
 *
 * The caches the kernel will not let rslub serve, each with the reason,
 * are listed in /sys/kernel/rslub/serve_refused.
 */
int rslub_serve(const char *request);
long rslub_served_objects(const char *name);
long long rslub_served_get(const char *name, const char *attr);
int rslub_served_shrink(const char *name);

/*
 * For rslub's own tests only (kernels with CONFIG_KUNIT): a serve request
 * pauses where a race with it matters, so that a test can act in the gap:
 * after the kernel listed its caches and before rslub serves any, and at
 * unload before rslub unregisters from the kernel. With @fn set, the pause
 * calls @fn(@arg) at the first point; otherwise it sleeps for the module
 * parameter serve_pause_ms (0: no pause) at both.
 */
#if IS_ENABLED(CONFIG_KUNIT)
void rslub_test_set_serve_pause(void (*fn)(void *arg), void *arg);
#endif

#endif /* _RSLUB_H */
