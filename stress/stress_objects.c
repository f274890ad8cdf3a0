// SPDX-License-Identifier: GPL-2.0
/*
 * The caches of rslub_stress and their objects. Every object carries a
 * checksum: its first word is a tag (random bits, the allocating CPU, the
 * cache index), the rest a pseudo-random stream seeded by the tag and the
 * object's address, written at allocation and checked at free; objects of
 * a constructor cache are checked for the constructed state at allocation
 * and restored to it before free. The exchange ring hands objects from one
 * context to another, so that what one CPU allocates another frees.
 */
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>

#include "rslub.h"
#include "stress.h"

const char *const stress_ctx_name[NR_CTX] = { "thread", "hardirq", "softirq" };

struct scache stress_caches[MAX_CACHES];

static DEFINE_SPINLOCK(xchg_lock);
static struct obj xchg_ring[XCHG_SLOTS];
static unsigned int xchg_head, xchg_count;

DEFINE_PER_CPU(unsigned long, stress_ops_on_cpu);
atomic_t stress_reports = ATOMIC_INIT(0);
atomic_long_t stress_ctor_calls = ATOMIC_LONG_INIT(0);

/* Writes the stream from state x over p[0, len). */
static void fill(u8 *p, unsigned int len, u64 x)
{
	unsigned int i;
	u64 w;

	x |= 1;
	for (i = 0; i + 8 <= len; i += 8)
		*(u64 *)(p + i) = rnd(&x);
	if (i < len) {
		w = rnd(&x);
		memcpy(p + i, &w, len - i);
	}
}

/*
 * Checks p[0, len) against the stream from state x. Returns the offset of
 * the first differing byte, or -1; *want and *got are that byte.
 */
static int check(const u8 *p, unsigned int len, u64 x, u8 *want, u8 *got)
{
	unsigned int i, j;
	u64 w;

	x |= 1;
	for (i = 0; i < len; i += 8) {
		w = rnd(&x);
		for (j = 0; j < 8 && i + j < len; j++) {
			if (p[i + j] != ((u8 *)&w)[j]) {
				*want = ((u8 *)&w)[j];
				*got = p[i + j];
				return i + j;
			}
		}
	}
	return -1;
}

#define CTOR_KEY 0xc7057a11c7057a11ull

static u64 ctor_state(const struct scache *c, const void *p)
{
	return CTOR_KEY ^ c->idx ^ (unsigned long)p;
}

static void ctor_fill(unsigned int idx, void *p)
{
	atomic_long_inc(&stress_ctor_calls);
	fill(p, stress_caches[idx].size, ctor_state(&stress_caches[idx], p));
}

static void ctor0(void *p) { ctor_fill(0, p); }
static void ctor1(void *p) { ctor_fill(1, p); }
static void ctor2(void *p) { ctor_fill(2, p); }
static void ctor3(void *p) { ctor_fill(3, p); }
static void ctor4(void *p) { ctor_fill(4, p); }
static void ctor5(void *p) { ctor_fill(5, p); }
static void ctor6(void *p) { ctor_fill(6, p); }
static void ctor7(void *p) { ctor_fill(7, p); }

static void (*const ctors[MAX_CACHES])(void *) = {
	ctor0, ctor1, ctor2, ctor3, ctor4, ctor5, ctor6, ctor7,
};

static void report(const struct scache *c, const void *p, const char *what,
		   int off, u8 want, u8 got, enum ctx ctx)
{
	if (atomic_inc_return(&stress_reports) > REPORTS_MAX)
		return;
	pr_err("rslub_stress: %s failure: cache %s object %p (size %u) offset %d: expected %02x found %02x (%s, cpu %u)\n",
	       what, c->name, p, c->size, off, want, got, stress_ctx_name[ctx],
	       raw_smp_processor_id());
	print_hex_dump(KERN_ERR, "rslub_stress: ", DUMP_PREFIX_OFFSET, 16, 1, p,
		       min(c->size, 64u), false);
}

bool on_alloc(struct stats *st, struct scache *c, void *p, gfp_t gfp,
	      u64 *rng, enum ctx ctx)
{
	unsigned int cpu = raw_smp_processor_id();
	u8 want = 0, got = 0;
	u64 tag;
	int off;

	if (!p) {
		if (gfpflags_allow_blocking(gfp))
			st->kernel_fail++;
		else
			st->atomic_fail++;
		return false;
	}
	st->allocs++;
	this_cpu_inc(stress_ops_on_cpu);
	if (!IS_ALIGNED((unsigned long)p, c->min_align)) {
		st->bad_align++;
		report(c, p, "alignment", 0, 0, 0, ctx);
	}
	if (c->ctor) {
		off = check(p, c->size, ctor_state(c, p), &want, &got);
		if (off >= 0) {
			st->bad_ctor++;
			report(c, p, "constructed-state", off, want, got, ctx);
		}
	} else if (gfp & __GFP_ZERO) {
		u8 *nz = memchr_inv(p, 0, c->size);

		if (nz) {
			st->bad_zero++;
			report(c, p, "__GFP_ZERO", nz - (u8 *)p, 0, *nz, ctx);
		}
	}
	tag = (rnd(rng) & ~0xffffffull) | ((u64)(cpu & 0xffff) << 8) | c->idx;
	*(u64 *)p = tag;
	fill((u8 *)p + 8, c->size - 8, tag ^ OBJ_KEY ^ (unsigned long)p);
	return true;
}

void on_free(struct stats *st, struct scache *c, void *p, enum ctx ctx)
{
	unsigned int cpu = raw_smp_processor_id(), from;
	u64 tag = *(u64 *)p;
	u8 want = 0, got = 0;
	int off;

	st->verified++;
	this_cpu_inc(stress_ops_on_cpu);
	if ((tag & 0xff) != c->idx) {
		st->bad_sum++;
		report(c, p, "tag", 0, c->idx, tag & 0xff, ctx);
	} else {
		off = check((u8 *)p + 8, c->size - 8,
			    tag ^ OBJ_KEY ^ (unsigned long)p, &want, &got);
		if (off >= 0) {
			st->bad_sum++;
			report(c, p, "checksum", off + 8, want, got, ctx);
		}
	}
	from = (tag >> 8) & 0xffff;
	if (from != cpu) {
		st->remote_cpu++;
		if (from < nr_cpu_ids && cpu_to_node(from) != cpu_to_node(cpu))
			st->remote_node++;
	}
	if (c->ctor)
		fill(p, c->size, ctor_state(c, p));
}

void free_one(struct stats *st, struct obj *o, enum ctx ctx)
{
	if (!o->p)
		return;
	on_free(st, &stress_caches[o->c], o->p, ctx);
	rslub_cache_free(stress_caches[o->c].s, o->p);
	st->frees++;
	o->p = NULL;
}

gfp_t pick_gfp(u64 *rng, struct scache *c, enum ctx ctx)
{
	gfp_t gfp = ctx == CTX_THREAD ? GFP_KERNEL : GFP_ATOMIC;
	u32 r = rnd_below(rng, 16);

	if (ctx == CTX_THREAD && r == 0)
		gfp = GFP_NOWAIT;
	else if (ctx == CTX_THREAD && r == 1)
		gfp = GFP_ATOMIC;
	if (!c->ctor && r >= 13)
		gfp |= __GFP_ZERO;
	return gfp;
}

void alloc_into(struct stats *st, struct obj *o, u64 *rng, enum ctx ctx)
{
	unsigned int ci = rnd_below(rng, stress_ncaches);
	struct scache *c = &stress_caches[ci];
	gfp_t gfp = pick_gfp(rng, c, ctx);
	void *p;
	int node;

	free_one(st, o, ctx);
	if (rnd_below(rng, 8) == 0) {
		node = (int)rnd_below(rng, nr_node_ids + 1) - 1;
		p = rslub_cache_alloc_node(c->s, gfp, node);
	} else {
		p = rslub_cache_alloc(c->s, gfp);
	}
	if (on_alloc(st, c, p, gfp, rng, ctx)) {
		o->p = p;
		o->c = ci;
	}
}

void push(struct stats *st, struct obj *o, enum ctx ctx)
{
	unsigned long flags;
	bool done = false;

	if (!o->p)
		return;
	spin_lock_irqsave(&xchg_lock, flags);
	if (xchg_count < XCHG_SLOTS) {
		xchg_ring[(xchg_head + xchg_count) % XCHG_SLOTS] = *o;
		xchg_count++;
		done = true;
	}
	spin_unlock_irqrestore(&xchg_lock, flags);
	if (done) {
		st->pushed++;
		o->p = NULL;
	} else {
		free_one(st, o, ctx);
	}
}

static bool pop(struct obj *o)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&xchg_lock, flags);
	if (xchg_count) {
		*o = xchg_ring[xchg_head];
		xchg_head = (xchg_head + 1) % XCHG_SLOTS;
		xchg_count--;
		got = true;
	}
	spin_unlock_irqrestore(&xchg_lock, flags);
	return got;
}

void pop_and_free(struct stats *st, unsigned int n, enum ctx ctx)
{
	struct obj o;

	while (n-- && pop(&o)) {
		st->popped++;
		free_one(st, &o, ctx);
	}
}

int make_caches(u64 *rng)
{
	static const unsigned int aligns[] = { 0, 0, 8, 16, 32, 64, 128, 256 };
	unsigned int i, shift;

	for (i = 0; i < stress_ncaches; i++) {
		struct scache *c = &stress_caches[i];

		c->idx = i;
		if (i == 0) {
			c->size = 16 + rnd_below(rng, 49);	/* small: many per slab */
		} else if (i == stress_ncaches - 1 && stress_ncaches >= 4) {
			c->size = 4097 + rnd_below(rng, 8192);	/* order-3+ slabs */
		} else if (i == 2 && stress_ncaches >= 5) {
			/* Slab headers outside the slabs (but with a ctor). */
			c->size = 16384;
		} else {
			shift = 4 + rnd_below(rng, 8);		/* 16 .. 4095 */
			c->size = (1u << shift) + rnd_below(rng, 1u << shift);
		}
		c->align = aligns[rnd_below(rng, ARRAY_SIZE(aligns))];
		c->hwcache = rnd_below(rng, 2);
		c->ctor = i % 3 == 1 || rnd_below(rng, 5) == 0;
		c->min_align = max(c->align, 8u);
		if (c->hwcache)
			c->min_align = max_t(unsigned int, c->min_align, cache_line_size());
		snprintf(c->name, sizeof(c->name), "rslub_stress_%u", i);
		c->s = rslub_cache_create(c->name, c->size, c->align,
					  c->hwcache ? SLAB_HWCACHE_ALIGN : 0,
					  c->ctor ? ctors[i] : NULL);
		if (IS_ERR(c->s)) {
			int ret = PTR_ERR(c->s);

			pr_err("rslub_stress: FAIL creating cache %s (size %u align %u): %d\n",
			       c->name, c->size, c->align, ret);
			c->s = NULL;
			return ret;
		}
		pr_info("rslub_stress: cache %s size=%u align=%u hwcache_align=%d ctor=%d objs_per_slab=%lld order=%lld\n",
			c->name, c->size, c->align, c->hwcache, c->ctor,
			rslub_cache_get(c->s, "objs_per_slab"),
			rslub_cache_get(c->s, "order"));
	}
	return 0;
}

