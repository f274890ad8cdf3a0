/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel shim's C files share with each other and not with Rust
 * (bindgen reads shim.h only): shim.c's page and RCU calls hand a served
 * slab, one whose owner is a kernel cache, to backend.c, which holds the
 * backend's ops and so the kernel's calls that take them.
 */
#ifndef RSLUB_SHIM_INTERNAL_H
#define RSLUB_SHIM_INTERNAL_H

#ifdef CONFIG_SLAB_BACKEND
#include <linux/gfp_types.h>
#include <linux/mm_types.h>

/* A served slab's pages: the kernel's page policy for owner, and its mark. */
struct page *rslub_backend_alloc_slab(void *owner, gfp_t gfp, int node,
				      unsigned int order);
void rslub_backend_free_slab(struct page *page);
/* A served slab's grace period, in the struct slab the kernel lends. */
void rslub_backend_call_rcu(struct page *page, void *cache);
#endif

#endif /* RSLUB_SHIM_INTERNAL_H */
