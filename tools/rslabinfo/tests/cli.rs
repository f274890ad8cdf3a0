// SPDX-License-Identifier: GPL-2.0
//! rslabinfo against saved sysfs trees: tests/fixtures/sys was captured from
//! a VM (scripts/guest/capture-fixtures.sh): one live rslub cache
//! (rslub_bench_hold: 1000 allocated, every third freed) and four in-tree
//! caches (SLUB_STATS off, so no statistics).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sys")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rslabinfo"))
        .args(args)
        .output()
        .expect("rslabinfo runs")
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

fn root() -> String {
    fixtures().display().to_string()
}

#[test]
fn summary_lists_rslub_and_in_tree_caches() {
    let out = ok(&["--sysfs-root", &root()]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Name"));
    let hold = lines
        .iter()
        .find(|l| l.starts_with("rslub:rslub_bench_hold"))
        .unwrap();
    let f: Vec<&str> = hold.split_whitespace().collect();
    assert_eq!(f[1], "667", "objects");
    assert_eq!(f[2], "192", "object size");
    assert_eq!(f[4], "32/0/1", "slabs/partial/cpu");
    assert_eq!(f[5], "21", "objects per slab");
    for name in ["kmalloc-64", "kmalloc-256", "kmem_cache", "dentry"] {
        assert!(lines.iter().any(|l| l.starts_with(name)), "{name} missing");
    }
}

#[test]
fn report_shows_paths_and_cmpxchg_redos() {
    let out = ok(&["--sysfs-root", &root(), "-r", "rslub_bench_hold"]);
    assert!(out.contains("Slabcache: rslub:rslub_bench_hold"));
    let fast = out.lines().find(|l| l.starts_with("Fastpath")).unwrap();
    assert_eq!(
        fast.split_whitespace().collect::<Vec<_>>()[1..3],
        ["968", "333"]
    );
    let slow = out.lines().find(|l| l.starts_with("Slowpath")).unwrap();
    assert_eq!(slow.split_whitespace().nth(1), Some("32"));
    assert!(out.contains("Cmpxchg_double Looping"));
    assert!(out.contains("Locked Cmpxchg Double redos   0"));
    assert!(out.contains("Unlocked Cmpxchg Double redos 0"));
    assert!(out.contains("New slab (page allocator)"));
}

#[test]
fn report_of_in_tree_cache_says_it_has_no_stats() {
    let out = ok(&["--sysfs-root", &root(), "-r", "kmalloc-64"]);
    assert!(out.contains("Slabcache: kmalloc-64"));
    assert!(out.contains("No statistics"));
}

#[test]
fn activity_sorts_by_operations() {
    let out = ok(&["--sysfs-root", &root(), "-A"]);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        rows[0].starts_with("rslub:rslub_bench_hold"),
        "busiest first: {out}"
    );
    let f: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(f[1..6], ["667", "1000", "333", "96", "100"]);
    assert!(rows[1..]
        .iter()
        .all(|r| r.split_whitespace().nth(2) == Some("-")));
}

#[test]
fn json_for_every_view() {
    let r = root();
    for args in [vec![], vec!["-A"], vec!["-r", "rslub_bench_hold"]] {
        let mut a = vec!["--sysfs-root", r.as_str(), "--json"];
        a.extend(args.iter());
        let out = ok(&a);
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        assert!(v.is_array() || v.is_object());
    }
    let out = ok(&["--sysfs-root", &root(), "--json", "-r", "rslub_bench_hold"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["objects"], 667);
    assert_eq!(v["source"], "rslub");
    assert_eq!(v["stats"]["alloc_fastpath"], 968);
}

#[test]
fn only_and_name_filters() {
    let out = ok(&["--sysfs-root", &root(), "--rslub-only"]);
    assert_eq!(out.lines().count(), 2);
    let out = ok(&["--sysfs-root", &root(), "--slab-only", "-n", "kmalloc"]);
    assert_eq!(out.lines().count(), 3);
}

#[test]
fn missing_root_is_one_line_error() {
    let out = run(&["--sysfs-root", "/nonexistent/sysfs"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no slab caches under /nonexistent/sysfs"));
}

#[test]
fn unknown_cache_is_one_line_error() {
    let out = run(&["--sysfs-root", &root(), "-r", "no_such_cache"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim(),
        format!("rslabinfo: no cache named 'no_such_cache' under {}", root())
    );
}

#[test]
fn broken_and_partial_caches_are_marked_not_fatal() {
    let dir = std::env::temp_dir().join(format!("rslabinfo-test-{}", std::process::id()));
    let c = dir.join("kernel/rslub/partial_cache");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("object_size"), "64\n").unwrap();
    // An attribute that cannot be read as a file.
    std::fs::create_dir_all(c.join("objects")).unwrap();
    // A dangling alias, as when a cache vanishes while being listed.
    std::os::unix::fs::symlink(dir.join("gone"), dir.join("kernel/rslub/vanished")).unwrap();
    let out = ok(&["--sysfs-root", &dir.display().to_string()]);
    let row = out
        .lines()
        .find(|l| l.starts_with("rslub:partial_cache"))
        .unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(f[1..3], ["-", "64"]);
    assert!(!out.contains("vanished"));
    let rep = ok(&[
        "--sysfs-root",
        &dir.display().to_string(),
        "-r",
        "partial_cache",
    ]);
    assert!(rep.contains("No statistics"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn watch_redraws_count_times() {
    let out = ok(&[
        "--sysfs-root",
        &root(),
        "--rslub-only",
        "--watch",
        "0.1",
        "--count",
        "3",
    ]);
    assert_eq!(out.matches("\x1b[2J").count(), 3);
}
