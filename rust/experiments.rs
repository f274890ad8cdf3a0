// SPDX-License-Identifier: GPL-2.0
//! The bench's experiments that reach into every cache: the locked
//! cmpxchg16b on the fast path, and create-time overrides of the hardening
//! parameters. They are the lab, not the product; each is one exported
//! call of include/rslub.h that `make bench` suites use.

use crate::kplat::Cache;
use crate::names::{attr_name, show_name, ATTR_NAME_MAX};
use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use kernel::prelude::*;

/// The setting of [`rslub_fastpath_locked_cmpxchg`], changed under the
/// registry's lock.
static LOCKED_FASTPATH: AtomicBool = AtomicBool::new(false);

/// Applies the experiments' settings to a new cache (under the registry's
/// lock, before it is published).
pub fn apply(cache: &Cache) {
    cache.set_locked_fastpath(LOCKED_FASTPATH.load(Ordering::Relaxed));
}

/// Puts a lock prefix on the fast path's per-CPU cmpxchg16b, or takes it
/// off (the bench's experiment), in every cache and in caches created
/// later; see include/rslub.h.
#[no_mangle]
pub extern "C" fn rslub_fastpath_locked_cmpxchg(locked: bool) {
    crate::registry::each(
        || LOCKED_FASTPATH.store(locked, Ordering::Relaxed),
        |c| c.set_locked_fastpath(locked),
    );
}

/// Overrides of the module parameters `harden` and `random_freelist` for
/// caches created from now on; -1: the parameter's value.
static HARDEN_OVERRIDE: AtomicI32 = AtomicI32::new(-1);
static RANDOM_OVERRIDE: AtomicI32 = AtomicI32::new(-1);

/// The overrides set by [`rslub_new_cache_default`]: (harden, random_freelist).
pub fn new_cache_overrides() -> (Option<bool>, Option<bool>) {
    let get = |a: &AtomicI32| match a.load(Ordering::Relaxed) {
        v if v < 0 => None,
        v => Some(v != 0),
    };
    (get(&HARDEN_OVERRIDE), get(&RANDOM_OVERRIDE))
}

/// Sets a create-time default of new caches; see include/rslub.h.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rslub_new_cache_default(name: *const c_char, value: c_int) -> c_int {
    // SAFETY: forwarded.
    let Some((buf, len)) = (unsafe { attr_name(name) }) else {
        pr_err!(
            "rslub_new_cache_default: name is NULL, empty or longer than {} bytes; returning -EINVAL\n",
            ATTR_NAME_MAX
        );
        return EINVAL.to_errno();
    };
    let name = &buf[..len];
    let target = match name {
        b"harden" => &HARDEN_OVERRIDE,
        b"random_freelist" => &RANDOM_OVERRIDE,
        _ => {
            pr_err!(
                "rslub_new_cache_default: no default named {:?} (harden, random_freelist); returning -EINVAL\n",
                show_name(name)
            );
            return EINVAL.to_errno();
        }
    };
    if !(-1..=1).contains(&value) {
        pr_err!(
            "rslub_new_cache_default: {} = {} is out of range -1..1; unchanged, returning -EINVAL\n",
            show_name(name),
            value
        );
        return EINVAL.to_errno();
    }
    target.store(value, Ordering::Relaxed);
    0
}
