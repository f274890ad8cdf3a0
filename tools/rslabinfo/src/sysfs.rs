// SPDX-License-Identifier: GPL-2.0
//! Reading caches from a sysfs tree: `kernel/rslub/<cache>/` (rslub) and
//! `kernel/slab/<cache>/` (in-tree SLUB), with the same attribute names.
//! A missing file is a missing value, not an error; a cache directory that
//! vanishes mid-read is marked, not fatal.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Statistics rslabinfo reads (the SLUB_STATS names plus rslub's own).
pub const STATS: &[&str] = &[
    "alloc_fastpath",
    "alloc_slowpath",
    "free_fastpath",
    "free_slowpath",
    "free_frozen",
    "free_add_partial",
    "free_remove_partial",
    "alloc_from_partial",
    "alloc_slab",
    "alloc_refill",
    "alloc_node_mismatch",
    "free_slab",
    "cpuslab_flush",
    "deactivate_full",
    "deactivate_empty",
    "deactivate_to_head",
    "deactivate_to_tail",
    "deactivate_remote_frees",
    "deactivate_bypass",
    "cmpxchg_double_fail",
    "cmpxchg_double_cpu_fail",
    "cpu_partial_alloc",
    "cpu_partial_free",
    "cpu_partial_node",
    "cpu_partial_drain",
    "empty_cache_hit",
    "empty_cache_add",
    "empty_cache_release",
    "empty_cache_reclaim",
];

/// Where a cache lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `/sys/kernel/rslub`.
    Rslub,
    /// `/sys/kernel/slab` (in-tree SLUB).
    Slab,
}

impl Source {
    /// The directory under the sysfs root.
    pub fn dir(self) -> &'static str {
        match self {
            Source::Rslub => "kernel/rslub",
            Source::Slab => "kernel/slab",
        }
    }
}

/// One cache, as read.
#[derive(Debug, Clone, Serialize)]
pub struct Cache {
    pub name: String,
    pub source: Source,
    /// The directory disappeared while it was being read.
    pub vanished: bool,
    pub object_size: Option<u64>,
    pub slab_size: Option<u64>,
    pub objs_per_slab: Option<u64>,
    pub order: Option<u64>,
    pub objects: Option<u64>,
    pub objects_partial: Option<u64>,
    pub slabs: Option<u64>,
    pub partial: Option<u64>,
    pub cpu_slabs: Option<u64>,
    pub slabs_cpu_partial: Option<u64>,
    pub empty_slabs: Option<u64>,
    pub cpu_partial: Option<u64>,
    pub min_partial: Option<u64>,
    pub max_empty: Option<u64>,
    pub errors: Option<u64>,
    /// Statistic totals (files that exist).
    pub stats: BTreeMap<String, u64>,
}

/// The first number of an attribute file ("123", "123 N0=..", "4(2) C0=..").
pub fn first_number(text: &str) -> Option<u64> {
    let t = text.trim_start();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    t[..end].parse().ok()
}

/// The names a cache directory lists, read once: an attribute it does not
/// list (the statistics of a kernel without `CONFIG_SLUB_STATS`) costs no
/// failed open. Under TCG each system call is dear, and a listing of 150
/// caches is thousands of them.
struct Listing(BTreeSet<String>);

impl Listing {
    fn read(dir: &Path) -> Option<Self> {
        let names = fs::read_dir(dir).ok()?;
        Some(Listing(
            names
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
        ))
    }
}

fn read_num(dir: &Path, listed: &Listing, attr: &str, vanished: &mut bool) -> Option<u64> {
    if !listed.0.contains(attr) {
        return None;
    }
    match fs::read_to_string(dir.join(attr)) {
        Ok(s) => first_number(&s),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !dir.exists() {
                *vanished = true;
            }
            None
        }
        Err(_) => None,
    }
}

/// Reads one cache directory.
pub fn read_cache(dir: &Path, name: &str, source: Source) -> Cache {
    let listed = Listing::read(dir);
    let mut v = listed.is_none();
    let listed = listed.unwrap_or(Listing(BTreeSet::new()));
    let mut stats = BTreeMap::new();
    for st in STATS {
        if let Some(n) = read_num(dir, &listed, st, &mut v) {
            stats.insert((*st).to_string(), n);
        }
    }
    let mut c = Cache {
        name: name.to_string(),
        source,
        vanished: false,
        object_size: read_num(dir, &listed, "object_size", &mut v),
        slab_size: read_num(dir, &listed, "slab_size", &mut v),
        objs_per_slab: read_num(dir, &listed, "objs_per_slab", &mut v),
        order: read_num(dir, &listed, "order", &mut v),
        objects: read_num(dir, &listed, "objects", &mut v),
        objects_partial: read_num(dir, &listed, "objects_partial", &mut v),
        slabs: read_num(dir, &listed, "slabs", &mut v),
        partial: read_num(dir, &listed, "partial", &mut v),
        cpu_slabs: read_num(dir, &listed, "cpu_slabs", &mut v),
        slabs_cpu_partial: read_num(dir, &listed, "slabs_cpu_partial", &mut v).and_then(|_| {
            // "objects(slabs)": the slab count is in the parentheses.
            let s = fs::read_to_string(dir.join("slabs_cpu_partial")).ok()?;
            let inner = s.split('(').nth(1)?;
            first_number(inner)
        }),
        empty_slabs: read_num(dir, &listed, "empty_slabs", &mut v),
        cpu_partial: read_num(dir, &listed, "cpu_partial", &mut v),
        min_partial: read_num(dir, &listed, "min_partial", &mut v),
        max_empty: read_num(dir, &listed, "max_empty", &mut v),
        errors: read_num(dir, &listed, "errors", &mut v),
        stats,
    };
    c.vanished = v || !dir.exists();
    c
}

/// Reads every cache under `root/<source dir>`. In-tree SLUB lists merged
/// caches as symlinks to `:`-named directories; each directory is reported
/// once, under its first alias name (or its own name if it has none).
pub fn read_all(root: &Path, source: Source) -> io::Result<Vec<Cache>> {
    let base = root.join(source.dir());
    let mut dirs: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut entries: Vec<_> = fs::read_dir(&base)?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    // An entry's type comes with the listing (no system call); an alias
    // is a symlink to a directory of the same listing, so only symlinks
    // are read, once each (canonicalizing every entry cost several calls
    // apiece, thousands a run, each dear under TCG).
    let is_dir = |e: &fs::DirEntry| e.file_type().is_ok_and(|t| t.is_dir());
    let listed_dirs: BTreeSet<_> = entries
        .iter()
        .filter(|e| is_dir(e))
        .map(|e| e.file_name())
        .collect();
    for e in &entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let target = match e.file_type() {
            Ok(t) if t.is_dir() => e.file_name(),
            Ok(t) if t.is_symlink() => match fs::read_link(e.path()) {
                Ok(link) => match link.file_name() {
                    Some(f) => f.to_os_string(),
                    None => continue,
                },
                Err(_) => continue, // vanished between listing and reading
            },
            _ => continue,
        };
        if !listed_dirs.contains(&target) {
            continue;
        }
        let target = base.join(target);
        // Prefer a real name over a ":t-0000048" one.
        let better = match dirs.get(&target) {
            None => true,
            Some(existing) => existing.starts_with(':') && !name.starts_with(':'),
        };
        if better {
            dirs.insert(target, name);
        }
    }
    Ok(dirs
        .into_iter()
        .map(|(dir, name)| read_cache(&dir, &name, source))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::{first_number, read_all, Source};
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn aliases_are_read_once_under_their_real_name() {
        let root = std::env::temp_dir().join(format!("rslabinfo-alias-{}", std::process::id()));
        let base = root.join("kernel/slab");
        fs::create_dir_all(base.join(":a-0000064")).unwrap();
        fs::create_dir_all(base.join("dentry")).unwrap();
        fs::write(base.join(":a-0000064/objects"), "7\n").unwrap();
        fs::write(base.join("dentry/objects"), "3\n").unwrap();
        symlink(":a-0000064", base.join("kmalloc-64")).unwrap();
        symlink(":a-0000064", base.join("zz-alias")).unwrap();
        symlink("gone", base.join("dangling")).unwrap();
        fs::write(base.join("not-a-cache"), "").unwrap();
        let caches = read_all(&root, Source::Slab).unwrap();
        fs::remove_dir_all(&root).unwrap();
        let got: Vec<_> = caches
            .iter()
            .map(|c| (c.name.as_str(), c.objects))
            .collect();
        assert_eq!(got, [("kmalloc-64", Some(7)), ("dentry", Some(3))]);
    }

    #[test]
    fn first_number_reads_every_in_tree_format() {
        assert_eq!(first_number("123\n"), Some(123));
        assert_eq!(first_number("48 N0=40 N1=8\n"), Some(48));
        assert_eq!(first_number("968 C1=968\n"), Some(968));
        assert_eq!(first_number("30(2) C0=30(2)\n"), Some(30));
        assert_eq!(first_number("\n"), None);
        assert_eq!(first_number("abc"), None);
    }
}
