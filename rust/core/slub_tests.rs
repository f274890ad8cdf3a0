// SPDX-License-Identifier: GPL-2.0
//! Host tests of the SLUB core over the shim's userspace twin: a model-based
//! random test, counters where they make a claim testable, tunables, and
//! multi-threaded stress with remote frees and simulated migration.

use crate::host::{shim, Host};
use crate::layout::{Layout, LayoutRequest};
use crate::slab::HEADER_SIZE;
use crate::slub::{Cache, Params};
use crate::stat::Stat;
use crate::test_util::Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once};

const GFP_KERNEL: u32 = 0x400 | 0x800; // direct + kswapd reclaim, as the host twin reads it
const GFP_ZERO: u32 = 0x100;
const CPUS: u32 = 4;

/// The host machine is global: tests that use it run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
static CONFIGURE: Once = Once::new();

fn machine() -> MutexGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: configuration before any cache exists.
    CONFIGURE.call_once(|| unsafe { shim::rslub_host_configure(CPUS, 2) });
    // SAFETY: plain setters.
    unsafe { shim::rslub_host_set_migrate(0) };
    g
}

/// Runs `f` on simulated CPU `cpu`.
fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> R {
    // SAFETY: enter/exit pair on this thread.
    unsafe { shim::rslub_host_enter(cpu) };
    let r = f();
    // SAFETY: as above.
    unsafe { shim::rslub_host_exit() };
    r
}

fn pages() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_pages_in_use() as i64 }
}

fn reports() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_reports() as i64 }
}

struct TestCache(*mut Cache<Host>);

// SAFETY: the cache is built for concurrent use.
unsafe impl Send for TestCache {}
// SAFETY: as above.
unsafe impl Sync for TestCache {}

impl std::ops::Deref for TestCache {
    type Target = Cache<Host>;
    fn deref(&self) -> &Cache<Host> {
        // SAFETY: live until `destroy`.
        unsafe { &*self.0 }
    }
}

impl TestCache {
    fn new(size: usize, cpu_partial: u32, min_partial: u32, max_empty: u32) -> Self {
        Self::with(size, cpu_partial, min_partial, max_empty, 0, true)
    }

    /// A cache with debug features `debug` (`debug::*` bits) and hardening.
    fn with(
        size: usize,
        cpu_partial: u32,
        min_partial: u32,
        max_empty: u32,
        debug: u32,
        harden: bool,
    ) -> Self {
        let layout = Layout::new(&LayoutRequest {
            red_zone: debug & crate::debug::RED_ZONE != 0,
            poison: debug & crate::debug::POISON != 0,
            store_user: debug & crate::debug::STORE_USER != 0,
            ..LayoutRequest::plain(size, 0, 4096, HEADER_SIZE)
        })
        .unwrap();
        let params = Params {
            cpu_partial,
            min_partial,
            max_empty,
            gfp_zero: GFP_ZERO,
            debug,
            harden,
            random_freelist: false,
        };
        let c = Cache::<Host>::create(b"test", 0, layout, None, params);
        assert!(!c.is_null());
        TestCache(c)
    }

    fn destroy(self) -> Result<(), usize> {
        // Destroy flushes all CPUs, which the host does from off-CPU.
        // SAFETY: nothing else uses the cache now.
        unsafe { Cache::destroy(self.0) }
    }

    fn stat(&self, s: Stat) -> usize {
        self.stat_total(s, &mut [])
    }

    /// Frees an object the test owns (or a bad pointer it wants reported).
    fn free(&self, o: *mut u8) {
        // SAFETY: tests free only objects they own, or pointers that are not
        // live objects of this cache on purpose.
        unsafe { (**self).free(o) }
    }

    fn free_bulk(&self, v: &mut [*mut u8]) {
        // SAFETY: as for `free`.
        unsafe { (**self).free_bulk(v) }
    }
}

fn tag(obj: *mut u8, size: usize, v: u64) {
    let n = size.min(8);
    // SAFETY: `obj` is an allocated object of at least `n` bytes.
    unsafe { std::ptr::copy_nonoverlapping(v.to_le_bytes().as_ptr(), obj, n) };
}

fn read_tag(obj: *mut u8, size: usize) -> u64 {
    let mut b = [0u8; 8];
    let n = size.min(8);
    // SAFETY: as above.
    unsafe { std::ptr::copy_nonoverlapping(obj, b.as_mut_ptr(), n) };
    u64::from_le_bytes(b) & if n == 8 { u64::MAX } else { (1 << (8 * n)) - 1 }
}

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
    let _m = machine();
    let base = pages();
    for (size, seed) in [(8usize, 1u64), (48, 2), (192, 3), (1000, 4), (4096, 5)] {
        let c = TestCache::new(size, 13, 2, 2);
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
        c.flush_all();
        assert_eq!(c.usage().live_objects, live.len());
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

#[test]
fn partial_fill_stops_when_moved_exceeds_half() {
    let _m = machine();
    for ge in [false, true] {
        let c = TestCache::new(256, 30, 5, 0);
        // Node partial lists only: no CPU partials while setting up.
        c.set_cpu_partial(0);
        let keep = partial_slabs(&c, 12);
        c.flush_all();
        c.set_cpu_partial(30);
        c.set_fill_ge(ge);
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
    let _m = machine();
    let base = pages();
    let c = Arc::new(TestCache::new(96, 13, 2, 2));
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
                // SAFETY: enter/exit pair on this thread.
                unsafe { shim::rslub_host_enter(t as u32) };
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
                            // SAFETY: move to another CPU.
                            unsafe { shim::rslub_host_yield(rng.below(CPUS as usize) as u32) };
                        }
                    }
                }
                for (o, v) in mine {
                    bad += usize::from(read_tag(o as *mut u8, 96) != v);
                    c.free(o as *mut u8);
                }
                // SAFETY: as above.
                unsafe { shim::rslub_host_exit() };
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
