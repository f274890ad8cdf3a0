// SPDX-License-Identifier: GPL-2.0
//! Host tests of invariants and rare paths that mutation testing found the
//! other tests blind to: the tid invariant after every kind of operation, interrupts
//! at every point of the fast and slow paths, CPU hotplug, random freelist
//! order across slabs, clearing counters on every CPU, and the NUMA
//! fallback order of `NUMA_NO_NODE`, and the paths `make mutants` found
//! untested. Each test names the bug it guards against; the mutation
//! runs that found them, and what each test was added for, are in
//! docs/history/reliability-history.md ("Holes in the host tests" and the
//! `make mutants` runs).

use crate::host::{shim, Host};
use crate::platform::Platform;
use crate::slab::SlabHeader;
use crate::slub::CpuSlab;
use crate::stat::Stat;
use crate::test_util::{
    machine, on_cpu, pages, read_tag, tag, OnCpu, Rng, TestCache, CPUS, GFP_KERNEL, GFP_NOWAIT,
};
use std::collections::{HashMap, HashSet};

/// What a test can see of one CPU's pair and slab.
#[derive(Clone, Copy, PartialEq, Debug)]
struct CpuView {
    freelist: usize,
    tid: usize,
    slab: usize,
    partial: usize,
    partial_slabs: u32,
    partial_len: u32,
}

fn cpu_view(c: &TestCache, cpu: u32) -> CpuView {
    let (p, _) = c.cpu_state(cpu);
    // SAFETY: `p` is the cache's live CpuSlab of `cpu`, and the slabs on
    // its partial list are live; no thread is on a CPU while tests look.
    unsafe {
        let p: *const CpuSlab = p;
        let partial = std::ptr::read_volatile(std::ptr::addr_of!((*p).partial));
        let mut partial_len = 0;
        let mut cur = partial;
        while !cur.is_null() && partial_len < 100_000 {
            partial_len += 1;
            cur = (*cur).next;
        }
        CpuView {
            freelist: std::ptr::read_volatile(std::ptr::addr_of!((*p).freelist)) as usize,
            tid: std::ptr::read_volatile(std::ptr::addr_of!((*p).tid)),
            slab: std::ptr::read_volatile(std::ptr::addr_of!((*p).slab)) as usize,
            partial: partial as usize,
            partial_slabs: std::ptr::read_volatile(std::ptr::addr_of!((*p).partial_slabs)),
            partial_len,
        }
    }
}

fn views(c: &TestCache) -> Vec<CpuView> {
    (0..CPUS).map(|cpu| cpu_view(c, cpu)).collect()
}

/// The tid invariant the fast path's safety rests on: the step is a power
/// of two at least the CPU count, and every CPU's tid is its CPU number
/// modulo the step, so no tid read on one CPU can match another's.
/// `before` (if given) are the views before one operation: a CPU whose
/// freelist or slab changed must have a new tid, moved on by whole steps.
/// Also checks that each CPU's partial slab count matches its list.
fn check_tids(c: &TestCache, before: Option<&[CpuView]>, what: &str) -> Vec<CpuView> {
    let (_, step) = c.cpu_state(0);
    assert!(
        step.is_power_of_two() && step >= CPUS as usize,
        "tid step {step} is not a power of two >= {CPUS} CPUs"
    );
    let now = views(c);
    for (cpu, v) in now.iter().enumerate() {
        assert_eq!(
            v.tid % step,
            cpu,
            "after {what}: CPU {cpu}'s tid {} is not its number modulo {step}",
            v.tid
        );
        assert_eq!(
            v.partial_slabs, v.partial_len,
            "after {what}: CPU {cpu}'s partial_slabs does not match its list"
        );
        if let Some(b) = before {
            let b = b[cpu];
            if b.freelist != v.freelist || b.slab != v.slab {
                assert_ne!(
                    b.tid, v.tid,
                    "after {what}: CPU {cpu}'s freelist or slab changed but its tid did not"
                );
            }
            assert_eq!(v.tid.wrapping_sub(b.tid) % step, 0, "after {what}");
        }
    }
    now
}

/// Random operations on every CPU, slow paths, bulk, flushes, shrink,
/// tunables and CPU hotplug included; the tid invariant is checked after
/// each one. Guards against a wrong tid step (`tid_step = 1` lets two CPUs'
/// tids collide) and a path that changes the CPU freelist without a new tid.
#[test]
fn tid_invariant_holds_after_every_operation() {
    let _m = machine();
    let base = pages();
    for (size, seed, harden) in [(64usize, 7u64, true), (700, 8, false), (3000, 9, true)] {
        let c = TestCache::with(size, 13, 2, 1, 0, harden);
        let mut rng = Rng(0x5eed_0000 + seed);
        let mut live: Vec<usize> = Vec::new();
        let mut seen: HashSet<usize> = HashSet::new();
        let mut v = check_tids(&c, None, "create");
        for step in 0..6000 {
            let cpu = rng.below(CPUS as usize) as u32;
            let op = rng.below(14);
            let what = format!("op {op} on CPU {cpu} (step {step}, size {size})");
            match op {
                0..=4 => {
                    let gfp = if op == 4 { GFP_NOWAIT } else { GFP_KERNEL };
                    let node = if op == 3 { (cpu as i32 + 1) % 2 } else { -1 };
                    let o = on_cpu(cpu, || c.alloc(gfp, node));
                    assert!(!o.is_null());
                    assert!(seen.insert(o as usize), "object handed out twice");
                    live.push(o as usize);
                }
                5..=7 if !live.is_empty() => {
                    let o = live.swap_remove(rng.below(live.len()));
                    seen.remove(&o);
                    on_cpu(cpu, || c.free(o as *mut u8));
                }
                8 => {
                    let mut b = vec![std::ptr::null_mut(); rng.below(2 * c.layout.objects) + 1];
                    assert!(on_cpu(cpu, || c.alloc_bulk(GFP_KERNEL, &mut b)));
                    for o in b {
                        assert!(seen.insert(o as usize), "bulk handed out a live object");
                        live.push(o as usize);
                    }
                }
                9 if !live.is_empty() => {
                    let n = rng.below(live.len().min(50)) + 1;
                    let mut b: Vec<*mut u8> = live.drain(..n).map(|o| o as *mut u8).collect();
                    for o in &b {
                        seen.remove(&(*o as usize));
                    }
                    on_cpu(cpu, || c.free_bulk(&mut b));
                }
                10 => c.flush_all(),
                11 if rng.below(4) == 0 => c.shrink(),
                12 => c.set_cpu_partial([0, 13, 60][rng.below(3)]),
                13 if cpu != 0 && rng.below(8) == 0 => {
                    // The CPU goes down (its slabs flushed by the hotplug
                    // callback) and comes back.
                    // SAFETY: no thread is on `cpu`: this test runs alone.
                    unsafe { shim::rslub_host_set_online(cpu, false) };
                    // SAFETY: `cpu` is offline and nothing else flushes it.
                    unsafe { c.flush_dead_cpu(cpu) };
                    // SAFETY: as above.
                    unsafe { shim::rslub_host_set_online(cpu, true) };
                }
                _ => {}
            }
            v = check_tids(&c, Some(&v), &what);
        }
        for o in live {
            on_cpu(0, || c.free(o as *mut u8));
        }
        check_tids(&c, Some(&v), "the final frees");
        c.destroy().unwrap();
    }
    assert_eq!(pages(), base);
}

/// The simulated interrupt: allocates two objects and frees the first, so
/// the CPU freelist head is the same object again while its next pointer
/// changed (the ABA the tid exists for); also frees one object handed to
/// it, so a free runs inside the interrupt too. No asserts here: a panic
/// cannot unwind through the C twin; the test thread checks what it kept.
struct Irq {
    cache: *const crate::slub::Cache<Host>,
    pool: Vec<*mut u8>,
    got: Vec<*mut u8>,
    freed: Vec<*mut u8>,
    nulls: usize,
}

extern "C" fn irq_handler(arg: *mut core::ffi::c_void) {
    // SAFETY: `arg` is the test's `Irq`, alive while the hook is pending.
    let w = unsafe { &mut *arg.cast::<Irq>() };
    // SAFETY: the cache outlives the hook.
    let c = unsafe { &*w.cache };
    let a = c.alloc(GFP_NOWAIT, -1);
    let b = c.alloc(GFP_NOWAIT, -1);
    if a.is_null() || b.is_null() {
        w.nulls += 1;
    }
    if !a.is_null() {
        // SAFETY: just allocated here.
        unsafe { c.free(a) };
    }
    if !b.is_null() {
        w.got.push(b);
    }
    if let Some(p) = w.pool.pop() {
        // SAFETY: the test handed `p` over; it is allocated and unused.
        unsafe { c.free(p) };
        w.freed.push(p);
    }
}

/// Objects handed out and not freed, each with its tag.
struct Live {
    objs: HashMap<usize, u64>,
    next: u64,
    size: usize,
}

impl Live {
    fn add(&mut self, o: *mut u8, what: &str) {
        assert!(!o.is_null(), "{what}: allocation failed");
        assert!(
            self.objs.insert(o as usize, self.next).is_none(),
            "{what}: object {o:p} handed out twice"
        );
        tag(o, self.size, self.next);
        self.next += 1;
    }

    /// An object the interrupt freed: its bytes are the allocator's now.
    fn forget(&mut self, o: *mut u8, what: &str) {
        assert!(
            self.objs.remove(&(o as usize)).is_some(),
            "{what}: {o:p} freed but not live"
        );
    }

    fn take(&mut self, o: *mut u8, what: &str) {
        let t = self.objs.remove(&(o as usize));
        assert!(t.is_some(), "{what}: {o:p} freed but not live");
        assert_eq!(
            read_tag(o, self.size),
            t.unwrap()
                & u64::MAX
                    .checked_shr(64 - 8 * self.size.min(8) as u32)
                    .unwrap_or(0),
            "{what}: object {o:p} changed while live"
        );
    }
}

/// One round of the operations the sweep interrupts, on CPU 0: fast
/// allocations and frees, a slow allocation (the CPU slab runs out), bulk
/// both ways, a remote free, and with `GFP_KERNEL` a page allocation with
/// the CPU lock dropped.
fn script(c: &TestCache, live: &mut Live, irq: &mut Irq, rng: &mut Rng, what: &str) {
    let per = c.layout.objects;
    let mut mine: Vec<*mut u8> = Vec::new();
    let settle = |live: &mut Live, irq: &mut Irq| {
        for o in irq.got.drain(..) {
            live.add(o, &format!("{what}, the interrupt's allocation"));
        }
        for o in irq.freed.drain(..) {
            live.forget(o, &format!("{what}, the interrupt's free"));
        }
    };
    // New slabs every round (the caches keep no empty slab), their pages
    // allocated with the CPU lock dropped (GFP_KERNEL) or held (the first).
    for i in 0..3 * per + 3 {
        let gfp = if i == 0 { GFP_NOWAIT } else { GFP_KERNEL };
        let o = c.alloc(gfp, -1);
        settle(live, irq);
        live.add(o, what);
        mine.push(o);
    }
    for _ in 0..3 {
        let o = mine.swap_remove(rng.below(mine.len()));
        live.take(o, what);
        c.free(o);
        settle(live, irq);
    }
    let mut b = vec![std::ptr::null_mut(); 7];
    assert!(c.alloc_bulk(GFP_KERNEL, &mut b), "{what}: bulk failed");
    settle(live, irq);
    for &o in &b {
        live.add(o, what);
    }
    mine.extend_from_slice(&b);
    let o = c.alloc(GFP_KERNEL, -1);
    settle(live, irq);
    live.add(o, what);
    mine.push(o);
    let n = mine.len() / 2;
    let mut half: Vec<*mut u8> = mine.drain(..n).collect();
    for &o in &half {
        live.take(o, what);
    }
    c.free_bulk(&mut half);
    settle(live, irq);
    for o in mine {
        live.take(o, what);
        c.free(o);
        settle(live, irq);
    }
}

/// Interrupts at every interruptible shim call of the fast and slow paths
/// (the k-th call, for every k until the script ends first): the interrupt
/// reallocates and frees on the same CPU, and no object may ever be handed
/// out twice or change while live. Guards against a fast path that reads
/// the tid again just before its cmpxchg16b (an interrupt between the first
/// read and the re-read then goes unseen), and against slow paths that
/// assume nothing ran while the CPU lock was dropped.
#[test]
fn interrupt_at_every_shim_call_never_hands_out_an_object_twice() {
    let _m = machine();
    let base = pages();
    // 16384: slab headers outside the slabs.
    for (size, harden, cpu_partial) in [
        (64usize, true, 30u32),
        (256, false, 30),
        (512, true, 0),
        (16384, true, 30),
        (16384, false, 0),
    ] {
        let c = TestCache::with(size, cpu_partial, 0, 0, 0, harden);
        let mut live = Live {
            objs: HashMap::new(),
            next: 1,
            size,
        };
        let mut rng = Rng(size as u64 * 31 + 5);
        let mut irq = Irq {
            cache: c.0,
            pool: Vec::new(),
            got: Vec::new(),
            freed: Vec::new(),
            nulls: 0,
        };
        let mut fired = 0;
        let _cpu = OnCpu::enter(0);
        let mut k = 0u32;
        loop {
            let what = format!("size {size} hardened {harden}: interrupt at call {k}");
            // Objects for the interrupt to free: some of this CPU's slab.
            for _ in 0..2 {
                let o = c.alloc(GFP_KERNEL, -1);
                live.add(o, &what);
                irq.pool.push(o);
            }
            // SAFETY: `irq` outlives the hook: it fires during `script`
            // or is cleared below.
            unsafe {
                shim::rslub_host_set_irq_at_call(
                    Some(irq_handler),
                    std::ptr::from_mut(&mut irq).cast(),
                    k,
                )
            };
            script(&c, &mut live, &mut irq, &mut rng, &what);
            // SAFETY: a query of this thread's hook.
            let pending = unsafe { shim::rslub_host_irq_pending() };
            // SAFETY: clears the hook.
            unsafe { shim::rslub_host_set_irq_at_call(None, std::ptr::null_mut(), 0) };
            for o in irq.pool.drain(..).collect::<Vec<_>>() {
                live.take(o, &what);
                c.free(o);
            }
            // Later allocations would return a doubly linked object again.
            let more: Vec<*mut u8> = (0..c.layout.objects + 2)
                .map(|_| c.alloc(GFP_KERNEL, -1))
                .collect();
            for &o in &more {
                live.add(o, &format!("{what}, after"));
            }
            for o in more {
                live.take(o, &what);
                c.free(o);
            }
            // What the interrupt kept goes back now.
            let kept: Vec<usize> = live.objs.keys().copied().collect();
            for o in kept {
                live.take(o as *mut u8, &what);
                c.free(o as *mut u8);
            }
            assert_eq!(irq.nulls, 0, "{what}: allocation failed in the interrupt");
            if pending {
                break;
            }
            fired += 1;
            k += 1;
            assert!(k < 5000, "the script never ends");
        }
        drop(_cpu);
        assert!(fired > 50, "only {fired} interrupt points were swept");
        assert_eq!(c.errors(), 0);
        assert_eq!(c.validate(), 0);
        c.flush_all();
        assert_eq!(c.usage().live_objects, 0);
        c.destroy().unwrap();
    }
    assert_eq!(pages(), base);
}

/// Gives CPU `cpu` a CPU slab with free objects and a CPU partial list
/// (slabs frozen by their first free there), and returns the objects still
/// allocated.
fn load_cpu(c: &TestCache, cpu: u32) -> Vec<*mut u8> {
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(cpu, || {
        (0..3 * per + 3).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    let mut keep = Vec::new();
    on_cpu(cpu, || {
        for (i, &o) in objs.iter().enumerate() {
            if i % 2 == 0 {
                c.free(o);
            } else {
                keep.push(o);
            }
        }
    });
    let v = cpu_view(c, cpu);
    assert!(v.slab != 0 && v.partial != 0, "CPU {cpu} holds no slabs");
    keep
}

/// A CPU that went offline is flushed by the hotplug callback
/// (`flush_dead_cpu`): its CPU slab and CPU partial list go back to the
/// nodes, so the objects on them can be reused and the slabs freed. Guards
/// against `flush_dead_cpu` doing nothing (the KUnit case that covers it is
/// skipped where the kernel refuses to take a CPU down).
#[test]
fn flush_dead_cpu_returns_the_dead_cpus_slabs() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(256, 30, 0, 0);
    let keep = load_cpu(&c, 1);
    let before = c.usage();
    assert!(before.cpu_slabs >= 1 && before.cpu_partial_slabs >= 1);
    // SAFETY: no thread is on CPU 1.
    unsafe { shim::rslub_host_set_online(1, false) };
    // SAFETY: CPU 1 is offline and nothing else flushes it.
    unsafe { c.flush_dead_cpu(1) };
    let v = cpu_view(&c, 1);
    assert_eq!(
        (v.slab, v.partial, v.freelist),
        (0, 0, 0),
        "CPU 1 still holds slabs"
    );
    let u = c.usage();
    assert_eq!(u.cpu_slabs, 0);
    assert_eq!(u.cpu_partial_slabs, 0);
    assert_eq!(u.live_objects, keep.len());
    assert_eq!(
        u.slabs, before.slabs,
        "no slab lost or freed with live objects"
    );
    assert!(u.partial >= 1, "the dead CPU's slabs are on the node lists");
    // The free objects the dead CPU had are handed out again elsewhere.
    let slab_before = c.stat(Stat::AllocSlab);
    let o = on_cpu(3, || c.alloc(GFP_KERNEL, -1));
    assert_eq!(
        c.stat(Stat::AllocSlab),
        slab_before,
        "a new slab instead of the dead CPU's"
    );
    on_cpu(3, || c.free(o));
    for o in keep {
        on_cpu(0, || c.free(o));
    }
    c.shrink();
    assert_eq!(c.usage().slabs, 0);
    assert_eq!(pages(), base, "the dead CPU's slabs were never freed");
    // Back online, the CPU starts clean.
    // SAFETY: as above.
    unsafe { shim::rslub_host_set_online(1, true) };
    on_cpu(1, || {
        let o = c.alloc(GFP_KERNEL, -1);
        assert!(!o.is_null());
        c.free(o);
    });
    check_tids(&c, None, "CPU 1 back online");
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// `destroy` flushes offline CPUs too (a CPU that went down while the
/// cache was out of the hotplug callback's view): nothing runs there, and
/// its slabs must be freed with the cache. Guards against destroy skipping
/// them (their pages leak) and against `flush_dead_cpu` doing nothing.
#[test]
fn destroy_flushes_an_offline_cpu() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(256, 30, 0, 2);
    let keep = load_cpu(&c, 2);
    // SAFETY: no thread is on CPU 2.
    unsafe { shim::rslub_host_set_online(2, false) };
    // Frees from another CPU: the dead CPU's slabs are frozen, so these
    // only push onto the slabs' freelists.
    for o in keep {
        on_cpu(0, || c.free(o));
    }
    assert!(c.usage().cpu_slabs >= 1, "CPU 2 still holds its slab");
    c.destroy().unwrap();
    assert_eq!(pages(), base, "the offline CPU's slabs leaked");
}

/// Random freelist order: every new slab gets its own order (a random
/// rotation of the cache's shuffled sequence, as upstream), not the same
/// one. Guards against a fixed start, which gives every slab one order.
#[test]
fn random_freelist_order_differs_between_slabs() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    assert!(c.set_random_freelist(true));
    let per = c.layout.objects;
    let slabs = 8;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..slabs * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    // Each slab's objects in the order they were handed out (freelist order).
    let mut orders: HashMap<usize, Vec<usize>> = HashMap::new();
    for &o in &objs {
        let s = c.layout.slab_base(o);
        let idx = c.layout.object_index(o as usize - s).unwrap();
        orders.entry(s).or_default().push(idx);
    }
    assert_eq!(orders.len(), slabs, "each slab new and used up in turn");
    for ord in orders.values() {
        let mut sorted = ord.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..per).collect::<Vec<_>>(), "every object once");
        assert!(ord.windows(2).any(|w| w[1] < w[0]), "not shuffled");
    }
    let distinct: HashSet<&Vec<usize>> = orders.values().collect();
    assert!(
        distinct.len() >= slabs / 2,
        "{} slabs share {} freelist orders",
        slabs,
        distinct.len()
    );
    on_cpu(0, || objs.into_iter().for_each(|o| c.free(o)));
    c.destroy().unwrap();
}

/// The shuffled sequence is a uniformly random permutation (Fisher-Yates),
/// not a cyclic one (Sattolo's algorithm, which an off-by-one in the swap
/// range gives): with 63 objects a slab (odd) a rotation is an even
/// permutation, so a slab's order has its sequence's parity, and a cyclic
/// sequence is always even. 24 caches all even by chance: 1 in 2^24.
#[test]
fn random_freelist_sequence_is_not_always_even() {
    let _m = machine();
    let mut odd = 0;
    for _ in 0..24 {
        let c = TestCache::new(64, 30, 5, 2);
        let n = c.layout.objects;
        assert_eq!(n % 2, 1, "the test needs an odd number of objects per slab");
        assert!(c.set_random_freelist(true));
        let objs: Vec<*mut u8> = on_cpu(0, || (0..n).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
        let perm: Vec<usize> = objs
            .iter()
            .map(|&o| {
                let s = c.layout.slab_base(o);
                c.layout.object_index(o as usize - s).unwrap()
            })
            .collect();
        let mut seen = vec![false; n];
        let mut cycles = 0;
        for i in 0..n {
            if !seen[i] {
                cycles += 1;
                let mut j = i;
                while !seen[j] {
                    seen[j] = true;
                    j = perm[j];
                }
            }
        }
        assert!(seen.iter().all(|&x| x), "not a permutation");
        odd += (n - cycles) % 2;
        on_cpu(0, || objs.into_iter().for_each(|o| c.free(o)));
        c.destroy().unwrap();
    }
    assert!(odd > 0, "24 random sequences, none odd: not Fisher-Yates");
}

/// A cache with a constructor hands out objects in their constructed
/// state, also after a free (nothing zeroes them unless `__GFP_ZERO` asks),
/// and `__GFP_ZERO` on a failed allocation returns NULL, nothing written.
#[test]
fn only_gfp_zero_zeroes_and_never_a_failed_allocation() {
    let _m = machine();
    unsafe extern "C" fn ctor(p: *mut core::ffi::c_void) {
        // SAFETY: the core passes an object of at least 64 bytes.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0x5a, 64) };
    }
    let layout = crate::layout::Layout::new(&crate::layout::LayoutRequest {
        has_ctor: true,
        ..crate::layout::LayoutRequest::plain(64, 0, 4096, crate::slab::HEADER_SIZE)
    })
    .unwrap();
    let params = crate::slub::Params {
        cpu_partial: 30,
        min_partial: 5,
        max_empty: 0,
        #[cfg(rslub_free_batch)]
        free_batch: 0,
        gfp_zero: crate::test_util::GFP_ZERO,
        gfp_thisnode: crate::test_util::GFP_THISNODE,
        gfp_nomemalloc: crate::test_util::GFP_NOMEMALLOC,
        debug: 0,
        harden: true,
        random_freelist: false,
        typesafe_rcu: false,
    };
    let c = TestCache(crate::slub::Cache::<Host>::create(
        b"ctor",
        0,
        layout,
        Some(ctor),
        params,
    ));
    assert!(!c.0.is_null());
    assert!(c.ctor().is_some());
    on_cpu(0, || {
        let constructed = |o: *mut u8| {
            // SAFETY: an allocated 64-byte object.
            unsafe { std::slice::from_raw_parts(o, 64) }
                .iter()
                .all(|&b| b == 0x5a)
        };
        for gfp in [GFP_KERNEL, GFP_NOWAIT] {
            let a = c.alloc(gfp, -1);
            assert!(
                constructed(a),
                "a new object is not in its constructed state"
            );
            c.free(a);
            let b = c.alloc(gfp, -1);
            assert_eq!(a, b);
            assert!(constructed(b), "a reused object was changed");
            c.free(b);
        }
        // Bulk likewise: constructed without __GFP_ZERO, zero with it.
        let mut v = [std::ptr::null_mut(); 20];
        assert!(c.alloc_bulk(GFP_KERNEL, &mut v));
        assert!(v.iter().all(|&o| constructed(o)), "bulk objects changed");
        c.free_bulk(&mut v);
        assert!(c.alloc_bulk(GFP_KERNEL | crate::test_util::GFP_ZERO, &mut v));
        for &o in &v {
            // SAFETY: as above.
            assert!(unsafe { std::slice::from_raw_parts(o, 64) }
                .iter()
                .all(|&b| b == 0));
            // SAFETY: back to the constructed state before freeing.
            unsafe { ctor(o.cast()) };
        }
        c.free_bulk(&mut v);
        let z = c.alloc(GFP_KERNEL | crate::test_util::GFP_ZERO, -1);
        // SAFETY: as above.
        assert!(unsafe { std::slice::from_raw_parts(z, 64) }
            .iter()
            .all(|&b| b == 0));
        // SAFETY: put the object back in its constructed state before freeing.
        unsafe { ctor(z.cast()) };
        c.free(z);
    });
    c.destroy().unwrap();
    let c = TestCache::new(64, 30, 5, 0);
    on_cpu(0, || {
        // SAFETY: setter.
        unsafe { shim::rslub_host_fail_pages(1) };
        assert!(c
            .alloc(GFP_KERNEL | crate::test_util::GFP_ZERO, -1)
            .is_null());
        // SAFETY: setter.
        unsafe { shim::rslub_host_fail_pages(0) };
    });
    c.destroy().unwrap();
}

/// `stat_clear` clears the counter on every CPU, and only that counter.
/// Guards against clearing the current (or first) CPU's share only.
#[test]
fn stat_clear_clears_every_cpu() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    for cpu in 0..CPUS {
        on_cpu(cpu, || {
            let v: Vec<*mut u8> = (0..4).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
            v.into_iter().for_each(|o| c.free(o));
        });
    }
    let mut per_cpu = [0usize; CPUS as usize];
    for s in [Stat::AllocFastpath, Stat::FreeFastpath] {
        c.stat_total(s, &mut per_cpu);
        assert!(
            per_cpu.iter().all(|&n| n > 0),
            "{s:?} not counted on every CPU"
        );
    }
    let slow = c.stat(Stat::AllocSlowpath);
    // Clear from each CPU in turn, and from none.
    for (i, s) in [Stat::AllocFastpath, Stat::FreeFastpath]
        .into_iter()
        .enumerate()
    {
        if i == 0 {
            c.stat_clear(s);
        } else {
            on_cpu(3, || c.stat_clear(s));
        }
        per_cpu = [usize::MAX; CPUS as usize];
        assert_eq!(
            c.stat_total(s, &mut per_cpu),
            0,
            "{s:?} left on {per_cpu:?}"
        );
        assert_eq!(per_cpu, [0; CPUS as usize]);
    }
    assert_eq!(
        c.stat(Stat::AllocSlowpath),
        slow,
        "another counter was cleared"
    );
    c.destroy().unwrap();
}

/// The node of `o`'s slab.
fn node_of(c: &TestCache, o: *mut u8) -> i32 {
    Host::page_node(c.layout.slab_base(o) as *const u8)
}

/// Makes at least `n` node partial slabs on the node of CPU `cpu` (`n`
/// slabs' worth of objects, then one object of each slab freed from
/// another CPU of the same node, with `cpu_partial` 0 so they are listed
/// on the node). Returns the objects still allocated.
fn node_partials(c: &TestCache, cpu: u32, n: usize) -> Vec<*mut u8> {
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(cpu, || {
        (0..n * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    let mut keep = Vec::new();
    let mut slabs = HashSet::new();
    for &o in &objs {
        if slabs.insert(SlabHeader::of(o, &c.layout)) {
            on_cpu((cpu + 2) % CPUS, || c.free(o));
        } else {
            keep.push(o);
        }
    }
    keep
}

/// `NUMA_NO_NODE` allocations look at the local node's partial slabs
/// first, then the other nodes' by distance, and only then allocate pages;
/// empty cached slabs likewise; a node given explicitly is not left. On two
/// nodes (CPU n on node n % 2). Guards against the fallback being skipped
/// or used for explicit nodes, and against a non-local first choice.
#[test]
fn numa_no_node_falls_back_to_the_other_node_before_new_pages() {
    let _m = machine();
    let base = pages();
    for debug in [0, crate::debug::CONSISTENCY] {
        let c = TestCache::with(256, 0, 5, 0, debug, true);
        // Node 1 only: CPU 0 (node 0) takes from it, not new pages.
        let mut keep = node_partials(&c, 1, 2);
        let slabs = c.stat(Stat::AllocSlab);
        let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
        assert_eq!(
            c.stat(Stat::AllocSlab),
            slabs,
            "debug {debug}: new pages before node 1's partial slabs"
        );
        assert_eq!(node_of(&c, o), 1);
        keep.push(o);
        // Node 0 explicitly: no fallback to node 1.
        let o = on_cpu(0, || c.alloc(GFP_KERNEL, 0));
        assert_eq!(node_of(&c, o), 0, "debug {debug}: explicit node 0");
        assert_eq!(c.stat(Stat::AllocSlab), slabs + 1);
        keep.push(o);
        c.flush_all();
        // Both nodes have partial slabs: each CPU takes its own node's.
        keep.extend(node_partials(&c, 0, 2));
        keep.extend(node_partials(&c, 1, 2));
        let slabs = c.stat(Stat::AllocSlab);
        for cpu in 0..CPUS {
            let o = on_cpu(cpu, || c.alloc(GFP_KERNEL, -1));
            assert_eq!(
                node_of(&c, o),
                (cpu % 2) as i32,
                "debug {debug}: CPU {cpu} not local first"
            );
            keep.push(o);
            c.flush_all();
        }
        assert_eq!(c.stat(Stat::AllocSlab), slabs);
        for o in keep {
            on_cpu(0, || c.free(o));
        }
        c.destroy().unwrap();
    }
    // Empty cached slabs: node 1 has one, node 0 none.
    let c = TestCache::new(256, 0, 0, 2);
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(1, || (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    c.flush_all();
    on_cpu(3, || objs.into_iter().for_each(|o| c.free(o)));
    assert_eq!(c.usage().empty_slabs, 1);
    let slabs = c.stat(Stat::AllocSlab);
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert_eq!(
        c.stat(Stat::EmptyCacheHit),
        1,
        "node 1's empty slab not reused"
    );
    assert_eq!(c.stat(Stat::AllocSlab), slabs);
    assert_eq!(node_of(&c, o), 1);
    on_cpu(0, || c.free(o));
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// A test that panics while on a simulated CPU releases it: the next user
/// of that CPU gets it at once, and no recovery was needed. And a thread
/// that ends while holding a CPU (no unwinding) does not block it for
/// ever: the twin hands the CPU on and counts the recovery.
#[test]
fn a_panic_on_a_cpu_releases_it() {
    let _m = machine();
    // SAFETY: a counter read.
    let recovered = unsafe { shim::rslub_host_cpus_recovered() };
    let t = std::thread::spawn(|| on_cpu(2, || panic!("deliberate panic on CPU 2")));
    assert!(t.join().is_err());
    let t0 = std::time::Instant::now();
    on_cpu(2, || {});
    assert!(t0.elapsed().as_secs() < 2);
    // SAFETY: as above.
    assert_eq!(unsafe { shim::rslub_host_cpus_recovered() }, recovered);
    // SAFETY: the thread leaves CPU 3 held on purpose.
    std::thread::spawn(|| unsafe { shim::rslub_host_enter(3) })
        .join()
        .unwrap();
    on_cpu(3, || {});
    // SAFETY: as above.
    assert_eq!(unsafe { shim::rslub_host_cpus_recovered() }, recovered + 1);
}

/// Run with `cargo test -- --ignored`: fails on purpose while on a CPU
/// and holding a cache, to show a failing test ends the run in seconds and
/// the tests after it still pass (a check of the test harness).
#[test]
#[ignore]
fn deliberately_failing_test() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    on_cpu(0, || {
        let o = c.alloc(GFP_KERNEL, -1);
        assert!(o.is_null(), "deliberate failure on CPU 0");
    });
}

/// An allocation for an explicit node uses the CPU slab only when the slab
/// is on that node (fast path), else leaves it for one on the node
/// (`alloc_node_mismatch`); `NUMA_NO_NODE` takes whatever the CPU has.
/// Guards `node_match`, which make mutants found untested.
#[test]
fn explicit_node_uses_the_cpu_slab_only_on_its_node() {
    let _m = machine();
    let c = TestCache::new(256, 30, 5, 2);
    let mut objs = Vec::new();
    on_cpu(1, || {
        let mut alloc = |node: i32, fast: bool, want: i32, what: &str| {
            let (f, m) = (c.stat(Stat::AllocFastpath), c.stat(Stat::AllocNodeMismatch));
            let o = c.alloc(GFP_KERNEL, node);
            assert!(!o.is_null());
            assert_eq!(node_of(&c, o), want, "{what}: wrong node");
            assert_eq!(
                c.stat(Stat::AllocFastpath) - f,
                usize::from(fast),
                "{what}: fast path"
            );
            assert_eq!(
                c.stat(Stat::AllocNodeMismatch) - m,
                usize::from(!fast && node >= 0),
                "{what}: node mismatch"
            );
            objs.push(o);
        };
        alloc(-1, false, 1, "first allocation on CPU 1");
        alloc(1, true, 1, "node 1, the CPU slab's node");
        alloc(-1, true, 1, "any node");
        alloc(0, false, 0, "node 0, not the CPU slab's node");
        alloc(0, true, 0, "node 0 again");
        alloc(-1, true, 0, "any node, CPU slab now on node 0");
        alloc(1, false, 1, "node 1 again");
    });
    on_cpu(1, || objs.into_iter().for_each(|o| c.free(o)));
    c.destroy().unwrap();
}

/// New slabs get their pages with the caller's gfp flags minus
/// `__GFP_ZERO` (objects are zeroed one by one, the pages need not be),
/// `__GFP_THISNODE` kept, and never from the emergency reserves
/// (`__GFP_NOMEMALLOC`: SLUB hands a pfmemalloc slab's objects only to
/// requests allowed the reserves; rslub does not track them).
#[test]
fn new_slabs_get_the_callers_gfp_without_zero() {
    let _m = machine();
    let zero = crate::test_util::GFP_ZERO;
    let thisnode = crate::test_util::GFP_THISNODE;
    for (gfp, node) in [
        (GFP_KERNEL, -1),
        (GFP_KERNEL | zero, -1),
        (GFP_NOWAIT | zero, -1),
        (GFP_KERNEL | thisnode | zero, 1),
    ] {
        let c = TestCache::new(64, 30, 5, 2);
        let o = on_cpu(0, || c.alloc(gfp, node));
        assert!(!o.is_null());
        // SAFETY: a query.
        let got = unsafe { shim::rslub_host_last_page_gfp() };
        let nomemalloc = crate::test_util::GFP_NOMEMALLOC;
        assert_eq!(
            got,
            (gfp & !zero) | nomemalloc,
            "allocation with gfp {gfp:#x}"
        );
        on_cpu(0, || c.free(o));
        c.destroy().unwrap();
    }
}

/// Random order turned off again: new slabs are threaded in address order
/// once more, although the shuffled sequence stays allocated.
#[test]
fn random_freelist_off_again_gives_address_order() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 0);
    let n = c.layout.objects;
    assert!(c.set_random_freelist(true));
    assert!(c.set_random_freelist(false));
    assert!(!c.random_freelist());
    let objs: Vec<*mut u8> = on_cpu(0, || (0..n).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    assert!(objs.windows(2).all(|w| w[0] < w[1]), "shuffled while off");
    on_cpu(0, || objs.into_iter().for_each(|o| c.free(o)));
    c.destroy().unwrap();
}

/// Deactivating a CPU slab puts it where its state says: full on no list,
/// with objects the CPU did not use at the list's tail, with only objects
/// freed remotely at its head, and counts remote frees it found.
#[test]
fn deactivate_lists_a_slab_by_its_state() {
    let _m = machine();
    let c = TestCache::new(256, 0, 5, 0);
    let per = c.layout.objects;
    let delta = |s: Stat, f: &dyn Fn()| {
        let b = c.stat(s);
        f();
        c.stat(s) - b
    };
    // A full CPU slab: no list.
    let full: Vec<*mut u8> = on_cpu(0, || (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    assert_eq!(delta(Stat::DeactivateFull, &|| c.flush_all()), 1);
    assert_eq!(c.usage().partial, 0);
    // Used up on CPU 1 (no partial slab anywhere: a new one), one object
    // freed from CPU 3 while frozen: listed at the head, a remote free
    // counted.
    let rest: Vec<*mut u8> = on_cpu(1, || {
        (0..per - 1).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    on_cpu(1, || {
        let o = c.alloc(GFP_KERNEL, -1);
        on_cpu_nested_free(&c, 3, o);
    });
    let (to_head, remote) = (
        c.stat(Stat::DeactivateToHead),
        c.stat(Stat::DeactivateRemoteFrees),
    );
    c.flush_all();
    assert_eq!(c.stat(Stat::DeactivateToHead) - to_head, 1);
    assert_eq!(c.stat(Stat::DeactivateRemoteFrees) - remote, 1);
    // Free objects left on the CPU freelist (a new slab: node 0 has no
    // partial one): listed at the tail.
    let one = on_cpu(0, || c.alloc(GFP_KERNEL, 0));
    assert_eq!(delta(Stat::DeactivateToTail, &|| c.flush_all()), 1);
    assert_eq!(c.usage().partial, 2);
    for o in full.into_iter().chain(rest).chain([one]) {
        on_cpu(1, || c.free(o));
    }
    c.destroy().unwrap();
}

/// Frees `o` from CPU `cpu` while the calling thread is on another CPU (a
/// helper thread stands in for the other CPU's task).
fn on_cpu_nested_free(c: &TestCache, cpu: u32, o: *mut u8) {
    let (c, o) = (c.0 as usize, o as usize);
    std::thread::spawn(move || {
        // SAFETY: the cache outlives the thread (joined below).
        let c = unsafe { &*(c as *const crate::slub::Cache<Host>) };
        // SAFETY: the object is the test's and unused.
        on_cpu(cpu, || unsafe { c.free(o as *mut u8) })
    })
    .join()
    .unwrap();
}

/// A free to a slab that is not this CPU's (`slab_free`): freeing the
/// object at the head of the slab's freelist again is reported and
/// ignored; other frees are not reports.
#[test]
fn remote_double_free_at_the_slab_head_is_reported() {
    let _m = machine();
    for cpu_partial in [30, 0] {
        let c = TestCache::new(64, cpu_partial, 5, 2);
        let objs: Vec<*mut u8> = on_cpu(0, || (0..6).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
        let r0 = crate::test_util::reports();
        on_cpu(1, || {
            c.free(objs[0]);
            c.free(objs[1]);
            assert_eq!(
                c.errors(),
                0,
                "cpu_partial {cpu_partial}: a good free was reported"
            );
            c.free(objs[1]);
            assert_eq!(
                c.errors(),
                1,
                "cpu_partial {cpu_partial}: double free not reported"
            );
        });
        assert_eq!(crate::test_util::reports() - r0, 1);
        on_cpu(0, || {
            let set: HashSet<usize> = (0..8).map(|_| c.alloc(GFP_KERNEL, -1) as usize).collect();
            assert_eq!(
                set.len(),
                8,
                "an object handed out twice after a double free"
            );
            set.into_iter().for_each(|o| c.free(o as *mut u8));
            objs[2..].iter().for_each(|&o| c.free(o));
        });
        c.destroy().unwrap();
    }
}

/// Bulk allocation in a debug cache goes through the checked path: every
/// object is tracked and red-zoned like a single allocation, so freeing
/// and validating find nothing wrong.
#[test]
fn debug_cache_bulk_objects_are_checked_like_single_ones() {
    let _m = machine();
    let c = TestCache::with(100, 30, 5, 2, crate::debug::ALL, true);
    on_cpu(0, || {
        let mut v = [std::ptr::null_mut(); 40];
        assert!(c.alloc_bulk(GFP_KERNEL, &mut v));
        for &o in &v {
            // SAFETY: an allocated object of a cache with owner records.
            let t = unsafe { crate::debug::get_track(o, &c.layout, false) };
            assert!(t.is_some(), "bulk object without an owner record");
        }
        assert_eq!(c.validate(), 0);
        c.free_bulk(&mut v);
    });
    assert_eq!(c.errors(), 0);
    assert_eq!(c.validate(), 0);
    assert_eq!(c.usage().cpu_slabs, 0, "a debug cache has no CPU slab");
    c.destroy().unwrap();
}

fn meta() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_meta_in_use() as i64 }
}

/// A destroyed cache gives back every bookkeeping block: the cache, its
/// nodes, its per-CPU area and the shuffled sequence.
#[test]
fn destroy_frees_every_bookkeeping_block() {
    let _m = machine();
    let base = meta();
    for (debug, harden, random) in [
        (0, true, false),
        (0, false, true),
        (crate::debug::ALL, true, false),
        (0, true, true),
    ] {
        let c = TestCache::with(128, 30, 5, 2, debug, harden);
        assert!(meta() > base);
        if random {
            assert!(c.set_random_freelist(true));
            assert!(c.set_random_freelist(false));
            assert!(c.set_random_freelist(true));
        }
        on_cpu(1, || {
            let o = c.alloc(GFP_KERNEL, -1);
            c.free(o);
        });
        c.destroy().unwrap();
        assert_eq!(
            meta(),
            base,
            "debug {debug} harden {harden} random {random}: leaked"
        );
    }
}

/// The tunables read back what was set and take effect: `min_partial`
/// keeps empty partial slabs, `max_empty` trims the empty-slab caches at
/// once, `cpu_partial` reads back in objects; and the cache's identity
/// (name, debug flags, random order) reads back as created.
#[test]
fn tunables_read_back_and_take_effect() {
    let _m = machine();
    let c = TestCache::with(512, 30, 0, 8, 0, true);
    assert_eq!(c.name(), b"test");
    assert_eq!(c.name_str(), "test");
    assert_eq!(c.debug_flags(), 0);
    assert!(!c.random_freelist());
    assert!(c.set_random_freelist(true));
    assert!(c.random_freelist());
    c.set_cpu_partial(0);
    assert_eq!(c.cpu_partial(), 0);
    c.set_min_partial(3);
    assert_eq!(c.min_partial(), 3);
    assert_eq!(c.max_empty(), 8);
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..8 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    on_cpu(2, || objs.into_iter().for_each(|o| c.free(o)));
    let u = c.usage();
    assert_eq!(
        u.partial, 3,
        "min_partial set to 3 keeps 3 empty partial slabs"
    );
    assert_eq!(u.empty_slabs, 5);
    c.set_max_empty(1);
    assert_eq!(c.max_empty(), 1);
    assert_eq!(c.usage().empty_slabs, 1, "lowering max_empty trims at once");
    c.set_cpu_partial(40);
    assert_eq!(c.cpu_partial(), 40);
    c.destroy().unwrap();
    let d = TestCache::with(
        64,
        30,
        5,
        2,
        crate::debug::RED_ZONE | crate::debug::POISON,
        true,
    );
    assert_eq!(
        d.debug_flags(),
        crate::debug::RED_ZONE | crate::debug::POISON
    );
    d.destroy().unwrap();
}

/// A corrupt free pointer read from an object is reported with the object
/// it came from and a dump of the bytes around it.
#[test]
fn corrupt_free_pointer_report_shows_the_object() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    on_cpu(0, || {
        let a = c.alloc(GFP_KERNEL, -1);
        let keep = c.alloc(GFP_KERNEL, -1);
        c.free(a);
        // SAFETY: a is free and ours to corrupt on purpose (its free pointer).
        unsafe {
            let slot = a.add(c.layout.free_offset).cast::<usize>();
            slot.write_volatile(slot.read_volatile() ^ 0xff);
        }
        let r0 = crate::test_util::reports();
        let o = c.alloc(GFP_KERNEL, -1);
        assert_ne!(o, a);
        // The line, "read from free object", two dump lines, "isolated".
        assert!(
            crate::test_util::reports() - r0 >= 5,
            "{} report lines",
            crate::test_util::reports() - r0
        );
        c.free(o);
        c.free(keep);
    });
    c.destroy().unwrap();
}

/// `usage()` used to follow a CPU partial list only as far as the current
/// `cpu_partial` allows; after the tunable is lowered a CPU may still hold
/// a longer list (seen: 3 CPU partial slabs reported as 2, 24 live objects
/// as 32; found through the `limit + 1` mutant in `usage`). The walk is now
/// bounded by the cache's slab count.
#[test]
fn usage_counts_a_cpu_partial_list_longer_than_the_new_limit() {
    let _m = machine();
    let c = TestCache::new(256, 200, 5, 2);
    let keep = load_cpu(&c, 1);
    let before = c.usage();
    assert_eq!(before.live_objects, keep.len());
    c.set_cpu_partial(0);
    let after = c.usage();
    assert_eq!(after.cpu_partial_slabs, before.cpu_partial_slabs);
    assert_eq!(after.live_objects, keep.len());
    on_cpu(1, || keep.into_iter().for_each(|o| c.free(o)));
    c.destroy().unwrap();
}

/// Debug caches: an empty cached slab is reused before new pages, and an
/// emptied slab is freed only when its node keeps `min_partial` others (the
/// first slab emptied stays, the second goes).
#[test]
fn debug_cache_reuses_and_frees_empty_slabs_by_the_rules() {
    let _m = machine();
    let base = pages();
    let c = TestCache::with(256, 0, 0, 1, crate::debug::CONSISTENCY, true);
    let per = c.layout.objects;
    on_cpu(0, || {
        let v: Vec<*mut u8> = (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        v.into_iter().for_each(|o| c.free(o));
        assert_eq!(c.usage().empty_slabs, 1);
        let slabs = c.stat(Stat::AllocSlab);
        let o = c.alloc(GFP_KERNEL, -1);
        assert_eq!(
            c.stat(Stat::EmptyCacheHit),
            1,
            "the empty slab was not reused"
        );
        assert_eq!(c.stat(Stat::AllocSlab), slabs);
        c.free(o);
    });
    c.destroy().unwrap();
    let c = TestCache::with(256, 0, 1, 0, crate::debug::CONSISTENCY, true);
    on_cpu(0, || {
        let a: Vec<*mut u8> = (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        let b: Vec<*mut u8> = (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        let slab_a = SlabHeader::of(a[0], &c.layout);
        assert_ne!(slab_a, SlabHeader::of(b[0], &c.layout));
        a.into_iter().for_each(|o| c.free(o));
        assert_eq!(c.usage().slabs, 2, "the only partial slab was freed");
        b.into_iter().for_each(|o| c.free(o));
        let u = c.usage();
        assert_eq!((u.slabs, u.partial), (1, 1));
        let o = c.alloc(GFP_KERNEL, -1);
        assert_eq!(
            SlabHeader::of(o, &c.layout),
            slab_a,
            "the wrong slab was kept"
        );
        c.free(o);
    });
    assert_eq!(c.errors(), 0);
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// With owner records, a double free is reported with the owners, and a
/// destroy with live objects lists them: up to 16, each with its owner.
#[test]
fn owner_reports_list_the_objects_and_their_owners() {
    let _m = machine();
    let reports = crate::test_util::reports;
    for (flags, live) in [
        (crate::debug::ALL, 20usize),
        (crate::debug::STORE_USER, 3),
        (crate::debug::STORE_USER | crate::debug::CONSISTENCY, 20),
    ] {
        let c = TestCache::with(64, 30, 5, 2, flags, true);
        on_cpu(0, || {
            let p = c.alloc(GFP_KERNEL, -1);
            let q = c.alloc(GFP_KERNEL, -1);
            c.free(p);
            let r0 = reports();
            c.free(p);
            // The double free, last allocated by, last freed by.
            assert_eq!(reports() - r0, 3, "flags {flags}: double free report");
            c.free(q);
        });
        let _objs: Vec<*mut u8> =
            on_cpu(1, || (0..live).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
        let r0 = reports();
        // SAFETY: a failed destroy leaks the cache; nothing uses it after.
        assert_eq!(unsafe { crate::slub::Cache::destroy(c.0) }, Err(live));
        // The header, then each shown object and its allocation record,
        // and a free record for the two reused objects (p and q, shown
        // first).
        let shown = live.min(16) as i64;
        assert_eq!(
            reports() - r0,
            1 + 2 * shown + 2,
            "flags {flags}: live objects listed"
        );
    }
}

/// `n` slabs of `c` filled on CPU `cpu` and flushed (full, on no list):
/// the objects of each.
fn full_slabs(c: &TestCache, cpu: u32, n: usize) -> Vec<Vec<*mut u8>> {
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(cpu, || {
        (0..n * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    let mut slabs: Vec<(*mut SlabHeader, Vec<*mut u8>)> = Vec::new();
    for o in objs {
        let s = SlabHeader::of(o, &c.layout);
        match slabs.iter_mut().find(|(h, _)| *h == s) {
            Some((_, v)) => v.push(o),
            None => slabs.push((s, vec![o])),
        }
    }
    assert_eq!(slabs.len(), n);
    slabs.into_iter().map(|(_, v)| v).collect()
}

/// A CPU's partial list drains when it holds its bound (upstream's `>=`),
/// not one slab later: with room for 4 slabs, the first frees of 4 full
/// slabs freeze them onto the list and the 5th drains it first. Asserted at
/// every step (an off-by-one shows only in the counters and list lengths).
#[test]
fn cpu_partial_list_drains_at_its_bound_not_past_it() {
    let _m = machine();
    let c = TestCache::new(256, 0, 5, 0);
    let per = c.layout.objects as u32;
    // cpu_partial objects -> slabs as upstream: ceil(2 * objects / per).
    c.set_cpu_partial(2 * per);
    let bound = 4;
    let slabs = full_slabs(&c, 0, bound + 1);
    for (i, objs) in slabs.iter().enumerate() {
        on_cpu(2, || c.free(objs[0]));
        let k = i + 1;
        let (drains, len) = if k <= bound { (0, k) } else { (1, 1) };
        assert_eq!(
            c.stat(Stat::CpuPartialDrain),
            drains,
            "after the first free of {k} full slabs (bound {bound})"
        );
        assert_eq!(cpu_view(&c, 2).partial_slabs as usize, len, "after {k}");
    }
    for objs in &slabs {
        for &o in &objs[1..] {
            on_cpu(0, || c.free(o));
        }
    }
    c.destroy().unwrap();
}

/// An emptied slab goes to the node's empty cache only while the node's
/// partial list is under `min_partial + max_empty` slabs: one slab short of
/// it the slab is cached, at it the slab is freed.
#[test]
fn empty_slab_is_cached_only_under_min_partial_plus_max_empty() {
    let _m = machine();
    let (min, max) = (2u32, 2u32);
    let limit = (min + max) as usize;
    for (partials, cached) in [(limit - 1, 1), (limit, 0)] {
        let c = TestCache::new(256, 0, min, max);
        let slabs = full_slabs(&c, 0, partials + 1);
        // `partials` node partial slabs: one object freed from each.
        for objs in &slabs[..partials] {
            on_cpu(2, || c.free(objs[0]));
        }
        assert_eq!(c.usage().partial, partials);
        // The last slab emptied.
        for &o in &slabs[partials] {
            on_cpu(2, || c.free(o));
        }
        assert_eq!(
            c.stat(Stat::EmptyCacheAdd),
            cached,
            "{partials} partial slabs beside it (min_partial {min} + max_empty {max})"
        );
        assert_eq!(c.usage().empty_slabs, cached);
        assert_eq!(c.usage().partial, partials);
        for objs in &slabs[..partials] {
            for &o in &objs[1..] {
                on_cpu(0, || c.free(o));
            }
        }
        c.destroy().unwrap();
    }
}

/// A plain (unhardened) cache's allocations take the plain fast path: a
/// slab's worth is one slow path (the first, which installs the slab) and
/// the rest fast, as in a hardened cache. Sent down the hardened path by
/// mistake, each plain next pointer would decode as garbage, be refused,
/// and send the allocation to the slow path, which quietly serves it: only
/// the counters show it.
#[test]
fn plain_and_hardened_allocations_stay_on_their_fast_paths() {
    let _m = machine();
    for harden in [false, true] {
        let c = TestCache::with(256, 0, 5, 0, 0, harden);
        let per = c.layout.objects;
        let objs: Vec<*mut u8> = on_cpu(0, || (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
        assert_eq!(c.stat(Stat::AllocSlowpath), 1, "harden {harden}");
        assert_eq!(c.stat(Stat::AllocFastpath), per - 1, "harden {harden}");
        for o in objs {
            on_cpu(0, || c.free(o));
        }
        c.destroy().unwrap();
    }
}

/// A bulk free looks for more objects of a slab until it meets
/// `LOOKAHEAD` (3) objects of other slabs in a row, and a hit starts the
/// count again: gaps of 2 between the objects of a slab make one chain
/// (one slab update) per slab however many gaps there are, a gap of 3 ends
/// the chain. Counted in `FreeSlowpath`, one per chain a remote CPU frees.
#[test]
fn bulk_free_lookahead_counts_misses_in_a_row() {
    let _m = machine();
    // (pattern of slabs A = 0 and B = 1 in the batch, chains expected)
    for (pattern, chains) in [
        (&[0, 1, 1, 0, 1, 1, 0][..], 2),
        (&[0, 1, 1, 0, 1, 1, 0, 1, 1, 0][..], 2),
        (&[0, 1, 1, 1, 0][..], 3),
        (&[0, 1, 1, 1, 0, 1, 1, 0][..], 3),
    ] {
        let c = TestCache::new(256, 30, 5, 0);
        let slabs = full_slabs(&c, 0, 3);
        let mut next = [0usize; 2];
        let mut batch: Vec<*mut u8> = pattern
            .iter()
            .map(|&s| {
                next[s] += 1;
                slabs[s][next[s] - 1]
            })
            .collect();
        let before = c.stat(Stat::FreeSlowpath);
        on_cpu(1, || c.free_bulk(&mut batch));
        assert_eq!(
            c.stat(Stat::FreeSlowpath) - before,
            chains,
            "batch of slabs {pattern:?}"
        );
        let freed: usize = next.iter().sum();
        for (s, objs) in slabs.iter().enumerate() {
            let done = if s < 2 { next[s] } else { 0 };
            on_cpu(0, || objs[done..].iter().for_each(|&o| c.free(o)));
        }
        assert!(freed == pattern.len());
        c.destroy().unwrap();
    }
}

/// The `free_batch` variant returns a CPU's batch when it holds
/// `free_batch` objects, not one later: after each free of a batch of 8,
/// the flush count and the batched objects, through the second batch.
#[cfg(rslub_free_batch)]
#[test]
fn a_free_batch_is_returned_when_it_holds_its_limit() {
    let _m = machine();
    let c = TestCache::new(64, 13, 2, 2);
    let limit = 8;
    c.set_free_batch(limit as u32);
    let slabs = full_slabs(&c, 0, 1);
    for (i, &o) in slabs[0].iter().take(2 * limit + 1).enumerate() {
        on_cpu(1, || c.free(o));
        let k = i + 1;
        assert_eq!(c.stat(Stat::FreeBatchFlush), k / limit, "after {k} frees");
        assert_eq!(c.usage().batched_objects, k % limit, "after {k} frees");
    }
    c.flush_all();
    on_cpu(0, || {
        slabs[0][2 * limit + 1..].iter().for_each(|&o| c.free(o))
    });
    c.destroy().unwrap();
}
