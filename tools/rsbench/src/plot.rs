// SPDX-License-Identifier: GPL-2.0
//! PNG plots of one run and a report.md that embeds them. Three kinds:
//! the cost of an operation against object size (log2 axis), throughput of
//! the parallel workload against CPUs, and the slab pages churn leaves
//! behind against object size. The cost model's modeled cycles are a cost
//! like the others; its event counts are not drawn. Text is drawn with ab_glyph from a TTF file
//! read at run time, so no fontconfig or freetype is needed.

use crate::model::{is_event, metric_desc, mode_desc, Bench, Measure};
use crate::table::CLASSIC;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

/// The default font: Debian's fonts-dejavu-core. RSBENCH_FONT overrides it.
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Distinct, print-friendly line colors (matplotlib's tab10).
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

enum XAxis {
    /// Object size in bytes, drawn as log2.
    Size,
    /// CPU count, linear.
    Cpus,
}

struct Line {
    label: String,
    points: Vec<(f64, f64)>,
}

/// One PNG to draw and how report.md describes it.
struct Chart {
    file: String,
    title: String,
    caption: String,
    x: XAxis,
    y_desc: String,
    lines: Vec<Line>,
}

fn load_font() -> Result<(), String> {
    let path = std::env::var("RSBENCH_FONT").unwrap_or_else(|_| FONT.to_string());
    let bytes = std::fs::read(&path).map_err(|e| {
        format!(
            "cannot read the plot font {path} ({e}): install the Debian package \
             fonts-dejavu-core, or set RSBENCH_FONT to a .ttf file"
        )
    })?;
    // plotters keeps fonts for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
        .map_err(|_| format!("{path} is not a usable TrueType font"))
}

/// Groups `items` by `key`, in first-seen order.
fn group_by<'a, K: PartialEq>(
    items: impl Iterator<Item = &'a Measure>,
    key: impl Fn(&Measure) -> K,
) -> Vec<Vec<&'a Measure>> {
    let mut out: Vec<(K, Vec<&Measure>)> = Vec::new();
    for m in items {
        let k = key(m);
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(m),
            None => out.push((k, vec![m])),
        }
    }
    out.into_iter().map(|(_, v)| v).collect()
}

fn distinct<T: PartialEq>(ms: &[&Measure], f: impl Fn(&Measure) -> T) -> Vec<T> {
    let mut out = Vec::new();
    for m in ms {
        let v = f(m);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// One line per label, points sorted by x; baselines first, references last.
fn lines(
    ms: &[&Measure],
    label: impl Fn(&Measure) -> String,
    x: impl Fn(&Measure) -> f64,
) -> Vec<Line> {
    let scale = if ms[0].metric == "ops_per_s" {
        1e-6
    } else {
        1.0
    };
    let mut out: Vec<Line> = Vec::new();
    for m in ms {
        let l = label(m);
        let p = (x(m), m.median * scale);
        match out.iter_mut().find(|x| x.label == l) {
            Some(line) => line.points.push(p),
            None => out.push(Line {
                label: l,
                points: vec![p],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    // Two kernels (make bench SUITE=classic): classic, sheaves, rslub, then
    // the floors (floor-<kernel>).
    let rank = |l: &Line| match l.label.split(' ').next() {
        Some("slub" | "classic") => 0,
        Some("rslub" | "sheaves") => 1,
        Some(f) if f == "floor" || f.starts_with("floor-") => 3,
        Some("ideal") => 4,
        _ => 2,
    };
    out.sort_by_key(rank);
    out
}

/// What a legend calls an allocator: the design a reader of the upstream
/// threads looks for, with the name the tables use in brackets. Names it
/// does not know (variants, loads, floors) are shown as they are.
fn legend_name(label: &str) -> String {
    let (first, rest) = label.split_once(' ').unwrap_or((label, ""));
    let design = match first {
        "slub" => "in-tree SLUB, sheaves",
        "sheaves" => "in-tree SLUB 7.3, sheaves",
        "classic" => "classic C SLUB 6.12",
        "rslub" => "rslub, classic design",
        "served" => "rslub serving a cache",
        "kmalloc" => "kmalloc, in-tree",
        "kserved" => "kmalloc served by rslub",
        _ => return label.to_string(),
    };
    if rest.is_empty() {
        format!("{design} ({first})")
    } else {
        format!("{design} ({first} {rest})")
    }
}

fn log2(m: &Measure) -> f64 {
    (m.size.max(1) as f64).log2()
}

fn y_desc(metric: &str) -> String {
    match metric {
        "ops_per_s" => "M operations per second".into(),
        "cycles_per_op" => "modeled cycles per operation".into(),
        m => metric_desc(m).into(),
    }
}

/// "-b16" when a group spans several values of a parameter, else nothing.
fn suffix(tag: &str, n: usize, v: impl std::fmt::Display) -> String {
    if n > 1 {
        format!("-{tag}{v}")
    } else {
        String::new()
    }
}

fn charts(b: &Bench) -> Vec<Chart> {
    let mut out = Vec::new();
    // Real workloads (bars) and counters (tables only) are not drawn here,
    // nor the cost model's events (its tables' events sections).
    let is_cost = |m: &&Measure| {
        m.metric != "pages"
            && m.metric != "ops_per_s"
            && m.mode != "counters"
            && !is_event(&m.metric)
            && m.size != 0
    };
    let profile = b.meta.get("profile").map_or("?", String::as_str);
    for g in group_by(b.results.iter().filter(is_cost), |m| {
        (
            m.mode.clone(),
            m.workload.clone(),
            m.op.clone(),
            m.metric.clone(),
        )
    }) {
        let (batches, cpus) = (distinct(&g, |m| m.batch), distinct(&g, |m| m.cpus));
        for sub in group_by(g.iter().copied(), |m| (m.batch, m.cpus)) {
            let m = sub[0];
            if distinct(&sub, |m| m.size).len() < 2 {
                continue;
            }
            let sfx = suffix("b", batches.len(), m.batch) + &suffix("c", cpus.len(), m.cpus);
            // A model run has two costs per point: its cycles are named.
            let (cycles, what) = if m.metric == "cycles_per_op" {
                ("-cycles", format!(" cycles, profile {profile}"))
            } else {
                ("", String::new())
            };
            out.push(Chart {
                file: format!("cost-{}-{}-{}{cycles}{sfx}", m.mode, m.workload, m.op),
                title: format!(
                    "{} {}: {}{what} (batch {}, {} cpus)",
                    m.workload, m.op, m.mode, m.batch, m.cpus
                ),
                caption: format!(
                    "Cost of `{}` in the `{}` workload against object size (batch {}, {} cpus), \
                     in {}{}; {}.",
                    m.op,
                    m.workload,
                    m.batch,
                    m.cpus,
                    metric_desc(&m.metric),
                    if cycles.is_empty() {
                        String::new()
                    } else {
                        format!(" with profile {profile}")
                    },
                    mode_desc(&m.mode)
                ),
                x: XAxis::Size,
                y_desc: y_desc(&m.metric),
                lines: lines(&sub, Measure::series, log2),
            });
        }
    }
    let rate = b.results.iter().filter(|m| m.metric == "ops_per_s");
    for g in group_by(rate, |m| (m.mode.clone(), m.workload.clone())) {
        let (sizes, batches) = (distinct(&g, |m| m.size), distinct(&g, |m| m.batch));
        for sub in group_by(g.iter().copied(), |m| (m.size, m.batch)) {
            let m = sub[0];
            if distinct(&sub, |m| m.cpus).len() < 2 {
                continue;
            }
            let ops = distinct(&sub, |m| m.op.clone()).len();
            let label = |m: &Measure| {
                if ops > 1 {
                    format!("{} {}", m.series(), m.op)
                } else {
                    m.series()
                }
            };
            let sfx = suffix("s", sizes.len(), m.size) + &suffix("b", batches.len(), m.batch);
            out.push(Chart {
                file: format!("scaling-{}-{}{sfx}", m.mode, m.workload),
                title: format!("{} scaling: {} (size {})", m.workload, m.mode, m.size),
                caption: format!(
                    "Throughput of the `{}` workload against the number of CPUs (size {}, \
                     batch {}), in {}; {}.",
                    m.workload,
                    m.size,
                    m.batch,
                    metric_desc(&m.metric),
                    mode_desc(&m.mode)
                ),
                x: XAxis::Cpus,
                y_desc: y_desc(&m.metric),
                lines: lines(&sub, label, |m| m.cpus as f64),
            });
        }
    }
    let pages = b.results.iter().filter(|m| m.metric == "pages");
    for g in group_by(pages, |m| (m.mode.clone(), m.workload.clone())) {
        let (batches, cpus) = (distinct(&g, |m| m.batch), distinct(&g, |m| m.cpus));
        for sub in group_by(g.iter().copied(), |m| (m.batch, m.cpus)) {
            let m = sub[0];
            let label = |m: &Measure| {
                if m.op == m.allocator {
                    m.series()
                } else {
                    format!("{} {}", m.series(), m.op)
                }
            };
            let sfx = suffix("b", batches.len(), m.batch) + &suffix("c", cpus.len(), m.cpus);
            out.push(Chart {
                file: format!("churn-{}-{}{sfx}", m.mode, m.workload),
                title: format!("{} slab pages: {}", m.workload, m.mode),
                caption: format!(
                    "Slab pages the `{}` workload leaves against object size: per allocator \
                     at each step (end, after_shrink, ...) and the ideal packing; {}.",
                    m.workload,
                    mode_desc(&m.mode)
                ),
                x: XAxis::Size,
                y_desc: y_desc(&m.metric),
                lines: lines(&sub, label, log2),
            });
        }
    }
    // Unique, file-system-safe names.
    let mut used: Vec<String> = Vec::new();
    for c in &mut out {
        let mut name: String = c
            .file
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let base = name.clone();
        let mut n = 2;
        while used.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        used.push(name.clone());
        c.file = name + ".png";
    }
    out
}

/// `shown` as an integer when `x` is a whole number, else no label.
fn whole(x: f64, shown: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{:.0}", shown)
    } else {
        String::new()
    }
}

/// Draws `c` into `path`; `labels` (every chart's, in order) gives each
/// label the same color in every chart.
fn draw(c: &Chart, path: &Path, labels: &[&str]) -> Result<(), Box<dyn Error>> {
    let root = BitMapBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let ymax = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    // Headroom above the highest point for the legend.
    let ymax = if ymax > 0.0 { ymax * 1.35 } else { 1.0 };
    // Labels only at whole numbers: powers of two for sizes, CPU counts.
    let (range, label): (_, fn(&f64) -> String) = match c.x {
        XAxis::Size => {
            // The usual kmalloc range, 8..16384, widened to the data.
            let (lo, hi) = (xmin.min(3.0).floor(), xmax.max(14.0).ceil());
            (lo - 0.3..hi + 0.3, |x| whole(*x, x.exp2()))
        }
        XAxis::Cpus => (xmin - 0.5..xmax + 0.5, |x| whole(*x, *x)),
    };
    let nlabels = (range.end - range.start).ceil() as usize + 1;
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(range, 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc(match c.x {
            XAxis::Size => "object size (bytes, log2 scale)",
            XAxis::Cpus => "CPUs",
        })
        .y_desc(&c.y_desc)
        .light_line_style(TRANSPARENT)
        .x_labels(nlabels)
        .x_label_formatter(&label)
        .y_label_formatter(&|y| {
            if *y == y.round() {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    for l in &c.lines {
        let i = labels.iter().position(|x| *x == l.label).unwrap_or(0);
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(l.points.clone(), color.stroke_width(2)))?
            .label(legend_name(&l.label))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
            });
        chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present()?;
    Ok(())
}

/// A bar chart of the real workloads (make bench SUITE=real): per program,
/// each allocator's median relative to the in-tree SLUB's, with the range
/// of its rounds.
struct Bars {
    file: String,
    title: String,
    caption: String,
    ops: Vec<String>,
    /// Per allocator, per program: its bar.
    series: Vec<(String, Vec<Bar>)>,
    /// The y axis: what the bars are relative to.
    y_desc: String,
}

/// (median, min, max) / the base's median; None where either is missing.
type Bar = Option<(f64, f64, f64)>;

fn bars(b: &Bench) -> Vec<Bars> {
    // The model's event counts are not drawn (the table sums them).
    let real = b
        .results
        .iter()
        .filter(|m| m.workload == "real" && m.mode != "counters" && !is_event(&m.metric));
    let mut out = Vec::new();
    for g in group_by(real, |m| (m.mode.clone(), m.metric.clone())) {
        let ops = distinct(&g, |m| m.op.clone());
        // A two-kernel run (SUITE=classic-real) against the classic SLUB,
        // without its A/A series (the table judges them).
        let kernels = g.iter().any(|m| m.allocator == CLASSIC);
        let (base_name, base_desc) = if kernels {
            (CLASSIC, "the classic SLUB's (6.12)")
        } else {
            ("slub", "the in-tree SLUB's")
        };
        let base = |op: &str| {
            g.iter()
                .find(|m| m.op == op && m.allocator == base_name)
                .map(|m| m.median)
                .filter(|v| *v != 0.0)
        };
        let mut series = Vec::new();
        for name in distinct(&g, Measure::series) {
            if kernels && crate::aa::aa_of(&name).is_some() {
                continue;
            }
            let vals = ops
                .iter()
                .map(|op| {
                    let m = g.iter().find(|m| &m.op == op && m.series() == name)?;
                    let b = base(op)?;
                    Some((m.median / b, m.min / b, m.max / b))
                })
                .collect();
            series.push((name, vals));
        }
        // Baseline first.
        series.sort_by_key(|(n, _)| n != base_name);
        if series.len() < 2 || !series.iter().any(|(n, _)| n == base_name) {
            continue;
        }
        let (mode, metric) = (&g[0].mode, &g[0].metric);
        let against = if kernels {
            "classic SLUB"
        } else {
            "in-tree SLUB"
        };
        out.push(Bars {
            file: format!("real-{mode}-{metric}.png"),
            title: format!("real workloads: {metric}, {mode} (relative to {against})"),
            caption: format!(
                "Each program's {} relative to {base_desc} (1.0); bars are \
                 medians, whiskers the range of the rounds (the axis does not start \
                 at 0); {}.",
                metric_desc(metric),
                mode_desc(mode)
            ),
            ops,
            series,
            y_desc: format!("relative to {against} ({base_name} = 1.0)"),
        });
    }
    out
}

fn draw_bars(c: &Bars, path: &Path) -> Result<(), Box<dyn Error>> {
    let n = c.ops.len();
    let width = bars_width(&c.ops);
    let root = BitMapBackend::new(path, (width, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = c
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().map(|p| p.2))
        .fold(1.0, f64::max)
        * 1.25;
    // Zoomed on 1.0 (differences of a few % must show): from a little
    // under the lowest round, at most 0.9.
    let lo = c
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().map(|p| p.1))
        .fold(1.0, f64::min);
    let ymin = (((lo - 0.05).min(0.9) / 0.05).floor() * 0.05).max(0.0);
    let ops = c.ops.clone();
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, ymin..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < ops.len() {
                ops[i as usize].clone()
            } else {
                String::new()
            }
        })
        .y_desc(c.y_desc.as_str())
        .y_label_formatter(&|y| format!("{y:.2}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    chart.draw_series(LineSeries::new(
        vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
        BLACK.mix(0.5),
    ))?;
    let k = c.series.len() as f64;
    let w = 0.8 / k;
    for (j, (name, vals)) in c.series.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        let x0 = |i: usize| i as f64 - 0.4 + j as f64 * w;
        chart
            .draw_series(vals.iter().enumerate().filter_map(|(i, v)| {
                v.map(|(med, _, _)| {
                    Rectangle::new(
                        [(x0(i) + 0.01, ymin), (x0(i) + w - 0.01, med)],
                        color.filled(),
                    )
                })
            }))?
            .label(legend_name(name))
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.filled()));
        chart.draw_series(vals.iter().enumerate().filter_map(|(i, v)| {
            v.map(|(_, lo, hi)| {
                let xm = x0(i) + w / 2.0;
                PathElement::new(vec![(xm, lo), (xm, hi)], BLACK.stroke_width(2))
            })
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    root.present()?;
    Ok(())
}

/// The bar chart's width in pixels: each program's slot as wide as its
/// name at the label font (about 8.5 px a character at 14 px) and a gap,
/// so that names never run into each other; at least 960.
fn bars_width(ops: &[String]) -> u32 {
    let longest = ops.iter().map(|o| o.chars().count()).max().unwrap_or(0);
    let slot = (longest as f64 * 8.5 + 24.0).max(60.0);
    ((slot * ops.len() as f64) as u32 + 140).max(960)
}

/// Draws every chart into `dir` and writes dir/report.md around them and
/// the terminal table. Returns the files written.
pub fn plot(b: &Bench, dir: &Path, table: &str) -> Result<Vec<PathBuf>, String> {
    load_font()?;
    let mut written = Vec::new();
    let mut md = String::from("# rslub benchmark report\n\n| meta | value |\n|---|---|\n");
    for (k, v) in &b.meta {
        md.push_str(&format!("| {k} | {v} |\n"));
    }
    md.push_str(&format!("\n## Table\n\n```text\n{table}```\n\n## Plots\n"));
    let charts = charts(b);
    let bars = bars(b);
    if charts.is_empty() && bars.is_empty() {
        md.push_str("\nNo result spans several sizes or CPU counts: nothing to plot.\n");
    }
    let mut labels: Vec<&str> = Vec::new();
    for l in charts.iter().flat_map(|c| &c.lines) {
        if !labels.contains(&l.label.as_str()) {
            labels.push(&l.label);
        }
    }
    for c in &charts {
        let path = dir.join(&c.file);
        draw(c, &path, &labels).map_err(|e| format!("{}: {e}", path.display()))?;
        md.push_str(&format!("\n![{}]({})\n\n{}\n", c.title, c.file, c.caption));
        written.push(path);
    }
    for c in &bars {
        let path = dir.join(&c.file);
        draw_bars(c, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        md.push_str(&format!("\n![{}]({})\n\n{}\n", c.title, c.file, c.caption));
        written.push(path);
    }
    let report = dir.join("report.md");
    std::fs::write(&report, md).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    written.push(report);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legends_name_the_designs_and_keep_the_table_names() {
        assert_eq!(legend_name("slub"), "in-tree SLUB, sheaves (slub)");
        assert_eq!(legend_name("rslub"), "rslub, classic design (rslub)");
        assert_eq!(legend_name("classic"), "classic C SLUB 6.12 (classic)");
        assert_eq!(
            legend_name("kserved s64"),
            "kmalloc served by rslub (kserved s64)"
        );
        // Variants, loads and floors as the tables name them.
        assert_eq!(legend_name("rslub[fill_ge]"), "rslub[fill_ge]");
        assert_eq!(legend_name("floor-7.3"), "floor-7.3");
    }

    #[test]
    fn bar_slots_are_as_wide_as_the_longest_program_name() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(bars_width(&names(&["a", "b"])), 960);
        // 12 programs of 14 characters: 12 * (14 * 8.5 + 24) + 140.
        let many = names(&["stress-ng-sock"; 12]);
        assert_eq!(bars_width(&many), 12 * 143 + 140);
    }
    #[test]
    fn real_bars_skip_event_counts_and_two_kernel_aa_series() {
        let m = |alloc: &str, metric: &str, v: f64| Measure {
            workload: "real".into(),
            op: "brk1".into(),
            size: 0,
            batch: 1,
            cpus: 2,
            allocator: alloc.into(),
            variant: None,
            mode: "model".into(),
            metric: metric.into(),
            rounds: vec![v],
            median: v,
            min: v,
            max: v,
        };
        let mut b = Bench::default();
        for metric in ["minstr", "ev_span_per_op"] {
            for (alloc, v) in [("classic", 10.0), ("classic-aa", 11.0), ("sheaves", 12.0)] {
                b.results.push(m(alloc, metric, v));
            }
        }
        let bars = bars(&b);
        assert_eq!(bars.len(), 1);
        assert_eq!(bars[0].file, "real-model-minstr.png");
        let names: Vec<&str> = bars[0].series.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["classic", "sheaves"]);
        assert_eq!(bars[0].series[1].1[0], Some((1.2, 1.2, 1.2)));
        assert!(
            bars[0].y_desc.contains("classic = 1.0"),
            "{}",
            bars[0].y_desc
        );
    }
}
