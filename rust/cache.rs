// SPDX-License-Identifier: GPL-2.0
//! A cache in the kernel: slabs from the page allocator, per-node partial
//! lists under one irq-safe spinlock per cache.
//!
//! This is the simple, correct allocator the public API stands on; the
//! SLUB fast path (per-CPU slabs, lockless freelists) replaces the locked
//! paths here without changing the API.
//!
//! Slab states: *partial* (on its node's list, some objects free), *full*
//! (on no list, found again through the header of an object being freed) and
//! *empty* (on the list, kept while the node has no more than `min_partial`
//! partial slabs, else returned to the page allocator).
//!
//! Locks: `CACHES` (registry mutex, create/destroy only) is taken before a
//! cache's `state` lock; page allocation and ctors run with no lock held.

use crate::layout::{Layout, LayoutRequest};
use crate::shim;
use crate::slab::{FreeError, SlabHeader, SlabList, HEADER_SIZE};
use core::ffi::c_void;
use core::ptr;
use kernel::prelude::*;
use kernel::sync::{new_spinlock_irq, SpinLockIrq};

/// Longest cache name (`RSLUB_NAME_MAX`, include/rslub_limits.h).
pub const NAME_MAX: usize = shim::RSLUB_NAME_MAX as usize;

/// Largest object (`RSLUB_MAX_OBJECT_SIZE`, include/rslub_limits.h).
pub const MAX_OBJECT_SIZE: usize = shim::RSLUB_MAX_OBJECT_SIZE as usize;

/// Node ids this build handles (x86_64 NUMA default `NODES_SHIFT` of 6).
pub const MAX_NODES: usize = 64;

/// Objects a slab should hold at least, when waste allows.
const MIN_OBJECTS: usize = 8;

/// A constructor, as the C API passes it.
pub type Ctor = unsafe extern "C" fn(*mut c_void);

/// Kernel constants read from the shim once at load.
#[derive(Clone, Copy)]
pub struct Consts {
    /// Page size.
    pub page_size: usize,
    /// Cache line size.
    pub cache_line: usize,
    /// `NUMA_NO_NODE`.
    pub numa_no_node: i32,
    /// `nr_node_ids`.
    pub nr_node_ids: usize,
    /// `__GFP_ZERO`.
    pub gfp_zero: u32,
    /// `__GFP_THISNODE`.
    pub gfp_thisnode: u32,
    /// `SLAB_HWCACHE_ALIGN`.
    pub flag_hwcache_align: u32,
    /// `SLAB_NO_MERGE`.
    pub flag_no_merge: u32,
}

impl Consts {
    /// Reads the constants from the shim.
    pub fn read() -> Self {
        let mut c = shim::rslub_shim_consts::default();
        // SAFETY: `c` is a valid, writable struct of the type the shim fills.
        unsafe { shim::rslub_shim_get_consts(&mut c) };
        Consts {
            page_size: c.page_size as usize,
            cache_line: c.cache_line as usize,
            numa_no_node: c.numa_no_node,
            nr_node_ids: c.nr_node_ids as usize,
            gfp_zero: c.gfp_zero,
            gfp_thisnode: c.gfp_thisnode,
            flag_hwcache_align: c.flag_hwcache_align,
            flag_no_merge: c.flag_no_merge,
        }
    }
}

/// Per-node lists and counts.
struct NodeState {
    partial: SlabList,
    nr_slabs: usize,
}

/// Everything the cache lock protects.
struct State {
    nodes: [NodeState; MAX_NODES],
    /// Objects handed out and not yet freed.
    live: usize,
}

// SAFETY: the raw slab pointers in `State` point into slabs owned by the
// cache; they are only followed with the cache lock held, from any CPU.
unsafe impl Send for State {}

/// One cache.
#[pin_data]
pub struct Cache {
    name: [u8; NAME_MAX + 1],
    name_len: usize,
    /// Slab geometry.
    pub layout: Layout,
    /// `SLAB_*` flags the cache was created with.
    pub flags: u32,
    ctor: Option<Ctor>,
    min_partial: usize,
    consts: Consts,
    #[pin]
    state: SpinLockIrq<State>,
}

/// Why `Cache::new` refused.
#[derive(Debug)]
pub enum CreateError {
    /// Bad argument; the message says which.
    Invalid(&'static str),
    /// No memory for the cache.
    NoMem,
}

impl Cache {
    /// Builds a cache. `name` is already validated by the caller.
    pub fn new(
        cache_name: &[u8],
        size: usize,
        align: usize,
        flags: u32,
        ctor: Option<Ctor>,
        consts: Consts,
    ) -> core::result::Result<Pin<KBox<Cache>>, CreateError> {
        if size == 0 || size > MAX_OBJECT_SIZE {
            return Err(CreateError::Invalid(
                "size must be 1..RSLUB_MAX_OBJECT_SIZE",
            ));
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(CreateError::Invalid("align must be 0 or a power of two"));
        }
        if flags & !(consts.flag_hwcache_align | consts.flag_no_merge) != 0 {
            return Err(CreateError::Invalid("unsupported flags"));
        }
        let layout = Layout::new(&LayoutRequest {
            object_size: size,
            align,
            hwcache_align: flags & consts.flag_hwcache_align != 0,
            has_ctor: ctor.is_some(),
            cache_line: consts.cache_line,
            page_size: consts.page_size,
            header_size: HEADER_SIZE,
            min_objects: MIN_OBJECTS,
        })
        .map_err(|_| CreateError::Invalid("no slab layout fits this size and align"))?;
        let mut name_buf = [0u8; NAME_MAX + 1];
        name_buf[..cache_name.len()].copy_from_slice(cache_name);
        // Upstream's rule: keep more partial slabs for larger objects.
        let min_partial = (usize::BITS - size.leading_zeros()) as usize / 2;
        KBox::pin_init(
            try_pin_init!(Cache {
                name: name_buf,
                name_len: cache_name.len(),
                layout,
                flags,
                ctor,
                min_partial: min_partial.clamp(5, 10),
                consts,
                state <- new_spinlock_irq!(
                    State {
                        nodes: [const {
                            NodeState {
                                partial: SlabList::new(),
                                nr_slabs: 0,
                            }
                        }; MAX_NODES],
                        live: 0,
                    },
                    "rslub_cache_state"
                ),
            }),
            GFP_KERNEL,
        )
        .map_err(|_| CreateError::NoMem)
    }

    /// The cache's name.
    pub fn name(&self) -> &[u8] {
        &self.name[..self.name_len]
    }

    /// The name for log lines.
    pub fn name_str(&self) -> &str {
        core::str::from_utf8(self.name()).unwrap_or("<non-utf8 name>")
    }

    fn owner(&self) -> usize {
        core::ptr::from_ref(self) as usize
    }

    /// Node to allocate from: the requested one when it has memory, else the
    /// local one (the page allocator falls back from there).
    fn pick_node(&self, node: i32, gfp: u32) -> i32 {
        // SAFETY: plain query of node state.
        let ok = node >= 0 && unsafe { shim::rslub_shim_node_has_memory(node) };
        if ok || (node >= 0 && gfp & self.consts.gfp_thisnode != 0) {
            node
        } else {
            // SAFETY: reads the current CPU's node id.
            unsafe { shim::rslub_shim_numa_node_id() }
        }
    }

    /// Allocates one object; null when memory ran out.
    pub fn alloc(&self, gfp: u32, node: i32) -> *mut u8 {
        let want = self.pick_node(node, gfp);
        let exact = node >= 0;
        let obj = self.alloc_from_partial(want, exact);
        let obj = if obj.is_null() {
            self.alloc_from_new_slab(gfp, want)
        } else {
            obj
        };
        if !obj.is_null() && gfp & self.consts.gfp_zero != 0 {
            // SAFETY: `obj` is a freshly allocated object of `object_size` bytes.
            unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
        }
        obj
    }

    fn alloc_from_partial(&self, want: i32, exact: bool) -> *mut u8 {
        let mut st = self.state.lock();
        let nr = self.consts.nr_node_ids.min(MAX_NODES);
        let first = want as usize % MAX_NODES;
        let order = Iterator::chain(
            core::iter::once(first),
            (0..nr).filter(move |&n| n != first),
        );
        for n in order {
            let slab = st.nodes[n].partial.first();
            if !slab.is_null() {
                return self.take_locked(&mut st, slab);
            }
            if exact {
                break;
            }
        }
        ptr::null_mut()
    }

    /// Pops an object from `slab` (on its node's partial list, lock held).
    fn take_locked(&self, st: &mut State, slab: *mut SlabHeader) -> *mut u8 {
        // SAFETY: `slab` is a live slab on one of our lists; the lock is held.
        unsafe {
            let obj = (*slab).pop(&self.layout);
            if (*slab).is_full() {
                st.nodes[(*slab).node as usize].partial.remove(slab);
            }
            st.live += 1;
            obj
        }
    }

    fn alloc_from_new_slab(&self, gfp: u32, node: i32) -> *mut u8 {
        let slab = self.new_slab(gfp, node);
        if slab.is_null() {
            return ptr::null_mut();
        }
        let mut st = self.state.lock();
        // SAFETY: `slab` was just built and is not published yet.
        unsafe {
            let n = (*slab).node as usize;
            st.nodes[n].nr_slabs += 1;
            st.nodes[n].partial.push_front(slab);
        }
        self.take_locked(&mut st, slab)
    }

    fn new_slab(&self, gfp: u32, node: i32) -> *mut SlabHeader {
        let page_gfp = gfp & !self.consts.gfp_zero;
        // SAFETY: the shim returns a fresh, naturally aligned block or null.
        let base =
            unsafe { shim::rslub_shim_alloc_pages(node, page_gfp, self.layout.order) }.cast::<u8>();
        if base.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: `base` is the start of the block we own.
        let actual = unsafe { shim::rslub_shim_addr_to_node(base.cast()) };
        let actual = if (actual as usize) < MAX_NODES {
            actual
        } else {
            0
        };
        // SAFETY: `base` is `slab_bytes` of fresh memory, aligned to its size.
        let slab = unsafe { SlabHeader::init(base, &self.layout, self.owner(), actual) };
        if let Some(ctor) = self.ctor {
            for idx in 0..self.layout.objects {
                // SAFETY: each object is inside the slab; the free pointer is
                // outside the object when a ctor exists, so the ctor may use
                // all `object_size` bytes.
                unsafe { ctor(base.add(self.layout.object_offset(idx)).cast()) };
            }
        }
        slab
    }

    /// Frees `obj`; a pointer that is not an allocated object of this cache
    /// is reported and ignored.
    ///
    /// # Safety
    /// If `obj` is an object of this cache, the caller owns it (it was
    /// allocated and is not used after this call).
    pub unsafe fn free(&self, obj: *mut u8) {
        // SAFETY: query only; no dereference.
        if !unsafe { shim::rslub_shim_addr_is_direct_mapped(obj.cast()) } {
            pr_err!(
                "cache {}: free of {:p}, not slab memory; ignored\n",
                self.name_str(),
                obj
            );
            return;
        }
        let slab = SlabHeader::of(obj, &self.layout);
        let mut to_free = ptr::null_mut();
        {
            let mut st = self.state.lock();
            // SAFETY: `slab` is the aligned start of direct-mapped memory, so
            // reading a header's worth of it is safe; its contents are only
            // trusted after `check_free` accepted them.
            let checked = unsafe { (*slab).check_free(obj, &self.layout, self.owner()) };
            if let Err(e) = checked {
                drop(st);
                self.report_bad_free(obj, e);
                return;
            }
            // SAFETY: `check_free` accepted `obj`; the lock is held.
            unsafe {
                let was_full = (*slab).is_full();
                (*slab).push(obj, &self.layout);
                st.live -= 1;
                let n = (*slab).node as usize;
                if was_full {
                    st.nodes[n].partial.push_front(slab);
                }
                if (*slab).is_empty() && st.nodes[n].partial.len() > self.min_partial {
                    st.nodes[n].partial.remove(slab);
                    st.nodes[n].nr_slabs -= 1;
                    (*slab).kill();
                    to_free = slab;
                }
            }
        }
        if !to_free.is_null() {
            self.free_slab(to_free);
        }
    }

    fn report_bad_free(&self, obj: *mut u8, e: FreeError) {
        let what = match e {
            FreeError::NotOurSlab => "not an object of this cache",
            FreeError::NotObjectStart => "not the start of an object",
            FreeError::DoubleFree => "object already free (double free)",
        };
        pr_err!(
            "cache {}: free of {:p}: {}; ignored\n",
            self.name_str(),
            obj,
            what
        );
    }

    fn free_slab(&self, slab: *mut SlabHeader) {
        // SAFETY: `slab` is a killed slab, unreachable from any list, whose
        // block was allocated with this order.
        unsafe { shim::rslub_shim_free_pages(slab.cast(), self.layout.order) };
    }

    /// Returns every empty slab to the page allocator.
    pub fn shrink(&self) {
        for n in 0..MAX_NODES {
            let mut empty = {
                let mut st = self.state.lock();
                let empty = st.nodes[n].partial.take_empty();
                st.nodes[n].nr_slabs -= empty.len();
                empty
            };
            loop {
                let slab = empty.pop_front();
                if slab.is_null() {
                    break;
                }
                // SAFETY: the slab is off every list and owned here.
                unsafe { (*slab).kill() };
                self.free_slab(slab);
            }
        }
    }

    /// Objects handed out and not freed.
    pub fn live_objects(&self) -> usize {
        self.state.lock().live
    }
}
