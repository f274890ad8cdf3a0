// SPDX-License-Identifier: GPL-2.0
//! The small interface the allocator core needs from its environment.
//!
//! Two implementations exist: the kernel one (rust/kplat.rs, over the C shim
//! and the kernel crate's spinlock) and the host one (host.rs, over the C
//! host machine, threads standing in for CPUs). Both call shim functions
//! whose Rust declarations bindgen generates from c_shim/shim.h.

/// A per-CPU area handle: a `__percpu` pointer in the kernel.
pub type Pcpu = usize;

/// Proof that the task holds its CPU's lock (`Platform::cpu_lock`): the
/// interrupt state to restore. Only a platform's `cpu_lock` makes one (the
/// constructor is unsafe), and `cpu_unlock` consumes it, so code without
/// `unsafe` can neither forge a token nor restore one twice.
#[must_use = "the CPU lock is held until the token goes back to cpu_unlock"]
pub struct CpuToken(usize);

impl CpuToken {
    /// A token for the interrupt state `flags`.
    ///
    /// # Safety
    /// `flags` is what taking this CPU's lock returned just now, and the
    /// token goes back to the `cpu_unlock` of the same platform, on the
    /// same CPU, once.
    pub unsafe fn new(flags: usize) -> Self {
        Self(flags)
    }

    /// The interrupt state, for the platform's `cpu_unlock`.
    pub fn into_flags(self) -> usize {
        self.0
    }
}

/// The environment the core runs in.
///
/// # Safety
/// Implementations must provide the documented atomicity: `this_cpu_cmpxchg_pair`
/// is atomic against everything else running on the current CPU (interrupts,
/// preemption) and fails when the pair changed; `cmpxchg_pair` is atomic
/// against every CPU; `cpu_lock` keeps the caller on its CPU and excludes
/// every other holder of the same CPU's lock, including interrupt handlers.
pub unsafe trait Platform: Sized + 'static {
    /// An irq-safe lock that owns the data it protects (one node's lists):
    /// the guard is the only way to reach the data.
    type NodeLock<T: Send + Unpin>: Send + Sync;
    /// Proof that a `NodeLock<T>` is held; gives access to its `T` and
    /// releases the lock when dropped.
    type NodeGuard<'a, T: Send + Unpin + 'a>: core::ops::DerefMut<Target = T>;

    /// Initializes a node lock holding `data` in place.
    ///
    /// # Safety
    /// `slot` is valid, suitably aligned, uninitialized memory that is not
    /// moved afterwards.
    unsafe fn node_lock_init<T: Send + Unpin>(slot: *mut Self::NodeLock<T>, data: T) -> bool;
    /// Tears down a node lock (and drops its data) in place.
    ///
    /// # Safety
    /// `slot` was initialized by `node_lock_init`, is not held and is not
    /// used afterwards.
    unsafe fn node_lock_drop<T: Send + Unpin>(slot: *mut Self::NodeLock<T>);
    /// Takes a node lock (irq-safe).
    fn node_lock<T: Send + Unpin>(lock: &Self::NodeLock<T>) -> Self::NodeGuard<'_, T>;

    /// Allocates `size` bytes of zeroed bookkeeping memory on `node`.
    fn alloc_meta(size: usize, node: i32) -> *mut u8;
    /// Frees memory from `alloc_meta`.
    ///
    /// # Safety
    /// `p` came from `alloc_meta` and is not used afterwards.
    unsafe fn free_meta(p: *mut u8);

    /// `2^order` naturally aligned pages from `node` (or the local node for
    /// a negative id); null on failure. `owner`: null, or the kernel cache
    /// a served cache's slabs belong to (`Cache::set_page_owner`).
    ///
    /// # Safety
    /// `owner` is null or a live kernel cache.
    unsafe fn alloc_pages(
        node: i32,
        gfp: u32,
        order: u32,
        owner: *mut core::ffi::c_void,
    ) -> *mut u8;
    /// Frees a block from `alloc_pages`.
    ///
    /// # Safety
    /// `p` came from `alloc_pages` with this `order` and `owner`, and is
    /// unused.
    unsafe fn free_pages(p: *mut u8, order: u32, owner: *mut core::ffi::c_void);
    /// Queues the dead slab at `base` (a block `alloc_pages` gave with
    /// `owner`) for `Cache::rcu_free_slab(cache, base)` after an RCU grace
    /// period (`SLAB_TYPESAFE_BY_RCU` caches). What the callback needs is
    /// kept outside the slab's memory (the kernel: in the block's
    /// `struct page`), where an overflow of the slab cannot reach it.
    ///
    /// # Safety
    /// `base` is a dead slab of `cache` that nothing else frees or uses
    /// until the callback runs; `cache` outlives the callback.
    unsafe fn call_rcu_slab(base: *mut u8, owner: *mut core::ffi::c_void, cache: *const u8);
    /// Waits until every callback `call_rcu` queued so far has run. Sleeps.
    fn rcu_barrier();
    /// Node of the memory at `p`.
    fn page_node(p: *const u8) -> i32;
    /// The word a slab keeps beside its pages, for a header outside the
    /// slab (`Layout::header_outside`): the `private` word of the first
    /// page's `struct page`, as a page's owner may use it. `base` is
    /// `addr_valid` and aligned to a slab; for a block `alloc_pages` did
    /// not return (or returned to somebody else) the word is whatever its
    /// owner keeps there, 0 included, and is only checked, never trusted.
    fn slab_meta(base: *const u8) -> usize;
    /// A block for one slab header kept outside its slab (`HEADER_SIZE`
    /// bytes, aligned to 64; `meta_addr_valid`), on `node` (or any, when
    /// negative), with the `gfp` of the slab's pages; null on failure.
    fn alloc_header(node: i32, gfp: u32) -> *mut u8;
    /// Frees a block from `alloc_header`.
    ///
    /// # Safety
    /// `p` came from `alloc_header` and is not used afterwards.
    unsafe fn free_header(p: *mut u8);
    /// Sets the word `slab_meta` reads, of a block from `alloc_pages`.
    ///
    /// # Safety
    /// `base` came from `alloc_pages` and is not freed yet; before it is,
    /// the word is set back to 0.
    unsafe fn set_slab_meta(base: *mut u8, word: usize);
    /// Whether `p` points into memory the allocator could have handed out
    /// (readable when aligned down to a slab).
    fn addr_valid(p: *const u8) -> bool;
    /// The full form of `addr_valid` (a page backs `p`), for debug caches:
    /// dearer, and it catches more bad pointers.
    fn addr_has_page(p: *const u8) -> bool;
    /// Whether `p` may be read as the start of a block `alloc_meta` could
    /// have returned (the word there is only compared): in the kernel,
    /// `alloc_meta` is `kzalloc`, whose memory is in the direct map, so
    /// the cheap `addr_valid` answers.
    fn meta_addr_valid(p: *const u8) -> bool {
        Self::addr_valid(p)
    }
    /// Whether `gfp` allows sleeping (so page allocation runs with the CPU
    /// lock dropped).
    fn gfp_allows_blocking(gfp: u32) -> bool;
    /// Whether the pages of a freed slab may be unmapped at once (the
    /// kernel's `DEBUG_PAGEALLOC`): then the lockless alloc, which reads
    /// the next pointer of an object another context may have taken and
    /// whose slab it may have freed, reads it with `read_word_nofault`.
    const FREED_PAGES_MAY_UNMAP: bool = false;
    /// The word at `p`, or None if reading it would fault.
    ///
    /// # Safety
    /// `p` is word aligned. Unless `FREED_PAGES_MAY_UNMAP`, it is mapped.
    unsafe fn read_word_nofault(p: *const usize) -> Option<usize> {
        // SAFETY: per the caller, mapped and aligned.
        Some(unsafe { core::ptr::read_volatile(p) })
    }

    /// Zeroed per-CPU area of `size` bytes aligned to `align`; 0 on failure.
    fn alloc_percpu(size: usize, align: usize) -> Pcpu;
    /// Frees a per-CPU area.
    ///
    /// # Safety
    /// `p` came from `alloc_percpu` and is unused.
    unsafe fn free_percpu(p: Pcpu);
    /// The instance of `p` belonging to `cpu`.
    fn per_cpu_ptr(p: Pcpu, cpu: u32) -> *mut u8;
    /// The current CPU's instance of `p`; the caller may be migrated right
    /// after, so the result is only a hint unless the CPU lock is held.
    fn this_cpu_ptr(p: Pcpu) -> *mut u8;
    /// Replaces this CPU's pair at `p` with `new` if it equals `old`.
    ///
    /// # Safety
    /// `p` addresses a 16-byte aligned pair inside a live per-CPU area
    /// from `alloc_percpu` (its instances are written).
    unsafe fn this_cpu_cmpxchg_pair(p: Pcpu, old: [usize; 2], new: [usize; 2]) -> bool;
    /// `this_cpu_cmpxchg_pair` with a lock prefix (the `locked_cmpxchg`
    /// build variant; the same operation where there is no prefix to add).
    ///
    /// # Safety
    /// As for `this_cpu_cmpxchg_pair`.
    unsafe fn this_cpu_cmpxchg_pair_locked(p: Pcpu, old: [usize; 2], new: [usize; 2]) -> bool;
    /// Adds one to this CPU's counter at `p` (a per-CPU address).
    ///
    /// # Safety
    /// `p` addresses an aligned word inside a live per-CPU area from
    /// `alloc_percpu`.
    unsafe fn this_cpu_inc(p: Pcpu);
    /// Replaces the pair at `pair` with `new` if it equals `old`, atomically
    /// against all CPUs.
    ///
    /// # Safety
    /// `pair` is valid and 16-byte aligned.
    unsafe fn cmpxchg_pair(pair: *mut [usize; 2], old: [usize; 2], new: [usize; 2]) -> bool;

    /// Pins the caller to its CPU and excludes the CPU's other users
    /// (interrupts included). Returns the CPU and the token `cpu_unlock`
    /// takes back.
    fn cpu_lock() -> (u32, CpuToken);
    /// `cpu_lock` for a caller that does not need the CPU's number (it
    /// finds its per-CPU data with `this_cpu_ptr`): the number is not read.
    fn cpu_lock_here() -> CpuToken {
        Self::cpu_lock().1
    }
    /// Undoes the `cpu_lock` that made `token`.
    fn cpu_unlock(token: CpuToken);
    /// Runs `f(cpu)` for every online CPU with that CPU's lock held (in the
    /// kernel: on that CPU, from a bound work item with irqs off), and waits
    /// for all of them. Sleeps.
    fn for_each_cpu_locked(f: &(dyn Fn(u32) + Sync));
    /// Whether `cpu` is online.
    fn cpu_online(cpu: u32) -> bool;
    /// Highest possible CPU id plus one.
    fn nr_cpu_ids() -> u32;
    /// A bound on `nr_cpu_ids` fixed at build time (`CONFIG_NR_CPUS`): the
    /// tid step is a constant, so the fast paths add an immediate.
    const MAX_CPU_IDS: u32;
    /// Whether `cpu` exists (possible).
    fn cpu_possible(cpu: u32) -> bool;
    /// Highest node id plus one.
    fn nr_node_ids() -> u32;
    /// Whether `node` has memory.
    fn node_has_memory(node: i32) -> bool;
    /// Node of the current CPU.
    fn numa_node_id() -> i32;
    /// The NUMA distance from node `from` to node `to` (the firmware's
    /// table: 10 for a node to itself).
    fn node_distance(from: i32, to: i32) -> i32;

    /// Reports a detected problem (one line).
    fn report(args: core::fmt::Arguments<'_>);

    /// The kernel's memory checkers off (`false`: on again) for this task
    /// while a report dumps bytes around a bad object, which they may say
    /// rslub does not own (KASAN's shadow of free objects, on a debug
    /// kernel). Nothing by default.
    fn checkers_off(_off: bool) {}

    /// A random word (the free pointer key, freelist shuffles).
    fn random() -> usize;
    /// Return address into the API's caller (0: unknown); debug caches only.
    fn api_caller() -> usize;
    /// Current task's pid.
    fn current_pid() -> i32;
    /// Current CPU (a hint: the caller may migrate).
    fn current_cpu() -> u32;
    /// The tick counter (jiffies).
    fn jiffies() -> usize;
    /// Writes `addr` as a symbol (`%pS`) into `buf`; returns the length.
    fn format_symbol(addr: usize, buf: &mut [u8]) -> usize;
}
