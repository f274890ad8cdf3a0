// SPDX-License-Identifier: GPL-2.0
//! `validate`: every listed slab checked under its node's list_lock;
//! each damaged slab reported once and isolated.

use super::report::Problem;
use super::Cache;
use crate::debug;
use crate::platform::Platform;
use crate::slab::{free_pointer_ok, get_free_pointer, inuse, SlabHeader, FROZEN};
use core::ptr;

/// The node list a slab is found on.
#[derive(Clone, Copy)]
pub(super) enum ListKind {
    Partial,
    Empty,
    Full,
}

impl<P: Platform> Cache<P> {
    /// Checks every slab: counters within bounds, the frozen bit clear, the
    /// slab's freelist consistent with its counters (each free pointer an
    /// object start of the slab); in debug caches also every object's red
    /// zones and poison. CPUs are flushed first (so CPU slabs are checked
    /// too; sleeps). Each damaged slab is reported once and isolated.
    /// Returns how many problems were reported meanwhile (the rise of
    /// `errors`, so concurrent bad frees count too).
    pub fn validate(&self) -> usize {
        let errors = self.errors();
        // Flushing checks the CPU freelists (deactivate_slab follows them).
        self.flush_all();
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let mut lists = P::node_lock(&node.lists);
            for kind in [ListKind::Partial, ListKind::Empty, ListKind::Full] {
                let mut cur = match kind {
                    ListKind::Partial => lists.partial.first(),
                    ListKind::Empty => lists.empty.first(),
                    ListKind::Full => lists.full.first(),
                };
                while !cur.is_null() {
                    // SAFETY: members of a node list, under its list_lock;
                    // frees may still push onto a non-debug slab's
                    // freelist, which only makes `free` grow.
                    let (found, next) = unsafe { (self.check_slab(cur, kind), (*cur).next) };
                    if let Some(p) = found {
                        // SAFETY: a listed slab; `check_slab` names only
                        // object starts it checked.
                        unsafe { self.report_problem(cur, p, "validate") };
                        // SAFETY: `cur` is on that list, under list_lock.
                        let intact = unsafe {
                            match kind {
                                ListKind::Partial => self.remove_partial(node, &mut lists, cur),
                                ListKind::Empty => self.unlink(&mut lists.empty, "empty", cur),
                                ListKind::Full => self.unlink(&mut lists.full, "full", cur),
                            }
                        };
                        // SAFETY: live (`NodeLists` invariant), off the list now.
                        unsafe { self.isolate(cur) };
                        if !intact {
                            // The list forgot its slabs: `next` was read
                            // from links it does not trust.
                            break;
                        }
                    }
                    cur = next;
                }
            }
        }
        if let Some(fb) = self.fallback() {
            fb.validate();
        }
        // `errors` counts the fallback's too.
        self.errors().saturating_sub(errors)
    }

    /// One slab's first problem, if any.
    ///
    /// # Safety
    /// `slab` is on a node list of kind `kind` whose lock the caller holds.
    unsafe fn check_slab(&self, slab: *mut SlabHeader, kind: ListKind) -> Option<Problem> {
        // SAFETY: per the caller.
        let h = unsafe { &*slab };
        let l = &self.layout;
        if !h.is_live_with(self.slab_secret) {
            return Some(Problem::Slab("header magic does not match this cache"));
        }
        let [head, counters] = h.read_pair();
        if counters & FROZEN != 0 {
            return Some(Problem::Slab("frozen slab on a node list"));
        }
        let used = inuse(counters) as usize;
        let bad_count = match kind {
            ListKind::Partial => used >= l.objects,
            ListKind::Empty => used != 0,
            ListKind::Full => used != l.objects || head != 0,
        };
        if used > l.objects || bad_count {
            return Some(Problem::Slab("inuse out of range for the list it is on"));
        }
        let mut free = 0;
        let mut is_free = [0u64; 64];
        let mut prev: *const u8 = ptr::null();
        let mut cur = head as *const u8;
        // SAFETY: per the caller.
        let base = unsafe { self.base_of(slab) };
        while !cur.is_null() {
            if !free_pointer_ok(cur, base, l) {
                return Some(Problem::FreePointer {
                    from: prev,
                    bad: cur,
                });
            }
            free += 1;
            if free > l.objects {
                return Some(Problem::Slab("freelist longer than the slab (a cycle)"));
            }
            let idx = l.object_index(cur as usize - base).unwrap_or(0);
            if let Some(w) = is_free.get_mut(idx / 64) {
                *w |= 1 << (idx % 64);
            }
            prev = cur;
            // SAFETY: `cur` was checked to be an object start of this slab.
            cur = unsafe { get_free_pointer(cur, l) };
        }
        if free + used < l.objects || (self.debug != 0 && free + used != l.objects) {
            return Some(Problem::Slab(
                "free objects plus inuse differ from the slab's objects",
            ));
        }
        if self.debug == 0 {
            return None;
        }
        for idx in 0..l.objects.min(64 * 64) {
            let obj = (base + l.object_offset(idx)) as *const u8;
            let free = is_free[idx / 64] & (1 << (idx % 64)) != 0;
            let rz = if free {
                debug::RED_INACTIVE
            } else {
                debug::RED_ACTIVE
            };
            // SAFETY: `obj` is an object start of the live slab.
            let damage = unsafe {
                debug::check_red_zones(obj, l, rz).or_else(|| {
                    if free && self.poisoned {
                        debug::check_poison(obj, l)
                    } else {
                        None
                    }
                })
            };
            if let Some(damage) = damage {
                return Some(Problem::Object { obj, damage, free });
            }
        }
        None
    }
}
