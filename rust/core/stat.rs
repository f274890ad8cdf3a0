// SPDX-License-Identifier: GPL-2.0
//! Allocator event counters: one enum, one `stat()` call at each event.
//!
//! Names and meanings follow the classic SLUB_STATS, plus the empty-slab
//! cache's own. They are kept per CPU (one increment on the fast path) and
//! summed when read. A counter followed by `if cfg(...)` exists only in
//! the builds with that cfg (a build variant's own events).

macro_rules! stats {
    ($($(#[$doc:meta])* $variant:ident = $name:literal $(if cfg($cfg:meta))?,)*) => {
        /// One counted event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Stat {
            $($(#[$doc])* $(#[cfg($cfg)])? $variant,)*
        }

        impl Stat {
            /// Every counter, in index order.
            pub const ALL: &'static [Stat] = &[$($(#[cfg($cfg)])? Stat::$variant,)*];
            /// Number of counters.
            pub const COUNT: usize = Self::ALL.len();

            /// The counter's name (the sysfs file name of SLUB_STATS).
            pub fn name(self) -> &'static str {
                match self {
                    $($(#[cfg($cfg)])? Stat::$variant => $name,)*
                }
            }

            /// The counter's name, NUL-terminated (for C).
            pub fn c_name(self) -> &'static [u8] {
                match self {
                    $($(#[cfg($cfg)])? Stat::$variant => concat!($name, "\0").as_bytes(),)*
                }
            }

            /// The counter called `name`.
            pub fn from_name(name: &[u8]) -> Option<Stat> {
                Self::ALL.iter().copied().find(|s| s.name().as_bytes() == name)
            }
        }
    };
}

stats! {
    /// Allocation served by the per-CPU freelist, lockless.
    AllocFastpath = "alloc_fastpath",
    /// Allocation that took the slow path.
    AllocSlowpath = "alloc_slowpath",
    /// Free to the per-CPU slab, lockless.
    FreeFastpath = "free_fastpath",
    /// Free to a slab that is not this CPU's.
    FreeSlowpath = "free_slowpath",
    /// Free to a frozen slab (another CPU's, or on a CPU partial list).
    FreeFrozen = "free_frozen",
    /// Free that put a full slab on its node's partial list.
    FreeAddPartial = "free_add_partial",
    /// Free that took an empty slab off its node's partial list.
    FreeRemovePartial = "free_remove_partial",
    /// CPU slab refilled from a node partial list.
    AllocFromPartial = "alloc_from_partial",
    /// New slab from the page allocator.
    AllocSlab = "alloc_slab",
    /// CPU freelist refilled from the CPU slab's own freelist (remote frees).
    AllocRefill = "alloc_refill",
    /// CPU slab dropped because its node did not match the request.
    AllocNodeMismatch = "alloc_node_mismatch",
    /// Slab returned to the page allocator.
    FreeSlab = "free_slab",
    /// CPU slab flushed (shrink, destroy, CPU offline).
    CpuslabFlush = "cpuslab_flush",
    /// Deactivated slab was full.
    DeactivateFull = "deactivate_full",
    /// Deactivated slab was empty and discarded.
    DeactivateEmpty = "deactivate_empty",
    /// Deactivated slab went to the head of the partial list.
    DeactivateToHead = "deactivate_to_head",
    /// Deactivated slab went to the tail of the partial list.
    DeactivateToTail = "deactivate_to_tail",
    /// Deactivated slab had received remote frees while frozen.
    DeactivateRemoteFrees = "deactivate_remote_frees",
    /// CPU slab dropped because it had no free objects left.
    DeactivateBypass = "deactivate_bypass",
    /// Slab freelist cmpxchg16b lost a race and retried (locked).
    CmpxchgDoubleFail = "cmpxchg_double_fail",
    /// Per-CPU cmpxchg16b lost a race and retried (unlocked).
    CmpxchgDoubleCpuFail = "cmpxchg_double_cpu_fail",
    /// CPU slab taken from the CPU partial list.
    CpuPartialAlloc = "cpu_partial_alloc",
    /// Free put a slab on the CPU partial list.
    CpuPartialFree = "cpu_partial_free",
    /// Slab moved from a node partial list to the CPU partial list.
    CpuPartialNode = "cpu_partial_node",
    /// CPU partial list overflowed and was returned to the nodes.
    CpuPartialDrain = "cpu_partial_drain",
    /// New slab taken from the node's empty-slab cache.
    EmptyCacheHit = "empty_cache_hit",
    /// Empty slab kept in the node's empty-slab cache.
    EmptyCacheAdd = "empty_cache_add",
    /// Cached empty slab returned to the page allocator (shrink, tunable).
    EmptyCacheRelease = "empty_cache_release",
    /// Free that missed the CPU slab, put in this CPU's batch.
    FreeBatched = "free_batched" if cfg(rslub_free_batch),
    /// CPU batch returned to its slabs (full, or flushed).
    FreeBatchFlush = "free_batch_flush" if cfg(rslub_free_batch),
    /// Allocation served by this CPU's free batch (its freelist was empty).
    AllocFromBatch = "alloc_from_batch" if cfg(rslub_free_batch),
    /// Cached empty slab given back because the system was short of
    /// memory (the shrinker), below `max_empty` too.
    EmptyCacheReclaim = "empty_cache_reclaim",
}
