// SPDX-License-Identifier: GPL-2.0
//! The views: summary lines, one cache's report, the activity table, JSON.

use crate::sysfs::{self, Cache, Source};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

const PAGE_SIZE: u64 = 4096;

/// Loads the selected caches, rslub first, each group sorted by name.
pub fn load(
    root: &Path,
    rslub: bool,
    slab: bool,
    filter: Option<&str>,
) -> Result<Vec<Cache>, String> {
    let mut out = Vec::new();
    let mut found_root = false;
    for (want, source) in [(rslub, Source::Rslub), (slab, Source::Slab)] {
        if !want {
            continue;
        }
        match sysfs::read_all(root, source) {
            Ok(mut v) => {
                found_root = true;
                v.sort_by(|a, b| a.name.cmp(&b.name));
                out.extend(v);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(format!(
                    "cannot read {}: {e}",
                    root.join(source.dir()).display()
                ))
            }
        }
    }
    if !found_root {
        return Err(format!(
            "no slab caches under {} (is rslub loaded, and is this a sysfs root?)",
            root.display()
        ));
    }
    if let Some(f) = filter {
        out.retain(|c| c.name.contains(f));
    }
    Ok(out)
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |n| n.to_string())
}

/// Human-readable bytes, like slabinfo's store_size.
pub fn size(bytes: u64) -> String {
    let units = [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)];
    for (u, n) in units {
        if bytes >= n * 10 {
            return format!("{}{u}", bytes / n);
        }
    }
    bytes.to_string()
}

fn label(c: &Cache) -> String {
    let tag = match c.source {
        Source::Rslub => "rslub:",
        Source::Slab => "",
    };
    let gone = if c.vanished { " (vanished)" } else { "" };
    format!("{tag}{}{gone}", c.name)
}

fn space(c: &Cache) -> Option<u64> {
    Some(c.slabs? * (PAGE_SIZE << c.order?))
}

/// One line per cache, like `slabinfo`.
pub fn summary(caches: &[Cache]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<28} {:>9} {:>7} {:>7} {:>14} {:>4} {:>2} {:>4}",
        "Name", "Objects", "Objsize", "Space", "Slabs/Part/Cpu", "O/S", "O", "%Fr"
    );
    for c in caches {
        let spc = space(c).map_or_else(|| "-".into(), size);
        let spc_pc = format!("{}/{}/{}", opt(c.slabs), opt(c.partial), opt(c.cpu_slabs));
        let fr = match (c.partial, c.slabs) {
            (Some(p), Some(t)) if t > 0 => (p * 100 / t).to_string(),
            (Some(_), Some(_)) => "0".into(),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<28} {:>9} {:>7} {:>7} {:>14} {:>4} {:>2} {:>4}",
            label(c),
            opt(c.objects),
            opt(c.object_size),
            spc,
            spc_pc,
            opt(c.objs_per_slab),
            opt(c.order),
            fr
        );
    }
    s
}

fn stat(c: &Cache, name: &str) -> Option<u64> {
    c.stats.get(name).copied()
}

fn pct(part: u64, total: u64) -> u64 {
    (part * 100).checked_div(total).unwrap_or(0)
}

/// The full report of one cache, like `slabinfo -r`.
pub fn report(c: &Cache) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Slabcache: {:<28} Aliases: 0 Order: {:>2} Objects: {}",
        label(c),
        opt(c.order),
        opt(c.objects)
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Sizes (bytes)     Slabs              Debug                Memory"
    );
    let _ = writeln!(
        s,
        "------------------------------------------------------------------------"
    );
    let _ = writeln!(
        s,
        "Object : {:>7}  Total  : {:>7}   Errors : {:>7}     Total  : {:>7}",
        opt(c.object_size),
        opt(c.slabs),
        opt(c.errors),
        space(c).map_or_else(|| "-".into(), size)
    );
    let _ = writeln!(
        s,
        "SlabObj: {:>7}  Partial: {:>7}   Empty  : {:>7}     Used   : {:>7}",
        opt(c.slab_size),
        opt(c.partial),
        opt(c.empty_slabs),
        match (c.objects, c.object_size) {
            (Some(o), Some(z)) => size(o * z),
            _ => "-".into(),
        }
    );
    let _ = writeln!(
        s,
        "SlabSiz: {:>7}  CpuSlab: {:>7}   CpuPart: {:>7}",
        c.order.map_or_else(|| "-".into(), |o| size(PAGE_SIZE << o)),
        opt(c.cpu_slabs),
        opt(c.slabs_cpu_partial)
    );
    let _ = writeln!(
        s,
        "Tunables: cpu_partial {} min_partial {} max_empty {}",
        opt(c.cpu_partial),
        opt(c.min_partial),
        opt(c.max_empty)
    );
    if c.stats.is_empty() {
        let _ = writeln!(s, "\nNo statistics (in-tree: CONFIG_SLUB_STATS off).");
        return s;
    }
    let g = |n: &str| stat(c, n).unwrap_or(0);
    let alloc = g("alloc_fastpath") + g("alloc_slowpath");
    let free = g("free_fastpath") + g("free_slowpath");
    let _ = writeln!(s);
    let _ = writeln!(s, "Slab Perf Counter       Alloc     Free %Al %Fr");
    let _ = writeln!(s, "--------------------------------------------------");
    let rows = [
        ("Fastpath", g("alloc_fastpath"), g("free_fastpath")),
        ("Slowpath", g("alloc_slowpath"), g("free_slowpath")),
        ("Page Alloc", g("alloc_slab"), g("free_slab")),
        (
            "Add partial",
            g("deactivate_to_head") + g("deactivate_to_tail"),
            g("free_add_partial"),
        ),
        (
            "Remove partial",
            g("alloc_from_partial"),
            g("free_remove_partial"),
        ),
        (
            "Cpu partial list",
            g("cpu_partial_alloc"),
            g("cpu_partial_free"),
        ),
        ("RemoteObj/SlabFrozen", g("alloc_refill"), g("free_frozen")),
        ("Empty cache", g("empty_cache_hit"), g("empty_cache_add")),
        ("Total", alloc, free),
    ];
    for (name, a, f) in rows {
        let _ = writeln!(
            s,
            "{name:<20} {a:>8} {f:>8} {:>3} {:>3}",
            pct(a, alloc),
            pct(f, free)
        );
    }
    let _ = writeln!(s);
    let slow = g("alloc_slowpath").max(1);
    let _ = writeln!(s, "Slowpath refill sources (% of alloc slowpath)");
    for (name, v) in [
        ("CPU slab freelist (remote frees)", g("alloc_refill")),
        ("CPU partial list", g("cpu_partial_alloc")),
        ("Node partial list", g("alloc_from_partial")),
        ("Empty-slab cache", g("empty_cache_hit")),
        ("New slab (page allocator)", g("alloc_slab")),
    ] {
        let _ = writeln!(s, "  {name:<34} {v:>8} {:>3}%", pct(v, slow));
    }
    let _ = writeln!(
        s,
        "Node partial -> CPU partial {}   CPU partial drained {}   Node mismatch {}",
        g("cpu_partial_node"),
        g("cpu_partial_drain"),
        g("alloc_node_mismatch")
    );
    let deact = [
        "deactivate_full",
        "deactivate_empty",
        "deactivate_to_head",
        "deactivate_to_tail",
        "deactivate_bypass",
    ];
    let total_deact: u64 = deact.iter().map(|d| g(d)).sum();
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Deactivate Full={}({}%) Empty={}({}%) ToHead={}({}%) ToTail={}({}%) Bypass={}({}%) RemoteFrees={} Flush={}",
        g("deactivate_full"),
        pct(g("deactivate_full"), total_deact),
        g("deactivate_empty"),
        pct(g("deactivate_empty"), total_deact),
        g("deactivate_to_head"),
        pct(g("deactivate_to_head"), total_deact),
        g("deactivate_to_tail"),
        pct(g("deactivate_to_tail"), total_deact),
        g("deactivate_bypass"),
        pct(g("deactivate_bypass"), total_deact),
        g("deactivate_remote_frees"),
        g("cpuslab_flush")
    );
    let ops = alloc + free;
    let _ = writeln!(s);
    let _ = writeln!(s, "Cmpxchg_double Looping");
    let _ = writeln!(s, "------------------------");
    let _ = writeln!(
        s,
        "Locked Cmpxchg Double redos   {}\nUnlocked Cmpxchg Double redos {}",
        g("cmpxchg_double_fail"),
        g("cmpxchg_double_cpu_fail")
    );
    if ops > 0 {
        let _ = writeln!(
            s,
            "Redos per 1000 operations: locked {:.2} unlocked {:.2}",
            g("cmpxchg_double_fail") as f64 * 1000.0 / ops as f64,
            g("cmpxchg_double_cpu_fail") as f64 * 1000.0 / ops as f64
        );
    }
    s
}

/// A row of the activity view.
#[derive(Debug, Serialize)]
pub struct ActivityRow {
    pub name: String,
    pub source: Source,
    pub objects: Option<u64>,
    pub alloc: Option<u64>,
    pub free: Option<u64>,
    /// Percent of allocations on the fast path.
    pub alloc_fast_pct: Option<u64>,
    /// Percent of frees on the fast path.
    pub free_fast_pct: Option<u64>,
}

/// Activity rows, busiest first.
pub fn activity_rows(caches: &[Cache]) -> Vec<ActivityRow> {
    let mut rows: Vec<ActivityRow> = caches
        .iter()
        .map(|c| {
            let sum = |a: &str, b: &str| Some(stat(c, a)? + stat(c, b)?);
            let alloc = sum("alloc_fastpath", "alloc_slowpath");
            let free = sum("free_fastpath", "free_slowpath");
            ActivityRow {
                name: label(c),
                source: c.source,
                objects: c.objects,
                alloc,
                free,
                alloc_fast_pct: alloc.map(|t| pct(stat(c, "alloc_fastpath").unwrap_or(0), t)),
                free_fast_pct: free.map(|t| pct(stat(c, "free_fastpath").unwrap_or(0), t)),
            }
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.alloc.unwrap_or(0) + r.free.unwrap_or(0)));
    rows
}

/// The activity table, like `slabinfo -AD`.
pub fn activity(caches: &[Cache]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<28} {:>9} {:>11} {:>11} {:>9}",
        "Name", "Objects", "Alloc", "Free", "%Fast"
    );
    for r in activity_rows(caches) {
        let fast = match (r.alloc_fast_pct, r.free_fast_pct) {
            (Some(a), Some(f)) => format!("{a} {f}"),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "{:<28} {:>9} {:>11} {:>11} {:>9}",
            r.name,
            opt(r.objects),
            opt(r.alloc),
            opt(r.free),
            fast
        );
    }
    s
}

/// Pretty JSON of anything serializable, newline-terminated.
pub fn json<T: Serialize + ?Sized>(v: &T) -> String {
    let mut s =
        serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
