// SPDX-License-Identifier: GPL-2.0
//! The cost model of tools/costmodel, without QEMU: caches with LRU
//! (`cache`), the machine with its coherence directory (`machine`), rep
//! string instructions folded as the CPU runs them (`strings`), the
//! decoding of atomics, string instructions and marks (`decode`), the
//! counts and their file format (`counts`), the prices (`profile`), the
//! accesses an out-of-order core would hide (`overlap`), the order of the vCPUs' events in modeled time and their
//! waiting (`order`), the plugin's arguments (`options`), a boot's events
//! recorded for replay (`trace`), the validation
//! against published hardware figures (`validate`), and what the
//! plugin does with each of QEMU's callbacks (`feed`). The plugin (the
//! crate one level up) feeds it guest accesses; `cargo test` checks it on
//! the host.
#![deny(missing_docs)]

pub mod cache;
pub mod calib;
pub mod counts;
pub mod decode;
pub mod feed;
pub mod machine;
pub mod options;
pub mod order;
pub mod overlap;
pub mod profile;
pub mod strings;
pub mod trace;
pub mod validate;
