// SPDX-License-Identifier: GPL-2.0
//! The free pointer codec. A free object holds the address of the next
//! free object at `Layout::free_offset`; the last one holds null. Hardened
//! caches store it obfuscated, like in-tree
//! `CONFIG_SLAB_FREELIST_HARDENED`: `stored = next ^ key ^ swab(address of
//! the slot)`, so a stray write or a leaked freelist word does not give a
//! usable pointer. The slab's own freelist head (in the header) and the
//! CPU freelists are plain.

use crate::layout::Layout;
use core::ptr;

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
