// SPDX-License-Identifier: GPL-2.0
//! Host tests of `SLAB_TYPESAFE_BY_RCU` caches: a freed object may be
//! reused at once, but a slab's pages go back to the page allocator only
//! after an RCU grace period (the host machine ends one when a test asks:
//! `rslub_host_rcu_grace_period`), on every path that frees slabs; free
//! objects keep their contents; destroy waits for the pending frees.

use crate::debug;
use crate::host::shim;
use crate::test_util::{machine, on_cpu, pages, read_tag, tag, TestCache, GFP_KERNEL};

fn grace_period() -> i64 {
    // SAFETY: runs the queued callbacks; no cache of this test is being
    // destroyed meanwhile.
    unsafe { shim::rslub_host_rcu_grace_period() as i64 }
}

fn queued() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_rcu_queued() as i64 }
}

/// Allocates `n` objects on CPU 0, each tagged with its index.
fn tagged(c: &TestCache, n: usize) -> Vec<*mut u8> {
    let size = c.layout.object_size;
    on_cpu(0, || {
        (0..n)
            .map(|i| {
                let o = c.alloc(GFP_KERNEL, -1);
                assert!(!o.is_null());
                tag(o, size, i as u64 + 1);
                o
            })
            .collect()
    })
}

#[test]
fn a_freed_slab_waits_a_grace_period_and_its_objects_keep_their_contents() {
    let _m = machine();
    let base = pages();
    // max_empty 0: a slab that becomes empty is freed at once.
    let c = TestCache::typesafe_rcu(96, 0, 0);
    assert!(
        c.layout.free_offset >= c.layout.object_size,
        "the free pointer lies outside the object"
    );
    let per = c.layout.objects;
    let objs = tagged(&c, 3 * per);
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    assert_eq!(c.usage().slabs, 0, "the slabs left the cache");
    assert_eq!(c.rcu_pending(), 3);
    assert_eq!(queued(), 3);
    assert_eq!(pages(), base + 3, "but their pages wait for the readers");
    // A reader that found an object before it was freed still reads it.
    for (i, &o) in objs.iter().enumerate() {
        assert_eq!(
            read_tag(o, 96),
            i as u64 + 1,
            "object {i} was written on free"
        );
    }
    assert_eq!(grace_period(), 3);
    assert_eq!(c.rcu_pending(), 0);
    assert_eq!(pages(), base, "after the grace period the pages went back");
    c.destroy().unwrap();
}

#[test]
fn every_path_that_frees_slabs_defers_it() {
    let _m = machine();
    let base = pages();
    let c = TestCache::typesafe_rcu(200, 8, 0);
    let per = c.layout.objects;
    let objs = tagged(&c, 4 * per);
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    // Kept as cached empty slabs: still the cache's, nothing queued.
    assert_eq!(c.usage().empty_slabs, 4);
    assert_eq!(queued(), 0);
    // The shrinker's reclaim, then shrink.
    let nid = (0..2).find(|&n| c.empty_cached(n) != 0).unwrap();
    assert_eq!(c.reclaim_empty(nid, 1), 1);
    assert_eq!(c.rcu_pending(), 1);
    assert_eq!(pages(), base + 4);
    c.shrink();
    assert_eq!(c.usage().slabs, 0);
    assert_eq!(c.rcu_pending(), 4);
    assert_eq!(pages(), base + 4);
    assert_eq!(grace_period(), 4);
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}

#[test]
fn an_object_reused_at_once_while_its_old_slab_waits() {
    let _m = machine();
    let base = pages();
    let c = TestCache::typesafe_rcu(64, 0, 0);
    let o = tagged(&c, 1)[0];
    // Freed and allocated again at once: the same object (the CPU
    // freelist's head), as the contract allows; freed again.
    on_cpu(0, || c.free(o));
    let again = on_cpu(0, || c.alloc(GFP_KERNEL, -1));
    assert_eq!(again, o);
    assert_eq!(read_tag(o, 64), 1, "not wiped by the free");
    tag(o, 64, 7);
    on_cpu(0, || c.free(o));
    c.flush_all();
    assert_eq!(c.rcu_pending(), 1);
    assert_eq!(read_tag(o, 64), 7);
    assert_eq!(pages(), base + 1);
    grace_period();
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}

#[test]
fn destroy_waits_for_the_pending_frees() {
    let _m = machine();
    let base = pages();
    let c = TestCache::typesafe_rcu(128, 0, 0);
    let objs = tagged(&c, 2 * c.layout.objects);
    c.flush_all();
    for &o in &objs {
        on_cpu(0, || c.free(o));
    }
    assert_eq!(queued(), 2);
    c.destroy().unwrap();
    assert_eq!(queued(), 0, "destroy waited for the callbacks");
    assert_eq!(pages(), base);
}

#[test]
fn destroy_with_objects_out_waits_for_the_pending_frees() {
    let _m = machine();
    let c = TestCache::typesafe_rcu(128, 0, 0);
    let per = c.layout.objects;
    let objs = tagged(&c, 2 * per);
    c.flush_all();
    // One slab empties (it waits for RCU); one object of the other stays.
    for &o in &objs[1..] {
        on_cpu(0, || c.free(o));
    }
    assert_eq!(queued(), 1);
    assert_eq!(c.destroy(), Err(1));
    // The cache is leaked with its object, but the freed slab's callback,
    // which runs in the allocator's code, ran before destroy returned.
    assert_eq!(queued(), 0, "destroy waited for the callbacks");
}

#[test]
fn an_overflow_onto_a_dead_slab_during_its_grace_period_changes_nothing() {
    let _m = machine();
    let base = pages();
    let c = TestCache::typesafe_rcu(256, 0, 0);
    assert!(!c.layout.header_outside, "the header lies in the slab");
    let per = c.layout.objects;
    let objs = tagged(&c, per);
    c.flush_all();
    for &o in &objs {
        on_cpu(0, || c.free(o));
    }
    assert_eq!(c.rcu_pending(), 1);
    assert_eq!(pages(), base + 1);
    // The dead slab's first 64 bytes, its header, written over as by an
    // overflow from the page before: its owner and list words included.
    let bytes = 4096usize << c.layout.order;
    let slab = objs[0] as usize & !(bytes - 1);
    // SAFETY: the slab's pages are still allocated (they wait for RCU).
    unsafe { core::ptr::write_bytes(slab as *mut u8, 0xa5, 64) };
    assert_eq!(grace_period(), 1);
    assert_eq!(c.rcu_pending(), 0);
    assert_eq!(pages(), base, "the slab's own pages went back");
    c.destroy().unwrap();
}

#[test]
fn free_objects_of_a_poisoning_cache_are_not_poisoned() {
    let _m = machine();
    let c = TestCache::typesafe_rcu(64, 4, debug::POISON);
    let objs = tagged(&c, 4);
    for &o in &objs {
        on_cpu(0, || c.free(o));
    }
    for (i, &o) in objs.iter().enumerate() {
        assert_eq!(read_tag(o, 64), i as u64 + 1, "object {i} was poisoned");
    }
    let again = tagged(&c, 4);
    for &o in &again {
        on_cpu(0, || c.free(o));
    }
    assert_eq!(c.errors(), 0, "no poison check tripped");
    c.shrink();
    grace_period();
    c.destroy().unwrap();
}

#[test]
fn other_caches_free_their_slabs_at_once() {
    let _m = machine();
    let base = pages();
    let c = TestCache::new(96, 0, 0, 0);
    let objs = tagged(&c, c.layout.objects);
    c.flush_all();
    for &o in &objs {
        on_cpu(1, || c.free(o));
    }
    assert_eq!(queued(), 0);
    assert_eq!(c.rcu_pending(), 0);
    assert_eq!(pages(), base);
    c.destroy().unwrap();
}
