// SPDX-License-Identifier: GPL-2.0
//! What a cache reports: its event counters summed over the CPUs, and
//! `usage_into()` and `totals()`, the slab and object counts behind sysfs
//! and `destroy`.

#[cfg(rslub_free_batch)]
use super::FREE_BATCH_MAX;
use super::{Cache, CpuSlab, MAX_NODES};
use crate::platform::{Pcpu, Platform};
use crate::slab::{get_free_pointer, inuse, SlabHeader};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

/// The totals a cache can report (`Cache::totals`): a few words.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    /// Slabs, all states.
    pub slabs: usize,
    /// Slabs on node partial lists.
    pub partial: usize,
    /// Objects in node partial slabs that are in use.
    pub objects_partial: usize,
    /// CPU slabs.
    pub cpu_slabs: usize,
    /// Slabs on CPU partial lists.
    pub cpu_partial_slabs: usize,
    /// Slabs in the empty-slab caches.
    pub empty_slabs: usize,
    /// Objects allocated and not freed (exact only when nothing runs).
    pub live_objects: usize,
    /// Freed objects waiting in CPU batches (`free_batch.rs`): not live,
    /// still in use for their slabs.
    #[cfg(rslub_free_batch)]
    pub batched_objects: usize,
}

impl Totals {
    /// All zero (`Default` is not `const`).
    pub(super) const ZERO: Totals = Totals {
        slabs: 0,
        partial: 0,
        objects_partial: 0,
        cpu_slabs: 0,
        cpu_partial_slabs: 0,
        empty_slabs: 0,
        live_objects: 0,
        #[cfg(rslub_free_batch)]
        batched_objects: 0,
    };
}

/// Everything a cache can report (`Cache::usage_into`): its [`Totals`]
/// (read through the `Usage` itself) and per-node counts, about 2.5 KB.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// The totals over all nodes.
    pub totals: Totals,
    /// Node ids covered by the per-node arrays.
    pub nr_nodes: usize,
    /// Slabs per node.
    pub node_slabs: [usize; MAX_NODES],
    /// Node partial slabs per node.
    pub node_partial: [usize; MAX_NODES],
    /// Live objects per node (the node of their slab).
    pub node_objects: [usize; MAX_NODES],
    /// CPU slabs per node.
    pub node_cpu_slabs: [usize; MAX_NODES],
    /// CPU partial slabs per node.
    pub node_cpu_partial: [usize; MAX_NODES],
    /// Batched objects per node of their slab.
    #[cfg(rslub_free_batch)]
    pub node_batched: [usize; MAX_NODES],
}

impl core::ops::Deref for Usage {
    type Target = Totals;

    fn deref(&self) -> &Totals {
        &self.totals
    }
}

impl core::ops::DerefMut for Usage {
    fn deref_mut(&mut self) -> &mut Totals {
        &mut self.totals
    }
}

impl Usage {
    /// All counts zero.
    pub const EMPTY: Usage = Usage {
        totals: Totals::ZERO,
        nr_nodes: 0,
        node_slabs: [0; MAX_NODES],
        node_partial: [0; MAX_NODES],
        node_objects: [0; MAX_NODES],
        node_cpu_slabs: [0; MAX_NODES],
        node_cpu_partial: [0; MAX_NODES],
        #[cfg(rslub_free_batch)]
        node_batched: [0; MAX_NODES],
    };

    /// Sets every count to zero in place (no `Usage` on the stack).
    pub fn clear(&mut self) {
        self.totals = Totals::ZERO;
        self.nr_nodes = 0;
        self.node_slabs.fill(0);
        self.node_partial.fill(0);
        self.node_objects.fill(0);
        self.node_cpu_slabs.fill(0);
        self.node_cpu_partial.fill(0);
        #[cfg(rslub_free_batch)]
        self.node_batched.fill(0);
    }
}

impl<P: Platform> Cache<P> {
    /// Sum of counter `s` over all CPUs, and each CPU's share in `per_cpu`
    /// (as many as fit).
    pub fn stat_total(&self, s: Stat, per_cpu: &mut [usize]) -> usize {
        let mut total = 0;
        for cpu in 0..P::nr_cpu_ids() {
            if !P::cpu_possible(cpu) {
                continue;
            }
            let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
            // SAFETY: a racy read of a counter word; torn values cannot occur
            // for aligned words on the platforms we build for.
            let v = unsafe { ptr::read_volatile(ptr::addr_of!((*c).stats[s as usize])) };
            if let Some(slot) = per_cpu.get_mut(cpu as usize) {
                *slot = v;
            }
            total += v;
        }
        total
    }

    /// Clears counter `s` on every CPU.
    pub fn stat_clear(&self, s: Stat) {
        for cpu in 0..P::nr_cpu_ids() {
            if P::cpu_possible(cpu) {
                let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
                // SAFETY: a racy store to a counter word; a concurrent
                // increment may be lost, as with upstream's clear.
                unsafe { ptr::write_volatile(ptr::addr_of_mut!((*c).stats[s as usize]), 0) };
            }
        }
    }

    /// Test hook: CPU `cpu`'s state for this cache (to be read racily, or
    /// with that CPU's lock held) and the tid step.
    pub fn cpu_state(&self, cpu: u32) -> (*const CpuSlab, usize) {
        (
            P::per_cpu_ptr(self.pcpu, cpu).cast_const().cast(),
            Self::TID_STEP,
        )
    }

    /// Test hook: the per-CPU area holding the [`CpuSlab`]s, for a test
    /// that issues the fast path's per-CPU cmpxchg16b itself.
    pub fn cpu_area(&self) -> Pcpu {
        self.pcpu
    }

    /// Current counts, by value: about 2.5 KB, for tests. Kernel code
    /// fills a `Usage` it allocated with [`Cache::usage_into`], or asks
    /// for the [`Totals`] alone.
    #[cfg(test)]
    pub fn usage(&self) -> Usage {
        let mut u = Usage::EMPTY;
        self.usage_into(&mut u);
        u
    }

    /// Current counts into `u`, all of it overwritten, with nothing but a
    /// few words on the stack. Exact only when no CPU is using the cache.
    pub fn usage_into(&self, u: &mut Usage) {
        u.clear();
        u.nr_nodes = self.nr_nodes;
        self.walk(u);
    }

    /// The totals of [`Cache::usage_into`] without the per-node counts:
    /// a few words, by value (`destroy`, the serve glue).
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        self.walk(&mut t);
        t
    }

    /// Walks the CPUs' slabs, then each node's lists, into `t`.
    fn walk<T: Tally>(&self, t: &mut T) {
        let per_slab = self.layout.objects;
        // A bound for walking a CPU partial list that its owner may be
        // changing: no list is longer than the cache has slabs (the current
        // `cpu_partial` is not a bound: lowering it leaves longer lists).
        let limit = (0..self.nr_nodes)
            .map(|n| self.node(n as i32).nr_slabs.load(Ordering::Relaxed))
            .sum::<usize>()
            + 1;
        // A node id read racily from a slab header, kept in bounds.
        let last = self.nr_nodes.saturating_sub(1);
        let nid_of = |slab: *mut SlabHeader| {
            // SAFETY: slab memory stays mapped; the value is only an index
            // hint and is clamped.
            let n = unsafe { ptr::read_volatile(ptr::addr_of!((*slab).node)) };
            usize::try_from(n).unwrap_or(0).min(last)
        };
        for cpu in 0..P::nr_cpu_ids() {
            if !P::cpu_possible(cpu) {
                continue;
            }
            let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
            // SAFETY: racy reads of another CPU's state, for reporting.
            unsafe {
                #[cfg(rslub_free_batch)]
                {
                    let n = ptr::read_volatile(ptr::addr_of!((*c).batch_len)) as usize;
                    for i in 0..n.min(FREE_BATCH_MAX) {
                        let obj = ptr::read_volatile(ptr::addr_of!((*c).batch[i]));
                        if !obj.is_null() {
                            t.batched(nid_of(self.header_of(self.layout.slab_base(obj))));
                        }
                    }
                }
                let slab = ptr::read_volatile(ptr::addr_of!((*c).slab));
                if !slab.is_null() {
                    let base = self.base_of(slab);
                    let mut free = 0;
                    let mut cur = ptr::read_volatile(ptr::addr_of!((*c).freelist));
                    // The owner may be changing this list: follow it only
                    // through object starts of this slab, at most a slab's
                    // worth, so a stale link is never dereferenced.
                    while !cur.is_null()
                        && free < per_slab
                        && self.layout.slab_base(cur) == base
                        && self.layout.object_index(cur as usize - base).is_some()
                    {
                        free += 1;
                        cur = get_free_pointer(cur, &self.layout);
                    }
                    let slab_free_objs =
                        per_slab.saturating_sub(inuse((*slab).read_pair()[1]) as usize);
                    let live = per_slab.saturating_sub(free + slab_free_objs);
                    t.held(nid_of(slab), true, live);
                }
                // Racing with the owner CPU: follow only live slabs of this
                // cache, and no more than the list can hold.
                let mut p = ptr::read_volatile(ptr::addr_of!((*c).partial));
                let mut seen = 0;
                while !p.is_null()
                    && seen <= limit
                    && if self.layout.header_outside {
                        P::meta_addr_valid(p.cast())
                    } else {
                        P::addr_valid(p.cast())
                    }
                    && (*p).is_live_with(self.slab_secret)
                {
                    seen += 1;
                    t.held(nid_of(p), false, inuse((*p).read_pair()[1]) as usize);
                    p = ptr::read_volatile(ptr::addr_of!((*p).next));
                }
            }
        }
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let lists = P::node_lock(&node.lists);
            let mut cur = lists.partial.first();
            let mut partial_inuse = 0;
            while !cur.is_null() {
                // SAFETY: members of the list, under list_lock.
                unsafe {
                    partial_inuse += inuse((*cur).read_pair()[1]) as usize;
                    cur = (*cur).next;
                }
            }
            t.node(
                n,
                NodeCounts {
                    slabs: node.nr_slabs.load(Ordering::Relaxed),
                    partial: lists.partial.len(),
                    empty: lists.empty.len(),
                    partial_inuse,
                },
                per_slab,
            );
        }
        t.finish(per_slab);
    }
}

/// What one node's lists hold, read under its list lock.
struct NodeCounts {
    slabs: usize,
    partial: usize,
    empty: usize,
    /// Objects in use in its partial slabs.
    partial_inuse: usize,
}

/// What a walk of a cache's slabs counts into: a whole [`Usage`], or the
/// [`Totals`] alone.
trait Tally {
    /// A slab on node `nid` held by a CPU (its CPU slab when `cpu_slab`,
    /// else on its CPU partial list), with `live` objects in use.
    fn held(&mut self, nid: usize, cpu_slab: bool, live: usize);
    /// An object waiting in a CPU batch, its slab on node `nid`.
    #[cfg(rslub_free_batch)]
    fn batched(&mut self, nid: usize);
    /// Node `n`'s lists (after every CPU was walked).
    fn node(&mut self, n: usize, c: NodeCounts, per_slab: usize);
    /// The walk is over.
    fn finish(&mut self, per_slab: usize);
}

impl Tally for Usage {
    fn held(&mut self, nid: usize, cpu_slab: bool, live: usize) {
        if cpu_slab {
            self.cpu_slabs += 1;
            self.node_cpu_slabs[nid] += 1;
        } else {
            self.cpu_partial_slabs += 1;
            self.node_cpu_partial[nid] += 1;
        }
        self.live_objects += live;
        self.node_objects[nid] += live;
    }

    #[cfg(rslub_free_batch)]
    fn batched(&mut self, nid: usize) {
        self.batched_objects += 1;
        self.node_batched[nid] += 1;
    }

    fn node(&mut self, n: usize, c: NodeCounts, per_slab: usize) {
        self.slabs += c.slabs;
        self.node_slabs[n] = c.slabs;
        self.node_partial[n] = c.partial;
        self.partial += c.partial;
        self.empty_slabs += c.empty;
        self.objects_partial += c.partial_inuse;
        // Slabs on no node list and not held by a CPU are full.
        let held = self.node_cpu_slabs[n] + self.node_cpu_partial[n];
        let full = c.slabs.saturating_sub(c.partial + c.empty + held);
        let live = c.partial_inuse + full * per_slab;
        self.live_objects += live;
        self.node_objects[n] += live;
    }

    fn finish(&mut self, _per_slab: usize) {
        // Batched objects are freed for their users.
        #[cfg(rslub_free_batch)]
        {
            self.live_objects = self.live_objects.saturating_sub(self.batched_objects);
            for (objects, b) in self.node_objects.iter_mut().zip(self.node_batched) {
                *objects = objects.saturating_sub(b);
            }
        }
    }
}

impl Tally for Totals {
    fn held(&mut self, _nid: usize, cpu_slab: bool, live: usize) {
        if cpu_slab {
            self.cpu_slabs += 1;
        } else {
            self.cpu_partial_slabs += 1;
        }
        self.live_objects += live;
    }

    #[cfg(rslub_free_batch)]
    fn batched(&mut self, _nid: usize) {
        self.batched_objects += 1;
    }

    fn node(&mut self, _n: usize, c: NodeCounts, _per_slab: usize) {
        self.slabs += c.slabs;
        self.partial += c.partial;
        self.empty_slabs += c.empty;
        self.objects_partial += c.partial_inuse;
        self.live_objects += c.partial_inuse;
    }

    fn finish(&mut self, per_slab: usize) {
        // Full slabs over all nodes at once (`Usage` counts them per node:
        // the same number unless racing CPUs made a node's count negative).
        let held = self.cpu_slabs + self.cpu_partial_slabs;
        let full = self
            .slabs
            .saturating_sub(self.partial + self.empty_slabs + held);
        self.live_objects += full * per_slab;
        #[cfg(rslub_free_batch)]
        {
            self.live_objects = self.live_objects.saturating_sub(self.batched_objects);
        }
    }
}
