"""Every way a training job starts and every loop shape real code has, through the automatic instrumentation:
however torch is imported, ranks started by spawn, fork or a launcher, and loops with dict batches, gradient
accumulation, two optimizers per batch, closures and framework-owned loops. Each case runs the unmodified scripts
in tests/e2e/scripts in a child /usr/bin/python3 against a real bound datagram socket, and compares what saturate
counted with the script's own count (the first step is start-up, so saturate counts from the second).

Run: /usr/bin/python3 -m unittest discover -s tests/python   (torch cases skip without torch)
"""

import collections
import importlib.util
import os
import re
import subprocess
import sys
import unittest

from test_auto import ChannelTest
from test_saturate import PYTHON_DIR, saturate_env

HAVE_TORCH = importlib.util.find_spec("torch") is not None
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e", "scripts")


def run_script(receiver, args, timeout_s=120, **env):
    proc = subprocess.run([sys.executable, *args], env=saturate_env(receiver, **env), capture_output=True,
                          text=True, timeout=timeout_s)
    return proc, receiver.drain()


def by_pid(messages):
    out = collections.defaultdict(list)
    for m in messages:
        out[m["pid"]].append(m)
    return out


def final(messages):
    counted = [m for m in messages if m["type"] in ("progress", "done")]
    return counted[-1] if counted else None


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class LoopShapesTest(ChannelTest):
    def check_case(self, case, per_step=16):
        proc, messages = run_script(self.receiver, [os.path.join(SCRIPTS, "loops.py"), "--case", case,
                                                    "--steps", "40", "--step-ms", "0"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("saturate:", proc.stderr)
        total = re.search(r"total steps=(\d+) samples=(\d+) first=(\d+)", proc.stdout)
        steps, samples, first = (int(g) for g in total.groups())
        last = final(messages)
        self.assertIsNotNone(last, "%s: nothing reported" % case)
        self.assertEqual(last["steps"], steps - 1, case)
        self.assertEqual(last["samples"], samples - first, case)
        self.assertEqual(first, per_step, case)
        loader = [m for m in messages if m["type"] == "loader"][0]
        self.assertEqual(loader["samples_from"], "loader", case)
        return messages

    def test_each_loop_shape_runs_in_probes_loader_and_compute_modes(self):
        # What probe's loader stage (the loader drained, no model) and compute stage (one batch repeated through the
        # model) make of each shape; tests/e2e/probe_loop_shapes.sh probes two of them end to end. The loader drains
        # pass after pass until SATURATE_MAX_SECONDS: a quarter second is batches enough (it checks the deadline
        # after each batch, so at least one is counted), where 1 s made each of the seven loader runs 0.75 s longer.
        for case, per_step in (("dict", 16), ("mapping", 16), ("accum", 64), ("gan", 16), ("closure", 16),
                               ("skip", 16), ("trainer", 16)):
            for mode in ("loader", "compute"):
                with self.subTest(case=case, mode=mode):
                    proc, messages = run_script(self.receiver, [os.path.join(SCRIPTS, "loops.py"), "--case", case,
                                                                "--steps", "400", "--step-ms", "0"],
                                                SATURATE_MODE=mode, SATURATE_MAX_SECONDS="0.25")
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    self.assertNotIn("saturate:", proc.stderr)
                    last = final(messages)
                    self.assertIsNotNone(last, "nothing reported")
                    self.assertGreater(last["samples"], 0)
                    done = [m for m in messages if m["type"] == "done"]
                    if mode == "loader":
                        self.assertEqual(done[-1]["reason"], "loader-drained")
                        self.assertEqual(done[-1]["step_s"], 0)
                    else:
                        self.assertGreater(last["steps"], 0)
                        self.assertEqual(last["samples"] % per_step, 0, last)

    def test_import_paths(self):
        # find_spec first (transformers), import_module, a LazyLoader, a finder ahead of saturate's.
        for case in ("findspec", "import_module", "lazy", "finder"):
            with self.subTest(case=case):
                self.check_case(case)

    def test_batch_layouts(self):
        for case in ("dict", "mapping"):
            with self.subTest(case=case):
                self.check_case(case)

    def test_gradient_accumulation_counts_optimizer_steps_and_every_batch(self):
        self.check_case("accum", per_step=64)

    def test_two_optimizers_per_batch_are_one_step(self):
        messages = self.check_case("gan")
        # The generator's step is part of the training step, not after-step work.
        self.assertLess(final(messages)["phases"].get("after_step", 0), 0.05)

    def test_skipped_optimizer_steps_keep_their_samples(self):
        self.check_case("skip")

    def test_closure_and_framework_owned_loops(self):
        for case in ("closure", "trainer"):
            with self.subTest(case=case):
                self.check_case(case)


FAILING_BATCH = """
import torch
from torch.utils.data import DataLoader

torch.manual_seed(0)

class Odd:
    '''A batch whose shape cannot be read: saturate's sample count fails on it.'''
    def __init__(self, x):
        self.x = x
    @property
    def shape(self):
        raise RuntimeError("no shape here")

def collate(items):
    return Odd(torch.stack(items))

loader = DataLoader([torch.ones(4) for _ in range(64)], batch_size=8, collate_fn=collate)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
steps = 0
for epoch in range(3):
    for batch in loader:
        loss = model(batch.x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
print("steps", steps, "weight", float(model.weight.sum()))
"""


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class TorchBeforeTheHookTest(ChannelTest):
    def test_torch_imported_before_saturate_runs_is_instrumented_at_once(self):
        # What a .pth file or the environment's own sitecustomize does: torch is in sys.modules before the hook.
        import tempfile

        with tempfile.TemporaryDirectory() as theirs:
            with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
                f.write("import torch\n")
            pythonpath = os.pathsep.join([saturate_env()["PYTHONPATH"], theirs])
            proc, messages = run_script(self.receiver, [os.path.join(SCRIPTS, "loops.py"), "--steps", "20",
                                                        "--step-ms", "0"], PYTHONPATH=pythonpath)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(final(messages)["steps"], 19)


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class NeverSilentTest(ChannelTest):
    def test_torch_that_no_hook_saw_is_named_at_exit(self):
        proc, messages = run_script(self.receiver, [os.path.join(SCRIPTS, "loops.py"), "--case", "finder_only",
                                                    "--steps", "5", "--step-ms", "0"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("total steps=5", proc.stdout)
        self.assertIn("saturate: automatic instrumentation is off for this run: torch was imported", proc.stderr)
        self.assertIn("Ahead", proc.stderr)  # the finders, so the user sees what was ahead of saturate's


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class NeverBreaksTest(ChannelTest):
    def test_a_failure_inside_the_instrumentation_turns_it_off_and_the_program_runs_unchanged(self):
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "train.py")
            with open(path, "w") as f:
                f.write(FAILING_BATCH)
            plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60,
                                   env={k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")})
            proc, messages = run_script(self.receiver, [path])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, plain.stdout)  # same steps, same weights
        lines = [l for l in proc.stderr.splitlines() if l.startswith("saturate:")]
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertIn("automatic instrumentation is off for this run: DataLoader.__next__", lines[0])
        self.assertIn("no shape here", lines[0])


class RankOfProcessTest(unittest.TestCase):
    """Where a rank learns its place before (or without) torch.distributed: each launcher's variables."""

    def test_launchers_variables(self):
        sys.path.insert(0, PYTHON_DIR)
        from saturate._state import rank_of_process

        cases = [
            ({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}, {"rank": 1, "world_size": 4, "local_rank": 1}),
            ({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0"},
             {"rank": 3, "world_size": 4, "local_rank": 0}),
            ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "8"}, {"rank": 2, "world_size": 8, "local_rank": 2}),
            ({"RANK": "0", "WORLD_SIZE": "1"}, None),  # one process is no distributed job
            ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, None),  # a Slurm job of one task (a sweep run)
            ({"RANK": "x", "WORLD_SIZE": "2"}, None),
            ({}, None),
        ]
        for environ, want in cases:
            with self.subTest(environ=environ):
                self.assertEqual(rank_of_process(environ), want)


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class RanksTest(ChannelTest):
    """2 ranks on gloo; each rank reports for itself, with its rank, and its counts match its own."""

    # The fork start with two loader workers per rank: one run for two checks (test_fork's counts and
    # test_forked_dataloader_workers_stay_silent's silent workers), each child being ~3 s of torch start-up.
    FORK_WITH_WORKERS = [os.path.join(SCRIPTS, "ddp_train.py"), "--start", "fork", "--workers", "2"]
    _runs = {}

    def run_ranks(self, args):
        """One run of ddp_train.py per distinct argument list in this class, shared by the tests that read it."""
        key = tuple(args)
        if key not in RanksTest._runs:
            RanksTest._runs[key] = run_script(self.receiver, args + ["--epochs", "1", "--samples", "1024",
                                                                     "--log-every", "1"])
        return RanksTest._runs[key]

    def check_ranks(self, args):
        proc, messages = self.run_ranks(args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        own = collections.defaultdict(list)
        for line in proc.stdout.splitlines():
            m = re.match(r"rank (\d+) t=\S+ samples=(\d+)", line)
            if m:
                own[int(m.group(1))].append(int(m.group(2)))
        reports = {}
        for pid, ms in by_pid(messages).items():
            hello = [m for m in ms if m["type"] == "hello"]
            if not hello:
                continue
            self.assertEqual(hello[0]["world_size"], 2)
            loader = [m for m in ms if m["type"] == "loader"][0]
            self.assertEqual(loader["batch_size"], 32)
            self.assertTrue(loader["batchnorm"])
            self.assertFalse(loader["drop_last"])
            reports[hello[0]["rank"]] = final(ms)
        self.assertEqual(sorted(reports), [0, 1], proc.stderr)
        for rank, last in reports.items():
            self.assertEqual(last["rank"], rank)
            # 512 samples per rank in 16 steps of 32; the first step is start-up.
            self.assertEqual(last["samples"], own[rank][-1] - own[rank][0], rank)
            self.assertEqual(last["steps"], len(own[rank]) - 1)
            self.assertGreater(last["before_backward_s"], 0)

    def test_spawn(self):
        self.check_ranks([os.path.join(SCRIPTS, "ddp_train.py"), "--start", "spawn"])

    def test_fork(self):
        self.check_ranks(self.FORK_WITH_WORKERS)

    def test_forkserver(self):
        self.check_ranks([os.path.join(SCRIPTS, "ddp_train.py"), "--start", "forkserver"])

    def test_script_that_reruns_itself_per_rank(self):
        self.check_ranks([os.path.join(SCRIPTS, "ddp_train.py"), "--start", "rerun"])

    def test_launcher_starts_one_process_per_rank(self):
        self.check_ranks([os.path.join(SCRIPTS, "launch_ranks.py"), "--nproc", "2",
                          os.path.join(SCRIPTS, "ddp_train.py"), "--start", "env"])

    def test_forked_dataloader_workers_stay_silent(self):
        proc, messages = self.run_ranks(self.FORK_WITH_WORKERS)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reporting = {pid for pid, ms in by_pid(messages).items() if any(m["type"] == "progress" for m in ms)}
        self.assertEqual(len(reporting), 2, "only the two ranks report, never their loader workers")


if __name__ == "__main__":
    unittest.main()
