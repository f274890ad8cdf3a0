// SPDX-License-Identifier: GPL-2.0
//! Result lines out of VM console logs. The guest module prints one line per
//! round, `rslub_bench: result key=value ...`, somewhere in a console full of
//! other text (and maybe after a printk timestamp); rounds of the same point
//! are grouped into one `Measure`, in the order the points first appear.
//!
//! A mode=model line also names the cost model's marks that end its
//! regions (`marks=ID[+ID...]`) and the operations its value was divided by
//! (`n=`): given the plugin's counts file of its log (`--counts`), the
//! regions' counts of all vCPUs are summed, priced with a profile and added
//! as per-operation measures of the same point: `cycles_per_op` and one
//! `ev_<field>_per_op` per counted event.
//!
//! Both the model's boots and the icount boot (under the plugin with
//! `model=off`, whose counts file adds no measures) carry marks, and their
//! virtual-clock figures (`instr_per_op`, `minstr`) count each iteration of
//! a rep string instruction: given the counts, they are scaled to count it
//! once (`fold_clock`).

use crate::model::{summarize, Bench, Measure};
use costmodel_model::counts::{header_core, model_ran, regions, Counts, FIELDS};
use costmodel_model::profile::Profile;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

const TAG: &str = "rslub_bench: result ";

/// One parsed result line.
#[derive(Debug)]
struct Line {
    key: Key,
    round: u64,
    value: f64,
    /// `marks=` and `n=` of a model line: the ids of the marks that end its
    /// regions, and the operations they hold.
    model: Option<(Vec<u64>, u64)>,
}

/// Everything that identifies a result except its round and value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    mode: String,
    workload: String,
    op: String,
    size: u64,
    batch: u64,
    cpus: u64,
    allocator: String,
    variant: Option<String>,
    metric: String,
}

/// The key=value pairs of one result line (the text after the tag). Unknown
/// keys are ignored; a missing or unreadable known key is an error.
fn parse_line(text: &str) -> Result<Line, String> {
    let mut kv = HashMap::new();
    for tok in text.split_whitespace() {
        // Split on the first '=' only: variants look like "max_empty=8".
        let (k, v) = tok
            .split_once('=')
            .ok_or_else(|| format!("'{tok}' is not key=value"))?;
        kv.insert(k, v);
    }
    let get = |k: &str| kv.get(k).copied().ok_or_else(|| format!("no {k}="));
    let num = |k: &str| -> Result<u64, String> {
        let v = get(k)?;
        v.parse().map_err(|_| format!("{k}={v} is not a number"))
    };
    let value = get("value")?;
    let value: f64 = match value.parse() {
        Ok(x) if f64::is_finite(x) => x,
        _ => return Err(format!("value={value} is not a finite number")),
    };
    let model = match (kv.get("marks"), kv.get("n")) {
        (Some(marks), Some(_)) => {
            let ids = marks
                .split('+')
                .map(str::parse::<u64>)
                .collect::<Result<Vec<u64>, _>>()
                .map_err(|_| format!("marks={marks} is not ID[+ID...]"))?;
            match num("n")? {
                0 => return Err("n=0: no operations".into()),
                n => Some((ids, n)),
            }
        }
        (Some(_), None) => return Err("marks= without n=".into()),
        // n= alone is no model line's: ignored, as unknown keys are.
        (None, _) => None,
    };
    let variant = match kv.get("variant") {
        None | Some(&"-") | Some(&"") => None,
        Some(v) => Some(v.to_string()),
    };
    Ok(Line {
        key: Key {
            mode: get("mode")?.to_string(),
            workload: get("workload")?.to_string(),
            op: get("op")?.to_string(),
            size: num("size")?,
            batch: num("batch")?,
            cpus: num("cpus")?,
            allocator: get("alloc")?.to_string(),
            variant,
            metric: get("metric")?.to_string(),
        },
        round: num("round")?,
        value,
        model,
    })
}

/// `--rename LOG:FROM=TO`: the allocator FROM of one log's lines goes by
/// TO (two kernels' in-tree SLUBs, or floors, in one bench.json).
#[derive(Clone, Debug)]
pub struct Rename {
    pub log: PathBuf,
    pub from: String,
    pub to: String,
}

/// `--counts LOG=FILE`: the cost model's counts file of one log's run.
#[derive(Clone, Debug)]
pub struct CountsArg {
    pub log: PathBuf,
    pub file: PathBuf,
}

/// The profiles file shipped with the cost model, found from this crate's
/// source directory at build time (as costmodel-price finds it).
pub const PROFILES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../costmodel/profiles.toml");

/// The profile `name` of the profiles file `path`.
pub fn load_profile(path: &Path, name: &str) -> Result<Profile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Profile::from_toml(&text, name).map_err(|e| format!("{}: {e}", path.display()))
}

/// A counts file: the counts summed per mark id, over every region that
/// mark ends and every vCPU (`exit` lines are not regions of a mark), and
/// whether the model ran (`model=off` in its header: instructions only, an
/// icount boot's).
struct CountsFile {
    by_id: HashMap<u64, Counts>,
    model: bool,
    /// The core its hidden accesses were counted for (`core=`).
    core: Option<costmodel_model::overlap::CoreConfig>,
}

fn read_counts(path: &Path) -> Result<CountsFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut by_id: HashMap<u64, Counts> = HashMap::new();
    for r in regions(&text).map_err(|e| format!("{}:{e}", path.display()))? {
        let sum = by_id.entry(r.id).or_default();
        *sum = sum.plus(&r.counts);
    }
    Ok(CountsFile {
        by_id,
        model: model_ran(&text),
        core: header_core(&text),
    })
}

/// The counts of the regions the marks `ids` end, summed (an id named
/// twice counts once). Err names the ids that end no region.
fn region_sum(by_id: &HashMap<u64, Counts>, ids: &[u64]) -> Result<Counts, Vec<u64>> {
    let missing: Vec<u64> = ids
        .iter()
        .copied()
        .filter(|id| !by_id.contains_key(id))
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    let mut seen: Vec<u64> = Vec::new();
    let mut sum = Counts::default();
    for id in ids {
        if !seen.contains(id) {
            seen.push(*id);
            sum = sum.plus(&by_id[id]);
        }
    }
    Ok(sum)
}

/// The model measures of one line's regions, (metric, value per
/// operation): `cycles_per_op` then `ev_<field>_per_op` in `FIELDS` order.
fn model_measures(sum: &Counts, ops: u64, profile: &Profile) -> Vec<(String, f64)> {
    let per_op = |x: f64| x / ops as f64;
    let mut out = vec![("cycles_per_op".to_string(), per_op(profile.price(sum)))];
    for (f, v) in FIELDS.iter().zip(sum.to_array()) {
        out.push((format!("ev_{f}_per_op"), per_op(v as f64)));
    }
    out
}

/// The metrics that are the virtual clock under `-icount` (QEMU's count of
/// executions), and so count each iteration of a rep string instruction.
const CLOCK_METRICS: [&str; 2] = ["instr_per_op", "minstr"];

/// A virtual-clock figure with each rep string instruction counted once:
/// scaled by the share of QEMU's executions in the line's regions that the
/// plugin counts as instructions (`insns` of `insns + str_folded`). When
/// the regions are the measured window (the bench module's workloads) that
/// is the window's count less its folded executions; when they are wider
/// (a real program's run around its own timing) it assumes the folded
/// share is the same inside the window as around it.
fn fold_clock(value: f64, sum: &Counts) -> f64 {
    let all = sum.insns + sum.str_folded;
    if sum.str_folded == 0 || all == 0 {
        return value;
    }
    value * sum.insns as f64 / all as f64
}

/// Reads every log and groups the rounds. Malformed result lines are
/// reported on stderr and skipped; no result line at all is an error.
/// `meta` holds the --meta pairs; the ones it lacks get defaults.
/// `renames` name allocators per log; one naming no given log is an error.
/// `counts` give logs their counts files, priced with `profile` (needed
/// when `counts` is not empty); meta.profile defaults to its name.
pub fn parse_logs(
    logs: &[PathBuf],
    mut meta: BTreeMap<String, String>,
    renames: &[Rename],
    counts: &[CountsArg],
    profile: Option<&Profile>,
) -> Result<Bench, String> {
    if let Some(r) = renames.iter().find(|r| !logs.contains(&r.log)) {
        return Err(format!(
            "--rename {}:{}={}: {} is not one of the logs",
            r.log.display(),
            r.from,
            r.to,
            r.log.display()
        ));
    }
    for (i, c) in counts.iter().enumerate() {
        let arg = format!("--counts {}={}", c.log.display(), c.file.display());
        if !logs.contains(&c.log) {
            return Err(format!("{arg}: {} is not one of the logs", c.log.display()));
        }
        if counts[..i].iter().any(|o| o.log == c.log) {
            return Err(format!("{arg}: a second counts file for that log"));
        }
    }
    let profile = match (counts.is_empty(), profile) {
        (true, _) => None,
        (false, Some(p)) => Some(p),
        (false, None) => return Err("--counts needs a profile".into()),
    };
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut groups: Vec<(Key, Vec<(u64, f64)>)> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for log in logs {
        let rename: HashMap<&str, &str> = renames
            .iter()
            .filter(|r| r.log == *log)
            .map(|r| (r.from.as_str(), r.to.as_str()))
            .collect();
        let by_id = match counts.iter().find(|c| c.log == *log) {
            Some(c) => {
                let cf = read_counts(&c.file)?;
                if let (true, Some(p)) = (cf.model, profile) {
                    p.fits(cf.core)
                        .map_err(|e| format!("{}: {e}", c.file.display()))?;
                }
                Some((cf, &c.file))
            }
            None => None,
        };
        let mut warned = false;
        let bytes =
            std::fs::read(log).map_err(|e| format!("cannot read {}: {e}", log.display()))?;
        // Console logs can hold stray non-UTF-8 bytes; result lines do not.
        let text = String::from_utf8_lossy(&bytes);
        for (n, raw) in text.lines().enumerate() {
            let Some(pos) = raw.find(TAG) else { continue };
            let mut line = match parse_line(&raw[pos + TAG.len()..]) {
                Ok(l) => l,
                Err(why) => {
                    eprintln!(
                        "rsbench: warning: {}:{}: malformed result line skipped ({why})",
                        log.display(),
                        n + 1
                    );
                    continue;
                }
            };
            if let Some(to) = rename.get(line.key.allocator.as_str()) {
                line.key.allocator = to.to_string();
            }
            if !modes.contains(&line.key.mode) {
                modes.push(line.key.mode.clone());
            }
            let mut extra = Vec::new();
            match (&line.model, &by_id) {
                (None, _) => {}
                (Some((ids, ops)), Some((cf, file))) => match region_sum(&cf.by_id, ids) {
                    Ok(sum) => {
                        if CLOCK_METRICS.contains(&line.key.metric.as_str()) {
                            line.value = fold_clock(line.value, &sum);
                        }
                        if cf.model {
                            if let Some(p) = profile {
                                extra = model_measures(&sum, *ops, p);
                            }
                        }
                    }
                    Err(missing) => {
                        let missing: Vec<String> = missing.iter().map(u64::to_string).collect();
                        eprintln!(
                            "rsbench: warning: {}:{}: mark id {} ends no region in {}: \
                             no model measures for this line, its value as the clock says",
                            log.display(),
                            n + 1,
                            missing.join(", "),
                            file.display()
                        );
                    }
                },
                (Some(_), None) => {
                    if !warned {
                        eprintln!(
                            "rsbench: warning: {}: result lines with marks= but no \
                             --counts {}=FILE: no model measures (instr_per_op kept)",
                            log.display(),
                            log.display()
                        );
                        warned = true;
                    }
                }
            }
            let mut push = |key: Key, value: f64| {
                let i = *index.entry(key.clone()).or_insert_with(|| {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                });
                groups[i].1.push((line.round, value));
            };
            push(line.key.clone(), line.value);
            for (metric, value) in extra {
                let key = Key {
                    metric,
                    ..line.key.clone()
                };
                push(key, value);
            }
        }
    }
    if groups.is_empty() {
        let names: Vec<String> = logs.iter().map(|l| l.display().to_string()).collect();
        return Err(format!("no result lines in {}", names.join(", ")));
    }
    meta.entry("mode".into()).or_insert_with(|| modes.join(","));
    meta.entry("date".into()).or_insert_with(now_utc);
    if let Some(p) = profile {
        meta.entry("profile".into())
            .or_insert_with(|| p.name.clone());
    }
    for k in ["kernel", "qemu", "cpus", "nodes", "git"] {
        meta.entry(k.into()).or_insert_with(|| "unknown".into());
    }
    let results = groups
        .into_iter()
        .map(|(k, mut rounds)| {
            // Stable: repeated round numbers (several logs) keep log order.
            rounds.sort_by_key(|&(r, _)| r);
            let rounds: Vec<f64> = rounds.into_iter().map(|(_, v)| v).collect();
            let (median, min, max) = summarize(&rounds);
            Measure {
                workload: k.workload,
                op: k.op,
                size: k.size,
                batch: k.batch,
                cpus: k.cpus,
                allocator: k.allocator,
                variant: k.variant,
                mode: k.mode,
                metric: k.metric,
                rounds,
                median,
                min,
                max,
            }
        })
        .collect();
    Ok(Bench { meta, results })
}

/// The current time as "YYYY-MM-DDTHH:MM:SSZ", the default meta.date.
fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86400) as i64, secs % 86400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_keeps_its_equals_sign() {
        let l = parse_line(
            "mode=icount workload=remote op=object size=64 batch=16 cpus=2 alloc=rslub \
             variant=max_empty=8 metric=instr_per_op round=0 value=512 extra=1",
        )
        .unwrap();
        assert_eq!(l.key.variant.as_deref(), Some("max_empty=8"));
        assert_eq!(l.value, 512.0);
    }

    #[test]
    fn missing_and_bad_keys_are_errors() {
        let base = "mode=icount workload=pair op=pair size=64 batch=1 cpus=1 alloc=slub \
                    variant=- metric=instr_per_op round=0";
        assert!(parse_line(base).unwrap_err().contains("value"));
        assert!(parse_line(&format!("{base} value=nan")).is_err());
        assert!(parse_line(&format!("{base} value=1 junk")).is_err());
        assert!(parse_line(&format!("{base} value=1"))
            .unwrap()
            .key
            .variant
            .is_none());
    }

    #[test]
    fn model_keys_marks_and_n() {
        let base = "mode=model workload=remote op=object size=64 batch=10 cpus=2 alloc=slub \
                    variant=- metric=instr_per_op round=0 value=150";
        let l = parse_line(&format!("{base} n=20 marks=3+4")).unwrap();
        assert_eq!(l.model, Some((vec![3, 4], 20)));
        let l = parse_line(&format!("{base} n=20 marks=18446744073709551615")).unwrap();
        assert_eq!(l.model, Some((vec![u64::MAX], 20)));
        assert!(parse_line(base).unwrap().model.is_none());
        let alone = parse_line(&format!("{base} n=20")).unwrap();
        assert!(alone.model.is_none(), "n= alone is ignored");
        for bad in [
            "n=20 marks=3+x",
            "n=20 marks=",
            "n=0 marks=3",
            "n=x marks=3",
            "marks=3",
        ] {
            assert!(parse_line(&format!("{base} {bad}")).is_err(), "{bad}");
        }
    }

    #[test]
    fn model_measures_sum_each_id_once_and_name_the_missing() {
        let text = std::fs::read_to_string(PROFILES).unwrap();
        let p = Profile::from_toml(&text, "server").unwrap();
        let c = |insns, l1| Counts {
            insns,
            l1,
            ..Default::default()
        };
        let by_id = HashMap::from([(3, c(100, 10)), (4, c(300, 30))]);
        let sum = region_sum(&by_id, &[3, 4, 4]).unwrap();
        assert_eq!(sum, c(400, 40));
        let m = model_measures(&sum, 4, &p);
        let get = |k: &str| m.iter().find(|(n, _)| n == k).unwrap().1;
        assert_eq!(get("ev_insns_per_op"), 100.0);
        assert_eq!(get("ev_l1_per_op"), 10.0);
        assert_eq!(get("cycles_per_op"), p.price(&c(400, 40)) / 4.0);
        assert_eq!(m.len(), 1 + FIELDS.len());
        assert_eq!(m[0].0, "cycles_per_op");
        assert_eq!(m[15].0, "ev_io_per_op");
        assert_eq!(m[FIELDS.len()].0, "ev_l1_chain_per_op");
        assert_eq!(region_sum(&by_id, &[3, 7, 9]), Err(vec![7, 9]));
    }

    // A 4 KiB rep stosb in a window of 4,120 clock ticks (4,096 of them its
    // executions after the first): one instruction, 25 in all.
    #[test]
    fn the_clock_counts_a_rep_once() {
        let sum = Counts {
            insns: 24 + 1,
            str_folded: 4095,
            ..Default::default()
        };
        assert_eq!(fold_clock(4120.0, &sum), 25.0);
        // Nothing folded: the clock's figure as it is.
        let plain = Counts {
            insns: 500,
            ..Default::default()
        };
        assert_eq!(fold_clock(123.0, &plain), 123.0);
        // A region twice the window: the same share taken off.
        assert_eq!(fold_clock(2060.0, &sum), 12.5);
    }

    #[test]
    fn a_counts_file_says_whether_the_model_ran() {
        let dir = std::env::temp_dir().join(format!("rsbench-counts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.txt");
        let body = "mark seq=1 id=5 vcpu=0 by=0 insns=7 str_folded=3\n";
        std::fs::write(
            &f,
            format!("# costmodel counts v3 vcpus=1 model=off\n{body}"),
        )
        .unwrap();
        let cf = read_counts(&f).unwrap();
        assert!(!cf.model);
        assert_eq!(cf.by_id[&5].str_folded, 3);
        std::fs::write(
            &f,
            format!("# costmodel counts v3 vcpus=1 model=on\n{body}"),
        )
        .unwrap();
        assert!(read_counts(&f).unwrap().model);
        // A v1 file (no model= in its header) is a model run's.
        std::fs::write(&f, format!("# costmodel counts v1 vcpus=1\n{body}")).unwrap();
        assert!(read_counts(&f).unwrap().model);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
