// SPDX-License-Identifier: GPL-2.0
//! Host tests of the platform-free core.

use crate::layout::{Layout, LayoutError, LayoutRequest, MAX_ORDER, WORD};
use crate::slab::{
    get_free_pointer, inuse, BrokenList, FreeError, SlabHeader, SlabList, FROZEN, HEADER_SIZE,
};
use crate::test_util::Rng;
use std::collections::HashSet;

const PAGE: usize = 4096;

fn req(size: usize, align: usize, hw: bool, ctor: bool) -> LayoutRequest {
    LayoutRequest {
        object_size: size,
        align,
        hwcache_align: hw,
        has_ctor: ctor,
        rcu_readers: false,
        free_offset_at: None,
        cache_line: 64,
        page_size: PAGE,
        header_size: HEADER_SIZE,
        header_outside_ok: false,
        min_objects: 8,
        red_zone: false,
        poison: false,
        store_user: false,
        smallest: false,
    }
}

/// A slab-sized, slab-aligned buffer standing in for a buddy block.
struct Block {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Block {
    fn new(bytes: usize) -> Self {
        let layout = std::alloc::Layout::from_size_align(bytes, bytes).unwrap();
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        assert!(!ptr.is_null());
        Block { ptr, layout }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

#[test]
fn layout_rejects_bad_requests() {
    assert_eq!(
        Layout::new(&req(0, 0, false, false)),
        Err(LayoutError::ZeroSize)
    );
    assert_eq!(
        Layout::new(&req(8, 3, false, false)),
        Err(LayoutError::BadAlign)
    );
    assert_eq!(
        Layout::new(&req(PAGE << MAX_ORDER, 0, false, false)),
        Err(LayoutError::TooLarge)
    );
}

#[test]
fn layout_invariants_hold_for_every_size_and_align() {
    for size in (1..=16384).step_by(7).chain([8, 16, 64, 4096, 8192, 16384]) {
        for align in [0, 8, 16, 64, 256, 4096] {
            for (hw, ctor) in [(false, false), (true, false), (false, true), (true, true)] {
                let l = Layout::new(&req(size, align, hw, ctor)).unwrap();
                let want = align.max(WORD).max(if hw { 64 } else { 0 });
                assert_eq!(l.align, want);
                assert!(l.objects >= 1, "{size} {align}");
                assert!(l.first_offset >= HEADER_SIZE);
                assert_eq!(l.first_offset % l.align, 0);
                assert_eq!(l.stride % l.align, 0);
                assert!(l.stride >= size);
                assert!(l.first_offset + l.objects * l.stride <= l.slab_bytes);
                assert_eq!(l.slab_bytes, PAGE << l.order);
                if ctor {
                    assert!(
                        l.free_offset >= size,
                        "free pointer must not overlap a ctor's object"
                    );
                    assert!(l.free_offset + WORD <= l.stride);
                } else {
                    // Half-way into the object, a whole word inside it.
                    assert_eq!(l.free_offset, size / 2 / WORD * WORD, "{size}");
                    assert!(l.free_offset + WORD <= size.max(WORD), "{size}");
                    if size >= 2 * WORD {
                        assert!(l.free_offset >= WORD, "{size}: not the first word");
                    }
                }
            }
        }
    }
}

#[test]
fn layout_waste_is_bounded_for_common_sizes() {
    for shift in 3..=14 {
        let l = Layout::new(&req(1 << shift, 0, false, false)).unwrap();
        let waste = l.slab_bytes - l.objects * l.stride;
        assert!(
            waste * 4 <= l.slab_bytes,
            "size {} order {} waste {}",
            1 << shift,
            l.order,
            waste
        );
        if shift <= 9 {
            assert!(l.objects >= 8, "size {} holds {}", 1 << shift, l.objects);
        }
    }
}

/// A one-page slab holds a bulk batch of 32, else the slab takes two
/// pages (`PAGE_SLAB_OBJECTS`): 128-byte objects, 31 in a page beside
/// the header, get 63 in two; 64-byte ones stay in a page, and 256-byte
/// ones, 15 in a page, stay at two pages, 31.
#[test]
fn a_one_page_slab_holds_a_batch_of_32() {
    use crate::layout::PAGE_SLAB_OBJECTS;
    for size in (WORD..=512).step_by(WORD) {
        let l = Layout::new(&req(size, 0, false, false)).unwrap();
        if l.order == 0 {
            assert!(
                l.objects >= PAGE_SLAB_OBJECTS,
                "size {size}: {} in a page",
                l.objects
            );
        }
    }
    let at = |size| {
        let l = Layout::new(&req(size, 0, false, false)).unwrap();
        (l.order, l.objects)
    };
    assert_eq!(at(64), (0, 63));
    assert_eq!(at(128), (1, 63));
    assert_eq!(at(256), (1, 31));
}

#[test]
fn free_pointer_of_readers_caches_lies_outside_or_where_the_owner_says() {
    let typesafe = |at: Option<usize>, poison: bool| {
        Layout::new(&LayoutRequest {
            rcu_readers: true,
            free_offset_at: at,
            poison,
            ..req(96, 0, false, false)
        })
        .unwrap()
    };
    let after = typesafe(None, false);
    assert_eq!(
        (after.free_offset, after.stride),
        (96, 104),
        "after the object"
    );
    let set_aside = typesafe(Some(8), false);
    assert_eq!(
        (set_aside.free_offset, set_aside.stride),
        (8, 96),
        "the word set aside"
    );
    // A word that is not one of the object's, or not aligned, is ignored;
    // so is any with poisoning, which writes the whole object.
    assert_eq!(typesafe(Some(92), false).free_offset, 96);
    assert_eq!(typesafe(Some(4), false).free_offset, 96);
    assert_eq!(typesafe(Some(8), true).free_offset, 96);
    // A cache that has no readers and no constructor keeps its middle word.
    let plain = Layout::new(&LayoutRequest {
        free_offset_at: Some(8),
        ..req(96, 0, false, false)
    })
    .unwrap();
    assert_eq!(plain.free_offset, 48);
}

#[test]
fn object_index_round_trips() {
    let l = Layout::new(&req(100, 16, false, false)).unwrap();
    for i in 0..l.objects {
        assert_eq!(l.object_index(l.object_offset(i)), Some(i));
        assert_eq!(l.object_index(l.object_offset(i) + 8), None);
    }
    assert_eq!(l.object_index(0), None);
    assert_eq!(l.object_index(l.object_offset(l.objects)), None);
}

/// Walks a slab's freelist from its header.
fn freelist(hdr: &SlabHeader, l: &Layout) -> Vec<*mut u8> {
    let mut out = Vec::new();
    let mut cur = hdr.read_pair()[0] as *mut u8;
    while !cur.is_null() {
        out.push(cur);
        // SAFETY: a free object of the slab.
        cur = unsafe { get_free_pointer(cur, l) };
    }
    out
}

#[test]
fn new_slab_threads_every_object_once() {
    for (size, ctor) in [
        (8, false),
        (24, true),
        (100, false),
        (1000, true),
        (4096, false),
        (16384, false),
    ] {
        let l = Layout::new(&req(size, 0, false, ctor)).unwrap();
        let b = Block::new(l.slab_bytes);
        // SAFETY: `b` is a slab-sized, slab-aligned block.
        let hdr = unsafe { &*SlabHeader::init(b.ptr, std::ptr::null_mut(), &l, 1, 1, 0) };
        let objs = freelist(hdr, &l);
        assert_eq!(objs.len(), l.objects);
        let set: HashSet<usize> = objs.iter().map(|&p| p as usize).collect();
        assert_eq!(set.len(), l.objects);
        for &o in &objs {
            assert!(l.object_index(o as usize - b.ptr as usize).is_some());
            assert!(std::ptr::eq(SlabHeader::of(o, &l), hdr));
        }
        assert_eq!(inuse(hdr.read_pair()[1]), 0);
        assert_eq!(hdr.read_pair()[1] & FROZEN, 0);
    }
}

#[test]
fn check_object_catches_bad_pointers() {
    let l = Layout::new(&req(64, 0, false, false)).unwrap();
    let b = Block::new(l.slab_bytes);
    // SAFETY: slab-sized, slab-aligned block.
    let hdr = unsafe { &mut *SlabHeader::init(b.ptr, std::ptr::null_mut(), &l, 0x1000, 7, 0) };
    let a = freelist(hdr, &l)[0];
    assert_eq!(
        hdr.check_object(a, b.ptr as usize, &l, 9),
        Err(FreeError::NotOurSlab)
    );
    assert_eq!(
        hdr.check_object(a.wrapping_add(8), b.ptr as usize, &l, 7),
        Err(FreeError::NotObjectStart)
    );
    assert_eq!(
        hdr.check_object(b.ptr, b.ptr as usize, &l, 7),
        Err(FreeError::NotObjectStart)
    );
    assert_eq!(hdr.check_object(a, b.ptr as usize, &l, 7), Ok(()));
    hdr.kill();
    assert_eq!(
        hdr.check_object(a, b.ptr as usize, &l, 7),
        Err(FreeError::NotOurSlab)
    );
}

/// A slab header is bound to its cache's secret and to its own address:
/// a copy of a live header at another slab-aligned address, which is
/// what a forged header built from a leaked one would be, is no slab; an
/// isolated header refuses as isolated, and only for its own secret.
#[test]
fn slab_headers_are_bound_to_the_secret_and_the_address() {
    // A secret with every bit set too: the address must change the magic
    // whatever the secret (an OR instead of the XOR would not).
    for secret in [0x5a5a_0001, usize::MAX] {
        header_bound_to(secret);
    }
}

fn header_bound_to(secret: usize) {
    let l = Layout::new(&req(64, 0, false, false)).unwrap();
    let (real, forged) = (Block::new(l.slab_bytes), Block::new(l.slab_bytes));
    // SAFETY: slab-sized, slab-aligned block.
    let hdr = unsafe { SlabHeader::init(real.ptr, std::ptr::null_mut(), &l, 0x1000, secret, 0) };
    // SAFETY: both blocks are slab_bytes long; the header is plain data.
    unsafe { std::ptr::copy_nonoverlapping(real.ptr, forged.ptr, HEADER_SIZE) };
    // SAFETY: `forged` now holds a header (a copy).
    let copy = unsafe { &*forged.ptr.cast::<SlabHeader>() };
    // SAFETY: `hdr` was initialized above.
    assert!(unsafe { (*hdr).is_live_at(secret, real.ptr as usize) });
    assert!(
        !copy.is_live_at(secret, forged.ptr as usize),
        "a copied header must not validate elsewhere"
    );
    let obj = forged.ptr.wrapping_add(l.object_offset(0));
    assert_eq!(
        copy.check_object(obj, forged.ptr as usize, &l, secret),
        Err(FreeError::NotOurSlab)
    );
    // SAFETY: the slab is on no list.
    unsafe { SlabHeader::mark_isolated(hdr, secret, real.ptr as usize) };
    // SAFETY: as above.
    let hdr = unsafe { &*hdr };
    let at = real.ptr as usize;
    assert!(hdr.is_isolated_at(secret, at) && !hdr.is_live_at(secret, at));
    assert!(!hdr.is_isolated_at(secret ^ 2, at));
    let obj = real.ptr.wrapping_add(l.object_offset(0));
    assert_eq!(
        hdr.check_object(obj, at, &l, secret),
        Err(FreeError::Isolated)
    );
    assert_eq!(
        hdr.check_object(obj, at, &l, secret ^ 2),
        Err(FreeError::NotOurSlab)
    );
}

#[test]
fn slab_pair_is_16_byte_aligned() {
    assert_eq!(std::mem::align_of::<SlabHeader>(), 16);
    assert_eq!(HEADER_SIZE % 16, 0);
}

/// What each CPU keeps per cache: the cmpxchg16b pair, the CPU slab and
/// partial list, the partial count, and one word per counter; the
/// `free_batch` build variant adds its batch (its length sits beside the
/// partial count, its array of `FREE_BATCH_MAX` pointers after). Printed
/// with `--nocapture`.
#[test]
fn cpu_slab_holds_the_batch_only_in_its_variant() {
    use crate::slub::CpuSlab;
    use crate::stat::Stat;
    let batch = if cfg!(rslub_free_batch) { 32 } else { 0 };
    let words = 4 + 1 + batch + Stat::COUNT;
    let size = std::mem::size_of::<CpuSlab>();
    println!("CpuSlab: {size} bytes ({} counters)", Stat::COUNT);
    assert_eq!(size, (words * 8).next_multiple_of(16));
    assert_eq!(std::mem::align_of::<CpuSlab>(), 16);
    #[cfg(rslub_free_batch)]
    assert_eq!(crate::slub::FREE_BATCH_MAX, batch);
}

/// The counter table: indices in order, names unique, and the batch's
/// counters only in its build variant.
#[test]
fn stat_table_is_dense_and_batch_counters_are_the_variants() {
    use crate::stat::Stat;
    for (i, s) in Stat::ALL.iter().enumerate() {
        assert_eq!(*s as usize, i);
        assert_eq!(Stat::from_name(s.name().as_bytes()), Some(*s));
        assert_eq!(s.c_name(), format!("{}\0", s.name()).as_bytes());
    }
    for name in ["free_batched", "free_batch_flush", "alloc_from_batch"] {
        assert_eq!(
            Stat::from_name(name.as_bytes()).is_some(),
            cfg!(rslub_free_batch),
            "{name}"
        );
    }
}

#[test]
fn slab_list_matches_model() {
    let l = Layout::new(&req(4000, 0, false, false)).unwrap();
    let blocks: Vec<Block> = (0..16).map(|_| Block::new(l.slab_bytes)).collect();
    let slabs: Vec<*mut SlabHeader> = blocks
        .iter()
        // SAFETY: each block is slab-sized and slab-aligned.
        .map(|b| unsafe { SlabHeader::init(b.ptr, std::ptr::null_mut(), &l, 1, 1, 0) })
        .collect();
    let mut list = SlabList::new();
    let mut model: std::collections::VecDeque<*mut SlabHeader> = Default::default();
    let mut rng = Rng(99);
    for _ in 0..20_000 {
        let s = slabs[rng.below(slabs.len())];
        // SAFETY: `s` is a live header; membership is tracked by the model.
        unsafe {
            if model.contains(&s) {
                list.remove(s).expect("sound links");
                model.retain(|&x| x != s);
            } else if rng.below(2) == 0 {
                list.push_front(s);
                model.push_front(s);
            } else {
                list.push_back(s);
                model.push_back(s);
            }
        }
        assert_eq!(list.len(), model.len());
        let mut walked = Vec::new();
        let mut cur = list.first();
        while !cur.is_null() {
            walked.push(cur);
            // SAFETY: `cur` is a member of the list.
            cur = unsafe { (*cur).next };
        }
        assert_eq!(walked, Vec::from(model.clone()));
    }
    while list.len() != 0 {
        assert_eq!(list.pop_front(), Ok(model.pop_front().unwrap()));
    }
}

#[test]
fn debug_letters_parse_like_slub_debug() {
    use crate::debug::{parse_letters, ALL, CONSISTENCY, POISON, RED_ZONE, STORE_USER};
    assert_eq!(parse_letters(b""), Ok(0));
    assert_eq!(parse_letters(b"-"), Ok(0));
    assert_eq!(parse_letters(b"FZPU"), Ok(ALL));
    assert_eq!(parse_letters(b"z,p\n"), Ok(RED_ZONE | POISON));
    assert_eq!(parse_letters(b"F"), Ok(CONSISTENCY));
    assert_eq!(parse_letters(b"u"), Ok(STORE_USER));
    assert_eq!(parse_letters(b"FX"), Err(b'X'));
}

/// A slab whose `prev` or `next` was overwritten (as an overflow into its
/// header would) is not unlinked through it: nothing is written through
/// the bad link, the list forgets its slabs and says which slab and how
/// many, and it works again afterwards.
#[test]
fn slab_list_refuses_links_that_do_not_agree() {
    let l = Layout::new(&req(4000, 0, false, false)).unwrap();
    let blocks: Vec<Block> = (0..4).map(|_| Block::new(l.slab_bytes)).collect();
    let target = Block::new(l.slab_bytes);
    let s: Vec<*mut SlabHeader> = blocks
        .iter()
        // SAFETY: each block is slab-sized and slab-aligned.
        .map(|b| unsafe { SlabHeader::init(b.ptr, std::ptr::null_mut(), &l, 1, 1, 0) })
        .collect();
    // SAFETY: as above; a slab the forged links point at.
    let victim = unsafe { SlabHeader::init(target.ptr, std::ptr::null_mut(), &l, 1, 1, 0) };
    for forge_next in [false, true] {
        let mut list = SlabList::new();
        // SAFETY: live headers on no list; then one link overwritten.
        unsafe {
            for &x in &s[..3] {
                list.push_back(x);
            }
            let mid = s[1];
            if forge_next {
                (*mid).next = victim;
            } else {
                (*mid).prev = victim;
            }
            let before = std::ptr::read(victim.cast::<[u8; HEADER_SIZE]>());
            assert_eq!(list.remove(s[1]), Err(BrokenList { at: s[1], lost: 3 }));
            assert_eq!(std::ptr::read(victim.cast::<[u8; HEADER_SIZE]>()), before);
            assert_eq!((list.len(), list.first()), (0, std::ptr::null_mut()));
            assert!((*s[1]).on_list && !list.holds(s[1]), "forgotten, `at` too");
            list.push_front(s[3]);
            assert_eq!(list.pop_front(), Ok(s[3]));
        }
    }
    // A link zeroed in mid-list: a null `prev` says "I am the head", a null
    // `next` "I am the tail"; the list's own ends must agree, or unlinking
    // would cut the list (a null `prev` set the head to the slab's `next`,
    // dropping the slabs before it, a null `next` set the tail to its
    // `prev`).
    for zero_next in [false, true] {
        let mut list = SlabList::new();
        // SAFETY: live headers on no list; then one link zeroed.
        unsafe {
            for &x in &s[..3] {
                list.push_back(x);
            }
            let mid = s[1];
            if zero_next {
                (*mid).next = std::ptr::null_mut();
            } else {
                (*mid).prev = std::ptr::null_mut();
            }
            assert_eq!(list.remove(s[1]), Err(BrokenList { at: s[1], lost: 3 }));
            assert_eq!((list.len(), list.first()), (0, std::ptr::null_mut()));
        }
    }
    // The head's own link: a head whose `prev` is set is no head.
    let mut list = SlabList::new();
    // SAFETY: as above.
    unsafe {
        list.push_back(s[0]);
        list.push_back(s[2]);
        let head = s[0];
        (*head).prev = victim;
    }
    assert_eq!(list.pop_front(), Err(BrokenList { at: s[0], lost: 2 }));
    assert_eq!(list.len(), 0);
    // The head's generation overwritten: popping it must not leave it
    // on the list (it would be handed out again and again).
    let mut list = SlabList::new();
    // SAFETY: as above.
    unsafe {
        list.push_back(s[1]);
        list.push_back(s[3]);
        let head = s[1];
        (*head).forge_list_gen(77);
    }
    assert_eq!(list.pop_front(), Err(BrokenList { at: s[1], lost: 2 }));
    assert_eq!(list.pop_front(), Ok(std::ptr::null_mut()));
}

/// The fault-safe free pointer read (`DEBUG_PAGEALLOC` kernels) decodes
/// like the plain one, reads the free pointer's slot and nothing else, and
/// gives None when the read fails.
#[test]
fn free_pointer_read_with_a_fallible_read_decodes_like_the_plain_one() {
    use crate::slab::{get_free_pointer_as, get_free_pointer_with, set_free_pointer_as};
    let mut l = Layout::new(&req(64, 0, false, false)).unwrap();
    l.fp_key = 0x0123_4567_89ab_cdef;
    let b = Block::new(l.slab_bytes);
    let (obj, next) = (
        b.ptr.wrapping_add(l.object_offset(0)),
        b.ptr.wrapping_add(l.object_offset(1)),
    );
    // SAFETY: objects of a block the test owns.
    unsafe { set_free_pointer_as::<true>(obj, &l, next) };
    let mut asked = None;
    let read = |p: *const usize| {
        asked = Some(p as usize);
        // SAFETY: the slot of an object of the block.
        Some(unsafe { p.read() })
    };
    assert_eq!(get_free_pointer_with::<true>(obj, &l, read), Some(next));
    assert_eq!(asked, Some(obj as usize + l.free_offset));
    // SAFETY: as above.
    assert_eq!(unsafe { get_free_pointer_as::<true>(obj, &l) }, next);
    assert_eq!(get_free_pointer_with::<true>(obj, &l, |_| None), None);
}

/// Every refusal has its own words in the log.
#[test]
fn free_errors_describe_themselves_apart() {
    let all = [
        FreeError::NotSlabMemory,
        FreeError::NotOurSlab,
        FreeError::NotObjectStart,
        FreeError::DoubleFree,
        FreeError::Isolated,
    ];
    let words: HashSet<&str> = all.iter().map(|e| e.describe()).collect();
    assert_eq!(words.len(), all.len());
    assert!(words.iter().all(|w| w.len() > 8));
    assert!(FreeError::DoubleFree.describe().contains("double free"));
}
