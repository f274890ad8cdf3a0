// SPDX-License-Identifier: GPL-2.0
//! The paths of debug caches, one object at a time under the node's
//! list_lock.
//!
//! Debug caches have no CPU slabs, CPU partial lists or lockless paths:
//! every allocation and free takes the node's list_lock and checks the
//! object (upstream does the same for `kmem_cache_debug` caches). Their
//! slabs are never frozen; a slab with free objects is on the node's
//! partial list, a full one on its full list (*debug full*), so `validate`
//! sees all.

use super::report::Problem;
use super::{Cache, Discards, Node, NodeLists};
use crate::debug::{self, Track};
use crate::platform::Platform;
use crate::slab::{
    free_pointer_ok, get_free_pointer, inuse, set_free_pointer, FreeError, SlabHeader, FROZEN,
};
use crate::stat::Stat;
use core::convert::Infallible;
use core::ptr;

impl<P: Platform> Cache<P> {
    fn owner_track(&self) -> Track {
        Track {
            addr: P::api_caller(),
            when: P::jiffies(),
            cpu_pid: P::current_cpu() as usize | ((P::current_pid() as u32 as usize) << 32),
        }
    }

    pub(super) fn debug_alloc(&self, gfp: u32, node: i32) -> *mut u8 {
        let track = if self.layout.store_user() {
            self.owner_track()
        } else {
            Track::default()
        };
        self.stat(Stat::AllocSlowpath);
        let order = self.node_order(node);
        loop {
            for nid in order {
                if (nid as usize) >= self.nr_nodes {
                    continue;
                }
                let nd = self.node(nid);
                let mut lists = P::node_lock(&nd.lists);
                loop {
                    let slab = lists.partial.first();
                    if slab.is_null() {
                        break;
                    }
                    // SAFETY: `slab` heads the node's partial list.
                    if let Some(obj) = unsafe { self.debug_take(nd, &mut lists, slab, &track) } {
                        return obj;
                    }
                }
            }
            // No partial slab: an empty cached one, else new pages.
            let mut slab = ptr::null_mut();
            for nid in order {
                slab = self.take_empty(nid);
                if !slab.is_null() {
                    self.stat(Stat::EmptyCacheHit);
                    break;
                }
            }
            if slab.is_null() {
                slab = self.new_slab(gfp, node);
                if slab.is_null() {
                    return ptr::null_mut();
                }
                self.stat(Stat::AllocSlab);
            }
            // SAFETY: a private slab; its node id is in range.
            let nd = self.node(unsafe { (*slab).node() });
            let mut lists = P::node_lock(&nd.lists);
            // SAFETY: a live, unfrozen, private slab of this node, then on
            // its partial list.
            unsafe {
                Self::add_partial(nd, &mut lists, slab, false);
                if let Some(obj) = self.debug_take(nd, &mut lists, slab, &track) {
                    return obj;
                }
            }
        }
    }

    /// Takes the first free object of `slab` (on `node`'s partial list,
    /// list_lock held) after checking the slab and the object. On damage
    /// the slab is reported, taken off the list and isolated: None.
    ///
    /// # Safety
    /// `slab` is on `lists.partial`, the partial list of `node`.
    unsafe fn debug_take(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        t: &Track,
    ) -> Option<*mut u8> {
        let l = &self.layout;
        // SAFETY: per the caller the slab is listed, so live (`NodeLists`
        // invariant); a debug slab's pair changes only under the node lock.
        let [fl, counters] = unsafe { (*slab).read_pair() };
        let obj = fl as *mut u8;
        let used = inuse(counters) as usize;
        // SAFETY: as above.
        let base = unsafe { self.base_of(slab) };
        let mut next = ptr::null_mut();
        // SAFETY: the slab is on a node list, so live (the magic is checked
        // first); `obj` is read only once it is known to be an object start.
        let problem = unsafe {
            if !(*slab).is_live_with(self.slab_secret) {
                Some(Problem::Slab("header magic does not match this cache"))
            } else if fl == 0 || used >= l.objects || counters & FROZEN != 0 {
                Some(Problem::Slab(
                    "counters say full or frozen, but the slab is on the partial list",
                ))
            } else if !free_pointer_ok(obj, base, l) {
                Some(Problem::FreePointer {
                    from: ptr::null(),
                    bad: obj,
                })
            } else {
                next = get_free_pointer(obj, l);
                if !free_pointer_ok(next, base, l) {
                    Some(Problem::FreePointer {
                        from: obj,
                        bad: next,
                    })
                } else {
                    debug::check_red_zones(obj, l, debug::RED_INACTIVE)
                        .or_else(|| {
                            if self.poisoned {
                                debug::check_poison(obj, l)
                            } else {
                                None
                            }
                        })
                        .map(|damage| Problem::Object {
                            obj,
                            damage,
                            free: true,
                        })
                }
            }
        };
        if let Some(p) = problem {
            // SAFETY: per the caller the slab is on the partial list (then
            // on none); `p` names objects checked to be object starts.
            unsafe {
                self.report_problem(slab, p, "allocation");
                self.remove_partial(node, lists, slab);
                self.isolate(slab);
            }
            return None;
        }
        // SAFETY: the slab is live and listed (per the caller); a debug
        // slab's pair changes only under the node lock we hold, so the
        // update cannot race, it only keeps the pair's protocol; `obj` was
        // checked to be a free object of the slab.
        unsafe {
            let Ok(_) = self.update_pair(slab, |old| {
                debug_assert_eq!(old, [fl, counters]);
                Ok::<_, Infallible>([next as usize, counters + 1])
            });
            // A full slab leaves the partial list for the full one, unless
            // the partial list was found broken (then it is leaked with
            // the rest of it).
            if next.is_null() && self.remove_partial(node, lists, slab) {
                lists.full.push_front(slab);
            }
            debug::set_red_zones(obj, l, debug::RED_ACTIVE);
            debug::set_track(obj, l, false, *t);
        }
        Some(obj)
    }

    /// Frees `obj` of `slab` in a debug cache.
    ///
    /// # Safety
    /// `slab` is a slab of this cache validated by `object_slab`, `obj` one
    /// of its objects handed over by the caller.
    pub(super) unsafe fn debug_free(&self, slab: *mut SlabHeader, obj: *mut u8) {
        let l = &self.layout;
        let t = if l.store_user() {
            self.owner_track()
        } else {
            Track::default()
        };
        self.stat(Stat::FreeSlowpath);
        // SAFETY: per the caller, the slab's memory is valid; `node` never
        // changes.
        let node = self.node(unsafe { (*slab).node() });
        let mut d = Discards::new();
        {
            let mut lists = P::node_lock(&node.lists);
            // SAFETY: slab memory stays mapped; isolation happens under
            // list_lock, so the magic is stable here.
            if unsafe { !(*slab).is_live_with(self.slab_secret) } {
                drop(lists);
                return self.report(obj, FreeError::Isolated);
            }
            // SAFETY: the slab is live (checked under the lock).
            let [fl, counters] = unsafe { (*slab).read_pair() };
            let used = inuse(counters) as usize;
            // SAFETY: `obj` is an object start of the live slab; pointers
            // on its freelist are followed only once checked.
            let problem = unsafe {
                if fl == obj as usize
                    || debug::red_zones_are(obj, l, debug::RED_INACTIVE)
                    || self.on_freelist(slab, fl, obj)
                {
                    Some(Problem::DoubleFree(obj))
                } else if used == 0 || used > l.objects || counters & FROZEN != 0 {
                    Some(Problem::Slab("inuse out of range on free"))
                } else if !free_pointer_ok(fl as *const u8, self.base_of(slab), l) {
                    Some(Problem::FreePointer {
                        from: ptr::null(),
                        bad: fl as *const u8,
                    })
                } else {
                    debug::check_red_zones(obj, l, debug::RED_ACTIVE).map(|damage| {
                        Problem::Object {
                            obj,
                            damage,
                            free: false,
                        }
                    })
                }
            };
            if let Some(p) = problem {
                let isolate = !matches!(p, Problem::DoubleFree(_));
                // SAFETY: the slab is live; `p` names `obj` (validated by
                // the caller) or checked object starts.
                unsafe { self.report_problem(slab, p, "free") };
                if isolate {
                    // SAFETY: under list_lock; a debug slab with free
                    // objects is on the partial list, a full one on `full`.
                    unsafe {
                        if fl == 0 {
                            self.unlink(&mut lists.full, "full", slab);
                        } else {
                            self.remove_partial(node, &mut lists, slab);
                        }
                        self.isolate(slab);
                    }
                }
                return;
            }
            // SAFETY: under list_lock, the slab live.
            let forgotten = unsafe { lists.forgot(slab) };
            // SAFETY: the object is ours (checked above); under list_lock.
            unsafe {
                debug::set_track(obj, l, true, t);
                if self.poisoned {
                    debug::poison(obj, l);
                }
                debug::set_red_zones(obj, l, debug::RED_INACTIVE);
                set_free_pointer(obj, l, fl as *mut u8);
                let Ok(_) = self.update_pair(slab, |old| {
                    debug_assert_eq!(old, [fl, counters]);
                    Ok::<_, Infallible>([obj as usize, used - 1])
                });
                if fl == 0 && !forgotten && self.unlink(&mut lists.full, "full", slab) {
                    Self::add_partial(node, &mut lists, slab, false);
                }
            }
            // A slab its broken list forgot (reported) keeps the freed
            // object and stays leaked: never listed again.
            if !forgotten && used == 1 && self.enough_partial(lists.partial.len() - 1) {
                // SAFETY: the slab has free objects, so it is on the partial
                // list; once off it, it is empty and unlisted (unless the
                // list was found broken: then it is leaked with the rest).
                unsafe {
                    if self.remove_partial(node, &mut lists, slab) {
                        self.stat(Stat::FreeRemovePartial);
                        self.discard_locked(node, &mut lists, slab, &mut d);
                    }
                }
            }
        }
        self.free_discards(d);
    }

    /// Whether `obj` is on the freelist starting at `fl` (bounded walk;
    /// stops at a pointer that is not an object of the slab).
    ///
    /// # Safety
    /// `slab` is live, its list_lock held.
    unsafe fn on_freelist(&self, slab: *mut SlabHeader, fl: usize, obj: *mut u8) -> bool {
        let mut cur = fl as *const u8;
        let mut n = 0;
        // SAFETY: per the caller, `slab` is live.
        let base = unsafe { self.base_of(slab) };
        while !cur.is_null() && n <= self.layout.objects && free_pointer_ok(cur, base, &self.layout)
        {
            if cur == obj.cast_const() {
                return true;
            }
            n += 1;
            // SAFETY: an object start of the slab.
            cur = unsafe { get_free_pointer(cur, &self.layout) };
        }
        false
    }

    /// With owner tracking, lists up to 16 live objects (destroy with live
    /// objects). Node lists only: a debug cache has no CPU slabs.
    pub(super) fn report_live_objects(&self) {
        if !self.layout.store_user() {
            return;
        }
        let l = &self.layout;
        let mut shown = 0;
        P::report(format_args!(
            "cache {}: objects still allocated at destroy (up to 16 shown):",
            self.name_str()
        ));
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let lists = P::node_lock(&node.lists);
            for list in [&lists.partial, &lists.full] {
                let mut cur = list.first();
                while !cur.is_null() && shown < 16 {
                    for idx in 0..l.objects {
                        let obj = (cur as usize + l.object_offset(idx)) as *const u8;
                        // SAFETY: `obj` is an object start of `cur`, a
                        // listed slab, so live (`NodeLists` invariant).
                        if unsafe { debug::red_zones_are(obj, l, debug::RED_ACTIVE) }
                            || (!l.red_zone() && {
                                // SAFETY: `cur` is live and its node lock
                                // held (`lists`).
                                unsafe {
                                    !self.on_freelist(cur, (*cur).read_pair()[0], obj.cast_mut())
                                }
                            })
                        {
                            P::report(format_args!("  live object {:p}", obj));
                            self.report_owners(obj);
                            shown += 1;
                            if shown == 16 {
                                break;
                            }
                        }
                    }
                    // SAFETY: list member, under list_lock.
                    cur = unsafe { (*cur).next };
                }
            }
        }
    }
}
