// SPDX-License-Identifier: GPL-2.0
//! The SLUB algorithm, generic over a [`Platform`].
//!
//! This file holds the types, the slab states, the lock order and the
//! cache's creation and destruction. The algorithm is split by path, in the
//! order mm/slub.c reads:
//! - `fastpath.rs`: `alloc` and `free`, the lockless per-CPU paths;
//! - `alloc_slow.rs`: an allocation that misses the CPU freelist;
//! - `free_batch.rs`: the batched-free policy for frees that miss the CPU
//!   slab (gathered per CPU, returned to their slabs in groups), in the
//!   `free_batch` build variant only (`--cfg rslub_free_batch`, Kbuild
//!   `VARIANT=free_batch`);
//! - `free_slow.rs`: a free that misses the CPU slab, one slab at a time;
//! - `partial.rs`: node partial lists, `deactivate_slab`,
//!   `unfreeze_partials`, the empty-slab cache;
//! - `bulk.rs`: `alloc_bulk`, `free_bulk`;
//! - `flush.rs`: flushing CPUs, `shrink`;
//! - `debug_paths.rs`: the locked paths of debug caches;
//! - `validate.rs`, `report.rs`: checking slabs, reporting and isolating;
//! - `usage.rs`, `tunables.rs`: what a cache reports and what can be set;
//! - `guard.rs`: `CpuGuard` (one CPU's state under its lock) and
//!   `Discards` (slabs to free once the locks are dropped).
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
//! - *Debug full* (debug caches only): not frozen, on its node's `full`
//!   list, no free object; debug caches list every slab so `validate` sees
//!   it.
//! - In the `free_batch` build variant, an object freed while batching is
//!   on (`free_batch` > 0) and its slab is not the CPU slab waits in that
//!   CPU's batch (`CpuSlab::batch`): its slab still counts it in use until
//!   the batch is returned (full batch, flush, shrink, validate, destroy,
//!   CPU offline). The default build has no batch.
//! - *Isolated*: a corruption was found in it. Frozen (so a racing free
//!   only pushes onto its freelist), its magic changed to the isolated
//!   value (so later frees of its objects are dropped), on no list and
//!   forgotten by its node; its pages are never freed or reused.
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
//! - any → isolated: `isolate` (`report.rs`), once a corruption was
//!   reported and the slab taken off its list.
//!
//! Every change of a published slab's `[freelist, counters]` pair is one
//! locked cmpxchg16b: through `Cache::update_pair` (retried), or the single
//! inline attempt a free off the CPU slab makes first (`slab_free`).
//!
//! The invariants these states keep are written on the types: [`Cache`],
//! [`CpuSlab`], [`SlabHeader`] and `SlabList` (in `crate::slab`), and
//! `NodeLists` here.
//!
//! # Lock order
//! CPU lock (a `CpuGuard`: irqs off on this CPU; upstream's `local_lock`
//! on `cpu_slab`) → node lock (`Node::lists`: an irq-safe spinlock that owns
//! the node's `NodeLists`; upstream's `list_lock`). Only one node lock is
//! held at a time. Page allocation and ctors run with neither held when the
//! gfp flags allow sleeping (`CpuGuard::unlocked`). Debug caches take only
//! node locks.
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

use crate::debug;
use crate::layout::Layout;
use crate::platform::{Pcpu, Platform};
use crate::slab::{SlabHeader, SlabList};
use crate::stat::Stat;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
#[cfg(rslub_free_batch)]
pub use free_batch::FREE_BATCH_MAX;
pub use tunables::{auto_max_empty, size_defaults, Defaults, MIN_OBJECTS};

/// Node ids handled (x86_64's default `NODES_SHIFT` of 6).
pub const MAX_NODES: usize = 64;

/// A constructor, as the C API passes it.
pub type Ctor = unsafe extern "C" fn(*mut c_void);

/// One CPU's state for one cache. The first 16 bytes are the cmpxchg16b pair.
///
/// # Invariants
/// - `freelist` and `tid` change only by this CPU's per-CPU cmpxchg16b on
///   the pair (the fast paths, which advance `tid` by `TID_STEP` with
///   each change), or under this CPU's lock (a `CpuGuard`), whose holder
///   advances `tid` by `TID_STEP` before it lets the lock go whenever it
///   changed `freelist` or `slab`. `tid` is the CPU's number modulo
///   `TID_STEP`, so no other CPU's tid ever equals it.
/// - `slab` is null or a frozen slab of the cache that belongs to this CPU.
///   `freelist` is null while `slab` is; otherwise it is null or a chain of
///   free objects of `slab` that only this CPU hands out, counted as in use
///   by `slab`'s counters.
/// - `partial` is a chain, through the slabs' `next`, of `partial_slabs`
///   frozen slabs of the cache that belong to this CPU, each with a free
///   object; none is allocated from until it becomes `slab`. Lowering the
///   cache's `cpu_partial` may leave the chain longer than the new bound
///   until the next put drains it.
/// - All fields but the pair and `stats` change only under this CPU's lock,
///   or, for a CPU that is dead, in the one flush of it. `stats` are this
///   CPU's to increment (a per-CPU increment, or under its lock);
///   `stat_clear` zeroes them racily from anywhere. Other CPUs only read
///   this state racily, to report it.
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
    /// Objects in `batch`.
    #[cfg(rslub_free_batch)]
    pub batch_len: u32,
    /// Freed objects that missed the CPU slab, not yet returned to their
    /// slabs (`free_batch.rs`); `batch[..batch_len]` are validated objects
    /// of this cache, each marked as batched in its free pointer slot.
    #[cfg(rslub_free_batch)]
    pub batch: [*mut u8; FREE_BATCH_MAX],
    /// Event counters.
    pub stats: [usize; Stat::COUNT],
}

/// One node's lists. They live inside the node's lock (`Node::lists`), so
/// holding its guard is the only way to reach them.
///
/// # Invariants
/// Every slab linked on these lists is a live slab of the owning cache on
/// this node, unfrozen, and on exactly one of the lists (`on_list` set);
/// `Node::nr_partial` is updated to `partial.len()` whenever the partial
/// list changes.
struct NodeLists {
    partial: SlabList,
    empty: SlabList,
    /// Full slabs of debug caches (so `validate` sees every slab); unused
    /// otherwise.
    full: SlabList,
}

// SAFETY: the lists only link slabs owned by the cache; whichever CPU holds
// the node lock may touch them.
unsafe impl Send for NodeLists {}

impl NodeLists {
    /// Whether `slab`, a slab of this node, was on one of these lists when
    /// it was found broken and forgot its slabs (`SlabList::remove`):
    /// still marked `on_list`, under a generation none of them has. Such a
    /// slab was reported leaked and is never listed again (its header may
    /// be the one a stray write damaged).
    ///
    /// # Safety
    /// `slab` is a live header of this node, whose lock the caller holds.
    unsafe fn forgot(&self, slab: *const SlabHeader) -> bool {
        // SAFETY: per the caller.
        unsafe {
            (*slab).on_list
                && !self.partial.holds(slab)
                && !self.empty.holds(slab)
                && !self.full.holds(slab)
        }
    }
}

/// Per-node state.
struct Node<P: Platform> {
    /// The node's `list_lock` and the lists it protects.
    lists: P::NodeLock<NodeLists>,
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
    /// Frees that miss the CPU slab batched per CPU before they are
    /// returned to their slabs (`0..=FREE_BATCH_MAX`); 0: one at a time.
    #[cfg(rslub_free_batch)]
    pub free_batch: u32,
    /// `__GFP_ZERO`.
    pub gfp_zero: u32,
    /// `__GFP_THISNODE`.
    pub gfp_thisnode: u32,
    /// `__GFP_NOMEMALLOC`, added to the page requests of a cache that does
    /// not serve a kernel cache (the kernel adds it for served ones).
    pub gfp_nomemalloc: u32,
    /// Debug features (`debug::CONSISTENCY` ...); the layout must match
    /// (red zones, owner records, free pointer outside when poisoning).
    pub debug: u32,
    /// Store free pointers obfuscated and check them before following.
    pub harden: bool,
    /// Thread the freelists of new slabs in random order.
    pub random_freelist: bool,
    /// `SLAB_TYPESAFE_BY_RCU`: a freed slab's pages go back to the page
    /// allocator only after an RCU grace period, and free objects are
    /// never poisoned (the layout keeps the free pointer out of them).
    pub typesafe_rcu: bool,
}

/// Longest cache name, in bytes, without a NUL. The C API refuses longer
/// names; sysfs adds one byte for the NUL. It is `RSLUB_NAME_MAX` of
/// include/rslub_limits.h: the module and the host build assert that they
/// agree, so the core needs nothing from the shim.
pub const NAME_MAX: usize = 63;

/// A cache: geometry, tunables, per-CPU and per-node state.
///
/// # Invariants
/// From `create`'s return until `destroy`:
/// - `pcpu` holds a [`CpuSlab`] for every possible CPU, and `nodes[n]` a
///   `Node` for each `n < nr_nodes` (`nr_nodes <= MAX_NODES`; the others
///   are null); both live as long as the cache.
/// - Fixed once the cache is shared: the name, `flags`, `layout`, `ctor`,
///   `slab_secret` (random and odd), `debug`, `mode`, `poisoned`,
///   `typesafe_rcu`, the gfp words and `fallback`. `mode` follows from the
///   others: `MODE_DEBUG` exactly when `debug` is not 0, else by
///   `layout.hardened` and `layout.header_outside`.
/// - Every slab of the cache not yet killed carries `owner == self`, its
///   magic made from `slab_secret`, and is counted in its node's
///   `nr_slabs` from `new_slab` until it is killed (`Discards`) or
///   isolated (then counted in `isolated`, its pages kept for good).
/// - A debug cache keeps its headers in its slabs and has no fallback, no
///   CPU slab, CPU partial list or frozen slab (but isolated ones): its
///   slabs and their pairs change only under their node's lock.
/// - Locks are taken in the order of the module's "Lock order": a CPU lock
///   before a node lock, one node lock at a time, and none of `fallback`'s
///   while one of this cache's is held.
/// - `page_owner` is null, or, set before the first slab of a cache whose
///   headers are in its slabs, a kernel cache that outlives every slab of
///   this one. `fallback` is null, or a cache of the smallest order that
///   this one made before it was shared, owns and destroys, and that has
///   no fallback itself.
/// - `random_seq`, once set (once), holds a permutation of the
///   `layout.objects` object indices until `destroy` frees it;
///   `rcu_pending` counts the slabs queued for an RCU grace period whose
///   callback has not run.
pub struct Cache<P: Platform> {
    name: [u8; NAME_MAX],
    name_len: usize,
    /// `SLAB_*` flags the cache was created with (reported, not interpreted).
    pub flags: u32,
    /// Slab geometry.
    pub layout: Layout,
    ctor: Option<Ctor>,
    pcpu: Pcpu,
    nodes: [*mut Node<P>; MAX_NODES],
    nr_nodes: usize,
    /// The random, odd secret every slab's magic is made from
    /// (`SlabHeader::live_magic`): a header cannot be forged, or copied
    /// from another slab, without it.
    slab_secret: usize,
    gfp_zero: u32,
    gfp_thisnode: u32,
    gfp_nomemalloc: u32,
    cpu_partial: AtomicU32,
    cpu_partial_slabs: AtomicU32,
    min_partial: AtomicU32,
    max_empty: AtomicU32,
    /// Batched frees per CPU (`free_batch.rs`); 0: classic.
    #[cfg(rslub_free_batch)]
    free_batch: AtomicU32,
    /// Problems detected (bad frees, corruption).
    errors: AtomicUsize,
    /// Debug features (`debug::*` bits); 0 for the lockless fast paths.
    debug: u32,
    /// Which alloc and free paths serve the cache (`MODE_*`), fixed at
    /// create: one well-predicted branch on the fast path picks them.
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
    /// `SLAB_TYPESAFE_BY_RCU` (`Params::typesafe_rcu`).
    typesafe_rcu: bool,
    /// Dead slabs waiting for a grace period before their pages go back
    /// (`typesafe_rcu`).
    rcu_pending: AtomicUsize,
    /// Null, or the kernel cache this cache serves: its slabs are marked
    /// slab pages of that cache (`Platform::alloc_pages`).
    page_owner: AtomicPtr<c_void>,
    /// Null, or this cache's companion of the smallest slab order
    /// (`fallback.rs`), where an allocation goes when no page block of
    /// this cache's order can be had.
    fallback: *mut Cache<P>,
    /// The fallback has had a slab: frees look for its objects too.
    fallback_used: AtomicBool,
    /// `__GFP_NORETRY | __GFP_NOWARN`, added to this cache's page requests
    /// while it has a fallback; else 0.
    gfp_light: u32,
    _p: PhantomData<P>,
}

// SAFETY: all shared mutable state is per-CPU (`CpuGuard` or the fast
// paths' cmpxchg16b), inside a node lock (`NodeLists`) or atomic.
unsafe impl<P: Platform> Sync for Cache<P> {}
// SAFETY: the cache owns what its raw pointers reach (nodes, the per-CPU
// area, slabs); none of it is tied to the creating thread.
unsafe impl<P: Platform> Send for Cache<P> {}

const NO_NODE: i32 = -1;

/// `Cache::mode`: lockless paths, hardened free pointers (the default).
const MODE_HARDENED: u8 = 0;
/// `Cache::mode`: lockless paths, plain free pointers.
const MODE_PLAIN: u8 = 1;
/// `Cache::mode`: the locked debug paths.
const MODE_DEBUG: u8 = 2;
/// `Cache::mode`: lockless paths, hardened, the slab header outside the
/// slab (`Layout::header_outside`). The modes past `MODE_PLAIN` are one
/// jump away from the hit paths of the first two.
const MODE_OUT_HARDENED: u8 = 3;
/// `Cache::mode`: lockless paths, plain, the slab header outside the slab.
const MODE_OUT_PLAIN: u8 = 4;

impl<P: Platform> Cache<P> {
    /// What a CPU's tid advances by at each change of its freelist: a power
    /// of two above every CPU id (upstream's `TID_STEP`), so a CPU's tids
    /// are its id modulo the step and no two CPUs share one. A constant:
    /// the fast paths add an immediate.
    const TID_STEP: usize = (P::MAX_CPU_IDS as usize).next_power_of_two();

    /// The header of the slab at `base` (slab aligned, `addr_valid`), as
    /// the memory names it: `base` itself, or with `OUT` (the cache's
    /// `Layout::header_outside`) the block the slab's first page names
    /// (`Platform::slab_meta`), null when that word is no header block.
    /// Trusted only once `is_live_at(secret, base)` holds.
    #[inline(always)]
    pub(crate) fn header_at<const OUT: bool>(base: usize) -> *mut SlabHeader {
        Self::header_block::<OUT>(base).unwrap_or(ptr::null_mut())
    }

    /// `header_at`, with None for its null: a caller that branches on it
    /// then tests the word once (a null test after `header_at` cost two
    /// instructions on every free off the CPU slab of a cache with headers
    /// outside: the compiler cannot know that the direct map starts above
    /// 0).
    #[inline(always)]
    pub(crate) fn header_block<const OUT: bool>(base: usize) -> Option<*mut SlabHeader> {
        if !OUT {
            return Some(base as *mut SlabHeader);
        }
        let word = P::slab_meta(base as *const u8);
        if word % align_of::<SlabHeader>() != 0 || !P::meta_addr_valid(word as *const u8) {
            return None;
        }
        Some(word as *mut SlabHeader)
    }

    /// The base of the slab whose header is `slab`, where it decides what
    /// is written or freed: a header in the slab is at its base, and its
    /// `base` word, which an overflow from the page before can reach, is
    /// not trusted for it.
    ///
    /// # Safety
    /// `slab` is a header of this cache's.
    pub(super) unsafe fn base_of(&self, slab: *const SlabHeader) -> usize {
        if self.layout.header_outside {
            // SAFETY: per the caller.
            unsafe { (*slab).base }
        } else {
            slab as usize
        }
    }

    /// `header_at` for this cache's layout, off the fast paths.
    pub(super) fn header_of(&self, base: usize) -> *mut SlabHeader {
        if self.layout.header_outside {
            Self::header_at::<true>(base)
        } else {
            Self::header_at::<false>(base)
        }
    }

    /// Creates a cache in memory from the platform. Null on failure.
    /// `name` is truncated to `NAME_MAX` bytes.
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
        if nr_cpus > P::MAX_CPU_IDS {
            // Not on a real kernel (nr_cpu_ids <= CONFIG_NR_CPUS).
            P::report(format_args!(
                "{} CPU ids, more than the {} rslub was built for; no cache",
                nr_cpus,
                P::MAX_CPU_IDS
            ));
            // SAFETY: allocated above, not used.
            unsafe { P::free_meta(this.cast()) };
            return ptr::null_mut();
        }
        let nr_nodes = (P::nr_node_ids() as usize).min(MAX_NODES);
        let mut layout = layout;
        // The debug paths find headers in the slab only.
        debug_assert!(params.debug == 0 || !layout.header_outside);
        if params.harden {
            layout.fp_key = P::random();
            layout.hardened = true;
        }
        let mut name_buf = [0u8; NAME_MAX];
        let name_len = name.len().min(NAME_MAX);
        name_buf[..name_len].copy_from_slice(&name[..name_len]);
        // INVARIANT: the fields fixed for the cache's life are set here and
        // agree: the secret odd, `mode` from `debug`, `harden` and the
        // layout; the per-CPU and per-node state follows in `init_state`
        // (or the cache is freed unshared).
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
                slab_secret: P::random() | 1,
                gfp_zero: params.gfp_zero,
                gfp_thisnode: params.gfp_thisnode,
                gfp_nomemalloc: params.gfp_nomemalloc,
                cpu_partial: AtomicU32::new(0),
                cpu_partial_slabs: AtomicU32::new(0),
                min_partial: AtomicU32::new(params.min_partial),
                max_empty: AtomicU32::new(params.max_empty),
                #[cfg(rslub_free_batch)]
                free_batch: AtomicU32::new(params.free_batch.min(FREE_BATCH_MAX as u32)),
                errors: AtomicUsize::new(0),
                debug: params.debug,
                mode: match (params.debug != 0, params.harden, layout.header_outside) {
                    (true, _, _) => MODE_DEBUG,
                    (false, true, false) => MODE_HARDENED,
                    (false, false, false) => MODE_PLAIN,
                    (false, true, true) => MODE_OUT_HARDENED,
                    (false, false, true) => MODE_OUT_PLAIN,
                },
                // Readers of a SLAB_TYPESAFE_BY_RCU cache may look at a
                // free object: it keeps its contents.
                poisoned: params.debug & debug::POISON != 0
                    && ctor.is_none()
                    && !params.typesafe_rcu,
                random_freelist: AtomicBool::new(false),
                random_seq: AtomicPtr::new(ptr::null_mut()),
                isolated: AtomicUsize::new(0),
                typesafe_rcu: params.typesafe_rcu,
                rcu_pending: AtomicUsize::new(0),
                page_owner: AtomicPtr::new(ptr::null_mut()),
                fallback: ptr::null_mut(),
                fallback_used: AtomicBool::new(false),
                gfp_light: 0,
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
            let lists = NodeLists {
                partial: SlabList::new(),
                empty: SlabList::new(),
                full: SlabList::new(),
            };
            // SAFETY: `node` is fresh memory; the lock is initialized in
            // place and never moved.
            unsafe {
                ptr::addr_of_mut!((*node).nr_slabs).write(AtomicUsize::new(0));
                ptr::addr_of_mut!((*node).nr_partial).write(AtomicUsize::new(0));
                if !P::node_lock_init(ptr::addr_of_mut!((*node).lists), lists) {
                    P::free_meta(node.cast());
                    return Err(());
                }
            }
            // INVARIANT: node `n` lives until `free_state`.
            self.nodes[n] = node;
        }
        self.pcpu = P::alloc_percpu(size_of::<CpuSlab>(), 16);
        if self.pcpu == 0 {
            return Err(());
        }
        for cpu in 0..nr_cpus {
            if P::cpu_possible(cpu) {
                let c = P::per_cpu_ptr(self.pcpu, cpu).cast::<CpuSlab>();
                // INVARIANT: a CPU's tids are its number modulo
                // `TID_STEP` (which is above every CPU number); its slab,
                // freelist and partial list start empty (zeroed).
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
                    P::node_lock_drop(ptr::addr_of_mut!((*node).lists));
                    P::free_meta(node.cast());
                }
                self.nodes[n] = ptr::null_mut();
            }
        }
    }

    fn owner(&self) -> usize {
        ptr::from_ref(self) as usize
    }

    /// The slab secret, for the host tests.
    #[cfg(test)]
    pub(crate) fn slab_secret(&self) -> usize {
        self.slab_secret
    }

    /// The node's unlocked partial count, for the host tests.
    #[cfg(test)]
    pub(crate) fn node_partial_hint(&self, nid: i32) -> usize {
        self.node(nid).nr_partial.load(Ordering::Relaxed)
    }

    /// Makes this cache serve the kernel cache `owner`: its slabs become
    /// slab pages of `owner` (`Platform::alloc_pages`).
    ///
    /// # Safety
    /// The cache has no slab yet, its slab headers are in the slab (not
    /// `Layout::header_outside`: a served slab's page is the kernel's slab
    /// page, whose fields the outside header's link would share), and
    /// `owner` is a kernel cache that stays live while the cache has slabs.
    pub unsafe fn set_page_owner(&self, owner: *mut c_void) {
        debug_assert!(!self.layout.header_outside);
        // INVARIANT: per the caller, before the first slab, with headers in
        // the slabs, and `owner` outlives them.
        self.page_owner.store(owner, Ordering::Relaxed);
    }

    /// The start of the object of the slab at `base` that `ptr` points
    /// into; None for the header or the tail past the last object.
    pub fn object_start(&self, base: *const u8, ptr: *const u8) -> Option<*mut u8> {
        let l = &self.layout;
        let off = (ptr as usize).checked_sub(base as usize)?;
        // NonZero: no division-by-zero panic path.
        let idx = off.checked_sub(l.first_offset)? / core::num::NonZeroUsize::new(l.stride)?;
        (idx < l.objects).then(|| base.wrapping_add(l.object_offset(idx)).cast_mut())
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

    /// Replaces `slab`'s `[freelist, counters]` pair by what `update` makes
    /// of its current value, with one locked cmpxchg16b; when another CPU
    /// changed the pair in between, counts `cmpxchg_double_fail` and calls
    /// `update` again on the new value. Returns the pair it replaced, or
    /// the `Err` with which `update` gave up. Every change of a published
    /// slab's pair but `slab_free`'s one inline attempt goes through here
    /// (upstream's `slab_update_freelist` loop); `update` may run more than
    /// once, so what it writes outside the pair must be rewritten each
    /// time.
    ///
    /// # Safety
    /// `slab` is a live slab of this cache.
    #[inline(always)]
    unsafe fn update_pair<E>(
        &self,
        slab: *mut SlabHeader,
        mut update: impl FnMut([usize; 2]) -> Result<[usize; 2], E>,
    ) -> Result<[usize; 2], E> {
        loop {
            // SAFETY: per the caller, the slab is live.
            let old = unsafe { (*slab).read_pair() };
            let new = update(old)?;
            // SAFETY: the pair is 16-byte aligned inside the live header.
            if unsafe { P::cmpxchg_pair((*slab).pair_ptr(), old, new) } {
                return Ok(old);
            }
            self.stat(Stat::CmpxchgDoubleFail);
        }
    }

    /// Counts an event: one per-CPU increment, or nothing when the counters
    /// are compiled out (`--cfg rslub_no_stats`, `make STATS=0`).
    #[inline(always)]
    fn stat(&self, s: Stat) {
        #[cfg(not(rslub_no_stats))]
        // Wrapping: a per-CPU offset plus a small constant never wraps, and
        // a checked add would put an overflow panic path on every counter.
        // SAFETY: `pcpu` is the cache's live per-CPU area of `CpuSlab`s
        // (freed only by `destroy`), and the offset is one of its counters.
        unsafe {
            P::this_cpu_inc(self.pcpu.wrapping_add(
                core::mem::offset_of!(CpuSlab, stats) + s as usize * size_of::<usize>(),
            ))
        };
        #[cfg(rslub_no_stats)]
        let _ = s;
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
                // SAFETY: an offline CPU runs nothing, and the cache is
                // no longer registered for the hotplug callback.
                unsafe { cache.flush_dead_cpu(cpu) };
            }
        }
        let live = cache.totals().live_objects;
        if live != 0 {
            cache.errors.fetch_add(1, Ordering::Relaxed);
            cache.report_live_objects();
            // The cache is leaked, but slabs freed before still wait for
            // their grace period, and their callbacks run in the
            // allocator's code, which may be unloaded once we return.
            if cache.typesafe_rcu {
                P::rcu_barrier();
            }
            return Err(live);
        }
        if !cache.fallback.is_null() {
            // SAFETY: the fallback is this cache's alone, unused but
            // through it.
            match unsafe { Self::destroy(cache.fallback) } {
                Ok(()) => cache.fallback = ptr::null_mut(),
                // Its objects' frees still come through this cache: both
                // stay (leaked, like any cache destroyed with objects).
                Err(live) => {
                    cache.errors.fetch_add(1, Ordering::Relaxed);
                    return Err(live);
                }
            }
        }
        cache.shrink();
        // Slabs freed by now may still wait for their grace period; their
        // callbacks read the cache.
        if cache.typesafe_rcu {
            P::rcu_barrier();
        }
        cache.free_state();
        // SAFETY: allocated in `create`; nothing refers to it any more.
        unsafe { P::free_meta(this.cast()) };
        Ok(())
    }
}

mod alloc_slow;
mod bulk;
mod chain;
mod debug_paths;
mod fallback;
mod fastpath;
mod flush;
mod guard;
use guard::{CpuGuard, Discards};
#[cfg(rslub_free_batch)]
mod free_batch;
mod free_slow;
mod partial;
mod report;
pub use report::REPORTS_IN_FULL;
mod tunables;
mod usage;
pub use usage::{Totals, Usage};
mod validate;
