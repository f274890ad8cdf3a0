// SPDX-License-Identifier: GPL-2.0
/*
 * mark ID: one region mark of include/rslub_mark.h from a shell script
 * (scripts/guest/real.sh marks each real program's run with it). ID is a
 * decimal or 0x-prefixed u64. The region a mark ends also holds the exec
 * of this program, a few hundred thousand instructions: next to a real
 * program's hundreds of millions, it is left in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../include/rslub_mark.h"

int main(int argc, char **argv)
{
	unsigned long long id;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: mark ID\n");
		return 2;
	}
	errno = 0;
	id = strtoull(argv[1], &end, 0);
	if (errno || end == argv[1] || *end) {
		fprintf(stderr, "mark: '%s' is not a number\n", argv[1]);
		return 2;
	}
	rslub_mark(id);
	return 0;
}
