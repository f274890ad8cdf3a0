// SPDX-License-Identifier: GPL-2.0
//! Returning slabs to their nodes: the node partial list, `deactivate_slab`
//! (a CPU slab given back), `unfreeze_partials` (a CPU partial list given
//! back), and the empty-slab cache with the freeing of slabs.

use super::{Cache, CpuGuard, Discards, Node, NodeLists};
use crate::platform::Platform;
use crate::slab::{
    free_pointer_ok, get_free_pointer, inuse, set_free_pointer, SlabHeader, SlabList, FROZEN,
};
use crate::stat::Stat;
use core::convert::Infallible;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Puts an empty, unlisted slab into the node's empty cache, or queues it
    /// for freeing. The cache keeps up to `max_empty` slabs, and only while
    /// the node's partial list is short (under `min_partial + max_empty`
    /// slabs): a node with many partial slabs has room for its next
    /// allocations already, and an empty slab kept beside them is memory
    /// held for nothing (the bench's churn: random frees leave hundreds of
    /// half-used slabs).
    ///
    /// # Safety
    /// `slab` is a live, empty, unfrozen slab of this cache on `node` (whose
    /// lists the caller holds), on no list.
    pub(super) unsafe fn discard_locked(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        d: &mut Discards,
    ) {
        let max = self.max_empty.load(Ordering::Relaxed) as usize;
        let min = self.min_partial.load(Ordering::Relaxed) as usize;
        if lists.empty.len() < max && lists.partial.len() < min.saturating_add(max) {
            // SAFETY: per the caller, `slab` is live and on no list.
            unsafe { lists.empty.push_front(slab) };
            self.stat(Stat::EmptyCacheAdd);
        } else {
            // SAFETY: per the caller, `slab` is empty and on no list.
            unsafe { d.kill_and_queue(node, slab) };
        }
    }

    /// Gives the killed slabs of `d` back to the page allocator: at once,
    /// or for a `SLAB_TYPESAFE_BY_RCU` cache after an RCU grace period
    /// (`rcu_free_slab`), so that a reader that found an object before it
    /// was freed reads memory of this cache until it leaves its read
    /// section.
    pub(super) fn free_discards(&self, d: Discards) {
        let mut cur = d.0;
        while !cur.is_null() {
            // SAFETY: by the `Discards` invariant the slab is ours.
            let next = unsafe { (*cur).next };
            if self.typesafe_rcu {
                self.rcu_pending.fetch_add(1, Ordering::Relaxed);
                // SAFETY: as above.
                let base = unsafe { self.base_of(cur) } as *mut u8;
                // SAFETY: the slab is dead, on no list and the callback's
                // alone; the cache outlives the callback (`destroy` waits
                // with `rcu_barrier`, rslub's unload too). The callback
                // is told the cache and the base beside the slab, not by
                // anything written in it.
                unsafe {
                    P::call_rcu_slab(
                        base,
                        self.page_owner.load(Ordering::Relaxed),
                        ptr::from_ref(self).cast(),
                    )
                };
            } else {
                // SAFETY: as above, and nothing else will free it.
                unsafe { self.free_slab_pages(cur) };
            }
            cur = next;
        }
    }

    /// Returns a killed slab's pages (and a header outside them).
    ///
    /// # Safety
    /// `slab` is a killed slab of this cache, on no list, that nothing
    /// else frees or uses.
    unsafe fn free_slab_pages(&self, slab: *mut SlabHeader) {
        // SAFETY: per the caller.
        let base = unsafe { self.base_of(slab) } as *mut u8;
        // SAFETY: the block was allocated with this order and owner; a
        // header outside it goes with it (nothing names the killed slab).
        unsafe {
            if self.layout.header_outside {
                P::set_slab_meta(base, 0);
                P::free_header(slab.cast());
            }
            P::free_pages(
                base,
                self.layout.order,
                self.page_owner.load(Ordering::Relaxed),
            );
        }
        self.stat(Stat::FreeSlab);
    }

    /// The RCU callback of a slab `free_discards` deferred, the slab at
    /// `base` of `cache`, as the platform kept them beside the slab. The
    /// platform calls it with the platform's own `Cache` type
    /// (rust/kplat.rs, rust/core/host.rs). Nothing written in the slab is
    /// read to find the cache or the pages to free: an overflow into the
    /// dead slab during the grace period changes neither.
    ///
    /// # Safety
    /// `cache` and `base` were queued by `free_discards` and the grace
    /// period is over; called once for them.
    pub unsafe fn rcu_free_slab(cache: *const Self, base: usize) {
        // SAFETY: `destroy` (and rslub's unload) keep the cache alive until
        // the callbacks ran (`rcu_barrier`).
        let cache = unsafe { &*cache };
        let slab = cache.header_of(base);
        if slab.is_null() {
            // A header outside the slab is named by the page's own word,
            // which the slab's owner alone writes: only a bug gets here.
            P::report(format_args!(
                "cache {}: a slab waiting for RCU at {:#x} lost its header; its pages are leaked",
                cache.name_str(),
                base
            ));
        } else {
            // SAFETY: killed, on no list, handed to this callback alone.
            unsafe { cache.free_slab_pages(slab) };
        }
        cache.rcu_pending.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether the cache is `SLAB_TYPESAFE_BY_RCU`.
    pub fn typesafe_rcu(&self) -> bool {
        self.typesafe_rcu
    }

    /// Dead slabs of a `SLAB_TYPESAFE_BY_RCU` cache still waiting for
    /// their grace period.
    pub fn rcu_pending(&self) -> usize {
        self.rcu_pending.load(Ordering::Relaxed)
    }

    /// Adds a partial slab to its node's partial list.
    ///
    /// # Safety
    /// `slab` is a live, unfrozen slab of this cache on `node` (whose lists
    /// the caller holds), on no list.
    pub(super) unsafe fn add_partial(
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        tail: bool,
    ) {
        // SAFETY: per the caller.
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

    /// Takes a slab off its node's partial list; false when the list's
    /// links did not agree (as for `unlink`).
    ///
    /// # Safety
    /// `slab` is on `lists.partial`, the partial list of `node`.
    pub(super) unsafe fn remove_partial(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
    ) -> bool {
        // SAFETY: per the caller.
        let intact = unsafe { self.unlink(&mut lists.partial, "partial", slab) };
        node.nr_partial
            .store(lists.partial.len(), Ordering::Relaxed);
        intact
    }

    /// Takes `slab` off `list`, its node's list called `name`; a list
    /// whose links do not agree is reported (and has forgotten its slabs):
    /// then false, and a caller walking the list must stop (the next link
    /// it read is not to be trusted).
    ///
    /// # Safety
    /// `slab` is a live slab found on `list`, under its node's list_lock.
    pub(super) unsafe fn unlink(
        &self,
        list: &mut SlabList,
        name: &str,
        slab: *mut SlabHeader,
    ) -> bool {
        // SAFETY: per the caller.
        match unsafe { list.remove(slab) } {
            Ok(()) => true,
            Err(b) => {
                // SAFETY: live per the caller; `node` is written at creation.
                self.report_broken_list(unsafe { (*slab).node() }, name, b);
                false
            }
        }
    }

    /// Detaches the locked CPU's slab and returns it to its node.
    pub(super) fn deactivate_cpu_slab<const HOLDS_LOCK: bool>(
        &self,
        g: &mut CpuGuard<P, HOLDS_LOCK>,
    ) {
        let (slab, freelist) = (g.slab, g.freelist);
        // INVARIANT: the CPU slab and its freelist leave together, with a
        // new tid, so no fast path's snapshot of them commits.
        g.slab = ptr::null_mut();
        g.freelist = ptr::null_mut();
        g.tid = g.tid.wrapping_add(Self::TID_STEP);
        if !slab.is_null() {
            // SAFETY: `slab` was the CPU slab with that leftover freelist,
            // detached under the CPU lock.
            unsafe { self.deactivate_slab(slab, freelist) };
        }
    }

    /// Unfreezes a former CPU slab, splicing the CPU's leftover freelist back
    /// onto the slab's, and puts it where its state says.
    ///
    /// # Safety
    /// `slab` is a live, frozen slab of this cache just detached from a CPU,
    /// and `cpu_freelist` that CPU's leftover freelist of it (objects the
    /// caller now owns).
    unsafe fn deactivate_slab(&self, slab: *mut SlabHeader, cpu_freelist: *mut u8) {
        let mut count = 0usize;
        let mut tail: *mut u8 = ptr::null_mut();
        let mut cur = cpu_freelist;
        // SAFETY: per the caller, `slab` is live.
        let base = unsafe { self.base_of(slab) };
        while !cur.is_null() {
            if !free_pointer_ok(cur, base, &self.layout) || count >= self.layout.objects {
                // Corrupt (or cyclic) CPU freelist: do not follow it.
                // SAFETY: per the caller the slab is live and on no list;
                // `tail`, when set, is an object of it (checked).
                unsafe {
                    self.report_free_pointer(slab, tail, cur);
                    self.isolate(slab);
                }
                return;
            }
            count += 1;
            tail = cur;
            // SAFETY: `cur` is an object of the slab (checked), ours.
            cur = unsafe { get_free_pointer(cur, &self.layout) };
        }
        // SAFETY: per the caller, the slab is live; `node` never changes.
        let node = self.node(unsafe { (*slab).node() });
        let mut d = Discards::new();
        {
            let mut lists = P::node_lock(&node.lists);
            // The new freelist: the CPU's chain, then the slab's own.
            let mut new_free = 0;
            let splice = |[sfl, counters]: [usize; 2]| {
                new_free = if tail.is_null() {
                    sfl
                } else {
                    // SAFETY: `tail` is the last object of the CPU's chain,
                    // ours until the cmpxchg publishes it.
                    unsafe { set_free_pointer(tail, &self.layout, sfl as *mut u8) };
                    cpu_freelist as usize
                };
                Ok::<_, Infallible>([new_free, inuse(counters) as usize - count])
            };
            // SAFETY: per the caller, the slab is live.
            let Ok([sfl, counters]) = unsafe { self.update_pair(slab, splice) };
            let new_inuse = inuse(counters) as usize - count;
            if sfl != 0 {
                self.stat(Stat::DeactivateRemoteFrees);
            }
            if new_inuse == 0 && self.enough_partial(lists.partial.len()) {
                self.stat(Stat::DeactivateEmpty);
                // SAFETY: empty, just unfrozen, on no list.
                unsafe { self.discard_locked(node, &mut lists, slab, &mut d) };
            } else if new_free != 0 {
                // Slabs with objects the CPU did not use go to the tail: they
                // are likely cache-cold.
                let to_tail = count != 0;
                // SAFETY: just unfrozen, on no list.
                unsafe { Self::add_partial(node, &mut lists, slab, to_tail) };
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
    ///
    /// # Safety
    /// `list` is a chain of live, frozen slabs of this cache linked through
    /// `next`, detached from a CPU partial list and owned by the caller.
    pub(super) unsafe fn unfreeze_partials(&self, mut list: *mut SlabHeader) {
        let mut d = Discards::new();
        while !list.is_null() {
            // SAFETY: per the caller, chain members are live.
            let nid = unsafe { (*list).node() };
            let node = self.node(nid);
            let mut lists = P::node_lock(&node.lists);
            // SAFETY: per the caller, chain members are live.
            while !list.is_null() && unsafe { (*list).node() } == nid {
                let slab = list;
                // SAFETY: per the caller, the `next` links are ours.
                unsafe {
                    list = (*slab).next;
                    (*slab).next = ptr::null_mut();
                }
                // SAFETY: per the caller, the slab is live.
                let Ok([_, counters]) = unsafe {
                    self.update_pair(slab, |[fl, counters]| {
                        Ok::<_, Infallible>([fl, counters & !FROZEN])
                    })
                };
                if inuse(counters) == 0 && self.enough_partial(lists.partial.len()) {
                    // SAFETY: empty, just unfrozen, on no list.
                    unsafe { self.discard_locked(node, &mut lists, slab, &mut d) };
                } else {
                    // SAFETY: just unfrozen, on no list.
                    unsafe { Self::add_partial(node, &mut lists, slab, true) };
                    self.stat(Stat::FreeAddPartial);
                }
            }
        }
        self.free_discards(d);
    }

    /// Slabs in node `nid`'s empty-slab cache (0 for a node id the cache
    /// does not cover): the shrinker's estimate.
    pub fn empty_cached(&self, nid: i32) -> usize {
        if (nid as usize) >= self.nr_nodes {
            return 0;
        }
        // The node lock dropped before the fallback's is taken.
        let cached = P::node_lock(&self.node(nid).lists).empty.len();
        cached + self.fallback().map_or(0, |fb| fb.empty_cached(nid))
    }

    /// Returns up to `max` slabs of node `nid`'s empty-slab cache to the
    /// page allocator, below `max_empty` too: the system is short of memory
    /// (the shrinker). Counted as `empty_cache_reclaim`. Returns the slabs
    /// freed (each `2^order` pages). Takes only the node's lock, so it may
    /// run from reclaim in any sleeping context.
    pub fn reclaim_empty(&self, nid: i32, max: usize) -> usize {
        if (nid as usize) >= self.nr_nodes || max == 0 {
            return 0;
        }
        let node = self.node(nid);
        let mut d = Discards::new();
        let mut freed = 0;
        {
            let mut lists = P::node_lock(&node.lists);
            while freed < max {
                let slab = self.popped(nid, "empty", lists.empty.pop_front());
                if slab.is_null() {
                    break;
                }
                // SAFETY: an empty-cache slab (`NodeLists` invariant), now
                // off every list.
                unsafe { d.kill_and_queue(node, slab) };
                freed += 1;
                self.stat(Stat::EmptyCacheReclaim);
            }
        }
        self.free_discards(d);
        if let Some(fb) = self.fallback() {
            freed += fb.reclaim_empty(nid, max - freed);
        }
        freed
    }

    pub(super) fn trim_empty(&self, nid: i32, keep: usize) -> usize {
        let node = self.node(nid);
        let mut d = Discards::new();
        let mut released = 0;
        {
            let mut lists = P::node_lock(&node.lists);
            while lists.empty.len() > keep {
                let slab = self.popped(nid, "empty", lists.empty.pop_front());
                if slab.is_null() {
                    break;
                }
                // SAFETY: an empty-cache slab (`NodeLists` invariant), now
                // off every list.
                unsafe { d.kill_and_queue(node, slab) };
                released += 1;
                self.stat(Stat::EmptyCacheRelease);
            }
        }
        self.free_discards(d);
        released
    }
}
