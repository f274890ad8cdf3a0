// SPDX-License-Identifier: GPL-2.0
//! The attributes of a cache, in one table: each name with its sysfs file
//! mode, how its value is read and, for a tunable or an action, what a
//! write does and which values it accepts. sysfs show and store
//! (`sysfs.rs`), `rslub_cache_get` and `rslub_cache_set` (`api.rs`) and the
//! module-parameter checks (`rslub.rs`) all read it; the statistics are
//! [`Stat`](crate::stat::Stat)'s own table.

use crate::debug;
use crate::kplat::Cache;
use crate::slub::{Totals, Usage};
use core::ffi::{c_int, c_ushort};
use kernel::prelude::*;

/// Read-only file.
pub const RO: c_ushort = 0o444;
/// Read-write file.
pub const RW: c_ushort = 0o644;
/// Write-only file (an action).
pub const WO: c_ushort = 0o200;
/// No sysfs file (reached through `rslub_cache_set` only).
pub const NO_FILE: c_ushort = 0;

/// How a value from [`Cache::usage_into`] is shown in sysfs.
#[derive(Clone, Copy)]
pub enum Format {
    /// The number.
    Plain,
    /// The total, then ` N<node>=<count>` for each node with a count, when
    /// there is more than one node (in-tree format).
    PerNode(fn(&Usage) -> &[usize]),
    /// Slabs given as `objects(slabs)`, objects estimated as slabs times
    /// objects per slab (in-tree `slabs_cpu_partial`).
    ObjectsOfSlabs,
}

/// How an attribute is read.
#[derive(Clone, Copy)]
pub enum Get {
    /// A number kept by the cache.
    Cache(fn(&Cache) -> usize),
    /// A total counted by [`Cache::totals`] (walks the cache; the per-node
    /// counts of `Format::PerNode` come from [`Cache::usage_into`]).
    Usage(fn(&Totals) -> usize, Format),
    /// The constructor's symbol; sysfs only (not a number).
    Ctor,
    /// Not readable.
    None,
}

/// What a write does.
#[derive(Clone, Copy)]
pub enum Set {
    /// A tunable taking `0..=max`: sysfs store and `rslub_cache_set`.
    /// The setter returns 0 or a negative errno (logged).
    Tunable {
        /// Largest accepted value.
        max: u32,
        /// Applies a value in range.
        set: fn(&Cache, u32) -> c_int,
    },
    /// An action run by writing 1 to the sysfs file.
    Action(fn(&Cache)),
}

/// One attribute of a cache.
pub struct Attr {
    /// The name, NUL-terminated (the sysfs file name, `/sys/kernel/slab`'s
    /// where the concept matches).
    pub c_name: &'static [u8],
    /// sysfs file mode, or `NO_FILE`.
    pub mode: c_ushort,
    /// How it is read.
    pub get: Get,
    /// What a write does, if it can be written.
    pub set: Option<Set>,
}

impl Attr {
    /// The name without its NUL.
    pub fn name(&self) -> &'static [u8] {
        self.c_name.strip_suffix(b"\0").unwrap_or(self.c_name)
    }

    /// The values a write accepts: (min, max); None when not writable.
    pub fn accepted(&self) -> Option<(u32, u32)> {
        match self.set? {
            Set::Tunable { max, .. } => Some((0, max)),
            Set::Action(_) => Some((1, 1)),
        }
    }
}

const fn ro(c_name: &'static [u8], get: Get) -> Attr {
    Attr {
        c_name,
        mode: RO,
        get,
        set: None,
    }
}

/// A read-only number kept by the cache.
const fn num(c_name: &'static [u8], get: fn(&Cache) -> usize) -> Attr {
    ro(c_name, Get::Cache(get))
}

/// A read-only total counted by `Cache::totals`.
const fn counted(c_name: &'static [u8], get: fn(&Totals) -> usize, format: Format) -> Attr {
    ro(c_name, Get::Usage(get, format))
}

const fn tunable(
    c_name: &'static [u8],
    mode: c_ushort,
    get: Get,
    max: u32,
    set: fn(&Cache, u32) -> c_int,
) -> Attr {
    Attr {
        c_name,
        mode,
        get,
        set: Some(Set::Tunable { max, set }),
    }
}

const fn action(c_name: &'static [u8], run: fn(&Cache)) -> Attr {
    Attr {
        c_name,
        mode: WO,
        get: Get::None,
        set: Some(Set::Action(run)),
    }
}

fn debug_flag(c: &Cache, bit: u32) -> usize {
    usize::from(c.debug_flags() & bit != 0)
}

fn set_random_freelist(c: &Cache, v: u32) -> c_int {
    // The shuffled sequence lives as long as the cache: from SLUB, never
    // from a served cache (a served kmalloc cache would pin itself).
    if crate::serve::unserved(|| c.set_random_freelist(v == 1)) {
        return 0;
    }
    pr_err!(
        "cache {}: random_freelist: no memory for the shuffled index sequence; unchanged\n",
        c.name_str()
    );
    ENOMEM.to_errno()
}

/// Every attribute, in sysfs index order (files first, then the
/// `NO_FILE` ones). The `free_batch` build variant has two more.
pub static ATTRS: &[Attr] = &[
    num(b"object_size\0", |c| c.layout.object_size),
    num(b"slab_size\0", |c| c.layout.stride),
    num(b"objs_per_slab\0", |c| c.layout.objects),
    num(b"order\0", |c| c.layout.order as usize),
    num(b"align\0", |c| c.layout.align),
    counted(
        b"objects\0",
        |u| u.live_objects,
        Format::PerNode(|u| &u.node_objects),
    ),
    counted(b"objects_partial\0", |u| u.objects_partial, Format::Plain),
    counted(b"slabs\0", |u| u.slabs, Format::PerNode(|u| &u.node_slabs)),
    counted(
        b"partial\0",
        |u| u.partial,
        Format::PerNode(|u| &u.node_partial),
    ),
    counted(
        b"cpu_slabs\0",
        |u| u.cpu_slabs,
        Format::PerNode(|u| &u.node_cpu_slabs),
    ),
    counted(
        b"slabs_cpu_partial\0",
        |u| u.cpu_partial_slabs,
        Format::ObjectsOfSlabs,
    ),
    ro(b"ctor\0", Get::Ctor),
    num(b"hwcache_align\0", |c| {
        usize::from(c.flags & crate::consts().flag_hwcache_align != 0)
    }),
    tunable(
        b"cpu_partial\0",
        RW,
        Get::Cache(|c| c.cpu_partial() as usize),
        100_000,
        |c, v| {
            c.set_cpu_partial(v);
            0
        },
    ),
    tunable(
        b"min_partial\0",
        RW,
        Get::Cache(|c| c.min_partial() as usize),
        1000,
        |c, v| {
            c.set_min_partial(v);
            0
        },
    ),
    tunable(
        b"max_empty\0",
        RW,
        Get::Cache(|c| c.max_empty() as usize),
        1000,
        |c, v| {
            c.set_max_empty(v);
            0
        },
    ),
    #[cfg(rslub_free_batch)]
    tunable(
        b"free_batch\0",
        RW,
        Get::Cache(|c| c.free_batch() as usize),
        crate::slub::FREE_BATCH_MAX as u32,
        |c, v| {
            c.set_free_batch(v);
            0
        },
    ),
    #[cfg(rslub_free_batch)]
    counted(
        b"free_batch_objects\0",
        |u| u.batched_objects,
        Format::Plain,
    ),
    counted(b"empty_slabs\0", |u| u.empty_slabs, Format::Plain),
    num(b"errors\0", |c| c.errors()),
    action(b"shrink\0", |c| c.shrink()),
    action(b"validate\0", |c| {
        c.validate();
    }),
    num(b"sanity_checks\0", |c| debug_flag(c, debug::CONSISTENCY)),
    num(b"red_zone\0", |c| debug_flag(c, debug::RED_ZONE)),
    num(b"poison\0", |c| debug_flag(c, debug::POISON)),
    num(b"store_user\0", |c| debug_flag(c, debug::STORE_USER)),
    num(b"freelist_harden\0", |c| usize::from(c.hardened())),
    tunable(
        b"random_freelist\0",
        RW,
        Get::Cache(|c| usize::from(c.random_freelist())),
        1,
        set_random_freelist,
    ),
    num(b"isolated_slabs\0", |c| c.isolated_slabs()),
    num(b"typesafe_by_rcu\0", |c| usize::from(c.typesafe_rcu())),
    num(b"rcu_pending_slabs\0", |c| c.rcu_pending()),
    num(b"fallback_slabs\0", |c| c.fallback_slabs()),
    num(b"fallback_objects\0", |c| c.fallback_objects()),
];

/// The attribute named `name`.
pub fn find(name: &[u8]) -> Option<&'static Attr> {
    ATTRS.iter().find(|a| a.name() == name)
}

/// The attributes that have a sysfs file, in index order.
pub fn files() -> impl Iterator<Item = &'static Attr> {
    ATTRS.iter().filter(|a| a.mode != NO_FILE)
}

/// Largest value of tunable `name`; None for a name that is no tunable.
pub fn tunable_max(name: &[u8]) -> Option<u32> {
    match find(name)?.set? {
        Set::Tunable { max, .. } => Some(max),
        Set::Action(_) => None,
    }
}

/// `c`'s [`Usage`] in a heap box: about 2.5 KB, too much for a kernel
/// stack.
pub fn usage_of(c: &Cache) -> Result<KBox<Usage>> {
    let mut b = KBox::<Usage>::new_uninit(GFP_KERNEL)?;
    // SAFETY: every field of `Usage` is an integer or an array of them, so
    // all zero bytes are a valid value; `usage_into` overwrites them.
    let mut u = unsafe {
        core::ptr::write_bytes(b.as_mut_ptr(), 0, 1);
        b.assume_init()
    };
    c.usage_into(&mut u);
    Ok(u)
}

/// The value of a readable numeric attribute (None for the ctor and for
/// write-only ones).
pub fn value(a: &Attr, c: &Cache) -> Option<usize> {
    match a.get {
        Get::Cache(f) => Some(f(c)),
        // The totals alone: a few words, no allocation that could fail.
        Get::Usage(f, _) => Some(f(&c.totals())),
        Get::Ctor | Get::None => None,
    }
}
