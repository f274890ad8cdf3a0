// SPDX-License-Identifier: GPL-2.0
//! costmodel-calib: checks a counts file of tools/costmodel/guest/calib.c
//! against a profile (`costmodel_model::calib`), one line per check:
//!
//! ```text
//! model: plan 7
//! model: PASS cx16: locked - unlocked cmpxchg16b: 9.00 cycles/op (profile: 9.00); ...
//! ```
//!
//! Usage: costmodel-calib [--profiles FILE] [--profile NAME] [--selftest] COUNTS
//! Exit status: 0 when every check passed, 1 when one failed, 2 on bad input.
//!
//! `--validate COUNTS...`: the validation table (`validate`): each row's
//! program, found in whichever counts file holds its test, priced with its
//! profile and compared with its published figure, one `validate: PASS|FAIL`
//! line per row and a summary (the median error).
//!
//! `--selftest`: the counts are guest/selftest.S's (tools/costmodel/
//! selftest.sh), checked field by field (`calib::selftest`; with
//! `model=off` in the file's header, the instructions and the folding
//! only), one `selftest: PASS|FAIL` line per region.

use costmodel_model::calib::{check, selftest, PLAN};
use costmodel_model::counts::{model_ran, regions};
use costmodel_model::profile::Profile;
use costmodel_model::validate::{median_error, validate, Files, LIMIT};
use std::process::ExitCode;

const USAGE: &str =
    "usage: costmodel-calib [--profiles FILE] [--profile NAME] [--selftest] COUNTS\n       costmodel-calib [--profiles FILE] --validate COUNTS...";

/// The validation table's checks on some counts files.
fn run_validate(profiles: &str, files: &[String]) -> Result<bool, String> {
    let texts = files
        .iter()
        .map(|f| std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let files = Files::new(&refs)?;
    let out = validate(&files, profiles);
    println!("validate: plan {}", out.len());
    for o in &out {
        let r = &o.row;
        let fig = if r.figure.0 == r.figure.1 {
            format!("{}", r.figure.0)
        } else {
            format!("{}-{}", r.figure.0, r.figure.1)
        };
        let got = match (&o.modeled, o.error()) {
            (Ok(m), Some(e)) => format!(
                "modeled {m:.3} against {fig} {}: error {:+.0} %",
                r.unit,
                e * 100.0
            ),
            _ => format!("no modeled figure: {}", e_or(&o.modeled)),
        };
        let known = r.known.map_or(String::new(), |(why, rec)| {
            format!(" (known, {:+.0} % recorded: {why})", rec * 100.0)
        });
        println!(
            "validate: {} {}: {got}{known}; {}",
            if o.pass() { "PASS" } else { "FAIL" },
            r.name,
            r.source
        );
    }
    let within = out
        .iter()
        .filter(|o| o.error().is_some_and(|e| e.abs() <= LIMIT))
        .count();
    match median_error(&out) {
        Some(m) => println!(
            "validate: summary: {within} of {} rows within {:.0} %, median error {:.0} %",
            out.len(),
            LIMIT * 100.0,
            m * 100.0
        ),
        None => println!("validate: summary: no row modeled"),
    }
    Ok(out.iter().all(|o| o.pass()))
}

fn e_or(m: &Result<f64, String>) -> String {
    m.as_ref().err().cloned().unwrap_or_default()
}

fn run() -> Result<bool, String> {
    let mut profiles = concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles.toml").to_string();
    let mut name = "server".to_string();
    let mut counts = None;
    let mut self_test = false;
    let mut valid = false;
    let mut more = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--profiles" => profiles = args.next().ok_or(USAGE)?,
            "--profile" => name = args.next().ok_or(USAGE)?,
            "--selftest" => self_test = true,
            "--validate" => valid = true,
            _ if counts.is_none() && !a.starts_with('-') => counts = Some(a),
            _ if valid && !a.starts_with('-') => more.push(a),
            _ => return Err(USAGE.into()),
        }
    }
    let counts = counts.ok_or(USAGE)?;
    let text = std::fs::read_to_string(&profiles).map_err(|e| format!("{profiles}: {e}"))?;
    if valid {
        let mut files = vec![counts];
        files.extend(more);
        return run_validate(&text, &files);
    }
    let p = Profile::from_toml(&text, &name)?;
    let data = std::fs::read_to_string(&counts).map_err(|e| format!("{counts}: {e}"))?;
    let regions = regions(&data).map_err(|e| format!("{counts}:{e}"))?;
    let (what, out) = if self_test {
        let out = selftest(&regions, model_ran(&data), &p);
        ("selftest", out)
    } else {
        ("model", check(&regions, &p))
    };
    println!("{what}: plan {}", if self_test { out.len() } else { PLAN });
    for o in &out {
        println!(
            "{what}: {} {}: {}",
            if o.pass { "PASS" } else { "FAIL" },
            o.name,
            o.detail
        );
    }
    Ok(out.iter().all(|o| o.pass))
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("costmodel-calib: {e}");
            ExitCode::from(2)
        }
    }
}
