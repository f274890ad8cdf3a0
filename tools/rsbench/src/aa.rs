// SPDX-License-Identifier: GPL-2.0
//! The A/A noise floor of a real-program run (`make bench SUITE=real`,
//! side `aa`): rslub served a second time in the same boot, interleaved
//! with the other two sides, its results named `rslub-aa`. Two runs of the
//! same allocator differ only by noise (scheduling, the order of runs, the
//! slabs each run finds), so how far they differ is the smallest
//! difference between rslub and the in-tree SLUB that says anything.
//!
//! For each point with all three series, the A/A noise is the largest
//! `|aa / rslub - 1|` over the rounds, each `rslub-aa` round set against
//! the `rslub` round of the same index (they ran next to each other), and
//! the verdict on rslub / in-tree (medians) is called only when it lies
//! farther from 1 than that noise: "rslub dearer" or "rslub cheaper",
//! else "within A/A".

use crate::model::{Bench, Measure};

/// The series name of the A/A side's results.
pub const AA: &str = "rslub-aa";

/// What one point's A/A says.
#[derive(Debug, Clone, PartialEq)]
pub struct AaRow {
    /// rslub's median over the in-tree SLUB's.
    pub ratio: f64,
    /// The A/A side's median over rslub's.
    pub aa_ratio: f64,
    /// The largest |aa / rslub - 1| of one round pair.
    pub noise: f64,
    /// Whether rslub / in-tree lies outside the noise.
    pub called: bool,
}

impl AaRow {
    /// The verdict in words.
    pub fn verdict(&self) -> &'static str {
        match (self.called, self.ratio > 1.0) {
            (false, _) => "within A/A",
            (true, true) => "rslub dearer",
            (true, false) => "rslub cheaper",
        }
    }
}

/// The A/A verdict of one point from its three measures (None when a
/// side has no rounds or a median is 0).
pub fn judge(slub: &Measure, rslub: &Measure, aa: &Measure) -> Option<AaRow> {
    if slub.median == 0.0 || rslub.median == 0.0 {
        return None;
    }
    let noise = rslub
        .rounds
        .iter()
        .zip(&aa.rounds)
        .filter(|(r, _)| **r != 0.0)
        .map(|(r, a)| (a / r - 1.0).abs())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
    let ratio = rslub.median / slub.median;
    Some(AaRow {
        ratio,
        aa_ratio: aa.median / rslub.median,
        noise,
        called: (ratio - 1.0).abs() > noise,
    })
}

/// Whether a result is part of an A/A comparison's point: same point,
/// allocator named.
fn same_point(a: &Measure, b: &Measure) -> bool {
    a.mode == b.mode
        && a.workload == b.workload
        && a.op == b.op
        && a.size == b.size
        && a.batch == b.batch
        && a.cpus == b.cpus
        && a.metric == b.metric
        && a.variant == b.variant
}

/// The A/A section of a run's table: one row per point that has the in-tree
/// SLUB, rslub and the A/A side; empty when the run has no A/A side.
pub fn section(b: &Bench) -> String {
    let mut grid: Vec<Vec<String>> = Vec::new();
    for aa in b
        .results
        .iter()
        .filter(|m| m.allocator == AA && !crate::model::is_event(&m.metric))
    {
        let find = |alloc: &str| {
            b.results
                .iter()
                .find(|m| m.allocator == alloc && same_point(m, aa))
        };
        let (Some(slub), Some(rslub)) = (find("slub"), find("rslub")) else {
            continue;
        };
        let Some(row) = judge(slub, rslub, aa) else {
            continue;
        };
        grid.push(vec![
            aa.mode.clone(),
            aa.op.clone(),
            aa.cpus.to_string(),
            aa.metric.clone(),
            format!("{:.3}", row.ratio),
            format!("{:.3}", row.aa_ratio),
            format!("{:.1}%", row.noise * 100.0),
            aa.rounds.len().min(rslub.rounds.len()).to_string(),
            row.verdict().to_string(),
        ]);
    }
    if grid.is_empty() {
        return String::new();
    }
    let head = [
        "mode",
        "op",
        "cpus",
        "metric",
        "rslub/slub",
        "aa/rslub",
        "A/A noise",
        "rounds",
        "verdict",
    ];
    grid.insert(0, head.map(String::from).into());
    let mut out = String::from(
        "\nA/A: rslub served twice in one boot (side aa); A/A noise = the largest |aa/rslub - 1| \
         of a round pair; a verdict is called only outside it\n",
    );
    out.push_str(&crate::table::render(&grid, &[0, 1, 3, 8]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(alloc: &str, rounds: &[f64]) -> Measure {
        let (median, min, max) = crate::model::summarize(rounds);
        Measure {
            workload: "real".into(),
            op: "hb-proc-pipe".into(),
            size: 0,
            batch: 1,
            cpus: 2,
            allocator: alloc.into(),
            variant: None,
            mode: "model".into(),
            metric: "minstr".into(),
            rounds: rounds.to_vec(),
            median,
            min,
            max,
        }
    }

    #[test]
    fn a_difference_inside_the_noise_is_not_called() {
        // rslub 2 % dearer; its own second runs differ by up to 3 %.
        let r = judge(
            &m("slub", &[100.0, 100.0, 100.0]),
            &m("rslub", &[102.0, 102.0, 102.0]),
            &m(AA, &[99.0, 105.06, 102.0]),
        )
        .unwrap();
        assert!((r.noise - 0.03).abs() < 1e-9);
        assert!(!r.called);
        assert_eq!(r.verdict(), "within A/A");
    }

    #[test]
    fn a_difference_outside_the_noise_is_called_with_its_sign() {
        let slub = m("slub", &[100.0, 101.0, 99.0]);
        let dear = judge(
            &slub,
            &m("rslub", &[110.0; 3]),
            &m(AA, &[111.0, 109.0, 110.0]),
        )
        .unwrap();
        assert_eq!(dear.verdict(), "rslub dearer");
        let cheap = judge(&slub, &m("rslub", &[90.0; 3]), &m(AA, &[91.0, 89.0, 90.0])).unwrap();
        assert_eq!(cheap.verdict(), "rslub cheaper");
    }

    #[test]
    fn rounds_pair_by_index_not_by_sorted_value() {
        // Sorted, the A/A rounds would match rslub's exactly; paired by
        // round they differ by 10 %.
        let r = judge(
            &m("slub", &[100.0; 2]),
            &m("rslub", &[100.0, 110.0]),
            &m(AA, &[110.0, 100.0]),
        )
        .unwrap();
        assert!((r.noise - 0.10).abs() < 1e-9);
    }

    #[test]
    fn the_section_lists_points_with_all_three_sides_only() {
        let mut b = Bench::default();
        b.results.push(m("slub", &[100.0; 2]));
        b.results.push(m("rslub", &[120.0; 2]));
        assert_eq!(section(&b), "");
        b.results.push(m(AA, &[121.0, 119.0]));
        let s = section(&b);
        assert!(s.contains("rslub dearer"), "{s}");
        assert!(s.contains("1.200"), "{s}");
    }
}
