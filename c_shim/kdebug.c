// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's memory debuggers on rslub's API objects (rslub_cache_alloc
 * and friends), on a kernel built with generic KASAN or kmemleak: the
 * debug flavor (config/debug.config). Elsewhere the Rust API does not call
 * these (its hit paths keep their shape).
 *
 * KASAN: rslub marks its objects in KASAN's shadow for the code that
 * uses them: an allocated object's bytes are addressable, the red zones
 * around it (an API cache has them on a KASAN kernel: rust/api.rs) are
 * KASAN_SLAB_REDZONE, a freed object is KASAN_SLAB_FREE but for the word
 * of its free pointer, which rslub itself reads and writes (rslub is
 * instrumented too), so KASAN reports an access past the object as
 * slab-out-of-bounds and one after its free as slab-use-after-free, with
 * the access's stack. What KASAN's own slab hooks add and these do not:
 * the allocation and free stacks in the report (KASAN keeps them in its
 * per-object metadata of a struct kmem_cache), the quarantine (a freed
 * object is reused at rslub's next allocation from its CPU slab, and a
 * use after that reuse is not seen), and the 8 bytes of the free pointer
 * (a use after free there is not seen). A second free of an object
 * KASAN's shadow says is free is refused, and reported by the cache as
 * its own checks report one (KASAN's invalid-free report is internal to
 * mm/kasan). Caches with rslub's own
 * debug= checks are left to those (they read freed objects whole).
 *
 * kmemleak: each object is registered at allocation and unregistered at
 * free, so kmemleak scans it for pointers (an object referenced only from
 * an rslub object is not a leak) and reports one nothing references.
 *
 * init_on_alloc / init_on_free: an object is zeroed at allocation or free
 * as SLUB zeroes its own, except in caches with a constructor or
 * SLAB_TYPESAFE_BY_RCU (whose contents outlive a free).
 */
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/string.h>

#include "shim.h"

#ifdef CONFIG_KASAN_GENERIC
/*
 * The shadow values KASAN's reports name (mm/kasan/kasan.h, private to
 * mm/kasan): a slab object's red zone, a freed slab object. One shadow
 * byte covers a granule of 8 bytes; a partial last granule holds the
 * number of its addressable bytes.
 */
#define RSLUB_KASAN_REDZONE 0xFC
#define RSLUB_KASAN_FREE 0xFB
#define RSLUB_GRANULE BIT(KASAN_SHADOW_SCALE_SHIFT)

/* Marks [addr, addr + size) with value; both multiples of a granule. */
static void rslub_kasan_mark(const void *addr, size_t size, u8 value)
{
	memset(kasan_mem_to_shadow(addr), value, size / RSLUB_GRANULE);
}

/* Makes the first size bytes at addr (granule-aligned) addressable. */
static void rslub_kasan_open(const void *addr, size_t size)
{
	u8 *shadow = kasan_mem_to_shadow(addr);

	memset(shadow, 0, size / RSLUB_GRANULE);
	if (size % RSLUB_GRANULE)
		shadow[size / RSLUB_GRANULE] = size % RSLUB_GRANULE;
}
#endif

void rslub_shim_kdebug_quiet(bool on)
{
#ifdef CONFIG_KASAN_GENERIC
	if (on)
		kasan_disable_current();
	else
		kasan_enable_current();
#endif
}

void rslub_shim_kdebug_alloc(void *obj, unsigned int size,
			     unsigned int red_left, unsigned int inuse,
			     unsigned int gfp, bool keeps)
{
#ifdef CONFIG_KASAN_GENERIC
	/* The red zone before it, its bytes, the red zone after it. */
	if (red_left)
		rslub_kasan_mark((u8 *)obj - red_left, red_left,
				 RSLUB_KASAN_REDZONE);
	rslub_kasan_open(obj, size);
	if (inuse > ALIGN(size, RSLUB_GRANULE))
		rslub_kasan_mark((u8 *)obj + ALIGN(size, RSLUB_GRANULE),
				 inuse - ALIGN(size, RSLUB_GRANULE),
				 RSLUB_KASAN_REDZONE);
#endif
	if (!keeps && want_init_on_alloc((__force gfp_t)gfp))
		memset(obj, 0, size);
	kmemleak_alloc(obj, size, 1, (__force gfp_t)gfp);
}

bool rslub_shim_kdebug_free(void *obj, unsigned int size,
			    unsigned int free_offset, bool keeps, bool rcu)
{
#ifdef CONFIG_KASAN_GENERIC
	/* A granule of the object that a free marks, not its free pointer's. */
	u8 *probe = (u8 *)obj + (free_offset < RSLUB_GRANULE ? RSLUB_GRANULE : 0);

	if (!rcu && probe < (u8 *)obj + size &&
	    *(u8 *)kasan_mem_to_shadow(probe) == RSLUB_KASAN_FREE)
		return false;
#endif
	kmemleak_free(obj);
	if (!keeps && want_init_on_free())
		memset(obj, 0, size);
#ifdef CONFIG_KASAN_GENERIC
	/* A typesafe-by-RCU object stays readable by RCU readers. */
	if (!rcu) {
		rslub_kasan_mark(obj, ALIGN(size, RSLUB_GRANULE),
				 RSLUB_KASAN_FREE);
		/*
		 * The free pointer rslub writes next (inside the object or
		 * after it: a word-aligned word).
		 */
		if (free_offset < ALIGN(size, RSLUB_GRANULE))
			rslub_kasan_open((u8 *)obj + free_offset,
					 sizeof(void *));
	}
#endif
	return true;
}
