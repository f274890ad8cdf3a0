// SPDX-License-Identifier: GPL-2.0
//! Giving back what the CPUs hold (`flush_all`, a dead CPU) and returning
//! empty slabs to the page allocator (`shrink`).

use super::{Cache, CpuSlab, Discards};
use crate::platform::Platform;
use crate::slab::inuse;
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Returns `c`'s CPU slab and CPU partial list to the nodes. The caller
    /// holds that CPU's lock, or the CPU is dead.
    fn flush_cpu(&self, c: *mut CpuSlab) {
        // SAFETY: per the caller, nothing else uses `c`.
        let partial = unsafe {
            if !(*c).slab.is_null() {
                Self::stat_locked(c, Stat::CpuslabFlush);
                self.deactivate_cpu_slab(c);
            }
            let p = (*c).partial;
            (*c).partial = ptr::null_mut();
            (*c).partial_slabs = 0;
            p
        };
        if !partial.is_null() {
            self.unfreeze_partials(partial);
        }
    }

    /// Flushes every online CPU's slab and partial list.
    pub fn flush_all(&self) {
        P::for_each_cpu_locked(&|cpu| self.flush_cpu(P::per_cpu_ptr(self.pcpu, cpu).cast()));
    }

    /// Flushes a CPU that went offline.
    pub fn flush_dead_cpu(&self, cpu: u32) {
        self.flush_cpu(P::per_cpu_ptr(self.pcpu, cpu).cast());
    }

    /// Returns every empty slab (partial-list and cached) to the page
    /// allocator after flushing the CPUs.
    pub fn shrink(&self) {
        self.flush_all();
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let mut d = Discards(ptr::null_mut());
            {
                let _g = P::node_lock(&node.list_lock);
                // SAFETY: list_lock held.
                let lists = unsafe { &mut *node.lists.get() };
                let mut cur = lists.partial.first();
                while !cur.is_null() {
                    // SAFETY: members of the list, under list_lock.
                    let next = unsafe { (*cur).next };
                    // SAFETY: as above.
                    if inuse(unsafe { (*cur).read_pair() }[1]) == 0 {
                        Self::remove_partial(node, lists, cur);
                        node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
                        // SAFETY: off every list now.
                        unsafe {
                            (*cur).kill();
                            (*cur).next = d.0;
                        }
                        d.0 = cur;
                    }
                    cur = next;
                }
            }
            self.free_discards(d);
            self.trim_empty(n as i32, 0);
        }
    }
}
