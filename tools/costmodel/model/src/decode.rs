// SPDX-License-Identifier: GPL-2.0
//! What the model needs to know of an x86-64 instruction, from its bytes:
//! whether it is a locked or unlocked atomic read-modify-write, a
//! cmpxchg16b, or the region mark of include/rslub_mark.h.
//!
//! The plugin decodes each instruction once, at translation, and counts the
//! kinds at execution. Only the legacy prefixes, REX and the opcode map
//! 0x0f are read; VEX and EVEX instructions are never atomics.

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
}

impl Kind {
    /// Whether the instruction's load asks for the line's ownership (a
    /// read for ownership): every atomic read-modify-write.
    pub fn rmw(self) -> bool {
        !matches!(self, Kind::Plain | Kind::Mark)
    }
}

/// Decodes an instruction's bytes.
pub fn classify(bytes: &[u8]) -> Kind {
    if bytes == MARK_BYTES {
        return Kind::Mark;
    }
    let mut lock = false;
    let mut rex_w = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            0xf0 => lock = true,
            0xf2 | 0xf3 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0x66 | 0x67 => {}
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
        0x86 | 0x87 if modrm_mem(i + 1) => Kind::Locked,
        _ if lock => Kind::Locked,
        _ => Kind::Plain,
    }
}

#[cfg(test)]
mod tests {
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
}
