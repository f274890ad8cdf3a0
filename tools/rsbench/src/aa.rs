// SPDX-License-Identifier: GPL-2.0
//! The A/A noise floor of a real-program run (`make bench SUITE=real` and
//! `SUITE=classic-real`): a series run a second time in the same boot,
//! interleaved with the others, its results named after it with `-aa`
//! (`rslub-aa` of rslub, `classic-aa` and `sheaves-aa` of the two kernels'
//! in-tree SLUBs). Two runs of the same allocator differ only by noise
//! (scheduling, the order of runs, the slabs each run finds), so how far
//! they differ is the smallest difference between two allocators that
//! says anything.
//!
//! The A/A noise of a series at a point is the largest `|X-aa / X - 1|`
//! over the rounds, each `X-aa` round set against the `X` round of the
//! same index (they ran next to each other). Two sections use it:
//!
//! - rslub against the in-tree SLUB of its boot (`slub`, or `sheaves` in a
//!   two-kernel run): the ratio of medians is called "rslub dearer" or
//!   "rslub cheaper" only when it lies farther from 1 than rslub's noise,
//!   else "within A/A";
//! - classic against sheaves (a two-kernel run): sheaves / classic, called
//!   only outside the larger of the two kernels' noises, with rslub /
//!   classic beside it.

use crate::model::{Bench, Measure};
use crate::table::CLASSIC;

/// The series name of rslub's A/A side.
pub const AA: &str = "rslub-aa";

/// What an A/A series' name adds to the name of the series it repeats.
pub const AA_SUFFIX: &str = "-aa";

/// The series an A/A series repeats (`classic` for `classic-aa`); None
/// for a series that is no A/A.
pub fn aa_of(series: &str) -> Option<&str> {
    series.strip_suffix(AA_SUFFIX).filter(|s| !s.is_empty())
}

/// The A/A noise of `x` given its second run `aa`: the largest
/// `|aa / x - 1|` of a round pair (rounds paired by index); None when no
/// pair has a non-zero `x`.
pub fn noise(x: &Measure, aa: &Measure) -> Option<f64> {
    x.rounds
        .iter()
        .zip(&aa.rounds)
        .filter(|(r, _)| **r != 0.0)
        .map(|(r, a)| (a / r - 1.0).abs())
        .reduce(f64::max)
}

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
    let noise = noise(rslub, aa)?;
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
/// SLUB of rslub's boot (`slub`; `sheaves` in a two-kernel run), rslub and
/// the A/A side; empty when the run has no A/A side.
pub fn section(b: &Bench) -> String {
    let intree = if b.results.iter().any(|m| m.allocator == "slub") {
        "slub"
    } else {
        SHEAVES
    };
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
        let (Some(slub), Some(rslub)) = (find(intree), find("rslub")) else {
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
        &format!("rslub/{intree}"),
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

/// 7.3's in-tree SLUB in a two-kernel run, as `rsbench parse --rename`
/// names it (6.12's is `CLASSIC`).
pub const SHEAVES: &str = "sheaves";

/// What one point of classic against sheaves says.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// sheaves' median over classic's.
    pub ratio: f64,
    /// Each kernel's A/A noise (see `noise`).
    pub classic_noise: f64,
    pub sheaves_noise: f64,
    /// Whether sheaves / classic lies outside the larger of the two noises.
    pub called: bool,
}

impl KernelRow {
    /// The verdict in words.
    pub fn verdict(&self) -> &'static str {
        match (self.called, self.ratio > 1.0) {
            (false, _) => "within A/A",
            (true, true) => "sheaves dearer",
            (true, false) => "sheaves cheaper",
        }
    }
}

/// Classic against sheaves at one point, from each kernel's series and its
/// A/A (None when a median of classic is 0 or a kernel has no round pair).
pub fn judge_kernels(
    classic: &Measure,
    classic_aa: &Measure,
    sheaves: &Measure,
    sheaves_aa: &Measure,
) -> Option<KernelRow> {
    if classic.median == 0.0 {
        return None;
    }
    let classic_noise = noise(classic, classic_aa)?;
    let sheaves_noise = noise(sheaves, sheaves_aa)?;
    let ratio = sheaves.median / classic.median;
    Some(KernelRow {
        ratio,
        classic_noise,
        sheaves_noise,
        called: (ratio - 1.0).abs() > classic_noise.max(sheaves_noise),
    })
}

/// The metrics the kernels' section judges: every measure but the model's
/// event counts, and of those the span (the machine's elapsed cycles).
fn judged(metric: &str) -> bool {
    !crate::model::is_event(metric) || metric == "ev_span_per_op"
}

/// The section "classic against sheaves" of a two-kernel run's table: one
/// row per point with classic, sheaves and both A/A sides, rslub / classic
/// beside it when rslub ran there; empty otherwise.
pub fn kernels_section(b: &Bench) -> String {
    let mut grid: Vec<Vec<String>> = Vec::new();
    for classic in b
        .results
        .iter()
        .filter(|m| m.allocator == CLASSIC && judged(&m.metric))
    {
        let find = |alloc: &str| {
            b.results
                .iter()
                .find(|m| m.allocator == alloc && same_point(m, classic))
        };
        let classic_aa = format!("{CLASSIC}{AA_SUFFIX}");
        let sheaves_aa = format!("{SHEAVES}{AA_SUFFIX}");
        let (Some(caa), Some(sheaves), Some(saa)) =
            (find(&classic_aa), find(SHEAVES), find(&sheaves_aa))
        else {
            continue;
        };
        let Some(row) = judge_kernels(classic, caa, sheaves, saa) else {
            continue;
        };
        let rounds = [caa, sheaves, saa]
            .iter()
            .map(|m| m.rounds.len())
            .fold(classic.rounds.len(), usize::min);
        let rslub =
            find("rslub").map_or("-".into(), |r| format!("{:.3}", r.median / classic.median));
        grid.push(vec![
            classic.mode.clone(),
            classic.op.clone(),
            classic.cpus.to_string(),
            classic.metric.clone(),
            format!("{:.3}", row.ratio),
            format!("{:.1}%", row.classic_noise * 100.0),
            format!("{:.1}%", row.sheaves_noise * 100.0),
            rounds.to_string(),
            row.verdict().to_string(),
            rslub,
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
        "sheaves/classic",
        "classic A/A",
        "sheaves A/A",
        "rounds",
        "verdict",
        "rslub/classic",
    ];
    grid.insert(0, head.map(String::from).into());
    let mut out = String::from(
        "\nclassic against sheaves: 6.12's SLUB (classic) and 7.3's (sheaves), each run twice \
         in its own boot (classic-aa, sheaves-aa); X A/A = the largest |X-aa/X - 1| of a round \
         pair; a verdict is called only outside the larger of the two. On the model the \
         program's verdict is its ev_span_per_op row (the machine's elapsed cycles: throughput \
         at a fixed amount of work, what upstream's reports measured); cycles_per_op is the \
         work of all CPUs together\n",
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
    /// A point of a two-kernel run: one allocator's rounds of minstr.
    fn k(alloc: &str, rounds: &[f64]) -> Measure {
        m(alloc, rounds)
    }

    #[test]
    fn aa_names_the_series_it_repeats() {
        assert_eq!(aa_of("classic-aa"), Some("classic"));
        assert_eq!(aa_of("sheaves-aa"), Some("sheaves"));
        assert_eq!(aa_of(AA), Some("rslub"));
        assert_eq!(aa_of("rslub"), None);
        assert_eq!(aa_of("-aa"), None);
    }

    #[test]
    fn kernels_within_the_larger_noise_are_not_called() {
        // sheaves 4 % dearer; sheaves' own A/A differs by 2 %, classic's by
        // 5 %: the larger noise covers the difference.
        let r = judge_kernels(
            &k("classic", &[100.0, 100.0, 100.0]),
            &k("classic-aa", &[100.0, 105.0, 99.0]),
            &k("sheaves", &[104.0, 104.0, 104.0]),
            &k("sheaves-aa", &[104.0, 106.08, 104.0]),
        )
        .unwrap();
        assert!((r.ratio - 1.04).abs() < 1e-9);
        assert!((r.classic_noise - 0.05).abs() < 1e-9);
        assert!((r.sheaves_noise - 0.02).abs() < 1e-9);
        assert!(!r.called);
        assert_eq!(r.verdict(), "within A/A");
    }

    #[test]
    fn kernels_outside_both_noises_are_called_with_their_sign() {
        let classic = k("classic", &[100.0, 101.0, 99.0]);
        let classic_aa = k("classic-aa", &[101.0, 100.0, 99.0]);
        // 10 % dearer against noises of 1 % and 2 %.
        let dear = judge_kernels(
            &classic,
            &classic_aa,
            &k("sheaves", &[110.0; 3]),
            &k("sheaves-aa", &[112.2, 110.0, 109.0]),
        )
        .unwrap();
        assert!(dear.called);
        assert_eq!(dear.verdict(), "sheaves dearer");
        let cheap = judge_kernels(
            &classic,
            &classic_aa,
            &k("sheaves", &[90.0; 3]),
            &k("sheaves-aa", &[90.0, 91.0, 89.0]),
        )
        .unwrap();
        assert_eq!(cheap.verdict(), "sheaves cheaper");
        // The same 10 % inside a noise of 12 % on one side only: not called.
        let noisy = judge_kernels(
            &classic,
            &k("classic-aa", &[112.0, 101.0, 99.0]),
            &k("sheaves", &[110.0; 3]),
            &k("sheaves-aa", &[110.0; 3]),
        )
        .unwrap();
        assert!(!noisy.called, "{noisy:?}");
    }

    #[test]
    fn the_kernels_section_needs_both_aa_sides_and_shows_rslub() {
        let mut b = Bench::default();
        b.results.push(k("classic", &[100.0; 2]));
        b.results.push(k("sheaves", &[120.0; 2]));
        b.results.push(k("rslub", &[95.0; 2]));
        b.results.push(k("classic-aa", &[101.0, 99.0]));
        assert_eq!(kernels_section(&b), "");
        b.results.push(k("sheaves-aa", &[121.0, 119.0]));
        let s = kernels_section(&b);
        let row = s.lines().last().unwrap();
        assert!(row.contains("1.200"), "{s}");
        assert!(row.contains("sheaves dearer"), "{s}");
        assert!(row.ends_with("0.950"), "{s}");
        // The span is judged, the other event counts are not.
        let mut span = k("classic", &[100.0; 2]);
        span.metric = "ev_span_per_op".into();
        let mut xfer = span.clone();
        xfer.metric = "ev_xfer_local_per_op".into();
        for (alloc, v) in [
            ("classic", 100.0),
            ("classic-aa", 100.0),
            ("sheaves", 100.0),
            ("sheaves-aa", 100.0),
        ] {
            for base in [&span, &xfer] {
                let mut x = base.clone();
                x.allocator = alloc.into();
                x.rounds = vec![v; 2];
                b.results.push(x);
            }
        }
        let s = kernels_section(&b);
        assert!(s.contains("ev_span_per_op"), "{s}");
        assert!(!s.contains("ev_xfer_local_per_op"), "{s}");
        // The span row has no rslub and no difference.
        assert!(s.lines().last().unwrap().contains("within A/A"), "{s}");
    }

    #[test]
    fn rslub_against_sheaves_when_the_run_has_no_slub() {
        let mut b = Bench::default();
        b.results.push(m("sheaves", &[100.0; 2]));
        b.results.push(m("rslub", &[120.0; 2]));
        b.results.push(m(AA, &[121.0, 119.0]));
        let s = section(&b);
        assert!(s.contains("rslub/sheaves"), "{s}");
        assert!(s.contains("rslub dearer"), "{s}");
    }
}
