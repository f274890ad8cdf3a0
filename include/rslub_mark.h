/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Region marks for rslub's cost model (tools/costmodel, a QEMU TCG plugin).
 *
 * rslub_mark(id) executes one instruction that does nothing on any x86-64
 * CPU, `xchg %bx,%bx` with the id in %rax. Under the plugin each mark ends
 * a region: the plugin writes, for every vCPU, the events it counted since
 * the previous mark (of any vCPU), tagged with this id and the vCPU that
 * executed the mark. The model starts counting at the first mark of a boot.
 * docs/benchmarks.md ("The cost model") documents the counts file:
 *
 *   mark seq=S id=ID vcpu=V by=B insns=N l1=N l2=N llc=N dram_local=N ...
 *
 * Regions are global, not per task: whatever any vCPU runs between two
 * marks is counted in the region, interrupts included. To measure a loop,
 * mark before it (an id the reader discards) and after it (an id naming
 * the loop); a reader sums the regions whose ending id names what it
 * measures.
 *
 * The header has no dependency: a kernel module or a user program includes
 * it as it is. On other architectures the mark compiles to nothing.
 */
#ifndef _RSLUB_MARK_H
#define _RSLUB_MARK_H

/*
 * Ids with bit 63 set are the model's own (reserved); the calibration
 * program (tools/costmodel/guest) uses ids below 2^40.
 */
#define RSLUB_MARK_RESERVED 0x8000000000000000ULL

static inline void rslub_mark(unsigned long long id)
{
#if defined(__x86_64__)
	/*
	 * The compiler barrier ("memory") keeps the measured loads and stores
	 * on their side of the mark; the instruction itself changes no state.
	 */
	asm volatile("xchg %%bx, %%bx" : : "a"(id) : "memory");
#else
	(void)id;
#endif
}

#endif /* _RSLUB_MARK_H */
