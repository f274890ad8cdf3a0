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

/* Runs @fn(@arg) in a kthread of its own and waits for it (kt_report.c). */
void kt_run_kthread(struct kunit *test, void (*fn)(void *arg), void *arg);

/*
 * A bad access made on purpose (kt_report.c): runs @fn(@arg) in a kthread
 * of its own, between the log lines KT_REPORT_BEGIN and KT_REPORT_END
 * (the host's log filter leaves out what is between them), and returns a
 * mask with bit i set when the console printed @texts[i] meanwhile.
 */
#define KT_REPORT_BEGIN "rslub_kunit: a report is expected {"
#define KT_REPORT_END "rslub_kunit: } the report was expected"
unsigned long kt_expect_report(struct kunit *test, void (*fn)(void *arg),
			       void *arg, const char *const *texts,
			       unsigned int n);

/* kt_expect_report(), expecting each of @texts (a failure names it). */
void kt_expect_all(struct kunit *test, void (*fn)(void *arg), void *arg,
		   const char *const *texts, unsigned int n);
#define KT_EXPECT_REPORT(test, fn, arg, ...)					\
	kt_expect_all(test, fn, arg, (const char *const[]){ __VA_ARGS__ },	\
		      ARRAY_SIZE(((const char *const[]){ __VA_ARGS__ })))

/*
 * Runs "/bin/sh -c <command>" as a usermode helper and returns its exit
 * status, or a negative error. For the files a test cannot write itself:
 * from a KUnit case in the test guests, filp_open() of KFENCE's parameter
 * in sysfs failed with -ENOENT where a usermode helper's shell reaches it,
 * and kmemleak's file has neither read_iter nor write_iter
 * (kernel_read() and kernel_write() refuse it).
 */
__printf(1, 2) int kt_sh(const char *fmt, ...);

/* A read and a write of the byte at @p, for kt_expect_report(). */
void kt_read_byte(void *p);
void kt_write_byte(void *p);

#endif /* _RSLUB_KUNIT_H */
