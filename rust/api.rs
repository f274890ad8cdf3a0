// SPDX-License-Identifier: GPL-2.0
//! The public C API (include/rslub.h): argument checks, the name registry,
//! and the translation between C conventions (ERR_PTR, NULL) and [`Cache`].
//! The symbols are exported by c_shim/exports.c.

use crate::cache::{Cache, Consts, CreateError, Ctor, NAME_MAX};
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::ptr;
use kernel::prelude::*;
use kernel::sync::global_lock;

/// A registered cache pointer.
struct CachePtr(*mut Cache);

// SAFETY: a cache is shared by every CPU by design; the registry only
// compares names through these pointers while holding `CACHES`.
unsafe impl Send for CachePtr {}

global_lock! {
    // SAFETY: initialized by `init_registry` in module init, before any API call.
    unsafe(uninit) static CACHES: Mutex<KVec<CachePtr>> = KVec::new();
}

/// Initializes the registry.
///
/// # Safety
/// Called exactly once, at module init, before any API call.
pub unsafe fn init_registry() {
    // SAFETY: the caller guarantees a single call before first use.
    unsafe { CACHES.init() };
}

/// Caches still registered at module exit (their users leaked them).
pub fn leaked_caches() -> usize {
    CACHES.lock().len()
}

fn err_ptr<T>(e: kernel::error::Error) -> *mut T {
    e.to_errno() as isize as *mut T
}

/// Reads a C string of at most `NAME_MAX` bytes; `None` if NULL, empty or
/// longer.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn read_name(name: *const c_char) -> Option<([u8; NAME_MAX + 1], usize)> {
    if name.is_null() {
        return None;
    }
    let mut buf = [0u8; NAME_MAX + 1];
    for (i, slot) in buf.iter_mut().enumerate() {
        // SAFETY: the string is NUL-terminated and we stop at the NUL, so
        // every byte read up to it is inside the string.
        let b = unsafe { name.add(i).read() } as u8;
        if b == 0 {
            return (i > 0).then_some((buf, i));
        }
        *slot = b;
    }
    None
}

/// Creates a cache; see include/rslub.h.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `ctor`, if set, is a function
/// that accepts any object of this cache.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_create(
    name: *const c_char,
    size: c_uint,
    align: c_uint,
    flags: c_uint,
    ctor: Option<Ctor>,
) -> *mut Cache {
    // SAFETY: forwarded from the caller's contract.
    let Some((buf, len)) = (unsafe { read_name(name) }) else {
        pr_err!(
            "create: name is NULL, empty or longer than {} bytes\n",
            NAME_MAX
        );
        return err_ptr(EINVAL);
    };
    let name = &buf[..len];
    let show = core::str::from_utf8(name).unwrap_or("<non-utf8 name>");
    let mut caches = CACHES.lock();
    // SAFETY: registered pointers are live caches; the registry lock keeps
    // them from being destroyed while we look.
    if caches.iter().any(|c| unsafe { (*c.0).name() } == name) {
        pr_err!("create {}: a cache with this name exists\n", show);
        return err_ptr(EEXIST);
    }
    let cache = match Cache::new(
        name,
        size as usize,
        align as usize,
        flags,
        ctor,
        Consts::read(),
    ) {
        Ok(c) => c,
        Err(CreateError::Invalid(why)) => {
            pr_err!(
                "create {}: {} (size {}, align {}, flags {:#x})\n",
                show,
                why,
                size,
                align,
                flags
            );
            return err_ptr(EINVAL);
        }
        Err(CreateError::NoMem) => return err_ptr(ENOMEM),
    };
    if caches.reserve(1, GFP_KERNEL).is_err() {
        return err_ptr(ENOMEM);
    }
    // SAFETY: the cache is never moved out of its box: the raw pointer is
    // only turned back into a box to drop it in place.
    let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(cache) });
    // Capacity was reserved above, so this cannot fail.
    let _ = caches.push(CachePtr(raw), GFP_KERNEL);
    raw
}

/// Allocates an object; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache returned by [`rslub_cache_create`].
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_alloc(s: *mut Cache, gfp: c_uint) -> *mut c_void {
    // SAFETY: `s` is live per the caller's contract.
    unsafe { rslub_cache_alloc_node(s, gfp, -1) }
}

/// Allocates an object from a node; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache returned by [`rslub_cache_create`].
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_alloc_node(
    s: *mut Cache,
    gfp: c_uint,
    node: c_int,
) -> *mut c_void {
    // SAFETY: `s` is live per the caller's contract.
    unsafe { (*s).alloc(gfp, node) }.cast()
}

/// Frees an object; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache returned by [`rslub_cache_create`].
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_free(s: *mut Cache, obj: *mut c_void) {
    if obj.is_null() {
        return;
    }
    // SAFETY: `s` is live and the caller owns `obj`, per the contract.
    unsafe { (*s).free(obj.cast()) }
}

/// Allocates `nr` objects, all or nothing; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache; `p` has room for `nr` pointers.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_alloc_bulk(
    s: *mut Cache,
    gfp: c_uint,
    nr: usize,
    p: *mut *mut c_void,
) -> bool {
    for i in 0..nr {
        // SAFETY: `s` is live and `p` has `nr` slots.
        unsafe {
            let obj = (*s).alloc(gfp, -1);
            if obj.is_null() {
                rslub_cache_free_bulk(s, i, p);
                return false;
            }
            p.add(i).write(obj.cast());
        }
    }
    true
}

/// Frees `nr` objects; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache; `p` holds `nr` pointers.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_free_bulk(s: *mut Cache, nr: usize, p: *mut *mut c_void) {
    for i in 0..nr {
        // SAFETY: `p` holds `nr` pointers; `s` is live.
        unsafe { rslub_cache_free(s, p.add(i).read()) };
    }
}

/// Returns empty slabs to the page allocator; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_shrink(s: *mut Cache) -> c_int {
    // SAFETY: `s` is live per the caller's contract.
    unsafe { (*s).shrink() };
    0
}

/// Destroys a cache; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; no other call on it runs or follows.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_destroy(s: *mut Cache) -> c_int {
    if s.is_null() {
        return 0;
    }
    let mut caches = CACHES.lock();
    let Some(pos) = caches.iter().position(|c| ptr::eq(c.0, s)) else {
        pr_err!("destroy: {:p} is not a live rslub cache; ignored\n", s);
        return EINVAL.to_errno();
    };
    // Order does not matter in the registry.
    let _ = caches.remove(pos);
    drop(caches);
    // SAFETY: `s` was live and is now unreachable through the registry.
    let cache = unsafe { &*s };
    let live = cache.live_objects();
    if live != 0 {
        pr_err!(
            "destroy {}: {} objects still allocated; their slabs and the cache are leaked\n",
            cache.name_str(),
            live
        );
        return EBUSY.to_errno();
    }
    cache.shrink();
    // SAFETY: `s` came from `KBox::into_raw` in create and no one uses it now.
    drop(unsafe { KBox::from_raw(s) });
    0
}
