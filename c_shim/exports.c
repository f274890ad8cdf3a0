// SPDX-License-Identifier: GPL-2.0
/*
 * Exports of the public API (include/rslub.h). The functions are defined in
 * Rust (rust/api.rs); including the header here gives the C compiler the
 * prototypes, so a signature drift shows up as a build error where the
 * generated Rust declarations are checked (see rust/api.rs).
 */
#include <linux/export.h>
#include <linux/module.h>

#include "../include/rslub.h"

EXPORT_SYMBOL_GPL(rslub_cache_create);
EXPORT_SYMBOL_GPL(rslub_cache_alloc);
EXPORT_SYMBOL_GPL(rslub_cache_alloc_node);
EXPORT_SYMBOL_GPL(rslub_cache_free);
EXPORT_SYMBOL_GPL(rslub_cache_alloc_bulk);
EXPORT_SYMBOL_GPL(rslub_cache_free_bulk);
EXPORT_SYMBOL_GPL(rslub_cache_shrink);
EXPORT_SYMBOL_GPL(rslub_cache_destroy);
