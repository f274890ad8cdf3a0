// SPDX-License-Identifier: GPL-2.0
//! The public C API (include/rslub.h): argument checks, the name registry,
//! and the translation between C conventions (ERR_PTR, NULL) and the core
//! [`Cache`]. The symbols are exported by c_shim/exports.c.
//!
//! Locks: `CACHES` (the registry mutex) is taken by create, destroy and the
//! CPU hotplug callback, and is never held while flushing CPUs (that takes
//! `cpus_read_lock`, which the hotplug callback already holds when it takes
//! `CACHES`). sysfs directories are added and removed under `CACHES`; their
//! show/store callbacks do not take it (removal waits for them instead).

use crate::attr::Set;
use crate::kplat::Kernel;
use crate::layout::{Layout, LayoutRequest};
use crate::slab::HEADER_SIZE;
use crate::slub::{auto_max_empty, Ctor, Params};
use crate::stat::Stat;
use crate::sysfs::{Dir, Root};
use core::ffi::{c_char, c_int, c_long, c_longlong, c_uint, c_ulong, c_void};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use kernel::prelude::*;
use kernel::sync::global_lock;

/// A cache in the kernel.
pub type Cache = crate::slub::Cache<Kernel>;

pub use crate::slub::NAME_MAX;

/// Largest object (`RSLUB_MAX_OBJECT_SIZE`, include/rslub_limits.h).
pub const MAX_OBJECT_SIZE: usize = crate::shim::RSLUB_MAX_OBJECT_SIZE as usize;

/// Objects a slab should hold at least, when waste allows: upstream's
/// `4 * (fls(nr_cpus) + 1)` for 4 CPUs, and a bulk batch of 16 fits one
/// slab (256-byte objects get order 1: 31 per slab instead of 15).
const MIN_OBJECTS: usize = 16;

/// A registered cache and its sysfs directory.
struct CachePtr {
    cache: *mut Cache,
    dir: Dir,
}

/// The live caches and the sysfs root they appear under.
pub struct Registry {
    caches: KVec<CachePtr>,
    root: Option<Root>,
}

// SAFETY: a cache is shared by every CPU by design; the registry only
// follows these pointers while holding `CACHES`.
unsafe impl Send for Registry {}

global_lock! {
    // SAFETY: initialized by `init_registry` in module init, before any API call.
    unsafe(uninit) static CACHES: Mutex<Registry> = Registry { caches: KVec::new(), root: None };
}

global_lock! {
    // SAFETY: initialized by `init_registry` in module init, before the
    // shrinker is registered.
    //
    // Serializes the shrinker's walks of the registry. Reclaim runs from
    // kswapd and from every task in direct reclaim at once; the walks take
    // `CACHES` by trylock only (see `rslub_rust_shrink_scan`), so without
    // this lock one walk made the others give up (seen: a page hog got
    // NULL while 471 empty slabs were still cached). Nothing allocates
    // memory with it held, so waiting for it inside reclaim is safe.
    unsafe(uninit) static SHRINK_WALK: Mutex<()> = ();
}

/// Initializes the registry and the sysfs root.
///
/// # Safety
/// Called exactly once, at module init, before any API call.
pub unsafe fn init_registry() -> Result {
    // SAFETY: the caller guarantees a single call before first use.
    unsafe { CACHES.init() };
    // SAFETY: as above.
    unsafe { SHRINK_WALK.init() };
    CACHES.lock().root = Some(Root::new()?);
    Ok(())
}

/// At module exit: removes the sysfs tree; returns how many caches were
/// never destroyed (their users leaked them).
pub fn exit_registry() -> usize {
    let mut reg = CACHES.lock();
    let n = reg.caches.len();
    while let Some(c) = reg.caches.pop() {
        c.dir.remove();
    }
    reg.root = None;
    n
}

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

/// Shows a name from a caller for a log line.
fn show_name(name: &[u8]) -> &str {
    core::str::from_utf8(name).unwrap_or("<non-utf8 name>")
}

/// Reads a C string of at most `NAME_MAX` bytes; `None` if NULL, empty or
/// longer.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn read_name(name: *const c_char, max: usize) -> Option<([u8; NAME_MAX], usize)> {
    if name.is_null() {
        return None;
    }
    let max = max.min(NAME_MAX);
    let mut buf = [0u8; NAME_MAX];
    for i in 0..=max {
        // SAFETY: the string is NUL-terminated and we stop at the NUL, so
        // every byte read is inside the string.
        let b = unsafe { name.add(i).read() } as u8;
        if b == 0 {
            return (i > 0).then_some((buf, i));
        }
        if i == max {
            break;
        }
        buf[i] = b;
    }
    None
}

/// Upstream's defaults by object size: (cpu_partial objects, min_partial).
fn size_defaults(size: usize, page_size: usize) -> (u32, u32) {
    let cpu_partial = if size >= page_size {
        2
    } else if size >= 1024 {
        6
    } else if size >= 256 {
        13
    } else {
        30
    };
    let min_partial = ((usize::BITS - size.leading_zeros()) / 2).clamp(5, 10);
    (cpu_partial, min_partial)
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
    let Some((buf, len)) = (unsafe { read_name(name, NAME_MAX) }) else {
        pr_err!(
            "create: name is NULL, empty or longer than {} bytes\n",
            NAME_MAX
        );
        return err_ptr(EINVAL);
    };
    let name = &buf[..len];
    let show = core::str::from_utf8(name).unwrap_or("<non-utf8 name>");
    if crate::sysfs::reserved(name) {
        pr_err!(
            "create {}: the name is taken by a file in /sys/kernel/rslub\n",
            show
        );
        return err_ptr(EEXIST);
    }
    if name == b"." || name == b".." {
        pr_err!(
            "create {}: not a usable name (it names a sysfs directory)\n",
            show
        );
        return err_ptr(EINVAL);
    }
    if name.contains(&b'/') {
        pr_err!(
            "create {}: name must not contain '/' (it names a sysfs directory)\n",
            show
        );
        return err_ptr(EINVAL);
    }
    let c = crate::consts();
    let (size, align) = (size as usize, align as usize);
    // SLAB_* debug flags to `debug::*` bits; a flag the kernel compiles out
    // is 0 and so never matches.
    let debug_bits = [
        crate::debug::CONSISTENCY,
        crate::debug::RED_ZONE,
        crate::debug::POISON,
        crate::debug::STORE_USER,
    ];
    let mut allowed = c.flag_hwcache_align | c.flag_no_merge;
    let mut debug = c.debug_default;
    for (&f, &bit) in c.flag_debug.iter().zip(debug_bits.iter()) {
        allowed |= f;
        if f != 0 && flags & f != 0 {
            debug |= bit;
        }
    }
    let why = if size == 0 || size > MAX_OBJECT_SIZE {
        Some("size must be 1..RSLUB_MAX_OBJECT_SIZE")
    } else if align != 0 && !align.is_power_of_two() {
        Some("align must be 0 or a power of two")
    } else if flags & !allowed != 0 {
        Some("unsupported flags")
    } else {
        None
    };
    let layout = why.map_or_else(
        || {
            Layout::new(&LayoutRequest {
                object_size: size,
                align,
                hwcache_align: flags & c.flag_hwcache_align != 0,
                has_ctor: ctor.is_some(),
                cache_line: c.cache_line,
                page_size: c.page_size,
                header_size: HEADER_SIZE,
                min_objects: MIN_OBJECTS,
                red_zone: debug & crate::debug::RED_ZONE != 0,
                poison: debug & crate::debug::POISON != 0 && ctor.is_none(),
                store_user: debug & crate::debug::STORE_USER != 0,
            })
            .map_err(|_| "no slab layout fits this size and align")
        },
        Err,
    );
    let layout = match layout {
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
    let mut reg = CACHES.lock();
    let exists = reg.caches.iter().any(|e| {
        // SAFETY: registered pointers are live caches; the registry lock
        // keeps them from being destroyed while we look.
        unsafe { (*e.cache).name() == name }
    });
    if exists {
        pr_err!("create {}: a cache with this name exists\n", show);
        return err_ptr(EEXIST);
    }
    if reg.caches.reserve(1, GFP_KERNEL).is_err() {
        pr_err!("create {}: out of memory for the registry\n", show);
        return err_ptr(ENOMEM);
    }
    let (auto_cpu_partial, auto_min_partial) = size_defaults(size, c.page_size);
    let (p_cpu_partial, p_min_partial, p_max_empty) = crate::param_defaults();
    let (harden, random_freelist) = crate::harden_defaults();
    let params = Params {
        cpu_partial: u32::try_from(p_cpu_partial).unwrap_or(auto_cpu_partial),
        min_partial: u32::try_from(p_min_partial).unwrap_or(auto_min_partial),
        max_empty: u32::try_from(p_max_empty)
            .unwrap_or_else(|_| auto_max_empty(auto_cpu_partial, layout.objects)),
        free_batch: crate::free_batch_default(),
        gfp_zero: c.gfp_zero,
        gfp_thisnode: c.gfp_thisnode,
        debug,
        harden,
        random_freelist,
    };
    let cache = Cache::create(name, flags, layout, ctor, params);
    if cache.is_null() {
        pr_err!("create {}: out of memory for the cache\n", show);
        return err_ptr(ENOMEM);
    }
    // SAFETY: `create` returned a valid cache.
    let cache_ref = unsafe { &*cache };
    let Some(dir) = reg.root.as_ref().and_then(|r| r.add(cache_ref, name)) else {
        // Not under `CACHES`: destroy flushes the CPUs under
        // `cpus_read_lock`, and the CPU-dead callback takes `CACHES` with
        // the hotplug lock held (found by the fault-injection stress: a
        // failed sysfs directory during CPU hotplug deadlocked).
        drop(reg);
        pr_err!("create {}: cannot add its sysfs directory\n", show);
        // SAFETY: the cache was just created, is unpublished and unused.
        let _ = unsafe { Cache::destroy(cache) };
        return err_ptr(ENOMEM);
    };
    // Under `CACHES`, which `rslub_fastpath_locked_cmpxchg` also holds:
    // the experiment's setting reaches every cache, new ones included.
    cache_ref.set_locked_fastpath(LOCKED_FASTPATH.load(Ordering::Relaxed));
    // Capacity was reserved above, so this cannot fail.
    let _ = reg.caches.push(CachePtr { cache, dir }, GFP_KERNEL);
    cache
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
    unsafe { (*s).alloc(gfp, -1) }.cast()
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
    unsafe { (*s).alloc(gfp, node) }.cast()
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
    unsafe { (*s).free(obj.cast()) }
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
    unsafe { (*s).alloc_bulk(gfp, out) }
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
    // SAFETY: `s` is live and the caller owns the objects, per the contract.
    unsafe { (*s).free_bulk(objs) }
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
    let entry = {
        let mut reg = CACHES.lock();
        let Some(pos) = reg.caches.iter().position(|c| ptr::eq(c.cache, s)) else {
            pr_err!("destroy: {:p} is not a live rslub cache; ignored\n", s);
            return EINVAL.to_errno();
        };
        reg.caches.remove(pos)
    };
    // Gone from sysfs, with no reader or writer left, before it is freed.
    // Not under `CACHES`: a sysfs `shrink` write may be waiting for
    // `cpus_read_lock` while a CPU-dead callback waits for `CACHES`.
    if let Ok(entry) = entry {
        entry.dir.remove();
    }
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

/// Flushes a dead CPU's state in every cache (CPU hotplug teardown).
#[no_mangle]
pub extern "C" fn rslub_rust_cpu_dead(cpu: c_uint) {
    let reg = CACHES.lock();
    for c in reg.caches.iter() {
        // SAFETY: registered caches are live while the registry lock is
        // held; the hotplug core calls this for a dead CPU, once.
        unsafe { (*c.cache).flush_dead_cpu(cpu) };
    }
}

// ---- the shrinker (c_shim/shim.c registers it; these are its callbacks) ----

/// The shrinker's count: slabs in node `nid`'s empty-slab caches, over
/// every cache. 0 when the registry is busy.
#[no_mangle]
pub extern "C" fn rslub_rust_shrink_count(nid: c_int) -> c_ulong {
    let _walk = SHRINK_WALK.lock();
    // Reclaim may run inside `rslub_cache_create`, whose GFP_KERNEL
    // allocations happen with `CACHES` held: never wait for it here.
    let Some(reg) = CACHES.try_lock() else {
        return 0;
    };
    reg.caches
        .iter()
        // SAFETY: registered caches are live while the registry lock is held.
        .map(|c| unsafe { (*c.cache).empty_cached(nid) } as c_ulong)
        .sum()
}

/// The shrinker's scan: gives back up to `nr` cached empty slabs of node
/// `nid` to the page allocator, cache after cache, whatever their
/// `max_empty`; returns how many, or `SHRINK_STOP` when the registry is
/// busy (a create or destroy holds it). Walks are serialized by
/// `SHRINK_WALK`; only node `list_lock`s are taken under `CACHES`, and no
/// memory is allocated.
#[no_mangle]
pub extern "C" fn rslub_rust_shrink_scan(nid: c_int, nr: c_ulong) -> c_ulong {
    let _walk = SHRINK_WALK.lock();
    let Some(reg) = CACHES.try_lock() else {
        return c_ulong::MAX;
    };
    let mut freed = 0usize;
    let want = usize::try_from(nr).unwrap_or(usize::MAX);
    for c in reg.caches.iter() {
        if freed >= want {
            break;
        }
        // SAFETY: registered caches are live while the registry lock is held.
        freed += unsafe { (*c.cache).reclaim_empty(nid, want - freed) };
    }
    freed as c_ulong
}

// ---- introspection and tunables (names as in sysfs) ------------------------

/// Longest attribute or statistic name the introspection calls read.
const ATTR_NAME_MAX: usize = 32;

/// Reads a NUL-terminated attribute name of at most `ATTR_NAME_MAX` bytes.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn attr_name(name: *const c_char) -> Option<([u8; NAME_MAX], usize)> {
    // SAFETY: forwarded.
    unsafe { read_name(name, ATTR_NAME_MAX) }
}

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

/// The setting of [`rslub_fastpath_locked_cmpxchg`], changed under `CACHES`.
static LOCKED_FASTPATH: AtomicBool = AtomicBool::new(false);

/// Puts a lock prefix on the fast path's per-CPU cmpxchg16b, or takes it
/// off (the bench's experiment), in every cache and in caches created
/// later; see include/rslub.h.
#[no_mangle]
pub extern "C" fn rslub_fastpath_locked_cmpxchg(locked: bool) {
    let reg = CACHES.lock();
    LOCKED_FASTPATH.store(locked, Ordering::Relaxed);
    for e in reg.caches.iter() {
        // SAFETY: registered pointers are live caches while `CACHES` is held.
        unsafe { (*e.cache).set_locked_fastpath(locked) };
    }
}

/// Overrides of the module parameters `harden` and `random_freelist` for
/// caches created from now on; -1: the parameter's value.
static HARDEN_OVERRIDE: AtomicI32 = AtomicI32::new(-1);
static RANDOM_OVERRIDE: AtomicI32 = AtomicI32::new(-1);

/// The overrides set by [`rslub_new_cache_default`]: (harden, random_freelist).
pub fn new_cache_overrides() -> (Option<bool>, Option<bool>) {
    let get = |a: &AtomicI32| match a.load(Ordering::Relaxed) {
        v if v < 0 => None,
        v => Some(v != 0),
    };
    (get(&HARDEN_OVERRIDE), get(&RANDOM_OVERRIDE))
}

/// Sets a create-time default of new caches; see include/rslub.h.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_new_cache_default(name: *const c_char, value: c_int) -> c_int {
    // SAFETY: forwarded.
    let Some((buf, len)) = (unsafe { attr_name(name) }) else {
        pr_err!(
            "rslub_new_cache_default: name is NULL, empty or longer than {} bytes; returning -EINVAL\n",
            ATTR_NAME_MAX
        );
        return EINVAL.to_errno();
    };
    let name = &buf[..len];
    let target = match name {
        b"harden" => &HARDEN_OVERRIDE,
        b"random_freelist" => &RANDOM_OVERRIDE,
        _ => {
            pr_err!(
                "rslub_new_cache_default: no default named {:?} (harden, random_freelist); returning -EINVAL\n",
                show_name(name)
            );
            return EINVAL.to_errno();
        }
    };
    if !(-1..=1).contains(&value) {
        pr_err!(
            "rslub_new_cache_default: {} = {} is out of range -1..1; unchanged, returning -EINVAL\n",
            show_name(name),
            value
        );
        return EINVAL.to_errno();
    }
    target.store(value, Ordering::Relaxed);
    0
}
