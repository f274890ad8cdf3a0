// SPDX-License-Identifier: GPL-2.0
/*
 * The host machine's CPUs, for host tests of the core: threads stand in
 * for tasks, and a thread runs "on" a CPU while it holds that CPU's run
 * mutex, so one CPU executes one thread at a time, as in the kernel. The
 * CPU lock (irqs off) then needs no exclusion of its own. Preemption and
 * migration are simulated between reading the per-CPU pair and the
 * cmpxchg16b: the thread gives up its CPU and takes a random one, and
 * other threads may run on the old CPU meanwhile. That is exactly the
 * window the tid protects. Here too: the injected interrupts (at the k-th
 * interruptible shim call, or before a per-CPU cmpxchg16b), CPU hotplug,
 * the per-CPU operations and on_each_cpu.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "../shim.h"
#include "hooks.h"
#include "machine.h"

/*
 * A CPU's run mutex is robust: when a thread dies holding it, the next one
 * to enter gets it (and the recovery is counted) instead of waiting for
 * ever. A wait longer than CPU_WAIT_SECONDS means a thread is stuck on the
 * CPU: the process aborts with a line saying so, so a broken test fails in
 * seconds rather than at the outer timeout.
 */
#define CPU_WAIT_SECONDS 20
static pthread_mutex_t cpu_run[HOST_MAX_CPUS];
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;
static bool cpu_offline[HOST_MAX_CPUS];
static long cpus_recovered;
static __thread unsigned int cur_cpu;
static __thread bool on_cpu;
/* Interrupts off (CPU lock or node lock held), nesting depth. */
static __thread unsigned int irqs_off;
/* The interrupt at the k-th interruptible shim call. */
static __thread void (*irq_at_fn)(void *);
static __thread void *irq_at_arg;
static __thread unsigned long irq_at_countdown;
static __thread unsigned long irq_points;
/* In a simulated interrupt handler: it cannot migrate. */
static __thread bool in_irq;
static __thread uint64_t rng_state;
static unsigned int migrate_one_in;
static __thread void (*irq_hook)(void *);
static __thread void *irq_hook_arg;
static __thread unsigned int irq_hook_countdown;

static void init_locks(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	for (int i = 0; i < HOST_MAX_CPUS; i++)
		pthread_mutex_init(&cpu_run[i], &a);
	pthread_mutexattr_destroy(&a);
}

void host_cpus_init(void)
{
	pthread_once(&locks_once, init_locks);
}

/* Takes cpu's run mutex: see CPU_WAIT_SECONDS. */
static void lock_cpu(unsigned int cpu)
{
	struct timespec until;
	int ret;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CPU_WAIT_SECONDS;
	ret = pthread_mutex_timedlock(&cpu_run[cpu], &until);
	if (ret == EOWNERDEAD) {
		fprintf(stderr, "rslub host: CPU %u was held by a thread that died; released\n",
			cpu);
		pthread_mutex_consistent(&cpu_run[cpu]);
		__atomic_fetch_add(&cpus_recovered, 1, __ATOMIC_RELAXED);
	} else if (ret) {
		fprintf(stderr, "rslub host: CPU %u not released within %d s (%s): a thread is stuck on it; aborting\n",
			cpu, CPU_WAIT_SECONDS, strerror(ret));
		abort();
	}
}

long rslub_host_cpus_recovered(void)
{
	return __atomic_load_n(&cpus_recovered, __ATOMIC_RELAXED);
}

static bool is_online(unsigned int cpu)
{
	return cpu < host_nr_cpus && !__atomic_load_n(&cpu_offline[cpu], __ATOMIC_RELAXED);
}

/* cpu if it is online, else the next online CPU after it. */
static unsigned int online_from(unsigned int cpu)
{
	for (unsigned int i = 0; i < host_nr_cpus; i++)
		if (is_online((cpu + i) % host_nr_cpus))
			return (cpu + i) % host_nr_cpus;
	abort();	/* every CPU offline */
}

void rslub_host_set_online(unsigned int cpu, bool online)
{
	if (cpu < HOST_MAX_CPUS)
		__atomic_store_n(&cpu_offline[cpu], !online, __ATOMIC_RELAXED);
}

void rslub_host_irqs_disable(void)
{
	irqs_off++;
}

void rslub_host_irqs_enable(void)
{
	if (!irqs_off)
		abort();	/* unbalanced */
	irqs_off--;
}

void rslub_host_set_irq_at_call(void (*fn)(void *), void *arg, unsigned int k)
{
	irq_at_fn = fn;
	irq_at_arg = arg;
	irq_at_countdown = k;
}

bool rslub_host_irq_pending(void)
{
	return irq_at_fn != NULL;
}

unsigned long rslub_host_irq_points(void)
{
	return irq_points;
}

/*
 * Called first thing in every shim function the core uses: where the
 * kernel could take an interrupt (on a CPU, irqs on), count the point and
 * fire the pending interrupt when its turn has come.
 */
void host_irq_point(void)
{
	void (*fn)(void *) = irq_at_fn;

	if (!on_cpu || irqs_off)
		return;
	irq_points++;
	if (fn && irq_at_countdown-- == 0) {
		irq_at_fn = NULL;
		in_irq = true;
		fn(irq_at_arg);
		in_irq = false;
	}
}

void rslub_host_enter(unsigned int cpu)
{
	host_cpus_init();
	if (on_cpu) {
		fprintf(stderr, "rslub host: enter CPU %u while on CPU %u\n", cpu, cur_cpu);
		abort();
	}
	cur_cpu = cpu % host_nr_cpus;
	if (!is_online(cur_cpu)) {
		fprintf(stderr, "rslub host: enter offline CPU %u\n", cur_cpu);
		abort();
	}
	lock_cpu(cur_cpu);
	on_cpu = true;
	irqs_off = 0;
}

void rslub_host_exit(void)
{
	on_cpu = false;
	irqs_off = 0;
	pthread_mutex_unlock(&cpu_run[cur_cpu]);
}

/* Moves to cpu, or the next online CPU after it. */
void rslub_host_yield(unsigned int cpu)
{
	rslub_host_exit();
	rslub_host_enter(online_from(cpu % host_nr_cpus));
}

unsigned int rslub_host_current_cpu(void)
{
	return cur_cpu;
}

void rslub_host_set_migrate(unsigned int one_in)
{
	__atomic_store_n(&migrate_one_in, one_in, __ATOMIC_RELAXED);
}

uint64_t host_rng(void)
{
	if (!rng_state)
		rng_state = (uintptr_t)&rng_state | 1;
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void maybe_migrate(void)
{
	unsigned int n = __atomic_load_n(&migrate_one_in, __ATOMIC_RELAXED);

	if (n && on_cpu && !irqs_off && !in_irq && host_rng() % n == 0)
		rslub_host_yield(host_rng() % host_nr_cpus);
}

bool rslub_shim_has_cmpxchg128(void)
{
	return true;
}

bool rslub_shim_cpu_possible(unsigned int cpu)
{
	return cpu < host_nr_cpus;
}

bool rslub_shim_cpu_online(unsigned int cpu)
{
	host_irq_point();
	return is_online(cpu);
}

unsigned int rslub_shim_current_cpu(void)
{
	return cur_cpu;
}

/* Threads stand in for CPUs here: nothing to bind (the kernel suite's hook). */
int rslub_shim_pin_current(int cpu)
{
	(void)cpu;
	return -1;
}

void *rslub_shim_per_cpu_ptr(unsigned long pcpu, unsigned int cpu)
{
	return (char *)pcpu + HOST_PCPU_STRIDE * cpu;
}

/*
 * The fast paths take this pointer, read through it, then cmpxchg: a
 * migration right after taking it is the window to exercise.
 */
void *rslub_shim_this_cpu_ptr(unsigned long pcpu)
{
	void *p;

	host_irq_point();
	p = rslub_shim_per_cpu_ptr(pcpu, cur_cpu);

	maybe_migrate();
	return p;
}

void rslub_host_set_irq_hook(void (*fn)(void *), void *arg,
			     unsigned int skip)
{
	irq_hook = fn;
	irq_hook_arg = arg;
	irq_hook_countdown = skip;
}

static bool cas128(unsigned long *p, unsigned long o0, unsigned long o1,
		   unsigned long n0, unsigned long n1)
{
	unsigned __int128 old = ((unsigned __int128)o1 << 64) | o0;
	unsigned __int128 new = ((unsigned __int128)n1 << 64) | n0;

	return __sync_bool_compare_and_swap((unsigned __int128 *)p, old, new);
}

bool rslub_shim_this_cpu_cmpxchg_pair(unsigned long pcpu, unsigned long old0,
				      unsigned long old1, unsigned long new0,
				      unsigned long new1)
{
	unsigned long *p;

	host_irq_point();
	p = rslub_shim_per_cpu_ptr(pcpu, cur_cpu);
	if (irq_hook && irq_hook_countdown-- == 0) {
		void (*fn)(void *) = irq_hook;

		irq_hook = NULL;
		fn(irq_hook_arg);	/* an "interrupt" on this CPU, right here */
	}
	return cas128(p, old0, old1, new0, new1);
}

/* The twin has no lock prefix to add: the same operation. */
bool rslub_shim_this_cpu_cmpxchg_pair_locked(unsigned long pcpu,
					     unsigned long old0,
					     unsigned long old1,
					     unsigned long new0,
					     unsigned long new1)
{
	return rslub_shim_this_cpu_cmpxchg_pair(pcpu, old0, old1, new0, new1);
}

void rslub_shim_this_cpu_inc(unsigned long pcpu)
{
	/* Never a migration point: counters are bumped under the CPU lock too. */
	host_irq_point();
	__atomic_fetch_add((unsigned long *)rslub_shim_per_cpu_ptr(pcpu, cur_cpu), 1,
			   __ATOMIC_RELAXED);
}

bool rslub_shim_cmpxchg_pair(unsigned long *pair, unsigned long old0,
			     unsigned long old1, unsigned long new0,
			     unsigned long new1)
{
	host_irq_point();
	return cas128(pair, old0, old1, new0, new1);
}

/* The caller already runs alone on its CPU: nothing to exclude. */
unsigned long rslub_shim_cpu_lock(unsigned int *cpu)
{
	if (!on_cpu)
		abort();	/* allocator used from a thread not on a CPU */
	host_irq_point();
	rslub_host_irqs_disable();
	if (cpu)
		*cpu = cur_cpu;
	return 0;
}

void rslub_shim_cpu_unlock(unsigned long token)
{
	(void)token;
	rslub_host_irqs_enable();
	host_irq_point();
}

/*
 * Leaves our CPU, then runs fn on each online CPU in turn while holding it
 * (like the kernel's bound work items under cpus_read_lock).
 */
void rslub_shim_on_each_cpu(void (*fn)(void *info, unsigned int cpu),
			    void *info)
{
	unsigned int home = cur_cpu;
	bool was_on = on_cpu;

	host_irq_point();
	if (was_on)
		rslub_host_exit();
	host_cpus_init();
	for (unsigned int c = 0; c < host_nr_cpus; c++) {
		if (!is_online(c))
			continue;
		lock_cpu(c);
		fn(info, c);
		pthread_mutex_unlock(&cpu_run[c]);
	}
	if (was_on)
		rslub_host_enter(home);
}

int rslub_shim_cpuhp_register(void)
{
	return 1;
}

void rslub_shim_cpuhp_unregister(int state)
{
	(void)state;
}

unsigned int host_cpu(void)
{
	return cur_cpu;
}

bool host_may_sleep(void)
{
	return on_cpu && !irqs_off && !in_irq;
}
