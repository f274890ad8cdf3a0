// SPDX-License-Identifier: GPL-2.0
//! The tunables of a cache (`cpu_partial`, `min_partial`, `max_empty`,
//! `random_freelist`) and its read-only facts.

use super::{Cache, NO_NODE};
use crate::platform::Platform;
use core::mem::size_of;
use core::ptr;
use core::sync::atomic::Ordering;

impl<P: Platform> Cache<P> {
    /// Sets `cpu_partial` (objects); the slab bound is derived like upstream.
    pub fn set_cpu_partial(&self, objects: u32) {
        let per_slab = u32::try_from(self.layout.objects)
            .unwrap_or(u32::MAX)
            .max(1);
        let slabs = objects.saturating_mul(2).div_ceil(per_slab);
        self.cpu_partial.store(objects, Ordering::Relaxed);
        self.cpu_partial_slabs.store(slabs, Ordering::Relaxed);
    }

    /// `cpu_partial` in objects.
    pub fn cpu_partial(&self) -> u32 {
        self.cpu_partial.load(Ordering::Relaxed)
    }

    /// Sets `min_partial`.
    pub fn set_min_partial(&self, v: u32) {
        self.min_partial.store(v, Ordering::Relaxed);
    }

    /// `min_partial`.
    pub fn min_partial(&self) -> u32 {
        self.min_partial.load(Ordering::Relaxed)
    }

    /// Whether a node with `others` partial slabs (not counting an empty
    /// slab being decided on) may free that empty slab: it keeps at least
    /// `min_partial` partial slabs. (Upstream counts the empty slab itself
    /// when it is listed, keeping one fewer.)
    pub(super) fn enough_partial(&self, others: usize) -> bool {
        others >= self.min_partial.load(Ordering::Relaxed) as usize
    }

    /// Sets `max_empty`; caches above the new bound are trimmed.
    pub fn set_max_empty(&self, v: u32) {
        self.max_empty.store(v, Ordering::Relaxed);
        for n in 0..self.nr_nodes {
            self.trim_empty(n as i32, v as usize);
        }
    }

    /// `max_empty`.
    pub fn max_empty(&self) -> u32 {
        self.max_empty.load(Ordering::Relaxed)
    }

    /// Problems detected so far.
    pub fn errors(&self) -> usize {
        self.errors.load(Ordering::Relaxed) + self.fallback().map_or(0, |fb| fb.errors())
    }

    /// Debug features (`debug::*` bits).
    pub fn debug_flags(&self) -> u32 {
        self.debug
    }

    /// Slabs isolated after corruption.
    pub fn isolated_slabs(&self) -> usize {
        self.isolated.load(Ordering::Relaxed) + self.fallback().map_or(0, |fb| fb.isolated_slabs())
    }

    /// Whether free pointers are stored obfuscated.
    pub fn hardened(&self) -> bool {
        self.layout.hardened()
    }

    /// Whether new slabs get a random freelist order.
    pub fn random_freelist(&self) -> bool {
        self.random_freelist.load(Ordering::Relaxed)
    }

    /// Turns random freelist order of new slabs on or off. The shuffled
    /// index sequence is made the first time (sleeping allocation); when it
    /// cannot be allocated the order stays sequential and false is returned.
    pub fn set_random_freelist(&self, on: bool) -> bool {
        if on && self.random_seq.load(Ordering::Acquire).is_null() {
            let n = self.layout.objects;
            let seq = P::alloc_meta(n * size_of::<u32>(), NO_NODE).cast::<u32>();
            if seq.is_null() {
                return false;
            }
            // SAFETY: fresh memory for `n` u32s, ours until published.
            let s = unsafe { core::slice::from_raw_parts_mut(seq, n) };
            for (i, v) in s.iter_mut().enumerate() {
                *v = i as u32;
            }
            // Fisher-Yates.
            for i in (1..n).rev() {
                let j = P::random().checked_rem(i + 1).unwrap_or(0);
                s.swap(i, j);
            }
            if self
                .random_seq
                .compare_exchange(ptr::null_mut(), seq, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // SAFETY: never published.
                unsafe { P::free_meta(seq.cast()) };
            }
        }
        self.random_freelist.store(on, Ordering::Relaxed);
        true
    }
}

/// Full sheaves a node's barn holds in the in-tree allocator
/// (`MAX_FULL_SHEAVES`, mm/slub.c of 7.x).
const BARN_FULL_SHEAVES: u32 = 10;

/// The default `max_empty` of a cache whose slabs hold `objects_per_slab`
/// objects and whose size-based `cpu_partial` default is `cpu_partial`
/// objects: enough empty slabs per node for the free objects the in-tree
/// allocator keeps per node in its barn's full sheaves (10 sheaves of
/// `2 * cpu_partial` objects, its `calculate_sheaf_capacity`), and at least
/// 2; at most 1000 (the tunable's bound). A producer/consumer pair of CPUs
/// (one allocates, the other frees) empties whole slabs that the producer
/// needs again soon: cached, they come back without the page allocator and
/// without rebuilding their freelist.
pub fn auto_max_empty(cpu_partial: u32, objects_per_slab: usize) -> u32 {
    let per_slab = u32::try_from(objects_per_slab).unwrap_or(u32::MAX).max(1);
    BARN_FULL_SHEAVES
        .saturating_mul(2)
        .saturating_mul(cpu_partial)
        .div_ceil(per_slab)
        .clamp(2, 1000)
}

/// Objects a slab should hold at least, when waste allows: upstream's
/// `4 * (fls(nr_cpus) + 1)` for 4 CPUs, and a bulk batch of 16 fits one
/// slab (256-byte objects get order 1: 31 per slab instead of 15).
pub const MIN_OBJECTS: usize = 16;

/// What the module's parameters ask of the caches created from now on. A
/// negative tunable is chosen by object size (`Defaults::params`).
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    /// `cpu_partial` in objects, or negative.
    pub cpu_partial: i32,
    /// `min_partial`, or negative.
    pub min_partial: i32,
    /// `max_empty`, or negative.
    pub max_empty: i32,
    /// `free_batch` (the `free_batch` build variant).
    #[cfg(rslub_free_batch)]
    pub free_batch: u32,
    /// Obfuscated, checked free pointers.
    pub harden: bool,
    /// Random freelist order of new slabs.
    pub random_freelist: bool,
}

/// Upstream's defaults by object size: (`cpu_partial` objects,
/// `min_partial`).
pub fn size_defaults(object_size: usize, page_size: usize) -> (u32, u32) {
    let cpu_partial = if object_size >= page_size {
        2
    } else if object_size >= 1024 {
        6
    } else if object_size >= 256 {
        13
    } else {
        30
    };
    let min_partial = ((usize::BITS - object_size.leading_zeros()) / 2).clamp(5, 10);
    (cpu_partial, min_partial)
}

impl Defaults {
    /// The one place a new cache's tunables are decided: the parameters'
    /// values, and for those left negative the size-based defaults
    /// (`size_defaults`, `auto_max_empty`) for `object_size`-byte objects,
    /// `objects_per_slab` a slab.
    pub fn params(
        &self,
        object_size: usize,
        objects_per_slab: usize,
        page_size: usize,
        debug: u32,
        gfp: (u32, u32, u32),
    ) -> super::Params {
        let (cpu_partial, min_partial) = size_defaults(object_size, page_size);
        super::Params {
            cpu_partial: u32::try_from(self.cpu_partial).unwrap_or(cpu_partial),
            min_partial: u32::try_from(self.min_partial).unwrap_or(min_partial),
            max_empty: u32::try_from(self.max_empty)
                .unwrap_or_else(|_| auto_max_empty(cpu_partial, objects_per_slab)),
            #[cfg(rslub_free_batch)]
            free_batch: self.free_batch,
            gfp_zero: gfp.0,
            gfp_thisnode: gfp.1,
            gfp_nomemalloc: gfp.2,
            debug,
            harden: self.harden,
            random_freelist: self.random_freelist,
            typesafe_rcu: false,
        }
    }
}
