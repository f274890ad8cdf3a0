// SPDX-License-Identifier: GPL-2.0
//! The vCPUs' events in the order of modeled time, and the time they wait.
//!
//! Under `-icount` QEMU runs one vCPU at a time, for slices of thousands to
//! hundreds of thousands of instructions, so in QEMU's order two vCPUs never
//! touch a line at the same moment: two threads writing two counters of one
//! line move it once a slice, not once an update. Here each vCPU has a
//! modeled clock (its counts priced so far, `Clocks`) and a queue of its
//! events (a block's instructions, a memory access, a rep string
//! instruction's execution, a halt). An event waits in its queue until it
//! is the earliest in modeled time, and the model sees the events of all
//! vCPUs in that order: the counters' updates of the two threads alternate
//! as they would on two cores, and the line moves at each.
//!
//! The order is conservative: the vCPU with the earliest clock goes next,
//! and when its queue is empty nothing goes (its next event may come
//! earlier than any queued one), until QEMU runs it. A halted vCPU (`hlt`,
//! `mwait`) is out of the race until its next event; it then starts at the
//! present (the earliest clock of the vCPUs in the race, or the time of the
//! latest event the model saw), the time it was idle counted in its clock
//! but not in its cycles. A vCPU silent for `QUIET_EVENTS` of the others'
//! events is taken for idle too.
//!
//! Each vCPU's own order stays QEMU's, so everything per vCPU (the rep
//! folding, the windows of `overlap`) sees what it saw before.
//!
//! Waiting, two kinds, counted in `wait` and in the clock:
//! - **A line in transfer is busy** until the transfer completes: a
//!   transfer that starts while another is under way on the line queues
//!   behind it (`busy`). Two vCPUs updating one line at once each pay the
//!   other's transfer too, as contended lines do on hardware.
//! - **A spinning vCPU waits for the store it reads.** Values are QEMU's,
//!   so a vCPU that spun until another released a lock read the release
//!   in QEMU's order; in modeled time its read may come earlier than the
//!   release. A vCPU is spinning from a `pause` (every kernel and libc spin
//!   loop has one) until it has run `SPIN_WINDOW` instructions without one;
//!   its plain loads and the loads of its atomics that act on the value
//!   (`decode::decides`: cmpxchg, xchg, bts; not an xadd, which takes
//!   what it finds) depend on the last store to their 8-byte word by another
//!   vCPU, if it wrote some of their bytes (a direct-mapped shadow of the
//!   words stored to, `Shadow`), and
//!   wait until that store has been modeled; its clock then moves to the
//!   store's time. Only spinning loads wait: a vCPU that reads data
//!   another stored later in modeled time, without waiting for it, would
//!   on hardware have read the older value at its own time, and the
//!   program does not wait there; making every such read wait would
//!   serialize vCPUs that share only incidental data (a tick's jiffies)
//!   by whole QEMU slices.
//!
//! Limits: values stay QEMU's, so a retry loop (cmpxchg) retries when QEMU's
//! order made it retry, not when modeled time would; a lock holder is
//! caught by a waiter only when QEMU switched vCPUs inside the critical
//! section, which fine interleaving (a patched QEMU's quantum) makes
//! likely and QEMU's long slices make rare.

use crate::counts::{FIELDS, N_FIELDS};
use crate::decode::{Kind, StrOp};
use crate::feed::{Feed, MemOp};
use crate::machine::Machine;
use crate::profile::Profile;
use std::collections::{HashMap, VecDeque};

/// Instructions without a `pause` after which a vCPU no longer spins.
pub const SPIN_WINDOW: u64 = 64;
/// Log2 of the shadow's entries (each a word's last store).
const SHADOW_BITS: u32 = 20;
/// Log2 of each vCPU's ring of its recent events' times.
const RING_BITS: u32 = 16;
/// The queued events beyond which the earliest queued event goes even if
/// a running vCPU has none queued (memory's bound; counted in `forced`).
pub const MAX_QUEUED: usize = 4 << 20;
/// The events the other vCPUs send after a vCPU's last one, beyond which
/// a vCPU with none queued is taken for idle (halted in a way the plugin
/// does not see: round-robin QEMU runs every vCPU that can run within a
/// round of slices, far fewer events than this), until its next event.
pub const QUIET_EVENTS: u64 = 1 << 20;

/// One event of a vCPU, in QEMU's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A block begins: its instructions.
    Block(u64),
    /// A memory access; `count` is the vCPU's QEMU instruction count at it
    /// and `to_end` its instruction's distance to its block's end (the
    /// access's instruction index is worked out when it is modeled, as
    /// the plugin did at once before).
    Mem {
        /// The access.
        op: MemOp,
        /// QEMU's count at the access.
        count: u64,
        /// Instructions from its own to its block's end, its own included.
        to_end: u64,
    },
    /// An execution of a rep string instruction (`Machine::rep_exec`).
    Rep {
        /// Its address.
        pc: u64,
        /// Its operation.
        op: StrOp,
        /// QEMU's count at it.
        count: u64,
    },
    /// `hlt` or `mwait`: idle until the next event.
    Halt,
}

/// How the events are ordered and what waits (the plugin's `order=` and
/// `wait=`), so that each mechanism can be taken out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// Model the events in modeled time (false: in QEMU's order, each at
    /// once, as before).
    pub by_time: bool,
    /// Count waiting (busy lines, spinning loads).
    pub wait: bool,
}

impl Default for Mode {
    fn default() -> Self {
        Mode {
            by_time: true,
            wait: true,
        }
    }
}

/// A load's dependence: the store it reads, by its vCPU and its number in
/// that vCPU's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dep {
    cpu: usize,
    seq: u64,
}

/// A word's last store, in 16 bytes (the plugin writes one at every guest
/// store): the word's address / 8 plus one in the low 50 bits (0: empty;
/// guest physical addresses below 2^53), the storing vCPU above it (6
/// bits: the model takes 64 vCPUs), and the bytes it wrote in the top 8
/// (a bit each).
#[derive(Clone, Copy, Default)]
struct ShadowEntry {
    tag: u64,
    seq: u64,
}

const TAG_WORD_BITS: u32 = 50;
const TAG_CPU_BITS: u32 = 6;

impl ShadowEntry {
    fn new(word: u64, bytes: u8, cpu: usize, seq: u64) -> Self {
        ShadowEntry {
            tag: (word + 1) & ((1 << TAG_WORD_BITS) - 1)
                | (cpu as u64) << TAG_WORD_BITS
                | u64::from(bytes) << (TAG_WORD_BITS + TAG_CPU_BITS),
            seq,
        }
    }

    fn word_plus_one(self) -> u64 {
        self.tag & ((1 << TAG_WORD_BITS) - 1)
    }

    fn cpu(self) -> usize {
        ((self.tag >> TAG_WORD_BITS) & ((1 << TAG_CPU_BITS) - 1)) as usize
    }

    fn bytes(self) -> u8 {
        (self.tag >> (TAG_WORD_BITS + TAG_CPU_BITS)) as u8
    }
}

/// The bytes of the 8-byte word `word` that `size` bytes at `paddr` cover,
/// a bit each.
fn bytes_of(word: u64, paddr: u64, size: u64) -> u8 {
    let (lo, hi) = (word << 3, (word << 3) + 8);
    let (a, b) = (paddr.max(lo), (paddr + size.max(1)).min(hi));
    if a >= b {
        return 0;
    }
    (((1u16 << (b - a)) - 1) << (a - lo)) as u8
}

/// The last store to each 8-byte word, direct-mapped: a newer word evicts
/// an older one of the same slot (a lost dependence: that load does not
/// wait).
struct Shadow {
    slots: Vec<ShadowEntry>,
}

impl Shadow {
    fn new() -> Self {
        Shadow {
            slots: vec![ShadowEntry::default(); 1 << SHADOW_BITS],
        }
    }

    /// A word's slot: its address's low bits, so that the words a guest
    /// stores to near each other (a stack, an object, a page being
    /// cleared) share the host's cache lines; words `1 << SHADOW_BITS`
    /// apart (8 MiB) share a slot. A hash of the word scattered them: a
    /// host cache miss at every guest store, 6 % of a model boot's time.
    fn slot(word: u64) -> usize {
        (word & ((1 << SHADOW_BITS) - 1)) as usize
    }

    fn store(&mut self, word: u64, bytes: u8, cpu: usize, seq: u64) {
        self.slots[Self::slot(word)] = ShadowEntry::new(word, bytes, cpu, seq);
    }

    /// The last store to `word`, if it wrote some of `bytes` (two ints of
    /// one word are two variables).
    fn last(&self, word: u64, bytes: u8) -> Option<Dep> {
        let e = self.slots[Self::slot(word)];
        let tag = (word + 1) & ((1 << TAG_WORD_BITS) - 1);
        (e.word_plus_one() == tag && e.bytes() & bytes != 0).then_some(Dep {
            cpu: e.cpu(),
            seq: e.seq,
        })
    }
}

/// One vCPU's queue and clock.
struct Lane {
    queue: VecDeque<(u64, Event, Option<Dep>)>,
    /// The number its next queued event gets.
    next: u64,
    /// The number of its events modeled.
    done: u64,
    /// Out of the race (halted, or not started).
    idle: bool,
    /// Instructions modeled (its blocks').
    insns: u64,
    /// Cycles idle (halted), in the clock, not in the counts.
    idle_cycles: f64,
    /// Spinning at enqueue: instructions since its last `pause`, or None.
    spin: Option<u64>,
    /// The clock after each of its recent events, by number (ring).
    times: Vec<(u64, f64)>,
    /// Its clock after its last event modeled (`Order::refresh`).
    clock: f64,
    /// Its counts as last priced, and their price (`Order::refresh`).
    priced: [u64; N_FIELDS],
    cost: f64,
    /// `Order::pushes` at its last event.
    last_push: u64,
}

impl Lane {
    fn new() -> Self {
        Lane {
            queue: VecDeque::new(),
            next: 0,
            done: 0,
            idle: true,
            insns: 0,
            idle_cycles: 0.0,
            spin: None,
            times: vec![(u64::MAX, 0.0); 1 << RING_BITS],
            clock: 0.0,
            priced: [0; N_FIELDS],
            cost: 0.0,
            last_push: 0,
        }
    }

    fn time_of(&self, seq: u64) -> Option<f64> {
        let (s, t) = self.times[(seq & ((1 << RING_BITS) - 1)) as usize];
        (s == seq).then_some(t)
    }
}

/// The prices a clock is made of.
#[derive(Clone, Debug)]
pub struct Clocks {
    /// The profile's prices, but `str_folded`'s: minus an instruction's
    /// (the plugin's instructions are QEMU's, less the folded ones).
    prices: [f64; N_FIELDS],
    insns: f64,
}

impl Clocks {
    /// A profile's prices (`Profile::price` of a vCPU's counts is its clock
    /// but for idle time).
    pub fn of(p: &Profile) -> Self {
        let mut prices = p.cycles;
        let insns = p.of("insns");
        if let Some(i) = FIELDS.iter().position(|f| *f == "str_folded") {
            prices[i] -= insns;
        }
        Clocks { prices, insns }
    }

    fn field(&self, name: &str) -> f64 {
        FIELDS
            .iter()
            .position(|f| *f == name)
            .map_or(0.0, |i| self.prices[i])
    }
}

/// The vCPUs' queues and clocks (see the module's text).
pub struct Order {
    mode: Mode,
    feed: Feed,
    clocks: Clocks,
    lanes: Vec<Lane>,
    shadow: Shadow,
    /// Per line that moved between vCPUs, the time its last transfer ends.
    busy: HashMap<u64, f64>,
    /// The time of the latest event modeled.
    frontier: f64,
    queued: usize,
    /// The vCPU between the load and the store of an atomic: nothing of
    /// another vCPU comes between them.
    atomic: Option<usize>,
    /// The earliest vCPU of the last look at all of them, and the next
    /// earliest clock: while only that vCPU's events are modeled and no
    /// vCPU halts or wakes, it stays the earliest until its clock passes
    /// that (`drain` need not look at every vCPU at every event).
    leader: Option<(usize, f64)>,
    /// Events modeled ahead of their turn because too many were queued.
    pub forced: u64,
    /// Events pushed so far.
    pushes: u64,
    /// vCPUs taken for idle after `QUIET_EVENTS` without an event.
    pub quiet: u64,
}

impl Order {
    /// Queues for `vcpus` vCPUs, every one idle until its first event.
    pub fn new(vcpus: usize, mode: Mode, feed: Feed, clocks: Clocks) -> Self {
        Order {
            mode,
            feed,
            clocks,
            lanes: (0..vcpus).map(|_| Lane::new()).collect(),
            shadow: Shadow::new(),
            busy: HashMap::new(),
            frontier: 0.0,
            queued: 0,
            atomic: None,
            leader: None,
            forced: 0,
            pushes: 0,
            quiet: 0,
        }
    }

    /// `cpu`'s clock as of its last event (an access of another vCPU may
    /// add a write-back to its counts since, priced 0 in every profile).
    pub fn clock(&self, cpu: usize) -> f64 {
        self.lanes[cpu].clock
    }

    /// Works `cpu`'s clock out again: its counts priced, its instructions
    /// modeled, its idle time.
    ///
    /// This runs at every event, and an event changes one to three counts,
    /// a different few each time: the counts are read in place, the
    /// changed ones found as a mask without a branch per count, and only
    /// those priced.
    fn refresh(&mut self, m: &Machine, cpu: usize) -> f64 {
        const _: () = assert!(N_FIELDS <= 64, "a mask bit per count");
        let now = m.counts[cpu].as_array();
        let lane = &mut self.lanes[cpu];
        let mut changed = 0u64;
        for (i, (x, was)) in now.iter().zip(lane.priced.iter()).enumerate() {
            changed |= u64::from(x != was) << i;
        }
        let mut add = 0.0;
        while changed != 0 {
            let i = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            add += now[i].wrapping_sub(lane.priced[i]) as i64 as f64 * self.clocks.prices[i];
            lane.priced[i] = now[i];
        }
        lane.cost += add;
        lane.clock = lane.cost + lane.insns as f64 * self.clocks.insns + lane.idle_cycles;
        lane.clock
    }

    /// The machine's time now: the latest vCPU clock.
    pub fn now(&self) -> f64 {
        self.lanes.iter().map(|l| l.clock).fold(0.0, f64::max)
    }

    /// `cpu` ran a `pause`: it spins (see the module's text).
    pub fn pause(&mut self, cpu: usize) {
        self.lanes[cpu].spin = Some(0);
    }

    /// Queues `cpu`'s next event and models every event whose turn it is.
    pub fn push(&mut self, m: &mut Machine, cpu: usize, ev: Event) {
        if self.lanes[cpu].idle {
            // It wakes at the present: the earliest clock of the vCPUs in
            // the race (one of them woke it, or the time of the latest
            // event if none is). Not the latest event's time alone: a vCPU
            // that idles in a loop (QEMU runs `mwait` as `pause` on more
            // than one vCPU) would otherwise stay behind a vCPU whose
            // events wait for it, a few cycles a turn.
            let present = self
                .lanes
                .iter()
                .enumerate()
                .filter(|(c, l)| *c != cpu && !l.idle)
                .map(|(_, l)| l.clock)
                .fold(f64::INFINITY, f64::min);
            let present = if present.is_finite() {
                present
            } else {
                self.frontier
            };
            let lane = &mut self.lanes[cpu];
            lane.idle = false;
            self.leader = None;
            let behind = present - lane.clock;
            if behind > 0.0 {
                lane.idle_cycles += behind;
                self.refresh(m, cpu);
            }
        }
        self.pushes += 1;
        let lane = &mut self.lanes[cpu];
        lane.last_push = self.pushes;
        let seq = lane.next;
        lane.next += 1;
        let mut dep = None;
        match ev {
            Event::Block(n) => {
                if let Some(k) = lane.spin {
                    lane.spin = (k + n <= SPIN_WINDOW).then_some(k + n);
                }
            }
            Event::Mem { op, .. } if !op.io => {
                let word = op.paddr >> 3;
                if op.store {
                    for w in word..=(op.paddr + op.size.max(1) - 1) >> 3 {
                        let bytes = bytes_of(w, op.paddr, op.size);
                        self.shadow.store(w, bytes, cpu, seq);
                    }
                } else if lane.spin.is_some()
                    && self.mode.wait
                    && (op.decides || !Kind::from_code(op.code).rmw())
                {
                    let bytes = bytes_of(word, op.paddr, op.size);
                    dep = self.shadow.last(word, bytes).filter(|d| d.cpu != cpu);
                }
            }
            _ => {}
        }
        if !self.mode.by_time {
            self.model(m, cpu, seq, ev, dep);
            return;
        }
        // The common case: the earliest vCPU runs, nothing of it queued,
        // its event waits for nothing: modeled at once, no queue.
        if let Some((l, next)) = self.leader {
            let lane = &self.lanes[cpu];
            let free = dep.is_none_or(|d| self.lanes[d.cpu].done > d.seq);
            if l == cpu
                && lane.queue.is_empty()
                && lane.clock <= next
                && free
                && self.atomic.is_none_or(|a| a == cpu)
            {
                self.model(m, cpu, seq, ev, dep);
                if self.lanes[cpu].clock > next || self.atomic.is_some() {
                    self.drain(m, false);
                }
                return;
            }
        }
        self.lanes[cpu].queue.push_back((seq, ev, dep));
        self.queued += 1;
        self.drain(m, false);
    }

    /// Models every queued event (at a mark, and at exit).
    pub fn flush(&mut self, m: &mut Machine) {
        self.drain(m, true);
        if self.atomic.take().is_some() {
            self.drain(m, true);
        }
    }

    /// Whether `cpu`'s next event waits for a store not modeled yet, and
    /// whose.
    fn blocked_on(&self, cpu: usize) -> Option<usize> {
        let (_, _, dep) = self.lanes[cpu].queue.front()?;
        let d = (*dep)?;
        (self.lanes[d.cpu].done <= d.seq).then_some(d.cpu)
    }

    /// Models queued events, earliest clock first, while the earliest
    /// running vCPU has one (`all`: until every queue is empty).
    fn drain(&mut self, m: &mut Machine, all: bool) {
        loop {
            // An atomic's store follows its load at once.
            if let Some(cpu) = self.atomic {
                let Some((seq, ev, dep)) = self.lanes[cpu].queue.pop_front() else {
                    return;
                };
                self.queued -= 1;
                self.model(m, cpu, seq, ev, dep);
                continue;
            }
            let force = all || self.queued > MAX_QUEUED;
            if let (Some((l, next)), false) = (self.leader, force) {
                if self.lanes[l].clock <= next {
                    if self.lanes[l].queue.is_empty() {
                        if self.pushes - self.lanes[l].last_push > QUIET_EVENTS {
                            self.lanes[l].idle = true;
                            self.leader = None;
                            self.quiet += 1;
                            continue;
                        }
                        return;
                    }
                    if self.blocked_on(l).is_none() {
                        self.run_while_first(m, l, next);
                        continue;
                    }
                }
            }
            // The earliest vCPU in the race (with `force`, the earliest
            // with an event); ties go to the lower number.
            let mut first: Option<(usize, f64)> = None;
            let mut second = f64::INFINITY;
            for (c, lane) in self.lanes.iter().enumerate() {
                if lane.idle || (force && lane.queue.is_empty()) {
                    continue;
                }
                let t = lane.clock;
                match first {
                    Some((_, ft)) if t >= ft => second = second.min(t),
                    _ => {
                        if let Some((_, ft)) = first {
                            second = second.min(ft);
                        }
                        first = Some((c, t));
                    }
                }
            }
            let Some((mut cpu, _)) = first else { return };
            self.leader = (!force).then_some((cpu, second));
            if self.lanes[cpu].queue.is_empty() {
                if self.pushes - self.lanes[cpu].last_push > QUIET_EVENTS {
                    self.lanes[cpu].idle = true;
                    self.leader = None;
                    self.quiet += 1;
                    continue;
                }
                return;
            }
            if !all && self.queued > MAX_QUEUED {
                self.forced += 1;
            }
            // A load waiting for another vCPU's store: that vCPU goes
            // first (the store is queued: it was queued before the load).
            let mut hops = 0;
            while let Some(w) = self.blocked_on(cpu) {
                cpu = w;
                hops += 1;
                assert!(hops <= self.lanes.len(), "a cycle of waiting loads");
            }
            self.run_while_first(m, cpu, second);
        }
    }

    /// Models `cpu`'s events while it is the earliest (its clock at most
    /// `second`), none waits for another vCPU, and no atomic is half done.
    fn run_while_first(&mut self, m: &mut Machine, cpu: usize, second: f64) {
        while let Some((seq, ev, dep)) = self.lanes[cpu].queue.pop_front() {
            self.queued -= 1;
            self.model(m, cpu, seq, ev, dep);
            if self.atomic.is_some()
                || self.lanes[cpu].queue.is_empty()
                || self.blocked_on(cpu).is_some()
                || self.lanes[cpu].clock > second
            {
                break;
            }
        }
    }

    /// Models one event of `cpu` (its turn has come).
    fn model(&mut self, m: &mut Machine, cpu: usize, seq: u64, ev: Event, dep: Option<Dep>) {
        let mut start = self.lanes[cpu].clock;
        self.frontier = self.frontier.max(start);
        self.atomic = None;
        if self.leader.is_some_and(|(l, _)| l != cpu) {
            self.leader = None;
        }
        match ev {
            Event::Block(n) => {
                // Only the instructions change: no need to price the counts.
                let lane = &mut self.lanes[cpu];
                lane.insns += n;
                lane.clock += n as f64 * self.clocks.insns;
                lane.done = seq + 1;
                let t = lane.clock;
                lane.times[(seq & ((1 << RING_BITS) - 1)) as usize] = (seq, t);
                return;
            }
            Event::Rep { pc, op, count } => {
                m.rep_exec(cpu, pc, op, count);
            }
            Event::Halt => {
                // Idle from here until its next event, which starts at the
                // present (`push`); one already queued starts there now.
                if self.lanes[cpu].queue.is_empty() {
                    self.lanes[cpu].idle = true;
                    self.leader = None;
                } else if self.frontier > start {
                    self.lanes[cpu].idle_cycles += self.frontier - start;
                }
            }
            Event::Mem { op, count, to_end } => {
                if let Some(d) = dep {
                    // The store it reads has been modeled (`blocked_on`).
                    if let Some(t) = self.lanes[d.cpu].time_of(d.seq) {
                        if t > start {
                            m.counts[cpu].wait += (t - start).ceil() as u64;
                            start = self.refresh(m, cpu);
                        }
                    }
                }
                // Only its transfers are needed after (`queue_on_line`):
                // not a copy of every count at every access.
                let before = (m.counts[cpu].xfer_local, m.counts[cpu].xfer_remote);
                let op = MemOp {
                    insn: Feed::insns(m, cpu, count).saturating_sub(to_end),
                    ..op
                };
                self.feed.mem(m, cpu, &op);
                // The load of an atomic holds the line until its store.
                let rmw = Kind::from_code(op.code).rmw() && !op.io;
                self.atomic = (rmw && !op.store).then_some(cpu);
                if self.mode.wait {
                    self.queue_on_line(m, cpu, op.paddr >> 6, start, before);
                }
            }
        }
        self.lanes[cpu].done = seq + 1;
        let t = self.refresh(m, cpu);
        self.lanes[cpu].times[(seq & ((1 << RING_BITS) - 1)) as usize] = (seq, t);
    }

    /// After an access of `cpu` that began at `start`: if it moved `line`
    /// from another vCPU, the transfer begins when the line's last one
    /// ends, and the line is busy until this one ends. `before`: its
    /// local and remote transfers before the access.
    fn queue_on_line(
        &mut self,
        m: &mut Machine,
        cpu: usize,
        line: u64,
        start: f64,
        before: (u64, u64),
    ) {
        let c = &m.counts[cpu];
        let local = c.xfer_local - before.0;
        let remote = c.xfer_remote - before.1;
        if local + remote == 0 {
            return;
        }
        let takes = local as f64 * self.clocks.field("xfer_local")
            + remote as f64 * self.clocks.field("xfer_remote");
        let free = self.busy.get(&line).copied().unwrap_or(0.0);
        let begins = start.max(free);
        if begins > start {
            m.counts[cpu].wait += (begins - start).ceil() as u64;
        }
        self.busy.insert(line, begins + takes);
        if self.busy.len() > 1 << 20 {
            let now = self.frontier;
            self.busy.retain(|_, &mut t| t > now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Config;

    fn profile() -> Profile {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles.toml"))
                .unwrap();
        Profile::from_toml(&text, "server").unwrap()
    }

    struct Rig {
        m: Machine,
        o: Order,
        count: Vec<u64>,
    }

    impl Rig {
        fn new(vcpus: usize, mode: Mode) -> Self {
            Rig {
                m: Machine::new(Config::server(vcpus)),
                o: Order::new(vcpus, mode, Feed::default(), Clocks::of(&profile())),
                count: vec![0; vcpus],
            }
        }

        fn block(&mut self, cpu: usize, n: u64) {
            self.count[cpu] += n;
            self.o.push(&mut self.m, cpu, Event::Block(n));
        }

        fn mem(&mut self, cpu: usize, kind: Kind, paddr: u64, store: bool) {
            let op = MemOp {
                code: kind.code(),
                vaddr: paddr,
                paddr,
                size: 8,
                store,
                ..MemOp::default()
            };
            let count = self.count[cpu];
            self.o.push(
                &mut self.m,
                cpu,
                Event::Mem {
                    op,
                    count,
                    to_end: 1,
                },
            );
        }

        /// `n` updates (`inc [addr]`: a load and a store, in a block of 3)
        /// by `cpu`, as one QEMU slice.
        fn updates(&mut self, cpu: usize, addr: u64, kind: Kind, n: u64) {
            for _ in 0..n {
                self.block(cpu, 3);
                self.mem(cpu, kind, addr, false);
                self.mem(cpu, kind, addr, true);
            }
        }

        fn transfers(&self) -> u64 {
            self.m
                .counts
                .iter()
                .map(|c| c.xfer_local + c.xfer_remote)
                .sum()
        }
    }

    /// Two vCPUs each update their word `n` times a slice, QEMU's slices
    /// one after the other; returns transfers per update.
    fn two_slices(mode: Mode, a: u64, b: u64, kind: Kind) -> f64 {
        let mut r = Rig::new(2, mode);
        let n = 10_000;
        for _ in 0..4 {
            r.updates(0, a, kind, n);
            r.updates(1, b, kind, n);
        }
        r.o.flush(&mut r.m);
        r.transfers() as f64 / (8 * n) as f64
    }

    #[test]
    fn false_sharing_moves_the_line_at_each_update() {
        let per = two_slices(Mode::default(), 0x1000, 0x1008, Kind::Plain);
        assert!(per >= 0.9, "{per} transfers an update");
        // Taken out: in QEMU's order, once a slice.
        let per = two_slices(
            Mode {
                by_time: false,
                wait: true,
            },
            0x1000,
            0x1008,
            Kind::Plain,
        );
        assert!(per < 0.01, "{per} transfers an update");
    }

    #[test]
    fn a_contended_atomic_moves_the_line_at_each_update() {
        // (vCPU 0's first slice runs alone: vCPU 1 has not started.)
        let per = two_slices(Mode::default(), 0x1000, 0x1000, Kind::Locked);
        assert!(per >= 0.7, "{per} transfers an update");
    }

    #[test]
    fn an_atomic_moves_its_line_once() {
        // Two vCPUs lock-add their own counters of one line: the load and
        // the store of each are one access of the line, never split.
        let per = two_slices(Mode::default(), 0x1000, 0x1008, Kind::Locked);
        assert!((0.7..=1.0).contains(&per), "{per} transfers an update");
    }

    #[test]
    fn bytes_of_a_word() {
        assert_eq!(bytes_of(0x200, 0x1000, 8), 0xff);
        assert_eq!(bytes_of(0x200, 0x1004, 4), 0xf0);
        assert_eq!(bytes_of(0x200, 0x1006, 4), 0xc0);
        assert_eq!(bytes_of(0x201, 0x1006, 4), 0x03);
        assert_eq!(bytes_of(0x201, 0x1000, 8), 0);
    }

    #[test]
    fn private_lines_never_move() {
        let per = two_slices(Mode::default(), 0x1000, 0x2000, Kind::Plain);
        assert!(per < 0.001, "{per} transfers an update");
    }

    #[test]
    fn a_contended_line_queues_its_transfers() {
        let slices = |r: &mut Rig| {
            for _ in 0..4 {
                r.updates(0, 0x1000, Kind::Locked, 1000);
                r.updates(1, 0x1000, Kind::Locked, 1000);
            }
            r.o.flush(&mut r.m);
        };
        let mut r = Rig::new(2, Mode::default());
        slices(&mut r);
        let wait: u64 = r.m.counts.iter().map(|c| c.wait).sum();
        let xfer = profile().of("xfer_local");
        // Each transfer waits for the other vCPU's, about one transfer.
        let per = wait as f64 / r.transfers() as f64;
        assert!(
            per > 0.5 * xfer && per < 1.5 * xfer,
            "{per} cycles waited a transfer"
        );
        // Taken out: no waiting.
        let mut r = Rig::new(
            2,
            Mode {
                by_time: true,
                wait: false,
            },
        );
        slices(&mut r);
        assert_eq!(r.m.counts.iter().map(|c| c.wait).sum::<u64>(), 0);
    }

    /// vCPU 0 holds a lock for a long critical section; vCPU 1 spins
    /// (`pause`) until QEMU's order shows it the release, then takes it.
    fn handoff(mode: Mode) -> (f64, f64, u64) {
        let mut r = Rig::new(2, mode);
        let lock = 0x4000;
        // vCPU 0 takes the lock and works 10,000 instructions.
        r.mem(0, Kind::Locked, lock, false);
        r.mem(0, Kind::Locked, lock, true);
        // vCPU 1 spins three times (QEMU switched to it).
        for _ in 0..3 {
            r.block(1, 3);
            r.mem(1, Kind::Plain, lock, false);
            r.o.pause(1);
        }
        for _ in 0..100 {
            r.block(0, 100);
        }
        // vCPU 0 releases.
        r.block(0, 1);
        r.mem(0, Kind::Plain, lock, true);
        r.block(0, 1);
        r.o.push(&mut r.m, 0, Event::Halt);
        // vCPU 1 reads it free and takes it, then works 100 instructions.
        r.block(1, 3);
        r.mem(1, Kind::Plain, lock, false);
        r.mem(1, Kind::Locked, lock, false);
        r.mem(1, Kind::Locked, lock, true);
        r.block(1, 100);
        r.o.flush(&mut r.m);
        let c0 = r.o.clock(0);
        let c1 = r.o.clock(1);
        (c0, c1, r.m.counts[1].wait)
    }

    #[test]
    fn a_spinning_vcpu_waits_for_the_release() {
        let (c0, c1, wait) = handoff(Mode::default());
        // vCPU 1 takes the lock after vCPU 0's 10,000 instructions.
        assert!(c1 > c0 && c1 < c0 + 1000.0, "clocks {c0} {c1}");
        assert!(wait > 9_000, "waited {wait}");
        // Taken out: the waiter's clock never sees the holder's.
        let (c0, c1, wait) = handoff(Mode {
            by_time: true,
            wait: false,
        });
        assert!(c1 < c0 / 2.0, "clocks {c0} {c1}");
        assert_eq!(wait, 0);
    }

    #[test]
    fn a_halted_vcpu_starts_at_the_present() {
        let mut r = Rig::new(2, Mode::default());
        r.block(0, 10_000);
        r.mem(0, Kind::Plain, 0x1000, true);
        r.block(0, 1);
        // vCPU 1 runs for the first time: it starts at vCPU 0's time.
        r.block(1, 10);
        r.mem(1, Kind::Plain, 0x2000, true);
        r.o.flush(&mut r.m);
        let (c0, c1) = (r.o.clock(0), r.o.clock(1));
        assert!(c1 >= 10_000.0 && c1 > c0 - 100.0, "clocks {c0} {c1}");
        // Idle time is in the clock, not in the counts.
        assert_eq!(r.m.counts[1].wait, 0);
    }

    #[test]
    fn a_silent_vcpu_is_taken_for_idle() {
        // vCPU 1 runs once, then sends nothing (halted unseen): vCPU 0's
        // events queue behind it until QUIET_EVENTS, then go.
        let mut r = Rig::new(2, Mode::default());
        r.block(1, 1);
        let n = QUIET_EVENTS + 10;
        for _ in 0..n {
            r.block(0, 1);
        }
        assert!(r.o.queued < 20, "{} queued", r.o.queued);
        assert_eq!(r.o.quiet, 1);
        assert_eq!(r.o.lanes[0].insns, n);
    }

    #[test]
    fn each_vcpu_keeps_its_own_order() {
        // vCPU 1's events while vCPU 0 is idle are modeled at once, in
        // order; an unfinished vCPU keeps the others' events queued.
        let mut r = Rig::new(2, Mode::default());
        r.block(0, 5);
        r.block(1, 5);
        r.mem(1, Kind::Plain, 0x1000, true);
        r.mem(1, Kind::Plain, 0x1000, false);
        r.o.flush(&mut r.m);
        assert_eq!(r.m.counts[1].l1, 1);
        assert_eq!(r.o.lanes[1].done, 3);
    }
}
