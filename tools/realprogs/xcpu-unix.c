// SPDX-License-Identifier: GPL-2.0
/*
 * xcpu-unix: allocate on one CPU, free on another, through the kernel; the
 * xcpu-unix workload of make bench SUITE=real (scripts/guest/real-lib.sh).
 *
 * Usage: xcpu-unix MESSAGES BYTES SENDER_CPU RECEIVER_CPU [SNDBUF]
 *
 * A sender pinned to SENDER_CPU writes MESSAGES messages of BYTES bytes
 * each into a unix stream socket; a receiver pinned to RECEIVER_CPU reads
 * them all. Each write() makes one sk_buff on the sender's CPU (its head
 * from skbuff_head_cache, its data from kmalloc up to about 3.7 KiB, page
 * fragments beyond), and the receiver frees it on its own CPU once read:
 * every such object is freed remotely, the pattern where the classic
 * design's slab freelist cmpxchg and the sheaves' per-CPU free paths differ
 * most. The clock runs from the first write until the receiver has read
 * the last byte and exited. Prints "Time: SECONDS".
 *
 * SNDBUF (bytes; the kernel's default when absent or 0) bounds the data in
 * flight: a larger one lets each side run longer between wake-ups.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "realprogs.h"

int main(int argc, char **argv)
{
	long msgs, size, i, off, total;
	int sv[2], status, sndbuf;
	char *buf;
	double t0;
	pid_t pid;
	ssize_t n;

	if (argc != 5 && argc != 6) {
		fputs("usage: xcpu-unix MESSAGES BYTES SENDER_CPU RECEIVER_CPU [SNDBUF]\n",
		      stderr);
		return 2;
	}
	msgs = atol(argv[1]);
	size = atol(argv[2]);
	if (msgs < 1 || size < 1)
		return 2;
	total = msgs * size;
	buf = calloc(1, size);
	if (!buf)
		die("calloc");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	sndbuf = argc > 5 ? atoi(argv[5]) : 0;
	if (sndbuf > 0 &&
	    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)))
		die("SO_SNDBUF");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(sv[0]);
		if (pin(atoi(argv[4])))
			die("sched_setaffinity");
		for (off = 0; off < total; off += n) {
			n = read(sv[1], buf, size);
			if (n <= 0)
				die("read");
		}
		exit(0);
	}
	close(sv[1]);
	if (pin(atoi(argv[3])))
		die("sched_setaffinity");
	t0 = now();
	for (i = 0; i < msgs; i++)
		for (off = 0; off < size; off += n) {
			n = write(sv[0], buf + off, size - off);
			if (n <= 0)
				die("write");
		}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	printf("xcpu-unix: %ld messages of %ld bytes, CPU %s to CPU %s\n",
	       msgs, size, argv[3], argv[4]);
	printf("Time: %.6f\n", now() - t0);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}
