"""Tests of the automatic instrumentation (sitecustomize + saturate._auto) on unmodified scripts, each run in a
child /usr/bin/python3 with saturate's folder on PYTHONPATH, against a real bound datagram socket.

Run: /usr/bin/python3 -m unittest discover -s tests/python   (torch cases skip without torch)
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from test_saturate import PYTHON_DIR, Receiver, of_type, saturate_env

HAVE_TORCH = importlib.util.find_spec("torch") is not None

# A training script that never heard of saturate: a shuffled training loader, a validation loader run after every
# epoch, an LR scheduler (which re-wraps optimizer.step on torch 1.13), and a needless per-step sleep after the
# optimizer step. Prints the getitem count so compute mode can be checked.
TRAIN_WITH_VALIDATION = """
import sys, time, torch
from torch.utils.data import DataLoader, Dataset

class Counted(Dataset):
    calls = 0
    def __len__(self):
        return 256
    def __getitem__(self, i):
        Counted.calls += 1
        return torch.full((16,), float(i % 7)), i % 4

def make(shuffle, batch):
    return DataLoader(Counted(), batch_size=batch, shuffle=shuffle)

train = make(True, 32)
val = make(False, 64)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, 2)
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for epoch in range(EPOCHS):
    for x, y in train:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(0.003)
    sched.step()
    with torch.no_grad():
        for x, y in val:
            model(x)
            time.sleep(0.02)
print("getitem", Counted.calls)
"""


def run(receiver, body, *args, timeout_s=60, **env):
    """Runs `body` as a script file in a child Python; returns (returncode, output, messages)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "train.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        proc = subprocess.run([sys.executable, path, *args], env=saturate_env(receiver, **env), cwd=d,
                              capture_output=True, text=True, timeout=timeout_s)
    return proc.returncode, proc.stdout + proc.stderr, receiver.drain()


def last_counters(messages):
    counted = [m for m in messages if m["type"] in ("progress", "done")]
    return counted[-1]


class ChannelTest(unittest.TestCase):
    """A test with a receiver bound for the children it runs."""

    def setUp(self):
        self.receiver = Receiver()

    def tearDown(self):
        self.receiver.close()


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class AutoTest(ChannelTest):
    def test_training_loader_steps_and_samples(self):
        rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "3")
        self.assertEqual(rc, 0, out)
        hello = of_type(messages, "hello")
        self.assertEqual(len(hello), 1)
        self.assertTrue(hello[0]["auto"])
        loader = of_type(messages, "loader")[0]
        # The training loader is the shuffled one built first by make(); the validation loader is told apart.
        self.assertTrue(loader["key"].endswith("train.py:14#0"), loader)
        self.assertEqual(loader["batch_size"], 32)
        self.assertEqual(loader["samples_from"], "loader")
        self.assertEqual(loader["step_at"], "optimizer")
        self.assertEqual(loader["others"], 1)
        final = last_counters(messages)
        # 3 epochs of 8 steps; the first step is start-up and not counted.
        self.assertEqual(final["steps"], 23)
        self.assertEqual(final["samples"], 23 * 32)
        # Two validation passes (4 batches x 20 ms) happened between training steps: excluded, not step time.
        self.assertGreater(final["excluded_s"], 2 * 4 * 0.02 * 0.9)
        self.assertGreater(final["phases"]["after_step"], 23 * 0.003 * 0.9)
        self.assertLess(final["step_s"], final["excluded_s"] + 23 * 0.05)

    def test_batch_layouts_count_the_first_tensors_first_dimension(self):
        # The per-batch fast paths (tuple, dict, UserDict) and the general rule they fall back on when the first
        # entry has no first dimension: strings first, a scalar first, a tokenizer-like mapping.
        body = """
            import collections, sys, torch
            from torch.utils.data import DataLoader, Dataset

            class Enc(collections.UserDict):
                pass

            class Rows(Dataset):
                def __len__(self):
                    return 48
                def __getitem__(self, i):
                    x = torch.full((4,), float(i))
                    layout = sys.argv[1]
                    if layout == "text_first":
                        return "row %d" % i, x
                    if layout == "dict_text_first":
                        return {"text": "row %d" % i, "x": x}
                    return {"x": x}

            def collate(rows):
                if sys.argv[1] == "userdict":
                    return Enc(x=torch.stack([r["x"] for r in rows]))
                if sys.argv[1] == "scalar_first":
                    return torch.tensor(3.0), torch.stack([r["x"] for r in rows])
                return torch.utils.data.default_collate(rows)

            model = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for batch in DataLoader(Rows(), batch_size=8, collate_fn=collate):
                x = batch["x"] if isinstance(batch, collections.abc.Mapping) else batch[1]
                opt.zero_grad()
                model(x).sum().backward()
                opt.step()
        """
        for layout in ("text_first", "dict_text_first", "userdict", "scalar_first"):
            with self.subTest(layout=layout):
                rc, out, messages = run(self.receiver, body, layout)
                self.assertEqual(rc, 0, out)
                self.assertNotIn("saturate", out)  # the instrumentation never turned itself off
                final = last_counters(messages)
                self.assertEqual(final["steps"], 5)  # 6 batches, the first step is start-up
                self.assertEqual(final["samples"], 5 * 8)

    def test_knob_messages_report_the_training_loader(self):
        rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "1")
        self.assertEqual(rc, 0, out)
        knobs = {m["name"]: m for m in of_type(messages, "knob")}
        self.assertEqual(set(knobs), {"workers", "batch_size", "pin_memory", "prefetch_factor",
                                      "persistent_workers", "amp"})
        self.assertTrue(all(m["auto"] and m["source"] == "default" for m in knobs.values()))
        self.assertEqual(knobs["workers"]["value"], 0)
        self.assertEqual(knobs["batch_size"]["value"], 32)
        self.assertEqual(knobs["amp"]["value"], "off")

    def test_knobs_are_injected_into_the_target_loader_only(self):
        first = run(self.receiver, TRAIN_WITH_VALIDATION, "1")[2]
        key = of_type(first, "loader")[0]["key"]
        rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "2", SATURATE_AUTO_TARGET=key,
                                SATURATE_KNOBS=json.dumps({"num_workers": 2, "bs": 16, "pin_memory": "on"}))
        self.assertEqual(rc, 0, out)
        loader = of_type(messages, "loader")[0]
        self.assertEqual(loader["key"], key)
        self.assertEqual((loader["num_workers"], loader["batch_size"], loader["pin_memory"]), (2, 16, True))
        self.assertEqual(loader["injected"], {"workers": 2, "batch_size": 16, "pin_memory": True})
        knobs = {m["name"]: m for m in of_type(messages, "knob")}
        self.assertEqual((knobs["workers"]["value"], knobs["workers"]["default"], knobs["workers"]["source"]),
                         (2, 0, "saturate"))
        self.assertEqual(knobs["batch_size"]["value"], 16)
        final = last_counters(messages)
        self.assertEqual(final["samples"], final["steps"] * 16)

    def test_workers_zero_drops_worker_only_options(self):
        body = """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        ds = TensorDataset(torch.randn(64, 4), torch.zeros(64, dtype=torch.long))
        loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=2, persistent_workers=True,
                            prefetch_factor=4)
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            opt.zero_grad(); torch.nn.functional.cross_entropy(model(x), y).backward(); opt.step()
        """
        rc, out, messages = run(self.receiver, body, SATURATE_KNOBS='{"workers": 0}')
        self.assertEqual(rc, 0, out)
        loader = of_type(messages, "loader")[0]
        self.assertEqual((loader["num_workers"], loader["persistent_workers"]), (0, False))

    def test_loader_mode_drains_the_training_loader_without_the_model(self):
        first = run(self.receiver, TRAIN_WITH_VALIDATION, "1")[2]
        key = of_type(first, "loader")[0]["key"]
        for env in ({}, {"SATURATE_AUTO_TARGET": key}):
            with self.subTest(env=env):
                rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "1000", SATURATE_MODE="loader",
                                        SATURATE_MAX_SECONDS="1", **env)
                self.assertEqual(rc, 0, out)
                self.assertNotIn("getitem", out)  # exited from inside the loop, cleanly
                done = of_type(messages, "done")[-1]
                self.assertEqual(done["reason"], "loader-drained")
                self.assertEqual(done["step_s"], 0)
                self.assertGreater(done["samples"], 32 * 8)
                self.assertEqual(of_type(messages, "loader")[0]["key"], key)

    def test_compute_mode_repeats_one_batch(self):
        first = run(self.receiver, TRAIN_WITH_VALIDATION, "1")[2]
        key = of_type(first, "loader")[0]["key"]
        for env in ({}, {"SATURATE_AUTO_TARGET": key}):
            with self.subTest(env=env):
                rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "3", SATURATE_MODE="compute", **env)
                self.assertEqual(rc, 0, out)
                getitem = int(out.split("getitem")[1].split()[0])
                # One training batch (plus, without a target, the first step's; validation reads 3 x 256).
                self.assertLessEqual(getitem, 3 * 256 + 2 * 32, out)
                final = last_counters(messages)
                self.assertEqual(final["samples"], final["steps"] * 32)

    def test_hand_written_sgd_without_loader_or_optimizer(self):
        body = """
        import torch
        X, Y = torch.randn(400, 10), torch.randn(400, 1)
        model = torch.nn.Linear(10, 1)
        for epoch in range(5):
            for i in range(0, 400, 20):
                loss = ((model(X[i:i + 20]) - Y[i:i + 20]) ** 2).mean()
                model.zero_grad()
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.01 * p.grad
        """
        rc, out, messages = run(self.receiver, body)
        self.assertEqual(rc, 0, out)
        loader = of_type(messages, "loader")[0]
        self.assertIsNone(loader["key"])
        self.assertEqual((loader["samples_from"], loader["step_at"]), ("model_input", "backward"))
        final = last_counters(messages)
        self.assertEqual(final["steps"], 99)
        self.assertEqual(final["samples"], 99 * 20)

    def test_samples_per_step_flag_without_model_input(self):
        body = """
        import torch
        w = torch.zeros(3, requires_grad=True)
        for i in range(30):
            (w * torch.randn(3)).sum().backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
        """
        rc, out, messages = run(self.receiver, body, SATURATE_SAMPLES_PER_STEP="12")
        self.assertEqual(rc, 0, out)
        self.assertEqual(of_type(messages, "loader")[0]["samples_from"], "flag")
        self.assertEqual(last_counters(messages)["samples"], 29 * 12)

    def test_modes_without_a_loader_end_cleanly(self):
        body = """
        import torch
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(10000):
            opt.zero_grad(); model(torch.randn(8, 4)).sum().backward(); opt.step()
        print("trained")
        """
        for mode in ("loader", "compute"):
            with self.subTest(mode=mode):
                rc, out, messages = run(self.receiver, body, SATURATE_MODE=mode)
                self.assertEqual(rc, 0, out)
                self.assertNotIn("trained", out)
                self.assertEqual(of_type(messages, "done")[-1]["reason"], "no-loader")

    def test_iterable_dataset_and_loader_subclass(self):
        body = """
        import torch
        from torch.utils.data import DataLoader, IterableDataset
        class Stream(IterableDataset):
            def __iter__(self):
                for i in range(320):
                    yield torch.randn(8), i % 3
        class MyLoader(DataLoader):
            def __init__(self, ds, **kw):
                super().__init__(ds, **kw)
        loader = MyLoader(Stream(), batch_size=16)
        model = torch.nn.Linear(8, 3)
        opt = torch.optim.Adam(model.parameters())
        for epoch in range(2):
            for x, y in loader:
                opt.zero_grad(); torch.nn.functional.cross_entropy(model(x), y).backward(); opt.step()
        """
        rc, out, messages = run(self.receiver, body)
        self.assertEqual(rc, 0, out)
        loader = of_type(messages, "loader")[0]
        # The key names the line that built the loader, not the subclass's super().__init__ call.
        self.assertTrue(loader["key"].endswith("train.py:11#0"), loader)
        self.assertTrue(loader["iterable"])
        self.assertEqual(loader["dataset"], "Stream")
        self.assertEqual(last_counters(messages)["samples"], 39 * 16)

    def test_amp_injection_runs_the_forward_under_autocast(self):
        body = """
        import torch
        class Probe(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(4))
            def forward(self, x):
                print("autocast", torch.is_autocast_cpu_enabled())
                return x * self.w
        model = Probe()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(3):
            opt.zero_grad(); model(torch.randn(2, 4)).sum().backward(); opt.step()
        """
        rc, out, messages = run(self.receiver, body, SATURATE_KNOBS='{"amp": "bf16"}')
        self.assertEqual(rc, 0, out)
        # The first step finds the model; the steps after it run under autocast.
        self.assertEqual(out.split(), ["autocast", "False", "autocast", "True", "autocast", "True"])
        amp = [m for m in of_type(messages, "knob") if m["name"] == "amp"][0]
        self.assertEqual((amp["value"], amp["source"]), ("bf16", "saturate"))
        rc, out, messages = run(self.receiver, body, SATURATE_KNOBS='{"amp": "fp16"}')
        amp = [m for m in of_type(messages, "knob") if m["name"] == "amp"][0]
        self.assertEqual(amp["value"], "off")
        self.assertIn("GradScaler", amp["error"])

    def test_an_autocast_that_cannot_start_leaves_the_forward_as_written(self):
        # torch.autocast refusing (an unsupported device or dtype) must not break the script's forward.
        body = """
        import torch
        class Refuses:
            def __init__(self, *args, **kwargs):
                raise RuntimeError("no autocast here")
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(4):
            if i == 1:
                torch.autocast = Refuses
            opt.zero_grad(); out = model(torch.randn(2, 4)); out.sum().backward(); opt.step()
            print("dtype", out.dtype)
        """
        rc, out, messages = run(self.receiver, body, SATURATE_KNOBS='{"amp": "bf16"}')
        self.assertEqual(rc, 0, out)
        self.assertEqual([w for w in out.split() if w.startswith("torch.")], ["torch.float32"] * 4)
        self.assertIn("saturate: automatic instrumentation is off for this run: the injected autocast: "
                      "RuntimeError: no autocast here", out)

    def test_explicit_helper_takes_precedence(self):
        body = """
        import torch, saturate
        from torch.utils.data import DataLoader, TensorDataset
        loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, shuffle=True)
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for (x,) in saturate.track(loader):
            opt.zero_grad(); model(x).sum().backward(); opt.step()
        """
        rc, out, messages = run(self.receiver, body)
        self.assertEqual(rc, 0, out)
        self.assertEqual(of_type(messages, "loader"), [])
        self.assertNotIn("auto", of_type(messages, "hello")[0])
        self.assertEqual(last_counters(messages)["steps"], 8)  # the helper counts every batch

    def test_off_switch(self):
        rc, out, messages = run(self.receiver, TRAIN_WITH_VALIDATION, "1", SATURATE_AUTO="0")
        self.assertEqual(rc, 0, out)
        self.assertEqual(messages, [])


class StartUpTest(unittest.TestCase):
    """What sitecustomize does before any torch import."""

    def setUp(self):
        self.receiver = Receiver()

    def tearDown(self):
        self.receiver.close()

    def test_script_without_torch_is_untouched(self):
        # Only the data-file watch (saturate/_files.py, loaded by its path without the package) is there: it sends
        # nothing until the script opens a data file.
        body = """
        import sys
        print(sorted(m for m in sys.modules if m.startswith(("saturate", "torch"))))
        """
        rc, out, messages = run(self.receiver, body)
        self.assertEqual((rc, out.strip(), messages), (0, "['saturate._files']", []))

    def test_existing_sitecustomize_still_runs(self):
        with tempfile.TemporaryDirectory() as theirs:
            with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
                f.write("import builtins\nbuiltins.USER_SITECUSTOMIZE = 'ran'\n")
            body = """
            import builtins, sitecustomize
            print(getattr(builtins, "USER_SITECUSTOMIZE", "missing"), sitecustomize.__file__)
            """
            pythonpath = os.pathsep.join([saturate_env()["PYTHONPATH"], theirs])
            rc, out, _ = run(self.receiver, body, PYTHONPATH=pythonpath)
            self.assertEqual(rc, 0, out)
            word, path = out.split()
            self.assertEqual(word, "ran")
            self.assertEqual(os.path.dirname(path), theirs)

    def test_two_helper_folders_chain_to_the_users_sitecustomize_once(self):
        # saturate inside saturate, or two installs: the second helper folder must not chain back to the first.
        import shutil
        with tempfile.TemporaryDirectory() as other, tempfile.TemporaryDirectory() as theirs:
            helper = saturate_env()["PYTHONPATH"].split(os.pathsep)[0]
            shutil.copytree(os.path.join(helper, "saturate"), os.path.join(other, "saturate"))
            shutil.copy(os.path.join(helper, "sitecustomize.py"), other)
            with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
                f.write("import builtins\nbuiltins.USER_SITECUSTOMIZE = getattr(builtins, 'USER_SITECUSTOMIZE', 0) + 1\n")
            body = """
            import builtins, sitecustomize
            print(getattr(builtins, "USER_SITECUSTOMIZE", "missing"), sitecustomize.__file__)
            """
            for order in ([helper, other, theirs], [other, helper, theirs]):
                rc, out, _ = run(self.receiver, body, PYTHONPATH=os.pathsep.join(order))
                self.assertEqual(rc, 0, out)
                self.assertNotIn("Error in sitecustomize", out)
                word, path = out.split()
                self.assertEqual(word, "1", "the user's sitecustomize runs exactly once")
                self.assertEqual(os.path.dirname(path), theirs)

    def test_the_helper_folder_adds_only_saturate_and_sitecustomize(self):
        # A script's own `import tests` (or `import bench`) must never find a folder of saturate's.
        self.assertEqual(sorted(n for n in os.listdir(PYTHON_DIR) if n != "__pycache__"),
                         ["saturate", "sitecustomize.py"])
        body = """
        import importlib.util
        print([m for m in ("tests", "bench", "examples") if importlib.util.find_spec(m) is not None])
        """
        rc, out, _ = run(self.receiver, body)
        self.assertEqual((rc, out.strip()), (0, "[]"), out)

    def test_failing_sitecustomize_is_reported_and_the_script_runs(self):
        with tempfile.TemporaryDirectory() as theirs:
            with open(os.path.join(theirs, "sitecustomize.py"), "w") as f:
                f.write("raise RuntimeError('broken site')\n")
            pythonpath = os.pathsep.join([saturate_env()["PYTHONPATH"], theirs])
            rc, out, _ = run(self.receiver, "print('script ran')\n", PYTHONPATH=pythonpath)
            self.assertEqual(rc, 0, out)
            self.assertIn("broken site", out)
            self.assertIn("script ran", out)


if __name__ == "__main__":
    unittest.main()


class AutoSlotsTest(unittest.TestCase):
    """Auto has __slots__ (fast attribute reads on the per-step path): an attribute some method sets but the slots
    do not list would raise AttributeError there, and the instrumentation would turn itself off."""

    def test_every_attribute_set_on_the_auto_is_a_slot(self):
        import ast

        folder = os.path.join(PYTHON_DIR, "saturate")
        sys.path.insert(0, os.path.dirname(folder))
        try:
            from saturate import _auto
        finally:
            sys.path.pop(0)
        slots = set(_auto.Auto.__slots__)
        set_names = {}
        for name in ("_auto.py", "_auto_loaders.py", "_auto_model.py", "_auto_patches.py", "_auto_steps.py"):
            tree = ast.parse(open(os.path.join(folder, name)).read())
            for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name != "LoaderInfo"):
                for node in ast.walk(cls):
                    targets = node.targets if isinstance(node, ast.Assign) else (
                        [node.target] if isinstance(node, ast.AugAssign) else [])
                    for t in targets:
                        for leaf in ast.walk(t):
                            if (isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name)
                                    and leaf.value.id in ("self", "auto")):
                                set_names.setdefault(leaf.attr, name)
        self.assertGreater(len(set_names), 30)  # the walk found the assignments
        missing = {attr: where for attr, where in set_names.items() if attr not in slots}
        self.assertEqual(missing, {})
