// SPDX-License-Identifier: GPL-2.0
//! Host tests of slab headers kept outside their slabs
//! (`Layout::header_outside`): where the layout puts them, that such caches
//! run every path and give everything back, and that a free can neither be
//! steered by the page word that names the header nor find a header the
//! slab no longer has.

use crate::host::{shim, Host};
use crate::layout::{Layout, LayoutRequest};
use crate::platform::Platform;
use crate::slab::{SlabHeader, HEADER_SIZE};
use crate::slub::MIN_OBJECTS;
use crate::test_util::{alloc_on, machine, on_cpu, pages, reports, TestCache, GFP_KERNEL};
use std::collections::HashSet;

/// The C API's request for a non-debug cache of `size` bytes.
fn request(size: usize, outside_ok: bool) -> LayoutRequest {
    LayoutRequest {
        min_objects: MIN_OBJECTS,
        header_outside_ok: outside_ok,
        ..LayoutRequest::plain(size, 0, 4096, HEADER_SIZE)
    }
}

/// The header goes out exactly where keeping it in costs a quarter of the
/// slab's objects or more: 16 KiB objects (4 in an order-4 slab instead of
/// 3), never at 64 or 256 bytes (whose fast paths stay as they are), nor
/// at 2048 to 8192 (where the page lookup of frees off the CPU slab cost
/// more than the object gained). The order stays what the header in the
/// slab made it; out of the slab the objects start at its first byte.
#[test]
fn headers_move_out_where_they_cost_a_sixteenth() {
    let mut out_sizes = Vec::new();
    for size in (8..=16384).step_by(8) {
        let inside = Layout::new(&request(size, false)).unwrap();
        let chosen = Layout::new(&request(size, true)).unwrap();
        assert!(!inside.header_outside);
        // The objects a slab of the same order holds without a header.
        let without = (inside.slab_bytes / inside.stride).min(crate::layout::MAX_OBJECTS);
        let costly = inside.objects * 4 <= without * 3;
        assert_eq!(chosen.header_outside, costly, "size {size}");
        if !costly {
            assert_eq!(chosen, inside, "size {size}");
            continue;
        }
        out_sizes.push(size);
        assert_eq!(chosen.first_offset, 0, "size {size}");
        assert_eq!(chosen.objects, without, "size {size}");
        assert_eq!(
            (chosen.order, chosen.stride),
            (inside.order, inside.stride),
            "size {size}"
        );
    }
    for size in [64, 128, 256, 512, 1024, 2048, 4096, 8192] {
        assert!(!out_sizes.contains(&size), "size {size}");
    }
    for (size, order, objects) in [(16376, 4, 4), (16384, 4, 4)] {
        let l = Layout::new(&request(size, true)).unwrap();
        assert!(l.header_outside, "size {size}");
        assert_eq!((l.order, l.objects), (order, objects), "size {size}");
    }
}

fn meta() -> i64 {
    // SAFETY: a counter read.
    unsafe { shim::rslub_host_meta_in_use() as i64 }
}

/// Caches whose headers are outside, hardened or not: the fast paths,
/// frees from another CPU (to CPU partial and node partial slabs, full
/// slabs found again through their page), bulk both ways, shrink; nothing
/// reported, every object distinct, and the pages and header blocks all
/// given back on destroy.
#[test]
fn caches_with_headers_outside_run_every_path_and_give_all_back() {
    let _m = machine();
    for size in [16376, 16384] {
        for harden in [true, false] {
            let (pages0, meta0) = (pages(), meta());
            let c = TestCache::with(size, 4, 2, 2, 0, harden);
            assert!(c.layout.header_outside);
            let per = c.layout.objects;
            let objs = alloc_on(&c, 0, 6 * per);
            let set: HashSet<usize> = objs.iter().map(|&o| o as usize).collect();
            assert_eq!(set.len(), objs.len());
            for &o in &objs {
                assert_eq!(o as usize % c.layout.align, 0);
                assert!(c
                    .layout
                    .object_index(o as usize - c.layout.slab_base(o))
                    .is_some());
            }
            // Half freed on another CPU (full slabs become CPU partial and
            // node partial there), a quarter on this one, the rest in bulk.
            let (remote, rest) = objs.split_at(3 * per);
            on_cpu(1, || remote.iter().for_each(|&o| c.free(o)));
            let (local, bulk) = rest.split_at(per + per / 2);
            on_cpu(0, || local.iter().for_each(|&o| c.free(o)));
            let mut bulk = bulk.to_vec();
            on_cpu(2, || c.free_bulk(&mut bulk));
            let mut again = vec![std::ptr::null_mut(); 2 * per];
            assert!(on_cpu(3, || c.alloc_bulk(GFP_KERNEL, &mut again)));
            let set: HashSet<usize> = again.iter().map(|&o| o as usize).collect();
            assert_eq!(set.len(), again.len());
            on_cpu(3, || c.free_bulk(&mut again));
            assert_eq!(c.errors(), 0, "size {size}");
            assert_eq!(c.validate(), 0, "size {size}");
            c.shrink();
            assert_eq!(c.destroy(), Ok(()), "size {size}");
            assert_eq!(pages(), pages0, "size {size}: pages kept");
            assert_eq!(meta(), meta0, "size {size}: header blocks kept");
        }
    }
}

/// A free into a slab with its header outside is checked against the
/// header the slab's page names, for that slab's address: a pointer that
/// is no object start, an object of another cache, and a page whose word
/// names a live header of the cache but is another block (a header is
/// bound to its slab's address) are each refused and reported, and the
/// cache stays sound. So is a free into a slab the cache gave back.
#[test]
fn frees_into_outside_slabs_are_checked_against_the_page_word() {
    let _m = machine();
    let c = TestCache::new(16384, 4, 2, 0);
    let other = TestCache::new(16384, 4, 2, 0);
    let objs = alloc_on(&c, 0, 3 * c.layout.objects);
    let theirs = alloc_on(&other, 0, 1)[0];
    let mut errors = c.errors();
    on_cpu(0, || c.free(objs[0].wrapping_add(8)));
    errors += 1;
    assert_eq!(c.errors(), errors, "not an object start");
    // The same in the CPU slab (the last object's), whose frees take the
    // base compare (`on_cpu_slab`), not the page word.
    let last = *objs.last().unwrap();
    on_cpu(0, || c.free(last.wrapping_add(8)));
    errors += 1;
    assert_eq!(c.errors(), errors, "not an object start of the CPU slab");
    on_cpu(0, || c.free(theirs));
    errors += 1;
    assert_eq!(c.errors(), errors, "another cache's object");
    // A block of pages whose word names one of `c`'s live headers.
    let order = c.layout.order;
    // SAFETY: a plain page allocation, given back below.
    let fake = unsafe { Host::alloc_pages(0, GFP_KERNEL, order, std::ptr::null_mut()) };
    assert!(!fake.is_null());
    let real = Host::slab_meta(c.layout.slab_base(objs[0]) as *const u8);
    assert_ne!(real, 0);
    // SAFETY: `fake` is ours; the word is cleared before it is freed.
    unsafe { Host::set_slab_meta(fake, real) };
    on_cpu(0, || c.free(fake.wrapping_add(c.layout.object_offset(1))));
    errors += 1;
    assert_eq!(c.errors(), errors, "a page naming a header of another slab");
    // Words that name no header block: unmapped, misaligned, and memory
    // that is not a header block (never read as one).
    let local = 0u128;
    for word in [0x1000, real + 8, &local as *const u128 as usize] {
        // SAFETY: as above.
        unsafe { Host::set_slab_meta(fake, word) };
        on_cpu(0, || c.free(fake.wrapping_add(c.layout.object_offset(1))));
        errors += 1;
        assert_eq!(c.errors(), errors, "page word {word:#x}");
    }
    // SAFETY: as above.
    unsafe {
        Host::set_slab_meta(fake, 0);
        Host::free_pages(fake, order, std::ptr::null_mut());
    }
    // A double free, then everything back and shrunk: the slabs are gone.
    on_cpu(0, || c.free(objs[1]));
    on_cpu(0, || c.free(objs[1]));
    errors += 1;
    assert_eq!(c.errors(), errors, "double free");
    on_cpu(0, || c.free(last));
    on_cpu(0, || c.free(last));
    errors += 1;
    assert_eq!(c.errors(), errors, "double free on the CPU slab");
    on_cpu(0, || {
        for &o in objs.iter().filter(|&&o| o != objs[1] && o != last) {
            c.free(o);
        }
    });
    assert_eq!(c.errors(), errors);
    assert_eq!(c.validate(), 0);
    c.shrink();
    on_cpu(0, || c.free(objs[2]));
    assert!(c.errors() > errors, "a free into a slab given back");
    on_cpu(0, || other.free(theirs));
    assert_eq!(other.errors(), 0);
    assert_eq!(c.destroy(), Ok(()));
    assert_eq!(other.destroy(), Ok(()));
}

/// A header in the slab has its `base` word overwritten (an overflow from
/// the page before reaches it): the slab, emptied by frees from another
/// CPU, still goes back to the page allocator by the header's own address
/// (the host machine aborts on a block it did not hand out), and nothing is
/// reported or left behind.
#[test]
fn an_overwritten_base_word_does_not_pick_the_pages_freed() {
    let _m = machine();
    let pages0 = pages();
    // No CPU partial list, no empty slab kept: the emptied slab goes.
    let c = TestCache::new(64, 0, 0, 0);
    let per = c.layout.objects;
    let objs = alloc_on(&c, 0, 2 * per);
    let first = SlabHeader::of(objs[0], &c.layout);
    assert!(objs[..per]
        .iter()
        .all(|&o| SlabHeader::of(o, &c.layout) == first));
    // SAFETY: a live header of the cache; the forged word is data.
    unsafe { (*first).forge_base(0x1000) };
    on_cpu(1, || objs[..per].iter().for_each(|&o| c.free(o)));
    assert_eq!(c.errors(), 0);
    on_cpu(0, || objs[per..].iter().for_each(|&o| c.free(o)));
    assert_eq!(c.destroy(), Ok(()));
    assert_eq!(pages(), pages0);
}

/// An overflow of 16 bytes from the memory before a slab lands on the first
/// words of the slab's header. They must be words that the free path checks
/// before it trusts anything else: the magic and the owner, with the
/// `[freelist, counters]` pair after them. Tried on a full slab (the other
/// objects live): its first 16 bytes overwritten with a forged pair
/// (freelist 0, counters 1), one object freed from another CPU, the cache
/// shrunk. The free must be refused and reported, the slab's pages must
/// stay allocated, and no object may be handed out while it is live. With
/// the pair first, the forged counters said "one object in use": the free
/// emptied the slab, the shrink gave its pages back, and the next
/// allocations handed out the live objects again.
#[test]
fn an_overflow_onto_the_first_header_words_is_reported_and_frees_nothing() {
    let _m = machine();
    let pages0 = pages();
    // No CPU partial list, no empty slab kept: an emptied slab goes back.
    let c = TestCache::new(64, 0, 0, 0);
    assert!(!c.layout.header_outside);
    let per = c.layout.objects;
    // The first slab full, the second the CPU slab.
    let objs = alloc_on(&c, 0, per + 1);
    let first = SlabHeader::of(objs[0], &c.layout);
    assert!(objs[..per]
        .iter()
        .all(|&o| SlabHeader::of(o, &c.layout) == first));
    let (errors, logged) = (c.errors(), reports());
    // SAFETY: the first 16 bytes of a live slab header, overwritten with
    // plain data as an overflow from the memory before the slab would.
    unsafe { first.cast::<[usize; 2]>().write([0, 1]) };
    on_cpu(1, || c.free(objs[0]));
    assert_eq!(c.errors(), errors + 1, "the free was not refused");
    assert_eq!(reports(), logged + 1, "the free was not reported");
    c.shrink();
    let slab_pages = pages();
    assert!(
        slab_pages > pages0,
        "the damaged slab's pages were given back"
    );
    // Twice a slab's worth of new objects: none is one still live.
    let live: HashSet<usize> = objs[1..].iter().map(|&o| o as usize).collect();
    let fresh = alloc_on(&c, 0, 2 * per);
    for &o in &fresh {
        assert!(!live.contains(&(o as usize)), "{o:?} handed out while live");
    }
    on_cpu(0, || fresh.iter().for_each(|&o| c.free(o)));
    on_cpu(0, || c.free(objs[per]));
}
