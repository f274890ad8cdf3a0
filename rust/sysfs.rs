// SPDX-License-Identifier: GPL-2.0
//! `/sys/kernel/rslub/<cache>/`: one directory per live cache, with the
//! in-tree `/sys/kernel/slab/<cache>/` attribute names and formats where the
//! concept matches, plus rslub's own (`max_empty`, `empty_slabs`, `errors`).
//!
//! The C shim only creates the kobjects and routes show/store here by
//! attribute index; every format and every check is in this file.

use crate::attr::{self, Attr, Format, Get, Set};
use crate::kplat::Cache;
use crate::shim;
use crate::stat::Stat;
use core::ffi::{c_char, c_long, c_uint, c_ulong, c_ushort, c_void};
use core::fmt::Write;
use kernel::prelude::*;

/// Largest number of files in a cache directory: the attributes with a
/// file, then one per statistic.
const MAX_FILES: usize = attr::ATTRS.len() + Stat::COUNT;

/// The attribute of file `index`, or the statistic of a later index.
enum File {
    Attr(&'static Attr),
    Stat(Stat),
}

fn file(index: usize) -> Option<File> {
    let nr_attrs = attr::files().count();
    match index.checked_sub(nr_attrs) {
        Some(i) => Stat::ALL.get(i).map(|st| File::Stat(*st)),
        None => attr::files().nth(index).map(File::Attr),
    }
}

/// Read-only files in `/sys/kernel/rslub/` itself: the module parameters'
/// values, i.e. the defaults of new caches (-1: chosen by object size);
/// `default_free_batch` in the `free_batch` build variant only. No cache
/// may take these names. Serving's files beside them (`serve`,
/// `serve_refused`) are rust/serve/control.rs's, shown through the shim.
pub const ROOT_FILES: &[&[u8]] = &[
    b"default_cpu_partial\0",
    b"default_min_partial\0",
    b"default_max_empty\0",
    #[cfg(rslub_free_batch)]
    b"default_free_batch\0",
];

/// Whether `name` is taken by a file of the sysfs root (the defaults, and
/// serving's `serve` and `serve_refused`, which c_shim/sysfs.c adds).
pub fn reserved(name: &[u8]) -> bool {
    name == b"serve"
        || name == b"serve_refused"
        || ROOT_FILES.iter().any(|f| &f[..f.len() - 1] == name)
}

/// The sysfs root, `/sys/kernel/rslub`.
pub struct Root(*mut c_void);

// SAFETY: the kobject handle is used only from process context, under the
// registry lock or at module init/exit.
unsafe impl Send for Root {}
// SAFETY: shared references only add cache directories, which the
// registry lock serializes.
unsafe impl Sync for Root {}

impl Root {
    /// Creates `/sys/kernel/rslub` with its defaults files.
    pub fn new() -> Result<Root> {
        let mut names: [*const c_char; ROOT_FILES.len()] = [core::ptr::null(); ROOT_FILES.len()];
        for (n, f) in names.iter_mut().zip(ROOT_FILES) {
            *n = f.as_ptr().cast();
        }
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
        let mut cname = [0u8; crate::slub::NAME_MAX + 1];
        cname[..name.len()].copy_from_slice(name);
        let mut names: [*const c_char; MAX_FILES] = [core::ptr::null(); MAX_FILES];
        let mut modes: [c_ushort; MAX_FILES] = [0; MAX_FILES];
        let mut count = 0;
        for a in attr::files() {
            names[count] = a.c_name.as_ptr().cast();
            modes[count] = a.mode;
            count += 1;
        }
        for st in Stat::ALL.iter() {
            names[count] = st.c_name().as_ptr().cast();
            modes[count] = attr::RW;
            count += 1;
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
                count as c_uint,
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
    let a = match file(index).ok_or(EINVAL)? {
        File::Attr(a) => a,
        File::Stat(st) => {
            let nr_cpus = crate::consts().nr_cpu_ids as usize;
            let mut per_cpu = KVec::from_elem(0usize, nr_cpus, GFP_KERNEL)?;
            let total = c.stat_total(st, &mut per_cpu);
            let _ = write!(p, "{total}");
            for (cpu, v) in per_cpu.iter().enumerate() {
                if *v != 0 {
                    let _ = write!(p, " C{cpu}={v}");
                }
            }
            let _ = writeln!(p);
            return Ok(());
        }
    };
    let _ = match a.get {
        Get::Cache(f) => writeln!(p, "{}", f(c)),
        Get::Usage(f, shown) => match shown {
            Format::Plain => writeln!(p, "{}", f(&c.totals())),
            Format::PerNode(nodes) => {
                // The per-node counts: a `Usage` on the heap.
                let u = attr::usage_of(c)?;
                per_node(p, f(&u.totals), &nodes(&u)[..u.nr_nodes]);
                Ok(())
            }
            Format::ObjectsOfSlabs => {
                let s = f(&c.totals());
                writeln!(p, "{}({})", s * c.layout.objects, s)
            }
        },
        Get::Ctor => {
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
        Get::None => Ok(()),
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

/// Name of file `index`, for log lines.
fn file_name(index: usize) -> &'static str {
    let n: &[u8] = match file(index) {
        Some(File::Attr(a)) => a.name(),
        Some(File::Stat(st)) => st.c_name().strip_suffix(b"\0").unwrap_or(b"?"),
        None => b"?",
    };
    core::str::from_utf8(n).unwrap_or("?")
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

fn store(c: &Cache, index: usize, buf: &[u8]) -> Result {
    let name = file_name(index);
    let f = file(index);
    let accepted = match &f {
        // A statistic: only 0, which clears it.
        Some(File::Stat(_)) => Some((0, 0)),
        Some(File::Attr(a)) => a.accepted(),
        None => None,
    };
    let Some((min, max)) = accepted else {
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
    match f {
        Some(File::Stat(st)) => c.stat_clear(st),
        Some(File::Attr(a)) => match a.set {
            Some(Set::Action(run)) => run(c),
            Some(Set::Tunable { set, .. }) => {
                let e = set(c, v);
                if e != 0 {
                    return Err(Error::from_errno(e));
                }
            }
            None => return Err(EINVAL),
        },
        None => return Err(EINVAL),
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
    let d = crate::defaults();
    let _ = match index {
        0 => writeln!(p, "{}", d.cpu_partial),
        1 => writeln!(p, "{}", d.min_partial),
        2 => writeln!(p, "{}", d.max_empty),
        #[cfg(rslub_free_batch)]
        3 => writeln!(p, "{}", d.free_batch),
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
