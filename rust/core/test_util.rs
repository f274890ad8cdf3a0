// SPDX-License-Identifier: GPL-2.0
//! Helpers shared by the host tests: a PRNG, the simulated machine, and a
//! cache wrapper.
//!
//! A test that fails must fail fast and alone: it runs "on" a simulated CPU
//! only through [`OnCpu`] (or [`on_cpu`]), whose drop releases the CPU also
//! when the test panics, and [`machine`] puts every knob of the twin back to
//! its default before each test, so one failure does not hang or break the
//! tests after it. (The twin also releases a CPU whose holder died, and
//! aborts with a message when a CPU stays held for 20 s.)

use crate::host::{shim, Host};
use crate::layout::{Layout, LayoutRequest};
use crate::slab::HEADER_SIZE;
use crate::slub::{Cache, Params};
use crate::stat::Stat;
use std::sync::{Mutex, MutexGuard, Once};

/// A tiny deterministic PRNG (xorshift) so failures replay.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `GFP_KERNEL` as the host machine reads it (direct + kswapd reclaim).
pub(crate) const GFP_KERNEL: u32 = 0x400 | 0x800;
/// `GFP_ATOMIC`-like: no direct reclaim, so pages are allocated with the
/// CPU lock held.
pub(crate) const GFP_NOWAIT: u32 = 0x800;
/// `__GFP_ZERO` in the host machine.
pub(crate) const GFP_ZERO: u32 = 0x100;
/// `__GFP_THISNODE` in the host machine.
pub(crate) const GFP_THISNODE: u32 = 0x200000;
/// `__GFP_NOMEMALLOC` in the host machine.
pub(crate) const GFP_NOMEMALLOC: u32 = 0x10000;
/// `__GFP_NORETRY | __GFP_NOWARN` in the host machine.
pub(crate) const GFP_LIGHT: u32 = 0x30000000;
/// Simulated CPUs; CPU `n` is on node `n % 2`.
pub(crate) const CPUS: u32 = 4;

/// The host machine is global: tests that use it run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
static CONFIGURE: Once = Once::new();

/// Takes the machine for one test (4 CPUs, 2 nodes), with every knob of
/// the twin at its default.
pub(crate) fn machine() -> MutexGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: configuration before any cache exists.
    CONFIGURE.call_once(|| unsafe { shim::rslub_host_configure(CPUS, 2) });
    // SAFETY: no thread of this test is on a CPU yet.
    unsafe { shim::rslub_host_reset() };
    g
}

/// Allocates `n` objects of `c` on `cpu` (none may fail).
pub(crate) fn alloc_on(c: &TestCache, cpu: u32, n: usize) -> Vec<*mut u8> {
    on_cpu(cpu, || {
        (0..n)
            .map(|_| {
                let o = c.alloc(GFP_KERNEL, -1);
                assert!(!o.is_null());
                o
            })
            .collect()
    })
}

/// This thread runs on a simulated CPU until the value is dropped (on
/// unwinding too, so a failed assertion does not leave the CPU held).
pub(crate) struct OnCpu(());

impl OnCpu {
    pub(crate) fn enter(cpu: u32) -> Self {
        // SAFETY: paired with the exit in `drop`.
        unsafe { shim::rslub_host_enter(cpu) };
        OnCpu(())
    }
}

impl Drop for OnCpu {
    fn drop(&mut self) {
        // SAFETY: the thread entered a CPU in `enter` (and may have moved
        // since with `rslub_host_yield`, which keeps it on one).
        unsafe { shim::rslub_host_exit() };
    }
}

/// Runs `f` on simulated CPU `cpu`.
pub(crate) fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> R {
    let _cpu = OnCpu::enter(cpu);
    f()
}

/// Page blocks the twin has handed out and not got back.
pub(crate) fn pages() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_pages_in_use() as i64 }
}

/// Problems reported so far.
pub(crate) fn reports() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_reports() as i64 }
}

pub(crate) struct TestCache(pub(crate) *mut Cache<Host>);

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
    pub(crate) fn new(size: usize, cpu_partial: u32, min_partial: u32, max_empty: u32) -> Self {
        Self::with(size, cpu_partial, min_partial, max_empty, 0, true)
    }

    /// A cache with debug features `debug` (`debug::*` bits) and hardening.
    pub(crate) fn with(
        size: usize,
        cpu_partial: u32,
        min_partial: u32,
        max_empty: u32,
        debug: u32,
        harden: bool,
    ) -> Self {
        Self::build(
            size,
            cpu_partial,
            min_partial,
            max_empty,
            debug,
            harden,
            false,
        )
    }

    /// A cache of `size`-byte objects with a fallback of the smallest
    /// order (as the C API gives one: `fallback.rs`), `max_empty` 0.
    pub(crate) fn with_fallback(size: usize) -> Self {
        let req = LayoutRequest {
            header_outside_ok: true,
            ..LayoutRequest::plain(size, 0, 4096, HEADER_SIZE)
        };
        let layout = Layout::new(&req).unwrap();
        let smallest = Layout::new(&LayoutRequest {
            smallest: true,
            header_outside_ok: false,
            ..req
        })
        .unwrap();
        assert!(
            smallest.order < layout.order,
            "{size}-byte objects need no fallback"
        );
        let params = Self::params(0, 0, 0, 0, true, false);
        let c = Cache::<Host>::create(b"fallback", 0, layout, None, params);
        assert!(!c.is_null());
        // SAFETY: just created, unused.
        assert!(unsafe { Cache::attach_fallback(c, smallest, params, GFP_LIGHT) });
        TestCache(c)
    }

    /// A `SLAB_TYPESAFE_BY_RCU` cache with debug features `debug`, no CPU
    /// partial lists and no minimum of partial slabs: an empty slab goes to
    /// the empty-slab cache (`max_empty`) or is freed.
    pub(crate) fn typesafe_rcu(size: usize, max_empty: u32, debug: u32) -> Self {
        Self::build(size, 0, 0, max_empty, debug, true, true)
    }

    fn build(
        size: usize,
        cpu_partial: u32,
        min_partial: u32,
        max_empty: u32,
        debug: u32,
        harden: bool,
        typesafe_rcu: bool,
    ) -> Self {
        let layout = Layout::new(&LayoutRequest {
            rcu_readers: typesafe_rcu,
            red_zone: debug & crate::debug::RED_ZONE != 0,
            poison: debug & crate::debug::POISON != 0,
            store_user: debug & crate::debug::STORE_USER != 0,
            // As the C API asks (rust/api.rs).
            header_outside_ok: debug == 0,
            ..LayoutRequest::plain(size, 0, 4096, HEADER_SIZE)
        })
        .unwrap();
        let params = Self::params(
            cpu_partial,
            min_partial,
            max_empty,
            debug,
            harden,
            typesafe_rcu,
        );
        let c = Cache::<Host>::create(b"test", 0, layout, None, params);
        assert!(!c.is_null());
        TestCache(c)
    }

    /// The tunables of a test cache.
    fn params(
        cpu_partial: u32,
        min_partial: u32,
        max_empty: u32,
        debug: u32,
        harden: bool,
        typesafe_rcu: bool,
    ) -> Params {
        Params {
            cpu_partial,
            min_partial,
            max_empty,
            // The classic policy unless a test turns batching on.
            #[cfg(rslub_free_batch)]
            free_batch: 0,
            gfp_zero: GFP_ZERO,
            gfp_thisnode: GFP_THISNODE,
            gfp_nomemalloc: GFP_NOMEMALLOC,
            debug,
            harden,
            random_freelist: false,
            typesafe_rcu,
        }
    }

    pub(crate) fn destroy(self) -> Result<(), usize> {
        // Destroy flushes all CPUs, which the host does from off-CPU.
        // SAFETY: nothing else uses the cache now.
        unsafe { Cache::destroy(self.0) }
    }

    pub(crate) fn stat(&self, s: Stat) -> usize {
        self.stat_total(s, &mut [])
    }

    /// Frees an object the test owns (or a bad pointer it wants reported).
    pub(crate) fn free(&self, o: *mut u8) {
        // SAFETY: tests free only objects they own, or pointers that are not
        // live objects of this cache on purpose.
        unsafe { (**self).free(o) }
    }

    pub(crate) fn free_bulk(&self, v: &mut [*mut u8]) {
        // SAFETY: as for `free`.
        unsafe { (**self).free_bulk(v) }
    }

    /// Sets `free_batch`: batched frees exist only in the `free_batch`
    /// build variant (`--cfg rslub_free_batch`); without it 0, classic
    /// frees, is all there is.
    pub(crate) fn batch_frees(&self, free_batch: u32) {
        #[cfg(rslub_free_batch)]
        self.set_free_batch(free_batch);
        #[cfg(not(rslub_free_batch))]
        assert_eq!(free_batch, 0, "batched frees need --cfg rslub_free_batch");
    }
}

/// Writes `v` into the first bytes of `obj`.
pub(crate) fn tag(obj: *mut u8, size: usize, v: u64) {
    let n = size.min(8);
    // SAFETY: `obj` is an allocated object of at least `n` bytes.
    unsafe { std::ptr::copy_nonoverlapping(v.to_le_bytes().as_ptr(), obj, n) };
}

/// Reads back what `tag` wrote.
pub(crate) fn read_tag(obj: *mut u8, size: usize) -> u64 {
    let mut b = [0u8; 8];
    let n = size.min(8);
    // SAFETY: as above.
    unsafe { std::ptr::copy_nonoverlapping(obj, b.as_mut_ptr(), n) };
    u64::from_le_bytes(b) & if n == 8 { u64::MAX } else { (1 << (8 * n)) - 1 }
}
