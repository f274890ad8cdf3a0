/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the programs of tools/realprogs share: dying with the program's
 * name and errno's message, the monotonic clock in seconds (their "Time:"
 * lines), and pinning the calling process to one CPU.
 */
#ifndef RSLUB_REALPROGS_H
#define RSLUB_REALPROGS_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "PROGRAM: what: strerror(errno)", exit status 1. */
static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(errno));
	exit(1);
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Pins the calling process to cpu; sched_setaffinity()'s result. */
static inline int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

#endif /* RSLUB_REALPROGS_H */
