// SPDX-License-Identifier: GPL-2.0
//! The public C API (include/rslub.h): argument checks and the translation
//! between C conventions (ERR_PTR, NULL) and the core [`Cache`]. The
//! registry of live caches is `registry.rs`; the symbols are exported by
//! c_shim/exports.c.

use crate::attr::Set;
pub use crate::kplat::Cache;
use crate::layout::{Layout, LayoutRequest};
use crate::names::{attr_name, read_name, show_name, ATTR_NAME_MAX};
use crate::registry::{self, RegisterError};
use crate::slab::HEADER_SIZE;
use crate::slub::{Ctor, MIN_OBJECTS};
use crate::stat::Stat;
use core::ffi::{c_char, c_int, c_long, c_longlong, c_uint, c_void};
use core::ptr;
use kernel::prelude::*;

pub use crate::slub::NAME_MAX;

/// Largest object (`RSLUB_MAX_OBJECT_SIZE`, include/rslub_limits.h).
pub const MAX_OBJECT_SIZE: usize = crate::shim::RSLUB_MAX_OBJECT_SIZE as usize;

fn err_ptr<T>(e: kernel::error::Error) -> *mut T {
    e.to_errno() as isize as *mut T
}

/// Logs a call with a NULL cache: `what` is the function, `outcome` what
/// the caller gets. Out of line and cold, so that the NULL checks on the
/// allocation and free paths cost a compare and a branch, not a stack frame.
#[cold]
#[inline(never)]
fn null_cache(what: &str, outcome: &str) {
    pr_err!("{}: cache is NULL; {}\n", what, outcome);
}

/// [`null_cache`] for `rslub_cache_free`, which names the object.
#[cold]
#[inline(never)]
fn null_cache_free(obj: *mut c_void) {
    if obj.is_null() {
        return;
    }
    pr_err!("rslub_cache_free: cache is NULL; {:p} not freed\n", obj);
}

/// Why a name cannot name a cache, if it cannot (it names a sysfs
/// directory).
fn bad_name(name: &[u8]) -> Option<(&'static str, kernel::error::Error)> {
    if crate::sysfs::reserved(name) {
        Some(("the name is taken by a file in /sys/kernel/rslub", EEXIST))
    } else if name == b"." || name == b".." {
        Some(("not a usable name (it names a sysfs directory)", EINVAL))
    } else if name.contains(&b'/') {
        Some((
            "name must not contain '/' (it names a sysfs directory)",
            EINVAL,
        ))
    } else {
        None
    }
}

/// The `debug::*` bits `flags` asks for (with the module's default), or
/// None when `flags` has a flag rslub does not know.
fn debug_bits(flags: c_uint) -> Option<u32> {
    let c = crate::consts();
    // SLAB_* debug flags to `debug::*` bits; a flag the kernel compiles out
    // is 0 and so never matches.
    let bits = [
        crate::debug::CONSISTENCY,
        crate::debug::RED_ZONE,
        crate::debug::POISON,
        crate::debug::STORE_USER,
    ];
    let mut allowed = c.flag_hwcache_align | c.flag_no_merge | c.flag_typesafe_by_rcu;
    let mut debug = c.debug_default;
    for (&f, &bit) in c.flag_debug.iter().zip(bits.iter()) {
        allowed |= f;
        if f != 0 && flags & f != 0 {
            debug |= bit;
        }
    }
    (flags & !allowed == 0).then_some(debug)
}

/// The slab layout a cache asks for, or why there is none. `served`: the
/// cache will serve a kernel cache, whose slab pages are the kernel's:
/// the header stays at the slab's start (`Cache::set_page_owner`).
/// `freeptr`: where the kernel cache keeps a free object's free pointer
/// inside it (`LayoutRequest::free_offset_at`).
fn request_for(
    size: usize,
    align: usize,
    flags: c_uint,
    debug: u32,
    has_ctor: bool,
    served: bool,
    freeptr: Option<usize>,
) -> core::result::Result<LayoutRequest, &'static str> {
    if size == 0 || size > MAX_OBJECT_SIZE {
        return Err("size must be 1..RSLUB_MAX_OBJECT_SIZE");
    }
    if align != 0 && !align.is_power_of_two() {
        return Err("align must be 0 or a power of two");
    }
    let c = crate::consts();
    Ok(LayoutRequest {
        object_size: size,
        align,
        hwcache_align: flags & c.flag_hwcache_align != 0,
        has_ctor,
        rcu_readers: flags & c.flag_typesafe_by_rcu != 0,
        free_offset_at: freeptr,
        cache_line: c.cache_line,
        page_size: c.page_size,
        header_size: HEADER_SIZE,
        // The debug paths and served frees find headers in the slab.
        header_outside_ok: debug == 0 && !served,
        min_objects: MIN_OBJECTS,
        // On a KASAN kernel every API object has red zones, which KASAN's
        // shadow marks (`kdebug`): an access just past it is reported.
        red_zone: debug & crate::debug::RED_ZONE != 0 || (KDEBUG && cfg!(CONFIG_KASAN_GENERIC)),
        poison: debug & crate::debug::POISON != 0 && !has_ctor,
        store_user: debug & crate::debug::STORE_USER != 0,
        smallest: false,
    })
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
    unsafe { create_cache(name, size, align, flags, ctor, false, None) }
}

/// `rslub_cache_create`, for a cache that serves a kernel cache when
/// `served` (`serve/`: its slab headers stay in the slabs), whose free
/// objects may hold their free pointer at `freeptr`.
///
/// # Safety
/// As for `rslub_cache_create`.
pub(crate) unsafe fn create_cache(
    name: *const c_char,
    size: c_uint,
    align: c_uint,
    flags: c_uint,
    ctor: Option<Ctor>,
    served: bool,
    freeptr: Option<usize>,
) -> *mut Cache {
    // SAFETY: forwarded from the caller's contract.
    let Some((buf, len)) = (unsafe { read_name(name, NAME_MAX) }) else {
        pr_err!(
            "create: name is NULL, empty or longer than {} bytes\n",
            NAME_MAX
        );
        return err_ptr(EINVAL);
    };
    let name = &buf[..len];
    let show = show_name(name);
    if let Some((why, err)) = bad_name(name) {
        pr_err!("create {}: {}\n", show, why);
        return err_ptr(err);
    }
    let (size, align) = (size as usize, align as usize);
    let layout = debug_bits(flags)
        .ok_or("unsupported flags")
        .and_then(|debug| {
            let req = request_for(size, align, flags, debug, ctor.is_some(), served, freeptr)?;
            let layout =
                Layout::new(&req).map_err(|_| "no slab layout fits this size and align")?;
            Ok((layout, debug, req))
        });
    let (layout, debug, req) = match layout {
        Ok(l) => l,
        Err(why) => {
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
    };
    let c = crate::consts();
    let mut params = crate::defaults().params(
        size,
        layout.objects,
        c.page_size,
        debug,
        (c.gfp_zero, c.gfp_thisnode, c.gfp_nomemalloc),
    );
    params.typesafe_rcu = flags & c.flag_typesafe_by_rcu != 0;
    let cache = Cache::create(name, flags, layout, ctor, params);
    if cache.is_null() {
        pr_err!("create {}: out of memory for the cache\n", show);
        return err_ptr(ENOMEM);
    }
    // An API cache above its smallest order gets a fallback of that order
    // (core slub/fallback.rs); debug and served caches have none.
    if debug == 0 && !served {
        let smallest = LayoutRequest {
            smallest: true,
            header_outside_ok: false,
            ..req
        };
        let attached = |fl: Layout| {
            // SAFETY: just created, unused and unpublished.
            unsafe { Cache::attach_fallback(cache, fl, params, c.gfp_light) }
        };
        if let Ok(fl) = Layout::new(&smallest) {
            if fl.order < layout.order && !attached(fl) {
                pr_err!("create {}: out of memory for the cache\n", show);
                // SAFETY: just created, unused and unpublished.
                let _ = unsafe { Cache::destroy(cache) };
                return err_ptr(ENOMEM);
            }
        }
    }
    // SAFETY: just created, unused and unpublished.
    let (why, err) = match unsafe { registry::register(cache, name) } {
        Ok(()) => return cache,
        Err(RegisterError::Exists) => ("a cache with this name exists", EEXIST),
        Err(RegisterError::NoMemory) => ("out of memory for the registry", ENOMEM),
        Err(RegisterError::NoDirectory) => ("cannot add its sysfs directory", ENOMEM),
    };
    pr_err!("create {}: {}\n", show, why);
    // Not under the registry's lock: destroy flushes the CPUs under
    // `cpus_read_lock`, and the CPU-dead callback takes the registry lock
    // with the hotplug lock held (found by the fault-injection stress: a
    // failed sysfs directory during CPU hotplug deadlocked).
    // SAFETY: the cache was just created, is unpublished and unused.
    let _ = unsafe { Cache::destroy(cache) };
    err_ptr(err)
}

/// Whether API objects go through the kernel's memory debuggers (KASAN's
/// shadow, kmemleak, init_on_alloc/free: c_shim/kdebug.c): on a kernel
/// built with generic KASAN or kmemleak only (the debug flavor), so that
/// elsewhere the hit paths keep their shape.
const KDEBUG: bool = cfg!(any(CONFIG_KASAN_GENERIC, CONFIG_DEBUG_KMEMLEAK));

/// Runs `f`, a call into the cache, with KASAN's reports off for this
/// task (`KDEBUG`): rslub reads its slab headers, the free pointers of
/// free objects and, when it checks a bad free, whatever the pointer
/// points to; reports there would be rslub's legitimate reads of memory
/// KASAN's shadow says it does not own (mm/slub.c is built without KASAN
/// for the same reason; Rust cannot mix the two builds).
#[inline(always)]
fn quiet<R>(f: impl FnOnce() -> R) -> R {
    if !KDEBUG {
        return f();
    }
    // SAFETY: balanced below, on this task.
    unsafe { crate::shim::rslub_shim_kdebug_quiet(true) };
    let r = f();
    // SAFETY: the call above's pair.
    unsafe { crate::shim::rslub_shim_kdebug_quiet(false) };
    r
}

/// An object `s` just handed out, to the kernel's debuggers (`KDEBUG`).
///
/// # Safety
/// `s` is live and `obj` null or an object it just allocated.
#[inline(always)]
unsafe fn kdebug_alloc(s: *mut Cache, obj: *mut u8, gfp: c_uint) -> *mut u8 {
    // SAFETY: `s` is live per the caller's contract.
    if KDEBUG && !obj.is_null() && unsafe { (*s).debug_flags() } == 0 {
        // SAFETY: as above.
        let c = unsafe { &*s };
        let l = &c.layout;
        let keeps = c.ctor().is_some() || c.typesafe_rcu();
        // SAFETY: `obj` is an allocated object of this layout: its red
        // zones and bytes are the cache's.
        unsafe {
            crate::shim::rslub_shim_kdebug_alloc(
                obj.cast(),
                l.object_size as c_uint,
                l.red_left as c_uint,
                l.inuse as c_uint,
                gfp,
                keeps,
            )
        };
    }
    obj
}

/// An object about to be freed to `s`, to the kernel's debuggers
/// (`KDEBUG`): false when it must not be freed (a second free, reported).
///
/// # Safety
/// `s` is live; `obj` is null or an object the caller owns.
#[inline(always)]
unsafe fn kdebug_free(s: *mut Cache, obj: *mut u8) -> bool {
    if !KDEBUG || obj.is_null() {
        return true;
    }
    // SAFETY: `s` is live per the caller's contract.
    let c = unsafe { &*s };
    // rslub's own debug= checks read freed objects whole: theirs alone;
    // and a pointer that is no object of this cache is the cache's to
    // report, untouched here.
    if c.debug_flags() != 0 || !quiet(|| c.is_object(obj)) {
        return true;
    }
    // Only addresses in the direct map have KASAN shadow the shim may
    // read; anything else is the cache's own check to report.
    // SAFETY: a pure address check.
    if !unsafe { crate::shim::rslub_shim_addr_has_page(obj.cast()) } {
        return true;
    }
    let rcu = c.typesafe_rcu();
    // SAFETY: `obj` is an object of this cache (checked), the caller's.
    let fine = unsafe {
        crate::shim::rslub_shim_kdebug_free(
            obj.cast(),
            c.layout.object_size as c_uint,
            c.layout.free_offset as c_uint,
            c.ctor().is_some() || rcu,
            rcu,
        )
    };
    if !fine {
        c.report_double_free(obj);
    }
    fine
}

/// Allocates an object; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache returned by [`rslub_cache_create`].
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_alloc(s: *mut Cache, gfp: c_uint) -> *mut c_void {
    if s.is_null() {
        null_cache("rslub_cache_alloc", "returning NULL");
        return ptr::null_mut();
    }
    // SAFETY: `s` is live per the caller's contract.
    unsafe { kdebug_alloc(s, quiet(|| (*s).alloc(gfp, -1)), gfp) }.cast()
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
    if s.is_null() {
        null_cache("rslub_cache_alloc_node", "returning NULL");
        return ptr::null_mut();
    }
    // SAFETY: `s` is live per the caller's contract.
    unsafe { kdebug_alloc(s, quiet(|| (*s).alloc(gfp, node)), gfp) }.cast()
}

/// Frees an object; see include/rslub.h.
///
/// # Safety
/// `s` is a live cache returned by [`rslub_cache_create`]; if `obj` is one
/// of its objects, the caller owns it.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_free(s: *mut Cache, obj: *mut c_void) {
    // A NULL `obj` is ignored: here, and in the cache's paths, where it
    // fails the address check and is told apart out of line.
    if s.is_null() {
        return null_cache_free(obj);
    }
    // SAFETY: `s` is live and the caller owns `obj`, per the contract.
    if unsafe { kdebug_free(s, obj.cast()) } {
        // SAFETY: as above.
        quiet(|| unsafe { (*s).free(obj.cast()) })
    }
}

/// Allocates `nr` objects, all or nothing; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `p` is NULL or has room for `nr` pointers.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_alloc_bulk(
    s: *mut Cache,
    gfp: c_uint,
    nr: usize,
    p: *mut *mut c_void,
) -> bool {
    if nr == 0 {
        return true;
    }
    if s.is_null() {
        null_cache("rslub_cache_alloc_bulk", "returning false");
        return false;
    }
    if p.is_null() {
        // SAFETY: `s` is live per the caller's contract.
        let name = unsafe { (*s).name_str() };
        pr_err!(
            "rslub_cache_alloc_bulk {}: array is NULL for {} objects; returning false\n",
            name,
            nr
        );
        return false;
    }
    // SAFETY: `p` has room for `nr` pointers.
    let out = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr) };
    // SAFETY: `s` is live per the caller's contract.
    let ok = quiet(|| unsafe { (*s).alloc_bulk(gfp, out) });
    if KDEBUG && ok {
        for o in out.iter() {
            // SAFETY: each is an object `s` just allocated.
            unsafe { kdebug_alloc(s, *o, gfp) };
        }
    }
    ok
}

/// Frees `nr` objects; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `p` is NULL or holds `nr` pointers to
/// objects the caller owns (or NULL).
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_free_bulk(s: *mut Cache, nr: usize, p: *mut *mut c_void) {
    if nr == 0 {
        return;
    }
    if s.is_null() {
        null_cache("rslub_cache_free_bulk", "nothing freed");
        return;
    }
    if p.is_null() {
        // SAFETY: `s` is live per the caller's contract.
        let name = unsafe { (*s).name_str() };
        pr_err!(
            "rslub_cache_free_bulk {}: array is NULL for {} objects; nothing freed\n",
            name,
            nr
        );
        return;
    }
    // SAFETY: `p` holds `nr` pointers.
    let objs = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr) };
    if KDEBUG {
        for o in objs.iter_mut() {
            // SAFETY: `s` is live and the caller owns `*o`; one refused
            // (a second free, reported) is not freed.
            if !unsafe { kdebug_free(s, *o) } {
                *o = ptr::null_mut();
            }
        }
    }
    // SAFETY: `s` is live and the caller owns the objects, per the contract.
    quiet(|| unsafe { (*s).free_bulk(objs) })
}

/// Returns empty slabs to the page allocator; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_shrink(s: *mut Cache) -> c_int {
    if s.is_null() {
        null_cache("rslub_cache_shrink", "returning -EINVAL");
        return EINVAL.to_errno();
    }
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
    if !registry::unregister(s) {
        pr_err!("destroy: {:p} is not a live rslub cache; ignored\n", s);
        return EINVAL.to_errno();
    }
    // Gone from sysfs, with no reader or writer left: it can be freed.
    // SAFETY: `s` is live and, out of the registry, ours alone.
    match unsafe { Cache::destroy(s) } {
        Ok(()) => 0,
        Err(live) => {
            // SAFETY: a failed destroy leaves the cache allocated.
            let name = unsafe { (*s).name_str() };
            pr_err!(
                "destroy {}: {} objects still allocated; their slabs and the cache are leaked\n",
                name,
                live
            );
            EBUSY.to_errno()
        }
    }
}

// ---- introspection and tunables (names as in sysfs) ------------------------

/// An introspection call's cache and attribute name, or None after one log
/// line saying which of them is bad (`what`: the function).
///
/// # Safety
/// `s` is NULL or a live cache; `name` is NULL or a NUL-terminated string.
unsafe fn cache_and_name<'a>(
    what: &str,
    s: *mut Cache,
    name: *const c_char,
) -> Option<(&'a Cache, [u8; NAME_MAX], usize)> {
    if s.is_null() {
        null_cache(what, "returning -EINVAL");
        return None;
    }
    // SAFETY: `s` is live per the caller's contract.
    let cache = unsafe { &*s };
    // SAFETY: forwarded.
    let Some((buf, len)) = (unsafe { attr_name(name) }) else {
        pr_err!(
            "{} {}: name is NULL, empty or longer than {} bytes; returning -EINVAL\n",
            what,
            cache.name_str(),
            ATTR_NAME_MAX
        );
        return None;
    };
    Some((cache, buf, len))
}

/// Logs an unknown attribute or statistic name; returns -EINVAL.
fn unknown_name(what: &str, cache: &Cache, kind: &str, name: &[u8]) -> c_int {
    pr_err!(
        "{} {}: no {} named {:?}; returning -EINVAL\n",
        what,
        cache.name_str(),
        kind,
        show_name(name)
    );
    EINVAL.to_errno()
}

/// Total of statistic `name` over all CPUs; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_stat(s: *mut Cache, name: *const c_char) -> c_longlong {
    const WHAT: &str = "rslub_cache_stat";
    // SAFETY: forwarded.
    let Some((cache, buf, len)) = (unsafe { cache_and_name(WHAT, s, name) }) else {
        return EINVAL.to_errno().into();
    };
    match Stat::from_name(&buf[..len]) {
        Some(st) => cache.stat_total(st, &mut []) as c_longlong,
        None => unknown_name(WHAT, cache, "statistic", &buf[..len]).into(),
    }
}

/// Clears statistic `name` (or every one for "all"); see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_stat_clear(s: *mut Cache, name: *const c_char) -> c_int {
    const WHAT: &str = "rslub_cache_stat_clear";
    // SAFETY: forwarded.
    let Some((cache, buf, len)) = (unsafe { cache_and_name(WHAT, s, name) }) else {
        return EINVAL.to_errno();
    };
    let name = &buf[..len];
    if name == b"all" {
        Stat::ALL.iter().for_each(|&st| cache.stat_clear(st));
        return 0;
    }
    match Stat::from_name(name) {
        Some(st) => {
            cache.stat_clear(st);
            0
        }
        None => unknown_name(WHAT, cache, "statistic", name),
    }
}

/// Reads attribute `name`; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_get(s: *mut Cache, name: *const c_char) -> c_longlong {
    const WHAT: &str = "rslub_cache_get";
    // SAFETY: forwarded.
    let Some((cache, buf, len)) = (unsafe { cache_and_name(WHAT, s, name) }) else {
        return EINVAL.to_errno().into();
    };
    let name = &buf[..len];
    match crate::attr::find(name).and_then(|a| crate::attr::value(a, cache)) {
        Some(v) => v as c_longlong,
        None => unknown_name(WHAT, cache, "attribute", name).into(),
    }
}

/// Sets tunable `name`; see include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_set(
    s: *mut Cache,
    name: *const c_char,
    value: c_longlong,
) -> c_int {
    const WHAT: &str = "rslub_cache_set";
    // SAFETY: forwarded.
    let Some((cache, buf, len)) = (unsafe { cache_and_name(WHAT, s, name) }) else {
        return EINVAL.to_errno();
    };
    let name = &buf[..len];
    let Some(Set::Tunable { max, set }) = crate::attr::find(name).and_then(|a| a.set) else {
        return unknown_name(WHAT, cache, "tunable", name);
    };
    let v = match u32::try_from(value) {
        Ok(v) if v <= max => v,
        _ => {
            pr_err!(
                "{} {}: {} = {} is out of range 0..{}; unchanged, returning -EINVAL\n",
                WHAT,
                cache.name_str(),
                show_name(name),
                value,
                max
            );
            return EINVAL.to_errno();
        }
    };
    set(cache, v)
}

/// Checks every slab of the cache and isolates damaged ones; see
/// include/rslub.h.
///
/// # Safety
/// `s` is NULL or a live cache.
#[no_mangle]
pub unsafe extern "C" fn rslub_cache_validate(s: *mut Cache) -> c_int {
    if s.is_null() {
        null_cache("rslub_cache_validate", "returning -EINVAL");
        return EINVAL.to_errno();
    }
    // SAFETY: `s` is live per the caller's contract.
    let n = unsafe { (*s).validate() };
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Pages held for slabs over all caches; see include/rslub.h.
#[no_mangle]
pub extern "C" fn rslub_pages_allocated() -> c_long {
    // SAFETY: reads a counter.
    unsafe { crate::shim::rslub_shim_pages_held() }
}
