// SPDX-License-Identifier: GPL-2.0
//! `rsbench glance`: the main rows of classic, sheaves and rslub from saved
//! runs, as a Markdown table for docs/benchmarks.md ("At a glance"), so
//! that the document's figures come from runs, not from a hand.
//!
//! Two kinds of run give rows. A two-kernel synthetic run (`make bench
//! SUITE=classic`) gives the allocator's own rows at 64 bytes: cycles per
//! operation of sheaves, and classic and rslub against it. A two-kernel
//! real-program run (`make bench SUITE=classic-real`) gives one row per
//! program and CPU count: the makespan per operation (on the model; the
//! instructions elsewhere), sheaves against classic called only outside
//! the A/A noise (`aa::judge_kernels`), rslub against classic beside it,
//! and the events that differ most between the two kernels.

use crate::aa::{judge_kernels, AA_SUFFIX, SHEAVES};
use crate::model::{Bench, Measure};
use crate::table::CLASSIC;
use std::fmt::Write;

/// The synthetic rows, in order: (workload, op, batch, what a reader
/// calls it).
const SYNTHETIC: [(&str, &str, u64, &str); 5] = [
    ("pair", "pair", 1, "alloc + free"),
    ("repeat", "free", 1, "repeat free"),
    ("bulk", "object", 16, "bulk 16, an object"),
    ("remote", "object", 16, "remote free, an object"),
    ("parallel", "pair", 1, "parallel pairs, all CPUs"),
];

/// The events a real row names when they differ, as (label, metrics
/// summed).
pub(crate) const EVENTS: [(&str, &[&str]); 5] = [
    ("instructions", &["ev_insns_per_op"]),
    (
        "transfers",
        &["ev_xfer_local_per_op", "ev_xfer_remote_per_op"],
    ),
    ("DRAM", &["ev_dram_local_per_op", "ev_dram_remote_per_op"]),
    ("locked atomics", &["ev_locked_per_op"]),
    ("waiting", &["ev_wait_per_op"]),
];

/// `alloc`'s `metric` at the point of `like`: as built, or its default
/// build in a run of several (`build=default`).
fn find<'a>(b: &'a Bench, like: &Measure, alloc: &str, metric: &str) -> Option<&'a Measure> {
    b.results.iter().find(|m| {
        m.allocator == alloc
            && m.metric == metric
            && m.mode == like.mode
            && m.workload == like.workload
            && m.op == like.op
            && m.size == like.size
            && m.batch == like.batch
            && m.cpus == like.cpus
            && m.variant.as_deref().is_none_or(|v| v == "build=default")
    })
}

/// A figure to three significant digits or so.
pub(crate) fn fig(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    }
}

/// The sum of `metrics` at a point (those of them the run has; None when
/// it has none).
fn sum(b: &Bench, like: &Measure, alloc: &str, metrics: &[&str]) -> Option<f64> {
    metrics
        .iter()
        .filter_map(|m| find(b, like, alloc, m).map(|x| x.median))
        .reduce(|a, x| a + x)
}

/// The two events that differ most between classic and sheaves at a
/// point, as "transfers 2.35x, waiting 2.28x" (events of at least 0.01 an
/// operation on one side; nothing when none differs by 5 %).
fn what_differs(b: &Bench, like: &Measure) -> String {
    let mut v: Vec<(f64, String)> = EVENTS
        .iter()
        .filter_map(|(label, metrics)| {
            let c = sum(b, like, CLASSIC, metrics)?;
            let s = sum(b, like, SHEAVES, metrics)?;
            if c.max(s) < 0.01 || c <= 0.0 || s <= 0.0 {
                return None;
            }
            let r = s / c;
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

/// The real programs' rows of a two-kernel run, for `metric`.
fn real_rows(b: &Bench, metric: &str) -> Vec<[String; 8]> {
    let mut rows = Vec::new();
    for classic in b
        .results
        .iter()
        .filter(|m| m.allocator == CLASSIC && m.workload == "real" && m.metric == metric)
    {
        let caa = find(b, classic, &format!("{CLASSIC}{AA_SUFFIX}"), metric);
        let sheaves = find(b, classic, SHEAVES, metric);
        let saa = find(b, classic, &format!("{SHEAVES}{AA_SUFFIX}"), metric);
        let (Some(caa), Some(sheaves), Some(saa)) = (caa, sheaves, saa) else {
            continue;
        };
        let Some(k) = judge_kernels(classic, caa, sheaves, saa) else {
            continue;
        };
        let rslub = find(b, classic, "rslub", metric)
            .map_or("-".into(), |r| format!("{:.3}", r.median / classic.median));
        rows.push([
            classic.op.clone(),
            classic.cpus.to_string(),
            fig(classic.median),
            format!("{:.3}", k.ratio),
            format!("{:.1} %", k.classic_noise.max(k.sheaves_noise) * 100.0),
            k.verdict().to_string(),
            rslub,
            what_differs(b, classic),
        ]);
    }
    rows
}

/// The glue's share of a served operation: the hook's path (served, the
/// kernel's kmem_cache calls routed to rslub) less rslub called directly,
/// over served; "-" without both.
fn glue(b: &Bench, like: &Measure) -> String {
    match (
        find(b, like, "served", "cycles_per_op"),
        find(b, like, "rslub", "cycles_per_op"),
    ) {
        (Some(s), Some(r)) if s.median > 0.0 => {
            format!("{:.0} %", (s.median - r.median) / s.median * 100.0)
        }
        _ => "-".into(),
    }
}

/// The synthetic rows of a two-kernel run.
fn synthetic_rows(b: &Bench) -> Vec<[String; 7]> {
    let mut rows = Vec::new();
    for (workload, op, batch, what) in SYNTHETIC {
        // The largest CPU count a row was run at (parallel: all CPUs).
        let Some(sheaves) = b
            .results
            .iter()
            .filter(|m| {
                m.allocator == SHEAVES
                    && m.metric == "cycles_per_op"
                    && m.workload == workload
                    && m.op == op
                    && m.size == 64
                    && m.batch == batch
                    && m.variant.is_none()
            })
            .max_by_key(|m| m.cpus)
        else {
            continue;
        };
        let ratio = |alloc: &str| {
            find(b, sheaves, alloc, "cycles_per_op").map_or("-".into(), |x| {
                let star = if x.differs_from(sheaves) { "*" } else { "" };
                format!("{:.2}{star}", x.median / sheaves.median)
            })
        };
        rows.push([
            what.to_string(),
            format!(
                "{}, {} CPU{}",
                sheaves.mode,
                sheaves.cpus,
                if sheaves.cpus == 1 { "" } else { "s" }
            ),
            fig(sheaves.median),
            ratio(CLASSIC),
            ratio("rslub"),
            ratio("served"),
            glue(b, sheaves),
        ]);
    }
    rows
}

pub(crate) fn md_row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

/// The glance of runs, each given with its name (its directory): Markdown.
pub fn glance(runs: &[(String, Bench)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!-- generated: rsbench glance {} -->",
        runs.iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    for (name, b) in runs {
        let meta = |k: &str| b.meta.get(k).map(String::as_str).unwrap_or("?");
        let mut line = format!(
            "- {name}: `SUITE={}`, {} (git {}, {}",
            meta("suite"),
            meta("cpus"),
            meta("git"),
            meta("date")
        );
        for (k, what) in [("rounds", "rounds"), ("quantum", "quantum")] {
            if let Some(v) = b.meta.get(k) {
                let _ = write!(line, "; {what} {v}");
            }
        }
        let _ = writeln!(out, "{line})");
    }
    let synthetic: Vec<_> = runs.iter().flat_map(|(_, b)| synthetic_rows(b)).collect();
    if !synthetic.is_empty() {
        out.push_str(
            "\nSynthetic, 64 B, modeled cycles an operation (* = the rounds' ranges do not \
             overlap; glue = served less rslub called directly, the hook's share of a \
             served operation):\n\n",
        );
        md_row(
            &mut out,
            &[
                "row",
                "boot",
                "sheaves",
                "classic / sheaves",
                "rslub / sheaves",
                "served / sheaves",
                "glue, of served",
            ]
            .map(String::from),
        );
        md_row(
            &mut out,
            &["---", "---", "---:", "---:", "---:", "---:", "---:"].map(String::from),
        );
        for r in &synthetic {
            md_row(&mut out, r);
        }
    }
    let mut real: Vec<[String; 8]> = Vec::new();
    for (_, b) in runs {
        let on_model = b.results.iter().any(|m| m.metric == "ev_span_per_op");
        real.extend(real_rows(
            b,
            if on_model { "ev_span_per_op" } else { "minstr" },
        ));
    }
    if !real.is_empty() {
        real.sort_by(|a, b| {
            (a[0].as_str(), a[1].parse::<u64>().unwrap_or(0))
                .cmp(&(b[0].as_str(), b[1].parse::<u64>().unwrap_or(0)))
        });
        out.push_str(
            "\nReal programs: the makespan an operation (the modeled machine's elapsed \
             cycles, thousands; instructions, millions, on a run without the model), \
             sheaves against classic called only outside the larger A/A noise:\n\n",
        );
        md_row(
            &mut out,
            &[
                "program",
                "vCPUs",
                "classic",
                "sheaves / classic",
                "A/A",
                "verdict",
                "rslub / classic",
                "sheaves against classic",
            ]
            .map(String::from),
        );
        md_row(
            &mut out,
            &["---", "---:", "---:", "---:", "---:", "---", "---:", "---"].map(String::from),
        );
        for r in &real {
            md_row(&mut out, r);
        }
    }
    if synthetic.is_empty() && real.is_empty() {
        out.push_str("\nno two-kernel rows (classic and sheaves) in these runs\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(alloc: &str, workload: &str, op: &str, metric: &str, rounds: &[f64]) -> Measure {
        let (median, min, max) = crate::model::summarize(rounds);
        Measure {
            workload: workload.into(),
            op: op.into(),
            size: if workload == "real" { 0 } else { 64 },
            batch: 1,
            cpus: 2,
            allocator: alloc.into(),
            variant: None,
            mode: "model".into(),
            metric: metric.into(),
            rounds: rounds.to_vec(),
            median,
            min,
            max,
        }
    }

    fn real_run() -> Bench {
        let span = "ev_span_per_op";
        let xfer = "ev_xfer_local_per_op";
        let mut b = Bench::default();
        b.meta.insert("suite".into(), "classic-real".into());
        b.results = vec![
            m(CLASSIC, "real", "brk1", span, &[100.0, 100.0, 100.0]),
            m("classic-aa", "real", "brk1", span, &[101.0, 99.0, 100.0]),
            m(SHEAVES, "real", "brk1", span, &[90.0, 90.0, 91.0]),
            m("sheaves-aa", "real", "brk1", span, &[91.0, 90.0, 90.0]),
            m("rslub", "real", "brk1", span, &[95.0, 95.0, 95.0]),
            m(CLASSIC, "real", "brk1", xfer, &[0.1, 0.1, 0.1]),
            m(SHEAVES, "real", "brk1", xfer, &[0.3, 0.3, 0.3]),
            m(CLASSIC, "real", "fork", span, &[100.0, 100.0, 100.0]),
            m("classic-aa", "real", "fork", span, &[110.0, 95.0, 100.0]),
            m(SHEAVES, "real", "fork", span, &[104.0, 104.0, 104.0]),
            m("sheaves-aa", "real", "fork", span, &[104.0, 104.0, 104.0]),
        ];
        b
    }

    #[test]
    fn real_rows_are_called_outside_the_noise_with_what_differs() {
        let text = glance(&[("results/x".into(), real_run())]);
        assert!(text.starts_with("<!-- generated: rsbench glance results/x -->"));
        // brk1: 0.90 against a noise of 1.1 %: called, transfers named.
        assert!(
            text.contains(
                "| brk1 | 2 | 100 | 0.900 | 1.1 % | sheaves cheaper | 0.950 | transfers 3.00x |"
            ),
            "{text}"
        );
        // fork: 1.04 inside classic's 10 %: not called; no rslub side.
        assert!(
            text.contains("| fork | 2 | 100 | 1.040 | 10.0 % | within A/A | - |"),
            "{text}"
        );
        assert!(!text.contains("Synthetic"));
    }

    #[test]
    fn synthetic_rows_compare_with_sheaves() {
        let cyc = "cycles_per_op";
        let b = Bench {
            results: vec![
                m(SHEAVES, "pair", "pair", cyc, &[80.0, 80.0, 81.0]),
                m(CLASSIC, "pair", "pair", cyc, &[82.0, 80.0, 83.0]),
                m("rslub", "pair", "pair", cyc, &[60.0, 60.0, 60.0]),
            ],
            ..Default::default()
        };
        let text = glance(&[("r".into(), b)]);
        assert!(
            text.contains("| alloc + free | model, 2 CPUs | 80.0 | 1.02 | 0.75* | - | - |"),
            "{text}"
        );
        // Served at 120 cycles, rslub called directly at 60: half the
        // served operation is the hook's glue.
        let b = Bench {
            results: vec![
                m(SHEAVES, "pair", "pair", cyc, &[80.0, 80.0, 81.0]),
                m("rslub", "pair", "pair", cyc, &[60.0, 60.0, 60.0]),
                m("served", "pair", "pair", cyc, &[120.0, 120.0, 120.0]),
            ],
            ..Default::default()
        };
        let text = glance(&[("r".into(), b)]);
        assert!(text.contains("| 1.50* | 50 % |"), "{text}");
        assert!(!text.contains("Real programs"));
        let none = glance(&[("r".into(), Bench::default())]);
        assert!(none.contains("no two-kernel rows"));
    }
}
