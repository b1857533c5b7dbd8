"""Tests of the FLOP count (saturate._flops) against hand-computed figures, of the `flops` message from both the
explicit helper and the automatic instrumentation, and of the profiler trace (SATURATE_TRACE, saturate._trace).

Run: /usr/bin/python3 -m unittest discover -s tests/python   (skipped without torch)
"""

import importlib.util
import json
import os
import sys
import tempfile
import types
import unittest

from test_auto import ChannelTest, last_counters, run
from test_saturate import PYTHON_DIR, of_type

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch

sys.path.insert(0, PYTHON_DIR)
from saturate import _flops, _trace  # noqa: E402


def count(model, *inputs, samples=None):
    """Counts one training step (forward, loss, backward) of `model` on `inputs`; returns (fields, FlopCount)."""
    counting = _flops.FlopCount(torch)
    counting.begin()
    out = model(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    out.float().sum().backward()
    fields = counting.end(samples if samples is not None else inputs[0].shape[0])
    return fields, counting


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class FlopCountTest(unittest.TestCase):
    """Forward FLOPs by hand: 2 per multiply-add. The module hooks see them on every torch; the step total is
    3 x forward with module hooks, and what actually ran with FlopCounterMode (torch 2.1+)."""

    def check(self, model, inputs, forward, samples):
        fields, counting = count(model, *inputs)
        self.assertEqual(counting.forward, forward)
        if fields["method"] == "module_hooks":
            self.assertEqual(fields["per_step"], 3 * forward)
        else:
            self.assertEqual(fields["method"], "flop_counter")
            # The first layer's input needs no gradient: between 2 and 3 x forward.
            self.assertGreaterEqual(fields["per_step"], 2 * forward)
            self.assertLessEqual(fields["per_step"], 3 * forward)
        self.assertEqual(fields["samples"], samples)
        self.assertAlmostEqual(fields["per_sample"], fields["per_step"] / samples)
        self.assertEqual((fields["dtype"], fields["device"], fields["tf32"]), ("fp32", "cpu", False))
        return fields

    def test_linear(self):
        # 4 rows x 8 outputs, each a dot product of 16: 4 * 8 * 16 multiply-adds.
        self.check(torch.nn.Linear(16, 8), [torch.randn(4, 16)], 2 * 4 * 8 * 16, 4)

    def test_linear_over_a_sequence(self):
        # Leading dimensions multiply: 2 x 5 tokens of 16 features -> 8 outputs each.
        self.check(torch.nn.Linear(16, 8), [torch.randn(2, 5, 16)], 2 * 2 * 5 * 8 * 16, 2)

    def test_conv2d(self):
        # 2 x 8 x 10 x 10 outputs, each over 3 channels x 3 x 3 taps.
        conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.check(conv, [torch.randn(2, 3, 10, 10)], 2 * (2 * 8 * 10 * 10) * (3 * 9), 2)

    def test_small_mlp(self):
        mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
        self.check(mlp, [torch.randn(8, 16)], 2 * 8 * 32 * 16 + 2 * 8 * 4 * 32, 8)

    def test_small_cnn_with_grouped_and_transposed_convolutions(self):
        cnn = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3, stride=2, padding=1),  # 1x3x8x8 -> 1x4x4x4: 64 outputs x 27 taps
            torch.nn.ReLU(),
            torch.nn.Conv2d(4, 4, 3, padding=1, groups=2),  # 64 outputs x (2 channels x 9 taps)
            torch.nn.ConvTranspose2d(4, 2, 2, stride=2),  # 64 inputs, each to 2 channels x 4 taps
            torch.nn.Flatten(),  # 1 x 2 x 8 x 8 = 128
            torch.nn.Linear(128, 2))
        forward = 2 * 64 * 27 + 2 * 64 * 18 + 2 * 64 * 2 * 4 + 2 * 128 * 2
        self.check(cnn, [torch.randn(1, 3, 8, 8)], forward, 1)

    def test_multihead_attention(self):
        # 3 sequences of 5 tokens, width 8: four projections of 15 tokens (8 x 8 each), and per sequence the
        # 5 x 5 scores over 8 features, twice (Q K^T, then the weights times V).
        attention = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        x = torch.randn(3, 5, 8)
        _, counting = count(attention, x, x, x)
        self.assertEqual(counting.forward, 4 * 2 * 15 * 8 * 8 + 2 * 2 * 3 * 5 * 5 * 8)

    def test_calls_without_gradients_are_not_training(self):
        counting = _flops.FlopCount(torch)
        counting.begin()
        with torch.no_grad():
            torch.nn.Linear(16, 8)(torch.randn(4, 16))
        self.assertEqual(counting.forward, 0)
        counting.end(4)

    def test_hooks_are_removed_when_the_count_ends(self):
        fields, _ = count(torch.nn.Linear(4, 4), torch.randn(2, 4))
        before = dict(torch.nn.modules.module._global_forward_hooks)
        self.assertEqual(len(before), 0)
        self.assertIsNotNone(fields)


# A training script that never heard of saturate: 12 steps of an MLP over a DataLoader of batches of 8.
UNMODIFIED = """
import torch
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(96, 16), torch.randint(0, 4, (96,)))
loader = DataLoader(data, batch_size=8, shuffle=True)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

# The same loop through the explicit helper.
EXPLICIT = UNMODIFIED.replace("import torch\n", "import torch, saturate\n", 1).replace(
    "for x, y in loader:", "for x, y in saturate.track(loader):")

MLP_FORWARD_PER_SAMPLE = 2 * 32 * 16 + 2 * 4 * 32


def trace_events(path):
    """The events of a Chrome trace: Kineto writes {"traceEvents": [...]}, the legacy profiler (a torch built
    without Kineto, such as Debian's) the bare array."""
    with open(path) as f:
        trace = json.load(f)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class StepMessagesTest(ChannelTest):
    def flops_of(self, messages):
        flops = of_type(messages, "flops")
        self.assertEqual(len(flops), 1, messages)
        f = flops[0]
        if f["method"] == "module_hooks":
            self.assertEqual(f["per_sample"], 3 * MLP_FORWARD_PER_SAMPLE)
        self.assertEqual(f["samples"], 8)
        self.assertEqual(f["device"], "cpu")
        return f

    def test_the_automatic_layer_counts_the_first_step(self):
        rc, out, messages = run(self.receiver, UNMODIFIED)
        self.assertEqual(rc, 0, out)
        self.flops_of(messages)
        # The first step is start-up, so counting it changes nothing: 11 steps counted.
        self.assertEqual(last_counters(messages)["steps"], 11)

    def test_the_explicit_helper_counts_the_first_step(self):
        rc, out, messages = run(self.receiver, EXPLICIT)
        self.assertEqual(rc, 0, out)
        self.flops_of(messages)
        self.assertEqual(of_type(messages, "done")[-1]["steps"], 12)

    def test_a_compiled_model_meets_no_hook_and_no_count(self):
        # What torch.compile's wrapper calls (torch 2; Debian's 1.13 has no torch.compile, so the script calls it
        # itself): from then on no global module hook and no FlopCounterMode may touch the model's first call.
        script = UNMODIFIED.replace("opt = torch.optim", """
from saturate import _auto
_auto._AUTO.on_compile(model)
seen = []
model.register_forward_pre_hook(
    lambda m, a: seen.append(len(torch.nn.modules.module._global_forward_pre_hooks)
                             + len(torch.nn.modules.module._global_forward_hooks)))
opt = torch.optim""", 1) + "print('global hooks at each call', sorted(set(seen)))\n"
        rc, out, messages = run(self.receiver, script)
        self.assertEqual(rc, 0, out)
        self.assertIn("global hooks at each call [0]", out)
        flops = of_type(messages, "flops")
        self.assertEqual(len(flops), 1, messages)
        self.assertEqual(set(flops[0]) - {"v", "type", "run", "pid", "t"}, {"skipped"}, flops[0])
        self.assertIn("compiled", flops[0]["skipped"])
        self.assertEqual(last_counters(messages)["steps"], 11)
        # The compiled module is the model: its loader batches are still counted, BatchNorm or not.
        self.assertFalse(of_type(messages, "loader")[-1].get("batchnorm"))

    def test_compile_entry_points_are_wrapped_and_still_compile(self):
        from saturate import _auto

        calls = []

        class Module:
            def compile(self, *args, **kwargs):
                calls.append(("method", self, kwargs))

        fake = types.SimpleNamespace(compile=lambda model=None, **kw: calls.append(("function", model, kw)) or model,
                                     nn=types.SimpleNamespace(Module=Module))
        compiled = []
        auto = types.SimpleNamespace(on_compile=compiled.append, fail=lambda where, e: self.fail((where, e)))
        _auto.Auto._patch_compile(auto, fake)
        m = Module()
        self.assertIs(fake.compile(m, mode="max-autotune"), m)
        m.compile(fullgraph=True)
        fake.compile(mode="reduce-overhead")  # a decorator factory: nothing to take as the model
        self.assertEqual(compiled, [m, m, None])
        self.assertEqual(calls, [("function", m, {"mode": "max-autotune"}), ("method", m, {"fullgraph": True}),
                                 ("function", None, {"mode": "reduce-overhead"})])

    def test_off_switch(self):
        rc, out, messages = run(self.receiver, UNMODIFIED, SATURATE_FLOPS="0")
        self.assertEqual(rc, 0, out)
        self.assertEqual(of_type(messages, "flops"), [])

    def check_trace(self, messages, path):
        traces = of_type(messages, "trace")
        self.assertEqual(len(traces), 1, messages)
        self.assertEqual(traces[0]["path"], path)
        self.assertEqual(traces[0]["steps"], _trace.ACTIVE_STEPS)
        events = trace_events(path)
        steps = {e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#")}
        self.assertEqual(len(steps), _trace.ACTIVE_STEPS, steps)

    def test_trace_of_an_unmodified_script_leaves_the_profiled_steps_out(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "out", "trace.json")
            rc, out, messages = run(self.receiver, UNMODIFIED, SATURATE_TRACE=path)
            self.assertEqual(rc, 0, out)
            self.check_trace(messages, path)
        last = last_counters(messages)
        # 12 steps: the first is start-up, the profiler's warm-up and recorded ones are left out.
        self.assertEqual(last["steps"], 12 - 1 - _trace.WARMUP_STEPS - _trace.ACTIVE_STEPS)
        self.assertGreater(last["excluded_s"], 0)

    def test_trace_through_the_explicit_helper(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            rc, out, messages = run(self.receiver, EXPLICIT, SATURATE_TRACE=path)
            self.assertEqual(rc, 0, out)
            self.check_trace(messages, path)
        done = of_type(messages, "done")[-1]
        self.assertEqual(done["steps"], 12 - _trace.WARMUP_STEPS - _trace.ACTIVE_STEPS)
        self.assertEqual(done["samples"], 8 * done["steps"])
        self.assertGreater(done["excluded_s"], 0)

    def test_a_link_planted_at_the_trace_is_replaced_not_written_through(self):
        with tempfile.TemporaryDirectory() as d:
            victim = os.path.join(d, "victim.txt")
            with open(victim, "w") as f:
                f.write("precious\n")
            path = os.path.join(d, "trace.json")
            os.symlink(victim, path)
            rc, out, messages = run(self.receiver, UNMODIFIED, SATURATE_TRACE=path)
            self.assertEqual(rc, 0, out)
            self.check_trace(messages, path)
            self.assertFalse(os.path.islink(path))
            with open(victim) as f:
                self.assertEqual(f.read(), "precious\n")
            self.assertEqual(sorted(os.listdir(d)), ["trace.json", "victim.txt"], "no temporary file is left")

    def test_an_unwritable_trace_path_is_reported_not_raised(self):
        rc, out, messages = run(self.receiver, UNMODIFIED, SATURATE_TRACE="/proc/no/such/trace.json")
        self.assertEqual(rc, 0, out)
        traces = of_type(messages, "trace")
        self.assertEqual(len(traces), 1, messages)
        self.assertIsNone(traces[0]["path"])
        self.assertIn("/proc/no/such/trace.json", traces[0]["error"])


if __name__ == "__main__":
    unittest.main()
