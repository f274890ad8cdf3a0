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

/*
 * An RCU reader (rcu_reader.c): a kthread that enters a read section and
 * keeps reading *word until stopped, counting every value other than the
 * two the test writes there, KT_RCU_READER_FIRST (written by start) and
 * then KT_RCU_READER_SECOND. Start returns once the reader is inside; stop
 * lets it leave, waits for it, and expects reads and no other value.
 */
#define KT_RCU_READER_FIRST 0x5afeUL
#define KT_RCU_READER_SECOND 0xa9a1UL
struct kt_rcu_reader;
struct kt_rcu_reader *kt_rcu_reader_start(struct kunit *test, unsigned long *word);
void kt_rcu_reader_stop(struct kunit *test, struct kt_rcu_reader *r);

#endif /* _RSLUB_KUNIT_H */
