// SPDX-License-Identifier: GPL-2.0
//! `/sys/kernel/rslub/<cache>/`: one directory per live cache, with the
//! in-tree `/sys/kernel/slab/<cache>/` attribute names and formats where the
//! concept matches, plus rslub's own (`max_empty`, `empty_slabs`, `errors`).
//!
//! The C shim only creates the kobjects and routes show/store here by
//! attribute index; every format and every check is in this file.

use crate::api::Cache;
use crate::shim;
use crate::stat::Stat;
use core::ffi::{c_char, c_long, c_uint, c_ulong, c_ushort, c_void};
use core::fmt::Write;
use kernel::prelude::*;

const RO: c_ushort = 0o444;
const RW: c_ushort = 0o644;
const WO: c_ushort = 0o200;

/// Attributes other than the statistics, in index order.
#[derive(Clone, Copy)]
enum Attr {
    ObjectSize,
    SlabSize,
    ObjsPerSlab,
    Order,
    Align,
    Objects,
    ObjectsPartial,
    Slabs,
    Partial,
    CpuSlabs,
    SlabsCpuPartial,
    Ctor,
    HwcacheAlign,
    CpuPartial,
    MinPartial,
    MaxEmpty,
    EmptySlabs,
    Errors,
    Shrink,
    Validate,
    SanityChecks,
    RedZone,
    Poison,
    StoreUser,
    FreelistHarden,
    RandomFreelist,
    IsolatedSlabs,
}

const FIXED: &[(Attr, &[u8], c_ushort)] = &[
    (Attr::ObjectSize, b"object_size\0", RO),
    (Attr::SlabSize, b"slab_size\0", RO),
    (Attr::ObjsPerSlab, b"objs_per_slab\0", RO),
    (Attr::Order, b"order\0", RO),
    (Attr::Align, b"align\0", RO),
    (Attr::Objects, b"objects\0", RO),
    (Attr::ObjectsPartial, b"objects_partial\0", RO),
    (Attr::Slabs, b"slabs\0", RO),
    (Attr::Partial, b"partial\0", RO),
    (Attr::CpuSlabs, b"cpu_slabs\0", RO),
    (Attr::SlabsCpuPartial, b"slabs_cpu_partial\0", RO),
    (Attr::Ctor, b"ctor\0", RO),
    (Attr::HwcacheAlign, b"hwcache_align\0", RO),
    (Attr::CpuPartial, b"cpu_partial\0", RW),
    (Attr::MinPartial, b"min_partial\0", RW),
    (Attr::MaxEmpty, b"max_empty\0", RW),
    (Attr::EmptySlabs, b"empty_slabs\0", RO),
    (Attr::Errors, b"errors\0", RO),
    (Attr::Shrink, b"shrink\0", WO),
    (Attr::Validate, b"validate\0", WO),
    (Attr::SanityChecks, b"sanity_checks\0", RO),
    (Attr::RedZone, b"red_zone\0", RO),
    (Attr::Poison, b"poison\0", RO),
    (Attr::StoreUser, b"store_user\0", RO),
    (Attr::FreelistHarden, b"freelist_harden\0", RO),
    (Attr::RandomFreelist, b"random_freelist\0", RW),
    (Attr::IsolatedSlabs, b"isolated_slabs\0", RO),
];

/// Total attributes: the fixed ones, then one per statistic.
const COUNT: usize = FIXED.len() + Stat::COUNT;

/// Read-only files in `/sys/kernel/rslub/` itself: the module parameters'
/// values, i.e. the defaults of new caches (-1: chosen by object size).
/// No cache may take these names.
pub const ROOT_FILES: [&[u8]; 3] = [
    b"default_cpu_partial\0",
    b"default_min_partial\0",
    b"default_max_empty\0",
];

/// Whether `name` is taken by a file of the sysfs root.
pub fn reserved(name: &[u8]) -> bool {
    ROOT_FILES.iter().any(|f| &f[..f.len() - 1] == name)
}

/// The sysfs root, `/sys/kernel/rslub`.
pub struct Root(*mut c_void);

// SAFETY: the kobject handle is used only from process context, under the
// registry lock or at module init/exit.
unsafe impl Send for Root {}
// SAFETY: as above.
unsafe impl Sync for Root {}

impl Root {
    /// Creates `/sys/kernel/rslub` with its defaults files.
    pub fn new() -> Result<Root> {
        let names: [*const c_char; ROOT_FILES.len()] = [
            ROOT_FILES[0].as_ptr().cast(),
            ROOT_FILES[1].as_ptr().cast(),
            ROOT_FILES[2].as_ptr().cast(),
        ];
        // SAFETY: the names are 'static NUL-terminated strings.
        let p =
            unsafe { shim::rslub_shim_sysfs_root_create(names.as_ptr(), names.len() as c_uint) };
        if p.is_null() {
            return Err(ENOMEM);
        }
        Ok(Root(p))
    }

    /// Adds the directory of `cache`.
    pub fn add(&self, cache: &Cache, name: &[u8]) -> Option<Dir> {
        let mut cname = [0u8; 65];
        cname[..name.len()].copy_from_slice(name);
        let mut names: [*const c_char; COUNT] = [core::ptr::null(); COUNT];
        let mut modes: [c_ushort; COUNT] = [0; COUNT];
        for (i, &(_, n, m)) in FIXED.iter().enumerate() {
            names[i] = n.as_ptr().cast();
            modes[i] = m;
        }
        for (i, st) in Stat::ALL.iter().enumerate() {
            names[FIXED.len() + i] = st.c_name().as_ptr().cast();
            modes[FIXED.len() + i] = RW;
        }
        // SAFETY: the names are 'static NUL-terminated strings; the shim
        // copies `cname` (kobject names are duplicated) and keeps `cache`,
        // which outlives the directory (removed first on destroy).
        let dir = unsafe {
            shim::rslub_shim_sysfs_cache_add(
                self.0,
                cname.as_ptr().cast(),
                core::ptr::from_ref(cache).cast_mut().cast(),
                names.as_ptr(),
                modes.as_ptr(),
                COUNT as c_uint,
            )
        };
        (!dir.is_null()).then_some(Dir(dir))
    }
}

/// A cache's sysfs directory.
pub struct Dir(*mut c_void);

impl Dir {
    /// Removes the directory; no show/store runs after this returns.
    pub fn remove(self) {
        // SAFETY: `self.0` came from a successful `add` and is removed once.
        unsafe { shim::rslub_shim_sysfs_cache_remove(self.0) };
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        // SAFETY: created in `new`; every cache directory is gone.
        unsafe { shim::rslub_shim_sysfs_root_destroy(self.0) };
    }
}

/// Formats into the sysfs page.
struct Page<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for Page<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = self.buf.len().saturating_sub(self.len);
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        if n < s.len() {
            Err(core::fmt::Error)
        } else {
            Ok(())
        }
    }
}

fn flag(c: &Cache, bit: u32) -> u8 {
    u8::from(c.debug_flags() & bit != 0)
}

fn per_node(p: &mut Page<'_>, total: usize, nodes: &[usize]) {
    let _ = write!(p, "{total}");
    if nodes.len() > 1 {
        for (n, v) in nodes.iter().enumerate() {
            if *v != 0 {
                let _ = write!(p, " N{n}={v}");
            }
        }
    }
    let _ = writeln!(p);
}

fn show(c: &Cache, index: usize, p: &mut Page<'_>) -> Result {
    if let Some(st) = index
        .checked_sub(FIXED.len())
        .and_then(|i| Stat::ALL.get(i))
    {
        let nr_cpus = crate::consts().nr_cpu_ids as usize;
        let mut per_cpu = KVec::from_elem(0usize, nr_cpus, GFP_KERNEL)?;
        let total = c.stat_total(*st, &mut per_cpu);
        let _ = write!(p, "{total}");
        for (cpu, v) in per_cpu.iter().enumerate() {
            if *v != 0 {
                let _ = write!(p, " C{cpu}={v}");
            }
        }
        let _ = writeln!(p);
        return Ok(());
    }
    let l = &c.layout;
    let attr = FIXED.get(index).ok_or(EINVAL)?.0;
    let _ = match attr {
        Attr::ObjectSize => writeln!(p, "{}", l.object_size),
        Attr::SlabSize => writeln!(p, "{}", l.stride),
        Attr::ObjsPerSlab => writeln!(p, "{}", l.objects),
        Attr::Order => writeln!(p, "{}", l.order),
        Attr::Align => writeln!(p, "{}", l.align),
        Attr::CpuPartial => writeln!(p, "{}", c.cpu_partial()),
        Attr::MinPartial => writeln!(p, "{}", c.min_partial()),
        Attr::MaxEmpty => writeln!(p, "{}", c.max_empty()),
        Attr::Errors => writeln!(p, "{}", c.errors()),
        Attr::SanityChecks => writeln!(p, "{}", flag(c, crate::debug::CONSISTENCY)),
        Attr::RedZone => writeln!(p, "{}", flag(c, crate::debug::RED_ZONE)),
        Attr::Poison => writeln!(p, "{}", flag(c, crate::debug::POISON)),
        Attr::StoreUser => writeln!(p, "{}", flag(c, crate::debug::STORE_USER)),
        Attr::FreelistHarden => writeln!(p, "{}", u8::from(c.hardened())),
        Attr::RandomFreelist => writeln!(p, "{}", u8::from(c.random_freelist())),
        Attr::IsolatedSlabs => writeln!(p, "{}", c.isolated_slabs()),
        Attr::HwcacheAlign => writeln!(
            p,
            "{}",
            u8::from(c.flags & crate::consts().flag_hwcache_align != 0)
        ),
        Attr::Ctor => {
            if let Some(f) = c.ctor() {
                let mut sym = [0u8; 128];
                // SAFETY: `sym` has room for `len` bytes; `f` is a function.
                let n = unsafe {
                    shim::rslub_shim_format_symbol(
                        sym.as_mut_ptr().cast(),
                        sym.len() as c_ulong,
                        f as *const c_void,
                    )
                };
                let s =
                    core::str::from_utf8(&sym[..(n.max(0) as usize).min(sym.len())]).unwrap_or("?");
                writeln!(p, "{s}")
            } else {
                Ok(())
            }
        }
        Attr::Shrink | Attr::Validate => Ok(()),
        _ => {
            let u = c.usage();
            let nodes = u.nr_nodes;
            match attr {
                Attr::Objects => {
                    per_node(p, u.live_objects, &u.node_objects[..nodes]);
                    Ok(())
                }
                Attr::ObjectsPartial => writeln!(p, "{}", u.objects_partial),
                Attr::Slabs => {
                    per_node(p, u.slabs, &u.node_slabs[..nodes]);
                    Ok(())
                }
                Attr::Partial => {
                    per_node(p, u.partial, &u.node_partial[..nodes]);
                    Ok(())
                }
                Attr::CpuSlabs => {
                    per_node(p, u.cpu_slabs, &u.node_cpu_slabs[..nodes]);
                    Ok(())
                }
                Attr::EmptySlabs => writeln!(p, "{}", u.empty_slabs),
                Attr::SlabsCpuPartial => {
                    // In-tree format: objects(slabs); objects are estimated
                    // as slabs times objects per slab.
                    let s = u.cpu_partial_slabs;
                    writeln!(p, "{}({})", s * l.objects, s)
                }
                _ => Ok(()),
            }
        }
    };
    Ok(())
}

/// Parses a sysfs write: a decimal number, optionally followed by one
/// newline; nothing else (no sign, no spaces, at most 10 digits).
fn parse_u32(buf: &[u8]) -> Result<u32> {
    let digits = buf.strip_suffix(b"\n").unwrap_or(buf);
    if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(EINVAL);
    }
    let mut v: u64 = 0;
    for d in digits {
        v = v * 10 + u64::from(d - b'0');
    }
    u32::try_from(v).map_err(|_| EINVAL)
}

/// Name of attribute `index` (a fixed one or a statistic), for log lines.
fn attr_name(index: usize) -> &'static str {
    let n: &[u8] = match index.checked_sub(FIXED.len()) {
        Some(i) => Stat::ALL.get(i).map_or(b"?\0", |st| st.c_name()),
        None => FIXED.get(index).map_or(b"?\0", |f| f.1),
    };
    core::str::from_utf8(n.strip_suffix(b"\0").unwrap_or(n)).unwrap_or("?")
}

/// The written string for a log line: at most 24 bytes, escaped.
struct Shown<'a>(&'a [u8]);

impl kernel::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let cut = &self.0[..self.0.len().min(24)];
        match core::str::from_utf8(cut) {
            Ok(s) => write!(f, "{s:?}")?,
            Err(_) => f.write_str("<non-utf8>")?,
        }
        if cut.len() < self.0.len() {
            write!(f, "... ({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

/// Values a write to attribute `index` accepts: (min, max); None for a
/// file that is not writable.
fn accepted(index: usize) -> Option<(u32, u32)> {
    if index >= FIXED.len() {
        // A statistic: only 0, which clears it.
        return (index < COUNT).then_some((0, 0));
    }
    match FIXED[index].0 {
        Attr::CpuPartial => crate::api::tunable_max(b"cpu_partial").map(|m| (0, m)),
        Attr::MinPartial => crate::api::tunable_max(b"min_partial").map(|m| (0, m)),
        Attr::MaxEmpty => crate::api::tunable_max(b"max_empty").map(|m| (0, m)),
        Attr::RandomFreelist => crate::api::tunable_max(b"random_freelist").map(|m| (0, m)),
        Attr::Shrink | Attr::Validate => Some((1, 1)),
        _ => None,
    }
}

fn store(c: &Cache, index: usize, buf: &[u8]) -> Result {
    let name = attr_name(index);
    let Some((min, max)) = accepted(index) else {
        pr_err!("cache {}: {} is not writable\n", c.name_str(), name);
        return Err(EINVAL);
    };
    let v = match parse_u32(buf) {
        Ok(v) if (min..=max).contains(&v) => v,
        r => {
            pr_err!(
                "cache {}: write to {}: {} is {} (accepted: {}); unchanged\n",
                c.name_str(),
                name,
                Shown(buf),
                if r.is_ok() {
                    "out of range"
                } else {
                    "not a decimal number"
                },
                Range(min, max)
            );
            return Err(EINVAL);
        }
    };
    if let Some(st) = index
        .checked_sub(FIXED.len())
        .and_then(|i| Stat::ALL.get(i))
    {
        c.stat_clear(*st);
        return Ok(());
    }
    match FIXED[index].0 {
        Attr::Shrink => c.shrink(),
        Attr::Validate => {
            c.validate();
        }
        _ => {
            let e = crate::api::set_tunable(c, name.as_bytes(), v);
            if e != 0 {
                return Err(Error::from_errno(e));
            }
        }
    }
    Ok(())
}

/// `min..max` for a log line, or the one value.
struct Range(u32, u32);

impl kernel::fmt::Display for Range {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0 == self.1 {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{}..{}", self.0, self.1)
        }
    }
}

/// sysfs show callback of the root's files (from the shim).
#[no_mangle]
pub extern "C" fn rslub_rust_sysfs_root_show(index: c_uint, buf: *mut c_char) -> c_long {
    // SAFETY: sysfs passes a PAGE_SIZE buffer.
    let page =
        unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::consts().page_size) };
    let mut p = Page { buf: page, len: 0 };
    let (cpu_partial, min_partial, max_empty) = crate::param_defaults();
    let _ = match index {
        0 => writeln!(p, "{cpu_partial}"),
        1 => writeln!(p, "{min_partial}"),
        2 => writeln!(p, "{max_empty}"),
        _ => return c_long::from(EINVAL.to_errno()),
    };
    p.len as c_long
}

/// sysfs show callback (from the shim).
#[no_mangle]
pub extern "C" fn rslub_rust_sysfs_show(
    cache: *mut c_void,
    index: c_uint,
    buf: *mut c_char,
) -> c_long {
    // SAFETY: sysfs passes a PAGE_SIZE buffer; the directory is removed
    // before its cache is freed, so `cache` is live.
    let (c, page) = unsafe {
        (
            &*cache.cast::<Cache>(),
            core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::consts().page_size),
        )
    };
    let mut p = Page { buf: page, len: 0 };
    match show(c, index as usize, &mut p) {
        Ok(()) => p.len as c_long,
        Err(e) => c_long::from(e.to_errno()),
    }
}

/// sysfs store callback (from the shim).
#[no_mangle]
pub extern "C" fn rslub_rust_sysfs_store(
    cache: *mut c_void,
    index: c_uint,
    buf: *const c_char,
    len: c_ulong,
) -> c_long {
    // SAFETY: sysfs passes `len` readable bytes; `cache` is live as above.
    let (c, input) = unsafe {
        (
            &*cache.cast::<Cache>(),
            core::slice::from_raw_parts(buf.cast::<u8>(), len as usize),
        )
    };
    match store(c, index as usize, input) {
        Ok(()) => len as c_long,
        Err(e) => c_long::from(e.to_errno()),
    }
}
