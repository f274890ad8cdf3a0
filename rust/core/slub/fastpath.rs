// SPDX-License-Identifier: GPL-2.0
//! The entry points `alloc` and `free` and their lockless fast paths: one
//! per-CPU cmpxchg16b on the CPU's `(freelist, tid)` pair, nothing disabled.
//! Everything that misses the CPU slab goes to `alloc_slow.rs` or
//! `free_slow.rs`.

use super::{Cache, CpuSlab, MODE_HARDENED, MODE_PLAIN, NO_NODE};
use crate::platform::Platform;
use crate::slab::{
    free_pointer_ok, get_free_pointer_as, set_free_pointer_as, FreeError, SlabHeader,
};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    pub(super) fn node_match(slab: *mut SlabHeader, node: i32) -> bool {
        // SAFETY: a hint read of a header field; slab memory stays mapped.
        node < 0
            || (!slab.is_null()
                && unsafe { ptr::read_volatile(ptr::addr_of!((*slab).node)) } == node)
    }

    /// Allocates one object on `node` (negative: any, local first); null when
    /// memory ran out. Inlined into the C API's functions, where `node` is
    /// often a constant.
    #[inline(always)]
    pub fn alloc(&self, gfp: u32, node: i32) -> *mut u8 {
        let node = if node == NO_NODE {
            node
        } else {
            match self.alloc_node_check(gfp, node) {
                Some(n) => n,
                None => return ptr::null_mut(),
            }
        };
        // One branch picks the path: hardened (the default), plain, or the
        // locked path of debug caches.
        let obj = if self.mode == MODE_HARDENED {
            self.alloc_inner::<true>(gfp, node)
        } else if self.mode == MODE_PLAIN {
            self.alloc_inner::<false>(gfp, node)
        } else {
            self.debug_alloc(gfp, node)
        };
        if !obj.is_null() && gfp & self.gfp_zero != 0 {
            // SAFETY: `obj` is a freshly allocated object of `object_size` bytes.
            unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
        }
        obj
    }

    /// The node an allocation for `node` (not `NO_NODE`) goes to: `node`
    /// itself, or any node when it has no memory; None, with one line on
    /// the log, for an id that is no node, or for a node without memory
    /// under `__GFP_THISNODE` (the page allocator would warn with a stack
    /// dump, or hand out another node's memory).
    #[cold]
    fn alloc_node_check(&self, gfp: u32, node: i32) -> Option<i32> {
        if node < 0 || node as usize >= self.nr_nodes {
            P::report(format_args!(
                "cache {}: allocation on node {}: no such node (0..{} or NUMA_NO_NODE); returning NULL",
                self.name_str(),
                node,
                self.nr_nodes.saturating_sub(1)
            ));
            return None;
        }
        if P::node_has_memory(node) {
            return Some(node);
        }
        if gfp & self.gfp_thisnode != 0 {
            P::report(format_args!(
                "cache {}: allocation on node {} with __GFP_THISNODE: the node has no memory; returning NULL",
                self.name_str(),
                node
            ));
            return None;
        }
        Some(NO_NODE)
    }

    /// Reads `(freelist, tid, slab)` of the CPU the caller is on, through
    /// its raw per-CPU pointer: tid first, then the rest (upstream's order).
    /// If the task migrates meanwhile these are another CPU's values, and
    /// since tids are unique per CPU the following per-CPU cmpxchg16b on the
    /// new CPU fails; if it is preempted and the CPU's freelist changes, the
    /// tid has changed too.
    #[inline(always)]
    fn cpu_snapshot(&self) -> (usize, usize, *mut SlabHeader) {
        let c = P::this_cpu_ptr(self.pcpu).cast::<CpuSlab>();
        // SAFETY: `c` is a valid CpuSlab of some CPU; volatile reads are
        // neither torn (aligned words) nor reordered against each other.
        unsafe {
            let tid = ptr::read_volatile(ptr::addr_of!((*c).tid));
            let freelist = ptr::read_volatile(ptr::addr_of!((*c).freelist));
            let slab = ptr::read_volatile(ptr::addr_of!((*c).slab));
            (freelist as usize, tid, slab)
        }
    }

    #[inline(always)]
    fn alloc_inner<const HARDENED: bool>(&self, gfp: u32, node: i32) -> *mut u8 {
        loop {
            let (obj, tid, slab) = self.cpu_snapshot();
            if obj == 0 || !Self::node_match(slab, node) {
                return self.alloc_slow(gfp, node);
            }
            // SAFETY: `obj` was on this CPU's freelist; if it has been taken
            // since, the value read is garbage but the cmpxchg below fails.
            let next = unsafe { get_free_pointer_as::<HARDENED>(obj as *const u8, &self.layout) };
            // Hardened: a next pointer that is no object of the slab is
            // either a race (the object was taken meanwhile) or corruption;
            // the slow path tells them apart under the CPU lock.
            if HARDENED && !free_pointer_ok(next, slab, &self.layout) {
                return self.alloc_slow(gfp, node);
            }
            if P::this_cpu_cmpxchg_pair(
                self.pcpu,
                [obj, tid],
                [next as usize, tid.wrapping_add(self.tid_step)],
            ) {
                self.stat(Stat::AllocFastpath);
                return obj as *mut u8;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
    }

    /// Validates `obj` as an object start of this cache; returns its slab.
    /// The address check is the cheap inline one (`Platform::addr_valid`);
    /// debug caches add the full one first (`free`).
    #[inline(always)]
    pub(super) fn object_slab(&self, obj: *const u8) -> Result<*mut SlabHeader, FreeError> {
        if !P::addr_valid(obj) {
            return Err(FreeError::NotSlabMemory);
        }
        let slab = SlabHeader::of(obj, &self.layout);
        // SAFETY: `slab` is the aligned-down start of valid memory; the
        // header's contents are trusted only once the magic matches.
        unsafe { (*slab).check_object(obj, &self.layout, self.owner())? };
        Ok(slab)
    }

    /// Frees `obj`. A pointer that is not an allocated object of this cache
    /// is reported and ignored.
    ///
    /// # Safety
    /// If `obj` is an allocated object of this cache, the caller owns it and
    /// does not use it afterwards.
    #[inline(always)]
    pub unsafe fn free(&self, obj: *mut u8) {
        // One branch picks the path, as in `alloc`.
        // SAFETY: the caller gives up `obj` (if it is an object of ours).
        unsafe {
            if self.mode == MODE_HARDENED {
                self.free_one::<true>(obj);
            } else if self.mode == MODE_PLAIN {
                self.free_one::<false>(obj);
            } else {
                self.free_debug_checked(obj);
            }
        }
    }

    /// `free` of a hardened (`H`) or plain cache: validation inline, then a
    /// chain of one.
    ///
    /// # Safety
    /// As for `free`.
    #[inline(always)]
    unsafe fn free_one<const H: bool>(&self, obj: *mut u8) {
        match self.object_slab(obj) {
            // SAFETY: `slab` was validated just now and the caller gives up
            // `obj`, a chain of one.
            Ok(slab) => unsafe { self.free_chain::<H, true>(slab, obj, obj, 1) },
            Err(e) => self.report(obj, e),
        }
    }

    /// `free` of a debug cache: the full address check, then the locked
    /// debug path.
    ///
    /// # Safety
    /// As for `free`.
    #[cold]
    unsafe fn free_debug_checked(&self, obj: *mut u8) {
        if !P::addr_has_page(obj) {
            return self.report(obj, FreeError::NotSlabMemory);
        }
        match self.object_slab(obj) {
            // SAFETY: validated just now; the caller gives up `obj`.
            Ok(slab) => unsafe { self.debug_free(slab, obj) },
            Err(e) => self.report(obj, e),
        }
    }

    /// Frees a chain `head..=tail` of `cnt` objects of `slab`: the lockless
    /// push onto this CPU's freelist when `slab` is this CPU's slab (one
    /// per-CPU cmpxchg16b), else `slab_free`. A single free is a chain of
    /// one; hardened (`H`) or plain free pointers. With `BATCH` (single
    /// frees) and batching on, a single object that misses goes to this
    /// CPU's batch (`free_batch.rs`) instead.
    ///
    /// # Safety
    /// `slab` is a slab of this cache validated by `object_slab`; `head` to
    /// `tail` are `cnt` of its objects owned by the caller, linked through
    /// their free pointers (written the `H` way).
    #[inline(always)]
    pub(super) unsafe fn free_chain<const H: bool, const BATCH: bool>(
        &self,
        slab: *mut SlabHeader,
        head: *mut u8,
        tail: *mut u8,
        cnt: usize,
    ) {
        loop {
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if cpu_slab != slab {
                break;
            }
            if cnt == 1 && freelist == head as usize {
                return self.report(head, FreeError::DoubleFree);
            }
            // SAFETY: per the caller, `tail` is ours until the cmpxchg
            // publishes it.
            unsafe { set_free_pointer_as::<H>(tail, &self.layout, freelist as *mut u8) };
            if P::this_cpu_cmpxchg_pair(
                self.pcpu,
                [freelist, tid],
                [head as usize, tid.wrapping_add(self.tid_step)],
            ) {
                self.stat(Stat::FreeFastpath);
                return;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
        if BATCH {
            let limit = self.free_batch.load(Ordering::Relaxed);
            if limit != 0 {
                // SAFETY: per the caller, `head` (a chain of one) is a
                // validated object handed over.
                return unsafe { self.free_batched::<H>(head, limit) };
            }
        }
        // SAFETY: per the caller.
        unsafe { self.slab_free(slab, head, tail, cnt, true) };
    }
}
