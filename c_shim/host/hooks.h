/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks of the host machine (c_shim/host/: CPUs, memory and the rest
 * of a kernel, simulated in userspace for the core's host tests). Host
 * tests only; bindgen generates their Rust declarations with shim.h's.
 */
#ifndef RSLUB_HOST_HOOKS_H
#define RSLUB_HOST_HOOKS_H

#include <stdbool.h>

/* Machine shape; call before creating caches. At most 64 CPUs, 8 nodes. */
void rslub_host_configure(unsigned int nr_cpus, unsigned int nr_nodes);
/*
 * The calling thread starts running on cpu (blocks while another thread
 * runs there), stops running, or moves to cpu. Allocator calls are made
 * only while on a CPU.
 */
void rslub_host_enter(unsigned int cpu);
void rslub_host_exit(void);
void rslub_host_yield(unsigned int cpu);
unsigned int rslub_host_current_cpu(void);
/*
 * After each this_cpu read, the calling thread moves to a random CPU with
 * probability 1/one_in (0: never): a migration between reading the tid and
 * the cmpxchg.
 */
void rslub_host_set_migrate(unsigned int one_in);
/*
 * Calls fn(arg) once, on this thread and CPU, just before the
 * (skip+1)-th per-CPU cmpxchg16b from now: an interrupt arriving between
 * the fast path's reads and its commit.
 */
void rslub_host_set_irq_hook(void (*fn)(void *), void *arg,
			     unsigned int skip);
/*
 * Calls fn(arg) once, as an interrupt on this thread's CPU, at the
 * (k+1)-th interruptible shim call this thread makes from now: any shim
 * call made while on a CPU with interrupts "on" (neither the CPU lock nor a
 * node lock held), just before the call does anything. Sweeping k over an
 * operation interrupts it at every point where the kernel could.
 */
void rslub_host_set_irq_at_call(void (*fn)(void *), void *arg,
				unsigned int k);
/* Whether the hook set by rslub_host_set_irq_at_call has not fired yet. */
bool rslub_host_irq_pending(void);
/* Interruptible shim calls made by this thread so far. */
unsigned long rslub_host_irq_points(void);
/* Interrupts off / on for this thread (nests); node locks use it. */
void rslub_host_irqs_disable(void);
void rslub_host_irqs_enable(void);
/*
 * CPU hotplug: an offline CPU runs nothing (entering it aborts), is skipped
 * by on_each_cpu, and cpu_online() says so. Call with no thread on cpu.
 */
void rslub_host_set_online(unsigned int cpu, bool online);
/*
 * Puts every knob back to its default (no migration, no failing pages,
 * every node with memory, every CPU online, no pending interrupt, no
 * recycled header blocks): a test that failed half-way leaves nothing
 * behind for the next one.
 */
void rslub_host_reset(void);
/*
 * CPUs found held by a thread that had died (a test that panicked on a CPU
 * without releasing it); each is released and counted.
 */
long rslub_host_cpus_recovered(void);

/* Page blocks currently allocated, and their total bytes. */
long rslub_host_pages_in_use(void);
long rslub_host_bytes_in_use(void);
/*
 * Whether p is the start of a live alloc_meta block: the host's form of
 * "p is kmalloc memory of the direct map", for Platform::meta_addr_valid.
 */
bool rslub_host_meta_is_live(const void *p);
/* Bookkeeping blocks (alloc_meta and per-CPU areas) not freed yet. */
long rslub_host_meta_in_use(void);
/* Problems reported through the platform's report(). */
long rslub_host_reports(void);
void rslub_host_count_report(void);
/* Node that has no memory (-1: every node has memory). */
void rslub_host_set_memoryless(int node);
/*
 * The next page allocation made where the task could sleep (on a CPU,
 * interrupts on, not in an interrupt) first moves the calling thread to
 * cpu, once: a task that the scheduler moved while it waited for pages
 * with the CPU lock dropped. -1: none.
 */
void rslub_host_set_migrate_in_alloc_pages(int cpu);
/*
 * While on, a freed slab header block is kept and handed out again by the
 * next header allocation, last freed first (as the kernel's header cache
 * hands back the object it just took back), and freed page blocks stay
 * allocated, unused, until it is turned off: a stale pointer to a retired
 * slab's header then names the header of a newer slab, and what is
 * written into the retired slab's pages lands in memory the process still
 * owns. Off frees what was kept.
 */
void rslub_host_set_recycle_headers(bool on);
/* The gfp flags of the last page allocation. */
unsigned int rslub_host_last_page_gfp(void);
/*
 * Ends a grace period: runs every RCU callback queued so far (the slabs of
 * SLAB_TYPESAFE_BY_RCU caches go back); returns how many ran.
 */
long rslub_host_rcu_grace_period(void);
/* RCU callbacks queued and not yet run. */
long rslub_host_rcu_queued(void);
/* Fail the next n page allocations (0: none). */
void rslub_host_fail_pages(int n);
/* Fail every page allocation above this order (-1: none). */
void rslub_host_fail_pages_above(int order);

/* The value rslub_shim_debug_param() reports (the "debug" parameter). */
void rslub_host_set_debug_param(const char *flags);

#endif /* RSLUB_HOST_HOOKS_H */
