// SPDX-License-Identifier: GPL-2.0
//! Host tests of double frees through `free_bulk`: an object named twice in
//! one batch, or named in a batch while it already heads the freelist it
//! would be pushed onto. Each is reported once, the other objects of the
//! batch are freed, and the cache stays sound: every object handed out
//! afterwards is distinct and the cache is destroyed with nothing in use.

use crate::test_util::{alloc_on, machine, on_cpu, reports, TestCache};
use std::collections::HashSet;

/// Allocates `n` objects on `cpu`, asserts they are distinct (a looped
/// freelist hands one object out again and again), and frees them.
fn assert_distinct(c: &TestCache, cpu: u32, n: usize) {
    let objs = alloc_on(c, cpu, n);
    let set: HashSet<usize> = objs.iter().map(|&o| o as usize).collect();
    assert_eq!(set.len(), n, "an object handed out twice");
    on_cpu(cpu, || objs.iter().for_each(|&o| c.free(o)));
}

/// Ends a test: the cache is sound and nothing is left in use.
fn finish(c: TestCache) {
    assert_eq!(c.validate(), 0);
    assert_eq!(c.destroy(), Ok(()), "objects left in use (lost)");
}

/// The reported seed: `free(a)` puts `a` at the head of the CPU freelist,
/// then `free_bulk({x, a})` pushes the chain `x -> a` onto it. Without the
/// check on the chain's tail, `a`'s next pointer becomes `a`.
#[test]
fn bulk_tail_at_the_cpu_freelist_head_is_refused() {
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    let objs = alloc_on(&c, 0, 4);
    let (a, x) = (objs[0], objs[1]);
    let r0 = reports();
    on_cpu(0, || {
        c.free(a);
        c.free_bulk(&mut [x, a]);
    });
    assert_eq!(c.errors(), 1, "double free not reported");
    assert_eq!(reports() - r0, 1);
    assert_distinct(&c, 0, 16);
    on_cpu(0, || objs[2..].iter().for_each(|&o| c.free(o)));
    finish(c);
}

/// The chain's head, and an object in its middle, at the head of the CPU
/// freelist: refused the same way.
#[test]
fn bulk_member_at_the_cpu_freelist_head_is_refused() {
    let _m = machine();
    for pos in 0..3 {
        let c = TestCache::new(64, 30, 5, 2);
        let objs = alloc_on(&c, 0, 5);
        on_cpu(0, || {
            c.free(objs[pos]);
            c.free_bulk(&mut [objs[0], objs[1], objs[2]]);
        });
        assert_eq!(c.errors(), 1, "position {pos}: double free not reported");
        assert_distinct(&c, 0, 16);
        on_cpu(0, || objs[3..].iter().for_each(|&o| c.free(o)));
        finish(c);
    }
}

/// One object named twice in a batch, not side by side: on the CPU slab,
/// on a slab another CPU holds (a remote free), and on a node-partial slab.
#[test]
fn bulk_naming_an_object_twice_is_refused() {
    let _m = machine();
    // (CPU the objects come from, CPU that frees, cpu_partial)
    for (from, by, cpu_partial) in [(0, 0, 30), (0, 1, 30), (0, 1, 0)] {
        let c = TestCache::new(64, cpu_partial, 5, 2);
        let objs = alloc_on(&c, from, 6);
        if cpu_partial == 0 {
            // Move CPU 0 to a new slab, so that the first one is on its
            // node's partial list after the frees below.
            let rest = alloc_on(&c, from, 64);
            on_cpu(from, || rest.iter().for_each(|&o| c.free(o)));
        }
        let what = format!("objects of CPU {from} freed on CPU {by}, cpu_partial {cpu_partial}");
        on_cpu(by, || {
            c.free_bulk(&mut [objs[0], objs[1], objs[2], objs[0]]);
        });
        assert_eq!(c.errors(), 1, "{what}: double free not reported");
        on_cpu(by, || {
            c.free_bulk(&mut [objs[3], objs[4], objs[3], objs[5]])
        });
        assert_eq!(c.errors(), 2, "{what}: second double free not reported");
        assert_distinct(&c, from, 24);
        assert_distinct(&c, by, 24);
        finish(c);
    }
}

/// A remote bulk free whose tail, or middle object, already heads the
/// slab's freelist.
#[test]
fn remote_bulk_member_at_the_slab_freelist_head_is_refused() {
    let _m = machine();
    for pos in 0..3 {
        let c = TestCache::new(64, 30, 5, 2);
        let objs = alloc_on(&c, 0, 6);
        on_cpu(1, || {
            c.free(objs[pos]);
            c.free_bulk(&mut [objs[0], objs[1], objs[2]]);
        });
        assert_eq!(c.errors(), 1, "position {pos}: double free not reported");
        assert_distinct(&c, 0, 24);
        on_cpu(0, || objs[3..].iter().for_each(|&o| c.free(o)));
        finish(c);
    }
}

/// Small objects (hundreds per slab): a whole slab's worth freed in one
/// batch is no false report, and a duplicate far apart in such a batch
/// (more than 64 objects between the two) is caught.
#[test]
fn long_bulk_chains_check_exactly() {
    let _m = machine();
    let c = TestCache::new(8, 30, 5, 2);
    let per_slab = c.layout.objects;
    assert!(per_slab > 256, "8-byte objects: {per_slab} a slab");
    let mut objs = alloc_on(&c, 0, 2 * per_slab);
    let keep = objs.clone();
    on_cpu(0, || c.free_bulk(&mut objs));
    assert_eq!(c.errors(), 0, "a batch without duplicates reported");
    assert_distinct(&c, 0, 2 * per_slab);

    let objs = alloc_on(&c, 1, per_slab);
    let mut batch = objs.clone();
    batch.insert(200, objs[10]);
    on_cpu(1, || c.free_bulk(&mut batch));
    assert_eq!(c.errors(), 1, "a duplicate 190 objects apart not reported");
    assert_distinct(&c, 1, per_slab);
    drop(keep);
    finish(c);
}

/// A caller freeing bad pointers in a loop: every one is counted, but the
/// log gets the first `REPORTS_IN_FULL` and then only the errors numbered
/// by a power of two (16, 32, ..., 512 of 1000), and the cache still works.
#[test]
fn a_flood_of_bad_frees_leaves_a_bounded_log() {
    use crate::slub::REPORTS_IN_FULL;
    let _m = machine();
    let c = TestCache::new(64, 30, 5, 2);
    let objs = alloc_on(&c, 0, 2);
    let r0 = reports();
    on_cpu(0, || {
        for _ in 0..1000 {
            // An interior pointer: refused every time.
            c.free(objs[0].wrapping_add(8));
        }
    });
    assert_eq!(c.errors(), 1000);
    let thinned = (REPORTS_IN_FULL + 1..=1000)
        .filter(|n| n.is_power_of_two())
        .count();
    assert_eq!(thinned, 6);
    assert_eq!(
        reports() - r0,
        (REPORTS_IN_FULL + thinned) as i64,
        "log lines for 1000 bad frees"
    );
    on_cpu(0, || objs.iter().for_each(|&o| c.free(o)));
    assert_distinct(&c, 0, 16);
    finish(c);
}

/// Small objects (more than 64 a slab, so the filter is inexact): a batch
/// of 64 consecutive objects puts its first on the bit of the CPU
/// freelist's head (index + 64). The batch is freed whole; the same batch
/// with its first object named again, or with the freelist's head itself
/// added, is refused for that object only. Batches of more than 64 take
/// the exact set from the start (`free_bulk_exact`), those of up to 64
/// the filter and its settling of a guard's bit (`settle_guard_bit`): each
/// case runs with the 64 objects and with the first 63 (the 64th freed
/// after), so that each way meets it.
#[test]
fn bulk_frees_of_64_small_objects_across_a_guard_bit() {
    let _m = machine();
    let c = TestCache::new(8, 30, 5, 0);
    assert!(c.layout.objects > 64);
    for n in [64, 63] {
        for extra in [None, Some(0usize), Some(usize::MAX)] {
            let objs = alloc_on(&c, 0, 64);
            let head = alloc_on(&c, 0, 1)[0];
            // `head` goes back first: it heads the CPU freelist, the guard.
            on_cpu(0, || c.free(head));
            let errors = c.errors();
            let mut batch = objs[..n].to_vec();
            match extra {
                Some(0) => batch.push(objs[0]),
                Some(_) => batch.push(head),
                None => {}
            }
            on_cpu(0, || c.free_bulk(&mut batch));
            on_cpu(0, || objs[n..].iter().for_each(|&o| c.free(o)));
            assert_eq!(
                c.errors(),
                errors + usize::from(extra.is_some()),
                "{n} {extra:?}"
            );
            assert_distinct(&c, 0, 130);
        }
    }
    finish(c);
}

/// The same batch of 64 small objects, with an object named after its
/// first object in the array, on the bit that object shares with the CPU
/// freelist's head: the head itself, the first object again, or another
/// object of that bit (index 128); or the first object named last too, so
/// that the chain starts with the head's bit. These are the cases the
/// settling of a guard's bit (`settle_guard_bit`, batches of up to 64)
/// and the exact set (`free_bulk_exact`, more than 64) must get right
/// (docs/history/benchmarks-history.md, "bulk 64, the guard's bit"): each
/// runs with the 64 objects and with
/// the first 63 (the 64th freed after). Each double free is reported once,
/// the other object is freed, and the cache stays sound.
#[test]
fn bulk_frees_of_64_small_objects_and_one_more_on_the_shared_bit() {
    let _m = machine();
    for n in [64, 63] {
        for case in 0..4 {
            let c = TestCache::new(8, 30, 5, 0);
            let objs = alloc_on(&c, 0, 64);
            let head = alloc_on(&c, 0, 1)[0];
            let more = alloc_on(&c, 0, 64);
            let stride = objs[1] as usize - objs[0] as usize;
            assert_eq!(
                more[63] as usize - objs[0] as usize,
                128 * stride,
                "one fresh slab, handed out in address order"
            );
            on_cpu(0, || c.free(head));
            let errors = c.errors();
            let first = &objs[..n];
            let mut batch = match case {
                // The head between the first object and the rest.
                0 => [&first[..1], &[head], &first[1..]].concat(),
                // The first object twice, the second before the first.
                1 => [&first[..1], first].concat(),
                // Object 128, a bit shared with object 0 and the head.
                2 => [&more[63..], first].concat(),
                // The first object at both ends: the chain starts with it.
                _ => [first, &first[..1]].concat(),
            };
            on_cpu(0, || c.free_bulk(&mut batch));
            on_cpu(0, || objs[n..].iter().for_each(|&o| c.free(o)));
            assert_eq!(
                c.errors(),
                errors + usize::from(case != 2),
                "{n}, case {case}"
            );
            let rest = if case == 2 { &more[..63] } else { &more[..] };
            on_cpu(0, || rest.iter().for_each(|&o| c.free(o)));
            assert_distinct(&c, 0, 200);
            finish(c);
        }
    }
}

/// The other guard: the slab's own freelist head. A slab of more than 64
/// small objects is CPU 0's slab; another CPU frees one of its objects,
/// which then heads the slab's freelist (not the CPU freelist). CPU 0
/// bulk-frees 64 (or 63) of its objects with that one among them, on the
/// bit it shares with the first. Both ways of settling a shared bit must
/// compare with both guards: the settling of a guard's bit (up to 64
/// objects) and the exact set (more than 64). Compared with the CPU
/// freelist's head alone, the object was linked into the chain and counted
/// free twice (`inuse` underflowed).
#[test]
fn bulk_frees_naming_the_slab_freelist_head_are_refused() {
    let _m = machine();
    for n in [64, 63] {
        let c = TestCache::new(8, 30, 5, 0);
        assert!(c.layout.objects > 130);
        let objs = alloc_on(&c, 0, 64);
        let head = alloc_on(&c, 0, 1)[0];
        let stride = objs[1] as usize - objs[0] as usize;
        assert_eq!(
            head as usize - objs[0] as usize,
            64 * stride,
            "one fresh slab, handed out in address order"
        );
        // Freed from CPU 1 into CPU 0's slab: it heads the slab freelist.
        on_cpu(1, || c.free(head));
        let errors = c.errors();
        let mut batch = [&objs[..1], &[head], &objs[1..n]].concat();
        on_cpu(0, || c.free_bulk(&mut batch));
        on_cpu(0, || objs[n..].iter().for_each(|&o| c.free(o)));
        assert_eq!(
            c.errors(),
            errors + 1,
            "{n}: the double free was not reported"
        );
        assert_distinct(&c, 0, 200);
        finish(c);
    }
}

/// The simulated interrupt of the next test: frees one object the test
/// named (a double free: the object is also in the batch being freed),
/// unless the batch's chain is being pushed or on the CPU freelist already
/// (the push writes the chain's tail, whose bytes the test filled with
/// `FILL`): an object freed twice deeper in a freelist than its head is
/// beyond the hardened check, here as in-tree. No asserts here: a panic
/// cannot unwind through the C twin.
struct FreeInIrq {
    cache: *const crate::slub::Cache<crate::host::Host>,
    obj: *mut u8,
    tail: *const [u8; 64],
    freed: bool,
}

const FILL: u8 = 0x5a;

extern "C" fn free_in_irq(arg: *mut core::ffi::c_void) {
    // SAFETY: `arg` is the test's `FreeInIrq`, alive while the hook is
    // pending; the cache outlives the hook.
    let w = unsafe { &mut *arg.cast::<FreeInIrq>() };
    // SAFETY: an object of the batch, allocated or free: its memory is
    // the slab's.
    if unsafe { *w.tail } != [FILL; 64] {
        return;
    }
    w.freed = true;
    // SAFETY: a double free on purpose, which the cache must refuse or
    // catch at the push.
    unsafe { (*w.cache).free(w.obj) };
}

/// A bulk free of three objects of the CPU slab, with an interrupt at every
/// interruptible point of it that frees the chain's middle object on the
/// same CPU. Before the chain is gathered the batch names a free object;
/// after the push the interrupt's free is the double one; in between the
/// middle object heads the CPU freelist when the chain is pushed, and the
/// push must find it in the chain (a chain of three is not short enough to
/// skip its bit test: only chains of one or two have no member but their
/// ends). Each way one report, and no object is handed out twice
/// afterwards.
#[test]
fn an_interrupt_freeing_a_chain_member_before_the_push_is_caught() {
    use crate::host::shim;
    let _m = machine();
    let mut fired = 0;
    for k in 0u32.. {
        let c = TestCache::new(64, 30, 5, 0);
        let objs = alloc_on(&c, 0, 3);
        for &o in &objs {
            // SAFETY: allocated above, 64 bytes.
            unsafe { o.write_bytes(FILL, 64) };
        }
        // The batch's last object starts the chain: its tail.
        let mut irq = FreeInIrq {
            cache: c.0,
            obj: objs[1],
            tail: objs[2].cast(),
            freed: false,
        };
        // SAFETY: `irq` outlives the hook: it fires during the bulk free
        // or is cleared below.
        unsafe {
            shim::rslub_host_set_irq_at_call(
                Some(free_in_irq),
                std::ptr::from_mut(&mut irq).cast(),
                k,
            )
        };
        on_cpu(0, || c.free_bulk(&mut objs.clone()));
        // SAFETY: a query of this thread's hook, then it is cleared.
        let pending = unsafe { shim::rslub_host_irq_pending() };
        // SAFETY: as above.
        unsafe { shim::rslub_host_set_irq_at_call(None, std::ptr::null_mut(), 0) };
        if pending {
            // The bulk free ended before the k-th point: every point seen.
            assert_eq!(c.errors(), 0);
            assert_distinct(&c, 0, 100);
            finish(c);
            break;
        }
        if !irq.freed {
            // After the push: nothing was freed twice.
            assert_eq!(c.errors(), 0, "interrupt at call {k}");
            assert_distinct(&c, 0, 100);
            finish(c);
            continue;
        }
        fired += 1;
        assert_eq!(
            c.errors(),
            1,
            "interrupt at call {k}: the double free not reported once"
        );
        assert_distinct(&c, 0, 100);
        assert_eq!(c.validate(), 0, "interrupt at call {k}");
        // A chain dropped at the push stays counted in use: leaked.
        let _ = c.destroy();
        assert!(k < 1000, "the bulk free never ends");
    }
    assert!(fired >= 3, "only {fired} interrupt points were swept");
}
