// SPDX-License-Identifier: GPL-2.0
//! One slab, as three objects, each in its own file:
//! - `header.rs`: [`SlabHeader`], the per-slab metadata with the
//!   `[freelist, counters]` pair a free updates with cmpxchg16b;
//! - `freeptr.rs`: the free pointer codec, how a free object names the
//!   next one (obfuscated in hardened caches);
//! - `list.rs`: `SlabList`, the intrusive list of slabs a node keeps.
//!
//! Platform-free: compiled into the module and the host crate.

mod freeptr;
mod header;
mod list;

pub use freeptr::{
    free_pointer_ok, get_free_pointer, get_free_pointer_as, get_free_pointer_with, is_object_of,
    set_free_pointer, set_free_pointer_as,
};
pub use header::{inuse, FreeError, SlabHeader, FROZEN, HEADER_SIZE};
pub(crate) use list::{BrokenList, SlabList};
