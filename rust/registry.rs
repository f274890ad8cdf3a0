// SPDX-License-Identifier: GPL-2.0
//! The registry of live caches: their names, their sysfs directories, and
//! what walks every cache (CPU hotplug teardown, the shrinker).
//!
//! Locks: `CACHES` (the registry mutex) is taken by create, destroy and the
//! CPU hotplug callback, and is never held while flushing CPUs (that takes
//! `cpus_read_lock`, which the hotplug callback already holds when it takes
//! `CACHES`). sysfs directories are added and removed under `CACHES`; their
//! show/store callbacks do not take it (removal waits for them instead).

use crate::kplat::Cache;
use crate::sysfs::{Dir, Root};
use core::ffi::{c_int, c_uint, c_ulong};
use core::ptr;
use kernel::prelude::*;
use kernel::sync::global_lock;

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

/// Why [`register`] refused a cache.
pub enum RegisterError {
    /// A cache of this name is registered.
    Exists,
    /// No memory for the registry's slot.
    NoMemory,
    /// Its sysfs directory could not be added.
    NoDirectory,
}

/// Publishes `cache` under `name`: in the registry and in sysfs. On an
/// error the cache is not published and is still the caller's.
///
/// # Safety
/// `cache` is a live cache, just created and not yet used or published.
pub unsafe fn register(cache: *mut Cache, name: &[u8]) -> core::result::Result<(), RegisterError> {
    let mut reg = CACHES.lock();
    let exists = reg.caches.iter().any(|e| {
        // SAFETY: registered pointers are live caches; the registry lock
        // keeps them from being destroyed while we look.
        unsafe { (*e.cache).name() == name }
    });
    if exists {
        return Err(RegisterError::Exists);
    }
    if reg.caches.reserve(1, GFP_KERNEL).is_err() {
        return Err(RegisterError::NoMemory);
    }
    // SAFETY: per the caller, a live cache.
    let cache_ref = unsafe { &*cache };
    let Some(dir) = reg.root.as_ref().and_then(|r| r.add(cache_ref, name)) else {
        return Err(RegisterError::NoDirectory);
    };
    // Capacity was reserved above, so this cannot fail.
    let _ = reg.caches.push(CachePtr { cache, dir }, GFP_KERNEL);
    Ok(())
}

/// Takes `s` out of the registry and out of sysfs (waiting for its sysfs
/// readers and writers); false if it is not a registered cache.
pub fn unregister(s: *mut Cache) -> bool {
    let entry = {
        let mut reg = CACHES.lock();
        let Some(pos) = reg.caches.iter().position(|c| ptr::eq(c.cache, s)) else {
            return false;
        };
        reg.caches.remove(pos)
    };
    // Not under `CACHES`: a sysfs `shrink` write may be waiting for
    // `cpus_read_lock` while a CPU-dead callback waits for `CACHES`.
    if let Ok(entry) = entry {
        entry.dir.remove();
    }
    true
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
    // Memory pressure: a cache whose objects the kernel kept may drain now.
    crate::serve::wake_reaper();
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
