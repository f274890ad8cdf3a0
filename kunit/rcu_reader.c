// SPDX-License-Identifier: GPL-2.0
/*
 * The RCU reader of the SLAB_TYPESAFE_BY_RCU cases (rslub_api on an
 * rslub cache, rslub_serve on a served kernel cache): a kthread inside
 * one read section reads a word of an object while the test frees the
 * object, allocates and frees again, and shrinks the cache. It counts its
 * reads and every value other than the two the test wrote; the test
 * asserts on those counts after letting it go.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/processor.h>
#include <linux/rcupdate.h>

#include "rslub_kunit.h"

struct kt_rcu_reader {
	unsigned long *word;
	unsigned long ok[2];
	struct completion in, out;
	atomic_t leave;
	unsigned long reads, bad;
};

static int kt_rcu_reader_fn(void *p)
{
	struct kt_rcu_reader *r = p;

	rcu_read_lock();
	complete(&r->in);
	while (!atomic_read(&r->leave)) {
		unsigned long v = READ_ONCE(*r->word);

		if (v != r->ok[0] && v != r->ok[1])
			r->bad++;
		r->reads++;
		cpu_relax();
	}
	rcu_read_unlock();
	complete(&r->out);
	return 0;
}

struct kt_rcu_reader *kt_rcu_reader_start(struct kunit *test, unsigned long *word)
{
	struct kt_rcu_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->word = word;
	r->ok[0] = KT_RCU_READER_FIRST;
	r->ok[1] = KT_RCU_READER_SECOND;
	*word = KT_RCU_READER_FIRST;
	init_completion(&r->in);
	init_completion(&r->out);
	t = kthread_run(kt_rcu_reader_fn, r, "rslub_kt_reader");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&r->in);
	return r;
}

void kt_rcu_reader_stop(struct kunit *test, struct kt_rcu_reader *r)
{
	atomic_set(&r->leave, 1);
	wait_for_completion(&r->out);
	KUNIT_EXPECT_GT(test, r->reads, 0ul);
	KUNIT_EXPECT_EQ(test, r->bad, 0ul);
}
