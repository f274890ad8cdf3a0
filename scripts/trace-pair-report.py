#!/usr/bin/env python3
"""The table of make trace-pair: per allocator, the instructions of each
traced alloc and free (from one mark to the next), and for the last pair
the functions they ran in, in the order entered (consecutive steps in one
function are one row; a function entered twice has two rows).

The bench module's own instructions (its ops table, the marks, the loop)
are counted apart as "harness": they are the same for every allocator.
"kernel" and "rslub" split the pair by where the instructions ran
(vmlinux, rslub.ko).

A rep string instruction is one instruction (the gdb script steps through
its iterations and writes one line for it, "PC rep OP BYTES"); the tables
name it with its bytes: "rep" in the summary, and in each function's row.

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
    """{alloc index: [[(pc, rep) between mark i and mark i+1], ...]}; rep is
    None, or (op, bytes) for a rep string instruction."""
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
            f = line.split()
            rep = (f[2], int(f[3])) if len(f) == 4 and f[1] == "rep" else None
            seg.append((int(f[0], 16), rep))
    for segs in out.values():
        if segs and not segs[-1]:
            segs.pop()  # the last mark opens nothing
    return out


def runs(steps, addrs, syms):
    """[[function, module, instructions, [(op, bytes) of its reps]], ...]"""
    rows = []
    for p, rep in steps:
        i = bisect.bisect_right(addrs, p) - 1
        name, mod = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "?")
        if not (rows and rows[-1][0] == name):
            rows.append([name, mod, 0, []])
        rows[-1][2] += 1
        if rep:
            rows[-1][3].append(rep)
    return rows


def reps_text(reps):
    """"movsb 128 B, stosq 4096 B" (or "-")."""
    return ", ".join("%s %d B" % r for r in reps) or "-"


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
    print("| allocator | alloc | free | pair | kernel | rslub | harness | rep (last pair) | pairs traced |")
    print("|---|---|---|---|---|---|---|---|---|")
    detail = []
    for k, name in enumerate(names):
        s = segs.get(k, [])
        pairs = [(s[i], s[i + 1]) for i in range(0, len(s) - 1, 3)]
        if not pairs:
            print("| %s | - | - | - | - | - | - | - | 0 |" % name)
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
        reps = [r for rs in (ra, rf) for row in rs if row[1] != "rslub_bench" for r in row[3]]
        print(
            "| %s | %d | %d | %d | %d | %d | %d | %s | %s |"
            % (name, al, fr, al + fr, by["vmlinux"], by["rslub"], h, reps_text(reps), seen)
        )
        detail.append((name, ra, rf))
    for name, ra, rf in detail:
        for op, rs in (("alloc", ra), ("free", rf)):
            print()
            print("## %s: %s (last pair)" % (name, op))
            print()
            print("| function | module | instructions | rep string instructions |")
            print("|---|---|---|---|")
            for fn, mod, n, reps in rs:
                print("| %s | %s | %d | %s |" % (fn, mod, n, reps_text(reps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
