// SPDX-License-Identifier: GPL-2.0
//! Names from C callers: bounded reads of NUL-terminated strings, and how
//! a name is shown in a log line.

use crate::slub::NAME_MAX;
use core::ffi::c_char;

/// Shows a name from a caller for a log line.
pub fn show_name(name: &[u8]) -> &str {
    core::str::from_utf8(name).unwrap_or("<non-utf8 name>")
}

/// Reads a C string of at most `NAME_MAX` bytes; `None` if NULL, empty or
/// longer.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub unsafe fn read_name(name: *const c_char, max: usize) -> Option<([u8; NAME_MAX], usize)> {
    if name.is_null() {
        return None;
    }
    let max = max.min(NAME_MAX);
    let mut buf = [0u8; NAME_MAX];
    for i in 0..=max {
        // SAFETY: the string is NUL-terminated and we stop at the NUL, so
        // every byte read is inside the string.
        let b = unsafe { name.add(i).read() } as u8;
        if b == 0 {
            return (i > 0).then_some((buf, i));
        }
        if i == max {
            break;
        }
        buf[i] = b;
    }
    None
}

/// Longest attribute or statistic name the introspection calls read.
pub const ATTR_NAME_MAX: usize = 32;

/// Reads a NUL-terminated attribute name of at most `ATTR_NAME_MAX` bytes.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub unsafe fn attr_name(name: *const c_char) -> Option<([u8; NAME_MAX], usize)> {
    // SAFETY: forwarded.
    unsafe { read_name(name, ATTR_NAME_MAX) }
}
