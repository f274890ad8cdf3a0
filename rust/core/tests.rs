// SPDX-License-Identifier: GPL-2.0
//! Host tests of the platform-free core.

use crate::layout::{Layout, LayoutError, LayoutRequest, MAX_ORDER, WORD};
use crate::slab::{FreeError, SlabHeader, SlabList, HEADER_SIZE};
use std::collections::HashSet;

const PAGE: usize = 4096;

fn req(size: usize, align: usize, hw: bool, ctor: bool) -> LayoutRequest {
    LayoutRequest {
        object_size: size,
        align,
        hwcache_align: hw,
        has_ctor: ctor,
        cache_line: 64,
        page_size: PAGE,
        header_size: HEADER_SIZE,
        min_objects: 8,
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

/// A tiny deterministic PRNG so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
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
                    assert_eq!(l.free_offset, 0);
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

#[test]
fn slab_hands_out_every_object_once() {
    for size in [8, 24, 100, 1000, 4096, 16384] {
        let l = Layout::new(&req(size, 0, false, false)).unwrap();
        let b = Block::new(l.slab_bytes);
        // SAFETY: `b` is a slab-sized, slab-aligned block.
        let hdr = unsafe { &mut *SlabHeader::init(b.ptr, &l, 1, 0) };
        let mut seen = HashSet::new();
        loop {
            // SAFETY: the slab was initialized with `l`.
            let obj = unsafe { hdr.pop(&l) };
            if obj.is_null() {
                break;
            }
            let off = obj as usize - b.ptr as usize;
            assert!(l.object_index(off).is_some());
            assert!(seen.insert(obj as usize));
            assert!(std::ptr::eq(SlabHeader::of(obj, &l), hdr));
            // Scribble over the whole object: the freelist must not live there.
            // SAFETY: `obj` is an allocated object of `size` bytes.
            unsafe { std::ptr::write_bytes(obj, 0xab, size) };
        }
        assert_eq!(seen.len(), l.objects);
        assert_eq!(hdr.inuse as usize, l.objects);
        assert!(hdr.is_full());
    }
}

#[test]
fn check_free_catches_bad_pointers() {
    let l = Layout::new(&req(64, 0, false, false)).unwrap();
    let b = Block::new(l.slab_bytes);
    // SAFETY: slab-sized, slab-aligned block.
    let hdr = unsafe { &mut *SlabHeader::init(b.ptr, &l, 7, 0) };
    // SAFETY: initialized above.
    let a = unsafe { hdr.pop(&l) };
    // SAFETY: as above.
    let c = unsafe { hdr.pop(&l) };
    assert_eq!(hdr.check_free(a, &l, 8), Err(FreeError::NotOurSlab));
    assert_eq!(
        hdr.check_free(a.wrapping_add(8), &l, 7),
        Err(FreeError::NotObjectStart)
    );
    assert_eq!(hdr.check_free(a, &l, 7), Ok(()));
    // SAFETY: accepted by check_free.
    unsafe { hdr.push(a, &l) };
    assert_eq!(hdr.check_free(a, &l, 7), Err(FreeError::DoubleFree));
    // SAFETY: `c` is allocated.
    unsafe { hdr.push(c, &l) };
    hdr.kill();
    assert_eq!(hdr.check_free(c, &l, 7), Err(FreeError::NotOurSlab));
}

/// Random pops and pushes against a model set: nothing handed out twice,
/// everything freed comes back, counters agree.
#[test]
fn slab_matches_model_under_random_ops() {
    let l = Layout::new(&req(48, 0, false, true)).unwrap();
    let b = Block::new(l.slab_bytes);
    // SAFETY: slab-sized, slab-aligned block.
    let hdr = unsafe { &mut *SlabHeader::init(b.ptr, &l, 3, 0) };
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut live: Vec<*mut u8> = Vec::new();
    for _ in 0..100_000 {
        if rng.below(2) == 0 {
            // SAFETY: initialized above.
            let obj = unsafe { hdr.pop(&l) };
            if live.len() == l.objects {
                assert!(obj.is_null());
            } else {
                assert!(!obj.is_null());
                assert!(!live.contains(&obj));
                // SAFETY: allocated object; a ctor cache keeps the free
                // pointer outside the 48 bytes.
                unsafe { std::ptr::write_bytes(obj, 0x5a, 48) };
                live.push(obj);
            }
        } else if !live.is_empty() {
            let obj = live.swap_remove(rng.below(live.len()));
            assert_eq!(hdr.check_free(obj, &l, 3), Ok(()));
            // SAFETY: accepted by check_free.
            unsafe { hdr.push(obj, &l) };
        }
        assert_eq!(hdr.inuse as usize, live.len());
    }
}

#[test]
fn slab_list_matches_model() {
    let l = Layout::new(&req(4000, 0, false, false)).unwrap();
    let blocks: Vec<Block> = (0..16).map(|_| Block::new(l.slab_bytes)).collect();
    let slabs: Vec<*mut SlabHeader> = blocks
        .iter()
        // SAFETY: each block is slab-sized and slab-aligned.
        .map(|b| unsafe { SlabHeader::init(b.ptr, &l, 1, 0) })
        .collect();
    let mut list = SlabList::new();
    let mut model: Vec<*mut SlabHeader> = Vec::new();
    let mut rng = Rng(99);
    for _ in 0..20_000 {
        let s = slabs[rng.below(slabs.len())];
        // SAFETY: `s` is a live header; membership is tracked by the model.
        unsafe {
            if model.contains(&s) {
                list.remove(s);
                model.retain(|&x| x != s);
            } else {
                list.push_front(s);
                model.insert(0, s);
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
        assert_eq!(walked, model);
    }
    // take_empty moves exactly the empty slabs.
    // SAFETY: every member is live; pop one object from half of them.
    unsafe {
        for &s in model.iter().step_by(2) {
            (*s).pop(&l);
        }
    }
    let before = list.len();
    let empty = list.take_empty();
    assert_eq!(empty.len() + list.len(), before);
    let mut cur = list.first();
    while !cur.is_null() {
        // SAFETY: member of the list.
        unsafe {
            assert!(!(*cur).is_empty());
            cur = (*cur).next;
        }
    }
}
