#!/usr/bin/env python3
"""The table of make trace-pair: per allocator, the instructions of each
traced alloc and free (from one mark to the next), and for the last pair
the functions they ran in, in the order entered (consecutive steps in one
function are one row; a function entered twice has two rows).

The bench module's own instructions (its ops table, the marks, the loop)
are counted apart as "harness": they are the same for every allocator.
"kernel" and "rslub" split the pair by where the instructions ran
(vmlinux, rslub.ko).

Usage: trace-pair-report.py --allocs slub,rslub,served STEPS KALLSYMS
"""
import argparse
import bisect
import sys


def load_symbols(path):
    syms = []
    for line in open(path):
        f = line.split()
        if len(f) < 3 or f[1] not in "tTwW":
            continue
        mod = f[3].strip("[]") if len(f) > 3 else "vmlinux"
        syms.append((int(f[0], 16), f[2], mod))
    syms.sort()
    return [s[0] for s in syms], syms


def segments(path):
    """{alloc index: [[pcs between mark i and mark i+1], ...]}"""
    out, cur, seg = {}, None, None
    for line in open(path):
        line = line.strip()
        if line.startswith("alloc "):
            cur = int(line.split()[1])
            out[cur] = []
            seg = None
        elif line == "mark":
            seg = []
            out[cur].append(seg)
        elif line:
            seg.append(int(line, 16))
    for segs in out.values():
        if segs and not segs[-1]:
            segs.pop()  # the last mark opens nothing
    return out


def runs(pcs, addrs, syms):
    rows = []
    for p in pcs:
        i = bisect.bisect_right(addrs, p) - 1
        name, mod = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "?")
        if rows and rows[-1][0] == name:
            rows[-1][2] += 1
        else:
            rows.append([name, mod, 1])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--allocs", required=True)
    ap.add_argument("--size", default="64")
    ap.add_argument("--kernel", default="")
    ap.add_argument("steps")
    ap.add_argument("kallsyms")
    a = ap.parse_args()
    names = a.allocs.split(",")
    addrs, syms = load_symbols(a.kallsyms)
    segs = segments(a.steps)
    print("# Instructions of one pair, single-stepped (size %s, %s)" % (a.size, a.kernel))
    print()
    print("| allocator | alloc | free | pair | kernel | rslub | harness | pairs traced |")
    print("|---|---|---|---|---|---|---|---|")
    detail = []
    for k, name in enumerate(names):
        s = segs.get(k, [])
        pairs = [(s[i], s[i + 1]) for i in range(0, len(s) - 1, 3)]
        if not pairs:
            print("| %s | - | - | - | - | - | - | 0 |" % name)
            continue
        counts = []
        for al, fr in pairs:
            ra, rf = runs(al, addrs, syms), runs(fr, addrs, syms)
            own = [sum(r[2] for r in rs if r[1] != "rslub_bench") for rs in (ra, rf)]
            harness = sum(r[2] for rs in (ra, rf) for r in rs if r[1] == "rslub_bench")
            counts.append((own[0], own[1], harness, ra, rf))
        al, fr, h, ra, rf = counts[-1]
        by = {m: sum(r[2] for rs in (ra, rf) for r in rs if r[1] == m) for m in ("vmlinux", "rslub")}
        seen = "/".join("%d+%d" % (c[0], c[1]) for c in counts)
        print(
            "| %s | %d | %d | %d | %d | %d | %d | %s |"
            % (name, al, fr, al + fr, by["vmlinux"], by["rslub"], h, seen)
        )
        detail.append((name, ra, rf))
    for name, ra, rf in detail:
        for op, rs in (("alloc", ra), ("free", rf)):
            print()
            print("## %s: %s (last pair)" % (name, op))
            print()
            print("| function | module | instructions |")
            print("|---|---|---|")
            for fn, mod, n in rs:
                print("| %s | %s | %d |" % (fn, mod, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
