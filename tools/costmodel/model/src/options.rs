// SPDX-License-Identifier: GPL-2.0
//! The plugin's arguments (`key=value`, as QEMU hands them over), parsed
//! here rather than in the plugin so that `costmodel-replay` builds the
//! same model from a trace's header as the boot that recorded it.

use crate::cache::{parse_size, Geometry};
use crate::feed::Feed;
use crate::machine::Config;
use crate::order::Mode;
use crate::overlap::CoreConfig;
use crate::profile::Profile;

/// The profiles the plugin can price clocks with (`profile=`).
pub const PROFILES: &str = include_str!("../../profiles.toml");

/// What the plugin was asked for.
pub struct Options {
    /// `out=`: the counts file.
    pub out: String,
    /// The model's shape (`cpu_nodes=`, `mem_starts=`, caches, `core=`).
    pub cfg: Config,
    /// `atomics=`, `strings=`, `rmw=`: what the model is fed.
    pub feed: Feed,
    /// `model=on`: caches and coherence; off: instructions only.
    pub model: bool,
    /// The address of the guest kernel's per-CPU `cpu_number` (System.map).
    pub cpu_number: Option<u64>,
    /// `order=`, `wait=`.
    pub mode: Mode,
    /// `profile=`: the prices of the vCPUs' clocks.
    pub profile: Profile,
    /// `vcpu=qemu`: QEMU's vCPU index is the running vCPU's.
    pub qemu_index: bool,
    /// `start=boot`: the model sees memory from the start, not the first mark.
    pub start_boot: bool,
    /// `record=FILE`: every event the model is fed, for `costmodel-replay`.
    pub record: Option<String>,
}

fn on_off(k: &str, v: &str) -> Result<bool, String> {
    match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(format!("{k}={v}: expected on or off")),
    }
}

fn either(k: &str, v: &str, yes: &str, no: &str) -> Result<bool, String> {
    match v {
        _ if v == yes => Ok(true),
        _ if v == no => Ok(false),
        _ => Err(format!("{k}={v}: expected {yes} or {no}")),
    }
}

impl Options {
    /// Parses the plugin's arguments for a machine of `vcpus` vCPUs.
    pub fn parse(raw: &[String], vcpus: usize) -> Result<Options, String> {
        if vcpus > 64 {
            return Err("at most 64 vCPUs".into());
        }
        let mut o = Options {
            out: String::new(),
            cfg: Config::server(vcpus),
            feed: Feed::default(),
            model: true,
            cpu_number: None,
            mode: Mode::default(),
            profile: Profile::from_toml(PROFILES, "server")?,
            qemu_index: false,
            start_boot: false,
            record: None,
        };
        let mut out = None;
        let mut profile = "server".to_string();
        for a in raw {
            let (k, v) = a
                .split_once('=')
                .ok_or_else(|| format!("argument '{a}': expected key=value"))?;
            match k {
                "out" => out = Some(v.to_string()),
                "record" => o.record = Some(v.to_string()),
                "cpu_nodes" => o.cfg.cpu_nodes = parse_nodes(v, vcpus)?,
                "mem_starts" => {
                    o.cfg.mem_starts = v.split(':').map(parse_size).collect::<Result<_, _>>()?;
                    if !o.cfg.mem_starts.windows(2).all(|w| w[0] < w[1]) {
                        return Err("mem_starts: not ascending".into());
                    }
                }
                "l1" => o.cfg.l1 = Geometry::parse(v)?,
                "l2" => o.cfg.l2 = Geometry::parse(v)?,
                "llc" => o.cfg.llc = Geometry::parse(v)?,
                "coherence" => o.cfg.coherence = on_off(k, v)?,
                "atomics" => o.feed.atomics = on_off(k, v)?,
                "strings" => o.feed.fold_strings = either(k, v, "fold", "iter")?,
                "rmw" => o.feed.rmw_whole = either(k, v, "whole", "access")?,
                "model" => o.model = on_off(k, v)?,
                "start" => o.start_boot = either(k, v, "boot", "mark")?,
                "cpu_number" => o.cpu_number = Some(parse_size(v)?),
                "core" => o.cfg.core = Some(CoreConfig::parse(v)?),
                "profile" => profile = v.to_string(),
                "order" => o.mode.by_time = either(k, v, "time", "qemu")?,
                "wait" => o.mode.wait = on_off(k, v)?,
                "vcpu" => o.qemu_index = either(k, v, "qemu", "gs")?,
                _ => return Err(format!("unknown argument '{k}'")),
            }
        }
        o.out = out.ok_or("out=FILE is required")?;
        o.profile = Profile::from_toml(PROFILES, &profile)?;
        Ok(o)
    }
}

fn parse_nodes(v: &str, vcpus: usize) -> Result<Vec<usize>, String> {
    let nodes = v
        .split(':')
        .map(|n| n.parse().map_err(|_| format!("cpu_nodes: bad node '{n}'")))
        .collect::<Result<Vec<usize>, _>>()?;
    if nodes.len() != vcpus {
        return Err(format!(
            "cpu_nodes names {} vCPUs, the machine has {vcpus}",
            nodes.len()
        ));
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn parses_what_make_bench_passes() {
        let o = Options::parse(
            &args("out=/x,cpu_number=0x10,core=224:10:56:16,profile=server-ooo,vcpu=qemu,cpu_nodes=0:1"),
            2,
        )
        .unwrap();
        assert_eq!(o.out, "/x");
        assert_eq!(o.cpu_number, Some(0x10));
        assert!(o.cfg.core.is_some() && o.qemu_index && o.model && !o.start_boot);
        assert_eq!(o.cfg.cpu_nodes, vec![0, 1]);
        assert_eq!(o.profile.name, "server-ooo");
        assert!(o.record.is_none());
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        for bad in [
            "out=/x,colour=blue",
            "out=/x,strings=maybe",
            "out=/x,cpu_nodes=0:0:0",
            "out=/x,mem_starts=0x2000:0x1000",
            "out=/x,profile=nosuch",
            "cpu_number=0x10",
        ] {
            assert!(Options::parse(&args(bad), 2).is_err(), "{bad}");
        }
        assert!(Options::parse(&args("out=/x"), 65).is_err());
    }
}
