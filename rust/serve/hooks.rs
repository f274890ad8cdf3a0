// SPDX-License-Identifier: GPL-2.0
//! What the kernel calls on a served cache's allocation and free: the slab
//! backend's operations (c_shim/backend.c names them in its ops; `alloc` and
//! `free` are static calls, so the kernel lands here directly), and the
//! one piece of state they read besides the rslub cache the kernel hands
//! them: `RARE`, which the hit path tests once.

use crate::kplat::Cache;
use crate::shim;
use core::ffi::{c_int, c_uint, c_void};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::prelude::*;

/// The kernel wipes freed objects (`init_on_free=1`, fixed at boot): a
/// served object must then come back all zero, free pointer included.
static INIT_ON_FREE: AtomicBool = AtomicBool::new(false);

/// The task making rslub's own caches for serving (`internal`), whose
/// allocations from served caches come from SLUB; null when none.
static INTERNAL_TASK: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

/// Sets whether the kernel wipes freed objects (read at load).
pub(super) fn set_wipe(wipe: bool) {
    INIT_ON_FREE.store(wipe, Ordering::Relaxed);
    if wipe {
        RARE.fetch_or(RARE_WIPE, Ordering::Relaxed);
    }
}

/// Nonzero while a served allocation may need more than `Cache::alloc`:
/// `RARE_WIPE` (init_on_free, fixed at boot) or `RARE_INTERNAL` (a task is
/// in `internal`). One word, so that the hit path tests both at once.
static RARE: AtomicUsize = AtomicUsize::new(0);
const RARE_WIPE: usize = 1;
const RARE_INTERNAL: usize = 2;

/// Between `internal(true)` and `internal(false)`, the calling task's
/// allocations from served caches come from SLUB: rslub's own bookkeeping
/// for a served cache (its sysfs directory, say) must not live in a served
/// cache, or that cache could never drain. One task at a time (`INTERNAL`).
pub(super) fn internal(on: bool) {
    if on {
        // SAFETY: reads the running task's pointer.
        INTERNAL_TASK.store(unsafe { shim::rslub_shim_current() }, Ordering::Relaxed);
        RARE.fetch_or(RARE_INTERNAL, Ordering::Relaxed);
    } else {
        RARE.fetch_and(!RARE_INTERNAL, Ordering::Relaxed);
        INTERNAL_TASK.store(ptr::null_mut(), Ordering::Relaxed);
    }
}

/// The kernel's allocation of a served cache: the slab backend's `alloc`,
/// a static call from the kernel's allocation path, with the arguments of
/// `rslub_cache_alloc_node` first and in the same registers. Shaped like
/// it (the hit path makes only tail calls), so that serving adds no frame
/// of rslub's own: one test of `RARE` more.
///
/// # Safety
/// `cache` is the rslub cache handed to `slab_backend_serve` for the kernel
/// cache `_s` (the kernel's SRCU keeps it live across the call).
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_alloc(
    cache: *mut c_void,
    gfp: c_uint,
    node: c_int,
    _s: *mut c_void,
) -> *mut c_void {
    // SAFETY: per the caller.
    let c = unsafe { &*cache.cast::<Cache>() };
    // Any node, as kmem_cache_alloc() and kmalloc() ask: with the node a
    // constant, the path is rslub_cache_alloc's.
    if RARE.load(Ordering::Relaxed) != 0 || node != NUMA_NO_NODE {
        return alloc_rare(c, gfp, node).cast();
    }
    c.alloc(gfp, NUMA_NO_NODE).cast()
}

/// The kernel's `NUMA_NO_NODE`: any node, the local one first.
const NUMA_NO_NODE: c_int = -1;

/// `rslub_rust_served_alloc` when `RARE` is set or a node is asked for:
/// none for rslub's own bookkeeping (`internal`), nor for a node without
/// memory (SLUB answers that request as it answers its own, without a
/// log line of rslub's for each); with init_on_free, the object's free
/// pointer cleared (`wiped`).
#[inline(never)]
fn alloc_rare(c: &Cache, gfp: c_uint, node: c_int) -> *mut u8 {
    // SAFETY: reads the node's state.
    if is_internal() || (node != NUMA_NO_NODE && !unsafe { shim::rslub_shim_node_has_memory(node) })
    {
        return ptr::null_mut();
    }
    let obj = c.alloc(gfp, node);
    if !obj.is_null() {
        // SAFETY: just allocated.
        unsafe { wiped(c, obj) };
    }
    obj
}

/// The running task is making rslub's own caches (`internal`).
fn is_internal() -> bool {
    let t = INTERNAL_TASK.load(Ordering::Relaxed);
    // SAFETY: reads the running task's pointer.
    !t.is_null() && t == unsafe { shim::rslub_shim_current() }
}

/// With init_on_free the kernel wiped the object when it was freed (never
/// one of a cache with a constructor or a `SLAB_TYPESAFE_BY_RCU` one);
/// rslub's free pointer, if it lies inside the object, is the one word
/// left to clear.
///
/// # Safety
/// `obj` is an object of `c`, just allocated.
unsafe fn wiped(c: &Cache, obj: *mut u8) {
    if INIT_ON_FREE.load(Ordering::Relaxed) && c.ctor().is_none() && !c.typesafe_rcu() {
        let off = c.layout.free_offset;
        if off + size_of::<usize>() <= c.layout.object_size {
            // SAFETY: per the caller; the free pointer word lies inside it.
            unsafe { ptr::write_unaligned(obj.add(off).cast::<usize>(), 0) };
        }
    }
}

/// The kernel's bulk allocation of a served cache, for a prefilled sheaf:
/// `nr` objects into `p`, or 0 and none.
///
/// # Safety
/// As for `rslub_rust_served_alloc`; `p` has room for `nr` pointers.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_alloc_bulk(
    _s: *mut c_void,
    cache: *mut c_void,
    gfp: c_uint,
    nr: c_uint,
    p: *mut *mut c_void,
) -> c_uint {
    if is_internal() {
        return 0;
    }
    // SAFETY: per the caller.
    let c = unsafe { &*cache.cast::<Cache>() };
    // SAFETY: per the caller, `nr` writable slots.
    let out = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr as usize) };
    if !c.alloc_bulk(gfp, out) {
        return 0;
    }
    // Tested once, not in a call per object (10 instructions an object).
    if INIT_ON_FREE.load(Ordering::Relaxed) {
        for &obj in out.iter() {
            // SAFETY: each was just allocated.
            unsafe { wiped(c, obj) };
        }
    }
    nr
}

/// The kernel's free of `obj`, an object of a served slab of the kernel
/// cache `_s`, which holds `cache` for it: the slab backend's `free`, a
/// static call from the kernel's free path. The cache validates the slab
/// itself (its magic, keyed by its own secret and the slab's address): a
/// header an overflow damaged, or an isolated slab, makes a refused free,
/// reported and counted in the cache's `errors` like any other.
///
/// # Safety
/// `obj` lies in a slab rslub allocated for the kernel (found by the kernel
/// from the page of `obj`); `cache` is the rslub cache the kernel holds for
/// that slab's kernel cache (live: its objects are not all back), or null
/// if the kernel holds none.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_free(
    cache: *mut c_void,
    obj: *mut c_void,
    _s: *mut c_void,
) {
    if cache.is_null() {
        return no_cache(obj);
    }
    // SAFETY: per the caller, live; the kernel hands the object back once,
    // and `free` refuses what is not a live object of this cache.
    unsafe { (*cache.cast::<Cache>()).free(obj.cast()) }
}

/// The kernel's bulk free of served objects (`kmem_cache_free_bulk`, once
/// their free hooks ran): each goes back as `rslub_rust_served_free` would
/// take it, through rslub's bulk free (one cmpxchg16b for the objects of
/// one slab). `p`'s entries are consumed.
///
/// # Safety
/// As for `rslub_rust_served_free`, for each of the `nr` objects in `p`.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_free_bulk(
    _s: *mut c_void,
    cache: *mut c_void,
    nr: c_uint,
    p: *mut *mut c_void,
) {
    // SAFETY: per the caller, `nr` readable and writable slots.
    let objs = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr as usize) };
    if cache.is_null() {
        for &obj in objs.iter() {
            no_cache(obj.cast());
        }
        return;
    }
    // SAFETY: per the caller, live, and each object handed back once;
    // `free_bulk` refuses what is not a live object of this cache.
    unsafe { (*cache.cast::<Cache>()).free_bulk(objs) }
}

/// A free of a served slab's object whose kernel cache holds no rslub
/// cache: only a double free after the cache drained could get here.
#[cold]
fn no_cache(obj: *mut c_void) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        pr_err!(
            "free of {:p}: a served slab whose kernel cache has no rslub cache; dropped (said once)\n",
            obj
        );
    }
}

/// Where the object `ptr` points into starts (the kernel's usercopy check
/// and kmem_dump_obj()); null if nowhere. Found from the cache's geometry,
/// not from the slab header, so a live object of a damaged or isolated
/// slab is still found.
///
/// # Safety
/// As for `rslub_rust_served_free`, with `ptr` anywhere in the slab.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_object_start(
    cache: *mut c_void,
    base: *mut c_void,
    ptr: *const c_void,
) -> *mut c_void {
    if cache.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: per the caller.
    let c = unsafe { &*cache.cast::<Cache>() };
    c.object_start(base.cast(), ptr.cast())
        .map_or(ptr::null_mut(), |p| p.cast())
}
