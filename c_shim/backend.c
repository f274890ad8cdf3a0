// SPDX-License-Identifier: GPL-2.0
/*
 * Serving the kernel's own caches: rslub as the kernel's slab backend
 * (patches/0001, include/linux/slab_backend.h), which rust/serve/ drives.
 * Here are the backend's ops, the calls that take them (registration,
 * listing, serving a cache, a served slab's pages and grace period for
 * shim.c), the serve= parameter, the reaper's work item and the test-only
 * pause of a serve request. Without CONFIG_SLAB_BACKEND the calls fail
 * with -EOPNOTSUPP and nothing is ever served.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#ifdef CONFIG_SLAB_BACKEND
#include <linux/slab_backend.h>
#endif
#include <linux/string.h>
#include <linux/workqueue.h>

#include "shim.h"
#include "shim_internal.h"
#include "../include/rslub.h"

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

struct page *rslub_backend_alloc_slab(void *owner, gfp_t gfp, int node,
				      unsigned int order)
{
	return slab_backend_alloc_slab(&rslub_backend_ops, owner, gfp, node, order);
}

void rslub_backend_free_slab(struct page *page)
{
	slab_backend_free_slab(&rslub_backend_ops, page);
}

static void rslub_rcu_free_served(struct rcu_head *head)
{
	void *cache;
	struct page *page = slab_backend_rcu_page(head, &cache);

	rslub_rust_rcu_free_slab(cache, page_address(page));
}

void rslub_backend_call_rcu(struct page *page, void *cache)
{
	slab_backend_call_rcu(page, cache, rslub_rcu_free_served);
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
