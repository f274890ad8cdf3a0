// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for /sys/kernel/rslub/<cache>/: the directory follows the
 * cache's life, attributes read in the in-tree formats, statistics clear on
 * "0", tunables change behaviour, and bad writes are refused with -EINVAL
 * and change nothing.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rslub.h"

#define ATTR_MAX 512

/*
 * A private sysfs mount: KUnit runs in a kthread, whose root need not be
 * the root where userspace mounted /sys.
 */
static struct vfsmount *sysfs_mnt;

static int sysfs_suite_init(struct kunit_suite *suite)
{
	struct file_system_type *type = get_fs_type("sysfs");

	if (!type)
		return -ENODEV;
	/* sysfs is built in: get_fs_type() took no module reference. */
	sysfs_mnt = vfs_kern_mount(type, 0, "sysfs", NULL);
	return PTR_ERR_OR_ZERO(sysfs_mnt);
}

static void sysfs_suite_exit(struct kunit_suite *suite)
{
	if (!IS_ERR_OR_NULL(sysfs_mnt))
		kern_unmount(sysfs_mnt);
}

static struct file *open_attr(const char *cache, const char *attr, int flags)
{
	char path[128];

	snprintf(path, sizeof(path), "kernel/rslub/%s/%s", cache, attr);
	return file_open_root_mnt(sysfs_mnt, path, flags, 0);
}

/* Reads an attribute into buf (NUL-terminated); returns length or -errno. */
static ssize_t read_attr(const char *cache, const char *attr, char *buf)
{
	struct file *f = open_attr(cache, attr, O_RDONLY);
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, ATTR_MAX - 1, &pos);
	filp_close(f, NULL);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static ssize_t write_attr(const char *cache, const char *attr, const char *s,
			  size_t len)
{
	struct file *f = open_attr(cache, attr, O_WRONLY);
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, s, len, &pos);
	filp_close(f, NULL);
	return n;
}

static long long read_num(struct kunit *test, const char *cache, const char *attr)
{
	char *buf = kunit_kzalloc(test, ATTR_MAX, GFP_KERNEL);
	long long v = -1;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_GT(test, read_attr(cache, attr, buf), 0);
	/* The first number: "<n>", "<n> N0=..", "<n> C0=..", "<n>(<m>)". */
	buf[strcspn(buf, "\t\n (")] = '\0';
	KUNIT_EXPECT_EQ(test, kstrtoll(buf, 10, &v), 0);
	return v;
}

static void directory_follows_cache_life(struct kunit *test)
{
	struct rslub_cache *s = rslub_cache_create("rslub-f-life", 100, 0,
						   SLAB_HWCACHE_ALIGN, NULL);
	char *buf = kunit_kzalloc(test, ATTR_MAX, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-life", "object_size"), 100);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-life", "hwcache_align"), 1);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-life", "objs_per_slab"),
			rslub_cache_get(s, "objs_per_slab"));
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-life", "slab_size"),
			rslub_cache_get(s, "slab_size"));
	/* No ctor: the file is empty, like in-tree. */
	KUNIT_EXPECT_EQ(test, read_attr("rslub-f-life", "ctor", buf), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
	KUNIT_EXPECT_EQ(test, read_attr("rslub-f-life", "object_size", buf),
			(ssize_t)-ENOENT);
}

static void stats_read_in_slub_stats_format_and_clear(struct kunit *test)
{
	struct rslub_cache *s = rslub_cache_create("rslub-f-stats", 64, 0, 0, NULL);
	char *buf = kunit_kzalloc(test, ATTR_MAX, GFP_KERNEL);
	long long total;
	int i, cpu, cpus = 0;
	void *o;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	/*
	 * Events on every online CPU (the thread pinned to each in turn), so
	 * a clear that misses any CPU's share leaves a non-zero total.
	 */
	for_each_online_cpu(cpu) {
		if (set_cpus_allowed_ptr(current, cpumask_of(cpu)))
			continue;
		cpus++;
		for (i = 0; i < 100; i++) {
			o = rslub_cache_alloc(s, GFP_KERNEL);
			if (!o)
				break;
			rslub_cache_free(s, o);
		}
		KUNIT_EXPECT_EQ(test, i, 100);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	KUNIT_EXPECT_EQ(test, cpus, (int)num_online_cpus());
	total = read_num(test, "rslub-f-stats", "alloc_fastpath");
	KUNIT_EXPECT_EQ(test, total, rslub_cache_stat(s, "alloc_fastpath"));
	/* The first allocation on each CPU is slow, the others fast. */
	KUNIT_EXPECT_GE(test, total, 99LL * cpus);
	/* "<total> C<cpu>=<n> ...", like SLUB_STATS. */
	KUNIT_ASSERT_GT(test, read_attr("rslub-f-stats", "alloc_fastpath", buf), 0);
	KUNIT_EXPECT_NOT_NULL(test, strstr(buf, " C"));
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-stats", "alloc_fastpath", "0\n", 2),
			(ssize_t)2);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-stats", "alloc_fastpath"), 0);
	/* Only 0 clears a statistic. */
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-stats", "alloc_slowpath", "5", 1),
			(ssize_t)-EINVAL);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void bad_writes_are_refused_and_change_nothing(struct kunit *test)
{
	static const char *const bad[] = { "\n", "abc", "-1", "+3", " 5",
					   "5 ", "1.5", "0x10", "5\n\n",
					   "4294967296", "99999999999999999999" };
	static const char *const knobs[] = { "cpu_partial", "min_partial",
					     "max_empty" };
	struct rslub_cache *s = rslub_cache_create("rslub-f-bad", 64, 0, 0, NULL);
	char *longbuf = kunit_kzalloc(test, 2048, GFP_KERNEL);
	int i, k;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, longbuf);
	memset(longbuf, '7', 2047);
	for (k = 0; k < ARRAY_SIZE(knobs); k++) {
		long long before = rslub_cache_get(s, knobs[k]);

		for (i = 0; i < ARRAY_SIZE(bad); i++)
			KUNIT_EXPECT_EQ_MSG(test,
					    write_attr("rslub-f-bad", knobs[k], bad[i],
						       strlen(bad[i])),
					    (ssize_t)-EINVAL, "%s <- '%s'",
					    knobs[k], bad[i]);
		KUNIT_EXPECT_EQ(test, write_attr("rslub-f-bad", knobs[k], longbuf,
						 2047), (ssize_t)-EINVAL);
		/* Out of range for the knob. */
		KUNIT_EXPECT_EQ(test, write_attr("rslub-f-bad", knobs[k],
						 "100001", 6), (ssize_t)-EINVAL);
		KUNIT_EXPECT_EQ(test, rslub_cache_get(s, knobs[k]), before);
	}
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-bad", "shrink", "2", 1),
			(ssize_t)-EINVAL);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-bad", "validate", "yes", 3),
			(ssize_t)-EINVAL);
	/* Read-only files cannot be opened for writing. */
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-bad", "objects", "1", 1),
			(ssize_t)-EACCES);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static ssize_t write_root(const char *attr, const char *s, size_t len)
{
	char path[128];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "kernel/rslub/%s", attr);
	f = file_open_root_mnt(sysfs_mnt, path, O_WRONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, s, len, &pos);
	filp_close(f, NULL);
	return n;
}

/*
 * Every writable file with every kind of bad string, and each just out of
 * its range: -EINVAL, and the file's state unchanged (the tunable keeps
 * its value, no statistic cleared, no shrink or validate ran).
 */
static void every_writable_file_refuses_bad_strings(struct kunit *test)
{
	static const char *const bad[] = { "\n", "abc", "-1", "-0", "+1",
					   " 1", "1 ", "1\t", "1.5", "1e3",
					   "0x1", "01x", "1\n\n", "1\n2",
					   "4294967296", "99999999999999999999" };
	static const struct { const char *file, *over; } files[] = {
		{ "cpu_partial", "100001" }, { "min_partial", "1001" },
		{ "max_empty", "1001" }, { "random_freelist", "2" },
		{ "shrink", "0" }, { "validate", "2" },
		{ "alloc_fastpath", "1" },
	};
	const char *c = "rslub-f-every";
	struct rslub_cache *s = rslub_cache_create(c, 64, 0, 0, NULL);
	long long cp, mp, me, rf, fast, empty;
	void *p[8];
	int i, f;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	/* Empty slabs kept, statistics non-zero: a shrink or clear shows. */
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 8, p));
	rslub_cache_free_bulk(s, 8, p);
	p[0] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	rslub_cache_free(s, p[0]);
	KUNIT_ASSERT_EQ(test, rslub_cache_shrink(s), 0);
	p[0] = rslub_cache_alloc(s, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	rslub_cache_free(s, p[0]);
	cp = rslub_cache_get(s, "cpu_partial");
	mp = rslub_cache_get(s, "min_partial");
	me = rslub_cache_get(s, "max_empty");
	rf = rslub_cache_get(s, "random_freelist");
	fast = rslub_cache_stat(s, "alloc_fastpath");
	empty = rslub_cache_get(s, "slabs");
	KUNIT_ASSERT_GT(test, fast, 0LL);
	KUNIT_ASSERT_GT(test, empty, 0LL);
	for (f = 0; f < ARRAY_SIZE(files); f++) {
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			KUNIT_EXPECT_EQ_MSG(test, write_attr(c, files[f].file, bad[i],
							     strlen(bad[i])),
					    (ssize_t)-EINVAL, "%s <- '%s'",
					    files[f].file, bad[i]);
		/* An empty write never reaches rslub: sysfs returns 0. */
		KUNIT_EXPECT_EQ_MSG(test, write_attr(c, files[f].file, "", 0),
				    (ssize_t)0, "%s <- ''", files[f].file);
		KUNIT_EXPECT_EQ_MSG(test, write_attr(c, files[f].file, files[f].over,
						     strlen(files[f].over)),
				    (ssize_t)-EINVAL, "%s <- '%s'", files[f].file,
				    files[f].over);
	}
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "cpu_partial"), cp);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "min_partial"), mp);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "max_empty"), me);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "random_freelist"), rf);
	KUNIT_EXPECT_EQ(test, rslub_cache_stat(s, "alloc_fastpath"), fast);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "slabs"), empty);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "errors"), 0);
	/* The limits themselves are accepted. */
	KUNIT_EXPECT_EQ(test, write_attr(c, "cpu_partial", "100000", 6), (ssize_t)6);
	KUNIT_EXPECT_EQ(test, write_attr(c, "min_partial", "1000", 4), (ssize_t)4);
	KUNIT_EXPECT_EQ(test, write_attr(c, "max_empty", "1000\n", 5), (ssize_t)5);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "max_empty"), 1000);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

/*
 * Read-only files refuse to open for writing, write-only ones for
 * reading: -EACCES from sysfs itself, before rslub sees anything.
 */
static void read_only_and_write_only_files_refuse_access(struct kunit *test)
{
	static const char *const ro[] = {
		"object_size", "slab_size", "objs_per_slab", "order", "align",
		"objects", "objects_partial", "slabs", "partial", "cpu_slabs",
		"slabs_cpu_partial", "ctor", "hwcache_align", "empty_slabs",
		"errors", "sanity_checks", "red_zone", "poison", "store_user",
		"freelist_harden", "isolated_slabs",
	};
	static const char *const root[] = { "default_cpu_partial",
					    "default_min_partial",
					    "default_max_empty" };
	const char *c = "rslub-f-ro";
	struct rslub_cache *s = rslub_cache_create(c, 64, 0, 0, NULL);
	struct rslub_cache *s2;
	long long per_slab;
	char *buf = kunit_kzalloc(test, ATTR_MAX, GFP_KERNEL);
	long long before[ARRAY_SIZE(root)];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(ro); i++)
		KUNIT_EXPECT_EQ_MSG(test, write_attr(c, ro[i], "0", 1),
				    (ssize_t)-EACCES, "%s", ro[i]);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "object_size"), 64);
	KUNIT_EXPECT_EQ(test, read_attr(c, "shrink", buf), (ssize_t)-EACCES);
	KUNIT_EXPECT_EQ(test, read_attr(c, "validate", buf), (ssize_t)-EACCES);
	for (i = 0; i < ARRAY_SIZE(root); i++) {
		struct file *f;
		loff_t pos = 0;
		char path[64];
		ssize_t n;

		snprintf(path, sizeof(path), "kernel/rslub/%s", root[i]);
		f = file_open_root_mnt(sysfs_mnt, path, O_RDONLY, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(f));
		n = kernel_read(f, buf, ATTR_MAX - 1, &pos);
		filp_close(f, NULL);
		KUNIT_ASSERT_GT(test, n, (ssize_t)0);
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		KUNIT_ASSERT_EQ(test, kstrtoll(buf, 10, &before[i]), 0);
		KUNIT_EXPECT_EQ_MSG(test, write_root(root[i], "5", 1),
				    (ssize_t)-EACCES, "%s", root[i]);
	}
	/* New caches still get the same defaults. */
	per_slab = rslub_cache_get(s, "objs_per_slab");
	s2 = rslub_cache_create("rslub-f-ro2", 64, 0, 0, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s2);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s2, "max_empty"),
			rslub_cache_get(s, "max_empty"));
	if (before[2] >= 0)
		KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "max_empty"), before[2]);
	else	/* -1: room for the in-tree barn's 10 x 60 objects of 64 B */
		KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "max_empty"),
				max(2LL, DIV_ROUND_UP(600LL, per_slab)));
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s2), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static void tunables_written_through_sysfs_take_effect(struct kunit *test)
{
	struct rslub_cache *s = rslub_cache_create("rslub-f-tune", 512, 0, 0, NULL);
	void *p[64];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-tune", "cpu_partial", "0\n", 2),
			(ssize_t)2);
	KUNIT_EXPECT_EQ(test, rslub_cache_get(s, "cpu_partial"), 0);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-tune", "min_partial", "0", 1),
			(ssize_t)1);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-tune", "max_empty", "64", 2),
			(ssize_t)2);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-tune", "max_empty"), 64);
	KUNIT_ASSERT_TRUE(test, rslub_cache_alloc_bulk(s, GFP_KERNEL, 64, p));
	for (i = 0; i < 64; i++)
		rslub_cache_free(s, p[i]);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-tune", "shrink", "1", 1),
			(ssize_t)1);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-tune", "empty_slabs"), 0);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-tune", "slabs"), 0);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-tune", "slabs_cpu_partial"), 0);
	KUNIT_EXPECT_EQ(test, write_attr("rslub-f-tune", "validate", "1", 1),
			(ssize_t)1);
	KUNIT_EXPECT_EQ(test, read_num(test, "rslub-f-tune", "errors"), 0);
	KUNIT_EXPECT_EQ(test, rslub_cache_destroy(s), 0);
}

static struct kunit_case rslub_sysfs_cases[] = {
	KUNIT_CASE(directory_follows_cache_life),
	KUNIT_CASE(stats_read_in_slub_stats_format_and_clear),
	KUNIT_CASE(bad_writes_are_refused_and_change_nothing),
	KUNIT_CASE(tunables_written_through_sysfs_take_effect),
	KUNIT_CASE(every_writable_file_refuses_bad_strings),
	KUNIT_CASE(read_only_and_write_only_files_refuse_access),
	{}
};

static struct kunit_suite rslub_sysfs_suite = {
	.name = "rslub_sysfs",
	.suite_init = sysfs_suite_init,
	.suite_exit = sysfs_suite_exit,
	.test_cases = rslub_sysfs_cases,
};

kunit_test_suite(rslub_sysfs_suite);
