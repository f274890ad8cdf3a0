// SPDX-License-Identifier: GPL-2.0
//! What a cache reports: its event counters summed over the CPUs, and
//! `usage()`, the slab and object counts behind sysfs and `destroy`.

#[cfg(rslub_free_batch)]
use super::FREE_BATCH_MAX;
use super::{Cache, CpuSlab, Usage, MAX_NODES};
use crate::platform::{Pcpu, Platform};
use crate::slab::{get_free_pointer, inuse, SlabHeader};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

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

    /// Current counts. Exact only when no CPU is using the cache.
    pub fn usage(&self) -> Usage {
        let mut u = Usage {
            nr_nodes: self.nr_nodes,
            node_slabs: [0; MAX_NODES],
            node_partial: [0; MAX_NODES],
            node_objects: [0; MAX_NODES],
            node_cpu_slabs: [0; MAX_NODES],
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
        let per_slab = self.layout.objects;
        // A bound for walking a CPU partial list that its owner may be
        // changing: no list is longer than the cache has slabs (the current
        // `cpu_partial` is not a bound: lowering it leaves longer lists).
        let limit = (0..self.nr_nodes)
            .map(|n| self.node(n as i32).nr_slabs.load(Ordering::Relaxed))
            .sum::<usize>()
            + 1;
        // Slabs held by CPUs (CPU slab or CPU partial), per node.
        let mut held = [0usize; MAX_NODES];
        // Objects in CPU batches, per node of their slab.
        #[cfg(rslub_free_batch)]
        let mut batched = [0usize; MAX_NODES];
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
                            u.batched_objects += 1;
                            batched[nid_of(SlabHeader::of(obj, &self.layout))] += 1;
                        }
                    }
                }
                let slab = ptr::read_volatile(ptr::addr_of!((*c).slab));
                if !slab.is_null() {
                    let nid = nid_of(slab);
                    u.cpu_slabs += 1;
                    u.node_cpu_slabs[nid] += 1;
                    held[nid] += 1;
                    let mut free = 0;
                    let mut cur = ptr::read_volatile(ptr::addr_of!((*c).freelist));
                    // The owner may be changing this list: follow it only
                    // through object starts of this slab, at most a slab's
                    // worth, so a stale link is never dereferenced.
                    while !cur.is_null()
                        && free < per_slab
                        && SlabHeader::of(cur, &self.layout) == slab
                        && self
                            .layout
                            .object_index(cur as usize - slab as usize)
                            .is_some()
                    {
                        free += 1;
                        cur = get_free_pointer(cur, &self.layout);
                    }
                    let slab_free_objs =
                        per_slab.saturating_sub(inuse((*slab).read_pair()[1]) as usize);
                    let live = per_slab.saturating_sub(free + slab_free_objs);
                    u.live_objects += live;
                    u.node_objects[nid] += live;
                }
                // Racing with the owner CPU: follow only live slabs of this
                // cache, and no more than the list can hold.
                let mut p = ptr::read_volatile(ptr::addr_of!((*c).partial));
                let mut seen = 0;
                while !p.is_null()
                    && seen <= limit
                    && P::addr_valid(p.cast())
                    && (*p).is_live_for(self.owner())
                {
                    seen += 1;
                    let nid = nid_of(p);
                    let live = inuse((*p).read_pair()[1]) as usize;
                    u.cpu_partial_slabs += 1;
                    held[nid] += 1;
                    u.live_objects += live;
                    u.node_objects[nid] += live;
                    p = ptr::read_volatile(ptr::addr_of!((*p).next));
                }
            }
        }
        for (n, &held_here) in held.iter().enumerate().take(self.nr_nodes) {
            let node = self.node(n as i32);
            let lists = P::node_lock(&node.lists);
            let slabs = node.nr_slabs.load(Ordering::Relaxed);
            u.slabs += slabs;
            u.node_slabs[n] = slabs;
            u.node_partial[n] = lists.partial.len();
            u.partial += lists.partial.len();
            u.empty_slabs += lists.empty.len();
            let mut cur = lists.partial.first();
            let mut partial_inuse = 0;
            while !cur.is_null() {
                // SAFETY: members of the list, under list_lock.
                unsafe {
                    partial_inuse += inuse((*cur).read_pair()[1]) as usize;
                    cur = (*cur).next;
                }
            }
            u.objects_partial += partial_inuse;
            // Slabs on no node list and not held by a CPU are full.
            let full = slabs.saturating_sub(lists.partial.len() + lists.empty.len() + held_here);
            let live = partial_inuse + full * per_slab;
            u.live_objects += live;
            u.node_objects[n] += live;
        }
        // Batched objects are freed for their users.
        #[cfg(rslub_free_batch)]
        {
            u.live_objects = u.live_objects.saturating_sub(u.batched_objects);
            for (objects, b) in u.node_objects.iter_mut().zip(batched) {
                *objects = objects.saturating_sub(b);
            }
        }
        u
    }
}
