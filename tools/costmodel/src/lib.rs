// SPDX-License-Identifier: GPL-2.0
//! libcostmodel.so: a QEMU TCG plugin that feeds the cost model
//! (`costmodel_model`, model/) every guest memory access by physical address
//! and counts instructions and atomics, per vCPU, between the marks of
//! include/rslub_mark.h. Load it into the icount boot:
//!
//! ```text
//! -icount shift=0,sleep=off -plugin libcostmodel.so,out=FILE[,cpu_nodes=0,0,1,1]
//!     [,mem_starts=0x40000000][,l1=48K:12][,l2=2M:16][,llc=16M:16]
//!     [,coherence=off][,atomics=off]
//! ```
//!
//! At translation each instruction is decoded once (`decode::classify`):
//! atomics get an inline per-vCPU scoreboard add, the mark an execute
//! callback that reads %rax, every instruction a memory callback (QEMU
//! calls it only for instructions that access memory). Instructions are
//! counted per translation block by an inline add at its start; a mark
//! takes off the instructions after it in its block, so that they count in
//! the next region. Counting happens at execution. The model is one global
//! state behind a mutex: under `-icount` the vCPUs run round-robin on one
//! thread, so its order of accesses is the same from run to run.
//!
//! Output (docs/benchmarks.md, "The cost model"): a `#` header line, then at
//! each mark one `mark` line per vCPU with its counts since the previous
//! mark, and `exit` lines when QEMU exits.

use costmodel_model::cache::{parse_size, Geometry};
use costmodel_model::counts::{Counts, Record};
use costmodel_model::decode::{classify, Kind};
use costmodel_model::machine::{Access, Config, Machine};
use qemu_plugin::sys::{
    qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_insn, qemu_plugin_mem_rw,
    qemu_plugin_meminfo_t, qemu_plugin_op, qemu_plugin_scoreboard, qemu_plugin_tb, qemu_plugin_u64,
};
use qemu_plugin::{
    install::{Args, Info},
    plugin::{HasCallbacks, Register},
    qemu_plugin_get_registers, qemu_plugin_register_atexit_cb, PluginId, RegisterDescriptor,
    VCPUIndex,
};
use std::ffi::c_void;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Mutex, OnceLock};

/// The scoreboard's fields, one u64 each per vCPU.
const SB_INSNS: usize = 0;
const SB_LOCKED: usize = 1;
const SB_UNLOCKED: usize = 2;
const SB_CX16_LOCKED: usize = 3;
const SB_CX16_UNLOCKED: usize = 4;
const SB_FIELDS: usize = 5;

/// The per-vCPU scoreboard of inline counters.
///
/// # Invariants
/// `0` points to a scoreboard of `SB_FIELDS` u64s per vCPU, made by
/// `qemu_plugin_scoreboard_new` and never freed.
struct Board(*mut qemu_plugin_scoreboard);

// SAFETY: QEMU's scoreboard is made for concurrent per-vCPU use: each vCPU
// adds to its own entry, and reads through `qemu_plugin_u64_get` are
// allowed from any callback; the pointer itself is never freed (invariant).
unsafe impl Send for Board {}
// SAFETY: as for Send.
unsafe impl Sync for Board {}

impl Board {
    fn entry(&self, field: usize) -> qemu_plugin_u64 {
        qemu_plugin_u64 {
            score: self.0,
            offset: field * 8,
        }
    }

    fn get(&self, field: usize, vcpu: u32) -> u64 {
        // SAFETY: the entry is inside the scoreboard (field < SB_FIELDS),
        // which lives for ever (invariant); QEMU grows it to every vCPU.
        unsafe { qemu_plugin::sys::qemu_plugin_u64_get(self.entry(field), vcpu) }
    }
}

/// Everything the callbacks share.
struct State {
    machine: Machine,
    /// Each vCPU's totals at the previous mark.
    prev: Vec<Counts>,
    /// The number of regions written so far.
    seq: u64,
    out: BufWriter<File>,
}

struct Options {
    out: String,
    cfg: Config,
    atomics: bool,
}

static STATE: OnceLock<Mutex<State>> = OnceLock::new();
static BOARD: OnceLock<Board> = OnceLock::new();
static OPTIONS: OnceLock<Options> = OnceLock::new();
/// %rax, where the mark's id is.
static RAX: OnceLock<RegisterDescriptor<'static>> = OnceLock::new();

fn parse_options(args: &Args, vcpus: usize) -> Result<Options, String> {
    let mut cfg = Config::server(vcpus);
    let mut out = None;
    let mut atomics = true;
    let on_off = |k: &str, v: &str| match v {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        _ => Err(format!("{k}={v}: expected on or off")),
    };
    for a in &args.raw {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| format!("argument '{a}': expected key=value"))?;
        match k {
            "out" => out = Some(v.to_string()),
            "cpu_nodes" => {
                cfg.cpu_nodes = v
                    .split(',')
                    .map(|n| n.parse().map_err(|_| format!("cpu_nodes: bad node '{n}'")))
                    .collect::<Result<_, _>>()?;
                if cfg.cpu_nodes.len() != vcpus {
                    return Err(format!(
                        "cpu_nodes names {} vCPUs, the machine has {vcpus}",
                        cfg.cpu_nodes.len()
                    ));
                }
            }
            "mem_starts" => {
                cfg.mem_starts = v.split(',').map(parse_size).collect::<Result<_, _>>()?;
                if !cfg.mem_starts.windows(2).all(|w| w[0] < w[1]) {
                    return Err("mem_starts: not ascending".into());
                }
            }
            "l1" => cfg.l1 = Geometry::parse(v)?,
            "l2" => cfg.l2 = Geometry::parse(v)?,
            "llc" => cfg.llc = Geometry::parse(v)?,
            "coherence" => cfg.coherence = on_off(k, v)?,
            "atomics" => atomics = on_off(k, v)?,
            _ => return Err(format!("unknown argument '{k}'")),
        }
    }
    let out = out.ok_or("out=FILE is required")?;
    if vcpus > 64 {
        return Err("at most 64 vCPUs".into());
    }
    Ok(Options { out, cfg, atomics })
}

fn header(o: &Options) -> String {
    let c = &o.cfg;
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "-".into()
        } else {
            v.join(",")
        }
    };
    let g = |g: &Geometry| format!("{}K:{}", g.bytes >> 10, g.ways);
    format!(
        "# costmodel counts v1 vcpus={} cpu_nodes={} mem_starts={} l1={} l2={} llc={} coherence={} atomics={}",
        c.cpu_nodes.len(),
        list(c.cpu_nodes.iter().map(|n| n.to_string()).collect()),
        list(c.mem_starts.iter().map(|a| format!("{a:#x}")).collect()),
        g(&c.l1),
        g(&c.l2),
        g(&c.llc),
        if c.coherence { "on" } else { "off" },
        if o.atomics { "on" } else { "off" },
    )
}

/// The plugin object the crate installs; the state lives in the statics.
struct CostModel;

impl Register for CostModel {
    fn register(&mut self, id: PluginId, args: &Args, info: &Info) -> qemu_plugin::Result<()> {
        let vcpus = info
            .system
            .as_ref()
            .map_or(1, |s| s.smp_vcpus.max(1) as usize);
        let opts = match parse_options(args, vcpus) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("costmodel: {e}");
                std::process::exit(2);
            }
        };
        let file = match File::create(&opts.out) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("costmodel: {}: {e}", opts.out);
                std::process::exit(2);
            }
        };
        let mut out = BufWriter::new(file);
        let _ = writeln!(out, "{}", header(&opts));
        let _ = out.flush();
        // SAFETY: a plain allocation call; the result is checked below and
        // kept for the plugin's life (Board's invariant).
        let sb = unsafe { qemu_plugin::sys::qemu_plugin_scoreboard_new(SB_FIELDS * 8) };
        assert!(!sb.is_null(), "costmodel: no scoreboard");
        let _ = BOARD.set(Board(sb));
        let _ = STATE.set(Mutex::new(State {
            machine: Machine::new(opts.cfg.clone()),
            prev: vec![Counts::default(); vcpus],
            seq: 0,
            out,
        }));
        let _ = OPTIONS.set(opts);
        // SAFETY: `id` is this plugin's, handed in by install; the callback
        // is an extern "C" function of the type QEMU expects.
        unsafe {
            qemu_plugin::sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        }
        qemu_plugin_register_atexit_cb(id, |_| write_records("exit", 0, u32::MAX, 0))?;
        Ok(())
    }
}

impl HasCallbacks for CostModel {
    fn on_vcpu_init(&mut self, _id: PluginId, _vcpu: VCPUIndex) -> qemu_plugin::Result<()> {
        // Register handles are the same on every vCPU of one CPU model.
        if RAX.get().is_none() {
            if let Some(r) = qemu_plugin_get_registers()?
                .into_iter()
                .find(|r| r.name == "rax")
            {
                let _ = RAX.set(r);
            }
        }
        Ok(())
    }
}

qemu_plugin::register!(CostModel);

/// Each vCPU's totals now: the model's events and the scoreboard's counts;
/// `less` instructions taken off vCPU `by` (those of its block after the
/// mark, which have been counted already but not run).
fn totals(s: &State, by: u32, less: u64) -> Vec<Counts> {
    let b = BOARD.get().expect("board");
    (0..s.prev.len())
        .map(|v| {
            let mut c = s.machine.counts[v];
            let v = v as u32;
            c.insns = b.get(SB_INSNS, v) - if v == by { less } else { 0 };
            c.locked = b.get(SB_LOCKED, v);
            c.unlocked = b.get(SB_UNLOCKED, v);
            c.cx16_locked = b.get(SB_CX16_LOCKED, v);
            c.cx16_unlocked = b.get(SB_CX16_UNLOCKED, v);
            c
        })
        .collect()
}

/// Writes one record per vCPU for the region that ends now.
fn write_records(kind: &str, id: u64, by: u32, less: u64) {
    let Some(state) = STATE.get() else { return };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let now = totals(&s, by, less);
    s.seq += 1;
    let seq = s.seq;
    let mut text = String::new();
    for (v, c) in now.iter().enumerate() {
        let r = Record {
            kind: kind.to_string(),
            seq,
            id,
            vcpu: v as u32,
            by: if by == u32::MAX { 0 } else { by },
            counts: c.since(&s.prev[v]),
        };
        text += &r.line();
        text.push('\n');
    }
    s.prev = now;
    let _ = s.out.write_all(text.as_bytes());
    let _ = s.out.flush();
}

/// The mark's execute callback; `userdata` is the number of instructions
/// of its block after it.
extern "C" fn on_mark(vcpu: u32, userdata: *mut c_void) {
    let id = RAX.get().and_then(|r| r.read().ok()).map_or(0, |b| {
        let mut a = [0u8; 8];
        let n = b.len().min(8);
        a[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(a)
    });
    write_records("mark", id, vcpu, userdata as u64);
}

/// The memory callback; `userdata` is 1 for an atomic read-modify-write
/// (its load asks for ownership), else 0.
extern "C" fn on_mem(vcpu: u32, info: qemu_plugin_meminfo_t, vaddr: u64, userdata: *mut c_void) {
    // SAFETY: `info` is the handle QEMU passes to this callback, valid for
    // its duration; get_hwaddr may return null (then nothing is modeled).
    let hw = unsafe { qemu_plugin::sys::qemu_plugin_get_hwaddr(info, vaddr) };
    if hw.is_null() {
        return;
    }
    let Some(state) = STATE.get() else { return };
    // SAFETY: `hw` is non-null and valid during the callback, as is `info`.
    let (io, paddr, store, shift) = unsafe {
        (
            qemu_plugin::sys::qemu_plugin_hwaddr_is_io(hw),
            qemu_plugin::sys::qemu_plugin_hwaddr_phys_addr(hw),
            qemu_plugin::sys::qemu_plugin_mem_is_store(info),
            qemu_plugin::sys::qemu_plugin_mem_size_shift(info),
        )
    };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let cpu = vcpu as usize;
    if cpu >= s.prev.len() {
        return;
    }
    if io {
        s.machine.counts[cpu].io += 1;
        return;
    }
    let how = if store {
        Access::Write
    } else if !userdata.is_null() {
        Access::ReadForOwnership
    } else {
        Access::Read
    };
    s.machine.access(cpu, paddr, 1 << shift, how);
}

/// The translation callback: decode each instruction, attach the counters.
extern "C" fn on_translate(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    let (Some(board), Some(opts)) = (BOARD.get(), OPTIONS.get()) else {
        return;
    };
    // SAFETY: `tb` is the block QEMU is translating, valid during this
    // callback; every handle below comes from it and is used only here.
    unsafe {
        let n = qemu_plugin::sys::qemu_plugin_tb_n_insns(tb);
        qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
            tb,
            qemu_plugin_op::QEMU_PLUGIN_INLINE_ADD_U64,
            board.entry(SB_INSNS),
            n as u64,
        );
        for i in 0..n {
            let insn: *mut qemu_plugin_insn = qemu_plugin::sys::qemu_plugin_tb_get_insn(tb, i);
            let mut bytes = [0u8; 16];
            let len = qemu_plugin::sys::qemu_plugin_insn_data(
                insn,
                bytes.as_mut_ptr().cast(),
                bytes.len(),
            );
            let mut kind = classify(&bytes[..len.min(16)]);
            if !opts.atomics && kind != Kind::Mark {
                kind = Kind::Plain;
            }
            let field = match kind {
                Kind::Locked => Some(SB_LOCKED),
                Kind::Unlocked => Some(SB_UNLOCKED),
                Kind::Cx16Locked => Some(SB_CX16_LOCKED),
                Kind::Cx16Unlocked => Some(SB_CX16_UNLOCKED),
                Kind::Plain | Kind::Mark => None,
            };
            if let Some(f) = field {
                qemu_plugin::sys::qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
                    insn,
                    qemu_plugin_op::QEMU_PLUGIN_INLINE_ADD_U64,
                    board.entry(f),
                    1,
                );
            }
            if kind == Kind::Mark {
                qemu_plugin::sys::qemu_plugin_register_vcpu_insn_exec_cb(
                    insn,
                    Some(on_mark),
                    qemu_plugin_cb_flags::QEMU_PLUGIN_CB_R_REGS,
                    (n - i - 1) as *mut c_void,
                );
            }
            qemu_plugin::sys::qemu_plugin_register_vcpu_mem_cb(
                insn,
                Some(on_mem),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                qemu_plugin_mem_rw::QEMU_PLUGIN_MEM_RW,
                kind.rmw() as usize as *mut c_void,
            );
        }
    }
}
