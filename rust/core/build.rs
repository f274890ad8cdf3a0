// SPDX-License-Identifier: GPL-2.0
//! Builds the host machine (c_shim/host/: the shim's interface over
//! simulated CPUs and memory) with `cc` and generates its Rust declarations
//! with the bindgen command (the same tool and header the module build uses).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    // The repository: two levels up, unless RSLUB_ROOT says where (a copy
    // of this crate alone, as cargo-mutants makes, has no ../../c_shim).
    println!("cargo:rerun-if-env-changed=RSLUB_ROOT");
    let root = env::var_os("RSLUB_ROOT").map_or_else(
        || PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../.."),
        PathBuf::from,
    );
    let shim = root.join("c_shim");
    let host = shim.join("host");
    const HOST_C: [&str; 3] = ["machine.c", "cpus.c", "memory.c"];
    for f in HOST_C.iter().chain(&["hooks.h", "machine.h"]) {
        println!("cargo:rerun-if-changed={}", host.join(f).display());
    }
    println!("cargo:rerun-if-changed={}", shim.join("shim.h").display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("include/rslub_limits.h").display()
    );
    println!("cargo:rerun-if-env-changed=BINDGEN");
    println!("cargo::rustc-check-cfg=cfg(rslub_no_stats)");
    // Build variants (Kbuild VARIANT=, make bench
    // SUITE=cmpxchg|fill|free-batch).
    println!("cargo::rustc-check-cfg=cfg(rslub_locked_cmpxchg)");
    println!("cargo::rustc-check-cfg=cfg(rslub_fill_ge)");
    println!("cargo::rustc-check-cfg=cfg(rslub_free_batch)");

    cc::Build::new()
        .files(HOST_C.iter().map(|f| host.join(f)))
        .flag("-mcx16")
        .flag("-Wall")
        .flag("-Wextra")
        .flag("-Werror")
        .compile("rslub_host_machine");

    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let wrapper = out.join("wrapper.h");
    std::fs::write(
        &wrapper,
        format!(
            "#include \"{}\"\n#include \"{}\"\n",
            shim.join("shim.h").display(),
            host.join("hooks.h").display()
        ),
    )
    .unwrap();
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".into());
    let mut cmd = Command::new(&bindgen);
    if env::var_os("LIBCLANG_PATH").is_none() {
        cmd.env("LIBCLANG_PATH", "/usr/lib/llvm-22/lib");
    }
    let status = cmd
        .arg(&wrapper)
        .args([
            "--use-core",
            "--ctypes-prefix",
            "core::ffi",
            "--no-layout-tests",
        ])
        .args(["--allowlist-function", "rslub_(shim|host)_.*"])
        .args([
            "--allowlist-type",
            "rslub_shim_.*",
            "--allowlist-var",
            "RSLUB_.*",
        ])
        .arg("--with-derive-default")
        .arg("-o")
        .arg(out.join("shim_bindings.rs"))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {bindgen} (make setup installs it): {e}"));
    assert!(status.success(), "bindgen failed on c_shim/shim.h");
}
