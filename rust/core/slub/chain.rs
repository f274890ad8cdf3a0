// SPDX-License-Identifier: GPL-2.0
//! Chains: objects of one slab linked through their free pointers and
//! freed together (`free_bulk`, a free batch; a single free is a chain of
//! one), and what keeps a chain from looping a freelist.
//!
//! A chain is pushed onto a freelist by writing the freelist's head into
//! its tail. If the chain names an object twice, or names an object that
//! is already free, the result is a cycle: every later allocation hands
//! out the same objects again. And gathering a chain writes the free
//! pointer of each object but the first, so an already free object must
//! be caught before it is linked: its free pointer is part of a freelist.
//! So, while a chain is gathered (`group_by_slab`):
//! - the heads of the two freelists an object of the slab can be free on
//!   (the slab's own, and this CPU's when the slab is its CPU slab) are
//!   read first, the chain's `guards`, and an object equal to one of them
//!   is reported and left out;
//! - each object's index goes into `seen`, a 64-bit filter (bit
//!   `index % 64`) that also holds the guards' bits; an object whose bit is
//!   set is checked exactly (`Gather`), and reported and left out when it
//!   is a guard or already in the chain. A bit that only a guard set (no
//!   object of the chain has it yet) is settled by comparing the object
//!   with the guards (`settle_guard_bit`), which spares a batch of 64
//!   objects in a row of a large slab the exact set.
//!
//! When the chain is pushed, a freelist head that is not one of the guards
//! (it changed since) is tested against `seen` and, on a hit, looked for in
//! the chain; if it is there, another context freed one of the chain's
//! objects meanwhile, and the chain is reported and dropped (its objects
//! stay counted in use) rather than pushed.
//!
//! An object that is free deeper in a freelist than its head is not found
//! (upstream's hardened check, `object == fp`, has the same reach); debug
//! caches (`SLAB_CONSISTENCY_CHECKS`) search the freelists.

use super::Cache;
use crate::layout::MAX_OBJECTS;
use crate::platform::Platform;
use crate::slab::{get_free_pointer, FreeError, SlabHeader};

/// `cnt` objects of one slab, `head` to `tail`, linked through their free
/// pointers (`tail`'s is not set yet); `seen` has bit `index % 64` set for
/// the index of each (and perhaps more bits); `guards` are freelist heads
/// known not to be in the chain.
#[derive(Clone, Copy)]
pub(super) struct Chain {
    pub(super) head: *mut u8,
    pub(super) tail: *mut u8,
    pub(super) cnt: usize,
    pub(super) seen: u64,
    pub(super) guards: [usize; 2],
}

impl Chain {
    /// The chain of the single object `obj`.
    #[inline(always)]
    pub(super) fn one(obj: *mut u8) -> Self {
        Chain {
            head: obj,
            tail: obj,
            cnt: 1,
            seen: 0,
            guards: [0; 2],
        }
    }
}

/// The bit of object index `idx` in `Chain::seen`.
#[inline(always)]
pub(super) fn seen_bit(idx: usize) -> u64 {
    1 << (idx % 64)
}

/// What `Gather::insert` knows of an object index.
pub(super) enum Seen {
    /// Not in the chain: now it is.
    New,
    /// Already in the chain.
    Twice,
    /// Perhaps in the chain: ask the exact set.
    Unsure,
}

/// The set of object indices a chain being gathered holds.
pub(super) trait Gather {
    /// Adds `idx` to the set and to `seen`, or says it may be there.
    fn insert(&mut self, seen: &mut u64, idx: usize) -> Seen;
}

/// `seen` alone: exact when a slab holds at most 64 objects (no two
/// indices share a bit), else unsure on every hit.
pub(super) struct Filter {
    pub(super) exact: bool,
}

impl Gather for Filter {
    #[inline(always)]
    fn insert(&mut self, seen: &mut u64, idx: usize) -> Seen {
        let bit = seen_bit(idx);
        if *seen & bit == 0 {
            *seen |= bit;
            Seen::New
        } else if self.exact {
            Seen::Twice
        } else {
            Seen::Unsure
        }
    }
}

/// One bit per object of a slab (`MAX_OBJECTS` bounds the count).
pub(super) struct Bitmap([u64; MAX_OBJECTS / 64]);

impl Gather for Bitmap {
    #[inline(always)]
    fn insert(&mut self, seen: &mut u64, idx: usize) -> Seen {
        *seen |= seen_bit(idx);
        let (word, bit) = (idx / 64 % (MAX_OBJECTS / 64), seen_bit(idx));
        if self.0[word] & bit != 0 {
            return Seen::Twice;
        }
        self.0[word] |= bit;
        Seen::New
    }
}

impl<P: Platform> Cache<P> {
    /// Starts a chain with `obj`, a validated object of `slab` (starting at
    /// `base`) being freed:
    /// reads the chain's guards (the head of the slab's freelist, and of
    /// this CPU's if `slab` is its CPU slab) and puts their bits in `seen`.
    /// None, with a report, when `obj` is one of them.
    #[inline(always)]
    pub(super) fn chain_start(
        &self,
        slab: *mut SlabHeader,
        base: usize,
        obj: *mut u8,
    ) -> Option<Chain> {
        let (cpu_freelist, _, cpu_slab) = self.cpu_snapshot();
        let cpu_head = if cpu_slab == slab { cpu_freelist } else { 0 };
        // SAFETY: `slab` is a validated, live slab of this cache.
        let [slab_head, _] = unsafe { (*slab).read_pair() };
        if obj as usize == cpu_head || obj as usize == slab_head {
            self.report(obj, FreeError::DoubleFree);
            return None;
        }
        // Written out: an array's iterator was not inlined in the kernel
        // build (a call per element).
        // The slab's own freelist is empty while it is a CPU slab with
        // no remote frees (a bulk free just after a bulk allocation): no
        // index to compute then.
        let slab_bit = if slab_head != 0 {
            self.index_bit(base, slab_head)
        } else {
            0
        };
        let seen = self.index_bit(base, cpu_head) | slab_bit | self.index_bit(base, obj as usize);
        Some(Chain {
            seen,
            guards: [cpu_head, slab_head],
            ..Chain::one(obj)
        })
    }

    /// Whether `obj` (null or an object of `slab`), the head of the
    /// freelist `ch` is about to be pushed onto, is one of `ch`'s objects.
    /// Inline: a few compares, and for longer chains an index and a bit
    /// test; the walk only when the bit is set.
    ///
    /// # Safety
    /// `ch` is a chain of `slab` owned by the caller.
    #[inline(always)]
    /// `OUT`: the slab's base is the cache's `base_of` (right for any
    /// slab); else, for a header in the slab, its address.
    pub(super) unsafe fn chain_has<const OUT: bool>(
        &self,
        slab: *mut SlabHeader,
        ch: &Chain,
        obj: usize,
    ) -> bool {
        if obj == ch.head as usize || obj == ch.tail as usize {
            return true;
        }
        // A chain of one or two has no other object; a guard was checked
        // while the chain was gathered.
        if ch.cnt <= 2 || obj == ch.guards[0] || obj == ch.guards[1] {
            return false;
        }
        let base = if OUT {
            // SAFETY: per the caller, `slab` is a live header.
            unsafe { self.base_of(slab) }
        } else {
            slab as usize
        };
        match self.layout.object_index(obj.wrapping_sub(base)) {
            // SAFETY: per the caller.
            Some(idx) if ch.seen & seen_bit(idx) != 0 => unsafe { self.chain_walk_has(*ch, obj) },
            _ => false,
        }
    }

    /// The `seen` bit of `obj` if it is an object start of the slab at
    /// `base`, else 0.
    #[inline(always)]
    pub(super) fn index_bit(&self, base: usize, obj: usize) -> u64 {
        self.layout
            .object_index(obj.wrapping_sub(base))
            .map_or(0, seen_bit)
    }

    /// `chain_has` by walking the chain. The chain by value: a reference
    /// would make the caller keep its chain in memory on the hot path.
    ///
    /// # Safety
    /// As for `chain_has`.
    #[cold]
    #[inline(never)]
    unsafe fn chain_walk_has(&self, ch: Chain, obj: usize) -> bool {
        let mut o = ch.head;
        for _ in 1..ch.cnt {
            if o as usize == obj {
                return true;
            }
            // SAFETY: `o` is a chain member other than the tail, so its
            // free pointer links to the next member.
            o = unsafe { get_free_pointer(o, &self.layout) };
        }
        o as usize == obj
    }

    /// The exact set of the object indices of `ch` and its guards, for
    /// `group_by_slab` once the filter is unsure. The chain by value (as
    /// for `chain_walk_has`).
    ///
    /// # Safety
    /// As for `chain_has`.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn chain_bitmap(&self, base: usize, mut ch: Chain) -> Bitmap {
        let mut map = Bitmap([0; MAX_OBJECTS / 64]);
        for i in 0..ch.guards.len() {
            if let Some(idx) = self.layout.object_index(ch.guards[i].wrapping_sub(base)) {
                map.insert(&mut ch.seen, idx);
            }
        }
        let mut o = ch.head;
        for i in 0..ch.cnt {
            if let Some(idx) = self.layout.object_index((o as usize).wrapping_sub(base)) {
                map.insert(&mut ch.seen, idx);
            }
            if i + 1 < ch.cnt {
                // SAFETY: `o` is not the tail: its free pointer is set.
                o = unsafe { get_free_pointer(o, &self.layout) };
            }
        }
        map
    }
}
