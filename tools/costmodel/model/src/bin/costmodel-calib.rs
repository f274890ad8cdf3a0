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
//! `--selftest`: the counts are guest/selftest.S's (tools/costmodel/
//! selftest.sh), checked field by field (`calib::selftest`; with
//! `model=off` in the file's header, the instructions and the folding
//! only), one `selftest: PASS|FAIL` line per region.

use costmodel_model::calib::{check, selftest, PLAN};
use costmodel_model::counts::{model_ran, regions};
use costmodel_model::profile::Profile;
use std::process::ExitCode;

const USAGE: &str = "usage: costmodel-calib [--profiles FILE] [--profile NAME] [--selftest] COUNTS";

fn run() -> Result<bool, String> {
    let mut profiles = concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles.toml").to_string();
    let mut name = "server".to_string();
    let mut counts = None;
    let mut self_test = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--profiles" => profiles = args.next().ok_or(USAGE)?,
            "--profile" => name = args.next().ok_or(USAGE)?,
            "--selftest" => self_test = true,
            _ if counts.is_none() && !a.starts_with('-') => counts = Some(a),
            _ => return Err(USAGE.into()),
        }
    }
    let counts = counts.ok_or(USAGE)?;
    let text = std::fs::read_to_string(&profiles).map_err(|e| format!("{profiles}: {e}"))?;
    let p = Profile::from_toml(&text, &name)?;
    let data = std::fs::read_to_string(&counts).map_err(|e| format!("{counts}: {e}"))?;
    let regions = regions(&data).map_err(|e| format!("{counts}:{e}"))?;
    let (what, out) = if self_test {
        let out = selftest(&regions, model_ran(&data));
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
