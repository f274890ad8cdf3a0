// SPDX-License-Identifier: GPL-2.0
//! The kernel [`Platform`]: the C shim for per-CPU operations, pages and
//! topology, and the kernel crate's irq-safe spinlock for node lists.

use crate::platform::Platform;
use crate::shim;

use core::ptr;
use kernel::prelude::*;
use kernel::sync::{new_spinlock_irq, SpinLockIrq, SpinLockIrqGuard};

/// The kernel as the allocator core's platform.
pub struct Kernel;

/// A cache in the kernel.
pub type Cache = crate::slub::Cache<Kernel>;

// SAFETY: the shim's per-CPU cmpxchg16b is segment-relative (atomic against
// interrupts and preemption on the CPU), its plain one is `lock cmpxchg16b`,
// and the CPU lock is `local_irq_save`, which pins the task and excludes
// interrupt handlers; node locks are irq-safe spinlocks.
unsafe impl Platform for Kernel {
    type NodeLock<T: Send + Unpin> = SpinLockIrq<T>;
    type NodeGuard<'a, T: Send + Unpin + 'a> = SpinLockIrqGuard<'a, T>;

    const MAX_CPU_IDS: u32 = kernel::bindings::CONFIG_NR_CPUS;

    unsafe fn node_lock_init<T: Send + Unpin>(slot: *mut Self::NodeLock<T>, data: T) -> bool {
        // SAFETY: per the caller, `slot` is valid, aligned, uninitialized
        // and never moved, as pinned initialization requires.
        unsafe { new_spinlock_irq!(data, "rslub_list_lock").__init(slot) }.is_ok()
    }

    unsafe fn node_lock_drop<T: Send + Unpin>(slot: *mut Self::NodeLock<T>) {
        // SAFETY: per the caller, the lock is initialized, not held and not
        // used again.
        unsafe { ptr::drop_in_place(slot) };
    }

    fn node_lock<T: Send + Unpin>(lock: &Self::NodeLock<T>) -> Self::NodeGuard<'_, T> {
        lock.lock()
    }

    crate::shim_platform_methods!(shim);

    const FREED_PAGES_MAY_UNMAP: bool = cfg!(CONFIG_DEBUG_PAGEALLOC);

    unsafe fn read_word_nofault(p: *const usize) -> Option<usize> {
        let mut word = 0;
        // SAFETY: a read that reports a fault instead of taking it.
        unsafe { shim::rslub_shim_read_word_nofault(p.cast(), &mut word) }.then_some(word as usize)
    }

    fn nr_cpu_ids() -> u32 {
        crate::consts().nr_cpu_ids
    }

    fn nr_node_ids() -> u32 {
        crate::consts().nr_node_ids as u32
    }

    fn report(args: core::fmt::Arguments<'_>) {
        pr_err!("{}\n", args);
    }

    fn checkers_off(off: bool) {
        // SAFETY: the core pairs the calls on one task (`report.rs`).
        unsafe { crate::shim::rslub_shim_kdebug_quiet(off) };
    }
}

/// The RCU callback of a dead slab of a `SLAB_TYPESAFE_BY_RCU` cache
/// (c_shim/shim.c, `rslub_shim_call_rcu_slab`), with what the shim kept
/// in the slab's `struct page`.
///
/// # Safety
/// `cache` and `base` are what a cache queued, and its grace period is over.
#[no_mangle]
pub unsafe extern "C" fn rslub_rust_rcu_free_slab(
    cache: *mut core::ffi::c_void,
    base: *mut core::ffi::c_void,
) {
    // SAFETY: per the caller.
    unsafe { Cache::rcu_free_slab(cache.cast(), base as usize) }
}
