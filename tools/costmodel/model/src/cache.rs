// SPDX-License-Identifier: GPL-2.0
//! One set-associative cache with LRU replacement, of 64-byte lines.
//!
//! A cache holds line numbers (physical address / 64) and, per line, the
//! MESI state its holder has it in (`State`); the shared LLC ignores the
//! state. Each set is kept most recently used first, so a hit moves its
//! line to the front and a fill evicts the last way. Sets are small (8 to 16
//! ways): a linear scan is the fast way to search them.

/// Bytes in a cache line.
pub const LINE_BYTES: u64 = 64;

/// The state a private cache holds a line in (MESI; `Invalid` is absence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Read-only, other caches may hold it too.
    Shared,
    /// The only copy, clean: a write makes it `Modified` silently.
    Exclusive,
    /// The only copy, dirty: another vCPU's read is a cache-to-cache transfer.
    Modified,
}

/// A cache's shape: total bytes and ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Capacity in bytes (a multiple of `ways * LINE_BYTES`).
    pub bytes: u64,
    /// Associativity.
    pub ways: usize,
}

impl Geometry {
    /// Parses "48K:12", "2M:16" (size with an optional K/M/G suffix, colon,
    /// ways).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (size, ways) = s
            .split_once(':')
            .ok_or_else(|| format!("cache geometry '{s}': expected SIZE:WAYS"))?;
        let bytes = parse_size(size)?;
        let ways: usize = ways
            .parse()
            .map_err(|_| format!("cache geometry '{s}': bad ways"))?;
        let g = Geometry { bytes, ways };
        if ways == 0 || bytes == 0 || bytes % (ways as u64 * LINE_BYTES) != 0 {
            return Err(format!(
                "cache geometry '{s}': size must be a non-zero multiple of ways * 64"
            ));
        }
        Ok(g)
    }

    /// Number of sets.
    pub fn sets(&self) -> usize {
        (self.bytes / (self.ways as u64 * LINE_BYTES)) as usize
    }
}

/// Parses a byte count with an optional K, M or G suffix (powers of 1024),
/// or a 0x-prefixed hexadecimal number.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("size '{s}': expected N, NK, NM, NG or 0xHEX");
    if let Some(hex) = s.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).map_err(|_| bad());
    }
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1u64 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1u64 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(bad)
}

const EMPTY: u64 = u64::MAX;

/// A way: its line number shifted left by two, its `State` in the two low
/// bits (`EMPTY` when it holds nothing). Eight bytes, so that a set of 16
/// ways is two host cache lines: the plugin looks a line up in a set at
/// every guest memory access.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Way(u64);

impl Way {
    const NONE: Way = Way(EMPTY);

    fn new(line: u64, state: State) -> Way {
        Way(line << 2 | state as u64)
    }

    fn holds(self, line: u64) -> bool {
        self.0 >> 2 == line && self.0 != EMPTY
    }

    fn line(self) -> u64 {
        self.0 >> 2
    }

    fn state(self) -> State {
        match self.0 & 3 {
            0 => State::Shared,
            1 => State::Exclusive,
            _ => State::Modified,
        }
    }
}

/// Moves `set[i]` to the front, the ways before it one back.
fn to_front(set: &mut [Way], i: usize) {
    let w = set[i];
    let mut j = i;
    while j > 0 {
        set[j] = set[j - 1];
        j -= 1;
    }
    set[0] = w;
}

/// A set-associative LRU cache of line numbers.
pub struct Cache {
    sets: usize,
    /// `sets - 1` when `sets` is a power of two (a mask, not a division).
    mask: Option<u64>,
    ways: usize,
    /// `sets * ways` entries; set `s` is `ways[s * ways..][..ways]`, most
    /// recently used first, empty ways (`EMPTY`) last.
    slots: Vec<Way>,
}

impl Cache {
    /// An empty cache of this shape.
    pub fn new(g: Geometry) -> Self {
        let sets = g.sets();
        Cache {
            sets,
            mask: sets.is_power_of_two().then_some(sets as u64 - 1),
            ways: g.ways,
            slots: vec![Way::NONE; sets * g.ways],
        }
    }

    fn set_index(&self, line: u64) -> usize {
        match self.mask {
            Some(m) => (line & m) as usize,
            None => (line % self.sets as u64) as usize,
        }
    }

    fn set(&mut self, line: u64) -> &mut [Way] {
        let s = self.set_index(line);
        &mut self.slots[s * self.ways..(s + 1) * self.ways]
    }

    /// Looks a line up; on a hit moves it to the front of its set and
    /// returns its state.
    pub fn touch(&mut self, line: u64) -> Option<State> {
        let set = self.set(line);
        // Most hits are on the most recently used way.
        if set[0].holds(line) {
            return Some(set[0].state());
        }
        let i = set.iter().position(|w| w.holds(line))?;
        to_front(set, i);
        Some(set[0].state())
    }

    /// The line's state without changing the LRU order.
    pub fn peek(&self, line: u64) -> Option<State> {
        let s = self.set_index(line);
        self.slots[s * self.ways..(s + 1) * self.ways]
            .iter()
            .find(|w| w.holds(line))
            .map(|w| w.state())
    }

    /// Sets a present line's state (no LRU change); false if absent.
    pub fn set_state(&mut self, line: u64, state: State) -> bool {
        match self.set(line).iter_mut().find(|w| w.holds(line)) {
            Some(w) => {
                *w = Way::new(line, state);
                true
            }
            None => false,
        }
    }

    /// Inserts a line at the front of its set (or refreshes it if present)
    /// and returns the line it evicted, with its state.
    pub fn insert(&mut self, line: u64, state: State) -> Option<(u64, State)> {
        let set = self.set(line);
        let i = set
            .iter()
            .position(|w| w.holds(line) || *w == Way::NONE)
            .unwrap_or(set.len() - 1);
        let old = set[i];
        to_front(set, i);
        set[0] = Way::new(line, state);
        (old != Way::NONE && !old.holds(line)).then_some((old.line(), old.state()))
    }

    /// Removes a line; returns the state it had.
    pub fn remove(&mut self, line: u64) -> Option<State> {
        let set = self.set(line);
        let i = set.iter().position(|w| w.holds(line))?;
        let state = set[i].state();
        set[i..].rotate_left(1);
        let last = set.len() - 1;
        set[last] = Way::NONE;
        Some(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_sets_two_ways() -> Cache {
        Cache::new(Geometry {
            bytes: 4 * LINE_BYTES,
            ways: 2,
        })
    }

    #[test]
    fn geometry_parses_and_rejects() {
        let g = Geometry::parse("48K:12").unwrap();
        assert_eq!(g.bytes, 48 * 1024);
        assert_eq!(g.sets(), 64);
        assert_eq!(Geometry::parse("2M:16").unwrap().sets(), 2048);
        assert!(Geometry::parse("100:3").is_err());
        assert!(Geometry::parse("48K").is_err());
        assert!(Geometry::parse("0:1").is_err());
        assert_eq!(parse_size("0x40000000").unwrap(), 1 << 30);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
    }

    // Lines 0, 2, 4 all map to set 0 of a 2-set, 2-way cache: the third
    // evicts the least recently used of the first two.
    #[test]
    fn lru_evicts_least_recently_used() {
        let mut c = two_sets_two_ways();
        assert_eq!(c.insert(0, State::Shared), None);
        assert_eq!(c.insert(2, State::Modified), None);
        assert_eq!(c.insert(1, State::Shared), None); // set 1: no eviction
        assert_eq!(c.touch(0), Some(State::Shared)); // 0 is now MRU, 2 LRU
        assert_eq!(c.insert(4, State::Exclusive), Some((2, State::Modified)));
        assert_eq!(c.peek(2), None);
        assert_eq!(c.peek(0), Some(State::Shared));
        assert_eq!(c.peek(1), Some(State::Shared));
        // 4 is MRU, 0 LRU: 6 evicts 0.
        assert_eq!(c.insert(6, State::Shared), Some((0, State::Shared)));
    }

    #[test]
    fn remove_frees_a_way_and_reinsert_does_not_evict() {
        let mut c = two_sets_two_ways();
        c.insert(0, State::Shared);
        c.insert(2, State::Shared);
        assert_eq!(c.remove(0), Some(State::Shared));
        assert_eq!(c.remove(0), None);
        assert_eq!(c.insert(4, State::Shared), None);
        assert_eq!(c.insert(4, State::Modified), None);
        assert_eq!(c.peek(4), Some(State::Modified));
        assert!(c.set_state(2, State::Exclusive));
        assert!(!c.set_state(8, State::Exclusive));
        assert_eq!(c.peek(2), Some(State::Exclusive));
    }

    // A cyclic walk over more lines than a set holds misses every time
    // with LRU (the pointer-chase calibration relies on it).
    #[test]
    fn cyclic_walk_larger_than_cache_always_misses() {
        let mut c = two_sets_two_ways();
        let mut misses = 0;
        for round in 0..3 {
            for line in 0..6 {
                if c.touch(line).is_none() {
                    misses += 1;
                    c.insert(line, State::Shared);
                }
            }
            assert_eq!(misses, 6 * (round + 1));
        }
        // One that fits hits after the first round.
        let mut c = two_sets_two_ways();
        let mut hits = 0;
        for _ in 0..3 {
            for line in 0..4 {
                if c.touch(line).is_some() {
                    hits += 1;
                } else {
                    c.insert(line, State::Shared);
                }
            }
        }
        assert_eq!(hits, 8);
    }
}
