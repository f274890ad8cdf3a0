// SPDX-License-Identifier: GPL-2.0
//! The events the model counts, per vCPU, and the counts file's lines.
//!
//! Each memory access has exactly one source (`l1` .. `xfer_remote`, or
//! `l1_in_insn`); the other fields are events beside it. A rep string
//! instruction's accesses are its lines (one access per line per operand),
//! not its elements. The plugin writes one line per vCPU
//! at each mark (docs/benchmarks.md, "The cost model"):
//!
//! ```text
//! mark seq=3 id=7 vcpu=0 insns=1200 l1=400 l2=3 llc=0 dram_local=1 ...
//! ```
//!
//! `parse_line` reads one back, so that a run can be priced again later.

/// Declares the counted events once: `FIELDS`, `Counts` and the array
/// conversions follow the same list, in the counts file's order.
macro_rules! counted_events {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// The names of the counted events, in the counts file's order.
        pub const FIELDS: [&str; N_FIELDS] = [$(stringify!($name)),*];

        /// One vCPU's counts over a region. The fields follow `FIELDS`.
        // # Invariants
        // `repr(C)` with `u64` fields only: laid out as `[u64; N_FIELDS]`
        // in `FIELDS` order (`as_array` relies on it).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[repr(C)]
        pub struct Counts {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl Counts {
            /// The fields as an array, in `FIELDS` order.
            pub fn to_array(&self) -> [u64; N_FIELDS] {
                [$(self.$name),*]
            }

            /// The fields seen as an array in place, in `FIELDS` order
            /// (no copy: the modeled clocks read them at every event).
            pub fn as_array(&self) -> &[u64; N_FIELDS] {
                const _: () = assert!(
                    std::mem::size_of::<Counts>() == N_FIELDS * 8
                        && std::mem::align_of::<Counts>() == std::mem::align_of::<u64>()
                );
                // SAFETY: `Counts` is `repr(C)` with N_FIELDS `u64` fields
                // and no padding (the size and alignment are asserted
                // above), so it has the layout of `[u64; N_FIELDS]`; the
                // borrow keeps `self` alive and unchanged meanwhile.
                unsafe { &*(self as *const Counts).cast::<[u64; N_FIELDS]>() }
            }

            /// Counts from an array in `FIELDS` order.
            pub fn from_array(a: [u64; N_FIELDS]) -> Self {
                let mut it = a.into_iter();
                Counts {
                    $($name: it.next().expect("N_FIELDS values"),)*
                }
            }
        }
    };
}

/// The number of counted events.
pub const N_FIELDS: usize = 34;

counted_events! {
    /// Guest instructions executed, a rep string instruction once (with
    /// `strings=fold`; with `strings=iter`, once per iteration QEMU runs).
    insns,
    /// Accesses that hit the vCPU's L1D.
    l1,
    /// Accesses that missed L1 and hit its L2.
    l2,
    /// Accesses served by the node's shared LLC.
    llc,
    /// Accesses served by DRAM of the vCPU's own node.
    dram_local,
    /// Accesses served by DRAM of another node.
    dram_remote,
    /// Cache-to-cache transfers from a vCPU of the same node: a read of a
    /// line another holds Modified, or a write to a line others hold.
    xfer_local,
    /// The same from a vCPU of another node.
    xfer_remote,
    /// Copies invalidated in other vCPUs' caches by this vCPU's writes.
    inval,
    /// Modified lines written back (evicted or downgraded).
    writeback,
    /// Locked read-modify-writes other than cmpxchg16b: the lock prefix,
    /// and xchg with a memory operand (with `rmw=whole`, those whose line
    /// did not come by a transfer: `rmw_xfer` has the others).
    locked,
    /// Unlocked cmpxchg, xadd and cmpxchg8b on memory (the same).
    unlocked,
    /// lock cmpxchg16b (the same).
    cx16_locked,
    /// cmpxchg16b without the lock prefix (the same).
    cx16_unlocked,
    /// Accesses to MMIO (not modeled, only counted).
    io,
    /// Rep string instructions, each once however many iterations it ran.
    str_insns,
    /// Bytes moved or stored by rep movs and rep stos.
    str_bytes,
    /// Elements compared, scanned or loaded by rep cmps, scas and lods.
    str_elems,
    /// Accesses served by the L1 whose latency is inside their own
    /// instruction's price: an atomic's load with its line in the L1, an
    /// atomic's store (its line is owned once its load is done), a rep
    /// string instruction's lines in the L1 (its byte rate covers them).
    l1_in_insn,
    /// Atomics whose line came from another vCPU (the load's source is a
    /// transfer): the transfer's price is the whole instruction's, so they
    /// are not counted in their kind (`rmw=whole` only).
    rmw_xfer,
    /// Executions of rep string instructions that QEMU counted as
    /// instructions and the fold took off `insns` (each instruction's
    /// executions after its first): QEMU's count, the virtual clock's
    /// under `-icount`, is `insns + str_folded`. Not an event of the CPU.
    str_folded,
    /// Of `l1`, the accesses an out-of-order core hides (`overlap`): stores
    /// and loads nothing waits for. An in-order profile prices them 0, an
    /// interval profile at minus `l1`'s price.
    hid_l1,
    /// Of `l2`, the accesses an out-of-order core hides: misses overlapped
    /// by a slower one of their window, or retired into the store buffer.
    hid_l2,
    /// The same of `llc`.
    hid_llc,
    /// The same of `dram_local`.
    hid_dram_local,
    /// The same of `dram_remote`.
    hid_dram_remote,
    /// The same of `xfer_local`.
    hid_xfer_local,
    /// The same of `xfer_remote`.
    hid_xfer_remote,
    /// `popf`: restores the flags (`local_irq_restore`), microcoded.
    popf,
    /// `cli` (`local_irq_disable`, `local_irq_save`).
    cli,
    /// `sti` (`local_irq_enable`).
    sti,
    /// Cycles the vCPU waited (`order`): for a line another vCPU's
    /// transfer held, and, spinning, for the store of another vCPU that
    /// its spin read. Cycles already: priced 1 in every profile.
    wait,
    /// The region's makespan in modeled cycles (`order`: the machine's
    /// latest vCPU clock at its mark less at the mark before), on the
    /// record of the vCPU that executed the mark only (0 on the others),
    /// so that a region's sum over its vCPUs is it. Elapsed time, not work:
    /// priced 0.
    span,
    /// Instruction slots (a cycle is the core's width of them) by which
    /// the dependent chains of L1 loads outran the issue of the
    /// instructions around them (`overlap`): a list walk in the L1 pays
    /// the L1 latency a step, a load the next instruction needs pays what
    /// independent work does not cover. An interval profile prices a slot
    /// at `insns`' price, an in-order one 0 (it pays each L1 hit whole).
    l1_chain,
}

impl Counts {
    /// Field-wise difference, `self - earlier` (counters only grow).
    pub fn since(&self, earlier: &Counts) -> Counts {
        let (a, b) = (self.to_array(), earlier.to_array());
        Counts::from_array(std::array::from_fn(|i| a[i].wrapping_sub(b[i])))
    }

    /// Field-wise sum.
    pub fn plus(&self, other: &Counts) -> Counts {
        let (a, b) = (self.to_array(), other.to_array());
        Counts::from_array(std::array::from_fn(|i| a[i] + b[i]))
    }

    /// "insns=N l1=N ..." in `FIELDS` order.
    pub fn fields_text(&self) -> String {
        FIELDS
            .iter()
            .zip(self.to_array())
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One line of a counts file: the counts of one vCPU between two marks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// "mark" (a mark instruction ended the region) or "exit" (QEMU exited).
    pub kind: String,
    /// The region's number in the run: 1 for the region that the first mark
    /// ends, and so on.
    pub seq: u64,
    /// The mark's id (the guest's %rax at the mark); 0 at exit.
    pub id: u64,
    /// The vCPU whose counts these are.
    pub vcpu: u32,
    /// The vCPU that executed the mark.
    pub by: u32,
    /// The counts.
    pub counts: Counts,
}

impl Record {
    /// The record as a counts-file line (no newline).
    pub fn line(&self) -> String {
        format!(
            "{} seq={} id={} vcpu={} by={} {}",
            self.kind,
            self.seq,
            self.id,
            self.vcpu,
            self.by,
            self.counts.fields_text()
        )
    }
}

/// Parses a counts-file line; `None` for comments, blank lines and lines of
/// other kinds.
pub fn parse_line(line: &str) -> Option<Result<Record, String>> {
    let mut words = line.split_whitespace();
    let kind = words.next()?;
    if kind != "mark" && kind != "exit" {
        return None;
    }
    let mut r = Record {
        kind: kind.to_string(),
        seq: 0,
        id: 0,
        vcpu: 0,
        by: 0,
        counts: Counts::default(),
    };
    let mut a = [0u64; N_FIELDS];
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            return Some(Err(format!("'{w}': expected key=value")));
        };
        let Ok(n) = v.parse::<u64>() else {
            return Some(Err(format!("'{w}': not a number")));
        };
        match k {
            "seq" => r.seq = n,
            "id" => r.id = n,
            "vcpu" => r.vcpu = n as u32,
            "by" => r.by = n as u32,
            // Fields a later version adds are ignored.
            _ => {
                if let Some(i) = FIELDS.iter().position(|f| *f == k) {
                    a[i] = n;
                }
            }
        }
    }
    r.counts = Counts::from_array(a);
    Some(Ok(r))
}

/// Whether the model ran for a counts file's text: false when its header
/// says `model=off` (the plugin counted instructions only).
pub fn model_ran(text: &str) -> bool {
    !text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .any(|l| l.split_whitespace().any(|w| w == "model=off"))
}

/// The core a counts file's hidden accesses were counted for (`core=` in
/// its header; None: `core=-`, or a file before it).
pub fn header_core(text: &str) -> Option<crate::overlap::CoreConfig> {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .flat_map(|l| l.split_whitespace())
        .find_map(|w| w.strip_prefix("core="))
        .and_then(|c| crate::overlap::CoreConfig::parse(c).ok())
}

/// One region of a counts file: the marks' records of one `seq`, summed
/// over the vCPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The region's number (`seq`).
    pub seq: u64,
    /// The id of the mark that ended it.
    pub id: u64,
    /// The sum of every vCPU's counts over the region.
    pub counts: Counts,
}

/// The `mark` regions of a counts file's text, in order (`exit` records
/// are left out); an unreadable line is an error that begins with its
/// number and a colon ("3: ..."), for "FILE:3: ...".
pub fn regions(text: &str) -> Result<Vec<Region>, String> {
    let mut out: Vec<Region> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let r = match parse_line(line) {
            None => continue,
            Some(Err(e)) => return Err(format!("{}: {e}", n + 1)),
            Some(Ok(r)) => r,
        };
        if r.kind != "mark" {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.seq == r.seq => last.counts = last.counts.plus(&r.counts),
            _ => out.push(Region {
                seq: r.seq,
                id: r.id,
                counts: r.counts,
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_round_trips() {
        let c = Counts::from_array(std::array::from_fn(|i| i as u64 * 7 + 1));
        let r = Record {
            kind: "mark".into(),
            seq: 3,
            id: 42,
            vcpu: 1,
            by: 0,
            counts: c,
        };
        let text = r.line();
        assert!(text.starts_with("mark seq=3 id=42 vcpu=1 by=0 insns=1 l1=8 "));
        assert_eq!(parse_line(&text).unwrap().unwrap(), r);
        assert!(parse_line("# costmodel counts v1").is_none());
        assert!(parse_line("").is_none());
        assert!(parse_line("mark seq=x").unwrap().is_err());
    }

    #[test]
    fn regions_sum_the_vcpus_of_a_seq() {
        let text = "# header\n\
            mark seq=1 id=0 vcpu=0 by=0 insns=5\n\
            mark seq=1 id=0 vcpu=1 by=0 insns=7\n\
            mark seq=2 id=9 vcpu=0 by=1 insns=1 xfer_local=2\n\
            mark seq=2 id=9 vcpu=1 by=1 insns=3 xfer_local=1\n\
            exit seq=3 id=0 vcpu=0 by=0 insns=100\n";
        let r = regions(text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].seq, r[0].id, r[0].counts.insns), (1, 0, 12));
        assert_eq!(
            (r[1].id, r[1].counts.insns, r[1].counts.xfer_local),
            (9, 4, 3)
        );
        assert!(regions("mark seq=x").unwrap_err().starts_with("1: "));
    }

    #[test]
    fn the_header_says_whether_the_model_ran() {
        assert!(!model_ran(
            "# costmodel counts v3 vcpus=1 model=off\nmark seq=1"
        ));
        assert!(model_ran("# costmodel counts v3 vcpus=1 model=on\n"));
        assert!(model_ran(
            "# costmodel counts v1: 2 vcpus\nmark seq=1 model=off"
        ));
    }

    #[test]
    fn since_and_plus() {
        let a = Counts {
            insns: 10,
            l1: 5,
            ..Default::default()
        };
        let b = Counts {
            insns: 25,
            l1: 9,
            inval: 2,
            ..Default::default()
        };
        let d = b.since(&a);
        assert_eq!((d.insns, d.l1, d.inval), (15, 4, 2));
        assert_eq!(a.plus(&d), b);
    }
}
