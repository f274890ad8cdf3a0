/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of rslub_oom.ko share: the checks' verdict lines
 * (oom_main.c) and the two tests, test=create (oom_create.c) and
 * test=pressure (oom_pressure.c). oom_main.c's comment says what each
 * test does.
 */
#ifndef RSLUB_OOM_H
#define RSLUB_OOM_H

#include <linux/compiler_attributes.h>

/* "rslub_oom: PASS <check> <figures>" */
__printf(2, 3) void pass(const char *check, const char *fmt, ...);
/* "rslub_oom: FAIL <check>: <why>"; init then returns -EIO. */
__printf(2, 3) void fail(const char *check, const char *fmt, ...);

void test_create(void);
void test_fill(unsigned int round);
void test_shrinker(unsigned int round);

#endif /* RSLUB_OOM_H */
