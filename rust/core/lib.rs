// SPDX-License-Identifier: GPL-2.0
//! Host build of rslub's platform-free core. The same files are compiled
//! into the kernel module (rust/rslub.rs includes them with `#[path]`); this
//! crate exists so they can be tested with `cargo test` in userspace.
#![cfg_attr(not(test), no_std)]

pub mod layout;
pub mod slab;

#[cfg(test)]
mod tests;
