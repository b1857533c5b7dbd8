"""Tests of the recording of a script's own flags (saturate/_flags.py, the `flags` message), through
sitecustomize in a child Python as saturate starts it.

Run: cd python && /usr/bin/python3 -m unittest tests.test_flags
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_saturate import HAVE_TORCH, HelperTest, of_type, saturate_env  # noqa: E402  (puts python/ on sys.path)
import saturate  # noqa: E402

# The hook as _auto.install sets it up when the script imports torch (torch itself is left out: seconds a test).
SCRIPT = """
from saturate import _flags
_flags.install()
import argparse
p = argparse.ArgumentParser()
p.add_argument("--batch-size", "--bs", type=int, default=64)
p.add_argument("-j", "--workers", type=int, default=0)
p.add_argument("--pin-memory", action="store_true")
p.add_argument("--amp", choices=("off", "bf16"), default="off")
p.add_argument("--tag", action="append")
p.add_argument("data", nargs="?")
sub = p.add_subparsers(dest="cmd")
fit = sub.add_parser("fit")
fit.add_argument("--lr", type=float, default=0.1)
args = p.parse_args()
print("parsed", args.batch_size, args.workers, args.pin_memory, args.cmd)
"""

CLICK_SCRIPT = """
from saturate import _flags
_flags.install()
import click

@click.command()
@click.option("--batch-size", "--bs", type=int, default=64)
@click.option("-j", "--workers", type=int, default=0)
@click.option("--amp/--no-amp", default=False)
@click.option("--pin-memory", is_flag=True)
@click.option("--tag", multiple=True)
@click.option("-v", "--verbose", count=True)
@click.argument("data", required=False)
def main(batch_size, workers, amp, pin_memory, tag, verbose, data):
    print("parsed", batch_size, workers, amp, pin_memory)

main()
"""

TYPER_SCRIPT = """
from saturate import _flags
_flags.install()
import typer

def main(batch_size: int = 64, workers: int = typer.Option(0, "--workers", "-j"), amp: bool = True):
    print("parsed", batch_size, workers, amp)

typer.run(main)
"""


def _importable(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None


HAVE_CLICK, HAVE_TYPER = _importable("click"), _importable("typer")


class FlagsTest(HelperTest):
    def test_parsed_options_values_and_sources_are_sent_once(self):
        rc, out, messages = self.run_script(SCRIPT,
                                            SATURATE_RUN_ID="r1")
        self.assertEqual(rc, 0, out)
        # The script's argv is empty here (python -c): every option has its default.
        (message,) = of_type(messages, "flags")
        self.assertEqual(message["parser"], "argparse")
        by_dest = {o["dest"]: o for o in message["options"]}
        self.assertEqual(by_dest["batch_size"], {"dest": "batch_size", "flags": ["--batch-size", "--bs"],
                                                 "kind": "value", "value": 64, "default": 64, "given": False})
        self.assertEqual(by_dest["pin_memory"]["kind"], "store_true")
        self.assertEqual(by_dest["pin_memory"]["value"], False)
        self.assertNotIn("tag", by_dest)  # append: no knob maps to it
        self.assertNotIn("data", by_dest)  # positional
        self.assertNotIn("help", by_dest)

    def test_given_options_on_the_command_line(self):
        path = os.path.join(self.receiver._dir.name, "train.py")
        with open(path, "w") as f:
            f.write(SCRIPT)
        import subprocess

        proc = subprocess.run([sys.executable, path, "--bs=32", "-j2", "--pin-memory", "fit", "--lr", "0.5"],
                              env=saturate_env(self.receiver), capture_output=True, text=True, timeout=20)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("parsed 32 2 True fit", proc.stdout)
        (message,) = of_type(self.receiver.drain(), "flags")  # the subparser's nested parse is part of it
        by_dest = {o["dest"]: o for o in message["options"]}
        self.assertEqual((by_dest["batch_size"]["value"], by_dest["batch_size"]["given"]), (32, True))
        self.assertEqual((by_dest["workers"]["value"], by_dest["workers"]["given"]), (2, True))
        self.assertEqual((by_dest["pin_memory"]["value"], by_dest["pin_memory"]["given"]), (True, True))
        self.assertEqual((by_dest["amp"]["value"], by_dest["amp"]["given"]), ("off", False))

    def test_options_named_for_secrets_are_sent_without_their_values(self):
        script = SCRIPT.replace('p.add_argument("--tag", action="append")',
                                'p.add_argument("--tag", action="append")\np.add_argument("--api-key", default="sk-default")\n'
                                'p.add_argument("--hub", "--hf-token")')
        out, messages = self.run_file(script, "--api-key", "sk-live-123", "--hf-token=hf_abc", "fit")
        (message,) = of_type(messages, "flags")
        by_dest = {o["dest"]: o for o in message["options"]}
        self.assertEqual((by_dest["api_key"]["value"], by_dest["api_key"]["default"]), ("***", "***"))
        self.assertEqual((by_dest["hub"]["value"], by_dest["hub"]["default"]), ("***", None))
        self.assertTrue(by_dest["api_key"]["given"])
        self.assertEqual(by_dest["batch_size"]["value"], 64)
        self.assertNotIn("sk-", json.dumps(message))
        self.assertNotIn("hf_abc", json.dumps(message))

    def run_file(self, text, *args):
        """Runs `text` as train.py with `args`, as saturate starts it; returns its stdout and the messages."""
        import subprocess

        path = os.path.join(self.receiver._dir.name, "train.py")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([sys.executable, path, *args], env=saturate_env(self.receiver), capture_output=True,
                              text=True, timeout=20)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout, self.receiver.drain()

    @unittest.skipUnless(HAVE_CLICK, "needs click (Debian's python3-click)")
    def test_click_options_values_and_sources(self):
        out, messages = self.run_file(CLICK_SCRIPT, "--bs", "32", "--amp")
        self.assertIn("parsed 32 0 True False", out)
        (message,) = of_type(messages, "flags")
        self.assertEqual(message["parser"], "click")
        by_dest = {o["dest"]: o for o in message["options"]}
        self.assertEqual(by_dest["batch_size"], {"dest": "batch_size", "flags": ["--batch-size", "--bs"],
                                                 "kind": "value", "value": 32, "default": 64, "given": True})
        self.assertEqual(by_dest["workers"], {"dest": "workers", "flags": ["-j", "--workers"], "kind": "value",
                                              "value": 0, "default": 0, "given": False})
        self.assertEqual((by_dest["amp"]["kind"], by_dest["amp"]["value"], by_dest["amp"]["given"]),
                         ("boolean_optional", True, True))
        self.assertEqual(by_dest["amp"]["flags"], ["--amp", "--no-amp"])
        self.assertEqual((by_dest["pin_memory"]["kind"], by_dest["pin_memory"]["given"]), ("store_true", False))
        self.assertNotIn("tag", by_dest)  # multiple: no knob maps to it
        self.assertNotIn("verbose", by_dest)  # a count
        self.assertNotIn("data", by_dest)  # an argument, not an option

    @unittest.skipUnless(HAVE_TYPER, "needs Typer (Debian's python3-typer)")
    def test_typer_options_through_click(self):
        out, messages = self.run_file(TYPER_SCRIPT, "--workers", "3", "--no-amp")
        self.assertIn("parsed 64 3 False", out)
        (message,) = of_type(messages, "flags")
        by_dest = {o["dest"]: o for o in message["options"]}
        self.assertEqual((by_dest["batch_size"]["flags"], by_dest["batch_size"]["value"],
                          by_dest["batch_size"]["given"]), (["--batch-size"], 64, False))
        self.assertEqual((by_dest["workers"]["value"], by_dest["workers"]["given"]), (3, True))
        self.assertEqual((by_dest["amp"]["kind"], by_dest["amp"]["value"], by_dest["amp"]["given"]),
                         ("boolean_optional", False, True))

    @unittest.skipUnless(HAVE_TORCH, "needs torch")
    def test_installed_with_torch_in_processes_saturate_started_only(self):
        import subprocess

        probe = ("import torch, argparse\n"
                 "print(getattr(argparse.ArgumentParser.parse_known_args, '_saturate_flags', False))")
        for env, expected in ((saturate_env(self.receiver), "True"), (saturate_env(), "False")):
            proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                                  timeout=120)
            self.assertEqual(proc.stdout.strip(), expected, proc.stderr)

    def test_a_knob_names_its_flag(self):
        self.configure()
        self.assertEqual(saturate.knob("workers", 3, flag="--workers"), 3)
        (message,) = of_type(self.receiver.drain(), "knob")
        self.assertEqual((message["flag"], message["value"]), ("--workers", 3))


if __name__ == "__main__":
    unittest.main()
