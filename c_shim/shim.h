/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C shim's interface to rslub's Rust code. bindgen reads this header to
 * generate the Rust declarations (rust/shim_bindings.rs), so it is kept
 * self-contained: plain C types only, no kernel headers.
 *
 * The shim holds what Rust cannot express from a module: static inline
 * kernel functions and macros (page_address, numa_node_id, ...) and, later,
 * the per-CPU cmpxchg16b. It makes no allocator decisions.
 */
#ifndef RSLUB_SHIM_H
#define RSLUB_SHIM_H

#ifndef __KERNEL__
#include <stdbool.h>
#endif

#include "../include/rslub_limits.h"

/* Kernel constants the Rust side needs, read once at module load. */
struct rslub_shim_consts {
	unsigned long page_size;
	unsigned int page_shift;
	unsigned int cache_line;
	int numa_no_node;
	int nr_node_ids;
	unsigned int gfp_zero;
	unsigned int gfp_thisnode;
	unsigned int flag_hwcache_align;
	unsigned int flag_no_merge;
};

void rslub_shim_get_consts(struct rslub_shim_consts *c);

/* True when the CPU has cmpxchg16b (the allocator's fast path needs it). */
bool rslub_shim_has_cmpxchg128(void);

/*
 * 2^order pages from node (NUMA_NO_NODE: the local node), as a kernel
 * virtual address, or NULL. gfp must not contain __GFP_ZERO's caller intent
 * for objects; the caller strips it.
 */
void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order);
void rslub_shim_free_pages(void *addr, unsigned int order);

/* Node of the memory at addr (a slab address). */
int rslub_shim_addr_to_node(const void *addr);

/* True when addr is a direct-mapped kernel address (safe to align down and read). */
bool rslub_shim_addr_is_direct_mapped(const void *addr);

/* True when node is a valid, online node id that has memory. */
bool rslub_shim_node_has_memory(int node);

int rslub_shim_numa_node_id(void);

#endif /* RSLUB_SHIM_H */
