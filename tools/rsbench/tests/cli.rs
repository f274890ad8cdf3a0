// SPDX-License-Identifier: GPL-2.0
//! rsbench against hand-made console logs (tests/fixtures/README says what
//! each holds): parse, table, compare and plot, run as the built binary.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A fresh, empty directory for one test.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rsbench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rsbench"))
        .args(args)
        .output()
        .expect("rsbench runs")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Exit code 1 and one line on stderr containing `what`.
fn fails(args: &[&str], what: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(what), "{err}");
}

/// Parses `logs` into a new results directory named `name`.
fn parse_into(name: &str, logs: &[&str], meta: &[&str]) -> PathBuf {
    let dir = tmp(name);
    let json = dir.join("bench.json").display().to_string();
    let mut args = vec!["parse", "-o", &json];
    for m in meta {
        args.extend(["--meta", m]);
    }
    let logs: Vec<String> = logs.iter().map(|l| fixture(l)).collect();
    args.extend(logs.iter().map(String::as_str));
    ok(&args);
    dir
}

fn load(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("bench.json")).unwrap()).unwrap()
}

fn find<'a>(v: &'a Value, pred: &[(&str, Value)]) -> &'a Value {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| pred.iter().all(|(k, x)| r[*k] == *x))
        .unwrap_or_else(|| panic!("no result {pred:?}"))
}

/// The whitespace-separated fields of the first line of `section` (a
/// section title's "workload / metric") whose first field is `op` and
/// second `size`.
fn row(out: &str, section: &str, op: &str, size: &str) -> Vec<String> {
    let start = out.find(section).unwrap_or_else(|| panic!("{section}"));
    out[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .find(|f| f[0] == op && f[1] == size)
        .unwrap_or_else(|| panic!("no row {op} {size} in {section}"))
}

#[test]
fn parse_groups_rounds_in_round_order() {
    let dir = parse_into("group", &["run-a.log"], &["git=abc123", "kernel=7.3.0"]);
    let v = load(&dir);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 51, "points in run-a.log");
    // Log order: the pair workload comes first, slub before rslub.
    assert_eq!(results[0]["workload"], "pair");
    assert_eq!(results[0]["allocator"], "slub");
    assert_eq!(results[1]["allocator"], "rslub");
    let slub = &results[0];
    assert_eq!(slub["rounds"], serde_json::json!([250.0, 240.0, 245.0]));
    assert_eq!(slub["median"], 245.0, "odd count: the middle one");
    assert_eq!(
        (slub["min"].as_f64(), slub["max"].as_f64()),
        (Some(240.0), Some(250.0))
    );
    assert_eq!(slub["variant"], Value::Null);
    let rslub = &results[1];
    assert_eq!(
        rslub["rounds"],
        serde_json::json!([200.0, 210.0, 205.0, 208.0])
    );
    assert_eq!(rslub["median"], 206.5, "even count: mean of the middle two");
    // The unknown ticks= key does not split or decorate the group.
    let rep = find(
        &v,
        &[
            ("workload", "repeat".into()),
            ("op", "alloc".into()),
            ("size", 64.into()),
            ("allocator", "rslub".into()),
        ],
    );
    assert_eq!(rep["rounds"].as_array().unwrap().len(), 3);
    assert!(rep.get("ticks").is_none());
    assert_eq!(v["meta"]["mode"], "icount,wall", "modes seen, in order");
    assert_eq!(v["meta"]["git"], "abc123");
    assert_eq!(v["meta"]["kernel"], "7.3.0");
}

#[test]
fn parse_warns_about_a_malformed_line_by_number() {
    let dir = tmp("malformed");
    let json = dir.join("bench.json").display().to_string();
    let out = run(&["parse", "-o", &json, &fixture("run-a.log")]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("run-a.log:16:") && err.contains("size=sixty"),
        "{err}"
    );
}

#[test]
fn parse_keeps_the_equals_sign_of_a_variant_and_meta_override() {
    let dir = parse_into("variant", &["suite.log"], &["mode=suite", "nodes=2"]);
    let v = load(&dir);
    let r = find(
        &v,
        &[("variant", "max_empty=8".into()), ("size", 64.into())],
    );
    assert_eq!(r["allocator"], "rslub");
    assert_eq!(r["batch"], 16);
    assert_eq!(r["cpus"], 2);
    assert_eq!(v["meta"]["mode"], "suite", "--meta beats the modes seen");
    assert_eq!(v["meta"]["nodes"], "2");
}

#[test]
fn parse_merges_logs_and_to_stdout() {
    let out = ok(&["parse", &fixture("run-a.log"), &fixture("run-b.log")]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let pair = find(
        &v,
        &[("workload", "pair".into()), ("allocator", "rslub".into())],
    );
    // run-a's four rounds and run-b's three, by round number.
    assert_eq!(
        pair["rounds"],
        serde_json::json!([200.0, 180.0, 210.0, 182.0, 205.0, 181.0, 208.0])
    );
}

#[test]
fn parse_errors() {
    fails(&["parse", &fixture("no-results.log")], "no result lines");
    fails(&["parse", &fixture("missing.log")], "cannot read");
}

#[test]
fn table_ratio_diff_significance_and_floor() {
    let dir = parse_into("table", &["run-a.log"], &["git=abc123"]);
    let out = ok(&["table", dir.to_str().unwrap()]);
    // slub 240..250, rslub 200..210: disjoint, so significant.
    assert_eq!(
        row(&out, "/ pair /", "pair", "64"),
        ["pair", "64", "1", "1", "245", "207", "0.843", "-15.71%*", "150", "1.377"]
    );
    // slub 100..110, rslub 104..112 overlap: no star.
    let r = row(&out, "/ repeat /", "alloc", "8");
    assert_eq!(r[4..8], ["105", "108", "1.029", "+2.86%"]);
    let r = row(&out, "/ repeat /", "alloc", "256");
    assert_eq!(r[6..8], ["0.853", "-14.69%*"]);
    // Throughput in millions; bulk has no floor, so no floor columns.
    assert_eq!(
        row(&out, "/ parallel /", "pair", "64")[4..6],
        ["2.71M", "3.16M"]
    );
    let bulk = &out[out.find("/ bulk /").unwrap()..];
    let bulk_head = bulk.lines().nth(1).unwrap();
    assert!(!bulk_head.contains("floor"), "{bulk_head}");
    // Churn: the ideal on every row of its size, not a row of its own.
    let churn = row(&out, "/ churn /", "after_shrink", "64");
    assert_eq!(churn.last().unwrap(), "31.2");
    assert!(!out.contains("\nideal "), "{out}");
    let saved = std::fs::read_to_string(dir.join("table.txt")).unwrap();
    assert_eq!(saved, out, "table.txt is what was printed");
}

#[test]
fn table_of_a_suite_compares_with_the_first_variant() {
    let dir = parse_into("suite", &["suite.log"], &[]);
    let out = ok(&["table", dir.join("bench.json").to_str().unwrap()]);
    assert!(out.contains("baseline rslub[max_empty=0]"), "{out}");
    let head = out.lines().find(|l| l.starts_with("op ")).unwrap();
    let head: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(
        head[4..7],
        ["rslub[max_empty=0]", "rslub[max_empty=8]", "ratio"]
    );
    let r = row(&out, "/ remote /", "object", "64");
    assert_eq!(
        r[4..],
        ["506", "453", "0.895", "-10.47%*", "506", "1.000", "+0.00%"]
    );
    assert!(!dir.join("bench.json").with_file_name("table.txt").exists());
}

#[test]
fn table_errors() {
    let dir = tmp("badjson");
    std::fs::write(dir.join("bench.json"), "{\"meta\": 3}").unwrap();
    fails(&["table", dir.to_str().unwrap()], "not a bench.json");
    fails(&["table", "/nonexistent/rsbench"], "cannot read");
}

#[test]
fn compare_is_b_over_a_and_lists_the_unmatched() {
    let a = parse_into("cmp-a", &["run-a.log"], &["git=abc123", "date=2026-01-01"]);
    let b = parse_into("cmp-b", &["run-b.log"], &["git=def456", "date=2026-01-02"]);
    let out = ok(&[
        "compare",
        a.to_str().unwrap(),
        b.join("bench.json").to_str().unwrap(),
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("A: ") && lines[0].ends_with("(date 2026-01-01 git abc123)"));
    assert!(lines[1].starts_with("B: ") && lines[1].ends_with("(date 2026-01-02 git def456)"));
    let pick = |alloc: &str, op: &str, size: &str| -> Vec<String> {
        out.lines()
            .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
            .find(|f| f.len() == 9 && f[0] == op && f[1] == size && f[4] == alloc)
            .unwrap_or_else(|| panic!("no {alloc} {op} {size}"))
    };
    // B's rslub is faster: ratio below 1, negative, disjoint rounds.
    assert_eq!(
        pick("rslub", "pair", "64")[5..],
        ["207", "181", "0.877", "-12.35%*"]
    );
    assert_eq!(pick("slub", "pair", "64")[7..], ["1.000", "+0.00%"]);
    // A's 130..132 inside B's 125..140: not significant.
    assert_eq!(pick("rslub", "alloc", "64")[8], "+0.00%");
    let only_a = out.find("only in A:").unwrap();
    let only_b = out.find("only in B:").unwrap();
    assert!(only_a < only_b);
    let a_part = &out[only_a..only_b];
    assert!(a_part.contains("icount churn ideal size=64 batch=1 cpus=1 ideal pages"));
    assert!(!a_part.contains("size=32768"));
    assert_eq!(
        out[only_b..].lines().nth(1).unwrap().trim(),
        "icount repeat alloc size=32768 batch=1 cpus=1 rslub instr_per_op"
    );
}

#[test]
fn compare_of_a_missing_run_fails() {
    let a = parse_into("cmp-missing", &["run-b.log"], &[]);
    fails(
        &["compare", a.to_str().unwrap(), "/nonexistent/rsbench"],
        "cannot read",
    );
}

#[test]
fn plot_writes_pngs_and_a_report_that_embeds_them() {
    let dir = parse_into("plot", &["run-a.log"], &["git=abc123"]);
    let out = ok(&["plot", dir.to_str().unwrap()]);
    let pngs: Vec<&str> = out.lines().filter(|l| l.ends_with(".png")).collect();
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for want in [
        "cost-icount-repeat-alloc.png",
        "cost-icount-repeat-free.png",
        "cost-icount-bulk-object-b16.png",
        "cost-icount-bulk-object-b64.png",
        "scaling-wall-parallel.png",
        "churn-icount-churn.png",
    ] {
        assert!(
            pngs.iter().any(|p| p.ends_with(want)),
            "{want} not in {pngs:?}"
        );
        let bytes = std::fs::read(dir.join(want)).unwrap();
        assert!(bytes.len() > 2000, "{want}: {} bytes", bytes.len());
        assert_eq!(bytes[..8], *b"\x89PNG\r\n\x1a\n", "{want}");
        assert!(
            report.contains(&format!("]({want})")),
            "{want} not embedded"
        );
    }
    assert_eq!(pngs.len(), 6, "one pair point has no size axis: {pngs:?}");
    assert!(report.starts_with("# "));
    assert!(report.contains("| git | abc123 |"));
    assert!(
        report.contains("```text\nrsbench: "),
        "the table in a code block"
    );
    assert!(report.contains("icount: instructions, deterministic"));
    assert!(report.contains("wall: TCG emulation time, noisy"));
}

#[test]
fn plot_without_its_font_names_the_package() {
    let dir = parse_into("nofont", &["run-b.log"], &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_rsbench"))
        .args(["plot", dir.to_str().unwrap()])
        .env("RSBENCH_FONT", "/nonexistent/DejaVuSans.ttf")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fonts-dejavu-core"));
    fails(&["plot", &fixture("run-a.log")], "not a results directory");
}

#[test]
fn real_workloads_table_counters_and_bars() {
    let dir = parse_into("real", &["real.log"], &[]);
    let out = ok(&["table", dir.to_str().unwrap()]);
    // The A/B: one row per program, rslub against slub.
    let r = row(&out, "real / minstr", "hb-proc-pipe", "0");
    assert_eq!(r[4..8], ["1005", "905", "0.900", "-9.95%*"], "{r:?}");
    let r = row(&out, "real / slab_kb", "iperf3-udp", "0");
    assert_eq!(r[4..6], ["30001", "30101"], "{r:?}");
    // The counters: no A/B sections of their own, a row per program.
    assert!(!out.contains("== counters / counters /"), "{out}");
    let r = row(&out, "all served caches: where", "hb-proc-pipe", "14");
    assert_eq!(r[2..6], ["10000", "90.0", "10000", "80.0"], "{r:?}");
    let r = row(&out, "all served caches: Cmpxchg", "iperf3-udp", "20000");
    assert_eq!(r[2..6], ["30", "12", "1.50", "0.60"], "{r:?}");
    let r = row(&out, "kmalloc-256: Cmpxchg", "hb-proc-pipe", "2000");
    assert_eq!(r[2..4], ["3", "1"], "{r:?}");
    // Bars per (mode, metric), nothing else drawn.
    let files = ok(&["plot", dir.to_str().unwrap()]);
    let pngs: Vec<&str> = files.lines().filter(|l| l.ends_with(".png")).collect();
    assert_eq!(pngs.len(), 2, "{pngs:?}");
    assert!(pngs[0].ends_with("real-icount-minstr.png"), "{pngs:?}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("](real-icount-slab_kb.png)"));
    assert!(report.contains("relative to the in-tree SLUB's"));
}

#[test]
fn classic_real_judges_the_kernels_against_their_aa_noise() {
    let dir = tmp("classic-real");
    let json = dir.join("bench.json").display().to_string();
    let (k612, k73) = (
        fixture("classic-real-6.12.log"),
        fixture("classic-real-7.3.log"),
    );
    let renames = [
        format!("{k612}:slub=classic"),
        format!("{k612}:slub-aa=classic-aa"),
        format!("{k73}:slub=sheaves"),
        format!("{k73}:slub-aa=sheaves-aa"),
    ];
    let mut args = vec!["parse", "-o", &json];
    for x in &renames {
        args.extend(["--rename", x]);
    }
    args.extend([k612.as_str(), k73.as_str()]);
    ok(&args);
    let out = ok(&["table", dir.to_str().unwrap()]);
    // The main table: classic, sheaves and rslub, no A/A columns.
    let head: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("op "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        head[4..],
        ["classic", "sheaves", "ratio", "diff", "rslub", "ratio", "diff"],
        "{out}"
    );
    let r = row(&out, "real / minstr", "hb-proc-pipe", "0");
    assert_eq!(r[4..7], ["1005", "1105", "1.100"], "{r:?}");
    // Classic against sheaves: (mode, op, metric) -> the row's fields.
    let section = &out[out.find("classic against sheaves").expect("the section")..];
    let kernel_row = |op: &str, metric: &str| -> Vec<String> {
        section
            .lines()
            .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
            .find(|f| f.len() > 3 && f[1] == op && f[3] == metric)
            .unwrap_or_else(|| panic!("no row {op} {metric} in {section}"))
    };
    let r = kernel_row("hb-proc-pipe", "minstr");
    assert_eq!(r[0], "icount");
    assert_eq!(r[4..8], ["1.100", "0.2%", "0.1%", "3"], "{r:?}");
    assert_eq!(r[8..], ["sheaves", "dearer", "0.947"], "{r:?}");
    // 1 % dearer, inside classic's 3 % A/A noise.
    let r = kernel_row("brk1", "minstr");
    assert_eq!(r[4..6], ["1.010", "3.0%"], "{r:?}");
    assert_eq!(r[8..10], ["within", "A/A"], "{r:?}");
    // rslub's own A/A section needs an rslub-aa side: none here.
    assert!(!out.contains("aa/rslub"), "{out}");
    // The bars: relative to classic, without the A/A series.
    ok(&["plot", dir.to_str().unwrap()]);
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("](real-icount-minstr.png)"), "{report}");
    assert!(
        report.contains("relative to the classic SLUB's"),
        "{report}"
    );
}

#[test]
fn two_kernels_rename_and_compare_with_classic() {
    let dir = tmp("classic");
    let json = dir.join("bench.json").display().to_string();
    let (k612, k73) = (fixture("classic-6.12.log"), fixture("classic-7.3.log"));
    let r = |log: &str, pair: &str| format!("{log}:{pair}");
    let renames = [
        r(&k612, "slub=classic"),
        r(&k612, "floor=floor-6.12"),
        r(&k73, "slub=sheaves"),
        r(&k73, "floor=floor-7.3"),
    ];
    let mut args = vec!["parse", "-o", &json];
    for x in &renames {
        args.extend(["--rename", x]);
    }
    args.extend([k612.as_str(), k73.as_str()]);
    ok(&args);
    let v = load(&dir);
    find(&v, &[("allocator", "classic".into()), ("size", 64.into())]);
    find(&v, &[("allocator", "sheaves".into()), ("size", 256.into())]);
    let out = ok(&["table", dir.to_str().unwrap()]);
    assert!(out.contains("baseline classic"), "{out}");
    let head: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("op "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        head[4..],
        [
            "classic",
            "sheaves",
            "ratio",
            "diff",
            "rslub",
            "ratio",
            "diff",
            "floor-6.12",
            "floor-7.3",
            "ratio",
            "diff"
        ]
    );
    // rslub and sheaves against classic; floor-7.3 against floor-6.12.
    assert_eq!(
        row(&out, "/ pair /", "pair", "64")[4..],
        [
            "120", "160", "1.333", "+33.33%*", "99", "0.825", "-17.50%*", "38", "38", "1.000",
            "+0.00%"
        ]
    );
    // A rename of a log that was not given, or malformed, is refused.
    fails(
        &["parse", "--rename", "other.log:slub=classic", &k612],
        "is not one of the logs",
    );
    let out = run(&["parse", "--rename", "slub=classic", &k612]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not LOG:FROM=TO"));
    // The plots put classic first and draw every allocator.
    ok(&["plot", dir.to_str().unwrap()]);
    assert!(dir.join("report.md").exists());
}

#[test]
fn kserved_is_compared_with_the_in_tree_kmalloc() {
    let dir = parse_into("kmalloc", &["kmalloc.log"], &[]);
    let out = ok(&["table", &dir.display().to_string()]);
    let r = row(&out, "pair / instr_per_op", "pair", "64");
    // op size batch cpus slub kmalloc ratio diff kserved ratio diff
    assert_eq!(r[4], "166", "{out}");
    assert_eq!((r[5].as_str(), r[6].as_str()), ("200", "1.205"), "{out}");
    assert_eq!((r[8].as_str(), r[9].as_str()), ("150", "0.750"), "{out}");
}

/// Parses model.log with model.counts into a new results directory, priced
/// by `profile` of model-profiles.toml (None: the default, server of the
/// shipped file), with `extra` arguments; returns it and stderr.
fn parse_model(name: &str, profile: Option<&str>, extra: &[&str]) -> (PathBuf, String) {
    let dir = tmp(name);
    let json = dir.join("bench.json").display().to_string();
    let (log, counts) = (fixture("model.log"), fixture("model.counts"));
    let (pair, profiles) = (format!("{log}={counts}"), fixture("model-profiles.toml"));
    let mut args = vec!["parse", "-o", &json, "--counts", &pair];
    if let Some(p) = profile {
        args.extend(["--profiles", &profiles, "--profile", p]);
    }
    args.extend(extra);
    args.push(&log);
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {err}");
    (dir, err)
}

fn point<'a>(v: &'a Value, workload: &str, alloc: &str, metric: &str) -> &'a Value {
    find(
        v,
        &[
            ("workload", workload.into()),
            ("allocator", alloc.into()),
            ("metric", metric.into()),
        ],
    )
}

fn close(x: &Value, want: f64) -> bool {
    (x.as_f64().unwrap() - want).abs() < 1e-9
}

// model.counts holds 2 vCPUs' lines at each mark; the expected values are
// its counts summed by hand, times model-profiles.toml's flat prices
// (dram_local: 50 ns at 2 GHz = 100 cycles), divided by n.
#[test]
fn model_parse_sums_the_marked_regions_and_prices_them() {
    let (dir, err) = parse_model("model", Some("flat"), &[]);
    let v = load(&dir);
    assert_eq!(v["meta"]["profile"], "flat");
    assert_eq!(v["meta"]["mode"], "model");
    // pair, slub, marks=1, n=10: vCPU 0 insns 1600 l1 500 l2 10 llc 2
    // dram_local 1 writeback 3, vCPU 1 insns 50 l1 20. Cycles:
    // 1650 + 520*2 + 10*10 + 2*40 + 1*100 = 2970, / 10.
    let want = [
        ("cycles_per_op", 297.0),
        ("ev_insns_per_op", 165.0),
        ("ev_l1_per_op", 52.0),
        ("ev_l2_per_op", 1.0),
        ("ev_llc_per_op", 0.2),
        ("ev_dram_local_per_op", 0.1),
        ("ev_writeback_per_op", 0.3),
        ("ev_cx16_unlocked_per_op", 0.0),
    ];
    for (metric, x) in want {
        let m = point(&v, "pair", "slub", metric);
        assert!(close(&m["median"], x), "{metric}: {m}");
    }
    // The line's own measure is kept, from its value=.
    assert_eq!(point(&v, "pair", "slub", "instr_per_op")["median"], 160.0);
    // One measure per counted event, and the price, for every model line.
    let metrics: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"] == "pair" && r["allocator"] == "rslub")
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    let fields = "insns l1 l2 llc dram_local dram_remote xfer_local xfer_remote inval \
                  writeback locked unlocked cx16_locked cx16_unlocked io str_insns str_bytes \
                  str_elems l1_in_insn rmw_xfer str_folded hid_l1 hid_l2 hid_llc \
                  hid_dram_local hid_dram_remote hid_xfer_local hid_xfer_remote popf cli sti wait span \
                  l1_chain";
    let mut names = vec!["instr_per_op".to_string(), "cycles_per_op".to_string()];
    names.extend(fields.split(' ').map(|f| format!("ev_{f}_per_op")));
    assert_eq!(metrics, names);
    // rslub pair, marks=2: 1250 + 420*2 + 4*10 + 20 cx16_unlocked*15 = 2430.
    let r = point(&v, "pair", "rslub", "cycles_per_op");
    assert!(close(&r["median"], 243.0), "{r}");
    let r = point(&v, "pair", "rslub", "ev_cx16_unlocked_per_op");
    assert!(close(&r["median"], 2.0), "{r}");
    // remote, slub, marks=3+4, n=20: id 3 ends one region, id 4 two (the
    // regions between them end at id 1000, not counted), both vCPUs each:
    // insns 3000 l1 810 l2 6 llc 2 dram_local 2 dram_remote 1 xfer_local 16
    // xfer_remote 2 inval 16 writeback 4 locked 4 cx16_locked 8 io 1.
    // Cycles: 3000 + 1620 + 60 + 80 + 200 + 200 + 800 + 300 + 80 + 240.
    let want = [
        ("cycles_per_op", 329.0),
        ("ev_insns_per_op", 150.0),
        ("ev_l1_per_op", 40.5),
        ("ev_dram_remote_per_op", 0.05),
        ("ev_xfer_local_per_op", 0.8),
        ("ev_xfer_remote_per_op", 0.1),
        ("ev_inval_per_op", 0.8),
        ("ev_writeback_per_op", 0.2),
        ("ev_locked_per_op", 0.2),
        ("ev_cx16_locked_per_op", 0.4),
        ("ev_io_per_op", 0.05),
    ];
    for (metric, x) in want {
        let m = point(&v, "remote", "slub", metric);
        assert!(close(&m["median"], x), "{metric}: {m}");
    }
    // rslub remote: round 0 (marks=6+7) priced, 3780 / 20; round 1's
    // marks=8+99 names an id that ends no region: warned, not priced, its
    // instr_per_op kept.
    let r = point(&v, "remote", "rslub", "cycles_per_op");
    assert_eq!(r["rounds"], serde_json::json!([189.0]));
    let r = point(&v, "remote", "rslub", "instr_per_op");
    assert_eq!(r["rounds"], serde_json::json!([100.0, 101.0]));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("model.log:9:") && err.contains("mark id 99 ends no region"),
        "{err}"
    );
}

#[test]
fn model_parse_profiles_default_other_and_meta() {
    // The shipped profiles file and its server profile by default: slub
    // pair's counts (as above) at its prices.
    let (dir, _) = parse_model("model-default", None, &[]);
    let v = load(&dir);
    assert_eq!(v["meta"]["profile"], "server");
    let text = include_str!("../../costmodel/profiles.toml");
    let server = costmodel_model::profile::Profile::from_toml(text, "server").unwrap();
    let c = costmodel_model::counts::Counts {
        insns: 1650,
        l1: 520,
        l2: 10,
        llc: 2,
        dram_local: 1,
        writeback: 3,
        ..Default::default()
    };
    let r = point(&v, "pair", "slub", "cycles_per_op");
    assert!(close(&r["median"], server.price(&c) / 10.0), "{r}");
    // Another profile of another file: every price doubled.
    let (dir, _) = parse_model("model-double", Some("double"), &["--meta", "profile=mine"]);
    let v = load(&dir);
    assert_eq!(v["meta"]["profile"], "mine", "--meta wins");
    let r = point(&v, "remote", "slub", "cycles_per_op");
    assert!(close(&r["median"], 658.0), "{r}");
}

#[test]
fn model_parse_without_counts_warns_once_and_keeps_instructions() {
    let dir = tmp("model-nocounts");
    let json = dir.join("bench.json").display().to_string();
    let out = run(&["parse", "-o", &json, &fixture("model.log")]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("model.log: result lines with marks= but no --counts"));
    let v = load(&dir);
    let results = v["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        8,
        "one instr_per_op point per model line's point"
    );
    assert!(results.iter().all(|r| r["metric"] == "instr_per_op"));
    assert!(v["meta"].get("profile").is_none());
}

#[test]
fn model_parse_errors() {
    let (log, counts) = (fixture("model.log"), fixture("model.counts"));
    let other = format!("{}={counts}", fixture("run-a.log"));
    fails(
        &["parse", "--counts", &other, &log],
        "is not one of the logs",
    );
    let dir = tmp("model-bad");
    let bad = dir.join("bad.counts");
    std::fs::write(&bad, "# header\nmark seq=1 id=x vcpu=0\n").unwrap();
    let pair = format!("{log}={}", bad.display());
    fails(&["parse", "--counts", &pair, &log], "bad.counts:2: 'id=x'");
    let pair = format!("{log}={counts}");
    fails(
        &["parse", "--counts", &pair, "--profile", "nope", &log],
        "no profile 'nope'",
    );
    let twice = ["parse", "--counts", &pair, "--counts", &pair, &log];
    fails(&twice, "a second counts file");
    let out = run(&["parse", "--counts", &log, &log]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not LOG=FILE"));
}

#[test]
fn model_table_cycles_and_one_events_section_per_workload() {
    let (dir, _) = parse_model("model-table", Some("flat"), &[]);
    let out = ok(&["table", dir.to_str().unwrap()]);
    assert!(
        out.contains("cost model: cycles priced by profile flat\n"),
        "{out}"
    );
    assert_eq!(
        row(&out, "pair / cycles_per_op", "pair", "64")[4..],
        ["297", "243", "0.818", "-18.18%*"]
    );
    assert_eq!(
        row(&out, "remote / cycles_per_op", "object", "64")[4..],
        ["329", "189", "0.574", "-42.55%*"]
    );
    // No section per event: one events section per workload.
    assert!(!out.contains("/ ev_"), "{out}");
    assert_eq!(out.matches("/ events: ").count(), 3, "{out}");
    assert_eq!(out.matches("cyc/instr = ").count(), 1, "the legend once");
    // Per allocator: instr, cyc/instr, L1miss, xfer, dram, locked.
    let sec = &out[out.find("remote / events").unwrap()..];
    let over: Vec<&str> = sec.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!((over[0], over[2]), ("slub", "rslub"), "{sec}");
    let head: Vec<&str> = sec.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(
        head[4..10],
        ["instr", "cyc/instr", "L1miss", "xfer", "dram", "locked"]
    );
    // slub: 329/150 cycles per instruction; L1 misses 0.3 + 0.1 + 0.1 +
    // 0.05 + 0.8 + 0.1; transfers 0.8 + 0.1; DRAM 0.1 + 0.05; locked 0.2 +
    // 0.4 (cmpxchg16b). rslub: 189/100; its unlocked cmpxchg16b not locked.
    assert_eq!(
        row(&out, "remote / events", "object", "64")[4..],
        [
            "150", "2.19", "1.45", "0.900", "0.150", "0.600", "0", "0", "100", "1.89", "0.300",
            "0.200", "0.100", "0", "0", "0"
        ]
    );
    assert_eq!(
        row(&out, "repeat / events", "alloc", "64")[4..],
        [
            "110", "1.69", "1.05", "0", "0", "0", "0", "0", "90", "1.79", "0.400", "0", "0", "0",
            "0", "0"
        ]
    );
}

#[test]
fn model_compare_shows_cycles_not_events() {
    let (a, _) = parse_model("model-cmp-a", Some("flat"), &[]);
    let (b, _) = parse_model("model-cmp-b", Some("double"), &[]);
    let out = ok(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        out.contains("A priced by profile flat, B by double"),
        "{out}"
    );
    assert!(!out.contains("ev_"), "{out}");
    assert!(!out.contains("only in"), "{out}");
    let sec = &out[out.find("remote / cycles_per_op").unwrap()..];
    let slub: Vec<&str> = sec
        .lines()
        .find(|l| l.contains(" slub "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(slub[5..], ["329", "658", "2.000", "+100.00%*"]);
    assert!(out.contains("remote / instr_per_op"));
}

#[test]
fn model_plots_cycles_and_instructions_not_events() {
    let (dir, _) = parse_model("model-plot", Some("flat"), &[]);
    let out = ok(&["plot", dir.to_str().unwrap()]);
    let pngs: Vec<&str> = out.lines().filter(|l| l.ends_with(".png")).collect();
    assert_eq!(pngs.len(), 2, "{pngs:?}");
    assert!(
        pngs[0].ends_with("/cost-model-repeat-alloc.png"),
        "{pngs:?}"
    );
    assert!(
        pngs[1].ends_with("/cost-model-repeat-alloc-cycles.png"),
        "{pngs:?}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("in modeled cycles per operation"),
        "{report}"
    );
    assert!(report.contains("with profile flat"), "{report}");
}

// icount-fold.log: an icount boot under the plugin with model=off
// (icount-fold.counts): its values are the virtual clock's, its counts
// the instructions with each rep string instruction once.
#[test]
fn icount_parse_counts_a_rep_once_and_prices_nothing() {
    let dir = tmp("icount-fold");
    let json = dir.join("bench.json").display().to_string();
    let (log, counts) = (fixture("icount-fold.log"), fixture("icount-fold.counts"));
    let pair = format!("{log}={counts}");
    let profiles = fixture("model-profiles.toml");
    let out = run(&[
        "parse",
        "-o",
        &json,
        "--counts",
        &pair,
        "--profiles",
        &profiles,
        "--profile",
        "flat",
        &log,
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert!(err.is_empty(), "{err}");
    let v = load(&dir);
    // slub bulk, n=100, window 30000 ticks: region insns 2000 + 40 with
    // str_folded 28000 + 0 on the two vCPUs: 300 x 2040 / 30040.
    let m = point(&v, "bulk", "slub", "instr_per_op");
    assert!(close(&m["median"], 300.0 * 2040.0 / 30040.0), "{m}");
    // rslub bulk: nothing folded, the clock's figure.
    assert!(close(
        &point(&v, "bulk", "rslub", "instr_per_op")["median"],
        70.0
    ));
    // A model=off file adds no model measures.
    let metrics: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert!(metrics.iter().all(|m| *m == "instr_per_op"), "{metrics:?}");
}
