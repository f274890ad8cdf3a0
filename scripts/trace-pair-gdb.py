# gdb script of make trace-pair (scripts/harness/tracepair.py; run with
# gdb -batch -x, attached to QEMU's gdbstub): breaks on the mark, tells the
# guest to go, then single-steps the vCPU that hit it from each mark to the
# next, writing every program counter. A line "mark" separates the
# segments.
#
# A rep string instruction is one instruction, as the CPU runs it: QEMU
# single-steps it one iteration at a time (the pc stays put until the
# count is done), so the script steps through its iterations and writes
# one line for it, "PC rep OP BYTES" (OP: movsb, stosq, ...; BYTES: the
# elements it ran times their size, from the count register's change).
#
# Environment: MARK (address of rslub_bench_trace_mark), ALLOCS (how many
# allocators the module traces, each with 3 pairs of 3 marks: the stepping
# starts again at each allocator's first mark, after its warm-up), ARMED
# (file to create once the breakpoint is first set), STEPS (output file),
# MARKS (marks per allocator, 9), BITS (64, or 32 for 32-bit code, where
# 0x40-0x4f are no REX prefixes: python3 -m harness.tracepair --self-test).
import os

import gdb

MARK = int(os.environ["MARK"], 16)
ALLOCS = int(os.environ["ALLOCS"])
MARKS = int(os.environ.get("MARKS", "9"))  # per allocator: 3 pairs, a mark before, between and after
BITS = int(os.environ.get("BITS", "64"))
LIMIT = 20000  # instructions between two marks before giving up
REP_LIMIT = 1 << 22  # iterations of one rep string instruction

# The string operations by opcode (byte-sized forms; the next opcode is the
# word/dword/qword form).
STRING_OPS = {0xA4: "movs", 0xA6: "cmps", 0xAA: "stos", 0xAC: "lods", 0xAE: "scas"}
LEGACY = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3}


def rep_string(code, bits=64):
    """(name, element size) of a rep-prefixed string instruction whose
    bytes begin `code`, else None: legacy prefixes, a REX prefix (64-bit
    code), then the opcode."""
    i, rep, opsize, rexw = 0, False, False, False
    while i < len(code) and code[i] in LEGACY:
        rep |= code[i] in (0xF2, 0xF3)
        opsize |= code[i] == 0x66
        i += 1
    if bits == 64 and i < len(code) and 0x40 <= code[i] <= 0x4F:
        rexw = bool(code[i] & 8)
        i += 1
    if not rep or i >= len(code):
        return None
    op = code[i]
    base = op & ~1
    if base not in STRING_OPS:
        return None
    if op & 1 == 0:
        size = 1
    elif rexw:
        size = 8
    elif opsize:
        size = 2
    else:
        size = 4
    return STRING_OPS[base] + {1: "b", 2: "w", 4: "l", 8: "q"}[size], size


def pc():
    return int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF


def count_reg():
    # QEMU's x86_64 gdbstub gives 64-bit registers in every mode.
    return int(gdb.parse_and_eval("$rcx")) & 0xFFFFFFFFFFFFFFFF


def code_at(p):
    try:
        return gdb.selected_inferior().read_memory(p, 15).tobytes()
    except gdb.MemoryError:
        return b""


def to_mark(first):
    gdb.execute("hbreak *0x%x" % MARK, to_string=True)
    if first:
        # The guest sets trace_go once this file exists.
        open(os.environ["ARMED"], "w").close()
    gdb.execute("continue")
    if pc() != MARK:
        raise gdb.GdbError("stopped at 0x%x, not at the mark" % pc())
    gdb.execute("delete")


def step_over_rep(p, size):
    """Steps a rep string instruction at p through its iterations; returns
    (the pc after it, its bytes)."""
    before = count_reg()
    for _ in range(REP_LIMIT):
        gdb.execute("stepi", to_string=True)
        q = pc()
        if q != p:
            return q, (before - count_reg()) * size
    raise gdb.GdbError("a rep string instruction at 0x%x ran %d iterations" % (p, REP_LIMIT))


def main():
    # Only the stepping vCPU runs while it steps.
    gdb.execute("set scheduler-locking step")
    with open(os.environ["STEPS"], "w") as out:
        for a in range(ALLOCS):
            to_mark(a == 0)
            out.write("alloc %d\nmark\n" % a)
            seen, steps = 1, 0
            gdb.execute("stepi", to_string=True)
            p = pc()
            while seen < MARKS:
                if p == MARK:
                    seen += 1
                    steps = 0
                    out.write("mark\n")
                    if seen == MARKS:
                        break
                    gdb.execute("stepi", to_string=True)
                    p = pc()
                    continue
                rep = rep_string(code_at(p), BITS)
                if rep:
                    nxt, nbytes = step_over_rep(p, rep[1])
                    out.write("%x rep %s %d\n" % (p, rep[0], nbytes))
                else:
                    out.write("%x\n" % p)
                    gdb.execute("stepi", to_string=True)
                    nxt = pc()
                p = nxt
                steps += 1
                if steps > LIMIT:
                    raise gdb.GdbError("more than %d steps after mark %d" % (LIMIT, seen))
    try:
        gdb.execute("detach")
    except gdb.error:
        # The guest ran on and QEMU exited before answering (the test
        # guest does): the steps are written.
        pass


main()
