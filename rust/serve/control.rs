// SPDX-License-Identifier: GPL-2.0
//! Serving's C API (include/rslub.h: `rslub_serve`, `rslub_served_*`) and
//! its sysfs files in `/sys/kernel/rslub` (`serve`, `serve_refused`),
//! shown and stored through the shim.

use super::{apply, show, Listing, BACKEND, SERVED};
use crate::shim;
use core::ffi::{c_int, c_long, c_longlong, c_ulong, CStr};
use core::fmt::Write;
use core::ptr;
use core::sync::atomic::Ordering;
use kernel::ffi::c_char;
use kernel::prelude::*;

/// `rslub_serve` of include/rslub.h.
///
/// # Safety
/// `request` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_serve(request: *const c_char) -> c_int {
    if request.is_null() {
        pr_err!("rslub_serve: request is NULL\n");
        return EINVAL.to_errno();
    }
    // SAFETY: per the caller.
    let req = unsafe { CStr::from_char_ptr(request) }.to_bytes();
    let res = apply(req);
    // Any request (an empty one too) is a look of the reaper, now.
    super::rslub_rust_serve_reap();
    match res {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `/sys/kernel/rslub/serve_refused` (root only): each kernel cache that
/// cannot be served, `NAME: reason` a line: the kernel's reasons (SLUB
/// debugging, allocation profiling) and rslub's own (a name or objects too
/// long for it, its `debug=`). Nothing on a kernel without the hook.
/// Stops at the end of the page.
///
/// # Safety
/// `buf` is a sysfs page.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_serve_refused_show(buf: *mut c_char) -> c_long {
    // SAFETY: sysfs passes a PAGE_SIZE buffer.
    let buf =
        unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::consts().page_size) };
    let mut p = Page { buf, len: 0 };
    let _ = write_refused(&mut p);
    p.len as c_long
}

fn write_refused(w: &mut impl Write) -> core::fmt::Result {
    if !BACKEND.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut l = Listing {
        pat: b"*",
        found: KVec::new(),
        failed: false,
    };
    // SAFETY: `l` outlives the call, which hands it back to
    // `rslub_rust_serve_candidate` only.
    unsafe { shim::rslub_shim_backend_list(ptr::from_mut(&mut l).cast()) };
    if l.failed {
        return writeln!(w, "(out of memory listing the caches)");
    }
    for c in l.found.iter().filter(|c| !c.refused.is_null()) {
        // SAFETY: a NUL-terminated kernel string constant.
        let why = unsafe { CStr::from_char_ptr(c.refused) };
        writeln!(
            w,
            "{}: {}",
            show(&c.name[..c.len]),
            why.to_str().unwrap_or("?")
        )?;
    }
    Ok(())
}

/// `rslub_served_shrink` of include/rslub.h.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_served_shrink(name: *const c_char) -> c_int {
    if name.is_null() {
        return ENOENT.to_errno();
    }
    // SAFETY: per the caller.
    let name = unsafe { CStr::from_char_ptr(name) }.to_bytes();
    let list = SERVED.lock();
    for e in list.0.iter() {
        // SAFETY: `e.cache` is live while listed.
        let c = unsafe { &*e.cache };
        if c.name() == name {
            c.shrink();
            return 0;
        }
    }
    ENOENT.to_errno()
}

/// `rslub_served_objects` of include/rslub.h.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_served_objects(name: *const c_char) -> c_long {
    if name.is_null() {
        return c_long::from(ENOENT.to_errno());
    }
    // SAFETY: per the caller.
    let name = unsafe { CStr::from_char_ptr(name) }.to_bytes();
    let list = SERVED.lock();
    for e in list.0.iter() {
        // SAFETY: `e.cache` is live while listed.
        let c = unsafe { &*e.cache };
        if c.name() == name {
            c.flush_all();
            return c.totals().live_objects as c_long;
        }
    }
    c_long::from(ENOENT.to_errno())
}

/// `rslub_served_get` of include/rslub.h.
///
/// # Safety
/// `name` and `attr` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn rslub_served_get(name: *const c_char, attr: *const c_char) -> c_longlong {
    if name.is_null() {
        return c_longlong::from(ENOENT.to_errno());
    }
    // SAFETY: per the caller.
    let name = unsafe { CStr::from_char_ptr(name) }.to_bytes();
    let list = SERVED.lock();
    match list.0.iter().find(|e| {
        // SAFETY: `e.cache` is live while listed.
        unsafe { (*e.cache).name() == name }
    }) {
        // SAFETY: live while listed (the lock is held); `attr` per the caller.
        Some(e) => unsafe { crate::api::rslub_cache_get(e.cache, attr.cast()) },
        None => c_longlong::from(ENOENT.to_errno()),
    }
}

/// A writer into a fixed buffer (a sysfs page, a log line's words).
pub(super) struct Page<'a> {
    pub(super) buf: &'a mut [u8],
    pub(super) len: usize,
}

impl Page<'_> {
    /// What was written.
    pub(super) fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

impl Write for Page<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let end = self.len + b.len();
        if end > self.buf.len() {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// `/sys/kernel/rslub/serve`: the served caches, one a line.
///
/// # Safety
/// `buf` is a sysfs page.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_serve_show(buf: *mut c_char) -> c_long {
    // SAFETY: sysfs passes a PAGE_SIZE buffer.
    let buf =
        unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::consts().page_size) };
    let mut p = Page { buf, len: 0 };
    let list = SERVED.lock();
    for e in list.0.iter() {
        // SAFETY: `e.cache` is live while listed.
        let name = unsafe { (*e.cache).name_str() };
        let state = match (e.serving, e.kept) {
            (true, _) => "",
            (false, false) => " (draining)",
            (false, true) => " (kept)",
        };
        if writeln!(p, "{name}{state}").is_err() {
            break;
        }
    }
    p.len as c_long
}

/// Writes to `/sys/kernel/rslub/serve`: `NAME`/glob starts, `-NAME` stops.
///
/// # Safety
/// `buf` holds `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_serve_store(buf: *const c_char, len: c_ulong) -> c_long {
    // SAFETY: per the caller.
    let req = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len as usize) };
    let res = apply(req);
    // Any write (an empty one too) is a look of the reaper, now.
    super::rslub_rust_serve_reap();
    match res {
        Ok(()) => len as c_long,
        Err(e) => c_long::from(e.to_errno()),
    }
}
