// SPDX-License-Identifier: GPL-2.0
//! bench.json: the results of one benchmark run, as `rsbench parse` writes
//! them and every other subcommand reads them. A result is one measured
//! point (workload, op, size, batch, cpus, allocator, variant, mode, metric)
//! with the value of each round and their median, min and max.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One run: free-form string metadata and the results in log order.
#[derive(Serialize, Deserialize, Debug, Default)]
pub struct Bench {
    pub meta: BTreeMap<String, String>,
    pub results: Vec<Measure>,
}

/// One measured point and its rounds.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Measure {
    pub workload: String,
    pub op: String,
    pub size: u64,
    pub batch: u64,
    pub cpus: u64,
    pub allocator: String,
    /// A tuning variant of the allocator ("max_empty=8"); None for the
    /// allocator as built.
    pub variant: Option<String>,
    pub mode: String,
    pub metric: String,
    pub rounds: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Measure {
    /// The allocator and its variant as one column or legend label.
    pub fn series(&self) -> String {
        match &self.variant {
            Some(v) => format!("{}[{v}]", self.allocator),
            None => self.allocator.clone(),
        }
    }

    /// Whether the two results' round ranges are disjoint: the difference
    /// between them is larger than the spread of either.
    pub fn differs_from(&self, other: &Measure) -> bool {
        self.max < other.min || other.max < self.min
    }
}

/// Median, min and max of the rounds (which must not be empty).
pub fn summarize(rounds: &[f64]) -> (f64, f64, f64) {
    let mut v = rounds.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

/// The bench.json a command-line argument names: the file itself, or
/// bench.json inside a results directory.
pub fn json_path(arg: &Path) -> PathBuf {
    if arg.is_dir() {
        arg.join("bench.json")
    } else {
        arg.to_path_buf()
    }
}

pub fn load(arg: &Path) -> Result<Bench, String> {
    let path = json_path(arg);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a bench.json: {e}", path.display()))
}

/// Runs of one revision made one (`rsbench merge`): the parts of one
/// command that ran as two suites (make bench SUITE=classic-all: the
/// synthetic two-kernel run and the real-program one). Each meta key keeps
/// its value where the runs agree, else the runs' values joined with "; "
/// (`mode`, `cpus`, `suite`); the results are concatenated. Refused when the
/// runs come from different revisions (meta `git`) or measured one point
/// twice.
pub fn merge(runs: Vec<Bench>) -> Result<Bench, String> {
    let mut out = Bench::default();
    let mut seen = std::collections::HashSet::new();
    let revs: Vec<&str> = runs
        .iter()
        .map(|b| b.meta.get("git").map_or("unknown", String::as_str))
        .collect();
    if revs.iter().any(|r| *r != revs[0]) {
        return Err(format!(
            "the runs are of different revisions ({}): one table needs one",
            revs.join(", ")
        ));
    }
    for b in &runs {
        for (k, v) in &b.meta {
            let e = out.meta.entry(k.clone()).or_default();
            if e.is_empty() {
                e.clone_from(v);
            } else if !e.split("; ").any(|x| x == v) {
                e.push_str("; ");
                e.push_str(v);
            }
        }
    }
    for b in runs {
        for m in b.results {
            let key = (
                m.workload.clone(),
                m.op.clone(),
                m.size,
                m.batch,
                m.cpus,
                m.allocator.clone(),
                m.variant.clone(),
                m.mode.clone(),
                m.metric.clone(),
            );
            if !seen.insert(key) {
                return Err(format!(
                    "two runs measured {} {} size {} batch {} cpus {} of {} ({}) twice",
                    m.mode,
                    m.op,
                    m.size,
                    m.batch,
                    m.cpus,
                    m.series(),
                    m.metric
                ));
            }
            out.results.push(m);
        }
    }
    Ok(out)
}

/// A value with the precision its size deserves: whole numbers from 100 up
/// (and whole values anywhere), one decimal from 10, two below. Throughput is shown in millions.
pub fn fmt_value(metric: &str, v: f64) -> String {
    if metric == "ops_per_s" {
        return format!("{}M", fmt_num(v / 1e6));
    }
    fmt_num(v)
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == v.round() {
        // Round half away from zero: a median of 206.5 shows as 207.
        format!("{:.0}", v.round())
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// What a metric counts, for section titles, axis labels and captions.
pub fn metric_desc(metric: &str) -> &'static str {
    match metric {
        "instr_per_op" => "instructions per operation",
        "ns_per_op" => "ns per operation",
        "ops_per_s" => "operations per second (M = millions)",
        "pages" => "slab pages",
        "minstr" => "millions of instructions per run (the program's own time)",
        "ms" => "ms per run",
        "slab_kb" => "kB of slab at the end of the run (/proc/meminfo Slab)",
        "cycles_per_op" => "modeled cycles per operation (cost model, priced by a profile)",
        m if is_event(m) => "modeled events per operation (cost model)",
        _ => "value",
    }
}

/// Whether a metric is one of the cost model's event counts per operation
/// (`ev_<field>_per_op`): shown only in the events sections, never plotted.
pub fn is_event(metric: &str) -> bool {
    metric.starts_with("ev_")
}

/// What a measurement mode means for how far to trust the numbers.
pub fn mode_desc(mode: &str) -> &'static str {
    match mode {
        "icount" => "icount: instructions, deterministic",
        "wall" => "wall: TCG emulation time, noisy",
        "counters" => "counters: rslub's event counters, a counters build",
        "model" => {
            "model: instructions and modeled cache, coherence and atomic events, \
             priced by a profile; deterministic"
        }
        "model8" => {
            "model8: the cost model on 8 vCPUs over 2 NUMA nodes (remote frees across \
             the nodes); deterministic"
        }
        "model16" => "model16: the cost model on 16 vCPUs over 2 NUMA nodes; deterministic",
        "model32" => "model32: the cost model on 32 vCPUs over 4 NUMA nodes; deterministic",
        _ => "unknown mode",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_joins_meta_keeps_results_and_refuses_two_revisions() {
        let run = |suite: &str, git: &str, workload: &str| {
            let mut b = Bench::default();
            b.meta.insert("suite".into(), suite.into());
            b.meta.insert("git".into(), git.into());
            b.results.push(Measure {
                workload: workload.into(),
                op: "pair".into(),
                size: 64,
                batch: 1,
                cpus: 2,
                allocator: "classic".into(),
                variant: None,
                mode: "model".into(),
                metric: "cycles_per_op".into(),
                rounds: vec![1.0],
                median: 1.0,
                min: 1.0,
                max: 1.0,
            });
            b
        };
        let m = merge(vec![
            run("classic", "abc", "pair"),
            run("classic-real", "abc", "real"),
        ])
        .unwrap();
        assert_eq!(m.meta["suite"], "classic; classic-real");
        assert_eq!(m.meta["git"], "abc");
        assert_eq!(m.results.len(), 2);
        assert!(merge(vec![run("a", "abc", "pair"), run("b", "def", "real")]).is_err());
        assert!(merge(vec![run("a", "abc", "pair"), run("b", "abc", "pair")]).is_err());
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(summarize(&[4.0, 1.0, 3.0, 2.0]), (2.5, 1.0, 4.0));
        assert_eq!(summarize(&[7.0]), (7.0, 7.0, 7.0));
    }

    #[test]
    fn precision_follows_magnitude() {
        assert_eq!(fmt_value("instr_per_op", 241.4), "241");
        assert_eq!(fmt_value("instr_per_op", 206.5), "207");
        assert_eq!(fmt_value("pages", 60.0), "60");
        assert_eq!(fmt_value("instr_per_op", 31.25), "31.2");
        assert_eq!(fmt_value("ns_per_op", 3.456), "3.46");
        assert_eq!(fmt_value("ops_per_s", 12_345_678.0), "12.3M");
    }
}
