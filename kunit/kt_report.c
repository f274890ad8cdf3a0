// SPDX-License-Identifier: GPL-2.0
/*
 * A bad access made on purpose, and the report it must draw (KASAN,
 * KFENCE): kt_expect_report() runs the access in a kthread of its own and
 * returns which of the texts it was given the console printed meanwhile.
 *
 * A kthread, because a KASAN report in a KUnit test's own thread fails
 * that test (mm/kasan/report.c), and the API KASAN's own tests use to stop
 * that is built only with CONFIG_KASAN_KUNIT_TEST; the kthread collects,
 * the test thread asserts. The console is read the way KASAN's and
 * KFENCE's own tests read it, by a probe on the console tracepoint.
 *
 * The report is wanted, so the kernel log brackets it: KT_REPORT_BEGIN and
 * KT_REPORT_END lines around the access, which the host's log filter
 * (scripts/harness/judge.py, kernel_log_bad) leaves out. A report printed after the
 * access returns (none of KASAN's or KFENCE's do) would still count as bad.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/umh.h>
#include <trace/events/printk.h>

#include "rslub_kunit.h"

struct kt_run {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

struct kt_report {
	void (*fn)(void *arg);
	void *arg;
	const char *const *texts;
	unsigned int n;
	unsigned long seen;	/* bit i: texts[i] was printed */
};

static void probe_console(void *data, const char *buf, size_t len)
{
	struct kt_report *r = data;
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (strnstr(buf, r->texts[i], len))
			set_bit(i, &r->seen);
}

static int run_thread(void *data)
{
	struct kt_run *r = data;

	r->fn(r->arg);
	complete(&r->done);
	return 0;
}

/* fn(arg) in a kthread, waited for; or why no kthread ran it. */
static long run_in_kthread(void (*fn)(void *arg), void *arg)
{
	struct kt_run r = { .fn = fn, .arg = arg };
	struct task_struct *t;

	init_completion(&r.done);
	t = kthread_run(run_thread, &r, "rslub_kt");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion(&r.done);
	return 0;
}

void kt_run_kthread(struct kunit *test, void (*fn)(void *arg), void *arg)
{
	long err = run_in_kthread(fn, arg);

	KUNIT_ASSERT_EQ_MSG(test, err, 0, "kthread_run failed");
}

static void bracketed(void *data)
{
	struct kt_report *r = data;

	pr_info(KT_REPORT_BEGIN "\n");
	r->fn(r->arg);
	pr_info(KT_REPORT_END "\n");
}

unsigned long kt_expect_report(struct kunit *test, void (*fn)(void *arg),
			       void *arg, const char *const *texts,
			       unsigned int n)
{
	struct kt_report r = { .fn = fn, .arg = arg, .texts = texts, .n = n };
	long err;
	int ret;

	/*
	 * Without tracepoints (the bench flavor) the console cannot be read:
	 * the case is marked skipped and goes on, nothing seen. Not
	 * kunit_skip(): it never returns, and objtool would then take this
	 * function and its callers for dead ends.
	 */
	if (!IS_ENABLED(CONFIG_TRACEPOINTS)) {
		kunit_mark_skipped(test, "needs CONFIG_TRACEPOINTS to read the console");
		return 0;
	}
	KUNIT_ASSERT_LE(test, n, BITS_PER_LONG);
	ret = register_trace_console(probe_console, &r);
	KUNIT_ASSERT_EQ(test, ret, 0);
	err = run_in_kthread(bracketed, &r);
	unregister_trace_console(probe_console, &r);
	/* No probe still reads r (on this stack) once this returns. */
	tracepoint_synchronize_unregister();
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "kthread_run failed");
	return r.seen;
}

void kt_expect_all(struct kunit *test, void (*fn)(void *arg), void *arg,
		   const char *const *texts, unsigned int n)
{
	unsigned long seen = kt_expect_report(test, fn, arg, texts, n);
	unsigned int i;

	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		return;	/* skipped: nothing can have been seen */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE_MSG(test, seen & BIT(i), "not printed: \"%s\"", texts[i]);
}

noinline void kt_read_byte(void *p)
{
	READ_ONCE(*(u8 *)p);
}

noinline void kt_write_byte(void *p)
{
	WRITE_ONCE(*(u8 *)p, 0x5a);
}

int kt_sh(const char *fmt, ...)
{
	char *argv[4], *envp[2];
	va_list ap;
	int ret;

	envp[0] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	envp[1] = NULL;
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[3] = NULL;
	va_start(ap, fmt);
	argv[2] = kvasprintf(GFP_KERNEL, fmt, ap);
	va_end(ap);
	if (!argv[2])
		return -ENOMEM;
	ret = call_usermodehelper(argv[0], argv, envp, UMH_WAIT_PROC);
	kfree(argv[2]);
	return ret < 0 ? ret : ret >> 8;
}
