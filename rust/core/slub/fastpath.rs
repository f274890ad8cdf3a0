// SPDX-License-Identifier: GPL-2.0
//! The entry points `alloc` and `free` and their lockless fast paths: one
//! per-CPU cmpxchg16b on the CPU's `(freelist, tid)` pair, nothing disabled.
//! Everything that misses the CPU slab goes to `alloc_slow.rs` or
//! `free_slow.rs`.

use super::chain::Chain;
use super::{
    Cache, CpuSlab, MODE_HARDENED, MODE_OUT_HARDENED, MODE_OUT_PLAIN, MODE_PLAIN, NO_NODE,
};
use crate::platform::Platform;
use crate::slab::{
    free_pointer_ok, get_free_pointer_as, get_free_pointer_with, set_free_pointer_as, FreeError,
    SlabHeader,
};
use crate::stat::Stat;
use core::ptr;

/// What one try at the lockless alloc (`alloc_try`) came to.
enum AllocTry {
    /// The object.
    Got(*mut u8),
    /// The CPU freelist is empty, of another node, or its next pointer is
    /// suspect: the slow path decides.
    Miss,
    /// The cmpxchg lost to an interrupt or a migration: try again.
    Lost,
}

impl<P: Platform> Cache<P> {
    pub(super) fn node_match(slab: *mut SlabHeader, node: i32) -> bool {
        // SAFETY: a hint read of a header field; slab memory stays mapped.
        node < 0
            || (!slab.is_null()
                && i32::from(unsafe { ptr::read_volatile(ptr::addr_of!((*slab).node)) }) == node)
    }

    /// Allocates one object on `node` (negative: any, local first); null when
    /// memory ran out. Inlined into the C API's functions, where `node` is
    /// often a constant.
    ///
    /// The hit path makes no call, only tail calls, so it needs no frame
    /// beyond the register cmpxchg16b takes (`%rbx`): a miss, a lost
    /// cmpxchg and `__GFP_ZERO` each continue in an out-of-line function.
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
        // One branch picks the inline path of the default (hardened)
        // caches, a second the inline plain path; debug caches are one
        // jump away. A `match`: with an `if` chain LLVM tested plain first
        // (3 instructions more on the default path; scripts/fastpath-shape.py
        // holds the budget).
        match self.mode {
            MODE_HARDENED => self.alloc_fast::<true, false>(gfp, node),
            MODE_PLAIN => self.alloc_fast::<false, false>(gfp, node),
            _ => self.alloc_other(gfp, node),
        }
    }

    /// `alloc` of the caches whose slab headers are outside their slabs
    /// (`OUT`: the same lockless path, but for the slab's base), and of
    /// debug caches.
    #[inline(never)]
    fn alloc_other(&self, gfp: u32, node: i32) -> *mut u8 {
        match self.mode {
            MODE_OUT_HARDENED => self.alloc_fast::<true, true>(gfp, node),
            MODE_OUT_PLAIN => self.alloc_fast::<false, true>(gfp, node),
            _ => self.alloc_debug(gfp, node),
        }
    }

    /// The locked path of debug caches, zeroing included.
    #[inline(never)]
    fn alloc_debug(&self, gfp: u32, node: i32) -> *mut u8 {
        let obj = self.debug_alloc(gfp, node);
        self.zero_if_asked(gfp, obj)
    }

    /// `obj` (null or a fresh object), zeroed if `gfp` asks for it.
    #[inline(always)]
    fn zero_if_asked(&self, gfp: u32, obj: *mut u8) -> *mut u8 {
        if !obj.is_null() && gfp & self.gfp_zero != 0 {
            // SAFETY: `obj` is a freshly allocated object of `object_size`
            // bytes.
            unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
        }
        obj
    }

    /// `zero_if_asked` for the fast path's hit, out of line. The result
    /// is `obj` passed through `black_box`: were the compiler to see that
    /// it returns its argument, the caller would keep `obj` in a saved
    /// register across a call instead of making this a tail call (the
    /// push and pop `scripts/fastpath-shape.py` counts in `make check`).
    #[inline(never)]
    fn zero_fill(&self, obj: *mut u8) -> *mut u8 {
        // SAFETY: `obj` is a freshly allocated object of `object_size` bytes.
        unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
        core::hint::black_box(obj)
    }

    /// The slow path of a hardened (`HARDENED`) or plain cache, zeroing included.
    #[inline(never)]
    fn alloc_miss(&self, gfp: u32, node: i32) -> *mut u8 {
        let obj = self.alloc_slow(gfp, node);
        self.zero_if_asked(gfp, obj)
    }

    /// After a lost cmpxchg: the fast path again, in a loop.
    #[inline(never)]
    fn alloc_retry<const HARDENED: bool, const OUT: bool>(&self, gfp: u32, node: i32) -> *mut u8 {
        let obj = self.alloc_inner::<HARDENED, OUT>(gfp, node);
        self.zero_if_asked(gfp, obj)
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
    pub(super) fn cpu_snapshot(&self) -> (usize, usize, *mut SlabHeader) {
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

    /// The per-CPU cmpxchg16b of the fast paths: without a lock prefix
    /// (it only races with this CPU's interrupts and preemption), or with
    /// one in the `locked_cmpxchg` build variant (the bench's experiment,
    /// `make bench SUITE=cmpxchg`). Every caller commits `tid +
    /// TID_STEP` with its new freelist, as the `CpuSlab` invariant asks.
    #[inline(always)]
    fn cpu_cmpxchg(&self, old: [usize; 2], new: [usize; 2]) -> bool {
        // SAFETY: `pcpu` is the cache's live per-CPU area of `CpuSlab`s,
        // whose first 16 bytes are the aligned (freelist, tid) pair.
        unsafe {
            if cfg!(rslub_locked_cmpxchg) {
                P::this_cpu_cmpxchg_pair_locked(self.pcpu, old, new)
            } else {
                P::this_cpu_cmpxchg_pair(self.pcpu, old, new)
            }
        }
    }

    /// One try at the lockless alloc from this CPU's freelist. `OUT`: the
    /// cache's slab headers are outside the slabs (`Layout::header_outside`).
    #[inline(always)]
    fn alloc_try<const HARDENED: bool, const OUT: bool>(&self, node: i32) -> AllocTry {
        let (obj, tid, slab) = self.cpu_snapshot();
        if obj == 0 || !Self::node_match(slab, node) {
            return AllocTry::Miss;
        }
        let next = if P::FREED_PAGES_MAY_UNMAP {
            // `obj` may have been taken since and its slab freed and
            // unmapped: a read that fails then (the cmpxchg would too).
            let read = |p: *const usize| {
                // SAFETY: the slot is word aligned; `read_word_nofault`
                // copes with an unmapped one.
                unsafe { P::read_word_nofault(p) }
            };
            match get_free_pointer_with::<HARDENED>(obj as *const u8, &self.layout, read) {
                Some(next) => next,
                None => return AllocTry::Lost,
            }
        } else {
            // SAFETY: `obj` was on this CPU's freelist; if it has been taken
            // since, the value read is garbage but the cmpxchg below fails,
            // and its slab's pages stay mapped when freed.
            unsafe { get_free_pointer_as::<HARDENED>(obj as *const u8, &self.layout) }
        };
        // The slab's base: the header's address when it is in the slab,
        // else that of the slab `obj` is in (no header read: a stale
        // snapshot's header may be gone, and the cmpxchg fails then).
        let base = if OUT {
            self.layout.slab_base(obj as *const u8)
        } else {
            slab as usize
        };
        // Hardened: a next pointer that is no object of the slab is either
        // a race (the object was taken meanwhile) or corruption; the slow
        // path tells them apart under the CPU lock.
        if HARDENED && !free_pointer_ok(next, base, &self.layout) {
            return AllocTry::Miss;
        }
        if !self.cpu_cmpxchg(
            [obj, tid],
            [next as usize, tid.wrapping_add(Self::TID_STEP)],
        ) {
            return AllocTry::Lost;
        }
        self.stat(Stat::AllocFastpath);
        AllocTry::Got(obj as *mut u8)
    }

    /// The lockless alloc: the object, or a tail call to what continues
    /// (slow path, retry, zeroing).
    #[inline(always)]
    fn alloc_fast<const HARDENED: bool, const OUT: bool>(&self, gfp: u32, node: i32) -> *mut u8 {
        match self.alloc_try::<HARDENED, OUT>(node) {
            AllocTry::Got(obj) if gfp & self.gfp_zero != 0 => self.zero_fill(obj),
            AllocTry::Got(obj) => obj,
            AllocTry::Miss => self.alloc_miss(gfp, node),
            AllocTry::Lost => self.alloc_retry::<HARDENED, OUT>(gfp, node),
        }
    }

    /// The lockless alloc in a loop (after a lost cmpxchg), without zeroing.
    #[inline(always)]
    fn alloc_inner<const HARDENED: bool, const OUT: bool>(&self, gfp: u32, node: i32) -> *mut u8 {
        loop {
            self.stat(Stat::CmpxchgDoubleCpuFail);
            match self.alloc_try::<HARDENED, OUT>(node) {
                AllocTry::Got(obj) => return obj,
                AllocTry::Miss => return self.alloc_slow(gfp, node),
                AllocTry::Lost => {}
            }
        }
    }

    /// The slab of `obj` if `obj` is an object start of a live slab of this
    /// cache, whose headers are outside the slabs if `OUT`. The address
    /// check is the cheap inline one (`Platform::addr_valid`); debug caches
    /// add the full one first (`free_debug_checked`).
    #[inline(always)]
    fn valid_object_slab<const OUT: bool>(&self, obj: *const u8) -> Option<*mut SlabHeader> {
        if !P::addr_valid(obj) {
            return None;
        }
        let base = self.layout.slab_base(obj);
        let slab = Self::header_block::<OUT>(base)?;
        // SAFETY: in the slab, `slab` is the aligned-down start of valid
        // memory; outside, a header block (`header_at`). The object check
        // trusts the header only once its magic matches.
        let live = unsafe { (*slab).is_live_at(self.slab_secret, base) };
        let index = self.layout.object_index((obj as usize).wrapping_sub(base));
        (live && index.is_some()).then_some(slab)
    }

    /// Validates `obj` as an object start of this cache (headers outside
    /// the slabs if `OUT`); returns its slab, or why it is refused.
    #[inline(always)]
    pub(super) fn object_slab<const OUT: bool>(
        &self,
        obj: *const u8,
    ) -> Result<*mut SlabHeader, FreeError> {
        match self.valid_object_slab::<OUT>(obj) {
            Some(slab) => Ok(slab),
            None => Err(self.refusal(obj)),
        }
    }

    /// `object_slab` for this cache's layout, off the fast paths.
    pub(super) fn object_slab_any(&self, obj: *const u8) -> Result<*mut SlabHeader, FreeError> {
        if self.layout.header_outside {
            self.object_slab::<true>(obj)
        } else {
            self.object_slab::<false>(obj)
        }
    }

    /// Whether `obj` is the start of an object of this cache or of its
    /// fallback (allocated or not): the check `free` makes before it
    /// touches anything.
    pub fn is_object(&self, obj: *const u8) -> bool {
        self.object_slab_any(obj).is_ok()
            || self
                .fallback()
                .is_some_and(|fb| fb.object_slab_any(obj).is_ok())
    }

    /// Why `valid_object_slab` refused `obj`.
    #[cold]
    #[inline(never)]
    fn refusal(&self, obj: *const u8) -> FreeError {
        if !P::addr_valid(obj) {
            return FreeError::NotSlabMemory;
        }
        let base = self.layout.slab_base(obj);
        let slab = self.header_of(base);
        if slab.is_null() {
            return FreeError::NotOurSlab;
        }
        // SAFETY: as in `valid_object_slab`.
        match unsafe { (*slab).check_object(obj, base, &self.layout, self.slab_secret) } {
            Err(e) => e,
            // Not reached: the two checks agree.
            Ok(()) => FreeError::NotOurSlab,
        }
    }

    /// Frees `obj`. A pointer that is not an allocated object of this cache
    /// is reported and ignored; null is ignored silently.
    ///
    /// # Safety
    /// If `obj` is an allocated object of this cache, the caller owns it and
    /// does not use it afterwards.
    #[inline(always)]
    pub unsafe fn free(&self, obj: *mut u8) {
        // Branches as in `alloc`.
        // SAFETY: the caller gives up `obj` (if it is an object of ours).
        unsafe {
            match self.mode {
                MODE_HARDENED => self.free_fast::<true, false>(obj),
                MODE_PLAIN => self.free_fast::<false, false>(obj),
                _ => self.free_other(obj),
            }
        }
    }

    /// `free` of the caches whose slab headers are outside their slabs,
    /// and of debug caches (as `alloc_other`).
    ///
    /// # Safety
    /// As for `free`.
    // Not `#[cold]`, as `free_debug_checked`.
    #[inline(never)]
    unsafe fn free_other(&self, obj: *mut u8) {
        // SAFETY: per the caller (same contract).
        unsafe {
            match self.mode {
                MODE_OUT_HARDENED => self.free_fast::<true, true>(obj),
                MODE_OUT_PLAIN => self.free_fast::<false, true>(obj),
                _ => self.free_debug_checked(obj),
            }
        }
    }

    /// The lockless free of a hardened (`HARDENED`) or plain cache: validation
    /// inline, then the push onto this CPU's freelist when `obj` is of the
    /// CPU slab. Like `alloc_fast` it makes only tail calls: a refused
    /// pointer, a miss of the CPU slab and a lost cmpxchg continue out of
    /// line.
    ///
    /// With `OUT` (slab headers outside the slabs) the CPU slab is tested
    /// first, by its base: an object start of it is an object of this
    /// cache, so the hit needs no look at the page that names the header;
    /// anything else is validated out of line (`free_out_miss`).
    ///
    /// # Safety
    /// As for `free`.
    #[inline(always)]
    unsafe fn free_fast<const HARDENED: bool, const OUT: bool>(&self, obj: *mut u8) {
        let (slab, freelist, tid) = if OUT {
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if !self.on_cpu_slab(cpu_slab, obj) {
                // SAFETY: the caller gives up `obj`.
                return unsafe { self.free_out_miss::<HARDENED>(obj) };
            }
            (cpu_slab, freelist, tid)
        } else {
            // Null is refused too, and told apart in `free_refused`.
            let Some(slab) = self.valid_object_slab::<false>(obj) else {
                return self.free_refused(obj);
            };
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if cpu_slab != slab {
                // SAFETY: `slab` was validated just now and the caller gives
                // up `obj`.
                return unsafe { self.free_off_cpu_slab::<HARDENED>(slab, obj) };
            }
            (slab, freelist, tid)
        };
        // Two branches, not one `||`: the compiler would compute both
        // compares into flags and OR them (more instructions on the hit
        // path, which scripts/fastpath-shape.py counts).
        if freelist == obj as usize {
            return self.report(obj, FreeError::DoubleFree);
        }
        // The free_batch variant: an object batched while its slab was not
        // the CPU slab must not also go on the CPU freelist.
        #[cfg(rslub_free_batch)]
        // SAFETY: validated above.
        if unsafe { self.is_batched::<HARDENED>(obj) } {
            return self.report(obj, FreeError::DoubleFree);
        }
        // SAFETY: the caller gives up `obj`, ours until the cmpxchg
        // publishes it.
        unsafe { set_free_pointer_as::<HARDENED>(obj, &self.layout, freelist as *mut u8) };
        if !self.cpu_cmpxchg(
            [freelist, tid],
            [obj as usize, tid.wrapping_add(Self::TID_STEP)],
        ) {
            self.stat(Stat::CmpxchgDoubleCpuFail);
            // With `OUT`, `slab` came from a snapshot that is stale now,
            // unchecked: `obj` is validated anew.
            // SAFETY: as above.
            return unsafe {
                if OUT {
                    self.free_out_miss::<HARDENED>(obj)
                } else {
                    self.free_miss::<HARDENED, OUT>(slab, obj)
                }
            };
        }
        self.stat(Stat::FreeFastpath);
    }

    /// Whether `obj` is an object start of `cpu_slab` (a CPU slab of this
    /// cache from a snapshot, or null), judged by the slab's base alone.
    /// A stale snapshot may name a slab another context has since retired
    /// (and its header block freed): the base read then is garbage, and
    /// the cmpxchg of the same snapshot's tid fails.
    #[inline(always)]
    fn on_cpu_slab(&self, cpu_slab: *mut SlabHeader, obj: *const u8) -> bool {
        if cpu_slab.is_null() {
            return false;
        }
        // SAFETY: only the field's address is computed (no read).
        let at = unsafe { ptr::addr_of!((*cpu_slab).base) };
        let base = if P::FREED_PAGES_MAY_UNMAP {
            // SAFETY: word aligned; a header block freed and unmapped
            // since reads as a failure.
            match unsafe { P::read_word_nofault(at.cast()) } {
                Some(b) => b,
                None => return false,
            }
        } else {
            // SAFETY: a header block, which stays mapped when freed.
            unsafe { ptr::read_volatile(at) }
        };
        self.layout.slab_base(obj) == base
            && self
                .layout
                .object_index((obj as usize).wrapping_sub(base))
                .is_some()
    }

    /// A free of a cache with headers outside that missed the CPU slab
    /// (`free_fast`): validated through the slab's page, then freed to its
    /// slab, as the other caches' frees off the CPU slab are (a slab that
    /// became the CPU slab since takes the lockless push onto its own
    /// freelist there).
    ///
    /// # Safety
    /// As for `free`.
    #[inline(never)]
    unsafe fn free_out_miss<const HARDENED: bool>(&self, obj: *mut u8) {
        match self.valid_object_slab::<true>(obj) {
            // SAFETY: validated just now; the caller gives up `obj`.
            Some(slab) => unsafe { self.free_off_cpu_slab::<HARDENED>(slab, obj) },
            None => self.free_refused(obj),
        }
    }

    /// A pointer `free_fast` refused: null (ignored) or one to report.
    #[cold]
    #[inline(never)]
    fn free_refused(&self, obj: *mut u8) {
        // SAFETY: the free paths pass on their caller's contract: if `obj`
        // is an allocated object (of the fallback's), it is handed over.
        if !obj.is_null() && !unsafe { self.free_to_fallback(obj) } {
            self.report(obj, self.refusal(obj));
        }
    }

    /// A single free of an object that is not of this CPU's slab (as the
    /// fast path or `free_miss` found it; no second look): straight to its
    /// slab, or, in the `free_batch` build variant with batching on, to
    /// this CPU's batch (`free_batch.rs`).
    ///
    /// # Safety
    /// `slab` is a slab of this cache validated by `object_slab`; `obj` is
    /// one of its objects, handed over by the caller.
    #[inline(never)]
    unsafe fn free_off_cpu_slab<const HARDENED: bool>(&self, slab: *mut SlabHeader, obj: *mut u8) {
        #[cfg(rslub_free_batch)]
        {
            let limit = self.free_batch();
            if limit != 0 {
                // SAFETY: per the caller.
                return unsafe { self.free_batched::<HARDENED>(obj, limit) };
            }
        }
        // SAFETY: per the caller.
        unsafe { self.slab_free(slab, Chain::one(obj), true) }
    }

    /// The rest of a single free whose cmpxchg the fast path lost: the
    /// lockless push again while `slab` is still the CPU slab, else the
    /// single free's way off the CPU slab.
    ///
    /// # Safety
    /// As for `free_off_cpu_slab`.
    #[inline(never)]
    unsafe fn free_miss<const HARDENED: bool, const OUT: bool>(
        &self,
        slab: *mut SlabHeader,
        obj: *mut u8,
    ) {
        // SAFETY: per the caller, the chain of `obj` alone is a chain of
        // `slab` handed over; `obj` stays ours if the push is not made.
        unsafe {
            if !self.cpu_slab_push::<HARDENED, OUT>(slab, &Chain::one(obj)) {
                self.free_off_cpu_slab::<HARDENED>(slab, obj);
            }
        }
    }

    /// `free` of a debug cache: the full address check, then the locked
    /// debug path.
    ///
    /// # Safety
    /// As for `free`.
    // Not `#[cold]`: with the hint LLVM merged the hit paths' returns
    // behind a jump, one instruction more on the hardened free
    // (scripts/fastpath-shape.py caught it).
    #[inline(never)]
    unsafe fn free_debug_checked(&self, obj: *mut u8) {
        if obj.is_null() {
            return;
        }
        if !P::addr_has_page(obj) {
            return self.report(obj, FreeError::NotSlabMemory);
        }
        match self.object_slab_any(obj) {
            // SAFETY: validated just now; the caller gives up `obj`.
            Ok(slab) => unsafe { self.debug_free(slab, obj) },
            Err(e) => self.report(obj, e),
        }
    }

    /// Frees the chain `ch` of `slab`: the lockless push onto this CPU's
    /// freelist when `slab` is this CPU's slab (one per-CPU cmpxchg16b),
    /// else `slab_free`. Hardened (`HARDENED`) or plain free pointers; the
    /// slab's header outside it (`OUT`) or in.
    ///
    /// # Safety
    /// `slab` is a slab of this cache validated by `object_slab`; `ch` is
    /// a chain of its objects owned by the caller, linked the `HARDENED` way, none
    /// twice.
    #[inline(always)]
    pub(super) unsafe fn free_chain<const HARDENED: bool, const OUT: bool>(
        &self,
        slab: *mut SlabHeader,
        ch: Chain,
    ) {
        // SAFETY: per the caller.
        unsafe {
            if !self.cpu_slab_push::<HARDENED, OUT>(slab, &ch) {
                self.slab_free(slab, ch, true);
            }
        }
    }

    /// Pushes the chain `ch` of `slab` onto this CPU's freelist while
    /// `slab` is this CPU's slab, retrying lost cmpxchgs. A chain member
    /// that heads the freelist (another context freed it too) is reported
    /// and the chain dropped (`chain.rs`). True when the chain was pushed
    /// or dropped; false when `slab` is not (or no longer) the CPU slab:
    /// the chain is still the caller's (a lost try may have written its
    /// tail's free pointer, which every push writes anew).
    ///
    /// # Safety
    /// As for `free_chain`.
    #[inline(always)]
    unsafe fn cpu_slab_push<const HARDENED: bool, const OUT: bool>(
        &self,
        slab: *mut SlabHeader,
        ch: &Chain,
    ) -> bool {
        loop {
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if cpu_slab != slab {
                return false;
            }
            // SAFETY: per the caller.
            if unsafe { self.chain_has::<OUT>(slab, ch, freelist) } {
                // Freed meanwhile by another context: drop the chain.
                self.report(freelist as *const u8, FreeError::DoubleFree);
                return true;
            }
            // SAFETY: per the caller, `ch.tail` is ours until the cmpxchg
            // publishes it.
            unsafe { set_free_pointer_as::<HARDENED>(ch.tail, &self.layout, freelist as *mut u8) };
            if self.cpu_cmpxchg(
                [freelist, tid],
                [ch.head as usize, tid.wrapping_add(Self::TID_STEP)],
            ) {
                self.stat(Stat::FreeFastpath);
                return true;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
    }
}
