// SPDX-License-Identifier: GPL-2.0
//! costmodel-replay TRACE: feeds the model a boot's events as the plugin
//! recorded them (`record=FILE`), with the boot's own arguments, and
//! prints at each mark every vCPU's counts and the machine's time. Two
//! builds of the model that print the same lines model the boot the same;
//! the time on stderr is the model's alone, without QEMU.
//!
//! Usage: costmodel-replay TRACE [ARG=VALUE ...]  (arguments added to the
//! recorded ones, later ones winning: e.g. `wait=off`)

use costmodel_model::machine::Machine;
use costmodel_model::options::Options;
use costmodel_model::order::{Clocks, Order};
use costmodel_model::trace::{read_header, Rec};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: costmodel-replay TRACE [ARG=VALUE ...]");
        std::process::exit(2);
    };
    if let Err(e) = replay(path, &args[1..]) {
        eprintln!("costmodel-replay: {path}: {e}");
        std::process::exit(1);
    }
}

fn replay(path: &str, extra: &[String]) -> Result<(), String> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path).map_err(|e| e.to_string())?);
    let (vcpus, mut raw) = read_header(&mut r).map_err(|e| e.to_string())?;
    raw.extend(extra.iter().cloned());
    let o = Options::parse(&raw, vcpus)?;
    let mut m = Machine::new(o.cfg.clone());
    let mut order = Order::new(vcpus, o.mode, o.feed, Clocks::of(&o.profile));
    let out = io::stdout();
    let mut out = BufWriter::new(out.lock());
    let (mut n, mut marks) = (0u64, 0u64);
    let t0 = Instant::now();
    let mut mark = |m: &mut Machine, order: &mut Order, out: &mut dyn Write| {
        order.flush(m);
        m.settle();
        marks += 1;
        let now = order.now();
        let _ = writeln!(
            out,
            "mark {marks} now={now} forced={} quiet={}",
            order.forced, order.quiet
        );
        for (cpu, c) in m.counts.iter().enumerate() {
            let v: Vec<String> = c.to_array().iter().map(u64::to_string).collect();
            let _ = writeln!(out, "  cpu {cpu}: {}", v.join(" "));
        }
    };
    while let Some(rec) = Rec::read(&mut r).map_err(|e| e.to_string())? {
        n += 1;
        match rec {
            Rec::Event(cpu, ev) if cpu < vcpus => order.push(&mut m, cpu, ev),
            Rec::Pause(cpu) if cpu < vcpus => order.pause(cpu),
            Rec::Mark => mark(&mut m, &mut order, &mut out),
            _ => return Err(format!("record {n}: vCPU out of range ({vcpus} vCPUs)")),
        }
    }
    mark(&mut m, &mut order, &mut out);
    let s = t0.elapsed().as_secs_f64();
    eprintln!(
        "costmodel-replay: {n} records, {marks} marks in {s:.2} s ({:.1} ns a record)",
        s * 1e9 / n.max(1) as f64
    );
    Ok(())
}
