"""Smoke tests of the example scripts in examples/, run as saturate runs them: a child process with the helper's
environment and a real receiver socket.

Run: /usr/bin/python3 -m unittest discover -s tests/python   (the trainer's test skips without torch)
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_saturate import Receiver, of_type, saturate_env  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "examples")
HAVE_TORCHVISION = all(importlib.util.find_spec(m) is not None for m in ("torch", "torchvision", "PIL"))
# The per-step line that saturate's output parser reads from unmodified scripts.
LOG_LINE = re.compile(r"^step (\d+) loss [\d.]+ samples/s [\d.]+ step_s [\d.]+ data_s [\d.]+( \w+_s [\d.]+)*$", re.M)
DONE_LINE = re.compile(r"^done: (\d+) steps, (\d+) samples, [\d.]+ samples/s$", re.M)


class ExampleTest(unittest.TestCase):
    def setUp(self):
        self.receiver = Receiver()

    def tearDown(self):
        self.receiver.close()

    def run_example(self, args, **env):
        proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, args[0])] + args[1:],
                              env=saturate_env(self.receiver, **env), capture_output=True, text=True, timeout=120)
        return proc, self.receiver.drain()


class OomAtBatchTest(ExampleTest):
    def test_trains_below_the_limit(self):
        proc, messages = self.run_example(["oom_at_batch.py", "--batch-size", "32", "--steps", "20"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(DONE_LINE.search(proc.stdout).groups(), ("20", "640"))
        self.assertEqual(len(LOG_LINE.findall(proc.stdout)), 2)
        done = of_type(messages, "done")[-1]
        self.assertEqual((done["steps"], done["samples"]), (20, 640))
        self.assertIn("loss", done["metrics"])

    def test_runs_out_of_memory_above_the_limit_set_by_knob(self):
        proc, messages = self.run_example(["oom_at_batch.py", "--limit", "64"],
                                          SATURATE_KNOBS='{"batch_size": 65}')
        self.assertEqual(proc.returncode, 1)
        self.assertRegex(proc.stderr, r"\nRuntimeError: CUDA out of memory\. Tried to allocate 2\.00 GiB\. GPU 0 ")
        (knob,) = of_type(messages, "knob")
        self.assertEqual((knob["name"], knob["value"], knob["source"]), ("batch_size", 65, "saturate"))

    def test_limit_from_the_environment(self):
        proc, _ = self.run_example(["oom_at_batch.py", "--batch-size", "16"], OOM_BATCH_LIMIT="8")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("CUDA out of memory", proc.stderr)


@unittest.skipUnless(HAVE_TORCHVISION, "torch, torchvision or PIL not installed")
class TrainImagesTest(ExampleTest):
    def test_generates_data_trains_and_reports(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "images")
            args = ["train_images.py", "--data", data, "--images", "120", "--source-size", "32", "--image-size",
                    "32", "--batch-size", "16", "--steps", "8", "--log-every", "4", "--metric-every-step"]
            proc, messages = self.run_example(args, SATURATE_KNOBS='{"workers": 1}')
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(sorted(os.listdir(data)), [str(c) for c in range(10)])
            self.assertEqual(sum(len(files) for _, _, files in os.walk(data)), 120)
            self.assertEqual([tmp_name for tmp_name in os.listdir(tmp) if tmp_name.startswith(".images.tmp")], [])
        self.assertIn("workers=1", proc.stdout)
        self.assertEqual([int(m.group(1)) for m in LOG_LINE.finditer(proc.stdout)], [4, 8])
        self.assertEqual(DONE_LINE.search(proc.stdout).groups(), ("8", "128"))
        knobs = {m["name"]: m for m in of_type(messages, "knob")}
        self.assertEqual(set(knobs), {"batch_size", "workers", "amp", "pin_memory", "preload"})
        self.assertEqual((knobs["workers"]["value"], knobs["workers"]["source"]), (1, "saturate"))
        done = of_type(messages, "done")[-1]
        self.assertEqual((done["steps"], done["samples"]), (8, 128))
        self.assertGreater(done["phases"]["metrics"], 0)
        self.assertIn("accuracy", done["metrics"])
        # The DataLoader worker reports nothing of training; it only says which files it opened (the images).
        trainer = messages[0]["pid"]
        self.assertEqual({m["pid"] for m in messages if m["type"] != "files"}, {trainer})
        worker_files = [m for m in of_type(messages, "files") if m["pid"] != trainer]
        self.assertTrue(worker_files)


if __name__ == "__main__":
    unittest.main()
