// SPDX-License-Identifier: GPL-2.0
//! A free that misses the CPU slab (`slab_free`): one locked cmpxchg16b on
//! the slab's pair, with the node's list_lock only when the slab must move
//! between lists; a full slab's first free freezes it onto this CPU's
//! partial list (`put_cpu_partial`).

use super::{Cache, Discards};
use crate::platform::Platform;
use crate::slab::{inuse, set_free_pointer, FreeError, SlabHeader, FROZEN};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Puts a slab a free has just frozen on this CPU's partial list,
    /// draining the list to the nodes first when it is full.
    fn put_cpu_partial(&self, slab: *mut SlabHeader) {
        let g = self.cpu_lock();
        let c = g.c;
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        // SAFETY: CPU lock held.
        let drain = unsafe {
            let mut drain = ptr::null_mut();
            if (*c).partial_slabs >= limit {
                drain = (*c).partial;
                (*c).partial = ptr::null_mut();
                (*c).partial_slabs = 0;
                Self::stat_locked(c, Stat::CpuPartialDrain);
            }
            (*slab).next = (*c).partial;
            (*c).partial = slab;
            (*c).partial_slabs += 1;
            drain
        };
        Self::stat_locked(c, Stat::CpuPartialFree);
        Self::cpu_unlock(g);
        if !drain.is_null() {
            self.unfreeze_partials(drain);
        }
    }

    /// Frees a chain `head..=tail` of `cnt` objects of `slab` (not the CPU
    /// slab of this CPU, or it was when checked) onto the slab's freelist.
    pub(super) fn slab_free(
        &self,
        slab: *mut SlabHeader,
        head: *mut u8,
        tail: *mut u8,
        cnt: usize,
    ) {
        self.stat(Stat::FreeSlowpath);
        // SAFETY: `slab` is live (validated by the caller).
        let node = self.node(unsafe { (*slab).node });
        let mut guard = None;
        let (prior, new_counters, was_frozen, froze) = loop {
            // SAFETY: as above.
            let [prior, counters] = unsafe { (*slab).read_pair() };
            if (cnt == 1 && prior == head as usize) || (inuse(counters) as usize) < cnt {
                drop(guard);
                return self.report(head, FreeError::DoubleFree);
            }
            // SAFETY: `tail` is ours until published.
            unsafe { set_free_pointer(tail, &self.layout, prior as *mut u8) };
            let was_frozen = counters & FROZEN != 0;
            let new_inuse = inuse(counters) as usize - cnt;
            let mut new = new_inuse | (counters & FROZEN);
            let mut froze = false;
            if !was_frozen {
                if prior == 0
                    && new_inuse != 0
                    && self.cpu_partial_slabs.load(Ordering::Relaxed) != 0
                {
                    // A full slab gains its first free object: freeze it
                    // onto this CPU's partial list, no list_lock needed.
                    new |= FROZEN;
                    froze = true;
                } else if (prior == 0 || new_inuse == 0) && guard.is_none() {
                    guard = Some(P::node_lock(&node.list_lock));
                }
            }
            // SAFETY: as above.
            if unsafe {
                P::cmpxchg_pair((*slab).pair_ptr(), [prior, counters], [head as usize, new])
            } {
                break (prior, new, was_frozen, froze);
            }
            self.stat(Stat::CmpxchgDoubleFail);
        };
        if was_frozen {
            drop(guard);
            self.stat(Stat::FreeFrozen);
            return;
        }
        if froze {
            drop(guard);
            self.put_cpu_partial(slab);
            return;
        }
        let Some(g) = guard else {
            return;
        };
        let mut d = Discards(ptr::null_mut());
        {
            // SAFETY: list_lock held (`g`).
            let lists = unsafe { &mut *node.lists.get() };
            // SAFETY: list membership is protected by list_lock.
            let on_list = unsafe { (*slab).on_list };
            // Other partial slabs of the node: this one does not count.
            let others = lists.partial.len() - usize::from(on_list);
            if inuse(new_counters) == 0 && self.enough_partial(others) {
                if on_list {
                    Self::remove_partial(node, lists, slab);
                    self.stat(Stat::FreeRemovePartial);
                }
                self.discard_locked(node, lists, slab, &mut d);
            } else if prior == 0 && !on_list {
                Self::add_partial(node, lists, slab, true);
                self.stat(Stat::FreeAddPartial);
            }
            drop(g);
        }
        self.free_discards(d);
    }
}
