// SPDX-License-Identifier: GPL-2.0
//! Result lines out of VM console logs. The guest module prints one line per
//! round, `rslub_bench: result key=value ...`, somewhere in a console full of
//! other text (and maybe after a printk timestamp); rounds of the same point
//! are grouped into one `Measure`, in the order the points first appear.

use crate::model::{summarize, Bench, Measure};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

const TAG: &str = "rslub_bench: result ";

/// One parsed result line.
#[derive(Debug)]
struct Line {
    key: Key,
    round: u64,
    value: f64,
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

/// Reads every log and groups the rounds. Malformed result lines are
/// reported on stderr and skipped; no result line at all is an error.
/// `meta` holds the --meta pairs; the ones it lacks get defaults.
/// `renames` name allocators per log; one naming no given log is an error.
pub fn parse_logs(
    logs: &[PathBuf],
    mut meta: BTreeMap<String, String>,
    renames: &[Rename],
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
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut groups: Vec<(Key, Vec<(u64, f64)>)> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for log in logs {
        let rename: HashMap<&str, &str> = renames
            .iter()
            .filter(|r| r.log == *log)
            .map(|r| (r.from.as_str(), r.to.as_str()))
            .collect();
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
            let i = *index.entry(line.key.clone()).or_insert_with(|| {
                groups.push((line.key, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push((line.round, line.value));
        }
    }
    if groups.is_empty() {
        let names: Vec<String> = logs.iter().map(|l| l.display().to_string()).collect();
        return Err(format!("no result lines in {}", names.join(", ")));
    }
    meta.entry("mode".into()).or_insert_with(|| modes.join(","));
    meta.entry("date".into()).or_insert_with(now_utc);
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
}
