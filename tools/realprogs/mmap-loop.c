// SPDX-License-Identifier: GPL-2.0
/*
 * mmap-loop: will-it-scale's mmap1, mmap2 and brk1 as a fixed amount of
 * work, for make bench SUITE=real (workloads mmap1, mmap2 and brk1,
 * scripts/guest/real-lib.sh).
 *
 * Usage: mmap-loop anon|file|brk PROCS ITERATIONS MIB [DIR]
 *
 * PROCS processes, process i pinned to CPU i modulo the CPUs online, each
 * maps and unmaps MIB MiB ITERATIONS times, private and read-write, never
 * touching the mapping: anonymous memory (anon, will-it-scale's mmap1), or
 * a file of its own, created in DIR (a tmpfs), sized with ftruncate() and
 * unlinked before the loop (file, mmap2). Either way each iteration is the
 * kernel's VMA work alone: a vm_area_struct and maple tree nodes allocated
 * by mmap() and freed by munmap(), plus for a file the file's reference and
 * its address_space's i_mmap tree; no page is faulted in. With brk (brk1),
 * each iteration moves the process's break up by a page and back (MIB is
 * not used): the heap's VMA grows and shrinks, and the maple tree nodes
 * that describe it are allocated and freed.
 *
 * will-it-scale runs each task for a fixed time (128 MiB, one task per CPU)
 * and reports iterations per second; here the iterations are fixed and the
 * time is measured, so that under -icount the time is an instruction count.
 * The clock runs from the moment every process is ready (its file made)
 * until the last one has exited. Prints "Time: SECONDS".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "realprogs.h"

/* One process: READY gets a byte once set up, GO's end starts the loop. */
static void worker(int file, long iters, size_t len, const char *dir,
		   int ready, int go)
{
	int fd = -1, flags = MAP_PRIVATE;
	char path[4096], c;
	long i;

	if (file > 0) {
		snprintf(path, sizeof(path), "%s/mmap-loop.XXXXXX", dir);
		fd = mkstemp(path);
		if (fd < 0)
			die(path);
		if (ftruncate(fd, len))
			die("ftruncate");
		unlink(path);
	} else {
		flags |= MAP_ANONYMOUS;
	}
	if (write(ready, "r", 1) != 1)
		die("write");
	if (read(go, &c, 1) < 0)
		die("read");
	if (file < 0) {
		char *base = sbrk(0);
		long page = sysconf(_SC_PAGESIZE);

		for (i = 0; i < iters; i++)
			if (brk(base + page) || brk(base))
				die("brk");
		exit(0);
	}
	for (i = 0; i < iters; i++) {
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

		if (p == MAP_FAILED)
			die("mmap");
		if (munmap(p, len))
			die("munmap");
	}
	exit(0);
}

int main(int argc, char **argv)
{
	int ready[2], go[2], file, procs, i, bad = 0, status;
	long iters, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t len;
	double t0;
	char c;

	if (argc < 5 || (strcmp(argv[1], "anon") && strcmp(argv[1], "file") &&
			 strcmp(argv[1], "brk"))) {
		fprintf(stderr, "usage: mmap-loop anon|file|brk PROCS ITERATIONS MIB [DIR]\n");
		return 2;
	}
	/* 1: a file each, 0: anonymous memory, -1: the break. */
	file = !strcmp(argv[1], "file") ? 1 : !strcmp(argv[1], "brk") ? -1 : 0;
	procs = atoi(argv[2]);
	iters = atol(argv[3]);
	len = (size_t)atol(argv[4]) << 20;
	if (procs < 1 || iters < 1 || (file >= 0 && !len))
		return 2;
	if (pipe(ready) || pipe(go))
		die("pipe");
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			close(ready[0]);
			close(go[1]);
			/* Best effort, as will-it-scale's own binding. */
			pin(i % (cpus > 0 ? cpus : 1));
			worker(file, iters, len, argc > 5 ? argv[5] : "/tmp",
			       ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < procs; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	t0 = now();
	close(go[1]);
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	if (file < 0)
		printf("mmap-loop: brk, %d processes x %ld moves of the break up a page and back\n",
		       procs, iters);
	else
		printf("mmap-loop: %s, %d processes x %ld map+unmap of %s MiB\n",
		       argv[1], procs, iters, argv[4]);
	printf("Time: %.6f\n", now() - t0);
	return bad;
}
