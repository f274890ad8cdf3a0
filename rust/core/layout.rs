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
//! Platform-free: no kernel types; compiled into the module and the host crate.

/// Size of a machine word; the free pointer is one.
pub const WORD: usize = core::mem::size_of::<usize>();

/// Highest order a slab may use.
pub const MAX_ORDER: u32 = 4;

/// Orders up to this one are cheap for the page allocator (upstream's
/// `PAGE_ALLOC_COSTLY_ORDER`); larger ones are used only when needed.
pub const COSTLY_ORDER: u32 = 3;

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
    /// Cache line size.
    pub cache_line: usize,
    /// Page size.
    pub page_size: usize,
    /// Bytes at the start of each slab reserved for the slab header.
    pub header_size: usize,
    /// Objects a slab should hold at least, when waste allows.
    pub min_objects: usize,
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
    /// Offset of the free pointer inside a free object.
    pub free_offset: usize,
    /// Offset of the first object from the slab start.
    pub first_offset: usize,
    /// Slab order (`2^order` pages).
    pub order: u32,
    /// Bytes in a slab.
    pub slab_bytes: usize,
    /// Objects per slab.
    pub objects: usize,
}

const fn round_up(x: usize, a: usize) -> usize {
    (x + a - 1) & !(a - 1)
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
        let (free_offset, raw) = if req.has_ctor {
            let off = round_up(req.object_size, WORD);
            (off, off + WORD)
        } else {
            (0, req.object_size.max(WORD))
        };
        let stride = round_up(raw, align);
        let first_offset = round_up(req.header_size, align);

        let fits = |order: u32| {
            let bytes = req.page_size << order;
            if bytes < first_offset + stride {
                return None;
            }
            let objects = (bytes - first_offset) / stride;
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
                if objects < req.min_objects && order < COSTLY_ORDER {
                    continue;
                }
                if waste * fraction <= bytes {
                    chosen = Some(order);
                    break 'search;
                }
            }
        }
        let order = chosen.unwrap_or(min_order);
        let (slab_bytes, objects, _) = fits(order).ok_or(LayoutError::TooLarge)?;
        Ok(Layout {
            object_size: req.object_size,
            stride,
            align,
            free_offset,
            first_offset,
            order,
            slab_bytes,
            objects,
        })
    }

    /// Index of the object at byte `offset` from the slab start, if `offset`
    /// is exactly the start of an object.
    pub fn object_index(&self, offset: usize) -> Option<usize> {
        let rel = offset.checked_sub(self.first_offset)?;
        // checked_*: no division-by-zero panic path in the module's code.
        if rel.checked_rem(self.stride)? != 0 {
            return None;
        }
        let idx = rel.checked_div(self.stride)?;
        (idx < self.objects).then_some(idx)
    }

    /// Byte offset of object `idx` from the slab start.
    pub fn object_offset(&self, idx: usize) -> usize {
        self.first_offset + idx * self.stride
    }
}
