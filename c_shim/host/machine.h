/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host machine's files (machine.c, cpus.c, memory.c) share and
 * tests do not see: its size, and the state of the calling thread's
 * simulated CPU that memory and the kernel services consult.
 */
#ifndef RSLUB_HOST_MACHINE_H
#define RSLUB_HOST_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#define HOST_MAX_CPUS 64
#define HOST_MAX_NODES 8
#define HOST_PAGE_SIZE 4096UL
#define HOST_MAX_ORDER 4
/* A per-CPU area is one block of HOST_MAX_CPUS strides (memory.c). */
#define HOST_PCPU_STRIDE 4096UL

/* The machine's shape (rslub_host_configure). */
extern unsigned int host_nr_cpus, host_nr_nodes;

/* Creates the CPUs' run mutexes, once. */
void host_cpus_init(void);
/*
 * Called first thing in every shim function the core uses: where the
 * kernel could take an interrupt (on a CPU, irqs on), count the point and
 * fire the pending interrupt when its turn has come.
 */
void host_irq_point(void);
/* The CPU the calling thread runs on (or last ran on). */
unsigned int host_cpu(void);
/* On a CPU, interrupts on, not in an interrupt: where a task may sleep. */
bool host_may_sleep(void);
/* A per-thread xorshift generator (migrations, random numbers). */
uint64_t host_rng(void);

#endif /* RSLUB_HOST_MACHINE_H */
