// SPDX-License-Identifier: GPL-2.0
//! `alloc_bulk` and `free_bulk`: many objects per CPU lock hold or per
//! cmpxchg16b.

use super::chain::{Chain, Filter, Gather, Seen};
use super::{Cache, MODE_HARDENED, MODE_OUT_HARDENED, MODE_PLAIN, NO_NODE};
use crate::platform::Platform;
use crate::slab::{get_free_pointer_as, is_object_of, set_free_pointer_as, FreeError, SlabHeader};
use crate::stat::Stat;
use core::ptr;

/// Objects of other slabs in a row after which `group_by_slab` stops
/// looking for more objects of the current one.
const LOOKAHEAD: usize = 3;

impl<P: Platform> Cache<P> {
    /// Allocates `out.len()` objects, all or nothing.
    pub fn alloc_bulk(&self, gfp: u32, out: &mut [*mut u8]) -> bool {
        // Debug caches, and a batch of one object: one by one. One object
        // takes the lockless single path (no CPU lock, so no interrupt
        // save and restore), under half the cost of a locked batch of one
        // (docs/history/benchmarks-history.md, "bulk geometry and the
        // batch of one").
        if self.debug != 0 || out.len() == 1 {
            for i in 0..out.len() {
                out[i] = self.alloc(gfp, NO_NODE);
                if out[i].is_null() {
                    // SAFETY: these objects were just allocated for the caller.
                    unsafe { self.free_bulk(&mut out[..i]) };
                    return false;
                }
            }
            return true;
        }
        // One branch per call, like the single-object paths; the caches
        // with headers outside the slabs one jump away, so the others'
        // code stays as it was (with them inline, bulk 8 cost 0.3
        // instructions an object more).
        let got = match self.mode {
            MODE_HARDENED => self.alloc_bulk_fast::<true, false>(gfp, out),
            MODE_PLAIN => self.alloc_bulk_fast::<false, false>(gfp, out),
            _ => self.alloc_bulk_out(gfp, out),
        };
        got || (!self.fallback.is_null() && self.alloc_bulk_fallback(gfp, out))
    }

    /// `alloc_bulk` of the caches whose slab headers are outside the slabs.
    #[inline(never)]
    fn alloc_bulk_out(&self, gfp: u32, out: &mut [*mut u8]) -> bool {
        if self.mode == MODE_OUT_HARDENED {
            self.alloc_bulk_fast::<true, true>(gfp, out)
        } else {
            self.alloc_bulk_fast::<false, true>(gfp, out)
        }
    }

    /// `alloc_bulk` for non-debug caches, hardened (`HARDENED`) or not,
    /// slab headers outside the slabs (`OUT`) or in.
    #[inline(always)]
    fn alloc_bulk_fast<const HARDENED: bool, const OUT: bool>(
        &self,
        gfp: u32,
        out: &mut [*mut u8],
    ) -> bool {
        let mut g = self.cpu_lock();
        let n = out.len();
        // The geometry in locals: read through `self`, every field the
        // loop uses was loaded again after each store to `out` (three
        // instructions an object).
        let layout = self.layout;
        let mut i = 0;
        while i < n {
            // The CPU freelist, walked in registers: the freelist and the
            // slab are read once and the freelist written back once (the
            // stores to `out` would otherwise force them to be reloaded
            // for every object).
            let mut obj = g.freelist;
            // The CPU slab's base (with `OUT`, computed from an object: the
            // slab is null while the freelist is).
            let base = if OUT {
                layout.slab_base(obj)
            } else {
                g.slab as usize
            };
            let mut corrupt = false;
            if !obj.is_null() {
                loop {
                    // SAFETY: `obj` is on the locked CPU's freelist, so it is
                    // an object of the CPU slab, which stays mapped.
                    let next = unsafe { get_free_pointer_as::<HARDENED>(obj, &layout) };
                    // Hardened, the end of the freelist is found by the
                    // object test failing (null is no object:
                    // `is_object_of`): one test an object instead of two.
                    let last = HARDENED && !is_object_of(next, base, &layout);
                    // Tested on the value itself: seen through, the null
                    // test became a compare of the stored word with its
                    // key, which kept both alive in the loop.
                    if last && !core::hint::black_box(next).is_null() {
                        corrupt = true;
                        break;
                    }
                    // SAFETY: `i < n` (checked before the loop and after
                    // each increment); the compiler did not see it and kept
                    // a bounds check per object.
                    unsafe { *out.get_unchecked_mut(i) = obj };
                    // `i < n <= isize::MAX`: no overflow to check (the
                    // kernel's overflow checks cost 2 instructions an object).
                    i = i.wrapping_add(1);
                    g.stat(Stat::AllocFastpath);
                    obj = next;
                    if last || i == n || (!HARDENED && obj.is_null()) {
                        break;
                    }
                }
            }
            g.freelist = obj;
            if i == n {
                break;
            }
            if corrupt {
                // Checked again under the lock: reports and isolates the
                // CPU slab (then retry elsewhere).
                if let Some(o) = self.load_freelist(&mut g, obj) {
                    out[i] = o;
                    i += 1;
                }
                continue;
            }
            g.stat(Stat::AllocSlowpath);
            let o = self.slab_alloc_locked(&mut g, gfp, NO_NODE);
            if o.is_null() {
                drop(g);
                // SAFETY: these objects were just allocated for the caller.
                unsafe { self.free_bulk(&mut out[..i]) };
                return false;
            }
            out[i] = o;
            i += 1;
        }
        // INVARIANT: the freelist changed under the lock: a new tid before
        // the lock goes.
        g.tid = g.tid.wrapping_add(Self::TID_STEP);
        drop(g);
        if gfp & self.gfp_zero != 0 {
            for &obj in out.iter() {
                // SAFETY: freshly allocated objects.
                unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
            }
        }
        true
    }

    /// Frees the objects in `objs` (null entries skipped), grouping objects
    /// of one slab into a detached freelist published with one cmpxchg16b.
    /// The slice's entries are consumed (set to null).
    ///
    /// # Safety
    /// As for [`Cache::free`], for every object in `objs`.
    pub unsafe fn free_bulk(&self, objs: &mut [*mut u8]) {
        // One by one as in `alloc_bulk`: debug caches, and one object.
        if self.debug != 0 || objs.len() == 1 {
            for o in objs.iter_mut() {
                let obj = core::mem::take(o);
                if !obj.is_null() {
                    // SAFETY: per the caller.
                    unsafe { self.free(obj) };
                }
            }
            return;
        }
        if !self.fallback.is_null() {
            // SAFETY: per the caller (same contract).
            unsafe { self.free_bulk_fallback_first(objs) };
        }
        // SAFETY: per the caller (same contract).
        unsafe {
            match self.mode {
                MODE_HARDENED => self.free_bulk_fast::<true, false>(objs),
                MODE_PLAIN => self.free_bulk_fast::<false, false>(objs),
                _ => self.free_bulk_out(objs),
            }
        }
    }

    /// `free_bulk` of the caches whose slab headers are outside the slabs
    /// (as `alloc_bulk_out`).
    ///
    /// # Safety
    /// As for [`Cache::free_bulk`].
    #[inline(never)]
    unsafe fn free_bulk_out(&self, objs: &mut [*mut u8]) {
        // SAFETY: per the caller (same contract).
        unsafe {
            if self.mode == MODE_OUT_HARDENED {
                self.free_bulk_fast::<true, true>(objs)
            } else {
                self.free_bulk_fast::<false, true>(objs)
            }
        }
    }

    /// `free_bulk` for non-debug caches, hardened (`HARDENED`) or not,
    /// slab headers outside the slabs (`OUT`) or in.
    ///
    /// # Safety
    /// As for [`Cache::free_bulk`].
    #[inline(always)]
    unsafe fn free_bulk_fast<const HARDENED: bool, const OUT: bool>(&self, objs: &mut [*mut u8]) {
        if objs.len() > 64 && self.layout.objects > 64 {
            // SAFETY: per the caller (same contract).
            return unsafe { self.free_bulk_exact::<HARDENED, OUT>(objs) };
        }
        // SAFETY: per the caller; each chain is of one validated slab.
        unsafe {
            self.group_by_slab::<HARDENED, OUT, false, false>(objs, |slab, ch| {
                self.free_chain::<HARDENED, OUT>(slab, ch);
            });
        }
    }

    /// `free_bulk_fast` for more than 64 objects of a cache whose slabs
    /// hold more than 64: a chain may then be longer than the 64-bit
    /// filter is exact for, so each chain is gathered with the exact set
    /// of its indices from its start (`EXACT`), rather than with the filter
    /// until its first doubt and then the exact set built by a walk of the
    /// chain (bulk 128 of 8-byte objects: 88 to 69 instructions an object).
    /// Out of line: the filter's loop keeps its code.
    ///
    /// # Safety
    /// As for [`Cache::free_bulk`].
    #[inline(never)]
    unsafe fn free_bulk_exact<const HARDENED: bool, const OUT: bool>(&self, objs: &mut [*mut u8]) {
        // SAFETY: per the caller; each chain is of one validated slab.
        unsafe {
            self.group_by_slab::<HARDENED, OUT, false, true>(objs, |slab, ch| {
                self.free_chain::<HARDENED, OUT>(slab, ch);
            });
        }
    }

    /// Links the objects of `objs` into chains, one per slab (nearest
    /// first, like upstream's detached freelists), and hands each chain to
    /// `sink(slab, chain)`. Every slot is cleared; nulls are skipped. The
    /// search for more objects of a slab stops after `LOOKAHEAD` objects of
    /// other slabs in a row (upstream's bound too): runs of one slab are
    /// found whole, and scattered objects cost a few compares each instead
    /// of a scan of the rest. An object named twice is reported and freed
    /// once (`chain.rs`). `CHECKED`: the objects were validated before (a
    /// free batch), only their slab is computed; else each is validated and
    /// a refused one reported. `OUT`: the cache's slab headers are outside
    /// the slabs. `EXACT`: each chain is gathered with the exact set of its
    /// indices from its start, not the filter (`free_bulk_exact`).
    ///
    /// # Safety
    /// The objects of `objs` are handed over by the caller (with `CHECKED`,
    /// validated objects of this cache); `sink` may assume its chain is
    /// objects of the validated `slab`, linked the `HARDENED` way, none twice.
    #[inline(always)]
    pub(super) unsafe fn group_by_slab<
        const HARDENED: bool,
        const OUT: bool,
        const CHECKED: bool,
        const EXACT: bool,
    >(
        &self,
        objs: &mut [*mut u8],
        mut sink: impl FnMut(*mut SlabHeader, Chain),
    ) {
        let mut filter = Filter {
            exact: self.layout.objects <= 64,
        };
        let mut end = objs.len();
        while end > 0 {
            end -= 1;
            let obj = core::mem::take(&mut objs[end]);
            if obj.is_null() {
                continue;
            }
            let slab = if CHECKED {
                Self::header_at::<OUT>(self.layout.slab_base(obj))
            } else {
                match self.object_slab::<OUT>(obj) {
                    // The free_batch variant: an object in a CPU's batch
                    // is free already.
                    #[cfg(rslub_free_batch)]
                    // SAFETY: validated.
                    Ok(_) if unsafe { self.is_batched::<HARDENED>(obj) } => {
                        self.report(obj, FreeError::DoubleFree);
                        continue;
                    }
                    Ok(s) => s,
                    Err(e) => {
                        self.report(obj, e);
                        continue;
                    }
                }
            };
            // In the slab, the header's address is the base.
            let base = if OUT {
                self.layout.slab_base(obj)
            } else {
                slab as usize
            };
            let Some(ch) = self.chain_start(slab, base, obj) else {
                continue;
            };
            if EXACT {
                // SAFETY: `ch` is a chain of `slab` being freed by us.
                let mut map = unsafe { self.chain_bitmap(base, ch) };
                // SAFETY: per the caller.
                let ch =
                    unsafe { self.gather::<HARDENED, CHECKED>(objs, base, ch, end, &mut map) }.0;
                sink(slab, ch);
                continue;
            }
            let (mut ch, mut k) = (ch, end);
            // Not computed yet (it has at most two bits).
            let mut guard_only = u64::MAX;
            let ch = loop {
                // One call of the filter's loop, inline with the exact
                // set's: a second call, or either loop out of line, made
                // LLVM allocate this one's registers anew (bulk 8 and 16
                // 3-4% dearer, docs/history/benchmarks-history.md).
                // SAFETY: per the caller.
                let (c, stop, unsure) =
                    unsafe { self.gather::<HARDENED, CHECKED>(objs, base, ch, k, &mut filter) };
                (ch, k) = (c, stop);
                if !unsure {
                    break ch;
                }
                // SAFETY: per the caller; `objs[k - 1]` is the object of
                // `slab` the filter was unsure of.
                if let Some((c, g)) = unsafe {
                    self.settle_guard_bit::<HARDENED, CHECKED>(objs, base, ch, k, guard_only)
                } {
                    (ch, k, guard_only) = (c, k.wrapping_sub(1), g);
                    continue;
                }
                // Long chains of small objects: the exact set.
                // SAFETY: `ch` is a chain of `slab` being freed by us.
                let mut map = unsafe { self.chain_bitmap(base, ch) };
                // SAFETY: per the caller.
                break unsafe { self.gather::<HARDENED, CHECKED>(objs, base, ch, k, &mut map) }.0;
            };
            sink(slab, ch);
        }
    }

    /// Gathers the other objects of the slab at `base` from `objs[..k]`
    /// into `ch`, nearest first, taking each out of `objs`, until
    /// `LOOKAHEAD` objects of other slabs in a row or the start. Returns the chain, where it
    /// stopped, and true if that is at an object `set` is unsure of (left
    /// in `objs`, the returned `k` past it). Values in and out, not
    /// references: the loop keeps them in registers.
    ///
    /// # Safety
    /// As for `group_by_slab`; `ch` is a chain of the validated slab at
    /// `base`, and `set` holds its object indices.
    #[inline(always)]
    unsafe fn gather<const HARDENED: bool, const CHECKED: bool>(
        &self,
        objs: &mut [*mut u8],
        base: usize,
        mut ch: Chain,
        mut k: usize,
        set: &mut impl Gather,
    ) -> (Chain, usize, bool) {
        let mut misses = 0;
        // An index loop: the iterator form cost five instructions per
        // object. The lookahead bound in the loop's condition, where a
        // `break` after the count made LLVM nest a loop over the misses
        // inside one over the hits, with registers spilled and reloaded
        // on every hit.
        while k != 0 && misses < LOOKAHEAD {
            k -= 1;
            // SAFETY: `k < objs.len()`.
            let slot = unsafe { objs.get_unchecked_mut(k) };
            let o = *slot;
            // The common case first: an object of the same slab block as a
            // validated object (null is in no slab's block). The memory is
            // valid, only the object boundary needs checking. (The boundary
            // check alone would do, `object_index` being exact for any
            // offset, but the loop then kept its filter on the stack: +7
            // instructions an object of bulk 16.)
            if self.layout.slab_base(o) == base {
                if let Some(idx) = self.layout.object_index((o as usize).wrapping_sub(base)) {
                    match set.insert(&mut ch.seen, idx) {
                        // The free_batch variant: an object in a CPU's
                        // batch is free already.
                        #[cfg(rslub_free_batch)]
                        // SAFETY: an object start of `slab`.
                        Seen::New if !CHECKED && unsafe { self.is_batched::<HARDENED>(o) } => {
                            self.report(o, FreeError::DoubleFree);
                            *slot = ptr::null_mut();
                        }
                        Seen::New => {
                            // SAFETY: `o` is an object of `slab` being freed
                            // by us.
                            unsafe { set_free_pointer_as::<HARDENED>(o, &self.layout, ch.head) };
                            ch.head = o;
                            // At most `objs.len()`: no overflow to check.
                            ch.cnt = ch.cnt.wrapping_add(1);
                            *slot = ptr::null_mut();
                            misses = 0;
                        }
                        Seen::Twice => {
                            // In the chain already, or free already: linking
                            // it would make a cycle or break a freelist.
                            self.report(o, FreeError::DoubleFree);
                            *slot = ptr::null_mut();
                        }
                        Seen::Unsure => {
                            // Back to the object (`k` was decremented).
                            return (ch, k.wrapping_add(1), true);
                        }
                    }
                    continue;
                }
            } else if o.is_null() {
                continue;
            }
            misses += 1;
        }
        (ch, k, false)
    }

    /// Settles the filter's doubt about `objs[k - 1]`, an object of the
    /// slab at `base`, when its bit in `seen` is one only a guard set
    /// (`guard_only`, or `u64::MAX` if not computed yet): the object is in
    /// the chain's filter by a guard's bit alone, so it is new unless it
    /// is that guard. This is the common doubt: a batch of 64 objects in
    /// a row of a slab of more than 64 has every bit, and one is the CPU
    /// freelist head's. Returns the chain with the object linked (or
    /// reported, if it is a guard) and the guard-only bits left; None
    /// when the bit is not a guard's alone (the exact set must decide).
    ///
    /// # Safety
    /// As for `gather`; `objs[k - 1]` is an object of the slab at `base`.
    #[cold]
    #[inline(never)]
    unsafe fn settle_guard_bit<const HARDENED: bool, const CHECKED: bool>(
        &self,
        objs: &mut [*mut u8],
        base: usize,
        mut ch: Chain,
        k: usize,
        guard_only: u64,
    ) -> Option<(Chain, u64)> {
        // The guards' bits less the first object's: every later object
        // with a guard's bit was either settled here (and the bit taken
        // out) or left to the exact set.
        let guard_only = if guard_only == u64::MAX {
            (self.index_bit(base, ch.guards[0]) | self.index_bit(base, ch.guards[1]))
                & !self.index_bit(base, ch.tail as usize)
        } else {
            guard_only
        };
        let slot = &mut objs[k - 1];
        let o = *slot;
        let bit = self.index_bit(base, o as usize);
        if guard_only & bit == 0 {
            return None;
        }
        *slot = ptr::null_mut();
        if o as usize == ch.guards[0] || o as usize == ch.guards[1] {
            self.report(o, FreeError::DoubleFree);
            return Some((ch, guard_only));
        }
        // The free_batch variant: an object in a CPU's batch is free
        // already (as in `gather`).
        #[cfg(rslub_free_batch)]
        // SAFETY: an object start of the slab.
        if !CHECKED && unsafe { self.is_batched::<HARDENED>(o) } {
            self.report(o, FreeError::DoubleFree);
            return Some((ch, guard_only & !bit));
        }
        // SAFETY: `o` is an object of the slab being freed by us.
        unsafe { set_free_pointer_as::<HARDENED>(o, &self.layout, ch.head) };
        ch.head = o;
        ch.cnt = ch.cnt.wrapping_add(1);
        Some((ch, guard_only & !bit))
    }
}
