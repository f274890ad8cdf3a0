# SPDX-License-Identifier: GPL-2.0
"""Stand-ins the harness's tests share."""

from pathlib import Path


def model_tree(path):
    """PATH made what the cost model's QEMU options are read from: a kernel
    build directory (System.map: cpu_number at 0x20a2c) and a checkout whose
    costmodel-price gives the interval core of server-ooo (224:10:56:16)
    and none for the in-order server profile. Returns PATH as a Path."""
    path = Path(path)
    (path / "System.map").write_text("0000000000020a2c D cpu_number\n", encoding="ascii")
    price = path / "tools/costmodel/target/release/costmodel-price"
    price.parent.mkdir(parents=True, exist_ok=True)
    price.write_text('#!/bin/sh\n[ "$2" = server ] || echo 224:10:56:16\n', encoding="ascii")
    price.chmod(0o755)
    return path


def command(bindir, name, script):
    """An executable NAME in the directory BINDIR running the shell SCRIPT.
    Returns BINDIR as a str."""
    path = Path(bindir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n", encoding="ascii")
    path.chmod(0o755)
    return str(bindir)


def dpkg(bindir, versions):
    """A dpkg-query in BINDIR that knows the packages of VERSIONS
    ({package: version}) as installed and no other: -f='${Version}' gives
    the version, -f='${Status}' "install ok installed"."""
    cases = "".join(f'*" {p}") v="{v}" ;;\n' for p, v in versions.items())
    return command(bindir, "dpkg-query", f'case " $*" in\n{cases}*) exit 1 ;;\nesac\n'
                   'case "$2" in *Status*) printf "install ok installed" ;; '
                   '*) printf %s "$v" ;; esac')


def rustc(bindir, version="1.95.0", llvm="22.1.2"):
    """A rustc in BINDIR of VERSION whose --verbose names LLVM."""
    return command(bindir, "rustc", f'echo "rustc {version} (0000000 2026-01-01)"\n'
                   f'[ "$2" = --verbose ] && printf "binary: rustc\\nLLVM version: {llvm}\\n"\n'
                   'exit 0')


# A checkout's config/ and patches/ for the kernel keys: comments, blank
# lines, options setup.py drops for the classic flavor or --no-patches,
# "is not set" lines, a fragment without its last newline (cat joins it to
# the next one's first line) and one with CRLF and tabs.
FRAGMENTS = {
    "base": b"# base\n\nCONFIG_RUST=y\nCONFIG_RUST_INLINE_HELPERS=y\nCONFIG_SLAB_BACKEND=y\n"
            b"CONFIG_RUSTY=y\n  # indented comment\n\t\n# CONFIG_X is not set\n"
            b"#CONFIG_Y is not set\n# CONFIG_Z is not set, so\nCONFIG_LAST=y",
    "test": b"CONFIG_T=y\r\n# c\r\n \r\nCONFIG_U=\"a b\"  # trailing\n",
    "bench": b"CONFIG_SLAB_BACKEND=n\nCONFIG_B=y\n",
    "classic": b"# CONFIG_RUST is not set\nCONFIG_C=y\n",
    "debug": b"CONFIG_KASAN=y\n\n",
}


def checkout(root, fragments=None, patches=(b"--- a/f\n+++ b/f\n", b"second\n")):
    """ROOT made a checkout of config/NAME.config (FRAGMENTS, default
    FRAGMENTS) and patches/000N-p.patch (PATCHES). Returns ROOT as a Path."""
    root = Path(root)
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "patches").mkdir(exist_ok=True)
    for name, data in (FRAGMENTS if fragments is None else fragments).items():
        (root / "config" / f"{name}.config").write_bytes(data)
    for i, data in enumerate(patches):
        (root / "patches" / f"{i + 1:04}-p.patch").write_bytes(data)
    return root
