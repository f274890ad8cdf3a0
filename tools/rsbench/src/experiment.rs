// SPDX-License-Identifier: GPL-2.0
//! The seeds' experiments on real programs (`make bench SUITE=real
//! EXPERIMENT=...`): each side of an experiment against plain rslub, called
//! only outside the noise two runs of the same thing show.
//!
//! An experiment's results are rslub's with a variant: `build=B:KNOBS`
//! (B the rslub.ko build, `default` or a build variant such as `fill_ge`;
//! KNOBS the tunables written to every served cache, `cpu_partial=0`),
//! `build=default` alone being plain rslub, the base. Two floors:
//!
//! - the A/A noise: rslub run twice in the default build's boot (side
//!   `aa`, `rslub-aa`), the largest `|aa / rslub - 1|` of a round pair
//!   (`aa::noise`);
//! - the boots' difference, for a build variant only: its side ran in
//!   boots of its own, whose in-tree SLUB (`slub-B`) is the same allocator
//!   as the default boot's `slub`, so `|slub-B / slub - 1|` (medians) is how
//!   far two boots differ with nothing changed.
//!
//! A side is called dearer or cheaper than rslub only when its ratio lies
//! farther from 1 than the larger floor. On the cost model the judged
//! metric is the makespan (`ev_span_per_op`), elsewhere the run's own
//! metric; the two events that differ most name the mechanism.

use crate::aa::{noise, AA};
use crate::glance::{fig, md_row, EVENTS};
use crate::model::{Bench, Measure};
use std::fmt::Write;

/// The variant of plain rslub in an experiment run.
const BASE: &str = "build=default";

/// An experiment side's variant split into its build and its tunables.
struct Side<'a> {
    build: &'a str,
    knobs: &'a str,
}

fn split(variant: &str) -> Side<'_> {
    let (build, knobs) = match variant.strip_prefix("build=") {
        Some(rest) => rest.split_once(':').unwrap_or((rest, "")),
        None => ("default", variant),
    };
    let knobs = if knobs == "default" { "" } else { knobs };
    Side { build, knobs }
}

/// The experiment a side belongs to, by the names `make bench
/// EXPERIMENT=` takes; None for the base.
fn experiment_of(variant: &str) -> Option<&'static str> {
    let s = split(variant);
    match (s.build, s.knobs) {
        ("default", "") => None,
        ("fill_ge", _) => Some("fill"),
        ("locked_cmpxchg", _) => Some("cmpxchg"),
        ("free_batch", _) => Some("free-batch"),
        (_, k) if k.starts_with("cpu_partial") => Some("cpu-partial"),
        (_, k) if k.starts_with("max_empty") => Some("max-empty"),
        _ => Some("other"),
    }
}

/// What a side is, for a reader.
fn side_name(variant: &str) -> String {
    let s = split(variant);
    match (s.build, s.knobs) {
        ("default", k) => k.to_string(),
        (b, "") => format!("{b} build"),
        (b, k) => format!("{b} build, {k}"),
    }
}

/// One side judged at one point.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub experiment: &'static str,
    pub program: String,
    pub cpus: u64,
    pub side: String,
    /// rslub's median.
    pub base: f64,
    /// The side's median over rslub's.
    pub ratio: f64,
    pub aa_noise: f64,
    /// The boots' difference (build variants; None in the default boot).
    pub boot_noise: Option<f64>,
    pub rounds: usize,
    /// The two events that differ most, in words.
    pub events: String,
}

impl Row {
    pub fn floor(&self) -> f64 {
        self.aa_noise.max(self.boot_noise.unwrap_or(0.0))
    }

    pub fn verdict(&self) -> &'static str {
        match ((self.ratio - 1.0).abs() > self.floor(), self.ratio > 1.0) {
            (false, _) => "within noise",
            (true, true) => "dearer",
            (true, false) => "cheaper",
        }
    }
}

fn at<'a>(
    b: &'a Bench,
    like: &Measure,
    alloc: &str,
    variant: &str,
    metric: &str,
) -> Option<&'a Measure> {
    b.results.iter().find(|m| {
        m.allocator == alloc
            && m.metric == metric
            && m.mode == like.mode
            && m.workload == like.workload
            && m.op == like.op
            && m.cpus == like.cpus
            && m.variant.as_deref().unwrap_or("-") == variant
    })
}

/// The two events that differ most between a side and rslub (5 % or
/// more, events of at least 0.01 an operation).
fn what_differs(b: &Bench, like: &Measure, variant: &str) -> String {
    let sum = |v: &str, metrics: &[&str]| {
        metrics
            .iter()
            .filter_map(|m| at(b, like, "rslub", v, m).map(|x| x.median))
            .reduce(|a, x| a + x)
    };
    let mut v: Vec<(f64, String)> = EVENTS
        .iter()
        .filter_map(|(label, metrics)| {
            let base = sum(BASE, metrics)?;
            let side = sum(variant, metrics)?;
            if base.max(side) < 0.01 || base <= 0.0 || side <= 0.0 {
                return None;
            }
            let r = side / base;
            (r.ln().abs() > 0.05_f64.ln_1p()).then(|| (r.ln().abs(), format!("{label} {r:.2}x")))
        })
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    v.into_iter()
        .take(2)
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every experiment side of a run judged against rslub, in the run's order.
pub fn rows(b: &Bench) -> Vec<Row> {
    let on_model = b.results.iter().any(|m| m.metric == "ev_span_per_op");
    let judged = |metric: &str| {
        if on_model {
            metric == "ev_span_per_op"
        } else {
            !crate::model::is_event(metric) && metric != "slab_kb"
        }
    };
    let mut out = Vec::new();
    for base in b.results.iter().filter(|m| {
        m.allocator == "rslub"
            && m.workload == "real"
            && m.variant.as_deref() == Some(BASE)
            && judged(&m.metric)
    }) {
        let Some(aa) = at(b, base, AA, BASE, &base.metric) else {
            continue;
        };
        let Some(aa_noise) = noise(base, aa) else {
            continue;
        };
        for side in b.results.iter().filter(|m| {
            m.allocator == "rslub"
                && m.metric == base.metric
                && m.mode == base.mode
                && m.op == base.op
                && m.cpus == base.cpus
                && m.variant.as_deref().is_some_and(|v| v != BASE)
        }) {
            let variant = side.variant.as_deref().unwrap_or("-");
            let Some(experiment) = experiment_of(variant) else {
                continue;
            };
            let build = split(variant).build;
            let boot_noise = if build == "default" {
                None
            } else {
                let slub = at(b, base, "slub", "-", &base.metric);
                let other = at(b, base, &format!("slub-{build}"), "-", &base.metric);
                match (slub, other) {
                    (Some(s), Some(o)) if s.median > 0.0 => Some((o.median / s.median - 1.0).abs()),
                    // A build variant without its boot's in-tree SLUB
                    // cannot be told from a boot's difference: not judged.
                    _ => continue,
                }
            };
            if base.median <= 0.0 {
                continue;
            }
            out.push(Row {
                experiment,
                program: base.op.clone(),
                cpus: base.cpus,
                side: side_name(variant),
                base: base.median,
                ratio: side.median / base.median,
                aa_noise,
                boot_noise,
                rounds: side.rounds.len().min(base.rounds.len()),
                events: what_differs(b, base, variant),
            });
        }
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The section of a run's table (`rsbench table`); empty without
/// experiment sides.
pub fn section(b: &Bench) -> String {
    let rows = rows(b);
    if rows.is_empty() {
        return String::new();
    }
    let mut grid = vec![[
        "experiment",
        "program",
        "cpus",
        "side",
        "side/rslub",
        "A/A",
        "boots",
        "rounds",
        "verdict",
        "events (side/rslub)",
    ]
    .map(String::from)
    .to_vec()];
    for r in &rows {
        grid.push(vec![
            r.experiment.to_string(),
            r.program.clone(),
            r.cpus.to_string(),
            r.side.clone(),
            format!("{:.3}", r.ratio),
            pct(r.aa_noise),
            r.boot_noise.map_or("-".into(), pct),
            r.rounds.to_string(),
            r.verdict().to_string(),
            r.events.clone(),
        ]);
    }
    let mut out = String::from(
        "\nexperiments: each side against rslub (build=default), called only outside the \
         larger of rslub's A/A noise and, for a build variant, the boots' difference \
         (|slub-<build>/slub - 1|)\n",
    );
    out.push_str(&crate::table::render(&grid, &[0, 1, 3, 8, 9]));
    out
}

/// The experiments of runs as Markdown, one table an experiment
/// (`rsbench experiment`), for docs/benchmarks.md.
pub fn markdown(runs: &[(String, Bench)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!-- generated: rsbench experiment {} -->",
        runs.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut all: Vec<Row> = Vec::new();
    for (name, b) in runs {
        let meta = |k: &str| b.meta.get(k).map(String::as_str).unwrap_or("?");
        let _ = writeln!(
            out,
            "- {name}: `EXPERIMENT={}`, {} (git {}, {}; rounds {})",
            meta("experiment"),
            meta("cpus"),
            meta("git"),
            meta("date"),
            meta("rounds")
        );
        all.extend(rows(b));
    }
    if all.is_empty() {
        out.push_str("\nno experiment sides with an A/A side in these runs\n");
        return out;
    }
    let on_model = runs
        .iter()
        .any(|(_, b)| b.results.iter().any(|m| m.metric == "ev_span_per_op"));
    let unit = if on_model {
        "rslub's makespan an operation (modeled kilocycles)"
    } else {
        "rslub's figure"
    };
    let mut names: Vec<&str> = all.iter().map(|r| r.experiment).collect();
    names.dedup();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let _ = writeln!(out, "\n`{name}`:\n");
        md_row(
            &mut out,
            &[
                "program",
                "vCPUs",
                "side",
                unit,
                "side / rslub",
                "floor (A/A, boots)",
                "verdict",
                "events, side / rslub",
            ]
            .map(String::from),
        );
        md_row(
            &mut out,
            &["---", "---:", "---", "---:", "---:", "---:", "---", "---"].map(String::from),
        );
        let mut rows: Vec<&Row> = all.iter().filter(|r| r.experiment == name).collect();
        rows.sort_by(|a, b| (a.cpus, &a.program, &a.side).cmp(&(b.cpus, &b.program, &b.side)));
        for r in rows {
            let floor = match r.boot_noise {
                Some(bn) => format!("{} ({}, {})", pct(r.floor()), pct(r.aa_noise), pct(bn)),
                None => pct(r.aa_noise),
            };
            md_row(
                &mut out,
                &[
                    r.program.clone(),
                    r.cpus.to_string(),
                    r.side.clone(),
                    fig(r.base),
                    format!("{:.3}", r.ratio),
                    floor,
                    r.verdict().to_string(),
                    r.events.clone(),
                ],
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(alloc: &str, variant: &str, metric: &str, rounds: &[f64]) -> Measure {
        let (median, min, max) = crate::model::summarize(rounds);
        Measure {
            workload: "real".into(),
            op: "hb-proc-sock".into(),
            size: 0,
            batch: 1,
            cpus: 8,
            allocator: alloc.into(),
            variant: Some(variant.into()),
            mode: "model".into(),
            metric: metric.into(),
            rounds: rounds.to_vec(),
            median,
            min,
            max,
        }
    }

    const SPAN: &str = "ev_span_per_op";

    fn run(extra: Vec<Measure>) -> Bench {
        let mut results = vec![
            m("slub", "-", SPAN, &[100.0, 100.0, 100.0]),
            m("rslub", BASE, SPAN, &[100.0, 101.0, 100.0]),
            m(AA, BASE, SPAN, &[102.0, 101.0, 100.0]),
        ];
        results.extend(extra);
        Bench {
            meta: Default::default(),
            results,
        }
    }

    #[test]
    fn a_tunable_is_called_only_outside_the_aa_noise() {
        let b = run(vec![
            m(
                "rslub",
                "build=default:cpu_partial=0",
                SPAN,
                &[110.0, 111.0, 110.0],
            ),
            m(
                "rslub",
                "build=default:max_empty=0",
                SPAN,
                &[101.0, 101.0, 101.5],
            ),
        ]);
        let rows = rows(&b);
        assert_eq!(rows.len(), 2);
        let cp = rows.iter().find(|r| r.experiment == "cpu-partial").unwrap();
        assert!((cp.aa_noise - 0.02).abs() < 1e-9, "{cp:?}");
        assert_eq!(cp.boot_noise, None);
        assert_eq!(cp.verdict(), "dearer");
        let me = rows.iter().find(|r| r.experiment == "max-empty").unwrap();
        assert_eq!(me.side, "max_empty=0");
        assert_eq!(me.verdict(), "within noise");
    }

    #[test]
    fn a_build_variant_must_beat_the_boots_difference_too() {
        // 4 % cheaper, outside the A/A noise (2 %) but not outside the
        // boots' difference (the same in-tree SLUB 5 % apart).
        let b = run(vec![
            m("rslub", "build=fill_ge", SPAN, &[96.0, 96.0, 96.0]),
            m("slub-fill_ge", "-", SPAN, &[95.0, 95.0, 95.0]),
        ]);
        let r = &rows(&b)[0];
        assert_eq!(r.experiment, "fill");
        assert_eq!(r.side, "fill_ge build");
        assert!((r.boot_noise.unwrap() - 0.05).abs() < 1e-9, "{r:?}");
        assert_eq!(r.verdict(), "within noise");
        // Without its boot's in-tree SLUB a build variant is not judged.
        let b = run(vec![m("rslub", "build=fill_ge", SPAN, &[80.0, 80.0, 80.0])]);
        assert!(rows(&b).is_empty());
    }

    #[test]
    fn sides_name_their_build_and_knobs_and_the_markdown_has_a_table_each() {
        assert_eq!(
            side_name("build=free_batch:free_batch=8"),
            "free_batch build, free_batch=8"
        );
        assert_eq!(
            experiment_of("build=free_batch:free_batch=8"),
            Some("free-batch")
        );
        assert_eq!(experiment_of("cpu_partial=0"), Some("cpu-partial"));
        assert_eq!(experiment_of(BASE), None);
        let b = run(vec![
            m(
                "rslub",
                "build=default:cpu_partial=0",
                SPAN,
                &[90.0, 90.0, 90.0],
            ),
            m(
                "rslub",
                "build=locked_cmpxchg",
                SPAN,
                &[100.0, 100.0, 100.0],
            ),
            m("slub-locked_cmpxchg", "-", SPAN, &[100.0, 100.0, 100.0]),
        ]);
        let md = markdown(&[("r".into(), b)]);
        assert!(md.contains("\n`cpu-partial`:\n"), "{md}");
        assert!(md.contains("\n`cmpxchg`:\n"), "{md}");
        assert!(md.contains("| cheaper |"), "{md}");
    }
}
