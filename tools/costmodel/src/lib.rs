// SPDX-License-Identifier: GPL-2.0
//! libcostmodel.so: a QEMU TCG plugin that feeds the cost model
//! (`costmodel_model`, model/) every guest memory access by physical address
//! and counts instructions and atomics, per vCPU, between the marks of
//! include/rslub_mark.h. Load it into the icount boot:
//!
//! ```text
//! -icount shift=0,sleep=off -plugin libcostmodel.so,out=FILE[,cpu_nodes=0:0:1:1]
//!     [,mem_starts=0x40000000][,l1=48K:12][,l2=2M:16][,llc=16M:16]
//!     [,coherence=off][,atomics=off][,cpu_number=0xADDR]
//!     [,strings=fold|iter][,rmw=whole|access][,model=on|off][,start=mark|boot]
//!     [,core=ROB:MLP:SB:DEPWIN][,profile=NAME][,order=time|qemu][,wait=on|off]
//!     [,vcpu=gs|qemu][,record=TRACE]
//! ```
//!
//! How instructions are counted (the defaults first; they count like the
//! hardware):
//! - `strings=fold`: a rep string instruction is one instruction, priced by
//!   its bytes, its lines one access each (`costmodel_model::strings`);
//!   `strings=iter`: as QEMU runs it, one instruction and one access per
//!   element (the old counts).
//! - `rmw=whole`: an atomic is priced once, by the state of its line
//!   (`Machine::rmw`); `rmw=access`: its kind's price plus its load and its
//!   store as plain accesses (the old pricing).
//! - `model=off`: instructions only (rep folded), for the icount boot of
//!   `make bench` (the instruction count the CPU would retire): no memory
//!   callback but a rep instruction's, no register read at a block (counts
//!   on QEMU's vCPU index: a region's sum over the vCPUs is exact, a
//!   vCPU's own share is not), and every field but `insns`, `str_insns`
//!   and `str_folded` written as 0.
//!
//! - `core=ROB:MLP:SB:DEPWIN`: also count the accesses an out-of-order
//!   core of that shape hides (`hid_*`, `costmodel_model::overlap`), for an
//!   interval profile with the same `[NAME.core]` (profiles.toml). Each
//!   access then carries its instruction's index and, for an 8-byte load,
//!   the value it loaded (`qemu_plugin_mem_get_value`).
//!
//! - `order=time` (default with the model): the vCPUs' events reach the
//!   model in the order of their modeled clocks, priced with `profile=`
//!   (a profile of profiles.toml, built in; default `server`), not in
//!   QEMU's order of long slices (`costmodel_model::order`); `order=qemu`:
//!   QEMU's order, each event at once. `wait=on` (default): a line in
//!   transfer queues the next, and a spinning vCPU (after a `pause`) waits
//!   for the store it reads (`wait`); `wait=off` takes both out. Each
//!   region's makespan is `span`, on the record of the vCPU of its mark.
//!
//! `record=TRACE`: every event the model is fed goes to TRACE too
//! (`costmodel_model::trace`; about 50 bytes an access), for
//! `costmodel-replay` to feed the model again without QEMU.
//!
//! `popf`, `cli` and `sti` are counted at execution (an interval profile
//! prices them as measured; the in-order ones at 0).
//!
//! `cpu_number=` is the address of the guest kernel's per-CPU `cpu_number`
//! (System.map): without it, under round-robin TCG, every access counts on
//! the vCPU that translated its code (see `CURRENT`). `vcpu=qemu` trusts
//! QEMU's vCPU index instead (right on the patched QEMU of `make qemu`,
//! patches/qemu/0002, or with one vCPU): no register read at each block.
//!
//! Lists are separated by `:` (QEMU splits the plugin's arguments at
//! commas). The model starts at the first mark of the boot: until then
//! blocks are translated with the instruction count, the marks and the
//! counters of execution only, no memory callback and no register read (a
//! boot costs about what the icount boot's does), and the counts of the
//! region the first mark ends hold instructions and atomics only. The
//! first mark asks QEMU to reset the plugin (`qemu_plugin_reset`): at the
//! end of that block QEMU flushes its translations and every block is
//! translated again with the model's callbacks.
//! `start=boot` starts it at once (a guest without marks: the firmware
//! alone, to see the plugin at work).
//!
//! At translation each instruction is decoded once (`decode::classify`):
//! a rep string instruction gets an execute callback that folds its
//! executions, the mark one that reads %rax, with `rmw=access` atomics one
//! that counts them, and every instruction a memory callback with its kind
//! (QEMU calls it only for instructions that access memory); what each
//! callback does with the model is `costmodel_model::feed`. Instructions
//! are counted per translation block by an execute callback at its start;
//! a mark takes off the instructions after it in its block, so that they
//! count in the next region. Counting happens at execution. The model is one global
//! state behind a mutex: under `-icount` the vCPUs run round-robin on one
//! thread, so its order of accesses is the same from run to run.
//!
//! Output (docs/benchmarks.md, "The cost model"): a `#` header line, then at
//! each mark one `mark` line per vCPU with its counts since the previous
//! mark, and `exit` lines when QEMU exits.

use costmodel_model::cache::Geometry;
use costmodel_model::counts::{Counts, Record};
use costmodel_model::decode::{decides, flags_op, pack_rep, unpack_rep, FlagsOp, Kind};
use costmodel_model::feed::{Feed, MemOp};
use costmodel_model::machine::Machine;
use costmodel_model::options::Options;
use costmodel_model::order::{Clocks, Event, Order};
use costmodel_model::trace::{self, Rec};
use qemu_plugin::sys::{
    qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_insn, qemu_plugin_mem_rw,
    qemu_plugin_meminfo_t, qemu_plugin_reg_descriptor, qemu_plugin_register, qemu_plugin_tb,
    GArray, GByteArray,
};
use qemu_plugin::{
    install::{Args, Info},
    plugin::{HasCallbacks, Register},
    qemu_plugin_register_atexit_cb, PluginId, VCPUIndex,
};
use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The counters kept outside the model, one u64 each per vCPU: QEMU's
/// instruction count (every execution of a rep instruction), with
/// `rmw=access` the atomics by kind, and `popf`, `cli`, `sti`.
const SB_INSNS: usize = 0;
const SB_LOCKED: usize = 1;
const SB_UNLOCKED: usize = 2;
const SB_CX16_LOCKED: usize = 3;
const SB_CX16_UNLOCKED: usize = 4;
const SB_POPF: usize = 5;
const SB_CLI: usize = 6;
const SB_STI: usize = 7;
const SB_FIELDS: usize = 8;
/// The most vCPUs the plugin takes (the model's limit too).
const MAX_VCPUS: usize = 64;

/// Per vCPU, its instructions and atomics, added by execute callbacks.
///
/// QEMU's inline per-vCPU scoreboard ops would be cheaper, but QEMU 10.0.2
/// crashed in generated code with them under `-icount` and two vCPUs or
/// more (seen 2026-12-03; one vCPU, or two without icount, ran): so the
/// counts go through callbacks. Each vCPU adds to its own row only; under
/// `-icount` the vCPUs run on one host thread anyway.
static COUNTERS: [[AtomicU64; SB_FIELDS]; MAX_VCPUS] =
    [const { [const { AtomicU64::new(0) }; SB_FIELDS] }; MAX_VCPUS];

fn counter(field: usize, vcpu: u32) -> u64 {
    COUNTERS
        .get(vcpu as usize)
        .map_or(0, |row| row[field].load(Ordering::Relaxed))
}

fn count(field: usize, vcpu: u32, n: u64) {
    if let Some(row) = COUNTERS.get(vcpu as usize) {
        row[field].fetch_add(n, Ordering::Relaxed);
    }
}

/// Everything the callbacks share.
struct State {
    machine: Machine,
    /// The vCPUs' events in modeled time (None: `model=off`).
    order: Option<Order>,
    /// The machine's time at the previous mark (`Order::now`).
    then: f64,
    /// Each vCPU's totals at the previous mark.
    prev: Vec<Counts>,
    /// The number of regions written so far.
    seq: u64,
    out: BufWriter<File>,
    /// `record=FILE`: every event the model is fed (`costmodel_model::trace`).
    trace: Option<BufWriter<File>>,
}

impl State {
    /// Sends an event of `cpu` to the order of modeled time (and to the
    /// trace).
    fn push(&mut self, cpu: usize, ev: Event) {
        if let Some(o) = self.order.as_mut() {
            if let Some(t) = self.trace.as_mut() {
                let _ = Rec::Event(cpu, ev).write(t);
            }
            o.push(&mut self.machine, cpu, ev);
        }
    }
}

static STATE: OnceLock<Mutex<State>> = OnceLock::new();
static OPTIONS: OnceLock<Options> = OnceLock::new();
/// Set by the first mark: the model sees memory accesses from then on.
static ARMED: AtomicBool = AtomicBool::new(false);
/// QEMU's handles (`qemu_plugin_register` pointers; 0 until the first
/// vCPU is set up) of %rax, where the mark's id is, and of the GS bases,
/// in kernel mode and (swapped) in user mode.
static RAX: AtomicUsize = AtomicUsize::new(0);
static GS_BASE: AtomicUsize = AtomicUsize::new(0);
static KERNEL_GS_BASE: AtomicUsize = AtomicUsize::new(0);

/// Which vCPU runs now, as found at the start of its block (`whoami`).
///
/// QEMU 10.0.2 hands its callbacks the index of the vCPU that translated
/// the block, not of the one executing it, when the vCPUs run round-robin
/// on one thread (`-icount`, or `-accel tcg,thread=single`): a loop first
/// run on vCPU 0 and then on vCPU 3 was counted on vCPU 0 both times (seen
/// 2026-12-03; correct under multi-threaded TCG). So at each block the
/// plugin reads the running CPU's GS base (the kernel's per-CPU offset; in
/// user mode the swapped one) and, once per base, the kernel's per-CPU
/// `cpu_number` through it (its address from System.map, `cpu_number=`):
/// Linux numbers CPUs as QEMU indexes them (APIC ids 0..n). Until the model
/// is armed, or without `cpu_number=`, QEMU's index is used.
static CURRENT: AtomicU32 = AtomicU32::new(u32::MAX);
/// Each CPU's GS base (0: not seen yet), learned as bases are first seen;
/// `whoami` looks at every block, so a scan of these and the last base
/// found (`LAST`), not a locked map (the register read alone is still about
/// a sixth of a model boot's time: perf, 2026-12-05).
static GS_OF_CPU: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];

fn header(o: &Options) -> String {
    let c = &o.cfg;
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "-".into()
        } else {
            v.join(":")
        }
    };
    let g = |g: &Geometry| format!("{}K:{}", g.bytes >> 10, g.ways);
    format!(
        "# costmodel counts v5 vcpus={} cpu_nodes={} mem_starts={} l1={} l2={} llc={} coherence={} atomics={} strings={} rmw={} model={} core={} cpu_number={} order={} wait={} profile={} vcpu={}",
        c.cpu_nodes.len(),
        list(c.cpu_nodes.iter().map(|n| n.to_string()).collect()),
        list(c.mem_starts.iter().map(|a| format!("{a:#x}")).collect()),
        g(&c.l1),
        g(&c.l2),
        g(&c.llc),
        if c.coherence { "on" } else { "off" },
        if o.feed.atomics { "on" } else { "off" },
        if o.feed.fold_strings { "fold" } else { "iter" },
        if o.feed.rmw_whole { "whole" } else { "access" },
        if o.model { "on" } else { "off" },
        c.core.map_or("-".into(), |k| k.text()),
        o.cpu_number.map_or("-".into(), |a| format!("{a:#x}")),
        if o.mode.by_time { "time" } else { "qemu" },
        if o.mode.wait { "on" } else { "off" },
        o.profile.name,
        if o.qemu_index { "qemu" } else { "gs" },
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
        let opts = match Options::parse(&args.raw, vcpus) {
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
        if opts.start_boot {
            ARMED.store(true, Ordering::Relaxed);
        }
        let trace = match opts.record.as_deref().filter(|_| opts.model) {
            None => None,
            Some(path) => match File::create(path) {
                Ok(f) => {
                    let mut w = BufWriter::with_capacity(1 << 20, f);
                    let _ = w.write_all(trace::header(vcpus, &args.raw).as_bytes());
                    Some(w)
                }
                Err(e) => {
                    eprintln!("costmodel: record={path}: {e}");
                    std::process::exit(2);
                }
            },
        };
        let order = opts
            .model
            .then(|| Order::new(vcpus, opts.mode, opts.feed, Clocks::of(&opts.profile)));
        let _ = STATE.set(Mutex::new(State {
            machine: Machine::new(opts.cfg.clone()),
            order,
            then: 0.0,
            prev: vec![Counts::default(); vcpus],
            seq: 0,
            out,
            trace,
        }));
        let _ = OPTIONS.set(opts);
        PLUGIN_ID.store(id, Ordering::Relaxed);
        register_callbacks(id)
    }
}

/// This plugin's id (`qemu_plugin_reset` takes it).
static PLUGIN_ID: AtomicU64 = AtomicU64::new(0);

/// The callbacks of a run: at install, and again after the reset that
/// arms the model (a reset unregisters every callback).
fn register_callbacks(id: PluginId) -> qemu_plugin::Result<()> {
    // SAFETY: `id` is this plugin's; the callback is an extern "C"
    // function of the type QEMU expects.
    unsafe {
        qemu_plugin::sys::qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
    }
    qemu_plugin_register_atexit_cb(id, |_| write_records("exit", 0, u32::MAX, 0))
}

/// After the first mark's reset: QEMU has flushed its translations, so
/// that every block is translated again with the model's callbacks.
extern "C" fn on_reset(id: qemu_plugin_id_t) {
    if let Err(e) = register_callbacks(id) {
        eprintln!("costmodel: callbacks not registered again after arming: {e}");
        std::process::exit(2);
    }
}

impl HasCallbacks for CostModel {
    fn on_vcpu_init(&mut self, _id: PluginId, _vcpu: VCPUIndex) -> qemu_plugin::Result<()> {
        // Register handles are the same on every vCPU of one CPU model.
        if RAX.load(Ordering::Relaxed) != 0 {
            return Ok(());
        }
        // SAFETY: called in a vCPU init callback, where QEMU lists the
        // registers; the array holds `len` descriptors whose names are
        // QEMU's constant strings, and the caller frees the array alone.
        unsafe {
            let arr = qemu_plugin::sys::qemu_plugin_get_registers();
            if arr.is_null() {
                return Ok(());
            }
            let descs = std::slice::from_raw_parts(
                (*arr).data as *const qemu_plugin_reg_descriptor,
                (*arr).len as usize,
            );
            for d in descs {
                let slot = match CStr::from_ptr(d.name).to_bytes() {
                    b"rax" => &RAX,
                    b"gs_base" => &GS_BASE,
                    b"k_gs_base" => &KERNEL_GS_BASE,
                    _ => continue,
                };
                slot.store(d.handle as usize, Ordering::Relaxed);
            }
            g_array_free(arr, 1);
        }
        Ok(())
    }
}

qemu_plugin::register!(CostModel);

/// Each vCPU's totals now: the model's events and the scoreboard's counts;
/// `less` instructions taken off vCPU `by` (those of its block after the
/// mark, which have been counted already but not run). The instructions
/// are QEMU's less the rep executions the model folded.
fn totals(s: &State, by: u32, less: u64) -> Vec<Counts> {
    let model = OPTIONS.get().is_none_or(|o| o.model);
    (0..s.prev.len())
        .map(|i| {
            let m = s.machine.counts[i];
            let v = i as u32;
            let insns =
                Feed::insns(&s.machine, i, counter(SB_INSNS, v)) - if v == by { less } else { 0 };
            if !model {
                return Counts {
                    insns,
                    str_insns: m.str_insns,
                    str_folded: m.str_folded,
                    ..Counts::default()
                };
            }
            Counts {
                insns,
                popf: counter(SB_POPF, v),
                cli: counter(SB_CLI, v),
                sti: counter(SB_STI, v),
                locked: m.locked + counter(SB_LOCKED, v),
                unlocked: m.unlocked + counter(SB_UNLOCKED, v),
                cx16_locked: m.cx16_locked + counter(SB_CX16_LOCKED, v),
                cx16_unlocked: m.cx16_unlocked + counter(SB_CX16_UNLOCKED, v),
                ..m
            }
        })
        .collect()
}

/// Writes one record per vCPU for the region that ends now.
fn write_records(kind: &str, id: u64, by: u32, less: u64) {
    let Some(state) = STATE.get() else { return };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut *s;
    let mut span = 0;
    if let Some(o) = s.order.as_mut() {
        if let Some(t) = s.trace.as_mut() {
            let _ = Rec::Mark.write(t);
            let _ = t.flush();
        }
        o.flush(&mut s.machine);
        let now = o.now();
        span = (now - s.then).max(0.0).round() as u64;
        s.then = now;
        if o.forced > 0 {
            eprintln!(
                "costmodel: {} events modeled ahead of their turn (a vCPU ran no event while {} were queued)",
                o.forced,
                costmodel_model::order::MAX_QUEUED
            );
            o.forced = 0;
        }
        if o.quiet > 0 {
            eprintln!(
                "costmodel: {} times a vCPU sent no event for {} events of the others and was taken for idle",
                o.quiet,
                costmodel_model::order::QUIET_EVENTS
            );
            o.quiet = 0;
        }
    }
    s.machine.settle();
    let mut now = totals(s, by, less);
    // The span goes on the marking vCPU's record (its sum is the span).
    let at = if by == u32::MAX { 0 } else { by as usize };
    for (i, c) in now.iter_mut().enumerate() {
        c.span = s.prev[i].span + if i == at { span } else { 0 };
    }
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

// glib, as QEMU links it: the plugin API reads registers and guest memory
// into a GByteArray that glib must own (it resizes it).
extern "C" {
    fn g_byte_array_new() -> *mut GByteArray;
    fn g_byte_array_free(array: *mut GByteArray, free_segment: i32) -> *mut u8;
    fn g_byte_array_set_size(array: *mut GByteArray, len: u32) -> *mut GByteArray;
    fn g_array_free(array: *mut GArray, free_segment: i32) -> *mut u8;
}

thread_local! {
    /// Each QEMU thread's buffer for register reads, kept for the thread's
    /// life: a block's read allocates nothing.
    static REG_BUF: Cell<*mut GByteArray> = const { Cell::new(std::ptr::null_mut()) };
    /// The GS base `whoami` found last on this thread, and its CPU: per
    /// thread, so that under multi-threaded TCG no thread reads another's
    /// pair half-written (under -icount one thread runs every vCPU).
    static LAST: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

/// A register of the running vCPU (`handle`, one of the statics above),
/// little-endian, as a u64 (a callback registered with
/// `QEMU_PLUGIN_CB_R_REGS` only).
fn read_u64(handle: &AtomicUsize) -> Option<u64> {
    let h = handle.load(Ordering::Relaxed);
    if h == 0 {
        return None;
    }
    let buf = REG_BUF.with(|b| {
        if b.get().is_null() {
            // SAFETY: returns a new glib-owned array (never freed: one per
            // QEMU thread, for the thread's life).
            b.set(unsafe { g_byte_array_new() });
        }
        b.get()
    });
    if buf.is_null() {
        return None;
    }
    // SAFETY: `buf` is this thread's live GByteArray; `h` is a register
    // handle QEMU listed; QEMU appends the register's bytes to `buf` and
    // returns their number or -1; `data` then holds `len` bytes.
    unsafe {
        g_byte_array_set_size(buf, 0);
        let n = qemu_plugin::sys::qemu_plugin_read_register(h as *mut qemu_plugin_register, buf);
        let b = &*buf;
        if n <= 0 || b.data.is_null() {
            return None;
        }
        let mut a = [0u8; 8];
        let n = (b.len as usize).min(8);
        a[..n].copy_from_slice(std::slice::from_raw_parts(b.data, n));
        Some(u64::from_le_bytes(a))
    }
}

/// Four bytes of guest virtual memory, as the running vCPU sees them (a
/// callback registered with `QEMU_PLUGIN_CB_R_REGS` only).
///
/// Not through the crate's `qemu_plugin_read_memory_vaddr`: it hands QEMU
/// a GByteArray on the stack that glib then resizes (QEMU crashed in
/// g_byte_array_set_size, seen 2026-12-03).
fn read_guest(vaddr: u64) -> Option<[u8; 4]> {
    // SAFETY: g_byte_array_new returns a new, empty, glib-owned array; it
    // is freed below with its data on every path.
    let arr = unsafe { g_byte_array_new() };
    if arr.is_null() {
        return None;
    }
    // SAFETY: `arr` is a valid GByteArray; QEMU fills it with `len` bytes
    // or returns false.
    let ok = unsafe { qemu_plugin::sys::qemu_plugin_read_memory_vaddr(vaddr, arr, 4) };
    let mut out = [0u8; 4];
    // SAFETY: `arr` is valid; its `data` holds `len` bytes.
    let got = unsafe {
        let a = &*arr;
        if ok && a.len as usize >= 4 && !a.data.is_null() {
            out.copy_from_slice(std::slice::from_raw_parts(a.data, 4));
            true
        } else {
            false
        }
    };
    // SAFETY: `arr` came from g_byte_array_new and is not used after this;
    // a non-zero free_segment frees its data too (the call returns null).
    unsafe { g_byte_array_free(arr, 1) };
    got.then_some(out)
}

/// The running vCPU's Linux CPU number (see `CURRENT`), or None.
fn whoami() -> Option<u32> {
    let addr = OPTIONS.get()?.cpu_number?;
    // Kernel per-CPU bases are kernel addresses (the upper half, with 4 or
    // 5 paging levels); in user mode the kernel's base is the swapped one.
    let kernel = |g: &u64| *g >> 63 == 1;
    let base = read_u64(&GS_BASE)
        .filter(kernel)
        .or_else(|| read_u64(&KERNEL_GS_BASE).filter(kernel))?;
    let (last_base, last_cpu) = LAST.with(Cell::get);
    if last_base == base {
        return Some(last_cpu);
    }
    let cpu = match GS_OF_CPU
        .iter()
        .position(|g| g.load(Ordering::Relaxed) == base)
    {
        Some(cpu) => cpu as u32,
        None => {
            let cpu = u32::from_le_bytes(read_guest(base.wrapping_add(addr))?);
            GS_OF_CPU.get(cpu as usize)?.store(base, Ordering::Relaxed);
            cpu
        }
    };
    LAST.with(|l| l.set((base, cpu)));
    Some(cpu)
}

/// The vCPU running now: the one found at its block's start, else QEMU's.
fn running(vcpu: u32) -> u32 {
    match CURRENT.load(Ordering::Relaxed) {
        u32::MAX => vcpu,
        v => v,
    }
}

/// The mark's execute callback; `userdata` is the number of instructions
/// of its block after it.
extern "C" fn on_mark(vcpu: u32, userdata: *mut c_void) {
    let id = read_u64(&RAX).unwrap_or(0);
    write_records("mark", id, running(vcpu), userdata as u64);
    if !ARMED.swap(true, Ordering::Relaxed) && OPTIONS.get().is_some_and(|o| o.model) {
        // The blocks translated so far carry the unarmed callbacks only
        // (`on_translate`): QEMU flushes them when this block ends (a safe
        // work item kicks the vCPU out of its loop) and calls `on_reset`.
        // SAFETY: the id is this plugin's; `on_reset` has the type QEMU
        // expects and registers the callbacks again.
        unsafe {
            qemu_plugin::sys::qemu_plugin_reset(PLUGIN_ID.load(Ordering::Relaxed), Some(on_reset));
        }
    }
}

/// A memory callback's data: the instruction's `Kind::code`, whether it
/// acts on the value it reads (`decode::decides`, bit 15), and how many
/// instructions of its block, it included, remain from it to the block's
/// end (its index in the vCPU's count, which is added at the block's start).
fn pack_mem(code: u64, decides: bool, to_end: u64) -> u64 {
    code | (u64::from(decides) << 15) | (to_end << 16)
}

/// The memory callback; `userdata` is `pack_mem`'s.
extern "C" fn on_mem(vcpu: u32, info: qemu_plugin_meminfo_t, vaddr: u64, userdata: *mut c_void) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
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
    let Some(opts) = OPTIONS.get() else { return };
    // The loaded value, for the windows of an interval core (`core=`): an
    // 8-byte load's may be a pointer a later load follows.
    let value = (opts.cfg.core.is_some() && !store && shift == 3).then(|| {
        // SAFETY: `info` is valid during the callback; QEMU fills the value
        // of the access it reports, a u64 for an 8-byte access.
        unsafe { qemu_plugin::sys::qemu_plugin_mem_get_value(info).data.u64_ }
    });
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut *s;
    let cpu = running(vcpu) as usize;
    if cpu >= s.prev.len() {
        return;
    }
    let data = userdata as u64;
    let count = counter(SB_INSNS, cpu as u32);
    let mut op = MemOp {
        code: data & 0x7fff,
        decides: data & 0x8000 != 0,
        vaddr,
        paddr,
        size: 1 << shift,
        store,
        io,
        value,
        insn: 0,
    };
    match s.order {
        Some(_) => s.push(
            cpu,
            Event::Mem {
                op,
                count,
                to_end: data >> 16,
            },
        ),
        None => {
            op.insn = Feed::insns(&s.machine, cpu, count).saturating_sub(data >> 16);
            opts.feed.mem(&mut s.machine, cpu, &op);
        }
    }
}

/// Sends an event of the running vCPU to the order of modeled time.
fn push(vcpu: u32, ev: Event) {
    let Some(state) = STATE.get() else { return };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut *s;
    let cpu = running(vcpu) as usize;
    if cpu < s.prev.len() {
        s.push(cpu, ev);
    }
}

/// `hlt` and `mwait`'s execute callback: the vCPU idles.
extern "C" fn on_halt(vcpu: u32, _userdata: *mut c_void) {
    if ARMED.load(Ordering::Relaxed) {
        push(vcpu, Event::Halt);
    }
}

/// `pause`'s execute callback: the vCPU spins (`Order::pause`).
extern "C" fn on_pause(vcpu: u32, _userdata: *mut c_void) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    let Some(state) = STATE.get() else { return };
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut *s;
    let cpu = running(vcpu) as usize;
    if let (Some(o), true) = (s.order.as_mut(), cpu < s.prev.len()) {
        o.pause(cpu);
        if let Some(t) = s.trace.as_mut() {
            let _ = Rec::Pause(cpu).write(t);
        }
    }
}

/// A rep string instruction's execute callback, at each of its executions
/// (one per element under -icount); `userdata` is `pack_rep` of its
/// address and operation.
extern "C" fn on_rep(vcpu: u32, userdata: *mut c_void) {
    if !ARMED.load(Ordering::Relaxed) {
        return;
    }
    let Some(state) = STATE.get() else { return };
    let (pc, op) = unpack_rep(userdata as u64);
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    let s = &mut *s;
    let cpu = running(vcpu);
    if cpu as usize >= s.prev.len() {
        return;
    }
    let count = counter(SB_INSNS, cpu);
    match s.order {
        Some(_) => s.push(cpu as usize, Event::Rep { pc, op, count }),
        None => {
            s.machine.rep_exec(cpu as usize, pc, op, count);
        }
    }
}

/// A block's execute callback; `userdata` is its number of instructions.
extern "C" fn on_block(vcpu: u32, userdata: *mut c_void) {
    let armed = ARMED.load(Ordering::Relaxed);
    if armed && !OPTIONS.get().is_some_and(|o| o.qemu_index) {
        CURRENT.store(whoami().unwrap_or(vcpu), Ordering::Relaxed);
    }
    count(SB_INSNS, running(vcpu), userdata as u64);
    if armed {
        push(vcpu, Event::Block(userdata as u64));
    }
}

/// A block's execute callback with `model=off`: the instructions only, on
/// QEMU's vCPU index, without reading registers (`whoami` was most of the
/// plugin's cost in an icount boot). Under round-robin TCG that index is
/// the vCPU that translated the block, so a vCPU's own count is not exact,
/// but a region's sum over the vCPUs, which is what rsbench reads, is.
extern "C" fn on_block_count(vcpu: u32, userdata: *mut c_void) {
    count(SB_INSNS, vcpu, userdata as u64);
}

/// An atomic's, or a `popf`'s, `cli`'s or `sti`'s, execute callback;
/// `userdata` is its counter's field.
extern "C" fn on_atomic(vcpu: u32, userdata: *mut c_void) {
    count(userdata as usize, running(vcpu), 1);
}

/// An execute callback's type.
type BlockCb = extern "C" fn(u32, *mut c_void);

/// The translation callback: decode each instruction, attach the counters.
extern "C" fn on_translate(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    let Some(opts) = OPTIONS.get() else {
        return;
    };
    // SAFETY: `tb` is the block QEMU is translating, valid during this
    // callback; every handle below comes from it and is used only here.
    unsafe {
        let n = qemu_plugin::sys::qemu_plugin_tb_n_insns(tb);
        // Until the first mark the model sees nothing: such a block counts
        // its instructions, marks, rep string instructions and the
        // counters of execution, without a memory callback at every
        // access or the registers at every block (a boot costs about a
        // third of what the armed callbacks make it).
        let armed = opts.model && ARMED.load(Ordering::Relaxed);
        let (cb, flags) = if armed {
            // Registers are read only to find the running vCPU by its GS
            // base; with `vcpu=qemu` QEMU's index is right and a callback
            // that reads none spares QEMU syncing them.
            let flags = if opts.qemu_index {
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS
            } else {
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_R_REGS
            };
            (on_block as BlockCb, flags)
        } else {
            (
                on_block_count as BlockCb,
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
            )
        };
        qemu_plugin::sys::qemu_plugin_register_vcpu_tb_exec_cb(
            tb,
            Some(cb),
            flags,
            n as *mut c_void,
        );
        for i in 0..n {
            let insn: *mut qemu_plugin_insn = qemu_plugin::sys::qemu_plugin_tb_get_insn(tb, i);
            let mut bytes = [0u8; 16];
            let len = qemu_plugin::sys::qemu_plugin_insn_data(
                insn,
                bytes.as_mut_ptr().cast(),
                bytes.len(),
            );
            let kind = opts.feed.kind(&bytes[..len.min(16)]);
            let field = match kind {
                _ if !opts.feed.counts_at_execution(kind) => None,
                Kind::Locked => Some(SB_LOCKED),
                Kind::Unlocked => Some(SB_UNLOCKED),
                Kind::Cx16Locked => Some(SB_CX16_LOCKED),
                Kind::Cx16Unlocked => Some(SB_CX16_UNLOCKED),
                _ => None,
            };
            let field = field.or(match flags_op(&bytes[..len.min(16)]) {
                _ if !opts.model => None,
                Some(FlagsOp::Popf) => Some(SB_POPF),
                Some(FlagsOp::Cli) => Some(SB_CLI),
                Some(FlagsOp::Sti) => Some(SB_STI),
                None => None,
            });
            if let Some(f) = field {
                qemu_plugin::sys::qemu_plugin_register_vcpu_insn_exec_cb(
                    insn,
                    Some(on_atomic),
                    qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                    f as *mut c_void,
                );
            }
            let idle = matches!(&bytes[..len.min(16)], [0xf4] | [0x0f, 0x01, 0xc9]);
            let pause = bytes[..len.min(16)] == [0xf3, 0x90];
            if opts.model && (idle || pause) {
                qemu_plugin::sys::qemu_plugin_register_vcpu_insn_exec_cb(
                    insn,
                    Some(if idle { on_halt } else { on_pause }),
                    qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                    std::ptr::null_mut(),
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
            if let Kind::Rep(op) = kind {
                let pc = qemu_plugin::sys::qemu_plugin_insn_vaddr(insn);
                qemu_plugin::sys::qemu_plugin_register_vcpu_insn_exec_cb(
                    insn,
                    Some(on_rep),
                    qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                    pack_rep(pc, op) as *mut c_void,
                );
            } else if !armed {
                continue;
            }
            qemu_plugin::sys::qemu_plugin_register_vcpu_mem_cb(
                insn,
                Some(on_mem),
                qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
                qemu_plugin_mem_rw::QEMU_PLUGIN_MEM_RW,
                pack_mem(
                    kind.code(),
                    kind.rmw() && decides(&bytes[..len.min(16)]),
                    (n - i) as u64,
                ) as *mut c_void,
            );
        }
    }
}
