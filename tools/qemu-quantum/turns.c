// SPDX-License-Identifier: GPL-2.0
/*
 * turns: a QEMU TCG plugin that measures how finely the vCPUs of a
 * round-robin (-icount) guest interleave, for harness.qemuquantum.
 *
 * Arguments: out=FILE (the report), lo=ADDR,hi=ADDR (the guest's spin
 * loop, [lo, hi)), done=ADDR (the function the guest calls after it).
 *
 * Every executed translation block is counted, with its number of
 * instructions, against the vCPU index QEMU passes to the callback. A
 * turn is a run of consecutive instructions of one vCPU, ended by a block
 * of another vCPU. Turns are only measured while both vCPUs are busy in
 * the guest's loop: from the moment both have executed a block of
 * [lo, hi) to the first execution of the block at done (the first spinner
 * to finish). A vCPU index that is wrong (the one that translated the
 * block instead of the one that runs it) shows as the loop seen on one
 * vCPU only: the window never opens.
 *
 * Round-robin TCG runs all vCPUs on one thread, so the callbacks never
 * race; the plugin is not meant for multi-threaded TCG.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define N_INSNS_MASK 0xffffffffULL
#define BIT_ULL(n) (1ULL << (n))
#define IN_LOOP BIT_ULL(32)
#define IS_DONE BIT_ULL(33)

enum window { BEFORE, OPEN, CLOSED };

static uint64_t loop_lo, loop_hi, done_pc;
static char *out_path;

static enum window window;
static unsigned int cur_vcpu = UINT_MAX;
static uint64_t run_len;
static uint64_t seen_in_loop;
static uint64_t loop_execs[MAX_VCPUS];
static uint64_t turns, turn_insns, max_turn, max_block, window_insns;

static void tb_exec(unsigned int vcpu, void *udata)
{
	uint64_t u = (uint64_t)(uintptr_t)udata;
	uint64_t n = u & N_INSNS_MASK;

	if (vcpu != cur_vcpu) {
		if (window == OPEN && cur_vcpu != UINT_MAX) {
			turns++;
			turn_insns += run_len;
			if (run_len > max_turn)
				max_turn = run_len;
		}
		cur_vcpu = vcpu;
		run_len = 0;
	}
	run_len += n;
	if (window == OPEN) {
		window_insns += n;
		if (n > max_block)
			max_block = n;
	}
	if ((u & IN_LOOP) && vcpu < MAX_VCPUS) {
		loop_execs[vcpu]++;
		seen_in_loop |= 1ULL << vcpu;
		if (window == BEFORE && seen_in_loop == 3) {
			/* The turn under way started before: count it from here. */
			window = OPEN;
			run_len = n;
			window_insns = n;
			max_block = n;
		}
	}
	if ((u & IS_DONE) && window == OPEN)
		window = CLOSED;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	uint64_t u = qemu_plugin_tb_n_insns(tb);

	if (pc >= loop_lo && pc < loop_hi)
		u |= IN_LOOP;
	if (pc == done_pc)
		u |= IS_DONE;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)u);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = fopen(out_path, "w");
	unsigned int i;

	if (!f) {
		perror(out_path);
		return;
	}
	fprintf(f, "window=%s\n", window == BEFORE ? "never-opened" :
		window == OPEN ? "not-closed" : "closed");
	fprintf(f, "turns=%llu\n", (unsigned long long)turns);
	fprintf(f, "max_turn=%llu\n", (unsigned long long)max_turn);
	fprintf(f, "mean_turn=%llu\n",
		(unsigned long long)(turns ? turn_insns / turns : 0));
	fprintf(f, "window_insns=%llu\n", (unsigned long long)window_insns);
	fprintf(f, "max_block=%llu\n", (unsigned long long)max_block);
	for (i = 0; i < MAX_VCPUS; i++)
		if (loop_execs[i])
			fprintf(f, "loop_execs_vcpu%u=%llu\n", i,
				(unsigned long long)loop_execs[i]);
	fclose(f);
}

static int parse_addr(const char *s, uint64_t *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return end == s || *end;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i, bad = 0;

	for (i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			bad = 1;
			break;
		}
		*eq = '\0';
		if (!strcmp(argv[i], "out"))
			out_path = strdup(eq + 1);
		else if (!strcmp(argv[i], "lo"))
			bad |= parse_addr(eq + 1, &loop_lo);
		else if (!strcmp(argv[i], "hi"))
			bad |= parse_addr(eq + 1, &loop_hi);
		else if (!strcmp(argv[i], "done"))
			bad |= parse_addr(eq + 1, &done_pc);
		else
			bad = 1;
	}
	if (bad || !out_path || !loop_lo || loop_hi <= loop_lo || !done_pc) {
		fprintf(stderr,
			"turns: usage: -plugin turns.so,out=FILE,lo=ADDR,hi=ADDR,done=ADDR\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
