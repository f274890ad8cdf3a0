// SPDX-License-Identifier: GPL-2.0
//! Rep string instructions as the CPU runs them: one instruction, priced by
//! its bytes, touching its lines once each.
//!
//! Under `-icount` QEMU 10.0 translates a `rep movs`/`stos`/`cmps`/`scas`/
//! `lods` to one iteration that jumps back to the instruction itself
//! (`do_gen_rep` in target/i386/tcg/translate.c: `can_loop` is false under
//! `CF_USE_ICOUNT`). A rep of N elements therefore reaches the plugin as N
//! executions of the same instruction, each with its element's accesses,
//! then one more execution with a zero count that accesses nothing and falls
//! through (a repe/repne that stops on its condition skips that last one).
//! The plugin counted each execution as an instruction and each element as
//! an access: a 4 KiB `rep stosb` was 4,097 instructions and 4,096 accesses.
//!
//! The fold, per vCPU (`Machine::rep_exec`, `Machine::rep_access`):
//! - An execution of a rep instruction continues the one in progress when
//!   it is at the same address, the previous execution accessed memory (so
//!   the count was not yet zero), and, for cmps and scas, which a condition
//!   can end, no other instruction ran on the vCPU in between. Its first
//!   access must then continue the element stream (the next or previous
//!   element, by the direction flag); if it does not, it was a new
//!   instruction after all. Anything else starts a new instruction.
//! - A continuing execution is folded: `str_folded` counts it, for the
//!   plugin to take off the instructions QEMU counted. The execution that
//!   accesses nothing ends the instruction.
//! - Accesses: the i-th access of an execution is operand i (movs: load
//!   then store; cmps: [rdi] then [rsi]). Each operand touches each line
//!   once, as one access of the line (a load, or a store with coherence);
//!   the next element in the same line is no access. A line served by the
//!   L1 counts in `l1_in_insn` (the byte rate covers it), one served further
//!   away at its source's price.
//! - Work: movs and stos count their bytes (`str_bytes`: the CPU moves them
//!   in wide chunks at a byte rate), cmps, scas and lods their elements
//!   (`str_elems`: run element by element), each instruction once in
//!   `str_insns` (its start-up cost).
//!
//! An interrupt in the middle of a movs or stos resumes the same instruction
//! (the addresses continue): still one. One in the middle of a cmps or scas
//! makes two, as does one whose handler runs the same instruction (the
//! kernel's own memcpy) before it resumes: a rare over-count of one.

use crate::decode::StrOp;
use crate::machine::{lines, Access, Machine, Source};

/// A vCPU's rep instruction in progress.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RepState {
    /// Its address and operation; None before the first.
    insn: Option<(u64, StrOp)>,
    /// The vCPU's instruction count (QEMU's, unfolded) at its last
    /// execution.
    at: u64,
    /// The last execution accessed memory: the instruction goes on.
    accessed: bool,
    /// This execution was taken as a continuation; its first access must
    /// confirm it.
    pending: bool,
    /// Accesses so far in this execution (the operand of the next one).
    k: usize,
    /// Per operand, the virtual address of its last element.
    last: [Option<u64>; 2],
    /// Per operand, the last line it touched.
    line: [Option<u64>; 2],
}

impl Machine {
    /// An execution of the rep string instruction `op` at `pc` begins on
    /// `cpu`; `count` is the vCPU's instruction count as QEMU counts it,
    /// this execution included. Returns whether it is a new instruction
    /// (false: folded into the one in progress).
    pub fn rep_exec(&mut self, cpu: usize, pc: u64, op: StrOp, count: u64) -> bool {
        let r = &mut self.reps[cpu];
        let adjacent = count == r.at.wrapping_add(1);
        let goes_on = r.insn == Some((pc, op)) && r.accessed && (adjacent || !op.conditional());
        r.at = count;
        r.k = 0;
        r.accessed = false;
        if goes_on {
            r.pending = true;
            self.counts[cpu].str_folded += 1;
            return false;
        }
        *r = RepState {
            insn: Some((pc, op)),
            at: count,
            ..RepState::default()
        };
        self.counts[cpu].str_insns += 1;
        true
    }

    /// One access of the rep instruction running on `cpu`: `size` bytes at
    /// virtual address `vaddr`, physical `paddr`; `io` for MMIO (counted,
    /// not modeled).
    pub fn rep_access(
        &mut self,
        cpu: usize,
        vaddr: u64,
        paddr: u64,
        size: u64,
        store: bool,
        io: bool,
    ) {
        let r = &mut self.reps[cpu];
        let Some((_, op)) = r.insn else {
            // No execution seen (the plugin armed in between): plain.
            self.access(
                cpu,
                paddr,
                size,
                if store { Access::Write } else { Access::Read },
            );
            return;
        };
        let operand = r.k.min(1);
        r.k += 1;
        if r.pending && operand == 0 {
            r.pending = false;
            let continues = r.last[0]
                .is_none_or(|p| vaddr == p.wrapping_add(size) || vaddr == p.wrapping_sub(size));
            if !continues {
                // The same address, another instruction (a loop around it,
                // or a handler's own copy): count it after all.
                r.last = [None; 2];
                r.line = [None; 2];
                self.counts[cpu].str_folded -= 1;
                self.counts[cpu].str_insns += 1;
            }
        }
        let r = &mut self.reps[cpu];
        r.accessed = true;
        r.last[operand] = Some(vaddr);
        let known = r.line[operand];
        let (first, last) = lines(paddr, size);
        if !io {
            r.line[operand] = Some(last);
        }
        if operand == 0 {
            if op.fast() {
                self.counts[cpu].str_bytes += size;
            } else {
                self.counts[cpu].str_elems += 1;
            }
        }
        if io {
            self.counts[cpu].io += 1;
            return;
        }
        let how = if store { Access::Write } else { Access::Read };
        for line in first..=last {
            if Some(line) == known {
                continue;
            }
            match self.access_line(cpu, line, how) {
                Source::L1 => self.counts[cpu].l1_in_insn += 1,
                src => {
                    self.count(cpu, src);
                    self.string_miss(cpu, src, store);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::Counts;
    use crate::machine::Config;

    const PC: u64 = 0xffff_ffff_8123_4560;

    fn machine() -> Machine {
        Machine::new(Config::server(2))
    }

    /// What QEMU hands the plugin for one `rep` of `n` elements of `size`
    /// bytes on `cpu` under -icount: n executions with their accesses, then
    /// the one that finds the count zero. `count` is the vCPU's instruction
    /// count (the block before the rep holds 3 instructions). Returns how
    /// many executions were new instructions.
    fn run_rep(
        m: &mut Machine,
        cpu: usize,
        count: &mut u64,
        op: StrOp,
        (src, dst): (u64, u64),
        n: u64,
        size: u64,
    ) -> u64 {
        let mut new = 0;
        *count += 3;
        for i in 0..=n {
            if i > 0 {
                *count += 1;
            }
            new += m.rep_exec(cpu, PC, op, *count) as u64;
            if i == n {
                break;
            }
            let (s, d) = (src + i * size, dst + i * size);
            match op {
                StrOp::Movs => {
                    m.rep_access(cpu, s, s, size, false, false);
                    m.rep_access(cpu, d, d, size, true, false);
                }
                StrOp::Stos => m.rep_access(cpu, d, d, size, true, false),
                StrOp::Cmps => {
                    m.rep_access(cpu, d, d, size, false, false);
                    m.rep_access(cpu, s, s, size, false, false);
                }
                StrOp::Scas => m.rep_access(cpu, d, d, size, false, false),
                StrOp::Lods => m.rep_access(cpu, s, s, size, false, false),
            }
        }
        new
    }

    /// The vCPU's instructions as the plugin reports them: QEMU's count
    /// less the folded executions.
    fn insns(m: &Machine, cpu: usize, count: u64) -> u64 {
        count - m.counts[cpu].str_folded
    }

    fn accesses(c: &Counts) -> u64 {
        c.l1 + c.l2
            + c.llc
            + c.dram_local
            + c.dram_remote
            + c.xfer_local
            + c.xfer_remote
            + c.l1_in_insn
    }

    // The case: a 4096-byte rep stosb fed as 4096 one-byte stores
    // (and the zero-count execution): one instruction, 64 line accesses,
    // 4096 bytes; at most 16 instructions and 256 accesses in any case.
    #[test]
    fn stosb_4k_is_one_instruction_and_64_lines() {
        let mut m = machine();
        let mut count = 0;
        let new = run_rep(&mut m, 0, &mut count, StrOp::Stos, (0, 0x10000), 4096, 1);
        let c = m.counts[0];
        assert_eq!(new, 1);
        // QEMU counted the block (2 instructions and the rep's first
        // execution), then 4096 more executions of the rep alone.
        assert_eq!(count, 3 + 4096);
        assert_eq!(insns(&m, 0, count), 2 + 1);
        assert_eq!(accesses(&c), 64);
        assert_eq!((c.str_insns, c.str_bytes, c.str_elems), (1, 4096, 0));
        // Cold: every line from DRAM, as a store (read for ownership).
        assert_eq!(c.dram_local, 64);
        assert!(insns(&m, 0, count) <= 16 && accesses(&c) <= 256);
    }

    // A 4096-byte rep movsb: 128 line accesses (64 each side); a second copy
    // of the same buffers finds every line in the L1: l1_in_insn, no l1.
    #[test]
    fn movsb_4k_is_one_instruction_and_128_lines() {
        let mut m = machine();
        let mut count = 0;
        let bufs = (0x20000, 0x30000);
        assert_eq!(
            run_rep(&mut m, 0, &mut count, StrOp::Movs, bufs, 4096, 1),
            1
        );
        let c = m.counts[0];
        assert_eq!(accesses(&c), 128);
        assert_eq!((c.str_insns, c.str_bytes), (1, 4096));
        assert_eq!(
            run_rep(&mut m, 0, &mut count, StrOp::Movs, bufs, 4096, 1),
            1
        );
        let d = m.counts[0].since(&c);
        assert_eq!((d.l1_in_insn, d.l1, accesses(&d)), (128, 0, 128));
        assert_eq!(
            insns(&m, 0, count),
            2 * 3,
            "two blocks of 2 plus one rep each"
        );
    }

    // rep stosq of 512 quadwords: the same 64 lines; rep movsq unaligned by
    // 4 bytes: elements straddle lines, each line still once per operand.
    #[test]
    fn wide_and_straddling_elements() {
        let mut m = machine();
        let mut count = 0;
        run_rep(&mut m, 0, &mut count, StrOp::Stos, (0, 0x40000), 512, 8);
        assert_eq!(accesses(&m.counts[0]), 64);
        assert_eq!(m.counts[0].str_bytes, 4096);
        let mut m = machine();
        let mut count = 0;
        run_rep(
            &mut m,
            0,
            &mut count,
            StrOp::Movs,
            (0x50004, 0x60004),
            512,
            8,
        );
        // 4096 bytes from offset 4: 65 lines each side.
        assert_eq!(accesses(&m.counts[0]), 130);
        assert_eq!(insns(&m, 0, count), 3);
    }

    // Backwards (the direction flag set, as memmove of overlapping
    // buffers does): the addresses go down; still one instruction.
    #[test]
    fn backwards_is_one_instruction() {
        let mut m = machine();
        let mut count = 10;
        let top = 0x8000 + 4095;
        let mut new = m.rep_exec(0, PC, StrOp::Stos, count) as u64;
        for i in 0..4096 {
            if i > 0 {
                count += 1;
                new += m.rep_exec(0, PC, StrOp::Stos, count) as u64;
            }
            m.rep_access(0, top - i, top - i, 1, true, false);
        }
        count += 1;
        new += m.rep_exec(0, PC, StrOp::Stos, count) as u64;
        assert_eq!(new, 1);
        assert_eq!(accesses(&m.counts[0]), 64);
    }

    // Two reps at the same address in a loop (memset of two buffers): the
    // zero-count execution ends the first, so the second is counted.
    // With the buffers adjacent, the second's addresses even continue the
    // first's: still two.
    #[test]
    fn the_same_rep_run_twice_counts_twice() {
        let mut m = machine();
        let mut count = 0;
        run_rep(&mut m, 0, &mut count, StrOp::Stos, (0, 0x1000), 100, 1);
        run_rep(
            &mut m,
            0,
            &mut count,
            StrOp::Stos,
            (0, 0x1000 + 100),
            100,
            1,
        );
        assert_eq!(m.counts[0].str_insns, 2);
        assert_eq!(insns(&m, 0, count), 6);
        // A rep with a zero count is one instruction too.
        count += 3;
        assert!(m.rep_exec(0, PC, StrOp::Stos, count));
        assert_eq!(m.counts[0].str_insns, 3);
    }

    // An interrupt in the middle of a rep stosb: the handler's instructions
    // run on the vCPU, then the rep resumes where it stopped: one
    // instruction. The vCPUs are counted apart: another vCPU's rep at the
    // same address in between changes nothing.
    #[test]
    fn an_interrupted_copy_resumes_as_one() {
        let mut m = machine();
        let mut count = 3;
        assert!(m.rep_exec(0, PC, StrOp::Stos, count));
        for i in 0..200u64 {
            if i == 100 {
                count += 500; // the handler
                let mut other = 0;
                run_rep(&mut m, 1, &mut other, StrOp::Stos, (0, 0x9000), 64, 1);
            }
            if i > 0 {
                count += 1;
                assert!(!m.rep_exec(0, PC, StrOp::Stos, count));
            }
            m.rep_access(0, 0x5000 + i, 0x5000 + i, 1, true, false);
        }
        assert_eq!(m.counts[0].str_insns, 1);
        assert_eq!(m.counts[1].str_insns, 1);
        assert_eq!(m.counts[0].str_bytes, 200);
    }

    // A handler running the same instruction (the kernel's memcpy) on other
    // buffers: its first access does not continue the stream, so it counts
    // as an instruction of its own.
    #[test]
    fn same_address_other_stream_is_another_instruction() {
        let mut m = machine();
        let mut count = 3;
        m.rep_exec(0, PC, StrOp::Movs, count);
        m.rep_access(0, 0x1000, 0x1000, 1, false, false);
        m.rep_access(0, 0x2000, 0x2000, 1, true, false);
        count += 40;
        // The handler's copy: same address, other buffers.
        assert!(!m.rep_exec(0, PC, StrOp::Movs, count));
        m.rep_access(0, 0x7000, 0x7000, 1, false, false);
        m.rep_access(0, 0x7800, 0x7800, 1, true, false);
        assert_eq!(m.counts[0].str_insns, 2);
        assert_eq!(m.counts[0].str_folded, 0);
    }

    // repe cmpsb stops at a mismatch (no zero-count execution); a loop
    // steps past it and runs it again: the addresses continue, but other
    // instructions ran in between, so it is a second instruction.
    #[test]
    fn a_conditional_rep_run_again_counts_again() {
        let mut m = machine();
        let mut count = 0;
        let mut new = 0;
        for round in 0..2u64 {
            count += 3;
            for i in 0..10u64 {
                if i > 0 {
                    count += 1;
                }
                new += m.rep_exec(0, PC, StrOp::Cmps, count) as u64;
                let e = round * 10 + i;
                m.rep_access(0, 0x3000 + e, 0x3000 + e, 1, false, false);
                m.rep_access(0, 0x4000 + e, 0x4000 + e, 1, false, false);
            }
        }
        assert_eq!(new, 2);
        assert_eq!(m.counts[0].str_elems, 20);
        assert_eq!(m.counts[0].str_bytes, 0);
        assert_eq!(insns(&m, 0, count), 6);
        // Two lines, touched once each in the first instruction, again in
        // the second.
        assert_eq!(accesses(&m.counts[0]), 4);
    }

    // scas and lods: one operand, elements counted; a store to a line
    // another vCPU holds is a transfer, once per line, not per element.
    #[test]
    fn scas_lods_and_coherence() {
        let mut m = machine();
        let mut count = 0;
        run_rep(&mut m, 0, &mut count, StrOp::Scas, (0, 0xa000), 128, 1);
        run_rep(&mut m, 0, &mut count, StrOp::Lods, (0xb000, 0), 16, 8);
        let c = m.counts[0];
        assert_eq!((c.str_insns, c.str_elems, c.str_bytes), (2, 144, 0));
        assert_eq!(accesses(&c), 2 + 2);
        // vCPU 1 clears the lines vCPU 0 holds: 2 transfers, not 128.
        let mut other = 0;
        run_rep(&mut m, 1, &mut other, StrOp::Stos, (0, 0xa000), 128, 1);
        let c1 = m.counts[1];
        assert_eq!((c1.xfer_local, c1.inval, accesses(&c1)), (2, 2, 2));
    }

    // MMIO elements (memcpy_toio): counted as I/O, folded all the same.
    #[test]
    fn io_elements_fold_too() {
        let mut m = machine();
        let mut count = 3;
        let mut new = 0;
        for i in 0..64u64 {
            if i > 0 {
                count += 1;
            }
            new += m.rep_exec(0, PC, StrOp::Movs, count) as u64;
            m.rep_access(0, 0x1000 + 4 * i, 0x1000 + 4 * i, 4, false, false);
            m.rep_access(0, 0xfe00_0000 + 4 * i, 0xfe00_0000 + 4 * i, 4, true, true);
        }
        assert_eq!(new, 1);
        let c = m.counts[0];
        assert_eq!((c.io, c.str_bytes, accesses(&c)), (64, 256, 4));
    }
}
