// SPDX-License-Identifier: GPL-2.0
//! Batched frees: the policy for frees that miss the CPU slab.
//!
//! An experiment that lost every benchmark row against classic frees
//! (docs/benchmarks.md), so it is a build variant: compiled only with
//! `--cfg rslub_free_batch` (Kbuild `VARIANT=free_batch`, `make bench
//! SUITE=free-batch`), where the `free_batch` module parameter defaults to
//! 32. The default module has no batch, tunable or counter of it.
//!
//! Classic SLUB returns such a free to its slab at once, one locked
//! cmpxchg16b per object (`free_slow.rs`): the cost upstream's sheaves
//! removed. With `free_batch` = N > 0 a CPU instead keeps up to N of them
//! in `CpuSlab::batch` (under the CPU lock) and, when the batch is full,
//! returns them grouped by slab, one slab update per group (the bulk path's
//! grouping, `group_by_slab`). Objects come back in runs of one slab in the
//! common cases: a producer's objects freed on a consumer CPU, a queue's
//! oldest objects, a burst of frees in allocation order.
//!
//! A batched object is free for its user and in use for its slab. Its free
//! pointer slot holds the `BATCHED` mark (encoded like a free pointer), so
//! a second free of it is reported instead of entering a batch twice, and
//! on every other way in too: the CPU-slab push (its slab may have become
//! the freeing CPU's slab since) and bulk frees (`is_batched`).
//! An allocation that misses the CPU freelist takes the most recently
//! batched object first (LIFO, like a sheaf, or SLQB's per-CPU queues), so
//! batched objects are reused at once. Batches go back to their slabs when
//! full, on `flush_all` (shrink, validate, destroy, lowering `free_batch`)
//! and when their CPU goes offline; `usage` counts them apart from live
//! objects.

use super::chain::Chain;
use super::{Cache, CpuGuard, MODE_HARDENED, MODE_OUT_HARDENED, MODE_OUT_PLAIN, MODE_PLAIN};
use crate::platform::Platform;
use crate::slab::{get_free_pointer_as, set_free_pointer, set_free_pointer_as, FreeError};
use crate::stat::Stat;
use core::ptr;
use core::sync::atomic::Ordering;

/// Largest `free_batch`: the size of the per-CPU array.
pub const FREE_BATCH_MAX: usize = 32;

/// The free pointer of a batched object: a non-canonical address, so never
/// a real next pointer of a freelist.
const BATCHED: usize = 0xdead_ba7c_0000_0000;

impl<P: Platform> Cache<P> {
    /// Sets `free_batch` (clamped to `FREE_BATCH_MAX`); lowering it returns
    /// what the CPUs hold.
    pub fn set_free_batch(&self, v: u32) {
        let v = v.min(FREE_BATCH_MAX as u32);
        if v < self.free_batch.swap(v, Ordering::Relaxed) {
            self.flush_all();
        }
    }

    /// `free_batch`.
    pub fn free_batch(&self) -> u32 {
        self.free_batch.load(Ordering::Relaxed)
    }

    /// Puts `obj`, which missed the CPU slab, in this CPU's batch, and
    /// returns the batch to the slabs once it holds `limit` objects.
    ///
    /// # Safety
    /// `obj` is an object of this cache validated by `object_slab` and
    /// handed over by the caller; free pointers are written the `HARDENED` way.
    #[inline(never)]
    pub(super) unsafe fn free_batched<const HARDENED: bool>(&self, obj: *mut u8, limit: u32) {
        // SAFETY: a validated object.
        if unsafe { self.is_batched::<HARDENED>(obj) } {
            return self.report(obj, FreeError::DoubleFree);
        }
        // SAFETY: per the caller, `obj` is ours now.
        unsafe { set_free_pointer_as::<HARDENED>(obj, &self.layout, BATCHED as *mut u8) };
        let mut g = self.cpu_lock();
        let n = g.batch_len as usize;
        // A batch is returned as soon as it holds `limit <= FREE_BATCH_MAX`
        // objects, so `n < FREE_BATCH_MAX` here.
        let Some(slot) = g.batch.get_mut(n) else {
            drop(g);
            // SAFETY: per the caller; the mark is overwritten by the chain.
            return unsafe {
                self.slab_free(
                    self.header_of(self.layout.slab_base(obj)),
                    Chain::one(obj),
                    true,
                )
            };
        };
        *slot = obj;
        g.batch_len += 1;
        g.stat(Stat::FreeBatched);
        if (n as u32) + 1 >= limit {
            self.batch_full::<HARDENED>(g);
        }
    }

    /// Whether `obj` sits in a CPU's batch (its free pointer holds the
    /// `BATCHED` mark): a free of it now is a double free, wherever its
    /// slab is (the CPU slab too: the slab may have become a CPU slab
    /// after the first free was batched).
    ///
    /// # Safety
    /// `obj` is an object start of this cache (its free pointer slot is
    /// mapped).
    #[inline(always)]
    pub(super) unsafe fn is_batched<const HARDENED: bool>(&self, obj: *const u8) -> bool {
        // SAFETY: per the caller.
        unsafe { get_free_pointer_as::<HARDENED>(obj, &self.layout) as usize == BATCHED }
    }

    /// Returns this CPU's full batch to the slabs, with the lock `g` holds
    /// dropped. Out of line: the common batched free needs no room for the
    /// copy.
    #[inline(never)]
    fn batch_full<const HARDENED: bool>(&self, mut g: CpuGuard<P>) {
        let mut out = [ptr::null_mut(); FREE_BATCH_MAX];
        let out = Self::take_batch(&mut g, &mut out);
        drop(g);
        // SAFETY: the batch was this CPU's, detached under its lock:
        // validated objects of this cache, handed over by their freers.
        unsafe { self.release_batch::<HARDENED>(out, true) };
    }

    /// Takes the most recently batched object of the CPU `g` guards for an
    /// allocation on `node`, if its slab's node suits.
    #[inline(always)]
    pub(super) fn batch_pop(&self, g: &mut CpuGuard<P>, node: i32) -> Option<*mut u8> {
        let top = (g.batch_len as usize).checked_sub(1)?;
        let obj = *g.batch.get(top)?;
        if !Self::node_match(self.header_of(self.layout.slab_base(obj)), node) {
            return None;
        }
        g.batch_len -= 1;
        // SAFETY: a validated object of this cache, ours again: its mark
        // goes (a later free of it is not a double free).
        unsafe { set_free_pointer(obj, &self.layout, ptr::null_mut()) };
        g.stat(Stat::AllocFromBatch);
        Some(obj)
    }

    /// Moves the batch of the CPU `g` guards into `out`; returns the part
    /// of `out` it fills.
    fn take_batch<'a, const HOLDS_LOCK: bool>(
        g: &mut CpuGuard<P, HOLDS_LOCK>,
        out: &'a mut [*mut u8; FREE_BATCH_MAX],
    ) -> &'a mut [*mut u8] {
        let n = (g.batch_len as usize).min(FREE_BATCH_MAX);
        // The whole array: no length check (and panic path) to prove.
        *out = g.batch;
        g.batch_len = 0;
        if n != 0 {
            g.stat(Stat::FreeBatchFlush);
        }
        &mut out[..n]
    }

    /// Returns batched objects to their slabs, one chain per slab. On the
    /// free path (`on_cpu`, no lock held) a chain of the CPU slab takes the
    /// lockless push and a full slab's first free may freeze it onto this
    /// CPU's partial list; under a flush (a CPU's lock held by the caller,
    /// or a dead CPU) every chain goes to `slab_free` without freezing.
    ///
    /// # Safety
    /// `objs` are validated objects of this cache, handed over, their free
    /// pointers written the `HARDENED` way.
    unsafe fn release_batch<const HARDENED: bool>(&self, objs: &mut [*mut u8], on_cpu: bool) {
        let sink = |slab, ch| {
            // SAFETY: each chain `group_by_slab` hands over is of objects
            // of the validated `slab`, handed over by the caller.
            unsafe {
                if on_cpu {
                    self.free_chain::<HARDENED, true>(slab, ch);
                } else {
                    self.slab_free(slab, ch, false);
                }
            }
        };
        // SAFETY: per the caller; every chain the grouping makes is of
        // objects of one validated slab.
        unsafe {
            if self.layout.header_outside {
                self.group_by_slab::<HARDENED, true, true, false>(objs, sink);
            } else {
                self.group_by_slab::<HARDENED, false, true, false>(objs, sink);
            }
        }
    }

    /// Returns the batch of the CPU `g` guards to the slabs (a flush: the
    /// lock is held by the caller or the CPU is dead).
    pub(super) fn flush_batch<const HOLDS_LOCK: bool>(&self, g: &mut CpuGuard<P, HOLDS_LOCK>) {
        let mut out = [ptr::null_mut(); FREE_BATCH_MAX];
        let out = Self::take_batch(g, &mut out);
        // SAFETY: detached from the guarded CPU: validated objects of this
        // cache, written the way the cache's mode says (debug caches never
        // batch).
        unsafe {
            if self.mode == MODE_HARDENED || self.mode == MODE_OUT_HARDENED {
                self.release_batch::<true>(out, false);
            } else if self.mode == MODE_PLAIN || self.mode == MODE_OUT_PLAIN {
                self.release_batch::<false>(out, false);
            }
        }
    }
}
