// SPDX-License-Identifier: GPL-2.0
//! The modeled machine: per vCPU an L1D and an L2, per NUMA node a shared
//! LLC, DRAM per node, and a directory of which vCPUs hold each line.
//!
//! Invariants:
//! - A vCPU's L1 holds a subset of its L2 (an L2 eviction removes the line
//!   from the L1), and both hold a line in the same MESI state. A vCPU
//!   "holds" a line when its L2 does.
//! - `dir[line]` is the set of vCPUs holding the line (a bit each). At most
//!   one holds it `Exclusive` or `Modified`, and then it is the only one.
//! - The LLC of a node is filled by that node's DRAM reads and by the
//!   write-backs of its vCPUs; its evictions touch no private cache
//!   (non-inclusive).
//!
//! Each access has one source, counted in `Counts`: L1, L2, LLC, DRAM of
//! the vCPU's node or another, or a cache-to-cache transfer from a vCPU of
//! the same node or another. A transfer is a read of a line another vCPU
//! holds Modified, or a write (or the read of a locked read-modify-write)
//! to a line other vCPUs hold; that write also counts one invalidation per
//! copy removed. A read of a line others hold clean comes from the LLC
//! when a holder is on the reader's node or the node's LLC has it, else
//! from the line's home DRAM.
//!
//! With coherence off (`Config::coherence`), the private caches never see
//! each other (QEMU's contrib cache plugin's model): no transfers, no
//! invalidations, stale copies hit.
//!
//! Three ways in, one per kind of instruction (the plugin picks by the
//! instruction's decoded kind):
//! - `access`: a plain load or store, one access per line it touches;
//! - `rmw`: an atomic read-modify-write priced once, as a whole
//!   instruction, by the state of its line (`rmw=whole`; with `rmw=access`
//!   the plugin sends atomics through `access` as plain accesses);
//! - `rep_exec` and `rep_access` (in `strings`): a rep string instruction
//!   folded into one instruction and the lines it touches.

use crate::cache::{Cache, Geometry, State, LINE_BYTES};
use crate::counts::Counts;
use crate::decode::Kind;
use crate::overlap::{CoreConfig, OverlapState};
use crate::strings::RepState;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The model's shape.
#[derive(Clone, Debug)]
pub struct Config {
    /// Node of each vCPU (its length is the vCPU count, at most 64).
    pub cpu_nodes: Vec<usize>,
    /// Physical addresses where nodes 1, 2, ... begin (ascending); below
    /// the first is node 0.
    pub mem_starts: Vec<u64>,
    /// Each vCPU's L1D.
    pub l1: Geometry,
    /// Each vCPU's L2.
    pub l2: Geometry,
    /// Each node's shared LLC.
    pub llc: Geometry,
    /// Keep the directory (false: private caches ignore each other).
    pub coherence: bool,
    /// The out-of-order core whose hidden accesses are counted (`hid_*`,
    /// `overlap`); None: not counted.
    pub core: Option<CoreConfig>,
}

impl Config {
    /// The default shape: a server core's caches (Sapphire Rapids: 48 KiB
    /// 12-way L1D, 2 MiB 16-way L2; an LLC slice share of 16 MiB per node)
    /// for `vcpus` vCPUs on one node.
    pub fn server(vcpus: usize) -> Self {
        Config {
            cpu_nodes: vec![0; vcpus],
            mem_starts: Vec::new(),
            l1: Geometry {
                bytes: 48 << 10,
                ways: 12,
            },
            l2: Geometry {
                bytes: 2 << 20,
                ways: 16,
            },
            llc: Geometry {
                bytes: 16 << 20,
                ways: 16,
            },
            coherence: true,
            core: None,
        }
    }

    /// The number of nodes (the highest node named, plus one).
    pub fn nodes(&self) -> usize {
        let cpus = self.cpu_nodes.iter().max().map_or(1, |n| n + 1);
        cpus.max(self.mem_starts.len() + 1)
    }

    /// The home node of a physical address.
    pub fn home(&self, paddr: u64) -> usize {
        self.mem_starts.iter().take_while(|&&s| paddr >= s).count()
    }
}

/// The directory's hasher: a line number times an odd constant (the
/// golden ratio's, as in Fibonacci hashing), its high bits the hash. The
/// keys are the model's own line numbers, not input an adversary picks, and
/// std's SipHash was a sixth of a host loop feeding the model accesses
/// (perf, 2026-12-05).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(32);
    }
}

type LineHash = BuildHasherDefault<LineHasher>;

struct Core {
    l1: Cache,
    l2: Cache,
    node: usize,
}

/// The machine: caches, directory and each vCPU's counts.
pub struct Machine {
    cfg: Config,
    cores: Vec<Core>,
    llcs: Vec<Cache>,
    dir: HashMap<u64, u64, LineHash>,
    /// Each vCPU's counts since the start (the model's events only; the
    /// plugin adds instructions, and with `rmw=access` atomics, from its
    /// scoreboards).
    pub counts: Vec<Counts>,
    /// Each vCPU's rep string instruction in progress (`strings`).
    pub(crate) reps: Vec<RepState>,
    /// Each vCPU's windows of misses (`overlap`).
    ov: Vec<OverlapState>,
    /// Each vCPU's instruction index now (`at`), for `overlap`.
    now: Vec<u64>,
    /// Each vCPU's last atomic load: its lines (first, last), so that the
    /// store of the same instruction is known as part of it.
    rmw_lines: Vec<Option<(u64, u64)>>,
}

/// Where an access's line came from: one per access, counted in the
/// field of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The vCPU's L1.
    L1,
    /// Its L2.
    L2,
    /// Its node's LLC.
    Llc,
    /// DRAM of its node.
    DramLocal,
    /// DRAM of another node.
    DramRemote,
    /// Another vCPU of its node.
    XferLocal,
    /// A vCPU of another node.
    XferRemote,
}

impl Source {
    /// Whether another vCPU's cache gave the line (or gave up its copies).
    pub fn transfer(self) -> bool {
        matches!(self, Source::XferLocal | Source::XferRemote)
    }
}

/// How an access uses its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Read,
    /// A store.
    Write,
    /// The load of a locked read-modify-write: asks for ownership at once
    /// (a read for ownership), as the hardware does.
    ReadForOwnership,
}

impl Machine {
    /// An empty machine (every cache cold).
    pub fn new(cfg: Config) -> Self {
        assert!(
            !cfg.cpu_nodes.is_empty() && cfg.cpu_nodes.len() <= 64,
            "1 to 64 vCPUs"
        );
        let cores = cfg
            .cpu_nodes
            .iter()
            .map(|&node| Core {
                l1: Cache::new(cfg.l1),
                l2: Cache::new(cfg.l2),
                node,
            })
            .collect();
        let llcs = (0..cfg.nodes()).map(|_| Cache::new(cfg.llc)).collect();
        let n = cfg.cpu_nodes.len();
        Machine {
            cfg,
            cores,
            llcs,
            dir: HashMap::default(),
            counts: vec![Counts::default(); n],
            reps: vec![RepState::default(); n],
            ov: vec![OverlapState::default(); n],
            now: vec![0; n],
            rmw_lines: vec![None; n],
        }
    }

    /// Counts one access from `src` on `cpu`.
    pub(crate) fn count(&mut self, cpu: usize, src: Source) {
        let c = &mut self.counts[cpu];
        match src {
            Source::L1 => c.l1 += 1,
            Source::L2 => c.l2 += 1,
            Source::Llc => c.llc += 1,
            Source::DramLocal => c.dram_local += 1,
            Source::DramRemote => c.dram_remote += 1,
            Source::XferLocal => c.xfer_local += 1,
            Source::XferRemote => c.xfer_remote += 1,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The instruction `cpu` runs now is its `insn`-th (its instructions
    /// as the CPU retires them, a rep string instruction once): the clock
    /// of `overlap`'s windows.
    pub fn at(&mut self, cpu: usize, insn: u64) {
        self.now[cpu] = insn;
    }

    /// A plain load by `cpu` of `size` bytes at virtual address `vaddr`,
    /// physical `paddr`; `value` is what it loaded when it is 8 bytes (a
    /// pointer, maybe, that a later load depends on).
    pub fn load(&mut self, cpu: usize, vaddr: u64, paddr: u64, size: u64, value: Option<u64>) {
        let (first, last) = lines(paddr, size);
        for line in first..=last {
            let src = self.access_line(cpu, line, Access::Read);
            self.count(cpu, src);
            if let Some(core) = self.cfg.core {
                let insn = self.now[cpu];
                self.ov[cpu].load(&mut self.counts[cpu], &core, insn, vaddr, value, src);
            }
        }
    }

    /// A plain store by `cpu` of `size` bytes at physical address `paddr`.
    pub fn store(&mut self, cpu: usize, paddr: u64, size: u64) {
        let (first, last) = lines(paddr, size);
        for line in first..=last {
            let src = self.access_line(cpu, line, Access::Write);
            self.count(cpu, src);
            if let Some(core) = self.cfg.core {
                let insn = self.now[cpu];
                self.ov[cpu].store(&mut self.counts[cpu], &core, insn, src);
            }
        }
    }

    /// A line a rep string instruction touches beyond the L1 (its lines in
    /// the L1 are inside its byte rate): for `overlap`, independent misses
    /// of the fast-string engine.
    pub(crate) fn string_miss(&mut self, cpu: usize, src: Source, store: bool) {
        let Some(core) = self.cfg.core else { return };
        let insn = self.now[cpu];
        let (ov, c) = (&mut self.ov[cpu], &mut self.counts[cpu]);
        if store {
            ov.store(c, &core, insn, src);
        } else {
            ov.load(c, &core, insn, 0, None, src);
        }
    }

    /// Ends every vCPU's open window of misses (at a mark: its region's
    /// counts are written next).
    pub fn settle(&mut self) {
        if self.cfg.core.is_none() {
            return;
        }
        for ((ov, c), &insn) in self
            .ov
            .iter_mut()
            .zip(self.counts.iter_mut())
            .zip(&self.now)
        {
            ov.settle(c, insn);
        }
    }

    /// One access of `size` bytes at physical address `paddr` by `cpu`; an
    /// access that crosses a line boundary touches each line.
    pub fn access(&mut self, cpu: usize, paddr: u64, size: u64, how: Access) {
        let (first, last) = lines(paddr, size);
        for line in first..=last {
            let src = self.access_line(cpu, line, how);
            self.count(cpu, src);
        }
    }

    /// One access of an atomic read-modify-write of `kind` (`Kind::rmw`),
    /// priced once, as a whole instruction, by the state of its line:
    /// - in this vCPU's L1: the kind's price alone (a whole-instruction
    ///   latency, measured with the line in the L1); the load counts in
    ///   `l1_in_insn`, not `l1`;
    /// - in its L2, the LLC or DRAM: the kind's price and that source's
    ///   (no measurement of an atomic on such a line was found: the sum);
    /// - held by another vCPU (Modified there, or copies to invalidate): a
    ///   transfer alone, counted in `rmw_xfer` instead of the kind: the
    ///   published core-to-core figures are whole compare-and-swaps.
    ///
    /// QEMU reports an atomic as its load, then its store: the store of the
    /// lines just loaded is part of the instruction (`l1_in_insn`). A store
    /// with no load before it is the atomic's only access, priced the same
    /// way.
    pub fn rmw(&mut self, cpu: usize, paddr: u64, size: u64, kind: Kind, store: bool) {
        let span = lines(paddr, size);
        if store && self.rmw_lines[cpu] == Some(span) {
            self.rmw_lines[cpu] = None;
            for line in span.0..=span.1 {
                // Owned since the load: an L1 hit on a Modified line.
                match self.access_line(cpu, line, Access::Write) {
                    Source::L1 => self.counts[cpu].l1_in_insn += 1,
                    src => self.count(cpu, src),
                }
            }
            return;
        }
        self.rmw_lines[cpu] = (!store).then_some(span);
        // A locked instruction waits for the store buffer and the misses
        // before it (an unlocked one does not).
        if matches!(kind, Kind::Locked | Kind::Cx16Locked) && self.cfg.core.is_some() {
            self.ov[cpu].serialize(&mut self.counts[cpu], self.now[cpu]);
        }
        let how = if store {
            Access::Write
        } else {
            Access::ReadForOwnership
        };
        let mut by_transfer = false;
        for line in span.0..=span.1 {
            match self.access_line(cpu, line, how) {
                Source::L1 => self.counts[cpu].l1_in_insn += 1,
                src => {
                    by_transfer |= src.transfer();
                    self.count(cpu, src);
                }
            }
        }
        let c = &mut self.counts[cpu];
        match kind {
            _ if by_transfer => c.rmw_xfer += 1,
            Kind::Locked => c.locked += 1,
            Kind::Unlocked => c.unlocked += 1,
            Kind::Cx16Locked => c.cx16_locked += 1,
            Kind::Cx16Unlocked => c.cx16_unlocked += 1,
            _ => {}
        }
    }

    /// One line's access: updates the caches and the directory, counts
    /// the invalidations and write-backs it causes, and returns its source
    /// (the caller counts it).
    pub(crate) fn access_line(&mut self, cpu: usize, line: u64, how: Access) -> Source {
        let wants_ownership = how != Access::Read;
        let core = &mut self.cores[cpu];
        // The fast path: an L1 hit that needs no other cache.
        if let Some(state) = core.l1.touch(line) {
            if !wants_ownership || state != State::Shared || !self.cfg.coherence {
                if wants_ownership && state == State::Exclusive {
                    core.l1.set_state(line, State::Modified);
                    core.l2.set_state(line, State::Modified);
                }
                return Source::L1;
            }
            // A write to a Shared line: an upgrade.
            return self.upgrade(cpu, line, true);
        }
        if let Some(state) = core.l2.touch(line) {
            if wants_ownership && state == State::Shared && self.cfg.coherence {
                return self.upgrade(cpu, line, false);
            }
            let state = if wants_ownership {
                State::Modified
            } else {
                state
            };
            core.l2.set_state(line, state);
            self.fill_l1(cpu, line, state);
            return Source::L2;
        }
        self.miss(cpu, line, wants_ownership)
    }

    /// `cpu` writes a line it holds Shared: the other copies are
    /// invalidated; a transfer when there were any, else a hit.
    fn upgrade(&mut self, cpu: usize, line: u64, in_l1: bool) -> Source {
        let me = 1u64 << cpu;
        let others = self.dir.get(&line).copied().unwrap_or(me) & !me;
        let src = if others == 0 {
            if in_l1 {
                Source::L1
            } else {
                Source::L2
            }
        } else {
            self.invalidate(cpu, line, others);
            self.transfer_from(cpu, others)
        };
        self.dir.insert(line, me);
        let core = &mut self.cores[cpu];
        core.l2.set_state(line, State::Modified);
        if in_l1 {
            core.l1.set_state(line, State::Modified);
        } else {
            self.fill_l1(cpu, line, State::Modified);
        }
        src
    }

    /// A transfer to `cpu` from the vCPUs in `from`: remote when one of
    /// them is on another node.
    fn transfer_from(&self, cpu: usize, from: u64) -> Source {
        let node = self.cores[cpu].node;
        let remote =
            (0..self.cores.len()).any(|o| from & (1 << o) != 0 && self.cores[o].node != node);
        if remote {
            Source::XferRemote
        } else {
            Source::XferLocal
        }
    }

    /// Removes the line from every vCPU in `victims`.
    fn invalidate(&mut self, cpu: usize, line: u64, victims: u64) {
        for o in 0..self.cores.len() {
            if victims & (1 << o) == 0 {
                continue;
            }
            let c = &mut self.cores[o];
            // A Modified copy's data moves to the writer with the
            // transfer: no write-back.
            c.l1.remove(line);
            c.l2.remove(line);
            self.counts[cpu].inval += 1;
        }
    }

    /// A miss in `cpu`'s private caches.
    fn miss(&mut self, cpu: usize, line: u64, wants_ownership: bool) -> Source {
        let me = 1u64 << cpu;
        let node = self.cores[cpu].node;
        let holders = if self.cfg.coherence {
            self.dir.get(&line).copied().unwrap_or(0) & !me
        } else {
            0
        };
        let owner = (holders.count_ones() == 1)
            .then(|| holders.trailing_zeros() as usize)
            .filter(|&o| self.cores[o].l2.peek(line) == Some(State::Modified));
        let (state, src);
        if wants_ownership && holders != 0 {
            // A write (or read for ownership) to a line others hold.
            src = self.transfer_from(cpu, holders);
            self.invalidate(cpu, line, holders);
            state = State::Modified;
        } else if let Some(o) = owner {
            // A read of a line another vCPU holds Modified: it forwards the
            // line and keeps a Shared copy; the dirty data is written back.
            src = self.transfer_from(cpu, holders);
            let oc = &mut self.cores[o];
            oc.l1.set_state(line, State::Shared);
            oc.l2.set_state(line, State::Shared);
            let onode = oc.node;
            self.counts[o].writeback += 1;
            self.llcs[onode].insert(line, State::Shared);
            state = State::Shared;
        } else {
            // From the LLC or DRAM. A clean holder on this node serves
            // from the LLC; Exclusive holders drop to Shared.
            let near_holder = (0..self.cores.len())
                .any(|o| holders & (1 << o) != 0 && self.cores[o].node == node);
            if self.llcs[node].touch(line).is_some() || near_holder {
                src = Source::Llc;
            } else {
                src = if self.cfg.home(line * LINE_BYTES) == node {
                    Source::DramLocal
                } else {
                    Source::DramRemote
                };
                self.llcs[node].insert(line, State::Shared);
            }
            for o in 0..self.cores.len() {
                if holders & (1 << o) != 0 {
                    self.cores[o].l1.set_state(line, State::Shared);
                    self.cores[o].l2.set_state(line, State::Shared);
                }
            }
            state = if wants_ownership {
                State::Modified
            } else if holders == 0 {
                State::Exclusive
            } else {
                State::Shared
            };
        }
        if self.cfg.coherence {
            let d = if wants_ownership { 0 } else { holders };
            self.dir.insert(line, d | me);
        }
        self.fill_l2(cpu, line, state);
        self.fill_l1(cpu, line, state);
        src
    }

    fn fill_l1(&mut self, cpu: usize, line: u64, state: State) {
        // L1 evictions need nothing: the L2 holds the line and its state.
        self.cores[cpu].l1.insert(line, state);
    }

    fn fill_l2(&mut self, cpu: usize, line: u64, state: State) {
        let core = &mut self.cores[cpu];
        if let Some((old, old_state)) = core.l2.insert(line, state) {
            core.l1.remove(old);
            let node = core.node;
            if old_state == State::Modified {
                self.counts[cpu].writeback += 1;
                self.llcs[node].insert(old, State::Shared);
            }
            if self.cfg.coherence {
                let me = 1u64 << cpu;
                if let Some(d) = self.dir.get_mut(&old) {
                    *d &= !me;
                    if *d == 0 {
                        self.dir.remove(&old);
                    }
                }
            }
        }
    }

    /// The vCPUs holding a line (a bit each), as the directory has it.
    pub fn holders(&self, paddr: u64) -> u64 {
        self.dir.get(&(paddr / LINE_BYTES)).copied().unwrap_or(0)
    }
}

/// The first and last line an access of `size` bytes at `paddr` touches.
pub(crate) fn lines(paddr: u64, size: u64) -> (u64, u64) {
    (paddr / LINE_BYTES, (paddr + size.max(1) - 1) / LINE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Access::*;

    // Two nodes of two vCPUs; node 1's memory from 1 MiB. Small caches so
    // that the cases can evict by hand: L1 2 lines (1 set, 2 ways), L2 4
    // lines (1 set, 4 ways), LLC 8 lines (1 set, 8 ways).
    fn machine(coherence: bool) -> Machine {
        Machine::new(Config {
            cpu_nodes: vec![0, 0, 1, 1],
            mem_starts: vec![1 << 20],
            l1: Geometry {
                bytes: 128,
                ways: 2,
            },
            l2: Geometry {
                bytes: 256,
                ways: 4,
            },
            llc: Geometry {
                bytes: 512,
                ways: 8,
            },
            coherence,
            core: None,
        })
    }

    const A: u64 = 0x1000; // node 0 memory
    const FAR: u64 = (1 << 20) + 0x40; // node 1 memory

    fn c(m: &Machine, cpu: usize) -> Counts {
        m.counts[cpu]
    }

    #[test]
    fn home_nodes() {
        let m = machine(true);
        assert_eq!(m.config().nodes(), 2);
        assert_eq!(m.config().home(0), 0);
        assert_eq!(m.config().home((1 << 20) - 1), 0);
        assert_eq!(m.config().home(1 << 20), 1);
    }

    // First read: local DRAM, Exclusive. Second: L1. Its write: an L1 hit,
    // silent E -> M. Another node's line: remote DRAM.
    #[test]
    fn cold_read_then_hits() {
        let mut m = machine(true);
        m.access(0, A, 8, Read);
        m.access(0, A + 8, 8, Read);
        m.access(0, A, 8, Write);
        m.access(0, FAR, 4, Read);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.l1, k.dram_remote), (1, 2, 1));
        assert_eq!((k.xfer_local, k.xfer_remote, k.inval), (0, 0, 0));
        assert_eq!(m.holders(A), 1);
    }

    // An 8-byte access at 60 touches two lines.
    #[test]
    fn split_access_touches_both_lines() {
        let mut m = machine(true);
        m.access(0, A + 60, 8, Read);
        assert_eq!(c(&m, 0).dram_local, 2);
    }

    // vCPU 0 writes, vCPU 1 (same node) reads: one local transfer, vCPU 0
    // writes the dirty line back and keeps it Shared. vCPU 0 writes again:
    // an upgrade, a local transfer with one invalidation.
    #[test]
    fn read_of_modified_then_upgrade() {
        let mut m = machine(true);
        m.access(0, A, 8, Write);
        m.access(1, A, 8, Read);
        assert_eq!(c(&m, 1).xfer_local, 1);
        assert_eq!(c(&m, 0).writeback, 1);
        assert_eq!(m.holders(A), 0b11);
        m.access(0, A, 8, Write);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.xfer_local, k.inval, k.l1), (1, 1, 1, 0));
        assert_eq!(m.holders(A), 0b01);
        // vCPU 1's copy is gone: its read is a transfer again.
        m.access(1, A, 8, Read);
        assert_eq!(c(&m, 1).xfer_local, 2);
    }

    // A line bounced by locked read-modify-writes between vCPUs 0 and 2
    // (two nodes): one remote transfer and one invalidation per hand-over,
    // the store of each RMW an L1 hit.
    #[test]
    fn bounce_across_nodes_one_transfer_per_handover() {
        let mut m = machine(true);
        for i in 0..10 {
            let cpu = if i % 2 == 0 { 0 } else { 2 };
            m.access(cpu, A, 8, ReadForOwnership);
            m.access(cpu, A, 8, Write);
        }
        let (k0, k2) = (c(&m, 0), c(&m, 2));
        assert_eq!(k0.dram_local, 1);
        assert_eq!(k0.xfer_remote + k2.xfer_remote, 9);
        assert_eq!(k0.inval + k2.inval, 9);
        assert_eq!(k0.l1 + k2.l1, 10);
        assert_eq!(k0.xfer_local + k2.xfer_local, 0);
    }

    // The same between vCPUs 0 and 1 (one node): local transfers.
    #[test]
    fn bounce_in_a_node_is_local() {
        let mut m = machine(true);
        for i in 0..10 {
            m.access(i % 2, A, 8, ReadForOwnership);
            m.access(i % 2, A, 8, Write);
        }
        assert_eq!(c(&m, 0).xfer_local + c(&m, 1).xfer_local, 9);
        assert_eq!(c(&m, 0).xfer_remote + c(&m, 1).xfer_remote, 0);
    }

    // A plain load then store (no RFO) on a line the other vCPU wrote:
    // a transfer for the read (M elsewhere), another for the write
    // (upgrade): two per hand-over, which is why the calibration uses
    // a locked RMW.
    #[test]
    fn plain_load_store_handover_costs_two_transfers() {
        let mut m = machine(true);
        m.access(0, A, 8, Write);
        m.access(1, A, 8, Read);
        m.access(1, A, 8, Write);
        assert_eq!(c(&m, 1).xfer_local, 2);
        assert_eq!(c(&m, 1).inval, 1);
    }

    // Clean sharing: vCPU 0 reads (E), vCPU 1 on the same node reads: from
    // the LLC (filled by 0's DRAM read), both Shared, no transfer. vCPU 2
    // on node 1 reads: its node has no copy and the line's home is node
    // 0: remote DRAM. A write by 3 then invalidates all three: one remote
    // transfer, three invalidations.
    #[test]
    fn clean_sharing_and_write_to_shared() {
        let mut m = machine(true);
        m.access(0, A, 8, Read);
        m.access(1, A, 8, Read);
        assert_eq!(c(&m, 1).llc, 1);
        assert_eq!(c(&m, 1).xfer_local, 0);
        m.access(2, A, 8, Read);
        assert_eq!(c(&m, 2).dram_remote, 1);
        assert_eq!(m.holders(A), 0b111);
        m.access(3, A, 8, Write);
        let k = c(&m, 3);
        assert_eq!((k.xfer_remote, k.xfer_local, k.inval), (1, 0, 3));
        assert_eq!(m.holders(A), 0b1000);
    }

    // L1 of 2 lines, L2 of 4, LLC of 8, all one set: lines 0..3 fit the L2
    // and come from it on the second pass; 0..5 do not fit the L2 but fit
    // the LLC; 0..9 fit nothing: DRAM every time (LRU, cyclic).
    #[test]
    fn levels_by_working_set() {
        let pass = |m: &mut Machine, n: u64| {
            for l in 0..n {
                m.access(0, l * 64, 8, Read);
            }
        };
        let mut m = machine(true);
        pass(&mut m, 4);
        pass(&mut m, 4);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.l2, k.l1), (4, 4, 0));

        let mut m = machine(true);
        pass(&mut m, 6);
        pass(&mut m, 6);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.llc, k.l2), (6, 6, 0));

        let mut m = machine(true);
        pass(&mut m, 10);
        pass(&mut m, 10);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.llc), (20, 0));

        let mut m = machine(true);
        pass(&mut m, 2);
        pass(&mut m, 2);
        let k = c(&m, 0);
        assert_eq!((k.dram_local, k.l1), (2, 2));
    }

    // An L2 eviction of a Modified line writes it back to the LLC, leaves
    // the directory, and removes it from the L1 (inclusion): vCPU 1's
    // later read is an LLC hit, not a transfer.
    #[test]
    fn eviction_writes_back_and_leaves_directory() {
        let mut m = machine(true);
        m.access(0, 0, 8, Write);
        for l in 1..5 {
            m.access(0, l * 64, 8, Read);
        }
        assert_eq!(c(&m, 0).writeback, 1);
        assert_eq!(m.holders(0), 0);
        m.access(1, 0, 8, Read);
        let k = c(&m, 1);
        assert_eq!((k.llc, k.xfer_local), (1, 0));
        // vCPU 0 reads line 0 again: not in its L1 any more.
        m.access(0, 0, 8, Read);
        assert_eq!(c(&m, 0).llc, 1);
    }

    // Coherence off: vCPU 1's write leaves vCPU 0's copy, which still hits;
    // no transfer, no invalidation (the mechanism the bounce check needs).
    #[test]
    fn coherence_off_sees_no_transfers() {
        let mut m = machine(false);
        for i in 0..10 {
            m.access(i % 2, A, 8, ReadForOwnership);
            m.access(i % 2, A, 8, Write);
        }
        let (k0, k1) = (c(&m, 0), c(&m, 1));
        assert_eq!(k0.xfer_local + k1.xfer_local + k0.inval + k1.inval, 0);
        assert_eq!(k0.l1 + k1.l1, 18);
    }

    fn server() -> crate::profile::Profile {
        let text = include_str!("../../profiles.toml");
        crate::profile::Profile::from_toml(text, "server").unwrap()
    }

    /// vCPU `cpu`'s counts over `f`.
    fn over(m: &mut Machine, cpu: usize, f: impl FnOnce(&mut Machine)) -> Counts {
        let before = m.counts[cpu];
        f(m);
        m.counts[cpu].since(&before)
    }

    // The double count: an unlocked cmpxchg16b with its line in the
    // L1 costs the profile's whole-instruction price, not that plus its
    // load and its store (as `rmw=access` counts it: 23 + 5 + 5).
    #[test]
    fn unlocked_cx16_in_l1_costs_its_whole_price() {
        let p = server();
        let mut m = machine(true);
        m.access(0, A, 16, Write);
        let k = over(&mut m, 0, |m| {
            m.rmw(0, A, 16, Kind::Cx16Unlocked, false);
            m.rmw(0, A, 16, Kind::Cx16Unlocked, true);
        });
        assert_eq!(k.cx16_unlocked, 1);
        assert_eq!((k.l1, k.l1_in_insn), (0, 2));
        assert_eq!(p.price(&k), p.of("cx16_unlocked"));
        // The same instruction counted as before (the plugin's rmw=access:
        // its kind from the execute callback, its accesses plain).
        let old = over(&mut m, 0, |m| {
            m.access(0, A, 16, ReadForOwnership);
            m.access(0, A, 16, Write);
        });
        let old = Counts {
            cx16_unlocked: 1,
            ..old
        };
        assert_eq!(p.price(&old), p.of("cx16_unlocked") + 2.0 * p.of("l1"));
    }

    // A locked RMW on a line vCPU 1 (same node) holds Modified: one local
    // transfer, priced alone (the measured core-to-core CAS is the whole
    // instruction); not counted as `locked`. Across nodes: remote.
    #[test]
    fn atomic_on_a_line_another_cpu_owns_is_a_transfer_alone() {
        let p = server();
        let mut m = machine(true);
        m.access(1, A, 8, Write);
        let k = over(&mut m, 0, |m| {
            m.rmw(0, A, 8, Kind::Locked, false);
            m.rmw(0, A, 8, Kind::Locked, true);
        });
        assert_eq!((k.xfer_local, k.inval, k.rmw_xfer, k.locked), (1, 1, 1, 0));
        assert_eq!(k.l1_in_insn, 1, "the store");
        assert_eq!(p.price(&k), p.of("xfer_local"));
        // vCPU 2 (node 1) takes it back with a lock cmpxchg16b.
        let k = over(&mut m, 2, |m| {
            m.rmw(2, A, 16, Kind::Cx16Locked, false);
            m.rmw(2, A, 16, Kind::Cx16Locked, true);
        });
        assert_eq!((k.xfer_remote, k.rmw_xfer, k.cx16_locked), (1, 1, 0));
        assert_eq!(p.price(&k), p.of("xfer_remote"));
    }

    // Shared with another vCPU (clean copies to invalidate): a transfer, as
    // for a plain store. Shared but no longer held by the other (it evicted
    // its copy): this vCPU's own cache, the whole-instruction price.
    #[test]
    fn atomic_on_a_shared_line() {
        let mut m = machine(true);
        m.access(0, A, 8, Read);
        m.access(1, A, 8, Read);
        let k = over(&mut m, 0, |m| m.rmw(0, A, 8, Kind::Locked, false));
        assert_eq!((k.xfer_local, k.inval, k.rmw_xfer, k.locked), (1, 1, 1, 0));
        let mut m = machine(true);
        m.access(0, A, 8, Read);
        m.access(1, A, 8, Read);
        for l in 1..5 {
            m.access(1, A + l * 64, 8, Read);
        }
        assert_eq!(m.holders(A), 0b01);
        let k = over(&mut m, 0, |m| m.rmw(0, A, 8, Kind::Unlocked, false));
        assert_eq!(
            (k.unlocked, k.l1_in_insn, k.rmw_xfer, k.inval),
            (1, 1, 0, 0)
        );
    }

    // In the L2 (evicted from the 2-line L1), in DRAM: the kind's price and
    // the source's. A store with no load before it is the atomic itself.
    #[test]
    fn atomic_beyond_the_l1_adds_its_source() {
        let p = server();
        let mut m = machine(true);
        m.access(0, 0, 8, Write);
        m.access(0, 64, 8, Read);
        m.access(0, 128, 8, Read);
        let k = over(&mut m, 0, |m| {
            m.rmw(0, 0, 8, Kind::Locked, false);
            m.rmw(0, 0, 8, Kind::Locked, true);
        });
        assert_eq!((k.l2, k.locked, k.l1_in_insn), (1, 1, 1));
        assert_eq!(p.price(&k), p.of("locked") + p.of("l2"));
        let k = over(&mut m, 0, |m| m.rmw(0, 0x4000, 8, Kind::Locked, true));
        assert_eq!((k.dram_local, k.locked), (1, 1));
        // Its load then a store elsewhere (not its own): two atomics.
        let k = over(&mut m, 0, |m| {
            m.rmw(0, 0x4000, 8, Kind::Locked, false);
            m.rmw(0, 0x4040, 8, Kind::Locked, true);
        });
        assert_eq!(k.locked, 2);
    }
}
