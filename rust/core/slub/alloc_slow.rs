// SPDX-License-Identifier: GPL-2.0
//! The allocation slow path, under the CPU lock: the CPU freelist, the CPU
//! slab's own freelist (remote frees), the CPU partial list, the node
//! partial lists (by distance), the empty-slab caches, then new pages.

use super::{Cache, CpuGuard, CpuSlab, MAX_NODES};
use crate::debug;
use crate::platform::Platform;
use crate::slab::{free_pointer_ok, get_free_pointer, inuse, SlabHeader, FROZEN};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    pub(super) fn cpu_lock(&self) -> CpuGuard {
        let (cpu, token) = P::cpu_lock();
        CpuGuard {
            c: P::per_cpu_ptr(self.pcpu, cpu).cast(),
            token,
        }
    }

    pub(super) fn cpu_unlock(g: CpuGuard) {
        P::cpu_unlock(g.token);
    }

    pub(super) fn alloc_slow(&self, gfp: u32, node: i32) -> *mut u8 {
        let mut g = self.cpu_lock();
        Self::stat_locked(g.c, Stat::AllocSlowpath);
        let obj = self.slab_alloc_locked(&mut g, gfp, node);
        Self::cpu_unlock(g);
        obj
    }

    /// Takes the first object of `freelist` (a chain of the CPU slab) for
    /// the CPU and keeps the rest as its lockless freelist. If the head or
    /// its free pointer is not an object of the slab, the freelist is
    /// corrupt: it is reported, the CPU slab is isolated, and None returned.
    pub(super) fn load_freelist(&self, c: *mut CpuSlab, freelist: *mut u8) -> Option<*mut u8> {
        // SAFETY: CPU lock held.
        let slab = unsafe { (*c).slab };
        let next = if free_pointer_ok(freelist, slab, &self.layout) {
            // SAFETY: `freelist` is an object of the CPU slab.
            let next = unsafe { get_free_pointer(freelist, &self.layout) };
            if free_pointer_ok(next, slab, &self.layout) {
                Some(next)
            } else {
                self.report_free_pointer(slab, freelist, next);
                None
            }
        } else {
            self.report_free_pointer(slab, ptr::null(), freelist);
            None
        };
        // SAFETY: CPU lock held; `c`'s fields are ours.
        unsafe {
            (*c).tid = (*c).tid.wrapping_add(self.tid_step);
            match next {
                Some(next) => (*c).freelist = next,
                None => {
                    (*c).freelist = ptr::null_mut();
                    (*c).slab = ptr::null_mut();
                    self.isolate(slab);
                }
            }
        }
        next.map(|_| freelist)
    }

    /// The slow path proper: CPU lock held on entry and exit (it may be
    /// dropped to allocate pages, after which `g` may name another CPU).
    pub(super) fn slab_alloc_locked(&self, g: &mut CpuGuard, gfp: u32, node: i32) -> *mut u8 {
        loop {
            let c = g.c;
            // SAFETY: CPU lock held: `c`'s fields are ours.
            let slab = unsafe { (*c).slab };
            if !slab.is_null() {
                if !Self::node_match(slab, node) {
                    Self::stat_locked(c, Stat::AllocNodeMismatch);
                    self.deactivate_cpu_slab(c);
                } else {
                    // SAFETY: CPU lock held.
                    let mut freelist = unsafe { (*c).freelist };
                    if freelist.is_null() {
                        freelist = self.get_freelist(slab);
                        if freelist.is_null() {
                            // The slab is full and now unfrozen, on no list.
                            // SAFETY: CPU lock held.
                            unsafe {
                                (*c).slab = ptr::null_mut();
                                (*c).tid = (*c).tid.wrapping_add(self.tid_step);
                            }
                            Self::stat_locked(c, Stat::DeactivateBypass);
                            continue;
                        }
                        Self::stat_locked(c, Stat::AllocRefill);
                    }
                    match self.load_freelist(c, freelist) {
                        Some(obj) => return obj,
                        None => continue,
                    }
                }
            }

            // No usable CPU slab. CPU partial list first.
            // SAFETY: CPU lock held.
            unsafe {
                let p = (*c).partial;
                if !p.is_null() {
                    (*c).partial = (*p).next;
                    (*c).partial_slabs -= 1;
                    (*p).next = ptr::null_mut();
                    (*c).slab = p;
                    (*c).tid = (*c).tid.wrapping_add(self.tid_step);
                    Self::stat_locked(c, Stat::CpuPartialAlloc);
                    continue;
                }
            }

            // Node partial lists, then empty-slab caches.
            let freelist = self.get_partial(c, node);
            if !freelist.is_null() {
                match self.load_freelist(c, freelist) {
                    Some(obj) => return obj,
                    None => continue,
                }
            }

            // A new slab from the page allocator.
            let blocking = P::gfp_allows_blocking(gfp);
            if blocking {
                Self::cpu_unlock(CpuGuard {
                    c: g.c,
                    token: g.token,
                });
            }
            let slab = self.new_slab(gfp, node);
            if blocking {
                *g = self.cpu_lock();
            }
            if slab.is_null() {
                return ptr::null_mut();
            }
            let c = g.c;
            Self::stat_locked(c, Stat::AllocSlab);
            // SAFETY: CPU lock held; the new slab is private until installed.
            unsafe {
                if !(*c).slab.is_null() {
                    // Refilled meanwhile (an interrupt, or another task
                    // after a migration): make room.
                    Self::stat_locked(c, Stat::CpuslabFlush);
                    self.deactivate_cpu_slab(c);
                }
                let [freelist, _] = (*slab).read_pair();
                (*slab).set_pair_private([0, (*slab).objects as usize | FROZEN]);
                (*c).slab = slab;
                match self.load_freelist(c, freelist as *mut u8) {
                    Some(obj) => return obj,
                    None => continue,
                }
            }
        }
    }

    /// Takes the whole slab freelist of the (frozen) CPU slab; when it is
    /// empty the slab is unfrozen instead (it is full).
    fn get_freelist(&self, slab: *mut SlabHeader) -> *mut u8 {
        loop {
            // SAFETY: `slab` is this CPU's live slab.
            let [freelist, counters] = unsafe { (*slab).read_pair() };
            // SAFETY: as above.
            let objects = unsafe { (*slab).objects } as usize;
            let new = if freelist == 0 {
                inuse(counters) as usize
            } else {
                objects | FROZEN
            };
            // SAFETY: the pair is 16-byte aligned inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [freelist, counters], [0, new]) } {
                return freelist as *mut u8;
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
    }

    /// Fills the CPU slab (and CPU partial list) from node partial lists,
    /// then from empty-slab caches. Returns the CPU slab's freelist or null.
    fn get_partial(&self, c: *mut CpuSlab, node: i32) -> *mut u8 {
        let local = if node >= 0 { node } else { P::numa_node_id() };
        let mut order = [0i32; MAX_NODES];
        order[0] = local;
        let mut n = 1;
        if node < 0 {
            n += P::fallback_nodes(local, &mut order[1..]);
        }
        for &nid in &order[..n] {
            let freelist = self.get_partial_node(c, nid);
            if !freelist.is_null() {
                return freelist;
            }
        }
        for &nid in &order[..n] {
            let slab = self.take_empty(nid);
            if !slab.is_null() {
                Self::stat_locked(c, Stat::EmptyCacheHit);
                // SAFETY: the slab came off the empty cache and is private;
                // CPU lock held for `c`.
                unsafe {
                    let [freelist, _] = (*slab).read_pair();
                    (*slab).set_pair_private([0, (*slab).objects as usize | FROZEN]);
                    (*c).slab = slab;
                    return freelist as *mut u8;
                }
            }
        }
        ptr::null_mut()
    }

    fn get_partial_node(&self, c: *mut CpuSlab, nid: i32) -> *mut u8 {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        if node.nr_partial.load(Ordering::Relaxed) == 0 {
            return ptr::null_mut();
        }
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        let ge = self.fill_ge.load(Ordering::Relaxed);
        let _g = P::node_lock(&node.list_lock);
        // SAFETY: list_lock held.
        let lists = unsafe { &mut *node.lists.get() };
        let mut freelist: *mut u8 = ptr::null_mut();
        let mut moved = 0u32;
        loop {
            let slab = lists.partial.pop_front();
            if slab.is_null() {
                break;
            }
            node.nr_partial
                .store(lists.partial.len(), Ordering::Relaxed);
            if freelist.is_null() {
                freelist = self.freeze(slab, true);
                // SAFETY: CPU lock held for `c`.
                unsafe {
                    (*c).slab = slab;
                }
                Self::stat_locked(c, Stat::AllocFromPartial);
            } else {
                self.freeze(slab, false);
                // SAFETY: CPU lock held; `slab` is frozen and ours now.
                unsafe {
                    (*slab).next = (*c).partial;
                    (*c).partial = slab;
                    (*c).partial_slabs += 1;
                }
                moved += 1;
                Self::stat_locked(c, Stat::CpuPartialNode);
            }
            let half = limit / 2;
            if limit == 0 || if ge { moved >= half } else { moved > half } {
                break;
            }
        }
        freelist
    }

    /// Freezes a node-partial slab; with `take`, also takes its whole
    /// freelist (for the CPU slab) and returns it.
    fn freeze(&self, slab: *mut SlabHeader, take: bool) -> *mut u8 {
        loop {
            // SAFETY: `slab` is live and was just unlinked under list_lock.
            let [freelist, counters] = unsafe { (*slab).read_pair() };
            // SAFETY: as above.
            let objects = unsafe { (*slab).objects } as usize;
            let new = if take {
                [0, objects | FROZEN]
            } else {
                [freelist, counters | FROZEN]
            };
            // SAFETY: the pair is inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [freelist, counters], new) } {
                return if take {
                    freelist as *mut u8
                } else {
                    ptr::null_mut()
                };
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
    }

    pub(super) fn take_empty(&self, nid: i32) -> *mut SlabHeader {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        let _g = P::node_lock(&node.list_lock);
        // SAFETY: list_lock held.
        unsafe { (*node.lists.get()).empty.pop_front() }
    }

    pub(super) fn new_slab(&self, gfp: u32, node: i32) -> *mut SlabHeader {
        let base = P::alloc_pages(node, gfp & !self.gfp_zero, self.layout.order);
        if base.is_null() {
            return ptr::null_mut();
        }
        let nid = P::page_node(base);
        let nid = if (nid as usize) < self.nr_nodes {
            nid
        } else {
            0
        };
        let n = self.layout.objects;
        let seq = self.random_seq.load(Ordering::Acquire);
        let (seq, start) = if self.random_freelist.load(Ordering::Relaxed) && !seq.is_null() {
            // SAFETY: `random_seq` holds `objects` indices for the cache's life.
            let s = unsafe { core::slice::from_raw_parts(seq, n) };
            (s, P::random().checked_rem(n).unwrap_or(0))
        } else {
            (&[][..], 0)
        };
        // SAFETY: `base` is `slab_bytes` of fresh memory aligned to its size.
        let slab =
            unsafe { SlabHeader::init_shuffled(base, &self.layout, self.owner(), nid, seq, start) };
        if self.debug != 0 {
            for idx in 0..n {
                // SAFETY: each object is inside the new, private slab.
                unsafe {
                    debug::init_free_object(
                        base.add(self.layout.object_offset(idx)),
                        &self.layout,
                        self.poisoned,
                    )
                };
            }
        }
        if let Some(ctor) = self.ctor {
            for idx in 0..self.layout.objects {
                // SAFETY: each object is inside the slab; with a ctor the
                // free pointer is outside the object.
                unsafe { ctor(base.add(self.layout.object_offset(idx)).cast()) };
            }
        }
        self.node(nid).nr_slabs.fetch_add(1, Ordering::Relaxed);
        slab
    }
}
