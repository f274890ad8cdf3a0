// SPDX-License-Identifier: GPL-2.0
//! What the model needs to know of an x86-64 instruction, from its bytes:
//! whether it is a locked or unlocked atomic read-modify-write, a
//! cmpxchg16b, a rep-prefixed string instruction, or the region mark of
//! include/rslub_mark.h.
//!
//! The plugin decodes each instruction once, at translation, and counts the
//! kinds at execution. Only the legacy prefixes, REX and the opcode map
//! 0x0f are read; VEX and EVEX instructions are never atomics nor string
//! instructions.

/// The bytes of the mark instruction, `xchg %bx,%bx` (a no-op: it swaps a
/// register with itself; Bochs' "magic breakpoint", never emitted by a
/// compiler).
pub const MARK_BYTES: [u8; 3] = [0x66, 0x87, 0xdb];

/// An instruction's kind, as far as the model cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Anything else.
    Plain,
    /// A locked read-modify-write (the lock prefix, or xchg with memory,
    /// locked without it), not cmpxchg16b.
    Locked,
    /// cmpxchg, xadd or cmpxchg8b on memory without the lock prefix.
    Unlocked,
    /// lock cmpxchg16b.
    Cx16Locked,
    /// cmpxchg16b without the lock prefix.
    Cx16Unlocked,
    /// The region mark.
    Mark,
    /// A string instruction with a rep prefix (`f3` or `f2`: QEMU and the
    /// CPU repeat every string instruction under either).
    Rep(StrOp),
}

/// The string instructions a rep prefix repeats (`ins`/`outs` are port
/// I/O, left out: they stay plain instructions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrOp {
    /// movs: a load from [rsi], a store to [rdi] per element.
    Movs,
    /// stos: a store to [rdi] per element.
    Stos,
    /// cmps: a load from [rdi], then one from [rsi] per element (QEMU's
    /// order); repe/repne stop at a (mis)match.
    Cmps,
    /// scas: a load from [rdi] per element; repe/repne stop at a (mis)match.
    Scas,
    /// lods: a load from [rsi] per element.
    Lods,
}

impl StrOp {
    /// Whether the CPU runs it as a fast string operation (movs, stos: wide
    /// moves at a byte rate), or element by element (cmps, scas, lods).
    pub fn fast(self) -> bool {
        matches!(self, StrOp::Movs | StrOp::Stos)
    }

    /// Whether a repe/repne condition can end it before its count does.
    pub fn conditional(self) -> bool {
        matches!(self, StrOp::Cmps | StrOp::Scas)
    }

    const ALL: [StrOp; 5] = [
        StrOp::Movs,
        StrOp::Stos,
        StrOp::Cmps,
        StrOp::Scas,
        StrOp::Lods,
    ];

    fn index(self) -> u64 {
        StrOp::ALL.iter().position(|o| *o == self).expect("listed") as u64
    }
}

impl Kind {
    /// Whether the instruction's load asks for the line's ownership (a
    /// read for ownership): every atomic read-modify-write.
    pub fn rmw(self) -> bool {
        matches!(
            self,
            Kind::Locked | Kind::Unlocked | Kind::Cx16Locked | Kind::Cx16Unlocked
        )
    }

    /// A small number for the plugin's callback data (`from_code` reads it
    /// back): 0 plain, 1-4 the atomics, 5 the mark, 8 + n a rep string
    /// instruction.
    pub fn code(self) -> u64 {
        match self {
            Kind::Plain => 0,
            Kind::Locked => 1,
            Kind::Unlocked => 2,
            Kind::Cx16Locked => 3,
            Kind::Cx16Unlocked => 4,
            Kind::Mark => 5,
            Kind::Rep(op) => 8 + op.index(),
        }
    }

    /// The kind of a `code`; an unknown code is `Plain`.
    pub fn from_code(code: u64) -> Kind {
        match code {
            1 => Kind::Locked,
            2 => Kind::Unlocked,
            3 => Kind::Cx16Locked,
            4 => Kind::Cx16Unlocked,
            5 => Kind::Mark,
            8..=12 => Kind::Rep(StrOp::ALL[(code - 8) as usize]),
            _ => Kind::Plain,
        }
    }
}

/// A rep string instruction's address and operation in one u64, for the
/// plugin's execute callback data (a pointer-sized value; nothing to free):
/// the address shifted left by 3 over the operation. x86-64 addresses are
/// canonical (the bits above 47, or 56 with 5-level paging, copy bit 47 or
/// 56), so the 3 top bits dropped come back by sign extension.
pub fn pack_rep(pc: u64, op: StrOp) -> u64 {
    (pc << 3) | op.index()
}

/// The address and operation of `pack_rep`.
pub fn unpack_rep(v: u64) -> (u64, StrOp) {
    (
        ((v as i64) >> 3) as u64,
        StrOp::ALL[((v & 7) as usize).min(StrOp::ALL.len() - 1)],
    )
}

/// The instructions on the interrupt flag that an out-of-order core runs
/// slowly (microcoded): counted in `popf`, `cli`, `sti` and priced by an
/// interval profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagsOp {
    /// `popf` (`local_irq_restore`).
    Popf,
    /// `cli`.
    Cli,
    /// `sti`.
    Sti,
}

/// Whether an instruction's bytes are `popf`, `cli` or `sti` (after an
/// operand-size or REX prefix).
pub fn flags_op(bytes: &[u8]) -> Option<FlagsOp> {
    let op = bytes
        .iter()
        .copied()
        .find(|b| *b != 0x66 && !(0x40..=0x4f).contains(b))?;
    match (op, bytes.len() <= 2) {
        (0x9d, true) => Some(FlagsOp::Popf),
        (0xfa, true) => Some(FlagsOp::Cli),
        (0xfb, true) => Some(FlagsOp::Sti),
        _ => None,
    }
}

/// Whether an atomic of these bytes acts on the value it reads, as a spin
/// loop's does: cmpxchg (8b, 16b), xchg, and the bit test-and-set, -reset
/// and -complement (a lock taken by `xchg` or `bts` until it is free); not
/// the arithmetic ones (add, sub, inc, dec, xadd, and, or, xor), whose
/// result does not decide whether the program goes on.
pub fn decides(bytes: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            0xf0 | 0xf2 | 0xf3 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0x66 | 0x67 => i += 1,
            0x40..=0x4f => {
                i += 1;
                break;
            }
            _ => break,
        }
    }
    let reg = |at: usize| bytes.get(at).map_or(0xff, |m| (m >> 3) & 7);
    match (bytes.get(i), bytes.get(i + 1)) {
        (Some(0x86 | 0x87), _) => true,
        (Some(0x0f), Some(0xb0 | 0xb1 | 0xab | 0xb3 | 0xbb)) => true,
        (Some(0x0f), Some(0xc7)) => reg(i + 2) == 1,
        (Some(0x0f), Some(0xba)) => reg(i + 2) >= 5,
        _ => false,
    }
}

/// Decodes an instruction's bytes.
pub fn classify(bytes: &[u8]) -> Kind {
    if bytes == MARK_BYTES {
        return Kind::Mark;
    }
    let mut lock = false;
    let mut rep = false;
    let mut rex_w = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            0xf0 => lock = true,
            0xf2 | 0xf3 => rep = true,
            0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0x66 | 0x67 => {}
            // REX counts only right before the opcode; a later legacy
            // prefix would cancel it, which the loop gets by resetting.
            0x40..=0x4f => {
                rex_w = b & 0x08 != 0;
                i += 1;
                break;
            }
            _ => break,
        }
        rex_w = false;
        i += 1;
    }
    let Some(&op) = bytes.get(i) else {
        return Kind::Plain;
    };
    let modrm_mem = |at: usize| bytes.get(at).is_some_and(|m| m >> 6 != 3);
    let modrm_reg = |at: usize| bytes.get(at).map_or(0xff, |m| (m >> 3) & 7);
    if op == 0x0f {
        let Some(&op2) = bytes.get(i + 1) else {
            return Kind::Plain;
        };
        let m = i + 2;
        return match op2 {
            0xc7 if modrm_reg(m) == 1 && modrm_mem(m) => match (rex_w, lock) {
                (true, true) => Kind::Cx16Locked,
                (true, false) => Kind::Cx16Unlocked,
                (false, true) => Kind::Locked,
                (false, false) => Kind::Unlocked,
            },
            0xb0 | 0xb1 | 0xc0 | 0xc1 if modrm_mem(m) => {
                if lock {
                    Kind::Locked
                } else {
                    Kind::Unlocked
                }
            }
            _ if lock => Kind::Locked,
            _ => Kind::Plain,
        };
    }
    match op {
        0xa4 | 0xa5 if rep => Kind::Rep(StrOp::Movs),
        0xa6 | 0xa7 if rep => Kind::Rep(StrOp::Cmps),
        0xaa | 0xab if rep => Kind::Rep(StrOp::Stos),
        0xac | 0xad if rep => Kind::Rep(StrOp::Lods),
        0xae | 0xaf if rep => Kind::Rep(StrOp::Scas),
        0x86 | 0x87 if modrm_mem(i + 1) => Kind::Locked,
        _ if lock => Kind::Locked,
        _ => Kind::Plain,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn atomics_that_decide() {
        use super::decides;
        // lock cmpxchg %rdx,(%rdi); xchg %eax,(%rdi); lock bts $0,(%rdi);
        // lock cmpxchg16b (%rdi)
        for b in [
            &[0xf0, 0x48, 0x0f, 0xb1, 0x17][..],
            &[0x87, 0x07],
            &[0xf0, 0x0f, 0xba, 0x2f, 0x00],
            &[0xf0, 0x48, 0x0f, 0xc7, 0x0f],
        ] {
            assert!(decides(b), "{b:x?}");
        }
        // lock add $1,(%rdi); lock xadd %rax,(%rdi); lock or $1,(%rdi)
        for b in [
            &[0xf0, 0x48, 0x83, 0x07, 0x01][..],
            &[0xf0, 0x48, 0x0f, 0xc1, 0x07],
            &[0xf0, 0x83, 0x0f, 0x01],
        ] {
            assert!(!decides(b), "{b:x?}");
        }
    }

    #[test]
    fn flags_ops() {
        assert_eq!(flags_op(&[0x9d]), Some(FlagsOp::Popf));
        assert_eq!(flags_op(&[0x66, 0x9d]), Some(FlagsOp::Popf));
        assert_eq!(flags_op(&[0xfa]), Some(FlagsOp::Cli));
        assert_eq!(flags_op(&[0xfb]), Some(FlagsOp::Sti));
        assert_eq!(flags_op(&[0x9c]), None, "pushf");
        assert_eq!(
            flags_op(&[0x48, 0x89, 0xfa]),
            None,
            "mov %rdi,%rdx ends in 0xfa"
        );
        assert_eq!(flags_op(&[]), None);
    }

    use super::*;

    // Encodings as GNU as emits them (objdump -d of each, by hand).
    #[test]
    fn atomics_and_plain() {
        // lock cmpxchg16b (%rdi)
        assert_eq!(classify(&[0xf0, 0x48, 0x0f, 0xc7, 0x0f]), Kind::Cx16Locked);
        // cmpxchg16b %gs:(%rsi)
        assert_eq!(
            classify(&[0x65, 0x48, 0x0f, 0xc7, 0x0e]),
            Kind::Cx16Unlocked
        );
        // the lock prefix after the segment prefix: lock cmpxchg16b %gs:(%rsi)
        assert_eq!(
            classify(&[0x65, 0xf0, 0x48, 0x0f, 0xc7, 0x0e]),
            Kind::Cx16Locked
        );
        // lock cmpxchg8b (%rdi)
        assert_eq!(classify(&[0xf0, 0x0f, 0xc7, 0x0f]), Kind::Locked);
        // lock cmpxchg %rcx,(%rdx)
        assert_eq!(classify(&[0xf0, 0x48, 0x0f, 0xb1, 0x0a]), Kind::Locked);
        // cmpxchg %rcx,%gs:(%rdx): this_cpu_cmpxchg
        assert_eq!(classify(&[0x65, 0x48, 0x0f, 0xb1, 0x0a]), Kind::Unlocked);
        // lock incl (%rdi); lock xadd %eax,(%rdi)
        assert_eq!(classify(&[0xf0, 0xff, 0x07]), Kind::Locked);
        assert_eq!(classify(&[0xf0, 0x0f, 0xc1, 0x07]), Kind::Locked);
        // xchg %rax,(%rdi) (locked without the prefix); xchg %eax,%ecx not
        assert_eq!(classify(&[0x48, 0x87, 0x07]), Kind::Locked);
        assert_eq!(classify(&[0x87, 0xc8]), Kind::Plain);
        // xchg %al,0x8(%rsp)
        assert_eq!(classify(&[0x86, 0x44, 0x24, 0x08]), Kind::Locked);
        // cmpxchg %ecx,%edx (register form) is no memory atomic
        assert_eq!(classify(&[0x0f, 0xb1, 0xca]), Kind::Plain);
        // mov (%rdi),%rax; rdrand %eax (0f c7 /6, register)
        assert_eq!(classify(&[0x48, 0x8b, 0x07]), Kind::Plain);
        assert_eq!(classify(&[0x0f, 0xc7, 0xf0]), Kind::Plain);
        // a multi-byte nop
        assert_eq!(classify(&[0x0f, 0x1f, 0x44, 0x00, 0x00]), Kind::Plain);
        assert_eq!(classify(&[]), Kind::Plain);
    }

    #[test]
    fn the_mark_and_its_neighbours() {
        assert_eq!(classify(&MARK_BYTES), Kind::Mark);
        // xchg %cx,%cx and xchg %ebx,%ebx are not the mark
        assert_eq!(classify(&[0x66, 0x87, 0xc9]), Kind::Plain);
        assert_eq!(classify(&[0x87, 0xdb]), Kind::Plain);
        assert!(!Kind::Mark.rmw());
        assert!(Kind::Cx16Unlocked.rmw() && Kind::Locked.rmw());
    }

    #[test]
    fn rep_string_instructions() {
        // rep movsb; rep stosb; rep movsq (f3 48 a5); rep stosq (f3 48 ab)
        assert_eq!(classify(&[0xf3, 0xa4]), Kind::Rep(StrOp::Movs));
        assert_eq!(classify(&[0xf3, 0xaa]), Kind::Rep(StrOp::Stos));
        assert_eq!(classify(&[0xf3, 0x48, 0xa5]), Kind::Rep(StrOp::Movs));
        assert_eq!(classify(&[0xf3, 0x48, 0xab]), Kind::Rep(StrOp::Stos));
        // rep stosl with a segment prefix: rep %es? (26 f3 ab)
        assert_eq!(classify(&[0x26, 0xf3, 0xab]), Kind::Rep(StrOp::Stos));
        // repe cmpsb; repne scasb; rep lodsb; repz cmpsq (f3 48 a7)
        assert_eq!(classify(&[0xf3, 0xa6]), Kind::Rep(StrOp::Cmps));
        assert_eq!(classify(&[0xf2, 0xae]), Kind::Rep(StrOp::Scas));
        assert_eq!(classify(&[0xf3, 0xac]), Kind::Rep(StrOp::Lods));
        assert_eq!(classify(&[0xf3, 0x48, 0xa7]), Kind::Rep(StrOp::Cmps));
        // Without the prefix, one element: a plain instruction.
        assert_eq!(classify(&[0xa4]), Kind::Plain);
        assert_eq!(classify(&[0x48, 0xab]), Kind::Plain);
        // rep insb / rep outsb (port I/O), rep ret, pause (f3 90),
        // popcnt (f3 0f b8): not string memory instructions.
        assert_eq!(classify(&[0xf3, 0x6c]), Kind::Plain);
        assert_eq!(classify(&[0xf3, 0x6e]), Kind::Plain);
        assert_eq!(classify(&[0xf3, 0xc3]), Kind::Plain);
        assert_eq!(classify(&[0xf3, 0x90]), Kind::Plain);
        assert_eq!(classify(&[0xf3, 0x0f, 0xb8, 0xc1]), Kind::Plain);
        assert!(!Kind::Rep(StrOp::Movs).rmw());
        assert!(StrOp::Stos.fast() && !StrOp::Scas.fast());
        assert!(StrOp::Cmps.conditional() && !StrOp::Movs.conditional());
    }

    #[test]
    fn codes_round_trip() {
        let mut kinds = vec![
            Kind::Plain,
            Kind::Locked,
            Kind::Unlocked,
            Kind::Cx16Locked,
            Kind::Cx16Unlocked,
            Kind::Mark,
        ];
        kinds.extend(StrOp::ALL.iter().map(|&o| Kind::Rep(o)));
        for k in kinds {
            assert_eq!(Kind::from_code(k.code()), k);
        }
        assert_eq!(Kind::from_code(99), Kind::Plain);
    }

    #[test]
    fn rep_address_packs_into_a_u64() {
        for pc in [
            0xffff_ffff_8100_1234u64, // kernel text, 4-level paging
            0xff11_0000_0000_0010,    // 5-level paging's upper half
            0x0000_7fff_ffff_f000,    // user space
            0x40_1000,
        ] {
            for op in StrOp::ALL {
                assert_eq!(unpack_rep(pack_rep(pc, op)), (pc, op));
            }
        }
    }
}
