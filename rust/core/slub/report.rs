// SPDX-License-Identifier: GPL-2.0
//! Reports of bad frees and corruption, and the isolation of a damaged
//! slab.

use super::Cache;
use crate::debug;
use crate::debug::Damage;
use crate::platform::Platform;
use crate::slab::{inuse, BrokenList, FreeError, SlabHeader, FROZEN};
use core::convert::Infallible;
use core::sync::atomic::Ordering;

/// A corruption found in a slab.
pub(super) enum Problem {
    /// Slab-level: header or counters.
    Slab(&'static str),
    /// A free pointer `bad` read from object `from` (null: the head).
    FreePointer { from: *const u8, bad: *const u8 },
    /// Damaged bytes of an object.
    Object {
        obj: *const u8,
        damage: Damage,
        free: bool,
    },
    /// An object that is already free, freed again.
    DoubleFree(*const u8),
}

/// Refused frees of a cache logged one by one before the log thins out
/// (`Cache::report`).
pub const REPORTS_IN_FULL: usize = 10;

impl<P: Platform> Cache<P> {
    /// Reports a free pointer `bad` that is not an object start of `slab`,
    /// read from object `from` (null: the freelist head itself).
    ///
    /// # Safety
    /// `slab` is a slab of this cache (its memory mapped) and `from`, when
    /// not null, an object start of it.
    pub(super) unsafe fn report_free_pointer(
        &self,
        slab: *mut SlabHeader,
        from: *const u8,
        bad: *const u8,
    ) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        P::report(format_args!(
            "cache {}: freelist corrupted in slab {:p}: free pointer {:p}{} is not an object of the slab",
            self.name_str(),
            // SAFETY: per the caller, a slab of this cache.
            unsafe { self.base_of(slab) } as *const u8,
            bad,
            if from.is_null() { " (the freelist head)" } else { "" },
        ));
        if !from.is_null() {
            let at = self.layout.free_offset as isize;
            P::report(format_args!(
                "  read from free object {:p} at offset {} (stored word, hardened {})",
                from,
                at,
                u8::from(self.layout.hardened())
            ));
            // SAFETY: per the caller, `from` is an object start of `slab`.
            unsafe { self.dump(from, at) };
        }
        P::report(format_args!(
            "  slab isolated: the rest of that freelist is dropped, its objects never handed out again"
        ));
    }

    /// Prints up to 32 bytes of `obj`'s slot around object offset `at`.
    ///
    /// # Safety
    /// `obj` is an object start of a slab of this cache.
    unsafe fn dump(&self, obj: *const u8, at: isize) {
        P::checkers_off(true);
        // SAFETY: per the caller.
        let (start, n, buf) = unsafe { debug::dump_window(obj, &self.layout, at) };
        P::checkers_off(false);
        let mut off = start;
        for line in buf[..n].chunks(16) {
            P::report(format_args!(
                "  {:p} (object{:+}): {}",
                obj.wrapping_offset(off),
                off,
                debug::Hex(line)
            ));
            off += 16;
        }
    }

    /// Takes a slab out of service after corruption: it is frozen (so frees
    /// only push onto its freelist and never list it), marked isolated (so
    /// later frees of its objects are ignored) and forgotten by its node.
    /// Its memory stays allocated; nothing is handed out from it again.
    ///
    /// # Safety
    /// `slab` is a live slab of this cache that the caller has taken off
    /// every list (or that is on none).
    pub(super) unsafe fn isolate(&self, slab: *mut SlabHeader) {
        // SAFETY: per the caller, the slab is live.
        let Ok(_) = unsafe {
            self.update_pair(slab, |[fl, counters]| {
                Ok::<_, Infallible>([fl, counters | FROZEN])
            })
        };
        // SAFETY: per the caller, off every list.
        unsafe { SlabHeader::mark_isolated(slab, self.slab_secret, self.base_of(slab)) };
        // SAFETY: a header field written at slab creation.
        let nid = unsafe { (*slab).node() };
        // INVARIANT: isolated slabs are frozen, marked, on no list, and
        // counted in `isolated` instead of by their node.
        self.node(nid).nr_slabs.fetch_sub(1, Ordering::Relaxed);
        self.isolated.fetch_add(1, Ordering::Relaxed);
    }

    /// Reports a refused free of `obj`: counted in `errors`, and one log
    /// line for the cache's first `REPORTS_IN_FULL` errors, then only for
    /// the errors whose number is a power of two, so that a caller freeing
    /// bad pointers in a loop leaves a log of O(log n) lines (the in-tree
    /// SLUB warns once).
    #[cold]
    #[inline(never)]
    pub(super) fn report(&self, obj: *const u8, e: FreeError) {
        if e == FreeError::Isolated {
            // Its slab was reported when it was isolated.
            return;
        }
        let n = self.errors.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= REPORTS_IN_FULL {
            P::report(format_args!(
                "cache {}: free of {:p}: {}; ignored",
                self.name_str(),
                obj,
                e.describe()
            ));
        } else if n.is_power_of_two() {
            P::report(format_args!(
                "cache {}: free of {:p}: {}; ignored (error {}; only errors numbered by a power of two are logged now)",
                self.name_str(),
                obj,
                e.describe(),
                n
            ));
        }
    }

    /// Reports and counts a second free of `obj` that the caller found by
    /// its own means (KASAN's shadow, on a debug kernel: rust/api.rs); the
    /// caller frees nothing.
    pub fn report_double_free(&self, obj: *const u8) {
        self.report(obj, FreeError::DoubleFree);
    }

    /// Reports the node `nid` list `list` found with links that do not
    /// agree, and counts an error. The list has already forgotten its slabs
    /// (`SlabList::remove`): they stay allocated, out of use, and `destroy`
    /// leaks them.
    #[cold]
    #[inline(never)]
    pub(super) fn report_broken_list(&self, nid: i32, list: &str, b: BrokenList) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        P::report(format_args!(
            "cache {}: node {} {} list corrupted: the links of slab {:p} do not agree with its neighbours' (an overwritten header?); its {} slabs are dropped from it and leaked",
            self.name_str(),
            nid,
            list,
            b.at,
            b.lost
        ));
    }

    /// The slab of a `SlabList::pop_front`, or null once its broken list
    /// is reported.
    pub(super) fn popped(
        &self,
        nid: i32,
        list: &str,
        r: Result<*mut SlabHeader, BrokenList>,
    ) -> *mut SlabHeader {
        r.unwrap_or_else(|b| {
            self.report_broken_list(nid, list, b);
            core::ptr::null_mut()
        })
    }

    /// Prints one report for `p` found in `slab` during `when`, and counts
    /// an error.
    ///
    /// # Safety
    /// `slab` is a slab of this cache (its memory mapped), and the objects
    /// `p` names are object starts of it.
    pub(super) unsafe fn report_problem(&self, slab: *mut SlabHeader, p: Problem, when: &str) {
        let l = &self.layout;
        // SAFETY: per the caller, a slab of this cache. The slab's address
        // in the reports, and what object indices are counted from.
        let base = unsafe { self.base_of(slab) };
        match p {
            // SAFETY: per the caller.
            Problem::FreePointer { from, bad } => unsafe {
                self.report_free_pointer(slab, from, bad)
            },
            Problem::Slab(why) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                // SAFETY: per the caller, the slab's memory is mapped.
                let [fl, counters] = unsafe { (*slab).read_pair() };
                P::report(format_args!(
                    "cache {}: slab {:p} found on {}: {} (inuse {}, objects {}, freelist {:#x}); slab isolated",
                    self.name_str(),
                    base as *const u8,
                    when,
                    why,
                    inuse(counters),
                    l.objects,
                    fl
                ));
            }
            Problem::DoubleFree(obj) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                P::report(format_args!(
                    "cache {}: double free of object {:p} (slab {:p}, index {}); ignored",
                    self.name_str(),
                    obj,
                    base as *const u8,
                    l.object_index(obj as usize - base).unwrap_or(0)
                ));
                self.report_owners(obj);
            }
            Problem::Object { obj, damage, free } => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                P::report(format_args!(
                    "cache {}: {} overwritten in {} object {:p} (slab {:p}, index {}), found on {}",
                    self.name_str(),
                    damage.what,
                    if free { "free" } else { "allocated" },
                    obj,
                    base as *const u8,
                    l.object_index(obj as usize - base).unwrap_or(0),
                    when
                ));
                P::report(format_args!(
                    "  at offset {} (object size {}): expected {:#04x}, found {:#04x}; {} bytes from the first to the last bad one",
                    damage.offset, l.object_size, damage.expected, damage.found, damage.len
                ));
                // SAFETY: per the caller, `obj` is an object start of the slab.
                unsafe { self.dump(obj, damage.offset) };
                self.report_owners(obj);
                P::report(format_args!(
                    "  slab isolated: its objects are never handed out again"
                ));
            }
        }
    }

    /// Prints the owner records of `obj`, if the cache keeps them.
    pub(super) fn report_owners(&self, obj: *const u8) {
        let now = P::jiffies();
        for (free, what) in [(false, "allocated"), (true, "freed")] {
            // SAFETY: `obj` is an object start of a slab of this cache.
            if let Some(t) = unsafe { debug::get_track(obj, &self.layout, free) } {
                let mut sym = [0u8; 128];
                let n = P::format_symbol(t.addr, &mut sym);
                P::report(format_args!(
                    "  last {} by {} on CPU {} pid {} at jiffies {} ({} ago)",
                    what,
                    core::str::from_utf8(&sym[..n]).unwrap_or("?"),
                    t.cpu(),
                    t.pid(),
                    t.when,
                    now.wrapping_sub(t.when)
                ));
            }
        }
    }
}
