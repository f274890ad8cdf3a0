// SPDX-License-Identifier: GPL-2.0
//! A free that misses the CPU slab (`slab_free`): one locked cmpxchg16b on
//! the slab's pair, with the node's list_lock only when the slab must move
//! between lists; a full slab's first free freezes it onto this CPU's
//! partial list (`put_cpu_partial`).

use super::chain::Chain;
use super::{Cache, Discards};
use crate::platform::Platform;
use crate::slab::{inuse, set_free_pointer, FreeError, SlabHeader, FROZEN};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Puts a slab a free has just frozen on this CPU's partial list,
    /// draining the list to the nodes first when it is full.
    ///
    /// # Safety
    /// `slab` is a live slab of this cache that the caller has just frozen
    /// (so it is on no list and its `next` link is the caller's).
    unsafe fn put_cpu_partial(&self, slab: *mut SlabHeader) {
        let mut g = self.cpu_lock();
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        let mut drain = ptr::null_mut();
        if g.partial_slabs >= limit {
            drain = g.partial;
            g.partial = ptr::null_mut();
            g.partial_slabs = 0;
            g.stat(Stat::CpuPartialDrain);
        }
        // SAFETY: per the caller, `next` is ours to set.
        unsafe { (*slab).next = g.partial };
        // INVARIANT: the slab this free froze (it has the freed objects
        // now) joins this CPU's partial list; a drained list left with its
        // count above.
        g.partial = slab;
        g.partial_slabs += 1;
        g.stat(Stat::CpuPartialFree);
        drop(g);
        if !drain.is_null() {
            // SAFETY: the drained list was this CPU's partial list, detached
            // under its lock: frozen slabs of this cache, now ours.
            unsafe { self.unfreeze_partials(drain) };
        }
    }

    /// Frees the chain `ch` of `slab` (not the CPU slab of this CPU, or it
    /// was when checked) onto the slab's freelist. `freeze`: a full slab's
    /// first free may freeze it onto this CPU's partial list (false under a
    /// flush, which holds a CPU's lock).
    ///
    /// Inline: the common cases, where the free changes no slab state, are
    /// one read of the pair and one locked cmpxchg16b, no list lock: a slab
    /// frozen by some CPU (its CPU slab or on a CPU partial list: what a
    /// remote free mostly meets), or a node-partial slab that keeps an
    /// object in use (frees in random order). Anything else (a full slab's
    /// first free, a slab's last object, a lost race, a double free to tell
    /// apart) goes to `slab_free_slow`, out of line.
    ///
    /// # Safety
    /// `slab` is a slab of this cache validated by `object_slab`; `ch` is a
    /// chain of its objects owned by the caller, none twice.
    #[inline(always)]
    pub(super) unsafe fn slab_free(&self, slab: *mut SlabHeader, ch: Chain, freeze: bool) {
        // SAFETY: per the caller, `slab` is live.
        let [prior, counters] = unsafe { (*slab).read_pair() };
        // SAFETY: per the caller.
        let twice = unsafe { self.chain_has::<true>(slab, &ch, prior) };
        if !twice && plain_push_ok(prior, counters, ch.cnt) {
            // SAFETY: per the caller, `ch.tail` is ours until the cmpxchg
            // publishes it.
            unsafe { set_free_pointer(ch.tail, &self.layout, prior as *mut u8) };
            // `counters` is `inuse` (and the frozen bit) with
            // `inuse >= cnt`: the subtraction only lowers `inuse`.
            let new = [ch.head as usize, counters - ch.cnt];
            // SAFETY: the pair is 16-byte aligned inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [prior, counters], new) } {
                self.stat(Stat::FreeSlowpath);
                if counters & FROZEN != 0 {
                    self.stat(Stat::FreeFrozen);
                }
                return;
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
        // SAFETY: per the caller (same contract).
        unsafe { self.slab_free_slow(slab, ch, freeze) }
    }

    /// `slab_free` when the slab is not frozen, the inline attempt lost a
    /// race, or the chain meets the slab's freelist: the `update_pair`
    /// loop, with the node's list_lock when the slab moves between lists.
    ///
    /// # Safety
    /// As for `slab_free`.
    #[inline(never)]
    unsafe fn slab_free_slow(&self, slab: *mut SlabHeader, ch: Chain, freeze: bool) {
        self.stat(Stat::FreeSlowpath);
        // SAFETY: per the caller, `slab` is live; `node` never changes.
        let node = self.node(unsafe { (*slab).node() });
        let mut lists = None;
        let mut froze = false;
        let update = |[prior, counters]: [usize; 2]| {
            // SAFETY: per the caller.
            if unsafe { self.chain_has::<true>(slab, &ch, prior) }
                || (inuse(counters) as usize) < ch.cnt
            {
                return Err(());
            }
            // SAFETY: per the caller, `ch.tail` is ours until published.
            unsafe { set_free_pointer(ch.tail, &self.layout, prior as *mut u8) };
            let new_inuse = inuse(counters) as usize - ch.cnt;
            froze = false;
            if counters & FROZEN == 0 {
                if freeze && prior == 0 && self.cpu_partial_slabs.load(Ordering::Relaxed) != 0 {
                    // A full slab gains its first free objects: freeze
                    // it onto this CPU's partial list, no list_lock
                    // needed. Also when they are all of its objects (a
                    // bulk free of a whole slab), as upstream does: the
                    // next refill of this CPU takes it back without the
                    // list_lock, and a drain of the list frees it if the
                    // node has enough.
                    froze = true;
                    return Ok([ch.head as usize, new_inuse | FROZEN]);
                }
                if (prior == 0 || new_inuse == 0) && lists.is_none() {
                    lists = Some(P::node_lock(&node.lists));
                }
            }
            Ok([ch.head as usize, new_inuse | (counters & FROZEN)])
        };
        // SAFETY: per the caller, `slab` is live.
        let [prior, counters] = match unsafe { self.update_pair(slab, update) } {
            Ok(pair) => pair,
            Err(()) => {
                // A chain object heads the slab's freelist (freed
                // meanwhile by another context), or more objects are
                // freed than the slab has in use (some are free
                // already, deeper in a freelist): the chain is dropped
                // (its objects stay counted in use) rather than pushed.
                drop(lists);
                return self.report(ch.head, FreeError::DoubleFree);
            }
        };
        let was_frozen = counters & FROZEN != 0;
        let new_inuse = inuse(counters) as usize - ch.cnt;
        if was_frozen {
            drop(lists);
            self.stat(Stat::FreeFrozen);
            return;
        }
        if froze {
            drop(lists);
            // SAFETY: this free froze the slab, so it is ours to list.
            unsafe { self.put_cpu_partial(slab) };
            return;
        }
        let Some(mut lists) = lists else {
            return;
        };
        // SAFETY: list membership changes only under the node lock (held).
        if unsafe { lists.forgot(slab) } {
            // Its partial list was found broken and forgot it (reported):
            // the slab stays leaked, its objects counted free in it.
            return;
        }
        let mut d = Discards::new();
        // SAFETY: as above.
        let on_list = unsafe { lists.partial.holds(slab) };
        // Other partial slabs of the node: this one does not count.
        let others = lists.partial.len() - usize::from(on_list);
        if new_inuse == 0 && self.enough_partial(others) {
            // SAFETY: an unfrozen slab with `on_list` set is on its node's
            // partial list (`NodeLists` invariant; debug caches do not
            // come here).
            let intact = !on_list || unsafe { self.remove_partial(node, &mut lists, slab) };
            if on_list && intact {
                self.stat(Stat::FreeRemovePartial);
            }
            if intact {
                // SAFETY: empty, unfrozen, on no list now.
                unsafe { self.discard_locked(node, &mut lists, slab, &mut d) };
            }
        } else if prior == 0 && !on_list {
            // SAFETY: it was full (on no list) and is unfrozen.
            unsafe { Self::add_partial(node, &mut lists, slab, true) };
            self.stat(Stat::FreeAddPartial);
        }
        drop(lists);
        self.free_discards(d);
    }
}

/// Whether a free of `cnt` objects (none of them the head of the slab's
/// freelist, `prior`) may take the inline push given the slab's pair
/// `[prior, counters]`, a push that changes no slab state: the slab holds
/// at least `cnt` objects in use, and either the slab is frozen (its CPU
/// owns its state) or it is a partial slab (`prior` not null: on its
/// node's partial list) that keeps an object in use (no list change: not
/// full before, not empty after).
#[inline(always)]
fn plain_push_ok(prior: usize, counters: usize, cnt: usize) -> bool {
    let inuse = inuse(counters) as usize;
    inuse >= cnt && (counters & FROZEN != 0 || (prior != 0 && inuse > cnt))
}
