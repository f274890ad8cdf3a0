# SPDX-License-Identifier: GPL-2.0
"""Configures a kernel tree from tinyconfig plus rslub's fragments.

    scripts/kconfig KDIR FRAGMENT...     (or python3 -m harness.kconfig)

tinyconfig, merge_config.sh of the fragments, olddefconfig; then checks
that every option the fragments ask for survived olddefconfig (an option
whose dependencies are unmet is silently dropped by Kconfig otherwise): a
line "kconfig: OPTION wanted ..., got ... (FRAGMENT)" each, and
"kconfig: fragment options were dropped; see above" with exit status 1,
or "kconfig: all fragment options applied". A later fragment's setting of
an option overrides an earlier one's. setup and gcc-kernel run it (its
output in their logs).
"""

import subprocess
import sys

USAGE = "usage: scripts/kconfig KDIR FRAGMENT..."


def setting(line):
    """(OPTION, value) of a fragment's LINE, value "off" for "# CONFIG_X is
    not set"; None for any other line."""
    if line.startswith("CONFIG_") and "=" in line:
        opt, val = line.split("=", 1)
        return opt, val
    if line.startswith("# CONFIG_") and line.endswith(" is not set"):
        return line[2:].split(" ", 1)[0], "off"
    return None


def wanted(fragments):
    """What FRAGMENTS, [(name, text)] in the order they are merged, ask for:
    {OPTION: (value, the fragment that said it last)}, in the order the
    options first appear; a later fragment's word on an option wins (as
    merge_config.sh applies them)."""
    want = {}
    for name, text in fragments:
        for line in text.split("\n"):
            s = setting(line)
            if s:
                want[s[0]] = (s[1], name)
    return want


def value(config, opt):
    """OPT's value in the .config text CONFIG ("" when it has none)."""
    return "\n".join(line.split("=", 1)[1] for line in config.split("\n")
                     if line.startswith(opt + "="))


def dropped(want, config):
    """The lines saying which options of WANT (wanted()) the .config text
    CONFIG does not have as asked: an option wanted off is wrong only when
    it is on (y or m); a value, when it is another (or none)."""
    lines = []
    for opt, (val, frag) in want.items():
        got = value(config, opt)
        if val == "off":
            if got in ("y", "m"):
                lines.append(f"kconfig: {opt} wanted off, got on ({frag})")
        elif val != got:
            lines.append(f"kconfig: {opt} wanted {val}, got '{got or 'unset'}' ({frag})")
    return lines


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        print(f"kconfig: {path}: {e.strerror}", file=sys.stderr, flush=True)
        return ""


def step(argv):
    """Runs ARGV (its output this process's); whether it succeeded, said
    when not."""
    sys.stdout.flush()
    try:
        rc = subprocess.run(argv, stdin=subprocess.DEVNULL, check=False).returncode
    except OSError as e:
        rc, why = 127, e.strerror
    else:
        why = f"exit status {rc}"
    if rc:
        print(f"kconfig: FAILED: {' '.join(argv)}: {why}", flush=True)
    return rc == 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    kdir, frags = argv[0], argv[1:]
    if not (step(["make", "-C", kdir, "tinyconfig"]) and
            step([f"{kdir}/scripts/kconfig/merge_config.sh", "-m", "-O", kdir,
                  f"{kdir}/.config", *frags]) and
            step(["make", "-C", kdir, "olddefconfig"])):
        return 1
    bad = dropped(wanted([(f, read(f)) for f in frags]), read(f"{kdir}/.config"))
    for line in bad:
        print(line)
    if bad:
        print("kconfig: fragment options were dropped; see above", flush=True)
        return 1
    print("kconfig: all fragment options applied", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
