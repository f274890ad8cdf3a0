// SPDX-License-Identifier: GPL-2.0
//! Debug features of a cache, object by object: red zones, poisoning and
//! owner records (where they sit: [`crate::layout`]), their checks, and the
//! pieces of a corruption report (hex dump, owner line).
//!
//! Byte values are in-tree SLUB's (include/linux/poison.h), so a dump reads
//! the same as one of `slub_debug`.
//!
//! Platform-free: the cache (`slub/`) decides when to check and what to
//! isolate; this file only reads and writes an object's bytes.

use crate::layout::{Layout, TRACK_SIZE};
use core::fmt;
use core::ptr;

/// Consistency checks (`SLAB_CONSISTENCY_CHECKS`, letter F).
pub const CONSISTENCY: u32 = 1;
/// Red zones (`SLAB_RED_ZONE`, letter Z).
pub const RED_ZONE: u32 = 2;
/// Poisoning of free objects (`SLAB_POISON`, letter P).
pub const POISON: u32 = 4;
/// Owner records (`SLAB_STORE_USER`, letter U).
pub const STORE_USER: u32 = 8;
/// Every feature.
pub const ALL: u32 = CONSISTENCY | RED_ZONE | POISON | STORE_USER;

/// Red zone of a free object.
pub const RED_INACTIVE: u8 = 0xbb;
/// Red zone of an allocated object.
pub const RED_ACTIVE: u8 = 0xcc;
/// Bytes of a free poisoned object.
pub const POISON_FREE: u8 = 0x6b;
/// Last byte of a free poisoned object.
pub const POISON_END: u8 = 0xa5;

/// Parses slub_debug-style letters: F, Z, P, U (either case; other
/// separators ignored); "-" means none. Returns the flags, or the first
/// letter that is not understood.
pub fn parse_letters(s: &[u8]) -> Result<u32, u8> {
    let mut flags = 0;
    for &b in s {
        flags |= match b.to_ascii_uppercase() {
            b'F' => CONSISTENCY,
            b'Z' => RED_ZONE,
            b'P' => POISON,
            b'U' => STORE_USER,
            b'-' => return Ok(0),
            b',' | b' ' | b'\n' => 0,
            _ => return Err(b),
        };
    }
    Ok(flags)
}

/// One owner record: who allocated or freed an object, where and when.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Track {
    /// Return address into the caller of the API (0: unknown).
    pub addr: usize,
    /// jiffies at the time.
    pub when: usize,
    /// CPU (low 32 bits) and pid (high 32 bits).
    pub cpu_pid: usize,
}

const _: () = assert!(core::mem::size_of::<Track>() == TRACK_SIZE);

impl Track {
    /// CPU recorded.
    pub fn cpu(&self) -> u32 {
        self.cpu_pid as u32
    }
    /// pid recorded.
    pub fn pid(&self) -> i32 {
        (self.cpu_pid >> 32) as u32 as i32
    }
}

/// What a check found wrong in an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Which area.
    pub what: &'static str,
    /// Offset of the first bad byte from the object's start (negative:
    /// in the left red zone).
    pub offset: isize,
    /// Bytes the area should hold there.
    pub expected: u8,
    /// Byte found there.
    pub found: u8,
    /// Bad bytes counted from the first to the last one in the area.
    pub len: usize,
}

/// Checks that bytes `[from, to)` relative to `obj` all equal `v`.
///
/// # Safety
/// The range lies inside the object's slab.
unsafe fn check_range(
    obj: *const u8,
    from: isize,
    to: isize,
    v: u8,
    what: &'static str,
) -> Option<Damage> {
    let mut first = None;
    let mut last = from;
    let mut off = from;
    while off < to {
        // SAFETY: per the caller.
        let b = unsafe { ptr::read_volatile(obj.offset(off)) };
        if b != v {
            first.get_or_insert((off, b));
            last = off;
        }
        off += 1;
    }
    first.map(|(offset, found)| Damage {
        what,
        offset,
        expected: v,
        found,
        len: (last - offset) as usize + 1,
    })
}

/// Fills bytes `[from, to)` relative to `obj` with `v`.
///
/// # Safety
/// The range lies inside the object's slot, which the caller owns.
unsafe fn fill(obj: *mut u8, from: isize, to: isize, v: u8) {
    if to > from {
        // SAFETY: per the caller.
        unsafe { ptr::write_bytes(obj.offset(from), v, (to - from) as usize) };
    }
}

/// Writes the red zones with `v` (`RED_ACTIVE` or `RED_INACTIVE`).
///
/// # Safety
/// `obj` is an object of a slab laid out with `layout`, owned by the caller.
pub unsafe fn set_red_zones(obj: *mut u8, layout: &Layout, v: u8) {
    if layout.red_zone() {
        // SAFETY: both zones are inside the object's slot.
        unsafe {
            fill(obj, -(layout.red_left as isize), 0, v);
            fill(obj, layout.object_size as isize, layout.inuse as isize, v);
        }
    }
}

/// Checks both red zones against `v`.
///
/// # Safety
/// `obj` is an object start of a live slab laid out with `layout`.
pub unsafe fn check_red_zones(obj: *const u8, layout: &Layout, v: u8) -> Option<Damage> {
    if !layout.red_zone() {
        return None;
    }
    // SAFETY: both zones are inside the object's slot.
    unsafe {
        check_range(obj, -(layout.red_left as isize), 0, v, "left red zone").or_else(|| {
            check_range(
                obj,
                layout.object_size as isize,
                layout.inuse as isize,
                v,
                "right red zone",
            )
        })
    }
}

/// Whether both red zones read entirely as `v`.
///
/// # Safety
/// As for [`check_red_zones`].
pub unsafe fn red_zones_are(obj: *const u8, layout: &Layout, v: u8) -> bool {
    // SAFETY: forwarded.
    layout.red_zone() && unsafe { check_red_zones(obj, layout, v) }.is_none()
}

/// Poisons a free object: `POISON_FREE`, the last byte `POISON_END`.
///
/// # Safety
/// `obj` is an object the caller owns, with the free pointer outside it.
pub unsafe fn poison(obj: *mut u8, layout: &Layout) {
    let n = layout.object_size as isize;
    // SAFETY: inside the object.
    unsafe {
        fill(obj, 0, n - 1, POISON_FREE);
        fill(obj, n - 1, n, POISON_END);
    }
}

/// Checks the poison of a free object.
///
/// # Safety
/// `obj` is an object start of a live slab laid out with `layout`.
pub unsafe fn check_poison(obj: *const u8, layout: &Layout) -> Option<Damage> {
    let n = layout.object_size as isize;
    // SAFETY: inside the object.
    unsafe {
        check_range(obj, 0, n - 1, POISON_FREE, "poison")
            .or_else(|| check_range(obj, n - 1, n, POISON_END, "poison end"))
    }
}

/// The alloc (`free == false`) or free owner record of `obj`.
///
/// # Safety
/// `layout.store_user()`; `obj` is an object start.
unsafe fn track_ptr(obj: *const u8, layout: &Layout, free: bool) -> *mut Track {
    let off = layout.track_offset + if free { TRACK_SIZE } else { 0 };
    // SAFETY: the records are inside the object's slot.
    unsafe { obj.add(off).cast_mut().cast() }
}

/// Writes an owner record.
///
/// # Safety
/// `obj` is an object the caller owns (allocating or freeing it).
pub unsafe fn set_track(obj: *mut u8, layout: &Layout, free: bool, t: Track) {
    if layout.store_user() {
        // SAFETY: per the caller; records are word aligned.
        unsafe { ptr::write_volatile(track_ptr(obj, layout, free), t) };
    }
}

/// Reads an owner record (racy; for reports).
///
/// # Safety
/// `obj` is an object start of a live slab laid out with `layout`.
pub unsafe fn get_track(obj: *const u8, layout: &Layout, free: bool) -> Option<Track> {
    if !layout.store_user() {
        return None;
    }
    // SAFETY: per the caller.
    let t = unsafe { ptr::read_volatile(track_ptr(obj, layout, free)) };
    (t.when != 0 || t.addr != 0).then_some(t)
}

/// Brings a new object into the free state: red zones inactive, poison,
/// no owner records.
///
/// # Safety
/// `obj` is an object of a new slab that the caller owns.
pub unsafe fn init_free_object(obj: *mut u8, layout: &Layout, poisoned: bool) {
    // SAFETY: per the caller.
    unsafe {
        set_red_zones(obj, layout, RED_INACTIVE);
        if poisoned {
            poison(obj, layout);
        }
        set_track(obj, layout, false, Track::default());
        set_track(obj, layout, true, Track::default());
    }
}

/// Bytes shown as hex, 16 to a line when used with `{}` (no newline).
pub struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i != 0 {
                f.write_str(" ")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The bytes of the object's slot (left red zone to the end of its
/// metadata) from `at` (object-relative, rounded down to 16) for up to 32
/// bytes, as `(start offset, bytes copied, copy)`.
///
/// # Safety
/// `obj` is an object start of a slab laid out with `layout`.
pub unsafe fn dump_window(obj: *const u8, layout: &Layout, at: isize) -> (isize, usize, [u8; 32]) {
    let lo = -(layout.red_left as isize);
    let hi = (layout.stride - layout.red_left) as isize;
    let start = (at & !15).max(lo);
    let end = (start + 32).min(hi);
    let mut buf = [0u8; 32];
    let n = (end - start).max(0) as usize;
    for (i, slot) in buf.iter_mut().enumerate().take(n) {
        // SAFETY: inside the slot, per the caller.
        *slot = unsafe { ptr::read_volatile(obj.offset(start + i as isize)) };
    }
    (start, n, buf)
}
