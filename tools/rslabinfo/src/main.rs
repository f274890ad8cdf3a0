// SPDX-License-Identifier: GPL-2.0
//! rslabinfo: tools/mm/slabinfo's counterpart for rslub and in-tree SLUB,
//! side by side: a summary line per cache, a full report of one cache
//! (`-r`), an activity view (`-A`), JSON for each, and a redrawing `--watch`.

mod sysfs;
mod view;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// slabinfo for rslub (/sys/kernel/rslub) and in-tree SLUB (/sys/kernel/slab)
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Full report of one cache (an rslub cache first, else in-tree)
    #[arg(short = 'r', long = "report", value_name = "NAME")]
    report: Option<String>,
    /// Activity view sorted by operations (like slabinfo -AD)
    #[arg(short = 'A', long)]
    activity: bool,
    /// Only caches whose name contains this
    #[arg(short = 'n', long = "name", value_name = "TEXT")]
    filter: Option<String>,
    /// Only rslub caches
    #[arg(long, conflicts_with = "slab_only")]
    rslub_only: bool,
    /// Only in-tree SLUB caches
    #[arg(long)]
    slab_only: bool,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Redraw every SECS seconds (Ctrl-C stops)
    #[arg(long, value_name = "SECS")]
    watch: Option<f64>,
    /// With --watch: stop after this many redraws
    #[arg(long, value_name = "N", requires = "watch")]
    count: Option<u64>,
    /// The sysfs root to read (a saved tree for tests)
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    sysfs_root: PathBuf,
}

fn run_once(args: &Args) -> Result<String, String> {
    let caches = view::load(
        &args.sysfs_root,
        !args.slab_only,
        !args.rslub_only,
        args.filter.as_deref(),
    )?;
    if let Some(name) = &args.report {
        let c = caches
            .iter()
            .find(|c| &c.name == name && c.source == sysfs::Source::Rslub)
            .or_else(|| caches.iter().find(|c| &c.name == name))
            .ok_or_else(|| {
                format!(
                    "no cache named '{name}' under {}",
                    args.sysfs_root.display()
                )
            })?;
        return Ok(if args.json {
            view::json(c)
        } else {
            view::report(c)
        });
    }
    Ok(match (args.activity, args.json) {
        (true, false) => view::activity(&caches),
        (true, true) => view::json(&view::activity_rows(&caches)),
        (false, false) => view::summary(&caches),
        (false, true) => view::json(&caches),
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut n = 0u64;
    loop {
        match run_once(&args) {
            Ok(out) => {
                if args.watch.is_some() {
                    // Clear the screen and home the cursor, like top.
                    print!("\x1b[2J\x1b[H");
                }
                print!("{out}");
            }
            Err(e) => {
                eprintln!("rslabinfo: {e}");
                return ExitCode::FAILURE;
            }
        }
        n += 1;
        match args.watch {
            Some(secs) if args.count.is_none_or(|c| n < c) => {
                std::thread::sleep(Duration::from_secs_f64(secs.max(0.1)));
            }
            _ => return ExitCode::SUCCESS,
        }
    }
}
