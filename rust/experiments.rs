// SPDX-License-Identifier: GPL-2.0
//! The bench's create-time overrides of the hardening parameters
//! (`rslub_new_cache_default`, the "hardening" suite): the lab, not the
//! product. The other experiments are build variants (Kbuild `VARIANT=`).

use crate::names::{attr_name, show_name, ATTR_NAME_MAX};
use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicI32, Ordering};
use kernel::prelude::*;

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
