// SPDX-License-Identifier: GPL-2.0
//! The shim's ABI in Rust: the [`Platform`](crate::platform::Platform)
//! methods that only forward to a C shim function, the same for the kernel
//! (rust/kplat.rs) and the host machine (rust/core/host.rs). Both crates include
//! this file; the platform-free core does not use it. It lives in rust/core
//! so that the host crate is whole in its own folder (cargo-mutants builds
//! a copy of rust/core alone); the module crate includes it as it includes
//! the core's files.

/// The [`Platform`](crate::platform::Platform) methods that only forward to
/// the C shim, identical for every shim implementation (kernel and host
/// twin): `impl Platform for X { shim_platform_methods!(shim); ... }` with
/// the generated bindings module `shim` in scope.
#[macro_export]
macro_rules! shim_platform_methods {
    ($shim:ident) => {
        fn alloc_meta(size: usize, node: i32) -> *mut u8 {
            // SAFETY: plain allocation.
            unsafe { $shim::rslub_shim_alloc_meta(size as core::ffi::c_ulong, node) }.cast()
        }

        unsafe fn free_meta(p: *mut u8) {
            // SAFETY: per the caller, `p` came from `alloc_meta`.
            unsafe { $shim::rslub_shim_free_meta(p.cast()) }
        }

        unsafe fn alloc_pages(
            node: i32,
            gfp: u32,
            order: u32,
            owner: *mut core::ffi::c_void,
        ) -> *mut u8 {
            // SAFETY: plain page allocation; per the caller, `owner` is
            // null or a live kernel cache.
            unsafe { $shim::rslub_shim_alloc_pages(node, gfp, order, owner) }.cast()
        }

        unsafe fn free_pages(p: *mut u8, order: u32, owner: *mut core::ffi::c_void) {
            // SAFETY: per the caller, the block came from `alloc_pages(order,
            // owner)`.
            unsafe { $shim::rslub_shim_free_pages(p.cast(), order, owner) }
        }

        unsafe fn call_rcu_slab(base: *mut u8, owner: *mut core::ffi::c_void, cache: *const u8) {
            // SAFETY: per the caller, the block and its page are ours to
            // hand over until the callback runs.
            unsafe { $shim::rslub_shim_call_rcu_slab(base.cast(), owner, cache.cast_mut().cast()) }
        }

        fn rcu_barrier() {
            // SAFETY: no arguments; the callers may sleep.
            unsafe { $shim::rslub_shim_rcu_barrier() }
        }

        fn page_node(p: *const u8) -> i32 {
            // SAFETY: `p` is a slab address from `alloc_pages`.
            unsafe { $shim::rslub_shim_addr_to_node(p.cast()) }
        }

        fn slab_meta(base: *const u8) -> usize {
            // SAFETY: per the trait, `base` is a direct-mapped slab start,
            // whose page descriptor exists; the word is only read.
            unsafe { $shim::rslub_shim_slab_meta(base.cast()) as usize }
        }

        unsafe fn set_slab_meta(base: *mut u8, word: usize) {
            // SAFETY: per the caller, a block of ours from `alloc_pages`.
            unsafe { $shim::rslub_shim_set_slab_meta(base.cast(), word as core::ffi::c_ulong) }
        }

        fn alloc_header(node: i32, gfp: u32) -> *mut u8 {
            // SAFETY: plain allocation.
            unsafe { $shim::rslub_shim_alloc_header(node, gfp) }.cast()
        }

        unsafe fn free_header(p: *mut u8) {
            // SAFETY: per the caller, `p` came from `alloc_header`.
            unsafe { $shim::rslub_shim_free_header(p.cast()) }
        }

        fn addr_valid(p: *const u8) -> bool {
            // SAFETY: an address check, no dereference.
            unsafe { $shim::rslub_shim_addr_is_direct_mapped(p.cast()) }
        }

        fn addr_has_page(p: *const u8) -> bool {
            // SAFETY: an address check, no dereference.
            unsafe { $shim::rslub_shim_addr_has_page(p.cast()) }
        }

        fn gfp_allows_blocking(gfp: u32) -> bool {
            // SAFETY: pure function of its argument.
            unsafe { $shim::rslub_shim_gfp_allows_blocking(gfp) }
        }

        fn alloc_percpu(size: usize, align: usize) -> $crate::platform::Pcpu {
            // SAFETY: plain per-CPU allocation.
            unsafe {
                $shim::rslub_shim_alloc_percpu(
                    size as core::ffi::c_ulong,
                    align as core::ffi::c_ulong,
                ) as $crate::platform::Pcpu
            }
        }

        unsafe fn free_percpu(p: $crate::platform::Pcpu) {
            // SAFETY: per the caller, `p` came from `alloc_percpu`.
            unsafe { $shim::rslub_shim_free_percpu(p as core::ffi::c_ulong) }
        }

        fn per_cpu_ptr(p: $crate::platform::Pcpu, cpu: u32) -> *mut u8 {
            // SAFETY: `p` is a live per-CPU handle and `cpu` a possible CPU.
            unsafe { $shim::rslub_shim_per_cpu_ptr(p as core::ffi::c_ulong, cpu) }.cast()
        }

        fn this_cpu_ptr(p: $crate::platform::Pcpu) -> *mut u8 {
            // SAFETY: `p` is a live per-CPU handle.
            unsafe { $shim::rslub_shim_this_cpu_ptr(p as core::ffi::c_ulong) }.cast()
        }

        #[inline(always)]
        unsafe fn this_cpu_cmpxchg_pair(
            p: $crate::platform::Pcpu,
            old: [usize; 2],
            new: [usize; 2],
        ) -> bool {
            // SAFETY: per the caller, `p` is a live, 16-byte aligned
            // per-CPU pair.
            unsafe {
                $shim::rslub_shim_this_cpu_cmpxchg_pair(
                    p as core::ffi::c_ulong,
                    old[0] as core::ffi::c_ulong,
                    old[1] as core::ffi::c_ulong,
                    new[0] as core::ffi::c_ulong,
                    new[1] as core::ffi::c_ulong,
                )
            }
        }

        #[inline(always)]
        unsafe fn this_cpu_cmpxchg_pair_locked(
            p: $crate::platform::Pcpu,
            old: [usize; 2],
            new: [usize; 2],
        ) -> bool {
            // SAFETY: per the caller, `p` is a live, 16-byte aligned
            // per-CPU pair.
            unsafe {
                $shim::rslub_shim_this_cpu_cmpxchg_pair_locked(
                    p as core::ffi::c_ulong,
                    old[0] as core::ffi::c_ulong,
                    old[1] as core::ffi::c_ulong,
                    new[0] as core::ffi::c_ulong,
                    new[1] as core::ffi::c_ulong,
                )
            }
        }

        #[inline(always)]
        unsafe fn this_cpu_inc(p: $crate::platform::Pcpu) {
            // SAFETY: per the caller, `p` addresses a word inside a live
            // per-CPU area.
            unsafe { $shim::rslub_shim_this_cpu_inc(p as core::ffi::c_ulong) }
        }

        unsafe fn cmpxchg_pair(pair: *mut [usize; 2], old: [usize; 2], new: [usize; 2]) -> bool {
            // SAFETY: per the caller, `pair` is valid and 16-byte aligned.
            unsafe {
                $shim::rslub_shim_cmpxchg_pair(
                    pair.cast(),
                    old[0] as core::ffi::c_ulong,
                    old[1] as core::ffi::c_ulong,
                    new[0] as core::ffi::c_ulong,
                    new[1] as core::ffi::c_ulong,
                )
            }
        }

        fn cpu_lock() -> (u32, $crate::platform::CpuToken) {
            let mut cpu: core::ffi::c_uint = 0;
            // SAFETY: `cpu` is a valid out-pointer.
            let flags = unsafe { $shim::rslub_shim_cpu_lock(&mut cpu) };
            // SAFETY: the flags the CPU lock returned just now; the token
            // is `cpu_unlock`'s to consume.
            (cpu, unsafe {
                $crate::platform::CpuToken::new(flags as usize)
            })
        }

        fn cpu_lock_here() -> $crate::platform::CpuToken {
            // SAFETY: a null out-pointer asks for no CPU number.
            let flags = unsafe { $shim::rslub_shim_cpu_lock(core::ptr::null_mut()) };
            // SAFETY: as in `cpu_lock`.
            unsafe { $crate::platform::CpuToken::new(flags as usize) }
        }

        fn cpu_unlock(token: $crate::platform::CpuToken) {
            // SAFETY: a token is made only by `cpu_lock` and consumed here
            // once, so these are the flags of the lock this task holds.
            unsafe { $shim::rslub_shim_cpu_unlock(token.into_flags() as core::ffi::c_ulong) }
        }

        fn for_each_cpu_locked(f: &(dyn Fn(u32) + Sync)) {
            extern "C" fn each_cpu_tramp(info: *mut core::ffi::c_void, cpu: core::ffi::c_uint) {
                // SAFETY: `info` points to the `&dyn Fn` that the caller keeps
                // alive until the shim's `on_each_cpu` has returned.
                let f = unsafe { &*info.cast::<&(dyn Fn(u32) + Sync)>() };
                f(cpu);
            }
            let fref: &(dyn Fn(u32) + Sync) = f;
            // SAFETY: the trampoline reads `fref` only until the shim returns,
            // and `f` is `Sync`, so calling it on several CPUs at once is fine.
            unsafe {
                $shim::rslub_shim_on_each_cpu(
                    Some(each_cpu_tramp),
                    core::ptr::from_ref(&fref).cast_mut().cast(),
                )
            }
        }

        fn cpu_online(cpu: u32) -> bool {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_cpu_online(cpu) }
        }

        fn cpu_possible(cpu: u32) -> bool {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_cpu_possible(cpu) }
        }

        fn node_has_memory(node: i32) -> bool {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_node_has_memory(node) }
        }

        fn numa_node_id() -> i32 {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_numa_node_id() }
        }

        fn random() -> usize {
            // SAFETY: no arguments.
            unsafe { $shim::rslub_shim_random_long() as usize }
        }

        fn api_caller() -> usize {
            // SAFETY: no arguments; a stack walk of the current task.
            unsafe { $shim::rslub_shim_api_caller() as usize }
        }

        fn current_pid() -> i32 {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_current_pid() }
        }

        fn current_cpu() -> u32 {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_current_cpu() }
        }

        fn jiffies() -> usize {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_jiffies() as usize }
        }

        fn format_symbol(addr: usize, buf: &mut [u8]) -> usize {
            // SAFETY: `buf` has room for `buf.len()` bytes; `addr` is only
            // looked up, never dereferenced.
            let n = unsafe {
                $shim::rslub_shim_format_symbol(
                    buf.as_mut_ptr().cast(),
                    buf.len() as core::ffi::c_ulong,
                    addr as *const core::ffi::c_void,
                )
            };
            (n.max(0) as usize).min(buf.len())
        }

        fn node_distance(from: i32, to: i32) -> i32 {
            // SAFETY: a query.
            unsafe { $shim::rslub_shim_node_distance(from, to) }
        }
    };
}
