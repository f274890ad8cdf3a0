// SPDX-License-Identifier: GPL-2.0
//! The kernel [`Platform`]: the C shim for per-CPU operations, pages and
//! topology, and the kernel crate's irq-safe spinlock for node lists.

use crate::platform::{Pcpu, Platform};
use crate::shim;
use core::ffi::{c_uint, c_ulong, c_void};
use core::ptr;
use kernel::prelude::*;
use kernel::sync::{new_spinlock_irq, SpinLockIrq, SpinLockIrqGuard};

/// The kernel as the allocator core's platform.
pub struct Kernel;

extern "C" fn each_cpu_tramp(info: *mut c_void, cpu: c_uint) {
    // SAFETY: `info` points to the `&dyn Fn` that `for_each_cpu_locked`
    // keeps alive until `rslub_shim_on_each_cpu` has returned.
    let f = unsafe { &*info.cast::<&(dyn Fn(u32) + Sync)>() };
    f(cpu);
}

// SAFETY: the shim's per-CPU cmpxchg16b is segment-relative (atomic against
// interrupts and preemption on the CPU), its plain one is `lock cmpxchg16b`,
// and the CPU lock is `local_irq_save`, which pins the task and excludes
// interrupt handlers; node locks are irq-safe spinlocks.
unsafe impl Platform for Kernel {
    type NodeLock = SpinLockIrq<()>;
    type NodeGuard<'a> = SpinLockIrqGuard<'a, ()>;

    unsafe fn node_lock_init(slot: *mut Self::NodeLock) -> bool {
        // SAFETY: per the caller, `slot` is valid, aligned, uninitialized
        // and never moved, as pinned initialization requires.
        unsafe { new_spinlock_irq!((), "rslub_list_lock").__init(slot) }.is_ok()
    }

    unsafe fn node_lock_drop(slot: *mut Self::NodeLock) {
        // SAFETY: per the caller, the lock is initialized and unused.
        unsafe { ptr::drop_in_place(slot) };
    }

    fn node_lock(lock: &Self::NodeLock) -> Self::NodeGuard<'_> {
        lock.lock()
    }

    fn alloc_meta(size: usize, node: i32) -> *mut u8 {
        // SAFETY: plain allocation.
        unsafe { shim::rslub_shim_alloc_meta(size as c_ulong, node) }.cast()
    }

    unsafe fn free_meta(p: *mut u8) {
        // SAFETY: per the caller, `p` came from `alloc_meta`.
        unsafe { shim::rslub_shim_free_meta(p.cast()) }
    }

    fn alloc_pages(node: i32, gfp: u32, order: u32) -> *mut u8 {
        // SAFETY: plain page allocation.
        unsafe { shim::rslub_shim_alloc_pages(node, gfp, order) }.cast()
    }

    unsafe fn free_pages(p: *mut u8, order: u32) {
        // SAFETY: per the caller, the block came from `alloc_pages(order)`.
        unsafe { shim::rslub_shim_free_pages(p.cast(), order) }
    }

    fn page_node(p: *const u8) -> i32 {
        // SAFETY: `p` is a slab address from `alloc_pages`.
        unsafe { shim::rslub_shim_addr_to_node(p.cast()) }
    }

    fn addr_valid(p: *const u8) -> bool {
        // SAFETY: an address check, no dereference.
        unsafe { shim::rslub_shim_addr_is_direct_mapped(p.cast()) }
    }

    fn gfp_allows_blocking(gfp: u32) -> bool {
        // SAFETY: pure function of its argument.
        unsafe { shim::rslub_shim_gfp_allows_blocking(gfp) }
    }

    fn alloc_percpu(size: usize, align: usize) -> Pcpu {
        // SAFETY: plain per-CPU allocation.
        unsafe { shim::rslub_shim_alloc_percpu(size as c_ulong, align as c_ulong) as Pcpu }
    }

    unsafe fn free_percpu(p: Pcpu) {
        // SAFETY: per the caller, `p` came from `alloc_percpu`.
        unsafe { shim::rslub_shim_free_percpu(p as c_ulong) }
    }

    fn per_cpu_ptr(p: Pcpu, cpu: u32) -> *mut u8 {
        // SAFETY: `p` is a live per-CPU handle and `cpu` a possible CPU.
        unsafe { shim::rslub_shim_per_cpu_ptr(p as c_ulong, cpu) }.cast()
    }

    fn this_cpu_ptr(p: Pcpu) -> *mut u8 {
        // SAFETY: `p` is a live per-CPU handle.
        unsafe { shim::rslub_shim_this_cpu_ptr(p as c_ulong) }.cast()
    }

    #[inline(always)]
    fn this_cpu_cmpxchg_pair(p: Pcpu, old: [usize; 2], new: [usize; 2]) -> bool {
        // SAFETY: `p` is a live, 16-byte aligned per-CPU pair.
        unsafe {
            shim::rslub_shim_this_cpu_cmpxchg_pair(
                p as c_ulong,
                old[0] as c_ulong,
                old[1] as c_ulong,
                new[0] as c_ulong,
                new[1] as c_ulong,
            )
        }
    }

    #[inline(always)]
    fn this_cpu_inc(p: Pcpu) {
        // SAFETY: `p` addresses a word inside a live per-CPU area.
        unsafe { shim::rslub_shim_this_cpu_inc(p as c_ulong) }
    }

    unsafe fn cmpxchg_pair(pair: *mut [usize; 2], old: [usize; 2], new: [usize; 2]) -> bool {
        // SAFETY: per the caller, `pair` is valid and 16-byte aligned.
        unsafe {
            shim::rslub_shim_cmpxchg_pair(
                pair.cast(),
                old[0] as c_ulong,
                old[1] as c_ulong,
                new[0] as c_ulong,
                new[1] as c_ulong,
            )
        }
    }

    fn cpu_lock() -> (u32, usize) {
        let mut cpu: c_uint = 0;
        // SAFETY: `cpu` is a valid out-pointer.
        let flags = unsafe { shim::rslub_shim_cpu_lock(&mut cpu) };
        (cpu, flags as usize)
    }

    fn cpu_unlock(token: usize) {
        // SAFETY: `token` came from the matching `cpu_lock`.
        unsafe { shim::rslub_shim_cpu_unlock(token as c_ulong) }
    }

    fn for_each_cpu_locked(f: &(dyn Fn(u32) + Sync)) {
        let fref: &(dyn Fn(u32) + Sync) = f;
        // SAFETY: the trampoline reads `fref` only until the shim returns,
        // and `f` is `Sync`, so calling it on several CPUs at once is fine.
        unsafe {
            shim::rslub_shim_on_each_cpu(
                Some(each_cpu_tramp),
                ptr::from_ref(&fref).cast_mut().cast(),
            )
        }
    }

    fn cpu_online(cpu: u32) -> bool {
        // SAFETY: a query.
        unsafe { shim::rslub_shim_cpu_online(cpu) }
    }

    fn nr_cpu_ids() -> u32 {
        crate::consts().nr_cpu_ids
    }

    fn cpu_possible(cpu: u32) -> bool {
        // SAFETY: a query.
        unsafe { shim::rslub_shim_cpu_possible(cpu) }
    }

    fn nr_node_ids() -> u32 {
        crate::consts().nr_node_ids as u32
    }

    fn node_has_memory(node: i32) -> bool {
        // SAFETY: a query.
        unsafe { shim::rslub_shim_node_has_memory(node) }
    }

    fn numa_node_id() -> i32 {
        // SAFETY: a query.
        unsafe { shim::rslub_shim_numa_node_id() }
    }

    fn fallback_nodes(node: i32, out: &mut [i32]) -> usize {
        let max = out.len().min(i32::MAX as usize) as i32;
        // SAFETY: `out` has room for `max` ids.
        let n = unsafe { shim::rslub_shim_fallback_nodes(node, out.as_mut_ptr(), max) };
        n.max(0) as usize
    }

    fn report(args: core::fmt::Arguments<'_>) {
        pr_err!("{}\n", args);
    }
}
