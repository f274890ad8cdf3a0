// SPDX-License-Identifier: GPL-2.0
//! Terminal tables in the spirit of mmtests' compare-kernels: medians side by
//! side with the ratio, the signed % difference and a `*` where the two
//! allocators' round ranges do not overlap. `table` compares allocators
//! within one run (rslub against the in-tree SLUB, or rslub variants against
//! the first variant); `compare` compares two runs point by point. The cost
//! model's event counts (`ev_*`) are not compared one by one: `table` sums
//! them into one events section per workload, beside its modeled cycles.

use crate::model::{fmt_value, is_event, metric_desc, mode_desc, Bench, Measure};
use std::collections::HashMap;

const LEGEND: &str =
    "medians of the rounds; diff = (x - base) / base; * = round ranges [min,max] do not overlap";

/// Results grouped by (mode, workload, metric), in first-seen order.
fn sections<'a>(results: impl Iterator<Item = &'a Measure>) -> Vec<Vec<&'a Measure>> {
    let mut out: Vec<Vec<&Measure>> = Vec::new();
    for m in results {
        match out
            .iter_mut()
            .find(|s| s[0].mode == m.mode && s[0].workload == m.workload && s[0].metric == m.metric)
        {
            Some(s) => s.push(m),
            None => out.push(vec![m]),
        }
    }
    out
}

fn section_title(m: &Measure) -> String {
    format!(
        "== {} / {} / {}: {} ({})",
        m.mode,
        m.workload,
        m.metric,
        metric_desc(&m.metric),
        mode_desc(&m.mode)
    )
}

/// A table row: op, size, batch, cpus.
type RowKey = (String, u64, u64, u64);

fn row_key(m: &Measure) -> RowKey {
    (m.op.clone(), m.size, m.batch, m.cpus)
}

fn ratio(x: f64, base: f64) -> String {
    if base == 0.0 {
        "-".into()
    } else {
        format!("{:.3}", x / base)
    }
}

/// The signed % difference of x against base, with `*` when significant.
fn diff(x: &Measure, base: &Measure) -> String {
    if base.median == 0.0 {
        return "-".into();
    }
    let pct = (x.median - base.median) / base.median * 100.0;
    let star = if x.differs_from(base) { "*" } else { " " };
    format!("{pct:+.2}%{star}")
}

/// The width of each column of `rows`: its widest cell.
fn widths(rows: &[Vec<String>]) -> Vec<usize> {
    let ncol = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..ncol)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Pads cells into columns two spaces apart: text columns (`left`, by
/// index) left-aligned, numbers right-aligned.
pub(crate) fn render(rows: &[Vec<String>], left: &[usize]) -> String {
    let width = widths(rows);
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if left.contains(&c) {
                    format!("{s:<w$}", w = width[c])
                } else {
                    format!("{s:>w$}", w = width[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn run_name(b: &Bench) -> String {
    let get = |k: &str| b.meta.get(k).map_or("?", String::as_str);
    format!("date {} git {}", get("date"), get("git"))
}

/// The allocator name of Linux 6.12's SLUB in a run of two kernels (make
/// bench SUITE=classic names it with `parse --rename LOG:slub=classic`):
/// the baseline of that run's table. Each kernel's floor is named
/// `floor-<kernel>` there; the first one seen is the reference of the others
/// (the harness measured on both kernels: their ratio should be about 1).
pub const CLASSIC: &str = "classic";

/// What a column shows relative to the section's baseline.
enum Col {
    /// The baseline, or a series with nothing to compare (ideal).
    Plain(String),
    /// A series with its ratio and % difference to another (the baseline,
    /// or the first kernel's floor).
    Versus(String, String),
    /// The floor, and rslub's cost as a multiple of it.
    Floor,
}

/// The table of one run: see the module comment. Without variants the
/// baseline is slub; with variants (a suite run) it is the first variant.
pub fn table(b: &Bench, title: &str) -> String {
    let kernels = b.results.iter().any(|m| m.allocator == CLASSIC);
    // The counters mode's variants name caches, not allocator variants.
    let baseline = match b
        .results
        .iter()
        .find(|m| m.variant.is_some() && m.mode != "counters")
    {
        _ if kernels => CLASSIC.to_string(),
        Some(m) => m.series(),
        None => "slub".to_string(),
    };
    let suite = baseline != "slub" && !kernels;
    let mut out = format!("rsbench: {title} ({})\n", run_name(b));
    if let Some(k) = b.meta.get("kernel") {
        out.push_str(&format!("kernel {k}, baseline {baseline}\n"));
    }
    if b.results.iter().any(|m| m.metric == "cycles_per_op") {
        let p = b.meta.get("profile").map_or("?", String::as_str);
        out.push_str(&format!("cost model: cycles priced by profile {p}\n"));
    }
    out.push_str(LEGEND);
    out.push('\n');
    if kernels {
        out.push_str("two kernels: every allocator against the classic SLUB");
        // The floors of SUITE=classic (the real programs have none).
        if b.results.iter().any(|m| m.allocator.starts_with("floor-")) {
            out.push_str(
                "; each later floor-<kernel> against the first (the harness: about 1.000)",
            );
        }
        out.push('\n');
    }
    // A two-kernel run's A/A series (X-aa) are judged in their sections
    // below, not shown as columns of their own.
    let aa_col = |m: &Measure| kernels && crate::aa::aa_of(&m.allocator).is_some();
    if b.results.iter().any(aa_col) {
        out.push_str("the A/A series (-aa): in the A/A sections at the end\n");
    }
    let shown = b
        .results
        .iter()
        .filter(|m| m.mode != "counters" && !is_event(&m.metric) && !aa_col(m));
    let mut legend = true;
    for sec in sections(shown) {
        let mut series: Vec<String> = Vec::new();
        let mut rows: Vec<RowKey> = Vec::new();
        let mut at: HashMap<(RowKey, String), &Measure> = HashMap::new();
        // The ideal (churn) is one value per size: shown on each op's row.
        let mut ideal: HashMap<(u64, u64, u64), &Measure> = HashMap::new();
        let only_ideal = sec.iter().all(|m| m.allocator == "ideal");
        for m in &sec {
            if !series.contains(&m.series()) {
                series.push(m.series());
            }
            if m.allocator == "ideal" {
                ideal.insert((m.size, m.batch, m.cpus), m);
            }
            if (m.allocator != "ideal" || only_ideal) && !rows.contains(&row_key(m)) {
                rows.push(row_key(m));
            }
            at.insert((row_key(m), m.series()), m);
        }
        // Baseline first, the one compared with it next, references last
        // (two kernels: classic, sheaves, rslub, the floors).
        let rank = |s: &String| match s.as_str() {
            _ if *s == baseline => 0,
            "sheaves" if kernels => 1,
            "rslub" if !suite && !kernels => 1,
            "floor" => 3,
            _ if kernels && s.starts_with("floor-") => 3,
            "ideal" => 4,
            _ => 2,
        };
        series.sort_by_key(rank);
        let has_base = series.contains(&baseline);
        let first_floor = series
            .iter()
            .find(|s| kernels && s.starts_with("floor-"))
            .cloned();
        let cols: Vec<Col> = series
            .iter()
            .map(|s| match s.as_str() {
                "floor" if !suite && !kernels && series.iter().any(|x| x == "rslub") => Col::Floor,
                "ideal" => Col::Plain(s.clone()),
                // A served kmalloc cache against the same kmalloc in-tree.
                "kserved" if series.iter().any(|x| x == "kmalloc") => {
                    Col::Versus(s.clone(), "kmalloc".into())
                }
                _ if Some(s) == first_floor.as_ref() => Col::Plain(s.clone()),
                _ if kernels && s.starts_with("floor-") => {
                    Col::Versus(s.clone(), first_floor.clone().unwrap_or_default())
                }
                _ if *s == baseline || !has_base => Col::Plain(s.clone()),
                _ => Col::Versus(s.clone(), baseline.clone()),
            })
            .collect();
        let mut head: Vec<String> = ["op", "size", "batch", "cpus"].map(String::from).into();
        for c in &cols {
            match c {
                Col::Plain(s) => head.push(s.clone()),
                Col::Versus(s, _) => head.extend([s.clone(), "ratio".into(), "diff".into()]),
                Col::Floor => head.extend(["floor".into(), "rslub/floor".into()]),
            }
        }
        let mut grid = vec![head];
        for r in &rows {
            let get = |s: &str| at.get(&(r.clone(), s.to_string())).copied();
            let val =
                |m: Option<&Measure>| m.map_or("-".into(), |m| fmt_value(&m.metric, m.median));
            let mut line = vec![
                r.0.clone(),
                r.1.to_string(),
                r.2.to_string(),
                r.3.to_string(),
            ];
            for c in &cols {
                match c {
                    Col::Plain(s) if s == "ideal" => {
                        line.push(val(ideal.get(&(r.1, r.2, r.3)).copied()))
                    }
                    Col::Plain(s) => line.push(val(get(s))),
                    Col::Versus(s, against) => {
                        let (x, base) = (get(s), get(against));
                        line.push(val(x));
                        match (x, base) {
                            (Some(x), Some(base)) => {
                                line.push(ratio(x.median, base.median));
                                line.push(diff(x, base));
                            }
                            _ => line.extend(["-".into(), "-".into()]),
                        }
                    }
                    Col::Floor => {
                        let f = get("floor");
                        line.push(val(f));
                        line.push(match (get("rslub"), f) {
                            (Some(x), Some(f)) => ratio(x.median, f.median),
                            _ => "-".into(),
                        });
                    }
                }
            }
            grid.push(line);
        }
        out.push('\n');
        out.push_str(&section_title(sec[0]));
        out.push('\n');
        out.push_str(&render(&grid, &[0]));
        if sec[0].metric == "cycles_per_op" {
            let ev = events(b, &sec[0].mode, &sec[0].workload, &series, legend);
            legend &= ev.is_empty();
            out.push_str(&ev);
        }
    }
    out.push_str(&crate::aa::section(b));
    out.push_str(&crate::aa::kernels_section(b));
    out.push_str(&crate::experiment::section(b));
    out.push_str(&counters(b));
    out
}

/// The columns of an events section, each a sum of `ev_<field>_per_op`
/// (cycles per instruction aside): (header, fields).
const EVENTS: [(&str, &[&str]); 7] = [
    ("instr", &["insns"]),
    (
        "L1miss",
        &[
            "l2",
            "llc",
            "dram_local",
            "dram_remote",
            "xfer_local",
            "xfer_remote",
        ],
    ),
    ("xfer", &["xfer_local", "xfer_remote"]),
    ("dram", &["dram_local", "dram_remote"]),
    // An atomic whose line came by a transfer counts in rmw_xfer, not in
    // its kind (the transfer prices it); nearly all are locked ones.
    ("locked", &["locked", "cx16_locked", "rmw_xfer"]),
    // Cycles spent waiting (a line in transfer, a spin for another vCPU's
    // store), inside cycles; and the machine's elapsed cycles (makespan),
    // beside them: a workload of several vCPUs takes its span, not its
    // cycles' sum (costmodel_model::order).
    ("wait", &["wait"]),
    ("span", &["span"]),
];

/// An event count per operation: whole numbers as they are, small
/// fractions with three decimals (a DRAM access every 500 operations must
/// not show as 0.00).
fn fmt_event(v: f64) -> String {
    if v != 0.0 && v.abs() < 1.0 && v != v.round() {
        format!("{v:.3}")
    } else {
        fmt_value("", v)
    }
}

/// One workload's modeled events per operation, a group of columns per
/// allocator (in `series` order): what its cycles are made of. `legend`:
/// say what the columns are (the first events section does).
fn events(b: &Bench, mode: &str, workload: &str, series: &[String], legend: bool) -> String {
    let ms: Vec<&Measure> = b
        .results
        .iter()
        .filter(|m| m.mode == mode && m.workload == workload)
        .filter(|m| m.metric == "cycles_per_op" || is_event(&m.metric))
        .collect();
    let mut rows: Vec<RowKey> = Vec::new();
    let mut at: HashMap<(RowKey, String, &str), f64> = HashMap::new();
    for m in &ms {
        if !rows.contains(&row_key(m)) {
            rows.push(row_key(m));
        }
        at.insert((row_key(m), m.series(), &m.metric), m.median);
    }
    let series: Vec<&String> = series
        .iter()
        .filter(|s| ms.iter().any(|m| m.series() == **s && is_event(&m.metric)))
        .collect();
    if series.is_empty() {
        return String::new();
    }
    let mut head: Vec<String> = ["op", "size", "batch", "cpus"].map(String::from).into();
    let mut groups = Vec::new();
    for s in &series {
        groups.push((head.len(), EVENTS.len() + 1, s.to_string()));
        head.push(EVENTS[0].0.into());
        head.push("cyc/instr".into());
        head.extend(EVENTS[1..].iter().map(|(h, _)| h.to_string()));
    }
    let mut grid = vec![head];
    for r in &rows {
        let mut line = vec![
            r.0.clone(),
            r.1.to_string(),
            r.2.to_string(),
            r.3.to_string(),
        ];
        for s in &series {
            let get = |metric: &str| at.get(&(r.clone(), s.to_string(), metric)).copied();
            let sum = |fields: &[&str]| -> Option<f64> {
                fields.iter().map(|f| get(&format!("ev_{f}_per_op"))).sum()
            };
            let cells: Vec<Option<String>> = EVENTS
                .iter()
                .map(|(_, fields)| sum(fields).map(fmt_event))
                .collect();
            let cpi = match (get("cycles_per_op"), sum(&["insns"])) {
                (Some(c), Some(i)) if i > 0.0 => Some(format!("{:.2}", c / i)),
                _ => None,
            };
            let dash = |c: Option<String>| c.unwrap_or_else(|| "-".into());
            line.push(dash(cells[0].clone()));
            line.push(dash(cpi));
            line.extend(cells[1..].iter().cloned().map(dash));
        }
        grid.push(line);
    }
    // A line above the header naming each allocator over its columns.
    let width = widths(&grid);
    let mut over = String::new();
    for (start, n, name) in &groups {
        let at = width[..*start].iter().map(|w| w + 2).sum::<usize>();
        let span = width[*start..start + n].iter().sum::<usize>() + 2 * (n - 1);
        let pad = at.saturating_sub(over.chars().count());
        over.push_str(&" ".repeat(pad));
        let rule = span.saturating_sub(name.chars().count() + 1);
        over.push_str(&format!("{name} {}", "-".repeat(rule)));
    }
    let legend = if legend {
        "instr = instructions; cyc/instr = modeled cycles per instruction; \
         L1miss = accesses L1 did not serve (l2+llc+dram+xfer);\n\
         xfer = cache-to-cache transfers (local+remote); dram = DRAM accesses \
         (local+remote); locked = locked atomics (incl. lock cmpxchg16b, and any \
         atomic whose line came by a transfer)\n\
         wait = cycles waited (a line in transfer, a spin for another vCPU's store), \
         inside the cycles; span = the machine's elapsed cycles (makespan): with \
         several vCPUs at work it is less than their cycles' sum\n"
    } else {
        ""
    };
    format!(
        "\n== {mode} / {workload} / events: modeled events per operation, each \
         allocator's ({})\n{legend}{over}\n{}",
        mode_desc(mode),
        render(&grid, &[0])
    )
}

/// A counter's median for (op, cache, metric), 0 when absent.
type Counts<'a> = HashMap<(&'a str, &'a str, &'a str), f64>;

fn count(c: &Counts, op: &str, cache: &str, metric: &str) -> f64 {
    c.get(&(op, cache, metric)).copied().unwrap_or(0.0)
}

fn pct_of(part: f64, total: f64) -> String {
    if total == 0.0 {
        "-".into()
    } else {
        format!("{:.1}", part * 100.0 / total)
    }
}

fn per_k(part: f64, ops: f64) -> String {
    if ops == 0.0 {
        "-".into()
    } else {
        format!("{:.2}", part * 1000.0 / ops)
    }
}

/// The counters mode (make bench SUITE=real): rslub's event counters over
/// one run of each program, one row per program. Without a variant they
/// are summed over the served caches; variant=NAME is the cache NAME
/// alone. Two tables per cache: where allocations and frees went, and
/// slabinfo -r's "Cmpxchg_double Looping" (locked and unlocked redos).
fn counters(b: &Bench) -> String {
    let ms: Vec<&Measure> = b.results.iter().filter(|m| m.mode == "counters").collect();
    if ms.is_empty() {
        return String::new();
    }
    let mut c: Counts = HashMap::new();
    let mut caches: Vec<&str> = Vec::new();
    let mut served: HashMap<&str, f64> = HashMap::new();
    const ALL: &str = "";
    for m in &ms {
        if m.metric == "served" {
            served.insert(&m.op, m.median);
            continue;
        }
        let cache = m.variant.as_deref().unwrap_or(ALL);
        if !caches.contains(&cache) {
            caches.push(cache);
        }
        c.insert((&m.op, cache, &m.metric), m.median);
    }
    // All served caches first, then the caches by name.
    caches.sort_by_key(|&k| (k != ALL, k));
    let mut out = String::new();
    for &cache in &caches {
        let what = if cache == ALL {
            "all served caches"
        } else {
            cache
        };
        let g = |op: &str, k: &str| count(&c, op, cache, k);
        let ops: Vec<&str> = {
            let mut v: Vec<&str> = Vec::new();
            for m in &ms {
                if m.variant.as_deref().unwrap_or(ALL) == cache && !v.contains(&m.op.as_str()) {
                    v.push(&m.op);
                }
            }
            v
        };
        let mut paths = vec![[
            "op",
            "caches",
            "allocs",
            "fast%",
            "frees",
            "fast%",
            "new_slab",
            "slab_freed",
            "refill",
            "cpu_partial",
            "node_partial",
            "empty_hit",
            "to_partial",
        ]
        .map(String::from)
        .to_vec()];
        let mut redos = vec![[
            "op",
            "allocs+frees",
            "locked_redos",
            "unlocked_redos",
            "locked/1k",
            "unlocked/1k",
        ]
        .map(String::from)
        .to_vec()];
        for &op in &ops {
            let alloc = g(op, "alloc_fastpath") + g(op, "alloc_slowpath");
            let free = g(op, "free_fastpath") + g(op, "free_slowpath");
            let n = |x: f64| format!("{x:.0}");
            paths.push(vec![
                op.to_string(),
                if cache == ALL {
                    served.get(op).map_or("-".into(), |v| n(*v))
                } else {
                    "1".into()
                },
                n(alloc),
                pct_of(g(op, "alloc_fastpath"), alloc),
                n(free),
                pct_of(g(op, "free_fastpath"), free),
                n(g(op, "alloc_slab")),
                n(g(op, "free_slab")),
                n(g(op, "alloc_refill")),
                n(g(op, "cpu_partial_alloc")),
                n(g(op, "alloc_from_partial")),
                n(g(op, "empty_cache_hit")),
                n(g(op, "free_add_partial")),
            ]);
            let (l, u) = (
                g(op, "cmpxchg_double_fail"),
                g(op, "cmpxchg_double_cpu_fail"),
            );
            redos.push(vec![
                op.to_string(),
                n(alloc + free),
                n(l),
                n(u),
                per_k(l, alloc + free),
                per_k(u, alloc + free),
            ]);
        }
        out.push_str(&format!(
            "\n== counters / {what}: where rslub's allocations and frees went ({})\n",
            mode_desc("counters")
        ));
        out.push_str(&render(&paths, &[0]));
        out.push_str(&format!(
            "\n== counters / {what}: Cmpxchg_double Looping (locked: slab freelist; \
             unlocked: per-CPU)\n"
        ));
        out.push_str(&render(&redos, &[0]));
    }
    out
}

/// Everything that identifies a result across runs.
type Key = (
    String,
    String,
    String,
    u64,
    u64,
    u64,
    String,
    Option<String>,
    String,
);

fn key(m: &Measure) -> Key {
    (
        m.mode.clone(),
        m.workload.clone(),
        m.op.clone(),
        m.size,
        m.batch,
        m.cpus,
        m.allocator.clone(),
        m.variant.clone(),
        m.metric.clone(),
    )
}

fn key_text(m: &Measure) -> String {
    format!(
        "{} {} {} size={} batch={} cpus={} {} {}",
        m.mode,
        m.workload,
        m.op,
        m.size,
        m.batch,
        m.cpus,
        m.series(),
        m.metric
    )
}

/// Run B against run A, point by point: ratio B/A and % difference.
pub fn compare(a: &Bench, a_name: &str, b: &Bench, b_name: &str) -> String {
    // The model's event counts stay out: cycles_per_op and instr_per_op
    // say whether a point changed, the events sections of `table` why.
    fn shown(r: &Bench) -> Vec<&Measure> {
        r.results.iter().filter(|m| !is_event(&m.metric)).collect()
    }
    let (a_shown, b_shown) = (shown(a), shown(b));
    let in_b: HashMap<Key, &Measure> = b_shown.iter().map(|m| (key(m), *m)).collect();
    let in_a: HashMap<Key, &Measure> = a_shown.iter().map(|m| (key(m), *m)).collect();
    let mut out = format!(
        "A: {a_name} ({})\nB: {b_name} ({})\n{LEGEND}; base = A\n",
        run_name(a),
        run_name(b)
    );
    let profile = |r: &Bench| r.meta.get("profile").cloned();
    if let (Some(pa), Some(pb)) = (profile(a), profile(b)) {
        if pa != pb {
            out.push_str(&format!(
                "cost model: A priced by profile {pa}, B by {pb}: cycles_per_op differ by \
                 their prices too\n"
            ));
        }
    }
    let both = a_shown
        .iter()
        .copied()
        .filter(|m| in_b.contains_key(&key(m)));
    for sec in sections(both) {
        let mut grid = vec![[
            "op",
            "size",
            "batch",
            "cpus",
            "allocator",
            "A",
            "B",
            "B/A",
            "diff",
        ]
        .map(String::from)
        .to_vec()];
        for &x in &sec {
            let y = in_b[&key(x)];
            grid.push(vec![
                x.op.clone(),
                x.size.to_string(),
                x.batch.to_string(),
                x.cpus.to_string(),
                x.series(),
                fmt_value(&x.metric, x.median),
                fmt_value(&y.metric, y.median),
                ratio(y.median, x.median),
                diff(y, x),
            ]);
        }
        out.push('\n');
        out.push_str(&section_title(sec[0]));
        out.push('\n');
        out.push_str(&render(&grid, &[0, 4]));
    }
    for (name, side, other) in [("A", &a_shown, &in_b), ("B", &b_shown, &in_a)] {
        let only: Vec<String> = side
            .iter()
            .copied()
            .filter(|m| !other.contains_key(&key(m)))
            .map(key_text)
            .collect();
        if !only.is_empty() {
            out.push_str(&format!("\nonly in {name}:\n"));
            for k in only {
                out.push_str(&format!("  {k}\n"));
            }
        }
    }
    out
}

/// The verdict a ratio to the baseline calls: dearer (>1), cheaper (<1),
/// or none when its rounds overlap the baseline's (`Measure::differs_from`).
fn called(x: &Measure, base: &Measure) -> &'static str {
    match (x.differs_from(base), x.median > base.median) {
        (false, _) => "even",
        (true, true) => "dearer",
        (true, false) => "cheaper",
    }
}

/// Run B against run A by their ratios: each allocator's ratio to the
/// baseline (the in-tree SLUB, or the classic one in a two-kernel run) at
/// each point both runs have, in A and in B, and whether the verdict it
/// calls (dearer, cheaper, or even: round ranges overlapping) changed. For
/// a change of instrument on the same code (make bench with rep strings
/// counted per iteration, then folded into one instruction): which
/// verdicts the instrument moved. Rows whose verdict changed sign are
/// marked `FLIP`, those that moved between a call and even `~`; both are
/// counted at the end.
pub fn compare_ratios(a: &Bench, a_name: &str, b: &Bench, b_name: &str) -> String {
    let base_of = |r: &Bench| {
        if r.results.iter().any(|m| m.allocator == CLASSIC) {
            CLASSIC
        } else {
            "slub"
        }
    };
    let (base_a, base_b) = (base_of(a), base_of(b));
    let index = |r: &Bench| -> HashMap<Key, Measure> {
        r.results
            .iter()
            .filter(|m| !is_event(&m.metric) && m.mode != "counters")
            .map(|m| (key(m), m.clone()))
            .collect()
    };
    let (ia, ib) = (index(a), index(b));
    let rebase = |m: &Measure, base: &str| {
        let mut k = key(m);
        k.6 = base.to_string();
        k.7 = None;
        k
    };
    let mut out = format!(
        "A: {a_name} ({})\nB: {b_name} ({})\nratio = allocator / baseline (medians); verdict: \
         dearer or cheaper when the round ranges do not overlap, else even\n",
        run_name(a),
        run_name(b)
    );
    let (mut flips, mut evens, mut rows) = (0, 0, 0);
    let shown: Vec<&Measure> = a
        .results
        .iter()
        .filter(|m| !is_event(&m.metric) && m.mode != "counters" && m.allocator != base_a)
        .filter(|m| ib.contains_key(&key(m)))
        .collect();
    for sec in sections(shown.into_iter()) {
        let mut grid = vec![[
            "op", "size", "batch", "cpus", "series", "A ratio", "B ratio", "change", "A", "B", "",
        ]
        .map(String::from)
        .to_vec()];
        for &x in &sec {
            let y = &ib[&key(x)];
            let (Some(xa), Some(yb)) = (ia.get(&rebase(x, base_a)), ib.get(&rebase(y, base_b)))
            else {
                continue;
            };
            if xa.median == 0.0 || yb.median == 0.0 {
                continue;
            }
            let (ra, rb) = (x.median / xa.median, y.median / yb.median);
            let (va, vb) = (called(x, xa), called(y, yb));
            // A sign flip: dearer against cheaper; a call made or lost
            // (against even) is marked apart.
            let flip = va != vb && va != "even" && vb != "even";
            let moved = va != vb && !flip;
            rows += 1;
            flips += usize::from(flip);
            evens += usize::from(moved);
            grid.push(vec![
                x.op.clone(),
                x.size.to_string(),
                x.batch.to_string(),
                x.cpus.to_string(),
                x.series(),
                format!("{ra:.3}"),
                format!("{rb:.3}"),
                format!("{:+.1}%", (rb / ra - 1.0) * 100.0),
                va.into(),
                vb.into(),
                match (flip, moved) {
                    (true, _) => "FLIP".into(),
                    (_, true) => "~".into(),
                    _ => String::new(),
                },
            ]);
        }
        if grid.len() > 1 {
            out.push('\n');
            out.push_str(&section_title(sec[0]));
            out.push('\n');
            out.push_str(&render(&grid, &[0, 4, 8, 9, 10]));
        }
    }
    out.push_str(&format!(
        "\n{rows} ratios: {flips} verdicts changed sign (FLIP), {evens} changed between a call \
         and even (~)\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(alloc: &str, rounds: &[f64]) -> Measure {
        let (median, min, max) = crate::model::summarize(rounds);
        Measure {
            workload: "remote".into(),
            op: "object".into(),
            size: 64,
            batch: 16,
            cpus: 2,
            allocator: alloc.into(),
            variant: None,
            mode: "model".into(),
            metric: "cycles_per_op".into(),
            rounds: rounds.to_vec(),
            median,
            min,
            max,
        }
    }

    fn bench(slub: &[f64], rslub: &[f64]) -> Bench {
        Bench {
            meta: Default::default(),
            results: vec![m("slub", slub), m("rslub", rslub)],
        }
    }

    #[test]
    fn ratios_mark_a_sign_change_and_a_lost_call_apart() {
        // Cheaper in A; dearer in B: a flip.
        let a = bench(&[100.0, 101.0], &[90.0, 91.0]);
        let b = bench(&[100.0, 101.0], &[150.0, 151.0]);
        let out = compare_ratios(&a, "a", &b, "b");
        assert!(out.contains("0.900") && out.contains("1.498"), "{out}");
        assert!(out.contains("cheaper  dearer  FLIP\n"), "{out}");
        assert!(
            out.ends_with(
                "1 ratios: 1 verdicts changed sign (FLIP), 0 changed between a call and even (~)\n"
            ),
            "{out}"
        );
        // Cheaper in A; rounds overlapping in B: a call lost, not a flip.
        let c = bench(&[100.0, 110.0], &[105.0, 106.0]);
        let out = compare_ratios(&a, "a", &c, "c");
        assert!(out.contains("cheaper  even  ~\n"), "{out}");
        assert!(
            out.ends_with(
                "0 verdicts changed sign (FLIP), 1 changed between a call and even (~)\n"
            ),
            "{out}"
        );
    }
    #[test]
    fn a_two_kernel_table_hides_the_aa_columns_and_judges_the_kernels() {
        let mut b = Bench::default();
        for (alloc, v) in [
            ("classic", 100.0),
            ("classic-aa", 101.0),
            ("sheaves", 130.0),
            ("sheaves-aa", 129.0),
            ("rslub", 98.0),
        ] {
            let mut x = m(alloc, &[v, v]);
            x.workload = "real".into();
            x.op = "brk1".into();
            x.metric = "minstr".into();
            b.results.push(x);
        }
        let out = table(&b, "t");
        let head = out.lines().find(|l| l.starts_with("op ")).unwrap();
        assert!(
            head.contains("classic") && head.contains("sheaves"),
            "{out}"
        );
        assert!(!head.contains("-aa"), "{out}");
        assert!(out.contains("classic against sheaves"), "{out}");
        assert!(out.contains("sheaves dearer"), "{out}");
    }
}
