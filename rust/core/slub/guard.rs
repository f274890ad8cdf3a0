// SPDX-License-Identifier: GPL-2.0
//! The two ownership tokens the slow paths pass around: [`CpuGuard`], one
//! CPU's state under that CPU's lock, and [`Discards`], slabs on their way
//! back to the page allocator once the locks are dropped.

use super::{CpuSlab, Node};
use crate::platform::{CpuToken, Pcpu, Platform};
use crate::slab::SlabHeader;
use crate::stat::Stat;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr;
use core::sync::atomic::Ordering;

/// Exclusive access to one CPU's [`CpuSlab`] of a cache, derefs to it.
/// `CpuGuard<P>` holds the CPU lock itself and releases it on drop;
/// `CpuGuard<P, false>` stands for a lock someone else holds (a flush
/// callback's) or for a dead CPU.
///
/// # Invariants
/// `c` is the `CpuSlab` of a possible CPU of the cache. While the guard
/// exists no other code writes that `CpuSlab` except the per-CPU event
/// counter increments made by this same context (and `stat_clear`, which
/// zeroes a counter racily from anywhere): either this guard holds
/// that CPU's lock (`HOLDS_LOCK`: taken with `token`; irqs off, the task pinned,
/// so no fast path or interrupt runs there), or its creator holds the lock
/// for the guard's whole life, or the CPU is dead. Other CPUs only read it
/// racily (volatile loads, for reporting).
pub(super) struct CpuGuard<P: Platform, const HOLDS_LOCK: bool = true> {
    c: *mut CpuSlab,
    /// The lock's token when `HOLDS_LOCK` (handed back on drop); unused otherwise.
    token: ManuallyDrop<CpuToken>,
    _p: PhantomData<P>,
}

impl<P: Platform> CpuGuard<P> {
    /// Takes the lock of the CPU the caller runs on.
    #[inline(always)]
    pub(super) fn lock(pcpu: &Pcpu) -> Self {
        let token = P::cpu_lock_here();
        // INVARIANT: this CPU's lock was just taken, so the task stays on
        // it while the guard lives.
        Self {
            // `pcpu` is read only now: before the lock it would be kept
            // across the call (the bulk path's instruction count). This
            // CPU's instance by its per-CPU offset, one load, where the
            // CPU number and the offset table took three.
            c: P::this_cpu_ptr(*pcpu).cast(),
            token: ManuallyDrop::new(token),
            _p: PhantomData,
        }
    }

    /// Runs `f` with the CPU lock dropped (a sleeping page allocation) and
    /// takes it again, on whatever CPU the task then runs: afterwards the
    /// guard may name another CPU's state (of the per-CPU area `pcpu`).
    pub(super) fn unlocked<R>(&mut self, pcpu: &Pcpu, f: impl FnOnce() -> R) -> R {
        // SAFETY: the token of the lock this guard holds, taken out once
        // and replaced below before anything can read it again.
        P::cpu_unlock(unsafe { ManuallyDrop::take(&mut self.token) });
        let r = f();
        let token = P::cpu_lock_here();
        // INVARIANT: the lock of the CPU the task runs on now is held
        // again, by this guard.
        self.c = P::this_cpu_ptr(*pcpu).cast();
        self.token = ManuallyDrop::new(token);
        r
    }
}

impl<P: Platform> CpuGuard<P, false> {
    /// Access to `cpu`'s state without taking its lock.
    ///
    /// # Safety
    /// The caller holds `cpu`'s lock for the guard's whole life (a flush
    /// callback), or `cpu` is dead and nothing else flushes it.
    pub(super) unsafe fn assume_locked(pcpu: Pcpu, cpu: u32) -> Self {
        // INVARIANT: per the caller, nothing else writes `cpu`'s state.
        Self {
            c: P::per_cpu_ptr(pcpu, cpu).cast(),
            // SAFETY: never handed to `cpu_unlock`: the guard is not `HOLDS_LOCK`.
            token: ManuallyDrop::new(unsafe { CpuToken::new(0) }),
            _p: PhantomData,
        }
    }
}

impl<P: Platform, const HOLDS_LOCK: bool> CpuGuard<P, HOLDS_LOCK> {
    /// Counts an event on the guarded CPU.
    #[inline(always)]
    pub(super) fn stat(&mut self, s: Stat) {
        #[cfg(not(rslub_no_stats))]
        {
            self.stats[s as usize] += 1;
        }
        #[cfg(rslub_no_stats)]
        let _ = s;
    }
}

impl<P: Platform, const HOLDS_LOCK: bool> core::ops::Deref for CpuGuard<P, HOLDS_LOCK> {
    type Target = CpuSlab;

    #[inline(always)]
    fn deref(&self) -> &CpuSlab {
        // SAFETY: by the type invariant `c` is valid and only this guard
        // writes it.
        unsafe { &*self.c }
    }
}

impl<P: Platform, const HOLDS_LOCK: bool> core::ops::DerefMut for CpuGuard<P, HOLDS_LOCK> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut CpuSlab {
        // SAFETY: by the type invariant `c` is valid and only this guard
        // accesses it mutably; the borrow is tied to `&mut self`.
        unsafe { &mut *self.c }
    }
}

impl<P: Platform, const HOLDS_LOCK: bool> Drop for CpuGuard<P, HOLDS_LOCK> {
    #[inline(always)]
    fn drop(&mut self) {
        if HOLDS_LOCK {
            // SAFETY: an `HOLDS_LOCK` guard's token is its lock's, taken out once,
            // here, as the guard goes.
            P::cpu_unlock(unsafe { ManuallyDrop::take(&mut self.token) });
        }
    }
}

/// Slabs to return to the page allocator once locks are dropped
/// (`free_discards`), linked through `next`.
///
/// # Invariants
/// Every slab on the chain is killed (its magic cleared), on no list, no
/// longer counted by its node, and owned by this value.
pub(super) struct Discards(pub(super) *mut SlabHeader);

impl Discards {
    pub(super) const fn new() -> Self {
        Discards(ptr::null_mut())
    }

    /// Kills `slab` and queues it for freeing: from now on frees of its
    /// objects are refused and nothing finds it.
    ///
    /// # Safety
    /// `slab` is a live, unfrozen slab of the cache on `node`, on no list
    /// and not reachable by any CPU (its objects are all free).
    pub(super) unsafe fn kill_and_queue<P: Platform>(
        &mut self,
        node: &Node<P>,
        slab: *mut SlabHeader,
    ) {
        node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: per the caller, the slab is ours.
        unsafe {
            (*slab).kill();
            (*slab).next = self.0;
        }
        // INVARIANT: killed, on no list, uncounted, ours.
        self.0 = slab;
    }
}
