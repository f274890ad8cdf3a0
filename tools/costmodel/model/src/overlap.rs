// SPDX-License-Identifier: GPL-2.0
//! Which accesses an out-of-order core would hide: the counts an interval
//! core is priced from, its misses overlapping as on the hardware.
//!
//! The in-order model pays every access the latency of the level that
//! served it, one after another. An out-of-order core does not: it goes on
//! past a miss until its reorder buffer is full, starts the independent
//! misses it meets meanwhile (up to its fill buffers), retires stores into
//! a store buffer, and hides L1 latency unless a load waits for the value
//! of the load before it. Interval models (Karkhanis and Smith, ISCA 2004;
//! Eyerman, Eeckhout, Karkhanis and Smith, TOCS 2009; Sniper's core model)
//! price a run as its instructions at the core's width plus one miss
//! latency per *window* of overlapping misses. This module finds the
//! windows while the guest runs and counts, per level, the accesses whose
//! latency a window hides (`hid_*` in `Counts`); an interval profile prices
//! those at minus their level's price, an in-order profile at 0, so a run
//! is still priced after the fact with any profile of the same core shape
//! (`CoreConfig`, written in the counts file's header).
//!
//! The rules, per vCPU, by instruction index (QEMU's count):
//! - A miss (an access served beyond the L1) opens a window, or joins the
//!   open one when it lies within `rob` instructions of the window's first
//!   miss, the window holds fewer than `mlp` misses, and (for a load) its
//!   address does not depend on a load of the window (below). Otherwise
//!   the window closes and the miss opens the next one.
//! - A window that closes exposes one miss, at its slowest level (L2 <
//!   LLC < local transfer < local DRAM < remote transfer < remote DRAM);
//!   its other misses are hidden. A window of stores alone exposes one
//!   only when it closes because it was full (the fill buffers, then the
//!   store buffer, stall the core) or at a serializing instruction (which
//!   waits for the store buffer to drain); otherwise its stores retired
//!   into the store buffer and cost nothing.
//! - A serializing instruction (a locked read-modify-write) closes the
//!   window; its own access is never hidden.
//! - An L1 hit is hidden, unless it is a load whose address depends on a
//!   load of the open window (it waits for that miss, and then for its
//!   own latency).
//! - Chains of L1 loads: a load's value is ready `depwin` slots (its
//!   latency at the core's width) after the later of its issue and the
//!   readiness of the load its address depends on. Time is counted in
//!   slots: an instruction's issue takes one, and a region of instructions
//!   takes the larger of its instructions and its longest chain: at each
//!   *chain point* (a ROB's reach of instructions since the last, a
//!   serializing instruction, a mark) the slots by which the chains ran
//!   past the issue are counted (`l1_chain`) and the issue waits for them.
//!   A list walk in the L1 pays the L1 latency a step whatever its
//!   instructions; a short chain among enough independent work pays
//!   nothing (adding each step's latency to the issue of the work beside
//!   it would count the same cycles twice).
//! - Dependence is seen through values: a load depends on an earlier
//!   8-byte load whose value v has `v <= address < v + 4096` (a pointer,
//!   and a field of what it points to). A load of a value an earlier load
//!   of the open window loaded (the pointer stored and loaded again: a
//!   spill, a variable in memory) waits for that window too. Only the last
//!   16 such loads within `rob` instructions are kept.
//!
//! What it does not see: dependences through registers other than a
//! loaded pointer (an index computed from a loaded value), branch
//! mispredictions, the front end, port contention. An isolated miss that
//! nothing waits for (an L2 hit with enough independent work after it)
//! still exposes its window.

use crate::counts::Counts;
use crate::machine::Source;

/// The shape of the out-of-order core the windows are found for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreConfig {
    /// Reorder buffer entries: how far past a miss the core goes on.
    pub rob: u64,
    /// Outstanding L1D misses (fill buffers): a window's misses.
    pub mlp: u32,
    /// Store buffer entries.
    pub sb: u32,
    /// Instructions within which a load's value is still on its way from
    /// the L1 (its latency times the core's width).
    pub depwin: u64,
}

impl CoreConfig {
    /// `ROB:MLP:SB:DEPWIN`, as the plugin's `core=` argument and the
    /// counts file's header write it.
    pub fn parse(s: &str) -> Result<CoreConfig, String> {
        let v: Vec<u64> = s
            .split(':')
            .map(|x| x.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("core={s}: expected ROB:MLP:SB:DEPWIN"))?;
        match v[..] {
            [rob, mlp, sb, depwin] if rob > 0 && mlp > 0 && sb > 0 && mlp <= 64 && sb <= 1024 => {
                Ok(CoreConfig {
                    rob,
                    mlp: mlp as u32,
                    sb: sb as u32,
                    depwin,
                })
            }
            _ => Err(format!(
                "core={s}: expected ROB:MLP:SB:DEPWIN, each positive (MLP at most 64, SB 1024)"
            )),
        }
    }

    /// The `ROB:MLP:SB:DEPWIN` text.
    pub fn text(&self) -> String {
        format!("{}:{}:{}:{}", self.rob, self.mlp, self.sb, self.depwin)
    }
}

/// The miss levels, slowest last: a window exposes its slowest.
const LEVELS: [Source; 6] = [
    Source::L2,
    Source::Llc,
    Source::XferLocal,
    Source::DramLocal,
    Source::XferRemote,
    Source::DramRemote,
];

fn level(src: Source) -> Option<usize> {
    LEVELS.iter().position(|l| *l == src)
}

/// Adds `n` hidden accesses of `LEVELS[i]`.
fn hide(c: &mut Counts, i: usize, n: u64) {
    match LEVELS[i] {
        Source::L2 => c.hid_l2 += n,
        Source::Llc => c.hid_llc += n,
        Source::XferLocal => c.hid_xfer_local += n,
        Source::DramLocal => c.hid_dram_local += n,
        Source::XferRemote => c.hid_xfer_remote += n,
        Source::DramRemote => c.hid_dram_remote += n,
        Source::L1 => c.hid_l1 += n,
    }
}

/// Why a window closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Close {
    /// The reorder buffer's reach passed: its misses had their time.
    Expired,
    /// A miss that depends on it.
    Dependent,
    /// Its fill buffers (or the store buffer) were full.
    Full,
    /// A serializing instruction.
    Serialize,
    /// A mark: the region ends.
    Settle,
}

#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// Numbers windows of a vCPU, so that loads know which they wait for.
    id: u64,
    /// The instruction index of its first miss.
    start: u64,
    /// Its misses, per level.
    by_level: [u32; LEVELS.len()],
    misses: u32,
    /// Whether a load missed in it (else stores alone).
    has_load: bool,
}

/// A recent 8-byte load whose value may be an address.
#[derive(Clone, Copy, Debug, Default)]
struct Producer {
    insn: u64,
    value: u64,
    /// The slot at which its value is ready (`OverlapState::shift`'s
    /// time: the instruction index plus the slots waited so far).
    ready: u64,
    /// The window whose miss it is, or waits for.
    window: Option<u64>,
}

const PRODUCERS: usize = 16;

/// One vCPU's windows and recent loads.
#[derive(Clone, Debug, Default)]
pub(crate) struct OverlapState {
    open: Option<Window>,
    next_id: u64,
    producers: [Option<Producer>; PRODUCERS],
    head: usize,
    /// Stores since the window opened (its store buffer's share).
    stores: u32,
    /// Slots the issue has waited for L1 chains so far: instruction `i`
    /// issues at slot `i + shift`.
    shift: u64,
    /// The latest slot at which a load since the last chain point has its
    /// value.
    chain_ready: u64,
    /// The instruction of the last chain point.
    chain_from: u64,
}

impl OverlapState {
    /// Closes the open window, counting what it hid into `c`.
    fn close(&mut self, c: &mut Counts, why: Close) {
        let Some(w) = self.open.take() else { return };
        self.stores = 0;
        let exposes = w.has_load || matches!(why, Close::Full | Close::Serialize);
        let slowest = (0..LEVELS.len()).rev().find(|&i| w.by_level[i] > 0);
        for (i, &n) in w.by_level.iter().enumerate() {
            let exposed = u32::from(exposes && Some(i) == slowest);
            hide(c, i, u64::from(n - exposed));
        }
    }

    /// A chain point at instruction `insn`: the issue waits for the
    /// chains that ran past it.
    fn chain_point(&mut self, c: &mut Counts, insn: u64) {
        let now = insn + self.shift;
        if self.chain_ready > now {
            let wait = self.chain_ready - now;
            c.l1_chain += wait;
            self.shift += wait;
        }
        self.chain_from = insn;
    }

    fn expire(&mut self, c: &mut Counts, cfg: &CoreConfig, insn: u64) {
        if insn.saturating_sub(self.chain_from) >= cfg.rob {
            self.chain_point(c, insn);
        }
        if self
            .open
            .is_some_and(|w| insn.saturating_sub(w.start) >= cfg.rob)
        {
            self.close(c, Close::Expired);
        }
    }

    /// The most recent load `vaddr` depends on, if any within the ROB.
    fn producer(&self, cfg: &CoreConfig, insn: u64, vaddr: u64) -> Option<Producer> {
        self.recent(cfg, insn, |p| vaddr.wrapping_sub(p.value) < 4096)
    }

    /// The most recent load of the same value within the ROB.
    fn same_value(&self, cfg: &CoreConfig, insn: u64, value: u64) -> Option<Producer> {
        self.recent(cfg, insn, |p| p.value == value)
    }

    /// The most recent load within the ROB that `wanted` accepts. The ring
    /// fills in order and a vCPU's instruction index only grows, so the
    /// walk from the newest stops at the first empty entry or the first
    /// one beyond the ROB: every entry after it is empty or older (this
    /// runs at every load).
    fn recent(
        &self,
        cfg: &CoreConfig,
        insn: u64,
        wanted: impl Fn(&Producer) -> bool,
    ) -> Option<Producer> {
        for k in 0..PRODUCERS {
            let p = self.producers[(self.head + PRODUCERS - 1 - k) % PRODUCERS]?;
            if insn.saturating_sub(p.insn) > cfg.rob {
                return None;
            }
            if wanted(&p) {
                return Some(p);
            }
        }
        None
    }

    fn remember(&mut self, p: Producer) {
        self.producers[self.head] = Some(p);
        self.head = (self.head + 1) % PRODUCERS;
    }

    /// Opens a window with one miss at level `i`.
    fn open_with(&mut self, insn: u64, i: usize, load: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut w = Window {
            id,
            start: insn,
            has_load: load,
            misses: 1,
            ..Window::default()
        };
        w.by_level[i] = 1;
        self.open = Some(w);
        id
    }

    /// A load of `size` bytes at `vaddr` (its `value` when it is 8 bytes)
    /// at instruction `insn`, served by `src`.
    pub(crate) fn load(
        &mut self,
        c: &mut Counts,
        cfg: &CoreConfig,
        insn: u64,
        vaddr: u64,
        value: Option<u64>,
        src: Source,
    ) {
        self.expire(c, cfg, insn);
        let open_id = self.open.map(|w| w.id);
        let dep = self.producer(cfg, insn, vaddr);
        let on_window = dep.is_some_and(|p| p.window.is_some() && p.window == open_id);
        let now = insn + self.shift;
        let mut ready = now;
        let mine = match level(src) {
            // An L1 hit that waits for a miss of the window: exposed.
            None if on_window => open_id,
            None => {
                // Hidden; its value comes `depwin` slots after it issues
                // and its pointer is ready.
                c.hid_l1 += 1;
                ready = dep.map_or(now, |p| p.ready.max(now)) + cfg.depwin;
                self.chain_ready = self.chain_ready.max(ready);
                None
            }
            Some(i) => match &mut self.open {
                Some(w) if !on_window && w.misses < cfg.mlp => {
                    w.misses += 1;
                    w.by_level[i] += 1;
                    w.has_load = true;
                    Some(w.id)
                }
                _ => {
                    let why = if on_window {
                        Close::Dependent
                    } else {
                        Close::Full
                    };
                    self.close(c, why);
                    Some(self.open_with(insn, i, true))
                }
            },
        };
        if let Some(value) = value {
            // The same pointer loaded again (a spill and reload, a local
            // variable in memory): it waits for what its first load waited
            // for, if that is still open.
            let window = mine.or_else(|| {
                self.same_value(cfg, insn, value)
                    .and_then(|p| p.window)
                    .filter(|w| Some(*w) == self.open.map(|o| o.id))
            });
            self.remember(Producer {
                insn,
                value,
                ready,
                window,
            });
        }
    }

    /// A store at instruction `insn`, served by `src`: into the store
    /// buffer; a miss also takes a fill buffer in the window.
    pub(crate) fn store(&mut self, c: &mut Counts, cfg: &CoreConfig, insn: u64, src: Source) {
        self.expire(c, cfg, insn);
        let Some(i) = level(src) else {
            c.hid_l1 += 1;
            if self.open.is_some() {
                self.stores += 1;
                if self.stores >= cfg.sb {
                    self.close(c, Close::Full);
                }
            }
            return;
        };
        match &mut self.open {
            Some(w) if w.misses < cfg.mlp && self.stores < cfg.sb => {
                w.misses += 1;
                w.by_level[i] += 1;
                self.stores += 1;
            }
            _ => {
                self.close(c, Close::Full);
                self.open_with(insn, i, false);
                self.stores = 1;
            }
        }
    }

    /// A serializing instruction at `insn`: the window closes, the store
    /// buffer drains and the loads before it complete.
    pub(crate) fn serialize(&mut self, c: &mut Counts, insn: u64) {
        self.close(c, Close::Serialize);
        self.chain_point(c, insn);
    }

    /// A mark at `insn`: the open window and the chains are counted in the
    /// region that ends.
    pub(crate) fn settle(&mut self, c: &mut Counts, insn: u64) {
        self.close(c, Close::Settle);
        self.chain_point(c, insn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASWELL: CoreConfig = CoreConfig {
        rob: 192,
        mlp: 10,
        sb: 42,
        depwin: 16,
    };

    fn hidden_dram(c: &Counts) -> u64 {
        c.hid_dram_local
    }

    /// k pointer chases through DRAM, interleaved, 4 instructions a hop
    /// (load, test, branch, count): `hops` loads of each; returns the
    /// exposed DRAM accesses.
    fn chases(k: u64, hops: u64) -> (u64, Counts) {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        let mut insn = 0;
        // Chase j's node i lives at base_j + i * 8192 and points to the next.
        let node = |j: u64, i: u64| 0x1000_0000 * (j + 1) + i * 8192;
        for i in 0..hops {
            for j in 0..k {
                insn += 4;
                let next = node(j, i + 1);
                s.load(
                    &mut c,
                    &HASWELL,
                    insn,
                    node(j, i),
                    Some(next),
                    Source::DramLocal,
                );
            }
        }
        s.settle(&mut c, 1 << 40);
        (k * hops - hidden_dram(&c), c)
    }

    // One chase exposes every hop; k chases expose one hop in k, up to the
    // fill buffers (10): 12 chases expose one hop in 10, the fill buffers'
    // throughput (windows of 10 misses).
    #[test]
    fn independent_chases_overlap_up_to_the_fill_buffers() {
        let (exposed, c) = chases(1, 100);
        assert_eq!(exposed, 100);
        assert_eq!(c.hid_l1, 0);
        for k in [2, 4, 8, 10] {
            let (exposed, _) = chases(k, 100);
            assert_eq!(exposed, 100, "k = {k}: one exposed per round");
        }
        let (exposed, _) = chases(12, 100);
        assert_eq!(exposed, 120, "12 chases, 10 fill buffers");
    }

    // Lanes kept in memory, as a compiler keeps an array of cursors: each
    // step loads the cursor (an L1 hit, the pointer the lane's last miss
    // loaded), loads what it points to and stores it back. One lane is a
    // chain; k lanes expose one miss a round.
    #[test]
    fn a_pointer_that_goes_through_memory_still_chains() {
        for k in [1u64, 2, 4] {
            let mut s = OverlapState::default();
            let mut c = Counts::default();
            let node = |j: u64, i: u64| 0x1000_0000 * (j + 1) + i * 8192;
            let slot = |j: u64| 0x7fff_0000 + j * 8;
            let mut insn = 0;
            for i in 0..50 {
                for j in 0..k {
                    insn += 2;
                    s.load(
                        &mut c,
                        &HASWELL,
                        insn,
                        slot(j),
                        Some(node(j, i)),
                        Source::L1,
                    );
                    insn += 1;
                    s.load(
                        &mut c,
                        &HASWELL,
                        insn,
                        node(j, i),
                        Some(node(j, i + 1)),
                        Source::DramLocal,
                    );
                    insn += 1;
                    s.store(&mut c, &HASWELL, insn, Source::L1);
                }
            }
            s.settle(&mut c, 1 << 40);
            assert_eq!(50 * k - c.hid_dram_local, 50, "k = {k}");
        }
    }

    // Independent misses farther apart than the ROB do not overlap.
    #[test]
    fn misses_beyond_the_rob_do_not_overlap() {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        for i in 0..10u64 {
            s.load(
                &mut c,
                &HASWELL,
                i * 200,
                0x100_0000 + i * 8192,
                None,
                Source::DramLocal,
            );
        }
        s.settle(&mut c, 1 << 40);
        assert_eq!(c.hid_dram_local, 0);
        // 50 apart: four in a window of 192.
        let mut c = Counts::default();
        for i in 0..8u64 {
            s.load(
                &mut c,
                &HASWELL,
                10_000 + i * 50,
                0x200_0000 + i * 8192,
                None,
                Source::DramLocal,
            );
        }
        s.settle(&mut c, 1 << 40);
        assert_eq!(c.hid_dram_local, 6, "windows of 4: 2 exposed of 8");
    }

    // A window exposes its slowest miss: an L2 hit beside a DRAM miss is
    // hidden whichever comes first.
    #[test]
    fn a_window_pays_its_slowest_miss() {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        s.load(&mut c, &HASWELL, 1, 0x1000, None, Source::L2);
        s.load(&mut c, &HASWELL, 2, 0x9000, None, Source::DramLocal);
        s.settle(&mut c, 1 << 40);
        assert_eq!((c.hid_l2, c.hid_dram_local), (1, 0));
    }

    // Stores retire into the store buffer: alone they cost nothing; back
    // to back they expose one window per fill-buffer's worth (random
    // writes to DRAM: about the latency over the fill buffers each).
    #[test]
    fn stores_retire_through_the_store_buffer() {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        s.store(&mut c, &HASWELL, 10, Source::DramLocal);
        s.load(&mut c, &HASWELL, 500, 0x5000, None, Source::L1);
        s.settle(&mut c, 1 << 40);
        assert_eq!(c.hid_dram_local, 1, "an isolated store miss is hidden");
        let mut c = Counts::default();
        for i in 0..100u64 {
            s.store(&mut c, &HASWELL, 1000 + i * 4, Source::DramLocal);
        }
        s.settle(&mut c, 1 << 40);
        assert_eq!(
            100 - c.hid_dram_local,
            9,
            "windows of 10, the last one unfilled"
        );
        assert_eq!(c.hid_l1, 0);
    }

    // A locked instruction waits for the store buffer: a store miss before
    // it is exposed.
    #[test]
    fn a_serializing_instruction_exposes_pending_stores() {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        s.store(&mut c, &HASWELL, 10, Source::Llc);
        s.serialize(&mut c, 20);
        assert_eq!(c.hid_llc, 0);
    }

    // L1 hits are hidden; what a chain of them costs is its slots past
    // the issue (`l1_chain`), counted at chain points: independent loads
    // cost none, a walk pays its latency a step (16 slots at DEPWIN 16)
    // whatever its instructions, a short chain inside independent work
    // pays nothing, and a load waiting for a miss of the window is
    // exposed.
    #[test]
    fn l1_chains_cost_their_excess_over_the_issue() {
        let mut s = OverlapState::default();
        let mut c = Counts::default();
        for i in 0..10u64 {
            s.load(&mut c, &HASWELL, i * 3, 0x7000 + i * 8, Some(i), Source::L1);
        }
        s.settle(&mut c, 100);
        assert_eq!((c.hid_l1, c.l1_chain), (10, 0), "independent loads");
        // Ten steps 3 instructions apart, from instruction 100: the last
        // value is ready at 100 + 10 * 16, the issue is at 127.
        let walk = |s: &mut OverlapState, c: &mut Counts, from: u64, steps: u64, base: u64| {
            let mut p = base;
            for i in 0..steps {
                let next = p + 256;
                s.load(c, &HASWELL, from + i * 3, p, Some(next), Source::L1);
                p = next;
            }
        };
        let mut c = Counts::default();
        walk(&mut s, &mut c, 100, 10, 0x10_0000);
        s.settle(&mut c, 127);
        assert_eq!((c.hid_l1, c.l1_chain), (10, 160 - 27), "a walk");
        // A walk longer than the ROB (192): chain points on the way, still
        // 16 slots a step in all.
        let mut c = Counts::default();
        walk(&mut s, &mut c, 1000, 100, 0x20_0000);
        s.settle(&mut c, 1297);
        assert_eq!(c.l1_chain, 1600 - 297, "a walk past the ROB");
        // Two steps, then 40 independent instructions before the next
        // chain point: covered.
        let mut c = Counts::default();
        walk(&mut s, &mut c, 5000, 2, 0x30_0000);
        s.settle(&mut c, 5043);
        assert_eq!(c.l1_chain, 0, "a short chain among independent work");
        // A serializing instruction waits for the chain before it.
        let mut c = Counts::default();
        walk(&mut s, &mut c, 6000, 2, 0x40_0000);
        s.serialize(&mut c, 6004);
        assert_eq!(c.l1_chain, 32 - 4, "serialized");
        let mut c = Counts::default();
        s.load(
            &mut c,
            &HASWELL,
            10_000,
            0x90_0000,
            Some(0x91_0000),
            Source::DramLocal,
        );
        s.load(&mut c, &HASWELL, 10_100, 0x91_0010, None, Source::L1);
        assert_eq!(c.hid_l1, 0, "waits for the window's miss");
    }

    #[test]
    fn core_text_round_trips() {
        let c = CoreConfig::parse("192:10:42:16").unwrap();
        assert_eq!(c, HASWELL);
        assert_eq!(c.text(), "192:10:42:16");
        for bad in ["192:10:42", "0:10:42:16", "192:x:42:16", "192:65:42:16"] {
            assert!(CoreConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
