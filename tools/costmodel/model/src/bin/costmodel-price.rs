// SPDX-License-Identifier: GPL-2.0
//! costmodel-price: prices a counts file (the plugin's out=) with a profile,
//! so that a run is priced again without running it again.
//!
//! Usage: costmodel-price [--profiles FILE] [--profile NAME] [--sources] COUNTS
//!        costmodel-price [--profiles FILE] [--profile NAME] --core
//!
//! Prints one line per record: the record's line with `cycles=N` added.
//! --sources prints the profile's prices and their sources first. An
//! interval profile (one with a core) needs counts the plugin classified
//! for its core (`core=` in the file's header). --core prints the
//! plugin's `core=` argument for the profile (ROB:MLP:SB:DEPWIN), or an
//! empty line for an in-order profile, and reads no counts: what a boot
//! priced with that profile passes to the plugin.

use costmodel_model::counts::{header_core, parse_line, FIELDS};
use costmodel_model::profile::Profile;
use std::process::ExitCode;

const USAGE: &str =
    "usage: costmodel-price [--profiles FILE] [--profile NAME] [--sources] COUNTS | --core";

fn run() -> Result<(), String> {
    let mut profiles = concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles.toml").to_string();
    let mut name = "server".to_string();
    let mut sources = false;
    let mut core = false;
    let mut counts = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--profiles" => profiles = args.next().ok_or(USAGE)?,
            "--profile" => name = args.next().ok_or(USAGE)?,
            "--sources" => sources = true,
            "--core" => core = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if counts.is_none() && !a.starts_with('-') => counts = Some(a),
            _ => return Err(USAGE.into()),
        }
    }
    let text = std::fs::read_to_string(&profiles).map_err(|e| format!("{profiles}: {e}"))?;
    let p = Profile::from_toml(&text, &name)?;
    if core {
        println!(
            "{}",
            p.core.as_ref().map_or(String::new(), |(c, _)| c.text())
        );
        return Ok(());
    }
    let counts = counts.ok_or(USAGE)?;
    if sources {
        println!("# profile {}: {} ({} GHz)", p.name, p.description, p.ghz);
        for (i, f) in FIELDS.iter().enumerate() {
            println!("# {f} = {:.1} cycles: {}", p.cycles[i], p.sources[i]);
        }
        if let Some((c, src)) = &p.core {
            let names = ["rob", "mlp", "sb", "depwin"];
            let vals = [c.rob, u64::from(c.mlp), u64::from(c.sb), c.depwin];
            for ((n, v), s) in names.iter().zip(vals).zip(src) {
                println!("# core {n} = {v}: {s}");
            }
        }
    }
    let data = std::fs::read_to_string(&counts).map_err(|e| format!("{counts}: {e}"))?;
    p.fits(header_core(&data))
        .map_err(|e| format!("{counts}: {e}"))?;
    for (n, line) in data.lines().enumerate() {
        match parse_line(line) {
            None => {}
            Some(Err(e)) => return Err(format!("{counts}:{}: {e}", n + 1)),
            Some(Ok(r)) => println!("{} cycles={:.0}", r.line(), p.price(&r.counts)),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("costmodel-price: {e}");
            ExitCode::FAILURE
        }
    }
}
