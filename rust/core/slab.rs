// SPDX-License-Identifier: GPL-2.0
//! One slab: its header, its freelist words, and the intrusive lists.
//!
//! The header lives in the first bytes of the slab (see [`crate::layout`]).
//! A free object holds the address of the next free object at
//! `Layout::free_offset`; the last one holds null. Hardened caches store it
//! obfuscated, like in-tree `CONFIG_SLAB_FREELIST_HARDENED`:
//! `stored = next ^ key ^ swab(address of the slot)`, so a stray write or a
//! leaked freelist word does not give a usable pointer. The slab's own
//! freelist head (in the header) and the CPU freelists are plain.
//!
//! The slab's `pair` — freelist and counters (inuse, frozen) — is changed
//! only with a locked cmpxchg16b once the slab is published, so a free from
//! any CPU can push onto it without a lock. While a slab is private (just
//! allocated, or taken from the empty-slab cache) plain stores are fine.
//!
//! The list links (`prev`, `next`, `on_list`) belong to whoever holds the
//! list: the node's `list_lock` for node lists, the owning CPU (with its CPU
//! lock) for the CPU partial list, which uses `next` only.
//!
//! Platform-free: compiled into the module and the host crate.

use crate::layout::Layout;
use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

/// XORed into a live slab's magic to mark it isolated (corruption found
/// in it): its memory stays allocated and none of its objects is handed
/// out again. Even, so an isolated magic is odd like a live one, never 0.
const SLAB_BROKEN: usize = 0xb20c_e45a_ab5e_1f00_u64 as usize;

/// The frozen bit in the counters word: the slab belongs to one CPU (as its
/// CPU slab or on its CPU partial list) and is on no node list.
pub const FROZEN: usize = 1 << 32;

/// Objects in use, from a counters word.
pub const fn inuse(counters: usize) -> u32 {
    counters as u32
}

/// Per-slab metadata: at the start of the slab, or, where that would cost
/// too much of it, outside (`Layout::header_outside`), found through the
/// slab's first page (`Platform::slab_meta`). Either way it is 64 bytes.
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
    /// Whether the slab is on its node's partial list or empty cache.
    pub on_list: bool,
    /// The `generation` of the list it was put on (`SlabList::holds`).
    list_gen: u32,
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

    /// Sets the pair while the slab is private to the caller.
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

    /// Marks the slab dead, so stale pointers into it are refused.
    pub fn kill(&mut self) {
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

/// The free pointer codec, the only place it is written: what a free
/// pointer stored at `slot` is XORed with, `key ^ swab(slot)` in a hardened
/// cache (`HARDENED`), nothing otherwise.
#[inline(always)]
fn fp_mix<const HARDENED: bool>(layout: &Layout, slot: usize) -> usize {
    if HARDENED {
        layout.fp_key ^ slot.swap_bytes()
    } else {
        0
    }
}

/// Reads (and decodes) the free pointer of free object `obj` in a cache
/// known to be hardened (`HARDENED`) or not: the fast paths' form, one branch-free
/// path per mode. The result is not validated: see `Layout::object_index`.
///
/// # Safety
/// `obj` points into a slab laid out with `layout` (its contents may be
/// stale: the caller validates the result with a cmpxchg16b).
#[inline(always)]
pub unsafe fn get_free_pointer_as<const HARDENED: bool>(
    obj: *const u8,
    layout: &Layout,
) -> *mut u8 {
    // SAFETY: per the caller, the slot is inside mapped slab memory.
    let slot = unsafe { obj.add(layout.free_offset) };
    // SAFETY: as the line above says, mapped; the slot is word aligned.
    let stored = unsafe { ptr::read_volatile(slot.cast::<usize>()) };
    (stored ^ fp_mix::<HARDENED>(layout, slot as usize)) as *mut u8
}

/// [`get_free_pointer_as`] with the word read by `read`, which may fail
/// (None) instead of faulting: upstream's `get_freepointer_safe`. Safe:
/// it touches no memory but through `read`.
#[inline(always)]
pub fn get_free_pointer_with<const HARDENED: bool>(
    obj: *const u8,
    layout: &Layout,
    read: impl FnOnce(*const usize) -> Option<usize>,
) -> Option<*mut u8> {
    let slot = obj.wrapping_add(layout.free_offset);
    let stored = read(slot.cast())?;
    Some((stored ^ fp_mix::<HARDENED>(layout, slot as usize)) as *mut u8)
}

/// Writes (encoded) the free pointer of object `obj`, hardened (`HARDENED`) or not.
///
/// # Safety
/// The caller owns `obj` (it is allocated to the caller or being built
/// into a freelist).
#[inline(always)]
pub unsafe fn set_free_pointer_as<const HARDENED: bool>(
    obj: *mut u8,
    layout: &Layout,
    next: *mut u8,
) {
    // SAFETY: per the caller, the slot is inside an object the caller owns.
    let slot = unsafe { obj.add(layout.free_offset) };
    let stored = next as usize ^ fp_mix::<HARDENED>(layout, slot as usize);
    // SAFETY: the slot is the caller's and word aligned.
    unsafe { ptr::write_volatile(slot.cast::<usize>(), stored) };
}

/// [`get_free_pointer_as`] in the cache's own mode (the slow paths').
///
/// # Safety
/// As for [`get_free_pointer_as`].
#[inline(always)]
pub unsafe fn get_free_pointer(obj: *const u8, layout: &Layout) -> *mut u8 {
    // SAFETY: per the caller (same contract).
    unsafe {
        if layout.hardened() {
            get_free_pointer_as::<true>(obj, layout)
        } else {
            get_free_pointer_as::<false>(obj, layout)
        }
    }
}

/// [`set_free_pointer_as`] in the cache's own mode (the slow paths').
///
/// # Safety
/// As for [`set_free_pointer_as`].
#[inline(always)]
pub unsafe fn set_free_pointer(obj: *mut u8, layout: &Layout, next: *mut u8) {
    // SAFETY: per the caller (same contract).
    unsafe {
        if layout.hardened() {
            set_free_pointer_as::<true>(obj, layout, next)
        } else {
            set_free_pointer_as::<false>(obj, layout, next)
        }
    }
}

/// Whether `next` (a decoded free pointer read from an object of the slab
/// starting at `base`) is null or an object start of that slab.
#[inline(always)]
pub fn free_pointer_ok(next: *const u8, base: usize, layout: &Layout) -> bool {
    next.is_null() || is_object_of(next, base, layout)
}

/// Whether `p` is an object start of the slab starting at `base`. Null
/// never is: its offset from a slab's base, `2^64 - base`, is one only
/// for a slab that ends past the top of the address space.
#[inline(always)]
pub fn is_object_of(p: *const u8, base: usize, layout: &Layout) -> bool {
    layout
        .object_index((p as usize).wrapping_sub(base))
        .is_some()
}

/// An intrusive doubly linked list of slabs with its length, for node lists
/// (the crate's own: no `Default` or `is_empty` it does not use).
pub(crate) struct SlabList {
    head: *mut SlabHeader,
    tail: *mut SlabHeader,
    len: usize,
    /// Written into each slab put on the list; a new one, never used
    /// before, once the list forgets its slabs (`remove`), so that those
    /// slabs, still marked `on_list`, are known not to be on it.
    generation: u32,
}

/// The next list generation `SlabList::forget` hands out (0 is every new
/// list's).
static NEXT_GENERATION: AtomicU32 = AtomicU32::new(1);

impl SlabList {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        Self {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
            generation: 0,
        }
    }

    /// Number of slabs on the list.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// First slab, or null.
    pub(crate) fn first(&self) -> *mut SlabHeader {
        self.head
    }

    /// Adds `slab` at the front.
    ///
    /// # Safety
    /// `slab` is a live header owned by the caller and on no list.
    pub(crate) unsafe fn push_front(&mut self, slab: *mut SlabHeader) {
        // SAFETY: the caller owns `slab`; `head`, when set, is a member.
        unsafe {
            (*slab).prev = ptr::null_mut();
            (*slab).next = self.head;
            (*slab).on_list = true;
            (*slab).list_gen = self.generation;
            if self.head.is_null() {
                self.tail = slab;
            } else {
                (*self.head).prev = slab;
            }
        }
        self.head = slab;
        self.len += 1;
    }

    /// Adds `slab` at the back.
    ///
    /// # Safety
    /// `slab` is a live header owned by the caller and on no list.
    pub(crate) unsafe fn push_back(&mut self, slab: *mut SlabHeader) {
        // SAFETY: the caller owns `slab`; `tail`, when set, is a member.
        unsafe {
            (*slab).next = ptr::null_mut();
            (*slab).prev = self.tail;
            (*slab).on_list = true;
            (*slab).list_gen = self.generation;
            if self.tail.is_null() {
                self.head = slab;
            } else {
                (*self.tail).next = slab;
            }
        }
        self.tail = slab;
        self.len += 1;
    }

    /// Whether `slab`, which the caller's state says is on this list or on
    /// none, is on it: not when it was on it before the list forgot its
    /// slabs (`remove`).
    ///
    /// # Safety
    /// `slab` is a live header.
    pub(crate) unsafe fn holds(&self, slab: *const SlabHeader) -> bool {
        // SAFETY: per the caller.
        unsafe { (*slab).on_list && (*slab).list_gen == self.generation }
    }

    /// Unlinks `slab`, once its links agree with its neighbours' (as
    /// `CONFIG_DEBUG_LIST` checks): the previous slab's `next` and the next
    /// slab's `prev` must name it (the list's head and tail at the ends).
    /// A link that does not agree means a header was overwritten, and
    /// following it would write to wherever it points; then nothing is
    /// written through any link: the list forgets all its slabs (they stay
    /// allocated and are never used again) and says so. A slab put on the
    /// list before it last forgot its slabs (another generation) is on
    /// none: only its `on_list` is cleared, unless the list names it as
    /// its head (then its generation was overwritten: the list is broken).
    ///
    /// # Safety
    /// `slab` is a live header the caller found on this list (or on a
    /// list it forgot); see `unlink_checked` for its links.
    pub(crate) unsafe fn remove(&mut self, slab: *mut SlabHeader) -> Result<(), BrokenList> {
        // SAFETY: `slab` is live per the caller.
        if unsafe { (*slab).list_gen } != self.generation && self.head != slab {
            // On the list before it forgot its slabs: on none now.
            // SAFETY: as above.
            unsafe { (*slab).on_list = false };
            return Ok(());
        }
        // SAFETY: as above.
        unsafe { self.unlink_checked(slab) }
    }

    /// `remove` of a slab the list names (its head, or one of its
    /// generation): the links checked, then unlinked.
    ///
    /// # Safety
    /// `slab` is a live header. Its `prev` and `next`, when not null, are
    /// read through (as `CONFIG_DEBUG_LIST` reads `prev->next`): a link
    /// overwritten with another mapped address is caught, one with an
    /// unmapped address faults here instead of being written through.
    unsafe fn unlink_checked(&mut self, slab: *mut SlabHeader) -> Result<(), BrokenList> {
        // SAFETY: per the caller; nothing is written before the check.
        unsafe {
            let (prev, next) = ((*slab).prev, (*slab).next);
            let prev_ok = if prev.is_null() {
                self.head == slab
            } else {
                (*prev).next == slab
            };
            let next_ok = if next.is_null() {
                self.tail == slab
            } else {
                (*next).prev == slab
            };
            if !(prev_ok && next_ok && (*slab).list_gen == self.generation) {
                return Err(self.forget(slab));
            }
            if prev.is_null() {
                self.head = next;
            } else {
                (*prev).next = next;
            }
            if next.is_null() {
                self.tail = prev;
            } else {
                (*next).prev = prev;
            }
            (*slab).prev = ptr::null_mut();
            (*slab).next = ptr::null_mut();
            (*slab).on_list = false;
        }
        self.len -= 1;
        Ok(())
    }

    /// Drops every slab from the list without touching them (their links
    /// are not trusted; they keep `on_list`, and a new generation tells
    /// they are not on the list), but `at`, taken off it; for `remove`'s
    /// report.
    ///
    /// # Safety
    /// `at` is a live header.
    #[cold]
    unsafe fn forget(&mut self, at: *mut SlabHeader) -> BrokenList {
        let lost = self.len;
        *self = Self::new();
        self.generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
        // SAFETY: per the caller.
        unsafe { (*at).on_list = false };
        BrokenList { at, lost }
    }

    /// Unlinks and returns the first slab, or null; a broken link as for
    /// [`SlabList::remove`].
    pub(crate) fn pop_front(&mut self) -> Result<*mut SlabHeader, BrokenList> {
        let slab = self.head;
        if !slab.is_null() {
            // SAFETY: `slab` is the head of this list.
            unsafe { self.remove(slab)? };
        }
        Ok(slab)
    }
}

/// A node list found with links that do not agree (`SlabList::remove`):
/// the slab being unlinked, and how many slabs the list forgot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BrokenList {
    /// The slab whose links did not agree with its neighbours'.
    pub(crate) at: *mut SlabHeader,
    /// Slabs the list held, `at` among them: all leaked.
    pub(crate) lost: usize,
}
