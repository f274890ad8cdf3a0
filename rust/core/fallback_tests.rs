// SPDX-License-Identifier: GPL-2.0
//! Host tests of a cache's fallback (`slub/fallback.rs`): when no page
//! block of the cache's order can be had (the twin fails every request
//! above an order), an allocation takes a slab of the smallest order from
//! the fallback, with the caller's flags, after a light first try; every
//! way an object goes back finds the right cache; bad pointers are still
//! reported; the whole-cache operations take the fallback along.

use crate::host::shim;
use crate::stat::Stat;
use crate::test_util::{
    machine, on_cpu, pages, read_tag, reports, tag, TestCache, GFP_KERNEL, GFP_LIGHT,
    GFP_NOMEMALLOC,
};

fn fail_above(order: i32) {
    // SAFETY: a knob of the twin.
    unsafe { shim::rslub_host_fail_pages_above(order) };
}

fn last_gfp() -> u32 {
    // SAFETY: a query.
    unsafe { shim::rslub_host_last_page_gfp() }
}

#[test]
fn an_allocation_falls_back_to_the_smallest_order() {
    let _m = machine();
    let base = pages();
    let c = TestCache::with_fallback(1024);
    assert!(c.layout.order > 0);
    let fb_objects = c.fallback().unwrap().layout.objects;
    // With room: the cache's own order, asked for lightly.
    let a = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert!(!a.is_null());
    assert_eq!(last_gfp(), GFP_KERNEL | GFP_NOMEMALLOC | GFP_LIGHT);
    assert_eq!(c.fallback_slabs(), 0);
    // Fragmented: nothing above order 0. The CPU 1 slab must be new.
    fail_above(0);
    let objs: Vec<*mut u8> = on_cpu(1, || {
        (0..fb_objects + 1)
            .map(|i| {
                let o = c.alloc(GFP_KERNEL, -1);
                assert!(!o.is_null(), "allocation {i} failed");
                tag(o, 1024, i as u64 + 7);
                o
            })
            .collect()
    });
    assert_eq!(
        last_gfp(),
        GFP_KERNEL | GFP_NOMEMALLOC,
        "the caller's flags, at order 0"
    );
    assert_eq!(c.fallback_slabs(), 2);
    assert_eq!(c.fallback_objects(), fb_objects + 1);
    assert_eq!(c.totals().live_objects, 1, "the cache's own object");
    fail_above(-1);
    for (i, &o) in objs.iter().enumerate() {
        assert_eq!(read_tag(o, 1024), i as u64 + 7);
    }
    // Freed from another CPU, one by one: back to the fallback.
    let before = reports();
    for &o in &objs {
        on_cpu(2, || c.free(o));
    }
    assert_eq!(c.fallback_objects(), 0);
    assert_eq!(reports(), before, "no free was refused");
    // A second free of a fallback object is still a double free.
    on_cpu(2, || c.free(objs[0]));
    assert_eq!(reports(), before + 1);
    on_cpu(0, || c.free(a));
    c.shrink();
    assert_eq!(c.fallback_slabs(), 0);
    assert!(c.errors() >= 1, "the double free is the cache's error too");
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

#[test]
fn bulk_frees_and_allocations_find_both_caches() {
    let _m = machine();
    let base = pages();
    let c = TestCache::with_fallback(1024);
    let mut mixed: Vec<*mut u8> = on_cpu(0, || (0..5).map(|_| c.alloc(GFP_KERNEL, -1)).collect());
    fail_above(0);
    let mut out = vec![core::ptr::null_mut(); 12];
    // The cache's bulk allocation fails as a whole, the fallback's gives all.
    assert!(on_cpu(1, || c.alloc_bulk(GFP_KERNEL, &mut out)));
    assert_eq!(c.fallback_objects(), 12);
    fail_above(-1);
    mixed.extend_from_slice(&out);
    mixed.extend_from_slice(&on_cpu(0, || {
        (0..5).map(|_| c.alloc(GFP_KERNEL, -1)).collect::<Vec<_>>()
    }));
    // A bad pointer among them is reported, the others freed.
    let before = reports();
    // An address inside an object: not an object start.
    let bad = mixed[3].wrapping_add(8);
    mixed.push(bad);
    on_cpu(2, || c.free_bulk(&mut mixed));
    assert_eq!(reports(), before + 1);
    assert_eq!(c.fallback_objects(), 0);
    assert_eq!(c.totals().live_objects, 0);
    assert!(c.stat(Stat::AllocSlab) > 0);
    c.shrink();
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}

#[test]
fn the_shrinker_validate_and_destroy_take_the_fallback_along() {
    let _m = machine();
    let base = pages();
    let c = TestCache::with_fallback(1024);
    fail_above(0);
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    fail_above(-1);
    assert!(!o.is_null());
    assert_eq!(c.validate(), 0);
    // Destroy with a fallback object out: refused, nothing freed.
    assert!(c.fallback_objects() == 1);
    on_cpu(0, || c.free(o));
    c.flush_all();
    // The empty fallback slab is cached (max_empty 0 frees it at once).
    assert_eq!(c.fallback_slabs(), 0);
    assert_eq!(pages(), base);
    fail_above(0);
    let o = on_cpu(1, || c.alloc(GFP_KERNEL, -1));
    fail_above(-1);
    let fb = c.fallback().unwrap();
    fb.set_max_empty(4);
    on_cpu(1, || c.free(o));
    c.flush_all();
    let cached: usize = (0..2).map(|n| c.empty_cached(n)).sum();
    assert_eq!(cached, 1, "the shrinker counts the fallback's empty slabs");
    let freed: usize = (0..2).map(|n| c.reclaim_empty(n, 10)).sum();
    assert_eq!(freed, 1);
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}

#[test]
fn destroy_with_a_fallback_object_out_keeps_both() {
    let _m = machine();
    let c = TestCache::with_fallback(1024);
    fail_above(0);
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    fail_above(-1);
    assert_eq!(c.fallback_objects(), 1);
    // SAFETY: nothing else uses the cache; on failure it stays usable.
    assert_eq!(unsafe { crate::slub::Cache::destroy(c.0) }, Err(1));
    // The object still goes back through the cache.
    on_cpu(0, || c.free(o));
    assert_eq!(c.fallback_objects(), 0);
    c.destroy().unwrap();
}

#[test]
fn when_the_fallback_fails_too_the_allocation_is_null() {
    let _m = machine();
    let base = pages();
    let c = TestCache::with_fallback(1024);
    // SAFETY: a knob of the twin: the next two page requests fail.
    unsafe { shim::rslub_host_fail_pages(2) };
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert!(o.is_null());
    assert_eq!(pages(), base);
    assert_eq!(c.fallback_objects(), 0);
    let o = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert!(!o.is_null(), "memory is back");
    on_cpu(0, || c.free(o));
    c.shrink();
    c.destroy().unwrap();
    assert_eq!(pages(), base);
}
