// SPDX-License-Identifier: GPL-2.0
/*
 * Exports of the public API (include/rslub.h). Every function is defined in
 * Rust (rust/api.rs); the header supplies the prototypes.
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
EXPORT_SYMBOL_GPL(rslub_cache_stat);
EXPORT_SYMBOL_GPL(rslub_cache_stat_clear);
EXPORT_SYMBOL_GPL(rslub_cache_get);
EXPORT_SYMBOL_GPL(rslub_cache_set);
EXPORT_SYMBOL_GPL(rslub_pages_allocated);
EXPORT_SYMBOL_GPL(rslub_cache_validate);
EXPORT_SYMBOL_GPL(rslub_serve);
EXPORT_SYMBOL_GPL(rslub_served_objects);
EXPORT_SYMBOL_GPL(rslub_served_get);
EXPORT_SYMBOL_GPL(rslub_served_shrink);
