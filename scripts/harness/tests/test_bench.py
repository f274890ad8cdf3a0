# SPDX-License-Identifier: GPL-2.0
"""make bench's plans (harness.bench, benchreal, benchboot): modes, suites,
boots and the names of their files, without a VM."""

import io
import os
import tempfile
import threading
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

from harness import bench, benchreal
from harness import benchboot as bb


class Modes(unittest.TestCase):

    def test_model_is_two_boots(self):
        self.assertEqual(bb.expand_modes("icount model wall model8"),
                         ["icount", "model", "model8", "wall"])
        self.assertEqual(bb.expand_modes("model2 wall"), ["model", "wall"])
        self.assertEqual(bb.expand_modes(" model16  model16 "), ["model16"])

    def test_modes_value_reads_back(self):
        for modes in (["model"], ["icount", "model", "model8"], ["model8", "wall"]):
            self.assertEqual(bb.expand_modes(bb.modes_value(modes)), modes)

    def test_given_modes(self):
        self.assertEqual(bb.given_modes({}, False), (None, []))
        self.assertEqual(bb.given_modes({"MODES": " "}, False), (None, []))
        self.assertEqual(bb.given_modes({"MODES": "model"}, True), (["model", "model8"], []))

    def test_old_names(self):
        # REAL_MODES: "model" was the 2-vCPU boot alone; one line says so.
        modes, notes = bb.given_modes({"REAL_MODES": "icount model", "MODES": "wall"}, False)
        self.assertEqual(modes, ["icount", "model"])
        self.assertEqual(len(notes), 1)
        self.assertIn("REAL_MODES is MODES now", notes[0])
        # QUICK_MODES only counts with QUICK=1, ahead of the others.
        env = {"QUICK_MODES": "model16", "REAL_MODES": "wall"}
        self.assertEqual(bb.given_modes(env, True)[0], ["model16"])
        self.assertEqual(bb.given_modes(env, False)[0], ["wall"])

    def test_shapes(self):
        self.assertEqual([bb.mode_shape(m, 4) for m in
                          ("icount", "model", "model8", "model16", "model32", "wall")],
                         [(2, 1), (2, 1), (8, 2), (16, 2), (32, 4), (4, 1)])
        self.assertEqual(bb.shapes_meta(["icount", "wall", "model8"], "2"),
                         ("icount 2, wall 2, model8 8", "icount 1, wall 1, model8 2"))

    def test_model_nodes(self):
        # 3 GiB over 2 nodes: node 1 from 1.5 GiB, as the model8 boot says.
        self.assertEqual(bb.model_nodes(8, 2, "3G"), bb.model8_nodes())
        self.assertEqual(bb.model_nodes(32, 4, "3G"),
                         "cpu_nodes=" + ":".join(str(c // 8) for c in range(32)) +
                         ",mem_starts=0x30000000:0x60000000:0x90000000")

    def test_quantum_modes(self):
        self.assertTrue(bb.quantum_modes(["icount", "model8"], "1000"))
        self.assertFalse(bb.quantum_modes(["icount", "model8"], "0"))
        self.assertFalse(bb.quantum_modes(["icount", "wall"], "1000"))


class Synthetic(unittest.TestCase):

    def test_defaults(self):
        p = bench.synthetic_plan({})
        self.assertEqual(p.modes, ["icount", "wall"])
        self.assertEqual((p.suite, p.sizes.split()[0], p.ops, p.rounds, p.bench_cpus),
                         ("", "8", "10000", "5", "4"))
        self.assertEqual(p.wall_sizes, p.sizes)

    def test_quick_wins_over_sizes(self):
        p = bench.synthetic_plan({"QUICK": "1", "SIZES": "32", "OPS": "5", "MODES": "icount"})
        self.assertEqual((p.sizes, p.ops, p.rounds, p.wall_sizes, p.bench_cpus),
                         ("8 64 256 4096", "3000", "3", "64 256", "2"))
        self.assertEqual(p.modes, ["icount"])

    def test_suites(self):
        p = bench.synthetic_plan({"SUITE": "cmpxchg"})
        self.assertEqual((p.allocs, p.variants, p.workloads_icount),
                         ("rslub", ["locked_cmpxchg"], "pair repeat"))
        self.assertTrue(p.note.startswith("cmpxchg: "))
        p = bench.synthetic_plan({"SUITE": "free-batch", "ALLOCS": "floor"})
        self.assertEqual((p.allocs, p.variant_allocs),
                         ("slub,rslub", "rslub:free_batch=8,rslub:free_batch=32"))
        self.assertEqual(bench.synthetic_plan({"SUITE": "hardening"}).loads, ["plain=harden=0"])

    def test_classic(self):
        p = bench.synthetic_plan({"SUITE": "classic"})
        self.assertEqual((p.classic, p.modes, p.loads), (True, ["icount"], ["plain=harden=0"]))
        self.assertEqual(bench.synthetic_plan({"SUITE": "classic", "MODES": "model"}).modes,
                         ["model", "model8"])

    def test_kvm_is_one_cycles_boot(self):
        self.assertEqual(bench.synthetic_plan({"KVM": "1", "MODES": "model"}).modes, ["cycles"])

    def test_refusals(self):
        with self.assertRaises(bb.Refused) as e:
            bench.synthetic_plan({"SUITE": "nope"})
        self.assertEqual((e.exception.status, e.exception.stderr), (2, True))
        self.assertIn("unknown SUITE 'nope'", e.exception.line)
        with self.assertRaises(bb.Refused) as e:
            bench.synthetic_plan({"MODES": "icount counters"})
        self.assertEqual(e.exception.status, 2)
        self.assertIn("unknown mode 'counters'", e.exception.line)

    def test_builds(self):
        self.assertEqual(bench.rslub_builds("/b", ["fill_ge"], ["plain=harden=0,x=1"]),
                         "default=/b/rslub.ko fill_ge=/b-fill_ge/rslub.ko "
                         "plain=/b/rslub.ko?harden=0,x=1")

    def test_shapes(self):
        p = bench.synthetic_plan({"QUICK": "1"})
        allocs = "slub,rslub,kmalloc,kserved,floor"
        s = bench.synthetic_shape(p, "icount", allocs, True)
        self.assertEqual((s.cpus, s.extra, s.opts), (2, "MARKS=1", "plugin"))
        self.assertEqual(bench.synthetic_shape(p, "icount", allocs, False).opts, "icount")
        s = bench.synthetic_shape(p, "wall", allocs, True)
        self.assertEqual((s.cpus, s.sizes, s.rounds, s.opts), (2, "64 256", "3", ""))
        s = bench.synthetic_shape(p, "model8", allocs, True)
        self.assertEqual((s.cpus, s.allocs, s.ops, s.numa, s.extra),
                         (8, "slub,rslub,floor", "2000", "2", "REMOTE_CPU=4 BUDGET_KB=512"))
        s = bench.synthetic_shape(p, "model32", allocs, True)
        self.assertEqual((s.cpus, s.numa, s.extra),
                         (32, "4", "REMOTE_CPU=24 BUDGET_KB=512 PAR_CPUS=1,2,4,8,16,32"))
        s = bench.synthetic_shape(p, "cycles", allocs, True)
        self.assertEqual(s.workloads, p.workloads_icount + " parallel")

    def test_guest_command(self):
        p = bench.synthetic_plan({"QUICK": "1"})
        k = bench.Kernel("/k", "/b", "slub,floor", "none", "classic-")
        s = bench.synthetic_shape(p, "icount", k.allocs, True)
        self.assertEqual(bench.synthetic_cmd(p, k, "icount", s, "harden=0"),
                         "cd /b && MODE=icount WORKLOADS='pair repeat fifo shuffle bulk remote "
                         "churn' SIZES='8 64 256 4096' BATCHES='1 16 128' ALLOCS='slub,floor' "
                         "OPS=3000 ROUNDS=3 CHURN_ROUNDS=2 MARKS=1 MAX_CPUS=2 "
                         "RSLUB_PARAMS='harden=0' RSLUB_BUILDS='none' VARIANT_ALLOCS='' "
                         "scripts/guest/bench.sh")

    def test_vm_env(self):
        s = bench.Shape(8, "w", "s", "1", "a", "1", numa="2")
        with mock.patch.dict(os.environ, {"VM_QEMU": "/q"}):
            e = bench.vm_env({"VM_STALL": "9"}, s, "-icount", "", "/o/c.log", "7200")
        self.assertEqual(e, {"VM_QEMU": "/q", "VM_CPUS": "8", "VM_MEM": "3G",
                             "VM_QEMU_OPTS": "-icount", "VM_STALL": "9", "VM_TIMEOUT": "7200",
                             "VM_APPEND": "loglevel=4", "VM_CONSOLE": "/o/c.log",
                             "VM_NUMA": "2"})


class Real(unittest.TestCase):

    def test_defaults(self):
        p = benchreal.plan({}, False)
        self.assertEqual((p.suite, p.modes, p.rounds, p.sides),
                         ("real", ["icount", "wall", "counters"], "5", "slub rslub aa"))
        p = benchreal.plan({"QUICK": "1", "ROUNDS": "7"}, False)
        self.assertEqual((p.modes, p.rounds), (["icount", "counters"], "2"))

    def test_classic(self):
        p = benchreal.plan({}, True)
        self.assertEqual((p.suite, p.modes, p.sides),
                         ("classic-real", ["icount", "model", "model8"], "slub slub-aa rslub"))
        self.assertEqual(benchreal.plan({"QUICK": "1"}, True).modes, ["model"])
        self.assertEqual(benchreal.plan({"AA": "1"}, True).sides, "slub slub-aa rslub aa")
        with self.assertRaises(bb.Refused) as e:
            benchreal.plan({"EXPERIMENT": "fill"}, True)
        self.assertIn("is for SUITE=real", e.exception.line)

    def test_scale_run(self):
        p = benchreal.plan({"MODES": "model16 model32"}, False)
        self.assertEqual((p.workloads, p.rounds, p.sides),
                         (benchreal.SCALE_WORKLOADS, "2", "slub rslub"))
        p = benchreal.plan({"MODES": "model16", "ROUNDS": "3", "EXPERIMENT": "cpu-partial"},
                           False)
        self.assertEqual((p.rounds, p.sides), ("3", "slub rslub rslub:cpu_partial=0 aa"))

    def test_experiments(self):
        p = benchreal.plan({"EXPERIMENT": "all"}, False)
        self.assertEqual(p.variant_builds, ["fill_ge", "locked_cmpxchg", "free_batch"])
        self.assertEqual(p.sides, "slub rslub rslub:cpu_partial=0 rslub:max_empty=0 "
                                  "rslub:max_empty=64 aa")
        self.assertEqual((p.build_label, p.experiment.split()[0]), ("default", "cpu-partial"))
        with self.assertRaises(bb.Refused) as e:
            benchreal.plan({"EXPERIMENT": "fill nope"}, False)
        self.assertEqual(e.exception.status, 1)
        with self.assertRaises(bb.Refused) as e:
            benchreal.plan({"MODES": "icount cycles"}, False)
        self.assertIn("unknown mode 'cycles'", e.exception.line)

    def test_guest_env(self):
        p = benchreal.plan({"MODES": "model16"}, False)
        self.assertEqual(benchreal.guest_env(p, {"SERVE": "", "HB_LOOPS": "3", "X": "1"}),
                         f"ROUNDS=2 RSLUB_PARAMS='' WORKLOADS='{benchreal.SCALE_WORKLOADS}' "
                         "SERVE='' HB_LOOPS='3'")

    def test_model_sizes(self):
        # The mode's own sizes first; a size the environment sets is left to it.
        scale = benchreal.model_scale("model8", {"MMAP_PROCS": "2"})
        self.assertEqual(scale[:3], ["PERF_COPIES=4", "PERF_FORK_LOOPS=15",
                                     "PERF_EXECVE_LOOPS=20"])
        self.assertNotIn("PERF_FORK_LOOPS=30", scale)
        self.assertFalse(any(v.startswith("MMAP_PROCS=") for v in scale))

    def test_guest_command(self):
        p = benchreal.plan({"EXPERIMENT": "free-batch", "WORKLOADS": "brk1"}, False)
        cmd = benchreal.guest_cmd(p, {"WORKLOADS_model8": "mmap2"}, "model8", "/b-free_batch",
                                  "free_batch")
        self.assertTrue(cmd.startswith("cd /b-free_batch && MODE=model MARKS=0 "
                                       "SIDES='slub rslub:free_batch=8 rslub:free_batch=32' "
                                       "MMAP_PROCS=8 "))
        # The mode's own programs after WORKLOADS: they win.
        self.assertTrue(cmd.endswith("BUILD_LABEL='free_batch' ROUNDS=5 RSLUB_PARAMS='' "
                                     "WORKLOADS='brk1' WORKLOADS='mmap2' scripts/guest/real.sh"))
        cmd = benchreal.guest_cmd(p, {}, "icount", "/b", sides="slub slub-aa", marks="1")
        self.assertEqual(cmd, "cd /b && MODE=icount MARKS=1 SIDES='slub slub-aa' "
                              "BUILD_LABEL='default' ROUNDS=5 RSLUB_PARAMS='' WORKLOADS='brk1' "
                              "scripts/guest/real.sh")

    def test_log_names(self):
        self.assertEqual([benchreal.log_name("icount"), benchreal.log_name("model8", "classic-"),
                          benchreal.log_name("wall", "", "fill_ge")],
                         ["icount", "classic-model8", "wall-fill_ge"])

    def test_parse_args(self):
        with tempfile.TemporaryDirectory() as out:
            for name in ("vm-classic-icount.log", "vm-icount.log", "counts-icount.txt",
                         "vm-wall-fill_ge.log", "counts-classic-icount.txt"):
                Path(out, name).write_text("", encoding="utf-8")
            p = benchreal.plan({"MODES": "icount wall"}, True)
            logs, counts, renames, ran = benchreal.parse_args(p, out)
            self.assertEqual(logs, [f"{out}/vm-classic-icount.log", f"{out}/vm-icount.log"])
            self.assertEqual(counts, ["--counts", f"{out}/vm-classic-icount.log="
                                      f"{out}/counts-classic-icount.txt",
                                      "--counts", f"{out}/vm-icount.log={out}/counts-icount.txt"])
            self.assertEqual(renames[:4], ["--rename", f"{out}/vm-classic-icount.log:slub=classic",
                                           "--rename",
                                           f"{out}/vm-classic-icount.log:slub-aa=classic-aa"])
            self.assertEqual(renames[5], f"{out}/vm-icount.log:slub=sheaves")
            self.assertEqual(ran, ["icount"])
            p = benchreal.plan({"MODES": "icount wall", "EXPERIMENT": "fill"}, False)
            logs, _, renames, ran = benchreal.parse_args(p, out)
            self.assertEqual(logs, [f"{out}/vm-icount.log", f"{out}/vm-wall-fill_ge.log"])
            self.assertEqual(renames, ["--rename", f"{out}/vm-wall-fill_ge.log:slub=slub-fill_ge"])
            self.assertEqual(ran, ["icount"])

    def test_first_line(self):
        with tempfile.TemporaryDirectory() as out:
            Path(out, "a").write_text("x\nbench: sizes: HB=1\n", encoding="utf-8")
            Path(out, "b").write_text("bench: no-serve:\n", encoding="utf-8")
            self.assertEqual(benchreal.first_line([f"{out}/a", f"{out}/b"], "bench: sizes:"),
                             "HB=1")
            self.assertEqual(benchreal.first_line([f"{out}/b"], "bench: no-serve:"), "")
            self.assertIsNone(benchreal.first_line([f"{out}/a"], "bench: no-serve:"))


class ClassicAll(unittest.TestCase):

    def test_steps(self):
        # The steps' own MODES: an old name in the environment would win there.
        env = {"QUICK": "1", "ROUNDS": "3", "WORKLOADS": "brk1", "QUICK_MODES": "",
               "MODES": "model", "BENCH_KDIR": "/k"}
        modes, rounds, synthetic, real, _ = bench.classic_all_plan(env)
        self.assertEqual((modes, rounds), (["model", "model8"], "3"))
        self.assertEqual((synthetic["SUITE"], synthetic["QUICK"], synthetic["MODES"]),
                         ("classic", "1", "model2 model8"))
        self.assertNotIn("ROUNDS", synthetic)
        self.assertNotIn("WORKLOADS", synthetic)
        self.assertEqual((real["SUITE"], real["ROUNDS"], real["WORKLOADS"], real["BENCH_KDIR"]),
                         ("classic-real", "3", "brk1", "/k"))
        self.assertNotIn("QUICK", real)
        self.assertNotIn("QUICK_MODES", synthetic)
        self.assertEqual(real["WORKLOADS_model32"], real["WORKLOADS_model16"])

    def test_defaults(self):
        modes, rounds, _, real, _ = bench.classic_all_plan({})
        self.assertEqual((modes, rounds), (["model", "model8", "model16", "model32"], "5"))
        self.assertTrue(real["WORKLOADS"].endswith("iperf3-tcp"))
        modes, rounds, _, real, _ = bench.classic_all_plan({"QUICK": "1"})
        self.assertEqual((modes, rounds, real["WORKLOADS"]),
                         (["model", "model8"], "2", bench.UPSTREAM))


class Files(unittest.TestCase):

    def test_out_dir(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(bb.out_dir({"BENCH_OUT": f"{tmp}/x/../r"}, "-real"), f"{tmp}/r")
            with mock.patch.object(bb.lib, "ROOT", Path(tmp)):
                out = bb.out_dir({}, "-classic-real-fill")
            self.assertRegex(out, rf"^{tmp}/results/\d{{8}}-\d{{6}}-classic-real-fill$")
            self.assertTrue(os.path.isdir(out))

    def test_build_dir(self):
        self.assertEqual(bb.build_dir({"BENCH_BUILD": "/b"}), "/b")
        self.assertEqual(bb.build_dir({"RSLUB_CACHE": "/c"}), "/c/bench-build")

    def test_lock_build(self):
        with tempfile.TemporaryDirectory() as tmp:
            held = bb.lock_build(f"{tmp}/b")
            with mock.patch("sys.stderr", io.StringIO()) as err:
                with self.assertRaises(bb.Stop):
                    bb.lock_build(f"{tmp}/b")
            self.assertIn("another make bench is using", err.getvalue())
            held.close()
            bb.lock_build(f"{tmp}/b").close()


class Schedule(unittest.TestCase):

    def test_model_boots_at_once(self):
        started, both = [], threading.Barrier(2, timeout=10)

        def run_mode(m):
            started.append(m)
            if m in ("model", "model8"):
                both.wait()  # each waits for the other: they run at once

        with mock.patch("os.cpu_count", return_value=2):
            bb.schedule(["icount", "model", "model8"], run_mode, bb.Runner())
        self.assertEqual(started[0], "icount")
        self.assertEqual(sorted(started[1:]), ["model", "model8"])

    def test_one_core_runs_them_in_turn(self):
        started = []
        with mock.patch("os.cpu_count", return_value=1):
            bb.schedule(["model", "model8", "wall"], started.append, bb.Runner())
        self.assertEqual(started, ["model", "model8", "wall"])

    def test_a_failed_model_boot(self):
        def run_mode(m):
            if m == "model8":
                raise bb.Stop(1)

        with mock.patch("os.cpu_count", return_value=2), redirect_stdout(io.StringIO()) as out:
            with self.assertRaises(bb.Stop) as e:
                bb.schedule(["model", "model8"], run_mode, bb.Runner())
        self.assertEqual(e.exception.status, 1)
        self.assertEqual(out.getvalue(), "bench: FAILED: a model boot failed (above)\n")


if __name__ == "__main__":
    unittest.main()
