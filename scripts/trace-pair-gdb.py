# gdb script of scripts/trace-pair.sh (run with gdb -batch -x, attached to
# QEMU's gdbstub): breaks on the mark, tells the guest to go, then
# single-steps the vCPU that hit it from each mark to the next, writing
# every program counter. A line "mark" separates the segments.
#
# Environment: MARK (address of rslub_bench_trace_mark), ALLOCS (how many
# allocators the module traces, each with 3 pairs of 3 marks: the stepping
# starts again at each allocator's first mark, after its warm-up), ARMED
# (file to create once the breakpoint is first set), STEPS (output file).
import os

import gdb

MARK = int(os.environ["MARK"], 16)
ALLOCS = int(os.environ["ALLOCS"])
MARKS = 9  # per allocator: 3 pairs, a mark before, between and after
LIMIT = 20000  # steps between two marks before giving up


def pc():
    return int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF


def to_mark(first):
    gdb.execute("hbreak *0x%x" % MARK, to_string=True)
    if first:
        # The guest sets trace_go once this file exists.
        open(os.environ["ARMED"], "w").close()
    gdb.execute("continue")
    if pc() != MARK:
        raise gdb.GdbError("stopped at 0x%x, not at the mark" % pc())
    gdb.execute("delete")


# Only the stepping vCPU runs while it steps.
gdb.execute("set scheduler-locking step")
with open(os.environ["STEPS"], "w") as out:
    for a in range(ALLOCS):
        to_mark(a == 0)
        out.write("alloc %d\nmark\n" % a)
        seen, steps = 1, 0
        while seen < MARKS:
            gdb.execute("stepi", to_string=True)
            p = pc()
            if p == MARK:
                seen += 1
                steps = 0
                out.write("mark\n")
                continue
            out.write("%x\n" % p)
            steps += 1
            if steps > LIMIT:
                raise gdb.GdbError("more than %d steps after mark %d" % (LIMIT, seen))
gdb.execute("detach")
