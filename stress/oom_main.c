// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_oom: rslub when memory runs out (scripts/guest/oom.sh).
 *
 * test=create: systematic fault injection. task->fail_nth (the per-task
 * form of the kernel's fault injection, /proc/<pid>/fail-nth) makes the Nth
 * failslab or fail_page_alloc check of this task fail. Every cache is
 * created with N = 1, 2, ... until a create makes fewer than N requests, so
 * each allocation rslub_cache_create makes (registry, cache, nodes, per-CPU
 * area, sysfs directory and its kernfs nodes) fails once. Each attempt must
 * give a working cache or ERR_PTR(-ENOMEM) with nothing left behind: no
 * sysfs directory, the name free again (the next attempt would get -EEXIST),
 * no page. Then the random_freelist tunable, single allocations (sleeping,
 * atomic, on a node) and a bulk allocation, each failed at one page request:
 * NULL, -ENOMEM or false, with nothing half-allocated. Needs failslab and
 * fail_page_alloc with ignore-gfp-wait=N and fail_page_alloc min-order=0.
 *
 * test=pressure: real memory exhaustion, for a small-memory VM.
 *   fill: three caches are filled round-robin with GFP_KERNEL |
 *   __GFP_RETRY_MAYFAIL (reclaim hard, no OOM killer) until each returns
 *   NULL, then GFP_NOWAIT and a bulk allocation are tried on the full
 *   system; every object is stamped and verified when freed; after shrink
 *   and destroy rslub holds no page.
 *   shrinker: a cache with max_empty=1000 keeps hundreds of empty slabs;
 *   a hog then takes pages until reclaim runs rslub's shrinker, while a
 *   kthread keeps allocating from another cache. The empty slabs must go
 *   back (the cache's empty_cache_reclaim counts exactly the ones that
 *   went), allocation must keep working, and the cache must allocate again
 *   afterwards.
 *
 * Each check prints "rslub_oom: PASS <check> <figures>" or
 * "rslub_oom: FAIL <check>: <why>"; init returns -EIO if any failed.
 *
 * This file holds the parameters, the verdict lines and init; the tests
 * are in oom_create.c and oom_pressure.c, and oom.h is what they share.
 */
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/string.h>

#include "oom.h"

static char *test = "create";
module_param(test, charp, 0444);
MODULE_PARM_DESC(test, "create (systematic injected failures) or pressure (a small-memory VM)");

static unsigned int rounds = 1;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "test=pressure: how many times the fill and shrinker checks run");

static unsigned int failed_checks;

__printf(2, 3) void pass(const char *check, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("rslub_oom: PASS %s %pV\n", check, &vaf);
	va_end(args);
}

__printf(2, 3) void fail(const char *check, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("rslub_oom: FAIL %s: %pV\n", check, &vaf);
	va_end(args);
	failed_checks++;
}

static int __init rslub_oom_init(void)
{
	unsigned int r;

	if (!strcmp(test, "create")) {
		test_create();
	} else if (!strcmp(test, "pressure")) {
		for (r = 1; r <= max(rounds, 1u); r++) {
			test_fill(r);
			test_shrinker(r);
		}
	} else {
		pr_err("rslub_oom: FAIL test=%s: not create or pressure\n", test);
		return -EINVAL;
	}
	if (failed_checks) {
		pr_err("rslub_oom: done test=%s, %u checks failed\n", test, failed_checks);
		return -EIO;
	}
	pr_info("rslub_oom: done test=%s\n", test);
	return 0;
}
module_init(rslub_oom_init);

static void __exit rslub_oom_exit(void)
{
}
module_exit(rslub_oom_exit);

MODULE_DESCRIPTION("rslub out of memory: injected failures and real pressure");
MODULE_LICENSE("GPL");
