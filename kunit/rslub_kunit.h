/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites of rslub_kunit.ko.
 */
#ifndef _RSLUB_KUNIT_H
#define _RSLUB_KUNIT_H

#include <kunit/test.h>

#include "rslub.h"

/* Creates a cache, or fails the test on the spot. */
static inline struct rslub_cache *make(struct kunit *test, const char *name,
				       unsigned int size, unsigned int align,
				       slab_flags_t flags,
				       void (*ctor)(void *))
{
	struct rslub_cache *s = rslub_cache_create(name, size, align, flags,
						   ctor);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	return s;
}

#endif /* _RSLUB_KUNIT_H */
