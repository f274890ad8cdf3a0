// SPDX-License-Identifier: GPL-2.0
//! Host build of rslub's platform-free core. The same files are compiled
//! into the kernel module (rust/rslub.rs includes them with `#[path]`); this
//! crate runs them in userspace over the host machine, the C shim's
//! interface over simulated CPUs and memory (c_shim/host/), so they can be
//! tested with `cargo test`.

#![warn(clippy::undocumented_unsafe_blocks)]
// As in the kernel build (edition 2021 allows it by default).
#![deny(unsafe_op_in_unsafe_fn)]

pub mod debug;
pub mod layout;
pub mod platform;
pub mod slab;
pub mod slub;
pub mod stat;

mod shim_methods;

pub mod host;
/// The shim's bindings, where the core (shared with the module crate, whose
/// root has its own `shim`) looks for them.
pub use host::shim;

#[cfg(test)]
mod bulk_free_tests;
#[cfg(test)]
mod fallback_tests;
#[cfg(test)]
mod header_tests;
#[cfg(test)]
mod invariant_tests;
#[cfg(test)]
mod rcu_tests;
#[cfg(test)]
mod slub_tests;
#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod window_tests;
