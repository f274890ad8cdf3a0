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

/// Marks a live slab header; XORed with the owner so a slab of one cache
/// does not validate against another.
const SLAB_MAGIC: usize = 0x5e1f_51ab_0c0f_fee5_u64 as usize;

/// Marks an isolated slab (corruption found in it): its memory stays
/// allocated and none of its objects is handed out again.
const SLAB_BROKEN: usize = 0xb20c_e45a_ab5e_1f00_u64 as usize;

/// The frozen bit in the counters word: the slab belongs to one CPU (as its
/// CPU slab or on its CPU partial list) and is on no node list.
pub const FROZEN: usize = 1 << 32;

/// Objects in use, from a counters word.
pub const fn inuse(counters: usize) -> u32 {
    counters as u32
}

/// Per-slab metadata at the start of every slab.
#[repr(C, align(16))]
pub struct SlabHeader {
    /// `[freelist, counters]`, the cmpxchg16b pair.
    pair: UnsafeCell<[usize; 2]>,
    /// `SLAB_MAGIC ^ owner` while the slab is live; 0 once it is freed.
    magic: usize,
    /// Identity of the owning cache.
    owner: usize,
    /// Objects in this slab.
    pub objects: u32,
    /// NUMA node of the slab's pages.
    pub node: i32,
    /// Whether the slab is on its node's partial list or empty cache.
    pub on_list: bool,
    /// Previous slab on a node list.
    pub prev: *mut SlabHeader,
    /// Next slab on a node list or the CPU partial list.
    pub next: *mut SlabHeader,
}

/// Bytes reserved for the header at the start of each slab.
pub const HEADER_SIZE: usize = core::mem::size_of::<SlabHeader>();

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
    /// The header of the slab that would contain `obj`.
    #[inline(always)]
    pub fn of(obj: *const u8, layout: &Layout) -> *mut SlabHeader {
        ((obj as usize) & layout.slab_mask) as *mut SlabHeader
    }

    /// Writes a header at `base` and threads every object onto the freelist
    /// in address order.
    ///
    /// # Safety
    /// `base` is `layout.slab_bytes` bytes of writable memory, aligned to
    /// `layout.slab_bytes`, owned by the caller.
    pub unsafe fn init(base: *mut u8, layout: &Layout, owner: usize, node: i32) -> *mut SlabHeader {
        // SAFETY: per the caller (same contract).
        unsafe { Self::init_shuffled(base, layout, owner, node, &[], 0) }
    }

    /// Like [`SlabHeader::init`], but when `seq` holds a permutation of the
    /// object indices the freelist follows it, starting at `seq[start]`
    /// and wrapping around (upstream's `CONFIG_SLAB_FREELIST_RANDOM`).
    ///
    /// # Safety
    /// As for [`SlabHeader::init`].
    pub unsafe fn init_shuffled(
        base: *mut u8,
        layout: &Layout,
        owner: usize,
        node: i32,
        seq: &[u32],
        start: usize,
    ) -> *mut SlabHeader {
        let hdr = base.cast::<SlabHeader>();
        // SAFETY: per the caller.
        let next = unsafe {
            if layout.hardened() {
                thread_freelist::<true>(base, layout, seq, start)
            } else {
                thread_freelist::<false>(base, layout, seq, start)
            }
        };
        // SAFETY: the header fits before the first object and `base` is
        // aligned far beyond `SlabHeader`'s alignment.
        unsafe {
            hdr.write(SlabHeader {
                pair: UnsafeCell::new([next as usize, 0]),
                magic: Self::live_magic(owner),
                owner,
                objects: layout.objects as u32,
                node,
                on_list: false,
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

    /// The `magic` of a live slab of `owner`: it holds the owner too, a
    /// value no pointer or small number takes by chance, so one compare
    /// (`has_magic`) tells a live slab of `owner`; the `owner` field is
    /// kept for the reports that tell a foreign or dead slab apart.
    pub const fn live_magic(owner: usize) -> usize {
        SLAB_MAGIC ^ owner
    }

    /// Whether `magic` is `live` (a `live_magic`).
    #[inline(always)]
    pub fn has_magic(&self, live: usize) -> bool {
        self.magic == live
    }

    /// The owner (`Cache` address) of this header's live slab; 0 if the
    /// slab is not live (or the header was overwritten).
    pub fn live_owner(&self) -> usize {
        if self.magic == Self::live_magic(self.owner) {
            self.owner
        } else {
            0
        }
    }

    /// Whether this header belongs to a live slab of `owner`.
    #[inline(always)]
    pub fn is_live_for(&self, owner: usize) -> bool {
        self.has_magic(Self::live_magic(owner))
    }

    /// Marks the slab dead, so stale pointers into it are refused.
    pub fn kill(&mut self) {
        self.magic = 0;
    }

    /// Whether this slab of `owner` was isolated.
    pub fn is_isolated_for(&self, owner: usize) -> bool {
        self.magic == SLAB_BROKEN ^ owner && self.owner == owner
    }

    /// Marks the slab isolated: frees of its objects are ignored from now
    /// on, and it is never freed or reused.
    ///
    /// # Safety
    /// The caller has taken the slab off every list (or it is on none).
    pub unsafe fn mark_isolated(slab: *mut SlabHeader) {
        // SAFETY: per the caller; racing readers of `magic` only compare it.
        unsafe {
            let owner = (*slab).owner;
            ptr::write_volatile(ptr::addr_of_mut!((*slab).magic), SLAB_BROKEN ^ owner);
        }
    }

    /// Why a header that is not live for `owner` refuses a free.
    #[cold]
    #[inline(never)]
    fn not_live(&self, owner: usize) -> FreeError {
        if self.is_isolated_for(owner) {
            FreeError::Isolated
        } else {
            FreeError::NotOurSlab
        }
    }

    /// Checks that `obj` is an object start of this live slab of `owner`.
    /// Inlined on the free fast path; the failure is told apart out of line.
    #[inline(always)]
    pub fn check_object(
        &self,
        obj: *const u8,
        layout: &Layout,
        owner: usize,
    ) -> Result<(), FreeError> {
        if !self.is_live_for(owner) {
            return Err(self.not_live(owner));
        }
        // An `obj` below the header wraps to a huge offset, which
        // `object_index` refuses.
        let offset = (obj as usize).wrapping_sub(core::ptr::from_ref(self) as usize);
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
/// at `slab`) is null or an object start of that slab.
#[inline(always)]
pub fn free_pointer_ok(next: *const u8, slab: *const SlabHeader, layout: &Layout) -> bool {
    next.is_null()
        || layout
            .object_index((next as usize).wrapping_sub(slab as usize))
            .is_some()
}

/// An intrusive doubly linked list of slabs with its length, for node lists
/// (the crate's own: no `Default` or `is_empty` it does not use).
pub(crate) struct SlabList {
    head: *mut SlabHeader,
    tail: *mut SlabHeader,
    len: usize,
}

impl SlabList {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        Self {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
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
            if self.tail.is_null() {
                self.head = slab;
            } else {
                (*self.tail).next = slab;
            }
        }
        self.tail = slab;
        self.len += 1;
    }

    /// Unlinks `slab`.
    ///
    /// # Safety
    /// `slab` is on this list.
    pub(crate) unsafe fn remove(&mut self, slab: *mut SlabHeader) {
        // SAFETY: `slab` and its neighbours are members of this list.
        unsafe {
            let (prev, next) = ((*slab).prev, (*slab).next);
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
    }

    /// Unlinks and returns the first slab, or null.
    pub(crate) fn pop_front(&mut self) -> *mut SlabHeader {
        let slab = self.head;
        if !slab.is_null() {
            // SAFETY: `slab` is the head of this list.
            unsafe { self.remove(slab) };
        }
        slab
    }
}
