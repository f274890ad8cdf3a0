// SPDX-License-Identifier: GPL-2.0
/*
 * The cost model's calibration program: loops whose right counts are known
 * by construction, each between two marks of include/rslub_mark.h. It runs
 * in a guest of 4 vCPUs on 2 NUMA nodes (vCPUs 0-1 on node 0, 2-3 on node
 * 1) under the plugin; costmodel-calib (tools/costmodel/model) checks the
 * counts file against the profile.
 *
 * Each measured region ends at a mark whose id is (TEST << 32) | N, N the
 * operations in the loop; the mark before a loop has id 0 (discarded).
 * Every test runs ROUNDS times: the guest's timer ticks (and what they
 * start) land in some rounds, and the checker judges the quietest one.
 *   1 CX16      N unlocked cmpxchg16b on one line
 *   2 CX16_LOCK the same loop with the lock prefix
 *   3 BOUNCE    one line moved N times between vCPU 0 and vCPU 1 (a node),
 *               the two taking turns
 *   5 BOUNCE_X  the same between vCPU 0 and vCPU 2 (two nodes)
 *   6 CHASE_DRAM N hops of a pointer chase through 4x the LLC
 *   7 CHASE_L1  N hops through 8 KiB
 *   8 STR_STOS  N rep stosb of 4 KiB on a buffer in the L1
 *   9 STR_MOVS  N rep movsb of 4 KiB between two buffers in the L1
 * A hand-over: each side spins on a locked compare-and-swap that succeeds
 * only on its turn, with `pause` between tries (under TCG, pause hands the
 * host thread to the next vCPU). Each successful swap takes the line from
 * the other side: one transfer per hand-over.
 *
 * The same run holds the programs of the validation table (model/src/
 * validate.rs, docs/benchmarks.md), each reproducing a published hardware
 * measurement (the guest's caches put each at the level it measures):
 *  17-18 V_CHASE    N hops of a pointer chase through 128 KiB and 4 MiB
 *                   (an L2 and an L3 chase; CHASE_L1 and CHASE_DRAM are
 *                   the others)
 *  20+k V_LANES     k = 1, 2, 4, 8 chases at once through CHASE_DRAM's
 *                   buffer, taking turns, N hops in all
 *  32-34 V_WRITES   N stores of 8 bytes at pseudo-random lines of 128 KiB,
 *                   4 MiB and CHASE_DRAM's buffer (their line numbers made
 *                   beforehand, new ones each round)
 *
 * And the contention programs (model/src/order.rs: the vCPUs' events in
 * modeled time), each with k = 2 threads (vCPUs 0-1, a node) and k = 4
 * (vCPUs 0-3, two nodes), all running at once, N updates in all:
 *  40+k C_SHARE     each thread lock-adds its own counter, the counters in
 *                   one line (false sharing)
 *  48+k C_PLAIN     the same with plain increments (a load and a store)
 *  56+k C_XADD      every thread lock-xadds one counter
 *  64+k C_OWN       each thread lock-adds a counter on a line of its own
 *  72+k C_LOCK      a spinlock (test and test-and-set, `pause` while it is
 *                   held): N critical sections of CS_WORK dependent adds
 *                   and one shared increment, taken in turn by whoever wins;
 *                   also with k = 1, the sections' time without waiting
 *
 * Built by `make costmodel` (static: the guest runs it over 9p).
 * Usage: calib [LLC_BYTES]   (default 16 MiB, the server profile's LLC)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../../include/rslub_mark.h"

#define ID(test, n) (((unsigned long long)(test) << 32) | (n))

enum { CX16 = 1, CX16_LOCK, BOUNCE, BOUNCE_X = 5, CHASE_DRAM, CHASE_L1, STR_STOS, STR_MOVS };
enum { V_CHASE = 16, V_LANES = 20, V_WRITES = 32 };
enum { C_SHARE = 40, C_PLAIN = 48, C_XADD = 56, C_OWN = 64, C_LOCK = 72 };

#define ROUNDS 5

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "calib: cannot run on CPU %d\n", cpu);
		exit(2);
	}
}

/* --- cmpxchg16b, unlocked and locked ------------------------------------- */

/* A line of its own (line_alloc): cmpxchg16b needs 16-byte alignment. */
static __uint128_t *pair;

static void *line_alloc(void)
{
	void *p = aligned_alloc(64, 64);

	if (!p) {
		fprintf(stderr, "calib: no memory\n");
		exit(2);
	}
	memset(p, 0, 64);
	return p;
}

static void cx16_loop(unsigned int n, int locked)
{
	uint64_t lo = 0, hi = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		/* Succeeds every time: the old value is the current one. */
		if (locked)
			asm volatile("lock cmpxchg16b %[m]"
				     : [m] "+m"(*pair), "+a"(lo), "+d"(hi)
				     : "b"(lo + 1), "c"(hi) : "cc");
		else
			asm volatile("cmpxchg16b %[m]"
				     : [m] "+m"(*pair), "+a"(lo), "+d"(hi)
				     : "b"(lo + 1), "c"(hi) : "cc");
		lo++;
	}
}

static void cx16(unsigned int n)
{
	int r;

	cx16_loop(n, 0);	/* warm: the line in the L1 */
	for (r = 0; r < ROUNDS; r++) {
		rslub_mark(0);
		cx16_loop(n, 0);
		rslub_mark(ID(CX16, n));
		cx16_loop(n, 1);
		rslub_mark(ID(CX16_LOCK, n));
	}
}

/* --- one line bounced between two vCPUs ---------------------------------- */

/* The line moved between the two sides (line_alloc). */
static uint64_t *ball;
static unsigned int handovers;	/* per side */

struct side {
	int cpu, parity;
	pthread_barrier_t *go;
};

static void *bounce_side(void *arg)
{
	struct side *s = arg;
	uint64_t v;

	pin(s->cpu);
	pthread_barrier_wait(s->go);
	/* Side 0 moves the ball from even to odd values, side 1 back. */
	for (v = s->parity; v < 2ull * handovers; v += 2)
		while (!__sync_bool_compare_and_swap(ball, v, v + 1))
			__builtin_ia32_pause();
	pthread_barrier_wait(s->go);
	return NULL;
}

/* n moves of the ball: n / 2 by each side, taking turns. */
static void bounce(int test, int cpu_a, int cpu_b, unsigned int n)
{
	pthread_barrier_t go;
	struct side b = { cpu_b, 1, &go };
	pthread_t t;
	uint64_t v;
	int r;

	pin(cpu_a);
	pthread_barrier_init(&go, NULL, 2);
	handovers = n / 2;
	for (r = 0; r < ROUNDS; r++) {
		__atomic_store_n(ball, 0, __ATOMIC_RELEASE);
		if (pthread_create(&t, NULL, bounce_side, &b)) {
			fprintf(stderr, "calib: no thread\n");
			exit(2);
		}
		/* Both sides are spinning before the first move is counted. */
		pthread_barrier_wait(&go);
		rslub_mark(0);
		/* This thread is side 0, between the marks. */
		for (v = 0; v < 2ull * handovers; v += 2)
			while (!__sync_bool_compare_and_swap(ball, v, v + 1))
				__builtin_ia32_pause();
		/* Side 1's last move, still inside the region. */
		while (__atomic_load_n(ball, __ATOMIC_ACQUIRE) != 2ull * handovers)
			__builtin_ia32_pause();
		rslub_mark(ID(test, n));
		pthread_barrier_wait(&go);
		pthread_join(t, NULL);
	}
	pthread_barrier_destroy(&go);
}

/* --- pointer chase ------------------------------------------------------- */

struct line {
	struct line *next;
	char pad[56];
};

static struct line *chase_buf;

/* A cyclic permutation of `lines` lines (Sattolo's shuffle, fixed seed). */
static struct line *chase_build(size_t lines)
{
	size_t *order = malloc(lines * sizeof(*order)), i;
	uint64_t x = 88172645463325252ull;
	struct line *b;

	b = mmap(NULL, lines * sizeof(*b), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!order || b == MAP_FAILED) {
		fprintf(stderr, "calib: no memory for %zu lines\n", lines);
		exit(2);
	}
	for (i = 0; i < lines; i++)
		order[i] = i;
	for (i = lines - 1; i > 0; i--) {
		size_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % i;
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < lines; i++)
		b[order[i]].next = &b[order[(i + 1) % lines]];
	free(order);
	return b;
}

static struct line *chase_run(struct line *p, unsigned int n)
{
	while (n--)
		p = p->next;
	return p;
}

/* N hops in each round along the cycle of `b` (of `bytes`), after a warm pass. */
static void chase_on(struct line *b, int test, size_t bytes, unsigned int n)
{
	struct line *p;
	int r;

	/*
	 * One pass to warm whatever fits; the rounds go on along the cycle,
	 * fewer hops in all than it has lines: every hop of the big buffer is
	 * to a line last touched a whole pass ago.
	 */
	p = chase_run(b, bytes / sizeof(struct line));
	for (r = 0; r < ROUNDS; r++) {
		rslub_mark(0);
		p = chase_run(p, n);
		rslub_mark(ID(test, n));
	}
	/* Keep the result alive. */
	chase_buf = p;
}

static void chase(int test, size_t bytes, unsigned int n)
{
	struct line *b = chase_build(bytes / sizeof(struct line));

	chase_on(b, test, bytes, n);
	munmap(b, bytes);
}

/* --- rep string instructions -------------------------------------------- */

/*
 * Under -icount QEMU runs a rep one element per execution; the model folds
 * them into one instruction and its lines (model/src/strings.rs): each
 * operation here is one instruction (and the loop's few), 4096 bytes, 64
 * line accesses for stosb and 128 for movsb.
 */
static void rep_stosb(void *dst, size_t n)
{
	asm volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
}

static void rep_movsb(void *dst, const void *src, size_t n)
{
	asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void strings(unsigned int n)
{
	unsigned char *src = aligned_alloc(4096, 4096);
	unsigned char *dst = aligned_alloc(4096, 4096);
	unsigned int i;
	int r;

	if (!src || !dst) {
		fprintf(stderr, "calib: no memory\n");
		exit(2);
	}
	/* Warm: both buffers in the L1 (8 KiB of its 48). */
	memset(src, 1, 4096);
	memset(dst, 0, 4096);
	for (r = 0; r < ROUNDS; r++) {
		rslub_mark(0);
		for (i = 0; i < n; i++)
			rep_stosb(dst, 4096);
		rslub_mark(ID(STR_STOS, n));
		for (i = 0; i < n; i++)
			rep_movsb(dst, src, 4096);
		rslub_mark(ID(STR_MOVS, n));
	}
	free(src);
	free(dst);
}

/* --- the validation table's programs ------------------------------------ */

/*
 * k chases through one cycle of lines, each starting a k-th of the way
 * along: each step of a lane waits for that lane's last load, the lanes
 * are independent (Lemire's "lanes").
 */
static struct line *lanes_run(struct line **cur, int k, unsigned int n)
{
	unsigned int i;
	int j;

	for (i = 0; i < n; i += k)
		for (j = 0; j < k; j++)
			cur[j] = cur[j]->next;
	return cur[0];
}

/*
 * Where each lane of each run starts, as (eighth of the cycle, offset in
 * lines): apart from each other and from what CHASE_DRAM's rounds left in
 * the LLC (the first eighth and some of the second), so that every hop
 * misses. A lane goes 5 * n / k hops (n = 8000: at most 40000).
 */
static const unsigned int lane_start[4][8][2] = {
	{ { 2, 0 } },						/* k = 1 */
	{ { 3, 0 }, { 4, 0 } },					/* k = 2 */
	{ { 2, 50000 }, { 3, 50000 }, { 4, 50000 }, { 5, 50000 } },	/* k = 4 */
	{ { 2, 70000 }, { 3, 70000 }, { 4, 70000 }, { 5, 70000 },	/* k = 8 */
	  { 2, 90000 }, { 3, 90000 }, { 4, 90000 }, { 5, 90000 } },
};

static void lanes(struct line *b, size_t bytes, unsigned int n)
{
	size_t lines = bytes / sizeof(struct line), i, eighth = lines / 8;
	size_t at[15], t;
	struct line *cur[4][8], **slot[15], **ts, *p = b;
	int r, x, k, j, m = 0, next = 0;

	/* The starts in the order of the cycle, then one walk to them all. */
	for (x = 0; x < 4; x++)
		for (j = 0; j < (1 << x); j++, m++) {
			at[m] = lane_start[x][j][0] * eighth + lane_start[x][j][1];
			slot[m] = &cur[x][j];
			for (k = m; k > 0 && at[k - 1] > at[k]; k--) {
				t = at[k];
				at[k] = at[k - 1];
				at[k - 1] = t;
				ts = slot[k];
				slot[k] = slot[k - 1];
				slot[k - 1] = ts;
			}
		}
	for (i = 0; next < m; i++, p = p->next)
		while (next < m && at[next] == i)
			*slot[next++] = p;
	/* On to the cycle's end: what the walk left in the LLC goes. */
	for (; i < lines; i++)
		p = p->next;
	chase_buf = p;
	for (x = 0; x < 4; x++) {
		k = 1 << x;
		for (r = 0; r < ROUNDS; r++) {
			rslub_mark(0);
			chase_buf = lanes_run(cur[x], k, n);
			rslub_mark(ID(V_LANES + k, n));
		}
	}
}

/*
 * Stores to pseudo-random lines of a region, their line numbers read in
 * order from an array made beforehand (as in Travis Downs's random-write
 * test): the stores depend on nothing, so an out-of-order core overlaps
 * their misses.
 */
static void writes_on(uint64_t *b, int test, size_t bytes, unsigned int n)
{
	uint32_t *idx = malloc((size_t)ROUNDS * n * sizeof(*idx));
	uint64_t x = 88172645463325252ull, mask = bytes / 64 - 1;
	unsigned int i;
	int r;

	if (!idx) {
		fprintf(stderr, "calib: no memory\n");
		exit(2);
	}
	for (i = 0; i < ROUNDS * n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* The first word of a line of the region (a power of two). */
		idx[i] = (x & mask) * 8;
	}
	for (r = 0; r < ROUNDS; r++) {
		uint32_t *ix = idx + (size_t)r * n;

		rslub_mark(0);
		/* A relaxed atomic store is a plain mov the compiler keeps. */
		for (i = 0; i < n; i++)
			__atomic_store_n(&b[ix[i]], i, __ATOMIC_RELAXED);
		rslub_mark(ID(test, n));
	}
	free(idx);
}

/* Writes to a region of its own, warmed first (whatever fits stays). */
static void writes(int test, size_t bytes, unsigned int n)
{
	uint64_t *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (b == MAP_FAILED) {
		fprintf(stderr, "calib: no memory for %zu bytes\n", bytes);
		exit(2);
	}
	memset(b, 1, bytes);
	writes_on(b, test, bytes, n);
	munmap(b, bytes);
}

/* --- contention: k threads at once ----------------------------------------- */

/* The critical section's work: dependent adds (about 2 instructions each). */
#define CS_WORK 200

struct crowd {
	int test, k;
	unsigned int per;	/* updates per thread */
	int ready;		/* threads spinning on go */
	int go;			/* set by thread 0 after its first mark */
	int done;		/* threads finished */
	uint64_t *words;	/* test's counters: see crowd_work */
	int lock;
};

struct member {
	struct crowd *c;
	int id;
};

static void spin_lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static uint64_t crowd_work(struct crowd *c, int id)
{
	uint64_t sum = 0, x = id;
	unsigned int i, j;

	switch (c->test - c->k) {
	case C_SHARE:	/* words 0..k-1: one line */
		for (i = 0; i < c->per; i++)
			__atomic_fetch_add(&c->words[id], 1, __ATOMIC_RELAXED);
		break;
	case C_PLAIN:	/* relaxed atomics: a plain load and a plain store */
		for (i = 0; i < c->per; i++)
			__atomic_store_n(&c->words[id],
					 __atomic_load_n(&c->words[id], __ATOMIC_RELAXED) + 1,
					 __ATOMIC_RELAXED);
		break;
	case C_XADD:	/* word 0 */
		for (i = 0; i < c->per; i++)
			sum += __atomic_fetch_add(&c->words[0], 1, __ATOMIC_RELAXED);
		break;
	case C_OWN:	/* word 8 * id: a line each */
		for (i = 0; i < c->per; i++)
			__atomic_fetch_add(&c->words[8 * id], 1, __ATOMIC_RELAXED);
		break;
	case C_LOCK:	/* word 0 the shared counter */
		for (i = 0; i < c->per; i++) {
			spin_lock(&c->lock);
			for (j = 0; j < CS_WORK; j++)
				asm volatile("add %1, %0" : "+r"(x) : "r"((uint64_t)j));
			c->words[0]++;
			spin_unlock(&c->lock);
		}
		break;
	}
	return sum + x;
}

static void *crowd_member(void *arg)
{
	struct member *m = arg;
	struct crowd *c = m->c;

	pin(m->id);
	/*
	 * Spin, not sleep, until go: a sleeping vCPU is idle to the model,
	 * and would begin its work only when QEMU next runs it.
	 */
	__atomic_fetch_add(&c->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	crowd_work(c, m->id);
	__atomic_fetch_add(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* n updates by k threads at once (n / k each), ROUNDS times. */
static void crowd(int test, int k, unsigned int n)
{
	static struct crowd c;
	struct member m[4];
	pthread_t t[4];
	int r, i;

	pin(0);
	c.words = aligned_alloc(64, 4 * 64);
	if (!c.words) {
		fprintf(stderr, "calib: no memory\n");
		exit(2);
	}
	c.test = test + k;
	c.k = k;
	c.per = n / k;
	for (r = 0; r < ROUNDS; r++) {
		memset(c.words, 0, 4 * 64);
		c.ready = 0;
		c.go = 0;
		c.done = 0;
		c.lock = 0;
		for (i = 1; i < k; i++) {
			m[i] = (struct member){ &c, i };
			if (pthread_create(&t[i], NULL, crowd_member, &m[i])) {
				fprintf(stderr, "calib: no thread\n");
				exit(2);
			}
		}
		/* Every thread spins on go before the region begins. */
		while (__atomic_load_n(&c.ready, __ATOMIC_ACQUIRE) != k - 1)
			__builtin_ia32_pause();
		rslub_mark(0);
		__atomic_store_n(&c.go, 1, __ATOMIC_RELEASE);
		crowd_work(&c, 0);
		__atomic_fetch_add(&c.done, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) != k)
			__builtin_ia32_pause();
		rslub_mark(ID(test + k, n));
		for (i = 1; i < k; i++)
			pthread_join(t[i], NULL);
		if (test == C_LOCK && c.words[0] != (uint64_t)c.per * k) {
			fprintf(stderr, "calib: the lock lost updates\n");
			exit(2);
		}
	}
	free(c.words);
}

int main(int argc, char **argv)
{
	size_t llc = argc > 1 ? strtoull(argv[1], NULL, 0) : 16u << 20;
	size_t big = 4 * llc;
	struct line *b;
	int k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pin(0);
	pair = line_alloc();
	ball = line_alloc();
	/*
	 * The DRAM buffer serves the chase, the lanes, then the writes. Built
	 * first, before the first mark arms the model: its pages' clearing
	 * and its shuffle are most of this program's accesses, and the model
	 * prices none of them (it did, at several times the cost).
	 */
	b = chase_build(big / sizeof(struct line));
	/*
	 * A line after each test (outside its marks): the VM's watcher judges
	 * a guest by its output, and a loaded host slows this one severalfold.
	 */
	cx16(20000);
	printf("calib: cx16 done\n");
	bounce(BOUNCE, 0, 1, 2000);
	bounce(BOUNCE_X, 0, 2, 2000);
	printf("calib: bounces done\n");
	chase_on(b, CHASE_DRAM, big, 40000);
	printf("calib: DRAM chase done\n");
	lanes(b, big, 8000);
	writes_on((uint64_t *)b, V_WRITES + 2, big, 20000);
	munmap(b, big);
	printf("calib: lanes and DRAM writes done\n");
	chase(CHASE_L1, 8 << 10, 40000);
	chase(V_CHASE + 1, 128 << 10, 40000);
	chase(V_CHASE + 2, 4 << 20, 40000);
	writes(V_WRITES, 128 << 10, 40000);
	writes(V_WRITES + 1, 4 << 20, 40000);
	printf("calib: chases and writes in the caches done\n");
	strings(200);
	printf("calib: strings done\n");
	for (k = 2; k <= 4; k += 2) {
		crowd(C_SHARE, k, 100000);
		crowd(C_PLAIN, k, 100000);
		crowd(C_XADD, k, 100000);
		crowd(C_OWN, k, 100000);
		crowd(C_LOCK, k, 2000);
		printf("calib: contention at %d threads done\n", k);
	}
	/* The lock alone: the time of a section without waiting. */
	crowd(C_LOCK, 1, 2000);
	printf("calib: contention done\n");
	printf("calib: done (llc %zu bytes)\n", llc);
	return chase_buf ? 0 : 1;
}
