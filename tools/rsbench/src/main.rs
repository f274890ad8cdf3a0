// SPDX-License-Identifier: GPL-2.0
//! rsbench: the host side of rslub's benchmarks. `parse` turns the result
//! lines of VM console logs (and the cost model's counts files) into
//! bench.json; `table` prints one run as an
//! mmtests-style comparison of the allocators; `compare` sets two runs side
//! by side; `plot` draws PNGs and a report.md into a results directory.

mod aa;
mod experiment;
mod glance;
mod model;
mod parse;
mod plot;
mod table;
mod verdict;

use clap::{Parser, Subcommand};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// rslub benchmark results: parse guest logs, tables, A/B comparison, plots
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Collect the `rslub_bench: result` lines of console logs into bench.json
    ///
    /// Lines with marks= and n= (mode=model) are priced from the cost
    /// model's counts file of their log (--counts) with a profile.
    Parse {
        /// Run metadata (kernel, qemu, mode, cpus, nodes, date, git, ...);
        /// repeatable. mode defaults to the modes seen, date to now
        #[arg(long, value_name = "KEY=VALUE", value_parser = meta_pair)]
        meta: Vec<(String, String)>,
        /// Give an allocator of one log another name (repeatable): the
        /// in-tree SLUB of two kernels in one run (make bench SUITE=classic:
        /// LOG:slub=classic). LOG is written as among the logs
        #[arg(long, value_name = "LOG:FROM=TO", value_parser = rename_arg)]
        rename: Vec<parse::Rename>,
        /// The cost model's counts file of a log's run (repeatable): the
        /// regions of each result line's marks= are summed, divided by its
        /// n= and priced into cycles_per_op and ev_<event>_per_op (a
        /// model=off file, an icount boot's, adds none); instr_per_op and
        /// minstr are scaled to count a rep string instruction once. LOG is
        /// written as among the logs (split at the first '=')
        #[arg(long, value_name = "LOG=FILE", value_parser = counts_arg)]
        counts: Vec<parse::CountsArg>,
        /// The cost model's profiles [default: tools/costmodel/profiles.toml]
        #[arg(long, value_name = "FILE")]
        profiles: Option<PathBuf>,
        /// The profile that prices the counts (meta.profile unless given)
        #[arg(long, value_name = "NAME", default_value = "server")]
        profile: String,
        /// Multiply some of the profile's prices (repeatable), for a
        /// sensitivity check: an event, or xfer, dram or atomics, e.g.
        /// xfer=0.5; the profile's name records it
        #[arg(long, value_name = "NAME=FACTOR")]
        scale: Vec<String>,
        /// Where to write the json (its directory is created); default stdout
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// VM console logs
        #[arg(required = true, value_name = "LOG")]
        logs: Vec<PathBuf>,
    },
    /// Print a run's comparison table (and write DIR/table.txt given a DIR)
    ///
    /// Medians of rslub against the in-tree SLUB: ratio, signed % difference
    /// and * where the round ranges [min,max] do not overlap; then the floor
    /// and rslub/floor, and the ideal for churn. A run with variants compares
    /// every variant with the first one seen instead. Given a directory, the
    /// table is also written to DIR/table.txt.
    Table {
        /// A results directory holding bench.json, or the json itself
        #[arg(value_name = "DIR_OR_JSON")]
        input: PathBuf,
    },
    /// Price a saved run again: its modeled cycles under a profile
    ///
    /// Each point's cycles per operation from its rounds' events (the model
    /// is linear in them) under the profile as profiles.toml has it now:
    /// after a price changed, or under another profile, without running
    /// again. Rewrites bench.json and table.txt of the directory.
    Reprice {
        /// A results directory holding bench.json
        dir: PathBuf,
        /// The cost model's profiles [default: tools/costmodel/profiles.toml]
        #[arg(long, value_name = "FILE")]
        profiles: Option<PathBuf>,
        /// The profile [default: the one the run was priced with]
        #[arg(long)]
        profile: Option<String>,
    },
    /// Compare two runs point by point: B against A
    Compare {
        /// The base run: a results directory or its bench.json
        a: PathBuf,
        /// The new run
        b: PathBuf,
        /// Each allocator's ratio to the baseline in both runs, and which
        /// verdicts (dearer, cheaper, even) changed
        #[arg(long)]
        ratios: bool,
    },
    /// Each modeled comparison priced again: the verdict and its sensitivity
    ///
    /// For every point with the cost model's events for both allocators:
    /// the ratio of modeled cycles under the profile, with the transfer and
    /// the atomic prices halved and doubled, under a second profile, the
    /// factor on transfer and atomic prices at which the ratio crosses 1,
    /// and the event groups that make the difference. From bench.json
    /// alone (the model is linear in its events): no new run.
    Verdict {
        /// A results directory holding bench.json, or the json itself
        #[arg(value_name = "DIR_OR_JSON")]
        input: PathBuf,
        /// The base allocator [default: slub, or sheaves when the run has no slub]
        #[arg(long)]
        base: Option<String>,
        /// An allocator to judge against the base (repeatable) [default:
        /// those of rslub, served and classic the run has]
        #[arg(long)]
        vs: Vec<String>,
        /// The cost model's profiles [default: tools/costmodel/profiles.toml]
        #[arg(long, value_name = "FILE")]
        profiles: Option<PathBuf>,
        /// The reference profile [default: the one the run was priced
        /// with (its meta profile), else server]
        #[arg(long)]
        profile: Option<String>,
        /// The second profile [default: server, the in-order model, when
        /// the reference is another profile; else desktop]
        #[arg(long)]
        second: Option<String>,
    },
    /// The main rows of classic, sheaves and rslub from runs, as Markdown
    ///
    /// For docs/benchmarks.md's "At a glance": the synthetic rows of
    /// two-kernel runs (make bench SUITE=classic) and the real programs of
    /// two-kernel real runs (SUITE=classic-real), sheaves against classic
    /// called only outside the A/A noise, and which events differ.
    Glance {
        /// Results directories (or their bench.json)
        #[arg(required = true, value_name = "DIR_OR_JSON")]
        runs: Vec<PathBuf>,
    },
    /// The seeds' experiments of runs, as Markdown: one table each
    ///
    /// For docs/benchmarks.md: each side of make bench SUITE=real
    /// EXPERIMENT=... against plain rslub, called only outside rslub's A/A
    /// noise and, for a build variant, the difference between its boots
    /// and the default build's (their in-tree SLUBs).
    Experiment {
        /// Results directories (or their bench.json)
        #[arg(required = true, value_name = "DIR_OR_JSON")]
        runs: Vec<PathBuf>,
    },
    /// Runs of one revision as one bench.json (make bench SUITE=classic-all)
    ///
    /// Results concatenated, each meta key as the runs agree or their values
    /// joined; refused for runs of different revisions or a point measured
    /// twice.
    Merge {
        /// Where to write the json (its directory is created)
        #[arg(short = 'o', long, value_name = "FILE")]
        output: PathBuf,
        /// Results directories (or their bench.json)
        #[arg(required = true, value_name = "DIR_OR_JSON")]
        runs: Vec<PathBuf>,
    },
    /// Draw PNG plots and report.md into a results directory
    ///
    /// Cost against object size per (mode, workload, op), throughput against
    /// CPUs, churn pages against size. Needs a TTF font: Debian's
    /// fonts-dejavu-core, or RSBENCH_FONT=/path/to/font.ttf.
    Plot {
        /// A results directory holding bench.json
        dir: PathBuf,
    },
}

fn rename_arg(s: &str) -> Result<parse::Rename, String> {
    // The log is everything before the last ':' (a path may hold one).
    let bad = || format!("'{s}' is not LOG:FROM=TO");
    let (log, pair) = s.rsplit_once(':').ok_or_else(bad)?;
    let (from, to) = pair.split_once('=').ok_or_else(bad)?;
    if log.is_empty() || from.is_empty() || to.is_empty() || to.contains(char::is_whitespace) {
        return Err(bad());
    }
    Ok(parse::Rename {
        log: PathBuf::from(log),
        from: from.to_string(),
        to: to.to_string(),
    })
}

fn counts_arg(s: &str) -> Result<parse::CountsArg, String> {
    match s.split_once('=') {
        Some((log, file)) if !log.is_empty() && !file.is_empty() => Ok(parse::CountsArg {
            log: PathBuf::from(log),
            file: PathBuf::from(file),
        }),
        _ => Err(format!("'{s}' is not LOG=FILE")),
    }
}

fn meta_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("'{s}' is not KEY=VALUE")),
    }
}

/// The name a run goes by in headers: the path the user gave.
fn name(p: &Path) -> String {
    p.display().to_string()
}

fn run(cmd: Cmd) -> Result<(), String> {
    match cmd {
        Cmd::Parse {
            meta,
            rename,
            counts,
            profiles,
            profile,
            scale,
            output,
            logs,
        } => {
            let meta: BTreeMap<String, String> = meta.into_iter().collect();
            // The profiles are read only when there are counts to price.
            let profile = if counts.is_empty() {
                None
            } else {
                let path = profiles.unwrap_or_else(|| PathBuf::from(parse::PROFILES));
                let mut p = parse::load_profile(&path, &profile)?;
                for s in &scale {
                    p.scale(s)?;
                }
                Some(p)
            };
            let bench = parse::parse_logs(&logs, meta, &rename, &counts, profile.as_ref())?;
            let json = serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())? + "\n";
            match output {
                None => print!("{json}"),
                Some(out) => {
                    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                        std::fs::create_dir_all(dir)
                            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                    }
                    std::fs::write(&out, json)
                        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                    let rounds: usize = bench.results.iter().map(|r| r.rounds.len()).sum();
                    println!(
                        "rsbench: {} results ({rounds} rounds) -> {}",
                        bench.results.len(),
                        out.display()
                    );
                }
            }
        }
        Cmd::Table { input } => {
            let bench = model::load(&input)?;
            let text = table::table(&bench, &name(&input));
            print!("{text}");
            if input.is_dir() {
                let out = input.join("table.txt");
                std::fs::write(&out, &text)
                    .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            }
        }
        Cmd::Reprice {
            dir,
            profiles,
            profile,
        } => {
            if !dir.is_dir() {
                return Err(format!("{} is not a results directory", dir.display()));
            }
            let mut bench = model::load(&dir)?;
            let name_p = profile
                .or_else(|| bench.meta.get("profile").cloned())
                .unwrap_or_else(|| "server".into());
            let path = profiles.unwrap_or_else(|| PathBuf::from(parse::PROFILES));
            let p = parse::load_profile(&path, &name_p)?;
            let n = verdict::reprice(&mut bench, &p);
            let json = serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())? + "\n";
            let out = dir.join("bench.json");
            std::fs::write(&out, json)
                .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
            let text = table::table(&bench, &name(&dir));
            let t = dir.join("table.txt");
            std::fs::write(&t, &text).map_err(|e| format!("cannot write {}: {e}", t.display()))?;
            println!(
                "rsbench: {n} points priced under {name_p}: {}",
                out.display()
            );
        }
        Cmd::Compare { a, b, ratios } => {
            let (ba, bb) = (model::load(&a)?, model::load(&b)?);
            if ratios {
                print!("{}", table::compare_ratios(&ba, &name(&a), &bb, &name(&b)));
            } else {
                print!("{}", table::compare(&ba, &name(&a), &bb, &name(&b)));
            }
        }
        Cmd::Verdict {
            input,
            base,
            vs,
            profiles,
            profile,
            second,
        } => {
            let bench = model::load(&input)?;
            let has = |a: &str| bench.results.iter().any(|m| m.series() == a);
            let base = base.unwrap_or_else(|| if has("slub") { "slub" } else { "sheaves" }.into());
            let vs: Vec<String> = if vs.is_empty() {
                ["rslub", "served", "classic"]
                    .iter()
                    .filter(|a| has(a) && **a != base)
                    .map(|a| a.to_string())
                    .collect()
            } else {
                vs
            };
            let path = profiles.unwrap_or_else(|| PathBuf::from(parse::PROFILES));
            let profile = profile
                .or_else(|| bench.meta.get("profile").cloned())
                .unwrap_or_else(|| "server".into());
            let second = second.unwrap_or_else(|| {
                if profile == "server" {
                    "desktop"
                } else {
                    "server"
                }
                .into()
            });
            let scen = verdict::scenarios(
                &parse::load_profile(&path, &profile)?,
                &parse::load_profile(&path, &second)?,
            )?;
            for (i, x) in vs.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                print!("{}", verdict::verdict(&bench, &base, x, &scen)?);
            }
        }
        Cmd::Glance { runs } => {
            let runs = runs
                .iter()
                .map(|r| Ok((name(r), model::load(r)?)))
                .collect::<Result<Vec<_>, String>>()?;
            print!("{}", glance::glance(&runs));
        }
        Cmd::Merge { output, runs } => {
            let runs = runs
                .iter()
                .map(|r| model::load(r))
                .collect::<Result<Vec<_>, String>>()?;
            let bench = model::merge(runs)?;
            if let Some(d) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)
                    .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            }
            let json = serde_json::to_string_pretty(&bench).map_err(|e| e.to_string())? + "\n";
            std::fs::write(&output, json)
                .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
        }
        Cmd::Experiment { runs } => {
            let runs = runs
                .iter()
                .map(|r| Ok((name(r), model::load(r)?)))
                .collect::<Result<Vec<_>, String>>()?;
            print!("{}", experiment::markdown(&runs));
        }
        Cmd::Plot { dir } => {
            if !dir.is_dir() {
                return Err(format!("{} is not a results directory", dir.display()));
            }
            let bench = model::load(&dir)?;
            let text = table::table(&bench, &name(&dir));
            for f in plot::plot(&bench, &dir, &text)? {
                println!("{}", f.display());
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse().cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rsbench: {e}");
            ExitCode::FAILURE
        }
    }
}
