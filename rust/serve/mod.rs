// SPDX-License-Identifier: GPL-2.0
//! Serving the kernel's own caches: rslub as the slab backend of named
//! kmem_caches (patches/, include/linux/slab_backend.h in the test
//! kernel), so that real workloads run on the classic design.
//!
//! A served kernel cache gets an rslub cache of its name, object size,
//! alignment and constructor (visible in /sys/kernel/rslub like any other),
//! whose slabs the kernel sees as slab pages of the served cache: kfree(),
//! kmem_cache_free(), ksize() and the rest find their way back here
//! (c_shim/backend.c's backend operations call `rslub_rust_served_*`).
//!
//! States of a served cache (`Served`): *serving* (new objects come from
//! rslub), then *draining* once serving stopped (`-NAME`; objects rslub
//! handed out still come back to it), and gone once they are all back: the
//! reaper (a work item) tells the kernel (`slab_backend_drained`), then
//! destroys the rslub cache. While any served cache exists, rslub holds a
//! reference on its own module, so rmmod is refused.
//!
//! The reaper: when serving stops, the CPUs' slabs of the caches that
//! stopped are flushed once (no allocation refills them: only frees come).
//! Then it counts what the draining caches still have out, without
//! flushing, first a second later, then at doubling intervals while the
//! count does not fall (back to a second when it does), and after
//! `REAP_IDLE_LOOKS` looks without progress it sleeps, with one log line
//! naming each cache and what the kernel still keeps of it. Memory
//! pressure (rslub's shrinker is asked for its count: `echo 2 >
//! /proc/sys/vm/drop_caches` too) wakes it, and any write to
//! /sys/kernel/rslub/serve (`echo > /sys/kernel/rslub/serve`) is a look.
//! So the objects the kernel keeps for good (dentries, inodes, long-lived
//! kmalloc objects) cost no wake-up.
//!
//! Lock order: `SERVED` → the kernel's slab_mutex (taken by
//! `slab_backend_serve`); `SERVED` → `CACHES` (api.rs); `SERVED` →
//! `INTERNAL` → `CACHES`; `SERVED` → `REAPER`. The alloc and free
//! paths take neither: the kernel passes the rslub cache (alloc) or the
//! slab (free), and SRCU in the kernel keeps both alive across the call.
//!
//! This file keeps the served caches' states: starting and stopping, the
//! reaper, and what the kernel's listing and destroy tell it. What the
//! kernel calls on a served allocation or free is `hooks.rs`; the C API
//! and the sysfs files of serving are `control.rs`.

pub mod control;
pub mod hooks;

use crate::api::{create_cache, rslub_cache_destroy, NAME_MAX};
use crate::kplat::Cache;
use crate::shim;
use core::ffi::{c_int, c_uint, c_ulong, c_ulonglong, c_void, CStr};
use core::fmt::Write;
use core::ptr;
use core::sync::atomic::{AtomicBool, Ordering};
use hooks::internal;
use kernel::ffi::c_char;
use kernel::prelude::*;
use kernel::sync::global_lock;

/// Milliseconds to the reaper's first look after serving stopped, after
/// the count of objects out fell, or after a wake-up; each look without
/// progress doubles it.
const REAP_MS: c_uint = 1000;
/// Looks in a row without progress (1, 2, 4 and 8 s apart) before the
/// reaper sleeps until memory pressure or a write to `serve` wakes it.
const REAP_IDLE_LOOKS: u32 = 4;

/// The reaper's back-off, under `SERVED`.
struct Reaper {
    /// Milliseconds to the next look.
    next_ms: c_uint,
    /// Looks in a row that found no fewer objects out.
    idle: u32,
    /// Objects out at the last look, over every draining cache.
    last_out: usize,
}

global_lock! {
    // SAFETY: initialized by `init_list` in module init, before any use.
    unsafe(uninit) static REAPER: Mutex<Reaper> = Reaper { next_ms: REAP_MS, idle: 0, last_out: usize::MAX };
}

/// The reaper sleeps (nothing scheduled) while caches still drain: the
/// next wake-up (`wake_reaper`) schedules a look.
static REAPER_ASLEEP: AtomicBool = AtomicBool::new(false);

/// A kernel cache rslub serves or drains.
///
/// # Invariants
/// Entries live in `SERVED` and are read or changed only under its lock.
/// While an entry is listed:
/// - `s` is a live kernel cache (the kernel tells rslub before it destroys
///   one, `rslub_rust_served_destroy`, and keeps it while rslub's objects
///   of it are out); no two entries have the same `(s, id)`.
/// - `cache` is a live rslub cache made for `s` alone: its slabs are slab
///   pages of `s` (`Cache::set_page_owner`), its name is that of `s` and no
///   other entry's cache has it. It is destroyed only after its entry is
///   removed.
/// - `serves` (at least 1) is the number of `slab_backend_serve` calls for
///   `s` not yet matched by `slab_backend_drained`. An entry is removed
///   only once serving stopped, all its objects are back and its cache
///   holds no isolated slab; `drained` is then called `serves` times.
/// - `serving`: the kernel hands new allocations of `s` to `cache` (the
///   last backend call for `s` was a serve). When it turns false `s` was
///   unserved and `cache`'s CPUs flushed once; only frees follow.
/// - `kept` implies not `serving`, and lasts: the entry is never removed
///   and never serves again.
///
/// rslub holds one reference on its own module while the list is not
/// empty (taken for the first entry, put when the last one goes).
struct Served {
    /// The kernel's `struct kmem_cache`.
    s: *mut c_void,
    /// Its id in the kernel's listing (`slab_backend_serve` checks it).
    id: u64,
    /// rslub's cache of the same name.
    cache: *mut Cache,
    /// New objects come from rslub (else it drains).
    serving: bool,
    /// `slab_backend_serve` calls not yet matched by `slab_backend_drained`.
    serves: u32,
    /// Kept for good: the rslub cache holds an isolated slab (a corruption
    /// was reported; the kernel may still free objects of it). The
    /// kernel's hooks stay on and rslub stays loaded.
    kept: bool,
}

/// The served and draining caches.
struct ServedList(KVec<Served>);

// SAFETY: the pointers name kernel objects shared by every CPU by design;
// the list is only used under `SERVED`.
unsafe impl Send for ServedList {}

global_lock! {
    // SAFETY: initialized by `init` in module init, before any use.
    unsafe(uninit) static SERVED: Mutex<ServedList> = ServedList(KVec::new());
}

global_lock! {
    // SAFETY: initialized by `init_list` in module init, before any use.
    // One task at a time in `hooks::internal`; taken after `SERVED`.
    unsafe(uninit) static INTERNAL: Mutex<()> = ();
}

/// The kernel took rslub as its slab backend (it has the hook).
static BACKEND: AtomicBool = AtomicBool::new(false);

/// Makes the served-cache list ready: before the sysfs root, whose
/// `serve` file takes it.
///
/// # Safety
/// Called once, at module init, before the registry is initialized.
pub unsafe fn init_list() {
    // SAFETY: the caller guarantees a single call before first use.
    unsafe { SERVED.init() };
    // SAFETY: as above.
    unsafe { REAPER.init() };
    // SAFETY: as above.
    unsafe { INTERNAL.init() };
}

/// Registers the backend and serves the `serve=` parameter's caches. A
/// kernel without the hook, or caches that cannot be served, get a log
/// line each; the module loads either way.
///
/// # Safety
/// Called once, at module init, after `init_list` and the registry.
pub unsafe fn init() {
    // SAFETY: reads a boot-time setting.
    hooks::set_wipe(unsafe { shim::rslub_shim_want_init_on_free() });
    // SAFETY: registers callbacks that are live until `exit`.
    let err = unsafe { shim::rslub_shim_backend_register() };
    if err == 0 {
        BACKEND.store(true, Ordering::Relaxed);
    }
    let mut buf = [0u8; 512];
    // SAFETY: `buf` has room for its length.
    let n = unsafe { shim::rslub_shim_serve_param(buf.as_mut_ptr().cast(), buf.len() as c_ulong) };
    let param = &buf[..(n.max(0) as usize).min(buf.len())];
    if param.is_empty() {
        return;
    }
    if param.len() >= buf.len() - 1 {
        pr_err!(
            "serve=: longer than {} bytes; nothing served (write the rest to /sys/kernel/rslub/serve)\n",
            buf.len() - 2
        );
        return;
    }
    if err != 0 {
        pr_err!(
            "serve={}: {}; nothing served\n",
            show(param),
            why_no_backend(err)
        );
        return;
    }
    let _ = apply(param);
}

/// At module exit (nothing is served: rslub's module reference keeps it
/// loaded until then): stops the reaper and unregisters the backend.
pub fn exit() {
    // Test-only (serve_pause_ms): a serve request may run meanwhile.
    // SAFETY: sleeps; no lock is held.
    unsafe { shim::rslub_shim_serve_pause(true) };
    // SAFETY: waits for a reaper run; none is scheduled after this.
    unsafe { shim::rslub_shim_reap_cancel() };
    if BACKEND.swap(false, Ordering::Relaxed) {
        // SAFETY: registered in `init`; no cache is served.
        unsafe { shim::rslub_shim_backend_unregister() };
    }
}

fn why_no_backend(err: c_int) -> &'static str {
    if err == EOPNOTSUPP.to_errno() {
        "this kernel has no slab backend hook (CONFIG_SLAB_BACKEND, patches/)"
    } else {
        "another slab backend is registered"
    }
}

fn show(b: &[u8]) -> &str {
    core::str::from_utf8(b).unwrap_or("<non-utf8>")
}

/// Shell-style match of `name` against `pat` (`*` and `?`).
fn glob(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it matched up to.
    let mut star = None;
    while n < name.len() {
        if p < pat.len() && (pat[p] == b'?' || pat[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// Applies a list of requests (comma, space or newline separated): `NAME`
/// or a glob starts serving, `-NAME` or `-GLOB` stops. The first error is
/// returned; every request is tried.
fn apply(list: &[u8]) -> Result {
    let mut res = Ok(());
    for req in list
        .split(|&b| b == b',' || b.is_ascii_whitespace())
        .filter(|r| !r.is_empty())
    {
        let r = match req.strip_prefix(b"-") {
            Some(pat) => stop(pat),
            None => start(req),
        };
        if res.is_ok() {
            res = r;
        }
    }
    res
}

/// A kernel cache `start` found, as the kernel described it.
struct Candidate {
    s: *mut c_void,
    /// The kernel's id for `s`, checked again when serving.
    id: u64,
    name: [u8; NAME_MAX],
    len: usize,
    object_size: c_uint,
    align: c_uint,
    /// The kernel cache's `SLAB_TYPESAFE_BY_RCU`, the one flag its rslub
    /// cache takes over.
    typesafe_rcu: c_uint,
    ctor: Option<unsafe extern "C" fn(*mut c_void)>,
    /// Where a free object may hold the free pointer inside the object.
    freeptr: Option<usize>,
    /// A kernel string constant, or null.
    refused: *const c_char,
}

/// What `rslub_rust_serve_candidate` fills.
struct Listing<'a> {
    pat: &'a [u8],
    found: KVec<Candidate>,
    /// Names too long for rslub, or no memory for the list.
    failed: bool,
}

/// Called by the kernel for each of its caches (under its slab_mutex):
/// collects those `arg`'s pattern names.
///
/// # Safety
/// `arg` is the `Listing` of a running `start`; `name` a NUL-terminated
/// string; `refused` null or one.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_serve_candidate(
    arg: *mut c_void,
    s: *mut c_void,
    id: c_ulonglong,
    name: *const c_char,
    object_size: c_uint,
    align: c_uint,
    flags: c_uint,
    ctor: Option<unsafe extern "C" fn(*mut c_void)>,
    freeptr_offset: c_uint,
    _useroffset: c_uint,
    _usersize: c_uint,
    refused: *const c_char,
) -> c_int {
    // SAFETY: per the caller.
    let l = unsafe { &mut *arg.cast::<Listing<'_>>() };
    // SAFETY: per the caller, a NUL-terminated string.
    let full = unsafe { CStr::from_char_ptr(name) }.to_bytes();
    if !glob(l.pat, full) {
        return 0;
    }
    let mut c = Candidate {
        s,
        id,
        name: [0; NAME_MAX],
        len: full.len().min(NAME_MAX),
        object_size,
        align,
        typesafe_rcu: flags & crate::consts().flag_typesafe_by_rcu,
        ctor,
        freeptr: (freeptr_offset != c_uint::MAX).then_some(freeptr_offset as usize),
        refused,
    };
    c.name[..c.len].copy_from_slice(&full[..c.len]);
    // rslub's own limits, after the kernel's reason if it has one.
    if c.refused.is_null() && full.len() > NAME_MAX {
        c.refused = c"its name is longer than RSLUB_NAME_MAX".as_char_ptr();
    }
    if c.refused.is_null() && object_size as usize > crate::api::MAX_OBJECT_SIZE {
        c.refused = c"objects larger than RSLUB_MAX_OBJECT_SIZE".as_char_ptr();
    }
    // Red zones and poison move rslub's object layout away from SLUB's,
    // by which the kernel still writes served objects (init_on_free, the
    // free pointer of a constructor cache, a merged alias's size).
    if c.refused.is_null() && crate::consts().debug_default != 0 {
        c.refused = c"rslub's debug= is set (the kernel writes served objects by SLUB's layout)"
            .as_char_ptr();
    }
    // Under the kernel's slab_mutex: an atomic allocation, no reclaim.
    if l.found.push(c, GFP_ATOMIC).is_err() {
        l.failed = true;
        return 1;
    }
    0
}

/// Starts serving the caches `pat` names.
fn start(pat: &[u8]) -> Result {
    if !BACKEND.load(Ordering::Relaxed) {
        pr_err!(
            "serve {}: {}\n",
            show(pat),
            why_no_backend(EOPNOTSUPP.to_errno())
        );
        return Err(EOPNOTSUPP);
    }
    let mut l = Listing {
        pat,
        found: KVec::new(),
        failed: false,
    };
    // SAFETY: `l` outlives the call, which hands it back to
    // `rslub_rust_serve_candidate` only.
    unsafe { shim::rslub_shim_backend_list(ptr::from_mut(&mut l).cast()) };
    if l.failed {
        pr_err!("serve {}: out of memory listing the caches\n", show(pat));
        return Err(ENOMEM);
    }
    if l.found.is_empty() {
        pr_err!("serve {}: no kernel cache has this name\n", show(pat));
        return Err(ENOENT);
    }
    // Test-only (rslub_test_set_serve_pause): the gap between listing and
    // serving, where a listed cache may be destroyed.
    // SAFETY: sleeps or calls a test's function; no lock is held.
    unsafe { shim::rslub_shim_serve_pause(false) };
    let mut res = Ok(());
    let mut list = SERVED.lock();
    for c in l.found.iter() {
        let name = &c.name[..c.len];
        if !c.refused.is_null() {
            // SAFETY: a NUL-terminated kernel string constant.
            let why = unsafe { CStr::from_char_ptr(c.refused) };
            pr_info!(
                "serve {}: refused: {}\n",
                show(name),
                why.to_str().unwrap_or("?")
            );
            // A glob skips what cannot be served; a name asked for fails.
            if pat == name {
                res = Err(EINVAL);
            }
            continue;
        }
        if let Err(e) = serve_one(&mut list, c) {
            res = Err(e);
        }
    }
    res
}

/// Serves `c`: again if it drains, else with a new rslub cache.
fn serve_one(list: &mut ServedList, c: &Candidate) -> Result {
    let name = &c.name[..c.len];
    if let Some(e) = list.0.iter_mut().find(|e| e.s == c.s && e.id == c.id) {
        if e.serving {
            return Ok(());
        }
        // A kept cache left rslub's registry if its destroy failed (no
        // CPU-dead flush, no shrinker), and holds an isolated slab if not:
        // neither serves again.
        if e.kept {
            pr_err!(
                "serve {}: rslub keeps its cache of this name for good (a reported corruption or a failed destroy); not served again\n",
                show(name)
            );
            return Err(EBUSY);
        }
        // SAFETY: `e.s` is a live kernel cache (destroying it tells us
        // first) and `e.cache` its rslub cache.
        let err = unsafe { shim::rslub_shim_backend_serve(e.s, e.id, e.cache.cast()) };
        if err != 0 {
            pr_err!("serve {}: the kernel refused ({})\n", show(name), err);
            return Err(Error::from_errno(err));
        }
        // INVARIANT: the kernel took one more serve, for `drained` to
        // match, and sends new allocations to `e.cache` again.
        e.serving = true;
        e.serves += 1;
        pr_info!("serve {}: serving again\n", show(name));
        return Ok(());
    }
    if let Some(e) = list.0.iter().find(|e| {
        // SAFETY: `e.cache` is live while listed.
        unsafe { (*e.cache).name() == name }
    }) {
        // SAFETY: as above.
        let left = unsafe { (*e.cache).totals().live_objects };
        pr_err!(
            "serve {}: rslub still drains its cache of this name, made for a kernel cache destroyed since ({} objects out); not served\n",
            show(name),
            left
        );
        return Err(EEXIST);
    }
    // The first served cache holds rslub's own module, taken before
    // anything is made: a module being unloaded serves nothing (its
    // unload may already have passed the point where it waits for the
    // served caches).
    let first = list.0.is_empty();
    // SAFETY: matched by a put when the list empties, or below.
    if first && !unsafe { shim::rslub_shim_module_tryget() } {
        pr_err!(
            "serve {}: rslub is being unloaded; not served\n",
            show(name)
        );
        return Err(ENODEV);
    }
    let res = serve_new(list, c, name);
    if res.is_err() && first {
        // SAFETY: the reference taken above, unused.
        unsafe { shim::rslub_shim_module_put() };
    }
    res
}

/// `serve_one` for a cache rslub does not serve yet: a new rslub cache.
fn serve_new(list: &mut ServedList, c: &Candidate, name: &[u8]) -> Result {
    let mut cname = [0u8; NAME_MAX + 1];
    cname[..name.len()].copy_from_slice(name);
    // rslub's own memory for the cache (the list's slot, the cache, its
    // sysfs directory) comes from SLUB, not from a served cache: it lives
    // as long as the cache, which could then never drain.
    let one = INTERNAL.lock();
    internal(true);
    let cache = list.0.reserve(1, GFP_KERNEL).map(|()| {
        // SAFETY: `cname` is NUL-terminated; the kernel cache's
        // constructor accepts any of its objects, which rslub's are.
        unsafe {
            create_cache(
                cname.as_ptr().cast(),
                c.object_size,
                c.align,
                c.typesafe_rcu,
                c.ctor,
                true,
                c.freeptr,
            )
        }
    });
    internal(false);
    drop(one);
    let cache = cache?;
    // An ERR_PTR (the last page of the address space): create said why.
    if cache.is_null() || cache as usize >= (-4095isize) as usize {
        return Err(Error::from_errno(cache as isize as c_int));
    }
    // SAFETY: just created (as served: its slab headers are in its slabs),
    // so no slab yet; `c.s` is a live kernel cache,
    // and stays so while it has objects of ours (it is destroyed only
    // once they are freed, and tells us first).
    unsafe { (*cache).set_page_owner(c.s) };
    // SAFETY: `c.s` is a kernel cache the kernel listed just now (it
    // checks again, under its slab_mutex, that the cache at `c.s` is the
    // one it listed as `c.id`) and `cache` is ours.
    let err = unsafe { shim::rslub_shim_backend_serve(c.s, c.id, cache.cast()) };
    if err != 0 {
        // SAFETY: unused and unpublished.
        unsafe { rslub_cache_destroy(cache) };
        if err == ESTALE.to_errno() {
            pr_err!(
                "serve {}: the kernel cache was destroyed and another made at its address while rslub prepared to serve it; not served (try again)\n",
                show(name)
            );
            return Err(EAGAIN);
        }
        pr_err!("serve {}: the kernel refused ({})\n", show(name), err);
        return Err(Error::from_errno(err));
    }
    // INVARIANT: `cache` was made for `c.s` alone and the kernel took the
    // serve: one serve to match; `serve_one` found no entry of this
    // `(s, id)` or of this name.
    // Reserved above.
    let _ = list.0.push(
        Served {
            s: c.s,
            id: c.id,
            cache,
            serving: true,
            serves: 1,
            kept: false,
        },
        GFP_KERNEL,
    );
    // SAFETY: `cache` is live.
    let c = unsafe { &*cache };
    pr_info!(
        "serve {}: serving ({} B objects, {} a slab of order {})\n",
        show(name),
        c.layout.object_size,
        c.layout.objects,
        c.layout.order
    );
    Ok(())
}

/// Stops new allocations from the caches `pat` names; they drain.
fn stop(pat: &[u8]) -> Result {
    let mut list = SERVED.lock();
    let mut n = 0;
    for e in list.0.iter_mut() {
        // SAFETY: `e.cache` is live while listed.
        if e.serving && glob(pat, unsafe { (*e.cache).name() }) {
            // SAFETY: `e.s` is live while listed.
            unsafe { shim::rslub_shim_backend_unserve(e.s) };
            // INVARIANT: unserved, then the CPUs flushed once.
            e.serving = false;
            // SAFETY: as above.
            flush_once(unsafe { &*e.cache });
            n += 1;
        }
    }
    if n == 0 {
        pr_err!("serve -{}: no served cache has this name\n", show(pat));
        return Err(ENOENT);
    }
    reap_locked(&mut list);
    Ok(())
}

/// Marks `e` kept for good when its cache holds an isolated slab (a
/// corruption was reported: the kernel may still hold objects of it).
fn keep_isolated(e: &mut Served, cache: &Cache) -> bool {
    if cache.isolated_slabs() == 0 {
        return false;
    }
    pr_err!(
        "serve {}: {} isolated slabs (a corruption was reported): the cache is kept and rslub stays loaded\n",
        cache.name_str(),
        cache.isolated_slabs()
    );
    // INVARIANT: `reap_locked`, the one caller, asks only for entries that
    // no longer serve, and nothing clears `kept`.
    e.kept = true;
    true
}

/// Serving of `cache` just stopped (allocations in flight are done): its
/// CPUs' slabs go to the node lists once, where the reaper's count and
/// the shrinker see them. Only frees follow, which never make a CPU slab.
fn flush_once(cache: &Cache) {
    cache.flush_all();
}

/// Destroys the draining caches whose objects are all back, and schedules
/// the next look (`Reaper`) while some drain. A cache with an isolated
/// slab is kept for good: the kernel may still hold objects of that slab
/// and free them (to rslub, through the cache), so neither may go.
fn reap_locked(list: &mut ServedList) {
    let mut out = 0usize;
    let mut i = 0;
    while i < list.0.len() {
        let e = &mut list.0[i];
        // SAFETY: `e.cache` is live while listed.
        let cache = unsafe { &*e.cache };
        if e.serving || e.kept || keep_isolated(e, cache) {
            i += 1;
            continue;
        }
        // Counted where the objects are; no CPU is disturbed.
        let live = cache.totals().live_objects;
        if live != 0 {
            out += live;
            i += 1;
            continue;
        }
        // All back: the slabs frees put on CPU partial lists since the
        // stop go to the node lists, where destroy frees them.
        cache.flush_all();
        // No allocation is in flight (unserved); this waits for the frees
        // in flight, the last of which may still be in rslub.
        // SAFETY: `e.s` is live (or kept by the kernel) while listed.
        unsafe { shim::rslub_shim_backend_unserve(e.s) };
        // A free in flight may have isolated a slab meanwhile: then the
        // kernel may still hold objects of it, and the cache is kept.
        if keep_isolated(e, cache) {
            i += 1;
            continue;
        }
        // INVARIANT: unserved, every object back, no isolated slab: the
        // entry goes, then the kernel's serves are matched, then its cache.
        let Ok(e) = list.0.remove(i) else { break };
        // The kernel lets go of rslub's cache before it goes: from here on
        // no free can reach it through `s->backend_cache`.
        for _ in 0..e.serves {
            // SAFETY: one per `slab_backend_serve` of this cache, whose
            // objects are all back.
            unsafe { shim::rslub_shim_backend_drained(e.s) };
        }
        // SAFETY: unserved, drained and let go by the kernel: no call on
        // it runs or follows. A failed destroy (objects came back to
        // life: a corruption) leaks the cache and says so.
        unsafe { rslub_cache_destroy(e.cache) };
        if list.0.is_empty() {
            // SAFETY: the reference taken for the first served cache.
            unsafe { shim::rslub_shim_module_put() };
        }
    }
    schedule_reap(list, out);
}

/// The next look of the reaper, after one that found `out` objects out
/// over the draining caches: a second after progress, twice the last
/// interval without, none after `REAP_IDLE_LOOKS` looks without (the
/// reaper sleeps, saying why, until `wake_reaper`).
fn schedule_reap(list: &ServedList, out: usize) {
    let mut r = REAPER.lock();
    if !list.0.iter().any(|e| !e.serving && !e.kept) {
        *r = Reaper {
            next_ms: REAP_MS,
            idle: 0,
            last_out: usize::MAX,
        };
        REAPER_ASLEEP.store(false, Ordering::Relaxed);
        return;
    }
    if out < r.last_out {
        r.next_ms = REAP_MS;
        r.idle = 0;
    } else {
        r.idle += 1;
        r.next_ms = r.next_ms.saturating_mul(2);
    }
    r.last_out = out;
    if r.idle >= REAP_IDLE_LOOKS {
        r.next_ms = REAP_MS;
        r.idle = 0;
        r.last_out = usize::MAX;
        REAPER_ASLEEP.store(true, Ordering::Relaxed);
        report_asleep(list, out);
        return;
    }
    REAPER_ASLEEP.store(false, Ordering::Relaxed);
    // SAFETY: the work only calls `rslub_rust_serve_reap`.
    unsafe { shim::rslub_shim_reap_schedule(r.next_ms) };
}

/// The reaper goes to sleep: one line naming what the kernel keeps.
fn report_asleep(list: &ServedList, out: usize) {
    let mut words = [0u8; 400];
    let mut names = control::Page {
        buf: &mut words,
        len: 0,
    };
    for e in list.0.iter().filter(|e| !e.serving && !e.kept) {
        // SAFETY: `e.cache` is live while listed.
        let c = unsafe { &*e.cache };
        if write!(names, " {}({})", c.name_str(), c.totals().live_objects).is_err() {
            let _ = write!(names, " ...");
            break;
        }
    }
    pr_info!(
        "serve: the reaper sleeps: {} objects of draining caches are still out (the kernel keeps them):{}; memory pressure or a write to /sys/kernel/rslub/serve wakes it\n",
        out,
        names.as_str()
    );
}

/// Wakes the sleeping reaper for a look (memory pressure: rslub's shrinker
/// was asked for its count). Cheap when it is not asleep.
pub fn wake_reaper() {
    if REAPER_ASLEEP.load(Ordering::Relaxed) && REAPER_ASLEEP.swap(false, Ordering::Relaxed) {
        // SAFETY: the work only calls `rslub_rust_serve_reap`; a sleeping
        // reaper means caches drain, so rslub holds its module and is not
        // being unloaded.
        unsafe { shim::rslub_shim_reap_schedule(REAP_MS) };
    }
}

/// Runs `f` with the running task's allocations from served caches made
/// by SLUB (`hooks::internal`): for rslub's own memory that lives as long
/// as one of its caches.
pub fn unserved<T>(f: impl FnOnce() -> T) -> T {
    // Not `SERVED`: a sysfs write (which comes here) may run while the
    // reaper, under `SERVED`, removes that cache's directory and waits for
    // the write.
    let _one = INTERNAL.lock();
    internal(true);
    let r = f();
    internal(false);
    r
}

/// The reaper's work item.
#[no_mangle]
pub extern "C" fn rslub_rust_serve_reap() {
    reap_locked(&mut SERVED.lock());
}

/// The kernel is destroying its cache `s` (the last user let it go): if
/// rslub serves it, serving stops and the rslub cache goes if it is empty.
/// Nonzero (`-EBUSY`) when objects rslub served are still allocated: the
/// kernel then keeps `s`, as SLUB keeps a cache with objects, and warns;
/// the objects still come back here and the cache drains as usual.
///
/// # Safety
/// `s` is a live kernel cache.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_served_destroy(s: *mut c_void) -> c_int {
    let mut list = SERVED.lock();
    let Some(e) = list.0.iter_mut().find(|e| e.s == s) else {
        return 0;
    };
    if e.serving {
        // SAFETY: `s` is live.
        unsafe { shim::rslub_shim_backend_unserve(s) };
        // INVARIANT: as in `stop`: unserved, then flushed once.
        e.serving = false;
        // SAFETY: `e.cache` is live while listed.
        flush_once(unsafe { &*e.cache });
    }
    reap_locked(&mut list);
    let Some(e) = list.0.iter_mut().find(|e| e.s == s) else {
        return 0;
    };
    // SAFETY: `e.cache` is live while listed.
    let c = unsafe { &*e.cache };
    if e.kept {
        pr_err!(
            "serve {}: the kernel cache is destroyed while rslub keeps its cache for good; the kernel keeps it too\n",
            c.name_str()
        );
    } else {
        pr_err!(
            "serve {}: the kernel cache is destroyed with {} rslub objects still allocated; the kernel keeps it until they are freed\n",
            c.name_str(),
            c.totals().live_objects
        );
    }
    EBUSY.to_errno()
}
