// SPDX-License-Identifier: GPL-2.0
//! Host build of rslub's platform-free core. The same files are compiled
//! into the kernel module (rust/rslub.rs includes them with `#[path]`); this
//! crate runs them in userspace over the C shim's host twin
//! (c_shim/host_shim.c), so they can be tested with `cargo test`.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod debug;
pub mod layout;
pub mod platform;
pub mod slab;
pub mod slub;
pub mod stat;

pub mod host;

#[cfg(test)]
mod gap_tests;
#[cfg(test)]
mod slub_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
