// SPDX-License-Identifier: GPL-2.0
//! What the plugin does with QEMU's callbacks, without QEMU, so that host
//! tests can feed the model the callback sequences QEMU produces:
//! - at translation, each instruction's kind (`Feed::kind`), attached to
//!   its callbacks as `Kind::code`;
//! - at each execution of a rep string instruction, `Machine::rep_exec`;
//! - at each memory access, `Feed::mem`, which sends it to the model by
//!   the instruction's kind, with its instruction's index and, for an
//!   8-byte load, its value (`overlap` follows pointers through them);
//! - at a mark, the instructions of each vCPU (`Feed::insns`): QEMU's count
//!   (per translation block, at its start) less the folded executions.
//!
//! The plugin (the crate one level up) keeps QEMU's instruction count in
//! per-vCPU atomics outside the model's lock; everything else is here.

use crate::decode::{classify, Kind};
use crate::machine::{Access, Machine};

/// One memory access as a memory callback reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemOp {
    /// Its instruction's `Kind::code`.
    pub code: u64,
    /// Virtual and physical address.
    pub vaddr: u64,
    /// Physical address.
    pub paddr: u64,
    /// Bytes.
    pub size: u64,
    /// A store (else a load).
    pub store: bool,
    /// MMIO (counted, not modeled).
    pub io: bool,
    /// The value an 8-byte load loaded (None: another size, or a store).
    pub value: Option<u64>,
    /// The index of its instruction in its vCPU's instructions, a rep
    /// string instruction once (`Feed::insns` of the count at it).
    pub insn: u64,
    /// Its instruction is an atomic that acts on the value it reads
    /// (`decode::decides`): a spinning vCPU's waits for that value.
    pub decides: bool,
}

/// How the plugin counts (its arguments `strings=`, `rmw=`, `atomics=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feed {
    /// `strings=fold`: a rep string instruction is one instruction and its
    /// lines (false: `strings=iter`, each execution and element).
    pub fold_strings: bool,
    /// `rmw=whole`: an atomic priced by the state of its line (false:
    /// `rmw=access`, its kind counted at execution by the plugin and its
    /// accesses plain).
    pub rmw_whole: bool,
    /// `atomics=on`: atomics decoded (false: plain instructions).
    pub atomics: bool,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            fold_strings: true,
            rmw_whole: true,
            atomics: true,
        }
    }
}

impl Feed {
    /// The kind the plugin gives an instruction of these bytes at
    /// translation: what it decodes to, less what the arguments turn off.
    pub fn kind(&self, bytes: &[u8]) -> Kind {
        match classify(bytes) {
            k if k.rmw() && !self.atomics => Kind::Plain,
            Kind::Rep(_) if !self.fold_strings => Kind::Plain,
            k => k,
        }
    }

    /// Whether the plugin counts this kind's executions itself (an atomic
    /// under `rmw=access`), rather than the model at its access.
    pub fn counts_at_execution(&self, kind: Kind) -> bool {
        kind.rmw() && !self.rmw_whole
    }

    /// One memory access `a` by `cpu`, sent to the model by the kind of
    /// its instruction.
    pub fn mem(&self, m: &mut Machine, cpu: usize, a: &MemOp) {
        let kind = Kind::from_code(a.code);
        m.at(cpu, a.insn);
        if let Kind::Rep(_) = kind {
            m.rep_access(cpu, a.vaddr, a.paddr, a.size, a.store, a.io);
            return;
        }
        if a.io {
            m.counts[cpu].io += 1;
            return;
        }
        if kind.rmw() && self.rmw_whole {
            m.rmw(cpu, a.paddr, a.size, kind, a.store);
            return;
        }
        if kind.rmw() {
            let how = if a.store {
                Access::Write
            } else {
                Access::ReadForOwnership
            };
            m.access(cpu, a.paddr, a.size, how);
        } else if a.store {
            m.store(cpu, a.paddr, a.size);
        } else {
            m.load(cpu, a.vaddr, a.paddr, a.size, a.value);
        }
    }

    /// The instructions of `cpu` to report, from QEMU's count of them.
    pub fn insns(m: &Machine, cpu: usize, qemu_count: u64) -> u64 {
        qemu_count - m.counts[cpu].str_folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::Counts;
    use crate::machine::Config;
    use crate::overlap::CoreConfig;
    use crate::profile::Profile;

    /// A vCPU under the plugin, as QEMU drives it: blocks counted at their
    /// start, a rep instruction's execute callback, memory callbacks.
    struct Vcpu {
        feed: Feed,
        m: Machine,
        count: u64,
        /// Atomics counted at execution (`rmw=access`).
        at_exec: u64,
    }

    impl Vcpu {
        fn new(feed: Feed) -> Self {
            Vcpu {
                feed,
                m: Machine::new(Config::server(2)),
                count: 0,
                at_exec: 0,
            }
        }

        /// A block of instructions (bytes, address) starts.
        fn block(&mut self, n: u64) {
            self.count += n;
        }

        /// One execution of the instruction `bytes` at `pc` with its
        /// accesses (vaddr = paddr, size, store).
        fn exec(&mut self, bytes: &[u8], pc: u64, accesses: &[(u64, u64, bool)]) {
            let kind = self.feed.kind(bytes);
            if let Kind::Rep(op) = kind {
                self.m.rep_exec(0, pc, op, self.count);
            }
            if self.feed.counts_at_execution(kind) {
                self.at_exec += 1;
            }
            let insn = Feed::insns(&self.m, 0, self.count);
            for &(a, size, store) in accesses {
                let op = MemOp {
                    code: kind.code(),
                    vaddr: a,
                    paddr: a,
                    size,
                    store,
                    insn,
                    ..MemOp::default()
                };
                self.feed.mem(&mut self.m, 0, &op);
            }
        }

        fn insns(&self) -> u64 {
            Feed::insns(&self.m, 0, self.count)
        }

        fn accesses(&self) -> u64 {
            let c = self.m.counts[0];
            c.l1 + c.l2
                + c.llc
                + c.dram_local
                + c.dram_remote
                + c.xfer_local
                + c.xfer_remote
                + c.l1_in_insn
        }
    }

    const STOSB: [u8; 2] = [0xf3, 0xaa];
    const MOVSB: [u8; 2] = [0xf3, 0xa4];
    const MOV: [u8; 3] = [0x48, 0x89, 0xf9]; // mov %rdi,%rcx
    const PC: u64 = 0xffff_ffff_81a0_0010;

    /// memset(buf, 0, n) as the kernel's rep stosb path: a block of two
    /// movs and the rep (QEMU ends the block after it), the rep's
    /// executions alone in their block, the last finding the count zero.
    fn memset(v: &mut Vcpu, buf: u64, n: u64) {
        v.block(3);
        v.exec(&MOV, PC - 6, &[]);
        v.exec(&MOV, PC - 3, &[]);
        for i in 0..=n {
            if i > 0 {
                v.block(1);
            }
            let acc = if i < n {
                vec![(buf + i, 1, true)]
            } else {
                vec![]
            };
            v.exec(&STOSB, PC, &acc);
        }
    }

    fn memcpy(v: &mut Vcpu, dst: u64, src: u64, n: u64) {
        v.block(1);
        for i in 0..=n {
            if i > 0 {
                v.block(1);
            }
            let acc = if i < n {
                vec![(src + i, 1, false), (dst + i, 1, true)]
            } else {
                vec![]
            };
            v.exec(&MOVSB, PC + 0x40, &acc);
        }
    }

    // The "done when": a 4 KiB rep stosb or rep movsb fed as QEMU
    // feeds it counts at most 16 instructions and 256 accesses (one
    // instruction and 64 or 128 line accesses); strings=iter keeps the
    // old counts (one instruction per execution, one access per byte).
    #[test]
    fn four_kib_rep_stosb_and_movsb_as_qemu_feeds_them() {
        let mut v = Vcpu::new(Feed::default());
        memset(&mut v, 0x10000, 4096);
        assert_eq!((v.insns(), v.accesses()), (3, 64));
        assert!(v.insns() <= 16 && v.accesses() <= 256);
        let mut v = Vcpu::new(Feed::default());
        memcpy(&mut v, 0x20000, 0x30000, 4096);
        assert_eq!((v.insns(), v.accesses()), (1, 128));

        let iter = Feed {
            fold_strings: false,
            ..Feed::default()
        };
        let mut v = Vcpu::new(iter);
        memset(&mut v, 0x10000, 4096);
        assert_eq!((v.insns(), v.accesses()), (2 + 4097, 4096));
        assert_eq!(v.m.counts[0].str_insns, 0);
    }

    // The priced difference on a warm 4 KiB clear (every line in the L1),
    // server profile: the start-up, 4096 bytes at the byte rate and the
    // rep's one instruction; before, 4097 instructions and 4096 L1 hits.
    #[test]
    fn a_warm_4k_clear_priced() {
        let text = include_str!("../../profiles.toml");
        let p = Profile::from_toml(text, "server").unwrap();
        let run = |feed| {
            let mut v = Vcpu::new(feed);
            memset(&mut v, 0x10000, 4096);
            let (c0, n0) = (v.m.counts[0], v.insns());
            memset(&mut v, 0x10000, 4096);
            let c = v.m.counts[0].since(&c0);
            p.price(&Counts {
                insns: v.insns() - n0 - 2,
                ..c
            })
        };
        let fold = run(Feed::default());
        let want = 1.0 + p.of("str_insns") + 4096.0 * p.of("str_bytes");
        assert!((fold - want).abs() < 1e-9, "{fold} against {want}");
        let iter = run(Feed {
            fold_strings: false,
            ..Feed::default()
        });
        assert_eq!(iter, 4097.0 * p.of("insns") + 4096.0 * p.of("l1"));
    }

    // cmpxchg16b %gs:(%rsi) with its line in the L1, as QEMU reports it (a
    // load, then a store of 16 bytes): the whole-instruction price only;
    // rmw=access, the old pricing: the price and two L1 accesses.
    #[test]
    fn unlocked_cx16_fed_as_qemu_feeds_it() {
        let text = include_str!("../../profiles.toml");
        let p = Profile::from_toml(text, "server").unwrap();
        let cx16 = [0x65, 0x48, 0x0f, 0xc7, 0x0e];
        let line = 0x9000;
        for (feed, want) in [
            (Feed::default(), p.of("cx16_unlocked")),
            (
                Feed {
                    rmw_whole: false,
                    ..Feed::default()
                },
                p.of("cx16_unlocked") + 2.0 * p.of("l1"),
            ),
        ] {
            let mut v = Vcpu::new(feed);
            v.exec(&MOV, 0x100, &[(line, 8, true)]);
            let c0 = v.m.counts[0];
            v.exec(&cx16, 0x104, &[(line, 16, false), (line, 16, true)]);
            let c = Counts {
                cx16_unlocked: v.m.counts[0].cx16_unlocked - c0.cx16_unlocked + v.at_exec,
                ..v.m.counts[0].since(&c0)
            };
            assert_eq!(p.price(&c), want, "{feed:?}");
        }
    }

    /// k pointer chases through cold memory (every hop a DRAM miss), fed
    /// as the plugin feeds them with `core=` (each 8-byte load with its
    /// value and its instruction's index): a hop is a block of 3
    /// instructions, `mov (%rax),%rax; dec; jnz`. Returns the counts of
    /// `hops` hops of each chase.
    fn chases(core: Option<CoreConfig>, k: u64, hops: u64) -> Counts {
        let mut m = Machine::new(Config {
            core,
            ..Config::server(1)
        });
        let feed = Feed::default();
        let node = |j: u64, i: u64| (j << 32) + (i + 1) * 4096;
        let mut count = 0;
        for i in 0..hops {
            for j in 0..k {
                count += 3;
                let op = MemOp {
                    vaddr: node(j, i),
                    paddr: node(j, i),
                    size: 8,
                    value: Some(node(j, i + 1)),
                    insn: Feed::insns(&m, 0, count) - 3,
                    ..MemOp::default()
                };
                feed.mem(&mut m, 0, &op);
            }
        }
        m.settle();
        m.counts[0]
    }

    // The unit test with a known answer: k independent chases cost
    // about 1/k of one chase a hop on the interval core, up to its fill
    // buffers (10 on server-ooo), and the same as one on the in-order core
    // (the memory part: the instructions are the plugin's to add).
    #[test]
    fn independent_chases_cost_one_kth_up_to_the_fill_buffers() {
        let text = include_str!("../../profiles.toml");
        let ooo = Profile::from_toml(text, "server-ooo").unwrap();
        let inorder = Profile::from_toml(text, "server").unwrap();
        let core = ooo.core.as_ref().unwrap().0;
        let hops = 200;
        let per_hop = |p: &Profile, c: &Counts, k: u64| p.price(c) / (k * hops) as f64;
        let one = per_hop(&ooo, &chases(Some(core), 1, hops), 1);
        let dram = ooo.of("dram_local");
        assert!(
            (one - dram).abs() / dram < 0.01,
            "one chase: {one} against {dram}"
        );
        for k in [2, 4, 8, 10, 16] {
            let c = chases(Some(core), k, hops);
            let want = one / k.min(u64::from(core.mlp)) as f64;
            let got = per_hop(&ooo, &c, k);
            assert!(
                (got - want).abs() / want < 0.05,
                "k = {k}: {got} against {want}"
            );
            let inord = per_hop(&inorder, &c, k);
            assert_eq!(inord, dram, "in-order, k = {k}: every hop a DRAM access");
        }
        // Without core=, an interval profile does not fit the counts.
        assert!(ooo.fits(None).is_err() && ooo.fits(Some(core)).is_ok());
        assert!(inorder.fits(None).is_ok());
    }

    #[test]
    fn arguments_turn_kinds_off() {
        let f = Feed::default();
        assert_eq!(f.kind(&STOSB), Kind::Rep(crate::decode::StrOp::Stos));
        assert_eq!(f.kind(&[0xf0, 0xff, 0x07]), Kind::Locked);
        let off = Feed {
            fold_strings: false,
            atomics: false,
            rmw_whole: true,
        };
        assert_eq!(off.kind(&STOSB), Kind::Plain);
        assert_eq!(off.kind(&[0xf0, 0xff, 0x07]), Kind::Plain);
        assert_eq!(off.kind(&crate::decode::MARK_BYTES), Kind::Mark);
        assert!(!f.counts_at_execution(Kind::Locked));
        let access = Feed {
            rmw_whole: false,
            ..f
        };
        assert!(access.counts_at_execution(Kind::Cx16Locked));
        assert!(!access.counts_at_execution(Kind::Plain));
    }
}
