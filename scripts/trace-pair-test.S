/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest of harness.tracepair --self-test: a multiboot image QEMU boots
 * with -kernel (32-bit, paging and interrupts off), stepped by
 * scripts/trace-pair-gdb.py between the calls of trace_mark (three marks:
 * two segments), as the bench module's trace workload is.
 *   segment 1: copy()  a rep movsb of 128 bytes and a rep stosl of 64 x 4
 *              bytes, 9 instructions in copy (a call, 7, its ret)
 *   segment 2: a loop of 3 rep stosb of 100 bytes, 11 instructions
 * Then it leaves QEMU through isa-debug-exit (port 0xf4).
 */
	.text
	.align 4
	.long 0x1badb002, 0, -0x1badb002	/* multiboot: magic, flags, sum */

	.globl _start
_start:
	mov $stack_top, %esp
	call trace_mark
	call copy
	call trace_mark
	mov $3, %edx
1:	mov $buf, %edi
	mov $100, %ecx
	rep stosb
	dec %edx
	jnz 1b
	call trace_mark
	mov $0, %al
	out %al, $0xf4
	hlt

	.globl trace_mark
trace_mark:
	ret

	.globl copy
copy:
	mov $src, %esi
	mov $buf, %edi
	mov $128, %ecx
	rep movsb
	mov $64, %ecx
	xor %eax, %eax
	rep stosl
	ret

	.bss
	.align 64
src:	.skip 4096
buf:	.skip 4096
	.skip 4096
stack_top:
