// SPDX-License-Identifier: GPL-2.0
/*
 * modcycle: the load/unload loop of the lifecycle test, in one process.
 * Under TCG every exec in the guest costs about half a second (binaries and
 * libraries come over 9p), so 50 cycles of insmod/rmmod would take minutes;
 * the same system calls from one static binary take seconds.
 *
 * Usage: modcycle CYCLES RSLUB_KO HOLDER_KO KEEP
 *
 * Cycle i loads RSLUB_KO; on even cycles it also loads HOLDER_KO (keep=KEEP),
 * checks that unloading rslub is refused with EWOULDBLOCK (the kernel's
 * "in use": the holder's references to rslub's symbols pin it), that the
 * holder's cache still shows KEEP objects in sysfs, before and after a
 * shrink through sysfs, then unloads the holder; then it unloads rslub.
 * Prints "lifecycle: PASS|FAIL <check>[: why]" for the checks cycles,
 * holder, refused and sysfs, and a summary line; exits 0 when all pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define KEEP_DIR "/sys/kernel/rslub/rslub_holder_keep"

enum { CYCLES, HOLDER, REFUSED, SYSFS, NR_CHECKS };

static const char *const check_name[NR_CHECKS] = {
	"cycles", "holder", "refused", "sysfs",
};

static char why[NR_CHECKS][256];

/* Keeps the first problem of each check. */
static void problem(int check, int cycle, const char *what, int err)
{
	if (why[check][0])
		return;
	snprintf(why[check], sizeof(why[check]), "cycle %d: %s%s%s", cycle,
		 what, err ? ": " : "", err ? strerror(err) : "");
}

static int load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? errno : 0;
	close(fd);
	return ret;
}

static int unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

static long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

/* One cycle with the holder loaded in between; false: stop (rslub gone). */
static int holder_cycle(int i, const char *holder_ko, const char *params,
			long keep, int *refusals)
{
	long n;
	int err;

	err = load(holder_ko, params);
	if (err) {
		problem(HOLDER, i, "loading the holder failed (see its FAIL line)", err);
		return 1;
	}
	err = unload("rslub");
	if (!err) {
		problem(REFUSED, i, "unloading rslub succeeded while the holder holds caches", 0);
		return 0;
	}
	if (err != EWOULDBLOCK)
		problem(REFUSED, i, "unloading rslub was refused, but not as in use", err);
	else
		(*refusals)++;
	n = read_long(KEEP_DIR "/objects");
	if (n != keep)
		problem(SYSFS, i, "objects of rslub_holder_keep differs from keep", 0);
	err = write_str(KEEP_DIR "/shrink", "1");
	if (err)
		problem(SYSFS, i, "writing shrink failed", err);
	n = read_long(KEEP_DIR "/objects");
	if (n != keep)
		problem(SYSFS, i, "objects of rslub_holder_keep after shrink differs from keep", 0);
	err = unload("rslub_holder");
	if (err)
		problem(HOLDER, i, "unloading the holder failed", err);
	return 1;
}

int main(int argc, char **argv)
{
	int cycles, i, err, c, holders = 0, refusals = 0, failed = 0;
	struct timespec t0, t1;
	char params[32];
	long keep;

	if (argc != 5) {
		fprintf(stderr, "usage: modcycle CYCLES RSLUB_KO HOLDER_KO KEEP\n");
		return 2;
	}
	cycles = atoi(argv[1]);
	keep = atol(argv[4]);
	snprintf(params, sizeof(params), "keep=%ld", keep);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= cycles; i++) {
		err = load(argv[2], "");
		if (err) {
			problem(CYCLES, i, "loading rslub failed", err);
			break;
		}
		if (i % 2 == 0) {
			holders++;
			if (!holder_cycle(i, argv[3], params, keep, &refusals))
				break;
		}
		err = unload("rslub");
		if (err) {
			problem(CYCLES, i, "unloading rslub failed", err);
			break;
		}
		/* A line now and then: the host judges the guest by its output. */
		if (i % 10 == 0) {
			printf("lifecycle: %d of %d cycles\n", i, cycles);
			fflush(stdout);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (i <= cycles)
		problem(CYCLES, i, "stopped early", 0);
	printf("lifecycle: %d load/unload cycles of rslub in %.1f s, %d with rslub_holder, %d %s\n",
	       i - 1, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       holders, refusals, "unloads refused while held");
	for (c = 0; c < NR_CHECKS; c++) {
		if (why[c][0]) {
			printf("lifecycle: FAIL %s: %s\n", check_name[c], why[c]);
			failed = 1;
		} else {
			printf("lifecycle: PASS %s\n", check_name[c]);
		}
	}
	return failed;
}
