// SPDX-License-Identifier: GPL-2.0
//! The slab header: per-slab metadata, in the first bytes of the slab (see
//! [`crate::layout`]) or in a block of its own beside it.
//!
//! The slab's `pair` — freelist and counters (inuse, frozen) — is changed
//! only with a locked cmpxchg16b once the slab is published, so a free from
//! any CPU can push onto it without a lock. While a slab is private (just
//! allocated, or taken from the empty-slab cache) plain stores are fine.

use super::freeptr::set_free_pointer_as;
use crate::layout::Layout;
use core::cell::UnsafeCell;
use core::ptr;

/// XORed into a live slab's magic to mark it isolated (corruption found
/// in it): its memory stays allocated and none of its objects is handed
/// out again. Even, so an isolated magic is odd like a live one, never 0.
const SLAB_BROKEN: usize = 0xb20c_e45a_ab5e_1f00_u64 as usize;

/// The frozen bit in the counters word: the slab belongs to one CPU (as its
/// CPU slab or on its CPU partial list), or is isolated, and is on no node
/// list (see the [`SlabHeader`] invariants).
pub const FROZEN: usize = 1 << 32;

/// Objects in use, from a counters word.
pub const fn inuse(counters: usize) -> u32 {
    counters as u32
}

/// Per-slab metadata: at the start of the slab, or, where that would cost
/// too much of it, outside (`Layout::header_outside`), found through the
/// slab's first page (`Platform::slab_meta`). Either way it is 64 bytes.
///
/// # Invariants
/// Of the header of a slab from `init` until its cache kills it (`kill`),
/// unless a stray write damaged it (every path checks `magic` before it
/// trusts the rest):
/// - `magic` is `live_magic(secret, base)` for the owning cache's secret,
///   or that value `^ SLAB_BROKEN` once the slab is isolated; it becomes 0
///   only when the slab, on no list and empty, is queued for its pages to
///   go (`Discards`). `owner`, `node` and `base` are written by `init` and
///   never again; a header in the slab sits at `base`.
/// - `pair` is `[freelist, counters]`: `freelist` is null or the first of
///   a null-terminated chain of free objects of this slab, linked by the
///   cache's free pointer codec, and `inuse(counters)` plus the chain's
///   length is `Layout::objects`. Objects a CPU holds on its lockless
///   freelist (and, in the `free_batch` build, those waiting in a CPU's
///   batch) count as in use.
/// - Once other CPUs can reach the slab (a CPU slab, on a list, or found
///   from an object by a free), `pair` changes only as a whole by a locked
///   cmpxchg16b; plain stores (`set_pair_private`) only while the slab is
///   private to one task.
/// - `FROZEN` set in `counters`: the slab is on no node list, and is either
///   one CPU's (its CPU slab, on its CPU partial list, or held by the task
///   moving it onto or off them), which alone takes objects from it and
///   unfreezes it, or isolated, frozen for good. A free to a frozen slab
///   only pushes onto `freelist`.
/// - `FROZEN` clear (the only state a debug cache's slabs know, until
///   isolated): as another holder of the node's lock sees it, the slab is
///   on its node's partial list if some but not all of its objects are
///   free; on that list, on the empty-slab cache, or private to one task
///   (new, just taken off the cache, or queued to be freed) if all are
///   free; on no list if none is free (a debug cache's: on its `full`
///   list). A slab its list forgot (`SlabList::remove`) is the exception:
///   on no list whatever its counts.
/// - A slab linked on a node list has `on_list` set and `list_gen` equal
///   to that list's generation; `on_list` clear means on no node list, and
///   `on_list` with another generation means on a list that has since
///   forgotten its slabs, so on none. `prev`, `on_list` and `list_gen`
///   belong to the holder of the node's lock.
/// - `next` has one owner at a time: the node's lock while the slab is on a
///   node list, the owning CPU (under its CPU lock) while the slab is on its
///   CPU partial list, the `Discards` that holds it once it is killed.
#[repr(C, align(16))]
pub struct SlabHeader {
    /// `secret ^ base` while the slab is live, with the owning cache's
    /// random `secret` (`live_magic`); that value `^ SLAB_BROKEN` once
    /// isolated; 0 once the slab is freed. First, with `owner`: an
    /// overflow from the memory before the slab destroys these words before
    /// any other, and every path checks them before it trusts the rest (a
    /// forged pair behind an intact magic would let a free empty a slab
    /// whose objects are in use).
    magic: usize,
    /// Identity of the owning cache.
    owner: usize,
    /// `[freelist, counters]`, the cmpxchg16b pair (16-byte aligned: the
    /// header is).
    pair: UnsafeCell<[usize; 2]>,
    /// NUMA node of the slab's pages (below `MAX_NODES`; two bytes, so
    /// that the header keeps to 64 with its `base`).
    pub node: i16,
    /// Whether the slab is on a node list (partial, empty-slab cache, or a
    /// debug cache's full list), as far as `list_gen` agrees.
    pub on_list: bool,
    /// The `generation` of the list it was put on (`SlabList::holds`).
    pub(super) list_gen: u32,
    /// The slab's first byte: the header's own address when the header is
    /// in the slab.
    pub base: usize,
    /// Previous slab on a node list.
    pub prev: *mut SlabHeader,
    /// Next slab on a node list or the CPU partial list.
    pub next: *mut SlabHeader,
}

/// Bytes reserved for the header at the start of each slab.
pub const HEADER_SIZE: usize = core::mem::size_of::<SlabHeader>();

// The checked words first, the pair 16-byte aligned behind them (see
// `SlabHeader::magic`).
const _: () = assert!(core::mem::offset_of!(SlabHeader, magic) == 0);
const _: () = assert!(core::mem::offset_of!(SlabHeader, owner) == 8);
const _: () = assert!(core::mem::offset_of!(SlabHeader, pair) == 16);

/// Why a pointer handed to free was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreeError {
    /// Not memory a slab could live in.
    NotSlabMemory,
    /// The pointer's slab is not a live slab of this cache.
    NotOurSlab,
    /// The pointer is inside a slab of this cache but not at an object start.
    NotObjectStart,
    /// The object is already free.
    DoubleFree,
    /// The object's slab was isolated after a corruption report.
    Isolated,
}

impl FreeError {
    /// One-line description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            FreeError::NotSlabMemory => "not slab memory",
            FreeError::NotOurSlab => "not an object of this cache",
            FreeError::NotObjectStart => "not the start of an object",
            FreeError::DoubleFree => "object already free (double free)",
            FreeError::Isolated => "object of an isolated (corrupted) slab",
        }
    }
}

impl SlabHeader {
    /// The header of the slab that would contain `obj` (the host tests'
    /// shortcut: the cache's own lookup is `Cache::header_of`).
    #[cfg(test)]
    pub(crate) fn of(obj: *const u8, layout: &Layout) -> *mut SlabHeader {
        let base = layout.slab_base(obj);
        if layout.header_outside {
            crate::slub::Cache::<crate::host::Host>::header_at::<true>(base)
        } else {
            base as *mut SlabHeader
        }
    }

    /// Writes the header of the slab at `base` (at `base` itself, or at
    /// `outside` when the layout keeps it out of the slab) for the cache at
    /// `owner`, whose slab secret is `secret` (odd: see
    /// [`SlabHeader::live_magic`]), and threads every object onto the
    /// freelist in address order.
    ///
    /// # Safety
    /// `base` is `layout.slab_bytes` bytes of writable memory, aligned to
    /// `layout.slab_bytes`, owned by the caller; with
    /// `layout.header_outside`, `outside` is `HEADER_SIZE` bytes of such
    /// memory aligned to 16 (else it is unused).
    pub unsafe fn init(
        base: *mut u8,
        outside: *mut SlabHeader,
        layout: &Layout,
        owner: usize,
        secret: usize,
        node: i32,
    ) -> *mut SlabHeader {
        // SAFETY: per the caller (same contract).
        unsafe { Self::init_shuffled(base, outside, layout, owner, secret, node, &[], 0) }
    }

    /// Like [`SlabHeader::init`], but when `seq` holds a permutation of the
    /// object indices the freelist follows it, starting at `seq[start]`
    /// and wrapping around (upstream's `CONFIG_SLAB_FREELIST_RANDOM`).
    ///
    /// # Safety
    /// As for [`SlabHeader::init`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn init_shuffled(
        base: *mut u8,
        outside: *mut SlabHeader,
        layout: &Layout,
        owner: usize,
        secret: usize,
        node: i32,
        seq: &[u32],
        start: usize,
    ) -> *mut SlabHeader {
        let hdr = if layout.header_outside {
            outside
        } else {
            base.cast::<SlabHeader>()
        };
        // SAFETY: per the caller.
        let next = unsafe {
            if layout.hardened() {
                thread_freelist::<true>(base, layout, seq, start)
            } else {
                thread_freelist::<false>(base, layout, seq, start)
            }
        };
        // INVARIANT: every object is on the new freelist and none is in use;
        // the magic is live; unfrozen, on no list, private to the caller.
        // SAFETY: in the slab the header fits before the first object and
        // `base` is aligned far beyond `SlabHeader`'s alignment; outside,
        // per the caller.
        unsafe {
            hdr.write(SlabHeader {
                magic: Self::live_magic(secret, base as usize),
                owner,
                pair: UnsafeCell::new([next as usize, 0]),
                node: node as i16,
                on_list: false,
                list_gen: 0,
                base: base as usize,
                prev: ptr::null_mut(),
                next: ptr::null_mut(),
            });
        }
        hdr
    }

    /// The pair, for cmpxchg16b.
    pub fn pair_ptr(&self) -> *mut [usize; 2] {
        self.pair.get()
    }

    /// Reads counters, then freelist. Not atomic as a whole: a cmpxchg16b
    /// with the result as `old` validates it.
    pub fn read_pair(&self) -> [usize; 2] {
        let p = self.pair.get().cast::<usize>();
        // SAFETY: both words are valid; volatile keeps the loads from being
        // merged or reordered by the compiler.
        unsafe {
            let counters = ptr::read_volatile(p.add(1));
            let freelist = ptr::read_volatile(p);
            [freelist, counters]
        }
    }

    /// Sets the pair while the slab is private to the caller, who keeps
    /// the counting invariant (`inuse` plus the freelist's length is the
    /// slab's object count).
    ///
    /// # Safety
    /// No other CPU can reach the slab.
    pub unsafe fn set_pair_private(&self, pair: [usize; 2]) {
        // SAFETY: per the caller, nobody else accesses the pair.
        unsafe { self.pair.get().write(pair) };
    }

    /// The `magic` of a live slab at `at` of the cache whose slab secret
    /// is `secret`. The secret is random per cache (`Cache::create`) and
    /// odd, and `at` is slab aligned, so the magic is never 0 (a freed
    /// slab's): a header is only taken for a live slab of a cache by
    /// someone who knows that cache's secret, and a header copied from one
    /// slab does not validate at another address.
    #[inline(always)]
    pub const fn live_magic(secret: usize, at: usize) -> usize {
        secret ^ at
    }

    /// Whether this header belongs to a live slab at `base` of the cache
    /// whose slab secret is `secret`: one XOR and one compare, on the free
    /// fast path. The caller found the header from `base`
    /// (`Cache::header_at`), so a header that is not that slab's fails.
    #[inline(always)]
    pub fn is_live_at(&self, secret: usize, base: usize) -> bool {
        self.magic == Self::live_magic(secret, base)
    }

    /// [`SlabHeader::is_live_at`] for the slab this header says it is of
    /// (its `base`): for a header reached through a list or a CPU, not
    /// found from an address.
    pub fn is_live_with(&self, secret: usize) -> bool {
        self.is_live_at(secret, self.base)
    }

    /// NUMA node of the slab's pages.
    pub fn node(&self) -> i32 {
        i32::from(self.node)
    }

    /// The owner field (a `Cache` address) as written at `init`; trusted
    /// only after [`SlabHeader::is_live_with`] with that cache's secret.
    pub fn owner(&self) -> usize {
        self.owner
    }

    /// Overwrites the list generation, as an overflow into the header would.
    #[cfg(test)]
    pub(crate) fn forge_list_gen(&mut self, generation: u32) {
        self.list_gen = generation;
    }

    /// Overwrites the base word, as an overflow into the header would.
    #[cfg(test)]
    pub(crate) fn forge_base(&mut self, base: usize) {
        self.base = base;
    }

    /// Overwrites the owner word, as an overflow into the header would.
    #[cfg(test)]
    pub(crate) fn forge_owner(&mut self, owner: usize) {
        self.owner = owner;
    }

    /// Marks the slab dead, so stale pointers into it are refused. Its
    /// cache calls it only for an empty slab it took off every list, on its
    /// way back to the page allocator (`Discards::kill_and_queue`).
    pub fn kill(&mut self) {
        // INVARIANT: the end of the live header; nothing of it is trusted
        // from here on.
        self.magic = 0;
    }

    /// Whether this slab at `base` of the cache with `secret` was isolated.
    pub fn is_isolated_at(&self, secret: usize, base: usize) -> bool {
        self.magic == Self::live_magic(secret, base) ^ SLAB_BROKEN
    }

    /// Marks the slab at `base`, of the cache with `secret`, isolated:
    /// frees of its objects are ignored from now on, and it is never freed
    /// or reused.
    ///
    /// # Safety
    /// The caller has taken the slab off every list (or it is on none).
    pub unsafe fn mark_isolated(slab: *mut SlabHeader, secret: usize, base: usize) {
        let magic = Self::live_magic(secret, base) ^ SLAB_BROKEN;
        // INVARIANT: the isolated magic, for good; the caller froze the
        // slab (`Cache::isolate`) and it is on no list.
        // SAFETY: per the caller; racing readers of `magic` only compare it.
        unsafe { ptr::write_volatile(ptr::addr_of_mut!((*slab).magic), magic) };
    }

    /// Why a header that is not live for the cache with `secret` refuses
    /// a free.
    #[cold]
    #[inline(never)]
    fn not_live(&self, secret: usize, base: usize) -> FreeError {
        if self.is_isolated_at(secret, base) {
            FreeError::Isolated
        } else {
            FreeError::NotOurSlab
        }
    }

    /// Checks that `obj` is an object start of this live slab at `base` of
    /// the cache whose slab secret is `secret` (the header found from
    /// `base`, as for `is_live_at`). Out of line, to tell a refused free
    /// apart.
    pub fn check_object(
        &self,
        obj: *const u8,
        base: usize,
        layout: &Layout,
        secret: usize,
    ) -> Result<(), FreeError> {
        if !self.is_live_at(secret, base) {
            return Err(self.not_live(secret, base));
        }
        // An `obj` below the slab wraps to a huge offset, which
        // `object_index` refuses.
        let offset = (obj as usize).wrapping_sub(base);
        if layout.object_index(offset).is_none() {
            return Err(FreeError::NotObjectStart);
        }
        Ok(())
    }
}

/// Links every object of a new slab at `base` into a freelist, in address
/// order or, when `seq` holds a permutation of the object indices, in its
/// order from `seq[start]` (wrapping around); returns the head.
///
/// # Safety
/// As for [`SlabHeader::init`].
unsafe fn thread_freelist<const HARDENED: bool>(
    base: *mut u8,
    layout: &Layout,
    seq: &[u32],
    start: usize,
) -> *mut u8 {
    let n = layout.objects;
    let mut next: *mut u8 = ptr::null_mut();
    // Pushes object `idx` on the list being built back to front.
    let mut push = |idx: usize| {
        // SAFETY: object `idx` lies inside the slab, which the caller owns,
        // and its free pointer slot is word aligned.
        unsafe {
            let obj = base.add(layout.object_offset(idx));
            set_free_pointer_as::<HARDENED>(obj, layout, next);
            next = obj;
        }
    };
    // Loops of their own, not one with the choice inside: the mixed loop
    // kept more values live than there are registers, and an unrelated
    // change to `Layout` once made it spill inside (+4 instructions an
    // object, repeat alloc +4% at 64 B). Split, repeat alloc reads 5% below
    // the mixed loop's best.
    if seq.len() == n && n > 0 {
        // The list is seq[start..], then seq[..start]: built backwards.
        let (front, back) = seq.split_at(start.min(n));
        for &idx in front.iter().rev() {
            push((idx as usize).min(n - 1));
        }
        for &idx in back.iter().rev() {
            push((idx as usize).min(n - 1));
        }
    } else {
        for idx in (0..n).rev() {
            push(idx);
        }
    }
    next
}
