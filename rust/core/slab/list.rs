// SPDX-License-Identifier: GPL-2.0
//! The intrusive list of slabs a node keeps (partial, empty, and the debug
//! caches' full list).
//!
//! The list links (`prev`, `next`, `on_list`) belong to whoever holds the
//! list: the node's `list_lock` for node lists, the owning CPU (with its CPU
//! lock) for the CPU partial list, which uses `next` only.

use super::SlabHeader;
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

/// An intrusive doubly linked list of slabs with its length, for node lists
/// (the crate's own: no `Default` or `is_empty` it does not use).
///
/// # Invariants
/// A list lives inside its node's lock (`NodeLists`), so it and its
/// members' links change only under that lock. Unless a stray write
/// damaged a member's header (which `remove` looks for before it writes
/// through a link):
/// - `len` slabs are linked from `head` through `next`; `head` and `tail`
///   are null when `len` is 0, else the first and the last of them. Each
///   member's `prev` names the member before it (null for `head`), its
///   `next` the one after it (null for `tail`).
/// - Every member has `on_list` set and `list_gen` equal to `generation`.
/// - `generation` is a value of `NEXT_GENERATION` no list had before, taken
///   when the list is made and again each time it forgets its slabs: a
///   slab marked `on_list` with another generation is not on this list
///   (`holds`), and one marked with no generation of its node's lists was
///   forgotten (`NodeLists::forgot`). Unique until the 32-bit counter
///   wraps, after 4 billion lists made or broken.
pub(crate) struct SlabList {
    head: *mut SlabHeader,
    tail: *mut SlabHeader,
    len: usize,
    /// Written into each slab put on the list; a new one, never used
    /// before, once the list forgets its slabs (`remove`), so that those
    /// slabs, still marked `on_list`, are known not to be on it.
    generation: u32,
}

/// The next list generation (`SlabList::new` and `forget` hand them out; 0
/// is a new slab's, which no list has).
static NEXT_GENERATION: AtomicU32 = AtomicU32::new(1);

impl SlabList {
    /// An empty list, under a generation of its own.
    pub(crate) fn new() -> Self {
        Self {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
            generation: NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
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
        // INVARIANT: `slab` becomes the head, marked as a member of this
        // generation, and is counted.
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
        // INVARIANT: `slab` becomes the tail, marked as a member of this
        // generation, and is counted.
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

    /// Whether `slab` is on this list: not when it was on it before the
    /// list forgot its slabs (`remove`).
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
            // INVARIANT: not a member (another generation); its mark goes.
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
            // INVARIANT: the links agree, so the neighbours (or the ends)
            // are rewired around `slab`, which loses its mark and its count.
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
    /// they are not on the list, `forgot`), `at` among them; for
    /// `remove`'s report.
    #[cold]
    fn forget(&mut self, at: *mut SlabHeader) -> BrokenList {
        let lost = self.len;
        // INVARIANT: empty, under a generation no slab carries, so every
        // former member reads as on no list.
        *self = Self::new();
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
