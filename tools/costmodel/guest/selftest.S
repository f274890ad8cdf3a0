/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The plugin's self-test guest: a multiboot image QEMU boots with -kernel
 * (no Linux, no disk), 32-bit, paging and interrupts off, one vCPU. Each
 * region ends at a mark (include/rslub_mark.h's xchg %bx,%bx, id in %eax);
 * costmodel-calib --selftest (model/src/calib.rs, `selftest`) knows what
 * each must count, field by field, and tools/costmodel/selftest.sh runs it.
 *   1  rep stosb of 4 KiB, cold
 *   2  rep movsb of 4 KiB, source cold, destination warm
 *   3  rep stosb of 4 KiB, warm
 *   4  100 rep stosl of 256 bytes in a loop, warm
 *   5  cmpxchg, then lock cmpxchg, on a warm line
 *   6  repe cmpsb over 256 equal bytes, warm
 * Then it leaves QEMU through isa-debug-exit (port 0xf4).
 */
	.text
	.align 4
	.long 0x1badb002, 0, -0x1badb002	/* multiboot: magic, flags, sum */

	.globl _start
_start:
	mov $stack_top, %esp
	mov $0, %eax
	xchg %bx, %bx			/* the first mark arms the model */

	mov $buf, %edi
	mov $4096, %ecx
	xor %eax, %eax
	rep stosb
	mov $1, %eax
	xchg %bx, %bx

	mov $src, %esi
	mov $buf, %edi
	mov $4096, %ecx
	rep movsb
	mov $2, %eax
	xchg %bx, %bx

	mov $buf, %edi
	mov $4096, %ecx
	xor %eax, %eax
	rep stosb
	mov $3, %eax
	xchg %bx, %bx

	mov $100, %edx
1:	mov $buf, %edi
	mov $64, %ecx
	rep stosl
	dec %edx
	jnz 1b
	mov $4, %eax
	xchg %bx, %bx

	mov $0, %eax
	mov $1, %ecx
	cmpxchg %ecx, buf
	mov $1, %eax
	mov $2, %ecx
	lock cmpxchg %ecx, buf
	mov $5, %eax
	xchg %bx, %bx

	mov $buf, %esi
	mov $buf, %edi
	mov $256, %ecx
	repe cmpsb
	mov $6, %eax
	xchg %bx, %bx

	mov $0, %eax
	out %al, $0xf4
2:	hlt
	jmp 2b

	.bss
	.align 4096
buf:	.space 4096
src:	.space 4096
	.space 4096
stack_top:
