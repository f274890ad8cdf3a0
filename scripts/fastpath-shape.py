#!/usr/bin/env python3
"""Guards the shape of rslub's fast paths in a built module.

The alloc and free hit paths are written so that LLVM makes them frameless
and short (docs/design.md, "Fast-path cost"); nothing in the source forces
it, and a toolchain update could undo it with every test still green. This
reads `objdump -dr` of the module, follows every path through each entry
point below from its first instruction to a `ret` that commits with a
cmpxchg16b (a hit), and fails, printing the path, when one of them

  - calls anything (a hit is inline; every way off it is a tail jump),
  - pushes more than one register (the one cmpxchg16b needs: %rbx),
  - has other than exactly one cmpxchg16b, or
  - is longer than the function's budget in instructions.

Usage: scripts/fastpath-shape.py MODULE.ko [NAME=BUDGET ...]
The budgets below are for the module `make check` builds (counters on).
"""
import re
import subprocess
import sys

# Instructions on the longest hit path, counted from the entry's endbr64 to
# the ret. Raise one only with the reason in docs/design.md.
# The module make check builds counts its events: each hit path has one
# counter increment (2 instructions) more than the bench build's (STATS=0:
# 38 and 47, which make bench checks: harness/bench.py). Free went 48 -> 49 on
# 2026-12-01: the slab magic is the cache's secret XOR the slab's address
# (one xor more; docs/design.md, "Fast-path cost").
# The served entries (the kernel's static calls into rslub for a cache it
# serves in place of SLUB) are the API's paths plus one test of rslub's rare-case
# word and of the node on alloc (41 and 47 in the bench build).
BUDGETS = {
    "rslub_cache_alloc": 40,
    "rslub_cache_free": 49,
    "rslub_rust_served_alloc": 43,
    "rslub_rust_served_free": 49,
}

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s*[0-9a-f]+:\s+R_X86_64_\S+\s+(\S+)")
FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
TARGET = re.compile(r"^([0-9a-f]+)\s+<")


def functions(dump, names):
    """{name: [(addr, mnemonic, operands, reloc symbol or None)]}"""
    out, cur = {}, None
    for line in dump.splitlines():
        m = FUNC.match(line)
        if m:
            cur = out.setdefault(m.group(1), []) if m.group(1) in names else None
            continue
        if cur is None:
            continue
        m = RELOC.match(line)
        if m and cur:
            a, mn, ops, _ = cur[-1]
            cur[-1] = (a, mn, ops, m.group(1))
            continue
        m = INSN.match(line)
        if m:
            cur.append((int(m.group(1), 16), m.group(2), m.group(3).strip(), None))
    return out


def hit_paths(insns, limit=100000):
    """Every simple path from the entry to a ret, with what it crossed."""
    index = {a: i for i, (a, _, _, _) in enumerate(insns)}
    paths, stack = [], [(0, [])]
    while stack and len(paths) < limit:
        i, path = stack.pop()
        if i in path or i >= len(insns):
            continue
        path = path + [i]
        _, mn, ops, rel = insns[i]
        if mn.startswith("ret") or (mn == "jmp" and rel and "return_thunk" in rel):
            paths.append(path)
            continue
        if mn.startswith("j"):
            t = TARGET.match(ops)
            inside = t and not rel and int(t.group(1), 16) in index
            if inside:
                stack.append((index[int(t.group(1), 16)], path))
            if mn != "jmp":
                stack.append((i + 1, path))
            continue
        stack.append((i + 1, path))
    return [p for p in paths if any(insns[i][1] == "cmpxchg16b" for i in p)]


def show(insns, path):
    lines = []
    for i in path:
        a, mn, ops, rel = insns[i]
        lines.append(f"    {a:x}: {mn} {ops}" + (f"  [{rel}]" if rel else ""))
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().split("\n\n")[-1])
        return 2
    budgets = dict(BUDGETS)
    for arg in sys.argv[2:]:
        name, _, n = arg.partition("=")
        budgets[name] = int(n)
    dump = subprocess.run(
        ["objdump", "-dr", "--no-show-raw-insn", sys.argv[1]],
        check=True, capture_output=True, text=True).stdout
    funcs = functions(dump, set(budgets))
    bad = 0
    for name, budget in budgets.items():
        insns = funcs.get(name)
        if not insns:
            print(f"fastpath-shape: FAIL {name}: not in {sys.argv[1]}")
            bad += 1
            continue
        paths = hit_paths(insns)
        if not paths:
            print(f"fastpath-shape: FAIL {name}: no path commits with cmpxchg16b and returns")
            bad += 1
            continue
        problems = []
        for p in paths:
            mns = [insns[i][1] for i in p]
            why = []
            if any(m.startswith("call") for m in mns):
                why.append("calls")
            if mns.count("push") > 1:
                why.append(f"{mns.count('push')} pushes")
            if mns.count("cmpxchg16b") != 1:
                why.append(f"{mns.count('cmpxchg16b')} cmpxchg16b")
            if len(p) > budget:
                why.append(f"{len(p)} instructions, over the budget of {budget}")
            if why:
                problems.append((why, p))
        longest = max(len(p) for p in paths)
        if problems:
            why, p = problems[0]
            print(f"fastpath-shape: FAIL {name}: a hit path {', '.join(why)} "
                  f"({len(problems)} of {len(paths)} hit paths fail):\n{show(insns, p)}")
            bad += 1
        else:
            print(f"fastpath-shape: PASS {name}: {len(paths)} hit paths, the longest "
                  f"{longest} instructions (budget {budget}), no call, one push, one cmpxchg16b")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
