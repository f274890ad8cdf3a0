// SPDX-License-Identifier: GPL-2.0
//! Giving back what the CPUs hold (`flush_all`, a dead CPU) and returning
//! empty slabs to the page allocator (`shrink`).

use super::{Cache, CpuGuard, Discards};
use crate::platform::Platform;
use crate::slab::inuse;
use crate::stat::Stat;
use core::ptr;

impl<P: Platform> Cache<P> {
    /// Returns the CPU slab, CPU partial list (and, in the `free_batch`
    /// build variant, free batch) of the CPU `g` holds to the nodes.
    fn flush_cpu(&self, g: &mut CpuGuard<P, false>) {
        if !g.slab.is_null() {
            g.stat(Stat::CpuslabFlush);
            self.deactivate_cpu_slab(g);
        }
        let partial = g.partial;
        // INVARIANT: the chain leaves with its count.
        g.partial = ptr::null_mut();
        g.partial_slabs = 0;
        if !partial.is_null() {
            // SAFETY: the CPU's partial list, detached under its lock.
            unsafe { self.unfreeze_partials(partial) };
        }
        // After the CPU slab is gone: no batched object takes the lockless
        // push onto a CPU freelist under this guard.
        #[cfg(rslub_free_batch)]
        self.flush_batch(g);
    }

    /// Flushes every online CPU's slab and partial list.
    pub fn flush_all(&self) {
        P::for_each_cpu_locked(&|cpu| {
            // SAFETY: `for_each_cpu_locked` holds `cpu`'s lock around this
            // call, which outlives the guard.
            let mut g = unsafe { CpuGuard::assume_locked(self.pcpu, cpu) };
            self.flush_cpu(&mut g);
        });
        if let Some(fb) = self.fallback() {
            fb.flush_all();
        }
    }

    /// Flushes a CPU that went offline.
    ///
    /// # Safety
    /// `cpu` is dead (offline and not coming back while this runs), and
    /// nothing else flushes it meanwhile.
    pub unsafe fn flush_dead_cpu(&self, cpu: u32) {
        // SAFETY: per the caller, nothing runs on `cpu`.
        let mut g = unsafe { CpuGuard::assume_locked(self.pcpu, cpu) };
        self.flush_cpu(&mut g);
        drop(g);
        if let Some(fb) = self.fallback() {
            // SAFETY: as for this cache.
            unsafe { fb.flush_dead_cpu(cpu) };
        }
    }

    /// Returns every empty slab (partial-list and cached) to the page
    /// allocator after flushing the CPUs.
    pub fn shrink(&self) {
        self.flush_all();
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let mut d = Discards::new();
            {
                let mut lists = P::node_lock(&node.lists);
                let mut cur = lists.partial.first();
                while !cur.is_null() {
                    // SAFETY: a member of the partial list, whose links the
                    // held lock protects (`NodeLists` invariant: live).
                    let (next, counters) = unsafe { ((*cur).next, (*cur).read_pair()[1]) };
                    if inuse(counters) == 0 {
                        // SAFETY: `cur` is on the partial list; once off it,
                        // empty and unlisted (frees need an object in use).
                        unsafe {
                            if !self.remove_partial(node, &mut lists, cur) {
                                // The list forgot its slabs (reported),
                                // `cur` and `next` among them: leaked.
                                break;
                            }
                            d.kill_and_queue(node, cur);
                        }
                    }
                    cur = next;
                }
            }
            self.free_discards(d);
            self.trim_empty(n as i32, 0);
        }
        if let Some(fb) = self.fallback() {
            fb.shrink();
        }
    }
}
