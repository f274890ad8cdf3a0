// SPDX-License-Identifier: GPL-2.0
//! Prices: a profile gives each counted event a cost in cycles, with the
//! published source it comes from; modeled cycles are counts times prices.
//!
//! Profiles live in one TOML file (tools/costmodel/profiles.toml), a table
//! each:
//!
//! ```toml
//! [server]
//! description = "two-socket server"
//! ghz = 2.5
//! [server.prices]
//! l1 = { cycles = 5, source = "..." }
//! dram_local = { ns = 81, source = "..." }   # ns * ghz cycles
//! ```
//!
//! Every field of `counts::FIELDS` must be priced (0 is a price, with a
//! source saying why), so that a profile cannot silently leave one out,
//! but those that are not the machine's (`TIMES`: cycles already, or
//! elapsed time) and the hidden accesses (`HIDDEN`) and the L1 chains'
//! slots (`CHAIN`), which are derived.

use crate::counts::{Counts, FIELDS, N_FIELDS};
use crate::overlap::CoreConfig;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One price as written in the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// In core cycles.
    pub cycles: Option<f64>,
    /// In nanoseconds (converted with the profile's `ghz`).
    pub ns: Option<f64>,
    /// Where the figure comes from, or why there is none.
    pub source: String,
}

/// One number of a core's shape, with its source.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sourced {
    value: u64,
    source: String,
}

/// An out-of-order core as written in the file (`[NAME.core]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCore {
    rob: Sourced,
    mlp: Sourced,
    sb: Sourced,
    depwin: Sourced,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    description: String,
    /// Another profile whose `ghz` and prices this one starts from.
    inherit: Option<String>,
    ghz: Option<f64>,
    #[serde(default)]
    prices: BTreeMap<String, Price>,
    core: Option<RawCore>,
}

/// The fields that are time already (`order`), with their price in every
/// profile and why: `wait` is cycles, `span` elapsed time (not work).
pub const TIMES: [(&str, f64, &str); 2] = [
    (
        "wait",
        1.0,
        "cycles already: a vCPU's time waiting for a line in transfer or, spinning, for another vCPU's store (model/src/order.rs)",
    ),
    (
        "span",
        0.0,
        "elapsed time, not work: a region's makespan, reported beside the cycles (model/src/order.rs)",
    ),
];

/// The accesses an interval core may hide, and the level each is of:
/// `hid_X` is priced at minus `X`'s price (an interval core), or 0 (an
/// in-order one); the file prices neither.
pub const HIDDEN: [(&str, &str); 7] = [
    ("hid_l1", "l1"),
    ("hid_l2", "l2"),
    ("hid_llc", "llc"),
    ("hid_dram_local", "dram_local"),
    ("hid_dram_remote", "dram_remote"),
    ("hid_xfer_local", "xfer_local"),
    ("hid_xfer_remote", "xfer_remote"),
];

/// The slots by which L1 load chains outran the issue (`overlap`): an
/// interval core prices a slot as an instruction (`insns`: a cycle over
/// the core's width), an in-order one 0; the file prices it not.
pub const CHAIN: (&str, &str) = ("l1_chain", "insns");

/// A profile, each price in cycles, in `FIELDS` order.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Its table name in the file.
    pub name: String,
    /// What machine it stands for.
    pub description: String,
    /// The clock used to turn nanoseconds into cycles.
    pub ghz: f64,
    /// Cycles per event, in `FIELDS` order.
    pub cycles: [f64; N_FIELDS],
    /// The source of each price, in `FIELDS` order.
    pub sources: Vec<String>,
    /// An interval core (out of order): the shape its counts must have been
    /// classified for (`overlap`), with the source of each number; None:
    /// the in-order model, every access paid in full.
    pub core: Option<(CoreConfig, Vec<String>)>,
}

fn field(name: &str) -> Option<usize> {
    FIELDS.iter().position(|f| *f == name)
}

impl Profile {
    /// The profile `name` of a profiles file's text.
    pub fn from_toml(text: &str, name: &str) -> Result<Profile, String> {
        let all: BTreeMap<String, RawProfile> =
            toml::from_str(text).map_err(|e| format!("profiles: {e}"))?;
        let raw = all.get(name).ok_or_else(|| {
            let names: Vec<_> = all.keys().cloned().collect();
            format!("no profile '{name}' (have: {})", names.join(", "))
        })?;
        // The chain of inherited profiles, the base first.
        let mut chain = vec![raw];
        while let Some(base) = &chain[chain.len() - 1].inherit {
            let b = all
                .get(base)
                .ok_or_else(|| format!("profile {name}: inherits '{base}', no such profile"))?;
            if chain.len() > all.len() {
                return Err(format!("profile {name}: inherits in a loop"));
            }
            chain.push(b);
        }
        chain.reverse();
        let ghz = chain
            .iter()
            .rev()
            .find_map(|r| r.ghz)
            .ok_or_else(|| format!("profile {name}: no ghz"))?;
        if ghz <= 0.0 {
            return Err(format!("profile {name}: ghz must be positive"));
        }
        let mut prices: BTreeMap<&str, &Price> = BTreeMap::new();
        for r in &chain {
            for (k, p) in &r.prices {
                prices.insert(k, p);
            }
        }
        if let Some(k) = prices.keys().find(|k| field(k).is_none()) {
            return Err(format!("profile {name}: '{k}' is no counted event"));
        }
        if let Some((k, _, _)) = TIMES.iter().find(|(t, _, _)| prices.contains_key(t)) {
            return Err(format!(
                "profile {name}: '{k}' is not priced in the file (it is time already)"
            ));
        }
        if let Some((k, _)) = HIDDEN.iter().find(|(h, _)| prices.contains_key(h)) {
            return Err(format!(
                "profile {name}: '{k}' is not priced in the file (minus its level's price under an interval core, else 0)"
            ));
        }
        if prices.contains_key(CHAIN.0) {
            return Err(format!(
                "profile {name}: '{}' is not priced in the file ({}'s price under an interval core, else 0)",
                CHAIN.0, CHAIN.1
            ));
        }
        let core = match &chain[chain.len() - 1].core {
            None => None,
            Some(c) => {
                let cfg = CoreConfig::parse(&format!(
                    "{}:{}:{}:{}",
                    c.rob.value, c.mlp.value, c.sb.value, c.depwin.value
                ))
                .map_err(|e| format!("profile {name}: {e}"))?;
                let src = [&c.rob, &c.mlp, &c.sb, &c.depwin]
                    .iter()
                    .map(|x| x.source.clone())
                    .collect();
                Some((cfg, src))
            }
        };
        let mut cycles = [0.0; N_FIELDS];
        let mut sources = vec![String::new(); N_FIELDS];
        for (i, f) in FIELDS.iter().enumerate() {
            if HIDDEN.iter().any(|(h, _)| h == f) || *f == CHAIN.0 {
                continue;
            }
            if let Some((_, c, why)) = TIMES.iter().find(|(t, _, _)| t == f) {
                cycles[i] = *c;
                sources[i] = why.to_string();
                continue;
            }
            let p = prices
                .get(f)
                .ok_or_else(|| format!("profile {name}: no price for '{f}'"))?;
            cycles[i] = match (p.cycles, p.ns) {
                (Some(c), None) => c,
                (None, Some(ns)) => ns * ghz,
                _ => {
                    return Err(format!(
                        "profile {name}: '{f}' needs exactly one of cycles, ns"
                    ))
                }
            };
            sources[i] = p.source.clone();
        }
        let mut p = Profile {
            name: name.to_string(),
            description: raw.description.clone(),
            ghz,
            cycles,
            sources,
            core,
        };
        p.derive_hidden();
        Ok(p)
    }

    /// Prices the hidden accesses from their levels (`HIDDEN`), and the
    /// L1 chains' slots (`CHAIN`).
    fn derive_hidden(&mut self) {
        let interval = self.core.is_some();
        let (ci, ii) = (
            field(CHAIN.0).expect("a field"),
            field(CHAIN.1).expect("a field"),
        );
        self.cycles[ci] = if interval { self.cycles[ii] } else { 0.0 };
        self.sources[ci] = if interval {
            format!("a slot of the interval core's width: {}'s price", CHAIN.1)
        } else {
            "the in-order core pays each L1 hit whole (l1)".to_string()
        };
        for (h, level) in HIDDEN {
            let (hi, li) = (field(h).expect("a field"), field(level).expect("a field"));
            self.cycles[hi] = if interval { -self.cycles[li] } else { 0.0 };
            self.sources[hi] = if interval {
                format!("an interval core hides it: minus {level}'s price")
            } else {
                format!("the in-order core pays it in {level}")
            };
        }
    }

    /// Whether counts whose file says `core=` (None: no core) can be priced
    /// with this profile: an interval profile needs counts classified for
    /// its own core.
    pub fn fits(&self, counted: Option<CoreConfig>) -> Result<(), String> {
        match (&self.core, counted) {
            (None, _) => Ok(()),
            (Some((c, _)), Some(k)) if *c == k => Ok(()),
            (Some((c, _)), k) => Err(format!(
                "profile {} is an interval core ({}); the counts were classified for {}: \
                 run the plugin with core={}",
                self.name,
                c.text(),
                k.map_or("no core".to_string(), |k| format!("core={}", k.text())),
                c.text()
            )),
        }
    }

    /// Multiplies some prices by a factor, for a sensitivity check: `spec`
    /// is `NAME=FACTOR`, NAME a counted event or a group of them (`xfer`:
    /// both transfers, `dram`: both DRAM, `atomics`: the four atomics,
    /// `strings`: a rep string instruction's start-up, bytes and elements).
    /// The profile's name records it ("server[xfer=0.5]").
    pub fn scale(&mut self, spec: &str) -> Result<(), String> {
        let bad = || format!("scale '{spec}': expected NAME=FACTOR, FACTOR >= 0");
        let (name, f) = spec.split_once('=').ok_or_else(bad)?;
        let f: f64 = f.parse().map_err(|_| bad())?;
        if !(f >= 0.0 && f.is_finite()) {
            return Err(bad());
        }
        let group: &[&str] = match name {
            "xfer" => &["xfer_local", "xfer_remote"],
            "dram" => &["dram_local", "dram_remote"],
            "atomics" => &["locked", "unlocked", "cx16_locked", "cx16_unlocked"],
            "strings" => &["str_insns", "str_bytes", "str_elems"],
            one if FIELDS.contains(&one) => {
                std::slice::from_ref(FIELDS.iter().find(|x| **x == one).expect("a field"))
            }
            _ => {
                return Err(format!(
                    "scale '{spec}': '{name}' is no event nor group (xfer, dram, atomics, strings)"
                ))
            }
        };
        for (i, field) in FIELDS.iter().enumerate() {
            if group.contains(field) {
                self.cycles[i] *= f;
            }
        }
        self.derive_hidden();
        self.name = match self.name.strip_suffix(']') {
            Some(base) => format!("{base},{spec}]"),
            None => format!("{}[{spec}]", self.name),
        };
        Ok(())
    }

    /// The names of the profiles in a file's text, sorted.
    pub fn names(text: &str) -> Result<Vec<String>, String> {
        let v: toml::Table = toml::from_str(text).map_err(|e| format!("profiles: {e}"))?;
        Ok(v.keys().cloned().collect())
    }

    /// Modeled cycles of some counts.
    pub fn price(&self, c: &Counts) -> f64 {
        c.to_array()
            .iter()
            .zip(self.cycles)
            .map(|(&n, p)| n as f64 * p)
            .sum()
    }

    /// The price of one event by name.
    pub fn of(&self, field: &str) -> f64 {
        FIELDS
            .iter()
            .position(|f| *f == field)
            .map_or(0.0, |i| self.cycles[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_a_group_changes_its_prices_only() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles.toml"))
                .unwrap();
        let base = Profile::from_toml(&text, "server").unwrap();
        let mut p = base.clone();
        p.scale("xfer=0.5").unwrap();
        p.scale("atomics=2").unwrap();
        assert_eq!(p.name, "server[xfer=0.5,atomics=2]");
        assert_eq!(p.of("xfer_local"), base.of("xfer_local") / 2.0);
        assert_eq!(p.of("xfer_remote"), base.of("xfer_remote") / 2.0);
        assert_eq!(p.of("cx16_locked"), base.of("cx16_locked") * 2.0);
        assert_eq!(p.of("unlocked"), base.of("unlocked") * 2.0);
        assert_eq!(p.of("l1"), base.of("l1"));
        assert_eq!(p.of("dram_local"), base.of("dram_local"));
        p.scale("strings=2").unwrap();
        assert_eq!(p.of("str_insns"), base.of("str_insns") * 2.0);
        assert_eq!(p.of("str_bytes"), base.of("str_bytes") * 2.0);
        p.scale("l2=3").unwrap();
        assert_eq!(p.of("l2"), base.of("l2") * 3.0);
        assert!(p.scale("xfer").is_err());
        assert!(p.scale("tlb=2").is_err());
        assert!(p.scale("xfer=-1").is_err());
    }

    fn text(extra: &str) -> String {
        let mut s = String::from("[t]\ndescription = \"test\"\nghz = 2.0\n[t.prices]\n");
        for f in FIELDS {
            if HIDDEN.iter().any(|(h, _)| *h == f)
                || TIMES.iter().any(|(t, _, _)| *t == f)
                || f == CHAIN.0
            {
                continue;
            }
            if f == "dram_local" {
                s += "dram_local = { ns = 80, source = \"x\" }\n";
            } else {
                s += &format!("{f} = {{ cycles = 1, source = \"x\" }}\n");
            }
        }
        s + extra
    }

    #[test]
    fn prices_counts() {
        let p = Profile::from_toml(&text(""), "t").unwrap();
        assert_eq!(p.of("dram_local"), 160.0);
        let c = Counts {
            insns: 10,
            dram_local: 2,
            ..Default::default()
        };
        assert_eq!(p.price(&c), 10.0 + 320.0);
        assert_eq!(Profile::names(&text("")).unwrap(), vec!["t".to_string()]);
    }

    #[test]
    fn rejects_missing_unknown_and_ambiguous() {
        assert!(Profile::from_toml(&text(""), "nope").is_err());
        let missing = text("").replace("io = { cycles = 1, source = \"x\" }\n", "");
        assert!(Profile::from_toml(&missing, "t")
            .unwrap_err()
            .contains("'io'"));
        let unknown = text("tlb = { cycles = 1, source = \"x\" }\n");
        assert!(Profile::from_toml(&unknown, "t").is_err());
        // Time is not a price: wait is 1 and span 0 in every profile.
        let time = text("wait = { cycles = 2, source = \"x\" }\n");
        assert!(Profile::from_toml(&time, "t").is_err());
        let p = Profile::from_toml(&text(""), "t").unwrap();
        assert_eq!((p.of("wait"), p.of("span")), (1.0, 0.0));
        // The L1 chains' slots are derived: the in-order core's 0, an
        // interval core's an instruction's price.
        assert_eq!(p.of("l1_chain"), 0.0);
        assert!(
            Profile::from_toml(&text("l1_chain = { cycles = 1, source = \"x\" }\n"), "t").is_err()
        );
        let ooo = Profile::from_toml(include_str!("../../profiles.toml"), "server-ooo").unwrap();
        assert_eq!(ooo.of("l1_chain"), ooo.of("insns"));
        let both = text("").replace(
            "io = { cycles = 1, source = \"x\" }",
            "io = { cycles = 1, ns = 2, source = \"x\" }",
        );
        assert!(Profile::from_toml(&both, "t").is_err());
    }

    // The shipped file parses, every profile in it prices every event.
    #[test]
    fn shipped_profiles_parse() {
        let text = include_str!("../../profiles.toml");
        let names = Profile::names(text).unwrap();
        assert!(names.contains(&"server".to_string()));
        assert!(names.contains(&"desktop".to_string()));
        for n in names {
            let p = Profile::from_toml(text, &n).unwrap();
            assert!(p.sources.iter().all(|s| !s.is_empty()));
        }
    }
}
