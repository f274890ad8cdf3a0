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
