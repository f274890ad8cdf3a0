// SPDX-License-Identifier: GPL-2.0
//! The allocation slow path, under the CPU lock: the CPU freelist, the CPU
//! slab's own freelist (remote frees), the CPU partial list, the node
//! partial lists (by distance), the empty-slab caches, then new pages.

use super::{Cache, CpuGuard};
use crate::debug;
use crate::platform::Platform;
use crate::slab::{free_pointer_ok, get_free_pointer, inuse, SlabHeader, FROZEN};
use crate::stat::Stat;
use core::convert::Infallible;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::Ordering;

/// The nodes an allocation looks at, nearest first: an iterator that finds
/// each next node as it goes, so the slow path (IRQs off) keeps no table on
/// its stack. The local node costs nothing; each further node is one pass
/// over the nodes, taken only when every nearer one had nothing.
pub(super) struct NodeOrder<P> {
    local: i32,
    nr_nodes: i32,
    next: NextNode,
    _platform: PhantomData<P>,
}

// By hand: a derive would ask `P: Copy`. A copy starts over where the
// original stands (the slow paths walk the order twice).
impl<P> Clone for NodeOrder<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for NodeOrder<P> {}

#[derive(Clone, Copy)]
enum NextNode {
    Local,
    /// The node after `(distance, id)` (a remote node already given).
    After(i32, i32),
    /// The first remote node.
    FirstRemote,
    Done,
}

impl<P: Platform> Iterator for NodeOrder<P> {
    type Item = i32;

    fn next(&mut self) -> Option<i32> {
        let after = match self.next {
            NextNode::Local => {
                self.next = NextNode::FirstRemote;
                return Some(self.local);
            }
            NextNode::Done => return None,
            NextNode::FirstRemote => None,
            NextNode::After(d, n) => Some((d, n)),
        };
        let local = self.local;
        let best = nearest_after(local, self.nr_nodes, after, |n| {
            P::node_has_memory(n).then(|| P::node_distance(local, n))
        });
        self.next = match best {
            Some((d, n)) => NextNode::After(d, n),
            None => NextNode::Done,
        };
        best.map(|(_, n)| n)
    }
}

/// The remote node (not `local`) nearest to `local` past `after`, as
/// `(distance, id)` ordered by distance, then id; `dist(n)` is `n`'s
/// distance from `local`, None for a node without memory.
fn nearest_after(
    local: i32,
    nr_nodes: i32,
    after: Option<(i32, i32)>,
    dist: impl Fn(i32) -> Option<i32>,
) -> Option<(i32, i32)> {
    let mut best: Option<(i32, i32)> = None;
    for n in 0..nr_nodes {
        if n == local {
            continue;
        }
        let Some(d) = dist(n) else { continue };
        let key = (d, n);
        if after.is_some_and(|a| key <= a) || best.is_some_and(|b| key >= b) {
            continue;
        }
        best = Some(key);
    }
    best
}

impl<P: Platform> Cache<P> {
    /// The nodes an allocation for `node` takes partial and empty slabs
    /// from: `node` itself; for `NO_NODE` the local node, then every other
    /// node with memory, nearest first by `node_distance`, ties by id
    /// (upstream's zonelist order).
    pub(super) fn node_order(&self, node: i32) -> NodeOrder<P> {
        let local = if node >= 0 { node } else { P::numa_node_id() };
        NodeOrder {
            local,
            // No remote node when a node was asked for.
            nr_nodes: if node >= 0 { 0 } else { self.nr_nodes as i32 },
            next: NextNode::Local,
            _platform: PhantomData,
        }
    }

    /// Takes the lock of the CPU the caller runs on.
    #[inline(always)]
    pub(super) fn cpu_lock(&self) -> CpuGuard<P> {
        CpuGuard::lock(&self.pcpu)
    }

    pub(super) fn alloc_slow(&self, gfp: u32, node: i32) -> *mut u8 {
        let obj = self.alloc_slow_locked(gfp, node);
        if obj.is_null() && !self.fallback.is_null() {
            return self.alloc_fallback(gfp, node);
        }
        obj
    }

    /// `alloc_slow` of the cache itself, under its CPU lock.
    fn alloc_slow_locked(&self, gfp: u32, node: i32) -> *mut u8 {
        let mut g = self.cpu_lock();
        g.stat(Stat::AllocSlowpath);
        // The free_batch variant: the most recently batched object first.
        #[cfg(rslub_free_batch)]
        if let Some(obj) = self.batch_pop(&mut g, node) {
            return obj;
        }
        self.slab_alloc_locked(&mut g, gfp, node)
    }

    /// Takes the first object of `freelist` (a chain of the CPU slab) for
    /// the CPU and keeps the rest as its lockless freelist. If the head or
    /// its free pointer is not an object of the slab, the freelist is
    /// corrupt: it is reported, the CPU slab is isolated, and None returned.
    pub(super) fn load_freelist(&self, g: &mut CpuGuard<P>, freelist: *mut u8) -> Option<*mut u8> {
        let slab = g.slab;
        // SAFETY: the CPU slab, live while it is this CPU's.
        let base = unsafe { self.base_of(slab) };
        let next = if free_pointer_ok(freelist, base, &self.layout) {
            // SAFETY: `freelist` is an object of the CPU slab, which stays
            // mapped while it is this CPU's.
            let next = unsafe { get_free_pointer(freelist, &self.layout) };
            if free_pointer_ok(next, base, &self.layout) {
                Some(next)
            } else {
                // SAFETY: `freelist` is an object of the CPU slab.
                unsafe { self.report_free_pointer(slab, freelist, next) };
                None
            }
        } else {
            // SAFETY: the CPU slab is a slab of this cache.
            unsafe { self.report_free_pointer(slab, ptr::null(), freelist) };
            None
        };
        // INVARIANT: the CPU freelist (and, on a corrupt one, the CPU slab)
        // changes below: a new tid first, under the lock.
        g.tid = g.tid.wrapping_add(Self::TID_STEP);
        match next {
            Some(next) => g.freelist = next,
            None => {
                g.freelist = ptr::null_mut();
                g.slab = ptr::null_mut();
                // SAFETY: the former CPU slab is live and on no list.
                unsafe { self.isolate(slab) };
            }
        }
        next.map(|_| freelist)
    }

    /// The slow path proper: CPU lock held on entry and exit (it may be
    /// dropped to allocate pages, after which `g` may name another CPU).
    pub(super) fn slab_alloc_locked(&self, g: &mut CpuGuard<P>, gfp: u32, node: i32) -> *mut u8 {
        loop {
            let slab = g.slab;
            if !slab.is_null() {
                if !Self::node_match(slab, node) {
                    g.stat(Stat::AllocNodeMismatch);
                    self.deactivate_cpu_slab(g);
                } else {
                    let mut freelist = g.freelist;
                    if freelist.is_null() {
                        // SAFETY: `slab` is this CPU's slab (lock held).
                        freelist = unsafe { self.get_freelist(slab) };
                        if freelist.is_null() {
                            // The slab is full and now unfrozen, on no list.
                            // INVARIANT: the CPU lets it go with a new tid.
                            g.slab = ptr::null_mut();
                            g.tid = g.tid.wrapping_add(Self::TID_STEP);
                            g.stat(Stat::DeactivateBypass);
                            continue;
                        }
                        g.stat(Stat::AllocRefill);
                    }
                    match self.load_freelist(g, freelist) {
                        Some(obj) => return obj,
                        None => continue,
                    }
                }
            }

            // No usable CPU slab. CPU partial list first.
            let p = g.partial;
            if !p.is_null() {
                // SAFETY: by the `CpuSlab` invariant, members of the CPU
                // partial list are frozen slabs of this CPU, whose `next`
                // link is ours under the lock (`SlabHeader` invariant).
                unsafe {
                    g.partial = (*p).next;
                    (*p).next = ptr::null_mut();
                }
                // INVARIANT: the count follows the chain; the new CPU slab
                // comes with a new tid (its freelist stays null until
                // `load_freelist`).
                g.partial_slabs -= 1;
                g.slab = p;
                g.tid = g.tid.wrapping_add(Self::TID_STEP);
                g.stat(Stat::CpuPartialAlloc);
                continue;
            }

            // Node partial lists, then empty-slab caches.
            let freelist = self.get_partial(g, node);
            if !freelist.is_null() {
                match self.load_freelist(g, freelist) {
                    Some(obj) => return obj,
                    None => continue,
                }
            }

            // A new slab from the page allocator, with the CPU lock dropped
            // when the allocation may sleep.
            let slab = if P::gfp_allows_blocking(gfp) {
                g.unlocked(&self.pcpu, || self.new_slab(gfp, node))
            } else {
                self.new_slab(gfp, node)
            };
            if slab.is_null() {
                return ptr::null_mut();
            }
            g.stat(Stat::AllocSlab);
            if !g.slab.is_null() {
                // Refilled meanwhile (an interrupt, or another task after a
                // migration): make room.
                g.stat(Stat::CpuslabFlush);
                self.deactivate_cpu_slab(g);
            }
            // SAFETY: the new slab is private until installed.
            let freelist = unsafe { self.install_private(g, slab) };
            match self.load_freelist(g, freelist) {
                Some(obj) => return obj,
                None => continue,
            }
        }
    }

    /// Makes a private slab (new, or from an empty-slab cache) the CPU slab:
    /// frozen, every object taken; returns its freelist.
    ///
    /// # Safety
    /// `slab` is a live slab of this cache on no list that no other CPU can
    /// reach.
    unsafe fn install_private(&self, g: &mut CpuGuard<P>, slab: *mut SlabHeader) -> *mut u8 {
        // INVARIANT: frozen for this CPU with its whole freelist taken (so
        // every object counts as in use); the caller's `load_freelist`
        // installs that freelist with a new tid.
        // SAFETY: per the caller, the slab is live and private.
        unsafe {
            let [freelist, _] = (*slab).read_pair();
            (*slab).set_pair_private([0, self.layout.objects | FROZEN]);
            g.slab = slab;
            freelist as *mut u8
        }
    }

    /// Takes the whole slab freelist of the (frozen) CPU slab; when it is
    /// empty the slab is unfrozen instead (it is full).
    ///
    /// # Safety
    /// `slab` is the CPU slab of the CPU whose lock the caller holds.
    unsafe fn get_freelist(&self, slab: *mut SlabHeader) -> *mut u8 {
        let objects = self.layout.objects;
        // SAFETY: per the caller, `slab` is live.
        let Ok([freelist, _]) = unsafe {
            self.update_pair(slab, |[freelist, counters]| {
                Ok::<_, Infallible>(if freelist == 0 {
                    [0, inuse(counters) as usize]
                } else {
                    [0, objects | FROZEN]
                })
            })
        };
        freelist as *mut u8
    }

    /// Fills the CPU slab (and CPU partial list) from node partial lists,
    /// then from empty-slab caches. Returns the CPU slab's freelist or null.
    fn get_partial(&self, g: &mut CpuGuard<P>, node: i32) -> *mut u8 {
        let order = self.node_order(node);
        for nid in order {
            let freelist = self.get_partial_node(g, nid);
            if !freelist.is_null() {
                return freelist;
            }
        }
        for nid in order {
            let slab = self.take_empty(nid);
            if !slab.is_null() {
                g.stat(Stat::EmptyCacheHit);
                // SAFETY: the slab came off the empty cache: live, private.
                return unsafe { self.install_private(g, slab) };
            }
        }
        ptr::null_mut()
    }

    fn get_partial_node(&self, g: &mut CpuGuard<P>, nid: i32) -> *mut u8 {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        if node.nr_partial.load(Ordering::Relaxed) == 0 {
            return ptr::null_mut();
        }
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        let mut lists = P::node_lock(&node.lists);
        let mut freelist: *mut u8 = ptr::null_mut();
        let mut moved = 0u32;
        loop {
            let slab = self.popped(nid, "partial", lists.partial.pop_front());
            // Before the null test: a broken list is emptied by the pop.
            node.nr_partial
                .store(lists.partial.len(), Ordering::Relaxed);
            if slab.is_null() {
                break;
            }
            if freelist.is_null() {
                // SAFETY: by the `NodeLists` invariant `slab` is live; it was
                // just unlinked under the node lock.
                freelist = unsafe { self.freeze(slab, true) };
                g.slab = slab;
                g.stat(Stat::AllocFromPartial);
            } else {
                // SAFETY: as for the first slab.
                unsafe { self.freeze(slab, false) };
                // SAFETY: `slab` is frozen for this CPU now: by the
                // `SlabHeader` invariant its `next` link is this CPU's.
                unsafe { (*slab).next = g.partial };
                // INVARIANT: a frozen slab of this CPU with free objects
                // joins its partial list, and the count follows.
                g.partial = slab;
                g.partial_slabs += 1;
                moved += 1;
                g.stat(Stat::CpuPartialNode);
            }
            // Upstream's stop: past half the CPU partial bound (`>`). The
            // `fill_ge` build variant stops at half (`>=`, the bench's
            // `make bench SUITE=fill`).
            let half = limit / 2;
            let full = if cfg!(rslub_fill_ge) {
                moved >= half
            } else {
                moved > half
            };
            if limit == 0 || full {
                break;
            }
        }
        freelist
    }

    /// Freezes a node-partial slab; with `take`, also takes its whole
    /// freelist (for the CPU slab) and returns it.
    ///
    /// # Safety
    /// `slab` is a live slab of this cache that the caller has just taken
    /// off its node's partial list (with the node lock held).
    unsafe fn freeze(&self, slab: *mut SlabHeader, take: bool) -> *mut u8 {
        let objects = self.layout.objects;
        // SAFETY: per the caller, `slab` is live.
        let Ok([freelist, _]) = unsafe {
            self.update_pair(slab, |[freelist, counters]| {
                Ok::<_, Infallible>(if take {
                    [0, objects | FROZEN]
                } else {
                    [freelist, counters | FROZEN]
                })
            })
        };
        if take {
            freelist as *mut u8
        } else {
            ptr::null_mut()
        }
    }

    pub(super) fn take_empty(&self, nid: i32) -> *mut SlabHeader {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        let popped = P::node_lock(&node.lists).empty.pop_front();
        self.popped(nid, "empty", popped)
    }

    pub(super) fn new_slab(&self, gfp: u32, node: i32) -> *mut SlabHeader {
        let owner = self.page_owner.load(Ordering::Relaxed);
        // Never the emergency reserves: SLUB gives a pfmemalloc slab's
        // objects only to requests allowed them, rslub does not track them.
        // A served cache's pages get the kernel's own policy for it.
        // With a fallback, lightly: no retry, no warning (`fallback.rs`).
        let page_gfp = if owner.is_null() {
            (gfp & !self.gfp_zero) | self.gfp_nomemalloc | self.gfp_light
        } else {
            gfp & !self.gfp_zero
        };
        // SAFETY: `page_owner` is null or a kernel cache that is live
        // while this cache has slabs (`set_page_owner`).
        let base = unsafe { P::alloc_pages(node, page_gfp, self.layout.order, owner) };
        if base.is_null() {
            return ptr::null_mut();
        }
        let nid = P::page_node(base);
        let nid = if (nid as usize) < self.nr_nodes {
            nid
        } else {
            0
        };
        // A header outside the slab: a block of its own, near the pages,
        // named by the first page (`Platform::slab_meta`) once written.
        let outside = if self.layout.header_outside {
            let h = P::alloc_header(nid, gfp & !self.gfp_zero).cast::<SlabHeader>();
            if h.is_null() {
                // SAFETY: allocated above with this order and owner, unused.
                unsafe {
                    P::free_pages(
                        base,
                        self.layout.order,
                        self.page_owner.load(Ordering::Relaxed),
                    )
                };
                return ptr::null_mut();
            }
            h
        } else {
            ptr::null_mut()
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
        // SAFETY: `base` is `slab_bytes` of fresh memory aligned to its
        // size; `outside`, when used, a fresh header block.
        let slab = unsafe {
            SlabHeader::init_shuffled(
                base,
                outside,
                &self.layout,
                self.owner(),
                self.slab_secret,
                nid,
                seq,
                start,
            )
        };
        if self.layout.header_outside {
            // SAFETY: `base` is ours, from `alloc_pages`; `free_discards`
            // clears the word before the pages go.
            unsafe { P::set_slab_meta(base, slab as usize) };
        }
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
        // INVARIANT: counted by its node until it is killed or isolated.
        self.node(nid).nr_slabs.fetch_add(1, Ordering::Relaxed);
        slab
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_after;

    /// Walks the order from `local` the way `NodeOrder` does.
    fn order(local: i32, dist: &[Option<i32>]) -> Vec<i32> {
        let mut v = vec![local];
        let mut after = None;
        while let Some(k) = nearest_after(local, dist.len() as i32, after, |n| dist[n as usize]) {
            v.push(k.1);
            after = Some(k);
        }
        v
    }

    /// Nearest first, ties by id, memoryless nodes skipped, each node once.
    #[test]
    fn node_order_is_nearest_first_ties_by_id() {
        let d = [Some(10), Some(30), Some(20), Some(20), None, Some(20)];
        assert_eq!(order(0, &d), [0, 2, 3, 5, 1]);
        // A memoryless local node still comes first (the table is read as
        // distances from it).
        assert_eq!(order(4, &d), [4, 0, 2, 3, 5, 1]);
        assert_eq!(order(0, &[Some(10)]), [0]);
    }
}
