// SPDX-License-Identifier: GPL-2.0
//! Host tests of the SLUB core over the host machine: a model-based
//! random test, counters where they make a claim testable, tunables, and
//! multi-threaded stress with remote frees and simulated migration.

use crate::host::{shim, Host};
use crate::layout::{Layout, LayoutRequest};
use crate::slab::HEADER_SIZE;
use crate::slub::Cache;
use crate::stat::Stat;
use crate::test_util::{
    machine, on_cpu, pages, read_tag, reports, tag, OnCpu, Rng, TestCache, CPUS, GFP_KERNEL,
    GFP_THISNODE, GFP_ZERO,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

#[test]
fn first_alloc_is_slow_then_fast_and_remote_free_is_slow() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(64, 30, 5, 2);
    let (a, b) = on_cpu(0, || (c.alloc(GFP_KERNEL, -1), c.alloc(GFP_KERNEL, -1)));
    assert!(!a.is_null() && !b.is_null() && a != b);
    assert_eq!(c.stat(Stat::AllocSlowpath), 1);
    assert_eq!(c.stat(Stat::AllocSlab), 1);
    assert_eq!(c.stat(Stat::AllocFastpath), 1);
    // Freed on the same CPU: fast path. On another CPU: slow path.
    on_cpu(0, || c.free(a));
    assert_eq!(c.stat(Stat::FreeFastpath), 1);
    on_cpu(1, || c.free(b));
    assert_eq!(c.stat(Stat::FreeSlowpath), 1);
    assert_eq!(c.stat(Stat::FreeFrozen), 1);
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// Random operations on random CPUs against a model of the live set.
#[test]
fn random_ops_match_model() {
    random_ops(0);
}

/// The same with batched frees (the `free_batch` build variant): a batched
/// object is not live (usage) and is never handed out while another user
/// holds it.
#[cfg(rslub_free_batch)]
#[test]
fn random_ops_match_model_with_batched_frees() {
    random_ops(8);
}

fn random_ops(free_batch: u32) {
    let _m = machine();
    let base = pages();
    for (size, seed) in [(8usize, 1u64), (48, 2), (192, 3), (1000, 4), (4096, 5)] {
        let c = TestCache::new(size, 13, 2, 2);
        c.batch_frees(free_batch);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut live: HashMap<usize, u64> = HashMap::new();
        let mut seq = 0u64;
        for _ in 0..20_000 {
            let cpu = rng.below(CPUS as usize) as u32;
            on_cpu(cpu, || match rng.below(10) {
                0..=4 => {
                    let o = c.alloc(GFP_KERNEL, -1);
                    assert!(!o.is_null());
                    assert!(
                        live.insert(o as usize, seq).is_none(),
                        "object handed out twice"
                    );
                    tag(o, size, seq);
                    seq += 1;
                }
                5..=7 if !live.is_empty() => {
                    let k = *live.keys().nth(rng.below(live.len())).unwrap();
                    let v = live.remove(&k).unwrap();
                    assert_eq!(
                        read_tag(k as *mut u8, size),
                        v & mask(size),
                        "object changed while live"
                    );
                    c.free(k as *mut u8);
                }
                8 => {
                    let mut v = vec![std::ptr::null_mut(); rng.below(40) + 1];
                    assert!(c.alloc_bulk(GFP_KERNEL, &mut v));
                    for &o in &v {
                        assert!(
                            live.insert(o as usize, seq).is_none(),
                            "bulk handed out a live object"
                        );
                        tag(o, size, seq);
                        seq += 1;
                    }
                }
                _ if !live.is_empty() => {
                    let n = rng.below(live.len().min(40)) + 1;
                    let keys: Vec<usize> = live.keys().take(n).copied().collect();
                    let mut v: Vec<*mut u8> = keys.iter().map(|&k| k as *mut u8).collect();
                    for k in &keys {
                        let t = live.remove(k).unwrap();
                        assert_eq!(read_tag(*k as *mut u8, size), t & mask(size));
                    }
                    c.free_bulk(&mut v);
                }
                _ => {}
            });
            if rng.below(2000) == 0 {
                c.shrink();
            }
        }
        let u = c.usage();
        assert_eq!(u.live_objects, live.len(), "before flush");
        assert_eq!(
            u.node_objects[..u.nr_nodes].iter().sum::<usize>(),
            live.len()
        );
        assert_eq!(
            u.node_cpu_slabs[..u.nr_nodes].iter().sum::<usize>(),
            u.cpu_slabs
        );
        assert_eq!(
            u.node_cpu_partial[..u.nr_nodes].iter().sum::<usize>(),
            u.cpu_partial_slabs
        );
        // The totals alone (destroy's and the serve glue's count) agree.
        let t = c.totals();
        assert_eq!(
            (
                t.live_objects,
                t.slabs,
                t.partial,
                t.cpu_slabs,
                t.cpu_partial_slabs,
                t.empty_slabs,
                t.objects_partial
            ),
            (
                u.live_objects,
                u.slabs,
                u.partial,
                u.cpu_slabs,
                u.cpu_partial_slabs,
                u.empty_slabs,
                u.objects_partial
            ),
            "totals() and usage() disagree"
        );
        c.flush_all();
        assert_eq!(c.usage().live_objects, live.len());
        assert_eq!(c.totals().live_objects, live.len());
        for &k in live.keys() {
            on_cpu(rng.below(CPUS as usize) as u32, || c.free(k as *mut u8));
        }
        assert!(c.stat(Stat::AllocFastpath) + c.stat(Stat::AllocSlowpath) > 0);
        c.destroy().unwrap();
    }
    assert_eq!(pages(), base, "pages leaked");
}

fn mask(size: usize) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}

#[test]
fn gfp_zero_zeroes() {
    let _m = machine();
    let c = TestCache::new(200, 30, 5, 2);
    on_cpu(0, || {
        let o = c.alloc(GFP_KERNEL, -1);
        // SAFETY: 200-byte object.
        unsafe { std::ptr::write_bytes(o, 0xff, 200) };
        c.free(o);
        let o = c.alloc(GFP_KERNEL | GFP_ZERO, -1);
        // SAFETY: as above.
        assert!(unsafe { std::slice::from_raw_parts(o, 200) }
            .iter()
            .all(|&b| b == 0));
        c.free(o);
    });
    c.destroy().unwrap();
}

/// Makes `n` full slabs on CPU 0, then frees one object of each from CPU 1
/// (so they become partial), and returns the cache and the survivors.
fn partial_slabs(c: &TestCache, n: usize) -> Vec<*mut u8> {
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..n * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    let mut keep = Vec::new();
    for (i, &o) in objs.iter().enumerate() {
        if i % per == 0 {
            on_cpu(1, || c.free(o));
        } else {
            keep.push(o);
        }
    }
    keep
}

#[test]
fn cpu_partial_zero_moves_no_slab_to_cpu_partial() {
    let _m = machine();
    let c = TestCache::new(256, 0, 5, 0);
    let keep = partial_slabs(&c, 6);
    c.flush_all();
    assert!(
        c.usage().partial >= 5,
        "frees should have listed the slabs on the node"
    );
    on_cpu(2, || {
        let o = c.alloc(GFP_KERNEL, -1);
        c.free(o);
    });
    assert_eq!(c.usage().cpu_partial_slabs, 0);
    assert_eq!(c.stat(Stat::CpuPartialNode), 0);
    assert_eq!(c.stat(Stat::CpuPartialFree), 0);
    for o in keep {
        on_cpu(0, || c.free(o));
    }
    c.destroy().unwrap();
}

/// The CPU partial fill stops once it moved more than half the bound
/// (upstream's `>`), or half (`>=`) in the `fill_ge` build variant: pinned
/// at the step where it stops.
#[test]
fn partial_fill_stops_when_moved_exceeds_half() {
    let _m = machine();
    {
        let ge = cfg!(rslub_fill_ge);
        let c = TestCache::new(256, 30, 5, 0);
        // Node partial lists only: no CPU partials while setting up.
        c.set_cpu_partial(0);
        let keep = partial_slabs(&c, 12);
        c.flush_all();
        c.set_cpu_partial(30);
        let limit = (30u32 * 2).div_ceil(c.layout.objects as u32);
        on_cpu(3, || {
            let o = c.alloc(GFP_KERNEL, -1);
            c.free(o);
        });
        let moved = c.stat(Stat::CpuPartialNode) as u32;
        let want = if ge { limit / 2 } else { limit / 2 + 1 };
        assert_eq!(moved, want, "limit {limit} ge {ge}");
        for o in keep {
            on_cpu(0, || c.free(o));
        }
        c.destroy().unwrap();
    }
}

#[test]
fn empty_slabs_are_cached_reused_and_released_by_shrink() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(512, 0, 0, 3);
    let per = c.layout.objects;
    // Allocate 5 slabs' worth on CPU 0, free everything from CPU 1.
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..5 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    assert_eq!(c.usage().empty_slabs, 3, "max_empty bounds the cache");
    assert_eq!(c.stat(Stat::EmptyCacheAdd), 3);
    let slabs_before = c.stat(Stat::AllocSlab);
    let o = on_cpu(2, || c.alloc(GFP_KERNEL, -1));
    assert_eq!(c.stat(Stat::EmptyCacheHit), 1);
    assert_eq!(
        c.stat(Stat::AllocSlab),
        slabs_before,
        "a cached slab was reused"
    );
    on_cpu(2, || c.free(o));
    c.shrink();
    assert_eq!(c.usage().empty_slabs, 0);
    assert_eq!(c.usage().slabs, 0);
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}

#[test]
fn reclaim_empty_gives_back_cached_slabs_below_max_empty() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(512, 0, 0, 8);
    let per = c.layout.objects;
    // The host machine counts page blocks: one per slab.
    let slab_pages = 1i64;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..6 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    let cached = |c: &TestCache| (0..4).map(|n| c.empty_cached(n)).sum::<usize>();
    assert_eq!(cached(&c), 6, "below max_empty every empty slab is kept");
    assert_eq!(pages(), base + 6 * slab_pages);
    let nid = (0..2).find(|&n| c.empty_cached(n) != 0).unwrap();
    assert_eq!(c.reclaim_empty(nid, 2), 2);
    assert_eq!(cached(&c), 4);
    assert_eq!(pages(), base + 4 * slab_pages, "the pages went back");
    assert_eq!(c.reclaim_empty(nid, 0), 0, "nothing asked, nothing freed");
    assert_eq!(c.reclaim_empty(-1, 10), 0, "no such node");
    assert_eq!(c.reclaim_empty(64, 10), 0, "no such node");
    let rest = cached(&c);
    let freed: usize = (0..2).map(|n| c.reclaim_empty(n, 100)).sum();
    assert_eq!(freed, rest);
    assert_eq!(cached(&c), 0);
    assert_eq!(c.reclaim_empty(nid, 100), 0, "an empty cache gives nothing");
    assert_eq!(c.stat(Stat::EmptyCacheReclaim), 6);
    assert_eq!(c.stat(Stat::EmptyCacheRelease), 0, "not counted as a trim");
    assert_eq!(c.max_empty(), 8, "the tunable is unchanged");
    assert_eq!(pages(), base);
    // The cache keeps working: new slabs come from the page allocator.
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert!(!o.is_null());
    on_cpu(0, || c.free(o));
    c.shrink();
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

#[test]
fn max_empty_zero_frees_empty_slabs_at_once() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(512, 0, 0, 0);
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..4 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    assert_eq!(c.usage().empty_slabs, 0);
    assert_eq!(c.usage().slabs, 0);
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}

#[test]
fn min_partial_keeps_empty_partial_slabs() {
    let _m = machine();
    let c = TestCache::new(512, 0, 4, 0);
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(0, || {
        (0..8 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    let u = c.usage();
    assert_eq!(u.partial, 4, "min_partial empty slabs stay listed");
    assert_eq!(u.slabs, 4);
    c.destroy().unwrap();
}

#[test]
fn bad_frees_are_reported_and_ignored() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    let d = TestCache::new(64, 30, 5, 2);
    let r0 = reports();
    on_cpu(0, || {
        let a = c.alloc(GFP_KERNEL, -1);
        let other = d.alloc(GFP_KERNEL, -1);
        let mut local = 0u64;
        c.free(a.wrapping_add(8));
        c.free(other);
        c.free(std::ptr::from_mut(&mut local).cast());
        c.free(a);
        c.free(a);
        assert_eq!(reports() - r0, 4);
        assert_eq!(c.errors(), 4);
        let again = c.alloc(GFP_KERNEL, -1);
        assert_eq!(again, a);
        assert_ne!(c.alloc(GFP_KERNEL, -1), a);
        d.free(other);
    });
    assert_eq!(c.destroy(), Err(2));
    d.destroy().unwrap();
}

/// Nodes that do not exist, and `__GFP_THISNODE` on a node without memory:
/// NULL and one report, nothing allocated; without `__GFP_THISNODE` a
/// memoryless node falls back to another node.
#[test]
fn alloc_on_a_bad_or_memoryless_node() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(64, 30, 5, 2);
    let r0 = reports();
    on_cpu(0, || {
        for node in [-2, 2, 1000, i32::MIN, i32::MAX] {
            assert!(c.alloc(GFP_KERNEL, node).is_null());
        }
        assert_eq!(reports() - r0, 5);
        assert_eq!(pages(), base);
        // SAFETY: setter.
        unsafe { shim::rslub_host_set_memoryless(1) };
        assert!(c.alloc(GFP_KERNEL | GFP_THISNODE, 1).is_null());
        assert_eq!(reports() - r0, 6);
        assert_eq!(pages(), base);
        let o = c.alloc(GFP_KERNEL, 1);
        assert!(!o.is_null());
        assert_eq!(reports() - r0, 6);
        assert_eq!(<Host as crate::platform::Platform>::page_node(o), 0);
        // SAFETY: setter.
        unsafe { shim::rslub_host_set_memoryless(-1) };
        c.free(o);
        let o = c.alloc(GFP_KERNEL | GFP_THISNODE, 1);
        assert!(!o.is_null());
        c.free(o);
    });
    assert_eq!(c.errors(), 0);
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

#[test]
fn page_allocation_failure_returns_null_and_bulk_is_all_or_nothing() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(1024, 0, 0, 0);
    let per = c.layout.objects;
    on_cpu(0, || {
        // SAFETY: setter.
        unsafe { shim::rslub_host_fail_pages(1) };
        assert!(c.alloc(GFP_KERNEL, -1).is_null());
        let mut v = vec![std::ptr::null_mut(); per + 1];
        // SAFETY: setter; the second slab of the bulk fails.
        unsafe { shim::rslub_host_fail_pages(0) };
        let first = c.alloc(GFP_KERNEL, -1);
        c.free(first);
        // SAFETY: setter.
        unsafe { shim::rslub_host_fail_pages(1) };
        assert!(!c.alloc_bulk(GFP_KERNEL, &mut v));
        // SAFETY: setter.
        unsafe { shim::rslub_host_fail_pages(0) };
    });
    c.flush_all();
    assert_eq!(c.usage().live_objects, 0);
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// Threads on shared CPUs, objects handed between threads (remote frees),
/// migration between reading the tid and the cmpxchg, tunables changing
/// under load. Every object carries its owner's tag, checked at free.
#[test]
fn threads_with_remote_frees_and_migration() {
    threads_remote_frees(0);
}

/// The same with batched frees (the `free_batch` build variant), and
/// `flush_all` racing with the frees (thread 0 flushes now and then, as
/// shrink and validate do).
#[cfg(rslub_free_batch)]
#[test]
fn threads_with_batched_remote_frees_and_flushes() {
    threads_remote_frees(8);
}

fn threads_remote_frees(free_batch: u32) {
    let _m = machine();
    let base = pages();
    let c = Arc::new(TestCache::new(96, 13, 2, 2));
    c.batch_frees(free_batch);
    let handoff: Arc<Mutex<Vec<(usize, u64)>>> = Arc::new(Mutex::new(Vec::new()));
    // SAFETY: setter: migrate on about 1 in 8 this_cpu reads.
    unsafe { shim::rslub_host_set_migrate(8) };
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let c = Arc::clone(&c);
            let handoff = Arc::clone(&handoff);
            std::thread::spawn(move || {
                let mut rng = Rng(0x1234_5678 + t);
                let mut mine: Vec<(usize, u64)> = Vec::new();
                let mut bad = 0;
                let on = OnCpu::enter(t as u32);
                for i in 0..30_000u64 {
                    let v = (t << 48) | i;
                    match rng.below(8) {
                        0..=3 => {
                            let o = c.alloc(GFP_KERNEL, -1);
                            assert!(!o.is_null());
                            tag(o, 96, v);
                            mine.push((o as usize, v));
                        }
                        4 if !mine.is_empty() => {
                            let x = mine.swap_remove(rng.below(mine.len()));
                            handoff.lock().unwrap().push(x);
                        }
                        5 | 6 => {
                            let x = handoff.lock().unwrap().pop().or_else(|| mine.pop());
                            if let Some((o, v)) = x {
                                bad += usize::from(read_tag(o as *mut u8, 96) != v);
                                c.free(o as *mut u8);
                            }
                        }
                        _ => {
                            if i % 5000 == 0 {
                                c.set_cpu_partial((i % 3) as u32 * 13);
                                c.set_max_empty((i % 4) as u32);
                            }
                            if free_batch != 0 && t == 0 && i % 997 == 0 {
                                // SAFETY: leave the simulated CPU: the
                                // flush runs on every CPU in turn.
                                unsafe { shim::rslub_host_exit() };
                                c.flush_all();
                                // SAFETY: back onto a CPU.
                                unsafe { shim::rslub_host_enter(0) };
                            }
                            // SAFETY: move to another CPU.
                            unsafe { shim::rslub_host_yield(rng.below(CPUS as usize) as u32) };
                        }
                    }
                }
                for (o, v) in mine {
                    bad += usize::from(read_tag(o as *mut u8, 96) != v);
                    c.free(o as *mut u8);
                }
                drop(on);
                bad
            })
        })
        .collect();
    let bad: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    // SAFETY: setter.
    unsafe { shim::rslub_host_set_migrate(0) };
    for (o, v) in handoff.lock().unwrap().drain(..) {
        assert_eq!(read_tag(o as *mut u8, 96), v);
        on_cpu(0, || c.free(o as *mut u8));
    }
    assert_eq!(bad, 0, "objects changed while live");
    c.flush_all();
    assert_eq!(c.usage().live_objects, 0);
    let c = Arc::try_unwrap(c).ok().unwrap();
    c.destroy().unwrap();
    assert_eq!(pages(), base, "pages leaked");
}

/// What the simulated interrupt does: takes two objects and frees the
/// first, so the CPU freelist head is the same object again but its next
/// pointer changed (the ABA the tid exists for).
struct IrqWork {
    cache: *const Cache<Host>,
    got: Vec<*mut u8>,
}

extern "C" fn irq_alloc_alloc_free(arg: *mut core::ffi::c_void) {
    // SAFETY: `arg` is the test's `IrqWork`, alive across the call.
    let w = unsafe { &mut *arg.cast::<IrqWork>() };
    // SAFETY: the cache outlives the hook.
    let c = unsafe { &*w.cache };
    let a = c.alloc(GFP_KERNEL, -1);
    let b = c.alloc(GFP_KERNEL, -1);
    // SAFETY: `a` was just allocated here.
    unsafe { c.free(a) };
    w.got.push(b);
}

/// An interrupt between the fast path's read of (freelist, tid) and its
/// cmpxchg16b reallocates objects on the same CPU: the interrupted
/// allocation must retry and never hand out an object twice.
#[test]
fn interrupt_between_read_and_cmpxchg_forces_a_retry() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    let mut w = IrqWork {
        cache: c.0,
        got: Vec::new(),
    };
    let (x, y) = on_cpu(0, || {
        // Warm the CPU slab so the next allocation takes the fast path.
        let warm = c.alloc(GFP_KERNEL, -1);
        let fails = c.stat(Stat::CmpxchgDoubleCpuFail);
        // SAFETY: `w` lives until the hook has run (it runs inside alloc).
        unsafe {
            shim::rslub_host_set_irq_hook(
                Some(irq_alloc_alloc_free),
                std::ptr::from_mut(&mut w).cast(),
                0,
            )
        };
        let x = c.alloc(GFP_KERNEL, -1);
        assert_eq!(w.got.len(), 1, "the interrupt ran");
        assert!(
            c.stat(Stat::CmpxchgDoubleCpuFail) > fails,
            "the interrupted cmpxchg failed"
        );
        c.free(warm);
        (x, w.got[0])
    });
    assert_ne!(x, y, "an object was handed out twice");
    on_cpu(0, || {
        c.free(x);
        c.free(y);
    });
    c.destroy().unwrap();
}

// ---- hardening and debug features --------------------------------------

use crate::debug;

fn poke(p: *mut u8, off: isize, v: u8) {
    // SAFETY: tests write inside slab memory on purpose (corruption).
    unsafe { p.offset(off).write_volatile(v) };
}

/// XORs a byte of slab memory with `mask`. Flipping the low byte of a
/// stored free pointer with 0xff always decodes to a pointer that is not an
/// object start (its low six bits become set), whatever the random key;
/// writing a fixed value instead would decode to a valid-looking object one
/// time in 64.
fn flip(p: *mut u8, off: isize, mask: u8) {
    // SAFETY: as for `poke`.
    let v = unsafe { p.offset(off).read_volatile() };
    poke(p, off, v ^ mask);
}

#[test]
fn hardened_free_pointers_are_stored_obfuscated() {
    let _m = machine();
    for harden in [false, true] {
        let c = TestCache::with(64, 30, 5, 2, 0, harden);
        assert_eq!(c.hardened(), harden);
        on_cpu(0, || {
            let a = c.alloc(GFP_KERNEL, -1);
            let b = c.alloc(GFP_KERNEL, -1);
            c.free(b);
            c.free(a);
            // a heads the CPU freelist, its free pointer names b.
            // Half-way into the 64-byte object, like in-tree.
            assert_eq!(c.layout.free_offset, 32);
            // SAFETY: a is a free object of ours (test inspection).
            let stored = unsafe { (a.add(32) as *const usize).read_volatile() };
            if harden {
                assert_ne!(stored, b as usize, "stored plain while hardened");
                // Exactly the in-tree codec: next ^ key ^ swab(slot). (An
                // OR or AND in it would still round-trip, and leak bits.)
                let slot = a as usize + 32;
                assert_eq!(stored, b as usize ^ c.layout.fp_key ^ slot.swap_bytes());
            } else {
                assert_eq!(stored, b as usize);
            }
            // SAFETY: as above.
            assert_eq!(unsafe { crate::slab::get_free_pointer(a, &c.layout) }, b);
            assert_eq!(c.alloc(GFP_KERNEL, -1), a);
            assert_eq!(c.alloc(GFP_KERNEL, -1), b);
            c.free(a);
            c.free(b);
        });
        c.destroy().unwrap();
    }
}

#[test]
fn corrupt_free_pointer_is_detected_and_the_cache_keeps_working() {
    let _m = machine();
    // Caught by the allocation that would follow it.
    let c = TestCache::new(64, 30, 5, 2);
    let r0 = reports();
    on_cpu(0, || {
        let a = c.alloc(GFP_KERNEL, -1);
        let b = c.alloc(GFP_KERNEL, -1);
        c.free(a);
        flip(a, c.layout.free_offset as isize, 0xff); // the stored free pointer's low byte
        let x = c.alloc(GFP_KERNEL, -1);
        assert!(!x.is_null());
        assert_ne!(
            x, a,
            "the object with the corrupt free pointer was handed out"
        );
        assert_eq!(c.errors(), 1);
        assert_eq!(c.isolated_slabs(), 1);
        assert!(reports() > r0);
        // Frees into the isolated slab are ignored quietly.
        let r1 = reports();
        c.free(b);
        assert_eq!(reports(), r1);
        let objs: Vec<*mut u8> = (0..500).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        let set: HashSet<usize> = objs.iter().map(|&p| p as usize).collect();
        assert_eq!(set.len(), objs.len());
        for o in objs {
            c.free(o);
        }
        c.free(x);
    });
    assert_eq!(c.validate(), 0);
    assert_eq!(c.errors(), 1);
    c.destroy().unwrap();

    // Caught by validate (in a slab freelist after a flush).
    let c = TestCache::new(64, 30, 5, 2);
    on_cpu(1, || {
        let a = c.alloc(GFP_KERNEL, -1);
        let keep = c.alloc(GFP_KERNEL, -1);
        c.free(a);
        flip(a, c.layout.free_offset as isize, 0xff);
        assert_eq!(c.validate(), 1);
        assert_eq!(c.isolated_slabs(), 1);
        c.free(keep);
        assert_eq!(c.validate(), 0);
        let o = c.alloc(GFP_KERNEL, -1);
        assert!(!o.is_null());
        c.free(o);
    });
    c.destroy().unwrap();
}

#[test]
fn object_index_matches_division() {
    for size in (1..=16384).step_by(13) {
        for (rz, poison, user) in [
            (false, false, false),
            (true, true, true),
            (true, false, false),
        ] {
            let l = Layout::new(&LayoutRequest {
                red_zone: rz,
                poison,
                store_user: user,
                ..LayoutRequest::plain(size, 0, 4096, HEADER_SIZE)
            })
            .unwrap();
            let mut off = 0;
            while off < l.slab_bytes {
                let want = if off >= l.first_offset
                    && (off - l.first_offset).is_multiple_of(l.stride)
                    && (off - l.first_offset) / l.stride < l.objects
                {
                    Some((off - l.first_offset) / l.stride)
                } else {
                    None
                };
                assert_eq!(l.object_index(off), want, "size {size} off {off}");
                off += if l.stride > 64 { 7 } else { 1 };
            }
            for i in 0..l.objects {
                assert_eq!(l.object_index(l.object_offset(i)), Some(i));
            }
            // Past the slab, and below its start (a pointer under the
            // header wraps to a huge offset): never an object.
            for k in 0..2 * l.stride {
                assert_eq!(
                    l.object_index(l.slab_bytes + k),
                    None,
                    "size {size} past {k}"
                );
                assert_eq!(
                    l.object_index(usize::MAX - k),
                    None,
                    "size {size} below {k}"
                );
            }
        }
    }
}

/// Each mode's caches are served by their own paths: a mode mixed up in
/// the dispatch (a hardened cache served by the plain path, or the
/// reverse) decodes free pointers wrongly, which the allocations below
/// would report as corruption. In the `locked_cmpxchg` build variant the
/// same paths run with the lock prefix.
#[test]
fn every_mode_keeps_every_path_working() {
    let _m = machine();
    for (harden, debug) in [(true, 0), (false, 0), (true, crate::debug::POISON)] {
        let c = TestCache::with(64, 30, 5, 2, debug, harden);
        for _ in 0..3 {
            on_cpu(0, || {
                let objs: Vec<*mut u8> = (0..200).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
                assert!(objs.iter().all(|o| !o.is_null()));
                let set: HashSet<usize> = objs.iter().map(|&p| p as usize).collect();
                assert_eq!(set.len(), objs.len());
                objs.iter().rev().for_each(|&o| c.free(o));
                let mut bulk = [std::ptr::null_mut(); 16];
                assert!(c.alloc_bulk(GFP_KERNEL, &mut bulk));
                c.free_bulk(&mut bulk);
            });
            on_cpu(1, || {
                let o = c.alloc(GFP_KERNEL, -1);
                assert!(!o.is_null());
                c.free(o);
            });
        }
        assert_eq!(c.errors(), 0, "harden {harden} debug {debug}");
        assert_eq!(c.usage().live_objects, 0);
        assert_eq!(c.validate(), 0);
        c.destroy().unwrap();
    }
}

#[test]
fn debug_layout_keeps_zones_and_metadata_apart() {
    for size in (1..=16384).step_by(11).chain([8, 64, 4096, 16384]) {
        for align in [0, 8, 64, 4096] {
            for flags in 1..16u32 {
                let rz = flags & debug::RED_ZONE != 0;
                let poison = flags & debug::POISON != 0;
                let user = flags & debug::STORE_USER != 0;
                let l = Layout::new(&LayoutRequest {
                    red_zone: rz,
                    poison,
                    store_user: user,
                    ..LayoutRequest::plain(size, align, 4096, HEADER_SIZE)
                })
                .unwrap();
                assert!(l.objects >= 1);
                assert_eq!(l.first_offset % l.align, 0);
                assert_eq!(l.stride % l.align, 0);
                assert!(l.first_offset >= HEADER_SIZE + l.red_left);
                assert!(l.inuse >= size);
                if rz {
                    assert!(l.red_left >= 8 && l.inuse > size);
                }
                let mut end = l.inuse.max(8);
                if poison {
                    assert!(
                        l.free_offset >= l.inuse,
                        "free pointer inside a poisoned object"
                    );
                    end = l.free_offset + 8;
                }
                if user {
                    assert!(l.track_offset >= end);
                    end = l.track_offset + 2 * crate::layout::TRACK_SIZE;
                }
                assert!(
                    end + l.red_left <= l.stride,
                    "metadata runs into the next red zone: size {size} flags {flags}"
                );
                assert!(l.first_offset + l.objects * l.stride <= l.slab_bytes);
            }
        }
    }
}

/// A debug cache of `size` bytes with `flags`.
fn debug_cache(size: usize, flags: u32) -> TestCache {
    TestCache::with(size, 30, 5, 2, flags, true)
}

#[test]
fn one_byte_past_a_red_zoned_object_is_caught_on_free() {
    let _m = machine();
    let c = debug_cache(64, debug::RED_ZONE);
    on_cpu(0, || {
        let p = c.alloc(GFP_KERNEL, -1);
        let q = c.alloc(GFP_KERNEL, -1);
        poke(p, 64, 0x12);
        c.free(p);
        assert_eq!(c.errors(), 1);
        assert_eq!(c.isolated_slabs(), 1);
        c.free(q); // its slab is isolated: ignored
        assert_eq!(c.errors(), 1);
        let o = c.alloc(GFP_KERNEL, -1);
        assert!(!o.is_null() && o != p);
        c.free(o);
    });
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

#[test]
fn red_zone_clobbered_while_allocated_is_caught_by_validate() {
    let _m = machine();
    let c = debug_cache(64, debug::RED_ZONE | debug::CONSISTENCY);
    on_cpu(0, || {
        let p = c.alloc(GFP_KERNEL, -1);
        poke(p, -1, 0x34); // left red zone
        assert_eq!(c.validate(), 1);
        assert_eq!(c.errors(), 1);
        c.free(p);
        assert_eq!(c.validate(), 0);
    });
    c.destroy().unwrap();
}

#[test]
fn red_zone_clobbered_after_free_is_caught() {
    let _m = machine();
    let c = debug_cache(64, debug::RED_ZONE);
    on_cpu(0, || {
        let p = c.alloc(GFP_KERNEL, -1);
        c.free(p);
        poke(p, 64, 0xab);
        assert_eq!(c.validate(), 1);
        assert_eq!(c.isolated_slabs(), 1);
    });
    c.destroy().unwrap();
}

#[test]
fn writes_into_freed_poisoned_objects_are_caught() {
    let _m = machine();
    // The first word, by validate; the 50th byte, by the next allocation.
    for (off, by_validate) in [(0isize, true), (50, false), (63, true)] {
        let c = debug_cache(64, debug::POISON);
        assert!(c.layout.free_offset >= 64);
        on_cpu(0, || {
            let p = c.alloc(GFP_KERNEL, -1);
            c.free(p);
            // SAFETY: reading the poison of a free object.
            unsafe {
                assert_eq!(p.read(), debug::POISON_FREE);
                assert_eq!(p.add(63).read(), debug::POISON_END);
            }
            poke(p, off, 0x78);
            if by_validate {
                assert_eq!(c.validate(), 1);
            } else {
                let o = c.alloc(GFP_KERNEL, -1);
                assert!(!o.is_null());
                assert_ne!(o, p, "the damaged object was handed out");
                c.free(o);
            }
            assert_eq!(c.errors(), 1, "offset {off}");
            assert_eq!(c.isolated_slabs(), 1);
        });
        assert_eq!(c.validate(), 0);
        c.destroy().unwrap();
    }
}

#[test]
fn debug_double_free_is_reported_and_harmless() {
    let _m = machine();
    for flags in [
        debug::CONSISTENCY,
        debug::RED_ZONE,
        debug::POISON,
        debug::ALL,
    ] {
        let c = debug_cache(100, flags);
        on_cpu(0, || {
            let p = c.alloc(GFP_KERNEL, -1);
            let q = c.alloc(GFP_KERNEL, -1);
            c.free(p);
            c.free(q);
            c.free(p); // not the freelist head: a debug cache walks the freelist
            assert_eq!(c.errors(), 1, "flags {flags}");
            c.free(q); // the head
            assert_eq!(c.errors(), 2, "flags {flags}");
            assert_eq!(c.isolated_slabs(), 0);
            let a = c.alloc(GFP_KERNEL, -1);
            let b = c.alloc(GFP_KERNEL, -1);
            assert_ne!(a, b);
            c.free(a);
            c.free(b);
        });
        assert_eq!(c.validate(), 0);
        c.destroy().unwrap();
    }
}

#[test]
fn owner_records_name_the_caller_cpu_and_time() {
    let _m = machine();
    let c = debug_cache(32, debug::STORE_USER);
    on_cpu(3, || {
        let p = c.alloc(GFP_KERNEL, -1);
        // SAFETY: an allocated object of the cache.
        let t = unsafe { debug::get_track(p, &c.layout, false) }.unwrap();
        assert_ne!(t.addr, 0);
        assert_eq!(t.cpu(), 3);
        assert_ne!(t.pid(), 0);
        // SAFETY: as above.
        assert!(unsafe { debug::get_track(p, &c.layout, true) }.is_none());
        c.free(p);
        // SAFETY: a free object of the cache (test inspection).
        let f = unsafe { debug::get_track(p, &c.layout, true) }.unwrap();
        assert!(f.when > t.when);
    });
    c.destroy().unwrap();
}

#[test]
fn destroy_with_a_live_object_is_reported() {
    let _m = machine();
    let c = debug_cache(64, debug::ALL);
    let r0 = reports();
    let _p = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    let errors = c.errors();
    // SAFETY: nothing else uses the cache; a failed destroy leaks it.
    assert_eq!(unsafe { Cache::destroy(c.0) }, Err(1));
    // SAFETY: leaked, so still readable.
    assert_eq!(unsafe { (*c.0).errors() }, errors + 1);
    assert!(reports() > r0);
}

#[test]
fn random_freelist_shuffles_new_slabs() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    assert!(c.set_random_freelist(true));
    on_cpu(0, || {
        let n = c.layout.objects;
        let objs: Vec<*mut u8> = (0..n).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        let set: HashSet<usize> = objs.iter().map(|&p| p as usize).collect();
        assert_eq!(set.len(), n, "every object once");
        assert!(
            objs.windows(2).any(|w| w[1] < w[0]),
            "a random order of {n} objects is not sorted"
        );
        for o in objs {
            c.free(o);
        }
    });
    c.destroy().unwrap();
}

#[test]
fn debug_caches_under_threads_lose_nothing() {
    let _m = machine();
    let base = pages();
    let r0 = reports();
    let c = Arc::new(debug_cache(200, debug::ALL));
    let shared: Arc<Mutex<Vec<usize>>> = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..CPUS)
        .map(|cpu| {
            let c = Arc::clone(&c);
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut rng = Rng(cpu as u64 + 11);
                let mut mine = Vec::new();
                for _ in 0..4000 {
                    on_cpu(cpu, || match rng.below(4) {
                        0 | 1 => {
                            let o = c.alloc(GFP_KERNEL, -1);
                            assert!(!o.is_null());
                            tag(o, 200, o as u64);
                            mine.push(o as usize);
                        }
                        2 => {
                            if let Some(o) = mine.pop() {
                                assert_eq!(read_tag(o as *mut u8, 200), o as u64);
                                c.free(o as *mut u8);
                            }
                        }
                        _ => {
                            if let Some(o) = mine.pop() {
                                shared.lock().unwrap().push(o);
                            }
                            if let Some(o) = shared.lock().unwrap().pop() {
                                c.free(o as *mut u8);
                            }
                        }
                    });
                }
                on_cpu(cpu, || mine.into_iter().for_each(|o| c.free(o as *mut u8)));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    on_cpu(0, || {
        for o in shared.lock().unwrap().drain(..) {
            c.free(o as *mut u8);
        }
    });
    assert_eq!(c.validate(), 0);
    assert_eq!(c.errors(), 0);
    assert_eq!(reports(), r0);
    let c = Arc::into_inner(c).unwrap();
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

#[test]
fn alloc_bulk_stops_at_a_corrupt_free_pointer() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    on_cpu(0, || {
        let a = c.alloc(GFP_KERNEL, -1);
        c.free(a);
        flip(a, c.layout.free_offset as isize, 0xff);
        let mut objs = [std::ptr::null_mut(); 8];
        assert!(c.alloc_bulk(GFP_KERNEL, &mut objs));
        assert!(objs.iter().all(|&o| o != a && !o.is_null()));
        let set: HashSet<usize> = objs.iter().map(|&p| p as usize).collect();
        assert_eq!(set.len(), objs.len());
        assert_eq!(c.errors(), 1);
        assert_eq!(c.isolated_slabs(), 1);
        c.free_bulk(&mut objs);
    });
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

#[test]
fn free_bulk_catches_naive_double_frees() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    on_cpu(0, || {
        let a = c.alloc(GFP_KERNEL, -1);
        let b = c.alloc(GFP_KERNEL, -1);
        // The same pointer twice in one batch.
        c.free_bulk(&mut [a, b, b]);
        assert_eq!(c.errors(), 1);
        // A pointer at the head of the CPU freelist.
        c.free_bulk(&mut [a]);
        assert_eq!(c.errors(), 2);
        let x = c.alloc(GFP_KERNEL, -1);
        let y = c.alloc(GFP_KERNEL, -1);
        let z = c.alloc(GFP_KERNEL, -1);
        assert!(x != y && y != z && x != z);
        c.free(x);
        c.free(y);
        c.free(z);
    });
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

/// Batched frees (the `free_batch` build variant): a second free of a
/// batched object is reported and does not enter the batch twice; the
/// batch of a CPU that went down is returned by `flush_dead_cpu`; nothing
/// leaks.
#[cfg(rslub_free_batch)]
#[test]
fn batched_double_free_is_reported_and_a_dead_cpu_batch_returned() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(64, 13, 2, 2);
    c.set_free_batch(8);
    let (a, b) = on_cpu(0, || (c.alloc(GFP_KERNEL, -1), c.alloc(GFP_KERNEL, -1)));
    let r = reports();
    on_cpu(1, || {
        c.free(a);
        c.free(a);
    });
    assert_eq!(reports(), r + 1, "the second free is reported");
    assert_eq!(c.stat(Stat::FreeBatched), 1);
    assert_eq!(c.stat(Stat::FreeSlowpath), 0);
    let u = c.usage();
    assert_eq!((u.batched_objects, u.live_objects), (1, 1));
    // SAFETY: nothing runs on CPU 1 any more in this test.
    unsafe { c.flush_dead_cpu(1) };
    let u = c.usage();
    assert_eq!((u.batched_objects, u.live_objects), (0, 1));
    assert_eq!(c.stat(Stat::FreeBatchFlush), 1);
    // The object came back to its slab: it is allocated again, once.
    on_cpu(0, || c.free(b));
    c.shrink();
    assert_eq!(c.usage().live_objects, 0);
    c.destroy().unwrap();
    assert_eq!(pages(), base, "pages leaked");
}

/// The `free_batch` variant: an object sits in one CPU's batch while its
/// slab becomes another CPU's slab; freeing it again there is a double
/// free, reported, and the object is handed out once (it used to go on
/// that CPU's freelist as well, and be handed out twice).
#[cfg(rslub_free_batch)]
#[test]
fn a_batched_object_freed_again_on_its_slabs_cpu_is_refused() {
    let _m = machine();
    let c = TestCache::new(64, 13, 2, 2);
    let per = c.layout.objects;
    let objs: Vec<*mut u8> = on_cpu(0, || (0..=per).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    let s1 = crate::slab::SlabHeader::of(objs[0], &c.layout);
    assert!(objs[..per]
        .iter()
        .all(|&o| crate::slab::SlabHeader::of(o, &c.layout) == s1));
    let (a, b) = (objs[0], objs[1]);
    // `b` comes back unbatched: its full slab goes to CPU 0's partial list.
    on_cpu(0, || c.free(b));
    c.set_free_batch(8);
    on_cpu(1, || c.free(a));
    assert_eq!(c.stat(Stat::FreeBatched), 1);
    // CPU 0 uses up its slab, then takes `s1` (holding `b`) as its slab.
    let mut more = Vec::new();
    on_cpu(0, || loop {
        let o = c.alloc(GFP_KERNEL, -1);
        more.push(o);
        if crate::slab::SlabHeader::of(o, &c.layout) == s1 {
            break;
        }
    });
    assert_eq!(more.last(), Some(&b));
    let r = reports();
    on_cpu(0, || c.free(a));
    assert_eq!(reports(), r + 1, "the second free is reported");
    on_cpu(0, || c.free_bulk(&mut [a, objs[2]]));
    assert_eq!(reports(), r + 2, "and through the bulk API");
    on_cpu(0, || c.free(b));
    let again: Vec<*mut u8> = on_cpu(0, || (0..per).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    assert!(
        !again.contains(&a),
        "`a` is in CPU 1's batch, not free on CPU 0"
    );
    assert_eq!(again.iter().filter(|&&o| o == b).count(), 1);
    on_cpu(0, || {
        objs[3..]
            .iter()
            .chain(&more[..more.len() - 1])
            .chain(&again)
            .for_each(|&o| c.free(o))
    });
    c.flush_all();
    c.shrink();
    assert_eq!(c.usage().live_objects, 0);
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

/// The default `max_empty` (`auto_max_empty`): room for the free objects
/// of the in-tree barn's 10 full sheaves of `2 * cpu_partial` objects, in
/// whole slabs, at least 2 and at most 1000.
#[test]
fn auto_max_empty_holds_a_barn_of_objects() {
    use crate::slub::auto_max_empty;
    // 64 B: 600 objects, 63 a slab.
    assert_eq!(auto_max_empty(30, 63), 10);
    // 8 B: 504 a slab; never below the old default of 2.
    assert_eq!(auto_max_empty(30, 504), 2);
    assert_eq!(auto_max_empty(0, 63), 2);
    // 256 B (cpu_partial 13): 260 objects, 15 a slab.
    assert_eq!(auto_max_empty(13, 15), 18);
    // 16 KiB objects (cpu_partial 2), 2 a slab.
    assert_eq!(auto_max_empty(2, 2), 20);
    // Degenerate inputs stay in the tunable's range.
    assert_eq!(auto_max_empty(u32::MAX, 1), 1000);
    assert_eq!(auto_max_empty(30, 0), 600);
}

/// A new cache's tunables are decided in one place (`Defaults::params`):
/// the parameters where set, else upstream's size classes, each at the
/// step where it changes.
#[test]
fn defaults_by_size_and_by_parameter() {
    use crate::slub::{size_defaults, Defaults};
    // cpu_partial steps at 256, 1024 and the page size; min_partial is
    // fls(size) / 2 within 5..=10.
    assert_eq!(size_defaults(255, 4096), (30, 5));
    assert_eq!(size_defaults(256, 4096), (13, 5));
    assert_eq!(size_defaults(1023, 4096), (13, 5));
    assert_eq!(size_defaults(1024, 4096), (6, 5));
    assert_eq!(size_defaults(4095, 4096), (6, 6));
    assert_eq!(size_defaults(4096, 4096), (2, 6));
    assert_eq!(size_defaults(1 << 19, 4096), (2, 10));
    assert_eq!(size_defaults(1 << 20, 4096), (2, 10));
    let by_size = Defaults {
        cpu_partial: -1,
        min_partial: -1,
        max_empty: -1,
        #[cfg(rslub_free_batch)]
        free_batch: 0,
        harden: true,
        random_freelist: false,
    };
    let p = by_size.params(64, 63, 4096, 0, (1, 2, 4));
    assert_eq!((p.cpu_partial, p.min_partial, p.max_empty), (30, 5, 10));
    assert_eq!((p.gfp_zero, p.gfp_thisnode, p.gfp_nomemalloc), (1, 2, 4));
    assert!(p.harden);
    // max_empty by size follows the size class, not a set cpu_partial.
    let set = Defaults {
        cpu_partial: 0,
        min_partial: 7,
        max_empty: 0,
        #[cfg(rslub_free_batch)]
        free_batch: 8,
        harden: false,
        random_freelist: true,
    };
    let p = set.params(64, 63, 4096, 3, (0, 0, 0));
    assert_eq!((p.cpu_partial, p.min_partial, p.max_empty), (0, 7, 0));
    assert_eq!((p.debug, p.harden, p.random_freelist), (3, false, true));
    #[cfg(rslub_free_batch)]
    assert_eq!(p.free_batch, 8);
    let p = Defaults {
        max_empty: -1,
        ..set
    }
    .params(64, 63, 4096, 0, (0, 0, 0));
    assert_eq!(p.max_empty, 10);
}

/// Remote frees in bursts: CPU 0 allocates what the in-tree barn holds
/// (10 sheaves of `2 * cpu_partial` objects), CPU 1 frees them all, and
/// again (the shape of the benchmark's `remote` workload). Every free meets a
/// slab frozen by CPU 0 (its CPU slab) or by CPU 1 (the first free of a
/// full slab freezes it onto CPU 1's partial list), so it is counted
/// `free_frozen` but for the one free per slab that froze it. With the
/// default `max_empty` the emptied slabs come back to CPU 0 from the node
/// (partial list and empty-slab cache): after the first burst no slab is
/// allocated or freed. With `max_empty` 2 most of them go back to the page
/// allocator and are allocated again in each burst.
#[test]
fn producer_consumer_bursts_reuse_emptied_slabs() {
    let _m = machine();
    let base = pages();
    for (size, cpu_partial) in [(64usize, 30u32), (256, 13)] {
        let objects = TestCache::new(size, cpu_partial, 5, 0).layout.objects;
        let auto = crate::slub::auto_max_empty(cpu_partial, objects);
        for (max_empty, steady) in [(auto, true), (2, false)] {
            let c = TestCache::new(size, cpu_partial, 5, max_empty);
            let mut v = Vec::new();
            let mut per_burst = (0, 0, 0, 0);
            for burst in 0..6 {
                let s0 = (
                    c.stat(Stat::AllocSlab),
                    c.stat(Stat::FreeSlab),
                    c.stat(Stat::FreeFrozen),
                    c.stat(Stat::CpuPartialFree),
                );
                let burst_objects = 20 * cpu_partial as usize;
                on_cpu(0, || {
                    (0..burst_objects).for_each(|_| v.push(c.alloc(GFP_KERNEL, -1)))
                });
                assert!(v.iter().all(|o| !o.is_null()));
                on_cpu(1, || v.drain(..).for_each(|o| c.free(o)));
                if burst >= 2 {
                    per_burst = (
                        c.stat(Stat::AllocSlab) - s0.0,
                        c.stat(Stat::FreeSlab) - s0.1,
                        c.stat(Stat::FreeFrozen) - s0.2,
                        c.stat(Stat::CpuPartialFree) - s0.3,
                    );
                }
            }
            let (new, freed, frozen, froze) = per_burst;
            assert_eq!(
                frozen + froze,
                20 * cpu_partial as usize,
                "{size} B: every free but the freezing ones meets a frozen slab"
            );
            if steady {
                assert_eq!(
                    (new, freed),
                    (0, 0),
                    "{size} B, max_empty {max_empty}: slabs reused"
                );
            } else {
                assert!(
                    new > 0 && freed > 0,
                    "{size} B, max_empty 2: {new} new, {freed} freed"
                );
            }
            assert_eq!(c.usage().live_objects, 0);
            c.destroy().unwrap();
        }
    }
    assert_eq!(pages(), base);
}

/// Frees to a node-partial slab that keep an object in use change no slab
/// state (`slab_free`'s inline push); the first free of a full slab and the
/// last free still move it (`free_add_partial`, `free_remove_partial`),
/// whatever the order of the frees.
#[test]
fn frees_in_random_order_move_a_slab_only_at_its_first_and_last() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(64, 0, 0, 0);
    let n = c.layout.objects;
    // One full slab that is no CPU's slab: the next allocation moves CPU 0
    // on to a second slab.
    let mut objs: Vec<*mut u8> = on_cpu(0, || (0..n).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    let other = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    let mut rng = Rng(7);
    for i in (1..objs.len()).rev() {
        objs.swap(i, rng.below(i + 1));
    }
    on_cpu(1, || {
        for (k, &o) in objs.iter().enumerate() {
            c.free(o);
            if k + 1 < n {
                assert_eq!(c.usage().partial, 1, "after {} frees", k + 1);
            }
        }
    });
    assert_eq!(c.stat(Stat::FreeAddPartial), 1);
    assert_eq!(c.stat(Stat::FreeRemovePartial), 1);
    assert_eq!(c.stat(Stat::FreeSlab), 1);
    assert_eq!(c.stat(Stat::FreeSlowpath), n);
    assert_eq!(c.errors(), 0);
    on_cpu(0, || c.free(other));
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// An emptied slab is cached only while its node's partial list is short
/// (`discard_locked`): beside a long partial list, which has room for the
/// next allocations already, it goes back to the page allocator (the
/// bench's churn held `max_empty` extra slabs at its end otherwise).
#[test]
fn empty_slabs_are_cached_only_beside_a_short_partial_list() {
    let _m = machine();
    let base = pages();
    // cpu_partial 0: a full slab's first free lists it on its node.
    let c = TestCache::new(64, 0, 2, 4);
    let per = c.layout.objects;
    on_cpu(0, || {
        let objs: Vec<*mut u8> = (0..per * 12).map(|_| c.alloc(GFP_KERNEL, -1)).collect();
        assert!(objs.iter().all(|o| !o.is_null()));
        let mut by_slab: Vec<Vec<*mut u8>> = Vec::new();
        for &o in &objs {
            let s = crate::slab::SlabHeader::of(o, &c.layout);
            match by_slab
                .iter_mut()
                .find(|v| crate::slab::SlabHeader::of(v[0], &c.layout) == s)
            {
                Some(v) => v.push(o),
                None => by_slab.push(vec![o]),
            }
        }
        // Full slabs, the CPU slab last: ten of them made partial.
        let full: Vec<usize> = (0..by_slab.len())
            .filter(|&i| by_slab[i].len() == per)
            .collect();
        assert!(full.len() >= 11, "{} full slabs", full.len());
        for &i in &full[..10] {
            c.free(by_slab[i].pop().unwrap());
        }
        assert_eq!(c.usage().partial, 10);
        // Emptying one beside nine other partial slabs (over min_partial +
        // max_empty = 6): freed, not cached.
        let freed = c.stat(Stat::FreeSlab);
        by_slab[full[0]].drain(..).for_each(|o| c.free(o));
        assert_eq!(c.usage().empty_slabs, 0);
        assert_eq!(c.stat(Stat::FreeSlab), freed + 1);
        // Emptying the rest: once the partial list is short, emptied slabs
        // are cached (up to max_empty), until min_partial stay listed.
        for &i in &full[1..10] {
            by_slab[i].drain(..).for_each(|o| c.free(o));
        }
        let u = c.usage();
        assert_eq!(u.partial, 2, "min_partial slabs stay listed");
        assert_eq!(u.empty_slabs, 4, "max_empty slabs cached");
        assert_eq!(c.stat(Stat::FreeSlab), freed + 4);
        for v in by_slab.iter_mut() {
            v.drain(..).for_each(|o| c.free(o));
        }
    });
    assert_eq!(c.usage().live_objects, 0);
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

/// A bulk free of all the objects of a full slab freezes it onto this
/// CPU's partial list, as upstream's `__slab_free` does for any first free
/// of a full slab, instead of listing it (empty) on its node: batches of
/// bulk allocations that span two slabs then cycle without the node's
/// list_lock (the bench's bulk 32 at 256 bytes, 31 objects a slab).
#[test]
fn bulk_free_of_a_whole_slab_freezes_it() {
    let _m = machine();
    let c = TestCache::new(256, 30, 5, 4);
    let per = c.layout.objects;
    assert!(per < 32, "{per} objects a slab: a batch of 32 spans two");
    on_cpu(0, || {
        let mut v = [std::ptr::null_mut(); 32];
        for _ in 0..4 {
            assert!(c.alloc_bulk(GFP_KERNEL, &mut v));
            c.free_bulk(&mut v);
        }
        let s = |st| c.stat(st);
        let before = [
            s(Stat::CpuPartialFree),
            s(Stat::CpuPartialAlloc),
            s(Stat::FreeAddPartial),
            s(Stat::AllocFromPartial),
            s(Stat::AllocSlab),
        ];
        for _ in 0..20 {
            assert!(c.alloc_bulk(GFP_KERNEL, &mut v));
            c.free_bulk(&mut v);
        }
        let after = [
            s(Stat::CpuPartialFree),
            s(Stat::CpuPartialAlloc),
            s(Stat::FreeAddPartial),
            s(Stat::AllocFromPartial),
            s(Stat::AllocSlab),
        ];
        let d: Vec<usize> = after.iter().zip(before).map(|(a, b)| a - b).collect();
        assert_eq!(
            d,
            [20, 20, 0, 0, 0],
            "frozen, taken back, no node list, no new slab"
        );
    });
    assert_eq!(c.usage().live_objects, 0);
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

/// A served cache's slabs are allocated and freed with its owner (the host
/// twin aborts on a mismatch), and `object_start` finds an object from any
/// byte of it, by the cache's geometry alone (the kernel names the cache).
#[test]
fn served_slabs_carry_their_owner_and_objects_are_found() {
    let _m = machine();
    let c = TestCache::new(96, 30, 5, 0);
    // The host machine only records it.
    let owner = 0x1000usize as *mut core::ffi::c_void;
    // SAFETY: a new cache, no slab yet.
    unsafe { c.set_page_owner(owner) };
    let objs: Vec<*mut u8> = on_cpu(0, || (0..200).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    for &o in &objs {
        assert!(!o.is_null());
        let base = c.layout.slab_base(o) as *const u8;
        let found: &Cache<Host> = &c;
        assert_eq!(found.object_start(base, o), Some(o));
        assert_eq!(found.object_start(base, o.wrapping_add(95)), Some(o));
        assert_eq!(found.object_start(base, base.wrapping_add(8)), None);
    }
    // Past the last object is no object (there the slab ends, or its
    // unused tail begins); object_start only computes, never reads.
    let l = &c.layout;
    let base = l.slab_base(objs[0]) as *const u8;
    let past = base.wrapping_add(l.object_offset(l.objects - 1) + l.stride);
    assert_eq!(c.object_start(base, past), None);
    on_cpu(0, || objs.iter().for_each(|&o| c.free(o)));
    c.destroy().unwrap();
}

/// Every cache draws its own slab secret: odd (a live magic is never a
/// freed slab's 0), not a value a constant or a mask would give, and no
/// two caches alike (an object of one cache never passes for another's).
#[test]
fn slab_secrets_are_random_odd_and_per_cache() {
    let _m = machine();
    let caches: Vec<TestCache> = (0..8).map(|_| TestCache::new(64, 30, 5, 0)).collect();
    let secrets: HashSet<usize> = caches.iter().map(|c| c.slab_secret()).collect();
    assert_eq!(secrets.len(), caches.len(), "two caches drew one secret");
    for &s in &secrets {
        assert!(s & 1 == 1 && s > 1 && s != usize::MAX, "{s:#x}");
    }
    caches.into_iter().for_each(|c| c.destroy().unwrap());
}

/// A served free trusts the cache the kernel names, never the header's
/// owner word (an overflow from the page before reaches it): with that
/// word naming another live cache, a stack word or nothing, the object
/// still goes back to its own cache, and the other cache sees nothing.
#[test]
fn a_forged_owner_word_changes_no_free() {
    let _m = machine();
    let (c, other) = (TestCache::new(96, 30, 5, 0), TestCache::new(96, 30, 5, 0));
    let stack_word = 0usize;
    for forged in [
        core::ptr::from_ref(&*other) as usize,
        core::ptr::from_ref(&stack_word) as usize,
        0,
    ] {
        let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
        let hdr = crate::slab::SlabHeader::of(o, &c.layout);
        // SAFETY: `hdr` is the header of a live slab of `c`; only the
        // owner word is changed.
        unsafe { (*hdr).forge_owner(forged) };
        on_cpu(0, || c.free(o));
        assert_eq!(c.usage().live_objects, 0, "owner {forged:#x}");
        assert_eq!(c.errors(), 0, "owner {forged:#x}");
        assert_eq!(other.usage().live_objects, 0);
        assert_eq!(other.errors(), 0);
    }
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
    other.destroy().unwrap();
}

/// A node partial list whose links were overwritten (as an overflow into a
/// slab header would) is reported once, with nothing written through the
/// bad link, and dropped: its slabs are leaked, allocations go on from a
/// new slab, and frees into the leaked slabs are safe.
#[test]
fn a_broken_node_list_is_reported_and_dropped() {
    let _m = machine();
    let c = TestCache::new(256, 0, 5, 0);
    let keep = partial_slabs(&c, 4);
    assert_eq!(c.usage().partial, 4);
    let per = c.layout.objects;
    // The partial list's second slab (slabs are listed in the order they
    // got their free object): its `prev` now names a slab of another cache.
    let second = crate::slab::SlabHeader::of(keep[per - 1], &c.layout);
    let other = TestCache::new(256, 0, 5, 0);
    let decoy = on_cpu(0, || other.alloc(GFP_KERNEL, -1));
    let decoy_slab = crate::slab::SlabHeader::of(decoy, &other.layout);
    // SAFETY: a live partial slab of `c`; only its link word is changed.
    unsafe { (*second).prev = decoy_slab };
    let (errors, logged) = (c.errors(), reports());
    let before = decoy_slab.cast::<[u8; HEADER_SIZE]>();
    // SAFETY: a live slab header of `other`, read as bytes.
    let decoy_before = unsafe { before.read() };
    // The CPU slab is empty of free objects: the next allocation asks the
    // partial list, finds the head's neighbour disagreeing, and takes a
    // new slab.
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert!(!o.is_null());
    assert_eq!(c.errors(), errors + 1);
    assert_eq!(reports(), logged + 1);
    assert_eq!(c.usage().partial, 0, "the list is dropped");
    assert_eq!(c.node_partial_hint(0), 0, "and its count with it");
    // SAFETY: as above.
    let decoy_after = unsafe { before.read() };
    assert_eq!(
        decoy_after, decoy_before,
        "nothing written through the bad link"
    );
    // Objects of the dropped slabs can still be freed, and the cache works.
    on_cpu(1, || keep.iter().for_each(|&k| c.free(k)));
    let more: Vec<*mut u8> = on_cpu(0, || {
        (0..3 * per).map(|_| c.alloc(GFP_KERNEL, -1)).collect()
    });
    assert!(more.iter().all(|p| !p.is_null()));
    on_cpu(0, || more.iter().for_each(|&m| c.free(m)));
    on_cpu(0, || c.free(o));
    assert_eq!(c.errors(), errors + 1, "no second report");
    assert_eq!(c.validate(), 0);
    on_cpu(0, || other.free(decoy));
    other.destroy().unwrap();
    // The dropped slabs count as in use, so destroy keeps (leaks) them.
    assert_eq!(c.destroy(), Err(4 * per));
}

/// The slabs a broken node list forgot stay leaked: emptied by frees
/// while the node has partial slabs enough (where an empty slab would be
/// cached or freed), none goes back on a list or to the page allocator,
/// and a validate and a shrink after it walk only what the list holds.
/// With and without debug checks (their frees take another path).
#[test]
fn slabs_a_broken_list_forgot_are_never_listed_again() {
    let _m = machine();
    for debug in [0, debug::CONSISTENCY] {
        let c = TestCache::with(256, 0, 1, 8, debug, true);
        let keep = partial_slabs(&c, 4);
        let per = c.layout.objects;
        let second = crate::slab::SlabHeader::of(keep[per - 1], &c.layout);
        let other = TestCache::new(256, 0, 5, 0);
        let decoy = on_cpu(0, || other.alloc(GFP_KERNEL, -1));
        let decoy_slab = crate::slab::SlabHeader::of(decoy, &other.layout);
        // SAFETY: a live partial slab of `c`; only its link words change.
        // Both: a debug cache allocates from the listed slabs in place and
        // unlinks one when it fills, from whichever end.
        unsafe { ((*second).prev, (*second).next) = (decoy_slab, decoy_slab) };
        let errors = c.errors();
        // The break shows when a slab beside the damaged one is unlinked:
        // the first allocation without debug checks (it takes the head
        // off the list), one of the first four with them.
        let mut got = Vec::new();
        while c.errors() == errors && got.len() < 4 {
            got.push(on_cpu(0, || c.alloc(GFP_KERNEL, -1)));
        }
        assert!(got.iter().all(|p| !p.is_null()));
        assert_eq!(
            c.errors(),
            errors + 1,
            "debug {debug}: the broken list is reported"
        );
        assert_eq!(c.usage().partial, 0, "debug {debug}");
        // Partial slabs enough that an emptied slab would be discarded.
        let more = partial_slabs(&c, 3);
        let slabs = c.usage().slabs;
        on_cpu(1, || keep.iter().for_each(|&k| c.free(k)));
        let u = c.usage();
        assert_eq!(
            u.empty_slabs, 0,
            "debug {debug}: a forgotten slab was cached"
        );
        assert_eq!(u.slabs, slabs, "debug {debug}: a forgotten slab was freed");
        assert_eq!(c.validate(), 0, "debug {debug}");
        c.shrink();
        assert_eq!(c.usage().slabs, slabs, "debug {debug}");
        on_cpu(0, || more.iter().chain(&got).for_each(|&m| c.free(m)));
        assert_eq!(c.errors(), errors + 1, "debug {debug}: no second report");
        on_cpu(0, || other.free(decoy));
        other.destroy().unwrap();
        // The forgotten slabs count as in use, so destroy keeps (leaks)
        // them: all four, or the three left after a debug cache moved a
        // full one to its full list before the break showed.
        let kept = c.destroy().unwrap_err();
        assert!(
            kept == 4 * per || (debug != 0 && kept == 3 * per),
            "debug {debug}: {kept} objects kept, {per} a slab"
        );
    }
}

/// A bulk allocation that meets a corrupted free pointer on the CPU
/// freelist reports it once, isolates the slab, and still fills the whole
/// array with distinct objects, none from the damaged slab.
#[test]
fn alloc_bulk_over_a_corrupted_free_pointer_reports_and_fills_the_array() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 0);
    on_cpu(0, || {
        let (a, b) = (c.alloc(GFP_KERNEL, -1), c.alloc(GFP_KERNEL, -1));
        c.free(b);
        c.free(a);
        // `a` heads the CPU freelist; its free pointer now names nothing.
        // SAFETY: a free object of ours, overwritten on purpose.
        unsafe {
            a.add(c.layout.free_offset)
                .cast::<usize>()
                .write(0x5a5a_5a5a)
        };
        let errors = c.errors();
        let mut out = [core::ptr::null_mut(); 8];
        assert!(c.alloc_bulk(GFP_KERNEL, &mut out));
        assert_eq!(c.errors(), errors + 1);
        let damaged = crate::slab::SlabHeader::of(a, &c.layout);
        let set: HashSet<usize> = out.iter().map(|&o| o as usize).collect();
        assert_eq!(set.len(), out.len(), "distinct objects");
        assert!(out.iter().all(|&o| !o.is_null()));
        assert!(out
            .iter()
            .all(|&o| crate::slab::SlabHeader::of(o, &c.layout) != damaged));
        c.free_bulk(&mut out);
    });
    assert_eq!(c.validate(), 0);
    c.destroy().unwrap();
}

/// `usage_into` overwrites all of a `Usage` it is handed (the sysfs reads
/// reuse one): filled twice, it reads as filled once.
#[test]
fn usage_into_a_used_usage_counts_once() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 0);
    let objs: Vec<*mut u8> = on_cpu(0, || (0..100).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    let once = c.usage();
    let mut twice = c.usage();
    c.usage_into(&mut twice);
    assert_eq!(twice.live_objects, once.live_objects);
    assert_eq!(twice.slabs, once.slabs);
    assert_eq!(twice.node_objects, once.node_objects);
    assert_eq!(twice.node_slabs, once.node_slabs);
    on_cpu(0, || objs.iter().for_each(|&o| c.free(o)));
    c.destroy().unwrap();
}

/// The `free_batch` variant's batch, at its three edges: an allocation on
/// the CPU takes the latest batched object back at once (LIFO); lowering
/// `free_batch` returns what every CPU holds; a flush returns the batch of
/// a plain (unhardened) cache as well as a hardened one's.
#[cfg(rslub_free_batch)]
#[test]
fn batched_objects_are_reused_returned_on_lowering_and_flushed_in_both_modes() {
    let _m = machine();
    for harden in [true, false] {
        let c = TestCache::with(64, 13, 2, 2, 0, harden);
        c.set_free_batch(8);
        let objs: Vec<*mut u8> = on_cpu(0, || (0..4).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
        // CPU 1 has no slab: its frees are batched, and its next
        // allocation takes the last one back.
        on_cpu(1, || {
            c.free(objs[0]);
            c.free(objs[1]);
            assert_eq!(c.alloc(GFP_KERNEL, -1), objs[1], "LIFO from the batch");
        });
        assert_eq!(c.stat(Stat::AllocFromBatch), 1);
        assert_eq!(c.usage().batched_objects, 1);
        // Lowering the limit returns the batches at once.
        c.set_free_batch(4);
        assert_eq!(c.usage().batched_objects, 0, "lowering returns the batch");
        // A flush returns a batch in either mode.
        on_cpu(1, || c.free(objs[2]));
        assert_eq!(c.usage().batched_objects, 1);
        c.flush_all();
        assert_eq!(c.usage().batched_objects, 0, "flushed (harden {harden})");
        on_cpu(0, || [objs[1], objs[3]].iter().for_each(|&o| c.free(o)));
        c.flush_all();
        assert_eq!(c.usage().live_objects, 0);
        c.destroy().unwrap();
    }
}
