// SPDX-License-Identifier: GPL-2.0
/*
 * The shim functions on rslub's fast paths: per-CPU pointers, the per-CPU
 * cmpxchg16b, the CPU lock, node and address lookups. Each is one kernel
 * operation and takes no decision.
 *
 * They are __always_inline and non-static, the kernel's own Rust-helper
 * convention (rust/helpers/helpers.c): on a kernel built with
 * CONFIG_RUST_INLINE_HELPERS, Kbuild compiles this file to LLVM bitcode and
 * links it into rslub's Rust object, where the calls are inlined (no call
 * into the shim is left on the fast paths); on any other kernel (GCC, or
 * clang without the option) it is an ordinary object and the Rust calls it.
 */
#include <linux/compiler.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/topology.h>

#include "shim.h"

/* The per-CPU pair the fast path updates: word 0, word 1. */
struct rslub_pair {
	unsigned long w0;
	unsigned long w1;
} __aligned(16);

__always_inline void *rslub_shim_current(void)
{
	return current;
}

__always_inline int rslub_shim_addr_to_node(const void *addr)
{
	return page_to_nid(virt_to_page(addr));
}

/*
 * The struct page of base, an address of the direct map (the callers have
 * checked it, or have it from the page allocator): from its offset into
 * the direct map, without __pa()'s test for an address of the kernel image.
 */
static __always_inline struct page *rslub_direct_map_page(const void *base)
{
	return pfn_to_page(((unsigned long)base - PAGE_OFFSET) >> PAGE_SHIFT);
}

__always_inline unsigned long rslub_shim_slab_meta(const void *base)
{
	return page_private(rslub_direct_map_page(base));
}

__always_inline void rslub_shim_set_slab_meta(void *base, unsigned long word)
{
	set_page_private(rslub_direct_map_page(base), word);
}

/*
 * Two compares with memory instead of virt_addr_valid()'s out-of-line
 * section lookup: an address of the direct map below high_memory is RAM the
 * kernel maps, so the slab header at its aligned-down start can be read and
 * checked. Debug caches use the full check (rslub_shim_addr_has_page).
 */
__always_inline bool rslub_shim_addr_is_direct_mapped(const void *addr)
{
	unsigned long a = (unsigned long)addr;

	return a >= PAGE_OFFSET && a < (unsigned long)high_memory;
}

__always_inline bool rslub_shim_gfp_allows_blocking(unsigned int gfp)
{
	return gfpflags_allow_blocking((__force gfp_t)gfp);
}

__always_inline int rslub_shim_numa_node_id(void)
{
	return numa_mem_id();
}

__always_inline bool rslub_shim_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

__always_inline void *rslub_shim_per_cpu_ptr(unsigned long pcpu, unsigned int cpu)
{
	return per_cpu_ptr((void __percpu *)pcpu, cpu);
}

__always_inline void *rslub_shim_this_cpu_ptr(unsigned long pcpu)
{
	return raw_cpu_ptr((void __percpu *)pcpu);
}

/*
 * cmpxchg16b of this CPU's pair at pcpu, issued with the instruction insn
 * ("cmpxchg16b" or "lock cmpxchg16b"); true when the pair was old0, old1
 * and is now new0, new1.
 */
#define RSLUB_THIS_CPU_CMPXCHG16B(insn, pcpu, old0, old1, new0, new1)		\
({										\
	struct rslub_pair *__p = (struct rslub_pair *)(pcpu);			\
	unsigned long __o0 = (old0), __o1 = (old1);				\
	bool __ok;								\
										\
	asm volatile(insn " %%gs:%[mem]"					\
		     : "=@ccz" (__ok), [mem] "+m" (*__p), "+a" (__o0), "+d" (__o1) \
		     : "b" (new0), "c" (new1)					\
		     : "memory");						\
	__ok;									\
})

/*
 * this_cpu_cmpxchg128() does not link from a module (its fallback is not
 * exported), so the instruction is issued here: segment-relative, no lock
 * prefix. It is atomic against interrupts and preemption on this CPU, which
 * is all the fast path needs; the tid catches migration.
 */
__always_inline bool rslub_shim_this_cpu_cmpxchg_pair(unsigned long pcpu,
						      unsigned long old0,
						      unsigned long old1,
						      unsigned long new0,
						      unsigned long new1)
{
	return RSLUB_THIS_CPU_CMPXCHG16B("cmpxchg16b", pcpu, old0, old1, new0, new1);
}

/*
 * The same with a lock prefix: the fast paths of the locked_cmpxchg build
 * variant (the bench's "cmpxchg" suite).
 */
__always_inline bool rslub_shim_this_cpu_cmpxchg_pair_locked(unsigned long pcpu,
							     unsigned long old0,
							     unsigned long old1,
							     unsigned long new0,
							     unsigned long new1)
{
	return RSLUB_THIS_CPU_CMPXCHG16B("lock cmpxchg16b", pcpu, old0, old1, new0, new1);
}

__always_inline void rslub_shim_this_cpu_inc(unsigned long pcpu)
{
	this_cpu_inc(*(unsigned long __percpu *)pcpu);
}

__always_inline bool rslub_shim_cmpxchg_pair(unsigned long *pair,
					     unsigned long old0,
					     unsigned long old1,
					     unsigned long new0,
					     unsigned long new1)
{
	u128 old = ((u128)old1 << 64) | old0;
	u128 new = ((u128)new1 << 64) | new0;

	return try_cmpxchg128((u128 *)pair, &old, new);
}

__always_inline unsigned long rslub_shim_cpu_lock(unsigned int *cpu)
{
	unsigned long flags;

	local_irq_save(flags);
	if (cpu)
		*cpu = smp_processor_id();
	return flags;
}

__always_inline void rslub_shim_cpu_unlock(unsigned long flags)
{
	local_irq_restore(flags);
}
