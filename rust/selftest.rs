// SPDX-License-Identifier: GPL-2.0
//! KUnit suite `rslub_percpu`: what only the running kernel can show. The
//! host machine (rust/core) runs the algorithm over threads standing in for
//! CPUs; it cannot see the real per-CPU operations (c_shim/shim_hot.c,
//! inlined into this object on a RUST_INLINE_HELPERS kernel), the tids of
//! real CPUs, or a CPU really going offline. The suite is part of rslub.ko
//! (it needs the core's types), so kunit runs it at every load of the
//! module; the guest scripts run it once per VM (scripts/guest/kunit.sh
//! writes kunit's `filter_glob` after the first load).
//!
//! Asserts run in the test thread only, never with the CPU lock held: the
//! locked sections record what they saw and the test asserts afterwards.

#[kernel::macros::kunit_tests(rslub_percpu)]
mod tests {
    use crate::api::{self, Cache};
    use crate::kplat::Kernel;
    use crate::platform::Platform;
    use crate::shim;
    use crate::slub::CpuSlab;
    #[cfg(rslub_free_batch)]
    use crate::slub::FREE_BATCH_MAX;
    use core::ptr;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use kernel::bindings;
    use kernel::prelude::*;

    /// The gfp flags as the core takes them (raw `gfp_t`).
    const GFP_SLEEP: u32 = bindings::GFP_KERNEL;
    const GFP_NOSLEEP: u32 = bindings::GFP_ATOMIC;

    /// A cache made through the C API (so it is registered, and the CPU
    /// hotplug callback sees it), destroyed on drop.
    struct TestCache(*mut Cache);

    impl TestCache {
        fn new(name: &CStr, size: u32) -> Result<Self> {
            // SAFETY: `name` is NUL-terminated; no constructor.
            let s = unsafe { api::rslub_cache_create(name.as_char_ptr().cast(), size, 0, 0, None) };
            Ok(TestCache(kernel::error::from_err_ptr(s)?))
        }
    }

    impl core::ops::Deref for TestCache {
        type Target = Cache;

        fn deref(&self) -> &Cache {
            // SAFETY: created in `new`, destroyed only by `drop`.
            unsafe { &*self.0 }
        }
    }

    impl Drop for TestCache {
        fn drop(&mut self) {
            // SAFETY: a live cache of this test; nothing uses it after.
            unsafe { api::rslub_cache_destroy(self.0) };
        }
    }

    /// Reads the `(freelist, tid)` pair of a `CpuSlab`.
    ///
    /// # Safety
    /// `c` is a `CpuSlab` of a live cache.
    unsafe fn read_pair(c: *const CpuSlab) -> [usize; 2] {
        // SAFETY: per the caller; aligned words, read whole.
        unsafe {
            [
                ptr::read_volatile(ptr::addr_of!((*c).freelist)) as usize,
                ptr::read_volatile(ptr::addr_of!((*c).tid)),
            ]
        }
    }

    /// Possible CPU ids.
    fn possible_cpus() -> impl Iterator<Item = u32> {
        (0..Kernel::nr_cpu_ids()).filter(|&c| Kernel::cpu_possible(c))
    }

    /// The first possible CPU whose tid is not its id modulo the step,
    /// as `(cpu, tid)`. (Divisions here are checked ones: a panicking
    /// division leaves a path objtool reports as falling through.)
    fn tid_violation(cache: &Cache) -> Option<(u32, usize)> {
        possible_cpus().find_map(|cpu| {
            let (c, step) = cache.cpu_state(cpu);
            // SAFETY: a live cache's CpuSlab, read racily.
            let tid = unsafe { read_pair(c)[1] };
            (tid.checked_rem(step) != Some(cpu as usize)).then_some((cpu, tid))
        })
    }

    /// Transactions done by all CPUs on `cache` (tids start at the CPU id).
    fn tid_progress(cache: &Cache) -> usize {
        possible_cpus()
            .map(|cpu| {
                let (c, step) = cache.cpu_state(cpu);
                // SAFETY: a live cache's CpuSlab, read racily.
                let tid = unsafe { read_pair(c)[1] };
                tid.wrapping_sub(cpu as usize)
                    .checked_div(step)
                    .unwrap_or(0)
            })
            .sum()
    }

    /// Marks the running test skipped with `reason` (kunit_mark_skipped).
    fn skip(reason: &str) {
        // SAFETY: no requirements; null outside a KUnit test thread.
        let t = unsafe { bindings::kunit_get_current_test() };
        if t.is_null() {
            return;
        }
        // SAFETY: `t` is the current test, written only by its own thread,
        // which this is; the comment keeps its terminating NUL.
        unsafe {
            let comment = &mut (*t).status_comment;
            let n = reason.len().min(comment.len() - 1);
            for (dst, &b) in comment.iter_mut().zip(&reason.as_bytes()[..n]) {
                *dst = b;
            }
            comment[n] = 0;
            (*t).status = bindings::kunit_status_KUNIT_SKIPPED;
        }
    }

    /// Skips the running test, saying why, when the module was loaded with
    /// `debug=`: its caches then take the debug paths, never the per-CPU
    /// fast path whose tids and CPU slabs the test looks at.
    fn skip_without_fast_path() -> bool {
        let on = crate::consts().debug_default != 0;
        if on {
            skip("rslub.ko loaded with debug=: debug caches take no per-CPU fast path");
        }
        on
    }

    /// A 16-byte aligned pair in ordinary memory. Never a stack local:
    /// x86_64 kernels keep the stack 8-byte aligned, so a local's
    /// `align(16)` does not hold there (a `lock cmpxchg16b` on one faulted
    /// on a GCC-built kernel); it lives in a `KBox` (kmalloc: natural
    /// alignment for a 16-byte object).
    #[repr(C, align(16))]
    struct Pair([usize; 2]);

    /// With the CPU lock held, `this_cpu_ptr` is `per_cpu_ptr` of the CPU;
    /// the per-CPU cmpxchg16b succeeds on the current value, writes both
    /// words and touches no other CPU's pair, and fails without a write
    /// when either word is stale; its locked form (the `locked_cmpxchg`
    /// build variant) and the locked cmpxchg16b on ordinary memory do the
    /// same.
    #[test]
    fn percpu_ops() -> Result {
        const NEW: [usize; 2] = [0x1111_2222_3333_4440, 0x5555_6666_7777_8880];
        const OTHER: [usize; 2] = [0x0bad_0bad_0bad_0ba0, 0x0bad_0bad_0bad_0bb0];
        let sentinel = |cpu: u32| [0xa5a5_0000 + cpu as usize, 0x5a5a_0000 + cpu as usize];
        let p = Kernel::alloc_percpu(16, 16);
        if p == 0 {
            return Err(ENOMEM);
        }
        for cpu in possible_cpus() {
            // SAFETY: every possible CPU's 16 bytes of the fresh area.
            unsafe {
                Kernel::per_cpu_ptr(p, cpu)
                    .cast::<[usize; 2]>()
                    .write(sentinel(cpu))
            };
        }
        let (cpu, token) = Kernel::cpu_lock();
        let this = Kernel::this_cpu_ptr(p);
        let mine = Kernel::per_cpu_ptr(p, cpu).cast::<[usize; 2]>();
        let cur = sentinel(cpu);
        // SAFETY: `p` is the live 16-byte area allocated above, 16-byte
        // aligned (so for the per-CPU cmpxchg16b below too).
        let ok_current = unsafe { Kernel::this_cpu_cmpxchg_pair(p, cur, NEW) };
        // SAFETY: this CPU's pair of the live area; irqs are off, nothing
        // else writes it.
        let after_ok = unsafe { mine.read_volatile() };
        // SAFETY: as above.
        let stale_word0 = unsafe { Kernel::this_cpu_cmpxchg_pair(p, [cur[0], NEW[1]], OTHER) };
        // SAFETY: as above.
        let stale_word1 = unsafe { Kernel::this_cpu_cmpxchg_pair(p, [NEW[0], cur[1]], OTHER) };
        // SAFETY: this CPU's pair of the live area, under its lock.
        let after_stale = unsafe { mine.read_volatile() };
        // SAFETY: as above.
        let locked_ok = unsafe { Kernel::this_cpu_cmpxchg_pair_locked(p, NEW, cur) };
        let locked_stale =
            // SAFETY: as above.
            unsafe { Kernel::this_cpu_cmpxchg_pair_locked(p, [cur[0], NEW[1]], OTHER) };
        // SAFETY: as above.
        let after_locked = unsafe { mine.read_volatile() };
        Kernel::cpu_unlock(token);
        let others_kept = possible_cpus().filter(|&c| c != cpu).all(|c| {
            // SAFETY: another CPU's pair of the live area; nothing writes it.
            unsafe { Kernel::per_cpu_ptr(p, c).cast::<[usize; 2]>().read() == sentinel(c) }
        });
        // SAFETY: allocated above, no longer used.
        unsafe { Kernel::free_percpu(p) };

        assert_eq!(this as usize, mine as usize);
        assert_eq!(mine as usize % 16, 0);
        assert!(ok_current);
        assert_eq!(after_ok, NEW);
        assert!(!stale_word0);
        assert!(!stale_word1);
        assert_eq!(after_stale, NEW);
        assert!(locked_ok);
        assert!(!locked_stale);
        assert_eq!(after_locked, cur);
        assert!(others_kept);

        let mut pair = KBox::new(Pair([1, 2]), GFP_KERNEL)?;
        let q = ptr::addr_of_mut!(pair.0);
        assert_eq!(q as usize % 16, 0);
        // SAFETY: `q` is a valid, 16-byte aligned pair of a live box.
        let (ok, stale0, stale1) = unsafe {
            (
                Kernel::cmpxchg_pair(q, [1, 2], NEW),
                Kernel::cmpxchg_pair(q, [1, NEW[1]], OTHER),
                Kernel::cmpxchg_pair(q, [NEW[0], 2], OTHER),
            )
        };
        assert!(ok);
        assert!(!stale0);
        assert!(!stale1);
        assert_eq!(pair.0, NEW);
        Ok(())
    }

    /// The read the lockless alloc uses on `DEBUG_PAGEALLOC` kernels:
    /// a mapped word reads as itself, an address that would fault (the
    /// first page, a non-canonical one) reads as None instead of oopsing.
    #[test]
    fn read_word_nofault() -> Result {
        let word: usize = 0x5a5a_1234_a5a5_4321;
        // SAFETY: a live, aligned local.
        let got = unsafe { Kernel::read_word_nofault(&word) };
        assert_eq!(got, Some(word));
        for bad in [0x10usize, 0x8000_0000_0000_0000] {
            // SAFETY: aligned; `read_word_nofault` copes with an unmapped
            // address.
            let got = unsafe { Kernel::read_word_nofault(bad as *const usize) };
            assert_eq!(got, None);
        }
        Ok(())
    }

    /// Every possible CPU's tid is its id modulo the step, a power of two
    /// at least `nr_cpu_ids`: on a new cache, after allocations and frees
    /// (fast and slow paths), after flushing and after shrinking.
    #[test]
    fn tid_unique() -> Result {
        if skip_without_fast_path() {
            return Ok(());
        }
        let cache = TestCache::new(c"rslub_percpu_tid", 64)?;
        let (_, step) = cache.cpu_state(0);
        let fresh = tid_violation(&cache);

        // Several slabs' worth: the slow paths run too (new slabs,
        // deactivation, CPU partials), and they bump the tid as well.
        let n = (3 * cache.layout.objects).min(256);
        let mut objs = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            let o = cache.alloc(GFP_SLEEP, -1);
            if o.is_null() {
                break;
            }
            objs.push(o, GFP_KERNEL)?;
        }
        let allocated = objs.len();
        let after_alloc = tid_violation(&cache);
        // Every second object first, then the rest: frees to the CPU slab
        // and to other slabs.
        for (i, &o) in objs.iter().enumerate() {
            if i % 2 == 0 {
                // SAFETY: allocated above, freed once.
                unsafe { cache.free(o) };
            }
        }
        for (i, &o) in objs.iter().enumerate() {
            if i % 2 == 1 {
                // SAFETY: allocated above, freed once.
                unsafe { cache.free(o) };
            }
        }
        let after_free = tid_violation(&cache);
        let progress = tid_progress(&cache);
        cache.flush_all();
        let after_flush = tid_violation(&cache);
        cache.shrink();
        let after_shrink = tid_violation(&cache);
        drop(cache);

        assert!(step.is_power_of_two());
        assert!(step >= Kernel::nr_cpu_ids() as usize);
        assert_eq!(fresh, None);
        assert_eq!(allocated, n);
        assert!(progress >= n);
        assert_eq!(after_alloc, None);
        assert_eq!(after_free, None);
        assert_eq!(after_flush, None);
        assert_eq!(after_shrink, None);
        Ok(())
    }

    /// The fast path's commit with a stale snapshot fails: with this CPU's
    /// `(freelist, tid)` read, an allocation and a free on the same CPU
    /// bring the freelist back to the same head (the ABA case) but advance
    /// the tid, so the per-CPU cmpxchg16b with the snapshot fails, writes
    /// nothing, and the cache stays intact.
    #[test]
    fn stale_tid_fails() -> Result {
        if skip_without_fast_path() {
            return Ok(());
        }
        let cache = TestCache::new(c"rslub_percpu_stale", 64)?;
        let (cpu, token) = Kernel::cpu_lock();
        let (c, step) = cache.cpu_state(cpu);
        // GFP_NOSLEEP (GFP_ATOMIC): irqs are off. The first allocation gives this CPU a
        // slab and a freelist.
        let warm = cache.alloc(GFP_NOSLEEP, -1);
        // SAFETY: this CPU's state, its lock held.
        let snapshot = unsafe { read_pair(c) };
        let o = cache.alloc(GFP_NOSLEEP, -1);
        if !o.is_null() {
            // SAFETY: allocated just now, freed once.
            unsafe { cache.free(o) };
        }
        // SAFETY: as above.
        let current = unsafe { read_pair(c) };
        // What the allocation fast path would commit from the snapshot.
        // SAFETY: the live cache's per-CPU area, whose first 16 bytes are
        // the aligned (freelist, tid) pair.
        let committed = unsafe {
            Kernel::this_cpu_cmpxchg_pair(
                cache.cpu_area(),
                snapshot,
                [0, snapshot[1].wrapping_add(step)],
            )
        };
        // SAFETY: as above.
        let after = unsafe { read_pair(c) };
        Kernel::cpu_unlock(token);

        if !warm.is_null() {
            // SAFETY: allocated above, freed once.
            unsafe { cache.free(warm) };
        }
        let again = cache.alloc(GFP_SLEEP, -1);
        if !again.is_null() {
            // SAFETY: allocated just now, freed once.
            unsafe { cache.free(again) };
        }
        let errors = cache.validate();
        let live = cache.totals().live_objects;
        drop(cache);

        assert!(!warm.is_null());
        assert!(!o.is_null());
        assert_eq!(current[0], snapshot[0]);
        assert!(current[1] != snapshot[1]);
        assert!(!committed);
        assert_eq!(after, current);
        assert!(!again.is_null());
        assert_eq!(errors, 0);
        assert_eq!(live, 0);
        Ok(())
    }

    /// Objects the offline test allocates on the other CPU (at most).
    const OFFLINE_OBJS: usize = 96;

    /// A CPU going offline gives back what it held of every cache: its CPU
    /// slab (with the objects on its lockless freelist), its CPU partial
    /// slabs and, in the `free_batch` build variant, its free batch
    /// (objects freed there that wait to go back to their slabs) go to the
    /// nodes, and no object is lost: the slabs count in use exactly the
    /// objects the test still holds. Skipped, with the reason, when there
    /// is no second CPU or the kernel refuses to take it down.
    #[test]
    fn offline_flushes_cpu() -> Result {
        if skip_without_fast_path() {
            return Ok(());
        }
        // The highest online CPU goes offline (x86 keeps CPU 0), the test
        // thread runs on another one meanwhile.
        let online = |c: &u32| Kernel::cpu_online(*c);
        let (Some(target), Some(here)) = (
            (1..Kernel::nr_cpu_ids()).rev().find(online),
            (0..Kernel::nr_cpu_ids()).find(online),
        ) else {
            skip("needs a second online CPU");
            return Ok(());
        };
        if target == here {
            skip("needs a second online CPU");
            return Ok(());
        }
        // SAFETY: binds the current task (the test thread) to an online CPU.
        if unsafe { shim::rslub_shim_pin_current(here as i32) } != 0 {
            skip("cannot bind the test thread to a CPU");
            return Ok(());
        }
        let result = offline_on(target);
        // SAFETY: lets the test thread run anywhere again.
        unsafe { shim::rslub_shim_pin_current(-1) };
        let Some(r) = result? else {
            skip("remove_cpu refused to take the CPU offline");
            return Ok(());
        };

        assert!(r.allocated);
        assert!(r.had_slab);
        assert!(r.had_partial);
        #[cfg(rslub_free_batch)]
        assert!(r.had_batch);
        assert!(r.flushed);
        #[cfg(rslub_free_batch)]
        assert_eq!(r.batched, 0);
        assert_eq!(r.live, r.held);
        assert_eq!(r.errors, 0);
        assert_eq!(r.up, 0);
        Ok(())
    }

    /// What `offline_on` saw.
    struct Offline {
        /// Every object the test meant to hold was allocated.
        allocated: bool,
        /// `target` had a CPU slab, CPU partial slabs and (`free_batch`
        /// variant) a non-empty free batch before going down.
        had_slab: bool,
        had_partial: bool,
        #[cfg(rslub_free_batch)]
        had_batch: bool,
        /// Its CPU slab, freelist, partial list (and batch) were empty
        /// while down.
        flushed: bool,
        /// While it was down: objects in use by their slabs (live for
        /// their users plus, in the `free_batch` variant, batched; `usage`
        /// tells them apart), and the batched ones; and the objects the
        /// test held.
        live: usize,
        #[cfg(rslub_free_batch)]
        batched: usize,
        held: usize,
        /// `validate` after everything was freed.
        errors: usize,
        /// `add_cpu`'s result.
        up: i32,
    }

    /// Fills `target`'s cached state of a new cache, takes `target` offline
    /// and back online; `None` when `remove_cpu` refused.
    fn offline_on(target: u32) -> Result<Option<Offline>> {
        let cache = TestCache::new(c"rslub_percpu_offline", 256)?;
        // CPU partial slabs whatever `cpu_partial=` rslub was loaded with
        // (0 turns them off): a slab's worth, the size-based default.
        cache.set_cpu_partial(cache.layout.objects as u32);
        let n = (4 * cache.layout.objects).min(OFFLINE_OBJS);
        let objs = KBox::new(
            core::array::from_fn::<_, OFFLINE_OBJS, _>(|_| AtomicUsize::new(0)),
            GFP_KERNEL,
        )?;
        // On `target`, irqs off, with classic frees: allocate several slabs'
        // worth, then free one object of each earlier (now full) slab,
        // which puts that slab on the CPU's partial list, and the last few
        // objects, which go back to the CPU slab's freelist. Then, in the
        // `free_batch` variant, with batched frees, a few more objects of
        // the first slab: they miss the CPU slab and wait in the CPU's
        // batch (fewer than it holds).
        let per_slab = cache.layout.objects;
        let shared: &Cache = &cache;
        let freed_classic = |i: usize| i.checked_rem(per_slab) == Some(0) || i + 3 >= n;
        #[cfg(rslub_free_batch)]
        let freed_batched = |i: usize| (1..per_slab.min(5)).contains(&i);
        #[cfg(not(rslub_free_batch))]
        let freed_batched = |_: usize| false;
        let free_there = |which: &dyn Fn(usize) -> bool| {
            for (i, slot) in objs.iter().enumerate().take(n) {
                let o = slot.load(Ordering::Relaxed) as *mut u8;
                if which(i) && !o.is_null() {
                    slot.store(0, Ordering::Relaxed);
                    // SAFETY: allocated on this CPU, freed once.
                    unsafe { shared.free(o) };
                }
            }
        };
        #[cfg(rslub_free_batch)]
        cache.set_free_batch(0);
        Kernel::for_each_cpu_locked(&|cpu| {
            if cpu == target {
                for slot in objs.iter().take(n) {
                    slot.store(shared.alloc(GFP_NOSLEEP, -1) as usize, Ordering::Relaxed);
                }
                free_there(&freed_classic);
            }
        });
        #[cfg(rslub_free_batch)]
        {
            cache.set_free_batch(FREE_BATCH_MAX as u32);
            Kernel::for_each_cpu_locked(&|cpu| {
                if cpu == target {
                    free_there(&freed_batched);
                }
            });
        }
        let freed_there = |i: usize| freed_classic(i) || freed_batched(i);
        let allocated = objs
            .iter()
            .take(n)
            .enumerate()
            .all(|(i, s)| freed_there(i) || s.load(Ordering::Relaxed) != 0);
        let held = objs
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) != 0)
            .count();
        let (c, _) = cache.cpu_state(target);
        // SAFETY: racy reads of `target`'s state; nothing runs there now
        // that would touch this cache.
        let (had_slab, had_partial) = unsafe {
            (
                !ptr::read_volatile(ptr::addr_of!((*c).slab)).is_null(),
                !ptr::read_volatile(ptr::addr_of!((*c).partial)).is_null(),
            )
        };
        #[cfg(rslub_free_batch)]
        // SAFETY: as above.
        let had_batch = unsafe { ptr::read_volatile(ptr::addr_of!((*c).batch_len)) != 0 };

        // SAFETY: takes the hotplug locks itself; may sleep, as we can.
        let ret = unsafe { bindings::remove_cpu(target) };
        let mut flushed = false;
        let mut live = usize::MAX;
        #[cfg(rslub_free_batch)]
        let mut batched = usize::MAX;
        let mut up = 0;
        if ret == 0 {
            // SAFETY: `target` is offline: nothing writes its state.
            flushed = unsafe {
                (*c).freelist.is_null()
                    && (*c).slab.is_null()
                    && (*c).partial.is_null()
                    && (*c).partial_slabs == 0
            };
            let u = cache.totals();
            live = u.live_objects;
            #[cfg(rslub_free_batch)]
            {
                // SAFETY: as above.
                flushed &= unsafe { (*c).batch_len == 0 };
                live += u.batched_objects;
                batched = u.batched_objects;
            }
            // SAFETY: brings back the CPU taken down above.
            up = unsafe { bindings::add_cpu(target) };
        }
        for slot in objs.iter() {
            let o = slot.swap(0, Ordering::Relaxed) as *mut u8;
            if !o.is_null() {
                // SAFETY: allocated above and still held, freed once.
                unsafe { cache.free(o) };
            }
        }
        let errors = cache.validate();
        if ret != 0 {
            pr_info!("rslub_percpu: remove_cpu({}) returned {}\n", target, ret);
            return Ok(None);
        }
        Ok(Some(Offline {
            allocated,
            had_slab,
            had_partial,
            #[cfg(rslub_free_batch)]
            had_batch,
            flushed,
            live,
            #[cfg(rslub_free_batch)]
            batched,
            held,
            errors,
            up,
        }))
    }
}
