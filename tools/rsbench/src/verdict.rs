// SPDX-License-Identifier: GPL-2.0
//! `rsbench verdict`: each modeled comparison of a run priced again under
//! other prices, from the events bench.json keeps per round. The model's
//! cycles are linear in its event counts, so re-pricing needs no counts
//! file and no new run: each round's events per operation
//! (`ev_<field>_per_op`) times a profile's prices.
//!
//! For each point both allocators have modeled events at, the verdict
//! gives the ratio of modeled cycles (medians of the rounds) under the base
//! profile, with the transfer prices and the atomic prices halved and
//! doubled, under a second profile, where the ratio would cross 1 if
//! transfers and atomics together cost f times the base profile's, and
//! which event groups make the difference in cycles.

use crate::model::{Bench, Measure};
use costmodel_model::counts::{FIELDS, N_FIELDS};
use costmodel_model::profile::Profile;
use std::collections::BTreeMap;

/// The event groups a difference is told in, by field.
const GROUPS: [(&str, &[&str]); 6] = [
    ("instr", &["insns"]),
    ("strings", &["str_insns", "str_bytes", "str_elems"]),
    ("hits", &["l1", "l2", "llc"]),
    ("dram", &["dram_local", "dram_remote"]),
    ("xfer", &["xfer_local", "xfer_remote"]),
    (
        "atomics",
        &["locked", "unlocked", "cx16_locked", "cx16_unlocked"],
    ),
];

/// The fields whose prices the flip point scales: transfers and atomics.
const CONTENDED: [&str; 6] = [
    "xfer_local",
    "xfer_remote",
    "locked",
    "unlocked",
    "cx16_locked",
    "cx16_unlocked",
];

/// One priced comparison: a label and its profile.
pub struct Scenario {
    pub label: String,
    pub profile: Profile,
}

/// The scenarios of a verdict: `base`, its transfer and atomic prices
/// halved and doubled, and `second`.
pub fn scenarios(base: &Profile, second: &Profile) -> Result<Vec<Scenario>, String> {
    let mut out = vec![Scenario {
        label: base.name.clone(),
        profile: base.clone(),
    }];
    for spec in ["xfer=0.5", "xfer=2", "atomics=0.5", "atomics=2"] {
        let mut p = base.clone();
        p.scale(spec)?;
        out.push(Scenario {
            label: spec.replace('=', "x"),
            profile: p,
        });
    }
    out.push(Scenario {
        label: second.name.clone(),
        profile: second.clone(),
    });
    Ok(out)
}

/// A point of a run, without its allocator and metric.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct Point {
    mode: String,
    workload: String,
    op: String,
    size: u64,
    batch: u64,
    cpus: u64,
}

fn point(m: &Measure) -> Point {
    Point {
        mode: m.mode.clone(),
        workload: m.workload.clone(),
        op: m.op.clone(),
        size: m.size,
        batch: m.batch,
        cpus: m.cpus,
    }
}

/// Each round's events per operation of one series at each point, in
/// `FIELDS` order; rounds missing a field are dropped.
fn events(bench: &Bench, series: &str) -> BTreeMap<Point, Vec<[f64; N_FIELDS]>> {
    let mut by: BTreeMap<Point, Vec<Option<&Measure>>> = BTreeMap::new();
    for m in bench.results.iter().filter(|m| m.series() == series) {
        let Some(field) = m
            .metric
            .strip_prefix("ev_")
            .and_then(|f| f.strip_suffix("_per_op"))
        else {
            continue;
        };
        let Some(i) = FIELDS.iter().position(|f| *f == field) else {
            continue;
        };
        let slot = by
            .entry(point(m))
            .or_insert_with(|| vec![None; FIELDS.len()]);
        slot[i] = Some(m);
    }
    by.into_iter()
        .filter_map(|(p, fields)| {
            let fields: Vec<&Measure> = fields.into_iter().collect::<Option<_>>()?;
            let n = fields.iter().map(|m| m.rounds.len()).min()?;
            let rounds = (0..n)
                .map(|r| {
                    let mut e = [0.0; N_FIELDS];
                    for (i, m) in fields.iter().enumerate() {
                        e[i] = m.rounds[r];
                    }
                    e
                })
                .collect::<Vec<_>>();
            (!rounds.is_empty()).then_some((p, rounds))
        })
        .collect()
}

fn price(p: &Profile, e: &[f64; N_FIELDS]) -> f64 {
    e.iter().zip(p.cycles).map(|(n, c)| n * c).sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn mean(rounds: &[[f64; N_FIELDS]]) -> [f64; N_FIELDS] {
    let mut m = [0.0; N_FIELDS];
    for e in rounds {
        for (a, b) in m.iter_mut().zip(e) {
            *a += b / rounds.len() as f64;
        }
    }
    m
}

/// The factor on the transfer and atomic prices of `p` at which the
/// cycles of `x` and `b` (mean events) are equal, if a positive one.
pub fn flip(p: &Profile, x: &[f64; N_FIELDS], b: &[f64; N_FIELDS]) -> Option<f64> {
    let split = |e: &[f64; N_FIELDS]| {
        let (mut fixed, mut scaled) = (0.0, 0.0);
        for (i, f) in FIELDS.iter().enumerate() {
            let c = e[i] * p.cycles[i];
            if CONTENDED.contains(f) {
                scaled += c;
            } else {
                fixed += c;
            }
        }
        (fixed, scaled)
    };
    let ((ax, bx), (ab, bb)) = (split(x), split(b));
    let f = (ab - ax) / (bx - bb);
    (f.is_finite() && f > 0.0).then_some(f)
}

/// The groups that make most of the difference in cycles of `x` over `b`
/// under `p`: the two largest, signed, in cycles per operation.
fn drivers(p: &Profile, x: &[f64; N_FIELDS], b: &[f64; N_FIELDS]) -> String {
    let mut d: Vec<(&str, f64)> = GROUPS
        .iter()
        .map(|(name, fields)| {
            let sum = FIELDS
                .iter()
                .enumerate()
                .filter(|(_, f)| fields.contains(f))
                .map(|(i, _)| (x[i] - b[i]) * p.cycles[i])
                .sum();
            (*name, sum)
        })
        .collect();
    d.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    d.iter()
        .take(2)
        .map(|(n, v)| format!("{n} {}", signed(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn signed(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 {
        format!("{a:.0}")
    } else if a >= 1.0 {
        format!("{a:.1}")
    } else {
        format!("{a:.2}")
    };
    if v < 0.0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

/// The verdict table of `vs` against `base` at every point both have
/// modeled events at, priced by `scen` (the first is the reference).
pub fn verdict(bench: &Bench, base: &str, vs: &str, scen: &[Scenario]) -> Result<String, String> {
    let (eb, ex) = (events(bench, base), events(bench, vs));
    let points: Vec<&Point> = ex.keys().filter(|p| eb.contains_key(p)).collect();
    if points.is_empty() {
        return Err(format!(
            "no point with modeled events (ev_*_per_op) for both {base} and {vs}"
        ));
    }
    let reference = &scen[0].profile;
    let mut out = format!(
        "== verdict: {vs} against {base}, modeled cycles per operation (real programs: \
         millions per run); ratio = {vs} / {base} (< 1: {vs} cheaper), medians of the \
         rounds; flips at = the factor on transfer and atomic prices ({}) that makes the \
         ratio 1; difference = the two event groups that make most of it, cycles per \
         operation\n",
        reference.name
    );
    let mut head = vec![
        "mode".to_string(),
        "workload".into(),
        "op".into(),
        "size".into(),
        "batch".into(),
        "cpus".into(),
        base.into(),
        vs.into(),
    ];
    head.extend(scen.iter().map(|s| s.label.clone()));
    head.extend(["flips at".into(), "difference".into()]);
    let mut rows = vec![head];
    for p in points {
        let (rb, rx) = (&eb[p], &ex[p]);
        let cost = |s: &Scenario, r: &[[f64; N_FIELDS]]| {
            median(r.iter().map(|e| price(&s.profile, e)).collect())
        };
        let mut row = vec![
            p.mode.clone(),
            p.workload.clone(),
            p.op.clone(),
            p.size.to_string(),
            p.batch.to_string(),
            p.cpus.to_string(),
            crate::model::fmt_value("cycles_per_op", cost(&scen[0], rb)),
            crate::model::fmt_value("cycles_per_op", cost(&scen[0], rx)),
        ];
        for s in scen {
            row.push(format!("{:.3}", cost(s, rx) / cost(s, rb)));
        }
        let (mx, mb) = (mean(rx), mean(rb));
        row.push(match flip(reference, &mx, &mb) {
            Some(f) if (0.5..=2.0).contains(&f) => format!("x{f:.2} (in range)"),
            Some(f) => format!("x{f:.2}"),
            None => "never".into(),
        });
        row.push(drivers(reference, &mx, &mb));
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 3 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// Prices a run again under `p`: each point's `cycles_per_op` rounds from
/// its rounds' events (the model is linear in them), and the run's meta
/// `profile`. For a saved run after a profile's prices changed, or under
/// another profile, without running it again. Returns the number of points
/// priced; a point without every event field keeps its cycles.
pub fn reprice(bench: &mut Bench, p: &Profile) -> usize {
    let series: Vec<String> = {
        let mut v: Vec<String> = bench.results.iter().map(Measure::series).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut priced: BTreeMap<(Point, String), Vec<f64>> = BTreeMap::new();
    for s in &series {
        for (pt, rounds) in events(bench, s) {
            priced.insert(
                (pt, s.clone()),
                rounds.iter().map(|e| price(p, e)).collect(),
            );
        }
    }
    let mut n = 0;
    for m in bench
        .results
        .iter_mut()
        .filter(|m| m.metric == "cycles_per_op")
    {
        if let Some(r) = priced.get(&(point(m), m.series())) {
            let (median, min, max) = crate::model::summarize(r);
            m.rounds = r.clone();
            (m.median, m.min, m.max) = (median, min, max);
            n += 1;
        }
    }
    bench.meta.insert("profile".into(), p.name.clone());
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let text = std::fs::read_to_string(crate::parse::PROFILES).unwrap();
        Profile::from_toml(&text, "server").unwrap()
    }

    fn field(name: &str) -> usize {
        FIELDS.iter().position(|f| *f == name).unwrap()
    }

    /// A bench with `alloc`'s events at one point, one round per vector.
    fn add(bench: &mut Bench, alloc: &str, rounds: &[[f64; N_FIELDS]]) {
        for (i, f) in FIELDS.iter().enumerate() {
            let v: Vec<f64> = rounds.iter().map(|e| e[i]).collect();
            bench.results.push(Measure {
                workload: "remote".into(),
                op: "object".into(),
                size: 64,
                batch: 16,
                cpus: 2,
                allocator: alloc.into(),
                variant: None,
                mode: "model".into(),
                metric: format!("ev_{f}_per_op"),
                median: v[0],
                min: v[0],
                max: v[0],
                rounds: v,
            });
        }
    }

    #[test]
    fn flip_is_where_the_prices_equal_the_costs() {
        let p = profile();
        // x: 100 instructions and one transfer; b: 200 instructions.
        let mut x = [0.0; N_FIELDS];
        x[field("insns")] = 100.0;
        x[field("xfer_local")] = 1.0;
        let mut b = [0.0; N_FIELDS];
        b[field("insns")] = 200.0;
        // 100 + f * xfer_local = 200 at f = 100 / xfer_local's price.
        let f = flip(&p, &x, &b).unwrap();
        assert!((f - 100.0 / p.of("xfer_local")).abs() < 1e-9);
        // The same costs everywhere: no factor makes them cross.
        assert_eq!(flip(&p, &b, &b), None);
        // x cheaper in both parts: never.
        let mut y = x;
        y[field("xfer_local")] = 0.0;
        assert_eq!(flip(&p, &y, &b), None);
    }

    #[test]
    fn verdict_prices_each_scenario_and_names_the_difference() {
        let p = profile();
        let mut second = p.clone();
        second.name = "other".into();
        let scen = scenarios(&p, &second).unwrap();
        let mut e = [0.0; N_FIELDS];
        e[field("insns")] = 100.0;
        let mut x = e;
        x[field("cx16_locked")] = 1.0;
        let mut bench = Bench::default();
        add(&mut bench, "slub", &[e, e, e]);
        add(&mut bench, "rslub", &[x, x, x]);
        let text = verdict(&bench, "slub", "rslub", &scen).unwrap();
        let row = text.lines().find(|l| l.starts_with("model")).unwrap();
        let want = |s: f64| format!("{:.3}", (100.0 + s * p.of("cx16_locked")) / 100.0);
        // Reference, xfer halved and doubled (no transfers: the same),
        // atomics halved and doubled.
        for (i, s) in [1.0, 1.0, 1.0, 0.5, 2.0].iter().enumerate() {
            let col = row.split_whitespace().nth(8 + i).unwrap();
            assert_eq!(col, want(*s), "scenario {}", scen[i].label);
        }
        assert!(row.contains("never"), "{row}");
        assert!(
            row.contains(&format!("atomics +{:.1}", p.of("cx16_locked"))),
            "{row}"
        );
        // No point both have: an error that says so.
        let mut only = Bench::default();
        add(&mut only, "slub", &[e]);
        assert!(verdict(&only, "slub", "rslub", &scen).is_err());
    }

    #[test]
    fn reprice_sets_each_rounds_cycles_from_its_events() {
        let p = profile();
        let mut bench = Bench::default();
        let mut e = [[0.0; N_FIELDS]; 2];
        e[0][field("insns")] = 100.0;
        e[1][field("insns")] = 120.0;
        e[1][field("cx16_unlocked")] = 2.0;
        add(&mut bench, "rslub", &e);
        let mut c = bench.results[0].clone();
        c.metric = "cycles_per_op".into();
        c.rounds = vec![1.0, 1.0];
        bench.results.push(c);
        assert_eq!(reprice(&mut bench, &p), 1);
        let m = bench.results.last().unwrap();
        let want = [price(&p, &e[0]), price(&p, &e[1])];
        assert_eq!(m.rounds, want);
        assert_eq!(m.max, want[0].max(want[1]));
        assert_eq!(bench.meta["profile"], "server");
    }
}
