// SPDX-License-Identifier: GPL-2.0
//! One slab: its header, its freelist, and the intrusive list slabs sit on.
//!
//! The header lives in the first bytes of the slab (see [`crate::layout`]).
//! A free object holds the address of the next free object at
//! `Layout::free_offset`; the last one holds null.
//!
//! Every function here works on raw memory and takes no lock: the caller owns
//! the slab (it holds the lock that protects the slab's list, or the slab is
//! not yet published). Platform-free: compiled into the module and the host
//! crate.

use crate::layout::Layout;
use core::ptr;

/// Marks a live slab header; XORed with the owner so a slab of one cache
/// does not validate against another.
const SLAB_MAGIC: usize = 0x5e1f_51ab_0c0f_fee5_u64 as usize;

/// Per-slab metadata at the start of every slab.
#[repr(C)]
pub struct SlabHeader {
    /// `SLAB_MAGIC ^ owner` while the slab is live; 0 once it is freed.
    pub magic: usize,
    /// Identity of the owning cache (its address).
    pub owner: usize,
    /// First free object, or null when the slab is full.
    pub freelist: *mut u8,
    /// Objects handed out.
    pub inuse: u32,
    /// Objects in this slab.
    pub objects: u32,
    /// NUMA node of the slab's pages.
    pub node: i32,
    /// Whether the slab is on its node's partial list.
    pub on_list: bool,
    /// Previous slab on the list.
    pub prev: *mut SlabHeader,
    /// Next slab on the list.
    pub next: *mut SlabHeader,
}

/// Bytes reserved for the header at the start of each slab.
pub const HEADER_SIZE: usize = core::mem::size_of::<SlabHeader>();

/// Why a pointer handed to free was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreeError {
    /// The pointer's slab is not a live slab of this cache.
    NotOurSlab,
    /// The pointer is inside a slab of this cache but not at an object start.
    NotObjectStart,
    /// The object is already free (it heads the freelist, or the slab has
    /// no objects in use).
    DoubleFree,
}

impl SlabHeader {
    /// The header of the slab that would contain `obj`.
    pub fn of(obj: *const u8, layout: &Layout) -> *mut SlabHeader {
        ((obj as usize) & !(layout.slab_bytes - 1)) as *mut SlabHeader
    }

    /// Writes a header at `base` and threads every object onto the freelist
    /// in address order.
    ///
    /// # Safety
    /// `base` is `layout.slab_bytes` bytes of writable memory, aligned to
    /// `layout.slab_bytes`, owned by the caller.
    pub unsafe fn init(base: *mut u8, layout: &Layout, owner: usize, node: i32) -> *mut SlabHeader {
        let hdr = base.cast::<SlabHeader>();
        let mut next: *mut u8 = ptr::null_mut();
        for idx in (0..layout.objects).rev() {
            // SAFETY: object `idx` lies inside the slab and the free pointer
            // slot is word aligned (objects are aligned to at least a word).
            unsafe {
                let obj = base.add(layout.object_offset(idx));
                obj.add(layout.free_offset).cast::<*mut u8>().write(next);
                next = obj;
            }
        }
        // SAFETY: the header fits before the first object and `base` is
        // aligned far beyond `SlabHeader`'s alignment.
        unsafe {
            hdr.write(SlabHeader {
                magic: SLAB_MAGIC ^ owner,
                owner,
                freelist: next,
                inuse: 0,
                objects: layout.objects as u32,
                node,
                on_list: false,
                prev: ptr::null_mut(),
                next: ptr::null_mut(),
            });
        }
        hdr
    }

    /// Whether this header belongs to a live slab of `owner`.
    pub fn is_live_for(&self, owner: usize) -> bool {
        self.magic == SLAB_MAGIC ^ owner && self.owner == owner
    }

    /// Marks the slab dead, so stale pointers into it are refused.
    pub fn kill(&mut self) {
        self.magic = 0;
    }

    /// Whether every object is free.
    pub fn is_empty(&self) -> bool {
        self.inuse == 0
    }

    /// Whether no object is free.
    pub fn is_full(&self) -> bool {
        self.freelist.is_null()
    }

    /// Takes the first free object, or null when the slab is full.
    ///
    /// # Safety
    /// The slab was set up by [`SlabHeader::init`] with `layout` and the
    /// caller owns it.
    pub unsafe fn pop(&mut self, layout: &Layout) -> *mut u8 {
        let obj = self.freelist;
        if obj.is_null() {
            return obj;
        }
        // SAFETY: `obj` is a free object of this slab, whose free pointer
        // slot holds the next free object.
        self.freelist = unsafe { obj.add(layout.free_offset).cast::<*mut u8>().read() };
        self.inuse += 1;
        obj
    }

    /// Checks that `obj` may be freed into this slab by `owner`.
    pub fn check_free(
        &self,
        obj: *const u8,
        layout: &Layout,
        owner: usize,
    ) -> Result<(), FreeError> {
        if !self.is_live_for(owner) {
            return Err(FreeError::NotOurSlab);
        }
        let offset = obj as usize - core::ptr::from_ref(self) as usize;
        if layout.object_index(offset).is_none() {
            return Err(FreeError::NotObjectStart);
        }
        if self.inuse == 0 || ptr::eq(self.freelist, obj) {
            return Err(FreeError::DoubleFree);
        }
        Ok(())
    }

    /// Returns `obj` to the freelist.
    ///
    /// # Safety
    /// `check_free` accepted `obj` and the caller owns the slab.
    pub unsafe fn push(&mut self, obj: *mut u8, layout: &Layout) {
        // SAFETY: `obj` is an allocated object of this slab; its free pointer
        // slot is inside the object (or just after it with a ctor).
        unsafe {
            obj.add(layout.free_offset)
                .cast::<*mut u8>()
                .write(self.freelist)
        };
        self.freelist = obj;
        self.inuse -= 1;
    }
}

/// An intrusive doubly linked list of slabs, with its length.
pub struct SlabList {
    head: *mut SlabHeader,
    len: usize,
}

impl Default for SlabList {
    fn default() -> Self {
        Self::new()
    }
}

impl SlabList {
    /// An empty list.
    pub const fn new() -> Self {
        Self {
            head: ptr::null_mut(),
            len: 0,
        }
    }

    /// Number of slabs on the list.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// First slab, or null.
    pub fn first(&self) -> *mut SlabHeader {
        self.head
    }

    /// Adds `slab` at the front.
    ///
    /// # Safety
    /// `slab` is a live header owned by the caller and on no list.
    pub unsafe fn push_front(&mut self, slab: *mut SlabHeader) {
        // SAFETY: the caller owns `slab`; `head`, when set, is a live member.
        unsafe {
            (*slab).prev = ptr::null_mut();
            (*slab).next = self.head;
            (*slab).on_list = true;
            if !self.head.is_null() {
                (*self.head).prev = slab;
            }
        }
        self.head = slab;
        self.len += 1;
    }

    /// Unlinks `slab`.
    ///
    /// # Safety
    /// `slab` is on this list.
    pub unsafe fn remove(&mut self, slab: *mut SlabHeader) {
        // SAFETY: `slab` and its neighbours are members of this list.
        unsafe {
            let (prev, next) = ((*slab).prev, (*slab).next);
            if prev.is_null() {
                self.head = next;
            } else {
                (*prev).next = next;
            }
            if !next.is_null() {
                (*next).prev = prev;
            }
            (*slab).prev = ptr::null_mut();
            (*slab).next = ptr::null_mut();
            (*slab).on_list = false;
        }
        self.len -= 1;
    }

    /// Unlinks and returns the first slab, or null.
    pub fn pop_front(&mut self) -> *mut SlabHeader {
        let slab = self.head;
        if !slab.is_null() {
            // SAFETY: `slab` is the head of this list.
            unsafe { self.remove(slab) };
        }
        slab
    }

    /// Moves every empty slab to a new list, which is returned.
    pub fn take_empty(&mut self) -> SlabList {
        let mut out = SlabList::new();
        let mut cur = self.head;
        while !cur.is_null() {
            // SAFETY: `cur` is a member of this list; `next` is read before
            // `cur` is unlinked.
            unsafe {
                let next = (*cur).next;
                if (*cur).is_empty() {
                    self.remove(cur);
                    out.push_front(cur);
                }
                cur = next;
            }
        }
        out
    }
}
