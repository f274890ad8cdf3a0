// SPDX-License-Identifier: GPL-2.0
//! A cache's fallback: a companion cache of the smallest slab order, for
//! when no page block of the cache's own order can be had. Classic SLUB
//! asks for its preferred order lightly (`__GFP_NORETRY | __GFP_NOWARN`)
//! and falls back to the minimum order with the caller's flags, so that
//! fragmented memory neither fails an allocation nor calls the OOM killer
//! for an order-3 slab. rslub finds a slab by masking an object's address
//! with its cache's one slab size, so a smaller slab cannot join the
//! cache; it joins the companion instead, whose slabs are all of that
//! smaller order, with a secret of its own.
//!
//! Only the cold paths know of it: an allocation whose new slab failed
//! (`alloc_fallback`), a free the cache refused (`free_to_fallback`: the
//! companion checks the pointer against its own slabs, so the cache's
//! fast paths are unchanged), a bulk free while the companion has objects
//! out, and the whole-cache operations (flush, shrink, the shrinker,
//! validate, destroy), which take it along. Debug caches and served ones
//! have none (served caches have SLUB's own fallback behind them).

use super::{Cache, Params};
use crate::layout::Layout;
use crate::platform::Platform;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Gives the cache at `this` a fallback of `layout` (the smallest
    /// order, `LayoutRequest::smallest`), made like the cache with
    /// `params`; from then on the cache asks for its own pages with
    /// `gfp_light` added. False (and no fallback) when it cannot be made.
    ///
    /// # Safety
    /// `this` is a cache just made by `create`, not yet used or shared.
    pub unsafe fn attach_fallback(
        this: *mut Cache<P>,
        layout: Layout,
        params: Params,
        gfp_light: u32,
    ) -> bool {
        // SAFETY: per the caller, ours alone.
        let c = unsafe { &mut *this };
        debug_assert!(c.debug == 0 && c.fallback.is_null() && !layout.header_outside);
        let fb = Self::create(c.name(), c.flags, layout, c.ctor, params);
        if fb.is_null() {
            return false;
        }
        // INVARIANT: set before the cache is shared (per the caller); `fb`
        // comes from `create`, so it has no fallback of its own.
        c.fallback = fb;
        c.gfp_light = gfp_light;
        true
    }

    /// The fallback, if the cache has one.
    pub fn fallback(&self) -> Option<&Cache<P>> {
        // SAFETY: made by `attach_fallback`, freed only by `destroy` of
        // this cache.
        unsafe { self.fallback.as_ref() }
    }

    /// An allocation whose slab could not be had at the cache's order: one
    /// object from the fallback (zeroing is the caller's), or null.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_fallback(&self, gfp: u32, node: i32) -> *mut u8 {
        let Some(fb) = self.fallback() else {
            return ptr::null_mut();
        };
        let obj = fb.alloc(gfp & !self.gfp_zero, node);
        if !obj.is_null() && !self.fallback_used.load(Ordering::Relaxed) {
            self.fallback_used.store(true, Ordering::Release);
        }
        obj
    }

    /// `alloc_bulk` from the fallback, all or nothing.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_bulk_fallback(&self, gfp: u32, out: &mut [*mut u8]) -> bool {
        let Some(fb) = self.fallback() else {
            return false;
        };
        let got = fb.alloc_bulk(gfp, out);
        if got && !self.fallback_used.load(Ordering::Relaxed) {
            self.fallback_used.store(true, Ordering::Release);
        }
        got
    }

    /// A pointer the cache refused: if it is an object of the fallback's,
    /// freed there and true.
    ///
    /// # Safety
    /// As for `free`.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn free_to_fallback(&self, obj: *mut u8) -> bool {
        match self.fallback() {
            Some(fb) if self.fallback_used.load(Ordering::Acquire) && fb.owns(obj) => {
                // SAFETY: an object of the fallback's, handed over.
                unsafe { fb.free(obj) };
                true
            }
            _ => false,
        }
    }

    /// Whether `obj` is an object start of a live slab of this cache.
    fn owns(&self, obj: *const u8) -> bool {
        self.object_slab_any(obj).is_ok()
    }

    /// Before a bulk free, while the fallback has had objects: the
    /// fallback's objects of `objs` freed there (and nulled), so that the
    /// cache's own bulk path sees only its own or bad pointers.
    ///
    /// # Safety
    /// As for `free_bulk`.
    pub(super) unsafe fn free_bulk_fallback_first(&self, objs: &mut [*mut u8]) {
        if !self.fallback_used.load(Ordering::Acquire) {
            return;
        }
        let Some(fb) = self.fallback() else {
            return;
        };
        for o in objs.iter_mut() {
            if !o.is_null() && self.object_slab_any(*o).is_err() && fb.owns(*o) {
                // SAFETY: an object of the fallback's, handed over.
                unsafe { fb.free(core::mem::take(o)) };
            }
        }
    }

    /// Slabs the fallback holds (all states).
    pub fn fallback_slabs(&self) -> usize {
        self.fallback().map_or(0, |fb| fb.totals().slabs)
    }

    /// Objects the fallback has handed out and not got back.
    pub fn fallback_objects(&self) -> usize {
        self.fallback().map_or(0, |fb| fb.totals().live_objects)
    }
}
