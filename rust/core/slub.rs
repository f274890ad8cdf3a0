// SPDX-License-Identifier: GPL-2.0
//! The SLUB algorithm, generic over a [`Platform`].
//!
//! # Slab states
//! - *CPU slab*: frozen, owned by one CPU; its objects are split between the
//!   CPU's lockless freelist (`CpuSlab::freelist`) and the slab's own
//!   freelist (objects freed by other CPUs since it was frozen).
//! - *CPU partial*: frozen, on one CPU's partial list; not allocated from
//!   until it becomes that CPU's slab; frees to it are lockless.
//! - *Node partial*: not frozen, on its node's partial list, some objects free.
//! - *Full*: not frozen, on no list, no free object. Found again through the
//!   header of an object being freed.
//! - *Empty cached*: not frozen, on its node's empty-slab cache (at most
//!   `max_empty`), every object free, reused before new pages are asked for.
//!
//! # Transitions and who performs them
//! - node partial → CPU slab / CPU partial: `get_partial_node`, under the
//!   node's list_lock (freeze by cmpxchg16b).
//! - CPU slab → node partial / full / discarded: `deactivate_slab`, with the
//!   node's list_lock held across the unfreezing cmpxchg16b.
//! - CPU partial → node partial / discarded: `unfreeze_partials`, one
//!   list_lock hold per run of slabs of one node.
//! - full → CPU partial: a free (the first free object), by freezing it with
//!   cmpxchg16b; no list lock (a full slab is on no list).
//! - full → node partial (cpu_partial = 0), node partial → discarded (empty
//!   and enough partial slabs): a free, with list_lock taken before its
//!   cmpxchg16b.
//!
//! # Lock order
//! CPU lock (irqs off on this CPU; upstream's `local_lock` on `cpu_slab`)
//! → node `list_lock` (irq-safe spinlock). Only one node lock is held at a
//! time. Page allocation and ctors run with neither held when the gfp flags
//! allow sleeping.
//!
//! # Why the fast path is safe without disabling anything
//! The CPU's freelist and transaction id (`tid`) form one 16-byte pair,
//! changed only by a per-CPU cmpxchg16b (fast paths) or with the CPU lock
//! held (slow paths, which bump `tid` whenever they change the freelist).
//! The fast path reads tid and freelist, computes the new head and commits
//! with one cmpxchg16b on the current CPU's pair. If the task was preempted,
//! migrated or interrupted in between and anything touched that pair, the
//! tid differs and the cmpxchg fails; tids start at the CPU number and step
//! by a power of two at least the CPU count, so a tid read on one CPU can
//! never match another CPU's.

use crate::debug::{self, Damage, Track};
use crate::layout::Layout;
use crate::platform::{Pcpu, Platform};
use crate::slab::{
    free_pointer_ok, get_free_pointer, get_free_pointer_as, inuse, set_free_pointer,
    set_free_pointer_as, FreeError, SlabHeader, SlabList, FROZEN,
};
use crate::stat::Stat;
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::size_of;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};

/// Node ids handled (x86_64's default `NODES_SHIFT` of 6).
pub const MAX_NODES: usize = 64;

/// A constructor, as the C API passes it.
pub type Ctor = unsafe extern "C" fn(*mut c_void);

/// One CPU's state for one cache. The first 16 bytes are the cmpxchg16b pair.
#[repr(C, align(16))]
pub struct CpuSlab {
    /// Lockless freelist (first word of the pair).
    pub freelist: *mut u8,
    /// Transaction id (second word of the pair).
    pub tid: usize,
    /// The CPU slab, or null.
    pub slab: *mut SlabHeader,
    /// CPU partial list (frozen slabs linked through `next`).
    pub partial: *mut SlabHeader,
    /// Slabs on the CPU partial list.
    pub partial_slabs: u32,
    /// Event counters.
    pub stats: [usize; Stat::COUNT],
}

/// One node's lists, protected by its `list_lock`.
struct NodeLists {
    partial: SlabList,
    empty: SlabList,
    /// Full slabs of debug caches (so `validate` sees every slab); unused
    /// otherwise.
    full: SlabList,
}

/// Per-node state.
struct Node<P: Platform> {
    list_lock: P::NodeLock,
    lists: UnsafeCell<NodeLists>,
    /// Slabs of this node (any state); for destroy and reporting.
    nr_slabs: AtomicUsize,
    /// Racy copy of `partial.len()` for the unlocked peek.
    nr_partial: AtomicUsize,
}

/// Tunables and constants a cache is created with.
#[derive(Clone, Copy)]
pub struct Params {
    /// Objects kept on CPU partial lists (upstream's unit); 0 disables them.
    pub cpu_partial: u32,
    /// Partial slabs a node keeps before freeing empty ones.
    pub min_partial: u32,
    /// Empty slabs a node caches.
    pub max_empty: u32,
    /// `__GFP_ZERO`.
    pub gfp_zero: u32,
    /// `__GFP_THISNODE`.
    pub gfp_thisnode: u32,
    /// Debug features (`debug::CONSISTENCY` ...); the layout must match
    /// (red zones, owner records, free pointer outside when poisoning).
    pub debug: u32,
    /// Store free pointers obfuscated and check them before following.
    pub harden: bool,
    /// Thread the freelists of new slabs in random order.
    pub random_freelist: bool,
}

/// Counts a cache can report.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Node ids covered by the per-node arrays.
    pub nr_nodes: usize,
    /// Slabs per node.
    pub node_slabs: [usize; MAX_NODES],
    /// Node partial slabs per node.
    pub node_partial: [usize; MAX_NODES],
    /// Live objects per node (the node of their slab).
    pub node_objects: [usize; MAX_NODES],
    /// CPU slabs per node.
    pub node_cpu_slabs: [usize; MAX_NODES],
    /// Slabs, all states.
    pub slabs: usize,
    /// Slabs on node partial lists.
    pub partial: usize,
    /// Objects in node partial slabs that are in use.
    pub objects_partial: usize,
    /// CPU slabs.
    pub cpu_slabs: usize,
    /// Slabs on CPU partial lists.
    pub cpu_partial_slabs: usize,
    /// Slabs in the empty-slab caches.
    pub empty_slabs: usize,
    /// Objects allocated and not freed (exact only when nothing runs).
    pub live_objects: usize,
}

/// Longest cache name kept.
pub const NAME_LEN: usize = 64;

/// A cache: geometry, tunables, per-CPU and per-node state.
pub struct Cache<P: Platform> {
    name: [u8; NAME_LEN],
    name_len: usize,
    /// `SLAB_*` flags the cache was created with (reported, not interpreted).
    pub flags: u32,
    /// Slab geometry.
    pub layout: Layout,
    ctor: Option<Ctor>,
    pcpu: Pcpu,
    nodes: [*mut Node<P>; MAX_NODES],
    nr_nodes: usize,
    tid_step: usize,
    gfp_zero: u32,
    gfp_thisnode: u32,
    cpu_partial: AtomicU32,
    cpu_partial_slabs: AtomicU32,
    min_partial: AtomicU32,
    max_empty: AtomicU32,
    /// Fill CPU partials until `moved >= cpu_partial/2` instead of `>`
    /// (a knob for the benchmark's `fill` experiment).
    fill_ge: AtomicBool,
    /// Problems detected (bad frees, corruption).
    errors: AtomicUsize,
    /// Debug features (`debug::*` bits); 0 for the lockless fast paths.
    debug: u32,
    /// Which alloc and free paths serve the cache: one well-predicted
    /// branch on the fast path picks them (`MODE_*`).
    mode: u8,
    /// Free objects are poisoned (`debug::POISON` and no constructor).
    poisoned: bool,
    /// Thread new slabs' freelists in random order.
    random_freelist: AtomicBool,
    /// The shuffled object indices (`layout.objects` of them), made when
    /// random order is first enabled; freed with the cache.
    random_seq: AtomicPtr<u32>,
    /// Slabs taken out of service after a corruption report.
    isolated: AtomicUsize,
    _p: PhantomData<P>,
}

// SAFETY: all shared mutable state is per-CPU (CPU lock or cmpxchg16b),
// per-node (list_lock) or atomic.
unsafe impl<P: Platform> Sync for Cache<P> {}
// SAFETY: as above; the raw pointers are owned by the cache.
unsafe impl<P: Platform> Send for Cache<P> {}

/// Holds the CPU lock; `c` is the locked CPU's state.
struct CpuGuard {
    c: *mut CpuSlab,
    token: usize,
}

/// Slabs to return to the page allocator once locks are dropped.
struct Discards(*mut SlabHeader);

/// The node list a slab is found on.
#[derive(Clone, Copy)]
enum ListKind {
    Partial,
    Empty,
    Full,
}

/// A corruption found in a slab.
enum Problem {
    /// Slab-level: header or counters.
    Slab(&'static str),
    /// A free pointer `bad` read from object `from` (null: the head).
    FreePointer { from: *const u8, bad: *const u8 },
    /// Damaged bytes of an object.
    Object {
        obj: *const u8,
        damage: Damage,
        free: bool,
    },
    /// An object that is already free, freed again.
    DoubleFree(*const u8),
}

const NO_NODE: i32 = -1;

/// `Cache::mode`: lockless paths, hardened free pointers (the default).
const MODE_HARDENED: u8 = 0;
/// `Cache::mode`: lockless paths, plain free pointers.
const MODE_PLAIN: u8 = 1;
/// `Cache::mode`: the locked debug paths.
const MODE_DEBUG: u8 = 2;

impl<P: Platform> Cache<P> {
    /// Creates a cache in memory from the platform. Null on failure.
    /// `name` is truncated to `NAME_LEN` bytes.
    pub fn create(
        name: &[u8],
        flags: u32,
        layout: Layout,
        ctor: Option<Ctor>,
        params: Params,
    ) -> *mut Cache<P> {
        let this = P::alloc_meta(size_of::<Cache<P>>(), NO_NODE).cast::<Cache<P>>();
        if this.is_null() {
            return this;
        }
        let nr_cpus = P::nr_cpu_ids();
        let nr_nodes = (P::nr_node_ids() as usize).min(MAX_NODES);
        let mut layout = layout;
        if params.harden {
            layout.fp_key = P::random();
            layout.fp_swab = usize::MAX;
        }
        let mut name_buf = [0u8; NAME_LEN];
        let name_len = name.len().min(NAME_LEN);
        name_buf[..name_len].copy_from_slice(&name[..name_len]);
        // SAFETY: `this` is fresh, suitably aligned memory we own.
        unsafe {
            this.write(Cache {
                name: name_buf,
                name_len,
                flags,
                layout,
                ctor,
                pcpu: 0,
                nodes: [ptr::null_mut(); MAX_NODES],
                nr_nodes,
                tid_step: (nr_cpus as usize).next_power_of_two(),
                gfp_zero: params.gfp_zero,
                gfp_thisnode: params.gfp_thisnode,
                cpu_partial: AtomicU32::new(0),
                cpu_partial_slabs: AtomicU32::new(0),
                min_partial: AtomicU32::new(params.min_partial),
                max_empty: AtomicU32::new(params.max_empty),
                fill_ge: AtomicBool::new(false),
                errors: AtomicUsize::new(0),
                debug: params.debug,
                mode: if params.debug != 0 {
                    MODE_DEBUG
                } else if params.harden {
                    MODE_HARDENED
                } else {
                    MODE_PLAIN
                },
                poisoned: params.debug & debug::POISON != 0 && ctor.is_none(),
                random_freelist: AtomicBool::new(false),
                random_seq: AtomicPtr::new(ptr::null_mut()),
                isolated: AtomicUsize::new(0),
                _p: PhantomData,
            });
            (*this).set_cpu_partial(params.cpu_partial);
            if params.random_freelist {
                (*this).set_random_freelist(true);
            }
            if (*this).init_state(nr_cpus).is_err() {
                (*this).free_state();
                P::free_meta(this.cast());
                return ptr::null_mut();
            }
        }
        this
    }

    fn init_state(&mut self, nr_cpus: u32) -> Result<(), ()> {
        for n in 0..self.nr_nodes {
            let node = P::alloc_meta(size_of::<Node<P>>(), n as i32).cast::<Node<P>>();
            if node.is_null() {
                return Err(());
            }
            // SAFETY: `node` is fresh memory; the lock is initialized in
            // place and never moved.
            unsafe {
                ptr::addr_of_mut!((*node).lists).write(UnsafeCell::new(NodeLists {
                    partial: SlabList::new(),
                    empty: SlabList::new(),
                    full: SlabList::new(),
                }));
                ptr::addr_of_mut!((*node).nr_slabs).write(AtomicUsize::new(0));
                ptr::addr_of_mut!((*node).nr_partial).write(AtomicUsize::new(0));
                if !P::node_lock_init(ptr::addr_of_mut!((*node).list_lock)) {
                    P::free_meta(node.cast());
                    return Err(());
                }
            }
            self.nodes[n] = node;
        }
        self.pcpu = P::alloc_percpu(size_of::<CpuSlab>(), 16);
        if self.pcpu == 0 {
            return Err(());
        }
        for cpu in 0..nr_cpus {
            if P::cpu_possible(cpu) {
                let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
                // SAFETY: the area is zeroed and not yet used.
                unsafe { (*c).tid = cpu as usize };
            }
        }
        Ok(())
    }

    fn free_state(&mut self) {
        let seq = self.random_seq.swap(ptr::null_mut(), Ordering::Relaxed);
        if !seq.is_null() {
            // SAFETY: allocated by `set_random_freelist`, unused now.
            unsafe { P::free_meta(seq.cast()) };
        }
        if self.pcpu != 0 {
            // SAFETY: allocated in `init_state`, unused now.
            unsafe { P::free_percpu(self.pcpu) };
            self.pcpu = 0;
        }
        for n in 0..self.nr_nodes {
            let node = self.nodes[n];
            if !node.is_null() {
                // SAFETY: initialized in `init_state`, no longer used.
                unsafe {
                    P::node_lock_drop(ptr::addr_of_mut!((*node).list_lock));
                    P::free_meta(node.cast());
                }
                self.nodes[n] = ptr::null_mut();
            }
        }
    }

    fn owner(&self) -> usize {
        ptr::from_ref(self) as usize
    }

    /// The cache's name.
    pub fn name(&self) -> &[u8] {
        &self.name[..self.name_len]
    }

    /// The name for log lines.
    pub fn name_str(&self) -> &str {
        core::str::from_utf8(self.name()).unwrap_or("<non-utf8 name>")
    }

    /// `ctor`, if any.
    pub fn ctor(&self) -> Option<Ctor> {
        self.ctor
    }

    fn node(&self, n: i32) -> &Node<P> {
        let idx = if (n as usize) < self.nr_nodes {
            n as usize
        } else {
            0
        };
        // SAFETY: every node below `nr_nodes` was allocated at create and
        // lives as long as the cache.
        unsafe { &*self.nodes[idx] }
    }

    // ---- tunables ---------------------------------------------------------

    /// Sets `cpu_partial` (objects); the slab bound is derived like upstream.
    pub fn set_cpu_partial(&self, objects: u32) {
        let per_slab = u32::try_from(self.layout.objects)
            .unwrap_or(u32::MAX)
            .max(1);
        let slabs = objects.saturating_mul(2).div_ceil(per_slab);
        self.cpu_partial.store(objects, Ordering::Relaxed);
        self.cpu_partial_slabs.store(slabs, Ordering::Relaxed);
    }
    /// `cpu_partial` in objects.
    pub fn cpu_partial(&self) -> u32 {
        self.cpu_partial.load(Ordering::Relaxed)
    }
    /// Sets `min_partial`.
    pub fn set_min_partial(&self, v: u32) {
        self.min_partial.store(v, Ordering::Relaxed);
    }
    /// `min_partial`.
    pub fn min_partial(&self) -> u32 {
        self.min_partial.load(Ordering::Relaxed)
    }
    /// Whether a node with `others` partial slabs (not counting an empty
    /// slab being decided on) may free that empty slab: it keeps at least
    /// `min_partial` partial slabs. (Upstream counts the empty slab itself
    /// when it is listed, keeping one fewer.)
    fn enough_partial(&self, others: usize) -> bool {
        others >= self.min_partial.load(Ordering::Relaxed) as usize
    }
    /// Sets `max_empty`; caches above the new bound are trimmed.
    pub fn set_max_empty(&self, v: u32) {
        self.max_empty.store(v, Ordering::Relaxed);
        for n in 0..self.nr_nodes {
            self.trim_empty(n as i32, v as usize);
        }
    }
    /// `max_empty`.
    pub fn max_empty(&self) -> u32 {
        self.max_empty.load(Ordering::Relaxed)
    }
    /// Selects the CPU-partial fill stop: `>=` when true, upstream's `>` when false.
    pub fn set_fill_ge(&self, v: bool) {
        self.fill_ge.store(v, Ordering::Relaxed);
    }
    /// Problems detected so far.
    pub fn errors(&self) -> usize {
        self.errors.load(Ordering::Relaxed)
    }
    /// Debug features (`debug::*` bits).
    pub fn debug_flags(&self) -> u32 {
        self.debug
    }
    /// Slabs isolated after corruption.
    pub fn isolated_slabs(&self) -> usize {
        self.isolated.load(Ordering::Relaxed)
    }
    /// Whether free pointers are stored obfuscated.
    pub fn hardened(&self) -> bool {
        self.layout.hardened()
    }
    /// Whether new slabs get a random freelist order.
    pub fn random_freelist(&self) -> bool {
        self.random_freelist.load(Ordering::Relaxed)
    }
    /// Turns random freelist order of new slabs on or off. The shuffled
    /// index sequence is made the first time (sleeping allocation); when it
    /// cannot be allocated the order stays sequential and false is returned.
    pub fn set_random_freelist(&self, on: bool) -> bool {
        if on && self.random_seq.load(Ordering::Acquire).is_null() {
            let n = self.layout.objects;
            let seq = P::alloc_meta(n * size_of::<u32>(), NO_NODE).cast::<u32>();
            if seq.is_null() {
                return false;
            }
            // SAFETY: fresh memory for `n` u32s, ours until published.
            let s = unsafe { core::slice::from_raw_parts_mut(seq, n) };
            for (i, v) in s.iter_mut().enumerate() {
                *v = i as u32;
            }
            // Fisher-Yates.
            for i in (1..n).rev() {
                let j = P::random().checked_rem(i + 1).unwrap_or(0);
                s.swap(i, j);
            }
            if self
                .random_seq
                .compare_exchange(ptr::null_mut(), seq, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // SAFETY: never published.
                unsafe { P::free_meta(seq.cast()) };
            }
        }
        self.random_freelist.store(on, Ordering::Relaxed);
        true
    }

    // ---- counters ---------------------------------------------------------

    /// Counts an event: one per-CPU increment, or nothing when the counters
    /// are compiled out (`--cfg rslub_no_stats`, `make STATS=0`).
    #[inline(always)]
    fn stat(&self, s: Stat) {
        #[cfg(not(rslub_no_stats))]
        P::this_cpu_inc(
            self.pcpu + core::mem::offset_of!(CpuSlab, stats) + s as usize * size_of::<usize>(),
        );
        #[cfg(rslub_no_stats)]
        let _ = s;
    }

    /// Counts an event with the CPU lock held.
    #[inline(always)]
    fn stat_locked(c: *mut CpuSlab, s: Stat) {
        // SAFETY: the CPU lock is held, so nothing else on this CPU runs.
        #[cfg(not(rslub_no_stats))]
        unsafe {
            (*c).stats[s as usize] += 1
        };
        #[cfg(rslub_no_stats)]
        let _ = (c, s);
    }

    /// Sum of counter `s` over all CPUs, and each CPU's share in `per_cpu`
    /// (as many as fit).
    pub fn stat_total(&self, s: Stat, per_cpu: &mut [usize]) -> usize {
        let mut total = 0;
        for cpu in 0..P::nr_cpu_ids() {
            if !P::cpu_possible(cpu) {
                continue;
            }
            let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
            // SAFETY: a racy read of a counter word; torn values cannot occur
            // for aligned words on the platforms we build for.
            let v = unsafe { ptr::read_volatile(ptr::addr_of!((*c).stats[s as usize])) };
            if let Some(slot) = per_cpu.get_mut(cpu as usize) {
                *slot = v;
            }
            total += v;
        }
        total
    }

    /// Clears counter `s` on every CPU.
    pub fn stat_clear(&self, s: Stat) {
        for cpu in 0..P::nr_cpu_ids() {
            if P::cpu_possible(cpu) {
                let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
                // SAFETY: a racy store to a counter word; a concurrent
                // increment may be lost, as with upstream's clear.
                unsafe { ptr::write_volatile(ptr::addr_of_mut!((*c).stats[s as usize]), 0) };
            }
        }
    }

    // ---- CPU lock ---------------------------------------------------------

    fn cpu_lock(&self) -> CpuGuard {
        let (cpu, token) = P::cpu_lock();
        CpuGuard {
            c: P::per_cpu_ptr(self.pcpu, cpu).cast(),
            token,
        }
    }

    fn cpu_unlock(g: CpuGuard) {
        P::cpu_unlock(g.token);
    }

    // ---- allocation -------------------------------------------------------

    fn node_match(slab: *mut SlabHeader, node: i32) -> bool {
        // SAFETY: a hint read of a header field; slab memory stays mapped.
        node < 0
            || (!slab.is_null()
                && unsafe { ptr::read_volatile(ptr::addr_of!((*slab).node)) } == node)
    }

    /// Allocates one object on `node` (negative: any, local first); null when
    /// memory ran out.
    pub fn alloc(&self, gfp: u32, node: i32) -> *mut u8 {
        let node = if node == NO_NODE {
            node
        } else {
            match self.alloc_node_check(gfp, node) {
                Some(n) => n,
                None => return ptr::null_mut(),
            }
        };
        // One branch picks the path: hardened (the default), plain, or the
        // locked path of debug caches.
        let obj = if self.mode == MODE_HARDENED {
            self.alloc_inner::<true>(gfp, node)
        } else if self.mode == MODE_PLAIN {
            self.alloc_inner::<false>(gfp, node)
        } else {
            self.debug_alloc(gfp, node)
        };
        if !obj.is_null() && gfp & self.gfp_zero != 0 {
            // SAFETY: `obj` is a freshly allocated object of `object_size` bytes.
            unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
        }
        obj
    }

    /// The node an allocation for `node` (not `NO_NODE`) goes to: `node`
    /// itself, or any node when it has no memory; None, with one line on
    /// the log, for an id that is no node, or for a node without memory
    /// under `__GFP_THISNODE` (the page allocator would warn with a stack
    /// dump, or hand out another node's memory).
    #[cold]
    fn alloc_node_check(&self, gfp: u32, node: i32) -> Option<i32> {
        if node < 0 || node as usize >= self.nr_nodes {
            P::report(format_args!(
                "cache {}: allocation on node {}: no such node (0..{} or NUMA_NO_NODE); returning NULL",
                self.name_str(),
                node,
                self.nr_nodes.saturating_sub(1)
            ));
            return None;
        }
        if P::node_has_memory(node) {
            return Some(node);
        }
        if gfp & self.gfp_thisnode != 0 {
            P::report(format_args!(
                "cache {}: allocation on node {} with __GFP_THISNODE: the node has no memory; returning NULL",
                self.name_str(),
                node
            ));
            return None;
        }
        Some(NO_NODE)
    }

    /// Reads `(freelist, tid, slab)` of the CPU the caller is on, through
    /// its raw per-CPU pointer: tid first, then the rest (upstream's order).
    /// If the task migrates meanwhile these are another CPU's values, and
    /// since tids are unique per CPU the following per-CPU cmpxchg16b on the
    /// new CPU fails; if it is preempted and the CPU's freelist changes, the
    /// tid has changed too.
    #[inline(always)]
    fn cpu_snapshot(&self) -> (usize, usize, *mut SlabHeader) {
        let c = P::this_cpu_ptr(self.pcpu).cast::<CpuSlab>();
        // SAFETY: `c` is a valid CpuSlab of some CPU; volatile reads are
        // neither torn (aligned words) nor reordered against each other.
        unsafe {
            let tid = ptr::read_volatile(ptr::addr_of!((*c).tid));
            let freelist = ptr::read_volatile(ptr::addr_of!((*c).freelist));
            let slab = ptr::read_volatile(ptr::addr_of!((*c).slab));
            (freelist as usize, tid, slab)
        }
    }

    #[inline(always)]
    fn alloc_inner<const HARDENED: bool>(&self, gfp: u32, node: i32) -> *mut u8 {
        loop {
            let (obj, tid, slab) = self.cpu_snapshot();
            if obj == 0 || !Self::node_match(slab, node) {
                return self.alloc_slow(gfp, node);
            }
            // SAFETY: `obj` was on this CPU's freelist; if it has been taken
            // since, the value read is garbage but the cmpxchg below fails.
            let next = unsafe { get_free_pointer_as::<HARDENED>(obj as *const u8, &self.layout) };
            // Hardened: a next pointer that is no object of the slab is
            // either a race (the object was taken meanwhile) or corruption;
            // the slow path tells them apart under the CPU lock.
            if HARDENED && !free_pointer_ok(next, slab, &self.layout) {
                return self.alloc_slow(gfp, node);
            }
            if P::this_cpu_cmpxchg_pair(
                self.pcpu,
                [obj, tid],
                [next as usize, tid.wrapping_add(self.tid_step)],
            ) {
                self.stat(Stat::AllocFastpath);
                return obj as *mut u8;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
    }

    fn alloc_slow(&self, gfp: u32, node: i32) -> *mut u8 {
        let mut g = self.cpu_lock();
        Self::stat_locked(g.c, Stat::AllocSlowpath);
        let obj = self.slab_alloc_locked(&mut g, gfp, node);
        Self::cpu_unlock(g);
        obj
    }

    /// Takes the first object of `freelist` (a chain of the CPU slab) for
    /// the CPU and keeps the rest as its lockless freelist. If the head or
    /// its free pointer is not an object of the slab, the freelist is
    /// corrupt: it is reported, the CPU slab is isolated, and None returned.
    fn load_freelist(&self, c: *mut CpuSlab, freelist: *mut u8) -> Option<*mut u8> {
        // SAFETY: CPU lock held.
        let slab = unsafe { (*c).slab };
        let next = if free_pointer_ok(freelist, slab, &self.layout) {
            // SAFETY: `freelist` is an object of the CPU slab.
            let next = unsafe { get_free_pointer(freelist, &self.layout) };
            if free_pointer_ok(next, slab, &self.layout) {
                Some(next)
            } else {
                self.report_free_pointer(slab, freelist, next);
                None
            }
        } else {
            self.report_free_pointer(slab, ptr::null(), freelist);
            None
        };
        // SAFETY: CPU lock held; `c`'s fields are ours.
        unsafe {
            (*c).tid = (*c).tid.wrapping_add(self.tid_step);
            match next {
                Some(next) => (*c).freelist = next,
                None => {
                    (*c).freelist = ptr::null_mut();
                    (*c).slab = ptr::null_mut();
                    self.isolate(slab);
                }
            }
        }
        next.map(|_| freelist)
    }

    /// Reports a free pointer `bad` that is not an object start of `slab`,
    /// read from object `from` (null: the freelist head itself).
    fn report_free_pointer(&self, slab: *mut SlabHeader, from: *const u8, bad: *const u8) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        P::report(format_args!(
            "cache {}: freelist corrupted in slab {:p}: free pointer {:p}{} is not an object of the slab",
            self.name_str(),
            slab,
            bad,
            if from.is_null() { " (the freelist head)" } else { "" },
        ));
        if !from.is_null() {
            let at = self.layout.free_offset as isize;
            P::report(format_args!(
                "  read from free object {:p} at offset {} (stored word, hardened {})",
                from,
                at,
                u8::from(self.layout.hardened())
            ));
            // SAFETY: `from` is an object start of `slab`.
            unsafe { self.dump(from, at) };
        }
        P::report(format_args!(
            "  slab isolated: the rest of that freelist is dropped, its objects never handed out again"
        ));
    }

    /// Prints up to 32 bytes of `obj`'s slot around object offset `at`.
    ///
    /// # Safety
    /// `obj` is an object start of a slab of this cache.
    unsafe fn dump(&self, obj: *const u8, at: isize) {
        // SAFETY: per the caller.
        let (start, n, buf) = unsafe { debug::dump_window(obj, &self.layout, at) };
        let mut off = start;
        for line in buf[..n].chunks(16) {
            P::report(format_args!(
                "  {:p} (object{:+}): {}",
                obj.wrapping_offset(off),
                off,
                debug::Hex(line)
            ));
            off += 16;
        }
    }

    /// Takes a slab out of service after corruption: it is frozen (so frees
    /// only push onto its freelist and never list it), marked isolated (so
    /// later frees of its objects are ignored) and forgotten by its node.
    /// Its memory stays allocated; nothing is handed out from it again.
    /// The caller has taken it off every list.
    fn isolate(&self, slab: *mut SlabHeader) {
        loop {
            // SAFETY: the slab's memory stays mapped; the pair is in it.
            let [fl, counters] = unsafe { (*slab).read_pair() };
            // SAFETY: as above.
            if unsafe {
                P::cmpxchg_pair((*slab).pair_ptr(), [fl, counters], [fl, counters | FROZEN])
            } {
                break;
            }
        }
        // SAFETY: off every list, per the caller.
        unsafe { SlabHeader::mark_isolated(slab) };
        // SAFETY: a header field written at slab creation.
        let nid = unsafe { (*slab).node };
        self.node(nid).nr_slabs.fetch_sub(1, Ordering::Relaxed);
        self.isolated.fetch_add(1, Ordering::Relaxed);
    }

    /// The slow path proper: CPU lock held on entry and exit (it may be
    /// dropped to allocate pages, after which `g` may name another CPU).
    fn slab_alloc_locked(&self, g: &mut CpuGuard, gfp: u32, node: i32) -> *mut u8 {
        loop {
            let c = g.c;
            // SAFETY: CPU lock held: `c`'s fields are ours.
            let slab = unsafe { (*c).slab };
            if !slab.is_null() {
                if !Self::node_match(slab, node) {
                    Self::stat_locked(c, Stat::AllocNodeMismatch);
                    self.deactivate_cpu_slab(c);
                } else {
                    // SAFETY: CPU lock held.
                    let mut freelist = unsafe { (*c).freelist };
                    if freelist.is_null() {
                        freelist = self.get_freelist(slab);
                        if freelist.is_null() {
                            // The slab is full and now unfrozen, on no list.
                            // SAFETY: CPU lock held.
                            unsafe {
                                (*c).slab = ptr::null_mut();
                                (*c).tid = (*c).tid.wrapping_add(self.tid_step);
                            }
                            Self::stat_locked(c, Stat::DeactivateBypass);
                            continue;
                        }
                        Self::stat_locked(c, Stat::AllocRefill);
                    }
                    match self.load_freelist(c, freelist) {
                        Some(obj) => return obj,
                        None => continue,
                    }
                }
            }

            // No usable CPU slab. CPU partial list first.
            // SAFETY: CPU lock held.
            unsafe {
                let p = (*c).partial;
                if !p.is_null() {
                    (*c).partial = (*p).next;
                    (*c).partial_slabs -= 1;
                    (*p).next = ptr::null_mut();
                    (*c).slab = p;
                    (*c).tid = (*c).tid.wrapping_add(self.tid_step);
                    Self::stat_locked(c, Stat::CpuPartialAlloc);
                    continue;
                }
            }

            // Node partial lists, then empty-slab caches.
            let freelist = self.get_partial(c, node);
            if !freelist.is_null() {
                match self.load_freelist(c, freelist) {
                    Some(obj) => return obj,
                    None => continue,
                }
            }

            // A new slab from the page allocator.
            let blocking = P::gfp_allows_blocking(gfp);
            if blocking {
                Self::cpu_unlock(CpuGuard {
                    c: g.c,
                    token: g.token,
                });
            }
            let slab = self.new_slab(gfp, node);
            if blocking {
                *g = self.cpu_lock();
            }
            if slab.is_null() {
                return ptr::null_mut();
            }
            let c = g.c;
            Self::stat_locked(c, Stat::AllocSlab);
            // SAFETY: CPU lock held; the new slab is private until installed.
            unsafe {
                if !(*c).slab.is_null() {
                    // Refilled meanwhile (an interrupt, or another task
                    // after a migration): make room.
                    Self::stat_locked(c, Stat::CpuslabFlush);
                    self.deactivate_cpu_slab(c);
                }
                let [freelist, _] = (*slab).read_pair();
                (*slab).set_pair_private([0, (*slab).objects as usize | FROZEN]);
                (*c).slab = slab;
                match self.load_freelist(c, freelist as *mut u8) {
                    Some(obj) => return obj,
                    None => continue,
                }
            }
        }
    }

    /// Takes the whole slab freelist of the (frozen) CPU slab; when it is
    /// empty the slab is unfrozen instead (it is full).
    fn get_freelist(&self, slab: *mut SlabHeader) -> *mut u8 {
        loop {
            // SAFETY: `slab` is this CPU's live slab.
            let [freelist, counters] = unsafe { (*slab).read_pair() };
            // SAFETY: as above.
            let objects = unsafe { (*slab).objects } as usize;
            let new = if freelist == 0 {
                inuse(counters) as usize
            } else {
                objects | FROZEN
            };
            // SAFETY: the pair is 16-byte aligned inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [freelist, counters], [0, new]) } {
                return freelist as *mut u8;
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
    }

    /// Fills the CPU slab (and CPU partial list) from node partial lists,
    /// then from empty-slab caches. Returns the CPU slab's freelist or null.
    fn get_partial(&self, c: *mut CpuSlab, node: i32) -> *mut u8 {
        let local = if node >= 0 { node } else { P::numa_node_id() };
        let mut order = [0i32; MAX_NODES];
        order[0] = local;
        let mut n = 1;
        if node < 0 {
            n += P::fallback_nodes(local, &mut order[1..]);
        }
        for &nid in &order[..n] {
            let freelist = self.get_partial_node(c, nid);
            if !freelist.is_null() {
                return freelist;
            }
        }
        for &nid in &order[..n] {
            let slab = self.take_empty(nid);
            if !slab.is_null() {
                Self::stat_locked(c, Stat::EmptyCacheHit);
                // SAFETY: the slab came off the empty cache and is private;
                // CPU lock held for `c`.
                unsafe {
                    let [freelist, _] = (*slab).read_pair();
                    (*slab).set_pair_private([0, (*slab).objects as usize | FROZEN]);
                    (*c).slab = slab;
                    return freelist as *mut u8;
                }
            }
        }
        ptr::null_mut()
    }

    fn get_partial_node(&self, c: *mut CpuSlab, nid: i32) -> *mut u8 {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        if node.nr_partial.load(Ordering::Relaxed) == 0 {
            return ptr::null_mut();
        }
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        let ge = self.fill_ge.load(Ordering::Relaxed);
        let _g = P::node_lock(&node.list_lock);
        // SAFETY: list_lock held.
        let lists = unsafe { &mut *node.lists.get() };
        let mut freelist: *mut u8 = ptr::null_mut();
        let mut moved = 0u32;
        loop {
            let slab = lists.partial.pop_front();
            if slab.is_null() {
                break;
            }
            node.nr_partial
                .store(lists.partial.len(), Ordering::Relaxed);
            if freelist.is_null() {
                freelist = self.freeze(slab, true);
                // SAFETY: CPU lock held for `c`.
                unsafe {
                    (*c).slab = slab;
                }
                Self::stat_locked(c, Stat::AllocFromPartial);
            } else {
                self.freeze(slab, false);
                // SAFETY: CPU lock held; `slab` is frozen and ours now.
                unsafe {
                    (*slab).next = (*c).partial;
                    (*c).partial = slab;
                    (*c).partial_slabs += 1;
                }
                moved += 1;
                Self::stat_locked(c, Stat::CpuPartialNode);
            }
            let half = limit / 2;
            if limit == 0 || if ge { moved >= half } else { moved > half } {
                break;
            }
        }
        freelist
    }

    /// Freezes a node-partial slab; with `take`, also takes its whole
    /// freelist (for the CPU slab) and returns it.
    fn freeze(&self, slab: *mut SlabHeader, take: bool) -> *mut u8 {
        loop {
            // SAFETY: `slab` is live and was just unlinked under list_lock.
            let [freelist, counters] = unsafe { (*slab).read_pair() };
            // SAFETY: as above.
            let objects = unsafe { (*slab).objects } as usize;
            let new = if take {
                [0, objects | FROZEN]
            } else {
                [freelist, counters | FROZEN]
            };
            // SAFETY: the pair is inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [freelist, counters], new) } {
                return if take {
                    freelist as *mut u8
                } else {
                    ptr::null_mut()
                };
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
    }

    fn take_empty(&self, nid: i32) -> *mut SlabHeader {
        if (nid as usize) >= self.nr_nodes {
            return ptr::null_mut();
        }
        let node = self.node(nid);
        let _g = P::node_lock(&node.list_lock);
        // SAFETY: list_lock held.
        unsafe { (*node.lists.get()).empty.pop_front() }
    }

    fn new_slab(&self, gfp: u32, node: i32) -> *mut SlabHeader {
        let base = P::alloc_pages(node, gfp & !self.gfp_zero, self.layout.order);
        if base.is_null() {
            return ptr::null_mut();
        }
        let nid = P::page_node(base);
        let nid = if (nid as usize) < self.nr_nodes {
            nid
        } else {
            0
        };
        let n = self.layout.objects;
        let seq = self.random_seq.load(Ordering::Acquire);
        let (seq, start) = if self.random_freelist.load(Ordering::Relaxed) && !seq.is_null() {
            // SAFETY: `random_seq` holds `objects` indices for the cache's life.
            let s = unsafe { core::slice::from_raw_parts(seq, n) };
            (s, P::random().checked_rem(n).unwrap_or(0))
        } else {
            (&[][..], 0)
        };
        // SAFETY: `base` is `slab_bytes` of fresh memory aligned to its size.
        let slab =
            unsafe { SlabHeader::init_shuffled(base, &self.layout, self.owner(), nid, seq, start) };
        if self.debug != 0 {
            for idx in 0..n {
                // SAFETY: each object is inside the new, private slab.
                unsafe {
                    debug::init_free_object(
                        base.add(self.layout.object_offset(idx)),
                        &self.layout,
                        self.poisoned,
                    )
                };
            }
        }
        if let Some(ctor) = self.ctor {
            for idx in 0..self.layout.objects {
                // SAFETY: each object is inside the slab; with a ctor the
                // free pointer is outside the object.
                unsafe { ctor(base.add(self.layout.object_offset(idx)).cast()) };
            }
        }
        self.node(nid).nr_slabs.fetch_add(1, Ordering::Relaxed);
        slab
    }

    // ---- returning slabs to nodes -----------------------------------------

    /// Puts an empty, unlisted slab into the node's empty cache, or queues it
    /// for freeing. list_lock held.
    fn discard_locked(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        d: &mut Discards,
    ) {
        if lists.empty.len() < self.max_empty.load(Ordering::Relaxed) as usize {
            // SAFETY: `slab` is empty, unfrozen and on no list.
            unsafe { lists.empty.push_front(slab) };
            self.stat(Stat::EmptyCacheAdd);
        } else {
            node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: as above; it is unreachable once killed.
            unsafe {
                (*slab).kill();
                (*slab).next = d.0;
            }
            d.0 = slab;
        }
    }

    fn free_discards(&self, d: Discards) {
        let mut cur = d.0;
        while !cur.is_null() {
            // SAFETY: discarded slabs are killed and owned by `d`.
            let next = unsafe { (*cur).next };
            // SAFETY: the block was allocated with this order.
            unsafe { P::free_pages(cur.cast(), self.layout.order) };
            self.stat(Stat::FreeSlab);
            cur = next;
        }
    }

    /// Adds a partial slab to its node list. list_lock held.
    fn add_partial(node: &Node<P>, lists: &mut NodeLists, slab: *mut SlabHeader, tail: bool) {
        // SAFETY: `slab` is unfrozen and on no list.
        unsafe {
            if tail {
                lists.partial.push_back(slab);
            } else {
                lists.partial.push_front(slab);
            }
        }
        node.nr_partial
            .store(lists.partial.len(), Ordering::Relaxed);
    }

    fn remove_partial(node: &Node<P>, lists: &mut NodeLists, slab: *mut SlabHeader) {
        // SAFETY: the caller saw `slab` on the partial list under list_lock.
        unsafe { lists.partial.remove(slab) };
        node.nr_partial
            .store(lists.partial.len(), Ordering::Relaxed);
    }

    /// Detaches this CPU's slab and returns it to its node. CPU lock held.
    fn deactivate_cpu_slab(&self, c: *mut CpuSlab) {
        // SAFETY: CPU lock held.
        let (slab, freelist) = unsafe {
            let s = ((*c).slab, (*c).freelist);
            (*c).slab = ptr::null_mut();
            (*c).freelist = ptr::null_mut();
            (*c).tid = (*c).tid.wrapping_add(self.tid_step);
            s
        };
        if !slab.is_null() {
            self.deactivate_slab(slab, freelist);
        }
    }

    /// Unfreezes a former CPU slab, splicing the CPU's leftover freelist back
    /// onto the slab's, and puts it where its state says.
    fn deactivate_slab(&self, slab: *mut SlabHeader, cpu_freelist: *mut u8) {
        let mut count = 0usize;
        let mut tail: *mut u8 = ptr::null_mut();
        let mut cur = cpu_freelist;
        while !cur.is_null() {
            if !free_pointer_ok(cur, slab, &self.layout) || count >= self.layout.objects {
                // Corrupt (or cyclic) CPU freelist: do not follow it.
                self.report_free_pointer(slab, tail, cur);
                self.isolate(slab);
                return;
            }
            count += 1;
            tail = cur;
            // SAFETY: the CPU freelist is a chain of free objects we own.
            cur = unsafe { get_free_pointer(cur, &self.layout) };
        }
        // SAFETY: the slab is live (it was our CPU slab).
        let node = self.node(unsafe { (*slab).node });
        let mut d = Discards(ptr::null_mut());
        {
            let _g = P::node_lock(&node.list_lock);
            let (new_free, new_inuse, remote) = loop {
                // SAFETY: the slab is live; the pair is in its header.
                let [sfl, counters] = unsafe { (*slab).read_pair() };
                let new_free = if tail.is_null() {
                    sfl
                } else {
                    // SAFETY: `tail` is the last object of our chain.
                    unsafe { set_free_pointer(tail, &self.layout, sfl as *mut u8) };
                    cpu_freelist as usize
                };
                let new_inuse = inuse(counters) as usize - count;
                // SAFETY: as above.
                if unsafe {
                    P::cmpxchg_pair((*slab).pair_ptr(), [sfl, counters], [new_free, new_inuse])
                } {
                    break (new_free, new_inuse, sfl != 0);
                }
                self.stat(Stat::CmpxchgDoubleFail);
            };
            if remote {
                self.stat(Stat::DeactivateRemoteFrees);
            }
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            if new_inuse == 0 && self.enough_partial(lists.partial.len()) {
                self.stat(Stat::DeactivateEmpty);
                self.discard_locked(node, lists, slab, &mut d);
            } else if new_free != 0 {
                // Slabs with objects the CPU did not use go to the tail: they
                // are likely cache-cold.
                let to_tail = count != 0;
                Self::add_partial(node, lists, slab, to_tail);
                self.stat(if to_tail {
                    Stat::DeactivateToTail
                } else {
                    Stat::DeactivateToHead
                });
            } else {
                self.stat(Stat::DeactivateFull);
            }
        }
        self.free_discards(d);
    }

    /// Returns a detached chain of CPU-partial slabs to their nodes: one
    /// list_lock hold per run of slabs of the same node; the cmpxchg loop
    /// only unfreezes; the discard-or-keep decision comes after it.
    fn unfreeze_partials(&self, mut list: *mut SlabHeader) {
        let mut d = Discards(ptr::null_mut());
        while !list.is_null() {
            // SAFETY: the chain is detached and ours.
            let nid = unsafe { (*list).node };
            let node = self.node(nid);
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            // SAFETY: chain members are live, frozen slabs we own.
            while !list.is_null() && unsafe { (*list).node } == nid {
                let slab = list;
                // SAFETY: as above.
                unsafe {
                    list = (*slab).next;
                    (*slab).next = ptr::null_mut();
                }
                let new = loop {
                    // SAFETY: the slab is live.
                    let [fl, counters] = unsafe { (*slab).read_pair() };
                    let new = counters & !FROZEN;
                    // SAFETY: as above.
                    if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), [fl, counters], [fl, new]) } {
                        break new;
                    }
                    self.stat(Stat::CmpxchgDoubleFail);
                };
                if inuse(new) == 0 && self.enough_partial(lists.partial.len()) {
                    self.discard_locked(node, lists, slab, &mut d);
                } else {
                    Self::add_partial(node, lists, slab, true);
                    self.stat(Stat::FreeAddPartial);
                }
            }
        }
        self.free_discards(d);
    }

    /// Puts a slab a free has just frozen on this CPU's partial list,
    /// draining the list to the nodes first when it is full.
    fn put_cpu_partial(&self, slab: *mut SlabHeader) {
        let g = self.cpu_lock();
        let c = g.c;
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed);
        // SAFETY: CPU lock held.
        let drain = unsafe {
            let mut drain = ptr::null_mut();
            if (*c).partial_slabs >= limit {
                drain = (*c).partial;
                (*c).partial = ptr::null_mut();
                (*c).partial_slabs = 0;
                Self::stat_locked(c, Stat::CpuPartialDrain);
            }
            (*slab).next = (*c).partial;
            (*c).partial = slab;
            (*c).partial_slabs += 1;
            drain
        };
        Self::stat_locked(c, Stat::CpuPartialFree);
        Self::cpu_unlock(g);
        if !drain.is_null() {
            self.unfreeze_partials(drain);
        }
    }

    // ---- free -------------------------------------------------------------

    fn report(&self, obj: *const u8, e: FreeError) {
        if e == FreeError::Isolated {
            // Its slab was reported when it was isolated.
            return;
        }
        self.errors.fetch_add(1, Ordering::Relaxed);
        P::report(format_args!(
            "cache {}: free of {:p}: {}; ignored",
            self.name_str(),
            obj,
            e.describe()
        ));
    }

    /// Validates `obj` as an object start of this cache; returns its slab.
    fn object_slab(&self, obj: *const u8) -> Result<*mut SlabHeader, FreeError> {
        if !P::addr_valid(obj) {
            return Err(FreeError::NotSlabMemory);
        }
        let slab = SlabHeader::of(obj, &self.layout);
        // SAFETY: `slab` is the aligned-down start of valid memory; the
        // header's contents are trusted only once the magic matches.
        unsafe { (*slab).check_object(obj, &self.layout, self.owner())? };
        Ok(slab)
    }

    /// Frees `obj`. A pointer that is not an allocated object of this cache
    /// is reported and ignored.
    ///
    /// # Safety
    /// If `obj` is an allocated object of this cache, the caller owns it and
    /// does not use it afterwards.
    pub unsafe fn free(&self, obj: *mut u8) {
        let slab = match self.object_slab(obj) {
            Ok(s) => s,
            Err(e) => return self.report(obj, e),
        };
        if self.mode == MODE_HARDENED {
            self.free_fast::<true>(slab, obj);
        } else if self.mode == MODE_PLAIN {
            self.free_fast::<false>(slab, obj);
        } else {
            self.debug_free(slab, obj);
        }
    }

    /// Frees `obj` of the validated `slab`: the lockless push when it is
    /// this CPU's slab, else `slab_free`.
    #[inline(always)]
    fn free_fast<const HARDENED: bool>(&self, slab: *mut SlabHeader, obj: *mut u8) {
        loop {
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if cpu_slab != slab {
                break;
            }
            if freelist == obj as usize {
                return self.report(obj, FreeError::DoubleFree);
            }
            // SAFETY: the object is ours to free; its free pointer slot is
            // ours to write until the cmpxchg publishes it.
            unsafe { set_free_pointer_as::<HARDENED>(obj, &self.layout, freelist as *mut u8) };
            if P::this_cpu_cmpxchg_pair(
                self.pcpu,
                [freelist, tid],
                [obj as usize, tid.wrapping_add(self.tid_step)],
            ) {
                self.stat(Stat::FreeFastpath);
                return;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
        self.slab_free(slab, obj, obj, 1);
    }

    /// Frees a chain `head..=tail` of `cnt` objects of `slab` (not the CPU
    /// slab of this CPU, or it was when checked) onto the slab's freelist.
    fn slab_free(&self, slab: *mut SlabHeader, head: *mut u8, tail: *mut u8, cnt: usize) {
        self.stat(Stat::FreeSlowpath);
        // SAFETY: `slab` is live (validated by the caller).
        let node = self.node(unsafe { (*slab).node });
        let mut guard = None;
        let (prior, new_counters, was_frozen, froze) = loop {
            // SAFETY: as above.
            let [prior, counters] = unsafe { (*slab).read_pair() };
            if (cnt == 1 && prior == head as usize) || (inuse(counters) as usize) < cnt {
                drop(guard);
                return self.report(head, FreeError::DoubleFree);
            }
            // SAFETY: `tail` is ours until published.
            unsafe { set_free_pointer(tail, &self.layout, prior as *mut u8) };
            let was_frozen = counters & FROZEN != 0;
            let new_inuse = inuse(counters) as usize - cnt;
            let mut new = new_inuse | (counters & FROZEN);
            let mut froze = false;
            if !was_frozen {
                if prior == 0
                    && new_inuse != 0
                    && self.cpu_partial_slabs.load(Ordering::Relaxed) != 0
                {
                    // A full slab gains its first free object: freeze it
                    // onto this CPU's partial list, no list_lock needed.
                    new |= FROZEN;
                    froze = true;
                } else if (prior == 0 || new_inuse == 0) && guard.is_none() {
                    guard = Some(P::node_lock(&node.list_lock));
                }
            }
            // SAFETY: as above.
            if unsafe {
                P::cmpxchg_pair((*slab).pair_ptr(), [prior, counters], [head as usize, new])
            } {
                break (prior, new, was_frozen, froze);
            }
            self.stat(Stat::CmpxchgDoubleFail);
        };
        if was_frozen {
            drop(guard);
            self.stat(Stat::FreeFrozen);
            return;
        }
        if froze {
            drop(guard);
            self.put_cpu_partial(slab);
            return;
        }
        let Some(g) = guard else {
            return;
        };
        let mut d = Discards(ptr::null_mut());
        {
            // SAFETY: list_lock held (`g`).
            let lists = unsafe { &mut *node.lists.get() };
            // SAFETY: list membership is protected by list_lock.
            let on_list = unsafe { (*slab).on_list };
            // Other partial slabs of the node: this one does not count.
            let others = lists.partial.len() - usize::from(on_list);
            if inuse(new_counters) == 0 && self.enough_partial(others) {
                if on_list {
                    Self::remove_partial(node, lists, slab);
                    self.stat(Stat::FreeRemovePartial);
                }
                self.discard_locked(node, lists, slab, &mut d);
            } else if prior == 0 && !on_list {
                Self::add_partial(node, lists, slab, true);
                self.stat(Stat::FreeAddPartial);
            }
            drop(g);
        }
        self.free_discards(d);
    }

    // ---- bulk -------------------------------------------------------------

    /// Allocates `out.len()` objects, all or nothing.
    pub fn alloc_bulk(&self, gfp: u32, out: &mut [*mut u8]) -> bool {
        if self.debug != 0 {
            for i in 0..out.len() {
                out[i] = self.alloc(gfp, NO_NODE);
                if out[i].is_null() {
                    // SAFETY: these objects were just allocated for the caller.
                    unsafe { self.free_bulk(&mut out[..i]) };
                    return false;
                }
            }
            return true;
        }
        // One branch per call, like the single-object paths.
        if self.mode == MODE_HARDENED {
            self.alloc_bulk_fast::<true>(gfp, out)
        } else {
            self.alloc_bulk_fast::<false>(gfp, out)
        }
    }

    /// `alloc_bulk` for non-debug caches, hardened (`H`) or not.
    #[inline(always)]
    fn alloc_bulk_fast<const H: bool>(&self, gfp: u32, out: &mut [*mut u8]) -> bool {
        let mut g = self.cpu_lock();
        let mut i = 0;
        while i < out.len() {
            let c = g.c;
            // SAFETY: CPU lock held.
            let obj = unsafe { (*c).freelist };
            let obj = if obj.is_null() {
                Self::stat_locked(c, Stat::AllocSlowpath);
                let o = self.slab_alloc_locked(&mut g, gfp, NO_NODE);
                if o.is_null() {
                    Self::cpu_unlock(g);
                    // SAFETY: these objects were just allocated for the caller.
                    unsafe { self.free_bulk(&mut out[..i]) };
                    return false;
                }
                o
            } else {
                // SAFETY: CPU lock held; `obj` heads our freelist, so it is
                // an object of the CPU slab.
                let next = unsafe { get_free_pointer_as::<H>(obj, &self.layout) };
                // SAFETY: CPU lock held.
                let slab = unsafe { (*c).slab };
                if H && !free_pointer_ok(next, slab, &self.layout) {
                    // Checked again under the lock: reports and isolates the
                    // CPU slab (then retry elsewhere).
                    if let Some(o) = self.load_freelist(c, obj) {
                        out[i] = o;
                        i += 1;
                    }
                    continue;
                }
                // SAFETY: CPU lock held.
                unsafe { (*c).freelist = next };
                Self::stat_locked(c, Stat::AllocFastpath);
                obj
            };
            out[i] = obj;
            i += 1;
        }
        // SAFETY: CPU lock held; the freelist changed, so bump the tid.
        unsafe { (*g.c).tid = (*g.c).tid.wrapping_add(self.tid_step) };
        Self::cpu_unlock(g);
        if gfp & self.gfp_zero != 0 {
            for &obj in out.iter() {
                // SAFETY: freshly allocated objects.
                unsafe { ptr::write_bytes(obj, 0, self.layout.object_size) };
            }
        }
        true
    }

    /// Frees the objects in `objs` (null entries skipped), grouping objects
    /// of one slab into a detached freelist published with one cmpxchg16b.
    /// The slice's entries are consumed (set to null).
    ///
    /// # Safety
    /// As for [`Cache::free`], for every object in `objs`.
    pub unsafe fn free_bulk(&self, objs: &mut [*mut u8]) {
        if self.debug != 0 {
            for o in objs.iter_mut() {
                let obj = core::mem::take(o);
                if !obj.is_null() {
                    // SAFETY: per the caller.
                    unsafe { self.free(obj) };
                }
            }
            return;
        }
        if self.mode == MODE_HARDENED {
            // SAFETY: forwarded.
            unsafe { self.free_bulk_fast::<true>(objs) }
        } else {
            // SAFETY: forwarded.
            unsafe { self.free_bulk_fast::<false>(objs) }
        }
    }

    /// `free_bulk` for non-debug caches, hardened (`H`) or not.
    ///
    /// # Safety
    /// As for [`Cache::free_bulk`].
    #[inline(always)]
    unsafe fn free_bulk_fast<const H: bool>(&self, objs: &mut [*mut u8]) {
        let mut end = objs.len();
        while end > 0 {
            end -= 1;
            let obj = core::mem::take(&mut objs[end]);
            if obj.is_null() {
                continue;
            }
            let slab = match self.object_slab(obj) {
                Ok(s) => s,
                Err(e) => {
                    self.report(obj, e);
                    continue;
                }
            };
            // Gather the other objects of this slab, nearest first.
            let (head, tail) = (obj, obj);
            let mut head = head;
            let mut cnt = 1;
            for slot in objs[..end].iter_mut().rev() {
                let o = *slot;
                // Same slab block as a validated object: the memory is
                // valid, only the object boundary needs checking.
                if o == head {
                    // The same pointer twice in a row: a naive double free
                    // (it would make the chain a cycle).
                    self.report(o, FreeError::DoubleFree);
                    *slot = ptr::null_mut();
                    continue;
                }
                if !o.is_null()
                    && SlabHeader::of(o, &self.layout) == slab
                    // SAFETY: `slab` was validated above.
                    && unsafe { (*slab).check_object(o, &self.layout, self.owner()) }.is_ok()
                {
                    // SAFETY: `o` is an object of `slab` being freed by us.
                    unsafe { set_free_pointer_as::<H>(o, &self.layout, head) };
                    head = o;
                    cnt += 1;
                    *slot = ptr::null_mut();
                }
            }
            self.free_chain::<H>(slab, head, tail, cnt);
        }
    }

    #[inline(always)]
    fn free_chain<const H: bool>(
        &self,
        slab: *mut SlabHeader,
        head: *mut u8,
        tail: *mut u8,
        cnt: usize,
    ) {
        loop {
            let (freelist, tid, cpu_slab) = self.cpu_snapshot();
            if cpu_slab != slab {
                break;
            }
            if cnt == 1 && freelist == head as usize {
                return self.report(head, FreeError::DoubleFree);
            }
            // SAFETY: `tail` is ours until published.
            unsafe { set_free_pointer_as::<H>(tail, &self.layout, freelist as *mut u8) };
            if P::this_cpu_cmpxchg_pair(
                self.pcpu,
                [freelist, tid],
                [head as usize, tid.wrapping_add(self.tid_step)],
            ) {
                self.stat(Stat::FreeFastpath);
                return;
            }
            self.stat(Stat::CmpxchgDoubleCpuFail);
        }
        self.slab_free(slab, head, tail, cnt);
    }

    // ---- flushing, shrinking, teardown -------------------------------------

    /// Returns `c`'s CPU slab and CPU partial list to the nodes. The caller
    /// holds that CPU's lock, or the CPU is dead.
    fn flush_cpu(&self, c: *mut CpuSlab) {
        // SAFETY: per the caller, nothing else uses `c`.
        let partial = unsafe {
            if !(*c).slab.is_null() {
                Self::stat_locked(c, Stat::CpuslabFlush);
                self.deactivate_cpu_slab(c);
            }
            let p = (*c).partial;
            (*c).partial = ptr::null_mut();
            (*c).partial_slabs = 0;
            p
        };
        if !partial.is_null() {
            self.unfreeze_partials(partial);
        }
    }

    /// Flushes every online CPU's slab and partial list.
    pub fn flush_all(&self) {
        P::for_each_cpu_locked(&|cpu| self.flush_cpu(P::per_cpu_ptr(self.pcpu, cpu).cast()));
    }

    /// Test hook: CPU `cpu`'s state for this cache (read racily, to check
    /// the tid invariant), and the tid step.
    pub fn cpu_state(&self, cpu: u32) -> (*const CpuSlab, usize) {
        (
            P::per_cpu_ptr(self.pcpu, cpu).cast_const().cast(),
            self.tid_step,
        )
    }

    /// Flushes a CPU that went offline.
    pub fn flush_dead_cpu(&self, cpu: u32) {
        self.flush_cpu(P::per_cpu_ptr(self.pcpu, cpu).cast());
    }

    fn trim_empty(&self, nid: i32, keep: usize) -> usize {
        let node = self.node(nid);
        let mut d = Discards(ptr::null_mut());
        let mut released = 0;
        {
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            while lists.empty.len() > keep {
                let slab = lists.empty.pop_front();
                node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
                // SAFETY: off every list, ours.
                unsafe {
                    (*slab).kill();
                    (*slab).next = d.0;
                }
                d.0 = slab;
                released += 1;
                self.stat(Stat::EmptyCacheRelease);
            }
        }
        self.free_discards(d);
        released
    }

    /// Returns every empty slab (partial-list and cached) to the page
    /// allocator after flushing the CPUs.
    pub fn shrink(&self) {
        self.flush_all();
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let mut d = Discards(ptr::null_mut());
            {
                let _g = P::node_lock(&node.list_lock);
                // SAFETY: list_lock held.
                let lists = unsafe { &mut *node.lists.get() };
                let mut cur = lists.partial.first();
                while !cur.is_null() {
                    // SAFETY: members of the list, under list_lock.
                    let next = unsafe { (*cur).next };
                    // SAFETY: as above.
                    if inuse(unsafe { (*cur).read_pair() }[1]) == 0 {
                        Self::remove_partial(node, lists, cur);
                        node.nr_slabs.fetch_sub(1, Ordering::Relaxed);
                        // SAFETY: off every list now.
                        unsafe {
                            (*cur).kill();
                            (*cur).next = d.0;
                        }
                        d.0 = cur;
                    }
                    cur = next;
                }
            }
            self.free_discards(d);
            self.trim_empty(n as i32, 0);
        }
    }

    /// Current counts. Exact only when no CPU is using the cache.
    pub fn usage(&self) -> Usage {
        let mut u = Usage {
            nr_nodes: self.nr_nodes,
            node_slabs: [0; MAX_NODES],
            node_partial: [0; MAX_NODES],
            node_objects: [0; MAX_NODES],
            node_cpu_slabs: [0; MAX_NODES],
            slabs: 0,
            partial: 0,
            objects_partial: 0,
            cpu_slabs: 0,
            cpu_partial_slabs: 0,
            empty_slabs: 0,
            live_objects: 0,
        };
        let per_slab = self.layout.objects;
        let limit = self.cpu_partial_slabs.load(Ordering::Relaxed) as usize + 1;
        // Slabs held by CPUs (CPU slab or CPU partial), per node.
        let mut held = [0usize; MAX_NODES];
        // A node id read racily from a slab header, kept in bounds.
        let last = self.nr_nodes.saturating_sub(1);
        let nid_of = |slab: *mut SlabHeader| {
            // SAFETY: slab memory stays mapped; the value is only an index
            // hint and is clamped.
            let n = unsafe { ptr::read_volatile(ptr::addr_of!((*slab).node)) };
            usize::try_from(n).unwrap_or(0).min(last)
        };
        for cpu in 0..P::nr_cpu_ids() {
            if !P::cpu_possible(cpu) {
                continue;
            }
            let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
            // SAFETY: racy reads of another CPU's state, for reporting.
            unsafe {
                let slab = ptr::read_volatile(ptr::addr_of!((*c).slab));
                if !slab.is_null() {
                    let nid = nid_of(slab);
                    u.cpu_slabs += 1;
                    u.node_cpu_slabs[nid] += 1;
                    held[nid] += 1;
                    let mut free = 0;
                    let mut cur = ptr::read_volatile(ptr::addr_of!((*c).freelist));
                    // The owner may be changing this list: follow it only
                    // through object starts of this slab, at most a slab's
                    // worth, so a stale link is never dereferenced.
                    while !cur.is_null()
                        && free < per_slab
                        && SlabHeader::of(cur, &self.layout) == slab
                        && self
                            .layout
                            .object_index(cur as usize - slab as usize)
                            .is_some()
                    {
                        free += 1;
                        cur = get_free_pointer(cur, &self.layout);
                    }
                    let slab_free_objs =
                        per_slab.saturating_sub(inuse((*slab).read_pair()[1]) as usize);
                    let live = per_slab.saturating_sub(free + slab_free_objs);
                    u.live_objects += live;
                    u.node_objects[nid] += live;
                }
                // Racing with the owner CPU: follow only live slabs of this
                // cache, and no more than the list can hold.
                let mut p = ptr::read_volatile(ptr::addr_of!((*c).partial));
                let mut seen = 0;
                while !p.is_null()
                    && seen <= limit
                    && P::addr_valid(p.cast())
                    && (*p).is_live_for(self.owner())
                {
                    seen += 1;
                    let nid = nid_of(p);
                    let live = inuse((*p).read_pair()[1]) as usize;
                    u.cpu_partial_slabs += 1;
                    held[nid] += 1;
                    u.live_objects += live;
                    u.node_objects[nid] += live;
                    p = ptr::read_volatile(ptr::addr_of!((*p).next));
                }
            }
        }
        for (n, &held_here) in held.iter().enumerate().take(self.nr_nodes) {
            let node = self.node(n as i32);
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &*node.lists.get() };
            let slabs = node.nr_slabs.load(Ordering::Relaxed);
            u.slabs += slabs;
            u.node_slabs[n] = slabs;
            u.node_partial[n] = lists.partial.len();
            u.partial += lists.partial.len();
            u.empty_slabs += lists.empty.len();
            let mut cur = lists.partial.first();
            let mut partial_inuse = 0;
            while !cur.is_null() {
                // SAFETY: members of the list, under list_lock.
                unsafe {
                    partial_inuse += inuse((*cur).read_pair()[1]) as usize;
                    cur = (*cur).next;
                }
            }
            u.objects_partial += partial_inuse;
            // Slabs on no node list and not held by a CPU are full.
            let full = slabs.saturating_sub(lists.partial.len() + lists.empty.len() + held_here);
            let live = partial_inuse + full * per_slab;
            u.live_objects += live;
            u.node_objects[n] += live;
        }
        u
    }

    /// Checks every slab: counters within bounds, the frozen bit clear, the
    /// slab's freelist consistent with its counters (each free pointer an
    /// object start of the slab); in debug caches also every object's red
    /// zones and poison. CPUs are flushed first (so CPU slabs are checked
    /// too; sleeps). Each damaged slab is reported once and isolated.
    /// Returns how many problems were reported meanwhile (the rise of
    /// `errors`, so concurrent bad frees count too).
    pub fn validate(&self) -> usize {
        let errors = self.errors();
        // Flushing checks the CPU freelists (deactivate_slab follows them).
        self.flush_all();
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            for kind in [ListKind::Partial, ListKind::Empty, ListKind::Full] {
                let mut cur = match kind {
                    ListKind::Partial => lists.partial.first(),
                    ListKind::Empty => lists.empty.first(),
                    ListKind::Full => lists.full.first(),
                };
                while !cur.is_null() {
                    // SAFETY: members of a node list, under its list_lock;
                    // frees may still push onto a non-debug slab's
                    // freelist, which only makes `free` grow.
                    let (found, next) = unsafe { (self.check_slab(cur, kind), (*cur).next) };
                    if let Some(p) = found {
                        self.report_problem(cur, p, "validate");
                        // SAFETY: `cur` is on that list, under list_lock.
                        unsafe {
                            match kind {
                                ListKind::Partial => Self::remove_partial(node, lists, cur),
                                ListKind::Empty => lists.empty.remove(cur),
                                ListKind::Full => lists.full.remove(cur),
                            }
                        }
                        self.isolate(cur);
                    }
                    cur = next;
                }
            }
        }
        self.errors().saturating_sub(errors)
    }

    /// One slab's first problem, if any.
    ///
    /// # Safety
    /// `slab` is on a node list of kind `kind` whose lock the caller holds.
    unsafe fn check_slab(&self, slab: *mut SlabHeader, kind: ListKind) -> Option<Problem> {
        // SAFETY: per the caller.
        let h = unsafe { &*slab };
        let l = &self.layout;
        if !h.is_live_for(self.owner()) {
            return Some(Problem::Slab("header magic does not match this cache"));
        }
        let [head, counters] = h.read_pair();
        if counters & FROZEN != 0 {
            return Some(Problem::Slab("frozen slab on a node list"));
        }
        let used = inuse(counters) as usize;
        let bad_count = match kind {
            ListKind::Partial => used >= l.objects,
            ListKind::Empty => used != 0,
            ListKind::Full => used != l.objects || head != 0,
        };
        if used > l.objects || bad_count {
            return Some(Problem::Slab("inuse out of range for the list it is on"));
        }
        let mut free = 0;
        let mut is_free = [0u64; 64];
        let mut prev: *const u8 = ptr::null();
        let mut cur = head as *const u8;
        while !cur.is_null() {
            if !free_pointer_ok(cur, slab, l) {
                return Some(Problem::FreePointer {
                    from: prev,
                    bad: cur,
                });
            }
            free += 1;
            if free > l.objects {
                return Some(Problem::Slab("freelist longer than the slab (a cycle)"));
            }
            let idx = l.object_index(cur as usize - slab as usize).unwrap_or(0);
            if let Some(w) = is_free.get_mut(idx / 64) {
                *w |= 1 << (idx % 64);
            }
            prev = cur;
            // SAFETY: `cur` was checked to be an object start of this slab.
            cur = unsafe { get_free_pointer(cur, l) };
        }
        if free + used < l.objects || (self.debug != 0 && free + used != l.objects) {
            return Some(Problem::Slab(
                "free objects plus inuse differ from the slab's objects",
            ));
        }
        if self.debug == 0 {
            return None;
        }
        for idx in 0..l.objects.min(64 * 64) {
            let obj = (slab as usize + l.object_offset(idx)) as *const u8;
            let free = is_free[idx / 64] & (1 << (idx % 64)) != 0;
            let rz = if free {
                debug::RED_INACTIVE
            } else {
                debug::RED_ACTIVE
            };
            // SAFETY: `obj` is an object start of the live slab.
            let damage = unsafe {
                debug::check_red_zones(obj, l, rz).or_else(|| {
                    if free && self.poisoned {
                        debug::check_poison(obj, l)
                    } else {
                        None
                    }
                })
            };
            if let Some(damage) = damage {
                return Some(Problem::Object { obj, damage, free });
            }
        }
        None
    }

    // ---- debug caches: one object at a time under list_lock -----------------
    //
    // Debug caches have no CPU slabs, CPU partial lists or lockless paths:
    // every allocation and free takes the node's list_lock and checks the
    // object (upstream does the same for `kmem_cache_debug` caches). Their
    // slabs are never frozen; a slab with free objects is on the node's
    // partial list, a full one on its full list, so `validate` sees all.

    fn owner_track(&self) -> Track {
        Track {
            addr: P::api_caller(),
            when: P::jiffies(),
            cpu_pid: P::current_cpu() as usize | ((P::current_pid() as u32 as usize) << 32),
        }
    }

    fn debug_alloc(&self, gfp: u32, node: i32) -> *mut u8 {
        let track = if self.layout.store_user() {
            self.owner_track()
        } else {
            Track::default()
        };
        self.stat(Stat::AllocSlowpath);
        let local = if node >= 0 { node } else { P::numa_node_id() };
        let mut order = [0i32; MAX_NODES];
        order[0] = local;
        let mut n = 1;
        if node < 0 {
            n += P::fallback_nodes(local, &mut order[1..]);
        }
        loop {
            for &nid in &order[..n] {
                if (nid as usize) >= self.nr_nodes {
                    continue;
                }
                let nd = self.node(nid);
                let _g = P::node_lock(&nd.list_lock);
                // SAFETY: list_lock held.
                let lists = unsafe { &mut *nd.lists.get() };
                loop {
                    let slab = lists.partial.first();
                    if slab.is_null() {
                        break;
                    }
                    if let Some(obj) = self.debug_take(nd, lists, slab, &track) {
                        return obj;
                    }
                }
            }
            // No partial slab: an empty cached one, else new pages.
            let mut slab = ptr::null_mut();
            for &nid in &order[..n] {
                slab = self.take_empty(nid);
                if !slab.is_null() {
                    self.stat(Stat::EmptyCacheHit);
                    break;
                }
            }
            if slab.is_null() {
                slab = self.new_slab(gfp, node);
                if slab.is_null() {
                    return ptr::null_mut();
                }
                self.stat(Stat::AllocSlab);
            }
            // SAFETY: a private slab; its node id is in range.
            let nd = self.node(unsafe { (*slab).node });
            let _g = P::node_lock(&nd.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *nd.lists.get() };
            Self::add_partial(nd, lists, slab, false);
            if let Some(obj) = self.debug_take(nd, lists, slab, &track) {
                return obj;
            }
        }
    }

    /// Takes the first free object of `slab` (on `node`'s partial list,
    /// list_lock held) after checking the slab and the object. On damage
    /// the slab is reported, taken off the list and isolated: None.
    fn debug_take(
        &self,
        node: &Node<P>,
        lists: &mut NodeLists,
        slab: *mut SlabHeader,
        t: &Track,
    ) -> Option<*mut u8> {
        let l = &self.layout;
        // SAFETY: list_lock held; a debug slab's pair changes only under it.
        let [fl, counters] = unsafe { (*slab).read_pair() };
        let obj = fl as *mut u8;
        let used = inuse(counters) as usize;
        let mut next = ptr::null_mut();
        // SAFETY: the slab is on a node list, so live (the magic is checked
        // first); `obj` is read only once it is known to be an object start.
        let problem = unsafe {
            if !(*slab).is_live_for(self.owner()) {
                Some(Problem::Slab("header magic does not match this cache"))
            } else if fl == 0 || used >= l.objects || counters & FROZEN != 0 {
                Some(Problem::Slab(
                    "counters say full or frozen, but the slab is on the partial list",
                ))
            } else if !free_pointer_ok(obj, slab, l) {
                Some(Problem::FreePointer {
                    from: ptr::null(),
                    bad: obj,
                })
            } else {
                next = get_free_pointer(obj, l);
                if !free_pointer_ok(next, slab, l) {
                    Some(Problem::FreePointer {
                        from: obj,
                        bad: next,
                    })
                } else {
                    debug::check_red_zones(obj, l, debug::RED_INACTIVE)
                        .or_else(|| {
                            if self.poisoned {
                                debug::check_poison(obj, l)
                            } else {
                                None
                            }
                        })
                        .map(|damage| Problem::Object {
                            obj,
                            damage,
                            free: true,
                        })
                }
            }
        };
        if let Some(p) = problem {
            self.report_problem(slab, p, "allocation");
            Self::remove_partial(node, lists, slab);
            self.isolate(slab);
            return None;
        }
        // SAFETY: as above; the cmpxchg cannot race with another list
        // holder, only keeps the pair's protocol.
        unsafe {
            while !P::cmpxchg_pair(
                (*slab).pair_ptr(),
                [fl, counters],
                [next as usize, counters + 1],
            ) {}
            if next.is_null() {
                Self::remove_partial(node, lists, slab);
                lists.full.push_front(slab);
            }
            debug::set_red_zones(obj, l, debug::RED_ACTIVE);
            debug::set_track(obj, l, false, *t);
        }
        Some(obj)
    }

    /// Frees `obj` of `slab` in a debug cache.
    fn debug_free(&self, slab: *mut SlabHeader, obj: *mut u8) {
        let l = &self.layout;
        let t = if l.store_user() {
            self.owner_track()
        } else {
            Track::default()
        };
        self.stat(Stat::FreeSlowpath);
        // SAFETY: validated by the caller.
        let node = self.node(unsafe { (*slab).node });
        let mut d = Discards(ptr::null_mut());
        {
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &mut *node.lists.get() };
            // SAFETY: slab memory stays mapped; isolation happens under
            // list_lock, so the magic is stable here.
            if unsafe { !(*slab).is_live_for(self.owner()) } {
                drop(_g);
                return self.report(obj, FreeError::Isolated);
            }
            // SAFETY: as above.
            let [fl, counters] = unsafe { (*slab).read_pair() };
            let used = inuse(counters) as usize;
            // SAFETY: `obj` is an object start of the live slab; pointers
            // on its freelist are followed only once checked.
            let problem = unsafe {
                if fl == obj as usize
                    || debug::red_zones_are(obj, l, debug::RED_INACTIVE)
                    || self.on_freelist(slab, fl, obj)
                {
                    Some(Problem::DoubleFree(obj))
                } else if used == 0 || used > l.objects || counters & FROZEN != 0 {
                    Some(Problem::Slab("inuse out of range on free"))
                } else if !free_pointer_ok(fl as *const u8, slab, l) {
                    Some(Problem::FreePointer {
                        from: ptr::null(),
                        bad: fl as *const u8,
                    })
                } else {
                    debug::check_red_zones(obj, l, debug::RED_ACTIVE).map(|damage| {
                        Problem::Object {
                            obj,
                            damage,
                            free: false,
                        }
                    })
                }
            };
            if let Some(p) = problem {
                let isolate = !matches!(p, Problem::DoubleFree(_));
                self.report_problem(slab, p, "free");
                if isolate {
                    // SAFETY: under list_lock; a debug slab with free
                    // objects is on the partial list, a full one on `full`.
                    unsafe {
                        if fl == 0 {
                            lists.full.remove(slab);
                        } else {
                            Self::remove_partial(node, lists, slab);
                        }
                    }
                    self.isolate(slab);
                }
                return;
            }
            // SAFETY: the object is ours (checked above); under list_lock.
            unsafe {
                debug::set_track(obj, l, true, t);
                if self.poisoned {
                    debug::poison(obj, l);
                }
                debug::set_red_zones(obj, l, debug::RED_INACTIVE);
                set_free_pointer(obj, l, fl as *mut u8);
                while !P::cmpxchg_pair((*slab).pair_ptr(), [fl, counters], [obj as usize, used - 1])
                {
                }
                if fl == 0 {
                    lists.full.remove(slab);
                    Self::add_partial(node, lists, slab, false);
                }
            }
            if used == 1 && self.enough_partial(lists.partial.len() - 1) {
                Self::remove_partial(node, lists, slab);
                self.stat(Stat::FreeRemovePartial);
                self.discard_locked(node, lists, slab, &mut d);
            }
        }
        self.free_discards(d);
    }

    /// Whether `obj` is on the freelist starting at `fl` (bounded walk;
    /// stops at a pointer that is not an object of the slab).
    ///
    /// # Safety
    /// `slab` is live, its list_lock held.
    unsafe fn on_freelist(&self, slab: *mut SlabHeader, fl: usize, obj: *mut u8) -> bool {
        let mut cur = fl as *const u8;
        let mut n = 0;
        while !cur.is_null() && n <= self.layout.objects && free_pointer_ok(cur, slab, &self.layout)
        {
            if cur == obj.cast_const() {
                return true;
            }
            n += 1;
            // SAFETY: an object start of the slab.
            cur = unsafe { get_free_pointer(cur, &self.layout) };
        }
        false
    }

    /// Prints one report for `p` found in `slab` during `when`, and counts
    /// an error.
    fn report_problem(&self, slab: *mut SlabHeader, p: Problem, when: &str) {
        let l = &self.layout;
        match p {
            Problem::FreePointer { from, bad } => self.report_free_pointer(slab, from, bad),
            Problem::Slab(why) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the slab's memory stays mapped.
                let [fl, counters] = unsafe { (*slab).read_pair() };
                P::report(format_args!(
                    "cache {}: slab {:p} found on {}: {} (inuse {}, objects {}, freelist {:#x}); slab isolated",
                    self.name_str(),
                    slab,
                    when,
                    why,
                    inuse(counters),
                    l.objects,
                    fl
                ));
            }
            Problem::DoubleFree(obj) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                P::report(format_args!(
                    "cache {}: double free of object {:p} (slab {:p}, index {}); ignored",
                    self.name_str(),
                    obj,
                    slab,
                    l.object_index(obj as usize - slab as usize).unwrap_or(0)
                ));
                self.report_owners(obj);
            }
            Problem::Object { obj, damage, free } => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                P::report(format_args!(
                    "cache {}: {} overwritten in {} object {:p} (slab {:p}, index {}), found on {}",
                    self.name_str(),
                    damage.what,
                    if free { "free" } else { "allocated" },
                    obj,
                    slab,
                    l.object_index(obj as usize - slab as usize).unwrap_or(0),
                    when
                ));
                P::report(format_args!(
                    "  at offset {} (object size {}): expected {:#04x}, found {:#04x}; {} bytes from the first to the last bad one",
                    damage.offset, l.object_size, damage.expected, damage.found, damage.len
                ));
                // SAFETY: `obj` is an object start of the slab.
                unsafe { self.dump(obj, damage.offset) };
                self.report_owners(obj);
                P::report(format_args!(
                    "  slab isolated: its objects are never handed out again"
                ));
            }
        }
    }

    /// Prints the owner records of `obj`, if the cache keeps them.
    fn report_owners(&self, obj: *const u8) {
        let now = P::jiffies();
        for (free, what) in [(false, "allocated"), (true, "freed")] {
            // SAFETY: `obj` is an object start of a slab of this cache.
            if let Some(t) = unsafe { debug::get_track(obj, &self.layout, free) } {
                let mut sym = [0u8; 128];
                let n = P::format_symbol(t.addr, &mut sym);
                P::report(format_args!(
                    "  last {} by {} on CPU {} pid {} at jiffies {} ({} ago)",
                    what,
                    core::str::from_utf8(&sym[..n]).unwrap_or("?"),
                    t.cpu(),
                    t.pid(),
                    t.when,
                    now.wrapping_sub(t.when)
                ));
            }
        }
    }

    /// With owner tracking, lists up to 16 live objects (destroy with live
    /// objects). Node lists only: a debug cache has no CPU slabs.
    fn report_live_objects(&self) {
        if !self.layout.store_user() {
            return;
        }
        let l = &self.layout;
        let mut shown = 0;
        P::report(format_args!(
            "cache {}: objects still allocated at destroy (up to 16 shown):",
            self.name_str()
        ));
        for n in 0..self.nr_nodes {
            let node = self.node(n as i32);
            let _g = P::node_lock(&node.list_lock);
            // SAFETY: list_lock held.
            let lists = unsafe { &*node.lists.get() };
            for list in [&lists.partial, &lists.full] {
                let mut cur = list.first();
                while !cur.is_null() && shown < 16 {
                    for idx in 0..l.objects {
                        let obj = (cur as usize + l.object_offset(idx)) as *const u8;
                        // SAFETY: object starts of a live listed slab.
                        if unsafe { debug::red_zones_are(obj, l, debug::RED_ACTIVE) }
                            || (!l.red_zone() && {
                                // SAFETY: as above.
                                let fl = unsafe { (*cur).read_pair()[0] };
                                // SAFETY: list_lock held.
                                !unsafe { self.on_freelist(cur, fl, obj.cast_mut()) }
                            })
                        {
                            P::report(format_args!("  live object {:p}", obj));
                            self.report_owners(obj);
                            shown += 1;
                            if shown == 16 {
                                break;
                            }
                        }
                    }
                    // SAFETY: list member, under list_lock.
                    cur = unsafe { (*cur).next };
                }
            }
        }
    }

    /// Destroys the cache: flushes the CPUs and frees every slab. With live
    /// objects nothing is freed (the cache and its slabs are leaked) and the
    /// count is returned as the error.
    ///
    /// # Safety
    /// `this` came from `create`; no other call on it runs or follows.
    pub unsafe fn destroy(this: *mut Cache<P>) -> Result<(), usize> {
        // SAFETY: per the caller, `this` is live and exclusively ours.
        let cache = unsafe { &mut *this };
        cache.flush_all();
        // CPUs that went offline after the cache left the hotplug
        // callback's view: nothing runs there, flush them directly.
        for cpu in 0..P::nr_cpu_ids() {
            if P::cpu_possible(cpu) && !P::cpu_online(cpu) {
                cache.flush_dead_cpu(cpu);
            }
        }
        let u = cache.usage();
        if u.live_objects != 0 {
            cache.errors.fetch_add(1, Ordering::Relaxed);
            cache.report_live_objects();
            return Err(u.live_objects);
        }
        cache.shrink();
        cache.free_state();
        // SAFETY: allocated in `create`; nothing refers to it any more.
        unsafe { P::free_meta(this.cast()) };
        Ok(())
    }
}
