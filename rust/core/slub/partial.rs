// SPDX-License-Identifier: GPL-2.0
//! Returning slabs to their nodes: the node partial list, `deactivate_slab`
//! (a CPU slab given back), `unfreeze_partials` (a CPU partial list given
//! back), and the empty-slab cache with the freeing of slabs.

use super::{Cache, CpuSlab, Discards, Node, NodeLists};
use crate::platform::Platform;
use crate::slab::{free_pointer_ok, get_free_pointer, inuse, set_free_pointer, SlabHeader, FROZEN};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Puts an empty, unlisted slab into the node's empty cache, or queues it
    /// for freeing. list_lock held.
    pub(super) fn discard_locked(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        d: &mut Discards,
    ) {
        if lists.empty.len() < self.max_empty.load(Ordering::Relaxed) as usize {
            // SAFETY: `slab` is empty, unfrozen and on no list.
            unsafe { lists.empty.push_front(slab) };
            self.stat(Stat::EmptyCacheAdd);
        } else {
            node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: as above; it is unreachable once killed.
            unsafe {
                (*slab).kill();
                (*slab).next = d.0;
            }
            d.0 = slab;
        }
    }

    pub(super) fn free_discards(&self, d: Discards) {
        let mut cur = d.0;
        while !cur.is_null() {
            // SAFETY: discarded slabs are killed and owned by `d`.
            let next = unsafe { (*cur).next };
            // SAFETY: the block was allocated with this order.
            unsafe { P::free_pages(cur.cast(), self.layout.order) };
            self.stat(Stat::FreeSlab);
            cur = next;
        }
    }

    /// Adds a partial slab to its node list. list_lock held.
    pub(super) fn add_partial(
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        tail: bool,
    ) {
        // SAFETY: `slab` is unfrozen and on no list.
        unsafe {
            if tail {
                lists.partial.push_back(slab);
            } else {
                lists.partial.push_front(slab);
            }
        }
        node.nr_partial
            .store(lists.partial.len(), Ordering::Relaxed);
    }

    pub(super) fn remove_partial(node: &Node<P>, lists: &mut NodeLists, slab: *mut SlabHeader) {
        // SAFETY: the caller saw `slab` on the partial list under list_lock.
        unsafe { lists.partial.remove(slab) };
        node.nr_partial
            .store(lists.partial.len(), Ordering::Relaxed);
    }

    /// Detaches this CPU's slab and returns it to its node. CPU lock held.
    pub(super) fn deactivate_cpu_slab(&self, c: *mut CpuSlab) {
        // SAFETY: CPU lock held.
        let (slab, freelist) = unsafe {
            let s = ((*c).slab, (*c).freelist);
            (*c).slab = ptr::null_mut();
            (*c).freelist = ptr::null_mut();
            (*c).tid = (*c).tid.wrapping_add(self.tid_step);
            s
        };
        if !slab.is_null() {
            self.deactivate_slab(slab, freelist);
        }
    }

    /// Unfreezes a former CPU slab, splicing the CPU's leftover freelist back
    /// onto the slab's, and puts it where its state says.
    fn deactivate_slab(&self, slab: *mut SlabHeader, cpu_freelist: *mut u8) {
        let mut count = 0usize;
        let mut tail: *mut u8 = ptr::null_mut();
        let mut cur = cpu_freelist;
        while !cur.is_null() {
            if !free_pointer_ok(cur, slab, &self.layout) || count >= self.layout.objects {
                // Corrupt (or cyclic) CPU freelist: do not follow it.
                self.report_free_pointer(slab, tail, cur);
                self.isolate(slab);
                return;
            }
            count += 1;
            tail = cur;
            // SAFETY: the CPU freelist is a chain of free objects we own.
            cur = unsafe { get_free_pointer(cur, &self.layout) };
        }
        // SAFETY: the slab is live (it was our CPU slab).
        let node = self.node(unsafe { (*slab).node });
        let mut d = Discards(ptr::null_mut());
        {
            let _g = P::node_lock(&node.list_lock);
            let (new_free, new_inuse, remote) = loop {
                // SAFETY: the slab is live; the pair is in its header.
                let [sfl, counters] = unsafe { (*slab).read_pair() };
                let new_free = if tail.is_null() {
                    sfl
                } else {
                    // SAFETY: `tail` is the last object of our chain.
                    unsafe { set_free_pointer(tail, &self.layout, sfl as *mut u8) };
                    cpu_freelist as usize
                };
                let new_inuse = inuse(counters) as usize - count;
                // SAFETY: as above.
                if unsafe {
                    P::cmpxchg_pair((*slab).pair_ptr(), [sfl, counters], [new_free, new_inuse])
                } {
                    break (new_free, new_inuse, sfl != 0);
                }
                self.stat(Stat::CmpxchgDoubleFail);
            };
            if remote {
                self.stat(Stat::DeactivateRemoteFrees);
            }
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            if new_inuse == 0 && self.enough_partial(lists.partial.len()) {
                self.stat(Stat::DeactivateEmpty);
                self.discard_locked(node, lists, slab, &mut d);
            } else if new_free != 0 {
                // Slabs with objects the CPU did not use go to the tail: they
                // are likely cache-cold.
                let to_tail = count != 0;
                Self::add_partial(node, lists, slab, to_tail);
                self.stat(if to_tail {
                    Stat::DeactivateToTail
                } else {
                    Stat::DeactivateToHead
                });
            } else {
                self.stat(Stat::DeactivateFull);
            }
        }
        self.free_discards(d);
    }

    /// Returns a detached chain of CPU-partial slabs to their nodes: one
    /// list_lock hold per run of slabs of the same node; the cmpxchg loop
    /// only unfreezes; the discard-or-keep decision comes after it.
    pub(super) fn unfreeze_partials(&self, mut list: *mut SlabHeader) {
        let mut d = Discards(ptr::null_mut());
        while !list.is_null() {
            // SAFETY: the chain is detached and ours.
            let nid = unsafe { (*list).node };
            let node = self.node(nid);
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            // SAFETY: chain members are live, frozen slabs we own.
            while !list.is_null() && unsafe { (*list).node } == nid {
                let slab = list;
                // SAFETY: as above.
                unsafe {
                    list = (*slab).next;
                    (*slab).next = ptr::null_mut();
                }
                let new = loop {
                    // SAFETY: the slab is live.
                    let [fl, counters] = unsafe { (*slab).read_pair() };
                    let new = counters & !FROZEN;
                    // SAFETY: as above.
                    if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [fl, counters], [fl, new]) } {
                        break new;
                    }
                    self.stat(Stat::CmpxchgDoubleFail);
                };
                if inuse(new) == 0 && self.enough_partial(lists.partial.len()) {
                    self.discard_locked(node, lists, slab, &mut d);
                } else {
                    Self::add_partial(node, lists, slab, true);
                    self.stat(Stat::FreeAddPartial);
                }
            }
        }
        self.free_discards(d);
    }

    /// Slabs in node `nid`'s empty-slab cache (0 for a node id the cache
    /// does not cover). A racy read: the shrinker's estimate.
    pub fn empty_cached(&self, nid: i32) -> usize {
        if (nid as usize) >= self.nr_nodes {
            return 0;
        }
        let node = self.node(nid);
        let _g = P::node_lock(&node.list_lock);
        // SAFETY: list_lock held.
        unsafe { (*node.lists.get()).empty.len() }
    }

    /// Returns up to `max` slabs of node `nid`'s empty-slab cache to the
    /// page allocator, below `max_empty` too: the system is short of memory
    /// (the shrinker). Counted as `empty_cache_reclaim`. Returns the slabs
    /// freed (each `2^order` pages). Takes only the node's `list_lock`, so
    /// it may run from reclaim in any sleeping context.
    pub fn reclaim_empty(&self, nid: i32, max: usize) -> usize {
        if (nid as usize) >= self.nr_nodes || max == 0 {
            return 0;
        }
        let node = self.node(nid);
        let mut d = Discards(ptr::null_mut());
        let mut freed = 0;
        {
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            while freed < max {
                let slab = lists.empty.pop_front();
                if slab.is_null() {
                    break;
                }
                node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
                // SAFETY: off every list, ours.
                unsafe {
                    (*slab).kill();
                    (*slab).next = d.0;
                }
                d.0 = slab;
                freed += 1;
                self.stat(Stat::EmptyCacheReclaim);
            }
        }
        self.free_discards(d);
        freed
    }

    pub(super) fn trim_empty(&self, nid: i32, keep: usize) -> usize {
        let node = self.node(nid);
        let mut d = Discards(ptr::null_mut());
        let mut released = 0;
        {
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            while lists.empty.len() > keep {
                let slab = lists.empty.pop_front();
                node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
                // SAFETY: off every list, ours.
                unsafe {
                    (*slab).kill();
                    (*slab).next = d.0;
                }
                d.0 = slab;
                released += 1;
                self.stat(Stat::EmptyCacheRelease);
            }
        }
        self.free_discards(d);
        released
    }
}
