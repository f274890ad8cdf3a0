// SPDX-License-Identifier: GPL-2.0
//! Slab geometry: where objects sit in a slab and how big a slab is.
//!
//! A slab is one naturally aligned buddy block of `2^order` pages. Its first
//! bytes hold the slab header (per-slab metadata the module owns, since a
//! module cannot extend `struct slab`); objects follow at a fixed stride.
//! Because buddy blocks are aligned to their size, the header of any object
//! is found by aligning the object's address down to the slab size.
//!
//! The order is chosen like upstream's `calculate_order`: the smallest order
//! that holds enough objects while wasting at most a fraction of the slab,
//! relaxing the fraction before going past the costly order.
//!
//! # One object's bytes, relative to the object's address
//!
//! ```text
//!  -red_left      0            object_size   inuse    free_offset   track_offset
//!  | left red zone| object      | right red zone |[free pointer] [alloc track, free track] pad |
//!
//! (the free pointer after the object is the ctor/poison case; otherwise it
//! is inside the object, at `free_pointer_middle(object_size)`)
//! ```
//!
//! Without debug features only the object is there, and the free pointer is
//! the word half-way into it (`object_size / 2` aligned down to a word, as
//! in-tree; the first word of objects under 16 bytes). The red zones (`SLAB_RED_ZONE`) are `red_left` bytes
//! before the object and `inuse - object_size` bytes after it (at least a
//! word). The free pointer moves after the object (and its red zone) when a
//! constructor owns the object's bytes or when free objects are poisoned
//! (`SLAB_POISON`), like in-tree. Owner records (`SLAB_STORE_USER`) follow.
//! The next object's left red zone closes the stride.
//!
//! Platform-free: no kernel types; compiled into the module and the host crate.

/// Where the free pointer sits in an object of `object_size` bytes that
/// keeps it inside: half-way, aligned down to a word (0 below two words).
pub const fn free_pointer_middle(object_size: usize) -> usize {
    object_size / 2 / WORD * WORD
}

/// Size of a machine word; the free pointer is one.
pub const WORD: usize = core::mem::size_of::<usize>();

/// Bytes of one owner record (`SLAB_STORE_USER`): call site, time, CPU, pid.
pub const TRACK_SIZE: usize = 3 * WORD;

/// Highest order a slab may use.
pub const MAX_ORDER: u32 = 4;
/// Most objects a slab holds (a slab of 4 KB pages has at most 504 of the
/// smallest, 8-byte, objects): the bound of a bulk free's exact
/// double-free check (`slub/chain.rs`). Larger slabs are left partly
/// unused.
pub const MAX_OBJECTS: usize = 512;

/// Orders up to this one are cheap for the page allocator (upstream's
/// `PAGE_ALLOC_COSTLY_ORDER`); larger ones are used only when needed.
pub const COSTLY_ORDER: u32 = 3;

/// Objects a slab of one page must hold to be chosen over two pages: a
/// bulk batch of 32, which the in-tree allocator's sheaves serve whole. The
/// header in the slab leaves 128-byte objects 31 in a page (in-tree: 32),
/// and every such batch then finished on a second slab: 81.1 instructions
/// an object at bulk 32 against in-tree's 68.3, 19% dearer
/// (docs/history/benchmarks-history.md, "bulk geometry"). In two pages
/// they are 63.
pub const PAGE_SLAB_OBJECTS: usize = 32;

/// Why a geometry could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutError {
    /// Object size is zero.
    ZeroSize,
    /// Alignment is not a power of two.
    BadAlign,
    /// Not even one object fits in a slab of `MAX_ORDER`.
    TooLarge,
}

/// What a cache asks for.
#[derive(Debug, Clone, Copy)]
pub struct LayoutRequest {
    /// Bytes the user asked for.
    pub object_size: usize,
    /// Requested alignment, 0 for none.
    pub align: usize,
    /// Align objects to the cache line.
    pub hwcache_align: bool,
    /// A constructor owns the object's bytes: the free pointer goes after them.
    pub has_ctor: bool,
    /// Readers may look at a free object (`SLAB_TYPESAFE_BY_RCU`): the
    /// free pointer goes after it, like for a constructor.
    pub rcu_readers: bool,
    /// With `has_ctor` or `rcu_readers`: a word inside the object that its
    /// owner set aside for the free pointer (a kernel cache's
    /// `freeptr_offset`), used instead of a word after the object. Not
    /// with poisoning or red zones. Word aligned, inside the object.
    pub free_offset_at: Option<usize>,
    /// Cache line size.
    pub cache_line: usize,
    /// Page size.
    pub page_size: usize,
    /// Bytes at the start of each slab reserved for the slab header.
    pub header_size: usize,
    /// The header may live outside the slab (`Layout::header_outside`):
    /// not for debug caches, nor for served ones (the kernel finds their
    /// cache through the header at the slab's start).
    pub header_outside_ok: bool,
    /// Objects a slab should hold at least, when waste allows.
    pub min_objects: usize,
    /// Red zones around each object (`SLAB_RED_ZONE`).
    pub red_zone: bool,
    /// Free objects are poisoned (`SLAB_POISON`): the free pointer goes
    /// after the object.
    pub poison: bool,
    /// Owner records after each object (`SLAB_STORE_USER`).
    pub store_user: bool,
    /// The smallest order that holds one object, whatever the waste: the
    /// geometry of a cache's fallback (`Cache::attach_fallback`).
    pub smallest: bool,
}

impl LayoutRequest {
    /// A request without debug features.
    pub fn plain(object_size: usize, align: usize, page_size: usize, header_size: usize) -> Self {
        LayoutRequest {
            object_size,
            align,
            hwcache_align: false,
            has_ctor: false,
            rcu_readers: false,
            free_offset_at: None,
            cache_line: 64,
            page_size,
            header_size,
            header_outside_ok: false,
            min_objects: 8,
            red_zone: false,
            poison: false,
            store_user: false,
            smallest: false,
        }
    }
}

/// The computed geometry of a cache's slabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Bytes the user asked for.
    pub object_size: usize,
    /// Distance between objects (object, free pointer if outside, padding).
    pub stride: usize,
    /// Alignment of every object.
    pub align: usize,
    /// Offset of the free pointer from the object's start.
    pub free_offset: usize,
    /// Bytes of left red zone before each object (0: no red zones).
    pub red_left: usize,
    /// End of the object plus its right red zone (`object_size` without).
    pub inuse: usize,
    /// Offset of the two owner records from the object's start (0: none).
    pub track_offset: usize,
    /// The inverse, modulo 2^64, of `stride`'s odd factor: object index
    /// by one multiply and a rotate (`object_index`).
    pub stride_inv: usize,
    /// Trailing zero bits of `stride` (the rotate's count).
    pub stride_tz: u32,
    /// `first_offset * stride_inv`: subtracted after the multiply, it
    /// makes the index relative to the first object.
    pub first_inv: usize,
    /// Key XORed into stored free pointers (0: stored plain).
    pub fp_key: usize,
    /// Stored free pointers are hardened: XORed with `fp_key` and their
    /// byte-swapped address.
    pub hardened: bool,
    /// Offset of the first object from the slab start.
    pub first_offset: usize,
    /// The slab header is not in the slab but in a block of its own,
    /// found through the slab's first page (`Platform::slab_meta`): chosen
    /// where a header in the slab would cost a quarter of its objects.
    pub header_outside: bool,
    /// Slab order (`2^order` pages).
    pub order: u32,
    /// Bytes in a slab.
    pub slab_bytes: usize,
    /// `!(slab_bytes - 1)`: an address ANDed with it gives its slab's start.
    pub slab_mask: usize,
    /// Objects per slab.
    pub objects: usize,
}

/// The inverse of odd `d` modulo 2^64 (Newton's iteration: each step
/// doubles the correct low bits, starting from 3 correct ones, since
/// `d * d = 1 mod 8` for odd `d`).
const fn odd_inverse(d: usize) -> usize {
    let mut x = d;
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2usize.wrapping_sub(d.wrapping_mul(x)));
        i += 1;
    }
    x
}

const fn round_up(x: usize, a: usize) -> usize {
    (x + a - 1) & !(a - 1)
}

/// The slab of a cache whose objects are `stride` apart from
/// `first_offset` on: `(order, bytes, objects, first_offset)`, the order
/// chosen like upstream's `calculate_order`.
fn geometry(
    req: &LayoutRequest,
    stride: usize,
    first_offset: usize,
) -> Result<(u32, usize, usize, usize), LayoutError> {
    let fits = |order: u32| {
        let bytes = req.page_size << order;
        if bytes < first_offset + stride {
            return None;
        }
        let objects = ((bytes - first_offset) / stride).min(MAX_OBJECTS);
        Some((bytes, objects, bytes - first_offset - objects * stride))
    };
    let min_order = (0..=MAX_ORDER)
        .find(|&o| fits(o).is_some())
        .ok_or(LayoutError::TooLarge)?;

    // Tightest waste bound first. Below the costly order, grow the slab
    // until it holds `min_objects`; past it, take the first order whose
    // waste is within the bound. If no bound can be met, the smallest
    // order that fits one object.
    let mut chosen = None;
    'search: for fraction in [16usize, 8, 4] {
        for order in min_order..=MAX_ORDER {
            let Some((bytes, objects, waste)) = fits(order) else {
                continue;
            };
            if order < COSTLY_ORDER
                && (objects < req.min_objects || (order == 0 && objects < PAGE_SLAB_OBJECTS))
            {
                continue;
            }
            if waste * fraction <= bytes {
                chosen = Some(order);
                break 'search;
            }
        }
    }
    let order = if req.smallest {
        min_order
    } else {
        chosen.unwrap_or(min_order)
    };
    let (bytes, objects, _) = fits(order).ok_or(LayoutError::TooLarge)?;
    Ok((order, bytes, objects, first_offset))
}

impl Layout {
    /// Computes the geometry for `req`.
    pub fn new(req: &LayoutRequest) -> Result<Layout, LayoutError> {
        if req.object_size == 0 {
            return Err(LayoutError::ZeroSize);
        }
        if req.align != 0 && !req.align.is_power_of_two() {
            return Err(LayoutError::BadAlign);
        }
        let mut align = req.align.max(WORD);
        if req.hwcache_align {
            align = align.max(req.cache_line);
        }
        let red_left = if req.red_zone { WORD } else { 0 };
        let inuse = if req.red_zone {
            round_up(req.object_size, WORD) + WORD
        } else {
            req.object_size
        };
        let set_aside = req
            .free_offset_at
            .filter(|&at| at % WORD == 0 && at + WORD <= req.object_size)
            .filter(|_| (req.has_ctor || req.rcu_readers) && !req.poison && !req.red_zone);
        let (free_offset, mut raw) = if let Some(at) = set_aside {
            (at, inuse.max(WORD))
        } else if req.has_ctor || req.poison || req.rcu_readers {
            let off = round_up(inuse, WORD);
            (off, off + WORD)
        } else {
            // In the middle of the object, like in-tree (`object_size / 2`
            // aligned down to a word): a small underflow from the object
            // before, or a read of the first bytes of a fresh object, does
            // not meet the free pointer first.
            (free_pointer_middle(req.object_size), inuse.max(WORD))
        };
        let track_offset = if req.store_user {
            let off = round_up(raw, WORD);
            raw = off + 2 * TRACK_SIZE;
            off
        } else {
            0
        };
        // The next object's left red zone ends the stride.
        let stride = round_up(raw + red_left, align);
        let (order, slab_bytes, inside, inside_first) =
            geometry(req, stride, round_up(req.header_size + red_left, align))?;
        // The header moves out where it costs a quarter of the slab's
        // objects or more: 16 KiB objects, 3 in an order-4 slab with it, 4
        // without. The order stays what the header in the slab made it, so
        // the page allocator sees the same requests. Below that it stays
        // in: found by masking the address, it costs the fast paths
        // nothing, where the page lookup of a free off the CPU slab cost
        // more than the object gained (docs/design.md, "Data", measured).
        let out_first = round_up(red_left, align);
        let outside = ((slab_bytes - out_first) / stride).min(MAX_OBJECTS);
        let header_outside = req.header_outside_ok && inside * 4 <= outside * 3;
        let (objects, first_offset) = if header_outside {
            (outside, out_first)
        } else {
            (inside, inside_first)
        };
        let stride_tz = stride.trailing_zeros();
        let stride_inv = odd_inverse(stride >> stride_tz);
        Ok(Layout {
            object_size: req.object_size,
            stride,
            align,
            free_offset,
            red_left,
            inuse,
            track_offset,
            stride_inv,
            stride_tz,
            first_inv: first_offset.wrapping_mul(stride_inv),
            fp_key: 0,
            hardened: false,
            first_offset,
            header_outside,
            order,
            slab_bytes,
            slab_mask: !(slab_bytes - 1),
            objects,
        })
    }

    /// Index of the object at byte `offset` from the slab start, if `offset`
    /// is exactly the start of an object. No division and one compare: with
    /// `stride = d << tz` (`d` odd) and `rel` the offset from the first
    /// object, `(rel * d⁻¹) ror tz` is `rel / stride` when `stride` divides
    /// `rel`, and otherwise above `(2^64 - 1) / stride`, so above any object
    /// index (the divisibility test of Granlund and Montgomery, Hacker's
    /// Delight 10-17). An offset below the first object wraps and fails too.
    /// `rel * d⁻¹` is computed as `offset * d⁻¹ - first_inv` (mod 2^64).
    #[inline(always)]
    pub fn object_index(&self, offset: usize) -> Option<usize> {
        let idx = offset
            .wrapping_mul(self.stride_inv)
            .wrapping_sub(self.first_inv)
            .rotate_right(self.stride_tz);
        (idx < self.objects).then_some(idx)
    }

    /// The start of the slab that would contain `obj`: slabs are naturally
    /// aligned buddy blocks.
    #[inline(always)]
    pub fn slab_base(&self, obj: *const u8) -> usize {
        obj as usize & self.slab_mask
    }

    /// Whether stored free pointers are hardened (obfuscated).
    pub fn hardened(&self) -> bool {
        self.hardened
    }

    /// Whether objects carry red zones.
    pub fn red_zone(&self) -> bool {
        self.red_left != 0
    }

    /// Whether objects carry owner records.
    pub fn store_user(&self) -> bool {
        self.track_offset != 0
    }

    /// Byte offset of object `idx` from the slab start.
    pub fn object_offset(&self, idx: usize) -> usize {
        self.first_offset + idx * self.stride
    }
}
