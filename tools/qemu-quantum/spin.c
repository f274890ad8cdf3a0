// SPDX-License-Identifier: GPL-2.0
/*
 * spin N: the guest side of harness.qemuquantum. Forks; the
 * parent pins itself to CPU 0, the child to CPU 1; both wait for each
 * other, then run the same loop of N iterations (spin()), and the first
 * to finish calls spin_done(). The plugin (turns.c) is given the
 * addresses of both functions (nm): it measures the vCPUs' turns while
 * both are in the loop.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Kept out of line, and called: the plugin finds them by their symbols. */
#define out_of_line __attribute__((__noipa__))

static out_of_line unsigned long spin(unsigned long n)
{
	unsigned long x = 0, i;

	for (i = 0; i < n; i++) {
		x += i;
		asm volatile("" : "+r"(x));
	}
	return x;
}

static out_of_line void spin_done(void)
{
	asm volatile("" : : : "memory");
}

int main(int argc, char **argv)
{
	unsigned long n, x;
	int *ready, status;
	cpu_set_t set;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: spin ITERATIONS\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	ready = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ready == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(pid == 0 ? 1 : 0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	__atomic_add_fetch(ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(ready, __ATOMIC_SEQ_CST) < 2)
		;
	x = spin(n);
	spin_done();
	if (pid == 0)
		_exit(x == 1 ? 3 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "spin: the child failed\n");
		return 1;
	}
	printf("spin: 2 x %lu iterations done\n", n);
	return 0;
}
