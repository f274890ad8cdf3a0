// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel-side implementation of c_shim/shim.h: thin wrappers over static
 * inline kernel helpers that Rust cannot call directly.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <asm/cpufeature.h>

#include "shim.h"

void rslub_shim_get_consts(struct rslub_shim_consts *c)
{
	c->page_size = PAGE_SIZE;
	c->page_shift = PAGE_SHIFT;
	c->cache_line = cache_line_size();
	c->numa_no_node = NUMA_NO_NODE;
	c->nr_node_ids = nr_node_ids;
	c->gfp_zero = (__force unsigned int)__GFP_ZERO;
	c->gfp_thisnode = (__force unsigned int)__GFP_THISNODE;
	c->flag_hwcache_align = (__force unsigned int)SLAB_HWCACHE_ALIGN;
	c->flag_no_merge = (__force unsigned int)SLAB_NO_MERGE;
}

bool rslub_shim_has_cmpxchg128(void)
{
	return boot_cpu_has(X86_FEATURE_CX16);
}

void *rslub_shim_alloc_pages(int node, unsigned int gfp, unsigned int order)
{
	struct page *page;

	page = alloc_pages_node(node, (__force gfp_t)gfp, order);
	return page ? page_address(page) : NULL;
}

void rslub_shim_free_pages(void *addr, unsigned int order)
{
	free_pages((unsigned long)addr, order);
}

int rslub_shim_addr_to_node(const void *addr)
{
	return page_to_nid(virt_to_page(addr));
}

bool rslub_shim_addr_is_direct_mapped(const void *addr)
{
	return virt_addr_valid(addr);
}

bool rslub_shim_node_has_memory(int node)
{
	return node >= 0 && node < nr_node_ids && node_state(node, N_MEMORY);
}

int rslub_shim_numa_node_id(void)
{
	return numa_node_id();
}
